/*
 * The cache is charged what a directory listing really costs on the heap (names, the entry
 * array, malloc's own overhead), so a budget bounds memory: a listing of 20000 short names
 * is measured with mallinfo2 against the cache's byte count; so is a stat of every file of a
 * model arena (each file's layout, the scene and what else sizes need). Skipped where mallinfo2
 * reports nothing (sanitizer builds replace malloc). A dictionary claiming millions of rows the
 * file does not store (a hole) costs a few KiB, alone or in a folder.
 */
#include <fcntl.h>
#include <malloc.h>
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
#include "psgfs/gen/gen_psg_textures.h"
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

/* A folder mount's entry table (one entry per source file: its stat, name, children) is
 * permanent and charged to the cache like everything else it keeps, so the budget bounds a
 * folder of many files too: listing a source folder of 3,000 files costs the heap what the
 * cache is charged, entries included (issue 29, folder memory). */
static void test_folder_entries_charge(void **state)
{
	char root[] = "/tmp/psgfs-fmem.XXXXXX", p[512];
	struct tree_stat st;
	struct tree_dir *d;
	struct cache_stats c0, c1;
	struct tree *t;
	size_t h0, h1, n;
	char why[256];

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof p, "%s/many", root);
	assert_int_equal(mkdir(p, 0755), 0);
	for (int i = 0; i < 3000; i++) { /* plain files by name: nothing is opened */
		int fd;

		snprintf(p, sizeof p, "%s/many/readme_of_the_unpacked_archive_%04d.txt", root, i);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	assert_int_equal(tree_open(root, NULL, &t, why, sizeof why), TREE_FAIL_NONE);
	assert_int_equal(tree_resolve(t, "many", &st), RC_OK);
	tree_get_stats(t, &c0, NULL);
	h0 = heap_used();
	assert_int_equal(tree_opendir(t, st.ino, &d), RC_OK);
	n = tree_dir_count(d);
	tree_closedir(t, d);
	h1 = heap_used();
	tree_get_stats(t, &c1, NULL);
	assert_int_equal(n, 3000);
	for (int i = 0; i < 3000; i++) {
		snprintf(p, sizeof p, "%s/many/readme_of_the_unpacked_archive_%04d.txt", root, i);
		unlink(p);
	}
	snprintf(p, sizeof p, "%s/many", root);
	rmdir(p);
	rmdir(root);
	if (h1 <= h0) {
		tree_close(t);
		skip(); /* mallinfo2 does not see this malloc */
	}
	print_message("folder of 3000: heap %zu bytes, charged %llu\n", h1 - h0,
		      (unsigned long long)(c1.bytes - c0.bytes));
	/* Charged at least 90% of the heap it took (entries, their names, the listing). */
	assert_true((c1.bytes - c0.bytes) * 10 >= (h1 - h0) * 9);
	tree_close(t);
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

/* Read a listing as ll.c does: a request per 100 entries, each opening the listing anew (there
 * is no handle). Returns how many entries came; checks they are sorted and unique. */
static size_t read_chunked(struct tree *t, tree_ino ino)
{
	char last[300] = "";
	size_t n = 0, total;

	do {
		struct tree_dir *d;

		assert_int_equal(tree_opendir(t, ino, &d), RC_OK);
		total = tree_dir_count(d);
		for (size_t k = 0; k < 100 && n < total; k++, n++) {
			assert_true(strcmp(last, tree_dir_name(d, n)) < 0);
			snprintf(last, sizeof last, "%s", tree_dir_name(d, n));
		}
		tree_closedir(t, d);
	} while (n < total);
	return n;
}

/*
 * A listing larger than the whole cache is built once per reading, however many requests read
 * it (issue 21 item 4: it was built again for every request, n/100 builds of n entries: a
 * folder of 60,000 files took 25 s at a 1M budget), and lookups in it while it is read use the
 * same build. Counted by the cache's insertions: every build inserts.
 */
static void test_listing_built_once(void **state)
{
	char path[] = "/tmp/psgfs-mem.XXXXXX";
	struct tree_opts opts = {.cache_bytes = 1 << 20};
	struct cache_stats c0, c1;
	struct gen_psk_opts o;
	struct tree_stat st;
	struct tree *t;
	char why[256];
	struct buf b;
	size_t n;
	int fd;

	(void)state;
	gen_psk_opts_default(&o, 5);
	o.bones = 60000;
	buf_init(&b);
	assert_int_equal(gen_psk_file(&o, &b), RC_OK);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
	close(fd);
	buf_free(&b);
	assert_int_equal(tree_open(path, &opts, &t, why, sizeof why), TREE_FAIL_NONE);
	unlink(path);
	assert_int_equal(tree_resolve(t, "skeleton/bones", &st), RC_OK);
	tree_get_stats(t, &c0, NULL);
	n = read_chunked(t, st.ino);
	tree_get_stats(t, &c1, NULL);
	print_message("60000 bones at a 1M budget: %zu entries in %zu requests, %llu insertions "
		      "(the listing and its parse), peak %llu bytes charged\n",
		      n, (n + 99) / 100, (unsigned long long)(c1.inserts - c0.inserts),
		      (unsigned long long)c1.peak_bytes);
	assert_int_equal(n, 60000);
	assert_true(c1.inserts - c0.inserts <= 4);
	for (int k = 0; k < 1000; k++) { /* lookups, as ls -l and shells do next (names that are
					  * not there: nothing else is built) */
		struct tree_stat f;
		char name[64];

		snprintf(name, sizeof name, "%03d.bone_%d.tmp", k * 60, k * 60);
		assert_int_equal(tree_lookup(t, st.ino, name, &f), RC_NOENT);
	}
	tree_get_stats(t, &c0, NULL);
	print_message("1000 lookups in it: %llu insertions\n",
		      (unsigned long long)(c0.inserts - c1.inserts));
	assert_true(c0.inserts - c1.inserts <= 4);
	tree_close(t);
}

/* A sky arena whose dictionary claims `rows` rows, the extra ones a hole: written to a new file
 * in dir (sparse, a few KiB on disk); its path in out. */
static void write_sparse_sky(const char *dir, int k, uint32_t rows, char *out, size_t n)
{
	uint64_t size = 0;
	struct buf b;
	int fd;

	buf_init(&b);
	assert_int_equal(gen_psg_sky(0, &b, NULL), RC_OK);
	assert_int_equal(gen_psg_sparse_rows(&b, rows, &size), RC_OK);
	snprintf(out, n, "%s/sparse%d.psg", dir, k);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
	buf_free(&b);
}

/*
 * Issue 21 item 5: what a mount holds is bounded by what the file really contains. A dictionary
 * claiming 2,000,000 rows of which 12 are stored (the rest a hole: zero rows) took 40 bytes per
 * claimed row (80 MB) at tree_open; kept as runs of identical rows it takes a few KiB, charged
 * to the budget. Then a folder of 8 of them, every asset open at once: still a few KiB each.
 */
static void test_claimed_rows_cost_nothing(void **state)
{
	char dir[] = "/tmp/psgfs-mem.XXXXXX", path[300], name[64];
	struct cache_stats c;
	struct tree_stat st;
	struct tree *t;
	char why[256];
	size_t h0, h1;

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_sparse_sky(dir, 0, 2000000, path, sizeof path);
	h0 = heap_used();
	assert_int_equal(tree_open(path, NULL, &t, why, sizeof why), TREE_FAIL_NONE);
	assert_int_equal(tree_resolve(t, "info.txt", &st), RC_OK);
	h1 = heap_used();
	tree_get_stats(t, &c, NULL);
	print_message("2,000,000 claimed rows (12 stored): heap %zu bytes after opening, %llu "
		      "charged\n",
		      h1 - h0, (unsigned long long)c.bytes);
	if (h1 > h0) {				   /* mallinfo2 sees this malloc */
		assert_true(h1 - h0 < 256 * 1024); /* 80 MB before */
	}
	assert_true(c.bytes > 0 && c.bytes < 64 * 1024); /* the parse is charged, and small */
	tree_close(t);
	unlink(path);

	for (int k = 0; k < 8; k++)
		write_sparse_sky(dir, k, 1000000 + 1000 * k, path, sizeof path);
	h0 = heap_used();
	assert_int_equal(tree_open(dir, NULL, &t, why, sizeof why), TREE_FAIL_NONE);
	for (int k = 0; k < 8; k++) {
		snprintf(name, sizeof name, "sparse%d.psg/info.txt", k);
		assert_int_equal(tree_resolve(t, name, &st), RC_OK);
	}
	h1 = heap_used();
	tree_get_stats(t, &c, NULL);
	print_message("a folder of 8 (1,000,000+ claimed rows each), all open: heap %zu bytes, "
		      "%llu charged\n",
		      h1 - h0, (unsigned long long)c.bytes);
	if (h1 > h0)
		assert_true(h1 - h0 < 2 * 1024 * 1024);
	tree_close(t);
	for (int k = 0; k < 8; k++) {
		snprintf(path, sizeof path, "%s/sparse%d.psg", dir, k);
		unlink(path);
	}
	rmdir(dir);
}

/* A texture arena whose dictionary claims 3,000,000 rows the file leaves as a hole: listing
 * textures/ is charged what its names hold (a few KiB), not 40 bytes per claimed row (120 MB,
 * which emptied the cache at every listing). */
static void test_claimed_rows_texture_names(void **state)
{
	char path[] = "/tmp/psgfs-mem.XXXXXX";
	struct gen_tex_opts o = {0};
	struct cache_stats c;
	struct tree_stat st;
	struct tree_dir *d;
	uint64_t size = 0;
	struct tree *t;
	char why[256];
	struct buf b;
	int fd;

	(void)state;
	o.specs = gen_tex_default_specs(&o.n_specs);
	buf_init(&b);
	assert_int_equal(gen_psg_textures(&o, &b, NULL, NULL), RC_OK);
	assert_int_equal(gen_psg_sparse_rows(&b, 3000000, &size), RC_OK);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
	buf_free(&b);
	assert_int_equal(tree_open(path, NULL, &t, why, sizeof why), TREE_FAIL_NONE);
	unlink(path);
	assert_int_equal(tree_resolve(t, "textures", &st), RC_OK);
	assert_int_equal(tree_opendir(t, st.ino, &d), RC_OK);
	assert_true(tree_dir_count(d) > 10);
	tree_closedir(t, d);
	tree_get_stats(t, &c, NULL);
	print_message("textures/ of an arena claiming 3,000,000 rows: %llu bytes charged, %llu "
		      "evictions\n",
		      (unsigned long long)c.bytes, (unsigned long long)c.evictions);
	assert_true(c.bytes < 2 * 1024 * 1024);
	assert_int_equal(c.evictions, 0);
	tree_close(t);
}

/* Read a whole file through the tree into a fresh buffer; its length in *n. */
static uint8_t *read_all(struct tree *t, tree_ino ino, size_t *n)
{
	struct tree_stat st;
	uint8_t *p;
	size_t got = 0;

	assert_int_equal(tree_getattr(t, ino, &st), RC_OK);
	p = malloc(st.size + 1);
	assert_non_null(p);
	while (got < st.size) {
		size_t k = 0;

		assert_int_equal(tree_read(t, ino, got, 1 << 16, p + got, &k), RC_OK);
		assert_true(k > 0);
		got += k;
	}
	*n = got;
	return p;
}

/*
 * Issue 21, amplification: sequences whose keys are the same range of ANIMKEYS show the same
 * keys.tsv and scale_keys.tsv, and share one layout (one counting pass) and its pieces. 400
 * sequences that all cover every key: sizing every keys.tsv and scale_keys.tsv builds two
 * layouts, not 800; the bytes are the same and exactly st_size long.
 */
static void test_overlapping_keys_one_pass(void **state)
{
	char path[] = "/tmp/psgfs-mem.XXXXXX";
	tree_ino keys[400], scale[400];
	struct gen_psa_opts o;
	struct cache_stats c0, c1;
	struct tree_dir *d, *sd;
	struct tree_stat st, s0, s1;
	size_t n = 0, la, lb;
	uint8_t *a, *b;
	struct tree *t;
	char why[256];
	struct buf bf;
	int fd;

	(void)state;
	gen_psa_opts_default(&o, 9);
	o.bones = 2;
	o.sequences = 400;
	o.max_frames = 2000;
	o.scale_keys = true;
	o.overlap = true;
	buf_init(&bf);
	assert_int_equal(gen_psa_file(&o, &bf), RC_OK);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, bf.data, bf.len), (ssize_t)bf.len);
	close(fd);
	buf_free(&bf);
	assert_int_equal(tree_open(path, NULL, &t, why, sizeof why), TREE_FAIL_NONE);
	unlink(path);
	assert_int_equal(tree_resolve(t, "sequences", &st), RC_OK);
	assert_int_equal(tree_opendir(t, st.ino, &d), RC_OK);
	for (size_t i = 0; i < tree_dir_count(d); i++) {
		assert_true(n < 400);
		keys[n] = scale[n] = 0;
		assert_int_equal(tree_opendir(t, tree_dir_ino(d, i), &sd), RC_OK);
		for (size_t j = 0; j < tree_dir_count(sd); j++) {
			if (!strcmp(tree_dir_name(sd, j), "keys.tsv"))
				keys[n] = tree_dir_ino(sd, j);
			if (!strcmp(tree_dir_name(sd, j), "scale_keys.tsv"))
				scale[n] = tree_dir_ino(sd, j);
		}
		tree_closedir(t, sd);
		assert_true(keys[n] && scale[n]);
		n++;
	}
	tree_closedir(t, d);
	assert_int_equal(n, 400);
	tree_get_stats(t, &c0, NULL);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(tree_getattr(t, keys[i], &s0), RC_OK);
		assert_int_equal(tree_getattr(t, scale[i], &s1), RC_OK);
		if (i == 0) {
			st = s0;
			la = s1.size;
		}
		assert_int_equal(s0.size, st.size);
		assert_int_equal(s1.size, la);
	}
	tree_get_stats(t, &c1, NULL);
	print_message(
	    "400 overlapping sequences: every keys.tsv and scale_keys.tsv sized with %llu "
	    "insertions (keys.tsv %llu bytes each)\n",
	    (unsigned long long)(c1.inserts - c0.inserts), (unsigned long long)st.size);
	assert_true(c1.inserts - c0.inserts <= 2);
	a = read_all(t, keys[0], &la);
	b = read_all(t, keys[n - 1], &lb);
	assert_int_equal(la, st.size);
	assert_int_equal(lb, st.size);
	assert_memory_equal(a, b, la);
	assert_true(la > 2000 * 2 * 20); /* every frame of both bones */
	free(a);
	free(b);
	tree_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_listing_charge),
	    cmocka_unit_test(test_folder_entries_charge),
	    cmocka_unit_test(test_stat_everything_charge),
	    cmocka_unit_test(test_listing_built_once),
	    cmocka_unit_test(test_claimed_rows_cost_nothing),
	    cmocka_unit_test(test_claimed_rows_texture_names),
	    cmocka_unit_test(test_overlapping_keys_one_pass),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
