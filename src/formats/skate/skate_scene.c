/* The whole-arena view of a Skate 3 model PSG: skeleton of the first RenderModelData, every
 * mesh resolved down to its base resources, and the on-demand vertex/skin/triangle decode
 * (docs/skate-objects.md, "RenderModelData", "RenderOptiMeshData"). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_objects.h"
#include "psgfs/formats/skate_platform.h"
#include "formats/skate/skate_int.h"

#define MATERIAL_NAME_MAX 255

static const char *tlabel(const struct arena *a, uint32_t idx, char buf[16])
{
	if (idx >= a->n_dict)
		return "?";
	return rw_type_label(arena_row(a, idx)->type_id, buf);
}

static enum rc read_obj(const struct src *s, const struct arena *a, uint32_t idx, uint8_t **p,
			size_t *n)
{
	*p = NULL;
	*n = 0;
	if (idx >= a->n_dict || !arena_row(a, idx)->readable)
		return RC_BOUNDS;
	return arena_read_object(s, a, idx, p, n);
}

/*
 * Resolve reference field `field` of object `owner` (arena_ref_to: the one rule for every
 * reference field), which must point at the start of a readable object of the kind `want`.
 * SKATE_NONE otherwise, with a diag line unless the field is optional and null.
 */
static uint32_t want_ref(const struct arena *a, uint32_t v, uint32_t want, bool optional,
			 uint32_t owner, const char *field, struct diag *d)
{
	char b1[16], b2[16], b3[16];
	uint32_t obj = 0, off = 0;
	enum rc r = arena_ref_to(a, v, want, &obj, &off);

	if (r == RC_NOENT) {
		if (!optional)
			diag_add(d, "object %u (%s): %s is null", owner, tlabel(a, owner, b1),
				 field);
		return SKATE_NONE;
	}
	if (r == RC_CORRUPT) {
		diag_add(d, "object %u (%s): %s -> %u is %s, not %s", owner, tlabel(a, owner, b1),
			 field, obj, tlabel(a, obj, b2), arena_want_name(want, b3));
		return SKATE_NONE;
	}
	if (r != RC_OK) {
		diag_add(d, "object %u (%s): %s 0x%x does not resolve (%u objects)", owner,
			 tlabel(a, owner, b1), field, v, a->n_dict);
		return SKATE_NONE;
	}
	if (off != 0) {
		diag_add(d, "object %u (%s): %s points 0x%x bytes into object %u", owner,
			 tlabel(a, owner, b1), field, off, obj);
		return SKATE_NONE;
	}
	if (!arena_row(a, obj)->readable) {
		diag_add(d, "object %u (%s): %s -> %u is not readable", owner, tlabel(a, owner, b1),
			 field, obj);
		return SKATE_NONE;
	}
	return obj;
}

/* ---- materials ---- */

/* How well a channel's shader input names the material: "Name" 2,
 * "AttribulatorMaterialName" 1, anything else 0. */
static int channel_rank(const struct skate_str *si)
{
	if (si->len == 4 && !memcmp(si->p, "Name", 4))
		return 2;
	if (si->len == 24 && !memcmp(si->p, "AttribulatorMaterialName", 24))
		return 1;
	return 0;
}

/* The best-ranked channel stream name among nch 32-byte tChannels at pch. */
static struct skate_str best_channel(const uint8_t *p, size_t n, bool be, uint32_t pch,
				     uint32_t nch)
{
	struct skate_str best = {0};
	int best_rank = 0;
	struct br r = br_at(p, n, be, pch);

	for (uint32_t c = 0; c < nch; c++) {
		struct skate_str si = skate_str_at(p, n, br_u32(&r)), sn;
		uint16_t flags = br_u16(&r);
		int rank;

		br_skip(&r, 0x12); /* imageChannel, pad[2], guid */
		sn = skate_str_at(p, n, br_u32(&r));
		br_skip(&r, 4);		  /* m_pStream */
		if (!si.p || (flags & 2)) /* flag 2: scalar constants, no stream name */
			continue;
		rank = channel_rank(&si);
		if (rank > best_rank && sn.p && sn.len > 0) {
			best = sn;
			best_rank = rank;
		}
	}
	return best;
}

