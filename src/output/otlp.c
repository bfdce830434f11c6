/* OTLP profiles: see otlp.h. The profile's tables are the dictionary's: its mapping, location,
 * function and stack ids, and its string ids, are the dictionary's indices (each table's entry 0
 * is the zero entry both ask for); the few strings OTLP needs beyond those (attribute keys) are
 * appended. */
#include "otlp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/hashmap.h"
#include "writers.h"

/* field numbers: collector/profiles/v1development/profiles_service.proto, profiles.proto,
 * common.proto, resource.proto */
enum {
	REQ_RESOURCE_PROFILES = 1,
	REQ_DICTIONARY = 2,

	DICT_MAPPING = 1,
	DICT_LOCATION = 2,
	DICT_FUNCTION = 3,
	DICT_LINK = 4,
	DICT_STRING = 5,
	DICT_ATTRIBUTE = 6,
	DICT_STACK = 7,

	RP_RESOURCE = 1,
	RP_SCOPE_PROFILES = 2,
	RESOURCE_ATTRIBUTES = 1,
	KV_KEY = 1,
	KV_VALUE = 2,
	ANY_STRING = 1,
	ANY_INT = 3,

	SP_SCOPE = 1,
	SP_PROFILES = 2,
	SCOPE_NAME = 1,
	SCOPE_VERSION = 2,

	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLES = 2,
	PROFILE_TIME_UNIX_NANO = 3,
	PROFILE_DURATION_NANO = 4,
	PROFILE_PERIOD_TYPE = 5,
	PROFILE_PERIOD = 6,
	PROFILE_ID = 7,
	VT_TYPE = 1,
	VT_UNIT = 2,

	SAMPLE_STACK = 1,
	SAMPLE_ATTRIBUTES = 2,
	SAMPLE_VALUES = 4,

	MAPPING_START = 1,
	MAPPING_LIMIT = 2,
	MAPPING_OFFSET = 3,
	MAPPING_FILENAME = 4,
	MAPPING_ATTRIBUTES = 5,

	LOCATION_MAPPING = 1,
	LOCATION_ADDRESS = 2,
	LOCATION_LINES = 3,
	LOCATION_ATTRIBUTES = 4,
	LINE_FUNCTION = 1,
	LINE_LINE = 2,

	FUNCTION_NAME = 1,
	FUNCTION_SYSTEM_NAME = 2,
	FUNCTION_FILENAME = 3,
	FUNCTION_START_LINE = 4,

	LINK_TRACE_ID = 1,
	LINK_SPAN_ID = 2,

	KVU_KEY = 1,
	KVU_VALUE = 2,

	STACK_LOCATIONS = 1,
};

/* the attribute keys, numbered in the string table on first use */
enum key { K_FRAME_TYPE, K_BUILD_ID, K_THREAD_NAME, K_THREAD_ID, K_PID, K_NKEYS };
static const char *const key_names[K_NKEYS] = {
	"profile.frame.type", "process.executable.build_id.gnu", "thread.name", "thread.id", "process.pid",
};

const char *hs_otlp_frame_type(enum hs_kind k)
{
	switch (k) {
	case HS_KIND_USER: return "native";
	case HS_KIND_KERNEL: return "kernel";
	case HS_KIND_JIT: return "jit"; /* a perf map's or jitdump's code: the runtime is not known */
	case HS_KIND_PYTHON: return "cpython";
	case HS_KIND_JAVA_INTERP:
	case HS_KIND_JAVA_C1:
	case HS_KIND_JAVA_C2: return "jvm";
	case HS_KIND_JS_INTERP:
	case HS_KIND_JS_BASELINE:
	case HS_KIND_JS_OPT:
	case HS_KIND_JS_BUILTIN: return "v8js";
	case HS_KIND_RUBY: return "ruby";
	case HS_KIND_PHP: return "php";
	case HS_KIND_PERL: return "perl";
	default: return NULL;
	}
}

