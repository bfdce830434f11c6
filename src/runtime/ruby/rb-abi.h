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
#define HS_RB_ISEQ_BODY 16  /* rb_iseq_t.body */
#define HS_RB_SVAR_ME 8     /* vm_svar.cref_or_me */
#define HS_RB_ME_CLASS 8    /* rb_callable_method_entry_t.defined_class */
#define HS_RB_ME_DEF 16     /* .def, a rb_method_definition_t (malloc'd: never moved) */
#define HS_RB_BODY_LABEL 80 /* rb_iseq_constant_body.location.label */
#define HS_RB_BODY_FIRST_LINENO 88

/* The frames' words (struct hs_ip_frame). Addresses in a process are below 2^47: the top 16
 * bits of fn and aux say which of the objects that were at that address it is, so that an
 * object moved by the compacting GC, or freed and its slot reused, is never named as the one
 * before it.
 * - A Ruby frame: fn = iseq | HS_RB_FOLD(its body) << 48; aux = its method entry (0 at the top
 *   level, in a class body) | HS_RB_FOLD(the iseq's label ^ first_lineno) << 48; extra = pc.
 * - A C method's frame (HS_IP_CFUNC): fn = its method entry; aux = the method entry's
 *   definition | HS_RB_FOLD(its defined class) << 48; extra = 0. */
#define HS_RB_ADDR_MASK 0xffffffffffffULL
#define HS_RB_FOLD(x) ((((x) >> 4) ^ ((x) >> 20) ^ ((x) >> 36)) & 0xffff)

#endif
