/* Unit tests for JIT code: the jitdump reader on records built byte by byte (both byte orders,
 * header sizes, every prefix, hostile sizes), the perf map line parser, libhotstack-jit's files
 * read back (every header field, debug and unwinding information, a .eh_frame_hdr it built,
 * several threads writing at once), the model's JIT store (time-aware lookups across a code
 * move and a re-JIT, a file read while it grows, perf maps flattened with later lines winning,
 * refused files), CFI compiled from a raw .eh_frame, and the builder's deferred naming. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include <hotstack/jit.h>

#include "format/jitdump.h"
#include "format/perf-map.h"
#include "model/jit.h"
#include "profile/builder.h"
#include "unwind/cfi.h"

/* ---- bytes ---- */

static void set32(struct hs_test_buf *b, size_t at, uint32_t v)
{
	if (b->swap)
		v = __builtin_bswap32(v);
	memcpy(b->p + at, &v, 4);
}

static void header(struct hs_test_buf *b, uint32_t size, uint64_t flags)
{
	hs_test_put32(b, HS_JITDUMP_MAGIC);
	hs_test_put32(b, 1);
	hs_test_put32(b, size);
	hs_test_put32(b, 62);
	hs_test_put32(b, 0);
	hs_test_put32(b, 4242);
	hs_test_put64(b, 7);
	hs_test_put64(b, flags);
	while (b->n < size)
		hs_test_put(b, "\xee", 1);
}

static size_t rec_begin(struct hs_test_buf *b, uint32_t id, uint64_t t)
{
	size_t at = b->n;
	hs_test_put32(b, id);
	hs_test_put32(b, 0);
	hs_test_put64(b, t);
	return at;
}

static void rec_end(struct hs_test_buf *b, size_t at)
{
	set32(b, at + 4, (uint32_t)(b->n - at));
}

static void rec_load(struct hs_test_buf *b, uint64_t t, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	size_t at = rec_begin(b, HS_JIT_CODE_LOAD, t);
	hs_test_put32(b, 4242);
	hs_test_put32(b, 4243);
	hs_test_put64(b, addr);
	hs_test_put64(b, addr);
	hs_test_put64(b, size);
	hs_test_put64(b, index);
	hs_test_put(b, name, strlen(name) + 1);
	for (uint64_t i = 0; i < size; i++)
		hs_test_put(b, "\x90", 1);
	rec_end(b, at);
}

static void rec_move(struct hs_test_buf *b, uint64_t t, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	size_t at = rec_begin(b, HS_JIT_CODE_MOVE, t);
	hs_test_put32(b, 4242);
	hs_test_put32(b, 4243);
	hs_test_put64(b, to);
	hs_test_put64(b, from);
	hs_test_put64(b, to);
	hs_test_put64(b, size);
	hs_test_put64(b, index);
	rec_end(b, at);
}

static void rec_debug(struct hs_test_buf *b, uint64_t t, uint64_t addr, uint32_t line)
{
	size_t at = rec_begin(b, HS_JIT_CODE_DEBUG_INFO, t);
	hs_test_put64(b, addr);
	hs_test_put64(b, 2);
	hs_test_put64(b, addr);
	hs_test_put32(b, line);
	hs_test_put32(b, 0);
	hs_test_put(b, "a.js", 5);
	hs_test_put64(b, addr + 8);
	hs_test_put32(b, line + 1);
	hs_test_put32(b, 3);
	hs_test_put(b, "a.js", 5);
	rec_end(b, at);
}

/* ---- the jitdump reader ---- */

static void test_jitdump_header(void **state)
{
	struct hs_test_buf b = {0};
	struct hs_jitdump_header h;
	struct hs_error err = {0};

	(void)state;
	header(&b, 40, 1);
	assert_int_equal(hs_jitdump_header_parse(b.p, b.n, &h, &err), 0);
	assert_int_equal(h.size, 40);
	assert_int_equal(h.pid, 4242);
	assert_int_equal(h.elf_mach, 62);
	assert_int_equal(h.flags, HS_JITDUMP_FLAG_ARCH_TIMESTAMP);
	assert_false(h.swap);
	for (size_t n = 0; n < 40; n++)
		assert_int_equal(hs_jitdump_header_parse(b.p, n, &h, &err), -ENODATA);
	/* the other byte order */
	b.n = 0;
	b.swap = true;
	header(&b, 40, 0);
	assert_int_equal(hs_jitdump_header_parse(b.p, b.n, &h, &err), 0);
	assert_true(h.swap);
	assert_int_equal(h.pid, 4242);
	assert_int_equal(h.size, 40);
	/* a writer's larger header: records start after it */
	b.n = 0;
	b.swap = false;
	header(&b, 64, 0);
	assert_int_equal(hs_jitdump_header_parse(b.p, b.n, &h, &err), 0);
	assert_int_equal(h.size, 64);
	/* a smaller one: the fields it lacks are 0 */
	b.n = 0;
	header(&b, 40, 1);
	set32(&b, 8, 24);
	assert_int_equal(hs_jitdump_header_parse(b.p, 24, &h, &err), 0);
	assert_int_equal(h.pid, 4242);
	assert_int_equal(h.flags, 0);
	/* impossible ones */
	set32(&b, 8, 8);
	assert_int_equal(hs_jitdump_header_parse(b.p, b.n, &h, &err), -EBADMSG);
	set32(&b, 8, 1u << 30);
	assert_int_equal(hs_jitdump_header_parse(b.p, b.n, &h, &err), -EBADMSG);
	set32(&b, 8, 40);
	set32(&b, 4, 0);
	assert_int_equal(hs_jitdump_header_parse(b.p, b.n, &h, &err), -EOPNOTSUPP);
	set32(&b, 4, 2); /* a later version: read as 1 */
	assert_int_equal(hs_jitdump_header_parse(b.p, b.n, &h, &err), 0);
	set32(&b, 0, 0x12345678);
	memset(&err, 0, sizeof(err));
	assert_int_equal(hs_jitdump_header_parse(b.p, b.n, &h, &err), -EBADMSG);
	assert_non_null(strstr(err.detail, "not a jitdump file"));
	free(b.p);
}

