/*
 * glTF 2.0 binary (.glb) writer, streamed (include/psgfs/base/emit.h): the file is a run of parts
 * whose sizes are known before any byte of vertex data is read, and any byte range renders
 * from the records it covers. Nothing here knows a source format; see docs/gltf.md.
 *
 * A caller describes its model with the structures below (small: the skeleton, one record per
 * mesh, primitive, morph target, material, image and animation, plus counts) and supplies one
 * fill callback that produces any range of elements of any data stream in batches. Then:
 *
 *   gltf_bounds(&model, ctx)   one pass over POSITION, morph POSITION and animation times:
 *                              the min/max the JSON must state (stored into the model);
 *   gltf_plan(&model, &plan)   buffer views, accessors, byte offsets, the JSON's exact size;
 *   gltf_part(&plan, i, ...)   part i of the file: n items of item_size bytes (0: variable,
 *                              the JSON, one item per glTF object);
 *   gltf_render(&plan, ctx, i, first, e)  items of part i from item `first` on.
 *
 * The model must stay unchanged and alive while a plan uses it. The writer sanitises what the
 * callback gives so the file always validates: non-finite floats become 0; normals and
 * quaternions are normalised (zero ones become +Y and identity); skin influences lose joints
 * out of range, non-positive weights and duplicates, are sorted by weight and renormalised to
 * sum to 1 exactly (an influence-free vertex gets joint 0). It fails (RC_CORRUPT) on what it
 * cannot repair without changing the file's size: indices >= the vertex count, morph target
 * indices not increasing, animation times negative or not increasing.
 *
 * File layout (every chunk and buffer view 4-byte aligned; JSON padded with spaces, BIN with
 * zeros): [GLB header + JSON chunk header] [JSON] [JSON padding] [BIN chunk header], then for
 * each buffer view its data part(s) and a padding part. A model without binary data has no
 * BIN chunk.
 *
 * Conventions of the model (glTF's): right-handed, +Y up, metres by convention (the writer does
 * not scale), counter-clockwise front faces, quaternions x y z w, matrices column-major.
 */
#ifndef PSGFS_GLTF_H
#define PSGFS_GLTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/emit.h"
#include "psgfs/base/result.h"

/* An untrusted name: at most len bytes, ending early at a NUL. Written as a JSON string with
 * control bytes, quotes and backslashes escaped and invalid UTF-8 replaced by U+FFFD, cut at a
 * character boundary to GLTF_NAME_MAX bytes of UTF-8 (Blender keeps 63 and its 3.4 importer
 * fails on a name it has to cut inside a character). An empty name is written as
 * "<kind>_<index>" (node_3, target_0...). */
#define GLTF_NAME_MAX 63
struct gltf_name {
	const void *p;
	size_t len;
};

/*
 * A node: a skeleton joint or any other node (a socket, a locator). Parents come first
 * (parent < own index, or -1 for a root), so the node list is a forest. Joints are the nodes
 * with `joint` set, in node order; JOINTS_0 values index that list. When the joints do not
 * share one root the writer adds a parent node for all roots ("root"), so the skin's
 * `skeleton` is always their common root.
 */
struct gltf_node {
	struct gltf_name name;
	int32_t parent;
	float t[3], r[4], s[3]; /* local translation, rotation (x y z w), scale */
	bool joint;
	/* 1 + a mesh this node shows besides the mesh's own node (instancing: one mesh, many
	 * nodes, e.g. a district's props); 0 none. Never a skinned mesh. */
	uint32_t mesh;
	float ibm[16]; /* joints: inverse of the joint's world bind matrix (gltf_bind_ibms) */
};

/* A primitive: triangles of one material (-1: glTF's default material), or line segments
 * (`lines`: glTF mode 1, 2 indices per segment, at least 2). */
struct gltf_prim {
	int32_t material;
	uint64_t n_indices; /* 3 per triangle, at least 3 */
	bool lines;
};

/* A morph target, stored sparse: the n_sparse vertices it moves (increasing vertex indices)
 * with their deltas; every other vertex keeps a zero delta. */
struct gltf_target {
	struct gltf_name name;
	uint64_t n_sparse;
	float min[3], max[3]; /* POSITION delta bounds, from gltf_bounds */
};

