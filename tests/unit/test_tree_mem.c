/*
 * The cache is charged what a directory listing really costs on the heap (names, the entry
 * array, malloc's own overhead), so a budget bounds memory: a listing of 20000 short names
 * is measured with mallinfo2 against the cache's byte count; so is a stat of every file of a
 * model arena (each file's layout, the scene and what else sizes need). Skipped where mallinfo2
 * reports nothing (sanitizer builds replace malloc).
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/tree/tree.h"

static void test_listing_charge(void **state)
{
	char path[] = "/tmp/psgfs-mem.XXXXXX";
	struct gen_psk_opts o;
	struct tree_stat st;
	tree_ino bones = 0;
	struct tree_dir *d;
	struct cache_stats c0, c1;
	struct mallinfo2 m0, m1;
	struct tree *t;
	char why[256];
	struct buf b;
	int fd;

	(void)state;
	gen_psk_opts_default(&o, 2);
	o.bones = 20000;
	buf_init(&b);
	assert_int_equal(gen_psk_file(&o, &b), RC_OK);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
	close(fd);
	buf_free(&b);
	assert_int_equal(tree_open(path, NULL, &t, why, sizeof why), TREE_FAIL_NONE);
	unlink(path);
	/* The parse the listing needs is loaded by listing its parent (a stat of bones/ would
	 * build the listing itself, for its size). */
	assert_int_equal(tree_resolve(t, "skeleton", &st), RC_OK);
	assert_int_equal(tree_opendir(t, st.ino, &d), RC_OK);
	for (size_t i = 0; i < tree_dir_count(d); i++)
		if (!strcmp(tree_dir_name(d, i), "bones"))
			bones = tree_dir_ino(d, i);
	tree_closedir(t, d);
	assert_true(bones != 0);
	tree_get_stats(t, &c0, NULL);
	m0 = mallinfo2();
	assert_int_equal(tree_opendir(t, bones, &d), RC_OK);
	m1 = mallinfo2();
	tree_get_stats(t, &c1, NULL);
	assert_int_equal(tree_dir_count(d), 20000);
	if (m1.uordblks + m1.hblkhd <= m0.uordblks + m0.hblkhd) {
		tree_closedir(t, d);
		tree_close(t);
		skip(); /* mallinfo2 does not see this malloc */
	}
	/* The heap: small blocks (names) and mmap'd ones (the entry array). */
	size_t heap = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd);

	print_message("listing of 20000: heap %zu bytes, charged %llu\n", heap,
		      (unsigned long long)(c1.bytes - c0.bytes));
	/* Charged at least 90% of the heap it took (the handle itself is a few bytes). */
	assert_true((c1.bytes - c0.bytes) * 10 >= heap * 9);
	tree_closedir(t, d);
	tree_close(t);
}

static size_t heap_used(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

/* getattr of everything below ino; how many entries. */
static size_t stat_all(struct tree *t, tree_ino ino)
{
	struct tree_dir *d;
	struct tree_stat st;
	size_t n = 0;

	assert_int_equal(tree_opendir(t, ino, &d), RC_OK);
	for (size_t i = 0; i < tree_dir_count(d); i++) {
		assert_int_equal(tree_getattr(t, tree_dir_ino(d, i), &st), RC_OK);
		n++;
		if (st.type == TT_DIR)
			n += stat_all(t, st.ino);
	}
	tree_closedir(t, d);
	return n;
}

static void test_stat_everything_charge(void **state)
{
	char path[] = "/tmp/psgfs-mem.XXXXXX";
	struct psg_gen_record rec = {0};
	struct cache_stats c0, c1;
	struct tree *t;
	char why[256];
	size_t h0, h1, n;
	struct buf b;
	int fd;

	(void)state;
	buf_init(&b);
	assert_int_equal(gen_psg_sized(1 << 20, 1, &b, &rec), RC_OK);
	psg_gen_record_free(&rec);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
	close(fd);
	buf_free(&b);
	assert_int_equal(tree_open(path, NULL, &t, why, sizeof why), TREE_FAIL_NONE);
	unlink(path);
	tree_get_stats(t, &c0, NULL);
	h0 = heap_used();
	n = stat_all(t, TREE_ROOT_INO);
	h1 = heap_used();
	tree_get_stats(t, &c1, NULL);
	if (h1 <= h0) {
		tree_close(t);
		skip(); /* mallinfo2 does not see this malloc */
	}
	print_message("stat of %zu entries: heap %zu bytes, charged %llu, %llu evictions\n", n,
		      h1 - h0, (unsigned long long)(c1.bytes - c0.bytes),
		      (unsigned long long)(c1.evictions - c0.evictions));
	assert_int_equal(c1.evictions, c0.evictions); /* the default budget holds it all */
	/* Charged at least 90% of the heap the sizes took: what the budget bounds is what
	 * malloc holds. */
	assert_true((c1.bytes - c0.bytes) * 10 >= (h1 - h0) * 9);
	tree_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_listing_charge),
	    cmocka_unit_test(test_stat_everything_charge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
