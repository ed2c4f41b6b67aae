/* Arena parser against the builder/generators, platform variants, hostile
 * patches and the reference resolver. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "psgfs/base/hash.h"
#include "psgfs/formats/arena.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/prng.h"

struct gen {
	uint8_t *p;
	size_t n;
	struct psg_gen_record rec;
};

static void gen_sky(struct gen *g, uint64_t seed)
{
	struct buf out;

	buf_init(&out);
	assert_int_equal(gen_psg_sky(seed, &out, &g->rec), RC_OK);
	g->p = buf_steal(&out, &g->n);
	assert_non_null(g->p);
}

static void gen_free(struct gen *g)
{
	free(g->p);
	psg_gen_record_free(&g->rec);
}

static enum rc open_bytes(const uint8_t *p, size_t n, struct arena *a, struct diag *d)
{
	struct src s;
	struct src_mem m;

	src_init_mem(&s, &m, p, n);
	return arena_open(&s, a, d);
}

static bool diag_has(const struct diag *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msg[i], needle))
			return true;
	return false;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Every row's bytes are where the record says and hash to the recorded value. */
static void check_record(const uint8_t *p, size_t n, const struct arena *a,
			 const struct psg_gen_record *rec)
{
	struct src s;
	struct src_mem m;

	src_init_mem(&s, &m, p, n);
	assert_int_equal(a->n_dict, rec->n);
	for (uint32_t i = 0; i < a->n_dict; i++) {
		uint8_t *obj;
		size_t len;

		assert_int_equal(arena_row(a, i)->type_id, rec->obj[i].type_id);
		assert_int_equal(arena_row(a, i)->start, rec->obj[i].start);
		assert_int_equal(arena_row(a, i)->size, rec->obj[i].size);
		assert_true(arena_row(a, i)->readable);
		assert_int_equal(arena_read_object(&s, a, i, &obj, &len), RC_OK);
		assert_int_equal(len, rec->obj[i].size);
		assert_true(fnv1a_64(obj, len) == rec->obj[i].fnv64);
		free(obj);
	}
}

