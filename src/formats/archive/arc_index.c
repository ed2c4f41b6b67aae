/* Entry indexes: segments, restart points, pieces, and decoding a piece (docs/archives.md). */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/archive/archive_int.h"
#include "formats/archive/lzx.h"
#include "formats/archive/sfil.h"
#include "psgfs/base/bytes.h"

#define IN_BLOCK     (256u << 10) /* input read per refill */
#define WORK	     (1u << 20)	  /* output decoded per RefPack step, after the window */
#define CHUNK_HDR    28u
#define SMALL_STREAM (1u << 20) /* RefPack streams read whole for one decode */

/* ---- index construction (the segment list: arc_seg.c) ---- */

void arc_index_free(struct arc_index *ix)
{
	if (!ix)
		return;
	for (uint32_t i = 0; i < ix->nrs; i++)
		free(ix->rs[i].win);
	free(ix->rs);
	free(ix->seg);
	free(ix);
}

uint64_t arc_index_bytes(const struct arc_index *ix)
{
	return ix ? ix->bytes : 0;
}

uint64_t arc_piece_count(const struct arc_index *ix)
{
	return ix->npieces;
}

uint64_t arc_index_decodes(const struct arc_index *ix)
{
	return atomic_load(&((struct arc_index *)ix)->decodes);
}

uint64_t arc_index_overruns(const struct arc_index *ix)
{
	return atomic_load(&((struct arc_index *)ix)->overruns);
}

uint64_t arc_index_decoded(const struct arc_index *ix)
{
	return atomic_load(&((struct arc_index *)ix)->decoded);
}

static void count_decoded(const struct arc_index *ix, uint64_t n)
{
	atomic_fetch_add_explicit(&((struct arc_index *)ix)->decoded, n, memory_order_relaxed);
}

static uint64_t seg_pieces(const struct arcx_seg *g)
{
	return (g->s.out_len + ARC_PIECE_MAX - 1) / ARC_PIECE_MAX;
}

/* The segment holding piece k (binary search over piece0). */
static const struct arcx_seg *seg_of_piece(const struct arc_index *ix, uint64_t k)
{
	uint32_t lo = 0, hi = ix->nseg;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ix->seg[mid].piece0 <= k)
			lo = mid;
		else
			hi = mid;
	}
	return &ix->seg[lo];
}

void arc_piece_span(const struct arc_index *ix, uint64_t k, uint64_t *off, uint64_t *len)
{
	const struct arcx_seg *g;
	uint64_t po;

	*off = ix->size;
	*len = 0;
	if (k >= ix->npieces)
		return;
	g = seg_of_piece(ix, k);
	po = (k - g->piece0) * ARC_PIECE_MAX;
	*off = g->s.out_off + po;
	*len = g->s.out_len - po < ARC_PIECE_MAX ? g->s.out_len - po : ARC_PIECE_MAX;
}

uint64_t arc_piece_at(const struct arc_index *ix, uint64_t off)
{
	uint32_t lo = 0, hi = ix->nseg;

	if (ix->nseg == 0 || off >= ix->size)
		return ix->npieces;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ix->seg[mid].s.out_off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return ix->seg[lo].piece0 + (off - ix->seg[lo].s.out_off) / ARC_PIECE_MAX;
}

bool arc_piece_seg(const struct arc_index *ix, uint64_t k, struct arc_seg *out)
{
	if (k >= ix->npieces)
		return false;
	*out = seg_of_piece(ix, k)->s;
	return true;
}

/* ---- RefPack walking: a decoder over the archive with bounded buffers ---- */

struct rp_walk {
	const struct src *s;
	uint64_t in_off, in_len; /* the stream in the archive */
	struct rp_state st;
	uint8_t *buf; /* RP_WINDOW of history + WORK */
	size_t pos;
	uint8_t *in;
	uint64_t in_base; /* stream position of in[0] */
	size_t in_n;
};

static void walk_free(struct rp_walk *w)
{
	free(w->buf);
	free(w->in);
}

