/* Small helpers every stage uses: checked allocation, growable arrays, hashing.
 * Depends on nothing but libc. */
#ifndef HS_UTIL_H
#define HS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define HS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define HS_MAX(a, b) ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define HS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define HS_NORETURN __attribute__((noreturn))
#define HS_UNUSED __attribute__((unused))
#else
#define HS_PRINTF(f, a)
#define HS_NORETURN
#define HS_UNUSED
#endif

/* Allocation failure is not recoverable for a profiler: like git's xmalloc, these end the
 * process with a one-line message rather than let NULL propagate into every caller. */
void *hs_xmalloc(size_t n);
void *hs_xcalloc(size_t nmemb, size_t size);
void *hs_xrealloc(void *p, size_t n);
/* Grows *p (holding *cap elements of elem bytes) to hold at least want elements: the check
 * inline (every vector push makes it), the growth out of line. */
void hs_xgrow_slow(void **p, size_t *cap, size_t want, size_t elem);
static inline void hs_xgrow(void **p, size_t *cap, size_t want, size_t elem)
{
	if (want > *cap)
		hs_xgrow_slow(p, cap, want, elem);
}
char *hs_xstrdup(const char *s);
char *hs_xstrndup(const char *s, size_t n);
/* Reads path whole: *ret holds lead zero bytes, then the file, then a NUL; *len counts the
 * lead and the file. Returns 0, -EFBIG past cap bytes, or another negative errno. */
int hs_read_file(const char *path, size_t lead, size_t cap, char **ret, size_t *len);
/* The same from an open descriptor (not closed). */
int hs_read_fd(int fd, size_t lead, size_t cap, char **ret, size_t *len);
HS_NORETURN void hs_die_oom(void);

/* A growable array of T: `HS_VEC(int) v = {0}; hs_vec_push(&v, 3);`. */
#define HS_VEC(T)             \
	struct {              \
		T *v;         \
		size_t n;     \
		size_t cap;   \
	}
#define hs_vec_reserve(vec, want) \
	hs_xgrow((void **)&(vec)->v, &(vec)->cap, (want), sizeof(*(vec)->v))
#define hs_vec_push(vec, val)                           \
	do {                                            \
		hs_vec_reserve((vec), (vec)->n + 1);    \
		(vec)->v[(vec)->n++] = (val);           \
	} while (0)
#define hs_vec_free(vec)                 \
	do {                             \
		free((vec)->v);          \
		(vec)->v = NULL;         \
		(vec)->n = (vec)->cap = 0; \
	} while (0)

/* In the array a of n elements sorted by their member key, how many have a key at most k: one past
 * the last of them, 0 when there is none. For lookups of "the entry covering an address" (its
 * start at or below it); a macro so that each stays inline on the paths taken per sample. a and
 * k are evaluated more than once. */
#define hs_upper_bound(a, n, key, k)                           \
	({                                                     \
		size_t lo_ = 0, hi_ = (n);                     \
		while (lo_ < hi_) {                            \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;   \
			if ((a)[mid_].key <= (k))              \
				lo_ = mid_ + 1;                \
			else                                   \
				hi_ = mid_;                    \
		}                                              \
		lo_;                                           \
	})

/* Sorts the n elements of size bytes at base by the uint64_t at offset key in each, stably, a
 * byte at a time (only the bytes in which the keys differ): for the thousands of symbols or
 * address ranges of a library, several times faster than qsort() with a comparison function.
 * Elements with equal keys keep their order (to be ordered further by the caller). */
void hs_sort_by_key(void *base, size_t n, size_t size, size_t key);

/* 64-bit hashing (FNV-1a over bytes, a strong mixer for integers). */
uint64_t hs_hash_bytes(const void *p, size_t n, uint64_t seed);
static inline uint64_t hs_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}
static inline uint64_t hs_hash_combine(uint64_t h, uint64_t v)
{
	return hs_hash_u64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}
/* A faster hash of bytes for hash tables keyed by long strings: 16 bytes a step in two
 * independent multiply chains, then the mixer. Not for anything an attacker chooses
 * collisions in to any effect beyond slower lookups. */
static inline uint64_t hs_hash_mem(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t a = 0x9e3779b97f4a7c15ULL ^ n, b = 0xc2b2ae3d27d4eb4fULL, w0, w1;
	size_t i = 0;

	for (; i + 16 <= n; i += 16) {
		memcpy(&w0, s + i, 8);
		memcpy(&w1, s + i + 8, 8);
		a = (a ^ w0) * 0xff51afd7ed558ccdULL;
		b = (b ^ w1) * 0xc4ceb9fe1a85ec53ULL;
	}
	if (n >= 8) {
		/* the last 8 and (when there are) 8 more, overlapping what was hashed */
		memcpy(&w0, s + n - 8, 8);
		w1 = 0;
		if (n - i > 8)
			memcpy(&w1, s + i, 8);
	} else {
		w0 = w1 = 0;
		for (; i < n; i++)
			w0 = w0 << 8 | s[i];
	}
	a = (a ^ w0) * 0xff51afd7ed558ccdULL;
	b = (b ^ w1) * 0xc4ceb9fe1a85ec53ULL;
	return hs_hash_u64(a ^ (b >> 32 | b << 32));
}

/* a + b, held at INT64_MAX or INT64_MIN where it would overflow: sums of values that files
 * give (any int64) must not wrap around into a total of the wrong sign. */
static inline int64_t hs_add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* Monotonic clock in nanoseconds. */
uint64_t hs_now_ns(void);
/* Wall-clock time (CLOCK_REALTIME) in nanoseconds since the epoch. */
int64_t hs_wall_ns(void);

/* Whether SIGINT or SIGTERM is pending: blocked (as a recording blocks them, to take them from a
 * signalfd) and not taken yet. Long waits that can be given up (a download, a JVM that does not
 * answer) poll this to end early when the user asks hotstack to stop; where the signals are not
 * blocked they end the process, and this is always false. */
bool hs_stop_signal_pending(void);

struct hs_error;
/* Opens the shared library soname and looks each of the n names up in it, into slots: for what a
 * feature loads only when it is used (libcurl for --push, libmicrohttpd for --serve), what being
 * the library's name in errors. Returns 0, or a negative errno with err set. */
int hs_dl_open(const char *soname, const char *what, const char *const *names, void **slots, size_t n,
	       struct hs_error *err);

/* Levenshtein distance of a and b, case folded, over their first HS_EDIT_MAX bytes. */
#define HS_EDIT_MAX 256
size_t hs_edit_distance(const char *a, const char *b);
/* Of the n words, the one word is most likely a typo of (at most two edits, fewer than its
 * length), or NULL: for "did you mean". */
const char *hs_closest_word(const char *word, const char *const *words, size_t n);
/* A duration as people write one: a number with a unit (ns, us, ms, s, m or min, h, d), or a
 * bare number in units of unit_s seconds ("2", 1: two seconds; "10", 1e-3: ten milliseconds),
 * into *ret_s seconds. Returns 0, or -EINVAL (not a number, negative, an unknown unit). */
int hs_duration_parse(const char *arg, double unit_s, double *ret_s);

#endif
