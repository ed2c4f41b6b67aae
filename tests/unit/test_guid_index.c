/*
 * The index of per-texture arenas by name (src/tree/mount/guid_index.c) and the folder layer's walk
 * that fills it (folder.c): which names are GUID arenas, lookups ordered by platform then
 * path, feeding before and after the build, the build run once and only on the first lookup
 * (never at mount time), the walk seeing every folder but never links, and a path found
 * through the folder layer as a slot. Then the index of texture arenas of any name by their
 * TableOfContents: the bounded scan of one arena (skate_toc_scan.c: texture GUIDs only, a TOC
 * that lies, the byte and GUID caps) and the folder layer's lazy build (folder_toc_index).
 * Both indexes reach into nested archives: a district's stream files inside its .big inside
 * a DLC pack, within the cap on nested archives (folder_nested_max).
 */
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/source.h"
#include "psgfs/base/diag.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/skate_objects.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_district.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/tree/tree.h"
#include "tree/mount/guid_index.h"
#include "tree/core/tree_int.h"

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
	assert_true(tree_slot_kind(t, slot) == CS_ASSET);
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

/* ---- texture arenas by their TableOfContents ---- */

#define G_TRUE 0x7E57000000000001ull /* the lying arena's real texture */
#define G_LIE  0x7E57000000000002ull /* its TOC names this GUID on its VersionData */
#define G_DANG 0x7E57000000000003ull /* ... and this one on a row that does not exist */

static void default_arena(struct buf *b, struct gen_tex_truth *truth)
{
	struct gen_tex_opts o = {0};

	buf_init(b);
	assert_int_equal(gen_psg_textures(&o, b, NULL, truth), RC_OK);
	assert_false(b->oom);
}

/* One Texture row (bytes never read by the scan) and a TOC that names three GUIDs: the
 * texture's, one on the VersionData and one on a row past the dictionary. */
static void lying_arena(struct buf *out)
{
	struct psg_builder *b = psgb_new(PSGB_REG_TEXTURE10, 0x7E571E00u);
	uint8_t tex[40] = {0};
	uint32_t ver, t;

	assert_non_null(b);
	ver = psgo_version(b, PSGO_NEW, false);
	t = psgb_add(b, RW_T_TEXTURE, 16, tex, sizeof tex);
	const struct psgo_toc_entry toc[3] = {
	    {.name = "real", .guid = G_TRUE, .type = RW_T_TEXTURE_HASH, .object = t},
	    {.name = "lie", .guid = G_LIE, .type = RW_T_TEXTURE_HASH, .object = ver},
	    {.name = "dangling", .guid = G_DANG, .type = RW_T_TEXTURE_HASH, .object = 999},
	};
	assert_true(psgo_toc(b, PSGO_NEW, toc, 3) != UINT32_MAX);
	buf_init(out);
	assert_int_equal(psgb_finish(b, 0, out, NULL), RC_OK);
}

static enum rc scan(const struct buf *b, uint64_t max_bytes, size_t max_guids, uint64_t **g,
		    size_t *n)
{
	struct src s;
	struct src_mem m;

	src_init_mem(&s, &m, b->data, b->len);
	return skate_toc_texture_guids(&s, max_bytes, max_guids, g, n);
}

static int by_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* Every texture GUID of a texture arena, sorted; only those a TOC names on a Texture row; the
 * caps on bytes and GUIDs; arenas that are no texture arena refused. */
