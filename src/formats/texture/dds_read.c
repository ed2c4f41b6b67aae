/*
 * DDS input (dds_read.h). The header layout is Microsoft's DDS_HEADER / DDS_PIXELFORMAT /
 * DDS_HEADER_DXT10 (the "Programming Guide for DDS" describes every field); what psgfs writes
 * is in dds.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/dds_read.h"
#include "psgfs/formats/texture.h"

#define DDS_MAGIC	 0x20534444u /* "DDS " */
#define DDSD_DEPTH	 0x800000u
#define DDPF_ALPHAPIXELS 0x1u
#define DDPF_ALPHA	 0x2u
#define DDPF_FOURCC	 0x4u
#define DDPF_RGB	 0x40u
#define DDPF_YUV	 0x200u
#define DDPF_LUMINANCE	 0x20000u
#define DDSCAPS2_CUBE	 0x200u
#define DDSCAPS2_FACES	 0xFC00u
#define DDSCAPS2_VOLUME	 0x200000u
#define FOURCC(a, b, c, d)                                                                         \
	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define DX10_TEXTURE2D 3u
#define DX10_MISC_CUBE 0x4u

static void set_kind(struct dds_read_info *d, enum tex_kind k, const char *name)
{
	d->canonical = true;
	d->kind = k;
	d->compressed = tex_kind_compressed(k);
	d->unit_bytes = tex_kind_bpp(k);
	d->alpha = k != TEXK_BGRX8 && k != TEXK_R5G6B5 && k != TEXK_L8 && k != TEXK_ATI2;
	snprintf(d->format, sizeof d->format, "%s", name);
}

/* DXGI formats of the DX10 extension that psgfs reads. */
static bool dx10_format(uint32_t f, struct dds_read_info *d)
{
	static const struct {
		uint32_t dxgi;
		enum tex_kind k;
		const char *name;
	} map[] = {
	    {71, TEXK_DXT1, "BC1"},
	    {72, TEXK_DXT1, "BC1 sRGB"},
	    {74, TEXK_DXT3, "BC2"},
	    {75, TEXK_DXT3, "BC2 sRGB"},
	    {77, TEXK_DXT5, "BC3"},
	    {78, TEXK_DXT5, "BC3 sRGB"},
	    {83, TEXK_ATI2, "BC5"},
	    {87, TEXK_BGRA8, "B8G8R8A8"},
	    {91, TEXK_BGRA8, "B8G8R8A8 sRGB"},
	    {88, TEXK_BGRX8, "B8G8R8X8"},
	    {93, TEXK_BGRX8, "B8G8R8X8 sRGB"},
	    {85, TEXK_R5G6B5, "B5G6R5"},
	    {86, TEXK_A1R5G5B5, "B5G5R5A1"},
	    {115, TEXK_A4R4G4B4, "B4G4R4A4"},
	    {61, TEXK_L8, "R8"},
	};

	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (map[i].dxgi == f) {
			set_kind(d, map[i].k, map[i].name);
			return true;
		}
	if (f == 28 || f == 29) { /* R8G8B8A8: bytes R G B A */
		d->unit_bytes = 4;
		d->mask[0] = 0xFFu, d->mask[1] = 0xFF00u, d->mask[2] = 0xFF0000u;
		d->mask[3] = 0xFF000000u;
		d->alpha = true;
		snprintf(d->format, sizeof d->format, "R8G8B8A8");
		return true;
	}
	return false;
}

static bool masks_are(const uint32_t m[4], uint32_t r, uint32_t g, uint32_t b, uint32_t a)
{
	return m[0] == r && m[1] == g && m[2] == b && m[3] == a;
}

/* A bit-mask layout: the canonical kinds by their exact masks, others decoded generically. */
static enum rc mask_format(uint32_t pf_flags, uint32_t bits, const uint32_t m_in[4],
			   struct dds_read_info *d, char *why, size_t whylen)
{
	uint32_t m[4] = {m_in[0], m_in[1], m_in[2], m_in[3]};
	bool alpha = (pf_flags & (DDPF_ALPHAPIXELS | DDPF_ALPHA)) && m[3];
	uint64_t all = 0;

