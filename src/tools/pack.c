/*
 * psgfs-tool pack (pack.h, docs/archives.md "Writing archives"). The folder is walked without
 * following links; every file is read through a fill callback while the writer places it, its
 * SHA-256 taken on the way, and its identity (device, inode, size, mtime) checked before and
 * after; the archive goes to a temporary file beside OUT, is read back through arc_open and
 * every entry decoded and compared, then renamed over OUT. --like ORIG starts from ORIG's
 * header and tables and copies its unchanged entries as stored.
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

#include "pack.h"

#define PK_FOLDER_MAX 253
#define PK_NAME_MAX   252

enum pk_format { PK_EB, PK_BIGF, PK_BIG4 };
enum pk_compress { PK_NONE, PK_REFPACK, PK_CHUNKED };

struct pk_file {
	char *path; /* relative to DIR, '/'-separated */
	char *folder, *name;
	struct stat st; /* at the walk (virt: st_size only) */
	int root;	/* the folder it is relative to */
	bool over;	/* from --overlay */
	bool virt;	/* --like without DIR: ORIG's entry, copied as stored */
	bool copied;	/* --like: ORIG's stored bytes copied, checked as such at the read back */
	struct arc_entry orig; /* --like: ORIG's entry (copied: its stored bytes and fields) */
	struct sha256 sha;
	uint64_t hashed; /* bytes of it hashed so far (the writer reads each once, in order) */
	struct pk *pk;
};

struct pk {
	int root, root2; /* DIR, --overlay DIR2 */
	int walk_root;	 /* the folder being walked */
	bool walk_over;
	struct pk_file *f;
	size_t n, cap;
	struct pk_file *cur; /* the file open in cur_fd */
	int cur_fd;
	int code; /* first failure: exit code and its line */
	char msg[PATH_MAX + 256];
	const char *hook;    /* PSGFS_PACK_TEST_CHANGE: a file changed after it is read (tests) */
	const char *corrupt; /* PSGFS_PACK_TEST_CORRUPT=N: the archive's byte N from the end
				flipped before the read back (tests) */
	int orig_fd;	     /* --like: ORIG, open until the read back */
	bool renamed;	     /* OUT is in place (a later failure leaves it) */
	const char *out;
};

