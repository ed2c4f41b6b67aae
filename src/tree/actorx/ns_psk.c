/*
 * The namespace of a mounted PSK/PSKX mesh. The mount keeps the index (chunk table, bones,
 * materials, morph infos); every table is rendered from records read on demand.
 */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/psk_gltf.h"
#include "tree/actorx/ns_actorx.h"

enum {
	K_POINTS = AX_K_FIRST_OWN,
	K_WEDGES,
	K_FACES,
	K_MATERIALS,
	K_WEIGHTS,
	K_NORMALS,
	K_COLORS,
	K_UVS,
	K_UV,
	K_MORPHS,
	K_MORPH,
	K_SOCKETS,
	K_ERRORS_FULL,
	K_EXPORT,
	K_GLB,
	K_COUNT
};

enum { N_NONE, N_BONE_POINTS, N_FULL_CHECK, N_GLB, N_COUNT };

static const struct psk_index *ix_of(const struct tctx *c)
{
	return &ax_of(c)->psk;
}

/* ---- needs ---- */

struct bone_points {
	size_t *n; /* per bone: distinct points it weights */
};

static void bone_points_free(void *p)
{
	struct bone_points *bp = p;

	free(bp->n);
	free(bp);
}

static int cmp_weight(const void *x, const void *y)
{
	const struct psk_weight *a = x, *b = y;

	if (a->bone != b->bone)
		return a->bone < b->bone ? -1 : 1;
	return a->point < b->point ? -1 : a->point > b->point;
}

/*
 * Distinct weighted points per bone (duplicate influences of one point count once). Sorting
 * needs every weight at once: 12 bytes per weight, which the file itself holds.
 */
static enum rc load_bone_points(struct asset *as, uint64_t arg, void **data, size_t *bytes,
				void (**dtor)(void *))
{
	const struct ax_ns *x = as->priv;
	const struct psk_index *ix = &x->psk;
	struct bone_points *bp = calloc(1, sizeof *bp);
	struct psk_weight *w = xcalloc_n(ix->weights.n ? ix->weights.n : 1, sizeof *w);
	enum rc r;

	(void)arg;
	if (bp)
		bp->n = xcalloc_n(ix->n_bones ? ix->n_bones : 1, sizeof *bp->n);
	r = bp && bp->n && w ? psk_get_weights(&as->src, &ix->weights, 0, ix->weights.n, w)
			     : RC_NOMEM;
	if (r == RC_OK) {
		qsort(w, ix->weights.n, sizeof *w, cmp_weight);
		for (size_t i = 0; i < ix->weights.n; i++) {
			if (w[i].bone < 0 || (size_t)w[i].bone >= ix->n_bones)
				continue;
			if (i > 0 && w[i].bone == w[i - 1].bone && w[i].point == w[i - 1].point)
				continue;
			bp->n[w[i].bone]++;
		}
	}
	free(w);
	if (r != RC_OK) {
		if (bp)
			bone_points_free(bp);
		return r;
	}
	*data = bp;
	*bytes = sizeof *bp + ix->n_bones * sizeof *bp->n;
	*dtor = bone_points_free;
	return RC_OK;
}

/* errors-full.txt: the structural problems, those only the records show, then what the glTF
 * export had to leave out or repair. */
static enum rc load_full_check(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			       void (**dtor)(void *))
{
	const struct ax_ns *x = as->priv;
	struct diag *d = calloc(1, sizeof *d);
	enum rc r;

	(void)arg;
	if (!d)
		return RC_NOMEM;
	diag_init(d);
	for (size_t i = 0; i < x->d.n; i++)
		diag_add(d, "%s", x->d.msg[i]);
	d->dropped += x->d.dropped;
	r = psk_check_data(&as->src, &x->psk, d);
	if (r == RC_OK) {
		struct psk_gltf *g = NULL;
		enum rc rg = psk_gltf_open(&as->src, &x->psk, as->stem, &g, d);

		if (rg != RC_OK)
			diag_add(d, "glb: export/%s.glb cannot be made: %s", as->stem, rc_str(rg));
		psk_gltf_free(g);
	}
	if (r != RC_OK) {
		diag_box_free(d);
		return r;
	}
	*data = d;
	*bytes = sizeof *d + d->n * 96;
	*dtor = diag_box_free;
	return RC_OK;
}

static void glb_free(void *p)
{
	psk_gltf_free(p);
}

