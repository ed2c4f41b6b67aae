/*
 * PS3 (GCM) textures of a Skate 3 texture arena (../shared/spec/rw4-arena.md §7.5, §16.4-§16.6):
 * header decode, texel layout, loading into a canonical DDS-order image, DDS and PNG writers,
 * DXT decoding and the RSX swizzle.
 *
 * Layout rules (documented decisions, see texture.c for the reasons):
 * - DXT1/3/5 are block-linear and tightly packed per level (§16.5); the LN flag and the pitch
 *   field do not change that (a pitch that disagrees is reported in the text view only).
 * - Uncompressed without LN (0x20) are swizzled per level (RSX Z-order: x bit, then y bit,
 *   from bit 0 up; the larger dimension's extra bits on top). Swizzling needs power-of-two
 *   sizes: a non-power-of-two texture without LN is a problem line and is read as linear,
 *   tightly packed.
 * - Uncompressed with LN use the header pitch as the row stride of every level (RSX has one
 *   pitch register); pitch 0 means tightly packed rows.
 * - Cube maps: six faces, each a full mip chain, at a stride of align(faceBytes, 0x80); the
 *   last face is not padded (§16.4). The UN flag (unnormalized coordinates) changes nothing.
 * - Texels are big-endian words on PS3; the canonical image holds them in the little-endian
 *   DDS layout. Formats most DDS readers cannot take are widened losslessly: G8B8, R6G5B5 and
 *   D8R8G8B8 become X8R8G8B8, R5G5B5A1 and D1R5G5B5 become A1R5G5B5.
 * - A base resource smaller than the layout is an error (RC_CORRUPT); a larger one is a
 *   problem line and the extra bytes are ignored.
 */
#ifndef PSGFS_TEXTURE_H
#define PSGFS_TEXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/arena.h"
#include "psgfs/buf.h"
#include "psgfs/diag.h"
#include "psgfs/result.h"
#include "psgfs/source.h"

#define PS3_TEXTURE_SIZE 40u
#define GCM_TEX_LN	 0x20u /* linear (pitch) layout */
#define GCM_TEX_UN	 0x40u /* unnormalized coordinates */

/* GCM base formats (format byte without LN/UN). */
#define GCM_TEX_B8	 0x81u
#define GCM_TEX_A1R5G5B5 0x82u
#define GCM_TEX_A4R4G4B4 0x83u
#define GCM_TEX_R5G6B5	 0x84u
#define GCM_TEX_A8R8G8B8 0x85u
#define GCM_TEX_DXT1	 0x86u
#define GCM_TEX_DXT3	 0x87u
#define GCM_TEX_DXT5	 0x88u
#define GCM_TEX_G8B8	 0x8Bu
#define GCM_TEX_R6G5B5	 0x8Fu
#define GCM_TEX_R5G5B5A1 0x97u
#define GCM_TEX_D1R5G5B5 0x9Du
#define GCM_TEX_D8R8G8B8 0x9Eu

#define TEX_STORE_2D   2u
#define TEX_STORE_CUBE 0x10002u
#define TEX_MAX_MIPS   16u

/* The 40-byte Texture object (§7.5), decoded. */
struct ps3_texture {
	uint8_t format;	     /* as stored, incl. LN/UN */
	uint8_t base_format; /* format & ~(LN|UN) */
	bool linear;	     /* LN */
	bool unnormalized;   /* UN */
	uint8_t mipmap, dimension, cubemap;
	uint32_t remap;
	uint16_t width, height, depth;
	uint8_t location, padding;
	uint32_t pitch, offset;
	uint32_t m_buffer; /* stored reference (dictionary index) */
	uint32_t store_type, store_flags;
	uint16_t unknown_24; /* 0x5572 */
	uint8_t unknown_26;  /* 0 */
	uint8_t format_copy;
};

/* Decode the fixed 40 bytes; RC_TRUNCATED when len < 40. No validation. */
enum rc ps3_texture_decode(const uint8_t *obj, size_t len, bool big_endian,
			   struct ps3_texture *out);

/* GCM name of a base format ("DXT1", "A8R8G8B8", ...) or NULL when unknown. */
const char *gcm_format_name(uint8_t base_format);
/* True when texture_load converts this base format. */
bool gcm_format_supported(uint8_t base_format);

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
};

/* Decoded texture: all faces x all mips, tightly packed in DDS order (face-major). */
struct texture_image {
	struct ps3_texture hdr;
	uint32_t index; /* dictionary index of the Texture */
	enum tex_kind kind;
	uint32_t width, height, mips, faces;
	uint8_t *data;
	size_t size;
};

/* Source texel layout of a texture, checked for overflow. */
struct tex_layout {
	uint32_t mips, faces;
	bool compressed, swizzled;
	uint32_t bpp;	      /* source bytes per texel, or per 4x4 block when compressed */
	uint32_t row_pitch;   /* linear uncompressed: stride of every level; 0 = tight rows */
	uint64_t face_bytes;  /* one face, all mips, as stored */
	uint64_t face_stride; /* align(face_bytes, 0x80) for cube maps */
	uint64_t total;	      /* bytes needed after hdr.offset */
	uint64_t out_bytes;   /* canonical image size */
};

