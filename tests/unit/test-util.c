/* Unit tests for src/util: the byte cursor, hash tables, string buffers, atomic output files,
 * input files opened only when they are regular files. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "util/cursor.h"
#include "util/hashmap.h"
#include "util/infile.h"
#include "util/outfile.h"
#include "util/strbuf.h"
#include "util/util.h"

static void test_cursor_ints(void **state)
{
	static const uint8_t b[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
				    0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
	struct hs_cursor c;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	(void)state;
	memcpy(&u16, b + 1, 2);
	memcpy(&u32, b + 3, 4);
	memcpy(&u64, b + 7, 8);
	hs_cursor_init(&c, b, sizeof(b));
	assert_int_equal(hs_cursor_u8(&c), 1);
	assert_int_equal(hs_cursor_u16(&c), u16);
	assert_int_equal(hs_cursor_u32(&c), u32);
	assert_true(hs_cursor_u64(&c) == u64);
	assert_int_equal(hs_cursor_remaining(&c), 0);
	assert_false(hs_cursor_failed(&c));
	/* the other byte order */
	hs_cursor_init(&c, b, sizeof(b));
	c.swap = true;
	assert_int_equal(hs_cursor_u8(&c), 1);
	assert_int_equal(hs_cursor_u16(&c), __builtin_bswap16(u16));
	assert_int_equal(hs_cursor_u32(&c), __builtin_bswap32(u32));
	assert_true(hs_cursor_u64(&c) == __builtin_bswap64(u64));
	/* sized reads: an address of 4 or 8 bytes; other sizes fail */
	hs_cursor_init(&c, b, sizeof(b));
	assert_int_equal(hs_cursor_uint(&c, 1), 1);
	assert_int_equal(hs_cursor_uint(&c, 2), u16);
	assert_int_equal(hs_cursor_uint(&c, 4), u32);
	assert_true(hs_cursor_uint(&c, 8) == u64);
	hs_cursor_init(&c, b, sizeof(b));
	assert_int_equal(hs_cursor_uint(&c, 3), 0);
	assert_true(hs_cursor_failed(&c));
	assert_int_equal(hs_cursor_fail_offset(&c), 0);
}

/* A read past the end fails without moving; every read after it fails; the offset named is the
 * first failed read's, from the cursor's origin. */
