/*
 * The decodes of a mounted arena, loaded on first use (tree_int.h, "needs"): the scene, the
 * export plans, texture names and descriptions, the TableOfContents, the materials, and the
 * problem sweeps errors.txt and errors-full.txt list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_export.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_objects.h"
#include "psgfs/formats/texture.h"
#include "tree/psg/ns_psg.h"
#include "tree/psg/psg_materials.h"
#include "tree/psg/view_psg.h"

static void scene_memo_free(void *p)
{
	struct scene_memo *m = p;

	skate_scene_free(m->sc);
	diag_free(&m->d);
	free(m);
}

static enum rc load_scene(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	struct scene_memo *m = calloc(1, sizeof *m);
	enum rc r;

	(void)arg;
	if (!m)
		return RC_NOMEM;
	diag_init(&m->d);
	r = skate_scene_load(&as->src, &pm(as)->a, pm(as)->hierarchy, &m->sc, &m->d);
	if (r != RC_OK) {
		scene_memo_free(m);
		return r;
	}
	*data = m;
	*bytes = skate_scene_bytes(m->sc) + sizeof *m;
	*dtor = scene_memo_free;
	return RC_OK;
}

static void stats_memo_free(void *p)
{
	struct stats_memo *m = p;

	skate_mesh_stats_free(m->st);
	diag_free(&m->d);
	free(m);
}

static enum rc load_stats(struct asset *as, uint64_t k, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	enum rc r;
	const struct scene_memo *s = psg_scene_of(as, &r);
	struct stats_memo *m;

	if (!s)
		return r;
	m = calloc(1, sizeof *m);
	if (!m)
		return RC_NOMEM;
	diag_init(&m->d);
	r = k < s->sc->n_meshes
		? skate_mesh_stats_build(&as->src, &pm(as)->a, s->sc, (size_t)k, &m->st, &m->d)
		: RC_NOENT;
	if (r != RC_OK) {
		stats_memo_free(m);
		return r;
	}
	*data = m;
	*bytes = sizeof *m + m->d.n * 96 +
		 (m->st->n_tri_restart + 2 * m->st->n_vert_restart) * sizeof(uint64_t);
	*dtor = stats_memo_free;
	return RC_OK;
}

/* The export plan (slot N_PLAN) or the export with stats (N_EXPORT). */
static enum rc load_export(struct asset *as, uint64_t with_stats, void **data, size_t *bytes,
			   void (**dtor)(void *))
{
	enum rc r;
	const struct scene_memo *s = psg_scene_of(as, &r);
	struct skate_export_model *m;

	if (!s)
		return r;
	r = skate_export_build(&as->src, &pm(as)->a, s->sc, !as->t->opts.yup, with_stats != 0, &m);
	if (r != RC_OK)
		return r;
	*data = m;
	*bytes = skate_export_bytes(m);
	*dtor = (void (*)(void *))skate_export_free;
	return RC_OK;
}

static enum rc load_plan(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			 void (**dtor)(void *))
{
	(void)arg;
	return load_export(as, 0, data, bytes, dtor);
}

static enum rc load_export_full(struct asset *as, uint64_t arg, void **data, size_t *bytes,
				void (**dtor)(void *))
{
	(void)arg;
	return load_export(as, 1, data, bytes, dtor);
}

static void texnames_free(void *p)
{
	struct texnames_memo *m = p;

	texture_names_free(m->names, m->n);
	free(m);
}

/* What the names hold: the pointer array, one per row, is only touched where a texture is
 * (a calloc this large is mapped, its untouched pages cost nothing), so a dictionary kept as
 * runs (a hole of claimed rows) is charged by its textures' pages; then the names. */
static size_t texnames_heap(const struct texnames_memo *m, const struct arena *a)
{
	size_t bytes = 0, pages = 0;

	if (!a->run_first)
		bytes += (size_t)m->n * sizeof(char *);
	for (uint32_t i = 0; i < m->n; i++)
		if (m->names[i]) {
			bytes += cache_heap_cost(strlen(m->names[i]) + 1);
			pages++;
		}
	if (a->run_first)
		bytes += pages * 4096;
	return bytes;
}

static enum rc load_texnames(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			     void (**dtor)(void *))
{
	struct texnames_memo *m = calloc(1, sizeof *m);
	enum rc r;

