/*
 * Short-lived buffers are sized by their input, not by the largest input. An allocation of
 * 128 KiB or more is fresh pages from mmap under ASan, every time (and under glibc until its
 * threshold adapts): page faults, clearing and unmapping, which were most of what the ASan
 * build's tests spent (tests/README.md, "Where the time goes"). Each case renders or decodes
 * something small and checks the largest single request made on the way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc_count.h"
#include "arena_fixture.h"
#include "psgfs/base/emit.h"
#include "psgfs/formats/png.h"

/* Where ASan's size-class allocator ends (its largest class, less the chunk header). */
#define MAPPED_FROM (128u << 10)

/* most = the largest single request the statement makes */
#define LARGEST(most, stmt)                                                                        \
	do {                                                                                       \
		max_req = 0;                                                                       \
		stmt;                                                                              \
		(most) = max_req;                                                                  \
	} while (0)

static void skinned(struct fx *f, uint32_t verts)
{
	struct gen_skinned_opts o = {.seed = 7,
				     .n_bones = 8,
				     .n_meshes = 1,
				     .verts = verts,
				     .islands = 1,
				     .tris = 40,
				     .layout = -1};

	fx_gen(f, &o);
	assert_int_equal(skate_scene_load(&f->s, &f->a, NULL, &f->sc, NULL), RC_OK);
}

/* A batch of a few hundred vertices asks for room for those, not for SKATE_VBATCH_MAX. */
static void test_vertex_batch(void **state)
{
	struct fx f;
	struct skate_vbatch b;
	size_t most;

	(void)state;
	skinned(&f, 300);
	skate_vbatch_init(&b);
	LARGEST(most,
		assert_int_equal(skate_mesh_read_vertices(&f.s, &f.a, f.sc, 0, 0, 300, &b), RC_OK));
	assert_int_equal(b.count, 300);
	assert_true(most < 32u << 10);
	/* reused: a smaller batch asks for nothing, a larger one grows it */
	LARGEST(most,
		assert_int_equal(skate_mesh_read_vertices(&f.s, &f.a, f.sc, 0, 10, 20, &b), RC_OK));
	assert_int_equal(most, 0);
	skate_vbatch_free(&b);
	fx_free(&f);

	skinned(&f, 9000); /* a full batch: room for the elements this mesh has */
	skate_vbatch_init(&b);
	LARGEST(most, assert_int_equal(skate_mesh_read_vertices(&f.s, &f.a, f.sc, 0, 0, 9000, &b),
				       RC_OK));
	assert_int_equal(b.count, SKATE_VBATCH_MAX);
	assert_true(b.n_elem < SKATE_MAX_ELEMS);
	assert_int_equal(most, (size_t)b.n_elem * SKATE_VBATCH_MAX * 4 * sizeof(float));
	skate_vbatch_free(&b);
	fx_free(&f);
}

/* The statistics pass reads a large mesh in buffers below the mapped sizes. */
static void test_mesh_stats(void **state)
{
	struct fx f;
	struct skate_mesh_stats *st = NULL;
	size_t most;

	(void)state;
	skinned(&f, 60000);
	LARGEST(most,
		assert_int_equal(skate_mesh_stats_build(&f.s, &f.a, f.sc, 0, &st, NULL), RC_OK));
	assert_non_null(st);
	assert_true(most < MAPPED_FROM);
	skate_mesh_stats_free(st);
	fx_free(&f);
}

static enum rc grey_rows(const void *ctx, uint32_t y0, uint32_t n, uint8_t *px)
{
	const uint32_t *w = ctx;

	memset(px, (int)(y0 & 0xFF), (size_t)n * *w * 4);
	return RC_OK;
}

/* A PNG's tail (the Adler-32 of every row) takes the rows in bands below the mapped sizes. */
static void test_png_tail(void **state)
{
	static const uint32_t widths[] = {1, 512, 4096, 40000};
	size_t most;

	(void)state;
	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		uint32_t w = widths[i];
		struct pngs p;
		struct emit e;
		uint64_t n;
		uint32_t size;

		assert_int_equal(pngs_init(&p, w, 1024, true, grey_rows, &w), RC_OK);
		pngs_part(&p, 3, &n, &size);
		emit_init_window(&e, 0, size);
		LARGEST(most, assert_int_equal(pngs_render(&p, 3, 0, &e), RC_OK));
		assert_int_equal(e.b.len, size);
		/* one row is the least a band can be */
		assert_true(most < MAPPED_FROM || most <= (size_t)w * 4);
		emit_free(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vertex_batch),
	    cmocka_unit_test(test_mesh_stats),
	    cmocka_unit_test(test_png_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
