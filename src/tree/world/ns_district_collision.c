/*
 * The district view's collision.glb (ns_district_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "tree/core/views.h"
#include "tree/psg/ns_psg.h"
#include "tree/world/ns_district_int.h"

/* ---- collision.glb: the Sim stream's ClusteredMesh triangles in world space ---- */

/*
 * One glTF mesh per ClusteredMesh object (named <arena>/<row>), three vertices per triangle in
 * the object's order, one primitive per surface id (ascending) whose indices are that
 * surface's triangles' vertices. The parsed objects are kept (their triangles decode on
 * demand); an index range is found by one pass over the object's triangles.
 */
#define COLL_BATCH 256u

struct collision {
	struct wo_cmesh *cm;
	uint16_t **surf; /* per mesh: the surface id of each primitive */
	char **names;
	struct gltf_mesh *meshes;
	struct gltf_prim **prims;
	uint32_t n, cap;
	struct gltf_model model;
	struct gltf_plan plan;
	bool planned;
};

static void collision_free(void *p)
{
	struct collision *co = p;

	if (co->planned)
		gltf_plan_free(&co->plan);
	for (uint32_t i = 0; i < co->n; i++) {
		wo_cmesh_free(&co->cm[i]);
		free(co->surf[i]);
		free(co->names[i]);
		free(co->prims[i]);
	}
	free(co->cm);
	free(co->surf);
	free(co->names);
	free(co->meshes);
	free(co->prims);
	free(co);
}

static enum rc coll_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct collision *co = ctx;
	const struct wo_cmesh *cm;
	struct wo_tri t[COLL_BATCH];
	uint64_t done = 0, seen = 0;

	if (q->mesh >= co->n)
		return RC_INVAL;
	cm = &co->cm[q->mesh];
	if (q->what == GLTF_D_POSITION) {
		float(*v)[3] = out;

		while (done < n) {
			uint64_t at = first + done, tri = at / 3;
			uint32_t got = wo_cmesh_tris(cm, (uint32_t)tri, COLL_BATCH, t);

			if (!got)
				return RC_CORRUPT;
			for (uint32_t k = 0; k < got && done < n; k++)
				for (uint64_t c = (k == 0 ? at % 3 : 0); c < 3 && done < n; c++)
					memcpy(v[done++], t[k].v[c], sizeof v[0]);
		}
		return RC_OK;
	}
	if (q->what != GLTF_D_INDEX || q->set >= co->meshes[q->mesh].n_prims)
		return RC_INVAL;
	for (uint32_t tri = 0; done < n && tri < cm->ntris;) {
		uint32_t got = wo_cmesh_tris(cm, tri, COLL_BATCH, t);

		if (!got)
			break;
		for (uint32_t k = 0; k < got && done < n; k++) {
			if (t[k].surface != co->surf[q->mesh][q->set])
				continue;
			for (uint32_t c = 0; c < 3 && done < n; c++, seen++)
				if (seen >= first)
					((uint32_t *)out)[done++] = (tri + k) * 3 + c;
		}
		tri += got;
	}
	return done == n ? RC_OK : RC_CORRUPT;
}

/* Take a parsed ClusteredMesh (moved into the collision) as a mesh of its surfaces. */
static enum rc coll_take(struct collision *co, struct wo_cmesh *cm, const char *name)
{
	struct wo_surface_count *sv = NULL;
	uint32_t ns = 0;
	enum rc r;

