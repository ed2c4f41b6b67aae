/*
 * PS3 GCM textures (docs/skate-objects.md, "Texture object", "Texel layout", "Cube maps"):
 * the Texture object, GCM formats, the source layout, the RSX swizzle, canonical rows, and the
 * platform's texture row (tex_platform.h): describing, reading and writing PS3 textures.
 *
 * Why these layout rules (texture.h lists them): DXT data on RSX is always block-linear and
 * the real files pack each level tightly (docs/skate-objects.md, "Texel layout"), so the pitch
 * field is informational there. Uncompressed textures are swizzled unless LN is set; the RSX only
 * swizzles power-of-two sizes, so an NPOT texture without LN is malformed and the most useful
 * reading is linear. For LN textures RSX addresses every mip level with the one pitch register.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/tex_platform.h"
#include "psgfs/formats/texmod.h"
#include "psgfs/formats/texture.h"

struct tex_ps3_fmt {
	uint8_t base;
	const char *name;
	uint8_t bpp; /* bytes per texel, or per block when compressed; 0 = unknown */
	bool compressed, supported, alpha;
	enum tex_kind kind;
};

static const struct tex_ps3_fmt tex_ps3_fmts[] = {
    {GCM_TEX_B8, "B8", 1, false, true, false, TEXK_L8},
    {GCM_TEX_A1R5G5B5, "A1R5G5B5", 2, false, true, true, TEXK_A1R5G5B5},
    {GCM_TEX_A4R4G4B4, "A4R4G4B4", 2, false, true, true, TEXK_A4R4G4B4},
    {GCM_TEX_R5G6B5, "R5G6B5", 2, false, true, false, TEXK_R5G6B5},
    {GCM_TEX_A8R8G8B8, "A8R8G8B8", 4, false, true, true, TEXK_BGRA8},
    {GCM_TEX_DXT1, "DXT1", 8, true, true, true, TEXK_DXT1},
    {GCM_TEX_DXT3, "DXT3", 16, true, true, true, TEXK_DXT3},
    {GCM_TEX_DXT5, "DXT5", 16, true, true, true, TEXK_DXT5},
    {GCM_TEX_G8B8, "G8B8", 2, false, true, false, TEXK_BGRX8},
    {0x8D, "COMPRESSED_B8R8_G8R8", 0, false, false, false, TEXK_BGRX8},
    {0x8E, "COMPRESSED_R8B8_R8G8", 0, false, false, false, TEXK_BGRX8},
    {GCM_TEX_R6G5B5, "R6G5B5", 2, false, true, false, TEXK_BGRX8},
    {0x90, "DEPTH24_D8", 4, false, false, false, TEXK_BGRX8},
    {0x91, "DEPTH24_D8_FLOAT", 4, false, false, false, TEXK_BGRX8},
    {0x92, "DEPTH16", 2, false, false, false, TEXK_BGRX8},
    {0x93, "DEPTH16_FLOAT", 2, false, false, false, TEXK_BGRX8},
    {0x94, "X16", 2, false, false, false, TEXK_BGRX8},
    {0x95, "Y16_X16", 4, false, false, false, TEXK_BGRX8},
    {GCM_TEX_R5G5B5A1, "R5G5B5A1", 2, false, true, true, TEXK_A1R5G5B5},
    {0x98, "COMPRESSED_HILO8", 2, false, false, false, TEXK_BGRX8},
    {0x99, "COMPRESSED_HILO_S8", 2, false, false, false, TEXK_BGRX8},
    {0x9A, "W16_Z16_Y16_X16_FLOAT", 8, false, false, false, TEXK_BGRX8},
    {0x9B, "W32_Z32_Y32_X32_FLOAT", 16, false, false, false, TEXK_BGRX8},
    {0x9C, "X32_FLOAT", 4, false, false, false, TEXK_BGRX8},
    {GCM_TEX_D1R5G5B5, "D1R5G5B5", 2, false, true, false, TEXK_A1R5G5B5},
    {GCM_TEX_D8R8G8B8, "D8R8G8B8", 4, false, true, false, TEXK_BGRX8},
    {0x9F, "Y16_X16_FLOAT", 4, false, false, false, TEXK_BGRX8},
};

static const struct tex_ps3_fmt *fmt_find(uint8_t base)
{
	for (size_t i = 0; i < sizeof tex_ps3_fmts / sizeof tex_ps3_fmts[0]; i++)
		if (tex_ps3_fmts[i].base == base)
			return &tex_ps3_fmts[i];
	return NULL;
}

const char *tex_ps3_format_name(uint8_t base_format)
{
	const struct tex_ps3_fmt *f = fmt_find(base_format);

	return f ? f->name : NULL;
}

enum rc tex_ps3_read_object(const struct src *s, const struct arena *a, uint32_t idx,
			    struct ps3_texture *t)
{
	uint8_t raw[PS3_TEXTURE_SIZE];
	enum rc r;

	memset(t, 0, sizeof *t);
	if (idx >= a->n_dict)
		return RC_BOUNDS;
	if (arena_row(a, idx)->type_id != RW_T_TEXTURE)
		return RC_UNSUPPORTED;
	if (!arena_row(a, idx)->readable)
		return RC_BOUNDS;
	if (arena_row(a, idx)->size < sizeof raw)
		return RC_TRUNCATED;
	r = src_read(s, arena_row(a, idx)->start, raw, sizeof raw);
	return r == RC_OK ? ps3_texture_decode(raw, sizeof raw, a->big_endian, t) : r;
}

