/* The builder's side of the scripting runtimes read from outside as Python is (Ruby, PHP, Perl;
 * runtime/interp/interp.h): a stack (what the reader read with a sample, paired with it by
 * builder-runtime.c) named from its language's names store, and merged into the sample's native
 * stack as Python's is (runtime/python/merge.h): each run of the interpreter's loop in place of
 * the native frame that runs it, the interpreter's machinery between them left out unless its
 * internals are kept. */
#include "profile/builder-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/interp/interp.h"
#include "runtime/python/merge.h"

void hs_builder_ip_forget_locations(struct hs_builder *b)
{
	hs_u64map_release(&b->ip.loc_ix);
	hs_vec_free(&b->ip.locs);
}

/* What a native location is to the merge of lang's frames, worked out once per location. */
static uint8_t native_class(struct hs_builder *b, const struct hs_ip_lang *lang, uint32_t loc)
{
	const struct hs_location *l = &b->p->locations.v[loc];
	const char *name = hs_profile_location_name(b->p, loc);
	uint64_t key = loc | (uint64_t)lang->id << 32, c;
	size_t taglen = strlen(lang->tag);

	if (hs_u64map_get(&b->py.classes, key, &c))
		return (uint8_t)(c - 1);
	if (l->kind == HS_KIND_KERNEL)
		c = HS_PY_NATIVE_OTHER;
	else if (l->kind == HS_KIND_PSEUDO && !l->mapping)
		/* a stop reason ends the stack; [unknown], [signal] and marks are frames like others */
		c = !strcmp(name, "[unknown]") ? HS_PY_NATIVE_UNKNOWN
		    : !strcmp(name, "[signal]") || (name[0] == '[' && !strncmp(name + 1, lang->tag, taglen))
			? HS_PY_NATIVE_OTHER
			: HS_PY_NATIVE_STOP;
	else if (l->kind == HS_KIND_USER &&
		 (name[0] == '[' ||
		  (l->mapping && hs_profile_address_name(name, hs_profile_str(b->p, b->p->mappings.v[l->mapping].file))))) {
		/* no symbol: in the interpreter (its static functions, where it is stripped) it is
		 * its machinery, or a part of its loop moved away from the rest; elsewhere (an
		 * extension, a library) it is kept */
		const struct hs_mapping *m = l->mapping ? &b->p->mappings.v[l->mapping] : NULL;
		const char *file = m ? hs_profile_str(b->p, m->file) : NULL;
		c = HS_PY_NATIVE_OTHER;
		if (m && lang->maybe(file)) {
			c = HS_PY_NATIVE_PLUMBING;
			if (lang->unnamed_class && m->elf_base && l->address > m->elf_base &&
			    lang->unnamed_class(file, m->build_id ? hs_profile_str(b->p, m->build_id) : NULL,
						l->address - m->elf_base) == HS_IP_NATIVE_LOOP)
				c = HS_PY_NATIVE_EVAL;
		}
	} else if (l->kind == HS_KIND_USER) {
		enum hs_ip_native k = lang->native_class(name);
		c = k == HS_IP_NATIVE_LOOP       ? HS_PY_NATIVE_EVAL
		    : k == HS_IP_NATIVE_PLUMBING ? HS_PY_NATIVE_PLUMBING
						 : HS_PY_NATIVE_OTHER;
	} else
		c = HS_PY_NATIVE_OTHER;
	hs_u64map_put(&b->py.classes, key, c + 1);
	return (uint8_t)c;
}

static uint32_t pseudo(struct hs_builder *b, const char *name)
{
	uint32_t nm = hs_profile_intern_str(b->p, name);
	struct hs_line ln = {hs_profile_function(b->p, nm, nm, 0, 0), 0};

	return hs_profile_location(b->p, 0, 0, HS_KIND_PSEUDO, &ln, 1);
}

/* The kind of each language's frames */
static uint8_t kind_of(unsigned id)
{
	return id == HS_RT_RUBY ? HS_KIND_RUBY : id == HS_RT_PHP ? HS_KIND_PHP : HS_KIND_PERL;
}

