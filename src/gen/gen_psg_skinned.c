/* Skinned model arenas with ground truth (see gen_psg_skinned.h). The truth is computed here
 * from the quantised integers written, independently of the decoders under test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/arena.h"
#include "psgfs/bytes.h"
#include "psgfs/gen_psg.h"
#include "psgfs/gen_psg_objects.h"
#include "psgfs/gen_psg_skinned.h"
#include "psgfs/prng.h"

struct layout {
	uint16_t stride;
	unsigned n;
	struct psgo_vdes_elem el[6];
	uint32_t index_width;
	bool skinned;
};

static const struct layout layouts[GEN_SK_LAYOUTS] = {
    {32,
     6,
     {{PSGO_VT_F, 3, 0, PSGO_ET_XYZ},
      {PSGO_VT_CMP, 1, 12, PSGO_ET_NORMAL},
      {PSGO_VT_SF, 2, 16, PSGO_ET_TEX0},
      {PSGO_VT_UB, 4, 20, PSGO_ET_COLOR},
      {PSGO_VT_UB256, 4, 24, PSGO_ET_INDICES},
      {PSGO_VT_UB, 4, 28, PSGO_ET_WEIGHTS}},
     2,
     true},
    {30,
     5,
     {{PSGO_VT_SF, 3, 0, PSGO_ET_XYZ},
      {PSGO_VT_S1, 3, 8, PSGO_ET_NORMAL},
      {PSGO_VT_S1, 2, 14, PSGO_ET_TEX0},
      {PSGO_VT_UB, 4, 18, PSGO_ET_INDICES},
      {PSGO_VT_S1, 4, 22, PSGO_ET_WEIGHTS}},
     4,
     true},
    {50,
     6,
     {{PSGO_VT_S32K, 3, 0, PSGO_ET_XYZ},
      {PSGO_VT_CMP, 1, 6, PSGO_ET_TANGENT},
      {PSGO_VT_F, 3, 10, PSGO_ET_NORMAL},
      {PSGO_VT_F, 2, 22, PSGO_ET_TEX0},
      {PSGO_VT_UB256, 4, 30, PSGO_ET_INDICES},
      {PSGO_VT_F, 4, 34, PSGO_ET_WEIGHTS}},
     2,
     true},
    {26,
     4,
     {{PSGO_VT_F, 3, 0, PSGO_ET_XYZ},
      {PSGO_VT_CMP, 1, 12, PSGO_ET_NORMAL},
      {PSGO_VT_SF, 2, 16, PSGO_ET_TEX0},
      {PSGO_VT_S1, 3, 20, PSGO_ET_BINORMAL}},
     4,
     false},
};

/* ---- byte writers ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Half bits of a float that is exactly representable as a normal half (or zero). */
static uint16_t half_bits(float f)
{
	uint32_t u = f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	int exp = (int)((u >> 23) & 0xFF) - 127 + 15;

	if ((u & 0x7FFFFFFF) == 0)
		return sign;
	return (uint16_t)(sign | (unsigned)exp << 10 | (u & 0x7FFFFF) >> 13);
}

/* ---- tiny quaternion math for the truth (independent of skate_skeleton.c) ---- */

static void g_qmul(const double a[4], const double b[4], double o[4])
{
	double r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
		       a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
		       a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
		       a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};

	memcpy(o, r, sizeof r);
}

static void g_qmat(const double q[4], double r[3][3])
{
	double x = q[0], y = q[1], z = q[2], w = q[3];

	r[0][0] = 1 - 2 * (y * y + z * z);
	r[0][1] = 2 * (x * y - z * w);
	r[0][2] = 2 * (x * z + y * w);
	r[1][0] = 2 * (x * y + z * w);
	r[1][1] = 1 - 2 * (x * x + z * z);
	r[1][2] = 2 * (y * z - x * w);
	r[2][0] = 2 * (x * z - y * w);
	r[2][1] = 2 * (y * z + x * w);
	r[2][2] = 1 - 2 * (x * x + y * y);
}

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

