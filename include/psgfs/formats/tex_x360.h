/*
 * Xbox 360 (Xenos) textures of an `xb2` texture arena (.rx2): the 0x34-byte Texture object
 * (D3DBaseTexture header, then the six-dword GPU texture fetch constant at +0x1C), its texel
 * layout inside the base resource (tiled 32x32-unit macro tiles, 4 KiB-aligned subresources,
 * packed mip tail) and conversion to the canonical little-endian DDS order texture.c produces
 * for PS3, so an Xbox 360 texture and its PS3 twin give the same bytes.
 *
 * Sources (read, not copied): Xenia, xenia-project/xenia, src/xenia/gpu/xenos.h (field layout
 * of xe_gpu_texture_fetch_t, TextureFormat, Endian, DataDimension, swizzle codes),
 * texture_address.h (Tiled2D), texture_util.cc/.h (GetPackedMipLevel, GetPackedMipOffset,
 * GetGuestTextureLayout: strides, 4 KiB alignment, power-of-two mip storage). The packed-base
 * rule and the real fetch constants are from real .rx2 files with PS3 twins (docs/xbox360.md,
 * "Worked example: 16×16 DXT1" and "Texture fetch constant").
 *
 * Layout rules (docs/xbox360.md, "Tiling", "Mip levels in memory", "Packed mip tail",
 * "Byte swap"):
 * - A "unit" is a 4x4 block for DXT1/DXT2_3/DXT4_5/DXN and a texel otherwise.
 * - The base level is stored at offset 0 of the base resource with the fetch constant's
 *   pitch; every mip level L >= 1 has its own storage of max(next_pow2(W) >> L, 1) x
 *   max(next_pow2(H) >> L, 1) texels rounded up to 32x32 units, placed one after another
 *   from mip_offset = (base storage) x faces. Each storage is 4 KiB aligned; the faces of a
 *   cube map follow each other inside each storage.
 * - With packed mips, levels whose smaller side is 16 texels or less share the storage of
 *   the first of them (the mip tail) at the unit offsets Xenia's GetPackedMipOffset gives.
 *   When the base level itself is in the tail, every level is read from the base storage
 *   (real files hold one tile there; the mip address field is not used).
 * - Texels are 16/32-bit words swapped by the endian field (8in16, 8in32, 16in32), applied
 *   to the memory bytes before untiling. Compressed blocks are then copied as they are
 *   (the swizzle field is not applied to them); 8_8_8_8, 5_6_5 and 8 go through the
 *   swizzle field into B8G8R8A8/X8, R5G6B5 and L8.
 */
#ifndef PSGFS_TEX_X360_H
#define PSGFS_TEX_X360_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/tex_kind.h"

#define X360TEX_OBJECT_SIZE    0x34u
#define X360TEX_FETCH_OFFSET   0x1Cu
#define X360TEX_COMMON_TEXTURE 3u  /* D3D resource type in the low bits of word 0 */
#define X360TEX_MAX_LEVELS     14u /* 8192 texels down to 1 */

/* Xenos texture formats (dword 1 bits 0-5) this module converts. */
#define X360TEX_FMT_8	    0x02u
#define X360TEX_FMT_5_6_5   0x04u
#define X360TEX_FMT_8_8_8_8 0x06u
#define X360TEX_FMT_DXT1    0x12u
#define X360TEX_FMT_DXT2_3  0x13u
#define X360TEX_FMT_DXT4_5  0x14u
#define X360TEX_FMT_DXN	    0x31u

enum tex_x360_endian { X360TEX_END_NONE, X360TEX_END_8IN16, X360TEX_END_8IN32, X360TEX_END_16IN32 };
enum tex_x360_dim { X360TEX_DIM_1D, X360TEX_DIM_2D, X360TEX_DIM_3D, X360TEX_DIM_CUBE };

/* Swizzle selector values (3 bits per output channel r, g, b, a). */
#define X360TEX_SWZ_X		    0u
#define X360TEX_SWZ_Y		    1u
#define X360TEX_SWZ_Z		    2u
#define X360TEX_SWZ_W		    3u
#define X360TEX_SWZ_0		    4u
#define X360TEX_SWZ_1		    5u
#define X360TEX_SWIZZLE(r, g, b, a) ((r) | (g) << 3 | (b) << 6 | (a) << 9)

