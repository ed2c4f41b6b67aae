/*
 * Deterministic Skate 3 stream files (docs/streams.md): an SFIL collection (.psf PS3, .xsf
 * Xbox 360) of generated arenas keyed by 64-bit IDs, each split into its CPU part (resource
 * descriptor 0) and GPU part (the rest), stored as the stream format says:
 *   0 raw, 1 one RefPack stream per asset, 2 a section table with each section raw or
 *   RefPack, 3 sections cut into RefPack chunks;
 * and its ATOC table (.pst/.xst): 64-byte records on Xbox 360, 72-byte ones on PS3.
 */
#ifndef PSGFS_GEN_STREAM_H
#define PSGFS_GEN_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/result.h"
#include "psgfs/gen/gen_big.h"

struct gen_stream_opts {
	uint64_t seed;
	bool x360;
	uint32_t format;   /* stream format 0-3 */
	uint32_t assets;   /* 0 = 6 */
	uint32_t chunk;	   /* format 3: unpacked bytes per chunk (0 = 32 KiB) */
	uint8_t rp_header; /* RefPack header variant (0 = by size) */
};

/* Hostile stream files (fuzz seeds and tests). */
enum gen_stream_hostile {
	GS_H_NONE,
	GS_H_STRIDE,   /* an asset whose stride is 0 (the walk must stop) */
	GS_H_PAST_EOF, /* an asset whose stored size runs past the end */
	GS_H_SECTIONS, /* a section table whose sizes do not add up, one claiming 4 GiB */
	GS_H_CHUNKS,   /* format 3 with 1,000,000 chunks claimed */
	GS_H_TOC_LIES, /* the ATOC claims other sizes and an ID the file lacks */
	GS_H_BACKREF,  /* a RefPack section copying from before its start */
	GS_H_COUNT
};
const char *gen_stream_hostile_name(enum gen_stream_hostile h);

/*
 * Write the collection to sf and its table to toc (either may be NULL). m (optional) gets
 * one row per asset: path 0x<ID>.psg (.rx2), the stream format as method, size, FNV-1a 64.
 * RC_INVAL for a format past 3.
 */
enum rc gen_stream(const struct gen_stream_opts *o, enum gen_stream_hostile h, struct buf *sf,
		   struct buf *toc, struct gen_big_manifest *m);

#endif
