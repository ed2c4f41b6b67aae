/* Skinned model arenas with ground truth (see gen_psg_skinned.h). The truth is computed here
 * from the quantised integers written, independently of the decoders under test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_skinned_x360.h"
#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/prng.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_x360.h"

#define SKATER_REACH 1.5  /* skater skeletons fit in +-1.5 so s16 / 16384 holds every vertex */
#define SKATER_LOCAL 0.1f /* skater vertices lie within 0.1 of their first bone, per axis */

struct layout {
	uint16_t stride;
	unsigned n;
	struct psgo_vdes_elem el[6];
	uint32_t index_width;
	bool skinned;
	uint8_t idx_off, w_off; /* blend indices and weights (skinned layouts) */
	const char *pos_encoding;
};

static const struct layout layouts[GEN_SK_PRESETS] = {
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

/* ---- skeleton ---- */

/* A random unit quaternion and a translation in [-1, 1]^3, bone-local. */
static void random_pose(struct prng *r, double lq[4], double lt[3])
{
	double len = 0;

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
}

/* Model-space poses gq/gt of every bone (parents precede children); a parent is drawn for
 * each bone unless t->parent holds them already (rig names). */
static void bone_poses(struct prng *r, struct gen_skinned_truth *t, bool have_parents,
		       double (*gq)[4], double (*gt)[3])
{
	for (uint32_t i = 0; i < t->n_bones; i++) {
		double lq[4], lt[3], rm[3][3];

		if (!have_parents)
			t->parent[i] = i == 0 ? -1 : (int32_t)prng_below(r, i);
		random_pose(r, lq, lt);
		if (t->parent[i] < 0) {
			memcpy(gq[i], lq, sizeof lq);
			memcpy(gt[i], lt, sizeof lt);
			continue;
		}
		uint32_t p = (uint32_t)t->parent[i];

		g_qmul(gq[p], lq, gq[i]);
		g_qmat(gq[p], rm);
		for (int k = 0; k < 3; k++)
			gt[i][k] =
			    gt[p][k] + rm[k][0] * lt[0] + rm[k][1] * lt[1] + rm[k][2] * lt[2];
	}
}

/* Truth of bone i from its model-space pose: IBP (row-vector: rows 0-2 = R, row 3 = -t R),
 * bind translation and rotation (w >= 0). */
static void bone_truth(struct gen_skinned_truth *t, uint32_t i, const double gq[4],
		       const double gt[3])
{
	double rm[3][3];

	g_qmat(gq, rm);
	for (int a = 0; a < 3; a++) {
		for (int b = 0; b < 3; b++)
			t->ibp[i][4 * a + b] = (float)rm[a][b];
		t->ibp[i][4 * a + 3] = 0;
	}
	for (int b = 0; b < 3; b++)
		t->ibp[i][12 + b] =
		    (float)-(gt[0] * rm[0][b] + gt[1] * rm[1][b] + gt[2] * rm[2][b]);
	t->ibp[i][15] = 1;
	for (int k = 0; k < 3; k++)
		t->t[i][k] = (float)gt[k];
	for (int k = 0; k < 4; k++)
		t->q[i][k] = (float)(gq[3] < 0 ? -gq[k] : gq[k]);
}

/* Scale every bone position so the skeleton fits in +-reach (skater positions are s16 /
 * 16384: at most 2 model units). A uniform scale keeps every rotation. */
static void fit_reach(double (*gt)[3], uint32_t n, double reach)
{
	double m = 0;

	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			m = fmax(m, fabs(gt[i][k]));
	if (m <= reach)
		return;
	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			gt[i][k] *= reach / m;
}

/* The "bone<TAB>parent" file of the truth's hierarchy. */
static enum rc hierarchy_text(struct gen_skinned_truth *t)
{
	struct buf tsv;
	size_t len;

	buf_init(&tsv);
	buf_puts(&tsv, "bone\tparent\n");
	for (uint32_t i = 0; i < t->n_bones; i++)
		buf_printf(&tsv, "%s\t%s\n", t->names[i],
			   t->parent[i] < 0 ? "-" : t->names[t->parent[i]]);
	buf_putc(&tsv, 0);
	t->hierarchy_tsv = (char *)buf_steal(&tsv, &len);
	return t->hierarchy_tsv ? RC_OK : RC_NOMEM;
}

/* Default names: "ROOT", "Bone_001", ... */
static void plain_names(struct gen_skinned_truth *t)
{
	for (uint32_t i = 0; i < t->n_bones; i++) {
		if (i == 0)
			snprintf(t->names[i], sizeof t->names[i], "ROOT");
		else
			snprintf(t->names[i], sizeof t->names[i], "Bone_%03u", i);
	}
}

/* A rig name in one of three spellings: as in the table, lower case, or capitalised. */
static void mixed_case(struct prng *r, const char *rig, char out[32])
{
	unsigned style = prng_below(r, 3);
	size_t i;

	for (i = 0; rig[i] && i < 31; i++) {
		char c = rig[i];

		if (style == 1 || (style == 2 && i > 0))
			c = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
		out[i] = c;
	}
	out[i] = 0;
}

/*
 * Rig names: a random subset of the skater rig in table order (so parents come first),
 * spelled in mixed case, each hanging from its nearest chosen rig ancestor (a root when none
 * is chosen); then `extras` bones that are no rig bones ("Prop_NN"), hanging from the first
 * root. This is the truth the decoder's rig hierarchy must find.
 */
static void rig_names(struct prng *r, struct gen_skinned_truth *t, uint32_t extras)
{
	int32_t model_of[SKATE_RIG_BONES];
	uint32_t want = t->n_bones - extras, n = 0;
	int32_t first_root = -1;

	for (uint32_t k = 0; k < SKATE_RIG_BONES; k++) {
		int32_t p = skate_rig[k].parent;

		model_of[k] = -1;
		if (n == want || prng_below(r, SKATE_RIG_BONES - k) >= want - n)
			continue; /* selection sampling: exactly `want` of the table */
		while (p >= 0 && model_of[p] < 0)
			p = skate_rig[p].parent;
		model_of[k] = (int32_t)n;
		mixed_case(r, skate_rig[k].name, t->names[n]);
		t->parent[n] = p >= 0 ? model_of[p] : -1;
		if (p < 0 && first_root < 0)
			first_root = (int32_t)n;
		n++;
	}
	for (; n < t->n_bones; n++) {
		snprintf(t->names[n], sizeof t->names[n], "Prop_%02u", n - want);
		t->parent[n] = first_root;
	}
}

/*
 * Skater-shaped skeletons (--skater): the bones of the rig's HIPS tree, the body first (the
 * spine, neck and head, arms, legs: a T-pose in the game's Y-up, facing +Z, about 1.5 units
 * tall), then the rest of that tree in table order (fingers, twist and helper bones, face)
 * a little beyond their parent; one root, HIPS. Offsets are parent-relative; the rig table
 * gives names and parents, these positions are ours (a plausible rest pose).
 */
static const struct {
	uint8_t rig; /* index into skate_rig */
	float off[3];
} skater_body[] = {
    {1, {0, 0.92f, 0}},	       /* HIPS */
    {2, {0, 0.08f, 0}},	       /* SPINE */
    {3, {0, 0.09f, 0}},	       /* SPINE1 */
    {4, {0, 0.09f, 0}},	       /* SPINE2 */
    {5, {0, 0.09f, 0}},	       /* SPINE3 */
    {6, {0, 0.08f, 0}},	       /* NECK */
    {7, {0, 0.04f, 0}},	       /* NECK1 */
    {8, {0, 0.07f, 0.01f}},    /* HEAD */
    {9, {-0.04f, 0.04f, 0}},   /* RIGHTSHOULDER */
    {10, {-0.12f, 0, 0}},      /* RIGHTARM */
    {11, {-0.26f, 0, 0}},      /* RIGHTFOREARM */
    {12, {-0.24f, 0, 0}},      /* RIGHTHAND */
    {13, {0.04f, 0.04f, 0}},   /* LEFTSHOULDER */
    {14, {0.12f, 0, 0}},       /* LEFTARM */
    {15, {0.26f, 0, 0}},       /* LEFTFOREARM */
    {16, {0.24f, 0, 0}},       /* LEFTHAND */
    {17, {-0.09f, -0.04f, 0}}, /* RIGHTUPLEG */
    {18, {0, -0.40f, 0.01f}},  /* RIGHTLEG */
    {19, {0, -0.40f, -0.02f}}, /* RIGHTFOOT */
    {20, {0, -0.06f, 0.12f}},  /* RIGHTTOEBASE */
    {21, {0.09f, -0.04f, 0}},  /* LEFTUPLEG */
    {22, {0, -0.40f, 0.01f}},  /* LEFTLEG */
    {23, {0, -0.40f, -0.02f}}, /* LEFTFOOT */
    {24, {0, -0.06f, 0.12f}},  /* LEFTTOEBASE */
};
#define SKATER_BODY (sizeof skater_body / sizeof skater_body[0])

static bool in_hips_tree(uint32_t k)
{
	int32_t p = (int32_t)k;

	while (p >= 0 && p != 1)
		p = skate_rig[p].parent;
	return p == 1;
}

/* The rig bones of a skater in model order (body first, then the HIPS tree in table order),
 * each rig index once; returns how many (at most SKATE_RIG_BONES). */
static uint32_t skater_order(uint8_t *order)
{
	bool taken[SKATE_RIG_BONES] = {0};
	uint32_t n = 0;

	for (uint32_t i = 0; i < SKATER_BODY; i++) {
		order[n++] = skater_body[i].rig;
		taken[skater_body[i].rig] = true;
	}
	for (uint32_t k = 0; k < SKATE_RIG_BONES; k++)
		if (!taken[k] && in_hips_tree(k))
			order[n++] = (uint8_t)k;
	return n;
}

/* Parent-relative rest offset of rig bone k: the body's table, else a short step on from
 * its parent, fanned out by its index so siblings do not coincide. */
static void skater_offset(uint32_t k, double off[3])
{
	for (uint32_t i = 0; i < SKATER_BODY; i++)
		if (skater_body[i].rig == k) {
			for (int c = 0; c < 3; c++)
				off[c] = skater_body[i].off[c];
			return;
		}
	off[0] = 0.004 * (double)(k % 7) - 0.012;
	off[1] = 0.02;
	off[2] = 0.015 + 0.002 * (double)(k % 5);
}

/*
 * A skater: the first n_bones of skater_order (names from the rig in mixed case with
 * --rig-names, else plain), each hanging from its nearest chosen ancestor (HIPS, bone 0, is
 * always chosen: one root); bones past the HIPS tree are "Prop_NN" at the hips. Rest pose:
 * identity rotations, positions the sum of the offsets down the rig.
 */
static void skater_bones(struct prng *r, struct gen_skinned_truth *t, bool rig, double (*gq)[4],
			 double (*gt)[3])
{
	uint8_t order[SKATE_RIG_BONES];
	int32_t model_of[SKATE_RIG_BONES];
	uint32_t n_rig = skater_order(order), n = t->n_bones < n_rig ? t->n_bones : n_rig;
	double pos[SKATE_RIG_BONES][3];

	for (uint32_t k = 0; k < SKATE_RIG_BONES; k++) {
		int32_t p = skate_rig[k].parent;
		double off[3];

		model_of[k] = -1;
		skater_offset(k, off);
		for (int c = 0; c < 3; c++) /* parents precede children in the table */
			pos[k][c] = (p >= 0 ? pos[p][c] : 0) + off[c];
	}
	for (uint32_t i = 0; i < n; i++) {
		int32_t p = skate_rig[order[i]].parent;

		while (p >= 0 && model_of[p] < 0)
			p = skate_rig[p].parent;
		model_of[order[i]] = (int32_t)i;
		t->parent[i] = i == 0 ? -1 : p >= 0 ? model_of[p] : 0;
		if (rig)
			mixed_case(r, skate_rig[order[i]].name, t->names[i]);
		else if (i == 0)
			snprintf(t->names[i], sizeof t->names[i], "ROOT");
		else
			snprintf(t->names[i], sizeof t->names[i], "Bone_%03u", i);
		memcpy(gt[i], pos[order[i]], sizeof gt[i]);
	}
	for (uint32_t i = n; i < t->n_bones; i++) {
		snprintf(t->names[i], sizeof t->names[i], "Prop_%02u", i - n);
		t->parent[i] = 0;
		memcpy(gt[i], pos[1], sizeof gt[i]);
		gt[i][2] += 0.05;
	}
	for (uint32_t i = 0; i < t->n_bones; i++) {
		gq[i][0] = gq[i][1] = gq[i][2] = 0;
		gq[i][3] = 1;
	}
}

static enum rc make_bones(struct prng *r, struct gen_skinned_truth *t, bool skater, bool rig)
{
	uint32_t n = t->n_bones;
	double(*gq)[4] = xcalloc_n(n, sizeof *gq), (*gt)[3] = xcalloc_n(n, sizeof *gt);
	enum rc res = RC_NOMEM;

	t->names = xcalloc_n(n, sizeof *t->names);
	t->parent = xcalloc_n(n, sizeof *t->parent);
	t->ibp = xcalloc_n(n, sizeof *t->ibp);
	t->t = xcalloc_n(n, sizeof *t->t);
	t->q = xcalloc_n(n, sizeof *t->q);
	if (gq && gt && t->names && t->parent && t->ibp && t->t && t->q) {
		if (skater) {
			skater_bones(r, t, rig, gq, gt);
		} else {
			if (rig)
				rig_names(r, t,
					  t->n_bones > SKATE_RIG_BONES
					      ? t->n_bones - SKATE_RIG_BONES
					  : t->n_bones >= 8 ? 2
							    : 0);
			else
				plain_names(t);
			bone_poses(r, t, rig, gq, gt);
		}
		if (skater)
			fit_reach(gt, n, SKATER_REACH);
		for (uint32_t i = 0; i < n; i++)
			bone_truth(t, i, gq[i], gt[i]);
		res = hierarchy_text(t);
	}
	free(gq);
	free(gt);
	return res;
}

/* ---- meshes ---- */

/* Palette: distinct bones, a proper subset of the skeleton (one bone for static meshes). */
static enum rc make_palette(struct prng *r, const struct gen_skinned_truth *t,
			    struct gen_skinned_mesh_truth *m, const struct layout *L)
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

	put32(p,
	      ((uint32_t)nx & 0x7FF) | ((uint32_t)ny & 0x7FF) << 11 | ((uint32_t)nz & 0x3FF) << 22);
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
		put32(p + 4 * c, f32_bits(m->pos[v][c]));
	}
	memcpy(m->normal[v], n, sizeof n);
	m->uv[v][0] = (float)tu / 1024.0f;
	m->uv[v][1] = (float)tv / 1024.0f;
	put16(p + 16, half_bits(m->uv[v][0]));
	put16(p + 18, half_bits(m->uv[v][1]));
	if (m->layout == 0) {
		for (int c = 0; c < 4; c++) {
			p[20 + c] = (uint8_t)prng_below(r, 256);
			m->color[v][c] = (float)p[20 + c] / 255.0f;
		}
		return;
	}
	for (int c = 0; c < 3; c++)
		put16(p + 20 + 2 * c, (uint16_t)(int16_t)((int32_t)prng_below(r, 65535) - 32767));
}