static void test_toc_scan(void **state)
{
	struct gen_tex_truth truth = {0};
	struct buf b, lie, junk;
	uint64_t *g, want[64];
	size_t n;

	(void)state;
	default_arena(&b, &truth);
	assert_true(truth.n > 2 && truth.n <= 64);
	for (size_t k = 0; k < truth.n; k++)
		want[k] = truth.items[k].guid;
	qsort(want, truth.n, sizeof *want, by_u64);
	assert_int_equal(scan(&b, 1u << 20, 4096, &g, &n), RC_OK);
	assert_int_equal(n, truth.n);
	assert_memory_equal(g, want, n * sizeof *g);
	free(g);
	/* at most max_guids kept */
	assert_int_equal(scan(&b, 1u << 20, 2, &g, &n), RC_OK);
	assert_int_equal(n, 2);
	free(g);
	/* the byte cap: refused whole, never indexed in part */
	assert_int_equal(scan(&b, 64, 4096, &g, &n), RC_TOOBIG);
	assert_int_equal(n, 0);
	assert_null(g);
	assert_int_equal(scan(&b, 600, 4096, &g, &n), RC_TOOBIG);
	/* a TOC that lies: only the GUID on a Texture row counts */
	lying_arena(&lie);
	assert_int_equal(scan(&lie, 1u << 20, 4096, &g, &n), RC_OK);
	assert_int_equal(n, 1);
	assert_int_equal(g[0], G_TRUE);
	free(g);
	/* not texture arenas: garbage, a header and nothing else */
	buf_init(&junk);
	buf_puts(&junk, "RW4junk");
	assert_true(scan(&junk, 1u << 20, 4096, &g, &n) != RC_OK);
	assert_int_equal(n, 0);
	assert_true(scan(&b, 1u << 20, 4096, &g, &n) == RC_OK);
	free(g);
	{
		struct buf cut = b;

		cut.len = 200; /* the header of a texture arena, cut */
		assert_true(scan(&cut, 1u << 20, 4096, &g, &n) != RC_OK);
	}
	buf_free(&junk);
	buf_free(&lie);
	buf_free(&b);
	gen_tex_truth_free(&truth);
}

static void write_rel(const char *rel, const struct buf *b)
{
	char p[256];
	int fd;

	snprintf(p, sizeof p, "%s/%s", dir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->data, b->len), (ssize_t)b->len);
	close(fd);
}

/* The folder layer's TOC index: nothing read at mount or listing time; on the first lookup,
 * every texture arena of any name (deep ones too) by path order; a lying TOC and garbage
 * passed over; the name index untouched. */
static void test_toc_folder(void **state)
{
	struct gen_tex_truth truth = {0};
	struct tree_opts o = {0};
	struct buf b, lie, junk;
	struct tree *t;
	struct tree_dir *d;
	struct guid_index *ix;
	struct guid_hit h[8];
	char why[256];
	size_t n;
	uint64_t g0;

	(void)state;
	default_arena(&b, &truth);
	g0 = truth.items[0].guid;
	lying_arena(&lie);
	buf_init(&junk);
	buf_puts(&junk, "not an arena at all, though named like one");
	snprintf(dir, sizeof dir, "/tmp/psgfs-gix.XXXXXX");
	assert_non_null(mkdtemp(dir));
	mkdir_rel("a");
	mkdir_rel("a/b");
	write_rel("z_textures.psg", &b);
	write_rel("a/b/sky_textures.rx2", &b);
	write_rel("a/lie.PSG", &lie);
	write_rel("junk.psg", &junk);
	touch("readme.txt");

	assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	ix = folder_toc_index(t);
	assert_non_null(ix);
	assert_int_equal(tree_opendir(t, TREE_ROOT_INO, &d), RC_OK);
	tree_closedir(t, d);
	assert_false(guid_index_built(ix)); /* mounting and listing read no arena */
	n = guid_index_find(ix, g0, "psg", h, 8);
	assert_true(guid_index_built(ix));
	assert_int_equal(n, 2);
	assert_string_equal(h[0].path, "z_textures.psg"); /* the model's platform first */
	assert_string_equal(h[1].path, "a/b/sky_textures.rx2");
	for (size_t i = 0; i < n; i++)
		free(h[i].path);
	n = guid_index_find(ix, g0, NULL, h, 8); /* no platform: path order */
	assert_int_equal(n, 2);
	assert_string_equal(h[0].path, "a/b/sky_textures.rx2");
	for (size_t i = 0; i < n; i++)
		free(h[i].path);
	n = guid_index_find(ix, G_TRUE, NULL, h, 8);
	assert_int_equal(n, 1);
	assert_string_equal(h[0].path, "a/lie.PSG");
	free(h[0].path);
	assert_int_equal(guid_index_find(ix, G_LIE, NULL, h, 8), 0);
	assert_int_equal(guid_index_find(ix, G_DANG, NULL, h, 8), 0);
	assert_int_equal(guid_index_count(ix), 2 * truth.n + 1);
	assert_int_equal(guid_index_count(folder_guid_index(t)), 0); /* no GUID names here */
	tree_close(t);
	assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	buf_free(&junk);
	buf_free(&lie);
	buf_free(&b);
	gen_tex_truth_free(&truth);
}

