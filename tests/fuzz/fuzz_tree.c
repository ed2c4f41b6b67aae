/*
 * Whole-tree harness: mount nothing, but open the input as psgfs would and render every file
 * of the virtual tree (decoded views, exports and textures included), checking the
 * invariants of fuzz_tree_check. In FZT_TWICE mode the tree gets a 1-byte cache so each read
 * renders afresh and "the same bytes twice" compares two independent renders.
 * Folder mode (fuzz_folder_check): the input is a few files of one temporary folder; the
 * folder is opened and walked the same way, and each file's entry is compared with the file
 * opened alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "psgfs/formats/archive.h"

/* Walk bounds: far above any seed, low enough that no input makes one execution slow. */
#define WALK_MAX_FILES 20000u
#define WALK_MAX_DEPTH 16

struct walk {
	struct tree *t;
	struct fuzz_tree_result *res;
	unsigned long visited;
	bool twice;
	bool archive;	/* the input is an archive: its entries' sizes are the table's claims */
	tree_ino *inos; /* folder mode: every number listed, to check they differ */
	size_t n_inos, cap_inos;
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
	buf = malloc(n < 200000 ? n : 200000); /* the longest read; under ASan a big one is an mmap */
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
		/* Only an archive's entry may claim this much (its table says so, and reads past
		 * what its stored bytes give fail): sample both ends instead of reading it all. */
		uint8_t buf[4096];
		size_t got;

		if (!w->archive) {
			problem(w->res, "%s: st_size %llu", path, (unsigned long long)st.size);
			return;
		}
		for (int k = 0; k < 2; k++) {
			uint64_t off = k ? st.size - sizeof buf : 0;

			if (tree_read(w->t, ino, off, sizeof buf, buf, &got) == RC_OK &&
			    got != sizeof buf)
				problem(w->res, "%s: a read inside st_size came up short", path);
		}
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
		if (w->inos && w->n_inos < w->cap_inos)
			w->inos[w->n_inos++] = tree_dir_ino(d, i);
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
	struct walk w = {
	    .t = t, .res = res, .twice = flags & FZT_TWICE, .archive = arc_detect(p, n)};

