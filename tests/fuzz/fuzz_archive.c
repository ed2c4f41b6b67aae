/*
 * Archive harness (docs/archives.md): the input as an EA archive (EB v3, BIGF/BIG4: open,
 * index and decode every entry within a budget), as a bare RefPack stream (whole-buffer and
 * resumable decoding must agree byte for byte), and as the body of a chunked entry (wrapped
 * in a one-entry EB archive); an SFIL stream collection followed by its ATOC table is opened
 * with and without the table (docs/streams.md). Invariants broken abort, so libFuzzer reports them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/refpack.h"

#define FA_PIECES_MAX 256	  /* pieces decoded per input */
#define FA_BYTES_MAX  (16u << 20) /* claimed bytes decoded per input */

static void fa_fail(const char *what)
{
	fprintf(stderr, "fuzz_archive: %s\n", what);
	abort();
}

/* Index entry i and decode its pieces while the budget lasts; check the piece layout. */
static void fa_entry(const struct src *s, const struct arc *a, uint32_t i, unsigned *pieces,
		     uint64_t *bytes)
{
	struct arc_index *ix;
	struct diag d;
	uint64_t total = 0;

	diag_init(&d);
	if (arc_index_build(s, a, i, &ix, &d) != RC_OK) {
		diag_free(&d);
		return;
	}
	for (uint64_t k = 0; k < arc_piece_count(ix); k++) {
		uint64_t off, len;
		uint8_t *buf;
		size_t got = 0;
		enum rc r;

		arc_piece_span(ix, k, &off, &len);
		if (off != total || len == 0 || len > ARC_PIECE_MAX || arc_piece_at(ix, off) != k ||
		    arc_piece_at(ix, off + len - 1) != k)
			fa_fail("pieces do not tile the entry");
		total += len;
		if (*pieces >= FA_PIECES_MAX || *bytes + len > FA_BYTES_MAX)
			continue;
		++*pieces;
		*bytes += len;
		buf = malloc((size_t)len);
		if (!buf)
			continue;
		r = arc_piece(s, ix, k, buf, &got, NULL);
		if (got > len || (r == RC_OK && got != len))
			fa_fail("a piece decoded to the wrong length");
		free(buf);
	}
	if (total != a->e[i].size)
		fa_fail("pieces do not add up to the entry's size");
	arc_index_free(ix);
	diag_free(&d);
}

/* p as an archive; for an SFIL collection, t (tn bytes, may be NULL) as its ATOC table. */
static void fa_archive_toc(const uint8_t *p, size_t n, const uint8_t *t, size_t tn)
{
	struct src s, ts;
	struct src_mem m, tm;
	struct arc a;
	struct diag d;
	unsigned pieces = 0;
	uint64_t bytes = 0;

	src_init_mem(&s, &m, p, n);
	src_init_mem(&ts, &tm, t, t ? tn : 0);
	diag_init(&d);
	if (arc_open(&s, t ? &ts : NULL, &a, &d) == RC_OK) {
		for (uint32_t i = 0; i < a.n; i++)
			if (a.e[i].path >= a.paths_len || a.paths[a.paths_len - 1] != 0)
				fa_fail("a path outside the paths buffer");
		for (uint32_t i = 0; i < a.n && i < 64; i++)
			fa_entry(&s, &a, i, &pieces, &bytes);
		arc_free(&a);
	}
	diag_free(&d);
}

static void fa_archive(const uint8_t *p, size_t n)
{
	fa_archive_toc(p, n, NULL, 0);
}

/* An SFIL collection followed by its ATOC table (docs/streams.md): split at the last "ATOC"
 * and open the collection with it, then without it. */
static void fa_stream(const uint8_t *p, size_t n)
{
	for (size_t k = n >= 4 ? n - 4 : 0; k > 0; k--)
		if (!memcmp(p + k, "ATOC", 4)) {
			fa_archive_toc(p, k, p + k, n - k);
			fa_archive(p, k);
			return;
		}
	fa_archive(p, n);
}

/* Whole-buffer decoding against resumable decoding in odd-sized steps. */
static void fa_refpack(const uint8_t *p, size_t n)
{
	enum { CAP = 1u << 20, STEP = 777 };
	uint8_t *a = malloc(CAP), *b = malloc(CAP), *buf = malloc(RP_WINDOW + STEP);
	struct rp_state st;
	uint64_t claimed;
	size_t got = 0, o = 0, pos = 0;
	enum rc ra, rb = RC_OK;

	if (!a || !b || !buf || !rp_start(&st, p, n, &claimed))
		goto out;
	ra = rp_decode(p, n, a, CAP, &got);
	while (o < CAP && !rp_finished(&st)) {
		size_t end, want = 4 + o % 113, left = n - (size_t)st.in, avail, cap;

		if (pos == RP_WINDOW + STEP) {
			memmove(buf, buf + STEP, RP_WINDOW);
			pos = RP_WINDOW;
		}
		avail = left < want ? left : want;
		cap = pos + (CAP - o < RP_WINDOW + STEP - pos ? CAP - o : RP_WINDOW + STEP - pos);
		rb = rp_run(&st, p + st.in, avail, buf, pos, cap, &end);
		memcpy(b + o, buf + pos, end - pos);
		o += end - pos;
		if (rb == RC_TRUNCATED && avail == left && end == pos)
			break; /* all the input was given and nothing came of it */
		pos = end;
		if (rb != RC_OK && rb != RC_TRUNCATED)
			break;
	}
	if (o != got || memcmp(a, b, got))
		fa_fail("resumable RefPack decoding differs from the whole-buffer decode");
	if ((ra == RC_CORRUPT) != (rb == RC_CORRUPT))
		fa_fail("resumable and whole-buffer RefPack decoding disagree on the outcome");
out:
	free(a);
	free(b);
	free(buf);
}

/* The input as the body of one chunked entry: header, record, compression byte, name. */
static void fa_chunked(const uint8_t *p, size_t n)
{
	size_t at = 0x70;
	uint8_t *w = calloc(1, at + n);
	uint32_t size = n >= 16 ? ld_u32be(p + 12) : 0;

	if (!w)
		return;
	memcpy(w, "EB\0\3", 4);
	w[7] = 1;
	w[15] = 0x50;
	w[19] = 0x20;
	w[20] = 16;
	w[21] = 16;
	w[23] = 1;
	w[0x33] = (uint8_t)at;
	for (int k = 0; k < 4; k++) {
		w[0x34 + k] = (uint8_t)(n >> (24 - 8 * k));
		w[0x38 + k] = (uint8_t)(size >> (24 - 8 * k));
	}
	w[0x40] = 2;
	memcpy(w + 0x52, "c", 1);
	memcpy(w + at, p, n);
	fa_archive(w, at + n);
	free(w);
}

int fuzz_one_archive(const uint8_t *p, size_t n)
{
	uint64_t claimed;
	size_t hl;

	if (n >= 4 && !memcmp(p, "SFIL", 4))
		fa_stream(p, n);
	else
		fa_archive(p, n);
	if (rp_header(p, n, &claimed, &hl))
		fa_refpack(p, n);
	if (n >= 8 && !memcmp(p, "chunk", 5))
		fa_chunked(p, n);
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	return fuzz_one_archive(p, n);
}
#endif