/* One entry of the attribute table: its key, and a string value (a string id of the profile's,
 * or with sid 0 the C string str) or an integer */
struct attr {
	enum key key;
	uint32_t sid;
	const char *str;
	int64_t num;
	bool is_num;
};

/* A sample as OTLP has it: the profile's samples of one stack, process and thread merged */
struct row {
	uint32_t stack, name; /* the thread's name, a string id */
	int32_t pid, tid;
	size_t vals; /* its values: w->vals[vals .. vals + types) */
};

struct otlp_writer {
	const struct hs_profile *p;
	struct hs_pb_buf *b;
	struct hs_thread_names names;
	uint64_t str_next;
	uint64_t key_ix[K_NKEYS]; /* string ids, 0 = not used yet */
	HS_VEC(struct attr) attrs; /* attribute i + 1 */
	uint32_t kind_attr[HS_KIND_COUNT];
	struct hs_u64map build_id_attr, name_attr, tid_attr, pid_attr; /* value -> attribute index */
	HS_VEC(struct row) rows;
	HS_VEC(int64_t) vals;
};

static uint64_t key_str(struct otlp_writer *w, enum key k)
{
	if (!w->key_ix[k]) {
		uint32_t id = hs_profile_find_str(w->p, key_names[k], strlen(key_names[k]));
		w->key_ix[k] = id != UINT32_MAX && id ? id : w->str_next++;
	}
	return w->key_ix[k];
}

static uint32_t add_attr(struct otlp_writer *w, struct attr a)
{
	key_str(w, a.key);
	hs_vec_push(&w->attrs, a);
	return (uint32_t)w->attrs.n;
}

/* the attribute (key, value) through memo: one table entry per value */
static uint32_t memo_attr(struct otlp_writer *w, struct hs_u64map *memo, uint64_t value, struct attr a)
{
	uint64_t ix;

	if (hs_u64map_get(memo, value, &ix))
		return (uint32_t)ix;
	ix = add_attr(w, a);
	hs_u64map_put(memo, value, ix);
	return (uint32_t)ix;
}

static void any_value(struct hs_pb_buf *b, uint32_t field, const char *s, size_t len, int64_t num, bool is_num)
{
	size_t m = hs_pb_begin(b, field);

	if (is_num) { /* written even when 0: a oneof's value is there or not */
		hs_pb_key(b, ANY_INT, HS_PB_VARINT);
		hs_pb_varint(b, (uint64_t)num);
	} else {
		hs_pb_bytes(b, ANY_STRING, s, len);
	}
	hs_pb_end(b, m);
}

static void packed(struct hs_pb_buf *b, uint32_t field, const uint32_t *v, size_t n)
{
	size_t m;

	if (!n)
		return;
	m = hs_pb_begin(b, field);
	for (size_t i = 0; i < n; i++)
		hs_pb_varint(b, v[i]);
	hs_pb_end(b, m);
}

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* The rows of the samples in sel (sample indices): merged by stack, process, thread */
static void make_rows(struct otlp_writer *w, const uint32_t *sel, size_t n)
{
	const struct hs_profile *p = w->p;
	size_t nt = p->types.n, out = 0;

	w->rows.n = 0;
	w->vals.n = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hs_sample *s = &p->samples.v[sel[i]];
		struct row r = {s->stack, hs_thread_name(&w->names, p, s), s->pid, s->tid, i};
		hs_vec_push(&w->rows, r);
	}
	qsort(w->rows.v, w->rows.n, sizeof(*w->rows.v), row_cmp);
	hs_vec_reserve(&w->vals, w->rows.n * nt);
	for (size_t i = 0; i < w->rows.n; i++) {
		struct row r = w->rows.v[i];
		const int64_t *v = hs_profile_sample_values(p, sel[r.vals]);
		if (out && !row_cmp(&w->rows.v[out - 1], &r)) {
			for (size_t t = 0; t < nt; t++)
				w->vals.v[w->rows.v[out - 1].vals + t] += v[t];
			continue;
		}
		r.vals = w->vals.n;
		for (size_t t = 0; t < nt; t++)
			w->vals.v[w->vals.n++] = v[t];
		w->rows.v[out++] = r;
	}
	w->rows.n = out;
}

