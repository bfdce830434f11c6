/* A thread's Java frames walked in user space from a pc, sp and fp, as the BPF program walks them
 * at sample time: an interpreted frame by its fixed slots below its frame pointer, a compiled
 * frame or a stub by its blob's frame size, until the call stub that C++ called Java through. */
#include <errno.h>

#include "runtime/hotspot/hotspot.h"

static int rd_u64(const struct hs_rt_mem *mem, uint64_t addr, uint64_t *v)
{
	return mem->read(mem->ctx, addr, v, 8) ? -EFAULT : 0;
}

/* An interpreted frame: its Method*, its bytecode pointer turned into a bci (without reading
 * the method beyond its ConstMethod pointer), then the caller's registers by the frame pointer. */
static int step_interpreted(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, struct hs_jvm_frame *f,
			    uint64_t *sp, uint64_t *fp, uint64_t *pc)
{
	const struct hs_jvm_offsets *o = &jvm->info.off;
	uint64_t bcp, cm;

	if (!*fp || rd_u64(mem, *fp - 8u * o->interp_method, &f->method) ||
	    rd_u64(mem, *fp - 8u * o->interp_bcp, &bcp) || !f->method ||
	    rd_u64(mem, f->method + o->method_const_method, &cm))
		return -EFAULT;
	f->comp = HS_JVM_INTERPRETED;
	f->bci = bcp >= cm + o->const_method_size && bcp - cm - o->const_method_size < 65536
			 ? (int32_t)(bcp - cm - o->const_method_size)
			 : -1;
	*sp = *fp + 16;
	if (rd_u64(mem, *fp + 8, pc) || rd_u64(mem, *fp, fp))
		return -EFAULT;
	return 0;
}

/* A frame of a known size (words, the return address its last): the caller's sp is past it,
 * with the return address and the saved frame pointer just below. */
static int step_sized(const struct hs_rt_mem *mem, int32_t words, uint64_t *sp, uint64_t *fp, uint64_t *pc)
{
	if (words <= 1)
		return -ENOENT;
	*sp += 8u * (uint32_t)words;
	if (rd_u64(mem, *sp - 8, pc) || rd_u64(mem, *sp - 16, fp))
		return -EFAULT;
	return 0;
}

int hs_jvm_walk(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t sp, uint64_t fp, uint64_t pc,
		struct hs_jvm_frame *out, size_t max, size_t *n, enum hs_jvm_walk_end *end)
{
	uint64_t entry = 0;
	size_t k = 0;
	int rc = 0;

	rd_u64(mem, jvm->info.call_stub_return, &entry);
	*end = HS_JVM_WALK_MAX;
	while (k < max) {
		struct hs_jvm_frame *f = &out[k];
		struct hs_jvm_blob b;

		if (entry && pc == entry) {
			*end = HS_JVM_WALK_ENTRY;
			break;
		}
		if ((rc = hs_jvm_blob_at(jvm, mem, pc, &b))) {
			*end = rc == -ENOENT ? HS_JVM_WALK_NATIVE : HS_JVM_WALK_FAULT;
			break;
		}
		*f = (struct hs_jvm_frame){.pc = pc, .blob = b.addr, .bci = -1};
		if (b.kind == HS_JVM_BLOB_INTERPRETER) {
			rc = step_interpreted(jvm, mem, f, &sp, &fp, &pc);
		} else {
			if (b.kind == HS_JVM_BLOB_NMETHOD) {
				f->comp = hs_jvm_comp_of_level(b.comp_level);
				f->method = b.method;
				f->compile_id = b.compile_id;
			} else {
				f->comp = HS_JVM_STUB;
			}
			rc = step_sized(mem, b.frame_size, &sp, &fp, &pc);
		}
		k++;
		if (rc) {
			*end = HS_JVM_WALK_FAULT;
			break;
		}
	}
	*n = k;
	return 0;
}
