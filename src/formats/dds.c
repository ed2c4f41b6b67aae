/*
 * DDS writer for the canonical texture image: the classic 124-byte DDS_HEADER (no DX10
 * extension), so every DDS reader (ImageMagick, GIMP, paint.net, mod tools) opens it.
 * Compressed: DDPF_FOURCC DXT1/DXT3/DXT5 and a linear size; uncompressed: DDPF_RGB (with
 * ALPHAPIXELS) or DDPF_LUMINANCE bit masks and a pitch.
 */
#include "psgfs/texture.h"

#define DDSD_CAPS		  0x1u
#define DDSD_HEIGHT		  0x2u
#define DDSD_WIDTH		  0x4u
#define DDSD_PITCH		  0x8u
#define DDSD_PIXELFORMAT	  0x1000u
#define DDSD_MIPMAPCOUNT	  0x20000u
#define DDSD_LINEARSIZE		  0x80000u
#define DDPF_ALPHAPIXELS	  0x1u
#define DDPF_FOURCC		  0x4u
#define DDPF_RGB		  0x40u
#define DDPF_LUMINANCE		  0x20000u
#define DDSCAPS_COMPLEX		  0x8u
#define DDSCAPS_TEXTURE		  0x1000u
#define DDSCAPS_MIPMAP		  0x400000u
#define DDSCAPS2_CUBEMAP	  0x200u
#define DDSCAPS2_CUBEMAP_ALLFACES 0xFC00u

struct dds_pf {
	uint32_t flags, fourcc, bits, r, g, b, a;
};

static struct dds_pf dds_pixel_format(enum tex_kind k)
{
	switch (k) {
	case TEXK_DXT1:
		return (struct dds_pf){DDPF_FOURCC, 0x31545844u /* "DXT1" */, 0, 0, 0, 0, 0};
	case TEXK_DXT3:
		return (struct dds_pf){DDPF_FOURCC, 0x33545844u, 0, 0, 0, 0, 0};
	case TEXK_DXT5:
		return (struct dds_pf){DDPF_FOURCC, 0x35545844u, 0, 0, 0, 0, 0};
	case TEXK_BGRA8:
		return (struct dds_pf){DDPF_RGB | DDPF_ALPHAPIXELS,
				       0,
				       32,
				       0x00FF0000u,
				       0x0000FF00u,
				       0x000000FFu,
				       0xFF000000u};
	case TEXK_BGRX8:
		return (struct dds_pf){DDPF_RGB, 0, 32, 0x00FF0000u, 0x0000FF00u, 0x000000FFu, 0};
	case TEXK_R5G6B5:
		return (struct dds_pf){DDPF_RGB, 0, 16, 0xF800u, 0x07E0u, 0x001Fu, 0};
	case TEXK_A1R5G5B5:
		return (struct dds_pf){
		    DDPF_RGB | DDPF_ALPHAPIXELS, 0, 16, 0x7C00u, 0x03E0u, 0x001Fu, 0x8000u};
	case TEXK_A4R4G4B4:
		return (struct dds_pf){
		    DDPF_RGB | DDPF_ALPHAPIXELS, 0, 16, 0x0F00u, 0x00F0u, 0x000Fu, 0xF000u};
	case TEXK_L8:
	default:
		return (struct dds_pf){DDPF_LUMINANCE, 0, 8, 0xFFu, 0, 0, 0};
	}
}

uint64_t texture_dds_size(const struct texture_image *t)
{
	return t ? DDS_HEADER_BYTES + (uint64_t)t->size : 0;
}

enum rc texture_dds(const struct texture_image *t, struct buf *out)
{
	struct dds_pf pf;
	bool comp;
	uint32_t flags, caps, caps2 = 0, pitch;

	if (!t || !t->data || t->mips == 0 || (t->faces != 1 && t->faces != 6))
		return RC_INVAL;
	pf = dds_pixel_format(t->kind);
	comp = (pf.flags & DDPF_FOURCC) != 0;
	flags = DDSD_CAPS | DDSD_HEIGHT | DDSD_WIDTH | DDSD_PIXELFORMAT |
		(comp ? DDSD_LINEARSIZE : DDSD_PITCH);
	caps = DDSCAPS_TEXTURE;
	if (t->mips > 1) {
		flags |= DDSD_MIPMAPCOUNT;
		caps |= DDSCAPS_COMPLEX | DDSCAPS_MIPMAP;
	}
	if (t->faces == 6) {
		caps |= DDSCAPS_COMPLEX;
		caps2 = DDSCAPS2_CUBEMAP | DDSCAPS2_CUBEMAP_ALLFACES;
	}
	if (comp)
		pitch = ((t->width + 3) / 4) * ((t->height + 3) / 4) *
			(t->kind == TEXK_DXT1 ? 8u : 16u);
	else
		pitch = t->width * (pf.bits / 8);

	buf_put(out, "DDS ", 4);
	buf_u32le(out, 124);
	buf_u32le(out, flags);
	buf_u32le(out, t->height);
	buf_u32le(out, t->width);
	buf_u32le(out, pitch);
	buf_u32le(out, 0); /* depth */
	buf_u32le(out, t->mips);
	buf_zero(out, 11 * 4);
	buf_u32le(out, 32);
	buf_u32le(out, pf.flags);
	buf_u32le(out, pf.fourcc);
	buf_u32le(out, pf.bits);
	buf_u32le(out, pf.r);
	buf_u32le(out, pf.g);
	buf_u32le(out, pf.b);
	buf_u32le(out, pf.a);
	buf_u32le(out, caps);
	buf_u32le(out, caps2);
	buf_zero(out, 3 * 4); /* caps3, caps4, reserved2 */
	buf_put(out, t->data, t->size);
	if (out->oom)
		return RC_NOMEM;
	return RC_OK;
}
