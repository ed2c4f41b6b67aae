/* Skate mesh decoders: GCM formats on known bits, object parsers on hand-built big-endian
 * buffers, skeleton math, and the scene / mesh decode of generated skinned arenas against the
 * generator's ground truth (sane and hostile). */
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
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/formats/skate_export.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_platform.h"
#include "tree/psg/view_psg.h"
#include "psgfs/base/source.h"

#include "arena_fixture.h"

/* Byte order the put helpers write (the decoders take it from the arena). */
static bool g_le;

static void put16(uint8_t *p, uint16_t v)
{
	p[g_le ? 1 : 0] = (uint8_t)(v >> 8);
	p[g_le ? 0 : 1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[g_le ? i : 3 - i] = (uint8_t)(v >> (8 * i));
}

static bool diag_has(const struct diag *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msg[i], needle))
			return true;
	return false;
}

/* ---- GCM formats ---- */

static void test_half(void **state)
{
	(void)state;
	assert_true(skate_half_to_float(0x3C00) == 1.0f);
	assert_true(skate_half_to_float(0xC000) == -2.0f);
	assert_true(skate_half_to_float(0x7BFF) == 65504.0f);
	assert_true(skate_half_to_float(0x0001) == ldexpf(1, -24)); /* smallest subnormal */
	assert_true(skate_half_to_float(0x03FF) == ldexpf(1023, -24));
	assert_true(skate_half_to_float(0x0400) == ldexpf(1, -14)); /* smallest normal */
	assert_true(skate_half_to_float(0x3555) == 0x1.554p-2f);
	assert_true(isinf(skate_half_to_float(0x7C00)) && skate_half_to_float(0x7C00) > 0);
	assert_true(isinf(skate_half_to_float(0xFC00)) && skate_half_to_float(0xFC00) < 0);
	assert_true(isnan(skate_half_to_float(0x7E00)));
	assert_true(skate_half_to_float(0x8000) == 0.0f && signbit(skate_half_to_float(0x8000)));
}

static void test_cmp(void **state)
{
	float v[3];

	(void)state;
	/* x = +1023, y = -1024 (0x400), z = -512 (0x200) */
	skate_cmp_decode(0x3FFu | 0x400u << 11 | 0x200u << 22, v);
	assert_true(v[0] == 1.0f);
	assert_true(v[1] == -1024.0f / 1023.0f);
	assert_true(v[2] == -512.0f / 511.0f);
	/* x = -1 (0x7FF), y = +1, z = +511 */
	skate_cmp_decode(0x7FFu | 1u << 11 | 0x1FFu << 22, v);
	assert_true(v[0] == -1.0f / 1023.0f);
	assert_true(v[1] == 1.0f / 1023.0f);
	assert_true(v[2] == 1.0f);
	/* z = -1 (0x3FF): top bits all set */
	skate_cmp_decode(0xFFC00000u, v);
	assert_true(v[0] == 0 && v[1] == 0 && v[2] == -1.0f / 511.0f);
}

static void test_formats(void **state)
{
	uint8_t b[16];
	float v[4];

	(void)state;
	put16(b, 0x8000);
	put16(b + 2, 0x7FFF);
	put16(b + 4, 0x0000);
	assert_int_equal(skate_velem_decode(SKATE_VF_S1, 3, b, false, v), 3);
	assert_true(v[0] == -32768.0f / 32767.0f && v[1] == 1.0f && v[2] == 0.0f);
	assert_int_equal(skate_velem_decode(SKATE_VF_S1, 1, b, true, v), 1);
	assert_true(v[0] == -32768.0f);
	put16(b, 0xFFFE);
	assert_int_equal(skate_velem_decode(SKATE_VF_S32K, 1, b, false, v), 1);
	assert_true(v[0] == -2.0f);
	b[0] = 255;
	b[1] = 0;
	b[2] = 51;
	b[3] = 7;
	assert_int_equal(skate_velem_decode(SKATE_VF_UB, 4, b, false, v), 4);
	assert_true(v[0] == 1.0f && v[1] == 0.0f && v[2] == 51.0f / 255.0f &&
		    v[3] == 7.0f / 255.0f);
	assert_int_equal(skate_velem_decode(SKATE_VF_UB, 4, b, true, v), 4);
	assert_true(v[3] == 7.0f);
	assert_int_equal(skate_velem_decode(SKATE_VF_UB256, 2, b, false, v), 2);
	assert_true(v[0] == 255.0f && v[1] == 0.0f);
	put32(b, 0x40490FDB);
	assert_int_equal(skate_velem_decode(SKATE_VF_F, 1, b, false, v), 1);
	assert_true(v[0] == 3.14159274f);
	put16(b, 0x3C00);
	put16(b + 2, 0x0001);
	assert_int_equal(skate_velem_decode(SKATE_VF_SF, 2, b, false, v), 2);
	assert_true(v[0] == 1.0f && v[1] == ldexpf(1, -24));
	put32(b, 0x3FFu);
	assert_int_equal(skate_velem_decode(SKATE_VF_CMP, 1, b, false, v), 3);
	assert_int_equal(skate_velem_decode(0, 1, b, false, v), 0);
	assert_int_equal(skate_velem_decode(8, 1, b, false, v), 0);
	assert_int_equal(skate_velem_decode(SKATE_VF_F, 5, b, false, v), 0);
	assert_int_equal(skate_velem_decode(SKATE_VF_F, 0, b, false, v), 0);
	assert_string_equal(skate_vfmt_name(SKATE_VF_CMP), "CMP");
	assert_string_equal(skate_vfmt_name(SKATE_VF_UB256), "UB256");
	assert_null(skate_vfmt_name(9));
	assert_int_equal(skate_vfmt_comp_size(SKATE_VF_SF), 2);
	assert_int_equal(skate_vfmt_comp_size(SKATE_VF_CMP), 4);
}

/* ---- parsers on hand-built buffers ---- */

/* The real sky descriptor (docs/skate-objects.md, "Vertex descriptor"). */
static const uint8_t sky_vdes[] = {0, 0,    0, 0, 0,	0, 1,	 1,    0, 1, 0, 2, 0, 3,
				   0, 0,    2, 3, 0,	0, 0,	 0x10, 0, 1, 1, 2, 0, 0x0C,
				   0, 0x10, 8, 1, 0xFF, 0, 0xFF, 0,    0, 0, 0, 0};

