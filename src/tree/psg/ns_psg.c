/*
 * The namespace of a mounted RW4 arena (.psg). Mounting parses only the header, sections and
 * dictionary (arena_open); the scene (skeleton, mesh structure), the texture names, each mesh's
 * data and each texture are decoded on first use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/png.h"
#include "psgfs/formats/skate_export.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_objects.h"
#include "psgfs/formats/skate_platform.h"
#include "psgfs/formats/texture.h"
#include "tree/psg/ns_psg.h"
#include "tree/psg/psg_materials.h"
#include "tree/psg/view_psg.h"

enum {
	K_ROOT,
	K_INFO,
	K_ERRORS,
	K_ERRORS_FULL,
	K_HEADER,
	K_DICT,
	K_TOC,
	K_SECTIONS,
	K_TYPES,
	K_SUBREFS,
	K_EXTARENAS,
	K_OBJECTS,
	K_OBJ_BIN,
	K_OBJ_TXT,
	K_SKEL,
	K_BONES_TSV,
	K_NAMES,
	K_INVBIND,
	K_BONES,
	K_BONE,
	K_MESHES,
	K_MESH,
	K_M_DESC,
	K_M_PALETTE,
	K_M_ISLANDS,
	K_M_VERTS,
	K_M_TRIS,
	K_M_SKIN,
	K_TEXTURES,
	K_TEX_DDS,
	K_TEX_PNG,
	K_EXPORT,
	K_EXPORT_PSK,
	K_EXPORT_PSKX,
	K_EXPORT_GLB,
	K_MATERIALS,
	K_MATERIAL,
	K_MAT_TXT,
	K_MAT_LINK, /* b: channel * 2 + (1 for the .png) */
	K_COUNT
};

static const struct arena *arena_of(const struct tctx *c)
{
	return &pm(c->as)->a;
}

/* ---- listings ---- */

static enum rc list_root(const struct tctx *c, struct tlist *out)
{
	const struct psg_mount *m = pm(c->as);

	tlist_add(out, tn(K_INFO, 0, 0), "info.txt");
	tlist_add(out, tn(K_ERRORS, 0, 0), "errors.txt");
	tlist_add(out, tn(K_ERRORS_FULL, 0, 0), "errors-full.txt");
	tlist_add(out, tn(K_HEADER, 0, 0), "header.txt");
	tlist_add(out, tn(K_DICT, 0, 0), "dictionary.tsv");
	tlist_add(out, tn(K_TOC, 0, 0), "toc.tsv");
	tlist_add(out, tn(K_SECTIONS, 0, 0), "sections");
	tlist_add(out, tn(K_OBJECTS, 0, 0), "objects");
	if (m->has_model) {
		tlist_add(out, tn(K_SKEL, 0, 0), "skeleton");
		tlist_add(out, tn(K_MESHES, 0, 0), "meshes");
		tlist_add(out, tn(K_EXPORT, 0, 0), "export");
	}
	if (m->has_textures)
		tlist_add(out, tn(K_TEXTURES, 0, 0), "textures");
	if (m->has_materials)
		tlist_add(out, tn(K_MATERIALS, 0, 0), "materials");
	return RC_OK;
}

static enum rc list_sections(const struct tctx *c, struct tlist *out)
{
	(void)c;
	tlist_add(out, tn(K_TYPES, 0, 0), "types.tsv");
	tlist_add(out, tn(K_SUBREFS, 0, 0), "subreferences.tsv");
	tlist_add(out, tn(K_EXTARENAS, 0, 0), "external_arenas.tsv");
	return RC_OK;
}

static enum rc list_objects(const struct tctx *c, struct tlist *out)
{
	const struct arena *a = arena_of(c);

	for (uint32_t i = 0; i < a->n_dict && i <= TNODE_A_MAX; i++) {
		char label[64];

		psg_obj_name(a, i, label, sizeof label);
		/* Bytes past the end of a truncated file are not listed (stat must work for
		 * whatever is): errors.txt says they are missing. The .txt view still is. */
		if (arena_row(a, i)->readable)
			tlist_add(out, tn(K_OBJ_BIN, i, 0), "%s.bin", label);
		if (view_object_has_text(arena_row(a, i)->type_id))
			tlist_add(out, tn(K_OBJ_TXT, i, 0), "%s.txt", label);
	}
	return RC_OK;
}

static enum rc list_skel(const struct tctx *c, struct tlist *out)
{
	(void)c;
	tlist_add(out, tn(K_BONES_TSV, 0, 0), "bones.tsv");
	tlist_add(out, tn(K_NAMES, 0, 0), "names.txt");
	tlist_add(out, tn(K_INVBIND, 0, 0), "inverse_bind.tsv");
	tlist_add(out, tn(K_BONES, 0, 0), "bones");
	return RC_OK;
}

