/*
 * Xbox 360 textures: layout, untiling and tiling (tex_x360.h states the rules; docs/xbox360.md,
 * "Tiling" and "Mip levels in memory", describes them), and the platform's texture row
 * (tex_platform.h). The fetch constant's fields and the object are tex_x360_fetch.c's.
 *
 * Addressing follows Xenia (xenia-project/xenia): the tiled 2D address is the one of
 * texture_address.h Tiled2D (equal to the XDK's XGAddress2DTiledOffset), subresource sizes
 * and alignments follow GetGuestTextureLayout in texture_util.cc, the mip tail follows
 * GetPackedMipLevel / GetPackedMipOffset there. The code is our own.
 *
 * Memory: a read touches one 32-unit-row band of macro tiles at a time. A band's macro tiles
 * m0..m1 occupy the byte range [align_down(m0 * T, 4 KiB), align_up((m1 + 1) * T, 4 KiB))
 * of the storage (T = 32 x 32 units = 1 KiB << log2(unit bytes)): the address bits above
 * bit 12 are the macro tile index scaled by T, the pipe/bank bits stay inside a 4 KiB page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/tex_platform.h"
#include "psgfs/formats/tex_x360.h"
#include "psgfs/formats/texmod.h"

#define PAGE	      4096u
#define BAND	      32u  /* unit rows per macro tile */
#define LINEAR_ROW    256u /* mip row alignment of linear textures */
#define FETCH_TEXTURE 2u

/* Xenos TextureFormat names, xenos.h order. */
static const char *const fmt_names[64] = {
    "1_REVERSE",
    "1",
    "8",
    "1_5_5_5",
    "5_6_5",
    "6_5_5",
    "8_8_8_8",
    "2_10_10_10",
    "8_A",
    "8_B",
    "8_8",
    "Cr_Y1_Cb_Y0_REP",
    "Y1_Cr_Y0_Cb_REP",
    "16_16_EDRAM",
    "8_8_8_8_A",
    "4_4_4_4",
    "10_11_11",
    "11_11_10",
    "DXT1",
    "DXT2_3",
    "DXT4_5",
    "16_16_16_16_EDRAM",
    "24_8",
    "24_8_FLOAT",
    "16",
    "16_16",
    "16_16_16_16",
    "16_EXPAND",
    "16_16_EXPAND",
    "16_16_16_16_EXPAND",
    "16_FLOAT",
    "16_16_FLOAT",
    "16_16_16_16_FLOAT",
    "32",
    "32_32",
    "32_32_32_32",
    "32_FLOAT",
    "32_32_FLOAT",
    "32_32_32_32_FLOAT",
    "32_AS_8",
    "32_AS_8_8",
    "16_MPEG",
    "16_16_MPEG",
    "8_INTERLACED",
    "32_AS_8_INTERLACED",
    "32_AS_8_8_INTERLACED",
    "16_INTERLACED",
    "16_MPEG_INTERLACED",
    "16_16_MPEG_INTERLACED",
    "DXN",
    "8_8_8_8_AS_16_16_16_16",
    "DXT1_AS_16_16_16_16",
    "DXT2_3_AS_16_16_16_16",
    "DXT4_5_AS_16_16_16_16",
    "2_10_10_10_AS_16_16_16_16",
    "10_11_11_AS_16_16_16_16",
    "11_11_10_AS_16_16_16_16",
    "32_32_32_FLOAT",
    "DXT3A",
    "DXT5A",
    "CTX1",
    "DXT3A_AS_1_1_1_1",
    "8_8_8_8_GAMMA_EDRAM",
    "2_10_10_10_FLOAT_EDRAM",
};

struct x360_fmt {
	uint8_t fmt;
	uint8_t unit_bytes, block;
	enum tex_x360_canon canon;
};

static const struct x360_fmt x360_fmts[] = {
    {X360TEX_FMT_8, 1, 1, X360TEX_C_L8},	  {X360TEX_FMT_5_6_5, 2, 1, X360TEX_C_R5G6B5},
    {X360TEX_FMT_8_8_8_8, 4, 1, X360TEX_C_BGRA8}, {X360TEX_FMT_DXT1, 8, 4, X360TEX_C_DXT1},
    {X360TEX_FMT_DXT2_3, 16, 4, X360TEX_C_DXT3},  {X360TEX_FMT_DXT4_5, 16, 4, X360TEX_C_DXT5},
    {X360TEX_FMT_DXN, 16, 4, X360TEX_C_DXN},
};

static const struct x360_fmt *fmt_find(uint8_t fmt)
{
	for (size_t i = 0; i < sizeof x360_fmts / sizeof x360_fmts[0]; i++)
		if (x360_fmts[i].fmt == fmt)
			return &x360_fmts[i];
	return NULL;
}

const char *tex_x360_format_name(uint8_t fmt)
{
	return fmt < 64 ? fmt_names[fmt] : NULL;
}

