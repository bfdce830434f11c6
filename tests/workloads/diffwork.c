/* For differential flame graphs: main calls six functions that each do one unit of work and
 * grows(), which does one unit, or FACTOR units when given ("diffwork 2" doubles it), in a loop
 * of ITERATIONS (default 100; about half a second with FACTOR 1). Frame pointers, no inlining. */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void work_unit(void);
__attribute__((noinline)) void steady_a(void);
__attribute__((noinline)) void steady_b(void);
__attribute__((noinline)) void steady_c(void);
__attribute__((noinline)) void steady_d(void);
__attribute__((noinline)) void steady_e(void);
__attribute__((noinline)) void steady_f(void);
__attribute__((noinline)) void grows(int factor);

void work_unit(void)
{
	/* the volatile local keeps a stack frame, as in calltree.c */
	volatile unsigned long acc = 0;
	for (unsigned long i = 0; i < 500000; i++)
		acc += i ^ (acc >> 3);
	sink += acc;
}

#define STEADY(name)            \
	void name(void)         \
	{                       \
		work_unit();    \
		sink++;         \
	}
STEADY(steady_a)
STEADY(steady_b)
STEADY(steady_c)
STEADY(steady_d)
STEADY(steady_e)
STEADY(steady_f)

void grows(int factor)
{
	for (int i = 0; i < factor; i++)
		work_unit();
	sink++;
}

int main(int argc, char **argv)
{
	int factor = argc > 1 ? atoi(argv[1]) : 1;
	long iterations = argc > 2 ? atol(argv[2]) : 100;

	if (factor < 1 || factor > 100)
		factor = 1;
	for (long n = 0; n < iterations; n++) {
		steady_a();
		steady_b();
		steady_c();
		steady_d();
		steady_e();
		steady_f();
		grows(factor);
	}
	return 0;
}
