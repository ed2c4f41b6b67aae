/*
 * export/<stem>.glb of a PSG model (docs/gltf.md, "PSG models"): the export model the .psk uses,
 * written as glTF by skate_gltf.c, with each material's diffuse texture embedded as PNG when
 * the companion texture arena resolves it (psg_materials.c). The pictures are rendered from
 * the companion's texels while the .glb is read, like its textures/<name>.png.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/png.h"
#include "psgfs/formats/skate_gltf.h"
#include "psgfs/formats/texture.h"
#include "tree/psg/ns_psg.h"
#include "tree/psg/psg_materials.h"
#include "tree/core/views.h"

/* One embedded picture: a texture of the companion or of a 0x<GUID> arena elsewhere in the
 * mount (slot), described when the export was planned. */
struct glb_image {
	struct asset *model;
	struct tex_desc d;
	uint32_t slot, row;
	char name[NAME_COMPONENT_MAX + 1];
};

struct glb_memo {
	struct skate_gltf *g;
	struct gltf_image *images;
	struct glb_image *pics;
	uint32_t n_images;
	int32_t *mat_image;
};

static void glb_memo_free(void *p)
{
	struct glb_memo *m = p;

	skate_gltf_free(m->g);
	free(m->images);
	free(m->pics);
	free(m->mat_image);
	free(m);
}

/* ---- pictures ---- */

static void pic_part(const void *ctx, unsigned part, uint64_t *n_items, uint32_t *item_size)
{
	const struct glb_image *im = ctx;
	struct tex_pic pic;
	struct pngs p;

	if (tex_picture_png(&p, &pic, NULL, &im->d) == RC_OK)
		pngs_part(&p, part, n_items, item_size);
	else
		*n_items = *item_size = 0;
}

/* The arena is fetched again for each piece: a folder mount may have closed it since. */
static enum rc pic_render(const void *ctx, unsigned part, uint64_t first, struct emit *e)
{
	const struct glb_image *im = ctx;
	struct cache_ent *pin;
	enum rc r;
	struct asset *comp = psg_channel_arena_get(im->model, im->slot, &pin, &r);
	struct tex_pic pic;
	struct pngs p;

	if (!comp)
		return r == RC_NOMEM ? r : RC_IO;
	r = tex_picture_png(&p, &pic, &comp->src, &im->d);
	if (r == RC_OK)
		r = pngs_render(&p, part, first, e);
	psg_channel_arena_put(im->model, im->slot, pin);
	return r;
}

/* ---- which texture each material shows ---- */

static bool is_diffuse(const struct psg_channel *ch)
{
	return ch->texture && ch->input && !strcasecmp(ch->input, "diffuse");
}

/* The diffuse texture row of the tRMaterial at (obj, off), or UINT32_MAX; its arena's slot
 * (0: the companion) in *slot. */
static uint32_t diffuse_row(const struct psg_materials *ms, uint32_t obj, uint32_t off,
			    const char **name, uint32_t *slot)
{
	for (uint32_t i = 0; i < ms->n; i++) {
		if (ms->v[i].rmd != obj || ms->v[i].at != off)
			continue;
		for (uint32_t c = 0; c < ms->v[i].n_ch; c++)
			if (is_diffuse(&ms->v[i].ch[c])) {
				*name = ms->v[i].ch[c].texture;
				*slot = ms->v[i].ch[c].tex_slot;
				return ms->v[i].ch[c].tex_row;
			}
	}
	return UINT32_MAX;
}

/* Describe texture `row` of the arena at `slot` (0: the companion) into a new picture; false
 * when it cannot be shown. */
static bool add_picture(struct asset *as, struct glb_memo *gm, uint32_t slot, uint32_t row,
			const char *name)
{
	struct cache_ent *pin, *ent;
	enum rc r;
	struct asset *comp = psg_channel_arena_get(as, slot, &pin, &r);
	const struct tex_desc *d = NULL;
	struct glb_image *im = &gm->pics[gm->n_images];

	if (comp && comp->fmt == &tree_format_psg)
		d = asset_need(comp, N_TEX, row, &ent, &r);
	if (d) {
		*im = (struct glb_image){.model = as, .d = *d, .slot = slot, .row = row};
		name_component(name, strlen(name), im->name);
		gm->images[gm->n_images] = (struct gltf_image){
		    .name = {im->name, strlen(im->name)},
		    .mime = "image/png",
		    .n_parts = PNGS_PARTS,
		    .part = pic_part,
		    .render = pic_render,
		    .ctx = im,
		};
		gm->n_images++;
		asset_unpin(comp, ent);
	}
	if (comp)
		psg_channel_arena_put(as, slot, pin);
	return d != NULL;
}