/* Stream name of the "Name" channel (else "AttribulatorMaterialName") of the tRMaterial at
 * object-relative `off` inside RenderMaterialData object `obj`; NULL when none. */
static char *material_name(const struct src *s, const struct arena *a, uint32_t obj, uint32_t off,
			   struct diag *d)
{
	uint8_t *p;
	size_t n;
	uint32_t nch, pch;
	uint64_t room;
	struct skate_str best;
	struct br r;
	char *out = NULL;

	if (read_obj(s, a, obj, &p, &n) != RC_OK)
		return NULL;
	if (!span_ok(n, off, 12)) {
		diag_add(d, "object %u (RenderMaterialData): material at 0x%x past the object", obj,
			 off);
		free(p);
		return NULL;
	}
	r = br_at(p, n, a->big_endian, off);
	nch = br_u32(&r);
	br_skip(&r, 4); /* flags */
	pch = br_u32(&r);
	room = pch > n ? 0 : (n - pch) / 32;
	if (nch > room) {
		diag_add(d,
			 "object %u (RenderMaterialData): material at 0x%x has %u channels, room "
			 "for %llu",
			 obj, off, nch, (unsigned long long)room);
		nch = (uint32_t)room;
	}
	best = best_channel(p, n, a->big_endian, pch, nch);
	if (best.p)
		out = strndup((const char *)best.p,
			      best.len < MATERIAL_NAME_MAX ? best.len : MATERIAL_NAME_MAX);
	free(p);
	return out;
}

/* ---- scene ---- */

static void mesh_free(struct skate_scene_mesh *m)
{
	free(m->tri_first);
	free(m->material);
	free(m->islands);
	free(m->palette_raw);
	free(m->palette);
}

void skate_scene_free(struct skate_scene *sc)
{
	if (!sc)
		return;
	for (uint32_t i = 0; i < sc->n_bones; i++)
		free(sc->bones[i].name);
	free(sc->bones);
	for (size_t i = 0; i < sc->n_meshes; i++)
		mesh_free(&sc->meshes[i]);
	free(sc->meshes);
	free(sc);
}

size_t skate_scene_bytes(const struct skate_scene *sc)
{
	size_t t;

	if (!sc)
		return 0;
	t = sizeof *sc + sc->n_bones * sizeof *sc->bones + sc->n_meshes * sizeof *sc->meshes;
	for (uint32_t i = 0; i < sc->n_bones; i++)
		t += strlen(sc->bones[i].name) + 1;
	for (size_t i = 0; i < sc->n_meshes; i++) {
		const struct skate_scene_mesh *m = &sc->meshes[i];

		t += (m->material ? strlen(m->material) + 1 : 0) +
		     m->n_islands * (sizeof *m->islands + sizeof *m->tri_first) +
		     m->n_palette * (sizeof *m->palette + sizeof *m->palette_raw);
	}
	return t;
}

/* Bones of the skeleton's RenderModelData: names, IBP, bind pose (every bone under bone 0
 * until skate_hierarchy_build says otherwise). */
static enum rc load_skeleton(struct skate_scene *sc, const struct skate_model *md)
{
	sc->n_bones = md->n_bones;
	sc->bones = xcalloc_n(sc->n_bones, sizeof *sc->bones);
	if (!sc->bones)
		return RC_NOMEM;
	for (uint32_t i = 0; i < sc->n_bones; i++) {
		struct skate_bone *b = &sc->bones[i];

		b->name = strdup(md->names[i]);
		if (!b->name)
			return RC_NOMEM;
		memcpy(b->ibp, md->ibp[i], sizeof b->ibp);
		b->invertible = skate_mat4_inverse(b->ibp, b->bind);
		if (!b->invertible) {
			memset(b->bind, 0, sizeof b->bind);
			b->bind[0] = b->bind[5] = b->bind[10] = b->bind[15] = 1;
		}
		b->rigid = skate_decompose(b->bind, b->t, b->q, SKATE_RIGID_TOL, &b->rigid_err) &&
			   b->invertible;
		if (!b->rigid)
			sc->n_nonrigid++;
		b->parent = i == 0 ? -1 : 0;
	}
	return RC_OK;
}

