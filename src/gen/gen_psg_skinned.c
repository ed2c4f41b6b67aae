/* Skinned model arenas with ground truth (see gen_psg_skinned.h): the arena, its objects and
 * the entry point; the skeleton is drawn in gen_skinned_bones.c, each mesh's vertices in
 * gen_skinned_mesh.c. The truth is computed from the quantised integers written, independently
 * of the decoders under test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_skinned_int.h"
#include "gen/gen_skinned_x360.h"
#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/prng.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_x360.h"

/* The presets' PS3 vertex layouts. */
static const struct gsk_layout layouts[GEN_SK_PRESETS] = {
    {32,
     6,
     {{PSGO_VT_F, 3, 0, PSGO_ET_XYZ},
      {PSGO_VT_CMP, 1, 12, PSGO_ET_NORMAL},
      {PSGO_VT_SF, 2, 16, PSGO_ET_TEX0},
      {PSGO_VT_UB, 4, 20, PSGO_ET_COLOR},
      {PSGO_VT_UB256, 4, 24, PSGO_ET_INDICES},
      {PSGO_VT_UB, 4, 28, PSGO_ET_WEIGHTS}},
     2,
     true,
     24,
     28,
     "Fx3 as f32"},
    {30,
     5,
     {{PSGO_VT_SF, 3, 0, PSGO_ET_XYZ},
      {PSGO_VT_S1, 3, 8, PSGO_ET_NORMAL},
      {PSGO_VT_S1, 2, 14, PSGO_ET_TEX0},
      {PSGO_VT_UB, 4, 18, PSGO_ET_INDICES},
      {PSGO_VT_S1, 4, 22, PSGO_ET_WEIGHTS}},
     4,
     true,
     18,
     22,
     "SFx3 as f16"},
    {50,
     6,
     {{PSGO_VT_S32K, 3, 0, PSGO_ET_XYZ},
      {PSGO_VT_CMP, 1, 6, PSGO_ET_TANGENT},
      {PSGO_VT_F, 3, 10, PSGO_ET_NORMAL},
      {PSGO_VT_F, 2, 22, PSGO_ET_TEX0},
      {PSGO_VT_UB256, 4, 30, PSGO_ET_INDICES},
      {PSGO_VT_F, 4, 34, PSGO_ET_WEIGHTS}},
     2,
     true,
     30,
     34,
     "S32Kx3 as s16"},
    {26,
     4,
     {{PSGO_VT_F, 3, 0, PSGO_ET_XYZ},
      {PSGO_VT_CMP, 1, 12, PSGO_ET_NORMAL},
      {PSGO_VT_SF, 2, 16, PSGO_ET_TEX0},
      {PSGO_VT_S1, 3, 20, PSGO_ET_BINORMAL}},
     4,
     false,
     0,
     0,
     "Fx3 as f32"},
    {24,
     5,
     {{PSGO_VT_S1, 4, 0, PSGO_ET_XYZ},
      {PSGO_VT_CMP, 1, 8, PSGO_ET_NORMAL},
      {PSGO_VT_S1, 2, 12, PSGO_ET_TEX0},
      {PSGO_VT_UB256, 4, 16, PSGO_ET_INDICES},
      {PSGO_VT_UB256, 4, 20, PSGO_ET_WEIGHTS}},
     2,
     true,
     16,
     20,
     "S1x4 as s16/16384 (bone units)"},
};

void gen_skinned_truth_free(struct gen_skinned_truth *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; t->mesh && i < t->n_meshes; i++) {
		struct gen_skinned_mesh_truth *m = &t->mesh[i];

		free(m->palette);
		free(m->pos);
		free(m->normal);
		free(m->uv);
		free(m->color);
		free(m->n_infl);
		free(m->bone);
		free(m->weight);
		free(m->main_bone);
		free(m->local);
		free(m->island_start);
		free(m->island_count);
		free(m->tri);
		free(m->tri_island);
	}
	free(t->mesh);
	free(t->names);
	free(t->parent);
	free(t->ibp);
	free(t->t);
	free(t->q);
	free(t->hierarchy_tsv);
	memset(t, 0, sizeof *t);
}

/* ---- the arena ---- */