static void test_sky_invariants(void **state)
{
	static const uint32_t order[12] = {
	    RW_T_VERSION, RW_T_RENDERMATERIAL, RW_T_INSTANCE,	 RW_T_PS3_GPU,
	    RW_T_VB,	  RW_T_PS3_GPU,	       RW_T_IB,		 RW_T_OPTIMESH,
	    RW_T_VDES,	  RW_T_MESHHELPER,     RW_T_RENDERMODEL, RW_T_TOC};
	static const uint8_t vdes[0x28] = {0, 0,    0, 0, 0,	0, 1,	 1,    0, 1, 0, 2, 0, 3,
					   0, 0,    2, 3, 0,	0, 0,	 0x10, 0, 1, 1, 2, 0, 0x0C,
					   0, 0x10, 8, 1, 0xFF, 0, 0xFF, 0,    0, 0, 0, 0};
	struct gen g;
	struct arena a;
	struct diag d;
	uint64_t last_end = 0;

	(void)state;
	gen_sky(&g, 0);
	diag_init(&d);
	assert_int_equal(open_bytes(g.p, g.n, &a, &d), RC_OK);
	for (size_t i = 0; i < d.n; i++)
		print_message("diag: %s\n", d.msg[i]);
	assert_int_equal(diag_count(&d), 0);

	/* header */
	assert_int_equal(a.h.plat, RW_PS3);
	assert_string_equal(a.h.platform, "ps3");
	assert_int_equal(a.h.n_rd, 6);
	assert_int_equal(a.h.header_size, 0xC0);
	assert_int_equal(a.h.is_big_endian, 1);
	assert_int_equal(a.h.pointer_bits, 32);
	assert_int_equal(a.h.pointer_align, 4);
	assert_string_equal(a.h.major, "454");
	assert_string_equal(a.h.minor, "000");
	assert_int_equal(a.h.num_entries, 12);
	assert_int_equal(a.h.num_used, 12);
	assert_int_equal(a.h.alignment, 0x10);
	assert_int_equal(a.h.sections, 0xC0);
	assert_int_equal(a.h.rd[0].align, 0x10);
	assert_int_equal(a.h.rd[5].align, 0x10);
	for (int k = 1; k < 5; k++) {
		assert_int_equal(a.h.rd[k].size, 0);
		assert_int_equal(a.h.rd[k].align, 1);
	}
	assert_int_equal(a.h.ru[0].size, 0xC0);
	assert_int_equal(a.h.ru[0].align, 4);
	assert_int_equal(g.n, (uint64_t)a.h.rd[0].size + a.h.rd[5].size);
	assert_int_equal(a.h.region_base[5], a.h.rd[0].size);

	/* sections */
	assert_int_equal(a.manifest_type, 0x00010004);
	assert_int_equal(a.section_off[0], 0x1C);
	assert_int_equal(a.section_off[1], 0x128);
	assert_int_equal(a.section_off[2], 0x14C);
	assert_int_equal(a.section_off[3], 0x168);
	assert_int_equal(a.n_types, 64);
	assert_int_equal(a.types[0], 0);
	assert_int_equal(a.types[5], 0x00010034);
	assert_int_equal(a.types[63], 0x0001000F);
	assert_int_equal(a.sections_end, 0x234);
	assert_int_equal(a.ext_records[0], a.h.id);
	assert_int_equal(a.ext_records[1], 0xFFB00000u);
	assert_int_equal(a.ext_records[2], a.h.id);
	assert_int_equal(a.atoms_type, 0x00010008);

	/* objects, dictionary, subreferences */
	for (uint32_t i = 0; i < 12; i++) {
		assert_int_equal(arena_row(&a, i)->type_id, order[i]);
		assert_int_equal(a.types[arena_row(&a, i)->type_index], order[i]);
		assert_int_equal(arena_row(&a, i)->reloc, 0);
		if (!arena_row(&a, i)->base_resource &&
		    arena_row(&a, i)->start + arena_row(&a, i)->size > last_end)
			last_end = arena_row(&a, i)->start + arena_row(&a, i)->size;
	}
	assert_int_equal(arena_row(&a, 0)->start, 0x240);
	assert_int_equal(a.h.dict_start % 4, 0);
	assert_int_equal(a.h.dict_start, align_up(last_end, 4));
	assert_int_equal(a.sub_records, a.h.dict_start + 24 * 12);
	assert_int_equal(a.sub_dict, a.sub_records + 8 * 4);
	assert_int_equal(a.h.rd[0].size, a.sub_dict + 24 * 4);
	assert_int_equal(a.n_subrefs, 4);
	assert_int_equal(a.subrefs[0].object, 1);
	assert_int_equal(a.subrefs[0].offset, 0x14);
	assert_int_equal(a.subrefs[1].object, 10);
	assert_int_equal(a.subrefs[2].object, 10);
	assert_int_equal(a.subrefs[3].object, 2);
	assert_int_equal(a.subrefs[3].offset, 0x20);
	assert_int_equal(arena_row(&a, 3)->ptr, 0);
	assert_int_equal(arena_row(&a, 3)->size, 230 * 16);
	assert_int_equal(arena_row(&a, 5)->ptr, 230 * 16);
	assert_int_equal(arena_row(&a, 5)->size, 1140 * 2);
	assert_int_equal(arena_row(&a, 7)->size, 0x94); /* align4(0x60 + 12*4 + 2) */
	assert_memory_equal(g.p + arena_row(&a, 8)->start, vdes, sizeof vdes);
	check_record(g.p, g.n, &a, &g.rec);

	/* VB, IB, MeshHelper, OptiMesh references */
	const uint8_t *vb = g.p + arena_row(&a, 4)->start, *ib = g.p + arena_row(&a, 6)->start;
	const uint8_t *om = g.p + arena_row(&a, 7)->start, *mh = g.p + arena_row(&a, 9)->start;
	assert_int_equal(ld_u32be(vb), 3);
	assert_int_equal(ld_u32be(vb + 8), 230 * 16);
	assert_int_equal(ld_u32be(ib), 5);
	assert_int_equal(ld_u32be(ib + 8), 1140);
	assert_int_equal(ld_u32be(ib + 12), 2);
	assert_int_equal(ib[16], 1);
	assert_int_equal(ld_u32be(mh), 1);
	assert_int_equal(ld_u32be(mh + 4), 1);
	assert_int_equal(ld_u32be(mh + 8), 6);
	assert_int_equal(ld_u32be(mh + 12), 4);
	assert_int_equal(ld_u32be(om + 0x24), 0x00800000);
	assert_int_equal(ld_u32be(om + 0x28), 8);
	assert_int_equal(ld_u32be(om + 0x2C), 9);
	assert_int_equal(ld_u32be(om + 0x30), 6);
	assert_int_equal(ld_u32be(om + 0x34), 4);
	assert_int_equal(ld_u32be(om + 0x38), 4);
	assert_int_equal(ld_u32be(om + 0x3C), 0x00800001);
	assert_int_equal(ld_u32be(om + 0x40), 0x00800002);
	assert_int_equal(ld_u32be(om + 0x44), 0x60);
	assert_int_equal(ld_u32be(om + 0x48), 1);
	assert_int_equal(ld_u32be(om + 0x4C), 0x90);
	for (int k = 0; k < 4; k++) {
		assert_int_equal(ld_u32be(om + 0x60 + 12 * k), 285 * k);
		assert_int_equal(ld_u32be(om + 0x64 + 12 * k), 285);
		assert_int_equal(om[0x68 + 12 * k], 5);
	}
	assert_int_equal(ld_u16be(om + 0x90), 0);

	/* indices: max 229 of 230 vertices */
	const uint8_t *idx = g.p + arena_row(&a, 5)->start, *pos = g.p + arena_row(&a, 3)->start;
	uint16_t mx = 0;
	for (int i = 0; i < 1140; i++)
		if (ld_u16be(idx + 2 * i) > mx)
			mx = ld_u16be(idx + 2 * i);
	assert_int_equal(mx, 229);

	/* RenderModelData: bone name, island boxes (w = half diagonal), areas recomputed here */
	const uint8_t *md = g.p + arena_row(&a, 10)->start;
	uint32_t msz = arena_row(&a, 10)->size;
	assert_int_equal(ld_u16be(md + 0x32), 1);
	assert_int_equal(ld_u16be(md + 0x34), 1);
	assert_int_equal(ld_u16be(md + 0x36), 4);
	assert_int_equal(ld_u32be(md + 0x20), 0x40);
	uint32_t nt = ld_u32be(md + 0x28);
	assert_true(nt + 4 <= msz);
	assert_string_equal((const char *)md + ld_u32be(md + nt), "skyboxSphere");
	assert_int_equal(ld_u32be(md + ld_u32be(md + 0x24)), 7);
	uint32_t aabbs = ld_u32be(md + 0x38), areas = ld_u32be(md + 0x3C);
	assert_int_equal(aabbs % 16, 0);
	assert_int_equal(aabbs, a.subrefs[2].offset);
	assert_int_equal(areas, a.subrefs[1].offset);
	assert_int_equal(areas + 16 * 4, msz);
	for (int k = 0; k < 4; k++) {
		double s[3] = {0, 0, 0}, mn[3] = {1e30, 1e30, 1e30}, mxv[3] = {-1e30, -1e30, -1e30};
		for (int t = 0; t < 95; t++) {
			float v[3][3];
			for (int c = 0; c < 3; c++) {
				uint16_t vi = ld_u16be(idx + 2 * (285 * k + 3 * t + c));
				for (int j = 0; j < 3; j++) {
					v[c][j] = f32_from_bits(ld_u32be(pos + 16 * vi + 4 * j));
					if (v[c][j] < mn[j])
						mn[j] = v[c][j];
					if (v[c][j] > mxv[j])
						mxv[j] = v[c][j];
				}
			}
			double e1[3], e2[3];
			for (int j = 0; j < 3; j++) {
				e1[j] = (double)v[1][j] - v[0][j];
				e2[j] = (double)v[2][j] - v[0][j];
			}
			s[0] += fabs(e1[1] * e2[2] - e1[2] * e2[1]) / 2;
			s[1] += fabs(e1[2] * e2[0] - e1[0] * e2[2]) / 2;
			s[2] += fabs(e1[0] * e2[1] - e1[1] * e2[0]) / 2;
		}
		const uint8_t *bx = md + aabbs + 32 * k, *ar = md + areas + 16 * k;
		double diag2 = 0;
		for (int j = 0; j < 3; j++) {
			assert_float_equal(f32_from_bits(ld_u32be(bx + 4 * j)), mn[j], 1e-4);
			assert_float_equal(f32_from_bits(ld_u32be(bx + 16 + 4 * j)), mxv[j], 1e-4);
			assert_float_equal(f32_from_bits(ld_u32be(ar + 4 * j)), s[j],
					   1e-3 * (1 + s[j]));
			diag2 += (mxv[j] - mn[j]) * (mxv[j] - mn[j]);
		}
		assert_float_equal(f32_from_bits(ld_u32be(bx + 12)), sqrt(diag2) / 2, 1e-3);
		assert_float_equal(f32_from_bits(ld_u32be(bx + 28)), sqrt(diag2) / 2, 1e-3);
		assert_float_equal(f32_from_bits(ld_u32be(ar + 12)), 0, 0);
	}

	/* Material channel strings, instance and TOC */
	const uint8_t *mat = g.p + arena_row(&a, 1)->start;
	uint32_t matsz = arena_row(&a, 1)->size;
	bool found = false;
	for (uint32_t o = 0; o + 25 <= matsz; o++)
		if (memcmp(mat + o, "AttribulatorMaterialName", 25) == 0)
			found = true;
	assert_true(found);
	assert_int_equal(ld_u32be(mat + 0x10), ld_u32be(mat + 0x0C) + 32 * ld_u32be(mat + 4));
	for (int i = 0; i < 16; i++)
		assert_int_equal(mat[matsz - 1 - i], 0);
	const uint8_t *inst = g.p + arena_row(&a, 2)->start;
	assert_int_equal(ld_u32be(inst + 0x20 + 0x80), 10);
	assert_int_equal(inst[arena_row(&a, 2)->size - 1], 0);
	const uint8_t *toc = g.p + arena_row(&a, 11)->start;
	assert_int_equal(ld_u32be(toc + 0x10) + 8 * ld_u32be(toc + 0x0C), arena_row(&a, 11)->size);
	assert_int_equal(ld_u32be(toc + 0x08), ld_u32be(toc + 0x10));

	arena_free(&a);
	diag_free(&d);
	gen_free(&g);
}

/* Type of the object a stored reference value resolves to (or UINT32_MAX). */
static uint32_t ref_type(const struct arena *a, uint32_t v, uint32_t *off)
{
	uint32_t obj, o;

	if (arena_resolve_ref(a, v, &obj, &o) != RC_OK)
		return UINT32_MAX;
	if (off)
		*off = o;
	return arena_row(a, obj)->type_id;
}

