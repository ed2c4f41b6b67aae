/*
 * Ready-made static model arenas: the shape of the real night-sky model and size-targeted
 * arenas of many grid meshes for benchmarks (GPU data produced while the arena is written).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/prng.h"
#include "psgfs/formats/skate_x360.h"

#define SKY_SEG	    10
#define SKY_RINGS   19 /* latitude rings between the poles */
#define SKY_VERTS   (2 * SKY_SEG + 1 + SKY_RINGS * (SKY_SEG + 1))
#define SKY_TRIS    (2 * SKY_SEG * SKY_RINGS)
#define SKY_ISLANDS 4
#define SKY_RADIUS  100.0f

static const float gp_identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

/*
 * UV sphere: vertices 0..10 are the top pole (one per segment; the 11th is a spare so the
 * last vertex index is 229 as in the real file), then 19 rings of 11, then the bottom pole
 * (10). Triangles: top fan, ring quads, bottom fan = 380.
 */
static void sky_geometry(float (*pos)[3], float (*uv)[2], uint16_t *idx)
{
	const double pi = 3.14159265358979323846;
	uint32_t v = 0, t = 0;
	uint32_t top = 0, ring0 = SKY_SEG + 1, bottom = ring0 + SKY_RINGS * (SKY_SEG + 1);

	for (uint32_t j = 0; j <= SKY_SEG; j++, v++) {
		pos[v][0] = 0;
		pos[v][1] = SKY_RADIUS;
		pos[v][2] = 0;
		uv[v][0] = ((float)j + 0.5f) / SKY_SEG;
		uv[v][1] = 0;
	}
	for (uint32_t r = 0; r < SKY_RINGS; r++) {
		double th = pi * (r + 1) / (SKY_RINGS + 1);

		for (uint32_t j = 0; j <= SKY_SEG; j++, v++) {
			double ph = 2 * pi * j / SKY_SEG;

			pos[v][0] = (float)(SKY_RADIUS * sin(th) * cos(ph));
			pos[v][1] = (float)(SKY_RADIUS * cos(th));
			pos[v][2] = (float)(SKY_RADIUS * sin(th) * sin(ph));
			uv[v][0] = (float)j / SKY_SEG;
			uv[v][1] = (float)(r + 1) / (SKY_RINGS + 1);
		}
	}
	for (uint32_t j = 0; j < SKY_SEG; j++, v++) {
		pos[v][0] = 0;
		pos[v][1] = -SKY_RADIUS;
		pos[v][2] = 0;
		uv[v][0] = ((float)j + 0.5f) / SKY_SEG;
		uv[v][1] = 1;
	}
	for (uint32_t j = 0; j < SKY_SEG; j++) {
		idx[t++] = (uint16_t)(top + j);
		idx[t++] = (uint16_t)(ring0 + j + 1);
		idx[t++] = (uint16_t)(ring0 + j);
	}
	for (uint32_t r = 0; r + 1 < SKY_RINGS; r++) {
		uint32_t a = ring0 + r * (SKY_SEG + 1), b = a + SKY_SEG + 1;

		for (uint32_t j = 0; j < SKY_SEG; j++) {
			idx[t++] = (uint16_t)(a + j);
			idx[t++] = (uint16_t)(a + j + 1);
			idx[t++] = (uint16_t)(b + j);
			idx[t++] = (uint16_t)(a + j + 1);
			idx[t++] = (uint16_t)(b + j + 1);
			idx[t++] = (uint16_t)(b + j);
		}
	}
	for (uint32_t j = 0; j < SKY_SEG; j++) {
		uint32_t a = ring0 + (SKY_RINGS - 1) * (SKY_SEG + 1);

		idx[t++] = (uint16_t)(a + j);
		idx[t++] = (uint16_t)(a + j + 1);
		idx[t++] = (uint16_t)(bottom + j);
	}
}

enum rc gen_psg_sky(uint64_t shuffle_seed, struct buf *out, struct psg_gen_record *rec)
{
	return gen_psg_sky_order(PSGB_ORDER_LOGICAL, shuffle_seed, out, rec);
}

