/*
 * The district view's scene.glb and tiles/<collection>.glb (ns_district_int.h): the Pres
 * collections' arenas fused in world space, and the props placed from the Sim stream's objects.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_gltf.h"
#include "tree/core/views.h"
#include "tree/psg/ns_psg.h"
#include "tree/world/ns_district_int.h"

/* ---- scene.glb and tiles/<collection>.glb ---- */

/*
 * The scene holds no arena: it keeps what its plan needs (each arena's slot, copies of its
 * meshes, primitives, materials and names, the sizes of its pictures' parts), and reading a
 * piece fetches the arena and its .glb decode again from the cache (loading them anew if they
 * were evicted: the same file gives the same export). Memory stays the cache's to bound.
 */
struct scene_img {
	const struct scene *sc;
	uint32_t arena, image; /* the arena's own image index */
	unsigned n_parts;
	uint64_t *n_items;
	uint32_t *item_size;
};

/* A picture of the scene by its source (open addressing; image + 1, 0 empty). */
struct pic_ent {
	struct psg_pic_id id;
	uint32_t image;
};

struct scene {
	struct tree *t;
	uint32_t *slot; /* per arena */
	uint32_t n, cap;
	uint32_t *mesh_arena, *mesh_local; /* glTF mesh -> arena, its mesh there */
	struct gltf_node *nodes;
	struct gltf_mesh *meshes;
	struct gltf_prim *prims;
	struct gltf_material *mats;
	struct gltf_image *images;
	struct scene_img *imgs;
	uint32_t n_meshes, n_prims, n_mats, n_images;
	uint32_t cap_meshes, cap_prims, cap_mats, cap_images;
	char **strs; /* names the model points to */
	size_t n_strs, cap_strs;
	struct pic_ent *pics; /* the pictures already in, by where they come from */
	size_t n_pics, cap_pics;
	struct gltf_model model;
	struct gltf_plan plan;
	bool planned;
	pthread_mutex_t bounds_mu; /* lock order: tree_int.h */
	uint8_t *bounded;	   /* per mesh: its bounds are found */
};

static void scene_free(void *p)
{
	struct scene *sc = p;

	if (sc->planned)
		gltf_plan_free(&sc->plan);
	pthread_mutex_destroy(&sc->bounds_mu);
	free(sc->bounded);
	for (size_t i = 0; i < sc->n_strs; i++)
		free(sc->strs[i]);
	for (uint32_t i = 0; i < sc->n_images; i++) {
		free(sc->imgs[i].n_items);
		free(sc->imgs[i].item_size);
	}
	free(sc->strs);
	free(sc->pics);
	free(sc->slot);
	free(sc->mesh_arena);
	free(sc->mesh_local);
	free(sc->nodes);
	free(sc->meshes);
	free(sc->prims);
	free(sc->mats);
	free(sc->images);
	free(sc->imgs);
	free(sc);
}

/* An arena's .glb export, pinned (release with arena_put). */
struct arena_ref {
	struct tree *t;
	struct asset *as;
	struct cache_ent *pin, *glb_pin;
	const void *glb;
	const struct skate_gltf *g;
};

static const struct gltf_model *arena_get(struct tree *t, uint32_t slot, struct arena_ref *ref,
					  enum rc *r)
{
	const void *glb = NULL;

	*ref = (struct arena_ref){.t = t};
	ref->as = tree_asset_get(t, slot, &ref->pin, r);
	if (ref->as && ref->as->fmt == &tree_format_psg)
		glb = asset_need(ref->as, N_GLB, GLB_SHAPE, &ref->glb_pin, r);
	else if (ref->as)
		*r = RC_FORMAT;
	if (!glb) {
		if (ref->as)
			tree_asset_put(t, ref->pin);
		ref->as = NULL;
		return NULL;
	}
	ref->glb = glb;
	ref->g = psg_glb_export(glb);
	return skate_gltf_model(ref->g);
}

static void arena_put(struct arena_ref *ref)
{
	if (!ref->as)
		return;
	if (ref->glb_pin)
		asset_unpin(ref->as, ref->glb_pin);
	tree_asset_put(ref->t, ref->pin);
	ref->as = NULL;
}