/* export/<stem>.glb: the mesh's glTF description and the tables its rendering reads. */
static enum rc load_glb(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			void (**dtor)(void *))
{
	const struct ax_ns *x = as->priv;
	struct psk_gltf *g;
	enum rc r = psk_gltf_open(&as->src, &x->psk, as->stem, &g, NULL);

	(void)arg;
	if (r != RC_OK)
		return r;
	*data = g;
	*bytes = psk_gltf_bytes(g);
	*dtor = glb_free;
	return RC_OK;
}

static const struct tree_need psk_needs[N_COUNT] = {
    [N_BONE_POINTS] = {load_bone_points, 0},
    [N_FULL_CHECK] = {load_full_check, 1},
    [N_GLB] = {load_glb, -1},
};

/* ---- directories ---- */

static bool has_uvs(const struct psk_index *ix)
{
	for (size_t s = 0; s < PSK_MAX_EXTRA_UVS; s++)
		if (ix->uvs[s].n)
			return true;
	return false;
}

static enum rc list_root(const struct tctx *c, struct tlist *out)
{
	const struct psk_index *ix = ix_of(c);

	tlist_add(out, tn(AX_K_INFO, 0, 0), "info.txt");
	tlist_add(out, tn(AX_K_ERRORS, 0, 0), "errors.txt");
	tlist_add(out, tn(K_ERRORS_FULL, 0, 0), "errors-full.txt");
	tlist_add(out, tn(AX_K_CHUNKS, 0, 0), "chunks");
	tlist_add(out, tn(AX_K_SKEL, 0, 0), "skeleton");
	tlist_add(out, tn(K_POINTS, 0, 0), "points.tsv");
	tlist_add(out, tn(K_WEDGES, 0, 0), "wedges.tsv");
	tlist_add(out, tn(K_FACES, 0, 0), "faces.tsv");
	tlist_add(out, tn(K_MATERIALS, 0, 0), "materials.tsv");
	tlist_add(out, tn(K_WEIGHTS, 0, 0), "weights.tsv");
	if (ix->normals.n)
		tlist_add(out, tn(K_NORMALS, 0, 0), "normals.tsv");
	if (ix->colors.n)
		tlist_add(out, tn(K_COLORS, 0, 0), "colors.tsv");
	if (has_uvs(ix))
		tlist_add(out, tn(K_UVS, 0, 0), "uvs");
	if (ix->n_morphs)
		tlist_add(out, tn(K_MORPHS, 0, 0), "morphs");
	if (ix->sockets.n)
		tlist_add(out, tn(K_SOCKETS, 0, 0), "sockets.tsv");
	tlist_add(out, tn(K_EXPORT, 0, 0), "export");
	return RC_OK;
}

static enum rc list_export(const struct tctx *c, struct tlist *out)
{
	char stem[NAME_COMPONENT_MAX + 1];

	name_component(c->as->stem, strlen(c->as->stem), stem);
	tlist_add(out, tn(K_GLB, 0, 0), "%s.glb", stem);
	return RC_OK;
}

static enum rc list_uvs(const struct tctx *c, struct tlist *out)
{
	const struct psk_index *ix = ix_of(c);

	for (size_t i = 0; i < ix->n_extra_uv_sets && i < PSK_MAX_EXTRA_UVS; i++)
		if (ix->uvs[i].n)
			tlist_add(out, tn(K_UV, (uint32_t)i, 0), "%zu.tsv", i);
	return RC_OK;
}

static enum rc list_morphs(const struct tctx *c, struct tlist *out)
{
	const struct psk_index *ix = ix_of(c);

	for (size_t i = 0; i < ix->n_morphs && i <= TNODE_A_MAX; i++) {
		char nm[NAME_COMPONENT_MAX + 1];

		name_component(ix->morphs[i].name, PSK_NAME_LEN, nm);
		tlist_add(out, tn(K_MORPH, (uint32_t)i, 0), "%02zu.%s.tsv", i, nm);
	}
	return RC_OK;
}

/* ---- single files ---- */

