/* What names the Java frames of a JVM's records, read once per process and kept: compiled code
 * read as soon as the frame reader hands it on (the JIT frees code it made obsolete), methods
 * when first named. Safe to use from two threads. */
#ifndef HS_JVM_STORE_H
#define HS_JVM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/hotspot/hotspot.h"
#include "runtime/hotspot/walk-abi.h"
#include "util/hashmap.h"

struct hs_jvm_names;

struct hs_jvm_names *hs_jvm_names_new(void);
void hs_jvm_names_free(struct hs_jvm_names *n);
/* Process pid runs jvm (copied), from now until hs_jvm_names_forget(). */
void hs_jvm_names_add_proc(struct hs_jvm_names *n, int32_t pid, const struct hs_jvm *jvm);
/* Reads what names a record's innermost frames (a struct hs_jvm_sample) that is not read yet:
 * their compiled code and its methods, the interpreted frames' methods. */
#define HS_JVM_PREFETCH_DEPTH 4
void hs_jvm_names_prefetch(struct hs_jvm_names *n, const struct hs_jvm_sample *s);
void hs_jvm_names_forget(struct hs_jvm_names *n, const struct hs_u64map *gone);
/* Whether process pid is a JVM whose frames are read. */
bool hs_jvm_names_has(struct hs_jvm_names *n, int32_t pid);

/* One Java method of a frame, named. */
struct hs_jvm_named {
	const struct hs_jvm_method *m; /* valid until hs_jvm_names_free() */
	int line;                      /* 0 when unknown */
	enum hs_jvm_comp comp;
	bool inlined; /* inlined into the method of the next one */
};
/* The methods a frame (of kind HS_JVM_FRAME_INTERP or _COMPILED) of process pid runs, innermost
 * first, at most max into out; 0 when it cannot be named: the process is gone, the method or the
 * compiled code is not there any more, or is other than the frame's (never another method).
 * A stub's or adapter's frame is named by *stub (its blob's name), with 0 returned. */
size_t hs_jvm_names_frame(struct hs_jvm_names *n, int32_t pid, const struct hs_jvm_rec_frame *f, struct hs_jvm_named *out,
			  size_t max, char *stub, size_t stublen);

#endif
