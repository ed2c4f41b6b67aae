/*
 * psgfs-gen district (gen_district.h) and the stream-set writer under it (stream_set.h): the
 * files a district holds, their manifests read back clean by psgfs's parsers, the byte rules
 * (framing, +0x1C, stamps, ids), determinism with a few pinned hashes, and each --broken
 * variant breaking exactly its rule.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/hash.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/world_objects.h"
#include "psgfs/formats/stream_manifest.h"
#include "psgfs/formats/stream_set.h"
#include "psgfs/gen/gen_district.h"
#include "psgfs/gen/gen_psg.h"

#define MAXF 256

struct files {
	char name[MAXF][96];
	struct buf b[MAXF];
	int n;
};

static enum rc put(void *ctx, const char *rel, const struct buf *b)
{
	struct files *f = ctx;

	assert_true(f->n < MAXF);
	snprintf(f->name[f->n], sizeof f->name[0], "%s", rel);
	buf_init(&f->b[f->n]);
	buf_put(&f->b[f->n], b->data, b->len);
	f->n++;
	return RC_OK;
}

static void files_free(struct files *f)
{
	for (int i = 0; i < f->n; i++)
		buf_free(&f->b[i]);
	free(f);
}

static struct files *gen(bool x360, enum gen_district_broken br)
{
	struct files *f = calloc(1, sizeof *f);
	struct gen_district_opts o = {.seed = 7, .x360 = x360, .tiles = 4, .broken = br};

	assert_non_null(f);
	assert_int_equal(gen_district(&o, &(struct gen_district_sink){put, f}), RC_OK);
	return f;
}

static const struct buf *file(const struct files *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->name[i], name))
			return &f->b[i];
	return NULL;
}

/* Parse a manifest; diag lines are counted into *lines. */
static void cmap(const struct files *f, const char *name, enum sm_platform pf, struct sm_cmap *m,
		 unsigned *lines)
{
	const struct buf *b = file(f, name);
	struct diag d;

	assert_non_null(b);
	diag_init(&d);
	assert_int_equal(sm_cmap_parse(b->data, b->len, pf, m, &d), RC_OK);
	assert_int_equal(sm_cmap_depths(m, NULL, &d), RC_OK);
	*lines = (unsigned)d.n;
	diag_free(&d);
}

static void cspa(const struct files *f, const char *name, enum sm_platform pf, struct sm_cspa *m,
		 unsigned *lines)
{
	const struct buf *b = file(f, name);
	struct diag d;

	assert_non_null(b);
	diag_init(&d);
	assert_int_equal(sm_cspa_parse(b->data, b->len, pf, m, &d), RC_OK);
	*lines = (unsigned)d.n;
	diag_free(&d);
}

/* The SFIL and its ATOC read by psgfs's archive reader without a diag line. */
static unsigned sfil_lines(const struct files *f, const char *sf, const char *toc, uint32_t *n)
{
	const struct buf *a = file(f, sf), *t = file(f, toc);
	struct src s, st;
	struct src_mem m, mt;
	struct arc arc;
	struct diag d;
	unsigned lines;

	assert_non_null(a);
	assert_non_null(t);
	src_init_mem(&s, &m, a->data, a->len);
	src_init_mem(&st, &mt, t->data, t->len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, &st, &arc, &d), RC_OK);
	*n = arc.n;
	lines = (unsigned)d.n;
	for (size_t i = 0; i < d.n; i++)
		printf("# %s: %s\n", sf, d.msg[i]);
	arc_free(&arc);
	diag_free(&d);
	return lines;
}

