/*
 * A PSK/PSKX mesh as glTF (docs/gltf.md): glTF vertices are PSK wedges, one primitive per
 * material, JOINTS/WEIGHTS from each point's four strongest RAWWEIGHTS, morph targets sparse.
 * Everything is read from the source in batches while rendering; the export keeps per point its
 * influences, per morph its deltas, and checkpoints into the faces and wedges.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "formats/gltf/psk_gltf_int.h"

/* ---- shared with psa_gltf.c ---- */

void psk_gltf_cps_push(struct psk_gltf_cps *c, uint64_t v, bool *oom)
{
	uint64_t *nv = xgrow_n(c->v, c->n, &c->cap, sizeof *nv, 16);

	if (!nv) {
		*oom = true;
		return;
	}
	c->v = nv;
	c->v[c->n++] = v;
}

void psk_gltf_key_trs(size_t bone, const float pos[3], const float rot[4], float t[3], float r[4])
{
	memcpy(t, pos, 3 * sizeof *t);
	memcpy(r, rot, 4 * sizeof *r);
	if (bone > 0) { /* stored conjugated (docs/psk-psa.md, "Quaternions") */
		r[0] = -r[0];
		r[1] = -r[1];
		r[2] = -r[2];
	}
	gltf_quat_norm(r);
	if (bone == 0)
		gltf_zup_root(t, r);
	for (int k = 0; k < 3; k++)
		t[k] = isfinite(t[k]) ? t[k] : 0.0f;
}

size_t psk_gltf_bone_nodes(const struct psk_bone *b, size_t n, struct gltf_node *out)
{
	size_t moved = 0;

	for (size_t i = 0; i < n; i++) {
		struct gltf_node *nd = &out[i];
		int32_t p = b[i].parent;

		memset(nd, 0, sizeof *nd);
		nd->name = (struct gltf_name){b[i].name, PSK_NAME_LEN};
		nd->joint = true;
		nd->s[0] = nd->s[1] = nd->s[2] = 1.0f;
		if (i == 0) {
			nd->parent = -1;
		} else if (p >= 0 && (size_t)p < i) {
			nd->parent = p;
		} else {
			nd->parent = 0; /* a tree needs parents first; orphans hang under bone 0 */
			moved++;
		}
		psk_gltf_key_trs(i, b[i].pos, b[i].rot, nd->t, nd->r);
	}
	return moved;
}

const struct gltf_plan *psk_gltf_plan(const struct psk_gltf *g)
{
	return &g->plan;
}

size_t psk_gltf_bytes(const struct psk_gltf *g)
{
	return g->bytes;
}

void psk_gltf_free(struct psk_gltf *g)
{
	if (!g)
		return;
	gltf_plan_free(&g->plan);
	for (uint32_t i = 0; g->face_cp && i < g->mesh.n_prims; i++)
		free(g->face_cp[i].v);
	for (uint32_t i = 0; g->target_cp && i < g->n_target_cp; i++)
		free(g->target_cp[i].v);
	free(g->face_cp);
	free(g->target_cp);
	free(g->name);
	free(g->nodes);
	free(g->sockets);
	free(g->prims);
	free(g->prim_key);
	free(g->key_prim);
	free(g->mats);
	free(g->skin);
	free(g->targets);
	free(g->deltas);
	free(g->delta_off);
	free(g->anims);
	free(g->pa);
	free(g);
}

/* ---- vertices ---- */

/* A run of the sorted indices is read at once while it spans at most GATHER_RUN points (48 KiB:
 * below the size ASan maps afresh) and no two of its indices are more than GATHER_GAP apart:
 * skipping a few kilobytes costs less than a read more. */
#define GATHER_RUN 4096
#define GATHER_GAP 512

struct gather_at {
	uint32_t idx, i; /* a point, and the slot of out it goes to */
};