enum rc ps3_texture_decode(const uint8_t *obj, size_t len, bool big_endian, struct ps3_texture *out)
{
	struct br r;

	memset(out, 0, sizeof *out);
	if (!obj || len < PS3_TEXTURE_SIZE)
		return RC_TRUNCATED;
	br_init(&r, obj, len, big_endian);
	out->format = br_u8(&r);
	out->base_format = (uint8_t)(out->format & ~(GCM_TEX_LN | GCM_TEX_UN));
	out->linear = (out->format & GCM_TEX_LN) != 0;
	out->unnormalized = (out->format & GCM_TEX_UN) != 0;
	out->mipmap = br_u8(&r);
	out->dimension = br_u8(&r);
	out->cubemap = br_u8(&r);
	out->remap = br_u32(&r);
	out->width = br_u16(&r);
	out->height = br_u16(&r);
	out->depth = br_u16(&r);
	out->location = br_u8(&r);
	out->padding = br_u8(&r);
	out->pitch = br_u32(&r);
	out->offset = br_u32(&r);
	out->m_buffer = br_u32(&r);
	out->store_type = br_u32(&r);
	out->store_flags = br_u32(&r);
	out->unknown_24 = br_u16(&r);
	out->unknown_26 = br_u8(&r);
	out->format_copy = br_u8(&r);
	return r.err ? RC_TRUNCATED : RC_OK;
}

/* log2 when x is a power of two, else -1. */
static int pow2_log(uint32_t x)
{
	int l = 0;

	if (x == 0 || (x & (x - 1)))
		return -1;
	while ((1u << l) < x)
		l++;
	return l;
}

/* Source bytes of one level as stored. */
static bool level_src_bytes(const struct tex_layout *l, uint32_t w, uint32_t h, uint64_t *out)
{
	uint64_t stride;

	if (l->compressed)
		return mul_ok((uint64_t)((w + 3) / 4) * ((h + 3) / 4), l->bpp, out);
	if (l->swizzled || l->row_pitch == 0)
		stride = (uint64_t)w * l->bpp;
	else
		stride = l->row_pitch;
	return mul_ok(stride, h, out);
}

static bool level_out_bytes(enum tex_kind k, uint32_t w, uint32_t h, uint64_t *out)
{
	if (tex_kind_compressed(k))
		return mul_ok((uint64_t)((w + 3) / 4) * ((h + 3) / 4), tex_kind_bpp(k), out);
	return mul_ok((uint64_t)w * h, tex_kind_bpp(k), out);
}

/* Whether the header describes a texture that can be converted (format, dimension, size, a
 * mip count its size allows). */
static enum rc check_header(const struct ps3_texture *t, const struct tex_ps3_fmt *f, char *why,
			    size_t whylen)
{
	uint32_t maxm = 0;

	if (!f) {
		diag_note(why, whylen, "unknown format byte 0x%02X", t->format);
		return RC_UNSUPPORTED;
	}
	if (!f->supported) {
		diag_note(why, whylen, "format %s (0x%02X) is not converted", f->name, t->format);
		return RC_UNSUPPORTED;
	}
	if (t->dimension == 3 || t->depth > 1) {
		diag_note(why, whylen, "3D texture (dimension %u, depth %u) is not converted",
			  t->dimension, t->depth);
		return RC_UNSUPPORTED;
	}
	if (t->dimension != 1 && t->dimension != 2) {
		diag_note(why, whylen, "dimension %u is not 1, 2 or 3", t->dimension);
		return RC_CORRUPT;
	}
	if (t->width == 0 || t->height == 0) {
		diag_note(why, whylen, "size %ux%u is empty", t->width, t->height);
		return RC_CORRUPT;
	}
	for (uint32_t s = t->width > t->height ? t->width : t->height; s; s >>= 1)
		maxm++;
	if (t->mipmap == 0 || t->mipmap > maxm) {
		diag_note(why, whylen, "mipmap count %u outside 1..%u for %ux%u", t->mipmap, maxm,
			  t->width, t->height);
		return RC_CORRUPT;
	}
	return RC_OK;
}

/* How rows are laid out: DXT packed whatever the pitch says; uncompressed swizzled without LN
 * (power-of-two sizes only), else rows `pitch` apart. */
static enum rc row_layout(const struct ps3_texture *t, const struct tex_ps3_fmt *f,
			  struct tex_layout *l, char *why, size_t whylen)
{
	if (f->compressed) {
		uint64_t packed = (uint64_t)((t->width + 3) / 4) * f->bpp;

		if (t->pitch != packed)
			diag_note(why, whylen,
				  "pitch %u is not the packed row of %llu bytes (ignored)",
				  t->pitch, (unsigned long long)packed);
	} else if (!t->linear) {
		if (pow2_log(t->width) < 0 || pow2_log(t->height) < 0)
			diag_note(
			    why, whylen,
			    "non-power-of-two %ux%u texture is not linear (LN); read as packed "
			    "linear rows",
			    t->width, t->height);
		else
			l->swizzled = true;
	} else if (t->pitch != 0) {
		if ((uint64_t)t->width * f->bpp > t->pitch) {
			diag_note(why, whylen, "pitch %u is smaller than a row of %llu bytes",
				  t->pitch, (unsigned long long)t->width * f->bpp);
			return RC_CORRUPT;
		}
		l->row_pitch = t->pitch;
	}
	return RC_OK;
}

