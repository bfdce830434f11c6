/* From events to a profile: the stage that ties model, unwinder and symbolizer together. It
 * takes perf_event records in time order (from live rings or a file), keeps the model of
 * processes current, turns each sample's call chain into locations (each unique address
 * resolved once) and adds it to a struct hs_profile. */
#ifndef HS_BUILDER_H
#define HS_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

#include "format/perf-event.h"
#include "model/model.h"
#include "profile/off-cpu.h"
#include "profile/profile.h"
#include "runtime/python/py-abi.h"
#include "runtime/runtime.h"
#include "symbolize/symbolizer.h"
#include "unwind/callchain.h"
#include "unwind/unwinder.h"

enum hs_unwind_mode {
	HS_UNWIND_FP = 0,  /* user frames from the kernel's frame-pointer walk */
	HS_UNWIND_DWARF,   /* user frames from the copied stack, with CFI only */
	HS_UNWIND_AUTO,    /* ... with CFI where it covers the PC, else a frame-pointer step */
};

struct hs_builder_opts {
	enum hs_unwind_mode unwind; /* for samples that carry user registers and stack */
	bool kernel;            /* keep kernel frames */
	bool user;              /* keep user frames */
	int32_t exclude_pid;    /* samples of this process are dropped (hotstack itself); 0 = none */
	uint32_t max_stack;     /* the kernel's cap on chain length, to spot truncated chains */
	bool keep_time;         /* keep every sample's timestamp instead of aggregating */
	bool no_demangle;       /* show symbols as they are in the symbol table */
	bool no_inline;         /* no DWARF: no inline frames, no source lines */
	/* samples with last-branch records in call-stack mode and a chain of their own (a
	 * frame-pointer chain, or user registers and stack): the records repair the leaf's caller
	 * where the walk lost it, rather than make the user chain (record -g fp or auto on a
	 * hardware event, where the CPU has LBR) */
	bool lbr_repair;
	const char *kallsyms;   /* NULL = /proc/kallsyms */
	bool kallsyms_running;  /* kallsyms is a copy of the running kernel's (symbolizer.h) */
	const char *symfs;      /* the recording's files are looked up under this directory first
	                         * (struct hs_model's symfs); NULL = none. Borrowed */
	/* Asked for a descriptor on the file mapped at [start, end) in pid, when a new file dso
	 * is first mapped; returns an fd the dso takes over, or -1. May be NULL. */
	int (*capture)(void *ctx, int32_t pid, uint64_t start, uint64_t end);
	void *capture_ctx;
	/* Asked for the build-id of a file mapped without one (a perf.data file's header lists
	 * them); returns its size, 0 when unknown. May be NULL. */
	size_t (*build_id)(void *ctx, const char *path, uint8_t *buf);
	void *build_id_ctx;
	/* JIT code. live: the processes are running and their jitdump files still being written
	 * (a recording), else they are read whole when their mapping is seen (a file). jit_timed:
	 * sample times are CLOCK_MONOTONIC, the clock jitdump files are written with, so that an
	 * address names the code that was there at the sample's time. tsc: converts files with
	 * architecture timestamps, when valid. */
	bool live;
	bool jit_timed;
	struct hs_tsc_conv tsc;
	/* the DWARF of a file is opened in a thread of its own, from its first frame on (and from
	 * its mapping on when the build_id callback knows it: a perf.data's header lists the
	 * files with samples); frames in it that come before it is ready are named at the end */
	bool prefetch_dwarf;
	/* the samples come from a tracepoint or a software event: their kernel chains start where
	 * the kernel fetched the caller's registers, and leading frames of the tracing machinery
	 * (perf_*, trace_*, __traceiter_*, ftrace_*), should a kernel give them, are left out */
	bool strip_tracing;
	/* The runtimes' frames (HS_RECORD_RT_STACK records) named from these stores, merged into
	 * the native stacks of their samples; NULL, or no store for a runtime: its records are
	 * ignored. python_internals: the interpreter's frames between Python frames are kept
	 * (runtime/python/merge.h); js_internals: V8's builtins and entry frames are kept */
	struct hs_rt_names *rt_names;
	bool python_internals, js_internals;
	/* HS_RT_BIT(id) of the scripting runtimes (Ruby, PHP, Perl) whose interpreter's frames
	 * between their frames are kept (profile/builder-interp.c) */
	unsigned internals;
};

/* A Python frame as the frame reader gives it, and its location. */
struct hs_py_frame_loc {
	int32_t pid;
	uint32_t firstlineno, instr, loc, ident;
	uint64_t code;
};

