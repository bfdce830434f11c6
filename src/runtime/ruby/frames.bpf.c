// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Reads the Ruby frames of the sampled thread, at the moment of the sample.
 *
 * Attached to hotstack's sampling events, it runs in the overflow handler just before the
 * kernel writes the sample. For a process in the procs table (a CRuby 3.1 that user space
 * checked), it finds the sampled thread's execution context through the interpreter's
 * thread-local ruby_current_ec, checks that it is this thread's, and walks its control frames
 * from the running one to the thread's first, keeping those a Ruby backtrace shows: frames of
 * Ruby code (an iseq and a pc) and of C methods. It writes one struct hs_ip_sample (rb-abi.h
 * says what the words of a frame hold), lets every sample through, and hands those of other
 * processes on to the next runtime's reader. */
#include "runtime/frames-bpf.h"
#include "runtime/interp/ip-abi.h"
#include "runtime/ruby/rb-abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* process id */
	__type(value, struct hs_rb_proc_info);
} procs SEC(".maps");

/* Where a thread's ruby_current_ec is: found through its DTV once. The block of a library
 * loaded with the program is in static TLS and never moves while the thread lives. */
struct thread_cache {
	__u64 fsbase, slot;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* thread id */
	__type(value, struct thread_cache);
} threads SEC(".maps");

/* the record being built and the walk's state; the loop's steps find it here (bpf_loop
 * callbacks take no map pointers) */
#define CFP_BATCH 8 /* control frames read at once: they lie next to each other */
struct scratch {
	struct hs_ip_sample s;
	__u64 cfps[CFP_BATCH * HS_RB_CFP_SIZE / 8];
	__u64 cfps_at; /* the address of cfps[0] */
	__u32 cfps_n;  /* frames in cfps */
	__u64 at;      /* the control frame the next step reads */
	__u64 stop;    /* the thread's first frame (a dummy, never shown) */
	__u32 n;       /* frames in s */
	__u32 wake;    /* a function not seen before is in s */
	/* the iseq of the frame before, read and checked (a recursion's frames share it), and
	 * the method entry last checked, with its defined class and definition's serial */
	__u64 last_iseq, last_hash;
	__u64 last_me, last_cls, last_def, last_serial;
};

HS_RT_SCRATCH

#define STEPS (HS_IP_MAX_FRAMES + 256) /* frames looked at: IFUNC and dummy frames are skipped */

/* Whether me is a method entry: then it is sc's last_me, with its defined class and its
 * definition and the definition's serial number in last_cls, last_def and last_serial. */
static __always_inline int is_method_entry(struct scratch *sc, __u64 me)
{
	__u64 m[3];

	if (me && me == sc->last_me)
		return 1;
	if (!me || (me & 7) || bpf_probe_read_user(m, sizeof(m), (void *)me))
		return 0;
	if ((m[0] & HS_RB_T_MASK) != HS_RB_T_IMEMO || HS_RB_IMEMO_KIND(m[0]) != HS_RB_IMEMO_MENT)
		return 0;
	sc->last_me = me;
	sc->last_cls = m[1];
	sc->last_def = m[2];
	sc->last_serial = hs_read_ptr(m[2] + HS_RB_DEF_SERIAL);
	return 1;
}

/* The method entry of a frame whose environment is env (ep[-2], ep[-1], ep[0] as read): the
 * first found in the chain of environments up to the method's own, as the VM finds it
 * (rb_vm_frame_method_entry), or 0. */
static __always_inline __u64 method_entry(struct scratch *sc, __u64 env[3])
{
	__u64 me = env[0], spec = env[1], flags = env[2], e;

	for (int k = 0; k < HS_RB_EP_CHAIN; k++) {
		if (is_method_entry(sc, me))
			return me;
		if (flags & HS_RB_ENV_LOCAL) {
			/* a method that uses $~ or $_ keeps them here, its entry inside */
			__u64 m[2];
			if (!me || (me & 7) || bpf_probe_read_user(m, sizeof(m), (void *)me) ||
			    (m[0] & HS_RB_T_MASK) != HS_RB_T_IMEMO || HS_RB_IMEMO_KIND(m[0]) != HS_RB_IMEMO_SVAR)
				return 0;
			me = hs_read_ptr(me + HS_RB_SVAR_ME);
			return is_method_entry(sc, me) ? me : 0;
		}
		e = spec & ~3ULL;
		if (!e || bpf_probe_read_user(env, 24, (void *)(e - 16)))
			return 0;
		me = env[0];
		spec = env[1];
		flags = env[2];
	}
	return 0;
}

