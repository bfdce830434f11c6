/* perf.data reader. Layouts from tools/perf/Documentation/perf.data-file-format.txt and
 * tools/lib/perf/include/perf/event.h; COMPRESSED records hold zstd frames (perf record -z). */
#include "perf-data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "util/cursor.h"

#define MAGIC2 0x32454c4946524550ULL    /* "PERFILE2" read as a native u64 */
#define MAGIC2_SW 0x50455246494c4532ULL /* the same written on a machine of the other endianness */
#define FILE_HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16

bool hs_perf_data_sniff(const void *buf, size_t len)
{
	struct hs_cursor c;
	uint64_t m;

	hs_cursor_init(&c, buf, len);
	m = hs_cursor_u64(&c);
	if (hs_cursor_failed(&c))
		return false;
	return m == MAGIC2 || m == MAGIC2_SW || !memcmp(buf, "PERFFILE", 8);
}

static void layout_of(struct hs_perf_data_attr *a)
{
	a->layout.sample_type = a->attr.sample_type;
	a->layout.read_format = a->attr.read_format;
	a->layout.branch_sample_type = a->attr.branch_sample_type;
	a->layout.sample_regs_user = a->attr.sample_regs_user;
	a->layout.sample_regs_intr = a->attr.sample_regs_intr;
	a->layout.sample_id_all = a->attr.sample_id_all;
	a->layout.build_id = a->attr.build_id;
}

static int add_attr(struct hs_perf_data *d, const uint8_t *p, size_t n, uint64_t off, struct hs_error *err)
{
	struct hs_perf_data_attr a;

	if (d->attrs.n >= HS_PERF_DATA_MAX_ATTRS) {
		hs_error_at(err, off, "more than %u events", HS_PERF_DATA_MAX_ATTRS);
		return -EOVERFLOW;
	}
	if (n < PERF_ATTR_SIZE_VER0) {
		hs_error_at(err, off, "event attribute of %zu bytes, smaller than the first version's %d", n,
				   PERF_ATTR_SIZE_VER0);
		return -EBADMSG;
	}
	memset(&a, 0, sizeof(a));
	memcpy(&a.attr, p, HS_MIN(n, sizeof(a.attr)));
	layout_of(&a);
	hs_vec_push(&d->attrs, a);
	/* a record no id ties to an event is parsed with the first event's layout; its MMAP2
	 * build-id bit is believed only when some event asked for build-ids (perf-event.h) */
	d->untied_build_id = d->untied_build_id || a.attr.build_id;
	d->untied = d->attrs.v[0].layout;
	d->untied.build_id = d->untied_build_id;
	return 0;
}

/* Takes in the n ids at the cursor (which holds them) as those of attribute attr. */
static int add_ids(struct hs_perf_data *d, struct hs_cursor *c, uint64_t n, size_t attr, uint64_t off,
		   struct hs_error *err)
{
	if (n > HS_PERF_DATA_MAX_IDS || d->ids.n + n > HS_PERF_DATA_MAX_IDS) {
		hs_error_at(err, off, "more than %u event ids", HS_PERF_DATA_MAX_IDS);
		return -EOVERFLOW;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t id = hs_cursor_u64(c);
		if (id != UINT64_MAX)
			hs_u64map_put(&d->ids, id, attr);
	}
	return 0;
}

/* ---- features ---- */

/* A perf_header_string: u32 length, then that many bytes holding a string, NUL-terminated
 * within them or not; NULL when it runs past the cursor's end. */
static char *feat_string(struct hs_cursor *c)
{
	uint32_t len = hs_cursor_u32(c);
	const char *s = hs_cursor_bytes(c, len);

	if (!s)
		return NULL;
	return hs_xstrndup(s, strnlen(s, len));
}

