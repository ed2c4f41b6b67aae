/* A Skate scene as one Unreal PSK (psk-psa.md §5, §8, §12): points/wedges per vertex, faces
 * with clockwise winding, bones parents-first with parent-relative transforms in PSK's
 * quaternion convention (root plain, children conjugated), normalised RAWWEIGHTS. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/bytes.h"
#include "psgfs/psk.h"
#include "psgfs/skate_mesh.h"

/* Printable ASCII names, <= 63 bytes, zero-filled (psk-psa.md §6). */
static void psk_name(uint8_t dst[PSK_NAME_LEN], const char *src, const char *fallback)
{
	size_t n = 0;

	memset(dst, 0, PSK_NAME_LEN);
	for (; *src && n < PSK_NAME_LEN - 1; src++) {
		unsigned char c = (unsigned char)*src;

		dst[n++] = (isalnum(c) || c == '_' || c == '-' || c == '.' || c == ' ') ? c : '_';
	}
	if (n == 0)
		snprintf((char *)dst, PSK_NAME_LEN, "%s", fallback);
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
	const uint8_t *name;
	uint32_t idx;
};

static int name_sort_cmp(const void *x, const void *y)
{
	const struct name_sort *a = x, *b = y;
	int c = strcasecmp((const char *)a->name, (const char *)b->name);

	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* Bone names must be unique ignoring case: later duplicates get "_<index>". */
static bool unique_names(struct psk_bone *bones, size_t n)
{
	struct name_sort *v = xcalloc_n(n, sizeof *v);

	if (!v)
		return false;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct name_sort){bones[i].name, (uint32_t)i};
	qsort(v, n, sizeof *v, name_sort_cmp);
	const uint8_t *run = n ? v[0].name : NULL; /* first (kept) name of a run of equals */

	for (size_t i = 1; i < n; i++)
		if (strcasecmp((const char *)v[i].name, (const char *)run)) {
			run = v[i].name;
		} else {
			uint8_t *nm = bones[v[i].idx].name;
			char suf[16];
			size_t sl = (size_t)snprintf(suf, sizeof suf, "_%u", v[i].idx);
			size_t l = strnlen((const char *)nm, PSK_NAME_LEN);

			if (l + sl > PSK_NAME_LEN - 1)
				l = PSK_NAME_LEN - 1 - sl;
			memcpy(nm + l, suf, sl + 1);
		}
	free(v);
	return true;
}

static void qconj(const float q[4], float o[4])
{
	o[0] = -q[0];
	o[1] = -q[1];
	o[2] = -q[2];
	o[3] = q[3];
}

