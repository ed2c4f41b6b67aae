/* DXT1/3/5 (BC1/2/3) block decoding to RGBA8, as D3D defines it. */
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/texture.h"

static void rgb565(uint16_t c, uint8_t out[3])
{
	uint8_t r = (uint8_t)(c >> 11 & 31), g = (uint8_t)(c >> 5 & 63), b = (uint8_t)(c & 31);

	out[0] = (uint8_t)(r << 3 | r >> 2);
	out[1] = (uint8_t)(g << 2 | g >> 4);
	out[2] = (uint8_t)(b << 3 | b >> 2);
}

void dxt1_block(const uint8_t blk[8], bool four_colour, uint8_t out[64])
{
	uint16_t c0 = ld_u16le(blk), c1 = ld_u16le(blk + 2);
	uint32_t bits = ld_u32le(blk + 4);
	uint8_t pal[4][4];

	rgb565(c0, pal[0]);
	rgb565(c1, pal[1]);
	pal[0][3] = pal[1][3] = pal[2][3] = pal[3][3] = 255;
	if (four_colour || c0 > c1) {
		for (int k = 0; k < 3; k++) {
			pal[2][k] = (uint8_t)((2 * pal[0][k] + pal[1][k]) / 3);
			pal[3][k] = (uint8_t)((pal[0][k] + 2 * pal[1][k]) / 3);
		}
	} else {
		/* 3-colour mode: index 3 is transparent black */
		for (int k = 0; k < 3; k++) {
			pal[2][k] = (uint8_t)((pal[0][k] + pal[1][k]) / 2);
			pal[3][k] = 0;
		}
		pal[3][3] = 0;
	}
	for (int i = 0; i < 16; i++)
		memcpy(out + 4 * i, pal[bits >> (2 * i) & 3], 4);
}

void dxt3_block(const uint8_t blk[16], uint8_t out[64])
{
	dxt1_block(blk + 8, true, out);
	for (int i = 0; i < 16; i++) {
		uint8_t a = (uint8_t)(blk[i / 2] >> (4 * (i & 1)) & 15);
		out[4 * i + 3] = (uint8_t)(a * 17);
	}
}

/* A BC4 / DXT5-alpha block: 8 bytes of two endpoints and 3-bit indices, into out[4*i+c]. */
static void bc4_block(const uint8_t blk[8], uint8_t *out, int c)
{
	uint8_t a[8];
	uint64_t bits = 0;

	a[0] = blk[0];
	a[1] = blk[1];
	if (a[0] > a[1]) {
		for (int i = 1; i < 7; i++)
			a[i + 1] = (uint8_t)(((7 - i) * a[0] + i * a[1]) / 7);
	} else {
		for (int i = 1; i < 5; i++)
			a[i + 1] = (uint8_t)(((5 - i) * a[0] + i * a[1]) / 5);
		a[6] = 0;
		a[7] = 255;
	}
	for (int i = 0; i < 6; i++)
		bits |= (uint64_t)blk[2 + i] << (8 * i);
	for (int i = 0; i < 16; i++)
		out[4 * i + c] = a[bits >> (3 * i) & 7];
}

void dxt5_block(const uint8_t blk[16], uint8_t out[64])
{
	dxt1_block(blk + 8, true, out);
	bc4_block(blk, out, 3);
}

/* ATI2 / BC5 (DXN): red then green BC4 blocks; shown with blue 0 and opaque alpha. */
void ati2_block(const uint8_t blk[16], uint8_t out[64])
{
	for (int i = 0; i < 16; i++) {
		out[4 * i + 2] = 0;
		out[4 * i + 3] = 255;
	}
	bc4_block(blk, out, 0);
	bc4_block(blk + 8, out, 1);
}

void dxt_decode_image(enum tex_kind kind, const uint8_t *blocks, uint32_t w, uint32_t h,
		      uint8_t *rgba)
{
	uint32_t bw = w ? (w + 3) / 4 : 1, bh = h ? (h + 3) / 4 : 1;
	size_t bb = kind == TEXK_DXT1 ? 8 : 16;
	uint8_t px[64];

	for (uint32_t by = 0; by < bh; by++) {
		for (uint32_t bx = 0; bx < bw; bx++) {
			const uint8_t *blk = blocks + ((size_t)by * bw + bx) * bb;

			if (kind == TEXK_DXT1)
				dxt1_block(blk, false, px);
			else if (kind == TEXK_DXT3)
				dxt3_block(blk, px);
			else if (kind == TEXK_ATI2)
				ati2_block(blk, px);
			else
				dxt5_block(blk, px);
			for (uint32_t y = 0; y < 4; y++) {
				uint32_t yy = by * 4 + y;

				if (yy >= h)
					break;
				for (uint32_t x = 0; x < 4; x++) {
					uint32_t xx = bx * 4 + x;

					if (xx >= w)
						break;
					memcpy(rgba + ((size_t)yy * w + xx) * 4,
					       px + (y * 4 + x) * 4, 4);
				}
			}
		}
	}
}
