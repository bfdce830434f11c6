/* Unit tests for the perf.data reader: files built here byte by byte (header, attributes,
 * records, features), pipe mode, several events, zstd-compressed records that split a record,
 * byte order, every prefix of a file, corrupt sizes; and real files recorded by perf
 * (tests/fixtures/perf-data/, commands in its README) cut at many offsets. Also LBR call stacks
 * decoded from synthetic samples; MMAP2 records whose build-id bit their event did not ask for. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zstd.h>

#include <cmocka.h>

#include "format/perf-data.h"
#include "profile/builder.h"
#include "profile/load.h"
#include "profile/perf-data-load.h"

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void set64(struct buf *b, size_t off, uint64_t v)
{
	memcpy(b->p + off, &v, 8);
}

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* A sample record of the layout ST. */
static void put_sample(struct buf *b, uint64_t id, uint64_t ip, uint32_t pid, uint64_t time)
{
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 8 * 8};
	put(b, &h, 8);
	put64(b, id);
	put64(b, ip);
	put32(b, pid);
	put32(b, pid);
	put64(b, time);
	put64(b, 1000);
	put64(b, 2);
	put64(b, PERF_CONTEXT_USER);
	put64(b, ip);
}

static void put_comm(struct buf *b, uint32_t pid, const char *comm, uint64_t id, uint64_t time)
{
	char name[16] = {0};
	struct perf_event_header h = {PERF_RECORD_COMM, 0, 8 + 8 + 16 + 24};

	snprintf(name, sizeof(name), "%s", comm);
	put(b, &h, 8);
	put32(b, pid);
	put32(b, pid);
	put(b, name, 16);
	/* sample_id: TID, TIME, IDENTIFIER */
	put32(b, pid);
	put32(b, pid);
	put64(b, time);
	put64(b, id);
}

static void put_attr(struct buf *b, uint32_t type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = sizeof(a);
	a.config = config;
	a.sample_type = ST;
	a.sample_id_all = 1;
	put(b, &a, sizeof(a));
}

/* A file with two events (ids 11 and 22), a COMM and three samples, and features: build-id,
 * cmdline, osrelease. */
static struct buf make_file(void)
{
	struct buf b = {0};
	size_t attrs, ids, data, feat;
	uint64_t features[4] = {(1ULL << HS_FEAT_BUILD_ID) | (1ULL << HS_FEAT_OSRELEASE) | (1ULL << HS_FEAT_CMDLINE), 0, 0, 0};

	put(&b, "PERFILE2", 8);
	put64(&b, 104);
	put64(&b, sizeof(struct perf_event_attr) + 16);
	for (int i = 0; i < 6; i++)
		put64(&b, 0); /* sections, patched below */
	put(&b, features, sizeof(features));
	ids = b.n;
	put64(&b, 11);
	put64(&b, 22);
	attrs = b.n;
	put_attr(&b, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	put64(&b, ids);
	put64(&b, 8);
	put_attr(&b, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	put64(&b, ids + 8);
	put64(&b, 8);
	data = b.n;
	put_comm(&b, 42, "worker", 11, 100);
	put_sample(&b, 22, 0x401000, 42, 300); /* out of order before the round ends */
	put_sample(&b, 11, 0x402000, 42, 200);
	{
		struct perf_event_header fr = {HS_PERF_RECORD_FINISHED_ROUND, 0, 8};
		put(&b, &fr, 8);
	}
	put_sample(&b, 11, 0x403000, 42, 400);
	feat = b.n;
	set64(&b, 24, attrs);
	set64(&b, 32, 2 * (sizeof(struct perf_event_attr) + 16));
	set64(&b, 40, data);
	set64(&b, 48, feat - data);
	/* feature sections in bit order: BUILD_ID (2), OSRELEASE (4), CMDLINE (11) */
	{
		size_t desc = b.n, bid, osr, cmd;
		for (int i = 0; i < 6; i++)
			put64(&b, 0);
		bid = b.n;
		{
			struct perf_event_header h = {PERF_RECORD_MISC_USER, 0, 8 + 4 + 24 + 16};
			uint8_t id[24] = {0xde, 0xad, 0xbe, 0xef};
			char name[16] = "/bin/worker";
			h.type = 0;
			put(&b, &h, 8);
			put32(&b, 42);
			put(&b, id, 24);
			put(&b, name, 16);
		}
		osr = b.n;
		put32(&b, 8);
		put(&b, "6.0.0-x\0", 8);
		cmd = b.n;
		put32(&b, 2);
		put32(&b, 8);
		put(&b, "perf\0\0\0\0", 8);
		put32(&b, 8);
		put(&b, "record\0\0", 8);
		set64(&b, desc, bid);
		set64(&b, desc + 8, osr - bid);
		set64(&b, desc + 16, osr);
		set64(&b, desc + 24, cmd - osr);
		set64(&b, desc + 32, cmd);
		set64(&b, desc + 40, b.n - cmd);
	}
	return b;
}

static void test_file(void **state)
{
	struct buf b = make_file();
	struct hs_perf_data d;
	struct hs_error err = {0};
	struct hs_perf_data_rec r;
	int n = 0, samples = 0;

	(void)state;
	assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), 0);
	assert_false(d.pipe);
	assert_int_equal(d.attrs.n, 2);
	assert_string_equal(d.attrs.v[0].name, "cpu-clock");
	assert_string_equal(d.attrs.v[1].name, "page-faults");
	assert_string_equal(d.osrelease, "6.0.0-x");
	assert_string_equal(d.cmdline, "perf record");
	assert_int_equal(d.build_ids.n, 1);
	assert_string_equal(d.build_ids.v[0].filename, "/bin/worker");
	assert_int_equal(d.build_ids.v[0].build_id[0], 0xde);
	while (hs_perf_data_next(&d, &r, &err) == 1) {
		n++;
		if (r.h->type == PERF_RECORD_SAMPLE) {
			/* the id tells the event */
			uint64_t id;
			memcpy(&id, (const uint8_t *)r.h + 8, 8);
			assert_int_equal(r.attr, id == 22 ? 1 : 0);
			samples++;
		}
	}
	assert_int_equal(n, 5);
	assert_int_equal(samples, 3);
	assert_false(d.truncated);
	hs_perf_data_close(&d);
	free(b.p);
}

