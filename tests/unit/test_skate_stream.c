/* Streaming mesh decode: vertex and triangle ranges against the generator's truth and the
 * whole-mesh decode, the statistics pass (counts, restart tables, bounds, diag lines) and
 * meshes larger than the whole-mesh decode accepts. */
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
#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_platform.h"
#include "psgfs/gen/prng.h"
#include "psgfs/base/source.h"

#include "arena_fixture.h"

/* A generated skinned arena with its scene loaded. */
static void stream_gen(struct fx *f, const struct gen_skinned_opts *o)
{
	fx_gen(f, o);
	assert_int_equal(skate_scene_load(&f->s, &f->a, NULL, &f->sc, NULL), RC_OK);
}

static bool diag_has(const struct diag *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msg[i], needle))
			return true;
	return false;
}

static int elem_of(const struct skate_vbatch *b, uint8_t usage)
{
	for (unsigned i = 0; i < b->n_elem; i++)
		if (b->elem[i].usage == usage)
			return (int)i;
	return -1;
}

/* Vertices [first, first + count) equal the truth and the whole-mesh decode. */
static void check_range(struct fx *f, size_t mi, const struct skate_mesh_data *md, uint32_t first,
			uint32_t count, struct skate_vbatch *b)
{
	const struct gen_skinned_mesh_truth *tm = &f->t.mesh[mi];
	uint32_t want = first + count > tm->n_verts ? tm->n_verts - first : count;
	int pos, uv;

	assert_int_equal(skate_mesh_read_vertices(&f->s, &f->a, f->sc, mi, first, count, b), RC_OK);
	if (want > skate_vbatch_cap(&f->sc->meshes[mi]))
		want = skate_vbatch_cap(&f->sc->meshes[mi]);
	assert_int_equal(b->first, first);
	assert_int_equal(b->count, want);
	assert_int_equal(b->n_elem, md->n_attr);
	pos = elem_of(b, SKATE_USAGE_POSITION);
	uv = elem_of(b, SKATE_USAGE_TEXCOORD);
	assert_true(pos >= 0 && uv >= 0);
	for (uint32_t k = 0; k < b->count; k++) {
		uint32_t v = first + k;

		for (int c = 0; c < 3; c++)
			assert_true(b->v[pos][b->elem[pos].n_out * k + c] == tm->pos[v][c]);
		for (int c = 0; c < 2; c++)
			assert_true(b->v[uv][b->elem[uv].n_out * k + c] == tm->uv[v][c]);
		for (unsigned e = 0; e < b->n_elem; e++)
			assert_memory_equal(b->v[e] + (size_t)b->elem[e].n_out * k,
					    md->attr[e].v + (size_t)md->attr[e].n * v,
					    b->elem[e].n_out * sizeof(float));
		assert_int_equal(b->n_infl[k], tm->n_infl[v]);
		assert_int_equal(b->n_infl[k], md->n_infl[v]);
		assert_memory_equal(b->infl[k], md->infl[v], b->n_infl[k] * sizeof *b->infl[k]);
		for (unsigned j = 0; j < b->n_infl[k]; j++)
			assert_int_equal(b->infl[k][j].bone, tm->bone[v][j]);
		assert_false(b->unweighted[k]);
	}
}

