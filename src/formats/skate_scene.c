/* The whole-arena view of a Skate 3 model PSG: skeleton of the first RenderModelData, every
 * mesh resolved down to its base resources, and the on-demand vertex/skin/triangle decode
 * (spec rw4-arena.md §10 steps 10-11). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/bytes.h"
#include "psgfs/skate_mesh.h"
#include "psgfs/skate_objects.h"
#include "psgfs/skate_platform.h"
#include "skate_int.h"

#define MATERIAL_NAME_MAX 255

static const char *tlabel(const struct arena *a, uint32_t idx, char buf[16])
{
	if (idx >= a->n_dict)
		return "?";
	return rw_type_label(a->dict[idx].type_id, buf);
}

static enum rc read_obj(const struct src *s, const struct arena *a, uint32_t idx, uint8_t **p,
			size_t *n)
{
	*p = NULL;
	*n = 0;
	if (idx >= a->n_dict || !a->dict[idx].readable)
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
	char b1[16], b2[16];
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
			 field, obj, tlabel(a, obj, b2), arena_want_name(want, b2));
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
	if (!a->dict[obj].readable) {
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

static enum rc load_skeleton(const struct src *s, const struct arena *a, struct skate_scene *sc,
			     const struct skate_model *md)
{
	sc->n_bones = md->n_bones;
	sc->bones = xcalloc_n(sc->n_bones, sizeof *sc->bones);
	if (!sc->bones)
		return RC_NOMEM;
	(void)s;
	(void)a;
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

/* Resolve everything one mesh needs; problems make ok false. */
static enum rc load_mesh(const struct src *s, const struct arena *a, struct skate_scene *sc,
			 size_t mi, struct skate_scene_mesh *m, uint32_t table_material,
			 struct diag *d)
{
	struct skate_optimesh om;
	uint8_t *p = NULL;
	size_t n;
	enum rc r;
	uint32_t o = m->optimesh;
	int pos = -1;
	uint32_t bad_pal = 0;

	m->vdes = m->vb = m->ib = m->mesh_helper = m->vb_res = m->ib_res = SKATE_NONE;
	m->pos_elem = -1;
	m->material_obj = SKATE_NONE;
	if (o == SKATE_NONE)
		goto name;
	r = read_obj(s, a, o, &p, &n);
	if (r != RC_OK) {
		diag_add(d, "mesh %zu: object %u (RenderOptiMeshData) unreadable: %s", mi, o,
			 rc_str(r));
		goto name;
	}
	r = skate_optimesh_decode(sc->platform, p, n, a->big_endian, o, &om, d);
	free(p);
	p = NULL;
	if (r == RC_NOMEM)
		return r;
	if (r != RC_OK)
		goto name;

	/* islands and palette */
	m->islands = om.islands;
	m->n_islands = om.n_islands;
	m->palette_raw = om.remap;
	m->n_palette = om.n_remap;
	om.islands = NULL;
	om.remap = NULL;
	m->palette = xcalloc_n(m->n_palette, sizeof *m->palette);
	if (!m->palette) {
		skate_optimesh_free(&om);
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i < m->n_palette; i++) {
		if (m->palette_raw[i] < sc->n_bones) {
			m->palette[i] = m->palette_raw[i];
		} else {
			m->palette[i] = -1;
			if (bad_pal++ < 4)
				diag_add(d,
					 "mesh %zu: object %u (RenderOptiMeshData): palette slot "
					 "%u = bone %u past the skeleton (%u bones), dropped",
					 mi, o, i, m->palette_raw[i], sc->n_bones);
		}
	}
	if (bad_pal > 4)
		diag_add(d, "mesh %zu: %u palette slots past the skeleton in all", mi, bad_pal);

