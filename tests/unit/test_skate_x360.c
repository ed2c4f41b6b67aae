/* Xbox 360 models (docs/xbox360.md, "Models"): the format codes and element types, the
 * object decoders on hand-built bytes, the streaming decode of the Xbox 360 component types,
 * base vertices and the row-before rule, and generated Xbox 360 arenas against their PS3
 * twins of the same seed and against the generator's truth (sane, re-quantised, hostile,
 * mutated). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/prng.h"
#include "psgfs/formats/skate_export.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_platform.h"
#include "psgfs/formats/skate_x360.h"
#include "psgfs/base/source.h"
#include "psgfs/tree/tree.h"
#include "tree/psg/view_psg.h"

#include "arena_fixture.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static bool diag_has(const struct diag *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msg[i], needle))
			return true;
	return false;
}

static void print_diag(const char *what, const struct diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		print_message("%s: %s\n", what, d->msg[i]);
}

/* ---- the format codes ---- */

static const uint32_t decoded[] = {SX360_FMT_FLOAT1,  SX360_FMT_FLOAT2,	   SX360_FMT_FLOAT3,
				   SX360_FMT_FLOAT4,  SX360_FMT_FLOAT16_2, SX360_FMT_FLOAT16_4,
				   SX360_FMT_SHORT2,  SX360_FMT_SHORT4,	   SX360_FMT_SHORT2N,
				   SX360_FMT_SHORT4N, SX360_FMT_USHORT2N,  SX360_FMT_USHORT4N,
				   SX360_FMT_UBYTE4,  SX360_FMT_UBYTE4N,   SX360_FMT_DEC3N,
				   SX360_FMT_HEND3N,  SX360_FMT_DHEN3N};
static const unsigned decoded_size[] = {4, 8, 12, 16, 4, 8, 4, 8, 4, 8, 4, 8, 4, 4, 4, 4, 4};

static void test_format_table(void **state)
{
	char b[16];

	(void)state;
	for (size_t i = 0; i < sizeof decoded / sizeof decoded[0]; i++) {
		assert_non_null(skate_x360_format_name(decoded[i]));
		assert_true(skate_x360_format_decoded(decoded[i]));
		assert_int_equal(skate_x360_format_size(decoded[i]), decoded_size[i]);
	}
	assert_string_equal(skate_x360_format_name(0x002A23B9), "FLOAT3");
	assert_string_equal(skate_x360_format_name(0x001A2286), "UBYTE4");
	assert_string_equal(skate_x360_format_name(0x001A215A), "SHORT4N");
	assert_string_equal(skate_x360_format_name(0x00182886), "D3DCOLOR");
	assert_false(skate_x360_format_decoded(0x00182886));
	assert_int_equal(skate_x360_format_size(0x00182886), 4);
	assert_false(skate_x360_format_decoded(0x001A2186)); /* BYTE4N: named, not decoded */
	assert_null(skate_x360_format_name(0x12345678));
	assert_int_equal(skate_x360_format_size(0x0000003F), 0);
	/* The Xenon element numbering, not PS3's. */
	assert_string_equal(skate_x360_etype_name(SX360_ET_XYZ, b), "XYZ");
	assert_int_equal(SX360_ET_XYZ, 1);
	assert_string_equal(skate_x360_etype_name(3, b), "NORMAL");
	assert_string_equal(skate_x360_etype_name(6, b), "TEX0");
	assert_string_equal(skate_x360_etype_name(0x0E, b), "INDICES");
	assert_string_equal(skate_x360_etype_name(0x0F, b), "WEIGHTS");
	assert_string_equal(skate_x360_etype_name(0x15, b), "TANGENT");
	assert_string_equal(skate_x360_etype_name(0x40, b), "TYPE_0x40");
	assert_string_equal(skate_x360_usage_name(SX360_USAGE_BLENDINDICES, b), "BLENDINDICES");
	assert_string_equal(skate_x360_usage_name(99, b), "USAGE_99");
}

/* ---- one element as the platform describes and decodes it ---- */

static void describe(uint32_t fmt, uint8_t type, uint16_t offset, struct skate_elem *e)
{
	struct skate_velem el = {.format = fmt, .type = type, .offset = offset, .usable = true};

	skate_platform_x360.elem_describe(&el, e);
}

static void decode_one(uint32_t fmt, uint8_t type, const uint8_t *p, float out[4],
		       struct skate_elem *e)
{
	memset(out, 0, 4 * sizeof *out);
	describe(fmt, type, 0, e);
	assert_true(e->usable);
	skate_elem_decode(e, p, true, out);
}

