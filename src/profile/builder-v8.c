/* The builder's JavaScript side: a V8 stack's frames named, for the merge of
 * builder-segments.c (its ops). */
#include "profile/builder-private.h"

#include <stdio.h>
#include <string.h>

#include "runtime/v8/store.h"

#define MAX_LINES 32 /* functions of one frame: the leaf and those it is inlined into */

/* The kind of a frame's code; a function whose code is not known is JIT code */
static const uint8_t kinds[] = {
	[HS_V8_FRAME_INTERP] = HS_KIND_JS_INTERP,
	[HS_V8_FRAME_BASELINE] = HS_KIND_JS_BASELINE,
	[HS_V8_FRAME_OPTIMIZED] = HS_KIND_JS_OPT,
	[HS_V8_FRAME_FUNCTION] = HS_KIND_JIT,
};

static uint32_t location(struct hs_builder *b, int32_t pid, const uint64_t *w)
{
	const struct hs_v8_rec_frame fr = {w[0], w[1], w[2], w[3]};
	uint64_t pc = fr.pc;
	unsigned kind = (unsigned)(fr.b >> HS_V8_FRAME_SHIFT);
	if (kind == HS_V8_FRAME_BUILTIN) {
		/* the builtins' copy maps the binary's file where its own text has them: named by
		 * the binary's symbols either way */
		struct hs_cc_frame cf = {.addr = pc, .ret = true};
		bool stable = true;
		if (!pc)
			return UINT32_MAX;
		uint32_t loc = hs_builder_frame_location(b, pid, &cf, &stable);
		const struct hs_location *l = &b->p->locations.v[loc];
		/* named by its symbol, of the kind of V8's builtins */
		if (!l->nlines)
			return loc;
		return hs_builder_named_location(
			b, 0, 0, HS_KIND_JS_BUILTIN,
			hs_profile_str(b->p, b->p->functions.v[b->p->lines.v[l->line0 + l->nlines - 1].function].name));
	}
	{
		struct hs_v8_named nm[MAX_LINES];
		struct hs_line lines[MAX_LINES];
		size_t n = hs_v8_names_frame(b->opts.rt_names->store[HS_RT_V8], pid, &fr, nm, MAX_LINES);
		if (!n) {
			b->stats.rt[HS_RT_V8].unnamed++;
			return hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, "[unknown javascript]");
		}
		size_t k = 0;
		if (nm[0].unsure) {
			/* in place of the inlined functions that may be there: the stack says it is cut */
			uint32_t cut = hs_profile_intern_str(b->p, "[javascript: inlined functions not read]");
			lines[k].function = hs_profile_function(b->p, cut, cut, 0, 0);
			lines[k++].line = 0;
			b->stats.rt[HS_RT_V8].cut++;
		}
		for (size_t i = 0; i < n && k < MAX_LINES; i++) {
			uint32_t nmid = hs_profile_intern_str(b->p, nm[i].f->name[0] ? nm[i].f->name : "<anonymous>");
			uint32_t file = nm[i].f->file[0] ? hs_profile_intern_str(b->p, nm[i].f->file) : 0;
			lines[k].function = hs_profile_function(b->p, nmid, nmid, file, 0);
			lines[k++].line = nm[i].line;
		}
		return hs_profile_location(b->p, 0, 0, kinds[nm[n - 1].tier], lines, (uint32_t)k);
	}
}

/* the sample's native frames above are its own when it was taken outside V8's code: its first
 * frame is then where native code returns to V8 */
static bool top_native(const struct hs_rt_head *h)
{
	return true;
}

/* an interpreted frame's bytecode offset says where; a compiled frame's pc (a function's too:
 * it may run code compiled on the stack, whose lines its pc gives) */
static bool same_anywhere(unsigned kind)
{
	return kind == HS_V8_FRAME_INTERP;
}

static bool reads(void *store, int32_t pid)
{
	return hs_v8_names_proc(store, pid) != NULL;
}

/* V8's machinery: its builtins (read as such, or found by the native unwinding in the binary's
 * text or their copy: Builtins_JSEntry, Builtins_CEntry_...), and the functions with neither a
 * name nor a script (the closures V8 resumes an async function through) */
static bool internal(struct hs_builder *b, uint32_t loc)
{
	const struct hs_location *l = &b->p->locations.v[loc];
	const struct hs_function *f;
	const char *name;

	if (l->kind == HS_KIND_JS_BUILTIN)
		return true;
	if (!l->nlines)
		return false;
	f = &b->p->functions.v[b->p->lines.v[l->line0 + l->nlines - 1].function];
	name = hs_profile_str(b->p, f->name);
	if (l->kind == HS_KIND_USER)
		return !strncmp(name, "Builtins_", 9);
	return hs_kind_is_jit(l->kind) && !f->filename && !strcmp(name, "<anonymous>");
}

const struct hs_seg_ops hs_builder_v8_ops = {
	.id = HS_RT_V8,
	.tag = "javascript",
	.native_kind = HS_V8_FRAME_NATIVE,
	.frame_words = sizeof(struct hs_v8_rec_frame) / 8,
	.own_chain = true,
	.truncated_flag = HS_V8_TRUNCATED,
	.top_native = top_native,
	.same_anywhere = same_anywhere,
	.location = location,
	.reads = reads,
	.internal = internal,
};