static void add_build_id(struct hs_perf_data *d, const uint8_t *p, size_t n)
{
	/* struct build_id_event: header, pid, build_id[24], filename; perf 5.x+ marks the size of
	 * the id in the header's misc (PERF_RECORD_MISC_BUILD_ID_SIZE) and in byte 20 */
	struct hs_perf_build_id b;
	struct hs_cursor c;
	const uint8_t *id;
	const char *name;
	uint16_t misc;

	if (n < 8 + 4 + 24 + 1 || d->build_ids.n >= HS_PERF_DATA_MAX_BUILD_IDS)
		return;
	hs_cursor_init(&c, p, n);
	hs_cursor_skip(&c, 4); /* type */
	misc = hs_cursor_u16(&c);
	hs_cursor_skip(&c, 2); /* size */
	memset(&b, 0, sizeof(b));
	b.pid = (int32_t)hs_cursor_u32(&c);
	id = hs_cursor_bytes(&c, 24);
	memcpy(b.build_id, id, 20);
	b.size = (misc & (1 << 15)) && id[20] && id[20] <= 20 ? id[20] : 20;
	b.kernel = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	name = hs_cursor_bytes(&c, hs_cursor_remaining(&c));
	b.filename = hs_xstrndup(name, strnlen(name, n - 36));
	hs_vec_push(&d->build_ids, b);
}

static void feat_build_ids(struct hs_perf_data *d, struct hs_cursor *c)
{
	while (hs_cursor_remaining(c) >= 8) {
		struct hs_cursor h = *c;
		uint16_t sz;

		hs_cursor_skip(&h, 6); /* to the header's size */
		sz = hs_cursor_u16(&h);
		if (sz < 8 || sz > hs_cursor_remaining(c))
			break;
		add_build_id(d, hs_cursor_bytes(c, sz), sz);
	}
}

static void feat_event_desc(struct hs_perf_data *d, struct hs_cursor *c)
{
	uint32_t nr, asz;

	if (hs_cursor_remaining(c) < 8)
		return;
	nr = hs_cursor_u32(c);
	asz = hs_cursor_u32(c);
	for (uint32_t e = 0; e < nr && hs_cursor_remaining(c); e++) {
		struct perf_event_attr attr;
		struct hs_cursor ids;
		uint32_t nr_ids;
		char *name;
		uint64_t ix;

		if (asz < PERF_ATTR_SIZE_VER0 || asz > hs_cursor_remaining(c) || hs_cursor_remaining(c) - asz < 4)
			return;
		memset(&attr, 0, sizeof(attr));
		memcpy(&attr, hs_cursor_bytes(c, asz), HS_MIN(asz, sizeof(attr)));
		nr_ids = hs_cursor_u32(c);
		name = feat_string(c);
		if (!name)
			return;
		if (nr_ids > hs_cursor_remaining(c) / 8) {
			free(name);
			return;
		}
		ids = *c;
		hs_cursor_skip(c, 8 * (uint64_t)nr_ids);
		/* the event is the attribute its ids belong to */
		if (nr_ids && hs_u64map_get(&d->ids, hs_cursor_u64(&ids), &ix) && !d->attrs.v[ix].name) {
			d->attrs.v[ix].name = name;
		} else if (!nr_ids && e < d->attrs.n && !d->attrs.v[e].name) {
			d->attrs.v[e].name = name;
		} else {
			free(name);
		}
	}
}

static void feat_cmdline(struct hs_perf_data *d, struct hs_cursor *c)
{
	uint32_t nr;
	char *out = NULL;
	size_t outlen = 0;

	if (hs_cursor_remaining(c) < 4)
		return;
	nr = hs_cursor_u32(c);
	for (uint32_t i = 0; i < nr && i < 4096; i++) {
		size_t l;
		char *s = feat_string(c);
		if (!s)
			break;
		l = strlen(s);
		out = hs_xrealloc(out, outlen + l + 2);
		if (outlen)
			out[outlen++] = ' ';
		memcpy(out + outlen, s, l + 1);
		outlen += l;
		free(s);
	}
	free(d->cmdline);
	d->cmdline = out;
}

