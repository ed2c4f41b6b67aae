/*
 * PNG writing without compression: the image data is one zlib stream of stored deflate blocks,
 * so a PNG's exact size follows from its dimensions alone and any byte range of it can be
 * produced from the rows it covers (include/psgfs/base/emit.h). Pixels come row by row from a
 * callback. Every reader accepts stored blocks; the price is size (about the raw pixels).
 *
 * Layout, as parts of items: [signature, IHDR, an IDAT holding the zlib header] [full IDAT
 * chunks, each one stored block of 65535 bytes of filtered rows] [the last, shorter block]
 * [an IDAT holding the Adler-32 of all rows, IEND].
 */
#ifndef PSGFS_PNG_H
#define PSGFS_PNG_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/emit.h"
#include "psgfs/base/result.h"

#define PNGS_BLOCK 65535u

/* Fill rows [y0, y0+n) as n * w * channels bytes (RGB or RGBA, 8 bits each). */
typedef enum rc (*pngs_rows_fn)(const void *ctx, uint32_t y0, uint32_t n, uint8_t *px);

struct pngs {
	uint32_t w, h;
	unsigned channels;  /* 3 or 4 */
	uint64_t row_bytes; /* 1 filter byte + w * channels */
	uint64_t raw;	    /* row_bytes * h: the zlib stream's payload */
	uint64_t n_full;    /* full blocks */
	uint32_t last;	    /* bytes in the last block (1..65535) */
	pngs_rows_fn rows;
	const void *ctx;
};

/* RC_INVAL for an empty or oversized image (rows beyond what a stored stream can carry). */
enum rc pngs_init(struct pngs *p, uint32_t w, uint32_t h, bool alpha, pngs_rows_fn rows,
		  const void *ctx);
#define PNGS_PARTS 4
/* Items and item size of part i (0..3): every part has fixed-size items. */
void pngs_part(const struct pngs *p, unsigned part, uint64_t *n_items, uint32_t *item_size);
enum rc pngs_render(const struct pngs *p, unsigned part, uint64_t first, struct emit *e);
uint64_t pngs_size(const struct pngs *p);

uint32_t pngs_crc32(uint32_t crc, const uint8_t *p, size_t n);
uint32_t pngs_adler32(uint32_t adler, const uint8_t *p, size_t n);

#endif