bool tex_x360_canon_kind(enum tex_x360_canon c, enum tex_kind *k)
{
	static const struct {
		enum tex_x360_canon c;
		enum tex_kind k;
	} map[] = {
	    {X360TEX_C_DXT1, TEXK_DXT1},   {X360TEX_C_DXT3, TEXK_DXT3},
	    {X360TEX_C_DXT5, TEXK_DXT5},   {X360TEX_C_BGRA8, TEXK_BGRA8},
	    {X360TEX_C_BGRX8, TEXK_BGRX8}, {X360TEX_C_R5G6B5, TEXK_R5G6B5},
	    {X360TEX_C_L8, TEXK_L8},	   {X360TEX_C_DXN, TEXK_ATI2},
	};

	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (map[i].c == c) {
			*k = map[i].k;
			return true;
		}
	}
	return false;
}

/* --- addressing --- */

static uint32_t ceil_log2(uint32_t v)
{
	uint32_t l = 0;

	while (l < 31 && (1u << l) < v)
		l++;
	return l;
}

static uint32_t floor_log2(uint32_t v)
{
	uint32_t l = 0;

	while (v > 1) {
		v >>= 1;
		l++;
	}
	return l;
}

static uint32_t div_up(uint32_t v, uint32_t d)
{
	return (v + d - 1) / d;
}

static uint32_t align32(uint32_t v)
{
	return (v + 31) & ~31u;
}

static uint32_t lvl(uint32_t v, uint32_t level)
{
	v >>= level;
	return v ? v : 1;
}

uint32_t tex_x360_tiled_offset(uint32_t x, uint32_t y, uint32_t pitch_units, uint32_t bpb_log2)
{
	/* Macro tile index, then the unit inside its 8x16 micro tile (y's lowest bit apart). */
	uint64_t macro = ((uint64_t)(y >> 5) * (pitch_units >> 5) + (x >> 5)) << 6;
	uint64_t oi = (macro | ((y >> 1) & 7) << 3 | (x & 7)) << bpb_log2;
	uint32_t bank = (y >> 4) & 1;
	uint32_t pipe = ((x >> 3) & 3) ^ (((y >> 3) & 1) << 1);

	return (uint32_t)((oi >> 8) << 12 | ((oi >> 5) & 7) << 8 | ((oi >> 4) & 1) << 5 |
			  (oi & 15)) |
	       bank << 11 | pipe << 6 | (y & 1) << 4;
}

uint32_t tex_x360_packed_level(uint32_t w, uint32_t h)
{
	uint32_t l = ceil_log2(w < h ? w : h);

	return l > 4 ? l - 4 : 0;
}

bool tex_x360_packed_offset(uint32_t w, uint32_t h, uint32_t level, uint32_t *x, uint32_t *y)
{
	uint32_t lw = ceil_log2(w), lh = ceil_log2(h), ls = lw < lh ? lw : lh;
	uint32_t base, pm;

	*x = *y = 0;
	if (ls > 4 + level || level > 31)
		return false;
	base = ls > 4 ? ls - 4 : 0;
	pm = level - base;
	if (pm < 3) {
		/* The first three tail levels step along the shorter side's neighbour edge. */
		if (lw > lh)
			*y = 16u >> pm;
		else
			*x = 16u >> pm;
	} else if (pm - 2 < 32) {
		/* Smaller ones go along the longer side at a power-of-two fraction of it. */
		if (lw > lh)
			*x = (1u << (lw - base)) >> (pm - 2);
		else
			*y = (1u << (lh - base)) >> (pm - 2);
	}
	return true;
}

/* Byte-swap mask of an endian mode: byte a of memory holds byte a ^ mask of the value. */
static uint32_t endian_mask(uint8_t e)
{
	static const uint32_t m[4] = {0, 1, 3, 2};

	return m[e & 3];
}

/* --- layout --- */

/* Canonical form of an uncompressed format from its swizzle; RC_UNSUPPORTED if it has none. */
static enum rc layout_swizzle(const struct tex_x360_fetch *f, struct tex_x360_layout *l, char *why,
			      size_t whylen)
{
	const uint8_t *s = l->swz;

	for (unsigned i = 0; i < 4; i++) {
		l->swz[i] = (uint8_t)(f->swizzle >> (3 * i) & 7);
		if (l->swz[i] > X360TEX_SWZ_1) {
			diag_note(why, whylen, "swizzle 0x%03X has reserved selector %u",
				  f->swizzle, l->swz[i]);
			return RC_UNSUPPORTED;
		}
	}
	switch (l->format) {
	case X360TEX_FMT_8_8_8_8:
		l->canon = s[3] == X360TEX_SWZ_1 ? X360TEX_C_BGRX8 : X360TEX_C_BGRA8;
		return RC_OK;
	case X360TEX_FMT_5_6_5:
		/* R5G6B5 holds either order of the 5-bit ends; anything else is not R5G6B5. */
		if (s[1] == X360TEX_SWZ_Y && ((s[0] == X360TEX_SWZ_Z && s[2] == X360TEX_SWZ_X) ||
					      (s[0] == X360TEX_SWZ_X && s[2] == X360TEX_SWZ_Z)))
			return RC_OK;
		break;
	case X360TEX_FMT_8:
		/* Single-component data is replicated into every component before the swizzle. */
		if (s[0] <= X360TEX_SWZ_W && s[1] <= X360TEX_SWZ_W && s[2] <= X360TEX_SWZ_W)
			return RC_OK;
		break;
	default:
		return RC_OK;
	}
	diag_note(why, whylen, "%s swizzle 0x%03X (r%u g%u b%u a%u) has no canonical form",
		  tex_x360_format_name(l->format), f->swizzle, s[0], s[1], s[2], s[3]);
	return RC_UNSUPPORTED;
}

