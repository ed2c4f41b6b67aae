/*
 * Internals of the streaming mesh decode: skate_stream.c (the skin rules, the vertex and
 * triangle batches) defines these, skate_mesh_stats.c (the statistics pass) and
 * skate_mesh_decode.c (one mesh decoded whole) use them; skate_stream.c calls neither.
 */
#ifndef PSGFS_SKATE_STREAM_INT_H
#define PSGFS_SKATE_STREAM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/formats/skate_mesh.h"

/* Whether components of this ctype are stored as integers. */
static inline bool sks_int_ctype(uint8_t ctype)
{
	return ctype == SKATE_CT_U8 || ctype == SKATE_CT_S16 || ctype == SKATE_CT_U16 ||
	       ctype == SKATE_CT_U8_WORD;
}

/* What skin_vertex needs to know about a mesh, fixed for all its vertices. */
struct sks_skin_rules {
	const int32_t *palette; /* global bone per slot, -1 = dropped */
	uint32_t n_palette;
	int ie, we;	      /* element (in skate_vbatch order) of indices / weights, -1 */
	unsigned ni, nw;      /* their floats per vertex */
	bool implicit;	      /* three weights for four indices: the last is 1 - sum */
	bool rigid;	      /* no blend elements: every vertex on one bone */
	uint32_t rigid_to;    /* that bone */
	bool no_bones;	      /* rigid and no skeleton: no influence at all */
	bool int_slots;	      /* the indices are stored as integers: always whole */
	uint8_t comp_mask;    /* bit j: blend component j exists (j < ni, or nw without indices) */
	int32_t bone_of[256]; /* the palette of the first 256 slots, -1 past it or dropped */
	bool slot_unique;     /* <= 64 slots, no two naming the same bone */
};

/* The skin rules of a mesh whose usable elements are el[0..n_el). */
void sks_skin_rules_init(struct sks_skin_rules *k, const struct skate_scene *sc,
			 const struct skate_scene_mesh *m, const struct skate_elem *el,
			 unsigned n_el);
/*
 * One vertex's influences from its decoded indices iv and weights wv (NULL when the mesh has
 * none), before normalisation: *sum gets their total. Returns their number, 0 when the
 * weights add up to nothing (unweighted). *bad counts blend indices outside the palette and
 * *first_slot gets the first such value when *bad was 0.
 */
unsigned sks_skin_gather(const struct sks_skin_rules *k, const float *iv, const float *wv,
			 struct skate_influence o[4], float *sum, uint64_t *bad, float *first_slot);
/* The mesh, when it exists and can be decoded: RC_NOENT past the scene, RC_CORRUPT broken. */
enum rc sks_mesh_get(const struct skate_scene *sc, size_t mesh, const struct skate_scene_mesh **m);

/* Index value k of a buffer of width-byte indices. */
static inline uint32_t sks_index_at(const uint8_t *p, size_t k, uint32_t width, bool be)
{
	if (width == 2)
		return be ? ld_u16be(p + 2 * k) : ld_u16le(p + 2 * k);
	return be ? ld_u32be(p + 4 * k) : ld_u32le(p + 4 * k);
}

/* The vertex an index value names in an island with this base vertex; UINT32_MAX (never a
 * vertex) when the sum leaves 0..UINT32_MAX - 1. */
static inline uint32_t sks_based(uint32_t v, int32_t base)
{
	int64_t x = (int64_t)v + base;

	return x < 0 || x >= UINT32_MAX ? UINT32_MAX : (uint32_t)x;
}

/* The diag lines skate_mesh_decode has always written for skin and triangle problems (the
 * statistics pass writes the same). */
void sks_skin_diag(struct diag *d, size_t mi, uint32_t n_palette, uint64_t bad, uint32_t first_v,
		   float first_slot, uint32_t unweighted);
void sks_tri_diag(struct diag *d, size_t mi, uint32_t n_verts, uint64_t bad, uint32_t value,
		  uint64_t triangle);

#endif
