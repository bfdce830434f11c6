/* What the BPF program that reads Ruby frames at sample time and the user space that loads it
 * share: the process table's values, the layout of CRuby 3.1 it walks (docs/ruby.md says how
 * each offset was checked), and what the words of its frames hold. Compiled both by clang for
 * the BPF target and by the C compiler, so it uses only fixed-width types. */
#ifndef HS_RB_ABI_H
#define HS_RB_ABI_H

#include "runtime/rt-abi.h"

/* A process's CRuby, for the reader: where the running thread's execution context is. The
 * interpreter keeps it in a thread-local variable, ruby_current_ec, of its shared library: in
 * the block of TLS module tls_modid, at tls_off. */
struct hs_rb_proc_info {
	hs_u64 tls_modid;
	hs_u64 tls_off;
};

/* CRuby 3.1's layout on x86_64 (find.c refuses any other version, and checks these against the
 * library's own code). rb_execution_context_t: */
#define HS_RB_EC_VM_STACK 0      /* VALUE *, the thread's (fiber's) VM stack */
#define HS_RB_EC_VM_STACK_SIZE 8 /* in VALUEs; control frames grow down from its end */
#define HS_RB_EC_CFP 16          /* the running control frame */
#define HS_RB_EC_THREAD 48       /* rb_thread_t *thread_ptr */
#define HS_RB_TH_THREAD_ID 80    /* rb_thread_t.thread_id: the pthread_t, the thread's fs base */
/* rb_control_frame_t: 64 bytes, a caller's one just above its callee's */
#define HS_RB_CFP_SIZE 64
#define HS_RB_CFP_PC 0
#define HS_RB_CFP_ISEQ 16
#define HS_RB_CFP_EP 32
/* the environment: ep[0] flags, ep[-1] specval (the previous ep, tagged), ep[-2] me or cref */
#define HS_RB_ENV_MAGIC_MASK 0x7fff0001u
#define HS_RB_MAGIC_CFUNC 0x55550001u
#define HS_RB_MAGIC_DUMMY 0x79990001u
#define HS_RB_FRAME_FINISH 0x20u /* the frame a run of rb_vm_exec started with */
#define HS_RB_ENV_LOCAL 0x2u     /* the method's (or the top level's) own environment */
#define HS_RB_EP_CHAIN 8         /* environments looked through for a block's method entry */
/* objects: flags first, the type in its low 5 bits; an imemo's kind in bits 12-15 */
#define HS_RB_T_MASK 0x1fu
#define HS_RB_T_IMEMO 0x1au
#define HS_RB_IMEMO_SVAR 2
#define HS_RB_IMEMO_MENT 6
#define HS_RB_IMEMO_ISEQ 7
#define HS_RB_IMEMO_KIND(flags) (((flags) >> 12) & 0xf)
#define HS_RB_ISEQ_BODY 16 /* rb_iseq_t.body */
#define HS_RB_SVAR_ME 8    /* vm_svar.cref_or_me */
#define HS_RB_ME_CLASS 8   /* rb_callable_method_entry_t.defined_class */
#define HS_RB_ME_DEF 16    /* .def, a rb_method_definition_t (malloc'd: never moved) */

/* rb_iseq_constant_body.location: pathobj, base_label, label, first_lineno (a Fixnum) */
#define HS_RB_BODY_PATHOBJ 64
#define HS_RB_BODY_LABEL 80
#define HS_RB_BODY_FIRST_LINENO 88
#define HS_RB_DEF_SERIAL 40 /* rb_method_definition_t.method_serial: each definition its own */

/* The frames' words (struct hs_ip_frame). Addresses in a process are below 2^48: the top 16
 * bits of fn and aux hold a hash of what tells the object at that address apart from others
 * that were there before (hs_rb_ident()), so that an object moved by the compacting GC, or freed
 * and its slot reused by the next alike (an eval'd method replaced by the next), is never named
 * as the one before it.
 * - A Ruby frame: fn = its iseq, aux = its method entry (0 at the top level, in a class body),
 *   hashed: the iseq's body, pathobj, label and first_lineno, and the serial number of the
 *   entry's method definition; extra = pc.
 * - A C method's frame (HS_IP_CFUNC): fn = its method entry, aux = the entry's definition,
 *   hashed: its defined class and the definition's serial number; extra = 0. */
#define HS_RB_ADDR_MASK 0xffffffffffffULL
#define HS_RB_IDENT_FN(ident) ((hs_u64)((ident)&0xffff) << 48)
#define HS_RB_IDENT_AUX(ident) ((hs_u64)((ident) >> 16 & 0xffff) << 48)
#define HS_RB_IDENT_OF(fn, aux) ((hs_u32)((fn) >> 48 | ((aux) >> 48) << 16))

#ifdef __bpf__
#define HS_RB_INLINE static __always_inline
#else
#define HS_RB_INLINE static inline
#endif

HS_RB_INLINE hs_u64 hs_rb_mix(hs_u64 h, hs_u64 v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h ^ h >> 31;
}

/* What of an iseq goes into its frames' identity. */
HS_RB_INLINE hs_u64 hs_rb_iseq_hash(hs_u64 body, hs_u64 pathobj, hs_u64 label, hs_u64 first_lineno)
{
	return hs_rb_mix(hs_rb_mix(hs_rb_mix(hs_rb_mix(0, body), pathobj), label), first_lineno);
}

/* A frame's identity: h (an iseq's hash, a C method's defined class) and the serial number of
 * its method's definition (0: none). */
HS_RB_INLINE hs_u32 hs_rb_ident(hs_u64 h, hs_u64 serial)
{
	return (hs_u32)(hs_rb_mix(h, serial) >> 32);
}

#endif
