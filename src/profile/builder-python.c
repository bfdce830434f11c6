/* The builder's Python side: each thread's latest Python stack (what the frame reader read at
 * its latest sample) kept until the sample it belongs to comes, its code objects named, and the
 * Python frames merged into that sample's native stack (python/merge.h). */
#include "profile/builder-private.h"

#include <stdlib.h>
#include <string.h>

#include "python/merge.h"
#include "symbolize/dwarf-lines.h"
#include "python/names.h"

/* The frame reader's record and its sample are taken microseconds apart, in either order (the
 * kernel may stamp the sample before the program runs): a stack further than this from a
 * sample is another sample's (one lost, or not taken). It is how early the recording queues
 * the stacks, so that each comes before its sample (record/python.c). */
#define PY_STACK_WINDOW_NS HS_PY_STACK_EARLY_NS

void hs_builder_py_forget_locations(struct hs_builder *b)
{
	hs_u64map_release(&b->py.loc_ix);
	hs_vec_free(&b->py.locs);
	hs_u64map_release(&b->py.classes);
}

void hs_builder_py_forget_threads(struct hs_builder *b)
{
	struct hs_builder_py *py = &b->py;
	uint64_t now = b->model.now, ix;
	size_t kept = 0;

	for (size_t i = 0; i < py->threads.n; i++) {
		struct hs_py_pending *t = py->threads.v[i];
		for (unsigned k = 0; k < HS_PY_PENDING; k++) {
			if (t->live >> k & 1 && t->s[k].time + PY_STACK_WINDOW_NS < now) {
				t->live &= ~(1u << k); /* its sample never came */
				b->stats.py_orphans++;
			}
		}
		if (!t->live)
			free(t);
		else
			py->threads.v[kept++] = t;
	}
	py->threads.n = kept;
	hs_u64map_release(&py->pending);
	for (size_t i = 0; i < py->threads.n; i++) {
		/* the thread of a stack: any of its stacks says */
		const struct hs_py_pending *t = py->threads.v[i];
		for (unsigned k = 0; k < HS_PY_PENDING; k++)
			if (t->live >> k & 1) {
				if (!hs_u64map_get(&py->pending, t->s[k].tid, &ix))
					hs_u64map_put(&py->pending, t->s[k].tid, i + 1);
				break;
			}
	}
}

void hs_builder_py_release(struct hs_builder *b)
{
	struct hs_builder_py *py = &b->py;

	for (size_t i = 0; i < py->threads.n; i++)
		free(py->threads.v[i]);
	hs_vec_free(&py->threads);
	hs_u64map_release(&py->pending);
	hs_u64map_release(&py->loc_ix);
	hs_vec_free(&py->locs);
	hs_u64map_release(&py->classes);
	hs_vec_free(&py->merged);
	hs_vec_free(&py->native);
	hs_vec_free(&py->entry);
	hs_vec_free(&py->out);
}

void hs_builder_py_stack(struct hs_builder *b, const struct hs_perf_event *ev)
{
	struct hs_builder_py *py = &b->py;
	const struct hs_py_sample *s = ev->raw.data;
	size_t head = offsetof(struct hs_py_sample, frames);
	struct hs_py_pending *t;
	unsigned slot = 0;
	uint64_t ix;

	if (!b->opts.py_names || ev->raw.size < head || s->nframes > HS_PY_MAX_FRAMES ||
	    ev->raw.size < head + s->nframes * sizeof(s->frames[0]))
		return;
	if (!hs_u64map_get(&py->pending, s->tid, &ix)) {
		hs_vec_push(&py->threads, hs_xcalloc(1, sizeof(struct hs_py_pending)));
		ix = py->threads.n;
		hs_u64map_put(&py->pending, s->tid, ix);
	}
	t = py->threads.v[ix - 1];
	for (unsigned i = 0; i < HS_PY_PENDING; i++) { /* a free slot, else the oldest */
		if (!(t->live >> i & 1)) {
			slot = i;
			break;
		}
		if (t->s[i].time < t->s[slot].time)
			slot = i;
	}
	if (t->live >> slot & 1)
		b->stats.py_orphans++; /* all full: the oldest was never taken */
	memcpy(&t->s[slot], s, head + s->nframes * sizeof(s->frames[0]));
	t->live |= 1u << slot;
}

/* The thread's stack read with the sample at time (the nearest within the window), taken out
 * with those before it (their samples were lost); NULL when none. It stays valid until the
 * thread's next stack comes. */
