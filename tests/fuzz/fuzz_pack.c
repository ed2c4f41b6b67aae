/*
 * pack --like harness (docs/archives.md "Writing archives"): the input is an original archive
 * handed to `psgfs-tool pack --like ORIG [--overlay DIR2] OUT` in a temporary folder, DIR2 (when
 * the input's last byte is odd) replacing one of ORIG's entries with bytes of the input. The
 * writer must refuse what it cannot reproduce (exit 3, 6, 9, 10, 12 or 13; OUT absent, no
 * temporary left), and an archive it writes must read through psgfs's reader without a diag
 * line, with ORIG's kind, paths and order, the overlay's bytes in the replaced entry and every
 * other entry decoding exactly as ORIG's does (the same bytes, or the same failure). Exit 1
 * (internal) or 11 (the read back failed: the writer wrote something wrong) abort too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "psgfs/base/sha256.h"
#include "psgfs/formats/archive.h"
#include "tools/pack.h"

#define FP_PIECES_MAX 32 /* pieces decoded per entry before the comparison is skipped */
#define FP_OVER_MAX   512

static char fp_dir[64];

static void fp_fail(const char *what, const char *path)
{
	fprintf(stderr, "fuzz_pack: %s%s%s\n", what, path ? ": " : "", path ? path : "");
	abort();
}

static int fp_write(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t done = 0;

	while (fd >= 0 && done < n) {
		ssize_t k = write(fd, p + done, n - done);

		if (k <= 0)
			break;
		done += (size_t)k;
	}
	if (fd >= 0)
		close(fd);
	return fd >= 0 && done == n ? 0 : -1;
}

/* rm -r of the overlay (folders the harness made itself: no links in it) */
static void fp_rmtree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char sub[4096];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			fp_rmtree(sub);
		else
			unlink(sub);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

/* Entry i decoded: its status and the SHA-256 of what it gave; 1 when too long to compare. */
static int fp_decode(const struct src *s, const struct arc *a, uint32_t i, enum rc *rc,
		     char hex[SHA256_HEX_LEN + 1])
{
	struct arc_index *ix = NULL;
	struct sha256 sha;
	struct diag d;
	uint8_t *piece = NULL;

	diag_init(&d);
	sha256_init(&sha);
	*rc = arc_index_build(s, a, i, &ix, &d);
	if (*rc == RC_OK && arc_piece_count(ix) > FP_PIECES_MAX) {
		arc_index_free(ix);
		diag_free(&d);
		return 1;
	}
	piece = *rc == RC_OK ? malloc(ARC_PIECE_MAX) : NULL;
	for (uint64_t k = 0; *rc == RC_OK && piece && k < arc_piece_count(ix); k++) {
		size_t got = 0;

		*rc = arc_piece(s, ix, k, piece, &got, NULL);
		sha256_update(&sha, piece, got);
	}
	free(piece);
	arc_index_free(ix);
	diag_free(&d);
	sha256_hex(&sha, hex);
	return 0;
}

struct fp_arc {
	int fd;
	struct src s;
	struct arc a;
	bool open;
};

static bool fp_open(const char *path, struct fp_arc *x, bool clean)
{
	struct stat st;
	struct diag d;

	x->open = false;
	x->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (x->fd < 0 || fstat(x->fd, &st) != 0)
		return false;
	src_init_fd(&x->s, &x->fd, (uint64_t)st.st_size);
	diag_init(&d);
	x->open = arc_open(&x->s, NULL, &x->a, &d) == RC_OK;
	if (clean && x->open && d.n)
		fp_fail("the written archive reads with a diag line", d.msg[0]);
	diag_free(&d);
	return x->open;
}

static void fp_close(struct fp_arc *x)
{
	if (x->open)
		arc_free(&x->a);
	if (x->fd >= 0)
		close(x->fd);
}

/* OUT against ORIG (and the overlaid entry against its bytes). */
static void fp_check(const char *orig, const char *out, long over, const uint8_t *ov, size_t on)
{
	struct fp_arc o = {.fd = -1}, w = {.fd = -1};

	if (!fp_open(orig, &o, false))
		fp_fail("packed an original psgfs cannot open", orig);
	if (!fp_open(out, &w, true))
		fp_fail("the written archive does not open", out);
	if (w.a.kind != o.a.kind || w.a.n != o.a.n)
		fp_fail("the written archive has another kind or entry count", out);
	for (uint32_t i = 0; i < o.a.n; i++) {
		char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1];
		enum rc ra, rb;

		if (strcmp(o.a.paths + o.a.e[i].path, w.a.paths + w.a.e[i].path))
			fp_fail("an entry's path or place changed", w.a.paths + w.a.e[i].path);
		if ((long)i == over) {
			struct sha256 sha;

			sha256_init(&sha);
			sha256_update(&sha, ov, on);
			sha256_hex(&sha, a);
			if (w.a.e[i].size != on || fp_decode(&w.s, &w.a, i, &rb, b) ||
			    rb != RC_OK || strcmp(a, b))
				fp_fail("the overlaid entry does not read as the overlay", out);
			continue;
		}
		if (fp_decode(&o.s, &o.a, i, &ra, a) || fp_decode(&w.s, &w.a, i, &rb, b))
			continue; /* too long for the budget */
		if (w.a.e[i].size != o.a.e[i].size || ra != rb || strcmp(a, b))
			fp_fail("an entry reads differently from the original's",
				w.a.paths + w.a.e[i].path);
	}
	fp_close(&o);
	fp_close(&w);
}

