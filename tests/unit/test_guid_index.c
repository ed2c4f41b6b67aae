/*
 * The index of per-texture arenas by name (src/tree/guid_index.c) and the folder layer's walk
 * that fills it (folder.c): which names are GUID arenas, lookups ordered by platform then
 * path, feeding before and after the build, the build run once and only on the first lookup
 * (never at mount time), the walk seeing every folder but never links, and a path found
 * through the folder layer as a slot.
 */
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

#include "psgfs/tree/tree.h"
#include "tree/guid_index.h"
#include "tree/tree_int.h"

#define G 0x2C7F381800171907ull

static void test_names(void **state)
{
	uint64_t g = 0;

	(void)state;
	assert_true(guid_index_name("0x2c7f381800171907.psg", &g));
	assert_int_equal(g, G);
	g = 0;
	assert_true(guid_index_name("0X2C7F381800171907.PSG", &g));
	assert_int_equal(g, G);
	assert_true(guid_index_name("0x2c7f381800171907.rx2", &g));
	assert_true(guid_index_name("2C7F381800171907.psg", &g)); /* tools' form */
	assert_int_equal(g, G);
	assert_false(guid_index_name("2C7F381800171907.rx2", &g));
	assert_false(guid_index_name("0x2c7f38180017190.psg", &g));   /* 15 digits */
	assert_false(guid_index_name("0x2c7f3818001719070.psg", &g)); /* 17 digits */
	assert_false(guid_index_name("0x2c7f38180017190g.psg", &g));
	assert_false(guid_index_name("0x2c7f381800171907.psg.bak", &g));
	assert_false(guid_index_name("0x2c7f381800171907_Textures.psg", &g));
	assert_false(guid_index_name("0x2c7f381800171907", &g));
	assert_false(guid_index_name("", &g));
}

static int builds;

static void build_two(void *ctx, struct guid_index *ix)
{
	(void)ctx;
	builds++;
	assert_int_equal(guid_index_feed(ix, "z/0x2c7f381800171907.psg", 0), RC_OK);
	assert_int_equal(guid_index_feed(ix, "b/0x2c7f381800171907.rx2", 0), RC_OK);
	assert_int_equal(guid_index_feed(ix, "b/readme.txt", 0), RC_OK); /* not a GUID name */
}

/* Built once, on the first lookup; the model's platform first, then by path; entries fed
 * later (an archive's, with their slots) join; the same path fed twice is one entry. */
static void test_find(void **state)
{
	struct guid_index *ix;
	struct guid_hit h[8];
	size_t n;

	(void)state;
	builds = 0;
	ix = guid_index_new(build_two, NULL);
	assert_non_null(ix);
	assert_int_equal(guid_index_feed(ix, "a/0x2c7f381800171907.psg", 42), RC_OK);
	assert_false(guid_index_built(ix));
	assert_int_equal(builds, 0);
	n = guid_index_find(ix, G, "psg", h, 8);
	assert_int_equal(builds, 1);
	assert_true(guid_index_built(ix));
	assert_int_equal(n, 3);
	assert_string_equal(h[0].path, "a/0x2c7f381800171907.psg");
	assert_int_equal(h[0].slot, 42);
	assert_string_equal(h[1].path, "z/0x2c7f381800171907.psg");
	assert_int_equal(h[1].slot, 0);
	assert_string_equal(h[2].path, "b/0x2c7f381800171907.rx2"); /* another platform: last */
	for (size_t i = 0; i < n; i++)
		free(h[i].path);
	/* an Xbox 360 model prefers .rx2 */
	n = guid_index_find(ix, G, "RX2", h, 1);
	assert_int_equal(n, 1);
	assert_string_equal(h[0].path, "b/0x2c7f381800171907.rx2");
	free(h[0].path);
	/* fed after the build, and a slot found later */
	assert_int_equal(guid_index_feed(ix, "arc.big/0x2c7f381800171907.psg", 7), RC_OK);
	assert_int_equal(guid_index_feed(ix, "arc.big/0x2c7f381800171907.psg", 0), RC_OK);
	guid_index_set_slot(ix, "z/0x2c7f381800171907.psg", 9);
	n = guid_index_find(ix, G, NULL, h, 8);
	assert_int_equal(builds, 1);
	assert_int_equal(n, 4);
	assert_string_equal(h[0].path, "a/0x2c7f381800171907.psg");
	assert_string_equal(h[1].path, "arc.big/0x2c7f381800171907.psg");
	assert_int_equal(h[1].slot, 7);
	assert_string_equal(h[2].path, "b/0x2c7f381800171907.rx2");
	assert_string_equal(h[3].path, "z/0x2c7f381800171907.psg");
	assert_int_equal(h[3].slot, 9);
	for (size_t i = 0; i < n; i++)
		free(h[i].path);
	assert_int_equal(guid_index_find(ix, G + 1, NULL, h, 8), 0);
	assert_int_equal(guid_index_count(ix), 4);
	guid_index_free(ix);
}

