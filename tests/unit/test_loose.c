/*
 * The loose view (-o layout=loose, src/tree/mount/loose.c) through the tree API, on a game
 * folder written here: stored EB v3 archives (as in test_arcdir.c), loose files and an OUTDIR.
 * The paths entries are loaded from (USRDIR/ and content/ roots mapped), the precedence where
 * sources share a path (OUTDIR over loose files over the archives in path order, each in table
 * order; a file never below another source's file), the archives hidden (an unreadable .big
 * stays a file), exact sizes, raw bytes, stable inode numbers and sorted listings.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <limits.h>
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

#include "psgfs/base/buf.h"
#include "psgfs/tree/tree.h"
#include "tree/mount/loose.h"

#include "eb3_fixture.h"

#define SCRATCH_DIR "/tmp/psgfs-loose.XXXXXX"
#include "scratch_fixture.h"

/* A file below the test's folder, its folders made on the way. */
static void put_bytes(const char *rel, const void *data, size_t len)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", dir, rel);
	for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void put_big(const char *rel, const struct ent *e, size_t n)
{
	struct buf b;

	eb3(&b, e, n);
	put_bytes(rel, b.data, b.len);
	buf_free(&b);
}

static struct tree *open_loose(bool mods)
{
	char game[PATH_MAX], out[PATH_MAX], why[256];
	struct tree_opts o = {.layout_loose = true, .assets_files = true};
	struct tree *t;

