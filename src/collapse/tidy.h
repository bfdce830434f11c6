/* The name rules of stackcollapse-perf.pl that hotstack collapse keeps byte for byte: how a
 * function name and a source line are tidied before they join a folded line. */
#ifndef HS_COLLAPSE_TIDY_H
#define HS_COLLAPSE_TIDY_H

#include <stddef.h>

#include "format/perf-script.h"
#include "util/strbuf.h"

/* Appends name (n bytes) tidied as the Perl script's $tidy_generic does: ';' becomes ':',
 * everything from the first '(' on is dropped (unless it opens "(anonymous namespace)", or
 * the name looks like a Go method "pkg.(*T).M"), quotes are deleted. */
void hs_collapse_tidy(struct hs_strbuf *sb, const char *name, size_t n);
/* Appends ":LINE" for a source line perf printed after a frame: s/\[.*?\]//g, then blanks
 * trimmed at both ends; nothing when nothing is left. */
void hs_collapse_srcline(struct hs_strbuf *sb, struct hs_ps_str line);

#endif
