/* Kernel-walked call chains (PERF_SAMPLE_CALLCHAIN) into hs_callchain. */
#include "callchain.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

void hs_callchain_reset(struct hs_callchain *cc)
{
	cc->frames.n = 0;
	cc->stop = HS_STOP_END;
}

void hs_callchain_release(struct hs_callchain *cc)
{
	if (cc)
		hs_vec_free(&cc->frames);
}

void hs_callchain_push(struct hs_callchain *cc, uint64_t addr, bool kernel, bool ret)
{
	struct hs_cc_frame f = {addr, kernel, ret, false, false};
	hs_vec_push(&cc->frames, f);
}

void hs_callchain_push_signal(struct hs_callchain *cc, uint64_t addr)
{
	struct hs_cc_frame f = {addr, false, true, true, false};
	hs_vec_push(&cc->frames, f);
}

void hs_callchain_from_perf(struct hs_callchain *cc, const void *ips, uint64_t nr, bool kernel, bool user,
			    uint32_t max_stack)
{
	enum { CTX_NONE, CTX_KERNEL, CTX_USER, CTX_OTHER } ctx = CTX_NONE;
	bool first_in_ctx = true;
	uint64_t real = 0;

	hs_callchain_reset(cc);
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip;
		memcpy(&ip, (const char *)ips + i * 8, 8);
		if (ip >= PERF_CONTEXT_MAX) {
			switch (ip) {
			case PERF_CONTEXT_KERNEL:
				ctx = CTX_KERNEL;
				break;
			case PERF_CONTEXT_USER:
				ctx = CTX_USER;
				break;
			default: /* hypervisor, guest kernel, guest user */
				ctx = CTX_OTHER;
				break;
			}
			first_in_ctx = true;
			continue;
		}
		real++;
		if (ctx == CTX_OTHER || (ctx == CTX_KERNEL && !kernel) || (ctx == CTX_USER && !user))
			continue;
		if (ctx == CTX_NONE) /* no marker: tell by the address half */
			ctx = ip >= 0xffff800000000000ULL ? CTX_KERNEL : CTX_USER;
		hs_callchain_push(cc, ip, ctx == CTX_KERNEL, !first_in_ctx);
		first_in_ctx = false;
	}
	if (max_stack && real >= max_stack)
		cc->stop = HS_STOP_DEPTH;
}

const char *hs_stop_name(enum hs_stop s)
{
	switch (s) {
	case HS_STOP_END:
		return "";
	case HS_STOP_DEPTH:
		return "[depth limit]";
	case HS_STOP_STACK_COPY:
		return "[truncated: stack copy]";
	case HS_STOP_NO_INFO:
		return "[no unwind info]";
	case HS_STOP_UNMAPPED:
		return "[unmapped]";
	case HS_STOP_BAD_FP:
		return "[bad frame pointer]";
	case HS_STOP_BAD_FRAME:
		return "[bad frame]";
	case HS_STOP_COUNT:
		break;
	}
	return "[unknown stop]";
}
