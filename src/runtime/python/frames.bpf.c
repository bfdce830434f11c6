// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Reads the Python frames of the sampled thread, at the moment of the sample.
 *
 * Attached to hotstack's sampling events, it runs in the overflow handler just before the
 * kernel writes the sample. For a process in the procs table (a CPython whose version user
 * space knows), it finds the sampled thread's PyThreadState (the one whose thread_id is the
 * thread's pthread_t, which is its fs base), walks the frames innermost first, and writes one
 * struct hs_py_sample to the ring: code object, instruction offset and entry mark per frame.
 * User space pairs it with the sample by thread and time, and names the code objects. It lets
 * every sample through, and hands those of other processes on to the next runtime's reader. The walk is the one src/python/walk.c does in user space; the two are
 * kept in step. */
#include "runtime/frames-bpf.h"
#include "runtime/python/py-abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* process id */
	__type(value, struct hs_py_proc_info);
} procs SEC(".maps");

struct thread_cache {
	__u64 fsbase, tstate;
};

/* The maps are allocated whole when the program loads, and that was most of a recording's
 * start: sizes for what a machine runs at once, the least recently used dropped past them. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* thread id */
	__type(value, struct thread_cache);
} threads SEC(".maps");

/* the record being built, the process's description, and room to read a frame and a code
 * object into; the loops' steps find it here (bpf_loop callbacks take no map pointers) */
#define CHUNK 128
struct scratch {
	struct hs_py_sample s;
	struct hs_py_proc_info pi;
	__u8 frame[CHUNK];
	__u8 code[CHUNK];
	__u64 at;     /* the frame or thread state the next step reads */
	__u64 fsbase; /* the sampled thread's */
	__u32 n;      /* frames in s */
	__u32 wake;   /* a code object not seen before is in s */
	/* the code object of the frame before, read and checked: a recursion's frames share it */
	__u64 last_code, last_name, last_file;
	__u32 last_line;
};

HS_RT_SCRATCH

/* A field of a chunk read into scratch: offsets come from the map, so they are bounded here
 * for the verifier (a layout whose fields lie past CHUNK is refused by user space). */
static __always_inline __u64 chunk_u64(const __u8 *chunk, __u32 off)
{
	return *(const __u64 *)(chunk + (off & (CHUNK - 8)));
}

static __always_inline __u32 chunk_u32(const __u8 *chunk, __u32 off)
{
	return *(const __u32 *)(chunk + (off & (CHUNK - 4)));
}

static __always_inline __u8 chunk_u8(const __u8 *chunk, __u32 off)
{
	return chunk[off & (CHUNK - 1)];
}

/* One thread state of the interpreter's list: stops at the sampled thread's (left in at). */
static long tstate_step(__u32 i, void *unused)
{
	struct scratch *sc = get_scratch();

	if (!sc || !sc->at)
		return 1;
	if (hs_read_ptr(sc->at + sc->pi.off.tstate_thread_id) == sc->fsbase)
		return 1;
	sc->at = hs_read_ptr(sc->at + sc->pi.off.tstate_next);
	return 0;
}

/* The sampled thread's PyThreadState: cached per thread, checked against its thread id. */
static __always_inline __u64 find_tstate(struct scratch *sc, __u32 tid)
{
	struct thread_cache *tc = bpf_map_lookup_elem(&threads, &tid), fresh;
	__u64 interp;

	if (tc && tc->fsbase == sc->fsbase && hs_read_ptr(tc->tstate + sc->pi.off.tstate_thread_id) == sc->fsbase)
		return tc->tstate;
	interp = hs_read_ptr(sc->pi.runtime + sc->pi.off.runtime_interp_head);
	if (!interp)
		return 0;
	sc->at = hs_read_ptr(interp + sc->pi.off.interp_tstate_head);
	bpf_loop(HS_PY_MAX_THREADS, tstate_step, NULL, 0);
	if (!sc->at || hs_read_ptr(sc->at + sc->pi.off.tstate_thread_id) != sc->fsbase)
		return 0;
	fresh.fsbase = sc->fsbase;
	fresh.tstate = sc->at;
	bpf_map_update_elem(&threads, &tid, &fresh, BPF_ANY);
	return fresh.tstate;
}

/* One frame, innermost first: its code object and instruction into s, and at moves to the
 * frame that called it. */