/* Grow *v (of *cap elements) to hold n more past used. */
static bool grow(void **v, uint32_t *cap, uint32_t used, uint64_t more, size_t size)
{
	uint64_t want = (uint64_t)used + more, c = *cap ? *cap : 16;
	void *nv;

	if (want <= *cap)
		return true;
	if (want > UINT32_MAX / 2)
		return false;
	while (c < want)
		c *= 2;
	if (!(nv = xrealloc_n(*v, (size_t)c, size)))
		return false;
	*v = nv;
	*cap = (uint32_t)c;
	return true;
}

/* A copy of an untrusted name the scene keeps. */
static bool keep_name(struct scene *sc, struct gltf_name *nm)
{
	char *p;

	if (sc->n_strs == sc->cap_strs) {
		size_t cap = sc->cap_strs ? sc->cap_strs * 2 : 64;
		char **v = xrealloc_n(sc->strs, cap, sizeof *v);

		if (!v)
			return false;
		sc->strs = v;
		sc->cap_strs = cap;
	}
	if (!(p = malloc(nm->len + 1)))
		return false;
	if (nm->len)
		memcpy(p, nm->p, nm->len);
	p[nm->len] = '\0';
	sc->strs[sc->n_strs++] = p;
	nm->p = p;
	return true;
}

static void img_part(const void *ctx, unsigned part, uint64_t *n_items, uint32_t *item_size)
{
	const struct scene_img *si = ctx;

	*n_items = part < si->n_parts ? si->n_items[part] : 0;
	*item_size = part < si->n_parts ? si->item_size[part] : 0;
}

static enum rc img_render(const void *ctx, unsigned part, uint64_t first, struct emit *e)
{
	const struct scene_img *si = ctx;
	struct arena_ref ref;
	enum rc r;
	const struct gltf_model *m = arena_get(si->sc->t, si->sc->slot[si->arena], &ref, &r);

	if (!m)
		return r == RC_NOMEM ? r : RC_IO;
	r = si->image < m->n_images
		? m->images[si->image].render(m->images[si->image].ctx, part, first, e)
		: RC_IO;
	arena_put(&ref);
	return r;
}

static size_t pic_hash(const struct psg_pic_id *id, size_t cap)
{
	uint64_t h = ((uint64_t)id->slot << 32 | id->row) * 0x9E3779B97F4A7C15ull ^ id->companion;

	return (size_t)(h >> 32) & (cap - 1);
}

static struct pic_ent *pic_at(struct pic_ent *v, size_t cap, const struct psg_pic_id *id)
{
	size_t h = pic_hash(id, cap);

	while (v[h].image && (v[h].id.slot != id->slot || v[h].id.row != id->row ||
			      v[h].id.companion != id->companion))
		h = (h + 1) & (cap - 1);
	return &v[h];
}

/*
 * The scene's picture of id: *image and true when it is in already, else false with room made
 * for it (pic_add). A district's tiles share their textures (bound by GUID across the streams):
 * each is embedded once, not once per arena that shows it.
 */
static bool pic_known(struct scene *sc, const struct psg_pic_id *id, uint32_t *image, bool *oom)
{
	struct pic_ent *e;

	if ((sc->n_pics + 1) * 2 > sc->cap_pics) {
		size_t cap = sc->cap_pics ? sc->cap_pics * 2 : 64;
		struct pic_ent *v = xcalloc_n(cap, sizeof *v);

		if (!v) {
			*oom = true;
			return false;
		}
		for (size_t i = 0; i < sc->cap_pics; i++)
			if (sc->pics[i].image)
				*pic_at(v, cap, &sc->pics[i].id) = sc->pics[i];
		free(sc->pics);
		sc->pics = v;
		sc->cap_pics = cap;
	}
	e = pic_at(sc->pics, sc->cap_pics, id);
	if (!e->image)
		return false;
	*image = e->image - 1;
	return true;
}

static void pic_add(struct scene *sc, const struct psg_pic_id *id, uint32_t image)
{
	*pic_at(sc->pics, sc->cap_pics, id) = (struct pic_ent){*id, image + 1};
	sc->n_pics++;
}

/* The per-mesh and per-image arrays, as long as the meshes and images. */
static bool scene_side_arrays(struct scene *sc)
{
	uint32_t *ma = xrealloc_n(sc->mesh_arena, sc->cap_meshes, sizeof *ma);
	uint32_t *ml;
	struct scene_img *si;

	if (!ma)
		return false;
	sc->mesh_arena = ma;
	if (!(ml = xrealloc_n(sc->mesh_local, sc->cap_meshes, sizeof *ml)))
		return false;
	sc->mesh_local = ml;
	if (!(si = xrealloc_n(sc->imgs, sc->cap_images ? sc->cap_images : 1, sizeof *si)))
		return false;
	sc->imgs = si;
	return true;
}

