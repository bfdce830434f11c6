// Classes unloaded and code recompiled while a profiler reads the frames: each round loads Dyn
// (from DIR/Dyn.class, argument 1) in a class loader of its own, calls Dyn.run until the JIT
// compiles it, drops the loader and asks for a collection, which unloads the class and frees its
// code. Runs for the seconds given (argument 2).
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;

public class Churn {
	static volatile long sink;

	static final class Loader extends ClassLoader {
		private final byte[] bytes;

		Loader(byte[] bytes) {
			super(null);
			this.bytes = bytes;
		}

		protected Class<?> findClass(String name) throws ClassNotFoundException {
			if (!name.equals("Dyn"))
				throw new ClassNotFoundException(name);
			return defineClass(name, bytes, 0, bytes.length);
		}
	}

	static void round(byte[] bytes) throws Exception {
		Method run = new Loader(bytes).loadClass("Dyn").getMethod("run", int.class);
		for (int i = 0; i < 3000; i++)
			sink += (long)run.invoke(null, 200);
	}

	public static void main(String[] args) throws Exception {
		byte[] bytes = Files.readAllBytes(Path.of(args[0], "Dyn.class"));
		long end = System.nanoTime() + Long.parseLong(args[1]) * 1000000000L;
		while (System.nanoTime() < end) {
			round(bytes);
			System.gc();
		}
	}
}