enum rc tex_layout_get(const struct ps3_texture *t, struct tex_layout *l, char *why, size_t whylen)
{
	const struct tex_ps3_fmt *f = fmt_find(t->base_format);
	uint64_t face = 0, out = 0, v;
	bool cube;
	enum rc r;

	memset(l, 0, sizeof *l);
	if (why && whylen)
		why[0] = 0;
	r = check_header(t, f, why, whylen);
	if (r != RC_OK)
		return r;
	cube = t->cubemap != 0 || t->store_type == TEX_STORE_CUBE;
	if ((t->cubemap != 0) != (t->store_type == TEX_STORE_CUBE))
		diag_note(why, whylen, "cubemap byte %u disagrees with storeType 0x%X; read as %s",
			  t->cubemap, t->store_type, cube ? "cube map" : "2D");
	l->mips = t->mipmap;
	l->faces = cube ? 6 : 1;
	l->compressed = f->compressed;
	l->bpp = f->bpp;
	r = row_layout(t, f, l, why, whylen);
	if (r != RC_OK)
		return r;
	for (uint32_t i = 0; i < l->mips; i++) {
		uint32_t w = tex_dim(t->width, i), h = tex_dim(t->height, i);

		if (!level_src_bytes(l, w, h, &v) || !add_ok(face, v, &face))
			return RC_CORRUPT;
		if (!level_out_bytes(f->kind, w, h, &v) || !add_ok(out, v, &out))
			return RC_CORRUPT;
	}
	l->face_bytes = face;
	l->face_stride = cube ? align_up(face, 0x80) : face;
	if (!mul_ok(l->face_stride, l->faces - 1, &v) || !add_ok(v, face, &l->total) ||
	    !mul_ok(out, l->faces, &l->out_bytes))
		return RC_CORRUPT;
	return RC_OK;
}

/* The low 16 bits of v spread to the even bits of the result. */
static uint32_t spread16(uint32_t v)
{
	v &= 0xFFFF;
	v = (v | v << 8) & 0x00FF00FF;
	v = (v | v << 4) & 0x0F0F0F0F;
	v = (v | v << 2) & 0x33333333;
	return (v | v << 1) & 0x55555555;
}

/*
 * Bit b of x, then bit b of y, for every b below both sizes; the larger coordinate's higher
 * bits follow in order. The same as taking the bits one at a time, without the loop per
 * texel that made reading a 4096x4096 swizzled texture take 10 s (test_texture checks both
 * agree for every size).
 */
uint32_t tex_ps3_swizzle_index(uint32_t x, uint32_t y, unsigned lw, unsigned lh)
{
	unsigned m = lw < lh ? lw : lh, top = lw > lh ? lw : lh;
	uint32_t low = m ? (1u << m) - 1 : 0, all = top < 32 ? (1u << top) - 1 : ~0u;

	if (m >= 16) { /* an index past 32 bits: only what fits, bit by bit */
		uint32_t idx = 0;
		unsigned shift = 0;

		for (unsigned b = 0; b < top && shift < 32; b++) {
			if (b < lw)
				idx |= (x >> b & 1u) << shift++;
			if (b < lh && shift < 32)
				idx |= (y >> b & 1u) << shift++;
		}
		return idx;
	}
	return spread16(x & low) | spread16(y & low) << 1 |
	       (((lw > lh ? x : y) & all) >> m) << (2 * m);
}

void tex_ps3_unswizzle(const uint8_t *src, uint8_t *dst, unsigned lw, unsigned lh, uint32_t bpp)
{
	uint32_t w = 1u << lw, h = 1u << lh;

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			memcpy(dst + ((size_t)y * w + x) * bpp,
			       src + (size_t)tex_ps3_swizzle_index(x, y, lw, lh) * bpp, bpp);
}

void tex_ps3_swizzle(const uint8_t *src, uint8_t *dst, unsigned lw, unsigned lh, uint32_t bpp)
{
	uint32_t w = 1u << lw, h = 1u << lh;

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			memcpy(dst + (size_t)tex_ps3_swizzle_index(x, y, lw, lh) * bpp,
			       src + ((size_t)y * w + x) * bpp, bpp);
}

