/* Text views of a Skate scene: skeleton/, meshes/NN/ and the decoded mesh objects. Mesh data
 * (vertices, triangles, skin) render any row range, reading only the vertices they show. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_platform.h"
#include "tree/psg/view_psg.h"

static void name_field(struct buf *b, const char *s)
{
	buf_tsv_name(b, s, strlen(s));
}

static void f32s(struct buf *b, const float *v, unsigned n, char sep)
{
	for (unsigned i = 0; i < n; i++) {
		if (i)
			buf_putc(b, sep);
		buf_f32txt(b, v[i]);
	}
}

static enum rc done(struct buf *out)
{
	return out->oom ? RC_NOMEM : RC_OK;
}

void view_bone_file_name(const struct skate_scene *sc, uint32_t bone, char out[80])
{
	char comp[NAME_COMPONENT_MAX + 1];
	const char *nm = bone < sc->n_bones ? sc->bones[bone].name : "";

	name_component(nm, strlen(nm), comp);
	snprintf(out, 80, "%03u.%s.txt", bone, comp);
}

static enum rc print_bone_row(const void *ctx, uint64_t i, const void *rec, struct buf *out)
{
	const struct skate_bone *b = &((const struct skate_scene *)ctx)->bones[i];

	(void)rec;
	buf_printf(out, "%llu\t", (unsigned long long)i);
	name_field(out, b->name);
	buf_printf(out, "\t%d\t", b->parent);
	f32s(out, b->t, 3, '\t');
	buf_putc(out, '\t');
	f32s(out, b->q, 4, '\t');
	buf_putc(out, '\n');
	return RC_OK;
}

static enum rc print_name_row(const void *ctx, uint64_t i, const void *rec, struct buf *out)
{
	(void)rec;
	name_field(out, ((const struct skate_scene *)ctx)->bones[i].name);
	buf_putc(out, '\n');
	return RC_OK;
}

static enum rc print_ibp_row(const void *ctx, uint64_t i, const void *rec, struct buf *out)
{
	const struct skate_bone *b = &((const struct skate_scene *)ctx)->bones[i];

	(void)rec;
	buf_printf(out, "%llu\t", (unsigned long long)i);
	name_field(out, b->name);
	buf_putc(out, '\t');
	f32s(out, b->ibp, 16, '\t');
	buf_putc(out, '\n');
	return RC_OK;
}

struct rows view_skel_rows(const struct skate_scene *sc, enum view_skel_table which)
{
	static const char ibp_header[] = "index\tname\tm00\tm01\tm02\tm03\tm10\tm11\tm12\tm13"
					 "\tm20\tm21\tm22\tm23\tm30\tm31\tm32\tm33\n";
	struct rows t = {NULL, sc->n_bones, 0, NULL, print_name_row, sc};

	if (which == VS_BONES) {
		t.header = "index\tname\tparent\ttx\tty\ttz\tqx\tqy\tqz\tqw\n";
		t.print = print_bone_row;
	} else if (which == VS_INVBIND) {
		t.header = ibp_header;
		t.print = print_ibp_row;
	}
	return t;
}

/* A table whole, for tests and tools. */
static enum rc rows_whole(struct rows t, struct buf *out)
{
	struct emit e;
	enum rc r;

	emit_init_window(&e, 0, SIZE_MAX);
	r = view_rows_render(&t, 0, &e);
	buf_put(out, e.b.data, e.b.len);
	emit_free(&e);
	return r == RC_OK ? done(out) : r;
}

enum rc view_bones_text(const struct skate_scene *sc, struct buf *out)
{
	return rows_whole(view_skel_rows(sc, VS_BONES), out);
}

enum rc view_bone_names_text(const struct skate_scene *sc, struct buf *out)
{
	return rows_whole(view_skel_rows(sc, VS_NAMES), out);
}

enum rc view_inverse_bind_text(const struct skate_scene *sc, struct buf *out)
{
	return rows_whole(view_skel_rows(sc, VS_INVBIND), out);
}

