/* The demo program the README profiles: a small text-indexing job with distinct phases
 * (generating words, hashing them into a table, sorting, and a recursive search), so that its
 * flame graph has something to show. Runs for about the seconds given (default 3).
 *
 * Its hot paths stay out of libc (whose code has no frame pointers) and it is built at -O0 with
 * frame pointers, so that every frame-pointer stack reaches main. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NWORDS 50000

static char words[NWORDS][12];
static char *order[NWORDS], *tmp[NWORDS];
static unsigned int table[1 << 16];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void generate_words(unsigned int seed)
{
	for (int i = 0; i < NWORDS; i++) {
		int len = 3 + (int)(seed % 8);
		for (int j = 0; j < len; j++) {
			seed = seed * 1103515245u + 12345u;
			words[i][j] = (char)('a' + (seed >> 16) % 26);
		}
		words[i][len] = '\0';
		order[i] = words[i];
	}
}

static unsigned int hash_word(const char *w)
{
	unsigned int h = 2166136261u;
	for (; *w; w++)
		h = (h ^ (unsigned char)*w) * 16777619u;
	return h;
}

static void build_index(void)
{
	for (unsigned int i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		table[i] = 0;
	for (int i = 0; i < NWORDS; i++)
		table[hash_word(words[i]) & 0xffff]++;
}

static int compare_words(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static void merge_sort(char **v, int n)
{
	int half = n / 2, i = 0, j = half, k = 0;

	if (n < 2)
		return;
	merge_sort(v, half);
	merge_sort(v + half, n - half);
	while (i < half && j < n)
		tmp[k++] = compare_words(v[i], v[j]) <= 0 ? v[i++] : v[j++];
	while (i < half)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	for (i = 0; i < n; i++)
		v[i] = tmp[i];
}

static void sort_words(void)
{
	merge_sort(order, NWORDS);
}

static unsigned long fib(int n)
{
	return n < 2 ? (unsigned long)n : fib(n - 1) + fib(n - 2);
}

static unsigned long search(void)
{
	return fib(24);
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
