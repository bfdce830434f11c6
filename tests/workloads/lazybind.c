/* Calls through lazily bound PLT entries: "lazybind [SECONDS]" runs main -> call_libc, which
 * calls labs, atoi and strlen in libc, for the seconds given (default 2). Linked -z lazy: run with
 * LD_BIND_NOT=1, every one of those calls goes through ld.so's resolver
 * (_dl_runtime_resolve_xsavec -> _dl_fixup -> _dl_lookup_symbol_x ...), whose CFA is kept in
 * rbx, which _dl_fixup saves and reuses. Built -O2 -fomit-frame-pointer -fno-builtin (the calls
 * stay calls). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noipa)) unsigned long call_libc(unsigned long i);

unsigned long call_libc(unsigned long i)
{
	static const char digits[] = "42";
	volatile unsigned long keep[2];

	keep[0] = (unsigned long)labs((long)i - 1000);
	keep[1] = (unsigned long)atoi(digits) + strlen(digits);
	return keep[0] + keep[1];
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2, end = now() + secs;

	for (unsigned long i = 0; now() < end; i++)
		for (int j = 0; j < 100; j++)
			sink += call_libc(i + (unsigned long)j);
	return 0;
}
