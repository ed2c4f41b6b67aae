/*
 * PSA sequences as glTF animations (docs/gltf.md): the bones as the joints of a skin no mesh
 * uses (so importers build an armature), each sequence one animation sampled at its own rate with
 * LINEAR translation and rotation samplers for every bone, and scale samplers when the
 * sequence has scale keys. Keys are read from ANIMKEYS/SCALEKEYS while rendering.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "formats/gltf/psk_gltf_int.h"

#define MAX_FRAMES   (1u << 22) /* times f / rate stay distinct floats below this */
#define DEFAULT_RATE 30.0f
#define KEY_SLACK    4096 /* keys an export may use beyond ANIMKEYS (overlapping sequences) */

/* ---- which sequences an export holds ---- */

static bool has_scale(const struct psa_index *ax, uint64_t first, uint64_t n)
{
	return ax->scale_keys.n && first + n <= ax->scale_keys.n;
}

static bool rate_ok(float r)
{
	return isfinite(r) && r >= 1e-3f && r <= 1e6f;
}

/* Why sequence s cannot be exported, or NULL; its frames (capped) and rate otherwise. */
static const char *seq_problem(const struct psa_index *ax, size_t s, uint32_t *frames)
{
	const struct psa_sequence *q = &ax->seqs[s];

	if (ax->n_bones == 0)
		return "no bones";
	if (!q->keys_ok)
		return "its keys are not all in ANIMKEYS";
	if (q->num_raw_frames <= 0)
		return "no frames";
	*frames =
	    (uint32_t)q->num_raw_frames < MAX_FRAMES ? (uint32_t)q->num_raw_frames : MAX_FRAMES;
	return NULL;
}

/*
 * The sequences of an export (seq < 0: all, within a key budget so overlapping sequences
 * cannot multiply the file) into out[] when given; their number. notes: why others are not.
 */
static size_t select_seqs(const struct psa_index *ax, int64_t seq, struct psk_gltf_anim *out,
			  uint32_t *frames_out, struct diag *notes)
{
	uint64_t used = 0, budget = ax->keys.n + KEY_SLACK;
	size_t n = 0, lo = seq < 0 ? 0 : (size_t)seq, hi = seq < 0 ? ax->n_seqs : (size_t)seq + 1;

	for (size_t s = lo; s < hi && s < ax->n_seqs; s++) {
		const struct psa_sequence *q = &ax->seqs[s];
		uint32_t frames = 0;
		const char *why = seq_problem(ax, s, &frames);
		uint64_t first, keys;

		if (!why && (!psa_seq_keys(ax, s, &first, &keys) || keys == 0))
			why = "no keys";
		if (!why && seq < 0 && used + (uint64_t)frames * ax->n_bones > budget)
			why = "sequences overlap: the keys of all of them exceed ANIMKEYS";
		if (why) {
			diag_add(notes, "glb: sequence %zu left out of the glTF exports: %s", s,
				 why);
			continue;
		}
		used += (uint64_t)frames * ax->n_bones;
		if ((uint32_t)q->num_raw_frames > frames)
			diag_add(notes, "glb: sequence %zu: only its first %u frames exported", s,
				 frames);
		if (!rate_ok(q->anim_rate))
			diag_add(notes, "glb: sequence %zu: anim rate not usable, %g fps assumed",
				 s, (double)DEFAULT_RATE);
		if (out) {
			out[n] = (struct psk_gltf_anim){(uint32_t)s, first,
							rate_ok(q->anim_rate) ? q->anim_rate
									      : DEFAULT_RATE};
			frames_out[n] = frames;
		}
		n++;
	}
	return n;
}

void psa_gltf_notes(const struct psa_index *ix, struct diag *notes)
{
	select_seqs(ix, -1, NULL, NULL, notes);
}

/* ---- keys, converted in blocks of bones x frames ---- */