static enum rc list_bones(const struct tctx *c, struct tlist *out)
{
	const struct scene_memo *s = c->need;

	for (uint32_t i = 0; i < s->sc->n_bones && i <= TNODE_A_MAX; i++) {
		char nm[80];

		view_bone_file_name(s->sc, i, nm);
		tlist_add(out, tn(K_BONE, i, 0), "%s", nm);
	}
	return RC_OK;
}

static enum rc list_meshes(const struct tctx *c, struct tlist *out)
{
	const struct scene_memo *s = c->need;

	for (size_t k = 0; k < s->sc->n_meshes && k <= TNODE_A_MAX; k++)
		tlist_add(out, tn(K_MESH, (uint32_t)k, 0), "%02zu", k);
	return RC_OK;
}

static enum rc list_mesh(const struct tctx *c, struct tlist *out)
{
	uint32_t k = c->self.a;

	tlist_add(out, tn(K_M_DESC, k, 0), "descriptor.txt");
	tlist_add(out, tn(K_M_PALETTE, k, 0), "palette.tsv");
	tlist_add(out, tn(K_M_ISLANDS, k, 0), "islands.tsv");
	tlist_add(out, tn(K_M_VERTS, k, 0), "vertices.tsv");
	tlist_add(out, tn(K_M_TRIS, k, 0), "triangles.tsv");
	tlist_add(out, tn(K_M_SKIN, k, 0), "skin.tsv");
	return RC_OK;
}

static enum rc list_textures(const struct tctx *c, struct tlist *out)
{
	const struct texnames_memo *m = c->need;

	for (uint32_t i = 0; i < m->n && i <= TNODE_A_MAX; i++) {
		if (!m->names[i])
			continue;
		tlist_add(out, tn(K_TEX_DDS, i, 0), "%s.dds", m->names[i]);
		tlist_add(out, tn(K_TEX_PNG, i, 0), "%s.png", m->names[i]);
	}
	return RC_OK;
}

static enum rc list_materials(const struct tctx *c, struct tlist *out)
{
	const struct psg_materials *ms = c->need;

	for (uint32_t i = 0; i < ms->n && i <= TNODE_A_MAX; i++)
		tlist_add(out, tn(K_MATERIAL, i, 0), "%02u.%s", i, ms->v[i].label);
	return RC_OK;
}

/* In a folder mount, the channel's texture has a link: the companion's, or one found in a
 * 0x<GUID> arena elsewhere in the mount. */
static bool channel_linked(const struct psg_materials *ms, const struct psg_channel *ch)
{
	return ch->texture && (ch->tex_slot || ms->where == PSG_COMP_FOLDER);
}

/* material.txt, and in a folder mount a .dds and a .png link per resolved texture channel
 * (the first 32 channels: the node packs channel * 2 + png in 6 bits). */
static enum rc list_material(const struct tctx *c, struct tlist *out)
{
	const struct psg_materials *ms = c->need;
	const struct psg_material *m;

	if (c->self.a >= ms->n)
		return RC_NOENT;
	m = &ms->v[c->self.a];
	tlist_add(out, tn(K_MAT_TXT, c->self.a, 0), "material.txt");
	for (uint32_t k = 0; k < m->n_ch && k < 32; k++) {
		if (!channel_linked(ms, &m->ch[k]))
			continue;
		tlist_add(out, tn(K_MAT_LINK, c->self.a, (uint8_t)(k * 2)), "%s.dds",
			  m->ch[k].file);
		tlist_add(out, tn(K_MAT_LINK, c->self.a, (uint8_t)(k * 2 + 1)), "%s.png",
			  m->ch[k].file);
	}
	return RC_OK;
}

/* materials/NN.name/diffuse.dds -> ../../../<companion>/textures/<texture>.dds, or to the
 * 0x<GUID> arena holding it: ../../../<its path from the model's folder>/textures/... */
static enum rc material_link(const struct tctx *c, struct buf *target)
{
	const struct psg_materials *ms = c->need;
	const struct psg_channel *ch;
	uint32_t k = c->self.b / 2u;

	if (c->self.a >= ms->n || k >= ms->v[c->self.a].n_ch)
		return RC_NOENT;
	ch = &ms->v[c->self.a].ch[k];
	if (!channel_linked(ms, ch))
		return RC_NOENT;
	buf_printf(target, "../../../%s/textures/%s.%s",
		   ch->tex_slot ? ch->tex_link : ms->companion, ch->texture,
		   c->self.b & 1 ? "png" : "dds");
	return RC_OK;
}