/* One big-endian GCM texel to the canonical little-endian layout. */
static void conv_texel(uint8_t base, const uint8_t *s, uint8_t *d)
{
	uint16_t v;

	switch (base) {
	case GCM_TEX_B8:
		d[0] = s[0];
		return;
	case GCM_TEX_A8R8G8B8:
		d[0] = s[3];
		d[1] = s[2];
		d[2] = s[1];
		d[3] = s[0];
		return;
	case GCM_TEX_D8R8G8B8:
		d[0] = s[3];
		d[1] = s[2];
		d[2] = s[1];
		d[3] = 0xFF;
		return;
	case GCM_TEX_G8B8:
		d[0] = s[1];
		d[1] = s[0];
		d[2] = 0;
		d[3] = 0xFF;
		return;
	case GCM_TEX_R6G5B5:
		v = ld_u16be(s);
		d[0] = tex_x5(v & 31);
		d[1] = tex_x5(v >> 5 & 31);
		d[2] = tex_x6(v >> 10);
		d[3] = 0xFF;
		return;
	case GCM_TEX_R5G5B5A1:
		v = ld_u16be(s);
		v = (uint16_t)((v & 1) << 15 | v >> 1);
		break;
	case GCM_TEX_D1R5G5B5:
		v = (uint16_t)(ld_u16be(s) | 0x8000);
		break;
	default: /* A1R5G5B5, A4R4G4B4, R5G6B5 */
		v = ld_u16be(s);
		break;
	}
	d[0] = (uint8_t)v;
	d[1] = (uint8_t)(v >> 8);
}

bool tex_ps3_kind(uint8_t base_format, enum tex_kind *kind, bool *alpha)
{
	const struct tex_ps3_fmt *f = fmt_find(base_format);

	if (!f || !f->supported)
		return false;
	*kind = f->kind;
	*alpha = f->alpha;
	return true;
}

/* Where level `level` starts inside one face, as stored. */
static uint64_t level_src_off(const struct ps3_texture *t, const struct tex_layout *l,
			      uint32_t level)
{
	uint64_t off = 0, v = 0;

	for (uint32_t i = 0; i < level; i++) {
		level_src_bytes(l, tex_dim(t->width, i), tex_dim(t->height, i), &v);
		off += v;
	}
	return off;
}

uint64_t ps3_level_src_end(const struct ps3_texture *t, const struct tex_layout *l, uint32_t face,
			   uint32_t level)
{
	uint64_t v = 0;

	level_src_bytes(l, tex_dim(t->width, level), tex_dim(t->height, level), &v);
	return face * l->face_stride + level_src_off(t, l, level) + v;
}

/* Bytes of the runs a band reads at once, at most (below ASan's freshly mapped sizes). */
#define RUNS_BYTES (32u << 10)

/*
 * A band of rows of a swizzled level, unswizzled: rows [y0, y0+B) with B a power of two that
 * divides y0 hold, for every column of B-wide tiles, one contiguous run of B*B texels (the low
 * 2k bits of the Morton index are the tile's own), so a band is read run by run, and runs that
 * follow each other in the file (tiles in pairs; every tile of a band as tall as a wide level)
 * in one read: a read per tile of 8x8 texels was most of serving a 4096-wide picture.
 */
static enum rc swizzled_band(const struct src *s, uint64_t at, const struct ps3_texture *t,
			     const struct tex_layout *l, uint32_t w, uint32_t h, uint32_t y0,
			     uint32_t band, uint8_t *texels)
{
	unsigned lw = (unsigned)pow2_log(w), lh = (unsigned)pow2_log(h);
	uint32_t tiles = w / band, run = band * band, bpp = l->bpp;
	uint32_t most = RUNS_BYTES / (run * bpp) ? RUNS_BYTES / (run * bpp) : 1;
	uint16_t spot[32 * 32]; /* run position -> y * band + x inside the tile (band <= 32) */
	uint8_t *tmp = malloc((size_t)most * run * bpp);
	enum rc r = RC_OK;

	(void)t;
	if (!tmp)
		return RC_NOMEM;
	/* Every tile of the band has the same order inside: its Morton index, the same whatever
	 * the level's shape once x and y are below the tile's side. */
	for (uint32_t y = 0; y < band; y++)
		for (uint32_t x = 0; x < band; x++)
			spot[tex_ps3_swizzle_index(x, y, lw < lh ? lw : lh, lw < lh ? lw : lh)] =
			    (uint16_t)(y * band + x);
	for (uint32_t tx = 0, k; tx < tiles && r == RC_OK; tx += k) {
		uint64_t idx = tex_ps3_swizzle_index(tx * band, y0, lw, lh);

		/* tiles whose runs follow each other in the file: one read */
		for (k = 1;
		     tx + k < tiles && k < most &&
		     tex_ps3_swizzle_index((tx + k) * band, y0, lw, lh) == idx + (uint64_t)k * run;
		     k++)
			;
		r = src_read(s, at + idx * bpp, tmp, (size_t)k * run * bpp);
		for (uint32_t j = 0; j < k && r == RC_OK; j++) {
			uint8_t *dst = texels + (size_t)(tx + j) * band * bpp;
			const uint8_t *src = tmp + (size_t)j * run * bpp;

			for (uint32_t i = 0; i < run; i++)
				memcpy(dst + ((size_t)(spot[i] / band) * w + spot[i] % band) * bpp,
				       src + (size_t)i * bpp, bpp);
		}
	}
	free(tmp);
	return r;
}