/* The texture fetch constant, every field (bit positions as in Xenia's xenos.h). */
struct tex_x360_fetch {
	uint32_t dw[6]; /* as stored (big-endian words, host order here) */
	/* dword 0 */
	uint8_t type; /* 2 = texture */
	uint8_t sign[4];
	uint8_t clamp[3];
	uint16_t pitch; /* base row pitch in texels >> 5 */
	bool tiled;
	/* dword 1 */
	uint8_t format, endian, request_size;
	bool stacked, nearest_clamp_policy;
	uint32_t base_address; /* >> 12 */
	/* dword 2, decoded per dimension (stored values are size - 1) */
	uint32_t width, height, depth;
	uint8_t stack_depth; /* 2D/cube: bits 26-31 as stored */
	/* dword 3 */
	uint8_t num_format;
	uint16_t swizzle;
	int8_t exp_adjust;
	uint8_t mag_filter, min_filter, mip_filter, aniso_filter, arbitrary_filter, border_size;
	/* dword 4 */
	uint8_t vol_mag_filter, vol_min_filter, mip_min_level, mip_max_level;
	uint8_t mag_aniso_walk, min_aniso_walk;
	int16_t lod_bias; /* 5 fractional bits */
	int8_t grad_exp_adjust_h, grad_exp_adjust_v;
	/* dword 5 */
	uint8_t border_color, force_bc_w_to_max, tri_clamp;
	int8_t aniso_bias;
	uint8_t dimension;
	bool packed_mips;
	uint32_t mip_address; /* >> 12 */
};

/* Split six dwords into fields. Never fails: every bit pattern decodes. */
void tex_x360_fetch_decode(const uint32_t dw[6], struct tex_x360_fetch *f);
/* Pack the fields back (the dw member is ignored); decode(encode(f)) == f for in-range
 * fields. width/height/depth are the real sizes (1..), stored minus one. */
void tex_x360_fetch_encode(const struct tex_x360_fetch *f, uint32_t dw[6]);

/* The 0x34-byte Texture object: D3DResource + MipFlush, then the fetch constant. */
struct tex_x360_object {
	uint32_t common, ref_count, fence, read_fence, identifier, base_flush, mip_flush;
	struct tex_x360_fetch fetch;
};
/* RC_TRUNCATED when len < 0x34 (longer objects: the rest is ignored). */
enum rc tex_x360_object_decode(const uint8_t *obj, size_t len, struct tex_x360_object *out);
/* The one reader of an Xbox 360 Texture object: row idx of a, its first 0x34 bytes decoded.
 * RC_BOUNDS when there is no such row or it lies outside the file, RC_UNSUPPORTED for another
 * type, RC_TRUNCATED when the object is shorter than 0x34 bytes, else the read's error. */
enum rc tex_x360_read_object(const struct src *s, const struct arena *a, uint32_t idx,
			     struct tex_x360_object *o);
/* Big-endian bytes of o (the fetch constant from its fields). */
void tex_x360_object_encode(const struct tex_x360_object *o, uint8_t out[X360TEX_OBJECT_SIZE]);

/* Xenos name of any format code 0..63 ("DXT1", "8_8_8_8", "DXN", ...); NULL above 63. */
const char *tex_x360_format_name(uint8_t fmt);

/* Canonical (little-endian DDS order) form of a level. */
enum tex_x360_canon {
	X360TEX_C_DXT1,
	X360TEX_C_DXT3,
	X360TEX_C_DXT5,
	X360TEX_C_DXN,	 /* BC5 / "ATI2": two BC4 blocks, red then green */
	X360TEX_C_BGRA8, /* bytes B G R A */
	X360TEX_C_BGRX8, /* bytes B G R 0xFF (alpha swizzled to constant 1) */
	X360TEX_C_R5G6B5,
	X360TEX_C_L8,
};
/* The canonical kind (include/psgfs/formats/tex_kind.h) with the same bytes. */
bool tex_x360_canon_kind(enum tex_x360_canon c, enum tex_kind *k);

/* Where one (level) lives: the same for every face except face * face_stride. */
struct tex_x360_level {
	uint32_t width, height;	   /* texels */
	uint32_t units_w, units_h; /* units of the level */
	uint64_t canon_bytes;	   /* units_w * units_h * unit_bytes */
	uint64_t canon_offset;	   /* inside one face of the canonical image */
	uint64_t storage;	   /* offset of the storage holding it (face 0) */
	uint64_t face_stride;	   /* distance between faces of that storage */
	uint32_t pitch_units;	   /* storage row pitch in units (multiple of 32) */
	uint32_t height_units;	   /* storage height in units (multiple of 32) */
	uint32_t row_bytes;	   /* linear storage: bytes per unit row */
	uint32_t x_off, y_off;	   /* unit offset inside the storage (mip tail) */
	bool packed;		   /* in the mip tail */
};

struct tex_x360_layout {
	uint8_t format;
	enum tex_x360_canon canon;
	uint32_t unit_bytes, block; /* block = texels per unit side (4 or 1) */
	uint32_t width, height, faces, levels;
	bool tiled;
	uint8_t endian;
	uint8_t swz[4];	       /* r, g, b, a selectors (uncompressed conversion) */
	uint32_t packed_level; /* first level in the mip tail, UINT32_MAX without one */
	bool base_packed;      /* packed_level == 0 */
	uint64_t mip_offset;   /* start of the mip storages = base storage x faces */
	uint64_t need;	       /* base-resource bytes the reads touch */
	uint64_t full;	       /* every storage with its padding (what a writer emits) */
	uint64_t face_bytes;   /* canonical bytes of one face, all levels */
	uint64_t canon_bytes;  /* canonical bytes, all faces */
	struct tex_x360_level lv[X360TEX_MAX_LEVELS];
};