static void test_sky_shuffled(void **state)
{
	struct gen base;
	unsigned n_moved = 0;

	(void)state;
	gen_sky(&base, 0);
	for (uint64_t seed = 1; seed <= 12; seed++) {
		struct gen g;
		struct arena a;
		struct diag d;
		bool moved = false;
		uint32_t off;

		gen_sky(&g, seed * 0x9E3779B97F4A7C15ull);
		diag_init(&d);
		assert_int_equal(open_bytes(g.p, g.n, &a, &d), RC_OK);
		assert_int_equal(diag_count(&d), 0);
		check_record(g.p, g.n, &a, &g.rec);
		assert_int_equal(g.n, base.n);
		for (uint32_t i = 0; i < 12; i++)
			if (arena_row(&a, i)->type_id != base.rec.obj[i].type_id)
				moved = true;
		n_moved += moved;

		uint32_t iom = arena_find_type(&a, RW_T_OPTIMESH);
		uint32_t ivb = arena_find_type(&a, RW_T_VB), iib = arena_find_type(&a, RW_T_IB);
		uint32_t imh = arena_find_type(&a, RW_T_MESHHELPER);
		uint32_t iin = arena_find_type(&a, RW_T_INSTANCE);
		uint32_t imd = arena_find_type(&a, RW_T_RENDERMODEL);
		uint32_t itc = arena_find_type(&a, RW_T_TOC);
		assert_true(iom < 12 && ivb < 12 && iib < 12 && imh < 12 && iin < 12 && imd < 12 &&
			    itc < 12);
		/* row 0 is never a reference target */
		assert_true(0 != iom && 0 != ivb && 0 != iib && 0 != imh && 0 != imd);
		const uint8_t *om = g.p + arena_row(&a, iom)->start;
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x24), &off), RW_T_RENDERMATERIAL);
		assert_int_equal(off, 0x14);
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x28), NULL), RW_T_VDES);
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x2C), NULL), RW_T_MESHHELPER);
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x30), NULL), RW_T_IB);
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x34), NULL), RW_T_VB);
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x3C), &off), RW_T_RENDERMODEL);
		assert_int_equal(off, ld_u32be(g.p + arena_row(&a, imd)->start + 0x3C));
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x40), &off), RW_T_RENDERMODEL);
		assert_int_equal(off, ld_u32be(g.p + arena_row(&a, imd)->start + 0x38));
		uint32_t vbr = ld_u32be(g.p + arena_row(&a, ivb)->start);
		uint32_t ibr = ld_u32be(g.p + arena_row(&a, iib)->start);
		assert_int_equal(ref_type(&a, vbr, NULL), RW_T_PS3_GPU);
		assert_int_equal(ref_type(&a, ibr, NULL), RW_T_PS3_GPU);
		assert_int_equal(arena_row(&a, vbr)->size, 230 * 16);
		assert_int_equal(arena_row(&a, ibr)->size, 2280);
		const uint8_t *mh = g.p + arena_row(&a, imh)->start;
		assert_int_equal(ld_u32be(mh + 8), iib);
		assert_int_equal(ld_u32be(mh + 12), ivb);
		assert_int_equal(
		    ref_type(&a, ld_u32be(g.p + arena_row(&a, iin)->start + 0xA0), NULL),
		    RW_T_RENDERMODEL);
		const uint8_t *md = g.p + arena_row(&a, imd)->start;
		assert_int_equal(ld_u32be(md + ld_u32be(md + 0x24)), iom);
		const uint8_t *toc = g.p + arena_row(&a, itc)->start;
		assert_int_equal(ref_type(&a, ld_u32be(toc + 0x14 + 0x14), &off),
				 RW_T_RENDERMATERIAL);
		assert_int_equal(ref_type(&a, ld_u32be(toc + 0x14 + 24 + 0x14), NULL),
				 RW_T_RENDERMODEL);
		assert_int_equal(ref_type(&a, ld_u32be(toc + 0x14 + 48 + 0x14), NULL),
				 RW_T_OPTIMESH);
		assert_int_equal(ref_type(&a, ld_u32be(toc + 0x14 + 72 + 0x14), &off),
				 RW_T_INSTANCE);
		assert_int_equal(off, 0x20);
		/* same object bytes modulo renumbering: the geometry is identical */
		assert_memory_equal(g.p + arena_row(&a, vbr)->start, base.p + base.rec.obj[3].start,
				    230 * 16);
		arena_free(&a);
		diag_free(&d);
		gen_free(&g);
	}
	assert_true(n_moved >= 11);
	gen_free(&base);
}

static void test_base_resource_region(void **state)
{
	struct gen g;
	struct arena a;
	struct diag d;
	unsigned n_br = 0;

	(void)state;
	gen_sky(&g, 77);
	diag_init(&d);
	assert_int_equal(open_bytes(g.p, g.n, &a, &d), RC_OK);
	for (uint32_t i = 0; i < a.n_dict; i++) {
		if (!arena_row(&a, i)->base_resource)
			continue;
		n_br++;
		assert_int_equal(arena_row(&a, i)->start,
				 (uint64_t)a.h.rd[0].size + arena_row(&a, i)->ptr);
		assert_int_equal(arena_row(&a, i)->start, g.rec.obj[i].start);
		assert_int_equal(arena_row(&a, i)->ptr % 0x10, 0);
		assert_true(arena_row(&a, i)->ptr + arena_row(&a, i)->size <= a.h.rd[5].size);
		assert_true(fnv1a_64(g.p + arena_row(&a, i)->start, arena_row(&a, i)->size) ==
			    g.rec.obj[i].fnv64);
	}
	assert_int_equal(n_br, 2);
	arena_free(&a);
	diag_free(&d);
	gen_free(&g);
}

static void test_texture_registry(void **state)
{
	struct psg_builder *b = psgb_new(PSGB_REG_TEXTURE10, 0x1234);
	uint8_t tex[40] = {0x86, 1, 2, 0}, px[2][160];
	struct psg_gen_record rec;
	struct buf out;
	struct arena a;
	struct diag d;
	uint32_t t[2];

	(void)state;
	memset(px, 0x5A, sizeof px);
	psgb_set_gpu_align(b, 0x80);
	for (int k = 0; k < 2; k++) {
		uint32_t br = psgb_add_base_resource(b, 0x80, px[k], sizeof px[k] - 8 * k);
		put32(tex + 0x18, br);
		t[k] = psgb_add(b, RW_T_TEXTURE, 4, tex, sizeof tex);
		psgb_ref(b, t[k], 0x18);
	}
	const struct psgo_toc_entry e[2] = {
	    {"0x2c7f381800171902.Texture", 0, 0x2C7F381800171902ull, RW_T_TEXTURE_HASH, t[0]},
	    {"second.Texture", 0, 2, RW_T_TEXTURE_HASH, t[1]},
	};
	psgo_toc(b, PSGO_NEW, e, 2);
	psgo_version(b, PSGO_NEW, false);
	buf_init(&out);
	assert_int_equal(psgb_finish(b, 0, &out, &rec), RC_OK);

	diag_init(&d);
	assert_int_equal(open_bytes(out.data, out.len, &a, &d), RC_OK);
	assert_int_equal(diag_count(&d), 0);
	assert_int_equal(a.n_types, 10);
	assert_int_equal(a.section_off[1], 0x50);
	assert_int_equal(a.section_off[2], 0x74);
	assert_int_equal(a.section_off[3], 0x90);
	assert_int_equal(a.sections_end, 0xC0 + 0x9C);
	assert_int_equal(a.n_subrefs, 0);
	assert_int_equal(a.sub_dict, a.sub_records);
	assert_int_equal(a.sub_records, a.h.rd[0].size);
	assert_int_equal(a.h.rd[5].align, 0x80);
	assert_int_equal(arena_row(&a, 2)->ptr,
			 0x100); /* second texel block 0x80-aligned in region */
	assert_int_equal(arena_row(&a, 6 - 1)->type_id, RW_T_VERSION);
	assert_int_equal(arena_row(&a, 5)->size, 8);
	assert_int_equal(out.len, (size_t)a.h.rd[0].size + a.h.rd[5].size);
	assert_int_equal(a.h.rd[5].size, 0x100 + 152); /* region not padded at its end */
	check_record(out.data, out.len, &a, &rec);
	const uint8_t *toc = out.data + arena_row(&a, 4)->start;
	assert_int_equal(ld_u32be(toc + 0x10) + 8 * ld_u32be(toc + 0x0C), arena_row(&a, 4)->size);
	assert_int_equal(arena_row(&a, 4)->size % 4, 0);
	assert_string_equal((const char *)toc + ld_u32be(toc + 0x14), "0x2c7f381800171902.Texture");
	arena_free(&a);
	diag_free(&d);
	psg_gen_record_free(&rec);
	buf_free(&out);
}

