/*
 * Inode numbers cannot collide. A number is slot << 32 | node (src/tree/core/tree_int.h): the node
 * packs (kind, a, b) into 32 bits plus one, the slot names a folder entry (folder.c: the
 * source inode number below 2^31 on the mounted file system, else a sequence from 2^31). Checked
 * here: packing round-trips and is injective over its whole domain, corners included; every
 * format's kind table fits it; nodes past the limits are left out of listings instead of
 * wrapping; 100k assets with deep trees give 100k x 64 distinct numbers; and a real folder (hard
 * links, nested folders, assets) gets distinct numbers that are the same after a reopen.
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/prng.h"
#include "tree/core/tree_int.h"

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Sorted in place; the first duplicate's index, or n when all differ. */
static size_t first_dup(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
	for (size_t i = 1; i < n; i++)
		if (v[i] == v[i - 1])
			return i;
	return n;
}

static struct tnode random_node(struct prng *r)
{
	/* Half the draws at the edges of each field, where packing mistakes show. */
	uint32_t kind = prng_below(r, 2) ? prng_below(r, TNODE_KIND_MAX + 1)
					 : (prng_below(r, 2) ? 0 : TNODE_KIND_MAX);
	uint32_t a = prng_below(r, 2) ? prng_below(r, TNODE_A_MAX + 1)
				      : (prng_below(r, 2) ? 0 : TNODE_A_MAX - prng_below(r, 2));
	uint32_t b = prng_below(r, 2) ? prng_below(r, TNODE_B_MAX + 1)
				      : (prng_below(r, 2) ? 0 : TNODE_B_MAX);

	return tn((uint8_t)kind, a, (uint8_t)b);
}

static void test_pack_roundtrip(void **state)
{
	struct prng r;

	(void)state;
	prng_seed(&r, 1);
	for (int i = 0; i < 1000000; i++) {
		struct tnode n = random_node(&r), back;
		uint32_t p = tnode_pack(n);

		assert_int_not_equal(p, 0); /* 0 is never a node */
		back = tnode_unpack(p);
		assert_int_equal(back.kind, n.kind);
		assert_int_equal(back.a, n.a);
		assert_int_equal(back.b, n.b);
	}
}

static void test_pack_corners(void **state)
{
	(void)state;
	assert_int_equal(tnode_pack(tn(0, 0, 0)), 1); /* an asset's root: node 1 */
	assert_int_equal(tnode_pack(tn(TNODE_KIND_MAX, TNODE_A_MAX, TNODE_B_MAX)), 0xFC000000u);
	assert_int_equal(tnode_pack(tn(0, 0, 1)), 2);
	assert_int_equal(tnode_pack(tn(0, 1, 0)), 65);
	assert_int_equal(tnode_pack(tn(1, 0, 0)), (1u << 26) + 1);
	assert_true(ino_make(0, tn(0, 0, 0)) == TREE_ROOT_INO);
	assert_true(ino_make(UINT32_MAX, tn(TNODE_KIND_MAX, TNODE_A_MAX, TNODE_B_MAX)) ==
		    (0xFFFFFFFFull << 32 | 0xFC000000u));
	assert_int_equal(ino_slot(ino_make(0x80000000u, tn(3, 4, 5))), 0x80000000u);
}

