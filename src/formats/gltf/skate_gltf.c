/*
 * A Skate model as glTF (docs/gltf.md, "PSG models"). The export model (skate_export.c) decides
 * what goes out; this file maps it onto include/psgfs/formats/gltf.h and answers the writer's
 * requests for data from the mesh streams, a batch of vertices or triangles at a time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_gltf.h"

struct sg_mesh_name {
	char s[24];
};

struct skate_gltf {
	const struct arena *a;
	const struct skate_scene *sc;
	const struct skate_export_model *m;
	struct gltf_node *nodes;
	struct gltf_mesh *meshes;
	struct gltf_prim *prims;
	uint32_t *xmesh; /* glTF mesh -> export mesh */
	struct sg_mesh_name *names;
	struct gltf_material *mats;
	struct gltf_model model;
	struct gltf_plan plan;
	size_t bytes;
};

/* What one render (or the bounds pass) reads with: batches reused across requests. */
struct sg_ctx {
	const struct skate_gltf *g;
	const struct src *s;
	struct skate_vbatch vb;
	struct skate_tbatch tb;
};

const struct gltf_plan *skate_gltf_plan(const struct skate_gltf *g)
{
	return &g->plan;
}

size_t skate_gltf_bytes(const struct skate_gltf *g)
{
	return g->bytes;
}

void skate_gltf_free(struct skate_gltf *g)
{
	if (!g)
		return;
	gltf_plan_free(&g->plan);
	free(g->nodes);
	free(g->meshes);
	free(g->prims);
	free(g->xmesh);
	free(g->names);
	free(g->mats);
	free(g);
}

/* ---- data requests ---- */

static uint32_t want_of(enum gltf_data what)
{
	switch (what) {
	case GLTF_D_POSITION:
		return 1u << SKATE_USAGE_POSITION;
	case GLTF_D_NORMAL:
		return 1u << SKATE_USAGE_NORMAL;
	case GLTF_D_COLOR:
		return 1u << SKATE_USAGE_COLOR;
	case GLTF_D_SKIN:
		return 1u << SKATE_USAGE_BLEND_INDICES | 1u << SKATE_USAGE_BLEND_WEIGHTS;
	default:
		return 1u << SKATE_USAGE_TEXCOORD;
	}
}

/* The usable element a request reads, -1 when the mesh has none (zeros go out). */
static int elem_of(const struct skate_export_mesh *xm, const struct gltf_req *q)
{
	switch (q->what) {
	case GLTF_D_POSITION:
		return xm->pos;
	case GLTF_D_NORMAL:
		return xm->normal;
	case GLTF_D_COLOR:
		return xm->color;
	case GLTF_D_TEXCOORD:
		return q->set < SKX_MAX_UV ? xm->uv[q->set] : -1;
	default:
		return -1;
	}
}

static uint8_t unorm8(float x)
{
	float v = x * 255.0f + 0.5f;

	return (uint8_t)(v > 255.0f ? 255.0f : v > 0.0f ? v : 0.0f);
}

/* Vertex i of the batch as the request's C type (include/psgfs/formats/gltf.h). */
static void put_vertex(const struct sg_ctx *c, const struct gltf_req *q, int el, uint32_t i,
		       void *out)
{
	const struct skate_vbatch *b = &c->vb;
	unsigned n_out = el >= 0 ? b->elem[el].n_out : 0;
	const float *f = el >= 0 ? b->v[el] + (size_t)i * n_out : NULL;

	if (q->what == GLTF_D_COLOR) {
		uint8_t *o = out;

		for (unsigned k = 0; k < 4; k++)
			o[k] = k < n_out ? unorm8(f[k]) : 255;
	} else if (q->what == GLTF_D_SKIN) {
		const struct skate_export_model *m = c->g->m;
		struct gltf_influence *o = out;

		memset(o, 0, sizeof *o);
		for (unsigned k = 0; k < b->n_infl[i] && k < 4; k++) {
			uint32_t bone = b->infl[i][k].bone;

			o->joint[k] = (uint16_t)(bone < c->g->sc->n_bones ? m->pos[bone] : 0);
			o->weight[k] = b->infl[i][k].weight;
		}
		if (!b->n_infl[i])
			o->weight[0] = 1.0f; /* no influence: the root carries it, as in the .psk */
	} else {
		unsigned dim = q->what == GLTF_D_TEXCOORD ? 2 : 3;
		float *o = out;

		for (unsigned k = 0; k < dim; k++)
			o[k] = k < n_out ? f[k] : 0.0f;
	}
}

