// The class tests/workloads/java/churn/Churn.java loads again and again, each time in a class
// loader of its own, and unloads: its methods and their compiled code come and go.
public class Dyn {
	public static long run(int n) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += spin(i);
		return s;
	}

	static long spin(int i) {
		long x = i;
		for (int k = 0; k < 50; k++)
			x = x * 31 + k;
		return x;
	}
}
