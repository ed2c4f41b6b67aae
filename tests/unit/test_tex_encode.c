/*
 * Pictures in: the encoders (exact for uncompressed kinds, libsquish for blocks), the streamed
 * box filter, the DDS reader (every kind psgfs serves, bit-mask layouts, hostile headers) and
 * the PNG reader (every colour type and depth, interlacing, damage).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>

#include "psgfs/formats/dds_read.h"
#include "psgfs/formats/pngdec.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_x360_textures.h"
#include "texmod_testutil.h"

/* ---- encoders ---- */

/* Every canonical value of a kind decodes to RGBA and encodes back to itself. */
static void exact_kind(enum tex_kind k, uint32_t count, uint32_t (*value)(uint32_t i))
{
	uint32_t bpp = tex_kind_bpp(k);
	uint8_t *canon = malloc((size_t)count * bpp), *rgba = malloc((size_t)count * 4);
	uint8_t *back = malloc((size_t)count * bpp);

	for (uint32_t i = 0; i < count; i++) {
		uint32_t v = value(i);

		for (uint32_t b = 0; b < bpp; b++)
			canon[(size_t)i * bpp + b] = (uint8_t)(v >> (8 * b));
	}
	tex_canon_rgba(k, canon, count, 1, rgba);
	tex_encode_units(k, rgba, count, 1, back);
	assert_memory_equal(canon, back, (size_t)count * bpp);
	free(canon);
	free(rgba);
	free(back);
}

static uint32_t v_index(uint32_t i)
{
	return i;
}

static uint32_t v_bgrx(uint32_t i)
{
	uint32_t st = i * 2654435761u + 7;

	return (tm_rnd(&st) & 0xFFFFFF) | 0xFF000000u;
}

static uint32_t v_bgra(uint32_t i)
{
	uint32_t st = i * 2246822519u + 3;

	return tm_rnd(&st);
}

static void test_uncompressed_exact(void **st)
{
	(void)st;
	exact_kind(TEXK_L8, 256, v_index);
	exact_kind(TEXK_R5G6B5, 65536, v_index);
	exact_kind(TEXK_A1R5G5B5, 65536, v_index);
	exact_kind(TEXK_A4R4G4B4, 65536, v_index);
	exact_kind(TEXK_BGRX8, 100000, v_bgrx);
	exact_kind(TEXK_BGRA8, 100000, v_bgra);
}

/* Grey pictures stay grey in L8; colours quantise to the nearest value. */
static void test_uncompressed_rounding(void **st)
{
	const uint8_t px[8] = {9, 9, 9, 255, 255, 4, 128, 120};
	uint8_t c[4];

	(void)st;
	tex_encode_units(TEXK_L8, px, 1, 1, c);
	assert_int_equal(c[0], 9);
	tex_encode_units(TEXK_R5G6B5, px + 4, 1, 1, c);
	/* 255 -> 31, 4 -> round(4 * 63 / 255) = 1, 128 -> round(128 * 31 / 255) = 16 */
	assert_int_equal(ld_u16le(c), 31 << 11 | 1 << 5 | 16);
	tex_encode_units(TEXK_A1R5G5B5, px + 4, 1, 1, c);
	assert_int_equal(ld_u16le(c) >> 15, 0); /* alpha 120 < 128 */
	tex_encode_units(TEXK_A4R4G4B4, px + 4, 1, 1, c);
	assert_int_equal(ld_u16le(c) >> 12, 7); /* round(120 * 15 / 255) */
}

static void test_blocks_quality(void **st)
{
	static const enum tex_kind kinds[] = {TEXK_DXT1, TEXK_DXT3, TEXK_DXT5, TEXK_ATI2};
	const uint32_t w = 64, h = 64;
	uint8_t *src = malloc(w * h * 4), *dec = malloc(w * h * 4), *blocks = malloc(w * h);

	(void)st;
	for (uint32_t y = 0; y < h; y++) /* smooth: what block compression does well on */
		for (uint32_t x = 0; x < w; x++) {
			uint8_t *p = src + 4 * (y * w + x);

			p[0] = (uint8_t)(x * 4), p[1] = (uint8_t)(y * 4), p[2] = (uint8_t)(x + y);
			p[3] = (uint8_t)(255 - 2 * y);
		}
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		enum tex_kind k = kinds[i];
		uint32_t rb = (w / 4) * tex_kind_bpp(k);

		for (uint32_t y = 0; y < h; y += 4)
			tex_encode_units(k, src + y * w * 4, w, 4, blocks + (y / 4) * rb);
		dxt_decode_image(k, blocks, w, h, dec);
		/* ATI2 keeps red and green; DXT1 has no alpha to compare here (alpha >= 128
		 * everywhere above row 64 is not true: only colours are compared) */
		assert_true(tm_psnr(src, dec, w * h, k == TEXK_ATI2 ? 2 : 3) > 38.0);
		if (k == TEXK_DXT3 || k == TEXK_DXT5) {
			double a = 0;

			for (uint32_t j = 0; j < w * h; j++)
				a += abs((int)src[4 * j + 3] - dec[4 * j + 3]);
			assert_true(a / (w * h) < (k == TEXK_DXT3 ? 9.0 : 2.0));
		}
	}
	free(src);
	free(dec);
	free(blocks);
}

