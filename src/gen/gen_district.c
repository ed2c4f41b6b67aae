/*
 * psgfs-gen district (gen_district.h, docs/worlds.md "Generated districts"). Every model is a
 * grid patch already in world space, built with the static model objects of the sky
 * (gen_psg_static.c's shape: 12 dictionary rows, one bone, one mesh of one island), so its
 * InstanceData matrix is the identity as in a level compiler's fused meshes. The stream files
 * come from stream_set.c, the same writer psgfs-tool pack-stream uses.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/skate_x360.h"
#include "psgfs/formats/stream_set.h"
#include "psgfs/formats/texture.h"
#include "psgfs/formats/world_objects.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_district.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_x360_textures.h"
#include "psgfs/gen/prng.h"

#define GD_TEX_GUID   0x2c7f381800171900ull /* the texture generators' GUID base */
#define GD_TEX_FIRST  0x100u		    /* PS3 district textures: GUID base + 0x100 + t */
#define GD_TILE	      100.0f
#define GD_MAX_TILES  10000u
#define GD_MAX_MODELS 1000000u
#define GD_TEMPLATES  4u		    /* DMO templates in worlddmo.big */
#define GD_TEMPLATE   0x7E3A5D1B00000100ull /* template j's id: + j */
#define GD_DMOS	      3u		    /* placements per tile */
#define GD_SIM_ASSET  0x5D2A6B1C001A0000ull /* tile t's Sim arena: + t */

static const char *const broken_names[GD_B_COUNT] = {
    "none",	    "cmap-orphan-id",	"atoc-missing",	    "sfil-extra",
    "cspa-missing", "tex-guid-missing", "tex-stub-missing", "stamp-mismatch",
    "kind-field",   "parent-cycle",	"nan-matrix",	    "lying-counts",
};

const char *gen_district_broken_name(enum gen_district_broken b)
{
	return (unsigned)b < GD_B_COUNT ? broken_names[b] : "?";
}

enum gen_district_broken gen_district_broken_parse(const char *name)
{
	for (int i = 1; i < GD_B_COUNT; i++)
		if (!strcmp(name, broken_names[i]))
			return (enum gen_district_broken)i;
	return GD_B_COUNT;
}

/* ---- one fused model ---- */

struct gd_model {
	char name[96];	  /* "Proc_Fuse_<collection>_<k>" */
	float x0, z0, y0; /* the patch's corner and height */
	float size;	  /* metres per side */
	uint32_t g;	  /* grid cells per side */
	uint64_t seed, guid, tex_guid;
	uint64_t inst_guid; /* the InstanceData's GUID (0 = guid + 4); a DMO template's id */
	bool x360, nan;
};

struct gd_geom {
	uint32_t nv, ni;
	float (*pos)[3];
	uint16_t *idx;
	uint8_t *vb, *ib;
	struct psgo_island isl;
	struct psgo_aabb box, isl_box;
	float isl_area[4];
};

static void gd_put_u32(uint8_t *p, uint32_t u)
{
	p[0] = (uint8_t)(u >> 24), p[1] = (uint8_t)(u >> 16), p[2] = (uint8_t)(u >> 8),
	p[3] = (uint8_t)u;
}

static void gd_put_f32(uint8_t *p, float f)
{
	gd_put_u32(p, f32_bits(f));
}

static void gd_geom_free(struct gd_geom *q)
{
	free(q->pos);
	free(q->idx);
	free(q->vb);
	free(q->ib);
}

/* A (g+1)^2 grid over the patch, heights a gentle bump field; F32x3 + S1x2 vertices. */
static enum rc gd_geometry(const struct gd_model *m, struct gd_geom *q)
{
	uint32_t g = m->g, s = g + 1, t = 0;
	struct prng p;
	float a, b;

