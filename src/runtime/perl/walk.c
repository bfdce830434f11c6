/* The walk of a thread's Perl frames that the BPF program does (frames.bpf.c), in user space,
 * for tests: the two are kept in step.
 *
 * From the interpreter's current stackinfo (PL_curstackinfo) out through si_prev to the
 * thread's first (PERLSI_MAIN), each stackinfo's contexts from its top (si_cxix) down: a SUB or
 * FORMAT context is a frame of the sub its CV names, an EVAL context that is not eval { } or
 * try { } one of the string eval or required file; other contexts (blocks, loops) are not
 * frames. The innermost frame is at PL_curcop; each other at the statement (blku_oldcop) the
 * frame context inside it saved when it was pushed: its call site. A sub entered from C
 * (retop NULL: call_sv, a sort sub, a thread's sub) and the outermost frame of a stackinfo
 * other than the first each begin a run of the interpreter's loop; the program's top level is a
 * frame under them while it runs (the first stackinfo has a context, its first op's block),
 * unless the thread's outermost frame is a sub entered from C. */
#include "runtime/perl/perl.h"

#include <string.h>

#include "util/util.h"

struct walk {
	const struct hs_pl_interp *in;
	const struct hs_rt_mem *mem;
	struct hs_ip_frame *out;
	size_t max, n, si_start;
	uint16_t flags;
	uint64_t cxstack, prev, cop;
	int32_t ix, si_type;
	bool from_c, si_cx;
};

static uint64_t ptr(const struct walk *w, uint64_t addr)
{
	uint64_t v = 0;

	if (w->mem->read(w->mem->ctx, addr, &v, sizeof(v)))
		return 0;
	return v;
}

static uint32_t u32(const struct walk *w, uint64_t addr)
{
	uint32_t v = 0;

	if (w->mem->read(w->mem->ctx, addr, &v, sizeof(v)))
		return 0;
	return v;
}

static int load_si(struct walk *w, uint64_t addr)
{
	const struct hs_pl_offsets *o = &w->in->info.off;
	uint8_t si[128];

	if (o->si_read < 8 || o->si_read > sizeof(si) || w->mem->read(w->mem->ctx, addr, si, o->si_read))
		return -1;
	memcpy(&w->cxstack, si + o->si_cxstack, 8);
	memcpy(&w->prev, si + o->si_prev, 8);
	memcpy(&w->ix, si + o->si_cxix, 4);
	memcpy(&w->si_type, si + o->si_type, 4);
	w->si_start = w->n;
	w->from_c = false;
	w->si_cx = w->ix >= 0;
	if (w->ix >= HS_PL_MAX_STEPS || (w->ix >= 0 && !w->cxstack))
		return -1;
	return 0;
}

/* The body of the SV at addr if it is of type, else 0. */
static uint64_t sv_body(const struct walk *w, uint64_t addr, uint32_t type, uint32_t *flags)
{
	*flags = addr ? u32(w, addr + w->in->info.off.sv_flags) : 0;
	if ((*flags & HS_PL_SVT_MASK) != type)
		return 0;
	return ptr(w, addr);
}

/* What names the sub of cv: its name's HEK, its package's stash and its file. */
static int resolve_cv(const struct walk *w, uint64_t cv, uint64_t *fn, uint64_t *aux, uint64_t *file)
{
	const struct hs_pl_offsets *o = &w->in->info.off;
	uint64_t body, hek, stash, gv, gp, egv;
	uint32_t flags;

	if (!(body = sv_body(w, cv, HS_PL_SVT_PVCV, &flags)))
		return -1;
	stash = ptr(w, body + o->cv_stash);
	gv = ptr(w, body + o->cv_gv);
	*file = ptr(w, body + o->cv_file);
	if (u32(w, body + o->cv_flags) & HS_PL_CVF_NAMED) {
		hek = gv;
	} else {
		if (!sv_body(w, gv, HS_PL_SVT_PVGV, &flags) || !(flags & HS_PL_SVPGV_GP))
			return -1;
		gp = ptr(w, gv + o->sv_u);
		egv = gp ? ptr(w, gp + o->gp_egv) : 0;
		if (egv && egv != gv)
			gv = egv;
		if (!(body = sv_body(w, gv, HS_PL_SVT_PVGV, &flags)))
			return -1;
		hek = ptr(w, body + o->gv_name);
		stash = ptr(w, body + o->gv_stash);
	}
	if (!hek)
		return -1;
	*fn = HS_PL_FN(HS_PL_FN_SUB, hek);
	*aux = HS_PL_SUB_AUX(stash, u32(w, hek));
	return 0;
}

static uint64_t file_hash(const struct walk *w, uint64_t addr)
{
	uint64_t words[HS_PL_FILE_HASH_BYTES / 8] = {0};
	char *b = (char *)words;

	/* as bpf_probe_read_user_str(): up to the NUL, at most all but the last byte */
	for (size_t i = 0; addr && i < sizeof(words) - 1; i++) {
		if (w->mem->read(w->mem->ctx, addr + i, b + i, 1) || !b[i])
			break;
	}
	return hs_pl_file_hash(words);
}

