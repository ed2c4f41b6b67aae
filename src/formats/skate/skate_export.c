/*
 * A Skate scene prepared for export (include/psgfs/formats/skate_export.h), and its PSK records:
 * points/wedges per vertex, faces with clockwise winding, bones parents-first with
 * parent-relative transforms in PSK's quaternion convention (root plain, children
 * conjugated), normalised RAWWEIGHTS (docs/psk-psa.md, "Writer profile (psgfs)").
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/psk.h"
#include "psgfs/formats/skate_export.h"
#include "psgfs/formats/skate_mesh.h"

/* Printable ASCII names, <= 63 bytes, zero-filled (docs/psk-psa.md, "Names"). */
static void psk_name(char dst[PSK_NAME_LEN], const char *src, const char *fallback)
{
	size_t n = 0;

	memset(dst, 0, PSK_NAME_LEN);
	for (; *src && n < PSK_NAME_LEN - 1; src++) {
		unsigned char c = (unsigned char)*src;

		dst[n++] =
		    (char)((isalnum(c) || c == '_' || c == '-' || c == '.' || c == ' ') ? c : '_');
	}
	if (n == 0)
		snprintf(dst, PSK_NAME_LEN, "%s", fallback);
}

/* ---- parents-first bone order: smallest ready index first (a binary min-heap) ---- */

