/*
 * Short-lived buffers are sized by their input, not by the largest input. An allocation of
 * 128 KiB or more is fresh pages from mmap under ASan, every time (and under glibc until its
 * threshold adapts): page faults, clearing and unmapping, which were most of what the ASan
 * build's tests spent (tests/README.md, "Where the time goes"). Each case renders or decodes
 * something small and checks the largest single request made on the way; where a buffer must
 * be large (the generator's RefPack tables), that it is allocated once per loop, not per entry.
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
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/refpack_enc.h"

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

/* ---- generator ---- */

/* A sink that keeps nothing: the archive's own buffer is not what is measured. */
static enum rc null_write(void *ctx, uint64_t off, const void *p, size_t n)
{
	uint64_t *end = ctx;

	(void)p;
	if (off + n > *end)
		*end = off + n;
	return RC_OK;
}

static void pattern_fill(void *ctx, uint64_t off, uint8_t *dst, size_t n)
{
	(void)ctx;
	for (size_t i = 0; i < n; i++)
		dst[i] = (uint8_t)((off + i) / 7 ^ (off + i) >> 9); /* packs, but not to nothing */
}

/* n entries of len bytes each, method m, through gen_big_write into a null sink. */
static void gen_entries(uint32_t n, uint64_t len, uint8_t m, size_t *most, size_t *mapped)
{
	struct gen_big_entry e[8];
	uint64_t end = 0;
	struct gen_sink s = {.write_at = null_write, .ctx = &end};

	assert_true(n <= 8);
	for (uint32_t i = 0; i < n; i++)
		e[i] = (struct gen_big_entry){
		    .folder = "data",
		    .name = (const char *[]){"a", "b", "c", "d", "e", "f", "g", "h"}[i],
		    .len = len,
		    .fill = pattern_fill,
		    .method = m,
		    .rp_chain = 4};
	n_mapped = 0;
	LARGEST(*most, assert_int_equal(gen_big_write(NULL, e, n, &s, NULL, NULL), RC_OK));
	*mapped = n_mapped;
	assert_true(end > 0);
}

/* A stored entry of a few KiB asks for a few KiB, not for a 1 MiB copying step. */
static void test_gen_stored(void **state)
{
	size_t most, mapped;

	(void)state;
	gen_entries(8, 3000, GB_STORED, &most, &mapped);
	assert_true(most < MAPPED_FROM);
	assert_int_equal(mapped, 0);
}

/* Whole-entry RefPack: the entry's bytes, the packed bytes and the match tables are allocated
 * once for the archive, not once per entry. */
static void test_gen_refpack_entries(void **state)
{
	size_t most, mapped1, mapped8;

	(void)state;
	gen_entries(1, 200000, GB_REFPACK, &most, &mapped1);
	gen_entries(8, 200000, GB_REFPACK, &most, &mapped8);
	assert_true(mapped1 > 0);
	assert_int_equal(mapped8, mapped1);
}

/* ---- refpack encoder ---- */

/* A chunked entry: one set of tables for all its chunks (64 KiB chunks still hash into 64 Ki
 * heads, 256 KiB: the table size decides the output, so it is kept). */
static void test_refpack_chunks(void **state)
{
	size_t most, mapped;

	(void)state;
	gen_entries(1, 16u * (64u << 10), GB_CHUNK_REFPACK, &most, &mapped);
	assert_true(mapped <= 2);
}

/* Tables reused from a larger input give the bytes fresh tables give. */
static void test_refpack_work_same_bytes(void **state)
{
	static uint8_t big[300000], small[5000];
	struct rp_work w = {0};
	struct buf a, b;

	(void)state;
	pattern_fill(NULL, 0, big, sizeof big);
	pattern_fill(NULL, 12345, small, sizeof small);
	buf_init(&a);
	buf_init(&b);
	assert_int_equal(rp_encode_work(big, sizeof big, NULL, &a, NULL, &w), RC_OK);
	a.len = 0;
	assert_int_equal(rp_encode_work(small, sizeof small, NULL, &a, NULL, &w), RC_OK);
	assert_int_equal(rp_encode(small, sizeof small, NULL, &b), RC_OK);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	rp_work_free(&w);
	buf_free(&a);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vertex_batch),
	    cmocka_unit_test(test_mesh_stats),
	    cmocka_unit_test(test_png_tail),
	    cmocka_unit_test(test_gen_stored),
	    cmocka_unit_test(test_gen_refpack_entries),
	    cmocka_unit_test(test_refpack_chunks),
	    cmocka_unit_test(test_refpack_work_same_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