static enum rc layout_head(const struct tex_x360_fetch *f, struct tex_x360_layout *l, char *why,
			   size_t whylen)
{
	const struct x360_fmt *xf = fmt_find(f->format);

	if (!xf) {
		diag_note(why, whylen, "format %s (0x%02X) is not converted",
			  tex_x360_format_name(f->format), f->format);
		return RC_UNSUPPORTED;
	}
	if (f->dimension == X360TEX_DIM_1D || f->dimension == X360TEX_DIM_3D) {
		diag_note(why, whylen, "%s texture is not converted",
			  f->dimension == X360TEX_DIM_1D ? "1D" : "3D");
		return RC_UNSUPPORTED;
	}
	if (f->stacked) {
		diag_note(why, whylen, "stacked (array) texture of %u slices is not converted",
			  f->depth);
		return RC_UNSUPPORTED;
	}
	if (f->type != FETCH_TEXTURE)
		diag_note(why, whylen, "fetch constant type %u is not 2 (texture)", f->type);
	l->format = f->format;
	l->canon = xf->canon;
	l->unit_bytes = xf->unit_bytes;
	l->block = xf->block;
	l->width = f->width;
	l->height = f->height;
	l->faces = f->dimension == X360TEX_DIM_CUBE ? 6 : 1;
	l->tiled = f->tiled;
	l->endian = f->endian;
	l->levels = f->mip_max_level + 1u;
	if (l->levels > floor_log2(l->width > l->height ? l->width : l->height) + 1 ||
	    l->levels > X360TEX_MAX_LEVELS) {
		diag_note(why, whylen, "mip max level %u is past the %ux%u chain (%u levels)",
			  f->mip_max_level, l->width, l->height,
			  floor_log2(l->width > l->height ? l->width : l->height) + 1);
		return RC_CORRUPT;
	}
	if (f->mip_min_level > f->mip_max_level)
		diag_note(why, whylen, "mip min level %u is above the max level %u (ignored)",
			  f->mip_min_level, f->mip_max_level);
	if (xf->block == 1)
		return layout_swizzle(f, l, why, whylen);
	for (unsigned i = 0; i < 4; i++)
		l->swz[i] = (uint8_t)(f->swizzle >> (3 * i) & 7);
	return RC_OK;
}

/* Storage of (level-like) dims w x h texels, row pitch `pitch_units`; fills stride fields. */
static void storage_dims(const struct tex_x360_layout *l, uint32_t pitch_units, uint32_t h_texels,
			 bool base, struct tex_x360_level *v, uint64_t *stride)
{
	v->pitch_units = align32(pitch_units);
	v->height_units = align32(div_up(h_texels, l->block));
	v->row_bytes = v->pitch_units * l->unit_bytes;
	if (!l->tiled && !base)
		v->row_bytes = (uint32_t)align_up(v->row_bytes, LINEAR_ROW);
	*stride = align_up((uint64_t)v->row_bytes * v->height_units, PAGE);
}

/* End (exclusive) of the bytes a read of the whole level touches, in face 0's storage. */
static uint64_t level_end(const struct tex_x360_layout *l, const struct tex_x360_level *v)
{
	uint32_t y1 = v->y_off + v->units_h - 1, x1 = v->x_off + v->units_w - 1;

	if (l->tiled) {
		uint64_t mt = (uint64_t)BAND * BAND * l->unit_bytes;
		uint64_t m = (uint64_t)(y1 / BAND) * (v->pitch_units / BAND) + x1 / BAND;

		return v->storage + align_up((m + 1) * mt, PAGE);
	}
	return v->storage +
	       align_up((uint64_t)y1 * v->row_bytes + (uint64_t)(x1 + 1) * l->unit_bytes, 4);
}