/* The location of a frame, made: one per function and line. */
static uint32_t make_location(struct hs_builder *b, const struct hs_ip_lang *lang, int32_t pid,
			      const struct hs_ip_frame *f, uint32_t *line)
{
	const struct hs_ip_code *c = hs_ip_names_get(b->opts.rt_names->store[lang->id], pid, f);
	char name[64];
	uint32_t nm, file;
	struct hs_line ln;

	if (!c) {
		b->stats.rt[lang->id].unnamed++;
		snprintf(name, sizeof(name), "[%s]", lang->tag);
		return pseudo(b, name);
	}
	nm = hs_profile_intern_str(b->p, c->name);
	file = c->file ? hs_profile_intern_str(b->p, c->file) : 0;
	ln.function = hs_profile_function(b->p, nm, nm, file, c->firstline);
	ln.line = *line;
	return hs_profile_location(b->p, 0, 0, kind_of(lang->id), &ln, 1);
}

/* The location of a frame: looked up by what the reader gave (runtime, process, function and
 * line), so that a frame seen before costs one hash lookup. */
static uint32_t frame_location(struct hs_builder *b, const struct hs_ip_lang *lang, int32_t pid,
			       const struct hs_ip_frame *f)
{
	struct hs_builder_ip *ip = &b->ip;
	uint32_t line = f->line;
	uint64_t k, v, fn = lang->by_aux ? 0 : f->fn; /* what tells it apart, with aux */
	struct hs_ip_frame_loc e;

	if (lang->line) {
		/* the line comes from the function's table: named first */
		const struct hs_ip_code *c = hs_ip_names_get(b->opts.rt_names->store[lang->id], pid, f);
		line = c ? lang->line(c, f) : 0;
	}
	k = hs_hash_combine(hs_hash_combine(hs_hash_u64(fn), f->aux),
			    (uint64_t)(uint32_t)pid << 32 ^ (uint64_t)line ^ (uint64_t)lang->id << 28);
	for (;; k++) {
		const struct hs_ip_frame_loc *h;
		if (!hs_u64map_get(&ip->loc_ix, k, &v))
			break;
		h = &ip->locs.v[v - 1];
		if (h->fn == fn && h->aux == f->aux && h->pid == pid && h->line == line && h->id == lang->id)
			return h->loc;
	}
	e = (struct hs_ip_frame_loc){pid, make_location(b, lang, pid, f, &line), line, lang->id, fn, f->aux};
	hs_vec_push(&ip->locs, e);
	hs_u64map_put(&ip->loc_ix, k, ip->locs.n);
	return e.loc;
}

bool hs_builder_ip_merge(struct hs_builder *b, unsigned id, int32_t pid, const void *rec)
{
	const struct hs_ip_lang *lang = hs_ip_lang(id);
	struct hs_builder_py *py = &b->py;
	const struct hs_ip_sample *s = rec;
	size_t n, np = s->head.nframes;
	bool cut = s->head.flags & (HS_IP_TRUNCATED | HS_IP_READ_FAULT | HS_IP_BAD_FRAME);
	bool internals = b->opts.internals & HS_RT_BIT(id);
	uint32_t last = UINT32_MAX;
	char mark[64];

	if (!lang || !b->opts.rt_names || !b->opts.rt_names->store[id])
		return false;
	b->stats.rt[id].cut += cut;
	hs_vec_reserve(&py->native, b->locs.n);
	hs_vec_reserve(&py->entry, np);
	hs_vec_reserve(&py->merged, b->locs.n + np + 1);
	hs_vec_reserve(&py->out, b->locs.n + np + 1);
	for (size_t i = 0; i < b->locs.n; i++)
		py->native.v[i] = native_class(b, lang, b->locs.v[i]);
	for (size_t j = 0; j < np; j++)
		py->entry.v[j] = s->frames[j].flags & HS_IP_ENTRY;
	n = hs_py_merge(py->native.v, b->locs.n, py->entry.v, np, cut, internals, py->merged.v);
	for (size_t k = 0; k < n; k++) {
		int32_t m = py->merged.v[k];
		if (m == HS_PY_MERGE_CUT) {
			snprintf(mark, sizeof(mark), "[%s: %s]", lang->tag,
				 s->head.flags & HS_IP_TRUNCATED ? "truncated" : "unreadable frame");
			py->out.v[k] = pseudo(b, mark);
		} else if (m >= 0)
			py->out.v[k] = b->locs.v[m];
		else {
			const struct hs_ip_frame *f = &s->frames[-1 - m];
			/* a recursion's frames are alike: looked up once */
			if (-1 - m == 0 || memcmp(f, f - 1, sizeof(*f)))
				last = frame_location(b, lang, pid, f);
			py->out.v[k] = last;
		}
	}
	hs_vec_reserve(&b->locs, n);
	memcpy(b->locs.v, py->out.v, n * sizeof(*b->locs.v));
	b->locs.n = n;
	return true;
}