/* DXT1 keeps punch-through transparency: alpha below 128 decodes as 0, the rest as 255. */
static void test_dxt1_punch_through(void **st)
{
	uint8_t px[7 * 5 * 4], blocks[2 * 2 * 8], dec[8 * 8 * 4];

	(void)st;
	for (int i = 0; i < 7 * 5; i++) {
		px[4 * i] = (uint8_t)(i * 7), px[4 * i + 1] = 200, px[4 * i + 2] = (uint8_t)(i * 3);
		px[4 * i + 3] = i % 3 == 0 ? 10 : 250;
	}
	tex_encode_units(TEXK_DXT1, px, 7, 4, blocks);
	tex_encode_units(TEXK_DXT1, px + 4 * 7 * 4, 7, 1, blocks + 16);
	dxt_decode_image(TEXK_DXT1, blocks, 7, 5, dec);
	for (int i = 0; i < 7 * 5; i++)
		assert_int_equal(dec[4 * i + 3], i % 3 == 0 ? 0 : 255);
}

/* ---- mip chains ---- */

struct mip_rec {
	uint32_t w[4], rows[4];
	uint8_t last[4][4 * 8];
};

static enum rc mip_cb(void *ctx, uint32_t level, uint32_t y, const uint8_t *rgba)
{
	struct mip_rec *m = ctx;

	assert_int_equal(y, m->rows[level]);
	m->rows[level]++;
	memcpy(m->last[level], rgba, m->w[level] * 4);
	return RC_OK;
}

static void test_mip_box_filter(void **st)
{
	/* 5x3: level 1 is 2x1 (columns {0,1} and {2,3,4}; rows {0,1,2}), level 2 is 1x1 */
	uint8_t px[5 * 3 * 4];
	struct mip_rec m = {{5, 2, 1}, {0}, {{0}}};
	struct tex_mipgen *g;
	uint32_t s0 = 0, s1 = 0;

	(void)st;
	for (int i = 0; i < 15; i++) {
		px[4 * i] = (uint8_t)(i * 11), px[4 * i + 1] = (uint8_t)(255 - i * 3);
		px[4 * i + 2] = 7, px[4 * i + 3] = (uint8_t)(i & 1 ? 255 : 0);
		if (i % 5 < 2)
			s0 += px[4 * i];
		else
			s1 += px[4 * i];
	}
	assert_int_equal(tex_mipgen_new(5, 3, 4, mip_cb, &m, &g), RC_INVAL); /* 3 levels max */
	assert_int_equal(tex_mipgen_new(5, 3, 3, mip_cb, &m, &g), RC_OK);
	for (int y = 0; y < 3; y++)
		assert_int_equal(tex_mipgen_push(g, px + y * 5 * 4), RC_OK);
	assert_int_equal(tex_mipgen_push(g, px), RC_INVAL);
	tex_mipgen_free(g);
	assert_int_equal(m.rows[0], 3);
	assert_int_equal(m.rows[1], 1);
	assert_int_equal(m.rows[2], 1);
	assert_int_equal(m.last[1][0], (s0 + 3) / 6);
	assert_int_equal(m.last[1][4], (s1 + 4) / 9);
	assert_int_equal(m.last[1][2], 7);
	assert_int_equal(m.last[2][0], (m.last[1][0] + m.last[1][4] + 1) / 2);
}

