/* RefPack decoder (docs/archives.md#refpack): bounds-checked, resumable, window-limited. */
#include <string.h>

#include "psgfs/formats/refpack.h"

/*
 * First byte: 0x80 = 4-byte sizes, 0x40 = a restricted window (ignored: it only narrows what
 * we accept anyway), 0x10 always set, 0x01 = a compressed-size field comes first. Second
 * byte 0xFB. Sizes are big-endian whatever the platform.
 */
bool rp_header(const uint8_t *p, size_t n, uint64_t *size, size_t *hdr_len)
{
	size_t w, at;
	uint64_t v = 0;

	if (n < 2 || p[1] != 0xFB || (p[0] & 0x3E) != 0x10)
		return false;
	w = (p[0] & 0x80) ? 4 : 3;
	at = 2 + ((p[0] & 0x01) ? w : 0);
	if (n < at + w)
		return false;
	for (size_t i = 0; i < w; i++)
		v = v << 8 | p[at + i];
	*size = v;
	*hdr_len = at + w;
	return true;
}

bool rp_start(struct rp_state *st, const uint8_t *p, size_t n, uint64_t *size)
{
	size_t h;

	memset(st, 0, sizeof *st);
	if (!rp_header(p, n, size, &h))
		return false;
	st->in = h;
	return true;
}

/* Copy a back-reference; overlapping copies repeat the pattern byte by byte. */
static inline void rp_match(uint8_t *o, size_t dist, size_t n)
{
	const uint8_t *s = o - dist;

	if (dist >= n) {
		memcpy(o, s, n);
	} else if (dist >= 8) {
		while (n >= 8) {
			memcpy(o, s, 8);
			o += 8;
			s += 8;
			n -= 8;
		}
		while (n--)
			*o++ = *s++;
	} else {
		while (n--)
			*o++ = *s++;
	}
}

/* Slack the fast loop needs: it copies in 16-byte blocks and may write past a command's end. */
#define FAST_IN	 (RP_CMD_MAX + 16)
#define FAST_OUT (1028 + 112 + 32)

/*
 * Commands while both buffers have room for the longest one: no per-byte bounds checks,
 * literals and far copies moved 16 bytes at a time (the bytes written past a command's end
 * are scratch, overwritten by the next one). Stops before the end command and before a bad
 * reference, which the careful loop handles; returns with the positions advanced.
 */
static void rp_fast(const uint8_t *in, size_t in_len, size_t *pi, uint8_t *buf, size_t cap,
		    size_t *po, uint64_t base)
{
	size_t i = *pi, o = *po;

	while (in_len - i >= FAST_IN && cap - o >= FAST_OUT) {
		const uint8_t *c = in + i;
		uint32_t b0 = c[0], lit, copy, dist;
		size_t adv;

		if (!(b0 & 0x80)) {
			lit = b0 & 3;
			copy = ((b0 >> 2) & 7) + 3;
			dist = ((b0 & 0x60) << 3) + c[1] + 1;
			adv = 2;
		} else if (!(b0 & 0x40)) {
			lit = c[1] >> 6;
			copy = (b0 & 0x3F) + 4;
			dist = (((uint32_t)c[1] & 0x3F) << 8) + c[2] + 1;
			adv = 3;
		} else if (!(b0 & 0x20)) {
			lit = b0 & 3;
			copy = ((b0 & 0x0C) << 6) + c[3] + 5;
			dist = ((b0 & 0x10) << 12) + ((uint32_t)c[1] << 8) + c[2] + 1;
			adv = 4;
		} else if (b0 < 0xFC) {
			lit = ((b0 & 0x1F) + 1) * 4;
			copy = 0;
			dist = 0;
			adv = 1;
		} else {
			break;
		}
		if (copy && (dist > base + o + lit || dist > o + lit))
			break;
		c += adv;
		for (uint32_t k = 0; k < lit; k += 16)
			memcpy(buf + o + k, c + k, 16);
		i += adv + lit;
		o += lit;
		if (copy) {
			uint8_t *q = buf + o;
			const uint8_t *r = q - dist;

			if (dist >= 16)
				for (uint32_t k = 0; k < copy; k += 16)
					memcpy(q + k, r + k, 16);
			else if (dist >= 8)
				for (uint32_t k = 0; k < copy; k += 8)
					memcpy(q + k, r + k, 8);
			else
				for (uint32_t k = 0; k < copy; k++)
					q[k] = r[k];
			o += copy;
		}
	}
	*pi = i;
	*po = o;
}