/* The sky's geometry, vertex and index bytes, islands and bounds. */
struct sky {
	float pos[SKY_VERTS][3], uv[SKY_VERTS][2];
	uint16_t idx[3 * SKY_TRIS];
	uint8_t vb[SKY_VERTS * 16], ib[3 * SKY_TRIS * 2];
	struct psgo_island isl[SKY_ISLANDS];
	struct psgo_aabb box, isl_box[SKY_ISLANDS];
	float isl_area[SKY_ISLANDS][4];
};

static void sky_build(struct sky *k, bool x360)
{
	sky_geometry(k->pos, k->uv, k->idx);
	for (uint32_t v = 0; v < SKY_VERTS; v++)
		psgo_vertex16(k->vb + 16 * v, k->pos[v], k->uv[v][0], k->uv[v][1]);
	for (uint32_t i = 0; i < 3 * SKY_TRIS; i++) {
		k->ib[2 * i] = (uint8_t)(k->idx[i] >> 8);
		k->ib[2 * i + 1] = (uint8_t)k->idx[i];
	}
	psgo_bounds((const float(*)[3])k->pos, SKY_VERTS, &k->box);
	for (uint32_t i = 0; i < SKY_ISLANDS; i++) {
		k->isl[i].start_index = i * (3 * SKY_TRIS / SKY_ISLANDS);
		k->isl[i].index_count = 3 * SKY_TRIS / SKY_ISLANDS;
		k->isl[i].prim = x360 ? SX360_PRIM_TRIANGLELIST : 5;
		k->isl[i].base_vertex = 0;
		psgo_island_bounds((const float(*)[3])k->pos, SKY_VERTS, k->idx, NULL,
				   k->isl[i].start_index, k->isl[i].index_count, &k->isl_box[i],
				   k->isl_area[i]);
	}
}

#define SKY_G_MAT   0x5D2A6B1C00170001ull
#define SKY_G_MODEL 0x5D2A6B1C00170002ull
#define SKY_G_MESH  0x5D2A6B1C00170003ull
#define SKY_G_INST  0x5D2A6B1C00170004ull

/* RenderMaterialData (Name, AttribulatorMaterialName and three texture channels) and the
 * InstanceData, rows 1 and 2. */
static void sky_material_instance(struct psg_builder *b, const uint32_t o[12],
				  const struct psgo_aabb *box)
{
	const struct psgo_channel ch[5] = {
	    {.shader_input = "Name", .image_channel = 0xFFFF, .guid = SKY_G_MAT},
	    {.shader_input = "AttribulatorMaterialName",
	     .image_channel = 0xFFFF,
	     .guid = 0x6A1F00D53C2B0001ull},
	    /* Texture channels as real models write them: a stream name and the companion's
	     * TOC GUID; the name's hex suffix is another ID, matching none of the GUIDs. */
	    {.shader_input = "diffuse",
	     .image_channel = 0xFFFF,
	     .guid = 0x2C7F381800171902ull,
	     .stream_name = "sky_night_0x00c0ffee00450001"},
	    {.shader_input = "specular",
	     .image_channel = 0xFFFF,
	     .guid = 0x2C7F381800171903ull,
	     .stream_name = "moon_gradient_0x0000beef03e3870a"},
	    {.shader_input = "detail",
	     .image_channel = 0xFFFF,
	     .guid = 0x2C7F381800171904ull,
	     .stream_name = "default_gray_0x0000f00d03e3870a"},
	};
	const struct psgo_material mat = {0, ch, 5};
	struct psgo_instance inst = {
	    .bbox = *box,
	    .guid = SKY_G_INST,
	    .guid_local = 0x00000001A5C39330ull,
	    .rmodel = o[10],
	    .name = "skybox_night",
	    .description = "",
	    .component = "",
	    .category = "",
	};

	psgo_material(b, o[1], &mat, 1);
	memcpy(inst.matrix, gp_identity, sizeof inst.matrix);
	psgo_instance(b, o[2], 0, &inst, 1);
}

