/* The derived .psk of a generated skinned arena, read back through psk_read: counts, faces,
 * weights, and the bone quaternion convention (root plain, children conjugated) checked
 * against the inverse of the stored inverse bind matrices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/formats/psk.h"
#include "psgfs/formats/skate_export.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/base/source.h"

#define FX_EXTRA                                                                                   \
	struct psk_mesh pm;                                                                        \
	bool pskx;
#define FX_EXTRA_FREE(f) psk_mesh_free(&(f)->pm)
#include "arena_fixture.h"

static void fx_make(struct fx *f, const struct gen_skinned_opts *o, const char *tsv_override,
		    bool use_tsv, bool zup)
{
	struct buf b;
	struct diag d;
	uint8_t *psk;
	size_t n;

	fx_gen(f, o);
	diag_init(&d);
	assert_int_equal(skate_scene_load(&f->s, &f->a,
					  tsv_override ? tsv_override
					  : use_tsv    ? f->t.hierarchy_tsv
						       : NULL,
					  &f->sc, &d),
			 RC_OK);
	buf_init(&b);
	assert_int_equal(skate_export_psk(&f->s, &f->a, f->sc, zup, &b, &f->pskx), RC_OK);
	psk = buf_steal(&b, &n);
	assert_non_null(psk);
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(psk_read(psk, n, &f->pm, &d), RC_OK);
	for (size_t i = 0; i < d.n; i++)
		print_message("psk_read: %s\n", d.msg[i]);
	assert_int_equal(d.n, 0);
	diag_free(&d);
	free(psk);
}

/* ---- quaternion helpers (standard right-handed, x y z w) ---- */

static void qmul(const double a[4], const double b[4], double o[4])
{
	double r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
		       a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
		       a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
		       a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};

	memcpy(o, r, sizeof r);
}

static void qmat(const double q[4], double r[3][3])
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

/* Globals of every PSK bone (parents precede children): root plain, children conjugated. */
static void psk_globals(const struct psk_mesh *pm, double (*gq)[4], double (*gt)[3])
{
	for (size_t k = 0; k < pm->n_bones; k++) {
		const struct psk_bone *b = &pm->bones[k];

		if (k == 0) {
			for (int i = 0; i < 4; i++)
				gq[0][i] = b->rot[i];
			for (int i = 0; i < 3; i++)
				gt[0][i] = b->pos[i];
			continue;
		}
		assert_true(b->parent >= 0 && (size_t)b->parent < k);
		double local[4] = {-b->rot[0], -b->rot[1], -b->rot[2], b->rot[3]}, r[3][3];
		const double *pq = gq[b->parent], *pt = gt[b->parent];

		qmul(pq, local, gq[k]);
		qmat(pq, r);
		for (int i = 0; i < 3; i++)
			gt[k][i] =
			    pt[i] + r[i][0] * b->pos[0] + r[i][1] * b->pos[1] + r[i][2] * b->pos[2];
	}
}

/* The global bone frames equal the bind matrices = inverse(IBP): the rotation's columns are
 * the bind rows 0-2 and the translation is row 3. rot: optional extra model rotation. */
static void check_against_bind(const struct fx *f, const double rot[3][3])
{
	size_t n = f->pm.n_bones;
	double(*gq)[4] = calloc(n, sizeof *gq), (*gt)[3] = calloc(n, sizeof *gt);

	psk_globals(&f->pm, gq, gt);
	for (size_t k = 0; k < n; k++) {
		float bind[16];
		double r[3][3], axes[3][3], org[3];

		assert_true(skate_mat4_inverse(f->t.ibp[k], bind));
		for (int i = 0; i < 3; i++) {
			for (int j = 0; j < 3; j++) {
				axes[i][j] = 0;
				for (int c = 0; c < 3; c++)
					axes[i][j] += rot[j][c] * bind[4 * i + c];
			}
			org[i] = 0;
			for (int c = 0; c < 3; c++)
				org[i] += rot[i][c] * bind[12 + c];
		}
		qmat(gq[k], r);
		for (int i = 0; i < 3; i++) {
			assert_true(fabs(gt[k][i] - org[i]) < 1e-3);
			for (int j = 0; j < 3; j++)
				assert_true(fabs(r[j][i] - axes[i][j]) <
					    1e-3); /* column i = axis i */
		}
	}
	free(gq);
	free(gt);
}