static void wr32(uint8_t *p, uint32_t v, bool le)
{
	if (!le) {
		put32(p, v);
		return;
	}
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Hand-built arena for other platforms: header 0x48 + 20n, 10-type registry, one main
 * object (8 bytes) and one base resource of type 0x00010030 (descriptor 1). */
static size_t build_variant(uint8_t *f, const char *plat, unsigned n_rd, bool le)
{
	uint32_t hs = 0x48 + 20 * n_rd, sec = hs, ntypes = 10;
	uint32_t secsz = 0x74 + 4 * ntypes, obj = (sec + secsz + 15) & ~15u;
	uint32_t dict = obj + 8, rd0 = dict + 48, total = rd0 + 32;
	static const uint32_t reg[10] = {0,	     0x00010030, 0x00010031, 0x00010032,
					 0x00010033, 0x00010034, 0x00010010, 0x000200E8,
					 0x00EB0008, 0x00EB000B};
	size_t at;
#define W(off, v) wr32(f + (off), (v), le)

	memset(f, 0, total);
	memcpy(f, "\x89RW4", 4);
	memcpy(f + 4, plat, 4);
	memcpy(f + 8, "\x0D\x0A\x1A\x0A", 4);
	f[0x0C] = le ? 0 : 1;
	f[0x0D] = 32;
	f[0x0E] = 4;
	memcpy(f + 0x10,
	       "454\0"
	       "000\0",
	       8);
	W(0x1C, 7);
	W(0x20, 2);
	W(0x24, 2);
	W(0x28, 0x20);
	W(0x30, dict);
	W(0x34, sec);
	W(0x44, rd0);
	W(0x48, 0x10);
	W(0x4C, 32); /* RD[1] */
	W(0x50, 0x10);
	for (unsigned k = 2; k < n_rd; k++)
		W(0x44 + 8 * k + 4, 1);
	at = sec;
	W(at, 0x10004), W(at + 4, 4), W(at + 8, 12), W(at + 12, 0x1C);
	W(at + 16, 0x1C + 12 + 4 * ntypes);
	W(at + 20, 0x1C + 12 + 4 * ntypes + 0x24);
	W(at + 24, 0x1C + 12 + 4 * ntypes + 0x24 + 0x1C);
	at = sec + 0x1C;
	W(at, 0x10005), W(at + 4, ntypes), W(at + 8, 12);
	for (uint32_t i = 0; i < ntypes; i++)
		W(at + 12 + 4 * i, reg[i]);
	at += 12 + 4 * ntypes;
	W(at, 0x10006), W(at + 4, 3), W(at + 8, 0x18), W(at + 12, 7), W(at + 16, 0xFFB00000u),
	    W(at + 20, 7);
	at += 0x24;
	W(at, 0x10007), W(at + 16, rd0), W(at + 20, rd0);
	at += 0x1C;
	W(at, 0x10008);
	W(obj, 25), W(obj + 4, 13);
	W(dict, obj), W(dict + 8, 8), W(dict + 12, 0x10), W(dict + 16, 8), W(dict + 20, 0x00EB0008);
	W(dict + 24, 0), W(dict + 32, 32), W(dict + 36, 0x10), W(dict + 40, 1),
	    W(dict + 44, 0x00010030);
	memset(f + rd0, 0xAB, 32);
#undef W
	return total;
}

static void test_platform_variants(void **state)
{
	static const struct {
		const char *p;
		unsigned n;
		bool le;
		enum rw_platform plat;
	} v[3] = {{"xb2", 5, false, RW_XB2}, {"rev", 4, false, RW_REV}, {"w32", 4, true, RW_W32}};
	uint8_t f[1024];

	(void)state;
	for (int i = 0; i < 3; i++) {
		size_t n = build_variant(f, v[i].p, v[i].n, v[i].le);
		struct arena a;
		struct diag d;

		diag_init(&d);
		assert_int_equal(open_bytes(f, n, &a, &d), RC_OK);
		for (size_t k = 0; k < d.n; k++)
			print_message("%s diag: %s\n", v[i].p, d.msg[k]);
		assert_int_equal(diag_count(&d), 0);
		assert_int_equal(a.h.plat, v[i].plat);
		assert_int_equal(a.h.n_rd, v[i].n);
		assert_int_equal(a.h.header_size, 0x48 + 20 * v[i].n);
		assert_int_equal(a.big_endian, !v[i].le);
		assert_int_equal(a.h.id, 7);
		assert_int_equal(a.n_types, 10);
		assert_int_equal(a.n_dict, 2);
		assert_int_equal(arena_row(&a, 0)->type_id, RW_T_VERSION);
		assert_int_equal(arena_row(&a, 1)->start, a.h.rd[0].size);
		assert_int_equal(arena_row(&a, 1)->size, 32);
		assert_true(arena_row(&a, 1)->readable);
		assert_int_equal(f[arena_row(&a, 1)->start], 0xAB);
		arena_free(&a);
		diag_free(&d);
	}
}

/* Open mutated bytes: must either fail with a parser error or open; never crash. */
static enum rc open_any(const uint8_t *p, size_t n, struct diag *d)
{
	struct arena a;
	enum rc r = open_bytes(p, n, &a, d);

	if (r == RC_OK) {
		struct src s;
		struct src_mem m;
		uint32_t obj, off;

		src_init_mem(&s, &m, p, n);
		for (uint32_t i = 0; i < a.n_dict; i++) {
			uint8_t *o;
			size_t len;

			if (arena_row(&a, i)->readable) {
				assert_true(
				    span_ok(n, arena_row(&a, i)->start, arena_row(&a, i)->size));
				assert_int_equal(arena_read_object(&s, &a, i, &o, &len), RC_OK);
				free(o);
			} else {
				assert_int_equal(arena_read_object(&s, &a, i, &o, &len), RC_BOUNDS);
			}
		}
		for (uint32_t i = 0; i < a.n_subrefs + 2; i++)
			if (arena_resolve_ref(&a, 0x00800000u | i, &obj, &off) == RC_OK)
				assert_true(obj < a.n_dict && off < arena_row(&a, obj)->size);
		arena_free(&a);
	} else {
		assert_true(r == RC_CORRUPT || r == RC_FORMAT || r == RC_TRUNCATED);
	}
	return r;
}

static void test_truncation(void **state)
{
	struct gen g;

	(void)state;
	gen_sky(&g, 5);
	for (size_t cut = 0; cut < g.n; cut++) {
		struct diag d;
		enum rc r;

		diag_init(&d);
		r = open_any(g.p, cut, &d);
		/* a truncated arena is never silently fine: at least the size warning */
		assert_true(r != RC_OK || diag_count(&d) > 0);
		if (cut < 0xC0)
			assert_true(r != RC_OK);
		diag_free(&d);
	}
	gen_free(&g);
}

static void test_hostile_header(void **state)
{
	struct gen g;
	uint8_t *c;
	struct diag d;
	struct arena a;
	uint8_t tiny[20] = {0x89, 'R', 'W', '4', 'p', 's', '3', 0, 0x0D, 0x0A, 0x1A, 0x0A};

	(void)state;
	gen_sky(&g, 0);
	c = malloc(g.n > 0x300 ? g.n : 0x300);
	assert_non_null(c);

	diag_init(&d);
	assert_int_equal(open_bytes(tiny, sizeof tiny, &a, &d), RC_TRUNCATED);
	assert_int_equal(open_bytes((const uint8_t *)"hello", 5, &a, &d), RC_FORMAT);
	memcpy(c, g.p, g.n);
	c[4] = 'a';
	c[5] = 'b';
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_FORMAT);

	/* numEntries 2^32-1 in a header-only file and in the real one */
	memcpy(c, g.p, 0xC0);
	put32(c + 0x20, 0xFFFFFFFFu);
	put32(c + 0x24, 0xFFFFFFFFu);
	assert_int_equal(open_bytes(c, 0xC0, &a, &d), RC_CORRUPT);
	memcpy(c, g.p, g.n);
	put32(c + 0x20, 0xFFFFFFFFu);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_CORRUPT);
	/* numUsed > numEntries */
	memcpy(c, g.p, g.n);
	put32(c + 0x24, 13);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_CORRUPT);
	/* dictStart, sections, RD[0] past EOF */
	memcpy(c, g.p, g.n);
	put32(c + 0x30, (uint32_t)g.n + 4);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_CORRUPT);
	memcpy(c, g.p, g.n);
	put32(c + 0x34, 0xFFFFFF00u);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_CORRUPT);
	memcpy(c, g.p, g.n);
	put32(c + 0x44, (uint32_t)g.n + 1);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_CORRUPT);
	/* dictionary table runs past EOF */
	memcpy(c, g.p, g.n);
	put32(c + 0x30, (uint32_t)g.n - 24 * 12 + 4);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_CORRUPT);
	diag_free(&d);
	free(c);
	gen_free(&g);
}

