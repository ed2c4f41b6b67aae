/*
 * Skate object harness over a memory source: every decoder on every object (whatever its
 * type, so type confusion is covered), the decoded object views, the TOC, the scene, each
 * mesh's vertices/skin/triangles with their text views, the PSK export (Y-up and Z-up), and
 * each texture's check, load, DDS and PNG.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/skate_export.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_objects.h"
#include "psgfs/formats/texture.h"
#include "tree/psg/view_psg.h"

/* Decoders only hold pointers into p; every one gets the same bytes. */
static void decode_all(const struct arena *a, uint32_t i, const uint8_t *p, size_t len,
		       struct diag *d)
{
	struct skate_version v;
	struct skate_toc toc;
	struct skate_rmd rmd;
	struct skate_instance_data inst;
	struct skate_vdes vd;
	struct skate_vb vb;
	struct skate_ib ib;
	struct skate_mesh_helper mh;
	struct skate_optimesh om;
	struct skate_model mo;
	struct ps3_texture tx;
	struct tex_layout tl;
	char why[128];

	(void)skate_version_decode(a, i, p, len, &v, d);
	if (skate_toc_decode(a, i, p, len, &toc, d) == RC_OK)
		skate_toc_free(&toc);
	if (skate_rmd_decode(a, i, p, len, &rmd, d) == RC_OK)
		skate_rmd_free(&rmd);
	if (skate_instance_decode(a, i, p, len, &inst, d) == RC_OK)
		skate_instance_free(&inst);
	(void)skate_vdes_parse(p, len, i, &vd, d);
	(void)skate_vb_parse(p, len, &vb);
	(void)skate_ib_parse(p, len, &ib);
	if (skate_mesh_helper_parse(p, len, i, &mh, d) == RC_OK)
		skate_mesh_helper_free(&mh);
	if (skate_optimesh_parse(p, len, i, &om, d) == RC_OK)
		skate_optimesh_free(&om);
	if (skate_model_parse(p, len, i, &mo, d) == RC_OK)
		skate_model_free(&mo);
	if (ps3_texture_decode(p, len, a->big_endian, &tx) == RC_OK)
		(void)tex_layout_get(&tx, &tl, why, sizeof why);
}

static void mesh_views(const struct src *s, const struct arena *a, struct skate_scene *sc,
		       struct diag *d)
{
	struct buf b;

	for (size_t k = 0; k < sc->n_meshes; k++) {
		struct skate_mesh_stats *st = NULL;
		struct view_mesh vm = {s, a, sc, k, NULL};
		struct emit e;

		buf_init(&b);
		(void)view_descriptor_text(sc, k, &b);
		(void)view_palette_text(sc, k, &b);
		(void)view_islands_text(sc, k, &b);
		buf_free(&b);
		if (!sc->meshes[k].ok)
			continue;
		emit_init_count(&e, 4096);
		(void)view_vertices(&vm, 0, &e);
		(void)view_skin(&vm, 0, &e);
		if (skate_mesh_stats_build(s, a, sc, k, &st, d) == RC_OK) {
			vm.st = st;
			(void)view_triangles(&vm, 0, &e);
			skate_mesh_stats_free(st);
		}
		emit_free(&e);
	}
	buf_init(&b);
	(void)view_bones_text(sc, &b);
	(void)view_bone_names_text(sc, &b);
	(void)view_inverse_bind_text(sc, &b);
	for (uint32_t i = 0; i < sc->n_bones && i < 1024; i++) {
		char name[80];

		view_bone_file_name(sc, i, name);
		(void)view_bone_text(sc, i, &b);
	}
	view_scene_summary(sc, &b);
	buf_free(&b);
	for (int zup = 0; zup < 2; zup++) {
		bool pskx;

		buf_init(&b);
		(void)skate_export_psk(s, a, sc, zup, &b, &pskx);
		buf_free(&b);
	}
}

static void textures(const struct src *s, const struct arena *a, struct diag *d)
{
	char **names = NULL;

	if (texture_names(s, a, &names, d) == RC_OK)
		texture_names_free(names, a->n_dict);
	for (uint32_t i = 0; i < a->n_dict; i++) {
		struct texture_image *img = NULL;
		struct tex_desc td;
		struct buf b;

		if (arena_row(a, i)->type_id != RW_T_TEXTURE)
			continue;
		(void)tex_describe(s, a, i, &td, d);
		if (texture_load(s, a, i, &img, d) != RC_OK)
			continue;
		buf_init(&b);
		(void)texture_dds(img, &b);
		(void)texture_png(s, img, &b);
		(void)view_texture_info_line(s, a, i, "t", &b);
		buf_free(&b);
		texture_image_free(img);
	}
}

int fuzz_one_skate(const uint8_t *p, size_t n)
{
	struct src s;
	struct src_mem m;
	struct arena a;
	struct diag d;
	struct skate_scene *sc = NULL;
	struct skate_toc_item *items = NULL;
	size_t n_items = 0;
	struct buf b;

	diag_init(&d);
	src_init_mem(&s, &m, p, n);
	if (arena_open(&s, &a, &d) != RC_OK) {
		diag_free(&d);
		return 0;
	}
	for (uint32_t i = 0; i < a.n_dict; i++) {
		uint8_t *obj = NULL;
		size_t len = 0;

		if (arena_read_object(&s, &a, i, &obj, &len) == RC_OK)
			decode_all(&a, i, obj, len, &d);
		free(obj);
		buf_init(&b);
		(void)view_object_text(&s, &a, i, &b, &d);
		view_obj_label(&a, i, &b);
		buf_free(&b);
	}
	if (skate_toc_entries(&s, &a, &items, &n_items, &d) == RC_OK)
		skate_toc_items_free(items, n_items);
	{
		struct view_toc *toc;

		if (view_toc_load(&s, &a, &toc) == RC_OK) {
			struct emit e;

			emit_init_count(&e, 4096);
			(void)view_toc_render(&a, toc, 0, &e);
			emit_free(&e);
			view_toc_free(toc);
		}
	}
	buf_init(&b);
	buf_puts(&b, "bone\tparent\nzz\t-\n");
	if (skate_scene_load(&s, &a, NULL, &sc, &d) == RC_OK) {
		mesh_views(&s, &a, sc, &d);
		/* A hierarchy by the file's own names: every bone the child of the next, a cycle.
		 */
		for (uint32_t i = 0; i < sc->n_bones && i < 256; i++)
			buf_printf(&b, "%s\t%s\n", sc->bones[i].name ? sc->bones[i].name : "",
				   sc->bones[(i + 1) % sc->n_bones].name
				       ? sc->bones[(i + 1) % sc->n_bones].name
				       : "");
		skate_scene_free(sc);
	}
	buf_putc(&b, 0);
	if (!b.oom && skate_scene_load(&s, &a, (const char *)b.data, &sc, &d) == RC_OK) {
		mesh_views(&s, &a, sc, &d);
		skate_scene_free(sc);
	}
	buf_free(&b);
	textures(&s, &a, &d);
	arena_free(&a);
	diag_free(&d);
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	if (fuzz_one_skate(p, n))
		abort();
	return 0;
}
#endif
