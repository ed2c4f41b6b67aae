/*
 * Streaming decode of one mesh (docs/skate-objects.md, "Vertex descriptor",
 * "RenderOptiMeshData"): any range of vertices with their skin, any range of raw index
 * triples, and one pass of whole-mesh counts with restart tables, all in memory bounded by
 * batch buffers. The skin rules live here once (skin_vertex) and serve every caller,
 * including the whole-mesh skate_mesh_decode.
 *
 * Hot loops read vertex and index bytes with unchecked loads: each read buffer's span is
 * checked once (count * stride bytes read, element offset + size <= stride at descriptor
 * parse), which keeps a 64 MB model's statistics pass within tens of milliseconds.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_mesh.h"

#define STATS_VERT_BYTES (128u << 10) /* vertex bytes per read: the buffer stays in L2 */
#define STATS_IDX_BYTES	 (96u << 10)  /* index bytes per read (a multiple of 3 * 4) */
#define VALS_PER_ELEM	 (SKATE_VBATCH_MAX * 4u)

/* ---- the skin rules ---- */

/* Whether components of this ctype are stored as integers. */
static bool int_ctype(uint8_t ctype)
{
	return ctype == SKATE_CT_U8 || ctype == SKATE_CT_S16 || ctype == SKATE_CT_U16 ||
	       ctype == SKATE_CT_U8_WORD;
}

/* What skin_vertex needs to know about a mesh, fixed for all its vertices. */
struct skin_rules {
	const int32_t *palette; /* global bone per slot, -1 = dropped */
	uint32_t n_palette;
	int ie, we;	      /* element (in skate_vbatch order) of indices / weights, -1 */
	unsigned ni, nw;      /* their floats per vertex */
	bool implicit;	      /* three weights for four indices: the last is 1 - sum */
	bool rigid;	      /* no blend elements: every vertex on one bone */
	uint32_t rigid_to;    /* that bone */
	bool no_bones;	      /* rigid and no skeleton: no influence at all */
	bool int_slots;	      /* the indices are stored as integers: always whole */
	uint8_t comp_mask;    /* bit j: blend component j exists (j < ni, or nw without indices) */
	int32_t bone_of[256]; /* the palette of the first 256 slots, -1 past it or dropped */
	bool slot_unique;     /* <= 64 slots, no two naming the same bone */
};

static void skin_rules_init(struct skin_rules *k, const struct skate_scene *sc,
			    const struct skate_scene_mesh *m, const struct skate_elem *el,
			    unsigned n_el)
{
	memset(k, 0, sizeof *k);
	k->palette = m->palette;
	k->n_palette = m->n_palette;
	k->ie = k->we = -1;
	for (unsigned i = 0; i < n_el; i++) {
		if (el[i].usage == SKATE_USAGE_BLEND_INDICES && k->ie < 0)
			k->ie = (int)i;
		if (el[i].usage == SKATE_USAGE_BLEND_WEIGHTS && k->we < 0)
			k->we = (int)i;
	}
	k->ni = k->ie >= 0 ? el[k->ie].n_out : 0;
	k->int_slots = k->ie >= 0 && el[k->ie].divisor == 1.0f && int_ctype(el[k->ie].ctype);
	k->nw = k->we >= 0 ? el[k->we].n_out : 0;
	k->implicit = k->ie >= 0 && k->we >= 0 && k->nw == k->ni - 1;
	k->rigid = k->ie < 0 && k->we < 0;
	k->comp_mask = (uint8_t)((1u << (k->ie >= 0 ? k->ni : k->nw)) - 1);
	for (uint32_t i = 0; i < 256; i++)
		k->bone_of[i] = i < m->n_palette ? m->palette[i] : -1;
	k->slot_unique = m->n_palette <= 64;
	for (uint32_t i = 0; k->slot_unique && i < m->n_palette; i++)
		for (uint32_t j = 0; j < i; j++)
			if (m->palette[i] >= 0 && m->palette[i] == m->palette[j])
				k->slot_unique = false;
	k->rigid_to = m->n_palette && m->palette[0] >= 0 ? (uint32_t)m->palette[0] : 0;
	k->no_bones = k->rigid && sc->n_bones == 0;
}

