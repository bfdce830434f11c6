// The Java workload of the jit-java tests: main -> middle -> work, for SECONDS (args[0]);
// prints "ready" once it runs.
public class Spin {
    static double work(int n) { double s = 0; for (int i = 0; i < n; i++) s += Math.sqrt(i) * 1.0001; return s; }
    static double middle(int n) { double s = 0; for (int k = 0; k < 10; k++) s += work(n); return s; }
    public static void main(String[] args) {
        long end = System.currentTimeMillis() + Long.parseLong(args[0]) * 1000;
        double t = 0;
        System.out.println("ready");
        while (System.currentTimeMillis() < end) t += middle(100000);
        if (t < 0) System.out.println(t);
    }
}
