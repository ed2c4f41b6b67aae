/* Canonical texel layouts every texture is converted to (DDS order, little-endian). */
#ifndef PSGFS_TEX_KIND_H
#define PSGFS_TEX_KIND_H

#include <stdbool.h>
#include <stdint.h>

/* Pixel layout of the canonical image / DDS payload. */
enum tex_kind {
	TEXK_DXT1,
	TEXK_DXT3,
	TEXK_DXT5,
	TEXK_BGRA8,  /* A8R8G8B8, bytes B G R A */
	TEXK_BGRX8,  /* X8R8G8B8, bytes B G R X (X = 0xFF) */
	TEXK_R5G6B5, /* little-endian u16 */
	TEXK_A1R5G5B5,
	TEXK_A4R4G4B4,
	TEXK_L8,
	TEXK_ATI2, /* DXN: two BC4 blocks (red, green) per 4x4 block */
};

/* The DDS name of a kind ("DXT1", "A8R8G8B8", ...), "?" when out of range. */
const char *tex_kind_name(enum tex_kind k);
/* Bytes per texel, or per 4x4 block for the compressed kinds. */
uint32_t tex_kind_bpp(enum tex_kind k);
/* A block-compressed kind (DXT1, DXT3, DXT5, ATI2). */
bool tex_kind_compressed(enum tex_kind k);
/* max(1, x >> level) */
uint32_t tex_dim(uint32_t x, uint32_t level);
/* 5- and 6-bit channels widened to 8 bits. */
uint8_t tex_x5(uint32_t v);
uint8_t tex_x6(uint32_t v);

#endif