static enum rc render_info(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct psk_index *m = ix_of(c);
	struct buf *out = &e->b;

	(void)part;
	(void)first;
	ax_info_head(c, m->wedges.n > 65536 ? "pskx" : "psk", out);
	buf_printf(out,
		   "points: %zu\nwedges: %zu\nfaces: %zu\nface_index_width: %d\nmaterials: %zu\n"
		   "bones: %zu\nweights: %zu\nnormals: %zu\ncolors: %zu\nextra_uv_sets: %zu\n"
		   "morphs: %zu\nmorph_deltas: %zu\nsockets: %zu\nproblems: %zu\n",
		   m->points.n, m->wedges.n, m->faces.n, m->faces32 ? 32 : 16, m->n_materials,
		   m->n_bones, m->weights.n, m->normals.n, m->colors.n, m->n_extra_uv_sets,
		   m->n_morphs, m->deltas.n, m->sockets.n, diag_count(&ax_of(c)->d));
	emit_item(e);
	return RC_OK;
}

static enum rc render_bone(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct bone_points *bp = c->need;

	(void)part;
	(void)first;
	return ax_bone_txt(c, bp->n, e);
}

static enum rc render_errors_full(const struct tctx *c, unsigned part, uint64_t first,
				  struct emit *e)
{
	(void)part;
	(void)first;
	view_diag_lines(c->need, &e->b);
	emit_item(e);
	return RC_OK;
}

/* ---- tables ---- */

struct tab_ctx {
	const struct src *s;
	const struct psk_index *ix;
	const struct psk_span *sp;
	size_t set; /* uv set, morph */
};

static enum rc load_points(const void *ctx, uint64_t first, size_t n, void *out)
{
	const struct tab_ctx *t = ctx;

	return psk_get_points(t->s, t->sp, (size_t)first, n, out);
}

static enum rc print_point(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	(void)ctx;
	buf_printf(b, "%llu", (unsigned long long)i);
	ax_vec(b, &((const struct psk_point *)rec)->x, 3);
	buf_putc(b, '\n');
	return RC_OK;
}

static enum rc load_wedges(const void *ctx, uint64_t first, size_t n, void *out)
{
	const struct tab_ctx *t = ctx;

	return psk_get_wedges(t->s, t->ix, (size_t)first, n, out);
}

static enum rc print_wedge(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct psk_wedge *w = rec;

	(void)ctx;
	buf_printf(b, "%llu\t%u\t", (unsigned long long)i, w->point);
	buf_f32txt(b, w->u);
	buf_putc(b, '\t');
	buf_f32txt(b, w->v);
	buf_printf(b, "\t%u\n", w->mat);
	return RC_OK;
}

static enum rc load_faces(const void *ctx, uint64_t first, size_t n, void *out)
{
	const struct tab_ctx *t = ctx;

	return psk_get_faces(t->s, t->ix, (size_t)first, n, out);
}

static enum rc print_face(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct psk_face *x = rec;

	(void)ctx;
	buf_printf(b, "%llu\t%u\t%u\t%u\t%u\t%u\t0x%08X\n", (unsigned long long)i, x->wedge[0],
		   x->wedge[1], x->wedge[2], x->mat, x->aux_mat, x->smoothing);
	return RC_OK;
}

static enum rc print_material(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct psk_material *x = &((const struct tab_ctx *)ctx)->ix->materials[i];

	(void)rec;
	buf_printf(b, "%llu\t", (unsigned long long)i);
	buf_tsv_name(b, x->name, PSK_NAME_LEN);
	buf_printf(b, "\t%d\t0x%08X\t%d\t0x%08X\t%d\t%d\n", x->texture_index, x->poly_flags,
		   x->aux_material, x->aux_flags, x->lod_bias, x->lod_style);
	return RC_OK;
}

static enum rc load_weights(const void *ctx, uint64_t first, size_t n, void *out)
{
	const struct tab_ctx *t = ctx;

	return psk_get_weights(t->s, t->sp, (size_t)first, n, out);
}

static enum rc print_weight(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct psk_index *ix = ((const struct tab_ctx *)ctx)->ix;
	const struct psk_weight *w = rec;

	(void)i;
	buf_printf(b, "%d\t%d\t", w->point, w->bone);
	if (w->bone >= 0 && (size_t)w->bone < ix->n_bones)
		buf_tsv_name(b, ix->bones[w->bone].name, PSK_NAME_LEN);
	buf_putc(b, '\t');
	buf_f32txt(b, w->weight);
	buf_putc(b, '\n');
	return RC_OK;
}

static enum rc load_colors(const void *ctx, uint64_t first, size_t n, void *out)
{
	const struct tab_ctx *t = ctx;

	return psk_get_colors(t->s, t->sp, (size_t)first, n, out);
}

