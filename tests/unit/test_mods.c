/*
 * Texture mods through the tree API (no FUSE; runs under the sanitizers): writers and their
 * private copies, flush commits, refusals, temporaries (create, write, read, rename over a
 * picture, rename, unlink), what is read-only, OUTDIR's file and the mount serving it, two
 * textures of one arena, a later mount starting from OUTDIR, a folder mount with the model
 * whose companion changed, and the source never touched.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
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

#include "psgfs/gen/gen_folder.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/tree/mods.h"
#include "psgfs/tree/tree.h"
#include "texmod_testutil.h"

static char dir[64], src_path[128], out_dir[128];

/* Faults (linked with -Wl,--wrap=fsync,--wrap=ftruncate,--wrap=ftruncate64): a folder's
 * fsync, or every ftruncate, fails while set. */
static int fail_dir_fsync, fail_ftruncate;
int __real_fsync(int fd);
int __real_ftruncate(int fd, off_t len);
int __wrap_fsync(int fd);
int __wrap_ftruncate(int fd, off_t len);

int __wrap_fsync(int fd)
{
	struct stat st;

	if (fail_dir_fsync && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EIO;
		return -1;
	}
	return __real_fsync(fd);
}

int __wrap_ftruncate(int fd, off_t len)
{
	if (fail_ftruncate) {
		errno = ENOSPC;
		return -1;
	}
	return __real_ftruncate(fd, len);
}

/* glibc may name it ftruncate64 where off_t is 64 bits. */
int __real_ftruncate64(int fd, off_t len);
int __wrap_ftruncate64(int fd, off_t len);

int __wrap_ftruncate64(int fd, off_t len)
{
	if (fail_ftruncate) {
		errno = ENOSPC;
		return -1;
	}
	return __real_ftruncate64(fd, len);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc(len ? (size_t)len : 1);
	*n = fread(p, 1, (size_t)len, f);
	fclose(f);
	return p;
}

