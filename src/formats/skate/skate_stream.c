/*
 * Streaming decode of one mesh (docs/skate-objects.md, "Vertex descriptor",
 * "RenderOptiMeshData"): any range of vertices with their skin and any range of raw index
 * triples, in memory bounded by batch buffers. The skin rules live here once (skin_vertex,
 * sks_skin_gather) and serve every caller: the statistics pass (skate_mesh_stats.c) and the
 * whole-mesh decode (skate_mesh_decode.c) too, through skate_stream_int.h.
 *
 * Hot loops read vertex and index bytes with unchecked loads: each read buffer's span is
 * checked once (count * stride bytes read, element offset + size <= stride at descriptor
 * parse).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/skate/skate_stream_int.h"
#include "psgfs/base/bytes.h"

/* ---- the skin rules ---- */

void sks_skin_rules_init(struct sks_skin_rules *k, const struct skate_scene *sc,
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
	k->int_slots = k->ie >= 0 && el[k->ie].divisor == 1.0f && sks_int_ctype(el[k->ie].ctype);
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
static float skin_weight(const struct sks_skin_rules *k, const float *wv, float sum, unsigned j)
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
unsigned sks_skin_gather(const struct sks_skin_rules *k, const float *iv, const float *wv,
			 struct skate_influence o[4], float *sum, uint64_t *bad, float *first_slot)
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

/* sks_skin_gather, normalised to sum 1. */
static unsigned skin_vertex(const struct sks_skin_rules *k, const float *iv, const float *wv,
			    struct skate_influence o[4], uint64_t *bad, float *first_slot)
{
	float sum;
	unsigned n = sks_skin_gather(k, iv, wv, o, &sum, bad, first_slot);

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

/* The per-vertex rows and values, not the raw bytes. */
static void vbatch_free_rows(struct skate_vbatch *b)
{
	free(b->n_infl);
	free(b->infl);
	free(b->unweighted);
	free(b->vals);
	b->n_infl = NULL;
	b->infl = NULL;
	b->unweighted = NULL;
	b->vals = NULL;
	b->cap = 0;
	b->vals_cap = 0;
}

void skate_vbatch_free(struct skate_vbatch *b)
{
	vbatch_free_rows(b);
	free(b->raw);
	skate_vbatch_init(b);
}

uint32_t skate_vbatch_cap(const struct skate_scene_mesh *m)
{
	uint32_t cap = m->stride ? SKATE_VBATCH_BYTES / m->stride : SKATE_VBATCH_MAX;

	if (cap > SKATE_VBATCH_MAX)
		cap = SKATE_VBATCH_MAX;
	return cap ? cap : 1;
}

/* Elements of the mesh vbatch_layout keeps. */
static unsigned usable_elems(const struct skate_scene_mesh *m)
{
	unsigned n = 0;

	for (unsigned i = 0; i < m->desc.n_el; i++)
		n += m->desc.elem[i].usable;
	return n;
}

/*
 * Room for b->count vertices of n_elem elements and raw_bytes of vertex data. Sized by the
 * call, not by SKATE_VBATCH_MAX: most meshes are far smaller than a full batch, and a
 * mebibyte per batch is a fresh mmap, page faults and clearing (the export renders one batch
 * per piece). Kept between calls and grown only; nothing is copied when it grows, and nothing
 * is zeroed: every byte is written before it is read.
 */
static enum rc vbatch_room(struct skate_vbatch *b, unsigned n_elem, size_t raw_bytes)
{
	uint32_t n = b->count ? b->count : 1, cap = n > b->cap ? n : b->cap;
	size_t vals = (size_t)(n_elem ? n_elem : 1) * cap * 4;

	if (cap > b->cap || vals > b->vals_cap) {
		vbatch_free_rows(b);
		b->n_infl = xrealloc_n(NULL, cap, sizeof *b->n_infl);
		b->infl = xrealloc_n(NULL, cap, sizeof *b->infl);
		b->unweighted = xrealloc_n(NULL, cap, sizeof *b->unweighted);
		b->vals = xrealloc_n(NULL, vals, sizeof *b->vals);
		if (!b->n_infl || !b->infl || !b->unweighted || !b->vals) {
			vbatch_free_rows(b);
			return RC_NOMEM;
		}
		b->cap = cap;
		b->vals_cap = vals;
	}
	b->raw = xroom_n(b->raw, raw_bytes, &b->raw_cap, 1);
	return b->raw ? RC_OK : RC_NOMEM;
}

/* The mesh, when it exists and can be decoded. */
enum rc sks_mesh_get(const struct skate_scene *sc, size_t mesh, const struct skate_scene_mesh **m)
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
		b->v[b->n_elem] = b->vals + (size_t)b->n_elem * b->cap * 4;
		b->n_elem++;
	}
}

/* The skin of b's vertices from their decoded blend elements. */
static void vbatch_skin(struct skate_vbatch *b, const struct sks_skin_rules *k)
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
	struct sks_skin_rules k;
	enum rc r = vbatch_room(b, usable_elems(m), bytes);

	if (r == RC_OK)
		r = src_read(s, m->vb_start + (uint64_t)b->first * m->stride, b->raw, bytes);
	if (r != RC_OK)
		return r;
	vbatch_layout(b, m);
	sks_skin_rules_init(&k, sc, m, b->elem, b->n_elem);
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
	enum rc r = sks_mesh_get(sc, mesh, &m);
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
			o->v[c] =
			    sks_index_at(b->raw, 3 * (size_t)j + (size_t)c, m->index_width, be);
			if (base)
				o->v[c] = sks_based(o->v[c], base);
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
	enum rc r = sks_mesh_get(sc, mesh, &m);
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
		/* Not zeroed: only [0, count) is read, and tbatch_decode writes every field of
		 * those (raw: the bytes src_read fills). With a batch per piece rendered, zeroing
		 * 144 KiB was a tenth of a triangles.tsv or export render. */
		b->tri = xrealloc_n(NULL, SKATE_TBATCH_MAX, sizeof *b->tri);
		b->raw = xrealloc_n(NULL, SKATE_TBATCH_MAX, 12);
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

/* ---- the diag lines ---- */

/* The diag lines skate_mesh_decode has always written for these problems. */
void sks_skin_diag(struct diag *d, size_t mi, uint32_t n_palette, uint64_t bad, uint32_t first_v,
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

void sks_tri_diag(struct diag *d, size_t mi, uint32_t n_verts, uint64_t bad, uint32_t value,
		  uint64_t triangle)
{
	if (bad)
		diag_add(d,
			 "mesh %zu: %llu triangles reference vertices past the vertex count %u, "
			 "dropped; first: index value %llu in triangle %llu",
			 mi, (unsigned long long)bad, n_verts, (unsigned long long)value,
			 (unsigned long long)triangle);
}
