/* Last-branch records in call-stack mode (Intel LBR, perf's PERF_SAMPLE_BRANCH_CALL_STACK): the
 * hardware's record of the call sites of a sample's innermost calls. They make a short, exact
 * user chain of their own (record -g lbr), or put back the leaf's caller where a walk of the
 * stack lost it (record -g fp or auto on a hardware event, where the CPU has LBR). */
#ifndef HS_LBR_H
#define HS_LBR_H

#include <stdbool.h>
#include <stdint.h>

#include "format/perf-event.h"
#include "unwind/callchain.h"

/* Whether sample s carries last-branch records in call-stack mode. */
bool hs_lbr_has_call_stack(const struct hs_perf_sample *s);

/* Makes cc the chain of s from its records: the kernel part from the kernel's chain (kernel
 * frames unless !kernel; max_stack as hs_callchain_from_perf()); with user, then the sampled
 * user instruction (s->ip, or the first user entry of the kernel's chain for a sample in the
 * kernel) and the source of each recorded call, innermost first. The sources are the call
 * instructions themselves, not return addresses. */
void hs_lbr_chain(struct hs_callchain *cc, const struct hs_perf_sample *s, bool kernel, bool user,
		  uint32_t max_stack);

/* Repairs cc, a chain walked otherwise (frame pointers, or the copied stack), with the records
 * of s: where the leaf's caller as walked returns to the second recorded call site rather than
 * to the first, the walk lost the leaf's real caller (sampled before the leaf pushed its frame
 * pointer, or after it popped it), and the first call site is put back between them. Returns
 * whether it put a frame back. */
bool hs_lbr_repair(struct hs_callchain *cc, const struct hs_perf_sample *s);

#endif
