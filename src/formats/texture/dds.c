/*
 * DDS headers for the canonical texture levels, and those levels' geometry (unit rows, bytes
 * per row and per level): the classic 124-byte DDS_HEADER (no DX10
 * extension), so every DDS reader (ImageMagick, GIMP, paint.net, mod tools) opens it.
 * Compressed: DDPF_FOURCC DXT1/DXT3/DXT5 and a linear size; uncompressed: DDPF_RGB (with
 * ALPHAPIXELS) or DDPF_LUMINANCE bit masks and a pitch.
 */
#include "psgfs/formats/texture.h"

#define DDSD_CAPS	 0x1u
#define DDSD_HEIGHT	 0x2u
#define DDSD_WIDTH	 0x4u
#define DDSD_PITCH	 0x8u
#define DDSD_PIXELFORMAT 0x1000u
#define DDSD_MIPMAPCOUNT 0x20000u
#define DDSD_LINEARSIZE	 0x80000u
#define DDPF_ALPHAPIXELS 0x1u
#define DDPF_FOURCC	 0x4u
#define DDPF_RGB	 0x40u
#define DDPF_LUMINANCE	 0x20000u
#define DDSCAPS_COMPLEX	 0x8u
#define DDSCAPS_TEXTURE	 0x1000u
#define DDSCAPS_MIPMAP	 0x400000u
#define DDSCAPS2_CUBEMAP 0x200u

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
	case TEXK_ATI2:
		return (struct dds_pf){DDPF_FOURCC, 0x32495441u /* "ATI2" */, 0, 0, 0, 0, 0};
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

/* The canonical levels' geometry: DDS order, unit rows (block rows when compressed). Here, not
 * in texture.c, so the DDS header and the texture that serves its levels form layers. */
uint32_t tex_level_rows(const struct tex_desc *d, uint32_t level)
{
	uint32_t h = tex_dim(d->height, level);

	return tex_kind_compressed(d->kind) ? (h + 3) / 4 : h;
}

uint64_t tex_row_bytes(const struct tex_desc *d, uint32_t level)
{
	uint32_t w = tex_dim(d->width, level);

	return (uint64_t)(tex_kind_compressed(d->kind) ? (w + 3) / 4 : w) * tex_kind_bpp(d->kind);
}

uint64_t tex_level_bytes(const struct tex_desc *d, uint32_t level)
{
	return tex_row_bytes(d, level) * tex_level_rows(d, level);
}

uint64_t tex_dds_size(const struct tex_desc *d)
{
	uint64_t face = 0;

	for (uint32_t m = 0; m < d->have_mips; m++)
		face += tex_level_bytes(d, m);
	return DDS_HEADER_BYTES + face * d->have_faces;
}

/* Cube faces present, in DDS order: +X -X +Y -Y +Z -Z are bits 0x400 << i. */
static uint32_t cube_caps2(uint32_t faces)
{
	uint32_t c = DDSCAPS2_CUBEMAP;

	for (uint32_t i = 0; i < faces && i < 6; i++)
		c |= 0x400u << i;
	return c;
}

void tex_dds_header(const struct tex_desc *d, struct buf *out)
{
	struct dds_pf pf = dds_pixel_format(d->kind);
	bool comp = (pf.flags & DDPF_FOURCC) != 0, cube = d->faces == 6 && d->have_faces > 1;
	uint32_t flags, caps, caps2 = 0, pitch;

	flags = DDSD_CAPS | DDSD_HEIGHT | DDSD_WIDTH | DDSD_PIXELFORMAT |
		(comp ? DDSD_LINEARSIZE : DDSD_PITCH);
	caps = DDSCAPS_TEXTURE;
	if (d->have_mips > 1) {
		flags |= DDSD_MIPMAPCOUNT;
		caps |= DDSCAPS_COMPLEX | DDSCAPS_MIPMAP;
	}
	if (cube) {
		caps |= DDSCAPS_COMPLEX;
		caps2 = cube_caps2(d->have_faces);
	}
	pitch = comp ? (uint32_t)tex_level_bytes(d, 0) : (uint32_t)tex_row_bytes(d, 0);
	buf_put(out, "DDS ", 4);
	buf_u32le(out, 124);
	buf_u32le(out, flags);
	buf_u32le(out, d->height);
	buf_u32le(out, d->width);
	buf_u32le(out, pitch);
	buf_u32le(out, 0); /* depth */
	buf_u32le(out, d->have_mips);
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
}
