/* The builder's Java side: a HotSpot stack (what the frame reader read with a sample, paired with
 * it by builder-runtime.c) named and merged with the sample's native stack. The native frames
 * above the Java ones come from the sample's own unwinding, up to the return address into the
 * innermost Java frame; the Java frames from the record; and the native frames below each run of
 * Java frames are unwound from the registers the reader found there (its HS_JVM_FRAME_NATIVE
 * frames), while the sample's stack copy is still at hand (hs_builder_jvm_unwind()). */
#include "profile/builder-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hotspot/store.h"

#define MAX_LINES 32 /* methods of one compiled frame */

static unsigned frame_kind(const struct hs_jvm_rec_frame *f)
{
	return (unsigned)(f->b >> HS_JVM_FRAME_SHIFT);
}

void hs_builder_jvm_release(struct hs_builder *b)
{
	hs_builder_jvm_forget_locations(b);
	hs_vec_free(&b->jvm.native);
	hs_vec_free(&b->jvm.seg);
	hs_vec_free(&b->jvm.out);
	hs_callchain_release(&b->jvm.cc);
}

void hs_builder_jvm_forget_locations(struct hs_builder *b)
{
	hs_u64map_release(&b->jvm.loc_ix);
	hs_vec_free(&b->jvm.locs);
}

void hs_builder_jvm_unwind(struct hs_builder *b, int32_t pid, const struct hs_rt_head *head, unsigned id,
			   const struct hs_stack_copy *copy)
{
	struct hs_builder_jvm *j = &b->jvm;
	const struct hs_jvm_sample *rec = (const void *)head;

	j->prepared = NULL;
	j->native.n = j->seg.n = 0;
	if (!rec || id != HS_RT_HOTSPOT || rec->head.pid != (uint32_t)pid)
		return;
	for (size_t i = 0; i < rec->head.nframes; i++) {
		const struct hs_jvm_rec_frame *f = &rec->frames[i];
		struct hs_regs regs = {0};
		struct hs_jvm_seg seg;
		if (frame_kind(f) != HS_JVM_FRAME_NATIVE)
			continue;
		regs.r[HS_DWARF_RA] = f->pc;
		regs.r[HS_DWARF_RSP] = f->a;
		regs.r[HS_DWARF_RBP] = f->b & HS_JVM_VALUE_MASK;
		regs.valid = 1u << HS_DWARF_RA | 1u << HS_DWARF_RSP | 1u << HS_DWARF_RBP;
		hs_callchain_reset(&j->cc);
		hs_unwind_user(&b->unwinder, pid, &regs, copy, &j->cc);
		seg.first = (uint32_t)j->native.n;
		seg.n = (uint32_t)j->cc.frames.n;
		seg.stop = j->cc.stop;
		for (size_t k = 0; k < j->cc.frames.n; k++)
			hs_vec_push(&j->native, j->cc.frames.v[k]);
		if (seg.n)
			j->native.v[seg.first].ret = true; /* the reader's pc is a return address */
		hs_vec_push(&j->seg, seg);
	}
	j->prepared = rec;
}

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

