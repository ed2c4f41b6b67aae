/*
 * Deterministic Xbox 360 texture arenas (`xb2`, .rx2) that are twins of PS3 texture arenas:
 * the same TOC names and GUIDs and the same texels (taken from the PS3 generator's canonical
 * payload), stored the Xbox 360 way (tex_x360.h): tiled, word-swapped, packed mip tails,
 * cube faces inside each 4 KiB-aligned subresource. Dictionary [BaseResource (type
 * 0x00010031, align 0x1000), Texture (0x34 bytes, align 4)] x k, TableOfContents,
 * VersionData last, as in the PS3 texture arena. DXN has no PS3 format: its textures are
 * encoded here and have no twin.
 */
#ifndef PSGFS_GEN_X360_TEXTURES_H
#define PSGFS_GEN_X360_TEXTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/base/result.h"
#include "psgfs/formats/tex_x360.h"
#include "psgfs/formats/texture.h"

struct gen_x360_spec {
	uint8_t format; /* X360TEX_FMT_8, _5_6_5, _8_8_8_8, _DXT1, _DXT2_3, _DXT4_5, _DXN */
	uint16_t width, height;
	uint8_t mips; /* 0 = full chain down to 1x1 */
	bool cube;
};

struct gen_x360_opts {
	const struct gen_x360_spec *specs; /* NULL = the default set */
	size_t n_specs;
	uint32_t arena_id; /* 0 = 0x7E570000, the PS3 generator's */
};

struct gen_x360_truth_item {
	char name[32]; /* TOC name without ".Texture" */
	uint64_t guid;
	uint8_t format;
	uint32_t width, height, mips;
	bool cube;
	bool twin;	     /* has a PS3 twin (every format but DXN) */
	uint32_t twin_index; /* its index in the PS3 twin arena's textures */
	/* Canonical payload the decoder must produce: faces x levels, DDS byte order. */
	uint8_t *canon;
	size_t canon_len;
	/* DXN only: face 0 level 0 source texels, width * height pairs (red, green). */
	uint8_t *src_rg;
	uint32_t tex_index, buf_index; /* dictionary rows */
};
struct gen_x360_truth {
	struct gen_x360_truth_item *items;
	size_t n;
};

/* Every format x {1x1 .. 32x32, 24x40, 100x60, 256x256, 1024x512} x {1, full} mips, two cube
 * maps (one with its base in the mip tail); DXN textures last. */
const struct gen_x360_spec *gen_x360_default_specs(size_t *n);

/* The PS3 spec of a twin (A8R8G8B8, R5G6B5, B8 linear when not a power of two); false for
 * DXN or an unknown format. */
bool gen_x360_twin_spec(const struct gen_x360_spec *s, struct gen_tex_spec *out);

/* The Texture object the generator writes for a spec (fetch constant included). */
enum rc gen_x360_texture_object(const struct gen_x360_spec *s, struct tex_x360_object *o);

/* The Xbox 360 arena. rec and truth are optional. RC_INVAL for a spec the layout rejects. */
enum rc gen_x360_textures(const struct gen_x360_opts *o, struct buf *out,
			  struct psg_gen_record *rec, struct gen_x360_truth *truth);
/* The PS3 twin arena (gen_psg_textures of the twin specs, DXN left out). */
enum rc gen_x360_ps3_twins(const struct gen_x360_opts *o, struct buf *out,
			   struct psg_gen_record *rec, struct gen_tex_truth *truth);
void gen_x360_truth_free(struct gen_x360_truth *t);

#endif
