/* The runtimes' frame readers (BPF programs, runtime/NAME/frames.bpf.c): a dispatcher that goes
 * with the sampling events, each runtime's reader loaded into its slot when a process needs it,
 * told which processes are its runtime's, and what they write drained. */
#ifndef HS_RECORD_READER_H
#define HS_RECORD_READER_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/runtime.h"

struct hs_rt_reader;

/* Makes what goes with the sampling events, a dispatcher that runs the readers once they are
 * loaded (hs_rt_reader_load()) and lets the samples through before. Returns 0, or a negative
 * errno: -EPERM when this user may not load BPF programs. */
int hs_rt_reader_open(struct hs_rt_reader **ret);
void hs_rt_reader_close(struct hs_rt_reader *rd);
/* Runs the dispatcher on each overflow of the perf event perf_fd, before its sample is written;
 * the events' copies for threads and children made from then on get it too. Returns 0 or a
 * negative errno (-EINVAL for events that take another kind of program, such as tracepoints). */
int hs_rt_reader_attach(struct hs_rt_reader *rd, int perf_fd);
/* Loads rt's reader (the kernel's verifier checks it here: milliseconds of CPU) and has every
 * event's dispatcher run it from now on. Returns 0 (also when it was loaded before), or a
 * negative errno with why filled in one line, and rd as it was. The calls below for rt need it
 * loaded, and are not made while it loads. */
int hs_rt_reader_load(struct hs_rt_reader *rd, const struct hs_runtime *rt, char *why, size_t whylen);
/* Reads the frames of process pid (root namespace) with proc's description from now on. */
int hs_rt_reader_add(struct hs_rt_reader *rd, const struct hs_runtime *rt, uint32_t pid, const void *proc);
void hs_rt_reader_remove(struct hs_rt_reader *rd, const struct hs_runtime *rt, uint32_t pid);
/* Hands each record the loaded readers wrote since the last call (of size bytes, as written) to
 * cb with its runtime's id. Returns how many, or the first negative errno of a ring. One thread
 * drains; another may load readers meanwhile (what it loads is drained from the next call). */
int hs_rt_reader_drain(struct hs_rt_reader *rd, void (*cb)(void *ctx, unsigned id, const void *data, size_t size),
		       void *ctx);
/* A descriptor that polls readable when a loaded reader wants its ring drained at once (it read
 * something not seen before). Owned by rd. */
int hs_rt_reader_fd(struct hs_rt_reader *rd);
/* Records rt's reader could not write: its ring was full. */
uint64_t hs_rt_reader_dropped(struct hs_rt_reader *rd, const struct hs_runtime *rt);

#endif