static enum rc make_bones(struct prng *r, struct gen_skinned_truth *t)
{
	uint32_t n = t->n_bones;
	double(*gq)[4] = xcalloc_n(n, sizeof *gq), (*gt)[3] = xcalloc_n(n, sizeof *gt);
	struct buf tsv;

	t->names = xcalloc_n(n, sizeof *t->names);
	t->parent = xcalloc_n(n, sizeof *t->parent);
	t->ibp = xcalloc_n(n, sizeof *t->ibp);
	t->t = xcalloc_n(n, sizeof *t->t);
	t->q = xcalloc_n(n, sizeof *t->q);
	if (!gq || !gt || !t->names || !t->parent || !t->ibp || !t->t || !t->q) {
		free(gq);
		free(gt);
		return RC_NOMEM;
	}
	buf_init(&tsv);
	buf_puts(&tsv, "bone\tparent\n");
	for (uint32_t i = 0; i < n; i++) {
		double lq[4], lt[3], len = 0, rm[3][3];

		if (i == 0)
			snprintf(t->names[i], sizeof t->names[i], "ROOT");
		else
			snprintf(t->names[i], sizeof t->names[i], "Bone_%03u", i);
		t->parent[i] = i == 0 ? -1 : (int32_t)prng_below(r, i);
		for (int k = 0; k < 4; k++) {
			lq[k] = prng_float(r, -1, 1);
			len += lq[k] * lq[k];
		}
		len = sqrt(len);
		if (len < 1e-3) {
			lq[0] = lq[1] = lq[2] = 0;
			lq[3] = len = 1;
		}
		for (int k = 0; k < 4; k++)
			lq[k] /= len;
		for (int k = 0; k < 3; k++)
			lt[k] = prng_float(r, -1, 1);
		if (i == 0) {
			memcpy(gq[i], lq, sizeof lq);
			memcpy(gt[i], lt, sizeof lt);
		} else {
			uint32_t p = (uint32_t)t->parent[i];

			g_qmul(gq[p], lq, gq[i]);
			g_qmat(gq[p], rm);
			for (int k = 0; k < 3; k++)
				gt[i][k] = gt[p][k] + rm[k][0] * lt[0] + rm[k][1] * lt[1] +
					   rm[k][2] * lt[2];
		}
		/* IBP (row-vector): rows 0-2 = R, row 3 = -t R */
		g_qmat(gq[i], rm);
		for (int a = 0; a < 3; a++) {
			for (int b = 0; b < 3; b++)
				t->ibp[i][4 * a + b] = (float)rm[a][b];
			t->ibp[i][4 * a + 3] = 0;
		}
		for (int b = 0; b < 3; b++)
			t->ibp[i][12 + b] = (float)-(gt[i][0] * rm[0][b] + gt[i][1] * rm[1][b] +
						     gt[i][2] * rm[2][b]);
		t->ibp[i][15] = 1;
		for (int k = 0; k < 3; k++)
			t->t[i][k] = (float)gt[i][k];
		for (int k = 0; k < 4; k++)
			t->q[i][k] = (float)(gq[i][3] < 0 ? -gq[i][k] : gq[i][k]);
		buf_printf(&tsv, "%s\t%s\n", t->names[i], i == 0 ? "-" : t->names[t->parent[i]]);
	}
	free(gq);
	free(gt);
	buf_putc(&tsv, 0);
	{
		size_t len;

		t->hierarchy_tsv = (char *)buf_steal(&tsv, &len);
	}
	return t->hierarchy_tsv ? RC_OK : RC_NOMEM;
}

