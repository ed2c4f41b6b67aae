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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dmo_round_trip),     cmocka_unit_test(test_dmo_decompose_known),
	    cmocka_unit_test(test_dmo_hostile),	       cmocka_unit_test(test_spline_round_trip),
	    cmocka_unit_test(test_spline_index_links), cmocka_unit_test(test_spline_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