/* Scene images for the pictures of arena k's model m (*imap: m's image -> the scene's), each
 * picture once however many arenas show it. */
static enum rc scene_pictures(struct scene *sc, uint32_t k, const struct arena_ref *ref,
			      const struct gltf_model *m, uint32_t *imap)
{
	for (uint32_t j = 0; j < m->n_images; j++) {
		const struct gltf_image *src = &m->images[j];
		struct scene_img *si = &sc->imgs[sc->n_images];
		struct gltf_image *im = &sc->images[sc->n_images];
		struct psg_pic_id id;
		bool oom = false;

		if (!psg_glb_pic_id(ref->glb, j, &id)) /* the export's images are its pictures */
			return RC_INVAL;
		if (pic_known(sc, &id, &imap[j], &oom))
			continue;
		if (oom)
			return RC_NOMEM;
		*si = (struct scene_img){sc, k, j, src->n_parts, NULL, NULL};
		si->n_items = xcalloc_n(src->n_parts ? src->n_parts : 1, sizeof *si->n_items);
		si->item_size = xcalloc_n(src->n_parts ? src->n_parts : 1, sizeof *si->item_size);
		imap[j] = sc->n_images++; /* freed with the scene from here on */
		if (!si->n_items || !si->item_size)
			return RC_NOMEM;
		for (unsigned q = 0; q < src->n_parts; q++)
			src->part(src->ctx, q, &si->n_items[q], &si->item_size[q]);
		*im = *src;
		im->part = img_part;
		im->render = img_render;
		im->ctx = NULL; /* scene_build: &sc->imgs[i] once the array stops moving */
		if (!keep_name(sc, &im->name))
			return RC_NOMEM;
		pic_add(sc, &id, imap[j]);
	}
	return RC_OK;
}

/* Copy what the plan needs of arena k's model m: a node (identity: district geometry is fused
 * in world space), its meshes below it, their primitives, materials and pictures renumbered. */
static enum rc scene_take(struct scene *sc, uint32_t k, const struct arena_ref *ref,
			  const struct gltf_model *m)
{
	uint32_t ma0 = sc->n_mats, *imap;
	uint64_t n_prims = 0;
	enum rc r;

	for (uint32_t j = 0; j < m->n_meshes; j++)
		n_prims += m->meshes[j].n_prims;
	if (!grow((void **)&sc->meshes, &sc->cap_meshes, sc->n_meshes, m->n_meshes,
		  sizeof *sc->meshes) ||
	    !grow((void **)&sc->prims, &sc->cap_prims, sc->n_prims, n_prims, sizeof *sc->prims) ||
	    !grow((void **)&sc->mats, &sc->cap_mats, sc->n_mats, m->n_materials,
		  sizeof *sc->mats) ||
	    !grow((void **)&sc->images, &sc->cap_images, sc->n_images, m->n_images,
		  sizeof *sc->images))
		return RC_NOMEM;
	if (!scene_side_arrays(sc) ||
	    !(imap = xcalloc_n(m->n_images ? m->n_images : 1, sizeof *imap)))
		return RC_NOMEM;
	r = scene_pictures(sc, k, ref, m, imap);
	for (uint32_t j = 0; r == RC_OK && j < m->n_materials; j++) {
		struct gltf_material *mt = &sc->mats[sc->n_mats];

		*mt = m->materials[j];
		mt->image = mt->image >= 0 && (uint32_t)mt->image < m->n_images
				? (int32_t)imap[mt->image]
				: -1;
		if (!keep_name(sc, &mt->name))
			r = RC_NOMEM;
		else
			sc->n_mats++;
	}
	free(imap);
	if (r != RC_OK)
		return r;
	for (uint32_t j = 0; j < m->n_meshes; j++) {
		const struct gltf_mesh *me = &m->meshes[j];
		struct gltf_mesh *d = &sc->meshes[sc->n_meshes];

		*d = *me;
		d->skinned = false; /* placed by its arena's node, no skin */
		d->under = k + 1;
		d->targets = NULL; /* district geometry has no morphs */
		d->n_targets = 0;
		d->prims = NULL;
		if (!keep_name(sc, &d->name))
			return RC_NOMEM;
		for (uint32_t q = 0; q < me->n_prims; q++) {
			struct gltf_prim *pr = &sc->prims[sc->n_prims + q];

			*pr = me->prims[q];
			if (pr->material >= 0)
				pr->material += (int32_t)ma0;
		}
		d->prims =
		    (const struct gltf_prim *)(uintptr_t)sc->n_prims; /* fixed in scene_build */
		sc->n_prims += me->n_prims;
		sc->mesh_arena[sc->n_meshes] = k;
		sc->mesh_local[sc->n_meshes] = j;
		sc->n_meshes++;
	}
	return RC_OK;
}