/* Start at restart point rs (NULL: the stream's start, header read from the archive). */
static enum rc walk_init(struct rp_walk *w, const struct src *s, const struct arc_seg *g,
			 const struct arcx_restart *rs)
{
	memset(w, 0, sizeof *w);
	w->s = s;
	w->in_off = g->in_off;
	w->in_len = g->in_len;
	w->buf = malloc(RP_WINDOW + WORK);
	w->in = malloc(IN_BLOCK);
	if (!w->buf || !w->in)
		return RC_NOMEM;
	if (rs) {
		w->st = rs->st;
		memcpy(w->buf, rs->win, rs->win_len);
		w->pos = rs->win_len;
	} else {
		uint8_t h[16];
		size_t n = g->in_len < sizeof h ? (size_t)g->in_len : sizeof h;
		uint64_t claimed;
		enum rc r = src_read(s, g->in_off, h, n);

		if (r != RC_OK)
			return r;
		if (!rp_start(&w->st, h, n, &claimed))
			return RC_CORRUPT;
	}
	return RC_OK;
}

static enum rc walk_fill(struct rp_walk *w)
{
	size_t n = IN_BLOCK;

	if (w->st.in >= w->in_len)
		return RC_TRUNCATED;
	if (w->in_len - w->st.in < n)
		n = (size_t)(w->in_len - w->st.in);
	w->in_base = w->st.in;
	w->in_n = n;
	return src_read(w->s, w->in_off + w->st.in, w->in, n);
}

/*
 * Decode up to `limit` more bytes. The new output is buf[*from, w->pos). RC_OK with no new
 * bytes means the stream finished; RC_CORRUPT / RC_TRUNCATED / RC_IO end the walk.
 */
static enum rc walk_step(struct rp_walk *w, uint64_t limit, size_t *from)
{
	size_t end, cap;
	enum rc r;

	if (w->pos == RP_WINDOW + WORK) { /* keep the window, drop the rest */
		memmove(w->buf, w->buf + WORK, RP_WINDOW);
		w->pos = RP_WINDOW;
	}
	cap = RP_WINDOW + WORK;
	if (limit < cap - w->pos)
		cap = w->pos + (size_t)limit;
	*from = w->pos;
	for (;;) {
		uint64_t at = w->st.in - w->in_base;

		if (w->st.in < w->in_base || at > w->in_n) {
			r = walk_fill(w);
			if (r != RC_OK)
				return r == RC_TRUNCATED ? RC_CORRUPT : r;
			at = 0;
		}
		r = rp_run(&w->st, w->in + at, w->in_n - (size_t)at, w->buf, w->pos, cap, &end);
		w->pos = end;
		if (r != RC_TRUNCATED)
			return r;
		if (end > *from)
			return RC_OK; /* hand over what we have; refill next time */
		if (w->in_base + w->in_n >= w->in_len)
			return RC_TRUNCATED; /* the stored bytes end inside a command */
		r = walk_fill(w);
		if (r != RC_OK)
			return r;
	}
}