/*
 * A mesh: vertices with POSITION and the optional attributes, primitives indexing them,
 * optional morph targets. Skinned meshes get JOINTS_0/WEIGHTS_0 and the model's skin; their
 * node sits at the scene root (parent transforms would not apply to a skinned mesh).
 * Indices are u16 when n_vertices <= 65535 (65535 itself is primitive restart), else u32.
 */
struct gltf_mesh {
	struct gltf_name name;
	uint64_t n_vertices;
	bool normals, colors, skinned;
	uint32_t n_uv; /* TEXCOORD_0 .. n_uv-1 */
	const struct gltf_prim *prims;
	uint32_t n_prims;
	struct gltf_target *targets;
	uint32_t n_targets;   /* morph targets carry NORMAL deltas too when `normals` */
	float min[3], max[3]; /* POSITION bounds, from gltf_bounds */
	/* Where the mesh's node sits: 0 at the scene root; k > 0 a child of node k - 1, whose
	 * transform then places it (a scene of several models). Ignored for skinned meshes. */
	uint32_t under;
};

/* An embedded image, itself a run of fixed-size parts (e.g. include/psgfs/formats/png.h's pngs). */
struct gltf_image {
	struct gltf_name name;
	const char *mime; /* "image/png" */
	unsigned n_parts;
	void (*part)(const void *ctx, unsigned part, uint64_t *n_items, uint32_t *item_size);
	enum rc (*render)(const void *ctx, unsigned part, uint64_t first, struct emit *e);
	const void *ctx;
};

/* A material: a name and optional base colour texture (an index into images, or -1). */
struct gltf_material {
	struct gltf_name name;
	int32_t image;
};

/*
 * An animation: n_channels nodes, each sampled at the same n_frames times (LINEAR), with
 * translation and rotation samplers, and scale samplers when `scale`. Channel k animates node
 * nodes[k] (nodes NULL: node k). Values stream channel-major: element k * n_frames + f is
 * channel k at frame f.
 */
struct gltf_anim {
	struct gltf_name name;
	uint32_t n_frames;
	uint32_t n_channels;
	const uint32_t *nodes;
	bool scale;
	float t_min, t_max; /* from gltf_bounds */
};

/* What the fill callback is asked for: n elements from `first`, written to out as the listed
 * host-order C types (the writer sanitises and encodes little-endian). */
enum gltf_data {
	GLTF_D_POSITION,	/* mesh: float[3] per vertex */
	GLTF_D_NORMAL,		/* mesh: float[3] per vertex */
	GLTF_D_TEXCOORD,	/* mesh, set = UV set: float[2] per vertex */
	GLTF_D_COLOR,		/* mesh: uint8_t[4] RGBA per vertex */
	GLTF_D_SKIN,		/* mesh: struct gltf_influence per vertex */
	GLTF_D_INDEX,		/* mesh, set = primitive: uint32_t per index */
	GLTF_D_TARGET_INDEX,	/* mesh, set = target: uint32_t vertex per sparse element */
	GLTF_D_TARGET_POSITION, /* mesh, set = target: float[3] per sparse element */
	GLTF_D_TARGET_NORMAL,	/* mesh, set = target: float[3] per sparse element */
	GLTF_D_TIME,		/* set = animation: float seconds per frame */
	GLTF_D_TRANSLATION,	/* set = animation: float[3] per channel-major element */
	GLTF_D_ROTATION,	/* set = animation: float[4] x y z w */
	GLTF_D_SCALE,		/* set = animation: float[3] */
};

struct gltf_influence {
	uint16_t joint[4];
	float weight[4];
};

struct gltf_req {
	enum gltf_data what;
	uint32_t mesh, set;
};

typedef enum rc (*gltf_fill_fn)(void *ctx, const struct gltf_req *q, uint64_t first, size_t n,
				void *out);

/* The batch the writer asks the callback for at most (elements). */
#define GLTF_BATCH 1024