/* A plain .psk only when it fits 16-bit faces: one wedge per exported vertex, so the count
 * is known from the plan; the .pskx (extension chunks, FACE3200 when needed) always. */
static enum rc list_export(const struct tctx *c, struct tlist *out)
{
	const struct skate_export_model *plan = c->need;
	char stem[NAME_COMPONENT_MAX + 1];

	name_component(c->as->stem, strlen(c->as->stem), stem);
	if (plan->n_verts <= 65536)
		tlist_add(out, tn(K_EXPORT_PSK, 0, 0), "%s.psk", stem);
	tlist_add(out, tn(K_EXPORT_PSKX, 0, 0), "%s.pskx", stem);
	tlist_add(out, tn(K_EXPORT_GLB, 0, 0), "%s.glb", stem);
	return RC_OK;
}

/* ---- whole small texts ---- */

/* One-item files: render() writes everything, then ends the item. */
#define WHOLE(name, body)                                                                          \
	static enum rc name(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)   \
	{                                                                                          \
		struct buf *out = &e->b;                                                           \
		enum rc r;                                                                         \
                                                                                                   \
		(void)part;                                                                        \
		(void)first;                                                                       \
		body;                                                                              \
		if (r == RC_OK)                                                                    \
			emit_item(e);                                                              \
		return r;                                                                          \
	}

/* What the .pskx adds to the .psk's chunks (skate_export_psk_counts): said, since without
 * any of it the two files are the same bytes. */
static void pskx_holds(const struct skate_export_model *p, struct buf *out)
{
	unsigned extra = p->n_uv_sets > 1 ? p->n_uv_sets - 1 : 0;
	const char *sep = "";

	if (extra > PSK_MAX_EXTRA_UVS)
		extra = PSK_MAX_EXTRA_UVS;
	if (!p->all_normals && !p->any_colors && !extra && p->n_verts <= 65536) {
		buf_puts(out, ".pskx: the same bytes as the .psk (no mesh has colours or a second "
			      "UV set, and not every mesh has normals)\n");
		return;
	}
	buf_puts(out, ".pskx: ");
	if (p->n_verts > 65536) {
		buf_puts(out, "32-bit faces (FACE3200)");
		sep = ", ";
	} else {
		buf_puts(out, "the .psk's chunks");
		sep = " + ";
	}
	if (p->all_normals) {
		buf_printf(out, "%snormals (VTXNORMS)", sep);
		sep = ", ";
	}
	if (p->any_colors) {
		buf_printf(out, "%scolours (VERTEXCOLOR)", sep);
		sep = ", ";
	}
	if (extra)
		buf_printf(out, "%s%u extra UV set%s (EXTRAUVS)", sep, extra, extra > 1 ? "s" : "");
	buf_putc(out, '\n');
}

static void export_summary(struct asset *as, struct buf *out)
{
	struct cache_ent *ent;
	enum rc r;
	const struct skate_export_model *p = asset_need(as, N_PLAN, 0, &ent, &r);

	if (!p) {
		buf_printf(out, "export: cannot plan: %s\n", rc_str(r));
		return;
	}
	buf_printf(out, "export: %s, %u meshes, %llu vertices, %u bones, %s; ",
		   p->zup ? "Z-up (PSK importers' axes; -o yup for the game's Y-up)"
			  : "Y-up as stored (-o yup)",
		   p->n_meshes, (unsigned long long)p->n_verts, p->n_bones,
		   p->n_verts <= 65536 ? ".psk and .pskx" : ".pskx only (more than 65536 wedges)");
	pskx_holds(p, out);
	for (size_t i = 0; i < p->skipped.n; i++)
		buf_printf(out, "  %s\n", p->skipped.msg[i]);
}

static void materials_summary(struct asset *as, struct buf *out)
{
	static const char *const where[] = {
	    [PSG_COMP_NONE] = "not found",
	    [PSG_COMP_FOLDER] = "linked",
	    [PSG_COMP_BESIDE] = "beside the source; links need a folder mount",
	    [PSG_COMP_BROKEN] = "not a readable texture arena",
	    [PSG_COMP_MODS] = "its mod in the mods folder; links need a folder mount",
	};
	struct cache_ent *ent;
	enum rc r;
	const struct psg_materials *ms = asset_need(as, N_MATERIALS, 0, &ent, &r);
	uint32_t n_tex, n_ok, n_else, n_toc;

	if (!ms) {
		buf_printf(out, "materials: cannot decode: %s\n", rc_str(r));
		return;
	}
	psg_materials_counts(ms, &n_tex, &n_ok, &n_else);
	if (n_else)
		buf_printf(out, "materials: %u; %u of %u GUID channels name a texture: %u of ",
			   ms->n, n_ok, n_tex, n_ok - n_else);
	else
		buf_printf(out, "materials: %u; %u of %u GUID channels name a texture of ", ms->n,
			   n_ok, n_tex);
	buf_tsv_name(out, ms->companion, strlen(ms->companion)); /* a file name */
	buf_printf(out, " (%s)", where[ms->where]);
	n_toc = psg_materials_count_toc(ms);
	if (n_else > n_toc)
		buf_printf(out, ", %u in 0x<GUID> arenas elsewhere in the mount (linked)",
			   n_else - n_toc);
	if (n_toc)
		buf_printf(
		    out,
		    ", %u in the TableOfContents of other texture arenas of the mount (linked)",
		    n_toc);
	buf_putc(out, '\n');
}

