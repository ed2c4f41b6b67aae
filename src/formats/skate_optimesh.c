/* RenderOptiMeshData (pegasus::tROptiMeshData, spec rw4-arena.md §8.5): references, islands as
 * 12-byte PS3 DrawIndexedParameters and the bone palette at +0x4C / +0x48 (never +0x6C). */
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psgfs/skate_mesh.h"

#define OPTI_HDR 0x60u
#define DIP_SIZE 12u

enum rc skate_optimesh_parse(const uint8_t *p, size_t n, uint32_t idx, struct skate_optimesh *out,
			     struct diag *d)
{
	uint64_t cnt;

	memset(out, 0, sizeof *out);
	if (n < OPTI_HDR) {
		diag_add(d, "object %u (RenderOptiMeshData): %zu bytes, header needs 0x60", idx, n);
		return RC_CORRUPT;
	}
	for (int i = 0; i < 8; i++)
		out->bbox[i] = f32_from_bits(ld_u32be(p + 4 * i));
	out->num_verts = ld_u32be(p + 0x20);
	out->material = ld_u32be(p + 0x24);
	out->vdes = ld_u32be(p + 0x28);
	out->mesh_helper = ld_u32be(p + 0x2C);
	out->ib = ld_u32be(p + 0x30);
	out->vb = ld_u32be(p + 0x34);
	out->num_islands = ld_u32be(p + 0x38);
	out->island_areas = ld_u32be(p + 0x3C);
	out->island_aabbs = ld_u32be(p + 0x40);
	out->draw_params = ld_u32be(p + 0x44);
	out->num_remap = ld_u32be(p + 0x48);
	out->remap_table = ld_u32be(p + 0x4C);
	out->num_blend_shapes = ld_u32be(p + 0x50);
	out->blend_shape_table = ld_u32be(p + 0x54);
	out->blend_shape_names = ld_u32be(p + 0x58);
	out->pad = ld_u32be(p + 0x5C);

	cnt = out->num_islands;
	if (out->draw_params > n) {
		diag_add(d,
			 "object %u (RenderOptiMeshData): draw parameters at 0x%x past the object "
			 "(%zu bytes)",
			 idx, out->draw_params, n);
		cnt = 0;
	} else if (cnt > (n - out->draw_params) / DIP_SIZE) {
		diag_add(d, "object %u (RenderOptiMeshData): %u islands but room for %zu", idx,
			 out->num_islands, (n - out->draw_params) / DIP_SIZE);
		cnt = (n - out->draw_params) / DIP_SIZE;
	}
	out->n_islands = (uint32_t)cnt;
	out->islands = xcalloc_n(out->n_islands, sizeof *out->islands);
	if (!out->islands)
		return RC_NOMEM;
	for (uint32_t i = 0; i < out->n_islands; i++) {
		const uint8_t *e = p + out->draw_params + DIP_SIZE * i;

		out->islands[i].start = ld_u32be(e);
		out->islands[i].count = ld_u32be(e + 4);
		out->islands[i].prim = e[8];
		memcpy(out->islands[i].pad, e + 9, 3);
	}

	cnt = out->num_remap;
	if (out->remap_table > n) {
		diag_add(d,
			 "object %u (RenderOptiMeshData): remap table at 0x%x past the object (%zu "
			 "bytes)",
			 idx, out->remap_table, n);
		cnt = 0;
	} else if (cnt > (n - out->remap_table) / 2) {
		diag_add(d, "object %u (RenderOptiMeshData): %u remap entries but room for %zu",
			 idx, out->num_remap, (n - out->remap_table) / 2);
		cnt = (n - out->remap_table) / 2;
	}
	out->n_remap = (uint32_t)cnt;
	out->remap = xcalloc_n(out->n_remap, sizeof *out->remap);
	if (!out->remap) {
		skate_optimesh_free(out);
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i < out->n_remap; i++)
		out->remap[i] = ld_u16be(p + out->remap_table + 2 * i);
	return RC_OK;
}

void skate_optimesh_free(struct skate_optimesh *m)
{
	free(m->islands);
	free(m->remap);
	memset(m, 0, sizeof *m);
}
