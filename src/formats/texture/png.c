/* Uncompressed PNG, rendered item by item (see include/psgfs/formats/png.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/png.h"

#define HEAD_BYTES     (8 + 25 + 14) /* signature, IHDR, IDAT with the 2-byte zlib header */
#define TAIL_BYTES     (16 + 12)     /* IDAT with the Adler-32, IEND */
#define BLOCK_CHUNK(n) (12 + 5 + (uint64_t)(n))

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[n] = c;
	}
}

uint32_t pngs_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, crc_init);
	crc = ~crc;
	for (size_t i = 0; i < n; i++)
		crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
	return ~crc;
}

uint32_t pngs_adler32(uint32_t adler, const uint8_t *p, size_t n)
{
	uint32_t a = adler & 0xFFFF, b = adler >> 16;

	while (n) {
		size_t k = n < 5552 ? n : 5552; /* largest run without overflow before mod */

		n -= k;
		while (k--) {
			a += *p++;
			b += a;
		}
		a %= 65521;
		b %= 65521;
	}
	return b << 16 | a;
}

enum rc pngs_init(struct pngs *p, uint32_t w, uint32_t h, bool alpha, pngs_rows_fn rows,
		  const void *ctx)
{
	memset(p, 0, sizeof *p);
	if (w == 0 || h == 0 || w > 0x7FFFFFFF / 4 || h > 0x7FFFFFFF)
		return RC_INVAL;
	p->w = w;
	p->h = h;
	p->channels = alpha ? 4 : 3;
	p->row_bytes = 1 + (uint64_t)w * p->channels;
	p->raw = p->row_bytes * h;
	p->n_full = (p->raw - 1) / PNGS_BLOCK;
	p->last = (uint32_t)(p->raw - p->n_full * PNGS_BLOCK);
	p->rows = rows;
	p->ctx = ctx;
	return RC_OK;
}

void pngs_part(const struct pngs *p, unsigned part, uint64_t *n_items, uint32_t *item_size)
{
	static const uint32_t fixed[PNGS_PARTS] = {HEAD_BYTES, 0, 0, TAIL_BYTES};

	*n_items = part == 1 ? p->n_full : 1;
	*item_size = part == 1	 ? (uint32_t)BLOCK_CHUNK(PNGS_BLOCK)
		     : part == 2 ? (uint32_t)BLOCK_CHUNK(p->last)
				 : fixed[part];
}

uint64_t pngs_size(const struct pngs *p)
{
	return HEAD_BYTES + p->n_full * BLOCK_CHUNK(PNGS_BLOCK) + BLOCK_CHUNK(p->last) + TAIL_BYTES;
}

/* A chunk: length, type, data, CRC of type and data. */
static void put_chunk(struct buf *b, const char *type, const uint8_t *data, uint32_t n)
{
	uint32_t crc = pngs_crc32(0, (const uint8_t *)type, 4);

	buf_u32be(b, n);
	buf_put(b, type, 4);
	buf_put(b, data, n);
	buf_u32be(b, pngs_crc32(crc, data, n));
}

static void put_head(const struct pngs *p, struct buf *b)
{
	static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
	static const uint8_t zhdr[2] = {0x78, 0x01}; /* deflate, 32K window, no dictionary */
	uint8_t ihdr[13];

	buf_put(b, sig, sizeof sig);
	ihdr[0] = (uint8_t)(p->w >> 24);
	ihdr[1] = (uint8_t)(p->w >> 16);
	ihdr[2] = (uint8_t)(p->w >> 8);
	ihdr[3] = (uint8_t)p->w;
	ihdr[4] = (uint8_t)(p->h >> 24);
	ihdr[5] = (uint8_t)(p->h >> 16);
	ihdr[6] = (uint8_t)(p->h >> 8);
	ihdr[7] = (uint8_t)p->h;
	ihdr[8] = 8;			    /* bit depth */
	ihdr[9] = p->channels == 4 ? 6 : 2; /* RGBA or RGB */
	ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive filters, no interlace */
	put_chunk(b, "IHDR", ihdr, sizeof ihdr);
	put_chunk(b, "IDAT", zhdr, sizeof zhdr);
}

/*
 * Pixel rows fetched at once: about a stored block's worth, rounded up to a multiple of 8 (and
 * fetched from a multiple of 8) when 8 rows take less than 128 KiB. The rows callback of a
 * swizzled PS3 level reads whole bands of 8 rows or more (tex_ps3.c); fetched 3 to 7 at a time,
 * as a block or the Adler-32 pass of a 1024- to 2048-wide picture asked, each band was read two
 * or three times. Wider rows are fetched as before, but kept across the blocks of a render.
 */
static uint32_t fetch_rows(const struct pngs *p)
{
	uint64_t pix = p->row_bytes - 1;
	uint32_t n = pix >= PNGS_BLOCK ? 1 : (uint32_t)(PNGS_BLOCK / pix);

	if (n % 8 && pix * 8 < (128u << 10))
		n = (n + 7) / 8 * 8;
	return n;
}

/* Rows [y0, y0+n) of pixels (no filter bytes), kept between the blocks of one render. */
struct rows_kept {
	uint32_t y0, n;
	uint8_t *px;
	size_t cap;
};