static void matrix_rows(struct buf *out, const float m[16])
{
	for (int r = 0; r < 4; r++) {
		buf_puts(out, "  ");
		f32s(out, m + 4 * r, 4, ' ');
		buf_putc(out, '\n');
	}
}

/* Where the parents came from: the PSG stores none (docs/skate-objects.md, "Skater rig"). */
static void hierarchy_line(const struct skate_scene *sc, struct buf *out)
{
	char h[96];

	skate_hierarchy_text(sc, h);
	buf_printf(out, "hierarchy: %s\n", h);
}

enum rc view_bone_text(const struct skate_scene *sc, uint32_t bone, struct buf *out)
{
	const struct skate_bone *b;
	uint32_t nch = 0;
	size_t uses = 0;

	if (bone >= sc->n_bones)
		return RC_NOENT;
	b = &sc->bones[bone];
	buf_printf(out, "index: %u\nname: ", bone);
	name_field(out, b->name);
	buf_putc(out, '\n');
	if (b->parent >= 0 && (uint32_t)b->parent < sc->n_bones) {
		buf_printf(out, "parent: %d ", b->parent);
		name_field(out, sc->bones[b->parent].name);
		buf_putc(out, '\n');
	} else {
		buf_puts(out, "parent: none (root)\n");
	}
	hierarchy_line(sc, out);
	buf_puts(out, "children:");
	for (uint32_t i = 0; i < sc->n_bones; i++)
		if (sc->bones[i].parent == (int32_t)bone) {
			buf_printf(out, " %u", i);
			nch++;
		}
	buf_printf(out, "%s\n", nch ? "" : " none");
	buf_puts(out, "inverse bind matrix (as stored, row-major, translation in row 3):\n");
	matrix_rows(out, b->ibp);
	buf_puts(out, "bind matrix (inverse of the above):\n");
	if (b->invertible)
		matrix_rows(out, b->bind);
	else
		buf_puts(out, "  singular (identity used)\n");
	buf_puts(out, "bind translation: ");
	f32s(out, b->t, 3, ' ');
	buf_puts(out, "\nbind rotation (x y z w): ");
	f32s(out, b->q, 4, ' ');
	buf_puts(out, "\nrigid: ");
	if (b->rigid) {
		buf_puts(out, "yes\n");
	} else {
		buf_puts(out, "no (scale, shear or reflection; deviation ");
		buf_f32txt(out, b->rigid_err);
		buf_puts(out, ")\n");
	}
	buf_puts(out, "used by meshes (mesh slot):");
	for (size_t m = 0; m < sc->n_meshes; m++)
		for (uint32_t k = 0; k < sc->meshes[m].n_palette; k++)
			if (sc->meshes[m].palette[k] == (int32_t)bone) {
				buf_printf(out, "%s%zu %u", uses ? ", " : " ", m, k);
				uses++;
			}
	buf_printf(out, "%s\n", uses ? "" : " none");
	return done(out);
}

/* info.txt: how the meshes' positions are stored and scaled, one line per distinct encoding
 * (docs/skate-objects.md, "Skater vertex encoding"). */
static void positions_summary(const struct skate_scene *sc, struct buf *out)
{
	enum { SHOWN = 8 };
	const char *enc[SHOWN];
	size_t count[SHOWN], n = 0, other = 0;

	for (size_t i = 0; i < sc->n_meshes; i++) {
		const char *e = sc->meshes[i].pos_encoding[0] ? sc->meshes[i].pos_encoding : "none";
		size_t k = 0;

		while (k < n && strcmp(enc[k], e) != 0)
			k++;
		if (k == n && n == SHOWN) {
			other++;
			continue;
		}
		if (k == n) {
			enc[n] = e;
			count[n++] = 0;
		}
		count[k]++;
	}
	for (size_t k = 0; k < n; k++)
		buf_printf(out, "positions: %zu mesh%s %s\n", count[k], count[k] == 1 ? "" : "es",
			   enc[k]);
	if (other)
		buf_printf(out, "positions: %zu meshes in other encodings\n", other);
}

