/*
 * The district view's rails.glb (ns_district_int.h), drawn from the objects' decode.
 */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "tree/core/views.h"
#include "tree/world/ns_district_int.h"

/* ---- rails.glb: the grind rails as line primitives ---- */

/* One mesh "rails": two vertices per segment (start, end), rail after rail as rails.tsv lists
 * them; one LINES primitive per rail. A copy of the segments is kept. */
struct rails_glb {
	float (*seg)[2][3];
	uint32_t n_seg;
	struct gltf_prim *prims;
	uint32_t *first; /* per rail: its first segment */
	struct gltf_mesh mesh;
	struct gltf_model model;
	struct gltf_plan plan;
	bool planned;
};

static void rails_free(void *p)
{
	struct rails_glb *rg = p;

	if (rg->planned)
		gltf_plan_free(&rg->plan);
	free(rg->seg);
	free(rg->prims);
	free(rg->first);
	free(rg);
}

static enum rc rails_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct rails_glb *rg = ctx;

	if (q->mesh != 0)
		return RC_INVAL;
	if (q->what == GLTF_D_POSITION) {
		for (size_t k = 0; k < n; k++) {
			uint64_t v = first + k;

			if (v / 2 >= rg->n_seg)
				return RC_INVAL;
			memcpy((float *)out + 3 * k, rg->seg[v / 2][v % 2], 3 * sizeof(float));
		}
		return RC_OK;
	}
	if (q->what != GLTF_D_INDEX || q->set >= rg->mesh.n_prims)
		return RC_INVAL;
	for (size_t k = 0; k < n; k++)
		((uint32_t *)out)[k] = (uint32_t)(2 * (uint64_t)rg->first[q->set] + first + k);
	return RC_OK;
}

enum rc nd_load_rails(struct asset *as, uint64_t arg, void **data, size_t *bytes,
		      void (**dtor)(void *))
{
	struct cache_ent *ent;
	enum rc r;
	const struct dist_objects *o = asset_need(as, ND_OBJECTS, 0, &ent, &r);
	struct rails_glb *rg;
	uint32_t at = 0;

	(void)arg;
	if (!o)
		return r;
	if (o->n_seg > UINT32_MAX / 4 || !(rg = calloc(1, sizeof *rg))) {
		asset_unpin(as, ent);
		return RC_NOMEM;
	}
	rg->n_seg = (uint32_t)o->n_seg;
	rg->seg = xcalloc_n(o->n_seg ? o->n_seg : 1, sizeof *rg->seg);
	rg->prims = xcalloc_n(o->n_rail_list ? o->n_rail_list : 1, sizeof *rg->prims);
	rg->first = xcalloc_n(o->n_rail_list ? o->n_rail_list : 1, sizeof *rg->first);
	r = rg->seg && rg->prims && rg->first ? RC_OK : RC_NOMEM;
	if (r == RC_OK && o->n_seg)
		memcpy(rg->seg, o->seg, o->n_seg * sizeof *rg->seg);
	for (size_t i = 0; r == RC_OK && i < o->n_rail_list; i++) {
		rg->first[i] = at;
		rg->prims[i] = (struct gltf_prim){-1, 2 * (uint64_t)o->rail_segs[i], true};
		at += o->rail_segs[i];
	}
	asset_unpin(as, ent);
	rg->mesh = (struct gltf_mesh){.name = {"rails", 5},
				      .n_vertices = 2 * (uint64_t)rg->n_seg,
				      .prims = rg->prims,
				      .n_prims = (uint32_t)o->n_rail_list};
	rg->model = (struct gltf_model){
	    .meshes = &rg->mesh, .n_meshes = rg->mesh.n_prims ? 1 : 0, .fill = rails_fill};
	if (r == RC_OK)
		r = gltf_bounds(&rg->model, rg);
	if (r == RC_OK) {
		r = gltf_plan(&rg->model, &rg->plan);
		rg->planned = r == RC_OK;
	}
	if (r != RC_OK) {
		rails_free(rg);
		return r;
	}
	*data = rg;
	*bytes = sizeof *rg + (size_t)rg->n_seg * sizeof *rg->seg +
		 (size_t)rg->mesh.n_prims * (sizeof *rg->prims + 4) + gltf_plan_heap(&rg->plan);
	*dtor = rails_free;
	return RC_OK;
}

enum rc nd_rails_layout(const struct tctx *c, struct layout_build *lb)
{
	const struct rails_glb *rg = c->need;

	view_glb_layout(&rg->plan, lb);
	return RC_OK;
}

enum rc nd_rails_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct rails_glb *rg = c->need;

	return gltf_render(&rg->plan, (void *)rg, part, first, e);
}
