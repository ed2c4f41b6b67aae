/* The skinned model generator's skeletons (gen_skinned_int.h): random ones, rig-named ones and
 * skater-shaped ones, with their truth (inverse bind poses, bind poses, hierarchy.tsv). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_skinned_int.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/buf.h"
#include "psgfs/formats/skate_mesh.h"

#define SKATER_REACH 1.5 /* skater skeletons fit in +-1.5 so s16 / 16384 holds every vertex */

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

		gsk_qmul(gq[p], lq, gq[i]);
		gsk_qmat(gq[p], rm);
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

	gsk_qmat(gq, rm);
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

enum rc gsk_make_bones(struct prng *r, struct gen_skinned_truth *t, bool skater, bool rig)
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
