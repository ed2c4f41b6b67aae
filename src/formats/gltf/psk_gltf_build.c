/*
 * Building a PSK's glTF export (docs/gltf.md): one streaming pass each over the faces (counts
 * and checkpoints per material), the weights (each point's four strongest influences) and,
 * with morphs, the wedges (which wedges each morph moves); then bounds and the plan.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "formats/gltf/psk_gltf_int.h"

#define MAX_TARGET_REFS 65536 /* morph targets x primitives: each primitive lists every target */
#define BATCH		4096

/* ---- faces ---- */

struct face_scan {
	uint64_t count[PG_N_KEYS];
	struct psk_gltf_cps cps[PG_N_KEYS];
	size_t dropped, no_material;
	bool oom;
};

static enum rc scan_faces(const struct src *s, const struct psk_index *ix, struct face_scan *fs)
{
	struct psk_face *f = xcalloc_n(BATCH, sizeof *f);
	enum rc r = f ? RC_OK : RC_NOMEM;

	for (size_t at = 0; r == RC_OK && at < ix->faces.n; at += BATCH) {
		size_t n = ix->faces.n - at < BATCH ? ix->faces.n - at : BATCH;

		r = psk_get_faces(s, ix, at, n, f);
		for (size_t i = 0; r == RC_OK && i < n; i++) {
			uint32_t key = psk_gltf_face_key(&f[i], ix->n_materials);

			if (!psk_gltf_face_ok(&f[i], ix->wedges.n)) {
				fs->dropped++;
				continue;
			}
			fs->no_material += key == PG_NONE_KEY;
			if (fs->count[key] % PG_CP_EVERY == 0)
				psk_gltf_cps_push(&fs->cps[key], at + i, &fs->oom);
			fs->count[key]++;
		}
	}
	free(f);
	return r == RC_OK && fs->oom ? RC_NOMEM : r;
}

/* One primitive per material that has faces (and one for faces without a valid material). */
static enum rc make_prims(struct psk_gltf *g, struct face_scan *fs)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < PG_N_KEYS; k++)
		n += fs->count[k] > 0;
	g->prims = xcalloc_n(n ? n : 1, sizeof *g->prims);
	g->prim_key = xcalloc_n(n ? n : 1, sizeof *g->prim_key);
	g->face_cp = xcalloc_n(n ? n : 1, sizeof *g->face_cp);
	if (!g->prims || !g->prim_key || !g->face_cp)
		return RC_NOMEM;
	for (uint32_t k = 0; k < PG_N_KEYS; k++) {
		uint32_t p = g->mesh.n_prims;

		if (!fs->count[k])
			continue;
		g->prims[p].material = k == PG_NONE_KEY ? -1 : (int32_t)k;
		g->prims[p].n_indices = 3 * fs->count[k];
		g->prim_key[p] = k;
		g->face_cp[p] = fs->cps[k];
		memset(&fs->cps[k], 0, sizeof fs->cps[k]);
		g->bytes += g->face_cp[p].cap * sizeof(uint64_t);
		g->mesh.n_prims++;
	}
	g->mesh.prims = g->prims;
	g->bytes += n * (sizeof *g->prims + sizeof *g->prim_key + sizeof *g->face_cp);
	return RC_OK;
}

/* ---- skin: per point its four strongest influences ---- */

/* Add an influence; false when one was dropped for want of room. */
static bool skin_add(struct gltf_influence *f, uint16_t j, float w)
{
	int low = 0;

	for (int k = 0; k < 4; k++)
		if (f->weight[k] > 0 && f->joint[k] == j) {
			f->weight[k] += w;
			return true;
		}
	for (int k = 0; k < 4; k++) {
		if (f->weight[k] == 0) {
			f->joint[k] = j;
			f->weight[k] = w;
			return true;
		}
		if (f->weight[k] < f->weight[low])
			low = k;
	}
	if (w > f->weight[low]) {
		f->joint[low] = j;
		f->weight[low] = w;
	}
	return false;
}

static enum rc build_skin(struct psk_gltf *g, const struct src *s, struct diag *notes)
{
	const struct psk_index *ix = g->ix;
	struct psk_weight *w = xcalloc_n(BATCH, sizeof *w);
	size_t bad = 0, dropped = 0, bare = 0;
	enum rc r = RC_OK;