	memset(q, 0, sizeof *q);
	q->nv = s * s;
	q->ni = 6 * g * g;
	q->pos = calloc(q->nv, sizeof *q->pos);
	q->idx = calloc(q->ni, sizeof *q->idx);
	q->vb = calloc(q->nv, 16);
	q->ib = calloc(q->ni, 2);
	if (!q->pos || !q->idx || !q->vb || !q->ib)
		return RC_NOMEM;
	prng_seed(&p, m->seed);
	a = prng_float(&p, 0.5f, 3.0f);
	b = prng_float(&p, 0.5f, 3.0f);
	for (uint32_t j = 0; j < s; j++)
		for (uint32_t i = 0; i < s; i++) {
			uint32_t v = j * s + i;
			float u = (float)i / (float)g, w = (float)j / (float)g;

			q->pos[v][0] = m->x0 + u * m->size;
			q->pos[v][1] = m->y0 + a * sinf(3.1f * u) * sinf(2.3f * w + b);
			q->pos[v][2] = m->z0 + w * m->size;
			psgo_vertex16(q->vb + 16 * v, q->pos[v], u, w);
		}
	for (uint32_t j = 0; j < g; j++)
		for (uint32_t i = 0; i < g; i++) {
			uint16_t c = (uint16_t)(j * s + i);
			uint16_t quad[6] = {c,
					    (uint16_t)(c + s),
					    (uint16_t)(c + 1),
					    (uint16_t)(c + 1),
					    (uint16_t)(c + s),
					    (uint16_t)(c + s + 1)};

			for (int k = 0; k < 6; k++, t++) {
				q->idx[t] = quad[k];
				q->ib[2 * t] = (uint8_t)(quad[k] >> 8);
				q->ib[2 * t + 1] = (uint8_t)quad[k];
			}
		}
	psgo_bounds((const float(*)[3])q->pos, q->nv, &q->box);
	q->isl = (struct psgo_island){0, q->ni, m->x360 ? SX360_PRIM_TRIANGLELIST : 5, 0};
	psgo_island_bounds((const float(*)[3])q->pos, q->nv, q->idx, NULL, 0, q->ni, &q->isl_box,
			   q->isl_area);
	return RC_OK;
}

static void gd_material_instance(struct psg_builder *b, const uint32_t o[12],
				 const struct gd_model *m, const struct gd_geom *q)
{
	char stream[64];

	snprintf(stream, sizeof stream, "fuse_diffuse_0x%016" PRIx64, m->tex_guid);
	const struct psgo_channel ch[2] = {
	    {.shader_input = "Name", .image_channel = 0xFFFF, .guid = m->guid + 1},
	    {.shader_input = "diffuse",
	     .image_channel = 0xFFFF,
	     .guid = m->tex_guid,
	     .stream_name = stream},
	};
	const struct psgo_material mat = {0, ch, 2};
	struct psgo_instance inst = {
	    .matrix = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
	    .bbox = q->box,
	    .guid = m->inst_guid ? m->inst_guid : m->guid + 4,
	    .guid_local = m->seed,
	    .rmodel = o[10],
	    .name = m->name,
	    .description = "",
	    .component = "",
	    .category = "fused",
	};

	if (m->nan)
		inst.matrix[5] = NAN;
	psgo_material(b, o[1], &mat, 1);
	psgo_instance(b, o[2], 0, &inst, 1);
}

/* The model arena: one mesh of one island, bone and instance named after the model. */
static enum rc gd_model_arena(const struct gd_model *m, struct buf *out)
{
	struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, rw_hash32(m->name));
	struct psgo_static1_rows rows;
	struct gd_geom q;
	enum rc r = b ? gd_geometry(m, &q) : RC_NOMEM;

	if (r != RC_OK) {
		if (b)
			gd_geom_free(&q);
		psgb_free(b);
		return r;
	}
	const uint64_t inst = m->inst_guid ? m->inst_guid : m->guid + 4;
	const struct psgo_static1 sm = {
	    .vb = q.vb,
	    .ib = q.ib,
	    .nv = q.nv,
	    .ni = q.ni,
	    .box = q.box,
	    .islands = &q.isl,
	    .island_aabbs = &q.isl_box,
	    .island_areas = (const float(*)[4])q.isl_area,
	    .n_islands = 1,
	    .bone = m->name,
	    .toc_guid = {m->guid, m->guid + 2, m->guid + 3, inst},
	    .x360 = m->x360,
	};
	psgo_static1_begin(b, &sm, &rows);
	gd_material_instance(b, rows.o, m, &q);
	psgo_static1_finish(b, &sm, &rows);
	r = psgb_finish(b, 0, out, NULL);
	gd_geom_free(&q);
	return r;
}

/* ---- the district plan ---- */

struct gd {
	const struct gen_district_opts *o;
	const struct gen_district_sink *s;
	const char *dist;
	enum sm_platform pf;
	uint32_t tiles, side, models, textures, g;
	struct ss_fields f;
};

static uint32_t gd_isqrt_up(uint32_t n)
{
	uint32_t s = 1;

	while (s * s < n)
		s++;
	return s;
}

