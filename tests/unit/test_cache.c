/* The byte-bounded LRU (psgfs/tree/cache.h): recency, budget, pins, drops, detached entries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "psgfs/tree/cache.h"

static void *blob(void)
{
	return malloc(16);
}

static struct cache_key key(uint64_t i)
{
	return cache_key(1, i);
}

/* Put key i (bytes each) and unpin it at once. */
static void put(struct cache *c, uint64_t i, size_t bytes)
{
	struct cache_ent *e;

	assert_non_null(cache_put(c, key(i), blob(), bytes, NULL, &e));
	cache_unpin(c, e);
}

static bool present(struct cache *c, uint64_t i)
{
	struct cache_ent *e;
	void *p = cache_get(c, key(i), &e);

	cache_unpin(c, e);
	return p != NULL;
}

/* The least recently used entry goes first; a get makes an entry recent. */
static void test_lru_order(void **state)
{
	struct cache *c = cache_new(1u << 20);

	(void)state;
	for (uint64_t i = 0; i < 3; i++)
		put(c, i, 300u << 10);
	assert_true(present(c, 0)); /* 0 is now the most recent: 1 is the oldest */
	put(c, 3, 300u << 10);
	assert_false(present(c, 1));
	assert_true(present(c, 0));
	assert_true(present(c, 2));
	assert_true(present(c, 3));
	assert_true(cache_get_stats(c).bytes <= 1u << 20);
	cache_free(c);
}

/*
 * An entry pinned while others come in (an asset held across a load that opens a thousand
 * others) is in use, not old: it stays findable, and once unpinned it is as recent as the
 * last thing put. Eviction used to unlink it at the tail, and everything keyed by it was built
 * again on the next lookup.
 */
static void test_pinned_kept(void **state)
{
	struct cache *c = cache_new(1u << 20);
	struct cache_ent *held;

	(void)state;
	assert_non_null(cache_put(c, key(100), blob(), 100u << 10, NULL, &held));
	for (uint64_t i = 0; i < 50; i++)
		put(c, i, 100u << 10);
	assert_true(cache_is_kept(c, held));
	cache_unpin(c, held);
	put(c, 1000, 100u << 10);
	put(c, 1001, 100u << 10);
	assert_true(present(c, 100));
	assert_true(cache_get_stats(c).bytes <= 1u << 20);
	cache_free(c);
}

/* Everything pinned: nothing can go, the put still succeeds, and unpinning lets it shrink. */
static void test_all_pinned(void **state)
{
	struct cache *c = cache_new(1u << 20);
	struct cache_ent *e[8];

	(void)state;
	for (uint64_t i = 0; i < 8; i++)
		assert_non_null(cache_put(c, key(i), blob(), 200u << 10, NULL, &e[i]));
	for (uint64_t i = 0; i < 8; i++)
		assert_true(cache_is_kept(c, e[i]));
	for (uint64_t i = 0; i < 8; i++)
		cache_unpin(c, e[i]);
	put(c, 9, 200u << 10);
	assert_true(cache_get_stats(c).bytes <= 1u << 20);
	assert_true(present(c, 9));
	cache_free(c);
}

/* A drop unlinks at once, pinned or not; the pinned data lives until its unpin. */
static void test_drop_pinned(void **state)
{
	struct cache *c = cache_new(1u << 20);
	struct cache_ent *e;
	int *p = cache_put(c, key(7), blob(), 64, NULL, &e);

	(void)state;
	*p = 42;
	cache_drop(c, key(7));
	assert_false(cache_is_kept(c, e));
	assert_false(present(c, 7));
	assert_int_equal(*p, 42);
	cache_unpin(c, e);
	cache_free(c);
}

/* An entry larger than the budget is handed out but never kept. */
static void test_too_big_detached(void **state)
{
	struct cache *c = cache_new(1u << 20);
	struct cache_ent *e;

	(void)state;
	put(c, 1, 100);
	assert_non_null(cache_put(c, key(2), blob(), 2u << 20, NULL, &e));
	assert_false(cache_is_kept(c, e));
	cache_unpin(c, e);
	assert_false(present(c, 2));
	assert_true(present(c, 1));
	cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lru_order),	     cmocka_unit_test(test_pinned_kept),
	    cmocka_unit_test(test_all_pinned),	     cmocka_unit_test(test_drop_pinned),
	    cmocka_unit_test(test_too_big_detached),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
