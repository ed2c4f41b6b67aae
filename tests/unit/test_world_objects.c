/* World objects of a district's Sim stream (docs/worlds.md): DMOData, SplineData and
 * ClusteredMesh. Round trips through the writers, known values, and hostile objects (lying
 * counts, offsets past the end, NaN matrices, loops). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/world_objects.h"

/* ---- helpers ---- */

static size_t lines_with(const struct diag *d, const char *what)
{
	size_t k = 0;

	for (size_t i = 0; i < d->n; i++)
		k += strstr(d->msg[i], what) != NULL;
	return k;
}

static void st32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void stf(uint8_t *p, float f)
{
	st32(p, f32_bits(f));
}

static void near(float a, float b, float eps)
{
	if (!(fabsf(a - b) <= eps)) {
		fprintf(stderr, "%.9g != %.9g (eps %g)\n", (double)a, (double)b, (double)eps);
		fail();
	}
}

/* ---- DMOData ---- */

static void dmo_sample(struct wo_dmo *v, uint32_t n)
{
	memset(v, 0, sizeof *v * n);
	for (uint32_t i = 0; i < n; i++) {
		float pos[3] = {10.0f * i, 1.5f, -20.0f - i};
		/* a turn of 30 degrees times i about y */
		float a = (float)(M_PI / 6) * i;
		float rot[4] = {0, sinf(a / 2), 0, cosf(a / 2)};
		float sc[3] = {1.0f + i, 1.0f, 2.0f};

		wo_compose(pos, rot, sc, v[i].m);
		for (int k = 0; k < 3; k++) {
			v[i].bmin[k] = pos[k] - 1;
			v[i].bmax[k] = pos[k] + 1;
		}
		v[i].bmin[3] = v[i].bmax[3] = 1;
		v[i].guid = 0x1000u + i;
		v[i].guid_local = 0x2000u + i;
		v[i].template_id = 0xABCDEF0012345678ull + i;
		v[i].instance = i;
		if (i != 1)
			snprintf(v[i].name, sizeof v[i].name, "prop_%u", i);
	}
}

static uint8_t *dmo_bytes(const struct wo_dmo *v, uint32_t n, size_t *len)
{
	struct wo_dmo_header h = {.type_id = WO_T_DMODATA};
	struct buf b;

	buf_init(&b);
	assert_int_equal(wo_dmo_write(&h, v, n, &b), RC_OK);
	return buf_steal(&b, len);
}

static void test_dmo_round_trip(void **state)
{
	struct wo_dmo v[4];
	struct wo_dmos m;
	struct diag d;
	size_t len, len2;
	uint8_t *p, *p2;

	(void)state;
	dmo_sample(v, 4);
	p = dmo_bytes(v, 4, &len);
	assert_int_equal(len, WO_DMO_HDR + 4 * WO_DMO_REC + 3 * 7);
	assert_int_equal(ld_u32be(p + 4), 4);
	assert_int_equal(ld_u32be(p + 8), 3);
	assert_int_equal(ld_u32be(p + 12), 0x20);
	/* translation at +0x30 of a record, template id at +0x70 (SK8) */
	assert_int_equal(ld_u32be(p + 0x20 + WO_DMO_REC + 0x30), f32_bits(10.0f));
	assert_true(ld_u64be(p + 0x20 + 0x70) == 0xABCDEF0012345678ull);
	diag_init(&d);
	assert_int_equal(wo_dmo_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.n, 4);
	for (uint32_t i = 0; i < 4; i++) {
		float a = (float)(M_PI / 6) * i;

		assert_int_equal(m.v[i].flags, 0);
		assert_memory_equal(m.v[i].m, v[i].m, sizeof v[i].m);
		assert_true(m.v[i].template_id == v[i].template_id);
		assert_true(m.v[i].guid == v[i].guid && m.v[i].guid_local == v[i].guid_local);
		assert_int_equal(m.v[i].instance, i);
		assert_string_equal(m.v[i].name, v[i].name);
		near(m.v[i].pos[0], 10.0f * i, 1e-5f);
		near(m.v[i].pos[2], -20.0f - i, 1e-5f);
		near(m.v[i].rot[1], sinf(a / 2), 1e-5f);
		near(m.v[i].rot[3], cosf(a / 2), 1e-5f);
		near(m.v[i].scale[0], 1.0f + i, 1e-5f);
		near(m.v[i].scale[2], 2.0f, 1e-5f);
	}
	/* the writer is deterministic and what it reads writes back the same */
	p2 = dmo_bytes(m.v, m.n, &len2);
	assert_int_equal(len2, len);
	assert_memory_equal(p, p2, len);
	free(p2);
	wo_dmo_free(&m);
	diag_free(&d);
	free(p);
}

