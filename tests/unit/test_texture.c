/* Textures: DXT blocks, RSX swizzle, DDS headers, PNG round trips, generated and hostile arenas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/formats/png.h"
#include "psgfs/formats/tex_x360.h"
#include "psgfs/formats/texture.h"
#include "psgfs/gen/gen_big.h"
#include "tree/psg/view_psg.h"

static void px_eq(const uint8_t *px, int i, int r, int g, int b, int a)
{
	assert_int_equal(px[4 * i + 0], r);
	assert_int_equal(px[4 * i + 1], g);
	assert_int_equal(px[4 * i + 2], b);
	assert_int_equal(px[4 * i + 3], a);
}

static void test_dxt1_four_colour(void **st)
{
	/* c0 = red 0xF800 > c1 = blue 0x001F; pixel i < 4 uses index i, the rest index 0 */
	const uint8_t blk[8] = {0x00, 0xF8, 0x1F, 0x00, 0xE4, 0x00, 0x00, 0x00};
	uint8_t px[64];

	(void)st;
	dxt1_block(blk, false, px);
	px_eq(px, 0, 255, 0, 0, 255);
	px_eq(px, 1, 0, 0, 255, 255);
	px_eq(px, 2, 170, 0, 85, 255);
	px_eq(px, 3, 85, 0, 170, 255);
	px_eq(px, 15, 255, 0, 0, 255);
}

static void test_dxt1_three_colour_transparent(void **st)
{
	/* c0 = blue 0x001F <= c1 = red 0xF800: index 2 = midpoint, 3 = transparent black */
	const uint8_t blk[8] = {0x1F, 0x00, 0x00, 0xF8, 0xE4, 0x00, 0x00, 0xC0};
	uint8_t px[64];

	(void)st;
	dxt1_block(blk, false, px);
	px_eq(px, 0, 0, 0, 255, 255);
	px_eq(px, 1, 255, 0, 0, 255);
	px_eq(px, 2, 127, 0, 127, 255);
	px_eq(px, 3, 0, 0, 0, 0);
	px_eq(px, 15, 0, 0, 0, 0);
	/* the same block in a DXT3/5 colour slot is always 4-colour */
	dxt1_block(blk, true, px);
	px_eq(px, 2, 85, 0, 170, 255);
	px_eq(px, 3, 170, 0, 85, 255);
}

static void test_dxt3_explicit_alpha(void **st)
{
	uint8_t blk[16] = {0xF0, 0x5A, 0,    0,	   0, 0, 0, 0x1F, /* alpha */
			   0xE0, 0x07, 0xE0, 0x07, 0, 0, 0, 0 /* green */};
	uint8_t px[64];

	(void)st;
	dxt3_block(blk, px);
	px_eq(px, 0, 0, 255, 0, 0);    /* low nibble of byte 0 */
	px_eq(px, 1, 0, 255, 0, 255);  /* high nibble */
	px_eq(px, 2, 0, 255, 0, 170);  /* 0xA * 17 */
	px_eq(px, 3, 0, 255, 0, 85);   /* 0x5 * 17 */
	px_eq(px, 14, 0, 255, 0, 255); /* 0xF */
	px_eq(px, 15, 0, 255, 0, 17);  /* 0x1 */
}