/* Each exported material's base colour: its diffuse channel's texture, one picture each. */
static enum rc pick_images(struct asset *as, const struct skate_scene *sc,
			   const struct skate_export_model *x, struct glb_memo *gm)
{
	struct cache_ent *ent;
	enum rc r;
	const struct psg_materials *ms = asset_need(as, N_MATERIALS, 0, &ent, &r);
	uint32_t n = x->n_materials ? x->n_materials : 1;

	gm->mat_image = xcalloc_n(n, sizeof *gm->mat_image);
	gm->images = xcalloc_n(n, sizeof *gm->images);
	gm->pics = xcalloc_n(n, sizeof *gm->pics);
	if (!gm->mat_image || !gm->images || !gm->pics)
		return RC_NOMEM;
	for (uint32_t k = 0; k < n; k++)
		gm->mat_image[k] = -1;
	for (uint32_t k = 0; ms && k < x->n_meshes; k++) {
		const struct skate_scene_mesh *sm = &sc->meshes[x->meshes[k].scene];
		const char *name = NULL;
		uint32_t slot = 0, i = 0;
		uint32_t row = diffuse_row(ms, sm->material_obj, sm->material_off, &name, &slot);

		if (row == UINT32_MAX)
			continue;
		while (i < gm->n_images && (gm->pics[i].slot != slot || gm->pics[i].row != row))
			i++;
		if (i == gm->n_images && !add_picture(as, gm, slot, row, name))
			continue;
		gm->mat_image[x->meshes[k].material] = (int32_t)i;
	}
	return RC_OK;
}

enum rc psg_load_glb(struct asset *as, uint64_t arg, void **data, size_t *bytes,
		     void (**dtor)(void *))
{
	struct cache_ent *ent;
	enum rc r;
	const struct scene_memo *s = psg_scene_of(as, &r);
	const struct skate_export_model *x =
	    s ? asset_need(as, arg == GLB_SHAPE ? N_PLAN : N_EXPORT, 0, &ent, &r) : NULL;
	struct glb_memo *gm;

	if (!x)
		return r;
	gm = calloc(1, sizeof *gm);
	r = gm ? pick_images(as, s->sc, x, gm) : RC_NOMEM;
	if (r == RC_OK && arg == GLB_SHAPE)
		r = skate_gltf_shape(&as->src, &pm(as)->a, s->sc, x, gm->images, gm->n_images,
				     gm->mat_image, &gm->g);
	else if (r == RC_OK)
		r = skate_gltf_open(&as->src, &pm(as)->a, s->sc, x, gm->images, gm->n_images,
				    gm->mat_image, &gm->g, NULL);
	if (r != RC_OK) {
		if (gm)
			glb_memo_free(gm);
		return r;
	}
	*data = gm;
	*bytes = sizeof *gm + skate_gltf_bytes(gm->g) +
		 x->n_materials * (sizeof *gm->images + sizeof *gm->pics + sizeof(int32_t));
	*dtor = glb_memo_free;
	return RC_OK;
}

enum rc psg_glb_layout(const struct tctx *c, struct layout_build *lb)
{
	const struct glb_memo *gm = c->need;

	view_glb_layout(skate_gltf_plan(gm->g), lb);
	return RC_OK;
}

enum rc psg_glb_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct glb_memo *gm = c->need;

	return skate_gltf_render(gm->g, &c->as->src, part, first, e);
}

const struct skate_gltf *psg_glb_export(const void *glb)
{
	return ((const struct glb_memo *)glb)->g;
}

bool psg_glb_pic_id(const void *glb, uint32_t i, struct psg_pic_id *id)
{
	const struct glb_memo *gm = glb;
	const struct glb_image *im;

	if (i >= gm->n_images)
		return false;
	im = &gm->pics[i];
	*id = (struct psg_pic_id){im->slot ? im->slot : im->model->slot, im->row, !im->slot};
	return true;
}
