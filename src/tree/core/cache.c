/* Byte-bounded LRU: open-addressing-free chained hash + doubly linked recency list, one mutex. */
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "psgfs/tree/cache.h"

struct cache_ent {
	struct cache_key key;
	void *data;
	size_t bytes;
	void (*dtor)(void *);
	unsigned pins;
	bool linked; /* in the map and LRU list */
	struct cache_ent *hnext;
	struct cache_ent *prev, *next; /* LRU: head = most recent */
};

struct cache {
	pthread_mutex_t mu; /* a leaf: dtors run after it (lock order: tree_int.h) */
	struct cache_ent **tab;
	size_t nbuckets;
	struct cache_ent *head, *tail;
	size_t budget;
	size_t fixed; /* charged by cache_charge: counted in st.bytes, never evicted */
	size_t held;  /* cache_hold: counted in st.bytes until released */
	size_t freed; /* bytes evicted since the heap was last trimmed */
	struct cache_stats st;
};

/* Evicted bytes between two trims of the heap, at least (cache_put). */
#define TRIM_MIN (16u << 20)

/* Per-entry bookkeeping charged to the budget (the entry, and the header of the data block,
 * whose own size the caller reports), so many tiny entries stay bounded too. */
#define CACHE_OVERHEAD (cache_heap_cost(sizeof(struct cache_ent)) + 16)

static bool key_eq(struct cache_key a, struct cache_key b)
{
	return a.owner == b.owner && a.what == b.what;
}

static size_t bucket(const struct cache *c, struct cache_key k)
{
	uint64_t key = k.owner * 0x9e3779b97f4a7c15ull ^ k.what;

	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)(key & (c->nbuckets - 1));
}

struct cache *cache_new(size_t budget)
{
	struct cache *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->nbuckets = 4096;
	c->tab = calloc(c->nbuckets, sizeof *c->tab);
	if (!c->tab) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	c->budget = budget;
	c->st.budget = budget;
	return c;
}

static void ent_destroy(struct cache_ent *e)
{
	if (e->data) {
		if (e->dtor)
			e->dtor(e->data);
		else
			free(e->data);
	}
	free(e);
}