	(void)arg;
	if (!m)
		return RC_NOMEM;
	m->n = pm(as)->a.n_dict;
	r = texture_names(&as->src, &pm(as)->a, &m->names, NULL);
	if (r != RC_OK) {
		free(m);
		return r;
	}
	/* A texture whose texels are past the end of a truncated file is not listed: whatever
	 * is listed must stat. errors.txt says what is missing. Damaged ones stay (EIO). */
	for (uint32_t i = 0; i < m->n; i++) {
		struct tex_desc d;

		if (!m->names[i])
			continue;
		r = tex_describe(&as->src, &pm(as)->a, i, &d, NULL);
		if (r == RC_NOMEM) {
			texnames_free(m);
			return r;
		}
		if (r == RC_TRUNCATED) {
			free(m->names[i]);
			m->names[i] = NULL;
			m->unlisted++;
		}
	}
	*data = m;
	*bytes = cache_heap_cost(sizeof *m) + texnames_heap(m, &pm(as)->a);
	*dtor = texnames_free;
	return RC_OK;
}

static enum rc load_toc(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			void (**dtor)(void *))
{
	struct view_toc *v;
	enum rc r = view_toc_load(&as->src, &pm(as)->a, &v);

	(void)arg;
	if (r != RC_OK)
		return r;
	*data = v;
	*bytes = sizeof *v + v->n * (sizeof *v->e + 32);
	*dtor = (void (*)(void *))view_toc_free;
	return RC_OK;
}

static enum rc load_tex(struct asset *as, uint64_t i, void **data, size_t *bytes,
			void (**dtor)(void *))
{
	struct tex_desc *d = malloc(sizeof *d);
	enum rc r;

	if (!d)
		return RC_NOMEM;
	r = tex_describe(&as->src, &pm(as)->a, (uint32_t)i, d, NULL);
	if (r != RC_OK) {
		free(d);
		return r;
	}
	*data = d;
	*bytes = sizeof *d;
	*dtor = NULL;
	return RC_OK;
}

/* ---- what errors.txt lists: checks that read no vertex data and no texels ---- */

enum rc psg_object_text(struct asset *as, uint32_t i, struct buf *out, struct diag *d)
{
	const struct arena *a = &pm(as)->a;

	if (i >= a->n_dict || !view_object_has_text(arena_row(a, i)->type_id))
		return RC_NOENT;
	return view_object_text(&as->src, a, i, out, d);
}

void psg_obj_name(const struct arena *a, uint32_t i, char *out, size_t n)
{
	struct buf b;

	buf_init(&b);
	view_obj_label(a, i, &b);
	buf_putc(&b, 0);
	snprintf(out, n, "%s", b.oom || !b.data ? "object" : (char *)b.data);
	buf_free(&b);
}

static void diag_append(struct diag *to, const struct diag *from)
{
	for (size_t i = 0; i < from->n; i++)
		diag_add(to, "%s", from->msg[i]);
	to->dropped += from->dropped;
}

/* Textures and decoded object views, in dictionary order. */
static void sweep_objects(struct asset *as, struct diag *d)
{
	const struct arena *a = &pm(as)->a;

	for (uint32_t i = 0; i < a->n_dict; i++) {
		uint32_t type = arena_row(a, i)->type_id;
		char label[64];
		struct buf b;
		enum rc r;

		if (type == RW_T_TEXTURE) {
			struct tex_desc td;
			struct diag td_d;

			diag_init(&td_d);
			r = tex_describe(&as->src, a, i, &td, &td_d);
			diag_append(d, &td_d);
			if (r != RC_OK && td_d.n == 0)
				diag_add(d, "object %u (Texture): cannot decode: %s", i, rc_str(r));
			diag_free(&td_d);
		}
		if (!view_object_has_text(type) || !arena_row(a, i)->readable)
			continue;
		buf_init_count(&b);
		r = psg_object_text(as, i, &b, NULL);
		if (r != RC_OK) {
			psg_obj_name(a, i, label, sizeof label);
			diag_add(d, "objects/%s.txt: cannot decode: %s", label, rc_str(r));
		}
	}
}

