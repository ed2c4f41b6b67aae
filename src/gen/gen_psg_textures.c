/*
 * Texture arena generator (docs/rw4-arena.md, "Writing an arena"; docs/skate-objects.md, "Texel
 * layout", "Cube maps", "Texture sizes", "Texture names"). The texel encoders here are written
 * independently of the loader's converters (only the swizzle order and the DXT block decoder, each
 * unit-tested on their own, are shared), so a generated arena checks the loader.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/formats/texture.h"

#define LN GCM_TEX_LN
#define UN GCM_TEX_UN

static const struct gen_tex_spec default_specs[] = {
    {GCM_TEX_DXT1, 64, 64, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 32, 32, 1, false, 0, true, 0},
    {GCM_TEX_DXT3, 64, 32, 4, false, 0, false, 0},
    {GCM_TEX_DXT5, 64, 64, 3, false, 0, false, 0},
    {GCM_TEX_DXT5 | LN, 100, 60, 3, false, 0, false, 0},
    {GCM_TEX_DXT1, 32, 32, 0, true, 0, false, 0},
    {GCM_TEX_A8R8G8B8, 64, 32, 0, false, 0, false, 0},
    {GCM_TEX_A8R8G8B8 | LN, 37, 23, 1, false, 192, false, 0},
    {GCM_TEX_A8R8G8B8 | LN, 32, 16, 3, false, 0, false, 0},
    {GCM_TEX_A8R8G8B8 | UN, 16, 16, 1, false, 0, false, 0},
    {GCM_TEX_A8R8G8B8, 8, 8, 4, true, 0, false, 0},
    {GCM_TEX_B8, 32, 32, 2, false, 0, false, 0},
    {GCM_TEX_B8 | LN, 13, 7, 1, false, 16, false, 0},
    {GCM_TEX_R5G6B5, 16, 64, 3, false, 0, false, 0},
    {GCM_TEX_A1R5G5B5, 32, 16, 1, false, 0, true, 0},
    {GCM_TEX_A4R4G4B4, 32, 32, 2, false, 0, false, 0},
    {GCM_TEX_A4R4G4B4 | LN, 30, 10, 1, false, 64, false, 0},
    {GCM_TEX_G8B8, 16, 16, 1, false, 0, false, 0},
    {GCM_TEX_R6G5B5, 16, 16, 1, false, 0, false, 0},
    {GCM_TEX_R5G5B5A1, 16, 8, 1, false, 0, true, 0},
    {GCM_TEX_D1R5G5B5, 8, 16, 1, false, 0, false, 0},
    {GCM_TEX_D8R8G8B8, 16, 16, 2, false, 0, false, 0},
};

const struct gen_tex_spec *gen_tex_default_specs(size_t *n)
{
	*n = sizeof default_specs / sizeof default_specs[0];
	return default_specs;
}

/* Shaped like a real 2 MB Skate 3 texture arena (19 textures, 38 files): DXT1/DXT5 with full
 * mip chains up to 1024x1024, one cube map. For benchmarks of listings and first reads. */
static const struct gen_tex_spec real_specs[] = {
    {GCM_TEX_DXT1, 1024, 1024, 0, false, 0, false, 0},
    {GCM_TEX_DXT5, 512, 512, 0, false, 0, false, 0},
    {GCM_TEX_DXT5, 512, 512, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 512, 512, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 256, 256, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 256, 256, 0, false, 0, true, 0},
    {GCM_TEX_DXT5, 256, 256, 0, false, 0, false, 0},
    {GCM_TEX_DXT5, 256, 256, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 256, 128, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 128, 128, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 128, 128, 0, false, 0, false, 0},
    {GCM_TEX_DXT5, 128, 128, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 64, 64, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 64, 64, 0, false, 0, false, 0},
    {GCM_TEX_DXT5, 64, 64, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 32, 32, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 128, 128, 0, true, 0, false, 0},
    {GCM_TEX_DXT5, 128, 64, 0, false, 0, false, 0},
    {GCM_TEX_DXT1, 16, 16, 0, false, 0, false, 0},
};

const struct gen_tex_spec *gen_tex_real_specs(size_t *n)
{
	*n = sizeof real_specs / sizeof real_specs[0];
	return real_specs;
}

/*
 * Textures whose base resource holds only part of their layout, as tool-made arenas have them
 * (a level compiler's environment map is a cube map holding one face): `faces` whole faces, or
 * (faces 0) the first `levels` levels of face 0, then `extra` bytes of what follows.
 */