/* A model whose only GUID the companion lacks is its material name's (AttribulatorMaterialName,
 * never a texture): reading its materials builds neither mount-wide index (the TOC one reads
 * every arena of the mount inside that one request). */
static void test_toc_not_for_names(void **state)
{
	struct gen_tex_truth truth = {0};
	struct tree_opts o = {0};
	struct buf model, tex;
	struct tree *t;
	struct tree_stat ts;
	char why[256], text[4096];
	size_t got = 0;

	(void)state;
	default_arena(&tex, &truth);
	buf_init(&model);
	assert_int_equal(gen_psg_sky(0, &model, NULL), RC_OK);
	snprintf(dir, sizeof dir, "/tmp/psgfs-gix.XXXXXX");
	assert_non_null(mkdtemp(dir));
	write_rel("sky.psg", &model);
	write_rel("sky_Textures.psg", &tex);
	write_rel("other_textures.psg", &tex); /* something the TOC index would read */

	assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	assert_int_equal(tree_resolve(t, "sky.psg/materials/00.material/material.txt", &ts), RC_OK);
	assert_true(ts.size < sizeof text);
	assert_int_equal(tree_read(t, ts.ino, 0, sizeof text - 1, text, &got), RC_OK);
	text[got] = '\0';
	assert_false(guid_index_built(folder_toc_index(t)));
	assert_false(guid_index_built(folder_guid_index(t)));
	assert_non_null(strstr(text, "\tAttribulatorMaterialName\tguid\t"));
	assert_non_null(strstr(text, "\t- (not in the companion)\n"));
	tree_close(t);
	assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	buf_free(&model);
	buf_free(&tex);
	gen_tex_truth_free(&truth);
}

/* The TOC index's build reads within a total budget: past it, indexing stops and a texture
 * GUID not found says the index stopped (at 0 bytes nothing is read at all). */
static void test_toc_budget(void **state)
{
	struct gen_tex_truth truth = {0};
	struct tree_opts o = {0};
	struct buf model, tex;
	struct tree *t;
	struct tree_stat ts;
	char why[256], text[4096];
	size_t got = 0;

	(void)state;
	default_arena(&tex, &truth);
	buf_init(&model);
	assert_int_equal(gen_psg_sky(0, &model, NULL), RC_OK);
	snprintf(dir, sizeof dir, "/tmp/psgfs-gix.XXXXXX");
	assert_non_null(mkdtemp(dir));
	write_rel("sky.psg", &model);	   /* no companion */
	write_rel("z_textures.psg", &tex); /* holds its textures by TOC */
	for (int pass = 0; pass < 2; pass++) {
		atomic_store(&folder_toc_budget, pass ? 256ull << 20 : 0);
		assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
		assert_int_equal(tree_resolve(t, "sky.psg/materials/00.material/material.txt", &ts),
				 RC_OK);
		assert_true(ts.size < sizeof text);
		assert_int_equal(tree_read(t, ts.ino, 0, sizeof text - 1, text, &got), RC_OK);
		text[got] = '\0';
		if (pass) {
			assert_non_null(
			    strstr(text, " in z_textures.psg (by its TableOfContents)"));
			assert_null(strstr(text, "budget"));
		} else {
			assert_non_null(strstr(text, "\tdiffuse\t"));
			assert_non_null(strstr(text,
					       "- (no companion, nor in the texture arenas of the "
					       "mount read before the index's read budget ran "
					       "out)\n"));
			assert_null(strstr(text, "(by its TableOfContents"));
		}
		tree_close(t);
	}
	atomic_store(&folder_toc_budget, 256ull << 20);
	assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	buf_free(&model);
	buf_free(&tex);
	gen_tex_truth_free(&truth);
}

