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
#include "psgfs/base/diag.h"
#include "psgfs/base/emit.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/png.h"
#include "psgfs/formats/psk.h"
#include "psgfs/formats/psk_gltf.h"
#include "psgfs/formats/world_objects.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_psk.h"
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

/* ---- PSA glTF ---- */

struct psa_fx {
	struct psa_anim anim;
	struct buf file;
	struct src s;
	struct src_mem sm;
	struct psa_index ix;
	struct psk_gltf *g;
};

/* 70 bones (two blocks of bones), 300 frames (a whole block, 64 x 256, and more), scale. */
static void psa_fx_open(struct psa_fx *x)
{
	struct gen_psa_opts o;
	struct diag d;

	memset(x, 0, sizeof *x);
	gen_psa_opts_default(&o, 14);
	o.bones = 70;
	o.sequences = 1;
	o.max_frames = 300;
	o.overlap = true; /* frames: max_frames exactly */
	o.scale_keys = true;
	assert_int_equal(gen_psa_anim(&o, &x->anim), RC_OK);
	assert_int_equal(x->anim.seqs[0].num_raw_frames, 300);
	buf_init(&x->file);
	assert_int_equal(psa_write(&x->anim, &x->file), RC_OK);
	src_init_mem(&x->s, &x->sm, x->file.data, x->file.len);
	diag_init(&d);
	assert_int_equal(psa_index_open(&x->s, &x->ix, &d), RC_OK);
	diag_free(&d);
	assert_int_equal(psa_gltf_open(&x->s, &x->ix, "anim", -1, &x->g), RC_OK);
}

static void psa_fx_close(struct psa_fx *x)
{
	psk_gltf_free(x->g);
	psa_index_free(&x->ix);
	buf_free(&x->file);
	psa_anim_free(&x->anim);
}

/* Every binary part, each into a buffer made beforehand; the largest request of the renders. */
static size_t psa_render_parts(struct psa_fx *x, const struct psk_gltf_cache *cache)
{
	const struct gltf_plan *p = psk_gltf_plan(x->g);
	size_t most = 0, one;

	for (unsigned i = 0; i < gltf_n_parts(p); i++) {
		uint64_t n;
		uint32_t sz;
		struct emit e;

		gltf_part(p, i, &n, &sz);
		if (!sz || !n)
			continue; /* the JSON: not what this is about */
		emit_init_window(&e, 0, SIZE_MAX);
		buf_prealloc(&e.b, (size_t)(n * sz));
		LARGEST(one,
			assert_int_equal(psk_gltf_render(x->g, &x->s, cache, i, 0, &e), RC_OK));
		assert_int_equal(e.b.len, n * sz);
		most = one > most ? one : most;
		emit_free(&e);
	}
	return most;
}

/* Without a cache a render converts the keys it asks for, not a block of 16,384 (640 KB). */
static void test_psa_keys_uncached(void **state)
{
	struct psa_fx x;

	(void)state;
	psa_fx_open(&x);
	assert_true(psa_render_parts(&x, NULL) < MAPPED_FROM);
	psa_fx_close(&x);
}

/* A cache that keeps every block; what each load asks for besides the block it makes. */
struct keep {
	void *data[64];
	void (*dtor[64])(void *);
	uint64_t key[64];
	size_t n, block_max, extra_max;
};

static void *keep_get(void *ctx, uint64_t key, psk_gltf_load_fn load, const void *arg, void **pin,
		      enum rc *r)
{
	struct keep *t = ctx;
	size_t bytes;
	long long base = live;

	*pin = NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->key[i] == key)
			return t->data[i];
	assert_true(t->n < 64);
	peak = live;
	*r = load(arg, &t->data[t->n], &bytes, &t->dtor[t->n]);
	if (*r != RC_OK)
		return NULL;
	/* held at most during the load beyond the block: its reading buffers */
	if (peak - base - (long long)bytes > (long long)t->extra_max)
		t->extra_max = (size_t)(peak - base - (long long)bytes);
	t->block_max = bytes > t->block_max ? bytes : t->block_max;
	t->key[t->n] = key;
	return t->data[t->n++];
}

static void keep_put(void *ctx, void *pin)
{
	(void)ctx;
	(void)pin;
}

/* With a cache the block (64 bones x 256 frames) is the one large request of a load: its keys
 * are read 2,048 at a time into it, not copied through arrays as large as the block. */