/* Grid cells per side for about `size` bytes over `models` models: a model is about
 * 16 (g+1)^2 + 12 g^2 bytes of buffers plus ~2 KiB of objects; u16 indices cap g at 254. */
static uint32_t gd_grid(uint64_t size, uint32_t models)
{
	uint64_t per = size / models;
	uint32_t g = 4;

	if (!size)
		return 4;
	while (g < 254 && 28ull * (g + 1) * (g + 1) + 2048 < per)
		g++;
	return g;
}

static void gd_tile_name(const struct gd *d, enum ss_kind k, uint32_t t, char *out, size_t n)
{
	unsigned cx = 50 + 100 * (t % d->side), cz = 50 + 100 * (t / d->side);

	snprintf(out, n, "c%s_%u_%u_high", ss_kind_name(k), cx, cz);
}

static enum rc gd_put(struct gd *d, enum ss_kind k, enum sm_file f, const char *coll,
		      const struct buf *b)
{
	char name[SM_NAME_LEN + 8];

	if (b->oom)
		return RC_NOMEM;
	if (!ss_file_name(d->pf, d->dist, k, f, coll, name, sizeof name))
		return RC_INVAL;
	return d->s->put(d->s->ctx, name, b);
}

/* Model k's patch: collection 0 (the Global) holds ground patches over the whole district,
 * tile t's models sit inside it, some raised like roofs. */
static void gd_model_plan(const struct gd *d, uint32_t k, uint32_t coll, const char *cname,
			  struct gd_model *m)
{
	struct prng p;
	float span = GD_TILE * (float)d->side;

	prng_seed(&p, d->o->seed * 0x9E3779B97F4A7C15ull + k + 1);
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "Proc_Fuse_%s_%u", cname + 1, k);
	m->g = d->g;
	m->seed = prng_next(&p) | 1;
	m->guid = 0x5D2A6B1C00180000ull + 8ull * k;
	m->x360 = d->o->x360;
	m->tex_guid = d->o->x360 ? GD_TEX_GUID + k % d->textures
				 : GD_TEX_GUID + GD_TEX_FIRST + k % d->textures;
	if (coll == 0) {
		m->size = span;
		m->x0 = m->z0 = 0;
		m->y0 = -0.5f * (float)(k % 4);
	} else {
		uint32_t t = coll - 1;

		m->size = prng_float(&p, 10.0f, 40.0f);
		m->x0 = GD_TILE * (float)(t % d->side) + prng_float(&p, 0, GD_TILE - m->size);
		m->z0 = GD_TILE * (float)(t / d->side) + prng_float(&p, 0, GD_TILE - m->size);
		m->y0 = prng_below(&p, 3) ? 0.25f : prng_float(&p, 4.0f, 30.0f);
	}
	if (d->o->broken == GD_B_TEX_GUID && k == d->models - 1)
		m->tex_guid = GD_TEX_GUID + 0xBAD0000ull; /* no texture has it */
	if (d->o->broken == GD_B_NAN_MATRIX && k == d->models - 1)
		m->nan = true;
}

/* The texture arena(s) of the district. PS3: texture t alone, GUID base + 0x100 + t (the
 * Tex stream's asset id). Xbox 360: every texture in one arena, GUID base + t. */
static enum rc gd_textures(const struct gd *d, uint32_t t, struct buf *out)
{
	if (d->o->x360) {
		struct gen_x360_spec *sp = calloc(d->textures, sizeof *sp);
		enum rc r;

		if (!sp)
			return RC_NOMEM;
		for (uint32_t i = 0; i < d->textures; i++)
			sp[i] = (struct gen_x360_spec){X360TEX_FMT_DXT1, 64, 64, 0, false};
		r = gen_x360_textures(&(struct gen_x360_opts){.specs = sp, .n_specs = d->textures},
				      out, NULL, NULL);
		free(sp);
		return r;
	}
	const struct gen_tex_spec sp = {GCM_TEX_DXT1, 64, 64, 0, false, 0, false, 0};

	return gen_psg_textures(&(struct gen_tex_opts){.specs = &sp,
						       .n_specs = 1,
						       .arena_id = 0x7E570000u + t,
						       .guid_first = GD_TEX_FIRST + t},
				out, NULL, NULL);
}

struct gd_coll {
	struct ss_asset *a;
	struct buf *b;
	uint32_t n, cap;
};

