/*
 * The canonical texel layouts every texture is converted to (tex_kind.h): their names, sizes
 * and the arithmetic all platforms share (docs/skate-objects.md, "Texel layout").
 */
#include "psgfs/formats/tex_kind.h"

uint32_t tex_kind_bpp(enum tex_kind k)
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

const char *tex_kind_name(enum tex_kind k)
{
	static const char *const n[] = {"DXT1",	  "DXT3",     "DXT5",	  "A8R8G8B8", "X8R8G8B8",
					"R5G6B5", "A1R5G5B5", "A4R4G4B4", "L8",	      "ATI2"};

	return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

bool tex_kind_compressed(enum tex_kind k)
{
	return k == TEXK_DXT1 || k == TEXK_DXT3 || k == TEXK_DXT5 || k == TEXK_ATI2;
}

uint32_t tex_dim(uint32_t x, uint32_t level)
{
	x >>= level;
	return x ? x : 1;
}

uint8_t tex_x5(uint32_t v)
{
	return (uint8_t)(v << 3 | v >> 2);
}

uint8_t tex_x6(uint32_t v)
{
	return (uint8_t)(v << 2 | v >> 4);
}
