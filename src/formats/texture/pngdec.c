/*
 * PNG input through libpng (pngdec.h). libpng reports errors by longjmp: every function
 * that calls into it sets its own jump point first, and nothing it touches after the jump
 * lives in a register (the state is in struct pngdec).
 */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/pngdec.h"

#define CHUNK_MAX (8u << 20) /* largest ancillary chunk libpng may allocate for */

struct pngdec {
	const struct src *s;
	uint64_t pos;
	png_structp png;
	png_infop info;
	uint32_t w, h, y;
	uint8_t *whole;	 /* interlaced pictures: every row, decoded on opening */
	png_bytep *rows; /* ... and libpng's row pointers into it */
	char err[160];
	char warn[160]; /* libpng says why IHDR is invalid in warnings */
	enum rc err_rc;
};

static void on_error(png_structp png, png_const_charp msg)
{
	struct pngdec *p = png_get_error_ptr(png);

	if (!p->err[0])
		snprintf(p->err, sizeof p->err, "%s", msg);
	png_longjmp(png, 1);
}

/* Ancillary chunk problems (libpng skips the chunk), and the reasons before an error. */
static void on_warning(png_structp png, png_const_charp msg)
{
	struct pngdec *p = png_get_error_ptr(png);

	if (!p->warn[0])
		snprintf(p->warn, sizeof p->warn, "%s", msg);
}

static void on_read(png_structp png, png_bytep dst, size_t n)
{
	struct pngdec *p = png_get_io_ptr(png);

	if (p->pos > p->s->size || n > p->s->size - p->pos) {
		p->err_rc = RC_TRUNCATED;
		png_error(png, "truncated: the file ends before the picture does");
	}
	if (src_read(p->s, p->pos, dst, n) != RC_OK) {
		p->err_rc = RC_IO;
		png_error(png, "the file cannot be read");
	}
	p->pos += n;
}

static enum rc failed(struct pngdec *p, char *why, size_t whylen)
{
	if (why && whylen)
		snprintf(why, whylen, "PNG: %s", p->err[0] ? p->err : "damaged");
	return p->err_rc ? p->err_rc : RC_CORRUPT;
}

/* Any colour type and depth to RGBA8 (pngdec.h). */
static void transforms(struct pngdec *p)
{
	int ct = png_get_color_type(p->png, p->info);

	png_set_expand(p->png); /* palette to RGB, grey below 8 bits to 8, tRNS to alpha */
	png_set_scale_16(p->png);
	png_set_gray_to_rgb(p->png);
	if (!(ct & PNG_COLOR_MASK_ALPHA) && !png_get_valid(p->png, p->info, PNG_INFO_tRNS))
		png_set_add_alpha(p->png, 0xFF, PNG_FILLER_AFTER);
}

/* May jump out of png_read_image: what it allocates hangs on p. */
static enum rc decode_whole(struct pngdec *p)
{
	p->rows = calloc(p->h, sizeof *p->rows);
	p->whole = malloc((size_t)p->w * p->h * 4);
	if (!p->rows || !p->whole)
		return RC_NOMEM;
	for (uint32_t y = 0; y < p->h; y++)
		p->rows[y] = p->whole + (size_t)y * p->w * 4;
	png_read_image(p->png, p->rows);
	return RC_OK;
}

static enum rc open_png(struct pngdec *p, uint32_t max_w, uint32_t max_h, char *why, size_t whylen)
{
	volatile enum rc r = RC_OK;

	if (setjmp(png_jmpbuf(p->png)))
		return failed(p, why, whylen);
	png_set_user_limits(p->png, max_w, max_h);
	png_set_chunk_malloc_max(p->png, CHUNK_MAX);
	png_set_read_fn(p->png, p, on_read);
	png_read_info(p->png, p->info);
	p->w = png_get_image_width(p->png, p->info);
	p->h = png_get_image_height(p->png, p->info);
	transforms(p);
	if (png_set_interlace_handling(p->png) > 1) {
		if ((uint64_t)p->w * p->h > PNGDEC_WHOLE_MAX) {
			if (why && whylen)
				snprintf(why, whylen,
					 "PNG: an interlaced picture of %ux%u is larger than %u "
					 "pixels; save "
					 "it without interlacing",
					 p->w, p->h, PNGDEC_WHOLE_MAX);
			return RC_UNSUPPORTED;
		}
		png_read_update_info(p->png, p->info);
		r = decode_whole(p);
	} else {
		png_read_update_info(p->png, p->info);
	}
	if (r == RC_OK && png_get_rowbytes(p->png, p->info) != (size_t)p->w * 4) {
		snprintf(p->err, sizeof p->err, "unexpected row size after conversion");
		return failed(p, why, whylen);
	}
	return r;
}

enum rc pngdec_open(const struct src *s, uint32_t max_w, uint32_t max_h, struct pngdec **out,
		    uint32_t *w, uint32_t *h, char *why, size_t whylen)
{
	uint8_t sig[8];
	struct pngdec *p;
	enum rc r;

	*out = NULL;
	if (why && whylen)
		why[0] = 0;
	if (s->size < 8 || src_read(s, 0, sig, 8) != RC_OK || png_sig_cmp(sig, 0, 8)) {
		if (why && whylen)
			snprintf(why, whylen, "not a PNG file (no PNG signature)");
		return RC_FORMAT;
	}
	p = calloc(1, sizeof *p);
	if (!p)
		return RC_NOMEM;
	p->s = s;
	p->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, p, on_error, on_warning);
	p->info = p->png ? png_create_info_struct(p->png) : NULL;
	r = p->info ? open_png(p, max_w, max_h, why, whylen) : RC_NOMEM;
	if (r != RC_OK) {
		if (strstr(p->err, "exceeds user limit") || strstr(p->warn, "exceeds user limit")) {
			if (why && whylen)
				snprintf(why, whylen, "PNG: larger than %ux%u (%s)", max_w, max_h,
					 strstr(p->err, "exceeds") ? p->err : p->warn);
			r = RC_UNSUPPORTED;
		}
		pngdec_close(p);
		return r;
	}
	*w = p->w;
	*h = p->h;
	*out = p;
	return RC_OK;
}

enum rc pngdec_rows(struct pngdec *p, uint32_t n, uint8_t *rgba, char *why, size_t whylen)
{
	if (n > p->h - p->y)
		return RC_INVAL;
	if (p->whole) {
		memcpy(rgba, p->whole + (size_t)p->y * p->w * 4, (size_t)n * p->w * 4);
		p->y += n;
		return RC_OK;
	}
	if (setjmp(png_jmpbuf(p->png)))
		return failed(p, why, whylen);
	for (uint32_t i = 0; i < n; i++, p->y++)
		png_read_row(p->png, rgba + (size_t)i * p->w * 4, NULL);
	return RC_OK;
}

enum rc pngdec_finish(struct pngdec *p, char *why, size_t whylen)
{
	if (p->y != p->h)
		return RC_INVAL;
	if (setjmp(png_jmpbuf(p->png)))
		return failed(p, why, whylen);
	png_read_end(p->png, NULL);
	return RC_OK;
}

void pngdec_close(struct pngdec *p)
{
	if (!p)
		return;
	if (p->png)
		png_destroy_read_struct(&p->png, p->info ? &p->info : NULL, NULL);
	free(p->rows);
	free(p->whole);
	free(p);
}