static void test_elem_decode(void **state)
{
	uint8_t p[16] = {0};
	struct skate_elem e;
	float v[4];
	char txt[64];

	(void)state;
	put32(p, f32_bits(1.5f));
	put32(p + 4, f32_bits(-2.0f));
	put32(p + 8, f32_bits(3.25f));
	put32(p + 12, f32_bits(8.0f));
	decode_one(SX360_FMT_FLOAT1, SX360_ET_TEX0, p, v, &e);
	assert_true(e.n_out == 1 && v[0] == 1.5f);
	decode_one(SX360_FMT_FLOAT4, SX360_ET_TEX0, p, v, &e);
	assert_true(e.n_out == 4 && v[1] == -2.0f && v[3] == 8.0f && e.size == 16);
	decode_one(SX360_FMT_FLOAT3, SX360_ET_XYZ, p, v, &e);
	assert_int_equal(e.usage, SKATE_USAGE_POSITION);
	skate_elem_encoding(&e, txt);
	assert_string_equal(txt, "FLOAT3 as f32");
	/* halves and shorts are big-endian in memory order */
	put16(p, 0x3C00);
	put16(p + 2, 0xC000);
	put16(p + 4, 0x3800);
	put16(p + 6, 0x0001);
	decode_one(SX360_FMT_FLOAT16_4, SX360_ET_TEX0, p, v, &e);
	assert_true(v[0] == 1.0f && v[1] == -2.0f && v[2] == 0.5f && v[3] == 0x1p-24f);
	put16(p, (uint16_t)-5);
	put16(p + 2, 7);
	decode_one(SX360_FMT_SHORT2, SX360_ET_TEX0 + 1, p, v, &e);
	assert_true(v[0] == -5.0f && v[1] == 7.0f && e.set == 1);
	put16(p, 32767);
	put16(p + 2, (uint16_t)-32767);
	put16(p + 4, 0);
	put16(p + 6, 16384);
	decode_one(SX360_FMT_SHORT4N, SX360_ET_NORMAL, p, v, &e);
	assert_true(v[0] == 1.0f && v[1] == -1.0f && v[3] == 16384.0f / 32767.0f);
	/* skater positions: four s16 in bone units, as on PS3 */
	decode_one(SX360_FMT_SHORT4N, SX360_ET_XYZ, p, v, &e);
	assert_true(v[3] == 1.0f && e.divisor == 16384.0f);
	skate_elem_encoding(&e, txt);
	assert_string_equal(txt, "SHORT4N as s16/16384 (bone units)");
	put16(p, 65535);
	put16(p + 2, 0);
	decode_one(SX360_FMT_USHORT2N, SX360_ET_TEX0, p, v, &e);
	assert_true(v[0] == 1.0f && v[1] == 0.0f && e.ctype == SKATE_CT_U16);
	/* four u8: one big-endian word whose low byte (the last in memory) is x */
	p[0] = 1, p[1] = 2, p[2] = 3, p[3] = 255;
	decode_one(SX360_FMT_UBYTE4, SX360_ET_INDICES, p, v, &e);
	assert_true(v[0] == 255 && v[1] == 3 && v[2] == 2 && v[3] == 1);
	assert_int_equal(e.usage, SKATE_USAGE_BLEND_INDICES);
	decode_one(SX360_FMT_UBYTE4, SX360_ET_WEIGHTS, p, v, &e);
	assert_true(v[0] == 1.0f && v[3] == 1.0f / 255.0f); /* Skate: weights byte / 255 */
	decode_one(SX360_FMT_UBYTE4N, SX360_ET_VERTEXCOLOR, p, v, &e);
	assert_true(v[0] == 1.0f && v[1] == 3.0f / 255.0f && e.usage == SKATE_USAGE_COLOR);
	skate_elem_encoding(&e, txt);
	assert_string_equal(txt, "UBYTE4N as u8 word/255 (normalised)");
	/* packed words, x from bit 0 up */
	put32(p, 511u | (uint32_t)(-511 & 0x3FF) << 10);
	decode_one(SX360_FMT_DEC3N, SX360_ET_NORMAL, p, v, &e);
	assert_true(v[0] == 1.0f && v[1] == -1.0f && v[2] == 0.0f && e.n_out == 3);
	put32(p, (uint32_t)(-511 & 0x3FF) | 1023u << 10 | (uint32_t)(-1023 & 0x7FF) << 21);
	decode_one(SX360_FMT_DHEN3N, SX360_ET_NORMAL, p, v, &e);
	assert_true(v[0] == -1.0f && v[1] == 1.0f && v[2] == -1.0f);
	put32(p, 0x5A5A1234u);
	decode_one(SX360_FMT_HEND3N, SX360_ET_TANGENT, p, v, &e);
	{
		float c[3];

		skate_cmp_decode(0x5A5A1234u, c);
		assert_memory_equal(v, c, sizeof c); /* HEND3N is the PS3 CMP layout */
	}
	/* the Direct3D usage names the element when its type is NA */
	{
		struct skate_velem el = {.format = SX360_FMT_FLOAT2,
					 .usage = SX360_USAGE_TEXCOORD,
					 .usage_index = 2,
					 .usable = true};

		skate_platform_x360.elem_describe(&el, &e);
		assert_true(e.usage == SKATE_USAGE_TEXCOORD && e.set == 2);
	}
	/* not decoded: unusable, named */
	describe(0x00182886, SX360_ET_VERTEXCOLOR, 0, &e);
	assert_false(e.usable);
	assert_string_equal(e.format_name, "D3DCOLOR");
}

/* ---- the streaming decode of every Xbox 360 component type ---- */

/* Every decoded format in one vertex (as texture coordinates, so no skin rule applies), read
 * through skate_mesh_read_vertices and skate_elem_decode: the same bits. */
static void test_stream_matches_elem(void **state)
{
	const uint32_t nv = 300;
	struct skate_scene_mesh m;
	struct skate_scene sc;
	struct skate_vbatch b;
	struct arena a;
	struct src_mem sm;
	struct src s;
	struct prng r;
	uint16_t off = 0;
	uint8_t *vb;

	(void)state;
	memset(&m, 0, sizeof m);
	for (unsigned k = 0; k < 16; k++) {
		struct skate_velem *el = &m.desc.el[k];

		el->format = decoded[k + 1]; /* all but FLOAT1: 16 elements at most */
		el->type = (uint8_t)(k < 8 ? SX360_ET_TEX0 + k : SX360_ET_XZ);
		el->offset = off;
		el->usable = true;
		off += (uint16_t)skate_x360_format_size(el->format);
	}
	m.desc.n_el = 16;
	m.stride = off;
	for (unsigned k = 0; k < 16; k++) {
		m.desc.el[k].stride = off;
		skate_platform_x360.elem_describe(&m.desc.el[k], &m.desc.elem[k]);
		assert_true(m.desc.elem[k].usable);
	}
	vb = malloc((size_t)nv * off);
	prng_seed(&r, 77);
	for (size_t i = 0; i < (size_t)nv * off; i++)
		vb[i] = (uint8_t)prng_below(&r, 256);
	src_init_mem(&s, &sm, vb, (size_t)nv * off);
	memset(&a, 0, sizeof a);
	a.big_endian = true;
	memset(&sc, 0, sizeof sc);
	sc.meshes = &m;
	sc.n_meshes = 1;
	m.ok = true;
	m.vertex_count = nv;
	skate_vbatch_init(&b);
	assert_int_equal(skate_mesh_read_vertices(&s, &a, &sc, 0, 0, nv, &b), RC_OK);
	assert_int_equal(b.count, nv);
	assert_int_equal(b.n_elem, 16);
	for (uint32_t v = 0; v < nv; v++)
		for (unsigned k = 0; k < 16; k++) {
			float want[4] = {0};
			const struct skate_elem *e = &b.elem[k];

			skate_elem_decode(e, vb + (size_t)v * off + e->offset, true, want);
			for (unsigned c = 0; c < e->n_out; c++)
				assert_int_equal(f32_bits(b.v[k][(size_t)v * e->n_out + c]),
						 f32_bits(want[c]));
		}
	skate_vbatch_free(&b);
	free(vb);
}

/* ---- object decoders on hand-built bytes ---- */

/* A descriptor: FLOAT3 XYZ @0, SHORT2N TEX0 @12, UBYTE4 INDICES @16; then `tail` bytes after
 * the elements (the first the stride 20). Returns its size. */
