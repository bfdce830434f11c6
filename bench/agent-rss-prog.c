/* bench/agent-rss.sh's new programs: a file with 50 functions of its own, which spins through
 * them for 30 ms (long enough for samples to land in it) and exits. */
#include <time.h>
#define F(n) __attribute__((noinline)) static unsigned long f##n(unsigned long x) { return x * 2654435761u + n; }
#define G(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
G(1) G(2) G(3) G(4) G(5)
int main(void)
{
	struct timespec a, b;
	volatile unsigned long x = 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		x = f10(f21(f32(f43(f54(x)))));
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 30000000L);
	return (int)((x & 1) & (f11(1) + f22(2) + f33(3) + f44(4) + f55(5)) & 0);
}