static void test_load_profile(void **state)
{
	struct buf b = make_file();
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	struct hs_perf_data_load_info info;
	struct hs_perf_data_load_opts o = {true, false};

	(void)state;
	assert_int_equal(hs_perf_data_load(b.p, b.n, &o, &p, &info, &err), 0);
	/* samples, then one value per event */
	assert_int_equal(p->types.n, 3);
	assert_string_equal(hs_profile_str(p, p->types.v[1].type), "cpu");
	assert_string_equal(hs_profile_str(p, p->types.v[2].type), "page-faults");
	assert_int_equal(info.samples, 3);
	assert_int_equal(hs_profile_total(p, 0), 3);
	assert_int_equal(hs_profile_total(p, 1), 2000);
	assert_int_equal(hs_profile_total(p, 2), 1000);
	/* time order across the round: 200, 300, 400; the comm applies to every sample */
	assert_int_equal(p->samples.n, 3);
	assert_int_equal(p->samples.v[0].time, 200);
	assert_int_equal(p->samples.v[1].time, 300);
	assert_string_equal(hs_profile_str(p, p->samples.v[2].comm), "worker");
	hs_perf_data_load_info_release(&info);
	hs_profile_free(p);
	free(b.p);
}

/* Every prefix: never a crash; the records before the cut come out, and a cut inside the data
 * section is reported as such. */
static void test_every_prefix(void **state)
{
	struct buf b = make_file();
	size_t data_off;

	(void)state;
	memcpy(&data_off, b.p + 40, 8);
	for (size_t cut = 0; cut <= b.n; cut++) {
		struct hs_perf_data d;
		struct hs_error err = {0};
		struct hs_perf_data_rec r;
		uint8_t *copy = malloc(cut ? cut : 1);
		int rc, n = 0;

		memcpy(copy, b.p, cut);
		rc = hs_perf_data_open(&d, copy, cut, &err);
		if (rc == 0) {
			while ((rc = hs_perf_data_next(&d, &r, &err)) == 1)
				n++;
			assert_true(rc == 0);
			if (cut > data_off && cut < data_off + 5 * 8)
				assert_true(d.truncated);
		} else {
			assert_true(rc == -EBADMSG || rc == -ENODATA);
			assert_true(err.detail[0] != '\0');
		}
		hs_perf_data_close(&d);
		free(copy);
	}
	free(b.p);
}

static void test_corrupt_size(void **state)
{
	struct buf b = make_file();
	struct hs_perf_data d;
	struct hs_error err = {0};
	struct hs_perf_data_rec r;
	size_t data_off;
	uint16_t bad = 4;
	int rc;

	(void)state;
	memcpy(&data_off, b.p + 40, 8);
	memcpy(b.p + data_off + 6, &bad, 2); /* the first record claims 4 bytes */
	assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), 0);
	rc = hs_perf_data_next(&d, &r, &err);
	assert_int_equal(rc, -EBADMSG);
	assert_int_equal(err.offset, data_off);
	assert_non_null(strstr(err.detail, "smaller than its header"));
	hs_perf_data_close(&d);
	free(b.p);
}

static void test_byte_order_and_version(void **state)
{
	struct buf b = make_file();
	struct hs_perf_data d;
	struct hs_error err = {0};

	(void)state;
	memcpy(b.p, "2ELIFREP", 8);
	assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.detail, "byte order"));
	hs_perf_data_close(&d);
	memset(&err, 0, sizeof(err));
	memcpy(b.p, "PERFFILE", 8);
	assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), -EOPNOTSUPP);
	hs_perf_data_close(&d);
	memset(&err, 0, sizeof(err));
	memcpy(b.p, "NOTPERF!", 8);
	assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), -EBADMSG);
	hs_perf_data_close(&d);
	free(b.p);
}

/* Pipe mode: a 16-byte header, then HEADER_ATTR records before the events; and a record split
 * across two zstd-compressed records, as perf record -z writes them. */