static void gd_coll_free(struct gd_coll *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		buf_free(&c->b[i]);
	free(c->a);
	free(c->b);
	memset(c, 0, sizeof *c);
}

/* A fresh buffer for the next asset of c, id id. */
static struct buf *gd_coll_add(struct gd_coll *c, uint64_t id)
{
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 8;
		struct ss_asset *a = reallocarray(c->a, cap, sizeof *a);
		struct buf *b;

		if (a)
			c->a = a;
		b = a ? reallocarray(c->b, cap, sizeof *b) : NULL;
		if (!b)
			return NULL;
		c->b = b;
		c->cap = cap;
	}
	buf_init(&c->b[c->n]);
	c->a[c->n].id = id;
	return &c->b[c->n++];
}

/* Write collection c of kind k: its SFIL to the sink, its rows to w. */
static enum rc gd_emit(struct gd *d, struct ss_writer *w, const char *name, struct gd_coll *c)
{
	struct buf sf;
	enum rc r = RC_OK;

	for (uint32_t i = 0; i < c->n; i++) {
		if (c->b[i].oom)
			return RC_NOMEM;
		c->a[i].data = c->b[i].data;
		c->a[i].len = c->b[i].len;
	}
	buf_init(&sf);
	r = ssw_collection(w, name, c->a, c->n, &sf);
	if (r == RC_OK && d->o->broken == GD_B_KIND_FIELD && w->kind == SS_PRES &&
	    ss_collection_lod(name) == SM_LOD_GLOBAL)
		buf_set_u32be(&sf, 0x1C, ss_kind_field(SS_SIM));
	if (r == RC_OK && d->o->broken == GD_B_LYING_COUNTS && w->kind == SS_PRES &&
	    ss_collection_lod(name) == SM_LOD_GLOBAL)
		buf_set_u32be(&sf, 0x14, 100000);
	if (r == RC_OK)
		r = gd_put(d, w->kind, SM_SFIL, name, &sf);
	buf_free(&sf);
	return r;
}

/* ---- broken manifests: edits after the writer (each trips one lint rule) ---- */

static enum rc gd_cmap_edit(struct gd *d, struct buf *b)
{
	struct sm_cmap m;
	struct sm_collection *v;
	struct buf nb;
	enum rc r = sm_cmap_parse(b->data, b->len, d->pf, &m, NULL);

	if (r != RC_OK)
		return r;
	v = calloc(m.n + 1, sizeof *v);
	if (!v) {
		sm_cmap_free(&m);
		return RC_NOMEM;
	}
	memcpy(v, m.v, m.n * sizeof *v);
	if (d->o->broken == GD_B_CMAP_ORPHAN) { /* a record whose file does not exist */
		v[m.n] = v[m.n - 1];
		snprintf(v[m.n].name, sizeof v[m.n].name, "cPres_99950_99950_high");
		v[m.n].id = sm_collection_id(v[m.n].name);
		v[m.n].assets = 0;
		m.n++;
	} else if (m.n >= 2) { /* parent-cycle: the Global's parent is a tile */
		v[0].parent = v[1].id;
	}
	buf_init(&nb);
	m.h.count = m.n;
	r = sm_cmap_write(d->pf, &m.h, v, m.n, &nb);
	free(v);
	sm_cmap_free(&m);
	buf_free(b);
	*b = nb;
	return r;
}

/* Drop the last ATOC row (sfil-extra) or add one no collection holds (atoc-missing). */
static void gd_atoc_edit(struct gd *d, struct buf *b)
{
	size_t rec = d->pf == SM_X360 ? 64 : 72;
	uint32_t n = (uint32_t)((b->len - 24) / rec);

	if (d->o->broken == GD_B_SFIL_EXTRA && n) {
		b->len -= rec;
		buf_set_u32be(b, 16, n - 1);
		return;
	}
	buf_u64be(b, 0x0BADBAD00BADBAD0ull);
	buf_u32be(b, 0xAB329A6Au);
	buf_u32be(b, 4096);
	buf_zero(b, rec - 16);
	buf_set_u32be(b, 16, n + 1);
}

