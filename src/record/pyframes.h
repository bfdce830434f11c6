/* The BPF program that reads Python frames at sample time (bpf/pyframes.bpf.c): loading it when
 * a process needs it, running it from the sampling events, telling it which processes are which
 * CPython, and draining what it writes. */
#ifndef HS_RECORD_PYFRAMES_H
#define HS_RECORD_PYFRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "python/python.h"

struct hs_pyframes;

/* Makes what goes with the sampling events, a dispatcher that runs the program once it is loaded
 * (hs_pyframes_load()) and lets the samples through before. Returns 0, or a negative errno with
 * why filled in one line: -EPERM when this user may not load BPF programs. */
int hs_pyframes_open(struct hs_pyframes **ret, char *why, size_t whylen);
void hs_pyframes_close(struct hs_pyframes *pf);
/* Runs the dispatcher on each overflow of the perf event perf_fd, before its sample is written;
 * the events' copies for threads and children made from then on get it too. Returns 0 or a
 * negative errno (-EINVAL for events that take another kind of program, such as tracepoints). */
int hs_pyframes_attach(struct hs_pyframes *pf, int perf_fd);
/* Loads the program (the kernel's verifier checks it here: milliseconds of CPU) and has every
 * event's dispatcher run it from now on. Returns 0 (also when it was loaded before), or a
 * negative errno with why filled in one line, and pf as it was. The calls below need it loaded,
 * and are not made while it loads. */
int hs_pyframes_load(struct hs_pyframes *pf, char *why, size_t whylen);
/* Reads the frames of process pid (root namespace) with in's layout from now on. */
int hs_pyframes_add(struct hs_pyframes *pf, uint32_t pid, const struct hs_py_interp *in);
void hs_pyframes_remove(struct hs_pyframes *pf, uint32_t pid);
/* Hands each record written since the last call (a struct hs_py_sample, of size bytes, with
 * only its nframes frames) to cb. Returns how many. */
int hs_pyframes_drain(struct hs_pyframes *pf, void (*cb)(void *ctx, const void *data, size_t size), void *ctx);
/* A descriptor that polls readable when the program wants its ring drained at once (it read a
 * code object not seen before); -1 when there is none. */
int hs_pyframes_fd(struct hs_pyframes *pf);
/* Records the program could not write: the ring was full. */
uint64_t hs_pyframes_dropped(struct hs_pyframes *pf);

#endif
