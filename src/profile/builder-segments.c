/* The builder's side of the runtimes whose readers walk runs of their own frames between native
 * ones (HotSpot, V8): such a stack (what the reader read with a sample, paired with it by
 * builder-runtime.c) named and merged with the sample's native stack. The native frames above
 * the runtime's come from the sample's own unwinding, up to the return address into its
 * innermost frame; the runtime's frames from the record; and the native frames below each run
 * of them are unwound from the registers the reader found there (its native frames), while the
 * sample's stack copy is still at hand (hs_builder_seg_unwind()). Each runtime's file names its
 * frames (builder-hotspot.c, builder-v8.c). */
#include "profile/builder-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A record's frame: each segmented runtime's record frames start with these three words, with
 * the frame's kind in the top byte of b (and have ops->frame_words words). */
struct rec_frame {
	uint64_t pc, a, b;
};
struct rec {
	struct hs_rt_head head;
	uint64_t words[];
};

static const struct rec_frame *frame_at(const struct hs_seg_ops *ops, const struct rec *rec, size_t i)
{
	return (const struct rec_frame *)(rec->words + i * ops->frame_words);
}
#define KIND_SHIFT 56
#define VALUE_MASK ((1ULL << KIND_SHIFT) - 1)

static unsigned frame_kind(const struct rec_frame *f)
{
	return (unsigned)(f->b >> KIND_SHIFT);
}

void hs_builder_seg_release(struct hs_builder *b)
{
	hs_builder_seg_forget_locations(b);
	hs_vec_free(&b->seg.native);
	hs_vec_free(&b->seg.seg);
	hs_vec_free(&b->seg.out);
	hs_callchain_release(&b->seg.cc);
}

void hs_builder_seg_forget_locations(struct hs_builder *b)
{
	hs_u64map_release(&b->seg.loc_ix);
	hs_vec_free(&b->seg.locs);
}

