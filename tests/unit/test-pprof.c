/* pprof: the protobuf wire format, the writer and the reader — round trips table by table,
 * hostile and truncated inputs, and a profile written by Go's runtime/pprof. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "format/protobuf.h"
#include "output/writers.h"
#include "profile/pprof-read.h"
#include "profile/profile.h"
#include "util/outfile.h"

/* ---- helpers ---- */

static uint32_t S(struct hs_profile *p, const char *s)
{
	return hs_profile_intern_str(p, s);
}

static uint32_t func(struct hs_profile *p, const char *name, const char *sys, const char *file, int64_t line)
{
	return hs_profile_function(p, S(p, name), S(p, sys), S(p, file), line);
}

static uint32_t mapping(struct hs_profile *p, uint64_t start, uint64_t limit, uint64_t off, const char *file,
			const char *build_id)
{
	struct hs_mapping m = {start, limit, off, S(p, file), S(p, build_id), 0};

	m.kind = (uint8_t)hs_kind_guess(file, start, NULL);
	return hs_profile_mapping(p, &m);
}

/* A location whose kind is what a reader will guess back. */
static uint32_t loc(struct hs_profile *p, uint32_t m, uint64_t addr, const struct hs_line *lines, uint32_t n)
{
	const char *file = m ? hs_profile_str(p, p->mappings.v[m].file) : NULL;
	const char *fn = n ? hs_profile_str(p, p->functions.v[lines[n - 1].function].name) : NULL;

	return hs_profile_location(p, m, addr, (uint8_t)hs_kind_guess(file, addr, fn), lines, n);
}

/* Several mappings (with build-ids and offsets; a kernel and a JIT one), inline lines, a
 * location without lines, labels set and unset, two value types. */
static struct hs_profile *sample_profile(void)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t m_app, m_libc, m_kern, m_jit;
	uint32_t f_main, f_work, f_inl, f_memcpy, f_sys, f_jit, f_nofile;
	uint32_t l_main, l_work, l_libc, l_nolines, l_kern, l_jit, l_deep;
	int64_t v[2];

	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	p->period_type.type = S(p, "cpu");
	p->period_type.unit = S(p, "nanoseconds");
	p->period = 1001001;
	p->time_nanos = 1700000000123456789LL;
	p->duration_nanos = 2500000000LL;
	hs_vec_push(&p->comments, S(p, "hotstack record -F 999 ./app"));
	hs_vec_push(&p->comments, S(p, "second comment"));

	m_app = mapping(p, 0x555555554000, 0x555555600000, 0x1000, "/usr/bin/app", "0123456789abcdef0123456789abcdef01234567");
	m_libc = mapping(p, 0x7ffff7d80000, 0x7ffff7f15000, 0x28000, "/usr/lib/x86_64-linux-gnu/libc.so.6", "deadbeef");
	m_kern = mapping(p, 0xffffffff81000000, 0xffffffff83000000, 0, "[kernel.kallsyms]", NULL);
	m_jit = mapping(p, 0x7f0000000000, 0x7f0000100000, 0, "/tmp/perf-1234.map", NULL);
	assert_int_equal(p->mappings.v[m_kern].kind, HS_KIND_KERNEL);
	assert_int_equal(p->mappings.v[m_jit].kind, HS_KIND_JIT);

	f_main = func(p, "main", "main", "/src/app.c", 10);
	f_work = func(p, "work(int)", "_Z4worki", "/src/app.c", 30);
	f_inl = func(p, "helper", "helper", "/src/helper.h", 5);
	f_memcpy = func(p, "__memcpy_avx_unaligned_erms", "__memcpy_avx_unaligned_erms", NULL, 0);
	f_sys = func(p, "do_syscall_64", "do_syscall_64", NULL, 0);
	f_jit = func(p, "LInterpreted;::run", NULL, NULL, 0);
	f_nofile = func(p, "static_fn", "static_fn", NULL, -1);

	l_main = loc(p, m_app, 0x555555555100, (struct hs_line[]){{f_main, 12}}, 1);
	/* helper and memcpy inlined into work */
	l_work = loc(p, m_app, 0x555555555230, (struct hs_line[]){{f_memcpy, 0}, {f_inl, 7}, {f_work, 33}}, 3);
	l_libc = loc(p, m_libc, 0x7ffff7e01234, (struct hs_line[]){{f_nofile, 0}}, 1);
	l_nolines = loc(p, m_libc, 0x7ffff7e05678, NULL, 0);
	l_kern = loc(p, m_kern, 0xffffffff81001234, (struct hs_line[]){{f_sys, 0}}, 1);
	l_jit = loc(p, m_jit, 0x7f0000000100, (struct hs_line[]){{f_jit, 0}}, 1);
	l_deep = loc(p, m_app, 0x555555555300, (struct hs_line[]){{f_work, 40}}, 1);
	assert_int_equal(p->locations.v[l_kern].kind, HS_KIND_KERNEL);
	assert_int_equal(p->locations.v[l_jit].kind, HS_KIND_JIT);

	v[0] = 3, v[1] = 3003003;
	hs_profile_add_sample(p, hs_profile_stack(p, (uint32_t[]){l_work, l_main}, 2), S(p, "app"), 100, 101, 0, v);
	v[0] = 1, v[1] = 1001001;
	hs_profile_add_sample(p, hs_profile_stack(p, (uint32_t[]){l_kern, l_libc, l_work, l_main}, 4), S(p, "app"),
			      100, 102, 123456789012ULL, v);
	v[0] = 2, v[1] = -5; /* negative values survive (10-byte varints) */
	hs_profile_add_sample(p, hs_profile_stack(p, (uint32_t[]){l_nolines, l_deep, l_main}, 3), 0, -1, -1, 0, v);
	v[0] = 7, v[1] = 7007007;
	hs_profile_add_sample(p, hs_profile_stack(p, (uint32_t[]){l_jit, l_main}, 2), S(p, "java thread"), 200, -1, 5,
			      v);
	v[0] = 1, v[1] = 0;
	hs_profile_add_sample(p, 0, S(p, "idle"), 0, 0, 0, v); /* an empty stack, pid 0 */
	return p;
}