static enum rc info_text(const struct tctx *c, struct buf *out)
{
	struct asset *as = c->as;
	struct psg_mount *m = pm(as);
	struct cache_ent *ent;
	const struct diag *sw;
	enum rc r;

	buf_puts(out, "format: psg\nfile: ");
	buf_tsv_name(out, as->stem, strlen(as->stem)); /* a name: one line whatever it holds */
	buf_printf(out, "\nsize: %llu\n", (unsigned long long)as->src.size);
	mods_status(as, false, out);
	if (asset_source_changed(as))
		buf_puts(out, "source: changed since mount (views not yet read fail with EIO)\n");
	r = view_info_summary(&m->a, out);
	if (r != RC_OK)
		return r;
	if (m->has_model) {
		const struct scene_memo *s = psg_scene_of(as, &r);

		if (s)
			view_scene_summary(s->sc, out);
		else
			buf_printf(out, "scene: cannot decode: %s\n", rc_str(r));
	}
	if (m->has_textures) {
		const struct texnames_memo *tn_ = asset_need(as, N_TEXNAMES, 0, &ent, &r);

		buf_puts(out, "textures:");
		if (tn_ && tn_->unlisted)
			buf_printf(out,
				   " (%u more not listed: their texels are past the end of the "
				   "file, see errors.txt)",
				   tn_->unlisted);
		buf_putc(out, '\n');
		for (uint32_t i = 0; tn_ && i < tn_->n; i++) {
			if (!tn_->names[i])
				continue;
			buf_puts(out, "  ");
			if (view_texture_info_line(&as->src, &m->a, i, tn_->names[i], out) != RC_OK)
				buf_printf(out, "%s (unreadable)\n", tn_->names[i]);
		}
	}
	if (m->has_model)
		export_summary(as, out);
	if (m->has_materials)
		materials_summary(as, out);
	sw = asset_need(as, N_SWEEP, 0, &ent, &r);
	if (sw)
		buf_printf(out,
			   "problems: %zu (errors.txt; errors-full.txt also decodes every mesh)\n",
			   diag_count(sw));
	else
		buf_printf(out, "problems: unknown (%s)\n", rc_str(r));
	return RC_OK;
}

/* errors.txt: the structural sweep; once the source changed, what is known and a line that
 * says so (the sweep may no longer be computable). */
static enum rc errors_text(const struct tctx *c, struct buf *out)
{
	struct cache_ent *ent;
	enum rc r;
	const struct diag *sw = asset_need(c->as, N_SWEEP, 0, &ent, &r);

	view_diag_lines(sw ? sw : &pm(c->as)->open_diag, out);
	mods_status(c->as, true, out);
	if (asset_source_changed(c->as))
		buf_puts(out, "source: changed since mount; views not yet read fail with EIO\n");
	else if (!sw)
		return r;
	return RC_OK;
}

WHOLE(render_info, r = info_text(c, out))
WHOLE(render_errors, r = errors_text(c, out))
WHOLE(render_diag, view_diag_lines(c->need, out); r = RC_OK)
WHOLE(render_header, r = view_header_txt(arena_of(c), out))
WHOLE(render_extarenas, r = view_external_arenas_tsv(arena_of(c), out))

static enum rc obj_txt_text(const struct tctx *c, struct buf *out)
{
	enum rc r = psg_object_text(c->as, c->self.a, out, NULL);

	/* Anything short of a full decode is EIO for the view; the .bin stays readable. */
	return r == RC_OK || r == RC_NOENT || r == RC_NOMEM ? r : RC_CORRUPT;
}

WHOLE(render_obj_txt, r = obj_txt_text(c, out))
static enum rc mat_txt_text(const struct tctx *c, struct buf *out)
{
	const struct psg_materials *ms = c->need;

	if (c->self.a >= ms->n)
		return RC_NOENT;
	psg_material_text(ms, c->self.a, out);
	return RC_OK;
}