static const struct {
	struct gen_tex_spec s;
	uint8_t faces, levels;
	uint16_t extra;
} partial_specs[] = {
    {{GCM_TEX_A8R8G8B8, 32, 32, 0, true, 0, false, 0}, 1, 0, 0x40},
    {{GCM_TEX_DXT5, 64, 64, 1, true, 0, false, 0}, 1, 0, 0},
    {{GCM_TEX_DXT1, 64, 64, 0, true, 0, true, 0}, 3, 0, 0},
    {{GCM_TEX_DXT5, 16, 16, 3, true, 0, false, 0}, 5, 0, 0x10},
    {{GCM_TEX_B8 | LN, 13, 7, 1, true, 16, false, 0}, 2, 0, 0},
    {{GCM_TEX_D8R8G8B8, 16, 16, 2, true, 0, false, 0}, 4, 0, 0},
    {{GCM_TEX_DXT3, 64, 32, 0, false, 0, false, 0}, 0, 3, 0},
    {{GCM_TEX_R5G6B5, 32, 32, 4, true, 0, false, 0}, 0, 2, 0x20},
};

/* A volume texture (psgfs lists it, and does not convert it): the 2D texels of this spec under
 * an object saying dimension 3, depth 4. */
static const struct gen_tex_spec volume_spec = {GCM_TEX_A8R8G8B8, 16, 16, 0, false, 0, false, 0};

static uint32_t mip_count(const struct gen_tex_spec *s);

size_t gen_tex_partial_specs(struct gen_tex_spec *out)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof partial_specs / sizeof partial_specs[0]; i++) {
		struct gen_tex_spec s = partial_specs[i].s;
		uint8_t obj[40];
		struct ps3_texture t;
		struct tex_layout l;

		gen_tex_object(&s, 0, obj);
		ps3_texture_decode(obj, sizeof obj, true, &t);
		if (tex_layout_get(&t, &l, NULL, 0) == RC_OK) {
			uint64_t end =
			    partial_specs[i].faces
				? ps3_level_src_end(&t, &l, partial_specs[i].faces - 1, l.mips - 1)
				: ps3_level_src_end(&t, &l, 0, partial_specs[i].levels - 1);

			if (end + partial_specs[i].extra < l.total)
				s.keep_bytes = (uint32_t)(end + partial_specs[i].extra);
		}
		if (n < GEN_TEX_PARTIAL_MAX)
			out[n++] = s;
	}
	return n;
}

static uint8_t base_of(uint8_t f)
{
	return (uint8_t)(f & ~(LN | UN));
}

static bool is_dxt(uint8_t base)
{
	return base == GCM_TEX_DXT1 || base == GCM_TEX_DXT3 || base == GCM_TEX_DXT5;
}

/* Bytes per texel, or per block for DXT. */
static uint32_t gt_bpp(uint8_t base)
{
	switch (base) {
	case GCM_TEX_B8:
		return 1;
	case GCM_TEX_A8R8G8B8:
	case GCM_TEX_D8R8G8B8:
		return 4;
	case GCM_TEX_DXT1:
		return 8;
	case GCM_TEX_DXT3:
	case GCM_TEX_DXT5:
		return 16;
	default:
		return 2;
	}
}

/* DDS bytes per texel of the canonical form. */
static uint32_t gt_dds_bpp(uint8_t base)
{
	switch (base) {
	case GCM_TEX_B8:
		return 1;
	case GCM_TEX_A8R8G8B8:
	case GCM_TEX_D8R8G8B8:
	case GCM_TEX_G8B8:
	case GCM_TEX_R6G5B5:
		return 4;
	default:
		return 2;
	}
}

static bool has_alpha(uint8_t base)
{
	switch (base) {
	case GCM_TEX_A1R5G5B5:
	case GCM_TEX_A4R4G4B4:
	case GCM_TEX_A8R8G8B8:
	case GCM_TEX_R5G5B5A1:
	case GCM_TEX_DXT1:
	case GCM_TEX_DXT3:
	case GCM_TEX_DXT5:
		return true;
	default:
		return false;
	}
}

static uint32_t mip_count(const struct gen_tex_spec *s)
{
	uint32_t m = 0;

	if (s->mips)
		return s->mips;
	for (uint32_t v = s->width > s->height ? s->width : s->height; v; v >>= 1)
		m++;
	return m;
}

