/* Threads without frame pointers: N threads (default 4, named nofp-0 ...) each run
 * thread_fn -> spin_outer -> spin_inner, and the main thread runs main -> main_spin, for the
 * seconds given (default 2). Built -O2 -fomit-frame-pointer: only CFI leads from a sample to the
 * thread's start (clone3, start_thread) or to main. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 8

static volatile unsigned long sink;
static double deadline;

__attribute__((noipa)) unsigned long spin_inner(unsigned long seed);
__attribute__((noipa)) unsigned long spin_outer(unsigned long seed);
__attribute__((noipa)) void *thread_fn(void *arg);
__attribute__((noipa)) unsigned long main_spin(unsigned long seed);

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

unsigned long spin_inner(unsigned long seed)
{
	unsigned long acc = seed;

	for (unsigned long i = 0; i < 2000000; i++) {
		acc = acc * 6364136223846793005ul + i;
		__asm__ volatile("" : "+r"(acc));
	}
	return acc;
}

unsigned long spin_outer(unsigned long seed)
{
	/* a frame of its own, live across the call */
	volatile unsigned long keep[8];
	unsigned long r;

	keep[0] = seed;
	r = spin_inner(seed);
	keep[7] = r;
	return r ^ keep[0] ^ keep[7];
}

void *thread_fn(void *arg)
{
	unsigned long acc = (unsigned long)arg;

	while (now() < deadline)
		acc += spin_outer(acc);
	sink += acc;
	return NULL;
}

unsigned long main_spin(unsigned long seed)
{
	volatile unsigned long keep[4];

	keep[0] = spin_inner(seed);
	return keep[0];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	double secs = argc > 2 ? atof(argv[2]) : 2.0;
	pthread_t t[MAX_THREADS];
	unsigned long acc = 0;

	if (n < 1 || n > MAX_THREADS)
		n = 4;
	deadline = now() + secs;
	for (int i = 0; i < n; i++) {
		char name[16];

		if (pthread_create(&t[i], NULL, thread_fn, (void *)(unsigned long)i)) {
			perror("pthread_create");
			return 1;
		}
		snprintf(name, sizeof(name), "nofp-%d", i);
		pthread_setname_np(t[i], name);
	}
	while (now() < deadline)
		acc += main_spin(acc);
	sink += acc;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
