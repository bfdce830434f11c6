// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Reads the Java frames of the sampled thread of a HotSpot JVM, at the moment of the sample.
 *
 * For a process in the procs table, it finds the sampled thread's JavaThread (by its OS thread
 * id, in the JVM's list of Java threads), and walks its Java frames innermost first: from the
 * sampled registers when the thread runs Java code, else from the last Java frame the thread
 * left (its frame anchor). Each frame's code is looked up in the code cache (its heaps' segment
 * maps lead to the code blob's start): an interpreted frame gives its Method* and bytecode
 * pointer from fixed slots below its frame pointer, and its caller's registers from its frame; a
 * compiled one (nmethod, stub, adapter) gives its blob and compile id, and its caller is found
 * from its frame size, so no frame pointer is needed. Where the Java code was entered from
 * native code (the call stub), the native caller's registers are written for user space to go on
 * unwinding, and the walk goes on at the previous Java frames of the thread, if any. It writes
 * one struct hs_jvm_sample to the ring; user space names it and merges it with the native stack.
 * It lets every sample through, and hands those of other processes on to the next reader. */
#include "runtime/frames-bpf.h"
#include "runtime/hotspot/walk-abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* process id */
	__type(value, struct hs_jvm_walk_proc);
} procs SEC(".maps");

/* A thread's JavaThread (0: none) as found in the JVM's thread list at list: valid as long as
 * the list is the same (the JVM makes a new list whenever a thread starts or ends). */
struct thread_cache {
	__u64 list, thread;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* thread id */
	__type(value, struct thread_cache);
} threads SEC(".maps");

#define INTERP_SLOTS 16 /* words read of an interpreted frame, from its bcp slot up */

struct scratch {
	struct hs_jvm_sample s;
	struct hs_jvm_walk_proc pi;
	__u8 blob[HS_JVM_BLOB_READ];
	__u64 slots[INTERP_SLOTS];
	__u64 pc, sp, fp;
	struct pt_regs regs; /* the user registers of the sample */
	__u64 list, arr; /* the thread list being searched */
	__u32 nthreads, tid;
	__u64 found;
	__u32 n, leaf, wake, done;
};

HS_RT_SCRATCH