/* Takes in the n bytes at p of a feature section. */
static void parse_feature(struct hs_perf_data *d, int feat, const uint8_t *p, size_t n)
{
	struct hs_cursor c;
	char **str = NULL;

	hs_cursor_init(&c, p, n);
	switch (feat) {
	case HS_FEAT_BUILD_ID:
		feat_build_ids(d, &c);
		return;
	case HS_FEAT_HOSTNAME:
		str = &d->hostname;
		break;
	case HS_FEAT_OSRELEASE:
		str = &d->osrelease;
		break;
	case HS_FEAT_VERSION:
		str = &d->version;
		break;
	case HS_FEAT_ARCH:
		str = &d->arch;
		break;
	case HS_FEAT_NRCPUS:
		if (n >= 8) {
			d->nr_cpus_online = hs_cursor_u32(&c);
			d->nr_cpus_avail = hs_cursor_u32(&c);
		}
		return;
	case HS_FEAT_CMDLINE:
		feat_cmdline(d, &c);
		return;
	case HS_FEAT_EVENT_DESC:
		feat_event_desc(d, &c);
		return;
	case HS_FEAT_SAMPLE_TIME:
		if (n >= 16) {
			d->first_sample_time = hs_cursor_u64(&c);
			d->last_sample_time = hs_cursor_u64(&c);
		}
		return;
	default:
		return;
	}
	if (str) {
		free(*str);
		*str = feat_string(&c);
	}
}

/* ---- opening ---- */

static void name_events(struct hs_perf_data *d)
{
	static const char *const sw[] = {"cpu-clock", "task-clock", "page-faults", "context-switches",
					 "cpu-migrations", "minor-faults", "major-faults"};
	static const char *const hw[] = {"cycles", "instructions", "cache-references", "cache-misses",
					 "branches", "branch-misses", "bus-cycles"};

	for (size_t i = 0; i < d->attrs.n; i++) {
		struct hs_perf_data_attr *a = &d->attrs.v[i];
		char buf[64];
		if (a->name)
			continue;
		if (a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config < HS_ARRAY_SIZE(sw))
			a->name = hs_xstrdup(sw[a->attr.config]);
		else if (a->attr.type == PERF_TYPE_HARDWARE && a->attr.config < HS_ARRAY_SIZE(hw))
			a->name = hs_xstrdup(hw[a->attr.config]);
		else {
			snprintf(buf, sizeof(buf), "event-%u-%llx", a->attr.type, (unsigned long long)a->attr.config);
			a->name = hs_xstrdup(buf);
		}
	}
}

