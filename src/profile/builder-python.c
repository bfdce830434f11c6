/* The builder's Python side: the code objects of a Python stack (what the frame reader read
 * with a sample, paired with it by builder-runtime.c) named, and its frames merged into that
 * sample's native stack (runtime/python/merge.h). */
#include "profile/builder-private.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/python/merge.h"
#include "symbolize/dwarf-lines.h"
#include "runtime/python/names.h"

void hs_builder_py_forget_locations(struct hs_builder *b)
{
	hs_u64map_release(&b->py.loc_ix);
	hs_vec_free(&b->py.locs);
	hs_u64map_release(&b->py.classes);
}

void hs_builder_py_release(struct hs_builder *b)
{
	struct hs_builder_py *py = &b->py;

	hs_u64map_release(&py->loc_ix);
	hs_vec_free(&py->locs);
	hs_u64map_release(&py->classes);
	hs_vec_free(&py->merged);
	hs_vec_free(&py->native);
	hs_vec_free(&py->entry);
	hs_vec_free(&py->out);
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
	else if (l->kind == HS_KIND_USER &&
		 (name[0] == '[' ||
		  (l->mapping && hs_profile_address_name(name, hs_profile_str(b->p, b->p->mappings.v[l->mapping].file)))))
		/* no symbol (or only its address, where the file is stripped): in the interpreter (its static functions, where it is stripped) it is
		 * its machinery; elsewhere (an extension, a library) it is kept */
		c = l->mapping && hs_py_maybe_runtime(hs_profile_str(b->p, b->p->mappings.v[l->mapping].file))
			    ? HS_PY_NATIVE_PLUMBING
			    : HS_PY_NATIVE_OTHER;
	else if (!strcmp(name, "PyEval_EvalFrameEx") && l->mapping &&
		 strstr(hs_profile_str(b->p, b->p->mappings.v[l->mapping].file), "python2"))
		c = HS_PY_NATIVE_EVAL; /* 2.7's eval loop (a wrapper of 3's, which is plumbing) */
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
	const struct hs_py_code *c = hs_py_names_get(b->opts.rt_names->store[HS_RT_PYTHON], pid, f);
	struct hs_line ln;

	if (!c) {
		b->stats.rt[HS_RT_PYTHON].unnamed++;
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
	uint32_t nm = hs_profile_intern_str(b->p, flags & HS_PY_TRUNCATED    ? "[python: truncated]"
						  : flags & HS_PY_UNANCHORED ? "[python: callers lost]"
									     : "[python: unreadable frame]");
	struct hs_line ln = {hs_profile_function(b->p, nm, nm, 0, 0), 0};

	return hs_profile_location(b->p, 0, 0, HS_KIND_PSEUDO, &ln, 1);
}

bool hs_builder_py_merge(struct hs_builder *b, int32_t pid, const void *rec)
{
	struct hs_builder_py *py = &b->py;
	const struct hs_py_sample *ps = rec;
	size_t n, np;
	bool cut;

	np = ps->head.nframes;
	cut = ps->head.flags & (HS_PY_TRUNCATED | HS_PY_BAD_CODE | HS_PY_READ_FAULT | HS_PY_UNANCHORED);
	b->stats.rt[HS_RT_PYTHON].cut += cut;
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
			py->out.v[k] = cut_location(b, ps->head.flags);
		else
			py->out.v[k] = m >= 0 ? b->locs.v[m] : py_location(b, pid, &ps->frames[-1 - m]);
	}
	hs_vec_reserve(&b->locs, n);
	memcpy(b->locs.v, py->out.v, n * sizeof(*b->locs.v));
	b->locs.n = n;
	return true;
}
