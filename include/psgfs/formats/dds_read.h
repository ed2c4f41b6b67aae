/*
 * DDS files written by editors and tools, read through a positioned source: the header
 * (classic, or with the DX10 extension), every format psgfs's textures are shown in
 * (tex_kind.h: DXT1/3/5, ATI2/BC5, A8R8G8B8, X8R8G8B8, R5G6B5, A1R5G5B5, A4R4G4B4, L8) as
 * canonical rows, and any other uncompressed RGB, luminance or alpha bit-mask layout as RGBA.
 * Mip chains, cube maps (all six faces, or the first ones as psgfs serves a cube map whose data
 * holds only those). Nothing is trusted: sizes, counts and the texel bytes
 * the header promises are checked against the file before anything is read.
 */
#ifndef PSGFS_DDS_READ_H
#define PSGFS_DDS_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/result.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/tex_kind.h"

struct dds_read_info {
	uint32_t width, height, mips, faces; /* faces: 1, or 6 for a cube map */
	bool cube;	/* a cube map: 6 faces, or its first `faces` (+X, -X, ... in order) */
	bool canonical; /* rows are canonical texels of `kind` */
	enum tex_kind kind;
	bool compressed; /* 4x4 blocks (canonical block kinds only) */
	bool alpha;	 /* the format carries alpha */
	uint32_t unit_bytes;
	/* Bit-mask layouts that are not canonical: 1 to 4 bytes per texel, little-endian. */
	uint32_t mask[4]; /* r g b a; luminance: the value in mask[0], copied to g and b */
	bool luminance;
	char format[48];     /* "DXT5", "A8R8G8B8", "32-bit masks FF/FF00/FF0000/FF000000" */
	uint64_t data_off;   /* first texel: 128, or 148 with the DX10 header */
	uint64_t face_bytes; /* one face, every level */
};

/*
 * Parse and check the header; RC_FORMAT when it is no DDS file, RC_UNSUPPORTED for a format,
 * volume or array it cannot read, RC_CORRUPT for contradictions, RC_TRUNCATED when the file
 * holds fewer texel bytes than the header describes (more is allowed: they are ignored).
 * Sides above max_side are refused. why receives one line saying why.
 */
enum rc dds_read_header(const struct src *s, uint32_t max_side, struct dds_read_info *d, char *why,
			size_t whylen);
/* Unit rows (4-texel block rows when compressed) and their bytes, of a level. */
uint32_t dds_read_level_rows(const struct dds_read_info *d, uint32_t level);
uint64_t dds_read_row_bytes(const struct dds_read_info *d, uint32_t level);
/* Absolute offset of (face, level) in the file. */
uint64_t dds_read_level_off(const struct dds_read_info *d, uint32_t face, uint32_t level);
/* Unit rows [row0, row0 + n) of (face, level) as stored (canonical texels when d->canonical). */
enum rc dds_read_units(const struct src *s, const struct dds_read_info *d, uint32_t face,
		       uint32_t level, uint32_t row0, uint32_t n, uint8_t *out);
/* The same rows as RGBA8 pixels (4 pixel rows per unit row when compressed; rows past the
 * level's height are written too), from any format; tmp holds n unit rows as stored. */
enum rc dds_read_rgba(const struct src *s, const struct dds_read_info *d, uint32_t face,
		      uint32_t level, uint32_t row0, uint32_t n, uint8_t *tmp, uint8_t *rgba);

#endif