static void value_type(struct hs_pb_buf *b, uint32_t field, const struct hs_value_type *t)
{
	size_t m = hs_pb_begin(b, field);

	hs_pb_uint(b, VT_TYPE, t->type);
	hs_pb_uint(b, VT_UNIT, t->unit);
	hs_pb_end(b, m);
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const uint8_t *)data)[i]) * 0x100000001b3ULL;
	return h;
}

/* The profile of sample type t of the current rows; its id the same whenever the same
 * period's profile of the same resource is encoded (a resend) */
static void profile(struct otlp_writer *w, size_t t, bool pids, uint64_t res_hash)
{
	const struct hs_profile *p = w->p;
	struct hs_pb_buf *b = w->b;
	size_t m = hs_pb_begin(b, SP_PROFILES);
	uint8_t id[16];
	uint64_t h[2];

	value_type(b, PROFILE_SAMPLE_TYPE, &p->types.v[t]);
	for (size_t i = 0; i < w->rows.n; i++) {
		const struct row *r = &w->rows.v[i];
		int64_t v = w->vals.v[r->vals + t];
		uint32_t at[3];
		size_t na = 0, k;

		if (!v)
			continue;
		if (r->tid >= 0) {
			at[na++] = memo_attr(w, &w->tid_attr, (uint32_t)r->tid,
					     (struct attr){K_THREAD_ID, 0, NULL, r->tid, true});
			if (r->name)
				at[na++] = memo_attr(w, &w->name_attr, r->name, (struct attr){K_THREAD_NAME, r->name});
		}
		if (pids && r->pid >= 0)
			at[na++] = memo_attr(w, &w->pid_attr, (uint32_t)r->pid,
					     (struct attr){K_PID, 0, NULL, r->pid, true});
		k = hs_pb_begin(b, PROFILE_SAMPLES);
		hs_pb_uint(b, SAMPLE_STACK, r->stack);
		packed(b, SAMPLE_ATTRIBUTES, at, na);
		{
			size_t q = hs_pb_begin(b, SAMPLE_VALUES);
			hs_pb_varint(b, (uint64_t)v);
			hs_pb_end(b, q);
		}
		hs_pb_end(b, k);
	}
	hs_pb_fixed64(b, PROFILE_TIME_UNIX_NANO, (uint64_t)p->time_nanos);
	hs_pb_int(b, PROFILE_DURATION_NANO, p->duration_nanos);
	if (p->period_type.type || p->period_type.unit)
		value_type(b, PROFILE_PERIOD_TYPE, &p->period_type);
	hs_pb_int(b, PROFILE_PERIOD, p->period);
	h[0] = fnv(res_hash ^ 0x9e3779b97f4a7c15ULL, &p->time_nanos, sizeof(p->time_nanos));
	h[0] = fnv(h[0], &t, sizeof(t));
	h[1] = fnv(h[0] ^ 0x6a09e667f3bcc909ULL, &res_hash, sizeof(res_hash)) | 1; /* never all zero */
	memcpy(id, h, sizeof(id));
	hs_pb_bytes(b, PROFILE_ID, id, sizeof(id));
	hs_pb_end(b, m);
}

