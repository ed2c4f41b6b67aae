/*
 * One pass of whole-mesh counts with restart tables (skate_mesh_stats_build,
 * docs/skate-objects.md): skin counts, valid triangles and position bounds of a mesh, read in
 * large batches, with the skin rules of skate_stream.c (skate_stream_int.h).
 *
 * Hot loops read vertex and index bytes with unchecked loads: each read buffer's span is
 * checked once (count * stride bytes read, element offset + size <= stride at descriptor
 * parse), which keeps a 64 MB model's statistics pass within tens of milliseconds.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/skate/skate_stream_int.h"
#include "psgfs/base/bytes.h"

/* Bytes per read, vertex and index: the buffer stays in L2, and below the 128 KiB where an
 * allocator maps fresh pages for each call (ASan's always does). */
#define STATS_VERT_BYTES (96u << 10)
#define STATS_IDX_BYTES	 (96u << 10) /* a multiple of 3 * 4 */

/* ---- statistics ---- */

void skate_mesh_stats_free(struct skate_mesh_stats *st)
{
	if (!st)
		return;
	free(st->tri_valid_before);
	free(st->infl_before);
	free(st->psk_weights_before);
	free(st);
}

#define MEMO_BITS 12

struct skin_memo {
	uint64_t key; /* 0 = empty */
	uint8_t n, badm;
};

/* One statistics pass: the result and the first problems seen, for the diag lines. */
struct stats_run {
	struct skin_memo *memo; /* 1 << MEMO_BITS entries */
	struct skate_mesh_stats *st;
	struct sks_skin_rules k;
	const struct skate_elem *el; /* the usable elements */
	unsigned n_el;
	int pos;	     /* the position element, -1 */
	bool raw_ok;	     /* influences can be counted from undivided values (stats_raw_ok) */
	bool count_ok;	     /* ... by skin_count (stats_count_ok) */
	bool i_u8x4, w_u8x4; /* with four u8 indices / weights (read directly) */
	bool i_rev, w_rev;   /* ... in reversed byte order (is_rev_u8x4) */
	bool be;
	float lo[3], hi[3]; /* position bounds before the position divisor */
	uint32_t first_bad_vertex, first_bad_value;
	float first_bad_slot;
	uint64_t first_bad_triangle, n_bad_tri;
};

/* Components of element e of the vertex at q as stored, without the divisor. */
static inline __attribute__((always_inline)) void load_raw(const struct skate_elem *e,
							   const uint8_t *q, bool be, float out[4])
{
	unsigned cnt = e->count < 4 ? e->count : 4;

	q += e->offset;
	switch (e->ctype) {
	case SKATE_CT_S11_11_10:
	case SKATE_CT_S10_10_10:
	case SKATE_CT_S10_11_11:
		skate_packed3_decode(e->ctype, be ? ld_u32be(q) : ld_u32le(q), out);
		break;
	case SKATE_CT_U8_WORD:
		for (unsigned c = 0; c < 4; c++)
			out[c] = (float)q[be ? 3 - c : c];
		break;
	case SKATE_CT_U16:
		for (unsigned c = 0; c < cnt; c++)
			out[c] = (float)(be ? ld_u16be(q + 2 * c) : ld_u16le(q + 2 * c));
		break;
	case SKATE_CT_S16:
		for (unsigned c = 0; c < cnt; c++)
			out[c] = (float)(int16_t)(be ? ld_u16be(q + 2 * c) : ld_u16le(q + 2 * c));
		break;
	case SKATE_CT_U8:
		for (unsigned c = 0; c < cnt; c++)
			out[c] = (float)q[c];
		break;
	case SKATE_CT_F16:
		for (unsigned c = 0; c < cnt; c++)
			out[c] =
			    skate_half_to_float(be ? ld_u16be(q + 2 * c) : ld_u16le(q + 2 * c));
		break;
	default:
		for (unsigned c = 0; c < cnt; c++)
			out[c] = f32_from_bits(be ? ld_u32be(q + 4 * c) : ld_u32le(q + 4 * c));
		break;
	}
}

static void apply_divisor(const struct skate_elem *e, float v[4])
{
	if (e->divisor != 1.0f)
		for (unsigned c = 0; c < e->n_out && c < 4; c++)
			v[c] /= e->divisor;
}

/*
 * Whether influences can be counted from undivided values: no implicit weight (it needs the
 * true values), indices stored undivided, and weight divisors that cannot change a weight's
 * sign, zero-ness or finiteness (1, or >= 1 on integers).
 */