	if (!alpha)
		m[3] = 0;
	if (pf_flags & DDPF_ALPHA && !(pf_flags & (DDPF_RGB | DDPF_LUMINANCE)))
		m[0] = m[1] = m[2] = 0;
	if (bits != 8 && bits != 16 && bits != 24 && bits != 32)
		return rc_fail(why, whylen, RC_UNSUPPORTED, "%u bits per texel is not supported",
			       bits);
	for (int i = 0; i < 4; i++) {
		if (bits < 32 && m[i] >> bits)
			return rc_fail(why, whylen, RC_CORRUPT,
				       "bit mask 0x%08X does not fit %u-bit texels", m[i], bits);
		if (all & m[i])
			return rc_fail(why, whylen, RC_CORRUPT, "bit masks overlap");
		all |= m[i];
	}
	if (!all)
		return rc_fail(why, whylen, RC_CORRUPT, "the pixel format has no bit masks");
	if (pf_flags & DDPF_LUMINANCE) {
		d->luminance = true;
		if (bits == 8 && masks_are(m, 0xFF, 0, 0, 0)) {
			set_kind(d, TEXK_L8, "L8");
			return RC_OK;
		}
	} else if (bits == 32 && masks_are(m, 0xFF0000, 0xFF00, 0xFF, 0xFF000000)) {
		set_kind(d, TEXK_BGRA8, "A8R8G8B8");
		return RC_OK;
	} else if (bits == 32 && masks_are(m, 0xFF0000, 0xFF00, 0xFF, 0)) {
		set_kind(d, TEXK_BGRX8, "X8R8G8B8");
		return RC_OK;
	} else if (bits == 16 && masks_are(m, 0xF800, 0x07E0, 0x1F, 0)) {
		set_kind(d, TEXK_R5G6B5, "R5G6B5");
		return RC_OK;
	} else if (bits == 16 && masks_are(m, 0x7C00, 0x03E0, 0x1F, 0x8000)) {
		set_kind(d, TEXK_A1R5G5B5, "A1R5G5B5");
		return RC_OK;
	} else if (bits == 16 && masks_are(m, 0x0F00, 0xF0, 0xF, 0xF000)) {
		set_kind(d, TEXK_A4R4G4B4, "A4R4G4B4");
		return RC_OK;
	}
	memcpy(d->mask, m, sizeof m);
	d->unit_bytes = bits / 8;
	d->alpha = alpha;
	snprintf(d->format, sizeof d->format, "%u-bit masks %X/%X/%X/%X", bits, m[0], m[1], m[2],
		 m[3]);
	return RC_OK;
}

static enum rc fourcc_format(uint32_t cc, struct dds_read_info *d, char *why, size_t whylen)
{
	switch (cc) {
	case FOURCC('D', 'X', 'T', '1'):
		set_kind(d, TEXK_DXT1, "DXT1");
		return RC_OK;
	case FOURCC('D', 'X', 'T', '3'):
		set_kind(d, TEXK_DXT3, "DXT3");
		return RC_OK;
	case FOURCC('D', 'X', 'T', '5'):
		set_kind(d, TEXK_DXT5, "DXT5");
		return RC_OK;
	case FOURCC('A', 'T', 'I', '2'):
	case FOURCC('B', 'C', '5', 'U'):
		set_kind(d, TEXK_ATI2, "ATI2");
		return RC_OK;
	case FOURCC('D', 'X', 'T', '2'):
	case FOURCC('D', 'X', 'T', '4'):
		return rc_fail(
		    why, whylen, RC_UNSUPPORTED,
		    "DXT2/DXT4 (premultiplied alpha) is not supported; save as DXT3/DXT5");
	default: {
		char s[5];

		for (int i = 0; i < 4; i++) {
			char c = (char)(cc >> (8 * i));

			s[i] = c >= 0x20 && c < 0x7F ? c : '?';
		}
		s[4] = 0;
		return rc_fail(why, whylen, RC_UNSUPPORTED, "format '%s' (0x%08X) is not supported",
			       s, cc);
	}
	}
}

/*
 * Cube faces of caps2: all six, or the first n in DDS order (+X, -X, +Y, -Y, +Z, -Z), which is
 * what psgfs serves for a cube map whose data holds only its first faces. 0 for any other set.
 */
static uint32_t cube_faces(uint32_t caps2)
{
	uint32_t bits = (caps2 & DDSCAPS2_FACES) >> 10;

	return bits && !(bits & (bits + 1)) ? (uint32_t)__builtin_popcount(bits) : 0;
}