enum rc ps3_read_rows(const struct src *s, uint64_t base, const struct ps3_texture *t,
		      const struct tex_layout *l, enum tex_kind kind, uint32_t face, uint32_t level,
		      uint32_t row0, uint32_t n, uint8_t *out)
{
	uint32_t w = tex_dim(t->width, level), h = tex_dim(t->height, level);
	uint64_t at = base + face * l->face_stride + level_src_off(t, l, level);
	uint32_t ob = tex_kind_bpp(kind);
	uint8_t *src;
	enum rc r;

	if (l->compressed) /* block-linear, already in DDS block order */
		return src_read(s, at + (uint64_t)row0 * ((w + 3) / 4) * l->bpp, out,
				(size_t)n * ((w + 3) / 4) * l->bpp);
	if (l->swizzled) {
		uint32_t side = w < h ? w : h, band = side < 32 ? side : 32, b0, b1;

		/* Bands no taller than the rows asked for need (a PNG block asks for a few rows
		 * of a wide level), but at least 8: each tile column of a band is one read. */
		while (band > 8 && band / 2 >= n)
			band /= 2;
		b0 = row0 / band * band;
		b1 = (row0 + n + band - 1) / band * band;

		src = malloc((size_t)(b1 - b0) * w * l->bpp);
		if (!src)
			return RC_NOMEM;
		r = RC_OK;
		for (uint32_t y = b0; y < b1 && r == RC_OK; y += band)
			r = swizzled_band(s, at, t, l, w, h, y, band,
					  src + (size_t)(y - b0) * w * l->bpp);
		for (uint32_t y = 0; y < n && r == RC_OK; y++)
			for (uint32_t x = 0; x < w; x++)
				conv_texel(t->base_format,
					   src + ((size_t)(row0 - b0 + y) * w + x) * l->bpp,
					   out + ((size_t)y * w + x) * ob);
		free(src);
		return r;
	}
	{
		size_t stride = l->row_pitch ? l->row_pitch : (size_t)w * l->bpp;
		size_t span = (size_t)(n - 1) * stride + (size_t)w * l->bpp;

		src = malloc(span);
		if (!src)
			return RC_NOMEM;
		r = src_read(s, at + (uint64_t)row0 * stride, src, span);
		for (uint32_t y = 0; y < n && r == RC_OK; y++)
			for (uint32_t x = 0; x < w; x++)
				conv_texel(t->base_format,
					   src + (size_t)y * stride + (size_t)x * l->bpp,
					   out + ((size_t)y * w + x) * ob);
		free(src);
		return r;
	}
}

/* ---- writing (the inverse of the reading above) ---- */

static void st_u16(uint8_t *p, uint16_t v, bool be)
{
	p[be ? 0 : 1] = (uint8_t)(v >> 8);
	p[be ? 1 : 0] = (uint8_t)v;
}

static void st_u32(uint8_t *p, uint32_t v, bool be)
{
	st_u16(p + (be ? 0 : 2), (uint16_t)(v >> 16), be);
	st_u16(p + (be ? 2 : 0), (uint16_t)v, be);
}

void ps3_texture_encode(const struct ps3_texture *t, bool big_endian, uint8_t out[PS3_TEXTURE_SIZE])
{
	uint8_t *p = out;

	*p++ = t->format;
	*p++ = t->mipmap;
	*p++ = t->dimension;
	*p++ = t->cubemap;
	st_u32(p, t->remap, big_endian), p += 4;
	st_u16(p, t->width, big_endian), p += 2;
	st_u16(p, t->height, big_endian), p += 2;
	st_u16(p, t->depth, big_endian), p += 2;
	*p++ = t->location;
	*p++ = t->padding;
	st_u32(p, t->pitch, big_endian), p += 4;
	st_u32(p, t->offset, big_endian), p += 4;
	st_u32(p, t->m_buffer, big_endian), p += 4;
	st_u32(p, t->store_type, big_endian), p += 4;
	st_u32(p, t->store_flags, big_endian), p += 4;
	st_u16(p, t->unknown_24, big_endian), p += 2;
	*p++ = t->unknown_26;
	*p = t->format_copy;
}

uint32_t tex_ps3_texel_bytes(uint8_t base_format)
{
	const struct tex_ps3_fmt *f = fmt_find(base_format);

	return f ? f->bpp : 0;
}

uint8_t tex_ps3_base_for_kind(enum tex_kind k)
{
	switch (k) {
	case TEXK_DXT1:
		return GCM_TEX_DXT1;
	case TEXK_DXT3:
		return GCM_TEX_DXT3;
	case TEXK_DXT5:
		return GCM_TEX_DXT5;
	case TEXK_BGRA8:
		return GCM_TEX_A8R8G8B8;
	case TEXK_BGRX8:
		return GCM_TEX_D8R8G8B8;
	case TEXK_R5G6B5:
		return GCM_TEX_R5G6B5;
	case TEXK_A1R5G5B5:
		return GCM_TEX_A1R5G5B5;
	case TEXK_A4R4G4B4:
		return GCM_TEX_A4R4G4B4;
	case TEXK_L8:
		return GCM_TEX_B8;
	default:
		return 0; /* ATI2: RSX has no two-channel block format */
	}
}

/* 8-bit channel to n bits, rounded: exact inverse of the widenings tex_x5/tex_x6 and x17. */
static uint32_t q_bits(uint32_t v, uint32_t max)
{
	return (v * max + 127) / 255;
}

