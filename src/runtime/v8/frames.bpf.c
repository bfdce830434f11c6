// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Reads the JavaScript frames of the sampled thread of a V8 process, at the moment of the sample.
 *
 * V8's frames and the C++ of node keep frame pointers, so the walk follows them from the sampled
 * registers: native frames are stepped over (user space unwinds them by their CFI) until a
 * return address lies in V8's code (its builtins, their copy, or the range it compiles into).
 * From there each frame says what it is in the slot below its frame pointer: a typed frame (an
 * entry, exit, stub or internal frame) holds its type there, a JavaScript frame its context,
 * and then its function. A function's SharedFunctionInfo is read at once (functions are young
 * objects that the collector moves; what they share is old), with its code's kind and the
 * bytecode offset of an interpreted frame. An entry frame (native code called JavaScript there)
 * hands native code's registers on for user space to unwind from. It writes one struct
 * hs_v8_sample to the ring; user space names it and merges it with the native stack. It lets
 * every sample through, and hands those of other processes on to the next reader. */
#include "runtime/frames-bpf.h"
#include "runtime/v8/walk-abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* process id */
	__type(value, struct hs_v8_walk_proc);
} procs SEC(".maps");

#define SLOTS 7 /* words read of a frame: fp - 40 to fp + 8 */

struct scratch {
	struct hs_v8_sample s;
	struct hs_v8_walk_proc pi;
	__u64 slots[SLOTS];
	__u8 code[HS_V8_CODE_READ];
	__u64 pc, sp, fp, base; /* base: the sampled stack pointer */
	__u64 r9, r12, rdi;
	__u64 scan; /* looking up the stack from here for a return address into V8's code */
	/* the last function read in this sample, and what was read of it */
	__u64 last_fn, last_sfi, last_code, last_start, last_size, last_check;
	__u32 last_kind;
	__u64 words[8];
	__u32 n, leaf, wake, done, in_v8, scanned;
};

HS_RT_SCRATCH

static __always_inline int in_builtins(const struct scratch *sc, __u64 pc)
{
	return (pc >= sc->pi.blob_lo && pc < sc->pi.blob_hi) || (pc >= sc->pi.copy_lo && pc < sc->pi.copy_hi);
}

/* Whether pc is in the interpreter's entry (either copy), which a JavaScript function is
 * called through, as its compiled code is. */
static __always_inline int in_trampoline(const struct scratch *sc, __u64 pc)
{
	const struct hs_v8_walk_proc *pi = &sc->pi;

	return pi->tramp_size && ((pc - pi->blob_lo - pi->tramp_off < pi->tramp_size) ||
				  (pi->copy_lo && pc - pi->copy_lo - pi->tramp_off < pi->tramp_size));
}

static __always_inline int in_jit(const struct scratch *sc, __u64 pc)
{
	return pc >= sc->pi.jit_lo && pc < sc->pi.jit_hi && !in_builtins(sc, pc);
}

static __always_inline int is_heap(const struct scratch *sc, __u64 p)
{
	return p && (p & sc->pi.heap_tag_mask) == sc->pi.heap_tag;
}

/* The instance type of the heap object at tagged pointer p, or 0xffffffff. */
static __always_inline __u32 type_of(const struct scratch *sc, __u64 p)
{
	__u64 map;
	__u16 t;

	if (!is_heap(sc, p) || !(map = hs_read_ptr(p - sc->pi.heap_tag)) || !is_heap(sc, map) ||
	    bpf_probe_read_user(&t, sizeof(t), (void *)(map - sc->pi.heap_tag + sc->pi.map_instance_type)))
		return 0xffffffff;
	return t;
}

static __always_inline int is_function(const struct scratch *sc, __u64 p)
{
	__u32 t = type_of(sc, p);

	return t >= sc->pi.t_js_function_first && t <= sc->pi.t_js_function_last;
}

static __always_inline void emit(struct scratch *sc, __u64 pc, __u64 a, __u64 b, __u64 kind)
{
	struct hs_v8_rec_frame *f;
	__u32 n = sc->n;

	if (n >= HS_V8_MAX_FRAMES)
		return;
	/* the mask kept, for the verifier: the compiler would drop it after the test */
	asm volatile("" : "+r"(n));
	f = &sc->s.frames[n & (HS_V8_MAX_FRAMES - 1)];
	f->pc = pc;
	f->a = a;
	f->b = (b & HS_V8_VALUE_MASK) | kind << HS_V8_FRAME_SHIFT;
	/* a function's: what its SharedFunctionInfo names it by now */
	f->check = kind < HS_V8_FRAME_INTERP || kind > HS_V8_FRAME_FUNCTION ? 0
		   : a == sc->last_sfi				    ? sc->last_check
								    : hs_read_ptr(a - sc->pi.heap_tag + sc->pi.sfi_name);
	sc->n = n + 1;
}