static void test_ps3_files(void **state)
{
	(void)state;
	struct files *f = gen(false, GD_B_NONE);
	struct sm_cmap m;
	struct sm_cspa c;
	unsigned lines;
	uint32_t n;
	const struct buf *g = file(f, "cPres_Global.psf");

	/* 3 kinds x 4 manifests, 5 Pres + 4 Sim + 1 Tex collections, worlddmo.big */
	assert_int_equal(f->n, 12 + 10 + 1);
	cmap(f, "DIST_Gen_Pres.psm", SM_PS3, &m, &lines);
	assert_int_equal(lines, 0);
	assert_int_equal(m.n, 5);
	assert_string_equal(m.v[0].name, "cPres_Global");
	assert_true(m.v[0].id == sm_global_id("Pres", "DIST_Gen"));
	assert_true(m.v[0].parent == SM_GLOBAL_PARENT);
	assert_string_equal(m.v[1].name, "cPres_150_150_high");
	assert_true(m.v[1].id == sm_collection_id("cPres_150_150_high"));
	assert_true(m.v[1].parent == m.v[0].id);
	assert_int_equal(m.v[0].offset, 0x100);
	assert_int_equal(m.v[0].size, g->len);
	assert_int_equal(m.v[0].assets, 2); /* models 0 and 5 of 9 */
	for (uint32_t i = 0; i < m.n; i++)
		assert_int_equal(m.v[i].flags, 0);
	sm_cmap_free(&m);
	cspa(f, "DIST_Gen_Pres.pss", SM_PS3, &c, &lines);
	assert_int_equal(lines, 0);
	assert_int_equal(c.n, 4); /* no cell for the Global */
	assert_true(c.v[0].id == sm_collection_id("cPres_150_150_high"));
	assert_int_equal(c.v[0].lod, SM_LOD_HIGH);
	/* the hull is the tile's square; the geometry lies inside it */
	assert_true(c.v[0].hull_min[0] == 100 && c.v[0].hull_max[0] == 200);
	assert_true(c.v[0].hull_min[2] == 100 && c.v[0].hull_max[2] == 200);
	assert_true(c.v[0].geom_min[0] >= 100 && c.v[0].geom_max[0] <= 200);
	assert_true(c.v[0].geom_min[1] <= c.v[0].geom_max[1]);
	sm_cspa_free(&c);
	/* PACK's framing and per-kind word */
	assert_int_equal(ld_u32be(g->data + 0x10), 0x100);
	assert_int_equal(ld_u32be(g->data + 0x14), 1);
	assert_int_equal(ld_u32be(g->data + 0x1C), 0x58000000u);
	assert_int_equal(ld_u32be(file(f, "cSim_50_50_high.psf")->data + 0x1C), 0x57000000u);
	assert_int_equal(ld_u32be(g->data + 0x100 + 0x0C), 0x100);
	assert_int_equal(ld_u32be(g->data + 0x100 + 0x10) % 0x100, 0);
	assert_int_equal(sfil_lines(f, "cPres_Global.psf", "DIST_Gen_Pres.pst", &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(sfil_lines(f, "cPres_50_50_high.psf", "DIST_Gen_Pres.pst", &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(sfil_lines(f, "cTex_Global.psf", "DIST_Gen_Tex.pst", &n), 0);
	assert_int_equal(n, 8);
	files_free(f);
}

/* Every file of a kind carries its stamp; kinds differ. */
static void test_stamps(void **state)
{
	(void)state;
	struct files *f = gen(false, GD_B_NONE);
	uint64_t kind[SS_KINDS] = {0};

	for (int i = 0; i < f->n; i++) {
		if (!strcmp(f->name[i], GEN_DISTRICT_DMO_BIG))
			continue;
		enum ss_kind k = strstr(f->name[i], "Pres")  ? SS_PRES
				 : strstr(f->name[i], "Sim") ? SS_SIM
							     : SS_TEX;
		uint64_t st;

		assert_true(sm_stamp_peek(f->b[i].data, f->b[i].len, SM_PS3, &st));
		if (!kind[k])
			kind[k] = st;
		assert_true(kind[k] == st);
		assert_true(st == ss_default_stamp("DIST_Gen", k));
	}
	assert_true(kind[0] != kind[1] && kind[1] != kind[2]);
	files_free(f);
}

static void test_x360_stub(void **state)
{
	(void)state;
	struct files *f = gen(true, GD_B_NONE), *g;
	struct sm_cmap m;
	unsigned lines;
	uint32_t n;

	cmap(f, "DIST_Gen_Tex.xsm", SM_X360, &m, &lines);
	assert_int_equal(m.n, 0);
	sm_cmap_free(&m);
	assert_non_null(file(f, "DIST_Gen_Tex.xst"));
	assert_non_null(file(f, "DIST_Gen_Tex.xss"));
	assert_non_null(file(f, "DIST_Gen_Tex.xmm"));
	assert_null(file(f, "cTex_Global.xsf"));
	assert_int_equal(ld_u32be(file(f, "cPres_Global.xsf")->data + 0x10), 0x80);
	/* the Global holds the models and the texture arena */
	assert_int_equal(sfil_lines(f, "cPres_Global.xsf", "DIST_Gen_Pres.xst", &n), 0);
	assert_int_equal(n, 3);
	g = gen(true, GD_B_TEX_STUB);
	assert_null(file(g, "DIST_Gen_Tex.xsm"));
	assert_int_equal(g->n, f->n - 4);
	files_free(g);
	files_free(f);
}

/* Same seed, same bytes; pinned so that an unintended change of the writer shows. */
static void test_deterministic(void **state)
{
	(void)state;
	struct files *a = gen(false, GD_B_NONE), *b = gen(false, GD_B_NONE);
	struct {
		const char *name;
		size_t len;
		uint64_t fnv;
	} pin[] = {
	    {"DIST_Gen_Pres.psm", 552, 0xb72a4836836901eeull},
	    {"DIST_Gen_Pres.pss", 344, 0xc0fed8dabec6c297ull},
	    {"DIST_Gen_Pres.pst", 672, 0xdb78dd2a80c548b2ull},
	    {"cPres_50_50_high.psf", 6400, 0xcc61bd5a1818ccceull},
	};

	assert_int_equal(a->n, b->n);
	for (int i = 0; i < a->n; i++) {
		assert_string_equal(a->name[i], b->name[i]);
		assert_int_equal(a->b[i].len, b->b[i].len);
		assert_memory_equal(a->b[i].data, b->b[i].data, a->b[i].len);
	}
	for (size_t i = 0; i < sizeof pin / sizeof pin[0]; i++) {
		const struct buf *x = file(a, pin[i].name);

		assert_non_null(x);
		printf("# %s %zu %016llx\n", pin[i].name, x->len,
		       (unsigned long long)fnv1a_64(x->data, x->len));
		assert_int_equal(x->len, pin[i].len);
		if (pin[i].fnv)
			assert_true(fnv1a_64(x->data, x->len) == pin[i].fnv);
	}
	files_free(a);
	files_free(b);
}

static void test_broken(void **state)
{
	(void)state;
	struct sm_cmap m;
	struct sm_cspa c;
	unsigned lines;
	uint32_t n;
	struct files *f;
	const struct buf *b;

	f = gen(false, GD_B_CMAP_ORPHAN); /* a record whose .psf is missing */
	cmap(f, "DIST_Gen_Pres.psm", SM_PS3, &m, &lines);
	assert_int_equal(m.n, 6);
	assert_string_equal(m.v[5].name, "cPres_99950_99950_high");
	assert_null(file(f, "cPres_99950_99950_high.psf"));
	sm_cmap_free(&m);
	files_free(f);

	f = gen(false, GD_B_PARENT_CYCLE);
	cmap(f, "DIST_Gen_Pres.psm", SM_PS3, &m, &lines);
	assert_int_equal(lines, 1); /* one cycle */
	assert_true(m.v[0].flags & SM_F_CYCLE);
	sm_cmap_free(&m);
	files_free(f);

	f = gen(false, GD_B_ATOC_MISSING); /* the ATOC holds one id more than the collections */
	b = file(f, "DIST_Gen_Pres.pst");
	assert_int_equal(ld_u32be(b->data + 16), 10);
	assert_true(ld_u64be(b->data + b->len - 72) == 0x0BADBAD00BADBAD0ull);
	files_free(f);

	f = gen(false, GD_B_SFIL_EXTRA); /* a collection asset the ATOC lacks */
	b = file(f, "DIST_Gen_Pres.pst");
	assert_int_equal(ld_u32be(b->data + 16), 8);
	assert_int_equal(b->len, 24 + 8 * 72);
	assert_int_not_equal(sfil_lines(f, "cPres_50_50_high.psf", "DIST_Gen_Pres.pst", &n) +
				 sfil_lines(f, "cPres_Global.psf", "DIST_Gen_Pres.pst", &n) +
				 sfil_lines(f, "cPres_150_50_high.psf", "DIST_Gen_Pres.pst", &n) +
				 sfil_lines(f, "cPres_50_150_high.psf", "DIST_Gen_Pres.pst", &n) +
				 sfil_lines(f, "cPres_150_150_high.psf", "DIST_Gen_Pres.pst", &n),
			     0);
	files_free(f);

	f = gen(false, GD_B_CSPA_MISSING);
	cspa(f, "DIST_Gen_Pres.pss", SM_PS3, &c, &lines);
	assert_int_equal(c.n, 3);
	sm_cspa_free(&c);
	files_free(f);

	f = gen(false, GD_B_STAMP);
	{
		uint64_t s1, s2;

		b = file(f, "DIST_Gen_Pres.pmm");
		assert_true(sm_stamp_peek(b->data, b->len, SM_PS3, &s1));
		b = file(f, "DIST_Gen_Pres.psm");
		assert_true(sm_stamp_peek(b->data, b->len, SM_PS3, &s2));
		assert_true(s1 == s2 + 1);
	}
	files_free(f);

	f = gen(false, GD_B_KIND_FIELD);
	assert_int_equal(ld_u32be(file(f, "cPres_Global.psf")->data + 0x1C), 0x57000000u);
	files_free(f);

	f = gen(false, GD_B_LYING_COUNTS);
	cmap(f, "DIST_Gen_Pres.psm", SM_PS3, &m, &lines);
	assert_int_equal(m.n, 5); /* what the file holds, not what it claims */
	assert_true(lines >= 1);
	sm_cmap_free(&m);
	cspa(f, "DIST_Gen_Pres.pss", SM_PS3, &c, &lines);
	assert_int_equal(c.n, 4);
	assert_true(lines >= 1);
	sm_cspa_free(&c);
	files_free(f);

	/* tex-guid-missing and nan-matrix change a model: its collection differs from the
	 * clean district's, and the rest stays the same */
	for (int k = 0; k < 2; k++) {
		struct files *clean = gen(false, GD_B_NONE);
		int differ = 0;

		f = gen(false, k ? GD_B_NAN_MATRIX : GD_B_TEX_GUID);
		assert_int_equal(f->n, clean->n);
		for (int i = 0; i < f->n; i++)
			differ += f->b[i].len != clean->b[i].len ||
				  memcmp(f->b[i].data, clean->b[i].data, f->b[i].len);
		assert_true(differ >= 1 && differ <= 3); /* the SFIL (and ATOC/CMAP sizes) */
		files_free(clean);
		files_free(f);
	}
}

/* The objects of tile t's Sim arena, parsed by the world-object readers. */
struct sim {
	uint32_t dmos, rails, tris, nonfinite;
	uint64_t template_id[8];
	float box[6];
};

static void sim_objects(const struct files *f, const char *coll, struct sim *out)
{
	const struct buf *b = file(f, coll);
	struct src s, sa;
	struct src_mem m, ma;
	struct arc a;
	struct arena ar;
	uint8_t *data = NULL;
	size_t len;

	memset(out, 0, sizeof *out);
	assert_non_null(b);
	src_init_mem(&s, &m, b->data, b->len);
	assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_OK);
	assert_int_equal(a.n, 1);
	/* a raw stream asset: its bytes, at 0x100 past its 0x100 header, are the arena */
	assert_true(ld_u64be(b->data + 0x100) == a.e[0].id);
	src_init_mem(&sa, &ma, b->data + 0x200, ld_u32be(b->data + 0x108));
	assert_int_equal(arena_open(&sa, &ar, NULL), RC_OK);
	for (uint32_t i = 0; i < ar.n_dict; i++) {
		uint32_t type = arena_row(&ar, i)->type_id;
		struct diag d;

		if (type != WO_T_DMODATA && type != WO_T_SPLINEDATA && type != WO_T_CLUSTEREDMESH)
			continue;
		assert_int_equal(arena_read_object(&sa, &ar, i, &data, &len), RC_OK);
		diag_init(&d);
		if (type == WO_T_DMODATA) {
			struct wo_dmos v;

			assert_int_equal(wo_dmo_parse(data, len, &v, &d), RC_OK);
			out->dmos = v.n;
			for (uint32_t k = 0; k < v.n && k < 8; k++) {
				out->template_id[k] = v.v[k].template_id;
				out->nonfinite += !!(v.v[k].flags & WO_F_NONFINITE);
			}
			wo_dmo_free(&v);
		} else if (type == WO_T_SPLINEDATA) {
			struct wo_splines v;

			assert_int_equal(wo_spline_parse(data, len, &v, &d), RC_OK);
			out->rails = v.h.nsplines;
			wo_spline_free(&v);
		} else {
			struct wo_cmesh v;

			assert_int_equal(wo_cmesh_parse(data, len, &v, &d), RC_OK);
			out->tris = v.ntris;
			for (int k = 0; k < 3; k++) {
				out->box[k] = f32_from_bits(ld_u32be(data + 4 * k));
				out->box[3 + k] = f32_from_bits(ld_u32be(data + 16 + 4 * k));
			}
			wo_cmesh_free(&v);
		}
		for (size_t k = 0; k < d.n; k++)
			printf("# %s row %u: %s\n", coll, i, d.msg[k]);
		if (type != WO_T_DMODATA || !out->nonfinite)
			assert_int_equal(d.n, 0);
		diag_free(&d);
		free(data);
		data = NULL;
	}
	arena_free(&ar);
	arc_free(&a);
}

static void test_sim_objects(void **state)
{
	(void)state;
	struct files *f = gen(false, GD_B_NONE);
	const struct buf *big = file(f, GEN_DISTRICT_DMO_BIG);
	struct src s;
	struct src_mem m;
	struct arc a;
	struct sim sim;
	struct sm_cspa c;
	unsigned lines;

	/* tile (50, 50): models 1 and 6 of 9, so 2 + 2 x 2 collision triangles */
	sim_objects(f, "cSim_50_50_high.psf", &sim);
	assert_int_equal(sim.dmos, 3);
	assert_true(sim.rails >= 1);
	assert_int_equal(sim.tris, 6);
	assert_int_equal(sim.nonfinite, 0);
	/* the CSPA's geometry box is the collision's */
	cspa(f, "DIST_Gen_Sim.pss", SM_PS3, &c, &lines);
	assert_int_equal(lines, 0);
	assert_int_equal(c.n, 4);
	assert_true(c.v[3].id == sm_collection_id("cSim_50_50_high"));
	for (int k = 0; k < 3; k++) {
		assert_true(fabsf(c.v[3].geom_min[k] - sim.box[k]) < 1e-3f);
		assert_true(fabsf(c.v[3].geom_max[k] - sim.box[3 + k]) < 1e-3f);
	}
	assert_true(c.v[3].geom_min[0] >= 0 && c.v[3].geom_max[0] <= 100);
	sm_cspa_free(&c);
	/* every template a placement names is an entry of worlddmo.big */
	assert_non_null(big);
	src_init_mem(&s, &m, big->data, big->len);
	assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_OK);
	assert_int_equal(a.n, 4);
	for (uint32_t k = 0; k < sim.dmos; k++) {
		char want[64];
		bool found = false;

		snprintf(want, sizeof want, "data/content/worlddmo/0x%016llx.psg",
			 (unsigned long long)sim.template_id[k]);
		for (uint32_t i = 0; i < a.n; i++)
			found |= !strcmp(a.paths + a.e[i].path, want);
		assert_true(found);
	}
	arc_free(&a);
	files_free(f);
	/* nan-matrix: the last tile's last placement */
	f = gen(false, GD_B_NAN_MATRIX);
	sim_objects(f, "cSim_150_150_high.psf", &sim);
	assert_int_equal(sim.nonfinite, 1);
	files_free(f);
}

static void test_refusals(void **state)
{
	(void)state;
	struct files *f = calloc(1, sizeof *f);
	struct gen_district_sink s = {put, f};

	assert_int_equal(gen_district(&(struct gen_district_opts){.name = "Gen"}, &s), RC_INVAL);
	assert_int_equal(gen_district(&(struct gen_district_opts){.broken = GD_B_TEX_STUB}, &s),
			 RC_INVAL);
	assert_int_equal(f->n, 0);
	assert_int_equal(gen_district_broken_parse("kind-field"), GD_B_KIND_FIELD);
	assert_int_equal(gen_district_broken_parse("nope"), GD_B_COUNT);
	files_free(f);
}

/* The writer's own rules. */
static void test_stream_set_rules(void **state)
{
	(void)state;
	float x, z;
	enum ss_kind k;
	char name[80];

	assert_true(ss_tile_centre("cPres_50_-150_high", &x, &z));
	assert_true(x == 50 && z == -150);
	assert_false(ss_tile_centre("cPres_Global", &x, &z));
	assert_true(ss_collection_kind("cSim_1_2_high", &k) && k == SS_SIM);
	assert_false(ss_collection_kind("cGfx_Global", &k));
	assert_false(ss_collection_kind("cPres_", &k));
	assert_int_equal(ss_collection_lod("cPres_Global"), SM_LOD_GLOBAL);
	assert_int_equal(ss_collection_lod("cPres_1_2_low"), SM_LOD_LOW);
	assert_true(ss_file_name(SM_X360, "DIST_A", SS_TEX, SM_CSPA, NULL, name, sizeof name));
	assert_string_equal(name, "DIST_A_Tex.xss");
	assert_true(
	    ss_file_name(SM_PS3, "DIST_A", SS_PRES, SM_SFIL, "cPres_Global", name, sizeof name));
	assert_string_equal(name, "cPres_Global.psf");
	{ /* a ClusteredMesh's box counts as a model's: collision bounds a Sim tile */
		struct psg_builder *pb = psgb_new(PSGB_REG_MODEL64, 1);
		uint8_t box[48] = {0};
		const float v[8] = {-1, 2, 3, 1, 4, 5, 6, 1};
		float mn[3], mx[3];
		struct buf b;

		for (int i = 0; i < 8; i++)
			for (int k = 0; k < 4; k++)
				box[4 * i + k] = (uint8_t)(f32_bits(v[i]) >> (24 - 8 * k));
		psgb_add(pb, 0x00080006u, 16, box, sizeof box);
		buf_init(&b);
		assert_int_equal(psgb_finish(pb, 0, &b, NULL), RC_OK);
		assert_true(ss_arena_bounds(b.data, b.len, mn, mx));
		assert_true(mn[0] == -1 && mn[1] == 2 && mn[2] == 3);
		assert_true(mx[0] == 4 && mx[1] == 5 && mx[2] == 6);
		box[16] = 0xFF, box[17] = 0xC0; /* max x NaN: not counted */
		buf_free(&b);
		pb = psgb_new(PSGB_REG_MODEL64, 1);
		psgb_add(pb, 0x00080006u, 16, box, sizeof box);
		buf_init(&b);
		assert_int_equal(psgb_finish(pb, 0, &b, NULL), RC_OK);
		assert_false(ss_arena_bounds(b.data, b.len, mn, mx));
		buf_free(&b);
	}
	{
		struct ss_writer w;
		struct buf b;
		static const uint8_t junk[64] = {1, 2, 3};
		struct ss_asset a = {1, junk, sizeof junk};

		buf_init(&b);
		assert_int_equal(ssw_begin(&w, SM_PS3, "DIST_A", SS_PRES, NULL), RC_OK);
		assert_int_equal(ssw_collection(&w, "cSim_Global", NULL, 0, &b), RC_INVAL);
		assert_int_equal(ssw_collection(&w, "cPres_Global", &a, 1, &b), RC_FORMAT);
		assert_int_equal(b.len, 0);
		assert_int_equal(ssw_collection(&w, "cPres_Global", NULL, 0, &b), RC_OK);
		assert_int_equal(ssw_collection(&w, "cPres_Global", NULL, 0, &b), RC_INVAL);
		ssw_free(&w);
		buf_free(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ps3_files),	     cmocka_unit_test(test_stamps),
	    cmocka_unit_test(test_x360_stub),	     cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_broken),	     cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_stream_set_rules), cmocka_unit_test(test_sim_objects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