static void check_records(bool swap)
{
	struct hs_test_buf b = {0};
	struct hs_jitdump_header h;
	struct hs_jitdump_record r;
	struct hs_jitdump_debug_iter it = {0};
	struct hs_jitdump_debug_entry e;
	struct hs_error err = {0};
	size_t off, ends[8], n = 0;
	const uint32_t ids[] = {HS_JIT_CODE_DEBUG_INFO, HS_JIT_CODE_UNWINDING_INFO, HS_JIT_CODE_LOAD, 99,
				HS_JIT_CODE_MOVE, HS_JIT_CODE_CLOSE};

	b.swap = swap;
	header(&b, 40, 0);
	rec_debug(&b, 10, 0x1000, 5);
	ends[n++] = b.n;
	{
		size_t at = rec_begin(&b, HS_JIT_CODE_UNWINDING_INFO, 11);
		hs_test_put64(&b, 12);
		hs_test_put64(&b, 4);
		hs_test_put64(&b, 12);
		hs_test_put(&b, "EHFRAME.HDR.", 12);
		hs_test_put(&b, "\0\0\0\0", 4); /* padding, as V8 writes */
		rec_end(&b, at);
	}
	ends[n++] = b.n;
	rec_load(&b, 12, 0x1000, 16, 1, "fn");
	ends[n++] = b.n;
	{
		size_t at = rec_begin(&b, 99, 13); /* a newer writer's record */
		hs_test_put64(&b, 1);
		rec_end(&b, at);
	}
	ends[n++] = b.n;
	rec_move(&b, 14, 0x1000, 0x2000, 16, 1);
	ends[n++] = b.n;
	rec_end(&b, rec_begin(&b, HS_JIT_CODE_CLOSE, 15));
	ends[n++] = b.n;

	assert_int_equal(hs_jitdump_header_parse(b.p, b.n, &h, &err), 0);
	off = h.size;
	for (size_t i = 0; i < n; i++) {
		/* never misread while the record is not complete */
		for (size_t k = 0; k < ends[i] - off; k++)
			assert_int_equal(hs_jitdump_record_parse(b.p + off, k, &h, off, &r, &err), -ENODATA);
		assert_int_equal(hs_jitdump_record_parse(b.p + off, b.n - off, &h, off, &r, &err), 0);
		assert_int_equal(r.id, ids[i]);
		assert_int_equal(r.size, ends[i] - off);
		assert_int_equal(r.timestamp, 10 + i);
		switch (r.id) {
		case HS_JIT_CODE_DEBUG_INFO:
			assert_int_equal(r.debug.code_addr, 0x1000);
			assert_int_equal(r.debug.nr_entry, 2);
			assert_true(hs_jitdump_debug_next(&r, &it, &e));
			assert_int_equal(e.addr, 0x1000);
			assert_int_equal(e.line, 5);
			assert_int_equal(e.file_len, 4);
			assert_memory_equal(e.file, "a.js", 4);
			assert_true(hs_jitdump_debug_next(&r, &it, &e));
			assert_int_equal(e.addr, 0x1008);
			assert_int_equal(e.line, 6);
			assert_int_equal(e.discrim, 3);
			assert_false(hs_jitdump_debug_next(&r, &it, &e));
			break;
		case HS_JIT_CODE_UNWINDING_INFO:
			assert_int_equal(r.unwind.unwinding_size, 12);
			assert_int_equal(r.unwind.eh_frame_hdr_size, 4);
			assert_memory_equal(r.unwind.data, "EHFRAME.HDR.", 12);
			break;
		case HS_JIT_CODE_LOAD:
			assert_int_equal(r.load.pid, 4242);
			assert_int_equal(r.load.tid, 4243);
			assert_int_equal(r.load.code_addr, 0x1000);
			assert_int_equal(r.load.code_size, 16);
			assert_int_equal(r.load.code_index, 1);
			assert_int_equal(r.load.name_len, 2);
			assert_memory_equal(r.load.name, "fn", 2);
			break;
		case HS_JIT_CODE_MOVE:
			assert_int_equal(r.move.old_code_addr, 0x1000);
			assert_int_equal(r.move.new_code_addr, 0x2000);
			assert_int_equal(r.move.code_index, 1);
			break;
		}
		off = ends[i];
	}
	free(b.p);
}

static void test_jitdump_records(void **state)
{
	(void)state;
	check_records(false);
	check_records(true);
}

static void test_jitdump_hostile(void **state)
{
	struct hs_test_buf b = {0};
	struct hs_jitdump_header h = {0};
	struct hs_jitdump_record r;
	struct hs_error err = {0};
	size_t at;
	char longname[HS_JITDUMP_MAX_NAME + 100];

	(void)state;
	h.size = 40;
	/* a size smaller than the record header: nothing after it can be found */
	rec_begin(&b, HS_JIT_CODE_LOAD, 1);
	set32(&b, 4, 8);
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), -EBADMSG);
	assert_true(r.size < HS_JITDUMP_RECORD_HEADER);
	/* over the cap: skipped whole, whatever is there */
	set32(&b, 4, (uint32_t)HS_JITDUMP_MAX_RECORD + 1);
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), -EOVERFLOW);
	assert_int_equal(r.size, HS_JITDUMP_MAX_RECORD + 1);
	/* code larger than its record */
	b.n = 0;
	rec_load(&b, 1, 0x1000, 4, 1, "f");
	{
		uint64_t big = 1000;
		memcpy(b.p + 16 + 24, &big, 8);
	}
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), -EBADMSG);
	assert_int_equal(r.size, b.n); /* still skippable */
	{
		uint64_t huge = UINT64_MAX;
		memcpy(b.p + 16 + 24, &huge, 8);
		assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), -EBADMSG);
	}
	/* a name without its NUL: the code fills the rest of the record */
	b.n = 0;
	rec_load(&b, 1, 0x1000, 0, 1, "abc");
	b.n--;
	set32(&b, 4, (uint32_t)b.n);
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), -EBADMSG);
	/* a name over the cap is cut */
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	b.n = 0;
	rec_load(&b, 1, 0x1000, 1, 1, longname);
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), 0);
	assert_int_equal(r.load.name_len, HS_JITDUMP_MAX_NAME);
	/* fixed fields cut short */
	b.n = 0;
	at = rec_begin(&b, HS_JIT_CODE_MOVE, 1);
	hs_test_put64(&b, 1);
	rec_end(&b, at);
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), -EBADMSG);
	/* more debug entries than the record can hold */
	b.n = 0;
	at = rec_begin(&b, HS_JIT_CODE_DEBUG_INFO, 1);
	hs_test_put64(&b, 0x1000);
	hs_test_put64(&b, UINT64_MAX);
	hs_test_put64(&b, 0x1000);
	rec_end(&b, at);
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), -EBADMSG);
	/* a debug entry whose file name runs past the record: iteration stops before it */
	b.n = 0;
	at = rec_begin(&b, HS_JIT_CODE_DEBUG_INFO, 1);
	hs_test_put64(&b, 0x1000);
	hs_test_put64(&b, 1);
	hs_test_put64(&b, 0x1000);
	hs_test_put32(&b, 1);
	hs_test_put32(&b, 0);
	hs_test_put(&b, "nonul", 5);
	rec_end(&b, at);
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), 0);
	{
		struct hs_jitdump_debug_iter it = {0};
		struct hs_jitdump_debug_entry e;
		assert_false(hs_jitdump_debug_next(&r, &it, &e));
	}
	/* unwinding sizes that do not fit */
	b.n = 0;
	at = rec_begin(&b, HS_JIT_CODE_UNWINDING_INFO, 1);
	hs_test_put64(&b, 100);
	hs_test_put64(&b, 4);
	hs_test_put64(&b, 0);
	hs_test_put64(&b, 0);
	rec_end(&b, at);
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), -EBADMSG);
	b.n = 0;
	at = rec_begin(&b, HS_JIT_CODE_UNWINDING_INFO, 1);
	hs_test_put64(&b, 8);
	hs_test_put64(&b, 9);
	hs_test_put64(&b, 0);
	hs_test_put64(&b, 0);
	rec_end(&b, at);
	assert_int_equal(hs_jitdump_record_parse(b.p, b.n, &h, 0, &r, &err), -EBADMSG);
	free(b.p);
}

/* ---- perf map lines ---- */

static void test_perf_map_lines(void **state)
{
	struct hs_perf_map_entry e;
	char longline[HS_PERF_MAP_MAX_NAME + 64];

	(void)state;
	assert_true(hs_perf_map_parse_line("18c4000 300 Builtin:DeoptimizationEntry_Eager", 45, &e));
	assert_int_equal(e.start, 0x18c4000);
	assert_int_equal(e.size, 0x300);
	assert_int_equal(e.name_len, 33);
	assert_memory_equal(e.name, "Builtin:DeoptimizationEntry_Eager", 33);
	/* HotSpot's form, a name with spaces, a CRLF line */
	{
		const char *l = "0x00007fe3f0ec7660 0x0000000000000338 double Spin.work(int)\r";
		assert_true(hs_perf_map_parse_line(l, strlen(l), &e));
		assert_int_equal(e.start, 0x7fe3f0ec7660);
		assert_int_equal(e.size, 0x338);
		assert_int_equal(e.name_len, strlen("double Spin.work(int)"));
		assert_memory_equal(e.name, "double Spin.work(int)", e.name_len);
	}
	{
		const char *l = "7f58d6746180 180 JS:*fib /tmp/a b.js:1:13";
		assert_true(hs_perf_map_parse_line(l, strlen(l), &e));
		assert_memory_equal(e.name, "JS:*fib /tmp/a b.js:1:13", e.name_len);
	}
	/* an empty name is an entry */
	assert_true(hs_perf_map_parse_line("1000 10 ", 8, &e));
	assert_int_equal(e.name_len, 0);
	/* not entries */
	assert_false(hs_perf_map_parse_line("", 0, &e));
	assert_false(hs_perf_map_parse_line("1000", 4, &e));
	assert_false(hs_perf_map_parse_line("1000 10", 7, &e));
	assert_false(hs_perf_map_parse_line("zz 10 x", 7, &e));
	assert_false(hs_perf_map_parse_line("1000 0 empty", 12, &e));
	assert_false(hs_perf_map_parse_line("0x 10 x", 7, &e));
	assert_false(hs_perf_map_parse_line("10000000000000000 1 seventeen", 29, &e));
	assert_false(hs_perf_map_parse_line("ffffffffffffffff 2 wraps", 24, &e));
	assert_true(hs_perf_map_parse_line("ffffffffffffff00 ff fits", 24, &e));
	/* a name over the cap is cut */
	memcpy(longline, "1 1 ", 4);
	memset(longline + 4, 'n', sizeof(longline) - 4);
	assert_true(hs_perf_map_parse_line(longline, sizeof(longline), &e));
	assert_int_equal(e.name_len, HS_PERF_MAP_MAX_NAME);
}