static void test_vertex_ranges(void **state)
{
	struct gen_skinned_opts o = {.seed = 31,
				     .n_bones = 16,
				     .n_meshes = 4,
				     .verts = 9000,
				     .islands = 3,
				     .tris = 50,
				     .layout = -1};
	struct fx f;
	struct skate_vbatch b;

	(void)state;
	stream_gen(&f, &o);
	skate_vbatch_init(&b);
	for (size_t mi = 0; mi < f.sc->n_meshes; mi++) {
		struct skate_mesh_data *md;
		static const uint32_t ranges[][2] = {{0, 1},	 {0, 4096},   {1, 5000},
						     {4095, 2},	 {8990, 100}, {8999, 1},
						     {123, 777}, {4096, 4096}};

		assert_int_equal(skate_mesh_decode(&f.s, &f.a, f.sc, mi, &md, NULL), RC_OK);
		for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++)
			check_range(&f, mi, md, ranges[k][0], ranges[k][1], &b);
		/* the end of the mesh: nothing left, then out of bounds */
		assert_int_equal(skate_mesh_read_vertices(&f.s, &f.a, f.sc, mi, 9000, 10, &b),
				 RC_OK);
		assert_int_equal(b.count, 0);
		assert_int_equal(skate_mesh_read_vertices(&f.s, &f.a, f.sc, mi, 9001, 10, &b),
				 RC_BOUNDS);
		skate_mesh_data_free(md);
	}
	assert_int_equal(skate_mesh_read_vertices(&f.s, &f.a, f.sc, 99, 0, 1, &b), RC_NOENT);
	skate_vbatch_free(&b);
	fx_free(&f);
}

static void test_triangle_ranges(void **state)
{
	struct gen_skinned_opts o = {
	    .seed = 32, .n_meshes = 2, .verts = 300, .islands = 5, .tris = 1000, .layout = -1};
	struct fx f;
	struct skate_tbatch b;

	(void)state;
	stream_gen(&f, &o);
	skate_tbatch_init(&b);
	for (size_t mi = 0; mi < f.sc->n_meshes; mi++) {
		const struct gen_skinned_mesh_truth *tm = &f.t.mesh[mi];
		const struct skate_scene_mesh *m = &f.sc->meshes[mi];
		static const uint64_t firsts[] = {0, 999, 1000, 2500, 4999};

		assert_int_equal(m->tri_estimate, 5000);
		assert_int_equal(m->tri_first[2], 2000);
		assert_int_equal(m->tri_first[5], 5000);
		for (size_t k = 0; k < sizeof firsts / sizeof firsts[0]; k++) {
			assert_int_equal(
			    skate_mesh_read_triangles(&f.s, &f.a, f.sc, mi, firsts[k], 5000, &b),
			    RC_OK);
			assert_int_equal(b.first, firsts[k]);
			assert_int_equal(b.count, 5000 - firsts[k] < SKATE_TBATCH_MAX
						      ? 5000 - firsts[k]
						      : SKATE_TBATCH_MAX);
			assert_int_equal(b.n_invalid, 0);
			for (uint32_t j = 0; j < b.count; j++) {
				uint64_t t = firsts[k] + j;

				assert_true(b.tri[j].valid);
				assert_memory_equal(b.tri[j].v, tm->tri[t], sizeof b.tri[j].v);
				assert_int_equal(b.tri[j].island, tm->tri_island[t]);
			}
		}
		assert_int_equal(skate_mesh_read_triangles(&f.s, &f.a, f.sc, mi, 5000, 9, &b),
				 RC_OK);
		assert_int_equal(b.count, 0);
		assert_int_equal(skate_mesh_read_triangles(&f.s, &f.a, f.sc, mi, 5001, 9, &b),
				 RC_BOUNDS);
	}
	skate_tbatch_free(&b);
	fx_free(&f);
}

/* Invalid triples keep their raw number: the valid ones around them do not move. */
static void test_triangle_invalid(void **state)
{
	struct gen_skinned_opts o = {.seed = 5,
				     .n_bones = 10,
				     .n_meshes = 1,
				     .tris = 20,
				     .layout = 1,
				     .hostile = GEN_SK_INDEX_PAST_VERTS};
	struct fx f;
	struct skate_tbatch b;

	(void)state;
	stream_gen(&f, &o);
	skate_tbatch_init(&b);
	assert_int_equal(skate_mesh_read_triangles(&f.s, &f.a, f.sc, 0, 0, 3, &b), RC_OK);
	assert_int_equal(b.count, 3);
	assert_false(b.tri[0].valid);
	assert_int_equal(b.tri[0].v[1], f.t.mesh[0].n_verts + 7);
	assert_int_equal(b.n_invalid, 1);
	assert_int_equal(b.first_bad_value, f.t.mesh[0].n_verts + 7);
	assert_int_equal(b.first_bad_triangle, 0);
	assert_true(b.tri[1].valid && b.tri[2].valid);
	assert_memory_equal(b.tri[1].v, f.t.mesh[0].tri[1], sizeof b.tri[1].v);
	skate_tbatch_free(&b);
	fx_free(&f);
}