static void test_pipe_compressed(void **state)
{
	struct buf b = {0}, inner = {0};
	struct hs_perf_data d;
	struct hs_error err = {0};
	struct hs_perf_data_rec r;
	int samples = 0, n = 0;
	size_t half;

	(void)state;
	put(&b, "PERFILE2", 8);
	put64(&b, 16);
	{
		struct perf_event_header h = {HS_PERF_RECORD_HEADER_ATTR, 0, 8 + sizeof(struct perf_event_attr) + 8};
		put(&b, &h, 8);
		put_attr(&b, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
		put64(&b, 11);
	}
	put_comm(&inner, 7, "piped", 11, 1);
	put_sample(&inner, 11, 0x1000, 7, 2);
	put_sample(&inner, 11, 0x2000, 7, 3);
	half = inner.n / 2 + 3; /* inside the first sample */
	for (int part = 0; part < 2; part++) {
		const uint8_t *src = inner.p + (part ? half : 0);
		size_t len = part ? inner.n - half : half, bound = ZSTD_compressBound(len);
		uint8_t *z = malloc(bound);
		size_t zn = ZSTD_compress(z, bound, src, len, 3);
		struct perf_event_header h = {HS_PERF_RECORD_COMPRESSED, 0, 0};
		size_t padded = (8 + zn + 7) & ~(size_t)7;
		uint8_t zero[8] = {0};

		assert_false(ZSTD_isError(zn));
		h.size = (uint16_t)padded;
		put(&b, &h, 8);
		put(&b, z, zn);
		put(&b, zero, padded - 8 - zn);
		free(z);
	}
	assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), 0);
	assert_true(d.pipe);
	while (hs_perf_data_next(&d, &r, &err) == 1) {
		n++;
		samples += r.h->type == PERF_RECORD_SAMPLE;
	}
	assert_string_equal(err.detail, "");
	assert_int_equal(d.attrs.n, 1);
	assert_int_equal(samples, 2);
	assert_int_equal(d.compressed_records, 2);
	hs_perf_data_close(&d);
	free(b.p);
	free(inner.p);
}

/* A COMPRESSED record holding len bytes of src, zstd-compressed, padded to 8 bytes. */
static void put_compressed(struct buf *b, const void *src, size_t len)
{
	size_t bound = ZSTD_compressBound(len), zn, padded;
	uint8_t *z = malloc(bound), zero[8] = {0};
	struct perf_event_header h = {HS_PERF_RECORD_COMPRESSED, 0, 0};

	zn = ZSTD_compress(z, bound, src, len, 19);
	assert_false(ZSTD_isError(zn));
	padded = (8 + zn + 7) & ~(size_t)7;
	assert_true(padded < 65536);
	h.size = (uint16_t)padded;
	put(b, &h, 8);
	put(b, z, zn);
	put(b, zero, padded - 8 - zn);
	free(z);
}

/* A pipe-mode file header with one event (id 11). */
static void put_pipe_header(struct buf *b)
{
	struct perf_event_header h = {HS_PERF_RECORD_HEADER_ATTR, 0, 8 + sizeof(struct perf_event_attr) + 8};

	put(b, "PERFILE2", 8);
	put64(b, 16);
	put(b, &h, 8);
	put_attr(b, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	put64(b, 11);
}

/* A header cut short says so, with both sizes; a header that claims a wrong size says that. */
static void test_short_header(void **state)
{
	struct buf b = make_file();
	struct hs_perf_data d;
	struct hs_error err = {0};

	(void)state;
	assert_int_equal(hs_perf_data_open(&d, b.p, 60, &err), -ENODATA);
	assert_string_equal(err.detail, "file too short for its header (60 bytes, need 104)");
	hs_perf_data_close(&d);
	memset(&err, 0, sizeof(err));
	assert_int_equal(hs_perf_data_open(&d, b.p, 12, &err), -ENODATA);
	assert_string_equal(err.detail, "file too short for its header (12 bytes, need 104)");
	hs_perf_data_close(&d);
	memset(&err, 0, sizeof(err));
	set64(&b, 8, 50);
	assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), -EBADMSG);
	assert_string_equal(err.detail, "header size 50, expected 104 (or 16 for pipe mode)");
	hs_perf_data_close(&d);
	free(b.p);
}

/* Records of every size, in one COMPRESSED record that expands to several decompression chunks:
 * each comes out whole, wherever a chunk ends. */
static void test_compressed_chunks(void **state)
{
	struct buf b = {0}, inner = {0};
	struct hs_perf_data d;
	struct hs_error err = {0};
	struct hs_perf_data_rec r;
	uint64_t n = 0, samples = 0, ip = 0;

	(void)state;
	put_pipe_header(&b);
	while (inner.n < 3 * HS_PERF_DATA_DECOMPRESS_CHUNK) {
		/* an unknown record of 8 to 4096 bytes, then a sample */
		struct perf_event_header h = {200, 0, (uint16_t)(8 + 8 * (n % 512))};
		put(&inner, &h, 8);
		for (size_t k = 8; k < h.size; k += 8)
			put64(&inner, n);
		put_sample(&inner, 11, 0x1000 + n, 7, n);
		n++;
	}
	put_compressed(&b, inner.p, inner.n);
	assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), 0);
	while (hs_perf_data_next(&d, &r, &err) == 1) {
		if (r.h->type == PERF_RECORD_SAMPLE) {
			uint64_t v;
			memcpy(&v, (const uint8_t *)r.h + 16, 8);
			assert_true(v == 0x1000 + ip);
			ip++;
			samples++;
		} else if (r.h->type == 200) {
			for (size_t k = 8; k < r.h->size; k += 8) {
				uint64_t v;
				memcpy(&v, (const uint8_t *)r.h + k, 8);
				assert_true(v == samples);
			}
		}
	}
	assert_string_equal(err.detail, "");
	assert_true(samples == n);
	assert_false(d.truncated);
	assert_false(d.decompress_cut);
	/* decompressed a chunk at a time, not all at once */
	assert_true(d.zcap <= 2 * HS_PERF_DATA_DECOMPRESS_CHUNK);
	hs_perf_data_close(&d);
	free(b.p);
	free(inner.p);
}