/* ---- libhotstack-jit ---- */

static char tmpdir[64];

static int setup_tmp(void **state)
{
	return hs_test_mkdtemp(tmpdir, sizeof(tmpdir), "hs-test-jit");
}

static int teardown_tmp(void **state)
{
	return hs_test_rmtree(tmpdir);
}

/* The toy JIT's function shape: sub $0x18,%rsp; ...; add $0x18,%rsp; ret (24 bytes), and its
 * .eh_frame as if placed right after it (pcrel FDE address). */
static size_t toy_eh_frame(uint8_t *out, uint8_t frame)
{
	static const uint8_t cie[] = {20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0};
	uint8_t fde[] = {20, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 24, 0, 0, 0, 0, 0x44, 0x0e, 0, 0x53, 0x0e, 8, 0};
	int32_t begin = -(24 + 24 + 8);

	memcpy(fde + 8, &begin, 4);
	fde[19] = (uint8_t)(8 + frame);
	memcpy(out, cie, sizeof(cie));
	memcpy(out + sizeof(cie), fde, sizeof(fde));
	memset(out + sizeof(cie) + sizeof(fde), 0, 4);
	return sizeof(cie) + sizeof(fde) + 4;
}

static void test_cfi_eh_frame(void **state)
{
	uint8_t eh[64];
	size_t n = toy_eh_frame(eh, 0x18);
	struct hs_cfi_table *t;
	struct hs_error err = {0};
	const struct hs_cfi_row *row;

	(void)state;
	/* code at 0x10000, its .eh_frame right after (24 bytes, already a multiple of 8) */
	assert_int_equal(hs_cfi_table_build_eh_frame(eh, n, 0x10018, NULL, 0, 0, &t, &err), 0);
	assert_int_equal(t->stats.fdes, 1);
	row = hs_cfi_table_find(t, 0x10000);
	assert_non_null(row);
	assert_int_equal(row->cfa_kind, HS_CFA_REG);
	assert_int_equal(row->cfa_off, 8);
	row = hs_cfi_table_find(t, 0x10004 + 10);
	assert_int_equal(row->cfa_off, 0x20);
	assert_int_equal(row->ra_kind, HS_RULE_CFA_OFF);
	row = hs_cfi_table_find(t, 0x10017);
	assert_int_equal(row->cfa_off, 8);
	row = hs_cfi_table_find(t, 0x10018);
	assert_true(!row || row->cfa_kind == HS_CFA_NONE);
	hs_cfi_table_free(t);
	/* garbage compiles to nothing, never a row */
	memset(eh, 0xff, sizeof(eh));
	assert_int_equal(hs_cfi_table_build_eh_frame(eh, sizeof(eh), 0x10018, eh, 8, 0x10058, &t, &err), 0);
	assert_int_equal(t->n, 0);
	hs_cfi_table_free(t);
}

static void test_libjit_file(void **state)
{
	char path[128];
	struct hsjit_options o = {sizeof(o)};
	struct hsjit *j;
	uint8_t code[24] = {0x48, 0x83, 0xec, 0x18}, eh[64], *file;
	struct hsjit_line lines[2] = {{0, 10, 0, "toy.jit"}, {0, 11, 0, "toy.jit"}};
	struct hsjit_code_info info = {sizeof(info)};
	struct hs_jitdump_header h;
	struct hs_jitdump_record r;
	struct hs_error err = {0};
	uint64_t index = 0, t0, t1;
	size_t n, off;
	uint32_t seen[8], nseen = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/lib.dump", tmpdir);
	o.path = path;
	o.size = 4;
	assert_int_equal(hsjit_open(&j, &o), -EINVAL);
	o.size = sizeof(o);
	/* a symbolic link at the path (planted in a shared directory) is not followed */
	{
		char victim[128], link[128];
		snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
		snprintf(link, sizeof(link), "%s/jit-link.dump", tmpdir);
		struct stat st;
		FILE *f = fopen(victim, "w");
		assert_non_null(f);
		fputs("precious", f);
		fclose(f);
		assert_int_equal(symlink(victim, link), 0);
		o.path = link;
		assert_int_equal(hsjit_open(&j, &o), -ELOOP);
		assert_int_equal(stat(victim, &st), 0);
		assert_int_equal(st.st_size, 8);
		unlink(link);
		unlink(victim);
		o.path = path;
	}
	t0 = hsjit_timestamp(NULL);
	assert_int_equal(hsjit_open(&j, &o), 0);
	lines[0].addr = (uint64_t)(uintptr_t)code;
	lines[1].addr = (uint64_t)(uintptr_t)code + 14;
	info.lines = lines;
	info.nlines = 2;
	info.eh_frame = eh;
	info.eh_frame_size = toy_eh_frame(eh, 0x18);
	assert_int_equal(hsjit_code_load(j, "alpha", code, sizeof(code), &info, &index), 0);
	assert_int_equal(index, 1);
	assert_int_equal(hsjit_code_move(j, index, code, (const void *)((uintptr_t)code + 4096), sizeof(code)), 0);
	assert_int_equal(hsjit_code_load(j, "beta", code, sizeof(code), NULL, NULL), 0);
	assert_int_equal(hsjit_code_load(j, NULL, code, 1, NULL, NULL), -EINVAL);
	assert_int_equal(hsjit_close(j), 0);
	t1 = hsjit_timestamp(NULL);
	assert_int_equal(hsjit_close(NULL), 0);

	file = (uint8_t *)hs_test_read_file(path, &n);
	assert_int_equal(hs_jitdump_header_parse(file, n, &h, &err), 0);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.size, 40);
	assert_int_equal(h.elf_mach, 62);
	assert_int_equal(h.pid, getpid());
	assert_int_equal(h.flags, 0);
	assert_true(h.timestamp >= t0 && h.timestamp <= t1);
	{
		uint32_t pad1;
		memcpy(&pad1, file + 16, 4);
		assert_int_equal(pad1, 0);
	}
	for (off = h.size; off < n; off += r.size) {
		assert_int_equal(hs_jitdump_record_parse(file + off, n - off, &h, off, &r, &err), 0);
		assert_true(r.timestamp >= t0 && r.timestamp <= t1);
		assert_true(nseen < 8);
		seen[nseen++] = r.id;
		if (r.id == HS_JIT_CODE_LOAD && r.load.name_len == 5) {
			assert_memory_equal(r.load.name, "alpha", 5);
			assert_int_equal(r.load.code_addr, (uintptr_t)code);
			assert_int_equal(r.load.code_size, 24);
			/* the code is the end of the record, as perf reads it */
			assert_memory_equal(file + off + r.size - 24, code, 24);
		}
		if (r.id == HS_JIT_CODE_UNWINDING_INFO) {
			/* .eh_frame then the .eh_frame_hdr the library built: its table finds the FDE */
			struct hs_cfi_table *t;
			uint64_t eh_addr = 0x10000 + 24, hdr_size = r.unwind.eh_frame_hdr_size;
			assert_int_equal(r.unwind.unwinding_size - hdr_size, info.eh_frame_size);
			assert_int_equal(r.unwind.mapped_size, r.unwind.unwinding_size);
			assert_int_equal(hdr_size, 8 + 4 + 8);
			assert_int_equal(hs_cfi_table_build_eh_frame(r.unwind.data, info.eh_frame_size, eh_addr,
								     r.unwind.data + info.eh_frame_size, hdr_size,
								     eh_addr + info.eh_frame_size, &t, &err),
					 0);
			assert_true(t->stats.from_eh_frame_hdr);
			assert_int_equal(t->stats.fdes, 1);
			assert_int_equal(hs_cfi_table_find(t, 0x10008)->cfa_off, 0x20);
			hs_cfi_table_free(t);
		}
		if (r.id == HS_JIT_CODE_MOVE) {
			assert_int_equal(r.move.old_code_addr, (uintptr_t)code);
			assert_int_equal(r.move.new_code_addr, (uintptr_t)code + 4096);
			assert_int_equal(r.move.code_index, 1);
		}
	}
	assert_int_equal(off, n);
	assert_int_equal(nseen, 6);
	assert_int_equal(seen[0], HS_JIT_CODE_DEBUG_INFO);
	assert_int_equal(seen[1], HS_JIT_CODE_UNWINDING_INFO);
	assert_int_equal(seen[2], HS_JIT_CODE_LOAD);
	assert_int_equal(seen[3], HS_JIT_CODE_MOVE);
	assert_int_equal(seen[4], HS_JIT_CODE_LOAD);
	assert_int_equal(seen[5], HS_JIT_CODE_CLOSE);
	free(file);

	/* the default name, in JITDUMPDIR; architecture timestamps flagged */
	setenv("JITDUMPDIR", tmpdir, 1);
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.flags = HSJIT_ARCH_TIMESTAMP;
	assert_int_equal(hsjit_open(&j, &o), 0);
	assert_int_equal(hsjit_close(j), 0);
	unsetenv("JITDUMPDIR");
	snprintf(path, sizeof(path), "%s/jit-%d.dump", tmpdir, (int)getpid());
	file = (uint8_t *)hs_test_read_file(path, &n);
	assert_int_equal(hs_jitdump_header_parse(file, n, &h, &err), 0);
	assert_int_equal(h.flags, HS_JITDUMP_FLAG_ARCH_TIMESTAMP);
	free(file);
}