enum rc gen_psg_sky_order(enum psgb_order order, uint64_t shuffle_seed, struct buf *out,
			  struct psg_gen_record *rec)
{
	return gen_psg_sky_platform(PSGB_PS3, order, shuffle_seed, out, rec);
}

enum rc gen_psg_sky_platform(enum psgb_platform plat, enum psgb_order order, uint64_t shuffle_seed,
			     struct buf *out, struct psg_gen_record *rec)
{
	struct sky *k = malloc(sizeof *k);
	struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, rw_hash32("skybox_night"));
	struct psgo_static1_rows rows;

	bool x360 = plat == PSGB_XB2;
	enum rc r = !k || !b						    ? RC_NOMEM
		    : x360 && (order != PSGB_ORDER_LOGICAL || shuffle_seed) ? RC_INVAL
									    : RC_OK;

	if (rec) {
		rec->obj = NULL;
		rec->n = 0;
	}
	if (r != RC_OK) {
		free(k);
		psgb_free(b);
		return r;
	}
	sky_build(k, x360);
	psgb_set_order(b, order);
	const struct psgo_static1 m = {
	    .vb = k->vb,
	    .ib = k->ib,
	    .nv = SKY_VERTS,
	    .ni = 3 * SKY_TRIS,
	    .box = k->box,
	    .islands = k->isl,
	    .island_aabbs = k->isl_box,
	    .island_areas = (const float(*)[4])k->isl_area,
	    .n_islands = SKY_ISLANDS,
	    .bone = "skyboxSphere",
	    .toc_guid = {SKY_G_MAT, SKY_G_MODEL, SKY_G_MESH, SKY_G_INST},
	    .x360 = x360,
	};
	psgo_static1_begin(b, &m, &rows);
	sky_material_instance(b, rows.o, &k->box);
	psgo_static1_finish(b, &m, &rows);
	free(k);
	return psgb_finish(b, shuffle_seed, out, rec);
}

/* ---- size-targeted arenas ---- */

struct sz_mesh {
	uint64_t seed;
	uint32_t g; /* grid cells per side: (g+1)^2 vertices, 6 g^2 indices */
};

static void sz_pos(const struct sz_mesh *m, uint32_t k, float p[3], float uv[2])
{
	uint32_t x = k % (m->g + 1), y = k / (m->g + 1);
	uint64_t h = m->seed ^ ((uint64_t)k * 0x9E3779B97F4A7C15ull);

	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 29;
	p[0] = (float)x;
	p[1] = (float)(h & 0xFFFF) / 65536.0f;
	p[2] = (float)y;
	uv[0] = (float)x / (float)m->g;
	uv[1] = (float)y / (float)m->g;
}

static uint16_t sz_index(const struct sz_mesh *m, uint64_t k)
{
	static const uint8_t corner[6][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 1}};
	uint64_t q = k / 6;
	uint32_t c = (uint32_t)(k % 6);
	uint32_t x = (uint32_t)(q % m->g) + corner[c][0], y = (uint32_t)(q / m->g) + corner[c][1];

	return (uint16_t)(y * (m->g + 1) + x);
}

static void sz_fill_vb(void *ctx, uint64_t off, uint8_t *dst, size_t n)
{
	const struct sz_mesh *m = ctx;
	uint8_t tmp[16];

	for (uint64_t at = off; at < off + n;) {
		uint32_t k = (uint32_t)(at / 16), in = (uint32_t)(at % 16);
		size_t c = 16 - in;
		float p[3], uv[2];

		if (c > off + n - at)
			c = (size_t)(off + n - at);
		sz_pos(m, k, p, uv);
		psgo_vertex16(tmp, p, uv[0], uv[1]);
		memcpy(dst + (at - off), tmp + in, c);
		at += c;
	}
}

static void sz_fill_ib(void *ctx, uint64_t off, uint8_t *dst, size_t n)
{
	const struct sz_mesh *m = ctx;

	for (uint64_t at = off; at < off + n; at++) {
		uint16_t v = sz_index(m, at / 2);

		dst[at - off] = (uint8_t)(at % 2 ? v : v >> 8);
	}
}