static enum rc gd_break_pres(struct gd *d, struct buf *atoc, struct buf *cmap, struct buf *cspa,
			     struct buf *mmap)
{
	switch (d->o->broken) {
	case GD_B_CMAP_ORPHAN:
	case GD_B_PARENT_CYCLE:
		return gd_cmap_edit(d, cmap);
	case GD_B_ATOC_MISSING:
	case GD_B_SFIL_EXTRA:
		gd_atoc_edit(d, atoc);
		break;
	case GD_B_CSPA_MISSING: /* the last tile loses its cell */
		if (cspa->len >= SM_CSPA_HDR + SM_CSPA_REC) {
			cspa->len -= SM_CSPA_REC;
			buf_set_u32be(cspa, 0x10,
				      (uint32_t)((cspa->len - SM_CSPA_HDR) / SM_CSPA_REC));
		}
		break;
	case GD_B_STAMP:
		buf_set_u32be(mmap, 0x0C, (uint32_t)(ld_u64be(mmap->data + 8) + 1));
		break;
	case GD_B_LYING_COUNTS:
		buf_set_u32be(cmap, 0x10, 1000000);
		buf_set_u32be(cmap, SM_CMAP_HDR + 0x18, 0x7FFFFFFF);
		buf_set_u32be(cspa, 0x10, 0x10000000);
		buf_set_u32be(atoc, 0x10, 50000000);
		break;
	default:
		break;
	}
	return RC_OK;
}

/* The four manifests of the kind w describes, broken as asked, to the sink. */
static enum rc gd_manifests(struct gd *d, struct ss_writer *w)
{
	static const enum sm_file files[4] = {SM_ATOC, SM_CMAP, SM_CSPA, SM_MMAP};
	struct buf b[4];
	enum rc r;

	for (int i = 0; i < 4; i++)
		buf_init(&b[i]);
	r = ssw_finish(w, &b[0], &b[1], &b[2], &b[3]);
	if (r == RC_OK && w->kind == SS_PRES)
		r = gd_break_pres(d, &b[0], &b[1], &b[2], &b[3]);
	for (int i = 0; i < 4 && r == RC_OK; i++)
		r = gd_put(d, w->kind, files[i], NULL, &b[i]);
	for (int i = 0; i < 4; i++)
		buf_free(&b[i]);
	return r;
}

/* PS3: cTex_Global, one arena per texture. Xbox 360: the empty stub (or nothing). */
static enum rc gd_tex(struct gd *d)
{
	struct ss_writer w;
	struct gd_coll c = {0};
	enum rc r;

	if (d->o->x360 && d->o->broken == GD_B_TEX_STUB)
		return RC_OK;
	r = ssw_begin(&w, d->pf, d->dist, SS_TEX, &d->f);
	for (uint32_t t = 0; !d->o->x360 && t < d->textures && r == RC_OK; t++) {
		struct buf *b = gd_coll_add(&c, GD_TEX_GUID + GD_TEX_FIRST + t);

		r = b ? gd_textures(d, t, b) : RC_NOMEM;
	}
	if (r == RC_OK && !d->o->x360)
		r = gd_emit(d, &w, "cTex_Global", &c);
	gd_coll_free(&c);
	if (r == RC_OK)
		r = gd_manifests(d, &w);
	ssw_free(&w);
	return r;
}

/* Collection coll (0 the Global, else tile coll - 1) of Pres: its models (k = coll, coll +
 * tiles + 1, ...), and on Xbox 360 the Global also holds the texture arena. */
static enum rc gd_pres_coll(struct gd *d, struct ss_writer *w, uint32_t coll)
{
	char name[SM_NAME_LEN];
	struct gd_coll c = {0};
	enum rc r = RC_OK;

	if (coll == 0)
		snprintf(name, sizeof name, "cPres_Global");
	else
		gd_tile_name(d, SS_PRES, coll - 1, name, sizeof name);
	for (uint32_t k = coll; k < d->models && r == RC_OK; k += d->tiles + 1) {
		struct gd_model m;
		struct buf *b;

		gd_model_plan(d, k, coll, name, &m);
		b = gd_coll_add(&c, m.guid + 2);
		r = b ? gd_model_arena(&m, b) : RC_NOMEM;
	}
	if (r == RC_OK && coll == 0 && d->o->x360) {
		struct buf *b = gd_coll_add(&c, GD_TEX_GUID + 0xFFFFu);

		r = b ? gd_textures(d, 0, b) : RC_NOMEM;
	}
	if (r == RC_OK)
		r = gd_emit(d, w, name, &c);
	gd_coll_free(&c);
	return r;
}

static enum rc gd_pres(struct gd *d)
{
	struct ss_writer w;
	enum rc r = ssw_begin(&w, d->pf, d->dist, SS_PRES, &d->f);

