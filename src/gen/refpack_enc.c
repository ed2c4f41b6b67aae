/*
 * RefPack compressor (docs/archives.md, "RefPack"): greedy LZ77 over hash chains. Commands:
 *   0xxxxxxx            2 bytes: 0-3 literals, copy 3-10 bytes from 1-1024 back
 *   10xxxxxx            3 bytes: 0-3 literals, copy 4-67 bytes from 1-16384 back
 *   110xxxxx            4 bytes: 0-3 literals, copy 5-1028 bytes from 1-131072 back
 *   111xxxxx < 0xFC     1 byte: 4-112 literals (a multiple of 4)
 *   111111xx            stop, with 0-3 trailing literals
 */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/gen/refpack_enc.h"

#define RP_WIN	  (1u << 17)
#define RP_HBITS  16
#define RP_MAXLEN 1028u
#define RP_NICE	  258u /* a match this long ends the search (zlib's nice length at level 9) */

struct rp_enc {
	const uint8_t *in;
	size_t n;
	uint32_t *head; /* position + 1 of the newest 3-byte string with this hash, 0 = none */
	uint32_t *prev; /* position + 1 of the previous one, by position modulo the window */
	unsigned chain, hbits;
	uint8_t *o; /* the output cursor: room for the worst case was made first */
	struct rp_enc_stats *st;
};

static uint32_t rp_hash(const uint8_t *p, unsigned bits)
{
	uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];

	return (v * 2654435761u) >> (32 - bits);
}

static inline __attribute__((always_inline)) void rp_insert(struct rp_enc *e, size_t pos)
{
	uint32_t h;

	if (pos + 3 > e->n)
		return;
	h = rp_hash(e->in + pos, e->hbits);
	e->prev[pos & (RP_WIN - 1)] = e->head[h];
	e->head[h] = (uint32_t)(pos + 1);
}

/* The shortest copy each offset range can encode. */
static size_t rp_min_len(size_t off)
{
	return off <= 1024 ? 3 : off <= 16384 ? 4 : 5;
}

/* Bytes equal at a and b, at most max: eight at a time. */
static size_t rp_match_len(const uint8_t *a, const uint8_t *b, size_t max)
{
	size_t len = 0;

	while (len + 8 <= max) {
		uint64_t x, y;

		memcpy(&x, a + len, 8);
		memcpy(&y, b + len, 8);
		if (x != y)
			return len + (size_t)(__builtin_ctzll(x ^ y) >> 3);
		len += 8;
	}
	while (len < max && a[len] == b[len])
		len++;
	return len;
}

/* Longest match for pos within the window; its length (0 = none) and *off. A candidate that
 * cannot beat the best so far (its byte at the best length differs) is skipped unread, and a
 * match of RP_NICE bytes ends the search: the chain's other candidates rarely do better. */
static size_t rp_find(const struct rp_enc *e, size_t pos, size_t *off)
{
	size_t best = 0, maxlen = e->n - pos;
	const uint8_t *p = e->in + pos;
	uint32_t cand;
	unsigned k = e->chain;

	if (pos + 3 > e->n)
		return 0;
	if (maxlen > RP_MAXLEN)
		maxlen = RP_MAXLEN;
	cand = e->head[rp_hash(p, e->hbits)];
	while (cand && k--) {
		size_t c = cand - 1, d = pos - c, len;

		if (c >= pos || d > RP_WIN)
			break;
		if (best < maxlen && e->in[c + best] == p[best]) {
			len = rp_match_len(e->in + c, p, maxlen);
			if (len >= rp_min_len(d) && len > best) {
				best = len;
				*off = d;
				if (len >= RP_NICE || len == maxlen)
					break;
			}
		}
		cand = e->prev[c & (RP_WIN - 1)];
		if (cand && cand - 1 >= c)
			break; /* the slot was reused by a newer position: the chain ends here */
	}
	return best;
}

/* Literal runs of 4-112 bytes; n is a multiple of 4. */
static void rp_put_lits(struct rp_enc *e, const uint8_t *p, size_t n)
{
	while (n) {
		size_t k = n < 112 ? n : 112;

		*e->o++ = (uint8_t)(0xE0 | ((k - 4) >> 2));
		memcpy(e->o, p, k);
		e->o += k;
		p += k;
		n -= k;
		e->st->lit++;
	}
}

/* A copy of len bytes from off back, carrying nl (0-3) literals at p first. */
static void rp_put_copy(struct rp_enc *e, const uint8_t *p, unsigned nl, size_t off, size_t len)
{
	size_t o = off - 1;
	uint8_t *w = e->o;

	if (off <= 1024 && len <= 10) {
		w[0] = (uint8_t)((o >> 8) << 5 | (len - 3) << 2 | nl);
		w[1] = (uint8_t)o;
		w += 2;
		e->st->cmd2++;
	} else if (off <= 16384 && len <= 67) {
		w[0] = (uint8_t)(0x80 | (len - 4));
		w[1] = (uint8_t)(nl << 6 | o >> 8);
		w[2] = (uint8_t)o;
		w += 3;
		e->st->cmd3++;
	} else {
		size_t l = len - 5;

		w[0] = (uint8_t)(0xC0 | (o >> 16) << 4 | (l >> 8) << 2 | nl);
		w[1] = (uint8_t)(o >> 8);
		w[2] = (uint8_t)o;
		w[3] = (uint8_t)l;
		w += 4;
		e->st->cmd4++;
	}
	for (unsigned k = 0; k < nl; k++)
		*w++ = p[k];
	e->o = w;
}

