/*
 * The cache is charged what a directory listing really costs on the heap (names, the entry
 * array, malloc's own overhead), so a budget bounds memory: a listing of 20000 short names
 * is measured with mallinfo2 against the cache's byte count. Skipped where mallinfo2 reports
 * nothing (sanitizer builds replace malloc).
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

#include "psgfs/gen_psk.h"
#include "psgfs/tree.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_listing_charge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
