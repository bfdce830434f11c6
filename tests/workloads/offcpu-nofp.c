/* Half asleep, half busy, without frame pointers: ROUNDS (default 50) rounds of
 * main -> sleeper -> nap (nanosleep for 10 ms) and main -> spinner -> spin (busy for 10 ms of
 * wall-clock time, however often it is preempted), so that each thread's elapsed time is half
 * blocked in nanosleep and half running. With a second argument US (0: none), each round also
 * runs main -> brief -> short_nap, a nanosleep of US microseconds (for --off-cpu-min). With a
 * third, N, N more threads named offcpu-worker do the same rounds under worker -> sleeper /
 * spinner. Each thread prints, as it ends, the wall-clock time it spent in sleeper() and in
 * spinner() ("offcpu-nofp: tid T sleeper NS spinner NS"): what a profile should find, however
 * loaded the machine is. Built -O2 -fomit-frame-pointer: only CFI leads from a stack taken in
 * the kernel back to main or the thread's start. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noipa)) void nap(long ns);
__attribute__((noipa)) void sleeper(void);
__attribute__((noipa)) void short_nap(long ns);
__attribute__((noipa)) void brief(long us);
__attribute__((noipa)) void spin(void);
__attribute__((noipa)) void spinner(void);
__attribute__((noipa)) void *worker(void *arg);

static int rounds = 50;
static long brief_us;

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

static inline __attribute__((always_inline)) void run_rounds(void)
{
	long asleep = 0, busy = 0, t;

	for (int i = 0; i < rounds; i++) {
		t = now_ns();
		sleeper();
		asleep += now_ns() - t;
		t = now_ns();
		spinner();
		busy += now_ns() - t;
		if (brief_us > 0 && brief_us < 1000000)
			brief(brief_us);
	}
	fprintf(stderr, "offcpu-nofp: tid %d sleeper %ld spinner %ld\n", (int)gettid(), asleep, busy);
}

void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "offcpu-worker");
	run_rounds();
	sink++;
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 3 ? atoi(argv[3]) : 0;
	pthread_t t[8];

	rounds = argc > 1 ? atoi(argv[1]) : 50;
	brief_us = argc > 2 ? atol(argv[2]) : 0;
	if (nthreads < 0 || nthreads > 8)
		nthreads = 0;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	run_rounds();
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