static long frame_step(__u32 i, void *unused)
{
	struct scratch *sc = get_scratch();
	const struct hs_py_offsets *off;
	__u32 frame_len, code_len, instr = 0, line, n;
	__u64 code, instr_ptr;

	if (!sc || !sc->at)
		return 1;
	off = &sc->pi.off;
	frame_len = sc->pi.frame_read;
	code_len = sc->pi.code_read;
	if (frame_len < 8 || frame_len > CHUNK || code_len < 16 || code_len > CHUNK)
		return 1;
	if (bpf_probe_read_user(sc->frame, frame_len, (void *)sc->at)) {
		sc->s.head.flags |= HS_PY_READ_FAULT;
		return 1;
	}
	n = sc->n;
	if (off->entry == HS_PY_ENTRY_SHIM && chunk_u8(sc->frame, off->frame_owner) == off->owner_cstack) {
		/* the start of a run of the eval loop: the frame inside it is its first */
		if (n > 0)
			sc->s.frames[(n - 1) & (HS_PY_MAX_FRAMES - 1)].line_entry |= HS_PY_ENTRY_BIT;
		sc->at = chunk_u64(sc->frame, off->frame_back);
		return 0;
	}
	if (n >= HS_PY_MAX_FRAMES) {
		sc->s.head.flags |= HS_PY_TRUNCATED;
		return 1;
	}
	code = chunk_u64(sc->frame, off->frame_code);
	if (!code || code != sc->last_code) {
		if (!code || bpf_probe_read_user(sc->code, code_len, (void *)code)) {
			sc->s.head.flags |= HS_PY_READ_FAULT;
			return 1;
		}
		if (chunk_u64(sc->code, 8) != sc->pi.code_type) {
			sc->s.head.flags |= HS_PY_BAD_CODE;
			return 1;
		}
		sc->last_code = code;
		sc->last_name = chunk_u64(sc->code, off->code_name);
		sc->last_file = chunk_u64(sc->code, off->code_filename);
		sc->last_line = chunk_u32(sc->code, off->code_firstlineno) & ~HS_PY_ENTRY_BIT;
	}
	if (off->instr == HS_PY_INSTR_PTR) {
		instr_ptr = chunk_u64(sc->frame, off->frame_instr);
		if (instr_ptr > code + off->code_code && instr_ptr - code - off->code_code < 0x7fffffff)
			instr = (__u32)(instr_ptr - code - off->code_code);
	} else {
		instr = chunk_u32(sc->frame, off->frame_instr);
		if ((__s32)instr < 0)
			instr = 0;
		else if (off->instr == HS_PY_INSTR_LASTI_UNITS)
			instr *= 2;
	}
	line = sc->last_line;
	if (off->entry == HS_PY_ENTRY_EVERY ||
	    (off->entry == HS_PY_ENTRY_FLAG && chunk_u8(sc->frame, off->frame_owner)))
		line |= HS_PY_ENTRY_BIT;
	n &= HS_PY_MAX_FRAMES - 1;
	sc->s.frames[n].code = code;
	sc->s.frames[n].instr = instr;
	sc->s.frames[n].line_entry = line;
	sc->s.frames[n].name = sc->last_name;
	sc->s.frames[n].file = sc->last_file;
	if (n < SEEN_DEPTH) {
		__u64 key = code ^ (__u64)hs_py_code_ident(sc->s.frames[n].name, sc->s.frames[n].file) << 32 ^
			    (__u64)sc->s.head.pid * 0x9e3779b97f4a7c15ULL;
		if (hs_rt_first_seen(key))
			sc->wake = 1;
	}
	sc->n = n + 1;
	sc->at = chunk_u64(sc->frame, off->frame_back);
	return 0;
}

SEC("perf_event")
int hs_py_read_frames(struct bpf_perf_event_data *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	const struct hs_py_proc_info *pi = bpf_map_lookup_elem(&procs, &pid);
	struct scratch *sc;
	__u64 tstate, frame;

	if (!pi)
		return hs_rt_next(ctx);
	sc = get_scratch();
	if (!sc)
		return 1;
	sc->pi = *pi;
	sc->fsbase = hs_thread_fsbase();
	if (!sc->fsbase)
		return 1;
	tstate = find_tstate(sc, (__u32)bpf_get_current_pid_tgid());
	if (!tstate)
		return 1; /* a thread that never ran Python: nothing to add */
	frame = hs_read_ptr(tstate + sc->pi.off.tstate_frame);
	if (sc->pi.off.cframe_current_frame != HS_PY_NONE && frame)
		frame = hs_read_ptr(frame + sc->pi.off.cframe_current_frame);
	if (!frame)
		return 1;
	hs_rt_head_init(&sc->s.head);
	sc->s.version = sc->pi.version;
	sc->at = frame;
	sc->n = 0;
	sc->last_code = 0;
	sc->wake = 0;
	bpf_loop(HS_PY_MAX_FRAMES + 32, frame_step, NULL, 0);
	if (sc->at && sc->n >= HS_PY_MAX_FRAMES)
		sc->s.head.flags |= HS_PY_TRUNCATED;
	if (sc->pi.off.entry == HS_PY_ENTRY_SHIM && !sc->at && sc->n &&
	    !(sc->s.frames[(sc->n - 1) & (HS_PY_MAX_FRAMES - 1)].line_entry & HS_PY_ENTRY_BIT))
		sc->s.head.flags |= HS_PY_UNANCHORED;
	if (!sc->n && !sc->s.head.flags)
		return 1;
	HS_RT_OUTPUT(sc, HS_PY_MAX_FRAMES);
	return 1;
}
