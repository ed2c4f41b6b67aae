/*
 * Deterministic synthetic PSK/PSKX meshes and PSA animations: the same options give the same
 * struct and the same bytes everywhere. Floats are small dyadic rationals (exact in float32).
 * Meshes are built in memory first so tests can compare a decoded file field by field.
 */
#ifndef PSGFS_GEN_PSK_H
#define PSGFS_GEN_PSK_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/formats/psk.h"
#include "psgfs/base/result.h"

struct gen_psk_opts {
	uint64_t seed;
	uint32_t points;	 /* 0 = 8 * scale */
	uint32_t wedges;	 /* 0 = points + points / 2 (at least points) */
	uint32_t faces;		 /* 0 = wedges */
	uint32_t scale;		 /* sizes when the counts above are 0 (0 = 4) */
	uint32_t bones;		 /* 0 = no skeleton; bone 0 is the root, parents come first */
	uint32_t materials;	 /* 0 = 1 */
	uint32_t max_influences; /* weights per point, 1..4 (0 = 4); sum to exactly 1.0 */
	bool root_parent_minus1; /* CUE4Parse style root parent -1 instead of 0 */
	bool normals;		 /* VTXNORMS, one per point */
	bool colors;		 /* VERTEXCOLOR, one per wedge */
	uint32_t extra_uv_sets;	 /* EXTRAUVS0.., at most PSK_MAX_EXTRA_UVS */
	uint32_t morphs;	 /* MRPHINFO/MRPHDATA */
	uint32_t sockets;	 /* SKELSOCK */
	bool big;		 /* force more than 65536 wedges: FACE3200, .pskx */
	bool hostile_names;	 /* '/', "..", control bytes, 64 bytes without NUL, duplicates */
	int32_t head_type_flag;	 /* 0 = writer default */
};

struct gen_psa_opts {
	uint64_t seed;
	uint32_t bones;	     /* 0 = 3 */
	uint32_t sequences;  /* 0 = 1 */
	uint32_t max_frames; /* frames per sequence in 1..max_frames (0 = 8) */
	bool scale_keys;     /* full SCALEKEYS (one per key) */
	bool match_psk;	     /* bones identical to gen_psk_mesh's with the same seed and bones */
	bool flat_parents;   /* parent 0 for every bone, as many real exporters write */
	bool hostile_names;
	int32_t head_type_flag; /* 0 = writer default (20100422) */
	/* Every sequence covers every key (FirstRawFrame 0, all frames): a small file whose
	 * per-sequence views add up to far more than the file, the amplification worst case. */
	bool overlap;
};

/* Fill o with defaults for this seed (small skinned mesh, one material, 4 bones). */
void gen_psk_opts_default(struct gen_psk_opts *o, uint64_t seed);
void gen_psa_opts_default(struct gen_psa_opts *o, uint64_t seed);

/* Build the mesh in memory (free with psk_mesh_free). RC_INVAL for impossible options. */
enum rc gen_psk_mesh(const struct gen_psk_opts *o, struct psk_mesh *out);
enum rc gen_psa_anim(const struct gen_psa_opts *o, struct psa_anim *out);

/* Build and write through psk_write / psa_write. */
enum rc gen_psk_file(const struct gen_psk_opts *o, struct buf *out);
enum rc gen_psa_file(const struct gen_psa_opts *o, struct buf *out);

#endif