	for (uint32_t coll = 0; coll <= d->tiles && r == RC_OK; coll++)
		r = gd_pres_coll(d, &w, coll);
	if (r == RC_OK)
		r = gd_manifests(d, &w);
	ssw_free(&w);
	return r;
}

/* ---- Sim: collision, rails and placed props per tile ---- */

/* Tile t's models (as gd_model_plan places them): the collision and rails follow them. */
static uint32_t gd_tile_models(const struct gd *d, uint32_t t, struct gd_model *m, uint32_t max)
{
	char name[SM_NAME_LEN];
	uint32_t n = 0;

	gd_tile_name(d, SS_PRES, t, name, sizeof name);
	for (uint32_t k = t + 1; k < d->models && n < max; k += d->tiles + 1)
		gd_model_plan(d, k, t + 1, name, &m[n++]);
	return n;
}

static void gd_quad(struct wo_tri_in *t, float x0, float z0, float x1, float z1, float y,
		    uint16_t surface)
{
	const float c[4][3] = {{x0, y, z0}, {x0, y, z1}, {x1, y, z0}, {x1, y, z1}};

	memcpy(t[0].v[0], c[0], 12), memcpy(t[0].v[1], c[1], 12), memcpy(t[0].v[2], c[2], 12);
	memcpy(t[1].v[0], c[2], 12), memcpy(t[1].v[1], c[1], 12), memcpy(t[1].v[2], c[3], 12);
	t[0].surface = t[1].surface = surface;
}

/* The tile's ground (concrete) and each model's top (wood, metal, grass by turns), at 1 cm. */
static enum rc gd_collision(const struct gd *d, uint32_t t, const struct gd_model *m, uint32_t nm,
			    struct buf *out)
{
	struct wo_tri_in *tri = calloc(2 * ((size_t)nm + 1), sizeof *tri);
	float x0 = GD_TILE * (float)(t % d->side), z0 = GD_TILE * (float)(t / d->side);
	enum rc r;

	if (!tri)
		return RC_NOMEM;
	gd_quad(tri, x0, z0, x0 + GD_TILE, z0 + GD_TILE, 0, wo_surface_make(3, 1, 0));
	for (uint32_t i = 0; i < nm; i++)
		gd_quad(tri + 2 + 2 * i, m[i].x0, m[i].z0, m[i].x0 + m[i].size, m[i].z0 + m[i].size,
			m[i].y0, wo_surface_make(10 + i % 3, 2 + i % 3, i % 4));
	r = wo_cmesh_write(tri, 2 * (nm + 1), 0.01f, out);
	free(tri);
	return r;
}

/* A rail across the tile at kerb height, and one along the front edge of each raised model. */
static enum rc gd_rails(const struct gd *d, uint32_t t, const struct gd_model *m, uint32_t nm,
			struct buf *out)
{
	float(*pt)[3] = calloc(3 * ((size_t)nm + 1), sizeof *pt);
	struct wo_rail_in *rail = calloc((size_t)nm + 1, sizeof *rail);
	float x0 = GD_TILE * (float)(t % d->side), z0 = GD_TILE * (float)(t / d->side);
	uint32_t n = 0;
	enum rc r;

	if (!pt || !rail) {
		free(pt);
		free(rail);
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i <= nm; i++) {
		bool kerb = i == nm;
		float ax = kerb ? x0 + 5 : m[i].x0, az = kerb ? z0 + 50 : m[i].z0;
		float len = kerb ? 90 : m[i].size, y = kerb ? 0.3f : m[i].y0 + 0.1f;

		if (!kerb && m[i].y0 < 1)
			continue;
		for (int k = 0; k < 3; k++) {
			pt[3 * n + k][0] = ax + len * (float)k / 2;
			pt[3 * n + k][1] = y + (kerb ? 0.2f * (float)(k == 1) : 0);
			pt[3 * n + k][2] = az;
		}
		rail[n] = (struct wo_rail_in){.guid = GD_SIM_ASSET + 0x10000 * (t + 1) + n,
					      .guid_local = n + 1,
					      .instance = WO_NONE,
					      .npoints = 3,
					      .points = (const float(*)[3])pt[3 * n]};
		n++;
	}
	r = wo_spline_write(rail, n, out);
	free(pt);
	free(rail);
	return r;
}

