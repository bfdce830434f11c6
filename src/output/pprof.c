/* pprof: the profile as a gzip-compressed perftools.profiles.Profile (google/pprof
 * proto/profile.proto). The profile's table ids are the pprof ids, its string ids the string
 * table indices; the few strings pprof needs beyond those (label keys) are appended. */
#include "writers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/protobuf.h"
#include "profile/filter.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* Strings and mappings added to what the profile holds, numbered on first use. */
enum extra_str {
	X_PID, X_TID, X_COMM, X_TIMESTAMP, X_NANOSECONDS,
	X_KERNEL, X_JIT, X_JAVA_INTERP, X_JAVA_C1, X_JAVA_C2, /* the synthetic mappings' names, in order */
	X_JS_INTERP, X_JS_BASELINE, X_JS_OPT, X_JS_BUILTIN,
	X_NSTR
};
static const char *const extra_names[X_NSTR] = {
	"pid", "tid", "comm", "timestamp", "nanoseconds", "[kernel.kallsyms]", "[jit]",
	HS_JAVA_INTERP_MODULE, HS_JAVA_C1_MODULE, HS_JAVA_C2_MODULE,
	HS_JS_INTERP_MODULE, HS_JS_BASELINE_MODULE, HS_JS_OPT_MODULE, HS_JS_BUILTIN_MODULE,
};
#define NSYNTH (X_NSTR - X_KERNEL)

struct pprof_writer {
	const struct hs_profile *p;
	struct hs_pb_buf b;
	uint64_t str_next;
	uint64_t str_ix[X_NSTR]; /* 0 = not used */
	uint64_t map_synth[NSYNTH + 1]; /* synthetic mapping ids by synthetic_mapping(), 0 = not used */
	uint64_t nsynth;
};

/* A string the profile may already hold (a profile read from pprof holds the label keys), so
 * that a profile read back writes the same string table. */
static uint64_t xstr(struct pprof_writer *w, enum extra_str s)
{
	if (!w->str_ix[s]) {
		uint32_t id = hs_profile_find_str(w->p, extra_names[s], strlen(extra_names[s]));
		w->str_ix[s] = id != UINT32_MAX ? id : w->str_next++;
	}
	return w->str_ix[s];
}

static void value_type(struct hs_pb_buf *b, uint32_t field, const struct hs_value_type *t)
{
	size_t m = hs_pb_begin(b, field);

	hs_pb_uint(b, VALUE_TYPE_TYPE, t->type);
	hs_pb_uint(b, VALUE_TYPE_UNIT, t->unit);
	hs_pb_end(b, m);
}

static void label(struct pprof_writer *w, uint64_t key, uint64_t str, int64_t num, uint64_t unit)
{
	size_t m = hs_pb_begin(&w->b, SAMPLE_LABEL);

	hs_pb_uint(&w->b, LABEL_KEY, key);
	hs_pb_uint(&w->b, LABEL_STR, str);
	hs_pb_int(&w->b, LABEL_NUM, num);
	hs_pb_uint(&w->b, LABEL_NUM_UNIT, unit);
	hs_pb_end(&w->b, m);
}

static void samples(struct pprof_writer *w)
{
	const struct hs_profile *p = w->p;
	struct hs_pb_buf *b = &w->b;

	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		const struct hs_stack *st = &p->stacks.v[s->stack];
		const uint32_t *locs = hs_profile_stack_locs(p, s->stack);
		const int64_t *vals = hs_profile_sample_values(p, (uint32_t)i);
		size_t m = hs_pb_begin(b, PROFILE_SAMPLE), k;

		if (st->nlocs) {
			k = hs_pb_begin(b, SAMPLE_LOCATION_ID);
			for (uint32_t j = 0; j < st->nlocs; j++)
				hs_pb_varint(b, locs[j]);
			hs_pb_end(b, k);
		}
		if (p->types.n) {
			k = hs_pb_begin(b, SAMPLE_VALUE);
			for (size_t j = 0; j < p->types.n; j++)
				hs_pb_varint(b, (uint64_t)vals[j]);
			hs_pb_end(b, k);
		}
		if (s->pid >= 0)
			label(w, xstr(w, X_PID), 0, s->pid, 0);
		if (s->tid >= 0)
			label(w, xstr(w, X_TID), 0, s->tid, 0);
		if (s->comm)
			label(w, xstr(w, X_COMM), s->comm, 0, 0);
		if (s->time)
			label(w, xstr(w, X_TIMESTAMP), 0, (int64_t)s->time, xstr(w, X_NANOSECONDS));
		hs_pb_end(b, m);
	}
}

struct map_flags {
	bool functions, filenames, line_numbers, inline_frames;
};