WHOLE(render_mat_txt, r = mat_txt_text(c, out))

static const struct skate_scene *sc_of(const struct tctx *c)
{
	return ((const struct scene_memo *)c->need)->sc;
}

WHOLE(render_bone, r = view_bone_text(sc_of(c), c->self.a, out))
WHOLE(render_desc, r = view_descriptor_text(sc_of(c), c->self.a, out))

static enum view_skel_table skel_table(const struct tctx *c)
{
	return c->self.kind == K_BONES_TSV ? VS_BONES
	       : c->self.kind == K_NAMES   ? VS_NAMES
					   : VS_INVBIND;
}

static enum rc skel_of(const struct tctx *c, enum view_skel_table *w, struct view_file *f)
{
	*w = skel_table(c);
	f->rows = view_skel_rows(sc_of(c), *w);
	return RC_OK;
}

VIEW_FILE(skel, enum view_skel_table, skel_of)

static enum rc mesh_table_layout(const struct tctx *c, struct layout_build *lb)
{
	uint64_t n;
	enum rc r = view_mesh_table(sc_of(c), c->self.a, c->self.kind == K_M_ISLANDS, 0, NULL, &n);

	if (r == RC_OK)
		layout_var(lb, n);
	return r;
}

static enum rc mesh_table_render(const struct tctx *c, unsigned part, uint64_t first,
				 struct emit *e)
{
	(void)part;
	return view_mesh_table(sc_of(c), c->self.a, c->self.kind == K_M_ISLANDS, first, e, NULL);
}

/* ---- mesh data and exports: streamed ---- */

static void view_mesh_of(const struct tctx *c, struct view_mesh *vm)
{
	enum rc r;
	const struct scene_memo *s = psg_scene_of(c->as, &r);

	vm->s = &c->as->src;
	vm->a = arena_of(c);
	vm->sc = s ? s->sc : NULL;
	vm->mesh = c->self.a;
	vm->st = c->self.kind == K_M_TRIS ? ((const struct stats_memo *)c->need)->st : NULL;
}

static enum rc mesh_layout(const struct tctx *c, struct layout_build *lb)
{
	struct view_mesh vm;

	view_mesh_of(c, &vm);
	if (!vm.sc || vm.mesh >= vm.sc->n_meshes)
		return RC_NOENT;
	if (!vm.sc->meshes[vm.mesh].ok)
		return RC_CORRUPT;
	layout_var(lb, (vm.st ? vm.st->n_raw_tri : vm.sc->meshes[vm.mesh].vertex_count) + 1);
	return RC_OK;
}

static enum rc mesh_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	struct view_mesh vm;

	(void)part;
	view_mesh_of(c, &vm);
	if (!vm.sc || vm.mesh >= vm.sc->n_meshes)
		return RC_NOENT;
	switch (c->self.kind) {
	case K_M_VERTS:
		return view_vertices(&vm, first, e);
	case K_M_TRIS:
		return view_triangles(&vm, first, e);
	default:
		return view_skin(&vm, first, e);
	}
}

struct export_ctx {
	const struct tctx *c;
	const struct skate_export_model *m;
	struct ax_plan plan;
};

static enum rc export_records(const void *ctx, const struct ax_chunk *ch, uint64_t first,
			      struct emit *e)
{
	const struct export_ctx *x = ctx;
	enum rc r;
	const struct scene_memo *s = psg_scene_of(x->c->as, &r);

	if (!s)
		return r;
	return skate_export_psk_records(&x->c->as->src, arena_of(x->c), s->sc, x->m, ch, first, e);
}

static enum rc export_of(const struct tctx *c, struct export_ctx *x, struct view_file *f)
{
	struct psk_counts k;

	x->c = c;
	x->m = c->need;
	*f = (struct view_file){.plan = &x->plan, .records = export_records, .ctx = x};
	skate_export_psk_counts(x->m, c->self.kind == K_EXPORT_PSKX, &k);
	return psk_plan(&k, &x->plan);
}

VIEW_FILE(export, struct export_ctx, export_of)

/* ---- tables ---- */

static enum rc arena_table(const struct tctx *c, enum view_arena_table *w)
{
	switch (c->self.kind) {
	case K_DICT:
		*w = VA_DICT;
		return RC_OK;
	case K_TYPES:
		*w = VA_TYPES;
		return RC_OK;
	case K_SUBREFS:
		*w = VA_SUBREFS;
		return RC_OK;
	default:
		return RC_NOENT;
	}
}

static enum rc arena_table_of(const struct tctx *c, enum view_arena_table *w, struct view_file *f)
{
	enum rc r = arena_table(c, w);

