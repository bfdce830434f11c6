/* Deep stacks without frame pointers, for DWARF unwinding: "recursive [SECONDS [MAX_DEPTH]]" runs
 * main -> rec -> ... -> rec -> work with every number of rec frames from 1 to MAX_DEPTH (default
 * 120, at most 1000), each frame 240 bytes (~29 KiB of stack at 120), work spinning about half a
 * millisecond per call, for SECONDS (default 2). Built -O2 -fomit-frame-pointer. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

/* noipa: no inlining, cloning (rec.constprop.0) or interprocedural shortcuts, so that the
 * symbol names and the frames are exactly these */
__attribute__((noipa)) unsigned long work(unsigned long n);
__attribute__((noipa)) unsigned long rec(int depth);

unsigned long work(unsigned long n)
{
	unsigned long acc = n;

	for (unsigned long i = 0; i < 400000; i++) {
		acc = acc * 6364136223846793005ul + i;
		__asm__ volatile("" : "+r"(acc)); /* keeps the loop */
	}
	return acc;
}

unsigned long rec(int depth)
{
	/* ~200 bytes of frame, touched on every level; the stores after the call keep the frame
	 * alive across it, so the call is neither a tail call nor turned into a loop */
	volatile unsigned char buf[200];
	unsigned long r;

	buf[0] = (unsigned char)depth;
	buf[199] = (unsigned char)(depth >> 8);
	r = depth > 1 ? rec(depth - 1) : work((unsigned long)depth);
	buf[depth % 200] = (unsigned char)r;
	return r + buf[0] + buf[199];
}

static unsigned int gcd(unsigned int a, unsigned int b)
{
	while (b) {
		unsigned int t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, end = now() + secs;
	unsigned int max = argc > 2 ? (unsigned int)atoi(argv[2]) : 120, depth = 1, step = 37;

	if (max < 1 || max > 1000)
		max = 120;
	while (gcd(step, max) != 1) /* a step prime to max visits every depth */
		step++;
	do {
		sink += rec((int)depth);
		depth = (depth + step - 1) % max + 1;
	} while (now() < end);
	return 0;
}