struct writer_arg {
	struct hsjit *j;
	int k;
};

static void *writer(void *arg)
{
	struct writer_arg *w = arg;
	static uint8_t code[4][64];
	uint8_t eh[64];
	struct hsjit_line line = {0, 1, 0, "t.c"};
	struct hsjit_code_info info = {sizeof(info)};

	info.lines = &line;
	info.nlines = 1;
	info.eh_frame = eh;
	info.eh_frame_size = toy_eh_frame(eh, 0x18);
	for (int i = 0; i < 200; i++) {
		uint8_t *c = code[w->k] + (i % 8);
		char name[32];
		line.addr = (uint64_t)(uintptr_t)c;
		snprintf(name, sizeof(name), "t%d-%d", w->k, i);
		if (hsjit_code_load(w->j, name, c, 24, &info, NULL))
			return (void *)1;
	}
	return NULL;
}

/* Several threads at once: every record whole, and each load right after its own debug and
 * unwinding information. */
static void test_libjit_threads(void **state)
{
	char path[128];
	struct hsjit_options o = {sizeof(o)};
	struct hsjit *j;
	pthread_t t[4];
	struct writer_arg args[4];
	struct hs_jitdump_header h;
	struct hs_jitdump_record r;
	struct hs_error err = {0};
	uint8_t *file;
	size_t n, off, loads = 0;
	uint64_t last_debug = 0;
	uint32_t prev = UINT32_MAX;

	(void)state;
	snprintf(path, sizeof(path), "%s/threads.dump", tmpdir);
	o.path = path;
	assert_int_equal(hsjit_open(&j, &o), 0);
	for (int i = 0; i < 4; i++) {
		args[i].j = j;
		args[i].k = i;
		pthread_create(&t[i], NULL, writer, &args[i]);
	}
	for (int i = 0; i < 4; i++) {
		void *rv;
		pthread_join(t[i], &rv);
		assert_null(rv);
	}
	assert_int_equal(hsjit_close(j), 0);
	file = (uint8_t *)hs_test_read_file(path, &n);
	assert_int_equal(hs_jitdump_header_parse(file, n, &h, &err), 0);
	for (off = h.size; off < n; off += r.size) {
		assert_int_equal(hs_jitdump_record_parse(file + off, n - off, &h, off, &r, &err), 0);
		if (r.id == HS_JIT_CODE_DEBUG_INFO)
			last_debug = r.debug.code_addr;
		if (r.id == HS_JIT_CODE_UNWINDING_INFO)
			assert_int_equal(prev, HS_JIT_CODE_DEBUG_INFO);
		if (r.id == HS_JIT_CODE_LOAD) {
			assert_int_equal(prev, HS_JIT_CODE_UNWINDING_INFO);
			assert_int_equal(r.load.code_addr, last_debug);
			loads++;
		}
		prev = r.id;
	}
	assert_int_equal(off, n);
	assert_int_equal(loads, 800);
	free(file);
}

/* ---- the JIT store ---- */

static void test_store_times(void **state)
{
	char path[128];
	struct hsjit_options o = {sizeof(o)};
	struct hsjit *j;
	static uint8_t mem[8192];
	uint8_t *a = mem + 64, *b = mem + 4096, eh[64];
	struct hsjit_line lines[2] = {{0, 10, 0, "toy.jit"}, {0, 11, 0, "toy.jit"}};
	struct hsjit_code_info info = {sizeof(info)};
	uint64_t t0, t1, t2, t3, index;
	struct hs_jit store;
	struct hs_jit_opts so = {0};
	const struct hs_jit_code *c, *c2;
	const char *file;
	uint32_t line;
	uint64_t A = (uintptr_t)a + 4, B = (uintptr_t)b + 4;

	(void)state;
	snprintf(path, sizeof(path), "%s/times.dump", tmpdir);
	o.path = path;
	assert_int_equal(hsjit_open(&j, &o), 0);
	lines[0].addr = (uintptr_t)a;
	lines[1].addr = (uintptr_t)a + 14;
	info.lines = lines;
	info.nlines = 2;
	info.eh_frame = eh;
	info.eh_frame_size = toy_eh_frame(eh, 0x18);
	t0 = hsjit_timestamp(j);
	assert_int_equal(hsjit_code_load(j, "alpha", a, 24, &info, &index), 0);
	t1 = hsjit_timestamp(j);
	assert_int_equal(hsjit_code_move(j, index, a, b, 24), 0);
	t2 = hsjit_timestamp(j);
	lines[0].line = 20;
	lines[1].line = 21;
	info.eh_frame_size = toy_eh_frame(eh, 0x28);
	assert_int_equal(hsjit_code_load(j, "beta", a, 24, &info, NULL), 0);
	t3 = hsjit_timestamp(j);
	assert_int_equal(hsjit_close(j), 0);

	so.timed = true;
	hs_jit_init(&store, &so);
	hs_jit_add_jitdump(&store, 77, -1, path);
	hs_jit_add_jitdump(&store, 77, -1, path); /* the same file again: read once */
	assert_int_equal(store.stats.files, 1);
	assert_int_equal(store.stats.code_loads, 2);
	assert_int_equal(store.stats.code_moves, 1);
	assert_true(hs_jit_has_jitdump(&store, 77));
	assert_false(hs_jit_has_jitdump(&store, 78));
	assert_null(hs_jit_find(&store, 78, A, t1));
	/* before anything: the first code there (a runtime that logs code late) */
	c = hs_jit_find(&store, 77, A, t0 - 1);
	assert_non_null(c);
	assert_string_equal(hs_jit_str(&store, c->name), "alpha");
	c = hs_jit_find(&store, 77, A, t1);
	assert_string_equal(hs_jit_str(&store, c->name), "alpha");
	assert_true(hs_jit_code_line(&store, c, (uintptr_t)a + 16, &file, &line));
	assert_string_equal(file, "toy.jit");
	assert_int_equal(line, 11);
	assert_true(c->unwind != 0);
	/* moved: the old place holds nothing until the re-JIT, the new one has it with its lines */
	assert_null(hs_jit_find(&store, 77, A, t2));
	c = hs_jit_find(&store, 77, B, t2);
	assert_non_null(c);
	assert_string_equal(hs_jit_str(&store, c->name), "alpha");
	assert_true(hs_jit_code_line(&store, c, (uintptr_t)b + 2, &file, &line));
	assert_int_equal(line, 10);
	assert_int_equal(c->unwind, hs_jit_find(&store, 77, A, t1)->unwind);
	c = hs_jit_find(&store, 77, A, t3);
	assert_string_equal(hs_jit_str(&store, c->name), "beta");
	assert_true(hs_jit_code_line(&store, c, (uintptr_t)a + 20, &file, &line));
	assert_int_equal(line, 21);
	c2 = hs_jit_find(&store, 77, B, t3);
	assert_string_equal(hs_jit_str(&store, c2->name), "alpha");
	c = hs_jit_find(&store, 77, A, t3);
	assert_int_not_equal(c->id, c2->id);
	assert_int_not_equal(c->unwind, c2->unwind);
	assert_null(hs_jit_find(&store, 77, (uintptr_t)a + 24, t3));
	assert_null(hs_jit_find(&store, 77, (uintptr_t)a - 1, t3));
	hs_jit_release(&store);

	/* times not comparable with samples': the latest code wins, moved code left its place */
	so.timed = false;
	hs_jit_init(&store, &so);
	hs_jit_add_jitdump(&store, 77, -1, path);
	assert_string_equal(hs_jit_str(&store, hs_jit_find(&store, 77, A, t1)->name), "beta");
	assert_string_equal(hs_jit_str(&store, hs_jit_find(&store, 77, B, t1)->name), "alpha");
	hs_jit_release(&store);
}