static size_t build_vdes(uint8_t *b, uint16_t n_elem, size_t tail)
{
	static const struct {
		uint32_t fmt;
		uint16_t off;
		uint8_t usage, type;
	} el[3] = {{SX360_FMT_FLOAT3, 0, SX360_USAGE_POSITION, SX360_ET_XYZ},
		   {SX360_FMT_SHORT2N, 12, SX360_USAGE_TEXCOORD, SX360_ET_TEX0},
		   {SX360_FMT_UBYTE4, 16, SX360_USAGE_BLENDINDICES, SX360_ET_INDICES}};
	uint8_t *e = b + 16;

	memset(b, 0, 16 + 48 + 8);
	put32(b, 0x12345678);
	put32(b + 4, 0x4042);
	put16(b + 8, n_elem);
	put16(b + 10, 2);
	for (int i = 0; i < 3; i++, e += 16) {
		put16(e + 2, el[i].off);
		put32(e + 4, el[i].fmt);
		e[9] = el[i].usage;
		e[11] = el[i].type;
		put32(e + 12, 1);
	}
	if (tail)
		b[16 + 48] = 20;
	return 16 + 48 + tail;
}

static void parse_vdes(const uint8_t *b, size_t n, struct skate_vdes *v, struct diag *d)
{
	diag_init(d);
	assert_int_equal(skate_platform_x360.vdes_parse(b, n, true, 9, v, d), RC_OK);
}

static void test_vdes(void **state)
{
	uint8_t b[128];
	struct skate_vdes v;
	struct diag d;
	size_t n = build_vdes(b, 3, 8);

	(void)state;
	parse_vdes(b, n, &v, &d);
	print_diag("vdes", &d);
	assert_int_equal(d.n, 0);
	assert_int_equal(v.decl, 0x12345678);
	assert_int_equal(v.types_flags, 0x4042);
	assert_int_equal(v.ref_count, 2);
	assert_int_equal(v.n_el, 3);
	assert_int_equal(v.stride, 20);
	assert_int_equal(v.trailer_len, 8);
	assert_int_equal(v.el[1].format, SX360_FMT_SHORT2N);
	assert_int_equal(v.el[1].usage, SX360_USAGE_TEXCOORD);
	assert_int_equal(v.el[2].type, SX360_ET_INDICES);
	assert_int_equal(v.el[2].elem_class, 1);
	assert_true(v.elem[0].usable && v.elem[1].usable && v.elem[2].usable);
	assert_int_equal(v.elem[0].usage, SKATE_USAGE_POSITION);
	assert_int_equal(v.elem[2].usage, SKATE_USAGE_BLEND_INDICES);
	assert_true(v.elem[2].divisor == 1.0f);
	diag_free(&d);
	/* a zero stride byte, or none: the elements' extent */
	b[16 + 48] = 0;
	parse_vdes(b, n, &v, &d);
	assert_true(diag_has(&d, "zero stride byte; the elements' extent 20 used"));
	assert_int_equal(v.stride, 20);
	diag_free(&d);
	parse_vdes(b, 16 + 48, &v, &d);
	assert_true(diag_has(&d, "no stride byte"));
	assert_true(v.stride == 20 && v.trailer_len == 0);
	diag_free(&d);
	/* stride too small for element 2; element 1 in stream 1; element 0 unknown */
	n = build_vdes(b, 3, 8);
	b[16 + 48] = 18;
	put16(b + 16 + 16, 1);
	put32(b + 16 + 4, 0x00000099);
	parse_vdes(b, n, &v, &d);
	assert_true(diag_has(&d, "element 2 (INDICES) UBYTE4 at offset 16 does not fit stride 18"));
	assert_true(diag_has(&d, "element 1 (TEX0) in stream 1"));
	assert_true(diag_has(&d, "element 0 (XYZ) format 0x00000099 unknown"));
	assert_false(v.elem[0].usable || v.elem[1].usable || v.elem[2].usable);
	diag_free(&d);
	/* a known, undecoded format; a type the usage contradicts */
	n = build_vdes(b, 3, 8);
	put32(b + 16 + 4, 0x00182886);
	b[16 + 16 + 9] = SX360_USAGE_NORMAL;
	parse_vdes(b, n, &v, &d);
	assert_true(diag_has(&d, "D3DCOLOR") || diag_has(&d, "0x00182886 is not decoded"));
	assert_true(diag_has(&d, "element 1 type TEX0 but Direct3D usage NORMAL 0; the type used"));
	assert_int_equal(v.elem[1].usage, SKATE_USAGE_TEXCOORD);
	diag_free(&d);
	/* an end marker ends the elements */
	n = build_vdes(b, 3, 8);
	put16(b + 16 + 16, 0xFF);
	parse_vdes(b, n, &v, &d);
	assert_int_equal(v.n_el, 1);
	diag_free(&d);
	/* counts the object cannot hold */
	n = build_vdes(b, 40, 8);
	parse_vdes(b, n, &v, &d);
	assert_true(diag_has(&d, "40 elements, only 16 read"));
	assert_true(diag_has(&d, "room for 3"));
	diag_free(&d);
	diag_init(&d);
	assert_int_equal(skate_platform_x360.vdes_parse(b, 15, true, 9, &v, &d), RC_CORRUPT);
	assert_true(diag_has(&d, "header needs 16"));
	diag_free(&d);
}