/* ---- nested archives: a district's Tex stream inside a .big inside a .big ---- */

struct dist_files {
	char *name[64];
	struct buf b[64];
	size_t n;
};

static enum rc dist_put(void *ctx, const char *rel, const struct buf *b)
{
	struct dist_files *f = ctx;

	assert_true(f->n < 64);
	f->name[f->n] = strdup(rel);
	buf_init(&f->b[f->n]);
	buf_put(&f->b[f->n], b->data, b->len);
	assert_false(f->b[f->n].oom);
	f->n++;
	return RC_OK;
}

static const struct buf *dist_file(const struct dist_files *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->name[i], name))
			return &f->b[i];
	fail_msg("%s not written", name);
	return NULL;
}

/* The IDs of the assets of stream file sf (with its table toc), in stream order. */
static size_t stream_ids(const struct buf *sf, const struct buf *toc, uint64_t *ids, size_t max)
{
	struct src_mem ms, mt;
	struct src s, t;
	struct arc a;
	struct diag d;
	size_t n = 0;

	src_init_mem(&s, &ms, sf->data, sf->len);
	src_init_mem(&t, &mt, toc->data, toc->len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, &t, &a, &d), RC_OK);
	for (uint32_t i = 0; i < a.n && n < max; i++)
		ids[n++] = a.e[i].id;
	arc_free(&a);
	diag_free(&d);
	return n;
}

static void big_of(const struct gen_big_entry *e, uint32_t n, struct buf *out)
{
	struct gen_sink sink;
	uint64_t total;

	buf_init(out);
	gen_sink_buf(&sink, out);
	assert_int_equal(gen_big_write(&(struct gen_big_opts){0}, e, n, &sink, NULL, &total),
			 RC_OK);
}

#define NEST_DIR "dlc.big/content/world.big/world/DIST_Gen/"

/* dlc.big (stored) holds content/world.big (RefPack), which holds the district's files under
 * world/DIST_Gen/. Each index finds the Tex stream's arenas by their mount paths, only on the
 * first lookup, and a Pres model's material links into the Tex stream; then with the cap on
 * nested archives at 1 (only world.big opened) neither finds them and the TOC index says it
 * stopped; at 2 the Tex stream, last in the table after every Pres and Sim stream file, is
 * still reached (the walks take Tex streams first; the name index's takes nothing else). */
