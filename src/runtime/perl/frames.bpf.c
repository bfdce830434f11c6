// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Reads the Perl frames of the sampled thread, at the moment of the sample (docs/perl.md).
 *
 * For a process in the procs table (a perl whose version and build user space knows), it takes
 * the sampled thread's interpreter from the thread's descriptor (fs base + ctx_off), and walks
 * its context stacks from the current one out: each sub, format, string eval and require is a
 * frame, named by what names its sub (its name's HEK and its package's stash, read here: a
 * closure's CV is freed when it goes), with its line: the innermost frame's from PL_curcop,
 * each other's from the call site the context inside it saved. The program's top level is a
 * frame of its own. Each frame a C function started a run of the interpreter's loop with (a
 * sub entered from C, the base of a sort block's or a callback's stackinfo) is marked. The walk
 * is the one walk.c does in user space; the two are kept in step. */
#include "runtime/frames-bpf.h"
#include "runtime/perl/pl-abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* process id */
	__type(value, struct hs_pl_proc_info);
} procs SEC(".maps");

/* the record being built, the process's description, room to read a context and an SV into,
 * and where the walk is; the loop's steps find it here (bpf_loop callbacks take no map
 * pointers) */
#define CHUNK 128
/* contexts are read CX_WINDOW at a time (a context is at most CHUNK bytes) */
#define CX_WINDOW 8
#define CX_BUF (CX_WINDOW * CHUNK)
struct scratch {
	struct hs_ip_sample s;
	struct hs_pl_proc_info pi;
	__u8 cx[CX_BUF];
	__u8 obj[CHUNK];
	__u64 file[HS_PL_FILE_HASH_BYTES / 8];
	__u64 cxstack, prev; /* the stackinfo's contexts, and the stackinfo outside it */
	__u64 cop;           /* the statement the next frame out is at */
	__s32 ix;            /* the next context to look at in the stackinfo, -1: none left */
	__s32 win_lo, win_n; /* the stackinfo's contexts [win_lo, win_lo + win_n) are in cx */
	__s32 si_type;
	__u32 n;        /* frames in s */
	__u32 si_start; /* frames in s when the stackinfo was entered */
	__u32 from_c;   /* the last frame is a sub (or an eval) a C function entered */
	__u32 si_cx;    /* the stackinfo had contexts: Perl code runs in it */
	__u32 done;     /* the walk reached the base of the thread's stack */
	__u32 wake;     /* a function not seen before is in s */
	/* the CV read last, and what names it: a recursion's frames share it */
	__u64 last_cv, last_fn, last_aux, last_file;
};

HS_RT_SCRATCH

/* Fields of a chunk read into scratch: offsets come from the map, so they are bounded here
 * for the verifier (a layout whose fields lie past CHUNK is refused by user space). */
static __always_inline __u64 chunk_u64(const __u8 *chunk, __u32 off)
{
	return *(const __u64 *)(chunk + (off & (CHUNK - 8)));
}

static __always_inline __u32 chunk_u32(const __u8 *chunk, __u32 off)
{
	return *(const __u32 *)(chunk + (off & (CHUNK - 4)));
}

/* A field of the contexts read into cx, at off (bounded likewise: a context's size and fields
 * are 8-aligned, and it is at most CHUNK bytes). */
static __always_inline __u64 cx_u64(const __u8 *cx, __u32 off)
{
	return *(const __u64 *)(cx + (off & (CX_BUF - 8)));
}

