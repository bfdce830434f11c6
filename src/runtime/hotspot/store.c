/* The names of Java frames (store.h): per process, its methods by Method* and its compiled code
 * by (blob, compile id, pc), each read once. */
#include "runtime/hotspot/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define MAX_SCOPES 32 /* methods of one compiled frame: the leaf and those it is inlined into */

/* Compiled code at one pc: the methods it runs there, or its blob's name when it is no nmethod. */
struct code {
	uint64_t blob, pc;
	uint32_t compile_id;
	enum hs_jvm_comp comp;
	bool ok;     /* read, and the blob was the frame's */
	bool stub;   /* a stub or adapter: name says which */
	size_t n;
	struct hs_jvm_scope *scopes;
	const struct hs_jvm_method **methods; /* of scopes, read with the code: the code keeps
	                                       * its methods' classes alive, so they were its */
	char name[64];
};

struct proc {
	int32_t pid;
	struct hs_jvm jvm;
	struct hs_rt_mem mem;
	struct hs_u64map methods; /* Method* -> index in meths + 1 (0: cannot be read) */
	HS_VEC(struct hs_jvm_method *) meths;
	struct hs_u64map codes; /* hash of (blob, compile id, pc) -> index in code + 1, probed on */
	HS_VEC(struct code) code;
};

struct hs_jvm_names {
	pthread_mutex_t lock;
	struct hs_u64map procs; /* pid -> index in v + 1 */
	HS_VEC(struct proc *) v;
};

struct hs_jvm_names *hs_jvm_names_new(void)
{
	struct hs_jvm_names *n = hs_xcalloc(1, sizeof(*n));

	pthread_mutex_init(&n->lock, NULL);
	return n;
}

static void proc_free(struct proc *p)
{
	for (size_t i = 0; i < p->meths.n; i++) {
		hs_jvm_method_release(p->meths.v[i]);
		free(p->meths.v[i]);
	}
	hs_vec_free(&p->meths);
	for (size_t i = 0; i < p->code.n; i++)
	{
		free(p->code.v[i].scopes);
		free(p->code.v[i].methods);
	}
	hs_vec_free(&p->code);
	hs_u64map_release(&p->methods);
	hs_u64map_release(&p->codes);
	free(p);
}

void hs_jvm_names_free(struct hs_jvm_names *n)
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

void hs_jvm_names_add_proc(struct hs_jvm_names *n, int32_t pid, const struct hs_jvm *jvm)
{
	struct proc *p = hs_xcalloc(1, sizeof(*p));
	uint64_t ix;

	p->pid = pid;
	p->jvm = *jvm;
	p->mem = hs_rt_mem_pid(pid);
	pthread_mutex_lock(&n->lock);
	if (hs_u64map_get(&n->procs, (uint32_t)pid, &ix) && n->v.v[ix - 1]) {
		proc_free(n->v.v[ix - 1]); /* a new program in the process */
		n->v.v[ix - 1] = p;
	} else {
		hs_vec_push(&n->v, p);
		hs_u64map_put(&n->procs, (uint32_t)pid, n->v.n);
	}
	pthread_mutex_unlock(&n->lock);
}

void hs_jvm_names_forget(struct hs_jvm_names *n, const struct hs_u64map *gone)
{
	size_t kept = 0;

	pthread_mutex_lock(&n->lock);
	hs_u64map_release(&n->procs);
	for (size_t i = 0; i < n->v.n; i++) {
		struct proc *p = n->v.v[i];
		uint64_t v;
		if (p && hs_u64map_get(gone, (uint32_t)p->pid, &v)) {
			proc_free(p);
			p = NULL;
		}
		if (p) {
			n->v.v[kept++] = p;
			hs_u64map_put(&n->procs, (uint32_t)p->pid, kept);
		}
	}
	n->v.n = kept;
	pthread_mutex_unlock(&n->lock);
}

static struct proc *proc_of(struct hs_jvm_names *n, int32_t pid)
{
	uint64_t ix;

	return hs_u64map_get(&n->procs, (uint32_t)pid, &ix) ? n->v.v[ix - 1] : NULL;
}

bool hs_jvm_names_has(struct hs_jvm_names *n, int32_t pid)
{
	bool has;

	pthread_mutex_lock(&n->lock);
	has = proc_of(n, pid) != NULL;
	pthread_mutex_unlock(&n->lock);
	return has;
}

/* Whether the method read before at addr is still there: a class unloaded leaves its methods'
 * memory to others, and a Method* of another method there has another ConstMethod. */
static bool still(struct proc *p, uint64_t addr, const struct hs_jvm_method *m)
{
	uint64_t cm = 0;

	return !p->mem.read(p->mem.ctx, addr + p->jvm.info.off.method_const_method, &cm, sizeof(cm)) &&
	       cm == m->const_method;
}

/* The method at addr, read once; NULL when it cannot be read. With check (a frame sampled just
 * now), one read before is checked to be still there; else (naming later, when its class may be
 * gone) it is believed. */
static const struct hs_jvm_method *method(struct proc *p, uint64_t addr, bool check)
{
	struct hs_jvm_method m, *keep;
	uint64_t ix;

	if (hs_u64map_get(&p->methods, addr, &ix) && ix && (!check || still(p, addr, p->meths.v[ix - 1])))
		return p->meths.v[ix - 1];
	if (hs_jvm_method_read(&p->jvm, &p->mem, addr, &m)) {
		hs_u64map_put(&p->methods, addr, 0);
		return NULL;
	}
	keep = hs_xmalloc(sizeof(*keep));
	*keep = m;
	hs_vec_push(&p->meths, keep); /* one replaced stays where it was: its names may be in use */
	hs_u64map_put(&p->methods, addr, p->meths.n);
	return keep;
}