static bool stats_raw_ok(const struct sks_skin_rules *k, const struct skate_elem *el)
{
	const struct skate_elem *w = k->we >= 0 ? &el[k->we] : NULL;

	if (k->implicit || (k->ie >= 0 && el[k->ie].divisor != 1.0f))
		return false;
	return !w || w->divisor == 1.0f || (w->divisor >= 1.0f && sks_int_ctype(w->ctype));
}

/* Components of an integer element (sks_int_ctype) of the vertex at q, undivided. */
static inline __attribute__((always_inline)) void
load_ints(const struct skate_elem *e, const uint8_t *q, bool be, int32_t out[4])
{
	unsigned cnt = e->count < 4 ? e->count : 4;

	memset(out, 0, 4 * sizeof *out);
	q += e->offset;
	switch (e->ctype) {
	case SKATE_CT_U8:
		for (unsigned c = 0; c < cnt; c++)
			out[c] = q[c];
		break;
	case SKATE_CT_U8_WORD:
		for (unsigned c = 0; c < 4; c++)
			out[c] = q[be ? 3 - c : c];
		break;
	case SKATE_CT_U16:
		for (unsigned c = 0; c < cnt; c++)
			out[c] = be ? ld_u16be(q + 2 * c) : ld_u16le(q + 2 * c);
		break;
	default:
		for (unsigned c = 0; c < cnt; c++)
			out[c] = (int16_t)(be ? ld_u16be(q + 2 * c) : ld_u16le(q + 2 * c));
	}
}

static bool int_elem(const struct skate_elem *e)
{
	return sks_int_ctype(e->ctype);
}

/*
 * sks_skin_gather's count for integer indices (stats_count_ok), without a branch per component.
 * usable: bit j set when weight j is usable (positive and finite); the caller vouches that
 * the usable weights add up to a finite sum. At most four components make at most four
 * distinct bones, so none is dropped. iv holds four values (without indices 0 1 2 3);
 * components past the element are masked by k->comp_mask.
 */
static inline unsigned skin_count(const struct sks_skin_rules *k, const int32_t iv[4],
				  unsigned usable, unsigned *badm_out)
{
	unsigned use = 0, badm = 0, n;
	uint64_t seen = 0;
	int32_t b[4];

	usable &= k->comp_mask;
#pragma GCC unroll 4
	for (unsigned j = 0; j < 4; j++) {
		uint32_t slot = (uint32_t)iv[j]; /* negative slots wrap far past the palette */
		int32_t bone = slot < 256 ? k->bone_of[slot] : -1;
		unsigned ok = bone >= 0, w = usable >> j & 1;

		b[j] = bone;
		use |= (w & ok) << j;
		badm |= (w & !ok) << j;
		seen |= (uint64_t)(w & ok) << (slot & 63);
	}
	if (k->slot_unique) { /* distinct slots are distinct bones */
		n = (unsigned)__builtin_popcountll(seen);
	} else { /* distinct bones among the used components, in order */
		n = use & 1;
		n += (use >> 1 & 1) & !((use & 1) & (b[0] == b[1]));
		n += (use >> 2 & 1) &
		     !(((use & 1) & (b[0] == b[2])) | ((use >> 1 & 1) & (b[1] == b[2])));
		n += (use >> 3 & 1) &
		     !(((use & 1) & (b[0] == b[3])) | ((use >> 1 & 1) & (b[1] == b[3])) |
		       ((use >> 2 & 1) & (b[2] == b[3])));
	}
	*badm_out = badm;
	return n;
}

/* Count the components in badm (bit j: component j's slot is outside the palette). */
static inline void count_bad(unsigned badm, const int32_t iv[4], uint64_t *bad, float *first_slot)
{
	if (badm) {
		if (!*bad)
			*first_slot = (float)iv[__builtin_ctz(badm)];
		*bad += (unsigned)__builtin_popcount(badm);
	}
}

/*
 * Whether skin_count applies: indices stored as undivided integers, no implicit weight (it
 * needs the true values), and weights that are integers with a divisor >= 1 (which cannot
 * change a weight's sign; positive ones below 2^15 always add up to a finite sum) or floats
 * stored undivided (the caller checks their size).
 */
