/* The Firefox Profiler's processed profile format (version 70 of its preprocessedProfileVersion,
 * the tables shared by all threads): a thread per recorded thread with its samples' times, stacks
 * and CPU time, off-CPU periods as markers whose cause is the stack the thread blocked in, and a
 * category per kind of code. Samples without times are laid end to end (timeline.c). */
#include <stdlib.h>
#include <string.h>

#include "writers.h"

#define PROCESSED_VERSION 70
#define GECKO_VERSION 36

/* Categories by kind of code, in meta.categories' order; the first grey one is the default. */
enum { CAT_OTHER, CAT_NATIVE, CAT_KERNEL, CAT_JIT, CAT_PYTHON, CAT_JAVA, CAT_JS, CAT_RUBY, CAT_PHP, CAT_PERL, CAT_OFF };

static const char categories[] =
	"[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Native\",\"color\":\"blue\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"JIT\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Python\",\"color\":\"lightblue\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Java\",\"color\":\"brown\",\"subcategories\":[\"Interpreted\",\"C1\",\"C2\"]},"
	"{\"name\":\"JavaScript\",\"color\":\"yellow\",\"subcategories\":[\"Interpreter\",\"Baseline\",\"Optimized\","
	"\"Builtin\"]},"
	"{\"name\":\"Ruby\",\"color\":\"red\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"PHP\",\"color\":\"purple\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Perl\",\"color\":\"magenta\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Off-CPU\",\"color\":\"darkgrey\",\"subcategories\":[\"Other\"]}]";

static void category_of(uint8_t kind, uint32_t *cat, uint32_t *sub)
{
	*sub = 0;
	switch (kind) {
	case HS_KIND_USER: *cat = CAT_NATIVE; break;
	case HS_KIND_KERNEL: *cat = CAT_KERNEL; break;
	case HS_KIND_JIT: *cat = CAT_JIT; break;
	case HS_KIND_PYTHON: *cat = CAT_PYTHON; break;
	case HS_KIND_JAVA_INTERP: case HS_KIND_JAVA_C1: case HS_KIND_JAVA_C2:
		*cat = CAT_JAVA;
		*sub = kind - HS_KIND_JAVA_INTERP;
		break;
	case HS_KIND_JS_INTERP: case HS_KIND_JS_BASELINE: case HS_KIND_JS_OPT: case HS_KIND_JS_BUILTIN:
		*cat = CAT_JS;
		*sub = kind - HS_KIND_JS_INTERP;
		break;
	case HS_KIND_RUBY: *cat = CAT_RUBY; break;
	case HS_KIND_PHP: *cat = CAT_PHP; break;
	case HS_KIND_PERL: *cat = CAT_PERL; break;
	default: *cat = CAT_OTHER; break;
	}
}

struct u32vec {
	uint32_t *v;
	size_t n, cap;
};

/* The output's string table (stringArray), interned. */
struct strtab {
	struct hs_strbuf pool;
	HS_VEC(size_t) offs; /* string i is pool[offs[i] .. offs[i + 1] - 1), NUL-terminated */
	struct hs_index ix;
};

struct str_key {
	const struct strtab *t;
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t id)
{
	const struct str_key *k = ctx;
	return k->t->offs.v[id + 1] - k->t->offs.v[id] - 1 == k->len && !memcmp(k->t->pool.buf + k->t->offs.v[id], k->s, k->len);
}

static uint32_t str_id(struct strtab *t, const char *s)
{
	struct str_key k = {t, s, strlen(s)};
	uint64_t h = hs_hash_bytes(s, k.len, 0);
	uint32_t id = hs_index_find(&t->ix, h, str_eq, &k);

	if (id != UINT32_MAX)
		return id;
	if (!t->offs.n)
		hs_vec_push(&t->offs, 0);
	id = (uint32_t)t->offs.n - 1;
	hs_strbuf_add(&t->pool, s, k.len + 1);
	hs_vec_push(&t->offs, t->pool.len);
	hs_index_insert(&t->ix, h, id);
	return id;
}