/* One generation run: options, PRNG, truth, builder and the model's shared tables. */
struct gen {
	struct gen_skinned_opts op;
	bool x360; /* an Xbox 360 arena (op.platform) */
	struct prng r;
	struct gen_skinned_truth *t;
	struct psg_builder *b;
	uint32_t model_idx, mat_idx, isl;
	struct psgo_model pm;
	struct psgo_model_layout lay;
	struct psgo_mesh_ref *refs;
	struct psgo_aabb *iaabb;
	float (*iarea)[4];
	struct psgo_channel *ch;
	struct psgo_material *mats;
	char (*mnames)[32];
	const char **bnames;
};

/* One mesh's index data while it is built. */
struct gen_idx {
	uint32_t n; /* indices */
	uint16_t *i16;
	uint32_t *i32;
	uint8_t *bytes;
	struct psgo_island *is;
};

static enum rc opts_check(struct gen_skinned_opts *op)
{
	if (!op->n_bones)
		op->n_bones = 12;
	if (!op->n_meshes)
		op->n_meshes = 4;
	if (!op->verts)
		op->verts = 60;
	if (!op->islands)
		op->islands = 3;
	if (!op->tris)
		op->tris = 20;
	if (op->n_bones < 3 || op->n_bones > 4096 || op->n_meshes > 256 ||
	    (op->rig_names && op->n_bones > SKATE_RIG_BONES + 64) || op->layout >= GEN_SK_PRESETS ||
	    op->verts > (1u << 22) || op->islands > 64 || op->tris > (1u << 20) ||
	    op->platform > GEN_SK_X360_ALT)
		return RC_INVAL;
	/* Xbox 360 buffers name no base resource: each must stay in the row after its own. */
	if (op->platform != GEN_SK_PS3 && (op->shuffle_seed || op->baseres_first))
		return RC_INVAL;
	return RC_OK;
}

static void gen_free(struct gen *g)
{
	psgb_free(g->b);
	free(g->refs);
	free(g->iaabb);
	free(g->iarea);
	free(g->ch);
	free(g->mats);
	free(g->mnames);
	free(g->bnames);
}

static enum rc gen_alloc(struct gen *g)
{
	uint32_t nm = g->op.n_meshes, total_islands = nm * g->op.islands;

	g->t->n_bones = g->op.n_bones;
	g->t->n_meshes = nm;
	g->t->mesh = xcalloc_n(nm, sizeof *g->t->mesh);
	g->refs = xcalloc_n(nm, sizeof *g->refs);
	g->iaabb = xcalloc_n(total_islands, sizeof *g->iaabb);
	g->iarea = xcalloc_n(total_islands, sizeof *g->iarea);
	g->ch = xcalloc_n(nm, 4 * sizeof *g->ch);
	g->mats = xcalloc_n(nm, sizeof *g->mats);
	g->mnames = xcalloc_n(nm, sizeof *g->mnames);
	g->bnames = xcalloc_n(g->op.n_bones, sizeof *g->bnames);
	g->b = psgb_new(PSGB_REG_MODEL64, 0x5C1A0001u);
	if (!g->t->mesh || !g->refs || !g->iaabb || !g->iarea || !g->ch || !g->mats || !g->mnames ||
	    !g->bnames || !g->b)
		return RC_NOMEM;
	if (g->x360) { /* GPU data in the PHYSICAL region, 4-byte aligned as in real models */
		psgb_set_platform(g->b, PSGB_XB2);
		psgb_set_gpu_align(g->b, 4);
	}
	if (g->op.baseres_first)
		psgb_set_order(g->b, PSGB_ORDER_BASERES_FIRST);
	return RC_OK;
}

