/*
 * PS3 GCM textures (spec §7.5, §16.4-§16.6): header decode, layout, RSX swizzle, loading into
 * the canonical DDS-order image, RGBA conversion and texture file naming.
 *
 * Why these layout rules (texture.h lists them): DXT data on RSX is always block-linear and
 * the real files pack each level tightly (§16.5), so the pitch field is informational there.
 * Uncompressed textures are swizzled unless LN is set; the RSX only swizzles power-of-two
 * sizes, so an NPOT texture without LN is malformed and the most useful reading is linear.
 * For LN textures RSX addresses every mip level with the one pitch register.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psgfs/names.h"
#include "psgfs/texture.h"

struct gcm_fmt {
	uint8_t base;
	const char *name;
	uint8_t bpp; /* bytes per texel, or per block when compressed; 0 = unknown */
	bool compressed, supported, alpha;
	enum tex_kind kind;
};

static const struct gcm_fmt gcm_fmts[] = {
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

static const struct gcm_fmt *fmt_find(uint8_t base)
{
	for (size_t i = 0; i < sizeof gcm_fmts / sizeof gcm_fmts[0]; i++)
		if (gcm_fmts[i].base == base)
			return &gcm_fmts[i];
	return NULL;
}

const char *gcm_format_name(uint8_t base_format)
{
	const struct gcm_fmt *f = fmt_find(base_format);

	return f ? f->name : NULL;
}

bool gcm_format_supported(uint8_t base_format)
{
	const struct gcm_fmt *f = fmt_find(base_format);

	return f && f->supported;
}

static uint32_t kind_out_bpp(enum tex_kind k)
{
	switch (k) {
	case TEXK_BGRA8:
	case TEXK_BGRX8:
		return 4;
	case TEXK_R5G6B5:
	case TEXK_A1R5G5B5:
	case TEXK_A4R4G4B4:
		return 2;
	case TEXK_L8:
		return 1;
	case TEXK_DXT1:
		return 8;
	default:
		return 16;
	}
}

static bool kind_compressed(enum tex_kind k)
{
	return k == TEXK_DXT1 || k == TEXK_DXT3 || k == TEXK_DXT5;
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

static uint32_t lvl(uint32_t x, uint32_t level)
{
	x >>= level;
	return x ? x : 1;
}

static void note(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	size_t used;

	if (!why || whylen == 0)
		return;
	used = strlen(why);
	if (used + 3 >= whylen)
		return;
	if (used) {
		memcpy(why + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(why + used, whylen - used, fmt, ap);
	va_end(ap);
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
	if (kind_compressed(k))
		return mul_ok((uint64_t)((w + 3) / 4) * ((h + 3) / 4), kind_out_bpp(k), out);
	return mul_ok((uint64_t)w * h, kind_out_bpp(k), out);
}

enum rc tex_layout_get(const struct ps3_texture *t, struct tex_layout *l, char *why, size_t whylen)
{
	const struct gcm_fmt *f = fmt_find(t->base_format);
	uint32_t maxm = 0, m;
	uint64_t face = 0, out = 0, v;
	bool cube;

	memset(l, 0, sizeof *l);
	if (why && whylen)
		why[0] = 0;
	if (!f) {
		note(why, whylen, "unknown format byte 0x%02X", t->format);
		return RC_UNSUPPORTED;
	}
	if (!f->supported) {
		note(why, whylen, "format %s (0x%02X) is not converted", f->name, t->format);
		return RC_UNSUPPORTED;
	}
	if (t->dimension == 3 || t->depth > 1) {
		note(why, whylen, "3D texture (dimension %u, depth %u) is not converted",
		     t->dimension, t->depth);
		return RC_UNSUPPORTED;
	}
	if (t->dimension != 1 && t->dimension != 2) {
		note(why, whylen, "dimension %u is not 1, 2 or 3", t->dimension);
		return RC_CORRUPT;
	}
	if (t->width == 0 || t->height == 0) {
		note(why, whylen, "size %ux%u is empty", t->width, t->height);
		return RC_CORRUPT;
	}
	for (uint32_t s = t->width > t->height ? t->width : t->height; s; s >>= 1)
		maxm++;
	if (t->mipmap == 0 || t->mipmap > maxm) {
		note(why, whylen, "mipmap count %u outside 1..%u for %ux%u", t->mipmap, maxm,
		     t->width, t->height);
		return RC_CORRUPT;
	}
	cube = t->cubemap != 0 || t->store_type == TEX_STORE_CUBE;
	if ((t->cubemap != 0) != (t->store_type == TEX_STORE_CUBE))
		note(why, whylen, "cubemap byte %u disagrees with storeType 0x%X; read as %s",
		     t->cubemap, t->store_type, cube ? "cube map" : "2D");
	m = t->mipmap;
	l->mips = m;
	l->faces = cube ? 6 : 1;
	l->compressed = f->compressed;
	l->bpp = f->bpp;
	if (f->compressed) {
		uint64_t packed = (uint64_t)((t->width + 3) / 4) * f->bpp;

		if (t->pitch != packed)
			note(why, whylen, "pitch %u is not the packed row of %llu bytes (ignored)",
			     t->pitch, (unsigned long long)packed);
	} else if (!t->linear) {
		if (pow2_log(t->width) < 0 || pow2_log(t->height) < 0)
			note(why, whylen,
			     "non-power-of-two %ux%u texture is not linear (LN); read as packed "
			     "linear rows",
			     t->width, t->height);
		else
			l->swizzled = true;
	} else if (t->pitch != 0) {
		if ((uint64_t)t->width * f->bpp > t->pitch) {
			note(why, whylen, "pitch %u is smaller than a row of %llu bytes", t->pitch,
			     (unsigned long long)t->width * f->bpp);
			return RC_CORRUPT;
		}
		l->row_pitch = t->pitch;
	}
	for (uint32_t i = 0; i < m; i++) {
		uint32_t w = lvl(t->width, i), h = lvl(t->height, i);

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

uint32_t gcm_swizzle_index(uint32_t x, uint32_t y, unsigned lw, unsigned lh)
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

void gcm_unswizzle(const uint8_t *src, uint8_t *dst, unsigned lw, unsigned lh, uint32_t bpp)
{
	uint32_t w = 1u << lw, h = 1u << lh;

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			memcpy(dst + ((size_t)y * w + x) * bpp,
			       src + (size_t)gcm_swizzle_index(x, y, lw, lh) * bpp, bpp);
}

void gcm_swizzle(const uint8_t *src, uint8_t *dst, unsigned lw, unsigned lh, uint32_t bpp)
{
	uint32_t w = 1u << lw, h = 1u << lh;

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			memcpy(dst + (size_t)gcm_swizzle_index(x, y, lw, lh) * bpp,
			       src + ((size_t)y * w + x) * bpp, bpp);
}

static uint8_t x5(uint32_t v)
{
	return (uint8_t)(v << 3 | v >> 2);
}
static uint8_t x6(uint32_t v)
{
	return (uint8_t)(v << 2 | v >> 4);
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
		d[0] = x5(v & 31);
		d[1] = x5(v >> 5 & 31);
		d[2] = x6(v >> 10);
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

/* Convert one face (all levels) from src (face_bytes available) into dst. */
static void conv_face(const struct ps3_texture *t, const struct tex_layout *l, const uint8_t *src,
		      uint8_t *dst)
{
	const struct gcm_fmt *f = fmt_find(t->base_format);
	uint32_t ob = kind_out_bpp(f->kind);

	for (uint32_t i = 0; i < l->mips; i++) {
		uint32_t w = lvl(t->width, i), h = lvl(t->height, i);
		uint64_t sb, db;

		level_src_bytes(l, w, h, &sb);
		level_out_bytes(f->kind, w, h, &db);
		if (l->compressed) {
			memcpy(dst, src, (size_t)db);
		} else if (l->swizzled) {
			unsigned lw = (unsigned)pow2_log(w), lh = (unsigned)pow2_log(h);

			for (uint32_t y = 0; y < h; y++)
				for (uint32_t x = 0; x < w; x++)
					conv_texel(t->base_format,
						   src + (size_t)gcm_swizzle_index(x, y, lw, lh) *
							     l->bpp,
						   dst + ((size_t)y * w + x) * ob);
		} else {
			size_t stride = l->row_pitch ? l->row_pitch : (size_t)w * l->bpp;

			for (uint32_t y = 0; y < h; y++)
				for (uint32_t x = 0; x < w; x++)
					conv_texel(t->base_format,
						   src + (size_t)y * stride + (size_t)x * l->bpp,
						   dst + ((size_t)y * w + x) * ob);
		}
		src += sb;
		dst += db;
	}
}

static const char *type_label(const struct arena *a, uint32_t i, char tmp[16])
{
	if (i >= a->n_dict)
		return "?";
	return rw_type_label(a->dict[i].type_id, tmp);
}

/* Everything texture_load checks before reading texels; *texel_at = absolute file offset. */
static enum rc tex_resolve(const struct src *s, const struct arena *a, uint32_t tex_idx,
			   struct ps3_texture *tp, struct tex_layout *lp, uint64_t *texel_at,
			   struct diag *diag)
{
	struct ps3_texture t;
	struct tex_layout l;
	const struct arena_dict_entry *br;
	uint8_t *obj = NULL;
	size_t len = 0;
	uint32_t bi, boff = 0;
	uint64_t need;
	char why[256], tmp[16];
	enum rc r;

	if (tex_idx >= a->n_dict)
		return RC_BOUNDS;
	if (a->dict[tex_idx].type_id != RW_T_TEXTURE)
		return RC_UNSUPPORTED;
	r = arena_read_object(s, a, tex_idx, &obj, &len);
	if (r != RC_OK) {
		diag_add(diag, "object %u (Texture): unreadable (%s)", tex_idx, rc_str(r));
		return r;
	}
	r = ps3_texture_decode(obj, len, a->big_endian, &t);
	free(obj);
	if (r != RC_OK) {
		diag_add(diag, "object %u (Texture): %zu bytes, shorter than %u", tex_idx, len,
			 PS3_TEXTURE_SIZE);
		return RC_CORRUPT;
	}
	r = tex_layout_get(&t, &l, why, sizeof why);
	if (r != RC_OK) {
		diag_add(diag, "object %u (Texture): %s", tex_idx, why);
		return r;
	}
	if (why[0])
		diag_add(diag, "object %u (Texture): %s", tex_idx, why);

	/* m_buffer is a plain dictionary index; row 0 is a valid target here (§7.5). */
	if (t.m_buffer >> 22 == 0) {
		bi = t.m_buffer;
		if (bi >= a->n_dict) {
			diag_add(diag, "object %u (Texture): m_buffer %u out of range (%u objects)",
				 tex_idx, bi, a->n_dict);
			return RC_CORRUPT;
		}
	} else if (arena_resolve_ref(a, t.m_buffer, &bi, &boff) != RC_OK) {
		diag_add(diag, "object %u (Texture): m_buffer 0x%08X does not resolve", tex_idx,
			 t.m_buffer);
		return RC_CORRUPT;
	}
	br = &a->dict[bi];
	if (!br->base_resource) {
		diag_add(diag, "object %u (Texture): m_buffer %u is a %s, not a BaseResource",
			 tex_idx, bi, type_label(a, bi, tmp));
		return RC_CORRUPT;
	}
	if (!br->readable) {
		diag_add(diag, "object %u (Texture): base resource %u lies outside the file",
			 tex_idx, bi);
		return RC_CORRUPT;
	}
	if (!add_ok(l.total, (uint64_t)boff + t.offset, &need) || need > br->size) {
		diag_add(diag,
			 "object %u (Texture): base resource %u holds %u bytes, %s %ux%u %u mips%s "
			 "needs %llu",
			 tex_idx, bi, br->size, gcm_format_name(t.base_format), t.width, t.height,
			 l.mips, l.faces == 6 ? " cube" : "", (unsigned long long)l.total);
		return RC_CORRUPT;
	}
	/* A texture that owns its base resource must fill it exactly (spec §16.5): extra bytes
	 * mean the header and the data disagree, so the pictures would be guesses. Only a
	 * texture placed at an offset inside a shared resource may leave bytes after it. */
	if (need < br->size && boff + t.offset == 0) {
		diag_add(diag,
			 "object %u (Texture): base resource %u holds %u bytes, %llu more than the "
			 "%llu %s %ux%u %u mips%s needs",
			 tex_idx, bi, br->size, (unsigned long long)(br->size - need),
			 (unsigned long long)need, gcm_format_name(t.base_format), t.width,
			 t.height, l.mips, l.faces == 6 ? " cube" : "");
		return RC_CORRUPT;
	}

	*tp = t;
	*lp = l;
	*texel_at = br->start + boff + t.offset;
	return RC_OK;
}

enum rc texture_load(const struct src *s, const struct arena *a, uint32_t tex_idx,
		     struct texture_image **out, struct diag *diag)
{
	struct texture_image *img = NULL;
	struct ps3_texture t;
	struct tex_layout l;
	uint8_t *data = NULL;
	uint64_t at;
	enum rc r;

	*out = NULL;
	r = tex_resolve(s, a, tex_idx, &t, &l, &at, diag);
	if (r != RC_OK)
		return r;
	/* need <= br->size, which is readable inside the file: allocations are bounded. */
	r = src_dup(s, at, (size_t)l.total, &data);
	if (r != RC_OK) {
		diag_add(diag, "object %u (Texture): texels unreadable (%s)", tex_idx, rc_str(r));
		return r;
	}
	img = calloc(1, sizeof *img);
	if (img)
		img->data = malloc(l.out_bytes ? (size_t)l.out_bytes : 1);
	if (!img || !img->data || l.out_bytes > SIZE_MAX) {
		free(data);
		texture_image_free(img);
		return RC_NOMEM;
	}
	img->hdr = t;
	img->index = tex_idx;
	img->kind = fmt_find(t.base_format)->kind;
	img->width = t.width;
	img->height = t.height;
	img->mips = l.mips;
	img->faces = l.faces;
	img->size = (size_t)l.out_bytes;
	for (uint32_t fc = 0; fc < l.faces; fc++)
		conv_face(&t, &l, data + fc * l.face_stride,
			  img->data + fc * (l.out_bytes / l.faces));
	free(data);
	*out = img;
	return RC_OK;
}

enum rc texture_check(const struct src *s, const struct arena *a, uint32_t tex_idx,
		      uint64_t *dds_size, struct diag *diag)
{
	struct ps3_texture t;
	struct tex_layout l;
	uint64_t at;
	enum rc r = tex_resolve(s, a, tex_idx, &t, &l, &at, diag);

	if (r == RC_OK && dds_size)
		*dds_size = DDS_HEADER_BYTES + l.out_bytes;
	return r;
}

void texture_image_free(struct texture_image *t)
{
	if (!t)
		return;
	free(t->data);
	free(t);
}

size_t texture_image_bytes(const struct texture_image *t)
{
	return t ? t->size : 0;
}

bool texture_level(const struct texture_image *t, uint32_t face, uint32_t level, size_t *off,
		   size_t *len, uint32_t *w, uint32_t *h)
{
	uint64_t o = 0, v = 0;

	if (!t || face >= t->faces || level >= t->mips)
		return false;
	o = (uint64_t)face * (t->size / t->faces);
	for (uint32_t i = 0; i <= level; i++) {
		level_out_bytes(t->kind, lvl(t->width, i), lvl(t->height, i), &v);
		if (i < level)
			o += v;
	}
	*off = (size_t)o;
	*len = (size_t)v;
	if (w)
		*w = lvl(t->width, level);
	if (h)
		*h = lvl(t->height, level);
	return true;
}

bool texture_has_alpha(const struct texture_image *t)
{
	const struct gcm_fmt *f = fmt_find(t->hdr.base_format);

	return f && f->alpha;
}

enum rc texture_rgba(const struct texture_image *t, uint8_t **rgba, uint32_t *w, uint32_t *h)
{
	size_t off, len;
	uint32_t ww, hh;
	const uint8_t *p;
	uint8_t *o;

	*rgba = NULL;
	if (!texture_level(t, 0, 0, &off, &len, &ww, &hh))
		return RC_INVAL;
	o = xcalloc_n((size_t)ww * hh, 4);
	if (!o)
		return RC_NOMEM;
	p = t->data + off;
	if (kind_compressed(t->kind)) {
		dxt_decode_image(t->kind, p, ww, hh, o);
	} else {
		for (size_t i = 0, n = (size_t)ww * hh; i < n; i++) {
			uint8_t *d = o + 4 * i;
			uint16_t v;

			switch (t->kind) {
			case TEXK_L8:
				d[0] = d[1] = d[2] = p[i];
				d[3] = 255;
				break;
			case TEXK_BGRA8:
			case TEXK_BGRX8:
				d[0] = p[4 * i + 2];
				d[1] = p[4 * i + 1];
				d[2] = p[4 * i];
				d[3] = t->kind == TEXK_BGRA8 ? p[4 * i + 3] : 255;
				break;
			case TEXK_R5G6B5:
				v = ld_u16le(p + 2 * i);
				d[0] = x5(v >> 11);
				d[1] = x6(v >> 5 & 63);
				d[2] = x5(v & 31);
				d[3] = 255;
				break;
			case TEXK_A1R5G5B5:
				v = ld_u16le(p + 2 * i);
				d[0] = x5(v >> 10 & 31);
				d[1] = x5(v >> 5 & 31);
				d[2] = x5(v & 31);
				d[3] = (v & 0x8000) ? 255 : 0;
				break;
			case TEXK_A4R4G4B4:
				v = ld_u16le(p + 2 * i);
				d[0] = (uint8_t)((v >> 8 & 15) * 17);
				d[1] = (uint8_t)((v >> 4 & 15) * 17);
				d[2] = (uint8_t)((v & 15) * 17);
				d[3] = (uint8_t)((v >> 12) * 17);
				break;
			default:
				break;
			}
		}
	}
	*rgba = o;
	*w = ww;
	*h = hh;
	return RC_OK;
}

enum rc texture_png(const struct texture_image *t, struct buf *out)
{
	uint8_t *px;
	uint32_t w, h;
	enum rc r = texture_rgba(t, &px, &w, &h);

	if (r != RC_OK)
		return r;
	r = pngw_encode_rgba(px, w, h, texture_has_alpha(t), out);
	free(px);
	return r;
}

/* --- naming --- */

struct stem_row {
	char *name;
	uint32_t idx;
};

static int stem_cmp(const void *pa, const void *pb)
{
	const struct stem_row *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Name TOC entries give their Texture targets (first entry wins). */
static void toc_scan(const struct src *s, const struct arena *a, uint32_t ti, char **names,
		     struct diag *diag)
{
	uint8_t *p = NULL;
	size_t len = 0;
	uint32_t n, arr;
	static const char suffix[] = ".Texture";

	if (arena_read_object(s, a, ti, &p, &len) != RC_OK) {
		diag_add(diag, "object %u (TableOfContents): unreadable", ti);
		return;
	}
	if (len < 20) {
		free(p);
		return;
	}
	n = a->big_endian ? ld_u32be(p) : ld_u32le(p);
	arr = a->big_endian ? ld_u32be(p + 4) : ld_u32le(p + 4);
	for (uint64_t e = 0; e < n; e++) {
		uint64_t at = arr + 24 * e;
		uint32_t no, ref, obj, off;
		size_t nl;
		char comp[NAME_COMPONENT_MAX + 1];

		if (!span_ok(len, at, 24))
			break; /* entry count capped by the object size */
		no = a->big_endian ? ld_u32be(p + at) : ld_u32le(p + at);
		ref = a->big_endian ? ld_u32be(p + at + 20) : ld_u32le(p + at + 20);
		if (no == 0 || no >= len)
			continue;
		if (ref >> 22 == 0) {
			obj = ref;
		} else if (arena_resolve_ref(a, ref, &obj, &off) != RC_OK) {
			continue;
		}
		if (obj >= a->n_dict || a->dict[obj].type_id != RW_T_TEXTURE || names[obj])
			continue;
		nl = name_len(p + no, len - no);
		if (nl == len - no)
			continue; /* unterminated */
		if (nl > sizeof suffix - 1 &&
		    memcmp(p + no + nl - (sizeof suffix - 1), suffix, sizeof suffix - 1) == 0)
			nl -= sizeof suffix - 1;
		if (nl == 0)
			continue;
		name_component(p + no, nl, comp);
		names[obj] = strdup(comp);
	}
	free(p);
}

enum rc texture_names(const struct src *s, const struct arena *a, char ***names_out,
		      struct diag *diag)
{
	char **names;
	struct stem_row *rows;
	size_t nr = 0;

	*names_out = NULL;
	names = xcalloc_n(a->n_dict ? a->n_dict : 1, sizeof *names);
	if (!names)
		return RC_NOMEM;
	for (uint32_t i = 0; i < a->n_dict; i++)
		if (a->dict[i].type_id == RW_T_TOC)
			toc_scan(s, a, i, names, diag);
	for (uint32_t i = 0; i < a->n_dict; i++) {
		if (a->dict[i].type_id != RW_T_TEXTURE || names[i])
			continue;
		names[i] = malloc(24);
		if (names[i])
			snprintf(names[i], 24, "%04u.Texture", i);
	}
	rows = xcalloc_n(a->n_dict ? a->n_dict : 1, sizeof *rows);
	if (!rows) {
		texture_names_free(names, a->n_dict);
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i < a->n_dict; i++) {
		if (a->dict[i].type_id != RW_T_TEXTURE)
			continue;
		if (!names[i]) {
			free(rows);
			texture_names_free(names, a->n_dict);
			return RC_NOMEM;
		}
		rows[nr].name = names[i];
		rows[nr++].idx = i;
	}
	qsort(rows, nr, sizeof *rows, stem_cmp);
	for (size_t k = 1; k < nr; k++) {
		size_t m;
		char *nn;

		if (strcmp(rows[k].name, rows[k - 1].name) != 0)
			continue;
		/* rows[k-1] keeps the name (lowest index); later twins get ".NNNN" */
		m = strlen(names[rows[k].idx]) + 16;
		nn = malloc(m);
		if (!nn)
			continue;
		snprintf(nn, m, "%s.%04u", names[rows[k].idx], rows[k].idx);
		rows[k].name = names[rows[k].idx]; /* still equal text for the next compare */
		names[rows[k].idx] = nn;
	}
	/* free the replaced originals: they are still referenced by rows[] only */
	for (size_t k = 1; k < nr; k++)
		if (rows[k].name != names[rows[k].idx])
			free(rows[k].name);
	free(rows);
	*names_out = names;
	return RC_OK;
}

void texture_names_free(char **names, uint32_t n)
{
	if (!names)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