struct func {
	uint32_t name, file, module, cat; /* name, file, module: ids in the string table */
	int64_t line;
	bool is_js;
};

struct frame {
	uint32_t func, cat, sub, depth;
	int32_t lib;
	int64_t address, line; /* -1, 0 when unknown */
};

struct tables {
	struct strtab str;
	HS_VEC(struct func) funcs;
	HS_VEC(struct frame) frames;
	HS_VEC(uint32_t) stack_frame;
	HS_VEC(uint32_t) stack_prefix; /* UINT32_MAX for a root */
	HS_VEC(uint32_t) libs;         /* the profile's string id of each lib's file */
	HS_VEC(uint32_t) lib_build_id;
	HS_VEC(uint32_t) resources;    /* string table id of each resource's name */
	HS_VEC(int32_t) resource_lib;  /* -1 for a script's file */
	HS_VEC(uint32_t) sources;      /* string table id of each source file */
	struct hs_u64map lib_ix, res_ix, src_ix, frame_ix, stack_ix;
	struct hs_index func_ix;
	HS_VEC(uint32_t) stack_of; /* per profile stack + 1: our stack node + 1, 0 for not yet */
};

static bool func_eq(const void *ctx, uint32_t id)
{
	const struct tables *t = ((const void *const *)ctx)[0];
	const struct func *f = ((const void *const *)ctx)[1];
	const struct func *g = &t->funcs.v[id];
	return f->name == g->name && f->file == g->file && f->module == g->module && f->cat == g->cat;
}

static int32_t lib_of(struct tables *t, const struct hs_mapping *m)
{
	uint64_t v;

	if (!m->file)
		return -1;
	if (hs_u64map_get(&t->lib_ix, m->file, &v))
		return (int32_t)v;
	hs_vec_push(&t->libs, m->file);
	hs_vec_push(&t->lib_build_id, m->build_id);
	hs_u64map_put(&t->lib_ix, m->file, t->libs.n - 1);
	return (int32_t)t->libs.n - 1;
}

static int32_t resource_of(struct tables *t, const char *module, int32_t lib)
{
	uint32_t name;
	uint64_t v;

	if (!*module)
		return -1;
	name = str_id(&t->str, module);
	if (hs_u64map_get(&t->res_ix, name, &v))
		return (int32_t)v;
	hs_vec_push(&t->resources, name);
	hs_vec_push(&t->resource_lib, lib);
	hs_u64map_put(&t->res_ix, name, t->resources.n - 1);
	return (int32_t)t->resources.n - 1;
}

static uint32_t func_of(struct tables *t, const struct func *f)
{
	const void *ctx[2] = {t, f};
	uint64_t h = hs_hash_combine(hs_hash_combine(hs_hash_u64(f->name), f->file), (uint64_t)f->module << 8 | f->cat);
	uint32_t id = hs_index_find(&t->func_ix, h, func_eq, ctx);
	uint64_t v;

	if (id != UINT32_MAX)
		return id;
	hs_vec_push(&t->funcs, *f);
	hs_index_insert(&t->func_ix, h, (uint32_t)t->funcs.n - 1);
	if (f->file && !hs_u64map_get(&t->src_ix, f->file, &v)) {
		hs_vec_push(&t->sources, f->file);
		hs_u64map_put(&t->src_ix, f->file, t->sources.n - 1);
	}
	return (uint32_t)t->funcs.n - 1;
}

/* A location's address relative to its module's load base, as the viewer takes it; where that
 * is no number JavaScript holds exactly (kernel addresses), relative to the mapping's start
 * and file offset; -1 for none. */
static int64_t lib_address(const struct hs_location *l, const struct hs_mapping *m)
{
	const uint64_t exact = (uint64_t)1 << 53;

	if (!l->mapping || !l->address)
		return -1;
	if (l->address >= m->elf_base && l->address - m->elf_base < exact)
		return (int64_t)(l->address - m->elf_base);
	if (l->address >= m->start && l->address - m->start + m->offset < exact)
		return (int64_t)(l->address - m->start + m->offset);
	return -1;
}

