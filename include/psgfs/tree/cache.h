/*
 * Byte-bounded LRU cache of parsed structures and rendered files, safe across threads.
 * Entries are pinned while in use: eviction passes over them (a pinned entry counts as just
 * used), and cache_drop unlinks one at once but frees it only when the last user unpins. An
 * entry larger than the whole budget is handed out detached (never kept).
 */
#ifndef PSGFS_CACHE_H
#define PSGFS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cache;
struct cache_ent;

/* Keys are two words: the owner (an inode number, an asset) and what of it is cached. */
struct cache_key {
	uint64_t owner, what;
};

static inline struct cache_key cache_key(uint64_t owner, uint64_t what)
{
	struct cache_key k = {owner, what};

	return k;
}

struct cache_stats {
	uint64_t hits, misses, inserts, evictions;
	uint64_t bytes, entries, budget, peak_bytes;
};

/* What malloc really spends on a block of n bytes (glibc, 64-bit: an 8-byte header, 16-byte
 * steps, 32 at least): loaders report the sum over their blocks, so that a budget bounds what
 * the heap holds, many small blocks included. */
static inline size_t cache_heap_cost(size_t n)
{
	size_t c = (n + 8 + 15) & ~(size_t)15;

	return c < 32 ? 32 : c;
}

struct cache *cache_new(size_t budget_bytes);
void cache_free(struct cache *c);

/* Pinned data for key, or NULL. *ent receives the pin for cache_unpin. */
void *cache_get(struct cache *c, struct cache_key key, struct cache_ent **ent);
/*
 * Insert data (ownership moves to the cache; dtor may be NULL for plain free()) and return it
 * pinned. If the key is already present (another thread won a race), data is destroyed and the
 * existing entry is returned instead. Returns NULL only on allocation failure (data destroyed).
 */
void *cache_put(struct cache *c, struct cache_key key, void *data, size_t bytes,
		void (*dtor)(void *), struct cache_ent **ent);
void cache_unpin(struct cache *c, struct cache_ent *ent);
/* One more pin on an entry already pinned (kept or detached); released by cache_unpin. */
void cache_pin(struct cache *c, struct cache_ent *ent);
/* Whether the entry is in the cache (false: detached, or evicted since). */
bool cache_is_kept(struct cache *c, const struct cache_ent *ent);
/*
 * Bytes held outside every entry for a while (a listing too large for the cache, kept while it
 * is read): they count against the budget, entries are evicted to make room, until
 * cache_release gives them back.
 */
void cache_hold(struct cache *c, size_t bytes);
void cache_release(struct cache *c, size_t bytes);
/*
 * Charge bytes held outside any entry for as long as the cache lives (a mount's permanent
 * structures): they count against the budget, entries are evicted to make room, and what is
 * left for entries never goes below zero (then every put is handed out detached).
 */
void cache_charge(struct cache *c, size_t bytes);
/* What is left of the budget for more charges (budget minus everything charged). */
size_t cache_room(struct cache *c);
/* Wrap data in an entry that is never kept: it lives while pinned (one pin returned). */
void *cache_put_detached(struct cache *c, void *data, size_t bytes, void (*dtor)(void *),
			 struct cache_ent **ent);
/* Forget key now (freed when its last pin goes); a no-op when absent. */
void cache_drop(struct cache *c, struct cache_key key);
/* The entry now accounts for `bytes` (it grew or shrank); may evict others. */
void cache_resize(struct cache *c, struct cache_ent *ent, size_t bytes);
struct cache_stats cache_get_stats(struct cache *c);

#endif