/* ---- one mesh (docs/skate-objects.md, "RenderOptiMeshData") ---- */

/* What load_mesh needs while it resolves one mesh. */
struct mesh_ctx {
	const struct src *s;
	const struct arena *a;
	const struct skate_scene *sc;
	size_t mi;
	struct skate_scene_mesh *m;
	struct diag *d;
};

/* Object idx's bytes (the caller frees them), NULL when there are none to read. */
static uint8_t *mesh_bytes(const struct mesh_ctx *c, uint32_t idx, size_t *n)
{
	uint8_t *p;

	if (idx == SKATE_NONE || read_obj(c->s, c->a, idx, &p, n) != RC_OK)
		return NULL;
	return p;
}

/* The palette (global bone per slot; slots past the skeleton dropped) and the islands,
 * taken over from the decoded OptiMesh. */
static enum rc mesh_palette(const struct mesh_ctx *c, struct skate_optimesh *om)
{
	struct skate_scene_mesh *m = c->m;
	uint32_t bad = 0;

	m->islands = om->islands;
	m->n_islands = om->n_islands;
	m->palette_raw = om->remap;
	m->n_palette = om->n_remap;
	om->islands = NULL;
	om->remap = NULL;
	m->palette = xcalloc_n(m->n_palette, sizeof *m->palette);
	if (!m->palette)
		return RC_NOMEM;
	for (uint32_t i = 0; i < m->n_palette; i++) {
		m->palette[i] = m->palette_raw[i] < c->sc->n_bones ? m->palette_raw[i] : -1;
		if (m->palette[i] < 0 && bad++ < 4)
			diag_add(c->d,
				 "mesh %zu: object %u (RenderOptiMeshData): palette slot %u = bone "
				 "%u past the skeleton (%u bones), dropped",
				 c->mi, m->optimesh, i, m->palette_raw[i], c->sc->n_bones);
	}
	if (bad > 4)
		diag_add(c->d, "mesh %zu: %u palette slots past the skeleton in all", c->mi, bad);
	return RC_OK;
}

/* The first of the OptiMesh's and the mesh table's material references that names a
 * RenderMaterialData, and its name. */
static void mesh_material(const struct mesh_ctx *c, uint32_t opti_ref, uint32_t table_ref)
{
	const uint32_t refs[2] = {opti_ref, table_ref};
	struct skate_scene_mesh *m = c->m;

	for (int k = 0; k < 2 && m->material_obj == SKATE_NONE; k++) {
		uint32_t obj, off;
		enum rc r = arena_ref_to(c->a, refs[k], RW_T_RENDERMATERIAL, &obj, &off);
		char b1[16];

		if (r == RC_CORRUPT)
			diag_add(c->d, "mesh %zu: material reference 0x%x -> %u is %s", c->mi,
				 refs[k], obj, tlabel(c->a, obj, b1));
		if (r != RC_OK)
			continue;
		m->material_obj = obj;
		m->material_off = off;
		m->material = material_name(c->s, c->a, obj, off, c->d);
		m->material_named = m->material != NULL;
	}
}

/* The vertex descriptor, its stride, first position element and whether it skins. */
static void mesh_vdes(const struct mesh_ctx *c, uint32_t ref)
{
	struct skate_scene_mesh *m = c->m;
	uint8_t *p;
	size_t n;

	m->vdes = want_ref(c->a, ref, RW_T_VDES, false, m->optimesh, "m_pVertexDescriptor", c->d);
	p = mesh_bytes(c, m->vdes, &n);
	if (!p)
		return;
	m->has_desc =
	    c->sc->platform->vdes_parse(p, n, c->a->big_endian, m->vdes, &m->desc, c->d) == RC_OK;
	free(p);
	if (!m->has_desc)
		return;
	m->stride = m->desc.stride;
	for (unsigned i = 0; i < m->desc.n_el; i++) {
		const struct skate_elem *e = &m->desc.elem[i];

		if (!e->usable)
			continue;
		if (e->usage == SKATE_USAGE_POSITION && m->pos_elem < 0) {
			m->pos_elem = (int)i;
			skate_elem_encoding(e, m->pos_encoding);
		}
		if (e->usage == SKATE_USAGE_BLEND_INDICES || e->usage == SKATE_USAGE_BLEND_WEIGHTS)
			m->skinned = true;
	}
}