static void test_hostile_sections(void **state)
{
	struct gen g;
	uint8_t *c;
	struct diag d;
	struct arena a;
	const size_t man = 0xC0 + 0x0C;

	(void)state;
	gen_sky(&g, 0);
	c = malloc(g.n > 0x300 ? g.n : 0x300);
	assert_non_null(c);

	/* types section outside: refuse */
	memcpy(c, g.p, g.n);
	put32(c + man, 0x7FFFFFF0u);
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_CORRUPT);
	assert_true(diag_has(&d, "types"));
	diag_free(&d);
	/* manifest offset table unreadable */
	memcpy(c, g.p, g.n);
	put32(c + 0xC0 + 8, 0xFFFFFFF0u);
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_CORRUPT);
	diag_free(&d);
	/* subreferences section outside: opens, zero subrefs */
	memcpy(c, g.p, g.n);
	put32(c + man + 8, 0x10000000u);
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
	assert_int_equal(a.n_subrefs, 0);
	assert_true(diag_has(&d, "subreferences"));
	arena_free(&a);
	diag_free(&d);
	/* external arenas / atoms outside: diag only */
	for (int k = 1; k <= 3; k += 2) {
		memcpy(c, g.p, g.n);
		put32(c + man + 4 * (size_t)k, (uint32_t)g.n);
		diag_init(&d);
		assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
		assert_int_equal(a.n_dict, 12);
		assert_true(diag_count(&d) > 0);
		arena_free(&a);
		diag_free(&d);
	}
	/* section tags wrong: diag */
	memcpy(c, g.p, g.n);
	put32(c + 0xC0 + 0x1C, 0x12345678);
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
	assert_true(diag_has(&d, "type 0x12345678"));
	arena_free(&a);
	diag_free(&d);
	/* types count 2^32-1: capped by the file */
	memcpy(c, g.p, g.n);
	put32(c + 0xC0 + 0x1C + 4, 0xFFFFFFFFu);
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
	assert_true(a.n_types <= ARENA_MAX_TYPES && a.n_types <= g.n / 4);
	assert_true(diag_count(&d) > 0);
	arena_free(&a);
	diag_free(&d);
	/* subref count 2^32-1 / records past EOF: ignored, not fatal */
	memcpy(c, g.p, g.n);
	put32(c + 0xC0 + 0x14C + 4, 0xFFFFFFFFu);
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
	assert_int_equal(a.n_subrefs, 0);
	arena_free(&a);
	diag_free(&d);
	memcpy(c, g.p, g.n);
	put32(c + 0xC0 + 0x14C + 0x14, (uint32_t)g.n - 8);
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
	assert_int_equal(a.n_subrefs, 0);
	assert_true(diag_has(&d, "subreferences"));
	arena_free(&a);
	diag_free(&d);
	free(c);
	gen_free(&g);
}

static void test_hostile_dictionary(void **state)
{
	struct gen g;
	uint8_t *c;
	struct diag d;
	struct arena a;
	struct src s;
	struct src_mem m;
	uint32_t dict, obj, off;

	(void)state;
	gen_sky(&g, 0);
	c = malloc(g.n > 0x300 ? g.n : 0x300);
	assert_non_null(c);
	dict = ld_u32be(g.p + 0x30);

	/* type index out of range, type mismatch */
	memcpy(c, g.p, g.n);
	put32(c + dict + 24 * 4 + 16, 999);
	put32(c + dict + 24 * 6 + 16, 52); /* VertexBuffer's slot, row says IndexBuffer */
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
	assert_true(diag_has(&d, "object 4 (VertexBuffer): type index 999 out of range"));
	assert_true(diag_has(&d, "object 6 (IndexBuffer): type index 52"));
	assert_int_equal(arena_row(&a, 6)->type_id, RW_T_IB); /* typeId wins */
	arena_free(&a);
	diag_free(&d);

	/* object size past EOF, object offset past EOF, base resource past its region */
	memcpy(c, g.p, g.n);
	put32(c + dict + 24 * 11 + 8, 0xFFFFFF00u);
	put32(c + dict + 24 * 9, 0xFFFFFFF0u);
	put32(c + dict + 24 * 5, 0x10000);
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
	assert_false(arena_row(&a, 11)->readable);
	assert_false(arena_row(&a, 9)->readable);
	assert_false(arena_row(&a, 5)->readable);
	assert_true(arena_row(&a, 10)->readable);
	assert_true(diag_has(&d, "object 11 (TableOfContents)"));
	assert_true(diag_has(&d, "object 9 (MeshHelper)"));
	assert_true(diag_has(&d, "past the end of resource 5"));
	src_init_mem(&s, &m, c, g.n);
	uint8_t *o;
	size_t len;
	assert_int_equal(arena_read_object(&s, &a, 11, &o, &len), RC_BOUNDS);
	assert_int_equal(arena_read_object(&s, &a, 12, &o, &len), RC_BOUNDS);
	arena_free(&a);
	diag_free(&d);

	/* misaligned object, object inside the sections, base resource type without a
	 * descriptor (0x1003F -> k 16) */
	memcpy(c, g.p, g.n);
	put32(c + dict + 24 * 1, 0x252);
	put32(c + dict + 24 * 2, 0x100);
	put32(c + dict + 24 * 3 + 20, 0x0001003F);
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
	assert_true(diag_has(&d, "not aligned"));
	assert_true(diag_has(&d, "outside the object area"));
	assert_true(diag_has(&d, "resource descriptor 16"));
	assert_false(arena_row(&a, 3)->readable);
	arena_free(&a);
	diag_free(&d);

	/* subreference past its object, to a missing object, self/cyclic references */
	uint32_t rec = dict + 24 * 12;
	memcpy(c, g.p, g.n);
	put32(c + rec + 4, 0x1000); /* material subref offset past the object */
	put32(c + rec + 8, 200);    /* object 200 of 12 */
	put32(c + rec + 16, 7);	    /* aabbs subref -> the OptiMesh that refers to it */
	put32(c + rec + 20, 0x40);
	put32(c + ld_u32be(g.p + dict + 24 * 7) + 0x28, 7); /* OptiMesh VDES ref -> itself */
	diag_init(&d);
	assert_int_equal(open_bytes(c, g.n, &a, &d), RC_OK);
	assert_false(a.subrefs[0].valid);
	assert_false(a.subrefs[1].valid);
	assert_true(a.subrefs[2].valid);
	assert_true(diag_has(&d, "subreference 0: offset 0x1000 past object 1"));
	assert_true(diag_has(&d, "subreference 1: object 200 out of range"));
	assert_int_equal(arena_resolve_ref(&a, 0x00800000, &obj, &off), RC_BOUNDS);
	assert_int_equal(arena_resolve_ref(&a, 0x00800001, &obj, &off), RC_BOUNDS);
	/* follow the cycle OptiMesh -> aabbs subref -> OptiMesh a few times: bounded */
	uint32_t v = 0x00800002, hops = 0;
	while (hops < 8 && arena_resolve_ref(&a, v, &obj, &off) == RC_OK) {
		v = ld_u32be(c + arena_row(&a, obj)->start + off);
		hops++;
	}
	assert_int_equal(hops, 8);
	assert_int_equal(
	    arena_resolve_ref(&a, ld_u32be(c + arena_row(&a, 7)->start + 0x28), &obj, &off), RC_OK);
	assert_int_equal(obj, 7);
	arena_free(&a);
	diag_free(&d);
	free(c);
	gen_free(&g);
}

/* A dictionary claiming many rows the file leaves as a hole (issue 21 item 5): kept as runs of
 * identical rows, read back row by row exactly as the flat array was; one line for a run's
 * repeats; a dictionary of distinct rows stays a flat array. */