static uint64_t code_key(uint64_t blob, uint32_t compile_id, uint64_t pc)
{
	return hs_hash_combine(hs_hash_combine(hs_hash_u64(blob), compile_id), pc);
}

/* Reads the compiled code of a frame: its blob must still be the one the frame ran (its compile
 * id the same), else it is left unnamed. */
static void read_code(struct proc *p, struct code *c)
{
	struct hs_jvm_blob b;
	struct hs_jvm_scope sc[MAX_SCOPES];
	size_t n = 0;

	if (hs_jvm_blob_read(&p->jvm, &p->mem, c->blob, &b))
		return;
	if (b.kind == HS_JVM_BLOB_OTHER) {
		c->stub = c->ok = true;
		snprintf(c->name, sizeof(c->name), "%s", b.name);
		return;
	}
	if (b.kind != HS_JVM_BLOB_NMETHOD || (uint32_t)b.compile_id != c->compile_id)
		return; /* freed, and maybe another nmethod there now */
	c->comp = hs_jvm_comp_of_level(b.comp_level);
	if (hs_jvm_scopes(&p->jvm, &p->mem, &b, c->pc, sc, MAX_SCOPES, &n) || !n) {
		/* no debug information at pc (a native method's wrapper): the method itself */
		sc[0].method = b.method;
		sc[0].bci = -1;
		n = 1;
	}
	c->scopes = hs_xmalloc(n * sizeof(*c->scopes));
	memcpy(c->scopes, sc, n * sizeof(*sc));
	c->methods = hs_xcalloc(n, sizeof(*c->methods));
	for (size_t i = 0; i < n; i++)
		c->methods[i] = method(p, sc[i].method, true);
	c->n = n;
	c->ok = true;
}

static struct code *code_of(struct proc *p, const struct hs_jvm_rec_frame *f)
{
	uint32_t id = (uint32_t)f->b;
	uint64_t k = code_key(f->a, id, f->pc), ix;
	struct code c = {0};

	for (;; k++) {
		struct code *h;
		if (!hs_u64map_get(&p->codes, k, &ix))
			break;
		h = &p->code.v[ix - 1];
		if (h->blob == f->a && h->compile_id == id && h->pc == f->pc)
			return h;
	}
	c.blob = f->a;
	c.compile_id = id;
	c.pc = f->pc;
	read_code(p, &c);
	hs_vec_push(&p->code, c);
	hs_u64map_put(&p->codes, k, p->code.n);
	return &p->code.v[p->code.n - 1];
}

static unsigned frame_kind(const struct hs_jvm_rec_frame *f)
{
	return (unsigned)(f->b >> HS_JVM_FRAME_SHIFT);
}

void hs_jvm_names_prefetch(struct hs_jvm_names *n, const struct hs_jvm_sample *s)
{
	struct proc *p;

	pthread_mutex_lock(&n->lock);
	p = proc_of(n, (int32_t)s->head.pid);
	for (size_t i = 0, k = 0; p && i < s->head.nframes && k < HS_JVM_PREFETCH_DEPTH; i++) {
		const struct hs_jvm_rec_frame *f = &s->frames[i];
		if (frame_kind(f) == HS_JVM_FRAME_INTERP) {
			method(p, f->a, true);
		} else if (frame_kind(f) == HS_JVM_FRAME_COMPILED) {
			code_of(p, f); /* with its methods */
		} else {
			continue;
		}
		k++;
	}
	pthread_mutex_unlock(&n->lock);
}

static size_t name_compiled(struct proc *p, const struct hs_jvm_rec_frame *f, struct hs_jvm_named *out, size_t max,
			    char *stub, size_t stublen)
{
	struct code *c = code_of(p, f);
	size_t k = 0;

	if (!c->ok)
		return 0;
	if (c->stub) {
		snprintf(stub, stublen, "%s", c->name);
		return 0;
	}
	for (size_t i = 0; i < c->n && k < max; i++) {
		const struct hs_jvm_method *m = c->methods[i];
		if (!m)
			return 0; /* one unnamed makes the frame unnamed: never a chain with a hole */
		out[k].m = m;
		out[k].line = c->scopes[i].bci >= 0 ? hs_jvm_method_line(m, c->scopes[i].bci) : 0;
		out[k].comp = c->comp;
		out[k].inlined = i + 1 < c->n;
		k++;
	}
	return k;
}

size_t hs_jvm_names_frame(struct hs_jvm_names *n, int32_t pid, const struct hs_jvm_rec_frame *f, struct hs_jvm_named *out,
			  size_t max, char *stub, size_t stublen)
{
	struct proc *p;
	size_t k = 0;

	if (stublen)
		stub[0] = '\0';
	if (!max)
		return 0;
	pthread_mutex_lock(&n->lock);
	p = proc_of(n, pid);
	if (p && frame_kind(f) == HS_JVM_FRAME_INTERP) {
		const struct hs_jvm_method *m = method(p, f->a, false);
		int32_t bci = m ? hs_jvm_method_bci(&p->jvm, m, f->b & HS_JVM_VALUE_MASK) : -1;
		if (m) {
			out[0] = (struct hs_jvm_named){m, bci >= 0 ? hs_jvm_method_line(m, bci) : 0, HS_JVM_INTERPRETED,
						       false};
			k = 1;
		}
	} else if (p && frame_kind(f) == HS_JVM_FRAME_COMPILED) {
		k = name_compiled(p, f, out, max, stub, stublen);
	}
	pthread_mutex_unlock(&n->lock);
	return k;
}
