/* The walk of a thread's Python frames, in user space: the same steps as the BPF program that
 * reads them at sample time, to test the offsets against live interpreters and to check the
 * program's results.
 *
 * The algorithm, with o = struct hs_py_offsets and every read a pointer-sized (8-byte) load
 * unless said otherwise; a failed read sets HS_PY_READ_FAULT and ends the walk with the frames
 * found so far:
 *
 *  1. interp = *(runtime + o.runtime_interp_head)
 *     ts = *(interp + o.interp_tstate_head)
 *     up to HS_PY_MAX_THREADS times, while ts != 0:
 *         if *(ts + o.tstate_thread_id) == fsbase: found
 *         ts = *(ts + o.tstate_next)
 *     not found (or interp is 0): HS_PY_NO_THREAD, no frames.
 *  2. frame = *(ts + o.tstate_frame)
 *     if o.cframe_current_frame != HS_PY_NONE: frame = *(frame + o.cframe_current_frame)
 *     (a NULL cframe: no frames)
 *  3. up to 2 * HS_PY_MAX_FRAMES + 1 steps, while frame != 0:
 *     a. entry == HS_PY_ENTRY_SHIM and the byte *(frame + o.frame_owner) == o.owner_cstack:
 *        a shim (its code, which in 3.13 is not a code object, is not looked at): the frame
 *        emitted last, if any, gets HS_PY_ENTRY_BIT; frame = *(frame + o.frame_back); next step.
 *     b. all max frames emitted already: HS_PY_TRUNCATED, stop.
 *     c. code = *(frame + o.frame_code); *(code + 8) (ob_type) != code_type: HS_PY_BAD_CODE,
 *        stop.
 *     d. firstlineno = the int *(code + o.code_firstlineno)
 *     e. instr, a byte offset, 0 where it is unknown or out of range:
 *          HS_PY_INSTR_LASTI_BYTES: the int *(frame + o.frame_instr), < 0 -> 0
 *          HS_PY_INSTR_LASTI_UNITS: the same, times 2
 *          HS_PY_INSTR_PTR: *(frame + o.frame_instr) - (code + o.code_code), 0 when the
 *            pointer is below the code or 2^31 or more past it
 *     f. the entry bit: HS_PY_ENTRY_EVERY: always; HS_PY_ENTRY_FLAG: when the byte
 *        *(frame + o.frame_owner) is not 0 (3.11 is_entry); HS_PY_ENTRY_SHIM: set later by a
 *        shim (a).
 *     g. emit {code, instr, (firstlineno & 0x7fffffff) | entry bit}
 *     h. frame = *(frame + o.frame_back)
 *  4. entry == HS_PY_ENTRY_SHIM, the walk ended at frame 0 and the last frame emitted has no
 *     HS_PY_ENTRY_BIT (no shim after it): HS_PY_UNANCHORED.
 */
#include <string.h>

#include "runtime/python/python.h"

struct walker {
	const struct hs_rt_mem *mem;
	uint16_t *flags;
};

static bool rd(struct walker *w, uint64_t addr, void *buf, size_t n)
{
	if (addr && addr + n > addr && !w->mem->read(w->mem->ctx, addr, buf, n))
		return true;
	*w->flags |= HS_PY_READ_FAULT;
	return false;
}

static bool rd64(struct walker *w, uint64_t addr, uint64_t *v)
{
	return rd(w, addr, v, sizeof(*v));
}

static bool find_thread(struct walker *w, const struct hs_py_proc_info *pi, uint64_t fsbase, uint64_t *ret)
{
	const struct hs_py_offsets *o = &pi->off;
	uint64_t interp, ts, tid;

	if (!rd64(w, pi->runtime + o->runtime_interp_head, &interp))
		return false;
	if (interp && !rd64(w, interp + o->interp_tstate_head, &ts))
		return false;
	for (unsigned i = 0; interp && ts && i < HS_PY_MAX_THREADS; i++) {
		if (!rd64(w, ts + o->tstate_thread_id, &tid))
			return false;
		if (tid == fsbase) {
			*ret = ts;
			return true;
		}
		if (!rd64(w, ts + o->tstate_next, &ts))
			return false;
	}
	*w->flags |= HS_PY_NO_THREAD;
	return false;
}

static uint32_t instr_of(struct walker *w, const struct hs_py_offsets *o, uint64_t frame, uint64_t code, bool *ok)
{
	int32_t lasti;
	uint64_t p, base = code + o->code_code;

	*ok = true;
	if (o->instr == HS_PY_INSTR_PTR) {
		if (!(*ok = rd64(w, frame + o->frame_instr, &p)))
			return 0;
		return p >= base && p - base < (1ull << 31) ? (uint32_t)(p - base) : 0;
	}
	if (!(*ok = rd(w, frame + o->frame_instr, &lasti, sizeof(lasti))) || lasti < 0)
		return 0;
	if (o->instr == HS_PY_INSTR_LASTI_UNITS)
		return lasti < (1 << 30) ? (uint32_t)lasti * 2 : 0;
	return (uint32_t)lasti;
}

size_t hs_py_walk(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t fsbase, struct hs_py_frame *out,
		  size_t max, uint16_t *flags)
{
	const struct hs_py_offsets *o = &in->info.off;
	struct walker w = {mem, flags};
	uint64_t ts, frame;
	size_t n = 0;

	*flags = 0;
	if (!find_thread(&w, &in->info, fsbase, &ts) || !rd64(&w, ts + o->tstate_frame, &frame))
		return 0;
	if (frame && o->cframe_current_frame != HS_PY_NONE && !rd64(&w, frame + o->cframe_current_frame, &frame))
		return 0;
	for (unsigned step = 0; frame && step < 2 * HS_PY_MAX_FRAMES + 1; step++) {
		uint64_t code, type;
		int32_t first;
		uint8_t owner = 0;
		uint32_t instr, entry = 0;
		bool ok;

		if (o->frame_owner != HS_PY_NONE && !rd(&w, frame + o->frame_owner, &owner, 1))
			break;
		if (o->entry == HS_PY_ENTRY_SHIM && owner == o->owner_cstack) {
			if (n)
				out[n - 1].line_entry |= HS_PY_ENTRY_BIT;
			if (!rd64(&w, frame + o->frame_back, &frame))
				break;
			continue;
		}
		if (n == max) {
			*flags |= HS_PY_TRUNCATED;
			break;
		}
		if (!rd64(&w, frame + o->frame_code, &code) || !rd64(&w, code + 8, &type))
			break;
		if (type != in->info.code_type) {
			*flags |= HS_PY_BAD_CODE;
			break;
		}
		if (!rd(&w, code + o->code_firstlineno, &first, sizeof(first)))
			break;
		instr = instr_of(&w, o, frame, code, &ok);
		if (!ok)
			break;
		if (o->entry == HS_PY_ENTRY_EVERY || (o->entry == HS_PY_ENTRY_FLAG && owner))
			entry = HS_PY_ENTRY_BIT;
		out[n] = (struct hs_py_frame){code, 0, 0, instr, ((uint32_t)first & 0x7fffffff) | entry};
		if (!rd64(&w, code + in->code.code_name, &out[n].name) ||
		    !rd64(&w, code + in->code.code_filename, &out[n].file))
			break;
		n++;
		if (!rd64(&w, frame + o->frame_back, &frame))
			break;
	}
	if (o->entry == HS_PY_ENTRY_SHIM && !frame && n && !(out[n - 1].line_entry & HS_PY_ENTRY_BIT))
		*flags |= HS_PY_UNANCHORED;
	return n;
}