static int gather_cmp(const void *x, const void *y)
{
	const struct gather_at *a = x, *b = y;

	return a->idx != b->idx ? (a->idx < b->idx ? -1 : 1) : (a->i > b->i) - (a->i < b->i);
}

/* Points scattered over the span: sorted, read run by run and only those asked decoded, not one
 * read per point (a large PSKX's wedges reach all over its points: one read of 12 bytes each
 * was half of reading its .glb). */
static enum rc gather_scattered(const struct src *s, const struct psk_span *sp, const uint32_t *idx,
				size_t n, struct psk_point *out)
{
	struct gather_at *at = xcalloc_n(n, sizeof *at);
	uint32_t *sorted = xcalloc_n(n, sizeof *sorted);
	struct psk_point *got = xcalloc_n(n, sizeof *got);
	size_t m = 0;
	enum rc r = at && sorted && got ? RC_OK : RC_NOMEM;

	for (size_t i = 0; i < n && r == RC_OK; i++)
		if (idx[i] < sp->n)
			at[m++] = (struct gather_at){idx[i], (uint32_t)i};
	if (r == RC_OK)
		qsort(at, m, sizeof *at, gather_cmp);
	for (size_t k = 0; k < m; k++)
		sorted[k] = at[k].idx;
	for (size_t j = 0, e; j < m && r == RC_OK; j = e) {
		for (e = j + 1; e < m && sorted[e] - sorted[j] < GATHER_RUN &&
				sorted[e] - sorted[e - 1] <= GATHER_GAP;
		     e++)
			;
		r = psk_get_points_at(s, sp, sorted + j, e - j, got + j);
	}
	for (size_t k = 0; k < m && r == RC_OK; k++)
		out[at[k].i] = got[k];
	free(at);
	free(sorted);
	free(got);
	return r;
}

/* Records idx[i] of a span of points (out of range: zeros), in one read when they are close. */
static enum rc gather_points(const struct src *s, const struct psk_span *sp, const uint32_t *idx,
			     size_t n, struct psk_point *out)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	struct psk_point *tmp;
	enum rc r = RC_OK;

	memset(out, 0, n * sizeof *out);
	for (size_t i = 0; i < n; i++)
		if (idx[i] < sp->n) {
			lo = idx[i] < lo ? idx[i] : lo;
			hi = idx[i] > hi ? idx[i] : hi;
		}
	if (lo > hi)
		return RC_OK;
	if ((uint64_t)hi - lo + 1 > 4 * (uint64_t)n + 256)
		return gather_scattered(s, sp, idx, n, out);
	tmp = xcalloc_n((size_t)(hi - lo) + 1, sizeof *tmp);
	if (!tmp)
		return RC_NOMEM;
	r = psk_get_points(s, sp, lo, (size_t)(hi - lo) + 1, tmp);
	for (size_t i = 0; i < n && r == RC_OK; i++)
		if (idx[i] < sp->n)
			out[i] = tmp[idx[i] - lo];
	free(tmp);
	return r;
}

static void put_vec3(float *o, const struct psk_point *p)
{
	o[0] = p->x;
	o[1] = p->y;
	o[2] = p->z;
	gltf_zup_vec(o);
}

/* POSITION, NORMAL per point and SKIN: what each wedge's point has. */
static enum rc fill_by_point(const struct psk_gltf_ctx *c, enum gltf_data what, const uint32_t *pt,
			     size_t n, void *out)
{
	const struct psk_gltf *g = c->g;
	const struct psk_index *ix = g->ix;
	struct psk_point *p;
	enum rc r;

	if (what == GLTF_D_SKIN) {
		struct gltf_influence *f = out;

		for (size_t i = 0; i < n; i++) {
			memset(&f[i], 0, sizeof f[i]);
			if (g->skin && pt[i] < ix->points.n)
				f[i] = g->skin[pt[i]];
			else
				f[i].weight[0] = 1.0f;
		}
		return RC_OK;
	}
	p = xcalloc_n(n ? n : 1, sizeof *p);
	if (!p)
		return RC_NOMEM;
	r = gather_points(c->s, what == GLTF_D_POSITION ? &ix->points : &ix->normals, pt, n, p);
	for (size_t i = 0; i < n && r == RC_OK; i++)
		put_vec3((float *)out + 3 * i, &p[i]);
	free(p);
	return r;
}

