/*
 * Pictures to canonical texels (include/psgfs/formats/tex_kind.h), the inverse of
 * tex_canon_rgba: DXT1/3/5 and ATI2 blocks through libsquish (cluster fit), the uncompressed
 * kinds exactly (rounded to the nearest value the format holds, so any canonical texel decoded
 * to RGBA encodes back to itself). And the mip chain of a picture, built row by row.
 */
#ifndef PSGFS_TEX_ENCODE_H
#define PSGFS_TEX_ENCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/result.h"
#include "psgfs/formats/tex_kind.h"

/*
 * One unit row of a level w pixels wide: rgba holds `rows` pixel rows of w RGBA8 pixels (1
 * for uncompressed kinds; 1 to 4 for block kinds, block rows past `rows` and columns past w
 * are left out of the fit). canon receives units_w * bpp bytes.
 */
void tex_encode_units(enum tex_kind k, const uint8_t *rgba, uint32_t w, uint32_t rows,
		      uint8_t *canon);

/*
 * `rows` pixel rows (a multiple of 4 but for the last unit row of a level) as canonical unit
 * rows, the block kinds split across up to `threads` threads (1 to TEX_ENCODE_MAX_THREADS;
 * fewer when there is too little work): block fitting is what a picture costs.
 */
#define TEX_ENCODE_MAX_THREADS 16u
void tex_encode_rows(enum tex_kind k, const uint8_t *rgba, uint32_t w, uint32_t rows,
		     uint8_t *canon, unsigned threads);

/*
 * The mip chain of a w x h picture, streamed: level-0 rows go in top to bottom, and every
 * row of every level comes out through fn as soon as it is complete (level 0's at once).
 * Level L+1 is a box filter of level L: each texel the rounded mean of the 2x2 texels above it
 * (of 3 along a side of odd length, so no texel is dropped; of 1 along a side of 1). Memory:
 * one accumulator row per level. fn's rows are w_L RGBA8 pixels, valid during the call.
 */
typedef enum rc (*tex_mip_fn)(void *ctx, uint32_t level, uint32_t y, const uint8_t *rgba);
struct tex_mipgen;
/* RC_INVAL for an empty size or levels outside 1 .. the chain's length; RC_NOMEM. */
enum rc tex_mipgen_new(uint32_t w, uint32_t h, uint32_t levels, tex_mip_fn fn, void *ctx,
		       struct tex_mipgen **out);
/* The next level-0 row; fn's errors are passed on. RC_INVAL past the last row. */
enum rc tex_mipgen_push(struct tex_mipgen *g, const uint8_t *rgba);
void tex_mipgen_free(struct tex_mipgen *g);

/* Levels of a full chain for w x h (1 + floor(log2(max(w, h)))). */
uint32_t tex_chain_levels(uint32_t w, uint32_t h);

#endif