static void heap_push(uint32_t *h, uint32_t *n, uint32_t v)
{
	uint32_t i = (*n)++;

	while (i && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *n)
{
	uint32_t top = h[0], v = h[--(*n)], i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
	return top;
}

/* order[k] = scene bone exported at k; pos[b] = export index of bone b. */
static bool bone_order(const struct skate_scene *sc, uint32_t *order, uint32_t *pos)
{
	uint32_t n = sc->n_bones, nh = 0, k = 0;
	uint32_t *first = xcalloc_n((size_t)n + 1, sizeof *first);
	uint32_t *kids = xcalloc_n(n, sizeof *kids);
	uint32_t *fill = xcalloc_n(n, sizeof *fill);
	uint32_t *heap = xcalloc_n(n, sizeof *heap);
	bool ok = first && kids && fill && heap;

	if (!ok)
		goto out;
	for (uint32_t b = 0; b < n; b++) {
		int32_t p = sc->bones[b].parent;

		if (p >= 0 && (uint32_t)p < n && (uint32_t)p != b)
			first[p + 1]++;
	}
	for (uint32_t b = 0; b < n; b++)
		first[b + 1] += first[b];
	for (uint32_t b = 0; b < n; b++) {
		int32_t p = sc->bones[b].parent;

		if (p >= 0 && (uint32_t)p < n && (uint32_t)p != b)
			kids[first[p] + fill[p]++] = b;
	}
	for (uint32_t b = 0; b < n; b++)
		pos[b] = UINT32_MAX;
	for (uint32_t b = 0; b < n; b++) {
		int32_t p = sc->bones[b].parent;

		if (p < 0 || (uint32_t)p >= n || (uint32_t)p == b)
			heap_push(heap, &nh, b);
	}
	while (k < n) {
		uint32_t b;

		if (!nh) {
			/* unreachable after cycle repair; keep going rather than lose bones */
			for (b = 0; b < n && pos[b] != UINT32_MAX; b++)
				;
			heap_push(heap, &nh, b);
		}
		b = heap_pop(heap, &nh);
		if (pos[b] != UINT32_MAX)
			continue;
		pos[b] = k;
		order[k++] = b;
		for (uint32_t i = first[b]; i < first[b + 1]; i++)
			if (pos[kids[i]] == UINT32_MAX)
				heap_push(heap, &nh, kids[i]);
	}
out:
	free(first);
	free(kids);
	free(fill);
	free(heap);
	return ok;
}

struct name_sort {
	const char *name;
	uint32_t idx;
};

static int name_sort_cmp(const void *x, const void *y)
{
	const struct name_sort *a = x, *b = y;
	int c = strcasecmp(a->name, b->name);

	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* Bone names must be unique ignoring case: later duplicates get "_<index>". */
static bool unique_names(struct skate_export_bone *bones, size_t n)
{
	struct name_sort *v = xcalloc_n(n, sizeof *v);

	if (!v)
		return false;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct name_sort){bones[i].name, (uint32_t)i};
	qsort(v, n, sizeof *v, name_sort_cmp);
	const char *run = n ? v[0].name : NULL; /* first (kept) name of a run of equals */

	for (size_t i = 1; i < n; i++)
		if (strcasecmp(v[i].name, run)) {
			run = v[i].name;
		} else {
			char *nm = bones[v[i].idx].name;
			char suf[16];
			size_t sl = (size_t)snprintf(suf, sizeof suf, "_%u", v[i].idx);
			size_t l = strnlen(nm, PSK_NAME_LEN);

			if (l + sl > PSK_NAME_LEN - 1)
				l = PSK_NAME_LEN - 1 - sl;
			memcpy(nm + l, suf, sl + 1);
		}
	free(v);
	return true;
}

/* ---- bones ---- */

static void qconj(const float q[4], float o[4])
{
	o[0] = -q[0];
	o[1] = -q[1];
	o[2] = -q[2];
	o[3] = q[3];
}

static const float rot_x90[4] = {0.70710678f, 0, 0, 0.70710678f}; /* +90 deg about X */

/* World bind poses in the export axes, by scene bone. */
static void world_poses(const struct skate_scene *sc, bool zup, float (*gt)[3], float (*gq)[4])
{
	for (uint32_t b = 0; b < sc->n_bones; b++) {
		const struct skate_bone *sb = &sc->bones[b];

		if (zup) {
			skate_quat_rotate(rot_x90, sb->t, gt[b]);
			skate_quat_mul(rot_x90, sb->q, gq[b]);
		} else {
			memcpy(gt[b], sb->t, sizeof gt[b]);
			memcpy(gq[b], sb->q, sizeof gq[b]);
		}
	}
}

/* A transform (t, q) relative to its parent's (pt, pq; NULL for a root). */
static void local_of(const float t[3], const float q[4], const float *pt, const float *pq,
		     float lt[3], float lq[4])
{
	float iq[4], d[3];

	if (!pt) {
		memcpy(lt, t, 3 * sizeof *lt);
		memcpy(lq, q, 4 * sizeof *lq);
		return;
	}
	qconj(pq, iq);
	for (int i = 0; i < 3; i++)
		d[i] = t[i] - pt[i];
	skate_quat_rotate(iq, d, lt);
	skate_quat_mul(iq, q, lq);
}

/* Export bone k from scene bone b, hanging from export bone p (or none). */
static void set_bone(struct skate_export_bone *xb, const struct skate_scene *sc, uint32_t b,
		     const float t[3], const float q[4], const struct skate_export_bone *parent,
		     int32_t p)
{
	char fb[24];

	snprintf(fb, sizeof fb, "bone_%u", b);
	psk_name(xb->name, sc->bones[b].name ? sc->bones[b].name : "", fb);
	xb->scene = b;
	xb->parent = p;
	memcpy(xb->world_t, t, sizeof xb->world_t);
	memcpy(xb->world_q, q, sizeof xb->world_q);
	local_of(t, q, parent ? parent->world_t : NULL, parent ? parent->world_q : NULL,
		 xb->local_t, xb->local_q);
}

void skate_export_bone_model_local(const struct skate_scene *sc, const struct skate_export_model *m,
				   uint32_t k, float t[3], float q[4])
{
	const struct skate_export_bone *b = &m->bones[k];
	const struct skate_bone *sb, *pb = NULL;

	if (b->scene >= sc->n_bones) { /* the synthesized root */
		memset(t, 0, 3 * sizeof *t);
		memcpy(q, (const float[4]){0, 0, 0, 1}, 4 * sizeof *q);
		return;
	}
	sb = &sc->bones[b->scene];
	if (b->parent >= 0 && m->bones[b->parent].scene < sc->n_bones)
		pb = &sc->bones[m->bones[b->parent].scene];
	local_of(sb->t, sb->q, pb ? pb->t : NULL, pb ? pb->q : NULL, t, q);
}

static enum rc build_bones(const struct skate_scene *sc, struct skate_export_model *m)
{
	uint32_t n = sc->n_bones;
	uint32_t *order;
	float(*gt)[3], (*gq)[4];
	enum rc r = RC_OK;

	if (n == 0) {
		m->bones = calloc(1, sizeof *m->bones);
		if (!m->bones)
			return RC_NOMEM;
		m->n_bones = 1;
		psk_name(m->bones[0].name, "root", "root");
		m->bones[0].scene = SKATE_NONE;
		m->bones[0].parent = -1;
		m->bones[0].world_q[3] = m->bones[0].local_q[3] = 1;
		return RC_OK;
	}
	order = xcalloc_n(n, sizeof *order);
	gt = xcalloc_n(n, sizeof *gt);
	gq = xcalloc_n(n, sizeof *gq);
	m->bones = xcalloc_n(n, sizeof *m->bones);
	m->pos = xcalloc_n(n, sizeof *m->pos);
	if (!order || !gt || !gq || !m->bones || !m->pos || !bone_order(sc, order, m->pos)) {
		r = RC_NOMEM;
		goto out;
	}
	m->n_bones = n;
	world_poses(sc, m->zup, gt, gq);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t b = order[k];
		int32_t sp = sc->bones[b].parent;
		/* extra roots hang from the export root */
		uint32_t p = k == 0						  ? UINT32_MAX
			     : (sp >= 0 && (uint32_t)sp < n && (uint32_t)sp != b) ? m->pos[sp]
										  : 0;

		set_bone(&m->bones[k], sc, b, gt[b], gq[b], p == UINT32_MAX ? NULL : &m->bones[p],
			 p == UINT32_MAX ? -1 : (int32_t)p);
		if (p != UINT32_MAX)
			m->bones[p].children++;
	}
	if (!unique_names(m->bones, n))
		r = RC_NOMEM;
out:
	free(order);
	free(gt);
	free(gq);
	return r;
}

