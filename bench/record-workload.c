/* The workload record-cost.sh profiles: the mixed workload of workload.c for a fixed time,
 * printing its own throughput (iterations per second by its own clock) at exit, so that a
 * profiler's cost shows as a lower figure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "workload.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0, t0, t;
	uint64_t i = 0;
	struct rusage ru;

	if (secs <= 0) {
		fprintf(stderr, "usage: record-workload [SECONDS]\n");
		return 2;
	}
	hs_bench_workload_init();
	t0 = now();
	do {
		/* the clock is read every 16 iterations only: a vdso call per iteration would add
		 * samples outside the workload */
		for (int k = 0; k < 16; k++)
			hs_bench_workload_step(i++);
		t = now();
	} while (t - t0 < secs);
	/* our own CPU time, so that a profiler's can be told from the total of its command */
	getrusage(RUSAGE_SELF, &ru);
	printf("iterations/s: %.1f (%llu in %.3f s); cpu_s: %.3f\n", i / (t - t0), (unsigned long long)i, t - t0,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6);
	return 0;
}