bool hs_builder_seg_unwind(struct hs_builder *b, int32_t pid, const struct hs_rt_head *head, unsigned id,
			   const struct hs_stack_copy *copy)
{
	struct hs_builder_seg *j = &b->seg;
	const struct hs_seg_ops *ops = hs_builder_seg_ops(id);
	const struct rec *rec = (const void *)head;

	size_t from = 0; /* in the sample's own chain: where the last run taken from it began, + 1 */

	j->prepared = NULL;
	j->native.n = j->seg.n = 0;
	if (!rec || !ops || rec->head.pid != (uint32_t)pid)
		return false;
	for (size_t i = 0; i < rec->head.nframes; i++) {
		const struct rec_frame *f = frame_at(ops, rec, i);
		struct hs_regs regs = {0};
		struct hs_seg_run seg;
		size_t at;
		if (frame_kind(f) != ops->native_kind)
			continue;
		if (ops->own_chain) {
			/* the sample's own unwinding went through the runtime's frames (they keep
			 * frame pointers): its frames from this return address on are the same */
			for (at = from; at < b->cc.frames.n && (b->cc.frames.v[at].kernel || b->cc.frames.v[at].addr != f->pc);
			     at++)
				;
			if (at < b->cc.frames.n) {
				seg.first = (uint32_t)j->native.n;
				seg.n = (uint32_t)(b->cc.frames.n - at);
				seg.stop = b->cc.stop;
				for (size_t m = at; m < b->cc.frames.n; m++)
					hs_vec_push(&j->native, b->cc.frames.v[m]);
				j->native.v[seg.first].ret = true;
				hs_vec_push(&j->seg, seg);
				from = at + 1;
				continue;
			}
		}
		regs.r[HS_DWARF_RA] = f->pc;
		regs.r[HS_DWARF_RSP] = f->a;
		regs.r[HS_DWARF_RBP] = f->b & VALUE_MASK;
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
	return rec->head.nframes && b->opts.rt_names && b->opts.rt_names->store[id];
}

/* The location of a frame: looked up by what the reader gave (runtime, process, frame), so that
 * a frame seen before costs one hash lookup. */
static uint32_t frame_loc(struct hs_builder *b, const struct hs_seg_ops *ops, int32_t pid, const struct rec_frame *f)
{
	struct hs_builder_seg *j = &b->seg;
	uint64_t x = ops->same_anywhere(frame_kind(f)) ? 0 : f->pc;
	uint64_t c = ops->frame_words > 3 ? ((const uint64_t *)f)[3] : 0;
	uint64_t k = hs_hash_combine(hs_hash_combine(hs_hash_combine(hs_hash_u64(f->a), f->b), c),
				     x ^ (uint64_t)(uint32_t)pid << 32 ^ (uint64_t)ops->id << 24),
		 v;
	struct hs_seg_frame_loc e;

	for (;; k++) {
		const struct hs_seg_frame_loc *h;
		if (!hs_u64map_get(&j->loc_ix, k, &v))
			break;
		h = &j->locs.v[v - 1];
		if (h->pid == pid && h->id == ops->id && h->a == f->a && h->b == f->b && h->c == c && h->x == x)
			return h->loc;
	}
	e = (struct hs_seg_frame_loc){pid, ops->location(b, pid, (const uint64_t *)f), ops->id, f->a, f->b, c, x};
	hs_vec_push(&j->locs, e);
	hs_u64map_put(&j->loc_ix, k, j->locs.n);
	return e.loc;
}

static void push(struct hs_builder *b, uint32_t loc)
{
	hs_vec_push(&b->seg.out, loc);
}

/* Whether native frame f is where the runtime's frames at pc start: the return address into
 * them, or any address in JIT code (a return address found by the native unwinding may differ
 * from the one the reader took from a frame anchor, when the call into native code realigned
 * the stack). */
static bool seg_starts(struct hs_builder *b, int32_t pid, const struct hs_cc_frame *f, uint64_t pc, uint32_t *loc)
{
	bool stable = true; /* the merged stack is not remembered anyway */

	if (f->addr == pc)
		return true; /* no location needed: JIT code's is looked up afresh each time */
	*loc = hs_builder_frame_location(b, pid, f, &stable);
	return !f->kernel && hs_kind_is_jit(b->p->locations.v[*loc].kind);
}

/* Pushes frames[0..n) up to where the runtime's frames at pc start (pc 0: all of them); false,
 * with none of them pushed, when that was not found. */
static bool native_until(struct hs_builder *b, int32_t pid, const struct hs_cc_frame *frames, size_t n, uint64_t pc)
{
	size_t from = b->seg.out.n;
	uint32_t loc;

	for (size_t i = 0; i < n; i++) {
		if (pc && seg_starts(b, pid, &frames[i], pc, &loc))
			return true;
		if (!pc) {
			bool stable = true;
			loc = hs_builder_frame_location(b, pid, &frames[i], &stable);
		}
		push(b, loc);
	}
	if (pc)
		b->seg.out.n = from; /* not one of them is known to be right */
	return !pc;
}

/* The native frames of the sample above the runtime's frames: the kernel's, then the user frames
 * up to the innermost of the runtime's (when the thread was outside its code). False when that
 * was not reached: those frames are left out. */
static bool native_top(struct hs_builder *b, const struct hs_seg_ops *ops, int32_t pid, const struct rec *rec)
{
	const struct hs_callchain *cc = &b->cc;
	size_t i = 0;
	bool stable = true;

	for (; i < cc->frames.n && cc->frames.v[i].kernel; i++)
		push(b, hs_builder_frame_location(b, pid, &cc->frames.v[i], &stable));
	if (!ops->top_native(&rec->head))
		return true; /* the leaf is the runtime's code */
	return native_until(b, pid, cc->frames.v + i, cc->frames.n - i, frame_at(ops, rec, 0)->pc);
}

/* The native frames of segment seg, up to the runtime's frames at next (0: to the end, and its
 * stop reason). False when next was not reached. */
static bool native_run(struct hs_builder *b, int32_t pid, const struct hs_seg_run *seg, uint64_t next)
{
	if (!native_until(b, pid, b->seg.native.v + seg->first, seg->n, next))
		return false;
	if (!next && seg->stop != HS_STOP_END)
		push(b, hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, hs_stop_name(seg->stop)));
	return true;
}

