/*
 * Folder mounts through the tree API: what an asset shows when its file vanished before it
 * was opened, when it changed after it was closed by the open-asset limit, and when opening
 * it failed for lack of file descriptors (a passing condition, not damage to remember).
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/gen/gen_stream.h"
#include "psgfs/tree/tree.h"

#define SCRATCH_DIR "/tmp/psgfs-folder.XXXXXX"
#include "scratch_fixture.h"

static void put(const char *name, const struct buf *b)
{
	char p[2048];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	f = fopen(p, "wb");
	assert_non_null(f);
	if (b->len) /* an empty buf may have no data at all */
		assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
	assert_int_equal(fclose(f), 0);
}

static void put_sky(const char *name, uint64_t shuffle)
{
	struct buf b;

	buf_init(&b);
	assert_int_equal(gen_psg_sky(shuffle, &b, NULL), RC_OK);
	put(name, &b);
	buf_free(&b);
}

static void put_psk(const char *name)
{
	struct gen_psk_opts o;
	struct buf b;

	gen_psk_opts_default(&o, 3);
	buf_init(&b);
	assert_int_equal(gen_psk_file(&o, &b), RC_OK);
	put(name, &b);
	buf_free(&b);
}

static struct tree *open_dir(unsigned max_assets)
{
	struct tree_opts o = {.max_assets = max_assets};
	struct tree *t;
	char why[256];

	assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	return t;
}

/* The whole of a file of the tree, NUL-terminated; NULL with *r on failure. */
static char *slurp(struct tree *t, const char *path, enum rc *r)
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
	return p;
}

static void list_root(struct tree *t)
{
	struct tree_dir *d;

	assert_int_equal(tree_opendir(t, TREE_ROOT_INO, &d), RC_OK);
	tree_closedir(t, d);
}

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* Listed, then deleted before anything opened it: a directory that says why, readable by
 * anyone who can see it. */
static void test_vanished_before_open(void **state)
{
	struct tree_stat st;
	struct tree *t;
	char p[256], *info, *errs;
	enum rc r;

	(void)state;
	put_sky("a.psg", 0);
	path_of(p, sizeof p, "a.psg");
	assert_int_equal(chmod(p, 0), 0);
	t = open_dir(0);
	list_root(t);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(tree_resolve(t, "a.psg", &st), RC_OK);
	assert_int_equal(st.type, TT_DIR);
	info = slurp(t, "a.psg/info.txt", &r);
	assert_int_equal(r, RC_OK);
	assert_non_null(strstr(info, "cannot open: No such file or directory"));
	errs = slurp(t, "a.psg/errors.txt", &r);
	assert_int_equal(r, RC_OK);
	assert_non_null(strstr(errs, "No such file or directory"));
	assert_int_equal(tree_resolve(t, "a.psg/info.txt", &st), RC_OK);
	assert_int_equal(st.perm, 0644);
	free(info);
	free(errs);
	tree_close(t);
}

/* Listed, then replaced before anything opened it: nothing is derived from the new file, and
 * the directory says why. */
static void test_replaced_before_open(void **state)
{
	struct tree *t;
	char p[256], q[256], *info;
	enum rc r;

	(void)state;
	put_sky("a.psg", 0);
	t = open_dir(0);
	list_root(t);
	put_sky("b.psg", 5);
	path_of(p, sizeof p, "b.psg");
	path_of(q, sizeof q, "a.psg");
	assert_int_equal(rename(p, q), 0);
	info = slurp(t, "a.psg/info.txt", &r);
	assert_int_equal(r, RC_OK);
	assert_non_null(strstr(info, "cannot mount: changed since its folder was listed"));
	free(info);
	tree_close(t);
}

/* Read a.psg's header.txt (ino[0]) and info.txt (ino[1]), then make the one-asset limit
 * close a.psg by opening b.psg. */
static struct tree *read_then_evict(tree_ino ino[2], char **bytes)
{
	struct tree_stat st;
	struct tree *t;
	enum rc r;
	char *other;

