/* Helpers shared by the unit tests: see helpers.h. */
#include "helpers.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "output/writers.h"
#include "util/outfile.h"

/* ---- files ---- */

char *hs_test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rbe");
	char *buf = NULL;
	size_t n = 0, cap = 0, k;

	if (!f)
		fail_msg("cannot open '%s': %s", path, strerror(errno));
	do {
		if (cap - n < 2) {
			cap = cap ? 2 * cap : 1 << 16;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		k = fread(buf + n, 1, cap - n - 1, f);
		n += k;
	} while (k);
	assert_false(ferror(f));
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

void hs_test_write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wbe");

	if (!f)
		fail_msg("cannot create '%s': %s", path, strerror(errno));
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static const char *tmp_root(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

char *hs_test_temp_file(const char *prefix)
{
	size_t cap = strlen(tmp_root()) + strlen(prefix) + 16;
	char *path = malloc(cap);
	int fd;

	assert_non_null(path);
	snprintf(path, cap, "%s/%s.XXXXXX", tmp_root(), prefix);
	fd = mkstemp(path);
	if (fd < 0)
		fail_msg("cannot create '%s': %s", path, strerror(errno));
	close(fd);
	return path;
}

int hs_test_mkdtemp(char *buf, size_t cap, const char *prefix)
{
	if ((size_t)snprintf(buf, cap, "%s/%s.XXXXXX", tmp_root(), prefix) >= cap)
		return -1;
	return mkdtemp(buf) ? 0 : -1;
}

int hs_test_write_temp(char *buf, size_t cap, const char *prefix, const char *text)
{
	size_t len = strlen(text);
	int fd, ok;

	if ((size_t)snprintf(buf, cap, "%s/%s.XXXXXX", tmp_root(), prefix) >= cap)
		return -1;
	fd = mkstemp(buf);
	if (fd < 0)
		return -1;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	if (!ok)
		unlink(buf);
	return ok ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int hs_test_rmtree(const char *dir)
{
	return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

/* ---- profiles ---- */

char *hs_test_write_format(const struct hs_profile *p, const char *format, const struct hs_output_opts *o)
{
	const struct hs_format *f = hs_format_from_name(format);
	char *path = hs_test_temp_file("hs-test-out"), *buf;
	struct hs_outfile out;

	assert_non_null(f);
	assert_int_equal(hs_outfile_open(&out, path), 0);
	assert_int_equal(f->write(p, o, &out), 0);
	assert_int_equal(hs_outfile_commit(&out), 0);
	buf = hs_test_read_file(path, NULL);
	unlink(path);
	free(path);
	return buf;
}

/* ---- bytes ---- */

void hs_test_put(struct hs_test_buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

void hs_test_put32(struct hs_test_buf *b, uint32_t v)
{
	if (b->swap)
		v = __builtin_bswap32(v);
	hs_test_put(b, &v, 4);
}

void hs_test_put64(struct hs_test_buf *b, uint64_t v)
{
	if (b->swap)
		v = __builtin_bswap64(v);
	hs_test_put(b, &v, 8);
}

/* ---- running tests ---- */

static bool one_test;    /* a test was selected by name */
static unsigned skipped; /* tests that called hs_test_skip() */

void hs_test_skip(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	print_message("skipped: %s\n", msg);
	skipped++;
	skip();
}

int hs_test_select(int argc, char **argv, const struct CMUnitTest *tests, size_t n)
{
	if (argc == 1)
		return 0;
	if (argc == 3 && !strcmp(argv[1], "--skip")) {
		cmocka_set_skip_filter(argv[2]);
		return 0;
	}
	if (argc == 2 && argv[1][0] != '-') {
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(tests[i].name, argv[1])) {
				cmocka_set_test_filter(argv[1]);
				one_test = true;
				return 0;
			}
		}
		fprintf(stderr, "%s: no test named '%s'\n", argv[0], argv[1]);
		return -1;
	}
	fprintf(stderr, "usage: %s [NAME | --skip PATTERN]\n", argv[0]);
	return -1;
}

int hs_test_status(int rc)
{
	if (rc)
		return 1;
	return one_test && skipped ? 77 : 0;
}

uint8_t *hs_test_write_pprof(const struct hs_profile *p, size_t *len)
{
	char *path = hs_test_temp_file("hs-test-pprof");
	struct hs_output_opts o = {0};
	struct hs_outfile out;
	uint8_t *buf;

	assert_int_equal(hs_outfile_open(&out, path), 0);
	assert_int_equal(hs_write_pprof(p, &o, &out), 0);
	assert_int_equal(hs_outfile_commit(&out), 0);
	buf = (uint8_t *)hs_test_read_file(path, len);
	unlink(path);
	free(path);
	return buf;
}

uint8_t *hs_test_gunzip(const uint8_t *in, size_t len, size_t *ret_len)
{
	z_stream z = {0};
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	*ret_len = z.total_out;
	inflateEnd(&z);
	return out;
}