static void mapping(struct hs_pb_buf *b, uint64_t id, const struct hs_mapping *mp, uint64_t file,
		    const struct map_flags *f)
{
	size_t m = hs_pb_begin(b, PROFILE_MAPPING);

	hs_pb_uint(b, MAPPING_ID, id);
	hs_pb_uint(b, MAPPING_MEMORY_START, mp->start);
	hs_pb_uint(b, MAPPING_MEMORY_LIMIT, mp->limit);
	hs_pb_uint(b, MAPPING_FILE_OFFSET, mp->offset);
	hs_pb_uint(b, MAPPING_FILENAME, file);
	hs_pb_uint(b, MAPPING_BUILD_ID, mp->build_id);
	hs_pb_bool(b, MAPPING_HAS_FUNCTIONS, f->functions);
	hs_pb_bool(b, MAPPING_HAS_FILENAMES, f->filenames);
	hs_pb_bool(b, MAPPING_HAS_LINE_NUMBERS, f->line_numbers);
	hs_pb_bool(b, MAPPING_HAS_INLINE_FRAMES, f->inline_frames);
	hs_pb_end(b, m);
}

/* pprof has no field for the kind of code: readers guess it from the mapping (hs_kind_guess).
 * A kernel, JIT or Java location with no mapping (read from folded text, or read from a JVM at
 * sample time) gets a placeholder mapping named so that the guess comes out right: 1 the
 * kernel's, 2 JIT code's, 3 to 5 interpreted, C1 and C2 Java's, 6 to 9 interpreted, baseline,
 * optimised JavaScript's and V8's builtins. */
static uint32_t synthetic_mapping(struct pprof_writer *w, const struct hs_location *l)
{
	const struct hs_profile *p = w->p;
	const char *fn;

	if (l->mapping || (l->kind != HS_KIND_KERNEL && !hs_kind_is_jit(l->kind)))
		return 0;
	fn = l->nlines ? hs_profile_str(p, p->functions.v[p->lines.v[l->line0 + l->nlines - 1].function].name)
		       : NULL;
	if (hs_kind_guess(NULL, l->address, fn) == l->kind)
		return 0;
	switch (l->kind) {
	case HS_KIND_KERNEL: return 1;
	case HS_KIND_JAVA_INTERP: return 3;
	case HS_KIND_JAVA_C1: return 4;
	case HS_KIND_JAVA_C2: return 5;
	case HS_KIND_JS_INTERP: return 6;
	case HS_KIND_JS_BASELINE: return 7;
	case HS_KIND_JS_OPT: return 8;
	case HS_KIND_JS_BUILTIN: return 9;
	default: return 2;
	}
}

static void mappings(struct pprof_writer *w)
{
	const struct hs_profile *p = w->p;
	struct map_flags *flags = hs_xcalloc(p->mappings.n + NSYNTH, sizeof(*flags));

	for (size_t i = 1; i < p->locations.n; i++) {
		const struct hs_location *l = &p->locations.v[i];
		struct map_flags *f = &flags[l->mapping];
		uint32_t s = synthetic_mapping(w, l);

		if (s && !w->map_synth[s])
			w->map_synth[s] = p->mappings.n + w->nsynth++;
		if (s)
			f = &flags[p->mappings.n + s - 1];
		if (!l->nlines)
			continue;
		f->functions = true;
		if (l->nlines > 1)
			f->inline_frames = true;
		for (uint32_t j = 0; j < l->nlines; j++) {
			const struct hs_line *ln = &p->lines.v[l->line0 + j];
			if (p->functions.v[ln->function].filename)
				f->filenames = true;
			if (ln->line)
				f->line_numbers = true;
		}
	}
	for (size_t i = 1; i < p->mappings.n; i++)
		mapping(&w->b, i, &p->mappings.v[i], p->mappings.v[i].file, &flags[i]);
	for (uint32_t s = 1; s <= NSYNTH; s++)
		if (w->map_synth[s])
			mapping(&w->b, w->map_synth[s], &(struct hs_mapping){0}, xstr(w, X_KERNEL + s - 1),
				&flags[p->mappings.n + s - 1]);
	free(flags);
}

static void locations(struct pprof_writer *w)
{
	const struct hs_profile *p = w->p;
	struct hs_pb_buf *b = &w->b;

	for (size_t i = 1; i < p->locations.n; i++) {
		const struct hs_location *l = &p->locations.v[i];
		uint32_t s = synthetic_mapping(w, l);
		size_t m = hs_pb_begin(b, PROFILE_LOCATION);

		hs_pb_uint(b, LOCATION_ID, i);
		hs_pb_uint(b, LOCATION_MAPPING_ID, s ? w->map_synth[s] : l->mapping);
		hs_pb_uint(b, LOCATION_ADDRESS, l->address);
		for (uint32_t j = 0; j < l->nlines; j++) {
			const struct hs_line *ln = &p->lines.v[l->line0 + j];
			size_t k = hs_pb_begin(b, LOCATION_LINE);

			hs_pb_uint(b, LINE_FUNCTION_ID, ln->function);
			hs_pb_int(b, LINE_LINE, ln->line);
			hs_pb_end(b, k);
		}
		hs_pb_end(b, m);
	}
}