static void test_dxt5_alpha_modes(void **st)
{
	/* 8-alpha: a0 255 > a1 0; indices 0,1,2,7 then 0 */
	uint8_t b8[16] = {255, 0, 0x88, 0x0E, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
	/* 6-alpha: a0 0 <= a1 100; indices 2,5,6,7 */
	uint8_t b6[16] = {0, 100, 0xAA, 0x0F, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
	uint8_t px[64];

	(void)st;
	dxt5_block(b8, px);
	px_eq(px, 0, 255, 255, 255, 255);
	px_eq(px, 1, 255, 255, 255, 0);
	px_eq(px, 2, 255, 255, 255, 218);
	px_eq(px, 3, 255, 255, 255, 36);
	px_eq(px, 4, 255, 255, 255, 255);
	dxt5_block(b6, px);
	assert_int_equal(px[3], 20);
	assert_int_equal(px[7], 80);
	assert_int_equal(px[11], 0);
	assert_int_equal(px[15], 255);
	assert_int_equal(px[19], 0); /* index 0 = a0 */
}

/* The bit-at-a-time definition, against which the fast one is checked. */
static uint32_t swizzle_ref(uint32_t x, uint32_t y, unsigned lw, unsigned lh)
{
	uint32_t idx = 0;
	unsigned shift = 0, top = lw > lh ? lw : lh;

	for (unsigned b = 0; b < top; b++) {
		if (b < lw)
			idx |= (x >> b & 1u) << shift++;
		if (b < lh)
			idx |= (y >> b & 1u) << shift++;
	}
	return idx;
}

/* Every size up to 4096x4096 (and 2^15 on a side), at the corners and 200 points inside. */
static void test_swizzle_index_sizes(void **st)
{
	uint32_t seed = 7;

	(void)st;
	for (unsigned lw = 0; lw <= 15; lw++)
		for (unsigned lh = 0; lh <= 15; lh++) {
			uint32_t w = 1u << lw, h = 1u << lh;

			for (int k = 0; k < 204; k++) {
				uint32_t x, y;

				seed = seed * 1103515245u + 12345u;
				x = k < 4 ? (k & 1 ? w - 1 : 0) : (seed >> 8) % w;
				seed = seed * 1103515245u + 12345u;
				y = k < 4 ? (k & 2 ? h - 1 : 0) : (seed >> 8) % h;
				if (tex_ps3_swizzle_index(x, y, lw, lh) !=
				    swizzle_ref(x, y, lw, lh))
					fail_msg("%ux%u at (%u, %u): %u, expected %u", w, h, x, y,
						 tex_ps3_swizzle_index(x, y, lw, lh),
						 swizzle_ref(x, y, lw, lh));
			}
		}
}

static void test_swizzle_index(void **st)
{
	(void)st;
	assert_int_equal(tex_ps3_swizzle_index(1, 0, 2, 2), 1);
	assert_int_equal(tex_ps3_swizzle_index(0, 1, 2, 2), 2);
	assert_int_equal(tex_ps3_swizzle_index(1, 1, 2, 2), 3);
	assert_int_equal(tex_ps3_swizzle_index(2, 0, 2, 2), 4);
	assert_int_equal(tex_ps3_swizzle_index(0, 2, 2, 2), 8);
	assert_int_equal(tex_ps3_swizzle_index(3, 3, 2, 2), 15);
	/* 8x2: x0 y0 x1 x2 */
	assert_int_equal(tex_ps3_swizzle_index(2, 0, 3, 1), 4);
	assert_int_equal(tex_ps3_swizzle_index(4, 0, 3, 1), 8);
	assert_int_equal(tex_ps3_swizzle_index(7, 1, 3, 1), 15);
	/* 2x8: x0 y0 y1 y2 */
	assert_int_equal(tex_ps3_swizzle_index(0, 2, 1, 3), 4);
	assert_int_equal(tex_ps3_swizzle_index(1, 4, 1, 3), 9);
	assert_int_equal(tex_ps3_swizzle_index(0, 0, 0, 0), 0);
}

static void test_swizzle_round_trip(void **st)
{
	static const unsigned dims[][2] = {{0, 0}, {1, 1}, {3, 1}, {1, 4}, {5, 5}, {6, 2}};

	(void)st;
	for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
		unsigned lw = dims[d][0], lh = dims[d][1];
		size_t n = ((size_t)1 << lw) * ((size_t)1 << lh) * 4;
		uint8_t *a = malloc(n), *b = malloc(n), *c = malloc(n);
		uint8_t *seen = calloc(n / 4, 1);

		for (size_t i = 0; i < n; i++)
			a[i] = (uint8_t)(i * 7 + i / 3);
		tex_ps3_swizzle(a, b, lw, lh, 4);
		tex_ps3_unswizzle(b, c, lw, lh, 4);
		assert_memory_equal(a, c, n);
		/* a permutation: every index hit once */
		for (uint32_t y = 0; y < 1u << lh; y++)
			for (uint32_t x = 0; x < 1u << lw; x++)
				seen[tex_ps3_swizzle_index(x, y, lw, lh)]++;
		for (size_t i = 0; i < n / 4; i++)
			assert_int_equal(seen[i], 1);
		free(a), free(b), free(c), free(seen);
	}
}

static uint32_t le32(const uint8_t *p)
{
	return ld_u32le(p);
}

struct dds_expect {
	enum tex_kind kind;
	uint32_t pf_flags, fourcc, bits, r, g, b, a, bpp;
};

static void test_dds_headers(void **st)
{
	static const struct dds_expect ex[] = {
	    {TEXK_DXT1, 0x4, 0x31545844u, 0, 0, 0, 0, 0, 8},
	    {TEXK_DXT3, 0x4, 0x33545844u, 0, 0, 0, 0, 0, 16},
	    {TEXK_DXT5, 0x4, 0x35545844u, 0, 0, 0, 0, 0, 16},
	    {TEXK_BGRA8, 0x41, 0, 32, 0xFF0000, 0xFF00, 0xFF, 0xFF000000u, 4},
	    {TEXK_BGRX8, 0x40, 0, 32, 0xFF0000, 0xFF00, 0xFF, 0, 4},
	    {TEXK_R5G6B5, 0x40, 0, 16, 0xF800, 0x07E0, 0x001F, 0, 2},
	    {TEXK_A1R5G5B5, 0x41, 0, 16, 0x7C00, 0x03E0, 0x001F, 0x8000, 2},
	    {TEXK_A4R4G4B4, 0x41, 0, 16, 0x0F00, 0x00F0, 0x000F, 0xF000, 2},
	    {TEXK_L8, 0x20000, 0, 8, 0xFF, 0, 0, 0, 1},
	};

	(void)st;
	for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
		for (int variant = 0; variant < 4; variant++) {
			/* 0: 1 mip 2D, 1: 3 mips, 2: cube 2 mips, 3: cube with 3 faces served */
			struct tex_desc t = {0};
			struct buf b;
			bool comp = ex[i].fourcc != 0;
			uint64_t payload = 0;
			const uint8_t *h;

			t.kind = ex[i].kind;
			t.width = 20;
			t.height = 12;
			t.mips = t.have_mips = variant == 0 ? 1 : variant == 1 ? 3 : 2;
			t.faces = variant >= 2 ? 6 : 1;
			t.have_faces = variant == 3 ? 3 : t.faces;
			for (uint32_t m = 0; m < t.have_mips; m++)
				payload += tex_level_bytes(&t, m);
			buf_init(&b);
			tex_dds_header(&t, &b);
			assert_int_equal(b.len, 128);
			assert_int_equal(tex_dds_size(&t), 128 + payload * t.have_faces);
			h = b.data;
			assert_memory_equal(h, "DDS ", 4);
			assert_int_equal(le32(h + 4), 124);
			assert_int_equal(le32(h + 8), 0x1007 | (comp ? 0x80000 : 0x8) |
							  (t.mips > 1 ? 0x20000 : 0));
			assert_int_equal(le32(h + 12), 12);
			assert_int_equal(le32(h + 16), 20);
			assert_int_equal(le32(h + 20), comp ? 5 * 3 * ex[i].bpp : 20 * ex[i].bpp);
			assert_int_equal(le32(h + 24), 0);
			assert_int_equal(le32(h + 28), t.mips);
			for (int k = 0; k < 11; k++)
				assert_int_equal(le32(h + 32 + 4 * k), 0);
			assert_int_equal(le32(h + 76), 32);
			assert_int_equal(le32(h + 80), ex[i].pf_flags);
			assert_int_equal(le32(h + 84), ex[i].fourcc);
			assert_int_equal(le32(h + 88), ex[i].bits);
			assert_int_equal(le32(h + 92), ex[i].r);
			assert_int_equal(le32(h + 96), ex[i].g);
			assert_int_equal(le32(h + 100), ex[i].b);
			assert_int_equal(le32(h + 104), ex[i].a);
			assert_int_equal(le32(h + 108), 0x1000 | (t.mips > 1 ? 0x400008 : 0) |
							    (t.faces == 6 ? 0x8 : 0));
			/* cube: DDSCAPS2_CUBEMAP and one bit per face served, +X first */
			assert_int_equal(le32(h + 112), variant == 2   ? 0xFE00
							: variant == 3 ? 0x1E00
								       : 0);
			assert_int_equal(le32(h + 116), 0);
			assert_int_equal(le32(h + 120), 0);
			assert_int_equal(le32(h + 124), 0);
			buf_free(&b);
		}
	}
}