/* An overlay file replacing entry k (its path made in fp_dir/ov); -1 when none is made. */
static long fp_overlay(const char *orig, const uint8_t *p, size_t n, uint8_t *ov, size_t *on)
{
	struct fp_arc o = {.fd = -1};
	char path[4096], why[128];
	const char *rel;
	long k = -1;

	if (n < 2 || !(p[n - 1] & 1) || !fp_open(orig, &o, false) || !o.a.n) {
		fp_close(&o);
		return -1;
	}
	k = p[n - 2] % o.a.n;
	rel = o.a.paths + o.a.e[k].path;
	if (!pack_path_ok(rel, why, sizeof why) ||
	    snprintf(path, sizeof path, "%s/ov/%s", fp_dir, rel) >= (int)sizeof path) {
		fp_close(&o);
		return -1;
	}
	for (char *c = path + strlen(fp_dir) + 1; *c; c++) { /* the folders on the way */
		if (*c != '/')
			continue;
		*c = 0;
		mkdir(path, 0755);
		*c = '/';
	}
	*on = n < FP_OVER_MAX ? n : FP_OVER_MAX;
	for (size_t i = 0; i < *on; i++)
		ov[i] = p[n - 1 - i];
	if (fp_write(path, ov, *on) != 0)
		k = -1;
	fp_close(&o);
	return k;
}

static void fp_cleanup(void)
{
	char path[128];

	snprintf(path, sizeof path, "%s/ov", fp_dir);
	fp_rmtree(path);
	snprintf(path, sizeof path, "%s/orig.big", fp_dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/out.big", fp_dir);
	unlink(path);
	rmdir(fp_dir);
}

static bool fp_temp_left(void)
{
	DIR *d = opendir(fp_dir);
	struct dirent *de;
	bool left = false;

	while (d && (de = readdir(d)))
		left |= !strncmp(de->d_name, ".out.big.psgfs-pack-", 20);
	if (d)
		closedir(d);
	return left;
}

int fuzz_one_pack(const uint8_t *p, size_t n)
{
	char orig[128], out[128], ov_dir[128];
	uint8_t ov[FP_OVER_MAX];
	size_t on = 0;
	long over;
	int rc, err;

	if (!fp_dir[0]) {
		snprintf(fp_dir, sizeof fp_dir, "/tmp/psgfs-fuzz-pack.XXXXXX");
		if (!mkdtemp(fp_dir))
			fp_fail("cannot make a temporary folder", strerror(errno));
		atexit(fp_cleanup);
	}
	snprintf(orig, sizeof orig, "%s/orig.big", fp_dir);
	snprintf(out, sizeof out, "%s/out.big", fp_dir);
	snprintf(ov_dir, sizeof ov_dir, "%s/ov", fp_dir);
	fp_rmtree(ov_dir);
	unlink(out);
	if (fp_write(orig, p, n) != 0 || mkdir(ov_dir, 0755) != 0)
		fp_fail("cannot write the input", fp_dir);
	over = fp_overlay(orig, p, n, ov, &on);
	{
		char *argv[] = {"pack", "--like", orig, "--overlay", ov_dir, out, NULL};
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC), o1 = dup(1), o2 = dup(2);

		fflush(stdout);
		fflush(stderr);
		dup2(null, 1);
		dup2(null, 2);
		rc = pack_main(6, argv);
		fflush(stdout);
		fflush(stderr);
		dup2(o1, 1);
		dup2(o2, 2);
		close(o1);
		close(o2);
		close(null);
	}
	err = access(out, F_OK);
	if (fp_temp_left())
		fp_fail("a temporary file was left", fp_dir);
	if (rc == 0) {
		if (err != 0)
			fp_fail("pack succeeded but wrote nothing", out);
		fp_check(orig, out, over, ov, on);
	} else if (rc == 1 || rc == 11 || rc == 2) {
		char why[64];

		snprintf(why, sizeof why, "pack failed with exit %d", rc);
		fp_fail(why, "an internal error or a written archive that does not read back");
	} else if (err == 0) {
		fp_fail("a refused pack left OUT", out);
	}
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	return fuzz_one_pack(p, n);
}
#endif
