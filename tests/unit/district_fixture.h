/*
 * A small generated district (docs/worlds.md) for the district view's tests, until psgfs-gen
 * district writes complete ones: the five files of Pres (a Global and two tiles), Sim (two
 * tiles, no Global record, as PACK writes it) and the empty Tex stub, collections made by
 * gen_stream (raw arenas), manifests by the stream_manifest writers, with the packer's per-kind
 * +0x1C words and one stamp per kind. Broken variants trip one lint rule each. Header-only:
 * tests/unit/test_district.c and tests/integration/mkdistrict.c include it.
 */
#ifndef PSGFS_DISTRICT_FIXTURE_H
#define PSGFS_DISTRICT_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/buf.h"
#include "psgfs/formats/stream_manifest.h"
#include "psgfs/formats/world_objects.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_stream.h"

enum df_broken {
	DF_NONE = 0,
	DF_NO_FILE = 1 << 0,	/* cPres_150_50_high.psf absent */
	DF_ATOC_EXTRA = 1 << 1, /* the Pres ATOC lists an asset no collection holds */
	DF_NO_CELL = 1 << 2,	/* the Pres CSPA lacks the cell of cPres_150_50_high */
	DF_NO_STUB = 1 << 3,	/* the Tex minimap is absent */
	DF_STAMP = 1 << 4,	/* one Sim collection carries another stamp */
	DF_W1C = 1 << 5,	/* a Pres collection carries Sim's +0x1C word */
	DF_CYCLE = 1 << 6,	/* the two Sim tiles are each other's parent */
	DF_NAN = 1 << 7,	/* a Pres hull bound is NaN */
	DF_CMAP_LIES = 1 << 8,	/* the Pres CMAP claims 1000 collections */
	DF_SAME_FILE = 1 << 9,	/* two Pres records (two ids) name one collection file */
};

#define DF_FILES_MAX 32
struct df_file {
	char name[96];
	struct buf b;
};
struct df_set {
	struct df_file f[DF_FILES_MAX];
	size_t n;
};

static inline struct buf *df_add(struct df_set *s, const char *name)
{
	struct df_file *f = &s->f[s->n++];

	snprintf(f->name, sizeof f->name, "%s", name);
	buf_init(&f->b);
	return &f->b;
}

static inline void df_free(struct df_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		buf_free(&s->f[i].b);
	s->n = 0;
}

static inline const struct df_file *df_find(const struct df_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].name, name))
			return &s->f[i];
	return NULL;
}

static inline void df_put_u64(struct buf *b, size_t at, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		b->data[at + (size_t)i] = (uint8_t)v;
}

static inline void df_put_u32(struct buf *b, size_t at, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		b->data[at + (size_t)i] = (uint8_t)v;
}

/* A Sim arena of world objects for the tile centred at (x, z): two props, a rail of three
 * points, four collision triangles on two surfaces. */