/* Known values: the SK8 example is a row-vector matrix; a 90 degree turn about y moves +x
 * to -z (row 0 = (0, 0, -1)). A mirror is a negative x scale. */
static void test_dmo_decompose_known(void **state)
{
	float m[16] = {0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 5, 6, 7, 1};
	float pos[3], rot[4], sc[3], back[16];

	(void)state;
	assert_int_equal(wo_decompose(m, pos, rot, sc), 0);
	near(pos[0], 5, 0), near(pos[1], 6, 0), near(pos[2], 7, 0);
	near(rot[0], 0, 1e-6f), near(rot[1], sqrtf(0.5f), 1e-6f), near(rot[2], 0, 1e-6f);
	near(rot[3], sqrtf(0.5f), 1e-6f);
	near(sc[0], 1, 1e-6f);
	wo_compose(pos, rot, sc, back);
	for (int k = 0; k < 16; k++)
		near(back[k], m[k], 1e-6f);
	m[0] = 0, m[2] = 1; /* row 0 = (0, 0, 1): a mirror */
	assert_int_equal(wo_decompose(m, pos, rot, sc), 0);
	near(sc[0], -1, 1e-6f);
	wo_compose(pos, rot, sc, back);
	for (int k = 0; k < 16; k++)
		near(back[k], m[k], 1e-6f);
	m[4] = 0.5f; /* shear */
	assert_int_equal(wo_decompose(m, pos, rot, sc), WO_F_SHEAR);
}

static void test_dmo_hostile(void **state)
{
	struct wo_dmo v[3];
	struct wo_dmos m;
	struct diag d;
	size_t len;
	uint8_t *p;

	(void)state;
	dmo_sample(v, 3);
	p = dmo_bytes(v, 3, &len);
	/* NaN in record 0's matrix, a zero row in record 2, an inverted box in record 1,
	 * a name offset past the end in record 2 */
	stf(p + 0x20 + 0x14, NAN);
	memset(p + 0x20 + 2 * WO_DMO_REC + 0x10, 0, 16);
	stf(p + 0x20 + WO_DMO_REC + 0x40, 1e9f);
	st32(p + 0x20 + 2 * WO_DMO_REC + 0x7C, 0xFFFFFFF0u);
	/* and a count that lies */
	st32(p + 4, 0x7FFFFFFF);
	diag_init(&d);
	assert_int_equal(wo_dmo_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(m.n, 3);
	assert_int_equal(lines_with(&d, "DMOData: claims 2147483647 records; the object holds 3"),
			 1);
	assert_true(m.v[0].flags & WO_F_NONFINITE);
	assert_int_equal(lines_with(&d, "record 0 (prop_0): the matrix is not finite"), 1);
	/* never trusted: identity, not NaN */
	near(m.v[0].pos[0], 0, 0), near(m.v[0].rot[3], 1, 0), near(m.v[0].scale[1], 1, 0);
	assert_true(m.v[1].flags & WO_F_BOUNDS);
	assert_int_equal(lines_with(&d, "record 1 (unnamed): the bounding box's minimum exceeds"),
			 1);
	assert_true(m.v[2].flags & WO_F_SINGULAR);
	assert_true(m.v[2].flags & WO_F_NAME);
	assert_int_equal(lines_with(&d, "record 2: name offset 0xfffffff0 names no string"), 1);
	assert_int_equal(lines_with(&d, "record 2 (unnamed): the matrix has a zero basis row"), 1);
	wo_dmo_free(&m);
	/* records offset past the end; a header cut short */
	st32(p + 12, 0x10000000u);
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_dmo_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(m.n, 0);
	assert_int_equal(lines_with(&d, "DMOData: the records at 0x10000000 lie past the end"), 1);
	wo_dmo_free(&m);
	assert_int_equal(wo_dmo_parse(p, 19, &m, &d), RC_TRUNCATED);
	assert_int_equal(m.n, 0);
	assert_null(m.v);
	/* a name with no NUL until the end of the object */
	free(p);
	dmo_sample(v, 1);
	p = dmo_bytes(v, 1, &len);
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_dmo_parse(p, len - 1, &m, &d), RC_OK);
	assert_true(m.v[0].flags & WO_F_NAME);
	wo_dmo_free(&m);
	diag_free(&d);
	free(p);
	/* the writer refuses a name without NUL */
	dmo_sample(v, 1);
	memset(v[0].name, 'a', sizeof v[0].name);
	{
		struct wo_dmo_header h = {0};
		struct buf b;

		buf_init(&b);
		assert_int_equal(wo_dmo_write(&h, v, 1, &b), RC_INVAL);
		buf_free(&b);
	}
}