/* One canonical texel to the big-endian GCM texel: the inverse of conv_texel. Channels a
 * format cannot hold are dropped (G8B8 has no red, D formats no alpha). */
static void store_texel(uint8_t base, const uint8_t *d, uint8_t *s)
{
	uint16_t v;

	switch (base) {
	case GCM_TEX_B8:
		s[0] = d[0];
		return;
	case GCM_TEX_A8R8G8B8:
		s[0] = d[3], s[1] = d[2], s[2] = d[1], s[3] = d[0];
		return;
	case GCM_TEX_D8R8G8B8:
		s[0] = 0, s[1] = d[2], s[2] = d[1], s[3] = d[0];
		return;
	case GCM_TEX_G8B8:
		s[0] = d[1], s[1] = d[0];
		return;
	case GCM_TEX_R6G5B5:
		v = (uint16_t)(q_bits(d[2], 63) << 10 | q_bits(d[1], 31) << 5 | q_bits(d[0], 31));
		break;
	case GCM_TEX_R5G5B5A1:
		v = ld_u16le(d);
		v = (uint16_t)((v & 0x7FFF) << 1 | v >> 15);
		break;
	case GCM_TEX_D1R5G5B5:
		v = ld_u16le(d) & 0x7FFF; /* the D bit is not stored: it reads as opaque */
		break;
	default: /* A1R5G5B5, A4R4G4B4, R5G6B5 */
		v = ld_u16le(d);
		break;
	}
	s[0] = (uint8_t)(v >> 8);
	s[1] = (uint8_t)v;
}

enum rc ps3_write_rows(const struct ps3_texture *t, const struct tex_layout *l, enum tex_kind kind,
		       uint32_t face, uint32_t level, uint32_t row0, uint32_t n,
		       const uint8_t *canon, uint8_t *res, size_t res_len)
{
	uint32_t w = tex_dim(t->width, level), h = tex_dim(t->height, level);
	uint64_t at = face * l->face_stride + level_src_off(t, l, level);
	uint32_t ob = tex_kind_bpp(kind), rows = l->compressed ? (h + 3) / 4 : h;
	unsigned lw = 0, lh = 0;

	if (face >= l->faces || level >= l->mips || row0 > rows || n > rows - row0 ||
	    ps3_level_src_end(t, l, face, level) > res_len)
		return RC_INVAL;
	if (l->compressed) { /* block-linear, in DDS block order */
		uint64_t rb = (uint64_t)((w + 3) / 4) * l->bpp;

		memcpy(res + at + row0 * rb, canon, (size_t)(n * rb));
		return RC_OK;
	}
	if (l->swizzled) {
		lw = (unsigned)pow2_log(w);
		lh = (unsigned)pow2_log(h);
	}
	for (uint32_t y = row0; y < row0 + n; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint64_t o = l->swizzled
					 ? (uint64_t)tex_ps3_swizzle_index(x, y, lw, lh) * l->bpp
					 : (uint64_t)y * (l->row_pitch ? l->row_pitch
								       : (uint64_t)w * l->bpp) +
					       (uint64_t)x * l->bpp;

			store_texel(t->base_format, canon, res + at + o);
			canon += ob;
		}
	return RC_OK;
}

/* ---- the platform row (tex_platform.h): the PS3 part of a tex_desc ---- */

struct ps3_part {
	struct ps3_texture t;
	struct tex_layout l;
};

_Static_assert(sizeof(struct ps3_part) <= TEX_PLAT_BYTES, "TEX_PLAT_BYTES too small for PS3");
_Static_assert(sizeof(((struct texmod_plan *)0)->obj) >= PS3_TEXTURE_SIZE,
	       "TEXMOD_OBJ_MAX too small for PS3");

static struct ps3_part *part(struct tex_desc *d)
{
	return (struct ps3_part *)(void *)d->plat.bytes;
}

static const struct ps3_part *cpart(const struct tex_desc *d)
{
	return (const struct ps3_part *)(const void *)d->plat.bytes;
}

const struct ps3_texture *tex_ps3_header(const struct tex_desc *d)
{
	return d->tp == &tex_platform_ps3 ? &cpart(d)->t : NULL;
}

static const char *type_label(const struct arena *a, uint32_t i, char tmp[16])
{
	return i < a->n_dict ? rw_type_label(arena_row(a, i)->type_id, tmp) : "?";
}

static enum rc read_header(const struct src *s, const struct arena *a, uint32_t idx,
			   struct tex_desc *d, struct diag *diag)
{
	struct ps3_part *q = part(d);
	char why[256];
	enum rc r = tex_ps3_read_object(s, a, idx, &q->t);

	if (r == RC_TRUNCATED && arena_row(a, idx)->size < PS3_TEXTURE_SIZE) {
		diag_add(diag, "object %u (Texture): %zu bytes, shorter than %u", idx,
			 (size_t)arena_row(a, idx)->size, PS3_TEXTURE_SIZE);
		return RC_CORRUPT;
	}
	if (r != RC_OK) {
		diag_add(diag, "object %u (Texture): unreadable (%s)", idx, rc_str(r));
		return r;
	}
	r = tex_layout_get(&q->t, &q->l, why, sizeof why);
	if (r != RC_OK) {
		diag_add(diag, "object %u (Texture): %s", idx, why);
		return r;
	}
	if (why[0])
		diag_add(diag, "object %u (Texture): %s", idx, why);
	tex_ps3_kind(q->t.base_format, &d->kind, &d->alpha);
	d->format_name = tex_ps3_format_name(q->t.base_format);
	d->width = q->t.width;
	d->height = q->t.height;
	d->mips = q->l.mips;
	d->faces = q->l.faces;
	return RC_OK;
}

