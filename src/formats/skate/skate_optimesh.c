/* RenderOptiMeshData (pegasus::tROptiMeshData; docs/skate-objects.md, "RenderOptiMeshData"):
 * references, islands as the platform's DrawIndexedParameters and the bone palette at
 * +0x4C / +0x48 (never +0x6C). */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_platform.h"

#define OPTI_HDR 0x60u

static void opti_header(struct br *r, struct skate_optimesh *out)
{
	for (int i = 0; i < 8; i++)
		out->bbox[i] = br_f32(r);
	out->num_verts = br_u32(r);
	out->material = br_u32(r);
	out->vdes = br_u32(r);
	out->mesh_helper = br_u32(r);
	out->ib = br_u32(r);
	out->vb = br_u32(r);
	out->num_islands = br_u32(r);
	out->island_areas = br_u32(r);
	out->island_aabbs = br_u32(r);
	out->draw_params = br_u32(r);
	out->num_remap = br_u32(r);
	out->remap_table = br_u32(r);
	out->num_blend_shapes = br_u32(r);
	out->blend_shape_table = br_u32(r);
	out->blend_shape_names = br_u32(r);
	out->pad = br_u32(r);
}

/* How many of `count` records (`items`) of `size` bytes in the table `what` at
 * object-relative `off` fit in n bytes. */
static uint32_t opti_fit(size_t n, uint32_t off, uint32_t count, uint32_t size, uint32_t idx,
			 const char *what, const char *items, struct diag *d)
{
	if (off > n) {
		diag_add(d,
			 "object %u (RenderOptiMeshData): %s at 0x%x past the object (%zu bytes)",
			 idx, what, off, n);
		return 0;
	}
	if (count > (n - off) / size) {
		diag_add(d, "object %u (RenderOptiMeshData): %u %s but room for %zu", idx, count,
			 items, (n - off) / size);
		return (uint32_t)((n - off) / size);
	}
	return count;
}

static enum rc opti_islands(const struct skate_platform *pl, const struct br *o, size_t n,
			    uint32_t idx, struct skate_optimesh *out, struct diag *d)
{
	struct br r = br_at(o->p, n, o->be, out->draw_params);

	out->n_islands = opti_fit(n, out->draw_params, out->num_islands, pl->dip_size, idx,
				  "draw parameters", "islands", d);
	out->islands = xcalloc_n(out->n_islands, sizeof *out->islands);
	if (!out->islands)
		return RC_NOMEM;
	for (uint32_t i = 0; i < out->n_islands; i++) {
		br_seek(&r, out->draw_params + (size_t)pl->dip_size * i);
		pl->dip_decode(&r, &out->islands[i]);
	}
	return RC_OK;
}

static enum rc opti_remap(const struct br *o, size_t n, uint32_t idx, struct skate_optimesh *out,
			  struct diag *d)
{
	struct br r = br_at(o->p, n, o->be, out->remap_table);

	out->n_remap = opti_fit(n, out->remap_table, out->num_remap, 2, idx, "remap table",
				"remap entries", d);
	out->remap = xcalloc_n(out->n_remap, sizeof *out->remap);
	if (!out->remap)
		return RC_NOMEM;
	for (uint32_t i = 0; i < out->n_remap; i++)
		out->remap[i] = br_u16(&r);
	return RC_OK;
}

enum rc skate_optimesh_decode(const struct skate_platform *pl, const uint8_t *p, size_t n, bool be,
			      uint32_t idx, struct skate_optimesh *out, struct diag *d)
{
	struct br r;

	memset(out, 0, sizeof *out);
	if (n < OPTI_HDR) {
		diag_add(d, "object %u (RenderOptiMeshData): %zu bytes, header needs 0x60", idx, n);
		return RC_CORRUPT;
	}
	br_init(&r, p, n, be);
	opti_header(&r, out);
	if (opti_islands(pl, &r, n, idx, out, d) != RC_OK ||
	    opti_remap(&r, n, idx, out, d) != RC_OK) {
		skate_optimesh_free(out);
		return RC_NOMEM;
	}
	return RC_OK;
}

enum rc skate_optimesh_parse(const uint8_t *p, size_t n, uint32_t idx, struct skate_optimesh *out,
			     struct diag *d)
{
	return skate_optimesh_decode(&skate_platform_ps3, p, n, true, idx, out, d);
}

void skate_optimesh_free(struct skate_optimesh *m)
{
	free(m->islands);
	free(m->remap);
	memset(m, 0, sizeof *m);
}