static void rp_body(struct rp_enc *e, bool literal_only)
{
	size_t pos = 0, lit = 0, off = 0, len, run;

	while (pos < e->n) {
		len = literal_only ? 0 : rp_find(e, pos, &off);
		if (!len) {
			rp_insert(e, pos++);
			continue;
		}
		run = pos - lit;
		rp_put_lits(e, e->in + lit, run & ~(size_t)3);
		rp_put_copy(e, e->in + lit + (run & ~(size_t)3), (unsigned)(run & 3), off, len);
		for (size_t k = 0; k < len; k++)
			rp_insert(e, pos + k);
		pos += len;
		lit = pos;
	}
	run = pos - lit;
	rp_put_lits(e, e->in + lit, run & ~(size_t)3);
	*e->o++ = (uint8_t)(0xFC | (run & 3));
	memcpy(e->o, e->in + lit + (run & ~(size_t)3), run & 3);
	e->o += run & 3;
	e->st->stop++;
}

static void rp_put_size(struct buf *b, uint64_t v, bool wide)
{
	if (wide)
		buf_u8(b, (uint8_t)(v >> 24));
	buf_u8(b, (uint8_t)(v >> 16));
	buf_u8(b, (uint8_t)(v >> 8));
	buf_u8(b, (uint8_t)v);
}

void rp_work_free(struct rp_work *w)
{
	free(w->head);
	free(w->prev);
	memset(w, 0, sizeof *w);
}

/* Tables for hbits and n: grown only, kept in w. head cleared (the chains start empty); prev is
 * written before it is read, so it needs no clearing. */
static enum rc rp_tables(struct rp_work *w, unsigned hbits, size_t n)
{
	size_t nh = (size_t)1 << hbits, np = n < RP_WIN ? (n ? n : 1) : RP_WIN;

	w->head = xroom_n(w->head, nh, &w->head_n, sizeof *w->head);
	w->prev = xroom_n(w->prev, np, &w->prev_n, sizeof *w->prev);
	if (!w->head || !w->prev)
		return RC_NOMEM;
	memset(w->head, 0, nh * sizeof *w->head);
	return RC_OK;
}

enum rc rp_encode_work(const uint8_t *in, size_t n, const struct rp_enc_opts *o, struct buf *out,
		       struct rp_enc_stats *st, struct rp_work *w)
{
	uint8_t h = o && o->header ? o->header : n < (1u << 24) ? RP_HDR_10 : RP_HDR_90;
	bool wide = h & 0x80;
	struct rp_enc_stats dummy;
	struct rp_enc e = {.in = in, .n = n, .st = st ? st : &dummy, .hbits = RP_HBITS};
	/* no command is longer than the bytes it stands for, except literal runs (one byte per
	 * 112) and the stop command: the worst case is known, so the body is written in place */
	size_t start = out->len, size_at, bound = n + n / 112 + 16;
	uint8_t *scratch = NULL, *base;

	if ((h & 0x3E) != 0x10) /* 0x10 plus the flags 0x01, 0x40 and 0x80 only */
		return RC_INVAL;
	if ((uint64_t)n >= (wide ? 1ull << 32 : 1ull << 24))
		return RC_INVAL;
	memset(e.st, 0, sizeof *e.st);
	e.chain = o && o->chain ? o->chain : 32;
	/* tables sized to the input: a small entry must not pay for clearing 768 KiB */
	while (e.hbits > 10 && ((size_t)1 << (e.hbits - 1)) >= n)
		e.hbits--;
	if (rp_tables(w, e.hbits, n) != RC_OK)
		return RC_NOMEM;
	e.head = w->head;
	e.prev = w->prev;
	buf_u8(out, h);
	buf_u8(out, 0xFB);
	size_at = out->len;
	if (h & 1)
		rp_put_size(out, 0, wide);
	rp_put_size(out, n, wide);
	if (out->count_only) /* a count of the bytes only: the body goes to scratch */
		scratch = malloc(bound);
	else if (out->cap - out->len < bound) /* an appending caller: double, not a step each */
		buf_prealloc(out, out->len + (bound > out->cap ? bound : out->cap));
	base = out->count_only				 ? scratch
	       : out->oom || out->cap - out->len < bound ? NULL
							 : out->data + out->len;
	if (base) {
		e.o = base;
		rp_body(&e, o && o->literal_only);
		if (out->count_only)
			buf_put(out, scratch, (size_t)(e.o - base));
		else
			out->len += (size_t)(e.o - base);
	}
	free(scratch);
	if (!base || out->oom)
		return RC_NOMEM;
	if ((h & 1) && !out->count_only) {
		uint64_t packed = out->len - start;

		if (packed >= (wide ? 1ull << 32 : 1ull << 24))
			return RC_INVAL; /* the packed size field cannot hold it */
		for (int k = wide ? 3 : 2, at = 0; k >= 0; k--, at++)
			out->data[size_at + (size_t)at] = (uint8_t)(packed >> (8 * k));
	}
	return RC_OK;
}

enum rc rp_encode_stats(const uint8_t *in, size_t n, const struct rp_enc_opts *o, struct buf *out,
			struct rp_enc_stats *st)
{
	struct rp_work w = {0};
	enum rc r = rp_encode_work(in, n, o, out, st, &w);

	rp_work_free(&w);
	return r;
}

enum rc rp_encode(const uint8_t *in, size_t n, const struct rp_enc_opts *o, struct buf *out)
{
	return rp_encode_stats(in, n, o, out, NULL);
}