/* ---- meshes ---- */

/* Where each usage sits among the mesh's usable elements (as vertex batches give them). */
static void find_elems(const struct skate_scene_mesh *sm, struct skate_export_mesh *xm)
{
	int k = 0;

	xm->pos = xm->normal = xm->color = -1;
	for (unsigned i = 0; i < SKX_MAX_UV; i++)
		xm->uv[i] = -1;
	for (unsigned i = 0; i < sm->desc.n_el && i < SKATE_MAX_ELEMS; i++) {
		const struct skate_elem *e = &sm->desc.elem[i];

		if (!e->usable)
			continue;
		if (e->usage == SKATE_USAGE_POSITION && xm->pos < 0)
			xm->pos = k;
		else if (e->usage == SKATE_USAGE_NORMAL && xm->normal < 0)
			xm->normal = k;
		else if (e->usage == SKATE_USAGE_COLOR && xm->color < 0)
			xm->color = k;
		else if (e->usage == SKATE_USAGE_TEXCOORD && e->set < SKX_MAX_UV &&
			 xm->uv[e->set] < 0)
			xm->uv[e->set] = k;
		k++;
	}
}

/* Weight records per vertex: as many influences as the skin rules can give it. */
static unsigned influence_slots(const struct skate_scene_mesh *sm)
{
	unsigned idx = 0, wts = 0;

	for (unsigned i = 0; i < sm->desc.n_el && i < SKATE_MAX_ELEMS; i++) {
		const struct skate_elem *e = &sm->desc.elem[i];

		if (!e->usable)
			continue;
		if (e->usage == SKATE_USAGE_BLEND_INDICES && !idx)
			idx = e->n_out;
		else if (e->usage == SKATE_USAGE_BLEND_WEIGHTS && !wts)
			wts = e->n_out;
	}
	idx = idx ? idx : wts; /* weights alone: one slot each */
	return idx == 0 ? 1 : idx > 4 ? 4 : idx;
}