static void resource(struct otlp_writer *w, const struct hs_otlp_resource *r, const uint32_t *sel, size_t n)
{
	struct hs_pb_buf *b = w->b;
	size_t m = hs_pb_begin(b, REQ_RESOURCE_PROFILES), k, s;
	uint64_t h = 0xcbf29ce484222325ULL;

	k = hs_pb_begin(b, RP_RESOURCE);
	for (size_t i = 0; i < r->nattrs; i++) {
		const struct hs_otlp_attr *a = &r->attrs[i];
		size_t q = hs_pb_begin(b, RESOURCE_ATTRIBUTES);
		hs_pb_bytes(b, KV_KEY, a->key, strlen(a->key));
		any_value(b, KV_VALUE, a->str, a->str ? strlen(a->str) : 0, a->num, !a->str);
		hs_pb_end(b, q);
		h = fnv(h, a->key, strlen(a->key) + 1);
		h = a->str ? fnv(h, a->str, strlen(a->str) + 1) : fnv(h, &a->num, sizeof(a->num));
	}
	hs_pb_end(b, k);
	k = hs_pb_begin(b, RP_SCOPE_PROFILES);
	s = hs_pb_begin(b, SP_SCOPE);
	hs_pb_bytes(b, SCOPE_NAME, "hotstack", 8);
	hs_pb_bytes(b, SCOPE_VERSION, HOTSTACK_VERSION, strlen(HOTSTACK_VERSION));
	hs_pb_end(b, s);
	make_rows(w, sel, n);
	for (size_t t = 0; t < w->p->types.n; t++)
		profile(w, t, r->npids != 1, h);
	hs_pb_end(b, k);
	hs_pb_end(b, m);
}