	/* material */
	{
		uint32_t refs[2] = {om.material, table_material};

		for (int k = 0; k < 2 && m->material_obj == SKATE_NONE; k++) {
			uint32_t obj, off;
			enum rc rr = arena_ref_to(a, refs[k], RW_T_RENDERMATERIAL, &obj, &off);

			if (rr == RC_CORRUPT) {
				char b1[16];

				diag_add(d, "mesh %zu: material reference 0x%x -> %u is %s", mi,
					 refs[k], obj, tlabel(a, obj, b1));
				continue;
			}
			if (rr != RC_OK)
				continue;
			m->material_obj = obj;
			m->material_off = off;
			m->material = material_name(s, a, obj, off, d);
			m->material_named = m->material != NULL;
		}
	}

	/* vertex descriptor */
	m->vdes = want_ref(a, om.vdes, RW_T_VDES, false, o, "m_pVertexDescriptor", d);
	if (m->vdes != SKATE_NONE && read_obj(s, a, m->vdes, &p, &n) == RC_OK) {
		m->has_desc =
		    sc->platform->vdes_parse(p, n, a->big_endian, m->vdes, &m->desc, d) == RC_OK;
		free(p);
		p = NULL;
	}
	if (m->has_desc) {
		m->stride = m->desc.stride;
		for (unsigned i = 0; i < m->desc.n_el; i++) {
			const struct skate_elem *e = &m->desc.elem[i];

			if (!e->usable)
				continue;
			if (e->usage == SKATE_USAGE_POSITION && pos < 0) {
				pos = m->pos_elem = (int)i;
				skate_elem_encoding(e, m->pos_encoding);
			}
			if (e->usage == SKATE_USAGE_BLEND_INDICES ||
			    e->usage == SKATE_USAGE_BLEND_WEIGHTS)
				m->skinned = true;
		}
	}

	m->mesh_helper = want_ref(a, om.mesh_helper, RW_T_MESHHELPER, true, o, "m_pMeshHelper", d);

	/* vertex buffer */
	m->vb = want_ref(a, om.vb, RW_T_VB, false, o, "m_pVertexBuffer", d);
	if (m->vb != SKATE_NONE && read_obj(s, a, m->vb, &p, &n) == RC_OK) {
		struct skate_vb vb;

		if (sc->platform->vb_parse(p, n, a->big_endian, m->vb, &vb, d) == RC_OK)
			m->vb_res =
			    want_ref(a, vb.buffer, ARENA_WANT_BASERES, false, m->vb, "m_buffer", d);
		if (m->vb_res != SKATE_NONE) {
			const struct arena_dict_entry *br = &a->dict[m->vb_res];

			if (vb.buffer_size != br->size)
				diag_add(d,
					 "object %u (VertexBuffer): m_bufferSize %u but base "
					 "resource %u holds %u bytes",
					 m->vb, vb.buffer_size, m->vb_res, br->size);
			if (vb.offset > br->size) {
				diag_add(d,
					 "object %u (VertexBuffer): m_offset %u past base resource "
					 "%u (%u bytes)",
					 m->vb, vb.offset, m->vb_res, br->size);
				m->vb_res = SKATE_NONE;
			} else {
				uint32_t bytes = br->size - vb.offset;

				m->vb_start = br->start + vb.offset;
				if (m->stride) {
					m->vertex_count = bytes / m->stride;
					if (bytes % m->stride)
						diag_add(d,
							 "mesh %zu: vertex data of %u bytes is not "
							 "a multiple of stride %u",
							 mi, bytes, m->stride);
				}
			}
		}
		free(p);
		p = NULL;
	}