/* The statistics agree with a full decode, entry by entry of the restart tables. */
static void check_stats(struct fx *f, size_t mi)
{
	struct skate_mesh_stats *st;
	struct skate_mesh_data *md;
	struct diag d1, d2;
	uint64_t infl = 0, psk = 0, valid = 0;
	const struct skate_attr *pa;

	diag_init(&d1);
	diag_init(&d2);
	assert_int_equal(skate_mesh_decode(&f->s, &f->a, f->sc, mi, &md, &d1), RC_OK);
	assert_int_equal(skate_mesh_stats_build(&f->s, &f->a, f->sc, mi, &st, &d2), RC_OK);
	assert_int_equal(d1.n, d2.n);
	for (size_t i = 0; i < d1.n; i++)
		assert_string_equal(d1.msg[i], d2.msg[i]);
	assert_int_equal(st->n_verts, md->n_verts);
	assert_int_equal(st->n_valid_tri, md->n_tri);
	assert_int_equal(st->n_raw_tri, f->sc->meshes[mi].tri_estimate);
	assert_int_equal(st->n_unweighted, md->n_unweighted);
	assert_int_equal(st->n_vert_restart, md->n_verts / SKATE_STATS_STEP + 1);
	pa = &md->attr[md->pos];
	for (uint32_t v = 0; v < md->n_verts; v++) {
		if (v % SKATE_STATS_STEP == 0) {
			assert_int_equal(st->infl_before[v / SKATE_STATS_STEP], infl);
			assert_int_equal(st->psk_weights_before[v / SKATE_STATS_STEP], psk);
		}
		infl += md->n_infl[v];
		psk += md->n_infl[v] ? md->n_infl[v] : 1;
		for (int c = 0; c < 3; c++) {
			assert_true(st->pos_min[c] <= pa->v[pa->n * v + c]);
			assert_true(st->pos_max[c] >= pa->v[pa->n * v + c]);
		}
	}
	assert_int_equal(st->n_influences, infl);
	assert_int_equal(st->n_psk_weights, psk);
	{
		struct skate_tbatch b;

		skate_tbatch_init(&b);
		for (uint64_t t = 0; t < st->n_raw_tri; t += b.count) {
			assert_int_equal(
			    skate_mesh_read_triangles(&f->s, &f->a, f->sc, mi, t, 1000, &b), RC_OK);
			for (uint32_t j = 0; j < b.count; j++) {
				if ((t + j) % SKATE_STATS_STEP == 0)
					assert_int_equal(
					    st->tri_valid_before[(t + j) / SKATE_STATS_STEP],
					    valid);
				valid += b.tri[j].valid;
			}
		}
		skate_tbatch_free(&b);
	}
	assert_int_equal(valid, st->n_valid_tri);
	skate_mesh_stats_free(st);
	skate_mesh_data_free(md);
	diag_free(&d1);
	diag_free(&d2);
}