/* Sequential decode of a long RefPack segment, leaving restart points every g->step. */
static enum rc place_restarts(const struct src *s, struct arc_index *ix, struct arcx_seg *g,
			      const char *name, struct diag *d)
{
	struct rp_walk w;
	uint64_t pieces = seg_pieces(g), per, next;
	enum rc r;

	per = (pieces + ARCX_RESTARTS_MAX - 1) / ARCX_RESTARTS_MAX;
	g->step = per * ARC_PIECE_MAX;
	g->rs0 = ix->nrs;
	next = g->step;
	r = walk_init(&w, s, &g->s, NULL);
	while (r == RC_OK && w.st.out < g->s.out_len && !rp_finished(&w.st)) {
		size_t from;
		uint64_t stop = next < g->s.out_len ? next : g->s.out_len;

		r = walk_step(&w, stop - w.st.out, &from);
		if (r == RC_OK && w.pos == from)
			break; /* finished */
		if (r == RC_OK && w.st.out == next && next < g->s.out_len) {
			struct arcx_restart *v;
			size_t cap = ix->rscap;
			uint32_t wl = w.pos < RP_WINDOW ? (uint32_t)w.pos : RP_WINDOW;

			v = xgrow_n(ix->rs, ix->nrs, &cap, sizeof *v, 8);
			if (!v) {
				r = RC_NOMEM;
				break;
			}
			ix->rs = v;
			ix->rscap = (uint32_t)cap;
			v[ix->nrs].st = w.st;
			v[ix->nrs].win_len = wl;
			v[ix->nrs].win = malloc(wl ? wl : 1);
			if (!v[ix->nrs].win) {
				r = RC_NOMEM;
				break;
			}
			memcpy(v[ix->nrs].win, w.buf + w.pos - wl, wl);
			ix->nrs++;
			g->nrs++;
			ix->bytes += sizeof *v + wl;
			next += g->step;
		}
	}
	g->real = w.st.out < g->s.out_len ? w.st.out : g->s.out_len;
	walk_free(&w);
	if (r == RC_NOMEM || r == RC_IO)
		return r;
	if (g->real < g->s.out_len)
		diag_add(d, "%s: RefPack stream gives %llu of %llu bytes (%s)", name,
			 (unsigned long long)g->real, (unsigned long long)g->s.out_len,
			 r == RC_OK ? "ends early" : rc_str(r));
	return RC_OK;
}

enum rc arcx_finish(const struct src *s, struct arc_index *ix, const char *name, struct diag *d)
{
	uint64_t covered = 0, k = 0;
	uint32_t keep = 0;
	enum rc r;

	for (uint32_t i = 0; i < ix->nseg; i++) {
		struct arcx_seg *g = &ix->seg[i];

		if (g->s.out_off != covered || covered >= ix->size)
			break;
		if (g->s.out_len > ix->size - covered)
			g->s.out_len = g->real = ix->size - covered;
		covered += g->s.out_len;
		keep++;
	}
	ix->nseg = keep;
	if (covered < ix->size) {
		struct arc_seg bad = {covered, ix->size - covered, 0, 0, ARC_SEG_BAD};

		/* the stored bytes give less than the table claims: reads past them fail */
		r = arcx_add(ix, &bad, RC_TRUNCATED);
		if (r != RC_OK)
			return r;
	}
	for (uint32_t i = 0; i < ix->nseg; i++) {
		struct arcx_seg *g = &ix->seg[i];

		g->piece0 = k;
		k += seg_pieces(g);
		if (g->s.method == ARC_SEG_REFPACK && g->s.out_len > ARC_PIECE_MAX) {
			r = place_restarts(s, ix, g, name, d);
			if (r != RC_OK)
				return r;
		}
	}
	ix->npieces = k;
	if (ix->nseg && ix->nseg < ix->segcap) {
		ix->seg = xshrink_n(ix->seg, ix->nseg, sizeof *ix->seg);
		ix->segcap = ix->nseg;
	}
	ix->bytes += (uint64_t)ix->segcap * sizeof *ix->seg;
	return RC_OK;
}

/* ---- decoding a piece ---- */

static enum rc piece_stored(const struct src *s, const struct arcx_seg *g, uint64_t po, size_t len,
			    uint8_t *dst, size_t *got)
{
	uint64_t avail = g->s.in_len > po ? g->s.in_len - po : 0;
	size_t n = avail < len ? (size_t)avail : len;
	enum rc r = n ? src_read(s, g->s.in_off + po, dst, n) : RC_OK;

	if (r != RC_OK)
		return r;
	*got = n;
	return n < len ? RC_TRUNCATED : RC_OK;
}