static void add_infl(struct skate_influence *v, unsigned *n, uint32_t bone, float w)
{
	for (unsigned i = 0; i < *n; i++)
		if (v[i].bone == bone) {
			v[i].weight += w;
			return;
		}
	if (*n < 4) {
		v[*n].bone = bone;
		v[*n].weight = w;
		(*n)++;
	}
}

/* The weight of blend component j, 0 when it has none. */
static float skin_weight(const struct skin_rules *k, const float *wv, float sum, unsigned j)
{
	if (k->we < 0)
		return j == 0 ? 1.0f : 0.0f;
	if (j < k->nw)
		return wv[j];
	return k->implicit ? 1.0f - sum : 0.0f;
}

/*
 * One vertex's influences from its decoded indices iv and weights wv (NULL when the mesh has
 * none), before normalisation: *sum gets their total. Returns their number, 0 when the
 * weights add up to nothing (unweighted). *bad counts blend indices outside the palette and
 * *first_slot gets the first such value when *bad was 0.
 */
static unsigned skin_gather(const struct skin_rules *k, const float *iv, const float *wv,
			    struct skate_influence o[4], float *sum, uint64_t *bad,
			    float *first_slot)
{
	unsigned n = 0, ns = k->ie >= 0 ? k->ni : k->nw;
	float wsum = 0;

	if (k->rigid) {
		*sum = 1.0f;
		if (k->no_bones)
			return 0;
		o[0] = (struct skate_influence){k->rigid_to, 1.0f};
		return 1;
	}
	if (k->implicit)
		for (unsigned j = 0; j < k->nw; j++)
			wsum += wv[j];
	for (unsigned j = 0; j < ns; j++) {
		float w = skin_weight(k, wv, wsum, j), sf = k->ie >= 0 ? iv[j] : (float)j;
		uint32_t slot;

		if (!(w > 0) || !isfinite(w))
			continue;
		if (!(sf >= 0) || sf >= 65536.0f || (!k->int_slots && sf != floorf(sf)) ||
		    (slot = (uint32_t)sf) >= k->n_palette || k->palette[slot] < 0) {
			if (!(*bad)++)
				*first_slot = sf;
			continue;
		}
		add_infl(o, &n, (uint32_t)k->palette[slot], w);
	}
	*sum = 0;
	for (unsigned j = 0; j < n; j++)
		*sum += o[j].weight;
	return n && *sum > 0 && isfinite(*sum) ? n : 0;
}

/* skin_gather, normalised to sum 1. */
static unsigned skin_vertex(const struct skin_rules *k, const float *iv, const float *wv,
			    struct skate_influence o[4], uint64_t *bad, float *first_slot)
{
	float sum;
	unsigned n = skin_gather(k, iv, wv, o, &sum, bad, first_slot);

	if (k->rigid)
		return n;
	for (unsigned j = 0; j < n; j++)
		o[j].weight /= sum;
	return n;
}

/* ---- element columns ---- */

/* The loop of one element over n vertices; LOAD reads component c of the vertex at q. */
#define COLUMN(LOAD)                                                                               \
	for (uint32_t v = 0; v < n; v++) {                                                         \
		const uint8_t *q = base + (size_t)v * stride;                                      \
		float *o = out + (size_t)v * os;                                                   \
		for (unsigned c = 0; c < cnt; c++)                                                 \
			o[c] = (LOAD);                                                             \
	}

/*
 * Decode element e of n vertices (vertex v at base + v * stride; the caller checked that the
 * bytes are there and e is usable) to out, os floats apart. Bit-identical to
 * skate_elem_decode.
 */
