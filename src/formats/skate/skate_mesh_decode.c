/*
 * One mesh decoded whole (skate_mesh_decode): every vertex with its skin and every valid
 * triangle, read through the batches of skate_stream.c (skate_stream_int.h).
 */
#include <stdlib.h>
#include <string.h>

#include "formats/skate/skate_stream_int.h"
#include "psgfs/base/bytes.h"

/* ---- one mesh decoded whole ---- */

#define MAX_DECODE_VERTS (1u << 26)

void skate_mesh_data_free(struct skate_mesh_data *md)
{
	if (!md)
		return;
	for (unsigned i = 0; i < md->n_attr; i++)
		free(md->attr[i].v);
	free(md->n_infl);
	free(md->infl);
	free(md->tri);
	free(md->tri_island);
	free(md);
}

size_t skate_mesh_data_bytes(const struct skate_mesh_data *md)
{
	size_t t;

	if (!md)
		return 0;
	t = sizeof *md + md->n_tri * (sizeof *md->tri + sizeof *md->tri_island);
	for (unsigned i = 0; i < md->n_attr; i++)
		t += (size_t)md->n_verts * md->attr[i].n * sizeof(float);
	if (md->infl)
		t += (size_t)md->n_verts * (sizeof *md->infl + 1);
	return t;
}

/* The usage in the PS3 element numbering, for renderers written against skate_etype. */
static uint8_t legacy_type(const struct skate_elem *e)
{
	static const uint8_t t[] = {
	    [SKATE_USAGE_POSITION] = SKATE_ET_XYZ,
	    [SKATE_USAGE_NORMAL] = SKATE_ET_NORMAL,
	    [SKATE_USAGE_TANGENT] = SKATE_ET_TANGENT,
	    [SKATE_USAGE_BINORMAL] = SKATE_ET_BINORMAL,
	    [SKATE_USAGE_COLOR] = SKATE_ET_COLOR,
	    [SKATE_USAGE_SPECULAR] = SKATE_ET_SPECULAR,
	    [SKATE_USAGE_BLEND_WEIGHTS] = SKATE_ET_WEIGHTS,
	    [SKATE_USAGE_BLEND_INDICES] = SKATE_ET_INDICES,
	};

	if (e->usage == SKATE_USAGE_TEXCOORD && e->set < 6)
		return (uint8_t)(SKATE_ET_TEX0 + e->set);
	if (e->usage < sizeof t / sizeof t[0] && e->usage != SKATE_USAGE_TEXCOORD)
		return t[e->usage];
	return e->stored_type;
}

/* Which of the decoded mesh's attribute indices an element fills, NULL for none. */
static int *attr_slot(struct skate_mesh_data *md, const struct skate_elem *e)
{
	switch (e->usage) {
	case SKATE_USAGE_POSITION:
		return &md->pos;
	case SKATE_USAGE_NORMAL:
		return &md->normal;
	case SKATE_USAGE_TANGENT:
		return &md->tangent;
	case SKATE_USAGE_BINORMAL:
		return &md->binormal;
	case SKATE_USAGE_COLOR:
		return &md->color;
	case SKATE_USAGE_BLEND_WEIGHTS:
		return &md->weights;
	case SKATE_USAGE_BLEND_INDICES:
		return &md->indices;
	case SKATE_USAGE_TEXCOORD:
		return e->set < 6 ? &md->tex[e->set] : NULL;
	default:
		return NULL;
	}
}

/* An empty decoded mesh with room for every usable element and the skin. */
static struct skate_mesh_data *md_new(const struct skate_scene_mesh *m)
{
	struct skate_mesh_data *md = calloc(1, sizeof *md);

	if (!md)
		return NULL;
	md->n_verts = m->vertex_count;
	md->pos = md->normal = md->tangent = md->binormal = md->color = md->weights = -1;
	md->indices = -1;
	for (int i = 0; i < 6; i++)
		md->tex[i] = -1;
	md->n_infl = xcalloc_n(md->n_verts, 1);
	md->infl = xcalloc_n(md->n_verts, sizeof *md->infl);
	if (!md->n_infl || !md->infl)
		goto nomem;
	for (unsigned i = 0; i < m->desc.n_el; i++) {
		const struct skate_elem *e = &m->desc.elem[i];
		struct skate_attr *at = &md->attr[md->n_attr];
		int *slot;

		if (!e->usable)
			continue;
		slot = attr_slot(md, e);
		at->e = *e;
		at->type = legacy_type(e);
		at->n = e->n_out;
		at->v = xcalloc_n((size_t)md->n_verts * at->n, sizeof(float));
		if (!at->v)
			goto nomem;
		md->n_attr++;
		if (slot && *slot < 0)
			*slot = (int)md->n_attr - 1;
	}
	return md;
nomem:
	skate_mesh_data_free(md);
	return NULL;
}

