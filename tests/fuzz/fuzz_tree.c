/*
 * Whole-tree harness: mount nothing, but open the input as psgfs would and render every file
 * of the virtual tree (decoded views, exports and textures included), checking the
 * invariants of fuzz_tree_check. In FZT_TWICE mode the tree gets a 1-byte cache so each read
 * renders afresh and "the same bytes twice" compares two independent renders.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

/* Walk bounds: far above any seed, low enough that no input makes one execution slow. */
#define WALK_MAX_FILES 20000u
#define WALK_MAX_DEPTH 16

struct walk {
	struct tree *t;
	struct fuzz_tree_result *res;
	unsigned long visited;
	bool twice;
};

static void problem(struct fuzz_tree_result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(r->problem, sizeof r->problem, fmt, ap);
	va_end(ap);
}

/* Read a whole file in one call (+1 byte to see the end). NULL with *ok = false on failure. */
static uint8_t *read_all(struct tree *t, tree_ino ino, uint64_t size, size_t *got, bool *ok)
{
	uint8_t *p = malloc((size_t)size + 1);

	*ok = false;
	*got = 0;
	if (!p)
		return NULL;
	if (tree_read(t, ino, 0, (size_t)size + 1, p, got) != RC_OK) {
		free(p);
		return NULL;
	}
	*ok = true;
	return p;
}

/* Ranges read on their own (end first, then a few spread over the file) equal the whole. */
static bool ranges_match(struct walk *w, tree_ino ino, const uint8_t *whole, size_t n)
{
	static const size_t lens[] = {1, 7, 4096, 131072, 200000};
	uint8_t *buf;
	bool ok = true;

	if (n == 0)
		return true;
	buf = malloc(200000);
	if (!buf)
		return true;
	for (size_t k = 0; k < 5 && ok; k++) {
		size_t len = lens[k] < n ? lens[k] : n;
		uint64_t off = k == 0 ? n - len : (n - len) * k / 5;
		size_t got;

		if (tree_read(w->t, ino, off, len, buf, &got) != RC_OK || got != len ||
		    memcmp(buf, whole + off, len) != 0)
			ok = false;
	}
	free(buf);
	return ok;
}

static void check_file(struct walk *w, tree_ino ino, const char *path)
{
	struct tree_stat st;
	uint8_t *a, *b;
	size_t ga, gb;
	bool oka, okb;

	w->res->files++;
	if (tree_getattr(w->t, ino, &st) != RC_OK) {
		/* A broken view may fail already at stat time; then reads must fail too. */
		uint8_t one;
		size_t got;

		w->res->failed++;
		if (tree_read(w->t, ino, 0, 1, &one, &got) == RC_OK)
			problem(w->res, "%s: getattr failed but read succeeded", path);
		return;
	}
	if (st.size > (64u << 20)) {
		problem(w->res, "%s: st_size %llu", path, (unsigned long long)st.size);
		return;
	}
	a = read_all(w->t, ino, st.size, &ga, &oka);
	if (w->twice) {
		b = read_all(w->t, ino, st.size, &gb, &okb);
	} else {
		b = NULL;
		gb = ga;
		okb = oka;
	}
	if (oka != okb)
		problem(w->res, "%s: first read %s, second %s", path, oka ? "ok" : "failed",
			okb ? "ok" : "failed");
	else if (!oka)
		w->res->failed++;
	else if (ga != st.size)
		problem(w->res, "%s: st_size %llu but read %zu bytes", path,
			(unsigned long long)st.size, ga);
	else if (b && (gb != ga || memcmp(a, b, ga) != 0))
		problem(w->res, "%s: two renders differ", path);
	else if (!ranges_match(w, ino, a, ga))
		problem(w->res, "%s: a range read differs from the whole read", path);
	else
		w->res->bytes += ga;
	free(a);
	free(b);
}

