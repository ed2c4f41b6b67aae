/*
 * Archives as directories (src/tree/mount/arcdir.c) through the tree API, on stored EB v3 archives
 * written here by hand (docs/archives.md has the layout): the mirrored folders, hostile entry
 * names made safe, unique and deterministic, entries' bytes and sizes, assets as directories
 * with their own bytes beside their tree, -o assets=files, nested archives, archives inside a
 * folder mount, entries whose table lies, and decoding the next file ahead of a reader.
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
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
#include <zlib.h>

#include "psgfs/base/buf.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/tree/tree.h"
#include "eb3_fixture.h"
#include "rp_enc.h"

#define SCRATCH_DIR "/tmp/psgfs-arcdir.XXXXXX"
#include "scratch_fixture.h"

static void put(const char *name, const struct buf *b)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
	assert_int_equal(fclose(f), 0);
}

static struct tree *open_path(const char *name, bool assets_files)
{
	struct tree_opts o = {.assets_files = assets_files};
	struct tree *t;
	char p[256], why[256];

	snprintf(p, sizeof p, "%s%s%s", dir, *name ? "/" : "", name);
	assert_int_equal(tree_open(p, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	return t;
}

/* The whole of a file of the tree; NULL with *r on failure. */
static char *slurp(struct tree *t, const char *path, size_t *len, enum rc *r)
{
	struct tree_stat st;
	size_t got;
	char *p;

	*r = tree_resolve(t, path, &st);
	if (*r != RC_OK)
		return NULL;
	p = malloc(st.size + 1);
	assert_non_null(p);
	*r = tree_read(t, st.ino, 0, st.size, p, &got);
	if (*r != RC_OK) {
		free(p);
		return NULL;
	}
	assert_int_equal(got, st.size);
	p[got] = '\0';
	if (len)
		*len = got;
	return p;
}

/* The names of a directory, sorted, one per line. */
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
		buf_printf(&b, "%s\n", tree_dir_name(d, i));
	buf_putc(&b, '\0');
	tree_closedir(t, d);
	return (char *)buf_steal(&b, &len);
}

static void gen_textures(struct buf *psg)
{
	struct gen_tex_opts o = {0};

	buf_init(psg);
	assert_int_equal(gen_psg_textures(&o, psg, NULL, NULL), RC_OK);
}

/* The game's layout: folders mirrored, a texture arena a directory with its tree and its own
 * bytes, a plain entry a file of its bytes, the archive's info.txt and errors.txt. */