	put_sky("a.psg", 0);
	put_sky("b.psg", 5);
	t = open_dir(1);
	*bytes = slurp(t, "a.psg/header.txt", &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(tree_resolve(t, "a.psg/header.txt", &st), RC_OK);
	ino[0] = st.ino;
	assert_int_equal(tree_resolve(t, "a.psg/info.txt", &st), RC_OK);
	ino[1] = st.ino;
	other = slurp(t, "b.psg/header.txt", &r);
	assert_int_equal(r, RC_OK);
	free(other);
	return t;
}

/* Closed by the limit and reopened unchanged: the same numbers, the same bytes. */
static void test_reopen_unchanged(void **state)
{
	struct tree_stat st;
	tree_ino ino[2];
	struct tree *t;
	char *before, *after;
	enum rc r;

	(void)state;
	t = read_then_evict(ino, &before);
	after = slurp(t, "a.psg/header.txt", &r);
	assert_int_equal(r, RC_OK);
	assert_string_equal(before, after);
	assert_int_equal(tree_resolve(t, "a.psg/header.txt", &st), RC_OK);
	assert_true(st.ino == ino[0]);
	free(before);
	free(after);
	tree_close(t);
}

/* Every number a closed asset handed out fails with EIO once its file is another file: the
 * reopened file is never read in its place (nor a "broken" explanation under old numbers). */
static void expect_eio_below(struct tree *t, const tree_ino ino[2], const char *what)
{
	struct tree_stat st;
	struct tree_dir *d;
	char buf[64];
	size_t got;

	print_message("after %s\n", what);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tree_read(t, ino[i], 0, sizeof buf, buf, &got), RC_IO);
		assert_int_equal(tree_getattr(t, ino[i], &st), RC_IO);
	}
	assert_int_equal(tree_resolve(t, "a.psg", &st), RC_OK); /* the entry stays listed */
	assert_int_equal(tree_opendir(t, st.ino, &d), RC_IO);
	assert_int_equal(tree_resolve(t, "a.psg/info.txt", &st), RC_IO);
}

static void test_reopen_replaced(void **state)
{
	char p[256], q[256], *before;
	tree_ino ino[2];
	struct tree *t;

	(void)state;
	t = read_then_evict(ino, &before);
	put_psk("new.psk");
	path_of(p, sizeof p, "new.psk");
	path_of(q, sizeof q, "a.psg");
	assert_int_equal(rename(p, q), 0);
	expect_eio_below(t, ino, "a PSK renamed over a.psg");
	free(before);
	tree_close(t);
}

static void test_reopen_deleted(void **state)
{
	char p[256], *before;
	tree_ino ino[2];
	struct tree *t;

	(void)state;
	t = read_then_evict(ino, &before);
	path_of(p, sizeof p, "a.psg");
	assert_int_equal(unlink(p), 0);
	expect_eio_below(t, ino, "a.psg deleted");
	free(before);
	tree_close(t);
}

static void test_reopen_rewritten(void **state)
{
	char *before;
	tree_ino ino[2];
	struct tree *t;

	(void)state;
	t = read_then_evict(ino, &before);
	sleep(1);	     /* a later mtime even on coarse timestamps */
	put_sky("a.psg", 9); /* same size, other dictionary order, written in place */
	expect_eio_below(t, ino, "a.psg rewritten in place");
	free(before);
	tree_close(t);
}

/* The lowest free descriptor: every one below it is in use. */
static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	close(fd);
	return fd;
}

/* Run fn with only `spare` more descriptors allowed; returns its result. */
static enum rc with_fds(int spare, enum rc (*fn)(struct tree *t), struct tree *t)
{
	struct rlimit old, low;
	enum rc r;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)(lowest_free_fd() + spare);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	r = fn(t);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	return r;
}

static enum rc resolve_info(struct tree *t)
{
	struct tree_stat st;

	return tree_resolve(t, "a.psg/info.txt", &st);
}

static enum rc list_root_rc(struct tree *t)
{
	struct tree_dir *d;
	enum rc r = tree_opendir(t, TREE_ROOT_INO, &d);

	if (r == RC_OK)
		tree_closedir(t, d);
	return r;
}

/* Opening an asset without a descriptor to spare fails for now; it is not remembered as a
 * broken asset. */
static void test_out_of_fds_at_open(void **state)
{
	struct tree *t;
	char *info;
	enum rc r;

	(void)state;
	put_sky("a.psg", 0);
	t = open_dir(0);
	list_root(t);
	r = with_fds(0, resolve_info, t);
	assert_int_not_equal(r, RC_OK);
	assert_int_equal(r, RC_NOFILES); /* EMFILE: try again later */
	info = slurp(t, "a.psg/info.txt", &r);
	assert_int_equal(r, RC_OK);
	assert_non_null(strstr(info, "format: psg"));
	free(info);
	tree_close(t);
}