/* The path as one printable line: control bytes, 0x7F and backslashes as \xHH. */
static size_t put_escaped(char *dst, size_t cap, const char *path)
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
static int pk_fail(struct pk *pk, int code, const char *path, const char *fmt, ...)
{
	va_list ap;
	size_t k;

	if (pk->code)
		return -1;
	pk->code = code;
	k = put_escaped(pk->msg, sizeof pk->msg - 64, path);
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

/* ---- the walk ---- */

static int pk_add(struct pk *pk, const char *path, const struct stat *st)
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

/* ---- reading the sources ---- */

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The file in cur_fd is done: it must be what the walk saw, and all of it was read. */
static void pk_close_cur(struct pk *pk)
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
static void pk_fill(void *ctx, uint64_t off, uint8_t *dst, size_t n)
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

/* ---- reading the archive back ---- */

/* SHA-256 of entry i's unpacked bytes as psgfs reads them. */
static enum rc entry_sha(const struct src *s, const struct arc *a, uint32_t i, uint8_t *piece,
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

/* Whether OUT's stored bytes [off, off+n) are ORIG's [orig, orig+n). */
static bool same_stored(int out, uint64_t off, int orig, uint64_t at, uint64_t n, uint8_t *piece)
{
	uint8_t *a = piece, *b = piece + ARC_PIECE_MAX / 2;

	while (n) {
		size_t k = n < ARC_PIECE_MAX / 2 ? (size_t)n : ARC_PIECE_MAX / 2;
		struct src x, y;

		src_init_fd(&x, &out, off + k);
		src_init_fd(&y, &orig, at + k);
		if (src_read(&x, off, a, k) != RC_OK || src_read(&y, at, b, k) != RC_OK ||
		    memcmp(a, b, k))
			return false;
		off += k, at += k, n -= k;
	}
	return true;
}

/* An entry copied as stored: the same fields as ORIG's and the same stored bytes, so psgfs
 * decodes it as it decodes ORIG's (not decoded again: copying runs at disk speed). */
static int verify_copied(struct pk *pk, const struct arc_entry *e, struct pk_file *f, int fd,
			 uint8_t *piece)
{
	const struct arc_entry *o = &f->orig;

	if (e->stored != o->stored || e->size != o->size || e->method != o->method ||
	    e->table_method != o->table_method ||
	    !same_stored(fd, e->off, pk->orig_fd, o->off, e->stored, piece)) {
		pk_fail(pk, PACK_EXIT_VERIFY, f->path,
			"does not read back as the original's entry it copies");
		return -1;
	}
	return 0;
}

static int verify_entry(struct pk *pk, const struct src *s, int fd, const struct arc *a, uint32_t i,
			struct pk_file *f, uint8_t *piece)
{
	struct sha256 sha;
	char want[SHA256_HEX_LEN + 1], got_hex[SHA256_HEX_LEN + 1];
	const char *path = a->paths + a->e[i].path;
	enum rc r;

	if (strcmp(path, f->path) || a->e[i].bad || a->e[i].size != (uint64_t)f->st.st_size) {
		pk_fail(pk, PACK_EXIT_VERIFY, f->path, "reads back as '%s' (%llu bytes)", path,
			(unsigned long long)a->e[i].size);
		return -1;
	}
	if (f->copied)
		return verify_copied(pk, &a->e[i], f, fd, piece);
	r = entry_sha(s, a, i, piece, &sha);
	sha256_hex(&f->sha, want);
	sha256_hex(&sha, got_hex);
	if (r != RC_OK || strcmp(want, got_hex)) {
		pk_fail(pk, PACK_EXIT_VERIFY, f->path, "does not read back as its source (%s)",
			r != RC_OK ? rc_str(r) : "bytes differ");
		return -1;
	}
	return 0;
}

static void pk_verify(struct pk *pk, int fd, const char *out)
{
	struct stat st;
	struct src s;
	struct arc a = {0};
	struct diag d;
	uint8_t *piece = malloc(ARC_PIECE_MAX);
	enum rc r;

	if (!piece || fstat(fd, &st) != 0) {
		free(piece);
		pk_fail(pk, PACK_EXIT_INTERNAL, out, "cannot read back");
		return;
	}
	src_init_fd(&s, &fd, (uint64_t)st.st_size);
	diag_init(&d);
	r = arc_open(&s, NULL, &a, &d);
	if (r != RC_OK || a.n != pk->n || d.n)
		pk_fail(pk, PACK_EXIT_VERIFY, out, "does not read back (%s, %u of %zu entries%s%s)",
			rc_str(r), r == RC_OK ? a.n : 0, pk->n, d.n ? ": " : "",
			d.n ? d.msg[0] : "");
	for (uint32_t i = 0; !pk->code && i < a.n; i++)
		verify_entry(pk, &s, fd, &a, i, &pk->f[i], piece);
	if (r == RC_OK)
		arc_free(&a);
	diag_free(&d);
	free(piece);
}

/* ---- options and main ---- */

struct pk_opts {
	enum pk_format format;
	enum pk_compress compress;
	uint64_t min_size;
	bool wide, x360;
	bool shaped;	 /* --format, --compress, --wide or --min-size given */
	bool skip_added; /* --skip-added: overlay files ORIG lacks are skipped, not refused */
	const char *dir, *out, *like, *overlay;
};

static void pack_usage(FILE *o)
{
	fprintf(
	    o,
	    "usage: psgfs-tool pack [options] DIR OUT.big\n"
	    "       psgfs-tool pack --like ORIG.big [--overlay DIR2] [options] [DIR] OUT.big\n"
	    "  --format eb|bigf|big4     archive kind (default eb: EB v3, big-endian)\n"
	    "  --compress none|refpack|chunked\n"
	    "                            entries as RefPack streams (default), chunkref\n"
	    "                            streams of 64 KiB RefPack chunks (eb only), or stored\n"
	    "  --min-size BYTES          entries smaller than this are stored (default 256);\n"
	    "                            empty entries are always stored\n"
	    "  --platform ps3|x360       the console (the container is the same for both)\n"
	    "  --wide                    eb: 20-byte records (two hash words)\n"
	    "  --like ORIG.big           ORIG's kind (EB v3, BIGF, BIG4), header, tables, order\n"
	    "                            and methods; DIR must hold ORIG's paths; unchanged\n"
	    "                            entries are copied as stored, changed ones packed with\n"
	    "                            ORIG's method (chunked: chunkref); without DIR, ORIG's\n"
	    "                            entries themselves (no --format, --compress, --wide,\n"
	    "                            --min-size with it)\n"
	    "  --overlay DIR2            DIR2's files replace DIR's (ORIG's) at the same path,\n"
	    "                            or are added (not with --like)\n"
	    "  --skip-added              with --like and --overlay: DIR2's files at paths\n"
	    "                            ORIG lacks are skipped, one line each on stderr\n"
	    "                            (a mods OUTDIR holds every archive's mods)\n"
	    "Entries are DIR's regular files, sorted bytewise by path; links and special files\n"
	    "are refused. OUT is written beside itself and renamed into place once it reads back.\n"
	    "exit status: 0 ok, 1 internal error, 2 usage, 3 cannot read DIR or a file in it,\n"
	    "6 a path the archive cannot hold (escapes the root, control byte, backslash, too\n"
	    "long), 7 two paths share a hash, 8 a link or special file in DIR, 9 a file changed\n"
	    "while packed, 10 cannot write OUT, 11 the archive does not read back, 12 beyond\n"
	    "the format (entry past 4 GiB - 1, too many folders), 13 --like: ORIG cannot be\n"
	    "reproduced or DIR does not hold ORIG's paths\n");
}

static int pk_parse(struct pk_opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
	    {"format", required_argument, NULL, 'f'},	{"compress", required_argument, NULL, 'c'},
	    {"min-size", required_argument, NULL, 'm'}, {"platform", required_argument, NULL, 'p'},
	    {"wide", no_argument, NULL, 'w'},		{"like", required_argument, NULL, 'l'},
	    {"overlay", required_argument, NULL, 'o'},	{"skip-added", no_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},		{NULL, 0, NULL, 0},
	};
	int c;

	o->compress = PK_REFPACK;
	o->min_size = 256;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		char *end;

		o->shaped |= c == 'f' || c == 'c' || c == 'w' || c == 'm';
		if (c == 'f' && !strcmp(optarg, "eb"))
			o->format = PK_EB;
		else if (c == 'f' && !strcmp(optarg, "bigf"))
			o->format = PK_BIGF;
		else if (c == 'f' && !strcmp(optarg, "big4"))
			o->format = PK_BIG4;
		else if (c == 'c' && !strcmp(optarg, "none"))
			o->compress = PK_NONE;
		else if (c == 'c' && !strcmp(optarg, "refpack"))
			o->compress = PK_REFPACK;
		else if (c == 'c' && !strcmp(optarg, "chunked"))
			o->compress = PK_CHUNKED;
		else if (c == 'p' && (!strcmp(optarg, "ps3") || !strcmp(optarg, "x360")))
			o->x360 = !strcmp(optarg, "x360");
		else if (c == 'w')
			o->wide = true;
		else if (c == 'l')
			o->like = optarg;
		else if (c == 'o')
			o->overlay = optarg;
		else if (c == 's')
			o->skip_added = true;
		else if (c == 'm' && (errno = 0, o->min_size = strtoull(optarg, &end, 10),
				      !errno && *optarg >= '0' && *optarg <= '9' && !*end))
			continue;
		else if (c == 'h') {
			pack_usage(stdout);
			return 0;
		} else {
			if (c != '?')
				fprintf(stderr, "psgfs-tool: pack: bad value '%s'\n", optarg);
			pack_usage(stderr);
			return PACK_EXIT_USAGE;
		}
	}
	if (argc - optind != 2 && !(o->like && argc - optind == 1)) {
		pack_usage(stderr);
		return PACK_EXIT_USAGE;
	}
	if (o->format != PK_EB && (o->compress == PK_CHUNKED || o->wide)) {
		fprintf(stderr,
			"psgfs-tool: pack: --compress chunked and --wide need --format eb\n");
		return PACK_EXIT_USAGE;
	}
	if (o->skip_added && !(o->like && o->overlay)) {
		fprintf(stderr, "psgfs-tool: pack: --skip-added needs --like and --overlay\n");
		return PACK_EXIT_USAGE;
	}
	if (o->like && o->shaped) {
		fprintf(stderr,
			"psgfs-tool: pack: --like takes the format, compression and "
			"record width from ORIG (no --format, --compress, --wide, --min-size)\n");
		return PACK_EXIT_USAGE;
	}
	o->dir = argc - optind == 2 ? argv[optind] : NULL;
	o->out = argv[argc - 1];
	return -1;
}