/* A thread's runtime stacks not yet paired with their samples: a few, since the stacks of the
 * next samples may come before a sample (they are put early in the stream). Slot i holds one
 * (a record of size[i] bytes of runtime id[i], in a buffer of cap[i]) when bit i of live is
 * set. */
#define HS_RT_PENDING 4
struct hs_rt_pending {
	unsigned live;
	uint8_t id[HS_RT_PENDING];
	uint32_t size[HS_RT_PENDING], cap[HS_RT_PENDING];
	struct hs_rt_head *rec[HS_RT_PENDING];
};

/* The pairing of runtime stacks with their samples (builder-runtime.c). */
struct hs_builder_rt {
	struct hs_u64map pending; /* tid -> index in threads + 1 */
	HS_VEC(struct hs_rt_pending *) threads;
};

/* A frame of a runtime whose reader walks segments of its own frames between native ones
 * (HotSpot, V8: builder-segments.c), as the reader gives it, and its location. */
struct hs_seg_frame_loc {
	int32_t pid;
	uint32_t loc;
	unsigned id; /* the runtime's */
	uint64_t a, b, c, x;
};

/* The native frames unwound from one of such a stack's native frames. */
struct hs_seg_run {
	uint32_t first, n; /* in native */
	uint8_t stop;      /* enum hs_stop */
};

/* The segmented runtimes' side of a builder (builder-segments.c). */
struct hs_builder_seg {
	const void *prepared;          /* the record whose native frames are in native, or NULL */
	HS_VEC(struct hs_cc_frame) native;
	HS_VEC(struct hs_seg_run) seg; /* one per native frame of prepared, in order */
	struct hs_callchain cc;        /* scratch */
	struct hs_u64map loc_ix;       /* hash of a frame -> index in locs + 1, probed on */
	HS_VEC(struct hs_seg_frame_loc) locs;
	HS_VEC(uint32_t) out; /* scratch */
};

/* A frame of a scripting runtime (Ruby, PHP, Perl) as its reader gives it, and its location. */
struct hs_ip_frame_loc {
	int32_t pid;
	uint32_t loc, line;
	unsigned id;
	uint64_t fn, aux;
};

/* The scripting runtimes' side of a builder (builder-interp.c); it shares the Python side's
 * scratch and its native frames' classes (keyed apart by runtime). */
struct hs_builder_ip {
	struct hs_u64map loc_ix; /* hash of a frame -> index in locs + 1, probed on */
	HS_VEC(struct hs_ip_frame_loc) locs;
};

/* The Python side of a builder (builder-python.c). */
struct hs_builder_py {
	struct hs_u64map loc_ix;   /* hash of a frame -> index in locs + 1, probed on */
	HS_VEC(struct hs_py_frame_loc) locs;
	struct hs_u64map classes;  /* location -> enum hs_py_native + 1 */
	HS_VEC(int32_t) merged;    /* scratch */
	HS_VEC(uint8_t) native;    /* scratch */
	HS_VEC(bool) entry;        /* scratch */
	HS_VEC(uint32_t) out;      /* scratch */
};

struct hs_builder_stats {
	uint64_t samples;        /* added to the profile */
	struct hs_rt_stats {
		uint64_t samples;  /* with the runtime's frames merged in */
		uint64_t unnamed;  /* its frames that could not be named (Python: code object unread) */
		uint64_t unpaired; /* samples of threads that had its stacks, without one */
		uint64_t orphans;  /* its stacks no sample took (the sample was lost) */
		uint64_t cut;      /* its stacks read in part (too deep, a frame unreadable) */
	} rt[HS_RT_SLOTS];       /* by runtime id */
	uint64_t jvm_frames[4];  /* Java frames named, by enum hs_jvm_comp of the frame's code */
	uint64_t jvm_inlined;    /* of them, inlined methods shown as frames of their own */
	uint64_t own_samples;    /* of hotstack itself, dropped */
	uint64_t empty_samples;  /* with no frame left to show (e.g. kernel-only with --no-kernel) */
	uint64_t lost;           /* samples the kernel could not write (LOST_SAMPLES) */
	uint64_t lost_records;   /* records of any kind it could not write (LOST): samples and
	                          * side-band, told apart only by the LOST_SAMPLES beside them */
	uint64_t bad_records;    /* records that did not parse */
	uint64_t unknown_records;
	uint64_t unmapped_frames; /* user addresses outside every known mapping */
	uint64_t first_time, last_time;
	uint64_t tracing_frames;     /* frames of the tracing machinery left out (strip_tracing) */
	uint64_t chain_hits;         /* samples whose call chain the chain memo knew */
	uint64_t lbr_repaired;       /* chains whose leaf's caller the branch records put back */
	struct hs_off_cpu_stats off_cpu; /* off-CPU time (hs_builder_add_off_cpu()) */
};

