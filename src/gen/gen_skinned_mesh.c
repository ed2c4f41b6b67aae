/* The skinned model generator's meshes (gen_skinned_int.h): one mesh's vertex bytes in a PS3
 * layout, its palette and skin, and their truth. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_skinned_int.h"
#include "psgfs/base/bytes.h"

#define SKATER_LOCAL 0.1f /* skater vertices lie within 0.1 of their first bone, per axis */

/* ---- meshes ---- */

/* Palette: distinct bones, a proper subset of the skeleton (one bone for static meshes). */
static enum rc make_palette(struct prng *r, const struct gen_skinned_truth *t,
			    struct gen_skinned_mesh_truth *m, const struct gsk_layout *L)
{
	m->n_palette = L->skinned ? 2 + prng_below(r, t->n_bones - 2 < 6 ? t->n_bones - 2 : 6) : 1;
	m->palette = xcalloc_n(t->n_bones, sizeof *m->palette);
	if (!m->palette)
		return RC_NOMEM;
	for (uint32_t i = 0; i < t->n_bones; i++)
		m->palette[i] = (uint16_t)i;
	for (uint32_t i = 0; i < m->n_palette; i++) {
		uint32_t j = i + prng_below(r, t->n_bones - i);
		uint16_t x = m->palette[i];

		m->palette[i] = m->palette[j];
		m->palette[j] = x;
	}
	return RC_OK;
}

/* A CMP normal (x 11 bits / 1023, y 11 / 1023, z 10 / 511) at p. */
static void cmp_normal(struct prng *r, uint8_t *p, float n[3])
{
	int32_t nx = (int32_t)prng_below(r, 2047) - 1023;
	int32_t ny = (int32_t)prng_below(r, 2047) - 1023;
	int32_t nz = (int32_t)prng_below(r, 1023) - 511;

	gsk_put32(p, ((uint32_t)nx & 0x7FF) | ((uint32_t)ny & 0x7FF) << 11 |
			 ((uint32_t)nz & 0x3FF) << 22);
	n[0] = (float)nx / 1023.0f;
	n[1] = (float)ny / 1023.0f;
	n[2] = (float)nz / 511.0f;
}

/* Layouts 0 and 3: F32 position, CMP normal, SF uv, then colour (0) or an S1 binormal (3). */
static void attrs_f32(struct prng *r, struct gen_skinned_mesh_truth *m, uint32_t v, uint8_t *p)
{
	float n[3];
	int32_t tu, tv;

	cmp_normal(r, p + 12, n);
	tu = (int32_t)prng_below(r, 1025);
	tv = (int32_t)prng_below(r, 1025);
	for (int c = 0; c < 3; c++) {
		m->pos[v][c] = prng_float(r, -2, 2);
		gsk_put32(p + 4 * c, f32_bits(m->pos[v][c]));
	}
	memcpy(m->normal[v], n, sizeof n);
	m->uv[v][0] = (float)tu / 1024.0f;
	m->uv[v][1] = (float)tv / 1024.0f;
	gsk_put16(p + 16, gsk_half_bits(m->uv[v][0]));
	gsk_put16(p + 18, gsk_half_bits(m->uv[v][1]));
	if (m->layout == 0) {
		for (int c = 0; c < 4; c++) {
			p[20 + c] = (uint8_t)prng_below(r, 256);
			m->color[v][c] = (float)p[20 + c] / 255.0f;
		}
		return;
	}
	for (int c = 0; c < 3; c++)
		gsk_put16(p + 20 + 2 * c,
			  (uint16_t)(int16_t)((int32_t)prng_below(r, 65535) - 32767));
}

/* Layout 1: SF position, S1 normal and uv. */
static void attrs_half(struct prng *r, struct gen_skinned_mesh_truth *m, uint32_t v, uint8_t *p)
{
	for (int c = 0; c < 3; c++) {
		int32_t kq = (int32_t)prng_below(r, 1025) - 512;
		int32_t s1 = (int32_t)prng_below(r, 65535) - 32767;

		m->pos[v][c] = (float)kq / 256.0f;
		gsk_put16(p + 2 * c, gsk_half_bits(m->pos[v][c]));
		m->normal[v][c] = (float)s1 / 32767.0f;
		gsk_put16(p + 8 + 2 * c, (uint16_t)(int16_t)s1);
	}
	for (int c = 0; c < 2; c++) {
		int32_t s1 = (int32_t)prng_below(r, 65535) - 32767;

		m->uv[v][c] = (float)s1 / 32767.0f;
		gsk_put16(p + 14 + 2 * c, (uint16_t)(int16_t)s1);
	}
}

