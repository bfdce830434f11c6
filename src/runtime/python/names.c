/* The per-process code object cache (names.h): a hash of (pid, code address, first line,
 * co_name and co_filename) to the code read, under one lock; each code object is read once,
 * the first time it is asked for. */
#include "runtime/python/names.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/util.h"

struct proc {
	int32_t pid;
	struct hs_py_interp in;
};

struct entry {
	int32_t pid;
	uint32_t firstlineno, ident;
	uint64_t code;
	bool ok;
	struct hs_py_code c;
};

struct hs_py_names {
	pthread_mutex_t lock;
	HS_VEC(struct proc) procs;
	HS_VEC(struct entry *) entries;
	struct hs_u64map index; /* key hash -> entries index + 1, chained by probing the key */
};

struct hs_py_names *hs_py_names_new(void)
{
	struct hs_py_names *n = hs_xcalloc(1, sizeof(*n));

	pthread_mutex_init(&n->lock, NULL);
	return n;
}

void hs_py_names_free(struct hs_py_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->entries.n; i++) {
		if (n->entries.v[i]->ok)
			hs_py_code_release(&n->entries.v[i]->c);
		free(n->entries.v[i]);
	}
	hs_vec_free(&n->entries);
	hs_vec_free(&n->procs);
	hs_u64map_release(&n->index);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

void hs_py_names_add_proc(struct hs_py_names *n, int32_t pid, const struct hs_py_interp *in)
{
	struct proc p = {pid, *in};

	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < n->procs.n; i++)
		if (n->procs.v[i].pid == pid) {
			n->procs.v[i] = p;
			pthread_mutex_unlock(&n->lock);
			return;
		}
	hs_vec_push(&n->procs, p);
	pthread_mutex_unlock(&n->lock);
}

static struct entry *find(struct hs_py_names *n, int32_t pid, uint64_t code, uint32_t firstlineno, uint32_t ident,
			  uint64_t *slot);

void hs_py_names_forget(struct hs_py_names *n, const struct hs_u64map *gone)
{
	size_t kept = 0;
	uint64_t v, slot;

	if (!gone->n)
		return;
	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < n->procs.n; i++)
		if (!hs_u64map_get(gone, (uint32_t)n->procs.v[i].pid, &v))
			n->procs.v[kept++] = n->procs.v[i];
	n->procs.n = kept;
	kept = 0;
	hs_u64map_release(&n->index);
	for (size_t i = 0; i < n->entries.n; i++) {
		struct entry *e = n->entries.v[i];
		if (hs_u64map_get(gone, (uint32_t)e->pid, &v)) {
			if (e->ok)
				hs_py_code_release(&e->c);
			free(e);
			continue;
		}
		n->entries.v[kept++] = e;
		find(n, e->pid, e->code, e->firstlineno, e->ident, &slot);
		hs_u64map_put(&n->index, slot, kept);
	}
	n->entries.n = kept;
	pthread_mutex_unlock(&n->lock);
}

static const struct hs_py_interp *interp_of(struct hs_py_names *n, int32_t pid)
{
	for (size_t i = n->procs.n; i-- > 0;)
		if (n->procs.v[i].pid == pid)
			return &n->procs.v[i].in;
	return NULL;
}

static uint64_t key_of(int32_t pid, uint64_t code, uint32_t firstlineno, uint32_t ident)
{
	return hs_hash_combine(hs_hash_combine(hs_hash_u64(code), (uint64_t)(uint32_t)pid << 32 | firstlineno), ident);
}

/* The entry, under the lock: probes successive keys until the one of these fields, or a free
 * one (NULL, with *slot the key to put it at). */
static struct entry *find(struct hs_py_names *n, int32_t pid, uint64_t code, uint32_t firstlineno, uint32_t ident,
			  uint64_t *slot)
{
	uint64_t k = key_of(pid, code, firstlineno, ident), v;

	for (;; k++) {
		struct entry *e;
		if (!hs_u64map_get(&n->index, k, &v)) {
			*slot = k;
			return NULL;
		}
		e = n->entries.v[v - 1];
		if (e->pid == pid && e->code == code && e->firstlineno == firstlineno && e->ident == ident)
			return e;
	}
}

static const struct hs_py_code *get_locked(struct hs_py_names *n, int32_t pid, const struct hs_py_frame *f)
{
	uint64_t code = f->code;
	uint32_t firstlineno = f->line_entry & ~HS_PY_ENTRY_BIT, ident = hs_py_code_ident(f->name, f->file);
	const struct hs_py_interp *in;
	struct entry *e;
	struct hs_rt_mem mem;
	uint64_t slot;

	if ((e = find(n, pid, code, firstlineno, ident, &slot)))
		return e->ok ? &e->c : NULL;
	in = interp_of(n, pid);
	if (!in)
		return NULL;
	e = hs_xcalloc(1, sizeof(*e));
	e->pid = pid;
	e->code = code;
	e->firstlineno = firstlineno;
	e->ident = ident;
	mem = hs_rt_mem_pid(pid);
	e->ok = !hs_py_code_read(in, &mem, code, &e->c);
	if (e->ok && ((uint32_t)e->c.firstlineno != firstlineno || e->c.ident != ident)) {
		/* another code object there now: the frame's is gone */
		hs_py_code_release(&e->c);
		e->ok = false;
	}
	if (!e->ok) /* gone (a module's body, run once): named from its name and file, if they live */
		e->ok = !hs_py_code_from_strings(in, &mem, f->name, f->file, firstlineno, &e->c);
	hs_vec_push(&n->entries, e);
	hs_u64map_put(&n->index, slot, n->entries.n);
	return e->ok ? &e->c : NULL;
}

void hs_py_names_prefetch(struct hs_py_names *n, const struct hs_py_sample *s)
{
	pthread_mutex_lock(&n->lock);
	for (unsigned i = 0; i < s->head.nframes && i < HS_PY_PREFETCH_DEPTH; i++)
		get_locked(n, (int32_t)s->head.pid, &s->frames[i]);
	pthread_mutex_unlock(&n->lock);
}

const struct hs_py_code *hs_py_names_get(struct hs_py_names *n, int32_t pid, const struct hs_py_frame *f)
{
	const struct hs_py_code *c;

	pthread_mutex_lock(&n->lock);
	c = get_locked(n, pid, f);
	pthread_mutex_unlock(&n->lock);
	return c;
}