/* Add scene mesh mi as the next exported mesh; false (with a line) when it is left out. */
static enum rc add_mesh(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			struct skate_export_model *m, uint32_t mi)
{
	const struct skate_scene_mesh *sm = &sc->meshes[mi];
	struct skate_export_mesh *xm = &m->meshes[m->n_meshes];
	char fb[40];
	enum rc r;

	if (!sm->ok) {
		diag_add(&m->skipped, "export: mesh %02u left out: it cannot be decoded", mi);
		return RC_OK;
	}
	if (m->n_materials >= SKX_MAX_MATERIALS) {
		diag_add(&m->skipped, "export: mesh %02u left out: past the %u-material limit", mi,
			 SKX_MAX_MATERIALS);
		return RC_OK;
	}
	memset(xm, 0, sizeof *xm);
	xm->scene = mi;
	xm->n_verts = sm->vertex_count;
	find_elems(sm, xm);
	if (xm->pos < 0) {
		diag_add(&m->skipped, "export: mesh %02u left out: no usable positions", mi);
		return RC_OK;
	}
	if (m->with_stats) {
		r = skate_mesh_stats_build(s, a, sc, mi, &xm->st, NULL);
		if (r == RC_NOMEM)
			return r;
		if (r != RC_OK) {
			diag_add(&m->skipped,
				 "export: mesh %02u left out: its data cannot be read (%s)", mi,
				 rc_str(r));
			return RC_OK;
		}
	}
	xm->slots = influence_slots(sm);
	xm->n_faces = sm->tri_estimate;
	xm->face_base = m->n_faces;
	xm->weight_base = m->n_weights;
	m->n_faces += xm->n_faces;
	m->n_weights += (uint64_t)xm->n_verts * xm->slots;
	xm->material = m->n_materials;
	snprintf(fb, sizeof fb, "material_%02u", mi);
	psk_name(m->materials[m->n_materials++], sm->material ? sm->material : "", fb);
	xm->vert_base = m->n_verts;
	m->n_verts += xm->n_verts;
	m->all_normals &= xm->normal >= 0;
	m->any_colors |= xm->color >= 0;
	for (unsigned u = 0; u < SKX_MAX_UV; u++)
		if (xm->uv[u] >= 0 && u + 1 > m->n_uv_sets)
			m->n_uv_sets = u + 1;
	m->n_meshes++;
	return RC_OK;
}

enum rc skate_export_build(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			   bool zup, bool with_stats, struct skate_export_model **out)
{
	struct skate_export_model *m = calloc(1, sizeof *m);
	enum rc r = m ? RC_OK : RC_NOMEM;

	*out = NULL;
	if (m) {
		diag_init(&m->skipped);
		m->zup = zup;
		m->with_stats = with_stats;
		m->all_normals = true;
		m->meshes = xcalloc_n(sc->n_meshes ? sc->n_meshes : 1, sizeof *m->meshes);
		m->materials = xcalloc_n(SKX_MAX_MATERIALS, sizeof *m->materials);
		if (!m->meshes || !m->materials)
			r = RC_NOMEM;
	}
	if (r == RC_OK)
		r = build_bones(sc, m);
	for (size_t i = 0; r == RC_OK && i < sc->n_meshes && i < UINT32_MAX; i++)
		r = add_mesh(s, a, sc, m, (uint32_t)i);
	if (r == RC_OK && m->n_meshes == 0)
		m->all_normals = false;
	if (r == RC_OK && m->n_materials == 0) /* every PSK has at least one material */
		psk_name(m->materials[m->n_materials++], "material_00", "material_00");
	if (r != RC_OK) {
		skate_export_free(m);
		return r;
	}
	*out = m;
	return RC_OK;
}