/* Attributes stored per wedge: UV sets, colours, normals when there is one per wedge. */
static enum rc fill_by_wedge(const struct psk_gltf_ctx *c, const struct gltf_req *q, uint64_t first,
			     size_t n, const struct psk_wedge *w, void *out)
{
	const struct psk_gltf *g = c->g;
	const struct psk_index *ix = g->ix;
	float *f = out;
	enum rc r = RC_OK;

	if (q->what == GLTF_D_COLOR)
		return psk_get_colors(c->s, &ix->colors, (size_t)first, n, out);
	if (q->what == GLTF_D_NORMAL) {
		struct psk_point *p = xcalloc_n(n ? n : 1, sizeof *p);

		r = p ? psk_get_points(c->s, &ix->normals, (size_t)first, n, p) : RC_NOMEM;
		for (size_t i = 0; i < n && r == RC_OK; i++)
			put_vec3(f + 3 * i, &p[i]);
		free(p);
		return r;
	}
	if (g->uv_src[q->set] >= 0)
		return psk_get_uvs(c->s, &ix->uvs[g->uv_src[q->set]], (size_t)first, n, out);
	for (size_t i = 0; i < n; i++) {
		f[2 * i] = w[i].u;
		f[2 * i + 1] = w[i].v;
	}
	return RC_OK;
}

static enum rc fill_vertices(const struct psk_gltf_ctx *c, const struct gltf_req *q, uint64_t first,
			     size_t n, void *out)
{
	struct psk_wedge *w = xcalloc_n(n ? n : 1, sizeof *w);
	uint32_t *pt = xcalloc_n(n ? n : 1, sizeof *pt);
	bool by_point = q->what == GLTF_D_POSITION || q->what == GLTF_D_SKIN ||
			(q->what == GLTF_D_NORMAL && c->g->normals == 1);
	enum rc r = w && pt ? RC_OK : RC_NOMEM;

	if (r == RC_OK && (by_point || q->what == GLTF_D_TEXCOORD))
		r = psk_get_wedges(c->s, c->g->ix, (size_t)first, n, w);
	for (size_t i = 0; i < n && r == RC_OK; i++)
		pt[i] = w[i].point;
	if (r == RC_OK)
		r = by_point ? fill_by_point(c, q->what, pt, n, out)
			     : fill_by_wedge(c, q, first, n, w, out);
	free(w);
	free(pt);
	return r;
}

/* ---- faces: primitive p's triangles in file order, from the nearest checkpoint ---- */

#define FACE_READ 256 /* faces read at once: a batch of indices rarely needs many more */

static enum rc fill_indices(const struct psk_gltf_ctx *c, uint32_t prim, uint64_t first, size_t n,
			    uint32_t *out)
{
	const struct psk_gltf *g = c->g;
	const struct psk_index *ix = g->ix;
	const struct psk_gltf_cps *cp = &g->face_cp[prim];
	uint64_t tri0 = first / 3, j = tri0 / PG_CP_EVERY, t, face, end = first + n;
	struct psk_face *f = xcalloc_n(FACE_READ, sizeof *f);
	size_t got = 0;
	enum rc r = f ? RC_OK : RC_NOMEM;

	if (r == RC_OK && j >= cp->n)
		r = RC_BOUNDS;
	t = j * PG_CP_EVERY;
	face = r == RC_OK ? cp->v[j] : 0;
	while (r == RC_OK && got < n && face < ix->faces.n) {
		size_t k = ix->faces.n - face < FACE_READ ? ix->faces.n - face : FACE_READ;

		r = psk_get_faces(c->s, ix, (size_t)face, k, f);
		for (size_t i = 0; r == RC_OK && i < k && got < n; i++) {
			/* PSK fronts are clockwise, glTF's counter-clockwise. */
			uint32_t v[3] = {f[i].wedge[0], f[i].wedge[2], f[i].wedge[1]};

			if (!psk_gltf_face_ok(&f[i], ix->wedges.n) ||
			    psk_gltf_face_key(&f[i], ix->n_materials) != g->prim_key[prim])
				continue;
			for (uint64_t e = 0; e < 3; e++)
				if (t * 3 + e >= first && t * 3 + e < end)
					out[got++] = v[e];
			t++;
		}
		face += k;
	}
	free(f);
	return r == RC_OK && got < n ? RC_CORRUPT : r;
}

