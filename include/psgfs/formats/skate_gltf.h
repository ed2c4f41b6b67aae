/*
 * A Skate model as glTF (docs/gltf.md, "PSG models"): the export model of skate_export.h (the
 * same meshes, bones and materials as the .psk) written through include/psgfs/formats/gltf.h. One
 * glTF mesh per exported mesh, each one primitive of its material, skinned by one skin over every
 * bone; positions, normals, UV sets and colours as the PSG stores them (its model space is
 * glTF's: Y-up, right-handed, counter-clockwise), whatever axes the .psk uses. Vertex data is
 * read in batches while rendering; the export keeps only the bones, the per-mesh records and
 * the plan. Images (a material's base colour) come from the caller.
 */
#ifndef PSGFS_SKATE_GLTF_H
#define PSGFS_SKATE_GLTF_H

#include <stdint.h>

#include "psgfs/base/diag.h"
#include "psgfs/base/emit.h"
#include "psgfs/formats/gltf.h"
#include "psgfs/formats/skate_export.h"

struct skate_gltf;

/*
 * Plan the .glb of export model m (built with stats) of scene sc. images: n_images embedded
 * pictures; mat_image[k]: the image of export material k, or -1 (mat_image may be NULL). The
 * scene, the model and the images must outlive the export. One pass over the positions finds
 * the bounds glTF states. notes (may be NULL): meshes left out and why.
 */
enum rc skate_gltf_open(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			const struct skate_export_model *m, const struct gltf_image *images,
			uint32_t n_images, const int32_t *mat_image, struct skate_gltf **out,
			struct diag *notes);
/* The model alone, from headers (m may be built without stats): no bounds (zeros), no plan
 * (skate_gltf_plan is empty); for a scene that finds the bounds of each mesh when it needs them
 * (skate_gltf_mesh_bounds). Fills as skate_gltf_open's. */
enum rc skate_gltf_shape(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			 const struct skate_export_model *m, const struct gltf_image *images,
			 uint32_t n_images, const int32_t *mat_image, struct skate_gltf **out);
/* The POSITION bounds of glTF mesh `mesh`, as skate_gltf_open states them. */
enum rc skate_gltf_mesh_bounds(const struct skate_gltf *g, const struct src *s, uint32_t mesh,
			       float min[3], float max[3]);
const struct gltf_plan *skate_gltf_plan(const struct skate_gltf *g);
/* Memory the export holds (cache accounting). */
size_t skate_gltf_bytes(const struct skate_gltf *g);
/* Items of part `part` from `first` on (include/psgfs/formats/gltf.h). */
enum rc skate_gltf_render(const struct skate_gltf *g, const struct src *s, unsigned part,
			  uint64_t first, struct emit *e);
void skate_gltf_free(struct skate_gltf *g);
/* The model the export describes (meshes with their bounds, materials, images), and its data
 * as the model's fill callback gives it: for a scene made of several exports. */
const struct gltf_model *skate_gltf_model(const struct skate_gltf *g);
enum rc skate_gltf_fill(const struct skate_gltf *g, const struct src *s, const struct gltf_req *q,
			uint64_t first, size_t n, void *out);

#endif