enum rc view_descriptor_text(const struct skate_scene *sc, size_t mesh, struct buf *out)
{
	if (mesh >= sc->n_meshes)
		return RC_NOENT;
	return view_platform_of(sc->platform)->descriptor(sc, mesh, out);
}

struct mesh_rows {
	const struct skate_scene *sc;
	const struct skate_scene_mesh *m;
};

/* Dropped palette slots (-1) print nothing. */
static enum rc print_palette_row(const void *ctx, uint64_t k, const void *rec, struct buf *out)
{
	const struct mesh_rows *mr = ctx;
	int32_t b = mr->m->palette[k];

	(void)rec;
	if (b < 0)
		return RC_OK;
	buf_printf(out, "%llu\t%d\t", (unsigned long long)k, b);
	name_field(out, mr->sc->bones[b].name);
	buf_putc(out, '\n');
	return RC_OK;
}

static bool has_base_vertex(const struct skate_scene *sc)
{
	return sc->platform && sc->platform->island_base_vertex;
}

/* Xbox 360 islands add their base vertex (docs/xbox360.md, "Models"). */
static enum rc print_island_row(const void *ctx, uint64_t i, const void *rec, struct buf *out)
{
	const struct mesh_rows *mr = ctx;
	const struct skate_island *is = &mr->m->islands[i];

	(void)rec;
	buf_printf(out, "%llu\t%u\t%u\t%u", (unsigned long long)i, is->start, is->count, is->prim);
	if (has_base_vertex(mr->sc))
		buf_printf(out, "\t%d", is->base_vertex);
	buf_putc(out, '\n');
	return RC_OK;
}

enum rc view_mesh_table(const struct skate_scene *sc, size_t mesh, bool islands, uint64_t first,
			struct emit *e, uint64_t *items)
{
	struct mesh_rows mr;
	struct rows t;

	if (mesh >= sc->n_meshes)
		return RC_NOENT;
	mr = (struct mesh_rows){sc, &sc->meshes[mesh]};
	t = islands ? (struct rows){has_base_vertex(sc)
					? "island\tstart\tcount\tprimitive\tbase_vertex\n"
					: "island\tstart\tcount\tprimitive\n",
				    mr.m->n_islands,
				    0,
				    NULL,
				    print_island_row,
				    &mr}
		    : (struct rows){
			  "slot\tbone\tname\n", mr.m->n_palette, 0, NULL, print_palette_row, &mr};
	if (items) {
		*items = t.n + 1;
		return RC_OK;
	}
	return view_rows_render(&t, first, e);
}

enum rc view_palette_text(const struct skate_scene *sc, size_t mesh, struct buf *out)
{
	struct emit e;
	enum rc r;

	emit_init_window(&e, 0, SIZE_MAX);
	r = view_mesh_table(sc, mesh, false, 0, &e, NULL);
	buf_put(out, e.b.data, e.b.len);
	emit_free(&e);
	return r == RC_OK ? done(out) : r;
}

enum rc view_islands_text(const struct skate_scene *sc, size_t mesh, struct buf *out)
{
	struct emit e;
	enum rc r;

	emit_init_window(&e, 0, SIZE_MAX);
	r = view_mesh_table(sc, mesh, true, 0, &e, NULL);
	buf_put(out, e.b.data, e.b.len);
	emit_free(&e);
	return r == RC_OK ? done(out) : r;
}

