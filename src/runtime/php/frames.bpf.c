// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Reads the PHP frames of the sampled thread, at the moment of the sample.
 *
 * Attached to hotstack's sampling events, it runs in the overflow handler just before the
 * kernel writes the sample. For a process in the procs table (a PHP whose build user space
 * knows: non-thread-safe, so one executor_globals per process, run by its main thread), it
 * walks the engine's frames from executor_globals.current_execute_data through each frame's
 * prev_execute_data, innermost first, and writes one struct hs_ip_sample to the ring: the
 * function, its name and file pointers (to tell a function apart from one later at its
 * address), its line, and whether it starts a run of execute_ex or is a C function. User space
 * pairs it with the sample by thread and time, names the functions, and merges them into the
 * native stack. It lets every sample through, and hands those of other processes on to the next
 * runtime's reader. */
#include "runtime/frames-bpf.h"
#include "runtime/interp/ip-abi.h"
#include "runtime/php/php-abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* process id */
	__type(value, struct hs_php_proc_info);
} procs SEC(".maps");

#define EX_CHUNK 64
#define FN_CHUNK 256

/* the record being built, the process's description, and room to read a frame and a function
 * into; the loop's steps find it here (bpf_loop callbacks take no map pointers) */
struct scratch {
	struct hs_ip_sample s;
	struct hs_php_proc_info pi;
	__u8 ex[EX_CHUNK];
	__u8 fn[FN_CHUNK];
	__u64 at;       /* the frame the next step reads */
	__u64 r14, r15; /* the VM's frame and instruction registers at the sample (0: used) */
	__u32 n;        /* frames in s */
	__u32 wake;     /* a function not seen before is in s */
	/* the function of the frame before, read and checked: a recursion's frames share it */
	__u64 last_fn, last_aux, last_opcodes, last_op;
	__u32 last_type, last_count, last_line_start, last_line;
};

HS_RT_SCRATCH

/* Fields of a chunk read into scratch: offsets come from the map, so they are bounded here for
 * the verifier (user space refuses a layout whose fields lie past a chunk). */
static __always_inline __u64 ex_u64(const struct scratch *sc, __u32 off)
{
	return *(const __u64 *)(sc->ex + (off & (EX_CHUNK - 8)));
}

static __always_inline __u32 ex_u32(const struct scratch *sc, __u32 off)
{
	return *(const __u32 *)(sc->ex + (off & (EX_CHUNK - 4)));
}

static __always_inline __u64 fn_u64(const struct scratch *sc, __u32 off)
{
	return *(const __u64 *)(sc->fn + (off & (FN_CHUNK - 8)));
}

static __always_inline __u32 fn_u32(const struct scratch *sc, __u32 off)
{
	return *(const __u32 *)(sc->fn + (off & (FN_CHUNK - 4)));
}

/* Whether op is one of the last function's instructions. */
static __always_inline int op_in_function(const struct scratch *sc, __u64 op)
{
	return op >= sc->last_opcodes && op - sc->last_opcodes < (__u64)sc->last_count * sc->pi.off.op_size &&
	       !((op - sc->last_opcodes) & 7);
}

/* Reads the function of a frame into the last_* fields: 0, or -1 with the record's flags set. */
static __always_inline int read_function(struct scratch *sc, __u64 fn)
{
	const struct hs_php_offsets *off = &sc->pi.off;
	__u32 head = off->fn_read, user = off->op_read;
	__u64 name, file = 0;
	int whole;
	__u8 type;

	if (head < 8 || head > FN_CHUNK || user < head || user > FN_CHUNK)
		return -1;
	/* a C function's zend_internal_function is shorter than an op_array: read apart where the
	 * longer read fails */
	whole = !bpf_probe_read_user(sc->fn, user, (void *)fn);
	if (!whole && bpf_probe_read_user(sc->fn, head, (void *)fn)) {
		sc->s.head.flags |= HS_IP_READ_FAULT;
		return -1;
	}
	type = sc->fn[off->fn_type & (FN_CHUNK - 1)];
	if (type != HS_PHP_TYPE_INTERNAL && type != HS_PHP_TYPE_USER && type != HS_PHP_TYPE_EVAL) {
		sc->s.head.flags |= HS_IP_BAD_FRAME;
		return -1;
	}
	name = fn_u64(sc, off->fn_name);
	sc->last_opcodes = 0;
	sc->last_count = 0;
	sc->last_line_start = 0;
	if (type != HS_PHP_TYPE_INTERNAL) {
		if (!whole) {
			sc->s.head.flags |= HS_IP_READ_FAULT;
			return -1;
		}
		file = fn_u64(sc, off->op_filename);
		sc->last_opcodes = fn_u64(sc, off->op_opcodes);
		sc->last_count = fn_u32(sc, off->op_last);
		sc->last_line_start = fn_u32(sc, off->op_line_start);
	}
	sc->last_fn = fn;
	sc->last_type = type;
	sc->last_aux = hs_php_aux(name, file, type == HS_PHP_TYPE_INTERNAL ? fn : sc->last_opcodes);
	sc->last_op = 0;
	return 0;
}