enum rc rp_run(struct rp_state *st, const uint8_t *in, size_t in_len, uint8_t *buf, size_t pos,
	       size_t cap, size_t *end)
{
	size_t i = 0, o = pos;
	uint32_t lit = st->lit, copy = st->copy, dist = st->dist;
	uint64_t base = st->out - pos; /* stream output position of buf[0] */
	enum rc r = RC_OK;

	for (;;) {
		if (lit) {
			size_t n = lit;

			if (n > in_len - i)
				n = in_len - i;
			if (n > cap - o)
				n = cap - o;
			memcpy(buf + o, in + i, n);
			i += n;
			o += n;
			lit -= (uint32_t)n;
			if (lit) {
				if (o == cap)
					break;
				r = RC_TRUNCATED;
				break;
			}
		}
		if (copy) {
			size_t n = copy;

			if (n > cap - o)
				n = cap - o;
			rp_match(buf + o, dist, n);
			o += n;
			copy -= (uint32_t)n;
			if (copy)
				break;
		}
		if (st->done || o == cap)
			break;
		rp_fast(in, in_len, &i, buf, cap, &o, base);
		if (o == cap)
			break;

		size_t avail = in_len - i;
		const uint8_t *c = in + i;
		uint8_t b0;

		if (avail < 1) {
			r = RC_TRUNCATED;
			break;
		}
		b0 = c[0];
		if (!(b0 & 0x80)) {
			if (avail < 2) {
				r = RC_TRUNCATED;
				break;
			}
			lit = b0 & 3;
			copy = ((b0 >> 2) & 7) + 3;
			dist = (((uint32_t)b0 & 0x60) << 3) + c[1] + 1;
			i += 2;
		} else if (!(b0 & 0x40)) {
			if (avail < 3) {
				r = RC_TRUNCATED;
				break;
			}
			lit = c[1] >> 6;
			copy = (b0 & 0x3F) + 4;
			dist = (((uint32_t)c[1] & 0x3F) << 8) + c[2] + 1;
			i += 3;
		} else if (!(b0 & 0x20)) {
			if (avail < 4) {
				r = RC_TRUNCATED;
				break;
			}
			lit = b0 & 3;
			copy = (((uint32_t)b0 & 0x0C) << 6) + c[3] + 5;
			dist = (((uint32_t)b0 & 0x10) << 12) + ((uint32_t)c[1] << 8) + c[2] + 1;
			i += 4;
		} else if (b0 < 0xFC) {
			lit = ((b0 & 0x1Fu) + 1) * 4;
			copy = 0;
			i += 1;
		} else {
			lit = b0 & 3;
			copy = 0;
			st->done = true;
			i += 1;
		}
		/* The reference is checked against all output so far, literals of this command
		 * included: nothing may reach before the stream's first byte. */
		if (copy && dist > base + o + lit) {
			r = RC_CORRUPT;
			break;
		}
		if (copy && dist > o + lit) { /* the caller gave too little history */
			r = RC_INVAL;
			break;
		}
		/* Fast path: the whole command fits in both buffers. */
		if (lit <= in_len - i && lit + copy <= cap - o) {
			memcpy(buf + o, in + i, lit);
			i += lit;
			o += lit;
			if (copy)
				rp_match(buf + o, dist, copy);
			o += copy;
			lit = copy = 0;
		}
	}
	st->in += i;
	st->out = base + o;
	st->lit = lit;
	st->copy = copy;
	st->dist = dist;
	*end = o;
	return r;
}

enum rc rp_decode(const uint8_t *in, size_t n, uint8_t *dst, size_t cap, size_t *got)
{
	struct rp_state st;
	uint64_t claimed;
	size_t end = 0;
	enum rc r;

	*got = 0;
	if (!rp_start(&st, in, n, &claimed))
		return RC_FORMAT;
	r = rp_run(&st, in + st.in, n - (size_t)st.in, dst, 0, cap, &end);
	*got = end;
	return r;
}
