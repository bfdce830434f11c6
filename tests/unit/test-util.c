/* Unit tests for src/util: hash tables, string buffers, atomic output files. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/hashmap.h"
#include "util/outfile.h"
#include "util/strbuf.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64map),     cmocka_unit_test(test_index),
		cmocka_unit_test(test_strbuf),     cmocka_unit_test(test_outfile_atomic),
		cmocka_unit_test(test_outfile_errors), cmocka_unit_test(test_outfile_links),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
