/*
 * Xbox 360 texture arena generator: the twin of the PS3 texture arena (gen_x360_textures.h).
 * The texels of a twin are the PS3 generator's canonical payload, stored through
 * tex_x360_write_level; DXN blocks are encoded here. The Texture object's header words and the
 * fetch constant are those of the real files (docs/xbox360.md, "Texture object"); the formats
 * no real Skate file showed use the endian value and swizzle of their Direct3D format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/gen_x360_textures.h"

#define GX_ARENA_ID  0x7E570000u
#define GX_GUID	     0x2c7f381800171900ull /* the PS3 generator's, so twins share GUIDs */
#define GX_GUID_DXN  0x10000u		   /* DXN GUIDs sit apart: they have no twin */
#define GX_RES_ALIGN 0x1000u		   /* GPU subresources are 4 KiB aligned */

/* 1x1 .. 1024x512, mips 1 then full (1x1 has only one level). */
#define GX_SIZES(f)                                                                                \
	{f, 1, 1, 1, false}, {f, 2, 2, 1, false}, {f, 4, 4, 1, false}, {f, 8, 8, 1, false},        \
	    {f, 16, 16, 1, false}, {f, 32, 32, 1, false}, {f, 24, 40, 1, false},                   \
	    {f, 100, 60, 1, false}, {f, 256, 256, 1, false}, {f, 1024, 512, 1, false},             \
	    {f, 2, 2, 0, false}, {f, 4, 4, 0, false}, {f, 8, 8, 0, false}, {f, 16, 16, 0, false},  \
	    {f, 32, 32, 0, false}, {f, 24, 40, 0, false}, {f, 100, 60, 0, false},                  \
	    {f, 256, 256, 0, false},                                                               \
	{                                                                                          \
		f, 1024, 512, 0, false                                                             \
	}

static const struct gen_x360_spec default_specs[] = {
    GX_SIZES(X360TEX_FMT_DXT1),
    GX_SIZES(X360TEX_FMT_DXT2_3),
    GX_SIZES(X360TEX_FMT_DXT4_5),
    GX_SIZES(X360TEX_FMT_8_8_8_8),
    GX_SIZES(X360TEX_FMT_5_6_5),
    GX_SIZES(X360TEX_FMT_8),
    {X360TEX_FMT_DXT4_5, 16, 16, 0, true}, /* cube, base level in the mip tail */
    {X360TEX_FMT_DXT1, 64, 64, 0, true},
    {X360TEX_FMT_8_8_8_8, 32, 32, 1, true},
    GX_SIZES(X360TEX_FMT_DXN),
};

const struct gen_x360_spec *gen_x360_default_specs(size_t *n)
{
	*n = sizeof default_specs / sizeof default_specs[0];
	return default_specs;
}

static bool gx_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static uint32_t gx_levels(const struct gen_x360_spec *s)
{
	uint32_t m = 0;

	if (s->mips)
		return s->mips;
	for (uint32_t v = s->width > s->height ? s->width : s->height; v; v >>= 1)
		m++;
	return m;
}

bool gen_x360_twin_spec(const struct gen_x360_spec *s, struct gen_tex_spec *out)
{
	uint8_t f;
	bool compressed = false;

	switch (s->format) {
	case X360TEX_FMT_DXT1:
		f = GCM_TEX_DXT1, compressed = true;
		break;
	case X360TEX_FMT_DXT2_3:
		f = GCM_TEX_DXT3, compressed = true;
		break;
	case X360TEX_FMT_DXT4_5:
		f = GCM_TEX_DXT5, compressed = true;
		break;
	case X360TEX_FMT_8_8_8_8:
		f = GCM_TEX_A8R8G8B8;
		break;
	case X360TEX_FMT_5_6_5:
		f = GCM_TEX_R5G6B5;
		break;
	case X360TEX_FMT_8:
		f = GCM_TEX_B8;
		break;
	default:
		return false;
	}
	/* RSX swizzles only power-of-two sizes: other uncompressed twins are linear (LN). */
	if (!compressed && !(gx_pow2(s->width) && gx_pow2(s->height)))
		f |= GCM_TEX_LN;
	*out = (struct gen_tex_spec){f, s->width, s->height, s->mips, s->cube, 0, false, 0};
	return true;
}

/* Fetch constant of a spec (the real files' header words, the D3D format's endian and swizzle,
 * the shape tex_x360_fetch_shape gives); *l receives its layout. */