int hs_perf_data_open(struct hs_perf_data *d, const void *buf, size_t len, struct hs_error *err)
{
	const uint8_t *b = buf;
	uint64_t magic, hsize, attr_size, a_off, a_size, d_off, d_size, feat_off, features[4];
	struct hs_cursor c;
	int rc;

	memset(d, 0, sizeof(*d));
	hs_cursor_init(&c, buf, len);
	d->buf = b;
	d->len = len;
	if (len < PIPE_HEADER_SIZE) {
		/* a file's header is 104 bytes, a pipe's 16: which this is cannot be told yet */
		hs_error_at(err, 0, "file too short for its header (%zu bytes, need 104)", len);
		return len >= 8 && hs_perf_data_sniff(buf, len) ? -ENODATA : -EBADMSG;
	}
	magic = hs_cursor_u64(&c);
	if (magic == MAGIC2_SW) {
		hs_error_at(err, 0, "perf.data written on a machine of the other byte order is not supported");
		return -EOPNOTSUPP;
	}
	if (!memcmp(b, "PERFFILE", 8)) {
		hs_error_at(err, 0, "version 1 perf.data (PERFFILE) is not supported");
		return -EOPNOTSUPP;
	}
	if (magic != MAGIC2) {
		hs_error_at(err, 0, "not a perf.data file");
		return -EBADMSG;
	}
	hsize = hs_cursor_u64(&c);
	if (hsize == PIPE_HEADER_SIZE) {
		d->pipe = true;
		d->data_off = d->pos = PIPE_HEADER_SIZE;
		d->data_end = len;
		return 0;
	}
	if (hsize < FILE_HEADER_SIZE) {
		hs_error_at(err, 8, "header size %llu, expected %d (or %d for pipe mode)", (unsigned long long)hsize,
				   FILE_HEADER_SIZE, PIPE_HEADER_SIZE);
		return -EBADMSG;
	}
	if (len < FILE_HEADER_SIZE) {
		hs_error_at(err, 0, "file too short for its header (%zu bytes, need %d)", len, FILE_HEADER_SIZE);
		return -ENODATA;
	}
	attr_size = hs_cursor_u64(&c);
	a_off = hs_cursor_u64(&c);
	a_size = hs_cursor_u64(&c);
	d_off = hs_cursor_u64(&c);
	d_size = hs_cursor_u64(&c);
	hs_cursor_skip(&c, 16); /* event_types */
	for (int i = 0; i < 4; i++)
		features[i] = hs_cursor_u64(&c); /* adds_features: a bit per feature section */
	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096) {
		hs_error_at(err, 16, "attribute size %llu", (unsigned long long)attr_size);
		return -EBADMSG;
	}
	if (a_off > len || a_size > len - a_off) {
		hs_error_at(err, 24, "attributes at %llu+%llu beyond the end of the file",
				   (unsigned long long)a_off, (unsigned long long)a_size);
		return -ENODATA;
	}
	if (d_off > len || d_off < hsize) {
		hs_error_at(err, 40, "data section at %llu beyond the end of the file", (unsigned long long)d_off);
		return d_off > len ? -ENODATA : -EBADMSG;
	}
	for (uint64_t off = a_off; off + attr_size <= a_off + a_size; off += attr_size) {
		/* struct perf_file_attr: the attribute, then where its ids are */
		const uint8_t *attr;
		uint64_t ids_off, ids_size;

		hs_cursor_seek(&c, off);
		attr = hs_cursor_bytes(&c, attr_size - 16);
		ids_off = hs_cursor_u64(&c);
		ids_size = hs_cursor_u64(&c);
		if ((rc = add_attr(d, attr, (size_t)(attr_size - 16), off, err)))
			return rc;
		if (ids_off > len || ids_size > len - ids_off || ids_size % 8) {
			hs_error_at(err, off + attr_size - 16, "event ids beyond the end of the file");
			return -ENODATA;
		}
		hs_cursor_seek(&c, ids_off);
		if ((rc = add_ids(d, &c, ids_size / 8, d->attrs.n - 1, off, err)))
			return rc;
	}
	if (!d->attrs.n) {
		hs_error_at(err, 24, "no event attributes");
		return -EBADMSG;
	}
	d->data_off = d->pos = d_off;
	/* a recording that was killed never wrote its final sizes: the data runs to the end */
	if (!d_size || d_size > len - d_off) {
		d->data_end = len;
		if (d_size > len - d_off) {
			d->truncated = true; /* noted now; next() says where */
			d->truncated_at = len;
		}
	} else {
		d->data_end = d_off + d_size;
	}
	/* features follow the data: one section descriptor per bit set, in bit order */
	feat_off = d_off + d_size;
	if (d_size && feat_off < len) {
		hs_cursor_seek(&c, feat_off);
		for (int bit = 1; bit < 256; bit++) {
			uint64_t so, ss;
			if (!(features[bit / 64] >> (bit % 64) & 1))
				continue;
			if (hs_cursor_remaining(&c) < 16)
				break;
			so = hs_cursor_u64(&c);
			ss = hs_cursor_u64(&c);
			if (so <= len && ss <= len - so)
				parse_feature(d, bit, b + so, (size_t)ss);
		}
	}
	name_events(d);
	return 0;
}

