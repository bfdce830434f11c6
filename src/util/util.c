/* Checked allocation and hashing helpers. */
#include "util.h"

#include <dlfcn.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

void hs_die_oom(void)
{
	static const char msg[] = "hotstack: out of memory\n";
	ssize_t HS_UNUSED r = write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

void *hs_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		hs_die_oom();
	return p;
}

void *hs_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		hs_die_oom();
	return p;
}

void *hs_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		hs_die_oom();
	return p;
}

void hs_xgrow_slow(void **p, size_t *cap, size_t want, size_t elem)
{
	size_t n;

	if (want <= *cap)
		return;
	n = *cap ? *cap : 8;
	while (n < want) {
		if (n > SIZE_MAX / 2 / elem)
			hs_die_oom();
		n *= 2;
	}
	*p = hs_xrealloc(*p, n * elem);
	*cap = n;
}

char *hs_xstrdup(const char *s)
{
	return hs_xstrndup(s, strlen(s));
}

char *hs_xstrndup(const char *s, size_t n)
{
	char *r = hs_xmalloc(n + 1);
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

static uint64_t key_at(const unsigned char *p, size_t key)
{
	uint64_t k;

	memcpy(&k, p + key, sizeof(k));
	return k;
}

void hs_sort_by_key(void *base, size_t n, size_t size, size_t key)
{
	unsigned char *src = base, *dst, *tmp;
	uint64_t first, diff = 0;

	if (n < 2)
		return;
	first = key_at(src, key);
	for (size_t i = 1; i < n; i++)
		diff |= key_at(src + i * size, key) ^ first;
	dst = tmp = hs_xmalloc(n * size);
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[256] = {0}, pos = 0;
		unsigned char *t;

		if (!((diff >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			count[(key_at(src + i * size, key) >> shift) & 0xff]++;
		for (size_t b = 0; b < 256; b++) {
			size_t c = count[b];
			count[b] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++) {
			const unsigned char *e = src + i * size;
			memcpy(dst + count[(key_at(e, key) >> shift) & 0xff]++ * size, e, size);
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != base)
		memcpy(base, src, n * size);
	free(tmp);
}

uint64_t hs_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	while (n >= 8) {
		uint64_t w;
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
		b += 8;
		n -= 8;
	}
	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return hs_hash_u64(h);
}

uint64_t hs_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int64_t hs_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool hs_stop_signal_pending(void)
{
	sigset_t set;

	return sigpending(&set) == 0 && (sigismember(&set, SIGINT) == 1 || sigismember(&set, SIGTERM) == 1);
}

int hs_read_fd(int fd, size_t lead, size_t cap, char **ret, size_t *len)
{
	size_t n = lead, size = 0;
	char *b = NULL;

	for (;;) {
		ssize_t r;
		if (n + 4097 > size)
			hs_xgrow((void **)&b, &size, n + 65536, 1);
		r = read(fd, b + n, size - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n - lead > cap) {
			free(b);
			return -EFBIG;
		}
	}
	memset(b, 0, lead);
	b[n] = '\0';
	*ret = b;
	*len = n;
	return 0;
}

int hs_read_file(const char *path, size_t lead, size_t cap, char **ret, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = hs_read_fd(fd, lead, cap, ret, len);
	close(fd);
	return rc;
}

int hs_dl_open(const char *soname, const char *what, const char *const *names, void **slots, size_t n,
	       struct hs_error *err)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return hs_error_set(err, -ENOENT, "%s (%s) cannot be opened: %s", what, soname, dlerror());
	for (size_t i = 0; i < n; i++) {
		if (!(slots[i] = dlsym(h, names[i]))) {
			/* none found: a later call must not take what was for complete */
			memset(slots, 0, n * sizeof(*slots));
			dlclose(h);
			return hs_error_set(err, -ENOENT, "this %s has no %s", what, names[i]);
		}
	}
	return 0;
}