static __always_inline __u64 code_u64(const struct scratch *sc, __u16 off)
{
	return *(const __u64 *)(sc->code + (off & (HS_V8_CODE_READ - 8)));
}

static __always_inline __u32 code_u32(const struct scratch *sc, __u16 off)
{
	return *(const __u32 *)(sc->code + (off & (HS_V8_CODE_READ - 4)));
}

/* Steps to the caller of the frame at fp. */
static __always_inline void up(struct scratch *sc)
{
	__u64 fp = sc->fp;

	sc->pc = sc->slots[6];
	sc->fp = sc->slots[5];
	sc->sp = fp + 16;
}

/* A JavaScript frame: its function, and what runs in it. 0 when the walk stops. */
static __always_inline int js_frame(struct scratch *sc, __u64 fn, __u64 pc)
{
	const struct hs_v8_walk_proc *pi = &sc->pi;
	__u64 sfi, code, start = 0, size = 0, off = sc->slots[0];
	__u32 t, kind = 0xff;

	if (fn == sc->last_fn) {
		/* the caller's function again (recursion): read in this sample already */
		sfi = sc->last_sfi;
		code = sc->last_code;
		start = sc->last_start;
		size = sc->last_size;
		kind = sc->last_kind;
		goto known;
	}
	t = type_of(sc, fn);
	if (t < pi->t_js_function_first || t > pi->t_js_function_last) {
		sc->s.head.flags |= HS_V8_LOST;
		return 0;
	}
	sfi = hs_read_ptr(fn - pi->heap_tag + pi->fn_shared);
	if (type_of(sc, sfi) != pi->t_sfi) {
		sc->s.head.flags |= HS_V8_LOST;
		return 0;
	}
	code = hs_read_ptr(fn - pi->heap_tag + pi->fn_code);
	if (type_of(sc, code) == pi->t_code &&
	    !bpf_probe_read_user(sc->code, sizeof(sc->code), (void *)(code - pi->heap_tag))) {
		start = code_u64(sc, pi->code_start);
		size = code_u32(sc, pi->code_size);
		kind = (code_u32(sc, pi->code_flags) >> pi->code_kind_shift) & pi->code_kind_mask;
	}
	sc->last_fn = fn;
	sc->last_sfi = sfi;
	sc->last_code = code;
	sc->last_start = start;
	sc->last_size = size;
	sc->last_kind = kind;
	sc->last_check = hs_read_ptr(sfi - pi->heap_tag + pi->sfi_name);
known:
	if (pc && pc - start < size && in_jit(sc, pc)) {
		/* its own compiled code runs */
		__u64 exact = sc->leaf ? HS_V8_PC_EXACT : 0;
		if (kind == pi->kind_baseline)
			emit(sc, pc, sfi, code | exact, HS_V8_FRAME_BASELINE);
		else if (kind > pi->kind_baseline)
			emit(sc, pc, sfi, code | exact, HS_V8_FRAME_OPTIMIZED);
		else
			emit(sc, pc, sfi, exact, HS_V8_FRAME_FUNCTION);
	} else if ((!pc || in_builtins(sc, pc)) && !(off & 1) && type_of(sc, sc->slots[1]) == pi->t_bytecode_array) {
		/* interpreted: run by the interpreter's builtins (or under a builtin they called);
		 * at the top, a bytecode handler keeps the offset in a register and writes it to
		 * the frame only before calls */
		__u64 o = off >> 32;
		if (sc->leaf && sc->r12 == sc->slots[1] && sc->r9 < 0x100000)
			o = sc->r9;
		emit(sc, pc, sfi, o, HS_V8_FRAME_INTERP);
	} else {
		if (sc->leaf && pc && in_builtins(sc, pc)) {
			/* a builtin with no frame of its own, called from compiled code: where in
			 * the caller is not known */
			emit(sc, pc, 0, 0, HS_V8_FRAME_BUILTIN);
			pc = 0;
		}
		/* its pc may run code compiled on the stack (a loop's), looked up in user space */
		emit(sc, pc, sfi, (sc->leaf ? HS_V8_PC_EXACT : 0) | (kind > pi->kind_baseline && kind != 0xff ? HS_V8_OPT_CODE : 0),
		     HS_V8_FRAME_FUNCTION);
	}
	if (sc->n <= SEEN_DEPTH && hs_rt_first_seen(sfi ^ code << 7 ^ (__u64)sc->s.head.pid * 0x9e3779b97f4a7c15ULL))
		sc->wake = 1;
	return 1;
}

