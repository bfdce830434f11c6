/* A sample's call chain as the profile's locations: its user frames unwound (or the kernel's
 * chain, or LBR's records), the tracing frames left out, through the chain memo. */
#include "profile/builder-private.h"

#include <stdlib.h>
#include <string.h>

#include "unwind/lbr.h"

/* the memo's slots (builder-private.h) */
#define CHAIN_MEMO_BITS 11

/* Four lanes of one multiply a frame, mixed at the end: a chain of 60 frames hashed one
 * frame after another through the full mixer was a dependency chain of thousands of cycles.
 * Chains that hash alike are still compared whole. */
static uint64_t chain_hash(const struct hs_callchain *cc, size_t from, int32_t pid, bool strip)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t lane[4] = {(uint64_t)(uint32_t)pid << 16 | (uint64_t)cc->stop << 2 | (uint64_t)from << 1 | strip,
			    cc->frames.n, 0, 0}, h;

	for (size_t i = from; i < cc->frames.n; i++) {
		const struct hs_cc_frame *f = &cc->frames.v[i];
		uint64_t v = f->addr ^ ((uint64_t)f->kernel << 63 | (uint64_t)f->ret << 62 | (uint64_t)f->signal << 61 |
					(uint64_t)f->tramp << 60);
		uint64_t *l = &lane[(i - from) & 3];
		*l = (*l ^ v) * k;
		*l ^= *l >> 29;
	}
	h = hs_hash_combine(hs_hash_combine(hs_hash_u64(lane[0]), lane[1]), hs_hash_combine(hs_hash_u64(lane[2]), lane[3]));
	return h;
}

static uint8_t frame_flags(const struct hs_cc_frame *f)
{
	return (uint8_t)(f->kernel | f->ret << 1 | f->signal << 2 | f->tramp << 3);
}

static uint64_t *memo_addrs(const struct hs_chain_memo *m)
{
	return m->buf;
}

static uint32_t *memo_locs(const struct hs_chain_memo *m)
{
	return (uint32_t *)((uint64_t *)m->buf + m->nframes);
}

static uint8_t *memo_flags(const struct hs_chain_memo *m)
{
	return (uint8_t *)(memo_locs(m) + m->nlocs);
}

static struct hs_chain_memo *chain_memo_of(struct hs_builder *b, uint64_t h)
{
	if (!b->chain_memo)
		b->chain_memo = hs_xcalloc(1u << CHAIN_MEMO_BITS, sizeof(*b->chain_memo));
	return &b->chain_memo[h >> (64 - CHAIN_MEMO_BITS)];
}

static bool chain_memo_hit(const struct hs_builder *b, const struct hs_chain_memo *m, uint64_t h, size_t from,
			   int32_t pid, bool strip)
{
	const struct hs_callchain *cc = &b->cc;

	if (!m->used || m->hash != h || m->gen != b->model.gen || m->pid != pid || m->strip != strip ||
	    m->stop != cc->stop || m->whole != !from || m->nframes != cc->frames.n - from)
		return false;
	for (size_t i = from; i < cc->frames.n; i++)
		if (memo_addrs(m)[i - from] != cc->frames.v[i].addr ||
		    memo_flags(m)[i - from] != frame_flags(&cc->frames.v[i]))
			return false;
	return true;
}

/* The memo takes the chain's frames from from on, and their locations in b->locs from from on. */
static void chain_memo_put(struct hs_builder *b, struct hs_chain_memo *m, uint64_t h, size_t from, int32_t pid,
			   bool strip, uint32_t stripped)
{
	const struct hs_callchain *cc = &b->cc;
	size_t nf = cc->frames.n - from, nl = b->locs.n - from, size = nf * 9 + nl * 4;

	if (m->cap < size || !m->buf) {
		m->cap = (uint32_t)HS_MAX(size, 1);
		m->buf = hs_xrealloc(m->buf, m->cap);
	}
	m->nframes = (uint32_t)nf;
	m->nlocs = (uint32_t)nl;
	for (size_t i = 0; i < nf; i++) {
		memo_addrs(m)[i] = cc->frames.v[from + i].addr;
		memo_flags(m)[i] = frame_flags(&cc->frames.v[from + i]);
	}
	memcpy(memo_locs(m), b->locs.v + from, nl * sizeof(uint32_t));
	m->hash = h;
	m->gen = b->model.gen;
	m->pid = pid;
	m->stripped = stripped;
	m->stop = (uint8_t)cc->stop;
	m->strip = strip;
	m->whole = !from;
	m->used = true;
	m->next = 0;
	for (size_t i = 0; i < CHAIN_STACKS; i++)
		m->stacks[i].stack = UINT32_MAX;
}

void hs_builder_chain_memo_free(struct hs_builder *b)
{
	if (!b->chain_memo)
		return;
	for (size_t i = 0; i < 1u << CHAIN_MEMO_BITS; i++)
		free(b->chain_memo[i].buf);
	free(b->chain_memo);
	b->chain_memo = NULL;
}

/* The frames tracepoints and software events may start with, in kernels that fetch the
 * registers deeper than the traced code's caller: never what was traced. */