static void assert_str_equal(const struct hs_profile *a, uint32_t ia, const struct hs_profile *b, uint32_t ib)
{
	assert_string_equal(hs_profile_str(a, ia), hs_profile_str(b, ib));
}

/* Every table of b equals a's; b may hold extra strings (label keys) after a's. */
static void assert_profiles_equal(const struct hs_profile *a, const struct hs_profile *b)
{
	assert_true(b->str_off.n >= a->str_off.n);
	for (uint32_t i = 0; i < a->str_off.n; i++) {
		assert_int_equal(a->str_len.v[i], b->str_len.v[i]);
		assert_memory_equal(hs_profile_str(a, i), hs_profile_str(b, i), a->str_len.v[i]);
	}
	assert_int_equal(a->types.n, b->types.n);
	for (size_t i = 0; i < a->types.n; i++) {
		assert_str_equal(a, a->types.v[i].type, b, b->types.v[i].type);
		assert_str_equal(a, a->types.v[i].unit, b, b->types.v[i].unit);
	}
	assert_str_equal(a, a->period_type.type, b, b->period_type.type);
	assert_str_equal(a, a->period_type.unit, b, b->period_type.unit);
	assert_int_equal(a->period, b->period);
	assert_int_equal(a->time_nanos, b->time_nanos);
	assert_int_equal(a->duration_nanos, b->duration_nanos);
	assert_int_equal(a->comments.n, b->comments.n);
	for (size_t i = 0; i < a->comments.n; i++)
		assert_str_equal(a, a->comments.v[i], b, b->comments.v[i]);

	assert_int_equal(a->mappings.n, b->mappings.n);
	for (size_t i = 1; i < a->mappings.n; i++) {
		const struct hs_mapping *x = &a->mappings.v[i], *y = &b->mappings.v[i];
		assert_int_equal(x->start, y->start);
		assert_int_equal(x->limit, y->limit);
		assert_int_equal(x->offset, y->offset);
		assert_str_equal(a, x->file, b, y->file);
		assert_str_equal(a, x->build_id, b, y->build_id);
		assert_int_equal(x->kind, y->kind);
	}
	assert_int_equal(a->functions.n, b->functions.n);
	for (size_t i = 1; i < a->functions.n; i++) {
		const struct hs_function *x = &a->functions.v[i], *y = &b->functions.v[i];
		assert_str_equal(a, x->name, b, y->name);
		assert_str_equal(a, x->system_name, b, y->system_name);
		assert_str_equal(a, x->filename, b, y->filename);
		assert_int_equal(x->start_line, y->start_line);
	}
	assert_int_equal(a->locations.n, b->locations.n);
	for (size_t i = 1; i < a->locations.n; i++) {
		const struct hs_location *x = &a->locations.v[i], *y = &b->locations.v[i];
		assert_int_equal(x->mapping, y->mapping);
		assert_int_equal(x->address, y->address);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->nlines, y->nlines);
		for (uint32_t j = 0; j < x->nlines; j++) {
			assert_int_equal(a->lines.v[x->line0 + j].function, b->lines.v[y->line0 + j].function);
			assert_int_equal(a->lines.v[x->line0 + j].line, b->lines.v[y->line0 + j].line);
		}
	}
	assert_int_equal(a->samples.n, b->samples.n);
	for (size_t i = 0; i < a->samples.n; i++) {
		const struct hs_sample *x = &a->samples.v[i], *y = &b->samples.v[i];
		const struct hs_stack *sx = &a->stacks.v[x->stack], *sy = &b->stacks.v[y->stack];

		assert_int_equal(sx->nlocs, sy->nlocs);
		assert_memory_equal(hs_profile_stack_locs(a, x->stack), hs_profile_stack_locs(b, y->stack),
				    sx->nlocs * sizeof(uint32_t));
		assert_str_equal(a, x->comm, b, y->comm);
		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->time, y->time);
		assert_memory_equal(hs_profile_sample_values(a, (uint32_t)i), hs_profile_sample_values(b, (uint32_t)i),
				    a->types.n * sizeof(int64_t));
	}
	assert_int_equal(a->stacks.n, b->stacks.n);
}

/* ---- protobuf wire format ---- */

static void test_pb_varints(void **state)
{
	static const uint64_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t)1 << 63, UINT64_MAX};
	struct hs_pb_buf b = {0};
	struct hs_pb_reader r;
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(vals); i++)
		hs_pb_varint(&b, vals[i]);
	assert_int_equal(b.v[0], 0);
	assert_int_equal(b.v[3], 0x80); /* 128 = 80 01 */
	assert_int_equal(b.v[4], 0x01);
	hs_pb_reader_init(&r, b.v, b.n, 0, NULL);
	for (size_t i = 0; i < HS_ARRAY_SIZE(vals); i++) {
		assert_int_equal(hs_pb_read_varint(&r, &v), 1);
		assert_int_equal(v, vals[i]);
	}
	assert_int_equal(hs_pb_read_varint(&r, &v), 0);
	hs_pb_buf_release(&b);
}