static uint32_t make_location(struct hs_builder *b, int32_t pid, const struct hs_jvm_rec_frame *f)
{
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

/* The location of a Java frame: looked up by what the reader gave (process, frame), so that a
 * frame seen before costs one hash lookup. */
static uint32_t frame_loc(struct hs_builder *b, int32_t pid, const struct hs_jvm_rec_frame *f)
{
	struct hs_builder_jvm *j = &b->jvm;
	/* an interpreted frame is its method and bytecode, a compiled one its code and pc */
	uint64_t x = frame_kind(f) == HS_JVM_FRAME_INTERP ? 0 : f->pc;
	uint64_t k = hs_hash_combine(hs_hash_combine(hs_hash_u64(f->a), f->b), x ^ (uint64_t)(uint32_t)pid << 32), v;
	struct hs_jvm_frame_loc e;

	for (;; k++) {
		const struct hs_jvm_frame_loc *h;
		if (!hs_u64map_get(&j->loc_ix, k, &v))
			break;
		h = &j->locs.v[v - 1];
		if (h->pid == pid && h->a == f->a && h->b == f->b && h->x == x)
			return h->loc;
	}
	e = (struct hs_jvm_frame_loc){pid, make_location(b, pid, f), f->a, f->b, x};
	hs_vec_push(&j->locs, e);
	hs_u64map_put(&j->loc_ix, k, j->locs.n);
	return e.loc;
}

static void push(struct hs_builder *b, uint32_t loc)
{
	hs_vec_push(&b->jvm.out, loc);
}

/* Whether native frame f is where the Java frames at pc start: the return address into them,
 * or any address in JIT code (the JVM's code cache and interpreter are anonymous memory; a
 * return address found by the native unwinding may differ from the one the reader took from a
 * frame anchor, when the JVM's call into native code realigned the stack). */
static bool java_starts(struct hs_builder *b, int32_t pid, const struct hs_cc_frame *f, uint64_t pc, uint32_t *loc)
{
	bool stable = true; /* the merged stack is not remembered anyway */

	*loc = hs_builder_frame_location(b, pid, f, &stable);
	return f->addr == pc || (!f->kernel && hs_kind_is_jit(b->p->locations.v[*loc].kind));
}

/* Pushes frames[0..n) up to where the Java frames at pc start (pc 0: all of them); false, with
 * none of them pushed, when that was not found. */
static bool native_until(struct hs_builder *b, int32_t pid, const struct hs_cc_frame *frames, size_t n, uint64_t pc)
{
	size_t from = b->jvm.out.n;
	uint32_t loc;

	for (size_t i = 0; i < n; i++) {
		if (pc && java_starts(b, pid, &frames[i], pc, &loc))
			return true;
		if (!pc) {
			bool stable = true;
			loc = hs_builder_frame_location(b, pid, &frames[i], &stable);
		}
		push(b, loc);
	}
	if (pc)
		b->jvm.out.n = from; /* not one of them is known to be right */
	return !pc;
}

/* The native frames of the sample above the Java frames: the kernel's, then the user frames up
 * to the innermost Java frame (when the thread was outside Java code). False when that was not
 * reached: those frames are left out. */
static bool native_top(struct hs_builder *b, int32_t pid, const struct hs_jvm_sample *rec)
{
	const struct hs_callchain *cc = &b->cc;
	size_t i = 0;
	bool stable = true;

	for (; i < cc->frames.n && cc->frames.v[i].kernel; i++)
		push(b, hs_builder_frame_location(b, pid, &cc->frames.v[i], &stable));
	if (!(rec->head.flags & HS_JVM_FROM_ANCHOR))
		return true; /* the leaf is Java code */
	return native_until(b, pid, cc->frames.v + i, cc->frames.n - i, rec->frames[0].pc);
}

/* The native frames of segment seg, up to the Java frames at next (0: to the end, and its stop
 * reason). False when next was not reached. */
static bool native_run(struct hs_builder *b, int32_t pid, const struct hs_jvm_seg *seg, uint64_t next)
{
	if (!native_until(b, pid, b->jvm.native.v + seg->first, seg->n, next))
		return false;
	if (!next && seg->stop != HS_STOP_END)
		push(b, hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, hs_stop_name(seg->stop)));
	return true;
}

static void cut(struct hs_builder *b, const char *why)
{
	push(b, hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, why));
	b->stats.rt[HS_RT_HOTSPOT].cut++;
}

bool hs_builder_jvm_merge(struct hs_builder *b, int32_t pid, const void *data)
{
	struct hs_builder_jvm *j = &b->jvm;
	const struct hs_jvm_sample *rec = data;
	size_t nseg = 0;

	if (!b->opts.rt_names || !b->opts.rt_names->store[HS_RT_HOTSPOT])
		return false;
	if (j->prepared != rec)
		j->seg.n = 0; /* no stack copy to unwind the native frames below from: marked lost */
	j->prepared = NULL;
	j->out.n = 0;
	if (!native_top(b, pid, rec))
		cut(b, "[java: native frames lost]"); /* a gap, marked: the Java frames follow */
	for (size_t i = 0; i < rec->head.nframes; i++) {
		const struct hs_jvm_rec_frame *f = &rec->frames[i];
		uint64_t next = 0;
		if (frame_kind(f) != HS_JVM_FRAME_NATIVE) {
			push(b, frame_loc(b, pid, f));
			continue;
		}
		if (i + 1 < rec->head.nframes)
			next = rec->frames[i + 1].pc;
		if (nseg >= j->seg.n || !native_run(b, pid, &j->seg.v[nseg++], next))
			cut(b, "[java: native frames lost]");
	}
	if (rec->head.nframes && frame_kind(&rec->frames[rec->head.nframes - 1]) != HS_JVM_FRAME_NATIVE)
		cut(b, rec->head.flags & HS_JVM_TRUNCATED ? "[java: truncated]" : "[java: unwalkable frame]");
	hs_vec_reserve(&b->locs, j->out.n);
	memcpy(b->locs.v, j->out.v, j->out.n * sizeof(*b->locs.v));
	b->locs.n = j->out.n;
	return b->locs.n > 0;
}

bool hs_builder_jvm_unread(struct hs_builder *b, int32_t pid)
{
	if (!hs_jvm_names_has(b->opts.rt_names->store[HS_RT_HOTSPOT], pid))
		return false;
	for (size_t i = 0; i < b->locs.n; i++) {
		const struct hs_location *l = &b->p->locations.v[b->locs.v[i]];
		if (hs_kind_is_jit(l->kind)) {
			b->locs.n = i;
			hs_vec_push(&b->locs, hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, "[java: not read]"));
			b->stats.rt[HS_RT_HOTSPOT].cut++;
			return true;
		}
	}
	return false;
}