#define BLK_BONES  64
#define BLK_KEYS   16384 /* bones x frames of one block */
#define BLK_FLOATS 10	 /* per key: translation, rotation, scale */
#define BLK_TAG	   (1ull << (PSK_GLTF_KEY_BITS - 1))
#define BAND_KEYS  2048 /* keys read at a time: 64 KiB of them */

/* One block: bones [c0, c0+nc) x frames [f0, f0+nf) of a sequence, bone-major, each key as
 * 10 floats (translation, rotation, scale) converted as docs/gltf.md says. */
struct psk_gltf_block {
	uint32_t c0, nc, f0, nf;
	float v[];
};

struct block_req {
	const struct psk_gltf_ctx *c;
	uint32_t anim, c0, nc, f0, nf;
};

/* The block holding (bone k, frame f) of animation a. */
static void block_of(const struct psk_gltf *g, uint32_t a, uint64_t k, uint64_t f,
		     struct block_req *q)
{
	uint32_t nb = g->anims[a].n_channels, bw = nb < BLK_BONES ? nb : BLK_BONES;
	uint32_t fh = BLK_KEYS / bw, F = g->anims[a].n_frames;

	q->anim = a;
	q->c0 = (uint32_t)(k / bw * bw);
	q->nc = nb - q->c0 < bw ? nb - q->c0 : bw;
	q->f0 = (uint32_t)(f / fh * fh);
	q->nf = F - q->f0 < fh ? F - q->f0 : fh;
}

/* Block q cut to bone k's frames [f, f+n) (within q): what a call without a cache uses. */
static void narrow(struct block_req *q, uint64_t k, uint64_t f, size_t n)
{
	uint64_t end = q->f0 + q->nf;

	q->c0 = (uint32_t)k;
	q->nc = 1;
	q->nf = (uint32_t)(end - f < n ? end - f : n);
	q->f0 = (uint32_t)f;
}

static uint64_t block_key(const struct psk_gltf *g, const struct block_req *q)
{
	uint32_t nb = g->anims[q->anim].n_channels, bw = nb < BLK_BONES ? nb : BLK_BONES;
	uint64_t fblocks = (g->anims[q->anim].n_frames + BLK_KEYS / bw - 1) / (BLK_KEYS / bw);

	/* By sequence, not animation: the one-sequence and all-sequence files share blocks. */
	return BLK_TAG | (uint64_t)g->pa[q->anim].seq << 32 |
	       (q->c0 / bw * fblocks + q->f0 / (BLK_KEYS / bw));
}

/*
 * Keys of the block's frames and bones converted into its floats: translation and rotation, or
 * scale. Read BAND_KEYS keys at a time into buf (whole rows when the block spans most of each),
 * so nothing but the block itself is as large as the mapped sizes (tests/README.md).
 */
static enum rc read_rows(const struct psk_gltf_ctx *c, const struct psk_gltf_anim *pa, bool scale,
			 struct psk_gltf_block *blk, void *buf)
{
	const struct psa_index *ax = c->g->ax;
	uint64_t nb = ax->n_bones;
	bool whole = 2 * (uint64_t)blk->nc >= nb && nb <= BAND_KEYS; /* most of each row */
	uint64_t per = whole ? BAND_KEYS / nb : 1;
	struct psa_key *k = buf;
	struct psa_scale_key *sk = buf;
	enum rc r = RC_OK;

	for (uint64_t f = 0; r == RC_OK && f < blk->nf; f += per) {
		uint64_t nf = blk->nf - f < per ? blk->nf - f : per;
		uint64_t key = (blk->f0 + f) * nb + (whole ? 0 : blk->c0);
		size_t n = (size_t)(whole ? nf * nb : blk->nc);

		r = scale ? psa_get_scale_keys(c->s, &ax->scale_keys, pa->first_key + key, n, sk)
			  : psa_get_keys(c->s, &ax->keys, pa->first_key + key, n, k);
		for (uint64_t i = 0; r == RC_OK && i < nf; i++)
			for (uint32_t b = 0; b < blk->nc; b++) {
				size_t at = (size_t)(whole ? i * nb + blk->c0 : 0) + b;
				float *v = blk->v + ((size_t)b * blk->nf + f + i) * BLK_FLOATS;

				if (scale)
					memcpy(v + 7, sk[at].scale, 3 * sizeof(float));
				else
					psk_gltf_key_trs(blk->c0 + b, k[at].pos, k[at].rot, v,
							 v + 3);
			}
	}
	return r;
}