static void test_nested(void **state)
{
	struct dist_files f = {0};
	struct gen_district_sink sink = {dist_put, &f};
	struct gen_big_entry e[64];
	struct buf world, dlc;
	uint64_t tex[16], pres[16];
	size_t n_tex, n_pres, ne = 0;
	char why[256], text[4096], path[512];

	(void)state;
	assert_int_equal(gen_district(&(struct gen_district_opts){.seed = 7}, &sink), RC_OK);
	n_tex = stream_ids(dist_file(&f, "cTex_Global.psf"), dist_file(&f, "DIST_Gen_Tex.pst"), tex,
			   16);
	n_pres = stream_ids(dist_file(&f, "cPres_Global.psf"), dist_file(&f, "DIST_Gen_Pres.pst"),
			    pres, 16);
	assert_true(n_tex >= 1 && n_pres >= 1);
	/* cTex_Global.psf last in the table (the walk must not take it in table order). */
	for (int last = 0; last < 2; last++)
		for (size_t i = 0; i < f.n; i++)
			if (strcmp(f.name[i], GEN_DISTRICT_DMO_BIG) != 0 &&
			    (strcmp(f.name[i], "cTex_Global.psf") == 0) == (last == 1))
				e[ne++] = (struct gen_big_entry){.folder = "world/DIST_Gen",
								 .name = f.name[i],
								 .data = f.b[i].data,
								 .len = f.b[i].len,
								 .method = GB_REFPACK};
	assert_true(ne >= 12 && !strcmp(e[ne - 1].name, "cTex_Global.psf"));
	big_of(e, (uint32_t)ne, &world);
	big_of(
	    &(struct gen_big_entry){
		.folder = "content", .name = "world.big", .data = world.data, .len = world.len},
	    1, &dlc);
	snprintf(dir, sizeof dir, "/tmp/psgfs-gix.XXXXXX");
	assert_non_null(mkdtemp(dir));
	write_rel("dlc.big", &dlc);

	for (int pass = 0; pass < 3; pass++) {
		struct tree_opts o = {0};
		struct guid_hit h[4];
		struct tree_stat ts;
		struct tree *t;
		size_t got = 0;

		atomic_store(&folder_nested_max, pass == 0 ? 4096u : pass == 1 ? 1u : 2u);
		assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
		/* Mounting and listing the stream files (archives in archives) builds no index. */
		assert_int_equal(tree_resolve(t, NEST_DIR "cTex_Global.psf", &ts), RC_OK);
		assert_int_equal(tree_resolve(t, NEST_DIR "cPres_Global.psf", &ts), RC_OK);
		assert_false(guid_index_built(folder_guid_index(t)));
		assert_false(guid_index_built(folder_toc_index(t)));
		snprintf(path, sizeof path,
			 NEST_DIR
			 "cPres_Global.psf/0x%016llx.psg/materials/00.material/material.txt",
			 (unsigned long long)pres[0]);
		assert_int_equal(tree_resolve(t, path, &ts), RC_OK);
		assert_true(ts.size < sizeof text);
		assert_int_equal(tree_read(t, ts.ino, 0, sizeof text - 1, text, &got), RC_OK);
		text[got] = '\0';
		assert_true(guid_index_built(folder_guid_index(t)));
		snprintf(path, sizeof path, " in " NEST_DIR "cTex_Global.psf/0x");
		if (pass == 2) {
			assert_non_null(strstr(text, path));
			assert_false(guid_index_partial(folder_guid_index(t)));
			assert_false(guid_index_built(folder_toc_index(t)));
			tree_close(t);
			continue;
		}
		if (pass) {
			assert_null(strstr(text, path));
			assert_true(guid_index_partial(folder_guid_index(t)));
			assert_true(guid_index_partial(folder_toc_index(t)));
			assert_non_null(
			    strstr(text, "read before the index's read budget ran out)"));
			assert_int_equal(guid_index_find(folder_toc_index(t), tex[0], NULL, h, 4),
					 0);
			tree_close(t);
			continue;
		}
		assert_non_null(strstr(text, path));
		assert_false(guid_index_partial(folder_guid_index(t)));
		for (size_t i = 0; i < n_tex; i++) {
			struct guid_index *ix[2] = {folder_guid_index(t), folder_toc_index(t)};

			snprintf(path, sizeof path, NEST_DIR "cTex_Global.psf/0x%016llx.psg",
				 (unsigned long long)tex[i]);
			for (int k = 0; k < 2; k++) {
				assert_int_equal(guid_index_find(ix[k], tex[i], "psg", h, 4), 1);
				assert_string_equal(h[0].path, path);
				assert_true(k || h[0].slot); /* the name index: fed with its slot */
				free(h[0].path);
			}
		}
		assert_false(guid_index_partial(folder_toc_index(t)));
		tree_close(t);
	}
	atomic_store(&folder_nested_max, 4096u);
	assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	for (size_t i = 0; i < f.n; i++) {
		free(f.name[i]);
		buf_free(&f.b[i]);
	}
	buf_free(&world);
	buf_free(&dlc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),	cmocka_unit_test(test_find),
	    cmocka_unit_test(test_folder_walk), cmocka_unit_test(test_toc_scan),
	    cmocka_unit_test(test_toc_folder),	cmocka_unit_test(test_toc_not_for_names),
	    cmocka_unit_test(test_toc_budget),	cmocka_unit_test(test_nested),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