/* Decode PNG bytes to RGBA with libpng's simplified API. */
static uint8_t *png_decode(const uint8_t *p, size_t n, uint32_t *w, uint32_t *h)
{
	png_image img;
	uint8_t *px;

	memset(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&img, p, n))
		return NULL;
	img.format = PNG_FORMAT_RGBA;
	px = malloc(PNG_IMAGE_SIZE(img));
	if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
		free(px);
		png_image_free(&img);
		return NULL;
	}
	*w = img.width;
	*h = img.height;
	return px;
}

struct rgba_src {
	const uint8_t *rgba;
	uint32_t w;
	bool alpha;
};

static enum rc rgba_rows(const void *ctx, uint32_t y0, uint32_t n, uint8_t *px)
{
	const struct rgba_src *r = ctx;
	unsigned ch = r->alpha ? 4 : 3;

	for (size_t i = 0; i < (size_t)n * r->w; i++)
		memcpy(px + i * ch, r->rgba + ((size_t)y0 * r->w + i) * 4, ch);
	return RC_OK;
}

/* The whole PNG, part by part, item by item from `first` (0: everything). */
static void png_whole(const struct pngs *p, struct buf *out)
{
	for (unsigned part = 0; part < PNGS_PARTS; part++) {
		uint64_t n;
		uint32_t size;
		struct emit e;

		pngs_part(p, part, &n, &size);
		if (n == 0)
			continue;
		emit_init_window(&e, 0, SIZE_MAX);
		assert_int_equal(pngs_render(p, part, 0, &e), RC_OK);
		assert_int_equal(e.b.len, n * size);
		buf_put(out, e.b.data, e.b.len);
		emit_free(&e);
	}
}

static void test_png_round_trip(void **st)
{
	/* 13x7: one block; 300x80 RGBA: 96,080 bytes of rows, two blocks */
	static const uint32_t dims[][2] = {{13, 7}, {300, 80}, {1, 1}};
	struct buf a, b;

	(void)st;
	for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
		uint32_t w = dims[d][0], h = dims[d][1], dw, dh;
		uint8_t *rgba = malloc((size_t)w * h * 4), *back;

		for (size_t i = 0; i < (size_t)w * h * 4; i++)
			rgba[i] = (uint8_t)(i * 37 + 11);
		for (int alpha = 0; alpha < 2; alpha++) {
			struct rgba_src rs = {rgba, w, alpha};
			struct pngs p;

			assert_int_equal(pngs_init(&p, w, h, alpha, rgba_rows, &rs), RC_OK);
			buf_init(&a);
			buf_init(&b);
			png_whole(&p, &a);
			png_whole(&p, &b);
			assert_int_equal(a.len, pngs_size(&p)); /* size known up front */
			assert_memory_equal(a.data, b.data, a.len);
			assert_memory_equal(a.data, "\x89PNG", 4);
			back = png_decode(a.data, a.len, &dw, &dh);
			assert_non_null(back);
			assert_int_equal(dw, w);
			assert_int_equal(dh, h);
			for (size_t i = 0; i < (size_t)w * h; i++) {
				assert_memory_equal(back + 4 * i, rgba + 4 * i, 3);
				assert_int_equal(back[4 * i + 3], alpha ? rgba[4 * i + 3] : 255);
			}
			free(back);
			buf_free(&a);
			buf_free(&b);
		}
		free(rgba);
	}
	{
		struct pngs p;

		assert_int_equal(pngs_init(&p, 0, 5, true, rgba_rows, NULL), RC_INVAL);
	}
}

