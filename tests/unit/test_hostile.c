/*
 * The generated hostile-input set (tests/fuzz/mutate.c) against the whole tree, no FUSE.
 * Every mutant of generated PSK, PSA, static sky, skinned (PS3 and Xbox 360) and texture arenas
 * is opened as psgfs would: tree_open refuses it with FORMAT/DAMAGED/OPEN, or it mounts and
 * every file reads exactly st_size bytes, identically on two fresh renders (a sample, below),
 * or fails (EIO) both times; when anything failed, errors.txt is
 * non-empty (fuzz_tree_check).
 *
 * Memory bound: allocations are counted through -Wl,--wrap (malloc, calloc, realloc, strdup,
 * free; libpsgfs is linked statically, so all of its allocations are seen). No single
 * allocation may exceed HOSTILE_MAX_ALLOC(n) = 4 MiB + 64 x input size, and the live heap may
 * not grow by more than 16 MiB + 64 x input size while one mutant is mounted and walked: a tiny
 * file declaring 2^32 records allocates nothing large. The figures are printed.
 *
 * Sharding (tests/README.md): PSGFS_SHARD=K/N (1 <= K <= N) checks only the K-th of N
 * interleaved parts of the set, so meson runs the parts in parallel (hostile_1 .. hostile_N);
 * the union of the N shards is exactly the unsharded set. Unset: the whole set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitizer.h"
#include "harness.h"
#include "mutate.h"

#define HOSTILE_MAX_ALLOC(n) ((size_t)4 * 1024 * 1024 + 64 * (size_t)(n))
/* The two builds split the set (tests/README.md, "Keeping the suite fast"): under
 * AddressSanitizer, where every render costs about 2.4 times more, every fourth mutant; in the
 * plain build the other three in four. Their union is the whole set, each mutant checked once. */
#if PSGFS_ASAN
#define HOSTILE_ASAN_SHARE 1
#else
#define HOSTILE_ASAN_SHARE 0
#endif
/* FZT_TWICE reads a file twice through a cache of 1 byte, each range rendered afresh: the
 * range renderers alone, and determinism. A twice mutant costs about five plain ones, so one
 * sampled mutant in eight is read twice (in both builds). */
#define HOSTILE_MAX_PEAK(n) ((size_t)16 * 1024 * 1024 + 64 * (size_t)(n))

#include "alloc_count.h"

/* ---- the hostile set ---- */

/* This process's part of the set (PSGFS_SHARD=K/N, 0-based here); the whole set when unset. */
static unsigned shard_k, shard_n = 1;

static void shard_from_env(void)
{
	const char *s = getenv("PSGFS_SHARD");
	unsigned k, n;
	char end;

	if (!s || !*s)
		return;
	/* A malformed value must not silently shrink the set to nothing. */
	assert_true(sscanf(s, "%u/%u%c", &k, &n, &end) == 2 && n >= 1 && k >= 1 && k <= n);
	shard_k = k - 1;
	shard_n = n;
}

/* Sampled mutant `pick` is read twice: one in eight, the first of a block of 4 in alternate
 * runs of 8 blocks, so shards dealt blocks in turn each keep half of theirs. */
static bool twice(size_t pick)
{
	return pick % 4 == 0 && pick / 32 % 2 == 0;
}

struct tally {
	const char *base;
	size_t seen;   /* mutants made */
	size_t picked; /* of those, this build's share */
	size_t inputs, mounted, refused[5], files, failed_files, mutants_with_failures;
	size_t bad;		/* broken invariants */
	size_t max_alloc;	/* largest single allocation seen */
	long long max_peak;	/* largest heap growth during one mutant */
	size_t max_alloc_input; /* size of the input that made it */
};

