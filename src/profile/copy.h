/* Copying what samples of one profile refer to into another: strings, mappings, functions,
 * locations with their inline lines, stacks, each id of the source interned in the target once.
 * Shared by the filters (a new profile of some samples) and merging (samples added to a
 * profile that has its own). Not for use outside src/profile/. */
#ifndef HS_PROFILE_COPY_H
#define HS_PROFILE_COPY_H

#include "profile/profile.h"

/* Borrows p (read) and q (written) for its life; p must not change meanwhile, and must not be q. */
struct hs_copier {
	const struct hs_profile *p;
	struct hs_profile *q;
	uint32_t *str, *map, *func, *loc; /* id in p -> id in q, 0 = not copied yet */
	uint64_t *shift;                  /* per mapping of p, subtracted from addresses; or NULL */
	HS_VEC(struct hs_line) lines;
	HS_VEC(uint32_t) locs; /* scratch for building a stack of q */
};

void hs_copier_init(struct hs_copier *c, const struct hs_profile *p, struct hs_profile *q);
void hs_copier_release(struct hs_copier *c);

/* The id in q of p's entry id (0 for 0), interned in q on first use. */
uint32_t hs_copy_str(struct hs_copier *c, uint32_t id);
uint32_t hs_copy_mapping(struct hs_copier *c, uint32_t id);
uint32_t hs_copy_function(struct hs_copier *c, uint32_t id);
/* Location id with only its outermost lines from first on (first = 0: all of them; only that
 * result is remembered). Its address is moved by shift[] where shift is set. */
uint32_t hs_copy_location(struct hs_copier *c, uint32_t id, uint32_t first);
/* Stack id of p, every location whole. */
uint32_t hs_copy_stack(struct hs_copier *c, uint32_t stack);

#endif
