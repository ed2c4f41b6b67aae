/* Private to the ActorX glTF exports (psk_gltf.c, psa_gltf.c). */
#ifndef PSGFS_PSK_GLTF_INT_H
#define PSGFS_PSK_GLTF_INT_H

#include "psgfs/formats/psk_gltf.h"

#define PG_CP_EVERY 256u /* triangles / morph vertices between checkpoints */
#define PG_NONE_KEY 256	 /* faces whose material is out of range: glTF's default material */
#define PG_N_KEYS   257

/* A growable list of 64-bit checkpoints. */
struct psk_gltf_cps {
	uint64_t *v;
	size_t n, cap;
};

/* One morph target's deltas, sorted by point (the first delta of a point wins). */
struct psk_gltf_delta {
	uint32_t point;
	uint32_t order; /* position in the file, while sorting */
	float pos[3], nrm[3];
};

struct psk_gltf_anim {
	uint32_t seq;
	uint64_t first_key; /* in ANIMKEYS (and SCALEKEYS) */
	float rate;
};

struct psk_gltf {
	bool anim;
	const struct psk_index *ix;
	const struct psa_index *ax;
	size_t bytes;
	char *name;
	struct gltf_model m;
	struct gltf_plan plan;
	struct gltf_node *nodes;
	struct psk_socket *sockets;
	size_t n_sockets;
	/* PSK mesh */
	struct gltf_mesh mesh;
	struct gltf_prim *prims;
	uint32_t *prim_key;	      /* per primitive: material index, or n_materials for "none" */
	int32_t *key_prim;	      /* per key: primitive, or -1 */
	struct psk_gltf_cps *face_cp; /* per primitive: face of every PG_CP_EVERY-th triangle */
	struct gltf_material *mats;
	int normals;			       /* 0 none, 1 per point, 2 per wedge */
	int32_t uv_src[PSK_MAX_EXTRA_UVS + 1]; /* TEXCOORD_k: -1 wedge UV, else extra set */
	struct gltf_influence *skin;	       /* per point, NULL without bones */
	struct gltf_target *targets;
	struct psk_gltf_delta *deltas; /* every target's, target after target */
	size_t *delta_off;	       /* per target + 1 */
	struct psk_gltf_cps
	    *target_cp;	      /* per target: wedge of every PG_CP_EVERY-th sparse vertex */
	uint32_t n_target_cp; /* targets built (the mesh may keep fewer) */
	/* PSA */
	struct gltf_anim *anims;
	struct psk_gltf_anim *pa;
};

/* What the fill callbacks read from. */
struct psk_gltf_ctx {
	const struct psk_gltf *g;
	const struct src *s;
	const struct psk_gltf_cache *cache; /* or NULL */
};

/* Faces the export keeps (all three wedges exist), and the primitive key of one. */
static inline bool psk_gltf_face_ok(const struct psk_face *f, size_t n_wedges)
{
	return f->wedge[0] < n_wedges && f->wedge[1] < n_wedges && f->wedge[2] < n_wedges;
}

static inline uint32_t psk_gltf_face_key(const struct psk_face *f, size_t n_materials)
{
	return f->mat < n_materials ? f->mat : PG_NONE_KEY;
}

enum rc psk_gltf_psk_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out);
enum rc psk_gltf_psa_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out);

/* Nodes for ActorX bones: parents before children (others hang under bone 0), bone 0's
 * transform plain and turned Z-up to Y-up, children's quaternions conjugated
 * (docs/psk-psa.md, "Quaternions"). Returns the number of bones whose parent was replaced. */
size_t psk_gltf_bone_nodes(const struct psk_bone *b, size_t n, struct gltf_node *out);
void psk_gltf_cps_push(struct psk_gltf_cps *c, uint64_t v, bool *oom);
/* Bone-relative transforms of bone i of a PSA key (same conventions as psk_gltf_bone_nodes). */
void psk_gltf_key_trs(size_t bone, const float pos[3], const float rot[4], float t[3], float r[4]);

#endif
