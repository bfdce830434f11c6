/* Between the files of a recording: session.c (its lifecycle, the reading loop), open.c (the
 * events: perf_event_open per CPU and thread, their rings) and targets.c (the command, the
 * processes attached to). Not for use outside src/record/. */
#ifndef HS_SESSION_PRIVATE_H
#define HS_SESSION_PRIVATE_H

#include "record/session.h"

/* Fills err; returns code. */
int hs_record_fail(struct hs_error *err, int code, enum hs_record_failure what, const char *fmt, ...)
	HS_PRINTF(4, 5);

/* open.c */
/* The online CPUs into r->cpus (only those of r->o.cpu_list when it is set). */
int hs_record_read_cpus(struct hs_record *r, struct hs_error *err);
uint32_t hs_record_max_stack(void);              /* kernel.perf_event_max_stack */
void hs_record_setup_attr(struct hs_record *r);  /* r->attr (and attr_off_cpu) from r->o */
/* Opens the events for pid (-1: every process) on every CPU. Returns 0, -ESRCH with err
 * untouched when the thread is gone, or another negative errno with err filled in. */
int hs_record_open_for(struct hs_record *r, pid_t pid, struct hs_error *err);
void hs_record_measure_tsc(struct hs_record *r); /* r->tsc, once the rings exist */

/* rights.c */
/* perf_event_open() refused (code -EACCES or -EPERM) an event on pid (-1: every process of a
 * CPU): why, as far as can be told, in err (HS_RECORD_NOT_YOURS, _NO_PERMISSION_CPU,
 * _NO_PERMISSION or _DENIED). Returns code. */
int hs_record_denied(int code, int32_t pid, struct hs_error *err);
/* -m over what this user may lock (hs_record_ring_limit()), refused before anything is opened;
 * 0 otherwise. Without -m, the default ring made as small as fits. */
int hs_record_ring_check(struct hs_record *r, struct hs_error *err);
/* A ring of pages data pages the kernel refused to map (EPERM): the limits in err. */
int hs_record_ring_denied(const struct hs_record *r, size_t pages, struct hs_error *err);

/* lost.c */
/* Whether this kernel counts each event's lost records (PERF_FORMAT_LOST, Linux 6.0). */
bool hs_record_lost_countable(void);
/* On the main thread, after records were handed on: where the rings lost records since the
 * last call (or at the end, final), the events' counts read and the samples lost since handed
 * to the sink as a PERF_RECORD_LOST_SAMPLES event. */
void hs_record_count_lost(struct hs_record *r, bool final);

/* targets.c */
int hs_record_no_such_process(struct hs_error *err, int32_t pid);
int hs_record_open_targets(struct hs_record *r, struct hs_error *err);
/* Lets the command exec (its events enabled there); fails when it could not be run. */
int hs_record_release_command(struct hs_record *r, struct hs_error *err);
void hs_record_reap_child(struct hs_record *r);
/* The processes attached to with -p or -t, looked at for runtimes before their events are
 * enabled (a reader loaded then reads their first samples too). */
void hs_record_probe_targets(struct hs_record *r);
/* Hands the sink what describes the processes already running (-p, -a). */
void hs_record_describe_running(struct hs_record *r);
void hs_record_end_command(struct hs_record *r);
/* -t alone: whether every thread asked for has exited. */
bool hs_record_threads_gone(const struct hs_record *r);

/* held.c: records left in their rings. On the reader thread: a record scanned at pos in ring
 * (waiting: left there for the main thread; else copied or dropped, its space free), returning
 * its reference; the records waiting copied out when the ring is over 5/8 full. On the main
 * thread: the record a reference names (a copy in r->take_buf, or *owned, a spilled copy to
 * free; NULL when it cannot be read), its space given back. */
uint64_t hs_held_add(struct hs_record *r, size_t ring, uint64_t pos, uint32_t size, bool waiting);
void hs_held_spill_if_full(struct hs_record *r, size_t ring);
struct perf_event_header *hs_held_take(struct hs_record *r, uint64_t ref, bool *owned);
void hs_held_release(struct hs_record_ring *g);
/* On the main thread, a sample with a user stack still in its ring: parsed where it is into *ev,
 * its space kept while it is handed on, until ev's stack_done hook copies the rest or
 * hs_held_finish() (after the sink). False for any other record (hs_held_take() it). */
bool hs_held_take_in_place(struct hs_record *r, uint64_t ref, struct hs_perf_event *ev);
void hs_held_finish(struct hs_record *r);

/* runtimes.c */
/* A runtime's frame reader is loaded by the first hs_record_rt_probe() or hs_record_rt_event()
 * (on either thread) that finds a process of that runtime it can read: until then the events
 * run a dispatcher that does nothing. */
void hs_record_rt_open(struct hs_record *r); /* the dispatcher, or why there is none */
void hs_record_rt_close(struct hs_record *r);
void hs_record_rt_attach(struct hs_record *r, int fd); /* to a sampling event just opened */
/* What wakes the reader thread when a frame reader wants its ring drained goes into the epoll
 * set epfd, with tag, once a frame reader is loaded. */
void hs_record_rt_watch(struct hs_record *r, int epfd, uint64_t tag);
void hs_record_rt_probe(struct hs_record *r, int32_t pid); /* is it a runtime's? */
/* On the reader thread, for each record drained: a runtime mapped, a process gone. */
void hs_record_rt_event(struct hs_record *r, const struct hs_perf_event *ev);
/* How long the reader may wait for the rings (ms): shorter while a new process is being looked
 * at, and in the recording's first second, when a command's runtime starts; -1 when the
 * runtimes ask for nothing (no reader loaded, or none possible). */
int hs_record_rt_poll_ms(const struct hs_record *r);
/* Hands each stack the readers wrote since the last call to push, as a record of its own. */
void hs_record_rt_drain(struct hs_record *r, void (*push)(void *ctx, struct perf_event_header *rec, uint64_t time),
			void *ctx);

/* fair.c, on the reader thread. hs_record_fair_admit(): whether a side-band record of time is
 * handed on; when not, *resync_ret says whether its process must be marked to be read again
 * (hs_record_fair_resync(): that record, the caller's to free). hs_record_fair_capture(): whether
 * the file a new executable mapping names is to be held on to now (not held lately), and
 * hs_record_fair_capture_failed() when that could not be done. */
void hs_record_fair_open(struct hs_record *r);
void hs_record_fair_close(struct hs_record *r);
bool hs_record_fair_admit(struct hs_record *r, const struct hs_perf_event *ev, uint64_t time, bool *resync_ret);
struct perf_event_header *hs_record_fair_resync(const struct hs_perf_event *ev, uint64_t time);
bool hs_record_fair_capture(struct hs_record *r, const struct hs_perf_mmap *m, uint64_t time);
void hs_record_fair_capture_failed(struct hs_record *r);
/* An HS_RECORD_RESYNC record (the caller's to free): pid UINT32_MAX is every process. */
struct perf_event_header *hs_record_resync_record(uint32_t pid, uint32_t tid, uint64_t time);

/* open.c: r->attr_side with the fallbacks the sampling event's opening took, so that its
 * records' layout and clock are the samples'. */
void hs_record_side_attr(struct hs_record *r);
/* sideband.c: -a's side-band on rings of its own. hs_record_sideband_open(), once the sampling
 * events are open, opens the side-band event of each CPU, with a ring of its own (or, over the
 * locked-memory limit, into the CPU's samples' ring). Returns 0 or a negative errno with err
 * filled in. */
int hs_record_sideband_open(struct hs_record *r, struct hs_error *err);

#endif