static int path_sort(const void *a, const void *b)
{
	return pack_path_cmp(((const struct pk_file *)a)->path, ((const struct pk_file *)b)->path);
}

static struct gen_big_entry *pk_entries(const struct pk *pk, const struct pk_opts *o)
{
	struct gen_big_entry *e = calloc(pk->n ? pk->n : 1, sizeof *e);

	for (size_t i = 0; e && i < pk->n; i++) {
		struct pk_file *f = &pk->f[i];
		bool small = (uint64_t)f->st.st_size < o->min_size || f->st.st_size == 0;

		e[i].folder = f->folder;
		e[i].name = f->name;
		e[i].len = (uint64_t)f->st.st_size;
		e[i].fill = pk_fill;
		e[i].ctx = f;
		e[i].method = small || o->compress == PK_NONE ? GB_STORED
			      : o->compress == PK_REFPACK     ? GB_REFPACK
							      : GB_CHUNK_REFPACK;
		/* chunk methods both readers share: 2 RefPack, 4 stored (docs/archives.md) */
		e[i].style = GB_STYLE_RW4;
		e[i].chunk_align = 16;
	}
	return e;
}

static int pk_check_hashes(struct pk *pk, const struct pk_opts *o)
{
	uint64_t *h = calloc(pk->n ? pk->n : 1, sizeof *h);
	size_t other = 0;
	long at;

	if (!h)
		return -1;
	for (size_t i = 0; i < pk->n; i++)
		h[i] = gen_big_hash(pk->f[i].folder, pk->f[i].name);
	at = pack_hash_clash(h, pk->n, o->wide, &other);
	free(h);
	if (at == -2)
		return -1;
	if (at >= 0)
		pk_fail(pk, PACK_EXIT_HASH, pk->f[at].path, "same hash as '%s'", pk->f[other].path);
	return 0;
}