static int emit(struct walk *w, uint64_t fn, uint64_t aux, uint64_t extra, uint32_t line, uint32_t flags)
{
	if (w->n >= w->max) {
		w->flags |= HS_IP_TRUNCATED;
		return -1;
	}
	w->out[w->n++] = (struct hs_ip_frame){fn, aux, extra, line, flags};
	return 0;
}

/* One context, or the stackinfo outside when none is left: 1 when the walk is over. */
static int step(struct walk *w, bool *done)
{
	const struct hs_pl_offsets *o = &w->in->info.off;
	uint8_t cx[128];
	uint64_t oldcop, retop, fn, aux, extra;
	uint32_t line;
	uint8_t t;

	if (w->ix < 0) {
		if (w->si_type != HS_PL_SI_MAIN && w->n > w->si_start)
			w->out[w->n - 1].flags |= HS_IP_ENTRY;
		if (w->si_type == HS_PL_SI_MAIN || !w->prev) {
			*done = true;
			return 1;
		}
		if (load_si(w, w->prev)) {
			w->flags |= HS_IP_READ_FAULT;
			return 1;
		}
		return 0;
	}
	if (o->cx_read < 8 || o->cx_read > sizeof(cx) ||
	    w->mem->read(w->mem->ctx, w->cxstack + (uint64_t)(uint32_t)w->ix * o->cx_size, cx, o->cx_read)) {
		w->flags |= HS_IP_READ_FAULT;
		return 1;
	}
	w->ix--;
	t = cx[0];
	memcpy(&oldcop, cx + o->cx_oldcop, 8);
	memcpy(&retop, cx + o->cx_retop, 8);
	if ((t & HS_PL_CXT_MASK) == HS_PL_CXT_SUB || (t & HS_PL_CXT_MASK) == HS_PL_CXT_FORMAT) {
		uint64_t cv;
		if ((t & HS_PL_CXT_MASK) == HS_PL_CXT_SUB && (t & HS_PL_CXP_SUB_RE_FAKE))
			return 0;
		memcpy(&cv, cx + o->cx_sub_cv, 8);
		if (resolve_cv(w, cv, &fn, &aux, &extra)) {
			w->flags |= HS_IP_BAD_FRAME;
			return 1;
		}
	} else if ((t & HS_PL_CXT_MASK) == HS_PL_CXT_EVAL) {
		uint64_t cv;
		if (t & (HS_PL_CXP_EVALBLOCK | HS_PL_CXP_TRY))
			return 0;
		memcpy(&cv, cx + o->cx_eval_cv, 8);
		extra = w->n == 0 && oldcop == w->cop ? 0 : ptr(w, w->cop + o->cop_file);
		fn = HS_PL_FN(t & HS_PL_CXP_REAL ? HS_PL_FN_EVAL : HS_PL_FN_REQUIRE, cv);
		aux = file_hash(w, extra);
	} else {
		return 0;
	}
	line = w->n == 0 && oldcop == w->cop ? 0 : u32(w, w->cop + o->cop_line);
	if (emit(w, fn, aux, extra, line, retop ? 0 : HS_IP_ENTRY))
		return 1;
	w->from_c = !retop;
	w->cop = oldcop;
	return 0;
}

size_t hs_pl_walk(const struct hs_pl_interp *in, const struct hs_rt_mem *mem, uint64_t my_perl, struct hs_ip_frame *out,
		  size_t max, uint16_t *flags)
{
	struct walk w = {in, mem, out, HS_MIN(max, (size_t)HS_IP_MAX_FRAMES), 0, 0, 0, 0, 0, 0, 0, 0, false, false};
	const struct hs_pl_offsets *o = &in->info.off;
	uint64_t si = my_perl ? ptr(&w, my_perl + o->interp_curstackinfo) : 0;
	bool done = false;

	*flags = 0;
	if (!si)
		return 0;
	w.cop = ptr(&w, my_perl + o->interp_curcop);
	if (load_si(&w, si))
		w.flags |= HS_IP_READ_FAULT;
	else
		for (unsigned i = 0; i < HS_PL_MAX_STEPS && !step(&w, &done); i++)
			;
	if (!done && !w.flags)
		w.flags |= HS_IP_TRUNCATED;
	if (done && w.si_type == HS_PL_SI_MAIN && w.si_cx && !(w.n > w.si_start && w.from_c))
		emit(&w, HS_PL_FN(HS_PL_FN_MAIN, 0), 0, w.cop ? ptr(&w, w.cop + o->cop_file) : 0,
		     w.cop ? u32(&w, w.cop + o->cop_line) : 0, 0);
	if (w.n)
		out[w.n - 1].flags |= HS_IP_ENTRY;
	*flags = w.flags;
	return w.n;
}
