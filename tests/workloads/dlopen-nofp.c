/* dlopen without frame pointers: "dlopen-nofp LIBRARY [SECONDS]" loads LIBRARY (the
 * dlopen-lib.so module) after start and runs main -> run_library -> lib_entry -> lib_middle ->
 * lib_leaf for the seconds given (default 2). Built -O2 -fomit-frame-pointer, like the library. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noipa)) unsigned long run_library(unsigned long (*entry)(unsigned long), unsigned long seed);

unsigned long run_library(unsigned long (*entry)(unsigned long), unsigned long seed)
{
	volatile unsigned long keep[4];

	keep[0] = seed;
	keep[3] = entry(seed);
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
	unsigned long (*entry)(unsigned long);
	unsigned long acc = 0;
	double end;
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: dlopen-nofp LIBRARY [SECONDS]\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h || !(entry = (unsigned long (*)(unsigned long))dlsym(h, "lib_entry"))) {
		fprintf(stderr, "dlopen-nofp: %s\n", dlerror());
		return 1;
	}
	end = now() + (argc > 2 ? atof(argv[2]) : 2.0);
	do
		acc += run_library(entry, acc);
	while (now() < end);
	sink += acc;
	dlclose(h);
	return 0;
}