/* The function being entered at the top, from %rdi (where a caller puts it), or the top marked
 * as not known. */
static __always_inline void entering(struct scratch *sc)
{
	__u32 t = type_of(sc, sc->rdi);
	__u64 sfi;

	if (t >= sc->pi.t_js_function_first && t <= sc->pi.t_js_function_last &&
	    type_of(sc, (sfi = hs_read_ptr(sc->rdi - sc->pi.heap_tag + sc->pi.fn_shared))) == sc->pi.t_sfi) {
		/* entered through the interpreter's entry: interpreted, at no bytecode yet */
		if (in_trampoline(sc, sc->pc))
			emit(sc, sc->pc, sfi, 0, HS_V8_FRAME_INTERP);
		else
			emit(sc, sc->pc, sfi, HS_V8_PC_EXACT, HS_V8_FRAME_FUNCTION);
	}
	else
		sc->s.head.flags |= HS_V8_TOP_STALE;
}

/* At the top, in V8's code, a frame being built or taken down: V8's prologues are push %rbp;
 * mov %rsp,%rbp; then the context, the function (from %rdi, where the caller put it) and the
 * argument count are pushed; epilogues end mov %rbp,%rsp; pop %rbp; ret. Returns 1 when it took
 * the frame (and stepped to its caller), 0 when the frame at fp is the code's own. */
static __always_inline int top_partial(struct scratch *sc)
{
	__u8 c[3] = {0};
	__u64 ret;
	int entry;

	if (bpf_probe_read_user(c, sizeof(c), (void *)sc->pc))
		return 0;
	/* a JavaScript function is entered by its code or the interpreter's entry, with itself in
	 * %rdi; other builtins push their frame pointer where they please, and take their frame
	 * from %rbp (theirs, or their caller's) */
	entry = in_jit(sc, sc->pc) || in_trampoline(sc, sc->pc);
	if (entry && (c[0] == 0x55 || (c[0] == 0x48 && c[1] == 0x89 && c[2] == 0xe5))) {
		/* before the push, or after it: the caller's frame pointer is still rbp */
		ret = hs_read_ptr(c[0] == 0x55 ? sc->sp : sc->sp + 8);
		entering(sc);
		sc->pc = ret;
		sc->sp += c[0] == 0x55 ? 8 : 16;
		return 1;
	}
	if (sc->sp > sc->fp - 24 && sc->sp <= sc->fp &&
	    ((hs_read_ptr(sc->fp - 8) & 1) || sc->sp > sc->fp - 8)) {
		/* the frame made, its slots not all pushed (or the epilogue's pop ahead): they may
		 * hold an earlier frame's; a typed frame's one slot is pushed (even), a JavaScript
		 * frame's function is still in %rdi */
		if (entry)
			entering(sc);
		else
			emit(sc, sc->pc, 0, 0, HS_V8_FRAME_BUILTIN);
		sc->pc = hs_read_ptr(sc->fp + 8);
		sc->sp = sc->fp + 16;
		sc->fp = hs_read_ptr(sc->fp);
		return 1;
	}
	if (c[0] == 0xc3 || c[0] == 0xc2) {
		/* after the pop: the frame is gone, the return address at the stack pointer */
		sc->s.head.flags |= HS_V8_TOP_STALE;
		sc->pc = hs_read_ptr(sc->sp);
		sc->sp += 8;
		return 1;
	}
	return 0;
}

#define SCAN_BYTES 16384 /* of the stack looked at when the frame pointers lead nowhere */

/* Native code that does not keep its frame pointer (a C library's) was sampled, so its chain led
 * nowhere: the stack is looked at from the sampled stack pointer for a return address into V8's
 * code (where V8 called native code, as its runtime functions). The native function it returned
 * from pushed its caller's frame pointer just below it: the V8 frame's. */
static __always_inline int scan_step(struct scratch *sc)
{
	if (sc->scan - sc->base >= SCAN_BYTES || bpf_probe_read_user(sc->words, sizeof(sc->words), (void *)sc->scan)) {
		sc->scan = 0;
		return 0;
	}
#pragma unroll
	for (int k = 1; k < 8; k++) {
		__u64 w = sc->words[k], a = sc->scan + 8 * k, fp = sc->words[k - 1], m;
		if (!(in_builtins(sc, w) || in_jit(sc, w)) || fp <= a || fp - a >= 65536 || (fp & 7))
			continue;
		/* the frame there must say it is one: an exit frame (V8 called native code), or a
		 * JavaScript frame (compiled code called a C function directly) */
		m = hs_read_ptr(fp - 8);
		if ((m & 1) ? !is_function(sc, hs_read_ptr(fp - 16))
			    : (m >> 1) != sc->pi.ft_exit && (m >> 1) != sc->pi.ft_builtin_exit)
			continue;
		sc->pc = w;
		sc->sp = a + 8;
		sc->fp = fp;
		sc->scan = 0;
		sc->leaf = 0;
		return 1;
	}
	sc->scan += 56; /* the last word again, as the one above the next's first */
	return 1;
}

