/*
 * psgfs-tool pack: the path rules, the folder walk and the merge with --overlay, the sources
 * read and hashed, the temporary file beside OUT (pack.c, pack_int.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/sha256.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/refpack.h"
#include "psgfs/gen/gen_big.h"

#include "pack_int.h"

/* The path as one printable line: control bytes, 0x7F and backslashes as \xHH. */
size_t pk_put_escaped(char *dst, size_t cap, const char *path)
{
	size_t k = 0;

	for (const unsigned char *p = (const unsigned char *)path; *p && k + 5 < cap; p++) {
		if (*p < 0x20 || *p == 0x7F || *p == '\\')
			k += (size_t)snprintf(dst + k, cap - k, "\\x%02x", *p);
		else
			dst[k++] = (char)*p;
	}
	dst[k] = 0;
	return k;
}

/* Record the first failure; returns -1 for the callers' convenience. */
int pk_fail(struct pk *pk, int code, const char *path, const char *fmt, ...)
{
	va_list ap;
	size_t k;

	if (pk->code)
		return -1;
	pk->code = code;
	k = pk_put_escaped(pk->msg, sizeof pk->msg - 64, path);
	k += (size_t)snprintf(pk->msg + k, sizeof pk->msg - k, ": ");
	va_start(ap, fmt);
	vsnprintf(pk->msg + k, sizeof pk->msg - k, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- rules ---- */

bool pack_path_ok(const char *path, char *why, size_t why_len)
{
	const char *slash = strrchr(path, '/'), *c = path;
	size_t folder = slash ? (size_t)(slash - path) : 0;
	const char *name = slash ? slash + 1 : path;

	if (!*path || *path == '/') {
		snprintf(why, why_len, "%s", *path ? "absolute path" : "empty path");
		return false;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p < 0x20 || *p == 0x7F || *p == '\\') {
			snprintf(why, why_len, "%s in the name",
				 *p == '\\' ? "backslash" : "control byte");
			return false;
		}
	}
	while (*c) {
		size_t len = strcspn(c, "/");

		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && !strncmp(c, "..", 2))) {
			snprintf(why, why_len, "empty, '.' or '..' component (escapes the root)");
			return false;
		}
		c += len;
		c += *c == '/';
	}
	if (path[strlen(path) - 1] == '/') {
		snprintf(why, why_len, "empty, '.' or '..' component (escapes the root)");
		return false;
	}
	if (folder > PK_FOLDER_MAX || strlen(name) > PK_NAME_MAX) {
		snprintf(why, why_len, "%s longer than %d bytes (EB v3 records)",
			 folder > PK_FOLDER_MAX ? "folder" : "name",
			 folder > PK_FOLDER_MAX ? PK_FOLDER_MAX : PK_NAME_MAX);
		return false;
	}
	return true;
}

int pack_path_cmp(const char *a, const char *b)
{
	return strcmp(a, b);
}

struct hix {
	uint64_t h;
	size_t i;
};

static int hix_cmp(const void *a, const void *b)
{
	const struct hix *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

long pack_hash_clash(const uint64_t *hash, size_t n, bool wide, size_t *other)
{
	struct hix *v = calloc(n ? n : 1, sizeof *v);
	long at = -1;

	if (!v)
		return -2;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct hix){wide ? hash[i] : hash[i] >> 32, i};
	qsort(v, n, sizeof *v, hix_cmp);
	for (size_t i = 1; i < n && at < 0; i++) {
		if (v[i].h == v[i - 1].h) {
			at = (long)v[i - 1].i;
			*other = v[i].i;
		}
	}
	free(v);
	return at;
}

/* ---- reading the sources ---- */

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The file in cur_fd is done: it must be what the walk saw, and all of it was read. */
void pk_close_cur(struct pk *pk)
{
	struct pk_file *f = pk->cur;
	struct stat st;

	if (!f)
		return;
	if (pk->hook && !strcmp(pk->hook, f->path)) {
		int fd = openat(f->root, f->path, O_WRONLY | O_APPEND | O_CLOEXEC);

		if (fd >= 0) {
			(void)!write(fd, "!", 1);
			close(fd);
		}
	}
	if (fstat(pk->cur_fd, &st) != 0 || !same_file(&st, &f->st))
		pk_fail(pk, PACK_EXIT_CHANGED, f->path, "changed while it was packed");
	else if (f->hashed != (uint64_t)f->st.st_size)
		pk_fail(pk, PACK_EXIT_INTERNAL, f->path, "read out of order (%llu of %llu bytes)",
			(unsigned long long)f->hashed, (unsigned long long)f->st.st_size);
	close(pk->cur_fd);
	pk->cur = NULL;
	pk->cur_fd = -1;
}

