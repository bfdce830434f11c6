/* "churn MODE [SECONDS]": a process that makes a profiler follow it as fast as it can, for
 * SECONDS (default: until SIGTERM or SIGINT), then prints how many times it did: maps (an executable
 * mapping of libc made and unmade), threads (a thread started and joined), procs (a process
 * forked and reaped), names (its thread renamed), or spin (nothing: a CPU-bound loop, the
 * process others lose samples to). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *thread_main(void *arg)
{
	sink++;
	return arg;
}

/* libc's file, found through the mapping of a function in it */
static int open_libc(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int fd = -1;

	while (f && fd < 0 && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		if (path && strstr(path, "/libc.so") && strstr(line, "r-xp")) {
			path[strcspn(path, "\n")] = '\0';
			fd = open(path, O_RDONLY);
		}
	}
	if (f)
		fclose(f);
	return fd;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";
	double end = argc > 2 ? now() + atof(argv[2]) : 1e300;
	unsigned long n = 0;
	int fd = -1;

	if (!strcmp(mode, "maps") && (fd = open_libc()) < 0) {
		fprintf(stderr, "churn: cannot open libc\n");
		return 1;
	}
	if (strcmp(mode, "maps") && strcmp(mode, "threads") && strcmp(mode, "procs") && strcmp(mode, "names") &&
	    strcmp(mode, "spin")) {
		fprintf(stderr, "usage: churn maps|threads|procs|names|spin [SECONDS]\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	while (!stop && ((n & 255) || now() < end)) {
		if (fd >= 0) {
			void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
			if (p != MAP_FAILED)
				munmap(p, 1 << 20);
		} else if (mode[0] == 't') {
			pthread_t t;
			if (!pthread_create(&t, NULL, thread_main, NULL))
				pthread_join(t, NULL);
		} else if (mode[0] == 'n') {
			prctl(PR_SET_NAME, n & 1 ? "churn-a" : "churn-b");
		} else if (mode[0] == 'p') {
			pid_t p = fork();
			if (p == 0)
				_exit(0);
			if (p > 0)
				waitpid(p, NULL, 0);
		} else {
			for (int i = 0; i < 1000; i++)
				sink += (unsigned long)i;
		}
		n++;
	}
	printf("%s %lu\n", mode, n);
	return 0;
}
