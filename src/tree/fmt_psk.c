/* The namespace of a mounted PSK/PSKX mesh. */
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psgfs/names.h"
#include "tree/actorx.h"

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
	K_COUNT
};

/* The decoded mesh; x first, so the shared skeleton/errors handlers can read it. */
struct psk_full {
	struct actorx_decoded x;
	struct psk_mesh m;
	size_t *bone_points; /* per bone: distinct points it weights */
};

static void full_free(void *p)
{
	struct psk_full *f = p;

	psk_mesh_free(&f->m);
	diag_free(&f->x.d);
	free(f->bone_points);
	free(f);
}

static int cmp_weight(const void *x, const void *y)
{
	const struct psk_weight *a = x, *b = y;

	if (a->bone != b->bone)
		return a->bone < b->bone ? -1 : 1;
	return a->point < b->point ? -1 : a->point > b->point;
}

/* Distinct weighted points per bone (duplicate influences of one point count once). */
static size_t *count_bone_points(const struct psk_mesh *m)
{
	size_t *cnt = xcalloc_n(m->n_bones ? m->n_bones : 1, sizeof *cnt);
	struct psk_weight *w = xcalloc_n(m->n_weights ? m->n_weights : 1, sizeof *w);

	if (!cnt || !w) {
		free(w);
		free(cnt);
		return NULL;
	}
	if (m->n_weights)
		memcpy(w, m->weights, m->n_weights * sizeof *w);
	qsort(w, m->n_weights, sizeof *w, cmp_weight);
	for (size_t i = 0; i < m->n_weights; i++) {
		if (w[i].bone < 0 || (size_t)w[i].bone >= m->n_bones)
			continue;
		if (i > 0 && w[i].bone == w[i - 1].bone && w[i].point == w[i - 1].point)
			continue;
		cnt[w[i].bone]++;
	}
	free(w);
	return cnt;
}

static enum rc load_full(struct tree *t, uint64_t arg, void **data, size_t *bytes,
			 void (**dtor)(void *))
{
	struct psk_full *f = calloc(1, sizeof *f);
	uint8_t *file;
	enum rc r;

	(void)arg;
	if (!f)
		return RC_NOMEM;
	diag_init(&f->x.d);
	r = actorx_slurp(t, &file);
	if (r == RC_OK) {
		r = psk_read(file, (size_t)t->src.size, &f->m, &f->x.d);
		free(file);
	}
	if (r == RC_OK) {
		f->bone_points = count_bone_points(&f->m);
		if (!f->bone_points)
			r = RC_NOMEM;
	}
	if (r != RC_OK) {
		full_free(f);
		return r == RC_NOMEM ? r : RC_IO;
	}
	f->x.bones = f->m.bones;
	f->x.n_bones = f->m.n_bones;
	f->x.bone_points = f->bone_points;
	*data = f;
	*bytes = (size_t)t->src.size * 2 + sizeof *f;
	*dtor = full_free;
	return RC_OK;
}

/* The decoded mesh for one render, or NULL with *r set (it lives as long as the mount). */
static struct psk_full *full(struct tree *t, enum rc *r)
{
	return (struct psk_full *)actorx_get(t, r);
}

static enum rc list_root(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)self;
	tlist_add(out, tn(AX_K_INFO, 0, 0), "info.txt");
	tlist_add(out, tn(AX_K_ERRORS, 0, 0), "errors.txt");
	tlist_add(out, tn(AX_K_CHUNKS, 0, 0), "chunks");
	tlist_add(out, tn(AX_K_SKEL, 0, 0), "skeleton");
	tlist_add(out, tn(K_POINTS, 0, 0), "points.tsv");
	tlist_add(out, tn(K_WEDGES, 0, 0), "wedges.tsv");
	tlist_add(out, tn(K_FACES, 0, 0), "faces.tsv");
	tlist_add(out, tn(K_MATERIALS, 0, 0), "materials.tsv");
	tlist_add(out, tn(K_WEIGHTS, 0, 0), "weights.tsv");
	/* Optional files follow the chunk table, so listing the root decodes nothing. */
	if (actorx_has_chunk(t, "VTXNORMS"))
		tlist_add(out, tn(K_NORMALS, 0, 0), "normals.tsv");
	if (actorx_has_chunk(t, "VERTEXCOLOR"))
		tlist_add(out, tn(K_COLORS, 0, 0), "colors.tsv");
	if (actorx_has_chunk(t, "EXTRAUVS0|EXTRAUVS1|EXTRAUVS2|EXTRAUVS3|EXTRAUVS4|EXTRAUVS5|"
				"EXTRAUVS6|EXTRAUVS7|EXTRAUV0|EXTRAUV1|EXTRAUV2|EXTRAUV3|EXTRAUV4|"
				"EXTRAUV5|EXTRAUV6|EXTRAUV7"))
		tlist_add(out, tn(K_UVS, 0, 0), "uvs");
	if (actorx_has_chunk(t, "MRPHINFO"))
		tlist_add(out, tn(K_MORPHS, 0, 0), "morphs");
	if (actorx_has_chunk(t, "SKELSOCK"))
		tlist_add(out, tn(K_SOCKETS, 0, 0), "sockets.tsv");
	return RC_OK;
}

