/* The walk of a thread's Ruby frames, in user space: the same steps as the BPF program that
 * reads them at sample time (frames.bpf.c; the two are kept in step), to test the layout against
 * a live interpreter and to name what it reads.
 *
 *  1. From ec: vm_stack, vm_stack_size, cfp; the frames run from cfp up to end - 64 (end =
 *     vm_stack + 8 * vm_stack_size; the frame at end - 64 is the thread's dummy).
 *  2. Per control frame: pc, iseq, ep; env = ep[-2..0] (me or cref, specval, flags).
 *     a. magic CFUNC: a C method's frame; env[0] must be a method entry (else
 *        HS_IP_BAD_FRAME, stop).
 *     b. iseq && pc: a Ruby frame; iseq must be an imemo iseq (else HS_IP_BAD_FRAME, stop);
 *        its method entry is the first ment found up the ep chain (at most HS_RB_EP_CHAIN
 *        environments, an svar's cref_or_me at the method's own).
 *     c. anything else (IFUNC, dummy) is not shown; its FINISH flag goes to the frame emitted
 *        before it.
 *     d. FINISH (ep[0] & 0x20): HS_IP_ENTRY.
 *  3. The words of a frame: rb-abi.h. */
#include <string.h>

#include "runtime/ruby/ruby.h"

static uint64_t rd(const struct hs_rt_mem *mem, uint64_t addr, bool *fault)
{
	uint64_t v = 0;

	if (!addr || mem->read(mem->ctx, addr, &v, sizeof(v)))
		*fault = true;
	return v;
}

static bool imemo(const struct hs_rt_mem *mem, uint64_t v, unsigned kind)
{
	bool fault = false;
	uint64_t f;

	if (!v || (v & 7))
		return false;
	f = rd(mem, v, &fault);
	return !fault && (f & HS_RB_T_MASK) == HS_RB_T_IMEMO && HS_RB_IMEMO_KIND(f) == kind;
}

/* The method entry of a frame whose environment starts at ep, or 0 (frames.bpf.c's). */
static uint64_t method_entry(const struct hs_rt_mem *mem, uint64_t ep)
{
	bool fault = false;

	for (int k = 0; k < HS_RB_EP_CHAIN && ep; k++) {
		uint64_t me = rd(mem, ep - 16, &fault), spec = rd(mem, ep - 8, &fault), flags = rd(mem, ep, &fault);
		if (fault)
			return 0;
		if (imemo(mem, me, HS_RB_IMEMO_MENT))
			return me;
		if (flags & HS_RB_ENV_LOCAL) {
			if (!imemo(mem, me, HS_RB_IMEMO_SVAR))
				return 0;
			me = rd(mem, me + HS_RB_SVAR_ME, &fault);
			return !fault && imemo(mem, me, HS_RB_IMEMO_MENT) ? me : 0;
		}
		ep = spec & ~3ULL;
	}
	return 0;
}

uint64_t hs_rb_main_ec(const struct hs_rb_proc *p, const struct hs_rt_mem *mem)
{
	bool fault = false;
	uint64_t vm = rd(mem, p->vm_ptr, &fault), th = vm ? rd(mem, vm + 40, &fault) : 0;
	uint64_t ec = th ? rd(mem, th + 40, &fault) : 0;

	return fault ? 0 : ec;
}

size_t hs_rb_walk(const struct hs_rt_mem *mem, uint64_t ec, struct hs_ip_frame *out, size_t max, uint16_t *flags)
{
	bool fault = false;
	uint64_t stack = rd(mem, ec + HS_RB_EC_VM_STACK, &fault), size = rd(mem, ec + HS_RB_EC_VM_STACK_SIZE, &fault);
	uint64_t cfp = rd(mem, ec + HS_RB_EC_CFP, &fault), end = stack + size * 8;
	size_t n = 0;

	*flags = 0;
	if (fault || !stack || size > (1 << 24) || cfp < stack || cfp >= end || (end - cfp) % HS_RB_CFP_SIZE)
		return 0;
	for (; cfp < end - HS_RB_CFP_SIZE; cfp += HS_RB_CFP_SIZE) {
		uint64_t pc = rd(mem, cfp + HS_RB_CFP_PC, &fault), iseq = rd(mem, cfp + HS_RB_CFP_ISEQ, &fault);
		uint64_t ep = rd(mem, cfp + HS_RB_CFP_EP, &fault), env = ep ? rd(mem, ep, &fault) : 0;
		uint32_t magic = (uint32_t)env & HS_RB_ENV_MAGIC_MASK, fl = env & HS_RB_FRAME_FINISH ? HS_IP_ENTRY : 0;
		struct hs_ip_frame f = {0};

		if (fault || !ep) {
			*flags |= HS_IP_READ_FAULT;
			break;
		}
		if (n == max) {
			*flags |= HS_IP_TRUNCATED;
			break;
		}
		if (magic == HS_RB_MAGIC_CFUNC) {
			uint64_t me = rd(mem, ep - 16, &fault), cls, def;
			if (fault || !imemo(mem, me, HS_RB_IMEMO_MENT)) {
				*flags |= HS_IP_BAD_FRAME;
				break;
			}
			cls = rd(mem, me + HS_RB_ME_CLASS, &fault);
			def = rd(mem, me + HS_RB_ME_DEF, &fault);
			uint32_t ident = hs_rb_ident(cls, rd(mem, def + HS_RB_DEF_SERIAL, &fault));
			f.fn = me | HS_RB_IDENT_FN(ident);
			f.aux = def | HS_RB_IDENT_AUX(ident);
			f.flags = fl | HS_IP_CFUNC;
		} else if (iseq && pc) {
			uint64_t body, me, serial = 0;
			uint32_t ident;
			if (!imemo(mem, iseq, HS_RB_IMEMO_ISEQ)) {
				*flags |= HS_IP_BAD_FRAME;
				break;
			}
			body = rd(mem, iseq + HS_RB_ISEQ_BODY, &fault);
			me = method_entry(mem, ep);
			if (me)
				serial = rd(mem, rd(mem, me + HS_RB_ME_DEF, &fault) + HS_RB_DEF_SERIAL, &fault);
			ident = hs_rb_ident(hs_rb_iseq_hash(body, rd(mem, body + HS_RB_BODY_PATHOBJ, &fault),
							    rd(mem, body + HS_RB_BODY_LABEL, &fault),
							    rd(mem, body + HS_RB_BODY_FIRST_LINENO, &fault)),
					    serial);
			f.fn = iseq | HS_RB_IDENT_FN(ident);
			f.aux = me | HS_RB_IDENT_AUX(ident);
			f.extra = pc;
			f.flags = fl;
		} else {
			if (fl && n)
				out[n - 1].flags |= HS_IP_ENTRY;
			continue;
		}
		if (fault) {
			*flags |= HS_IP_READ_FAULT;
			break;
		}
		out[n++] = f;
	}
	return n;
}