/* Faces, volume, DX10 dimension: one 2D texture, one cube map or its first faces. */
static enum rc shape(const uint8_t *h, const uint8_t *dx10, struct dds_read_info *d, char *why,
		     size_t whylen)
{
	uint32_t flags = ld_u32le(h + 8), depth = ld_u32le(h + 24), caps2 = ld_u32le(h + 112);

	if ((caps2 & DDSCAPS2_VOLUME) || ((flags & DDSD_DEPTH) && depth > 1))
		return rc_fail(why, whylen, RC_UNSUPPORTED, "volume textures are not supported");
	d->faces = 1;
	if (caps2 & DDSCAPS2_CUBE) {
		d->faces = cube_faces(caps2);
		d->cube = true;
		if (!d->faces)
			return rc_fail(why, whylen, RC_UNSUPPORTED,
				       "a cube map must hold all six faces, or its first ones in "
				       "order +X -X +Y -Y +Z -Z (caps2 0x%X)",
				       caps2);
	}
	if (dx10) {
		uint32_t dim = ld_u32le(dx10 + 4), misc = ld_u32le(dx10 + 8),
			 array = ld_u32le(dx10 + 12);

		if (dim != DX10_TEXTURE2D)
			return rc_fail(why, whylen, RC_UNSUPPORTED,
				       "DX10 resource dimension %u is not a 2D texture", dim);
		if (array != 1)
			return rc_fail(why, whylen, RC_UNSUPPORTED,
				       "texture arrays (%u elements) are not supported", array);
		if (misc & DX10_MISC_CUBE) {
			d->faces = 6;
			d->cube = true;
		}
	}
	return RC_OK;
}

uint32_t dds_read_level_rows(const struct dds_read_info *d, uint32_t level)
{
	uint32_t h = tex_dim(d->height, level);

	return d->compressed ? (h + 3) / 4 : h;
}

uint64_t dds_read_row_bytes(const struct dds_read_info *d, uint32_t level)
{
	uint32_t w = tex_dim(d->width, level);

	return (uint64_t)(d->compressed ? (w + 3) / 4 : w) * d->unit_bytes;
}

uint64_t dds_read_level_off(const struct dds_read_info *d, uint32_t face, uint32_t level)
{
	uint64_t off = d->data_off + face * d->face_bytes;

	for (uint32_t l = 0; l < level; l++)
		off += dds_read_row_bytes(d, l) * dds_read_level_rows(d, l);
	return off;
}

/* Sizes, mips and the texel bytes the file must hold. */
static enum rc sizes(const struct src *s, const uint8_t *h, uint32_t max_side,
		     struct dds_read_info *d, char *why, size_t whylen)
{
	uint32_t mipc = ld_u32le(h + 28), chain = 0;
	uint64_t need;

	d->height = ld_u32le(h + 12);
	d->width = ld_u32le(h + 16);
	if (!d->width || !d->height)
		return rc_fail(why, whylen, RC_CORRUPT, "size %ux%u is empty", d->width, d->height);
	if (d->width > max_side || d->height > max_side)
		return rc_fail(why, whylen, RC_UNSUPPORTED, "%ux%u is larger than %ux%u", d->width,
			       d->height, max_side, max_side);
	for (uint32_t v = d->width > d->height ? d->width : d->height; v; v >>= 1)
		chain++;
	d->mips = mipc ? mipc : 1;
	if (d->mips > chain)
		return rc_fail(why, whylen, RC_CORRUPT, "%u mip levels, but %ux%u has at most %u",
			       d->mips, d->width, d->height, chain);
	d->face_bytes = dds_read_level_off(d, 0, d->mips) - d->data_off;
	need = d->data_off + d->face_bytes * d->faces;
	if (s->size < need) {
		char faces[24] = "";

		if (d->faces > 1)
			snprintf(faces, sizeof faces, ", %u faces", d->faces);
		return rc_fail(
		    why, whylen, RC_TRUNCATED,
		    "truncated: %s %ux%u, %u mip level%s%s needs %llu bytes, the file has "
		    "%llu",
		    d->format, d->width, d->height, d->mips, d->mips == 1 ? "" : "s", faces,
		    (unsigned long long)need, (unsigned long long)s->size);
	}
	return RC_OK;
}

