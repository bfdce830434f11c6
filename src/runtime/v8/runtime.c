/* V8 as a runtime (runtime/runtime.h): its finding, its reader's process table (from the layout
 * its metadata gave) and BPF object, its records and its names store. */
#include "runtime/v8/v8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "runtime/v8/store.h"
#include "runtime/v8/walk-abi.h"
#include "util/util.h"
#include "v8.skel.h"

static enum hs_rt_found find(int32_t pid, void **proc, char *why, size_t whylen)
{
	struct hs_v8 *v = hs_xmalloc(sizeof(*v));

	switch (hs_v8_find(pid, v, why, whylen)) {
	case HS_V8_SUPPORTED:
		if (!v->blob_copy) {
			/* its isolate is not made yet: looked at again */
			snprintf(why, whylen, "v8: cannot read its code range yet");
			free(v);
			return HS_RT_UNSUPPORTED;
		}
		*proc = v;
		return HS_RT_SUPPORTED;
	case HS_V8_UNSUPPORTED:
		free(v);
		return HS_RT_UNSUPPORTED;
	default:
		free(v);
		return HS_RT_ABSENT;
	}
}

static int proc_info(const void *proc, void *ret)
{
	const struct hs_v8 *v = proc;
	const struct hs_v8_layout *l = &v->lay;
	struct hs_v8_walk_proc w = {
		.blob_lo = v->blob,
		.blob_hi = v->blob + v->blob_size,
		.copy_lo = v->blob_copy,
		.copy_hi = v->blob_copy ? v->blob_copy + v->blob_size : 0,
		.jit_lo = v->jit_lo,
		.jit_hi = v->jit_hi,
		.tramp_off = v->trampoline ? v->trampoline - v->blob : 0,
		.tramp_size = v->trampoline_size,
		.t_js_function_first = l->t_js_function_first,
		.t_js_function_last = l->t_js_function_last,
		.t_sfi = l->t_sfi,
		.t_code = l->t_code,
		.t_bytecode_array = l->t_bytecode_array,
		.map_instance_type = l->map_instance_type,
		.fn_shared = l->fn_shared,
		.fn_code = l->fn_code,
		.code_start = l->code_start,
		.code_size = l->code_size,
		.code_flags = l->code_flags,
		.sfi_name = l->sfi_name_or_scope_info,
		.fp_context = l->fp_context,
		.fp_function = l->fp_function,
		.fp_bytecode_array = l->fp_bytecode_array,
		.fp_bytecode_offset = l->fp_bytecode_offset,
		.ft_entry = l->ft_entry,
		.ft_construct_entry = l->ft_construct_entry,
		.ft_exit = l->ft_exit,
		.ft_builtin_exit = l->ft_builtin_exit,
		.code_kind_mask = l->code_kind_mask,
		.code_kind_shift = l->code_kind_shift,
		.kind_baseline = l->kind_baseline,
		.kind_interpreted = l->kind_interpreted,
		.heap_tag = l->heap_tag,
		.heap_tag_mask = l->heap_tag_mask,
		.reg_bytecode_array = l->reg_bytecode_array,
		.reg_bytecode_offset = l->reg_bytecode_offset,
	};

	/* the program reads a frame's words from fp - 40 to fp + 8, and the registers the
	 * interpreter keeps its bytecode in as r12 and r9, and a Code's first 64 bytes */
	if (l->fp_context != -8 || l->fp_function != -16 || l->fp_bytecode_array != -32 ||
	    l->fp_bytecode_offset != -40 || l->reg_bytecode_array != 12 || l->reg_bytecode_offset != 9 ||
	    l->code_start + 8 > HS_V8_CODE_READ || l->code_size + 4 > HS_V8_CODE_READ ||
	    l->code_flags + 4 > HS_V8_CODE_READ || (l->code_start & 7) || (l->code_size & 3) || (l->code_flags & 3))
		return -EINVAL;
	memcpy(ret, &w, sizeof(w));
	return 0;
}

static const void *bpf_object(size_t *size)
{
	return hs_v8_reader__elf_bytes(size);
}

HS_RT_STORE_OPS(hs_v8, struct hs_v8_sample, struct hs_v8_rec_frame, HS_V8_MAX_FRAMES)

const struct hs_runtime hs_v8_runtime = {
	.id = HS_RT_V8,
	.name = "JavaScript",
	.versions = "V8 11.3 (Node.js 20) on x86_64",
	.shows = "[anon] frames and V8's builtins, or the names of a perf map",
	.fallback = "node --perf-basic-prof",
	.maybe = hs_v8_maybe_runtime,
	/* the code range is made when the first isolate starts: seconds after exec on a busy
	 * machine, or under a collector stressed (the binary's symbols are read once) */
	.look_ms = 10000,
	.find = find,
	.proc_free = free,
	.proc_info_size = sizeof(struct hs_v8_walk_proc),
	.proc_info = proc_info,
	.bpf_object = bpf_object,
	HS_RT_STORE_MEMBERS,
};