static void test_mip_rows_in_order(void **st)
{
	struct mip_rec m = {{4, 2, 1}, {0}, {{0}}};
	uint8_t row[4 * 4 * 4] = {0};
	struct tex_mipgen *g;

	(void)st;
	/* 4 wide, 16 tall: levels 4x16, 2x8, 1x4 */
	m.w[0] = 4, m.w[1] = 2, m.w[2] = 1, m.w[3] = 1;
	assert_int_equal(tex_mipgen_new(4, 16, 4, mip_cb, &m, &g), RC_OK);
	for (int y = 0; y < 16; y++)
		assert_int_equal(tex_mipgen_push(g, row), RC_OK);
	tex_mipgen_free(g);
	assert_int_equal(m.rows[0], 16);
	assert_int_equal(m.rows[1], 8);
	assert_int_equal(m.rows[2], 4);
	assert_int_equal(m.rows[3], 2);
	assert_int_equal(tex_chain_levels(4, 16), 5);
	assert_int_equal(tex_chain_levels(1, 1), 1);
	assert_int_equal(tex_chain_levels(4096, 3), 13);
}

/* ---- DDS ---- */

static enum rc dds_parse(const uint8_t *p, size_t n, struct dds_read_info *d, char *why)
{
	struct src_mem m;
	struct src s;

	src_init_mem(&s, &m, p, n);
	return dds_read_header(&s, TEXMOD_MAX_SIDE, d, why, 256);
}

/* Every texture psgfs serves as DDS reads back as the same kind and shape. */
static void test_dds_served(void **st)
{
	struct buf b;
	struct ar x;
	size_t n;
	uint32_t seen = 0;

	(void)st;
	buf_init(&b);
	assert_int_equal(gen_psg_textures(NULL, &b, NULL, NULL), RC_OK);
	assert_int_equal(ar_open(&x, b.data, b.len), RC_OK);
	for (uint32_t i = 0; i < x.a.n_dict; i++) {
		struct texture_image *img;
		struct dds_read_info d;
		char why[256];
		uint8_t *dds;

		if (arena_row(&x.a, i)->type_id != RW_T_TEXTURE)
			continue;
		assert_int_equal(texture_load(&x.s, &x.a, i, &img, NULL), RC_OK);
		dds = tm_served(&x, i, false, &n);
		assert_int_equal(dds_parse(dds, n, &d, why), RC_OK);
		assert_true(d.canonical);
		assert_int_equal(d.kind, img->d.kind);
		assert_int_equal(d.width, img->d.width);
		assert_int_equal(d.height, img->d.height);
		assert_int_equal(d.mips, img->d.have_mips);
		assert_int_equal(d.faces, img->d.have_faces);
		assert_int_equal(d.face_bytes * d.faces, img->size);
		texture_image_free(img);
		free(dds);
		seen |= 1u << d.kind;
	}
	ar_close(&x);
	/* every kind but ATI2 (no PS3 format) */
	assert_int_equal(seen, (1u << TEXK_ATI2) - 1);
}

/* A DDS header with a bit-mask pixel format. */
static size_t mask_dds(uint8_t *out, uint32_t w, uint32_t h, uint32_t flags, uint32_t bits,
		       uint32_t r, uint32_t g, uint32_t b, uint32_t a)
{
	struct buf d;
	const uint32_t hdr[] = {0x20534444u, 124, 0x100F, h, w, 0, 0, 1};

	buf_init(&d);
	for (size_t i = 0; i < sizeof hdr / sizeof hdr[0]; i++)
		buf_u32le(&d, hdr[i]);
	buf_zero(&d, 44);
	buf_u32le(&d, 32);
	buf_u32le(&d, flags);
	buf_u32le(&d, 0);
	buf_u32le(&d, bits);
	buf_u32le(&d, r), buf_u32le(&d, g), buf_u32le(&d, b), buf_u32le(&d, a);
	buf_u32le(&d, 0x1000);
	buf_zero(&d, 16);
	assert_int_equal(d.len, 128);
	memcpy(out, d.data, 128);
	buf_free(&d);
	return 128;
}

static void mask_case(uint32_t flags, uint32_t bits, const uint32_t m[4], const uint8_t *texel,
		      const uint8_t want[4], bool canonical)
{
	uint8_t f[128 + 8], tmp[8], px[4];
	struct dds_read_info d;
	struct src_mem sm;
	struct src s;
	char why[256];

	mask_dds(f, 1, 1, flags, bits, m[0], m[1], m[2], m[3]);
	memcpy(f + 128, texel, bits / 8);
	src_init_mem(&s, &sm, f, 128 + bits / 8);
	assert_int_equal(dds_read_header(&s, 4096, &d, why, sizeof why), RC_OK);
	assert_int_equal(d.canonical, canonical);
	assert_int_equal(dds_read_rgba(&s, &d, 0, 0, 0, 1, tmp, px), RC_OK);
	assert_memory_equal(px, want, 4);
}