/* The frames of location loc, outermost first, appended to ids. */
static void location_frames(struct tables *t, const struct hs_profile *p, uint32_t loc, struct hs_frame **fr,
			    size_t *fcap, struct u32vec *ids)
{
	const struct hs_location *l = &p->locations.v[loc];
	const struct hs_mapping *m = &p->mappings.v[l->mapping];
	size_t n = hs_location_frames(p, loc, fr, fcap, 0);
	int32_t lib = l->mapping ? lib_of(t, m) : -1;
	uint32_t cat, sub;

	category_of(l->kind, &cat, &sub);
	for (size_t j = 0; j < n; j++) {
		uint64_t key = (uint64_t)loc << 32 | (uint32_t)j, v;
		const struct hs_frame *f = &(*fr)[j];
		struct func fn;
		struct frame fm;

		if (hs_u64map_get(&t->frame_ix, key, &v)) {
			hs_vec_push(ids, (uint32_t)v);
			continue;
		}
		fn = (struct func){str_id(&t->str, l->nlines ? f->name : hs_profile_location_name(p, loc)),
				   *f->file ? str_id(&t->str, f->file) : 0, str_id(&t->str, f->module), cat, 0,
				   hs_kind_is_script(l->kind) || cat == CAT_JAVA || cat == CAT_JS};
		if (l->nlines) {
			const struct hs_line *ln = &p->lines.v[l->line0 + (l->nlines - 1 - j)];
			fn.line = p->functions.v[ln->function].start_line;
		}
		/* "" is string 0: a func without a file has none */
		if (!*f->file)
			fn.file = 0;
		fm = (struct frame){func_of(t, &fn), cat, sub, (uint32_t)j, lib, -1, f->line};
		resource_of(t, f->module, lib);
		fm.address = lib_address(l, m);
		hs_vec_push(&t->frames, fm);
		hs_u64map_put(&t->frame_ix, key, t->frames.n - 1);
		hs_vec_push(ids, (uint32_t)t->frames.n - 1);
	}
}

/* The stack node of profile stack st, its frames added where new. */
static uint32_t stack_node(struct tables *t, const struct hs_profile *p, uint32_t st, struct hs_frame **fr, size_t *fcap,
			   struct u32vec *ids)
{
	const struct hs_stack *s = &p->stacks.v[st];
	const uint32_t *locs = hs_profile_stack_locs(p, st);
	uint32_t node = UINT32_MAX;

	if (t->stack_of.v[st])
		return t->stack_of.v[st] - 1;
	ids->n = 0;
	for (uint32_t i = s->nlocs; i-- > 0;)
		location_frames(t, p, locs[i], fr, fcap, ids);
	for (size_t i = 0; i < ids->n; i++) {
		uint64_t key = (uint64_t)(node + 1) << 32 | ids->v[i], v;

		if (hs_u64map_get(&t->stack_ix, key, &v)) {
			node = (uint32_t)v;
			continue;
		}
		hs_vec_push(&t->stack_frame, ids->v[i]);
		hs_vec_push(&t->stack_prefix, node);
		node = (uint32_t)t->stack_frame.n - 1;
		hs_u64map_put(&t->stack_ix, key, node);
	}
	t->stack_of.v[st] = node + 1;
	return node;
}

static void add_null_or_u32(struct hs_strbuf *sb, bool first, uint32_t v)
{
	if (v == UINT32_MAX)
		hs_strbuf_adds(sb, first ? "null" : ",null");
	else
		hs_strbuf_addf(sb, first ? "%u" : ",%u", v);
}

/* Appends ,"key":[...] with the n values expr(0) .. expr(n - 1), each printed with fmt. */
#define COLUMN(sb, key, n, fmt, expr)                                     \
	do {                                                              \
		hs_strbuf_adds(sb, ",\"" key "\":[");                     \
		for (size_t i_ = 0; i_ < (n); i_++)                      \
			hs_strbuf_addf(sb, i_ ? "," fmt : fmt, expr(i_)); \
		hs_strbuf_addc(sb, ']');                                  \
	} while (0)

