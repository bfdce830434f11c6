/* Fixed code sequences that runtimes copy into anonymous executable memory and describe to no
 * unwinder: CPython 3.12+'s perf trampolines (-X perf, -X perf_jit), one copy per Python
 * function, which the interpreter calls through and which a perf map or a jitdump names
 * "py::FUNC:FILE". Each template comes with the CFI of its every byte, as a table the walk
 * uses like any other. x86-64. */
#ifndef HS_TRAMPOLINE_H
#define HS_TRAMPOLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi.h"

/* The longest template: how far around a PC its code is read. */
#define HS_TRAMP_MAX_LEN 15
#define HS_TRAMP_COUNT 2

/* Which template a copy of code holds around one of its bytes: buf holds n bytes, buf[at] being
 * the byte at the PC. Returns the template's index and sets *off to the PC's offset in it, or
 * returns -1 when no whole copy of a template covers the PC. */
int hs_tramp_match(const uint8_t *buf, size_t n, size_t at, uint32_t *off);

/* The template's CFI, a table whose addresses are offsets in the template (static: never
 * freed), and its length. */
const struct hs_cfi_table *hs_tramp_table(int ix);
uint32_t hs_tramp_len(int ix);

/* Whether a JIT symbol names such a trampoline ("py::" first): for code whose bytes cannot be
 * read (a recording read from a file, a process gone), which is then taken to be a copy of
 * template 0. */
bool hs_tramp_named(const char *name);

#endif