static void test_psa_keys_cached(void **state)
{
	struct psa_fx x;
	struct keep t = {0};
	struct psk_gltf_cache cache = {keep_get, keep_put, &t};
	size_t most;

	(void)state;
	psa_fx_open(&x);
	most = psa_render_parts(&x, &cache);
	assert_int_equal(t.block_max, 16 + 16384 * 10 * sizeof(float)); /* a whole block */
	assert_int_equal(most, t.block_max);
	assert_true(t.extra_max < 2 * MAPPED_FROM);
	for (size_t i = 0; i < t.n; i++)
		t.dtor[i](t.data[i]);
	psa_fx_close(&x);
}

/* ---- world ---- */

/* Counting a small collision mesh's triangles per surface id needs no table of all 65,536. */
static void test_cmesh_surfaces(void **state)
{
	struct wo_tri_in t[100];
	struct wo_surface_count *sc;
	struct wo_cmesh m;
	struct diag d;
	struct buf b;
	uint32_t nsc;
	size_t most;

	(void)state;
	memset(t, 0, sizeof t);
	for (uint32_t i = 0; i < 100; i++) {
		t[i].v[1][0] = 1.0f + (float)i;
		t[i].v[2][2] = 1.0f;
		/* ids far apart: the highest pattern too */
		t[i].surface = wo_surface_make(i % 3, 2, i % 2 ? 15 : 0);
	}
	buf_init(&b);
	assert_int_equal(wo_cmesh_write(t, 100, 0.0f, &b), RC_OK);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(b.data, b.len, &m, &d), RC_OK);
	LARGEST(most, assert_int_equal(wo_cmesh_surfaces(&m, &sc, &nsc), RC_OK));
	assert_int_equal(nsc, 6);
	for (uint32_t i = 0; i < nsc; i++)
		assert_true(sc[i].tris == 17 || sc[i].tris == 16);
	assert_int_equal(sc[5].id, wo_surface_make(2, 2, 15));
	assert_true(most < 8u << 10);
	free(sc);
	wo_cmesh_free(&m);
	diag_free(&d);
	buf_free(&b);
}

/* ---- archives ---- */

/* A zlib chunk is inflated through an input buffer no longer than the chunk's stored bytes. */
static void test_zlib_piece(void **state)
{
	static uint8_t data[300000];
	struct gen_big_entry e = {.folder = "f",
				  .name = "zipped.bin",
				  .data = data,
				  .len = sizeof data,
				  .method = GB_CHUNK_ZLIB,
				  .style = GB_STYLE_SK8};
	struct gen_big_opts o = {0};
	struct gen_sink sink;
	struct buf b;
	struct src s;
	struct src_mem sm;
	struct arc a;
	struct arc_index *ix;
	struct diag d;
	uint64_t total;
	uint8_t *piece = malloc(64u << 10);

	(void)state;
	assert_non_null(piece);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)((i * 7 + i / 1000) & 0xFF);
	buf_init(&b);
	gen_sink_buf(&sink, &b);
	assert_int_equal(gen_big_write(&o, &e, 1, &sink, NULL, &total), RC_OK);
	src_init_mem(&s, &sm, b.data, b.len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	assert_int_equal(arc_index_build(&s, &a, 0, &ix, &d), RC_OK);
	assert_int_equal(arc_piece_count(ix), 5); /* 64 KiB chunks */
	for (uint64_t k = 0; k < arc_piece_count(ix); k++) {
		uint64_t off, len;
		size_t got = 0, most;

		arc_piece_span(ix, k, &off, &len);
		assert_true(len <= 64u << 10);
		LARGEST(most, assert_int_equal(arc_piece(&s, ix, k, piece, &got, NULL), RC_OK));
		assert_int_equal(got, len);
		assert_memory_equal(piece, data + off, len);
		assert_true(most < MAPPED_FROM);
	}
	assert_int_equal(d.n, 0);
	arc_index_free(ix);
	arc_free(&a);
	diag_free(&d);
	buf_free(&b);
	free(piece);
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
	    // clang-format off
	    cmocka_unit_test(test_vertex_batch),
	    cmocka_unit_test(test_mesh_stats),
	    cmocka_unit_test(test_png_tail),
	    cmocka_unit_test(test_psa_keys_uncached),
	    cmocka_unit_test(test_psa_keys_cached),
	    cmocka_unit_test(test_cmesh_surfaces),
	    cmocka_unit_test(test_zlib_piece),
	    cmocka_unit_test(test_gen_stored),
	    cmocka_unit_test(test_gen_refpack_entries),
	    cmocka_unit_test(test_refpack_chunks),
	    cmocka_unit_test(test_refpack_work_same_bytes),
	    // clang-format on
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