static void walk_dir(struct walk *w, tree_ino ino, const char *path, int depth)
{
	struct tree_dir *d;

	if (depth > WALK_MAX_DEPTH) {
		problem(w->res, "%s: tree deeper than %d", path, WALK_MAX_DEPTH);
		return;
	}
	if (tree_opendir(w->t, ino, &d) != RC_OK) {
		problem(w->res, "%s/: listed by its parent but cannot be listed", path);
		return;
	}
	w->res->dirs++;
	for (size_t i = 0; i < tree_dir_count(d) && w->visited < WALK_MAX_FILES; i++) {
		char child[1024];
		const char *name = tree_dir_name(d, i);

		w->visited++;
		snprintf(child, sizeof child, "%s/%s", path, name);
		if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
			problem(w->res, "%s: unsafe name", child);
			continue;
		}
		if (i > 0 && strcmp(tree_dir_name(d, i - 1), name) >= 0)
			problem(w->res, "%s: listing not sorted or not unique", child);
		if (tree_dir_type(d, i) == TT_DIR)
			walk_dir(w, tree_dir_ino(d, i), child, depth + 1);
		else if (tree_dir_type(d, i) == TT_FILE)
			check_file(w, tree_dir_ino(d, i), child);
	}
	tree_closedir(w->t, d);
}

/* An unlinked file holding p: memfd when available, else an unlinked temporary file. */
static int anon_file(const uint8_t *p, size_t n)
{
	int fd = memfd_create("psgfs-fuzz", MFD_CLOEXEC);

	if (fd < 0) {
		char tmpl[] = "/tmp/psgfs-fuzz.XXXXXX";

		fd = mkstemp(tmpl);
		if (fd < 0)
			return -1;
		unlink(tmpl);
	}
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, p + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	return fd;
}

int fuzz_tree_check(const uint8_t *p, size_t n, unsigned flags, struct fuzz_tree_result *res)
{
	/* Without TWICE a budget big enough that each file renders once (plus the sweep). */
	struct tree_opts o = {.cache_bytes = flags & FZT_TWICE ? 1 : 8u << 20,
			      .yup = flags & FZT_ZUP};
	struct tree *t;
	struct tree_stat st;
	char path[64], why[512];
	int fd;

	memset(res, 0, sizeof *res);
	fd = anon_file(p, n);
	if (fd < 0) {
		problem(res, "cannot create a temporary file: %s", strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	res->open = tree_open(path, &o, &t, why, sizeof why);
	close(fd);
	if (res->open != TREE_FAIL_NONE) {
		if (res->open != TREE_FAIL_FORMAT && res->open != TREE_FAIL_DAMAGED &&
		    res->open != TREE_FAIL_OPEN)
			problem(res, "tree_open failed with class %d: %s", (int)res->open, why);
		else if (!why[0])
			problem(res, "tree_open refused without a reason");
		return res->problem[0] ? -1 : 0;
	}
	struct walk w = {.t = t, .res = res, .twice = flags & FZT_TWICE};

	walk_dir(&w, TREE_ROOT_INO, "", 0);
	if (tree_resolve(t, "errors.txt", &st) == RC_OK) {
		res->errors_size = st.size;
		/* Failures of data views show in errors-full.txt (errors.txt is structural). */
		if (res->failed && st.size == 0 &&
		    (tree_resolve(t, "errors-full.txt", &st) != RC_OK || st.size == 0))
			problem(res, "%lu files failed but errors.txt is empty", res->failed);
	} else {
		problem(res, "no readable errors.txt");
	}
	tree_close(t);
	return res->problem[0] ? -1 : 0;
}

int fuzz_one_tree(const uint8_t *p, size_t n)
{
	struct fuzz_tree_result r;

	/* Options from the size, so each input stays deterministic without an option byte:
	 * Z-up for odd sizes, two fresh renders per file for every fourth size. */
	if (fuzz_tree_check(p, n, (n % 4 == 0 ? FZT_TWICE : 0) | (n & 1 ? FZT_ZUP : 0), &r) != 0) {
		fprintf(stderr, "fuzz_tree: %s\n", r.problem);
		return -1;
	}
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	if (fuzz_one_tree(p, n))
		abort();
	return 0;
}
#endif