static enum rc print_color(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct psk_color *x = rec;

	(void)ctx;
	buf_printf(b, "%llu\t%u\t%u\t%u\t%u\n", (unsigned long long)i, x->r, x->g, x->b, x->a);
	return RC_OK;
}

static enum rc load_uvs(const void *ctx, uint64_t first, size_t n, void *out)
{
	const struct tab_ctx *t = ctx;

	return psk_get_uvs(t->s, t->sp, (size_t)first, n, out);
}

static enum rc print_uv(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	(void)ctx;
	buf_printf(b, "%llu", (unsigned long long)i);
	ax_vec(b, &((const struct psk_uv *)rec)->u, 2);
	buf_putc(b, '\n');
	return RC_OK;
}

static enum rc load_deltas(const void *ctx, uint64_t first, size_t n, void *out)
{
	const struct tab_ctx *t = ctx;
	const struct psk_morph *mo = &t->ix->morphs[t->set];

	return psk_get_deltas(t->s, t->sp, mo->first_delta + (size_t)first, n, out);
}

static enum rc print_delta(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct psk_morph_delta *d = rec;

	(void)ctx;
	buf_printf(b, "%llu\t%d", (unsigned long long)i, d->point);
	ax_vec(b, d->pos, 3);
	ax_vec(b, d->tangent_z, 3);
	buf_putc(b, '\n');
	return RC_OK;
}

static enum rc load_sockets(const void *ctx, uint64_t first, size_t n, void *out)
{
	const struct tab_ctx *t = ctx;

	return psk_get_sockets(t->s, t->sp, (size_t)first, n, out);
}

static enum rc print_socket(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct psk_socket *s = rec;

	(void)ctx;
	buf_printf(b, "%llu\t", (unsigned long long)i);
	buf_tsv_name(b, s->name, PSK_NAME_LEN);
	buf_putc(b, '\t');
	buf_tsv_name(b, s->bone, PSK_NAME_LEN);
	ax_vec(b, s->loc, 3);
	ax_vec(b, s->rot, 3);
	ax_vec(b, s->scale, 3);
	buf_putc(b, '\n');
	return RC_OK;
}

/* The tables, by kind: header, loaded record size, the index span the rows come from (UV
 * sets: the first of the array, indexed by the node), loader and printer. */
#define SPAN(f) offsetof(struct psk_index, f)
#define NO_SPAN SIZE_MAX
static const struct tab_spec {
	const char *header;
	size_t rec_size;
	size_t span;
	enum rc (*load)(const void *ctx, uint64_t first, size_t n, void *out);
	enum rc (*print)(const void *ctx, uint64_t i, const void *rec, struct buf *b);
} tab_specs[] = {
    [K_POINTS] = {"index\tx\ty\tz\n", sizeof(struct psk_point), SPAN(points), load_points,
		  print_point},
    [K_NORMALS] = {"index\tx\ty\tz\n", sizeof(struct psk_point), SPAN(normals), load_points,
		   print_point},
    [K_WEDGES] = {"index\tpoint\tu\tv\tmaterial\n", sizeof(struct psk_wedge), SPAN(wedges),
		  load_wedges, print_wedge},
    [K_FACES] = {"index\tw0\tw1\tw2\tmaterial\taux_material\tsmoothing\n", sizeof(struct psk_face),
		 SPAN(faces), load_faces, print_face},
    [K_MATERIALS] = {"index\tname\ttexture_index\tpoly_flags\taux_material\taux_flags\t"
		     "lod_bias\tlod_style\n",
		     0, NO_SPAN, NULL, print_material},
    [K_WEIGHTS] = {"point\tbone\tname\tweight\n", sizeof(struct psk_weight), SPAN(weights),
		   load_weights, print_weight},
    [K_COLORS] = {"wedge\tr\tg\tb\ta\n", sizeof(struct psk_color), SPAN(colors), load_colors,
		  print_color},
    [K_UV] = {"wedge\tu\tv\n", sizeof(struct psk_uv), SPAN(uvs), load_uvs, print_uv},
    [K_MORPH] = {"delta\tpoint\tdx\tdy\tdz\ttx\tty\ttz\n", sizeof(struct psk_morph_delta),
		 SPAN(deltas), load_deltas, print_delta},
    [K_SOCKETS] = {"index\tname\tbone\tx\ty\tz\tpitch\tyaw\troll\tsx\tsy\tsz\n",
		   sizeof(struct psk_socket), SPAN(sockets), load_sockets, print_socket},
};

