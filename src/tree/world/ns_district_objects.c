/*
 * The district view's props.tsv, rails.tsv and surfaces.tsv (ns_district_int.h): the Sim
 * stream's objects, the props' templates looked up in the mount's worlddmo.big, and the Pres
 * arenas' textures that nothing provides (lint.txt).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "tree/psg/ns_psg.h"
#include "tree/psg/psg_materials.h"
#include "tree/world/ns_district_int.h"

/* ---- worlddmo.big: the templates the props name ---- */

/*
 * The mount's worlddmo.big: beside the district's folder (psgfs-gen district's layout), else
 * data/content/worlddmo.big from the mount's root (the game's). Its templates are the entries
 * data/content/worlddmo/0x<16 hex digits>.psg (or .rx2), by name; a placement's template id is
 * looked up in that table (sorted once per load: lookups are memoised). A template is an
 * entry, not a chain, so no lookup can loop.
 */
#define DMO_BIG		  "worlddmo.big"
#define DMO_TEMPLATES_MAX (1u << 16)

struct dmo_tmpl {
	uint64_t id;
	uint32_t slot;
};

struct dmo_cat {
	struct tree *t;
	struct dmo_tmpl *v;
	size_t n;
	char path[PATH_MAX];
};

/* The child of directory slot `dir` named `name` (ignoring case); 0 if none. */
static uint32_t slot_child(struct tree *t, uint32_t dir, const char *name)
{
	struct tlist l = {0};
	uint32_t slot = 0;

	if (tree_slot_list(t, dir, &l) == RC_OK && !l.oom)
		for (size_t i = 0; i < l.n && !slot; i++)
			if (!strcasecmp(l.names + l.v[i].name, name))
				slot = ino_slot(l.v[i].ino);
	tlist_discard(&l);
	return slot;
}

static uint32_t dmo_big_slot(struct asset *as)
{
	uint32_t parent = 0, slot = 0;
	const char *name;

	if (tree_slot_entry_name(as->t, as->slot, &parent, &name) && parent)
		slot = tree_slot_sibling(as->t, parent, DMO_BIG);
	if (!slot)
		slot = folder_slot_at(as->t, "data/content/" DMO_BIG);
	return slot;
}

static int tmpl_cmp(const void *x, const void *y)
{
	const struct dmo_tmpl *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id ? 1 : a->slot < b->slot ? -1 : a->slot > b->slot;
}

/* The template table; false (and an empty table) when the mount has no worlddmo.big. */
static enum rc dmo_cat_load(struct dmo_cat *c, struct asset *as, bool *found)
{
	uint32_t dir = dmo_big_slot(as);
	struct tlist l = {0};
	enum rc r = RC_OK;

	*c = (struct dmo_cat){.t = as->t};
	*found = dir != 0;
	if (dir)
		dir = slot_child(as->t, dir, "data");
	if (dir)
		dir = slot_child(as->t, dir, "content");
	if (dir)
		dir = slot_child(as->t, dir, "worlddmo");
	if (!dir)
		return RC_OK; /* every lookup says why */
	if (tree_slot_list(as->t, dir, &l) != RC_OK || l.oom) {
		tlist_discard(&l);
		return l.oom ? RC_NOMEM : RC_OK;
	}
	c->v = xcalloc_n(l.n ? l.n : 1, sizeof *c->v);
	if (!c->v)
		r = RC_NOMEM;
	for (size_t i = 0; c->v && i < l.n && c->n < DMO_TEMPLATES_MAX; i++) {
		const char *nm = l.names + l.v[i].name;
		char *end;
		uint64_t id;

		if (strncasecmp(nm, "0x", 2) || !nd_is_arena_name(nm))
			continue;
		id = strtoull(nm + 2, &end, 16);
		if (end - nm != 18 || *end != '.')
			continue;
		c->v[c->n++] = (struct dmo_tmpl){id, ino_slot(l.v[i].ino)};
	}
	if (c->n)
		qsort(c->v, c->n, sizeof *c->v, tmpl_cmp);
	tlist_discard(&l);
	return r;
}

static uint32_t dmo_model_of(void *ctx, uint64_t id, const char **path, const char **why)
{
	struct dmo_cat *c = ctx;
	size_t lo = 0, hi = c->n;

	while (lo < hi) { /* the first of that id */
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->n || c->v[lo].id != id) {
		*why = c->v ? "worlddmo.big has no such template"
			    : "worlddmo.big has no data/content/worlddmo folder";
		return 0;
	}
	if (!tree_slot_mountpath(c->t, c->v[lo].slot, c->path, sizeof c->path)) {
		*why = "its path is too long";
		return 0;
	}
	*path = c->path;
	return c->v[lo].slot;
}

/* ---- props.tsv, rails.tsv, surfaces.tsv: the Sim stream's objects ---- */

static void objects_free(void *p)
{
	dist_objects_free(p);
	free(p);
}

/* The DMOData, SplineData and ClusteredMesh objects of one arena (only the DMOData when
 * placed_only). */
