/* Two static functions, V_outer_spin calling V_inner_spin, spinning for the seconds given
 * (default 1); V is the build's prefix (-DV=alpha: alpha_inner_spin, alpha_outer_spin). The
 * tests that strip it and name its functions from debug information use a build per case, so
 * that a name can only have come from that build (debuginfo.sh, symfs.sh, container.sh). Static
 * (local) functions: a stripped program's .dynsym never has them. */
#include <stdlib.h>
#include <time.h>
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define NAME(x) CAT(V, x)

static volatile double sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline, noclone)) static void NAME(inner_spin)(int n)
{
	for (int i = 0; i < n; i++)
		sink = sink * 0.999 + i;
}

__attribute__((noinline, noclone)) static void NAME(outer_spin)(int n)
{
	for (int k = 0; k < 10; k++)
		NAME(inner_spin)(n);
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1);

	while (now() < end)
		NAME(outer_spin)(20000);
	return 0;
}