/* --- generated arenas --- */

struct genarena {
	struct buf file;
	struct src s;
	struct src_mem m;
	struct arena a;
	struct gen_tex_truth truth;
	struct diag d;
};

static void ga_open(struct genarena *g, const struct gen_tex_opts *o)
{
	memset(g, 0, sizeof *g);
	buf_init(&g->file);
	diag_init(&g->d);
	assert_int_equal(gen_psg_textures(o, &g->file, NULL, &g->truth), RC_OK);
	src_init_mem(&g->s, &g->m, g->file.data, g->file.len);
	assert_int_equal(arena_open(&g->s, &g->a, &g->d), RC_OK);
}

static void ga_close(struct genarena *g)
{
	arena_free(&g->a);
	gen_tex_truth_free(&g->truth);
	buf_free(&g->file);
	diag_free(&g->d);
}

static const struct gen_tex_truth_item *truth_by_name(const struct genarena *g, const char *n)
{
	for (size_t i = 0; i < g->truth.n; i++)
		if (strcmp(g->truth.items[i].name, n) == 0)
			return &g->truth.items[i];
	return NULL;
}

static bool is_dxt_fmt(uint8_t f)
{
	f &= (uint8_t)~0x60;
	return f == GCM_TEX_DXT1 || f == GCM_TEX_DXT3 || f == GCM_TEX_DXT5;
}

static void check_generated(struct genarena *g)
{
	char **names = NULL;
	size_t seen = 0;
	int worst = 0;

	assert_int_equal(texture_names(&g->s, &g->a, &names, &g->d), RC_OK);
	for (uint32_t i = 0; i < g->a.n_dict; i++) {
		const struct gen_tex_truth_item *ti;
		struct texture_image *img = NULL;
		struct buf dds, png, txt;
		uint8_t *px;
		uint32_t w, h;

		if (arena_row(&g->a, i)->type_id != RW_T_TEXTURE) {
			assert_null(names[i]);
			continue;
		}
		assert_non_null(names[i]);
		ti = truth_by_name(g, names[i]);
		assert_non_null(ti);
		seen++;
		assert_int_equal(texture_load(&g->s, &g->a, i, &img, &g->d), RC_OK);
		assert_int_equal(img->d.width, ti->width);
		assert_int_equal(img->d.height, ti->height);
		assert_int_equal(img->d.have_mips, ti->mips);
		assert_int_equal(img->d.have_faces, ti->cube ? 6 : 1);
		assert_int_equal(img->size, ti->dds_payload_len);
		assert_memory_equal(img->data, ti->dds_payload, ti->dds_payload_len);

		buf_init(&dds);
		assert_int_equal(texture_dds(img, &dds), RC_OK);
		assert_int_equal(dds.len, tex_dds_size(&img->d));
		{
			struct tex_desc td;

			assert_int_equal(tex_describe(&g->s, &g->a, i, &td, NULL), RC_OK);
			assert_int_equal(tex_dds_size(&td), dds.len);
		}
		assert_memory_equal(dds.data + 128, ti->dds_payload, ti->dds_payload_len);
		buf_free(&dds);

		buf_init(&png);
		assert_int_equal(texture_png(&g->s, img, &png), RC_OK);
		px = png_decode(png.data, png.len, &w, &h);
		assert_non_null(px);
		/* a cube map's picture holds its six faces side by side */
		assert_int_equal(w, ti->width * (ti->cube ? 6 : 1));
		assert_int_equal(h, ti->height);
		if (ti->cube) {
			uint8_t *face0 = malloc((size_t)ti->width * h * 4);

			for (uint32_t y = 0; y < h; y++)
				memcpy(face0 + (size_t)y * ti->width * 4, px + (size_t)y * w * 4,
				       (size_t)ti->width * 4);
			free(px);
			px = face0;
			w = ti->width;
		}
		assert_memory_equal(px, ti->expect_rgba, (size_t)w * h * 4);
		if (is_dxt_fmt(ti->format)) {
			for (size_t k = 0; k < (size_t)w * h; k++) {
				bool clear = ti->src_rgba[4 * k + 3] == 0;

				for (int c = 0; c < 4; c++) {
					int e = abs(px[4 * k + c] - ti->src_rgba[4 * k + c]);

					if (clear && c < 3)
						continue;
					worst = e > worst ? e : worst;
				}
			}
		} else {
			assert_memory_equal(px, ti->src_rgba, (size_t)w * h * 4);
		}
		free(px);
		buf_free(&png);

		buf_init(&txt);
		assert_int_equal(view_object_text(&g->s, &g->a, i, &txt, NULL), RC_OK);
		buf_putc(&txt, 0);
		assert_non_null(strstr((char *)txt.data, "BaseResource"));
		assert_null(strstr((char *)txt.data, "problems"));
		buf_free(&txt);
		texture_image_free(img);
	}
	assert_int_equal(seen, g->truth.n);
	/* DXT error of the simple encoder on these gradients (tight: a regression shows) */
	if (worst > 40)
		print_message("worst DXT error %d\n", worst);
	assert_true(worst <= 40);
	texture_names_free(names, g->a.n_dict);
}

