/* Merging one profile into another: value types matched by type and unit, every sample copied
 * through the target's tables, then the header's fields combined. */
#include "merge.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/copy.h"
#include "util/hashmap.h"

/* Whether string ia of a and string ib of b are the same bytes. */
static bool same_str(const struct hs_profile *a, uint32_t ia, const struct hs_profile *b, uint32_t ib)
{
	return a->str_len.v[ia] == b->str_len.v[ib] &&
	       !memcmp(hs_profile_str(a, ia), hs_profile_str(b, ib), a->str_len.v[ia]);
}

/* The index in dst of src's value type i (the same type and unit), or UINT32_MAX. */
static uint32_t find_type(const struct hs_profile *dst, const struct hs_profile *src, size_t i)
{
	const struct hs_value_type *t = &src->types.v[i];

	for (size_t j = 0; j < dst->types.n; j++)
		if (same_str(dst, dst->types.v[j].type, src, t->type) &&
		    same_str(dst, dst->types.v[j].unit, src, t->unit))
			return (uint32_t)j;
	return UINT32_MAX;
}

/* dst's values, old per sample, spread to types.n per sample, 0 for the types after old. */
static void widen(struct hs_profile *dst, size_t old)
{
	size_t nt = dst->types.n, ns = dst->samples.n;

	hs_vec_reserve(&dst->values, ns * nt);
	/* from the last sample back: a row moves only to where rows already moved were */
	for (size_t i = ns; i-- > 0;) {
		memmove(&dst->values.v[i * nt], &dst->values.v[i * old], old * sizeof(*dst->values.v));
		memset(&dst->values.v[i * nt + old], 0, (nt - old) * sizeof(*dst->values.v));
	}
	dst->values.n = ns * nt;
}

/* map[i]: the index in dst of src's value type i, the types dst lacks added after its own; each
 * keeps the name of the event it counts where dst has none for it. */
static void map_types(struct hs_copier *c, uint32_t *map)
{
	const struct hs_profile *src = c->p;
	struct hs_profile *dst = c->q;
	size_t old = dst->types.n;

	for (size_t i = 0; i < src->types.n; i++) {
		uint32_t j = find_type(dst, src, i);
		uint32_t ev = i < src->type_events.n ? hs_copy_str(c, src->type_events.v[i]) : 0;

		if (j == UINT32_MAX) {
			struct hs_value_type t = {hs_copy_str(c, src->types.v[i].type),
						  hs_copy_str(c, src->types.v[i].unit)};
			j = (uint32_t)dst->types.n;
			hs_vec_push(&dst->types, t);
		}
		map[i] = j;
		if (ev && (j >= dst->type_events.n || !dst->type_events.v[j])) {
			while (dst->type_events.n <= j)
				hs_vec_push(&dst->type_events, 0);
			dst->type_events.v[j] = ev;
		}
	}
	if (dst->types.n > old)
		widen(dst, old);
}

static int64_t end_of(int64_t start, int64_t duration)
{
	int64_t end;

	return __builtin_add_overflow(start, HS_MAX(duration, 0), &end) ? INT64_MAX : end;
}

/* The recording's start and length, its period, what it could not hold. */
static void merge_header(struct hs_copier *c)
{
	const struct hs_profile *src = c->p;
	struct hs_profile *dst = c->q;
	int64_t end;

	if (dst->time_nanos && src->time_nanos) {
		end = HS_MAX(end_of(dst->time_nanos, dst->duration_nanos),
			     end_of(src->time_nanos, src->duration_nanos));
		dst->time_nanos = HS_MIN(dst->time_nanos, src->time_nanos);
		dst->duration_nanos = __builtin_sub_overflow(end, dst->time_nanos, &end) ? INT64_MAX : end;
	} else {
		/* a profile that does not say when it started cannot be placed beside the other */
		dst->time_nanos = dst->time_nanos ? dst->time_nanos : src->time_nanos;
		dst->duration_nanos = HS_MAX(dst->duration_nanos, src->duration_nanos);
	}
	if (!same_str(dst, dst->period_type.type, src, src->period_type.type) ||
	    !same_str(dst, dst->period_type.unit, src, src->period_type.unit)) {
		memset(&dst->period_type, 0, sizeof(dst->period_type));
		dst->period = 0;
	} else if (dst->period != src->period) {
		dst->period = 0;
	}
	if (!dst->main_mapping && src->main_mapping && src->main_mapping < src->mappings.n)
		dst->main_mapping = hs_copy_mapping(c, src->main_mapping);
	dst->stacks_over_cap += src->stacks_over_cap;
	dst->samples_over_cap += src->samples_over_cap;
	dst->frames_over_cap |= src->frames_over_cap;
	dst->values_saturated += src->values_saturated;
}

