/*
 * Textures of a Skate 3 texture arena (docs/skate-objects.md, "Texture object", "Texel
 * layout", "Cube maps"; docs/xbox360.md for the Xbox 360 layout): header decode, texel
 * layout, canonical rows read on demand, DDS headers, pictures, DXT decoding, the RSX swizzle.
 *
 * Layout rules (documented decisions, see texture.c for the reasons):
 * - DXT1/3/5 are block-linear and tightly packed per level (docs/skate-objects.md, "Texel
 *   layout"); the LN flag and the pitch field do not change that (a pitch that disagrees is a
 *   problem line, and the texture still reads).
 * - Uncompressed without LN (0x20) are swizzled per level (RSX Z-order: x bit, then y bit,
 *   from bit 0 up; the larger dimension's extra bits on top). Swizzling needs power-of-two
 *   sizes: a non-power-of-two texture without LN is a problem line and is read as linear,
 *   tightly packed.
 * - Uncompressed with LN use the header pitch as the row stride of every level (RSX has one
 *   pitch register); pitch 0 means tightly packed rows.
 * - Cube maps: six faces, each a full mip chain, at a stride of align(faceBytes, 0x80); the
 *   last face is not padded (docs/skate-objects.md, "Cube maps"). The UN flag (unnormalized
 * coordinates) changes nothing.
 * - Texels are big-endian words on PS3; the canonical image holds them in the little-endian
 *   DDS layout. Formats most DDS readers cannot take are widened losslessly: G8B8, R6G5B5 and
 *   D8R8G8B8 become X8R8G8B8, R5G5B5A1 and D1R5G5B5 become A1R5G5B5.
 * - Short and long base resources: see struct tex_desc.
 */
#ifndef PSGFS_TEXTURE_H
#define PSGFS_TEXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/png.h"
#include "psgfs/formats/tex_kind.h"

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

/* The 40-byte Texture object (docs/skate-objects.md, "Texture object"), decoded. */
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
/* The one reader of a PS3 Texture object: row idx of a, its first 40 bytes decoded. RC_BOUNDS
 * when there is no such row or it lies outside the file, RC_UNSUPPORTED for another type,
 * RC_TRUNCATED when the object is shorter than 40 bytes, else the read's error. */
enum rc tex_ps3_read_object(const struct src *s, const struct arena *a, uint32_t idx,
			    struct ps3_texture *t);
/* The 40 bytes of t (format as stored; base_format, linear and unnormalized are ignored):
 * ps3_texture_decode of the result gives t back. */
void ps3_texture_encode(const struct ps3_texture *t, bool big_endian,
			uint8_t out[PS3_TEXTURE_SIZE]);
/* The GCM base format a canonical kind is stored in when a texture changes format (B8 for
 * L8, D8R8G8B8 for BGRX8); 0 for ATI2, which RSX cannot sample. */
uint8_t tex_ps3_base_for_kind(enum tex_kind k);
/* Bytes of one stored texel (of one 4x4 block when compressed) of a base format; 0 if unknown. */
uint32_t tex_ps3_texel_bytes(uint8_t base_format);

/* GCM name of a base format ("DXT1", "A8R8G8B8", ...) or NULL when unknown. */
const char *tex_ps3_format_name(uint8_t base_format);

/* Source texel layout of a PS3 texture, checked for overflow. */
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
/* The canonical kind of a GCM format and whether it carries alpha; false if unconverted. */
bool tex_ps3_kind(uint8_t base_format, enum tex_kind *kind, bool *alpha);
/* Offset (from the texels' start) just past level `level` of face `face`, as stored. */
uint64_t ps3_level_src_end(const struct ps3_texture *t, const struct tex_layout *l, uint32_t face,
			   uint32_t level);
/* Canonical unit rows [row0, row0+n) of a PS3 level; base = absolute offset of the texels. */
enum rc ps3_read_rows(const struct src *s, uint64_t base, const struct ps3_texture *t,
		      const struct tex_layout *l, enum tex_kind kind, uint32_t face, uint32_t level,
		      uint32_t row0, uint32_t n, uint8_t *out);
/*
 * The inverse, for writers: store canonical unit rows [row0, row0+n) of (face, level) into the
 * texels res (res_len bytes from the texture's first texel), swizzled, pitched and byte-swapped
 * as ps3_read_rows reads them; bytes between texels (pitch padding) are left alone. Uncompressed
 * values are quantised with rounding, so canonical texels read from a texture come back
 * unchanged. RC_INVAL for a bad face, level, row range or a res too short for the level.
 */
enum rc ps3_write_rows(const struct ps3_texture *t, const struct tex_layout *l, enum tex_kind kind,
		       uint32_t face, uint32_t level, uint32_t row0, uint32_t n,
		       const uint8_t *canon, uint8_t *res, size_t res_len);

struct tex_platform;

/* Bytes of a platform's part of a tex_desc (tex_platform.h): the largest, Xbox 360's layout
 * (1,096 bytes), with room. */
#define TEX_PLAT_BYTES 1152u

/*
 * A texture as the tree shows it, whatever the platform: canonical (DDS-order, little-endian)
 * levels, read row by row from the file on demand. Rows are "unit rows": 4-texel block rows
 * for compressed kinds, texel rows otherwise.
 *
 * Short data (docs/skate-objects.md, "Texture sizes"): when the base resource ends before the
 * layout does, only what is complete is served: whole faces (each with all its levels), or, when
 * not even the first face is whole, the levels of face 0 that are. The problem is a diag line;
 * RC_CORRUPT only when not even level 0 of face 0 is there. A larger base resource than the
 * layout needs is RC_CORRUPT unless the texture sits at an offset inside a shared resource.
 */