/* Layout 1: SF position, S1 normal and uv. */
static void attrs_half(struct prng *r, struct gen_skinned_mesh_truth *m, uint32_t v, uint8_t *p)
{
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
}

/* Layout 2: S32K position (raw integers), CMP tangent, F32 normal and uv. */
static void attrs_s32k(struct prng *r, struct gen_skinned_mesh_truth *m, uint32_t v, uint8_t *p)
{
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

/* One weight of a skinned layout: stored at p, returned as the decoder must read it. */
static float put_weight(struct prng *r, int layout, bool zero, uint8_t *p, unsigned j)
{
	uint32_t raw;
	float w;

	switch (layout) {
	case 1: /* S1: s16 / 32767 */
		raw = zero ? 0 : 1 + prng_below(r, 32767);
		put16(p + 2 * j, (uint16_t)raw);
		return (float)(int16_t)raw / 32767.0f;
	case 2: /* F32 */
		w = zero ? 0 : prng_float(r, 0.01f, 1);
		put32(p + 4 * j, f32_bits(w));
		return w;
	default: /* UB (0) and UB256 (skater): byte / 255 */
		raw = zero ? 0 : 1 + prng_below(r, 255);
		p[j] = (uint8_t)raw;
		return (float)raw / 255.0f;
	}
}

/* 1..4 distinct palette slots with weights (the first never zero), and the truth: zeros
 * dropped, slots mapped through the palette, weights normalised in slot order. */
static void vertex_skin(struct prng *r, struct gen_skinned_mesh_truth *m, const struct layout *L,
			uint32_t v, uint8_t *p)
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
	g_qmat(q, rm);
	for (int c = 0; c < 3; c++) {
		/* A body around the bones: along the bone towards its first child (a limb, the
		 * spine), within SKATER_LOCAL of that line. */
		double seg = ch >= 0 ? along * (t->t[ch][c] - t->t[b][c]) : 0;
		double x = t->t[b][c] + seg + rm[c][0] * l[0] + rm[c][1] * l[1] + rm[c][2] * l[2];
		long s = lrint(x * 16384.0);

		s = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
		put16(p + 2 * c, (uint16_t)(int16_t)s);
		m->pos[v][c] = (float)s / 16384.0f;
	}
	put16(p + 6, 16384);
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
		put16(p + 12 + 2 * c, (uint16_t)(int16_t)s1);
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
static enum rc make_mesh(struct prng *r, const struct gen_skinned_truth *t,
			 struct gen_skinned_mesh_truth *m, const struct layout *L, uint8_t *vb)
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
			put16(x->bytes + 2 * k, x->i16[k]);
		else
			put32(x->bytes + 4 * k, x->i32[k]);
	}
	if (mi == 0 && g->op.hostile == GEN_SK_PALETTE_PAST_SKELETON)
		m->palette[m->n_palette - 1] = (uint16_t)(g->op.n_bones + 3);
	if (mi == 0 && g->op.hostile == GEN_SK_STRIDE_TOO_SMALL)
		stride -= 6;
	return stride;
}

/* A vertex layout on either platform. */
struct mesh_layout {
	const struct layout *ps3;
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
static uint8_t *to_x360(struct gen_skinned_mesh_truth *m, const struct layout *L,
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
	res = vb ? make_mesh(&g->r, g->t, m, ml.ps3, vb) : RC_NOMEM;
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
		put32(o + 0x60 + 12 * k, 0);
		put32(o + 0x60 + 12 * k + 4, total);
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
				put16(out->data + rec.obj[i].start + 0x34, 0xFFFF);
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
		res = make_bones(&g.r, g.t, g.op.layout == GEN_SK_SKATER, g.op.rig_names);
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
