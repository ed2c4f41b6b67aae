/*
 * SFIL stream collections and ATOC tables (docs/streams.md). All fields big-endian.
 *   SFIL header (0x80 bytes): "SFIL", u32 version, u64 stamp, u32 first asset offset (0x80),
 *     u32 asset count, u32 stream format, u32 0xFFFFFFFF.
 *   Asset (128-aligned): u64 ID, u32 stored size, u32 header size (0x80), u32 stride, zeros;
 *     then its stored bytes.
 *   Format 2 stored bytes: five {u32 unpacked, u32 stored, u32 compressed, u32 0} section
 *     records (section 0 the CPU part, section 2 the GPU part), then each section's bytes.
 *   Format 3: {u32 chunk data offset, u32 chunks, u32 chunks of each of the five sections,
 *     u32 0}, a u32 stored size per chunk, then the chunks (each a RefPack stream).
 *   ATOC: "ATOC", u32 3, u64 stamp, u32 count, u32 names offset (0); per asset u64 ID,
 *     u32 0xAB329A6A, u32 size, the arena's resource descriptors {size, alignment}, u32 name
 *     offset, u32 0.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/hash.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/arena.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_stream.h"
#include "psgfs/gen/gen_x360_textures.h"
#include "psgfs/gen/prng.h"
#include "psgfs/gen/refpack_enc.h"

#define SF_HDR	  0x80u
#define ATOC_TYPE 0xAB329A6Au

static const char *const hostile_names[GS_H_COUNT] = {
    "none", "stride", "past-eof", "sections", "chunks", "toc-lies", "backref",
};

const char *gen_stream_hostile_name(enum gen_stream_hostile h)
{
	return (unsigned)h < GS_H_COUNT ? hostile_names[h] : "?";
}

/* One asset: its arena, where the CPU part ends, its resource descriptors. */
struct gs_asset {
	uint64_t id;
	struct buf arena;
	uint64_t cpu;
	struct rw_rd rd[RW_MAX_RD];
	unsigned n_rd;
};

static enum rc gs_arena(struct prng *p, bool x360, uint32_t k, struct buf *b)
{
	struct gen_skinned_opts so = {.layout = -1};
	struct gen_tex_opts to = {0};
	size_t n;

	switch (k % 3) {
	case 0:
		if (x360)
			return gen_big_x360_textures(k, b);
		to.specs = gen_tex_default_specs(&n);
		to.n_specs = 3 + prng_below(p, 4);
		to.shuffle_seed = prng_next(p) | 1;
		return gen_psg_textures(&to, b, NULL, NULL);
	case 1:
		return gen_psg_sky_platform(x360 ? PSGB_XB2 : PSGB_PS3, PSGB_ORDER_LOGICAL, 0, b,
					    NULL);
	default:
		so.seed = prng_next(p) | 1;
		so.n_bones = 3 + prng_below(p, 10);
		so.n_meshes = 1 + prng_below(p, 2);
		so.platform = x360 ? GEN_SK_X360 : GEN_SK_PS3;
		return gen_psg_skinned(&so, b, NULL);
	}
}

/* The CPU part is what resource descriptor 0 (main memory) covers. */
static enum rc gs_split(struct gs_asset *a)
{
	struct src s;
	struct src_mem m;
	struct arena ar;
	enum rc r;

	src_init_mem(&s, &m, a->arena.data, a->arena.len);
	r = arena_open(&s, &ar, NULL);
	if (r != RC_OK)
		return r;
	a->n_rd = ar.h.n_rd;
	memcpy(a->rd, ar.h.rd, sizeof a->rd);
	a->cpu = ar.h.rd[0].size < a->arena.len ? ar.h.rd[0].size : a->arena.len;
	arena_free(&ar);
	return RC_OK;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
	p[3] = (uint8_t)v;
}

/* w: the RefPack tables, kept across the assets and chunks of one stream file */
static enum rc rp(const uint8_t *in, size_t n, uint8_t hdr, struct buf *out, struct rp_work *w)
{
	struct rp_enc_opts o = {.header = hdr};

	return rp_encode_work(in, n, &o, out, NULL, w);
}

/* Format 2 stored bytes: the section table, then the CPU and GPU sections. */
static enum rc gs_sections(const struct gs_asset *a, uint32_t k, uint8_t hdr, struct buf *out,
			   struct rp_work *w)
{
	const uint8_t *part[2] = {a->arena.data, a->arena.data + a->cpu};
	size_t len[2] = {(size_t)a->cpu, a->arena.len - (size_t)a->cpu};
	struct buf sec[2];
	uint8_t table[0x50] = {0};
	enum rc r = RC_OK;

