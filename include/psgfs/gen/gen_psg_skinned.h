/*
 * Deterministic skinned model arenas (PS3, and their Xbox 360 twins) with ground truth, for the
 * Skate mesh decoders and the PSK export (docs/skate-objects.md, docs/xbox360.md "Models"). N
 * bones with rigid inverse bind matrices from a random tree of bind poses, M meshes of several
 * islands, each mesh with its own palette (a proper subset of the skeleton) and a vertex layout
 * preset so that all seven GCM formats are used across meshes, u16 and u32 index buffers.
 */
#ifndef PSGFS_GEN_PSG_SKINNED_H
#define PSGFS_GEN_PSG_SKINNED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/result.h"

/*
 * Vertex layout presets (stride; index width):
 * 0: XYZ F3, NORMAL CMP, TEX0 SF2, VERTEXCOLOR UB4, INDICES UB256x4, WEIGHTS UB4 (32; u16)
 * 1: XYZ SF3, NORMAL S1x3, TEX0 S1x2, INDICES UB4 (raw bytes), WEIGHTS S1x4 (30; u32)
 * 2: XYZ S32K3, TANGENT CMP, NORMAL F3, TEX0 F2, INDICES UB256x4, WEIGHTS F4 (50; u16)
 * 3: static: XYZ F3, NORMAL CMP, TEX0 SF2, BINORMAL S1x3 (26; u32), palette of one bone
 * 4 (GEN_SK_SKATER, only when asked for): the skater encoding of real character models:
 *   XYZ S1x4 as s16 / 16384 with w = 1, NORMAL CMP, TEX0 S1x2, INDICES UB256x4, WEIGHTS
 *   UB256x4 as byte / 255 (24; u16). The skeleton is skater-shaped: the bones of the rig's
 *   HIPS tree, body first, in a rest pose (one root), scaled to fit +-1.5; every vertex lies
 *   within 0.1 (per axis, bone-local) of the segment from its first bone to that bone's first
 *   child, and triangles join vertices along the same bone.
 * Meshes with more than 65535 vertices always get u32 indices. layout -1 cycles 0..3.
 *
 * Xbox 360 (GEN_SK_X360): the same PS3 vertices stored element by element in the Xbox 360
 * format that holds their values exactly (twin layouts; stride; position encoding):
 * 0: FLOAT3, HEND3N, FLOAT16_2, UBYTE4N colour, UBYTE4 indices, UBYTE4N weights (32)
 * 1: FLOAT16_4 (w = 1), SHORT4N normal (w = 0), SHORT2N, UBYTE4N indices, SHORT4N weights (32)
 * 2: FLOAT3 (the S32K integers), HEND3N tangent, FLOAT3, FLOAT2, UBYTE4, FLOAT4 (56)
 * 3: FLOAT3, HEND3N, FLOAT16_2, SHORT4N binormal (28)
 * 4: SHORT4N as s16 / 16384 (bone units), HEND3N, SHORT2N, UBYTE4, UBYTE4 weights (24)
 * GEN_SK_X360_ALT swaps in the formats PS3 lacks, re-quantising those values (the truth
 * follows): 0: DEC3N normal, USHORT2N uv; 1: DHEN3N normal, USHORT4N weights; 2: DEC3N tangent,
 * SHORT4 indices (60); 3: DHEN3N binormal (24); 4: as the twin. Island primitives are 4
 * (D3DPT_TRIANGLELIST), and every VertexBuffer and IndexBuffer follows its base resource
 * (docs/xbox360.md, "Models"), so shuffled or base-resources-first rows are refused.
 */
#define GEN_SK_LAYOUTS 4
#define GEN_SK_SKATER  4
#define GEN_SK_PRESETS 5

enum gen_skinned_platform { GEN_SK_PS3 = 0, GEN_SK_X360, GEN_SK_X360_ALT };

