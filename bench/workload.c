/* The mixed workload both benchmarks sample (see workload.h). noipa keeps every function, its
 * frame and its name, whatever the optimizer would rather do. */
#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH 100
#define SORT_N 4096
#define NSTR 512

static volatile uint64_t sink;
static int sort_v[SORT_N];
static char *strs[NSTR];
static double fp_in[1024];

__attribute__((noipa)) static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

__attribute__((noipa)) static uint64_t work_qsort(uint64_t seed)
{
	for (int i = 0; i < SORT_N; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		sort_v[i] = (int)(seed >> 33);
	}
	qsort(sort_v, SORT_N, sizeof(sort_v[0]), cmp_int);
	return (uint64_t)sort_v[seed % SORT_N];
}

__attribute__((noipa)) static uint64_t work_strings(uint64_t seed)
{
	uint64_t r = 0;

	for (int k = 0; k < 8; k++)
		for (int i = 0; i < NSTR; i++) {
			int j = (int)((seed + (uint64_t)i * 7 + (uint64_t)k) % NSTR);
			r += (uint64_t)(strcmp(strs[i], strs[j]) < 0);
			r += (uint64_t)(memcmp(strs[i], strs[j], 200) > 0);
		}
	return r;
}

__attribute__((noipa)) static uint64_t work_math(uint64_t seed)
{
	double acc = 0;

	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 1024; i++) {
			double x = fp_in[(i + seed) & 1023];
			acc += sin(x) * exp(-x) + log1p(x) + pow(x, 1.5);
		}
	return (uint64_t)acc;
}

__attribute__((noipa)) static uint64_t leaf(int kind, uint64_t seed)
{
	switch (kind) {
	case 0:
		return work_qsort(seed);
	case 1:
		return work_strings(seed);
	default:
		return work_math(seed);
	}
}

/* ~200-byte frames; the buffer is written at every level, so samples land at every depth */
__attribute__((noipa)) static uint64_t recurse(int depth, int kind, uint64_t seed)
{
	volatile uint8_t buf[184];
	uint64_t r;

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(seed + i);
	if (depth == 0)
		r = leaf(kind, seed);
	else
		r = recurse(depth - 1, kind, seed * 31 + buf[depth % sizeof(buf)]);
	return r + buf[seed % sizeof(buf)]; /* used after the call: no tail call */
}

void hs_bench_workload_init(void)
{
	for (int i = 0; i < NSTR; i++) {
		strs[i] = malloc(256);
		if (!strs[i])
			abort();
		/* long common prefixes: real memcmp/strcmp work */
		memset(strs[i], 'a' + (i % 3), 255);
		strs[i][190 + i % 50] = (char)('a' + i % 26);
		strs[i][255] = '\0';
	}
	for (int i = 0; i < 1024; i++)
		fp_in[i] = 0.001 + i / 97.0;
}

__attribute__((noipa)) void hs_bench_workload_step(uint64_t i)
{
	int kind = (int)(i % 3);

	if (i & 1)
		sink += recurse(DEPTH, kind, i);
	else
		sink += leaf(kind, i);
}