/* Every vertex and its skin, batch by batch. */
static enum rc md_vertices(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			   size_t mesh, struct skate_mesh_data *md, struct diag *d)
{
	struct skate_vbatch b;
	uint64_t bad = 0;
	uint32_t first_v = 0;
	float first_slot = 0;
	enum rc r = RC_OK;

	skate_vbatch_init(&b);
	for (uint32_t first = 0; first < md->n_verts && r == RC_OK; first += b.count) {
		r = skate_mesh_read_vertices(s, a, sc, mesh, first, SKATE_VBATCH_MAX, &b);
		if (r != RC_OK)
			break;
		for (unsigned k = 0; k < md->n_attr; k++)
			memcpy(md->attr[k].v + (size_t)first * md->attr[k].n, b.v[k],
			       (size_t)b.count * md->attr[k].n * sizeof(float));
		memcpy(md->n_infl + first, b.n_infl, b.count);
		memcpy(md->infl + first, b.infl, (size_t)b.count * sizeof *b.infl);
		if (!bad && b.n_bad_slots) {
			first_v = b.first_bad_vertex;
			first_slot = b.first_bad_slot;
		}
		bad += b.n_bad_slots;
		md->n_unweighted += b.n_unweighted;
	}
	skate_vbatch_free(&b);
	if (r == RC_OK)
		sks_skin_diag(d, mesh, sc->meshes[mesh].n_palette, bad, first_v, first_slot,
			      md->n_unweighted);
	return r;
}

/* Every valid triangle in island order. */
static enum rc md_triangles(const struct src *s, const struct arena *a,
			    const struct skate_scene *sc, size_t mesh, struct skate_mesh_data *md,
			    struct diag *d)
{
	const struct skate_scene_mesh *m = &sc->meshes[mesh];
	struct skate_tbatch b;
	uint64_t bad = 0, bad_t = 0;
	uint32_t bad_v = 0;
	enum rc r = RC_OK;

	md->tri = xcalloc_n((size_t)m->tri_estimate, sizeof *md->tri);
	md->tri_island = xcalloc_n((size_t)m->tri_estimate, sizeof *md->tri_island);
	if (!md->tri || !md->tri_island)
		return RC_NOMEM;
	skate_tbatch_init(&b);
	for (uint64_t t = 0; t < m->tri_estimate; t += b.count) {
		r = skate_mesh_read_triangles(s, a, sc, mesh, t, SKATE_TBATCH_MAX, &b);
		if (r != RC_OK)
			break;
		for (uint32_t j = 0; j < b.count; j++) {
			if (!b.tri[j].valid)
				continue;
			memcpy(md->tri[md->n_tri], b.tri[j].v, sizeof b.tri[j].v);
			md->tri_island[md->n_tri++] = b.tri[j].island;
		}
		if (!bad && b.n_invalid) {
			bad_v = b.first_bad_value;
			bad_t = b.first_bad_triangle;
		}
		bad += b.n_invalid;
	}
	skate_tbatch_free(&b);
	if (r == RC_OK)
		sks_tri_diag(d, mesh, md->n_verts, bad, bad_v, bad_t);
	return r;
}

enum rc skate_mesh_decode(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			  size_t mesh, struct skate_mesh_data **out, struct diag *diag)
{
	const struct skate_scene_mesh *m;
	struct skate_mesh_data *md;
	enum rc r = sks_mesh_get(sc, mesh, &m);

	*out = NULL;
	if (r != RC_OK)
		return r;
	if (m->vertex_count > MAX_DECODE_VERTS) {
		diag_add(diag, "mesh %zu: %u vertices, more than the %u decoded", mesh,
			 m->vertex_count, MAX_DECODE_VERTS);
		return RC_UNSUPPORTED;
	}
	md = md_new(m);
	if (!md)
		return RC_NOMEM;
	r = md->pos < 0 ? RC_CORRUPT : md_vertices(s, a, sc, mesh, md, diag);
	if (r == RC_OK)
		r = md_triangles(s, a, sc, mesh, md, diag);
	if (r != RC_OK) {
		skate_mesh_data_free(md);
		return r;
	}
	*out = md;
	return RC_OK;
}
