/*
 * RGBA8 / RGB8 to PNG through libpng with a memory write callback. Deterministic: fixed
 * compression level and filter heuristics, no tIME/tEXt chunks. libpng reports errors by
 * longjmp, so everything that must be freed afterwards is allocated before setjmp.
 */
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psgfs/texture.h"

static void png_buf_write(png_structp png, png_bytep data, png_size_t len)
{
	struct buf *b = png_get_io_ptr(png);

	buf_put(b, data, len);
}

static void png_buf_flush(png_structp png)
{
	(void)png;
}

static void png_quiet_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

static void png_fail(png_structp png, png_const_charp msg)
{
	(void)msg;
	png_longjmp(png, 1);
}

enum rc pngw_encode_rgba(const uint8_t *rgba, uint32_t w, uint32_t h, bool alpha, struct buf *out)
{
	uint32_t ch = alpha ? 4 : 3;
	uint64_t rowb, total;
	uint8_t *pix;
	png_bytep *rows;
	png_structp png;
	png_infop info;
	volatile enum rc r = RC_OK;

	if (w == 0 || h == 0 || w > PNG_USER_WIDTH_MAX || h > PNG_USER_HEIGHT_MAX)
		return RC_INVAL;
	if (!mul_ok(w, ch, &rowb) || !mul_ok(rowb, h, &total) || total > SIZE_MAX)
		return RC_NOMEM;
	pix = malloc(total ? (size_t)total : 1);
	rows = xcalloc_n(h, sizeof *rows);
	if (!pix || !rows) {
		free(pix);
		free(rows);
		return RC_NOMEM;
	}
	for (uint64_t i = 0, n = (uint64_t)w * h; i < n; i++)
		memcpy(pix + i * ch, rgba + i * 4, ch);
	for (uint32_t y = 0; y < h; y++)
		rows[y] = pix + (size_t)y * rowb;

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_fail, png_quiet_warning);
	info = png ? png_create_info_struct(png) : NULL;
	if (!png || !info) {
		png_destroy_write_struct(&png, NULL);
		free(pix);
		free(rows);
		return RC_NOMEM;
	}
	if (setjmp(png_jmpbuf(png))) {
		r = RC_NOMEM;
		goto done;
	}
	png_set_write_fn(png, out, png_buf_write, png_buf_flush);
	png_set_compression_level(png, 6);
	png_set_IHDR(png, info, w, h, 8, alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_rows(png, info, rows);
	png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
	if (out->oom)
		r = RC_NOMEM;
done:
	png_destroy_write_struct(&png, &info);
	free(pix);
	free(rows);
	return r;
}