/* Add the arenas of one collection file (its entries, by name) that export a model. */
static enum rc scene_add_collection(struct scene *sc, struct asset *as, const char *coll,
				    const char *file, struct nd_slot_set *seen)
{
	struct tlist l = {0};
	struct nd_arena_ent *e;
	size_t n;
	enum rc r = nd_collection_arenas(as, file, seen, &l, &e, &n);

	if (r != RC_OK) {
		free(e);
		tlist_discard(&l);
		return r == RC_EXISTS ? RC_OK : r;
	}
	for (size_t i = 0; i < n && r == RC_OK; i++) {
		struct arena_ref ref;
		const struct gltf_model *m = arena_get(as->t, e[i].slot, &ref, &r);
		char name[2 * NAME_COMPONENT_MAX + 2];
		struct gltf_node *nd;

		if (!m || !m->n_meshes) { /* not a model, or broken: its own errors.txt says why */
			arena_put(&ref);
			r = r == RC_NOMEM ? r : RC_OK;
			continue;
		}
		if (!grow((void **)&sc->nodes, &sc->cap, sc->n, 1, sizeof *sc->nodes) ||
		    !(sc->slot = xrealloc_n(sc->slot, sc->cap, sizeof *sc->slot))) {
			arena_put(&ref);
			r = RC_NOMEM;
			break;
		}
		snprintf(name, sizeof name, "%s/%s", coll, e[i].name);
		nd = &sc->nodes[sc->n];
		*nd = (struct gltf_node){
		    .name = {name, strlen(name)}, .parent = -1, .r = {0, 0, 0, 1}, .s = {1, 1, 1}};
		sc->slot[sc->n] = e[i].slot;
		r = keep_name(sc, &nd->name) ? scene_take(sc, sc->n, &ref, m) : RC_NOMEM;
		sc->n++;
		arena_put(&ref);
	}
	free(e);
	tlist_discard(&l);
	return r;
}

/* A template already in the scene: its meshes (memo by slot, open addressing). */
struct tmpl_memo {
	uint32_t slot; /* + 1; 0 empty */
	uint32_t mesh0, n_meshes;
};

static struct tmpl_memo *memo_at(struct tmpl_memo *v, size_t cap, uint32_t slot)
{
	size_t h = (slot * 0x9E3779B1u) & (cap - 1);

	while (v[h].slot && v[h].slot != slot + 1)
		h = (h + 1) & (cap - 1);
	return &v[h];
}

/* One more node (and its slot) at the end of the scene's nodes. */
static struct gltf_node *scene_node(struct scene *sc, uint32_t slot, const char *name)
{
	struct gltf_node *nd;

	if (!grow((void **)&sc->nodes, &sc->cap, sc->n, 1, sizeof *sc->nodes) ||
	    !(sc->slot = xrealloc_n(sc->slot, sc->cap, sizeof *sc->slot)))
		return NULL;
	nd = &sc->nodes[sc->n];
	*nd = (struct gltf_node){
	    .name = {name, strlen(name)}, .parent = -1, .r = {0, 0, 0, 1}, .s = {1, 1, 1}};
	sc->slot[sc->n] = slot;
	if (!keep_name(sc, &nd->name))
		return NULL;
	sc->n++;
	return nd;
}

/* Prop i: a node at its placement showing its template's meshes. The first prop of a template
 * brings the meshes (their nodes its children); the others show them by reference. */
static enum rc scene_add_prop(struct scene *sc, const struct dist_placed *p, uint32_t i,
			      struct tmpl_memo *me)
{
	char name[64];
	uint32_t k = sc->n, first = !me->slot;
	struct gltf_node *nd;
	enum rc r = RC_OK;