static void dictionary(struct otlp_writer *w)
{
	const struct hs_profile *p = w->p;
	struct hs_pb_buf *b = w->b;
	size_t d = hs_pb_begin(b, REQ_DICTIONARY), m;
	uint32_t *map_attr = hs_xcalloc(p->mappings.n, sizeof(*map_attr));

	/* the attributes the dictionary's own entries refer to, first */
	for (size_t i = 1; i < p->mappings.n; i++)
		if (p->mappings.v[i].build_id)
			map_attr[i] = memo_attr(w, &w->build_id_attr, p->mappings.v[i].build_id,
						(struct attr){K_BUILD_ID, p->mappings.v[i].build_id});
	for (size_t i = 1; i < p->locations.n; i++) {
		enum hs_kind k = (enum hs_kind)p->locations.v[i].kind;
		if (k < HS_KIND_COUNT && !w->kind_attr[k] && hs_otlp_frame_type(k))
			w->kind_attr[k] = add_attr(w, (struct attr){K_FRAME_TYPE, 0, hs_otlp_frame_type(k)});
	}
	for (size_t i = 0; i < p->mappings.n; i++) {
		const struct hs_mapping *mp = &p->mappings.v[i];
		m = hs_pb_begin(b, DICT_MAPPING);
		hs_pb_uint(b, MAPPING_START, mp->start);
		hs_pb_uint(b, MAPPING_LIMIT, mp->limit);
		hs_pb_uint(b, MAPPING_OFFSET, mp->offset);
		hs_pb_uint(b, MAPPING_FILENAME, mp->file);
		packed(b, MAPPING_ATTRIBUTES, &map_attr[i], map_attr[i] ? 1 : 0);
		hs_pb_end(b, m);
	}
	free(map_attr);
	for (size_t i = 0; i < p->locations.n; i++) {
		const struct hs_location *l = &p->locations.v[i];
		uint32_t ka = i && l->kind < HS_KIND_COUNT ? w->kind_attr[l->kind] : 0;
		m = hs_pb_begin(b, DICT_LOCATION);
		hs_pb_uint(b, LOCATION_MAPPING, l->mapping);
		hs_pb_uint(b, LOCATION_ADDRESS, l->address);
		for (uint32_t j = 0; j < l->nlines; j++) {
			const struct hs_line *ln = &p->lines.v[l->line0 + j];
			size_t k = hs_pb_begin(b, LOCATION_LINES);
			hs_pb_uint(b, LINE_FUNCTION, ln->function);
			hs_pb_int(b, LINE_LINE, ln->line);
			hs_pb_end(b, k);
		}
		packed(b, LOCATION_ATTRIBUTES, &ka, ka ? 1 : 0);
		hs_pb_end(b, m);
	}
	for (size_t i = 0; i < p->functions.n; i++) {
		const struct hs_function *f = &p->functions.v[i];
		m = hs_pb_begin(b, DICT_FUNCTION);
		hs_pb_uint(b, FUNCTION_NAME, f->name);
		hs_pb_uint(b, FUNCTION_SYSTEM_NAME, f->system_name);
		hs_pb_uint(b, FUNCTION_FILENAME, f->filename);
		hs_pb_int(b, FUNCTION_START_LINE, f->start_line);
		hs_pb_end(b, m);
	}
	/* link_table[0]: the zero link with ids of their full lengths, as the schema asks */
	{
		static const uint8_t zero[16];
		m = hs_pb_begin(b, DICT_LINK);
		hs_pb_bytes(b, LINK_TRACE_ID, zero, 16);
		hs_pb_bytes(b, LINK_SPAN_ID, zero, 8);
		hs_pb_end(b, m);
	}
	for (size_t i = 0; i < p->str_off.n; i++)
		hs_pb_bytes(b, DICT_STRING, p->str_pool.v + p->str_off.v[i], p->str_len.v[i]);
	for (uint64_t ix = p->str_off.n; ix < w->str_next; ix++)
		for (size_t k = 0; k < K_NKEYS; k++)
			if (w->key_ix[k] == ix)
				hs_pb_bytes(b, DICT_STRING, key_names[k], strlen(key_names[k]));
	m = hs_pb_begin(b, DICT_ATTRIBUTE); /* attribute_table[0] */
	hs_pb_end(b, m);
	for (size_t i = 0; i < w->attrs.n; i++) {
		const struct attr *a = &w->attrs.v[i];
		const char *s = a->sid ? hs_profile_str(p, a->sid) : a->str;
		m = hs_pb_begin(b, DICT_ATTRIBUTE);
		hs_pb_uint(b, KVU_KEY, w->key_ix[a->key]);
		any_value(b, KVU_VALUE, s, a->is_num ? 0 : a->sid ? p->str_len.v[a->sid] : strlen(s), a->num, a->is_num);
		hs_pb_end(b, m);
	}
	for (size_t i = 0; i < p->stacks.n; i++) {
		m = hs_pb_begin(b, DICT_STACK);
		packed(b, STACK_LOCATIONS, hs_profile_stack_locs(p, (uint32_t)i), p->stacks.v[i].nlocs);
		hs_pb_end(b, m);
	}
	hs_pb_end(b, d);
}

void hs_otlp_encode(const struct hs_profile *p, const struct hs_otlp_resource *res, size_t nres, struct hs_pb_buf *b)
{
	struct otlp_writer w = {.p = p, .b = b, .str_next = p->str_off.n};
	struct hs_u64map of_pid = {0}; /* pid + 1 -> resource */
	size_t rest = nres, *count = hs_xcalloc(nres + 1, sizeof(*count)), *at;
	uint32_t *sel = hs_xcalloc(p->samples.n + 1, sizeof(*sel));
	uint32_t *which = hs_xcalloc(p->samples.n + 1, sizeof(*which));

	hs_thread_names_init(&w.names, p);
	for (size_t r = nres; r-- > 0;) {
		if (!res[r].npids)
			rest = r;
		for (size_t i = 0; i < res[r].npids; i++)
			hs_u64map_put(&of_pid, (uint64_t)(uint32_t)res[r].pids[i] + 1, r);
	}
	/* each sample's resource (nres: none), then the samples by resource */
	for (size_t i = 0; i < p->samples.n; i++) {
		uint64_t r;
		which[i] = hs_u64map_get(&of_pid, (uint64_t)(uint32_t)p->samples.v[i].pid + 1, &r) ? (uint32_t)r
												   : (uint32_t)rest;
		count[which[i]]++;
	}
	at = hs_xcalloc(nres + 1, sizeof(*at));
	for (size_t r = 1; r <= nres; r++)
		at[r] = at[r - 1] + count[r - 1];
	for (size_t i = 0; i < p->samples.n; i++)
		sel[at[which[i]]++] = (uint32_t)i;
	for (size_t r = 0, off = 0; r < nres; off += count[r++])
		if (count[r])
			resource(&w, &res[r], sel + off, count[r]);
	dictionary(&w);
	free(at);
	free(which);
	free(sel);
	free(count);
	hs_u64map_release(&of_pid);
	hs_u64map_release(&w.build_id_attr);
	hs_u64map_release(&w.name_attr);
	hs_u64map_release(&w.tid_attr);
	hs_u64map_release(&w.pid_attr);
	hs_vec_free(&w.attrs);
	hs_vec_free(&w.rows);
	hs_vec_free(&w.vals);
	hs_thread_names_release(&w.names);
}