/* A jitdump file of one function, name, at code, with two lines and unwinding information. */
static void write_one(const char *path, const char *name, uint8_t *code, uint32_t line)
{
	struct hsjit_options o = {sizeof(o)};
	struct hsjit *j;
	uint8_t eh[64];
	struct hsjit_line lines[2] = {{(uintptr_t)code, line, 0, name}, {(uintptr_t)code + 14, line + 1, 0, name}};
	struct hsjit_code_info info = {sizeof(info)};

	o.path = path;
	assert_int_equal(hsjit_open(&j, &o), 0);
	info.lines = lines;
	info.nlines = 2;
	info.eh_frame = eh;
	info.eh_frame_size = toy_eh_frame(eh, 0x18);
	assert_int_equal(hsjit_code_load(j, name, code, 24, &info, NULL), 0);
	assert_int_equal(hsjit_close(j), 0);
}

/* Processes that exited are forgotten with what only they used: their code, lines, unwinding
 * information, names and perf map entries; the others' stay as they were, and the caps count
 * what is held. */
static void test_store_forget(void **state)
{
	static uint8_t mem[8192];
	char a_path[128], b_path[128];
	struct hs_jit store;
	struct hs_jit_opts so = {0};
	struct hs_u64map gone = {0};
	const struct hs_jit_code *c;
	const char *file;
	uint32_t line;
	uint64_t start, ncodes, pm_entries;
	size_t strs, unwinds, eh_size;
	void *table = malloc(1); /* what the unwinder would have compiled for 77's code */

	(void)state;
	snprintf(a_path, sizeof(a_path), "%s/forget-a.dump", tmpdir);
	snprintf(b_path, sizeof(b_path), "%s/forget-b.dump", tmpdir);
	write_one(a_path, "alpha_only", mem + 64, 10);
	write_one(b_path, "beta_kept", mem + 4096, 20);
	hs_jit_init(&store, &so);
	hs_jit_add_jitdump(&store, 77, -1, a_path);
	hs_jit_add_jitdump(&store, 78, -1, b_path);
	assert_int_equal(hs_jit_perfmap_feed(&store, 9, "1000 100 gone_name\n", 19, true), 19);
	assert_int_equal(hs_jit_perfmap_feed(&store, 10, "2000 100 kept_name\n", 19, true), 19);
	c = hs_jit_find(&store, 77, (uintptr_t)mem + 68, 0);
	assert_non_null(c);
	assert_true(c->unwind != 0);
	store.unwinds.v[c->unwind - 1].table = table;
	c = hs_jit_find(&store, 78, (uintptr_t)mem + 4100, 0);
	assert_non_null(c);
	eh_size = store.unwinds.v[c->unwind - 1].eh_frame_size;
	ncodes = store.ncodes;
	pm_entries = store.pm_entries;
	strs = store.str_off.n;
	unwinds = store.unwinds.n;

	hs_u64map_put(&gone, 77, 1);
	hs_u64map_put(&gone, 9, 1);
	hs_u64map_put(&gone, 12345, 1); /* never known */
	assert_int_equal(hs_jit_forget(&store, &gone), 2);
	assert_null(hs_jit_find(&store, 77, (uintptr_t)mem + 68, 0));
	assert_null(hs_jit_perfmap_find(&store, 9, 0x1000, &start));
	assert_int_equal(store.ncodes, ncodes - 1);
	assert_int_equal(store.pm_entries, pm_entries - 1);
	assert_int_equal(store.unwinds.n, unwinds - 1);
	assert_true(store.str_off.n < strs);
	assert_int_equal(store.dropped_tables.n, 1);
	assert_ptr_equal(store.dropped_tables.v[0], table);
	free(table);
	store.dropped_tables.n = 0;
	/* the others, as they were */
	c = hs_jit_find(&store, 78, (uintptr_t)mem + 4100, 0);
	assert_non_null(c);
	assert_string_equal(hs_jit_str(&store, c->name), "beta_kept");
	assert_true(hs_jit_code_line(&store, c, (uintptr_t)mem + 4096 + 16, &file, &line));
	assert_string_equal(file, "beta_kept");
	assert_int_equal(line, 21);
	assert_true(c->unwind != 0);
	assert_int_equal(store.unwinds.v[c->unwind - 1].eh_frame_size, eh_size);
	assert_string_equal(hs_jit_perfmap_find(&store, 10, 0x2004, &start), "kept_name");
	/* new names after it go on in the packed pools */
	assert_int_equal(hs_jit_perfmap_feed(&store, 11, "3000 10 later\n", 14, true), 14);
	assert_string_equal(hs_jit_perfmap_find(&store, 11, 0x3004, &start), "later");
	assert_string_equal(hs_jit_perfmap_find(&store, 10, 0x2004, &start), "kept_name");
	assert_int_equal(hs_jit_forget(&store, &gone), 0);
	hs_u64map_release(&gone);
	hs_jit_release(&store);
	unlink(a_path);
	unlink(b_path);
}

static void append(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
}