static int pk_open(struct pk *pk, struct pk_file *f)
{
	struct stat st;
	int fd = openat(f->root, f->path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		pk_fail(pk, errno == ELOOP ? PACK_EXIT_CHANGED : PACK_EXIT_READ, f->path,
			"cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !same_file(&st, &f->st)) {
		close(fd);
		pk_fail(pk, PACK_EXIT_CHANGED, f->path, "changed while it was packed");
		return -1;
	}
	pk->cur = f;
	pk->cur_fd = fd;
	return 0;
}

/* gen_fill_fn: bytes [off, off+n) of the file; zeros after a failure (the pack then fails). */
void pk_fill(void *ctx, uint64_t off, uint8_t *dst, size_t n)
{
	struct pk_file *f = ctx;
	struct pk *pk = f->pk;
	size_t done = 0;

	if (pk->cur != f) {
		pk_close_cur(pk);
		if (!pk->code)
			pk_open(pk, f);
	}
	while (!pk->code && done < n) {
		ssize_t k = pread(pk->cur_fd, dst + done, n - done, (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			pk_fail(pk, PACK_EXIT_READ, f->path, "cannot read: %s", strerror(errno));
		else if (k == 0)
			pk_fail(pk, PACK_EXIT_CHANGED, f->path, "changed while it was packed");
		else
			done += (size_t)k;
	}
	if (pk->code) {
		memset(dst, 0, n);
		return;
	}
	if (off == f->hashed) {
		sha256_update(&f->sha, dst, n);
		f->hashed += n;
	}
}

/* SHA-256 of entry i's unpacked bytes as psgfs reads them. */
enum rc pk_entry_sha(const struct src *s, const struct arc *a, uint32_t i, uint8_t *piece,
		     struct sha256 *sha)
{
	struct arc_index *ix = NULL;
	struct diag d;
	enum rc r;

	diag_init(&d);
	sha256_init(sha);
	r = arc_index_build(s, a, i, &ix, &d);
	for (uint64_t k = 0; r == RC_OK && k < arc_piece_count(ix); k++) {
		uint64_t off, len;
		size_t got;

		arc_piece_span(ix, k, &off, &len);
		r = arc_piece(s, ix, k, piece, &got, NULL);
		if (r == RC_OK && got != len)
			r = RC_CORRUPT;
		if (r == RC_OK)
			sha256_update(sha, piece, got);
	}
	arc_index_free(ix);
	diag_free(&d);
	return r;
}

int pk_path_sort(const void *a, const void *b)
{
	return pack_path_cmp(((const struct pk_file *)a)->path, ((const struct pk_file *)b)->path);
}

/* Every file once more: the same file as at the walk (catches a change after its read). */
void pk_recheck(struct pk *pk)
{
	for (size_t i = 0; !pk->code && i < pk->n; i++) {
		struct stat st;

		if (pk->f[i].virt)
			continue;
		if (fstatat(pk->f[i].root, pk->f[i].path, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !same_file(&st, &pk->f[i].st))
			pk_fail(pk, PACK_EXIT_CHANGED, pk->f[i].path,
				"changed while it was packed");
	}
}

/* ---- shared with pack-stream (pack.h): the identity check ---- */

bool pack_same_file(const struct stat *a, const struct stat *b)
{
	return same_file(a, b);
}

/* ---- the walk ---- */

int pk_add(struct pk *pk, const char *path, const struct stat *st)
{
	struct pk_file *f;
	char *slash;

	if (pk->n == pk->cap) {
		size_t cap = pk->cap ? pk->cap * 2 : 256;
		struct pk_file *v = reallocarray(pk->f, cap, sizeof *v);

		if (!v)
			return -1;
		pk->f = v;
		pk->cap = cap;
	}
	f = &pk->f[pk->n];
	memset(f, 0, sizeof *f);
	f->path = strdup(path);
	slash = f->path ? strrchr(f->path, '/') : NULL;
	f->folder = slash ? strndup(f->path, (size_t)(slash - f->path)) : strdup("");
	if (!f->path || !f->folder) {
		free(f->path);
		free(f->folder);
		return -1;
	}
	f->name = slash ? slash + 1 : f->path;
	f->st = *st;
	f->pk = pk;
	f->root = pk->walk_root;
	f->over = pk->walk_over;
	sha256_init(&f->sha);
	pk->n++;
	return 0;
}

static void pk_walk(struct pk *pk, int dfd, const char *rel, unsigned depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	char why[128];

	if (!d) {
		close(dfd);
		pk_fail(pk, PACK_EXIT_READ, *rel ? rel : ".", "cannot list: %s", strerror(errno));
		return;
	}
	while (!pk->code && (errno = 0, de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(path, sizeof path, "%s%s%s", rel, *rel ? "/" : "", de->d_name) >=
		    (int)sizeof path) {
			pk_fail(pk, PACK_EXIT_NAME, rel, "path too long");
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			pk_fail(pk, PACK_EXIT_READ, path, "cannot stat: %s", strerror(errno));
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			pk_fail(pk, PACK_EXIT_LINK, path,
				"symbolic link (pack never follows links)");
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = depth < 128
				      ? openat(dirfd(d), de->d_name,
					       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				      : -1;

			if (sub < 0)
				pk_fail(pk, depth < 128 ? PACK_EXIT_READ : PACK_EXIT_NAME, path,
					"cannot open folder: %s",
					depth < 128 ? strerror(errno) : "nested too deep");
			else
				pk_walk(pk, sub, path, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			pk_fail(pk, PACK_EXIT_LINK, path, "not a regular file");
			break;
		}
		if (!pack_path_ok(path, why, sizeof why)) {
			pk_fail(pk, PACK_EXIT_NAME, path, "%s", why);
			break;
		}
		if ((uint64_t)st.st_size > UINT32_MAX) {
			pk_fail(pk, PACK_EXIT_LIMIT, path,
				"larger than 4 GiB - 1 (the format's limit)");
			break;
		}
		if (pk_add(pk, path, &st) != 0)
			pk_fail(pk, PACK_EXIT_INTERNAL, path, "out of memory");
	}
	if (!pk->code && errno)
		pk_fail(pk, PACK_EXIT_READ, *rel ? rel : ".", "cannot list: %s", strerror(errno));
	closedir(d);
}

#define PK_TEMP_TAG ".psgfs-pack-" /* a name no user file has by chance */

/* Whether name is a temporary file of a pack of base: ".base.psgfs-pack-" and six bytes. */
static bool is_temp_of(const char *name, const char *base)
{
	size_t n = strlen(base), t = strlen(PK_TEMP_TAG);

	return name[0] == '.' && !strncmp(name + 1, base, n) &&
	       !strncmp(name + 1 + n, PK_TEMP_TAG, t) && strlen(name + 1 + n + t) == 6;
}

/* The temporaries a killed pack of OUT left (kill -9, a crash): each is locked while its pack
 * runs, so one that can be locked, and that has not been written for a few seconds (a pack
 * between creating and locking it), belongs to no running pack and is removed. */
static void pk_clean_stale(const char *out)
{
	const char *slash = strrchr(out, '/'), *base = slash ? slash + 1 : out;
	char *dir = slash ? strndup(out, slash == out ? 1 : (size_t)(slash - out)) : strdup(".");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	while (d && (de = readdir(d))) {
		struct stat st;
		int fd;

		if (!is_temp_of(de->d_name, base))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
		    st.st_uid == geteuid() && st.st_mtim.tv_sec + 5 < now.tv_sec &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dirfd(d), de->d_name, 0);
		close(fd);
	}
	if (d)
		closedir(d);
	free(dir);
}

/* A temporary file in OUT's folder: ".NAME.psgfs-pack-XXXXXX", mode 0666 & ~umask, locked while
 * this pack runs (pk_clean_stale). */
int pk_temp(const char *out, char **tmp)
{
	const char *slash = strrchr(out, '/');
	size_t dlen = slash ? (size_t)(slash - out + 1) : 0;
	mode_t um = umask(0);
	int fd;

	umask(um);
	pk_clean_stale(out);
	if (asprintf(tmp, "%.*s.%s" PK_TEMP_TAG "XXXXXX", (int)dlen, out, slash ? slash + 1 : out) <
	    0) {
		*tmp = NULL;
		return -1;
	}
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd >= 0 && (flock(fd, LOCK_EX | LOCK_NB) != 0 || fchmod(fd, 0666 & ~um) != 0)) {
		close(fd);
		unlink(*tmp);
		return -1;
	}
	return fd;
}

/* OUT's folder synced, so the rename itself survives a crash. */
int pk_sync_folder(const char *out)
{
	const char *slash = strrchr(out, '/');
	char *dir = slash ? strndup(out, slash == out ? 1 : (size_t)(slash - out)) : strdup(".");
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1, rc = -1;

	if (fd >= 0) {
		rc = fsync(fd);
		if (rc != 0 && errno == EINVAL) /* a file system that cannot sync folders */
			rc = 0;
		close(fd);
	}
	free(dir);
	return rc;
}

/* Walk a folder into pk->f; returns its descriptor (kept: files are opened relative to it). */
int pk_walk_root(struct pk *pk, const char *dir, bool over)
{
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), dfd;

	if (root < 0) {
		pk_fail(pk, PACK_EXIT_READ, dir, "cannot open folder: %s", strerror(errno));
		return -1;
	}
	dfd = dup(root);
	pk->walk_root = root;
	pk->walk_over = over;
	if (dfd < 0)
		pk_fail(pk, PACK_EXIT_READ, dir, "%s", strerror(errno));
	else
		pk_walk(pk, dfd, "", 0);
	return root;
}

static int merge_sort(const void *a, const void *b)
{
	const struct pk_file *x = a, *y = b;
	int c = pack_path_cmp(x->path, y->path);

	return c ? c : (int)x->over - (int)y->over;
}

/* Sorted by path; an overlay file replaces the file of DIR at the same path. */
void pk_merge(struct pk *pk)
{
	size_t k = 0;

	if (pk->n) /* pk->f is NULL before the first file */
		qsort(pk->f, pk->n, sizeof *pk->f, merge_sort);
	for (size_t i = 0; i < pk->n; i++) {
		if (i + 1 < pk->n && !strcmp(pk->f[i].path, pk->f[i + 1].path)) {
			free(pk->f[i].path);
			free(pk->f[i].folder);
			continue;
		}
		pk->f[k++] = pk->f[i];
	}
	pk->n = k;
}

/* ---- shared with pack-stream (pack.h): the walk, the identity check, the temporary file ---- */

int pack_walk(const char *dir, struct pack_tree *t)
{
	struct pk pk = {.root = -1, .root2 = -1, .cur_fd = -1};

	memset(t, 0, sizeof *t);
	t->root = pk_walk_root(&pk, dir, false);
	if (!pk.code && pk.n)
		qsort(pk.f, pk.n, sizeof *pk.f, merge_sort);
	t->v = pk.n ? calloc(pk.n, sizeof *t->v) : NULL;
	if (pk.n && !t->v)
		pk_fail(&pk, PACK_EXIT_INTERNAL, dir, "out of memory");
	for (size_t i = 0; i < pk.n; i++) {
		if (t->v) {
			t->v[i].path = pk.f[i].path;
			t->v[i].st = pk.f[i].st;
		} else {
			free(pk.f[i].path);
		}
		free(pk.f[i].folder);
	}
	t->n = t->v ? pk.n : 0;
	free(pk.f);
	t->code = pk.code;
	snprintf(t->msg, sizeof t->msg, "%s", pk.msg);
	return t->code;
}

void pack_tree_free(struct pack_tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].path);
	free(t->v);
	if (t->root >= 0)
		close(t->root);
	memset(t, 0, sizeof *t);
	t->root = -1;
}

int pack_temp_file(const char *out, char **tmp)
{
	return pk_temp(out, tmp);
}
