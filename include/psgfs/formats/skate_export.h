/*
 * A Skate scene prepared for export, in terms any exporter can use (PSK/PSKX, glTF): which
 * meshes go out and where their vertices, faces and weights land in the file, the bones in a
 * parents-first order with bind poses in the export's axes, and the materials.
 * (docs/skate-objects.md, "Coordinate conventions", "PSK export".)
 *
 * Rules shared by every export:
 * - Meshes: every decodable mesh of the scene in scene order, at most 256 (the PSK material
 *   index is a byte); each mesh is one material named after its RenderMaterialData (else
 *   "material_NN"). Skipped meshes are listed with the reason.
 * - Bones: parents before children (smallest ready scene index first); extra roots hang from
 *   the first root, so there is one root; a scene without bones gets one identity bone "root".
 *   Names are printable ASCII, at most 63 bytes, unique ignoring case.
 * - Axes: the PSG's model space is Y-up right-handed. zup rotates everything +90 degrees
 *   about X ((x, y, z) -> (x, -z, y)), the space PSK importers expect.
 * - Skin: per vertex at most 4 influences (skate_mesh_read_vertices); a vertex with none
 *   weighs 1 on the root.
 * - Sizes come from the scene alone, so an export's size costs no pass over mesh data: every
 *   raw index triple is a face (one naming a vertex past the vertex count becomes a degenerate
 *   face on the mesh's first vertex, and errors-full.txt lists it); every vertex has as many
 *   weight records as its mesh has influence slots (1 for a static mesh, else the blend
 *   indices' components, at most 4), the unused ones with weight 0.
 */
#ifndef PSGFS_SKATE_EXPORT_H
#define PSGFS_SKATE_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/diag.h"
#include "psgfs/base/emit.h"
#include "psgfs/formats/psk.h"
#include "psgfs/formats/skate_mesh.h"

#define SKX_MAX_MATERIALS 256u
#define SKX_MAX_UV	  8u

struct skate_export_bone {
	char name[PSK_NAME_LEN];
	uint32_t scene; /* scene bone, SKATE_NONE for the synthesized root */
	int32_t parent; /* export index; -1 for the root (bone 0) */
	uint32_t children;
	float world_t[3], world_q[4]; /* bind pose, export axes */
	float local_t[3], local_q[4]; /* relative to the parent (standard quaternion) */
};

struct skate_export_mesh {
	uint32_t scene;	   /* scene mesh index */
	uint32_t material; /* export material index */
	uint32_t n_verts;
	uint64_t vert_base;		 /* first export vertex (PSK point and wedge) */
	uint64_t face_base, weight_base; /* first face, first weight record */
	uint64_t n_faces;		 /* raw index triples */
	unsigned slots;			 /* weight records per vertex */
	int pos, normal, color;		 /* usable-element index, -1 absent */
	int uv[SKX_MAX_UV];		 /* texcoord sets 0.. */
	struct skate_mesh_stats *st;	 /* with stats: owned */
};

struct skate_export_model {
	bool zup;
	bool with_stats;
	struct skate_export_bone *bones;
	uint32_t n_bones;
	uint32_t *pos; /* scene bone -> export bone */
	struct skate_export_mesh *meshes;
	uint32_t n_meshes;
	char (*materials)[PSK_NAME_LEN];
	uint32_t n_materials;
	uint64_t n_verts, n_faces, n_weights;
	bool all_normals;    /* every exported mesh has normals */
	bool any_colors;     /* some exported mesh has vertex colours */
	unsigned n_uv_sets;  /* most texcoord sets of any exported mesh */
	struct diag skipped; /* one line per mesh left out, and why */
};

/*
 * Plan the export of a scene from the scene alone. with_stats also runs each exported mesh's
 * stats pass (position bounds for glTF; a mesh whose data cannot be read is then skipped).
 * RC_NOMEM only.
 */
enum rc skate_export_build(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			   bool zup, bool with_stats, struct skate_export_model **out);
void skate_export_free(struct skate_export_model *m);
size_t skate_export_bytes(const struct skate_export_model *m);

/* The exported mesh holding export vertex / face / weight number i. */
uint32_t skate_export_mesh_of_vertex(const struct skate_export_model *m, uint64_t i);
uint32_t skate_export_mesh_of_face(const struct skate_export_model *m, uint64_t i);
uint32_t skate_export_mesh_of_weight(const struct skate_export_model *m, uint64_t i);
/* Export bone k's bind pose relative to its parent in the PSG's model space (Y-up), whatever
 * axes the model was built for (glTF wants model space; the .psk may not). */
void skate_export_bone_model_local(const struct skate_scene *sc, const struct skate_export_model *m,
				   uint32_t k, float t[3], float q[4]);
/* A position or direction in the export's axes. */
void skate_export_axes(const struct skate_export_model *m, const float in[3], float out[3]);

/* The PSK counts of the model; pskx: normals, colours and extra UV sets too. */
void skate_export_psk_counts(const struct skate_export_model *m, bool pskx, struct psk_counts *k);

/*
 * Records of the PSK view of the model, from record `first` of chunk c on, until emit says
 * stop: PNTS0000, VTXW0000, FACE0000/3200 (winding a c b), MATT0000, REFSKELT (root plain,
 * children conjugated), RAWWEIGHTS, VTXNORMS, VERTEXCOLOR, EXTRAUVSn.
 */
enum rc skate_export_psk_records(const struct src *s, const struct arena *a,
				 const struct skate_scene *sc, const struct skate_export_model *m,
				 const struct ax_chunk *c, uint64_t first, struct emit *e);

/*
 * The scene as one PSK in memory, for tests and tools (the writer profile of docs/psk-psa.md,
 * via psk_write): every ok mesh, one material per exported mesh (its name, else
 * "material_NN"), one point and one wedge per vertex (UV set 0), faces (a c b) with material =
 * exported mesh ordinal, bones parents first (extra roots hang from the first root), positions
 * parent-relative, quaternions root plain / children conjugated, RAWWEIGHTS from the skin.
 * No extension chunks. *is_pskx: more than 65536 wedges (FACE3200; name the file .pskx).
 */
enum rc skate_export_psk(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			 bool zup, struct buf *out, bool *is_pskx);

#endif