/*
 * Validate a fetch constant and compute the layout. RC_UNSUPPORTED: format not converted,
 * 1D/3D/stacked texture, swizzle the canonical form cannot express. RC_CORRUPT: mip levels
 * past the size, pitch smaller than the data. why (optional) gets one line for a failure or
 * for non-fatal oddities ("" if none).
 */
enum rc tex_x360_layout_get(const struct tex_x360_fetch *f, struct tex_x360_layout *l, char *why,
			    size_t whylen);

/*
 * Decode object bytes, compute the layout and check it against the base resource size:
 * RC_CORRUPT when res_size < l->need. Problems are diag lines "object N (Texture): ..."
 * (index = dictionary row); a resource longer than l->full is a line, not an error.
 */
enum rc tex_x360_prepare(const uint8_t *obj, size_t len, uint64_t res_size, uint32_t index,
			 struct tex_x360_object *o, struct tex_x360_layout *l, struct diag *diag);

/* Reads n bytes at off, relative to the base resource start. */
typedef enum rc (*tex_x360_read_fn)(void *ctx, uint64_t off, void *dst, size_t n);

/*
 * Canonical bytes of unit rows [row0, row0 + n) of (face, level) into dst
 * (n * units_w * unit_bytes bytes). Reads only the 32-row bands of tiles those rows touch,
 * one band at a time (at most one band of the storage's width is held). RC_INVAL for a bad
 * face, level or row range; read errors are passed on.
 */
enum rc tex_x360_read_rows(const struct tex_x360_layout *l, uint32_t face, uint32_t level,
			   uint32_t row0, uint32_t n, tex_x360_read_fn read, void *ctx,
			   uint8_t *dst);
/* A whole level (lv[level].canon_bytes into dst). */
enum rc tex_x360_read_level(const struct tex_x360_layout *l, uint32_t face, uint32_t level,
			    tex_x360_read_fn read, void *ctx, uint8_t *dst);
/*
 * Inverse, for writers: store the canonical level `canon` into the base resource image res
 * (res_len >= l->need; a new resource is l->full bytes, zero-filled by the caller), tiled and
 * swapped. RC_INVAL when a unit falls outside res. Uncompressed formats need an invertible
 * swizzle (every channel a distinct component, or L8 from X).
 */
enum rc tex_x360_write_level(const struct tex_x360_layout *l, uint32_t face, uint32_t level,
			     const uint8_t *canon, uint8_t *res, size_t res_len);
/* The same for unit rows [row0, row0 + n) of a level (n * units_w * unit_bytes canonical
 * bytes): a level can be written band by band. Bytes no unit maps to are left alone. */
enum rc tex_x360_write_rows(const struct tex_x360_layout *l, uint32_t face, uint32_t level,
			    uint32_t row0, uint32_t n, const uint8_t *canon, uint8_t *res,
			    size_t res_len);

/* The endian mode and swizzle the Direct3D format of each Xenos format uses (A8R8G8B8,
 * R5G6B5, L8, DXN, DXT), as the real files and Xenia have them. */
void tex_x360_format_words(uint8_t fmt, uint8_t *endian, uint16_t *swizzle);
/*
 * Set the shape fields of f for a tiled, packed-mip 2D or cube texture of format fmt, w x h
 * texels, `levels` levels, as Skate's files lay them out (docs/xbox360.md, "Texture fetch
 * constant"): type, tiled, format, size, dimension, pitch, mip levels, packed mips and the mip
 * address from the layout, which *l receives. Endian and swizzle are left as they are (see
 * tex_x360_format_words); every other field too. RC_INVAL for an unconverted format or a size
 * outside 1..8192 and 1..14 levels.
 */
enum rc tex_x360_fetch_shape(struct tex_x360_fetch *f, uint8_t fmt, uint32_t w, uint32_t h,
			     uint32_t levels, bool cube, struct tex_x360_layout *l);
/* The Xenos format a canonical kind is stored in when a texture changes format (8_8_8_8 for
 * BGRA8 and BGRX8, the latter with alpha swizzled to 1); 0 for A1R5G5B5 and A4R4G4B4, which
 * this module does not convert. */
uint8_t tex_x360_format_for_kind(enum tex_kind k);

/* Byte offset of unit (x, y) inside a tiled 2D storage of pitch_units (multiple of 32). */
uint32_t tex_x360_tiled_offset(uint32_t x, uint32_t y, uint32_t pitch_units, uint32_t bpb_log2);
/* Mip-tail offset of level `level` of a w x h texture in texels (GetPackedMipOffset, 2D);
 * false when the level is not in the tail. */
bool tex_x360_packed_offset(uint32_t w, uint32_t h, uint32_t level, uint32_t *x, uint32_t *y);
/* First level in the mip tail (GetPackedMipLevel). */
uint32_t tex_x360_packed_level(uint32_t w, uint32_t h);

#endif