/* The base resource m_buffer names, by the one reference rule (row 0 is a valid target). */
static enum rc texel_source(const struct arena *a, uint32_t idx, uint32_t m_buffer,
			    const struct arena_dict_entry **br, uint32_t *bres, uint32_t *boff,
			    struct diag *diag)
{
	uint32_t bi = 0;
	char tmp[16];
	enum rc r = arena_ref_to(a, m_buffer, ARENA_WANT_BASERES, &bi, boff);

	if (r == RC_CORRUPT) {
		diag_add(diag, "object %u (Texture): m_buffer %u is a %s, not a BaseResource", idx,
			 bi, type_label(a, bi, tmp));
		return RC_CORRUPT;
	}
	if (r != RC_OK) {
		diag_add(diag, "object %u (Texture): m_buffer 0x%08X %s", idx, m_buffer,
			 r == RC_NOENT ? "is null" : "does not resolve");
		return RC_CORRUPT;
	}
	*br = arena_row(a, bi);
	*bres = bi;
	if (!(*br)->readable) {
		diag_add(diag, "object %u (Texture): base resource %u lies outside the file", idx,
			 bi);
		return RC_TRUNCATED; /* the texels are missing, not wrong */
	}
	return RC_OK;
}

/* How much of a layout `avail` bytes hold: whole faces, else whole levels of face 0. */
static void served_part(struct tex_desc *d, uint64_t avail)
{
	const struct ps3_part *q = cpart(d);

	d->have_faces = 0;
	d->have_mips = d->mips;
	for (uint32_t f = 0; f < d->faces; f++)
		if (ps3_level_src_end(&q->t, &q->l, f, d->mips - 1) <= avail)
			d->have_faces = f + 1;
	if (d->have_faces)
		return;
	d->have_faces = 1;
	d->have_mips = 0;
	for (uint32_t m = 0; m < d->mips; m++)
		if (ps3_level_src_end(&q->t, &q->l, 0, m) <= avail)
			d->have_mips = m + 1;
}

static void describe_note(const struct tex_desc *d, uint32_t bi, uint64_t held, uint64_t need,
			  struct diag *diag)
{
	diag_add(diag,
		 "object %u (Texture): base resource %u holds %llu bytes, %s %ux%u %u mips%s needs "
		 "%llu; serving %u face%s with %u mip level%s",
		 d->index, bi, (unsigned long long)held, d->format_name, d->width, d->height,
		 d->mips, d->faces == 6 ? " cube" : "", (unsigned long long)need, d->have_faces,
		 d->have_faces == 1 ? "" : "s", d->have_mips, d->have_mips == 1 ? "" : "s");
}

/* PS3 textures name their base resource (m_buffer) and an offset in it. */
static enum rc ps3_describe(const struct src *s, const struct arena *a, uint32_t idx,
			    struct tex_desc *d, struct diag *diag)
{
	const struct ps3_part *q = cpart(d);
	const struct arena_dict_entry *br;
	uint32_t boff, bres = 0;
	uint64_t at, need;
	enum rc r = read_header(s, a, idx, d, diag);

	if (r == RC_OK)
		r = texel_source(a, idx, q->t.m_buffer, &br, &bres, &boff, diag);
	if (r != RC_OK)
		return r;
	if (!add_ok((uint64_t)boff, q->t.offset, &at) || at > br->size) {
		diag_add(diag,
			 "object %u (Texture): texel offset %llu past base resource %u (%u bytes)",
			 idx, (unsigned long long)at, bres, br->size);
		return RC_CORRUPT;
	}
	need = q->l.total;
	d->base = br->start + at;
	served_part(d, br->size - at);
	if (d->have_mips == 0) {
		describe_note(d, bres, br->size - at, need, diag);
		return RC_CORRUPT;
	}
	if (br->size - at < need) {
		describe_note(d, bres, br->size - at, need, diag);
	} else if (br->size - at > need && at == 0) {
		/* A texture that owns its base resource must fill it exactly: extra bytes mean
		 * header and data disagree, so the pictures would be guesses. Only a texture at an
		 * offset inside a shared resource may leave bytes after it. */
		diag_add(diag,
			 "object %u (Texture): base resource %u holds %u bytes, %llu more than the "
			 "%llu %s %ux%u %u mips%s needs",
			 idx, bres, br->size, (unsigned long long)(br->size - need),
			 (unsigned long long)need, d->format_name, d->width, d->height, d->mips,
			 d->faces == 6 ? " cube" : "");
		return RC_CORRUPT;
	}
	return RC_OK;
}

static enum rc ps3_rows(const struct src *s, const struct tex_desc *d, uint32_t face,
			uint32_t level, uint32_t row0, uint32_t n, uint8_t *out)
{
	const struct ps3_part *q = cpart(d);

	return ps3_read_rows(s, d->base, &q->t, &q->l, d->kind, face, level, row0, n, out);
}