static uint32_t lv(uint32_t x, uint32_t l)
{
	x >>= l;
	return x ? x : 1;
}

static bool is_pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

static unsigned ilog2(uint32_t x)
{
	unsigned l = 0;

	while ((1u << l) < x)
		l++;
	return l;
}

/* Source pixel: gradients, an 8-px checker, per-face and per-level colour shifts. */
static void src_px(const struct gen_tex_spec *s, uint32_t face, uint32_t level, uint32_t x,
		   uint32_t y, uint32_t w, uint32_t h, uint8_t o[4])
{
	uint8_t base = base_of(s->format);
	uint32_t cell = ((x >> 3) ^ (y >> 3)) & 1;

	o[0] = (uint8_t)(w > 1 ? x * 255 / (w - 1) : 128);
	o[1] = (uint8_t)(h > 1 ? y * 255 / (h - 1) : 128);
	o[2] = (uint8_t)((cell ? 200 : 50) + 20 * face + 7 * level);
	o[3] = 255;
	if (!has_alpha(base) || (base == GCM_TEX_DXT1 && !s->punch_through))
		return;
	if (s->punch_through)
		o[3] = (cell && (x & 3) == 0) ? 0 : 255;
	else if (base == GCM_TEX_DXT5 && cell) /* 0 and 255 with others: 6-alpha blocks */
		o[3] = (uint8_t)(((x + y) & 3) == 0   ? 0
				 : ((x + y) & 3) == 1 ? 255
						      : 96 + 24 * (x & 3));
	else
		o[3] = (uint8_t)(cell ? 255 : 40 + (x + 3 * y) * 7 % 200);
}

static uint8_t e5(uint32_t v)
{
	return (uint8_t)((v & 31) << 3 | (v & 31) >> 2);
}
static uint8_t e6(uint32_t v)
{
	return (uint8_t)((v & 63) << 2 | (v & 63) >> 4);
}

/*
 * Encode one uncompressed texel: ps3 = stored big-endian bytes, q = what it decodes to,
 * dds = canonical little-endian DDS bytes.
 */
static void enc_texel(uint8_t base, const uint8_t p[4], uint8_t *ps3, uint8_t q[4], uint8_t *dds)
{
	uint32_t r5 = p[0] >> 3, g5 = p[1] >> 3, b5 = p[2] >> 3, a1 = p[3] >= 128;
	uint16_t v = 0, d = 0;

	switch (base) {
	case GCM_TEX_B8:
		ps3[0] = p[0];
		q[0] = q[1] = q[2] = p[0];
		q[3] = 255;
		dds[0] = p[0];
		return;
	case GCM_TEX_A8R8G8B8:
		ps3[0] = p[3], ps3[1] = p[0], ps3[2] = p[1], ps3[3] = p[2];
		memcpy(q, p, 4);
		dds[0] = p[2], dds[1] = p[1], dds[2] = p[0], dds[3] = p[3];
		return;
	case GCM_TEX_D8R8G8B8:
		ps3[0] = 0x00, ps3[1] = p[0], ps3[2] = p[1], ps3[3] = p[2];
		q[0] = p[0], q[1] = p[1], q[2] = p[2], q[3] = 255;
		dds[0] = p[2], dds[1] = p[1], dds[2] = p[0], dds[3] = 0xFF;
		return;
	case GCM_TEX_G8B8:
		ps3[0] = p[1], ps3[1] = p[2];
		q[0] = 0, q[1] = p[1], q[2] = p[2], q[3] = 255;
		dds[0] = p[2], dds[1] = p[1], dds[2] = 0, dds[3] = 0xFF;
		return;
	case GCM_TEX_R6G5B5:
		v = (uint16_t)((p[0] >> 2) << 10 | g5 << 5 | b5);
		ps3[0] = (uint8_t)(v >> 8), ps3[1] = (uint8_t)v;
		q[0] = e6(p[0] >> 2), q[1] = e5(g5), q[2] = e5(b5), q[3] = 255;
		dds[0] = q[2], dds[1] = q[1], dds[2] = q[0], dds[3] = 0xFF;
		return;
	case GCM_TEX_R5G6B5:
		v = (uint16_t)(r5 << 11 | (p[1] >> 2) << 5 | b5);
		d = v;
		q[0] = e5(r5), q[1] = e6(p[1] >> 2), q[2] = e5(b5), q[3] = 255;
		break;
	case GCM_TEX_A1R5G5B5:
		v = (uint16_t)(a1 << 15 | r5 << 10 | g5 << 5 | b5);
		d = v;
		q[0] = e5(r5), q[1] = e5(g5), q[2] = e5(b5), q[3] = a1 ? 255 : 0;
		break;
	case GCM_TEX_R5G5B5A1:
		v = (uint16_t)(r5 << 11 | g5 << 6 | b5 << 1 | a1);
		d = (uint16_t)(a1 << 15 | r5 << 10 | g5 << 5 | b5);
		q[0] = e5(r5), q[1] = e5(g5), q[2] = e5(b5), q[3] = a1 ? 255 : 0;
		break;
	case GCM_TEX_D1R5G5B5: /* the D bit is left 0: it must read as opaque */
		v = (uint16_t)(r5 << 10 | g5 << 5 | b5);
		d = (uint16_t)(v | 0x8000);
		q[0] = e5(r5), q[1] = e5(g5), q[2] = e5(b5), q[3] = 255;
		break;
	case GCM_TEX_A4R4G4B4:
	default:
		v = (uint16_t)((p[3] >> 4) << 12 | (p[0] >> 4) << 8 | (p[1] >> 4) << 4 | p[2] >> 4);
		d = v;
		q[0] = (uint8_t)((p[0] >> 4) * 17), q[1] = (uint8_t)((p[1] >> 4) * 17);
		q[2] = (uint8_t)((p[2] >> 4) * 17), q[3] = (uint8_t)((p[3] >> 4) * 17);
		break;
	}
	ps3[0] = (uint8_t)(v >> 8), ps3[1] = (uint8_t)v;
	dds[0] = (uint8_t)d, dds[1] = (uint8_t)(d >> 8);
}

