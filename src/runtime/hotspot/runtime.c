/* HotSpot as a runtime (runtime/runtime.h): its finding, its reader's process table (the walk's
 * offsets, from the tables vmstructs.c read) and BPF object, its records and its names store. */
#include "runtime/hotspot/hotspot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hotspot/store.h"
#include "runtime/hotspot/walk-abi.h"
#include "runtime/runtime.h"
#include "util/util.h"
#include "hotspot.skel.h"

static enum hs_rt_found find(int32_t pid, void **proc, char *why, size_t whylen)
{
	struct hs_jvm *jvm = hs_xmalloc(sizeof(*jvm));

	switch (hs_jvm_find(pid, jvm, why, whylen)) {
	case HS_JVM_SUPPORTED:
		*proc = jvm;
		return HS_RT_SUPPORTED;
	case HS_JVM_UNSUPPORTED:
		free(jvm);
		return HS_RT_UNSUPPORTED;
	default:
		free(jvm);
		return HS_RT_ABSENT;
	}
}

/* The walk's offsets, from the tables' (each checked there): -EINVAL when one does not fit the
 * program's reads. */
static int walk_offsets(const struct hs_jvm *jvm, struct hs_jvm_walk_offsets *w)
{
	const struct hs_jvm_offsets *o = &jvm->info.off;
	uint32_t end;

	*w = (struct hs_jvm_walk_offsets){
		.array_len = o->array_len,
		.array_data = o->array_data,
		.heap_low = o->heap_memory_low,
		.heap_high = o->heap_memory_high,
		.heap_segmap = o->heap_segmap_low,
		.heap_log2_seg = o->heap_log2_segment,
		.block_used = o->block_used,
		.block_size = o->block_size,
		.stubq_buffer = o->stubqueue_buffer,
		.stubq_limit = o->stubqueue_limit,
		.list_length = o->threads_list_length,
		.list_threads = o->threads_list_threads,
		.thread_osthread = o->thread_osthread,
		.osthread_tid = o->osthread_thread_id,
		.thread_anchor = o->thread_anchor,
		/* within a JavaFrameAnchor: the tables' are within the thread */
		.anchor_sp = (uint16_t)(o->anchor_sp - o->thread_anchor),
		.anchor_pc = (uint16_t)(o->anchor_pc - o->thread_anchor),
		.anchor_fp = (uint16_t)(o->anchor_fp - o->thread_anchor),
		.wrapper_anchor = o->wrapper_anchor,
		.blob_frame_size = o->blob_frame_size,
		.blob_frame_complete = o->blob_frame_complete,
		.blob_code = o->blob_code_begin,
		.nm_compile_id = o->nmethod_compile_id,
		.nm_comp_level = o->nmethod_comp_level,
		.interp_method = (int16_t)-o->interp_method,
		.interp_bcp = (int16_t)-o->interp_bcp,
		.interp_sender_sp = (int16_t)-o->interp_sender_sp,
		.entry_wrapper = (int16_t)-o->entry_wrapper,
		.frame_complete_size = o->blob_frame_complete_size,
		.comp_level_size = o->nmethod_comp_level_size,
		.code_is_offset = o->code_by == HS_JVM_CODE_OFFSET,
	};
	end = HS_MAX(HS_MAX(w->blob_frame_size + 4u, w->blob_frame_complete + (uint32_t)w->frame_complete_size),
		     HS_MAX(w->blob_code + 8u, HS_MAX(w->nm_compile_id + 4u, w->nm_comp_level + (uint32_t)w->comp_level_size)));
	w->blob_read = (uint16_t)((end + 7) & ~7u);
	/* the program reads a blob's first HS_JVM_BLOB_READ bytes, and an interpreted frame's 16
	 * words from its bcp slot up (its fields aligned within those) */
	if (end > HS_JVM_BLOB_READ || o->anchor_sp < o->thread_anchor || o->anchor_pc < o->thread_anchor ||
	    o->anchor_fp < o->thread_anchor || !o->interp_bcp || o->interp_bcp + 2 > 16 || o->interp_method > o->interp_bcp ||
	    o->interp_sender_sp > o->interp_bcp || !o->entry_wrapper)
		return -EINVAL;
	return 0;
}

static int proc_info(const void *proc, void *ret)
{
	const struct hs_jvm *jvm = proc;
	struct hs_jvm_walk_proc info = {0};
	int e;

	if ((e = walk_offsets(jvm, &info.off)))
		return e;
	info.heaps = jvm->info.code_heaps;
	info.interp = jvm->info.interpreter;
	info.call_stub_ret = jvm->info.call_stub_return;
	info.thread_list = jvm->info.java_threads;
	info.version = jvm->major;
	memcpy(ret, &info, sizeof(info));
	return 0;
}

static const void *bpf_object(size_t *size)
{
	return hs_hotspot__elf_bytes(size);
}

HS_RT_STORE_OPS(hs_jvm, struct hs_jvm_sample, struct hs_jvm_rec_frame, HS_JVM_MAX_FRAMES)

const struct hs_runtime hs_hotspot_runtime = {
	.id = HS_RT_HOTSPOT,
	.name = "Java",
	.versions = "HotSpot JDK 17 to 25 on x86_64",
	.shows = "[anon] frames, or the names of a perf map",
	.fallback = NULL,
	.maybe = hs_jvm_maybe_runtime,
	/* libjvm's tables are set up by its constructors, after the dynamic loader maps and
	 * relocates its 20 MiB: that can take a while on a busy machine */
	.look_ms = 2000,
	.find = find,
	.proc_free = free,
	.proc_info_size = sizeof(struct hs_jvm_walk_proc),
	.proc_info = proc_info,
	.bpf_object = bpf_object,
	HS_RT_STORE_MEMBERS,
};