static void test_dds_masks(void **st)
{
	const uint32_t abgr[4] = {0xFF, 0xFF00, 0xFF0000, 0xFF000000};
	const uint32_t rgb24[4] = {0xFF0000, 0xFF00, 0xFF, 0};
	const uint32_t la[4] = {0xFF, 0, 0, 0xFF00}, a8[4] = {0, 0, 0, 0xFF};
	const uint32_t x555[4] = {0x7C00, 0x3E0, 0x1F, 0},
		       argb[4] = {0xFF0000, 0xFF00, 0xFF, 0xFF000000};
	const uint8_t t1[4] = {10, 20, 30, 40}, t2[3] = {1, 2, 3}, t3[2] = {99, 7};
	const uint8_t t4[1] = {77}, t5[2] = {0x1F, 0x80};

	(void)st;
	mask_case(0x41, 32, abgr, t1, (const uint8_t[4]){10, 20, 30, 40}, false);
	mask_case(0x40, 24, rgb24, t2, (const uint8_t[4]){3, 2, 1, 255}, false);
	mask_case(0x20001, 16, la, t3, (const uint8_t[4]){99, 99, 99, 7}, false);
	mask_case(0x2, 8, a8, t4, (const uint8_t[4]){0, 0, 0, 77}, false);
	/* X1R5G5B5: 0x801F = blue 31, the X bit ignored */
	mask_case(0x40, 16, x555, t5, (const uint8_t[4]){0, 0, 255, 255}, false);
	mask_case(0x41, 32, argb, t1, (const uint8_t[4]){30, 20, 10, 40}, true);
}

/* A valid 8x8 DXT5 DDS with 4 levels, then every way of breaking it. */
static void test_dds_hostile(void **st)
{
	const struct texmod_shape sh = {TEXK_DXT5, 8, 8, 4, 1};
	size_t plen, n;
	uint8_t *pay = tm_payload(&sh, 1, true, &plen), *dds = tm_dds(&sh, pay, plen, &n);
	uint8_t *t = malloc(n + 64);
	struct dds_read_info d;
	char why[256];
	struct {
		size_t off;
		uint32_t v;
		enum rc want;
	} cases[] = {
	    {0, 0x20534445, RC_FORMAT},		  /* magic */
	    {4, 100, RC_CORRUPT},		  /* header size */
	    {76, 0, RC_CORRUPT},		  /* pixel format size */
	    {12, 0, RC_CORRUPT},		  /* height 0 */
	    {16, 5000, RC_UNSUPPORTED},		  /* width above the limit */
	    {28, 5, RC_CORRUPT},		  /* more mips than 8x8 has */
	    {84, 0x34545844, RC_UNSUPPORTED},	  /* DXT4 */
	    {84, 0x31434241, RC_UNSUPPORTED},	  /* unknown fourcc */
	    {80, 0, RC_CORRUPT},		  /* no format flags */
	    {112, 0x200 | 0x800, RC_UNSUPPORTED}, /* a cube map's -X alone: not its first faces */
	    {112, 0x200000, RC_UNSUPPORTED},	  /* volume */
	    {80, 0x200, RC_UNSUPPORTED},	  /* YUV */
	    {88, 12, RC_UNSUPPORTED},		  /* (with RGB flag below) 12-bit texels */
	};

	(void)st;
	assert_int_equal(dds_parse(dds, n, &d, why), RC_OK);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memcpy(t, dds, n);
		t[cases[i].off] = (uint8_t)cases[i].v,
		t[cases[i].off + 1] = (uint8_t)(cases[i].v >> 8);
		t[cases[i].off + 2] = (uint8_t)(cases[i].v >> 16);
		t[cases[i].off + 3] = (uint8_t)(cases[i].v >> 24);
		if (cases[i].off == 88)
			t[80] = 0x40;
		why[0] = 0;
		assert_int_equal(dds_parse(t, n, &d, why), cases[i].want);
		assert_true(why[0] != 0);
	}
	/* truncated anywhere: header, then texels */
	for (size_t cut = 0; cut < n; cut += 7) {
		why[0] = 0;
		assert_int_not_equal(dds_parse(dds, cut, &d, why), RC_OK);
		assert_true(why[0] != 0);
	}
	/* bytes after the texels are ignored */
	memcpy(t, dds, n);
	memset(t + n, 0xEE, 64);
	assert_int_equal(dds_parse(t, n + 64, &d, why), RC_OK);
	/* DX10: an array of 2, a 3D resource, an unknown DXGI format */
	for (int c = 0; c < 3; c++) {
		uint8_t dx[148];

		memcpy(dx, dds, 128);
		memcpy(dx + 84, "DX10", 4);
		memset(dx + 128, 0, 20);
		dx[128] = c == 2 ? 99 : 77;
		dx[132] = c == 1 ? 4 : 3;
		dx[140] = c == 0 ? 2 : 1;
		assert_int_equal(dds_parse(dx, sizeof dx, &d, why), RC_UNSUPPORTED);
		dx[128] = 77, dx[132] = 3, dx[140] = 1;
		assert_int_equal(dds_parse(dx, sizeof dx, &d, why), RC_TRUNCATED);
	}
	/* random garbage, with and without the magic: refused, never read past the end */
	for (uint32_t k = 0, s = 99; k < 3000; k++) {
		size_t len = 1 + tm_rnd(&s) % 200;

		for (size_t j = 0; j < len; j++)
			t[j] = (uint8_t)tm_rnd(&s);
		if (k & 1 && len >= 4)
			memcpy(t, "DDS ", 4);
		if (k % 4 == 1 && len >= 80)
			t[4] = 124, t[5] = t[6] = t[7] = 0, t[76] = 32, t[77] = t[78] = t[79] = 0;
		(void)dds_parse(t, len, &d, why);
	}
	free(pay);
	free(dds);
	free(t);
}