static int pk_write(struct pk *pk, const struct pk_opts *o, int fd)
{
	struct gen_big_entry *e = pk_entries(pk, o);
	enum rc r;

	if (!e)
		return -1;
	if (o->format == PK_EB) {
		struct gen_big_opts bo = {.wide = o->wide, .shift = 4, .sort = 0x20};
		struct gen_sink s;
		int wfd = fd;

		gen_sink_fd(&s, &wfd);
		r = gen_big_write(&bo, e, (uint32_t)pk->n, &s, NULL, NULL);
	} else {
		struct buf b;
		uint64_t sum = 0;

		/* BIGF offsets are 32-bit; the archive is built in memory (the writer's way) */
		for (size_t i = 0; i < pk->n; i++)
			sum += ((uint64_t)pk->f[i].st.st_size + 15) / 16 * 16;
		if (sum > UINT32_MAX - (64ull << 20)) {
			free(e);
			pk_fail(pk, PACK_EXIT_LIMIT, o->out, "beyond the format (BIGF past 4 GiB)");
			return 0;
		}
		buf_init(&b);
		r = gen_bigf_write(o->format == PK_BIG4, e, (uint32_t)pk->n, &b);
		for (size_t off = 0; r == RC_OK && off < b.len;) {
			ssize_t k = pwrite(fd, b.data + off, b.len - off, (off_t)off);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				r = RC_IO;
			else
				off += (size_t)k;
		}
		buf_free(&b);
	}
	free(e);
	if (!pk->code && r == RC_IO) /* before the file being read is checked: it was cut short */
		pk_fail(pk, PACK_EXIT_WRITE, o->out, "cannot write: %s", strerror(errno));
	if (!pk->code)
		pk_close_cur(pk);
	else if (!pk->code && r == RC_INVAL)
		pk_fail(pk, PACK_EXIT_LIMIT, o->out,
			"beyond the format (too many folders, or "
			"an archive past 4 GiB << shift)");
	else if (!pk->code && r != RC_OK)
		pk_fail(pk, PACK_EXIT_INTERNAL, o->out, "%s", rc_str(r));
	return 0;
}

/* ---- --like ORIG.big ---- */

struct pk_like {
	int fd;
	struct src s;
	struct arc a;
	bool open, eb;
	uint8_t *head; /* ORIG's bytes before its first entry: header and tables, patched */
	size_t head_len;
	uint32_t shift, rec; /* EB: alignment shift, record width */
	uint64_t align;	     /* entries' alignment: 1 << shift (EB), 16 or 1 (BIGF/BIG4) */
	uint64_t size;	     /* ORIG's file size */
	struct stat st;	     /* ORIG at its opening: it must not change while it is packed */
	size_t *dir;	     /* BIGF/BIG4: where entry i's directory record starts in head */
};

static uint64_t rd_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int k = 0; k < n; k++)
		v = v << 8 | p[k];
	return v;
}

static void wr_be(uint8_t *p, uint64_t v, int n)
{
	for (int k = n - 1; k >= 0; k--, v >>= 8)
		p[k] = (uint8_t)v;
}

static void like_close(struct pk_like *l)
{
	if (l->open)
		arc_free(&l->a);
	free(l->head);
	free(l->dir);
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	l->open = false;
	l->head = NULL;
	l->dir = NULL;
}

/* EB v3: compression bytes present, tables before the data, methods known. */
static int like_eb(struct pk *pk, const char *path, struct pk_like *l, uint64_t first)
{
	uint8_t h[0x30];
	uint64_t comp_off;

	if (src_read(&l->s, 0, h, sizeof h) != RC_OK)
		return pk_fail(pk, PACK_EXIT_LIKE, path, "cannot reproduce: short header");
	l->rec = rd_be(h + 8, 2) & 1 ? 20 : 16;
	l->shift = h[10];
	comp_off = 0x30 + ((uint64_t)l->a.n * l->rec + 15) / 16 * 16;
	for (uint32_t i = 0; i < l->a.n; i++)
		if (l->a.e[i].table_method > 4)
			return pk_fail(pk, PACK_EXIT_LIKE, path, "cannot reproduce: method %u",
				       l->a.e[i].table_method);
	if (rd_be(h + 12, 4) < comp_off + l->a.n || first < rd_be(h + 12, 4) + rd_be(h + 16, 4) ||
	    l->shift > 31)
		return pk_fail(pk, PACK_EXIT_LIKE, path,
			       "cannot reproduce: no compression bytes, or tables after the data");
	l->align = 1ull << l->shift;
	return 0;
}

/* BIGF/BIG4: the directory before the data; where each record starts (patched in place). */
static int like_bigf(struct pk *pk, const char *path, struct pk_like *l, uint64_t first)
{
	uint8_t h[16];
	size_t cur = 16;

	if (src_read(&l->s, 0, h, sizeof h) != RC_OK || rd_be(h + 12, 4) > first)
		return pk_fail(pk, PACK_EXIT_LIKE, path,
			       "cannot reproduce: its directory runs into the data");
	l->dir = calloc(l->a.n ? l->a.n : 1, sizeof *l->dir);
	if (!l->dir)
		return pk_fail(pk, PACK_EXIT_INTERNAL, path, "out of memory");
	l->align = 16;
	for (uint32_t i = 0; i < l->a.n; i++) {
		if (l->a.e[i].stored && l->a.e[i].off % 16)
			l->align = 1;
		l->dir[i] = cur;
		cur += 8 + strlen(l->a.paths + l->a.e[i].path) + 1;
	}
	return 0;
}

