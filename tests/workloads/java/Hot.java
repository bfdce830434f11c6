// A Java program with a known call tree, for the HotSpot tests: recursion (fib), a virtual call
// (Shape.area through two classes), a lambda through a stream, a method small enough to be
// inlined (square), a second thread (Side), and a third that sleeps in nap <- doze <- run,
// interpreted (Sleeper: its Java frames are read from outside while it waits). Prints "ready"
// once warmed up (300 rounds, or the second argument's), then runs for the seconds given
// (default 30).
import java.util.stream.IntStream;

public class Hot {
	interface Shape {
		double area(int k);
	}

	static final class Square implements Shape {
		public double area(int k) {
			return square(k) * 1.0;
		}
	}

	static final class Circle implements Shape {
		public double area(int k) {
			return square(k) * 3.14159;
		}
	}

	static int square(int x) {
		return x * x;
	}

	static long fib(int n) {
		if (n < 2)
			return n;
		return fib(n - 1) + fib(n - 2);
	}

	static double shapes(Shape[] all, int rounds) {
		double sum = 0;
		for (int i = 0; i < rounds; i++)
			sum += all[i & 1].area(i & 1023);
		return sum;
	}

	static long streams(int n) {
		return IntStream.range(0, n).map(i -> square(i & 255)).filter(v -> (v & 1) == 0).asLongStream().sum();
	}

	static volatile long sink;

	static void work() {
		Shape[] all = {new Square(), new Circle()};
		sink += fib(22);
		sink += (long)shapes(all, 200000);
		sink += streams(100000);
	}

	static final class Side extends Thread {
		Side() {
			super("side");
			setDaemon(true);
		}

		public void run() {
			for (;;)
				sink += fib(20) + square((int)sink);
		}
	}

	static final class Sleeper extends Thread {
		Sleeper() {
			super("sleeper");
			setDaemon(true);
		}

		static void nap() throws InterruptedException {
			Thread.sleep(20);
		}

		static void doze() throws InterruptedException {
			for (;;)
				nap();
		}

		public void run() {
			try {
				doze();
			} catch (InterruptedException e) {
			}
		}
	}

	public static void main(String[] args) throws Exception {
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 30;
		int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 300;
		new Side().start();
		new Sleeper().start();
		for (int i = 0; i < rounds; i++)
			work();
		System.out.println("ready");
		long end = System.nanoTime() + seconds * 1000000000L;
		while (System.nanoTime() < end)
			work();
	}
}