struct hs_loc_cache_entry {
	uint32_t mapping;
	uint32_t loc;
	uint64_t addr;
	uint32_t jit; /* the JIT code (struct hs_jit_code.id) named there, 0 for none */
	bool ret;
};

/* A location in JIT code that nothing named when its sample came: named at the end, when the
 * runtimes' perf maps (and every jitdump record) are known. */
struct hs_jit_pending {
	uint32_t loc;
	int32_t pid;
	uint64_t addr; /* the address looked up (a return address - 1) */
	uint64_t time; /* of the first sample in it */
};

/* A location in a file whose DWARF was still being opened at its first sample: named at the
 * end. */
struct hs_user_pending {
	uint32_t loc;
	struct hs_dso *dso;
	uint64_t file_offset; /* looked up (a return address - 1) */
	uint64_t addr;        /* the location's address */
	bool ret;
};

struct hs_builder {
	struct hs_builder_opts opts;
	struct hs_profile *p;
	struct hs_model model;
	struct hs_symbolizer sym;
	struct hs_unwinder unwinder;
	struct hs_callchain cc;
	HS_VEC(uint32_t) locs;
	HS_VEC(struct hs_loc_cache_entry) loc_cache;
	struct hs_index loc_ix;
	/* the last frames' locations by (pid, address), in front of the searches: a sample's
	 * frames are mostly those of the samples before it. Good while the model's mappings stay
	 * as they were (model.gen). */
	struct hs_frame_memo *frame_memo;
	/* the locations and stack of the last call chains by their frames, in front of both
	 * (see the chain memo in builder-private.h); chain: the current sample's entry, or NULL, and
	 * chain_leaf its leaf's location */
	struct hs_chain_memo *chain_memo;
	struct hs_chain_memo *chain;
	uint32_t chain_leaf;
	struct hs_u64map kernel_maps; /* module name string id -> profile mapping id */
	struct hs_u64map demangled;   /* symbol name pointer -> string id of its demangled form */
	struct hs_u64map exe_samples; /* dso id -> samples of processes running it as their program */
	HS_VEC(int64_t) values; /* one sample's values, reused */
	HS_VEC(struct hs_jit_pending) jit_pending;
	HS_VEC(struct hs_user_pending) user_pending;
	bool finished;
	struct hs_builder_stats stats;
	/* off-CPU time: the event whose samples are switch-outs (UINT32_MAX: none), the value
	 * index of "cpu" (0: none), the periods and on-CPU time per thread */
	uint32_t off_cpu_ev;
	uint32_t cpu_ix;
	struct hs_off_cpu off_cpu;
	struct hs_builder_rt rt;
	struct hs_builder_seg seg;
	struct hs_builder_py py;
	struct hs_builder_ip ip;
};

void hs_builder_init(struct hs_builder *b, const struct hs_builder_opts *opts);
/* Adds an event whose samples' periods make a value of the profile (after "samples"): the
 * first CPU-time event (cpu-clock, task-clock: periods in nanoseconds) is "cpu", others their
 * name. Returns the event's index for hs_builder_event_of(). Call before the first sample. */
uint32_t hs_builder_add_event(struct hs_builder *b, const char *name, bool time_based);
/* Off-CPU time (record --off-cpu): the samples of the event this returns are the stacks of
 * threads being switched out; each is added to the profile when the thread is switched in
 * again (PERF_RECORD_SWITCH, PERF_RECORD_SWITCH_CPU_WIDE), weighted by the nanoseconds it was
 * off the CPU, as value "off-cpu" (its "samples" value is 0), when that is at least min_ns.
 * Switch-outs of runnable threads (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT: preemption, yield)
 * are waiting for a CPU, not blocked: not off-CPU time. With a CPU-time event added before, a
 * "wall" value too: the CPU time of on-CPU samples, plus the time off the CPU, blocked or
 * waiting for a CPU (each under the stack it was switched out with), which adds up to each
 * thread's elapsed time. min_ns applies to both kinds of periods. Call after
 * hs_builder_add_event(), before the first sample. */
uint32_t hs_builder_add_off_cpu(struct hs_builder *b, uint64_t min_ns);
/* Threads still switched out when the recording ended at end_time (the events' clock): their
 * stacks are added with the time up to then. Call once, after the last event. */
void hs_builder_off_cpu_end(struct hs_builder *b, uint64_t end_time);
/* Releases everything, including the profile if it was not taken. */
void hs_builder_release(struct hs_builder *b);
/* Feeds one parsed event. Events must come in time order. A sample's period goes to the value
 * of event evidx (hs_builder_event: event 0). */
