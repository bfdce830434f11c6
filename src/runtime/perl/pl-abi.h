/* What Perl's frame reader (frames.bpf.c) and user space share: the description of a process's
 * perl (where a thread's interpreter is, the offsets of what the walk reads) and what each frame
 * of its record (runtime/interp/ip-abi.h) holds. Compiled both by clang for the BPF target and by
 * the C compiler. */
#ifndef HS_PL_ABI_H
#define HS_PL_ABI_H

#include "runtime/interp/ip-abi.h"

/* Offsets in the interpreter's structures (perl's intrpvar.h, cop.h, sv.h, cv.h, gv.h, hv.h). */
struct hs_pl_offsets {
	hs_u16 interp_curcop, interp_curstackinfo;    /* struct interpreter: Icurcop, Icurstackinfo */
	hs_u16 si_cxstack, si_prev, si_cxix, si_type; /* struct stackinfo */
	hs_u16 si_read;                               /* bytes of a stackinfo read: past those */
	hs_u16 cx_size;                               /* sizeof(PERL_CONTEXT) */
	hs_u16 cx_oldcop, cx_retop, cx_sub_cv, cx_eval_cv;
	hs_u16 cx_read; /* bytes of a context read: past those */
	hs_u16 cop_line, cop_file;
	hs_u16 sv_flags, sv_u;                     /* the head of every SV: sv_any is at 0 */
	hs_u16 cv_stash, cv_gv, cv_file, cv_flags; /* XPVCV, the body of a CV */
	hs_u16 gv_name, gv_stash;                  /* XPVGV: the name HEK and the stash */
	hs_u16 gp_egv;                             /* GP: the effective GV */
	hs_u16 hek_len, hek_key;                   /* HEK: the hash is at 0 */
	hs_u16 hv_aux, aux_name, aux_name_count;   /* xpvhv_with_aux and struct xpvhv_aux */
	hs_u16 cv_read;                            /* bytes of a CV's body read: past its fields above */
};

/* A process's perl, for the reader. */
struct hs_pl_proc_info {
	/* the running thread's interpreter (my_perl) is the pointer at its fs base + ctx_off: the
	 * executable's thread-local PL_current_context, or the thread-specific value of
	 * PL_thr_key in the C library's thread descriptor */
	hs_u64 ctx_off;
	struct hs_pl_offsets off;
};

/* The values of perl's own that the walk tests (cop.h, sv.h, cv.h). */
enum {
	HS_PL_CXT_MASK = 0xf,
	HS_PL_CXT_SUB = 9,
	HS_PL_CXT_FORMAT = 10,
	HS_PL_CXT_EVAL = 11,
	HS_PL_CXP_SUB_RE_FAKE = 0x80, /* with SUB: a regex code block's fake sub (not a frame) */
	HS_PL_CXP_REAL = 0x20,        /* with EVAL: a string eval */
	HS_PL_CXP_EVALBLOCK = 0x40,   /* with EVAL: eval { } (not a frame) */
	HS_PL_CXP_TRY = 0x80,         /* with EVAL: try { } (not a frame) */
	HS_PL_SI_MAIN = 1,            /* the stackinfo a thread's interpreter starts with */
	HS_PL_SVT_MASK = 0xff,
	HS_PL_SVT_PVGV = 9,
	HS_PL_SVT_PVHV = 12,
	HS_PL_SVT_PVCV = 13,
	HS_PL_SVPGV_GP = 0x8000,
	HS_PL_SVF_OOK = 0x2000000,
	HS_PL_CVF_NAMED = 0x8000, /* the CV holds its name's HEK, not a GV */
};

/* What a frame (struct hs_ip_frame) holds: its kind in fn's top byte (addresses in a process
 * are below 2^47), and by kind:
 * - SUB (a sub, or a format): fn's low bits the address of its name's HEK, aux its package's
 *   stash with the low 16 bits of the name's hash in its top 16 (a HEK freed and made again at
 *   the same address for another name is told apart), extra the CV's file (a C string);
 * - EVAL (eval "..."), REQUIRE (a file's top level run by require, use or do): fn's low bits
 *   the context's CV, aux a hash of the first 64 bytes of the file ("(eval 12)" or a path), extra
 *   the file;
 * - MAIN (the program's top level): extra its file.
 * line is the source line, read at sample time (0: the sub was entered but has not run a
 * statement yet). */
#define HS_PL_FN_KIND_SHIFT 56
enum hs_pl_fn_kind {
	HS_PL_FN_SUB = 1,
	HS_PL_FN_EVAL,
	HS_PL_FN_REQUIRE,
	HS_PL_FN_MAIN,
};
#define HS_PL_FN(kind, addr) ((hs_u64)(kind) << HS_PL_FN_KIND_SHIFT | ((addr) & ((1ULL << HS_PL_FN_KIND_SHIFT) - 1)))
#define HS_PL_FN_KIND(fn) ((unsigned)((fn) >> HS_PL_FN_KIND_SHIFT))
#define HS_PL_FN_ADDR(fn) ((fn) & ((1ULL << HS_PL_FN_KIND_SHIFT) - 1))
#define HS_PL_SUB_AUX(stash, hash) (((stash)&0xffffffffffffULL) | (hs_u64)((hash)&0xffff) << 48)

/* Steps of a walk at most (contexts and stackinfos: loops and blocks are contexts too). */
#define HS_PL_MAX_STEPS 8192
#define HS_PL_FILE_HASH_BYTES 64

#ifdef __bpf__
#define HS_PL_INLINE static __always_inline
#else
#define HS_PL_INLINE static inline
#endif

/* The hash of a file name's first HS_PL_FILE_HASH_BYTES bytes, as 8-byte words with zeros
 * after its end. */
HS_PL_INLINE hs_u64 hs_pl_file_hash(const hs_u64 *w)
{
	hs_u64 h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < HS_PL_FILE_HASH_BYTES / 8; i++)
		h = (h ^ w[i]) * 0x100000001b3ULL;
	return h;
}

#endif