/* A listing that could not sniff its files (no descriptor to spare) is not kept: files whose
 * name does not decide are never classed by their extension for want of a descriptor. */
static void test_out_of_fds_at_listing(void **state)
{
	struct tree_stat st;
	struct tree *t;
	struct buf b;

	(void)state;
	put_sky("disguised", 0);
	buf_init(&b);
	buf_puts(&b, "text, not an arena\n");
	put("notes.dat", &b);
	buf_free(&b);
	t = open_dir(0);
	assert_int_equal(with_fds(1, list_root_rc, t), RC_NOFILES); /* EMFILE, issue 30 item 4 */
	assert_int_equal(tree_resolve(t, "disguised", &st), RC_OK);
	assert_int_equal(st.type, TT_DIR);
	assert_int_equal(tree_resolve(t, "notes.dat", &st), RC_OK);
	assert_int_equal(st.type, TT_FILE);
	tree_close(t);
}

/* Lines of text that start with `key`. */
static int lines_starting(const char *text, const char *key)
{
	int n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		n += strncmp(l, key, strlen(key)) == 0;
	return n;
}

/* A file name is one escaped field in every text view: a name holding newlines forges no line
 * of info.txt, material.txt or a broken asset's explanation (issue 21 item 7). */
static void test_names_escaped(void **state)
{
	static const char psk[] = "status: ok\nproblems: 0\nformat: psa.psk";
	static const char psg[] = "sky\nproblems: 0\nmaterials: 9.psg";
	static const char bad[] = "bad\nformat: psk\tx.psg";
	char path[512], *info, *mat;
	struct tree *t;
	struct buf b;
	enum rc r;

	(void)state;
	put_psk(psk);
	put_sky(psg, 0);
	buf_init(&b);
	buf_put(&b, "\x89RW4", 4); /* an arena cut inside its header: a broken asset */
	buf_zero(&b, 28);
	put(bad, &b);
	buf_free(&b);
	t = open_dir(0);

	snprintf(path, sizeof path, "%s/info.txt", psk);
	info = slurp(t, path, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(lines_starting(info, "format:"), 1);
	assert_int_equal(lines_starting(info, "problems:"), 1);
	assert_int_equal(lines_starting(info, "status:"), 0);
	assert_non_null(strstr(info, "file: status: ok\\nproblems: 0\\nformat: psa\n"));
	free(info);

	snprintf(path, sizeof path, "%s/info.txt", psg);
	info = slurp(t, path, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(lines_starting(info, "problems:"), 1);
	assert_int_equal(lines_starting(info, "materials:"), 1);
	assert_non_null(strstr(info, "file: sky\\nproblems: 0\\nmaterials: 9\n"));
	snprintf(path, sizeof path, "%s/materials/00.material/material.txt", psg);
	mat = slurp(t, path, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(lines_starting(mat, "materials:"), 0);
	assert_non_null(strstr(mat, "companion: sky\\nproblems: 0\\nmaterials: 9_Textures.psg ("));
	free(mat);
	free(info);

	snprintf(path, sizeof path, "%s/info.txt", bad);
	info = slurp(t, path, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(lines_starting(info, "format:"), 1);
	assert_non_null(strstr(info, "file: bad\\nformat: psk\\tx.psg\n"));
	free(info);
	tree_close(t);
}

/* Folders nest deeper than any fixed limit (issue 21 item 9: 256 levels failed with EIO). */
static void test_deep_folders(void **state)
{
	enum { DEPTH = 600 };
	static char rel[DEPTH * 2 + 16];
	struct tree_stat st;
	struct tree *t;
	char *text;
	size_t at = 0;
	struct buf b;
	enum rc r;

	(void)state;
	for (int i = 0; i < DEPTH; i++) {
		char p[sizeof rel + 80];

		at += (size_t)snprintf(rel + at, sizeof rel - at, "%sd", i ? "/" : "");
		snprintf(p, sizeof p, "%s/%s", dir, rel);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	snprintf(rel + at, sizeof rel - at, "/leaf.txt");
	buf_init(&b);
	buf_puts(&b, "at the bottom\n");
	put(rel, &b);
	buf_free(&b);
	t = open_dir(0);
	text = slurp(t, rel, &r);
	assert_int_equal(r, RC_OK);
	assert_string_equal(text, "at the bottom\n");
	free(text);
	rel[at] = '\0';
	assert_int_equal(tree_resolve(t, rel, &st), RC_OK);
	assert_int_equal(st.type, TT_DIR);
	tree_close(t);
}

/* Threads that list the same unread folder and open the same assets at once: the folder is
 * read outside the lock by each, the first to publish makes the snapshot, the others' reading
 * is dropped; an asset opened twice at once is kept once. Everyone sees the same thing. */
struct racer {
	struct tree *t;
	size_t n_entries;
	char *header;
	enum rc r;
};

static void *race_one(void *arg)
{
	struct racer *x = arg;
	struct tree_stat st;
	struct tree_dir *d;

	x->r = tree_resolve(x->t, "sub", &st);
	if (x->r == RC_OK)
		x->r = tree_opendir(x->t, st.ino, &d);
	if (x->r != RC_OK)
		return NULL;
	x->n_entries = tree_dir_count(d);
	tree_closedir(x->t, d);
	x->header = slurp(x->t, "sub/a07.psg/header.txt", &x->r);
	return NULL;
}

static void test_concurrent_first_listing(void **state)
{
	enum { THREADS = 8, FILES = 40 };
	struct racer x[THREADS];
	pthread_t tid[THREADS];
	char name[128];
	struct tree *t;

	(void)state;
	snprintf(name, sizeof name, "%s/sub", dir);
	assert_int_equal(mkdir(name, 0755), 0);
	for (int i = 0; i < FILES; i++) {
		snprintf(name, sizeof name, "sub/a%02d.psg", i);
		put_sky(name, (uint64_t)i);
	}
	for (int round = 0; round < 5; round++) {
		t = open_dir(2);
		for (int i = 0; i < THREADS; i++) {
			x[i] = (struct racer){.t = t};
			assert_int_equal(pthread_create(&tid[i], NULL, race_one, &x[i]), 0);
		}
		for (int i = 0; i < THREADS; i++) {
			assert_int_equal(pthread_join(tid[i], NULL), 0);
			assert_int_equal(x[i].r, RC_OK);
			assert_int_equal(x[i].n_entries, FILES);
			assert_string_equal(x[i].header, x[0].header);
		}
		for (int i = 0; i < THREADS; i++)
			free(x[i].header);
		tree_close(t);
	}
}

static void put_text(const char *name, const char *text)
{
	struct buf b;

	buf_init(&b);
	buf_puts(&b, text);
	put(name, &b);
	buf_free(&b);
}

static enum tree_type type_of(struct tree *t, const char *name)
{
	struct tree_stat st;

	assert_int_equal(tree_resolve(t, name, &st), RC_OK);
	return st.type;
}

/* What the name decides and what the content decides (docs: README "Folder mounts"), and
 * -o sniff_all, which lets the content decide everything. */
static void test_classify_by_name(void **state)
{
	struct tree_opts o = {.sniff_all = true};
	struct tree *t;
	char why[256], *info;
	enum rc r;

	(void)state;
	put_text("notes.psg", "text, not an arena\n");
	put_text("tiny.PSK", "ACTRHEAD"); /* shorter than a PSK's magic */
	put_text("empty.psa", "");
	put_sky("arena.txt", 0);	 /* a plain-file name */
	put_sky("arena", 0);		 /* no extension: content */
	put_text("data.bin", "plain\n"); /* unknown extension: content */
	put_psk("mesh.PsKx");
	t = open_dir(0);
	assert_int_equal(type_of(t, "notes.psg"), TT_DIR);
	info = slurp(t, "notes.psg/info.txt", &r);
	assert_non_null(info);
	assert_non_null(strstr(info, "status: cannot mount: not a PSG arena, PSK or PSA file"));
	free(info);
	assert_int_equal(type_of(t, "tiny.PSK"), TT_FILE);
	assert_int_equal(type_of(t, "empty.psa"), TT_FILE);
	assert_int_equal(type_of(t, "arena.txt"), TT_FILE);
	assert_int_equal(type_of(t, "arena"), TT_DIR);
	assert_int_equal(type_of(t, "data.bin"), TT_FILE);
	assert_int_equal(type_of(t, "mesh.PsKx"), TT_DIR);
	tree_close(t);

	assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	assert_int_equal(type_of(t, "notes.psg"), TT_FILE);
	assert_int_equal(type_of(t, "tiny.PSK"), TT_FILE);
	assert_int_equal(type_of(t, "arena.txt"), TT_DIR);
	assert_int_equal(type_of(t, "arena"), TT_DIR);
	assert_int_equal(type_of(t, "data.bin"), TT_FILE);
	assert_int_equal(type_of(t, "mesh.PsKx"), TT_DIR);
	tree_close(t);
}

/* A stream collection and its table under names of our choosing, with the stamp of `stamp`
 * (NULL: its own); m gets its entries. */
static void put_stream(const char *sf_name, const char *toc_name, bool x360, uint64_t seed,
		       const uint8_t *stamp, struct gen_big_manifest *m)
{
	struct gen_stream_opts o = {.seed = seed, .x360 = x360, .format = 2};
	struct buf sf, toc;

	buf_init(&sf);
	buf_init(&toc);
	assert_int_equal(gen_stream(&o, GS_H_NONE, &sf, &toc, m), RC_OK);
	if (stamp) {
		memcpy(sf.data + 8, stamp, 8);
		memcpy(toc.data + 8, stamp, 8);
	}
	put(sf_name, &sf);
	put(toc_name, &toc);
	buf_free(&sf);
	buf_free(&toc);
}

/* Every entry of the collection `name` as the generator wrote it: names, sizes, bytes. */
static void check_stream(struct tree *t, const char *name, const struct gen_big_manifest *m)
{
	struct tree_stat st;
	struct tree_dir *d;
	size_t seen = 0;

	assert_int_equal(tree_resolve(t, name, &st), RC_OK);
	assert_int_equal(tree_opendir(t, st.ino, &d), RC_OK);
	for (size_t i = 0; i < m->n; i++) {
		char path[512];
		enum rc r;
		char *bytes;
		uint64_t h = 0xcbf29ce484222325ull;

		snprintf(path, sizeof path, "%s/%s", name, m->v[i].path);
		bytes = slurp(t, path, &r);
		if (!bytes)
			fprintf(stderr, "%s: %d\n", path, (int)r);
		assert_non_null(bytes);
		assert_int_equal(tree_resolve(t, path, &st), RC_OK);
		assert_int_equal(st.size, m->v[i].size);
		for (uint64_t k = 0; k < st.size; k++)
			h = (h ^ (uint8_t)bytes[k]) * 0x100000001b3ull;
		assert_int_equal(h, m->v[i].fnv);
		free(bytes);
	}
	for (size_t i = 0; i < tree_dir_count(d); i++)
		seen += strncmp(tree_dir_name(d, i), "0x", 2) == 0;
	assert_int_equal(seen, m->n);
	tree_closedir(t, d);
}

/* Issue 30 item 8: a loose stream file takes its own table (x0.xsf: x0.xst, x1.psf: x1.pst)
 * before another with the same stamp, and never a file of another extension that happens to
 * have the name a wrong character swap makes (x0.xtf, x1.ptf). */
static void test_stream_own_table(void **state)
{
	struct gen_big_manifest m0 = {0}, m1 = {0};
	struct tree_opts o = {.assets_files = true};
	struct tree *t;
	uint8_t stamp[8];
	char why[256], p[128];
	FILE *f;

	(void)state;
	put_stream("x0.xsf", "x0.xst", true, 1, NULL, &m0);
	path_of(p, sizeof p, "x0.xst");
	f = fopen(p, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 8, SEEK_SET), 0);
	assert_int_equal(fread(stamp, 1, 8, f), 8);
	fclose(f);
	put_stream("x1.psf", "x1.pst", false, 2, stamp, &m1);
	/* the other set's table under the names a swap of the wrong character gives */
	put_stream("decoy0.bin", "x0.xtf", false, 2, stamp, NULL);
	put_stream("decoy1.bin", "x1.ptf", true, 1, NULL, NULL);
	assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	check_stream(t, "x0.xsf", &m0);
	check_stream(t, "x1.psf", &m1);
	tree_close(t);
	gen_big_manifest_free(&m0);
	gen_big_manifest_free(&m1);
}

/* A BIGF archive (docs/archives.md) of the files named, under their names, written as arc. */
static void put_bigf(const char *arc, const char *const *names, size_t n)
{
	struct buf files[8], b;
	uint32_t dir = 16, at;

	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++) {
		char p[256];
		FILE *f;
		long len;

		path_of(p, sizeof p, names[i]);
		f = fopen(p, "rb");
		assert_non_null(f);
		assert_int_equal(fseek(f, 0, SEEK_END), 0);
		len = ftell(f);
		rewind(f);
		buf_init(&files[i]);
		buf_zero(&files[i], (size_t)len);
		assert_int_equal(fread(files[i].data, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		dir += 8 + (uint32_t)strlen(names[i]) + 1;
	}
	at = (dir + 8 + 15) & ~15u;
	buf_init(&b);
	buf_put(&b, "BIGF", 4);
	buf_u32le(&b, 0); /* the archive's size: unused */
	buf_u32be(&b, (uint32_t)n);
	buf_u32be(&b, dir);
	for (size_t i = 0; i < n; i++) {
		buf_u32be(&b, at);
		buf_u32be(&b, (uint32_t)files[i].len);
		buf_put(&b, names[i], strlen(names[i]) + 1);
		at += (uint32_t)files[i].len;
	}
	buf_zero(&b, ((dir + 8 + 15) & ~15u) - b.len);
	for (size_t i = 0; i < n; i++) {
		buf_put(&b, files[i].data, files[i].len);
		buf_free(&files[i]);
	}
	assert_false(b.oom);
	put(arc, &b);
	buf_free(&b);
}

/* The same inside an archive (arcdir.c find_toc): x1.psf takes x1.pst, not x1.xst of the
 * same stem and stamp, which sorts after it. */
static void test_stream_own_table_archived(void **state)
{
	static const char *const names[] = {"x1.psf", "x1.pst", "x1.xst"};
	struct gen_big_manifest m1 = {0};
	struct tree_opts o = {.assets_files = true};
	struct tree *t;
	uint8_t stamp[8];
	char why[256], p[128];
	FILE *f;

	(void)state;
	put_stream("x0.xsf", "x1.xst", true, 1, NULL, NULL);
	path_of(p, sizeof p, "x1.xst");
	f = fopen(p, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 8, SEEK_SET), 0);
	assert_int_equal(fread(stamp, 1, 8, f), 8);
	fclose(f);
	put_stream("x1.psf", "x1.pst", false, 2, stamp, &m1);
	put_bigf("streams.big", names, 3);
	for (size_t i = 0; i < 3; i++) {
		path_of(p, sizeof p, names[i]);
		assert_int_equal(unlink(p), 0);
	}
	path_of(p, sizeof p, "x0.xsf");
	assert_int_equal(unlink(p), 0);
	assert_int_equal(tree_open(dir, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	check_stream(t, "streams.big/x1.psf", &m1);
	tree_close(t);
	gen_big_manifest_free(&m1);
}

/* A loose file's holes are known without reading them (issue 30 item 2: psgfs-tool extract
 * wrote 1 TiB sparse files as zeros); a rendered file is one stretch. */
static void test_data_extent(void **state)
{
	const uint64_t size = 1ull << 40, at = 1ull << 39;
	struct tree_stat st;
	struct tree *t;
	uint64_t ds, de;
	char p[128];
	int fd;

	(void)state;
	path_of(p, sizeof p, "sparse.bin");
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	assert_int_equal(pwrite(fd, "data", 4, (off_t)at), 4);
	assert_int_equal(close(fd), 0);
	put_sky("sky.psg", 0);
	t = open_dir(0);
	assert_int_equal(tree_resolve(t, "sparse.bin", &st), RC_OK);
	assert_int_equal(st.size, size);
	assert_int_equal(tree_data_extent(t, st.ino, 0, &ds, &de), RC_OK);
	if (ds == 0) { /* a file system without SEEK_DATA: one stretch, still correct */
		assert_true(de >= size);
	} else {
		assert_true(ds <= at && at - ds < (1u << 20));
		assert_true(de >= at + 4 && de <= size);
		assert_int_equal(tree_data_extent(t, st.ino, de, &ds, &de), RC_OK);
		assert_true(ds >= size);
	}
	assert_int_equal(tree_data_extent(t, st.ino, size, &ds, &de), RC_OK);
	assert_true(ds >= size);
	assert_int_equal(tree_resolve(t, "sky.psg/header.txt", &st), RC_OK);
	assert_int_equal(tree_data_extent(t, st.ino, 5, &ds, &de), RC_OK);
	assert_int_equal(ds, 5);
	assert_true(de >= st.size);
	tree_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_vanished_before_open, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_replaced_before_open, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_reopen_unchanged, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_reopen_replaced, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_reopen_deleted, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_reopen_rewritten, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_out_of_fds_at_open, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_out_of_fds_at_listing, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_names_escaped, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_deep_folders, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_concurrent_first_listing, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_classify_by_name, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_stream_own_table, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_stream_own_table_archived, dir_setup,
					    dir_teardown),
	    cmocka_unit_test_setup_teardown(test_data_extent, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