/* Island boxes and areas of one grid mesh, split into two islands at a triangle boundary. */
static bool sz_islands(const struct sz_mesh *m, struct psgo_island isl[2], struct psgo_aabb box[2],
		       float area[2][4], struct psgo_aabb *all)
{
	uint32_t nv = (m->g + 1) * (m->g + 1), ni = 6 * m->g * m->g;
	float(*pos)[3] = xcalloc_n(nv, sizeof *pos);
	uint32_t *idx = xcalloc_n(ni, sizeof *idx);
	uint32_t half = (ni / 3 / 2) * 3;

	if (!pos || !idx) {
		free(pos);
		free(idx);
		return false;
	}
	for (uint32_t k = 0; k < nv; k++) {
		float uv[2];

		sz_pos(m, k, pos[k], uv);
	}
	for (uint32_t k = 0; k < ni; k++)
		idx[k] = sz_index(m, k);
	isl[0] = (struct psgo_island){0, half, 5, 0};
	isl[1] = (struct psgo_island){half, ni - half, 5, 0};
	for (int i = 0; i < 2; i++)
		psgo_island_bounds((const float(*)[3])pos, nv, NULL, idx, isl[i].start_index,
				   isl[i].index_count, &box[i], area[i]);
	psgo_bounds((const float(*)[3])pos, nv, all);
	free(pos);
	free(idx);
	return true;
}

/* One size-targeted arena while it is built. */
struct sized {
	uint64_t seed;
	uint32_t n_mesh, g; /* meshes of g x g grid cells */
	struct sz_mesh *mesh;
	struct psgo_island (*isl)[2];
	struct psgo_aabb *ibox, *mbox, total;
	float (*iarea)[4];
	struct psgo_mesh_ref *mref;
	struct psgo_toc_entry *toc;
	struct psg_builder *b;
	struct psgo_model model;
	struct psgo_model_layout ml;
	uint32_t o_ver, o_mat, o_inst, o_model, o_toc, s_mat;
};

/* Mesh count and grid size for about target_bytes: 16 (g+1)^2 + 12 g^2 bytes of GPU data and
 * about 700 bytes of main objects, dictionary rows and tables per mesh. */
static void sz_plan(uint64_t target_bytes, struct sized *z)
{
	const uint64_t per_mesh_meta = 700;
	uint64_t budget;

	z->n_mesh = (uint32_t)(target_bytes / 16384);
	if (z->n_mesh > 4096)
		z->n_mesh = 4096;
	budget = target_bytes / z->n_mesh;
	budget = budget > per_mesh_meta ? budget - per_mesh_meta : 28;
	z->g = (uint32_t)sqrt((double)budget / 28.0);
	if (z->g < 1)
		z->g = 1;
	if (z->g > 255)
		z->g = 255; /* u16 indices */
}

static void sz_free(struct sized *z)
{
	psgb_free(z->b);
	free(z->mesh);
	free(z->isl);
	free(z->ibox);
	free(z->iarea);
	free(z->mbox);
	free(z->mref);
	free(z->toc);
}

/* Per-mesh seeds, islands, boxes and the box around them all. */
static enum rc sz_geometry(struct sized *z)
{
	uint32_t n = z->n_mesh;
	struct prng rg;

	z->mesh = xcalloc_n(n, sizeof *z->mesh);
	z->isl = xcalloc_n(n, sizeof *z->isl);
	z->ibox = xcalloc_n(2 * (size_t)n, sizeof *z->ibox);
	z->iarea = xcalloc_n(2 * (size_t)n, sizeof *z->iarea);
	z->mbox = xcalloc_n(n, sizeof *z->mbox);
	z->mref = xcalloc_n(n, sizeof *z->mref);
	z->toc = xcalloc_n((size_t)n + 3, sizeof *z->toc);
	if (!z->mesh || !z->isl || !z->ibox || !z->iarea || !z->mbox || !z->mref || !z->toc)
		return RC_NOMEM;
	prng_seed(&rg, z->seed ^ 0x5053474653495A45ull);
	for (uint32_t i = 0; i < n; i++) {
		z->mesh[i].seed = prng_next(&rg);
		z->mesh[i].g = z->g;
		if (!sz_islands(&z->mesh[i], z->isl[i], &z->ibox[2 * i], &z->iarea[2 * i],
				&z->mbox[i]))
			return RC_NOMEM;
		for (int k = 0; k < 3; k++) {
			if (i == 0 || z->mbox[i].min[k] < z->total.min[k])
				z->total.min[k] = z->mbox[i].min[k];
			if (i == 0 || z->mbox[i].max[k] > z->total.max[k])
				z->total.max[k] = z->mbox[i].max[k];
		}
	}
	return RC_OK;
}