/* ---- PNG ---- */

static enum rc png_decode(const uint8_t *p, size_t n, uint32_t maxw, uint32_t maxh, uint8_t **rgba,
			  uint32_t *w, uint32_t *h, char *why)
{
	struct src_mem m;
	struct src s;
	struct pngdec *d;
	enum rc r;

	*rgba = NULL;
	src_init_mem(&s, &m, p, n);
	r = pngdec_open(&s, maxw, maxh, &d, w, h, why, 256);
	if (r != RC_OK)
		return r;
	*rgba = malloc((size_t)*w * *h * 4);
	for (uint32_t y = 0; y < *h && r == RC_OK; y++)
		r = pngdec_rows(d, 1, *rgba + (size_t)y * *w * 4, why, 256);
	if (r == RC_OK)
		r = pngdec_finish(d, why, 256);
	pngdec_close(d);
	if (r != RC_OK) {
		free(*rgba);
		*rgba = NULL;
	}
	return r;
}

/* Pixels every colour type and depth can hold exactly, for the source of each case. */
static void png_source(int ct, int depth, uint32_t w, uint32_t h, uint8_t *px)
{
	for (uint32_t i = 0; i < w * h; i++) {
		uint8_t *p = px + 4 * i;
		uint32_t v = (i * 37 + i / w * 11) & 255;

		if (ct == PNG_COLOR_TYPE_GRAY && depth < 8)
			v = (v >> (8 - depth)) * 255 / ((1u << depth) - 1);
		if (ct == PNG_COLOR_TYPE_PALETTE)
			v &= 0xF0;
		p[0] = (uint8_t)v;
		p[1] = ct == PNG_COLOR_TYPE_GRAY || ct == PNG_COLOR_TYPE_GRAY_ALPHA
			   ? p[0]
			   : (uint8_t)(255 - v);
		p[2] = ct == PNG_COLOR_TYPE_GRAY || ct == PNG_COLOR_TYPE_GRAY_ALPHA
			   ? p[0]
			   : (uint8_t)(v ^ 0x55);
		p[3] = ct & PNG_COLOR_MASK_ALPHA || ct == PNG_COLOR_TYPE_PALETTE
			   ? (uint8_t)(i % 3 ? 255 : 17 * (i % 16))
			   : 255;
		if (ct == PNG_COLOR_TYPE_PALETTE)
			p[3] = i % 5 ? 255 : 0;
	}
}