void skate_export_free(struct skate_export_model *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->n_meshes; i++)
		skate_mesh_stats_free(m->meshes[i].st);
	free(m->meshes);
	free(m->materials);
	free(m->bones);
	free(m->pos);
	diag_free(&m->skipped);
	free(m);
}

size_t skate_export_bytes(const struct skate_export_model *m)
{
	size_t b = sizeof *m + m->n_bones * (sizeof *m->bones + sizeof *m->pos) +
		   m->n_meshes * sizeof *m->meshes + SKX_MAX_MATERIALS * PSK_NAME_LEN;

	for (uint32_t i = 0; i < m->n_meshes; i++)
		if (m->meshes[i].st)
			b +=
			    (m->meshes[i].st->n_tri_restart + 2 * m->meshes[i].st->n_vert_restart) *
			    sizeof(uint64_t);
	return b;
}

/* The mesh whose range [base(k), base(k) + len(k)) holds i: the last with base <= i. */
#define MESH_OF(fn, base)                                                                          \
	uint32_t fn(const struct skate_export_model *m, uint64_t i)                                \
	{                                                                                          \
		uint32_t lo = 0, hi = m->n_meshes;                                                 \
                                                                                                   \
		while (hi - lo > 1) {                                                              \
			uint32_t mid = lo + (hi - lo) / 2;                                         \
                                                                                                   \
			if (m->meshes[mid].base <= i)                                              \
				lo = mid;                                                          \
			else                                                                       \
				hi = mid;                                                          \
		}                                                                                  \
		return lo;                                                                         \
	}

MESH_OF(skate_export_mesh_of_vertex, vert_base)
MESH_OF(skate_export_mesh_of_face, face_base)
MESH_OF(skate_export_mesh_of_weight, weight_base)

void skate_export_axes(const struct skate_export_model *m, const float in[3], float out[3])
{
	float x = in[0], y = in[1], z = in[2];

	out[0] = x;
	out[1] = m->zup ? -z : y;
	out[2] = m->zup ? y : z;
}

void skate_export_psk_counts(const struct skate_export_model *m, bool pskx, struct psk_counts *k)
{
	memset(k, 0, sizeof *k);
	k->points = k->wedges = m->n_verts;
	k->faces = m->n_faces;
	k->materials = m->n_materials;
	k->bones = m->n_bones;
	k->weights = m->n_weights;
	if (!pskx)
		return;
	if (m->all_normals)
		k->normals = m->n_verts;
	if (m->any_colors)
		k->colors = m->n_verts;
	for (unsigned u = 1; u < m->n_uv_sets && u - 1 < PSK_MAX_EXTRA_UVS; u++)
		k->uvs[u - 1] = m->n_verts;
}

/* ---- PSK records ---- */

struct rec_ctx {
	const struct src *s;
	const struct arena *a;
	const struct skate_scene *sc;
	const struct skate_export_model *m;
	struct skate_vbatch vb;
	uint32_t vb_mesh; /* exported mesh the batch belongs to, UINT32_MAX: none */
	struct skate_tbatch tb;
};

/* Vertex v of exported mesh k, decoded (index into the batch), loading batches as needed. */
static enum rc vertex_at(struct rec_ctx *c, uint32_t k, uint32_t v, uint32_t *at)
{
	const struct skate_export_mesh *xm = &c->m->meshes[k];
	enum rc r;

