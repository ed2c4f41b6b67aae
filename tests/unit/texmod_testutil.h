/* Helpers for the texture-mod tests: arenas in memory, pictures made and served, writes. */
#ifndef PSGFS_TEXMOD_TESTUTIL_H
#define PSGFS_TEXMOD_TESTUTIL_H

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "sanitizer.h"
#if PSGFS_ASAN
#include <sanitizer/asan_interface.h>
#endif
#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/tex_encode.h"
#include "psgfs/formats/texmod.h"
#include "psgfs/formats/texture.h"

/* An arena held in memory and opened. */
struct ar {
	uint8_t *p;
	size_t n;
	struct src_mem m;
	struct src s;
	struct arena a;
	struct diag d;
	bool shared; /* p is not ours: ar_close leaves it */
};

static inline enum rc ar_open(struct ar *x, uint8_t *p, size_t n)
{
	x->p = p;
	x->n = n;
	x->shared = false;
	diag_init(&x->d);
	src_init_mem(&x->s, &x->m, p, n);
	return arena_open(&x->s, &x->a, &x->d);
}

static inline void ar_close(struct ar *x)
{
	arena_free(&x->a);
	diag_free(&x->d);
	if (!x->shared)
		free(x->p);
	memset(x, 0, sizeof *x);
}

static inline uint32_t tm_rnd(uint32_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 17;
	*st ^= *st << 5;
	return *st;
}

/* A picture: smooth gradients, an 8-pixel checker and some noise, per face and level. */
static inline void tm_pattern(uint32_t seed, uint32_t face, uint32_t level, uint32_t w, uint32_t h,
			      bool alpha, uint8_t *rgba)
{
	uint32_t st = seed * 2654435761u + face * 97 + level * 13 + 1;

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint8_t *p = rgba + 4 * ((size_t)y * w + x);
			uint32_t c = ((x >> 3) ^ (y >> 3)) & 1, n = tm_rnd(&st) & 15;

			p[0] = (uint8_t)(w > 1 ? x * 255 / (w - 1) : 128);
			p[1] = (uint8_t)(h > 1 ? y * 255 / (h - 1) : 128);
			p[2] = (uint8_t)((c ? 180 : 60) + 9 * face + 5 * level + n);
			p[3] = (uint8_t)(alpha ? (c ? 255 : 40 + (x * 7 + y * 3) % 200) : 255);
		}
}

/* Canonical payload (faces x mips, face-major) of a shape, encoded from tm_pattern. */
static inline uint8_t *tm_payload(const struct texmod_shape *s, uint32_t seed, bool alpha,
				  size_t *len)
{
	struct buf b;
	bool comp = tex_kind_compressed(s->kind);

	buf_init(&b);
	for (uint32_t f = 0; f < s->faces; f++)
		for (uint32_t l = 0; l < s->mips; l++) {
			uint32_t w = tex_dim(s->width, l), h = tex_dim(s->height, l);
			uint32_t unit = comp ? 4 : 1, bw = comp ? (w + 3) / 4 : w;
			uint8_t *rgba = calloc((size_t)w * (h + 4) * 4, 1);
			uint8_t *row = malloc((size_t)bw * tex_kind_bpp(s->kind));

			tm_pattern(seed, f, l, w, h, alpha, rgba);
			for (uint32_t y = 0; y < h; y += unit) {
				uint32_t rows = h - y < unit ? h - y : unit;

				tex_encode_units(s->kind, rgba + (size_t)y * w * 4, w, rows, row);
				buf_put(&b, row, (size_t)bw * tex_kind_bpp(s->kind));
			}
			free(rgba);
			free(row);
		}
	return buf_steal(&b, len);
}

/* A DDS file of a shape and canonical payload (the header psgfs itself writes). */
static inline uint8_t *tm_dds(const struct texmod_shape *s, const uint8_t *payload, size_t plen,
			      size_t *len)
{
	struct tex_desc d;
	struct buf b;

	memset(&d, 0, sizeof d);
	d.kind = s->kind;
	d.width = s->width;
	d.height = s->height;
	d.mips = d.have_mips = s->mips;
	d.faces = d.have_faces = s->faces;
	buf_init(&b);
	tex_dds_header(&d, &b);
	buf_put(&b, payload, plen);
	return buf_steal(&b, len);
}

