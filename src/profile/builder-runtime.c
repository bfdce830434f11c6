/* The builder's runtime side: each thread's latest runtime stacks (what a frame reader read at
 * its latest samples) kept until the sample each belongs to comes, and handed to the merge of
 * its runtime (builder-python.c, builder-segments.c) with that sample's native stack. */
#include "profile/builder-private.h"

#include <stdlib.h>
#include <string.h>

/* A reader's record and its sample are taken microseconds apart, in either order (the kernel
 * may stamp the sample before the program runs): a stack further than this from a sample is
 * another sample's (one lost, or not taken). It is how early the recording queues the stacks,
 * so that each comes before its sample (record/runtimes.c). */
#define RT_STACK_WINDOW_NS HS_RT_STACK_EARLY_NS

static bool py_merge(struct hs_builder *b, unsigned id, int32_t pid, const void *rec)
{
	return hs_builder_py_merge(b, pid, rec);
}

/* How a runtime's stack is merged into its sample's native stack in b->locs: true when it was. */
static bool (*const merges[HS_RT_SLOTS])(struct hs_builder *b, unsigned id, int32_t pid, const void *rec) = {
	[HS_RT_PYTHON] = py_merge,
	[HS_RT_HOTSPOT] = hs_builder_seg_merge,
	[HS_RT_V8] = hs_builder_seg_merge,
	[HS_RT_RUBY] = hs_builder_ip_merge,
	[HS_RT_PHP] = hs_builder_ip_merge,
	[HS_RT_PERL] = hs_builder_ip_merge,
};

/* What is done to the native stack of a sample of process pid that came without a stack, by the
 * runtime whose process it is; true when b->locs changed. */
static bool (*const unreads[HS_RT_SLOTS])(struct hs_builder *b, unsigned id, int32_t pid) = {
	[HS_RT_HOTSPOT] = hs_builder_seg_unread,
	[HS_RT_V8] = hs_builder_seg_unread,
};

static void orphan(struct hs_builder *b, struct hs_rt_pending *t, unsigned k)
{
	t->live &= ~(1u << k);
	b->stats.rt[t->id[k]].orphans++;
}

static void free_pending(struct hs_rt_pending *t)
{
	for (unsigned k = 0; k < HS_RT_PENDING; k++)
		free(t->rec[k]);
	free(t);
}

void hs_builder_rt_forget_threads(struct hs_builder *b)
{
	struct hs_builder_rt *rt = &b->rt;
	uint64_t now = b->model.now, ix;
	size_t kept = 0;

	for (size_t i = 0; i < rt->threads.n; i++) {
		struct hs_rt_pending *t = rt->threads.v[i];
		for (unsigned k = 0; k < HS_RT_PENDING; k++)
			if (t->live >> k & 1 && t->rec[k]->time + RT_STACK_WINDOW_NS < now)
				orphan(b, t, k); /* its sample never came */
		if (!t->live)
			free_pending(t);
		else
			rt->threads.v[kept++] = t;
	}
	rt->threads.n = kept;
	hs_u64map_release(&rt->pending);
	for (size_t i = 0; i < rt->threads.n; i++) {
		/* the thread of a stack: any of its stacks says */
		const struct hs_rt_pending *t = rt->threads.v[i];
		for (unsigned k = 0; k < HS_RT_PENDING; k++)
			if (t->live >> k & 1) {
				if (!hs_u64map_get(&rt->pending, t->rec[k]->tid, &ix))
					hs_u64map_put(&rt->pending, t->rec[k]->tid, i + 1);
				break;
			}
	}
}

void hs_builder_rt_release(struct hs_builder *b)
{
	for (size_t i = 0; i < b->rt.threads.n; i++)
		free_pending(b->rt.threads.v[i]);
	hs_vec_free(&b->rt.threads);
	hs_u64map_release(&b->rt.pending);
}