/*
 * The base resource of buffer object obj: what its buffer field v names (want_ref), or, on a
 * platform whose buffers name none, the dictionary row just before it (docs/xbox360.md,
 * "Models"). SKATE_NONE (+ diag) when there is none.
 */
static uint32_t buffer_res(const struct mesh_ctx *c, uint32_t obj, uint32_t v, const char *what)
{
	const struct arena_dict_entry *br;

	if (!c->sc->platform->base_res_row_before)
		return want_ref(c->a, v, ARENA_WANT_BASERES, false, obj, "m_buffer", c->d);
	br = obj > 0 && obj <= c->a->n_dict ? arena_row(c->a, obj - 1) : NULL;
	if (!br || !br->base_resource || !br->readable) {
		diag_add(c->d, "object %u (%s): no readable BaseResource in the row before it", obj,
			 what);
		return SKATE_NONE;
	}
	return obj - 1;
}

/* The vertex buffer, its base resource and the vertex count it holds. */
static void mesh_vb(const struct mesh_ctx *c, uint32_t ref)
{
	struct skate_scene_mesh *m = c->m;
	const struct arena_dict_entry *br;
	struct skate_vb vb;
	uint32_t bytes;
	uint8_t *p;
	size_t n;
	enum rc r;

	m->vb = want_ref(c->a, ref, RW_T_VB, false, m->optimesh, "m_pVertexBuffer", c->d);
	p = mesh_bytes(c, m->vb, &n);
	if (!p)
		return;
	r = c->sc->platform->vb_parse(p, n, c->a->big_endian, m->vb, &vb, c->d);
	free(p);
	if (r != RC_OK)
		return;
	m->vb_res = buffer_res(c, m->vb, vb.buffer, "VertexBuffer");
	if (m->vb_res == SKATE_NONE)
		return;
	br = arena_row(c->a, m->vb_res);
	if (vb.buffer_size != br->size)
		diag_add(c->d,
			 "object %u (VertexBuffer): m_bufferSize %u but base resource %u holds %u "
			 "bytes",
			 m->vb, vb.buffer_size, m->vb_res, br->size);
	if (vb.offset > br->size) {
		diag_add(c->d,
			 "object %u (VertexBuffer): m_offset %u past base resource %u (%u bytes)",
			 m->vb, vb.offset, m->vb_res, br->size);
		m->vb_res = SKATE_NONE;
		return;
	}
	bytes = br->size - vb.offset;
	m->vb_start = br->start + vb.offset;
	if (!m->stride)
		return;
	m->vertex_count = bytes / m->stride;
	if (bytes % m->stride)
		diag_add(c->d, "mesh %zu: vertex data of %u bytes is not a multiple of stride %u",
			 c->mi, bytes, m->stride);
}

/* The index buffer, its base resource and the indices it really holds. */
static void mesh_ib(const struct mesh_ctx *c, uint32_t ref)
{
	struct skate_scene_mesh *m = c->m;
	const struct arena_dict_entry *br;
	struct skate_ib ib;
	uint32_t fit;
	uint8_t *p;
	size_t n;
	enum rc r;

	m->ib = want_ref(c->a, ref, RW_T_IB, false, m->optimesh, "m_pIndexBuffer", c->d);
	p = mesh_bytes(c, m->ib, &n);
	if (!p)
		return;
	r = c->sc->platform->ib_parse(p, n, c->a->big_endian, m->ib, &ib, c->d);
	free(p);
	if (r != RC_OK)
		return;
	m->ib_res = buffer_res(c, m->ib, ib.buffer, "IndexBuffer");
	m->index_count = ib.num_indices;
	m->index_width = ib.width;
	if (m->ib_res == SKATE_NONE || !m->index_width)
		return;
	br = arena_row(c->a, m->ib_res);
	if (ib.offset > br->size) {
		diag_add(c->d,
			 "object %u (IndexBuffer): m_offset %u past base resource %u (%u bytes)",
			 m->ib, ib.offset, m->ib_res, br->size);
		m->ib_res = SKATE_NONE;
		return;
	}
	fit = (br->size - ib.offset) / m->index_width;
	m->ib_start = br->start + ib.offset;
	m->indices_avail = ib.num_indices < fit ? ib.num_indices : fit;
	if (ib.num_indices > fit)
		diag_add(c->d,
			 "object %u (IndexBuffer): %u indices of %u bytes but base resource %u "
			 "holds %u",
			 m->ib, ib.num_indices, m->index_width, m->ib_res, fit);
}