static uint16_t to565(const uint8_t c[3])
{
	return (uint16_t)((c[0] >> 3) << 11 | (c[1] >> 2) << 5 | c[2] >> 3);
}

static void from565(uint16_t v, int o[3])
{
	o[0] = e5(v >> 11), o[1] = e6(v >> 5), o[2] = e5(v);
}

static int dist3(const int a[3], const uint8_t *b)
{
	int d = 0;

	for (int k = 0; k < 3; k++)
		d += (a[k] - b[k]) * (a[k] - b[k]);
	return d;
}

/* Colour block: endpoints = bounding box corners, nearest of the palette. */
static void enc_colour(const uint8_t px[16][4], bool dxt1, bool punch, uint8_t out[8])
{
	uint8_t lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
	bool any_clear = false, any_opaque = false;
	uint16_t c0, c1;
	int pal[4][3];
	uint32_t bits = 0;
	bool three;

	for (int i = 0; i < 16; i++) {
		if (dxt1 && punch && px[i][3] < 128) {
			any_clear = true;
			continue;
		}
		any_opaque = true;
		for (int k = 0; k < 3; k++) {
			lo[k] = px[i][k] < lo[k] ? px[i][k] : lo[k];
			hi[k] = px[i][k] > hi[k] ? px[i][k] : hi[k];
		}
	}
	if (!any_opaque)
		memset(lo, 0, 3), memset(hi, 0, 3);
	three = dxt1 && any_clear;
	if (three) {
		c0 = to565(lo), c1 = to565(hi); /* c0 <= c1: 3-colour mode */
	} else {
		c0 = to565(hi), c1 = to565(lo); /* c0 >= c1 */
	}
	from565(c0, pal[0]);
	from565(c1, pal[1]);
	for (int k = 0; k < 3; k++) {
		if (three || (dxt1 && c0 == c1)) {
			pal[2][k] = (pal[0][k] + pal[1][k]) / 2;
			pal[3][k] = 0;
		} else {
			pal[2][k] = (2 * pal[0][k] + pal[1][k]) / 3;
			pal[3][k] = (pal[0][k] + 2 * pal[1][k]) / 3;
		}
	}
	for (int i = 0; i < 16; i++) {
		int best = 0, bd = dist3(pal[0], px[i]);
		int n = (three || (dxt1 && c0 == c1)) ? 3 : 4;

		if (three && px[i][3] < 128) {
			bits |= 3u << (2 * i);
			continue;
		}
		for (int j = 1; j < n; j++) {
			int d = dist3(pal[j], px[i]);

			if (d < bd)
				bd = d, best = j;
		}
		bits |= (uint32_t)best << (2 * i);
	}
	out[0] = (uint8_t)c0, out[1] = (uint8_t)(c0 >> 8);
	out[2] = (uint8_t)c1, out[3] = (uint8_t)(c1 >> 8);
	out[4] = (uint8_t)bits, out[5] = (uint8_t)(bits >> 8);
	out[6] = (uint8_t)(bits >> 16), out[7] = (uint8_t)(bits >> 24);
}

