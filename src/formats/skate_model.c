/* RenderModelData (pegasus::tRModelData, spec rw4-arena.md §8.6, §16.11): bone names, inverse
 * bind matrices, mesh table, island AABBs and areas. There are no parent indices. */
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psgfs/skate_mesh.h"

#define MODEL_HDR 0x40u

/* How many records of `size` bytes fit at off in an n-byte object (0 when off is past it). */
static uint64_t fit(size_t n, uint32_t off, size_t size)
{
	return off > n ? 0 : (n - off) / size;
}

/* Copy of the NUL-terminated string at object-relative off; "" when off is bad. */
static char *name_at(const uint8_t *p, size_t n, uint32_t off, bool *bad)
{
	const uint8_t *nul;
	size_t len;
	char *s;

	*bad = false;
	if (off >= n) {
		*bad = true;
		return strdup("");
	}
	nul = memchr(p + off, 0, n - off);
	len = nul ? (size_t)(nul - (p + off)) : n - off;
	if (!nul)
		*bad = true;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	memcpy(s, p + off, len);
	s[len] = 0;
	return s;
}

enum rc skate_model_parse(const uint8_t *p, size_t n, uint32_t idx, struct skate_model *out,
			  struct diag *d)
{
	uint64_t nb, k;

	memset(out, 0, sizeof *out);
	if (n < MODEL_HDR) {
		diag_add(d, "object %u (RenderModelData): %zu bytes, header needs 0x40", idx, n);
		return RC_CORRUPT;
	}
	for (int i = 0; i < 8; i++)
		out->bbox[i] = f32_from_bits(ld_u32be(p + 4 * i));
	out->ibp_off = ld_u32be(p + 0x20);
	out->mesh_table_off = ld_u32be(p + 0x24);
	out->name_table_off = ld_u32be(p + 0x28);
	out->name_list_off = ld_u32be(p + 0x2C);
	out->num_total_bones = ld_u16be(p + 0x30);
	out->num_meshes = ld_u16be(p + 0x32);
	out->num_bones = ld_u16be(p + 0x34);
	out->num_islands = ld_u16be(p + 0x36);
	out->aabbs_off = ld_u32be(p + 0x38);
	out->areas_off = ld_u32be(p + 0x3C);

	nb = out->num_bones;
	k = fit(n, out->ibp_off, 64);
	if (nb > k) {
		diag_add(
		    d,
		    "object %u (RenderModelData): %u bones but room for %llu inverse bind matrices",
		    idx, out->num_bones, (unsigned long long)k);
		nb = k;
	}
	k = fit(n, out->name_table_off, 4);
	if (nb > k) {
		diag_add(
		    d, "object %u (RenderModelData): %u bones but room for %llu bone name offsets",
		    idx, out->num_bones, (unsigned long long)k);
		nb = k;
	}
	out->n_bones = (uint32_t)nb;
	out->ibp = xcalloc_n(out->n_bones, sizeof *out->ibp);
	out->names = xcalloc_n(out->n_bones, sizeof *out->names);
	if (!out->ibp || !out->names)
		goto nomem;
	for (uint32_t b = 0; b < out->n_bones; b++) {
		uint32_t off = ld_u32be(p + out->name_table_off + 4 * b);
		bool bad;

		for (int j = 0; j < 16; j++)
			out->ibp[b][j] = f32_from_bits(ld_u32be(p + out->ibp_off + 64 * b + 4 * j));
		out->names[b] = name_at(p, n, off, &bad);
		if (!out->names[b])
			goto nomem;
		if (bad)
			diag_add(d, "object %u (RenderModelData): bone %u name at 0x%x %s", idx, b,
				 off, off >= n ? "past the object" : "not terminated");
	}

	k = fit(n, out->mesh_table_off, 8);
	out->n_meshes = out->num_meshes;
	if (out->n_meshes > k) {
		diag_add(d, "object %u (RenderModelData): %u meshes but room for %llu", idx,
			 out->num_meshes, (unsigned long long)k);
		out->n_meshes = (uint32_t)k;
	}
	out->meshes = xcalloc_n(out->n_meshes, sizeof *out->meshes);
	if (!out->meshes)
		goto nomem;
	for (uint32_t m = 0; m < out->n_meshes; m++) {
		out->meshes[m].mesh = ld_u32be(p + out->mesh_table_off + 8 * m);
		out->meshes[m].material = ld_u32be(p + out->mesh_table_off + 8 * m + 4);
	}

	k = fit(n, out->aabbs_off, 32);
	out->n_aabbs = out->num_islands;
	if (out->n_aabbs > k) {
		diag_add(d, "object %u (RenderModelData): %u island AABBs but room for %llu", idx,
			 out->num_islands, (unsigned long long)k);
		out->n_aabbs = (uint32_t)k;
	}
	k = fit(n, out->areas_off, 16);
	out->n_areas = out->num_islands;
	if (out->n_areas > k) {
		diag_add(d, "object %u (RenderModelData): %u island areas but room for %llu", idx,
			 out->num_islands, (unsigned long long)k);
		out->n_areas = (uint32_t)k;
	}
	out->aabbs = xcalloc_n(out->n_aabbs, sizeof *out->aabbs);
	out->areas = xcalloc_n(out->n_areas, sizeof *out->areas);
	if (!out->aabbs || !out->areas)
		goto nomem;
	for (uint32_t i = 0; i < out->n_aabbs; i++)
		for (int j = 0; j < 8; j++)
			out->aabbs[i][j] =
			    f32_from_bits(ld_u32be(p + out->aabbs_off + 32 * i + 4 * j));
	for (uint32_t i = 0; i < out->n_areas; i++)
		for (int j = 0; j < 4; j++)
			out->areas[i][j] =
			    f32_from_bits(ld_u32be(p + out->areas_off + 16 * i + 4 * j));
	return RC_OK;
nomem:
	skate_model_free(out);
	return RC_NOMEM;
}

void skate_model_free(struct skate_model *m)
{
	if (m->names)
		for (uint32_t b = 0; b < m->n_bones; b++)
			free(m->names[b]);
	free(m->names);
	free(m->ibp);
	free(m->meshes);
	free(m->aabbs);
	free(m->areas);
	memset(m, 0, sizeof *m);
}