/* What psgfs serves for a texture: its DDS or its PNG file. */
static inline uint8_t *tm_served(struct ar *x, uint32_t tex, bool png, size_t *len)
{
	struct texture_image *img;
	struct buf b;

	if (texture_load(&x->s, &x->a, tex, &img, NULL) != RC_OK)
		return NULL;
	buf_init(&b);
	if (png)
		texture_png(&x->s, img, &b);
	else
		texture_dds(img, &b);
	texture_image_free(img);
	return buf_steal(&b, len);
}

/*
 * A destination kept between writes and grown only. An arena is megabytes, and a fresh one per
 * write was, under ASan, a fresh mapping with its page faults and clearing each time (the
 * largest cost of test_texmod). texmod_write writes every byte of the arena it returns
 * (arena_patch_write copies or clears each region whole); the bytes are poisoned first all the
 * same, so that a byte it skipped cannot pass for the previous write's. The arena is placed at
 * the end of the buffer (16-aligned), so that a write past it still meets ASan's redzone.
 */
struct tm_dst {
	uint8_t *p;
	size_t cap;
	bool unread; /* no check reads what is written there: not poisoned */
};

static inline uint8_t *tm_dst_room(struct tm_dst *d, size_t n)
{
	uint8_t *p;

	n = n ? n : 1;
	d->p = xroom_n(d->p, n, &d->cap, 1);
	if (!d->p)
		return NULL;
	p = d->p + ((d->cap - n) & ~(size_t)15); /* aligned as malloc's */
#if PSGFS_ASAN
	/* The room around the arena is poisoned, so ASan sees a write or read past either end of
	 * it to the byte, as if it were a fresh allocation of n. */
	ASAN_UNPOISON_MEMORY_REGION(d->p, d->cap);
	ASAN_POISON_MEMORY_REGION(d->p, (size_t)(p - d->p));
	ASAN_POISON_MEMORY_REGION(p + n, d->cap - (size_t)(p - d->p) - n);
#endif
	if (!d->unread)
		memset(p, 0xA5, n); /* not the last write's arena */
	return p;
}

static inline void tm_dst_free(struct tm_dst *d)
{
	free(d->p);
	d->p = NULL;
	d->cap = 0;
}

/* Write a picture over texture tex into d (NULL: a new buffer the caller frees): the new
 * arena, or NULL with why. */
static inline uint8_t *tm_apply_into(struct ar *x, uint32_t tex, enum texmod_input in,
				     const uint8_t *pic, size_t plen, size_t *outlen, enum rc *r,
				     char *why, size_t whylen, struct texmod_plan *plan_out,
				     struct tm_dst *d)
{
	struct src_mem pm;
	struct src ps;
	struct texmod_plan p;
	uint8_t *out = NULL;

	*outlen = 0;
	if (plan_out)
		memset(plan_out, 0, sizeof *plan_out);
	src_init_mem(&ps, &pm, pic, plen);
	*r = texmod_plan(&x->s, &x->a, tex, in, &ps, &p, why, whylen);
	if (*r != RC_OK)
		return NULL;
	out = d ? tm_dst_room(d, (size_t)p.out_size) : malloc(p.out_size ? (size_t)p.out_size : 1);
	p.threads = 3; /* the output must not depend on it (test_convert compares) */
	*r = texmod_write(&x->s, &x->a, &ps, &p, out, why, whylen);
	*outlen = (size_t)p.out_size;
	if (plan_out)
		*plan_out = p;
	texmod_plan_free(&p);
	if (*r != RC_OK) {
		if (!d)
			free(out);
		return NULL;
	}
	return out;
}

/* Write a picture over texture tex: the new arena (the caller frees it), or NULL with why. */
static inline uint8_t *tm_apply(struct ar *x, uint32_t tex, enum texmod_input in,
				const uint8_t *pic, size_t plen, size_t *outlen, enum rc *r,
				char *why, size_t whylen, struct texmod_plan *plan_out)
{
	return tm_apply_into(x, tex, in, pic, plen, outlen, r, why, whylen, plan_out, NULL);
}

struct tm_pngw {
	struct buf b;
};

static inline void tm_png_write_cb(png_structp png, png_bytep data, size_t n)
{
	struct tm_pngw *w = png_get_io_ptr(png);

	buf_put(&w->b, data, n);
}