static void test_generated_default(void **st)
{
	struct genarena g;

	(void)st;
	ga_open(&g, NULL);
	assert_true(g.truth.n >= 20);
	check_generated(&g);
	assert_int_equal(diag_count(&g.d), 0);
	/* dictionary shape: [BR, Texture] x k, TOC, VersionData last */
	for (uint32_t k = 0; k < g.truth.n; k++) {
		assert_int_equal(arena_row(&g.a, 2 * k)->type_id, RW_T_PS3_GPU);
		assert_int_equal(arena_row(&g.a, 2 * k)->align, 0x80);
		assert_int_equal(arena_row(&g.a, 2 * k)->ptr % 0x80, 0);
		assert_int_equal(arena_row(&g.a, 2 * k + 1)->type_id, RW_T_TEXTURE);
		assert_int_equal(arena_row(&g.a, 2 * k + 1)->size, 40);
	}
	assert_int_equal(arena_row(&g.a, g.a.n_dict - 2)->type_id, RW_T_TOC);
	assert_int_equal(arena_row(&g.a, g.a.n_dict - 1)->type_id, RW_T_VERSION);
	assert_int_equal(arena_row(&g.a, g.a.n_dict - 1)->size, 8);
	assert_int_equal(g.a.h.rd[5].align, 0x80);
	assert_int_equal(g.a.n_types, 10);
	assert_int_equal(g.a.n_subrefs, 0);
	ga_close(&g);
}

/* A base resource shorter than the layout serves what is whole: faces, else levels of face 0. */
static void check_short(const struct gen_tex_spec *spec, enum rc want, uint32_t faces,
			uint32_t mips, uint32_t caps2)
{
	struct gen_tex_opts o = {.specs = spec, .n_specs = 1};
	struct genarena g;
	struct texture_image *img = NULL;
	struct tex_desc td;
	struct buf dds;

	ga_open(&g, &o);
	assert_int_equal(tex_describe(&g.s, &g.a, g.truth.items[0].tex_index, &td, &g.d), want);
	assert_int_equal(diag_count(&g.d), 1); /* the shortfall is one problem line either way */
	if (want != RC_OK) {
		ga_close(&g);
		return;
	}
	assert_non_null(strstr(g.d.msg[0], "serving"));
	assert_int_equal(td.have_faces, faces);
	assert_int_equal(td.have_mips, mips);
	assert_int_equal(texture_load(&g.s, &g.a, g.truth.items[0].tex_index, &img, NULL), RC_OK);
	assert_int_equal(img->size, g.truth.items[0].dds_payload_len);
	assert_memory_equal(img->data, g.truth.items[0].dds_payload, img->size);
	buf_init(&dds);
	assert_int_equal(texture_dds(img, &dds), RC_OK);
	assert_int_equal(dds.len, 128 + img->size);
	assert_int_equal(le32(dds.data + 28), mips);
	assert_int_equal(le32(dds.data + 112), caps2);
	buf_free(&dds);
	texture_image_free(img);
	ga_close(&g);
}

static void test_short_base_resource(void **st)
{
	/* the real tool-made shape: a DXT5 256x256 cube holding one face of six */
	struct gen_tex_spec one = {GCM_TEX_DXT5, 256, 256, 1, true, 0, false, 65536};
	/* three whole faces (stride 65536) and part of a fourth: a partial cube */
	struct gen_tex_spec three = {GCM_TEX_DXT5, 256, 256, 1, true, 0, false, 3 * 65536 + 100};
	/* a 64x64 DXT1 2D with 7 levels cut inside level 2: levels 0 and 1 remain */
	struct gen_tex_spec levels = {GCM_TEX_DXT1, 64, 64, 0, false, 0, false, 2048 + 512 + 10};
	/* not even level 0 of face 0: EIO */
	struct gen_tex_spec none = {GCM_TEX_DXT1, 64, 64, 0, false, 0, false, 1000};

	(void)st;
	check_short(&one, RC_OK, 1, 1, 0);
	check_short(&three, RC_OK, 3, 1, 0x1E00);
	check_short(&levels, RC_OK, 1, 2, 0);
	check_short(&none, RC_CORRUPT, 0, 0, 0);
}

static void test_generated_shuffled_unnamed(void **st)
{
	struct gen_tex_opts o = {0};
	struct genarena g;
	char **names = NULL;

	(void)st;
	o.shuffle_seed = 0x5EED;
	ga_open(&g, &o);
	check_generated(&g);
	ga_close(&g);

	memset(&o, 0, sizeof o);
	o.unnamed = true;
	ga_open(&g, &o);
	assert_int_equal(texture_names(&g.s, &g.a, &names, &g.d), RC_OK);
	assert_string_equal(names[1], "0001.Texture");
	assert_string_equal(names[3], "0003.Texture");
	texture_names_free(names, g.a.n_dict);
	ga_close(&g);
}

