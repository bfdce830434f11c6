/* Two open-addressing hash tables:
 *  - hs_u64map: uint64 key -> uint64 value (key ~0 is reserved);
 *  - hs_index: a set of uint32 ids into a caller-owned array, found by hash plus a caller
 *    equality callback. It is how strings, stacks and locations are interned without storing
 *    their bytes twice. */
#ifndef HS_HASHMAP_H
#define HS_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hs_u64map {
	uint64_t *keys;
	uint64_t *vals;
	size_t n, cap; /* cap is a power of two or 0 */
};

void hs_u64map_release(struct hs_u64map *m);
/* Returns true and stores the value in *ret when the key is present. */
bool hs_u64map_get(const struct hs_u64map *m, uint64_t key, uint64_t *ret);
void hs_u64map_put(struct hs_u64map *m, uint64_t key, uint64_t val);
/* Iteration: for (size_t i = 0; i < m->cap; i++) if (hs_u64map_used(m, i)) ... */
static inline bool hs_u64map_used(const struct hs_u64map *m, size_t i)
{
	return m->keys[i] != UINT64_MAX;
}

struct hs_index {
	uint64_t *slots; /* (hash high 32 bits << 32) | (id + 1); 0 = empty */
	size_t n, cap;
};

/* eq(ctx, id) tells whether the stored element id equals the one being looked for. */
typedef bool (*hs_index_eq_fn)(const void *ctx, uint32_t id);

void hs_index_release(struct hs_index *ix);
/* Returns the id of an equal element, or UINT32_MAX. */
uint32_t hs_index_find(const struct hs_index *ix, uint64_t hash, hs_index_eq_fn eq, const void *ctx);
/* Makes room for n elements in all, so that inserting up to that many never rehashes. */
void hs_index_reserve(struct hs_index *ix, size_t n);
/* Inserts id with the given hash; the caller has checked it is absent. */
void hs_index_insert(struct hs_index *ix, uint64_t hash, uint32_t id);
/* Starts loading the slot a lookup of hash begins at, for a lookup soon after. */
static inline void hs_index_prefetch(const struct hs_index *ix, uint64_t hash)
{
	if (ix->cap)
		__builtin_prefetch(&ix->slots[(hash >> 32) & (ix->cap - 1)]);
}

#endif