	if (r == RC_OK)
		f->rows = view_arena_rows(arena_of(c), *w);
	return r;
}

VIEW_FILE(arena_table, enum view_arena_table, arena_table_of)

static enum rc toc_layout(const struct tctx *c, struct layout_build *lb)
{
	const struct view_toc *v = c->need;

	layout_var(lb, v->n + 1);
	return RC_OK;
}

static enum rc toc_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	(void)part;
	return view_toc_render(arena_of(c), c->need, first, e);
}

static enum rc errors_layout(const struct tctx *c, struct layout_build *lb)
{
	(void)c;
	layout_var(lb, 1);
	return RC_OK;
}

/* ---- textures: DDS and PNG rendered from the file's texels on demand ---- */

/* DDS parts: the header, then one part per (face, level) with unit rows as items. */
static enum rc dds_layout(const struct tctx *c, struct layout_build *lb)
{
	const struct tex_desc *d = c->need;

	layout_fixed(lb, 1, DDS_HEADER_BYTES);
	for (uint32_t f = 0; f < d->have_faces; f++)
		for (uint32_t m = 0; m < d->have_mips; m++)
			layout_fixed(lb, tex_level_rows(d, m), (uint32_t)tex_row_bytes(d, m));
	return RC_OK;
}

#define DDS_READ_BYTES (64u << 10)

static enum rc dds_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct tex_desc *d = c->need;
	uint32_t f, m, rows;
	uint64_t rb;
	uint8_t *tmp;
	enum rc r = RC_OK;

	if (part == 0) {
		tex_dds_header(d, &e->b);
		emit_item(e);
		return RC_OK;
	}
	f = (part - 1) / d->have_mips;
	m = (part - 1) % d->have_mips;
	rows = tex_level_rows(d, m);
	rb = tex_row_bytes(d, m);
	uint32_t batch = rb >= DDS_READ_BYTES ? 1 : (uint32_t)(DDS_READ_BYTES / rb);
	tmp = malloc((size_t)(rb * batch));
	if (!tmp)
		return RC_NOMEM;
	for (uint32_t y = (uint32_t)first; y < rows && r == RC_OK; y += batch) {
		uint32_t n = rows - y < batch ? rows - y : batch;
		bool more = true;

		r = tex_read_rows(&c->as->src, d, f, m, y, n, tmp);
		for (uint32_t i = 0; i < n && r == RC_OK && more; i++) {
			buf_put(&e->b, tmp + i * rb, (size_t)rb);
			more = emit_item(e);
		}
		if (!more)
			break;
	}
	free(tmp);
	return r;
}

static enum rc tex_png_layout(const struct tctx *c, struct layout_build *lb)
{
	struct tex_pic pic;
	struct pngs p;
	enum rc r = tex_picture_png(&p, &pic, NULL, c->need);

	for (unsigned i = 0; i < PNGS_PARTS && r == RC_OK; i++) {
		uint64_t n;
		uint32_t size;

		pngs_part(&p, i, &n, &size);
		layout_fixed(lb, n, size);
	}
	return r;
}

static enum rc tex_png_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	struct tex_pic pic;
	struct pngs p;
	enum rc r = tex_picture_png(&p, &pic, &c->as->src, c->need);

	return r == RC_OK ? pngs_render(&p, part, first, e) : r;
}

/* ---- raw objects ---- */

static enum rc obj_extent(const struct tctx *c, uint64_t *off, uint64_t *len)
{
	const struct arena *a = arena_of(c);

	if (c->self.a >= a->n_dict)
		return RC_NOENT;
	if (!arena_row(a, c->self.a)->readable)
		return RC_BOUNDS; /* listed in errors.txt; the file answers EIO */
	*off = arena_row(a, c->self.a)->start;
	*len = arena_row(a, c->self.a)->size;
	return RC_OK;
}

/* ---- mount ---- */

static char *read_text_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	char chunk[4096];
	size_t n;
	size_t len;

	if (!f)
		return NULL;
	buf_init(&b);
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len < (16u << 20))
		buf_put(&b, chunk, n);
	fclose(f);
	buf_putc(&b, 0);
	return (char *)buf_steal(&b, &len);
}

static void psg_unmount(struct asset *as)
{
	struct psg_mount *m = as->priv;

	if (!m)
		return;
	psg_companion_close(m);
	pthread_mutex_destroy(&m->comp_mu);
	arena_free(&m->a);
	diag_free(&m->open_diag);
	free(m->hierarchy);
	free(m);
	as->priv = NULL;
}

static enum tree_open_fail mount_fail(struct asset *as, enum rc r)
{
	psg_unmount(as);
	if (r == RC_NOMEM)
		return TREE_FAIL_OTHER;
	if (r == RC_IO)
		return TREE_FAIL_OPEN;
	return r == RC_FORMAT ? TREE_FAIL_FORMAT : TREE_FAIL_DAMAGED;
}