	g->skin = xcalloc_n(ix->points.n ? ix->points.n : 1, sizeof *g->skin);
	if (!w || !g->skin) {
		free(w);
		return RC_NOMEM;
	}
	g->bytes += ix->points.n * sizeof *g->skin;
	for (size_t at = 0; r == RC_OK && at < ix->weights.n; at += BATCH) {
		size_t n = ix->weights.n - at < BATCH ? ix->weights.n - at : BATCH;

		r = psk_get_weights(s, &ix->weights, at, n, w);
		for (size_t i = 0; r == RC_OK && i < n; i++) {
			const struct psk_weight *x = &w[i];

			if (x->point < 0 || (size_t)x->point >= ix->points.n || x->bone < 0 ||
			    (size_t)x->bone >= ix->n_bones || x->bone > 65535 ||
			    !isfinite(x->weight) || x->weight <= 0) {
				bad++;
				continue;
			}
			dropped += !skin_add(&g->skin[x->point], (uint16_t)x->bone, x->weight);
		}
	}
	free(w);
	for (size_t p = 0; p < ix->points.n; p++)
		if (g->skin[p].weight[0] == 0) {
			g->skin[p].weight[0] = 1.0f;
			bare++;
		}
	if (bad)
		diag_add(notes,
			 "glb: %zu RAWWEIGHTS records with a point or bone out of range, or "
			 "a weight that is not positive, ignored",
			 bad);
	if (dropped)
		diag_add(notes,
			 "glb: %zu influences beyond the four strongest of their point "
			 "dropped; the rest renormalised",
			 dropped);
	if (bare)
		diag_add(notes,
			 "glb: %zu of %zu points have no weights: bound to bone 0 with "
			 "weight 1",
			 bare, ix->points.n);
	return r;
}

/* ---- morph targets ---- */