/* A file read while it is written: a record cut in the middle is not read until it is whole. */
static void test_store_live(void **state)
{
	char path[128];
	struct hs_test_buf b = {0};
	struct hs_jit store;
	struct hs_jit_opts so = {true, true, {0}};
	size_t half;

	(void)state;
	snprintf(path, sizeof(path), "%s/live.dump", tmpdir);
	header(&b, 40, 0);
	rec_load(&b, 100, 0x5000, 0x100, 1, "first");
	half = b.n;
	rec_load(&b, 200, 0x6000, 0x100, 2, "second");
	append(path, b.p, half + 20);
	hs_jit_init(&store, &so);
	hs_jit_add_jitdump(&store, getpid(), -1, path);
	assert_non_null(hs_jit_find(&store, getpid(), 0x5010, UINT64_MAX - 1));
	assert_null(hs_jit_find(&store, getpid(), 0x6010, UINT64_MAX - 1));
	append(path, b.p + half + 20, b.n - half - 20);
	assert_string_equal(hs_jit_str(&store, hs_jit_find(&store, getpid(), 0x6010, UINT64_MAX - 1)->name), "second");
	/* garbage after: a record header with an impossible size ends the reading, with a warning */
	b.n = 0;
	hs_test_put32(&b, 0);
	hs_test_put32(&b, 3);
	hs_test_put64(&b, 0);
	append(path, b.p, b.n);
	hs_jit_read_all(&store, -1);
	assert_int_equal(store.warnings.n, 1);
	assert_non_null(strstr(store.warnings.v[0], "smaller than its header"));
	hs_jit_release(&store);
	free(b.p);
}

/* Hostile records in a file: skipped, counted, and bounded. */
static void test_store_hostile(void **state)
{
	char path[128];
	struct hs_test_buf b = {0};
	struct hs_jit store;
	struct hs_jit_opts so = {false, true, {0}};

	(void)state;
	snprintf(path, sizeof(path), "%s/hostile.dump", tmpdir);
	header(&b, 40, 0);
	rec_load(&b, 1, 0x1000, 0, 1, "empty");                   /* no code: nothing to find */
	rec_load(&b, 1, UINT64_MAX - 4, 8, 2, "wraps");            /* past the address space */
	rec_move(&b, 2, 0x9000, 0xa000, 8, 12345);                 /* an index never loaded */
	rec_debug(&b, 3, 0x2000, 1);                               /* for another address */
	rec_load(&b, 4, 0x3000, 0x10, 3, "na\001me\nwith\tcontrols");
	{
		size_t at = rec_begin(&b, 77, 5);
		hs_test_put64(&b, 1);
		rec_end(&b, at);
	}
	rec_load(&b, 6, 0x4000, 0x10, 4, "after");
	append(path, b.p, b.n);
	hs_jit_init(&store, &so);
	hs_jit_add_jitdump(&store, 5, -1, path);
	assert_null(hs_jit_find(&store, 5, 0x1000, 10));
	assert_null(hs_jit_find(&store, 5, UINT64_MAX - 2, 10));
	assert_string_equal(hs_jit_str(&store, hs_jit_find(&store, 5, 0x3004, 10)->name), "na me with controls");
	{
		const char *f;
		uint32_t l;
		assert_false(hs_jit_code_line(&store, hs_jit_find(&store, 5, 0x3004, 10), 0x3004, &f, &l));
	}
	assert_string_equal(hs_jit_str(&store, hs_jit_find(&store, 5, 0x4000, 10)->name), "after");
	assert_true(store.stats.skipped_records >= 4);
	hs_jit_release(&store);
	/* a file that is not jitdump: a warning, nothing else */
	hs_jit_init(&store, &so);
	hs_jit_add_jitdump(&store, 5, -1, "/proc/self/cmdline");
	hs_jit_add_jitdump(&store, 6, -1, "/nonexistent/jit-6.dump");
	assert_int_equal(store.warnings.n, 2);
	assert_non_null(strstr(store.warnings.v[0], "not a jitdump file"));
	assert_non_null(strstr(store.warnings.v[1], "cannot open"));
	hs_jit_release(&store);
	free(b.p);
}

/* A jitdump file that is a symbolic link, or someone else's, is not read (a warning says why);
 * the runtime's own file (here: ours) is. */
static void test_jitdump_untrusted(void **state)
{
	char path[128], link[128];
	struct hs_test_buf b = {0};
	struct hs_jit store;
	struct hs_jit_opts so = {false, true, {0}};

	(void)state;
	snprintf(path, sizeof(path), "%s/jit-2147480002.dump", tmpdir);
	snprintf(link, sizeof(link), "%s/jit-2147480003.dump", tmpdir);
	unlink(path);
	unlink(link);
	header(&b, 40, 0);
	rec_load(&b, 1, 0x1000, 0x10, 1, "trusted");
	append(path, b.p, b.n);
	hs_jit_init(&store, &so);
	hs_jit_add_jitdump(&store, 2147480002, -1, path);
	assert_int_equal(store.warnings.n, 0);
	assert_string_equal(hs_jit_str(&store, hs_jit_find(&store, 2147480002, 0x1004, 10)->name), "trusted");
	hs_jit_release(&store);

	assert_int_equal(symlink(path, link), 0);
	hs_jit_init(&store, &so);
	hs_jit_add_jitdump(&store, 2147480003, -1, link);
	assert_null(hs_jit_find(&store, 2147480003, 0x1004, 10));
	assert_int_equal(store.warnings.n, 1);
	assert_non_null(strstr(store.warnings.v[0], "symbolic link"));
	hs_jit_release(&store);

	if (geteuid() == 0) {
		assert_int_equal(chown(path, 4242, 4242), 0);
		hs_jit_init(&store, &so);
		hs_jit_add_jitdump(&store, 2147480002, -1, path);
		assert_null(hs_jit_find(&store, 2147480002, 0x1004, 10));
		assert_int_equal(store.warnings.n, 1);
		assert_non_null(strstr(store.warnings.v[0], "owned by uid 4242"));
		hs_jit_release(&store);
		/* a descriptor on it (a live recording's capture) is checked the same way */
		hs_jit_init(&store, &so);
		hs_jit_add_jitdump(&store, 2147480002, open(path, O_RDONLY | O_CLOEXEC), path);
		assert_null(hs_jit_find(&store, 2147480002, 0x1004, 10));
		assert_int_equal(store.warnings.n, 1);
		hs_jit_release(&store);
	}
	unlink(link);
	unlink(path);
	free(b.p);
}

static void test_perf_map_store(void **state)
{
	struct hs_jit store;
	struct hs_jit_opts so = {0};
	uint64_t start;
	const char *text = "1000 100 a\n1050 10 b\n0x1080 0x100 c\nnonsense line\n2000 10 partial";

	(void)state;
	hs_jit_init(&store, &so);
	assert_int_equal(hs_jit_perfmap_feed(&store, 9, text, strlen(text), false), strlen(text) - 15);
	assert_string_equal(hs_jit_perfmap_find(&store, 9, 0x1000, &start), "a");
	assert_int_equal(start, 0x1000);
	assert_string_equal(hs_jit_perfmap_find(&store, 9, 0x1055, &start), "b");
	assert_string_equal(hs_jit_perfmap_find(&store, 9, 0x1060, &start), "a");
	assert_int_equal(start, 0x1000);
	assert_string_equal(hs_jit_perfmap_find(&store, 9, 0x107f, &start), "a");
	assert_string_equal(hs_jit_perfmap_find(&store, 9, 0x1080, &start), "c");
	assert_string_equal(hs_jit_perfmap_find(&store, 9, 0x117f, &start), "c");
	assert_null(hs_jit_perfmap_find(&store, 9, 0x1180, &start));
	assert_null(hs_jit_perfmap_find(&store, 9, 0x2000, &start));
	assert_null(hs_jit_perfmap_find(&store, 8, 0x1000, &start));
	/* the runtime finished its line; a later line over an earlier one wins */
	assert_int_equal(hs_jit_perfmap_feed(&store, 9, "2000 10 partial\n1000 8 d", 24, true), 24);
	assert_string_equal(hs_jit_perfmap_find(&store, 9, 0x2004, &start), "partial");
	assert_string_equal(hs_jit_perfmap_find(&store, 9, 0x1004, &start), "d");
	assert_string_equal(hs_jit_perfmap_find(&store, 9, 0x1008, &start), "a");
	hs_jit_release(&store);
}

/* The file: found under the pid, refused when it is a link or someone else's, read again when it
 * grows, from the start when it was rewritten (replaced, shorter, or said to be). */