static enum tree_open_fail psg_mount(struct asset *as, char *why, size_t whylen)
{
	const struct tree_opts *o = &as->t->opts;
	struct psg_mount *m = calloc(1, sizeof *m);
	enum rc r;

	if (!m) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	as->priv = m;
	pthread_mutex_init(&m->comp_mu, NULL);
	diag_init(&m->open_diag);
	r = arena_open(&as->src, &m->a, &m->open_diag);
	if (r != RC_OK) {
		snprintf(why, whylen, "PSG arena: %s",
			 m->open_diag.n ? m->open_diag.msg[m->open_diag.n - 1] : rc_str(r));
		return mount_fail(as, r);
	}
	if (o->hierarchy_text)
		m->hierarchy = strdup(o->hierarchy_text);
	else if (o->hierarchy_path)
		m->hierarchy = read_text_file(o->hierarchy_path);
	if ((o->hierarchy_text || o->hierarchy_path) && !m->hierarchy) {
		snprintf(why, whylen, "cannot read hierarchy file %s",
			 o->hierarchy_path ? o->hierarchy_path : "(text)");
		psg_unmount(as);
		return TREE_FAIL_OTHER;
	}
	for (uint32_t k = 0; k < m->a.n_runs; k++) { /* every row's type is a run's */
		uint32_t type = m->a.runs[k].type_id;

		m->has_model |= type == RW_T_RENDERMODEL || type == RW_T_OPTIMESH;
		m->has_textures |= type == RW_T_TEXTURE;
		m->has_materials |= type == RW_T_RENDERMATERIAL;
	}
	/* What the mount holds for as long as it is open counts against the budget. */
	atomic_fetch_add(&as->bytes, sizeof *m + arena_heap_bytes(&m->a) +
					 diag_heap_bytes(&m->open_diag) +
					 (m->hierarchy ? strlen(m->hierarchy) + 1 : 0));
	/* The scene decodes the platforms with a table (PS3, Xbox 360): list no
	 * skeleton/meshes/export that could not be opened. */
	if (m->has_model && !skate_platform_of(&m->a)) {
		diag_add(&m->open_diag, "platform %s: meshes are decoded for ps3 and xb2 only",
			 m->a.h.platform);
		m->has_model = false;
	}
	return TREE_FAIL_NONE;
}