/* VersionData, one named material per mesh, and the model's slot and layout. */
static void gen_header_objects(struct gen *g)
{
	static const char *const tex_inputs[3] = {"diffuse", "specular", "detail"};

	struct psgo_model *pm = &g->pm;

	psgo_version(g->b, PSGO_NEW, true);
	for (uint32_t i = 0; i < g->op.n_meshes; i++) {
		struct psgo_channel *ch = &g->ch[4 * i];

		snprintf(g->mnames[i], sizeof g->mnames[i], "skin_mat_%u", i);
		ch[0] = (struct psgo_channel){.shader_input = "Name",
					      .image_channel = 0xFFFF,
					      .guid = 0x1000 + i,
					      .stream_name = g->mnames[i]};
		/* Texture channels as real models write them (stream form, companion GUIDs). */
		for (uint32_t c = 0; c < 3 && g->op.tex_count; c++)
			ch[1 + c] = (struct psgo_channel){.shader_input = tex_inputs[c],
							  .image_channel = 0xFFFF,
							  .guid = g->op.tex_guid +
								  (3 * i + c) % g->op.tex_count,
							  .stream_name = tex_inputs[c]};
		g->mats[i] = (struct psgo_material){0, ch, g->op.tex_count ? 4 : 1};
	}
	g->mat_idx = psgo_material(g->b, PSGO_NEW, g->mats, g->op.n_meshes);
	g->model_idx = psgb_reserve(g->b);
	for (uint32_t i = 0; i < g->op.n_bones; i++)
		g->bnames[i] = g->t->names[i];
	memset(pm, 0, sizeof *pm);
	pm->n_bones = (uint16_t)g->op.n_bones;
	pm->ibp = (const float(*)[16])g->t->ibp;
	pm->names = g->bnames;
	pm->meshes = g->refs;
	pm->n_meshes = (uint16_t)g->op.n_meshes;
	pm->island_aabbs = g->iaabb;
	pm->island_areas = (const float(*)[4])g->iarea;
	pm->n_islands = (uint16_t)(g->op.n_meshes * g->op.islands);
	psgo_model_layout(pm, &g->lay);
}

static void gen_idx_free(struct gen_idx *x)
{
	free(x->i16);
	free(x->i32);
	free(x->bytes);
	free(x->is);
}

/* Random triangles in op.islands islands of op.tris, their truth and island bounds. */
/* The next vertex (cyclically, within 256) placed at the same bone as v; v itself when
 * there is none that close (bounded: large meshes stay linear). */
static uint32_t next_on_bone(const struct gen_skinned_mesh_truth *m, uint32_t v)
{
	for (uint32_t i = 1; i < m->n_verts && i <= 256; i++) {
		uint32_t w = (v + i) % m->n_verts;

		if (m->main_bone[w] == m->main_bone[v])
			return w;
	}
	return v;
}

/*
 * Skater meshes: triangle ti joins vertex ti (mod the count) with the next two placed along
 * the same bone, so the surface follows the body instead of crossing it; distinct starts give
 * distinct triangles when the bone has four such vertices or more. False (a random triangle
 * then, as other layouts have) when it has fewer.
 */
static bool skater_tri(const struct gen_skinned_mesh_truth *m, uint32_t ti, uint32_t v[3])
{
	v[0] = ti % m->n_verts;
	v[1] = next_on_bone(m, v[0]);
	v[2] = next_on_bone(m, v[1]);
	return ti < m->n_verts && v[1] != v[0] && v[2] != v[0] && v[2] != v[1] &&
	       next_on_bone(m, v[2]) != v[0];
}

static enum rc gen_triangles(struct gen *g, struct gen_skinned_mesh_truth *m, struct gen_idx *x)
{
	uint32_t ni = g->op.islands, nt = g->op.tris;

	x->n = ni * nt * 3;
	x->bytes = xcalloc_n(x->n, m->index_width);
	x->is = xcalloc_n(ni, sizeof *x->is);
	m->island_start = xcalloc_n(ni, sizeof *m->island_start);
	m->island_count = xcalloc_n(ni, sizeof *m->island_count);
	m->tri = xcalloc_n((size_t)ni * nt, sizeof *m->tri);
	m->tri_island = xcalloc_n((size_t)ni * nt, sizeof *m->tri_island);
	if (m->index_width == 2)
		x->i16 = xcalloc_n(x->n, 2);
	else
		x->i32 = xcalloc_n(x->n, 4);
	if (!x->bytes || !x->is || !m->island_start || !m->island_count || !m->tri ||
	    !m->tri_island || (!x->i16 && !x->i32))
		return RC_NOMEM;
	m->n_islands = ni;
	m->n_tri = ni * nt;
	for (uint32_t k = 0; k < ni; k++) {
		x->is[k] = (struct psgo_island){k * nt * 3, nt * 3, g->x360 ? 4u : 5u, 0};
		m->island_start[k] = x->is[k].start_index;
		m->island_count[k] = x->is[k].index_count;
		for (uint32_t tr = 0; tr < nt; tr++) {
			uint32_t ti = k * nt + tr;

			uint32_t strip[3];
			bool body = m->main_bone && skater_tri(m, ti, strip);

			for (int c = 0; c < 3; c++) {
				uint32_t vi = prng_below(&g->r, m->n_verts);

				if (body)
					vi = strip[c];

				m->tri[ti][c] = vi;
				if (x->i16)
					x->i16[3 * ti + c] = (uint16_t)vi;
				else
					x->i32[3 * ti + c] = vi;
			}
			m->tri_island[ti] = k;
		}
	}
	for (uint32_t k = 0; k < ni; k++)
		psgo_island_bounds((const float(*)[3])m->pos, m->n_verts, x->i16, x->i32,
				   x->is[k].start_index, x->is[k].index_count,
				   &g->iaabb[g->isl + k], g->iarea[g->isl + k]);
	return RC_OK;
}

