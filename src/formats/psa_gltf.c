/*
 * PSA sequences as glTF animations (docs/gltf.md): the bones as the joints of a skin no mesh
 * uses (so importers build an armature), each sequence one animation sampled at its own rate with
 * LINEAR translation and rotation samplers for every bone, and scale samplers when the
 * sequence has scale keys. Keys are read from ANIMKEYS/SCALEKEYS while rendering.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psk_gltf_int.h"

#define MAX_FRAMES   (1u << 22) /* times f / rate stay distinct floats below this */
#define DEFAULT_RATE 30.0f
#define KEY_SLACK    4096 /* keys an export may use beyond ANIMKEYS (overlapping sequences) */
#define ROW_KEYS     4096 /* keys read at once */

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
static size_t select_seqs(const struct psa_index *ax, int64_t seq, struct pg_anim *out,
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
			out[n] =
			    (struct pg_anim){(uint32_t)s, first,
					     rate_ok(q->anim_rate) ? q->anim_rate : DEFAULT_RATE};
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

/* ---- keys ---- */

/* Bones [k0, k1] of frame f of animation a, as keys (or scale keys). */
static enum rc read_keys(const struct pg_ctx *c, const struct pg_anim *pa, bool scale, uint64_t key,
			 size_t n, void *out)
{
	const struct psa_index *ax = c->g->ax;

	if (scale)
		return psa_get_scale_keys(c->s, &ax->scale_keys, pa->first_key + key, n, out);
	return psa_get_keys(c->s, &ax->keys, pa->first_key + key, n, out);
}

static void put_value(enum gltf_data what, size_t bone, const void *key, float *o)
{
	float t[3], r[4];

	if (what == GLTF_D_SCALE) {
		memcpy(o, ((const struct psa_scale_key *)key)->scale, 3 * sizeof *o);
		return;
	}
	pg_key_trs(bone, ((const struct psa_key *)key)->pos, ((const struct psa_key *)key)->rot, t,
		   r);
	if (what == GLTF_D_ROTATION)
		memcpy(o, r, sizeof r);
	else
		memcpy(o, t, sizeof t);
}

/*
 * Elements [first, first+n) are channel-major (bone k, frame f) but the file is frame-major:
 * for each frame touched, read the bones the batch wants from that frame's row (whole rows at
 * once when most of each row is wanted).
 */
static enum rc fill_keys(const struct pg_ctx *c, const struct gltf_req *q, uint64_t first, size_t n,
			 float *out)
{
	const struct gltf_anim *an = &c->g->anims[q->set];
	const struct pg_anim *pa = &c->g->pa[q->set];
	uint64_t nb = c->g->ax->n_bones, F = an->n_frames, k0 = first / F, k1 = (first + n - 1) / F,
		 f0 = k0 == k1 ? first % F : 0, f1 = k0 == k1 ? (first + n - 1) % F : F - 1,
		 want = k1 - k0 + 1;
	bool scale = q->what == GLTF_D_SCALE, rows = 2 * want >= nb;
	size_t ksz = scale ? sizeof(struct psa_scale_key) : sizeof(struct psa_key);
	size_t comp = q->what == GLTF_D_ROTATION ? 4 : 3;
	uint64_t per = rows ? ROW_KEYS / nb + 1 : 1; /* frames per read */
	uint8_t *buf = malloc((size_t)((rows ? per * nb : want) * ksz));
	enum rc r = buf ? RC_OK : RC_NOMEM;

	for (uint64_t f = f0; r == RC_OK && f <= f1; f += per) {
		uint64_t nf = f1 - f + 1 < per ? f1 - f + 1 : per;

		r = rows ? read_keys(c, pa, scale, f * nb, (size_t)(nf * nb), buf)
			 : read_keys(c, pa, scale, f * nb + k0, (size_t)want, buf);
		for (uint64_t i = 0; r == RC_OK && i < nf; i++)
			for (uint64_t k = k0; k <= k1; k++) {
				uint64_t e = k * F + f + i;
				const uint8_t *key =
				    rows ? buf + ((i * nb) + k) * ksz : buf + (k - k0) * ksz;

				if (e >= first && e < first + n)
					put_value(q->what, (size_t)k, key,
						  out + comp * (e - first));
			}
	}
	free(buf);
	return r;
}

enum rc pg_psa_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct pg_ctx *c = ctx;

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
	struct pg_ctx c = {g, s};
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
		pg_bone_nodes(ax->bones, ax->n_bones, g->nodes);
		r = gltf_bind_ibms(g->nodes, (uint32_t)ax->n_bones);
	}
	g->m = (struct gltf_model){
	    .nodes = g->nodes, .n_nodes = (uint32_t)ax->n_bones, .fill = pg_psa_fill};
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
	g->bytes += (size_t)g->plan.n_views * 64 + (size_t)g->plan.n_out_nodes * 12;
	*out = g;
	return RC_OK;
}