static bool is_tracing_frame(const char *name)
{
	static const char *const prefixes[] = {"perf_", "__perf_", "___perf_", "trace_", "__trace", "___trace",
					       "ftrace_", "__ftrace", "bpf_trace", "__bpf_trace"};

	for (size_t i = 0; i < HS_ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* Before the unwinder compiles a file's tables: the stack, still where the kernel wrote it,
 * copied out of its way (see stack_done in hs_perf_sample). */
static void stack_detach(void *ctx, struct hs_stack_copy *c)
{
	const struct hs_perf_sample *s = ctx;

	if (s->stack_done)
		s->stack_done(s->stack_done_ctx, true);
	c->data = s->stack;
}

/* The sample's call chain as locations in b->locs, leaf first, with its stop reason; false
 * when no frame is left to show. */
bool hs_builder_sample_locs(struct hs_builder *b, const struct hs_perf_sample *s, int32_t pid, bool strip)
{
	bool strip0 = strip, stable = true, leaf_stable = true, whole;
	uint32_t stripped = 0, leaf = 0;
	struct hs_chain_memo *m;
	size_t from;
	uint64_t h;
	bool lbr = hs_lbr_has_call_stack(s);
	bool repair = lbr && b->opts.lbr_repair; /* the records check a chain walked otherwise */
	bool merged = false; /* the locations to be made by the runtime's merge, not here */

	if (s->user_abi && s->stack && s->user_regs) {
		/* kernel frames from the kernel's chain, user frames unwound from the copied stack */
		struct hs_regs regs;
		struct hs_stack_copy copy;
		const struct hs_rt_head *rt;
		unsigned rt_id = 0;

		if (s->callchain && b->opts.kernel)
			hs_callchain_from_perf(&b->cc, s->callchain, s->nr_callchain, true, false, b->opts.max_stack);
		else
			hs_callchain_reset(&b->cc);
		if (b->opts.user) {
			hs_regs_from_perf(&regs, s->user_regs, s->nr_user_regs, s->user_regs_mask);
			copy.start = regs.r[HS_DWARF_RSP];
			copy.data = s->stack;
			copy.size = s->stack_dyn_size;
			copy.end = s->stack_dyn_size < s->stack_size ? copy.start + copy.size : 0;
			copy.tid = (int32_t)s->sid.tid;
			copy.detach = s->stack_done ? stack_detach : NULL;
			copy.detach_ctx = (void *)s;
			hs_unwind_user(&b->unwinder, pid, &regs, &copy, &b->cc);
			rt = hs_builder_rt_peek(b, s->sid.tid, s->sid.time, &rt_id);
			merged = hs_builder_seg_unwind(b, pid, rt, rt_id, &copy);
			if (repair && hs_lbr_repair(&b->cc, s))
				b->stats.lbr_repaired++;
		}
		if (s->stack_done)
			s->stack_done(s->stack_done_ctx, false);
		if (merged) {
			b->locs.n = 0;
			return true;
		}
	} else if (lbr && !(repair && s->callchain)) {
		hs_lbr_chain(&b->cc, s, b->opts.kernel, b->opts.user, b->opts.max_stack);
	} else if (s->callchain) {
		hs_callchain_from_perf(&b->cc, s->callchain, s->nr_callchain, b->opts.kernel, b->opts.user,
				       b->opts.max_stack);
		if (repair && b->opts.user && hs_lbr_repair(&b->cc, s))
			b->stats.lbr_repaired++;
	} else {
		bool k = s->ip >= KERNEL_START;
		hs_callchain_reset(&b->cc);
		if ((k && b->opts.kernel) || (!k && b->opts.user))
			hs_callchain_push(&b->cc, s->ip, k, false);
	}
	/* the leaf on its own, unless kernel frames at the top may be left out */
	if (!b->cc.frames.n)
		whole = true;
	else
		whole = (strip && b->cc.frames.v[0].kernel) || b->cc.frames.v[0].tramp;
	from = whole ? 0 : 1;
	if (!whole) {
		const struct hs_cc_frame *f = &b->cc.frames.v[0];
		leaf = f->signal ? hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, "[signal]")
				 : hs_builder_frame_location(b, pid, f, &leaf_stable);
	}
	h = chain_hash(&b->cc, from, pid, strip);
	m = chain_memo_of(b, h);
	if (b->cc.frames.n && chain_memo_hit(b, m, h, from, pid, strip)) {
		hs_vec_reserve(&b->locs, from + m->nlocs);
		b->locs.v[0] = leaf;
		memcpy(b->locs.v + from, memo_locs(m), m->nlocs * sizeof(uint32_t));
		b->locs.n = from + m->nlocs;
		b->stats.tracing_frames += m->stripped;
		b->stats.chain_hits++;
		if (leaf_stable) {
			b->chain = m;
			b->chain_leaf = leaf;
		}
		return true;
	}
	b->locs.n = 0;
	if (!whole) {
		hs_vec_push(&b->locs, leaf);
		strip = false;
	}
	for (size_t i = from; i < b->cc.frames.n; i++) {
		const struct hs_cc_frame *f = &b->cc.frames.v[i];
		uint32_t loc = f->signal ? hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, "[signal]")
					 : hs_builder_frame_location(b, pid, f, &stable);
		if (strip && f->kernel && !b->locs.n && is_tracing_frame(hs_profile_location_name(b->p, loc))) {
			b->stats.tracing_frames++;
			stripped++;
			continue;
		}
		strip = false;
		if (f->tramp) {
			hs_builder_py_tramp(b, loc);
			stable = false; /* what it notes is noted for each sample */
		}
		hs_vec_push(&b->locs, loc);
	}
	if (!b->locs.n) {
		b->stats.empty_samples++;
		return false;
	}
	if (b->cc.stop != HS_STOP_END)
		hs_vec_push(&b->locs, hs_builder_named_location(b, 0, 0, HS_KIND_PSEUDO, hs_stop_name(b->cc.stop)));
	if (stable) {
		chain_memo_put(b, m, h, from, pid, strip0, stripped);
		if (leaf_stable) {
			b->chain = m;
			b->chain_leaf = leaf;
		}
	}
	return true;
}
