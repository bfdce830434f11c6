/* What names the JavaScript frames of V8 processes' records, read once per process and kept:
 * functions (their SharedFunctionInfos) read as soon as the frame reader hands them on. Safe to
 * use from two threads. */
#ifndef HS_V8_STORE_H
#define HS_V8_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/v8/v8.h"
#include "runtime/v8/walk-abi.h"
#include "util/hashmap.h"

struct hs_v8_names;

struct hs_v8_names *hs_v8_names_new(void);
void hs_v8_names_free(struct hs_v8_names *n);
/* Process pid runs v8 (copied), from now until hs_v8_names_forget(). */
void hs_v8_names_add_proc(struct hs_v8_names *n, int32_t pid, const struct hs_v8 *v8);
/* Reads the functions of a record's frames (a struct hs_v8_sample) not read yet: all of them, while
 * the collector has not moved them yet. */
#define HS_V8_PREFETCH_DEPTH HS_V8_MAX_FRAMES
void hs_v8_names_prefetch(struct hs_v8_names *n, const struct hs_v8_sample *s);
void hs_v8_names_forget(struct hs_v8_names *n, const struct hs_u64map *gone);
/* Whether process pid is a V8 whose frames are read, and its V8 (valid until forgotten). */
const struct hs_v8 *hs_v8_names_proc(struct hs_v8_names *n, int32_t pid);

/* One function of a frame, named. */
struct hs_v8_named {
	const struct hs_v8_function *f; /* valid until hs_v8_names_free() */
	int line, column;               /* 0 when unknown */
	bool inlined;                   /* inlined into the function of the next one */
	uint8_t tier;                   /* the code that runs it: HS_V8_FRAME_INTERP, _BASELINE,
	                                 * _OPTIMIZED, or _FUNCTION when not known */
	bool unsure; /* optimised code not read: functions inlined into it there are not known */
};
/* The functions a frame (of kind HS_V8_FRAME_INTERP to _FUNCTION) of process pid runs, innermost
 * first, at most max into out; 0 when it cannot be named (the process is gone, or its function
 * is not there any more). */
size_t hs_v8_names_frame(struct hs_v8_names *n, int32_t pid, const struct hs_v8_rec_frame *fr, struct hs_v8_named *out,
			 size_t max);

#endif