static const struct hs_py_sample *take_stack(struct hs_builder *b, struct hs_py_pending *t, uint64_t time)
{
	unsigned best = HS_PY_PENDING;
	uint64_t best_d = PY_STACK_WINDOW_NS + 1, upto;

	for (unsigned i = 0; i < HS_PY_PENDING; i++) {
		uint64_t d = t->s[i].time > time ? t->s[i].time - time : time - t->s[i].time;
		if (t->live >> i & 1 && d < best_d) {
			best_d = d;
			best = i;
		}
	}
	/* those older than the one taken, or than the window when none is, will never be */
	upto = best < HS_PY_PENDING ? t->s[best].time : time - PY_STACK_WINDOW_NS;
	for (unsigned i = 0; i < HS_PY_PENDING; i++) {
		if (t->live >> i & 1 && i != best && t->s[i].time < upto) {
			t->live &= ~(1u << i);
			b->stats.py_orphans++;
		}
	}
	if (best == HS_PY_PENDING)
		return NULL;
	t->live &= ~(1u << best);
	return &t->s[best];
}

/* What a native location is to the merge, worked out once per location, and the location to
 * show instead when some of its inlined functions are machinery and some not (0: itself). */
static uint8_t native_class(struct hs_builder *b, uint32_t loc, uint32_t *instead)
{
	const struct hs_location *l = &b->p->locations.v[loc];
	struct hs_line kept[HS_DWARF_MAX_INLINE];
	const char *name = hs_profile_location_name(b->p, loc);
	uint32_t nkept = 0, nlines = l->nlines;
	uint64_t c;

	*instead = 0;
	if (hs_u64map_get(&b->py.classes, loc, &c)) {
		*instead = (uint32_t)(c >> 32);
		return (uint8_t)(c - 1);
	}
	if (l->kind == HS_KIND_KERNEL)
		c = HS_PY_NATIVE_OTHER;
	else if (l->kind == HS_KIND_PSEUDO && !l->mapping)
		/* a stop reason ends the stack; [unknown] and [signal] are frames like others */
		c = !strcmp(name, "[unknown]")                                  ? HS_PY_NATIVE_UNKNOWN
		    : !strcmp(name, "[signal]") || !strncmp(name, "[python", 7) ? HS_PY_NATIVE_OTHER
										: HS_PY_NATIVE_STOP;
	else if (l->kind == HS_KIND_JIT && name[0] == '[')
		c = HS_PY_NATIVE_JIT; /* named at the end: a trampoline where it calls the eval loop */
	else if (l->kind == HS_KIND_USER && name[0] == '[')
		/* no symbol: in the interpreter (its static functions, where it is stripped) it is
		 * its machinery; elsewhere (an extension, a library) it is kept */
		c = l->mapping && hs_py_maybe_runtime(hs_profile_str(b->p, b->p->mappings.v[l->mapping].file))
			    ? HS_PY_NATIVE_PLUMBING
			    : HS_PY_NATIVE_OTHER;
	else
		c = hs_py_native_class(name, l->kind == HS_KIND_JIT);
	if (c == HS_PY_NATIVE_OTHER && nlines > 1 && nlines <= HS_DWARF_MAX_INLINE && l->kind == HS_KIND_USER) {
		/* functions inlined into one that stays: those that are machinery go */
		for (uint32_t i = 0; i < nlines; i++) {
			struct hs_line ln = b->p->lines.v[l->line0 + i];
			const char *fn = hs_profile_str(b->p, b->p->functions.v[ln.function].name);
			if (hs_py_native_class(fn, false) == HS_PY_NATIVE_OTHER)
				kept[nkept++] = ln;
		}
		if (nkept < nlines)
			*instead = hs_profile_location(b->p, l->mapping, l->address, l->kind, kept, nkept);
	}
	hs_u64map_put(&b->py.classes, loc, (c + 1) | (uint64_t)*instead << 32);
	return (uint8_t)c;
}

void hs_builder_py_tramp(struct hs_builder *b, uint32_t loc)
{
	hs_u64map_put(&b->py.classes, loc, HS_PY_NATIVE_TRAMPOLINE + 1);
}

/* The location of a Python frame, made: one per code object and line. */
static uint32_t make_py_location(struct hs_builder *b, int32_t pid, const struct hs_py_frame *f)
{
	uint32_t nm, file;
	const struct hs_py_code *c = hs_py_names_get(b->opts.py_names, pid, f);
	struct hs_line ln;

	if (!c) {
		b->stats.py_unnamed++;
		nm = hs_profile_intern_str(b->p, "[python]");
		ln.function = hs_profile_function(b->p, nm, nm, 0, 0);
		ln.line = 0;
		return hs_profile_location(b->p, 0, 0, HS_KIND_PSEUDO, &ln, 1);
	}
	nm = hs_profile_intern_str(b->p, c->name);
	file = hs_profile_intern_str(b->p, c->file);
	ln.function = hs_profile_function(b->p, nm, nm, file, c->firstlineno);
	ln.line = hs_py_code_line(c, f->instr);
	return hs_profile_location(b->p, 0, 0, HS_KIND_PYTHON, &ln, 1);
}