static void test_stats(void **state)
{
	struct gen_skinned_opts o = {.seed = 33,
				     .n_bones = 20,
				     .n_meshes = 4,
				     .verts = 5000,
				     .islands = 4,
				     .tris = 700,
				     .layout = -1};
	struct fx f;

	(void)state;
	stream_gen(&f, &o);
	for (size_t mi = 0; mi < f.sc->n_meshes; mi++) {
		const struct gen_skinned_mesh_truth *tm = &f.t.mesh[mi];
		struct skate_mesh_stats *st;
		float lo[3] = {INFINITY, INFINITY, INFINITY},
		      hi[3] = {-INFINITY, -INFINITY, -INFINITY};

		check_stats(&f, mi);
		assert_int_equal(skate_mesh_stats_build(&f.s, &f.a, f.sc, mi, &st, NULL), RC_OK);
		for (uint32_t v = 0; v < tm->n_verts; v++)
			for (int c = 0; c < 3; c++) {
				lo[c] = fminf(lo[c], tm->pos[v][c]);
				hi[c] = fmaxf(hi[c], tm->pos[v][c]);
			}
		assert_true(st->has_bounds);
		assert_memory_equal(st->pos_min, lo, sizeof lo);
		assert_memory_equal(st->pos_max, hi, sizeof hi);
		assert_int_equal(st->n_valid_tri, tm->n_tri);
		assert_int_equal(st->n_bad_slots, 0);
		skate_mesh_stats_free(st);
	}
	fx_free(&f);
}

/* Skater meshes: bounds in model units (the s16 / 16384 scale applied once at the end). */
static void test_stats_skater(void **state)
{
	struct gen_skinned_opts o = {
	    .seed = 34, .n_bones = 12, .n_meshes = 2, .verts = 3000, .layout = GEN_SK_SKATER};
	struct fx f;

	(void)state;
	stream_gen(&f, &o);
	for (size_t mi = 0; mi < f.sc->n_meshes; mi++) {
		const struct gen_skinned_mesh_truth *tm = &f.t.mesh[mi];
		struct skate_mesh_stats *st;
		float lo[3] = {INFINITY, INFINITY, INFINITY},
		      hi[3] = {-INFINITY, -INFINITY, -INFINITY};

		check_stats(&f, mi);
		assert_int_equal(skate_mesh_stats_build(&f.s, &f.a, f.sc, mi, &st, NULL), RC_OK);
		for (uint32_t v = 0; v < tm->n_verts; v++)
			for (int c = 0; c < 3; c++) {
				lo[c] = fminf(lo[c], tm->pos[v][c]);
				hi[c] = fmaxf(hi[c], tm->pos[v][c]);
			}
		assert_memory_equal(st->pos_min, lo, sizeof lo);
		assert_memory_equal(st->pos_max, hi, sizeof hi);
		skate_mesh_stats_free(st);
	}
	fx_free(&f);
}

/* Hostile meshes: the statistics pass writes exactly the lines the full decode writes. */
static void test_stats_hostile(void **state)
{
	static const struct {
		enum gen_skinned_hostile h;
		int layout;
		const char *needle;
	} cases[] = {
	    {GEN_SK_PALETTE_PAST_SKELETON, 0, "outside the palette"},
	    {GEN_SK_INDEX_PAST_VERTS, 1, "past the vertex count"},
	    {GEN_SK_INDEX_PAST_VERTS, 0, "past the vertex count"},
	};

	(void)state;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct gen_skinned_opts o = {.seed = 5,
					     .n_bones = 10,
					     .n_meshes = 2,
					     .verts = 3000,
					     .tris = 500,
					     .layout = cases[k].layout,
					     .hostile = cases[k].h};
		struct fx f;
		struct skate_mesh_stats *st;
		struct diag d;

		stream_gen(&f, &o);
		check_stats(&f, 0);
		check_stats(&f, 1);
		diag_init(&d);
		assert_int_equal(skate_mesh_stats_build(&f.s, &f.a, f.sc, 0, &st, &d), RC_OK);
		assert_true(diag_has(&d, cases[k].needle));
		skate_mesh_stats_free(st);
		diag_free(&d);
		fx_free(&f);
	}
}

/* A source of any size whose bytes are generated: vertex v holds float3 (v, 2v, -v). */
static enum rc big_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	uint8_t *p = dst;

	(void)ctx;
	for (size_t i = 0; i < n; i++) {
		uint64_t at = off + i, v = at / 16;
		unsigned in = (unsigned)(at % 16);
		float x = in < 4 ? (float)v : in < 8 ? 2.0f * (float)v : in < 12 ? -(float)v : 0;
		uint32_t u = f32_bits(x);

		p[i] = in < 12 ? (uint8_t)(u >> (24 - 8 * (in % 4))) : 0;
	}
	return RC_OK;
}