/* VersionData, the material and the instance's slot (rows 0-2); the model and TOC take the
 * two slots after the meshes'. */
static void sz_header(struct sized *z)
{
	static const char *const bone[1] = {"root"};
	const struct psgo_channel ch[2] = {
	    {.shader_input = "Name", .image_channel = 0xFFFF, .guid = z->seed | 1},
	    {.shader_input = "diffuse",
	     .image_channel = 0xFFFF,
	     .guid = z->seed | 2,
	     .stream_name = "sized_diffuse"},
	};
	const struct psgo_material mat = {0, ch, 2};

	z->o_ver = psgb_reserve(z->b);
	z->o_mat = psgb_reserve(z->b);
	z->o_inst = psgb_reserve(z->b);
	z->model = (struct psgo_model){
	    .bbox = z->total,
	    .n_bones = 1,
	    .names = bone,
	    .meshes = z->mref,
	    .n_meshes = (uint16_t)z->n_mesh,
	    .island_aabbs = z->ibox,
	    .island_areas = (const float(*)[4])z->iarea,
	    .n_islands = (uint16_t)(2 * z->n_mesh),
	};
	psgo_model_layout(&z->model, &z->ml);
	psgo_version(z->b, z->o_ver, true);
	psgo_material(z->b, z->o_mat, &mat, 1);
	z->s_mat = psgb_add_subref(z->b, z->o_mat, psgo_material_offset(0));
	z->o_model = (uint32_t)(3 + 7 * (uint64_t)z->n_mesh);
	z->o_toc = z->o_model + 1;
}

/* The seven objects of grid mesh i; its GPU data is produced while the arena is written. */
static void sz_mesh(struct sized *z, uint32_t i)
{
	static const struct psgo_vdes_elem el[2] = {
	    {PSGO_VT_F, 3, 0, PSGO_ET_XYZ},
	    {PSGO_VT_S1, 2, 12, PSGO_ET_TEX0},
	};
	static const uint16_t remap[1] = {0};
	struct psg_builder *b = z->b;
	uint32_t nv = (z->g + 1) * (z->g + 1), ni = 6 * z->g * z->g;
	uint32_t br_v = psgb_add_base_resource_fn(b, 0x10, 16ull * nv, sz_fill_vb, &z->mesh[i]);
	uint32_t vbo = psgo_vertex_buffer(b, PSGO_NEW, br_v, 16 * nv);
	uint32_t br_i = psgb_add_base_resource_fn(b, 0x10, 2ull * ni, sz_fill_ib, &z->mesh[i]);
	uint32_t ibo = psgo_index_buffer(b, PSGO_NEW, br_i, ni, 2);
	uint32_t o_om = psgb_reserve(b);
	uint32_t vd = psgo_vdes(b, PSGO_NEW, el, 2, 16);
	uint32_t mh = psgo_mesh_helper(b, PSGO_NEW, &ibo, 1, &vbo, 1);
	struct psgo_optimesh m = {
	    .bbox = z->mbox[i],
	    .material = z->s_mat,
	    .vdes = vd,
	    .mesh_helper = mh,
	    .ib = ibo,
	    .vb = vbo,
	    .island_areas = psgb_add_subref(b, z->o_model, z->ml.areas + 32 * i),
	    .island_aabbs = psgb_add_subref(b, z->o_model, z->ml.aabbs + 64 * i),
	    .islands = z->isl[i],
	    .n_islands = 2,
	    .remap = remap,
	    .n_remap = 1,
	};

	psgo_optimesh(b, o_om, &m);
	z->mref[i] = (struct psgo_mesh_ref){o_om, 0};
	z->toc[3 + i] =
	    (struct psgo_toc_entry){NULL, 0xFEFFFFFFu, z->mesh[i].seed, RW_T_OPTIMESH, o_om};
}