static enum rc rows_need(const struct pngs *p, struct rows_kept *k, uint32_t y0, uint32_t y1)
{
	uint64_t pix = p->row_bytes - 1;
	uint32_t band = fetch_rows(p), start = band % 8 ? y0 : y0 / 8 * 8, n;
	enum rc r;

	if (k->px && y0 >= k->y0 && y1 < k->y0 + k->n)
		return RC_OK;
	if (y1 - start + 1 > band) /* not from below y0 past the band's size */
		start = y0;
	n = y1 - start + 1 > band ? y1 - start + 1 : band;
	n = n > p->h - start ? p->h - start : n;
	if ((size_t)(pix * n) > k->cap) {
		free(k->px);
		k->cap = (size_t)(pix * n);
		k->px = malloc(k->cap);
		if (!k->px) {
			k->cap = 0;
			return RC_NOMEM;
		}
	}
	k->y0 = start;
	k->n = 0;
	r = p->rows(p->ctx, start, n, k->px);
	if (r == RC_OK)
		k->n = n;
	return r;
}

/* Bytes [at, at+n) of the filtered-row stream (each row: filter byte 0, then pixels). */
static enum rc stream_bytes(const struct pngs *p, struct rows_kept *k, uint64_t at, uint32_t n,
			    uint8_t *out)
{
	uint32_t y0 = (uint32_t)(at / p->row_bytes), y1 = (uint32_t)((at + n - 1) / p->row_bytes);
	uint64_t rb = p->row_bytes, end = at + n;
	enum rc r = rows_need(p, k, y0, y1);

	for (uint64_t a = at; r == RC_OK && a < end;) {
		uint64_t y = a / rb, col = a % rb, take;

		if (col == 0) {
			*out++ = 0;
			a++;
			continue;
		}
		take = rb - col < end - a ? rb - col : end - a;
		memcpy(out, k->px + (size_t)((y - k->y0) * (rb - 1) + col - 1), (size_t)take);
		out += take;
		a += take;
	}
	return r;
}

/* IDAT chunk of stored block k. */
static enum rc put_block(const struct pngs *p, struct rows_kept *kept, uint64_t k, struct buf *b)
{
	uint32_t n = k < p->n_full ? PNGS_BLOCK : p->last;
	uint8_t *data = malloc(5 + (size_t)n);
	enum rc r;

	if (!data)
		return RC_NOMEM;
	data[0] = k == p->n_full; /* BFINAL on the last block, BTYPE 00 (stored) */
	data[1] = (uint8_t)n;
	data[2] = (uint8_t)(n >> 8);
	data[3] = (uint8_t)~n;
	data[4] = (uint8_t)(~n >> 8);
	r = stream_bytes(p, kept, k * PNGS_BLOCK, n, data + 5);
	if (r == RC_OK)
		put_chunk(b, "IDAT", data, 5 + n);
	free(data);
	return r;
}

/* The Adler-32 covers every row: one pass, a band of rows at a time. A band about the size of
 * a stored block, as stream_bytes fetches (fetch_rows): the buffers on the way (the rows
 * callback decodes into its own) stay below the 128 KiB where each would be freshly mapped
 * pages. */
static enum rc put_tail(const struct pngs *p, struct buf *b)
{
	uint32_t band = fetch_rows(p);
	uint32_t adler = 1;
	uint8_t be[4], *px;
	enum rc r = RC_OK;

	px = malloc((size_t)((p->row_bytes - 1) * band));
	if (!px)
		return RC_NOMEM;
	for (uint32_t y = 0; y < p->h && r == RC_OK; y += band) {
		uint32_t n = p->h - y < band ? p->h - y : band;
		static const uint8_t filter = 0;

		r = p->rows(p->ctx, y, n, px);
		for (uint32_t i = 0; r == RC_OK && i < n; i++) {
			adler = pngs_adler32(adler, &filter, 1);
			adler = pngs_adler32(adler, px + (size_t)i * (p->row_bytes - 1),
					     (size_t)(p->row_bytes - 1));
		}
	}
	free(px);
	if (r != RC_OK)
		return r;
	be[0] = (uint8_t)(adler >> 24);
	be[1] = (uint8_t)(adler >> 16);
	be[2] = (uint8_t)(adler >> 8);
	be[3] = (uint8_t)adler;
	put_chunk(b, "IDAT", be, 4);
	put_chunk(b, "IEND", NULL, 0);
	return RC_OK;
}

enum rc pngs_render(const struct pngs *p, unsigned part, uint64_t first, struct emit *e)
{
	struct rows_kept kept = {0};
	enum rc r = RC_OK;

	switch (part) {
	case 0:
		put_head(p, &e->b);
		break;
	case 1:
		for (uint64_t k = first; k < p->n_full && r == RC_OK; k++) {
			r = put_block(p, &kept, k, &e->b);
			if (r == RC_OK && !emit_item(e))
				break;
		}
		free(kept.px);
		return r;
	case 2:
		r = put_block(p, &kept, p->n_full, &e->b);
		free(kept.px);
		break;
	case 3:
		r = put_tail(p, &e->b);
		break;
	default:
		return RC_INVAL;
	}
	if (r == RC_OK)
		emit_item(e);
	return r;
}
