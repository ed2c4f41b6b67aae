/*
 * PNG files written by editors, decoded by libpng through a positioned source, row by row:
 * any colour type and bit depth libpng reads (palette, grey, grey + alpha, RGB, RGBA, 1 to 16
 * bits, tRNS transparency) comes out as RGBA8 (16-bit samples rounded, no alpha = 255; no gamma
 * or colour-space conversion: the samples are taken as the texture's). A non-interlaced picture
 * costs a few rows of memory; an interlaced one (Adam7) is decoded whole on opening
 * (width x height x 4 bytes), which the size limit bounds.
 */
#ifndef PSGFS_PNGDEC_H
#define PSGFS_PNGDEC_H

#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/result.h"
#include "psgfs/base/source.h"

struct pngdec;

/* Largest interlaced picture: decoded whole, PNGDEC_WHOLE_MAX pixels x 4 bytes at most. */
#define PNGDEC_WHOLE_MAX (4096u * 4096u)

/*
 * Read the header: RC_FORMAT when it is no PNG file, RC_UNSUPPORTED for a width above max_w,
 * a height above max_h or an interlaced picture of more than PNGDEC_WHOLE_MAX pixels,
 * RC_CORRUPT (damaged) or RC_TRUNCATED (ends early), each with a line in why.
 */
enum rc pngdec_open(const struct src *s, uint32_t max_w, uint32_t max_h, struct pngdec **out,
		    uint32_t *w, uint32_t *h, char *why, size_t whylen);
/* The next n rows as RGBA8 (n * w * 4 bytes); errors as for opening. */
enum rc pngdec_rows(struct pngdec *p, uint32_t n, uint8_t *rgba, char *why, size_t whylen);
/* After the last row: read to the end of the file (every chunk's CRC, IEND), so a damaged or
 * cut file is refused even where its pixels are complete. */
enum rc pngdec_finish(struct pngdec *p, char *why, size_t whylen);
void pngdec_close(struct pngdec *p);

#endif