/* The location of a Python frame: looked up by what the frame reader gave (process, code
 * object, first line, instruction), so that a frame seen before costs one hash lookup. */
static uint32_t py_location(struct hs_builder *b, int32_t pid, const struct hs_py_frame *f)
{
	struct hs_builder_py *py = &b->py;
	uint32_t firstlineno = f->line_entry & ~HS_PY_ENTRY_BIT, ident = hs_py_code_ident(f->name, f->file);
	uint64_t k = hs_hash_combine(hs_hash_combine(hs_hash_u64(f->code), (uint64_t)(uint32_t)pid << 32 | f->instr),
				     (uint64_t)ident << 32 | firstlineno),
		 v;
	struct hs_py_frame_loc e;

	for (;; k++) {
		const struct hs_py_frame_loc *h;
		if (!hs_u64map_get(&py->loc_ix, k, &v))
			break;
		h = &py->locs.v[v - 1];
		if (h->code == f->code && h->pid == pid && h->instr == f->instr && h->firstlineno == firstlineno &&
		    h->ident == ident)
			return h->loc;
	}
	e = (struct hs_py_frame_loc){pid, firstlineno, f->instr, make_py_location(b, pid, f), ident, f->code};
	hs_vec_push(&py->locs, e);
	hs_u64map_put(&py->loc_ix, k, py->locs.n);
	return e.loc;
}

/* Where a Python stack read in part is cut: said as a stop reason is. */
static uint32_t cut_location(struct hs_builder *b, unsigned flags)
{
	uint32_t nm = hs_profile_intern_str(b->p, flags & HS_PY_TRUNCATED ? "[python: truncated]"
									  : "[python: unreadable frame]");
	struct hs_line ln = {hs_profile_function(b->p, nm, nm, 0, 0), 0};

	return hs_profile_location(b->p, 0, 0, HS_KIND_PSEUDO, &ln, 1);
}

bool hs_builder_py_merge(struct hs_builder *b, const struct hs_perf_sample *s, int32_t pid)
{
	struct hs_builder_py *py = &b->py;
	const struct hs_py_sample *ps;
	uint64_t ix;
	size_t n, np;
	bool cut;

	if (!b->opts.py_names || !hs_u64map_get(&py->pending, s->sid.tid, &ix))
		return false;
	ps = take_stack(b, py->threads.v[ix - 1], s->sid.time);
	if (!ps || ps->pid != (uint32_t)pid || !ps->nframes) {
		b->stats.py_unpaired += !ps;
		return false;
	}
	np = ps->nframes;
	cut = ps->flags & (HS_PY_TRUNCATED | HS_PY_BAD_CODE | HS_PY_READ_FAULT);
	b->stats.py_cut += cut;
	hs_vec_reserve(&py->native, b->locs.n);
	hs_vec_reserve(&py->entry, np);
	hs_vec_reserve(&py->merged, b->locs.n + np + 1);
	hs_vec_reserve(&py->out, b->locs.n + np + 1);
	for (size_t i = 0; i < b->locs.n; i++) {
		uint32_t instead;
		py->native.v[i] = native_class(b, b->locs.v[i], &instead);
		if (instead && !b->opts.python_internals)
			b->locs.v[i] = instead; /* read only after the merge, which keeps it */
	}
	for (size_t j = 0; j < np; j++)
		py->entry.v[j] = !!(ps->frames[j].line_entry & HS_PY_ENTRY_BIT);
	n = hs_py_merge(py->native.v, b->locs.n, py->entry.v, np, cut, b->opts.python_internals, py->merged.v);
	for (size_t k = 0; k < n; k++) {
		int32_t m = py->merged.v[k];
		if (m == HS_PY_MERGE_CUT)
			py->out.v[k] = cut_location(b, ps->flags);
		else
			py->out.v[k] = m >= 0 ? b->locs.v[m] : py_location(b, pid, &ps->frames[-1 - m]);
	}
	hs_vec_reserve(&b->locs, n);
	memcpy(b->locs.v, py->out.v, n * sizeof(*b->locs.v));
	b->locs.n = n;
	b->stats.py_samples++;
	return true;
}