/* Islands against the index count: the raw triples of each (tri_first) and the problems. */
static enum rc mesh_islands(const struct mesh_ctx *c)
{
	struct skate_scene_mesh *m = c->m;

	m->tri_first = xcalloc_n((size_t)m->n_islands + 1, sizeof *m->tri_first);
	if (!m->tri_first)
		return RC_NOMEM;
	for (uint32_t i = 0; i < m->n_islands; i++) {
		const struct skate_island *is = &m->islands[i];
		uint64_t end = (uint64_t)is->start + is->count, cnt = is->count;

		m->tri_first[i] = m->tri_estimate;
		if (!is->triangles) {
			diag_add(c->d,
				 "mesh %zu: island %u primitive %u unsupported (%u = triangles)",
				 c->mi, i, is->prim, c->sc->platform->tri_prim);
			continue;
		}
		if (end > m->index_count)
			diag_add(c->d, "mesh %zu: island %u indices %u..%llu past numIndices %u",
				 c->mi, i, is->start, (unsigned long long)end, m->index_count);
		if (is->count % 3)
			diag_add(c->d, "mesh %zu: island %u index count %u is not a multiple of 3",
				 c->mi, i, is->count);
		if (end > m->indices_avail)
			cnt = is->start >= m->indices_avail ? 0 : m->indices_avail - is->start;
		m->tri_estimate += cnt / 3;
	}
	m->tri_first[m->n_islands] = m->tri_estimate;
	return RC_OK;
}

/* ok when everything a decode needs is there; else the first thing missing. */
static void mesh_verdict(const struct mesh_ctx *c)
{
	struct skate_scene_mesh *m = c->m;

	if (!m->has_desc)
		diag_add(c->d, "mesh %zu: no usable vertex descriptor", c->mi);
	else if (m->pos_elem < 0)
		diag_add(c->d,
			 "mesh %zu: vertex descriptor %u has no usable position (XYZ) element",
			 c->mi, m->vdes);
	else if (m->stride == 0)
		diag_add(c->d, "mesh %zu: vertex stride 0", c->mi);
	else if (m->vb_res == SKATE_NONE)
		diag_add(c->d, "mesh %zu: no vertex data", c->mi);
	else if (m->ib_res == SKATE_NONE || !m->index_width)
		diag_add(c->d, "mesh %zu: no index data", c->mi);
	else
		m->ok = true;
}

/* Everything the OptiMesh points at, in the order the diag lines have always come. */
static enum rc mesh_parts(const struct mesh_ctx *c, struct skate_optimesh *om,
			  uint32_t table_material)
{
	struct skate_scene_mesh *m = c->m;
	enum rc r = mesh_palette(c, om);

	if (r != RC_OK)
		return r;
	mesh_material(c, om->material, table_material);
	mesh_vdes(c, om->vdes);
	m->mesh_helper = want_ref(c->a, om->mesh_helper, RW_T_MESHHELPER, true, m->optimesh,
				  "m_pMeshHelper", c->d);
	mesh_vb(c, om->vb);
	mesh_ib(c, om->ib);
	r = mesh_islands(c);
	if (r == RC_OK)
		mesh_verdict(c);
	return r;
}

/* The OptiMesh of the mesh decoded into om; RC_NOENT (+ diag) when there is none to use. */
static enum rc mesh_optimesh(const struct mesh_ctx *c, struct skate_optimesh *om)
{
	uint32_t o = c->m->optimesh;
	uint8_t *p;
	size_t n;
	enum rc r;

