/* A multi-threaded process for attach tests: N threads (default 4), each spinning in a function
 * named after its number, until killed or the given seconds pass. Prints "ready" once every
 * thread runs. Threads are named spin-N as they start, or with "late" as the third argument
 * halfway through the seconds, so that each is sampled under the process's name first. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double deadline;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define SPINNER(n)                                                   \
	__attribute__((noinline)) void *spin_thread_##n(void *arg);  \
	void *spin_thread_##n(void *arg)                             \
	{                                                            \
		volatile unsigned long acc = 0; /* keeps a frame */  \
		while (now() < deadline)                             \
			for (unsigned long i = 0; i < 1000000; i++)  \
				acc += i;                            \
		sink += acc;                                         \
		return arg;                                          \
	}
SPINNER(0)
SPINNER(1)
SPINNER(2)
SPINNER(3)
SPINNER(4)
SPINNER(5)
SPINNER(6)
SPINNER(7)

static void *(*const spinners[])(void *) = {spin_thread_0, spin_thread_1, spin_thread_2, spin_thread_3,
					    spin_thread_4, spin_thread_5, spin_thread_6, spin_thread_7};

static void name_thread(pthread_t t, int i)
{
	char name[16];

	snprintf(name, sizeof(name), "spin-%d", i);
	pthread_setname_np(t, name);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	double secs = argc > 2 ? atof(argv[2]) : 60;
	bool late = argc > 3 && !strcmp(argv[3], "late");
	pthread_t t[8];

	if (n < 1 || n > 8)
		n = 4;
	deadline = now() + secs;
	for (int i = 0; i < n; i++) {
		pthread_create(&t[i], NULL, spinners[i], NULL);
		if (!late)
			name_thread(t[i], i);
	}
	printf("ready\n");
	fflush(stdout);
	if (late) {
		struct timespec half = {(time_t)(secs / 2), (long)((secs / 2 - (time_t)(secs / 2)) * 1e9)};
		nanosleep(&half, NULL);
		for (int i = 0; i < n; i++)
			name_thread(t[i], i);
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
