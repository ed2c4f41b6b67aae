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

#include "pack_int.h"

/* ---- reading the archive back ---- */

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
	r = pk_entry_sha(s, a, i, piece, &sha);
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

/* The operands and the options together: 0, or PACK_EXIT_USAGE after a message. */
static int pk_check_opts(const struct pk_opts *o, int nargs)
{
	if (nargs != 2 && !(o->like && nargs == 1)) {
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
	return 0;
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
	if (pk_check_opts(o, argc - optind))
		return PACK_EXIT_USAGE;
	o->dir = argc - optind == 2 ? argv[optind] : NULL;
	o->out = argv[argc - 1];
	return -1;
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

/* The entries' order and what each is: ORIG's (--like), or the walk's with its hashes checked. */
static void pk_plan(struct pk *pk, const struct pk_opts *o, struct pk_like *l)
{
	if (o->like) { /* ORIG's hashes, order and tables */
		if (pk_like_open(pk, o->like, l) == 0 && !o->dir)
			pk_like_virtual(pk, l);
		if (!pk->code && pk_like_match(pk, l, o->like, o->skip_added) != 0)
			pk_fail(pk, PACK_EXIT_INTERNAL, o->like, "out of memory");
	} else if (pk_check_hashes(pk, o) != 0) {
		pk_fail(pk, PACK_EXIT_INTERNAL, o->out, "out of memory");
	}
}

/* The archive written to fd, then every check before the rename: the sources unchanged, the
 * bytes on disk, the read back, ORIG unchanged. */
static void pk_write_checked(struct pk *pk, const struct pk_opts *o, struct pk_like *l, int fd)
{
	if (o->like)
		pk_like_write(pk, l, fd, o->out);
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

		if (fstat(l->fd, &a) != 0 || stat(o->like, &b) != 0 ||
		    !pack_same_file(&a, &l->st) || !pack_same_file(&b, &l->st))
			pk_fail(pk, PACK_EXIT_CHANGED, o->like, "changed while it was packed");
	}
}

static int pk_finish(struct pk *pk, const struct pk_opts *o)
{
	struct pk_like l = {.fd = -1};
	char *tmp = NULL;
	int fd;

	pk_plan(pk, o, &l);
	if (pk->code) {
		pk_like_close(&l);
		return pk->code;
	}
	fd = pk_temp(o->out, &tmp);
	if (fd < 0) {
		pk_fail(pk, PACK_EXIT_WRITE, o->out, "cannot create a temporary file beside it: %s",
			strerror(errno));
		pk_like_close(&l);
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
	pk_write_checked(pk, o, &l, fd);
	pk_like_close(&l);
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