	if (o == SKATE_NONE)
		return RC_NOENT;
	r = read_obj(c->s, c->a, o, &p, &n);
	if (r != RC_OK) {
		diag_add(c->d, "mesh %zu: object %u (RenderOptiMeshData) unreadable: %s", c->mi, o,
			 rc_str(r));
		return RC_NOENT;
	}
	r = skate_optimesh_decode(c->sc->platform, p, n, c->a->big_endian, o, om, c->d);
	free(p);
	return r == RC_OK || r == RC_NOMEM ? r : RC_NOENT;
}

/* Resolve everything one mesh needs; problems make ok false and never fail the scene. Every
 * mesh gets a material name ("material_NN" when none resolves). RC_NOMEM only. */
static enum rc load_mesh(const struct mesh_ctx *c, uint32_t table_material)
{
	struct skate_scene_mesh *m = c->m;
	struct skate_optimesh om;
	enum rc r;

	m->vdes = m->vb = m->ib = m->mesh_helper = m->vb_res = m->ib_res = SKATE_NONE;
	m->material_obj = SKATE_NONE;
	m->pos_elem = -1;
	r = mesh_optimesh(c, &om);
	if (r == RC_OK) {
		r = mesh_parts(c, &om, table_material);
		skate_optimesh_free(&om);
	}
	if (r == RC_NOENT)
		r = RC_OK;
	if (r == RC_OK && !m->material) {
		char buf[32];

		snprintf(buf, sizeof buf, "material_%02zu", c->mi);
		m->material = strdup(buf);
		r = m->material ? RC_OK : RC_NOMEM;
	}
	return r;
}

/* ---- the scene ---- */

/* The RenderOptiMeshData that mesh-table row k of model `model` names, SKATE_NONE (+ diag). */
static uint32_t table_mesh(const struct arena *a, uint32_t model, uint32_t k, uint32_t v,
			   struct diag *d)
{
	uint32_t obj, off;
	enum rc r = arena_ref_to(a, v, RW_T_OPTIMESH, &obj, &off);
	char b1[16];

	if (r == RC_OK && off == 0)
		return obj;
	if (r == RC_OK)
		diag_add(d, "object %u (RenderModelData): mesh %u points 0x%x bytes into object %u",
			 model, k, off, obj);
	else if (r == RC_CORRUPT)
		diag_add(d,
			 "object %u (RenderModelData): mesh %u -> %u is %s, not "
			 "RenderOptiMeshData",
			 model, k, obj, tlabel(a, obj, b1));
	else
		diag_add(d, "object %u (RenderModelData): mesh %u reference 0x%x does not resolve",
			 model, k, v);
	return SKATE_NONE;
}

/* Where each mesh of the scene comes from, in scene order. */
struct mesh_src {
	uint32_t optimesh, model, table_index, material;
};
struct mesh_list {
	struct mesh_src *v;
	size_t n, cap;
	bool *listed; /* per dictionary row: an OptiMesh some mesh table names */
};

static enum rc mesh_list_add(struct mesh_list *l, struct mesh_src e)
{
	struct mesh_src *v = xgrow_n(l->v, l->n, &l->cap, sizeof *v, 16);

	if (!v)
		return RC_NOMEM;
	l->v = v;
	l->v[l->n++] = e;
	if (e.optimesh != SKATE_NONE)
		l->listed[e.optimesh] = true;
	return RC_OK;
}

/* One RenderModelData: the skeleton when it is the first, and its mesh table. */
static enum rc scene_model(const struct src *s, const struct arena *a, struct skate_scene *sc,
			   uint32_t i, struct mesh_list *l, struct diag *d)
{
	struct skate_model md;
	uint8_t *p;
	size_t n;
	enum rc r = read_obj(s, a, i, &p, &n);

	if (r != RC_OK) {
		diag_add(d, "object %u (RenderModelData): unreadable: %s", i, rc_str(r));
		return RC_OK;
	}
	r = skate_model_decode(p, n, a->big_endian, i, &md, d);
	free(p);
	if (r != RC_OK)
		return r == RC_NOMEM ? r : RC_OK;
	if (sc->skeleton_model == SKATE_NONE) {
		sc->skeleton_model = i;
		r = load_skeleton(sc, &md);
	} else if (md.n_bones != sc->n_bones) {
		diag_add(d,
			 "object %u (RenderModelData): %u bones; the skeleton comes from object "
			 "%u (%u bones)",
			 i, md.n_bones, sc->skeleton_model, sc->n_bones);
	}
	for (uint32_t k = 0; r == RC_OK && k < md.n_meshes; k++)
		r = mesh_list_add(l, (struct mesh_src){table_mesh(a, i, k, md.meshes[k].mesh, d), i,
						       k, md.meshes[k].material});
	skate_model_free(&md);
	return r;
}