/* COMPRESSED records that each expand 3 MiB out of a few hundred bytes: past the ratio bound the
 * rest of the file is not read, and the reader says where it stopped. */
static void test_compressed_bomb(void **state)
{
	struct buf b = {0}, inner = {0};
	struct hs_perf_data d;
	struct hs_error err = {0};
	struct hs_perf_data_rec r;
	struct perf_event_header fr = {HS_PERF_RECORD_FINISHED_ROUND, 0, 8};
	uint64_t n = 0, expanded;
	int rc;

	(void)state;
	put_pipe_header(&b);
	while (inner.n < ((size_t)3 << 20))
		put(&inner, &fr, 8);
	for (int i = 0; i < 64; i++)
		put_compressed(&b, inner.p, inner.n);
	expanded = 64 * (uint64_t)inner.n;
	assert_true(hs_decompress_over(expanded, b.n));
	assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), 0);
	while ((rc = hs_perf_data_next(&d, &r, &err)) == 1)
		n++;
	assert_int_equal(rc, 0);
	assert_true(d.decompress_cut);
	assert_false(d.truncated);
	/* stopped at the bound, give or take a chunk: not all 192 MiB */
	assert_true(n * 8 <= HS_DECOMPRESS_MIN + HS_DECOMPRESS_RATIO * (uint64_t)b.n + HS_PERF_DATA_DECOMPRESS_CHUNK);
	assert_true(n * 8 >= HS_DECOMPRESS_MIN);
	assert_true(d.zcap <= 2 * HS_PERF_DATA_DECOMPRESS_CHUNK);
	hs_perf_data_close(&d);
	free(b.p);
	free(inner.p);
}

/* ---- real files ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	p = malloc((size_t)n + 1);
	if (fread(p, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(p);
		return NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

static void test_real_files_cut(void **state)
{
	static const char *const files[] = {"fp.data", "dwarf.data", "compressed.data", "pipe.data"};
	/* DWARF lines would be read afresh for every one of the cuts: symbols are enough here */
	const struct hs_perf_data_load_opts symbols_only = {.no_inline = true};

	(void)state;
	for (size_t f = 0; f < HS_ARRAY_SIZE(files); f++) {
		char path[512];
		size_t len = 0, full_samples = 0, step;
		char *buf;
		struct hs_profile *p = NULL;
		struct hs_error err = {0};
		struct hs_perf_data_load_info info;

		snprintf(path, sizeof(path), "%s/tests/fixtures/perf-data/%s", SRCDIR, files[f]);
		buf = slurp(path, &len);
		assert_non_null(buf);
		assert_int_equal(hs_perf_data_load(buf, len, NULL, &p, &info, &err), 0);
		full_samples = info.samples;
		assert_true(full_samples > 10);
		assert_false(info.truncated);
		hs_perf_data_load_info_release(&info);
		hs_profile_free(p);
		/* cut at a few hundred offsets: fewer samples, never more, never a crash */
		step = len / 300 + 1;
		for (size_t cut = 0; cut < len; cut += step + (cut % 7)) {
			char *copy = malloc(cut ? cut : 1);
			int rc;
			memcpy(copy, buf, cut);
			memset(&err, 0, sizeof(err));
			p = NULL;
			rc = hs_perf_data_load(copy, cut, &symbols_only, &p, &info, &err);
			if (rc == 0) {
				assert_true(info.samples <= full_samples);
				hs_perf_data_load_info_release(&info);
				hs_profile_free(p);
			} else {
				assert_true(err.detail[0] != '\0');
			}
			free(copy);
		}
		free(buf);
	}
}

/* ---- LBR call stacks ---- */

__attribute__((noinline)) void lbr_caller(void);
void lbr_caller(void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
}

__attribute__((noinline)) void lbr_leaf(void);
void lbr_leaf(void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
}

/* Feeds one sample in LBR call-stack mode (this process, event "cycles") to a builder; returns
 * the profile, with its one stack's locations in *locs (*n of them), and how many chains the
 * branch records repaired. */