static enum rc load_block(const void *arg, void **data, size_t *bytes, void (**dtor)(void *))
{
	const struct block_req *q = arg;
	const struct psk_gltf *g = q->c->g;
	const struct psk_gltf_anim *pa = &g->pa[q->anim];
	bool scale = g->anims[q->anim].scale;
	size_t n = (size_t)q->nc * q->nf;
	struct psk_gltf_block *blk = malloc(sizeof *blk + n * BLK_FLOATS * sizeof(float));
	void *buf = xcalloc_n(BAND_KEYS, sizeof(struct psa_key));
	enum rc r = blk && buf ? RC_OK : RC_NOMEM;

	if (r == RC_OK) {
		*blk = (struct psk_gltf_block){q->c0, q->nc, q->f0, q->nf};
		r = read_rows(q->c, pa, false, blk, buf);
	}
	if (r == RC_OK && scale)
		r = read_rows(q->c, pa, true, blk, buf);
	for (size_t i = 0; r == RC_OK && !scale && i < n; i++)
		for (int k = 0; k < 3; k++)
			blk->v[i * BLK_FLOATS + 7 + k] = 1.0f;
	free(buf);
	if (r != RC_OK) {
		free(blk);
		return r;
	}
	*data = blk;
	*bytes = sizeof *blk + n * BLK_FLOATS * sizeof(float);
	*dtor = free;
	return RC_OK;
}

/* Block q, from the cache when there is one (pinned in *pin), else loaded for this call. */
static const struct psk_gltf_block *get_block(const struct psk_gltf_ctx *c,
					      const struct block_req *q, void **pin, enum rc *r)
{
	void *data;
	size_t bytes;
	void (*dtor)(void *);

	*pin = NULL;
	if (c->cache)
		return c->cache->get(c->cache->ctx, block_key(c->g, q), load_block, q, pin, r);
	*r = load_block(q, &data, &bytes, &dtor);
	return *r == RC_OK ? data : NULL;
}

static void put_block(const struct psk_gltf_ctx *c, const struct psk_gltf_block *b, void *pin)
{
	if (c->cache)
		c->cache->put(c->cache->ctx, pin);
	else
		free((void *)b);
}

/* Elements [first, first+n) are bone-major (bone k, frame f): copied block by block. */
static enum rc fill_keys(const struct psk_gltf_ctx *c, const struct gltf_req *q, uint64_t first,
			 size_t n, float *out)
{
	uint64_t F = c->g->anims[q->set].n_frames;
	unsigned comp = q->what == GLTF_D_ROTATION ? 4 : 3;
	unsigned at = q->what == GLTF_D_TRANSLATION ? 0 : q->what == GLTF_D_ROTATION ? 3 : 7;
	struct block_req bq = {.c = c};
	const struct psk_gltf_block *b = NULL;
	void *pin = NULL;
	enum rc r = RC_OK;

	for (size_t i = 0; i < n && r == RC_OK; i++) {
		uint64_t k = (first + i) / F, f = (first + i) % F;

		if (!b || k < b->c0 || k >= b->c0 + b->nc || f < b->f0 || f >= b->f0 + b->nf) {
			if (b)
				put_block(c, b, pin);
			block_of(c->g, q->set, k, f, &bq);
			if (!c->cache) /* loaded for this call: the frames of bone k it asks for */
				narrow(&bq, k, f, n - i);
			b = get_block(c, &bq, &pin, &r);
			if (!b)
				break;
		}
		memcpy(out + comp * i, b->v + ((k - b->c0) * b->nf + (f - b->f0)) * BLK_FLOATS + at,
		       comp * sizeof(float));
	}
	if (b)
		put_block(c, b, pin);
	return r;
}