static void test_cursor_bounds(void **state)
{
	static const uint8_t b[] = {1, 2, 3, 4, 5, 6, 'a', 'b', 0, 'c'};
	struct hs_cursor c;
	size_t n;

	(void)state;
	hs_cursor_init(&c, b, 6);
	c.origin = 0x1000;
	c.swap = HS_HOST_BIG_ENDIAN; /* little-endian */
	assert_int_equal(hs_cursor_u32(&c), b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24);
	assert_int_equal(hs_cursor_offset(&c), 0x1004);
	assert_int_equal(hs_cursor_u32(&c), 0); /* 2 bytes left */
	assert_true(hs_cursor_failed(&c));
	assert_int_equal(hs_cursor_fail_offset(&c), 0x1004);
	assert_int_equal(hs_cursor_offset(&c), 0x1004);
	assert_int_equal(hs_cursor_u8(&c), 0); /* would fit, but the cursor has failed */
	assert_null(hs_cursor_bytes(&c, 0));
	assert_int_equal(hs_cursor_fail_offset(&c), 0x1004);

	/* bytes and skips: exactly to the end, then one more */
	hs_cursor_init(&c, b, 6);
	assert_ptr_equal(hs_cursor_bytes(&c, 2), b);
	assert_true(hs_cursor_skip(&c, 4));
	assert_non_null(hs_cursor_bytes(&c, 0));
	assert_false(hs_cursor_skip(&c, 1));
	assert_int_equal(hs_cursor_fail_offset(&c), 6);
	/* a length that does not fit in size_t on any machine is refused, not truncated */
	hs_cursor_init(&c, b, 6);
	assert_null(hs_cursor_bytes(&c, UINT64_MAX));
	assert_int_equal(hs_cursor_remaining(&c), 6);

	/* strings end at their NUL, inside the cursor */
	hs_cursor_init(&c, b, sizeof(b));
	assert_true(hs_cursor_seek(&c, 6));
	assert_string_equal(hs_cursor_string(&c, &n), "ab");
	assert_int_equal(n, 2);
	assert_int_equal(c.pos, 9);
	assert_null(hs_cursor_string(&c, &n)); /* "c" has no NUL */
	assert_int_equal(hs_cursor_fail_offset(&c), 9);

	/* seek and limit stay inside what was there */
	hs_cursor_init(&c, b, sizeof(b));
	assert_true(hs_cursor_seek(&c, sizeof(b)));
	assert_false(hs_cursor_seek(&c, sizeof(b) + 1));
	hs_cursor_init(&c, b, sizeof(b));
	assert_true(hs_cursor_skip(&c, 2));
	assert_true(hs_cursor_limit(&c, 4));
	c.swap = HS_HOST_BIG_ENDIAN;
	assert_int_equal(hs_cursor_u16(&c), b[2] | b[3] << 8);
	assert_int_equal(hs_cursor_u8(&c), 0);
	assert_int_equal(hs_cursor_fail_offset(&c), 4);
	hs_cursor_init(&c, b, sizeof(b));
	assert_true(hs_cursor_skip(&c, 2));
	assert_false(hs_cursor_limit(&c, 1)); /* before the cursor */
	hs_cursor_init(&c, b, sizeof(b));
	assert_false(hs_cursor_limit(&c, sizeof(b) + 1));

	/* nothing at all */
	hs_cursor_init(&c, NULL, 0);
	assert_non_null(hs_cursor_bytes(&c, 0));
	assert_int_equal(hs_cursor_u8(&c), 0);
	assert_true(hs_cursor_failed(&c));
}

static uint64_t uleb(const uint8_t *b, size_t n, bool *failed, size_t *used)
{
	struct hs_cursor c;
	uint64_t v;

	hs_cursor_init(&c, b, n);
	v = hs_cursor_uleb128(&c);
	*failed = hs_cursor_failed(&c);
	*used = *failed ? c.fail_pos : c.pos;
	return v;
}

static int64_t sleb(const uint8_t *b, size_t n, bool *failed, size_t *used)
{
	struct hs_cursor c;
	int64_t v;

	hs_cursor_init(&c, b, n);
	v = hs_cursor_sleb128(&c);
	*failed = hs_cursor_failed(&c);
	*used = *failed ? c.fail_pos : c.pos;
	return v;
}