static bool stats_count_ok(const struct sks_skin_rules *k, const struct skate_elem *el)
{
	const struct skate_elem *w = k->we >= 0 ? &el[k->we] : NULL;

	if (k->rigid || k->implicit)
		return false;
	if (k->ie >= 0 && (!int_elem(&el[k->ie]) || el[k->ie].divisor != 1.0f))
		return false;
	if (k->n_palette > 256 &&
	    (k->ie < 0 || (el[k->ie].ctype != SKATE_CT_U8 && el[k->ie].ctype != SKATE_CT_U8_WORD)))
		return false; /* skin_count looks slots up in bone_of[256] */
	if (!w)
		return true;
	return int_elem(w)
		   ? w->divisor >= 1.0f
		   : (w->ctype == SKATE_CT_F32 || w->ctype == SKATE_CT_F16) && w->divisor == 1.0f;
}

/* Bit j: weight j is usable; *big when one is so large that four could overflow the sum. */
static inline unsigned usable_weights(const struct stats_run *run, const uint8_t *q, bool *big)
{
	const struct skate_elem *e = &run->el[run->k.we];
	unsigned m = 0;

	if (int_elem(e)) {
		int32_t w[4];

		load_ints(e, q, run->be, w);
		for (unsigned j = 0; j < 4; j++)
			m |= (unsigned)(w[j] > 0) << j;
		return m;
	}
	{
		float w[4] = {0};

		load_raw(e, q, run->be, w);
		for (unsigned j = 0; j < 4; j++) {
			m |= (unsigned)((w[j] > 0) & (w[j] <= 0x1p125f)) << j;
			*big |= (w[j] > 0x1p125f) & (w[j] <= FLT_MAX);
		}
	}
	return m;
}

/* usable_weights for four u8 weights, the skater layout; rev: component j is byte 3 - j (a
 * big-endian word of four u8). */
static inline unsigned usable_u8x4(const uint8_t *w, bool rev)
{
	unsigned m = (unsigned)(w[0] != 0) | (unsigned)(w[1] != 0) << 1 |
		     (unsigned)(w[2] != 0) << 2 | (unsigned)(w[3] != 0) << 3;

	return rev ? (m >> 3 & 1) | (m >> 1 & 2) | (m << 1 & 4) | (m << 3 & 8) : m;
}

static bool is_u8x4(const struct skate_elem *e)
{
	return (e->ctype == SKATE_CT_U8 && e->count == 4) || e->ctype == SKATE_CT_U8_WORD;
}

/* Whether a four-u8 element keeps component j in byte 3 - j. */
static bool is_rev_u8x4(const struct skate_elem *e, bool be)
{
	return e->ctype == SKATE_CT_U8_WORD && be;
}

/*
 * skin_count through a small direct-mapped cache keyed by the four u8 slots and the usable
 * mask: real skins repeat the same few slot sets over thousands of vertices.
 */
static inline unsigned skin_count_memo(struct stats_run *run, const uint8_t *slots,
				       const int32_t iv[4], unsigned usable, uint64_t *bad,
				       float *first_slot)
{
	uint64_t key = ld_u32le(slots) | (uint64_t)(usable & 15) << 32 | 1ull << 36;
	struct skin_memo *e = &run->memo[(key * 0x9E3779B97F4A7C15ull) >> (64 - MEMO_BITS)];

	if (e->key != key) {
		unsigned badm;

		e->n = (uint8_t)skin_count(&run->k, iv, usable, &badm);
		e->badm = (uint8_t)badm;
		e->key = key;
	}
	count_bad(e->badm, iv, bad, first_slot);
	return e->n;
}

