/* Maps and unmaps its own executable, as code, over and over for the seconds given (default 5):
 * a PERF_RECORD_MMAP2 for each, far more side-band records than samples, so that a recording of
 * it with a small ring loses records of both kinds. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct timespec t0, t;

	if (fd < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++) {
			void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
			if (p == MAP_FAILED)
				return 1;
			munmap(p, 4096);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return 0;
}
