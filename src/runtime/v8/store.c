/* The names of JavaScript frames (store.h): per process, its functions by SharedFunctionInfo,
 * each read once. */
#include "runtime/v8/store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

struct named_frame;

/* A script's line ends. */
struct lines {
	uint32_t *ends;
	size_t n;
};

struct proc {
	int32_t pid;
	struct hs_v8 v8;
	struct hs_rt_mem mem; /* through pages, forgotten before and after each frame is named */
	struct hs_rt_pages pages;
	struct hs_u64map fns; /* SharedFunctionInfo -> index in fn + 1 (0: cannot be read) */
	HS_VEC(struct hs_v8_function *) fn;
	uint64_t is_map; /* the map of InstructionStreams, once one was found */
	struct hs_u64map codes; /* pc -> the Code found holding it + 1 (1: none) */
	struct hs_u64map frames; /* hash of a frame -> index in named + 1, probed on */
	HS_VEC(struct named_frame *) named;
	struct hs_u64map scripts; /* Script -> index in lines + 1 (0: cannot be read) */
	HS_VEC(struct lines) lines;
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
	for (size_t i = 0; i < p->lines.n; i++)
		free(p->lines.v[i].ends);
	hs_vec_free(&p->lines);
	hs_u64map_release(&p->scripts);
	hs_u64map_release(&p->codes);
	for (size_t i = 0; i < p->named.n; i++)
		free(p->named.v[i]);
	hs_vec_free(&p->named);
	hs_u64map_release(&p->frames);
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
		p->mem = hs_rt_mem_pages(&p->pages, pid);
		hs_vec_push(&n->v, p);
		hs_u64map_put(&n->procs, (uint32_t)pid, n->v.n);
	}
	pthread_mutex_unlock(&n->lock);
}

/* The function of sfi in p as it was when its name_or_scope_info was check (0: not known),
 * read the first time it is asked for; NULL when it cannot be, or when sfi names another now
 * (the collector moved it and put another there). */
static const struct hs_v8_function *function(struct proc *p, uint64_t sfi, uint64_t check)
{
	struct hs_v8_function *f;
	uint64_t key = check ? hs_hash_combine(hs_hash_u64(sfi), check) : sfi, ix, now;

	for (;; key++) {
		if (!hs_u64map_get(&p->fns, key, &ix))
			break;
		if (!ix)
			return NULL;
		f = p->fn.v[ix - 1];
		if (f->sfi == sfi && f->check == check)
			return f;
	}
	f = hs_xmalloc(sizeof(*f));
	if (hs_v8_sfi_read(&p->v8.lay, &p->mem, sfi, f) ||
	    (check && (hs_v8_field(&p->v8.lay, &p->mem, sfi, p->v8.lay.sfi_name_or_scope_info, &now) || now != check))) {
		free(f);
		hs_u64map_put(&p->fns, key, 0);
		return NULL;
	}
	f->sfi = sfi;
	f->check = check;
	hs_vec_push(&p->fn, f);
	hs_u64map_put(&p->fns, key, p->fn.n);
	return f;
}

static unsigned kind_of(const struct hs_v8_rec_frame *f)
{
	return (unsigned)(f->b >> HS_V8_FRAME_SHIFT);
}

static const struct named_frame *named(struct proc *p, const struct hs_v8_rec_frame *fr);