/* -o x.otlp.pb: a resource per process, named by its main thread (or its first sample's), with
 * the samples of no known process in one named "unknown"; the request uncompressed, as
 * protoc --decode reads it */
int hs_write_otlp(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	struct hs_u64map first = {0}; /* pid + 1 -> its sample that names it, + 1 */
	struct hs_thread_names names;
	HS_VEC(int32_t) pids = {0};
	struct hs_otlp_resource *res;
	struct hs_otlp_attr *attrs;
	struct hs_pb_buf b = {0};
	char host[256] = "";
	size_t n = 0;

	(void)o;
	if (gethostname(host, sizeof(host) - 1))
		host[0] = 0;
	hs_thread_names_init(&names, p);
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		uint64_t key = (uint64_t)(uint32_t)s->pid + 1, prev;
		if (s->pid < 0)
			continue;
		if (!hs_u64map_get(&first, key, &prev)) {
			hs_vec_push(&pids, s->pid);
			hs_u64map_put(&first, key, i + 1);
		} else if (s->tid == s->pid && p->samples.v[prev - 1].tid != s->pid) {
			hs_u64map_put(&first, key, i + 1);
		}
	}
	res = hs_xcalloc(pids.n + 1, sizeof(*res));
	attrs = hs_xcalloc((pids.n + 1) * 3, sizeof(*attrs));
	for (size_t i = 0; i < pids.n; i++, n++) {
		uint64_t s;
		hs_u64map_get(&first, (uint64_t)(uint32_t)pids.v[i] + 1, &s);
		attrs[3 * n] = (struct hs_otlp_attr){"service.name",
						     hs_profile_str(p, hs_thread_name(&names, p, &p->samples.v[s - 1]))};
		attrs[3 * n + 1] = (struct hs_otlp_attr){"host.name", host};
		attrs[3 * n + 2] = (struct hs_otlp_attr){"process.pid", NULL, pids.v[i]};
		res[n] = (struct hs_otlp_resource){&attrs[3 * n], host[0] ? 3 : 2, &pids.v[i], 1};
		if (!host[0])
			attrs[3 * n + 1] = attrs[3 * n + 2];
	}
	attrs[3 * n] = (struct hs_otlp_attr){"service.name", "unknown"};
	attrs[3 * n + 1] = (struct hs_otlp_attr){"host.name", host};
	res[n] = (struct hs_otlp_resource){&attrs[3 * n], host[0] ? 2 : 1, NULL, 0};
	hs_otlp_encode(p, res, n + 1, &b);
	hs_outfile_write(out, b.v, b.n);
	hs_pb_buf_release(&b);
	free(res);
	free(attrs);
	hs_vec_free(&pids);
	hs_u64map_release(&first);
	hs_thread_names_release(&names);
	return out->err ? -out->err : 0;
}
