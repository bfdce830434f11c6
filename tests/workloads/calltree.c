/* A known call tree for stack tests: main -> a -> b -> leaf and main -> c -> leaf, spinning for
 * the number of seconds given (default 2). Built with frame pointers, no inlining and no tail
 * calls, so every sample's chain is exactly one of the two. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(void);
__attribute__((noinline)) void b(void);
__attribute__((noinline)) void a(void);
__attribute__((noinline)) void c(void);

void leaf(void)
{
	/* long enough per call that samples in the prologue and epilogue are negligible; the
	 * volatile local keeps a stack frame (GCC sets up no frame pointer in a function that
	 * never touches the stack, whatever the flags say) */
	volatile unsigned long acc = 0;
	for (unsigned long i = 0; i < 20000000; i++)
		acc += i ^ (acc >> 3);
	sink += acc;
}

void b(void)
{
	leaf();
	sink++;
}

void a(void)
{
	b();
	sink++;
}

void c(void)
{
	leaf();
	sink++;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, end = now() + secs;

	do {
		a();
		c();
	} while (now() < end);
	return 0;
}