/* Marks frame n of s as the outermost of its run of the interpreter's loop. */
static __always_inline void mark_entry(struct scratch *sc, __u32 n)
{
	sc->s.frames[n & (HS_IP_MAX_FRAMES - 1)].flags |= HS_IP_ENTRY;
}

/* One control frame, innermost first: kept in s when a backtrace would show it, and at moves
 * to its caller's. */
static long frame_step(__u32 i, void *unused)
{
	struct scratch *sc = get_scratch();
	__u64 env[3], pc, iseq, ep, fn, aux, extra = 0, left;
	__u32 n, magic, flags, ident, k, idx;

	if (!sc || sc->at >= sc->stop)
		return 1;
	n = sc->n;
	if (n >= HS_IP_MAX_FRAMES) {
		sc->s.head.flags |= HS_IP_TRUNCATED;
		return 1;
	}
	if (sc->at < sc->cfps_at || sc->at - sc->cfps_at >= (__u64)sc->cfps_n * HS_RB_CFP_SIZE) {
		left = (sc->stop - sc->at) / HS_RB_CFP_SIZE;
		if (left == 0)
			return 1;
		/* 1 to CFP_BATCH frames, bounded so for the verifier */
		k = ((left < CFP_BATCH ? (__u32)left : CFP_BATCH) - 1) & (CFP_BATCH - 1);
		k += 1;
		if (bpf_probe_read_user(sc->cfps, k * HS_RB_CFP_SIZE, (void *)sc->at)) {
			sc->s.head.flags |= HS_IP_READ_FAULT;
			return 1;
		}
		sc->cfps_at = sc->at;
		sc->cfps_n = k;
	}
	idx = (__u32)((sc->at - sc->cfps_at) / HS_RB_CFP_SIZE) & (CFP_BATCH - 1);
	sc->at += HS_RB_CFP_SIZE;
	pc = sc->cfps[idx * 8 + HS_RB_CFP_PC / 8];
	iseq = sc->cfps[idx * 8 + HS_RB_CFP_ISEQ / 8];
	ep = sc->cfps[idx * 8 + HS_RB_CFP_EP / 8];
	if (!ep || (ep & 7) || bpf_probe_read_user(env, sizeof(env), (void *)(ep - 16))) {
		sc->s.head.flags |= HS_IP_READ_FAULT;
		return 1;
	}
	magic = (__u32)env[2] & HS_RB_ENV_MAGIC_MASK;
	flags = env[2] & HS_RB_FRAME_FINISH ? HS_IP_ENTRY : 0;
	if (magic == HS_RB_MAGIC_CFUNC) {
		fn = env[0];
		if (!is_method_entry(sc, fn) || (fn | sc->last_def) > HS_RB_ADDR_MASK) {
			sc->s.head.flags |= HS_IP_BAD_FRAME;
			return 1;
		}
		ident = hs_rb_ident(sc->last_cls, sc->last_serial);
		fn |= HS_RB_IDENT_FN(ident);
		aux = sc->last_def | HS_RB_IDENT_AUX(ident);
		flags |= HS_IP_CFUNC;
	} else if (iseq && pc) {
		if (iseq != sc->last_iseq) {
			__u64 q[3], loc[4];
			if (iseq > HS_RB_ADDR_MASK || (iseq & 7) || bpf_probe_read_user(q, sizeof(q), (void *)iseq)) {
				sc->s.head.flags |= HS_IP_READ_FAULT;
				return 1;
			}
			if ((q[0] & HS_RB_T_MASK) != HS_RB_T_IMEMO || HS_RB_IMEMO_KIND(q[0]) != HS_RB_IMEMO_ISEQ ||
			    bpf_probe_read_user(loc, sizeof(loc), (void *)(q[2] + HS_RB_BODY_PATHOBJ))) {
				sc->s.head.flags |= HS_IP_BAD_FRAME;
				return 1;
			}
			sc->last_iseq = iseq;
			/* pathobj, base_label, label, first_lineno */
			sc->last_hash = hs_rb_iseq_hash(q[2], loc[0], loc[2], loc[3]);
		}
		aux = method_entry(sc, env);
		if (aux > HS_RB_ADDR_MASK)
			aux = 0;
		ident = hs_rb_ident(sc->last_hash, aux ? sc->last_serial : 0);
		fn = iseq | HS_RB_IDENT_FN(ident);
		aux |= HS_RB_IDENT_AUX(ident);
		extra = pc;
	} else {
		/* an IFUNC (a block made in C) or a dummy frame: not shown, as in a backtrace; the
		 * run it began starts at the frame inside it */
		if (flags && n > 0)
			mark_entry(sc, n - 1);
		return 0;
	}
	n &= HS_IP_MAX_FRAMES - 1;
	sc->s.frames[n].fn = fn;
	sc->s.frames[n].aux = aux;
	sc->s.frames[n].extra = extra;
	sc->s.frames[n].line = 0;
	sc->s.frames[n].flags = flags;
	if (n < SEEN_DEPTH && hs_rt_first_seen(fn ^ aux * 0x9e3779b97f4a7c15ULL ^ (__u64)sc->s.head.pid << 48))
		sc->wake = 1;
	sc->n = n + 1;
	return 0;
}

