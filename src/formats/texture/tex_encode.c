/*
 * RGBA8 to canonical texels and streamed mip chains (tex_encode.h). Block kinds go through
 * libsquish (dxt_squish.cc); everything else is arithmetic.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "formats/texture/dxt_squish.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/tex_encode.h"

/* 8 bits to n bits, rounded: the inverse of bit replication (tex_x5, tex_x6) and of x17. */
static uint32_t q_bits(uint32_t v, uint32_t max)
{
	return (v * max + 127) / 255;
}

static void st16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* One texel, exactly: tex_canon_rgba of the result gives the nearest picture the kind holds. */
static void encode_texel(enum tex_kind k, const uint8_t *p, uint8_t *d)
{
	switch (k) {
	case TEXK_BGRA8:
	case TEXK_BGRX8:
		d[0] = p[2], d[1] = p[1], d[2] = p[0];
		d[3] = k == TEXK_BGRA8 ? p[3] : 0xFF;
		return;
	case TEXK_R5G6B5:
		st16(d, q_bits(p[0], 31) << 11 | q_bits(p[1], 63) << 5 | q_bits(p[2], 31));
		return;
	case TEXK_A1R5G5B5:
		st16(d, (p[3] >= 128u) << 15 | q_bits(p[0], 31) << 10 | q_bits(p[1], 31) << 5 |
			    q_bits(p[2], 31));
		return;
	case TEXK_A4R4G4B4:
		st16(d, q_bits(p[3], 15) << 12 | q_bits(p[0], 15) << 8 | q_bits(p[1], 15) << 4 |
			    q_bits(p[2], 15));
		return;
	case TEXK_L8: /* Rec. 601 luma; a grey (v, v, v) gives v back */
		d[0] = (uint8_t)((77u * p[0] + 150u * p[1] + 29u * p[2] + 128u) >> 8);
		return;
	default:
		return;
	}
}

static enum dxt_squish_kind squish_kind(enum tex_kind k)
{
	return k == TEXK_DXT1	? DXT_SQUISH_DXT1
	       : k == TEXK_DXT3 ? DXT_SQUISH_DXT3
	       : k == TEXK_DXT5 ? DXT_SQUISH_DXT5
				: DXT_SQUISH_BC5;
}

void tex_encode_units(enum tex_kind k, const uint8_t *rgba, uint32_t w, uint32_t rows,
		      uint8_t *canon)
{
	uint32_t bpp = tex_kind_bpp(k);

	if (!tex_kind_compressed(k)) {
		for (uint32_t x = 0; x < w; x++)
			encode_texel(k, rgba + 4 * (size_t)x, canon + (size_t)x * bpp);
		return;
	}
	for (uint32_t bx = 0; bx < (w + 3) / 4; bx++) {
		uint8_t px[64] = {0};
		int mask = 0;

		for (uint32_t y = 0; y < 4 && y < rows; y++)
			for (uint32_t x = 0; x < 4 && bx * 4 + x < w; x++) {
				memcpy(px + 4 * (y * 4 + x),
				       rgba + 4 * ((size_t)y * w + bx * 4 + x), 4);
				mask |= 1 << (y * 4 + x);
			}
		dxt_squish_block(px, mask, canon + (size_t)bx * bpp, squish_kind(k));
	}
}

struct rows_job {
	enum tex_kind k;
	const uint8_t *rgba;
	uint32_t w, rows, u0, u1; /* pixel rows in all, unit rows [u0, u1) */
	uint8_t *canon;
};

static void *rows_run(void *arg)
{
	const struct rows_job *j = arg;
	uint64_t rb = (uint64_t)((j->w + 3) / 4) * tex_kind_bpp(j->k);

	for (uint32_t u = j->u0; u < j->u1; u++) {
		uint32_t left = j->rows - 4 * u;

		tex_encode_units(j->k, j->rgba + (size_t)u * 4 * j->w * 4, j->w,
				 left < 4 ? left : 4, j->canon + u * rb);
	}
	return NULL;
}

void tex_encode_rows(enum tex_kind k, const uint8_t *rgba, uint32_t w, uint32_t rows,
		     uint8_t *canon, unsigned threads)
{
	struct rows_job job[TEX_ENCODE_MAX_THREADS];
	pthread_t tid[TEX_ENCODE_MAX_THREADS];
	uint32_t units = (rows + 3) / 4, per;
	unsigned n = 0;
	bool started[TEX_ENCODE_MAX_THREADS] = {false};

	if (!tex_kind_compressed(k)) {
		tex_encode_units(k, rgba, w * rows, 1, canon);
		return;
	}
	threads = threads < 1			     ? 1
		  : threads > TEX_ENCODE_MAX_THREADS ? TEX_ENCODE_MAX_THREADS
						     : threads;
	/* Threads only for work worth one: a few hundred blocks each. */
	while (threads > 1 && (uint64_t)units * ((w + 3) / 4) < 256ull * threads)
		threads--;
	per = (units + threads - 1) / threads;
	for (uint32_t u = 0; u < units; u += per, n++)
		job[n] = (struct rows_job){
		    k, rgba, w, rows, u, u + per < units ? u + per : units, canon};
	for (unsigned i = 1; i < n; i++)
		started[i] = pthread_create(&tid[i], NULL, rows_run, &job[i]) == 0;
	rows_run(&job[0]);
	for (unsigned i = 1; i < n; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else
			rows_run(&job[i]); /* no thread to be had: done here */
	}
}