	if (c->vb_mesh != k || v < c->vb.first || v >= c->vb.first + c->vb.count) {
		const struct skate_scene_mesh *sm = &c->sc->meshes[xm->scene];

		c->vb_mesh = UINT32_MAX;
		r = skate_mesh_read_vertices(c->s, c->a, c->sc, xm->scene, v, skate_vbatch_cap(sm),
					     &c->vb);
		if (r != RC_OK)
			return r;
		if (c->vb.count == 0)
			return RC_IO;
		c->vb_mesh = k;
	}
	*at = v - c->vb.first;
	return RC_OK;
}

static const float *elem_val(const struct rec_ctx *c, int el, uint32_t at)
{
	return c->vb.v[el] + (size_t)at * c->vb.elem[el].n_out;
}

static void put_vertex_rec(struct rec_ctx *c, const struct ax_chunk *ch, uint32_t k, uint32_t at,
			   uint64_t i, struct buf *b)
{
	const struct skate_export_mesh *xm = &c->m->meshes[k];
	float v3[3] = {0, 0, 0}, o[3];
	const float *f;
	int el;

	switch (ch->rec) {
	case AX_PNTS:
	case AX_NORMS:
		el = ch->rec == AX_PNTS ? xm->pos : xm->normal;
		if (el >= 0) {
			f = elem_val(c, el, at);
			for (unsigned j = 0; j < 3 && j < c->vb.elem[el].n_out; j++)
				v3[j] = f[j];
		}
		skate_export_axes(c->m, v3, o);
		psk_put_point(b, &(struct psk_point){o[0], o[1], o[2]});
		return;
	case AX_VTXW: {
		struct psk_wedge w = {.point = (uint32_t)i, .mat = (uint8_t)xm->material};

		if (xm->uv[0] >= 0) {
			f = elem_val(c, xm->uv[0], at);
			w.u = f[0];
			w.v = c->vb.elem[xm->uv[0]].n_out > 1 ? f[1] : 0;
		}
		psk_put_wedge(b, &w);
		return;
	}
	case AX_COLOR: {
		uint8_t rgba[4] = {255, 255, 255, 255};

		if (xm->color >= 0) {
			f = elem_val(c, xm->color, at);
			for (unsigned j = 0; j < 4 && j < c->vb.elem[xm->color].n_out; j++) {
				float x = f[j] * 255.0f + 0.5f;

				rgba[j] = (uint8_t)(x > 255 ? 255 : x > 0 ? x : 0);
			}
		}
		psk_put_color(b, &(struct psk_color){rgba[0], rgba[1], rgba[2], rgba[3]});
		return;
	}
	default: { /* extra UV set */
		unsigned set = (unsigned)(ch->rec - AX_UV0) + 1;
		struct psk_uv uv = {0, 0};

		el = set < SKX_MAX_UV ? xm->uv[set] : -1;
		if (el >= 0) {
			f = elem_val(c, el, at);
			uv.u = f[0];
			uv.v = c->vb.elem[el].n_out > 1 ? f[1] : 0;
		}
		psk_put_uv(b, &uv);
	}
	}
}

/* Records with one per exported vertex: points, wedges, normals, colours, extra UVs; a
 * batch of vertices at a time. */
static enum rc vertex_records(struct rec_ctx *c, const struct ax_chunk *ch, uint64_t first,
			      struct emit *e)
{
	uint64_t i = first;
	enum rc r = RC_OK;

	while (i < ch->n && r == RC_OK) {
		uint32_t k = skate_export_mesh_of_vertex(c->m, i), at;

		r = vertex_at(c, k, (uint32_t)(i - c->m->meshes[k].vert_base), &at);
		for (; r == RC_OK && at < c->vb.count; at++, i++) {
			put_vertex_rec(c, ch, k, at, i, &e->b);
			if (!emit_item(e))
				return RC_OK;
		}
	}
	return r;
}

/* Every raw triple is a face; one naming a vertex past the count becomes degenerate. */
static enum rc face_records(struct rec_ctx *c, const struct ax_chunk *ch, uint64_t first,
			    struct emit *e)
{
	const struct skate_export_model *m = c->m;
	bool more = true;
	enum rc r = RC_OK;
	uint64_t i = first;