static void decode_column(const struct skate_elem *e, const uint8_t *base, size_t stride,
			  uint32_t n, bool be, float *out, unsigned os)
{
	unsigned cnt = e->count < 4 ? e->count : 4;

	base += e->offset;
	switch (e->ctype) {
	case SKATE_CT_S11_11_10:
	case SKATE_CT_S10_10_10:
	case SKATE_CT_S10_11_11:
		for (uint32_t v = 0; v < n; v++) {
			const uint8_t *q = base + (size_t)v * stride;

			skate_packed3_decode(e->ctype, be ? ld_u32be(q) : ld_u32le(q),
					     out + (size_t)v * os);
		}
		break;
	case SKATE_CT_U8_WORD: /* x is the word's low byte: the last in memory when be */
		if (be)
			COLUMN((float)q[3 - c])
		else
			COLUMN((float)q[c])
		break;
	case SKATE_CT_U16:
		if (be)
			COLUMN((float)ld_u16be(q + 2 * c))
		else
			COLUMN((float)ld_u16le(q + 2 * c))
		break;
	case SKATE_CT_S16:
		if (be)
			COLUMN((float)(int16_t)ld_u16be(q + 2 * c))
		else
			COLUMN((float)(int16_t)ld_u16le(q + 2 * c))
		break;
	case SKATE_CT_U8:
		COLUMN((float)q[c])
		break;
	case SKATE_CT_F16:
		if (be)
			COLUMN(skate_half_to_float(ld_u16be(q + 2 * c)))
		else
			COLUMN(skate_half_to_float(ld_u16le(q + 2 * c)))
		break;
	default:
		if (be)
			COLUMN(f32_from_bits(ld_u32be(q + 4 * c)))
		else
			COLUMN(f32_from_bits(ld_u32le(q + 4 * c)))
		break;
	}
	if (e->divisor != 1.0f)
		for (uint32_t v = 0; v < n; v++)
			for (unsigned c = 0; c < e->n_out && c < 4; c++)
				out[(size_t)v * os + c] /= e->divisor;
}

/* ---- vertex batches ---- */

void skate_vbatch_init(struct skate_vbatch *b)
{
	memset(b, 0, sizeof *b);
}

void skate_vbatch_free(struct skate_vbatch *b)
{
	free(b->n_infl);
	free(b->infl);
	free(b->unweighted);
	free(b->raw);
	free(b->vals);
	skate_vbatch_init(b);
}

uint32_t skate_vbatch_cap(const struct skate_scene_mesh *m)
{
	uint32_t cap = m->stride ? SKATE_VBATCH_BYTES / m->stride : SKATE_VBATCH_MAX;

	if (cap > SKATE_VBATCH_MAX)
		cap = SKATE_VBATCH_MAX;
	return cap ? cap : 1;
}

/* Buffers for SKATE_VBATCH_MAX vertices and raw_bytes of vertex data. */
static enum rc vbatch_room(struct skate_vbatch *b, size_t raw_bytes)
{
	/* Not zeroed: every byte is written before it is read, and zeroing 1 MiB per batch
	 * cost more than decoding a 128 KiB piece of export. */
	if (!b->cap) {
		b->n_infl = xrealloc_n(NULL, SKATE_VBATCH_MAX, sizeof *b->n_infl);
		b->infl = xrealloc_n(NULL, SKATE_VBATCH_MAX, sizeof *b->infl);
		b->unweighted = xrealloc_n(NULL, SKATE_VBATCH_MAX, sizeof *b->unweighted);
		b->vals =
		    xrealloc_n(NULL, (size_t)SKATE_MAX_ELEMS * VALS_PER_ELEM, sizeof *b->vals);
		if (!b->n_infl || !b->infl || !b->unweighted || !b->vals) {
			skate_vbatch_free(b);
			return RC_NOMEM;
		}
		b->cap = SKATE_VBATCH_MAX;
	}
	if (raw_bytes > b->raw_cap) {
		uint8_t *p = realloc(b->raw, raw_bytes);

		if (!p)
			return RC_NOMEM;
		b->raw = p;
		b->raw_cap = raw_bytes;
	}
	return RC_OK;
}