/* Structural problems in a fixed order: open, scene, textures and objects. */
static enum rc load_sweep(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	struct psg_mount *m = pm(as);
	struct diag *d = calloc(1, sizeof *d);
	enum rc r;

	(void)arg;
	if (!d)
		return RC_NOMEM;
	diag_init(d);
	diag_append(d, &m->open_diag);
	if (m->has_model) {
		const struct scene_memo *sc = psg_scene_of(as, &r);
		struct cache_ent *ent;
		const struct skate_export_model *plan;

		if (!sc)
			diag_add(d, "scene: cannot decode: %s", rc_str(r));
		else
			diag_append(d, &sc->d);
		plan = sc ? asset_need(as, N_PLAN, 0, &ent, &r) : NULL;
		if (plan)
			diag_append(d, &plan->skipped);
	}
	sweep_objects(as, d);
	*data = d;
	*bytes = sizeof *d + d->n * 96;
	*dtor = diag_box_free;
	return RC_OK;
}

/* errors-full.txt: errors.txt, then what decoding every mesh's data finds. */
static enum rc load_full(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			 void (**dtor)(void *))
{
	struct cache_ent *ent;
	const struct diag *sw;
	const struct scene_memo *sc;
	struct diag *d;
	enum rc r;

	(void)arg;
	sw = asset_need(as, N_SWEEP, 0, &ent, &r);
	if (!sw)
		return r;
	d = calloc(1, sizeof *d);
	if (!d)
		return RC_NOMEM;
	diag_init(d);
	diag_append(d, sw);
	sc = pm(as)->has_model ? psg_scene_of(as, &r) : NULL;
	for (size_t k = 0; sc && k < sc->sc->n_meshes; k++) {
		struct cache_ent *me;
		const struct stats_memo *mm;

		if (!sc->sc->meshes[k].ok)
			continue; /* errors.txt says why already */
		mm = asset_need(as, N_STATS, k, &me, &r);
		if (!mm) {
			diag_add(d, "mesh %02zu: cannot decode: %s", k, rc_str(r));
			continue;
		}
		diag_append(d, &mm->d);
		asset_unpin(as, me);
	}
	*data = d;
	*bytes = sizeof *d + d->n * 96;
	*dtor = diag_box_free;
	return RC_OK;
}

/* Channels naming the model's own TOC entries (the Name channel names entry 0). */
static enum rc own_toc_resolve(struct asset *as, struct psg_materials *ms)
{
	struct psg_textures_index ix = {0};
	const struct view_toc *toc;
	struct cache_ent *ent;
	enum rc r;
	char **names;

	toc = asset_need(as, N_TOC, 0, &ent, &r); /* permanent: no pin */
	if (!toc)
		return r == RC_NOMEM ? r : RC_OK;
	ix.v = xcalloc_n(toc->n ? toc->n : 1, sizeof *ix.v);
	names = xcalloc_n(toc->n ? toc->n : 1, sizeof *names);
	r = ix.v && names ? RC_OK : RC_NOMEM;
	for (size_t k = 0; r == RC_OK && k < toc->n; k++) {
		const struct view_toc_entry *e = &toc->e[k];

		names[k] = e->name ? strndup(e->name, e->name_len) : strdup("");
		if (!names[k])
			r = RC_NOMEM;
		ix.v[ix.n++] = (struct psg_tex_ref){e->guid, names[k], 0, k};
	}
	if (r == RC_OK)
		r = psg_materials_resolve(ms, &ix, true);
	for (size_t k = 0; names && k < toc->n; k++)
		free(names[k]);
	free(names);
	free(ix.v);
	return r;
}

static enum rc load_materials(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			      void (**dtor)(void *))
{
	struct psg_materials *ms;
	enum rc r;

	(void)arg;
	r = psg_materials_load(&as->src, &pm(as)->a, as->name, &ms);
	if (r == RC_OK)
		r = own_toc_resolve(as, ms);
	if (r == RC_OK)
		r = psg_materials_link(as, ms);
	if (r != RC_OK) {
		psg_materials_free(ms);
		return r;
	}
	*data = ms;
	*bytes = sizeof *ms + ms->n * (sizeof *ms->v + 256);
	*dtor = (void (*)(void *))psg_materials_free;
	return RC_OK;
}

const struct tree_need psg_needs[N_COUNT] = {
    [N_SCENE] = {load_scene, 0},
    [N_TEXNAMES] = {load_texnames, 1},
    [N_TOC] = {load_toc, 2},
    [N_SWEEP] = {load_sweep, 3},
    [N_FULL] = {load_full, 4},
    [N_PLAN] = {load_plan, 5},
    [N_EXPORT] = {load_export_full, 6},
    [N_MATERIALS] = {load_materials, 7},
    [N_STATS] = {load_stats, -1},
    [N_TEX] = {load_tex, -1},
    [N_GLB] = {psg_load_glb, -1},
};