/* A short stream (a typical chunk): read it whole and decode straight into dst. */
static enum rc piece_refpack_small(const struct src *s, const struct arc_index *ix,
				   const struct arcx_seg *g, size_t len, uint8_t *dst, size_t *got)
{
	uint8_t *in;
	enum rc r = src_dup(s, g->s.in_off, (size_t)g->s.in_len, &in);

	if (r != RC_OK)
		return r;
	r = rp_decode(in, (size_t)g->s.in_len, dst, len, got);
	count_decoded(ix, *got);
	free(in);
	if (r == RC_OK && *got < len)
		return RC_TRUNCATED;		/* the stream ended: it gives less than claimed */
	return r == RC_FORMAT ? RC_CORRUPT : r; /* RC_TRUNCATED: the stored bytes end */
}

static enum rc piece_refpack(const struct src *s, const struct arc_index *ix,
			     const struct arcx_seg *g, uint64_t po, size_t len, uint8_t *dst,
			     size_t *got)
{
	const struct arcx_restart *rs = NULL;
	struct rp_walk w;
	enum rc r;

	if (po >= g->real)
		return RC_TRUNCATED;
	if (po == 0 && g->s.in_len <= SMALL_STREAM)
		return piece_refpack_small(s, ix, g, len, dst, got);
	if (g->nrs && g->step && po / g->step > 0) {
		uint64_t ri = po / g->step;

		if (ri > g->nrs)
			ri = g->nrs;
		rs = &ix->rs[g->rs0 + ri - 1];
	}
	r = walk_init(&w, s, &g->s, rs);
	while (r == RC_OK && *got < len) {
		size_t from;
		uint64_t start;

		r = walk_step(&w, po + len - w.st.out, &from);
		if (r != RC_OK)
			break;
		if (w.pos == from)
			break; /* finished early */
		start = w.st.out - (w.pos - from);
		if (w.st.out > po) {
			uint64_t a = start > po ? start : po;
			size_t n = (size_t)(w.st.out - a);

			memcpy(dst + (a - po), w.buf + w.pos - (w.st.out - a), n);
			*got = (size_t)(w.st.out - po);
		}
	}
	if (rs && w.st.out >= rs->st.out)
		count_decoded(ix, w.st.out - rs->st.out);
	else if (!rs)
		count_decoded(ix, w.st.out);
	walk_free(&w);
	/* RC_OK short: the stream ended; RC_TRUNCATED: the stored bytes end in a command */
	return r == RC_OK && *got < len ? RC_TRUNCATED : r;
}

/* More of the segment's input for z when it has none left (RC_CORRUPT past its end). */
static enum rc inflate_feed(const struct src *s, const struct arcx_seg *g, z_stream *z, uint8_t *in,
			    uint64_t *at)
{
	size_t n = g->s.in_len - *at < IN_BLOCK ? (size_t)(g->s.in_len - *at) : IN_BLOCK;
	enum rc r;

	if (z->avail_in)
		return RC_OK;
	if (n == 0)
		return RC_CORRUPT;
	r = src_read(s, g->s.in_off + *at, in, n);
	if (r == RC_OK) {
		*at += n;
		z->next_in = in;
		z->avail_in = (uInt)n;
	}
	return r;
}

/* Whether the stream gives a byte more (its declared end reached without its own end). */
static bool inflate_more(const struct src *s, const struct arcx_seg *g, z_stream *z, uint8_t *in,
			 uint64_t *at)
{
	uint8_t extra;

	for (;;) {
		int zr;

		if (inflate_feed(s, g, z, in, at) != RC_OK)
			return false;
		z->next_out = &extra;
		z->avail_out = 1;
		zr = inflate(z, Z_NO_FLUSH);
		if (z->avail_out == 0)
			return true;
		if (zr != Z_OK && !(zr == Z_BUF_ERROR && z->avail_in == 0))
			return false;
	}
}

/* zlib or raw deflate: decode from the segment's start, dropping output before po. *over: the
 * piece ends the segment and the stream goes on past it. */