	snprintf(game, sizeof game, "%s/game", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	o.mods_dir = mods ? out : NULL;
	assert_int_equal(tree_open(game, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	return t;
}

/* The whole of a file of the tree (NUL-terminated), its size checked against its stat. */
static char *slurp(struct tree *t, const char *path)
{
	struct tree_stat st;
	size_t got;
	char *p;

	assert_int_equal(tree_resolve(t, path, &st), RC_OK);
	assert_int_equal(st.type, TT_FILE);
	p = malloc(st.size + 1);
	assert_non_null(p);
	assert_int_equal(tree_read(t, st.ino, 0, st.size, p, &got), RC_OK);
	assert_int_equal(got, st.size);
	p[got] = '\0';
	return p;
}

static void file_is(struct tree *t, const char *path, const char *want)
{
	char *s = slurp(t, path);

	assert_string_equal(s, want);
	free(s);
}

static char *names_of(struct tree *t, const char *path)
{
	struct tree_stat st;
	struct tree_dir *d;
	struct buf b;
	size_t len;

	assert_int_equal(tree_resolve(t, path, &st), RC_OK);
	assert_int_equal(tree_opendir(t, st.ino, &d), RC_OK);
	buf_init(&b);
	for (size_t i = 0; i < tree_dir_count(d); i++)
		buf_printf(&b, "%s%s\n", tree_dir_name(d, i),
			   tree_dir_type(d, i) == TT_DIR ? "/" : "");
	buf_putc(&b, '\0');
	tree_closedir(t, d);
	return (char *)buf_steal(&b, &len);
}

static void names_are(struct tree *t, const char *path, const char *want)
{
	char *s = names_of(t, path);

	assert_string_equal(s, want);
	free(s);
}

/* ---- the paths entries are loaded from ---- */

static void path_is(const char *raw, const char *want)
{
	char out[PATH_MAX];
	bool changed;

	assert_true(loose_game_path(raw, out, sizeof out, &changed));
	assert_string_equal(out, want);
	assert_int_equal(changed, strcmp(raw, want) != 0);
}

static void test_game_path(void **state)
{
	char out[24];
	bool changed;

	(void)state;
	path_is("data/content/createacharacter/texture/0x1.psg",
		"data/content/createacharacter/texture/0x1.psg");
	/* UTT's game_route.py: PS3 archives packed from PS3_GAME, Xbox 360 ones from the game
	 * folder, some from data/ itself. */
	path_is("USRDIR/data/content/x.psg", "data/content/x.psg");
	path_is("usrdir/Data/content/x.psg", "Data/content/x.psg");
	path_is("content/recipe/r.xml", "data/content/recipe/r.xml");
	path_is("USRDIR/other/x", "USRDIR/other/x");
	path_is("USRDIR", "USRDIR");
	/* Separators, empty and "." components, ".." made safe, as in archive mounts. */
	path_is("data\\content\\\\x.bin", "data/content/x.bin");
	path_is("/data/./content/x.bin", "data/content/x.bin");
	path_is("../../etc/passwd", "_../_../etc/passwd");
	path_is("bad\x01name", "bad%01name");
	assert_false(loose_game_path("", out, sizeof out, &changed));
	assert_false(loose_game_path("/./", out, sizeof out, &changed));
	assert_false(loose_game_path("data/content/much-too-long.bin", out, sizeof out, &changed));
	assert_false(loose_game_path("content/x.bin1", out, 17, &changed));
	assert_true(loose_game_path("content/x.bin", out, sizeof out, &changed));
	assert_string_equal(out, "data/content/x.bin");
}

/* ---- who wins where sources share a path ---- */

static void game_setup(void)
{
	/* a.big sorts before b.big: its entries win over b's; within a.big the first entry. */
	struct ent a[] = {
	    {"data/content/x", "one.bin", "A1", 2, 0},
	    {"data/content/x", "two.bin", "A2", 2, 0},
	    {"data/content/x", "one.bin", "A1-again", 8, 0},
	    {"data/content", "dup.bin", "A-dup", 5, 0},
	    {"data/content", "node", "A-file", 6, 0},
	    {"data/content", "loose.txt", "A-loose", 7, 0},
	    {"data/content/deep/er", "f.bin", "A-deep", 6, 0},
	};
	struct ent b[] = {
	    {"data/content/x", "two.bin", "B2", 2, 0},
	    {"data/content/x", "three.bin", "B3", 2, 0},
	    {"USRDIR/data/content", "ps3.bin", "B-ps3", 5, 0},
	    {"content", "rooted.bin", "B-rooted", 8, 0},
	    {"data/content/node", "inner.bin", "B-inner", 7, 0},
	    {"data/content", "x", "B-x-file", 8, 0},
	    {"data/content/deep/er", "g.bin", "B-deep", 6, 0},
	};

	put_big("game/data/content/b.big", b, sizeof b / sizeof *b);
	put_big("game/data/content/a.big", a, sizeof a / sizeof *a);
	put_bytes("game/data/content/dup.bin", "loose-dup", 9);
	put_bytes("game/data/content/loose.txt", "loose-txt", 9);
	put_bytes("game/data/content/broken.big", "not an archive", 14);
	put_bytes("game/data/readme.txt", "readme", 6);
	put_bytes("out/data/content/x/three.bin", "mod-three", 9);
	put_bytes("out/data/content/loose.txt", "mod-loose", 9);
	put_bytes("out/USRDIR/data/content/m.bin", "mod-m", 5);
	put_bytes("out/data/content/.t.psg.psgfs-tmp", "temp", 4);
}

static void test_precedence(void **state)
{
	struct tree *t;

	(void)state;
	game_setup();
	t = open_loose(false);
	/* The archives hidden, an unreadable .big a file; the entries merged into the folder. */
	names_are(t, "", "data/\n");
	names_are(t, "data", "content/\nreadme.txt\n");
	names_are(t, "data/content",
		  "broken.big\ndeep/\ndup.bin\nloose.txt\nnode\nps3.bin\nrooted.bin\nx/\n");
	names_are(t, "data/content/x", "one.bin\nthree.bin\ntwo.bin\n");
	names_are(t, "data/content/deep/er", "f.bin\ng.bin\n");
	/* The first archive by path, the first entry in its table. */
	file_is(t, "data/content/x/one.bin", "A1");
	file_is(t, "data/content/x/two.bin", "A2");
	file_is(t, "data/content/x/three.bin", "B3");
	/* A folder of one source and a file of another: the first keeps the path. */
	file_is(t, "data/content/node", "A-file");
	/* A loose file wins over an entry of its path. */
	file_is(t, "data/content/dup.bin", "loose-dup");
	file_is(t, "data/content/loose.txt", "loose-txt");
	file_is(t, "data/content/ps3.bin", "B-ps3");
	file_is(t, "data/content/rooted.bin", "B-rooted");
	file_is(t, "data/content/broken.big", "not an archive");
	file_is(t, "data/readme.txt", "readme");
	tree_close(t);
}

static void test_mods_layered(void **state)
{
	struct tree *t;

	(void)state;
	game_setup();
	t = open_loose(true);
	/* OUTDIR's files over entries and loose files alike, and added where new; its own
	 * temporaries left out. */
	names_are(t, "data/content",
		  "broken.big\ndeep/\ndup.bin\nloose.txt\nm.bin\nnode\nps3.bin\nrooted.bin\nx/\n");
	file_is(t, "data/content/x/three.bin", "mod-three");
	file_is(t, "data/content/loose.txt", "mod-loose");
	file_is(t, "data/content/m.bin", "mod-m");
	file_is(t, "data/content/x/two.bin", "A2");
	file_is(t, "data/content/dup.bin", "loose-dup");
	tree_close(t);
}

/* Every path's inode number, in listing order, one a line. */
static void inos(struct tree *t, const char *path, struct buf *out)
{
	struct tree_stat st;
	struct tree_dir *d;

	assert_int_equal(tree_resolve(t, path, &st), RC_OK);
	buf_printf(out, "%s %llu\n", path, (unsigned long long)st.ino);
	if (st.type != TT_DIR)
		return;
	assert_int_equal(tree_opendir(t, st.ino, &d), RC_OK);
	for (size_t i = 0; i < tree_dir_count(d); i++) {
		char p[PATH_MAX];

		snprintf(p, sizeof p, "%s%s%s", path, *path ? "/" : "", tree_dir_name(d, i));
		inos(t, p, out);
	}
	tree_closedir(t, d);
}

static void test_stable(void **state)
{
	struct buf one, two;
	struct tree *t;

	(void)state;
	game_setup();
	buf_init(&one);
	buf_init(&two);
	t = open_loose(true);
	inos(t, "", &one);
	tree_close(t);
	t = open_loose(true);
	inos(t, "", &two);
	tree_close(t);
	buf_putc(&one, '\0');
	buf_putc(&two, '\0');
	assert_string_equal(one.data, two.data);
	buf_free(&one);
	buf_free(&two);
}

/* The view's memory is the cache budget's: an archive whose entries do not fit what is left
 * of it is not unpacked (it stays a file); with room, the same archive is. */
static void test_budget(void **state)
{
	enum { N = 30000 };
	static struct ent e[N];
	static char names[N][24];
	char game[PATH_MAX], why[256];
	struct tree_opts o = {.layout_loose = true, .assets_files = true};
	struct tree_stat st;
	struct tree *t;

	(void)state;
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof names[i], "entry-%05d.bin", i);
		e[i] = (struct ent){"data/content/a-rather-long-folder-name/of/many/levels",
				    names[i], "x", 1, 0};
	}
	put_big("game/data/many.big", e, N);
	snprintf(game, sizeof game, "%s/game", dir);
	o.cache_bytes = 1u << 20;
	assert_int_equal(tree_open(game, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	names_are(t, "data", "many.big\n");
	tree_close(t);
	o.cache_bytes = 64u << 20;
	assert_int_equal(tree_open(game, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	names_are(t, "data", "content/\n");
	assert_int_equal(
	    tree_resolve(t, "data/content/a-rather-long-folder-name/of/many/levels/entry-29999.bin",
			 &st),
	    RC_OK);
	assert_int_equal(st.size, 1);
	tree_close(t);
}

/* Descriptors of this process open on a file whose name ends in suffix. */
static int fds_on(const char *suffix)
{
	char p[64], target[PATH_MAX];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		len = readlink(p, target, sizeof target - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strlen(target) >= strlen(suffix) &&
		    strcmp(target + strlen(target) - strlen(suffix), suffix) == 0)
			n++;
	}
	return n;
}

/* The archives' descriptors are max_assets at most: the least recently used is closed and
 * reopened when read again, and every read still gives the entry's bytes. */
static void test_descriptors(void **state)
{
	char game[PATH_MAX], why[256], rel[64], want[16];
	struct tree_opts o = {.layout_loose = true, .assets_files = true, .max_assets = 2};
	struct tree *t;

	(void)state;
	for (int a = 0; a < 5; a++) {
		struct ent e[] = {{"data/content", rel, want, 0, 0}};

		snprintf(rel, sizeof rel, "from-%d.bin", a);
		snprintf(want, sizeof want, "archive %d", a);
		e[0].len = strlen(want);
		snprintf(game, sizeof game, "game/data/a%d.big", a);
		put_big(game, e, 1);
	}
	snprintf(game, sizeof game, "%s/game", dir);
	assert_int_equal(tree_open(game, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	assert_true(fds_on(".big") <= 2);
	for (int pass = 0; pass < 3; pass++)
		for (int a = 0; a < 5; a++) {
			snprintf(rel, sizeof rel, "data/content/from-%d.bin", a);
			snprintf(want, sizeof want, "archive %d", a);
			file_is(t, rel, want);
			assert_true(fds_on(".big") <= 2);
		}
	tree_close(t);
	assert_int_equal(fds_on(".big"), 0);
}

/* A missing folder is a source that cannot be opened, not a refusal of the option. */
static void test_missing(void **state)
{
	struct tree_opts o = {.layout_loose = true};
	char game[PATH_MAX], why[256];
	struct tree *t;

	(void)state;
	snprintf(game, sizeof game, "%s/none", dir);
	assert_int_equal(tree_open(game, &o, &t, why, sizeof why), TREE_FAIL_OPEN);
	snprintf(game, sizeof game, "%s/file", dir);
	put_bytes("file", "x", 1);
	assert_int_equal(tree_open(game, &o, &t, why, sizeof why), TREE_FAIL_OTHER);
	assert_non_null(strstr(why, "needs a folder"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_game_path),
	    cmocka_unit_test_setup_teardown(test_precedence, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_mods_layered, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_stable, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_budget, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_descriptors, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_missing, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
