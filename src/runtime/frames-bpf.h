// SPDX-License-Identifier: GPL-2.0 OR MIT
/* What every runtime's frame reader (a BPF program, runtime/NAME/frames.bpf.c) has in common:
 * the settings user space gives it before loading, the dispatcher's slots it hands the sample on
 * through when the process is not its runtime's, the ring its records go to, and reads of the
 * sampled thread and of the process's memory. Included once, by the reader's one source file. */
#ifndef HS_FRAMES_BPF_H
#define HS_FRAMES_BPF_H

#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "runtime/rt-abi.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Set by user space before loading (record/reader.c). fsbase_off: where the running kernel
 * keeps a task's fs base (task_struct.thread.fsbase), found in the kernel's BTF once per boot
 * (relocating the read by CO-RE instead made libbpf parse all of the kernel's BTF in every
 * recording, more than half the cost of loading a reader). self_slot: this reader's slot. */
const volatile __u32 fsbase_off = 0;
const volatile __u32 self_slot = 0;

/* The dispatcher's program array, shared by every reader loaded (user space hands the same map
 * to each): slot i holds runtime i's reader. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, HS_RT_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* set per machine before loading (record/reader.c) */
} stacks SEC(".maps");

/* counters user space reads at the end: [0] records the ring had no room for */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

/* What a reader's frames refer to (code objects, compiled code) seen near the top of a stack
 * (SEEN_DEPTH frames): one not seen lately wakes user space at once, to read it while it surely
 * exists (a module's body, run once at import, and code the JIT made obsolete are freed soon). */
#define SEEN_DEPTH 4
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} seen SEC(".maps");

/* Whether key was not seen lately (it is from now on). */
static __always_inline int hs_rt_first_seen(__u64 key)
{
	__u8 one = 1;

	if (bpf_map_lookup_elem(&seen, &key))
		return 0;
	bpf_map_update_elem(&seen, &key, &one, BPF_ANY);
	return 1;
}

/* A sample of a process that is not this reader's: the readers of the slots after this one are
 * tried in turn (a tail call to an empty slot falls through to the next line). Returns 1, which
 * lets the sample through when none takes it. */
static __always_inline int hs_rt_next(struct bpf_perf_event_data *ctx)
{
#pragma unroll
	for (__u32 i = 1; i < HS_RT_SLOTS; i++)
		if (i > self_slot)
			bpf_tail_call(ctx, &slots, i);
	return 1;
}

static __always_inline __u64 hs_read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* The sampled thread's fs base (its pthread_t with glibc on x86_64), or 0. */
static __always_inline __u64 hs_thread_fsbase(void)
{
	__u64 fsbase = 0;

	if (!fsbase_off ||
	    bpf_probe_read_kernel(&fsbase, sizeof(fsbase), (void *)(bpf_get_current_task() + fsbase_off)))
		return 0;
	return fsbase;
}

/* Fills the head of a record for the sampled thread. */
static __always_inline void hs_rt_head_init(struct hs_rt_head *h)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->time = bpf_ktime_get_ns();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->cpu = bpf_get_smp_processor_id();
	h->nframes = 0;
	h->flags = 0;
}

/* Writes size bytes of rec to the ring (counted in dropped when it has no room); wake: user space
 * is to read it at once. */
static __always_inline void hs_rt_output(const void *rec, __u64 size, int wake)
{
	__u32 zero = 0;

	if (bpf_ringbuf_output(&stacks, (void *)rec, size, wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP)) {
		__u64 *d = bpf_map_lookup_elem(&dropped, &zero);
		if (d)
			*d += 1;
	}
}

/* A reader's scratch area, one per CPU (too big for the BPF stack, and for a per-CPU map's 32 KiB
 * value): the array of struct scratch, which the reader's file defines before, one entry per
 * possible CPU (set before loading, record/reader.c), and get_scratch(), the running CPU's. The
 * programs run in the sampling events' overflow handler, one at a time on a CPU. */
#define HS_RT_SCRATCH                                            \
	struct {                                                 \
		__uint(type, BPF_MAP_TYPE_ARRAY);                \
		__uint(max_entries, 1);                          \
		__type(key, __u32);                              \
		__type(value, struct scratch);                   \
	} scratch SEC(".maps");                                  \
	static __always_inline struct scratch *get_scratch(void) \
	{                                                        \
		__u32 cpu = bpf_get_smp_processor_id();          \
		return bpf_map_lookup_elem(&scratch, &cpu);      \
	}

/* Writes the record of scratch sc (its s, with sc->n frames, at most max: a power of 2) to the
 * ring, to be read at once when sc->wake. */
#define HS_RT_OUTPUT(sc, max)                                                               \
	do {                                                                                \
		__u64 size_ = offsetof(__typeof__((sc)->s), frames) +                       \
			      (__u64)((sc)->n & ((max)*2 - 1)) * sizeof((sc)->s.frames[0]); \
		(sc)->s.head.nframes = (sc)->n;                                             \
		if (size_ > sizeof((sc)->s))                                                \
			size_ = sizeof((sc)->s);                                            \
		hs_rt_output(&(sc)->s, size_, (sc)->wake);                                  \
	} while (0)

#endif