	if (!cm->ntris || cm->ntris > UINT32_MAX / 3) {
		wo_cmesh_free(cm);
		return RC_OK;
	}
	if (co->n == co->cap) {
		uint32_t cap = co->cap ? co->cap * 2 : 16;
		void *a = xrealloc_n(co->cm, cap, sizeof *co->cm),
		     *b = a ? (co->cm = a, xrealloc_n(co->surf, cap, sizeof *co->surf)) : NULL,
		     *c = b ? (co->surf = b, xrealloc_n(co->names, cap, sizeof *co->names)) : NULL,
		     *d = c ? (co->names = c, xrealloc_n(co->meshes, cap, sizeof *co->meshes))
			    : NULL,
		     *e =
			 d ? (co->meshes = d, xrealloc_n(co->prims, cap, sizeof *co->prims)) : NULL;

		if (!e) {
			wo_cmesh_free(cm);
			return RC_NOMEM;
		}
		co->prims = e;
		co->cap = cap;
	}
	r = wo_cmesh_surfaces(cm, &sv, &ns);
	co->cm[co->n] = *cm;
	co->surf[co->n] = xcalloc_n(ns ? ns : 1, sizeof **co->surf);
	co->prims[co->n] = xcalloc_n(ns ? ns : 1, sizeof **co->prims);
	co->names[co->n] = strdup(name);
	co->n++;
	if (r != RC_OK || !co->surf[co->n - 1] || !co->prims[co->n - 1] || !co->names[co->n - 1]) {
		free(sv);
		return r != RC_OK ? r : RC_NOMEM;
	}
	for (uint32_t k = 0; k < ns; k++) {
		co->surf[co->n - 1][k] = sv[k].id;
		co->prims[co->n - 1][k] = (struct gltf_prim){-1, (uint64_t)sv[k].tris * 3, false};
	}
	co->meshes[co->n - 1] = (struct gltf_mesh){
	    .name = {co->names[co->n - 1], strlen(co->names[co->n - 1])},
	    .n_vertices = (uint64_t)cm->ntris * 3,
	    .prims = co->prims[co->n - 1],
	    .n_prims = ns,
	};
	free(sv);
	return RC_OK;
}

/* The ClusteredMesh objects of one arena. */
static enum rc coll_of_arena(struct collision *co, struct asset *a, const char *where)
{
	const struct arena *ar = &pm(a)->a;
	enum rc r = RC_OK;

	for (uint32_t i = 0; i < ar->n_dict && r == RC_OK; i++) {
		const struct arena_dict_entry *de = arena_row(ar, i);
		uint8_t *obj = NULL;
		size_t len = 0;
		struct wo_cmesh cm = {0};
		char name[2 * NAME_COMPONENT_MAX + 16];

		if (!de || de->type_id != WO_T_CLUSTEREDMESH)
			continue;
		r = arena_read_object(&a->src, ar, i, &obj, &len);
		if (r == RC_OK && wo_cmesh_parse(obj, len, &cm, NULL) == RC_OK) {
			snprintf(name, sizeof name, "%s/%u", where, i);
			r = coll_take(co, &cm, name);
		} else {
			wo_cmesh_free(&cm);
			r = r == RC_NOMEM ? r : RC_OK; /* errors.txt says why (props.tsv's pass) */
		}
		free(obj);
	}
	return r;
}

static enum rc sim_collision(void *ctx, struct asset *a, const char *where)
{
	return coll_of_arena(ctx, a, where);
}

enum rc nd_load_collision(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	const struct district *m;
	struct collision *co;
	size_t held = 0;
	enum rc r;

	(void)arg;
	if (!(m = nd_manifests(as, &r)))
		return r;
	if (!as->t->fold)
		return RC_NOENT;
	if (!(co = calloc(1, sizeof *co)))
		return RC_NOMEM;
	r = nd_each_arena(as, m, DIST_SIM, sim_collision, co);
	co->model = (struct gltf_model){.meshes = co->meshes, .n_meshes = co->n, .fill = coll_fill};
	if (r == RC_OK)
		r = gltf_bounds(&co->model, co);
	if (r == RC_OK) {
		r = gltf_plan(&co->model, &co->plan);
		co->planned = r == RC_OK;
	}
	if (r != RC_OK) {
		collision_free(co);
		return r;
	}
	for (uint32_t i = 0; i < co->n; i++)
		held += co->cm[i].size + co->cm[i].ncl * sizeof *co->cm[i].cl + 128;
	*data = co;
	*bytes = sizeof *co + held + gltf_plan_heap(&co->plan);
	*dtor = collision_free;
	return RC_OK;
}

enum rc nd_coll_layout(const struct tctx *c, struct layout_build *lb)
{
	const struct collision *co = c->need;

	view_glb_layout(&co->plan, lb);
	return RC_OK;
}

enum rc nd_coll_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct collision *co = c->need;

	return gltf_render(&co->plan, (void *)co, part, first, e);
}