static void test_perf_map_file(void **state)
{
	const int32_t pid = 2147480001;
	char path[64];
	struct hs_jit store;
	struct hs_jit_opts so = {0};
	uint64_t start;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	hs_jit_init(&store, &so);
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, true), -ENOENT);
	append(path, "1000 10 one\n1010 10 tw", 22);
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, false), 0);
	assert_string_equal(hs_jit_perfmap_find(&store, pid, 0x1000, &start), "one");
	assert_null(hs_jit_perfmap_find(&store, pid, 0x1010, &start));
	append(path, "o\n1020 10 three\n", 16);
	/* not again within the interval */
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 500, 1000, false), 0);
	assert_null(hs_jit_perfmap_find(&store, pid, 0x1010, &start));
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 1000, 1000, false), 0);
	assert_string_equal(hs_jit_perfmap_find(&store, pid, 0x1010, &start), "two");
	assert_string_equal(hs_jit_perfmap_find(&store, pid, 0x1020, &start), "three");
	assert_int_equal(store.stats.perf_map_entries, 3);
	/* rewritten shorter: what it held before is gone */
	unlink(path);
	append(path, "5000 10 new\n", 12);
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, true), 0);
	assert_null(hs_jit_perfmap_find(&store, pid, 0x1000, &start));
	assert_string_equal(hs_jit_perfmap_find(&store, pid, 0x5000, &start), "new");
	/* written anew in place, longer, a line before the old end (a JVM's map, in code cache
	 * order): read from its start only when told so */
	{
		int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		const char *again = "4000 10 earlier\n5000 10 new\n";
		assert_true(fd >= 0);
		assert_int_equal(write(fd, again, strlen(again)), (ssize_t)strlen(again));
		close(fd);
	}
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, true), 0);
	assert_null(hs_jit_perfmap_find(&store, pid, 0x4000, &start));
	hs_jit_perfmap_rewritten(&store, pid);
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, true), 0);
	assert_string_equal(hs_jit_perfmap_find(&store, pid, 0x4000, &start), "earlier");
	assert_string_equal(hs_jit_perfmap_find(&store, pid, 0x5000, &start), "new");
	hs_jit_release(&store);

	/* someone else's file */
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 4242, 4242), 0);
		hs_jit_init(&store, &so);
		assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, true), -EPERM);
		assert_null(hs_jit_perfmap_find(&store, pid, 0x5000, &start));
		assert_int_equal(store.warnings.n, 1);
		assert_non_null(strstr(store.warnings.v[0], "owned by uid 4242"));
		/* once */
		assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, true), -EPERM);
		assert_int_equal(store.warnings.n, 1);
		hs_jit_release(&store);
	}
	/* a link: not followed */
	unlink(path);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	hs_jit_init(&store, &so);
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, true), -EPERM);
	assert_int_equal(store.warnings.n, 1);
	assert_non_null(strstr(store.warnings.v[0], "symbolic link"));
	hs_jit_release(&store);
	unlink(path);
}

/* A record whose size is 0 ends the reading of its file with the warning jit.md promises (it
 * stopped without one: the size was not handed back), and what came before it is read. */
static void test_jitdump_zero_size(void **state)
{
	char path[128];
	struct hs_test_buf b = {0};
	struct hs_jit store;
	struct hs_jit_opts so = {false, true, {0}};
	size_t at;

	(void)state;
	snprintf(path, sizeof(path), "%s/zero.dump", tmpdir);
	header(&b, 40, 0);
	rec_load(&b, 1, 0x1000, 0x10, 1, "before");
	at = rec_begin(&b, HS_JIT_CODE_LOAD, 2); /* its size stays 0 */
	(void)at;
	rec_load(&b, 3, 0x2000, 0x10, 2, "after");
	append(path, b.p, b.n);
	hs_jit_init(&store, &so);
	hs_jit_add_jitdump(&store, 5, -1, path);
	assert_string_equal(hs_jit_str(&store, hs_jit_find(&store, 5, 0x1004, 10)->name), "before");
	assert_null(hs_jit_find(&store, 5, 0x2004, 10));
	assert_int_equal(store.warnings.n, 1);
	assert_non_null(strstr(store.warnings.v[0], "zero.dump: offset 0x"));
	assert_non_null(strstr(store.warnings.v[0], "record size 0 smaller than its header: the rest of the file is ignored"));
	hs_jit_release(&store);
	free(b.p);
}

/* Writes n perf map lines "ADDR 10 fN" from first into the perf map of pid; returns its path. */
static void write_perf_map(char *path, size_t cap, int32_t pid, uint64_t first, size_t n)
{
	FILE *f;

	snprintf(path, cap, "/tmp/perf-%d.map", (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%llx 10 f%zx\n", (unsigned long long)(first + 16 * i), i);
	assert_int_equal(fclose(f), 0);
}

/* The cap on perf map lines holds for all processes together (each had its own: 16 M lines a
 * process took 2.3 GB): the first map is read whole, the second up to the cap, and the end
 * says how much was left out. */
static void test_perf_map_total_cap(void **state)
{
	const int32_t pid1 = 2147480011, pid2 = 2147480012;
	size_t n = HS_JIT_MAX_PERFMAP_ENTRIES * 3 / 4;
	char path1[64], path2[64];
	struct hs_jit store;
	struct hs_jit_opts so = {0};
	uint64_t start;
	bool said = false;

	(void)state;
	write_perf_map(path1, sizeof(path1), pid1, 0x100000, n);
	write_perf_map(path2, sizeof(path2), pid2, 0x100000, n);
	hs_jit_init(&store, &so);
	assert_int_equal(hs_jit_perfmap_read(&store, pid1, 0, 0, true), 0);
	assert_int_equal(hs_jit_perfmap_read(&store, pid2, 0, 0, true), 0);
	assert_true(store.pm_entries == HS_JIT_MAX_PERFMAP_ENTRIES);
	/* the first whole, the second up to the cap */
	assert_string_equal(hs_jit_perfmap_find(&store, pid1, 0x100000 + 16 * (n - 1), &start), "f17ffff");
	assert_non_null(hs_jit_perfmap_find(&store, pid2, 0x100000, &start));
	assert_non_null(hs_jit_perfmap_find(&store, pid2, 0x100000 + 16 * (HS_JIT_MAX_PERFMAP_ENTRIES - n - 1), &start));
	assert_null(hs_jit_perfmap_find(&store, pid2, 0x100000 + 16 * (HS_JIT_MAX_PERFMAP_ENTRIES - n), &start));
	/* read again: nothing more is taken, nothing counted twice */
	assert_int_equal(hs_jit_perfmap_read(&store, pid2, 0, 0, true), 0);
	assert_true(store.pm_entries == HS_JIT_MAX_PERFMAP_ENTRIES);
	hs_jit_end(&store);
	for (size_t i = 0; i < store.warnings.n; i++)
		said |= strstr(store.warnings.v[i], "perf maps hold more than 2097152 lines") &&
			strstr(store.warnings.v[i], "of 1 of them were not read");
	assert_true(said);
	hs_jit_release(&store);
	unlink(path1);
	unlink(path2);
}

/* A name line longer than a read (1 MiB) is cut to HS_PERF_MAP_MAX_NAME, as documented, and
 * counted: it was dropped silently, and the rest of it read as more lines. */
static void test_perf_map_long_name(void **state)
{
	const int32_t pid = 2147480013;
	char path[64];
	struct hs_jit store;
	struct hs_jit_opts so = {0};
	uint64_t start;
	const char *name;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "1000 10 before\n2000 10 ");
	for (int i = 0; i < (3 << 20) / 8; i++)
		fputs("1000 10 ", f); /* what a line parser would take for lines of their own */
	fprintf(f, "\n3000 10 after\n4000 10 %05000d\n", 7);
	assert_int_equal(fclose(f), 0);
	hs_jit_init(&store, &so);
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, true), 0);
	assert_int_equal(store.pm_entries, 4);
	assert_string_equal(hs_jit_perfmap_find(&store, pid, 0x1000, &start), "before");
	name = hs_jit_perfmap_find(&store, pid, 0x2000, &start);
	assert_non_null(name);
	assert_int_equal(strlen(name), HS_PERF_MAP_MAX_NAME);
	assert_true(!strncmp(name, "1000 10 1000 10 ", 16));
	assert_string_equal(hs_jit_perfmap_find(&store, pid, 0x3000, &start), "after");
	assert_int_equal(strlen(hs_jit_perfmap_find(&store, pid, 0x4000, &start)), HS_PERF_MAP_MAX_NAME);
	hs_jit_end(&store);
	assert_int_equal(store.warnings.n, 1);
	assert_non_null(strstr(store.warnings.v[0], ": 2 names longer than 4096 bytes were cut to that length"));
	hs_jit_release(&store);
	unlink(path);
}