/* The influence count of the vertex at q. */
static unsigned stats_vertex(struct stats_run *run, const uint8_t *q, uint64_t *bad,
			     float *first_slot)
{
	const struct sks_skin_rules *k = &run->k;
	struct skate_influence o[4];
	float iv[4] = {0}, wv[4] = {0}, sum;

	if (k->rigid)
		return k->no_bones ? 0 : 1;
	if (run->count_ok) {
		int32_t ii[4] = {0, 1, 2, 3};
		bool big = false;
		unsigned w = run->w_u8x4  ? usable_u8x4(q + run->el[k->we].offset, run->w_rev)
			     : k->we >= 0 ? usable_weights(run, q, &big)
					  : 1;

		unsigned n, badm;

		if (run->i_u8x4) {
			const uint8_t *p = q + run->el[k->ie].offset;

			if (run->i_rev)
				ii[0] = p[3], ii[1] = p[2], ii[2] = p[1], ii[3] = p[0];
			else
				ii[0] = p[0], ii[1] = p[1], ii[2] = p[2], ii[3] = p[3];
			if (!big)
				return skin_count_memo(run, p, ii, w, bad, first_slot);
		} else if (k->ie >= 0) {
			load_ints(&run->el[k->ie], q, run->be, ii);
		}
		if (!big) {
			n = skin_count(k, ii, w, &badm);
			count_bad(badm, ii, bad, first_slot);
			return n;
		}
	}
	if (k->ie >= 0)
		load_raw(&run->el[k->ie], q, run->be, iv);
	if (k->we >= 0)
		load_raw(&run->el[k->we], q, run->be, wv);
	if (!run->raw_ok) {
		if (k->ie >= 0)
			apply_divisor(&run->el[k->ie], iv);
		if (k->we >= 0)
			apply_divisor(&run->el[k->we], wv);
	}
	return sks_skin_gather(k, iv, wv, o, &sum, bad, first_slot);
}

/* x < lo ? x : lo, and the like: fminf/fmaxf semantics (a NaN never wins) without calls. */
#define MIN_INTO(lo, x) ((lo) = (x) < (lo) ? (x) : (lo))
#define MAX_INTO(hi, x) ((hi) = (x) > (hi) ? (x) : (hi))

/* Position bounds of `count` vertices, before the divisor: dividing by a positive constant
 * keeps the order, so it is applied once at the end. Missing components count as 0. */
static void stats_bounds(struct stats_run *run, const uint8_t *raw, size_t stride, uint32_t count)
{
	const struct skate_elem *e = &run->el[run->pos];
	/* the usual layouts, read directly: F32x3 and (skater) S16x4, big-endian */
	bool f32be = e->ctype == SKATE_CT_F32 && run->be && e->n_out >= 3;
	bool s16be = e->ctype == SKATE_CT_S16 && run->be && e->n_out >= 3;
	float x0 = run->lo[0], y0 = run->lo[1], z0 = run->lo[2];
	float x1 = run->hi[0], y1 = run->hi[1], z1 = run->hi[2];

	for (uint32_t v = 0; v < count; v++) {
		const uint8_t *q = raw + (size_t)v * stride;
		float p[4] = {0, 0, 0, 0};

		if (f32be) {
			q += e->offset;
			p[0] = f32_from_bits(ld_u32be(q));
			p[1] = f32_from_bits(ld_u32be(q + 4));
			p[2] = f32_from_bits(ld_u32be(q + 8));
		} else if (s16be) {
			q += e->offset;
			p[0] = (float)(int16_t)ld_u16be(q);
			p[1] = (float)(int16_t)ld_u16be(q + 2);
			p[2] = (float)(int16_t)ld_u16be(q + 4);
		} else {
			load_raw(e, q, run->be, p);
			if (e->n_out < 3) /* load_raw may fill more than n_out */
				memset(p + e->n_out, 0, (3 - e->n_out) * sizeof *p);
		}
		MIN_INTO(x0, p[0]);
		MIN_INTO(y0, p[1]);
		MIN_INTO(z0, p[2]);
		MAX_INTO(x1, p[0]);
		MAX_INTO(y1, p[1]);
		MAX_INTO(z1, p[2]);
	}
	run->lo[0] = x0, run->lo[1] = y0, run->lo[2] = z0;
	run->hi[0] = x1, run->hi[1] = y1, run->hi[2] = z1;
}

/* Skin counts and position bounds of `count` vertices of raw bytes, and the restart entries
 * among them. */
static void stats_chunk(struct stats_run *run, const uint8_t *raw, size_t stride, uint32_t first,
			uint32_t count)
{
	struct skate_mesh_stats *st = run->st;
	uint64_t infl = st->n_influences, psk = st->n_psk_weights, bad = st->n_bad_slots;
	uint32_t unweighted = st->n_unweighted;
	bool rigid = run->k.rigid;

	if (run->pos >= 0)
		stats_bounds(run, raw, stride, count);
	for (uint32_t v = 0; v < count; v++) { /* counts in locals: this loop is the pass */
		uint32_t at = first + v;
		uint64_t bad0 = bad;
		float slot = 0;
		unsigned n;

		if (at % SKATE_STATS_STEP == 0) {
			st->infl_before[at / SKATE_STATS_STEP] = infl;
			st->psk_weights_before[at / SKATE_STATS_STEP] = psk;
		}
		n = stats_vertex(run, raw + (size_t)v * stride, &bad, &slot);
		if (!bad0 && bad) {
			run->first_bad_vertex = at;
			run->first_bad_slot = slot;
		}
		infl += n;
		psk += n ? n : 1;
		unweighted += !rigid && n == 0;
	}
	st->n_influences = infl;
	st->n_psk_weights = psk;
	st->n_bad_slots = bad;
	st->n_unweighted = unweighted;
}