/* Every (kind, b) for a set of a values, plus a million random nodes: no two pack alike. */
static void test_pack_injective(void **state)
{
	static const uint32_t as[] = {
	    0, 1, 2, 63, 64, 65, 4095, 65535, 65536, TNODE_A_MAX - 1, TNODE_A_MAX};
	size_t n_grid = (TNODE_KIND_MAX + 1) * (TNODE_B_MAX + 1) * (sizeof as / sizeof as[0]);
	uint64_t *v = malloc(sizeof *v * n_grid);
	size_t k = 0;
	struct prng r;

	(void)state;
	assert_non_null(v);
	for (uint32_t kind = 0; kind <= TNODE_KIND_MAX; kind++)
		for (size_t i = 0; i < sizeof as / sizeof as[0]; i++)
			for (uint32_t b = 0; b <= TNODE_B_MAX; b++)
				v[k++] = tnode_pack(tn((uint8_t)kind, as[i], (uint8_t)b));
	assert_int_equal(first_dup(v, k), k);
	free(v);
	/* Random nodes: equal packs only for equal nodes (duplicates drawn twice are fine). */
	prng_seed(&r, 2);
	v = malloc(sizeof *v * 1000000);
	assert_non_null(v);
	for (k = 0; k < 1000000; k++) {
		struct tnode n = random_node(&r);

		v[k] = (uint64_t)tnode_pack(n) << 32 | (uint64_t)n.kind << 26 | n.a << 6 | n.b;
	}
	qsort(v, k, sizeof *v, cmp_u64);
	for (size_t i = 1; i < k; i++)
		if (v[i] >> 32 == v[i - 1] >> 32)
			assert_true((uint32_t)v[i] == (uint32_t)v[i - 1]);
	free(v);
}

static void test_kind_tables_fit(void **state)
{
	const struct tree_format *f[] = {&tree_format_psk, &tree_format_psa, &tree_format_psg,
					 &tree_format_plain, &tree_format_broken};

	(void)state;
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		print_message("%s: %u kinds\n", f[i]->name, f[i]->n_kinds);
		assert_true(f[i]->n_kinds >= 1 && f[i]->n_kinds <= TNODE_KIND_MAX);
	}
}

/* Nodes whose indices do not fit are left out, never wrapped onto another node's number. */
static void test_listing_skips_past_limits(void **state)
{
	struct asset as = {.slot = 7, .fmt = &tree_format_broken};
	struct tlist l = {.as = &as};

	(void)state;
	tlist_add(&l, tn(1, TNODE_A_MAX + 1, 0), "a-too-big");
	tlist_add(&l, tn(1, 0, TNODE_B_MAX + 1), "b-too-big");
	tlist_add(&l, tn((uint8_t)tree_format_broken.n_kinds, 0, 0), "no-such-kind");
	assert_int_equal(l.n, 0);
	tlist_add(&l, tn(1, TNODE_A_MAX, TNODE_B_MAX), "fits");
	assert_int_equal(l.n, 1);
	assert_true(l.v[0].ino == ino_make(7, tn(1, TNODE_A_MAX, TNODE_B_MAX)));
	assert_string_equal(l.names + l.v[0].name, "fits");
	tlist_discard(&l);
}

/*
 * 100k assets as a folder mount numbers them (source inode numbers below 2^31, a sequence from
 * 2^31 for the rest, the extreme slots), each with 64 nodes of a deep tree (random, corners),
 * plus each entry's own number (node 1) and the root: 6.5 million numbers, all distinct.
 */
static void test_100k_assets_deep_trees(void **state)
{
	enum { N_ASSETS = 100000, N_NODES = 64 };
	uint32_t *slot = malloc(sizeof *slot * N_ASSETS);
	size_t n = (size_t)N_ASSETS * (N_NODES + 1) + 1, k = 0;
	uint64_t *v = malloc(sizeof *v * n);
	struct prng r;

	(void)state;
	assert_non_null(slot);
	assert_non_null(v);
	prng_seed(&r, 3);
	for (uint32_t i = 0; i < N_ASSETS; i++) {
		if (i < 4) /* the edges of both ranges */
			slot[i] = (uint32_t[]){1, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu}[i];
		else if (i % 10 == 0)
			slot[i] = 0x80000000u + i; /* the sequence */
		else /* source inode numbers spread over [1, 2^31): i times an odd number */
			slot[i] = (i * 0x9E3779B1u) & 0x7FFFFFFFu;
	}
	/* Slots are distinct by construction in folder.c (slot_for checks the table). */
	for (uint32_t i = 0; i < N_ASSETS; i++)
		v[i] = slot[i];
	assert_int_equal(first_dup(v, N_ASSETS), N_ASSETS);
	v[k++] = TREE_ROOT_INO;
	for (uint32_t i = 0; i < N_ASSETS; i++) {
		v[k++] = ino_make(slot[i], tn(0, 0, 0)); /* the entry itself = the asset's root */
		for (uint32_t j = 0; j < N_NODES; j++) {
			struct tnode nd;

			/* Distinct nodes of one tree (b = j), with kinds, indices at the top of
			 * their ranges and random ones. */
			nd.kind = (uint8_t)(j % (TNODE_KIND_MAX + 1));
			nd.a = j < 8 ? TNODE_A_MAX - j : prng_below(&r, TNODE_A_MAX + 1);
			nd.b = (uint8_t)(j & TNODE_B_MAX);
			if (nd.kind == 0 && nd.a == 0 && nd.b == 0)
				nd.a = 1;
			v[k++] = ino_make(slot[i], nd);
		}
	}
	assert_int_equal(k, n);
	assert_int_equal(first_dup(v, n), n);
	assert_true(v[0] == TREE_ROOT_INO); /* sorted: nothing below the root's number */
	free(v);
	free(slot);
}