static enum rc list_uvs(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)self;
	enum rc fr_;
	struct psk_full *f = full(t, &fr_);

	if (!f)
		return fr_;
	for (size_t i = 0; i < f->m.n_extra_uv_sets && i < PSK_MAX_EXTRA_UVS; i++)
		if (f->m.extra_uvs[i])
			tlist_add(out, tn(K_UV, (uint32_t)i, 0), "%zu.tsv", i);
	return RC_OK;
}

static enum rc list_morphs(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)self;
	enum rc fr_;
	struct psk_full *f = full(t, &fr_);

	if (!f)
		return fr_;
	for (size_t i = 0; i < f->m.n_morphs && i < UINT32_MAX; i++) {
		char nm[NAME_COMPONENT_MAX + 1];

		name_component(f->m.morphs[i].name, PSK_NAME_LEN, nm);
		tlist_add(out, tn(K_MORPH, (uint32_t)i, 0), "%02zu.%s.tsv", i, nm);
	}
	return RC_OK;
}

static enum rc render_info(struct tree *t, struct tnode self, struct buf *out)
{
	(void)self;
	enum rc fr_;
	struct psk_full *f = full(t, &fr_);

	if (!f)
		return fr_;
	const struct psk_mesh *m = &f->m;

	buf_printf(out, "format: %s\nfile: %s\nsize: %llu\n", psk_needs_pskx(m) ? "pskx" : "psk",
		   t->stem, (unsigned long long)t->src.size);
	actorx_chunks_info(t, out);
	buf_printf(out,
		   "points: %zu\nwedges: %zu\nfaces: %zu\nface_index_width: %d\nmaterials: %zu\n"
		   "bones: %zu\nweights: %zu\nnormals: %zu\ncolors: %zu\nextra_uv_sets: %zu\n"
		   "morphs: %zu\nmorph_deltas: %zu\nsockets: %zu\nproblems: %zu\n",
		   m->n_points, m->n_wedges, m->n_faces, m->faces32 ? 32 : 16, m->n_materials,
		   m->n_bones, m->n_weights, m->n_normals, m->n_colors, m->n_extra_uv_sets,
		   m->n_morphs, m->n_deltas, m->n_sockets, diag_count(&f->x.d));
	return RC_OK;
}

/* points.tsv and normals.tsv: index and three floats per row. */
static void points_tsv(const struct psk_point *v, size_t n, struct buf *out)
{
	buf_puts(out, "index\tx\ty\tz\n");
	for (size_t i = 0; i < n; i++) {
		buf_printf(out, "%zu", i);
		actorx_vec(out, &v[i].x, 3);
		buf_putc(out, '\n');
	}
}

static enum rc render_points(const struct psk_full *f, struct tnode self, struct buf *out)
{
	(void)self;
	points_tsv(f->m.points, f->m.n_points, out);
	return RC_OK;
}

static enum rc render_wedges(const struct psk_full *f, struct tnode self, struct buf *out)
{
	(void)self;
	buf_puts(out, "index\tpoint\tu\tv\tmaterial\n");
	for (size_t i = 0; i < f->m.n_wedges; i++) {
		const struct psk_wedge *w = &f->m.wedges[i];

		buf_printf(out, "%zu\t%u\t", i, w->point);
		buf_f32txt(out, w->u);
		buf_putc(out, '\t');
		buf_f32txt(out, w->v);
		buf_printf(out, "\t%u\n", w->mat);
	}
	return RC_OK;
}