void hs_builder_event(struct hs_builder *b, const struct hs_perf_event *ev);
void hs_builder_event_of(struct hs_builder *b, const struct hs_perf_event *ev, uint32_t evidx);
/* Describes an already running process from /proc (before its first sample). Returns 0 or a
 * negative errno (-ESRCH: it is gone). */
int hs_builder_add_proc(struct hs_builder *b, int32_t pid);
/* The processes with frames in JIT code nothing has named yet, each once (the caller frees
 * pids->v): those a JVM could be asked to write a perf map for. */
struct hs_pid_list {
	int32_t *v; /* the layout of HS_VEC(int32_t) */
	size_t n, cap;
};
void hs_builder_jit_pids(const struct hs_builder *b, struct hs_pid_list *pids);
/* Ends the building: names the frames in JIT code that were left unnamed when their samples
 * came (deferred JIT naming): every jitdump file read to its end, the perf map of each process
 * with such frames read (see hs_jit_perfmap_read()), and each location named, as at its first
 * sample's time, from the jitdump, else from the perf map. Locations keep their ids: only their
 * lines change. hs_builder_take() does it when it was not done. */
void hs_builder_finish(struct hs_builder *b);
/* Hands the finished profile over to the caller (who frees it). */
struct hs_profile *hs_builder_take(struct hs_builder *b);

/* Where a period of the building began: the profile's sample values then (empty: its start). */
struct hs_builder_mark {
	HS_VEC(int64_t) values;
};
/* A copy of the profile so far (the caller frees it) with only what the samples since mark
 * added, as hs_builder_take() hands it on: names left pending looked up now, only what those
 * samples refer to, in the order they first do. With advance, mark moves to now: the next
 * copy holds what comes after. The building goes on (after hs_builder_finish(), the copy
 * has the names it gave). NULL once the profile was taken. The copy's time_nanos and
 * duration_nanos are the caller's to set. */
struct hs_profile *hs_builder_copy(struct hs_builder *b, struct hs_builder_mark *mark, bool advance);
/* The profile so far as it is, without a copy, names left pending looked up now: valid until
 * the next event, and besides what the samples refer to it may hold what no sample does (names
 * looked up late, left behind). What the caller changes it puts back. NULL once taken. */
struct hs_profile *hs_builder_profile_now(struct hs_builder *b);
/* Moves mark to now without a copy: the next copy from it holds what comes after. */
void hs_builder_mark_now(const struct hs_builder *b, struct hs_builder_mark *mark);
void hs_builder_mark_release(struct hs_builder_mark *mark);
/* Starts the profile afresh (after the copy of a period): an empty one with the same values,
 * the processes that exited forgotten, and the files no process maps any more (their symbols,
 * DWARF and unwinding tables), so that what a recording of months holds is its last period's
 * and its live processes'. What is kept across (the live processes' mappings, their files'
 * symbols and unwinding tables) is what costs to find again. Not with off-CPU time
 * (threads switched out hold stacks of the profile): returns false, and nothing changes. */
bool hs_builder_rebase(struct hs_builder *b);
/* The pages of the files read in place (DWARF, symbol tables, unwinding tables from the cache,
 * the kernel's symbols) given back: they stay in the page cache, and the next lookups bring in
 * what they read. Done at each rebase; for a caller that bounds its resident memory. */
void hs_builder_drop_pages(struct hs_builder *b);


/* What the building counted, for a person (record's summary): plain numbers copied out of the
 * builder and the stages it drives, so that a reader needs none of their structures. */
struct hs_builder_summary {
	struct hs_builder_stats stats;
	/* files read for names */
	uint64_t files_loaded, files_unreadable, files_mismatched;
	uint64_t dwarf_restarts; /* files' DWARF begun again to stay within its memory budget */
	/* user stacks unwound: frames, and the steps by CFI and by frame pointer */
	uint64_t frames, cfi_steps, fp_steps;
	/* files' unwinding tables compiled, and taken from the user's cache */
	uint64_t tables_built, tables_cached;
	/* frame-pointer steps through a frame's own record, and those refused */
	uint64_t fp_own_records, fp_outside_stack, fp_not_code, fp_not_after_call;
	/* JIT code: jitdump files and their records, unwinding tables compiled from them, perf
	 * maps, and the addresses named from each (or not named) */
	uint64_t jit_files, jit_code_loads, jit_code_moves, jit_tables;
	uint64_t jit_perf_maps, jit_perf_map_entries;
	uint64_t jit_named_jitdump, jit_named_perf_map, jit_unnamed;
	/* what reading JIT files found, one line each: borrowed, until hs_builder_release() */
	char *const *jit_warnings;
	size_t jit_nwarnings;
};
void hs_builder_summary(const struct hs_builder *b, struct hs_builder_summary *ret);

#endif