/* ---- a real folder through tree_open ---- */

static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
}

/* 20 folders x 100 files (every 10th a sky arena), 200 hard links, links, nesting. */
static void make_folder(void)
{
	char p[256], q[256];
	struct buf sky;

	buf_init(&sky);
	assert_int_equal(gen_psg_sky(0, &sky, NULL), RC_OK);
	snprintf(dir, sizeof dir, "/tmp/psgfs-ino.XXXXXX");
	assert_non_null(mkdtemp(dir));
	for (int d = 0; d < 20; d++) {
		snprintf(p, sizeof p, "%s/d%02d", dir, d);
		assert_int_equal(mkdir(p, 0755), 0);
		snprintf(p, sizeof p, "%s/d%02d/deeper", dir, d);
		assert_int_equal(mkdir(p, 0755), 0);
		for (int f = 0; f < 100; f++) {
			snprintf(p, sizeof p, "%s/d%02d/%s%03d.psg", dir, d, f % 2 ? "deeper/" : "",
				 f);
			if (f % 10 == 0)
				write_file(p, sky.data, sky.len);
			else
				write_file(p, p, strlen(p));
			if (f % 10 == 1) { /* a second path to the same file */
				snprintf(q, sizeof q, "%s/d%02d/hard%03d", dir, d, f);
				assert_int_equal(link(p, q), 0);
			}
		}
		snprintf(p, sizeof p, "%s/d%02d/up", dir, d);
		assert_int_equal(symlink("..", p), 0);
	}
	buf_free(&sky);
}

struct seen {
	uint64_t *v;
	size_t n, cap;
};

static void seen_add(struct seen *s, uint64_t ino)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->v = realloc(s->v, sizeof *s->v * s->cap);
		assert_non_null(s->v);
	}
	s->v[s->n++] = ino;
}

/* Every number of the tree in walk order (assets entered too). */
static void walk(struct tree *t, tree_ino ino, struct seen *s)
{
	struct tree_dir *d;

	assert_int_equal(tree_opendir(t, ino, &d), RC_OK);
	for (size_t i = 0; i < tree_dir_count(d); i++) {
		seen_add(s, tree_dir_ino(d, i));
		if (tree_dir_type(d, i) == TT_DIR)
			walk(t, tree_dir_ino(d, i), s);
	}
	tree_closedir(t, d);
}

static void walk_folder(struct seen *s)
{
	struct tree_opts o = {.max_assets = 4};
	struct tree *t;
	char why[256];

	assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	seen_add(s, TREE_ROOT_INO);
	walk(t, TREE_ROOT_INO, s);
	tree_close(t);
}