/* ---- the folder walk ---- */

static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void touch(const char *rel)
{
	char p[256];
	int fd;

	snprintf(p, sizeof p, "%s/%s", dir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
}

static void mkdir_rel(const char *rel)
{
	char p[256];

	snprintf(p, sizeof p, "%s/%s", dir, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* Every folder is walked by name (deep ones too), links are not followed, folders named like
 * an arena are not arenas, and nothing is walked before the first lookup. */
static void test_folder_walk(void **state)
{
	struct tree_opts o = {0};
	struct tree *t;
	struct tree_dir *d;
	struct guid_index *ix;
	struct guid_hit h[8];
	char why[256], p[256], q[256];
	size_t n;
	uint32_t slot;
	struct stat st;
	struct tree_stat ts;

	(void)state;
	snprintf(dir, sizeof dir, "/tmp/psgfs-gix.XXXXXX");
	assert_non_null(mkdtemp(dir));
	mkdir_rel("a");
	mkdir_rel("a/b");
	mkdir_rel("a/b/c");
	mkdir_rel("0x2c7f381800171907.psg"); /* a folder: not an arena */
	touch("a/b/c/0x2c7f381800171907.psg");
	touch("a/2C7F381800171907.psg");
	touch("a/b/other.psg");
	snprintf(p, sizeof p, "%s/a/b/c/0x2c7f381800171907.psg", dir);
	snprintf(q, sizeof q, "%s/0x2c7f381800171907.rx2", dir);
	assert_int_equal(symlink(p, q), 0); /* a link: never followed, never indexed */
	snprintf(p, sizeof p, "%s/a", dir);
	snprintf(q, sizeof q, "%s/a/b/loop", dir);
	assert_int_equal(symlink(p, q), 0);

	assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	ix = folder_guid_index(t);
	assert_non_null(ix);
	assert_int_equal(tree_opendir(t, TREE_ROOT_INO, &d), RC_OK);
	tree_closedir(t, d);
	assert_false(guid_index_built(ix)); /* mounting and listing walk nothing */
	n = guid_index_find(ix, G, "psg", h, 8);
	assert_int_equal(n, 2);
	assert_string_equal(h[0].path, "a/2C7F381800171907.psg");
	assert_string_equal(h[1].path, "a/b/c/0x2c7f381800171907.psg");
	/* the folder layer finds the deep one as a slot, listing the folders on the way */
	slot = folder_slot_at(t, h[1].path);
	assert_true(slot != 0);
	assert_true(folder_slot_is_file(t, slot));
	assert_int_equal(folder_slot_at(t, "a/b/c/nothing.psg"), 0);
	assert_int_equal(folder_slot_at(t, "a/b/loop/b"), 0); /* not through a link */
	assert_int_equal(tree_resolve(t, "a/b/c/0x2c7f381800171907.psg", &ts), RC_OK);
	assert_int_equal(ino_slot(ts.ino), slot); /* the very slot a visit shows */
	for (size_t i = 0; i < n; i++)
		free(h[i].path);
	tree_close(t);
	assert_int_equal(lstat(dir, &st), 0);
	assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_find),
	    cmocka_unit_test(test_folder_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