void hs_builder_rt_stack(struct hs_builder *b, const struct hs_perf_event *ev)
{
	struct hs_builder_rt *rt = &b->rt;
	const struct hs_rt_head *h = ev->raw.data;
	unsigned id = ev->misc, slot = 0;
	const struct hs_runtime *r = hs_runtime(id);
	struct hs_rt_pending *t;
	uint64_t ix;
	size_t size;

	if (!r || !b->opts.rt_names || !b->opts.rt_names->store[id] || ev->raw.size < sizeof(*h) ||
	    !(size = r->record_size(ev->raw.data, ev->raw.size)))
		return;
	if (!hs_u64map_get(&rt->pending, h->tid, &ix)) {
		hs_vec_push(&rt->threads, hs_xcalloc(1, sizeof(struct hs_rt_pending)));
		ix = rt->threads.n;
		hs_u64map_put(&rt->pending, h->tid, ix);
	}
	t = rt->threads.v[ix - 1];
	for (unsigned i = 0; i < HS_RT_PENDING; i++) { /* a free slot, else the oldest */
		if (!(t->live >> i & 1)) {
			slot = i;
			break;
		}
		if (t->rec[i]->time < t->rec[slot]->time)
			slot = i;
	}
	if (t->live >> slot & 1)
		orphan(b, t, slot); /* all full: the oldest was never taken */
	if (t->cap[slot] < size) {
		free(t->rec[slot]);
		t->rec[slot] = hs_xmalloc(size);
		t->cap[slot] = (uint32_t)size;
	}
	memcpy(t->rec[slot], ev->raw.data, size);
	t->size[slot] = (uint32_t)size;
	t->id[slot] = (uint8_t)id;
	t->live |= 1u << slot;
}

/* The slot of the thread's stack read with the sample at time (the nearest within the window),
 * or HS_RT_PENDING. */
static unsigned nearest(const struct hs_rt_pending *t, uint64_t time)
{
	unsigned best = HS_RT_PENDING;
	uint64_t best_d = RT_STACK_WINDOW_NS + 1;

	for (unsigned i = 0; i < HS_RT_PENDING; i++) {
		uint64_t d;
		if (!(t->live >> i & 1))
			continue;
		d = t->rec[i]->time > time ? t->rec[i]->time - time : time - t->rec[i]->time;
		if (d < best_d) {
			best_d = d;
			best = i;
		}
	}
	return best;
}

const struct hs_rt_head *hs_builder_rt_peek(struct hs_builder *b, uint32_t tid, uint64_t time, unsigned *id)
{
	uint64_t ix;
	unsigned k;

	if (!b->opts.rt_names || !hs_u64map_get(&b->rt.pending, tid, &ix))
		return NULL;
	k = nearest(b->rt.threads.v[ix - 1], time);
	if (k == HS_RT_PENDING)
		return NULL;
	*id = b->rt.threads.v[ix - 1]->id[k];
	return b->rt.threads.v[ix - 1]->rec[k];
}

/* The thread's stack read with the sample at time (the nearest within the window), taken out
 * with those before it (their samples were lost); NULL when none. It stays valid until the
 * thread's next stack comes. */
static const struct hs_rt_head *take_stack(struct hs_builder *b, struct hs_rt_pending *t, uint64_t time,
					   unsigned *id)
{
	unsigned best = nearest(t, time);
	uint64_t upto;

	/* those older than the one taken, or than the window when none is, will never be */
	upto = best < HS_RT_PENDING ? t->rec[best]->time : time - RT_STACK_WINDOW_NS;
	for (unsigned i = 0; i < HS_RT_PENDING; i++)
		if (t->live >> i & 1 && i != best && t->rec[i]->time < upto)
			orphan(b, t, i);
	if (best == HS_RT_PENDING)
		return NULL;
	t->live &= ~(1u << best);
	*id = t->id[best];
	return t->rec[best];
}

/* A sample of process pid that came without its runtime's stack: a runtime whose frames the
 * native unwinding cannot be trusted with (the JVM's) has them cut. Returns whether b->locs
 * changed. */
static bool unread(struct hs_builder *b, int32_t pid)
{
	for (unsigned id = 1; id < HS_RT_SLOTS; id++)
		if (unreads[id] && b->opts.rt_names->store[id] && unreads[id](b, id, pid))
			return true;
	return false;
}

bool hs_builder_rt_merge(struct hs_builder *b, const struct hs_perf_sample *s, int32_t pid)
{
	const struct hs_rt_head *h;
	uint64_t ix;
	unsigned id = 0;

	if (!b->opts.rt_names)
		return false;
	if (!hs_u64map_get(&b->rt.pending, s->sid.tid, &ix))
		return unread(b, pid);
	h = take_stack(b, b->rt.threads.v[ix - 1], s->sid.time, &id);
	if (!h) {
		/* a thread whose stacks were all of one runtime: counted there */
		const struct hs_rt_pending *t = b->rt.threads.v[ix - 1];
		b->stats.rt[t->rec[0] ? t->id[0] : HS_RT_PYTHON].unpaired++;
		return unread(b, pid);
	}
	if (h->pid != (uint32_t)pid || !h->nframes || !merges[id])
		return false;
	if (!merges[id](b, id, pid, h))
		return false;
	b->stats.rt[id].samples++;
	return true;
}