/* The address of the sampled thread's ruby_current_ec: cached per thread, found through the
 * thread's DTV (fs:8, 16-byte entries by module id) when its fs base is new. */
static __always_inline __u64 ec_slot(const struct hs_rb_proc_info *pi, __u32 tid, __u64 fsbase)
{
	struct thread_cache *tc = bpf_map_lookup_elem(&threads, &tid), fresh;
	__u64 dtv, block;

	if (tc && tc->fsbase == fsbase)
		return tc->slot;
	if (!pi->tls_modid || pi->tls_modid > 4096)
		return 0;
	dtv = hs_read_ptr(fsbase + 8);
	block = dtv ? hs_read_ptr(dtv + 16 * pi->tls_modid) : 0;
	if (!block || block == ~0ULL) /* not allocated in this thread (yet) */
		return 0;
	fresh.fsbase = fsbase;
	fresh.slot = block + pi->tls_off;
	bpf_map_update_elem(&threads, &tid, &fresh, BPF_ANY);
	return fresh.slot;
}

SEC("perf_event")
int hs_rb_read_frames(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	const struct hs_rb_proc_info *pi = bpf_map_lookup_elem(&procs, &pid);
	struct scratch *sc;
	__u64 fsbase, slot, ec, e[7], end, cfp;

	if (!pi)
		return hs_rt_next(ctx);
	sc = get_scratch();
	fsbase = hs_thread_fsbase();
	if (!sc || !fsbase)
		return 1;
	slot = ec_slot(pi, tid, fsbase);
	ec = slot ? hs_read_ptr(slot) : 0;
	if (!ec || bpf_probe_read_user(e, sizeof(e), (void *)ec))
		return 1; /* a thread that never ran Ruby: nothing to add */
	/* the context must be this thread's: a cached slot of a thread gone, whose fs base a new
	 * one got, is read again */
	if (hs_read_ptr(e[HS_RB_EC_THREAD / 8] + HS_RB_TH_THREAD_ID) != fsbase) {
		bpf_map_delete_elem(&threads, &tid);
		return 1;
	}
	end = e[HS_RB_EC_VM_STACK / 8] + e[HS_RB_EC_VM_STACK_SIZE / 8] * 8;
	cfp = e[HS_RB_EC_CFP / 8];
	if (!e[HS_RB_EC_VM_STACK / 8] || e[HS_RB_EC_VM_STACK_SIZE / 8] > (1 << 24) || cfp < e[HS_RB_EC_VM_STACK / 8] ||
	    cfp >= end || (end - cfp) % HS_RB_CFP_SIZE)
		return 1;
	hs_rt_head_init(&sc->s.head);
	sc->at = cfp;
	sc->stop = end - HS_RB_CFP_SIZE;
	sc->n = 0;
	sc->wake = 0;
	sc->last_iseq = 0;
	sc->last_me = 0;
	sc->cfps_at = 0;
	sc->cfps_n = 0;
	bpf_loop(STEPS, frame_step, NULL, 0);
	if (sc->at < sc->stop && !sc->s.head.flags)
		sc->s.head.flags |= HS_IP_TRUNCATED;
	if (!sc->n && !sc->s.head.flags)
		return 1;
	HS_RT_OUTPUT(sc, HS_IP_MAX_FRAMES);
	return 1;
}
