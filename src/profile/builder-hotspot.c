/* The builder's Java side: a HotSpot stack's frames named, for the merge of builder-segments.c
 * (its ops). */
#include "profile/builder-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hotspot/store.h"

#define MAX_LINES 32 /* methods of one compiled frame */

/* The kind of a frame's code: a native method's wrapper is JIT code like others */
static const uint8_t kinds[] = {
	[HS_JVM_INTERPRETED] = HS_KIND_JAVA_INTERP,
	[HS_JVM_C1] = HS_KIND_JAVA_C1,
	[HS_JVM_C2] = HS_KIND_JAVA_C2,
	[HS_JVM_NATIVE] = HS_KIND_JIT,
};

/* The location of a Java frame's methods (innermost first), made once per frame as read. */
static uint32_t java_location(struct hs_builder *b, const struct hs_jvm_named *nm, size_t n)
{
	struct hs_line lines[MAX_LINES];
	char name[1024];

	for (size_t i = 0; i < n && i < MAX_LINES; i++) {
		const struct hs_jvm_method *m = nm[i].m;
		uint32_t sys, fn, file;
		hs_jvm_method_format(m, name, sizeof(name));
		fn = hs_profile_intern_str(b->p, name);
		snprintf(name, sizeof(name), "%s.%s%s", m->klass, m->name, m->signature);
		sys = hs_profile_intern_str(b->p, name);
		file = m->file ? hs_profile_intern_str(b->p, m->file) : 0;
		lines[i].function = hs_profile_function(b->p, fn, sys, file, 0);
		lines[i].line = nm[i].line;
	}
	return hs_profile_location(b->p, 0, 0, kinds[nm[n - 1].comp], lines, (uint32_t)HS_MIN(n, MAX_LINES));
}

static uint32_t location(struct hs_builder *b, int32_t pid, const uint64_t *w)
{
	const struct hs_jvm_rec_frame fr = {w[0], w[1], w[2]}, *f = &fr;
	struct hs_jvm_named nm[MAX_LINES];
	char stub[80];
	size_t n = hs_jvm_names_frame(b->opts.rt_names->store[HS_RT_HOTSPOT], pid, f, nm, MAX_LINES, stub, sizeof(stub));

	if (n) {
		b->stats.jvm_frames[nm[0].comp]++;
		for (size_t i = 1; i < n; i++)
			b->stats.jvm_inlined++;
		return java_location(b, nm, n);
	}
	if (stub[0])
		return hs_builder_named_location(b, 0, 0, HS_KIND_JIT, stub);
	b->stats.rt[HS_RT_HOTSPOT].unnamed++;
	return hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, "[unknown java]");
}

static bool top_native(const struct hs_rt_head *h)
{
	return h->flags & HS_JVM_FROM_ANCHOR;
}

/* an interpreted frame is its method and bytecode, a compiled one its code and pc */
static bool same_anywhere(unsigned kind)
{
	return kind == HS_JVM_FRAME_INTERP;
}

static bool reads(void *store, int32_t pid)
{
	return hs_jvm_names_has(store, pid);
}

const struct hs_seg_ops hs_builder_jvm_ops = {
	.id = HS_RT_HOTSPOT,
	.tag = "java",
	.native_kind = HS_JVM_FRAME_NATIVE,
	.frame_words = sizeof(struct hs_jvm_rec_frame) / 8,
	.truncated_flag = HS_JVM_TRUNCATED,
	.top_native = top_native,
	.same_anywhere = same_anywhere,
	.location = location,
	.reads = reads,
};