void hs_perf_data_close(struct hs_perf_data *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->attrs.n; i++)
		free(d->attrs.v[i].name);
	for (size_t i = 0; i < d->build_ids.n; i++)
		free(d->build_ids.v[i].filename);
	hs_vec_free(&d->attrs);
	hs_vec_free(&d->build_ids);
	hs_u64map_release(&d->ids);
	free(d->hostname);
	free(d->osrelease);
	free(d->version);
	free(d->arch);
	free(d->cmdline);
	free(d->zbuf);
	free(d->scratch);
	if (d->zctx)
		ZSTD_freeDCtx(d->zctx);
	memset(d, 0, sizeof(*d));
}

const struct hs_perf_layout *hs_perf_data_layout(const struct hs_perf_data *d, int attr)
{
	static const struct hs_perf_layout none;

	if (attr >= 0 && (size_t)attr < d->attrs.n)
		return &d->attrs.v[attr].layout;
	return d->attrs.n ? &d->attrs.v[0].layout : &none;
}

/* ---- records ---- */

/* Which event a kernel record belongs to; *ret_tied (when not NULL) says whether its id (or the
 * file's one event) said so, rather than the first event's being taken for want of an id. */
static int attr_of(const struct hs_perf_data *d, const struct perf_event_header *h, bool *ret_tied)
{
	const struct hs_perf_layout *l;
	struct hs_cursor c;
	uint64_t id, ix;
	bool dummy, *tied = ret_tied ? ret_tied : &dummy;
	int pos;

	*tied = d->attrs.n <= 1;
	if (d->attrs.n <= 1)
		return d->attrs.n ? 0 : -1;
	l = &d->attrs.v[0].layout;
	if (h->type == PERF_RECORD_SAMPLE) {
		pos = hs_perf_id_pos_sample(l);
		if (pos < 0 || sizeof(*h) + 8 * (size_t)(pos + 1) > h->size)
			return 0;
		hs_cursor_init(&c, h, h->size);
		hs_cursor_seek(&c, sizeof(*h) + 8 * (size_t)pos);
	} else {
		pos = hs_perf_id_pos_trailer(l);
		if (pos < 0 || sizeof(*h) + 8 * (size_t)(pos + 1) > h->size)
			return 0;
		hs_cursor_init(&c, h, h->size);
		hs_cursor_seek(&c, h->size - 8 * (size_t)pos);
	}
	id = hs_cursor_u64(&c);
	*tied = hs_u64map_get(&d->ids, id, &ix);
	return *tied ? (int)ix : 0;
}

const struct hs_perf_layout *hs_perf_data_record_layout(const struct hs_perf_data *d, const struct perf_event_header *h,
							int *attr)
{
	bool tied;

	*attr = attr_of(d, h, &tied);
	if (*attr < 0 || tied)
		return hs_perf_data_layout(d, *attr);
	return &d->untied;
}

/* Decompresses more of the current COMPRESSED record into zbuf, after what is left there (the
 * start of a record that the next bytes complete): up to HS_PERF_DATA_DECOMPRESS_CHUNK bytes, so
 * that memory does not grow with what a record expands to. */