static struct hs_profile *lbr_profile(bool kernel, bool repair, uint64_t ip, uint64_t *chain, uint64_t nchain,
				      uint64_t *branches, uint64_t nbranches, const uint32_t **locs, uint32_t *n,
				      uint64_t *repaired)
{
	struct hs_builder b;
	struct hs_builder_opts o = {0};
	struct hs_perf_event ev;
	struct hs_profile *p;

	o.kernel = kernel;
	o.user = true;
	o.kallsyms = "";
	o.lbr_repair = repair;
	hs_builder_init(&b, &o);
	hs_builder_add_event(&b, "cycles", false);
	assert_int_equal(hs_builder_add_proc(&b, getpid()), 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_SAMPLE;
	ev.sample.sid.pid = ev.sample.sid.tid = (uint32_t)getpid();
	ev.sample.ip = ip;
	ev.sample.period = 1;
	ev.sample.callchain = chain;
	ev.sample.nr_callchain = nchain;
	ev.sample.branches = branches;
	ev.sample.nr_branches = nbranches;
	ev.sample.branch_sample_type = PERF_SAMPLE_BRANCH_CALL_STACK | PERF_SAMPLE_BRANCH_USER;
	hs_builder_event(&b, &ev);
	*repaired = b.stats.lbr_repaired;
	p = hs_builder_take(&b);
	hs_builder_release(&b);
	assert_int_equal(p->samples.n, 1);
	*locs = hs_profile_stack_locs(p, p->samples.v[0].stack);
	*n = p->stacks.v[p->samples.v[0].stack].nlocs;
	for (uint32_t i = 0; i < *n; i++)
		print_message("  #%u %s\n", i, hs_profile_location_name(p, (*locs)[i]));
	return p;
}

/* A sample in LBR call-stack mode: the user part is the sampled IP, then the call sites the
 * branch records hold, joined below the kernel part of the chain. */
static void test_lbr_stack(void **state)
{
	uint64_t chain[2] = {PERF_CONTEXT_KERNEL, 0xffffffff81000000ULL};
	/* from, to, flags: the call in lbr_caller to lbr_leaf, then the call into lbr_caller */
	uint64_t branches[2 * 3] = {(uint64_t)(uintptr_t)lbr_caller + 2, (uint64_t)(uintptr_t)lbr_leaf, 0,
				    (uint64_t)(uintptr_t)test_lbr_stack + 40, (uint64_t)(uintptr_t)lbr_caller, 0};
	struct hs_profile *p;
	const uint32_t *locs;
	uint32_t n;
	uint64_t repaired;

	(void)state;
	p = lbr_profile(true, false, (uint64_t)(uintptr_t)lbr_leaf + 1, chain, 2, branches, 2, &locs, &n, &repaired);
	assert_int_equal(n, 4);
	assert_int_equal(p->locations.v[locs[0]].kind, HS_KIND_KERNEL);
	assert_string_equal(hs_profile_location_name(p, locs[1]), "lbr_leaf");
	assert_string_equal(hs_profile_location_name(p, locs[2]), "lbr_caller");
	assert_string_equal(hs_profile_location_name(p, locs[3]), "test_lbr_stack");
	hs_profile_free(p);
}

/* A sample taken in the kernel in LBR call-stack mode: the user instruction is the first entry
 * after PERF_CONTEXT_USER in the kernel's chain, the calls below it from the branch records
 * (kernel branches, which call-stack mode for user space does not record, left out if any);
 * with kernel frames not kept, only the user part. */
static void test_lbr_stack_in_kernel(void **state)
{
	uint64_t chain[5] = {PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL, 0xffffffff81000020ULL, PERF_CONTEXT_USER,
			     (uint64_t)(uintptr_t)lbr_leaf + 3};
	uint64_t branches[3 * 3] = {
		0xffffffff81000030ULL, 0xffffffff81000040ULL, 0, /* a kernel branch: not a user caller */
		(uint64_t)(uintptr_t)lbr_caller + 2, (uint64_t)(uintptr_t)lbr_leaf, 0,
		(uint64_t)(uintptr_t)test_lbr_stack_in_kernel + 40, (uint64_t)(uintptr_t)lbr_caller, 0,
	};

	(void)state;
	for (int kernel = 1; kernel >= 0; kernel--) {
		struct hs_profile *p;
		const uint32_t *locs;
		uint32_t n, u;
		uint64_t repaired;

		p = lbr_profile(kernel, false, 0xffffffff81000010ULL, chain, 5, branches, 3, &locs, &n, &repaired);
		assert_int_equal(n, kernel ? 5 : 3);
		u = kernel ? 2 : 0;
		if (kernel) {
			assert_int_equal(p->locations.v[locs[0]].kind, HS_KIND_KERNEL);
			assert_int_equal(p->locations.v[locs[1]].kind, HS_KIND_KERNEL);
		}
		assert_string_equal(hs_profile_location_name(p, locs[u]), "lbr_leaf");
		assert_string_equal(hs_profile_location_name(p, locs[u + 1]), "lbr_caller");
		assert_string_equal(hs_profile_location_name(p, locs[u + 2]), "test_lbr_stack_in_kernel");
		hs_profile_free(p);
	}
}

/* Frame-pointer chains repaired from last-branch records (record -g fp / auto on a hardware
 * event, where the CPU has LBR): lbr_leaf sampled before it pushed its frame pointer, so the
 * walk went from it straight to lbr_caller's caller; the branch records say lbr_caller called
 * it, and lbr_caller is put back. A chain that has the caller already is left as it is, and
 * without lbr_repair the same sample is read as -g lbr. */
static void lbr_repair_case(bool repair, bool lost_caller)
{
	static const char *const want[] = {"lbr_leaf", "lbr_caller", "test_lbr_stack"};
	uint64_t call_test = (uint64_t)(uintptr_t)test_lbr_stack + 35; /* calls lbr_caller */
	uint64_t call_caller = (uint64_t)(uintptr_t)lbr_caller + 2;    /* calls lbr_leaf */
	uint64_t chain[4] = {PERF_CONTEXT_USER, (uint64_t)(uintptr_t)lbr_leaf + 1, call_caller + 5, call_test + 5};
	uint64_t branches[2 * 3] = {call_caller, (uint64_t)(uintptr_t)lbr_leaf, 0,
				    call_test, (uint64_t)(uintptr_t)lbr_caller, 0};
	struct hs_profile *p;
	const uint32_t *locs;
	uint32_t n;
	uint64_t repaired;

	if (lost_caller)
		chain[2] = call_test + 5; /* the walk went from lbr_leaf straight into test_lbr_stack */
	p = lbr_profile(true, repair, chain[1], chain, lost_caller ? 3 : 4, branches, 2, &locs, &n, &repaired);
	assert_int_equal(repaired, repair && lost_caller ? 1 : 0);
	assert_int_equal(n, 3);
	for (uint32_t i = 0; i < n; i++)
		assert_string_equal(hs_profile_location_name(p, locs[i]), want[i]);
	hs_profile_free(p);
}

static void test_lbr_repair(void **state)
{
	(void)state;
	lbr_repair_case(true, true);   /* repaired */
	lbr_repair_case(true, false);  /* already right: nothing added */
	lbr_repair_case(false, true);  /* -g lbr: the chain from the records */
}

/* ---- the chain memo ---- */

static uint32_t memo_sample_in(struct hs_builder *b, uint64_t *chain, uint64_t n, uint32_t tid)
{
	struct hs_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_SAMPLE;
	ev.sample.sid.pid = (uint32_t)getpid();
	ev.sample.sid.tid = tid;
	ev.sample.ip = chain[1];
	ev.sample.period = 1;
	ev.sample.callchain = chain;
	ev.sample.nr_callchain = n;
	hs_builder_event(b, &ev);
	return b->p->samples.v[b->p->samples.n - 1].stack;
}

/* A builder of this process's user stacks, with its mappings. */
static void memo_builder(struct hs_builder *b)
{
	struct hs_builder_opts o = {0};

	o.user = true;
	o.kallsyms = "";
	hs_builder_init(b, &o);
	hs_builder_add_event(b, "cpu-clock", false);
	assert_int_equal(hs_builder_add_proc(b, getpid()), 0);
}

static uint32_t memo_sample(struct hs_builder *b, uint64_t *chain, uint64_t n)
{
	return memo_sample_in(b, chain, n, (uint32_t)getpid());
}

/* The sample of a thread's name, and its count, for the one stack of the profile. */
static int64_t count_of(const struct hs_builder *b, uint32_t tid, const char *comm)
{
	for (size_t i = 0; i < b->p->samples.n; i++)
		if (b->p->samples.v[i].tid == (int32_t)tid && !strcmp(hs_profile_str(b->p, b->p->samples.v[i].comm), comm))
			return hs_profile_sample_values(b->p, (uint32_t)i)[0];
	return 0;
}

static void rename_thread(struct hs_builder *b, uint32_t tid, const char *comm)
{
	struct hs_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_COMM;
	ev.comm.pid = (uint32_t)getpid();
	ev.comm.tid = tid;
	ev.comm.comm = comm;
	hs_builder_event(b, &ev);
}

/* A chain seen before adds to the sample it made in the same thread, under the same name: not
 * to another thread's, nor to the thread's under the name it had before. */
static void test_chain_memo_samples(void **state)
{
	uint64_t chain[4] = {PERF_CONTEXT_USER, (uint64_t)(uintptr_t)lbr_leaf + 1, (uint64_t)(uintptr_t)lbr_caller + 2,
			     (uint64_t)(uintptr_t)test_chain_memo_samples + 40};
	uint32_t me = (uint32_t)getpid(), other = me + 1;
	struct hs_builder b;

	(void)state;
	memo_builder(&b);
	rename_thread(&b, me, "first");
	rename_thread(&b, other, "second");
	memo_sample_in(&b, chain, 4, me);
	memo_sample_in(&b, chain, 4, me);
	memo_sample_in(&b, chain, 4, other);
	memo_sample_in(&b, chain, 4, me);
	assert_int_equal(b.stats.chain_hits, 3);
	assert_int_equal(b.p->samples.n, 2);
	assert_int_equal(count_of(&b, me, "first"), 3);
	assert_int_equal(count_of(&b, other, "second"), 1);
	rename_thread(&b, me, "renamed");
	memo_sample_in(&b, chain, 4, me);
	memo_sample_in(&b, chain, 4, me);
	assert_int_equal(b.p->samples.n, 3);
	assert_int_equal(count_of(&b, me, "first"), 3);
	assert_int_equal(count_of(&b, me, "renamed"), 2);
	hs_builder_release(&b);
}

/* Records lost (PERF_RECORD_LOST, of any kind) and samples lost (PERF_RECORD_LOST_SAMPLES, as
 * perf writes them at its end and a live recording hands them on) are counted apart, not added:
 * perf writes both for the same losses. */
static void test_lost_apart(void **state)
{
	struct hs_perf_event ev;
	struct hs_builder b;

	(void)state;
	memo_builder(&b);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_LOST;
	ev.lost.lost = 900;
	hs_builder_event(&b, &ev);
	ev.lost.lost = 100;
	hs_builder_event(&b, &ev);
	ev.type = PERF_RECORD_LOST_SAMPLES;
	ev.lost.lost = 7;
	hs_builder_event(&b, &ev);
	assert_int_equal(b.stats.lost_records, 1000);
	assert_int_equal(b.stats.lost, 7);
	hs_builder_release(&b);
}

/* A chain seen before gives the stack it gave then, a new leaf below the same callers its own,
 * and after a mapping changes, the locations the new mapping gives, not the remembered ones. */
static void test_chain_memo(void **state)
{
	uint64_t chain[4] = {PERF_CONTEXT_USER, (uint64_t)(uintptr_t)lbr_leaf + 1, (uint64_t)(uintptr_t)lbr_caller + 2,
			     (uint64_t)(uintptr_t)test_chain_memo + 40};
	struct hs_builder b;
	struct hs_perf_event mm;
	uint32_t first, again, other, after;
	const uint32_t *locs;

	(void)state;
	memo_builder(&b);
	first = memo_sample(&b, chain, 4);
	again = memo_sample(&b, chain, 4);
	assert_int_equal(first, again);
	assert_int_equal(b.stats.chain_hits, 1);
	chain[1] = (uint64_t)(uintptr_t)lbr_leaf + 3; /* the same function, another instruction */
	other = memo_sample(&b, chain, 4);
	assert_int_equal(b.stats.chain_hits, 2);
	assert_int_not_equal(other, first);
	locs = hs_profile_stack_locs(b.p, other);
	assert_string_equal(hs_profile_location_name(b.p, locs[0]), "lbr_leaf");
	assert_string_equal(hs_profile_location_name(b.p, locs[1]), "lbr_caller");
	/* the callers' code replaced by an anonymous mapping: no longer lbr_caller */
	memset(&mm, 0, sizeof(mm));
	mm.type = PERF_RECORD_MMAP2;
	mm.mmap.pid = mm.mmap.tid = (uint32_t)getpid();
	mm.mmap.start = ((uint64_t)(uintptr_t)lbr_caller & ~0xfffULL);
	mm.mmap.len = 0x1000;
	mm.mmap.prot = PROT_READ | PROT_EXEC;
	mm.mmap.filename = "//anon";
	mm.mmap.is_mmap2 = true;
	hs_builder_event(&b, &mm);
	after = memo_sample(&b, chain, 4);
	locs = hs_profile_stack_locs(b.p, after);
	assert_int_equal(b.stats.chain_hits, 2);
	assert_string_not_equal(hs_profile_location_name(b.p, locs[1]), "lbr_caller");
	hs_builder_release(&b);
}

/* ---- MMAP2 build-id bits an event did not ask for ---- */

/* An MMAP2 record of the code mapping that holds fn in this process, with the file's device
 * and inode, as the kernel writes it for an event that did not ask for build-ids; misc may
 * carry the build-id bit another event on the machine left set. The device is stat's, which is
 * the kernel's but on btrfs (whose subvolumes stat gives): the file is found the same way. */
static void put_own_mmap2(struct buf *b, const void *fn, uint16_t misc, uint64_t id)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096], path[4096] = "", name[4096 + 8] = {0};
	unsigned long long lo = 0, hi = 0, off = 0;
	uint32_t pid = (uint32_t)getpid();
	struct stat st;
	size_t n;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %*s %llx %*x:%*x %*u %4095s", &lo, &hi, &off, path) == 4 &&
		    (uintptr_t)fn >= lo && (uintptr_t)fn < hi)
			break;
	fclose(f);
	assert_true((uintptr_t)fn >= lo && (uintptr_t)fn < hi && path[0] == '/');
	assert_int_equal(stat(path, &st), 0);
	n = (strlen(path) + 8) & ~(size_t)7;
	memcpy(name, path, strlen(path));
	{
		struct perf_event_header h = {PERF_RECORD_MMAP2, misc, (uint16_t)(8 + 8 + 24 + 24 + 8 + n + 24)};
		put(b, &h, 8);
	}
	put32(b, pid);
	put32(b, pid);
	put64(b, lo);
	put64(b, hi - lo);
	put64(b, off);
	put32(b, major(st.st_dev));
	put32(b, minor(st.st_dev));
	put64(b, st.st_ino);
	put64(b, 0);
	put32(b, PROT_READ | PROT_EXEC);
	put32(b, MAP_PRIVATE);
	put(b, name, n);
	/* sample_id: TID, TIME, IDENTIFIER */
	put32(b, pid);
	put32(b, pid);
	put64(b, 50);
	put64(b, id);
}

