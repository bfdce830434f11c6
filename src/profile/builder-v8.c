/* The builder's JavaScript side: a V8 stack's frames named, for the merge of
 * builder-segments.c (its ops). */
#include "profile/builder-private.h"

#include <stdio.h>
#include <string.h>

#include "runtime/v8/store.h"

static uint32_t location(struct hs_builder *b, int32_t pid, uint64_t pc, uint64_t a, uint64_t bw)
{
	unsigned kind = (unsigned)(bw >> HS_V8_FRAME_SHIFT);
	const struct hs_v8_function *f;
	struct hs_line ln;
	uint32_t nm, file;

	if (kind == HS_V8_FRAME_BUILTIN) {
		/* the builtins' copy maps the binary's file where its own text has them: named by
		 * the binary's symbols either way */
		struct hs_cc_frame cf = {.addr = pc, .ret = true};
		bool stable = true;
		if (!pc)
			return UINT32_MAX;
		return hs_builder_frame_location(b, pid, &cf, &stable);
	}
	if (!hs_v8_names_function(b->opts.rt_names->store[HS_RT_V8], pid, a, &f)) {
		b->stats.rt[HS_RT_V8].unnamed++;
		return hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, "[unknown javascript]");
	}
	nm = hs_profile_intern_str(b->p, f->name[0] ? f->name : "<anonymous>");
	file = f->file[0] ? hs_profile_intern_str(b->p, f->file) : 0;
	ln.function = hs_profile_function(b->p, nm, nm, file, 0);
	ln.line = 0;
	return hs_profile_location(b->p, 0, 0, HS_KIND_JIT, &ln, 1);
}

/* the sample's native frames above are its own when it was taken outside V8's code: its first
 * frame is then where native code returns to V8 */
static bool top_native(const struct hs_rt_head *h)
{
	return true;
}

/* an interpreted frame's bytecode offset says where; a compiled frame's pc */
static bool same_anywhere(unsigned kind)
{
	return kind == HS_V8_FRAME_INTERP || kind == HS_V8_FRAME_FUNCTION;
}

static bool reads(void *store, int32_t pid)
{
	return hs_v8_names_proc(store, pid) != NULL;
}

const struct hs_seg_ops hs_builder_v8_ops = {
	.id = HS_RT_V8,
	.tag = "javascript",
	.native_kind = HS_V8_FRAME_NATIVE,
	.truncated_flag = HS_V8_TRUNCATED,
	.top_native = top_native,
	.same_anywhere = same_anywhere,
	.location = location,
	.reads = reads,
};