static int decompress_more(struct hs_perf_data *d, struct hs_error *err)
{
	ZSTD_inBuffer in = {d->zin, d->zin_len, 0};
	ZSTD_outBuffer out;
	size_t r;

	if (d->zpos) {
		memmove(d->zbuf, d->zbuf + d->zpos, d->zlen - d->zpos);
		d->zlen -= d->zpos;
		d->zpos = 0;
	}
	hs_xgrow((void **)&d->zbuf, &d->zcap, d->zlen + HS_PERF_DATA_DECOMPRESS_CHUNK, 1);
	out = (ZSTD_outBuffer){d->zbuf, d->zlen + HS_PERF_DATA_DECOMPRESS_CHUNK, d->zlen};
	r = ZSTD_decompressStream(d->zctx, &out, &in);
	d->zout_total += out.pos - d->zlen;
	d->zlen = out.pos;
	d->zin += in.pos;
	d->zin_len -= in.pos;
	if (ZSTD_isError(r)) {
		hs_error_at(err, d->zoffset, "compressed record: %s", ZSTD_getErrorName(r));
		ZSTD_DCtx_reset(d->zctx, ZSTD_reset_session_only);
		return -EBADMSG;
	}
	d->zframe_end = r == 0;
	/* all input taken and room left over: the decoder holds nothing more back; or a frame
	 * ended and only padding to the record's alignment is left */
	if (d->zframe_end && d->zin_len < 8) {
		size_t k = 0;
		while (k < d->zin_len && d->zin[k] == 0)
			k++;
		if (k == d->zin_len)
			d->zin_len = 0;
	}
	/* a full output buffer: the decoder may hold more back even with all input taken */
	d->zmore = d->zin_len || out.pos == out.size;
	if (hs_decompress_over(d->zout_total, d->zin_total)) {
		/* a decompression bomb: what was decompressed is read, nothing after it */
		d->decompress_cut = true;
		d->decompress_cut_at = d->zoffset;
		d->zmore = false;
		d->pos = d->data_end;
	}
	return 0;
}

/* Starts reading a COMPRESSED record's compressed bytes. */
static int decompress_start(struct hs_perf_data *d, const uint8_t *src, size_t n, uint64_t off,
			    struct hs_error *err)
{
	if (!d->zctx && !(d->zctx = ZSTD_createDCtx()))
		hs_die_oom();
	d->zin = src;
	d->zin_len = n;
	d->zin_total += n;
	d->zoffset = off;
	d->compressed_records++;
	return decompress_more(d, err);
}

/* Takes in what perf writes for itself; returns true when the record is fully consumed here. */
static int absorb(struct hs_perf_data *d, const struct perf_event_header *h, uint64_t off, struct hs_error *err)
{
	struct hs_cursor c;
	int rc;

	hs_cursor_init(&c, h, h->size);
	hs_cursor_skip(&c, sizeof(*h));
	switch (h->type) {
	case HS_PERF_RECORD_HEADER_ATTR: {
		/* the attribute, then its ids to the end of the record */
		struct hs_cursor a = c;
		const uint8_t *attr;
		uint32_t asz;
		if (h->size < 8 + PERF_ATTR_SIZE_VER0)
			return 0;
		hs_cursor_skip(&a, 4); /* attr.type */
		asz = hs_cursor_u32(&a); /* attr.size */
		if (asz < PERF_ATTR_SIZE_VER0 || asz > h->size - 8u)
			asz = h->size - 8u > sizeof(struct perf_event_attr) ? sizeof(struct perf_event_attr) : h->size - 8u;
		attr = hs_cursor_bytes(&c, asz);
		if ((rc = add_attr(d, attr, asz, off, err)))
			return rc;
		name_events(d);
		return add_ids(d, &c, (h->size - 8u - asz) / 8, d->attrs.n - 1, off, err);
	}
	case HS_PERF_RECORD_HEADER_FEATURE:
		if (h->size >= 16) {
			uint64_t feat = hs_cursor_u64(&c);
			size_t n = hs_cursor_remaining(&c);
			if (feat < 256) {
				parse_feature(d, (int)feat, hs_cursor_bytes(&c, n), n);
				if (feat == HS_FEAT_EVENT_DESC)
					name_events(d);
			}
		}
		return 0;
	case HS_PERF_RECORD_HEADER_BUILD_ID:
		add_build_id(d, (const uint8_t *)h, h->size);
		return 0;
	}
	return 0;
}