/* Place every level; RC_CORRUPT when a level does not fit its storage. */
static enum rc layout_levels(const struct tex_x360_fetch *f, struct tex_x360_layout *l, char *why,
			     size_t whylen)
{
	struct tex_x360_level base = {0}, tail = {0};
	uint64_t stride, pos, face_off = 0;
	uint32_t pw = 1u << ceil_log2(l->width), ph = 1u << ceil_log2(l->height);

	l->packed_level = f->packed_mips ? tex_x360_packed_level(l->width, l->height) : UINT32_MAX;
	l->base_packed = l->packed_level == 0;
	/* A packed base is stored in power-of-two rounded dimensions (the tail's own shape). */
	storage_dims(l, div_up((uint32_t)f->pitch << 5, l->block), l->base_packed ? ph : l->height,
		     true, &base, &stride);
	base.face_stride = stride;
	l->mip_offset = pos = stride * l->faces;
	for (uint32_t i = 0; i < l->levels && i < X360TEX_MAX_LEVELS; i++) {
		struct tex_x360_level *v = &l->lv[i];
		uint64_t s;

		if (i == 0 || l->base_packed) {
			*v = base;
		} else if (i <= l->packed_level) {
			storage_dims(l, div_up(lvl(pw, i), l->block), lvl(ph, i), false, v, &s);
			v->storage = pos;
			v->face_stride = s;
			pos += s * l->faces;
			if (i == l->packed_level)
				tail = *v;
		} else {
			*v = tail;
		}
		v->width = lvl(l->width, i);
		v->height = lvl(l->height, i);
		v->units_w = div_up(v->width, l->block);
		v->units_h = div_up(v->height, l->block);
		v->packed = i >= l->packed_level;
		v->x_off = v->y_off = 0;
		if (v->packed) {
			tex_x360_packed_offset(l->width, l->height, i, &v->x_off, &v->y_off);
			v->x_off /= l->block;
			v->y_off /= l->block;
		}
		if (v->x_off + v->units_w > v->pitch_units ||
		    v->y_off + v->units_h > v->height_units) {
			diag_note(
			    why, whylen,
			    "level %u (%ux%u%s) does not fit its storage of %ux%u units (pitch "
			    "field %u)",
			    i, v->width, v->height, v->packed ? " in the mip tail" : "",
			    v->pitch_units, v->height_units, f->pitch);
			return RC_CORRUPT;
		}
		v->canon_bytes = (uint64_t)v->units_w * v->units_h * l->unit_bytes;
		v->canon_offset = face_off;
		face_off += v->canon_bytes;
		s = level_end(l, v) + (uint64_t)(l->faces - 1) * v->face_stride;
		l->need = s > l->need ? s : l->need;
	}
	l->full = l->base_packed || l->levels == 1 ? l->mip_offset : pos;
	l->face_bytes = face_off;
	l->canon_bytes = face_off * l->faces;
	return RC_OK;
}

enum rc tex_x360_layout_get(const struct tex_x360_fetch *f, struct tex_x360_layout *l, char *why,
			    size_t whylen)
{
	enum rc r;

	memset(l, 0, sizeof *l);
	if (why && whylen)
		why[0] = 0;
	r = layout_head(f, l, why, whylen);
	if (r != RC_OK)
		return r;
	return layout_levels(f, l, why, whylen);
}

static void short_object(size_t len, uint32_t index, struct diag *diag)
{
	diag_add(diag, "object %u (Texture): %zu bytes, shorter than %u", index, len,
		 X360TEX_OBJECT_SIZE);
}

/* The layout of a decoded object, checked against its base resource (tex_x360_prepare). */
static enum rc prepare_decoded(const struct tex_x360_object *o, uint64_t res_size, uint32_t index,
			       struct tex_x360_layout *l, struct diag *diag)
{
	char why[320];
	enum rc r = tex_x360_layout_get(&o->fetch, l, why, sizeof why);

	if (r == RC_OK && (o->common & 0xF) != X360TEX_COMMON_TEXTURE)
		diag_note(why, sizeof why, "D3D common word 0x%08X is not a texture (3)",
			  o->common);
	if (r == RC_OK && o->fetch.mip_address == 0 && l->levels > 1 && !l->base_packed)
		diag_note(why, sizeof why, "mip address 0 with %u levels (mips read at 0x%llX)",
			  l->levels, (unsigned long long)l->mip_offset);
	if (r == RC_OK && o->fetch.base_address == 0 && o->fetch.mip_address != 0 &&
	    (uint64_t)o->fetch.mip_address << 12 != l->mip_offset)
		diag_note(why, sizeof why,
			  "mip address 0x%llX is not the layout's 0x%llX (layout used)",
			  (unsigned long long)o->fetch.mip_address << 12,
			  (unsigned long long)l->mip_offset);
	if (why[0])
		diag_add(diag, "object %u (Texture): %s", index, why);
	if (r != RC_OK)
		return r;
	if (res_size < l->need) {
		diag_add(diag,
			 "object %u (Texture): base resource holds %llu bytes, %s %ux%u %u mips%s "
			 "needs %llu",
			 index, (unsigned long long)res_size, tex_x360_format_name(l->format),
			 l->width, l->height, l->levels, l->faces == 6 ? " cube" : "",
			 (unsigned long long)l->need);
		return RC_CORRUPT;
	}
	if (res_size > l->full)
		diag_add(diag,
			 "object %u (Texture): base resource holds %llu bytes, %llu more than the "
			 "padded layout (ignored)",
			 index, (unsigned long long)res_size,
			 (unsigned long long)(res_size - l->full));
	return RC_OK;
}

