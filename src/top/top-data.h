/* What hotstack top shows of a profile: its functions with their self and total values, and the
 * callers and callees of one of them. Reads a profile, prints nothing. */
#ifndef HS_TOP_DATA_H
#define HS_TOP_DATA_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"

struct hs_top_opts {
	/* a sample's kernel frames are left out, so that its self value goes to the user frame
	 * that entered the kernel (samples with no other frame are left out) */
	bool hide_kernel;
	bool by_total;      /* largest total first, else largest self first */
	const char *filter; /* only functions whose name holds this, in any case; NULL or "": all */
	uint32_t vi;        /* the value index counted */
};

/* A function as top shows it: its name, module and kind of code. A function inlined into
 * another is a function of its own, as in the reports. */
struct hs_top_fn {
	const char *name;   /* "[unknown]" for a location without one; borrowed from the profile */
	const char *module; /* hs_profile_location_module(), "" when none; borrowed */
	uint8_t kind;       /* enum hs_kind */
	int64_t self;       /* samples it is the innermost frame of */
	int64_t total;      /* samples it is in, once each however often it recurs */
	size_t seen;        /* private: the sample that last added to total, plus one */
};

struct hs_top_fns {
	struct hs_top_fn *v;
	size_t n, cap;
};

struct hs_top_table {
	struct hs_top_fns fns; /* filtered and sorted */
	int64_t sum;           /* of the samples with a frame left: what percentages are of */
	/* stacks the unwinder could not finish (they end in a stop reason's pseudo-frame) */
	int64_t cut;
	const char *cut_reason; /* the most common reason, in a word or two; NULL for none */
};

/* Fills t (zeroed or released before) from p. Borrowed strings live as long as p. */
void hs_top_table_build(const struct hs_profile *p, const struct hs_top_opts *o, struct hs_top_table *t);
void hs_top_table_release(struct hs_top_table *t);

/* Who calls the function name in module, and whom it calls: the frame next to it towards the
 * root (callers) and towards the leaf (callees) of each sample it is in, each counted once a
 * sample (in total, self unused), largest first. o's filter is not applied. */
struct hs_top_related {
	struct hs_top_fns callers, callees;
	int64_t total; /* of the function itself */
};

void hs_top_related_build(const struct hs_profile *p, const struct hs_top_opts *o, const char *name,
			  const char *module, struct hs_top_related *ret);
void hs_top_related_release(struct hs_top_related *r);

/* How a row marks its kind of code, perf's way: "[.]" user, "[k]" kernel, "[j]" JIT, "[py]"
 * Python, "[?]" a pseudo-frame. */
const char *hs_top_kind_mark(uint8_t kind);
/* A module as a row shows it: a file's base name, "[kernel.kallsyms]" as it is. */
const char *hs_top_module_name(const char *module);
/* The value index top counts in p: the "samples" type where there is one, else the first. */
uint32_t hs_top_value_index(const struct hs_profile *p);

#endif