static enum rc piece_inflate(const struct src *s, const struct arc_index *ix,
			     const struct arcx_seg *g, uint64_t po, size_t len, uint8_t *dst,
			     size_t *got, bool *over)
{
	z_stream z;
	/* as long as the input when shorter (a chunk's): 256 KiB is mapped afresh under ASan */
	size_t in_n = g->s.in_len < IN_BLOCK ? (size_t)g->s.in_len : IN_BLOCK;
	uint8_t *in = malloc(in_n ? in_n : 1), *skip = po ? malloc(64u << 10) : NULL;
	uint64_t at = 0, skipped = 0;
	enum rc r = RC_OK;
	int zr = Z_OK;

	memset(&z, 0, sizeof z);
	if (!in || (po && !skip) ||
	    inflateInit2(&z, g->s.method == ARC_SEG_ZLIB ? MAX_WBITS : -MAX_WBITS) != Z_OK) {
		free(in);
		free(skip);
		return RC_NOMEM;
	}
	while (*got < len) {
		r = inflate_feed(s, g, &z, in, &at);
		if (r != RC_OK)
			break;
		if (skipped < po) {
			uint64_t want = po - skipped;

			z.next_out = skip;
			z.avail_out = want < (64u << 10) ? (uInt)want : (64u << 10);
		} else {
			size_t want = len - *got;

			z.next_out = dst + *got;
			z.avail_out = want < (1u << 30) ? (uInt)want : (1u << 30);
		}
		uInt before = z.avail_out;

		zr = inflate(&z, Z_NO_FLUSH);
		if (skipped < po)
			skipped += before - z.avail_out;
		else
			*got += before - z.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			r = RC_CORRUPT;
			break;
		}
		if (zr == Z_BUF_ERROR && z.avail_in != 0) {
			r = RC_CORRUPT;
			break;
		}
	}
	count_decoded(ix, z.total_out);
	if (r == RC_OK && *got == len && zr != Z_STREAM_END && po + len == g->s.out_len)
		*over = inflate_more(s, g, &z, in, &at);
	inflateEnd(&z);
	free(in);
	free(skip);
	if (r == RC_OK && *got < len)
		r = RC_TRUNCATED; /* the stream ended: it gives less than claimed */
	return r;
}

/* LZX (libmspack): the segment decodes whole; a segment longer than the piece goes through a
 * buffer of its size, which is bounded like its input. */
#define LZX_SEG_MAX (16u << 20)

static enum rc piece_lzx(const struct src *s, const struct arcx_seg *g, uint64_t po, size_t len,
			 uint8_t *dst, size_t *got)
{
	uint8_t *in, *tmp = NULL;
	size_t n = 0;
	enum rc r;

	if (!lzx_available())
		return RC_UNSUPPORTED;
	if (g->s.in_len > LZX_SEG_MAX || g->s.out_len > LZX_SEG_MAX)
		return RC_UNSUPPORTED;
	r = src_dup(s, g->s.in_off, (size_t)g->s.in_len, &in);
	if (r != RC_OK)
		return r;
	if (po == 0 && len == g->s.out_len) {
		r = lzx_xmem_decode(in, (size_t)g->s.in_len, dst, len, got);
	} else {
		tmp = malloc((size_t)g->s.out_len);
		r = tmp ? lzx_xmem_decode(in, (size_t)g->s.in_len, tmp, (size_t)g->s.out_len, &n)
			: RC_NOMEM;
		if (r == RC_OK && n > po) {
			*got = n - po < len ? (size_t)(n - po) : len;
			memcpy(dst, tmp + po, *got);
		}
	}
	free(in);
	free(tmp);
	if (r == RC_OK && *got < len)
		r = RC_CORRUPT;
	return r;
}

static enum rc piece_decode(const struct src *s, const struct arc_index *ix,
			    const struct arcx_seg *g, uint64_t po, size_t len, uint8_t *dst,
			    size_t *got, bool *over)
{
	switch (g->s.method) {
	case ARC_SEG_STORED:
		return piece_stored(s, g, po, len, dst, got);
	case ARC_SEG_REFPACK:
		return piece_refpack(s, ix, g, po, len, dst, got);
	case ARC_SEG_ZLIB:
	case ARC_SEG_DEFLATE: {
		bool past = false;
		enum rc r = piece_inflate(s, ix, g, po, len, dst, got, &past);

		if (past)
			atomic_fetch_add(&((struct arc_index *)ix)->overruns, 1);
		if (over)
			*over = past;
		return r;
	}
	case ARC_SEG_LZX:
		return piece_lzx(s, g, po, len, dst, got);
	default:
		return g->why ? (enum rc)g->why : RC_CORRUPT;
	}
}