static long frame_step(__u32 i, void *unused)
{
	struct scratch *sc = get_scratch();
	const struct hs_v8_walk_proc *pi;
	__u64 marker, pc;

	if (!sc || sc->done)
		return 1;
	pi = &sc->pi;
	if (sc->scan) {
		if (!scan_step(sc))
			goto end;
		return 0;
	}
	if (sc->n >= HS_V8_MAX_FRAMES - 2) {
		sc->s.head.flags |= HS_V8_TRUNCATED;
		return 1;
	}
	/* the chain must go up the stack, and not far; it ends where a thread began (0) */
	if (!sc->fp)
		goto done;
	if (sc->fp < sc->sp || sc->fp - sc->base > (64ULL << 20) || (sc->fp & 7))
		goto end;
	pc = sc->pc;
	if (!in_builtins(sc, pc) && !in_jit(sc, pc)) {
		if (sc->in_v8) {
			/* native code that V8's code returns to without an entry frame */
			emit(sc, pc, sc->sp, sc->fp, HS_V8_FRAME_NATIVE);
			sc->in_v8 = 0;
		}
		/* native frames keep frame pointers too: step over them */
		if (bpf_probe_read_user(&sc->slots[5], 16, (void *)sc->fp))
			goto end;
		up(sc);
		sc->leaf = 0;
		return 0;
	}
	if (sc->leaf && top_partial(sc)) {
		sc->leaf = 0;
		sc->in_v8 = 1;
		return 0;
	}
	if (bpf_probe_read_user(sc->slots, sizeof(sc->slots), (void *)(sc->fp - 40))) {
		sc->s.head.flags |= HS_V8_READ_FAULT;
		goto end;
	}
	sc->in_v8 = 1;
	marker = sc->slots[4];
	if (!(marker & 1)) {
		__u64 type = marker >> 1;
		emit(sc, pc, type, 0, HS_V8_FRAME_BUILTIN);
		up(sc);
		if (type == pi->ft_entry || type == pi->ft_construct_entry) {
			/* native code called JavaScript here */
			emit(sc, sc->pc, sc->sp, sc->fp, HS_V8_FRAME_NATIVE);
			sc->in_v8 = 0;
		}
	} else {
		if (!js_frame(sc, sc->slots[3], pc))
			goto end;
		up(sc);
	}
	sc->leaf = 0;
	return 0;
end:
	if (!sc->n && !sc->scanned) {
		/* the frame pointers led nowhere before any V8 frame: looked for on the stack,
		 * once (not where they led to the thread's beginning: a thread of native code) */
		sc->scanned = 1;
		sc->scan = sc->base;
		return 0;
	}
done:
	sc->done = 1;
	return 1;
}

SEC("perf_event")
int hs_v8_read_frames(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ip = ctx->regs.rip;
	__u32 pid = id >> 32;
	struct hs_v8_walk_proc *pi = bpf_map_lookup_elem(&procs, &pid);
	struct scratch *sc;
	struct pt_regs regs;

	if (!pi)
		return hs_rt_next(ctx);
	sc = get_scratch();
	if (!sc)
		return 1;
	sc->pi = *pi;
	if (ip >= 0x800000000000ULL) {
		/* in the kernel: the thread's user registers, as it entered it */
		struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		if (!u || bpf_probe_read_kernel(&regs, sizeof(regs), u))
			return 1;
	} else {
		regs = ctx->regs;
	}
	hs_rt_head_init(&sc->s.head);
	sc->pc = regs.rip;
	sc->sp = regs.rsp;
	sc->base = regs.rsp;
	sc->fp = regs.rbp;
	sc->r9 = regs.r9;
	sc->r12 = regs.r12;
	sc->rdi = regs.rdi;
	sc->leaf = 1;
	sc->n = 0;
	sc->wake = 0;
	sc->done = 0;
	sc->in_v8 = 0;
	sc->scan = 0;
	sc->scanned = 0;
	sc->last_fn = 0;
	sc->last_sfi = 0;
	bpf_loop(HS_V8_MAX_STEPS, frame_step, NULL, 0);
	/* no frame of V8's, or only the native registers to resume from */
	if (!sc->n) {
		return 1;
	}
	HS_RT_OUTPUT(sc, HS_V8_MAX_FRAMES);
	return 1;
}