static const double ident[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

static void test_roundtrip(void **state)
{
	struct gen_skinned_opts o = {.seed = 42,
				     .n_bones = 15,
				     .n_meshes = 4,
				     .verts = 50,
				     .islands = 2,
				     .tris = 15,
				     .layout = -1,
				     .shuffle_seed = 99};
	struct fx f;
	size_t base = 0, fbase = 0, wi = 0;

	(void)state;
	fx_make(&f, &o, NULL, true, false);
	assert_false(f.pskx);
	assert_false(f.pm.faces32);
	assert_int_equal(f.pm.n_points, 200);
	assert_int_equal(f.pm.n_wedges, 200);
	assert_int_equal(f.pm.n_faces, 4 * 30);
	assert_int_equal(f.pm.n_bones, 15);
	assert_int_equal(f.pm.n_materials, 4);
	for (uint32_t mi = 0; mi < 4; mi++) {
		const struct gen_skinned_mesh_truth *tm = &f.t.mesh[mi];

		assert_string_equal((char *)f.pm.materials[mi].name, tm->material);
		for (uint32_t v = 0; v < tm->n_verts; v++) {
			const struct psk_point *p = &f.pm.points[base + v];
			const struct psk_wedge *w = &f.pm.wedges[base + v];

			assert_true(p->x == tm->pos[v][0] && p->y == tm->pos[v][1] &&
				    p->z == tm->pos[v][2]);
			assert_int_equal(w->point, base + v);
			assert_true(w->u == tm->uv[v][0] && w->v == tm->uv[v][1]);
			assert_int_equal(w->mat, mi);
			/* weights: sorted by point, match the truth (bone order is identity
			 * because the generator's parents precede children) */
			assert_true(wi < f.pm.n_weights);
			{
				float sum = 0;
				unsigned cnt = 0;

				for (; wi < f.pm.n_weights &&
				       (size_t)f.pm.weights[wi].point == base + v;
				     wi++, cnt++) {
					bool found = false;

					sum += f.pm.weights[wi].weight;
					/* slots past the influences: weight 0 on a bone already
					 * named */
					if (cnt >= tm->n_infl[v])
						assert_true(f.pm.weights[wi].weight == 0.0f);
					for (int j = 0; j < tm->n_infl[v]; j++)
						if ((uint32_t)f.pm.weights[wi].bone ==
						    tm->bone[v][j]) {
							if (cnt < tm->n_infl[v])
								assert_true(
								    fabsf(f.pm.weights[wi].weight -
									  tm->weight[v][j]) <
								    1e-6f);
							found = true;
						}
					assert_true(found);
				}
				/* one record per influence slot of the mesh, whatever the vertex */
				assert_true(cnt >= tm->n_infl[v]);
				assert_true(cnt >= 1 && cnt <= 4);
				assert_true(fabsf(sum - 1) < 1e-5f);
			}
		}
		for (uint32_t t = 0; t < tm->n_tri; t++) {
			const struct psk_face *fc = &f.pm.faces[fbase + t];

			assert_int_equal(fc->wedge[0], base + tm->tri[t][0]);
			assert_int_equal(fc->wedge[1], base + tm->tri[t][2]);
			assert_int_equal(fc->wedge[2], base + tm->tri[t][1]);
			assert_int_equal(fc->mat, mi);
		}
		base += tm->n_verts;
		fbase += tm->n_tri;
	}
	assert_int_equal(wi, f.pm.n_weights);
	/* hierarchy and NumChildren */
	for (uint32_t k = 0; k < 15; k++) {
		int32_t kids = 0;

		assert_string_equal((char *)f.pm.bones[k].name, f.t.names[k]);
		assert_int_equal(f.pm.bones[k].parent, k == 0 ? 0 : f.t.parent[k]);
		for (uint32_t c = 1; c < 15; c++)
			kids += f.t.parent[c] == (int32_t)k;
		assert_int_equal(f.pm.bones[k].num_children, kids);
	}
	check_against_bind(&f, ident);
	fx_free(&f);
}

/* Without a hierarchy every bone hangs from bone 0; the globals still match the binds. */
static void test_default_hierarchy(void **state)
{
	struct gen_skinned_opts o = {.seed = 43, .n_bones = 9, .n_meshes = 2};
	struct fx f;

	(void)state;
	fx_make(&f, &o, NULL, false, false);
	assert_int_equal(f.pm.bones[0].num_children, 8);
	for (size_t k = 1; k < 9; k++)
		assert_int_equal(f.pm.bones[k].parent, 0);
	check_against_bind(&f, ident);
	/* the root is stored plain: equal to the truth's bind rotation (up to sign) */
	{
		const float *q = f.pm.bones[0].rot, *t = f.t.q[0];
		bool same = true, neg = true;

		for (int i = 0; i < 4; i++) {
			same &= fabsf(q[i] - t[i]) < 1e-4f;
			neg &= fabsf(q[i] + t[i]) < 1e-4f;
		}
		assert_true(same || neg);
	}
	/* a child is conjugated: its stored w and xyz differ from the plain local rotation */
	{
		double pq[4], cq[4], lq[4], inv[4];

		for (int i = 0; i < 4; i++) {
			pq[i] = f.t.q[0][i];
			cq[i] = f.t.q[1][i];
		}
		inv[0] = -pq[0], inv[1] = -pq[1], inv[2] = -pq[2], inv[3] = pq[3];
		qmul(inv, cq, lq); /* plain local rotation of bone 1 */
		double s = lq[3] * f.pm.bones[1].rot[3] >= 0 ? 1 : -1;
		for (int i = 0; i < 3; i++)
			assert_true(fabs(f.pm.bones[1].rot[i] + s * lq[i]) < 1e-4);
		assert_true(fabs(f.pm.bones[1].rot[3] - s * lq[3]) < 1e-4);
	}
	fx_free(&f);
}

/* zup: +90 degrees about X for points and bones alike. */
static void test_zup(void **state)
{
	struct gen_skinned_opts o = {.seed = 44, .n_bones = 7, .n_meshes = 2};
	static const double rx[3][3] = {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}};
	struct fx f, g;

	(void)state;
	fx_make(&f, &o, NULL, true, true);
	fx_make(&g, &o, NULL, true, false);
	assert_int_equal(f.pm.n_points, g.pm.n_points);
	for (size_t i = 0; i < f.pm.n_points; i++) {
		assert_true(f.pm.points[i].x == g.pm.points[i].x);
		assert_true(f.pm.points[i].y == -g.pm.points[i].z);
		assert_true(f.pm.points[i].z == g.pm.points[i].y);
	}
	check_against_bind(&f, rx);
	/* parent-relative transforms of children do not change */
	for (size_t k = 1; k < f.pm.n_bones; k++)
		for (int i = 0; i < 3; i++)
			assert_true(fabsf(f.pm.bones[k].pos[i] - g.pm.bones[k].pos[i]) < 1e-4f);
	fx_free(&f);
	fx_free(&g);
}