	/* index buffer */
	m->ib = want_ref(a, om.ib, RW_T_IB, false, o, "m_pIndexBuffer", d);
	if (m->ib != SKATE_NONE && read_obj(s, a, m->ib, &p, &n) == RC_OK) {
		struct skate_ib ib;

		if (sc->platform->ib_parse(p, n, a->big_endian, m->ib, &ib, d) == RC_OK) {
			m->ib_res =
			    want_ref(a, ib.buffer, ARENA_WANT_BASERES, false, m->ib, "m_buffer", d);
			m->index_count = ib.num_indices;
			m->index_width = ib.width;
		}
		if (m->ib_res != SKATE_NONE && m->index_width) {
			const struct arena_dict_entry *br = &a->dict[m->ib_res];

			if (ib.offset > br->size) {
				diag_add(d,
					 "object %u (IndexBuffer): m_offset %u past base resource "
					 "%u (%u bytes)",
					 m->ib, ib.offset, m->ib_res, br->size);
				m->ib_res = SKATE_NONE;
			} else {
				uint32_t fit = (br->size - ib.offset) / m->index_width;

				m->ib_start = br->start + ib.offset;
				m->indices_avail = ib.num_indices < fit ? ib.num_indices : fit;
				if (ib.num_indices > fit)
					diag_add(d,
						 "object %u (IndexBuffer): %u indices of %u bytes "
						 "but base resource %u holds %u",
						 m->ib, ib.num_indices, m->index_width, m->ib_res,
						 fit);
			}
		}
		free(p);
		p = NULL;
	}

	/* islands against the index count */
	m->tri_first = xcalloc_n((size_t)m->n_islands + 1, sizeof *m->tri_first);
	if (!m->tri_first) {
		skate_optimesh_free(&om);
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i < m->n_islands; i++) {
		const struct skate_island *is = &m->islands[i];
		uint64_t end = (uint64_t)is->start + is->count, cnt = is->count;

		m->tri_first[i] = m->tri_estimate;
		if (!is->triangles) {
			diag_add(d, "mesh %zu: island %u primitive %u unsupported (%u = triangles)",
				 mi, i, is->prim, sc->platform->tri_prim);
			continue;
		}
		if (end > m->index_count) {
			diag_add(d, "mesh %zu: island %u indices %u..%llu past numIndices %u", mi,
				 i, is->start, (unsigned long long)end, m->index_count);
		}
		if (is->count % 3)
			diag_add(d, "mesh %zu: island %u index count %u is not a multiple of 3", mi,
				 i, is->count);
		if (end > m->indices_avail)
			cnt = is->start >= m->indices_avail ? 0 : m->indices_avail - is->start;
		m->tri_estimate += cnt / 3;
	}
	m->tri_first[m->n_islands] = m->tri_estimate;

	if (!m->has_desc)
		diag_add(d, "mesh %zu: no usable vertex descriptor", mi);
	else if (pos < 0)
		diag_add(d, "mesh %zu: vertex descriptor %u has no usable position (XYZ) element",
			 mi, m->vdes);
	else if (m->stride == 0)
		diag_add(d, "mesh %zu: vertex stride 0", mi);
	else if (m->vb_res == SKATE_NONE)
		diag_add(d, "mesh %zu: no vertex data", mi);
	else if (m->ib_res == SKATE_NONE || !m->index_width)
		diag_add(d, "mesh %zu: no index data", mi);
	else
		m->ok = true;
	skate_optimesh_free(&om);
name:
	if (!m->material) {
		char buf[32];

		snprintf(buf, sizeof buf, "material_%02zu", mi);
		m->material = strdup(buf);
		if (!m->material)
			return RC_NOMEM;
	}
	return RC_OK;
}

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

struct mesh_src {
	uint32_t optimesh, model, table_index, material;
};

enum rc skate_scene_load(const struct src *s, const struct arena *a, const char *hierarchy_tsv,
			 struct skate_scene **out, struct diag *diag)
{
	struct skate_scene *sc;
	struct mesh_src *ms = NULL;
	size_t n_ms = 0, cap = 0, d0 = diag ? diag_count(diag) : 0;
	bool *listed = NULL;
	enum rc r = RC_OK;

