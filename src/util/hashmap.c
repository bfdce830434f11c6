/* Open addressing with linear probing; tables grow at 50% load so probes stay short. */
#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void hs_u64map_release(struct hs_u64map *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static size_t u64map_slot(const struct hs_u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = hs_hash_u64(key) & mask;

	while (m->keys[i] != UINT64_MAX && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

bool hs_u64map_get(const struct hs_u64map *m, uint64_t key, uint64_t *ret)
{
	size_t i;

	if (!m->cap || key == UINT64_MAX)
		return false;
	i = u64map_slot(m, key);
	if (m->keys[i] != key)
		return false;
	*ret = m->vals[i];
	return true;
}

static void u64map_resize(struct hs_u64map *m, size_t cap)
{
	struct hs_u64map old = *m;

	m->keys = hs_xmalloc(cap * sizeof(*m->keys));
	m->vals = hs_xmalloc(cap * sizeof(*m->vals));
	memset(m->keys, 0xff, cap * sizeof(*m->keys));
	m->cap = cap;
	m->n = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.keys[i] != UINT64_MAX)
			hs_u64map_put(m, old.keys[i], old.vals[i]);
	free(old.keys);
	free(old.vals);
}

void hs_u64map_put(struct hs_u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if (key == UINT64_MAX)
		return; /* the empty-slot marker: documented as reserved */
	if ((m->n + 1) * 2 > m->cap)
		u64map_resize(m, m->cap ? m->cap * 2 : 16);
	i = u64map_slot(m, key);
	if (m->keys[i] != key) {
		m->keys[i] = key;
		m->n++;
	}
	m->vals[i] = val;
}

void hs_index_release(struct hs_index *ix)
{
	if (!ix)
		return;
	free(ix->slots);
	memset(ix, 0, sizeof(*ix));
}

uint32_t hs_index_find(const struct hs_index *ix, uint64_t hash, hs_index_eq_fn eq, const void *ctx)
{
	size_t mask, i;
	uint32_t h = (uint32_t)(hash >> 32);

	if (!ix->cap)
		return UINT32_MAX;
	mask = ix->cap - 1;
	for (i = h & mask; ix->slots[i]; i = (i + 1) & mask) {
		uint64_t s = ix->slots[i];
		uint32_t id = (uint32_t)s - 1;
		if ((uint32_t)(s >> 32) == h && eq(ctx, id))
			return id;
	}
	return UINT32_MAX;
}

static void index_place(struct hs_index *ix, uint64_t slot)
{
	size_t mask = ix->cap - 1;
	/* The stored high half of the hash is enough to find the home slot again only if the
	 * table is indexed by it, so home slots use the high half too. */
	size_t i = (slot >> 32) & mask;

	while (ix->slots[i])
		i = (i + 1) & mask;
	ix->slots[i] = slot;
	ix->n++;
}

static void index_resize(struct hs_index *ix, size_t cap)
{
	uint64_t *old = ix->slots;
	size_t oldcap = ix->cap;

	ix->cap = cap;
	ix->slots = hs_xcalloc(ix->cap, sizeof(*ix->slots));
	ix->n = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i])
			index_place(ix, old[i]);
	free(old);
}

void hs_index_reserve(struct hs_index *ix, size_t n)
{
	size_t cap = ix->cap ? ix->cap : 16;

	while (n * 2 > cap)
		cap *= 2;
	if (cap > ix->cap)
		index_resize(ix, cap);
}

void hs_index_insert(struct hs_index *ix, uint64_t hash, uint32_t id)
{
	if ((ix->n + 1) * 2 > ix->cap)
		index_resize(ix, ix->cap ? ix->cap * 2 : 16);
	index_place(ix, ((hash >> 32) << 32) | ((uint64_t)id + 1));
}
