/* "duty SECONDS BURST_MS PERIOD_MS": for SECONDS, spins BURST_MS milliseconds of CPU time every
 * PERIOD_MS and sleeps the rest; "duty SECONDS": spins SECONDS of CPU time (default 1), however
 * long a busy machine makes that take. Many of them are a crowd of processes that each run now
 * and then, each its share, without taking the machine's every CPU (push-series.sh). */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

__attribute__((noinline)) void duty_spin(double cpu_seconds, double until);

/* spins for that much CPU time, or until then */
void duty_spin(double cpu_seconds, double until)
{
	double used = clock_s(CLOCK_THREAD_CPUTIME_ID) + cpu_seconds;

	while (clock_s(CLOCK_THREAD_CPUTIME_ID) < used && now() < until)
		for (int i = 0; i < 10000; i++)
			sink = sink * 31 + (unsigned long)i;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1, end = now() + seconds;
	double burst = argc > 3 ? atof(argv[2]) / 1e3 : 0, period = argc > 3 ? atof(argv[3]) / 1e3 : 0;

	if (burst <= 0 || period <= burst) {
		duty_spin(seconds, 1e300);
		return 0;
	}
	/* a cycle late (a busy machine) starts when it can: no debt to spin off */
	for (double t = now(); t < end; t = now()) {
		double left;
		duty_spin(burst, end);
		if ((left = t + period - now()) > 0) {
			struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
			nanosleep(&ts, NULL);
		}
	}
	return 0;
}
