/*
 * A district's Sim stream objects (district.h, docs/worlds.md): props.tsv, rails.tsv and
 * surfaces.tsv from the DMOData, SplineData and ClusteredMesh objects, and what scene.glb and
 * rails.glb draw.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/world/district.h"
#include "psgfs/base/bytes.h"

/* ---- the Sim stream's objects ---- */

const char dist_props_header[] =
    "arena\tobject\tindex\tname\ttemplate_id\tguid\tguid_local\tinstance\tmodel\tx\ty\tz\tqx\tqy\t"
    "qz\tqw\tsx\tsy\tsz\tproblem\n";
const char dist_rails_header[] =
    "arena\tobject\trail\tguid\tsegment\tstart_x\tstart_y\tstart_z\tend_x\tend_y\tend_z\tlength\t"
    "problem\n";
const char dist_surfaces_header[] = "surface\taudio\tphysics\tpattern\ttriangles\n";

void dist_objects_init(struct dist_objects *o)
{
	memset(o, 0, sizeof *o);
	buf_init(&o->props);
	buf_init(&o->rails);
	buf_init(&o->surfaces);
	diag_init(&o->d);
	diag_init(&o->lint);
}

void dist_objects_free(struct dist_objects *o)
{
	buf_free(&o->props);
	buf_free(&o->rails);
	buf_free(&o->surfaces);
	free(o->surf);
	free(o->seg);
	free(o->rail_segs);
	free(o->placed);
	diag_free(&o->d);
	diag_free(&o->lint);
	memset(o, 0, sizeof *o);
}

static void put_floats(struct buf *b, const float *v, int n)
{
	for (int k = 0; k < n; k++) {
		buf_putc(b, '\t');
		buf_f32txt(b, v[k]);
	}
}

static const char *wo_words(uint8_t f)
{
	if (f & WO_F_NONFINITE)
		return "not finite";
	if (f & WO_F_SINGULAR)
		return "singular matrix";
	if (f & WO_F_CYCLE)
		return "chain loops";
	if (f & WO_F_LINK)
		return "link names nothing";
	if (f & WO_F_BOUNDS)
		return "bounds";
	if (f & WO_F_NAME)
		return "name";
	if (f & WO_F_SHEAR)
		return "sheared matrix";
	return "-";
}

/* Remember a resolved prop for scene.glb; past DIST_PLACED_MAX one line says so. */
static void place_prop(struct dist_objects *o, uint32_t model, const struct wo_dmo *p)
{
	struct dist_placed *v;

	if (o->n_placed == DIST_PLACED_MAX) {
		diag_add(&o->d,
			 "scene.glb places the first %u resolved props; the rest only in "
			 "props.tsv",
			 DIST_PLACED_MAX);
		o->n_placed++; /* said once */
		return;
	}
	if (o->n_placed > DIST_PLACED_MAX)
		return;
	if (o->n_placed == o->cap_placed) {
		size_t cap = o->cap_placed ? o->cap_placed * 2 : 16;

		if (!(v = xrealloc_n(o->placed, cap, sizeof *v))) {
			o->props.oom = true; /* dist_objects_finish: RC_NOMEM */
			return;
		}
		o->placed = v;
		o->cap_placed = cap;
	}
	v = &o->placed[o->n_placed++];
	*v = (struct dist_placed){.model = model, .template_id = p->template_id};
	memcpy(v->pos, p->pos, sizeof v->pos);
	memcpy(v->rot, p->rot, sizeof v->rot);
	memcpy(v->scale, p->scale, sizeof v->scale);
}

static void add_props(struct dist_objects *o, const char *where, uint32_t index,
		      const struct wo_dmos *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		const struct wo_dmo *p = &m->v[i];
		const char *path = NULL, *why = NULL;
		uint32_t model =
		    o->model_of ? o->model_of(o->model_ctx, p->template_id, &path, &why) : 0;

		buf_printf(&o->props, "%s\t%u\t%u\t", where, index, i);
		buf_tsv_name(&o->props, p->name[0] ? p->name : "-", WO_NAME_MAX + 1);
		buf_printf(&o->props,
			   "\t0x%016" PRIx64 "\t0x%016" PRIx64 "\t0x%016" PRIx64 "\t%u\t",
			   p->template_id, p->guid, p->guid_local, p->instance);
		if (model && path) {
			buf_tsv_name(&o->props, path, 4096);
			o->n_resolved++;
			place_prop(o, model, p);
		} else {
			buf_puts(&o->props, "unresolved");
			if (o->model_of) {
				diag_add(&o->lint,
					 "%s: object %u: prop %u: template 0x%016" PRIx64
					 " is unresolved: %s",
					 where, index, i, p->template_id, why ? why : "?");
				o->unresolved++;
			}
		}
		put_floats(&o->props, p->pos, 3);
		put_floats(&o->props, p->rot, 4);
		put_floats(&o->props, p->scale, 3);
		buf_printf(&o->props, "\t%s\n", wo_words(p->flags));
		if (p->flags & (WO_F_NONFINITE | WO_F_SINGULAR))
			diag_add(&o->lint, "%s: object %u: prop %u: its matrix is %s (placed at 0)",
				 where, index, i, wo_words(p->flags));
	}
	o->n_props += m->n;
}