enum rc dds_read_header(const struct src *s, uint32_t max_side, struct dds_read_info *d, char *why,
			size_t whylen)
{
	uint8_t h[128], x[20];
	const uint8_t *dx10 = NULL;
	uint32_t pf_flags, cc, m[4];
	enum rc r;

	memset(d, 0, sizeof *d);
	if (why && whylen)
		why[0] = 0;
	if (s->size < 128 || src_read(s, 0, h, 128) != RC_OK || ld_u32le(h) != DDS_MAGIC)
		return rc_fail(why, whylen, RC_FORMAT, "not a DDS file (no 'DDS ' header)");
	if (ld_u32le(h + 4) != 124 || ld_u32le(h + 76) != 32)
		return rc_fail(why, whylen, RC_CORRUPT,
			       "DDS header size %u and pixel format size %u (expected 124, 32)",
			       ld_u32le(h + 4), ld_u32le(h + 76));
	pf_flags = ld_u32le(h + 80);
	cc = ld_u32le(h + 84);
	d->data_off = 128;
	if ((pf_flags & DDPF_FOURCC) && cc == FOURCC('D', 'X', '1', '0')) {
		if (s->size < 148 || src_read(s, 128, x, sizeof x) != RC_OK)
			return rc_fail(why, whylen, RC_TRUNCATED,
				       "truncated: the DX10 header extension is missing");
		dx10 = x;
		d->data_off = 148;
		if (!dx10_format(ld_u32le(x), d))
			return rc_fail(why, whylen, RC_UNSUPPORTED,
				       "DXGI format %u is not supported", ld_u32le(x));
	} else if (pf_flags & DDPF_FOURCC) {
		r = fourcc_format(cc, d, why, whylen);
		if (r != RC_OK)
			return r;
	} else if (pf_flags & DDPF_YUV) {
		return rc_fail(why, whylen, RC_UNSUPPORTED, "YUV pixel formats are not supported");
	} else if (pf_flags & (DDPF_RGB | DDPF_LUMINANCE | DDPF_ALPHA)) {
		for (int i = 0; i < 4; i++)
			m[i] = ld_u32le(h + 92 + 4 * i);
		r = mask_format(pf_flags, ld_u32le(h + 88), m, d, why, whylen);
		if (r != RC_OK)
			return r;
	} else {
		return rc_fail(why, whylen, RC_CORRUPT, "pixel format flags 0x%X name no format",
			       pf_flags);
	}
	r = shape(h, dx10, d, why, whylen);
	return r == RC_OK ? sizes(s, h, max_side, d, why, whylen) : r;
}

enum rc dds_read_units(const struct src *s, const struct dds_read_info *d, uint32_t face,
		       uint32_t level, uint32_t row0, uint32_t n, uint8_t *out)
{
	uint64_t rb;

	if (face >= d->faces || level >= d->mips || row0 > dds_read_level_rows(d, level) ||
	    n > dds_read_level_rows(d, level) - row0)
		return RC_INVAL;
	rb = dds_read_row_bytes(d, level);
	return src_read(s, dds_read_level_off(d, face, level) + row0 * rb, out, (size_t)(n * rb));
}

/* A masked field scaled to 8 bits (0 when the mask is empty). */
static uint8_t field(uint32_t v, uint32_t mask)
{
	uint32_t shift = 0, max;

	if (!mask)
		return 0;
	while (!(mask >> shift & 1))
		shift++;
	max = mask >> shift;
	return (uint8_t)(((uint64_t)((v & mask) >> shift) * 255 + max / 2) / max);
}

static void mask_rgba(const struct dds_read_info *d, const uint8_t *p, uint8_t *o)
{
	uint32_t v = 0;

	for (uint32_t i = 0; i < d->unit_bytes; i++)
		v |= (uint32_t)p[i] << (8 * i);
	o[0] = field(v, d->mask[0]);
	o[1] = d->luminance ? o[0] : field(v, d->mask[1]);
	o[2] = d->luminance ? o[0] : field(v, d->mask[2]);
	o[3] = d->mask[3] ? field(v, d->mask[3]) : 255;
}

enum rc dds_read_rgba(const struct src *s, const struct dds_read_info *d, uint32_t face,
		      uint32_t level, uint32_t row0, uint32_t n, uint8_t *tmp, uint8_t *rgba)
{
	uint32_t w = tex_dim(d->width, level);
	enum rc r = dds_read_units(s, d, face, level, row0, n, tmp);

	if (r != RC_OK)
		return r;
	if (d->canonical) {
		tex_canon_rgba(d->kind, tmp, w, n, rgba);
		return RC_OK;
	}
	for (size_t i = 0, m = (size_t)w * n; i < m; i++)
		mask_rgba(d, tmp + i * d->unit_bytes, rgba + 4 * i);
	return RC_OK;
}