/* Nothing but the stored bytes' end follows g: its own filler, or nothing. */
static bool seg_is_last(const struct arc_index *ix, const struct arcx_seg *g)
{
	const struct arcx_seg *end = ix->seg + ix->nseg;

	return g + 1 == end ||
	       (g + 2 == end && g[1].s.method == ARC_SEG_BAD && g[1].why == RC_TRUNCATED);
}

enum rc arc_piece(const struct src *s, const struct arc_index *ix, uint64_t k, uint8_t *dst,
		  size_t *got, bool *over)
{
	const struct arcx_seg *g;
	uint64_t po;
	size_t len;
	enum rc r;

	*got = 0;
	if (over)
		*over = false;
	if (k >= ix->npieces)
		return RC_BOUNDS;
	g = seg_of_piece(ix, k);
	po = (k - g->piece0) * ARC_PIECE_MAX;
	len = g->s.out_len - po < ARC_PIECE_MAX ? (size_t)(g->s.out_len - po) : ARC_PIECE_MAX;
	atomic_fetch_add(&((struct arc_index *)ix)->decodes, 1);
	r = piece_decode(s, ix, g, po, len, dst, got, over);
	/* Bytes that end early are the entry's end (a lying size) only in its last segment: a
	 * short chunk with chunks after it is corrupt. */
	return r == RC_TRUNCATED && !seg_is_last(ix, g) ? RC_CORRUPT : r;
}

/* ---- building an entry's index ---- */

static bool zlib_header(const uint8_t *p, size_t n)
{
	return n >= 2 && (p[0] & 0x0F) == 8 && (p[0] >> 4) <= 7 && !(p[1] & 0x20) &&
	       ((unsigned)p[0] << 8 | p[1]) % 31 == 0;
}

/*
 * A chunk's method. The public readers number them differently (RW4ArchiveTool: 1 raw
 * deflate, 2 RefPack, 3 LZX, 4 stored; the SK8 reader: 0 and 4 stored, 2 RefPack, 3 zlib),
 * so the bytes decide where the numbers disagree.
 */
static uint8_t chunk_method(bool lzx, uint32_t m, uint32_t packed, uint64_t out_len,
			    const uint8_t *p, size_t n)
{
	uint64_t sz;
	size_t hl;

	bool rp = rp_header(p, n, &sz, &hl);

	if (m == 0 || m == 4)
		return ARC_SEG_STORED;
	if (m == 2)
		return rp ? ARC_SEG_REFPACK : packed == out_len ? ARC_SEG_STORED : ARC_SEG_BAD;
	if (lzx)
		return ARC_SEG_LZX;
	if (zlib_header(p, n))
		return ARC_SEG_ZLIB;
	if (m == 1)
		return ARC_SEG_DEFLATE; /* RW4ArchiveTool's raw deflate */
	if (rp)
		return ARC_SEG_REFPACK;
	if (packed == out_len)
		return ARC_SEG_STORED;
	return m == 3 ? ARC_SEG_DEFLATE : ARC_SEG_BAD;
}

struct chunk_hdr {
	bool lzx;
	uint32_t version, total, csize, count, align;
};

/* How many chunks to index: the header's count, at most what its sizes need, what the stored
 * bytes can hold and ARCX_CHUNKS_MAX (each cut said in d). */
static uint64_t chunk_count(const struct arc_entry *e, const struct chunk_hdr *c, const char *name,
			    struct diag *d)
{
	uint64_t n = c->count, need;