	while (more && i < ch->n && r == RC_OK) {
		uint32_t mk = skate_export_mesh_of_face(m, i);
		const struct skate_export_mesh *xm = &m->meshes[mk];
		uint64_t raw = i - xm->face_base, n = xm->n_faces - raw;

		r = skate_mesh_read_triangles(c->s, c->a, c->sc, xm->scene, raw,
					      n < SKATE_TBATCH_MAX ? (uint32_t)n : SKATE_TBATCH_MAX,
					      &c->tb);
		if (r == RC_OK && c->tb.count == 0)
			r = RC_IO;
		for (uint32_t t = 0; r == RC_OK && t < c->tb.count && more; t++) {
			const struct skate_tri *tr = &c->tb.tri[t];
			struct psk_face f = {.mat = (uint8_t)xm->material, .smoothing = 1};

			/* PSK triangles are clockwise: a c b */
			f.wedge[0] = (uint32_t)(xm->vert_base + (tr->valid ? tr->v[0] : 0));
			f.wedge[1] = (uint32_t)(xm->vert_base + (tr->valid ? tr->v[2] : 0));
			f.wedge[2] = (uint32_t)(xm->vert_base + (tr->valid ? tr->v[1] : 0));
			psk_put_face(&e->b, &f, ch->rec == AX_FACE32);
			more = emit_item(e);
			i++;
		}
	}
	return r;
}

/* Weight record `slot` of a vertex: an influence, 1 on the root for the first slot of a
 * vertex without any, else weight 0 (on its first bone, so no new bone is named). */
static struct psk_weight vertex_weight(const struct rec_ctx *c, uint32_t at, uint64_t point,
				       unsigned slot)
{
	const struct skate_export_model *m = c->m;
	uint8_t ni = c->vb.n_infl[at];
	unsigned j = slot < ni ? slot : 0;
	uint32_t gb = ni ? c->vb.infl[at][j].bone : UINT32_MAX;
	int32_t bone = m->pos && gb < c->sc->n_bones ? (int32_t)m->pos[gb] : 0;

	if (ni == 0)
		return (struct psk_weight){slot == 0 ? 1.0f : 0.0f, (int32_t)point, 0};
	return (struct psk_weight){slot < ni ? c->vb.infl[at][slot].weight : 0.0f, (int32_t)point,
				   bone};
}

static enum rc weight_records(struct rec_ctx *c, const struct ax_chunk *ch, uint64_t first,
			      struct emit *e)
{
	const struct skate_export_model *m = c->m;
	uint64_t i = first;
	enum rc r = RC_OK;

	while (i < ch->n && r == RC_OK) {
		uint32_t mk = skate_export_mesh_of_weight(m, i), at;
		const struct skate_export_mesh *xm = &m->meshes[mk];
		uint64_t local = i - xm->weight_base;
		uint32_t v = (uint32_t)(local / xm->slots);
		unsigned slot = (unsigned)(local % xm->slots);

		r = vertex_at(c, mk, v, &at);
		for (; r == RC_OK && at < c->vb.count; at++, v++, slot = 0) {
			for (; slot < xm->slots; slot++, i++) {
				struct psk_weight w = vertex_weight(c, at, xm->vert_base + v, slot);

				psk_put_weight(&e->b, &w);
				if (!emit_item(e))
					return RC_OK;
			}
		}
	}
	return r;
}