/* GD_DMOS props on the tile's ground, turned and scaled, each naming a template. */
static enum rc gd_dmos(const struct gd *d, uint32_t t, struct buf *out)
{
	struct wo_dmo v[GD_DMOS];
	struct wo_dmo_header h = {.type_id = WO_T_DMODATA};
	float x0 = GD_TILE * (float)(t % d->side), z0 = GD_TILE * (float)(t / d->side);

	memset(v, 0, sizeof v);
	for (uint32_t i = 0; i < GD_DMOS; i++) {
		float a = 0.7f * (float)(i + t), s = i == 2 ? 1.5f : 1.0f;
		const float pos[3] = {x0 + 20 + 30 * (float)i, 0, z0 + 80};
		const float rot[4] = {0, sinf(a / 2), 0, cosf(a / 2)};
		const float scale[3] = {s, s, s};

		wo_compose(pos, rot, scale, v[i].m);
		for (int k = 0; k < 3; k++) {
			v[i].bmin[k] = pos[k] - 2 * s;
			v[i].bmax[k] = pos[k] + 2 * s;
		}
		v[i].guid = GD_SIM_ASSET + 0x100000 + GD_DMOS * (uint64_t)t + i;
		v[i].guid_local = i + 1;
		v[i].template_id = GD_TEMPLATE + (GD_DMOS * t + i) % GD_TEMPLATES;
		snprintf(v[i].name, sizeof v[i].name, "dmo_%u_%u", t, i);
	}
	if (d->o->broken == GD_B_NAN_MATRIX && t + 1 == d->tiles)
		v[GD_DMOS - 1].m[0] = NAN;
	return wo_dmo_write(&h, v, GD_DMOS, out);
}

/* Tile t's Sim arena: rows VersionData, CollisionModelData -> Volume -> ClusteredMesh,
 * SplineData, DMOData (DUMB's CollisionModelData and Volume shapes, docs/worlds.md). */
static enum rc gd_sim_arena(const struct gd *d, uint32_t t, struct buf *out)
{
	struct gd_model m[64];
	uint32_t nm = gd_tile_models(d, t, m, 64), o[6];
	struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, (uint32_t)(GD_SIM_ASSET + t));
	uint8_t cmodel[20] = {0}, volume[0x60] = {0};
	struct buf cm, sp, dm;
	enum rc r;

	if (!b)
		return RC_NOMEM;
	buf_init(&cm);
	buf_init(&sp);
	buf_init(&dm);
	r = gd_collision(d, t, m, nm, &cm);
	if (r == RC_OK)
		r = gd_rails(d, t, m, nm, &sp);
	if (r == RC_OK)
		r = gd_dmos(d, t, &dm);
	if (r == RC_OK && (cm.oom || sp.oom || dm.oom))
		r = RC_NOMEM;
	if (r != RC_OK) {
		psgb_free(b);
		goto out;
	}
	if (d->o->x360)
		psgb_set_platform(b, PSGB_XB2);
	for (int i = 0; i < 6; i++)
		o[i] = psgb_reserve(b);
	psgo_version(b, o[0], true);
	/* CollisionModelData: volume, one mesh, the table at 0x0C holding the mesh */
	gd_put_u32(cmodel, o[2]);
	gd_put_u32(cmodel + 4, 1);
	gd_put_u32(cmodel + 8, 0x0C);
	gd_put_u32(cmodel + 12, o[3]);
	psgb_set(b, o[1], WO_T_COLLISIONMODEL, 16, cmodel, sizeof cmodel);
	psgb_ref(b, o[1], 0);
	psgb_ref(b, o[1], 12);
	/* Volume: identity matrix, type 6 (aggregate) and the mesh */
	for (int i = 0; i < 4; i++)
		gd_put_f32(volume + 20 * i, 1.0f);
	gd_put_u32(volume + 0x40, 6);
	gd_put_u32(volume + 0x44, o[3]);
	psgb_set(b, o[2], WO_T_VOLUME, 16, volume, sizeof volume);
	psgb_ref(b, o[2], 0x44);
	psgb_set(b, o[3], WO_T_CLUSTEREDMESH, 16, cm.data, cm.len);
	psgb_set(b, o[4], WO_T_SPLINEDATA, 16, sp.data, sp.len);
	psgb_set(b, o[5], WO_T_DMODATA, 16, dm.data, dm.len);
	r = psgb_finish(b, 0, out, NULL);
out:
	buf_free(&cm);
	buf_free(&sp);
	buf_free(&dm);
	return r;
}