void cache_free(struct cache *c)
{
	struct cache_ent *e, *n;

	if (!c)
		return;
	for (e = c->head; e; e = n) {
		n = e->next;
		ent_destroy(e);
	}
	free(c->tab);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static void lru_unlink(struct cache *c, struct cache_ent *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push_front(struct cache *c, struct cache_ent *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static void map_remove(struct cache *c, struct cache_ent *e)
{
	struct cache_ent **pp = &c->tab[bucket(c, e->key)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	e->hnext = NULL;
}

static struct cache_ent *map_find(struct cache *c, struct cache_key key)
{
	struct cache_ent *e = c->tab[bucket(c, key)];

	while (e && !key_eq(e->key, key))
		e = e->hnext;
	return e;
}

/* Grow the table when chains get long; failure only costs speed. */
static void map_maybe_grow(struct cache *c)
{
	struct cache_ent **tab, *e, *n;
	size_t old = c->nbuckets;

	if (c->st.entries < old * 2)
		return;
	tab = calloc(old * 2, sizeof *tab);
	if (!tab)
		return;
	c->nbuckets = old * 2;
	for (size_t i = 0; i < old; i++) {
		for (e = c->tab[i]; e; e = n) {
			size_t b = bucket(c, e->key);

			n = e->hnext;
			e->hnext = tab[b];
			tab[b] = e;
		}
	}
	free(c->tab);
	c->tab = tab;
}

/* Unlink e from the map and LRU; frees it unless pinned (then the last unpin frees it). */
static void evict(struct cache *c, struct cache_ent *e)
{
	map_remove(c, e);
	lru_unlink(c, e);
	e->linked = false;
	c->st.bytes -= e->bytes + CACHE_OVERHEAD;
	c->st.entries--;
	c->st.evictions++;
	c->freed += e->bytes;
	if (e->pins == 0)
		ent_destroy(e);
}

/* Evict from the tail until the bytes fit. An entry pinned now is in use, so it is as recent
 * as anything: it moves to the front instead. Evicting it would free nothing (its memory lives
 * until the unpin) and would lose it for the next lookup: an asset pinned across a long load
 * sank to the tail meanwhile, was unlinked, and everything keyed by it was built again. */
static void shrink_to(struct cache *c, size_t budget)
{
	struct cache_ent *e = c->tail;
	uint64_t left = c->st.entries; /* each entry looked at once: all pinned ends it */

	while (e && c->st.bytes > budget && left-- > 0) {
		struct cache_ent *prev = e->prev;

		if (e->pins) {
			lru_unlink(c, e);
			lru_push_front(c, e);
		} else {
			evict(c, e);
		}
		e = prev;
	}
}

void *cache_get(struct cache *c, struct cache_key key, struct cache_ent **ent)
{
	struct cache_ent *e;
	void *data = NULL;

	pthread_mutex_lock(&c->mu);
	e = map_find(c, key);
	if (e) {
		e->pins++;
		lru_unlink(c, e);
		lru_push_front(c, e);
		c->st.hits++;
		data = e->data;
	} else {
		c->st.misses++;
	}
	pthread_mutex_unlock(&c->mu);
	*ent = e;
	return data;
}

void *cache_put(struct cache *c, struct cache_key key, void *data, size_t bytes,
		void (*dtor)(void *), struct cache_ent **ent)
{
	struct cache_ent *e = calloc(1, sizeof *e), *old;
	bool trim;

	*ent = NULL;
	if (!e) {
		if (dtor)
			dtor(data);
		else
			free(data);
		return NULL;
	}
	e->key = key;
	e->data = data;
	e->bytes = bytes;
	e->dtor = dtor;
	e->pins = 1;
	pthread_mutex_lock(&c->mu);
	old = map_find(c, key);
	if (old) {
		old->pins++;
		pthread_mutex_unlock(&c->mu);
		ent_destroy(e);
		*ent = old;
		return old->data;
	}
	c->st.inserts++;
	if (c->fixed + c->held < c->budget &&
	    bytes + CACHE_OVERHEAD <= c->budget - c->fixed - c->held) {
		shrink_to(c, c->budget - bytes - CACHE_OVERHEAD);
		e->hnext = c->tab[bucket(c, key)];
		c->tab[bucket(c, key)] = e;
		lru_push_front(c, e);
		e->linked = true;
		c->st.bytes += bytes + CACHE_OVERHEAD;
		c->st.entries++;
		if (c->st.bytes > c->st.peak_bytes)
			c->st.peak_bytes = c->st.bytes;
		map_maybe_grow(c);
	}
	/* glibc keeps freed chunks inside its heaps resident (only the top is given back): after
	 * a quarter of the budget (16 MiB at least) has been evicted, what is free goes back to the
	 * system. Reading a 480 MB scene.glb through a 64 MiB cache peaked at 104-113 MB of
	 * RssAnon without it, 83 MB with it, at the same speed (bench/run, 14.). */
	trim = c->freed > (c->budget / 4 > TRIM_MIN ? c->budget / 4 : TRIM_MIN);
	if (trim)
		c->freed = 0;
	pthread_mutex_unlock(&c->mu);
	if (trim)
		malloc_trim(0);
	*ent = e;
	return data;
}

void cache_unpin(struct cache *c, struct cache_ent *e)
{
	bool destroy;

	if (!e)
		return;
	pthread_mutex_lock(&c->mu);
	destroy = --e->pins == 0 && !e->linked;
	pthread_mutex_unlock(&c->mu);
	if (destroy)
		ent_destroy(e);
}

void cache_pin(struct cache *c, struct cache_ent *e)
{
	pthread_mutex_lock(&c->mu);
	e->pins++;
	pthread_mutex_unlock(&c->mu);
}

bool cache_is_kept(struct cache *c, const struct cache_ent *e)
{
	bool kept;

	pthread_mutex_lock(&c->mu);
	kept = e->linked;
	pthread_mutex_unlock(&c->mu);
	return kept;
}

void cache_hold(struct cache *c, size_t bytes)
{
	pthread_mutex_lock(&c->mu);
	c->held += bytes;
	c->st.bytes += bytes;
	if (c->st.bytes > c->st.peak_bytes)
		c->st.peak_bytes = c->st.bytes;
	shrink_to(c, c->budget);
	pthread_mutex_unlock(&c->mu);
}

void cache_release(struct cache *c, size_t bytes)
{
	pthread_mutex_lock(&c->mu);
	bytes = bytes < c->held ? bytes : c->held;
	c->held -= bytes;
	c->st.bytes -= bytes;
	pthread_mutex_unlock(&c->mu);
}

struct cache_stats cache_get_stats(struct cache *c)
{
	struct cache_stats s;

	pthread_mutex_lock(&c->mu);
	s = c->st;
	pthread_mutex_unlock(&c->mu);
	return s;
}

void cache_drop(struct cache *c, struct cache_key key)
{
	struct cache_ent *e;

	pthread_mutex_lock(&c->mu);
	e = map_find(c, key);
	if (e)
		evict(c, e); /* frees e now when unpinned, else at the last unpin */
	pthread_mutex_unlock(&c->mu);
}

void cache_resize(struct cache *c, struct cache_ent *e, size_t bytes)
{
	if (!e)
		return;
	pthread_mutex_lock(&c->mu);
	if (e->linked) {
		c->st.bytes = c->st.bytes - e->bytes + bytes;
		if (c->st.bytes > c->st.peak_bytes)
			c->st.peak_bytes = c->st.bytes;
	}
	e->bytes = bytes;
	if (e->linked && c->st.bytes > c->budget) {
		/* Keep e itself: move it to the front so the tail goes first. */
		lru_unlink(c, e);
		lru_push_front(c, e);
		shrink_to(c, c->budget);
	}
	pthread_mutex_unlock(&c->mu);
}

void cache_charge(struct cache *c, size_t bytes)
{
	pthread_mutex_lock(&c->mu);
	c->fixed = bytes < c->budget - c->fixed ? c->fixed + bytes : c->budget;
	c->st.bytes += bytes;
	if (c->st.bytes > c->st.peak_bytes)
		c->st.peak_bytes = c->st.bytes;
	shrink_to(c, c->budget);
	pthread_mutex_unlock(&c->mu);
}

size_t cache_room(struct cache *c)
{
	size_t room;

	pthread_mutex_lock(&c->mu);
	room = c->budget - c->fixed;
	pthread_mutex_unlock(&c->mu);
	return room;
}

void *cache_put_detached(struct cache *c, void *data, size_t bytes, void (*dtor)(void *),
			 struct cache_ent **ent)
{
	struct cache_ent *e = calloc(1, sizeof *e);

	(void)c;
	*ent = e;
	if (!e) {
		if (dtor)
			dtor(data);
		else
			free(data);
		return NULL;
	}
	e->data = data;
	e->bytes = bytes;
	e->dtor = dtor;
	e->pins = 1;
	return data;
}