static enum rc objects_of_arena(struct dist_objects *o, struct asset *a, const char *where,
				bool placed_only)
{
	const struct arena *ar = &pm(a)->a;
	enum rc r = RC_OK;

	for (uint32_t i = 0; i < ar->n_dict && r == RC_OK; i++) {
		const struct arena_dict_entry *de = arena_row(ar, i);
		uint8_t *obj = NULL;
		size_t len = 0;
		enum rc ro;

		if (!de || (de->type_id != WO_T_DMODATA &&
			    (placed_only || (de->type_id != WO_T_SPLINEDATA &&
					     de->type_id != WO_T_CLUSTEREDMESH))))
			continue;
		ro = arena_read_object(&a->src, ar, i, &obj, &len);
		if (ro == RC_OK)
			r = dist_objects_add(o, where, i, de->type_id, obj, len);
		else if (ro == RC_NOMEM)
			r = ro;
		else
			diag_add(&o->d, "%s: object %u cannot be read: %s", where, i, rc_str(ro));
		free(obj);
	}
	return r;
}

/* The texture GUIDs of one Pres arena's materials that nothing provides: neither the
 * companion or a texture arena of the mount (psg_materials.c) nor a Pres or Tex stream asset
 * of that id (a per-texture arena, which an archive's own index may not reach). */
static void textures_of_arena(struct dist_objects *o, struct asset *a, const char *where,
			      const struct district *m)
{
	struct cache_ent *ent;
	enum rc r;
	const struct psg_materials *ms = asset_need(a, N_MATERIALS, 0, &ent, &r);

	for (uint32_t i = 0; ms && i < ms->n; i++)
		for (uint32_t k = 0; k < ms->v[i].n_ch; k++) {
			const struct psg_channel *ch = &ms->v[i].ch[k];

			if (ch->kind != SKATE_UNION_STREAM || !ch->has_guid || ch->texture ||
			    dist_atoc_has(m, DIST_TEX, ch->guid) ||
			    dist_atoc_has(m, DIST_PRES, ch->guid))
				continue;
			diag_add(&o->lint,
				 "%s: material %u: texture 0x%016" PRIx64
				 " (%s) is provided by nothing in the mount",
				 where, i, ch->guid, ch->input ? ch->input : "?");
			o->unresolved++;
		}
	if (ent)
		asset_unpin(a, ent);
}

struct tex_lint {
	struct dist_objects *o;
	const struct district *m;
};

static enum rc pres_textures(void *ctx, struct asset *a, const char *where)
{
	struct tex_lint *tl = ctx;

	textures_of_arena(tl->o, a, where, tl->m);
	return RC_OK;
}

static enum rc textures_lint(struct dist_objects *o, struct asset *as, const struct district *m)
{
	struct tex_lint tl = {o, m};

	return nd_each_arena(as, m, DIST_PRES, pres_textures, &tl);
}

static enum rc sim_objects(void *ctx, struct asset *a, const char *where)
{
	return objects_of_arena(ctx, a, where, false);
}

static enum rc sim_placed(void *ctx, struct asset *a, const char *where)
{
	return objects_of_arena(ctx, a, where, true);
}

/* Every Sim collection's arenas, in CMAP order then by name. Problems are lines of errors.txt;
 * only memory fails the load. arg OBJ_PLACED: the props' placements alone, for scene.glb (no
 * rails, collision or texture lint, which cost a pass over every Pres arena). */
enum rc nd_load_objects(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			void (**dtor)(void *))
{
	const struct district *m;
	struct dist_objects *o;
	struct dmo_cat cat = {0};
	bool found = false;
	enum rc r;

	if (!(m = nd_manifests(as, &r)))
		return r;
	if (!as->t->fold)
		return RC_NOENT;
	if (!(o = calloc(1, sizeof *o)))
		return RC_NOMEM;
	dist_objects_init(o);
	r = dmo_cat_load(&cat, as, &found);
	if (found) {
		o->model_of = dmo_model_of;
		o->model_ctx = &cat;
	}
	if (r == RC_OK)
		r = nd_each_arena(as, m, DIST_SIM, arg == OBJ_PLACED ? sim_placed : sim_objects, o);
	free(cat.v);
	o->model_of = NULL;
	o->model_ctx = NULL;
	if (r == RC_OK && arg != OBJ_PLACED)
		r = textures_lint(o, as, m);
	if (r == RC_OK)
		r = dist_objects_finish(o);
	if (r != RC_OK) {
		objects_free(o);
		return r;
	}
	*data = o;
	*bytes = sizeof *o + o->props.cap + o->rails.cap + o->surfaces.cap +
		 o->cap_placed * sizeof *o->placed + o->cap_surf * sizeof *o->surf +
		 diag_heap_bytes(&o->d);
	*dtor = objects_free;
	return RC_OK;
}

enum rc nd_render_objects(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct dist_objects *o = c->need;
	const struct buf *body = c->self.kind == K_PROPS   ? &o->props
				 : c->self.kind == K_RAILS ? &o->rails
							   : &o->surfaces;

	(void)part;
	(void)first;
	buf_puts(&e->b, c->self.kind == K_PROPS	  ? dist_props_header
			: c->self.kind == K_RAILS ? dist_rails_header
						  : dist_surfaces_header);
	if (body->len)
		buf_put(&e->b, body->data, body->len);
	emit_item(e);
	return RC_OK;
}