static void test_info_and_text(void **st)
{
	struct genarena g;
	struct buf b;
	uint32_t cube_tex = UINT32_MAX;

	(void)st;
	ga_open(&g, NULL);
	for (size_t i = 0; i < g.truth.n; i++)
		if (g.truth.items[i].cube && is_dxt_fmt(g.truth.items[i].format))
			cube_tex = g.truth.items[i].tex_index;
	assert_int_not_equal(cube_tex, UINT32_MAX);
	buf_init(&b);
	assert_int_equal(view_texture_info_line(&g.s, &g.a, 1, "n1", &b), RC_OK);
	assert_int_equal(view_texture_info_line(&g.s, &g.a, cube_tex, "cube", &b), RC_OK);
	buf_putc(&b, 0);
	assert_string_equal((char *)b.data, "n1 DXT1 64x64 7 2d\ncube DXT1 32x32 6 cube\n");
	buf_free(&b);

	buf_init(&b);
	assert_int_equal(view_object_text(&g.s, &g.a, 3, &b, NULL), RC_OK);
	buf_putc(&b, 0);
	assert_non_null(strstr((char *)b.data, "format: 0x86 DXT1\n"));
	assert_non_null(strstr((char *)b.data, "m_buffer: 2 -> 0002.BaseResource\n"));
	assert_non_null(strstr((char *)b.data, "width: 32\n"));
	assert_non_null(strstr((char *)b.data, "expected_bytes: 512\nactual_bytes: 512\n"));
	buf_free(&b);
	buf_init(&b);
	assert_int_equal(view_object_text(&g.s, &g.a, 0, &b, NULL), RC_OK); /* a BaseResource */
	buf_putc(&b, 0);
	assert_non_null(strstr((char *)b.data, "object: 0000.BaseResource\n"));
	assert_null(strstr((char *)b.data, "format:"));
	buf_free(&b);
	buf_init(&b);
	assert_int_equal(view_texture_info_line(&g.s, &g.a, 0, "x", &b), RC_UNSUPPORTED);
	assert_int_equal(view_object_text(&g.s, &g.a, 99999, &b, NULL), RC_BOUNDS);
	buf_free(&b);
	ga_close(&g);
}

/* --- hostile arenas: one texture object with crafted fields --- */

struct hostile {
	uint8_t obj[40];
	size_t obj_len;
	size_t br_len;
	bool extra_target; /* add a VersionData row for m_buffer to point at */
};

static enum rc hostile_load(const struct hostile *hx, struct diag *d, bool text)
{
	struct psg_builder *b = psgb_new(PSGB_REG_TEXTURE10, 1);
	uint8_t *br = calloc(hx->br_len ? hx->br_len : 1, 1);
	struct buf file;
	struct src s;
	struct src_mem m;
	struct arena a;
	struct texture_image *img = NULL;
	enum rc r;
	uint8_t ver[8] = {0, 0, 0, 25, 0, 0, 0, 13};

	psgb_set_gpu_align(b, 0x80);
	psgb_add_base_resource(b, 0x80, br, hx->br_len);
	psgb_add(b, RW_T_TEXTURE, 4, hx->obj, hx->obj_len);
	if (hx->extra_target)
		psgb_add(b, RW_T_VERSION, 0x10, ver, sizeof ver);
	free(br);
	buf_init(&file);
	assert_int_equal(psgb_finish(b, 0, &file, NULL), RC_OK);
	src_init_mem(&s, &m, file.data, file.len);
	assert_int_equal(arena_open(&s, &a, NULL), RC_OK);
	r = texture_load(&s, &a, 1, &img, d);
	assert_true(r != RC_OK || img != NULL);
	{
		struct tex_desc td;

		assert_int_equal(tex_describe(&s, &a, 1, &td, NULL), r);
	}
	texture_image_free(img);
	if (text) {
		struct buf t;

		buf_init(&t);
		if (view_object_text(&s, &a, 1, &t, NULL) == RC_OK && r != RC_OK) {
			buf_putc(&t, 0);
			assert_non_null(strstr((char *)t.data, "\nproblems ("));
			assert_non_null(strstr((char *)t.data, "):\n  object 1 (Texture): "));
		}
		buf_free(&t);
	}
	arena_free(&a);
	buf_free(&file);
	return r;
}

static void hostile_base(struct hostile *hx, uint8_t fmt, uint16_t w, uint16_t h, uint8_t mips)
{
	struct gen_tex_spec s = {fmt, w, h, mips, false, 0, false, 0};

	memset(hx, 0, sizeof *hx);
	gen_tex_object(&s, 0, hx->obj);
	hx->obj_len = 40;
	hx->br_len = 4096;
}