static enum rc export_bones(const struct skate_scene *sc, bool zup, struct psk_mesh *pm,
			    uint32_t *pos)
{
	static const float rx[4] = {0.70710678f, 0, 0, 0.70710678f}; /* +90 deg about X */
	uint32_t n = sc->n_bones;
	uint32_t *order;
	float(*gt)[3], (*gq)[4];

	if (n == 0) {
		pm->bones = calloc(1, sizeof *pm->bones);
		if (!pm->bones)
			return RC_NOMEM;
		pm->n_bones = 1;
		psk_name(pm->bones[0].name, "root", "root");
		pm->bones[0].rot[3] = 1;
		return RC_OK;
	}
	order = xcalloc_n(n, sizeof *order);
	gt = xcalloc_n(n, sizeof *gt);
	gq = xcalloc_n(n, sizeof *gq);
	pm->bones = xcalloc_n(n, sizeof *pm->bones);
	if (!order || !gt || !gq || !pm->bones || !bone_order(sc, order, pos)) {
		free(order);
		free(gt);
		free(gq);
		return RC_NOMEM;
	}
	pm->n_bones = n;
	for (uint32_t b = 0; b < n; b++) {
		const struct skate_bone *sb = &sc->bones[b];

		if (zup) {
			skate_quat_rotate(rx, sb->t, gt[b]);
			skate_quat_mul(rx, sb->q, gq[b]);
		} else {
			memcpy(gt[b], sb->t, sizeof gt[b]);
			memcpy(gq[b], sb->q, sizeof gq[b]);
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		uint32_t b = order[k];
		int32_t sp = sc->bones[b].parent;
		struct psk_bone *pb = &pm->bones[k];
		char fb[24];

		snprintf(fb, sizeof fb, "bone_%u", b);
		psk_name(pb->name, sc->bones[b].name, fb);
		if (k == 0) {
			pb->parent = 0;
			memcpy(pb->pos, gt[b], sizeof pb->pos);
			memcpy(pb->rot, gq[b], sizeof pb->rot); /* root: plain */
			continue;
		}
		/* extra roots hang from the export root */
		uint32_t p =
		    (sp >= 0 && (uint32_t)sp < n && (uint32_t)sp != b) ? (uint32_t)sp : order[0];
		float iq[4], d[3], lq[4];

		pb->parent = (int32_t)pos[p];
		pm->bones[pos[p]].num_children++;
		qconj(gq[p], iq);
		for (int i = 0; i < 3; i++)
			d[i] = gt[b][i] - gt[p][i];
		skate_quat_rotate(iq, d, pb->pos);
		skate_quat_mul(iq, gq[b], lq);
		qconj(lq, pb->rot); /* children: conjugated */
	}
	free(order);
	free(gt);
	free(gq);
	return unique_names(pm->bones, pm->n_bones) ? RC_OK : RC_NOMEM;
}

#define GROW(arr, n, cap, need)                                                                    \
	do {                                                                                       \
		if ((n) + (need) > (cap)) {                                                        \
			size_t nc_ = (cap) ? (cap) : 256;                                          \
			void *np_;                                                                 \
			while (nc_ < (n) + (need))                                                 \
				nc_ *= 2;                                                          \
			np_ = xrealloc_n((arr), nc_, sizeof *(arr));                               \
			if (!np_)                                                                  \
				goto nomem;                                                        \
			(arr) = np_;                                                               \
			(cap) = nc_;                                                               \
		}                                                                                  \
	} while (0)

enum rc skate_export_psk(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			 bool zup, struct buf *out, bool *is_pskx)
{
	struct psk_mesh pm;
	uint32_t *pos = NULL;
	size_t cap_p = 0, cap_w = 0, cap_f = 0, cap_wt = 0, cap_m = 0;
	enum rc r;
	uint32_t root_bone;

	memset(&pm, 0, sizeof pm);
	if (is_pskx)
		*is_pskx = false;
	pos = xcalloc_n(sc->n_bones, sizeof *pos);
	if (!pos)
		return RC_NOMEM;
	r = export_bones(sc, zup, &pm, pos);
	if (r != RC_OK)
		goto fail;
	root_bone = sc->n_bones ? pos[0] : 0;

	for (size_t mi = 0; mi < sc->n_meshes; mi++) {
		struct skate_mesh_data *md;
		const struct skate_attr *pa, *ta;
		size_t base = pm.n_points;
		uint8_t mat;

		if (!sc->meshes[mi].ok || pm.n_materials >= 256)
			continue;
		r = skate_mesh_decode(s, a, sc, mi, &md, NULL);
		if (r == RC_NOMEM)
			goto fail;
		if (r != RC_OK)
			continue;
		mat = (uint8_t)pm.n_materials;
		GROW(pm.materials, pm.n_materials, cap_m, 1);
		memset(&pm.materials[pm.n_materials], 0, sizeof *pm.materials);
		{
			char fb[40];

			snprintf(fb, sizeof fb, "material_%02zu", mi);
			psk_name(pm.materials[pm.n_materials].name, sc->meshes[mi].material, fb);
		}
		pm.materials[pm.n_materials].texture_index = mat;
		pm.n_materials++;

		pa = &md->attr[md->pos];
		ta = md->tex[0] >= 0 ? &md->attr[md->tex[0]] : NULL;
		GROW(pm.points, pm.n_points, cap_p, md->n_verts);
		GROW(pm.wedges, pm.n_wedges, cap_w, md->n_verts);
		for (uint32_t v = 0; v < md->n_verts; v++) {
			const float *pv = pa->v + (size_t)v * pa->n;
			float p[3] = {pv[0], pa->n > 1 ? pv[1] : 0, pa->n > 2 ? pv[2] : 0};
			struct psk_point *pt = &pm.points[pm.n_points++];
			struct psk_wedge *w = &pm.wedges[pm.n_wedges++];

			if (zup) {
				pt->x = p[0];
				pt->y = -p[2];
				pt->z = p[1];
			} else {
				pt->x = p[0];
				pt->y = p[1];
				pt->z = p[2];
			}
			memset(w, 0, sizeof *w);
			w->point = (uint32_t)(base + v);
			if (ta) {
				w->u = ta->v[(size_t)v * ta->n];
				w->v = ta->n > 1 ? ta->v[(size_t)v * ta->n + 1] : 0;
			}
			w->mat = mat;
		}
		GROW(pm.faces, pm.n_faces, cap_f, md->n_tri);
		for (size_t t = 0; t < md->n_tri; t++) {
			struct psk_face *f = &pm.faces[pm.n_faces++];

			memset(f, 0, sizeof *f);
			f->wedge[0] = (uint32_t)(base + md->tri[t][0]);
			f->wedge[1] = (uint32_t)(base + md->tri[t][2]);
			f->wedge[2] = (uint32_t)(base + md->tri[t][1]);
			f->mat = mat;
			f->smoothing = 1;
		}
		GROW(pm.weights, pm.n_weights, cap_wt, (size_t)md->n_verts * 4);
		for (uint32_t v = 0; v < md->n_verts; v++) {
			uint8_t ni = md->n_infl[v];

			if (ni == 0) {
				pm.weights[pm.n_weights++] = (struct psk_weight){
				    1.0f, (int32_t)(base + v), (int32_t)root_bone};
				continue;
			}
			for (uint8_t j = 0; j < ni; j++) {
				uint32_t gb = md->infl[v][j].bone;

				pm.weights[pm.n_weights++] = (struct psk_weight){
				    md->infl[v][j].weight, (int32_t)(base + v),
				    (int32_t)(gb < sc->n_bones ? pos[gb] : root_bone)};
			}
		}
		skate_mesh_data_free(md);
		continue;
	nomem:
		skate_mesh_data_free(md);
		r = RC_NOMEM;
		goto fail;
	}
	if (pm.n_materials == 0) {
		pm.materials = calloc(1, sizeof *pm.materials);
		if (!pm.materials) {
			r = RC_NOMEM;
			goto fail;
		}
		psk_name(pm.materials[0].name, "material_00", "material_00");
		pm.n_materials = 1;
	}
	r = psk_write(&pm, out);
	if (r == RC_OK && out->oom)
		r = RC_NOMEM;
	if (is_pskx)
		*is_pskx = psk_needs_pskx(&pm);
fail:
	free(pos);
	free(pm.points);
	free(pm.wedges);
	free(pm.faces);
	free(pm.materials);
	free(pm.bones);
	free(pm.weights);
	return r;
}