/* The samples a note of hs_profile_note_lost() says were lost in *ret, when c is one. */
static bool lost_note(const char *c, uint64_t *ret)
{
	const char *d = !strncmp(c, "lost all ", 9) ? c + 9 : !strncmp(c, "lost ", 5) ? c + 5 : NULL;
	unsigned long long n;
	char *end;

	if (!d || !isdigit((unsigned char)*d))
		return false;
	errno = 0;
	n = strtoull(d, &end, 10);
	if (errno || strncmp(end, " samples (", 10) || end[strlen(end) - 1] != ')')
		return false;
	*ret = n;
	return true;
}

/* The comments of both, each once; the notes of lost samples (where dst has "samples" values to
 * weigh them against) become one of all the samples lost. */
static void merge_comments(struct hs_copier *c)
{
	const struct hs_profile *src = c->p;
	struct hs_profile *dst = c->q;
	struct hs_u64map have = {0};
	int si = hs_profile_find_type(dst, "samples");
	uint64_t lost = 0, n;
	size_t k = 0;

	for (size_t i = 0; i < dst->comments.n; i++) {
		uint32_t id = dst->comments.v[i];

		if (si >= 0 && lost_note(hs_profile_str(dst, id), &n))
			lost = n > UINT64_MAX - lost ? UINT64_MAX : lost + n;
		else if (!hs_u64map_get(&have, id, &n)) {
			hs_u64map_put(&have, id, 1);
			dst->comments.v[k++] = id;
		}
	}
	dst->comments.n = k;
	for (size_t i = 0; i < src->comments.n; i++) {
		uint32_t id;

		if (si >= 0 && lost_note(hs_profile_str(src, src->comments.v[i]), &n)) {
			lost = n > UINT64_MAX - lost ? UINT64_MAX : lost + n;
			continue;
		}
		id = hs_copy_str(c, src->comments.v[i]);
		if (!hs_u64map_get(&have, id, &n)) {
			hs_u64map_put(&have, id, 1);
			hs_vec_push(&dst->comments, id);
		}
	}
	hs_u64map_release(&have);
	if (lost)
		hs_profile_note_lost(dst, (uint64_t)HS_MAX(hs_profile_total(dst, (uint32_t)si), 0), lost);
}

int hs_profile_merge(struct hs_profile *dst, const struct hs_profile *src, struct hs_error *err)
{
	struct hs_copier c;
	uint32_t *map;
	int64_t *vals;
	size_t add = 0;

	if (dst == src)
		return hs_error_set(err, -EINVAL, "a profile cannot be merged into itself");
	for (size_t i = 0; i < src->types.n; i++)
		add += find_type(dst, src, i) == UINT32_MAX;
	if (dst->types.n + add > HS_PROFILE_MERGE_MAX_TYPES)
		return hs_error_set(err, -EOVERFLOW, "more than %u value types in all", HS_PROFILE_MERGE_MAX_TYPES);

	/* the frames src's input allowed it allow dst more: before its stacks are added */
	if (!dst->max_frames || !src->max_frames)
		dst->max_frames = 0;
	else
		dst->max_frames =
			src->max_frames > UINT64_MAX - dst->max_frames ? UINT64_MAX : dst->max_frames + src->max_frames;
	hs_copier_init(&c, src, dst);
	map = hs_xcalloc(src->types.n ? src->types.n : 1, sizeof(*map));
	map_types(&c, map);
	vals = hs_xcalloc(dst->types.n ? dst->types.n : 1, sizeof(*vals));
	for (size_t i = 0; i < src->samples.n; i++) {
		const struct hs_sample *s = &src->samples.v[i];
		const int64_t *v = hs_profile_sample_values(src, (uint32_t)i);

		memset(vals, 0, dst->types.n * sizeof(*vals));
		for (size_t t = 0; t < src->types.n; t++)
			vals[map[t]] = hs_add_sat(vals[map[t]], v[t]);
		hs_profile_add_sample(dst, hs_copy_stack(&c, s->stack), hs_copy_str(&c, s->comm), s->pid, s->tid,
				      s->time, vals);
	}
	merge_header(&c);
	merge_comments(&c);
	free(vals);
	free(map);
	hs_copier_release(&c);
	return 0;
}