enum rc psk_gltf_psa_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct psk_gltf_ctx *c = ctx;

	if (q->set >= c->g->m.n_anims || n == 0)
		return RC_INVAL;
	if (q->what == GLTF_D_TIME) {
		for (size_t i = 0; i < n; i++)
			((float *)out)[i] = (float)((double)(first + i) / c->g->pa[q->set].rate);
		return RC_OK;
	}
	if (q->what != GLTF_D_TRANSLATION && q->what != GLTF_D_ROTATION && q->what != GLTF_D_SCALE)
		return RC_INVAL;
	return fill_keys(c, q, first, n, out);
}

/* ---- the export ---- */

static enum rc build_anims(struct psk_gltf *g, int64_t seq)
{
	const struct psa_index *ax = g->ax;
	size_t n = select_seqs(ax, seq, NULL, NULL, NULL);
	uint32_t *frames = xcalloc_n(n ? n : 1, sizeof *frames);

	g->pa = xcalloc_n(n ? n : 1, sizeof *g->pa);
	g->anims = xcalloc_n(n ? n : 1, sizeof *g->anims);
	if (!frames || !g->pa || !g->anims) {
		free(frames);
		return RC_NOMEM;
	}
	select_seqs(ax, seq, g->pa, frames, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct psa_sequence *q = &ax->seqs[g->pa[i].seq];
		uint64_t keys = (uint64_t)frames[i] * ax->n_bones;

		g->anims[i] = (struct gltf_anim){.name = {q->name, PSK_NAME_LEN},
						 .n_frames = frames[i],
						 .n_channels = (uint32_t)ax->n_bones,
						 .scale = has_scale(ax, g->pa[i].first_key, keys)};
	}
	free(frames);
	g->m.anims = g->anims;
	g->m.n_anims = (uint32_t)n;
	g->bytes += n * (sizeof *g->pa + sizeof *g->anims);
	return RC_OK;
}

enum rc psa_gltf_open(const struct src *s, const struct psa_index *ax, const char *name,
		      int64_t seq, struct psk_gltf **out)
{
	struct psk_gltf *g = calloc(1, sizeof *g);
	struct psk_gltf_ctx c = {g, s, NULL};
	enum rc r = RC_OK;

	if (!g || !(g->name = strdup(name)) || ax->n_bones > UINT32_MAX / 2) {
		free(g);
		return g ? RC_UNSUPPORTED : RC_NOMEM;
	}
	g->anim = true;
	g->ax = ax;
	g->nodes = xcalloc_n(ax->n_bones ? ax->n_bones : 1, sizeof *g->nodes);
	if (!g->nodes)
		r = RC_NOMEM;
	g->bytes = sizeof *g + ax->n_bones * sizeof *g->nodes;
	if (r == RC_OK) {
		psk_gltf_bone_nodes(ax->bones, ax->n_bones, g->nodes);
		r = gltf_bind_ibms(g->nodes, (uint32_t)ax->n_bones);
	}
	g->m = (struct gltf_model){
	    .nodes = g->nodes, .n_nodes = (uint32_t)ax->n_bones, .fill = psk_gltf_psa_fill};
	if (r == RC_OK)
		r = build_anims(g, seq);
	if (r == RC_OK)
		r = gltf_bounds(&g->m, &c);
	if (r == RC_OK)
		r = gltf_plan(&g->m, &g->plan);
	if (r != RC_OK) {
		psk_gltf_free(g);
		return r;
	}
	/* What it holds, block by block (a plan per sequence: thousands of them may be cached). */
	g->bytes = heap_block(g) + heap_block(g->name) + heap_block(g->nodes) + heap_block(g->pa) +
		   heap_block(g->anims) + gltf_plan_heap(&g->plan);
	*out = g;
	return RC_OK;
}