/* Fill one mesh's vertex bytes and truth. */
static enum rc make_mesh(struct prng *r, const struct gen_skinned_truth *t,
			 struct gen_skinned_mesh_truth *m, const struct layout *L, uint8_t *vb)
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
	if (!m->pos || !m->normal || !m->uv || !m->n_infl || !m->bone || !m->weight ||
	    (m->layout == 0 && !m->color))
		return RC_NOMEM;

	/* palette: distinct bones, a proper subset of the skeleton */
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

	for (uint32_t v = 0; v < n; v++) {
		uint8_t *p = vb + (size_t)v * L->stride;
		uint32_t slots[4] = {0, 0, 0, 0}, wraw[4] = {0, 0, 0, 0};
		float w[4] = {0, 0, 0, 0}, sum = 0;
		unsigned k = 0;

		switch (m->layout) {
		case 0:
		case 3: {
			int32_t nx = (int32_t)prng_below(r, 2047) - 1023;
			int32_t ny = (int32_t)prng_below(r, 2047) - 1023;
			int32_t nz = (int32_t)prng_below(r, 1023) - 511;
			int32_t tu = (int32_t)prng_below(r, 1025),
				tv = (int32_t)prng_below(r, 1025);

			for (int c = 0; c < 3; c++) {
				m->pos[v][c] = prng_float(r, -2, 2);
				put32(p + 4 * c, f32_bits(m->pos[v][c]));
			}
			put32(p + 12, ((uint32_t)nx & 0x7FF) | ((uint32_t)ny & 0x7FF) << 11 |
					  ((uint32_t)nz & 0x3FF) << 22);
			m->normal[v][0] = (float)nx / 1023.0f;
			m->normal[v][1] = (float)ny / 1023.0f;
			m->normal[v][2] = (float)nz / 511.0f;
			m->uv[v][0] = (float)tu / 1024.0f;
			m->uv[v][1] = (float)tv / 1024.0f;
			put16(p + 16, half_bits(m->uv[v][0]));
			put16(p + 18, half_bits(m->uv[v][1]));
			if (m->layout == 0) {
				for (int c = 0; c < 4; c++) {
					p[20 + c] = (uint8_t)prng_below(r, 256);
					m->color[v][c] = (float)p[20 + c] / 255.0f;
				}
			} else {
				for (int c = 0; c < 3; c++)
					put16(p + 20 + 2 * c,
					      (uint16_t)(int16_t)((int32_t)prng_below(r, 65535) -
								  32767));
			}
			break;
		}
		case 1:
			for (int c = 0; c < 3; c++) {
				int32_t kq = (int32_t)prng_below(r, 1025) - 512;
				int32_t s1 = (int32_t)prng_below(r, 65535) - 32767;

				m->pos[v][c] = (float)kq / 256.0f;
				put16(p + 2 * c, half_bits(m->pos[v][c]));
				m->normal[v][c] = (float)s1 / 32767.0f;
				put16(p + 8 + 2 * c, (uint16_t)(int16_t)s1);
			}
			for (int c = 0; c < 2; c++) {
				int32_t s1 = (int32_t)prng_below(r, 65535) - 32767;

				m->uv[v][c] = (float)s1 / 32767.0f;
				put16(p + 14 + 2 * c, (uint16_t)(int16_t)s1);
			}
			break;
		default: { /* 2 */
			int32_t nx = (int32_t)prng_below(r, 2047) - 1023;

			for (int c = 0; c < 3; c++) {
				int32_t kq = (int32_t)prng_below(r, 601) - 300;

				m->pos[v][c] = (float)kq;
				put16(p + 2 * c, (uint16_t)(int16_t)kq);
				m->normal[v][c] = prng_float(r, -1, 1);
				put32(p + 10 + 4 * c, f32_bits(m->normal[v][c]));
			}
			put32(p + 6, (uint32_t)nx & 0x7FF);
			for (int c = 0; c < 2; c++) {
				m->uv[v][c] = prng_float(r, 0, 1);
				put32(p + 22 + 4 * c, f32_bits(m->uv[v][c]));
			}
		}
		}

		if (!L->skinned) {
			m->n_infl[v] = 1;
			m->bone[v][0] = m->palette[0];
			m->weight[v][0] = 1;
			continue;
		}
		/* 1..4 distinct slots; slot 0 of the four may get a zero weight */
		k = 1 + prng_below(r, 4);
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

			switch (m->layout) {
			case 0:
				wraw[j] = zero ? 0 : 1 + prng_below(r, 255);
				w[j] = (float)wraw[j] / 255.0f;
				p[24 + j] = (uint8_t)slots[j];
				p[28 + j] = (uint8_t)wraw[j];
				break;
			case 1:
				wraw[j] = zero ? 0 : 1 + prng_below(r, 32767);
				w[j] = (float)(int16_t)wraw[j] / 32767.0f;
				p[18 + j] = (uint8_t)slots[j];
				put16(p + 22 + 2 * j, (uint16_t)wraw[j]);
				break;
			default:
				w[j] = zero ? 0 : prng_float(r, 0.01f, 1);
				p[30 + j] = (uint8_t)slots[j];
				put32(p + 34 + 4 * j, f32_bits(w[j]));
			}
		}
		/* truth: drop zeros, map through the palette, normalise in slot order */
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
	return RC_OK;
}