/* Room for n more segments and one more rail in the geometry rails.glb draws. */
static bool rail_room(struct dist_objects *o, size_t n)
{
	if (o->n_seg + n > o->cap_seg) {
		size_t cap = o->cap_seg ? o->cap_seg : 64;
		void *v;

		while (cap < o->n_seg + n)
			cap *= 2;
		if (!(v = xrealloc_n(o->seg, cap, sizeof *o->seg)))
			return false;
		o->seg = v;
		o->cap_seg = cap;
	}
	if (o->n_rail_list == o->cap_rail_list) {
		size_t cap = o->cap_rail_list ? o->cap_rail_list * 2 : 16;
		void *v = xrealloc_n(o->rail_segs, cap, sizeof *o->rail_segs);

		if (!v)
			return false;
		o->rail_segs = v;
		o->cap_rail_list = cap;
	}
	return true;
}

static enum rc add_rails(struct dist_objects *o, const char *where, uint32_t index,
			 const struct wo_splines *sd)
{
	for (uint32_t r = 0; r < sd->nrails; r++) {
		const struct wo_rail *rl = &sd->rails[r];
		uint32_t drawn = 0;

		if (!rail_room(o, rl->count))
			return RC_NOMEM;

		for (uint32_t k = 0; k < rl->count && rl->first + k < sd->norder; k++) {
			uint32_t si = sd->order[rl->first + k];
			const struct wo_segment *sg;

			if (si >= sd->nsegs)
				continue;
			sg = &sd->segs[si];
			buf_printf(&o->rails, "%s\t%u\t%u\t0x%016" PRIx64 "\t%u", where, index, r,
				   rl->guid, k);
			put_floats(&o->rails, sg->start, 3);
			put_floats(&o->rails, sg->end, 3);
			put_floats(&o->rails, &sg->length, 1);
			buf_printf(&o->rails, "\t%s\n", wo_words(sg->flags | rl->flags));
			memcpy(o->seg[o->n_seg][0], sg->start, sizeof sg->start);
			memcpy(o->seg[o->n_seg][1], sg->end, sizeof sg->end);
			o->n_seg++;
			drawn++;
			o->n_segments++;
		}
		if (drawn)
			o->rail_segs[o->n_rail_list++] = drawn;
		if (rl->flags & (WO_F_CYCLE | WO_F_LINK))
			diag_add(&o->lint, "%s: object %u: rail %u: its %s", where, index, r,
				 rl->flags & WO_F_CYCLE ? "segment chain loops"
							: "segment chain names nothing");
	}
	o->n_rails += sd->nrails;
	return RC_OK;
}

static enum rc add_surfaces(struct dist_objects *o, const struct wo_cmesh *cm)
{
	struct wo_surface_count *v = NULL;
	uint32_t n = 0;
	enum rc r = wo_cmesh_surfaces(cm, &v, &n);

	if (r != RC_OK)
		return r;
	if (o->n_surf + n > o->cap_surf) {
		size_t cap = o->cap_surf ? o->cap_surf : 64;
		struct wo_surface_count *nv;

		while (cap < o->n_surf + n)
			cap *= 2;
		if (!(nv = xrealloc_n(o->surf, cap, sizeof *nv))) {
			free(v);
			return RC_NOMEM;
		}
		o->surf = nv;
		o->cap_surf = cap;
	}
	if (n)
		memcpy(o->surf + o->n_surf, v, n * sizeof *v);
	o->n_surf += n;
	o->n_tris += cm->ntris;
	o->n_meshes++;
	free(v);
	return RC_OK;
}

enum rc dist_objects_add(struct dist_objects *o, const char *where, uint32_t index,
			 uint32_t type_id, const uint8_t *p, size_t n)
{
	struct diag d;
	enum rc r = RC_OK;

	diag_init(&d);
	if (type_id == WO_T_DMODATA) {
		struct wo_dmos m = {0};

		r = wo_dmo_parse(p, n, &m, &d);
		if (r == RC_OK)
			add_props(o, where, index, &m);
		wo_dmo_free(&m);
	} else if (type_id == WO_T_SPLINEDATA) {
		struct wo_splines sd = {0};

		r = wo_spline_parse(p, n, &sd, &d);
		if (r == RC_OK)
			r = add_rails(o, where, index, &sd);
		wo_spline_free(&sd);
	} else if (type_id == WO_T_CLUSTEREDMESH) {
		struct wo_cmesh cm = {0};

		r = wo_cmesh_parse(p, n, &cm, &d);
		if (r == RC_OK)
			r = add_surfaces(o, &cm);
		wo_cmesh_free(&cm);
	} else {
		return RC_OK;
	}
	for (size_t i = 0; i < d.n; i++)
		diag_add(&o->d, "%s: object %u: %s", where, index, d.msg[i]);
	if (r != RC_OK && r != RC_NOMEM)
		diag_add(&o->d, "%s: object %u (type 0x%08x): %s", where, index, type_id,
			 rc_str(r));
	diag_free(&d);
	return r == RC_NOMEM ? r : RC_OK;
}

static int surf_cmp(const void *x, const void *y)
{
	const struct wo_surface_count *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

enum rc dist_objects_finish(struct dist_objects *o)
{
	size_t i = 0;

	if (o->n_surf)
		qsort(o->surf, o->n_surf, sizeof *o->surf, surf_cmp);
	while (i < o->n_surf) {
		uint16_t id = o->surf[i].id;
		uint64_t tris = 0;
		uint8_t audio, physics, pattern;

		for (; i < o->n_surf && o->surf[i].id == id; i++)
			tris += o->surf[i].tris;
		wo_surface_split(id, &audio, &physics, &pattern);
		buf_printf(&o->surfaces, "0x%04x\t%u\t%u\t%u\t%" PRIu64 "\n", id, audio, physics,
			   pattern, tris);
	}
	return o->props.oom || o->rails.oom || o->surfaces.oom ? RC_NOMEM : RC_OK;
}
