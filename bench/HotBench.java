// The Java workload of bench/java-cost.sh: Hot's call tree (tests/workloads/java/Hot.java) and
// its second thread, warmed up for ROUNDS rounds, then in a loop for SECONDS. Prints the rounds
// per second after the warm-up and the JVM's CPU seconds (all its threads): "ROUNDS_PER_S CPU_S".
import java.lang.management.ManagementFactory;
import java.util.Locale;

public class HotBench {
	public static void main(String[] args) {
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
		int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 300;
		new Hot.Side().start();
		for (int i = 0; i < rounds; i++)
			Hot.work();
		long start = System.nanoTime(), end = start + (long)(seconds * 1e9), t, n = 0;
		do {
			Hot.work();
			n++;
		} while ((t = System.nanoTime()) < end);
		// the rate before the management classes load, which cost the JVM's time, not the loop's
		double rate = n / ((t - start) / 1e9);
		com.sun.management.OperatingSystemMXBean os =
			(com.sun.management.OperatingSystemMXBean)ManagementFactory.getOperatingSystemMXBean();
		System.out.println(String.format(Locale.ROOT, "%.1f %.3f", rate, os.getProcessCpuTime() / 1e9));
	}
}