/* ORIG must be an archive psgfs reads without a complaint, whose header and tables all lie
 * before its first entry (EB v3 with its compression bytes, BIGF or BIG4). */
static int like_open(struct pk *pk, const char *path, struct pk_like *l)
{
	struct stat st;
	struct diag d;
	uint64_t first;
	enum rc r;

	l->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (l->fd < 0 || fstat(l->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		pk_fail(pk, PACK_EXIT_READ, path, "cannot open: %s",
			l->fd < 0 ? strerror(errno) : "not a regular file");
		return -1;
	}
	l->size = (uint64_t)st.st_size;
	src_init_fd(&l->s, &l->fd, l->size);
	diag_init(&d);
	r = arc_open(&l->s, NULL, &l->a, &d);
	l->open = r == RC_OK;
	if (r != RC_OK || l->a.kind == ARC_SFIL || d.n) {
		pk_fail(pk, PACK_EXIT_LIKE, path, "cannot reproduce: %s",
			r != RC_OK ? rc_str(r)
			: d.n	   ? d.msg[0]
				   : "a stream file, not an archive");
		diag_free(&d);
		return -1;
	}
	diag_free(&d);
	l->eb = l->a.kind == ARC_EB3;
	l->st = st;
	for (uint32_t i = 0; i < l->a.n; i++) { /* names that escape the root: never written */
		char why[128];

		if (!pack_path_ok(l->a.paths + l->a.e[i].path, why, sizeof why))
			return pk_fail(pk, PACK_EXIT_NAME, l->a.paths + l->a.e[i].path, "in %s: %s",
				       path, why);
	}
	first = l->size;
	for (uint32_t i = 0; i < l->a.n; i++)
		if (l->a.e[i].stored && l->a.e[i].off < first)
			first = l->a.e[i].off;
	if ((l->eb ? like_eb : like_bigf)(pk, path, l, first) != 0)
		return -1;
	l->head_len = (size_t)first;
	if (src_dup(&l->s, 0, l->head_len, &l->head) != RC_OK)
		return pk_fail(pk, PACK_EXIT_READ, path, "cannot read");
	return 0;
}

static int file_cmp(const void *key, const void *f)
{
	return pack_path_cmp(key, ((const struct pk_file *)f)->path);
}

/* Without DIR: ORIG's entries not replaced by the overlay, as entries copied as stored. */
static void like_virtual(struct pk *pk, const struct pk_like *l)
{
	size_t n_over = pk->n; /* the overlay's files, before ORIG's are added */

	for (uint32_t i = 0; !pk->code && i < l->a.n; i++) {
		const char *p = l->a.paths + l->a.e[i].path;
		struct stat st = {.st_size = (off_t)l->a.e[i].size};
		bool have = false;

		for (size_t j = 0; j < n_over && !have; j++) /* the overlay's files: few */
			have = pk->f[j].over && !strcmp(pk->f[j].path, p);
		if (have)
			continue;
		if (pk_add(pk, p, &st) != 0)
			pk_fail(pk, PACK_EXIT_INTERNAL, p, "out of memory");
		else
			pk->f[pk->n - 1].virt = true;
	}
	if (!pk->code && pk->n)
		qsort(pk->f, pk->n, sizeof *pk->f, path_sort);
}

/* pk->f in ORIG's table order: DIR must hold exactly ORIG's paths. */
static int like_match(struct pk *pk, const struct pk_like *l, const char *orig, bool skip_added)
{
	struct pk_file *v = calloc(pk->n ? pk->n : 1, sizeof *v);
	bool *used = calloc(pk->n ? pk->n : 1, 1);

	if (!v || !used) {
		free(v);
		free(used);
		return -1;
	}
	for (uint32_t i = 0; !pk->code && i < l->a.n; i++) {
		const char *p = l->a.paths + l->a.e[i].path;
		struct pk_file *f =
		    pk->n ? bsearch(p, pk->f, pk->n, sizeof *pk->f, file_cmp) : NULL;

		if (!f)
			pk_fail(pk, PACK_EXIT_LIKE, p, "in %s, not in the folder", orig);
		else if (used[f - pk->f])
			pk_fail(pk, PACK_EXIT_LIKE, p, "twice in %s", orig);
		else
			used[f - pk->f] = true, v[i] = *f;
	}
	for (size_t j = 0; !pk->code && j < pk->n; j++) {
		char line[PATH_MAX + 64];

		if (used[j])
			continue;
		if (!skip_added || !pk->f[j].over) {
			pk_fail(pk, PACK_EXIT_LIKE, pk->f[j].path, "not in %s", orig);
			break;
		}
		put_escaped(line, sizeof line, pk->f[j].path);
		fprintf(stderr, "psgfs-tool: pack: %s: not in %s, skipped (--skip-added)\n", line,
			orig);
	}
	if (pk->code) {
		free(used);
		free(v);
		return 0;
	}
	for (size_t j = 0; j < pk->n; j++) {
		if (!used[j]) {
			free(pk->f[j].path);
			free(pk->f[j].folder);
		}
	}
	free(used);
	free(pk->f);
	pk->f = v;
	pk->n = l->a.n;
	pk->cap = pk->n;
	return 0;
}

/* n bytes of from at off to to at at: in the kernel (copy_file_range) when it can, else through
 * tmp (ARC_PIECE_MAX bytes). */
static enum rc copy_bytes(int from, uint64_t off, int to, uint64_t at, uint64_t n, uint8_t *tmp)
{
	bool kernel = true;

	while (n) {
		size_t k = n < ARC_PIECE_MAX ? (size_t)n : ARC_PIECE_MAX;
		struct gen_sink s;
		struct src src;
		int fd = to;

		if (kernel) {
			off_t i = (off_t)off, o = (off_t)at;
			ssize_t c = copy_file_range(from, &i, to, &o, k, 0);

			if (c > 0) {
				off += (uint64_t)c, at += (uint64_t)c, n -= (uint64_t)c;
				continue;
			}
			if (c < 0 && errno == EINTR)
				continue;
			if (c < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
			    errno != EOPNOTSUPP && errno != EBADF)
				return RC_IO;
			kernel = false; /* 0: ORIG shorter than it was; the read below says so */
		}
		src_init_fd(&src, &from, off + k);
		if (src_read(&src, off, tmp, k) != RC_OK)
			return RC_IO;
		gen_sink_fd(&s, &fd);
		if (s.write_at(s.ctx, at, tmp, k) != RC_OK)
			return RC_IO;
		off += k, at += k, n -= k;
	}
	return RC_OK;
}

struct like_ix {
	uint64_t off;
	uint32_t i;
};

static int like_ix_cmp(const void *a, const void *b)
{
	const struct like_ix *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The whole file in memory, read through pk_fill (hashed, identity checked). */
static uint8_t *like_read(struct pk *pk, struct pk_file *f)
{
	uint64_t len = (uint64_t)f->st.st_size;
	uint8_t *b = malloc(len ? (size_t)len : 1);

	if (!b) {
		pk_fail(pk, PACK_EXIT_INTERNAL, f->path, "out of memory");
		return NULL;
	}
	if (len)
		pk_fill(f, 0, b, (size_t)len);
	pk_close_cur(pk);
	if (pk->code) {
		free(b);
		return NULL;
	}
	return b;
}

/* Whether DIR's file holds ORIG's entry i (decoded and compared by SHA-256). */
static bool like_same(struct pk_like *l, uint32_t i, const struct pk_file *f, uint8_t *piece)
{
	struct sha256 want = f->sha, got;
	char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1];

	if (l->a.e[i].size != (uint64_t)f->st.st_size ||
	    entry_sha(&l->s, &l->a, i, piece, &got) != RC_OK)
		return false;
	sha256_hex(&want, a);
	sha256_hex(&got, b);
	return !strcmp(a, b);
}

/* The method a changed entry is written with: ORIG's (a chunked one as chunkref: RefPack or
 * stored chunks, the chunk methods both readers share). BIGF/BIG4 have no method field: the
 * bytes decide, so a stored file that starts like a RefPack stream is written as one. */
static uint8_t like_method(const struct pk_like *l, const struct arc_entry *e, const uint8_t *d,
			   uint64_t len)
{
	uint8_t m = e->table_method;
	uint64_t size;
	size_t hl;

	if (!len)
		return GB_STORED;
	if (!l->eb)
		return m == 1 || rp_header(d, len < 16 ? (size_t)len : 16, &size, &hl) ? GB_REFPACK
										       : GB_STORED;
	return m == 0 ? GB_STORED : m == 1 ? GB_REFPACK : GB_CHUNK_REFPACK;
}

/* Entry i's record: placed at at with stored bytes (changed: its unpacked size and method). */
static void like_record(struct pk_like *l, uint32_t i, uint64_t at, uint64_t stored, bool changed,
			uint64_t len, uint8_t method)
{
	if (!l->eb) {
		uint8_t *rec = l->head + l->dir[i];

		wr_be(rec, at, 4);
		wr_be(rec + 4, stored, 4);
		return;
	}
	uint8_t *rec = l->head + 0x30 + (size_t)i * l->rec;

	wr_be(rec, at >> l->shift, 4);
	if (changed) {
		bool as_is = method == GB_STORED && !rd_be(rec + 4, 4);

		wr_be(rec + 4, as_is ? 0 : stored, 4);
		wr_be(rec + 8, len, 4);
		l->head[0x30 + ((size_t)l->a.n * l->rec + 15) / 16 * 16 + i] = method;
	}
}

/* One entry: copied as stored when it is ORIG's (no DIR: not decoded at all; DIR's file:
 * when it decodes to the same bytes), else packed with ORIG's method. *cursor: the end of
 * what is placed. */
static void like_entry(struct pk *pk, struct pk_like *l, uint32_t i, int fd, uint8_t *piece,
		       uint64_t *cursor, bool *moved)
{
	struct pk_file *f = &pk->f[i];
	const struct arc_entry *e = &l->a.e[i];
	uint8_t *data = f->virt ? NULL : like_read(pk, f), method = 0;
	uint64_t at, stored = 0, lim = l->eb ? (uint64_t)UINT32_MAX << l->shift : UINT32_MAX;
	bool same;
	enum rc r;

	if (!f->virt && !data)
		return;
	same = f->virt || like_same(l, i, f, piece);
	/* an unchanged entry keeps its place while nothing before it grew (an empty one until
	 * something moved: its offset may be ORIG's end, past a shorter archive's) */
	at = same && (e->stored ? e->off >= *cursor : !*moved)
		 ? e->off
		 : (*cursor + l->align - 1) / l->align * l->align;
	if (same) {
		stored = e->stored;
		f->copied = true;
		f->orig = *e;
		r = RC_OK;
		if (!*moved && at == e->off && stored && *cursor < at) /* ORIG's gap bytes too */
			r = copy_bytes(l->fd, *cursor, fd, *cursor, at - *cursor, piece);
		if (r == RC_OK)
			r = copy_bytes(l->fd, e->off, fd, at, stored, piece);
	} else {
		struct gen_big_entry ge = {.data = data,
					   .len = (uint64_t)f->st.st_size,
					   .style = GB_STYLE_RW4,
					   .chunk_align = 16};
		struct gen_sink s;
		int wfd = fd;

		method = like_method(l, e, data, ge.len);
		ge.method = method;
		gen_sink_fd(&s, &wfd);
		r = gen_big_write_entry(&ge, &s, at, &stored);
	}
	free(data);
	if (r == RC_IO)
		pk_fail(pk, PACK_EXIT_WRITE, pk->out, "cannot write (at %s): %s", f->path,
			strerror(errno));
	else if (r != RC_OK)
		pk_fail(pk, PACK_EXIT_INTERNAL, f->path, "cannot write: %s", rc_str(r));
	else if (stored > UINT32_MAX || at > lim || (!l->eb && at + stored > UINT32_MAX))
		pk_fail(pk, PACK_EXIT_LIMIT, f->path, "beyond the format (past 4 GiB%s)",
			l->eb ? " << shift" : "");
	else
		like_record(l, i, at, stored, !same, (uint64_t)f->st.st_size, method);
	*moved |= !same || at != e->off;
	if (stored && at + stored > *cursor) /* an empty entry's offset may be the end */
		*cursor = at + stored;
}

static void like_write(struct pk *pk, struct pk_like *l, int fd, const char *out)
{
	struct like_ix *ix = calloc(l->a.n ? l->a.n : 1, sizeof *ix);
	uint8_t *piece = malloc(ARC_PIECE_MAX);
	uint64_t cursor = l->head_len, end;
	bool moved = false;
	struct gen_sink s;
	int wfd = fd;

	if (!ix || !piece) {
		pk_fail(pk, PACK_EXIT_INTERNAL, out, "out of memory");
		goto done;
	}
	for (uint32_t i = 0; i < l->a.n; i++)
		ix[i] = (struct like_ix){l->a.e[i].off, i};
	qsort(ix, l->a.n, sizeof *ix, like_ix_cmp);
	for (uint32_t k = 0; !pk->code && k < l->a.n; k++)
		like_entry(pk, l, ix[k].i, fd, piece, &cursor, &moved);
	if (pk->code)
		goto done;
	gen_sink_fd(&s, &wfd);
	if (!moved && cursor < l->size) { /* unchanged: ORIG's tail (padding, footer) too */
		if (copy_bytes(l->fd, cursor, fd, cursor, l->size - cursor, piece) != RC_OK)
			pk_fail(pk, PACK_EXIT_WRITE, out, "cannot write: %s", strerror(errno));
		end = l->size;
	} else {
		uint8_t z = 0;

		end = moved ? (cursor + l->align - 1) / l->align * l->align : cursor;
		if (end > cursor && s.write_at(s.ctx, end - 1, &z, 1) != RC_OK)
			pk_fail(pk, PACK_EXIT_WRITE, out, "cannot write: %s", strerror(errno));
		if (moved && l->eb)
			wr_be(l->head + 0x18, end, 8);
		/* BIGF/BIG4: the archive size (little-endian) when ORIG's was its size */
		if (moved && !l->eb && l->head_len >= 8 && end <= UINT32_MAX &&
		    (l->head[4] | l->head[5] << 8 | l->head[6] << 16 |
		     (uint64_t)l->head[7] << 24) == l->size)
			for (int k = 0; k < 4; k++)
				l->head[4 + k] = (uint8_t)(end >> (8 * k));
	}
	if (!pk->code && s.write_at(s.ctx, 0, l->head, l->head_len) != RC_OK)
		pk_fail(pk, PACK_EXIT_WRITE, out, "cannot write: %s", strerror(errno));
done:
	free(ix);
	free(piece);
}

/* Every file once more: the same file as at the walk (catches a change after its read). */
static void pk_recheck(struct pk *pk)
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

/* Tests only: flip the byte back bytes before the end, so the read back must fail. */
static void pk_corrupt(int fd, uint64_t back)
{
	struct stat st;
	uint8_t b;

	if (fstat(fd, &st) != 0 || back == 0 || back > (uint64_t)st.st_size)
		return;
	if (pread(fd, &b, 1, st.st_size - (off_t)back) == 1) {
		b ^= 0xFF;
		(void)!pwrite(fd, &b, 1, st.st_size - (off_t)back);
	}
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
static int pk_temp(const char *out, char **tmp)
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
static int pk_sync_folder(const char *out)
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

static int pk_finish(struct pk *pk, const struct pk_opts *o)
{
	struct pk_like l = {.fd = -1};
	char *tmp = NULL;
	int fd;

	if (o->like) { /* ORIG's hashes, order and tables */
		if (like_open(pk, o->like, &l) == 0 && !o->dir)
			like_virtual(pk, &l);
		if (!pk->code && like_match(pk, &l, o->like, o->skip_added) != 0)
			pk_fail(pk, PACK_EXIT_INTERNAL, o->like, "out of memory");
	} else if (pk_check_hashes(pk, o) != 0) {
		pk_fail(pk, PACK_EXIT_INTERNAL, o->out, "out of memory");
	}
	if (pk->code) {
		like_close(&l);
		return pk->code;
	}
	fd = pk_temp(o->out, &tmp);
	if (fd < 0) {
		pk_fail(pk, PACK_EXIT_WRITE, o->out, "cannot create a temporary file beside it: %s",
			strerror(errno));
		like_close(&l);
		free(tmp);
		return pk->code;
	}
	pk->orig_fd = l.fd;
	if (o->like && pk->hook && !strcmp(pk->hook, o->like)) { /* tests: ORIG changes */
		int w = open(o->like, O_WRONLY | O_APPEND | O_CLOEXEC);

		if (w >= 0) {
			(void)!write(w, "!", 1);
			close(w);
		}
	}
	if (o->like)
		like_write(pk, &l, fd, o->out);
	else if (pk_write(pk, o, fd) != 0)
		pk_fail(pk, PACK_EXIT_INTERNAL, o->out, "out of memory");
	if (!pk->code)
		pk_recheck(pk);
	if (!pk->code && fsync(fd) != 0)
		pk_fail(pk, PACK_EXIT_WRITE, o->out, "cannot write: %s", strerror(errno));
	if (!pk->code && pk->corrupt)
		pk_corrupt(fd, strtoull(pk->corrupt, NULL, 10));
	if (!pk->code)
		pk_verify(pk, fd, o->out);
	if (!pk->code && o->like) { /* ORIG too is a source: the same file from start to end */
		struct stat a, b;

		if (fstat(l.fd, &a) != 0 || stat(o->like, &b) != 0 || !same_file(&a, &l.st) ||
		    !same_file(&b, &l.st))
			pk_fail(pk, PACK_EXIT_CHANGED, o->like, "changed while it was packed");
	}
	like_close(&l);
	if (!pk->code && rename(tmp, o->out) != 0)
		pk_fail(pk, PACK_EXIT_WRITE, o->out, "cannot rename into place: %s",
			strerror(errno));
	else if (!pk->code && pk_sync_folder(o->out) != 0)
		pk->renamed = true, pk_fail(pk, PACK_EXIT_WRITE, o->out,
					    "in place, but its folder cannot be synced "
					    "(the rename may not survive a crash): %s",
					    strerror(errno));
	close(fd);
	if (pk->code && !pk->renamed)
		unlink(tmp);
	free(tmp);
	return pk->code;
}

/* Walk a folder into pk->f; returns its descriptor (kept: files are opened relative to it). */
static int pk_walk_root(struct pk *pk, const char *dir, bool over)
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
static void pk_merge(struct pk *pk)
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

int pack_main(int argc, char **argv)
{
	struct pk_opts o = {0};
	struct pk pk = {.root = -1, .root2 = -1, .cur_fd = -1};
	int rc = pk_parse(&o, argc, argv);

	if (rc >= 0)
		return rc;
	pk.out = o.out;
	pk.hook = getenv("PSGFS_PACK_TEST_CHANGE");
	pk.corrupt = getenv("PSGFS_PACK_TEST_CORRUPT");
	if (o.dir)
		pk.root = pk_walk_root(&pk, o.dir, false);
	if (o.overlay && !pk.code)
		pk.root2 = pk_walk_root(&pk, o.overlay, true);
	if (!pk.code && pk.n > UINT32_MAX)
		pk_fail(&pk, PACK_EXIT_LIMIT, o.out, "more than 4294967295 files");
	if (!pk.code)
		pk_merge(&pk);
	rc = pk.code ? pk.code : pk_finish(&pk, &o);
	if (pk.cur)
		close(pk.cur_fd);
	if (rc)
		fprintf(stderr, "psgfs-tool: pack: %s\n", pk.msg);
	else
		printf("%s: %zu entries\n", o.out, pk.n);
	for (size_t i = 0; i < pk.n; i++) {
		free(pk.f[i].path);
		free(pk.f[i].folder);
	}
	free(pk.f);
	if (pk.root >= 0)
		close(pk.root);
	if (pk.root2 >= 0)
		close(pk.root2);
	return rc;
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

bool pack_same_file(const struct stat *a, const struct stat *b)
{
	return same_file(a, b);
}

int pack_temp_file(const char *out, char **tmp)
{
	return pk_temp(out, tmp);
}