/* ---- writing (texmod.c) ---- */

static bool ps3_stores(enum tex_kind k)
{
	return tex_ps3_base_for_kind(k) != 0;
}

static enum rc ps3_in_place(const struct arena *a, struct texmod_plan *p, char *why, size_t whylen)
{
	uint32_t off = 0;

	if (arena_ref_to(a, cpart(&p->src)->t.m_buffer, ARENA_WANT_BASERES, &p->res, &off) !=
	    RC_OK) {
		diag_note(why, whylen, "the texture's base resource does not resolve");
		return RC_CORRUPT;
	}
	p->dst = p->src;
	return RC_OK;
}

/* The base resource the texture owns alone: its m_buffer at offset 0, no other Texture's. */
static enum rc owned_resource(const struct src *as, const struct arena *a, uint32_t tex,
			      const struct ps3_texture *t, uint32_t *res, char *why, size_t whylen)
{
	uint32_t bi = 0, off = 0;

	if (arena_ref_to(a, t->m_buffer, ARENA_WANT_BASERES, &bi, &off) != RC_OK || off ||
	    t->offset) {
		diag_note(why, whylen,
			  "the texture does not own a base resource (m_buffer 0x%X, offset %u)",
			  t->m_buffer, t->offset);
		return RC_UNSUPPORTED;
	}
	for (uint32_t i = 0; i < a->n_dict; i++) {
		struct ps3_texture o;
		uint32_t oi, oo;

		if (i == tex || tex_ps3_read_object(as, a, i, &o) != RC_OK)
			continue;
		if (arena_ref_to(a, o.m_buffer, ARENA_WANT_BASERES, &oi, &oo) == RC_OK &&
		    oi == bi) {
			diag_note(why, whylen,
				  "base resource %u holds texture %u too: its size cannot change",
				  bi, i);
			return RC_UNSUPPORTED;
		}
	}
	*res = bi;
	return RC_OK;
}

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* The object of shape p->to, from the one stored (q->t): its flags stay. */
static enum rc new_object(struct texmod_plan *p, struct ps3_part *q, char *why, size_t whylen)
{
	struct ps3_texture *t = &q->t;
	const struct texmod_shape *s = &p->to;
	bool keep = p->have_from && s->kind == p->from.kind, comp = tex_kind_compressed(s->kind);
	uint8_t base = keep ? t->base_format : tex_ps3_base_for_kind(s->kind);
	bool ln = comp ? t->linear : t->linear || !pow2(s->width) || !pow2(s->height);
	char tmp[160] = "";

	t->format = (uint8_t)(base | (ln ? GCM_TEX_LN : 0) | (t->unnormalized ? GCM_TEX_UN : 0));
	t->mipmap = (uint8_t)s->mips;
	t->dimension = 2;
	t->cubemap = s->faces == 6;
	t->width = (uint16_t)s->width;
	t->height = (uint16_t)s->height;
	t->depth = 1;
	/* Packed rows: what the real DXT textures hold, and what RSX needs for linear ones. */
	t->pitch = comp ? ((s->width + 3) / 4) * tex_kind_bpp(s->kind)
			: s->width * tex_ps3_texel_bytes(base);
	t->offset = 0;
	t->store_type = s->faces == 6 ? TEX_STORE_CUBE : TEX_STORE_2D;
	t->format_copy = t->format;
	ps3_texture_encode(t, true, p->obj);
	p->obj_len = PS3_TEXTURE_SIZE;
	if (ps3_texture_decode(p->obj, p->obj_len, true, t) != RC_OK ||
	    tex_layout_get(t, &q->l, tmp, sizeof tmp) != RC_OK) {
		diag_note(why, whylen, "the new texture is not valid: %s", tmp);
		return RC_UNSUPPORTED;
	}
	p->texel_bytes = q->l.total;
	return RC_OK;
}

static enum rc ps3_relayout(const struct src *as, const struct arena *a, struct texmod_plan *p,
			    char *why, size_t whylen)
{
	struct ps3_part *q = part(&p->dst);
	enum rc r;

	p->dst.tp = &tex_platform_ps3;
	p->dst.kind = p->to.kind;
	if (tex_ps3_read_object(as, a, p->tex, &q->t) != RC_OK) {
		diag_note(why, whylen, "the Texture object cannot be read");
		return RC_CORRUPT;
	}
	r = owned_resource(as, a, p->tex, &q->t, &p->res, why, whylen);
	return r == RC_OK ? new_object(p, q, why, whylen) : r;
}

static enum rc ps3_put_rows(const struct tex_desc *d, uint32_t face, uint32_t level, uint32_t row0,
			    uint32_t n, const uint8_t *canon, uint8_t *res, size_t res_len)
{
	const struct ps3_part *q = cpart(d);

	return ps3_write_rows(&q->t, &q->l, d->kind, face, level, row0, n, canon, res, res_len);
}

const struct tex_platform tex_platform_ps3 = {
    .describe = ps3_describe,
    .read_rows = ps3_rows,
    .stores = ps3_stores,
    .in_place = ps3_in_place,
    .relayout = ps3_relayout,
    .write_rows = ps3_put_rows,
};