static void test_pb_fields(void **state)
{
	struct hs_pb_buf b = {0};
	struct hs_pb_reader r, sub, sub2;
	struct hs_pb_field f;
	char big[300];
	size_t m, m2;

	(void)state;
	memset(big, 'x', sizeof(big));
	hs_pb_uint(&b, 1, 0); /* omitted */
	hs_pb_uint(&b, 1, 150);
	hs_pb_int(&b, 2, -2);
	m = hs_pb_begin(&b, 3); /* a sub-message longer than 127 bytes: the length takes 2 bytes */
	hs_pb_bytes(&b, 1, big, sizeof(big));
	m2 = hs_pb_begin(&b, 2);
	hs_pb_uint(&b, 5, 7);
	hs_pb_end(&b, m2);
	hs_pb_end(&b, m);
	/* an I32 and an I64 field, as another writer might put unknown fields */
	hs_pb_key(&b, 4, HS_PB_I32);
	hs_xgrow((void **)&b.v, &b.cap, b.n + 4, 1);
	memcpy(b.v + b.n, "\x01\x02\x03\x04", 4);
	b.n += 4;
	hs_pb_key(&b, 5, HS_PB_I64);
	hs_xgrow((void **)&b.v, &b.cap, b.n + 8, 1);
	memcpy(b.v + b.n, "\x01\x00\x00\x00\x00\x00\x00\x80", 8);
	b.n += 8;
	hs_pb_bytes(&b, 6, "", 0);

	/* 08 96 01 is the example of the protobuf encoding guide */
	assert_memory_equal(b.v, "\x08\x96\x01", 3);
	hs_pb_reader_init(&r, b.v, b.n, 100, NULL);
	assert_int_equal(hs_pb_next(&r, &f), 1);
	assert_int_equal(f.num, 1);
	assert_int_equal(f.wire, HS_PB_VARINT);
	assert_int_equal(f.u, 150);
	assert_int_equal(f.off, 100);
	assert_int_equal(hs_pb_next(&r, &f), 1);
	assert_int_equal(f.num, 2);
	assert_int_equal((int64_t)f.u, -2);
	assert_int_equal(hs_pb_next(&r, &f), 1);
	assert_int_equal(f.num, 3);
	assert_int_equal(f.wire, HS_PB_LEN);
	assert_int_equal(f.len, 3 + 300 + 4);
	hs_pb_reader_sub(&sub, &r, &f);
	assert_int_equal(sub.base, 100 + f.data - b.v);
	assert_int_equal(hs_pb_next(&sub, &f), 1);
	assert_int_equal(f.len, 300);
	assert_memory_equal(f.data, big, 300);
	assert_int_equal(hs_pb_next(&sub, &f), 1);
	hs_pb_reader_sub(&sub2, &sub, &f);
	assert_int_equal(hs_pb_next(&sub2, &f), 1);
	assert_int_equal(f.num, 5);
	assert_int_equal(f.u, 7);
	assert_int_equal(hs_pb_next(&sub2, &f), 0);
	assert_int_equal(hs_pb_next(&sub, &f), 0);
	assert_int_equal(hs_pb_next(&r, &f), 1);
	assert_int_equal(f.wire, HS_PB_I32);
	assert_int_equal(f.u, 0x04030201);
	assert_int_equal(hs_pb_next(&r, &f), 1);
	assert_int_equal(f.wire, HS_PB_I64);
	assert_int_equal(f.u, 0x8000000000000001ULL);
	assert_int_equal(hs_pb_next(&r, &f), 1);
	assert_int_equal(f.num, 6);
	assert_int_equal(f.len, 0);
	assert_int_equal(hs_pb_next(&r, &f), 0);
	hs_pb_buf_release(&b);
}

static int pb_first_error(const void *buf, size_t len, struct hs_error *err)
{
	struct hs_pb_reader r;
	struct hs_pb_field f;
	int e;

	memset(err, 0, sizeof(*err));
	hs_pb_reader_init(&r, buf, len, 0, err);
	while ((e = hs_pb_next(&r, &f)) > 0)
		;
	return e;
}