/* The usable elements, the skin rules and the position element of the mesh. */
static void stats_layout(struct stats_run *run, struct skate_elem *el, const struct skate_scene *sc,
			 const struct skate_scene_mesh *m, bool be)
{
	run->n_el = 0;
	run->pos = -1;
	for (unsigned i = 0; i < m->desc.n_el; i++)
		if (m->desc.elem[i].usable)
			el[run->n_el++] = m->desc.elem[i];
	for (unsigned i = 0; run->pos < 0 && i < run->n_el; i++)
		if (el[i].usage == SKATE_USAGE_POSITION)
			run->pos = (int)i;
	run->el = el;
	run->be = be;
	sks_skin_rules_init(&run->k, sc, m, el, run->n_el);
	run->raw_ok = stats_raw_ok(&run->k, el);
	run->count_ok = stats_count_ok(&run->k, el);
	run->i_u8x4 = run->k.ie >= 0 && is_u8x4(&el[run->k.ie]);
	run->w_u8x4 = run->k.we >= 0 && is_u8x4(&el[run->k.we]);
	run->i_rev = run->i_u8x4 && is_rev_u8x4(&el[run->k.ie], be);
	run->w_rev = run->w_u8x4 && is_rev_u8x4(&el[run->k.we], be);
	for (int c = 0; c < 3; c++) {
		run->lo[c] = INFINITY;
		run->hi[c] = -INFINITY;
	}
}

/* The vertex half of the pass: skin counts, their restart tables and position bounds. */
static enum rc stats_vertices(const struct src *s, const struct arena *a,
			      const struct skate_scene *sc, const struct skate_scene_mesh *m,
			      struct stats_run *run, uint8_t *buf)
{
	struct skate_elem el[SKATE_MAX_ELEMS];
	struct skate_mesh_stats *st = run->st;
	uint32_t step = m->stride ? STATS_VERT_BYTES / m->stride : 1;

	stats_layout(run, el, sc, m, a->big_endian);
	step = step ? step : 1;
	for (uint32_t first = 0; first < m->vertex_count; first += step) {
		uint32_t n = m->vertex_count - first < step ? m->vertex_count - first : step;
		enum rc r = src_read(s, m->vb_start + (uint64_t)first * m->stride, buf,
				     (size_t)n * m->stride);

		if (r != RC_OK)
			return r;
		stats_chunk(run, buf, m->stride, first, n);
	}
	if (m->vertex_count % SKATE_STATS_STEP == 0) {
		st->infl_before[m->vertex_count / SKATE_STATS_STEP] = st->n_influences;
		st->psk_weights_before[m->vertex_count / SKATE_STATS_STEP] = st->n_psk_weights;
	}
	for (int c = 0; c < 3; c++) {
		float d = run->pos >= 0 && (unsigned)c < run->el[run->pos].n_out
			      ? run->el[run->pos].divisor
			      : 1.0f;

		st->pos_min[c] = d != 1.0f ? run->lo[c] / d : run->lo[c];
		st->pos_max[c] = d != 1.0f ? run->hi[c] / d : run->hi[c];
	}
	return RC_OK;
}

/* Count the valid ones among k triples of index bytes p of an island with this base vertex;
 * t0 is the raw number of the first and pos0 its index position (for the first invalid
 * triple's message). */
static void stats_triples(struct stats_run *run, const struct skate_scene_mesh *m, bool be,
			  int32_t base, const uint8_t *p, uint32_t k, uint64_t t0, uint64_t pos0)
{
	struct skate_mesh_stats *st = run->st;

	for (uint32_t j = 0; j < k; j++) {
		bool ok = true;

		if ((t0 + j) % SKATE_STATS_STEP == 0)
			st->tri_valid_before[(t0 + j) / SKATE_STATS_STEP] = st->n_valid_tri;
		for (int c = 0; c < 3; c++) {
			uint32_t v = sks_index_at(p, 3 * (size_t)j + (size_t)c, m->index_width, be);

			if (base)
				v = sks_based(v, base);
			if (v < m->vertex_count)
				continue;
			if (!run->n_bad_tri) {
				run->first_bad_value = v;
				run->first_bad_triangle = (pos0 + 3 * (uint64_t)j) / 3;
			}
			ok = false;
		}
		st->n_valid_tri += ok;
		run->n_bad_tri += !ok;
	}
}