enum rc tex_x360_prepare(const uint8_t *obj, size_t len, uint64_t res_size, uint32_t index,
			 struct tex_x360_object *o, struct tex_x360_layout *l, struct diag *diag)
{
	memset(l, 0, sizeof *l);
	if (tex_x360_object_decode(obj, len, o) != RC_OK) {
		short_object(len, index, diag);
		return RC_CORRUPT;
	}
	return prepare_decoded(o, res_size, index, l, diag);
}

/* --- texel conversion --- */

static uint8_t swz_pick(const uint8_t c[4], uint8_t sel)
{
	return sel <= X360TEX_SWZ_W ? c[sel] : sel == X360TEX_SWZ_0 ? 0 : 0xFF;
}

/* One unit, already unswapped, to its canonical bytes. */
static void unit_to_canon(const struct tex_x360_layout *l, const uint8_t *s, uint8_t *d)
{
	uint16_t v;

	switch (l->format) {
	case X360TEX_FMT_8_8_8_8:
		d[0] = swz_pick(s, l->swz[2]);
		d[1] = swz_pick(s, l->swz[1]);
		d[2] = swz_pick(s, l->swz[0]);
		d[3] = l->canon == X360TEX_C_BGRX8 ? 0xFF : swz_pick(s, l->swz[3]);
		return;
	case X360TEX_FMT_5_6_5:
		v = ld_u16le(s);
		if (l->swz[0] == X360TEX_SWZ_X) /* red from the low bits: swap the 5-bit ends */
			v = (uint16_t)((v & 31) << 11 | (v & 0x07E0) | v >> 11);
		d[0] = (uint8_t)v;
		d[1] = (uint8_t)(v >> 8);
		return;
	default:
		memcpy(d, s, l->unit_bytes);
		return;
	}
}

/* Inverse of unit_to_canon (writers); components nobody selects are 0. */
static void canon_to_unit(const struct tex_x360_layout *l, const uint8_t *d, uint8_t *s)
{
	switch (l->format) {
	case X360TEX_FMT_8_8_8_8: {
		const uint8_t ch[4] = {d[2], d[1], d[0], d[3]}; /* r g b a */

		memset(s, 0, 4);
		for (unsigned i = 0; i < 4; i++)
			if (l->swz[i] <= X360TEX_SWZ_W)
				s[l->swz[i]] = ch[i];
		return;
	}
	case X360TEX_FMT_5_6_5:
		unit_to_canon(l, d, s); /* the swap is its own inverse */
		return;
	default:
		memcpy(s, d, l->unit_bytes);
		return;
	}
}

/*
 * Byte k of each 32-bit word becomes byte k ^ mask: 1 swaps the bytes of each 16-bit half, 2
 * the halves, 3 all four. Done a word at a time (a pattern the same whatever the host's byte
 * order): byte by byte it was half of reading a band.
 */
static void unswap(uint8_t *p, size_t n, uint32_t mask)
{
	uint32_t v;

	for (size_t i = 0; mask && i + 4 <= n; i += 4) {
		memcpy(&v, p + i, 4);
		if (mask == 1)
			v = (v & 0x00FF00FFu) << 8 | (v >> 8 & 0x00FF00FFu);
		else if (mask == 2)
			v = v << 16 | v >> 16;
		else
			v = __builtin_bswap32(v);
		memcpy(p + i, &v, 4);
	}
}

/* --- reading --- */

/* Byte offset of unit (x, y) inside its storage. */
static uint64_t unit_addr(const struct tex_x360_layout *l, const struct tex_x360_level *v,
			  uint32_t x, uint32_t y)
{
	if (l->tiled)
		return tex_x360_tiled_offset(x, y, v->pitch_units, floor_log2(l->unit_bytes));
	return (uint64_t)y * v->row_bytes + (uint64_t)x * l->unit_bytes;
}

/* Storage byte range holding storage rows [y0, y1) of the level's columns. */
static void band_range(const struct tex_x360_layout *l, const struct tex_x360_level *v, uint32_t y0,
		       uint32_t y1, uint64_t *lo, uint64_t *hi)
{
	uint32_t x0 = v->x_off, x1 = v->x_off + v->units_w - 1;

	if (l->tiled) {
		uint64_t mt = (uint64_t)BAND * BAND * l->unit_bytes, p = v->pitch_units / BAND;
		uint64_t m0 = (uint64_t)(y0 / BAND) * p + x0 / BAND;
		uint64_t m1 = (uint64_t)((y1 - 1) / BAND) * p + x1 / BAND;

		*lo = m0 * mt / PAGE * PAGE;
		*hi = align_up((m1 + 1) * mt, PAGE);
		return;
	}
	*lo = ((uint64_t)y0 * v->row_bytes + (uint64_t)x0 * l->unit_bytes) / 4 * 4;
	*hi = align_up((uint64_t)(y1 - 1) * v->row_bytes + (uint64_t)(x1 + 1) * l->unit_bytes, 4);
}

struct band_ctx {
	const struct tex_x360_layout *l;
	const struct tex_x360_level *v;
	uint64_t at; /* storage start of this face */
	tex_x360_read_fn read;
	void *rctx;
	uint8_t *buf;
	size_t cap;
};