/* The mesh, when it exists and can be decoded. */
static enum rc mesh_get(const struct skate_scene *sc, size_t mesh,
			const struct skate_scene_mesh **m)
{
	if (mesh >= sc->n_meshes)
		return RC_NOENT;
	*m = &sc->meshes[mesh];
	return (*m)->ok ? RC_OK : RC_CORRUPT;
}

/* The usable elements of the mesh into b->elem / b->v. */
static void vbatch_layout(struct skate_vbatch *b, const struct skate_scene_mesh *m)
{
	b->n_elem = 0;
	for (unsigned i = 0; i < m->desc.n_el; i++) {
		if (!m->desc.elem[i].usable)
			continue;
		b->elem[b->n_elem] = m->desc.elem[i];
		b->v[b->n_elem] = b->vals + (size_t)b->n_elem * VALS_PER_ELEM;
		b->n_elem++;
	}
}

/* The skin of b's vertices from their decoded blend elements. */
static void vbatch_skin(struct skate_vbatch *b, const struct skin_rules *k)
{
	b->n_unweighted = 0;
	b->n_bad_slots = 0;
	for (uint32_t v = 0; v < b->count; v++) {
		const float *iv = k->ie >= 0 ? b->v[k->ie] + (size_t)v * k->ni : NULL;
		const float *wv = k->we >= 0 ? b->v[k->we] + (size_t)v * k->nw : NULL;
		uint64_t bad = b->n_bad_slots;

		b->n_infl[v] = (uint8_t)skin_vertex(k, iv, wv, b->infl[v], &b->n_bad_slots,
						    &b->first_bad_slot);
		if (!bad && b->n_bad_slots)
			b->first_bad_vertex = b->first + v;
		b->unweighted[v] = !k->rigid && b->n_infl[v] == 0;
		b->n_unweighted += b->unweighted[v];
	}
}

static bool wanted(const struct skate_vbatch *b, unsigned usage)
{
	/* the skin needs both blend elements whichever one was asked for */
	uint32_t blend = 1u << SKATE_USAGE_BLEND_INDICES | 1u << SKATE_USAGE_BLEND_WEIGHTS;
	uint32_t w = b->want & blend ? b->want | blend : b->want;

	return b->want == 0 || (w >> usage & 1);
}

/* Read and decode b->count vertices from b->first. */
static enum rc vbatch_fill(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			   const struct skate_scene_mesh *m, struct skate_vbatch *b)
{
	size_t bytes = (size_t)b->count * m->stride;
	struct skin_rules k;
	enum rc r = vbatch_room(b, bytes);

	if (r == RC_OK)
		r = src_read(s, m->vb_start + (uint64_t)b->first * m->stride, b->raw, bytes);
	if (r != RC_OK)
		return r;
	vbatch_layout(b, m);
	skin_rules_init(&k, sc, m, b->elem, b->n_elem);
	for (unsigned i = 0; i < b->n_elem; i++)
		if (wanted(b, b->elem[i].usage))
			decode_column(&b->elem[i], b->raw, m->stride, b->count, a->big_endian,
				      b->v[i], b->elem[i].n_out);
	if (wanted(b, SKATE_USAGE_BLEND_INDICES) || wanted(b, SKATE_USAGE_BLEND_WEIGHTS))
		vbatch_skin(b, &k);
	else
		memset(b->n_infl, 0, b->count);
	return RC_OK;
}

enum rc skate_mesh_read_vertices(const struct src *s, const struct arena *a,
				 const struct skate_scene *sc, size_t mesh, uint32_t first,
				 uint32_t count, struct skate_vbatch *b)
{
	const struct skate_scene_mesh *m;
	enum rc r = mesh_get(sc, mesh, &m);
	uint32_t cap;

	b->first = first;
	b->count = 0;
	if (r != RC_OK)
		return r;
	if (first > m->vertex_count)
		return RC_BOUNDS;
	cap = skate_vbatch_cap(m);
	b->count = count < cap ? count : cap;
	if (b->count > m->vertex_count - first)
		b->count = m->vertex_count - first;
	return vbatch_fill(s, a, sc, m, b);
}