/* How many rows the table of node (kind, a) has; UINT64_MAX when there is no such table. */
static uint64_t table_rows(const struct psk_index *ix, const struct tab_spec *sp, uint8_t kind,
			   uint32_t a, const struct psk_span **span)
{
	*span = sp->span == NO_SPAN ? NULL : (const struct psk_span *)((const char *)ix + sp->span);
	if (kind == K_UV) {
		if (a >= PSK_MAX_EXTRA_UVS || !ix->uvs[a].n)
			return UINT64_MAX;
		*span = &ix->uvs[a];
	}
	if (kind == K_MORPH)
		return a < ix->n_morphs ? ix->morphs[a].n_deltas : UINT64_MAX;
	return *span ? (*span)->n : ix->n_materials;
}

/* Which table a kind shows: its rows, and the context they read from. */
static enum rc table_of(const struct tctx *c, struct tab_ctx *tc, struct view_file *f)
{
	const struct tab_spec *sp =
	    c->self.kind < sizeof tab_specs / sizeof tab_specs[0] ? &tab_specs[c->self.kind] : NULL;
	uint64_t n;

	if (!sp || !sp->header)
		return RC_NOENT;
	*tc = (struct tab_ctx){&c->as->src, ix_of(c), NULL, c->self.a};
	n = table_rows(tc->ix, sp, c->self.kind, c->self.a, &tc->sp);
	if (n == UINT64_MAX)
		return RC_NOENT;
	f->rows = (struct rows){sp->header, n, sp->rec_size, sp->load, sp->print, tc};
	return RC_OK;
}

VIEW_FILE(table, struct tab_ctx, table_of)

static enum rc glb_layout(const struct tctx *c, struct layout_build *lb)
{
	view_glb_layout(psk_gltf_plan(c->need), lb);
	return RC_OK;
}

static enum rc glb_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	return psk_gltf_render(c->need, &c->as->src, NULL, part, first, e);
}

static enum tree_open_fail psk_mount(struct asset *as, char *why, size_t whylen)
{
	return ax_mount(as, false, why, whylen);
}

static const struct tree_kind psk_kinds[K_COUNT] = {
    AX_SHARED_KINDS(list_root, render_info, render_bone, N_BONE_POINTS),
    [K_POINTS] = {.what = "points",
		  .type = TT_FILE,
		  .layout = table_layout,
		  .render = table_render},
    [K_WEDGES] = {.what = "wedges",
		  .type = TT_FILE,
		  .layout = table_layout,
		  .render = table_render},
    [K_FACES] = {.what = "faces", .type = TT_FILE, .layout = table_layout, .render = table_render},
    [K_MATERIALS] = {.what = "materials",
		     .type = TT_FILE,
		     .layout = table_layout,
		     .render = table_render},
    [K_WEIGHTS] = {.what = "weights",
		   .type = TT_FILE,
		   .layout = table_layout,
		   .render = table_render},
    [K_NORMALS] = {.what = "normals",
		   .type = TT_FILE,
		   .layout = table_layout,
		   .render = table_render},
    [K_COLORS] = {.what = "colors",
		  .type = TT_FILE,
		  .layout = table_layout,
		  .render = table_render},
    [K_UVS] = {.what = "uvs", .type = TT_DIR, .list = list_uvs},
    [K_UV] = {.what = "uv", .type = TT_FILE, .layout = table_layout, .render = table_render},
    [K_MORPHS] = {.what = "morphs", .type = TT_DIR, .list = list_morphs},
    [K_MORPH] = {.what = "morph", .type = TT_FILE, .layout = table_layout, .render = table_render},
    [K_SOCKETS] = {.what = "sockets",
		   .type = TT_FILE,
		   .layout = table_layout,
		   .render = table_render},
    [K_ERRORS_FULL] = {.what = "errors-full",
		       .type = TT_FILE,
		       .need = N_FULL_CHECK,
		       .render = render_errors_full},
    [K_EXPORT] = {.what = "export", .type = TT_DIR, .list = list_export},
    [K_GLB] =
	{.what = "glb", .type = TT_FILE, .need = N_GLB, .layout = glb_layout, .render = glb_render},
};

const struct tree_format tree_format_psk = {
    .name = "psk",
    .kinds = psk_kinds,
    .n_kinds = K_COUNT,
    .needs = psk_needs,
    .n_needs = N_COUNT,
    .mount = psk_mount,
    .unmount = ax_unmount,
};