static inline enum rc df_world_arena(bool x360, uint32_t k, float x, float z, struct buf *out)
{
	struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, 0x5100 + k);
	struct wo_dmo v[2];
	struct wo_dmo_header h = {.type_id = WO_T_DMODATA};
	const float pts[3][3] = {{x, 1, z}, {x + 5, 1, z}, {x + 5, 2, z + 5}};
	struct wo_rail_in rail = {.guid = 0xA0 + k, .npoints = 3, .points = pts};
	struct wo_tri_in t[4];
	struct buf o[3];
	enum rc r;

	if (!b)
		return RC_NOMEM;
	if (x360)
		psgb_set_platform(b, PSGB_XB2);
	memset(v, 0, sizeof v);
	for (int i = 0; i < 2; i++) {
		const float pos[3] = {x + 10 * (float)i, 0, z - 10}, rot[4] = {0, 0, 0, 1},
			    sc[3] = {1, 1, 1};

		wo_compose(pos, rot, sc, v[i].m);
		for (int j = 0; j < 3; j++) {
			v[i].bmin[j] = pos[j] - 1;
			v[i].bmax[j] = pos[j] + 1;
		}
		v[i].bmin[3] = v[i].bmax[3] = 1;
		v[i].guid = 0x1000u + k * 2 + (unsigned)i;
		v[i].template_id = 0xD0000000ull + (unsigned)i;
		snprintf(v[i].name, sizeof v[i].name, "bench_%u_%d", k, i);
	}
	for (int i = 0; i < 4; i++) {
		float x0 = x + 2 * (float)i;

		t[i] = (struct wo_tri_in){{{x0, 0, z}, {x0 + 1, 0, z}, {x0, 0, z + 1}},
					  wo_surface_make((unsigned)i % 2, 3, 1)};
	}
	for (int i = 0; i < 3; i++)
		buf_init(&o[i]);
	r = wo_dmo_write(&h, v, 2, &o[0]);
	if (r == RC_OK)
		r = wo_spline_write(&rail, 1, &o[1]);
	if (r == RC_OK)
		r = wo_cmesh_write(t, 4, 0.001f, &o[2]);
	if (r == RC_OK) {
		psgb_add(b, WO_T_DMODATA, 16, o[0].data, o[0].len);
		psgb_add(b, WO_T_SPLINEDATA, 16, o[1].data, o[1].len);
		psgb_add(b, WO_T_CLUSTEREDMESH, 16, o[2].data, o[2].len);
		r = psgb_finish(b, 0, out, NULL);
	} else {
		psgb_free(b);
	}
	for (int i = 0; i < 3; i++)
		buf_free(&o[i]);
	return r;
}

/* Append a raw asset to an SFIL collection (0x80 framing) and its record to an ATOC body. */
static inline void df_sfil_append(struct buf *sf, struct buf *toc, bool x360, uint64_t id,
				  const struct buf *a)
{
	uint32_t stride = (uint32_t)((0x80 + a->len + 0x7F) & ~(size_t)0x7F);
	uint8_t rec[72] = {0};

	buf_u64be(sf, id);
	buf_u32be(sf, (uint32_t)a->len);
	buf_u32be(sf, 0x80);
	buf_u32be(sf, stride);
	buf_pad_to(sf, 0x80);
	buf_put(sf, a->data, a->len);
	buf_pad_to(sf, 0x80);
	for (int i = 7; i >= 0; i--)
		rec[7 - i] = (uint8_t)(id >> (8 * i));
	rec[8] = 0xAB, rec[9] = 0x32, rec[10] = 0x9A, rec[11] = 0x6A;
	rec[12] = (uint8_t)(a->len >> 24), rec[13] = (uint8_t)(a->len >> 16);
	rec[14] = (uint8_t)(a->len >> 8), rec[15] = (uint8_t)a->len;
	buf_put(toc, rec, x360 ? 64 : 72);
}

/* The Tex stream's Global: one texture arena per texture GUID the Pres models name (the sky's
 * diffuse, specular and detail), each the asset of that id, as a district's per-texture
 * arenas are; t gets an ATOC (header and records). */
static inline enum rc df_tex_collection(bool x360, struct buf *sf, struct buf *t)
{
	static const uint64_t guids[] = {0x2c7f381800171902ull, 0x2c7f381800171903ull,
					 0x2c7f381800171904ull};
	enum rc r = RC_OK;

	buf_put(sf, "SFIL", 4);
	buf_u32be(sf, 3);
	buf_u64be(sf, 0);
	buf_u32be(sf, 0x80);
	buf_u32be(sf, 3);
	buf_u32be(sf, 0);
	buf_u32be(sf, 0xFFFFFFFFu);
	buf_pad_to(sf, 0x80);
	buf_zero(t, 24);
	for (int i = 0; i < 3 && r == RC_OK; i++) {
		struct gen_tex_opts o = {.arena_id = 0x7E570000u + (uint32_t)i};
		struct buf a;

		buf_init(&a);
		r = gen_psg_textures(&o, &a, NULL, NULL);
		if (r == RC_OK)
			df_sfil_append(sf, t, x360, guids[i], &a);
		buf_free(&a);
	}
	return r;
}

