/* The demo program the README profiles: a small text-indexing job with a few distinct phases
 * (generating words, hashing them into a table, sorting, and a recursive search), so that its
 * flame graph has something to show. Runs for about the seconds given (default 3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NWORDS 200000

static char words[NWORDS][12];
static unsigned int table[1 << 16];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void generate_words(unsigned int seed)
{
	for (int i = 0; i < NWORDS; i++) {
		int len = 3 + (int)(seed % 8);
		for (int j = 0; j < len; j++) {
			seed = seed * 1103515245u + 12345u;
			words[i][j] = (char)('a' + (seed >> 16) % 26);
		}
		words[i][len] = '\0';
	}
}

static __attribute__((noinline)) unsigned int hash_word(const char *w)
{
	unsigned int h = 2166136261u;
	for (; *w; w++)
		h = (h ^ (unsigned char)*w) * 16777619u;
	return h;
}

static __attribute__((noinline)) void build_index(void)
{
	memset(table, 0, sizeof(table));
	for (int i = 0; i < NWORDS; i++)
		table[hash_word(words[i]) & 0xffff]++;
}

static int cmp_words(const void *a, const void *b)
{
	return strcmp(a, b);
}

static __attribute__((noinline)) void sort_words(void)
{
	qsort(words, NWORDS / 4, sizeof(words[0]), cmp_words);
}

static __attribute__((noinline)) unsigned long fib(int n)
{
	return n < 2 ? (unsigned long)n : fib(n - 1) + fib(n - 2);
}

static __attribute__((noinline)) unsigned long search(void)
{
	return fib(27);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0, end = now() + secs;
	unsigned long total = 0;
	unsigned int round = 0;

	do {
		generate_words(round++);
		build_index();
		sort_words();
		total += search();
	} while (now() < end);
	printf("demo: %u rounds (%lu)\n", round, total);
	return 0;
}