/* ---- triangle batches ---- */

void skate_tbatch_init(struct skate_tbatch *b)
{
	memset(b, 0, sizeof *b);
}

void skate_tbatch_free(struct skate_tbatch *b)
{
	free(b->tri);
	free(b->raw);
	skate_tbatch_init(b);
}

/* The island holding raw triple t (t < tri_first[n_islands]). */
static uint32_t island_of(const struct skate_scene_mesh *m, uint64_t t)
{
	uint32_t lo = 0, hi = m->n_islands;

	while (hi - lo > 1) { /* last i with tri_first[i] <= t */
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->tri_first[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	while (m->tri_first[lo + 1] <= t) /* skip empty islands */
		lo++;
	return lo;
}

/* Index value k of a buffer of width-byte indices. */
static inline uint32_t index_at(const uint8_t *p, size_t k, uint32_t width, bool be)
{
	if (width == 2)
		return be ? ld_u16be(p + 2 * k) : ld_u16le(p + 2 * k);
	return be ? ld_u32be(p + 4 * k) : ld_u32le(p + 4 * k);
}

/* The vertex an index value names in an island with this base vertex; UINT32_MAX (never a
 * vertex) when the sum leaves 0..UINT32_MAX - 1. */
static inline uint32_t based(uint32_t v, int32_t base)
{
	int64_t x = (int64_t)v + base;

	return x < 0 || x >= UINT32_MAX ? UINT32_MAX : (uint32_t)x;
}

/* Decode k triples of island i starting at its raw triple t into b->tri[at..]. */
static void tbatch_decode(struct skate_tbatch *b, const struct skate_scene_mesh *m, bool be,
			  uint32_t i, uint64_t t, uint32_t k, uint32_t at)
{
	uint64_t pos0 = (uint64_t)m->islands[i].start + (t - m->tri_first[i]) * 3;
	int32_t base = m->islands[i].base_vertex;

	for (uint32_t j = 0; j < k; j++) {
		struct skate_tri *o = &b->tri[at + j];

		o->island = i;
		o->valid = true;
		for (int c = 0; c < 3; c++) {
			o->v[c] = index_at(b->raw, 3 * (size_t)j + (size_t)c, m->index_width, be);
			if (base)
				o->v[c] = based(o->v[c], base);
			if (o->v[c] < m->vertex_count)
				continue;
			if (!b->n_invalid) {
				b->first_bad_value = o->v[c];
				b->first_bad_triangle = (pos0 + 3 * (uint64_t)j) / 3;
			}
			o->valid = false;
		}
		b->n_invalid += !o->valid;
	}
}

enum rc skate_mesh_read_triangles(const struct src *s, const struct arena *a,
				  const struct skate_scene *sc, size_t mesh, uint64_t first_raw,
				  uint32_t count, struct skate_tbatch *b)
{
	const struct skate_scene_mesh *m;
	enum rc r = mesh_get(sc, mesh, &m);
	uint32_t done = 0;

	b->first = first_raw;
	b->count = 0;
	b->n_invalid = 0;
	if (r != RC_OK)
		return r;
	if (first_raw > m->tri_estimate)
		return RC_BOUNDS;
	if (count > SKATE_TBATCH_MAX)
		count = SKATE_TBATCH_MAX;
	if (count > m->tri_estimate - first_raw)
		count = (uint32_t)(m->tri_estimate - first_raw);
	if (!b->tri) {
		b->tri = xcalloc_n(SKATE_TBATCH_MAX, sizeof *b->tri);
		b->raw = xcalloc_n(SKATE_TBATCH_MAX, 12);
		if (!b->tri || !b->raw) {
			skate_tbatch_free(b);
			return RC_NOMEM;
		}
	}
	while (done < count) {
		uint64_t t = first_raw + done;
		uint32_t i = island_of(m, t);
		uint64_t left = m->tri_first[i + 1] - t;
		uint32_t k = count - done < left ? count - done : (uint32_t)left;
		uint64_t pos = (uint64_t)m->islands[i].start + (t - m->tri_first[i]) * 3;

		r = src_read(s, m->ib_start + pos * m->index_width, b->raw,
			     (size_t)k * 3 * m->index_width);
		if (r != RC_OK)
			return r;
		tbatch_decode(b, m, a->big_endian, i, t, k, done);
		done += k;
	}
	b->count = count;
	return RC_OK;
}

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
	struct skin_rules k;
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
static bool stats_raw_ok(const struct skin_rules *k, const struct skate_elem *el)
{
	const struct skate_elem *w = k->we >= 0 ? &el[k->we] : NULL;

	if (k->implicit || (k->ie >= 0 && el[k->ie].divisor != 1.0f))
		return false;
	return !w || w->divisor == 1.0f || (w->divisor >= 1.0f && int_ctype(w->ctype));
}

/* Components of an integer element (int_ctype) of the vertex at q, undivided. */
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
	return int_ctype(e->ctype);
}

/*
 * skin_gather's count for integer indices (stats_count_ok), without a branch per component.
 * usable: bit j set when weight j is usable (positive and finite); the caller vouches that
 * the usable weights add up to a finite sum. At most four components make at most four
 * distinct bones, so none is dropped. iv holds four values (without indices 0 1 2 3);
 * components past the element are masked by k->comp_mask.
 */
static inline unsigned skin_count(const struct skin_rules *k, const int32_t iv[4], unsigned usable,
				  unsigned *badm_out)
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
static bool stats_count_ok(const struct skin_rules *k, const struct skate_elem *el)
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
	const struct skin_rules *k = &run->k;
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
	return skin_gather(k, iv, wv, o, &sum, bad, first_slot);
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
	skin_rules_init(&run->k, sc, m, el, run->n_el);
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
			uint32_t v = index_at(p, 3 * (size_t)j + (size_t)c, m->index_width, be);

			if (base)
				v = based(v, base);
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

/* The diag lines skate_mesh_decode has always written for these problems. */
static void skin_diag(struct diag *d, size_t mi, uint32_t n_palette, uint64_t bad, uint32_t first_v,
		      float first_slot, uint32_t unweighted)
{
	if (bad)
		diag_add(d,
			 "mesh %zu: %llu blend indices outside the palette (%u slots) dropped; "
			 "first: vertex %llu slot %g",
			 mi, (unsigned long long)bad, n_palette, (unsigned long long)first_v,
			 (double)first_slot);
	if (unweighted)
		diag_add(d, "mesh %zu: %u skinned vertices have no usable weight", mi, unweighted);
}

static void tri_diag(struct diag *d, size_t mi, uint32_t n_verts, uint64_t bad, uint32_t value,
		     uint64_t triangle)
{
	if (bad)
		diag_add(d,
			 "mesh %zu: %llu triangles reference vertices past the vertex count %u, "
			 "dropped; first: index value %llu in triangle %llu",
			 mi, (unsigned long long)bad, n_verts, (unsigned long long)value,
			 (unsigned long long)triangle);
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
	enum rc r = mesh_get(sc, mesh, &m);

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
	skin_diag(d, mesh, m->n_palette, run.st->n_bad_slots, run.first_bad_vertex,
		  run.first_bad_slot, run.st->n_unweighted);
	tri_diag(d, mesh, m->vertex_count, run.n_bad_tri, run.first_bad_value,
		 run.first_bad_triangle);
	*out = run.st;
	return RC_OK;
}

/* ---- one mesh decoded whole ---- */

#define MAX_DECODE_VERTS (1u << 26)

void skate_mesh_data_free(struct skate_mesh_data *md)
{
	if (!md)
		return;
	for (unsigned i = 0; i < md->n_attr; i++)
		free(md->attr[i].v);
	free(md->n_infl);
	free(md->infl);
	free(md->tri);
	free(md->tri_island);
	free(md);
}

size_t skate_mesh_data_bytes(const struct skate_mesh_data *md)
{
	size_t t;

	if (!md)
		return 0;
	t = sizeof *md + md->n_tri * (sizeof *md->tri + sizeof *md->tri_island);
	for (unsigned i = 0; i < md->n_attr; i++)
		t += (size_t)md->n_verts * md->attr[i].n * sizeof(float);
	if (md->infl)
		t += (size_t)md->n_verts * (sizeof *md->infl + 1);
	return t;
}

/* The usage in the PS3 element numbering, for renderers written against skate_etype. */
static uint8_t legacy_type(const struct skate_elem *e)
{
	static const uint8_t t[] = {
	    [SKATE_USAGE_POSITION] = SKATE_ET_XYZ,
	    [SKATE_USAGE_NORMAL] = SKATE_ET_NORMAL,
	    [SKATE_USAGE_TANGENT] = SKATE_ET_TANGENT,
	    [SKATE_USAGE_BINORMAL] = SKATE_ET_BINORMAL,
	    [SKATE_USAGE_COLOR] = SKATE_ET_COLOR,
	    [SKATE_USAGE_SPECULAR] = SKATE_ET_SPECULAR,
	    [SKATE_USAGE_BLEND_WEIGHTS] = SKATE_ET_WEIGHTS,
	    [SKATE_USAGE_BLEND_INDICES] = SKATE_ET_INDICES,
	};

	if (e->usage == SKATE_USAGE_TEXCOORD && e->set < 6)
		return (uint8_t)(SKATE_ET_TEX0 + e->set);
	if (e->usage < sizeof t / sizeof t[0] && e->usage != SKATE_USAGE_TEXCOORD)
		return t[e->usage];
	return e->stored_type;
}

/* Which of the decoded mesh's attribute indices an element fills, NULL for none. */
static int *attr_slot(struct skate_mesh_data *md, const struct skate_elem *e)
{
	switch (e->usage) {
	case SKATE_USAGE_POSITION:
		return &md->pos;
	case SKATE_USAGE_NORMAL:
		return &md->normal;
	case SKATE_USAGE_TANGENT:
		return &md->tangent;
	case SKATE_USAGE_BINORMAL:
		return &md->binormal;
	case SKATE_USAGE_COLOR:
		return &md->color;
	case SKATE_USAGE_BLEND_WEIGHTS:
		return &md->weights;
	case SKATE_USAGE_BLEND_INDICES:
		return &md->indices;
	case SKATE_USAGE_TEXCOORD:
		return e->set < 6 ? &md->tex[e->set] : NULL;
	default:
		return NULL;
	}
}

/* An empty decoded mesh with room for every usable element and the skin. */
static struct skate_mesh_data *md_new(const struct skate_scene_mesh *m)
{
	struct skate_mesh_data *md = calloc(1, sizeof *md);

	if (!md)
		return NULL;
	md->n_verts = m->vertex_count;
	md->pos = md->normal = md->tangent = md->binormal = md->color = md->weights = -1;
	md->indices = -1;
	for (int i = 0; i < 6; i++)
		md->tex[i] = -1;
	md->n_infl = xcalloc_n(md->n_verts, 1);
	md->infl = xcalloc_n(md->n_verts, sizeof *md->infl);
	if (!md->n_infl || !md->infl)
		goto nomem;
	for (unsigned i = 0; i < m->desc.n_el; i++) {
		const struct skate_elem *e = &m->desc.elem[i];
		struct skate_attr *at = &md->attr[md->n_attr];
		int *slot;

		if (!e->usable)
			continue;
		slot = attr_slot(md, e);
		at->e = *e;
		at->type = legacy_type(e);
		at->n = e->n_out;
		at->v = xcalloc_n((size_t)md->n_verts * at->n, sizeof(float));
		if (!at->v)
			goto nomem;
		md->n_attr++;
		if (slot && *slot < 0)
			*slot = (int)md->n_attr - 1;
	}
	return md;
nomem:
	skate_mesh_data_free(md);
	return NULL;
}

/* Every vertex and its skin, batch by batch. */
static enum rc md_vertices(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			   size_t mesh, struct skate_mesh_data *md, struct diag *d)
{
	struct skate_vbatch b;
	uint64_t bad = 0;
	uint32_t first_v = 0;
	float first_slot = 0;
	enum rc r = RC_OK;

	skate_vbatch_init(&b);
	for (uint32_t first = 0; first < md->n_verts && r == RC_OK; first += b.count) {
		r = skate_mesh_read_vertices(s, a, sc, mesh, first, SKATE_VBATCH_MAX, &b);
		if (r != RC_OK)
			break;
		for (unsigned k = 0; k < md->n_attr; k++)
			memcpy(md->attr[k].v + (size_t)first * md->attr[k].n, b.v[k],
			       (size_t)b.count * md->attr[k].n * sizeof(float));
		memcpy(md->n_infl + first, b.n_infl, b.count);
		memcpy(md->infl + first, b.infl, (size_t)b.count * sizeof *b.infl);
		if (!bad && b.n_bad_slots) {
			first_v = b.first_bad_vertex;
			first_slot = b.first_bad_slot;
		}
		bad += b.n_bad_slots;
		md->n_unweighted += b.n_unweighted;
	}
	skate_vbatch_free(&b);
	if (r == RC_OK)
		skin_diag(d, mesh, sc->meshes[mesh].n_palette, bad, first_v, first_slot,
			  md->n_unweighted);
	return r;
}

/* Every valid triangle in island order. */
static enum rc md_triangles(const struct src *s, const struct arena *a,
			    const struct skate_scene *sc, size_t mesh, struct skate_mesh_data *md,
			    struct diag *d)
{
	const struct skate_scene_mesh *m = &sc->meshes[mesh];
	struct skate_tbatch b;
	uint64_t bad = 0, bad_t = 0;
	uint32_t bad_v = 0;
	enum rc r = RC_OK;

	md->tri = xcalloc_n((size_t)m->tri_estimate, sizeof *md->tri);
	md->tri_island = xcalloc_n((size_t)m->tri_estimate, sizeof *md->tri_island);
	if (!md->tri || !md->tri_island)
		return RC_NOMEM;
	skate_tbatch_init(&b);
	for (uint64_t t = 0; t < m->tri_estimate; t += b.count) {
		r = skate_mesh_read_triangles(s, a, sc, mesh, t, SKATE_TBATCH_MAX, &b);
		if (r != RC_OK)
			break;
		for (uint32_t j = 0; j < b.count; j++) {
			if (!b.tri[j].valid)
				continue;
			memcpy(md->tri[md->n_tri], b.tri[j].v, sizeof b.tri[j].v);
			md->tri_island[md->n_tri++] = b.tri[j].island;
		}
		if (!bad && b.n_invalid) {
			bad_v = b.first_bad_value;
			bad_t = b.first_bad_triangle;
		}
		bad += b.n_invalid;
	}
	skate_tbatch_free(&b);
	if (r == RC_OK)
		tri_diag(d, mesh, md->n_verts, bad, bad_v, bad_t);
	return r;
}

enum rc skate_mesh_decode(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			  size_t mesh, struct skate_mesh_data **out, struct diag *diag)
{
	const struct skate_scene_mesh *m;
	struct skate_mesh_data *md;
	enum rc r = mesh_get(sc, mesh, &m);

	*out = NULL;
	if (r != RC_OK)
		return r;
	if (m->vertex_count > MAX_DECODE_VERTS) {
		diag_add(diag, "mesh %zu: %u vertices, more than the %u decoded", mesh,
			 m->vertex_count, MAX_DECODE_VERTS);
		return RC_UNSUPPORTED;
	}
	md = md_new(m);
	if (!md)
		return RC_NOMEM;
	r = md->pos < 0 ? RC_CORRUPT : md_vertices(s, a, sc, mesh, md, diag);
	if (r == RC_OK)
		r = md_triangles(s, a, sc, mesh, md, diag);
	if (r != RC_OK) {
		skate_mesh_data_free(md);
		return r;
	}
	*out = md;
	return RC_OK;
}
