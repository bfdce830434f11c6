/* hotstack collapse: one sample of `perf script` text to one folded line, "root;...;leaf",
 * by the rules of stackcollapse-perf.pl, counted in a stack table. What a frame line folds
 * to is worked out once per distinct line (and once per sample with source lines), and a
 * sample of the same root and the same frame lines as one before is counted without being
 * folded again. */
#ifndef HS_COLLAPSE_FOLD_H
#define HS_COLLAPSE_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collapse/addr2line.h"
#include "collapse/collapse.h"
#include "collapse/stack-table.h"
#include "format/perf-script.h"
#include "util/hashmap.h"
#include "util/strbuf.h"
#include "util/util.h"

/* A sample seen before as the same root and the same frame lines folds to the same line:
 * the raw key (root, then each line's reader id and java bit) finds it without folding. */
#define HS_FOLD_RAW_KEYS_MAX (256u << 20) /* past this, samples are folded without the shortcut */

struct hs_fold_raw {
	size_t off, len; /* in raw_keys */
	uint32_t stack;
};

/* What one frame line folds to: bytes in frag_bytes (set), or in scratch. */
struct hs_fold_frag {
	size_t off, len;
	bool set;
};

/* All zero, then opts, a2l and table set, is a ready state. */
struct hs_collapse_fold {
	const struct hs_collapse_opts *opts; /* borrowed */
	struct hs_addr2line *a2l;            /* borrowed; used with opts->inline_ */
	struct hs_stack_table *table;        /* borrowed: where the lines are counted */

	struct hs_strbuf line, tmp;

	HS_VEC(struct hs_fold_frag) frags; /* by frame id * 2 + (comm starts with "java") */
	struct hs_strbuf frag_bytes;
	HS_VEC(struct hs_fold_frag) parts; /* the frames of the sample being folded */
	struct hs_strbuf scratch;

	HS_VEC(struct hs_fold_raw) raws;
	struct hs_strbuf raw_keys, raw_key;
	struct hs_index raw_ix;
};

/* Folds sample s and adds its period (1 when none is printed) to its line in c->table.
 * Frames are folded in input order, as the Perl script runs addr2line in input order. */
void hs_collapse_fold_sample(struct hs_collapse_fold *c, const struct hs_ps_sample *s);
void hs_collapse_fold_release(struct hs_collapse_fold *c);

#endif
