/*
 * The glTF export of Skate models (src/formats/gltf/skate_gltf.c) over generated arenas: the file's
 * container, bounds and byte ranges; one mesh per exported mesh with the decoded positions,
 * UVs, colours and triangles (counter-clockwise as stored); joints and weights from each
 * vertex's skin; the bind pose reproducing every vertex; model space whatever axes the .psk
 * uses; every vertex format, 200 bones, the skater rig, u32 indices and hostile variants.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glb_testutil.h"
#include "psgfs/formats/arena.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/formats/skate_export.h"
#include "psgfs/formats/skate_gltf.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/base/source.h"

struct sx {
	uint8_t *file;
	size_t len;
	struct src_mem m;
	struct src s;
	struct arena a;
	struct gen_skinned_truth t;
	struct skate_scene *sc;
	struct skate_export_model *x;
	struct skate_gltf *g;
	uint8_t *glb;
	size_t n;
	struct glb_doc d;
};

static enum rc sx_render(void *ctx, unsigned part, uint64_t first, struct emit *e)
{
	struct sx *x = ctx;

	return skate_gltf_render(x->g, &x->s, part, first, e);
}

/* Generate, open, plan the export (zup: the .psk's axes, which the .glb must not show). */
static void sx_open(struct sx *x, const struct gen_skinned_opts *o, bool zup)
{
	struct buf b;
	struct diag d;
	enum rc r;

	memset(x, 0, sizeof *x);
	buf_init(&b);
	assert_int_equal(gen_psg_skinned(o, &b, &x->t), RC_OK);
	x->file = buf_steal(&b, &x->len);
	src_init_mem(&x->s, &x->m, x->file, x->len);
	diag_init(&d);
	assert_int_equal(arena_open(&x->s, &x->a, &d), RC_OK);
	assert_int_equal(skate_scene_load(&x->s, &x->a, NULL, &x->sc, &d), RC_OK);
	diag_free(&d);
	assert_int_equal(skate_export_build(&x->s, &x->a, x->sc, zup, true, &x->x), RC_OK);
	assert_int_equal(skate_gltf_open(&x->s, &x->a, x->sc, x->x, NULL, 0, NULL, &x->g, NULL),
			 RC_OK);
	x->glb = glb_whole(skate_gltf_plan(x->g), sx_render, x, &x->n, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(x->n, gltf_size(skate_gltf_plan(x->g)));
	glb_open(x->glb, x->n, &x->d);
	glb_check_views_and_bounds(&x->d);
}

static void sx_free(struct sx *x)
{
	glb_close(&x->d);
	free(x->glb);
	skate_gltf_free(x->g);
	skate_export_free(x->x);
	skate_scene_free(x->sc);
	arena_free(&x->a);
	free(x->file);
	gen_skinned_truth_free(&x->t);
}

static const struct jv *attrs_of(const struct sx *x, size_t mesh)
{
	return jget(jat(jget(jat(jget(&x->d.j, "meshes"), mesh), "primitives"), 0), "attributes");
}

/* Attribute `name` of glTF mesh k equals element el of the decoded mesh (float32 exact). */
static void check_attr(const struct sx *x, size_t k, const char *name,
		       const struct skate_mesh_data *md, int el, unsigned dim)
{
	size_t n;
	unsigned c;
	double *v = glb_acc(&x->d, (size_t)jnum(attrs_of(x, k), name, -1), &n, &c);

	assert_int_equal(n, md->n_verts);
	assert_int_equal(c, dim);
	for (size_t i = 0; i < n; i++)
		for (unsigned j = 0; j < dim; j++) {
			float want =
			    j < md->attr[el].n ? md->attr[el].v[i * md->attr[el].n + j] : 0;

			assert_true((float)v[i * dim + j] == want);
		}
	free(v);
}

/* Indices are the mesh's triangles in island order, as stored (counter-clockwise). */
static void check_indices(const struct sx *x, size_t k, const struct skate_mesh_data *md)
{
	const struct jv *pr = jat(jget(jat(jget(&x->d.j, "meshes"), k), "primitives"), 0);
	size_t n;
	unsigned c;
	double *I = glb_acc(&x->d, (size_t)jnum(pr, "indices", -1), &n, &c);

	assert_int_equal(n, 3 * md->n_tri);
	for (size_t t = 0; t < md->n_tri; t++)
		for (int j = 0; j < 3; j++)
			assert_true(I[t * 3 + j] == md->tri[t][j]);
	assert_int_equal(
	    (uint32_t)jnum(jat(jget(&x->d.j, "accessors"), (size_t)jnum(pr, "indices", -1)),
			   "componentType", 0),
	    md->n_verts > 65535 ? 5125 : 5123);
	free(I);
}

/* JOINTS_0/WEIGHTS_0: each vertex's influences, bones as export joints. */
static void check_skin(const struct sx *x, size_t k, const struct skate_mesh_data *md)
{
	size_t n;
	unsigned c;
	double *J = glb_acc(&x->d, (size_t)jnum(attrs_of(x, k), "JOINTS_0", -1), &n, &c);
	double *W = glb_acc(&x->d, (size_t)jnum(attrs_of(x, k), "WEIGHTS_0", -1), &n, &c);

	for (size_t v = 0; v < n; v++) {
		double sum = 0;

		for (unsigned i = 0; i < 4; i++)
			sum += W[v * 4 + i];
		assert_true(fabs(sum - 1) < 1e-6);
		for (unsigned i = 0; i < md->n_infl[v]; i++) {
			bool found = false;

			for (unsigned j = 0; j < 4; j++)
				found |= J[v * 4 + j] == x->x->pos[md->infl[v][i].bone] &&
					 fabs(W[v * 4 + j] - md->infl[v][i].weight) < 1e-6;
			assert_true(found);
		}
	}
	free(J);
	free(W);
}

/* Every exported mesh against its whole decode. */
static void check_meshes(const struct sx *x)
{
	assert_int_equal(jget(&x->d.j, "meshes")->n, x->x->n_meshes);
	assert_int_equal(jget(jat(jget(&x->d.j, "skins"), 0), "joints")->n, x->x->n_bones);
	for (size_t k = 0; k < x->x->n_meshes; k++) {
		const struct skate_export_mesh *xm = &x->x->meshes[k];
		struct skate_mesh_data *md;

		assert_int_equal(skate_mesh_decode(&x->s, &x->a, x->sc, xm->scene, &md, NULL),
				 RC_OK);
		check_attr(x, k, "POSITION", md, md->pos, 3);
		if (md->tex[0] >= 0)
			check_attr(x, k, "TEXCOORD_0", md, md->tex[0], 2);
		assert_int_equal(jget(attrs_of(x, k), "NORMAL") != NULL, md->normal >= 0);
		assert_int_equal(jget(attrs_of(x, k), "COLOR_0") != NULL, md->color >= 0);
		check_indices(x, k, md);
		check_skin(x, k, md);
		skate_mesh_data_free(md);
	}
	check_bind_pose(&x->d);
}

/* Every generated vertex format (one per mesh), the bind pose, and byte ranges. */
static void test_formats(void **state)
{
	struct gen_skinned_opts o = {.seed = 3, .n_meshes = 5, .layout = -1};
	struct sx x;

	(void)state;
	sx_open(&x, &o, true);
	check_meshes(&x);
	glb_check_ranges(skate_gltf_plan(x.g), sx_render, &x, x.glb, x.n);
	sx_free(&x);
}

/* The .psk's axes do not reach the .glb: Z-up and Y-up plans give the same bytes. */
static void test_axes(void **state)
{
	struct gen_skinned_opts o = {.seed = 4, .n_bones = 20, .n_meshes = 2, .layout = -1};
	struct sx z, y;

	(void)state;
	sx_open(&z, &o, true);
	sx_open(&y, &o, false);
	assert_int_equal(z.n, y.n);
	assert_memory_equal(z.glb, y.glb, z.n);
	check_bind_pose(&z.d);
	sx_free(&z);
	sx_free(&y);
}

/* 200 bones; the skater encodings and rig (several rig roots become one tree). */
static void test_skeletons(void **state)
{
	struct gen_skinned_opts big = {.seed = 5, .n_bones = 200, .n_meshes = 2, .layout = -1};
	struct gen_skinned_opts rig = {
	    .seed = 6, .n_bones = 40, .n_meshes = 3, .layout = GEN_SK_SKATER, .rig_names = true};
	struct sx x;

	(void)state;
	sx_open(&x, &big, true);
	check_meshes(&x);
	sx_free(&x);
	sx_open(&x, &rig, true);
	check_meshes(&x);
	assert_int_equal(jnum(jat(jget(&x.d.j, "skins"), 0), "skeleton", -1), 0);
	sx_free(&x);
}

/* More than 65535 vertices in a mesh: u32 indices. */
static void test_wide(void **state)
{
	struct gen_skinned_opts o = {
	    .seed = 7, .n_meshes = 1, .verts = 70000, .islands = 2, .tris = 100, .layout = 0};
	struct sx x;

	(void)state;
	sx_open(&x, &o, true);
	check_meshes(&x);
	sx_free(&x);
}

/* Hostile variants still export a file the rules accept (bounds, bind pose, skin sums). */
static void test_hostile(void **state)
{
	static const enum gen_skinned_hostile h[] = {
	    GEN_SK_PALETTE_PAST_SKELETON, GEN_SK_INDEX_PAST_VERTS, GEN_SK_STRIDE_TOO_SMALL,
	    GEN_SK_BONES_PAST_OBJECT};

	(void)state;
	for (size_t i = 0; i < sizeof h / sizeof *h; i++) {
		struct gen_skinned_opts o = {
		    .seed = 9, .n_meshes = 3, .layout = -1, .hostile = h[i]};
		struct sx x;

		sx_open(&x, &o, true);
		check_bind_pose(&x.d);
		sx_free(&x);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_formats),   cmocka_unit_test(test_axes),
	    cmocka_unit_test(test_skeletons), cmocka_unit_test(test_wide),
	    cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