static enum rc gx_object(const struct gen_x360_spec *s, struct tex_x360_object *o,
			 struct tex_x360_layout *l)
{
	struct tex_x360_fetch *f = &o->fetch;

	memset(o, 0, sizeof *o);
	o->common = X360TEX_COMMON_TEXTURE;
	o->ref_count = 1;
	o->base_flush = o->mip_flush = 0xFFFF0000u;
	tex_x360_format_words(s->format, &f->endian, &f->swizzle);
	return tex_x360_fetch_shape(f, s->format, s->width, s->height, gx_levels(s), s->cube, l);
}

enum rc gen_x360_texture_object(const struct gen_x360_spec *s, struct tex_x360_object *o)
{
	struct tex_x360_layout l;

	return gx_object(s, o, &l);
}

/* DXN source texel: red and green gradients, an 8-px checker, per face/level shifts. */
static void gx_dxn_px(uint32_t face, uint32_t level, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
		      uint8_t o[2])
{
	uint32_t cell = ((x >> 3) ^ (y >> 3)) & 1;

	o[0] = (uint8_t)((w > 1 ? x * 255 / (w - 1) : 128) + 31 * face);
	o[1] = (uint8_t)((h > 1 ? y * 255 / (h - 1) : 128) ^ (cell ? 0x40 : 0) ^ (7 * level));
}

/* BC4 block of 16 values: max/min endpoints (8-value mode), nearest index. */
static void gx_bc4(const uint8_t v[16], uint8_t out[8])
{
	int hi = 0, lo = 255, pal[8];
	uint64_t idx = 0;

	for (int i = 0; i < 16; i++) {
		hi = v[i] > hi ? v[i] : hi;
		lo = v[i] < lo ? v[i] : lo;
	}
	pal[0] = hi, pal[1] = lo;
	for (int i = 1; i < 7; i++)
		pal[i + 1] = ((7 - i) * hi + i * lo) / 7;
	for (int i = 0; i < 16 && hi > lo; i++) {
		int best = 0, bd = 256;

		for (int j = 0; j < 8; j++) {
			int d = abs(pal[j] - v[i]);

			if (d < bd)
				bd = d, best = j;
		}
		idx |= (uint64_t)best << (3 * i);
	}
	out[0] = (uint8_t)hi, out[1] = (uint8_t)lo;
	for (int i = 0; i < 6; i++)
		out[2 + i] = (uint8_t)(idx >> (8 * i));
}