static __always_inline __u32 read_u32(__u64 addr)
{
	__u32 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

static __always_inline __u8 read_u8(__u64 addr)
{
	__u8 v = 0xff;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0xff;
	return v;
}

/* A field of the blob read into scratch: offsets come from the map, bounded for the verifier
 * (user space refuses a layout whose fields lie past HS_JVM_BLOB_READ). */
static __always_inline __u64 blob_u64(const struct scratch *sc, __u32 off)
{
	return *(const __u64 *)(sc->blob + (off & (HS_JVM_BLOB_READ - 8)));
}

static __always_inline __u32 blob_u32(const struct scratch *sc, __u32 off)
{
	return *(const __u32 *)(sc->blob + (off & (HS_JVM_BLOB_READ - 4)));
}

static __always_inline __u32 blob_sized(const struct scratch *sc, __u32 off, __u8 size)
{
	if (size == 1)
		return sc->blob[off & (HS_JVM_BLOB_READ - 1)];
	if (size == 2)
		return *(const __u16 *)(sc->blob + (off & (HS_JVM_BLOB_READ - 2)));
	return blob_u32(sc, off);
}

/* What the JVM sets up while it starts (its code heaps, its interpreter, its call stub), read
 * into the table once all of it is there. */
static __always_inline int set_up(struct hs_jvm_walk_proc *pi)
{
	const struct hs_jvm_walk_offsets *o = &pi->off;
	__u64 arr = hs_read_ptr(pi->heaps), data, q;
	__u32 len;

	if (!arr || !(data = hs_read_ptr(arr + o->array_data)))
		return -1;
	len = read_u32(arr + o->array_len);
	if (!len || len > HS_JVM_WALK_HEAPS)
		return -1;
	for (__u32 i = 0; i < HS_JVM_WALK_HEAPS; i++) {
		__u64 h;
		if (i >= len)
			break;
		h = hs_read_ptr(data + 8 * i);
		if (!h)
			return -1;
		pi->heap[i].lo = hs_read_ptr(h + o->heap_low);
		pi->heap[i].hi = hs_read_ptr(h + o->heap_high);
		pi->heap[i].segmap = hs_read_ptr(h + o->heap_segmap);
		pi->heap[i].log2_seg = read_u32(h + o->heap_log2_seg);
		if (!pi->heap[i].lo || pi->heap[i].hi <= pi->heap[i].lo || !pi->heap[i].segmap ||
		    pi->heap[i].log2_seg < 4 || pi->heap[i].log2_seg > 16)
			return -1;
	}
	q = hs_read_ptr(pi->interp);
	if (!q)
		return -1;
	pi->interp_lo = hs_read_ptr(q + o->stubq_buffer);
	pi->interp_hi = pi->interp_lo + read_u32(q + o->stubq_limit);
	pi->stub_ret = hs_read_ptr(pi->call_stub_ret);
	if (!pi->interp_lo || pi->interp_hi <= pi->interp_lo || !pi->stub_ret)
		return -1;
	pi->nheaps = len;
	pi->ready = 1;
	return 0;
}

static __always_inline int in_interp(const struct scratch *sc, __u64 pc)
{
	return pc >= sc->pi.interp_lo && pc < sc->pi.interp_hi;
}

static __always_inline int in_heaps(const struct scratch *sc, __u64 pc)
{
#pragma unroll
	for (__u32 i = 0; i < HS_JVM_WALK_HEAPS; i++)
		if (i < sc->pi.nheaps && pc >= sc->pi.heap[i].lo && pc < sc->pi.heap[i].hi)
			return 1;
	return 0;
}

/* Where the Java code of a return address is: somewhere the walk goes on from. */
static __always_inline int is_java(const struct scratch *sc, __u64 pc)
{
	return in_interp(sc, pc) || in_heaps(sc, pc) || pc == sc->pi.stub_ret;
}

/* The code blob that holds pc (0: none), through its heap's segment map: each entry says how
 * many segments back the block goes on (0: its first; 0xff: free). */
static __always_inline __u64 find_blob(const struct scratch *sc, __u64 pc)
{
#pragma unroll
	for (__u32 i = 0; i < HS_JVM_WALK_HEAPS; i++) {
		__u64 lo = sc->pi.heap[i].lo, idx, block;
		__u32 shift = sc->pi.heap[i].log2_seg & 31;
		if (i >= sc->pi.nheaps || pc < lo || pc >= sc->pi.heap[i].hi)
			continue;
		idx = (pc - lo) >> shift;
		for (int k = 0; k < 32; k++) {
			__u8 hop = read_u8(sc->pi.heap[i].segmap + idx);
			if (hop == 0xff || hop > idx)
				return 0;
			if (!hop)
				break;
			idx -= hop;
		}
		if (read_u8(sc->pi.heap[i].segmap + idx) != 0)
			return 0;
		block = lo + (idx << shift);
		if (read_u8(block + sc->pi.off.block_used) != 1)
			return 0;
		return block + sc->pi.off.block_size;
	}
	return 0;
}

static __always_inline void emit(struct scratch *sc, __u64 pc, __u64 a, __u64 b, __u64 kind)
{
	__u32 n = sc->n & (HS_JVM_MAX_FRAMES - 1);

	sc->s.frames[n].pc = pc;
	sc->s.frames[n].a = a;
	sc->s.frames[n].b = (b & HS_JVM_VALUE_MASK) | kind << HS_JVM_FRAME_SHIFT;
	sc->n++;
}

/* The end of the Java frames of an entry from native code: the native caller of the call stub,
 * then the Java frames that were left for it, if any (the entry frame's call wrapper keeps the
 * thread's frame anchor of then). Returns whether the walk goes on. */
static __always_inline int leave_entry(struct scratch *sc)
{
	const struct hs_jvm_walk_offsets *o = &sc->pi.off;
	__u64 fp = sc->fp, wrapper, anchor, sp, pc;

	emit(sc, hs_read_ptr(fp + 8), fp + 16, hs_read_ptr(fp), HS_JVM_FRAME_NATIVE);
	wrapper = hs_read_ptr(fp + (__s64)o->entry_wrapper * 8);
	if (!wrapper)
		return 0;
	anchor = wrapper + o->wrapper_anchor;
	sp = hs_read_ptr(anchor + o->anchor_sp);
	if (!sp)
		return 0; /* the thread's first Java frames */
	pc = hs_read_ptr(anchor + o->anchor_pc);
	sc->fp = hs_read_ptr(anchor + o->anchor_fp);
	sc->sp = sp;
	sc->pc = pc ? pc : hs_read_ptr(sp - 8);
	sc->leaf = 0;
	return 1;
}

static __always_inline int step_interp(struct scratch *sc)
{
	const struct hs_jvm_walk_offsets *o = &sc->pi.off;
	__s32 bcp = o->interp_bcp, m = o->interp_method - bcp, ssp = o->interp_sender_sp - bcp;
	__u64 base = sc->fp + (__s64)bcp * 8;

	/* from the bcp slot (the lowest) to the return address: 8 * (-bcp + 2) bytes */
	if (bcp >= 0 || -bcp + 2 > INTERP_SLOTS ||
	    bpf_probe_read_user(sc->slots, sizeof(sc->slots), (void *)base)) {
		sc->s.head.flags |= HS_JVM_READ_FAULT;
		return 0;
	}
	/* at the top, a frame being built has pushed its slots only down to its stack pointer
	 * (sender sp, last sp, Method*, ..., bcp last): those below hold what an earlier frame left
	 * there, so its bytecode is not known, nor its method but from rbx, where the interpreter's
	 * entry keeps the Method* until it pushes it (user space checks it is one) */
	if (sc->leaf && sc->sp > sc->fp + (__s64)o->interp_method * 8)
		emit(sc, sc->pc, sc->regs.rbx, 0, HS_JVM_FRAME_INTERP);
	else if (sc->leaf && sc->sp > base)
		emit(sc, sc->pc, sc->slots[m & (INTERP_SLOTS - 1)], 0, HS_JVM_FRAME_INTERP);
	else
		emit(sc, sc->pc, sc->slots[m & (INTERP_SLOTS - 1)], sc->slots[0], HS_JVM_FRAME_INTERP);
	sc->sp = sc->slots[ssp & (INTERP_SLOTS - 1)];
	sc->pc = sc->slots[(-bcp + 1) & (INTERP_SLOTS - 1)];
	sc->fp = sc->slots[(-bcp) & (INTERP_SLOTS - 1)];
	return 1;
}

/* A frame whose blob has no frame of its own here (a stub at the top, its prologue not run):
 * the return address is at the stack pointer, or above the frame pointer it pushed. */
static __always_inline int step_frameless(struct scratch *sc)
{
	__u64 ret = hs_read_ptr(sc->sp);

	if (is_java(sc, ret)) {
		sc->pc = ret;
		sc->sp += 8;
		return 1;
	}
	ret = hs_read_ptr(sc->sp + 8);
	if (is_java(sc, ret)) {
		sc->fp = hs_read_ptr(sc->sp);
		sc->pc = ret;
		sc->sp += 16;
		return 1;
	}
	return 0;
}

/* Where the return address of compiled code at the top of the stack lies while its frame is
 * built or taken down. x86_64 prologues are: a stack bang (mov %eax,-N(%rsp)), push %rbp,
 * [mov %rsp,%rbp,] sub $N,%rsp, then the entry barrier (cmp $k,d(%r15); jne or je; call); or,
 * with no bang: sub $N,%rsp, mov %rbp,d(%rsp), [mov %rsp,%rbp; add $N,%rbp]. Before them, the
 * unverified entry checks the receiver's class. Epilogues end: pop %rbp; cmp %rsp,poll(%r15); ja;
 * ret. The stage is told by the instruction at pc and the one before it: a slot of a frame just
 * made holds what an earlier frame left there, return addresses among them, so it is never
 * told by what a slot looks like alone. Returns 0 when the whole frame is there (the frame size
 * leads to the caller), 1 when the return address is at the stack pointer, 2 when it is above
 * the frame pointer pushed at the stack pointer, -1 when the stage is not known. */
static __always_inline int top_stage(struct scratch *sc, __u64 csp, int prologue)
{
	__u64 rbp = sc->regs.rbp;
	__u8 c[16] = {0}; /* c[8] is the byte at pc, c[0..7] the eight before it */
	int full, bare;

	if (bpf_probe_read_user(c, sizeof(c), (void *)(sc->pc - 8)) &&
	    bpf_probe_read_user(c + 8, 8, (void *)sc->pc))
		return -1;
	if (!prologue) {
		if (c[8] == 0x5d) /* pop %rbp */
			return 2;
		if (c[8] == 0xc3 || (c[8] == 0x49 && c[9] == 0x3b && (c[10] == 0x67 || c[10] == 0xa7)) ||
		    (c[8] == 0x0f && c[9] == 0x87) || c[8] == 0x77) /* ret, cmp %rsp,d(%r15), ja */
			return 1;
		return 0;
	}
	if (c[8] == 0x55 || (c[8] == 0x89 && c[9] == 0x84 && c[10] == 0x24 && c[14] == 0xff))
		return 1; /* push %rbp, or the bang before it */
	if (c[8] == 0x48 && ((c[9] == 0x89 && c[10] == 0xe5) || (c[9] == 0x8b && c[10] == 0xec)))
		return c[7] == 0x55 ? 2 : 0; /* mov %rsp,%rbp: after the push, or after the save */
	if (c[8] == 0x48 && (c[9] == 0x83 || c[9] == 0x81) && c[10] == 0xec) /* sub $N,%rsp */
		return c[7] == 0x55 || (c[5] == 0x48 && ((c[6] == 0x89 && c[7] == 0xe5) || (c[6] == 0x8b && c[7] == 0xec))) ? 2 : 1;
	if (c[8] == 0x48 && ((c[9] == 0x89 && (c[10] == 0x6c || c[10] == 0xac) && c[11] == 0x24) ||
			     ((c[9] == 0x83 || c[9] == 0x81) && c[10] == 0xc5)))
		return 0; /* mov %rbp,d(%rsp) or add $N,%rbp: the frame made */
	/* the entry barrier: cmp $k,d(%r15), the branch after it, the call after that */
	if ((c[8] == 0x41 && (c[9] == 0x81 || c[9] == 0x83) && (c[10] == 0x7f || c[10] == 0xbf)) ||
	    ((c[8] == 0x0f || c[8] == 0x74 || c[8] == 0x75) &&
	     ((c[0] == 0x41 && c[1] == 0x81 && c[2] == 0x7f) || (c[3] == 0x41 && c[4] == 0x83 && c[5] == 0x7f))) ||
	    (c[8] == 0xe8 && c[6] == 0x74))
		return 0;
	/* elsewhere (the unverified entry, or a prologue of another shape): by what each stage must
	 * have written, and not at all when more than one fits */
	full = (hs_read_ptr(csp - 16) == rbp || rbp == csp - 16) && is_java(sc, hs_read_ptr(csp - 8));
	bare = is_java(sc, hs_read_ptr(sc->sp));
	if (full && !bare)
		return 0;
	if (bare && !full)
		return 1;
	return -1;
}

static __always_inline int step_compiled(struct scratch *sc, __u64 blob)
{
	const struct hs_jvm_walk_offsets *o = &sc->pi.off;
	__u32 len = o->blob_read;
	__s32 fs, complete;
	__u64 code, id, csp;

	if (len < 16 || len > HS_JVM_BLOB_READ || bpf_probe_read_user(sc->blob, len & (HS_JVM_BLOB_READ - 1), (void *)blob)) {
		sc->s.head.flags |= HS_JVM_READ_FAULT;
		return 0;
	}
	fs = (__s32)blob_u32(sc, o->blob_frame_size);
	complete = (__s32)blob_sized(sc, o->blob_frame_complete, o->frame_complete_size);
	if (o->frame_complete_size == 2)
		complete = (__s16)complete;
	code = o->code_is_offset ? blob + blob_u32(sc, o->blob_code) : blob_u64(sc, o->blob_code);
	id = blob_u32(sc, o->nm_compile_id) | (__u64)(blob_sized(sc, o->nm_comp_level, o->comp_level_size) & 0xff) << 32;
	emit(sc, sc->pc, blob, id, HS_JVM_FRAME_COMPILED);
	if (sc->n <= SEEN_DEPTH) {
		if (hs_rt_first_seen(blob ^ id << 20 ^ (__u64)sc->s.head.pid * 0x9e3779b97f4a7c15ULL))
			sc->wake = 1;
	}
	if (fs <= 0 || fs > 0x10000) /* no frame: only at the top can that be */
		return sc->leaf && step_frameless(sc);
	csp = sc->sp + (__u64)fs * 8;
	/* at the top, in the prologue (before its frame is complete: the stack bang, the push of
	 * the frame pointer, the entry barrier) or the epilogue, the frame may not be there yet or
	 * any more */
	if (sc->leaf) {
		switch (top_stage(sc, csp, complete > 0 && sc->pc < code + complete)) {
		case 0:
			break;
		case 1:
			sc->pc = hs_read_ptr(sc->sp);
			sc->sp += 8;
			return 1;
		case 2:
			sc->fp = hs_read_ptr(sc->sp);
			sc->pc = hs_read_ptr(sc->sp + 8);
			sc->sp += 16;
			return 1;
		default:
			sc->s.head.flags |= HS_JVM_LOST;
			return 0;
		}
	}
	sc->pc = hs_read_ptr(csp - 8);
	sc->fp = hs_read_ptr(csp - 16);
	sc->sp = csp;
	return 1;
}

static long frame_step(__u32 i, void *unused)
{
	struct scratch *sc = get_scratch();
	__u64 blob;
	int more;

	if (!sc || sc->done)
		return 1;
	if (sc->n >= HS_JVM_MAX_FRAMES - 1) {
		sc->s.head.flags |= HS_JVM_TRUNCATED;
		return 1;
	}
	if (in_interp(sc, sc->pc))
		more = step_interp(sc);
	else if (sc->pc == sc->pi.stub_ret)
		more = leave_entry(sc);
	else if ((blob = find_blob(sc, sc->pc)))
		more = step_compiled(sc, blob);
	else {
		/* native code: user space unwinds it from here */
		emit(sc, sc->pc, sc->sp, sc->fp, HS_JVM_FRAME_NATIVE);
		more = 0;
	}
	sc->leaf = 0;
	if (more && !is_java(sc, sc->pc) && sc->pc) {
		/* a caller outside Java code that no entry frame led to: native code called Java
		 * some other way; it is unwound from here */
		emit(sc, sc->pc, sc->sp, sc->fp, HS_JVM_FRAME_NATIVE);
		more = 0;
	} else if (more && !sc->pc) {
		sc->s.head.flags |= HS_JVM_LOST;
		more = 0;
	}
	if (!more && !(sc->s.head.flags & HS_JVM_READ_FAULT) && sc->n &&
	    (sc->s.frames[(sc->n - 1) & (HS_JVM_MAX_FRAMES - 1)].b >> HS_JVM_FRAME_SHIFT) != HS_JVM_FRAME_NATIVE)
		sc->s.head.flags |= HS_JVM_LOST;
	sc->done = !more;
	return !more;
}

/* The sampled thread's JavaThread, or 0 (not a Java thread). */
static long thread_step(__u32 i, void *unused)
{
	struct scratch *sc = get_scratch();
	__u64 t, os;

	if (!sc || i >= sc->nthreads)
		return 1;
	t = hs_read_ptr(sc->arr + 8 * (__u64)i);
	os = t ? hs_read_ptr(t + sc->pi.off.thread_osthread) : 0;
	if (os && read_u32(os + sc->pi.off.osthread_tid) == sc->tid) {
		sc->found = t;
		return 1;
	}
	return 0;
}

static __always_inline __u64 find_thread(struct scratch *sc)
{
	struct thread_cache *tc, fresh;
	__u64 list = hs_read_ptr(sc->pi.thread_list);

	if (!list)
		return 0;
	tc = bpf_map_lookup_elem(&threads, &sc->tid);
	if (tc && tc->list == list)
		return tc->thread;
	sc->arr = hs_read_ptr(list + sc->pi.off.list_threads);
	sc->nthreads = read_u32(list + sc->pi.off.list_length);
	if (sc->nthreads > HS_JVM_MAX_THREADS)
		sc->nthreads = HS_JVM_MAX_THREADS;
	sc->found = 0;
	if (sc->arr)
		bpf_loop(HS_JVM_MAX_THREADS, thread_step, NULL, 0);
	fresh.list = list;
	fresh.thread = sc->found;
	bpf_map_update_elem(&threads, &sc->tid, &fresh, BPF_ANY);
	return fresh.thread;
}

SEC("perf_event")
int hs_jvm_read_frames(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), thread, ip = ctx->regs.rip;
	__u32 pid = id >> 32;
	struct hs_jvm_walk_proc *pi = bpf_map_lookup_elem(&procs, &pid);
	const struct hs_jvm_walk_offsets *o;
	struct scratch *sc;

	if (!pi)
		return hs_rt_next(ctx);
	if (!pi->ready && set_up(pi))
		return 1; /* the JVM is starting: no Java code yet */
	sc = get_scratch();
	if (!sc)
		return 1;
	sc->pi = *pi;
	o = &sc->pi.off;
	sc->tid = (__u32)id;
	thread = find_thread(sc);
	if (!thread)
		return 1; /* not a Java thread */
	hs_rt_head_init(&sc->s.head);
	if (ip >= 0x800000000000ULL) {
		/* in the kernel: the thread's user registers, as it entered it */
		struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		if (!u || bpf_probe_read_kernel(&sc->regs, sizeof(sc->regs), u))
			sc->regs.rip = 0;
	} else {
		sc->regs.rip = ip;
		sc->regs.rsp = ctx->regs.rsp;
		sc->regs.rbp = ctx->regs.rbp;
		sc->regs.rbx = ctx->regs.rbx;
	}
	ip = sc->regs.rip;
	if (ip && ip < 0x800000000000ULL && (in_interp(sc, ip) || in_heaps(sc, ip))) {
		sc->pc = ip;
		sc->sp = sc->regs.rsp;
		sc->fp = sc->regs.rbp;
		sc->leaf = 1;
	} else {
		__u64 anchor = thread + o->thread_anchor;
		sc->sp = hs_read_ptr(anchor + o->anchor_sp);
		if (!sc->sp)
			return 1; /* no Java frames */
		sc->pc = hs_read_ptr(anchor + o->anchor_pc);
		sc->fp = hs_read_ptr(anchor + o->anchor_fp);
		if (!sc->pc)
			sc->pc = hs_read_ptr(sc->sp - 8);
		sc->leaf = 0;
		sc->s.head.flags |= HS_JVM_FROM_ANCHOR;
	}
	sc->n = 0;
	sc->wake = 0;
	sc->done = 0;
	bpf_loop(HS_JVM_MAX_FRAMES, frame_step, NULL, 0);
	if (!sc->n)
		return 1;
	HS_RT_OUTPUT(sc, HS_JVM_MAX_FRAMES);
	return 1;
}
