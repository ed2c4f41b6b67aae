/* Private to the glTF writer (gltf.c, gltf_json.c, gltf_math.c): views, accessors, sections. */
#ifndef PSGFS_GLTF_INT_H
#define PSGFS_GLTF_INT_H

#include "psgfs/base/buf.h"
#include "psgfs/formats/gltf.h"

#define GLTF_NONE UINT32_MAX

/* Component types and buffer view targets, as glTF numbers them. */
enum {
	CT_U8 = 5121,
	CT_U16 = 5123,
	CT_U32 = 5125,
	CT_F32 = 5126,
	TGT_VERTEX = 34962,
	TGT_INDEX = 34963,
};

enum view_kind { VK_DATA, VK_IBM, VK_IMAGE };

/* One buffer view: `count` elements of `elem` bytes from the fill callback (VK_DATA), the
 * inverse bind matrices, or an image's parts. */
struct gltf_view {
	uint8_t kind;
	uint8_t what; /* enum gltf_data (VK_DATA) */
	uint8_t half; /* GLTF_D_SKIN: 0 joints, 1 weights */
	uint16_t target;
	uint32_t mesh, set;
	uint64_t count;
	uint32_t elem;
	uint64_t off, len; /* in the BIN chunk; len without padding */
	uint32_t pad;
	uint32_t part, n_data_parts; /* first layout part of the data; how many */
};

/* An accessor of a mesh or the skin (animation accessors are implicit, see gltf_json.c). */
struct gltf_acc {
	uint32_t view; /* GLTF_NONE: zeros (a sparse target's base) */
	uint64_t count;
	uint16_t ctype;
	uint8_t ncomp; /* 1 2 3 4 16 */
	bool normalized;
	const float *min, *max; /* 3 components, or NULL */
	uint32_t mesh;		/* whose POSITION this is, when pos */
	bool pos;
	uint32_t sp_idx, sp_val; /* sparse views, or GLTF_NONE */
	uint64_t sp_count;
};

/* JSON sections in file order; each is a run of items (one per glTF object). */
enum {
	SEC_HEAD,
	SEC_NODES,
	SEC_MESHES,
	SEC_SKINS,
	SEC_MATERIALS,
	SEC_TEXTURES,
	SEC_IMAGES,
	SEC_ANIMS,
	SEC_ACCS,
	SEC_VIEWS,
	SEC_BUFFERS,
	SEC_TAIL,
	SEC_COUNT
};

/* Paths an animation samples (2 or 3). */
static inline unsigned anim_paths(const struct gltf_anim *a)
{
	return a->scale ? 3 : 2;
}

/* A node's TRS as written: finite, unit rotation (gltf_math.c). */
void gltf_node_trs(const struct gltf_node *n, float t[3], float r[4], float s[3]);
/* Column-major 4x4 of T x R x S. */
void gltf_trs_matrix(const float t[3], const float r[4], const float s[3], double m[16]);
void gltf_mat_mul(const double a[16], const double b[16], double out[16]);
/* Inverse of an affine matrix; false (out = identity) when it is singular. */
bool gltf_mat_inverse(const double m[16], double out[16]);
/* Finite or 0. */
float gltf_finite(float f);
/* Normalise a vector in place; a zero or non-finite one becomes +Y. */
void gltf_vec_norm(float v[3]);

/* The JSON text of item k (gltf_json.c). */
void gltf_json_item(const struct gltf_plan *p, uint32_t k, struct buf *b);

#endif