/* One DXN level (BC5 blocks, red then green) and optionally its source pairs. */
static void gx_dxn_level(uint32_t face, uint32_t level, uint32_t w, uint32_t h, uint8_t *blocks,
			 uint8_t *src)
{
	uint32_t bw = (w + 3) / 4, bh = (h + 3) / 4;

	for (uint32_t y = 0; src && y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			gx_dxn_px(face, level, x, y, w, h, src + 2 * ((size_t)y * w + x));
	for (uint32_t by = 0; by < bh; by++) {
		for (uint32_t bx = 0; bx < bw; bx++) {
			uint8_t r[16], g[16], px[2];

			for (uint32_t i = 0; i < 16; i++) {
				uint32_t x = bx * 4 + i % 4, y = by * 4 + i / 4;

				gx_dxn_px(face, level, x < w ? x : w - 1, y < h ? y : h - 1, w, h,
					  px);
				r[i] = px[0];
				g[i] = px[1];
			}
			gx_bc4(r, blocks);
			gx_bc4(g, blocks + 8);
			blocks += 16;
		}
	}
}

/* Canonical DXN payload (faces x levels) and face 0 level 0 source. */
static bool gx_dxn_payload(const struct tex_x360_layout *l, uint8_t **canon, uint8_t **src)
{
	*canon = malloc(l->canon_bytes ? (size_t)l->canon_bytes : 1);
	*src = xcalloc_n((size_t)l->width * l->height, 2);
	if (!*canon || !*src)
		return false;
	for (uint32_t f = 0; f < l->faces; f++)
		for (uint32_t i = 0; i < l->levels; i++)
			gx_dxn_level(f, i, l->lv[i].width, l->lv[i].height,
				     *canon + f * l->face_bytes + l->lv[i].canon_offset,
				     f == 0 && i == 0 ? *src : NULL);
	return true;
}

/* The base resource image of one texture from its canonical payload. */
static uint8_t *gx_resource(const struct tex_x360_layout *l, const uint8_t *canon)
{
	uint8_t *res = calloc(1, (size_t)l->full);

	for (uint32_t f = 0; res && f < l->faces; f++) {
		for (uint32_t i = 0; i < l->levels; i++) {
			const uint8_t *c = canon + f * l->face_bytes + l->lv[i].canon_offset;

			if (tex_x360_write_level(l, f, i, c, res, (size_t)l->full) != RC_OK) {
				free(res);
				return NULL;
			}
		}
	}
	return res;
}

struct gx_state {
	const struct gen_x360_spec *specs;
	size_t n;
	uint32_t id;
	struct gen_tex_spec *tw; /* twin specs, in order */
	uint32_t *twin_of;	 /* spec k -> twin index, UINT32_MAX for DXN */
	size_t n_tw;
	struct gen_tex_truth pt; /* PS3 twin payloads */
};

static void gx_state_free(struct gx_state *g)
{
	free(g->tw);
	free(g->twin_of);
	gen_tex_truth_free(&g->pt);
}

static enum rc gx_state_init(const struct gen_x360_opts *o, struct gx_state *g, bool payloads)
{
	struct buf cnt;
	enum rc r;

	memset(g, 0, sizeof *g);
	g->specs = o && o->specs ? o->specs : default_specs;
	g->n = o && o->specs ? o->n_specs : sizeof default_specs / sizeof default_specs[0];
	g->id = o && o->arena_id ? o->arena_id : GX_ARENA_ID;
	g->tw = xcalloc_n(g->n ? g->n : 1, sizeof *g->tw);
	g->twin_of = xcalloc_n(g->n ? g->n : 1, sizeof *g->twin_of);
	if (!g->tw || !g->twin_of)
		return RC_NOMEM;
	for (size_t k = 0; k < g->n; k++) {
		g->twin_of[k] = UINT32_MAX;
		if (gen_x360_twin_spec(&g->specs[k], &g->tw[g->n_tw]))
			g->twin_of[k] = (uint32_t)g->n_tw++;
		else if (g->specs[k].format != X360TEX_FMT_DXN)
			return RC_INVAL;
	}
	if (!payloads || g->n_tw == 0)
		return RC_OK;
	/* The PS3 generator's truth carries each twin's canonical payload; its arena is
	 * only counted. */
	buf_init_count(&cnt);
	r = gen_psg_textures(
	    &(struct gen_tex_opts){.specs = g->tw, .n_specs = g->n_tw, .arena_id = g->id}, &cnt,
	    NULL, &g->pt);
	buf_free(&cnt);
	return r;
}

/* One texture: base resource + Texture object + TOC entry + truth. */
static enum rc gx_add(struct gx_state *g, struct psg_builder *b, size_t k,
		      struct psgo_toc_entry *toc, char *name, struct gen_x360_truth_item *ti)
{
	const struct gen_x360_spec *s = &g->specs[k];
	uint32_t t = g->twin_of[k];
	struct tex_x360_object obj;
	struct tex_x360_layout l;
	uint8_t bytes[X360TEX_OBJECT_SIZE], *canon = NULL, *src = NULL, *res;
	size_t canon_len;
	uint64_t guid = t != UINT32_MAX ? GX_GUID + t : GX_GUID + GX_GUID_DXN + k;
	uint32_t bi = 0, tx = 0;

	if (gx_object(s, &obj, &l) != RC_OK)
		return RC_INVAL;
	if (t != UINT32_MAX) {
		canon = g->pt.items[t].dds_payload;
		canon_len = g->pt.items[t].dds_payload_len;
	} else {
		if (!gx_dxn_payload(&l, &canon, &src)) {
			free(canon);
			free(src);
			return RC_NOMEM;
		}
		canon_len = (size_t)l.canon_bytes;
	}
	res = canon_len == l.canon_bytes ? gx_resource(&l, canon) : NULL;
	if (res) {
		bi = psgb_add_base_resource(b, GX_RES_ALIGN, res, (size_t)l.full);
		tex_x360_object_encode(&obj, bytes);
		tx = psgb_add(b, RW_T_TEXTURE, 4, bytes, sizeof bytes);
		snprintf(name, 40, "0x%016llx.Texture", (unsigned long long)guid);
		*toc = (struct psgo_toc_entry){name, 0x9B0F1678u, guid, RW_T_TEXTURE_HASH, tx};
	}
	if (res && ti) {
		snprintf(ti->name, sizeof ti->name, "0x%016llx", (unsigned long long)guid);
		ti->guid = guid;
		ti->format = s->format;
		ti->width = s->width;
		ti->height = s->height;
		ti->mips = l.levels;
		ti->cube = s->cube;
		ti->twin = t != UINT32_MAX;
		ti->twin_index = t;
		ti->canon = malloc(canon_len ? canon_len : 1);
		if (ti->canon)
			memcpy(ti->canon, canon, canon_len);
		ti->canon_len = canon_len;
		ti->src_rg = src;
		src = NULL;
		ti->tex_index = tx;
		ti->buf_index = bi;
	}
	if (t == UINT32_MAX)
		free(canon);
	free(src);
	free(res);
	if (!res)
		return canon_len == l.canon_bytes ? RC_NOMEM : RC_INVAL;
	return ti && !ti->canon ? RC_NOMEM : RC_OK;
}

enum rc gen_x360_textures(const struct gen_x360_opts *o, struct buf *out,
			  struct psg_gen_record *rec, struct gen_x360_truth *truth)
{
	struct gx_state g;
	struct psgo_toc_entry *toc = NULL;
	char(*names)[40] = NULL;
	struct psg_builder *b = NULL;
	enum rc r;

	if (truth)
		memset(truth, 0, sizeof *truth);
	r = gx_state_init(o, &g, true);
	if (r != RC_OK)
		goto fail;
	r = RC_NOMEM;
	b = psgb_new(PSGB_REG_TEXTURE10, g.id);
	toc = xcalloc_n(g.n ? g.n : 1, sizeof *toc);
	names = xcalloc_n(g.n ? g.n : 1, sizeof *names);
	if (truth)
		truth->items = xcalloc_n(g.n ? g.n : 1, sizeof *truth->items);
	if (!b || !toc || !names || (truth && !truth->items))
		goto fail;
	if (truth)
		truth->n = g.n;
	psgb_set_platform(b, PSGB_XB2);
	psgb_set_gpu_align(b, GX_RES_ALIGN);
	for (size_t k = 0; k < g.n; k++) {
		r = gx_add(&g, b, k, &toc[k], names[k], truth ? &truth->items[k] : NULL);
		if (r != RC_OK)
			goto fail;
	}
	psgo_toc(b, PSGO_NEW, toc, (uint32_t)g.n);
	psgo_version(b, PSGO_NEW, false);
	r = psgb_finish(b, 0, out, rec);
	b = NULL;
	if (r != RC_OK)
		goto fail;
	free(toc);
	free(names);
	gx_state_free(&g);
	return RC_OK;
fail:
	psgb_free(b);
	free(toc);
	free(names);
	gx_state_free(&g);
	if (truth)
		gen_x360_truth_free(truth);
	return r;
}

enum rc gen_x360_ps3_twins(const struct gen_x360_opts *o, struct buf *out,
			   struct psg_gen_record *rec, struct gen_tex_truth *truth)
{
	struct gx_state g;
	enum rc r = gx_state_init(o, &g, false);

	if (truth)
		memset(truth, 0, sizeof *truth);
	if (r == RC_OK)
		r = gen_psg_textures(
		    &(struct gen_tex_opts){.specs = g.tw, .n_specs = g.n_tw, .arena_id = g.id}, out,
		    rec, truth);
	gx_state_free(&g);
	return r;
}

void gen_x360_truth_free(struct gen_x360_truth *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->items[i].canon);
		free(t->items[i].src_rg);
	}
	free(t->items);
	t->items = NULL;
	t->n = 0;
}

/* The Xbox 360 texture arenas of the generated archives and stream files (gen_big.h). */
enum rc gen_big_x360_textures(uint32_t k, struct buf *b)
{
	static const struct gen_x360_spec specs[] = {
	    {X360TEX_FMT_DXT1, 32, 32, 0, false},   {X360TEX_FMT_8_8_8_8, 16, 16, 1, false},
	    {X360TEX_FMT_DXT4_5, 64, 64, 0, false}, {X360TEX_FMT_DXT1, 128, 64, 0, false},
	    {X360TEX_FMT_DXT4_5, 32, 32, 0, false},
	};
	struct gen_x360_opts o = {
	    .specs = specs + k % 3, .n_specs = 3, .arena_id = 0x7E570000u + k};

	return gen_x360_textures(&o, b, NULL, NULL);
}