/* A file of nattrs events (ids 11, 22, ...; the one at ask_ix asked for build-ids, none when
 * it is -1), an MMAP2 of this test's own code with id mmap_id, and a sample in lbr_leaf. */
static struct buf make_mmap_file(int nattrs, int ask_ix, uint16_t misc, uint64_t mmap_id)
{
	struct buf b = {0};
	size_t attrs, ids, data;

	put(&b, "PERFILE2", 8);
	put64(&b, 104);
	put64(&b, sizeof(struct perf_event_attr) + 16);
	for (int i = 0; i < 6 + 4; i++)
		put64(&b, 0); /* sections, patched below; no features */
	ids = b.n;
	for (int i = 0; i < nattrs; i++)
		put64(&b, 11 * (uint64_t)(i + 1));
	attrs = b.n;
	for (int i = 0; i < nattrs; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_SOFTWARE;
		a.size = sizeof(a);
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample_type = ST;
		a.sample_id_all = 1;
		a.mmap = a.mmap2 = i == 0;
		a.build_id = i == ask_ix;
		put(&b, &a, sizeof(a));
		put64(&b, ids + 8 * (size_t)i);
		put64(&b, 8);
	}
	data = b.n;
	put_own_mmap2(&b, (const void *)lbr_leaf, PERF_RECORD_MISC_USER | misc, mmap_id);
	put_sample(&b, 11, (uint64_t)(uintptr_t)lbr_leaf + 1, (uint32_t)getpid(), 100);
	set64(&b, 24, attrs);
	set64(&b, 32, (size_t)nattrs * (sizeof(struct perf_event_attr) + 16));
	set64(&b, 40, data);
	set64(&b, 48, b.n - data);
	return b;
}