static void write_shared(struct hs_strbuf *sb, const struct tables *t)
{
	size_t nst = t->stack_frame.n, nfr = t->frames.n, nfn = t->funcs.n, nres = t->resources.n, nsrc = t->sources.n;
	uint64_t v;

#define ST_FRAME(i) t->stack_frame.v[i]
#define ST_OFF(i) (t->stack_prefix.v[i] == UINT32_MAX ? 0 : (uint32_t)(i) - t->stack_prefix.v[i])
	hs_strbuf_addf(sb, ",\n\"shared\":{\"stackTable\":{\"length\":%zu", nst);
	COLUMN(sb, "frame", nst, "%u", ST_FRAME);
	COLUMN(sb, "prefixOffset", nst, "%u", ST_OFF);
	hs_strbuf_addf(sb, "},\n\"frameTable\":{\"length\":%zu", nfr);
#define FR_ADDR(i) (long long)t->frames.v[i].address
#define FR_LIB(i) (int)t->frames.v[i].lib
#define FR_DEPTH(i) t->frames.v[i].depth
#define FR_CAT(i) t->frames.v[i].cat
#define FR_SUB(i) t->frames.v[i].sub
#define FR_FUNC(i) t->frames.v[i].func
#define NUL(i) ""
	COLUMN(sb, "address", nfr, "%lld", FR_ADDR);
	COLUMN(sb, "lib", nfr, "%d", FR_LIB);
	COLUMN(sb, "inlineDepth", nfr, "%u", FR_DEPTH);
	COLUMN(sb, "category", nfr, "%u", FR_CAT);
	COLUMN(sb, "subcategory", nfr, "%u", FR_SUB);
	COLUMN(sb, "func", nfr, "%u", FR_FUNC);
	COLUMN(sb, "nativeSymbol", nfr, "null%s", NUL);
	COLUMN(sb, "innerWindowID", nfr, "null%s", NUL);
	hs_strbuf_adds(sb, ",\"line\":[");
	for (size_t i = 0; i < nfr; i++)
		add_null_or_u32(sb, !i, t->frames.v[i].line > 0 && t->frames.v[i].line < UINT32_MAX ? (uint32_t)t->frames.v[i].line : UINT32_MAX);
	hs_strbuf_adds(sb, "]");
	COLUMN(sb, "column", nfr, "null%s", NUL);
	COLUMN(sb, "originalLocation", nfr, "null%s", NUL);
	hs_strbuf_addf(sb, "},\n\"funcTable\":{\"length\":%zu", nfn);
#define FN_NAME(i) t->funcs.v[i].name
#define FN_JS(i) t->funcs.v[i].is_js ? "true" : "false"
	COLUMN(sb, "name", nfn, "%u", FN_NAME);
	COLUMN(sb, "isJS", nfn, "%s", FN_JS);
	COLUMN(sb, "relevantForJS", nfn, "false%s", NUL);
	hs_strbuf_adds(sb, ",\"resource\":[");
	for (size_t i = 0; i < nfn; i++) {
		bool got = t->funcs.v[i].module && hs_u64map_get(&t->res_ix, t->funcs.v[i].module, &v);
		hs_strbuf_addf(sb, i ? ",%d" : "%d", got ? (int)v : -1);
	}
	hs_strbuf_adds(sb, "],\"source\":[");
	for (size_t i = 0; i < nfn; i++) {
		bool got = t->funcs.v[i].file && hs_u64map_get(&t->src_ix, t->funcs.v[i].file, &v);
		add_null_or_u32(sb, !i, got ? (uint32_t)v : UINT32_MAX);
	}
	hs_strbuf_adds(sb, "],\"lineNumber\":[");
	for (size_t i = 0; i < nfn; i++)
		add_null_or_u32(sb, !i, t->funcs.v[i].line > 0 && t->funcs.v[i].line < UINT32_MAX ? (uint32_t)t->funcs.v[i].line : UINT32_MAX);
	hs_strbuf_adds(sb, "]");
	COLUMN(sb, "columnNumber", nfn, "null%s", NUL);
	COLUMN(sb, "originalLocation", nfn, "null%s", NUL);
#define RES_NAME(i) t->resources.v[i]
#define RES_TYPE(i) t->resource_lib.v[i] >= 0 ? 1 : 0
	hs_strbuf_addf(sb, "},\n\"resourceTable\":{\"length\":%zu", nres);
	COLUMN(sb, "name", nres, "%u", RES_NAME);
	COLUMN(sb, "host", nres, "null%s", NUL);
	COLUMN(sb, "type", nres, "%d", RES_TYPE);
	hs_strbuf_adds(sb, "},\n\"nativeSymbols\":{\"length\":0,\"libIndex\":[],\"address\":[],\"name\":[],"
			   "\"functionSize\":[]}");
#define SRC_FILE(i) t->sources.v[i]
	hs_strbuf_addf(sb, ",\n\"sources\":{\"length\":%zu", nsrc);
	COLUMN(sb, "id", nsrc, "null%s", NUL);
	COLUMN(sb, "filename", nsrc, "%u", SRC_FILE);
	COLUMN(sb, "startLine", nsrc, "1%s", NUL);
	COLUMN(sb, "startColumn", nsrc, "1%s", NUL);
	COLUMN(sb, "sourceMapURL", nsrc, "null%s", NUL);
	COLUMN(sb, "content", nsrc, "null%s", NUL);
	hs_strbuf_adds(sb, "},\n\"sourceLocationTable\":{\"length\":0,\"source\":[],\"line\":[],\"column\":[]},\n"
			   "\"stringArray\":[");
	for (size_t i = 0; i + 1 < t->str.offs.n; i++) {
		if (i)
			hs_strbuf_addc(sb, ',');
		hs_json_add(sb, t->str.pool.buf + t->str.offs.v[i]);
	}
	hs_strbuf_adds(sb, "]}");
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* A breakpad id from an ELF build-id, as Linux symbol servers name it: the first 16 bytes as a
 * GUID (its first three fields byte-swapped), upper-case, with age 0. */
static void breakpad_id(struct hs_strbuf *sb, const char *hex)
{
	static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
	char id[34];

	if (strlen(hex) < 32) {
		hs_strbuf_adds(sb, "\"\"");
		return;
	}
	for (int i = 0; i < 16; i++) {
		id[2 * i] = (char)(hex[2 * order[i]] >= 'a' ? hex[2 * order[i]] - 32 : hex[2 * order[i]]);
		id[2 * i + 1] = (char)(hex[2 * order[i] + 1] >= 'a' ? hex[2 * order[i] + 1] - 32 : hex[2 * order[i] + 1]);
	}
	id[32] = '0';
	id[33] = '\0';
	hs_json_add(sb, id);
}

static void write_libs(struct hs_strbuf *sb, const struct tables *t, const struct hs_profile *p)
{
	hs_strbuf_adds(sb, ",\n\"libs\":[");
	for (size_t i = 0; i < t->libs.n; i++) {
		const char *path = hs_profile_str(p, t->libs.v[i]), *bid = hs_profile_str(p, t->lib_build_id.v[i]);

		hs_strbuf_adds(sb, i ? ",\n{\"arch\":\"\",\"name\":" : "{\"arch\":\"\",\"name\":");
		hs_json_add(sb, base_name(path));
		hs_strbuf_adds(sb, ",\"path\":");
		hs_json_add(sb, path);
		hs_strbuf_adds(sb, ",\"debugName\":");
		hs_json_add(sb, base_name(path));
		hs_strbuf_adds(sb, ",\"debugPath\":");
		hs_json_add(sb, path);
		hs_strbuf_adds(sb, ",\"breakpadId\":");
		breakpad_id(sb, bid);
		hs_strbuf_adds(sb, ",\"codeId\":");
		if (*bid)
			hs_json_add(sb, bid);
		else
			hs_strbuf_adds(sb, "null");
		hs_strbuf_addc(sb, '}');
	}
	hs_strbuf_addc(sb, ']');
}

/* What an off-CPU period is named after: the innermost function of the program's own (the kernel's
 * path to schedule() is the same for every period), else the innermost. */
static const char *blocked_in(const struct hs_profile *p, uint32_t stack)
{
	const struct hs_stack *st = &p->stacks.v[stack];
	const uint32_t *locs = hs_profile_stack_locs(p, stack);

	for (uint32_t i = 0; i < st->nlocs; i++) {
		uint8_t kind = p->locations.v[locs[i]].kind;
		if (kind != HS_KIND_KERNEL && kind != HS_KIND_PSEUDO)
			return hs_profile_location_name(p, locs[i]);
	}
	return st->nlocs ? hs_profile_location_name(p, locs[0]) : "[unknown]";
}

static void write_thread(struct hs_strbuf *sb, struct tables *t, const struct hs_profile *p,
			 const struct hs_timeline *tl, const struct hs_tl_thread *th, size_t ti, struct hs_frame **fr,
			 size_t *fcap, struct u32vec *ids)
{
	int64_t vns = hs_unit_ns(hs_profile_str(p, p->types.v[tl->vi].unit));
	bool weighed = vns > 0, cpu = tl->cpu_ix >= 0;
	size_t n = 0, nmark = 0;

	for (size_t i = 0; i < th->spans.n; i++) {
		const struct hs_tl_span *sp = &th->spans.v[i];
		if (sp->off_cpu)
			nmark++;
		else if (n++, hs_profile_sample_values(p, sp->sample)[tl->vi] != 1)
			weighed = true;
	}
	hs_strbuf_adds(sb, ti ? ",\n{" : "\n{");
	hs_strbuf_adds(sb, "\"processType\":\"default\",\"processStartupTime\":0,\"processShutdownTime\":null,"
			   "\"registerTime\":");
	hs_tl_add_time(sb, th->spans.n ? th->spans.v[0].start : 0, 1000000);
	hs_strbuf_adds(sb, ",\"unregisterTime\":null,\"pausedRanges\":[],\"name\":");
	hs_json_add(sb, *hs_profile_str(p, th->name) ? hs_profile_str(p, th->name) : "[unknown]");
	hs_strbuf_adds(sb, ",\"processName\":");
	hs_json_add(sb, *hs_profile_str(p, th->process) ? hs_profile_str(p, th->process) : "[unknown]");
	hs_strbuf_addf(sb, ",\"isMainThread\":%s,\"pid\":\"%d\",\"tid\":", th->tid >= 0 && th->tid == th->pid ? "true" : "false",
		       th->pid >= 0 ? (int)th->pid : 0);
	if (th->tid >= 0)
		hs_strbuf_addf(sb, "%d", (int)th->tid);
	else
		hs_strbuf_addf(sb, "\"%zu\"", ti);
	hs_strbuf_addf(sb, ",\"showMarkersInTimeline\":%s", nmark ? "true" : "false");

	hs_strbuf_addf(sb, ",\n\"samples\":{\"length\":%zu,\"weightType\":\"%s\",\"stack\":[", n,
		       vns > 0 ? "tracing-ms" : "samples");
	for (size_t i = 0, k = 0; i < th->spans.n; i++)
		if (!th->spans.v[i].off_cpu)
			hs_strbuf_addf(sb, k++ ? ",%u" : "%u", stack_node(t, p, p->samples.v[th->spans.v[i].sample].stack, fr, fcap, ids));
	hs_strbuf_adds(sb, "],\"time\":[");
	for (size_t i = 0, k = 0; i < th->spans.n; i++) {
		if (th->spans.v[i].off_cpu)
			continue;
		if (k++)
			hs_strbuf_addc(sb, ',');
		hs_tl_add_time(sb, th->spans.v[i].start, 1000000);
	}
	hs_strbuf_adds(sb, weighed ? "],\"weight\":[" : "],\"weight\":null");
	for (size_t i = 0, k = 0; weighed && i < th->spans.n; i++) {
		int64_t v = hs_profile_sample_values(p, th->spans.v[i].sample)[tl->vi];
		if (th->spans.v[i].off_cpu)
			continue;
		if (k++)
			hs_strbuf_addc(sb, ',');
		if (vns > 0)
			hs_tl_add_time(sb, (uint64_t)v * (uint64_t)vns, 1000000);
		else
			hs_strbuf_addf(sb, "%lld", (long long)v);
	}
	if (weighed)
		hs_strbuf_addc(sb, ']');
	/* CPU time since the thread's previous sample, as the Firefox Profiler's graphs take it */
	if (cpu) {
		hs_strbuf_adds(sb, ",\"threadCPUDelta\":[");
		for (size_t i = 0, k = 0; i < th->spans.n; i++)
			if (!th->spans.v[i].off_cpu)
				hs_strbuf_addf(sb, k++ ? ",%lld" : "%lld",
					       (long long)hs_profile_sample_values(p, th->spans.v[i].sample)[tl->cpu_ix]);
		hs_strbuf_addc(sb, ']');
	}
	hs_strbuf_addf(sb, "},\n\"markers\":{\"length\":%zu", nmark);
	hs_strbuf_adds(sb, ",\"name\":[");
	for (size_t i = 0, k = 0; i < nmark; i++)
		hs_strbuf_addf(sb, k++ ? ",%u" : "%u", str_id(&t->str, "Off-CPU"));
	hs_strbuf_adds(sb, "],\"startTime\":[");
	for (size_t i = 0, k = 0; i < th->spans.n; i++) {
		if (!th->spans.v[i].off_cpu)
			continue;
		if (k++)
			hs_strbuf_addc(sb, ',');
		hs_tl_add_time(sb, th->spans.v[i].start, 1000000);
	}
	hs_strbuf_adds(sb, "],\"endTime\":[");
	for (size_t i = 0, k = 0; i < th->spans.n; i++) {
		if (!th->spans.v[i].off_cpu)
			continue;
		if (k++)
			hs_strbuf_addc(sb, ',');
		hs_tl_add_time(sb, th->spans.v[i].end, 1000000);
	}
	hs_strbuf_adds(sb, "],\"phase\":[");
	for (size_t i = 0; i < nmark; i++)
		hs_strbuf_adds(sb, i ? ",1" : "1");
	hs_strbuf_adds(sb, "],\"category\":[");
	for (size_t i = 0; i < nmark; i++)
		hs_strbuf_addf(sb, i ? ",%d" : "%d", CAT_OFF);
	hs_strbuf_adds(sb, "],\"data\":[");
	for (size_t i = 0, k = 0; i < th->spans.n; i++) {
		const struct hs_tl_span *sp = &th->spans.v[i];

		if (!sp->off_cpu)
			continue;
		hs_strbuf_adds(sb, k++ ? ",{\"type\":\"OffCPU\",\"blockedIn\":" : "{\"type\":\"OffCPU\",\"blockedIn\":");
		hs_json_add(sb, blocked_in(p, p->samples.v[sp->sample].stack));
		hs_strbuf_adds(sb, ",\"cause\":{\"time\":");
		hs_tl_add_time(sb, sp->start, 1000000);
		hs_strbuf_addf(sb, ",\"stack\":%u}}", stack_node(t, p, p->samples.v[sp->sample].stack, fr, fcap, ids));
	}
	hs_strbuf_adds(sb, "]}}");
}

static void write_meta(struct hs_strbuf *sb, const struct hs_profile *p, const struct hs_output_opts *o,
		       const struct hs_timeline *tl, size_t heaviest)
{
	struct hs_strbuf cmd = {0};
	const char *title = o->title ? o->title : hs_profile_command(p, &cmd);

	hs_strbuf_adds(sb, "{\"meta\":{\"interval\":");
	hs_tl_add_time(sb, tl->interval, 1000000);
	hs_strbuf_adds(sb, ",\"startTime\":");
	hs_tl_add_time(sb, p->time_nanos > 0 ? (uint64_t)p->time_nanos : 0, 1000000);
	hs_strbuf_adds(sb, ",\"profilingStartTime\":0,\"profilingEndTime\":");
	hs_tl_add_time(sb, tl->end, 1000000);
	hs_strbuf_addf(sb, ",\"processType\":0,\"product\":");
	hs_json_add(sb, title ? title : "hotstack");
	hs_strbuf_addf(sb, ",\"stackwalk\":1,\"version\":%d,\"preprocessedProfileVersion\":%d,\"symbolicated\":true,"
			   "\"importedFrom\":\"hotstack %s\",\"platform\":\"Linux\",\"usesOnlyOneStackType\":false",
		       GECKO_VERSION, PROCESSED_VERSION, HOTSTACK_VERSION);
	if (tl->threads.n)
		hs_strbuf_addf(sb, ",\"initialSelectedThreads\":[%zu]", heaviest);
	if (tl->cpu_ix >= 0)
		hs_strbuf_adds(sb, ",\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"ns\"}");
	hs_strbuf_adds(sb, ",\n\"categories\":");
	hs_strbuf_adds(sb, categories);
	hs_strbuf_adds(sb, ",\n\"markerSchema\":[{\"name\":\"OffCPU\",\"tooltipLabel\":\"Off-CPU in {marker.data.blockedIn}\","
			   "\"tableLabel\":\"{marker.data.blockedIn}\",\"chartLabel\":\"{marker.data.blockedIn}\","
			   "\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
			   "\"description\":\"The thread was switched out, blocked, for this long\","
			   "\"fields\":[{\"key\":\"blockedIn\",\"label\":\"Blocked in\",\"format\":\"string\"}]}]}");
	hs_strbuf_release(&cmd);
}

int hs_write_firefox(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	struct hs_timeline tl;
	struct tables t = {0};
	struct hs_strbuf sb = {0}, threads = {0};
	struct u32vec ids = {0};
	struct hs_frame *fr = NULL;
	size_t fcap = 0, heaviest = 0;
	int rc = 0;

	hs_timeline_build(&tl, p, o);
	str_id(&t.str, ""); /* string 0: what a func without a file names as its file */
	t.stack_of.v = hs_xcalloc(p->stacks.n + 1, sizeof(*t.stack_of.v));
	t.stack_of.n = t.stack_of.cap = p->stacks.n + 1;
	for (size_t i = 0; i < tl.threads.n; i++) {
		write_thread(&threads, &t, p, &tl, &tl.threads.v[i], i, &fr, &fcap, &ids);
		if (tl.threads.v[i].weight > tl.threads.v[heaviest].weight)
			heaviest = i;
	}
	write_meta(&sb, p, o, &tl, heaviest);
	write_libs(&sb, &t, p);
	hs_strbuf_adds(&sb, ",\n\"pages\":[]");
	write_shared(&sb, &t);
	hs_strbuf_adds(&sb, ",\n\"threads\":[");
	hs_strbuf_add(&sb, threads.buf, threads.len);
	hs_strbuf_adds(&sb, "]}\n");

	if (hs_tl_gzipped(out))
		rc = hs_gzip_out((const uint8_t *)sb.buf, sb.len, out);
	else
		hs_outfile_write(out, sb.buf, sb.len);

	hs_timeline_release(&tl);
	hs_strbuf_release(&sb);
	hs_strbuf_release(&threads);
	hs_strbuf_release(&t.str.pool);
	hs_vec_free(&t.str.offs);
	hs_index_release(&t.str.ix);
	hs_vec_free(&t.funcs);
	hs_vec_free(&t.frames);
	hs_vec_free(&t.stack_frame);
	hs_vec_free(&t.stack_prefix);
	hs_vec_free(&t.libs);
	hs_vec_free(&t.lib_build_id);
	hs_vec_free(&t.resources);
	hs_vec_free(&t.resource_lib);
	hs_vec_free(&t.sources);
	hs_u64map_release(&t.lib_ix);
	hs_u64map_release(&t.res_ix);
	hs_u64map_release(&t.src_ix);
	hs_u64map_release(&t.frame_ix);
	hs_u64map_release(&t.stack_ix);
	hs_index_release(&t.func_ix);
	hs_vec_free(&t.stack_of);
	hs_vec_free(&ids);
	free(fr);
	if (rc)
		return rc;
	return out->err ? -out->err : 0;
}