static void test_sparse_dictionary_runs(void **state)
{
	struct arena a, plain;
	struct diag d, dp;
	uint64_t size = 0;
	uint8_t *f;
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(gen_psg_sky(0, &b, NULL), RC_OK);
	diag_init(&dp);
	assert_int_equal(open_bytes(b.data, b.len, &plain, &dp), RC_OK);
	assert_null(plain.run_first); /* distinct rows: flat */
	assert_int_equal(plain.n_runs, plain.n_dict);
	assert_int_equal(gen_psg_sparse_rows(&b, 100000, &size), RC_OK);
	f = calloc(1, (size_t)size);
	assert_non_null(f);
	memcpy(f, b.data, b.len);
	diag_init(&d);
	assert_int_equal(open_bytes(f, (size_t)size, &a, &d), RC_OK);
	assert_int_equal(a.n_dict, 100000);
	assert_non_null(a.run_first);
	assert_true(a.n_runs <= plain.n_dict + 1);
	assert_true(arena_heap_bytes(&a) < 8192);
	for (uint32_t i = 0; i < plain.n_dict; i++) {
		const struct arena_dict_entry *x = arena_row(&a, i), *y = arena_row(&plain, i);

		assert_int_equal(x->type_id, y->type_id);
		assert_int_equal(x->size, y->size);
		assert_int_equal(x->start, y->start);
		assert_int_equal(x->readable, y->readable);
	}
	for (uint32_t i = plain.n_dict; i < a.n_dict; i += 997) {
		assert_int_equal(arena_row(&a, i)->type_id, 0);
		assert_int_equal(arena_row(&a, i)->size, 0);
	}
	assert_int_equal(arena_row(&a, a.n_dict - 1)->type_id, 0);
	uint64_t covered = 0;
	for (uint32_t k = 0; k < a.n_runs; k++)
		covered += arena_run_rows(&a, k);
	assert_int_equal(covered, a.n_dict);
	assert_int_equal(arena_run_rows(&a, a.n_runs - 1), a.n_dict - plain.n_dict);
	assert_true(diag_has(&d, "more rows identical to object"));
	assert_true(diag_count(&d) < 64); /* not a line per claimed row */
	assert_int_equal(arena_find_type(&a, RW_T_NULL), plain.n_dict);
	arena_free(&a);
	arena_free(&plain);
	diag_free(&d);
	diag_free(&dp);
	free(f);
	buf_free(&b);
}

static void test_random_mutations(void **state)
{
	struct gen g;
	struct prng r;
	uint8_t *c;

	(void)state;
	gen_sky(&g, 0);
	c = malloc(g.n > 0x300 ? g.n : 0x300);
	assert_non_null(c);
	prng_seed(&r, 0xA7E4A);
	for (int it = 0; it < 3000; it++) {
		struct diag d;
		uint32_t dict = ld_u32be(g.p + 0x30);
		size_t len = g.n;

		memcpy(c, g.p, g.n);
		for (int k = 0; k < 1 + (int)prng_below(&r, 4); k++) {
			uint32_t where;

			switch (prng_below(&r, 3)) {
			case 0: /* header + sections */
				where = prng_below(&r, 0x234);
				break;
			case 1: /* dictionary and subrefs */
				where = dict + prng_below(&r, 24 * 12 + 32);
				break;
			default:
				where = prng_below(&r, (uint32_t)g.n);
				break;
			}
			if (prng_below(&r, 2))
				c[where] = (uint8_t)prng_next(&r);
			else if (where + 4 <= g.n)
				put32(c + where,
				      prng_below(&r, 2) ? (uint32_t)prng_next(&r) : 0xFFFFFFFFu);
		}
		if (prng_below(&r, 4) == 0)
			len = prng_below(&r, (uint32_t)g.n);
		diag_init(&d);
		open_any(c, len, &d);
		diag_free(&d);
	}
	free(c);
	gen_free(&g);
}

static void test_resolve_ref(void **state)
{
	struct gen g;
	struct arena a;
	struct diag d;
	uint32_t obj, off;

	(void)state;
	gen_sky(&g, 0);
	diag_init(&d);
	assert_int_equal(open_bytes(g.p, g.n, &a, &d), RC_OK);
	assert_int_equal(arena_resolve_ref(&a, 0, &obj, &off), RC_NOENT);
	assert_int_equal(arena_resolve_ref(&a, 0x00400000, &obj, &off), RC_NOENT);
	assert_int_equal(arena_resolve_ref(&a, 5, &obj, &off), RC_OK);
	assert_int_equal(obj, 5);
	assert_int_equal(off, 0);
	assert_int_equal(arena_resolve_ref(&a, 11, &obj, &off), RC_OK);
	assert_int_equal(arena_resolve_ref(&a, 12, &obj, &off), RC_BOUNDS);
	assert_int_equal(arena_resolve_ref(&a, 0x003FFFFF, &obj, &off), RC_BOUNDS);
	assert_int_equal(arena_resolve_ref(&a, 0x00800000, &obj, &off), RC_OK);
	assert_int_equal(obj, 1);
	assert_int_equal(off, 0x14);
	assert_int_equal(arena_resolve_ref(&a, 0x00800003, &obj, &off), RC_OK);
	assert_int_equal(obj, 2);
	assert_int_equal(off, 0x20);
	assert_int_equal(arena_resolve_ref(&a, 0x00800004, &obj, &off), RC_BOUNDS);
	assert_int_equal(arena_resolve_ref(&a, 0x00BFFFFF, &obj, &off), RC_BOUNDS);
	assert_int_equal(arena_resolve_ref(&a, 0x00C00000, &obj, &off), RC_UNSUPPORTED);
	assert_int_equal(arena_resolve_ref(&a, 0xFFFFFFFF, &obj, &off), RC_UNSUPPORTED);
	assert_int_equal(arena_find_type(&a, RW_T_TOC), 11);
	assert_int_equal(arena_find_type(&a, 0x12345678), UINT32_MAX);
	arena_free(&a);
	diag_free(&d);
	gen_free(&g);
}

/* One rule for every reference field: resolve first, read 0 as null only when row 0 cannot be
 * what the field points at. */
static void test_ref_to(void **state)
{
	struct buf out;
	struct arena a;
	struct diag d;
	uint8_t *p;
	size_t n;
	uint32_t obj, off;
	char b[16];

	(void)state;
	buf_init(&out);
	assert_int_equal(gen_psg_sky_order(PSGB_ORDER_BASERES_FIRST, 0, &out, NULL), RC_OK);
	p = buf_steal(&out, &n);
	diag_init(&d);
	assert_int_equal(open_bytes(p, n, &a, &d), RC_OK);
	assert_int_equal(diag_count(&d), 0);
	assert_int_equal(arena_row(&a, 0)->type_id, RW_T_PS3_GPU);
	/* row 0 is a BaseResource: a field that may name one reads 0 as row 0 */
	assert_int_equal(arena_ref_to(&a, 0, ARENA_WANT_BASERES, &obj, &off), RC_OK);
	assert_int_equal(obj, 0);
	assert_int_equal(off, 0);
	/* ... while a material field reads it as null, and so does a field of unknown kind */
	assert_int_equal(arena_ref_to(&a, 0, RW_T_RENDERMATERIAL, &obj, &off), RC_NOENT);
	assert_int_equal(arena_ref_to(&a, 0, ARENA_WANT_UNKNOWN, &obj, &off), RC_NOENT);
	/* other rows: the right type, the wrong type (still named), dangling, other kinds */
	uint32_t ivb = arena_find_type(&a, RW_T_VB);
	assert_int_equal(arena_ref_to(&a, ivb, RW_T_VB, &obj, &off), RC_OK);
	assert_int_equal(obj, ivb);
	assert_int_equal(arena_ref_to(&a, ivb, RW_T_IB, &obj, &off), RC_CORRUPT);
	assert_int_equal(obj, ivb);
	assert_int_equal(arena_ref_to(&a, ivb, ARENA_WANT_UNKNOWN, &obj, &off), RC_OK);
	assert_int_equal(arena_ref_to(&a, 1, ARENA_WANT_BASERES, &obj, &off), RC_OK);
	assert_int_equal(arena_ref_to(&a, 12, ARENA_WANT_BASERES, &obj, &off), RC_BOUNDS);
	assert_int_equal(arena_ref_to(&a, 0x00800000, RW_T_RENDERMATERIAL, &obj, &off), RC_OK);
	assert_int_equal(off, 0x14);
	assert_int_equal(arena_ref_to(&a, 0x00800000, RW_T_INSTANCE, &obj, &off), RC_CORRUPT);
	assert_int_equal(arena_ref_to(&a, 0x00400000, ARENA_WANT_BASERES, &obj, &off), RC_NOENT);
	assert_int_equal(arena_ref_to(&a, 0x00C00000, ARENA_WANT_BASERES, &obj, &off),
			 RC_UNSUPPORTED);
	/* the stored m_buffer of the VertexBuffer is 0 or 1 now, and names its vertices */
	uint32_t mb = ld_u32be(p + arena_row(&a, ivb)->start);
	assert_true(mb <= 1);
	assert_int_equal(arena_ref_to(&a, mb, ARENA_WANT_BASERES, &obj, &off), RC_OK);
	assert_int_equal(arena_row(&a, obj)->size, 230 * 16);
	assert_true(arena_type_fits(0x00010031, ARENA_WANT_BASERES));
	assert_false(arena_type_fits(RW_T_VERSION, ARENA_WANT_BASERES));
	assert_string_equal(arena_want_name(ARENA_WANT_BASERES, b), "BaseResource");
	assert_string_equal(arena_want_name(RW_T_VB, b), "VertexBuffer");
	arena_free(&a);
	/* an empty dictionary has no row 0 */
	memset(&a, 0, sizeof a);
	assert_int_equal(arena_ref_to(&a, 0, ARENA_WANT_BASERES, &obj, &off), RC_NOENT);
	diag_free(&d);
	free(p);
}