/* The name of the leaf of the one sample of the file, and how many files it says changed. */
static char *load_leaf(struct buf *b, size_t *mismatched)
{
	struct hs_perf_data_load_opts o = {0};
	struct hs_perf_data_load_info info;
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	char *name;

	o.no_kernel = true;
	o.no_inline = true;
	assert_int_equal(hs_perf_data_load(b->p, b->n, &o, &p, &info, &err), 0);
	assert_int_equal(p->samples.n, 1);
	name = strdup(hs_profile_location_name(p, hs_profile_stack_locs(p, p->samples.v[0].stack)[0]));
	*mismatched = info.mismatched.n;
	hs_perf_data_load_info_release(&info);
	hs_profile_free(p);
	return name;
}

/* The kernel sets PERF_RECORD_MISC_MMAP_BUILD_ID in the MMAP2 records of every event after one
 * that asked for build-ids, over their device and inode: an event that did not ask has its
 * records read as device and inode (the file is the one mapped, and names its code); one that
 * asked, as a build-id (these bytes are none: the file is said to have changed). */
static void test_mmap2_build_id_bit(void **state)
{
	struct buf b;
	size_t mismatched;
	char *name;

	(void)state;
	b = make_mmap_file(1, -1, PERF_RECORD_MISC_MMAP_BUILD_ID, 11);
	name = load_leaf(&b, &mismatched);
	assert_string_equal(name, "lbr_leaf");
	assert_int_equal(mismatched, 0);
	free(name);
	free(b.p);

	b = make_mmap_file(1, 0, PERF_RECORD_MISC_MMAP_BUILD_ID, 11);
	name = load_leaf(&b, &mismatched);
	assert_string_not_equal(name, "lbr_leaf");
	assert_int_equal(mismatched, 1);
	free(name);
	free(b.p);

	/* the bit clear: device and inode, whatever the event asked */
	b = make_mmap_file(1, 0, 0, 11);
	name = load_leaf(&b, &mismatched);
	assert_string_equal(name, "lbr_leaf");
	free(name);
	free(b.p);
}