/* ---- morph targets: wedges whose point the morph moves, in wedge order ---- */

static const struct psk_gltf_delta *find_delta(const struct psk_gltf *g, uint32_t t, uint32_t point)
{
	size_t lo = g->delta_off[t], hi = g->delta_off[t + 1];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->deltas[mid].point == point)
			return &g->deltas[mid];
		if (g->deltas[mid].point < point)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static enum rc fill_target(const struct psk_gltf_ctx *c, const struct gltf_req *q, uint64_t first,
			   size_t n, void *out)
{
	const struct psk_gltf *g = c->g;
	const struct psk_gltf_cps *cp = &g->target_cp[q->set];
	uint64_t j = first / PG_CP_EVERY, k, w;
	struct psk_wedge *wb = xcalloc_n(GLTF_BATCH, sizeof *wb);
	size_t got = 0;
	enum rc r = wb ? RC_OK : RC_NOMEM;

	if (r == RC_OK && j >= cp->n)
		r = RC_BOUNDS;
	k = j * PG_CP_EVERY;
	w = r == RC_OK ? cp->v[j] : 0;
	while (r == RC_OK && got < n && w < g->ix->wedges.n) {
		size_t m = g->ix->wedges.n - w < GLTF_BATCH ? g->ix->wedges.n - w : GLTF_BATCH;

		r = psk_get_wedges(c->s, g->ix, (size_t)w, m, wb);
		for (size_t i = 0; r == RC_OK && i < m && got < n; i++) {
			const struct psk_gltf_delta *d = find_delta(g, q->set, wb[i].point);

			if (!d || k++ < first)
				continue;
			if (q->what == GLTF_D_TARGET_INDEX)
				((uint32_t *)out)[got] = (uint32_t)(w + i);
			else
				memcpy((float *)out + 3 * got,
				       q->what == GLTF_D_TARGET_POSITION ? d->pos : d->nrm,
				       3 * sizeof(float));
			got++;
		}
		w += m;
	}
	free(wb);
	return r == RC_OK && got < n ? RC_CORRUPT : r;
}

enum rc psk_gltf_psk_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct psk_gltf_ctx *c = ctx;

	switch (q->what) {
	case GLTF_D_INDEX:
		return fill_indices(c, q->set, first, n, out);
	case GLTF_D_TARGET_INDEX:
	case GLTF_D_TARGET_POSITION:
	case GLTF_D_TARGET_NORMAL:
		return fill_target(c, q, first, n, out);
	case GLTF_D_POSITION:
	case GLTF_D_NORMAL:
	case GLTF_D_TEXCOORD:
	case GLTF_D_COLOR:
	case GLTF_D_SKIN:
		return fill_vertices(c, q, first, n, out);
	default:
		return RC_INVAL;
	}
}

enum rc psk_gltf_render(const struct psk_gltf *g, const struct src *s,
			const struct psk_gltf_cache *cache, unsigned part, uint64_t first,
			struct emit *e)
{
	struct psk_gltf_ctx c = {g, s, cache};

	return gltf_render(&g->plan, &c, part, first, e);
}