static enum rc bone_records(const struct skate_export_model *m, const struct ax_chunk *ch,
			    uint64_t first, struct emit *e)
{
	for (uint64_t i = first; i < ch->n && i < m->n_bones; i++) {
		const struct skate_export_bone *xb = &m->bones[i];
		struct psk_bone pb;

		memset(&pb, 0, sizeof pb);
		memcpy(pb.name, xb->name, PSK_NAME_LEN);
		pb.num_children = (int32_t)xb->children;
		pb.parent = xb->parent < 0 ? 0 : xb->parent;
		memcpy(pb.pos, xb->local_t, sizeof pb.pos);
		if (i == 0)
			memcpy(pb.rot, xb->local_q, sizeof pb.rot); /* root: plain */
		else
			qconj(xb->local_q, pb.rot); /* children: conjugated */
		psk_put_bone(&e->b, &pb);
		if (!emit_item(e))
			break;
	}
	return RC_OK;
}

static enum rc material_records(const struct skate_export_model *m, const struct ax_chunk *ch,
				uint64_t first, struct emit *e)
{
	for (uint64_t i = first; i < ch->n && i < m->n_materials; i++) {
		struct psk_material mt;

		memset(&mt, 0, sizeof mt);
		memcpy(mt.name, m->materials[i], PSK_NAME_LEN);
		mt.texture_index = (int32_t)i;
		psk_put_material(&e->b, &mt);
		if (!emit_item(e))
			break;
	}
	return RC_OK;
}

/* The vertex elements a chunk's records are made of. */
static uint32_t want_of(enum ax_rec rec)
{
	switch (rec) {
	case AX_PNTS:
		return 1u << SKATE_USAGE_POSITION;
	case AX_NORMS:
		return 1u << SKATE_USAGE_NORMAL;
	case AX_COLOR:
		return 1u << SKATE_USAGE_COLOR;
	case AX_WEIGHTS:
		return 1u << SKATE_USAGE_BLEND_INDICES | 1u << SKATE_USAGE_BLEND_WEIGHTS;
	default: /* wedges and extra UV sets */
		return 1u << SKATE_USAGE_TEXCOORD;
	}
}

enum rc skate_export_psk_records(const struct src *s, const struct arena *a,
				 const struct skate_scene *sc, const struct skate_export_model *m,
				 const struct ax_chunk *ch, uint64_t first, struct emit *e)
{
	struct rec_ctx c = {s, a, sc, m, {0}, UINT32_MAX, {0}};
	enum rc r;

	switch (ch->rec) {
	case AX_SKEL:
		return bone_records(m, ch, first, e);
	case AX_MATT:
		return material_records(m, ch, first, e);
	default:
		break;
	}
	skate_vbatch_init(&c.vb);
	skate_tbatch_init(&c.tb);
	c.vb.want = want_of(ch->rec);
	if (ch->rec == AX_FACE16 || ch->rec == AX_FACE32)
		r = face_records(&c, ch, first, e);
	else if (ch->rec == AX_WEIGHTS)
		r = weight_records(&c, ch, first, e);
	else
		r = vertex_records(&c, ch, first, e);
	skate_vbatch_free(&c.vb);
	skate_tbatch_free(&c.tb);
	return r;
}

/* ---- the whole file in memory ---- */

enum rc skate_export_psk(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			 bool zup, struct buf *out, bool *is_pskx)
{
	struct skate_export_model *m;
	struct psk_counts k;
	struct ax_plan p;
	enum rc r = skate_export_build(s, a, sc, zup, true, &m);

	if (r != RC_OK)
		return r;
	skate_export_psk_counts(m, false, &k);
	r = psk_plan(&k, &p);
	for (unsigned i = 0; i < p.n && r == RC_OK; i++) {
		struct emit e;

		ax_put_header(out, &p.c[i]);
		if (p.c[i].n == 0)
			continue;
		emit_init_window(&e, 0, SIZE_MAX);
		r = skate_export_psk_records(s, a, sc, m, &p.c[i], 0, &e);
		buf_put(out, e.b.data, e.b.len);
		emit_free(&e);
	}
	if (is_pskx)
		*is_pskx = m->n_verts > 65536;
	skate_export_free(m);
	return r == RC_OK && out->oom ? RC_NOMEM : r;
}
