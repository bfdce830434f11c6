/* Half asleep, half busy, without frame pointers: ROUNDS (default 50) rounds of
 * main -> sleeper -> nap (nanosleep for 10 ms) and main -> spinner -> spin (busy for 10 ms of
 * wall-clock time, however often it is preempted), so that each thread's elapsed time is half
 * blocked in nanosleep and half running. With a second argument US, each round also runs
 * main -> brief -> short_nap, a nanosleep of US microseconds (for --off-cpu-min). Built -O2
 * -fomit-frame-pointer: only CFI leads from a stack taken in the kernel back to main. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noipa)) void nap(long ns);
__attribute__((noipa)) void sleeper(void);
__attribute__((noipa)) void short_nap(long ns);
__attribute__((noipa)) void brief(long us);
__attribute__((noipa)) void spin(void);
__attribute__((noipa)) void spinner(void);

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

void nap(long ns)
{
	struct timespec ts = {ns / 1000000000L, ns % 1000000000L};

	while (nanosleep(&ts, &ts))
		; /* interrupted: the rest */
	sink++;
}

/* each caller does something after its call, so that no call becomes a jump */
void sleeper(void)
{
	nap(10000000L);
	sink++;
}

void short_nap(long ns)
{
	struct timespec ts = {0, ns};

	nanosleep(&ts, NULL);
	sink++;
}

void brief(long us)
{
	short_nap(us * 1000L);
	sink++;
}

void spin(void)
{
	long end = now_ns() + 10000000L;
	unsigned long acc = sink;

	while (now_ns() < end) {
		for (int i = 0; i < 1000; i++) {
			acc = acc * 6364136223846793005ul + (unsigned long)i;
			__asm__ volatile("" : "+r"(acc));
		}
	}
	sink = acc;
}

void spinner(void)
{
	spin();
	sink++;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50;
	long brief_us = argc > 2 ? atol(argv[2]) : 0;

	for (int i = 0; i < rounds; i++) {
		sleeper();
		spinner();
		if (brief_us > 0 && brief_us < 1000000)
			brief(brief_us);
	}
	return 0;
}