/* Any dictionary order: base resources first, or rows given one by one. */
static void test_builder_orders(void **state)
{
	static const uint8_t blob[32];
	struct buf out;
	struct arena a;
	struct diag d;
	uint8_t *p;
	size_t n;

	(void)state;
	for (int k = 0; k < 3; k++) {
		struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, 1);
		uint32_t ver = psgo_version(b, PSGO_NEW, true);
		uint32_t br = psgb_add_base_resource(b, 0x10, blob, sizeof blob);
		uint32_t vb = psgo_vertex_buffer(b, PSGO_NEW, br, sizeof blob);
		const uint32_t rows[3] = {vb, br, ver};

		(void)ver;
		if (k == 0)
			psgb_set_order(b, PSGB_ORDER_BASERES_FIRST);
		else
			psgb_set_rows(b, rows, 3);
		buf_init(&out);
		if (k == 2) { /* not a permutation */
			const uint32_t bad[3] = {vb, vb, ver};

			psgb_set_rows(b, bad, 3);
			assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_INVAL);
			buf_free(&out);
			continue;
		}
		assert_int_equal(psgb_finish(b, k ? 0x77 : 0, &out, NULL), RC_OK);
		p = buf_steal(&out, &n);
		diag_init(&d);
		assert_int_equal(open_bytes(p, n, &a, &d), RC_OK);
		assert_int_equal(diag_count(&d), 0);
		if (k == 0) { /* [BaseResource, Version, VertexBuffer]: m_buffer stored as 0 */
			assert_int_equal(arena_row(&a, 0)->type_id, RW_T_PS3_GPU);
			assert_int_equal(arena_row(&a, 1)->type_id, RW_T_VERSION);
			assert_int_equal(ld_u32be(p + arena_row(&a, 2)->start), 0);
		} else { /* [VertexBuffer, BaseResource, Version]: m_buffer stored as 1 */
			assert_int_equal(arena_row(&a, 0)->type_id, RW_T_VB);
			assert_int_equal(arena_row(&a, 1)->type_id, RW_T_PS3_GPU);
			assert_int_equal(ld_u32be(p + arena_row(&a, 0)->start), 1);
		}
		arena_free(&a);
		diag_free(&d);
		free(p);
	}
}

static void test_type_names(void **state)
{
	static const struct {
		uint32_t id;
		const char *name;
	} want[] = {
	    {0x00EB0008, "VersionData"},
	    {0x00EB000B, "TableOfContents"},
	    {0x00EB0005, "RenderMaterialData"},
	    {0x00EB000D, "InstanceData"},
	    {0x00EB0023, "RenderOptiMeshData"},
	    {0x00EB0001, "RenderModelData"},
	    {0x000200E9, "VertexDescriptor"},
	    {0x000200EA, "VertexBuffer"},
	    {0x000200EB, "IndexBuffer"},
	    {0x00020081, "MeshHelper"},
	    {0x000200E8, "Texture"},
	    {0x00010030, "BaseResource"},
	    {0x00010034, "BaseResource"},
	    {0x0001003F, "BaseResource"},
	    {0x00040007, "AssemblyDefinition"},
	    {0x00070002, "Skeleton"},
	    {0x00080006, "ClusteredMesh"},
	    {0x00EC0010, "ArenaDictionary"},
	    {0x00EB0069, "InstanceSubref"},
	    {0x00000000, "Null"},
	};
	char buf[16];

	(void)state;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		assert_non_null(rw_type_name(want[i].id));
		assert_string_equal(rw_type_name(want[i].id), want[i].name);
	}
	assert_null(rw_type_name(0x12345678));
	assert_null(rw_type_name(0x00010040));
	assert_string_equal(rw_type_label(0x12345678, buf), "Type_0x12345678");
	assert_string_equal(rw_type_label(0x00EB0001, buf), "RenderModelData");
	static const uint32_t blocks[] = {0x0000, 0x0001, 0x0002, 0x0004,
					  0x0007, 0x0008, 0x00EB, 0x00EC};
	unsigned named = 0;
	for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
		for (uint32_t lo = 0; lo < 0x200; lo++) {
			const char *n = rw_type_name(blocks[b] << 16 | lo);

			if (!n)
				continue;
			named++;
			assert_true(strlen(n) > 0 && strlen(n) < 40);
			for (const char *p = n; *p; p++)
				assert_true((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
					    (*p >= '0' && *p <= '9'));
		}
	}
	assert_true(named > 150);
	assert_true(rw_is_base_resource(0x00010034));
	assert_false(rw_is_base_resource(0x00010040));
	assert_int_equal(rw_hash32("Texture"), 0xAC462E4Au);
	assert_int_equal(rw_hash32(""), 0x811C9DC5u);
}

static void test_sized(void **state)
{
	const uint64_t target = 1u << 20;
	struct psg_gen_record rec;
	struct buf out, cnt;
	struct arena a;
	struct diag d;
	uint8_t *p;
	size_t n;

	(void)state;
	buf_init(&out);
	assert_int_equal(gen_psg_sized(target, 42, &out, &rec), RC_OK);
	p = buf_steal(&out, &n);
	assert_non_null(p);
	assert_true(n > target * 3 / 4 && n < target * 5 / 4);
	diag_init(&d);
	assert_int_equal(open_bytes(p, n, &a, &d), RC_OK);
	for (size_t i = 0; i < d.n && i < 5; i++)
		print_message("diag: %s\n", d.msg[i]);
	assert_int_equal(diag_count(&d), 0);
	assert_true(a.n_dict >= 300);
	check_record(p, n, &a, &rec);
	assert_true(a.h.rd[5].size > n / 2);
	/* every OptiMesh reference resolves to the right type */
	for (uint32_t i = 0; i < a.n_dict; i++) {
		const uint8_t *om;

		if (arena_row(&a, i)->type_id != RW_T_OPTIMESH)
			continue;
		om = p + arena_row(&a, i)->start;
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x28), NULL), RW_T_VDES);
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x30), NULL), RW_T_IB);
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x34), NULL), RW_T_VB);
		assert_int_equal(ref_type(&a, ld_u32be(om + 0x40), NULL), RW_T_RENDERMODEL);
	}
	/* counting mode gives the same size; same seed gives the same bytes */
	buf_init_count(&cnt);
	assert_int_equal(gen_psg_sized(target, 42, &cnt, NULL), RC_OK);
	assert_int_equal(cnt.len, n);
	struct buf again;
	buf_init(&again);
	assert_int_equal(gen_psg_sized(target, 42, &again, NULL), RC_OK);
	assert_int_equal(again.len, n);
	assert_memory_equal(again.data, p, n);
	buf_free(&again);
	assert_int_equal(gen_psg_sized(10, 1, &cnt, NULL), RC_INVAL);
	arena_free(&a);
	diag_free(&d);
	psg_gen_record_free(&rec);
	free(p);
}

static void test_builder_misuse(void **state)
{
	struct psg_builder *b;
	struct buf out;
	uint8_t x[8] = {0};

	(void)state;
	buf_init(&out);
	b = psgb_new(PSGB_REG_MODEL64, 1);
	psgb_reserve(b); /* never filled */
	assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_INVAL);
	b = psgb_new(PSGB_REG_TEXTURE10, 1);
	psgb_add(b, RW_T_OPTIMESH, 16, x, sizeof x); /* not in the 10-type registry */
	assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_INVAL);
	b = psgb_new(PSGB_REG_MODEL64, 1);
	psgb_ref(b, psgb_add(b, RW_T_VERSION, 16, x, sizeof x), 6); /* field runs past the end */
	assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_INVAL);
	b = psgb_new(PSGB_REG_MODEL64, 1);
	psgb_add(b, RW_T_VERSION, 16, x, sizeof x);
	psgb_add_subref(b, 3, 0);
	assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_INVAL);
	assert_int_equal(out.len, 0);
	buf_free(&out);
}