static void one(void *ctx, const char *what, const uint8_t *p, size_t n)
{
	struct tally *t = ctx;
	struct fuzz_tree_result r;
	long long live0 = live;
	size_t pick;
	int rc;

	if ((t->seen++ % 4 == 0) != HOSTILE_ASAN_SHARE)
		return;
	/* pick numbers the sampled mutants; shards take blocks of four in turn, so each shard
	 * gets its share of the twice-read and Z-up ones and of every base's mutants. */
	pick = t->picked++;
	if (pick / 4 % shard_n != shard_k)
		return;
	max_req = 0;
	peak = live;
	/* Some are read twice through fresh renders (above); every other one exports Z-up. */
	rc = fuzz_tree_check(p, n, (twice(pick) ? FZT_TWICE : 0) | (pick & 2 ? FZT_ZUP : 0), &r);
	t->inputs++;
	if (rc != 0) {
		if (t->bad++ < 20)
			print_message("FAIL %s: %s (%zu bytes): %s\n", t->base, what, n, r.problem);
	}
	if (r.open == TREE_FAIL_NONE) {
		t->mounted++;
		t->files += r.files;
		t->failed_files += r.failed;
		t->mutants_with_failures += r.failed > 0;
	} else {
		t->refused[r.open]++;
	}
	if (max_req > t->max_alloc) {
		t->max_alloc = max_req;
		t->max_alloc_input = n;
	}
	if (peak - live0 > t->max_peak)
		t->max_peak = peak - live0;
	if (max_req > HOSTILE_MAX_ALLOC(n) || peak - live0 > (long long)HOSTILE_MAX_PEAK(n)) {
		if (t->bad++ < 20)
			print_message(
			    "FAIL %s: %s (%zu bytes): allocation of %zu, heap growth %lld\n",
			    t->base, what, n, max_req, peak - live0);
	}
}

/* The bases: one of each kind; the other seeds feed the fuzzers. */
static const char *const bases[] = {
    "psk_full", "psk_hostile_names", "psa_scale_keys", "psa_hostile_names",
    "sky",	"skinned",	     "textures_small", "x360_skinned_alt"};

static void test_hostile_set(void **state)
{
	struct fuzz_seed *v;
	size_t n, total = 0, total_bad = 0;

	(void)state;
	shard_from_env();
	assert_int_equal(fuzz_seeds_make(&v, &n), 0);
	for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
		struct tally t = {.base = bases[b]};
		size_t i;

		for (i = 0; i < n && strcmp(v[i].name, bases[b]); i++)
			;
		assert_true(i < n);
		size_t made = fuzz_mutants(v[i].data, v[i].len, 0x5eed + b, one, &t);
		assert_int_equal(made, t.seen);
		/* The whole sampled set is large, and this shard has its share of it. */
		assert_true(t.picked > 100);
		assert_true(t.inputs >= t.picked / (4 * shard_n) * 4);
		print_message("%-18s %6zu inputs: %zu mounted (%zu with failing files, %zu of %zu "
			      "files failed), refused %zu format %zu damaged %zu open; largest "
			      "allocation %zu (input %zu), heap growth %lld\n",
			      bases[b], t.inputs, t.mounted, t.mutants_with_failures,
			      t.failed_files, t.files, t.refused[TREE_FAIL_FORMAT],
			      t.refused[TREE_FAIL_DAMAGED], t.refused[TREE_FAIL_OPEN], t.max_alloc,
			      t.max_alloc_input, t.max_peak);
		total += t.inputs;
		total_bad += t.bad;
	}
	print_message("hostile set (shard %u/%u, %s): %zu inputs tried, %zu broken "
		      "invariants\n",
		      shard_k + 1, shard_n,
		      HOSTILE_ASAN_SHARE ? "every 4th mutant" : "3 mutants in 4", total, total_bad);
	fuzz_seeds_free(v, n);
	assert_int_equal(total_bad, 0);
}

/* The accounting itself must see a large allocation, or the bound above proves nothing. */
static void test_accounting_works(void **state)
{
	static void *volatile keep;

	(void)state;
	max_req = 0;
	keep = malloc(HOSTILE_MAX_ALLOC(0) + 1);
	assert_non_null(keep);
	assert_true(max_req > HOSTILE_MAX_ALLOC(0));
	free(keep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_accounting_works),
	    cmocka_unit_test(test_hostile_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