	for (int i = 0; i < 2; i++) {
		/* asset k: CPU RefPack unless k % 4 == 1, GPU RefPack unless k % 4 == 2 */
		bool pack = len[i] && (k % 4) != (unsigned)(i + 1);

		buf_init(&sec[i]);
		if (pack && r == RC_OK)
			r = rp(part[i], len[i], hdr, &sec[i], w);
		else
			buf_put(&sec[i], part[i], len[i]);
		put_u32(table + 0x20 * i, (uint32_t)len[i]);
		put_u32(table + 0x20 * i + 4, (uint32_t)sec[i].len);
		put_u32(table + 0x20 * i + 8, pack ? 1 : 0);
	}
	buf_put(out, table, sizeof table);
	buf_put(out, sec[0].data, sec[0].len);
	buf_put(out, sec[1].data, sec[1].len);
	buf_free(&sec[0]);
	buf_free(&sec[1]);
	return r;
}

/* Format 3 stored bytes: chunk header, chunk sizes, chunks (per section). */
static enum rc gs_chunks(const struct gs_asset *a, uint32_t chunk, uint8_t hdr, struct buf *out,
			 struct rp_work *w)
{
	size_t len[2] = {(size_t)a->cpu, a->arena.len - (size_t)a->cpu};
	uint32_t cnt[2], total, hsize;
	struct buf data;
	size_t at;
	enum rc r = RC_OK;

	for (int i = 0; i < 2; i++)
		cnt[i] = (uint32_t)((len[i] + chunk - 1) / chunk);
	total = cnt[0] + cnt[1];
	hsize = 32 + 4 * total;
	at = out->len;
	buf_u32be(out, hsize);
	buf_u32be(out, total);
	buf_u32be(out, cnt[0]);
	buf_u32be(out, 0);
	buf_u32be(out, cnt[1]);
	buf_u32be(out, 0);
	buf_u32be(out, 0);
	buf_u32be(out, 0);
	buf_zero(out, 4 * (size_t)total);
	buf_init(&data);
	for (int i = 0, c = 0; i < 2 && r == RC_OK; i++)
		for (size_t off = 0; off < len[i] && r == RC_OK; off += chunk, c++) {
			size_t n = len[i] - off < chunk ? len[i] - off : chunk, before = data.len;

			r = rp(a->arena.data + (i ? a->cpu : 0) + off, n, hdr, &data, w);
			buf_set_u32be(out, at + 32 + 4 * (size_t)c, (uint32_t)(data.len - before));
		}
	buf_put(out, data.data, data.len);
	buf_free(&data);
	return r;
}

static enum rc gs_stored(const struct gen_stream_opts *o, const struct gs_asset *a, uint32_t k,
			 struct buf *out, struct rp_work *w)
{
	uint32_t chunk = o->chunk ? o->chunk : 32u << 10;

	/* in formats 2 and 3 the last asset is stored raw (its stored size is then the asset's
	 * own size: the reading of the SK8 reader) */
	if (o->format == 0 || (o->format >= 2 && k + 1 == (o->assets ? o->assets : 6))) {
		buf_put(out, a->arena.data, a->arena.len);
		return RC_OK;
	}
	if (o->format == 1)
		return rp(a->arena.data, a->arena.len, o->rp_header, out, w);
	if (o->format == 2)
		return gs_sections(a, k, o->rp_header, out, w);
	return gs_chunks(a, chunk, o->rp_header, out, w);
}

static void gs_toc_record(struct buf *toc, const struct gs_asset *a, bool x360)
{
	unsigned n_rd = x360 ? 5 : 6;

	buf_u64be(toc, a->id);
	buf_u32be(toc, ATOC_TYPE);
	buf_u32be(toc, (uint32_t)a->arena.len);
	for (unsigned i = 0; i < n_rd; i++) {
		buf_u32be(toc, i < a->n_rd ? a->rd[i].size : 0);
		buf_u32be(toc, i < a->n_rd && a->rd[i].align ? a->rd[i].align : 1);
	}
	buf_u32be(toc, 0);
	buf_u32be(toc, 0);
}

static enum rc gs_row(struct gen_big_manifest *m, const struct gs_asset *a, bool x360,
		      uint8_t format)
{
	char name[40];

	snprintf(name, sizeof name, "0x%016" PRIx64 ".%s", a->id, x360 ? "rx2" : "psg");
	return gen_big_manifest_add(m, "", name, format, a->arena.len,
				    fnv1a_64(a->arena.data, a->arena.len));
}