/* Column names of one decoded element (k: its position among the usable ones). */
static void elem_header(struct buf *out, const struct skate_elem *e, unsigned k)
{
	static const char *const xyzw[] = {"x", "y", "z", "w"};
	static const char *const rgba[] = {"r", "g", "b", "a"};
	static const char *const uvst[] = {"u", "v", "s", "t"};
	static const char *const pre[] = {
	    [SKATE_USAGE_POSITION] = "p",
	    [SKATE_USAGE_NORMAL] = "n",
	    [SKATE_USAGE_TANGENT] = "t",
	    [SKATE_USAGE_BINORMAL] = "b",
	};

	for (unsigned c = 0; c < e->n_out && c < 4; c++) {
		buf_putc(out, '\t');
		switch (e->usage) {
		case SKATE_USAGE_POSITION:
		case SKATE_USAGE_NORMAL:
		case SKATE_USAGE_TANGENT:
		case SKATE_USAGE_BINORMAL:
			buf_printf(out, "%s%s", pre[e->usage], xyzw[c]);
			break;
		case SKATE_USAGE_COLOR:
			buf_puts(out, rgba[c]);
			break;
		case SKATE_USAGE_SPECULAR:
			buf_printf(out, "s%s", rgba[c]);
			break;
		case SKATE_USAGE_BLEND_WEIGHTS:
			buf_printf(out, "w%u", c);
			break;
		case SKATE_USAGE_BLEND_INDICES:
			buf_printf(out, "i%u", c);
			break;
		case SKATE_USAGE_TEXCOORD:
			if (e->set < 6) {
				buf_printf(out, "%s%u", uvst[c], e->set);
				break;
			}
			/* fall through */
		default:
			buf_printf(out, "e%u_%u", k, c);
		}
	}
}

/* The usable elements of a mesh, in descriptor order (what a vertex batch decodes). */
static unsigned usable_elems(const struct skate_scene_mesh *m, const struct skate_elem **out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < m->desc.n_el && i < SKATE_MAX_ELEMS; i++)
		if (m->desc.elem[i].usable)
			out[n++] = &m->desc.elem[i];
	return n;
}

enum rc view_vertices(const struct view_mesh *vm, uint64_t first, struct emit *e)
{
	const struct skate_scene_mesh *m = &vm->sc->meshes[vm->mesh];
	const struct skate_elem *el[SKATE_MAX_ELEMS];
	unsigned ne = usable_elems(m, el);
	struct skate_vbatch b;
	uint32_t v = first ? (uint32_t)(first - 1) : 0;
	enum rc r = RC_OK;
	bool more = true;

	if (first == 0) {
		buf_puts(&e->b, "vertex");
		for (unsigned k = 0; k < ne; k++)
			elem_header(&e->b, el[k], k);
		buf_putc(&e->b, '\n');
		if (!emit_item(e))
			return RC_OK;
	}
	skate_vbatch_init(&b);
	while (more && v < m->vertex_count && r == RC_OK) {
		r = skate_mesh_read_vertices(vm->s, vm->a, vm->sc, vm->mesh, v, skate_vbatch_cap(m),
					     &b);
		for (uint32_t i = 0; r == RC_OK && i < b.count && more; i++) {
			buf_u64txt(&e->b, v + i);
			for (unsigned k = 0; k < b.n_elem; k++)
				buf_f32_fields(&e->b, b.v[k] + (size_t)i * b.elem[k].n_out,
					       b.elem[k].n_out);
			buf_putc(&e->b, '\n');
			more = emit_item(e);
		}
		v += b.count;
	}
	skate_vbatch_free(&b);
	return r;
}

/* Valid triples before raw triple r: the stats' restart table, then the rest counted. */
static enum rc valid_before(const struct view_mesh *vm, uint64_t r, uint64_t *k,
			    struct skate_tbatch *b)
{
	uint64_t at = r / SKATE_STATS_STEP * SKATE_STATS_STEP;
	enum rc rc = RC_OK;

	*k = vm->st->tri_valid_before[r / SKATE_STATS_STEP];
	while (at < r && rc == RC_OK) {
		uint64_t n = r - at < SKATE_TBATCH_MAX ? r - at : SKATE_TBATCH_MAX;

		rc = skate_mesh_read_triangles(vm->s, vm->a, vm->sc, vm->mesh, at, (uint32_t)n, b);
		for (uint32_t i = 0; rc == RC_OK && i < b->count; i++)
			*k += b->tri[i].valid;
		at += b->count;
	}
	return rc;
}

enum rc view_triangles(const struct view_mesh *vm, uint64_t first, struct emit *e)
{
	uint64_t raw = first ? first - 1 : 0, total = vm->st->n_raw_tri, k;
	struct skate_tbatch b;
	enum rc r;
	bool more = true;