static enum rc render_faces(const struct psk_full *f, struct tnode self, struct buf *out)
{
	(void)self;
	buf_puts(out, "index\tw0\tw1\tw2\tmaterial\taux_material\tsmoothing\n");
	for (size_t i = 0; i < f->m.n_faces; i++) {
		const struct psk_face *x = &f->m.faces[i];

		buf_printf(out, "%zu\t%u\t%u\t%u\t%u\t%u\t0x%08X\n", i, x->wedge[0], x->wedge[1],
			   x->wedge[2], x->mat, x->aux_mat, x->smoothing);
	}
	return RC_OK;
}

static enum rc render_materials(const struct psk_full *f, struct tnode self, struct buf *out)
{
	(void)self;
	buf_puts(out, "index\tname\ttexture_index\tpoly_flags\taux_material\taux_flags\tlod_bias\t"
		      "lod_style\n");
	for (size_t i = 0; i < f->m.n_materials; i++) {
		const struct psk_material *x = &f->m.materials[i];

		buf_printf(out, "%zu\t", i);
		actorx_print_name(out, x->name);
		buf_printf(out, "\t%d\t0x%08X\t%d\t0x%08X\t%d\t%d\n", x->texture_index,
			   x->poly_flags, x->aux_material, x->aux_flags, x->lod_bias, x->lod_style);
	}
	return RC_OK;
}

static enum rc render_weights(const struct psk_full *f, struct tnode self, struct buf *out)
{
	(void)self;
	buf_puts(out, "point\tbone\tname\tweight\n");
	for (size_t i = 0; i < f->m.n_weights; i++) {
		const struct psk_weight *w = &f->m.weights[i];

		buf_printf(out, "%d\t%d\t", w->point, w->bone);
		if (w->bone >= 0 && (size_t)w->bone < f->m.n_bones)
			actorx_print_name(out, f->m.bones[w->bone].name);
		buf_putc(out, '\t');
		buf_f32txt(out, w->weight);
		buf_putc(out, '\n');
	}
	return RC_OK;
}

static enum rc render_normals(const struct psk_full *f, struct tnode self, struct buf *out)
{
	(void)self;
	points_tsv(f->m.normals, f->m.n_normals, out);
	return RC_OK;
}

static enum rc render_colors(const struct psk_full *f, struct tnode self, struct buf *out)
{
	(void)self;
	buf_puts(out, "wedge\tr\tg\tb\ta\n");
	for (size_t i = 0; i < f->m.n_colors; i++) {
		const struct psk_color *c = &f->m.colors[i];

		buf_printf(out, "%zu\t%u\t%u\t%u\t%u\n", i, c->r, c->g, c->b, c->a);
	}
	return RC_OK;
}

static enum rc render_uv(const struct psk_full *f, struct tnode self, struct buf *out)
{
	if (self.a >= PSK_MAX_EXTRA_UVS || !f->m.extra_uvs[self.a])
		return RC_NOENT;
	buf_puts(out, "wedge\tu\tv\n");
	for (size_t i = 0; i < f->m.n_extra_uvs[self.a]; i++) {
		buf_printf(out, "%zu", i);
		actorx_vec(out, &f->m.extra_uvs[self.a][i].u, 2);
		buf_putc(out, '\n');
	}
	return RC_OK;
}

static enum rc render_morph(const struct psk_full *f, struct tnode self, struct buf *out)
{
	if (self.a >= f->m.n_morphs)
		return RC_NOENT;
	const struct psk_morph *mo = &f->m.morphs[self.a];

	buf_puts(out, "delta\tpoint\tdx\tdy\tdz\ttx\tty\ttz\n");
	for (size_t i = 0; i < mo->n_deltas && mo->first_delta + i < f->m.n_deltas; i++) {
		const struct psk_morph_delta *d = &f->m.deltas[mo->first_delta + i];

		buf_printf(out, "%zu\t%d", i, d->point);
		actorx_vec(out, d->pos, 3);
		actorx_vec(out, d->tangent_z, 3);
		buf_putc(out, '\n');
	}
	return RC_OK;
}