/* The hostile variants that live in mesh 0's index bytes, palette or stride; then the index
 * bytes themselves. Returns the stride the descriptor declares (of `stride` bytes). */
static uint16_t gen_hostile(const struct gen *g, uint32_t mi, struct gen_skinned_mesh_truth *m,
			    uint16_t stride, struct gen_idx *x)
{
	if (mi == 0 && g->op.hostile == GEN_SK_INDEX_PAST_VERTS) {
		if (x->i16)
			x->i16[1] = (uint16_t)(m->n_verts + 7);
		else
			x->i32[1] = m->n_verts + 7;
	}
	for (uint32_t k = 0; k < x->n; k++) {
		if (x->i16)
			gsk_put16(x->bytes + 2 * k, x->i16[k]);
		else
			gsk_put32(x->bytes + 4 * k, x->i32[k]);
	}
	if (mi == 0 && g->op.hostile == GEN_SK_PALETTE_PAST_SKELETON)
		m->palette[m->n_palette - 1] = (uint16_t)(g->op.n_bones + 3);
	if (mi == 0 && g->op.hostile == GEN_SK_STRIDE_TOO_SMALL)
		stride -= 6;
	return stride;
}

/* A vertex layout on either platform. */
struct mesh_layout {
	const struct gsk_layout *ps3;
	const struct gsx_layout *x360; /* NULL on PS3 */
};

static uint16_t layout_stride(const struct mesh_layout *ml)
{
	return ml->x360 ? ml->x360->stride : ml->ps3->stride;
}

/* Base resources, buffers and descriptor of one mesh; each buffer right after its base
 * resource (Xbox 360 finds it there). *vbo, *ibo: the buffers. Returns the descriptor. */
static uint32_t gen_buffers(struct gen *g, const struct gen_skinned_mesh_truth *m,
			    const struct mesh_layout *ml, const uint8_t *vb,
			    const struct gen_idx *x, uint16_t stride, uint32_t *vbo, uint32_t *ibo)
{
	struct psg_builder *b = g->b;
	uint32_t vsize = m->n_verts * layout_stride(ml), isize = x->n * m->index_width;
	uint32_t vbr, ibr;

	if (ml->x360) {
		psgb_add_base_resource(b, 4, vb, vsize);
		*vbo = psgo_x360_vertex_buffer(b, PSGO_NEW, vsize);
		psgb_add_base_resource(b, 4, x->bytes, isize);
		*ibo = psgo_x360_index_buffer(b, PSGO_NEW, x->n, m->index_width);
		return psgo_x360_vdes(b, PSGO_NEW, ml->x360->el, ml->x360->n, (uint8_t)stride);
	}
	vbr = psgb_add_base_resource(b, 0x10, vb, vsize);
	*vbo = psgo_vertex_buffer(b, PSGO_NEW, vbr, vsize);
	ibr = psgb_add_base_resource(b, 0x10, x->bytes, isize);
	*ibo = psgo_index_buffer(b, PSGO_NEW, ibr, x->n, m->index_width);
	return psgo_vdes(b, PSGO_NEW, ml->ps3->el, ml->ps3->n, stride);
}