	need = c->total / c->csize + (c->total % c->csize != 0);
	if (n != need)
		diag_add(d, "%s: chunk header lists %u chunks; %u bytes in chunks of %u need %llu",
			 name, c->count, c->total, c->csize, (unsigned long long)need);
	if (n > need)
		n = need;
	if (n > (e->stored - CHUNK_HDR) / 8) {
		diag_add(d, "%s: %llu chunks cannot fit in %llu stored bytes", name,
			 (unsigned long long)n, (unsigned long long)e->stored);
		n = (e->stored - CHUNK_HDR) / 8;
	}
	if (n > ARCX_CHUNKS_MAX) {
		diag_add(d, "%s: %llu chunks; only the first %u are indexed", name,
			 (unsigned long long)n, ARCX_CHUNKS_MAX);
		n = ARCX_CHUNKS_MAX;
	}
	return n;
}

static enum rc chunk_segments(const struct src *s, const struct arc_entry *e,
			      const struct chunk_hdr *c, struct arc_index *ix, const char *name,
			      struct diag *d)
{
	uint64_t cursor = CHUNK_HDR, out = 0, n = chunk_count(e, c, name, d);
	uint32_t bad = 0, lzx = 0, huge = 0;

	for (uint64_t i = 0; i < n && out < e->size; i++) {
		uint64_t pay = align_up(cursor + 8, c->align);
		uint8_t b[8 + 10] = {
		    0}; /* the descriptor, then the longest RefPack header (91 FB) */
		size_t got;
		uint32_t packed, m;
		struct arc_seg g;
		bool too_big;
		enum rc r;

		if (!span_ok(e->stored, pay - 8, 8)) {
			diag_add(d, "%s: chunk %llu descriptor past the entry's end", name,
				 (unsigned long long)i);
			break;
		}
		got = e->stored - (pay - 8) < sizeof b ? (size_t)(e->stored - (pay - 8)) : sizeof b;
		r = src_read(s, e->off + pay - 8, b, got);
		if (r != RC_OK)
			return r;
		packed = ld_u32be(b);
		m = ld_u32be(b + 4);
		if (!span_ok(e->stored, pay, packed)) {
			diag_add(d, "%s: chunk %llu (%u bytes) runs past the entry's end", name,
				 (unsigned long long)i, packed);
			break;
		}
		g.out_off = out;
		g.out_len = c->total - out < c->csize ? c->total - out : c->csize;
		g.in_off = e->off + pay;
		g.in_len = packed;
		g.method = chunk_method(c->lzx, m, packed, g.out_len, b + 8, got - 8);
		bad += g.method == ARC_SEG_BAD;
		lzx += g.method == ARC_SEG_LZX;
		too_big = (g.method == ARC_SEG_ZLIB || g.method == ARC_SEG_DEFLATE) &&
			  g.out_len > ARCX_INFLATE_MAX;
		if (too_big) {
			g.method = ARC_SEG_BAD;
			huge++;
		}
		r = arcx_add(ix, &g, too_big ? RC_UNSUPPORTED : RC_CORRUPT);
		if (r != RC_OK)
			return r;
		out += g.out_len;
		cursor = pay + packed;
	}
	if (bad)
		diag_add(d, "%s: %u chunks with a method that is not understood", name, bad);
	if (huge)
		diag_add(d, "%s: %u zlib chunks unpack to more than %u MiB each: not decoded", name,
			 huge, ARCX_INFLATE_MAX >> 20);
	if (lzx && !lzx_available())
		diag_add(d,
			 "%s: %u LZX chunks (Xbox 360): this build has no LZX decoder (libmspack)",
			 name, lzx);
	if (c->total != e->size)
		diag_add(d, "%s: chunk header says %u bytes, the table %llu", name, c->total,
			 (unsigned long long)e->size);
	return RC_OK;
}

static enum rc chunk_index(const struct src *s, const struct arc_entry *e, const uint8_t *h,
			   struct arc_index *ix, const char *name, struct diag *d)
{
	struct chunk_hdr c;