/* Meshes in scene order: every model's mesh table (dictionary order, table order), then
 * every RenderOptiMeshData no model lists. */
static enum rc scene_mesh_list(const struct src *s, const struct arena *a, struct skate_scene *sc,
			       struct mesh_list *l, struct diag *d)
{
	enum rc r = RC_OK;

	l->listed = xcalloc_n(a->n_dict, sizeof *l->listed);
	if (!l->listed)
		return RC_NOMEM;
	for (uint32_t i = 0; r == RC_OK && i < a->n_dict; i++)
		if (arena_row(a, i)->type_id == RW_T_RENDERMODEL) {
			sc->n_models++;
			r = scene_model(s, a, sc, i, l, d);
		}
	for (uint32_t i = 0; r == RC_OK && i < a->n_dict; i++)
		if (arena_row(a, i)->type_id == RW_T_OPTIMESH && !l->listed[i])
			r = mesh_list_add(l, (struct mesh_src){i, SKATE_NONE, 0, 0});
	return r;
}

static void report_bones(const struct skate_scene *sc, struct diag *d)
{
	for (uint32_t i = 0; i < sc->n_bones; i++)
		if (!sc->bones[i].rigid)
			diag_add(d, "bone %u (\"%.64s\"): inverse bind matrix %s (deviation %g)", i,
				 sc->bones[i].name,
				 sc->bones[i].invertible ? "is not rigid" : "is singular",
				 (double)sc->bones[i].rigid_err);
}

static enum rc scene_meshes(const struct src *s, const struct arena *a, struct skate_scene *sc,
			    const struct mesh_list *l, struct diag *d)
{
	sc->meshes = xcalloc_n(l->n, sizeof *sc->meshes);
	if (!sc->meshes)
		return RC_NOMEM;
	sc->n_meshes = l->n;
	for (size_t i = 0; i < l->n; i++) {
		struct skate_scene_mesh *m = &sc->meshes[i];
		const struct mesh_ctx c = {s, a, sc, i, m, d};
		enum rc r;

		m->optimesh = l->v[i].optimesh;
		m->model = l->v[i].model;
		m->table_index = l->v[i].table_index;
		r = load_mesh(&c, l->v[i].material);
		if (r != RC_OK)
			return r;
		if (m->ok) {
			sc->total_vertices += m->vertex_count;
			sc->total_triangles += m->tri_estimate;
		}
	}
	return RC_OK;
}

enum rc skate_scene_load(const struct src *s, const struct arena *a, const char *hierarchy_tsv,
			 struct skate_scene **out, struct diag *diag)
{
	struct skate_scene *sc;
	struct mesh_list l = {0};
	size_t d0 = diag ? diag_count(diag) : 0;
	enum rc r;

	*out = NULL;
	if (!skate_platform_of(a))
		return RC_UNSUPPORTED;
	sc = calloc(1, sizeof *sc);
	if (!sc)
		return RC_NOMEM;
	sc->platform = skate_platform_of(a);
	sc->skeleton_model = SKATE_NONE;
	r = scene_mesh_list(s, a, sc, &l, diag);
	if (r == RC_OK)
		r = skate_hierarchy_build(sc, hierarchy_tsv, diag);
	if (r == RC_OK) {
		report_bones(sc, diag);
		r = scene_meshes(s, a, sc, &l, diag);
	}
	free(l.v);
	free(l.listed);
	if (r != RC_OK) {
		skate_scene_free(sc);
		return r;
	}
	sc->n_problems = diag ? diag_count(diag) - d0 : 0;
	*out = sc;
	return RC_OK;
}