uint32_t tex_chain_levels(uint32_t w, uint32_t h)
{
	uint32_t n = 0;

	for (uint32_t v = w > h ? w : h; v; v >>= 1)
		n++;
	return n;
}

/* ---- the streamed box filter ---- */

struct mip_level {
	uint32_t sw, sh, dw, dh; /* source (the level above) and this level's sizes */
	uint32_t y_in;		 /* next source row */
	uint32_t *acc;		 /* dw * 4 sums of the current row */
	uint8_t *out;		 /* dw * 4 */
};

struct tex_mipgen {
	uint32_t w, h, levels, y;
	tex_mip_fn fn;
	void *ctx;
	struct mip_level *lv; /* lv[0] unused */
};

static uint32_t half(uint32_t v)
{
	return v > 1 ? v / 2 : 1;
}

/* The source texels [lo, hi] of destination texel i along a side of s texels (d = half). */
static void taps(uint32_t s, uint32_t d, uint32_t i, uint32_t *lo, uint32_t *hi)
{
	if (s == 1) {
		*lo = *hi = 0;
		return;
	}
	*lo = 2 * i;
	*hi = i == d - 1 && (s & 1) ? 2 * i + 2 : 2 * i + 1;
}

enum rc tex_mipgen_new(uint32_t w, uint32_t h, uint32_t levels, tex_mip_fn fn, void *ctx,
		       struct tex_mipgen **out)
{
	struct tex_mipgen *g;

	*out = NULL;
	if (!w || !h || !levels || levels > tex_chain_levels(w, h) || !fn)
		return RC_INVAL;
	g = calloc(1, sizeof *g);
	if (!g || !(g->lv = calloc(levels, sizeof *g->lv))) {
		free(g);
		return RC_NOMEM;
	}
	*g = (struct tex_mipgen){w, h, levels, 0, fn, ctx, g->lv};
	for (uint32_t l = 1; l < levels; l++) {
		struct mip_level *v = &g->lv[l];

		v->sw = l == 1 ? w : g->lv[l - 1].dw;
		v->sh = l == 1 ? h : g->lv[l - 1].dh;
		v->dw = half(v->sw);
		v->dh = half(v->sh);
		v->acc = xcalloc_n((size_t)v->dw * 4, sizeof *v->acc);
		v->out = xcalloc_n(v->dw, 4);
		if (!v->acc || !v->out) {
			tex_mipgen_free(g);
			return RC_NOMEM;
		}
	}
	*out = g;
	return RC_OK;
}

/* Add one source row to level v; true (and v->out filled) when a destination row is done. */
static bool level_add(struct mip_level *v, const uint8_t *src, uint32_t *y_out)
{
	uint32_t y = v->y_in++, i = y / 2 < v->dh ? y / 2 : v->dh - 1, lo, hi, vt, ht;

	for (uint32_t x = 0; x < v->dw; x++) {
		taps(v->sw, v->dw, x, &lo, &hi);
		for (uint32_t s = lo; s <= hi; s++)
			for (int c = 0; c < 4; c++)
				v->acc[4 * x + c] += src[4 * s + c];
	}
	taps(v->sh, v->dh, i, &lo, &hi);
	if (y != hi)
		return false;
	vt = hi - lo + 1;
	for (uint32_t x = 0; x < v->dw; x++) {
		taps(v->sw, v->dw, x, &lo, &hi);
		ht = hi - lo + 1;
		for (int c = 0; c < 4; c++) {
			uint32_t n = ht * vt;

			v->out[4 * x + c] = (uint8_t)((v->acc[4 * x + c] + n / 2) / n);
			v->acc[4 * x + c] = 0;
		}
	}
	*y_out = i;
	return true;
}

enum rc tex_mipgen_push(struct tex_mipgen *g, const uint8_t *rgba)
{
	const uint8_t *cur = rgba;
	uint32_t y;
	enum rc r;

	if (g->y >= g->h)
		return RC_INVAL;
	r = g->fn(g->ctx, 0, g->y++, rgba);
	for (uint32_t l = 1; r == RC_OK && l < g->levels; l++) {
		if (!level_add(&g->lv[l], cur, &y))
			break;
		cur = g->lv[l].out;
		r = g->fn(g->ctx, l, y, cur);
	}
	return r;
}

void tex_mipgen_free(struct tex_mipgen *g)
{
	if (!g)
		return;
	for (uint32_t l = 1; l < g->levels; l++) {
		free(g->lv[l].acc);
		free(g->lv[l].out);
	}
	free(g->lv);
	free(g);
}
