/*
 * Internals of the skinned model generator (gen_psg_skinned.h): gen_psg_skinned.c builds the
 * arena and calls gen_skinned_bones.c for the skeleton and gen_skinned_mesh.c for each mesh's
 * vertices; all three use gen_skinned_base.c's writers and math, which calls none of them.
 */
#ifndef PSGFS_GEN_SKINNED_INT_H
#define PSGFS_GEN_SKINNED_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/result.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/prng.h"

/* A PS3 vertex layout of the presets (GEN_SK_PRESETS of them, in gen_psg_skinned.c). */
struct gsk_layout {
	uint16_t stride;
	unsigned n;
	struct psgo_vdes_elem el[6];
	uint32_t index_width;
	bool skinned;
	uint8_t idx_off, w_off; /* blend indices and weights (skinned layouts) */
	const char *pos_encoding;
};

/* gen_skinned_base.c: big-endian stores, and the truth's quaternion math (x, y, z, w),
 * independent of skate_skeleton.c. */
void gsk_put16(uint8_t *p, uint16_t v);
void gsk_put32(uint8_t *p, uint32_t v);
/* Half bits of a float that is exactly representable as a normal half (or zero). */
uint16_t gsk_half_bits(float f);
void gsk_qmul(const double a[4], const double b[4], double o[4]);
void gsk_qmat(const double q[4], double r[3][3]);

/* gen_skinned_bones.c: t->n_bones bones (names, parents, inverse bind poses, bind poses and
 * hierarchy.tsv) into t; skater: the skater-shaped skeleton, rig: rig names. RC_NOMEM only. */
enum rc gsk_make_bones(struct prng *r, struct gen_skinned_truth *t, bool skater, bool rig);

/* gen_skinned_mesh.c: m->n_verts vertices of layout L into vb (n_verts * L->stride bytes)
 * and their truth into m, the skeleton's t made first. RC_NOMEM only. */
enum rc gsk_make_mesh(struct prng *r, const struct gen_skinned_truth *t,
		      struct gen_skinned_mesh_truth *m, const struct gsk_layout *L, uint8_t *vb);

#endif