/* The streaming calls have no vertex limit; the whole-mesh decode keeps its 2^26. */
static void test_no_vertex_limit(void **state)
{
	const uint32_t nv = (1u << 27) + 5;
	struct src s = {.read = big_read, .size = (uint64_t)nv * 16};
	struct arena a;
	struct skate_scene sc;
	struct skate_scene_mesh m;
	struct skate_vbatch b;
	struct skate_mesh_data *md;
	struct diag d;

	(void)state;
	memset(&a, 0, sizeof a);
	a.big_endian = true;
	memset(&sc, 0, sizeof sc);
	memset(&m, 0, sizeof m);
	m.ok = true;
	m.stride = 16;
	m.vertex_count = nv;
	m.desc.n_el = 1;
	m.desc.elem[0] = (struct skate_elem){.usage = SKATE_USAGE_POSITION,
					     .ctype = SKATE_CT_F32,
					     .count = 3,
					     .n_out = 3,
					     .size = 12,
					     .usable = true,
					     .divisor = 1.0f,
					     .format_name = "F"};
	sc.meshes = &m;
	sc.n_meshes = 1;
	skate_vbatch_init(&b);
	assert_int_equal(skate_mesh_read_vertices(&s, &a, &sc, 0, nv - 3, 100, &b), RC_OK);
	assert_int_equal(b.count, 3);
	assert_true(b.v[0][3 * 2] == (float)(nv - 1));
	assert_true(b.v[0][3 * 2 + 1] == 2.0f * (float)(nv - 1));
	assert_int_equal(b.n_infl[2], 0); /* no skeleton */
	assert_false(b.unweighted[2]);
	skate_vbatch_free(&b);
	diag_init(&d);
	assert_int_equal(skate_mesh_decode(&s, &a, &sc, 0, &md, &d), RC_UNSUPPORTED);
	assert_true(diag_has(&d, "more than the"));
	diag_free(&d);
}

/* ---- the fast counting paths against the full skin rules, on hostile values ---- */

/* A PS3 element as stored: GCM format, components, offset, stride, element type. */
#define VE(vt, n, off, stride, type)                                                               \
	{                                                                                          \
		vt, n, 0, off, stride, type, 1, true, 0, 0, 0, 0                                   \
	}

struct adv_layout {
	struct skate_velem el[3];
	unsigned n;
	uint16_t stride;
};