	if (first) {
		struct arena_ref ref;
		const struct gltf_model *m = arena_get(sc->t, p->model, &ref, &r);

		me->slot = p->model + 1;
		me->mesh0 = sc->n_meshes;
		me->n_meshes = 0;
		if (!m || !m->n_meshes) { /* not a model: props.tsv names it; nothing to place */
			arena_put(&ref);
			return r == RC_NOMEM ? r : RC_OK;
		}
		snprintf(name, sizeof name, "prop %u 0x%016" PRIx64, i, p->template_id);
		if (!(nd = scene_node(sc, p->model, name)))
			r = RC_NOMEM;
		else
			r = scene_take(sc, k, &ref, m);
		if (r == RC_OK)
			me->n_meshes = sc->n_meshes - me->mesh0;
		arena_put(&ref);
	} else {
		if (!me->n_meshes)
			return RC_OK;
		snprintf(name, sizeof name, "prop %u 0x%016" PRIx64, i, p->template_id);
		if (!(nd = scene_node(sc, p->model, name)))
			return RC_NOMEM;
		if (me->n_meshes == 1)
			nd->mesh = me->mesh0 + 1;
		for (uint32_t j = 0; me->n_meshes > 1 && j < me->n_meshes; j++) {
			struct gltf_node *c = scene_node(sc, p->model, name);

			if (!c)
				return RC_NOMEM;
			c->parent = (int32_t)k;
			c->mesh = me->mesh0 + j + 1;
		}
		nd = &sc->nodes[k]; /* the array may have moved */
	}
	if (r == RC_OK) {
		nd = &sc->nodes[k];
		memcpy(nd->t, p->pos, sizeof nd->t);
		memcpy(nd->r, p->rot, sizeof nd->r);
		memcpy(nd->s, p->scale, sizeof nd->s);
	}
	return r;
}

/* The props whose template resolved (props.tsv), placed: one mesh per template, many nodes. */
static enum rc scene_add_props(struct scene *sc, struct asset *as)
{
	struct cache_ent *ent;
	enum rc r;
	const struct dist_objects *o = nd_objects_peek(as, OBJ_PLACED, &ent, &r);
	size_t n, cap = 16;
	struct tmpl_memo *memo;

	if (!o)
		return r == RC_NOMEM ? r : RC_OK; /* errors.txt says why */
	n = o->n_placed < DIST_PLACED_MAX ? o->n_placed : DIST_PLACED_MAX;
	while (cap < 2 * n)
		cap *= 2;
	if (!(memo = xcalloc_n(cap, sizeof *memo)))
		r = RC_NOMEM;
	for (size_t i = 0; memo && i < n && r == RC_OK; i++)
		r = scene_add_prop(sc, &o->placed[i], (uint32_t)i,
				   memo_at(memo, cap, o->placed[i].model));
	free(memo);
	if (ent)
		asset_unpin(as, ent);
	return r;
}

static enum rc scene_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out);

/*
 * Mesh i's POSITION bounds, found the first time the JSON needs them: the plan comes from the
 * arenas' headers alone, so a stat reads no vertex. An arena that cannot give them leaves
 * zeros (its data then fails to read, and its own errors.txt says why).
 */
static enum rc scene_bounds(void *ctx, uint32_t i)
{
	struct scene *sc = ctx;
	enum rc r = RC_OK;

	if (i >= sc->n_meshes)
		return RC_INVAL;
	pthread_mutex_lock(&sc->bounds_mu);
	if (!sc->bounded[i]) {
		float mn[3] = {0, 0, 0}, mx[3] = {0, 0, 0};
		struct arena_ref ref;
		const struct gltf_model *m =
		    arena_get(sc->t, sc->slot[sc->mesh_arena[i]], &ref, &r);

		if (m && sc->mesh_local[i] < m->n_meshes)
			r = skate_gltf_mesh_bounds(ref.g, &ref.as->src, sc->mesh_local[i], mn, mx);
		arena_put(&ref);
		if (r != RC_OK && r != RC_NOMEM)
			memset(mn, 0, sizeof mn), memset(mx, 0, sizeof mx);
		if (r != RC_NOMEM) { /* memory may come back: found again next time */
			memcpy(sc->meshes[i].min, mn, sizeof mn);
			memcpy(sc->meshes[i].max, mx, sizeof mx);
			sc->bounded[i] = 1;
			r = RC_OK;
		}
	}
	pthread_mutex_unlock(&sc->bounds_mu);
	return r;
}