	if (first == 0) {
		buf_puts(&e->b, "triangle\ta\tb\tc\tisland\n");
		if (!emit_item(e))
			return RC_OK;
	}
	skate_tbatch_init(&b);
	r = valid_before(vm, raw, &k, &b);
	while (more && raw < total && r == RC_OK) {
		uint64_t n = total - raw < SKATE_TBATCH_MAX ? total - raw : SKATE_TBATCH_MAX;

		r = skate_mesh_read_triangles(vm->s, vm->a, vm->sc, vm->mesh, raw, (uint32_t)n, &b);
		for (uint32_t i = 0; r == RC_OK && i < b.count && more; i++) {
			const struct skate_tri *t = &b.tri[i];

			if (t->valid) {
				uint64_t row[5] = {k++, t->v[0], t->v[1], t->v[2], t->island};

				buf_u64_row(&e->b, row, 5);
			}
			more = emit_item(e);
		}
		raw += b.count;
	}
	skate_tbatch_free(&b);
	return r;
}

enum rc view_skin(const struct view_mesh *vm, uint64_t first, struct emit *e)
{
	const struct skate_scene *sc = vm->sc;
	const struct skate_scene_mesh *m = &sc->meshes[vm->mesh];
	struct skate_vbatch b;
	uint32_t v = first ? (uint32_t)(first - 1) : 0;
	enum rc r = RC_OK;
	bool more = true;

	if (first == 0) {
		buf_puts(&e->b, "vertex\tbone\tname\tweight\n");
		if (!emit_item(e))
			return RC_OK;
	}
	skate_vbatch_init(&b);
	while (more && v < m->vertex_count && r == RC_OK) {
		r = skate_mesh_read_vertices(vm->s, vm->a, sc, vm->mesh, v, skate_vbatch_cap(m),
					     &b);
		for (uint32_t i = 0; r == RC_OK && i < b.count && more; i++) {
			for (uint8_t j = 0; j < b.n_infl[i]; j++) {
				uint32_t bone = b.infl[i][j].bone;

				buf_u64txt(&e->b, v + i);
				buf_putc(&e->b, '\t');
				buf_u64txt(&e->b, bone);
				buf_putc(&e->b, '\t');
				if (bone < sc->n_bones)
					name_field(&e->b, sc->bones[bone].name);
				buf_putc(&e->b, '\t');
				buf_f32txt(&e->b, b.infl[i][j].weight);
				buf_putc(&e->b, '\n');
			}
			more = emit_item(e);
		}
		v += b.count;
	}
	skate_vbatch_free(&b);
	return r;
}

void view_scene_summary(const struct skate_scene *sc, struct buf *out)
{
	size_t ok = 0;

	for (size_t i = 0; i < sc->n_meshes; i++)
		ok += sc->meshes[i].ok;
	if (sc->skeleton_model != SKATE_NONE)
		buf_printf(out, "skeleton: %u bones (from object %u, RenderModelData)\n",
			   sc->n_bones, sc->skeleton_model);
	else
		buf_puts(out, "skeleton: none (no readable RenderModelData)\n");
	hierarchy_line(sc, out);
	if (sc->n_nonrigid)
		buf_printf(out, "non-rigid bind matrices: %u\n", sc->n_nonrigid);
	buf_printf(out,
		   "models: %u\nmeshes: %zu (%zu decodable)\nvertices: %llu\ntriangles: %llu\n",
		   sc->n_models, sc->n_meshes, ok, (unsigned long long)sc->total_vertices,
		   (unsigned long long)sc->total_triangles);
	positions_summary(sc, out);
	buf_printf(out, "mesh problems: %zu\n", sc->n_problems);
}

/* ---- decoded objects ---- */

static void aabb_text(struct buf *out, const char *field, const float *v)
{
	buf_printf(out, "%s: min ", field);
	f32s(out, v, 4, ' ');
	buf_puts(out, " max ");
	f32s(out, v + 4, 4, ' ');
	buf_putc(out, '\n');
}

