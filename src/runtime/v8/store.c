/* The names of JavaScript frames (store.h): per process, its functions by SharedFunctionInfo,
 * each read once. */
#include "runtime/v8/store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

struct proc {
	int32_t pid;
	struct hs_v8 v8;
	struct hs_rt_mem mem;
	struct hs_u64map fns; /* SharedFunctionInfo -> index in fn + 1 (0: cannot be read) */
	HS_VEC(struct hs_v8_function *) fn;
};

struct hs_v8_names {
	pthread_mutex_t lock;
	struct hs_u64map procs; /* pid -> index in v + 1 */
	HS_VEC(struct proc *) v;
};

struct hs_v8_names *hs_v8_names_new(void)
{
	struct hs_v8_names *n = hs_xcalloc(1, sizeof(*n));

	pthread_mutex_init(&n->lock, NULL);
	return n;
}

static void proc_free(struct proc *p)
{
	for (size_t i = 0; i < p->fn.n; i++)
		free(p->fn.v[i]);
	hs_vec_free(&p->fn);
	hs_u64map_release(&p->fns);
	free(p);
}

void hs_v8_names_free(struct hs_v8_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->v.n; i++)
		if (n->v.v[i])
			proc_free(n->v.v[i]);
	hs_vec_free(&n->v);
	hs_u64map_release(&n->procs);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

static struct proc *find(struct hs_v8_names *n, int32_t pid)
{
	uint64_t ix;

	return hs_u64map_get(&n->procs, (uint32_t)pid, &ix) && ix ? n->v.v[ix - 1] : NULL;
}

void hs_v8_names_add_proc(struct hs_v8_names *n, int32_t pid, const struct hs_v8 *v8)
{
	struct proc *p;

	pthread_mutex_lock(&n->lock);
	if (!find(n, pid)) {
		p = hs_xcalloc(1, sizeof(*p));
		p->pid = pid;
		p->v8 = *v8;
		p->mem = hs_rt_mem_pid(pid);
		hs_vec_push(&n->v, p);
		hs_u64map_put(&n->procs, (uint32_t)pid, n->v.n);
	}
	pthread_mutex_unlock(&n->lock);
}

/* The function of sfi in p, read the first time it is asked for; NULL when it cannot be. */
static const struct hs_v8_function *function(struct proc *p, uint64_t sfi)
{
	struct hs_v8_function *f;
	uint64_t ix;

	if (hs_u64map_get(&p->fns, sfi, &ix))
		return ix ? p->fn.v[ix - 1] : NULL;
	f = hs_xmalloc(sizeof(*f));
	if (hs_v8_sfi_read(&p->v8.lay, &p->mem, sfi, f)) {
		free(f);
		hs_u64map_put(&p->fns, sfi, 0);
		return NULL;
	}
	hs_vec_push(&p->fn, f);
	hs_u64map_put(&p->fns, sfi, p->fn.n);
	return f;
}

static unsigned kind_of(const struct hs_v8_rec_frame *f)
{
	return (unsigned)(f->b >> HS_V8_FRAME_SHIFT);
}

void hs_v8_names_prefetch(struct hs_v8_names *n, const struct hs_v8_sample *s)
{
	struct proc *p;
	size_t named = 0;

	pthread_mutex_lock(&n->lock);
	if ((p = find(n, (int32_t)s->head.pid)))
		for (size_t i = 0; i < s->head.nframes && named < HS_V8_PREFETCH_DEPTH; i++) {
			unsigned k = kind_of(&s->frames[i]);
			if (k >= HS_V8_FRAME_INTERP && k <= HS_V8_FRAME_FUNCTION) {
				function(p, s->frames[i].a);
				named++;
			}
		}
	pthread_mutex_unlock(&n->lock);
}

void hs_v8_names_forget(struct hs_v8_names *n, const struct hs_u64map *gone)
{
	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < n->v.n; i++) {
		struct proc *p = n->v.v[i];
		uint64_t x;
		if (p && hs_u64map_get(gone, (uint32_t)p->pid, &x)) {
			hs_u64map_put(&n->procs, (uint32_t)p->pid, 0);
			/* its names stay valid until the store is freed: the builder may hold them */
		}
	}
	pthread_mutex_unlock(&n->lock);
}

const struct hs_v8 *hs_v8_names_proc(struct hs_v8_names *n, int32_t pid)
{
	struct proc *p;

	pthread_mutex_lock(&n->lock);
	p = find(n, pid);
	pthread_mutex_unlock(&n->lock);
	return p ? &p->v8 : NULL;
}

bool hs_v8_names_function(struct hs_v8_names *n, int32_t pid, uint64_t sfi, const struct hs_v8_function **f)
{
	struct proc *p;

	pthread_mutex_lock(&n->lock);
	p = find(n, pid);
	*f = p ? function(p, sfi) : NULL;
	pthread_mutex_unlock(&n->lock);
	return *f != NULL;
}