static size_t elem_bytes(enum gltf_data what)
{
	switch (what) {
	case GLTF_D_COLOR:
		return 4;
	case GLTF_D_SKIN:
		return sizeof(struct gltf_influence);
	case GLTF_D_TEXCOORD:
		return 2 * sizeof(float);
	default:
		return 3 * sizeof(float);
	}
}

static enum rc fill_vertices(struct sg_ctx *c, const struct gltf_req *q, uint64_t first, size_t n,
			     void *out)
{
	const struct skate_export_mesh *xm = &c->g->m->meshes[c->g->xmesh[q->mesh]];
	int el = elem_of(xm, q);
	size_t sz = elem_bytes(q->what), done = 0;

	if (first > xm->n_verts || n > xm->n_verts - first)
		return RC_BOUNDS;
	c->vb.want = want_of(q->what);
	while (done < n) {
		enum rc r = skate_mesh_read_vertices(c->s, c->g->a, c->g->sc, xm->scene,
						     (uint32_t)(first + done), (uint32_t)(n - done),
						     &c->vb);

		if (r != RC_OK)
			return r;
		if (c->vb.count == 0)
			return RC_IO;
		for (uint32_t i = 0; i < c->vb.count; i++)
			put_vertex(c, q, el, i, (uint8_t *)out + (done + i) * sz);
		done += c->vb.count;
	}
	return RC_OK;
}

/* Indices [first, first + n) of a mesh's only primitive: its raw triples in island order,
 * counter-clockwise as stored; a triple naming a vertex past the count is degenerate on
 * vertex 0 (as in the .psk). */
static enum rc fill_indices(struct sg_ctx *c, const struct gltf_req *q, uint64_t first, size_t n,
			    uint32_t *out)
{
	const struct skate_export_mesh *xm = &c->g->m->meshes[c->g->xmesh[q->mesh]];
	uint64_t t = first / 3, end = first + n, done = 0;

	while (first + done < end) {
		uint64_t want = (end + 2) / 3 - t;
		enum rc r = skate_mesh_read_triangles(
		    c->s, c->g->a, c->g->sc, xm->scene, t,
		    (uint32_t)(want < SKATE_TBATCH_MAX ? want : SKATE_TBATCH_MAX), &c->tb);

		if (r != RC_OK)
			return r;
		if (c->tb.count == 0)
			return RC_IO;
		for (uint32_t i = 0; i < c->tb.count; i++, t++)
			for (uint64_t k = 0; k < 3; k++) {
				uint64_t at = t * 3 + k;

				if (at >= first && at < end)
					out[done++] = c->tb.tri[i].valid ? c->tb.tri[i].v[k] : 0;
			}
	}
	return RC_OK;
}

static enum rc sg_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	struct sg_ctx *c = ctx;

	if (q->mesh >= c->g->model.n_meshes)
		return RC_INVAL;
	switch (q->what) {
	case GLTF_D_POSITION:
	case GLTF_D_NORMAL:
	case GLTF_D_TEXCOORD:
	case GLTF_D_COLOR:
	case GLTF_D_SKIN:
		return fill_vertices(c, q, first, n, out);
	case GLTF_D_INDEX:
		return fill_indices(c, q, first, n, out);
	default:
		return RC_INVAL;
	}
}