static __always_inline __u32 read_u32(__u64 addr)
{
	__u32 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* Reads the stackinfo at addr: its contexts, the one outside it, its top and its type. */
static __always_inline int load_si(struct scratch *sc, __u64 addr)
{
	const struct hs_pl_offsets *off = &sc->pi.off;
	__u32 len = off->si_read;

	if (len < 8 || len > CHUNK || bpf_probe_read_user(sc->obj, len, (void *)addr))
		return -1;
	sc->cxstack = chunk_u64(sc->obj, off->si_cxstack);
	sc->prev = chunk_u64(sc->obj, off->si_prev);
	sc->ix = (__s32)chunk_u32(sc->obj, off->si_cxix);
	sc->si_type = (__s32)chunk_u32(sc->obj, off->si_type);
	sc->si_start = sc->n;
	sc->from_c = 0;
	sc->si_cx = sc->ix >= 0;
	sc->win_lo = sc->win_n = 0;
	if (sc->ix >= HS_PL_MAX_STEPS || (sc->ix >= 0 && !sc->cxstack))
		return -1;
	return 0;
}

/* The head of the SV at addr into obj: its body (sv_any), or 0 when it is not of type. */
static __always_inline __u64 sv_body(struct scratch *sc, __u64 addr, __u32 type)
{
	const struct hs_pl_offsets *off = &sc->pi.off;

	if (!addr || bpf_probe_read_user(sc->obj, 24, (void *)addr))
		return 0;
	if ((chunk_u32(sc->obj, off->sv_flags) & HS_PL_SVT_MASK) != type)
		return 0;
	return chunk_u64(sc->obj, 0);
}

/* What names the sub of CV cv (last_fn, last_aux) and its file (last_file): 0, or -1 when it
 * is no CV or its name cannot be read. */
static __always_inline int resolve_cv(struct scratch *sc, __u64 cv)
{
	const struct hs_pl_offsets *off = &sc->pi.off;
	__u64 body, hek, stash, gv, gp, egv, file;
	__u32 flags, len;

	if (cv && cv == sc->last_cv)
		return 0;
	body = sv_body(sc, cv, HS_PL_SVT_PVCV);
	len = off->cv_read;
	if (!body || len < 8 || len > CHUNK || bpf_probe_read_user(sc->obj, len, (void *)body))
		return -1;
	stash = chunk_u64(sc->obj, off->cv_stash);
	gv = chunk_u64(sc->obj, off->cv_gv);
	file = chunk_u64(sc->obj, off->cv_file);
	flags = chunk_u32(sc->obj, off->cv_flags);
	if (flags & HS_PL_CVF_NAMED) {
		hek = gv;
	} else {
		/* named by its glob, or the glob that glob stands for */
		if (!sv_body(sc, gv, HS_PL_SVT_PVGV) || !(chunk_u32(sc->obj, off->sv_flags) & HS_PL_SVPGV_GP))
			return -1;
		gp = chunk_u64(sc->obj, off->sv_u);
		egv = gp ? hs_read_ptr(gp + off->gp_egv) : 0;
		if (egv && egv != gv) {
			gv = egv;
			if (!sv_body(sc, gv, HS_PL_SVT_PVGV))
				return -1;
		}
		body = chunk_u64(sc->obj, 0);
		if (!body || bpf_probe_read_user(sc->obj, 16, (void *)(body + off->gv_name)))
			return -1;
		hek = chunk_u64(sc->obj, 0);
		stash = off->gv_stash == off->gv_name + 8 ? chunk_u64(sc->obj, 8) : hs_read_ptr(body + off->gv_stash);
	}
	if (!hek)
		return -1;
	sc->last_cv = cv;
	sc->last_fn = HS_PL_FN(HS_PL_FN_SUB, hek);
	sc->last_aux = HS_PL_SUB_AUX(stash, read_u32(hek));
	sc->last_file = file;
	return 0;
}

/* A hash of the file name at addr (hs_pl_file_hash). */
static __always_inline __u64 file_hash(struct scratch *sc, __u64 addr)
{
#pragma unroll
	for (int i = 0; i < HS_PL_FILE_HASH_BYTES / 8; i++)
		sc->file[i] = 0;
	if (addr)
		bpf_probe_read_user_str(sc->file, sizeof(sc->file), (void *)addr);
	return hs_pl_file_hash(sc->file);
}

/* Adds a frame: 0, or -1 when the record is full. */
static __always_inline int emit(struct scratch *sc, __u64 fn, __u64 aux, __u64 extra, __u32 line, __u32 flags)
{
	__u32 n = sc->n;

	if (n >= HS_IP_MAX_FRAMES) {
		sc->s.head.flags |= HS_IP_TRUNCATED;
		return -1;
	}
	n &= HS_IP_MAX_FRAMES - 1;
	sc->s.frames[n].fn = fn;
	sc->s.frames[n].aux = aux;
	sc->s.frames[n].extra = extra;
	sc->s.frames[n].line = line;
	sc->s.frames[n].flags = flags;
	if (n < SEEN_DEPTH && hs_rt_first_seen(fn ^ aux * 0x9e3779b97f4a7c15ULL ^ (__u64)sc->s.head.pid << 47))
		sc->wake = 1;
	sc->n = n + 1;
	return 0;
}

/* One step of the walk: the next context of the stackinfo, innermost first, or the stackinfo
 * outside it when none is left. */
static long step(__u32 i, void *unused)
{
	struct scratch *sc = get_scratch();
	const struct hs_pl_offsets *off;
	__u64 addr, cv, oldcop, retop, fn, aux, extra;
	__u32 len, line, base;
	__s32 ix, lo;
	__u8 t;

	if (!sc)
		return 1;
	off = &sc->pi.off;
	if (sc->ix < 0) {
		/* the base of a stackinfo other than the thread's first: a C function (sort, a
		 * callback, a handler) ran its code in a run of the loop of its own */
		if (sc->si_type != HS_PL_SI_MAIN && sc->n > sc->si_start)
			sc->s.frames[(sc->n - 1) & (HS_IP_MAX_FRAMES - 1)].flags |= HS_IP_ENTRY;
		if (sc->si_type == HS_PL_SI_MAIN || !sc->prev) {
			sc->done = 1;
			return 1;
		}
		if (load_si(sc, sc->prev)) {
			sc->s.head.flags |= HS_IP_READ_FAULT;
			return 1;
		}
		return 0;
	}
	ix = sc->ix;
	if (ix < sc->win_lo || ix >= sc->win_lo + sc->win_n) {
		/* this context and the ones under it, read at once */
		__u32 size = off->cx_size, cnt;
		lo = ix >= CX_WINDOW - 1 ? ix - (CX_WINDOW - 1) : 0;
		cnt = ((__u32)(ix - lo) & (CX_WINDOW - 1)) + 1;
		if (size < off->cx_read || size > CHUNK) {
			sc->s.head.flags |= HS_IP_BAD_FRAME;
			return 1;
		}
		len = cnt * size;
		addr = sc->cxstack + (__u64)(__u32)lo * size;
		if (len > CX_BUF || bpf_probe_read_user(sc->cx, len, (void *)addr)) {
			sc->s.head.flags |= HS_IP_READ_FAULT;
			return 1;
		}
		sc->win_lo = lo;
		sc->win_n = ix - lo + 1;
	}
	base = (__u32)(ix - sc->win_lo) * off->cx_size;
	sc->ix--;
	t = sc->cx[base & (CX_BUF - 1)];
	oldcop = cx_u64(sc->cx, base + off->cx_oldcop);
	retop = cx_u64(sc->cx, base + off->cx_retop);
	if ((t & HS_PL_CXT_MASK) == HS_PL_CXT_SUB || (t & HS_PL_CXT_MASK) == HS_PL_CXT_FORMAT) {
		if ((t & HS_PL_CXT_MASK) == HS_PL_CXT_SUB && (t & HS_PL_CXP_SUB_RE_FAKE))
			return 0;
		cv = cx_u64(sc->cx, base + off->cx_sub_cv);
		if (resolve_cv(sc, cv)) {
			sc->s.head.flags |= HS_IP_BAD_FRAME;
			return 1;
		}
		fn = sc->last_fn;
		aux = sc->last_aux;
		extra = sc->last_file;
	} else if ((t & HS_PL_CXT_MASK) == HS_PL_CXT_EVAL) {
		if (t & (HS_PL_CXP_EVALBLOCK | HS_PL_CXP_TRY))
			return 0; /* eval { } and try { }: blocks of the sub around them */
		cv = cx_u64(sc->cx, base + off->cx_eval_cv);
		/* its file: the statement's inside it, unless it has run none yet */
		extra = sc->n == 0 && oldcop == sc->cop ? 0 : hs_read_ptr(sc->cop + off->cop_file);
		fn = HS_PL_FN(t & HS_PL_CXP_REAL ? HS_PL_FN_EVAL : HS_PL_FN_REQUIRE, cv);
		aux = file_hash(sc, extra);
	} else {
		return 0; /* blocks, loops, substitutions: not frames */
	}
	/* entered, its first statement not run yet: the statement is still the caller's */
	line = sc->n == 0 && oldcop == sc->cop ? 0 : read_u32(sc->cop + off->cop_line);
	if (emit(sc, fn, aux, extra, line, retop ? 0 : HS_IP_ENTRY))
		return 1;
	sc->from_c = !retop;
	sc->cop = oldcop;
	return 0;
}

SEC("perf_event")
int hs_pl_read_frames(struct bpf_perf_event_data *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	const struct hs_pl_proc_info *pi = bpf_map_lookup_elem(&procs, &pid);
	struct scratch *sc;
	__u64 fsbase, my_perl, si;

	if (!pi)
		return hs_rt_next(ctx);
	sc = get_scratch();
	if (!sc)
		return 1;
	sc->pi = *pi;
	fsbase = hs_thread_fsbase();
	if (!fsbase)
		return 1;
	my_perl = hs_read_ptr(fsbase + sc->pi.ctx_off);
	if (!my_perl)
		return 1; /* a thread with no interpreter (an embedder's own): nothing to add */
	si = hs_read_ptr(my_perl + sc->pi.off.interp_curstackinfo);
	if (!si)
		return 1;
	hs_rt_head_init(&sc->s.head);
	sc->n = 0;
	sc->wake = 0;
	sc->done = 0;
	sc->last_cv = 0;
	sc->cop = hs_read_ptr(my_perl + sc->pi.off.interp_curcop);
	if (load_si(sc, si))
		sc->s.head.flags |= HS_IP_READ_FAULT;
	else
		bpf_loop(HS_PL_MAX_STEPS, step, NULL, 0);
	if (!sc->done && !sc->s.head.flags)
		sc->s.head.flags |= HS_IP_TRUNCATED;
	/* the program's top level, when it runs (its first op pushed a block: before, perl
	 * compiles, after, it ends), unless what runs at the base was entered from C (a thread's
	 * sub, BEGIN and END blocks): that is the thread's outermost frame */
	if (sc->done && sc->si_type == HS_PL_SI_MAIN && sc->si_cx && !(sc->n > sc->si_start && sc->from_c))
		emit(sc, HS_PL_FN(HS_PL_FN_MAIN, 0), 0, sc->cop ? hs_read_ptr(sc->cop + sc->pi.off.cop_file) : 0,
		     sc->cop ? read_u32(sc->cop + sc->pi.off.cop_line) : 0, 0);
	if (sc->n)
		sc->s.frames[(sc->n - 1) & (HS_IP_MAX_FRAMES - 1)].flags |= HS_IP_ENTRY;
	if (!sc->n && !sc->s.head.flags)
		return 1;
	HS_RT_OUTPUT(sc, HS_IP_MAX_FRAMES);
	return 1;
}
