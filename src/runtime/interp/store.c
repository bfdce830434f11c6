/* The names store of the scripting runtimes (interp.h): a hash of (pid, fn, aux) to the function
 * read, under one lock; each is read once, the first time it is asked for. */
#include "runtime/interp/interp.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "util/util.h"

struct proc {
	int32_t pid;
	void *proc; /* lang->proc_size bytes */
};

struct entry {
	int32_t pid;
	bool ok;
	uint64_t fn, aux;
	struct hs_ip_code c;
};

struct hs_ip_names {
	const struct hs_ip_lang *lang;
	pthread_mutex_t lock;
	HS_VEC(struct proc) procs;
	HS_VEC(struct entry *) entries;
	struct hs_u64map index; /* key hash -> entries index + 1, chained by probing the key */
};

void hs_ip_code_release(struct hs_ip_code *c)
{
	free(c->name);
	free(c->file);
	free(c->lines);
	memset(c, 0, sizeof(*c));
}

struct hs_ip_names *hs_ip_names_new(const struct hs_ip_lang *lang)
{
	struct hs_ip_names *n = hs_xcalloc(1, sizeof(*n));

	n->lang = lang;
	pthread_mutex_init(&n->lock, NULL);
	return n;
}

static void entry_free(struct entry *e)
{
	if (e->ok)
		hs_ip_code_release(&e->c);
	free(e);
}

void hs_ip_names_free(struct hs_ip_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->entries.n; i++)
		entry_free(n->entries.v[i]);
	for (size_t i = 0; i < n->procs.n; i++)
		free(n->procs.v[i].proc);
	hs_vec_free(&n->entries);
	hs_vec_free(&n->procs);
	hs_u64map_release(&n->index);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

void hs_ip_names_add_proc(struct hs_ip_names *n, int32_t pid, const void *proc)
{
	struct proc p = {pid, hs_xmalloc(n->lang->proc_size)};

	memcpy(p.proc, proc, n->lang->proc_size);
	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < n->procs.n; i++)
		if (n->procs.v[i].pid == pid) {
			free(n->procs.v[i].proc);
			n->procs.v[i] = p;
			pthread_mutex_unlock(&n->lock);
			return;
		}
	hs_vec_push(&n->procs, p);
	pthread_mutex_unlock(&n->lock);
}

static uint64_t key_of(int32_t pid, uint64_t fn, uint64_t aux)
{
	return hs_hash_combine(hs_hash_combine(hs_hash_u64(fn), aux), (uint64_t)(uint32_t)pid);
}

/* The entry, under the lock: probes successive keys until the one of these fields, or a free
 * one (NULL, with *slot the key to put it at). */
static struct entry *find(struct hs_ip_names *n, int32_t pid, uint64_t fn, uint64_t aux, uint64_t *slot)
{
	uint64_t k = key_of(pid, fn, aux), v;

	for (;; k++) {
		struct entry *e;
		if (!hs_u64map_get(&n->index, k, &v)) {
			*slot = k;
			return NULL;
		}
		e = n->entries.v[v - 1];
		if (e->pid == pid && e->fn == fn && e->aux == aux)
			return e;
	}
}

void hs_ip_names_forget(struct hs_ip_names *n, const struct hs_u64map *gone)
{
	size_t kept = 0;
	uint64_t v, slot;

	if (!gone->n)
		return;
	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < n->procs.n; i++)
		if (hs_u64map_get(gone, (uint32_t)n->procs.v[i].pid, &v))
			free(n->procs.v[i].proc);
		else
			n->procs.v[kept++] = n->procs.v[i];
	n->procs.n = kept;
	kept = 0;
	hs_u64map_release(&n->index);
	for (size_t i = 0; i < n->entries.n; i++) {
		struct entry *e = n->entries.v[i];
		if (hs_u64map_get(gone, (uint32_t)e->pid, &v)) {
			entry_free(e);
			continue;
		}
		n->entries.v[kept++] = e;
		find(n, e->pid, e->fn, e->aux, &slot);
		hs_u64map_put(&n->index, slot, kept);
	}
	n->entries.n = kept;
	pthread_mutex_unlock(&n->lock);
}

static const void *proc_of(struct hs_ip_names *n, int32_t pid)
{
	for (size_t i = n->procs.n; i-- > 0;)
		if (n->procs.v[i].pid == pid)
			return n->procs.v[i].proc;
	return NULL;
}

static const struct hs_ip_code *get_locked(struct hs_ip_names *n, int32_t pid, const struct hs_ip_frame *f)
{
	const void *proc;
	struct entry *e;
	struct hs_rt_mem mem;
	uint64_t slot, fn = n->lang->by_aux ? 0 : f->fn; /* what tells it apart, with aux */

	if ((e = find(n, pid, fn, f->aux, &slot)))
		return e->ok ? &e->c : NULL;
	proc = proc_of(n, pid);
	if (!proc)
		return NULL;
	e = hs_xcalloc(1, sizeof(*e));
	e->pid = pid;
	e->fn = fn;
	e->aux = f->aux;
	mem = hs_rt_mem_pid(pid);
	e->ok = !n->lang->code_read(proc, &mem, f, &e->c);
	hs_vec_push(&n->entries, e);
	hs_u64map_put(&n->index, slot, n->entries.n);
	return e->ok ? &e->c : NULL;
}

void hs_ip_names_prefetch(struct hs_ip_names *n, const void *sample)
{
	const struct hs_ip_sample *s = sample;

	pthread_mutex_lock(&n->lock);
	for (unsigned i = 0; i < s->head.nframes && i < HS_IP_PREFETCH_DEPTH; i++)
		get_locked(n, (int32_t)s->head.pid, &s->frames[i]);
	pthread_mutex_unlock(&n->lock);
}

const struct hs_ip_code *hs_ip_names_get(struct hs_ip_names *n, int32_t pid, const struct hs_ip_frame *f)
{
	const struct hs_ip_code *c;

	pthread_mutex_lock(&n->lock);
	c = get_locked(n, pid, f);
	pthread_mutex_unlock(&n->lock);
	return c;
}

bool hs_ip_names_has(struct hs_ip_names *n, int32_t pid)
{
	bool has;

	pthread_mutex_lock(&n->lock);
	has = proc_of(n, pid) != NULL;
	pthread_mutex_unlock(&n->lock);
	return has;
}