	walk_dir(&w, TREE_ROOT_INO, "", 0);
	if (tree_resolve(t, "errors.txt", &st) == RC_OK) {
		res->errors_size = st.size;
		/* Failures of data views show in errors-full.txt (errors.txt is structural); an
		 * archive's assets say theirs in their own errors.txt, not in the archive's. */
		if (res->failed && st.size == 0 && !w.archive &&
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

/* ---- folder mode ---- */

/* Where the parts of an input go: a model, its companion, a subfolder, names that do not say
 * what the file is. Past the last separator everything goes to the last name. */
static const char *const folder_names[FUZZ_FOLDER_FILES] = {
    "m.psg", "m_Textures.psg", "sub/anim.psa", "sub/MESH.PSK", "noext", "notes.txt"};

struct part {
	const uint8_t *p;
	size_t n;
};

static size_t split_parts(const uint8_t *p, size_t n, struct part *out)
{
	const size_t seplen = sizeof FUZZ_FOLDER_SEP - 1;
	const uint8_t *cur = p, *end = p + n;
	size_t k = 0;

	while (k < FUZZ_FOLDER_FILES - 1) {
		const uint8_t *hit = memmem(cur, (size_t)(end - cur), FUZZ_FOLDER_SEP, seplen);

		if (!hit)
			break;
		out[k++] = (struct part){cur, (size_t)(hit - cur)};
		cur = hit + seplen;
	}
	out[k++] = (struct part){cur, (size_t)(end - cur)};
	return k;
}

static int write_at(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[256];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
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
	return close(fd);
}

/* The folder: the parts, a link to the model, a link up from the subfolder. */
static int folder_make(char *dir, size_t dirlen, const struct part *parts, size_t k)
{
	char path[256];

	snprintf(dir, dirlen, "/tmp/psgfs-fzf.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/sub", dir);
	if (mkdir(path, 0755) != 0)
		return -1;
	for (size_t i = 0; i < k; i++)
		if (write_at(dir, folder_names[i], parts[i].p, parts[i].n) != 0)
			return -1;
	snprintf(path, sizeof path, "%s/link.psg", dir);
	if (symlink("m.psg", path) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/sub/up", dir);
	return symlink("..", path);
}

static void folder_remove(const char *dir)
{
	static const char *const extra[] = {"link.psg", "sub/up"};
	char path[256];

	for (size_t i = 0; i < FUZZ_FOLDER_FILES + 2; i++) {
		snprintf(path, sizeof path, "%s/%s", dir,
			 i < FUZZ_FOLDER_FILES ? folder_names[i] : extra[i - FUZZ_FOLDER_FILES]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/sub", dir);
	rmdir(path);
	rmdir(dir);
}

/* A digest of a subtree in listing order: names, types, sizes, link targets, bytes, and
 * which of them failed. Two trees with the same digest show the same thing. */
struct digest {
	uint64_t h;
	unsigned long n;
};

static void dg_mix(struct digest *d, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ b[i]) * 0x100000001b3ull;
}

static void dg_u64(struct digest *d, uint64_t v)
{
	dg_mix(d, &v, sizeof v);
}

/* The lines of a text but the one that starts "materials:" (how the companion was found). */
static void dg_text_but_materials(struct digest *d, const uint8_t *p, size_t n)
{
	static const char key[] = "materials:";

	for (size_t i = 0; i < n;) {
		const uint8_t *nl = memchr(p + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (p + i)) + 1 : n - i;

		if (len < sizeof key - 1 || memcmp(p + i, key, sizeof key - 1))
			dg_mix(d, p + i, len);
		i += len;
	}
}

/* A file's size and bytes (a link: its target). skip_materials: a text whose materials line is
 * left out, with its size. */
static void dg_file(struct tree *t, tree_ino ino, enum tree_type type, bool skip_materials,
		    struct digest *d)
{
	struct tree_stat st;
	char *target;
	size_t got;
	bool ok;

	if (type == TT_LINK) {
		if (tree_readlink(t, ino, &target) == RC_OK)
			dg_mix(d, target, strlen(target) + 1);
		else
			dg_u64(d, 0x11);
		free(target);
		return;
	}
	if (tree_getattr(t, ino, &st) != RC_OK || st.size > (64u << 20)) {
		dg_u64(d, 0x22);
		return;
	}
	if (!skip_materials)
		dg_u64(d, st.size);
	uint8_t *p = read_all(t, ino, st.size, &got, &ok);

	if (!ok)
		dg_u64(d, 0x33);
	else if (!skip_materials)
		dg_mix(d, p, got);
	else
		dg_text_but_materials(d, p, got);
	free(p);
}

static void digest_tree(struct tree *t, tree_ino ino, struct digest *d, int depth)
{
	struct tree_dir *dir;

	if (depth > WALK_MAX_DEPTH || tree_opendir(t, ino, &dir) != RC_OK) {
		dg_u64(d, 0x44);
		return;
	}
	for (size_t i = 0; i < tree_dir_count(dir) && d->n < WALK_MAX_FILES; i++) {
		const char *name = tree_dir_name(dir, i);
		enum tree_type type = tree_dir_type(dir, i);

		/* Materials differ by design: the folder mount links to the companion and its
		 * material.txt and info.txt say so; the file alone only names it. */
		if (type == TT_LINK || !strcmp(name, "material.txt"))
			continue;
		d->n++;
		dg_mix(d, name, strlen(name) + 1);
		dg_u64(d, type);
		if (type == TT_DIR)
			digest_tree(t, tree_dir_ino(dir, i), d, depth + 1);
		else
			dg_file(t, tree_dir_ino(dir, i), type,
				depth == 0 && !strcmp(name, "info.txt"), d);
	}
	tree_closedir(t, dir);
}

/* An entry that is a plain file: its bytes are the part's. */
static void same_bytes(struct tree *ft, const struct tree_stat *es, const struct part *pt,
		       const char *name, struct fuzz_tree_result *res)
{
	size_t got;
	bool ok;
	uint8_t *p;

	if (es->type != TT_FILE || es->size != pt->n) {
		problem(res, "%s: not an asset, yet not a file of its own size", name);
		return;
	}
	p = read_all(ft, es->ino, es->size, &got, &ok);
	if (!ok || got != pt->n || (got && memcmp(p, pt->p, got) != 0))
		problem(res, "%s: a pass-through file whose bytes differ", name);
	free(p);
}

/* An entry that could not be mounted: a directory whose info.txt says what the file alone
 * said. */
static void says_why(struct tree *ft, const char *name, const char *why,
		     struct fuzz_tree_result *res)
{
	char path[256], *want = NULL;
	struct tree_stat st;
	size_t got;
	bool ok;
	uint8_t *p;

	snprintf(path, sizeof path, "%s/info.txt", name);
	if (tree_resolve(ft, path, &st) != RC_OK || st.type != TT_FILE || st.size > 65536) {
		problem(res, "%s: cannot be mounted alone, but has no info.txt", name);
		return;
	}
	p = read_all(ft, st.ino, st.size, &got, &ok);
	if (ok && asprintf(&want, "status: cannot mount: %s\n", why) >= 0)
		ok = memmem(p, got, want, strlen(want)) != NULL;
	if (!ok)
		problem(res, "%s: info.txt does not say '%s'", name, why);
	free(want);
	free(p);
}

/* name ends with ext, in any case, after at least one character. */
static bool ends_with(const char *name, const char *ext)
{
	size_t n = strlen(name), k = strlen(ext);

	return n > k && strcasecmp(name + n - k, ext) == 0;
}

static bool named_asset(const char *name)
{
	static const char *const ext[] = {".psg", ".rx2", ".psk", ".pskx", ".psa"};

	for (size_t i = 0; i < sizeof ext / sizeof *ext; i++)
		if (ends_with(name, ext[i]))
			return true;
	return false;
}

/* A name the folder layer takes as a plain file whatever it holds (folder.c's text, picture
 * and sound extensions; of the harness's names only notes.txt). */
static bool named_plain(const char *name)
{
	return ends_with(name, ".txt");
}

/* A PSA whose folder entry took its bone parents from a PSK beside it (docs/psk-psa.md, "Bone
 * parents"): its tree rightly differs from the file's alone; info.txt says so. */
static bool parents_from_sibling(struct tree *ft, const char *name)
{
	static const char said[] = "\nhierarchy: from ";
	char path[256];
	struct tree_stat st;
	size_t got;
	bool ok = false;
	uint8_t *p;

	if (!ends_with(name, ".psa"))
		return false;
	snprintf(path, sizeof path, "%s/info.txt", name);
	if (tree_resolve(ft, path, &st) != RC_OK || st.type != TT_FILE || st.size > 65536)
		return false;
	p = read_all(ft, st.ino, st.size, &got, &ok);
	ok = ok && memmem(p, got, said, sizeof said - 1) != NULL;
	free(p);
	return ok;
}

/* The entry of one part against the same file opened alone. */
static void compare_part(const char *dir, const char *name, const struct part *pt, struct tree *ft,
			 const struct tree_opts *o, struct fuzz_tree_result *res)
{
	char path[256], why[512];
	struct tree_stat es;
	struct tree *st;
	enum tree_open_fail f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (tree_resolve(ft, name, &es) != RC_OK) {
		problem(res, "%s: missing from the folder", name);
		return;
	}
	if (named_plain(name)) { /* the name decides, nothing is read at listing */
		if (es.type == TT_DIR)
			problem(res, "%s: a plain name shown as a directory", name);
		else
			same_bytes(ft, &es, pt, name, res);
		return;
	}
	f = tree_open(path, o, &st, why, sizeof why);
	if (f == TREE_FAIL_NONE && arc_detect(pt->p, pt->n) && named_asset(name)) {
		/* An archive under an asset's name: alone it mounts as the archive; in a folder
		 * the name decides (nothing is read at listing) and it is a broken asset. */
		tree_close(st);
		says_why(ft, name, "not a PSG arena, PSK or PSA file (unknown magic)", res);
		return;
	}
	if (f == TREE_FAIL_NONE) {
		struct digest a = {0xcbf29ce484222325ull, 0}, b = a;

		if (es.type != TT_DIR)
			problem(res, "%s: an asset alone, not a directory in the folder", name);
		else {
			digest_tree(st, TREE_ROOT_INO, &a, 0);
			digest_tree(ft, es.ino, &b, 0);
			if ((a.h != b.h || a.n != b.n) && !parents_from_sibling(ft, name))
				problem(res,
					"%s: its folder entry is not the tree of the file alone",
					name);
		}
		tree_close(st);
	} else if (f == TREE_FAIL_FORMAT && es.type != TT_DIR) {
		same_bytes(ft, &es, pt, name, res); /* unknown magic: passed through */
	} else if (f == TREE_FAIL_FORMAT || f == TREE_FAIL_DAMAGED || f == TREE_FAIL_OPEN) {
		/* (a known magic whose format then refuses the file is a broken asset) */
		says_why(ft, name, why, res);
	} else {
		problem(res, "%s: tree_open failed with class %d: %s", name, (int)f, why);
	}
}

static int cmp_ino(const void *x, const void *y)
{
	tree_ino a = *(const tree_ino *)x, b = *(const tree_ino *)y;

	return a < b ? -1 : a > b;
}

static void walk_folder(struct tree *ft, struct fuzz_tree_result *res, bool twice)
{
	struct walk w = {.t = ft, .res = res, .twice = twice};

	w.cap_inos = WALK_MAX_FILES + 1;
	w.inos = malloc(w.cap_inos * sizeof *w.inos);
	if (!w.inos) {
		problem(res, "out of memory");
		return;
	}
	w.inos[w.n_inos++] = TREE_ROOT_INO;
	walk_dir(&w, TREE_ROOT_INO, "", 0);
	qsort(w.inos, w.n_inos, sizeof *w.inos, cmp_ino);
	for (size_t i = 1; i < w.n_inos; i++)
		if (w.inos[i] == w.inos[i - 1])
			problem(res, "inode number %llu listed twice",
				(unsigned long long)w.inos[i]);
	free(w.inos);
}

int fuzz_folder_check(const uint8_t *p, size_t n, unsigned flags, struct fuzz_tree_result *res)
{
	/* Two open assets at most, so walks close and reopen them. */
	struct tree_opts o = {.cache_bytes = flags & FZT_TWICE ? 1 : 8u << 20,
			      .yup = flags & FZT_ZUP,
			      .max_assets = 2};
	struct part parts[FUZZ_FOLDER_FILES];
	size_t k = split_parts(p, n, parts);
	char dir[64], why[512];
	struct tree *ft;

	memset(res, 0, sizeof *res);
	if (folder_make(dir, sizeof dir, parts, k) != 0) {
		problem(res, "cannot make the folder: %s", strerror(errno));
		folder_remove(dir);
		return -1;
	}
	res->open = tree_open(dir, &o, &ft, why, sizeof why);
	if (res->open != TREE_FAIL_NONE) {
		problem(res, "the folder did not open: %s", why);
	} else {
		walk_folder(ft, res, flags & FZT_TWICE);
		for (size_t i = 0; i < k && !res->problem[0]; i++)
			compare_part(dir, folder_names[i], &parts[i], ft, &o, res);
		tree_close(ft);
	}
	folder_remove(dir);
	return res->problem[0] ? -1 : 0;
}

int fuzz_one_folder(const uint8_t *p, size_t n)
{
	struct fuzz_tree_result r;

	if (fuzz_folder_check(p, n, (n % 4 == 0 ? FZT_TWICE : 0) | (n & 1 ? FZT_ZUP : 0), &r) !=
	    0) {
		fprintf(stderr, "fuzz_folder: %s\n", r.problem);
		return -1;
	}
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
#ifdef PSGFS_FUZZ_FOLDER
	if (fuzz_one_folder(p, n))
		abort();
#else
	if (fuzz_one_tree(p, n))
		abort();
#endif
	return 0;
}
#endif