static void text_model(struct buf *out, const struct arena *a, const struct skate_model *m)
{
	aabb_text(out, "m_BBox", m->bbox);
	buf_printf(
	    out,
	    "m_pIBPMatrices: 0x%X\nm_pMeshTable: 0x%X\nm_pBoneNameTable: 0x%X\n"
	    "m_pBoneNameList: 0x%X\nm_iNumTotalBones: %u\nm_iNumMeshes: %u\nm_iNumBones: %u\n"
	    "m_iNumIslands: %u\nm_pIslandAABBs: 0x%X\nm_pIslandAreas: 0x%X\n",
	    m->ibp_off, m->mesh_table_off, m->name_table_off, m->name_list_off, m->num_total_bones,
	    m->num_meshes, m->num_bones, m->num_islands, m->aabbs_off, m->areas_off);
	buf_printf(out, "\nbones (%u):\n", m->n_bones);
	for (uint32_t b = 0; b < m->n_bones; b++) {
		buf_printf(out, "bone %u: ", b);
		name_field(out, m->names[b]);
		buf_puts(out, "\n");
		matrix_rows(out, m->ibp[b]);
	}
	buf_printf(out, "\nmesh table (%u):\n", m->n_meshes);
	for (uint32_t k = 0; k < m->n_meshes; k++) {
		char f[48];

		snprintf(f, sizeof f, "mesh %u", k);
		view_ref_text(out, a, f, m->meshes[k].mesh, RW_T_OPTIMESH);
		snprintf(f, sizeof f, "mesh %u material", k);
		view_ref_text(out, a, f, m->meshes[k].material, RW_T_RENDERMATERIAL);
	}
	buf_printf(out, "\nisland AABBs (%u):\n", m->n_aabbs);
	for (uint32_t i = 0; i < m->n_aabbs; i++) {
		char f[32];

		snprintf(f, sizeof f, "island %u", i);
		aabb_text(out, f, m->aabbs[i]);
	}
	buf_printf(out, "\nisland areas (%u):\n", m->n_areas);
	for (uint32_t i = 0; i < m->n_areas; i++) {
		buf_printf(out, "island %u: ", i);
		f32s(out, m->areas[i], 4, ' ');
		buf_putc(out, '\n');
	}
}

static void text_optimesh(struct buf *out, const struct arena *a, const struct skate_optimesh *m)
{
	aabb_text(out, "m_BBox", m->bbox);
	buf_printf(out, "m_uiNumVerts: %u\n", m->num_verts);
	view_ref_text(out, a, "m_pMaterial", m->material, RW_T_RENDERMATERIAL);
	view_ref_text(out, a, "m_pVertexDescriptor", m->vdes, RW_T_VDES);
	view_ref_text(out, a, "m_pMeshHelper", m->mesh_helper, RW_T_MESHHELPER);
	view_ref_text(out, a, "m_pIndexBuffer", m->ib, RW_T_IB);
	view_ref_text(out, a, "m_pVertexBuffer", m->vb, RW_T_VB);
	buf_printf(out, "m_uiNumIslands: %u\n", m->num_islands);
	view_ref_text(out, a, "m_pIslandAreas", m->island_areas, ARENA_WANT_UNKNOWN);
	view_ref_text(out, a, "m_pIslandAABBs", m->island_aabbs, ARENA_WANT_UNKNOWN);
	buf_printf(out,
		   "m_pIslandDrawParams: 0x%X\nm_uiNumRemapIndices: %u\nm_pRemapTable: 0x%X\n"
		   "m_uiNumBlendShapes: %u\nm_pBlendShapeTable: 0x%X\nm_szBlendShapeNames: 0x%X\n"
		   "pad: 0x%08X\n",
		   m->draw_params, m->num_remap, m->remap_table, m->num_blend_shapes,
		   m->blend_shape_table, m->blend_shape_names, m->pad);
	buf_printf(out, "\nislands (%u): start count primitive\n", m->n_islands);
	for (uint32_t i = 0; i < m->n_islands; i++) {
		buf_printf(out, "island %u: %u %u %u", i, m->islands[i].start, m->islands[i].count,
			   m->islands[i].prim);
		if (m->islands[i].base_vertex) /* Xbox 360 only */
			buf_printf(out, " base vertex %d", m->islands[i].base_vertex);
		buf_putc(out, '\n');
	}
	buf_printf(out, "\nremap table (%u):", m->n_remap);
	for (uint32_t i = 0; i < m->n_remap; i++)
		buf_printf(out, " %u", m->remap[i]);
	buf_putc(out, '\n');
}