/* The seven objects of one mesh: base resources, VB, IB, descriptor, helper, OptiMesh. */
static void gen_mesh_objects(struct gen *g, uint32_t mi, const struct gen_skinned_mesh_truth *m,
			     const struct mesh_layout *ml, const uint8_t *vb,
			     const struct gen_idx *x, uint16_t stride)
{
	struct psg_builder *b = g->b;
	uint32_t vbo, ibo, vd = gen_buffers(g, m, ml, vb, x, stride, &vbo, &ibo);
	uint32_t mh = psgo_mesh_helper(b, PSGO_NEW, &ibo, 1, &vbo, 1);
	struct psgo_optimesh om;

	memset(&om, 0, sizeof om);
	om.x360 = g->x360;
	psgo_bounds((const float(*)[3])m->pos, m->n_verts, &om.bbox);
	om.material = psgb_add_subref(b, g->mat_idx, psgo_material_offset(mi));
	om.vdes = vd;
	om.mesh_helper = mh;
	om.ib = ibo;
	om.vb = vbo;
	om.island_areas = psgb_add_subref(b, g->model_idx, g->lay.areas + 16 * g->isl);
	om.island_aabbs = psgb_add_subref(b, g->model_idx, g->lay.aabbs + 32 * g->isl);
	om.islands = x->is;
	om.n_islands = g->op.islands;
	om.remap = m->palette;
	om.n_remap = m->n_palette;
	g->refs[mi].mesh = psgo_optimesh(b, PSGO_NEW, &om);
}

/* Vertex v's skin truth again from re-quantised weights w (in slot order, as vertex_skin
 * made it): the same bones, the new weights normalised. */
static void requant_skin(struct gen_skinned_mesh_truth *m, uint32_t v, const float w[4])
{
	float sum = 0;
	unsigned n = 0;

	for (unsigned j = 0; j < 4 && n < m->n_infl[v]; j++)
		if (w[j] > 0)
			m->weight[v][n++] = w[j];
	for (unsigned j = 0; j < n; j++)
		sum += m->weight[v][j];
	for (unsigned j = 0; j < n; j++)
		m->weight[v][j] /= sum;
}

/* The truth of what the Xbox 360 layout re-quantised (bit k of changed: element k). */
static void requant_truth(struct gen_skinned_mesh_truth *m, uint32_t v, const struct gsx_layout *xl,
			  unsigned changed, float val[GSX_MAX_ELEMS][4])
{
	for (unsigned k = 0; k < xl->n; k++) {
		if (!(changed >> k & 1))
			continue;
		if (xl->el[k].type == SX360_ET_NORMAL)
			memcpy(m->normal[v], val[k], sizeof m->normal[v]);
		else if (xl->el[k].type == SX360_ET_TEX0)
			memcpy(m->uv[v], val[k], sizeof m->uv[v]);
		else if (xl->el[k].type == SX360_ET_WEIGHTS)
			requant_skin(m, v, val[k]);
	}
}

/* The PS3 vertices vb as the Xbox 360 layout stores them (fresh buffer, NULL on NOMEM). */
static uint8_t *to_x360(struct gen_skinned_mesh_truth *m, const struct gsk_layout *L,
			const struct gsx_layout *xl, const uint8_t *vb)
{
	uint8_t *xv = xcalloc_n(m->n_verts, xl->stride);
	float val[GSX_MAX_ELEMS][4];

	for (uint32_t v = 0; xv && v < m->n_verts; v++) {
		unsigned changed = gsx_vertex(xl, L->el, vb + (size_t)v * L->stride,
					      xv + (size_t)v * xl->stride, val);

		requant_truth(m, v, xl, changed, val);
	}
	return xv;
}

static enum rc gen_mesh(struct gen *g, uint32_t mi)
{
	struct gen_skinned_mesh_truth *m = &g->t->mesh[mi];
	struct mesh_layout ml = {0};
	struct gen_idx x = {0};
	uint8_t *vb, *xv = NULL;
	enum rc res;

	m->layout = g->op.layout < 0 ? (int)(mi % GEN_SK_LAYOUTS) : g->op.layout;
	ml.ps3 = &layouts[m->layout];
	if (g->x360)
		ml.x360 = gsx_layout_of(m->layout, g->op.platform == GEN_SK_X360_ALT);
	m->skinned = ml.ps3->skinned;
	m->pos_encoding = ml.x360 ? ml.x360->pos_encoding : ml.ps3->pos_encoding;
	m->n_verts = g->op.verts;
	m->index_width = g->op.verts > 65535 ? 4 : ml.ps3->index_width;
	snprintf(m->material, sizeof m->material, "%s", g->mnames[mi]);
	vb = xcalloc_n(m->n_verts, ml.ps3->stride);
	res = vb ? gsk_make_mesh(&g->r, g->t, m, ml.ps3, vb) : RC_NOMEM;
	if (res == RC_OK && ml.x360 && !(xv = to_x360(m, ml.ps3, ml.x360, vb)))
		res = RC_NOMEM;
	if (res == RC_OK)
		res = gen_triangles(g, m, &x);
	if (res == RC_OK)
		gen_mesh_objects(g, mi, m, &ml, xv ? xv : vb, &x,
				 gen_hostile(g, mi, m, layout_stride(&ml), &x));
	g->isl += g->op.islands;
	free(vb);
	free(xv);
	gen_idx_free(&x);
	return res;
}