static void test_real_folder(void **state)
{
	struct seen a = {0}, b = {0};
	uint64_t *sorted;
	struct stat st;
	char p[256];
	struct tree *t;
	struct tree_stat ts;
	char why[256];
	size_t seq = 0;

	(void)state;
	make_folder();
	walk_folder(&a);
	walk_folder(&b);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.v, b.v, a.n * sizeof *a.v); /* the same after a reopen */
	sorted = malloc(a.n * sizeof *sorted);
	assert_non_null(sorted);
	memcpy(sorted, a.v, a.n * sizeof *sorted);
	assert_int_equal(first_dup(sorted, a.n), a.n);
	for (size_t i = 0; i < a.n; i++)
		seq += ino_slot(sorted[i]) >= 0x80000000u && (uint32_t)sorted[i] == 1;
	print_message("%zu numbers, %zu entries in the sequence range (the 200 second paths)\n",
		      a.n, seq);
	assert_int_equal(seq, 200);
	/* A file with one path: its slot is its source inode number. */
	assert_int_equal(tree_open(dir, NULL, &t, why, sizeof why), TREE_FAIL_NONE);
	snprintf(p, sizeof p, "%s/d07/deeper/003.psg", dir);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(tree_resolve(t, "d07", &ts), RC_OK);
	assert_int_equal(tree_resolve(t, "d07/deeper/003.psg", &ts), RC_OK);
	if (st.st_ino < 0x80000000u)
		assert_true(ts.ino == ((uint64_t)st.st_ino << 32 | 1));
	tree_close(t);
	free(sorted);
	free(a.v);
	free(b.v);
	assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* A listing of n equal names plus `extra` (names it already has), finished: every name once,
 * sorted, the first of the run keeping its name (tree.c dedupe; issue 20 section 5: 17 equal
 * names kept a duplicate, 4,000 kept 249). */
static void check_unique(size_t n, const char *const *extra, size_t n_extra)
{
	struct asset as = {.slot = 3, .fmt = &tree_format_broken};
	struct tlist l = {.as = &as};
	struct tree_dir *d;
	size_t found_x = 0;

	for (size_t i = 0; i < n; i++)
		tlist_add_ino(&l, (tree_ino)3 << 32 | (i + 10), TT_FILE, "x");
	for (size_t i = 0; i < n_extra; i++)
		tlist_add_ino(&l, (tree_ino)3 << 32 | (i + 1), TT_FILE, extra[i]);
	assert_int_equal(tlist_finish(&l, &d), RC_OK);
	assert_int_equal(tree_dir_count(d), n + n_extra);
	for (size_t i = 0; i < tree_dir_count(d); i++) {
		const char *nm = tree_dir_name(d, i);

		if (i)
			assert_true(strcmp(tree_dir_name(d, i - 1), nm) < 0); /* sorted, unique */
		if (!strcmp(nm, "x"))
			assert_true(tree_dir_ino(d, i) == ((tree_ino)3 << 32 | 10)); /* the first */
		found_x += !strncmp(nm, "x", 1);
	}
	for (size_t i = 0; i < n_extra; i++) { /* the first of each name keeps it */
		size_t k = 0;

		if (i && !strcmp(extra[i], extra[i - 1]))
			continue;
		while (k < tree_dir_count(d) && strcmp(tree_dir_name(d, k), extra[i]))
			k++;
		assert_true(k < tree_dir_count(d));
		assert_true(tree_dir_ino(d, k) == ((tree_ino)3 << 32 | (i + 1)));
	}
	print_message("%zu equal names (+%zu): %zu unique names starting with x\n", n, n_extra,
		      found_x);
	tree_dir_free(d);
}

static void test_listing_dedupe(void **state)
{
	static const char *const taken[] = {"x~2", "x~3", "x~10", "x~2~2", "y"};
	static const char *const runs[] = {"x~2", "x~2", "x~2", "x~3", "x~3"};

	(void)state;
	check_unique(2, NULL, 0);
	check_unique(17, NULL, 0);
	check_unique(40, NULL, 0);
	check_unique(40, taken, 5);
	check_unique(40, runs, 5); /* runs of generated-looking names: x~2~2, x~3~2... */
	check_unique(4000, NULL, 0);
	check_unique(4000, taken, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pack_roundtrip),
	    cmocka_unit_test(test_pack_corners),
	    cmocka_unit_test(test_pack_injective),
	    cmocka_unit_test(test_kind_tables_fit),
	    cmocka_unit_test(test_listing_skips_past_limits),
	    cmocka_unit_test(test_listing_dedupe),
	    cmocka_unit_test(test_100k_assets_deep_trees),
	    cmocka_unit_test(test_real_folder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