/* ---- SplineData ---- */

static const float rail0[3][3] = {{0, 1, 0}, {10, 1, 0}, {10, 2, 5}};
static const float rail1[2][3] = {{-3, 0, 4}, {-3, 0, -4}};
static const float rail2[1][3] = {{7, 7, 7}};

static uint8_t *spline_bytes(size_t *len)
{
	struct wo_rail_in in[3] = {
	    {.guid = 0xA0, .guid_local = 0x2C7017070007004Aull, .npoints = 3, .points = rail0},
	    {.guid = 0xA1, .instance = 4, .npoints = 2, .points = rail1},
	    {.guid = 0xA2, .npoints = 1, .points = rail2},
	};
	struct buf b;

	buf_init(&b);
	assert_int_equal(wo_spline_write(in, 3, &b), RC_OK);
	return buf_steal(&b, len);
}

#define SEG0 (WO_SPLINE_HDR + 3 * WO_SPLINE_REC) /* 0x70 */

static void test_spline_round_trip(void **state)
{
	struct wo_splines s;
	struct diag d;
	size_t len;
	uint8_t *p = spline_bytes(&len);

	(void)state;
	assert_int_equal(len, SEG0 + 3 * WO_SEG_REC);
	/* known bytes: counts, offsets, rail 0's head and tail, segment 1's links */
	assert_int_equal(ld_u32be(p), 3);
	assert_int_equal(ld_u32be(p + 4), 3);
	assert_int_equal(ld_u32be(p + 12), SEG0);
	assert_int_equal(ld_u32be(p + 0x10 + 0x14), SEG0);
	assert_int_equal(ld_u32be(p + 0x10 + 0x18), SEG0 + WO_SEG_REC);
	assert_int_equal(ld_u32be(p + SEG0 + WO_SEG_REC + 0x7C), SEG0);
	assert_int_equal(ld_u32be(p + SEG0 + WO_SEG_REC + 0x80), 0);
	diag_init(&d);
	assert_int_equal(wo_spline_parse(p, len, &s, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_true(s.offsets);
	assert_int_equal(s.seg_stride, WO_SEG_REC);
	assert_int_equal(s.nrails, 3);
	assert_int_equal(s.nsegs, 3);
	assert_int_equal(s.norder, 3);
	assert_int_equal(s.rails[0].count, 2);
	assert_int_equal(s.rails[1].count, 1);
	assert_int_equal(s.rails[2].count, 0);
	assert_true(s.rails[0].guid == 0xA0 && s.rails[0].guid_local == 0x2C7017070007004Aull);
	assert_int_equal(s.rails[1].instance, 4);
	for (uint32_t k = 0; k < 2; k++) {
		const struct wo_segment *g = &s.segs[s.order[s.rails[0].first + k]];

		for (int c = 0; c < 3; c++) {
			near(g->start[c], rail0[k][c], 0);
			near(g->end[c], rail0[k + 1][c], 1e-6f);
		}
		assert_int_equal(g->spline, 0);
	}
	near(s.segs[1].distance, 10, 1e-6f);
	near(s.segs[1].length, sqrtf(26), 1e-5f);
	near(s.segs[2].end[2], -4, 0);
	assert_int_equal(s.segs[0].next, 1);
	assert_int_equal(s.segs[1].prev, 0);
	assert_int_equal(s.segs[1].next, WO_NONE);
	assert_int_equal(s.rails[2].head, WO_NONE);
	wo_spline_free(&s);
	diag_free(&d);
	free(p);
}

/* SFFD reads the links as indices: the same rails come out. */
static void test_spline_index_links(void **state)
{
	struct wo_splines s;
	struct diag d;
	size_t len;
	uint8_t *p = spline_bytes(&len);

	(void)state;
	st32(p + 0x10 + 0x14, 0), st32(p + 0x10 + 0x18, 1);
	st32(p + 0x30 + 0x14, 2), st32(p + 0x30 + 0x18, 2);
	st32(p + 0x50 + 0x14, UINT32_MAX), st32(p + 0x50 + 0x18, UINT32_MAX);
	for (uint32_t k = 0; k < 3; k++) {
		uint8_t *g = p + SEG0 + k * WO_SEG_REC;

		st32(g + 0x78, k < 2 ? 0 : 1);
		st32(g + 0x7C, k == 1 ? 0 : UINT32_MAX);
		st32(g + 0x80, k == 0 ? 1 : UINT32_MAX);
	}
	diag_init(&d);
	assert_int_equal(wo_spline_parse(p, len, &s, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_false(s.offsets);
	assert_int_equal(s.rails[0].count, 2);
	assert_int_equal(s.order[0], 0);
	assert_int_equal(s.order[1], 1);
	assert_int_equal(s.rails[1].count, 1);
	assert_int_equal(s.segs[2].spline, 1);
	wo_spline_free(&s);
	diag_free(&d);
	free(p);
}

static void test_spline_hostile(void **state)
{
	struct wo_splines s;
	struct diag d;
	size_t len;
	uint8_t *p = spline_bytes(&len);

	(void)state;
	/* a loop: segment 1's next is segment 0; rail 1's head is rail 0's head too; a NaN
	 * basis in segment 2; counts that lie */
	st32(p + SEG0 + WO_SEG_REC + 0x80, SEG0);
	st32(p + 0x30 + 0x14, SEG0);
	stf(p + SEG0 + 2 * WO_SEG_REC + 0x30, NAN);
	st32(p, 1000000), st32(p + 4, 0xFFFFFFFFu);
	diag_init(&d);
	assert_int_equal(wo_spline_parse(p, len, &s, &d), RC_OK);
	assert_int_equal(s.nrails, 3 + (3 * WO_SEG_REC) / WO_SPLINE_REC);
	assert_int_equal(s.nsegs, 3);
	assert_int_equal(lines_with(&d, "SplineData: claims 1000000 splines; the object holds"), 1);
	assert_int_equal(
	    lines_with(&d, "SplineData: claims 4294967295 segments; the object holds 3"), 1);
	assert_true(s.rails[0].flags & WO_F_CYCLE);
	assert_int_equal(s.rails[0].count, 2);
	assert_int_equal(
	    lines_with(&d, "spline 0: the segment chain loops back to segment 0 after 2 segments"),
	    1);
	assert_int_equal(lines_with(&d, "spline 1: segment 0 is already in spline 0's chain"), 1);
	assert_int_equal(s.rails[1].count, 0);
	assert_true(s.segs[2].flags & WO_F_NONFINITE);
	near(s.segs[2].start[0], 0, 0);
	assert_int_equal(lines_with(&d, "segment 2: the basis is not finite"), 1);
	assert_int_equal(lines_with(&d, "1 of 3 segments are in no spline's chain"), 1);
	wo_spline_free(&s);
	/* offsets past the end; a header cut short */
	st32(p + 8, 0xFFFFFFF0u), st32(p + 12, 0xFFFFFFF0u);
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_spline_parse(p, len, &s, &d), RC_OK);
	assert_int_equal(s.nrails, 0);
	assert_int_equal(s.nsegs, 0);
	wo_spline_free(&s);
	assert_int_equal(wo_spline_parse(p, 15, &s, &d), RC_TRUNCATED);
	assert_null(s.rails);
	diag_free(&d);
	free(p);
}

/* ---- ClusteredMesh ---- */

/* n triangles on a grid from origin o, step st, surface ids cycling through 5 values */
static struct wo_tri_in *grid(uint32_t n, float o, float st)
{
	struct wo_tri_in *t = calloc(n, sizeof *t);

	assert_non_null(t);
	for (uint32_t i = 0; i < n; i++) {
		float x = o + st * (float)(i % 20), z = o + st * (float)(i / 20);

		t[i].v[0][0] = x, t[i].v[0][1] = 0.5f, t[i].v[0][2] = z;
		t[i].v[1][0] = x + st, t[i].v[1][1] = 0.25f, t[i].v[1][2] = z;
		t[i].v[2][0] = x, t[i].v[2][1] = 1.0f, t[i].v[2][2] = z + st;
		t[i].surface = wo_surface_make(i % 5, 3, i % 2);
	}
	return t;
}

static uint8_t *cm_bytes(const struct wo_tri_in *t, uint32_t n, float g, size_t *len)
{
	struct buf b, c;
	uint8_t *p;

	buf_init(&b);
	assert_int_equal(wo_cmesh_write(t, n, g, &b), RC_OK);
	/* the counting pass gives the same length */
	buf_init_count(&c);
	assert_int_equal(wo_cmesh_write(t, n, g, &c), RC_OK);
	assert_int_equal(c.len, b.len);
	p = buf_steal(&b, len);
	assert_int_equal(ld_u32be(p + 0x50), *len); /* size of this */
	/* deterministic: a second write gives the same bytes */
	buf_init(&c);
	assert_int_equal(wo_cmesh_write(t, n, g, &c), RC_OK);
	assert_int_equal(c.len, *len);
	assert_memory_equal(c.data, p, *len);
	buf_free(&c);
	return p;
}

static void test_cmesh_surface_bits(void **state)
{
	uint8_t a, ph, pa;

	(void)state;
	assert_int_equal(wo_surface_make(5, 3, 2), 5 | 3 << 7 | 2 << 12);
	wo_surface_split(0xFFFF, &a, &ph, &pa);
	assert_int_equal(a, 127), assert_int_equal(ph, 31), assert_int_equal(pa, 15);
	wo_surface_split(wo_surface_make(100, 17, 9), &a, &ph, &pa);
	assert_int_equal(a, 100), assert_int_equal(ph, 17), assert_int_equal(pa, 9);
}

static void test_cmesh_round_trip_float(void **state)
{
	struct wo_tri_in *t = grid(200, -40.0f, 0.75f);
	struct wo_tri out[200];
	struct wo_surface_count *sc;
	struct wo_cmesh m;
	struct diag d;
	uint32_t nsc;
	size_t len;
	uint8_t *p = cm_bytes(t, 200, 0, &len);

	(void)state;
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(d.n, 1); /* granularity 0 is said, and harmless for float vertices */
	assert_int_equal(lines_with(&d, "the vertex granularity is 0"), 1);
	assert_int_equal(m.ncl, 3);
	assert_int_equal(m.ntris, 200);
	assert_int_equal(m.kd_nodes, 2);
	assert_int_equal(m.kd_reached, 2);
	assert_int_equal(m.kd_leaf_entries, 200);
	assert_false(m.kd_cycle);
	assert_int_equal(m.cl[2].tri_first, 168);
	assert_true(wo_cmesh_heap(&m) >= len);
	assert_int_equal(m.cl[0].compression, 0);
	assert_int_equal(wo_cmesh_tris(&m, 0, 500, out), 200);
	for (uint32_t i = 0; i < 200; i++) {
		assert_false(out[i].bad);
		assert_memory_equal(out[i].v, t[i].v, sizeof t[i].v);
		assert_int_equal(out[i].surface, t[i].surface);
		assert_int_equal(out[i].cluster, i / 84);
	}
	/* a range across a cluster boundary */
	assert_int_equal(wo_cmesh_tris(&m, 80, 10, out), 10);
	for (uint32_t i = 0; i < 10; i++)
		assert_memory_equal(out[i].v, t[80 + i].v, sizeof t[i].v);
	assert_int_equal(wo_cmesh_tris(&m, 199, 10, out), 1);
	assert_int_equal(wo_cmesh_tris(&m, 200, 10, out), 0);
	/* counts per surface id: 5 audio values x 2 patterns, 20 each */
	assert_int_equal(wo_cmesh_surfaces(&m, &sc, &nsc), RC_OK);
	assert_int_equal(nsc, 10);
	for (uint32_t i = 0; i < nsc; i++)
		assert_int_equal(sc[i].tris, 20);
	assert_true(sc[0].id < sc[1].id);
	free(sc);
	/* the surface id is stored low byte first after the edge angles (RW, DUMB) */
	{
		const uint8_t *u = p + m.cl[0].units_off + 9;

		assert_int_equal(u[0], 0xA1);
		assert_int_equal(u[7] | u[8] << 8, t[1].surface);
	}
	wo_cmesh_free(&m);
	diag_free(&d);
	free(p);
	free(t);
}

/* 16-bit clusters: offsets at and past 0x8000 are unsigned (SK8's correction: sign extension
 * would move them by 65.536 m at 1 mm), with a negative base too; 32-bit when the range is
 * wider than 65,535 steps. */
static void test_cmesh_compressed(void **state)
{
	struct wo_tri_in t[3] = {0};
	struct wo_tri out[3];
	struct wo_cmesh m;
	struct diag d;
	size_t len;
	uint8_t *p;
	const float g = 0.001f;

	(void)state;
	/* one cluster from -30 to +30 m: base -30000, offsets up to 60000 */
	t[0].v[1][0] = 30.0f, t[0].v[2][0] = -30.0f;
	t[1].v[0][2] = 32.767f, t[1].v[1][2] = 32.768f, t[1].v[2][2] = -30.0f;
	t[2].v[0][1] = 12.345f, t[2].surface = 0x1234;
	p = cm_bytes(t, 3, g, &len);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.cl[0].compression, 1);
	assert_int_equal(m.cl[0].base[0], -30000);
	assert_int_equal(wo_cmesh_tris(&m, 0, 3, out), 3);
	near(out[0].v[1][0], 30.0f, 1e-4f);
	near(out[0].v[2][0], -30.0f, 1e-4f);
	near(out[1].v[0][2], 32.767f, 1e-4f);
	near(out[1].v[1][2], 32.768f, 1e-4f);
	near(out[2].v[0][1], 12.345f, 1e-4f);
	assert_int_equal(out[2].surface, 0x1234);
	/* the stored offset of 32.768 m is 62768 = 0xF530: unsigned */
	{
		const uint8_t *v = p + m.cl[0].off + WO_CL_HDR + 12 + 6 * 4;

		assert_int_equal(ld_u16be(v + 4), 62768);
	}
	wo_cmesh_free(&m);
	free(p);
	/* a wider range: 32-bit */
	t[0].v[1][0] = 100.0f;
	p = cm_bytes(t, 3, g, &len);
	assert_int_equal(wo_cmesh_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.cl[0].compression, 2);
	assert_int_equal(wo_cmesh_tris(&m, 0, 3, out), 3);
	near(out[0].v[1][0], 100.0f, 1e-4f);
	near(out[0].v[2][0], -30.0f, 1e-4f);
	wo_cmesh_free(&m);
	diag_free(&d);
	free(p);
}

/* A quad unit is two triangles, (v0 v1 v2) and (v3 v2 v1); a trilist unit is passed over. */
static void test_cmesh_units(void **state)
{
	struct wo_tri_in *t = grid(2, 0, 1);
	struct wo_tri out[4];
	struct wo_cmesh m;
	struct diag d;
	size_t len;
	uint8_t *p = cm_bytes(t, 2, 0, &len), *u;

	(void)state;
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(p, len, &m, &d), RC_OK);
	u = p + m.cl[0].units_off;
	wo_cmesh_free(&m);
	/* unit 0: quad 0 1 2 4 with a surface id; unit 1: trilist of 1 triangle; 18 bytes in all */
	{
		const uint8_t b[18] = {0x82, 0, 1, 2, 4, 0x21, 0x43, 0x83, 1,
				       3,    4, 5, 0, 0, 0,    0,    0,	   0};

		memcpy(u, b, sizeof b);
	}
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(m.ntris, 2);
	assert_int_equal(m.skipped, 1);
	assert_int_equal(lines_with(&d, "1 trilist units passed over"), 1);
	assert_int_equal(wo_cmesh_tris(&m, 0, 4, out), 2);
	assert_memory_equal(out[0].v[0], t[0].v[0], 12);
	assert_memory_equal(out[0].v[2], t[0].v[2], 12);
	assert_memory_equal(out[1].v[0], t[1].v[1], 12); /* v3 = vertex 4 */
	assert_memory_equal(out[1].v[1], t[0].v[2], 12);
	assert_memory_equal(out[1].v[2], t[0].v[1], 12);
	assert_int_equal(out[1].surface, 0x4321);
	wo_cmesh_free(&m);
	/* a unit type RW does not know; a vertex index past the cluster's vertices */
	u[0] = 0x87;
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(m.ntris, 0);
	assert_int_equal(lines_with(&d, "cluster 0: unit 0 has type 7"), 1);
	wo_cmesh_free(&m);
	u[0] = 0x82, u[4] = 200;
	assert_int_equal(wo_cmesh_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(wo_cmesh_tris(&m, 0, 4, out), 2);
	assert_false(out[0].bad);
	assert_true(out[1].bad);
	near(out[1].v[0][0], 0, 0);
	wo_cmesh_free(&m);
	diag_free(&d);
	free(p);
	free(t);
}

static void test_cmesh_hostile(void **state)
{
	struct wo_tri_in *t = grid(300, 0, 1); /* 4 clusters, 3 branch nodes */
	struct wo_tri out[8];
	struct wo_cmesh m;
	struct diag d;
	size_t len;
	uint8_t *p = cm_bytes(t, 300, 0.01f, &len), *q = malloc(len);
	const uint32_t br = WO_CM_HDR + WO_KD_HDR;

	(void)state;
	assert_non_null(q);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(p, len, &m, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.ncl, 4);
	assert_int_equal(m.kd_nodes, 3);
	assert_int_equal(m.kd_reached, 3);
	wo_cmesh_free(&m);
	/* KD-tree cycles: node 1's branch child back to the root; a self-loop */
	memcpy(q, p, len);
	assert_int_equal(ld_u32be(q + br + 8), WO_KD_BRANCH); /* root's left child is node 1 */
	st32(q + br + WO_KD_NODE + 8, WO_KD_BRANCH);
	st32(q + br + WO_KD_NODE + 12, 0);
	assert_int_equal(wo_cmesh_parse(q, len, &m, &d), RC_OK);
	assert_true(m.kd_cycle);
	assert_int_equal(lines_with(&d, "KD-tree: node 1's child 0 was reached before"), 1);
	assert_int_equal(m.ntris, 300); /* the triangles come from the clusters all the same */
	wo_cmesh_free(&m);
	st32(q + br + WO_KD_NODE + 12, 1);
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(q, len, &m, &d), RC_OK);
	assert_int_equal(lines_with(&d, "node 1's child 1 was reached before"), 1);
	wo_cmesh_free(&m);
	/* a child past the nodes; a node count that lies; a leaf naming no cluster */
	memcpy(q, p, len);
	st32(q + br + 12, 0x7FFFFFF0u);
	st32(q + WO_CM_HDR + 4, 0x7FFFFFFF);
	st32(q + br + 2 * WO_KD_NODE + 12, 9u << 16);
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(q, len, &m, &d), RC_OK);
	assert_int_equal(
	    lines_with(&d, "KD-tree: claims 2147483647 branch nodes; the object holds"), 1);
	assert_int_equal(
	    lines_with(&d, "KD-tree: 1 child links name no node (first: node 0 -> 2147483632"), 1);
	assert_int_equal(lines_with(&d, "KD-tree: 1 leaves name no cluster's units (first: entry "
					"0x90000)"),
			 1);
	wo_cmesh_free(&m);
	/* lying cluster count, a cluster pointer past the end, a vertex count past the end,
	 * units past the end */
	memcpy(q, p, len);
	st32(q + 0x40, 0xFFFFFFFF);
	st32(q + ld_u32be(q + 0x34) + 4, 0xFFFFFFF0u);
	q[ld_u32be(q + ld_u32be(q + 0x34) + 12) + 10] = 255; /* cluster 3: 255 vertices */
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(q, len - 16, &m, &d), RC_OK);
	assert_true(lines_with(&d, "ClusteredMesh: claims 4294967295 clusters; the object holds"));
	assert_int_equal(lines_with(&d, "cluster 1 at 0xfffffff0 lies past the end"), 1);
	assert_int_equal(lines_with(&d, "cluster 3: its 255 vertices run past the end"), 1);
	assert_true(m.cl[1].bad && m.cl[3].bad);
	/* the table's claimed length runs into cluster bytes, read as more (garbage) clusters */
	assert_true(m.ncl > 4);
	assert_int_equal(m.cl[0].tri_count, 84);
	assert_int_equal(m.cl[2].tri_first, 84);
	assert_int_equal(m.cl[2].tri_count, 84);
	assert_int_equal(wo_cmesh_tris(&m, 84, 8, out), 8);
	assert_int_equal(out[0].cluster, 2);
	wo_cmesh_free(&m);
	/* the 20-bit flag: entries are cluster << 20 | offset, so the writer's cluster << 16
	 * leaves (but cluster 0's) name offsets past their units */
	memcpy(q, p, len);
	q[0x3D] |= WO_CMF_20BIT;
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(q, len, &m, &d), RC_OK);
	assert_int_equal(lines_with(&d, "KD-tree: 3 leaves name no cluster's units (first: entry "),
			 1);
	wo_cmesh_free(&m);
	/* a table of aliases: every pointer names cluster 0, whose triangles count once */
	memcpy(q, p, len);
	for (uint32_t i = 1; i < 4; i++)
		st32(q + ld_u32be(q + 0x34) + 4 * i, ld_u32be(q + ld_u32be(q + 0x34)));
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(q, len, &m, &d), RC_OK);
	assert_int_equal(m.ntris, 84);
	assert_int_equal(lines_with(&d, "3 clusters' units overlap another's (first: cluster 1 in "
					"cluster 0's); left out"),
			 1);
	wo_cmesh_free(&m);
	/* the granularity NaN: compressed vertices are not finite, so their triangles are bad */
	memcpy(q, p, len);
	stf(q + 0x38, NAN);
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(wo_cmesh_parse(q, len, &m, &d), RC_OK);
	assert_int_equal(lines_with(&d, "the vertex granularity is nan"), 1);
	assert_int_equal(wo_cmesh_tris(&m, 0, 8, out), 8);
	assert_true(out[0].bad);
	wo_cmesh_free(&m);
	/* short */
	assert_int_equal(wo_cmesh_parse(q, WO_CM_HDR - 1, &m, &d), RC_TRUNCATED);
	assert_null(m.data);
	diag_free(&d);
	free(q);
	free(p);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    // clang-format off
	    cmocka_unit_test(test_dmo_round_trip),
	    cmocka_unit_test(test_dmo_decompose_known),
	    cmocka_unit_test(test_dmo_hostile),
	    cmocka_unit_test(test_spline_round_trip),
	    cmocka_unit_test(test_spline_index_links),
	    cmocka_unit_test(test_spline_hostile),
	    cmocka_unit_test(test_cmesh_surface_bits),
	    cmocka_unit_test(test_cmesh_round_trip_float),
	    cmocka_unit_test(test_cmesh_compressed),
	    cmocka_unit_test(test_cmesh_units),
	    cmocka_unit_test(test_cmesh_hostile),
	    // clang-format on
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