static void test_vdes(void **state)
{
	struct skate_vdes v;
	struct diag d;
	uint8_t bad[sizeof sky_vdes];

	(void)state;
	diag_init(&d);
	assert_int_equal(skate_vdes_parse(sky_vdes, sizeof sky_vdes, 8, &v, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(v.types_flags, 0x101);
	assert_int_equal(v.n_el, 2);
	assert_int_equal(v.stride, 16);
	assert_true(v.el[0].usable && v.el[1].usable);
	assert_int_equal(v.el[1].vertex_type, SKATE_VF_S1);
	assert_int_equal(v.el[1].offset, 12);
	assert_int_equal(v.el[1].type, SKATE_ET_TEX0);
	assert_true(v.has_trailer && v.trailer[0] == 0xFF);

	/* S1 x3 at 12 needs 18 bytes > stride 16 */
	memcpy(bad, sky_vdes, sizeof bad);
	bad[16 + 8 + 1] = 3;
	assert_int_equal(skate_vdes_parse(bad, sizeof bad, 8, &v, &d), RC_OK);
	assert_false(v.el[1].usable);
	assert_true(diag_has(&d, "does not fit stride 16"));

	/* claims 40 elements in 40 bytes */
	memcpy(bad, sky_vdes, sizeof bad);
	put16(bad + 10, 40);
	diag_free(&d);
	assert_int_equal(skate_vdes_parse(bad, sizeof bad, 8, &v, &d), RC_OK);
	assert_true(v.n_el <= 3);
	assert_true(d.n >= 2);
	assert_int_equal(skate_vdes_parse(bad, 15, 8, &v, &d), RC_CORRUPT);
	diag_free(&d);
}

static void test_vb_ib_mh(void **state)
{
	uint8_t b[32] = {0};
	struct skate_vb vb;
	struct skate_ib ib;
	struct skate_mesh_helper mh;
	struct diag d;

	(void)state;
	put32(b, 3);
	put32(b + 8, 3680);
	assert_int_equal(skate_vb_parse(b, 16, &vb), RC_OK);
	assert_int_equal(vb.buffer, 3);
	assert_int_equal(vb.buffer_size, 3680);
	assert_int_equal(skate_vb_parse(b, 15, &vb), RC_CORRUPT);
	put32(b, 5);
	put32(b + 8, 1140);
	put32(b + 12, 2);
	b[16] = 1;
	assert_int_equal(skate_ib_parse(b, 20, &ib), RC_OK);
	assert_int_equal(ib.num_indices, 1140);
	assert_int_equal(ib.stride, 2);
	assert_int_equal(ib.index_type, 1);
	assert_int_equal(skate_ib_parse(b, 19, &ib), RC_CORRUPT);
	memset(b, 0, sizeof b);
	put32(b, 1);
	put32(b + 4, 0x7FFFFFFF); /* far more than the object holds */
	put32(b + 8, 6);
	put32(b + 12, 4);
	diag_init(&d);
	assert_int_equal(skate_mesh_helper_parse(b, 16, 9, &mh, &d), RC_OK);
	assert_int_equal(mh.n_refs, 2);
	assert_int_equal(mh.refs[0], 6);
	assert_int_equal(mh.refs[1], 4);
	assert_true(diag_has(&d, "MeshHelper"));
	skate_mesh_helper_free(&mh);
	diag_free(&d);
}

/* OptiMesh with 3 islands: the palette is at +0x4C (= 0x60 + 36), not +0x6C. */
static void test_optimesh(void **state)
{
	uint8_t b[0x60 + 36 + 8] = {0};
	struct skate_optimesh m;
	struct diag d;

	(void)state;
	put32(b + 0x28, 8);
	put32(b + 0x38, 3);
	put32(b + 0x44, 0x60);
	put32(b + 0x48, 3);
	put32(b + 0x4C, 0x60 + 36);
	for (int i = 0; i < 3; i++) {
		put32(b + 0x60 + 12 * i, 285u * i);
		put32(b + 0x60 + 12 * i + 4, 285);
		b[0x60 + 12 * i + 8] = 5;
	}
	put16(b + 0x60 + 36, 7);
	put16(b + 0x60 + 38, 2);
	put16(b + 0x60 + 40, 9);
	diag_init(&d);
	assert_int_equal(skate_optimesh_parse(b, sizeof b, 7, &m, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.n_islands, 3);
	assert_int_equal(m.islands[2].start, 570);
	assert_int_equal(m.islands[2].count, 285);
	assert_int_equal(m.islands[2].prim, 5);
	assert_int_equal(m.n_remap, 3);
	assert_int_equal(m.remap[0], 7);
	assert_int_equal(m.remap[1], 2);
	assert_int_equal(m.remap[2], 9);
	assert_int_equal(m.vdes, 8);
	skate_optimesh_free(&m);

	/* hostile counts and offsets */
	put32(b + 0x38, 0xFFFFFFFF);
	put32(b + 0x48, 0xFFFFFFFF);
	assert_int_equal(skate_optimesh_parse(b, sizeof b, 7, &m, &d), RC_OK);
	assert_true(m.n_islands <= (sizeof b - 0x60) / 12);
	assert_true(m.n_remap <= (sizeof b - 0x60 - 36) / 2);
	skate_optimesh_free(&m);
	put32(b + 0x44, 0xFFFFFF00);
	put32(b + 0x4C, 0xFFFFFF00);
	assert_int_equal(skate_optimesh_parse(b, sizeof b, 7, &m, &d), RC_OK);
	assert_int_equal(m.n_islands, 0);
	assert_int_equal(m.n_remap, 0);
	assert_true(diag_has(&d, "past the object"));
	skate_optimesh_free(&m);
	assert_int_equal(skate_optimesh_parse(b, 0x5F, 7, &m, &d), RC_CORRUPT);
	diag_free(&d);
}

/* ---- platform tables and neutral elements ---- */

static void test_platform_table(void **state)
{
	struct arena a;
	struct skate_scene *sc = (void *)1;
	struct src_mem m;
	struct src s;

	(void)state;
	memset(&a, 0, sizeof a);
	a.h.plat = RW_PS3;
	a.big_endian = true;
	assert_ptr_equal(skate_platform_of(&a), &skate_platform_ps3);
	assert_string_equal(skate_platform_ps3.name, "PS3");
	assert_int_equal(skate_platform_ps3.dip_size, 12);
	assert_int_equal(skate_platform_ps3.tri_prim, 5);
	assert_false(skate_platform_ps3.base_res_row_before);
	a.h.plat = RW_XB2;
	assert_ptr_equal(skate_platform_of(&a), &skate_platform_x360);
	assert_int_equal(skate_platform_x360.dip_size, 16);
	assert_int_equal(skate_platform_x360.tri_prim, 4);
	assert_true(skate_platform_x360.base_res_row_before);
	/* No Wii or PC table yet: the scene refuses those arenas. */
	src_init_mem(&s, &m, "", 0);
	for (int p = RW_REV; p <= RW_W32; p++) {
		a.h.plat = (enum rw_platform)p;
		assert_null(skate_platform_of(&a));
		assert_int_equal(skate_scene_load(&s, &a, NULL, &sc, NULL), RC_UNSUPPORTED);
		assert_null(sc);
	}
}

/* The real sky descriptor in neutral terms, and the PS3 element numbering behind it. */
static void test_neutral_elements(void **state)
{
	struct skate_vdes v;
	struct skate_velem el = {.vertex_type = SKATE_VF_UB,
				 .num_components = 4,
				 .offset = 20,
				 .type = SKATE_ET_INDICES,
				 .usable = true};
	struct skate_elem e;
	char txt[64];

	(void)state;
	assert_int_equal(
	    skate_platform_ps3.vdes_parse(sky_vdes, sizeof sky_vdes, true, 8, &v, NULL), RC_OK);
	assert_int_equal(v.elem[0].usage, SKATE_USAGE_POSITION);
	assert_int_equal(v.elem[0].ctype, SKATE_CT_F32);
	assert_int_equal(v.elem[0].count, 3);
	assert_int_equal(v.elem[0].n_out, 3);
	assert_int_equal(v.elem[0].size, 12);
	assert_true(v.elem[0].divisor == 1.0f && !v.elem[0].normalized && v.elem[0].usable);
	assert_string_equal(v.elem[0].format_name, "F");
	assert_int_equal(v.elem[1].usage, SKATE_USAGE_TEXCOORD);
	assert_int_equal(v.elem[1].set, 0);
	assert_int_equal(v.elem[1].ctype, SKATE_CT_S16);
	assert_int_equal(v.elem[1].offset, 12);
	assert_int_equal(v.elem[1].stored_type, SKATE_ET_TEX0);
	assert_true(v.elem[1].normalized && v.elem[1].divisor == 32767.0f);
	skate_elem_encoding(&v.elem[0], txt);
	assert_string_equal(txt, "Fx3 as f32");
	skate_elem_encoding(&v.elem[1], txt);
	assert_string_equal(txt, "S1x2 as s16/32767 (normalised)");
	/* blend indices stored as UB are palette slots, not fractions */
	skate_platform_ps3.elem_describe(&el, &e);
	assert_int_equal(e.usage, SKATE_USAGE_BLEND_INDICES);
	assert_true(e.divisor == 1.0f && !e.normalized);
	el.vertex_type = SKATE_VF_CMP;
	el.num_components = 1;
	el.type = SKATE_ET_TANGENT;
	skate_platform_ps3.elem_describe(&el, &e);
	assert_int_equal(e.usage, SKATE_USAGE_TANGENT);
	assert_int_equal(e.ctype, SKATE_CT_S11_11_10);
	assert_int_equal(e.n_out, 3);
	assert_int_equal(e.size, 4);
	el.type = 0x0E + 0x10; /* not a PS3 slot */
	skate_platform_ps3.elem_describe(&el, &e);
	assert_int_equal(e.usage, SKATE_USAGE_OTHER);
	assert_string_equal(skate_usage_name(SKATE_USAGE_BLEND_WEIGHTS), "BLEND_WEIGHTS");
	assert_string_equal(skate_usage_name(200), "OTHER");
}

/* Island records go through the platform table: a table with 16-byte records (as Xbox 360's
 * DrawIndexedParameters are) reads the same OptiMesh bytes differently. */
static void dip16_decode(struct br *r, struct skate_island *out)
{
	out->prim = (uint8_t)br_u32(r);
	out->start = br_u32(r);
	out->count = br_u32(r);
	br_skip(r, 4);
	out->triangles = out->prim == 4;
}

static void test_platform_islands(void **state)
{
	uint8_t b[0x60 + 32] = {0};
	struct skate_platform t16 = skate_platform_ps3;
	struct skate_optimesh m;

	(void)state;
	t16.dip_size = 16;
	t16.dip_decode = dip16_decode;
	put32(b + 0x38, 2);
	put32(b + 0x44, 0x60);
	for (int i = 0; i < 2; i++) {
		put32(b + 0x60 + 16 * i, 4);
		put32(b + 0x60 + 16 * i + 4, 30u * (uint32_t)i);
		put32(b + 0x60 + 16 * i + 8, 30);
	}
	assert_int_equal(skate_optimesh_decode(&t16, b, sizeof b, true, 7, &m, NULL), RC_OK);
	assert_int_equal(m.n_islands, 2);
	assert_int_equal(m.islands[1].start, 30);
	assert_int_equal(m.islands[1].count, 30);
	assert_true(m.islands[1].triangles);
	skate_optimesh_free(&m);
	/* the PS3 table sees 12-byte records in the same bytes */
	assert_int_equal(skate_optimesh_decode(&skate_platform_ps3, b, sizeof b, true, 7, &m, NULL),
			 RC_OK);
	assert_int_equal(m.islands[0].start, 4);
	assert_false(m.islands[0].triangles);
	skate_optimesh_free(&m);
}

/* RenderModelData with 2 bones, 1 mesh, 1 island. */
static size_t build_model(uint8_t *b, uint16_t nbones)
{
	size_t at = 0x40;

	memset(b, 0, 512);
	put32(b + 0x20, 0x40); /* IBP */
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 4; i++)
			put32(b + 0x40 + 64 * k + 20 * i, f32_bits(1.0f + (float)k)); /* diagonal */
	at += 128;
	put32(b + 0x24, (uint32_t)at); /* mesh table */
	put32(b + at, 7);
	put32(b + at + 4, 0);
	at += 8;
	put32(b + 0x28, (uint32_t)at); /* name table */
	put32(b + at, (uint32_t)at + 8);
	put32(b + at + 4, (uint32_t)at + 13);
	memcpy(b + at + 8, "HIPS\0SPINE", 11);
	put32(b + 0x2C, (uint32_t)at + 8);
	at += 8 + 11;
	at = (at + 15) & ~(size_t)15;
	put16(b + 0x30, nbones);
	put16(b + 0x32, 1);
	put16(b + 0x34, nbones);
	put16(b + 0x36, 1);
	put32(b + 0x38, (uint32_t)at);
	put32(b + at + 4, f32_bits(-1.5f));
	put32(b + 0x3C, (uint32_t)at + 32);
	put32(b + at + 32 + 8, f32_bits(2.5f));
	return at + 48;
}

static void test_model(void **state)
{
	uint8_t b[512];
	size_t n = build_model(b, 2);
	struct skate_model m;
	struct diag d;

	(void)state;
	diag_init(&d);
	assert_int_equal(skate_model_parse(b, n, 10, &m, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.n_bones, 2);
	assert_string_equal(m.names[0], "HIPS");
	assert_string_equal(m.names[1], "SPINE");
	assert_true(m.ibp[1][0] == 2.0f && m.ibp[1][5] == 2.0f && m.ibp[1][1] == 0.0f);
	assert_int_equal(m.n_meshes, 1);
	assert_int_equal(m.meshes[0].mesh, 7);
	assert_int_equal(m.n_aabbs, 1);
	assert_true(m.aabbs[0][1] == -1.5f);
	assert_true(m.areas[0][2] == 2.5f);
	skate_model_free(&m);

	/* bone count larger than the object */
	n = build_model(b, 0xFFFF);
	assert_int_equal(skate_model_parse(b, n, 10, &m, &d), RC_OK);
	assert_true(m.n_bones < 10);
	assert_true(diag_has(&d, "65535 bones"));
	skate_model_free(&m);
	assert_int_equal(skate_model_parse(b, 0x3F, 10, &m, &d), RC_CORRUPT);
	diag_free(&d);
}

/* The decoders follow the byte order they are given: the same objects written little-endian
 * decode to the same values. */
static void test_byte_order(void **state)
{
	uint8_t b[512], vd[16 + 16 + 8] = {0}, ob[0x60 + 12 + 4] = {0}, ib[20] = {0};
	struct skate_model m;
	struct skate_vdes v;
	struct skate_optimesh om;
	struct skate_ib x;
	struct skate_mesh_helper mh;
	size_t n;

	(void)state;
	g_le = true;
	n = build_model(b, 2);
	assert_int_equal(skate_model_decode(b, n, false, 10, &m, NULL), RC_OK);
	assert_int_equal(m.n_bones, 2);
	assert_string_equal(m.names[1], "SPINE");
	assert_true(m.ibp[1][5] == 2.0f);
	assert_int_equal(m.meshes[0].mesh, 7);
	assert_true(m.aabbs[0][1] == -1.5f && m.areas[0][2] == 2.5f);
	skate_model_free(&m);
	/* big-endian reading of little-endian bytes finds garbage counts, not these values */
	assert_int_equal(skate_model_decode(b, n, true, 10, &m, NULL), RC_OK);
	assert_int_not_equal(m.num_bones, 2);
	skate_model_free(&m);

	put32(vd + 4, 0x101);
	put16(vd + 8, 1);
	put16(vd + 10, 2);
	vd[16] = SKATE_VF_F, vd[17] = 3, put16(vd + 20, 16), vd[22] = SKATE_ET_XYZ;
	vd[24] = SKATE_VF_S1, vd[25] = 2, vd[27] = 12, put16(vd + 28, 16), vd[30] = SKATE_ET_TEX0;
	assert_int_equal(skate_platform_ps3.vdes_parse(vd, sizeof vd, false, 8, &v, NULL), RC_OK);
	assert_int_equal(v.types_flags, 0x101);
	assert_int_equal(v.n_el, 2);
	assert_int_equal(v.stride, 16);
	assert_true(v.elem[1].usable && v.elem[1].offset == 12);

	put32(ob + 0x38, 1);
	put32(ob + 0x44, 0x60);
	put32(ob + 0x48, 2);
	put32(ob + 0x4C, 0x6C);
	put32(ob + 0x60 + 4, 285);
	ob[0x60 + 8] = 5;
	put16(ob + 0x6C, 3);
	put16(ob + 0x6E, 9);
	assert_int_equal(
	    skate_optimesh_decode(&skate_platform_ps3, ob, sizeof ob, false, 7, &om, NULL), RC_OK);
	assert_int_equal(om.n_islands, 1);
	assert_int_equal(om.islands[0].count, 285);
	assert_true(om.islands[0].triangles);
	assert_int_equal(om.n_remap, 2);
	assert_int_equal(om.remap[1], 9);
	skate_optimesh_free(&om);

	put32(ib, 5);
	put32(ib + 8, 1140);
	put32(ib + 12, 2);
	ib[16] = 1;
	assert_int_equal(skate_platform_ps3.ib_parse(ib, sizeof ib, false, 6, &x, NULL), RC_OK);
	assert_int_equal(x.num_indices, 1140);
	assert_int_equal(x.width, 2);
	put32(ib, 1);
	put32(ib + 4, 1);
	put32(ib + 8, 6);
	put32(ib + 12, 4);
	assert_int_equal(skate_platform_ps3.mesh_helper_parse(ib, 16, false, 9, &mh, NULL), RC_OK);
	assert_int_equal(mh.n_refs, 2);
	assert_int_equal(mh.refs[1], 4);
	skate_mesh_helper_free(&mh);
	g_le = false;
}

/* One bad table offset spoils only its own table. */
static void test_model_tables_independent(void **state)
{
	uint8_t b[512];
	size_t n = build_model(b, 2);
	struct skate_model m;
	struct diag d;

	(void)state;
	put16(b + 0x32, 0);	     /* no meshes ... */
	put32(b + 0x24, 0xFFFFFF00); /* ... at a nonsense offset */
	diag_init(&d);
	assert_int_equal(skate_model_decode(b, n, true, 10, &m, &d), RC_OK);
	assert_int_equal(m.n_meshes, 0);
	assert_int_equal(m.n_aabbs, 1);
	assert_true(m.aabbs[0][1] == -1.5f);
	assert_true(m.areas[0][2] == 2.5f);
	skate_model_free(&m);
	diag_free(&d);
}

/* ---- skeleton math ---- */

static void test_skeleton_math(void **state)
{
	/* bind: rotation of 90 deg about Z (x axis -> y), origin (1, 2, 3); row-vector layout */
	const float bind[16] = {0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 2, 3, 1};
	float ibp[16], back[16], t[3], q[4], err, v[3], o[3];

	(void)state;
	assert_true(skate_mat4_inverse(bind, ibp));
	assert_true(skate_mat4_inverse(ibp, back));
	for (int i = 0; i < 16; i++)
		assert_true(fabsf(back[i] - bind[i]) < 1e-6f);
	assert_true(skate_decompose(bind, t, q, SKATE_RIGID_TOL, &err));
	assert_true(t[0] == 1 && t[1] == 2 && t[2] == 3);
	assert_true(fabsf(q[2] - 0.70710678f) < 1e-6f && fabsf(q[3] - 0.70710678f) < 1e-6f);
	v[0] = 1, v[1] = 0, v[2] = 0;
	skate_quat_rotate(q, v, o);
	assert_true(fabsf(o[0]) < 1e-6f && fabsf(o[1] - 1) < 1e-6f);
	/* scaled: not rigid, still a unit quaternion */
	{
		float s[16];

		memcpy(s, bind, sizeof s);
		for (int i = 0; i < 3; i++)
			s[i] *= 2;
		assert_false(skate_decompose(s, t, q, SKATE_RIGID_TOL, &err));
		assert_true(err > 0.5f);
		assert_true(fabsf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1) <
			    1e-5f);
	}
	/* singular */
	{
		float z[16] = {0};

		assert_false(skate_mat4_inverse(z, ibp));
	}
}

/* ---- generated arenas ---- */

static bool quat_eq(const float *a, const float *b, float tol)
{
	float d = 0, e = 0;

	for (int i = 0; i < 4; i++) {
		d = fmaxf(d, fabsf(a[i] - b[i]));
		e = fmaxf(e, fabsf(a[i] + b[i]));
	}
	return d < tol || e < tol;
}

static void check_scene(struct fx *f, const struct skate_scene *sc, bool tsv)
{
	const struct gen_skinned_truth *t = &f->t;

	assert_int_equal(sc->n_bones, t->n_bones);
	assert_int_equal(sc->n_meshes, t->n_meshes);
	assert_int_equal(sc->n_nonrigid, 0);
	assert_int_equal(sc->hierarchy, tsv ? SKATE_HIER_TSV : SKATE_HIER_DEFAULT);
	for (uint32_t i = 0; i < t->n_bones; i++) {
		const struct skate_bone *b = &sc->bones[i];

		assert_string_equal(b->name, t->names[i]);
		assert_memory_equal(b->ibp, t->ibp[i], sizeof b->ibp);
		assert_true(b->rigid);
		for (int k = 0; k < 3; k++)
			assert_true(fabsf(b->t[k] - t->t[i][k]) < 1e-4f);
		assert_true(quat_eq(b->q, t->q[i], 1e-4f));
		assert_int_equal(b->parent, tsv ? t->parent[i] : (i == 0 ? -1 : 0));
	}
	for (uint32_t mi = 0; mi < t->n_meshes; mi++) {
		const struct skate_scene_mesh *m = &sc->meshes[mi];
		const struct gen_skinned_mesh_truth *tm = &t->mesh[mi];

		assert_true(m->ok);
		assert_true(m->material_named);
		assert_string_equal(m->material, tm->material);
		assert_int_equal(m->vertex_count, tm->n_verts);
		assert_int_equal(m->index_width, tm->index_width);
		assert_int_equal(m->skinned, tm->skinned);
		assert_int_equal(m->n_palette, tm->n_palette);
		assert_true(m->n_palette < t->n_bones);
		for (uint32_t k = 0; k < m->n_palette; k++)
			assert_int_equal(m->palette[k], tm->palette[k]);
		assert_int_equal(m->n_islands, tm->n_islands);
		for (uint32_t k = 0; k < m->n_islands; k++) {
			assert_int_equal(m->islands[k].start, tm->island_start[k]);
			assert_int_equal(m->islands[k].count, tm->island_count[k]);
			assert_int_equal(m->islands[k].prim, 5);
		}
	}
}

static void check_mesh(struct fx *f, const struct skate_scene *sc, size_t mi)
{
	const struct gen_skinned_mesh_truth *tm = &f->t.mesh[mi];
	struct skate_mesh_data *md;
	struct diag d;
	const struct skate_attr *pa, *na, *ua;

	diag_init(&d);
	assert_int_equal(skate_mesh_decode(&f->s, &f->a, sc, mi, &md, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(md->n_verts, tm->n_verts);
	assert_true(md->pos >= 0 && md->normal >= 0 && md->tex[0] >= 0);
	pa = &md->attr[md->pos];
	na = &md->attr[md->normal];
	ua = &md->attr[md->tex[0]];
	assert_int_equal(pa->n, 3);
	assert_int_equal(na->n, 3);
	assert_int_equal(pa->e.usage, SKATE_USAGE_POSITION);
	assert_int_equal(na->e.usage, SKATE_USAGE_NORMAL);
	assert_int_equal(ua->e.usage, SKATE_USAGE_TEXCOORD);
	assert_int_equal(ua->type, SKATE_ET_TEX0);
	for (uint32_t v = 0; v < md->n_verts; v++) {
		for (int c = 0; c < 3; c++) {
			assert_true(pa->v[3 * v + c] == tm->pos[v][c]);
			assert_true(na->v[3 * v + c] == tm->normal[v][c]);
		}
		for (int c = 0; c < 2; c++)
			assert_true(ua->v[(size_t)ua->n * v + c] == tm->uv[v][c]);
		if (tm->color) {
			const struct skate_attr *ca = &md->attr[md->color];

			for (int c = 0; c < 4; c++)
				assert_true(ca->v[4 * v + c] == tm->color[v][c]);
		}
		assert_int_equal(md->n_infl[v], tm->n_infl[v]);
		for (int j = 0; j < tm->n_infl[v]; j++) {
			assert_int_equal(md->infl[v][j].bone, tm->bone[v][j]);
			assert_true(fabsf(md->infl[v][j].weight - tm->weight[v][j]) < 1e-6f);
		}
	}
	assert_int_equal(md->n_unweighted, 0);
	assert_int_equal(md->n_tri, tm->n_tri);
	for (size_t k = 0; k < md->n_tri; k++) {
		assert_memory_equal(md->tri[k], tm->tri[k], sizeof md->tri[k]);
		assert_int_equal(md->tri_island[k], tm->tri_island[k]);
	}
	assert_true(skate_mesh_data_bytes(md) > (size_t)md->n_verts * 12);
	skate_mesh_data_free(md);
	diag_free(&d);
}

static void test_scene_truth(void **state)
{
	static const uint64_t shuffles[] = {0, 0xABCDEF, 0, 0xABCDEF};

	(void)state;
	for (int s = 0; s < 4; s++)
		for (int tsv = 0; tsv < 2; tsv++) {
			/* s >= 2: base resources first, so a VertexBuffer or IndexBuffer names
			 * row 0 with a stored 0 */
			struct gen_skinned_opts o = {.seed = 7 + (uint64_t)s,
						     .n_bones = 20,
						     .n_meshes = 5,
						     .verts = 80,
						     .islands = 3,
						     .tris = 25,
						     .layout = -1,
						     .shuffle_seed = shuffles[s],
						     .baseres_first = s >= 2};
			struct fx f;
			struct skate_scene *sc;
			struct diag d;

			fx_gen(&f, &o);
			diag_init(&d);
			assert_int_equal(
			    skate_scene_load(&f.s, &f.a, tsv ? f.t.hierarchy_tsv : NULL, &sc, &d),
			    RC_OK);
			for (size_t i = 0; i < d.n; i++)
				print_message("unexpected: %s\n", d.msg[i]);
			assert_int_equal(d.n, 0);
			assert_int_equal(sc->n_problems, 0);
			check_scene(&f, sc, tsv);
			for (size_t mi = 0; mi < sc->n_meshes; mi++)
				check_mesh(&f, sc, mi);
			assert_true(skate_scene_bytes(sc) > 20 * sizeof(struct skate_bone));
			skate_scene_free(sc);
			diag_free(&d);
			fx_free(&f);
		}
}

/* Every GCM format appears in some generated descriptor. */
static void test_formats_covered(void **state)
{
	struct gen_skinned_opts o = {.seed = 3, .n_meshes = GEN_SK_LAYOUTS, .layout = -1};
	struct fx f;
	struct skate_scene *sc;
	bool seen[8] = {false};

	(void)state;
	fx_gen(&f, &o);
	assert_int_equal(skate_scene_load(&f.s, &f.a, NULL, &sc, NULL), RC_OK);
	for (size_t mi = 0; mi < sc->n_meshes; mi++)
		for (unsigned e = 0; e < sc->meshes[mi].desc.n_el; e++)
			seen[sc->meshes[mi].desc.el[e].vertex_type & 7] = true;
	for (int vt = 1; vt <= 7; vt++)
		assert_true(seen[vt]);
	{
		bool w2 = false, w4 = false;

		for (size_t mi = 0; mi < sc->n_meshes; mi++) {
			w2 |= sc->meshes[mi].index_width == 2;
			w4 |= sc->meshes[mi].index_width == 4;
		}
		assert_true(w2 && w4);
	}
	skate_scene_free(sc);
	fx_free(&f);
}

static void test_hierarchy_cycles(void **state)
{
	struct gen_skinned_opts o = {.seed = 11, .n_bones = 8, .n_meshes = 1};
	struct fx f;
	struct skate_scene *sc;
	struct diag d;
	const char *tsv = "bone\tparent\n"
			  "ROOT\tBone_003\n"	 /* 0 -> 3 */
			  "Bone_003\tROOT\n"	 /* 3 -> 0: cycle through bone 0 */
			  "Bone_001\tBone_002\n" /* 1 <-> 2 */
			  "Bone_002\tBone_001\n"
			  "Bone_004\tBone_004\n" /* self */
			  "Bone_005\tNOPE\n"
			  "Ghost\tROOT\n"
			  "Bone_006\t-\n"
			  "API_KEY=s3cr3t\tROOT\n" /* a private file's lines stay private */
			  "Bone_006\tTOKEN=hunter2\n";

	(void)state;
	fx_gen(&f, &o);
	diag_init(&d);
	assert_int_equal(skate_scene_load(&f.s, &f.a, tsv, &sc, &d), RC_OK);
	assert_true(diag_has(&d, "cycle"));
	assert_true(diag_has(&d, "line 7: bone 5 (\"Bone_005\") has a parent that names no bone"));
	assert_true(diag_has(&d, "line 8: names no bone of the model"));
	assert_true(diag_has(&d, "line 11: bone 6 (\"Bone_006\") listed again"));
	assert_true(diag_has(&d, "not listed"));
	/* errors.txt may be world-readable while the hierarchy file is 0600: line numbers and the
	 * model's own names only, never the file's text (issue 21 item 6). */
	assert_false(diag_has(&d, "NOPE"));
	assert_false(diag_has(&d, "Ghost"));
	assert_false(diag_has(&d, "s3cr3t"));
	assert_false(diag_has(&d, "hunter2"));
	/* acyclic: every bone reaches a root within n steps */
	for (uint32_t i = 0; i < sc->n_bones; i++) {
		int32_t x = (int32_t)i;
		uint32_t steps = 0;

		while (x >= 0 && steps <= sc->n_bones) {
			x = sc->bones[x].parent;
			steps++;
		}
		assert_true(x < 0);
	}
	assert_int_equal(sc->bones[6].parent, -1);
	assert_int_equal(sc->bones[5].parent, 0);
	assert_int_equal(sc->bones[7].parent, 0); /* not listed */
	skate_scene_free(sc);
	diag_free(&d);
	fx_free(&f);
}

/* Hierarchy files match bone names exactly first, else ignoring case. */
static void test_hierarchy_case(void **state)
{
	struct gen_skinned_opts o = {.seed = 11, .n_bones = 4, .n_meshes = 1};
	struct fx f;
	struct skate_scene *sc;
	struct diag d;
	const char *tsv = "BONE_001\troot\n"
			  "bone_002\tbone_001\n"
			  "Bone_003\tBONE_002\n";

	(void)state;
	fx_gen(&f, &o);
	diag_init(&d);
	assert_int_equal(skate_scene_load(&f.s, &f.a, tsv, &sc, &d), RC_OK);
	assert_false(diag_has(&d, "unknown"));
	assert_int_equal(sc->bones[1].parent, 0);
	assert_int_equal(sc->bones[2].parent, 1);
	assert_int_equal(sc->bones[3].parent, 2);
	assert_int_equal(sc->hier_matched, 3);
	skate_scene_free(sc);
	diag_free(&d);
	fx_free(&f);
}

/* A whole streamed mesh view into b (fresh). */
static void render_view(enum rc (*fn)(const struct view_mesh *, uint64_t, struct emit *),
			const struct view_mesh *vm, struct buf *b)
{
	struct emit e;

	emit_init_window(&e, 0, SIZE_MAX);
	assert_int_equal(fn(vm, 0, &e), RC_OK);
	buf_init(b);
	buf_put(b, e.b.data, e.b.len);
	emit_free(&e);
}

static void run_hostile(enum gen_skinned_hostile h, const char *needle, int layout)
{
	struct gen_skinned_opts o = {
	    .seed = 5, .n_bones = 10, .n_meshes = 3, .layout = layout, .hostile = h};
	struct fx f;
	struct skate_scene *sc;
	struct diag d;
	struct buf b;

	fx_gen(&f, &o);
	diag_init(&d);
	assert_int_equal(skate_scene_load(&f.s, &f.a, f.t.hierarchy_tsv, &sc, &d), RC_OK);
	for (size_t mi = 0; mi < sc->n_meshes; mi++) {
		struct skate_mesh_data *md;
		enum rc r = skate_mesh_decode(&f.s, &f.a, sc, mi, &md, &d);

		if (r == RC_OK) {
			struct skate_mesh_stats *st;
			struct view_mesh vm = {&f.s, &f.a, sc, mi, NULL};
			struct emit e;

			assert_int_equal(skate_mesh_stats_build(&f.s, &f.a, sc, mi, &st, NULL),
					 RC_OK);
			vm.st = st;
			emit_init_count(&e, 4096);
			assert_int_equal(view_vertices(&vm, 0, &e), RC_OK);
			assert_int_equal(view_skin(&vm, 0, &e), RC_OK);
			assert_int_equal(view_triangles(&vm, 0, &e), RC_OK);
			emit_free(&e);
			skate_mesh_stats_free(st);
			skate_mesh_data_free(md);
		}
	}
	for (uint32_t i = 0; i < f.a.n_dict; i++) {
		buf_init(&b);
		(void)view_object_text(&f.s, &f.a, i, &b, NULL);
		buf_free(&b);
	}
	buf_init(&b);
	assert_int_equal(skate_export_psk(&f.s, &f.a, sc, true, &b, NULL), RC_OK);
	buf_free(&b);
	if (!diag_has(&d, needle))
		for (size_t i = 0; i < d.n; i++)
			print_message("diag: %s\n", d.msg[i]);
	assert_true(diag_has(&d, needle));
	skate_scene_free(sc);
	diag_free(&d);
	fx_free(&f);
}

static void test_hostile(void **state)
{
	(void)state;
	run_hostile(GEN_SK_PALETTE_PAST_SKELETON, "past the skeleton", 0);
	run_hostile(GEN_SK_PALETTE_PAST_SKELETON, "outside the palette", 0);
	run_hostile(GEN_SK_INDEX_PAST_VERTS, "past the vertex count", -1);
	run_hostile(GEN_SK_INDEX_PAST_VERTS, "past the vertex count", 1);
	run_hostile(GEN_SK_STRIDE_TOO_SMALL, "does not fit stride", 0);
	run_hostile(GEN_SK_STRIDE_TOO_SMALL, "not a multiple of stride", 0);
	run_hostile(GEN_SK_BONES_PAST_OBJECT, "65535 bones", -1);
}

/* Mutating every byte of the model objects never crashes (run under ASan in CI). */
static void test_mutations(void **state)
{
	struct gen_skinned_opts o = {
	    .seed = 9, .n_bones = 5, .n_meshes = 2, .verts = 12, .islands = 2, .tris = 3};
	struct fx f;

	(void)state;
	fx_gen(&f, &o);
	for (uint32_t i = 0; i < f.a.n_dict; i++) {
		const struct arena_dict_entry *e = arena_row(&f.a, i);

		if (e->base_resource)
			continue;
		for (uint32_t k = 0; k < e->size; k++) {
			static const uint8_t vals[] = {0xFF, 0x00, 0x80, 0x7F};
			uint8_t keep = f.file[e->start + k];

			for (size_t vi = 0; vi < sizeof vals; vi++) {
				struct skate_scene *sc;
				struct diag d;

				f.file[e->start + k] = vals[vi];
				diag_init(&d);
				if (skate_scene_load(&f.s, &f.a, f.t.hierarchy_tsv, &sc, &d) ==
				    RC_OK) {
					for (size_t mi = 0; mi < sc->n_meshes; mi++) {
						struct skate_mesh_data *md;

						if (skate_mesh_decode(&f.s, &f.a, sc, mi, &md,
								      &d) == RC_OK)
							skate_mesh_data_free(md);
					}
					skate_scene_free(sc);
				}
				{
					struct buf b;

					buf_init(&b);
					(void)view_object_text(&f.s, &f.a, i, &b, NULL);
					buf_free(&b);
				}
				diag_free(&d);
			}
			f.file[e->start + k] = keep;
		}
	}
	fx_free(&f);
}

/* The static sky model shaped like the real one (built by the arena generator). */
static void test_sky(void **state)
{
	struct buf b;
	uint8_t *file;
	size_t len;
	struct src_mem m;
	struct src s;
	struct arena a;
	struct diag d;
	struct skate_scene *sc;
	struct skate_mesh_data *md;

	(void)state;
	buf_init(&b);
	assert_int_equal(gen_psg_sky(0x1234, &b, NULL), RC_OK);
	file = buf_steal(&b, &len);
	src_init_mem(&s, &m, file, len);
	diag_init(&d);
	assert_int_equal(arena_open(&s, &a, &d), RC_OK);
	assert_int_equal(skate_scene_load(&s, &a, NULL, &sc, &d), RC_OK);
	for (size_t i = 0; i < d.n; i++)
		print_message("sky: %s\n", d.msg[i]);
	assert_int_equal(d.n, 0);
	assert_int_equal(sc->n_bones, 1);
	assert_string_equal(sc->bones[0].name, "skyboxSphere");
	assert_int_equal(sc->n_meshes, 1);
	assert_true(sc->meshes[0].ok);
	assert_false(sc->meshes[0].skinned);
	assert_int_equal(sc->meshes[0].vertex_count, 230);
	assert_int_equal(sc->meshes[0].stride, 16);
	assert_int_equal(sc->meshes[0].index_count, 1140);
	assert_int_equal(sc->meshes[0].index_width, 2);
	assert_int_equal(sc->meshes[0].n_islands, 4);
	assert_int_equal(sc->meshes[0].islands[3].start, 855);
	assert_int_equal(sc->meshes[0].n_palette, 1);
	assert_int_equal(skate_mesh_decode(&s, &a, sc, 0, &md, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(md->n_tri, 380);
	for (uint32_t v = 0; v < md->n_verts; v++) {
		assert_int_equal(md->n_infl[v], 1);
		assert_int_equal(md->infl[v][0].bone, 0);
		assert_true(md->infl[v][0].weight == 1.0f);
	}
	skate_mesh_data_free(md);
	buf_init(&b);
	assert_int_equal(skate_export_psk(&s, &a, sc, false, &b, NULL), RC_OK);
	assert_true(b.len > 230 * 12);
	buf_free(&b);
	skate_scene_free(sc);
	arena_free(&a);
	diag_free(&d);
	free(file);
}

/* Real skater encodings: S1x4 positions are s16 / 16384 model units (they line up with the
 * inverse bind matrices), UB256 weights are byte / 255, UB256 indices raw bytes. */
static void test_skater_encoding(void **state)
{
	struct gen_skinned_opts o = {
	    .seed = 41, .n_bones = 16, .n_meshes = 3, .verts = 200, .layout = GEN_SK_SKATER};
	struct fx f;
	struct skate_scene *sc;
	struct diag d;

	(void)state;
	fx_gen(&f, &o);
	diag_init(&d);
	assert_int_equal(skate_scene_load(&f.s, &f.a, NULL, &sc, &d), RC_OK);
	assert_int_equal(d.n, 0);
	for (size_t mi = 0; mi < sc->n_meshes; mi++) {
		const struct gen_skinned_mesh_truth *tm = &f.t.mesh[mi];
		const struct skate_scene_mesh *m = &sc->meshes[mi];
		const struct skate_elem *pe = &m->desc.elem[m->pos_elem];
		struct skate_mesh_data *md;
		const struct skate_attr *pa, *wa, *ia;
		uint32_t off_scale = 0;

		assert_true(m->ok);
		assert_string_equal(m->pos_encoding, "S1x4 as s16/16384 (bone units)");
		assert_string_equal(m->pos_encoding, tm->pos_encoding);
		assert_true(pe->divisor == 16384.0f && !pe->normalized);
		assert_string_equal(pe->scale_note, "bone units");
		assert_int_equal(skate_mesh_decode(&f.s, &f.a, sc, mi, &md, &d), RC_OK);
		assert_int_equal(d.n, 0);
		pa = &md->attr[md->pos];
		wa = &md->attr[md->weights];
		ia = &md->attr[md->indices];
		assert_int_equal(pa->n, 4);
		assert_true(wa->e.divisor == 255.0f);
		assert_true(ia->e.divisor == 1.0f);
		for (uint32_t v = 0; v < md->n_verts; v++) {
			const float *p = pa->v + 4 * (size_t)v;
			const float *ibp = sc->bones[tm->main_bone[v]].ibp;
			float sk[3] = {0, 0, 0}, l2[3], mis[3];

			for (int c = 0; c < 3; c++)
				assert_true(p[c] == tm->pos[v][c]);
			assert_true(p[3] == 1.0f);
			/* the raw s16 behind it is in the vertex base resource */
			assert_int_equal((int16_t)ld_u16be(f.file +
							   arena_row(&f.a, m->vb_res)->start +
							   (size_t)v * m->stride),
					 (int16_t)lrintf(tm->pos[v][0] * 16384.0f));
			/* UB256 weights are byte / 255 before normalising */
			assert_true(wa->v[4 * (size_t)v] ==
				    (float)f.file[arena_row(&f.a, m->vb_res)->start +
						  (size_t)v * m->stride + 20] /
					255.0f);
			assert_int_equal(md->n_infl[v], tm->n_infl[v]);
			for (int j = 0; j < tm->n_infl[v]; j++) {
				assert_int_equal(md->infl[v][j].bone, tm->bone[v][j]);
				assert_true(fabsf(md->infl[v][j].weight - tm->weight[v][j]) <
					    1e-6f);
			}
			/* seen from its bone, the vertex is where the generator put it: close */
			for (int j = 0; j < 3; j++) {
				l2[j] = p[0] * ibp[j] + p[1] * ibp[4 + j] + p[2] * ibp[8 + j] +
					ibp[12 + j];
				mis[j] = (p[0] * ibp[j] + p[1] * ibp[4 + j] + p[2] * ibp[8 + j]) *
					     (16384.0f / 32767.0f) +
					 ibp[12 + j];
				assert_true(fabsf(l2[j] - tm->local[v][j]) < 1e-5f);
				/* within 0.1 of the segment to its first child (a limb is at
				 * most 0.45 long) */
				assert_true(fabsf(l2[j]) < 0.6f);
			}
			/* read as GCM's s16 / 32767 it would not line up */
			off_scale += fabsf(mis[0]) > 0.101f || fabsf(mis[1]) > 0.101f ||
				     fabsf(mis[2]) > 0.101f;
			/* skinning the bind pose reproduces the position */
			for (int j = 0; j < md->n_infl[v]; j++) {
				const struct skate_bone *b = &sc->bones[md->infl[v][j].bone];
				float w = md->infl[v][j].weight, lp[3];

				for (int c = 0; c < 3; c++)
					lp[c] = p[0] * b->ibp[c] + p[1] * b->ibp[4 + c] +
						p[2] * b->ibp[8 + c] + b->ibp[12 + c];
				for (int c = 0; c < 3; c++)
					sk[c] += w * (lp[0] * b->bind[c] + lp[1] * b->bind[4 + c] +
						      lp[2] * b->bind[8 + c] + b->bind[12 + c]);
			}
			for (int c = 0; c < 3; c++)
				assert_true(fabsf(sk[c] - p[c]) < 1e-4f);
		}
		assert_true(off_scale > md->n_verts / 2);
		skate_mesh_data_free(md);
	}
	skate_scene_free(sc);
	diag_free(&d);
	fx_free(&f);
}

/* A dictionary with base resources first (as texture arenas have) loses no mesh: the buffers'
 * m_buffer 0 names row 0, and the decoded sky equals the one in the real row order. */
static void test_sky_baseres_first(void **state)
{
	struct skate_mesh_data *md[2];
	uint8_t *file[2];
	struct arena a[2];

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct buf b;
		size_t len;
		struct src_mem m;
		struct src s;
		struct diag d;
		struct skate_scene *sc;

		buf_init(&b);
		assert_int_equal(
		    gen_psg_sky_order(k ? PSGB_ORDER_BASERES_FIRST : PSGB_ORDER_LOGICAL, 0, &b,
				      NULL),
		    RC_OK);
		file[k] = buf_steal(&b, &len);
		src_init_mem(&s, &m, file[k], len);
		diag_init(&d);
		assert_int_equal(arena_open(&s, &a[k], &d), RC_OK);
		assert_int_equal(arena_row(&a[k], 0)->type_id, k ? RW_T_PS3_GPU : RW_T_VERSION);
		assert_int_equal(skate_scene_load(&s, &a[k], NULL, &sc, &d), RC_OK);
		for (size_t i = 0; i < d.n; i++)
			print_message("sky %d: %s\n", k, d.msg[i]);
		assert_int_equal(d.n, 0);
		assert_true(sc->meshes[0].ok);
		assert_int_equal(sc->meshes[0].vb_res, k ? 0 : 3);
		assert_int_equal(skate_mesh_decode(&s, &a[k], sc, 0, &md[k], &d), RC_OK);
		skate_scene_free(sc);
		diag_free(&d);
	}
	assert_int_equal(md[0]->n_verts, md[1]->n_verts);
	assert_memory_equal(md[0]->attr[0].v, md[1]->attr[0].v, md[0]->n_verts * 3 * sizeof(float));
	assert_int_equal(md[0]->n_tri, md[1]->n_tri);
	assert_memory_equal(md[0]->tri, md[1]->tri, md[0]->n_tri * sizeof *md[0]->tri);
	for (int k = 0; k < 2; k++) {
		skate_mesh_data_free(md[k]);
		arena_free(&a[k]);
		free(file[k]);
	}
}

/* ---- the built-in skater rig ---- */

static void assert_acyclic(const struct skate_scene *sc)
{
	for (uint32_t i = 0; i < sc->n_bones; i++) {
		int32_t x = (int32_t)i;
		uint32_t steps = 0;

		while (x >= 0 && steps <= sc->n_bones) {
			assert_true(x < (int32_t)sc->n_bones);
			x = sc->bones[x].parent;
			steps++;
		}
		assert_true(x < 0);
	}
}

/* The table: 131 bones, parents before children (so it is a forest), the documented roots. */
static void test_rig_table(void **state)
{
	static const char *const roots[] = {"TRAJECTORY",
					    "HIPS",
					    "SKATEBOARD_ROOT",
					    "RIGHTTOEBASE_REPARENTED",
					    "LEFTTOEBASE_REPARENTED",
					    "RIGHTHAND_REPARENTED",
					    "LEFTHAND_REPARENTED"};
	unsigned n_roots = 0;

	(void)state;
	for (int32_t i = 0; i < SKATE_RIG_BONES; i++) {
		assert_true(skate_rig[i].parent < i);
		assert_int_equal(skate_rig_find(skate_rig[i].name), i);
		if (skate_rig[i].parent < 0)
			assert_string_equal(skate_rig[i].name, roots[n_roots++]);
	}
	assert_int_equal(n_roots, 7);
	assert_int_equal(skate_rig_find("lEfTuPlEg"), skate_rig_find("LEFTUPLEG"));
	assert_string_equal(skate_rig[skate_rig[skate_rig_find("Jaw")].parent].name, "OFFSET_JAW");
	assert_int_equal(skate_rig_find("skyboxSphere"), -1);
	assert_int_equal(skate_rig_find(""), -1);
}

/* A model with just these bone names (identity matrices, no meshes). */
static void names_arena(struct fx *f, const char *const *names, uint16_t n)
{
	struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, 9);
	struct psgo_model m = {.n_bones = n, .names = names};
	struct buf out;
	struct diag d;

	memset(f, 0, sizeof *f);
	psgo_version(b, PSGO_NEW, true);
	psgo_model(b, PSGO_NEW, &m);
	buf_init(&out);
	assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_OK);
	f->file = buf_steal(&out, &f->len);
	src_init_mem(&f->s, &f->m, f->file, f->len);
	diag_init(&d);
	assert_int_equal(arena_open(&f->s, &f->a, &d), RC_OK);
	diag_free(&d);
}

/* Generated rig-named models (random subsets of the rig: not --skater, whose skeleton is
 * the rig's body): the parents are the truth's, with no hierarchy file. */
static void test_rig_hierarchy(void **state)
{
	static const uint32_t bones[] = {3, 7, 20, 60, 131, 140};

	(void)state;
	for (size_t k = 0; k < sizeof bones / sizeof bones[0]; k++) {
		struct gen_skinned_opts o = {.seed = 50 + k,
					     .n_bones = bones[k],
					     .n_meshes = 2,
					     .rig_names = true,
					     .layout = -1};
		uint32_t extras = bones[k] > 131 ? bones[k] - 131 : bones[k] >= 8 ? 2 : 0;
		struct fx f;
		struct skate_scene *sc;
		struct diag d;
		char line[96], want[96];

		fx_gen(&f, &o);
		diag_init(&d);
		assert_int_equal(skate_scene_load(&f.s, &f.a, NULL, &sc, &d), RC_OK);
		assert_int_equal(d.n, 0);
		assert_int_equal(sc->hierarchy, SKATE_HIER_RIG);
		assert_int_equal(sc->hier_matched, bones[k] - extras);
		for (uint32_t i = 0; i < sc->n_bones; i++)
			assert_int_equal(sc->bones[i].parent, f.t.parent[i]);
		assert_acyclic(sc);
		skate_hierarchy_text(sc, line);
		snprintf(want, sizeof want, "built-in Skate skater rig: %u of %u bones matched",
			 bones[k] - extras, bones[k]);
		assert_string_equal(line, want);
		skate_scene_free(sc);
		/* a hierarchy file still wins */
		assert_int_equal(skate_scene_load(&f.s, &f.a, "x\t-\n", &sc, NULL), RC_OK);
		assert_int_equal(sc->hierarchy, SKATE_HIER_TSV);
		for (uint32_t i = 1; i < sc->n_bones; i++)
			assert_int_equal(sc->bones[i].parent, 0);
		skate_scene_free(sc);
		diag_free(&d);
		fx_free(&f);
	}
}

/* Children before parents, gaps in the rig, a bone that is no rig bone, a duplicate name:
 * nearest present ancestor, the others under the first root, never a cycle. */
static void test_rig_nearest_ancestor(void **state)
{
	static const char *const names[] = {"Jaw",	"head",	  "Hips",  "FACE",
					    "lefthand", "Spine3", "Extra", "HIPS"};
	static const int32_t want[] = {3, 5, -1, 1, 5, 2, 2, -1};
	struct fx f;
	struct skate_scene *sc;
	char line[96];

	(void)state;
	names_arena(&f, names, 8);
	assert_int_equal(skate_scene_load(&f.s, &f.a, NULL, &sc, NULL), RC_OK);
	assert_int_equal(sc->hierarchy, SKATE_HIER_RIG);
	assert_int_equal(sc->hier_matched, 7);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(sc->bones[i].parent, want[i]);
	assert_acyclic(sc);
	skate_hierarchy_text(sc, line);
	assert_string_equal(line, "built-in Skate skater rig: 7 of 8 bones matched");
	skate_scene_free(sc);
	arena_free(&f.a);
	free(f.file);
}

/* Too few rig names: the default hierarchy, and info says so. */
static void test_rig_threshold(void **state)
{
	static const char *const few[] = {"root", "Hips", "Spine", "a", "b", "c", "d", "e"};
	static const char *const two[] = {"Hips", "Spine"};
	struct fx f;
	struct skate_scene *sc;
	char line[96];

	(void)state;
	names_arena(&f, few, 8); /* 2 of 8 */
	assert_int_equal(skate_scene_load(&f.s, &f.a, NULL, &sc, NULL), RC_OK);
	assert_int_equal(sc->hierarchy, SKATE_HIER_DEFAULT);
	assert_int_equal(sc->bones[2].parent, 0);
	skate_hierarchy_text(sc, line);
	assert_string_equal(line, "not in the PSG: every bone but 0 hangs from bone 0");
	skate_scene_free(sc);
	arena_free(&f.a);
	free(f.file);
	names_arena(&f, two, 2); /* all match, but fewer than SKATE_RIG_MIN_MATCH */
	assert_int_equal(skate_scene_load(&f.s, &f.a, NULL, &sc, NULL), RC_OK);
	assert_int_equal(sc->hierarchy, SKATE_HIER_DEFAULT);
	skate_scene_free(sc);
	arena_free(&f.a);
	free(f.file);
}

/* ---- text renderers ---- */

static size_t count_lines(const struct buf *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->len; i++)
		n += b->data[i] == '\n';
	return n;
}

static bool starts(const struct buf *b, const char *s)
{
	return b->len >= strlen(s) && !memcmp(b->data, s, strlen(s));
}

static void test_text(void **state)
{
	struct gen_skinned_opts o = {.seed = 21,
				     .n_bones = 6,
				     .n_meshes = 4,
				     .verts = 10,
				     .islands = 2,
				     .tris = 4,
				     .layout = -1};
	struct fx f;
	struct skate_scene *sc;
	struct skate_mesh_data *md;
	struct buf b;
	char name[80];
	int seen_types = 0;

	(void)state;
	fx_gen(&f, &o);
	assert_int_equal(skate_scene_load(&f.s, &f.a, f.t.hierarchy_tsv, &sc, NULL), RC_OK);

	buf_init(&b);
	assert_int_equal(view_bones_text(sc, &b), RC_OK);
	assert_true(starts(&b, "index\tname\tparent\ttx\tty\ttz\tqx\tqy\tqz\tqw\n"));
	assert_int_equal(count_lines(&b), 7);
	buf_free(&b);
	buf_init(&b);
	assert_int_equal(view_bone_names_text(sc, &b), RC_OK);
	assert_true(starts(&b, "ROOT\nBone_001\n"));
	buf_free(&b);
	buf_init(&b);
	assert_int_equal(view_inverse_bind_text(sc, &b), RC_OK);
	assert_true(starts(&b, "index\tname\tm00\tm01"));
	assert_int_equal(count_lines(&b), 7);
	buf_free(&b);
	buf_init(&b);
	assert_int_equal(view_bone_text(sc, 2, &b), RC_OK);
	buf_putc(&b, 0);
	assert_non_null(strstr((char *)b.data, "name: Bone_002"));
	assert_non_null(strstr((char *)b.data, "rigid: yes"));
	buf_free(&b);
	assert_int_equal(view_bone_text(sc, 99, &b), RC_NOENT);
	view_bone_file_name(sc, 2, name);
	assert_string_equal(name, "002.Bone_002.txt");

	buf_init(&b);
	assert_int_equal(view_descriptor_text(sc, 0, &b), RC_OK);
	buf_putc(&b, 0);
	assert_non_null(strstr((char *)b.data, "stride: 32"));
	assert_non_null(strstr((char *)b.data, "INDICES\tUB256\t4\t24"));
	assert_non_null(strstr((char *)b.data, "NORMAL\tCMP\t1\t12"));
	buf_free(&b);
	buf_init(&b);
	assert_int_equal(view_palette_text(sc, 1, &b), RC_OK);
	assert_true(starts(&b, "slot\tbone\tname\n"));
	assert_int_equal(count_lines(&b), 1 + sc->meshes[1].n_palette);
	buf_free(&b);
	buf_init(&b);
	assert_int_equal(view_islands_text(sc, 1, &b), RC_OK);
	assert_true(starts(&b, "island\tstart\tcount\tprimitive\n0\t0\t12\t5\n1\t12\t12\t5\n"));
	buf_free(&b);

	assert_int_equal(skate_mesh_decode(&f.s, &f.a, sc, 0, &md, NULL), RC_OK);
	{
		struct skate_mesh_stats *st;
		struct view_mesh vm = {&f.s, &f.a, sc, 0, NULL};

		assert_int_equal(skate_mesh_stats_build(&f.s, &f.a, sc, 0, &st, NULL), RC_OK);
		vm.st = st;
		render_view(view_vertices, &vm, &b);
		assert_true(starts(
		    &b, "vertex\tpx\tpy\tpz\tnx\tny\tnz\tu0\tv0\tr\tg\tb\ta\ti0\ti1\ti2\ti3\tw0"));
		assert_int_equal(count_lines(&b), 11);
		buf_free(&b);
		render_view(view_triangles, &vm, &b);
		assert_true(starts(&b, "triangle\ta\tb\tc\tisland\n"));
		assert_int_equal(count_lines(&b), 9);
		buf_free(&b);
		render_view(view_skin, &vm, &b);
		assert_true(starts(&b, "vertex\tbone\tname\tweight\n"));
		buf_free(&b);
		skate_mesh_stats_free(st);
	}
	skate_mesh_data_free(md);

	buf_init(&b);
	view_scene_summary(sc, &b);
	buf_putc(&b, 0);
	assert_non_null(strstr((char *)b.data, "skeleton: 6 bones"));
	assert_non_null(strstr((char *)b.data, "hierarchy: from the hierarchy file"));
	assert_non_null(strstr((char *)b.data, "vertices: 40"));
	assert_non_null(strstr((char *)b.data, "triangles: 32"));
	buf_free(&b);

	for (uint32_t i = 0; i < f.a.n_dict; i++) {
		uint32_t t = arena_row(&f.a, i)->type_id;
		enum rc r;

		buf_init(&b);
		r = view_object_text(&f.s, &f.a, i, &b, NULL);
		if (!view_object_has_text(t)) {
			assert_int_equal(r, RC_UNSUPPORTED);
		} else if (t == RW_T_RENDERMODEL || t == RW_T_OPTIMESH || t == RW_T_VDES ||
			   t == RW_T_VB || t == RW_T_IB || t == RW_T_MESHHELPER) {
			assert_int_equal(r, RC_OK);
			buf_putc(&b, 0);
			seen_types |= 1 << (t == RW_T_RENDERMODEL ? 0
					    : t == RW_T_OPTIMESH  ? 1
					    : t == RW_T_VDES	  ? 2
					    : t == RW_T_VB	  ? 3
					    : t == RW_T_IB	  ? 4
								  : 5);
			if (t == RW_T_OPTIMESH) {
				assert_non_null(strstr((char *)b.data, ".VertexDescriptor\n"));
				assert_non_null(strstr((char *)b.data, ".RenderModelData+0x"));
				assert_non_null(strstr((char *)b.data, "remap table"));
			}
			if (t == RW_T_RENDERMODEL)
				assert_non_null(strstr((char *)b.data, "bone 5: Bone_005"));
			assert_null(strstr((char *)b.data, "problems"));
		}
		buf_free(&b);
	}
	assert_int_equal(seen_types, 0x3F);
	assert_int_equal(view_object_text(&f.s, &f.a, f.a.n_dict, &b, NULL), RC_BOUNDS);
	skate_scene_free(sc);
	fx_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_half),
	    cmocka_unit_test(test_cmp),
	    cmocka_unit_test(test_formats),
	    cmocka_unit_test(test_vdes),
	    cmocka_unit_test(test_vb_ib_mh),
	    cmocka_unit_test(test_optimesh),
	    cmocka_unit_test(test_platform_table),
	    cmocka_unit_test(test_neutral_elements),
	    cmocka_unit_test(test_platform_islands),
	    cmocka_unit_test(test_model),
	    cmocka_unit_test(test_byte_order),
	    cmocka_unit_test(test_model_tables_independent),
	    cmocka_unit_test(test_skeleton_math),
	    cmocka_unit_test(test_scene_truth),
	    cmocka_unit_test(test_formats_covered),
	    cmocka_unit_test(test_hierarchy_cycles),
	    cmocka_unit_test(test_hierarchy_case),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_mutations),
	    cmocka_unit_test(test_text),
	    cmocka_unit_test(test_sky),
	    cmocka_unit_test(test_sky_baseres_first),
	    cmocka_unit_test(test_skater_encoding),
	    cmocka_unit_test(test_rig_table),
	    cmocka_unit_test(test_rig_hierarchy),
	    cmocka_unit_test(test_rig_nearest_ancestor),
	    cmocka_unit_test(test_rig_threshold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