static void cut(struct hs_builder *b, const struct hs_seg_ops *ops, const char *why)
{
	char name[64];

	snprintf(name, sizeof(name), "[%s: %s]", ops->tag, why);
	push(b, hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, name));
	b->stats.rt[ops->id].cut++;
}

/* Leaves the runtime's machinery out of locs[0..n), unless its internals are kept: the count
 * left. */
static size_t drop_internal(struct hs_builder *b, const struct hs_seg_ops *ops, uint32_t *locs, size_t n)
{
	size_t k = 0;

	if (!ops->internal || (ops->id == HS_RT_V8 && b->opts.js_internals))
		return n;
	for (size_t i = 0; i < n; i++)
		if (!ops->internal(b, locs[i]))
			locs[k++] = locs[i];
	return k;
}

bool hs_builder_seg_merge(struct hs_builder *b, unsigned id, int32_t pid, const void *data)
{
	const struct hs_seg_ops *ops = hs_builder_seg_ops(id);
	struct hs_builder_seg *j = &b->seg;
	const struct rec *rec = data;
	size_t nseg = 0;
	uint32_t last = UINT32_MAX;

	if (!ops || !b->opts.rt_names || !b->opts.rt_names->store[id])
		return false;
	if (j->prepared != rec)
		j->seg.n = 0; /* no stack copy to unwind the native frames below from: marked lost */
	j->prepared = NULL;
	j->out.n = 0;
	if (!native_top(b, ops, pid, rec))
		cut(b, ops, "native frames lost"); /* a gap, marked: the runtime's frames follow */
	for (size_t i = 0; i < rec->head.nframes; i++) {
		const struct rec_frame *f = frame_at(ops, rec, i);
		uint64_t next = 0;
		if (frame_kind(f) != ops->native_kind) {
			/* a recursion's frames are alike: looked up once */
			uint32_t loc = i && !memcmp(f, frame_at(ops, rec, i - 1), 8 * ops->frame_words) ? last
												     : frame_loc(b, ops, pid, f);
			last = loc;
			if (loc != UINT32_MAX)
				push(b, loc);
			continue;
		}
		if (i + 1 < rec->head.nframes)
			next = frame_at(ops, rec, i + 1)->pc;
		if (nseg >= j->seg.n || !native_run(b, pid, &j->seg.v[nseg++], next))
			cut(b, ops, "native frames lost");
	}
	if (rec->head.nframes && frame_kind(frame_at(ops, rec, rec->head.nframes - 1)) != ops->native_kind)
		cut(b, ops, rec->head.flags & ops->truncated_flag ? "truncated" : "unwalkable frame");
	j->out.n = drop_internal(b, ops, j->out.v, j->out.n);
	hs_vec_reserve(&b->locs, j->out.n);
	memcpy(b->locs.v, j->out.v, j->out.n * sizeof(*b->locs.v));
	b->locs.n = j->out.n;
	return b->locs.n > 0;
}

bool hs_builder_seg_unread(struct hs_builder *b, unsigned id, int32_t pid)
{
	const struct hs_seg_ops *ops = hs_builder_seg_ops(id);
	char name[64];

	if (!ops || !ops->reads(b->opts.rt_names->store[id], pid))
		return false;
	for (size_t i = 0; i < b->locs.n; i++) {
		const struct hs_location *l = &b->p->locations.v[b->locs.v[i]];
		if (hs_kind_is_jit(l->kind)) {
			b->locs.n = drop_internal(b, ops, b->locs.v, i);
			snprintf(name, sizeof(name), "[%s: not read]", ops->tag);
			hs_vec_push(&b->locs, hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, name));
			b->stats.rt[id].cut++;
			return true;
		}
	}
	return false;
}

const struct hs_seg_ops *hs_builder_seg_ops(unsigned id)
{
	if (id == HS_RT_HOTSPOT)
		return &hs_builder_jvm_ops;
	if (id == HS_RT_V8)
		return &hs_builder_v8_ops;
	return NULL;
}