static bool known_type(uint32_t t)
{
	return (t >= PERF_RECORD_MMAP && t <= PERF_RECORD_AUX_OUTPUT_HW_ID) ||
	       (t >= HS_PERF_RECORD_HEADER_ATTR && t <= HS_PERF_RECORD_FINISHED_INIT) || t == 83;
}

int hs_perf_data_next(struct hs_perf_data *d, struct hs_perf_data_rec *ret, struct hs_error *err)
{
	for (;;) {
		const struct perf_event_header *h;
		struct perf_event_header hh;
		uint64_t off;
		int rc;

		bool whole = false;

		if (d->zpos < d->zlen && d->zlen - d->zpos >= sizeof(hh)) {
			memcpy(&hh, d->zbuf + d->zpos, sizeof(hh));
			if (hh.size < sizeof(hh)) {
				hs_error_at(err, d->zoffset, "record size %u in a compressed record is impossible", hh.size);
				return -EBADMSG;
			}
			whole = hh.size <= d->zlen - d->zpos;
		}
		if (!whole && d->zmore) {
			/* more of the COMPRESSED record being read */
			if ((rc = decompress_more(d, err)))
				return rc;
			continue;
		}
		if (whole) {
			/* records decompressed from COMPRESSED records */
			hs_xgrow((void **)&d->scratch, &d->scratch_cap, hh.size, 1);
			memcpy(d->scratch, d->zbuf + d->zpos, hh.size);
			h = (const void *)d->scratch;
			off = d->zoffset;
			d->zpos += hh.size;
		} else {
			/* what is left of the decompressed bytes is the start of a record that the next
			 * compressed record completes */
			bool pending = d->zpos < d->zlen;
			if (!pending)
				d->zlen = d->zpos = 0;
			if (d->pos >= d->data_end) {
				if (pending && !d->decompress_cut) {
					d->truncated = true;
					d->truncated_at = d->pos;
				}
				return 0;
			}
			if (d->data_end - d->pos < sizeof(hh)) {
				d->truncated = true;
				d->truncated_at = d->pos;
				return 0;
			}
			memcpy(&hh, d->buf + d->pos, sizeof(hh));
			if (hh.size < sizeof(hh)) {
				hs_error_at(err, d->pos, "record size %u smaller than its header", hh.size);
				return -EBADMSG;
			}
			if (hh.size > d->data_end - d->pos) {
				if (d->data_end == d->len) { /* the file ends here: it was cut */
					d->truncated = true;
					d->truncated_at = d->pos;
					return 0;
				}
				hs_error_at(err, d->pos, "record of %u bytes runs past the end of the data section",
						   hh.size);
				return -EBADMSG;
			}
			/* records are 8-byte aligned in files; copy the rare one that is not */
			if ((d->pos & 7) == 0) {
				h = (const void *)(d->buf + d->pos);
			} else {
				hs_xgrow((void **)&d->scratch, &d->scratch_cap, hh.size, 1);
				memcpy(d->scratch, d->buf + d->pos, hh.size);
				h = (const void *)d->scratch;
			}
			off = d->pos;
			d->pos += hh.size;
			if (hh.type == HS_PERF_RECORD_COMPRESSED || hh.type == 83) {
				/* COMPRESSED2 (83) has a u64 data size before the data */
				size_t skip = hh.type == 83 ? 16 : 8;
				if (hh.size < skip)
					continue;
				if ((rc = decompress_start(d, (const uint8_t *)h + skip, hh.size - skip, off, err)))
					return rc;
				continue;
			}
			if (pending) {
				hs_error_at(err, off, "a compressed record ends inside a record");
				return -EBADMSG;
			}
		}
		if ((rc = absorb(d, h, off, err)))
			return rc;
		if (!known_type(h->type))
			d->unknown_records++;
		ret->h = h;
		ret->offset = off;
		ret->attr = h->type < HS_PERF_RECORD_HEADER_ATTR ? attr_of(d, h, NULL) : -1;
		return 1;
	}
}