/* The byte cap on all perf maps reached inside a line: the window left holds no line end, and
 * the read must end there (it read the same bytes again for ever). A sparse map: a first line
 * of zeros ending 1050 bytes before the cap, then lines of 200 bytes. */
static void test_perf_map_byte_cap_mid_line(void **state)
{
	const int32_t pid = 2147480014;
	char path[64], line[201];
	struct hs_jit store;
	struct hs_jit_opts so = {0};
	uint64_t start;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\n", 1, (off_t)(HS_JIT_MAX_PERFMAP_BYTES - 1050)), 1);
	for (int i = 0; i < 20; i++) {
		int k = snprintf(line, sizeof(line), "%x 10 ", 0x1000 + 16 * i);
		memset(line + k, 'n', 199 - (size_t)k);
		line[199] = '\n';
		assert_int_equal(pwrite(fd, line, 200, (off_t)(HS_JIT_MAX_PERFMAP_BYTES - 1049 + 200 * i)), 200);
	}
	assert_int_equal(close(fd), 0);
	hs_jit_init(&store, &so);
	assert_int_equal(hs_jit_perfmap_read(&store, pid, 0, 0, true), 0);
	/* the five whole lines before the cap are read, not the one the cap cuts */
	assert_non_null(hs_jit_perfmap_find(&store, pid, 0x1000 + 16 * 4, &start));
	assert_null(hs_jit_perfmap_find(&store, pid, 0x1000 + 16 * 5, &start));
	hs_jit_release(&store);
	unlink(path);
}

/* ---- the builder ---- */

static void mmap_event(struct hs_builder *b, int32_t pid, uint64_t start, uint64_t len, const char *name, uint64_t t)
{
	struct hs_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_MMAP2;
	ev.sid.has_time = true;
	ev.sid.time = t;
	ev.mmap.pid = ev.mmap.tid = (uint32_t)pid;
	ev.mmap.start = start;
	ev.mmap.len = len;
	ev.mmap.prot = PROT_READ | PROT_EXEC;
	ev.mmap.is_mmap2 = true;
	ev.mmap.filename = name;
	hs_builder_event(b, &ev);
}

/* A sample whose user chain is ips (leaf first), at time t. */
static void sample_event(struct hs_builder *b, int32_t pid, const uint64_t *ips, size_t n, uint64_t t)
{
	struct hs_perf_event ev;
	uint64_t chain[8];

	memset(&ev, 0, sizeof(ev));
	chain[0] = PERF_CONTEXT_USER;
	memcpy(chain + 1, ips, n * 8);
	ev.type = PERF_RECORD_SAMPLE;
	ev.sid.pid = ev.sid.tid = (uint32_t)pid;
	ev.sid.has_time = true;
	ev.sid.time = t;
	ev.sample.sid = ev.sid;
	ev.sample.ip = ips[0];
	ev.sample.period = 1;
	ev.sample.callchain = chain;
	ev.sample.nr_callchain = n + 1;
	hs_builder_event(b, &ev);
}

static const char *leaf_name(const struct hs_profile *p, uint32_t sample, uint32_t depth)
{
	return hs_profile_location_name(p, hs_profile_stack_locs(p, p->samples.v[sample].stack)[depth]);
}

/* Deferred naming: a frame in anonymous code stays a placeholder until the end, then takes the
 * perf map's name; jitdump code is named at once, by the code at the sample's time. */
static void test_builder_naming(void **state)
{
	const int32_t pid = 2147480002;
	char path[64], dump[128];
	struct hs_builder b;
	struct hs_builder_opts o = {0};
	struct hs_profile *p;
	struct hs_test_buf d = {0};
	uint64_t ips[2];
	struct hs_pid_list pids = {0};

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	/* a jitdump: alpha at 0x7000 from time 100, beta there from 300 */
	snprintf(dump, sizeof(dump), "%s/jit-%d.dump", tmpdir, (int)pid);
	header(&d, 40, 0);
	rec_load(&d, 100, 0x7000, 0x40, 1, "alpha");
	rec_load(&d, 300, 0x7000, 0x40, 2, "beta");
	append(dump, d.p, d.n);
	free(d.p);

	o.user = true;
	o.jit_timed = true;
	hs_builder_init(&b, &o);
	hs_builder_add_event(&b, "cpu-clock", true);
	mmap_event(&b, pid, 0x400000, 0x1000, "//anon", 1);
	mmap_event(&b, pid, 0x7000, 0x1000, "//anon", 1);
	mmap_event(&b, pid, 0x9000, 0x1000, dump, 1); /* the marker */
	ips[0] = 0x400010;
	ips[1] = 0x400108;
	sample_event(&b, pid, ips, 2, 150);
	hs_builder_jit_pids(&b, &pids);
	assert_int_equal(pids.n, 1);
	assert_int_equal(pids.v[0], pid);
	free(pids.v);
	/* at the sample's time, nothing named the perf-map code */
	assert_string_equal(hs_profile_location_name(b.p, b.jit_pending.v[0].loc), "[anon]");
	ips[0] = 0x7010;
	sample_event(&b, pid, ips, 2, 200);
	ips[0] = 0x7010;
	sample_event(&b, pid, ips, 2, 400);
	/* the runtime writes its map late, as a JVM asked at the end does */
	append(path, "0x400000 0x100 perf_map_leaf\n0x400100 0x100 perf_map_caller", 59);
	p = hs_builder_take(&b);
	assert_int_equal(p->samples.n, 3);
	assert_string_equal(leaf_name(p, 0, 0), "perf_map_leaf");
	assert_string_equal(leaf_name(p, 0, 1), "perf_map_caller");
	assert_int_equal(p->locations.v[hs_profile_stack_locs(p, p->samples.v[0].stack)[0]].kind, HS_KIND_JIT);
	assert_int_equal(p->locations.v[hs_profile_stack_locs(p, p->samples.v[0].stack)[1]].sym_off, 8);
	assert_string_equal(leaf_name(p, 1, 0), "alpha");
	assert_string_equal(leaf_name(p, 2, 0), "beta");
	assert_int_equal(b.sym.stats.jit_perf_map, 2);
	hs_profile_free(p);
	hs_builder_release(&b);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jitdump_header),
		cmocka_unit_test(test_jitdump_records),
		cmocka_unit_test(test_jitdump_hostile),
		cmocka_unit_test(test_perf_map_lines),
		cmocka_unit_test(test_cfi_eh_frame),
		cmocka_unit_test(test_libjit_file),
		cmocka_unit_test(test_libjit_threads),
		cmocka_unit_test(test_store_times),
		cmocka_unit_test(test_store_forget),
		cmocka_unit_test(test_store_live),
		cmocka_unit_test(test_store_hostile),
		cmocka_unit_test(test_jitdump_untrusted),
		cmocka_unit_test(test_perf_map_store),
		cmocka_unit_test(test_perf_map_file),
		cmocka_unit_test(test_perf_map_total_cap),
		cmocka_unit_test(test_perf_map_byte_cap_mid_line),
		cmocka_unit_test(test_perf_map_long_name),
		cmocka_unit_test(test_jitdump_zero_size),
		cmocka_unit_test(test_builder_naming),
	};
	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
