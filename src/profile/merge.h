/* Merging profiles: one profile of several inputs (report A B C, flame DIR), every sample of
 * each added to the one that gathers them. */
#ifndef HS_PROFILE_MERGE_H
#define HS_PROFILE_MERGE_H

#include "profile/profile.h"
#include "util/error.h"

/* The value types a merged profile may hold: as many as one pprof file may have. */
#define HS_PROFILE_MERGE_MAX_TYPES 1024u

/* Adds every sample of src to dst, with the strings, mappings, functions, locations (and their
 * inline lines) and stacks it refers to interned through dst's tables; src is not changed.
 *
 * Values go by value type, the same type and unit: a type of src that dst lacks is added, and
 * dst's samples have 0 of it. A sample keeps its thread's command name, pid, tid and time; one
 * with the same stack and labels as a sample of dst adds to it. Comments are kept once each,
 * but the notes of lost samples (hs_profile_note_lost()), which become one note of all the
 * samples lost, against the "samples" totals (where dst has that type). time_nanos becomes the
 * earlier start, duration_nanos the span from there to the later end; where either start is not
 * known (0), the known one and the longer duration. The period and its type stay where both are
 * the same, else are cleared (only the period, where the type is the same). What either could
 * not hold (stacks over caps, sums held) adds up, and dst's frame budget (max_frames) grows by
 * src's (none where either has none). dst's main mapping is src's where dst has none.
 *
 * Returns 0; -EINVAL when src is dst; -EOVERFLOW, with dst untouched, when dst would hold more
 * than HS_PROFILE_MERGE_MAX_TYPES value types (err says so; err may be NULL). */
int hs_profile_merge(struct hs_profile *dst, const struct hs_profile *src, struct hs_error *err);

#endif
