/* LBR call stacks. A record is perf's struct perf_branch_entry, { u64 from, to, flags }, in
 * sample data that may be unaligned: read with memcpy. */
#include "lbr.h"

#include <string.h>

/* x86-64: where the kernel's half of the address space starts */
#define KERNEL_START 0xffff800000000000ULL

bool hs_lbr_has_call_stack(const struct hs_perf_sample *s)
{
	return s->branches && s->nr_branches && (s->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK);
}

/* The source (the call instruction) of branch record i of a sample. */
static uint64_t branch_from(const struct hs_perf_sample *s, uint64_t i)
{
	uint64_t from;

	memcpy(&from, (const char *)s->branches + 24 * i, 8);
	return from;
}

void hs_lbr_chain(struct hs_callchain *cc, const struct hs_perf_sample *s, bool kernel, bool user,
		  uint32_t max_stack)
{
	uint64_t user_ip = 0;

	if (s->callchain)
		hs_callchain_from_perf(cc, s->callchain, s->nr_callchain, kernel, false, max_stack);
	else
		hs_callchain_reset(cc);
	if (!user)
		return;
	if (s->ip < KERNEL_START) {
		user_ip = s->ip;
	} else if (s->callchain) {
		/* in the kernel: the user IP is the first entry after PERF_CONTEXT_USER */
		for (uint64_t i = 0; i + 1 < s->nr_callchain; i++) {
			uint64_t v;
			memcpy(&v, (const char *)s->callchain + 8 * i, 8);
			if (v == PERF_CONTEXT_USER) {
				memcpy(&user_ip, (const char *)s->callchain + 8 * (i + 1), 8);
				break;
			}
		}
	}
	if (user_ip)
		hs_callchain_push(cc, user_ip, false, false);
	for (uint64_t i = 0; i < s->nr_branches; i++) {
		uint64_t from = branch_from(s, i);
		if (from && from < KERNEL_START)
			hs_callchain_push(cc, from, false, false);
	}
}

/* Whether ret is the return address of a call instruction at from (x86 instructions are at
 * most 15 bytes long). */
static bool returns_from(uint64_t ret, uint64_t from)
{
	return from && ret > from && ret - from <= 15;
}

/* A frame-pointer walk goes from a leaf sampled outside its frame (before it pushed the frame
 * pointer, after it popped it) straight to its caller's caller: the first two recorded call
 * sites tell that case from a walk that is right. */
bool hs_lbr_repair(struct hs_callchain *cc, const struct hs_perf_sample *s)
{
	uint64_t from[2] = {0, 0};
	size_t u = 0, n = 0;

	for (uint64_t i = 0; i < s->nr_branches && n < 2; i++) {
		uint64_t f = branch_from(s, i);
		if (f && f < KERNEL_START)
			from[n++] = f;
	}
	if (n < 2)
		return false;
	while (u < cc->frames.n && cc->frames.v[u].kernel)
		u++;
	/* the leaf is frames[u]; its caller as walked, frames[u + 1], a return address */
	if (u + 1 >= cc->frames.n || cc->frames.v[u + 1].kernel || !cc->frames.v[u + 1].ret)
		return false;
	if (returns_from(cc->frames.v[u + 1].addr, from[0]) || !returns_from(cc->frames.v[u + 1].addr, from[1]))
		return false;
	hs_callchain_push(cc, 0, false, false); /* room for one more */
	memmove(cc->frames.v + u + 2, cc->frames.v + u + 1, (cc->frames.n - u - 2) * sizeof(*cc->frames.v));
	cc->frames.v[u + 1] = (struct hs_cc_frame){.addr = from[0], .kernel = false, .ret = false, .signal = false};
	return true;
}