static void ctx_init(struct sg_ctx *c, const struct skate_gltf *g, const struct src *s)
{
	c->g = g;
	c->s = s;
	skate_vbatch_init(&c->vb);
	skate_tbatch_init(&c->tb);
}

static void ctx_free(struct sg_ctx *c)
{
	skate_vbatch_free(&c->vb);
	skate_tbatch_free(&c->tb);
}

enum rc skate_gltf_render(const struct skate_gltf *g, const struct src *s, unsigned part,
			  uint64_t first, struct emit *e)
{
	struct sg_ctx c;
	enum rc r;

	ctx_init(&c, g, s);
	r = gltf_render(&g->plan, &c, part, first, e);
	ctx_free(&c);
	return r;
}

const struct gltf_model *skate_gltf_model(const struct skate_gltf *g)
{
	return &g->model;
}

enum rc skate_gltf_fill(const struct skate_gltf *g, const struct src *s, const struct gltf_req *q,
			uint64_t first, size_t n, void *out)
{
	struct sg_ctx c;
	enum rc r;

	ctx_init(&c, g, s);
	r = sg_fill(&c, q, first, n, out);
	ctx_free(&c);
	return r;
}

/* ---- building ---- */

/* Joints: the export's bones, parents first, in model space whatever the .psk's axes. */
static enum rc build_nodes(struct skate_gltf *g)
{
	const struct skate_export_model *m = g->m;

	g->nodes = xcalloc_n(m->n_bones ? m->n_bones : 1, sizeof *g->nodes);
	if (!g->nodes)
		return RC_NOMEM;
	for (uint32_t i = 0; i < m->n_bones; i++) {
		const struct skate_export_bone *b = &m->bones[i];
		struct gltf_node *nd = &g->nodes[i];

		nd->name = (struct gltf_name){b->name, sizeof b->name};
		nd->parent = b->parent;
		nd->joint = true;
		skate_export_bone_model_local(g->sc, m, i, nd->t, nd->r);
		nd->s[0] = nd->s[1] = nd->s[2] = 1.0f;
	}
	g->bytes += m->n_bones * sizeof *g->nodes;
	return gltf_bind_ibms(g->nodes, m->n_bones);
}

/* UV sets a mesh has from set 0 up, without gaps. */
static uint32_t uv_sets(const struct skate_export_mesh *xm)
{
	uint32_t n = 0;

	while (n < SKX_MAX_UV && xm->uv[n] >= 0)
		n++;
	return n;
}

/* One glTF mesh per exported mesh with vertices and triangles; the others are noted. */
static enum rc build_meshes(struct skate_gltf *g, struct diag *notes)
{
	const struct skate_export_model *m = g->m;
	uint32_t n = m->n_meshes ? m->n_meshes : 1;

	g->meshes = xcalloc_n(n, sizeof *g->meshes);
	g->prims = xcalloc_n(n, sizeof *g->prims);
	g->xmesh = xcalloc_n(n, sizeof *g->xmesh);
	g->names = xcalloc_n(n, sizeof *g->names);
	if (!g->meshes || !g->prims || !g->xmesh || !g->names)
		return RC_NOMEM;
	g->bytes +=
	    n * (sizeof *g->meshes + sizeof *g->prims + sizeof *g->xmesh + sizeof *g->names);
	for (uint32_t k = 0; k < m->n_meshes; k++) {
		const struct skate_export_mesh *xm = &m->meshes[k];
		uint32_t i = g->model.n_meshes;
		struct gltf_mesh *me = &g->meshes[i];

		if (!xm->n_verts || !xm->n_faces || xm->n_faces > UINT64_MAX / 3) {
			diag_add(notes, "glb: mesh %02u has no %s: left out", xm->scene,
				 xm->n_verts ? "triangles" : "vertices");
			continue;
		}
		snprintf(g->names[i].s, sizeof g->names[i].s, "mesh_%02u", xm->scene);
		g->prims[i] = (struct gltf_prim){(int32_t)xm->material, 3 * xm->n_faces, false};
		*me = (struct gltf_mesh){.name = {g->names[i].s, strlen(g->names[i].s)},
					 .n_vertices = xm->n_verts,
					 .normals = xm->normal >= 0,
					 .colors = xm->color >= 0,
					 .skinned = true,
					 .n_uv = uv_sets(xm),
					 .prims = &g->prims[i],
					 .n_prims = 1};
		g->xmesh[i] = k;
		g->model.n_meshes++;
	}
	return RC_OK;
}