struct gltf_model {
	const struct gltf_node *nodes;
	uint32_t n_nodes;
	struct gltf_mesh *meshes;
	uint32_t n_meshes;
	const struct gltf_material *materials;
	uint32_t n_materials;
	const struct gltf_image *images;
	uint32_t n_images;
	struct gltf_anim *anims;
	uint32_t n_anims;
	gltf_fill_fn fill;
	/* Optional: POSITION bounds found only when the JSON needs them (a scene of thousands of
	 * models plans from headers). Each bound number is then written in GLTF_BOUND_WIDTH
	 * characters, so the layout does not depend on the values, and gltf_render calls
	 * bounds_later(ctx, mesh) before a mesh's POSITION accessor, which must have set that
	 * mesh's min and max by its return (RC_OK) and be safe across threads. */
	enum rc (*bounds_later)(void *ctx, uint32_t mesh);
};

/* "%.17g" of any finite float is at most 23 characters (sign, 17 digits, point, "e-45"). */
#define GLTF_BOUND_WIDTH 23

struct gltf_view;
struct gltf_acc;
struct gltf_plan {
	const struct gltf_model *m;
	struct gltf_view *views;
	uint32_t n_views;
	struct gltf_acc *accs; /* mesh attributes, indices, targets and the IBMs */
	uint32_t n_accs;
	uint32_t *mesh_acc;  /* first accessor of mesh i; [n_meshes] = the IBM accessor */
	uint32_t *anim_acc;  /* first accessor of animation i */
	uint32_t *anim_view; /* first view of animation i */
	uint32_t *image_view;
	uint32_t n_acc_total;
	uint32_t *kid_off, *kids; /* children of each written node (CSR) */
	uint32_t *roots, n_roots; /* the scene's nodes */
	uint32_t *joints, n_joints;
	int64_t skeleton; /* common root of the joints; -1 without a skin */
	bool synth_root;  /* node n_nodes is the added common root */
	uint32_t n_out_nodes;
	uint32_t sec_first[16]; /* first JSON item of each section */
	uint32_t n_items;
	uint64_t json_len, bin_len, size;
	uint32_t json_pad;
	uint32_t n_parts;
};

/* Fill the min/max fields of the model (meshes, targets, animations) by reading the data. */
enum rc gltf_bounds(struct gltf_model *m, void *ctx);
/* The POSITION bounds of mesh mi alone, read through m->fill (what gltf_bounds sets). */
enum rc gltf_mesh_bounds(const struct gltf_model *m, void *ctx, uint32_t mi, float min[3],
			 float max[3]);

/* Lay the file out. RC_INVAL for a model that breaks the rules above (parents, counts,
 * references), RC_UNSUPPORTED when the file would pass GLB's 4 GiB limit. */
enum rc gltf_plan(const struct gltf_model *m, struct gltf_plan *p);
void gltf_plan_free(struct gltf_plan *p);
/* Heap the plan's arrays hold (for charging a cache budget). */
size_t gltf_plan_heap(const struct gltf_plan *p);
uint64_t gltf_size(const struct gltf_plan *p);
unsigned gltf_n_parts(const struct gltf_plan *p);
/* Part i: n_items of item_size bytes each; item_size 0 for the JSON (one variable part). */
void gltf_part(const struct gltf_plan *p, unsigned part, uint64_t *n_items, uint32_t *item_size);
enum rc gltf_render(const struct gltf_plan *p, void *ctx, unsigned part, uint64_t first,
		    struct emit *e);

/* ---- shared export steps ---- */

/* Inverse bind matrices of the joints from the nodes' TRS (world = parent world x T x R x S),
 * computed in double and rounded once; the bottom row is exactly 0 0 0 1. A singular world
 * matrix gets the identity. */
enum rc gltf_bind_ibms(struct gltf_node *nodes, uint32_t n);
/* Z-up right-handed (3ds Max, Unreal PSK) to glTF's Y-up: a -90 degree turn about X. */
void gltf_zup_vec(float v[3]);
/* The same turn applied to a root's local transform (children inherit it). */
void gltf_zup_root(float t[3], float r[4]);
/* a x b (Hamilton product, x y z w). */
void gltf_quat_mul(const float a[4], const float b[4], float out[4]);
/* Normalise in place; a zero or non-finite quaternion becomes the identity. */
void gltf_quat_norm(float q[4]);

/* The JSON string for a name, quotes included (exposed for tests). */
struct buf;
void gltf_json_string(struct buf *b, const struct gltf_name *n);

#endif