/* Convert storage rows [y0, y1) (inside one band) into dst. */
static enum rc band_rows(struct band_ctx *c, uint32_t y0, uint32_t y1, uint8_t *dst)
{
	const struct tex_x360_layout *l = c->l;
	const struct tex_x360_level *v = c->v;
	uint64_t lo, hi;
	enum rc r;

	band_range(l, v, y0, y1, &lo, &hi);
	c->buf = xroom_n(c->buf, (size_t)(hi - lo), &c->cap, 1);
	if (!c->buf)
		return RC_NOMEM;
	r = c->read(c->rctx, c->at + lo, c->buf, (size_t)(hi - lo));
	if (r != RC_OK)
		return r;
	unswap(c->buf, (size_t)(hi - lo), endian_mask(l->endian));
	for (uint32_t y = y0; y < y1; y++) {
		for (uint32_t x = v->x_off; x < v->x_off + v->units_w; x++) {
			uint64_t a = unit_addr(l, v, x, y);

			if (a < lo || a + l->unit_bytes > hi)
				return RC_CORRUPT; /* cannot happen: band_range covers the band */
			unit_to_canon(l, c->buf + (a - lo), dst);
			dst += l->unit_bytes;
		}
	}
	return RC_OK;
}

enum rc tex_x360_read_rows(const struct tex_x360_layout *l, uint32_t face, uint32_t level,
			   uint32_t row0, uint32_t n, tex_x360_read_fn read, void *ctx,
			   uint8_t *dst)
{
	struct band_ctx c = {0};
	uint32_t y, end, band;
	enum rc r = RC_OK;

	if (!l || !read || face >= l->faces || level >= l->levels)
		return RC_INVAL;
	c.l = l;
	c.v = &l->lv[level];
	if (row0 > c.v->units_h || n > c.v->units_h - row0 || (n && !dst))
		return RC_INVAL;
	c.at = c.v->storage + (uint64_t)face * c.v->face_stride;
	c.read = read;
	c.rctx = ctx;
	y = c.v->y_off + row0;
	end = y + n;
	/* Linear rows much longer than the level (a big pitch) are read one at a time. */
	band = !l->tiled && c.v->row_bytes > 2 * c.v->units_w * l->unit_bytes ? 1 : BAND;
	while (y < end && r == RC_OK) {
		uint32_t stop = (y / band + 1) * band;

		stop = stop < end ? stop : end;
		r = band_rows(&c, y, stop, dst);
		dst += (size_t)(stop - y) * c.v->units_w * l->unit_bytes;
		y = stop;
	}
	free(c.buf);
	return r;
}

enum rc tex_x360_read_level(const struct tex_x360_layout *l, uint32_t face, uint32_t level,
			    tex_x360_read_fn read, void *ctx, uint8_t *dst)
{
	if (!l || level >= l->levels)
		return RC_INVAL;
	return tex_x360_read_rows(l, face, level, 0, l->lv[level].units_h, read, ctx, dst);
}

enum rc tex_x360_write_rows(const struct tex_x360_layout *l, uint32_t face, uint32_t level,
			    uint32_t row0, uint32_t n, const uint8_t *canon, uint8_t *res,
			    size_t res_len)
{
	const struct tex_x360_level *v;
	uint32_t mask;
	uint64_t at;
	uint8_t unit[16];

	if (!l || !canon || !res || face >= l->faces || level >= l->levels)
		return RC_INVAL;
	v = &l->lv[level];
	if (row0 > v->units_h || n > v->units_h - row0)
		return RC_INVAL;
	at = v->storage + (uint64_t)face * v->face_stride;
	mask = endian_mask(l->endian);
	for (uint32_t y = row0; y < row0 + n; y++) {
		for (uint32_t x = 0; x < v->units_w; x++) {
			uint64_t a = at + unit_addr(l, v, v->x_off + x, v->y_off + y);

			canon_to_unit(l, canon, unit);
			/* Checked per byte: the swap may move a byte of a unit narrower than its
			 * word (a hostile endian field) past the unit. */
			for (uint32_t k = 0; k < l->unit_bytes; k++) {
				if (((a + k) ^ mask) >= res_len)
					return RC_INVAL;
				res[(a + k) ^ mask] = unit[k];
			}
			canon += l->unit_bytes;
		}
	}
	return RC_OK;
}

enum rc tex_x360_write_level(const struct tex_x360_layout *l, uint32_t face, uint32_t level,
			     const uint8_t *canon, uint8_t *res, size_t res_len)
{
	if (!l || level >= l->levels)
		return RC_INVAL;
	return tex_x360_write_rows(l, face, level, 0, l->lv[level].units_h, canon, res, res_len);
}

/* --- shapes for writers --- */