static void test_pb_malformed(void **state)
{
	struct hs_error err;

	(void)state;
	/* 11-byte varint */
	assert_int_equal(pb_first_error("\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12, &err), -EBADMSG);
	assert_int_equal(err.offset, 1);
	/* tenth byte with more than bit 63 */
	assert_int_equal(pb_first_error("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11, &err), -EBADMSG);
	assert_int_equal(pb_first_error("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, &err), 0);
	/* varint cut short */
	assert_int_equal(pb_first_error("\x08\x01\x08\x80", 4, &err), -EBADMSG);
	assert_int_equal(err.offset, 3);
	/* length past the end, and a huge one */
	assert_int_equal(pb_first_error("\x0a\x05" "abc", 5, &err), -EBADMSG);
	assert_int_equal(err.offset, 0);
	assert_int_equal(pb_first_error("\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7f" "abc", 13, &err), -EBADMSG);
	/* groups (3, 4) and wire types 6, 7 */
	assert_int_equal(pb_first_error("\x08\x01\x0b", 3, &err), -EBADMSG);
	assert_int_equal(err.offset, 2);
	assert_non_null(strstr(err.detail, "wire type 3"));
	assert_int_equal(pb_first_error("\x0c", 1, &err), -EBADMSG);
	assert_int_equal(pb_first_error("\x0e", 1, &err), -EBADMSG);
	assert_int_equal(pb_first_error("\x0f", 1, &err), -EBADMSG);
	/* field number 0 */
	assert_int_equal(pb_first_error("\x00\x01", 2, &err), -EBADMSG);
	/* fixed fields cut short */
	assert_int_equal(pb_first_error("\x0d\x01\x02", 3, &err), -EBADMSG);
	assert_int_equal(pb_first_error("\x09\x01\x02\x03\x04\x05\x06\x07", 8, &err), -EBADMSG);
	/* the empty message is fine */
	assert_int_equal(pb_first_error("", 0, &err), 0);
}

/* ---- writer and reader ---- */

static void test_roundtrip(void **state)
{
	struct hs_profile *p = sample_profile(), *q = NULL, *q2 = NULL;
	struct hs_error err = {0};
	size_t len, len2;
	uint8_t *buf = hs_test_write_pprof(p, &len), *buf2;

	(void)state;
	assert_true(len > 20);
	assert_int_equal(buf[0], 0x1f);
	assert_int_equal(buf[1], 0x8b);
	assert_true(hs_pprof_probe(buf, len));
	assert_int_equal(hs_pprof_read(buf, len, &q, &err), 0);
	assert_string_equal(err.detail, "");
	assert_profiles_equal(p, q);

	/* once more: a profile read back writes the same profile */
	buf2 = hs_test_write_pprof(q, &len2);
	assert_int_equal(hs_pprof_read(buf2, len2, &q2, &err), 0);
	assert_profiles_equal(p, q2);

	free(buf);
	free(buf2);
	hs_profile_free(p);
	hs_profile_free(q);
	hs_profile_free(q2);
}

/* A profile read back writes the very same bytes: nothing is lost or added on the way, the
 * label keys the writer adds included (they are in the profile read back). */
static void test_roundtrip_bytes(void **state)
{
	struct hs_profile *p = sample_profile(), *q = NULL, *q2 = NULL;
	struct hs_error err = {0};
	size_t len, len2, len3, raw_len, raw_len2, raw_len3;
	uint8_t *buf = hs_test_write_pprof(p, &len), *buf2, *buf3, *raw, *raw2, *raw3;

	(void)state;
	assert_int_equal(hs_pprof_read(buf, len, &q, &err), 0);
	buf2 = hs_test_write_pprof(q, &len2);
	assert_int_equal(hs_pprof_read(buf2, len2, &q2, &err), 0);
	buf3 = hs_test_write_pprof(q2, &len3);
	raw = hs_test_gunzip(buf, len, &raw_len);
	raw2 = hs_test_gunzip(buf2, len2, &raw_len2);
	raw3 = hs_test_gunzip(buf3, len3, &raw_len3);
	assert_int_equal(raw_len, raw_len2);
	assert_memory_equal(raw, raw2, raw_len);
	assert_int_equal(raw_len, raw_len3);
	assert_memory_equal(raw, raw3, raw_len);
	assert_int_equal(q->str_off.n, q2->str_off.n);
	free(buf);
	free(buf2);
	free(buf3);
	free(raw);
	free(raw2);
	free(raw3);
	hs_profile_free(p);
	hs_profile_free(q);
	hs_profile_free(q2);
}

/* The main binary is pprof's first mapping and is written at its file's own addresses (what go
 * tool pprof -disasm looks up): the kernel, sampled first, and a library come after it; one PIE
 * loaded at two places by two processes becomes one mapping whose locations are shared. The file
 * read back writes the same bytes. */
static void test_main_first(void **state)
{
	struct hs_profile *p = hs_profile_new(), *q = NULL, *q2 = NULL;
	struct hs_error err = {0};
	struct hs_mapping app = {0x555555555000, 0x555555556000, 0x1000, 0, 0, HS_KIND_USER, 0x555555554000};
	struct hs_mapping app2 = {0x566666667000, 0x566666668000, 0x1000, 0, 0, HS_KIND_USER, 0x566666666000};
	uint32_t m_kern, m_libc, m_app, m_app2, l_kern, l_libc, l_a, l_b, f_hot, f_sys, f_memcpy;
	size_t len, len2, raw_len, raw_len2;
	uint8_t *buf, *buf2, *raw, *raw2;
	int64_t v = 1;

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	m_kern = mapping(p, 0xffff800000000000, UINT64_MAX, 0, "[kernel.kallsyms]", NULL);
	m_libc = mapping(p, 0x7ffff7d80000, 0x7ffff7f15000, 0x28000, "/usr/lib/libc.so.6", "deadbeef");
	app.file = app2.file = S(p, "/usr/bin/app");
	app.build_id = app2.build_id = S(p, "0123");
	m_app = hs_profile_mapping(p, &app);
	m_app2 = hs_profile_mapping(p, &app2);
	assert_int_not_equal(m_app, m_app2);
	f_hot = func(p, "hot", "hot", "/src/app.c", 3);
	f_sys = func(p, "do_syscall_64", "do_syscall_64", NULL, 0);
	f_memcpy = func(p, "memcpy", "memcpy", NULL, 0);
	l_kern = loc(p, m_kern, 0xffffffff81001234, (struct hs_line[]){{f_sys, 0}}, 1);
	l_libc = loc(p, m_libc, 0x7ffff7e01234, (struct hs_line[]){{f_memcpy, 0}}, 1);
	l_a = loc(p, m_app, 0x555555555180, (struct hs_line[]){{f_hot, 4}}, 1);
	l_b = loc(p, m_app2, 0x566666667180, (struct hs_line[]){{f_hot, 4}}, 1);
	hs_profile_add_sample(p, hs_profile_stack(p, (uint32_t[]){l_kern}, 1), S(p, "app"), 7, 7, 0, &v);
	hs_profile_add_sample(p, hs_profile_stack(p, (uint32_t[]){l_libc, l_a}, 2), S(p, "app"), 7, 7, 0, &v);
	hs_profile_add_sample(p, hs_profile_stack(p, (uint32_t[]){l_b}, 1), S(p, "app"), 8, 8, 0, &v);

	/* without a main binary known, the first user code from a file; the kernel only when
	 * there is nothing else */
	assert_int_equal(hs_profile_main_mapping(p), m_libc);
	p->main_mapping = m_app2;
	assert_int_equal(hs_profile_main_mapping(p), m_app2);

	buf = hs_test_write_pprof(p, &len);
	assert_int_equal(hs_pprof_read(buf, len, &q, &err), 0);
	assert_int_equal(q->main_mapping, 1);
	assert_int_equal(q->mappings.n, 4); /* the two of the app made one */
	assert_string_equal(hs_profile_str(q, q->mappings.v[1].file), "/usr/bin/app");
	assert_int_equal(q->mappings.v[1].start, 0x1000);
	assert_int_equal(q->mappings.v[1].limit, 0x2000);
	assert_int_equal(q->mappings.v[1].offset, 0x1000);
	assert_string_equal(hs_profile_str(q, q->mappings.v[2].file), "[kernel.kallsyms]");
	assert_int_equal(q->mappings.v[2].start, 0xffff800000000000);
	assert_int_equal(q->mappings.v[3].start, 0x7ffff7d80000);
	assert_int_equal(q->locations.n, 4); /* kernel, libc, one for hot */
	for (size_t i = 1; i < q->locations.n; i++)
		if (q->locations.v[i].mapping == 1)
			assert_int_equal(q->locations.v[i].address, 0x1180);
	assert_int_equal(q->samples.n, 3);
	assert_int_equal(q->samples.v[2].pid, 8);

	buf2 = hs_test_write_pprof(q, &len2);
	assert_int_equal(hs_pprof_read(buf2, len2, &q2, &err), 0);
	raw = hs_test_gunzip(buf, len, &raw_len);
	raw2 = hs_test_gunzip(buf2, len2, &raw_len2);
	assert_int_equal(raw_len, raw_len2);
	assert_memory_equal(raw, raw2, raw_len);

	/* a kernel-only profile keeps the kernel first */
	hs_profile_free(q2);
	q2 = hs_profile_new();
	mapping(q2, 0xffff800000000000, UINT64_MAX, 0, "[kernel.kallsyms]", NULL);
	assert_int_equal(hs_profile_main_mapping(q2), 1);
	free(buf);
	free(buf2);
	free(raw);
	free(raw2);
	hs_profile_free(p);
	hs_profile_free(q);
	hs_profile_free(q2);
}

static void test_raw_protobuf(void **state)
{
	struct hs_profile *p = sample_profile(), *q = NULL;
	struct hs_error err = {0};
	size_t len, rlen;
	uint8_t *buf = hs_test_write_pprof(p, &len), *raw = hs_test_gunzip(buf, len, &rlen);

	(void)state;
	assert_true(hs_pprof_probe(raw, rlen));
	assert_int_equal(hs_pprof_read(raw, rlen, &q, &err), 0);
	assert_profiles_equal(p, q);
	free(buf);
	free(raw);
	hs_profile_free(p);
	hs_profile_free(q);
}

/* Kinds pprof cannot store survive through the placeholder mappings the writer adds for
 * kernel and JIT frames that have none (as profiles read from folded text have). */
static void test_kinds_without_mappings(void **state)
{
	struct hs_profile *p = hs_profile_new(), *q = NULL;
	struct hs_error err = {0};
	uint32_t fk = func(p, "do_syscall_64", NULL, NULL, 0), fj = func(p, "Interpreter", NULL, NULL, 0);
	uint32_t fu = func(p, "main", NULL, NULL, 0), fp = func(p, "[unknown]", NULL, NULL, 0);
	uint32_t lk = hs_profile_location(p, 0, 0, HS_KIND_KERNEL, &(struct hs_line){fk, 0}, 1);
	uint32_t lj = hs_profile_location(p, 0, 0, HS_KIND_JIT, &(struct hs_line){fj, 0}, 1);
	uint32_t lu = hs_profile_location(p, 0, 0, HS_KIND_USER, &(struct hs_line){fu, 0}, 1);
	uint32_t lp = hs_profile_location(p, 0, 0, HS_KIND_PSEUDO, &(struct hs_line){fp, 0}, 1);
	int64_t one = 1;
	size_t len;
	uint8_t *buf;

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_sample(p, hs_profile_stack(p, (uint32_t[]){lk, lj, lp, lu}, 4), S(p, "x"), -1, -1, 0, &one);
	buf = hs_test_write_pprof(p, &len);
	assert_int_equal(hs_pprof_read(buf, len, &q, &err), 0);
	assert_int_equal(q->locations.n, 5);
	assert_int_equal(q->locations.v[lk].kind, HS_KIND_KERNEL);
	assert_int_equal(q->locations.v[lj].kind, HS_KIND_JIT);
	assert_int_equal(q->locations.v[lu].kind, HS_KIND_USER);
	assert_int_equal(q->locations.v[lp].kind, HS_KIND_PSEUDO);
	assert_int_equal(q->locations.v[lu].mapping, 0);
	assert_int_equal(q->locations.v[lp].mapping, 0);
	assert_string_equal(hs_profile_str(q, q->mappings.v[q->locations.v[lk].mapping].file), "[kernel.kallsyms]");
	assert_string_equal(hs_profile_str(q, q->mappings.v[q->locations.v[lj].mapping].file), "[jit]");
	assert_int_equal(hs_profile_total(q, 0), 1);
	free(buf);
	hs_profile_free(p);
	hs_profile_free(q);
}

static const int documented[] = {-EBADMSG, -ENODATA, -EOVERFLOW};

static void assert_read_fails_cleanly(const void *buf, size_t len, bool may_succeed)
{
	struct hs_profile *q = NULL;
	struct hs_error err = {0};
	int e = hs_pprof_read(buf, len, &q, &err);
	bool ok = false;

	if (e == 0) {
		assert_true(may_succeed);
		assert_non_null(q);
		hs_profile_free(q);
		return;
	}
	assert_null(q);
	for (size_t i = 0; i < HS_ARRAY_SIZE(documented); i++)
		ok |= e == documented[i];
	if (!ok)
		fail_msg("unexpected error %d for a %zu-byte input", e, len);
	assert_true(err.detail[0] != '\0');
	assert_true(err.offset <= (uint64_t)1 << 32);
}

static void test_every_prefix(void **state)
{
	struct hs_profile *p = sample_profile();
	size_t len, rlen;
	uint8_t *buf = hs_test_write_pprof(p, &len), *raw = hs_test_gunzip(buf, len, &rlen);

	(void)state;
	/* every prefix of a gzip file misses part of the stream or its trailer */
	for (size_t n = 0; n < len; n++) {
		uint8_t *copy = malloc(n ? n : 1); /* exact size, so ASan sees any over-read */
		memcpy(copy, buf, n);
		assert_read_fails_cleanly(copy, n, false);
		free(copy);
	}
	/* a raw prefix that ends between two fields is a valid message; it must never crash, and
	 * while the string table is incomplete it is an error */
	for (size_t n = 0; n < rlen; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, raw, n);
		assert_read_fails_cleanly(copy, n, true);
		assert_true(hs_pprof_probe(copy, n) == (n > 0));
		free(copy);
	}
	free(buf);
	free(raw);
	hs_profile_free(p);
}

static void test_garbage(void **state)
{
	struct hs_profile *p = sample_profile();
	size_t len, rlen;
	uint8_t *buf = hs_test_write_pprof(p, &len), *raw = hs_test_gunzip(buf, len, &rlen);
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int round = 0; round < 5000; round++) {
		size_t n;
		uint8_t *b;

		seed = hs_hash_u64(seed + (uint64_t)round);
		if (round % 3 == 0) {
			/* random bytes */
			n = seed % 512;
			b = malloc(n ? n : 1);
			for (size_t i = 0; i < n; i++)
				b[i] = (uint8_t)hs_hash_u64(seed + i);
		} else {
			/* a valid profile (raw, or gzip) with a few bytes changed */
			const uint8_t *src = round % 3 == 1 ? raw : buf;
			n = round % 3 == 1 ? rlen : len;
			b = malloc(n);
			memcpy(b, src, n);
			for (int k = 0; k < 1 + (int)(seed % 4); k++) {
				uint64_t h = hs_hash_u64(seed + (uint64_t)k);
				b[h % n] = (uint8_t)(h >> 32);
			}
		}
		assert_read_fails_cleanly(b, n, true);
		free(b);
	}
	free(buf);
	free(raw);
	hs_profile_free(p);
}

/* A minimal valid raw profile, which each hostile case below changes in one way. */
static void begin_profile(struct hs_pb_buf *b, int nstrings)
{
	static const char *const strs[] = {"", "samples", "count", "f"};
	size_t m;

	for (int i = 0; i < nstrings && i < 4; i++)
		hs_pb_bytes(b, 6, strs[i], strlen(strs[i]));
	m = hs_pb_begin(b, 1);
	hs_pb_uint(b, 1, 1);
	hs_pb_uint(b, 2, 2);
	hs_pb_end(b, m);
}

static void add_function(struct hs_pb_buf *b, uint64_t id)
{
	size_t m = hs_pb_begin(b, 5);
	hs_pb_uint(b, 1, id);
	hs_pb_uint(b, 2, 3);
	hs_pb_end(b, m);
}

static void add_location(struct hs_pb_buf *b, uint64_t id, uint64_t mapping, uint64_t func_id, unsigned nlines)
{
	size_t m = hs_pb_begin(b, 4);
	hs_pb_uint(b, 1, id);
	hs_pb_uint(b, 2, mapping);
	for (unsigned i = 0; i < nlines; i++) {
		size_t k = hs_pb_begin(b, 4);
		hs_pb_uint(b, 1, func_id);
		hs_pb_end(b, k);
	}
	hs_pb_end(b, m);
}

static void add_sample(struct hs_pb_buf *b, uint64_t loc_id, int nvalues)
{
	size_t m = hs_pb_begin(b, 2), k;
	hs_pb_key(b, 1, HS_PB_VARINT); /* unpacked, as old writers do; 0 too */
	hs_pb_varint(b, loc_id);
	k = hs_pb_begin(b, 2);
	for (int i = 0; i < nvalues; i++)
		hs_pb_varint(b, 1);
	hs_pb_end(b, k);
	hs_pb_end(b, m);
}

static int read_raw(struct hs_pb_buf *b, struct hs_profile **q, struct hs_error *err)
{
	int e;

	memset(err, 0, sizeof(*err));
	*q = NULL;
	e = hs_pprof_read(b->v, b->n, q, err);
	hs_pb_buf_release(b);
	return e;
}

static void test_hostile(void **state)
{
	struct hs_pb_buf b = {0};
	struct hs_profile *q;
	struct hs_error err;

	(void)state;
	/* the base case reads, with ids far from dense */
	begin_profile(&b, 4);
	add_function(&b, 0x7fffffffffffffffULL);
	add_location(&b, 1ULL << 40, 0, 0x7fffffffffffffffULL, 1);
	add_sample(&b, 1ULL << 40, 1);
	add_sample(&b, 1ULL << 40, 1);
	/* fields this reader does not know are skipped, whatever their wire type */
	hs_pb_bytes(&b, 100, "zz", 2);
	hs_pb_uint(&b, 15, 3);
	hs_pb_key(&b, 101, HS_PB_I64);
	hs_xgrow((void **)&b.v, &b.cap, b.n + 8, 1);
	memset(b.v + b.n, 0xff, 8);
	b.n += 8;
	assert_int_equal(read_raw(&b, &q, &err), 0);
	assert_string_equal(err.detail, "");
	assert_int_equal(q->samples.n, 1);
	assert_int_equal(hs_profile_total(q, 0), 2);
	assert_string_equal(hs_profile_location_name(q, hs_profile_stack_locs(q, q->samples.v[0].stack)[0]), "f");
	hs_profile_free(q);

	/* no string table, or one not starting with "" */
	begin_profile(&b, 0);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	assert_null(q);
	hs_pb_bytes(&b, 6, "x", 1);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	/* string index out of range */
	begin_profile(&b, 2);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	assert_non_null(strstr(err.detail, "string index 2"));
	/* a sample referring to a location that does not exist */
	begin_profile(&b, 4);
	add_sample(&b, 5, 1);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	assert_non_null(strstr(err.detail, "location"));
	/* location id 0 in a sample */
	begin_profile(&b, 4);
	add_sample(&b, 0, 1);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	/* a line referring to a function that does not exist, a location to a missing mapping */
	begin_profile(&b, 4);
	add_location(&b, 1, 0, 9, 1);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	begin_profile(&b, 4);
	add_location(&b, 1, 3, 0, 0);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	/* duplicate and zero ids */
	begin_profile(&b, 4);
	add_function(&b, 2);
	add_function(&b, 2);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	assert_non_null(strstr(err.detail, "duplicate"));
	begin_profile(&b, 4);
	add_function(&b, 0);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	/* value count differs from the sample types */
	begin_profile(&b, 4);
	add_location(&b, 1, 0, 0, 0);
	add_sample(&b, 1, 2);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	begin_profile(&b, 4);
	add_location(&b, 1, 0, 0, 0);
	add_sample(&b, 1, 0);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	/* a sample in a profile without sample types (found by fuzz-pprof) */
	hs_pb_bytes(&b, 6, "", 0);
	hs_pb_end(&b, hs_pb_begin(&b, 2));
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	assert_non_null(strstr(err.detail, "without sample types"));
	/* a field with the wrong wire type */
	begin_profile(&b, 4);
	hs_pb_bytes(&b, 12, "x", 1);
	assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
	/* over the caps */
	begin_profile(&b, 4);
	for (unsigned i = 0; i < HS_PPROF_MAX_TYPES; i++) {
		size_t m = hs_pb_begin(&b, 1);
		hs_pb_uint(&b, 1, 1);
		hs_pb_end(&b, m);
	}
	assert_int_equal(read_raw(&b, &q, &err), -EOVERFLOW);
	begin_profile(&b, 4);
	add_function(&b, 1);
	add_location(&b, 1, 0, 1, HS_PPROF_MAX_LINES + 1);
	assert_int_equal(read_raw(&b, &q, &err), -EOVERFLOW);
	begin_profile(&b, 4);
	add_function(&b, 1);
	add_location(&b, 1, 0, 1, 0);
	{
		size_t m = hs_pb_begin(&b, 2), k = hs_pb_begin(&b, 1);
		for (unsigned i = 0; i <= HS_PPROF_MAX_DEPTH; i++)
			hs_pb_varint(&b, 1);
		hs_pb_end(&b, k);
		hs_pb_end(&b, m);
	}
	assert_int_equal(read_raw(&b, &q, &err), -EOVERFLOW);
	/* a huge length inside a sub-message is reported at its offset */
	begin_profile(&b, 4);
	{
		size_t at = b.n, m = hs_pb_begin(&b, 5);
		hs_pb_key(&b, 2, HS_PB_LEN);
		hs_pb_varint(&b, UINT64_MAX >> 1);
		hs_pb_end(&b, m);
		assert_int_equal(read_raw(&b, &q, &err), -EBADMSG);
		assert_int_equal(err.offset, at + 2);
	}
	/* gzip magic with garbage behind it, and an empty gzip stream */
	assert_true(hs_pprof_read("\x1f\x8b\x08\x00garbage-garbage", 19, &q, &err) < 0);
	{
		size_t n;
		uint8_t gz[64];
		z_stream z = {0};
		assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
		z.next_out = gz;
		z.avail_out = (uInt)sizeof(gz);
		assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
		n = z.total_out;
		deflateEnd(&z);
		memset(&err, 0, sizeof(err));
		assert_int_equal(hs_pprof_read(gz, n, &q, &err), -EBADMSG); /* no string table */
		assert_non_null(strstr(err.detail, "decompressed"));
		assert_int_equal(hs_pprof_read(gz, n - 1, &q, &err), -ENODATA);
	}
}

static void test_probe(void **state)
{
	(void)state;
	assert_true(hs_pprof_probe("\x1f\x8b", 2));
	assert_false(hs_pprof_probe("main;foo;bar 12\n", 16));
	assert_false(hs_pprof_probe("PERFILE2", 8));
	assert_false(hs_pprof_probe("# ========\n", 11));
	assert_false(hs_pprof_probe("", 0));
}

/* ---- a profile written by Go's runtime/pprof (tests/fixtures/pprof-go/README) ---- */

static void test_go_fixture(void **state)
{
	struct hs_profile *q = NULL;
	struct hs_error err = {0};
	size_t len;
	char *buf = hs_test_read_file(SRCDIR "/tests/fixtures/pprof-go/cpu.pb.gz", &len);
	int64_t flat_a = 0, flat_b = 0, leaf_step = 0;
	bool inlined = false;

	(void)state;
	assert_true(hs_pprof_probe(buf, len));
	assert_int_equal(hs_pprof_read(buf, len, &q, &err), 0);
	assert_int_equal(q->types.n, 2);
	assert_string_equal(hs_profile_str(q, q->types.v[0].type), "samples");
	assert_string_equal(hs_profile_str(q, q->types.v[0].unit), "count");
	assert_string_equal(hs_profile_str(q, q->types.v[1].type), "cpu");
	assert_string_equal(hs_profile_str(q, q->types.v[1].unit), "nanoseconds");
	assert_string_equal(hs_profile_str(q, q->period_type.type), "cpu");
	assert_int_equal(q->period, 10000000);
	assert_true(q->time_nanos > 0);
	assert_true(q->duration_nanos > 0);
	assert_int_equal(hs_profile_total(q, 0), 50);
	assert_int_equal(hs_profile_total(q, 1), 500000000);
	assert_int_equal(q->mappings.n, 4); /* the program, [vdso], [vsyscall] */
	assert_string_equal(hs_profile_str(q, q->mappings.v[1].file), "/tmp/gofix/burn");
	assert_string_equal(hs_profile_str(q, q->mappings.v[2].file), "[vdso]");
	assert_int_equal(q->mappings.v[1].start, 0x400000);
	assert_int_equal(q->mappings.v[1].kind, HS_KIND_USER);
	assert_int_equal(q->locations.n, 13);

	for (size_t i = 0; i < q->samples.n; i++) {
		const struct hs_sample *s = &q->samples.v[i];
		const uint32_t *locs = hs_profile_stack_locs(q, s->stack);
		const struct hs_location *leaf = &q->locations.v[locs[0]];
		const char *name = hs_profile_location_name(q, locs[0]);
		int64_t v = hs_profile_sample_values(q, (uint32_t)i)[0];

		assert_true(q->stacks.v[s->stack].nlocs >= 2);
		assert_string_equal(hs_profile_location_name(q, locs[q->stacks.v[s->stack].nlocs - 1]), "runtime.main");
		assert_int_equal(leaf->kind, HS_KIND_USER);
		assert_int_equal(leaf->mapping, 1);
		if (!strcmp(name, "main.burnA"))
			flat_a += v;
		else if (!strcmp(name, "main.burnB"))
			flat_b += v;
		else
			fail_msg("unexpected leaf %s", name);
		if (leaf->nlines == 2) {
			const struct hs_line *ln = &q->lines.v[leaf->line0];
			assert_string_equal(hs_profile_str(q, q->functions.v[ln[0].function].name), "main.step");
			assert_string_equal(hs_profile_str(q, q->functions.v[ln[0].function].filename), "./main.go");
			assert_int_equal(ln[0].line, 14);
			assert_int_equal(ln[1].line, 21);
			leaf_step += v;
			inlined = true;
		}
	}
	assert_int_equal(flat_a, 18);
	assert_int_equal(flat_b, 32);
	assert_int_equal(leaf_step, 13);
	assert_true(inlined);
	assert_int_equal(q->samples.v[0].pid, -1);

	/* and what we write from it reads back the same */
	{
		size_t len2;
		uint8_t *buf2 = hs_test_write_pprof(q, &len2);
		struct hs_profile *q2 = NULL;
		assert_int_equal(hs_pprof_read(buf2, len2, &q2, &err), 0);
		assert_profiles_equal(q, q2);
		hs_profile_free(q2);
		free(buf2);
	}
	hs_profile_free(q);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pb_varints),
		cmocka_unit_test(test_pb_fields),
		cmocka_unit_test(test_pb_malformed),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_roundtrip_bytes),
		cmocka_unit_test(test_main_first),
		cmocka_unit_test(test_raw_protobuf),
		cmocka_unit_test(test_kinds_without_mappings),
		cmocka_unit_test(test_every_prefix),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_go_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