void hs_v8_names_prefetch(struct hs_v8_names *n, const struct hs_v8_sample *s)
{
	struct proc *p;
	size_t nnamed = 0;

	pthread_mutex_lock(&n->lock);
	if ((p = find(n, (int32_t)s->head.pid)))
		for (size_t i = 0; i < s->head.nframes && nnamed < HS_V8_PREFETCH_DEPTH; i++) {
			unsigned k = kind_of(&s->frames[i]);
			/* a recursion's frames are alike: named once */
			if (i && !memcmp(&s->frames[i], &s->frames[i - 1], sizeof(s->frames[i])))
				continue;
			if (k >= HS_V8_FRAME_INTERP && k <= HS_V8_FRAME_FUNCTION) {
				/* named now, while the code and what it inlined are where the
				 * reader found them */
				named(p, &s->frames[i]);
				nnamed++;
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

/* The line ends of script, read the first time; NULL when they cannot be. */
static const struct lines *script_lines(struct proc *p, uint64_t script)
{
	struct lines ln;
	uint64_t ix;

	if (!script)
		return NULL;
	if (hs_u64map_get(&p->scripts, script, &ix))
		return ix ? &p->lines.v[ix - 1] : NULL;
	if (hs_v8_line_ends(&p->v8.lay, &p->mem, script, &ln.ends, &ln.n)) {
		hs_u64map_put(&p->scripts, script, 0);
		return NULL;
	}
	hs_vec_push(&p->lines, ln);
	hs_u64map_put(&p->scripts, script, p->lines.n);
	return &p->lines.v[p->lines.n - 1];
}

static void place(struct proc *p, struct hs_v8_named *nm, int32_t offset)
{
	const struct lines *ln = script_lines(p, nm->f->script);

	if (ln)
		hs_v8_line_of(ln->ends, ln->n, offset, &nm->line, &nm->column);
}

/* The bytecode's source position table of a function, or 0. */
static uint64_t bytecode_table(struct proc *p, const struct hs_v8_function *f)
{
	const struct hs_v8_layout *l = &p->v8.lay;
	uint64_t bc = f->data, t;
	uint16_t type;

	if (hs_v8_type(l, &p->mem, bc, &type))
		return 0;
	/* baseline code keeps its bytecode */
	if (type == l->t_code && (hs_v8_field(l, &p->mem, bc, l->code_deopt, &bc) || hs_v8_type(l, &p->mem, bc, &type)))
		return 0;
	if (type != l->t_bytecode_array || hs_v8_field(l, &p->mem, bc, l->bytecode_spt, &t))
		return 0;
	return t;
}

#define MAX_INLINED 32

/* The functions optimised code runs at pc; 0 when the code is not the frame's any more. */
static size_t optimized(struct proc *p, uint64_t sfi, uint64_t check, uint64_t code, uint64_t pc, bool ret,
			struct hs_v8_named *out, size_t max)
{
	const struct hs_v8_layout *l = &p->v8.lay;
	struct hs_v8_scope sc[MAX_INLINED];
	struct hs_v8_pos pos;
	uint64_t start, table;
	uint32_t size;
	uint16_t type;
	size_t n = 0, k = 0;

	if (hs_v8_type(l, &p->mem, code, &type) || type != l->t_code || hs_v8_field(l, &p->mem, code, l->code_start, &start) ||
	    p->mem.read(p->mem.ctx, code - l->heap_tag + l->code_size, &size, sizeof(size)) || pc < start ||
	    pc - start > size || hs_v8_field(l, &p->mem, code, l->code_spt, &table))
		return 0;
	if (hs_v8_position(l, &p->mem, table, (int64_t)(pc - start) - (ret ? 1 : 0), &pos) ||
	    hs_v8_inlined(l, &p->mem, code, pos, sc, MAX_INLINED, &n) || !n)
		return 0;
	if (sc[n - 1].sfi != sfi) {
		/* the code holds the pc, so it is the frame's function's; its function may have been
		 * moved since the sample, and must then be the same one as read now */
		const struct hs_v8_function *was = function(p, sfi, check), *now;
		uint64_t c;
		if (!was || hs_v8_field(l, &p->mem, sc[n - 1].sfi, l->sfi_name_or_scope_info, &c) ||
		    !(now = function(p, sc[n - 1].sfi, c)) || strcmp(was->name, now->name) || strcmp(was->file, now->file))
			return 0;
		sfi = sc[n - 1].sfi;
		check = c;
	}
	for (size_t i = 0; i < n && k < max; i++) {
		/* the frame's own function as the sample saw it; those inlined in it as they are
		 * now (their addresses were read now, from the code): never by address alone, which
		 * the collector may have given another function since it was cached */
		uint64_t now = check;
		const struct hs_v8_function *f;
		if (sc[i].sfi != sfi && hs_v8_field(l, &p->mem, sc[i].sfi, l->sfi_name_or_scope_info, &now))
			return 0;
		f = function(p, sc[i].sfi, now);
		if (!f)
			return 0;
		out[k] = (struct hs_v8_named){f, 0, 0, i + 1 < n, HS_V8_FRAME_OPTIMIZED};
		place(p, &out[k++], sc[i].offset);
	}
	return k;
}

#define LOOK_BACK (512u << 10) /* bytes before a pc looked at for its code's header */

/* Whether the InstructionStream at h (its start) holds pc, and its Code into *code. */
static bool stream_holds(struct proc *p, uint64_t h, uint64_t map, uint64_t code, uint64_t pc, uint64_t *ret)
{
	const struct hs_v8_layout *l = &p->v8.lay;
	uint64_t start;
	uint32_t size;
	uint16_t type;

	if (!hs_v8_is_heap(l, map) || !hs_v8_is_heap(l, code))
		return false;
	if (p->is_map ? map != p->is_map
		      : p->mem.read(p->mem.ctx, map - l->heap_tag + l->map_instance_type, &type, sizeof(type)) ||
				type != l->t_instruction_stream)
		return false;
	if (hs_v8_type(l, &p->mem, code, &type) || type != l->t_code || hs_v8_field(l, &p->mem, code, l->code_start, &start) ||
	    p->mem.read(p->mem.ctx, code - l->heap_tag + l->code_size, &size, sizeof(size)) || start <= h ||
	    start - h > 256 || pc < start || pc - start >= size)
		return false;
	p->is_map = map;
	*ret = code;
	return true;
}

/* The Code whose instructions hold pc (in the code range), found by looking back from pc for
 * its InstructionStream's header (its map, then its Code), page by page while they can be
 * read, or 0. */
static uint64_t code_at(struct proc *p, uint64_t pc)
{
	uint64_t buf[4096 / 8 + 2], code;

	if (pc < p->v8.jit_lo || pc >= p->v8.jit_hi || pc < 16)
		return 0;
	for (uint64_t page = (pc - 16) & ~4095ULL; page >= p->v8.jit_lo && pc - page <= LOOK_BACK; page -= 4096) {
		size_t n = 4096 / 8;
		/* the header's second word may be on the next page, read before this one */
		if (p->mem.read(p->mem.ctx, page, buf, 4096))
			return 0;
		if (page + 4096 <= pc && !p->mem.read(p->mem.ctx, page + 4096, buf + n, 8))
			n++;
		for (size_t i = n - 1; i-- > 0;) {
			uint64_t h = page + 8 * i;
			if (h + 16 <= pc && stream_holds(p, h, buf[i], buf[i + 1], pc, &code))
				return code;
		}
	}
	return 0;
}

/* Names frame fr of process p (the store's lock held): the functions, innermost first, into out
 * (at most max); their count, 0 when it cannot be named. */
static size_t name_frame(struct proc *p, const struct hs_v8_rec_frame *fr, struct hs_v8_named *out, size_t max)
{
	unsigned kind = kind_of(fr);
	const struct hs_v8_function *f;
	struct hs_v8_pos pos;
	size_t k = 0;

	if (!max || !(f = function(p, fr->a, fr->check)))
		return 0;
	if (kind == HS_V8_FRAME_OPTIMIZED &&
	    (k = optimized(p, fr->a, fr->check, fr->b & (HS_V8_OPT_CODE - 1), fr->pc, !(fr->b & HS_V8_PC_EXACT), out,
			   max)))
		goto out;
	if (kind == HS_V8_FRAME_FUNCTION && fr->pc) {
		/* looked for once per pc: the Code found is checked when named, as any */
		uint64_t code;
		if (hs_u64map_get(&p->codes, fr->pc, &code))
			code--;
		else
			hs_u64map_put(&p->codes, fr->pc, (code = code_at(p, fr->pc)) + 1);
		if (code && (k = optimized(p, fr->a, fr->check, code, fr->pc, !(fr->b & HS_V8_PC_EXACT), out, max)))
			goto out;
	}
	out[0] = (struct hs_v8_named){f, 0, 0, false, (uint8_t)kind};
	k = 1;
	/* optimised code that could not be read: functions inlined where it runs would be missing,
	 * and the frame says so (never a chain that looks whole without them) */
	if (kind == HS_V8_FRAME_OPTIMIZED || (kind == HS_V8_FRAME_FUNCTION && (fr->b & HS_V8_OPT_CODE)) ||
	    (kind == HS_V8_FRAME_FUNCTION && fr->pc >= p->v8.jit_lo && fr->pc < p->v8.jit_hi))
		out[0].unsure = true;
	if (kind == HS_V8_FRAME_INTERP) {
		uint64_t t = bytecode_table(p, f);
		int64_t off = (int64_t)(fr->b & HS_V8_VALUE_MASK) - p->v8.lay.bytecode_bias;
		if (t && off >= 0 && !hs_v8_position(&p->v8.lay, &p->mem, t, off, &pos))
			place(p, &out[0], pos.offset);
	} else if (kind == HS_V8_FRAME_BASELINE) {
		/* the code must still be the frame's: its instructions hold pc */
		const struct hs_v8_layout *l = &p->v8.lay;
		uint64_t code = fr->b & (HS_V8_OPT_CODE - 1), start, t = bytecode_table(p, f);
		uint32_t size;
		uint16_t type;
		int64_t off;
		if (t && !hs_v8_type(l, &p->mem, code, &type) && type == l->t_code &&
		    !hs_v8_field(l, &p->mem, code, l->code_start, &start) &&
		    !p->mem.read(p->mem.ctx, code - l->heap_tag + l->code_size, &size, sizeof(size)) && fr->pc >= start &&
		    fr->pc - start <= size && !hs_v8_baseline_offset(l, &p->mem, code, fr->pc - start, &off) &&
		    !hs_v8_position(l, &p->mem, t, off, &pos))
			place(p, &out[0], pos.offset);
	}
out:
	return k;
}

#define MAX_NAMED 32

/* A frame named: what names it as the reader wrote it, and the names. */
struct named_frame {
	uint64_t pc, a, b, check;
	size_t n;
	struct hs_v8_named v[MAX_NAMED];
};

/* The names of frame fr in p, from the frames named before or named now; NULL when it cannot be
 * named. */
static const struct named_frame *named(struct proc *p, const struct hs_v8_rec_frame *fr)
{
	uint64_t key = hs_hash_combine(hs_hash_combine(hs_hash_u64(fr->pc), fr->a), fr->b ^ fr->check), ix;
	struct named_frame *nf;

	for (;; key++) {
		if (!hs_u64map_get(&p->frames, key, &ix))
			break;
		nf = p->named.v[ix - 1];
		if (nf->pc == fr->pc && nf->a == fr->a && nf->b == fr->b && nf->check == fr->check)
			return nf->n ? nf : NULL;
	}
	nf = hs_xmalloc(sizeof(*nf));
	*nf = (struct named_frame){fr->pc, fr->a, fr->b, fr->check, 0, {{0}}};
	hs_rt_pages_forget(&p->pages);
	nf->n = name_frame(p, fr, nf->v, MAX_NAMED);
	hs_rt_pages_forget(&p->pages);
	hs_vec_push(&p->named, nf);
	hs_u64map_put(&p->frames, key, p->named.n);
	return nf->n ? nf : NULL;
}

size_t hs_v8_names_frame(struct hs_v8_names *n, int32_t pid, const struct hs_v8_rec_frame *fr, struct hs_v8_named *out,
			 size_t max)
{
	const struct named_frame *nf = NULL;
	struct proc *p;
	size_t k = 0;

	pthread_mutex_lock(&n->lock);
	if ((p = find(n, pid)) && (nf = named(p, fr)))
		memcpy(out, nf->v, (k = nf->n < max ? nf->n : max) * sizeof(*out));
	pthread_mutex_unlock(&n->lock);
	return k;
}