static void test_vb_ib(void **state)
{
	uint8_t b[64] = {0};
	struct skate_vb vb;
	struct skate_ib ib;
	struct diag d;

	(void)state;
	put32(b, 1);
	put32(b + 4, 1);
	put32(b + 0x14, 0xFFFF0000);
	put32(b + 0x18, 3);
	put32(b + 0x1C, 3680 | 2);
	put32(b + 0x20, 3680);
	put32(b + 0x24, 7);
	diag_init(&d);
	assert_int_equal(skate_platform_x360.vb_parse(b, 0x28, true, 4, &vb, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(vb.buffer_size, 3680);
	assert_int_equal(vb.offset, 0);
	assert_int_equal(vb.d3d[0], 1);
	assert_int_equal(vb.d3d[5], 0xFFFF0000);
	assert_int_equal(vb.fetch[1], 3680 | 2);
	assert_int_equal(vb.vb_type, 7);
	assert_int_equal(skate_platform_x360.vb_parse(b, 0x24, true, 4, &vb, &d), RC_OK);
	assert_int_equal(vb.vb_type, 0);
	put32(b + 0x18, 2);
	assert_int_equal(skate_platform_x360.vb_parse(b, 0x28, true, 4, &vb, &d), RC_OK);
	assert_true(diag_has(&d, "fetch constant type 2"));
	assert_int_equal(skate_platform_x360.vb_parse(b, 0x23, true, 4, &vb, &d), RC_CORRUPT);
	diag_free(&d);

	memset(b, 0, sizeof b);
	put32(b, 0x20000002); /* u16, swap 8in16 */
	put32(b + 0x1C, 2280);
	put32(b + 0x20, 1140);
	diag_init(&d);
	assert_int_equal(skate_platform_x360.ib_parse(b, 0x24, true, 6, &ib, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_true(ib.width == 2 && ib.num_indices == 1140 && ib.size == 2280);
	put32(b, 0xC0000002); /* u32, swap 8in32 */
	assert_int_equal(skate_platform_x360.ib_parse(b, 0x24, true, 6, &ib, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(ib.width, 4);
	put32(b, 0x00000002);
	assert_int_equal(skate_platform_x360.ib_parse(b, 0x24, true, 6, &ib, &d), RC_OK);
	assert_true(diag_has(&d, "byte swap 0 with 2-byte indices; read big-endian"));
	assert_int_equal(skate_platform_x360.ib_parse(b, 0x23, true, 6, &ib, &d), RC_CORRUPT);
	diag_free(&d);
}

/* Xbox 360 draw parameters: 16 bytes {prim, base vertex, start, count}, remap table after. */
static void test_optimesh(void **state)
{
	uint8_t b[0x60 + 32 + 4] = {0};
	struct skate_optimesh m;

	(void)state;
	put32(b + 0x38, 2);
	put32(b + 0x44, 0x60);
	put32(b + 0x48, 2);
	put32(b + 0x4C, 0x80);
	put32(b + 0x60, 4);
	put32(b + 0x68, 0);
	put32(b + 0x6C, 30);
	put32(b + 0x70, 5);
	put32(b + 0x74, (uint32_t)-5);
	put32(b + 0x78, 30);
	put32(b + 0x7C, 30);
	put16(b + 0x80, 3);
	put16(b + 0x82, 9);
	assert_int_equal(
	    skate_optimesh_decode(&skate_platform_x360, b, sizeof b, true, 7, &m, NULL), RC_OK);
	assert_int_equal(m.n_islands, 2);
	assert_true(m.islands[0].triangles && m.islands[0].prim == 4);
	assert_true(m.islands[0].count == 30 && m.islands[0].base_vertex == 0);
	assert_false(m.islands[1].triangles);
	assert_int_equal(m.islands[1].base_vertex, -5);
	assert_int_equal(m.islands[1].start, 30);
	assert_true(m.n_remap == 2 && m.remap[1] == 9);
	skate_optimesh_free(&m);
}

/* ---- generated arenas ---- */

static void fx_sky(struct fx *f, enum psgb_platform plat)
{
	struct buf b;

	buf_init(&b);
	assert_int_equal(gen_psg_sky_platform(plat, PSGB_ORDER_LOGICAL, 0, &b, NULL), RC_OK);
	fx_open(f, &b);
}

/* The same bones, palettes, islands (but their primitive code) and mesh sizes. */
static void same_scene(const struct skate_scene *p, const struct skate_scene *x)
{
	assert_ptr_equal(p->platform, &skate_platform_ps3);
	assert_ptr_equal(x->platform, &skate_platform_x360);
	assert_int_equal(p->n_bones, x->n_bones);
	assert_int_equal(p->hierarchy, x->hierarchy);
	for (uint32_t i = 0; i < p->n_bones; i++) {
		assert_string_equal(p->bones[i].name, x->bones[i].name);
		assert_memory_equal(p->bones[i].ibp, x->bones[i].ibp, sizeof p->bones[i].ibp);
		assert_memory_equal(p->bones[i].t, x->bones[i].t, sizeof p->bones[i].t);
		assert_memory_equal(p->bones[i].q, x->bones[i].q, sizeof p->bones[i].q);
		assert_int_equal(p->bones[i].parent, x->bones[i].parent);
	}
	assert_int_equal(p->n_meshes, x->n_meshes);
	assert_int_equal(p->total_vertices, x->total_vertices);
	assert_int_equal(p->total_triangles, x->total_triangles);
	for (size_t mi = 0; mi < p->n_meshes; mi++) {
		const struct skate_scene_mesh *a = &p->meshes[mi], *b = &x->meshes[mi];

		assert_int_equal(a->ok, b->ok);
		assert_string_equal(a->material, b->material);
		assert_int_equal(a->vertex_count, b->vertex_count);
		assert_int_equal(a->index_count, b->index_count);
		assert_int_equal(a->index_width, b->index_width);
		assert_int_equal(a->skinned, b->skinned);
		assert_int_equal(a->n_palette, b->n_palette);
		assert_memory_equal(a->palette, b->palette, a->n_palette * sizeof *a->palette);
		assert_int_equal(a->n_islands, b->n_islands);
		for (uint32_t k = 0; k < a->n_islands; k++) {
			assert_int_equal(a->islands[k].start, b->islands[k].start);
			assert_int_equal(a->islands[k].count, b->islands[k].count);
			assert_int_equal(a->islands[k].prim, 5);
			assert_int_equal(b->islands[k].prim, 4);
			assert_true(b->islands[k].triangles);
		}
		assert_int_equal(a->tri_estimate, b->tri_estimate);
	}
}

static bool near(float a, float b, float tol)
{
	return tol == 0 ? f32_bits(a) == f32_bits(b) : fabsf(a - b) <= tol;
}

/* attr k's first n values of vertex v in both decodes, within tol (0: the same bits). */
static void same_attr(const struct skate_attr *a, const struct skate_attr *b, uint32_t nv,
		      unsigned n, float tol)
{
	assert_true(a->n >= n && b->n >= n);
	for (uint32_t v = 0; v < nv; v++)
		for (unsigned c = 0; c < n; c++)
			if (!near(a->v[(size_t)a->n * v + c], b->v[(size_t)b->n * v + c], tol)) {
				print_message("vertex %u component %u: %.9g vs %.9g\n", v, c,
					      (double)a->v[(size_t)a->n * v + c],
					      (double)b->v[(size_t)b->n * v + c]);
				fail();
			}
}

/* One mesh decoded on both platforms: every attribute by usage (xyz of positions, normals,
 * tangents and binormals, uv, colour), the skin and the triangles. tol 0: bit for bit. */
static void same_mesh(struct fx *p, struct fx *x, size_t mi, float tol)
{
	struct skate_mesh_data *a, *b;
	struct diag d;

	diag_init(&d);
	assert_int_equal(skate_mesh_decode(&p->s, &p->a, p->sc, mi, &a, &d), RC_OK);
	assert_int_equal(skate_mesh_decode(&x->s, &x->a, x->sc, mi, &b, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(a->n_verts, b->n_verts);
	same_attr(&a->attr[a->pos], &b->attr[b->pos], a->n_verts, 3, 0);
	if (a->normal >= 0)
		same_attr(&a->attr[a->normal], &b->attr[b->normal], a->n_verts, 3, tol);
	if (a->tangent >= 0)
		same_attr(&a->attr[a->tangent], &b->attr[b->tangent], a->n_verts, 3, tol);
	if (a->binormal >= 0)
		same_attr(&a->attr[a->binormal], &b->attr[b->binormal], a->n_verts, 3, tol);
	if (a->tex[0] >= 0)
		same_attr(&a->attr[a->tex[0]], &b->attr[b->tex[0]], a->n_verts, 2, tol);
	assert_int_equal(a->color < 0, b->color < 0);
	if (a->color >= 0)
		same_attr(&a->attr[a->color], &b->attr[b->color], a->n_verts, 4, 0);
	for (uint32_t v = 0; v < a->n_verts; v++) {
		assert_int_equal(a->n_infl[v], b->n_infl[v]);
		for (unsigned j = 0; j < a->n_infl[v]; j++) {
			assert_int_equal(a->infl[v][j].bone, b->infl[v][j].bone);
			assert_true(near(a->infl[v][j].weight, b->infl[v][j].weight, tol));
		}
	}
	assert_int_equal(a->n_tri, b->n_tri);
	assert_memory_equal(a->tri, b->tri, a->n_tri * sizeof *a->tri);
	assert_memory_equal(a->tri_island, b->tri_island, a->n_tri * sizeof *a->tri_island);
	skate_mesh_data_free(a);
	skate_mesh_data_free(b);
	diag_free(&d);
}

/* An Xbox 360 mesh against the generator's truth (values as the generator stored them). */
static void truth_mesh(struct fx *f, size_t mi)
{
	const struct gen_skinned_mesh_truth *tm = &f->t.mesh[mi];
	struct skate_mesh_data *md;
	const struct skate_attr *pa, *na, *ua;

	assert_int_equal(skate_mesh_decode(&f->s, &f->a, f->sc, mi, &md, NULL), RC_OK);
	assert_int_equal(md->n_verts, tm->n_verts);
	pa = &md->attr[md->pos];
	na = &md->attr[md->normal];
	ua = &md->attr[md->tex[0]];
	for (uint32_t v = 0; v < md->n_verts; v++) {
		for (int c = 0; c < 3; c++) {
			assert_true(pa->v[(size_t)pa->n * v + c] == tm->pos[v][c]);
			assert_true(na->v[(size_t)na->n * v + c] == tm->normal[v][c]);
		}
		for (int c = 0; c < 2; c++)
			assert_true(ua->v[(size_t)ua->n * v + c] == tm->uv[v][c]);
		assert_int_equal(md->n_infl[v], tm->n_infl[v]);
		for (int j = 0; j < tm->n_infl[v]; j++) {
			assert_int_equal(md->infl[v][j].bone, tm->bone[v][j]);
			assert_true(fabsf(md->infl[v][j].weight - tm->weight[v][j]) < 1e-6f);
		}
	}
	assert_int_equal(md->n_tri, tm->n_tri);
	for (size_t k = 0; k < md->n_tri; k++)
		assert_memory_equal(md->tri[k], tm->tri[k], sizeof md->tri[k]);
	assert_string_equal(f->sc->meshes[mi].pos_encoding, tm->pos_encoding);
	skate_mesh_data_free(md);
}

/* The strict PSK of both scenes, Z-up and Y-up: byte for byte. */
static void same_psk(struct fx *p, struct fx *x)
{
	for (int zup = 0; zup < 2; zup++) {
		struct buf a, b;
		bool ax, bx;

		buf_init(&a);
		buf_init(&b);
		assert_int_equal(skate_export_psk(&p->s, &p->a, p->sc, zup, &a, &ax), RC_OK);
		assert_int_equal(skate_export_psk(&x->s, &x->a, x->sc, zup, &b, &bx), RC_OK);
		assert_int_equal(ax, bx);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		buf_free(&a);
		buf_free(&b);
	}
}

/* Statistics of one mesh on both platforms agree. */
static void same_stats(struct fx *p, struct fx *x, size_t mi)
{
	struct skate_mesh_stats *a, *b;

	assert_int_equal(skate_mesh_stats_build(&p->s, &p->a, p->sc, mi, &a, NULL), RC_OK);
	assert_int_equal(skate_mesh_stats_build(&x->s, &x->a, x->sc, mi, &b, NULL), RC_OK);
	assert_int_equal(a->n_influences, b->n_influences);
	assert_int_equal(a->n_psk_weights, b->n_psk_weights);
	assert_int_equal(a->n_valid_tri, b->n_valid_tri);
	assert_memory_equal(a->pos_min, b->pos_min, sizeof a->pos_min);
	assert_memory_equal(a->pos_max, b->pos_max, sizeof a->pos_max);
	skate_mesh_stats_free(a);
	skate_mesh_stats_free(b);
}

static void test_sky_twin(void **state)
{
	struct fx p, x;
	struct buf t;

	(void)state;
	fx_sky(&p, PSGB_PS3);
	fx_sky(&x, PSGB_XB2);
	assert_int_equal(x.a.h.plat, RW_XB2);
	assert_int_equal(x.a.h.header_size, 0xAC);
	fx_scene(&p, NULL, 0);
	fx_scene(&x, NULL, 0);
	same_scene(p.sc, x.sc);
	assert_int_equal(x.sc->meshes[0].vertex_count, 230);
	assert_string_equal(x.sc->meshes[0].pos_encoding, "FLOAT3 as f32");
	same_mesh(&p, &x, 0, 0);
	same_stats(&p, &x, 0);
	same_psk(&p, &x);
	buf_init(&t);
	assert_int_equal(view_descriptor_text(x.sc, 0, &t), RC_OK);
	buf_putc(&t, 0);
	assert_non_null(strstr((char *)t.data, "0\tXYZ\tFLOAT3\t3\t0\t16\t0\tPERVERTEX\tyes"));
	assert_non_null(strstr((char *)t.data, "TEXCOORD 0"));
	buf_free(&t);
	buf_init(&t);
	assert_int_equal(view_islands_text(x.sc, 0, &t), RC_OK);
	buf_putc(&t, 0);
	assert_non_null(strstr((char *)t.data, "primitive\tbase_vertex\n0\t0\t285\t4\t0\n"));
	assert_non_null(strstr((char *)t.data, "\n3\t855\t285\t4\t0\n"));
	buf_free(&t);
	fx_free(&p);
	fx_free(&x);
}

/* PS3 and Xbox 360 (twin or alt) arenas of the same options. */
static void twins(const struct gen_skinned_opts *o, bool alt, struct fx *p, struct fx *x)
{
	struct gen_skinned_opts ox = *o;

	ox.platform = alt ? GEN_SK_X360_ALT : GEN_SK_X360;
	fx_gen(p, o);
	fx_gen(x, &ox);
	fx_scene(p, p->t.hierarchy_tsv, 0);
	fx_scene(x, x->t.hierarchy_tsv, 0);
}

static void test_skinned_twins(void **state)
{
	static const struct gen_skinned_opts opts[] = {
	    {.seed = 7,
	     .n_bones = 20,
	     .n_meshes = 5,
	     .verts = 80,
	     .islands = 3,
	     .tris = 25,
	     .layout = -1},
	    {.seed = 8, .n_meshes = 2, .layout = 0},
	    {.seed = 9, .n_meshes = 2, .layout = 1},
	    {.seed = 10, .n_meshes = 2, .layout = 2},
	    {.seed = 11, .n_meshes = 2, .layout = 3},
	    {.seed = 12, .n_bones = 40, .n_meshes = 3, .layout = GEN_SK_SKATER, .rig_names = true},
	    {.seed = 13, .n_meshes = 1, .verts = 70000, .islands = 2, .tris = 200, .layout = 0},
	    {.seed = 14, .n_meshes = 3, .islands = 1, .layout = -1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		struct fx p, x;

		twins(&opts[i], false, &p, &x);
		same_scene(p.sc, x.sc);
		for (size_t mi = 0; mi < p.sc->n_meshes; mi++) {
			same_mesh(&p, &x, mi, 0);
			same_stats(&p, &x, mi);
			truth_mesh(&x, mi);
		}
		same_psk(&p, &x);
		fx_free(&p);
		fx_free(&x);
	}
}

/* The formats PS3 lacks: the decode follows the truth exactly, and the PS3 twin within the
 * re-quantisation (DEC3N steps of 1/511, weights of 1/65535 before normalising). */
static void test_skinned_alt(void **state)
{
	(void)state;
	for (int layout = 0; layout < GEN_SK_PRESETS; layout++) {
		struct gen_skinned_opts o = {
		    .seed = 20 + (uint64_t)layout, .n_bones = 9, .n_meshes = 2, .layout = layout};
		struct fx p, x;

		twins(&o, true, &p, &x);
		same_scene(p.sc, x.sc);
		for (size_t mi = 0; mi < p.sc->n_meshes; mi++) {
			same_mesh(&p, &x, mi, 2e-3f);
			truth_mesh(&x, mi);
		}
		fx_free(&p);
		fx_free(&x);
	}
}

/* Every decoded format appears in a generated Xbox 360 descriptor but FLOAT1 and SHORT2. */
static void test_formats_covered(void **state)
{
	bool seen[sizeof decoded / sizeof decoded[0]] = {false};

	(void)state;
	for (int alt = 0; alt < 2; alt++)
		for (int layout = 0; layout < GEN_SK_PRESETS; layout++) {
			struct gen_skinned_opts o = {.seed = 1, .n_meshes = 1, .layout = layout};
			struct fx p, x;

			twins(&o, alt, &p, &x);
			for (unsigned e = 0; e < x.sc->meshes[0].desc.n_el; e++)
				for (size_t k = 0; k < sizeof decoded / sizeof decoded[0]; k++)
					seen[k] |= x.sc->meshes[0].desc.el[e].format == decoded[k];
			fx_free(&p);
			fx_free(&x);
		}
	for (size_t k = 0; k < sizeof decoded / sizeof decoded[0]; k++)
		assert_int_equal(seen[k],
				 decoded[k] != SX360_FMT_FLOAT1 && decoded[k] != SX360_FMT_SHORT2);
}

/* ---- the namespace of twins ---- */

static char *write_temp(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char *path;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return path;
}

static uint8_t *tree_file(struct tree *t, const char *path, size_t *len)
{
	struct tree_stat st;
	uint8_t *p;
	size_t got;

	if (tree_resolve(t, path, &st) != RC_OK)
		return NULL;
	p = malloc(st.size + 1);
	assert_int_equal(tree_read(t, st.ino, 0, st.size, p, &got), RC_OK);
	assert_int_equal(got, st.size);
	*len = got;
	return p;
}

/* Files that must be the same bytes in the PS3 and Xbox 360 mounts of twins. */
static size_t same_files(struct tree *tp, struct tree *tx, const char *const *paths, size_t n)
{
	size_t same = 0;

	for (size_t i = 0; i < n; i++) {
		size_t la, lb;
		uint8_t *a = tree_file(tp, paths[i], &la), *b = tree_file(tx, paths[i], &lb);

		if (!a || !b || la != lb || memcmp(a, b, la)) {
			print_message("differs: %s\n", paths[i]);
			fail();
		}
		same++;
		free(a);
		free(b);
	}
	return same;
}

static void tree_twins(const struct fx *p, const struct fx *x, const char *const *paths, size_t n)
{
	char dir[] = "/tmp/psgfs-x360.XXXXXX";
	char *pp, *px, why[256], sub[64];
	struct tree *tp, *tx;
	struct tree_opts o = {0};
	size_t la;
	uint8_t *errs;

	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof sub, "%s/p", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof sub, "%s/x", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	pp = write_temp(dir, "p/twin.psg", p->file, p->len);
	px = write_temp(dir, "x/twin.rx2", x->file, x->len);
	assert_int_equal(tree_open(pp, &o, &tp, why, sizeof why), TREE_FAIL_NONE);
	assert_int_equal(tree_open(px, &o, &tx, why, sizeof why), TREE_FAIL_NONE);
	assert_int_equal(same_files(tp, tx, paths, n), n);
	errs = tree_file(tx, "errors.txt", &la);
	assert_non_null(errs);
	assert_int_equal(la, 0);
	free(errs);
	tree_close(tp);
	tree_close(tx);
	unlink(pp);
	unlink(px);
	snprintf(sub, sizeof sub, "%s/p", dir);
	rmdir(sub);
	snprintf(sub, sizeof sub, "%s/x", dir);
	rmdir(sub);
	rmdir(dir);
	free(pp);
	free(px);
}

static void test_tree_twins(void **state)
{
	static const char *const sky[] = {
	    "export/twin.psk",	      "export/twin.pskx",	   "skeleton/bones.tsv",
	    "skeleton/names.txt",     "skeleton/inverse_bind.tsv", "meshes/00/palette.tsv",
	    "meshes/00/vertices.tsv", "meshes/00/triangles.tsv",   "meshes/00/skin.tsv"};
	static const char *const skater[] = {"export/twin.psk",		"export/twin.pskx",
					     "skeleton/bones.tsv",	"skeleton/inverse_bind.tsv",
					     "meshes/00/vertices.tsv",	"meshes/01/skin.tsv",
					     "meshes/01/triangles.tsv", "meshes/01/palette.tsv"};
	struct gen_skinned_opts o = {
	    .seed = 31, .n_bones = 30, .n_meshes = 2, .layout = GEN_SK_SKATER, .rig_names = true};
	struct fx p, x;

	(void)state;
	fx_sky(&p, PSGB_PS3);
	fx_sky(&x, PSGB_XB2);
	tree_twins(&p, &x, sky, sizeof sky / sizeof sky[0]);
	fx_free(&p);
	fx_free(&x);
	twins(&o, false, &p, &x);
	tree_twins(&p, &x, skater, sizeof skater / sizeof skater[0]);
	fx_free(&p);
	fx_free(&x);
}

/* ---- base vertices and the row-before rule ---- */

/* File offset of DrawIndexedParameters record k of the sky's OptiMesh (row 7). */
static size_t sky_dip(const struct fx *f, unsigned k)
{
	assert_int_equal(arena_row(&f->a, 7)->type_id, RW_T_OPTIMESH);
	return (size_t)arena_row(&f->a, 7)->start + 0x60 + 16 * k;
}

static void test_base_vertex(void **state)
{
	struct fx p, x;
	struct skate_tbatch a, b;
	struct skate_mesh_stats *st;
	struct diag d;

	(void)state;
	fx_sky(&p, PSGB_PS3);
	fx_sky(&x, PSGB_XB2);
	put32(x.file + sky_dip(&x, 1) + 4, 1); /* island 1: base vertex 1 */
	fx_scene(&p, NULL, 0);
	fx_scene(&x, NULL, 0);
	assert_int_equal(x.sc->meshes[0].islands[1].base_vertex, 1);
	skate_tbatch_init(&a);
	skate_tbatch_init(&b);
	assert_int_equal(skate_mesh_read_triangles(&p.s, &p.a, p.sc, 0, 0, 380, &a), RC_OK);
	assert_int_equal(skate_mesh_read_triangles(&x.s, &x.a, x.sc, 0, 0, 380, &b), RC_OK);
	for (uint32_t i = 0; i < 380; i++)
		for (int c = 0; c < 3; c++)
			assert_int_equal(b.tri[i].v[c],
					 a.tri[i].v[c] + (a.tri[i].island == 1 ? 1 : 0));
	diag_init(&d);
	assert_int_equal(skate_mesh_stats_build(&x.s, &x.a, x.sc, 0, &st, &d), RC_OK);
	assert_int_equal(st->n_valid_tri, 380 - b.n_invalid);
	skate_mesh_stats_free(st);
	diag_free(&d);
	skate_scene_free(x.sc);
	/* a base vertex that sends every index below 0 */
	put32(x.file + sky_dip(&x, 1) + 4, (uint32_t)-1000);
	fx_scene(&x, NULL, 0);
	diag_init(&d);
	assert_int_equal(skate_mesh_stats_build(&x.s, &x.a, x.sc, 0, &st, &d), RC_OK);
	assert_int_equal(st->n_valid_tri, 380 - 95);
	assert_true(diag_has(&d, "95 triangles reference vertices past the vertex count"));
	skate_mesh_stats_free(st);
	diag_free(&d);
	skate_tbatch_free(&a);
	skate_tbatch_free(&b);
	fx_free(&p);
	fx_free(&x);
}

/* Swap dictionary rows i and j of an arena in memory (the rows only; objects stay). */
static void swap_rows(struct fx *f, uint32_t i, uint32_t j)
{
	uint8_t tmp[24], *ri = f->file + f->a.h.dict_start + 24 * i;
	uint8_t *rj = f->file + f->a.h.dict_start + 24 * j;

	memcpy(tmp, ri, 24);
	memcpy(ri, rj, 24);
	memcpy(rj, tmp, 24);
	arena_free(&f->a);
	fx_reopen(f);
}

static void test_row_before(void **state)
{
	struct fx x;
	struct diag d;
	struct skate_scene *sc;
	struct buf b;

	(void)state;
	/* InstanceData before the VertexBuffer: no vertex data */
	fx_sky(&x, PSGB_XB2);
	swap_rows(&x, 2, 3);
	diag_init(&d);
	assert_int_equal(skate_scene_load(&x.s, &x.a, NULL, &sc, &d), RC_OK);
	assert_true(diag_has(&d, "object 4 (VertexBuffer): no readable BaseResource in the row "
				 "before it"));
	assert_false(sc->meshes[0].ok);
	skate_scene_free(sc);
	diag_free(&d);
	buf_init(&b);
	assert_int_equal(view_object_text(&x.s, &x.a, 4, &b, NULL), RC_OK);
	buf_putc(&b, 0);
	assert_non_null(strstr((char *)b.data, "base resource (the row before): none"));
	buf_free(&b);
	fx_free(&x);
	/* the index data before the VertexBuffer and the vertex data before the IndexBuffer */
	fx_sky(&x, PSGB_XB2);
	swap_rows(&x, 3, 5);
	diag_init(&d);
	assert_int_equal(skate_scene_load(&x.s, &x.a, NULL, &sc, &d), RC_OK);
	assert_true(diag_has(&d, "m_bufferSize 3680 but base resource 3 holds 2280 bytes"));
	assert_int_equal(sc->meshes[0].vertex_count, 2280 / 16);
	{
		struct skate_mesh_data *md;

		if (skate_mesh_decode(&x.s, &x.a, sc, 0, &md, &d) == RC_OK)
			skate_mesh_data_free(md);
	}
	skate_scene_free(sc);
	diag_free(&d);
	fx_free(&x);
}

/* ---- hostile arenas ---- */

static void run_hostile(enum gen_skinned_hostile h, const char *needle, int layout, bool alt)
{
	struct gen_skinned_opts o = {.seed = 5,
				     .n_bones = 10,
				     .n_meshes = 3,
				     .layout = layout,
				     .hostile = h,
				     .platform = alt ? GEN_SK_X360_ALT : GEN_SK_X360};
	struct fx f;
	struct diag d;
	struct buf b;

	fx_gen(&f, &o);
	diag_init(&d);
	assert_int_equal(skate_scene_load(&f.s, &f.a, f.t.hierarchy_tsv, &f.sc, &d), RC_OK);
	for (size_t mi = 0; mi < f.sc->n_meshes; mi++) {
		struct skate_mesh_data *md;
		struct skate_mesh_stats *st;

		if (skate_mesh_decode(&f.s, &f.a, f.sc, mi, &md, &d) == RC_OK) {
			assert_int_equal(skate_mesh_stats_build(&f.s, &f.a, f.sc, mi, &st, NULL),
					 RC_OK);
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
	assert_int_equal(skate_export_psk(&f.s, &f.a, f.sc, true, &b, NULL), RC_OK);
	buf_free(&b);
	if (!diag_has(&d, needle))
		print_diag("hostile", &d);
	assert_true(diag_has(&d, needle));
	diag_free(&d);
	fx_free(&f);
}

static void test_hostile(void **state)
{
	(void)state;
	for (int alt = 0; alt < 2; alt++) {
		run_hostile(GEN_SK_PALETTE_PAST_SKELETON, "past the skeleton", 0, alt);
		run_hostile(GEN_SK_PALETTE_PAST_SKELETON, "outside the palette", 0, alt);
		run_hostile(GEN_SK_INDEX_PAST_VERTS, "past the vertex count", -1, alt);
		run_hostile(GEN_SK_INDEX_PAST_VERTS, "past the vertex count", 1, alt);
		run_hostile(GEN_SK_STRIDE_TOO_SMALL, "does not fit stride", 0, alt);
		run_hostile(GEN_SK_STRIDE_TOO_SMALL, "not a multiple of stride", 0, alt);
		run_hostile(GEN_SK_BONES_PAST_OBJECT, "65535 bones", -1, alt);
	}
}

/* The generator keeps every Xbox 360 buffer after its base resource: no shuffled rows. */
static void test_generator_refuses(void **state)
{
	struct gen_skinned_opts o = {.seed = 1, .platform = GEN_SK_X360, .shuffle_seed = 3};
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(gen_psg_skinned(&o, &b, NULL), RC_INVAL);
	o.shuffle_seed = 0;
	o.baseres_first = true;
	assert_int_equal(gen_psg_skinned(&o, &b, NULL), RC_INVAL);
	assert_int_equal(gen_psg_sky_platform(PSGB_XB2, PSGB_ORDER_LOGICAL, 5, &b, NULL), RC_INVAL);
	assert_int_equal(gen_psg_sky_platform(PSGB_XB2, PSGB_ORDER_BASERES_FIRST, 0, &b, NULL),
			 RC_INVAL);
	buf_free(&b);
}

/* Every byte of every main object of a small Xbox 360 arena set to hostile values: the scene,
 * mesh decode, statistics and object views never crash (run under ASan). */
static void test_mutations(void **state)
{
	struct gen_skinned_opts o = {.seed = 9,
				     .n_bones = 5,
				     .n_meshes = 4,
				     .verts = 12,
				     .islands = 2,
				     .tris = 3,
				     .platform = GEN_SK_X360_ALT};
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
				struct buf b;

				f.file[e->start + k] = vals[vi];
				if (skate_scene_load(&f.s, &f.a, NULL, &sc, NULL) == RC_OK) {
					for (size_t mi = 0; mi < sc->n_meshes; mi++) {
						struct skate_mesh_data *md;
						struct skate_mesh_stats *st;

						if (skate_mesh_decode(&f.s, &f.a, sc, mi, &md,
								      NULL) == RC_OK)
							skate_mesh_data_free(md);
						if (skate_mesh_stats_build(&f.s, &f.a, sc, mi, &st,
									   NULL) == RC_OK)
							skate_mesh_stats_free(st);
					}
					skate_scene_free(sc);
				}
				buf_init(&b);
				(void)view_object_text(&f.s, &f.a, i, &b, NULL);
				buf_free(&b);
			}
			f.file[e->start + k] = keep;
		}
	}
	fx_free(&f);
}

/* Random vertex bytes (many zeros and 0xFF, the values the skin rules treat specially) in
 * every Xbox 360 layout: the statistics' fast paths (u8 words in reverse byte order, u16 and
 * s16 slots) count the influences skate_mesh_decode finds, with the same problem lines. */
static void test_stats_agree(void **state)
{
	(void)state;
	for (int alt = 0; alt < 2; alt++)
		for (int layout = 0; layout < GEN_SK_PRESETS; layout++) {
			struct gen_skinned_opts o = {.seed = 40 + (uint64_t)layout,
						     .n_bones = 12,
						     .n_meshes = 1,
						     .verts = 2000,
						     .layout = layout,
						     .platform =
							 alt ? GEN_SK_X360_ALT : GEN_SK_X360};
			const struct arena_dict_entry *vbr;
			struct skate_mesh_stats *st;
			struct skate_mesh_data *md;
			struct diag d1, d2;
			struct prng r;
			uint64_t infl = 0;
			struct fx f;

			fx_gen(&f, &o);
			fx_scene(&f, NULL, 0);
			vbr = arena_row(&f.a, f.sc->meshes[0].vb_res);
			prng_seed(&r, 100 + (uint64_t)layout);
			for (uint32_t k = 0; k < vbr->size; k++) {
				uint32_t c = prng_below(&r, 8);

				f.file[vbr->start + k] = c < 3	  ? 0
							 : c == 3 ? 0xFF
								  : (uint8_t)prng_below(&r, 256);
			}
			diag_init(&d1);
			diag_init(&d2);
			assert_int_equal(skate_mesh_decode(&f.s, &f.a, f.sc, 0, &md, &d1), RC_OK);
			assert_int_equal(skate_mesh_stats_build(&f.s, &f.a, f.sc, 0, &st, &d2),
					 RC_OK);
			for (uint32_t v = 0; v < md->n_verts; v++)
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
			fx_free(&f);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format_table),
	    cmocka_unit_test(test_elem_decode),
	    cmocka_unit_test(test_stream_matches_elem),
	    cmocka_unit_test(test_vdes),
	    cmocka_unit_test(test_vb_ib),
	    cmocka_unit_test(test_optimesh),
	    cmocka_unit_test(test_sky_twin),
	    cmocka_unit_test(test_skinned_twins),
	    cmocka_unit_test(test_skinned_alt),
	    cmocka_unit_test(test_formats_covered),
	    cmocka_unit_test(test_tree_twins),
	    cmocka_unit_test(test_base_vertex),
	    cmocka_unit_test(test_row_before),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_generator_refuses),
	    cmocka_unit_test(test_mutations),
	    cmocka_unit_test(test_stats_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