enum rc gen_psg_skinned(const struct gen_skinned_opts *o, struct buf *out,
			struct gen_skinned_truth *truth)
{
	struct gen_skinned_truth tt, *t = truth ? truth : &tt;
	struct gen_skinned_opts op = *o;
	struct psg_builder *b = NULL;
	struct prng r;
	enum rc res;
	uint32_t model_idx, mat_idx, total_islands, isl = 0;
	struct psgo_model pm;
	struct psgo_model_layout lay;
	struct psgo_mesh_ref *refs = NULL;
	struct psgo_aabb *iaabb = NULL;
	float(*iarea)[4] = NULL;
	struct psgo_channel *ch = NULL;
	struct psgo_material *mats = NULL;
	char(*mnames)[32] = NULL;
	const char **bnames = NULL;
	struct psg_gen_record rec = {0};

	memset(t, 0, sizeof *t);
	if (!op.n_bones)
		op.n_bones = 12;
	if (!op.n_meshes)
		op.n_meshes = 4;
	if (!op.verts)
		op.verts = 60;
	if (!op.islands)
		op.islands = 3;
	if (!op.tris)
		op.tris = 20;
	if (op.n_bones < 3 || op.n_bones > 4096 || op.n_meshes > 256 ||
	    op.layout >= GEN_SK_LAYOUTS || op.verts > (1u << 22) || op.islands > 64 ||
	    op.tris > (1u << 20))
		return RC_INVAL;
	prng_seed(&r, op.seed ? op.seed : 0x5EED5EED);
	t->n_bones = op.n_bones;
	t->n_meshes = op.n_meshes;
	t->mesh = xcalloc_n(op.n_meshes, sizeof *t->mesh);
	total_islands = op.n_meshes * op.islands;
	refs = xcalloc_n(op.n_meshes, sizeof *refs);
	iaabb = xcalloc_n(total_islands, sizeof *iaabb);
	iarea = xcalloc_n(total_islands, sizeof *iarea);
	ch = xcalloc_n(op.n_meshes, sizeof *ch);
	mats = xcalloc_n(op.n_meshes, sizeof *mats);
	mnames = xcalloc_n(op.n_meshes, sizeof *mnames);
	bnames = xcalloc_n(op.n_bones, sizeof *bnames);
	b = psgb_new(PSGB_REG_MODEL64, 0x5C1A0001u);
	if (b && op.baseres_first)
		psgb_set_order(b, PSGB_ORDER_BASERES_FIRST);
	res = RC_NOMEM;
	if (!t->mesh || !refs || !iaabb || !iarea || !ch || !mats || !mnames || !bnames || !b)
		goto out;
	res = make_bones(&r, t);
	if (res != RC_OK)
		goto out;
	for (uint32_t i = 0; i < op.n_bones; i++)
		bnames[i] = t->names[i];

