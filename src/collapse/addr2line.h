/* hotstack collapse --inline: a frame's inlined functions as stackcollapse-perf.pl finds
 * them, by running addr2line (binutils) on its address, and nm where addr2line knows nothing
 * there. Programs are run from PATH with our stderr, one addr2line per address, as the Perl
 * script runs them; what they print is kept for the rest of the run. Not thread-safe. */
#ifndef HS_COLLAPSE_ADDR2LINE_H
#define HS_COLLAPSE_ADDR2LINE_H

#include <stdbool.h>
#include <stddef.h>

#include "format/perf-script.h"
#include "util/hashmap.h"
#include "util/strbuf.h"
#include "util/util.h"

/* What nm printed for a module, read on first need. */
struct hs_a2l_nm {
	char *mod;
	char *text;
	size_t len;
};

/* What a (pc, module) expanded to. */
struct hs_a2l_entry {
	char *pc, *mod, *result;
};

/* All zero, then the settings below, is a ready state; hs_addr2line_release() frees it. */
struct hs_addr2line {
	bool context; /* function:file:line, not function alone (--context) */
	/* Given the message once, the first time a program cannot be run (the frames then stay
	 * as they are, as under the Perl script's backticks); may be NULL. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;

	HS_VEC(struct hs_a2l_nm) nm;
	HS_VEC(struct hs_a2l_entry) cache;
	struct hs_index ix;
	bool spawn_warned;
};

/* What frame f expands to, "outer;...;inner" (each "function" or "function:file:line"), or
 * NULL when it stays as it is: a module the Perl script never asks about (a perf map, the
 * kernel, "[...]") or nothing known there. Owned by a, valid until hs_addr2line_release(). */
const char *hs_addr2line_expand(struct hs_addr2line *a, const struct hs_ps_frame *f);
void hs_addr2line_release(struct hs_addr2line *a);

/* Modules the Perl script never asks addr2line about: m/(perf-\d+.map|kernel\.|\[[^\]]+\])/ */
bool hs_addr2line_skips(const char *module, size_t n);
/* Removes " (discriminator N)" from line l (n bytes) the way s/ \(discriminator \S+\)// does:
 * the first such text, up to the last ')' of the non-blank run after it. Returns the new
 * length. */
size_t hs_addr2line_drop_discriminator(char *l, size_t n);

#endif
