/* Between the files of the profile builder: builder.c, builder-runtime.c and builder-python.c.
 * Not for use outside src/profile/. */
#ifndef HS_BUILDER_PRIVATE_H
#define HS_BUILDER_PRIVATE_H

#include "profile/builder.h"

/* builder-runtime.c */
void hs_builder_rt_release(struct hs_builder *b);
/* Forgets the threads' runtime stacks whose samples never came, and the threads left with none
 * (hs_builder_rebase()): many short-lived processes leave many threads. */
void hs_builder_rt_forget_threads(struct hs_builder *b);
/* An HS_RECORD_RT_STACK record: kept as one of its thread's latest runtime stacks. */
void hs_builder_rt_stack(struct hs_builder *b, const struct hs_perf_event *ev);
/* The sample's native stack in b->locs gets the runtime stack read with it merged in: true when
 * it had one. */
bool hs_builder_rt_merge(struct hs_builder *b, const struct hs_perf_sample *s, int32_t pid);

/* builder-python.c */
void hs_builder_py_release(struct hs_builder *b);
/* Forgets the profile's locations of Python frames (hs_builder_rebase()). */
void hs_builder_py_forget_locations(struct hs_builder *b);
/* A location the unwinder found to be a trampoline of the interpreter's (-X perf). */
void hs_builder_py_tramp(struct hs_builder *b, uint32_t loc);
/* The sample's native stack in b->locs gets rec, a Python stack of process pid (a struct
 * hs_py_sample, whole, with frames), merged in: true when it was. */
bool hs_builder_py_merge(struct hs_builder *b, int32_t pid, const void *rec);

#endif
