/* RenderModelData (pegasus::tRModelData; docs/skate-objects.md, "RenderModelData"): bone names,
 * inverse bind matrices, mesh table, island AABBs and areas. There are no parent indices. */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_mesh.h"

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

static void model_header(struct br *r, struct skate_model *out)
{
	for (int i = 0; i < 8; i++)
		out->bbox[i] = br_f32(r);
	out->ibp_off = br_u32(r);
	out->mesh_table_off = br_u32(r);
	out->name_table_off = br_u32(r);
	out->name_list_off = br_u32(r);
	out->num_total_bones = br_u16(r);
	out->num_meshes = br_u16(r);
	out->num_bones = br_u16(r);
	out->num_islands = br_u16(r);
	out->aabbs_off = br_u32(r);
	out->areas_off = br_u32(r);
}

/* Bones whose matrix and name-table slot both lie inside the object. */
static uint32_t model_bone_count(const struct skate_model *m, size_t n, uint32_t idx,
				 struct diag *d)
{
	uint64_t nb = m->num_bones, k = fit(n, m->ibp_off, 64);

	if (nb > k) {
		diag_add(
		    d,
		    "object %u (RenderModelData): %u bones but room for %llu inverse bind matrices",
		    idx, m->num_bones, (unsigned long long)k);
		nb = k;
	}
	k = fit(n, m->name_table_off, 4);
	if (nb > k) {
		diag_add(
		    d, "object %u (RenderModelData): %u bones but room for %llu bone name offsets",
		    idx, m->num_bones, (unsigned long long)k);
		nb = k;
	}
	return (uint32_t)nb;
}

static enum rc model_bones(const struct br *o, size_t n, uint32_t idx, struct skate_model *out,
			   struct diag *d)
{
	struct br r = br_at(o->p, n, o->be, out->ibp_off);

	out->n_bones = model_bone_count(out, n, idx, d);
	out->ibp = xcalloc_n(out->n_bones, sizeof *out->ibp);
	out->names = xcalloc_n(out->n_bones, sizeof *out->names);
	if (!out->ibp || !out->names)
		return RC_NOMEM;
	for (uint32_t b = 0; b < out->n_bones; b++)
		for (int j = 0; j < 16; j++)
			out->ibp[b][j] = br_f32(&r);
	r = br_at(o->p, n, o->be, out->name_table_off);
	for (uint32_t b = 0; b < out->n_bones; b++) {
		uint32_t off = br_u32(&r);
		bool bad;

		out->names[b] = name_at(o->p, n, off, &bad);
		if (!out->names[b])
			return RC_NOMEM;
		if (bad)
			diag_add(d, "object %u (RenderModelData): bone %u name at 0x%x %s", idx, b,
				 off, off >= n ? "past the object" : "not terminated");
	}
	return RC_OK;
}

/* Cap a table's record count by the room the object has, with a diag line. */
static uint32_t model_table_count(size_t n, uint32_t off, size_t size, uint32_t count, uint32_t idx,
				  const char *what, struct diag *d)
{
	uint64_t k = fit(n, off, size);

	if (count > k) {
		diag_add(d, "object %u (RenderModelData): %u %s but room for %llu", idx, count,
			 what, (unsigned long long)k);
		return (uint32_t)k;
	}
	return count;
}

static enum rc model_tables(const struct br *o, size_t n, uint32_t idx, struct skate_model *out,
			    struct diag *d)
{
	struct br r;

	out->n_meshes =
	    model_table_count(n, out->mesh_table_off, 8, out->num_meshes, idx, "meshes", d);
	out->n_aabbs =
	    model_table_count(n, out->aabbs_off, 32, out->num_islands, idx, "island AABBs", d);
	out->n_areas =
	    model_table_count(n, out->areas_off, 16, out->num_islands, idx, "island areas", d);
	out->meshes = xcalloc_n(out->n_meshes, sizeof *out->meshes);
	out->aabbs = xcalloc_n(out->n_aabbs, sizeof *out->aabbs);
	out->areas = xcalloc_n(out->n_areas, sizeof *out->areas);
	if (!out->meshes || !out->aabbs || !out->areas)
		return RC_NOMEM;
	r = br_at(o->p, n, o->be, out->mesh_table_off);
	for (uint32_t m = 0; m < out->n_meshes; m++) {
		out->meshes[m].mesh = br_u32(&r);
		out->meshes[m].material = br_u32(&r);
	}
	r = br_at(o->p, n, o->be, out->aabbs_off);
	for (uint32_t i = 0; i < out->n_aabbs; i++)
		for (int j = 0; j < 8; j++)
			out->aabbs[i][j] = br_f32(&r);
	r = br_at(o->p, n, o->be, out->areas_off);
	for (uint32_t i = 0; i < out->n_areas; i++)
		for (int j = 0; j < 4; j++)
			out->areas[i][j] = br_f32(&r);
	return RC_OK;
}

enum rc skate_model_decode(const uint8_t *p, size_t n, bool be, uint32_t idx,
			   struct skate_model *out, struct diag *d)
{
	struct br r;

	memset(out, 0, sizeof *out);
	if (n < MODEL_HDR) {
		diag_add(d, "object %u (RenderModelData): %zu bytes, header needs 0x40", idx, n);
		return RC_CORRUPT;
	}
	br_init(&r, p, n, be);
	model_header(&r, out);
	if (model_bones(&r, n, idx, out, d) != RC_OK || model_tables(&r, n, idx, out, d) != RC_OK) {
		skate_model_free(out);
		return RC_NOMEM;
	}
	return RC_OK;
}

enum rc skate_model_parse(const uint8_t *p, size_t n, uint32_t idx, struct skate_model *out,
			  struct diag *d)
{
	return skate_model_decode(p, n, true, idx, out, d);
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