static enum rc render_sockets(const struct psk_full *f, struct tnode self, struct buf *out)
{
	(void)self;
	buf_puts(out, "index\tname\tbone\tx\ty\tz\tpitch\tyaw\troll\tsx\tsy\tsz\n");
	for (size_t i = 0; i < f->m.n_sockets; i++) {
		const struct psk_socket *s = &f->m.sockets[i];

		buf_printf(out, "%zu\t", i);
		actorx_print_name(out, s->name);
		buf_putc(out, '\t');
		actorx_print_name(out, s->bone);
		actorx_vec(out, s->loc, 3);
		actorx_vec(out, s->rot, 3);
		actorx_vec(out, s->scale, 3);
		buf_putc(out, '\n');
	}
	return RC_OK;
}

/* Files rendered from the decoded mesh alone, by kind; one lookup serves them all. */
typedef enum rc (*mesh_render_fn)(const struct psk_full *f, struct tnode self, struct buf *out);
static const mesh_render_fn mesh_renders[K_COUNT] = {
    [K_POINTS] = render_points,	      [K_WEDGES] = render_wedges,   [K_FACES] = render_faces,
    [K_MATERIALS] = render_materials, [K_WEIGHTS] = render_weights, [K_NORMALS] = render_normals,
    [K_COLORS] = render_colors,	      [K_UV] = render_uv,	    [K_MORPH] = render_morph,
    [K_SOCKETS] = render_sockets,
};

static enum rc render_mesh(struct tree *t, struct tnode self, struct buf *out)
{
	enum rc r;
	const struct psk_full *f = full(t, &r);

	if (!f)
		return r;
	if (self.kind >= K_COUNT || !mesh_renders[self.kind])
		return RC_NOENT;
	return mesh_renders[self.kind](f, self, out);
}

static enum tree_open_fail psk_mount(struct tree *t, char *why, size_t whylen)
{
	return actorx_mount(t, PSK_KIND_MESH, load_full, why, whylen);
}

static const struct tree_kind psk_kinds[K_COUNT] = {
    [AX_K_ROOT] = {"root", true, list_root, NULL, NULL},
    [AX_K_INFO] = {"info", false, NULL, render_info, NULL},
    [AX_K_ERRORS] = {"errors", false, NULL, actorx_render_errors, NULL},
    [AX_K_CHUNKS] = {"chunks", true, actorx_list_chunks_dir, NULL, NULL},
    [AX_K_CHUNK] = {"chunk", false, NULL, NULL, actorx_chunk_extent},
    [AX_K_SKEL] = {"skeleton", true, actorx_list_skel, NULL, NULL},
    [AX_K_BONES_TSV] = {"bones.tsv", false, NULL, actorx_render_bones_tsv, NULL},
    [AX_K_NAMES] = {"names.txt", false, NULL, actorx_render_names, NULL},
    [AX_K_BONES] = {"bones", true, actorx_list_bones_dir, NULL, NULL},
    [AX_K_BONE] = {"bone", false, NULL, actorx_render_bone, NULL},
    [K_POINTS] = {"points", false, NULL, render_mesh, NULL},
    [K_WEDGES] = {"wedges", false, NULL, render_mesh, NULL},
    [K_FACES] = {"faces", false, NULL, render_mesh, NULL},
    [K_MATERIALS] = {"materials", false, NULL, render_mesh, NULL},
    [K_WEIGHTS] = {"weights", false, NULL, render_mesh, NULL},
    [K_NORMALS] = {"normals", false, NULL, render_mesh, NULL},
    [K_COLORS] = {"colors", false, NULL, render_mesh, NULL},
    [K_UVS] = {"uvs", true, list_uvs, NULL, NULL},
    [K_UV] = {"uv", false, NULL, render_mesh, NULL},
    [K_MORPHS] = {"morphs", true, list_morphs, NULL, NULL},
    [K_MORPH] = {"morph", false, NULL, render_mesh, NULL},
    [K_SOCKETS] = {"sockets", false, NULL, render_mesh, NULL},
};

const struct tree_format tree_format_psk = {
    .name = "psk",
    .kinds = psk_kinds,
    .n_kinds = K_COUNT,
    .mount = psk_mount,
    .unmount = actorx_unmount,
};