/*
 * Validate a decoded header and compute its layout. RC_UNSUPPORTED for an unknown or
 * unconverted format or a 1D/3D texture, RC_CORRUPT for zero sizes or too many mips.
 * why (optional) receives one line explaining a failure or a non-fatal oddity ("" if none).
 */
enum rc tex_layout_get(const struct ps3_texture *t, struct tex_layout *l, char *why, size_t whylen);

/*
 * Load Texture object tex_idx: resolve m_buffer to its base resource, check the size, read and
 * convert to the canonical form. Problems go to diag as "object N (Texture): ...".
 */
enum rc texture_load(const struct src *s, const struct arena *a, uint32_t tex_idx,
		     struct texture_image **out, struct diag *diag);
void texture_image_free(struct texture_image *t);
/*
 * Every check texture_load makes (same result, same diag lines) without reading or converting
 * texels; *dds_size (optional) = exact size of the .dds texture_dds would write.
 */
enum rc texture_check(const struct src *s, const struct arena *a, uint32_t tex_idx,
		      uint64_t *dds_size, struct diag *diag);
/* Byte size of the canonical payload (the DDS file minus its 128-byte header). */
size_t texture_image_bytes(const struct texture_image *t);

/* Offset and size inside t->data of (face, level); false when out of range. */
bool texture_level(const struct texture_image *t, uint32_t face, uint32_t level, size_t *off,
		   size_t *len, uint32_t *w, uint32_t *h);

/* DDS file: 128-byte header + payload. */
#define DDS_HEADER_BYTES 128u
enum rc texture_dds(const struct texture_image *t, struct buf *out);
uint64_t texture_dds_size(const struct texture_image *t);

/* RGBA8 pixels of (face 0, level 0), w*h*4 bytes, malloc'd. */
enum rc texture_rgba(const struct texture_image *t, uint8_t **rgba, uint32_t *w, uint32_t *h);
/* True when the format can carry alpha (PNG is RGBA then, RGB otherwise). */
bool texture_has_alpha(const struct texture_image *t);
/* PNG of face 0, level 0; deterministic bytes. */
enum rc texture_png(const struct texture_image *t, struct buf *out);

/* RGBA8 (alpha true) or RGB8 (the alpha bytes are dropped) to PNG via libpng, compression 6,
 * no time or text chunks. rgba is w*h*4 bytes either way. */
enum rc pngw_encode_rgba(const uint8_t *rgba, uint32_t w, uint32_t h, bool alpha, struct buf *out);

/* DXT block decoders: 16 pixels RGBA8, row-major, into out[64]. dxt1_block: a colour block;
 * four_colour forces the 4-colour mode (DXT3/5 colour blocks). */
void dxt1_block(const uint8_t blk[8], bool four_colour, uint8_t out[64]);
void dxt3_block(const uint8_t blk[16], uint8_t out[64]);
void dxt5_block(const uint8_t blk[16], uint8_t out[64]);
/* Decode a w x h DXT image (kind TEXK_DXT1/3/5) from packed blocks into w*h*4 RGBA. */
void dxt_decode_image(enum tex_kind kind, const uint8_t *blocks, uint32_t w, uint32_t h,
		      uint8_t *rgba);

/* RSX swizzle: texel index of (x, y) in a 2^lw x 2^lh swizzled level. */
uint32_t gcm_swizzle_index(uint32_t x, uint32_t y, unsigned lw, unsigned lh);
/* Copy a 2^lw x 2^lh level of bpp-byte texels between swizzled and linear order. */
void gcm_unswizzle(const uint8_t *src, uint8_t *dst, unsigned lw, unsigned lh, uint32_t bpp);
void gcm_swizzle(const uint8_t *src, uint8_t *dst, unsigned lw, unsigned lh, uint32_t bpp);

/*
 * File stems for textures/: names[i] for every dictionary row i (n_dict entries); non-NULL
 * only for Texture rows. A Texture named by a TableOfContents entry (entries scanned
 * linearly, m_pObject resolved, type map ignored) gets that name without a ".Texture" suffix,
 * sanitised by name_component; otherwise "NNNN.Texture". Duplicates get ".NNNN" appended.
 * Free with texture_names_free.
 */
enum rc texture_names(const struct src *s, const struct arena *a, char ***names, struct diag *diag);
void texture_names_free(char **names, uint32_t n);

/* --- text renderers (src/tree/psg_text_texture.c) --- */

/*
 * Decoded view of Texture object idx: every field by name, the format name, the m_buffer
 * reference as "-> NNNN.BaseResource", expected vs actual base resource size and problems.
 * RC_UNSUPPORTED for non-Texture rows, RC_BOUNDS for a bad index or unreadable
 * object, RC_CORRUPT when shorter than 40 bytes.
 */
enum rc texture_object_text(const struct src *s, const struct arena *a, uint32_t idx,
			    struct buf *out);
/* One info.txt line "name format WxH mips cube|2d\n", e.g. "0x2c7f... DXT5 512x512 10 2d". */
enum rc texture_info_line(const struct src *s, const struct arena *a, uint32_t idx,
			  const char *name, struct buf *out);

#endif