static void put_be(uint8_t *p, uint32_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

/* Random vertex bytes full of the values the rules treat specially. */
static void adv_fill(struct prng *r, const struct adv_layout *L, uint8_t *vb, uint32_t nv)
{
	static const float fw[] = {0.0f,     -0.0f,   -1.0f,	0.5f,		1.0f,  1e-45f,
				   1e38f,    1.2e38f, 1.5e38f,	1.6e38f,	2e38f, 3.4e38f,
				   INFINITY, NAN,     0x1p125f, 0x1.000002p125f};
	static const uint16_t hw[] = {0x0000, 0x8000, 0x3C00, 0x7C00, 0x7E00,
				      0xBC00, 0x0001, 0x3800, 0x4000, 0x4100};

	for (uint32_t v = 0; v < nv; v++)
		for (unsigned e = 0; e < L->n; e++) {
			const struct skate_velem *x = &L->el[e];
			uint8_t *p = vb + (size_t)v * L->stride + x->offset;

			for (unsigned c = 0; c < x->num_components; c++) {
				switch (x->vertex_type) {
				case SKATE_VF_F:
					put_be(p + 4 * c, f32_bits(fw[prng_below(r, 16)]), 4);
					break;
				case SKATE_VF_SF:
					put_be(p + 2 * c, hw[prng_below(r, 10)], 2);
					break;
				case SKATE_VF_S1:
				case SKATE_VF_S32K:
					put_be(p + 2 * c,
					       prng_below(r, 4) ? prng_below(r, 8)
								: prng_below(r, 65536),
					       2);
					break;
				default:
					p[c] = (uint8_t)(prng_below(r, 3) ? prng_below(r, 8)
									  : prng_below(r, 256));
				}
			}
		}
}

static void adv_case(const struct adv_layout *L, uint32_t n_palette, bool dups, uint64_t seed)
{
	const uint32_t nv = 3000;
	uint8_t *vb = calloc(nv, L->stride);
	int32_t *pal = calloc(n_palette ? n_palette : 1, sizeof *pal);
	struct src_mem sm;
	struct src s;
	struct arena a;
	struct skate_scene sc;
	struct skate_scene_mesh m;
	struct skate_mesh_stats *st;
	struct skate_mesh_data *md;
	struct diag d1, d2;
	struct prng r;
	uint64_t tri0 = 0, infl = 0;

	assert_non_null(vb);
	prng_seed(&r, seed);
	adv_fill(&r, L, vb, nv);
	for (uint32_t i = 0; i < n_palette; i++)
		pal[i] = prng_below(&r, 5) == 0 ? -1
			 : dups			? (int32_t)prng_below(&r, 4)
						: (int32_t)i;
	src_init_mem(&s, &sm, vb, (size_t)nv * L->stride);
	memset(&a, 0, sizeof a);
	a.big_endian = true;
	memset(&sc, 0, sizeof sc);
	memset(&m, 0, sizeof m);
	sc.n_bones = 8;
	m.ok = true;
	m.stride = L->stride;
	m.vertex_count = nv;
	for (unsigned e = 0; e <= L->n; e++) { /* and a position after the stride (m.stride) */
		m.desc.el[e] = e < L->n
				   ? L->el[e]
				   : (struct skate_velem)VE(SKATE_VF_UB, 3, 0, 0, SKATE_ET_XYZ);
		skate_platform_ps3.elem_describe(&m.desc.el[e], &m.desc.elem[e]);
	}
	m.desc.n_el = L->n + 1;
	m.palette = pal;
	m.n_palette = n_palette;
	m.tri_first = &tri0;
	sc.meshes = &m;
	sc.n_meshes = 1;
	diag_init(&d1);
	diag_init(&d2);
	assert_int_equal(skate_mesh_decode(&s, &a, &sc, 0, &md, &d1), RC_OK);
	assert_int_equal(skate_mesh_stats_build(&s, &a, &sc, 0, &st, &d2), RC_OK);
	for (uint32_t v = 0; v < nv; v++)
		infl += md->n_infl[v];
	assert_int_equal(st->n_influences, infl);
	assert_int_equal(st->n_unweighted, md->n_unweighted);
	assert_int_equal(d1.n, d2.n);
	for (size_t i = 0; i < d1.n; i++)
		assert_string_equal(d1.msg[i], d2.msg[i]);
	skate_mesh_stats_free(st);
	skate_mesh_data_free(md);
	diag_free(&d1);
	diag_free(&d2);
	free(vb);
	free(pal);
}

static void test_stats_adversarial(void **state)
{
	static const struct adv_layout L[] = {
	    /* u8 slots (memo), float weights with NaN, inf, huge and negative values */
	    {{VE(SKATE_VF_UB256, 4, 0, 20, SKATE_ET_INDICES),
	      VE(SKATE_VF_F, 4, 4, 20, SKATE_ET_WEIGHTS)},
	     2,
	     20},
	    /* s16 slots, three u8 weights for four indices: the implicit last weight */
	    {{VE(SKATE_VF_S32K, 4, 0, 12, SKATE_ET_INDICES),
	      VE(SKATE_VF_UB, 3, 8, 12, SKATE_ET_WEIGHTS)},
	     2,
	     12},
	    /* indices only; weights only */
	    {{VE(SKATE_VF_UB, 4, 0, 4, SKATE_ET_INDICES)}, 1, 4},
	    {{VE(SKATE_VF_S1, 4, 0, 8, SKATE_ET_WEIGHTS)}, 1, 8},
	    /* half-float indices (not always whole) with u8 weights; s16 slots with half weights */
	    {{VE(SKATE_VF_SF, 4, 0, 12, SKATE_ET_INDICES),
	      VE(SKATE_VF_UB256, 4, 8, 12, SKATE_ET_WEIGHTS)},
	     2,
	     12},
	    {{VE(SKATE_VF_S1, 2, 0, 12, SKATE_ET_INDICES),
	      VE(SKATE_VF_SF, 4, 4, 12, SKATE_ET_WEIGHTS)},
	     2,
	     12},
	};
	static const uint32_t pals[] = {0, 1, 6, 64, 70, 256, 300};

	(void)state;
	for (size_t l = 0; l < sizeof L / sizeof L[0]; l++)
		for (size_t p = 0; p < sizeof pals / sizeof pals[0]; p++)
			for (int dups = 0; dups < 2; dups++)
				adv_case(&L[l], pals[p], dups, 1000 * l + 10 * p + (unsigned)dups);
}

/* Every byte of every main object of a small arena set to hostile values: the streaming calls
 * never crash, never read outside the file and agree with each other (run under ASan). */
static void test_mutations(void **state)
{
	struct gen_skinned_opts o = {
	    .seed = 9, .n_bones = 5, .n_meshes = 4, .verts = 12, .islands = 2, .tris = 3};
	struct skate_vbatch vb;
	struct skate_tbatch tb;
	struct fx f;

	(void)state;
	stream_gen(&f, &o);
	skate_vbatch_init(&vb);
	skate_tbatch_init(&tb);
	for (uint32_t i = 0; i < f.a.n_dict; i++) {
		const struct arena_dict_entry *e = arena_row(&f.a, i);

		if (e->base_resource)
			continue;
		for (uint32_t k = 0; k < e->size; k++) {
			static const uint8_t vals[] = {0xFF, 0x00, 0x80, 0x01};
			uint8_t keep = f.file[e->start + k];

			for (size_t vi = 0; vi < sizeof vals; vi++) {
				struct skate_scene *sc;

				f.file[e->start + k] = vals[vi];
				if (skate_scene_load(&f.s, &f.a, NULL, &sc, NULL) != RC_OK)
					continue;
				for (size_t mi = 0; mi < sc->n_meshes; mi++) {
					struct skate_mesh_stats *st;
					uint64_t valid = 0;

					if (skate_mesh_stats_build(&f.s, &f.a, sc, mi, &st, NULL) !=
					    RC_OK)
						continue;
					assert_int_equal(skate_mesh_read_vertices(&f.s, &f.a, sc,
										  mi, 0, 99, &vb),
							 RC_OK);
					assert_int_equal(skate_mesh_read_triangles(&f.s, &f.a, sc,
										   mi, 0, 999, &tb),
							 RC_OK);
					for (uint32_t t = 0; t < tb.count; t++)
						valid += tb.tri[t].valid;
					if (st->n_raw_tri <= SKATE_TBATCH_MAX)
						assert_int_equal(valid, st->n_valid_tri);
					skate_mesh_stats_free(st);
				}
				skate_scene_free(sc);
			}
			f.file[e->start + k] = keep;
		}
	}
	skate_vbatch_free(&vb);
	skate_tbatch_free(&tb);
	fx_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vertex_ranges),     cmocka_unit_test(test_triangle_ranges),
	    cmocka_unit_test(test_triangle_invalid),  cmocka_unit_test(test_stats),
	    cmocka_unit_test(test_stats_hostile),     cmocka_unit_test(test_no_vertex_limit),
	    cmocka_unit_test(test_stats_adversarial), cmocka_unit_test(test_stats_skater),
	    cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