void tex_x360_format_words(uint8_t fmt, uint8_t *endian, uint16_t *swizzle)
{
	switch (fmt) {
	case X360TEX_FMT_8_8_8_8: /* A8R8G8B8: ARGB bytes, 8in32, r = Z g = Y b = X a = W */
		*endian = X360TEX_END_8IN32;
		*swizzle =
		    X360TEX_SWIZZLE(X360TEX_SWZ_Z, X360TEX_SWZ_Y, X360TEX_SWZ_X, X360TEX_SWZ_W);
		return;
	case X360TEX_FMT_5_6_5: /* R5G6B5: red in the high bits = component Z */
		*endian = X360TEX_END_8IN16;
		*swizzle =
		    X360TEX_SWIZZLE(X360TEX_SWZ_Z, X360TEX_SWZ_Y, X360TEX_SWZ_X, X360TEX_SWZ_1);
		return;
	case X360TEX_FMT_8: /* L8 */
		*endian = X360TEX_END_NONE;
		*swizzle =
		    X360TEX_SWIZZLE(X360TEX_SWZ_X, X360TEX_SWZ_X, X360TEX_SWZ_X, X360TEX_SWZ_1);
		return;
	case X360TEX_FMT_DXN:
		*endian = X360TEX_END_8IN16;
		*swizzle =
		    X360TEX_SWIZZLE(X360TEX_SWZ_X, X360TEX_SWZ_Y, X360TEX_SWZ_1, X360TEX_SWZ_1);
		return;
	default: /* DXT: 16-bit words */
		*endian = X360TEX_END_8IN16;
		*swizzle =
		    X360TEX_SWIZZLE(X360TEX_SWZ_X, X360TEX_SWZ_Y, X360TEX_SWZ_Z, X360TEX_SWZ_W);
		return;
	}
}

enum rc tex_x360_fetch_shape(struct tex_x360_fetch *f, uint8_t fmt, uint32_t w, uint32_t h,
			     uint32_t levels, bool cube, struct tex_x360_layout *l)
{
	const struct x360_fmt *xf = fmt_find(fmt);
	uint32_t pitch;
	bool packed_base;

	if (!xf || w == 0 || h == 0 || w > 8192 || h > 8192 || levels == 0 ||
	    levels > X360TEX_MAX_LEVELS)
		return RC_INVAL;
	f->type = FETCH_TEXTURE;
	f->tiled = true;
	f->format = fmt;
	f->stacked = false;
	f->width = w;
	f->height = h;
	f->depth = 1;
	f->dimension = cube ? X360TEX_DIM_CUBE : X360TEX_DIM_2D;
	f->stack_depth = cube ? 5 : 0;
	f->mip_min_level = 0;
	f->mip_max_level = (uint8_t)(levels - 1);
	f->packed_mips = true;
	/* Base pitch: the width in units, power-of-two rounded when the base is in the tail. */
	packed_base = tex_x360_packed_level(w, h) == 0;
	pitch = packed_base ? 1u << ceil_log2(w) : w;
	pitch = (div_up(pitch, xf->block) + 31) / 32 * 32 * xf->block;
	f->pitch = (uint16_t)(pitch >> 5);
	f->base_address = 0;
	if (tex_x360_layout_get(f, l, NULL, 0) != RC_OK)
		return RC_INVAL;
	f->mip_address = (uint32_t)(l->mip_offset >> 12);
	return RC_OK;
}

uint8_t tex_x360_format_for_kind(enum tex_kind k)
{
	switch (k) {
	case TEXK_DXT1:
		return X360TEX_FMT_DXT1;
	case TEXK_DXT3:
		return X360TEX_FMT_DXT2_3;
	case TEXK_DXT5:
		return X360TEX_FMT_DXT4_5;
	case TEXK_ATI2:
		return X360TEX_FMT_DXN;
	case TEXK_BGRA8:
	case TEXK_BGRX8:
		return X360TEX_FMT_8_8_8_8;
	case TEXK_R5G6B5:
		return X360TEX_FMT_5_6_5;
	case TEXK_L8:
		return X360TEX_FMT_8;
	default:
		return 0;
	}
}

/* ---- the platform row (tex_platform.h): the Xbox 360 part of a tex_desc ---- */

struct x360_part {
	struct tex_x360_layout l;
};

_Static_assert(sizeof(struct x360_part) <= TEX_PLAT_BYTES, "TEX_PLAT_BYTES too small for X360");
_Static_assert(sizeof(((struct texmod_plan *)0)->obj) >= X360TEX_OBJECT_SIZE,
	       "TEXMOD_OBJ_MAX too small for X360");

static struct x360_part *part(struct tex_desc *d)
{
	return (struct x360_part *)(void *)d->plat.bytes;
}

static const struct x360_part *cpart(const struct tex_desc *d)
{
	return (const struct x360_part *)(const void *)d->plat.bytes;
}

/*
 * No field of the Texture object names its texels; the writers put the base resource in the
 * dictionary row just before it (docs/xbox360.md, "Texture object").
 */
static enum rc x360_describe(const struct src *s, const struct arena *a, uint32_t idx,
			     struct tex_desc *d, struct diag *diag)
{
	const struct arena_dict_entry *br = idx > 0 ? arena_row(a, idx - 1) : NULL;
	struct tex_x360_layout *l = &part(d)->l;
	struct tex_x360_object o;
	enum rc r;