/* Layout 2: S32K position (raw integers), CMP tangent, F32 normal and uv. */
static void attrs_s32k(struct prng *r, struct gen_skinned_mesh_truth *m, uint32_t v, uint8_t *p)
{
	int32_t nx = (int32_t)prng_below(r, 2047) - 1023;

	for (int c = 0; c < 3; c++) {
		int32_t kq = (int32_t)prng_below(r, 601) - 300;

		m->pos[v][c] = (float)kq;
		gsk_put16(p + 2 * c, (uint16_t)(int16_t)kq);
		m->normal[v][c] = prng_float(r, -1, 1);
		gsk_put32(p + 10 + 4 * c, f32_bits(m->normal[v][c]));
	}
	gsk_put32(p + 6, (uint32_t)nx & 0x7FF);
	for (int c = 0; c < 2; c++) {
		m->uv[v][c] = prng_float(r, 0, 1);
		gsk_put32(p + 22 + 4 * c, f32_bits(m->uv[v][c]));
	}
}

/* One weight of a skinned layout: stored at p, returned as the decoder must read it. */
static float put_weight(struct prng *r, int layout, bool zero, uint8_t *p, unsigned j)
{
	uint32_t raw;
	float w;

	switch (layout) {
	case 1: /* S1: s16 / 32767 */
		raw = zero ? 0 : 1 + prng_below(r, 32767);
		gsk_put16(p + 2 * j, (uint16_t)raw);
		return (float)(int16_t)raw / 32767.0f;
	case 2: /* F32 */
		w = zero ? 0 : prng_float(r, 0.01f, 1);
		gsk_put32(p + 4 * j, f32_bits(w));
		return w;
	default: /* UB (0) and UB256 (skater): byte / 255 */
		raw = zero ? 0 : 1 + prng_below(r, 255);
		p[j] = (uint8_t)raw;
		return (float)raw / 255.0f;
	}
}

/* 1..4 distinct palette slots with weights (the first never zero), and the truth: zeros
 * dropped, slots mapped through the palette, weights normalised in slot order. */
static void vertex_skin(struct prng *r, struct gen_skinned_mesh_truth *m,
			const struct gsk_layout *L, uint32_t v, uint8_t *p)
{
	uint32_t slots[4] = {0, 0, 0, 0};
	float w[4], sum = 0;
	unsigned k = 1 + prng_below(r, 4);

	if (k > m->n_palette)
		k = m->n_palette;
	for (unsigned j = 0; j < k; j++) {
		bool dup;

		do {
			slots[j] = prng_below(r, m->n_palette);
			dup = false;
			for (unsigned i = 0; i < j; i++)
				dup |= slots[i] == slots[j];
		} while (dup);
	}
	for (unsigned j = 0; j < 4; j++) {
		bool zero = j >= k || (j > 0 && prng_below(r, 5) == 0);

		w[j] = put_weight(r, m->layout, zero, p + L->w_off, j);
		p[L->idx_off + j] = (uint8_t)slots[j];
	}
	for (unsigned j = 0; j < 4; j++) {
		if (!(w[j] > 0))
			continue;
		m->bone[v][m->n_infl[v]] = m->palette[slots[j]];
		m->weight[v][m->n_infl[v]++] = w[j];
	}
	for (unsigned j = 0; j < m->n_infl[v]; j++)
		sum += m->weight[v][j];
	for (unsigned j = 0; j < m->n_infl[v]; j++)
		m->weight[v][j] /= sum;
}

/*
 * Skater layout: the skin first, then a position within SKATER_LOCAL of the vertex's first
 * bone (so it lines up with that bone's inverse bind matrix), stored S1x4 as s16 / 16384
 * with w = 1; CMP normal, S1 uv. Truth: the quantised position and that position seen from
 * its first bone (p * IBP), which the decoder's positions must reproduce.
 */