static void enc_alpha5(const uint8_t px[16][4], uint8_t out[8])
{
	int lo = 255, hi = 0, mlo = 255, mhi = 0;
	bool extremes = false, mid = false;
	int pal[8];
	uint64_t bits = 0;

	for (int i = 0; i < 16; i++) {
		int a = px[i][3];

		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
		if (a == 0 || a == 255) {
			extremes = true;
		} else {
			mid = true;
			mlo = a < mlo ? a : mlo;
			mhi = a > mhi ? a : mhi;
		}
	}
	if (extremes && mid) { /* 6-alpha mode: a0 <= a1, indices 6 = 0 and 7 = 255 */
		pal[0] = mlo, pal[1] = mhi;
		for (int i = 1; i < 5; i++)
			pal[i + 1] = ((5 - i) * pal[0] + i * pal[1]) / 5;
		pal[6] = 0, pal[7] = 255;
	} else {
		pal[0] = hi, pal[1] = lo;
		if (hi > lo)
			for (int i = 1; i < 7; i++)
				pal[i + 1] = ((7 - i) * pal[0] + i * pal[1]) / 7;
		else
			for (int i = 2; i < 8; i++)
				pal[i] = pal[0];
	}
	for (int i = 0; i < 16; i++) {
		int best = 0, bd = 1 << 20;

		for (int j = 0; j < 8; j++) {
			int d = abs(pal[j] - px[i][3]);

			if (d < bd)
				bd = d, best = j;
		}
		bits |= (uint64_t)best << (3 * i);
	}
	out[0] = (uint8_t)pal[0], out[1] = (uint8_t)pal[1];
	for (int i = 0; i < 6; i++)
		out[2 + i] = (uint8_t)(bits >> (8 * i));
}

static void enc_block(uint8_t base, bool punch, const uint8_t px[16][4], uint8_t *out)
{
	if (base == GCM_TEX_DXT1) {
		enc_colour(px, true, punch, out);
		return;
	}
	if (base == GCM_TEX_DXT3) {
		for (int i = 0; i < 8; i++) {
			uint32_t a0 = (px[2 * i][3] + 8) / 17, a1 = (px[2 * i + 1][3] + 8) / 17;

			out[i] = (uint8_t)((a1 > 15 ? 15 : a1) << 4 | (a0 > 15 ? 15 : a0));
		}
	} else {
		enc_alpha5(px, out);
	}
	enc_colour(px, false, false, out + 8);
}

struct gt_level {
	uint8_t *ps3; /* stored bytes */
	size_t ps3_len;
	uint8_t *dds; /* canonical bytes */
	size_t dds_len;
	uint8_t *q;   /* decoded RGBA (uncompressed only) */
	uint8_t *src; /* source RGBA */
};

static void gt_level_free(struct gt_level *l)
{
	free(l->ps3);
	free(l->dds);
	free(l->q);
	free(l->src);
	memset(l, 0, sizeof *l);
}

/* Row pitch written in the header and used for LN uncompressed levels. */
static uint32_t gt_pitch(const struct gen_tex_spec *s)
{
	uint8_t base = base_of(s->format);

	if (is_dxt(base))
		return ((s->width + 3) / 4 ? (s->width + 3) / 4 : 1) * gt_bpp(base);
	if ((s->format & LN) && s->pitch)
		return s->pitch;
	return s->width * gt_bpp(base);
}

static bool gt_make_level(const struct gen_tex_spec *s, uint32_t face, uint32_t level,
			  struct gt_level *o)
{
	uint8_t base = base_of(s->format);
	uint32_t w = lv(s->width, level), h = lv(s->height, level), bpp = gt_bpp(base);