/* Sim: one collection per tile (no Global folder, as in the real districts). */
static enum rc gd_sim(struct gd *d)
{
	struct ss_writer w;
	enum rc r = ssw_begin(&w, d->pf, d->dist, SS_SIM, &d->f);

	for (uint32_t t = 0; t < d->tiles && r == RC_OK; t++) {
		char name[SM_NAME_LEN];
		struct gd_coll c = {0};
		struct buf *b = gd_coll_add(&c, GD_SIM_ASSET + t);

		gd_tile_name(d, SS_SIM, t, name, sizeof name);
		r = b ? gd_sim_arena(d, t, b) : RC_NOMEM;
		if (r == RC_OK)
			r = gd_emit(d, &w, name, &c);
		gd_coll_free(&c);
	}
	if (r == RC_OK)
		r = gd_manifests(d, &w);
	ssw_free(&w);
	return r;
}

/* worlddmo.big: template j a small model at the origin whose InstanceData GUID is the
 * template id the DMO records name (SK8: tInstance records, 0xEB000D, bind template ids to
 * models). */
static enum rc gd_worlddmo(struct gd *d)
{
	struct gen_big_entry e[GD_TEMPLATES];
	struct buf arena[GD_TEMPLATES], big;
	char names[GD_TEMPLATES][40];
	struct gen_sink sink;
	enum rc r = RC_OK;

	memset(e, 0, sizeof e);
	buf_init(&big);
	for (uint32_t j = 0; j < GD_TEMPLATES; j++) {
		struct gd_model m = {.x0 = -1, .z0 = -1, .size = 2, .g = 2, .x360 = d->o->x360};

		buf_init(&arena[j]);
		snprintf(m.name, sizeof m.name, "dmo_template_%u", j);
		m.seed = j + 1;
		m.guid = 0x5D2A6B1C001B0000ull + 8ull * j;
		m.inst_guid = GD_TEMPLATE + j;
		m.tex_guid = d->o->x360 ? GD_TEX_GUID + j % d->textures
					: GD_TEX_GUID + GD_TEX_FIRST + j % d->textures;
		if (r == RC_OK)
			r = gd_model_arena(&m, &arena[j]);
		snprintf(names[j], sizeof names[j], "0x%016" PRIx64 ".%s",
			 (uint64_t)(GD_TEMPLATE + j), d->o->x360 ? "rx2" : "psg");
		e[j] = (struct gen_big_entry){.folder = "data/content/worlddmo",
					      .name = names[j],
					      .data = arena[j].data,
					      .len = arena[j].len,
					      .method = GB_REFPACK};
		if (arena[j].oom)
			r = RC_NOMEM;
	}
	gen_sink_buf(&sink, &big);
	if (r == RC_OK)
		r = gen_big_write(NULL, e, GD_TEMPLATES, &sink, NULL, NULL);
	if (r == RC_OK)
		r = big.oom ? RC_NOMEM : d->s->put(d->s->ctx, GEN_DISTRICT_DMO_BIG, &big);
	for (uint32_t j = 0; j < GD_TEMPLATES; j++)
		buf_free(&arena[j]);
	buf_free(&big);
	return r;
}

enum rc gen_district(const struct gen_district_opts *o, const struct gen_district_sink *s)
{
	struct gd d = {.o = o, .s = s, .dist = o->name ? o->name : "DIST_Gen"};
	enum rc r;

	d.pf = o->x360 ? SM_X360 : SM_PS3;
	d.tiles = o->tiles ? o->tiles : 4;
	d.models = o->models ? o->models : 2 * d.tiles + 1;
	d.textures = o->textures ? o->textures : (d.models < 8 ? d.models : 8);
	if (strncmp(d.dist, "DIST_", 5) || !d.dist[5] || strlen(d.dist) >= 48 ||
	    !name_is_safe(d.dist, strlen(d.dist)) || d.tiles > GD_MAX_TILES ||
	    d.models > GD_MAX_MODELS || d.textures > 4096 || (unsigned)o->broken >= GD_B_COUNT ||
	    (o->broken == GD_B_TEX_STUB && !o->x360))
		return RC_INVAL;
	d.side = gd_isqrt_up(d.tiles);
	d.g = gd_grid(o->size, d.models);
	ss_fields_default(&d.f);
	r = gd_tex(&d);
	if (r == RC_OK)
		r = gd_pres(&d);
	if (r == RC_OK)
		r = gd_sim(&d);
	if (r == RC_OK)
		r = gd_worlddmo(&d);
	return r;
}
