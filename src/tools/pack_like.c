/*
 * psgfs-tool pack: --like ORIG.big: ORIG's header, tables and unchanged entries reused (pack.c,
 * pack_int.h).
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

/* ---- --like ORIG.big ---- */

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

void pk_like_close(struct pk_like *l)
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
int pk_like_open(struct pk *pk, const char *path, struct pk_like *l)
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
void pk_like_virtual(struct pk *pk, const struct pk_like *l)
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
		qsort(pk->f, pk->n, sizeof *pk->f, pk_path_sort);
}

/* pk->f in ORIG's table order: DIR must hold exactly ORIG's paths. */
int pk_like_match(struct pk *pk, const struct pk_like *l, const char *orig, bool skip_added)
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
		pk_put_escaped(line, sizeof line, pk->f[j].path);
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
	    pk_entry_sha(&l->s, &l->a, i, piece, &got) != RC_OK)
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

void pk_like_write(struct pk *pk, struct pk_like *l, int fd, const char *out)
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