/* Several roots and a parent after its child: parents-first order, one root. */
static void test_reorder(void **state)
{
	struct gen_skinned_opts o = {.seed = 45, .n_bones = 5, .n_meshes = 1};
	const char *tsv = "ROOT\tBone_003\nBone_003\t-\nBone_001\t-\nBone_002\tBone_001\n"
			  "Bone_004\tBone_002\n";
	struct fx f;
	static const char *const want[] = {"Bone_001", "Bone_002", "Bone_003", "ROOT", "Bone_004"};

	(void)state;
	fx_make(&f, &o, tsv, true, false);
	/* roots 1 and 3: 1 first; 2 (child of 1); 3 (extra root -> parent 0); 0 (child of 3);
	 * 4 (child of 2) */
	for (int k = 0; k < 5; k++)
		assert_string_equal((char *)f.pm.bones[k].name, want[k]);
	assert_int_equal(f.pm.bones[2].parent, 0);
	assert_int_equal(f.pm.bones[3].parent, 2);
	assert_int_equal(f.pm.bones[4].parent, 1);
	/* globals still equal the binds, with the truth's bones permuted */
	{
		double(*gq)[4] = calloc(5, sizeof *gq), (*gt)[3] = calloc(5, sizeof *gt);
		static const int src[] = {1, 2, 3, 0, 4};

		psk_globals(&f.pm, gq, gt);
		for (int k = 0; k < 5; k++)
			for (int i = 0; i < 3; i++)
				assert_true(fabs(gt[k][i] - f.t.t[src[k]][i]) < 1e-4);
		free(gq);
		free(gt);
	}
	/* weights point at export indices: global bone b is exported at pos[b] */
	for (size_t i = 0; i < f.pm.n_weights; i++)
		assert_true(f.pm.weights[i].bone >= 0 && f.pm.weights[i].bone < 5);
	fx_free(&f);
}

/* More than 65536 wedges: FACE3200 and .pskx. */
static void test_pskx(void **state)
{
	struct gen_skinned_opts o = {.seed = 46,
				     .n_bones = 4,
				     .n_meshes = 1,
				     .verts = 70000,
				     .islands = 1,
				     .tris = 50,
				     .layout = 0};
	struct fx f;

	(void)state;
	fx_make(&f, &o, NULL, true, false);
	assert_true(f.pskx);
	assert_true(f.pm.faces32);
	assert_int_equal(f.pm.n_points, 70000);
	assert_int_equal(f.pm.n_wedges, 70000);
	assert_int_equal(f.pm.n_faces, 50);
	assert_int_equal(f.pm.wedges[69999].point, 69999);
	for (uint32_t t = 0; t < 50; t++)
		assert_int_equal(f.pm.faces[t].wedge[1], f.t.mesh[0].tri[t][2]);
	fx_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip), cmocka_unit_test(test_default_hierarchy),
	    cmocka_unit_test(test_zup),	      cmocka_unit_test(test_reorder),
	    cmocka_unit_test(test_pskx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