enum gen_skinned_hostile {
	GEN_SK_SANE = 0,
	GEN_SK_PALETTE_PAST_SKELETON, /* mesh 0's last palette slot names bone n_bones + 3 */
	GEN_SK_INDEX_PAST_VERTS,      /* mesh 0's second index is n_verts + 7 */
	GEN_SK_STRIDE_TOO_SMALL,      /* mesh 0's descriptor stride is 6 bytes short */
	GEN_SK_BONES_PAST_OBJECT,     /* RenderModelData m_iNumBones patched to 0xFFFF */
	GEN_SK_ISLANDS_OVERLAP,	      /* PS3: every island rewritten to draw its mesh's whole
					 index buffer (islands x the triangles: amplification) */
};

struct gen_skinned_opts {
	uint64_t seed;
	uint32_t n_bones;  /* 0 = 12; at least 3 */
	uint32_t n_meshes; /* 0 = 4 */
	uint32_t verts;	   /* per mesh; 0 = 60 */
	uint32_t islands;  /* per mesh; 0 = 3 */
	uint32_t tris;	   /* per island; 0 = 20 */
	int layout;	   /* -1: mesh i uses preset i % GEN_SK_LAYOUTS; else that preset (0..4) */
	uint64_t shuffle_seed;
	bool baseres_first; /* dictionary rows: base resources first (PSGB_ORDER_BASERES_FIRST) */
	/* Bone names from the built-in skater rig (a random subset in mixed case, plus two
	 * "Prop_NN" bones that are not rig bones when there are 8 or more; with the skater
	 * layout the rig's body first, props only past its HIPS tree), parented as the rig
	 * says: each to its nearest chosen rig ancestor, the props to the first root. At most
	 * 131 + 64 bones. */
	bool rig_names;
	/* tex_count > 0: each material also gets diffuse, specular and detail channels naming
	 * texture GUIDs tex_guid + (3 mesh + channel) % tex_count (a companion's TOC GUIDs). */
	uint64_t tex_guid;
	uint32_t tex_count;
	enum gen_skinned_hostile hostile;
	enum gen_skinned_platform platform; /* GEN_SK_PS3 (0) unless set */
};

/* One mesh as the decoder should see it (values already quantised by their format). */
struct gen_skinned_mesh_truth {
	int layout;
	bool skinned;
	uint32_t index_width;
	uint32_t n_verts;
	uint16_t *palette;
	uint32_t n_palette;
	float (*pos)[3];
	float (*normal)[3];
	float (*uv)[2];
	float (*color)[4]; /* NULL when the layout has none */
	uint8_t *n_infl;   /* after zero-drop, palette mapping and normalisation */
	uint32_t (*bone)[4];
	float (*weight)[4];
	const char *pos_encoding; /* how positions are stored, as skate_elem_encoding says it */
	/* skater layout: the bone each vertex was placed at (its first influence) and the
	 * decoded position seen from that bone (p * its IBP), else NULL */
	uint32_t *main_bone;
	float (*local)[3];
	uint32_t n_islands;
	uint32_t *island_start, *island_count;
	uint32_t (*tri)[3];
	uint32_t *tri_island;
	uint32_t n_tri;
	char material[32];
};

struct gen_skinned_truth {
	uint32_t n_bones;
	char (*names)[32];
	int32_t *parent; /* -1 = root; parents precede children (random tree, or the rig's) */
	float (*ibp)[16];
	float (*t)[3];	     /* bind translation (model space) */
	float (*q)[4];	     /* bind rotation x y z w, w >= 0 */
	char *hierarchy_tsv; /* "bone\tparent" header + one row per bone ("-" = root) */
	uint32_t n_meshes;
	struct gen_skinned_mesh_truth *mesh;
};

/* truth may be NULL. RC_INVAL for impossible options, RC_NOMEM. */
enum rc gen_psg_skinned(const struct gen_skinned_opts *o, struct buf *out,
			struct gen_skinned_truth *truth);
void gen_skinned_truth_free(struct gen_skinned_truth *t);

#endif