/* Every mesh object's view starts with the row and its size. */
static void mesh_obj_head(const struct view_object *o, struct buf *out)
{
	char tb[16];

	buf_printf(out, "object: %04u.%s\nsize: %zu\n\n", o->idx,
		   rw_type_label(arena_row(o->a, o->idx)->type_id, tb), o->n);
}

/* A mesh object's decoder failing is RC_CORRUPT. */
static enum rc mesh_obj_done(enum rc r)
{
	return r == RC_OK || r == RC_NOMEM ? r : RC_CORRUPT;
}

enum rc view_obj_model(const struct view_object *o, struct buf *out, struct diag *d)
{
	struct skate_model m;
	enum rc r;

	mesh_obj_head(o, out);
	r = skate_model_decode(o->p, o->n, o->a->big_endian, o->idx, &m, d);
	if (r == RC_OK) {
		text_model(out, o->a, &m);
		skate_model_free(&m);
	}
	return mesh_obj_done(r);
}

/* Objects are decoded by the arena's platform table; the PS3 one for platforms without. */
enum rc view_obj_optimesh(const struct view_object *o, struct buf *out, struct diag *d)
{
	struct skate_optimesh m;
	enum rc r;

	mesh_obj_head(o, out);
	r = skate_optimesh_decode(skate_platform_decoders(o->a), o->p, o->n, o->a->big_endian,
				  o->idx, &m, d);
	if (r == RC_OK) {
		text_optimesh(out, o->a, &m);
		skate_optimesh_free(&m);
	}
	return mesh_obj_done(r);
}

/* The VertexDescriptor, VertexBuffer or IndexBuffer by the platform's decoders and view row. */
enum rc view_obj_buffer(const struct view_object *o, struct buf *out, struct diag *d)
{
	const struct skate_platform *pl = skate_platform_decoders(o->a);
	const struct view_platform *vp = view_platform_of(pl);
	const struct arena *a = o->a;
	uint32_t t = arena_row(a, o->idx)->type_id;
	enum rc r;

	mesh_obj_head(o, out);
	if (t == RW_T_VDES) {
		struct skate_vdes v;

		r = pl->vdes_parse(o->p, o->n, a->big_endian, o->idx, &v, d);
		if (r == RC_OK)
			vp->vdes_text(out, &v);
	} else if (t == RW_T_VB) {
		struct skate_vb v;

		r = pl->vb_parse(o->p, o->n, a->big_endian, o->idx, &v, d);
		if (r == RC_OK)
			vp->vb_text(out, a, o->idx, &v);
	} else {
		struct skate_ib v;

		r = pl->ib_parse(o->p, o->n, a->big_endian, o->idx, &v, d);
		if (r == RC_OK)
			vp->ib_text(out, a, o->idx, &v);
	}
	return mesh_obj_done(r);
}

enum rc view_obj_mesh_helper(const struct view_object *o, struct buf *out, struct diag *d)
{
	struct skate_mesh_helper m;
	enum rc r;

	mesh_obj_head(o, out);
	r = skate_platform_decoders(o->a)->mesh_helper_parse(o->p, o->n, o->a->big_endian, o->idx,
							     &m, d);
	if (r == RC_OK) {
		buf_printf(out, "m_numIndexBuffers: %u\nm_numVertexBuffers: %u\n", m.n_ib, m.n_vb);
		for (uint32_t i = 0; i < m.n_refs; i++) {
			char f[32];

			snprintf(f, sizeof f, "%s %u",
				 i < m.n_ib ? "index buffer" : "vertex buffer",
				 i < m.n_ib ? i : i - m.n_ib);
			view_ref_text(out, o->a, f, m.refs[i], i < m.n_ib ? RW_T_IB : RW_T_VB);
		}
		skate_mesh_helper_free(&m);
	}
	return mesh_obj_done(r);
}
