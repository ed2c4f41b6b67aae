/*
 * Deterministic PS3 texture arenas (docs/skate-objects.md, "Texel layout", "Cube maps",
 * "Texture sizes", "Texture names"): dictionary [BaseResource (align 0x80), Texture (align 4)] x k,
 * TableOfContents (names after the entries, "0x%016llx.Texture", type RwHash32("Texture")),
 * VersionData (8 bytes) last; 10-type registry, RD[5].alignment 0x80, no subreferences. Pixel
 * content is gradients plus an 8-pixel checker, different per face and mip level, so layout
 * mistakes show.
 */
#ifndef PSGFS_GEN_PSG_TEXTURES_H
#define PSGFS_GEN_PSG_TEXTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/base/result.h"

struct gen_tex_spec {
	uint8_t format; /* GCM format byte including LN (0x20) / UN (0x40) */
	uint16_t width, height;
	uint8_t mips; /* 0 = full chain down to 1x1 */
	bool cube;
	uint32_t pitch;	     /* LN uncompressed: row pitch of every level; 0 = width*bpp */
	bool punch_through;  /* alpha formats: mixed 0/255 alpha blocks (DXT1 3-colour mode) */
	uint32_t keep_bytes; /* non-zero: the base resource is cut to this many bytes, as in a
				tool-made arena whose data is shorter than its layout */
};

struct gen_tex_opts {
	const struct gen_tex_spec *specs; /* NULL = the default set */
	size_t n_specs;
	uint32_t arena_id;     /* 0 = 0x7E570000 */
	uint64_t shuffle_seed; /* psgb_finish dictionary shuffle; 0 = none (when set,
				  VersionData is logically first so no ref is 0) */
	bool unnamed;	       /* TOC entries with m_Name = 0 (files become NNNN.Texture) */
	bool short_cube;       /* add the real tool-made shape: a DXT5 256x256 cube map whose
				  base resource holds one face (65,536 bytes of 393,216) */
	bool partial;	       /* add textures whose data holds part of their layout (cube maps
				  of 1 to 5 whole faces, face 0 with some of its levels, in
				  several formats) and a volume texture: gen_tex_partial_specs */
	uint32_t guid_first;   /* texture k's TOC GUID is 0x2c7f381800171900 + guid_first + k
				  (a per-texture arena of default spec K: specs = default + K,
				  n_specs 1, guid_first K, as the default arena numbers it) */
};

struct gen_tex_truth_item {
	char name[32]; /* TOC name without ".Texture" ("0x..."), "" when unnamed */
	uint64_t guid;
	uint8_t format;
	uint32_t width, height, mips;
	bool cube;
	/*
	 * Face 0, level 0, width*height*4 RGBA. src: the pixels the texture was made from
	 * (already quantised to the format for uncompressed ones). expect: what a correct
	 * decoder produces (== src for uncompressed; the DXT decode of the encoded blocks).
	 * For DXT1 punch-through, src RGB is meaningless where src alpha is 0.
	 */
	uint8_t *src_rgba, *expect_rgba;
	/* Canonical DDS payload texture_load must produce: faces x mips, DDS byte order (of a
	 * cut base resource: the whole faces, else the whole levels of face 0, that remain). */
	uint8_t *dds_payload;
	size_t dds_payload_len;
	uint32_t tex_index, buf_index; /* logical dictionary indices (== final when unshuffled) */
};
struct gen_tex_truth {
	struct gen_tex_truth_item *items;
	size_t n;
};

/* The default set: every supported format, mip chains, cube maps, NPOT, LN with pitch. */
const struct gen_tex_spec *gen_tex_default_specs(size_t *n);

/* Build the arena into out. rec and truth are optional. */
/* The default set (every format); a set shaped like a real 19-texture arena (benchmarks). */
const struct gen_tex_spec *gen_tex_real_specs(size_t *n);
/* The textures `partial` adds, their keep_bytes set from the layout (n of them into out,
 * which holds GEN_TEX_PARTIAL_MAX); the volume texture, last, is not among them. */
#define GEN_TEX_PARTIAL_MAX 12
size_t gen_tex_partial_specs(struct gen_tex_spec *out);
enum rc gen_psg_textures(const struct gen_tex_opts *o, struct buf *out, struct psg_gen_record *rec,
			 struct gen_tex_truth *truth);
void gen_tex_truth_free(struct gen_tex_truth *t);

/* The 40-byte Texture object (big-endian) the generator writes for a spec (m_buffer given). */
void gen_tex_object(const struct gen_tex_spec *s, uint32_t m_buffer, uint8_t out[40]);

#endif