struct tex_desc {
	uint32_t index;		       /* dictionary row of the Texture object */
	const struct tex_platform *tp; /* the platform row that reads and writes it */
	enum tex_kind kind;
	const char *format_name;
	bool alpha;
	uint32_t width, height;
	uint32_t mips, faces;		/* as declared */
	uint32_t have_mips, have_faces; /* served: complete in the data */
	uint64_t base;			/* absolute file offset of the first texel */
	/* The platform's part: its decoded object and texel layout, filled and read only by the
	 * platform's row (tex_ps3.c, tex_x360.c). */
	union {
		max_align_t align;
		unsigned char bytes[TEX_PLAT_BYTES];
	} plat;
};

enum rc tex_describe(const struct src *s, const struct arena *a, uint32_t tex_idx,
		     struct tex_desc *d, struct diag *diag);
uint32_t tex_level_rows(const struct tex_desc *d, uint32_t level);
uint64_t tex_row_bytes(const struct tex_desc *d, uint32_t level);
uint64_t tex_level_bytes(const struct tex_desc *d, uint32_t level);
/* Canonical unit rows [row0, row0+n) of (face, level) into out, reading only what they need. */
enum rc tex_read_rows(const struct src *s, const struct tex_desc *d, uint32_t face, uint32_t level,
		      uint32_t row0, uint32_t n, uint8_t *out);
/* The PS3 header a description holds (for tests and tools), NULL when d is not a PS3 texture's
 * (tex_ps3.c). Filled whenever the object decoded, even when tex_describe then failed. */
const struct ps3_texture *tex_ps3_header(const struct tex_desc *d);

/* DDS file: a 128-byte header describing the faces and levels served, then the levels. */
#define DDS_HEADER_BYTES 128u
void tex_dds_header(const struct tex_desc *d, struct buf *out);
uint64_t tex_dds_size(const struct tex_desc *d);

/*
 * The picture: level 0 as RGBA (or RGB without alpha); a cube map's faces side by side, left
 * to right in DDS order (+X, -X, +Y, -Y, +Z, -Z), each face's width apart.
 */
uint32_t tex_picture_width(const struct tex_desc *d);
/* Pixel rows [y0, y0+n) of the picture (channels: 4 with alpha, else 3). */
enum rc tex_picture_rows(const struct src *s, const struct tex_desc *d, uint32_t y0, uint32_t n,
			 uint8_t *px);
/* The picture as a PNG stream (png.h) in p, reading its rows from s through pic: storage the
 * caller keeps as long as p. s NULL: p only sizes its parts (pngs_part, pngs_size). */
struct tex_pic {
	const struct src *s;
	const struct tex_desc *d;
};
enum rc tex_picture_png(struct pngs *p, struct tex_pic *pic, const struct src *s,
			const struct tex_desc *d);
/* RGBA8 of n canonical unit rows of a level of width w (compressed: 4 pixel rows each). */
void tex_canon_rgba(enum tex_kind k, const uint8_t *canon, uint32_t w, uint32_t n, uint8_t *rgba);

/* Whole images in memory (tests and tools): every served face and level, face-major. */
struct texture_image {
	struct tex_desc d;
	uint8_t *data;
	size_t size;
};
enum rc texture_load(const struct src *s, const struct arena *a, uint32_t tex_idx,
		     struct texture_image **out, struct diag *diag);
void texture_image_free(struct texture_image *t);
/* Offset and size inside t->data of (face, level); false when out of range. */
bool texture_level(const struct texture_image *t, uint32_t face, uint32_t level, size_t *off,
		   size_t *len, uint32_t *w, uint32_t *h);
enum rc texture_dds(const struct texture_image *t, struct buf *out);
enum rc texture_png(const struct src *s, const struct texture_image *t, struct buf *out);

/* DXT block decoders: 16 pixels RGBA8, row-major, into out[64]. dxt1_block: a colour block;
 * four_colour forces the 4-colour mode (DXT3/5 colour blocks). */
void dxt1_block(const uint8_t blk[8], bool four_colour, uint8_t out[64]);
void dxt3_block(const uint8_t blk[16], uint8_t out[64]);
void dxt5_block(const uint8_t blk[16], uint8_t out[64]);
void ati2_block(const uint8_t blk[16], uint8_t out[64]);
/* Decode a w x h block-compressed image (DXT1/3/5, ATI2) into w*h*4 RGBA. */
void dxt_decode_image(enum tex_kind kind, const uint8_t *blocks, uint32_t w, uint32_t h,
		      uint8_t *rgba);

/* RSX swizzle: texel index of (x, y) in a 2^lw x 2^lh swizzled level. */
uint32_t tex_ps3_swizzle_index(uint32_t x, uint32_t y, unsigned lw, unsigned lh);
/* Copy a 2^lw x 2^lh level of bpp-byte texels between swizzled and linear order. */
void tex_ps3_unswizzle(const uint8_t *src, uint8_t *dst, unsigned lw, unsigned lh, uint32_t bpp);
void tex_ps3_swizzle(const uint8_t *src, uint8_t *dst, unsigned lw, unsigned lh, uint32_t bpp);

/*
 * File stems for textures/: names[i] for every dictionary row i (n_dict entries); non-NULL
 * only for Texture rows. A Texture named by a TableOfContents entry (entries scanned
 * linearly, m_pObject resolved, type map ignored) gets that name without a ".Texture" suffix,
 * sanitised by name_component; otherwise "NNNN.Texture". Duplicates get ".NNNN" appended.
 * Free with texture_names_free.
 */
enum rc texture_names(const struct src *s, const struct arena *a, char ***names, struct diag *diag);
void texture_names_free(char **names, uint32_t n);

#endif