/* Break the written files the way h says (offsets of asset 0 and 1 in at[]). */
static void gs_hostile(enum gen_stream_hostile h, struct buf *sf, struct buf *toc,
		       const size_t at[2])
{
	switch (h) {
	case GS_H_STRIDE:
		buf_set_u32be(sf, at[0] + 16, 0);
		break;
	case GS_H_PAST_EOF:
		buf_set_u32be(sf, at[1] + 8, (uint32_t)sf->len);
		break;
	case GS_H_SECTIONS: /* format 2: unpacked sizes that lie, a stored size of 4 GiB - 1 */
		buf_set_u32be(sf, at[0] + SF_HDR, 0xFFFFFFFF);
		buf_set_u32be(sf, at[1] + SF_HDR + 0x24, 0xFFFFFFFF);
		break;
	case GS_H_CHUNKS: /* format 3: a million chunks claimed */
		buf_set_u32be(sf, at[0] + SF_HDR + 4, 1000000);
		buf_set_u32be(sf, at[1] + SF_HDR, 0xFFFFFFF0);
		break;
	case GS_H_TOC_LIES:
		if (toc && toc->len >= 24 + 2 * 64) {
			buf_set_u32be(toc, 24 + 12, 0xFFFFFFFF);
			buf_set_u32be(toc, toc->len - (toc->len - 24) / 2 + 4, 0x0BADBAD0);
		}
		break;
	case GS_H_BACKREF: /* format 2: the first section's first command reaches back */
		if (sf->len > at[0] + SF_HDR + 0x50 + 8 && !sf->count_only) {
			uint8_t *p = sf->data + at[0] + SF_HDR + 0x50;
			size_t hl = (p[0] & 0x80 ? 4 : 3) * (p[0] & 1 ? 2 : 1) + 2;

			p[hl] = 0x1C; /* copy 10 bytes from 100 back, before any output */
			p[hl + 1] = 99;
		}
		break;
	default:
		break;
	}
}

enum rc gen_stream(const struct gen_stream_opts *o, enum gen_stream_hostile h, struct buf *sf,
		   struct buf *toc, struct gen_big_manifest *m)
{
	uint32_t n = o->assets ? o->assets : 6;
	struct buf own_sf, own_toc;
	struct prng p;
	uint64_t stamp;
	size_t at[2] = {0, 0};
	struct rp_work w = {0};
	enum rc r = RC_OK;

	if (o->format > 3 || (unsigned)h >= GS_H_COUNT)
		return RC_INVAL;
	if (!sf)
		buf_init(sf = &own_sf);
	if (!toc)
		buf_init(toc = &own_toc);
	prng_seed(&p, o->seed);
	stamp = prng_next(&p);
	buf_put(sf, "SFIL", 4);
	buf_u32be(sf, 3);
	buf_u64be(sf, stamp);
	buf_u32be(sf, SF_HDR);
	buf_u32be(sf, n);
	buf_u32be(sf, o->format);
	buf_u32be(sf, 0xFFFFFFFF);
	buf_pad_to(sf, SF_HDR);
	buf_put(toc, "ATOC", 4);
	buf_u32be(toc, 3);
	buf_u64be(toc, stamp);
	buf_u32be(toc, n);
	buf_u32be(toc, 0);
	for (uint32_t k = 0; k < n && r == RC_OK; k++) {
		struct gs_asset a = {.id = prng_next(&p)};
		struct buf st;
		size_t start = sf->len;

		buf_init(&a.arena);
		buf_init(&st);
		r = gs_arena(&p, o->x360, k, &a.arena);
		if (r == RC_OK && a.arena.oom)
			r = RC_NOMEM;
		if (r == RC_OK)
			r = gs_split(&a);
		if (r == RC_OK)
			r = gs_stored(o, &a, k, &st, &w);
		if (r == RC_OK) {
			buf_u64be(sf, a.id);
			buf_u32be(sf, (uint32_t)st.len);
			buf_u32be(sf, SF_HDR);
			buf_u32be(sf, (uint32_t)((SF_HDR + st.len + SF_HDR - 1) / SF_HDR * SF_HDR));
			buf_pad_to(sf, SF_HDR);
			buf_put(sf, st.data, st.len);
			buf_pad_to(sf, SF_HDR);
			gs_toc_record(toc, &a, o->x360);
			r = gs_row(m, &a, o->x360, (uint8_t)o->format);
		}
		if (k < 2)
			at[k] = start;
		buf_free(&st);
		buf_free(&a.arena);
	}
	rp_work_free(&w);
	if (r == RC_OK && n >= 2)
		gs_hostile(h, sf, toc, at);
	if (r == RC_OK && (sf->oom || toc->oom))
		r = RC_NOMEM;
	if (sf == &own_sf)
		buf_free(sf);
	if (toc == &own_toc)
		buf_free(toc);
	return r;
}