/* The model's box over every mesh's positions, then the model itself. */
static void gen_model(struct gen *g)
{
	float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};

	for (uint32_t mi = 0; mi < g->op.n_meshes; mi++)
		for (uint32_t v = 0; v < g->t->mesh[mi].n_verts; v++)
			for (int c = 0; c < 3; c++) {
				lo[c] = fminf(lo[c], g->t->mesh[mi].pos[v][c]);
				hi[c] = fmaxf(hi[c], g->t->mesh[mi].pos[v][c]);
			}
	for (int c = 0; c < 3; c++) {
		g->pm.bbox.min[c] = lo[c];
		g->pm.bbox.max[c] = hi[c];
	}
	psgo_model(g->b, g->model_idx, &g->pm);
}

/* GEN_SK_ISLANDS_OVERLAP: every PS3 draw parameter of the OptiMesh at start (12 bytes each at
 * +0x60: first index, count, primitive) becomes (0, all of the mesh's indices). */
static void islands_overlap(struct buf *out, uint64_t start, uint32_t size)
{
	uint32_t n, total = 0;
	uint8_t *o;

	if (!span_ok(out->len, start, size) || size < 0x60)
		return;
	o = out->data + start;
	n = ld_u32be(o + 0x38);
	if ((uint64_t)0x60 + 12ull * n > size)
		return;
	for (uint32_t k = 0; k < n; k++)
		total += ld_u32be(o + 0x60 + 12 * k + 4);
	for (uint32_t k = 0; k < n; k++) {
		gsk_put32(o + 0x60 + 12 * k, 0);
		gsk_put32(o + 0x60 + 12 * k + 4, total);
	}
}

/* Serialise; GEN_SK_BONES_PAST_OBJECT patches the written RenderModelData's bone count. */
static enum rc gen_finish(struct gen *g, struct buf *out)
{
	struct psg_gen_record rec = {0};
	enum rc res = psgb_finish(g->b, g->op.shuffle_seed, out, &rec);

	g->b = NULL;
	if (res == RC_OK && g->op.hostile == GEN_SK_BONES_PAST_OBJECT && !out->count_only)
		for (size_t i = 0; i < rec.n; i++)
			if (rec.obj[i].type_id == RW_T_RENDERMODEL &&
			    span_ok(out->len, rec.obj[i].start + 0x34, 2))
				gsk_put16(out->data + rec.obj[i].start + 0x34, 0xFFFF);
	if (res == RC_OK && g->op.hostile == GEN_SK_ISLANDS_OVERLAP && !out->count_only)
		for (size_t i = 0; i < rec.n; i++)
			if (rec.obj[i].type_id == RW_T_OPTIMESH)
				islands_overlap(out, rec.obj[i].start, rec.obj[i].size);
	psg_gen_record_free(&rec);
	return res;
}

enum rc gen_psg_skinned(const struct gen_skinned_opts *o, struct buf *out,
			struct gen_skinned_truth *truth)
{
	struct gen_skinned_truth tt;
	struct gen g = {.op = *o, .t = truth ? truth : &tt, .x360 = o->platform != GEN_SK_PS3};
	enum rc res;

	memset(g.t, 0, sizeof *g.t);
	if (opts_check(&g.op) != RC_OK)
		return RC_INVAL;
	prng_seed(&g.r, g.op.seed ? g.op.seed : 0x5EED5EED);
	res = gen_alloc(&g);
	if (res == RC_OK)
		res = gsk_make_bones(&g.r, g.t, g.op.layout == GEN_SK_SKATER, g.op.rig_names);
	if (res == RC_OK) {
		gen_header_objects(&g);
		for (uint32_t mi = 0; res == RC_OK && mi < g.op.n_meshes; mi++)
			res = gen_mesh(&g, mi);
	}
	if (res == RC_OK) {
		gen_model(&g);
		res = gen_finish(&g, out);
	}
	gen_free(&g);
	if (res != RC_OK || !truth)
		gen_skinned_truth_free(g.t);
	return res;
}