static void test_hostile(void **st)
{
	struct hostile hx;
	struct diag d;

	(void)st;
	diag_init(&d);
	/* 32x32 DXT1, 1 mip = 512 bytes; a 4096-byte base resource disagrees: refused, reported */
	hostile_base(&hx, GCM_TEX_DXT1, 32, 32, 1);
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	assert_int_equal(diag_count(&d), 1);

	/* base resource too small */
	hx.br_len = 511;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	/* exact */
	hx.br_len = 512;
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(hostile_load(&hx, &d, false), RC_OK);
	assert_int_equal(diag_count(&d), 0);

	/* m_buffer at the Texture itself, at a VersionData, out of range, subref kind */
	hostile_base(&hx, GCM_TEX_DXT1, 32, 32, 1);
	hx.obj[0x1B] = 1;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	hx.obj[0x1B] = 2;
	hx.extra_target = true;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	hx.obj[0x1A] = 0x27;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	hx.obj[0x19] = 0x80;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);

	/* sizes: 0, 65535 x 65535 with 4 KiB of data, mips 255 */
	hostile_base(&hx, GCM_TEX_A8R8G8B8, 0, 16, 1);
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	hostile_base(&hx, GCM_TEX_A8R8G8B8, 16, 0, 1);
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	hostile_base(&hx, GCM_TEX_A8R8G8B8 | GCM_TEX_LN, 65535, 65535, 1);
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	hostile_base(&hx, GCM_TEX_DXT5, 65535, 65535, 16);
	hx.obj[3] = 1; /* cube as well */
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	hostile_base(&hx, GCM_TEX_DXT1, 32, 32, 1);
	hx.obj[1] = 255;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	hx.obj[1] = 0;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);

	/* unknown and unconverted formats, 3D, bad dimension, short object */
	hostile_base(&hx, 0xFF, 8, 8, 1);
	assert_int_equal(hostile_load(&hx, &d, true), RC_UNSUPPORTED);
	hostile_base(&hx, 0x9B, 8, 8, 1);
	assert_int_equal(hostile_load(&hx, &d, true), RC_UNSUPPORTED);
	hostile_base(&hx, GCM_TEX_B8, 8, 8, 1);
	hx.obj[2] = 3;
	assert_int_equal(hostile_load(&hx, &d, true), RC_UNSUPPORTED);
	hx.obj[2] = 9;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	hostile_base(&hx, GCM_TEX_B8, 8, 8, 1);
	hx.obj_len = 39;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	/* LN pitch smaller than a row */
	hostile_base(&hx, GCM_TEX_A8R8G8B8 | GCM_TEX_LN, 16, 16, 1);
	hx.obj[0x13] = 8;
	hx.obj[0x12] = 0;
	assert_int_equal(hostile_load(&hx, &d, true), RC_CORRUPT);
	/* NPOT without LN: read as linear with a problem line */
	hostile_base(&hx, GCM_TEX_B8, 12, 8, 1);
	hx.br_len = 96;
	{
		size_t before = diag_count(&d);

		assert_int_equal(hostile_load(&hx, &d, false), RC_OK);
		assert_int_equal(diag_count(&d), before + 1);
	}
	assert_true(diag_count(&d) > 15);
	for (size_t i = 0; i < d.n; i++)
		assert_non_null(strstr(d.msg[i], "object 1 (Texture): "));
	diag_free(&d);
}

/* A short PS3 Texture object through the one reader, tex_describe and the text view. */
static void short_ps3_object(void)
{
	struct psg_builder *b = psgb_new(PSGB_REG_TEXTURE10, 1);
	uint8_t br[64] = {0}, obj[40] = {0};
	struct ps3_texture t;
	struct tex_desc td;
	struct buf file, text;
	struct src s;
	struct src_mem m;
	struct arena a;

	psgb_add_base_resource(b, 0x80, br, sizeof br);
	psgb_add(b, RW_T_TEXTURE, 4, obj, 39);
	buf_init(&file);
	assert_int_equal(psgb_finish(b, 0, &file, NULL), RC_OK);
	src_init_mem(&s, &m, file.data, file.len);
	assert_int_equal(arena_open(&s, &a, NULL), RC_OK);
	assert_int_equal(tex_ps3_read_object(&s, &a, 1, &t), RC_TRUNCATED);
	assert_int_equal(tex_ps3_read_object(&s, &a, 0, &t), RC_UNSUPPORTED);
	assert_int_equal(tex_ps3_read_object(&s, &a, a.n_dict, &t), RC_BOUNDS);
	assert_int_equal(tex_describe(&s, &a, 1, &td, NULL), RC_CORRUPT);
	buf_init(&text);
	assert_int_equal(view_object_text(&s, &a, 1, &text, NULL), RC_CORRUPT);
	buf_free(&text);
	arena_free(&a);
	buf_free(&file);
}

/*
 * Each platform's row reads its own Texture objects (tex_platform.h): the one reader of the
 * object gives what tex_describe describes, the PS3 header is the PS3 row's alone, and a short
 * object is refused the same way by the reader, the description and the text view.
 */