/* One kind: its collections (names), the Global's index or -1, tiles' centres. */
struct df_kind {
	const char *kind;
	const char *names[3];
	unsigned n;
	int global;
	float cx[3], cz[3];
	uint32_t w1c;
	uint64_t stamp;
};

static inline enum rc df_kind_write(struct df_set *s, const char *dist, bool x360,
				    const struct df_kind *k, unsigned broken, uint64_t seed)
{
	enum sm_platform pf = x360 ? SM_X360 : SM_PS3;
	struct sm_collection cols[3];
	struct sm_cell cells[3];
	struct sm_point pts[3];
	struct sm_header h = {.version = 1, .stamp = k->stamp};
	struct buf toc;
	uint32_t n_cells = 0, n_pts = 0, toc_n = 0;
	char name[96], ext[4];
	enum rc r = RC_OK;
	uint64_t gid = sm_global_id(k->kind, dist);

	buf_init(&toc);
	memset(cols, 0, sizeof cols);
	memset(cells, 0, sizeof cells);
	memset(pts, 0, sizeof pts);
	for (unsigned i = 0; i < k->n && r == RC_OK; i++) {
		struct gen_stream_opts o = {.seed = seed + i, .x360 = x360, .assets = 2};
		struct buf sf, t;
		bool global = (int)i == k->global;
		bool tex = !strcmp(k->kind, "Tex");

		buf_init(&sf);
		buf_init(&t);
		r = tex ? df_tex_collection(x360, &sf, &t)
			: gen_stream(&o, GS_H_NONE, &sf, &t, NULL);
		if (r != RC_OK)
			break;
		df_put_u64(&sf, 8, k->stamp);
		df_put_u32(&sf, 0x1C, k->w1c);
		if ((broken & DF_STAMP) && !strcmp(k->kind, "Sim") && i == 1)
			df_put_u64(&sf, 8, k->stamp ^ 1);
		if ((broken & DF_W1C) && !strcmp(k->kind, "Pres") && i == 1)
			df_put_u32(&sf, 0x1C, 0x57000000u);
		buf_put(&toc, t.data + 24, t.len - 24);
		toc_n += tex ? 3 : 2;
		cols[i].assets = tex ? 3 : 2;
		if (!strcmp(k->kind, "Sim")) { /* a third asset: the tile's world objects */
			struct buf w;

			buf_init(&w);
			r = df_world_arena(x360, i, k->cx[i], k->cz[i], &w);
			if (r == RC_OK) {
				df_sfil_append(&sf, &toc, x360, 0x5EED000000000000ull + i, &w);
				df_put_u32(&sf, 0x14, 3);
				toc_n++;
				cols[i].assets = 3;
			}
			buf_free(&w);
			if (r != RC_OK)
				break;
		}
		snprintf(cols[i].name, sizeof cols[i].name, "%s", k->names[i]);
		cols[i].id = global ? gid : sm_collection_id(k->names[i]);
		cols[i].parent = global ? SM_GLOBAL_PARENT : gid;
		cols[i].offset = 0x80;
		cols[i].size = (uint32_t)sf.len;
		sm_ext(pf, SM_SFIL, ext);
		snprintf(name, sizeof name, "%s.%s", k->names[i], ext);
		if (!((broken & DF_NO_FILE) && !strcmp(k->names[i], "cPres_150_50_high")))
			buf_put(df_add(s, name), sf.data, sf.len);
		if (!global &&
		    !((broken & DF_NO_CELL) && !strcmp(k->names[i], "cPres_150_50_high"))) {
			struct sm_cell *c = &cells[n_cells++];

			c->id = cols[i].id;
			c->lod = SM_LOD_HIGH;
			c->hull_min[0] = k->cx[i] - 50;
			c->hull_min[1] = -10;
			c->hull_min[2] = k->cz[i] - 50;
			c->hull_max[0] = k->cx[i] + 50;
			c->hull_max[1] = 40;
			c->hull_max[2] = k->cz[i] + 50;
			c->hull_min[3] = c->hull_max[3] = 1;
			memcpy(c->geom_min, c->hull_min, sizeof c->geom_min);
			memcpy(c->geom_max, c->hull_max, sizeof c->geom_max);
			if ((broken & DF_NAN) && !strcmp(k->kind, "Pres"))
				c->hull_min[1] = NAN;
			pts[n_pts++] = (struct sm_point){cols[i].id, k->cx[i], k->cz[i], 0};
		}
		buf_free(&sf);
		buf_free(&t);
	}
	if ((broken & DF_SAME_FILE) && !strcmp(k->kind, "Pres"))
		snprintf(cols[1].name, sizeof cols[1].name, "%s", k->names[2]);
	if ((broken & DF_CYCLE) && !strcmp(k->kind, "Sim")) {
		cols[0].parent = cols[1].id;
		cols[1].parent = cols[0].id;
	}
	if ((broken & DF_ATOC_EXTRA) && !strcmp(k->kind, "Pres")) {
		uint8_t rec[72] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0};

		buf_put(&toc, rec, x360 ? 64 : 72);
		toc_n++;
	}
	if (r == RC_OK) {
		struct buf *b;

		h.count = k->n;
		sm_ext(pf, SM_CMAP, ext);
		snprintf(name, sizeof name, "%s_%s.%s", dist, k->kind, ext);
		b = df_add(s, name);
		r = sm_cmap_write(pf, &h, cols, k->n, b);
		if (r == RC_OK && (broken & DF_CMAP_LIES) && !strcmp(k->kind, "Pres"))
			df_put_u32(b, 0x10, 1000);
	}
	if (r == RC_OK) {
		sm_ext(pf, SM_CSPA, ext);
		snprintf(name, sizeof name, "%s_%s.%s", dist, k->kind, ext);
		r = sm_cspa_write(pf, &h, cells, n_cells, df_add(s, name));
	}
	if (r == RC_OK && !((broken & DF_NO_STUB) && !strcmp(k->kind, "Tex"))) {
		sm_ext(pf, SM_MMAP, ext);
		snprintf(name, sizeof name, "%s_%s.%s", dist, k->kind, ext);
		r = sm_mmap_write(pf, &h, pts, n_pts, df_add(s, name));
	}
	if (r == RC_OK) {
		struct buf *b;

		sm_ext(pf, SM_ATOC, ext);
		snprintf(name, sizeof name, "%s_%s.%s", dist, k->kind, ext);
		b = df_add(s, name);
		buf_put(b, "ATOC", 4);
		buf_u32be(b, 3);
		buf_u64be(b, k->stamp);
		buf_u32be(b, toc_n);
		buf_u32be(b, 0);
		buf_put(b, toc.data, toc.len);
	}
	buf_free(&toc);
	return r;
}

/* The district DIST_<name>: every file in s (names as the game gives them). */
static inline enum rc df_district(struct df_set *s, const char *dist, bool x360, unsigned broken)
{
	const struct df_kind kinds[] = {
	    {"Pres",
	     {"cPres_Global", "cPres_150_50_high", "cPres_50_50_high"},
	     3,
	     0,
	     {0, 150, 50},
	     {0, 50, 50},
	     0x58000000u,
	     0x5a5a0001u},
	    {"Sim",
	     {"cSim_150_50_high", "cSim_50_50_high"},
	     2,
	     -1,
	     {150, 50},
	     {50, 50},
	     0x57000000u,
	     0x5a5a0002u},
	    {"Tex", {"cTex_Global"}, 1, 0, {0}, {0}, 0xFFFFFFFFu, 0x5a5a0003u},
	};
	enum rc r = RC_OK;

	s->n = 0;
	for (size_t k = 0; k < 3 && r == RC_OK; k++)
		r = df_kind_write(s, dist, x360, &kinds[k], broken, 100 + 10 * k);
	return r;
}

#endif