static void test_cursor_leb128(void **state)
{
	/* DWARF 5 section 7.6's examples, and the extremes */
	static const uint8_t u2[] = {2}, u127[] = {0x7f}, u128[] = {0x80, 1}, u12857[] = {0xb9, 0x64};
	static const uint8_t umax[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	static const uint8_t sm2[] = {0x7e}, sm128[] = {0x80, 0x7f}, s63[] = {0x3f}, s64[] = {0xc0, 0};
	static const uint8_t smin[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f};
	/* zero padded out to 11 bytes (a uleb128 may be), and one byte more */
	static const uint8_t pad11[] = {0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0};
	static const uint8_t pad12[] = {0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0};
	static const uint8_t trunc[] = {0x80, 0x80};
	bool failed;
	size_t used;

	(void)state;
	assert_int_equal(uleb(u2, 1, &failed, &used), 2);
	assert_int_equal(uleb(u127, 1, &failed, &used), 127);
	assert_int_equal(uleb(u128, 2, &failed, &used), 128);
	assert_int_equal(used, 2);
	assert_int_equal(uleb(u12857, 2, &failed, &used), 12857);
	assert_true(uleb(umax, sizeof(umax), &failed, &used) == UINT64_MAX);
	assert_false(failed);
	assert_int_equal(uleb(pad11, sizeof(pad11), &failed, &used), 1);
	assert_false(failed);
	assert_int_equal(used, 11);
	assert_int_equal(uleb(pad12, sizeof(pad12), &failed, &used), 0);
	assert_true(failed);
	assert_int_equal(used, 0); /* the offset is the number's */
	assert_int_equal(uleb(trunc, sizeof(trunc), &failed, &used), 0);
	assert_true(failed);
	assert_int_equal(used, 0);
	assert_int_equal(uleb(u2, 0, &failed, &used), 0);
	assert_true(failed);

	assert_int_equal(sleb(u2, 1, &failed, &used), 2);
	assert_int_equal(sleb(sm2, 1, &failed, &used), -2);
	assert_int_equal(sleb(u127, 1, &failed, &used), -1);
	assert_int_equal(sleb(u128, 2, &failed, &used), 128);
	assert_int_equal(sleb(sm128, 2, &failed, &used), -128);
	assert_int_equal(sleb(s63, 1, &failed, &used), 63);
	assert_int_equal(sleb(s64, 2, &failed, &used), 64);
	assert_true(sleb(smin, sizeof(smin), &failed, &used) == INT64_MIN);
	assert_false(failed);
	assert_int_equal(used, 10);
	/* an sleb128 of 11 bytes is too long */
	assert_int_equal(sleb(pad11, sizeof(pad11), &failed, &used), 0);
	assert_true(failed);
	assert_int_equal(used, 0);
	assert_int_equal(sleb(trunc, sizeof(trunc), &failed, &used), 0);
	assert_true(failed);

	/* after a failure, a number that would parse fails too */
	{
		struct hs_cursor c;

		hs_cursor_init(&c, u2, 1);
		hs_cursor_fail(&c);
		assert_int_equal(hs_cursor_uleb128(&c), 0);
		assert_int_equal(hs_cursor_sleb128(&c), 0);
		assert_int_equal(c.pos, 0);
	}
}

/* The entry covering a key: the last one starting at or before it. */
static void test_upper_bound(void **state)
{
	static const struct {
		uint32_t start;
	} v[] = {{10}, {20}, {20}, {30}};

	(void)state;
	assert_int_equal(hs_upper_bound(v, 0, start, 100), 0);
	assert_int_equal(hs_upper_bound(v, 4, start, 9), 0);
	assert_int_equal(hs_upper_bound(v, 4, start, 10), 1);
	assert_int_equal(hs_upper_bound(v, 4, start, 19), 1);
	assert_int_equal(hs_upper_bound(v, 4, start, 20), 3); /* past every equal key */
	assert_int_equal(hs_upper_bound(v, 4, start, 29), 3);
	assert_int_equal(hs_upper_bound(v, 4, start, 30), 4);
	assert_int_equal(hs_upper_bound(v, 4, start, UINT64_MAX), 4);
}

/* By key, stably, whichever bytes of the keys differ (low, high, none), elements of an odd size
 * with the key anywhere in them: the order qsort() gives by (key, position). */
struct sort_elem {
	uint32_t pos;
	uint64_t key;
	char pad[3];
};

static int sort_elem_cmp(const void *a, const void *b)
{
	const struct sort_elem *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void test_sort_by_key(void **state)
{
	static const uint64_t masks[] = {0, 0xff, 0xffff, 0xff00000000000000, 0xf0f0f0f0f0f0f0f0, UINT64_MAX};
	enum { N = 3000 };
	struct sort_elem *a = hs_xcalloc(N, sizeof(*a)), *b = hs_xcalloc(N, sizeof(*b));
	uint64_t x = 0x9e3779b97f4a7c15;

	(void)state;
	hs_sort_by_key(a, 0, sizeof(*a), offsetof(struct sort_elem, key));
	for (size_t m = 0; m < HS_ARRAY_SIZE(masks); m++) {
		for (size_t n = 1; n <= N; n = n < 40 ? n + 1 : n * 3) {
			for (size_t i = 0; i < n; i++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				/* few distinct keys under a narrow mask: many ties */
				a[i] = (struct sort_elem){(uint32_t)i, (x & masks[m]) | 0x1000, "ab"};
			}
			memcpy(b, a, n * sizeof(*a));
			hs_sort_by_key(a, n, sizeof(*a), offsetof(struct sort_elem, key));
			qsort(b, n, sizeof(*b), sort_elem_cmp);
			assert_memory_equal(a, b, n * sizeof(*a));
		}
	}
	free(a);
	free(b);
}

static void test_u64map(void **state)
{
	struct hs_u64map m = {0};
	uint64_t v;

	(void)state;
	assert_false(hs_u64map_get(&m, 1, &v));
	for (uint64_t i = 0; i < 10000; i++)
		hs_u64map_put(&m, i * 7919, i);
	hs_u64map_put(&m, 0, 42); /* overwrite */
	assert_int_equal(m.n, 10000);
	assert_true(hs_u64map_get(&m, 0, &v));
	assert_int_equal(v, 42);
	for (uint64_t i = 1; i < 10000; i++) {
		assert_true(hs_u64map_get(&m, i * 7919, &v));
		assert_int_equal(v, i);
	}
	assert_false(hs_u64map_get(&m, 5, &v));
	/* the reserved key (the empty-slot marker) is never found, whatever is stored */
	hs_u64map_put(&m, UINT64_MAX, 7);
	assert_false(hs_u64map_get(&m, UINT64_MAX, &v));
	hs_u64map_release(&m);
}

static const char *const words[] = {"alpha", "beta", "gamma", "delta", "alpha2"};

static bool word_eq(const void *ctx, uint32_t id)
{
	return !strcmp(words[id], ctx);
}

static void test_index(void **state)
{
	struct hs_index ix = {0};

	(void)state;
	for (uint32_t i = 0; i < 5; i++) {
		uint64_t h = hs_hash_bytes(words[i], strlen(words[i]), 0);
		assert_int_equal(hs_index_find(&ix, h, word_eq, words[i]), UINT32_MAX);
		hs_index_insert(&ix, h, i);
	}
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(hs_index_find(&ix, hs_hash_bytes(words[i], strlen(words[i]), 0), word_eq, words[i]), i);
	/* the same hash with different content is not a match */
	assert_int_equal(hs_index_find(&ix, hs_hash_bytes("alpha", 5, 0), word_eq, "zeta"), UINT32_MAX);
	hs_index_release(&ix);
}

static void test_strbuf(void **state)
{
	struct hs_strbuf sb = {0};
	char *s;

	(void)state;
	assert_string_equal(hs_strbuf_str(&sb), "");
	hs_strbuf_adds(&sb, "abc");
	hs_strbuf_addc(&sb, '-');
	for (int i = 0; i < 200; i++)
		hs_strbuf_addf(&sb, "%d,", i);
	assert_true(!strncmp(hs_strbuf_str(&sb), "abc-0,1,2,", 10));
	assert_int_equal(sb.len, strlen(sb.buf));
	hs_strbuf_setlen(&sb, 6);
	assert_string_equal(hs_strbuf_str(&sb), "abc-0,");
	assert_int_equal(sb.len, 6);
	hs_strbuf_addc(&sb, 'x');
	assert_string_equal(hs_strbuf_str(&sb), "abc-0,x");
	s = hs_strbuf_detach(&sb);
	assert_null(sb.buf);
	free(s);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_outfile_atomic(void **state)
{
	char dir[] = "/tmp/hs-test-XXXXXX", path[128];
	struct hs_outfile o;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	assert_int_equal(hs_outfile_open(&o, path), 0);
	hs_outfile_printf(&o, "hello %d\n", 1);
	hs_outfile_abort(&o);
	assert_int_equal(access(path, F_OK), -1); /* aborted: nothing appears */

	assert_int_equal(hs_outfile_open(&o, path), 0);
	hs_outfile_puts(&o, "first\n");
	assert_int_equal(hs_outfile_commit(&o), 0);
	assert_string_equal(read_all(path), "first\n");

	/* an existing file stays intact until the new one is complete */
	assert_int_equal(hs_outfile_open(&o, path), 0);
	hs_outfile_puts(&o, "second\n");
	assert_string_equal(read_all(path), "first\n");
	assert_int_equal(hs_outfile_commit(&o), 0);
	assert_string_equal(read_all(path), "second\n");
	unlink(path);
	rmdir(dir);
}

static void test_outfile_errors(void **state)
{
	struct hs_outfile o;

	(void)state;
	assert_int_equal(hs_outfile_open(&o, "/nonexistent-dir/x.svg"), -ENOENT);
	hs_outfile_abort(&o);
	/* /dev/full: every write fails with ENOSPC, and the error is reported at commit */
	if (access("/dev/full", W_OK) == 0) {
		struct hs_outfile f;
		memset(&f, 0, sizeof(f));
		f.fd = open("/dev/full", O_WRONLY);
		f.cap = 16;
		f.buf = malloc(16);
		f.path = strdup("/dev/full");
		hs_outfile_puts(&f, "0123456789abcdefghijklmnop");
		assert_int_equal(hs_outfile_commit(&f), -ENOSPC);
	}
}

/* Links and special files at the output path: a link is replaced, never followed (what it
 * pointed to is untouched); a device is written in place, not replaced by a regular file; a
 * FIFO nobody reads is an error, not a hang; standard output by its /dev name is fd 1. */
static void test_outfile_links(void **state)
{
	char dir[] = "/tmp/hs-test-XXXXXX", path[128], victim[128], fifo[128];
	struct hs_outfile o;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.svg", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.svg", dir);
	{
		FILE *f = fopen(victim, "w");
		assert_non_null(f);
		fputs("precious\n", f);
		fclose(f);
	}
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(hs_outfile_open(&o, path), 0);
	hs_outfile_puts(&o, "profile\n");
	assert_int_equal(hs_outfile_commit(&o), 0);
	assert_string_equal(read_all(victim), "precious\n");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(read_all(path), "profile\n");
	/* a dangling link too: nothing is created where it points */
	unlink(path);
	assert_int_equal(symlink("/nonexistent-hs-target", path), 0);
	assert_int_equal(hs_outfile_open(&o, path), 0);
	hs_outfile_puts(&o, "profile\n");
	assert_int_equal(hs_outfile_commit(&o), 0);
	assert_int_equal(access("/nonexistent-hs-target", F_OK), -1);

	/* a FIFO without a reader */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(hs_outfile_open(&o, fifo), -ENXIO);
	hs_outfile_abort(&o);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	/* devices are written in place */
	if (access("/dev/null", W_OK) == 0) {
		assert_int_equal(hs_outfile_open(&o, "/dev/null"), 0);
		hs_outfile_puts(&o, "nothing\n");
		assert_int_equal(hs_outfile_commit(&o), 0);
		assert_int_equal(lstat("/dev/null", &st), 0);
		assert_true(S_ISCHR(st.st_mode));
	}
	if (access("/dev/full", W_OK) == 0) {
		assert_int_equal(hs_outfile_open(&o, "/dev/full"), 0);
		hs_outfile_puts(&o, "0123456789");
		assert_int_equal(hs_outfile_commit(&o), -ENOSPC);
		assert_int_equal(lstat("/dev/full", &st), 0);
		assert_true(S_ISCHR(st.st_mode));
	}
	/* standard output by name */
	assert_int_equal(hs_outfile_open(&o, "/dev/stdout"), 0);
	assert_int_equal(o.fd, STDOUT_FILENO);
	assert_null(o.tmp);
	hs_outfile_abort(&o);
	assert_int_equal(hs_outfile_open(&o, "/proc/self/fd/2"), 0);
	assert_int_equal(o.fd, STDERR_FILENO);
	hs_outfile_abort(&o);

	unlink(fifo);
	unlink(path);
	unlink(victim);
	assert_int_equal(rmdir(dir), 0);
}

/* A scratch directory for the infile tests: path of NAME in it. */
static const char *in_dir(const char *dir, const char *name)
{
	static char buf[4][160];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void test_infile_regular_file(void **state)
{
	char dir[] = "/tmp/hs-test-XXXXXX", got[16] = {0};
	struct stat st, want;
	FILE *f;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	f = fopen(in_dir(dir, "file"), "w");
	assert_non_null(f);
	fputs("contents", f);
	fclose(f);
	assert_int_equal(stat(in_dir(dir, "file"), &want), 0);
	fd = hs_infile_open(in_dir(dir, "file"), 0, &st);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, got, sizeof(got) - 1), 8);
	assert_string_equal(got, "contents");
	assert_int_equal(st.st_ino, want.st_ino);
	assert_int_equal(st.st_size, 8);
	/* opened for reading only, and not inherited by programs we start */
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	/* a link to it is followed, unless told not to */
	assert_int_equal(symlink("file", in_dir(dir, "link")), 0);
	fd = hs_infile_open(in_dir(dir, "link"), 0, NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(hs_infile_open(in_dir(dir, "link"), HS_INFILE_NOFOLLOW, NULL), -ELOOP);
	assert_int_equal(hs_infile_open(in_dir(dir, "missing"), 0, NULL), -ENOENT);
	unlink(in_dir(dir, "link"));
	unlink(in_dir(dir, "file"));
	assert_int_equal(rmdir(dir), 0);
}

static void test_infile_fifo_refused_without_blocking(void **state)
{
	char dir[] = "/tmp/hs-test-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(mkfifo(in_dir(dir, "fifo"), 0600), 0);
	/* a blocking open would wait for a writer forever: the alarm ends the test instead */
	alarm(20);
	assert_int_equal(hs_infile_open(in_dir(dir, "fifo"), 0, NULL), -EPERM);
	assert_int_equal(symlink("fifo", in_dir(dir, "link")), 0);
	assert_int_equal(hs_infile_open(in_dir(dir, "link"), 0, NULL), -EPERM);
	alarm(0);
	/* and nothing holds its read end: a writer finds no reader */
	assert_int_equal(open(in_dir(dir, "fifo"), O_WRONLY | O_NONBLOCK), -1);
	assert_int_equal(errno, ENXIO);
	unlink(in_dir(dir, "link"));
	unlink(in_dir(dir, "fifo"));
	assert_int_equal(rmdir(dir), 0);
}

static void test_infile_directory_and_socket_refused(void **state)
{
	char dir[] = "/tmp/hs-test-XXXXXX";
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(hs_infile_open(dir, 0, NULL), -EISDIR);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", in_dir(dir, "sock"));
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s, 1), 0);
	assert_int_equal(hs_infile_open(in_dir(dir, "sock"), 0, NULL), -EPERM);
	close(s);
	unlink(in_dir(dir, "sock"));
	assert_int_equal(rmdir(dir), 0);
}