	memset(o, 0, sizeof *o);
	o->src = malloc((size_t)w * h * 4);
	if (!o->src)
		return false;
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			src_px(s, face, level, x, y, w, h, o->src + ((size_t)y * w + x) * 4);
	if (is_dxt(base)) {
		uint32_t bw = (w + 3) / 4, bh = (h + 3) / 4;

		o->ps3_len = o->dds_len = (size_t)bw * bh * bpp;
		o->ps3 = malloc(o->ps3_len);
		o->dds = malloc(o->dds_len);
		if (!o->ps3 || !o->dds)
			return false;
		for (uint32_t by = 0; by < bh; by++) {
			for (uint32_t bx = 0; bx < bw; bx++) {
				uint8_t px[16][4];

				for (uint32_t i = 0; i < 16; i++) {
					uint32_t x = bx * 4 + i % 4, y = by * 4 + i / 4;

					x = x < w ? x
						  : w - 1; /* clamp: edge blocks of NPOT sizes */
					y = y < h ? y : h - 1;
					memcpy(px[i], o->src + ((size_t)y * w + x) * 4, 4);
				}
				enc_block(base, s->punch_through, px,
					  o->ps3 + ((size_t)by * bw + bx) * bpp);
			}
		}
		memcpy(o->dds, o->ps3, o->dds_len);
		return true;
	}
	{
		uint32_t db = gt_dds_bpp(base);
		bool ln = (s->format & LN) != 0;
		bool swz =
		    !ln && is_pow2(w) && is_pow2(h) && is_pow2(s->width) && is_pow2(s->height);
		size_t stride = ln ? gt_pitch(s) : (size_t)w * bpp;

		o->ps3_len = stride * h;
		o->ps3 = malloc(o->ps3_len);
		o->dds_len = (size_t)w * h * db;
		o->dds = malloc(o->dds_len);
		o->q = malloc((size_t)w * h * 4);
		if (!o->ps3 || !o->dds || !o->q)
			return false;
		memset(o->ps3, 0xCD, o->ps3_len); /* pitch padding is garbage on purpose */
		for (uint32_t y = 0; y < h; y++) {
			for (uint32_t x = 0; x < w; x++) {
				size_t li = (size_t)y * w + x;
				size_t at =
				    swz ? (size_t)tex_ps3_swizzle_index(x, y, ilog2(w), ilog2(h)) *
					      bpp
					: y * stride + (size_t)x * bpp;

				enc_texel(base, o->src + li * 4, o->ps3 + at, o->q + li * 4,
					  o->dds + li * db);
			}
		}
		memcpy(o->src, o->q, (size_t)w * h * 4); /* truth: quantised source */
	}
	return true;
}

void gen_tex_object(const struct gen_tex_spec *s, uint32_t m_buffer, uint8_t out[40])
{
	const struct ps3_texture t = {
	    .format = s->format,
	    .mipmap = (uint8_t)mip_count(s),
	    .dimension = 2,
	    .cubemap = s->cube ? 1 : 0,
	    .remap = 0x0000AAE4u,
	    .width = s->width,
	    .height = s->height,
	    .depth = 1,
	    .pitch = gt_pitch(s),
	    .m_buffer = m_buffer,
	    .store_type = s->cube ? TEX_STORE_CUBE : TEX_STORE_2D,
	    .unknown_24 = 0x5572,
	    .format_copy = s->format,
	};

	ps3_texture_encode(&t, true, out);
}

/* Build one texture's base resource bytes and truth. */
static bool gt_texture(const struct gen_tex_spec *s, struct buf *br, struct gen_tex_truth_item *ti)
{
	uint32_t m = mip_count(s), faces = s->cube ? 6 : 1;
	size_t whole = 0; /* DDS bytes of what a cut resource still holds whole */
	struct buf dds;
	bool ok = true;

	buf_init(&dds);
	for (uint32_t f = 0; f < faces && ok; f++) {
		if (f)
			buf_pad_to(br, 0x80); /* faces at align(faceBytes, 0x80); last unpadded */
		for (uint32_t l = 0; l < m && ok; l++) {
			struct gt_level lvl;

			ok = gt_make_level(s, f, l, &lvl);
			if (ok) {
				buf_put(br, lvl.ps3, lvl.ps3_len);
				buf_put(&dds, lvl.dds, lvl.dds_len);
				/* whole faces first; failing those, whole levels of face 0 */
				if (s->keep_bytes && br->len <= s->keep_bytes &&
				    (l == m - 1 || (f == 0 && whole == dds.len - lvl.dds_len)))
					whole = dds.len;
				if (ti && f == 0 && l == 0) {
					size_t n = (size_t)s->width * s->height * 4;

					ti->src_rgba = lvl.src;
					lvl.src = NULL;
					ti->expect_rgba = malloc(n);
					if (!ti->expect_rgba)
						ok = false;
					else if (is_dxt(base_of(s->format)))
						dxt_decode_image(
						    base_of(s->format) == GCM_TEX_DXT1 ? TEXK_DXT1
						    : base_of(s->format) == GCM_TEX_DXT3
							? TEXK_DXT3
							: TEXK_DXT5,
						    lvl.ps3, s->width, s->height, ti->expect_rgba);
					else
						memcpy(ti->expect_rgba, lvl.q, n);
				}
			}
			gt_level_free(&lvl);
		}
	}
	if (s->keep_bytes && s->keep_bytes < br->len) {
		br->len = s->keep_bytes;
		dds.len = whole;
	}
	if (ti && ok && !dds.oom)
		ti->dds_payload = buf_steal(&dds, &ti->dds_payload_len);
	buf_free(&dds);
	return ok && !br->oom;
}