static void spit(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	struct buf b;

	(void)state;
	snprintf(dir, sizeof dir, "/tmp/psgfs-mods.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(src_path, sizeof src_path, "%s/t.psg", dir);
	snprintf(out_dir, sizeof out_dir, "%s/out", dir);
	mkdir(out_dir, 0755);
	buf_init(&b);
	assert_int_equal(gen_psg_textures(NULL, &b, NULL, NULL), RC_OK);
	spit(src_path, b.data, b.len);
	buf_free(&b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static struct tree *open_tree(const char *path)
{
	struct tree_opts o = {.mods_dir = out_dir};
	struct tree *t = NULL;
	char why[256];

	assert_int_equal(tree_open(path, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	return t;
}

static tree_ino ino_of(struct tree *t, const char *path)
{
	struct tree_stat st;

	assert_int_equal(tree_resolve(t, path, &st), RC_OK);
	return st.ino;
}

/* The whole of a node as the tree serves it. */
static uint8_t *read_all(struct tree *t, tree_ino ino, size_t *n)
{
	struct tree_stat st;
	uint8_t *p;

	assert_int_equal(tree_getattr(t, ino, &st), RC_OK);
	p = malloc(st.size + 1);
	assert_int_equal(tree_read(t, ino, 0, (size_t)st.size, p, n), RC_OK);
	assert_int_equal(*n, st.size);
	return p;
}

static char *text(struct tree *t, const char *path)
{
	size_t n;
	char *p = (char *)read_all(t, ino_of(t, path), &n);

	p[n] = 0;
	return p;
}

/* Write bytes through a new writer of node ino (in pieces) and close it: the flush result. */
static enum rc write_pic(struct tree *t, tree_ino ino, const uint8_t *p, size_t n)
{
	struct tree_mods_file *f;
	enum rc r = tree_mods_open(t, ino, true, &f);

	if (r != RC_OK)
		return r;
	for (size_t off = 0; off < n; off += 1000)
		assert_int_equal(tree_mods_write(f, off, p + off, n - off < 1000 ? n - off : 1000),
				 RC_OK);
	r = tree_mods_flush(f);
	tree_mods_release(f);
	return r;
}

/* The texture names of the generated arena (textures/<name>.dds), by index. */
static void tex_name(struct tree *t, unsigned k, char *out, size_t n)
{
	struct tree_dir *d;
	unsigned seen = 0;

	assert_int_equal(tree_opendir(t, ino_of(t, "textures"), &d), RC_OK);
	for (size_t i = 0; i < tree_dir_count(d); i++) {
		const char *nm = tree_dir_name(d, i);
		size_t l = strlen(nm);

		if (l > 4 && !strcmp(nm + l - 4, ".dds") && seen++ == k)
			snprintf(out, n, "textures/%.*s", (int)(l - 4), nm);
	}
	tree_closedir(t, d);
}

static void test_write_commit(void **st)
{
	struct tree *t;
	char base[96], p_dds[128], p_png[128], out_file[160];
	size_t n, on, sn;
	uint8_t *dds, *back, *src0 = slurp(src_path, &sn), *outp;
	const struct texmod_shape sh = {TEXK_DXT5, 32, 16, 3, 1};
	uint8_t *pay, *mine;
	size_t plen, ml;
	char *info;

	(void)st;
	t = open_tree(src_path);
	tex_name(t, 0, base, sizeof base);
	snprintf(p_dds, sizeof p_dds, "%s.dds", base);
	snprintf(p_png, sizeof p_png, "%s.png", base);
	snprintf(out_file, sizeof out_file, "%s/t.psg", out_dir);
	/* its own .dds back: OUTDIR/t.psg is the source */
	dds = read_all(t, ino_of(t, p_dds), &n);
	assert_int_equal(write_pic(t, ino_of(t, p_dds), dds, n), RC_OK);
	outp = slurp(out_file, &on);
	assert_non_null(outp);
	assert_int_equal(on, sn);
	assert_memory_equal(outp, src0, sn);
	free(outp);
	/* a new shape: served back as written */
	pay = tm_payload(&sh, 3, true, &plen);
	mine = tm_dds(&sh, pay, plen, &ml);
	assert_int_equal(write_pic(t, ino_of(t, p_dds), mine, ml), RC_OK);
	back = read_all(t, ino_of(t, p_dds), &n);
	assert_int_equal(n, ml);
	assert_memory_equal(back, mine, ml);
	free(back);
	info = text(t, "info.txt");
	assert_non_null(strstr(info, "laid out again"));
	assert_non_null(strstr(info, "source: "));
	free(info);
	/* garbage: refused, nothing changes, errors.txt says why */
	outp = slurp(out_file, &on);
	assert_int_equal(write_pic(t, ino_of(t, p_dds), (const uint8_t *)"garbage!", 8), RC_INVAL);
	back = slurp(out_file, &n);
	assert_int_equal(n, on);
	assert_memory_equal(back, outp, on);
	free(back);
	free(outp);
	info = text(t, "errors.txt");
	assert_non_null(strstr(info, "refused: not a DDS file"));
	free(info);
	/* a PNG of another size: refused with the size to use */
	{
		uint8_t px[8 * 8 * 4];
		uint8_t *png;
		size_t pl;

		tm_pattern(1, 0, 0, 8, 8, true, px);
		png = tm_png_rgba(px, 8, 8, &pl);
		assert_int_equal(write_pic(t, ino_of(t, p_png), png, pl), RC_INVAL);
		free(png);
		info = text(t, "errors.txt");
		assert_non_null(strstr(info, "save it at 32x16"));
		free(info);
	}
	/* the source never changed */
	back = slurp(src_path, &n);
	assert_int_equal(n, sn);
	assert_memory_equal(back, src0, sn);
	free(back);
	tree_close(t);
	/* a later mount starts from OUTDIR */
	t = open_tree(src_path);
	back = read_all(t, ino_of(t, p_dds), &n);
	assert_int_equal(n, ml);
	assert_memory_equal(back, mine, ml);
	free(back);
	tree_close(t);
	free(dds);
	free(pay);
	free(mine);
	free(src0);
}

static void test_read_only(void **st)
{
	struct tree *t = open_tree(src_path);
	struct tree_mods_file *f;
	struct tree_stat s;
	char base[96], p[128];

	(void)st;
	tex_name(t, 1, base, sizeof base);
	snprintf(p, sizeof p, "%s.dds", base);
	assert_int_equal(tree_mods_open(t, ino_of(t, "info.txt"), true, &f), RC_READONLY);
	assert_int_equal(tree_mods_open(t, ino_of(t, "objects"), false, &f), RC_READONLY);
	assert_int_equal(tree_mods_create(t, ino_of(t, "objects"), "x", false, false, 0, 0, &s, &f),
			 RC_READONLY);
	assert_int_equal(tree_mods_unlink(t, ino_of(t, "textures"), base + 9), RC_NOENT);
	assert_int_equal(tree_mods_unlink(t, ino_of(t, "textures"), p + 9), RC_READONLY);
	assert_int_equal(
	    tree_mods_rename(t, ino_of(t, "textures"), p + 9, ino_of(t, "textures"), "y.dds", 0),
	    RC_READONLY);
	assert_int_equal(tree_mods_truncate(t, ino_of(t, p), NULL, 0, &s), RC_READONLY);
	assert_int_equal(tree_mods_setattr(t, ino_of(t, "header.txt"), 0, &s, &s), RC_READONLY);
	assert_int_equal(tree_mods_setattr(t, ino_of(t, p), 0, &s, &s), RC_OK);
	assert_true(s.writable);
	assert_int_equal(tree_getattr(t, ino_of(t, "info.txt"), &s), RC_OK);
	assert_false(s.writable);
	assert_int_equal(s.perm & 0222, 0200); /* as everywhere; its writes fail */
	tree_close(t);
}

/* A temporary: created, written, read back, renamed, renamed over a picture (committed). */
static void test_temporaries(void **st)
{
	struct tree *t = open_tree(src_path);
	struct tree_mods_file *f, *g;
	struct tree_stat s;
	char base[96], p[128], back[64];
	tree_ino dir_ino = ino_of(t, "textures"), tmp;
	size_t n, got;
	uint8_t *dds, *served;

	(void)st;
	tex_name(t, 2, base, sizeof base);
	snprintf(p, sizeof p, "%s.dds", base);
	dds = read_all(t, ino_of(t, p), &n);
	assert_int_equal(tree_mods_create(t, dir_ino, ".tmp1", true, false, 1, 2, &s, &f), RC_OK);
	tmp = s.ino;
	assert_int_equal(s.size, 0);
	assert_int_equal(tree_mods_create(t, dir_ino, ".tmp1", true, false, 1, 2, &s, &g),
			 RC_EXISTS);
	assert_int_equal(tree_mods_write(f, 0, dds, n), RC_OK);
	assert_int_equal(tree_mods_read(f, 0, 64, back, &got), RC_OK);
	assert_int_equal(got, 64);
	assert_memory_equal(back, dds, 64);
	assert_int_equal(tree_mods_flush(f), RC_OK); /* a temporary commits nothing */
	tree_mods_release(f);
	/* looked up, not listed */
	assert_int_equal(tree_lookup(t, dir_ino, ".tmp1", &s), RC_OK);
	assert_int_equal(s.ino, tmp);
	assert_int_equal(s.size, n);
	assert_int_equal(tree_read(t, tmp, 0, 64, back, &got), RC_OK);
	assert_memory_equal(back, dds, 64);
	assert_int_equal(tree_mods_rename(t, dir_ino, ".tmp1", dir_ino, ".tmp2", 0), RC_OK);
	assert_int_equal(tree_lookup(t, dir_ino, ".tmp1", &s), RC_NOENT);
	/* truncated by name, then written again through a new descriptor */
	assert_int_equal(tree_mods_truncate(t, tmp, NULL, 10, &s), RC_OK);
	assert_int_equal(s.size, 10);
	assert_int_equal(tree_mods_open(t, tmp, true, &f), RC_OK);
	assert_int_equal(tree_mods_write(f, 0, dds, n), RC_OK);
	tree_mods_release(f);
	/* over the picture: committed, the name leads to the picture, the inode answers as it */
	assert_int_equal(tree_mods_rename(t, dir_ino, ".tmp2", dir_ino, p + 9, 0), RC_OK);
	assert_int_equal(tree_lookup(t, dir_ino, ".tmp2", &s), RC_NOENT);
	assert_int_equal(tree_getattr(t, tmp, &s), RC_OK);
	assert_int_equal(s.ino, ino_of(t, p));
	served = read_all(t, ino_of(t, p), &got);
	assert_int_equal(got, n);
	assert_memory_equal(served, dds, n);
	free(served);
	/* a garbage temporary renamed over a picture: refused, and discarded (it would never be
	 * a picture; editors do not remove what they failed to rename) */
	assert_int_equal(tree_mods_create(t, dir_ino, ".g", false, false, 0, 0, &s, &f), RC_OK);
	assert_int_equal(tree_mods_write(f, 0, "nope", 4), RC_OK);
	tree_mods_release(f);
	assert_int_equal(tree_mods_rename(t, dir_ino, ".g", dir_ino, p + 9, RENAME_NOREPLACE),
			 RC_EXISTS);
	assert_int_equal(tree_lookup(t, dir_ino, ".g", &s), RC_OK);
	assert_int_equal(tree_mods_rename(t, dir_ino, ".g", dir_ino, p + 9, 0), RC_INVAL);
	assert_int_equal(tree_lookup(t, dir_ino, ".g", &s), RC_NOENT);
	assert_int_equal(tree_mods_unlink(t, dir_ino, ".g"), RC_NOENT);
	free(dds);
	tree_close(t);
}

/* Two writers do not mix: each writes its copy, the last to flush wins; a writer that does not
 * truncate completes its picture from what the file held. */
static void test_two_writers_and_patch(void **st)
{
	struct tree *t = open_tree(src_path);
	struct tree_mods_file *a, *b;
	char base[96], p[128];
	size_t n, got;
	uint8_t *dds, *x, *y, *served;
	tree_ino ino;

	(void)st;
	tex_name(t, 6, base, sizeof base); /* A8R8G8B8 64x32: exact */
	snprintf(p, sizeof p, "%s.dds", base);
	ino = ino_of(t, p);
	dds = read_all(t, ino, &n);
	x = malloc(n), y = malloc(n);
	memcpy(x, dds, n), memcpy(y, dds, n);
	memset(x + 128, 0x11, 64), memset(y + 128, 0x22, 64);
	assert_int_equal(tree_mods_open(t, ino, true, &a), RC_OK);
	assert_int_equal(tree_mods_open(t, ino, true, &b), RC_OK);
	assert_int_equal(tree_mods_write(a, 0, x, n), RC_OK);
	assert_int_equal(tree_mods_write(b, 0, y, n), RC_OK);
	assert_int_equal(tree_mods_flush(b), RC_OK);
	assert_int_equal(tree_mods_flush(a), RC_OK);
	tree_mods_release(a);
	tree_mods_release(b);
	served = read_all(t, ino, &got);
	assert_memory_equal(served, x, n);
	free(served);
	/* a patch of 4 bytes: no truncation, the rest from the file as it is */
	assert_int_equal(tree_mods_open(t, ino, false, &a), RC_OK);
	assert_int_equal(tree_mods_write(a, 200, "\x01\x02\x03\x04", 4), RC_OK);
	assert_int_equal(tree_mods_flush(a), RC_OK);
	tree_mods_release(a);
	memcpy(x + 200, "\x01\x02\x03\x04", 4);
	served = read_all(t, ino, &got);
	assert_int_equal(got, n);
	assert_memory_equal(served, x, n);
	free(served);
	free(dds);
	free(x);
	free(y);
	tree_close(t);
}

/* A PNG of the picture's size, one colour, for texture picture node pic. */
static uint8_t *flat_png(struct tree *t, tree_ino pic, size_t *n)
{
	struct tree_stat s;
	uint8_t head[24], *rgba, *png;
	size_t got;
	uint32_t w, h;

	assert_int_equal(tree_getattr(t, pic, &s), RC_OK);
	assert_int_equal(tree_read(t, pic, 0, sizeof head, head, &got), RC_OK);
	w = ld_u32be(head + 16), h = ld_u32be(head + 20); /* the PNG's IHDR */
	rgba = calloc((size_t)w * h, 4);
	for (size_t i = 0; i < (size_t)w * h; i++)
		rgba[4 * i] = 200, rgba[4 * i + 1] = 30, rgba[4 * i + 3] = 255;
	png = tm_png_rgba(rgba, w, h, n);
	free(rgba);
	return png;
}

/* A folder: OUTDIR mirrors the path; the model whose companion changed embeds the new texture. */
static void test_folder(void **st)
{
	struct gen_folder_manifest man = {0};
	struct gen_folder_opts o = {.seed = 1, .assets = 4};
	char game[160], mat[400], pic[600], outf[600], *target = NULL, *model = NULL;
	struct tree *t;
	struct tree_dir *d;
	size_t n, gl;
	uint8_t *glb0, *glb1, *png;

	(void)st;
	snprintf(game, sizeof game, "%s/game", dir);
	assert_int_equal(gen_folder(&o, game, &man), RC_OK);
	for (size_t i = 0; i < man.n && !model; i++)
		if (!strcmp(man.v[i].kind, "model"))
			model = man.v[i].path;
	assert_non_null(model);
	t = open_tree(game);
	snprintf(mat, sizeof mat, "%s/materials", model);
	assert_int_equal(tree_opendir(t, ino_of(t, mat), &d), RC_OK);
	snprintf(mat, sizeof mat, "%s/materials/%s/diffuse.png", model, tree_dir_name(d, 0));
	tree_closedir(t, d);
	assert_int_equal(tree_readlink(t, ino_of(t, mat), &target), RC_OK);
	/* ../../../<stem>_Textures.psg/textures/<name>.png, from the model's folder */
	snprintf(pic, sizeof pic, "%.*s/%s", (int)(strrchr(model, '/') - model), model, target + 9);
	snprintf(outf, sizeof outf, "%s/export/", model);
	assert_int_equal(tree_opendir(t, ino_of(t, outf), &d), RC_OK);
	for (size_t i = 0; i < tree_dir_count(d); i++)
		if (strstr(tree_dir_name(d, i), ".glb"))
			snprintf(outf, sizeof outf, "%s/export/%s", model, tree_dir_name(d, i));
	tree_closedir(t, d);
	assert_non_null(strstr(outf, ".glb"));
	glb0 = read_all(t, ino_of(t, outf), &gl);
	png = flat_png(t, ino_of(t, pic), &n);
	assert_int_equal(write_pic(t, ino_of(t, pic), png, n), RC_OK);
	free(png);
	glb1 = read_all(t, ino_of(t, outf), &n);
	assert_true(n != gl || memcmp(glb0, glb1, n) != 0); /* the model embeds the new picture */
	snprintf(mat, sizeof mat, "%s/%.*s", out_dir, (int)(strstr(pic, "/textures/") - pic), pic);
	assert_int_equal(access(mat, R_OK), 0); /* OUTDIR/<the companion's path> */
	free(glb0);
	free(glb1);
	free(target);
	tree_close(t);
	gen_folder_manifest_free(&man);
}

/* The A8R8G8B8 picture (texture 6) with its texels inverted: an exact change. */
static uint8_t *inverted(const uint8_t *dds, size_t n)
{
	uint8_t *x = malloc(n);

	memcpy(x, dds, n);
	for (size_t i = 128; i < n; i++)
		x[i] = (uint8_t)~dds[i];
	return x;
}

/* A reader opened before a commit reads the content it opened, or RC_IO: never a mix. */
static void test_reader_across_commit(void **st)
{
	struct tree *t = open_tree(src_path);
	struct tree_mods_file *r0, *r1;
	char base[96], p[128];
	uint8_t *dds, *x, *buf;
	size_t n, got;
	bool direct;
	tree_ino ino;

	(void)st;
	tex_name(t, 6, base, sizeof base);
	snprintf(p, sizeof p, "%s.dds", base);
	ino = ino_of(t, p);
	dds = read_all(t, ino, &n);
	x = inverted(dds, n);
	buf = malloc(n);
	assert_int_equal(tree_mods_open_reader(t, ino, &r0, &direct), RC_OK);
	assert_non_null(r0);
	assert_false(direct); /* nothing written yet: the page cache may keep it */
	assert_int_equal(tree_mods_read(r0, 0, n / 2, buf, &got), RC_OK);
	assert_memory_equal(buf, dds, n / 2);
	assert_int_equal(write_pic(t, ino, x, n), RC_OK);
	assert_int_equal(tree_mods_read(r0, n / 2, n - n / 2, buf, &got), RC_IO);
	/* opened after: the new picture, around the page cache */
	assert_int_equal(tree_mods_open_reader(t, ino, &r1, &direct), RC_OK);
	assert_true(direct);
	assert_int_equal(tree_mods_read(r1, 0, n, buf, &got), RC_OK);
	assert_int_equal(got, n);
	assert_memory_equal(buf, x, n);
	assert_int_equal(tree_mods_flush(r1), RC_OK);
	tree_mods_release(r0);
	tree_mods_release(r1);
	/* not a picture: no handle */
	assert_int_equal(tree_mods_open_reader(t, ino_of(t, "info.txt"), &r0, &direct), RC_OK);
	assert_null(r0);
	free(buf);
	free(x);
	free(dds);
	tree_close(t);
}

/* A new name with a picture's extension would be a new texture: refused, with its line. A
 * temporary whose rename is refused is discarded; abandoned ones make room at the limit. */
static void test_new_names_and_room(void **st)
{
	struct tree *t = open_tree(src_path);
	struct tree_mods_file *f;
	struct tree_stat s;
	tree_ino d = ino_of(t, "textures");
	char name[32], base[96], tmp[128], *err;

	(void)st;
	assert_int_equal(tree_mods_create(t, d, "new.png", false, true, 0, 0, &s, &f), RC_DENIED);
	assert_int_equal(tree_mods_create(t, d, "New.DDS", true, true, 0, 0, &s, &f), RC_DENIED);
	assert_int_equal(tree_lookup(t, d, "new.png", &s), RC_NOENT);
	err = text(t, "errors.txt");
	assert_non_null(strstr(err, "textures/new.png: refused: no texture of this arena has that "
				    "name, and texture mods cannot add one"));
	free(err);
	/* a name that is neither a picture's nor a temporary's would be lost at unmount: refused;
	 * a picture's name with a suffix (Qt's T.png.XXXXXX) and a backup (T~) are temporaries */
	assert_int_equal(tree_mods_create(t, d, "notes.txt", false, true, 0, 0, &s, &f), RC_DENIED);
	assert_int_equal(tree_lookup(t, d, "notes.txt", &s), RC_NOENT);
	err = text(t, "errors.txt");
	assert_non_null(strstr(err, "textures/notes.txt: refused: not a picture of this arena nor "
				    "a temporary's name"));
	free(err);
	tex_name(t, 0, base, sizeof base);
	snprintf(tmp, sizeof tmp, "%s.png.Ab12Cd", base + 9);
	assert_int_equal(tree_mods_create(t, d, tmp, true, false, 0, 0, &s, &f), RC_OK);
	tree_mods_release(f);
	assert_int_equal(tree_mods_unlink(t, d, tmp), RC_OK);
	assert_int_equal(tree_mods_create(t, d, "backup~", true, false, 0, 0, &s, &f), RC_OK);
	tree_mods_release(f);
	assert_int_equal(tree_mods_unlink(t, d, "backup~"), RC_OK);
	/* an editor's temporary is no texture name; renamed to one, it is refused too */
	assert_int_equal(tree_mods_create(t, d, ".goutputstream-1", true, false, 0, 0, &s, &f),
			 RC_OK);
	tree_mods_release(f);
	assert_int_equal(tree_mods_rename(t, d, ".goutputstream-1", d, "other.png", 0), RC_DENIED);
	assert_int_equal(tree_mods_rename(t, d, ".goutputstream-1", d, "x.png.part", 0), RC_DENIED);
	assert_int_equal(tree_mods_rename(t, d, ".goutputstream-1", d, ".x.png.part", 0), RC_OK);
	/* 300 temporaries closed and never renamed: the oldest make room for the newest */
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof name, ".tmp-%d", i);
		assert_int_equal(tree_mods_create(t, d, name, true, false, 0, 0, &s, &f), RC_OK);
		assert_int_equal(tree_mods_write(f, 0, "x", 1), RC_OK);
		tree_mods_release(f);
	}
	assert_int_equal(tree_lookup(t, d, ".x.png.part", &s), RC_NOENT); /* the oldest went */
	assert_int_equal(tree_lookup(t, d, ".tmp-299", &s), RC_OK);
	err = text(t, "errors.txt");
	assert_non_null(
	    strstr(err, "textures/.x.png.part: a temporary nobody had open was discarded"));
	free(err);
	tree_close(t);
}

/* chmod and touch on a picture are refused (a no-op request is not); a temporary keeps them. */
static void test_setattr(void **st)
{
	struct tree *t = open_tree(src_path);
	struct tree_mods_file *f;
	struct tree_stat s, want = {.perm = 0600};
	char base[96], p[128], *err;
	tree_ino d = ino_of(t, "textures");

	(void)st;
	tex_name(t, 0, base, sizeof base);
	snprintf(p, sizeof p, "%s.png", base);
	assert_int_equal(tree_mods_setattr(t, ino_of(t, p), TREE_SET_MODE, &want, &s), RC_DENIED);
	assert_int_equal(tree_mods_setattr(t, ino_of(t, p), TREE_SET_MTIME, &want, &s), RC_DENIED);
	assert_int_equal(tree_mods_setattr(t, ino_of(t, p), 0, &want, &s), RC_OK);
	err = text(t, "errors.txt");
	assert_non_null(strstr(err, "refused to change its mode"));
	assert_non_null(strstr(err, "refused to change its times"));
	free(err);
	assert_int_equal(tree_mods_create(t, d, ".tmp", true, false, 0, 0, &s, &f), RC_OK);
	want.mtime.tv_sec = 12345;
	assert_int_equal(tree_mods_setattr(t, s.ino, TREE_SET_MODE | TREE_SET_MTIME, &want, &s),
			 RC_OK);
	assert_int_equal(s.perm, 0600);
	assert_int_equal(s.mtime.tv_sec, 12345);
	tree_mods_release(f);
	tree_close(t);
}

static int rm_tree(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* OUTDIR removed while mounted: saves fail with a line saying so; re-created, it is used. A
 * failed folder sync after the rename: the save succeeded (OUTDIR and the mount have it), and
 * errors.txt says it may not survive a crash. A failed ftruncate says what failed. */
static void test_outdir_faults(void **st)
{
	struct tree *t = open_tree(src_path);
	struct tree_mods_file *f;
	char base[96], p[128], out_file[160], *err;
	uint8_t *dds, *x, *back;
	size_t n, on;
	tree_ino ino;

	(void)st;
	tex_name(t, 6, base, sizeof base);
	snprintf(p, sizeof p, "%s.dds", base);
	snprintf(out_file, sizeof out_file, "%s/t.psg", out_dir);
	ino = ino_of(t, p);
	dds = read_all(t, ino, &n);
	x = inverted(dds, n);
	assert_int_equal(rm_tree(out_dir), 0);
	assert_int_equal(tree_mods_open(t, ino, true, &f), RC_IO);
	err = text(t, "errors.txt");
	assert_non_null(strstr(err, "not written: the mods folder"));
	assert_non_null(strstr(err, "is gone (removed while mounted"));
	free(err);
	assert_int_equal(mkdir(out_dir, 0755), 0);
	assert_int_equal(write_pic(t, ino, x, n), RC_OK);
	assert_int_equal(access(out_file, R_OK), 0);
	/* the folder sync fails after the rename */
	fail_dir_fsync = 1;
	assert_int_equal(write_pic(t, ino, dds, n), RC_OK);
	fail_dir_fsync = 0;
	back = read_all(t, ino, &on);
	assert_int_equal(on, n);
	assert_memory_equal(back, dds, n);
	free(back);
	err = text(t, "errors.txt");
	assert_non_null(strstr(err, "but its folder could not be synced"));
	free(err);
	/* a picture whose copy cannot be given its length */
	assert_int_equal(tree_mods_open(t, ino, false, &f), RC_OK);
	assert_int_equal(tree_mods_write(f, 200, "\x01", 1), RC_OK);
	fail_ftruncate = 1;
	assert_int_equal(tree_mods_flush(f), RC_NOSPACE);
	fail_ftruncate = 0;
	tree_mods_release(f);
	err = text(t, "errors.txt");
	assert_non_null(strstr(err, "not written: cannot set the length of its file in the mods "
				    "folder: No space left on device"));
	assert_null(strstr(err, "read error"));
	free(err);
	free(x);
	free(dds);
	tree_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_write_commit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_only, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_temporaries, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_two_writers_and_patch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_folder, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reader_across_commit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_new_names_and_room, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_setattr, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_outdir_faults, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
