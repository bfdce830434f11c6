/* Code objects read once per process and kept: what the recording reads as soon as the frame
 * reader hands a code object on (while its process surely lives), and what the profile builder
 * names Python frames from later. Safe to use from two threads. */
#ifndef HS_PY_NAMES_H
#define HS_PY_NAMES_H

#include <stdint.h>

#include "runtime/python/python.h"
#include "util/hashmap.h"

struct hs_py_names;

struct hs_py_names *hs_py_names_new(void);
void hs_py_names_free(struct hs_py_names *n);
/* Process pid runs interpreter in (copied), from now until hs_py_names_forget(). */
void hs_py_names_add_proc(struct hs_py_names *n, int32_t pid, const struct hs_py_interp *in);
/* Reads the code objects of a sample's innermost frames that are not read yet (a struct
 * hs_py_sample): those come and go; a frame further out has been running for longer, and
 * hs_py_names_get() reads its code object when it is first named. */
#define HS_PY_PREFETCH_DEPTH 4
void hs_py_names_prefetch(struct hs_py_names *n, const struct hs_py_sample *s);
/* The code object a frame reader's frame names, read now if it was not before; NULL when it
 * cannot be (its process is gone, the address holds no code object, or another one than the
 * frame's: its first line or ident differ). Valid until hs_py_names_free(). */
/* Forgets the processes in gone (pid -> anything) and their code objects. */
void hs_py_names_forget(struct hs_py_names *n, const struct hs_u64map *gone);
const struct hs_py_code *hs_py_names_get(struct hs_py_names *n, int32_t pid, const struct hs_py_frame *f);

#endif