static int cmp_delta(const void *x, const void *y)
{
	const struct psk_gltf_delta *a = x, *b = y;

	if (a->point != b->point)
		return a->point < b->point ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* A delta as glTF wants it: CUE4Parse mirrors points but not morph deltas, so Y is negated
 * as Darklight does on import (docs/psk-psa.md, "Morph targets"), then turned Y-up. */
static void put_delta(const struct psk_morph_delta *d, struct psk_gltf_delta *o)
{
	o->point = (uint32_t)d->point;
	for (int k = 0; k < 3; k++) {
		o->pos[k] = d->pos[k];
		o->nrm[k] = d->tangent_z[k];
	}
	o->pos[1] = -o->pos[1];
	o->nrm[1] = -o->nrm[1];
	gltf_zup_vec(o->pos);
	gltf_zup_vec(o->nrm);
}

/* Morph t's deltas at g->deltas + *at, sorted by point; the first delta of a point wins. */
static enum rc load_morph(struct psk_gltf *g, const struct src *s, uint32_t t, size_t *at,
			  size_t *bad)
{
	const struct psk_index *ix = g->ix;
	const struct psk_morph *mo = &ix->morphs[t];
	struct psk_morph_delta *d = xcalloc_n(BATCH, sizeof *d);
	struct psk_gltf_delta *out = g->deltas + *at;
	size_t n_out = 0, keep = 0;
	enum rc r = d ? RC_OK : RC_NOMEM;

	for (size_t k = 0; r == RC_OK && k < mo->n_deltas; k += BATCH) {
		size_t n = mo->n_deltas - k < BATCH ? mo->n_deltas - k : BATCH;

		r = psk_get_deltas(s, &ix->deltas, mo->first_delta + k, n, d);
		for (size_t i = 0; r == RC_OK && i < n; i++) {
			if (d[i].point < 0 || (size_t)d[i].point >= ix->points.n) {
				(*bad)++;
				continue;
			}
			put_delta(&d[i], &out[n_out]);
			out[n_out++].order = (uint32_t)(k + i);
		}
	}
	free(d);
	if (r != RC_OK)
		return r;
	qsort(out, n_out, sizeof *out, cmp_delta);
	for (size_t i = 0; i < n_out; i++)
		if (keep == 0 || out[keep - 1].point != out[i].point)
			out[keep++] = out[i];
	*bad += n_out - keep;
	*at += keep;
	return RC_OK;
}

/* Which wedges each target moves (counts and checkpoints), in one pass over the wedges with
 * a point -> targets index. */
static enum rc target_wedges(struct psk_gltf *g, const struct src *s, uint32_t nt)
{
	const struct psk_index *ix = g->ix;
	size_t np = ix->points.n, total = g->delta_off[nt];
	size_t *off = xcalloc_n(np + 1, sizeof *off);
	uint32_t *tg = xcalloc_n(total ? total : 1, sizeof *tg);
	struct psk_wedge *w = xcalloc_n(BATCH, sizeof *w);
	bool oom = !off || !tg || !w;
	enum rc r = RC_OK;

	for (uint32_t t = 0; !oom && t < nt; t++)
		for (size_t e = g->delta_off[t]; e < g->delta_off[t + 1]; e++)
			off[g->deltas[e].point + 1]++;
	for (size_t p = 0; !oom && p < np; p++)
		off[p + 1] += off[p];
	for (uint32_t t = 0; !oom && t < nt; t++) /* off[p] ends up at the end of p's list */
		for (size_t e = g->delta_off[t]; e < g->delta_off[t + 1]; e++)
			tg[off[g->deltas[e].point]++] = t;
	for (size_t p = np; !oom && p > 0; p--)
		off[p] = off[p - 1];
	if (!oom)
		off[0] = 0;
	for (size_t at = 0; !oom && r == RC_OK && at < ix->wedges.n; at += BATCH) {
		size_t n = ix->wedges.n - at < BATCH ? ix->wedges.n - at : BATCH;

		r = psk_get_wedges(s, ix, at, n, w);
		for (size_t i = 0; r == RC_OK && i < n; i++) {
			uint32_t p = w[i].point;

			for (size_t e = p < np ? off[p] : 0; p < np && e < off[p + 1]; e++) {
				struct gltf_target *x = &g->targets[tg[e]];

				if (x->n_sparse % PG_CP_EVERY == 0)
					psk_gltf_cps_push(&g->target_cp[tg[e]], at + i, &oom);
				x->n_sparse++;
			}
		}
	}
	free(off);
	free(tg);
	free(w);
	return oom ? RC_NOMEM : r;
}

/*
 * A target lists every wedge of every point it moves, so one point shared by many wedges and
 * moved by many morphs would multiply the file. Real meshes have a few wedges per point:
 * targets are kept while their vertices stay within 16 per delta plus the wedge count.
 */
static void cap_targets(struct psk_gltf *g, struct diag *notes)
{
	uint64_t budget = 16 * (uint64_t)g->delta_off[g->mesh.n_targets] + g->ix->wedges.n,
		 used = 0;

	for (uint32_t t = 0; t < g->mesh.n_targets; t++) {
		used += g->targets[t].n_sparse;
		if (used <= budget)
			continue;
		diag_add(notes,
			 "glb: morph targets %u to %u left out: they would move %llu vertices "
			 "for %zu deltas",
			 t, g->mesh.n_targets - 1, (unsigned long long)used,
			 g->delta_off[g->mesh.n_targets]);
		g->mesh.n_targets = t;
		return;
	}
}

static enum rc build_morphs(struct psk_gltf *g, const struct src *s, struct diag *notes)
{
	const struct psk_index *ix = g->ix;
	size_t nt = ix->n_morphs, total = 0, at = 0, bad = 0;
	enum rc r = RC_OK;

	if (nt * g->mesh.n_prims > MAX_TARGET_REFS) {
		diag_add(notes, "glb: %zu morph targets on %u primitives: only the first %u kept",
			 nt, g->mesh.n_prims, MAX_TARGET_REFS / g->mesh.n_prims);
		nt = MAX_TARGET_REFS / g->mesh.n_prims;
	}
	for (size_t t = 0; t < nt; t++)
		total += ix->morphs[t].n_deltas; /* bounded by MRPHDATA's records */
	g->deltas = xcalloc_n(total ? total : 1, sizeof *g->deltas);
	g->delta_off = xcalloc_n(nt + 1, sizeof *g->delta_off);
	g->targets = xcalloc_n(nt ? nt : 1, sizeof *g->targets);
	g->target_cp = xcalloc_n(nt ? nt : 1, sizeof *g->target_cp);
	if (!g->deltas || !g->delta_off || !g->targets || !g->target_cp)
		return RC_NOMEM;
	g->n_target_cp = (uint32_t)nt;
	for (uint32_t t = 0; r == RC_OK && t < nt; t++) {
		g->delta_off[t] = at;
		r = load_morph(g, s, t, &at, &bad);
		g->targets[t].name = (struct gltf_name){ix->morphs[t].name, PSK_NAME_LEN};
	}
	g->delta_off[nt] = at;
	g->mesh.targets = g->targets;
	g->mesh.n_targets = (uint32_t)nt;
	if (r == RC_OK)
		r = target_wedges(g, s, (uint32_t)nt);
	if (r == RC_OK)
		cap_targets(g, notes);
	for (uint32_t t = 0; t < nt; t++)
		g->bytes += g->target_cp[t].cap * sizeof(uint64_t);
	g->bytes += total * sizeof *g->deltas + nt * (sizeof *g->targets + 2 * sizeof(size_t));
	if (bad)
		diag_add(notes,
			 "glb: %zu morph deltas with a point out of range or repeating an "
			 "earlier delta's point left out",
			 bad);
	return r;
}

/* ---- attributes, sockets, the mesh ---- */

static void setup_attrs(struct psk_gltf *g, struct diag *notes)
{
	const struct psk_index *ix = g->ix;
	size_t nw = ix->wedges.n;

	g->normals = ix->normals.n == ix->points.n ? 1 : ix->normals.n == nw ? 2 : 0;
	if (ix->normals.n == 0)
		g->normals = 0;
	else if (g->normals == 0)
		diag_add(notes,
			 "glb: VTXNORMS matches neither the points nor the wedges: no normals");
	g->uv_src[0] = -1;
	g->mesh.n_uv = 1;
	for (int set = 0; set < PSK_MAX_EXTRA_UVS; set++) {
		if (ix->uvs[set].n == nw)
			g->uv_src[g->mesh.n_uv++] = set;
		else if (ix->uvs[set].n)
			diag_add(notes, "glb: EXTRAUVS%d does not have one UV per wedge: left out",
				 set);
	}
	g->mesh.normals = g->normals != 0;
	g->mesh.colors = ix->colors.n == nw;
	if (ix->colors.n && !g->mesh.colors)
		diag_add(notes, "glb: VERTEXCOLOR does not have one colour per wedge: left out");
	g->mesh.skinned = ix->n_bones > 0;
	g->mesh.n_vertices = nw;
	g->mesh.name = (struct gltf_name){g->name, strlen(g->name)};
}

/* UE's FRotator (pitch, yaw, roll in degrees) as a quaternion, UE's own formula. */
static void rotator_quat(const float pyr[3], float q[4])
{
	double h = 3.14159265358979323846 / 360.0;
	double sp = sin(pyr[0] * h), cp = cos(pyr[0] * h), sy = sin(pyr[1] * h),
	       cy = cos(pyr[1] * h), sr = sin(pyr[2] * h), cr = cos(pyr[2] * h);

	q[0] = (float)(cr * sp * sy - sr * cp * cy);
	q[1] = (float)(-cr * sp * cy - sr * cp * sy);
	q[2] = (float)(cr * cp * sy - sr * sp * cy);
	q[3] = (float)(cr * cp * cy + sr * sp * sy);
}

static int32_t bone_named(const struct psk_index *ix, const uint8_t *name)
{
	size_t n = name_len(name, PSK_NAME_LEN);

	for (size_t b = 0; n && b < ix->n_bones; b++)
		if (name_len(ix->bones[b].name, PSK_NAME_LEN) == n &&
		    !memcmp(ix->bones[b].name, name, n))
			return (int32_t)b;
	return -1;
}

/*
 * Sockets as children of their bone. SKELSOCK holds UE's own values (docs/gltf.md,
 * "Sockets"): mirrored into PSK space like the rest (Y negated, the rotation reflected).
 */
static enum rc socket_nodes(struct psk_gltf *g, const struct src *s)
{
	const struct psk_index *ix = g->ix;
	enum rc r;

	g->n_sockets = ix->sockets.n;
	g->sockets = xcalloc_n(g->n_sockets ? g->n_sockets : 1, sizeof *g->sockets);
	if (!g->sockets)
		return RC_NOMEM;
	g->bytes += g->n_sockets * sizeof *g->sockets;
	r = psk_get_sockets(s, &ix->sockets, 0, g->n_sockets, g->sockets);
	for (size_t i = 0; r == RC_OK && i < g->n_sockets; i++) {
		const struct psk_socket *so = &g->sockets[i];
		struct gltf_node *nd = &g->nodes[ix->n_bones + i];
		float q[4];

		nd->name = (struct gltf_name){so->name, PSK_NAME_LEN};
		nd->parent = bone_named(ix, so->bone);
		nd->t[0] = so->loc[0], nd->t[1] = -so->loc[1], nd->t[2] = so->loc[2];
		rotator_quat(so->rot, q);
		nd->r[0] = -q[0], nd->r[1] = q[1], nd->r[2] = -q[2], nd->r[3] = q[3];
		gltf_quat_norm(nd->r);
		memcpy(nd->s, so->scale, sizeof nd->s);
		if (nd->parent < 0)
			gltf_zup_root(nd->t, nd->r);
	}
	return r;
}

static enum rc build_mesh(struct psk_gltf *g, const struct src *s, struct diag *notes)
{
	const struct psk_index *ix = g->ix;
	struct face_scan *fs = calloc(1, sizeof *fs);
	enum rc r = fs ? scan_faces(s, ix, fs) : RC_NOMEM;

	if (r == RC_OK)
		r = make_prims(g, fs);
	for (uint32_t k = 0; fs && k < PG_N_KEYS; k++)
		free(fs->cps[k].v);
	if (r == RC_OK && fs->dropped)
		diag_add(notes, "glb: %zu faces with a wedge out of range left out", fs->dropped);
	if (r == RC_OK && fs->no_material)
		diag_add(notes,
			 "glb: %zu faces with a material out of range use the default "
			 "material",
			 fs->no_material);
	free(fs);
	if (r != RC_OK || g->mesh.n_prims == 0)
		return r;
	setup_attrs(g, notes);
	if (r == RC_OK && ix->n_bones)
		r = build_skin(g, s, notes);
	if (r == RC_OK && ix->n_morphs)
		r = build_morphs(g, s, notes);
	if (r == RC_OK)
		g->m.meshes = &g->mesh, g->m.n_meshes = 1;
	return r;
}

static enum rc build_model(struct psk_gltf *g, const struct src *s, struct diag *notes)
{
	const struct psk_index *ix = g->ix;
	size_t nn = ix->n_bones + ix->sockets.n, moved;
	enum rc r = RC_OK;

	g->nodes = xcalloc_n(nn ? nn : 1, sizeof *g->nodes);
	g->mats = xcalloc_n(ix->n_materials ? ix->n_materials : 1, sizeof *g->mats);
	if (!g->nodes || !g->mats || nn > UINT32_MAX / 2 || ix->n_materials > UINT32_MAX / 2)
		return RC_NOMEM;
	g->bytes += nn * sizeof *g->nodes + ix->n_materials * sizeof *g->mats;
	moved = psk_gltf_bone_nodes(ix->bones, ix->n_bones, g->nodes);
	if (moved)
		diag_add(notes,
			 "glb: %zu bones whose parent is not an earlier bone hang under "
			 "bone 0",
			 moved);
	r = socket_nodes(g, s);
	if (r == RC_OK)
		r = gltf_bind_ibms(g->nodes, (uint32_t)ix->n_bones);
	for (size_t i = 0; i < ix->n_materials; i++)
		g->mats[i] = (struct gltf_material){{ix->materials[i].name, PSK_NAME_LEN}, -1};
	g->m = (struct gltf_model){.nodes = g->nodes,
				   .n_nodes = (uint32_t)nn,
				   .materials = g->mats,
				   .n_materials = (uint32_t)ix->n_materials,
				   .fill = psk_gltf_psk_fill};
	if (r == RC_OK && ix->wedges.n && ix->wedges.n < UINT32_MAX)
		r = build_mesh(g, s, notes);
	else if (r == RC_OK && ix->wedges.n)
		diag_add(notes, "glb: more wedges than glTF indices can address: no mesh");
	return r;
}

enum rc psk_gltf_open(const struct src *s, const struct psk_index *ix, const char *name,
		      struct psk_gltf **out, struct diag *notes)
{
	struct psk_gltf *g = calloc(1, sizeof *g);
	struct psk_gltf_ctx c = {g, s, NULL};
	enum rc r;

	if (!g || !(g->name = strdup(name))) {
		free(g);
		return RC_NOMEM;
	}
	g->ix = ix;
	g->bytes = sizeof *g;
	r = build_model(g, s, notes);
	if (r == RC_OK)
		r = gltf_bounds(&g->m, &c);
	if (r == RC_OK)
		r = gltf_plan(&g->m, &g->plan);
	if (r == RC_UNSUPPORTED && g->mesh.n_targets) {
		diag_add(notes, "glb: the morph targets would make the file too big for GLB (4 "
				"GiB): left out");
		g->mesh.n_targets = 0;
		r = gltf_plan(&g->m, &g->plan);
	}
	if (r != RC_OK) {
		psk_gltf_free(g);
		return r;
	}
	g->bytes += (size_t)g->plan.n_views * 64 + (size_t)g->plan.n_accs * 64 +
		    (size_t)g->plan.n_out_nodes * 12;
	*out = g;
	return RC_OK;
}
