/* The unwinders' common result: a chain of code addresses, leaf first, each marked kernel or
 * user and exact (the interrupted instruction) or a return address; and why the chain ends
 * where it does when it is not known to be complete. */
#ifndef HS_CALLCHAIN_H
#define HS_CALLCHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

enum hs_stop {
	HS_STOP_END = 0,     /* the real bottom: the CFI marks the return address undefined (_start,
	                      * thread start), or a zero frame pointer / return address */
	HS_STOP_DEPTH,       /* the depth cap cut the chain */
	HS_STOP_STACK_COPY,  /* the next frame lies in the thread's stack, beyond the copy of it */
	HS_STOP_NO_INFO,     /* no CFI and no frame pointer, or a rule the table cannot express */
	HS_STOP_UNMAPPED,    /* a return address outside every known mapping */
	HS_STOP_BAD_FP,      /* a frame-pointer step refused: the frame pointer is outside the
	                      * thread's stack or below the stack pointer, the return address it
	                      * gives is not code or does not follow a call, or the frame saved the
	                      * frame pointer without setting it (code built without one) */
	HS_STOP_BAD_FRAME,   /* the CFI gives a frame that does not move up the stack or lies outside
	                      * it: a register it reads held another value than the CFI says */
	HS_STOP_COUNT
};

struct hs_cc_frame {
	uint64_t addr;
	bool kernel;
	bool ret;    /* a return address: look up addr - 1, since the call may be a function's last
	              * instruction */
	bool signal; /* the signal trampoline: shown as [signal] */
	bool tramp;  /* a runtime's trampoline (unwind/trampoline.h): CPython -X perf's */
};

struct hs_callchain {
	HS_VEC(struct hs_cc_frame) frames; /* leaf first */
	enum hs_stop stop;
};

void hs_callchain_reset(struct hs_callchain *cc);
void hs_callchain_release(struct hs_callchain *cc);
void hs_callchain_push(struct hs_callchain *cc, uint64_t addr, bool kernel, bool ret);
void hs_callchain_push_signal(struct hs_callchain *cc, uint64_t addr);

/* Builds the chain from a PERF_SAMPLE_CALLCHAIN array (ips, nr entries, PERF_CONTEXT_* markers
 * included): kernel frames unless !kernel, user frames unless !user; guest and hypervisor
 * frames are left out. max_stack is the cap the kernel applied (chains that reach it are
 * marked HS_STOP_DEPTH). ips may be unaligned. */
void hs_callchain_from_perf(struct hs_callchain *cc, const void *ips, uint64_t nr, bool kernel, bool user,
			    uint32_t max_stack);

/* Name of a stop reason, as the pseudo-frame that ends such a stack shows it. */
const char *hs_stop_name(enum hs_stop s);

#endif