/* The model over what scene_take copied: primitives' pointers set now the array is whole. */
static bool scene_build(struct scene *sc)
{
	for (uint32_t i = 0; i < sc->n_meshes; i++)
		sc->meshes[i].prims = sc->prims + (uintptr_t)sc->meshes[i].prims;
	for (uint32_t i = 0; i < sc->n_images; i++) /* the array moved as it grew */
		sc->images[i].ctx = &sc->imgs[i];
	sc->model = (struct gltf_model){
	    .nodes = sc->nodes,
	    .n_nodes = sc->n,
	    .meshes = sc->meshes,
	    .n_meshes = sc->n_meshes,
	    .materials = sc->mats,
	    .n_materials = sc->n_mats,
	    .images = sc->images,
	    .n_images = sc->n_images,
	    .fill = scene_fill,
	    .bounds_later = scene_bounds,
	};
	sc->bounded = calloc(sc->n_meshes ? sc->n_meshes : 1, 1);
	return sc->bounded != NULL;
}

/* Data of scene mesh q->mesh: its arena's export, read from the arena's own bytes. */
static enum rc scene_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct scene *sc = ctx;
	struct gltf_req lq = *q;
	struct arena_ref ref;
	const struct gltf_model *m;
	enum rc r;

	if (q->mesh >= sc->model.n_meshes)
		return RC_INVAL;
	m = arena_get(sc->t, sc->slot[sc->mesh_arena[q->mesh]], &ref, &r);
	if (!m)
		return r == RC_NOMEM ? r : RC_IO;
	lq.mesh = sc->mesh_local[q->mesh];
	r = lq.mesh < m->n_meshes ? skate_gltf_fill(ref.g, &ref.as->src, &lq, first, n, out)
				  : RC_IO;
	arena_put(&ref);
	return r;
}

/* The Pres collections of the scene (arg 0: the Global and every High tile; else CMAP record
 * arg - 1 alone), their arenas placed. */
enum rc nd_load_scene(struct asset *as, uint64_t arg, void **data, size_t *bytes,
		      void (**dtor)(void *))
{
	struct nd_slot_set seen = {0};
	const struct district *m;
	const struct dist_kind_set *ks;
	struct scene *sc;
	char ext[4];
	enum rc r;

	if (!(m = nd_manifests(as, &r)))
		return r;
	if (!as->t->fold)
		return RC_NOENT;
	ks = &m->k[DIST_PRES];
	if (arg > ks->cmap.n)
		return RC_NOENT;
	if (!(sc = calloc(1, sizeof *sc)))
		return RC_NOMEM;
	sc->t = as->t;
	pthread_mutex_init(&sc->bounds_mu, NULL);
	sm_ext(m->pf, SM_SFIL, ext);
	for (uint32_t i = 0; i < ks->cmap.n && r == RC_OK; i++) {
		const struct sm_collection *c = &ks->cmap.v[i];
		char file[NAME_COMPONENT_MAX + 8];

		if (arg ? i != arg - 1 : !dist_in_scene(m, DIST_PRES, i))
			continue;
		snprintf(file, sizeof file, "%s.%s", c->safe, ext);
		r = scene_add_collection(sc, as, c->safe, file, &seen);
		if (r == RC_NOENT) /* a tile without its file cannot be shown; the scene goes on */
			r = arg ? RC_IO : RC_OK;
	}
	free(seen.v);
	if (r == RC_OK && !arg)
		r = scene_add_props(sc, as);
	if (r == RC_OK)
		r = scene_build(sc) ? RC_OK : RC_NOMEM;
	if (r == RC_OK) {
		r = gltf_plan(&sc->model, &sc->plan);
		sc->planned = r == RC_OK;
	}
	if (r != RC_OK) {
		scene_free(sc);
		return r;
	}
	*data = sc;
	*bytes = sizeof *sc + gltf_plan_heap(&sc->plan) +
		 (size_t)sc->cap_meshes * (sizeof *sc->meshes + 8) +
		 (size_t)sc->cap_prims * sizeof *sc->prims +
		 (size_t)sc->cap_mats * sizeof *sc->mats +
		 (size_t)sc->cap_images * (sizeof *sc->images + sizeof *sc->imgs + 64) +
		 (size_t)sc->cap * (sizeof *sc->nodes + 4) + sc->n_strs * 48 +
		 sc->cap_pics * sizeof *sc->pics;
	*dtor = scene_free;
	return RC_OK;
}

enum rc nd_scene_layout(const struct tctx *c, struct layout_build *lb)
{
	const struct scene *sc = c->need;

	view_glb_layout(&sc->plan, lb);
	return RC_OK;
}

enum rc nd_scene_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct scene *sc = c->need;

	return gltf_render(&sc->plan, (void *)sc, part, first, e);
}
