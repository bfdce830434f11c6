/* A signal handler interrupting a loop, without frame pointers: main -> loop_body spins, and
 * SIGPROF from setitimer(ITIMER_PROF) every 4 ms of CPU time runs handler -> handler_work,
 * which spins for about 1.5 ms; for the seconds given (default 2). Built -O2
 * -fomit-frame-pointer: a sample in the handler unwinds to main only through the signal frame. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long sink;
static volatile unsigned long handled;

__attribute__((noipa)) unsigned long handler_work(unsigned long seed);
__attribute__((noipa)) unsigned long loop_body(unsigned long seed);
__attribute__((noipa)) void handler(int sig);

unsigned long handler_work(unsigned long seed)
{
	unsigned long acc = seed;

	for (unsigned long i = 0; i < 1500000; i++) {
		acc = acc * 6364136223846793005ul + i;
		__asm__ volatile("" : "+r"(acc));
	}
	return acc;
}

void handler(int sig)
{
	volatile unsigned long keep[4]; /* a frame of its own, live across the call */

	keep[0] = (unsigned long)sig;
	keep[3] = handler_work(keep[0] + handled);
	sink += keep[3];
	handled++;
}

unsigned long loop_body(unsigned long seed)
{
	volatile unsigned long keep[4];
	unsigned long acc = seed;

	keep[0] = seed;
	for (unsigned long i = 0; i < 5000000; i++) {
		acc = acc * 2862933555777941757ul + i;
		__asm__ volatile("" : "+r"(acc));
	}
	keep[3] = acc;
	return keep[0] ^ keep[3];
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 2.0);
	struct itimerval every = {{0, 4000}, {0, 4000}};
	struct sigaction sa;
	unsigned long acc = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &every, NULL)) {
		perror("signal-nofp");
		return 1;
	}
	do
		acc += loop_body(acc);
	while (now() < end);
	sink += acc;
	return 0;
}