static void attrs_skater(struct prng *r, const struct gen_skinned_truth *t,
			 struct gen_skinned_mesh_truth *m, const int32_t *first_child, uint32_t v,
			 uint8_t *p)
{
	uint32_t b = m->bone[v][0];
	int32_t ch = first_child[b];
	double l[3], q[4], rm[3][3], along = prng_float(r, 0, 1);

	for (int c = 0; c < 3; c++)
		l[c] = prng_float(r, -SKATER_LOCAL, SKATER_LOCAL);
	for (int c = 0; c < 4; c++)
		q[c] = t->q[b][c];
	gsk_qmat(q, rm);
	for (int c = 0; c < 3; c++) {
		/* A body around the bones: along the bone towards its first child (a limb, the
		 * spine), within SKATER_LOCAL of that line. */
		double seg = ch >= 0 ? along * (t->t[ch][c] - t->t[b][c]) : 0;
		double x = t->t[b][c] + seg + rm[c][0] * l[0] + rm[c][1] * l[1] + rm[c][2] * l[2];
		long s = lrint(x * 16384.0);

		s = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
		gsk_put16(p + 2 * c, (uint16_t)(int16_t)s);
		m->pos[v][c] = (float)s / 16384.0f;
	}
	gsk_put16(p + 6, 16384);
	m->main_bone[v] = b;
	for (int j = 0; j < 3; j++)
		m->local[v][j] =
		    (float)(m->pos[v][0] * (double)t->ibp[b][j] +
			    m->pos[v][1] * (double)t->ibp[b][4 + j] +
			    m->pos[v][2] * (double)t->ibp[b][8 + j] + t->ibp[b][12 + j]);
	cmp_normal(r, p + 8, m->normal[v]);
	for (int c = 0; c < 2; c++) {
		int32_t s1 = (int32_t)prng_below(r, 65535) - 32767;

		m->uv[v][c] = (float)s1 / 32767.0f;
		gsk_put16(p + 12 + 2 * c, (uint16_t)(int16_t)s1);
	}
}

static enum rc mesh_arrays(struct gen_skinned_mesh_truth *m)
{
	uint32_t n = m->n_verts;

	m->pos = xcalloc_n(n, sizeof *m->pos);
	m->normal = xcalloc_n(n, sizeof *m->normal);
	m->uv = xcalloc_n(n, sizeof *m->uv);
	m->n_infl = xcalloc_n(n, 1);
	m->bone = xcalloc_n(n, sizeof *m->bone);
	m->weight = xcalloc_n(n, sizeof *m->weight);
	if (m->layout == 0)
		m->color = xcalloc_n(n, sizeof *m->color);
	if (m->layout == GEN_SK_SKATER) {
		m->main_bone = xcalloc_n(n, sizeof *m->main_bone);
		m->local = xcalloc_n(n, sizeof *m->local);
	}
	if (!m->pos || !m->normal || !m->uv || !m->n_infl || !m->bone || !m->weight ||
	    (m->layout == 0 && !m->color) ||
	    (m->layout == GEN_SK_SKATER && (!m->main_bone || !m->local)))
		return RC_NOMEM;
	return RC_OK;
}

/* Fill one mesh's vertex bytes and truth. */
enum rc gsk_make_mesh(struct prng *r, const struct gen_skinned_truth *t,
		      struct gen_skinned_mesh_truth *m, const struct gsk_layout *L, uint8_t *vb)
{
	enum rc res = mesh_arrays(m);
	int32_t *first_child = NULL;

	if (res == RC_OK)
		res = make_palette(r, t, m, L);
	if (res == RC_OK && m->layout == GEN_SK_SKATER) {
		first_child = xcalloc_n(t->n_bones, sizeof *first_child);
		if (!first_child)
			res = RC_NOMEM;
		for (uint32_t i = 0; first_child && i < t->n_bones; i++)
			first_child[i] = -1;
		for (uint32_t i = t->n_bones; first_child && i-- > 0;)
			if (t->parent[i] >= 0)
				first_child[t->parent[i]] = (int32_t)i; /* the lowest child wins */
	}
	if (res != RC_OK)
		return res;
	for (uint32_t v = 0; v < m->n_verts; v++) {
		uint8_t *p = vb + (size_t)v * L->stride;

		if (m->layout == GEN_SK_SKATER) {
			vertex_skin(r, m, L, v, p);
			attrs_skater(r, t, m, first_child, v, p);
			continue;
		}
		if (m->layout == 1)
			attrs_half(r, m, v, p);
		else if (m->layout == 2)
			attrs_s32k(r, m, v, p);
		else
			attrs_f32(r, m, v, p);
		if (L->skinned) {
			vertex_skin(r, m, L, v, p);
		} else {
			m->n_infl[v] = 1;
			m->bone[v][0] = m->palette[0];
			m->weight[v][0] = 1;
		}
	}
	free(first_child);
	return RC_OK;
}