static void functions(struct pprof_writer *w)
{
	const struct hs_profile *p = w->p;
	struct hs_pb_buf *b = &w->b;

	for (size_t i = 1; i < p->functions.n; i++) {
		const struct hs_function *f = &p->functions.v[i];
		size_t m = hs_pb_begin(b, PROFILE_FUNCTION);

		hs_pb_uint(b, FUNCTION_ID, i);
		hs_pb_uint(b, FUNCTION_NAME, f->name);
		hs_pb_uint(b, FUNCTION_SYSTEM_NAME, f->system_name);
		hs_pb_uint(b, FUNCTION_FILENAME, f->filename);
		hs_pb_int(b, FUNCTION_START_LINE, f->start_line);
		hs_pb_end(b, m);
	}
}

static void strings(struct pprof_writer *w)
{
	const struct hs_profile *p = w->p;
	const char *order[X_NSTR];
	size_t n = 0;

	for (size_t i = 0; i < p->str_off.n; i++)
		hs_pb_bytes(&w->b, PROFILE_STRING_TABLE, p->str_pool.v + p->str_off.v[i], p->str_len.v[i]);
	/* the extras the profile did not hold, in the order xstr() numbered them */
	for (uint64_t ix = p->str_off.n; ix < w->str_next; ix++)
		for (size_t k = 0; k < X_NSTR; k++)
			if (w->str_ix[k] == ix)
				order[n++] = extra_names[k];
	for (size_t i = 0; i < n; i++)
		hs_pb_bytes(&w->b, PROFILE_STRING_TABLE, order[i], strlen(order[i]));
}

/* gzip (RFC 1952) via zlib: windowBits 15 + 16 asks deflate for the gzip wrapper. */
int hs_gzip_out(const uint8_t *data, size_t len, struct hs_outfile *out)
{
	z_stream z;
	uint8_t chunk[64 * 1024];
	int zr;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	do {
		/* avail_in is a uInt: feed large buffers in pieces */
		if (!z.avail_in && len) {
			z.avail_in = (uInt)HS_MIN(len, (size_t)1 << 30);
			len -= z.avail_in;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, len || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			break;
		hs_outfile_write(out, chunk, sizeof(chunk) - z.avail_out);
	} while (zr != Z_STREAM_END && !out->err);
	deflateEnd(&z);
	if (out->err)
		return -out->err;
	return zr == Z_STREAM_END ? 0 : -EIO;
}

static int write_profile(const struct hs_profile *p, struct hs_outfile *out)
{
	struct pprof_writer w = {.p = p, .str_next = p->str_off.n};
	struct hs_pb_buf *b = &w.b;
	int e;

	for (size_t i = 0; i < p->types.n; i++)
		value_type(b, PROFILE_SAMPLE_TYPE, &p->types.v[i]);
	samples(&w);
	mappings(&w);
	locations(&w);
	functions(&w);
	strings(&w);
	hs_pb_int(b, PROFILE_TIME_NANOS, p->time_nanos);
	hs_pb_int(b, PROFILE_DURATION_NANOS, p->duration_nanos);
	if (p->period_type.type || p->period_type.unit)
		value_type(b, PROFILE_PERIOD_TYPE, &p->period_type);
	hs_pb_int(b, PROFILE_PERIOD, p->period);
	if (p->comments.n) {
		size_t m = hs_pb_begin(b, PROFILE_COMMENT);
		for (size_t i = 0; i < p->comments.n; i++)
			hs_pb_varint(b, p->comments.v[i]);
		hs_pb_end(b, m);
	}
	if (p->types.n)
		hs_pb_uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, p->types.v[p->types.n - 1].type);
	e = hs_gzip_out(b->v, b->n, out);
	hs_pb_buf_release(b);
	if (e < 0)
		return e;
	return out->err ? -out->err : 0;
}

/* Whether p must be copied for pprof's tools: its main binary is not the first mapping
 * (profile.proto: "mapping[0] will be the main binary"; pprof shows its file as the profile's
 * "File:"), or it is not at the file's own addresses. go tool pprof's -disasm and -list look
 * a sample's address up in the binary's symbols unmoved (cmd/pprof's ObjAddr), so the main
 * binary's addresses must be those of the file, which a PIE's, loaded elsewhere, are not;
 * google/pprof's binutils get the same file addresses from the mapping (elfexec.GetBase:
 * start - offset + the segment's offset - its address, 0 for these). Libraries keep their
 * runtime addresses: moved too, they would overlap the main binary's. */
static bool needs_main_first(const struct hs_profile *p, uint32_t main)
{
	if (main > 1)
		return true;
	for (uint32_t i = 1; main && i < p->mappings.n; i++)
		if (p->mappings.v[i].file == p->mappings.v[main].file &&
		    p->mappings.v[i].kind == p->mappings.v[main].kind && p->mappings.v[i].elf_base)
			return true;
	return false;
}

int hs_write_pprof(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	uint32_t main = hs_profile_main_mapping(p);
	struct hs_profile *q;
	int e;

	(void)o;
	if (!needs_main_first(p, main))
		return write_profile(p, out);
	if ((e = hs_profile_main_first(p, main, &q)) < 0)
		return e;
	e = write_profile(q, out);
	hs_profile_free(q);
	return e;
}