/* The shared encoders for skinned/multi-mesh models: N islands, long remap, 2 bones. */
static void test_objects_multi(void **state)
{
	static const char *const names[2] = {"HIPS", "SPINE"};
	static const uint16_t remap[5] = {0, 1, 1, 0, 1};
	const float ibp[2][16] = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 2, 3, 1},
				  {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 4, 5, 6, 1}};
	struct psgo_island isl[3] = {{0, 3, 5, 0}, {3, 3, 5, 0}, {6, 3, 5, 0}};
	struct psgo_aabb boxes[3] = {{{0}, {0}}};
	float areas[3][4] = {{1, 2, 3, 0}, {4, 5, 6, 0}, {7, 8, 9, 0}};
	struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, 9);
	struct psgo_mesh_ref mr[2];
	struct psgo_model_layout ml;
	struct psg_gen_record rec;
	struct buf out;
	struct arena a;
	struct diag d;
	uint8_t vb[48] = {0}, ib[18] = {0};
	uint32_t ver, mdl, om[2], brv, bri, vbo, ibo, vd, mh;

	(void)state;
	ver = psgo_version(b, PSGO_NEW, true);
	brv = psgb_add_base_resource(b, 0x10, vb, sizeof vb);
	vbo = psgo_vertex_buffer(b, PSGO_NEW, brv, sizeof vb);
	bri = psgb_add_base_resource(b, 0x10, ib, sizeof ib);
	ibo = psgo_index_buffer(b, PSGO_NEW, bri, 9, 2);
	static const struct psgo_vdes_elem el[4] = {
	    {PSGO_VT_F, 3, 0, PSGO_ET_XYZ},
	    {PSGO_VT_UB, 4, 12, PSGO_ET_WEIGHTS},
	    {PSGO_VT_UB256, 4, 16, PSGO_ET_INDICES},
	    {PSGO_VT_CMP, 1, 20, PSGO_ET_NORMAL},
	};
	vd = psgo_vdes(b, PSGO_NEW, el, 4, 24);
	mh = psgo_mesh_helper(b, PSGO_NEW, &ibo, 1, &vbo, 1);
	om[0] = psgb_reserve(b);
	om[1] = psgb_reserve(b);
	mdl = psgb_reserve(b);
	mr[0] = (struct psgo_mesh_ref){om[0], 0};
	mr[1] = (struct psgo_mesh_ref){om[1], 0};
	const struct psgo_model model = {
	    .n_bones = 2,
	    .ibp = ibp,
	    .names = names,
	    .meshes = mr,
	    .n_meshes = 2,
	    .island_aabbs = boxes,
	    .island_areas = (const float(*)[4])areas,
	    .n_islands = 3,
	};
	psgo_model_layout(&model, &ml);
	for (int k = 0; k < 2; k++) {
		const struct psgo_optimesh m = {
		    .vdes = vd,
		    .mesh_helper = mh,
		    .ib = ibo,
		    .vb = vbo,
		    .island_areas = psgb_add_subref(b, mdl, ml.areas + 16 * (uint32_t)k),
		    .island_aabbs = psgb_add_subref(b, mdl, ml.aabbs + 32 * (uint32_t)k),
		    .islands = isl + k,
		    .n_islands = k ? 2 : 1,
		    .remap = remap,
		    .n_remap = k ? 5 : 1,
		};
		psgo_optimesh(b, om[k], &m);
	}
	psgo_model(b, mdl, &model);
	buf_init(&out);
	assert_int_equal(psgb_finish(b, 99, &out, &rec), RC_OK);
	diag_init(&d);
	assert_int_equal(open_bytes(out.data, out.len, &a, &d), RC_OK);
	assert_int_equal(diag_count(&d), 0);
	check_record(out.data, out.len, &a, &rec);
	(void)ver;

	uint32_t imd = arena_find_type(&a, RW_T_RENDERMODEL);
	const uint8_t *md = out.data + arena_row(&a, imd)->start;
	assert_int_equal(arena_row(&a, imd)->size, ml.size);
	assert_int_equal(ld_u16be(md + 0x34), 2);
	assert_int_equal(ld_u16be(md + 0x32), 2);
	assert_int_equal(ld_u16be(md + 0x36), 3);
	assert_int_equal(ld_u32be(md + 0x38), ml.aabbs);
	assert_int_equal(ml.aabbs % 16, 0);
	assert_float_equal(f32_from_bits(ld_u32be(md + 0x40 + 64 + 48 + 4)), 5, 0);
	assert_string_equal((const char *)md + ld_u32be(md + ml.name_table + 4), "SPINE");
	assert_float_equal(f32_from_bits(ld_u32be(md + ml.areas + 16 * 2 + 8)), 9, 0);
	for (int k = 0; k < 2; k++) {
		uint32_t mesh = ld_u32be(md + ml.mesh_table + 8 * (uint32_t)k), obj, off;
		const uint8_t *o;

		assert_int_equal(ref_type(&a, mesh, NULL), RW_T_OPTIMESH);
		o = out.data + arena_row(&a, mesh)->start;
		assert_int_equal(arena_row(&a, mesh)->size,
				 psgo_optimesh_size(k ? 2 : 1, k ? 5 : 1));
		assert_int_equal(ld_u32be(o + 0x38), k ? 2 : 1);
		assert_int_equal(ld_u32be(o + 0x48), k ? 5 : 1);
		assert_int_equal(ld_u32be(o + 0x4C), 0x60 + 12 * ld_u32be(o + 0x38));
		assert_int_equal(ld_u16be(o + ld_u32be(o + 0x4C) + 2 * (k ? 4 : 0)), k ? 1 : 0);
		assert_int_equal(arena_resolve_ref(&a, ld_u32be(o + 0x3C), &obj, &off), RC_OK);
		assert_int_equal(obj, imd);
		assert_int_equal(off, ml.areas + 16 * (uint32_t)k);
		assert_int_equal(ref_type(&a, ld_u32be(o + 0x28), NULL), RW_T_VDES);
	}
	uint32_t ivd = arena_find_type(&a, RW_T_VDES);
	const uint8_t *v = out.data + arena_row(&a, ivd)->start;
	assert_int_equal(arena_row(&a, ivd)->size, 16 + 8 * 4 + 8);
	assert_int_equal(ld_u32be(v + 4), 1u << 0 | 1u << 1 | 1u << 7 | 1u << 2);
	assert_int_equal(ld_u16be(v + 0x0C), 0xF);
	arena_free(&a);
	diag_free(&d);
	psg_gen_record_free(&rec);
	buf_free(&out);
}

/* Resource descriptor names come from each platform's row; unnamed ones are "RD<k>". */
static void test_rd_names(void **state)
{
	(void)state;
	assert_string_equal(arena_rd_name(RW_PS3, 0), "MAINMEMORY");
	assert_string_equal(arena_rd_name(RW_PS3, 5), "GRAPHICS_LOCAL");
	assert_string_equal(arena_rd_name(RW_XB2, 2), "PHYSICAL");
	assert_string_equal(arena_rd_name(RW_XB2, 5), "RD5");
	assert_string_equal(arena_rd_name(RW_REV, 0), "MAINMEMORY");
	assert_string_equal(arena_rd_name(RW_W32, 3), "RD3");
	assert_string_equal(arena_rd_name(RW_PS3, RW_MAX_RD), "RD?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sky_invariants),
	    cmocka_unit_test(test_sky_shuffled),
	    cmocka_unit_test(test_base_resource_region),
	    cmocka_unit_test(test_texture_registry),
	    cmocka_unit_test(test_platform_variants),
	    cmocka_unit_test(test_truncation),
	    cmocka_unit_test(test_hostile_header),
	    cmocka_unit_test(test_hostile_sections),
	    cmocka_unit_test(test_hostile_dictionary),
	    cmocka_unit_test(test_sparse_dictionary_runs),
	    cmocka_unit_test(test_random_mutations),
	    cmocka_unit_test(test_resolve_ref),
	    cmocka_unit_test(test_ref_to),
	    cmocka_unit_test(test_builder_orders),
	    cmocka_unit_test(test_type_names),
	    cmocka_unit_test(test_sized),
	    cmocka_unit_test(test_builder_misuse),
	    cmocka_unit_test(test_objects_multi),
	    cmocka_unit_test(test_rd_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
