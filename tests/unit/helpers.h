/* Helpers shared by the unit tests (tests/unit/meson.build links helpers.c into every one):
 * whole files, temporary files and directories, bytes built up in memory, a profile written out
 * as text, and how a test program selects its tests and reports a skip. They fail the running
 * test with a cmocka assertion where they cannot do their job. */
#ifndef HS_TEST_HELPERS_H
#define HS_TEST_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "output/output.h"
#include "util/util.h"

/* ---- files ---- */

/* The whole of a file (regular, /proc or a pipe) with a NUL after it; the caller frees it. Its
 * size, without the NUL, in *len when len is not NULL. */
char *hs_test_read_file(const char *path, size_t *len);
/* Makes path a file of the len bytes at buf (created or truncated). */
void hs_test_write_file(const char *path, const void *buf, size_t len);
/* A new empty file under $TMPDIR (or /tmp) whose name starts with prefix; the caller unlinks it
 * and frees the path. */
char *hs_test_temp_file(const char *prefix);
/* A new directory under $TMPDIR (or /tmp) named prefix.XXXXXX, its path in buf: 0, or -1 (for
 * cmocka's setup functions, which return a status). */
int hs_test_mkdtemp(char *buf, size_t cap, const char *prefix);
/* A new file under $TMPDIR (or /tmp) named prefix.XXXXXX holding text (a kallsyms file, say), its
 * path in buf: 0, or -1 (for cmocka's setup functions). The caller unlinks it. */
int hs_test_write_temp(char *buf, size_t cap, const char *prefix, const char *text);
/* Removes a directory and all in it, without following links: 0, or -1. */
int hs_test_rmtree(const char *dir);

/* ---- profiles ---- */

/* p written in format f with options o, through an hs_outfile into a temporary file, and read
 * back as in hs_test_read_file(). */
/* p written as pprof through a real outfile: the file's bytes (*len of them), to free. */
uint8_t *hs_test_write_pprof(const struct hs_profile *p, size_t *len);
/* The gunzipped bytes of in (at most 1 MiB), to free. */
uint8_t *hs_test_gunzip(const uint8_t *in, size_t len, size_t *ret_len);
char *hs_test_write_format(const struct hs_profile *p, const char *format, const struct hs_output_opts *o);

/* ---- bytes ---- */

/* Bytes built up by a test (file images, records): in host byte order, or swapped. Zero it to
 * start, free p when done. */
struct hs_test_buf {
	uint8_t *p;
	size_t n, cap;
	bool swap;
};

void hs_test_put(struct hs_test_buf *b, const void *p, size_t n);
void hs_test_put32(struct hs_test_buf *b, uint32_t v);
void hs_test_put64(struct hs_test_buf *b, uint64_t v);

/* ---- running tests ---- */

/* Ends the running test as skipped, with the reason printed: where what it needs (a library, a
 * tool, a privilege) is missing. Does not return. */
void hs_test_skip(const char *fmt, ...) HS_PRINTF(1, 2);
/* Selects the tests of a program from its arguments: none, all of them; `NAME`, the one test of
 * that name; `--skip PATTERN`, all but those matching PATTERN (cmocka's * and ?). 0, or -1 (with
 * a message) for arguments it does not know. Called before cmocka_run_group_tests(). */
int hs_test_select(int argc, char **argv, const struct CMUnitTest *tests, size_t n);
/* The exit status of a program whose cmocka_run_group_tests() returned rc: 1 when a test failed;
 * 77, which meson counts as skipped, when the one test selected by name skipped; else 0. */
int hs_test_status(int rc);

#endif