/* Several events: a record's id says which event's layout reads it; one no id ties to an event
 * believes the bit only when some event asked for build-ids. */
static void test_mmap2_build_id_bit_events(void **state)
{
	static const struct {
		int ask_ix;
		uint64_t id;
		bool build_id, named;
	} cases[] = {
		{-1, 11, false, true}, {-1, 99, false, true}, {1, 11, false, true},
		{1, 22, true, false},  {1, 99, true, false},  {0, 11, true, false},
	};

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		struct buf b = make_mmap_file(2, cases[i].ask_ix, PERF_RECORD_MISC_MMAP_BUILD_ID, cases[i].id);
		struct hs_perf_data d;
		struct hs_perf_data_rec r;
		struct hs_error err = {0};
		size_t mismatched;
		int attr;
		char *name;

		assert_int_equal(hs_perf_data_open(&d, b.p, b.n, &err), 0);
		assert_int_equal(hs_perf_data_next(&d, &r, &err), 1);
		assert_int_equal(r.h->type, PERF_RECORD_MMAP2);
		assert_int_equal(hs_perf_data_record_layout(&d, r.h, &attr)->build_id, cases[i].build_id);
		assert_int_equal(attr, cases[i].id == 22 ? 1 : 0);
		hs_perf_data_close(&d);
		name = load_leaf(&b, &mismatched);
		assert_int_equal(!strcmp(name, "lbr_leaf"), cases[i].named);
		free(name);
		free(b.p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file),          cmocka_unit_test(test_load_profile),
		cmocka_unit_test(test_every_prefix),  cmocka_unit_test(test_corrupt_size),
		cmocka_unit_test(test_byte_order_and_version), cmocka_unit_test(test_pipe_compressed),
		cmocka_unit_test(test_real_files_cut), cmocka_unit_test(test_lbr_stack),
		cmocka_unit_test(test_lbr_stack_in_kernel),
		cmocka_unit_test(test_lbr_repair),
		cmocka_unit_test(test_chain_memo),
		cmocka_unit_test(test_chain_memo_samples),
		cmocka_unit_test(test_lost_apart),
		cmocka_unit_test(test_short_header),
		cmocka_unit_test(test_compressed_chunks),
		cmocka_unit_test(test_compressed_bomb),
		cmocka_unit_test(test_mmap2_build_id_bit),
		cmocka_unit_test(test_mmap2_build_id_bit_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