static enum rc build_materials(struct skate_gltf *g, uint32_t n_images, const int32_t *mat_image)
{
	const struct skate_export_model *m = g->m;

	g->mats = xcalloc_n(m->n_materials ? m->n_materials : 1, sizeof *g->mats);
	if (!g->mats)
		return RC_NOMEM;
	for (uint32_t k = 0; k < m->n_materials; k++) {
		int32_t im = mat_image ? mat_image[k] : -1;

		g->mats[k].name = (struct gltf_name){m->materials[k], sizeof m->materials[k]};
		g->mats[k].image = im >= 0 && (uint32_t)im < n_images ? im : -1;
	}
	g->bytes += m->n_materials * sizeof *g->mats;
	return RC_OK;
}

/* full: the bounds and the plan too (skate_gltf_open); else the model alone. */
static enum rc open_export(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			   const struct skate_export_model *m, const struct gltf_image *images,
			   uint32_t n_images, const int32_t *mat_image, struct skate_gltf **out,
			   struct diag *notes, bool full)
{
	struct skate_gltf *g = calloc(1, sizeof *g);
	struct sg_ctx c;
	enum rc r;

	*out = NULL;
	if (!g)
		return RC_NOMEM;
	g->a = a;
	g->sc = sc;
	g->m = m;
	g->bytes = sizeof *g;
	r = build_nodes(g);
	if (r == RC_OK)
		r = build_meshes(g, notes);
	if (r == RC_OK)
		r = build_materials(g, n_images, mat_image);
	g->model.nodes = g->nodes;
	g->model.n_nodes = m->n_bones;
	g->model.meshes = g->meshes;
	g->model.materials = g->mats;
	g->model.n_materials = m->n_materials;
	g->model.images = images;
	g->model.n_images = n_images;
	g->model.fill = sg_fill;
	if (r == RC_OK && full) {
		ctx_init(&c, g, s);
		r = gltf_bounds(&g->model, &c);
		ctx_free(&c);
		if (r == RC_OK)
			r = gltf_plan(&g->model, &g->plan);
	}
	if (r != RC_OK) {
		skate_gltf_free(g);
		return r;
	}
	g->bytes += (size_t)g->plan.n_views * 64 + (size_t)g->plan.n_accs * 64 +
		    (size_t)g->plan.n_out_nodes * 12;
	*out = g;
	return RC_OK;
}

enum rc skate_gltf_open(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			const struct skate_export_model *m, const struct gltf_image *images,
			uint32_t n_images, const int32_t *mat_image, struct skate_gltf **out,
			struct diag *notes)
{
	return open_export(s, a, sc, m, images, n_images, mat_image, out, notes, true);
}

enum rc skate_gltf_shape(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			 const struct skate_export_model *m, const struct gltf_image *images,
			 uint32_t n_images, const int32_t *mat_image, struct skate_gltf **out)
{
	return open_export(s, a, sc, m, images, n_images, mat_image, out, NULL, false);
}

enum rc skate_gltf_mesh_bounds(const struct skate_gltf *g, const struct src *s, uint32_t mesh,
			       float min[3], float max[3])
{
	struct sg_ctx c;
	enum rc r;

	ctx_init(&c, g, s);
	r = gltf_mesh_bounds(&g->model, &c, mesh, min, max);
	ctx_free(&c);
	return r;
}
