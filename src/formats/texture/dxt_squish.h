/*
 * The block encoder: libsquish (Simon Brown's DXT compression library, packaged by Debian as
 * libsquish-dev) behind a C function, because its interface is C++. Used by tex_encode.c only.
 */
#ifndef PSGFS_DXT_SQUISH_H
#define PSGFS_DXT_SQUISH_H

#ifdef __cplusplus
extern "C" {
#endif

enum dxt_squish_kind { DXT_SQUISH_DXT1, DXT_SQUISH_DXT3, DXT_SQUISH_DXT5, DXT_SQUISH_BC5 };

/*
 * Encode 16 RGBA8 pixels (row-major 4x4) into one block (8 bytes for DXT1, 16 otherwise).
 * mask: bit i set when pixel i is inside the picture (edge blocks of sizes that are not
 * multiples of 4); the others are ignored. DXT1 uses its 3-colour mode with a transparent
 * index where a pixel's alpha is below 128; BC5 takes red and green.
 */
void dxt_squish_block(const unsigned char rgba[64], int mask, void *block,
		      enum dxt_squish_kind kind);

#ifdef __cplusplus
}
#endif

#endif