/*
 * A texture's base resource bytes depend on its spec alone, and generators ask for the same
 * specs over and over (a folder of 2,000 arenas re-encoded the same DXT textures for each):
 * they are kept per process, up to TEX_CACHE_BYTES, and copied out, so the output is the same
 * byte for byte. Entries are never freed (still reachable at exit). Generators may run in
 * several threads (unit tests): a mutex guards the list, never held while encoding.
 */
#define TEX_CACHE_BYTES (64u << 20)
struct tex_cached {
	struct tex_cached *next;
	struct gen_tex_spec spec;
	size_t len;
	uint8_t bytes[];
};
static struct tex_cached *tex_cache;
static size_t tex_cache_bytes;
static pthread_mutex_t tex_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* every field of the spec is compared: a field added to it must be added here */
_Static_assert(sizeof(struct gen_tex_spec) == 20, "gen_tex_spec changed: update same_spec");

static bool same_spec(const struct gen_tex_spec *a, const struct gen_tex_spec *b)
{
	return a->format == b->format && a->width == b->width && a->height == b->height &&
	       a->mips == b->mips && a->cube == b->cube && a->pitch == b->pitch &&
	       a->punch_through == b->punch_through && a->keep_bytes == b->keep_bytes;
}

/* gt_texture without the truth, through the cache; br starts empty (its bytes are the entry). */
static bool gt_texture_cached(const struct gen_tex_spec *s, struct buf *br)
{
	const struct tex_cached *c;
	struct tex_cached *n;

	pthread_mutex_lock(&tex_cache_lock);
	for (c = tex_cache; c && !same_spec(&c->spec, s); c = c->next)
		;
	pthread_mutex_unlock(&tex_cache_lock);
	if (c) { /* entries are immutable once listed */
		buf_put(br, c->bytes, c->len);
		return !br->oom;
	}
	if (!gt_texture(s, br, NULL))
		return false;
	if (br->len > TEX_CACHE_BYTES || !(n = malloc(sizeof *n + br->len)))
		return true;
	n->spec = *s;
	n->len = br->len;
	memcpy(n->bytes, br->data, br->len);
	pthread_mutex_lock(&tex_cache_lock);
	if (tex_cache_bytes + n->len <= TEX_CACHE_BYTES) {
		tex_cache_bytes += n->len;
		n->next = tex_cache;
		tex_cache = n;
		n = NULL;
	}
	pthread_mutex_unlock(&tex_cache_lock);
	free(n);
	return true;
}

/* Texture k: its base resource, its Texture object, its TOC entry and, with ti, its truth. A
 * volume: the object says dimension 3, depth 4. */
static bool add_texture(struct psg_builder *b, const struct gen_tex_opts *o,
			const struct gen_tex_spec *s, size_t k, bool volume,
			struct psgo_toc_entry *toc, char name[40], struct gen_tex_truth_item *ti)
{
	uint64_t guid = 0x2c7f381800171900ull + (o ? o->guid_first : 0) + k;
	uint8_t obj[40];
	uint32_t bi, tx;
	struct buf br;