static void test_layout(void **state)
{
	struct buf psg, big;
	struct tree_stat st;
	struct tree *t;
	char *s, *own, *info;
	size_t len;
	enum rc r;

	(void)state;
	gen_textures(&psg);
	struct ent e[] = {
	    {"data/content/createacharacter/texture", "0x2c7f38181a2b3c4d.psg", psg.data, psg.len,
	     0},
	    {"data/content/createacharacter", "notes.txt", "hello\n", 6, 0},
	};
	eb3(&big, e, 2);
	put("a.big", &big);
	t = open_path("a.big", false);
	s = names_of(t, "");
	assert_string_equal(s, "data\nerrors.txt\ninfo.txt\n");
	free(s);
	s = names_of(t, "data/content/createacharacter");
	assert_string_equal(s, "notes.txt\ntexture\n");
	free(s);
	assert_int_equal(tree_resolve(t, "data/content/createacharacter/notes.txt", &st), RC_OK);
	assert_int_equal(st.type, TT_FILE);
	assert_int_equal(st.size, 6);
	s = slurp(t, "data/content/createacharacter/notes.txt", NULL, &r);
	assert_string_equal(s, "hello\n");
	free(s);
	assert_int_equal(
	    tree_resolve(t, "data/content/createacharacter/texture/0x2c7f38181a2b3c4d.psg", &st),
	    RC_OK);
	assert_int_equal(st.type, TT_DIR);
	own = slurp(t,
		    "data/content/createacharacter/texture/0x2c7f38181a2b3c4d.psg/"
		    "0x2c7f38181a2b3c4d.psg",
		    &len, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(len, psg.len);
	assert_memory_equal(own, psg.data, psg.len);
	free(own);
	assert_int_equal(
	    tree_resolve(t, "data/content/createacharacter/texture/0x2c7f38181a2b3c4d.psg/textures",
			 &st),
	    RC_OK);
	assert_int_equal(st.type, TT_DIR);
	info = slurp(t, "info.txt", NULL, &r);
	assert_non_null(strstr(info, "entries: 2\n"));
	assert_non_null(strstr(info, "shown as assets: 1\n"));
	assert_non_null(strstr(info, "renamed paths: 0\n"));
	free(info);
	s = slurp(t, "errors.txt", &len, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(len, 0);
	free(s);
	tree_close(t);
	/* -o assets=files: the loose file, byte for byte. */
	t = open_path("a.big", true);
	own = slurp(t, "data/content/createacharacter/texture/0x2c7f38181a2b3c4d.psg", &len, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(len, psg.len);
	assert_memory_equal(own, psg.data, psg.len);
	free(own);
	tree_close(t);
	buf_free(&psg);
	buf_free(&big);
}

/* Entry names are untrusted: each becomes a safe, unique, deterministic name, and errors.txt
 * says which were changed. */
static void test_hostile_names(void **state)
{
	struct buf big;
	struct tree *t;
	char *s, *errs;
	enum rc r;
	char long_name[61];

	(void)state;
	memset(long_name, 'n', 60);
	long_name[60] = '\0';
	struct ent e[] = {
	    {"../..", "up.txt", "1", 1, 0},    {"/abs", "x.txt", "2", 1, 0},
	    {"win\\dows", "y.txt", "3", 1, 0}, {"", "", "4", 1, 0},
	    {"dup", "same.txt", "5", 1, 0},    {"dup", "same.txt", "6", 1, 0},
	    {"ctl", "a\x01z.txt", "7", 1, 0},  {"ctl", "\xff\xfe.bin", "8", 1, 0},
	    {"", "info.txt", "9", 1, 0},       {"long", long_name, "10", 2, 0},
	};
	eb3(&big, e, sizeof e / sizeof *e);
	put("h.big", &big);
	t = open_path("h.big", false);
	s = names_of(t, "");
	assert_string_equal(s, "_..\n_unnamed_3\nabs\nctl\ndup\nerrors.txt\ninfo.txt\ninfo.txt~2\n"
			       "long\nwin\n");
	free(s);
	s = names_of(t, "_..");
	assert_string_equal(s, "_..\n");
	free(s);
	s = names_of(t, "dup");
	assert_string_equal(s, "same.txt\nsame.txt~2\n");
	free(s);
	s = names_of(t, "ctl");
	assert_string_equal(s, "%FF%FE.bin\na%01z.txt\n");
	free(s);
	s = names_of(t, "win/dows");
	assert_string_equal(s, "y.txt\n");
	free(s);
	s = slurp(t, "dup/same.txt~2", NULL, &r);
	assert_string_equal(s, "6");
	free(s);
	s = slurp(t, "info.txt~2", NULL, &r);
	assert_string_equal(s, "9");
	free(s);
	errs = slurp(t, "errors.txt", NULL, &r);
	assert_non_null(strstr(errs, "path ../../up.txt shown as _../_../up.txt"));
	assert_non_null(strstr(errs, "shown as ctl/%FF%FE.bin"));
	assert_non_null(strstr(errs, "shown as _unnamed_3"));
	free(errs);
	tree_close(t);
	buf_free(&big);
}

/* A table that claims more than the archive holds: the size is the claim, the real bytes read,
 * a read past them fails, nothing else does. */
static void test_lying_size(void **state)
{
	struct buf big;
	struct tree_stat st;
	struct tree *t;
	char buf[64], *info;
	size_t got;
	enum rc r;

	(void)state;
	struct ent e[] = {
	    {"d", "ok.txt", "fine", 4, 0},
	    {"d", "short.bin", "0123456789", 10, 1u << 30},
	    {"d", "liar.bin", "0123456789", 10, 1u << 30},
	};
	eb3(&big, e, 3);
	put_be(big.data + 0x30 + 16 + 4, 10, 4); /* short.bin: 10 stored bytes */
	big.len -= 6; /* the last entry ends 6 bytes short of even its 10 */
	put("l.big", &big);
	t = open_path("l.big", false);
	assert_int_equal(tree_resolve(t, "d/liar.bin", &st), RC_OK);
	assert_int_equal(st.size, 1u << 30);
	assert_int_equal(tree_read(t, st.ino, (1u << 30) - 64, 64, buf, &got), RC_IO);
	assert_int_equal(tree_read(t, st.ino, 1u << 20, 64, buf, &got), RC_IO);
	/* 10 bytes stored for 1 GiB claimed (issue 30 §10): the bytes it has read (a short
	 * read), a read from their end fails, and errors.txt says where they end */
	assert_int_equal(tree_resolve(t, "d/short.bin", &st), RC_OK);
	assert_int_equal(st.size, 1u << 30);
	assert_int_equal(tree_read(t, st.ino, 0, sizeof buf, buf, &got), RC_OK);
	assert_int_equal(got, 10);
	assert_memory_equal(buf, "0123456789", 10);
	assert_int_equal(tree_read(t, st.ino, 3, 4, buf, &got), RC_OK);
	assert_int_equal(got, 4);
	assert_memory_equal(buf, "3456", 4);
	assert_int_equal(tree_read(t, st.ino, 10, sizeof buf, buf, &got), RC_IO);
	assert_int_equal(tree_read(t, st.ino, 5u << 20, sizeof buf, buf, &got), RC_IO);
	info = slurp(t, "d/ok.txt", NULL, &r);
	assert_string_equal(info, "fine");
	free(info);
	info = slurp(t, "errors.txt", NULL, &r);
	assert_int_equal(r, RC_OK);
	assert_non_null(
	    strstr(info, "short.bin): its stored bytes end at byte 10 of the 1073741824"));
	free(info);
	tree_close(t);
	buf_free(&big);
}

/* An entry whose table says 0 unpacked bytes is an empty file whatever its stored bytes: an
 * empty RefPack stream (6 bytes) and a chunk header with one empty chunk (48 bytes), both
 * with their compression byte, read as 0 bytes with no errors.txt line. */
static void test_empty_packed(void **state)
{
	static const uint8_t rp[] = {0x10, 0xFB, 0, 0, 0, 0xFC};
	uint8_t ch[48] = "chunkref";
	struct ent e[] = {{"d", "rp.bin", rp, sizeof rp, 0},
			  {"d", "chunk.bin", ch, sizeof ch, 0},
			  {"d", "ok.txt", "fine", 4, 0}};
	struct buf big;
	struct tree_stat st;
	struct tree *t;
	char *s, buf[16];
	size_t got, len;
	enum rc r;

	(void)state;
	put_be(ch + 8, 2, 4);	      /* version */
	put_be(ch + 16, 1u << 16, 4); /* chunk size; total 0 */
	put_be(ch + 20, 1, 4);	      /* one chunk */
	put_be(ch + 24, 16, 4);	      /* alignment: its descriptor at 40, stored, 0 bytes */
	put_be(ch + 44, 4, 4);
	eb3(&big, e, 3);
	for (size_t i = 0; i < 2; i++) { /* stored sizes, unpacked 0, RefPack / chunked */
		uint8_t *rec = big.data + 0x30 + i * 16;

		put_be(rec + 4, e[i].len, 4);
		put_be(rec + 8, 0, 4);
		big.data[0x30 + al16(3 * 16) + i] = i ? 2 : 1;
	}
	put("empty.big", &big);
	t = open_path("empty.big", false);
	for (size_t i = 0; i < 2; i++) {
		char path[64];

		snprintf(path, sizeof path, "d/%s", e[i].name);
		assert_int_equal(tree_resolve(t, path, &st), RC_OK);
		assert_int_equal(st.size, 0);
		assert_int_equal(tree_read(t, st.ino, 0, sizeof buf, buf, &got), RC_OK);
		assert_int_equal(got, 0);
	}
	s = slurp(t, "d/ok.txt", NULL, &r);
	assert_string_equal(s, "fine");
	free(s);
	s = slurp(t, "errors.txt", &len, &r);
	assert_non_null(s);
	assert_int_equal(len, 0);
	free(s);
	tree_close(t);
	buf_free(&big);
}

/* Paths of many folders and over-long names: every folder made, long names cut with a hash
 * and their extension kept. */
static void test_deep_and_long(void **state)
{
	char deep[FOLDER_REC], longf[FOLDER_REC], path[4096], *s;
	struct tree_stat st;
	struct buf big;
	struct tree *t;
	size_t at = 0;
	enum rc r;

	(void)state;
	for (int i = 0; i < 120; i++) {
		deep[at++] = (char)('a' + i % 26);
		deep[at++] = '/';
	}
	deep[at - 1] = '\0';
	memset(longf, 'L', 250);
	memcpy(longf + 240, ".dir", 4);
	longf[244] = '\0';
	struct ent e[] = {
	    {deep, "leaf.txt", "deep", 4, 0},
	    {longf, "x.txt", "long", 4, 0},
	};
	eb3(&big, e, 2);
	put("d.big", &big);
	t = open_path("d.big", false);
	snprintf(path, sizeof path, "%s/leaf.txt", deep);
	s = slurp(t, path, NULL, &r);
	assert_int_equal(r, RC_OK);
	assert_string_equal(s, "deep");
	free(s);
	s = names_of(t, "");
	assert_non_null(strstr(s, "LLLL"));
	assert_non_null(strstr(s, ".dir\n"));
	assert_true(strchr(s, '~') != NULL);
	*strchr(s, '\n') = '\0';
	assert_int_equal(tree_resolve(t, s, &st), RC_OK); /* the first name: "a" */
	free(s);
	tree_close(t);
	buf_free(&big);
}

/* A RefPack entry whose table claims twice what its stream gives, named like a PSK: the asset
 * opens on a source that fails past the real bytes (as RC_IO, the sources' contract; an
 * RC_CORRUPT there once crashed the PSK reader). A directory that explains itself. */
static void test_short_asset(void **state)
{
	struct gen_big_entry e = {.folder = "d", .name = "a.psk", .method = GB_REFPACK};
	struct gen_big_opts bo = {0};
	struct gen_psk_opts po;
	struct gen_sink sink;
	struct buf psk, big;
	struct tree_stat st;
	struct tree *t;
	uint64_t total;
	char buf[64], *s;
	size_t got;
	enum rc r;

	(void)state;
	gen_psk_opts_default(&po, 3);
	buf_init(&psk);
	assert_int_equal(gen_psk_file(&po, &psk), RC_OK);
	e.data = psk.data;
	e.len = psk.len;
	buf_init(&big);
	gen_sink_buf(&sink, &big);
	assert_int_equal(gen_big_write(&bo, &e, 1, &sink, NULL, &total), RC_OK);
	put_be(big.data + 0x30 + 8, psk.len * 2, 4); /* the unpacked size the table claims */
	put("r.big", &big);
	t = open_path("r.big", false);
	assert_int_equal(tree_resolve(t, "d/a.psk", &st), RC_OK);
	assert_int_equal(st.type, TT_DIR);
	s = slurp(t, "d/a.psk/info.txt", NULL, &r);
	assert_int_equal(r, RC_OK);
	free(s);
	assert_int_equal(tree_resolve(t, "d/a.psk/a.psk", &st), RC_OK);
	assert_int_equal(st.size, psk.len * 2);
	assert_int_equal(tree_read(t, st.ino, psk.len + 16, sizeof buf, buf, &got), RC_IO);
	tree_close(t);
	buf_free(&psk);
	buf_free(&big);
}

/* An archive inside an archive is a directory too, with its own bytes in it. */
static void test_nested(void **state)
{
	struct buf inner, outer;
	struct tree_stat st;
	struct tree *t;
	char *s;
	size_t len;
	enum rc r;

	(void)state;
	struct ent ie[] = {{"data/in", "leaf.txt", "leaf", 4, 0}};
	eb3(&inner, ie, 1);
	struct ent oe[] = {{"data", "inner.big", inner.data, inner.len, 0}};
	eb3(&outer, oe, 1);
	put("n.big", &outer);
	t = open_path("n.big", false);
	assert_int_equal(tree_resolve(t, "data/inner.big", &st), RC_OK);
	assert_int_equal(st.type, TT_DIR);
	s = names_of(t, "data/inner.big");
	assert_string_equal(s, "data\nerrors.txt\ninfo.txt\ninner.big\n");
	free(s);
	s = slurp(t, "data/inner.big/data/in/leaf.txt", NULL, &r);
	assert_string_equal(s, "leaf");
	free(s);
	s = slurp(t, "data/inner.big/inner.big", &len, &r);
	assert_int_equal(len, inner.len);
	assert_memory_equal(s, inner.data, inner.len);
	free(s);
	tree_close(t);
	buf_free(&inner);
	buf_free(&outer);
}

/* In a folder mount an archive is a directory, its assets' tree included; what is not an
 * archive after all explains itself. */
static void test_in_folder(void **state)
{
	struct buf psg, big;
	struct tree_stat st;
	struct tree *t;
	char *s;
	enum rc r;

	(void)state;
	gen_textures(&psg);
	struct ent e[] = {{"data/content/x/texture", "0x01.psg", psg.data, psg.len, 0}};
	eb3(&big, e, 1);
	put("game.big", &big);
	big.len = 20; /* the header cut short: not readable as an archive at all */
	put("broken.big", &big);
	t = open_path("", false);
	assert_int_equal(tree_resolve(t, "game.big", &st), RC_OK);
	assert_int_equal(st.type, TT_DIR);
	assert_int_equal(tree_resolve(t, "game.big/data/content/x/texture/0x01.psg/textures", &st),
			 RC_OK);
	assert_int_equal(st.type, TT_DIR);
	assert_int_equal(tree_resolve(t, "broken.big", &st), RC_OK);
	assert_int_equal(st.type, TT_DIR);
	s = slurp(t, "broken.big/info.txt", NULL, &r);
	assert_int_equal(r, RC_OK);
	assert_non_null(strstr(s, "cannot mount"));
	free(s);
	tree_close(t);
	buf_free(&psg);
	buf_free(&big);
}

/* Pieces decoded so far, once the count has stayed the same for 50 ms (the decode-ahead
 * thread may still be at work), waiting up to 5 s for at least `want`. */
static uint64_t pieces_settled(struct tree *t, uint64_t want)
{
	struct tree_counters c;
	uint64_t last = UINT64_MAX;

	for (int k = 0; k < 500; k++) {
		tree_get_stats(t, NULL, &c);
		if (c.arc_pieces >= want && c.arc_pieces == last)
			return c.arc_pieces;
		last = c.arc_pieces;
		usleep(10000);
	}
	return c.arc_pieces;
}

/* Read [off, off + n) of path the way the FUSE adapter does (tree_read_begin). */
static void read_view(struct tree *t, const char *path, uint64_t off, size_t n)
{
	struct tree_stat st;
	struct tree_rdv v;

	assert_int_equal(tree_resolve(t, path, &st), RC_OK);
	assert_int_equal(tree_read_begin(t, st.ino, off, n, &v), RC_OK);
	tree_read_end(&v);
}

/*
 * Decoding ahead: the first read of a file decodes the first piece of the file listed after it
 * in its folder (by name, folders skipped), on the tree's own thread, so that the read of that
 * file finds it in the cache. A read elsewhere in a file, or of the last file, starts nothing;
 * closing the tree with a job pending is clean (ASan).
 */
static void test_decode_ahead(void **state)
{
	static const char a[] = "aaaa", b[] = "bbbbbb", m[] = "mmmmmmmm", z[] = "zz", x[] = "x";
	struct ent e[] = {{"d", "z.dat", z, 2, 0},	 {"d", "b.dat", b, 6, 0},
			  {"d/c", "x.dat", x, 1, 0},	 {"d", "m.dat", m, 8, 0},
			  {"e", "a.dat", a, 4, 0},	 {"f", "a.dat", a, 4, 0},
			  {"f", "b.dat", b, 6, 1u << 20}};
	struct buf big;
	struct tree *t;
	uint64_t p0;
	char *e0, *e1;
	size_t got;
	enum rc r;

	(void)state;
	eb3(&big, e, 7);
	put("ahead.big", &big);
	t = open_path("ahead.big", false);
	p0 = pieces_settled(t, 0);
	read_view(t, "d/b.dat", 0, 6); /* b, and m ahead (listed after b, c/ skipped) */
	assert_int_equal(pieces_settled(t, p0 + 2), p0 + 2);
	read_view(t, "d/m.dat", 0, 8); /* m from the cache, z ahead */
	assert_int_equal(pieces_settled(t, p0 + 3), p0 + 3);
	read_view(t, "d/z.dat", 0, 2); /* cached; nothing after z */
	read_view(t, "e/a.dat", 1, 3); /* not from its start: nothing ahead (a is alone anyway) */
	read_view(t, "d/c/x.dat", 0, 1);
	assert_int_equal(pieces_settled(t, p0 + 5), p0 + 5);
	/* f/b.dat's table lies: decoding it ahead fails, and errors.txt says only what readers
	 * met (the same whatever the thread did before them). */
	e0 = slurp(t, "errors.txt", NULL, &r);
	assert_non_null(e0);
	read_view(t, "f/a.dat", 0, 4);
	pieces_settled(t, p0 + 7);
	e1 = slurp(t, "errors.txt", NULL, &r);
	assert_string_equal(e0, e1);
	free(e1);
	{
		struct tree_stat st;
		char buf[64];

		assert_int_equal(tree_resolve(t, "f/b.dat", &st), RC_OK);
		assert_int_equal(tree_read(t, st.ino, 0, sizeof buf, buf, &got), RC_IO);
	}
	e1 = slurp(t, "errors.txt", NULL, &r);
	assert_string_not_equal(e0, e1); /* ... and the reader's failure is there */
	free(e0);
	free(e1);
	tree_close(t);
	/* A job still pending when the tree closes. */
	t = open_path("ahead.big", false);
	read_view(t, "d/b.dat", 0, 6);
	tree_close(t);
	buf_free(&big);
}

/* A chunked zlib entry whose last chunk inflates past its declared size: the declared bytes
 * are served and errors.txt says so (one line). */
static void test_zlib_overrun(void **state)
{
	static uint8_t raw[2][4096];
	uint8_t body[16384] = "chunkzip";
	uint32_t sizes[2] = {4096, 100}; /* the second chunk holds 4096, declares 100 */
	size_t at = 28;
	struct buf big;
	char *s;
	enum rc r;
	size_t len;
	struct tree *t;

	(void)state;
	for (int c = 0; c < 2; c++)
		for (size_t i = 0; i < 4096; i++)
			raw[c][i] = (uint8_t)(i * 7 + c * 13 + i / 64);
	put_be(body + 8, 2, 4);
	put_be(body + 12, sizes[0] + sizes[1], 4);
	put_be(body + 16, 4096, 4);
	put_be(body + 20, 2, 4);
	put_be(body + 24, 16, 4);
	for (int c = 0; c < 2; c++) {
		size_t pay = al16(at + 8);
		uLongf zl = sizeof body - pay;

		assert_int_equal(compress2(body + pay, &zl, raw[c], 4096, 6), Z_OK);
		put_be(body + pay - 8, zl, 4);
		put_be(body + pay - 4, 3, 4);
		at = pay + zl;
	}
	struct ent e[] = {{"d", "z.bin", body, at, sizes[0] + sizes[1]}};
	eb3(&big, e, 1);
	big.data[0x30 + al16(16)] = 3;	    /* chunked zlib */
	put_be(big.data + 0x30 + 4, at, 4); /* its stored size */
	put("z.big", &big);
	t = open_path("z.big", false);
	s = slurp(t, "d/z.bin", &len, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(len, 4196);
	assert_memory_equal(s, raw[0], 4096);
	assert_memory_equal(s + 4096, raw[1], 100);
	free(s);
	s = slurp(t, "errors.txt", NULL, &r);
	assert_non_null(strstr(s, "(d/z.bin): a chunk inflates past its declared size"));
	free(s);
	tree_close(t);
	buf_free(&big);
}

/*
 * Issue 30 item 12: a long RefPack entry's index (restart points of 128 KiB, built by decoding
 * the whole entry) that the cache cannot keep was built again for every read. Read in 128 KiB
 * steps through a 256 KiB cache, a 24 MiB entry is indexed once.
 */
static void test_index_once_per_pass(void **state)
{
	const size_t n = 24u << 20, step = 128u << 10;
	uint8_t *src = malloc(n), *packed = malloc(rpt_bound(n)), *out = malloc(step);
	struct tree_opts o = {.cache_bytes = 256u << 10};
	struct tree_counters c0, c1;
	struct tree_stat st;
	struct tree *t;
	struct buf big;
	char p[256], why[256];
	size_t len, got;

	(void)state;
	assert_non_null(src);
	assert_non_null(packed);
	assert_non_null(out);
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i / 1000 + (i % 1000 == 0 ? i >> 16 : 0));
	len = rpt_encode(src, n, packed);
	{
		struct ent e[] = {{"d", "long.dat", packed, len, (uint32_t)n}};

		eb3(&big, e, 1);
		put_be(big.data + 0x30 + 4, len, 4); /* its stored size: RefPack by its header */
	}
	put("long.big", &big);
	snprintf(p, sizeof p, "%s/long.big", dir);
	assert_int_equal(tree_open(p, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	assert_int_equal(tree_resolve(t, "d/long.dat", &st), RC_OK);
	assert_int_equal(st.size, n);
	tree_get_stats(t, NULL, &c0);
	for (uint64_t off = 0; off < (2u << 20); off += step) {
		assert_int_equal(tree_read(t, st.ino, off, step, out, &got), RC_OK);
		assert_int_equal(got, step);
		assert_memory_equal(out, src + off, step);
	}
	tree_get_stats(t, NULL, &c1);
	assert_int_equal(c1.arc_indexes - c0.arc_indexes, 1);
	/* far into the entry, from the kept restart points: still the same index */
	assert_int_equal(tree_read(t, st.ino, n - step, step, out, &got), RC_OK);
	assert_memory_equal(out, src + n - step, step);
	tree_get_stats(t, NULL, &c1);
	assert_int_equal(c1.arc_indexes - c0.arc_indexes, 1);
	tree_close(t);
	buf_free(&big);
	free(src);
	free(packed);
	free(out);
}

/*
 * Issue 30 item 11: entries naming the same long RefPack stream share its index and pieces. A
 * thousand entries naming one 4 GiB stream decoded it whole for each entry's first byte.
 */
static void test_same_bytes_shared(void **state)
{
	const size_t n = 24u << 20;
	const uint32_t count = 40;
	uint8_t *src = malloc(n), *packed = malloc(rpt_bound(n)), out[4096];
	struct ent e[40];
	struct tree_counters c0, c1;
	struct tree *t;
	struct buf big;
	size_t len, got;
	uint8_t *rec0;

	(void)state;
	assert_non_null(src);
	assert_non_null(packed);
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i / 1000 + (i % 1000 == 0 ? i >> 16 : 0));
	len = rpt_encode(src, n, packed);
	for (uint32_t i = 0; i < count; i++) {
		static char names[40][16];

		snprintf(names[i], sizeof names[i], "e%02u.dat", i);
		e[i] = (struct ent){"d", names[i], i ? (const void *)"" : packed, i ? 0 : len,
				    (uint32_t)n};
	}
	eb3(&big, e, count);
	rec0 = big.data + 0x30;
	for (uint32_t i = 0; i < count; i++) { /* every record names entry 0's stored bytes */
		memcpy(big.data + 0x30 + i * 16, rec0, 4);
		put_be(big.data + 0x30 + i * 16 + 4, len, 4);
	}
	put("same.big", &big);
	t = open_path("same.big", false);
	tree_get_stats(t, NULL, &c0);
	for (uint32_t i = 0; i < count; i++) {
		struct tree_stat st;
		char path[64];

		snprintf(path, sizeof path, "d/%s", e[i].name);
		assert_int_equal(tree_resolve(t, path, &st), RC_OK);
		assert_int_equal(st.size, n);
		assert_int_equal(tree_read(t, st.ino, 0, sizeof out, out, &got), RC_OK);
		assert_memory_equal(out, src, sizeof out);
	}
	tree_get_stats(t, NULL, &c1);
	assert_int_equal(c1.arc_indexes - c0.arc_indexes, 1);
	tree_close(t);
	buf_free(&big);
	free(src);
	free(packed);
}

/*
 * Lock order (tree_int.h, "Lock order"): a folder's archive closed by max_assets is reopened
 * by its next read (fd_acquire), which asks the folder for its file (the folder's mu) and must
 * not hold the archive's fd_mu meanwhile: lru_trim holds mu while it closes the least recently
 * used archive (fd_mu). With max_assets 1, two readers of two archives close each other's
 * descriptor at every read. The deadlock needs an unlucky schedule; the inverted order itself
 * is what test arcdir_lock_order (this test under valgrind's helgrind) finds every time.
 */
struct reopen_arg {
	struct tree *t;
	tree_ino ino;
	atomic_int done;
};

static void *reopen_reader(void *p)
{
	struct reopen_arg *a = p;
	char b[16];
	size_t got;

	for (int i = 0; i < 2000; i++)
		if (tree_read(a->t, a->ino, (uint64_t)(i % 8), 8, b, &got) != RC_OK)
			break;
	atomic_store(&a->done, 1);
	return NULL;
}

static void test_reopen_lock_order(void **state)
{
	static const char text[] = "0123456789abcdef";
	struct ent e[] = {{"data", "x.txt", text, sizeof text - 1, 0}};
	struct tree_opts o = {.max_assets = 1};
	struct reopen_arg a[2] = {0};
	pthread_t th[2];
	struct tree_stat st;
	struct tree *t;
	char why[256];
	struct buf big;

	(void)state;
	eb3(&big, e, 1);
	put("a.big", &big);
	put("b.big", &big);
	buf_free(&big);
	assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(tree_resolve(t, k ? "b.big/data/x.txt" : "a.big/data/x.txt", &st),
				 RC_OK);
		a[k].t = t;
		a[k].ino = st.ino;
	}
	for (int k = 0; k < 2; k++)
		assert_int_equal(pthread_create(&th[k], NULL, reopen_reader, &a[k]), 0);
	for (int w = 0; w < 600 && !(atomic_load(&a[0].done) && atomic_load(&a[1].done)); w++)
		usleep(100000);
	if (!atomic_load(&a[0].done) || !atomic_load(&a[1].done))
		fail_msg("readers of two archives deadlocked (fd_mu against the folder's mu)");
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	tree_close(t);
}

int main(void)
{
	/* One test only (arcdir_lock_order runs this one under helgrind). */
	if (getenv("PSGFS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("PSGFS_TEST_FILTER"));
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_layout, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_hostile_names, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_lying_size, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_empty_packed, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_deep_and_long, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_short_asset, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_nested, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_in_folder, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_decode_ahead, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_zlib_overrun, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_index_once_per_pass, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_same_bytes_shared, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_reopen_lock_order, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
