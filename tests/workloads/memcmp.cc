// A C++ program whose hot path is glibc's hand-written memcmp (__memcmp_avx2_movbe,
// __memcmp_evex_movbe, ... as the CPU selects): main -> scan -> compare_blocks -> memcmp on two
// equal 16 KiB buffers, for the seconds given (default 2). Built -O2 -fomit-frame-pointer.
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

static volatile unsigned long sink;

// noipa: never inlined or cloned, and scan cannot see that compare_blocks is pure
__attribute__((noipa)) int compare_blocks(const unsigned char *a, const unsigned char *b, size_t n);
__attribute__((noipa)) unsigned long scan(const unsigned char *a, const unsigned char *b, size_t n, int rounds);

int compare_blocks(const unsigned char *a, const unsigned char *b, size_t n)
{
	// the sign is computed after the call: no tail call, compare_blocks stays on the stack
	int r = memcmp(a, b, n);

	return (r > 0) - (r < 0);
}

unsigned long scan(const unsigned char *a, const unsigned char *b, size_t n, int rounds)
{
	unsigned long equal = 0;

	for (int i = 0; i < rounds; i++)
		equal += compare_blocks(a, b, n) == 0;
	return equal;
}

static double now()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, end = now() + secs;
	const size_t n = 16384;
	std::vector<unsigned char> a(n), b(n);

	for (size_t i = 0; i < n; i++)
		a[i] = b[i] = (unsigned char)(i * 7 + 1);
	do
		sink += scan(a.data(), b.data(), n, 2000);
	while (now() < end);
	return 0;
}