static void test_platform_readers(void **st)
{
	struct genarena g;
	struct buf x;
	struct src s;
	struct src_mem m;
	struct arena a;
	struct tex_x360_object o;
	struct ps3_texture t;
	struct tex_desc d;

	(void)st;
	ga_open(&g, NULL);
	assert_int_equal(tex_ps3_read_object(&g.s, &g.a, 1, &t), RC_OK);
	assert_int_equal(tex_describe(&g.s, &g.a, 1, &d, NULL), RC_OK);
	assert_non_null(tex_ps3_header(&d));
	assert_int_equal(tex_ps3_header(&d)->m_buffer, t.m_buffer);
	assert_int_equal(d.width, t.width);
	assert_int_equal(d.height, t.height);
	ga_close(&g);

	buf_init(&x);
	assert_int_equal(gen_big_x360_textures(0, &x), RC_OK);
	src_init_mem(&s, &m, x.data, x.len);
	assert_int_equal(arena_open(&s, &a, NULL), RC_OK);
	assert_int_equal(arena_row(&a, 1)->type_id, RW_T_TEXTURE);
	assert_int_equal(tex_x360_read_object(&s, &a, 0, &o), RC_UNSUPPORTED);
	assert_int_equal(tex_x360_read_object(&s, &a, a.n_dict, &o), RC_BOUNDS);
	assert_int_equal(tex_x360_read_object(&s, &a, 1, &o), RC_OK);
	assert_int_equal(tex_describe(&s, &a, 1, &d, NULL), RC_OK);
	assert_null(tex_ps3_header(&d));
	assert_int_equal(d.width, o.fetch.width);
	assert_int_equal(d.height, o.fetch.height);
	arena_free(&a);
	buf_free(&x);

	short_ps3_object();
}

/* Rows read a few at a time (swizzled levels in shorter bands) equal the same rows read whole. */
static void test_rows_any_band(void **st)
{
	static const uint32_t counts[] = {1, 2, 5, 8, 13, 31};
	struct genarena g;
	size_t swizzled = 0;

	(void)st;
	ga_open(&g, NULL);
	for (uint32_t i = 0; i < g.a.n_dict; i++) {
		struct tex_desc d;
		uint32_t rows;
		uint64_t rb;
		uint8_t *whole, *part;

		if (arena_row(&g.a, i)->type_id != RW_T_TEXTURE)
			continue;
		assert_int_equal(tex_describe(&g.s, &g.a, i, &d, NULL), RC_OK);
		if (tex_ps3_header(&d)) {
			struct tex_layout l;

			assert_int_equal(tex_layout_get(tex_ps3_header(&d), &l, NULL, 0), RC_OK);
			swizzled += l.swizzled && d.width >= 64;
		}
		rows = tex_level_rows(&d, 0);
		rb = tex_row_bytes(&d, 0);
		whole = malloc((size_t)(rb * rows));
		part = malloc((size_t)(rb * rows));
		assert_non_null(whole);
		assert_non_null(part);
		assert_int_equal(tex_read_rows(&g.s, &d, 0, 0, 0, rows, whole), RC_OK);
		for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
			for (uint32_t y = 0; y < rows; y += counts[c] + 3) {
				uint32_t n = rows - y < counts[c] ? rows - y : counts[c];

				assert_int_equal(tex_read_rows(&g.s, &d, 0, 0, y, n, part), RC_OK);
				assert_memory_equal(part, whole + (size_t)(y * rb),
						    (size_t)(n * rb));
			}
		free(whole);
		free(part);
	}
	assert_true(swizzled > 0);
	ga_close(&g);
}

/* Write every generated texture as .dds/.png into $PSGFS_TEX_DUMP (manual ImageMagick check). */
static void test_dump(void **st)
{
	const char *dir = getenv("PSGFS_TEX_DUMP");
	struct genarena g;
	char **names = NULL;

	(void)st;
	if (!dir)
		skip();
	ga_open(&g, NULL);
	assert_int_equal(texture_names(&g.s, &g.a, &names, NULL), RC_OK);
	for (uint32_t i = 0; i < g.a.n_dict; i++) {
		struct texture_image *img;
		struct buf b;
		char path[512];
		FILE *f;

		if (!names[i])
			continue;
		assert_int_equal(texture_load(&g.s, &g.a, i, &img, NULL), RC_OK);
		for (int k = 0; k < 2; k++) {
			buf_init(&b);
			assert_int_equal(k ? texture_png(&g.s, img, &b) : texture_dds(img, &b),
					 RC_OK);
			snprintf(path, sizeof path, "%s/%s.%s", dir, names[i], k ? "png" : "dds");
			f = fopen(path, "wb");
			assert_non_null(f);
			fwrite(b.data, 1, b.len, f);
			fclose(f);
			buf_free(&b);
		}
		texture_image_free(img);
	}
	texture_names_free(names, g.a.n_dict);
	ga_close(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dxt1_four_colour),
	    cmocka_unit_test(test_dxt1_three_colour_transparent),
	    cmocka_unit_test(test_dxt3_explicit_alpha),
	    cmocka_unit_test(test_dxt5_alpha_modes),
	    cmocka_unit_test(test_swizzle_index),
	    cmocka_unit_test(test_swizzle_index_sizes),
	    cmocka_unit_test(test_swizzle_round_trip),
	    cmocka_unit_test(test_dds_headers),
	    cmocka_unit_test(test_png_round_trip),
	    cmocka_unit_test(test_generated_default),
	    cmocka_unit_test(test_short_base_resource),
	    cmocka_unit_test(test_generated_shuffled_unnamed),
	    cmocka_unit_test(test_info_and_text),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_platform_readers),
	    cmocka_unit_test(test_rows_any_band),
	    cmocka_unit_test(test_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