	buf_init(&br);
	if (!(ti ? gt_texture(s, &br, ti) : gt_texture_cached(s, &br))) {
		buf_free(&br);
		return false;
	}
	bi = psgb_add_base_resource(b, 0x80, br.data, br.len);
	buf_free(&br);
	gen_tex_object(s, bi, obj);
	if (volume) {
		struct ps3_texture t;

		ps3_texture_decode(obj, sizeof obj, true, &t);
		t.dimension = 3;
		t.depth = 4;
		ps3_texture_encode(&t, true, obj);
	}
	tx = psgb_add(b, RW_T_TEXTURE, 4, obj, sizeof obj);
	psgb_ref(b, tx, 0x18);
	snprintf(name, 40, "0x%016llx.Texture", (unsigned long long)guid);
	toc->name = o && o->unnamed ? NULL : name;
	toc->pad = 0x9B0F1678u;
	toc->guid = guid;
	toc->type = RW_T_TEXTURE_HASH;
	toc->object = tx;
	if (ti) {
		if (!(o && o->unnamed))
			snprintf(ti->name, sizeof ti->name, "0x%016llx", (unsigned long long)guid);
		ti->guid = guid;
		ti->format = s->format;
		ti->width = s->width;
		ti->height = s->height;
		ti->mips = mip_count(s);
		ti->cube = s->cube;
		ti->tex_index = tx;
		ti->buf_index = bi;
	}
	return true;
}

enum rc gen_psg_textures(const struct gen_tex_opts *o, struct buf *out, struct psg_gen_record *rec,
			 struct gen_tex_truth *truth)
{
	static const struct gen_tex_spec short_cube = {GCM_TEX_DXT5, 256, 256,	 1,
						       true,	     0,	  false, 65536};
	const struct gen_tex_spec *given = o && o->specs ? o->specs : default_specs;
	size_t n = o && o->specs ? o->n_specs : sizeof default_specs / sizeof default_specs[0];
	struct gen_tex_spec *specs = xcalloc_n(n + 2 + GEN_TEX_PARTIAL_MAX, sizeof *specs);
	struct psgo_toc_entry *toc = NULL;
	char(*names)[40] = NULL;
	struct psg_builder *b;
	enum rc r = RC_NOMEM;

	if (truth)
		memset(truth, 0, sizeof *truth);
	if (!specs)
		return RC_NOMEM;
	memcpy(specs, given, n * sizeof *specs);
	if (o && o->short_cube)
		specs[n++] = short_cube;
	if (o && o->partial) {
		n += gen_tex_partial_specs(specs + n);
		specs[n++] = volume_spec;
	}
	b = psgb_new(PSGB_REG_TEXTURE10, o && o->arena_id ? o->arena_id : 0x7E570000u);
	toc = xcalloc_n(n ? n : 1, sizeof *toc);
	names = xcalloc_n(n ? n : 1, sizeof *names);
	if (truth)
		truth->items = xcalloc_n(n ? n : 1, sizeof *truth->items);
	if (!b || !toc || !names || (truth && !truth->items))
		goto fail;
	if (truth)
		truth->n = n;
	psgb_set_gpu_align(b, 0x80);
	/*
	 * Shuffled: VersionData goes first logically. The builder reads a stored 0 as null and
	 * never renumbers it, but Texture.m_buffer 0 is a real index (row 0 = the first base
	 * resource in real files); with no object at logical 0 referenced, every ref moves.
	 */
	if (o && o->shuffle_seed)
		psgo_version(b, PSGO_NEW, false);
	for (size_t k = 0; k < n; k++)
		if (!add_texture(b, o, &specs[k], k, o && o->partial && k + 1 == n, &toc[k],
				 names[k], truth ? &truth->items[k] : NULL))
			goto fail;
	psgo_toc(b, PSGO_NEW, toc, (uint32_t)n);
	if (!(o && o->shuffle_seed))
		psgo_version(b, PSGO_NEW, false);
	r = psgb_finish(b, o ? o->shuffle_seed : 0, out, rec);
	b = NULL;
	if (r != RC_OK)
		goto fail;
	free(toc);
	free(names);
	free(specs);
	return RC_OK;
fail:
	psgb_free(b);
	free(toc);
	free(names);
	free(specs);
	if (truth)
		gen_tex_truth_free(truth);
	return r;
}

void gen_tex_truth_free(struct gen_tex_truth *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->items[i].src_rgba);
		free(t->items[i].expect_rgba);
		free(t->items[i].dds_payload);
	}
	free(t->items);
	t->items = NULL;
	t->n = 0;
}