/* The index half of the pass, island by island in large reads. */
static enum rc stats_triangles(const struct src *s, const struct arena *a,
			       const struct skate_scene_mesh *m, struct stats_run *run,
			       uint8_t *buf)
{
	uint32_t per = STATS_IDX_BYTES / (3 * (m->index_width ? m->index_width : 4));

	for (uint32_t i = 0; i < m->n_islands; i++) {
		uint64_t t = m->tri_first[i], end = m->tri_first[i + 1];

		while (t < end) {
			uint32_t k = end - t < per ? (uint32_t)(end - t) : per;
			uint64_t pos = (uint64_t)m->islands[i].start + (t - m->tri_first[i]) * 3;
			enum rc r = src_read(s, m->ib_start + pos * m->index_width, buf,
					     (size_t)k * 3 * m->index_width);

			if (r != RC_OK)
				return r;
			stats_triples(run, m, a->big_endian, m->islands[i].base_vertex, buf, k, t,
				      pos);
			t += k;
		}
	}
	if (m->tri_estimate % SKATE_STATS_STEP == 0)
		run->st->tri_valid_before[m->tri_estimate / SKATE_STATS_STEP] =
		    run->st->n_valid_tri;
	return RC_OK;
}

static struct skate_mesh_stats *stats_new(const struct skate_scene_mesh *m)
{
	struct skate_mesh_stats *st = calloc(1, sizeof *st);

	if (!st)
		return NULL;
	st->n_verts = m->vertex_count;
	st->n_raw_tri = m->tri_estimate;
	st->has_bounds = m->vertex_count > 0;
	for (int c = 0; c < 3; c++) {
		st->pos_min[c] = INFINITY;
		st->pos_max[c] = -INFINITY;
	}
	st->n_vert_restart = m->vertex_count / SKATE_STATS_STEP + 1;
	st->n_tri_restart = (size_t)(m->tri_estimate / SKATE_STATS_STEP) + 1;
	st->infl_before = xcalloc_n(st->n_vert_restart, sizeof *st->infl_before);
	st->psk_weights_before = xcalloc_n(st->n_vert_restart, sizeof *st->psk_weights_before);
	st->tri_valid_before = xcalloc_n(st->n_tri_restart, sizeof *st->tri_valid_before);
	if (!st->infl_before || !st->psk_weights_before || !st->tri_valid_before) {
		skate_mesh_stats_free(st);
		return NULL;
	}
	return st;
}

enum rc skate_mesh_stats_build(const struct src *s, const struct arena *a,
			       const struct skate_scene *sc, size_t mesh,
			       struct skate_mesh_stats **out, struct diag *d)
{
	const struct skate_scene_mesh *m;
	struct stats_run run = {0};
	uint8_t *buf = NULL;
	enum rc r = sks_mesh_get(sc, mesh, &m);

	*out = NULL;
	if (r != RC_OK)
		return r;
	run.st = stats_new(m);
	run.memo = xcalloc_n(1u << MEMO_BITS, sizeof *run.memo);
	buf = malloc(STATS_VERT_BYTES > STATS_IDX_BYTES ? STATS_VERT_BYTES : STATS_IDX_BYTES);
	r = run.st && run.memo && buf ? stats_vertices(s, a, sc, m, &run, buf) : RC_NOMEM;
	if (r == RC_OK)
		r = stats_triangles(s, a, m, &run, buf);
	free(run.memo);
	free(buf);
	if (r != RC_OK) {
		skate_mesh_stats_free(run.st);
		return r;
	}
	if (!run.st->has_bounds) {
		memset(run.st->pos_min, 0, sizeof run.st->pos_min);
		memset(run.st->pos_max, 0, sizeof run.st->pos_max);
	}
	sks_skin_diag(d, mesh, m->n_palette, run.st->n_bad_slots, run.first_bad_vertex,
		      run.first_bad_slot, run.st->n_unweighted);
	sks_tri_diag(d, mesh, m->vertex_count, run.n_bad_tri, run.first_bad_value,
		     run.first_bad_triangle);
	*out = run.st;
	return RC_OK;
}