/* The model, the instance and the TOC. */
static enum rc sz_tail(struct sized *z)
{
	struct psgo_instance inst = {
	    .bbox = z->total,
	    .guid = z->seed | 3,
	    .rmodel = z->o_model,
	    .name = "sized",
	    .description = "",
	    .component = "",
	    .category = "",
	};
	uint32_t s_inst;

	if (psgb_reserve(z->b) != z->o_model || psgb_reserve(z->b) != z->o_toc)
		return RC_NOMEM;
	psgo_model(z->b, z->o_model, &z->model);
	memcpy(inst.matrix, gp_identity, sizeof inst.matrix);
	psgo_instance(z->b, z->o_inst, 0, &inst, 1);
	s_inst = psgb_add_subref(z->b, z->o_inst, psgo_instance_offset(0));
	z->toc[0] = (struct psgo_toc_entry){NULL, 0xFEFFFFFFu, z->seed | 1,
					    RW_T_SUBREF_RENDERMATERIAL, z->s_mat};
	z->toc[1] =
	    (struct psgo_toc_entry){NULL, 0xFEFFFFFFu, z->seed | 4, RW_T_RENDERMODEL, z->o_model};
	z->toc[2] =
	    (struct psgo_toc_entry){NULL, 0xFEFFFFFFu, z->seed | 3, RW_T_SUBREF_INSTANCE, s_inst};
	psgo_toc(z->b, z->o_toc, z->toc, z->n_mesh + 3);
	return RC_OK;
}

enum rc gen_psg_sized(uint64_t target_bytes, uint64_t seed, struct buf *out,
		      struct psg_gen_record *rec)
{
	struct sized z = {.seed = seed};
	enum rc r;

	if (rec) {
		rec->obj = NULL;
		rec->n = 0;
	}
	if (target_bytes < (64u << 10) || target_bytes > (3ull << 30))
		return RC_INVAL;
	sz_plan(target_bytes, &z);
	r = sz_geometry(&z);
	if (r == RC_OK) {
		z.b = psgb_new(PSGB_REG_MODEL64, (uint32_t)(seed ^ (seed >> 32) ^ 0x51ED0000u));
		r = z.b ? RC_OK : RC_NOMEM;
	}
	if (r == RC_OK) {
		sz_header(&z);
		for (uint32_t i = 0; i < z.n_mesh; i++)
			sz_mesh(&z, i);
		r = sz_tail(&z);
	}
	if (r == RC_OK) {
		r = psgb_finish(z.b, 0, out, rec); /* consumes b; the fill contexts live on */
		z.b = NULL;
	}
	sz_free(&z);
	return r;
}

static uint32_t rd_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

enum rc gen_psg_sparse_rows(struct buf *out, uint32_t rows, uint64_t *file_size)
{
	uint32_t used, start, at;
	uint64_t end;

	if (out->len < 0x34 || out->count_only)
		return RC_INVAL;
	used = rd_be32(out->data + 0x24);
	start = rd_be32(out->data + 0x30);
	at = (uint32_t)((out->len + 15) & ~(size_t)15);
	end = (uint64_t)at + 24ull * rows;
	if (rows < used || (uint64_t)start + 24ull * used > out->len || end > UINT32_MAX)
		return RC_INVAL;
	buf_pad_to(out, 16);
	buf_put(out, out->data + start, 24ull * used); /* the real rows, at the new start */
	if (out->oom)
		return RC_NOMEM;
	buf_set_u32be(out, 0x20, rows);
	buf_set_u32be(out, 0x24, rows);
	buf_set_u32be(out, 0x30, at);
	*file_size = end;
	return RC_OK;
}