static inline void tm_png_flush_cb(png_structp png)
{
	(void)png;
}

/* One row of an RGBA picture in a PNG colour type and depth (values must be representable:
 * grey from red, a palette of at most 256 colours). */
static inline void tm_png_row(const uint8_t *src, uint32_t w, int ct, int depth, png_colorp pal,
			      png_bytep trns, int *npal, uint8_t *row)
{
	int bytes = depth == 16 ? 2 : 1;

	memset(row, 0, (size_t)w * 8);
	for (uint32_t x = 0; x < w; x++) {
		const uint8_t *p = src + 4 * x;
		int idx = 0;

		switch (ct) {
		case PNG_COLOR_TYPE_GRAY:
			if (depth < 8) {
				uint32_t v = p[0] >> (8 - depth), bit = x * depth;

				row[bit / 8] |= (uint8_t)(v << (8 - depth - bit % 8));
			} else {
				row[x * bytes] = p[0];
				if (bytes == 2)
					row[x * 2 + 1] = p[0];
			}
			break;
		case PNG_COLOR_TYPE_PALETTE:
			for (idx = 0; idx < *npal; idx++)
				if (pal[idx].red == p[0] && pal[idx].green == p[1] &&
				    pal[idx].blue == p[2] && trns[idx] == p[3])
					break;
			if (idx == *npal && *npal < 256) {
				pal[idx] = (png_color){p[0], p[1], p[2]};
				trns[idx] = p[3];
				(*npal)++;
			}
			row[x] = (uint8_t)idx;
			break;
		default: {
			int ch = ct == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
				 : ct == PNG_COLOR_TYPE_RGB	 ? 3
								 : 4;
			uint8_t v[4] = {p[0], p[1], p[2], p[3]};

			if (ch == 2)
				v[1] = p[3];
			for (int c = 0; c < ch; c++) {
				row[(x * ch + c) * bytes] = v[c];
				if (bytes == 2)
					row[(x * ch + c) * 2 + 1] = v[c];
			}
		}
		}
	}
}

/* A PNG of an RGBA picture in any colour type and depth, interlaced or not (libpng). */
static inline uint8_t *tm_png(const uint8_t *rgba, uint32_t w, uint32_t h, int ct, int depth,
			      bool interlace, size_t *len)
{
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(png);
	png_color pal[256];
	png_byte trns[256];
	int npal = 0;
	struct tm_pngw wr;
	uint8_t **rows = calloc(h, sizeof *rows);

	buf_init(&wr.b);
	for (uint32_t y = 0; y < h; y++) {
		rows[y] = calloc((size_t)w * 8 + 1, 1);
		tm_png_row(rgba + (size_t)y * w * 4, w, ct, depth, pal, trns, &npal, rows[y]);
	}
	if (setjmp(png_jmpbuf(png)))
		abort();
	png_set_write_fn(png, &wr, tm_png_write_cb, tm_png_flush_cb);
	png_set_IHDR(png, info, w, h, depth, ct,
		     interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	if (ct == PNG_COLOR_TYPE_PALETTE) {
		png_set_PLTE(png, info, pal, npal);
		png_set_tRNS(png, info, trns, npal, NULL);
	}
	png_write_info(png, info);
	png_write_image(png, rows);
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	for (uint32_t y = 0; y < h; y++)
		free(rows[y]);
	free(rows);
	return buf_steal(&wr.b, len);
}

/* The usual case: RGBA, 8 bits. */
static inline uint8_t *tm_png_rgba(const uint8_t *rgba, uint32_t w, uint32_t h, size_t *len)
{
	return tm_png(rgba, w, h, PNG_COLOR_TYPE_RGB_ALPHA, 8, false, len);
}

static inline double tm_psnr(const uint8_t *a, const uint8_t *b, size_t px, int channels)
{
	double se = 0;

	for (size_t i = 0; i < px; i++)
		for (int c = 0; c < channels; c++) {
			double d = (double)a[4 * i + c] - b[4 * i + c];

			se += d * d;
		}
	se /= (double)px * channels;
	return se == 0 ? 99.0 : 10.0 * __builtin_log10(255.0 * 255.0 / se);
}

#endif