	if (!br || !br->base_resource || !br->readable) {
		diag_add(diag, "object %u (Texture): no readable BaseResource in the row before it",
			 idx);
		return br && br->base_resource ? RC_TRUNCATED : RC_CORRUPT;
	}
	r = tex_x360_read_object(s, a, idx, &o);
	if (r == RC_TRUNCATED && arena_row(a, idx)->size < X360TEX_OBJECT_SIZE) {
		short_object(arena_row(a, idx)->size, idx, diag);
		return RC_CORRUPT;
	}
	if (r != RC_OK) {
		diag_add(diag, "object %u (Texture): unreadable (%s)", idx, rc_str(r));
		return r;
	}
	r = prepare_decoded(&o, br->size, idx, l, diag);
	if (r != RC_OK)
		return r;
	tex_x360_canon_kind(l->canon, &d->kind);
	d->alpha = d->kind == TEXK_DXT1 || d->kind == TEXK_DXT3 || d->kind == TEXK_DXT5 ||
		   d->kind == TEXK_BGRA8;
	d->format_name = tex_x360_format_name(l->format);
	d->width = l->width;
	d->height = l->height;
	d->mips = d->have_mips = l->levels;
	d->faces = d->have_faces = l->faces;
	d->base = br->start;
	return RC_OK;
}

struct x360_read {
	const struct src *s;
	uint64_t base;
};

static enum rc x360_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	const struct x360_read *rd = ctx;

	return src_read(rd->s, rd->base + off, dst, n);
}

static enum rc x360_rows(const struct src *s, const struct tex_desc *d, uint32_t face,
			 uint32_t level, uint32_t row0, uint32_t n, uint8_t *out)
{
	struct x360_read rd = {s, d->base};

	return tex_x360_read_rows(&cpart(d)->l, face, level, row0, n, x360_read, &rd, out);
}

/* ---- writing (texmod.c) ---- */

static bool x360_stores(enum tex_kind k)
{
	return tex_x360_format_for_kind(k) != 0;
}

static enum rc x360_in_place(const struct arena *a, struct texmod_plan *p, char *why, size_t whylen)
{
	(void)a;
	(void)why;
	(void)whylen;
	p->res = p->tex - 1; /* described: the row before is its base resource */
	p->dst = p->src;
	return RC_OK;
}

/* The object's fetch constant for shape p->to, tiled and packed as Skate's files are. */
static enum rc new_object(struct texmod_plan *p, struct tex_x360_object *o, char *why,
			  size_t whylen)
{
	struct tex_x360_layout *l = &part(&p->dst)->l;
	const struct texmod_shape *s = &p->to;
	bool keep = p->have_from && s->kind == p->from.kind;
	uint8_t fmt = keep ? o->fetch.format : tex_x360_format_for_kind(s->kind);
	enum tex_kind k;

	if (fmt != o->fetch.format || !keep) {
		tex_x360_format_words(fmt, &o->fetch.endian, &o->fetch.swizzle);
		if (s->kind == TEXK_BGRX8) /* alpha from the constant 1 */
			o->fetch.swizzle =
			    (uint16_t)((o->fetch.swizzle & 0x1FF) | X360TEX_SWZ_1 << 9);
	}
	if (tex_x360_fetch_shape(&o->fetch, fmt, s->width, s->height, s->mips, s->faces == 6, l) !=
		RC_OK ||
	    !tex_x360_canon_kind(l->canon, &k) || k != s->kind) {
		diag_note(why, whylen, "no Xbox 360 texture holds %s %ux%u", tex_kind_name(s->kind),
			  s->width, s->height);
		return RC_UNSUPPORTED;
	}
	tex_x360_object_encode(o, p->obj);
	p->obj_len = X360TEX_OBJECT_SIZE;
	p->texel_bytes = l->full;
	return RC_OK;
}

static enum rc x360_relayout(const struct src *as, const struct arena *a, struct texmod_plan *p,
			     char *why, size_t whylen)
{
	struct tex_x360_object o;

	p->dst.tp = &tex_platform_x360;
	p->dst.kind = p->to.kind;
	if (p->tex == 0 || !arena_row(a, p->tex - 1)->base_resource) {
		diag_note(why, whylen, "no base resource in the row before the texture");
		return RC_UNSUPPORTED;
	}
	p->res = p->tex - 1;
	if (tex_x360_read_object(as, a, p->tex, &o) != RC_OK) {
		diag_note(why, whylen, "the Texture object cannot be read");
		return RC_CORRUPT;
	}
	return new_object(p, &o, why, whylen);
}

static enum rc x360_put_rows(const struct tex_desc *d, uint32_t face, uint32_t level, uint32_t row0,
			     uint32_t n, const uint8_t *canon, uint8_t *res, size_t res_len)
{
	return tex_x360_write_rows(&cpart(d)->l, face, level, row0, n, canon, res, res_len);
}

const struct tex_platform tex_platform_x360 = {
    .describe = x360_describe,
    .read_rows = x360_rows,
    .stores = x360_stores,
    .in_place = x360_in_place,
    .relayout = x360_relayout,
    .write_rows = x360_put_rows,
};