static const struct tree_kind psg_kinds[K_COUNT] = {
    [K_ROOT] = {.what = "root", .type = TT_DIR, .list = list_root},
    [K_INFO] = {.what = "info", .type = TT_FILE, .render = render_info, .status = true},
    [K_ERRORS] = {.what = "errors", .type = TT_FILE, .render = render_errors, .status = true},
    [K_ERRORS_FULL] = {.what = "errors-full",
		       .type = TT_FILE,
		       .need = N_FULL,
		       .layout = errors_layout,
		       .render = render_diag},
    [K_HEADER] = {.what = "header", .type = TT_FILE, .cheap = true, .render = render_header},
    [K_DICT] = {.what = "dictionary",
		.type = TT_FILE,
		.layout = arena_table_layout,
		.render = arena_table_render},
    [K_TOC] =
	{.what = "toc", .type = TT_FILE, .need = N_TOC, .layout = toc_layout, .render = toc_render},
    [K_SECTIONS] = {.what = "sections", .type = TT_DIR, .list = list_sections},
    [K_TYPES] = {.what = "types",
		 .type = TT_FILE,
		 .layout = arena_table_layout,
		 .render = arena_table_render},
    [K_SUBREFS] = {.what = "subreferences",
		   .type = TT_FILE,
		   .layout = arena_table_layout,
		   .render = arena_table_render},
    [K_EXTARENAS] = {.what = "external arenas",
		     .type = TT_FILE,
		     .cheap = true,
		     .render = render_extarenas},
    [K_OBJECTS] = {.what = "objects", .type = TT_DIR, .list = list_objects},
    [K_OBJ_BIN] = {.what = "object bytes", .type = TT_FILE, .cheap = true, .extent = obj_extent},
    [K_OBJ_TXT] = {.what = "object view", .type = TT_FILE, .render = render_obj_txt},
    [K_SKEL] = {.what = "skeleton", .type = TT_DIR, .list = list_skel},
    [K_BONES_TSV] = {.what = "bones.tsv",
		     .type = TT_FILE,
		     .need = N_SCENE,
		     .layout = skel_layout,
		     .render = skel_render},
    [K_NAMES] = {.what = "names.txt",
		 .type = TT_FILE,
		 .need = N_SCENE,
		 .layout = skel_layout,
		 .render = skel_render},
    [K_INVBIND] = {.what = "inverse_bind.tsv",
		   .type = TT_FILE,
		   .need = N_SCENE,
		   .layout = skel_layout,
		   .render = skel_render},
    [K_BONES] = {.what = "bones", .type = TT_DIR, .need = N_SCENE, .list = list_bones},
    [K_BONE] = {.what = "bone", .type = TT_FILE, .need = N_SCENE, .render = render_bone},
    [K_MESHES] = {.what = "meshes", .type = TT_DIR, .need = N_SCENE, .list = list_meshes},
    [K_MESH] = {.what = "mesh", .type = TT_DIR, .list = list_mesh},
    [K_M_DESC] = {.what = "descriptor", .type = TT_FILE, .need = N_SCENE, .render = render_desc},
    [K_M_PALETTE] = {.what = "palette",
		     .type = TT_FILE,
		     .need = N_SCENE,
		     .layout = mesh_table_layout,
		     .render = mesh_table_render},
    [K_M_ISLANDS] = {.what = "islands",
		     .type = TT_FILE,
		     .need = N_SCENE,
		     .layout = mesh_table_layout,
		     .render = mesh_table_render},
    [K_M_VERTS] = {.what = "vertices",
		   .type = TT_FILE,
		   .need = N_SCENE,
		   .layout = mesh_layout,
		   .render = mesh_render},
    [K_M_TRIS] = {.what = "triangles",
		  .type = TT_FILE,
		  .need = N_STATS,
		  .layout = mesh_layout,
		  .render = mesh_render},
    [K_M_SKIN] = {.what = "skin",
		  .type = TT_FILE,
		  .need = N_SCENE,
		  .layout = mesh_layout,
		  .render = mesh_render},
    [K_TEXTURES] = {.what = "textures", .type = TT_DIR, .need = N_TEXNAMES, .list = list_textures},
    [K_TEX_DDS] = {.what = "dds",
		   .type = TT_FILE,
		   .need = N_TEX,
		   .cheap = true,
		   .layout = dds_layout,
		   .render = dds_render},
    [K_TEX_PNG] = {.what = "png",
		   .type = TT_FILE,
		   .need = N_TEX,
		   .cheap = true,
		   .layout = tex_png_layout,
		   .render = tex_png_render},
    [K_EXPORT] = {.what = "export", .type = TT_DIR, .need = N_PLAN, .list = list_export},
    [K_EXPORT_PSK] = {.what = "psk export",
		      .type = TT_FILE,
		      .need = N_PLAN,
		      .cheap = true,
		      .layout = export_layout,
		      .render = export_render},
    [K_EXPORT_PSKX] = {.what = "pskx export",
		       .type = TT_FILE,
		       .need = N_PLAN,
		       .cheap = true,
		       .layout = export_layout,
		       .render = export_render},
    [K_EXPORT_GLB] = {.what = "glb export",
		      .type = TT_FILE,
		      .need = N_GLB,
		      .layout = psg_glb_layout,
		      .render = psg_glb_render},
    [K_MATERIALS] = {.what = "materials",
		     .type = TT_DIR,
		     .need = N_MATERIALS,
		     .list = list_materials},
    [K_MATERIAL] = {.what = "material", .type = TT_DIR, .need = N_MATERIALS, .list = list_material},
    [K_MAT_TXT] = {.what = "material.txt",
		   .type = TT_FILE,
		   .need = N_MATERIALS,
		   .render = render_mat_txt},
    [K_MAT_LINK] = {.what = "material link",
		    .type = TT_LINK,
		    .need = N_MATERIALS,
		    .link = material_link},
};

enum psg_texnode psg_texnode(const struct asset *as, struct tnode n, uint32_t *row)
{
	if (as->fmt != &tree_format_psg)
		return PSG_NOT_TEX;
	switch (n.kind) {
	case K_TEXTURES:
		return PSG_TEX_DIR;
	case K_TEX_DDS:
	case K_TEX_PNG:
		*row = n.a;
		return n.kind == K_TEX_DDS ? PSG_TEX_DDS : PSG_TEX_PNG;
	default:
		return PSG_NOT_TEX;
	}
}

tree_ino psg_textures_dir(const struct asset *as)
{
	return ino_make(as->slot, tn(K_TEXTURES, 0, 0));
}

const struct tree_format tree_format_psg = {
    .name = "psg",
    .kinds = psg_kinds,
    .n_kinds = K_COUNT,
    .needs = psg_needs,
    .n_needs = N_COUNT,
    .mount = psg_mount,
    .unmount = psg_unmount,
};