/* Whether an inotify descriptor has an event waiting. */
static bool has_event(int in)
{
	char buf[4096] __attribute__((aligned(8)));

	return read(in, buf, sizeof(buf)) > 0;
}

static void test_infile_device_refused_without_being_opened(void **state)
{
	char dir[] = "/tmp/hs-test-XXXXXX", dev[160];
	int in, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(dev, sizeof(dev), "%s", in_dir(dir, "null"));
	/* a device node of our own (a twin of /dev/null), so that no other process's opens are seen */
	if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) < 0) {
		rmdir(dir);
		skip(); /* no CAP_MKNOD */
	}
	assert_int_equal(symlink("null", in_dir(dir, "link")), 0);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, dev, IN_OPEN | IN_CLOSE) >= 0);
	/* the watch sees a real open (the control) ... */
	fd = open(dev, O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	assert_true(has_event(in));
	/* ... and, since Linux 6.5, not an O_PATH one: on older kernels this test cannot tell */
	fd = open(dev, O_PATH);
	assert_true(fd >= 0);
	close(fd);
	if (has_event(in)) {
		close(in);
		unlink(in_dir(dir, "link"));
		unlink(dev);
		rmdir(dir);
		skip();
	}
	assert_int_equal(hs_infile_open(dev, 0, NULL), -EPERM);
	assert_int_equal(hs_infile_open(in_dir(dir, "link"), 0, NULL), -EPERM);
	assert_int_equal(hs_infile_open(in_dir(dir, "link"), HS_INFILE_NOFOLLOW, NULL), -ELOOP);
	assert_false(has_event(in));
	close(in);
	unlink(in_dir(dir, "link"));
	unlink(dev);
	assert_int_equal(rmdir(dir), 0);
}