/* One frame, innermost first: its function and line into s, and at moves to its caller. */
static long frame_step(__u32 i, void *unused)
{
	struct scratch *sc = get_scratch();
	const struct hs_php_offsets *off;
	__u32 read, info, n, line = 0, flags = 0;
	__u64 fn, op = 0, saved;

	if (!sc || !sc->at)
		return 1;
	off = &sc->pi.off;
	read = off->ex_read;
	if (read < 8 || read > EX_CHUNK)
		return 1;
	if (sc->at & 7) {
		sc->s.head.flags |= HS_IP_BAD_FRAME;
		return 1;
	}
	if (bpf_probe_read_user(sc->ex, read, (void *)sc->at)) {
		sc->s.head.flags |= HS_IP_READ_FAULT;
		return 1;
	}
	fn = ex_u64(sc, off->ex_func);
	if (!fn) {
		/* a frame being set up (the engine links it before it has a function): not one yet */
		sc->at = ex_u64(sc, off->ex_prev);
		return 0;
	}
	n = sc->n;
	if (n >= HS_IP_MAX_FRAMES) {
		sc->s.head.flags |= HS_IP_TRUNCATED;
		return 1;
	}
	if (fn != sc->last_fn && read_function(sc, fn))
		return 1;
	info = ex_u32(sc, off->ex_type_info);
	if (sc->last_type == HS_PHP_TYPE_INTERNAL) {
		flags = HS_IP_CFUNC;
	} else {
		/* The instruction the frame is at. The innermost frame of a run keeps it in the VM's
		 * register (r15, with its frame in r14: the HYBRID VM's global registers) and saves
		 * it to the frame only before a call or what may throw; a frame that called another
		 * saved it then. */
		saved = ex_u64(sc, off->ex_opline);
		if (sc->r14 && sc->at == sc->r14 && op_in_function(sc, sc->r15))
			op = sc->r15;
		else if (op_in_function(sc, saved))
			op = saved;
		if (sc->at == sc->r14)
			sc->r14 = 0;
		if (op && op == sc->last_op) {
			line = sc->last_line;
		} else if (op) {
			if (bpf_probe_read_user(&line, sizeof(line), (void *)(op + off->op_lineno)))
				line = 0;
			sc->last_op = op;
			sc->last_line = line;
		}
		if (!line) {
			line = sc->last_line_start;
			op = 0;
		}
		if (info & HS_PHP_CALL_TOP)
			flags = HS_IP_ENTRY;
	}
	n &= HS_IP_MAX_FRAMES - 1;
	sc->s.frames[n].fn = fn;
	sc->s.frames[n].aux = sc->last_aux;
	sc->s.frames[n].extra = op;
	sc->s.frames[n].line = line;
	sc->s.frames[n].flags = flags;
	if (n < SEEN_DEPTH) {
		/* (a closure's copies of its function are one function) */
		__u64 key = sc->last_aux ^ (__u64)sc->s.head.pid * 0x9e3779b97f4a7c15ULL;
		if (hs_rt_first_seen(key))
			sc->wake = 1;
	}
	sc->n = n + 1;
	sc->at = ex_u64(sc, off->ex_prev);
	return 0;
}

SEC("perf_event")
int hs_php_read_frames(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ex;
	__u32 pid = id >> 32;
	const struct hs_php_proc_info *pi = bpf_map_lookup_elem(&procs, &pid);
	struct scratch *sc;

	if (!pi)
		return hs_rt_next(ctx);
	/* PHP runs on the main thread only: another thread (an extension's) runs none of it */
	if ((__u32)id != pid)
		return 1;
	sc = get_scratch();
	if (!sc)
		return 1;
	sc->pi = *pi;
	ex = hs_read_ptr(sc->pi.current_ex);
	if (!ex)
		return 1; /* between requests, or not started */
	if (ctx->regs.rip >= 0x800000000000ULL) {
		/* in the kernel: the thread's user registers, as it entered it */
		struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		if (!u || bpf_probe_read_kernel(&sc->r14, sizeof(sc->r14), &u->r14) ||
		    bpf_probe_read_kernel(&sc->r15, sizeof(sc->r15), &u->r15))
			sc->r14 = sc->r15 = 0;
	} else {
		sc->r14 = ctx->regs.r14;
		sc->r15 = ctx->regs.r15;
	}
	hs_rt_head_init(&sc->s.head);
	sc->at = ex;
	sc->n = 0;
	sc->wake = 0;
	sc->last_fn = 0;
	sc->last_op = 0;
	bpf_loop(HS_IP_MAX_FRAMES + 64, frame_step, NULL, 0);
	if (sc->at && sc->n >= HS_IP_MAX_FRAMES)
		sc->s.head.flags |= HS_IP_TRUNCATED;
	if (!sc->n && !sc->s.head.flags)
		return 1;
	HS_RT_OUTPUT(sc, HS_IP_MAX_FRAMES);
	return 1;
}