	c.lzx = !memcmp(h, "chunklzx", 8);
	c.version = ld_u32be(h + 8);
	c.total = ld_u32be(h + 12);
	c.csize = ld_u32be(h + 16);
	c.count = ld_u32be(h + 20);
	c.align = ld_u32be(h + 24);
	if (c.align == 0)
		c.align = 1;
	if (c.version != 2 || c.csize == 0 || (c.align & (c.align - 1)) || c.align > (1u << 20)) {
		diag_add(d, "%s: chunk header version %u, chunk size %u, alignment %u: unusable",
			 name, c.version, c.csize, c.align);
		return RC_OK; /* arcx_finish covers the entry with a BAD segment */
	}
	return chunk_segments(s, e, &c, ix, name, d);
}

static bool chunk_magic(const uint8_t *h, size_t n)
{
	return n >= CHUNK_HDR && (!memcmp(h, "chunkref", 8) || !memcmp(h, "chunkzip", 8) ||
				  !memcmp(h, "chunklzx", 8));
}

/* One segment for the whole entry, or nothing (a BAD segment follows) with a diag line. */
static enum rc single_index(const struct arc_entry *e, const uint8_t *h, size_t n,
			    struct arc_index *ix, const char *name, struct diag *d)
{
	struct arc_seg g = {0, e->size, e->off, e->stored, ARC_SEG_STORED};
	uint64_t claimed;
	size_t hl;
	enum rc why = RC_OK;

	if (e->method == ARC_STORED && e->stored == e->size) {
		/* stored as is */
	} else if (rp_header(h, n, &claimed, &hl)) {
		g.method = ARC_SEG_REFPACK;
		if (claimed != e->size)
			diag_add(d, "%s: RefPack header says %llu bytes, the table %llu", name,
				 (unsigned long long)claimed, (unsigned long long)e->size);
	} else if (e->method == ARC_LZX) {
		g.method = ARC_SEG_LZX;
		why = lzx_available() ? RC_CORRUPT : RC_UNSUPPORTED;
		if (!lzx_available())
			diag_add(d, "%s: LZX (Xbox 360): this build has no LZX decoder (libmspack)",
				 name);
	} else if (e->stored == e->size || e->method == ARC_STORED) {
		if (e->method != ARC_STORED && e->method != ARC_METHOD_UNKNOWN)
			diag_add(d, "%s: compression %u but the bytes are plain; read as stored",
				 name, e->table_method);
		if (e->stored < e->size)
			diag_add(d, "%s: %llu stored bytes for %llu claimed", name,
				 (unsigned long long)e->stored, (unsigned long long)e->size);
	} else {
		diag_add(d, "%s: compression %u: the bytes are neither RefPack nor chunked", name,
			 e->table_method);
		return RC_OK;
	}
	return arcx_add(ix, &g, why);
}

enum rc arc_index_build(const struct src *s, const struct arc *a, uint32_t i,
			struct arc_index **out, struct diag *d)
{
	const struct arc_entry *e;
	const char *name;
	struct arc_index *ix;
	uint8_t h[CHUNK_HDR];
	size_t n;
	enum rc r = RC_OK;

	*out = NULL;
	if (i >= a->n)
		return RC_BOUNDS;
	e = &a->e[i];
	name = a->paths + e->path;
	ix = arcx_new(e->size);
	if (!ix)
		return RC_NOMEM;
	if (!e->bad && e->method == ARC_SECTIONS && e->size > 0) {
		r = sfil_index(s, a, i, ix, name,
			       d); /* stream assets: src/formats/archive/sfil.c */
	} else if (!e->bad && e->size > 0) {
		n = e->stored < CHUNK_HDR ? (size_t)e->stored : CHUNK_HDR;
		r = src_read(s, e->off, h, n);
		if (r == RC_OK && chunk_magic(h, n) &&
		    !(e->method == ARC_STORED && e->stored == e->size))
			r = chunk_index(s, e, h, ix, name, d);
		else if (r == RC_OK)
			r = single_index(e, h, n, ix, name, d);
	}
	if (r == RC_OK)
		r = arcx_finish(s, ix, name, d);
	if (r != RC_OK) {
		arc_index_free(ix);
		return r;
	}
	*out = ix;
	return RC_OK;
}