static void test_png_types(void **st)
{
	static const struct {
		int ct, depth;
		bool interlace;
	} c[] = {
	    {PNG_COLOR_TYPE_GRAY, 1, false},	   {PNG_COLOR_TYPE_GRAY, 2, false},
	    {PNG_COLOR_TYPE_GRAY, 4, true},	   {PNG_COLOR_TYPE_GRAY, 8, false},
	    {PNG_COLOR_TYPE_GRAY, 16, false},	   {PNG_COLOR_TYPE_GRAY_ALPHA, 8, false},
	    {PNG_COLOR_TYPE_GRAY_ALPHA, 16, true}, {PNG_COLOR_TYPE_PALETTE, 8, false},
	    {PNG_COLOR_TYPE_RGB, 8, false},	   {PNG_COLOR_TYPE_RGB, 16, true},
	    {PNG_COLOR_TYPE_RGB_ALPHA, 8, true},   {PNG_COLOR_TYPE_RGB_ALPHA, 16, false},
	    {PNG_COLOR_TYPE_RGB_ALPHA, 8, false},
	};
	const uint32_t w = 37, h = 19;
	uint8_t src[37 * 19 * 4], *out;
	char why[256];

	(void)st;
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		size_t n;
		uint32_t ow, oh;
		uint8_t *png;

		png_source(c[i].ct, c[i].depth, w, h, src);
		png = tm_png(src, w, h, c[i].ct, c[i].depth, c[i].interlace, &n);
		assert_int_equal(png_decode(png, n, 4096, 4096, &out, &ow, &oh, why), RC_OK);
		assert_int_equal(ow, w);
		assert_int_equal(oh, h);
		assert_memory_equal(out, src, sizeof src);
		free(out);
		free(png);
	}
}

static void test_png_hostile(void **st)
{
	uint8_t src[64 * 48 * 4], *out, *t;
	uint32_t w, h;
	size_t n;
	char why[256];
	uint8_t *png;

	(void)st;
	tm_pattern(3, 0, 0, 64, 48, true, src);
	png = tm_png(src, 64, 48, PNG_COLOR_TYPE_RGB_ALPHA, 8, false, &n);
	t = malloc(n);
	assert_int_equal(png_decode(png, n, 4096, 4096, &out, &w, &h, why), RC_OK);
	free(out);
	/* cut anywhere: refused (the last 12 bytes are IEND, checked by pngdec_finish) */
	for (size_t cut = 0; cut < n; cut += n / 37 + 1) {
		why[0] = 0;
		assert_int_not_equal(png_decode(png, cut, 4096, 4096, &out, &w, &h, why), RC_OK);
		assert_true(why[0] != 0);
	}
	assert_int_not_equal(png_decode(png, n - 4, 4096, 4096, &out, &w, &h, why), RC_OK);
	/* a flipped byte inside the image data: the CRC (or zlib) refuses it */
	memcpy(t, png, n);
	t[n / 2] ^= 0x40;
	assert_int_equal(png_decode(t, n, 4096, 4096, &out, &w, &h, why), RC_CORRUPT);
	/* larger than the limit */
	assert_int_equal(png_decode(png, n, 63, 4096, &out, &w, &h, why), RC_UNSUPPORTED);
	assert_int_equal(png_decode(png, n, 4096, 47, &out, &w, &h, why), RC_UNSUPPORTED);
	assert_non_null(strstr(why, "larger"));
	/* not a PNG */
	assert_int_equal(
	    png_decode((const uint8_t *)"DDS garbage", 11, 4096, 4096, &out, &w, &h, why),
	    RC_FORMAT);
	/* random bytes after a signature */
	for (uint32_t k = 0, s = 5; k < 2000; k++) {
		size_t len = 8 + tm_rnd(&s) % 120;

		memcpy(t, png, len < n ? len : n);
		for (size_t j = 8; j < len; j++)
			if (tm_rnd(&s) % 8 == 0)
				t[j] = (uint8_t)tm_rnd(&s);
		if (png_decode(t, len, 4096, 4096, &out, &w, &h, why) == RC_OK)
			free(out);
	}
	free(t);
	free(png);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_uncompressed_exact), cmocka_unit_test(test_uncompressed_rounding),
	    cmocka_unit_test(test_blocks_quality),     cmocka_unit_test(test_dxt1_punch_through),
	    cmocka_unit_test(test_mip_box_filter),     cmocka_unit_test(test_mip_rows_in_order),
	    cmocka_unit_test(test_dds_served),	       cmocka_unit_test(test_dds_masks),
	    cmocka_unit_test(test_dds_hostile),	       cmocka_unit_test(test_png_types),
	    cmocka_unit_test(test_png_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