	psgo_version(b, PSGO_NEW, true);
	for (uint32_t i = 0; i < op.n_meshes; i++) {
		snprintf(mnames[i], sizeof mnames[i], "skin_mat_%u", i);
		ch[i] = (struct psgo_channel){.shader_input = "Name",
					      .image_channel = 0xFFFF,
					      .guid = 0x1000 + i,
					      .stream_name = mnames[i]};
		mats[i] = (struct psgo_material){0, &ch[i], 1};
	}
	mat_idx = psgo_material(b, PSGO_NEW, mats, op.n_meshes);
	model_idx = psgb_reserve(b);
	memset(&pm, 0, sizeof pm);
	pm.n_bones = (uint16_t)op.n_bones;
	pm.ibp = (const float(*)[16])t->ibp;
	pm.names = bnames;
	pm.meshes = refs;
	pm.n_meshes = (uint16_t)op.n_meshes;
	pm.island_aabbs = iaabb;
	pm.island_areas = (const float(*)[4])iarea;
	pm.n_islands = (uint16_t)total_islands;
	psgo_model_layout(&pm, &lay);

	for (uint32_t mi = 0; mi < op.n_meshes; mi++) {
		struct gen_skinned_mesh_truth *m = &t->mesh[mi];
		const struct layout *L;
		uint8_t *vb, *ib;
		uint32_t n_idx = op.islands * op.tris * 3, vbr, vbo, ibr, ibo, vd, mh, stride;
		struct psgo_island *is;
		struct psgo_optimesh om;
		uint16_t *idx16 = NULL;
		uint32_t *idx32 = NULL;

		m->layout = op.layout < 0 ? (int)(mi % GEN_SK_LAYOUTS) : op.layout;
		L = &layouts[m->layout];
		m->skinned = L->skinned;
		m->n_verts = op.verts;
		m->index_width = op.verts > 65535 ? 4 : L->index_width;
		snprintf(m->material, sizeof m->material, "%s", mnames[mi]);
		vb = xcalloc_n(m->n_verts, L->stride);
		ib = xcalloc_n(n_idx, m->index_width);
		is = xcalloc_n(op.islands, sizeof *is);
		m->island_start = xcalloc_n(op.islands, sizeof *m->island_start);
		m->island_count = xcalloc_n(op.islands, sizeof *m->island_count);
		m->tri = xcalloc_n((size_t)op.islands * op.tris, sizeof *m->tri);
		m->tri_island = xcalloc_n((size_t)op.islands * op.tris, sizeof *m->tri_island);
		if (m->index_width == 2)
			idx16 = xcalloc_n(n_idx, 2);
		else
			idx32 = xcalloc_n(n_idx, 4);
		res = RC_NOMEM;
		if (!vb || !ib || !is || !m->island_start || !m->island_count || !m->tri ||
		    !m->tri_island || (!idx16 && !idx32) ||
		    (res = make_mesh(&r, t, m, L, vb)) != RC_OK) {
			free(vb);
			free(ib);
			free(is);
			free(idx16);
			free(idx32);
			goto out;
		}
		m->n_islands = op.islands;
		for (uint32_t k = 0; k < op.islands; k++) {
			is[k] = (struct psgo_island){k * op.tris * 3, op.tris * 3, 5};
			m->island_start[k] = is[k].start_index;
			m->island_count[k] = is[k].index_count;
			for (uint32_t tr = 0; tr < op.tris; tr++) {
				uint32_t ti = k * op.tris + tr;

				for (int c = 0; c < 3; c++) {
					uint32_t vi = prng_below(&r, m->n_verts);

					m->tri[ti][c] = vi;
					if (idx16)
						idx16[3 * ti + c] = (uint16_t)vi;
					else
						idx32[3 * ti + c] = vi;
				}
				m->tri_island[ti] = k;
			}
		}
		m->n_tri = op.islands * op.tris;
		for (uint32_t k = 0; k < op.islands; k++)
			psgo_island_bounds((const float(*)[3])m->pos, m->n_verts, idx16, idx32,
					   is[k].start_index, is[k].index_count, &iaabb[isl + k],
					   iarea[isl + k]);
		if (mi == 0 && op.hostile == GEN_SK_INDEX_PAST_VERTS) {
			if (idx16)
				idx16[1] = (uint16_t)(m->n_verts + 7);
			else
				idx32[1] = m->n_verts + 7;
		}
		for (uint32_t k = 0; k < n_idx; k++) {
			if (idx16)
				put16(ib + 2 * k, idx16[k]);
			else
				put32(ib + 4 * k, idx32[k]);
		}
		if (mi == 0 && op.hostile == GEN_SK_PALETTE_PAST_SKELETON)
			m->palette[m->n_palette - 1] = (uint16_t)(op.n_bones + 3);
		stride = L->stride;
		if (mi == 0 && op.hostile == GEN_SK_STRIDE_TOO_SMALL)
			stride -= 6;

		vbr = psgb_add_base_resource(b, 0x10, vb, (size_t)m->n_verts * L->stride);
		vbo = psgo_vertex_buffer(b, PSGO_NEW, vbr, m->n_verts * L->stride);
		ibr = psgb_add_base_resource(b, 0x10, ib, (size_t)n_idx * m->index_width);
		ibo = psgo_index_buffer(b, PSGO_NEW, ibr, n_idx, m->index_width);
		vd = psgo_vdes(b, PSGO_NEW, L->el, L->n, (uint16_t)stride);
		mh = psgo_mesh_helper(b, PSGO_NEW, &ibo, 1, &vbo, 1);
		memset(&om, 0, sizeof om);
		psgo_bounds((const float(*)[3])m->pos, m->n_verts, &om.bbox);
		om.material = psgb_add_subref(b, mat_idx, psgo_material_offset(mi));
		om.vdes = vd;
		om.mesh_helper = mh;
		om.ib = ibo;
		om.vb = vbo;
		om.island_areas = psgb_add_subref(b, model_idx, lay.areas + 16 * isl);
		om.island_aabbs = psgb_add_subref(b, model_idx, lay.aabbs + 32 * isl);
		om.islands = is;
		om.n_islands = op.islands;
		om.remap = m->palette;
		om.n_remap = m->n_palette;
		refs[mi].mesh = psgo_optimesh(b, PSGO_NEW, &om);
		isl += op.islands;
		free(vb);
		free(ib);
		free(is);
		free(idx16);
		free(idx32);
	}
	{
		float lo[3] = {INFINITY, INFINITY, INFINITY},
		      hi[3] = {-INFINITY, -INFINITY, -INFINITY};

		for (uint32_t mi = 0; mi < op.n_meshes; mi++)
			for (uint32_t v = 0; v < t->mesh[mi].n_verts; v++)
				for (int c = 0; c < 3; c++) {
					lo[c] = fminf(lo[c], t->mesh[mi].pos[v][c]);
					hi[c] = fmaxf(hi[c], t->mesh[mi].pos[v][c]);
				}
		for (int c = 0; c < 3; c++) {
			pm.bbox.min[c] = lo[c];
			pm.bbox.max[c] = hi[c];
		}
	}
	psgo_model(b, model_idx, &pm);
	res = psgb_finish(b, op.shuffle_seed, out, &rec);
	b = NULL;
	if (res == RC_OK && op.hostile == GEN_SK_BONES_PAST_OBJECT && !out->count_only)
		for (size_t i = 0; i < rec.n; i++)
			if (rec.obj[i].type_id == RW_T_RENDERMODEL &&
			    span_ok(out->len, rec.obj[i].start + 0x34, 2))
				put16(out->data + rec.obj[i].start + 0x34, 0xFFFF);
	psg_gen_record_free(&rec);
out:
	if (b)
		psgb_free(b);
	free(refs);
	free(iaabb);
	free(iarea);
	free(ch);
	free(mats);
	free(mnames);
	free(bnames);
	if (res != RC_OK || !truth)
		gen_skinned_truth_free(t);
	return res;
}