	*out = NULL;
	if (!skate_platform_of(a))
		return RC_UNSUPPORTED;
	sc = calloc(1, sizeof *sc);
	listed = xcalloc_n(a->n_dict, sizeof *listed);
	if (!sc || !listed) {
		r = RC_NOMEM;
		goto fail;
	}
	sc->platform = skate_platform_of(a);
	sc->skeleton_model = SKATE_NONE;
	for (uint32_t i = 0; i < a->n_dict; i++) {
		struct skate_model md;
		uint8_t *p;
		size_t n;
		enum rc pr;

		if (a->dict[i].type_id != RW_T_RENDERMODEL)
			continue;
		sc->n_models++;
		pr = read_obj(s, a, i, &p, &n);
		if (pr != RC_OK) {
			diag_add(diag, "object %u (RenderModelData): unreadable: %s", i,
				 rc_str(pr));
			continue;
		}
		pr = skate_model_decode(p, n, a->big_endian, i, &md, diag);
		free(p);
		if (pr == RC_NOMEM) {
			r = pr;
			goto fail;
		}
		if (pr != RC_OK)
			continue;
		if (sc->skeleton_model == SKATE_NONE) {
			sc->skeleton_model = i;
			r = load_skeleton(s, a, sc, &md);
		} else if (md.n_bones != sc->n_bones) {
			diag_add(diag,
				 "object %u (RenderModelData): %u bones; the skeleton comes from "
				 "object %u (%u bones)",
				 i, md.n_bones, sc->skeleton_model, sc->n_bones);
		}
		for (uint32_t k = 0; r == RC_OK && k < md.n_meshes; k++) {
			struct mesh_src e = {SKATE_NONE, i, k, md.meshes[k].material};

			if (n_ms == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct mesh_src *v = xrealloc_n(ms, nc, sizeof *v);

				if (!v) {
					r = RC_NOMEM;
					break;
				}
				ms = v;
				cap = nc;
			}
			e.optimesh = table_mesh(a, i, k, md.meshes[k].mesh, diag);
			if (e.optimesh != SKATE_NONE)
				listed[e.optimesh] = true;
			ms[n_ms++] = e;
		}
		skate_model_free(&md);
		if (r != RC_OK)
			goto fail;
	}
	for (uint32_t i = 0; i < a->n_dict; i++) {
		if (a->dict[i].type_id != RW_T_OPTIMESH || listed[i])
			continue;
		if (n_ms == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct mesh_src *v = xrealloc_n(ms, nc, sizeof *v);

			if (!v) {
				r = RC_NOMEM;
				goto fail;
			}
			ms = v;
			cap = nc;
		}
		ms[n_ms++] = (struct mesh_src){i, SKATE_NONE, 0, 0};
	}

	r = skate_hierarchy_build(sc, hierarchy_tsv, diag);
	if (r != RC_OK)
		goto fail;
	for (uint32_t i = 0; i < sc->n_bones; i++)
		if (!sc->bones[i].rigid)
			diag_add(diag, "bone %u (\"%.64s\"): inverse bind matrix %s (deviation %g)",
				 i, sc->bones[i].name,
				 sc->bones[i].invertible ? "is not rigid" : "is singular",
				 (double)sc->bones[i].rigid_err);

	sc->meshes = xcalloc_n(n_ms, sizeof *sc->meshes);
	if (!sc->meshes) {
		r = RC_NOMEM;
		goto fail;
	}
	sc->n_meshes = n_ms;
	for (size_t i = 0; i < n_ms; i++) {
		struct skate_scene_mesh *m = &sc->meshes[i];

		m->optimesh = ms[i].optimesh;
		m->model = ms[i].model;
		m->table_index = ms[i].table_index;
		r = load_mesh(s, a, sc, i, m, ms[i].material, diag);
		if (r != RC_OK)
			goto fail;
		if (m->ok) {
			sc->total_vertices += m->vertex_count;
			sc->total_triangles += m->tri_estimate;
		}
	}
	free(ms);
	free(listed);
	sc->n_problems = diag ? diag_count(diag) - d0 : 0;
	*out = sc;
	return RC_OK;
fail:
	free(ms);
	free(listed);
	skate_scene_free(sc);
	return r;
}