/* record with no -o keeps the last hotstack.pb.gz as hotstack.pb.gz.old, as perf.data.old:
 * under a second name until the new file replaces it; -o DIR says it is a directory */
static void test_outfile_keep_old_and_dir(void **state)
{
	char dir[] = "/tmp/hs-test-XXXXXX", path[128], old[128], sub[128];
	struct hs_outfile of;
	struct stat st;
	char *got;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.pb.gz", dir);
	snprintf(old, sizeof(old), "%s/p.pb.gz.old", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(hs_outfile_keep_old(path), 0); /* nothing there: nothing kept */
	assert_int_equal(stat(old, &st), -1);
	hs_test_write_file(path, "first", 5);
	hs_test_write_file(old, "older", 5);
	assert_int_equal(hs_outfile_keep_old(path), 0);
	got = hs_test_read_file(path, NULL);
	assert_string_equal(got, "first"); /* still there until replaced */
	free(got);
	got = hs_test_read_file(old, NULL);
	assert_string_equal(got, "first");
	free(got);
	assert_int_equal(hs_outfile_open(&of, path), 0);
	hs_outfile_puts(&of, "second");
	assert_int_equal(hs_outfile_commit(&of), 0);
	got = hs_test_read_file(old, NULL);
	assert_string_equal(got, "first");
	free(got);
	/* a directory is never written, nor anything created in or beside it */
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_true(hs_outfile_is_dir(sub));
	assert_false(hs_outfile_is_dir(path));
	assert_false(hs_outfile_is_dir("-"));
	assert_int_equal(hs_outfile_open(&of, sub), -EISDIR);
	hs_outfile_abort(&of);
	assert_int_equal(hs_outfile_keep_old(sub), 0);
	snprintf(old, sizeof(old), "%s/sub.old", dir);
	assert_int_equal(stat(old, &st), -1);
	assert_int_equal(hs_test_rmtree(dir), 0);
}

static void test_strbuf_add_each(void **state)
{
	char *argv[] = {"record", "-g", "--", "ls"};
	struct hs_strbuf sb = {0};

	(void)state;
	hs_strbuf_adds(&sb, "hotstack");
	hs_strbuf_add_each(&sb, " ", argv, 4);
	assert_string_equal(hs_strbuf_str(&sb), "hotstack record -g -- ls");
	hs_strbuf_add_each(&sb, " ", argv, 0);
	assert_string_equal(hs_strbuf_str(&sb), "hotstack record -g -- ls");
	hs_strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cursor_ints),
		cmocka_unit_test(test_cursor_bounds),
		cmocka_unit_test(test_cursor_leb128),
		cmocka_unit_test(test_upper_bound),
		cmocka_unit_test(test_sort_by_key),
		cmocka_unit_test(test_u64map),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_strbuf),
		cmocka_unit_test(test_outfile_atomic),
		cmocka_unit_test(test_outfile_errors),
		cmocka_unit_test(test_outfile_links),
		cmocka_unit_test(test_infile_regular_file),
		cmocka_unit_test(test_infile_fifo_refused_without_blocking),
		cmocka_unit_test(test_infile_directory_and_socket_refused),
		cmocka_unit_test(test_infile_device_refused_without_being_opened),
		cmocka_unit_test(test_outfile_keep_old_and_dir),
		cmocka_unit_test(test_strbuf_add_each),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
