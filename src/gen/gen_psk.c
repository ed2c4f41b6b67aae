/* Deterministic PSK/PSA generator: struct first, bytes through the real writers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/gen/prng.h"

#define GEN_MAX_RECORDS	 (1u << 24) /* keeps generated files well below a few hundred MB */
#define GEN_DEFAULT_FLAG 20100422

void gen_psk_opts_default(struct gen_psk_opts *o, uint64_t seed)
{
	memset(o, 0, sizeof *o);
	o->seed = seed;
	o->scale = 4;
	o->bones = 4;
	o->materials = 1;
	o->max_influences = 4;
}

void gen_psa_opts_default(struct gen_psa_opts *o, uint64_t seed)
{
	memset(o, 0, sizeof *o);
	o->seed = seed;
	o->bones = 3;
	o->sequences = 1;
	o->max_frames = 8;
}

/* A dyadic rational in [-range, range] with 1/64 steps: exact in float32 and in text. */
static float dy(struct prng *r, uint32_t range)
{
	int32_t steps = (int32_t)(range * 64);

	return (float)((int32_t)prng_below(r, (uint32_t)(2 * steps + 1)) - steps) / 64.0f;
}

/* Exact unit quaternions: identity, the axis half-turns and the 16 (+-1/2)^4 ones. */
static void quat(struct prng *r, float q[4])
{
	uint32_t k = prng_below(r, 20);

	memset(q, 0, 4 * sizeof *q);
	if (k < 4) {
		q[k] = 1.0f;
		return;
	}
	k -= 4;
	for (int i = 0; i < 4; i++)
		q[i] = (k >> i & 1) ? -0.5f : 0.5f;
}

/*
 * Name i of a kind. Hostile names cycle through patterns a path-building consumer must
 * survive: "..", a slash, control bytes, 64 bytes without a NUL, and case duplicates.
 */
static void gen_name(uint8_t out[PSK_NAME_LEN], const char *kind, uint32_t i, bool hostile)
{
	char tmp[PSK_NAME_LEN + 16];

	memset(out, 0, PSK_NAME_LEN);
	if (hostile) {
		switch (i % 7) {
		case 0:
			snprintf(tmp, sizeof tmp, "..");
			break;
		case 1:
			snprintf(tmp, sizeof tmp, "../%s%u", kind, i);
			break;
		case 2:
			snprintf(tmp, sizeof tmp, "%s/%u", kind, i);
			break;
		case 3:
			snprintf(tmp, sizeof tmp, "c\x01\x1f\t\n\x7f%u", i);
			break;
		case 4:
			memset(out, 'L', PSK_NAME_LEN);
			out[PSK_NAME_LEN - 1] = (uint8_t)('0' + i % 10);
			return;
		case 5:
			snprintf(tmp, sizeof tmp, "dup");
			break;
		default:
			snprintf(tmp, sizeof tmp, "DUP");
			break;
		}
	} else {
		snprintf(tmp, sizeof tmp, "%s_%u", kind, i);
	}
	memcpy(out, tmp, strnlen(tmp, PSK_NAME_LEN - 1));
}

#define GEN_BONE_SALT 0xB0E5B0E5B0E5B0E5ull

/* Bone i's parent is any earlier bone, so the list is a proper tree in parent-first order. */
static enum rc gen_bones(struct prng *r, uint32_t n, bool minus1, bool psa, bool hostile,
			 struct psk_bone **out)
{
	struct psk_bone *b = xcalloc_n(n ? n : 1, sizeof *b);

	if (!b)
		return RC_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		gen_name(b[i].name, "bone", i, hostile);
		b[i].parent = i == 0 ? (minus1 ? -1 : 0) : (int32_t)prng_below(r, i);
		if (i > 0)
			b[b[i].parent].num_children++;
		quat(r, b[i].rot);
		for (int k = 0; k < 3; k++)
			b[i].pos[k] = i == 0 ? 0.0f : dy(r, 32);
		b[i].length = psa ? 1.0f : 0.0f;
	}
	*out = b;
	return RC_OK;
}

/* Split 256 into k positive parts so the weights sum to exactly 1.0. */
static void split256(struct prng *r, uint32_t k, uint32_t parts[4])
{
	uint32_t left = 256;

	for (uint32_t i = 0; i + 1 < k; i++) {
		uint32_t max = left - (k - 1 - i); /* leave at least 1 for each later part */

		parts[i] = 1 + prng_below(r, max);
		if (parts[i] > max)
			parts[i] = max;
		left -= parts[i];
	}
	parts[k - 1] = left;
}

static enum rc gen_weights(struct prng *r, const struct gen_psk_opts *o, uint32_t np,
			   struct psk_mesh *m)
{
	uint32_t maxi = o->max_influences ? o->max_influences : 4;

	if (maxi > 4)
		maxi = 4;
	if (maxi > o->bones)
		maxi = o->bones;
	if (o->bones == 0 || np == 0)
		return RC_OK;
	m->weights = xcalloc_n((size_t)np * maxi, sizeof *m->weights);
	if (!m->weights)
		return RC_NOMEM;
	for (uint32_t p = 0; p < np; p++) {
		uint32_t k = 1 + prng_below(r, maxi), parts[4], bones[4];

		split256(r, k, parts);
		for (uint32_t i = 0; i < k; i++) {
			bool again;

			do { /* distinct bones per point */
				bones[i] = prng_below(r, o->bones);
				again = false;
				for (uint32_t j = 0; j < i; j++)
					again |= bones[j] == bones[i];
			} while (again);
			m->weights[m->n_weights++] = (struct psk_weight){
			    .weight = (float)parts[i] / 256.0f,
			    .point = (int32_t)p,
			    .bone = (int32_t)bones[i],
			};
		}
	}
	return RC_OK;
}

/* Record counts of a mesh from the options (0 = the scale's default). */
struct mesh_counts {
	uint32_t np, nw, nf, nm, nuv;
};

static enum rc mesh_counts(const struct gen_psk_opts *o, struct mesh_counts *k)
{
	uint32_t scale = o->scale ? o->scale : 4;

	k->np = o->points ? o->points : 8 * scale;
	k->nw = o->wedges ? o->wedges : k->np + k->np / 2;
	k->nf = o->faces ? o->faces : k->nw;
	k->nm = o->materials ? o->materials : 1;
	k->nuv = o->extra_uv_sets;
	if (o->big && k->nw <= 65536)
		k->nw = 65536 + 64;
	if (k->np > GEN_MAX_RECORDS || k->nw > GEN_MAX_RECORDS || k->nf > GEN_MAX_RECORDS ||
	    k->nm > 256 || o->bones > 65536 || k->nuv > PSK_MAX_EXTRA_UVS || o->morphs > 4096 ||
	    o->sockets > 4096 || (k->nw && !k->np) || (k->nf && !k->nw))
		return RC_INVAL;
	return RC_OK;
}

static enum rc gen_points_materials(struct prng *r, const struct gen_psk_opts *o,
				    const struct mesh_counts *k, struct psk_mesh *m)
{
	if (!(m->points = xcalloc_n(k->np ? k->np : 1, sizeof *m->points)))
		return RC_NOMEM;
	m->n_points = k->np;
	for (uint32_t i = 0; i < k->np; i++)
		m->points[i] = (struct psk_point){dy(r, 256), dy(r, 256), dy(r, 256)};
	if (!(m->materials = xcalloc_n(k->nm, sizeof *m->materials)))
		return RC_NOMEM;
	m->n_materials = k->nm;
	for (uint32_t i = 0; i < k->nm; i++) {
		gen_name(m->materials[i].name, "material", i, o->hostile_names);
		m->materials[i].texture_index = (int32_t)i;
		m->materials[i].poly_flags = prng_below(r, 4);
		m->materials[i].lod_bias = (int32_t)prng_below(r, 6);
	}
	return RC_OK;
}

/* Every point gets a wedge first, so no point is orphaned; faces have distinct corners when
 * there are enough wedges. */
static enum rc gen_wedges_faces(struct prng *r, const struct mesh_counts *k, struct psk_mesh *m)
{
	uint32_t nw = k->nw;

	if (!(m->wedges = xcalloc_n(nw ? nw : 1, sizeof *m->wedges)))
		return RC_NOMEM;
	m->n_wedges = nw;
	for (uint32_t i = 0; i < nw; i++) {
		struct psk_wedge *w = &m->wedges[i];

		w->point = i < k->np ? i : prng_below(r, k->np);
		w->u = (float)prng_below(r, 257) / 256.0f;
		w->v = (float)prng_below(r, 257) / 256.0f;
		w->mat = (uint8_t)prng_below(r, k->nm);
	}
	if (!(m->faces = xcalloc_n(k->nf ? k->nf : 1, sizeof *m->faces)))
		return RC_NOMEM;
	m->n_faces = k->nf;
	m->faces32 = nw > 65536;
	for (uint32_t i = 0; i < k->nf; i++) {
		struct psk_face *f = &m->faces[i];
		uint32_t a = prng_below(r, nw);

		f->wedge[0] = a;
		f->wedge[1] = nw > 1 ? (a + 1 + prng_below(r, nw - 1)) % nw : a;
		f->wedge[2] = f->wedge[1];
		if (nw > 2)
			while (f->wedge[2] == f->wedge[0] || f->wedge[2] == f->wedge[1])
				f->wedge[2] = prng_below(r, nw);
		f->mat = m->wedges[a].mat;
		f->smoothing = 1u << prng_below(r, 4);
	}
	return RC_OK;
}

/* Vertex colours and extra UV sets per wedge, normals per point. */
static enum rc gen_vertex_extras(struct prng *r, const struct gen_psk_opts *o,
				 const struct mesh_counts *k, struct psk_mesh *m)
{
	static const struct psk_point axes[] = {
	    {1, 0, 0},
	    {-1, 0, 0},
	    {0, 1, 0},
	    {0, -1, 0},
	    {0, 0, 1},
	    {0, 0, -1},
	    {0.5f, 0.5f, 0.70703125f},
	    {-0.75f, 0.5f, 0.4375f},
	};
	uint32_t nw = k->nw;

	if (o->colors && nw) {
		if (!(m->colors = xcalloc_n(nw, sizeof *m->colors)))
			return RC_NOMEM;
		m->n_colors = nw;
		for (uint32_t i = 0; i < nw; i++) {
			uint32_t c = (uint32_t)prng_next(r);

			m->colors[i] = (struct psk_color){(uint8_t)c, (uint8_t)(c >> 8),
							  (uint8_t)(c >> 16), (uint8_t)(c >> 24)};
		}
	}
	for (uint32_t s = 0; s < k->nuv && nw; s++) {
		if (!(m->extra_uvs[s] = xcalloc_n(nw, sizeof *m->extra_uvs[s])))
			return RC_NOMEM;
		m->n_extra_uvs[s] = nw;
		for (uint32_t i = 0; i < nw; i++)
			m->extra_uvs[s][i] = (struct psk_uv){dy(r, 1), dy(r, 1)};
		m->n_extra_uv_sets = s + 1;
	}
	if (o->normals && k->np) {
		if (!(m->normals = xcalloc_n(k->np, sizeof *m->normals)))
			return RC_NOMEM;
		m->n_normals = k->np;
		for (uint32_t i = 0; i < k->np; i++)
			m->normals[i] = axes[prng_below(r, sizeof axes / sizeof axes[0])];
	}
	return RC_OK;
}

static enum rc gen_morphs(struct prng *r, const struct gen_psk_opts *o, uint32_t np,
			  struct psk_mesh *m)
{
	uint32_t per = np < 16 ? np : 16;

	if (!o->morphs || !np)
		return RC_OK;
	if (!(m->morphs = xcalloc_n(o->morphs, sizeof *m->morphs)) ||
	    !(m->deltas = xcalloc_n((size_t)o->morphs * per, sizeof *m->deltas)))
		return RC_NOMEM;
	m->n_morphs = o->morphs;
	for (uint32_t i = 0; i < o->morphs; i++) {
		struct psk_morph *mo = &m->morphs[i];
		uint32_t cnt = 1 + prng_below(r, per);

		gen_name(mo->name, "morph", i, o->hostile_names);
		mo->vertex_count = (int32_t)cnt;
		mo->first_delta = m->n_deltas;
		mo->n_deltas = cnt;
		for (uint32_t k = 0; k < cnt; k++) {
			struct psk_morph_delta *d = &m->deltas[m->n_deltas++];

			for (int j = 0; j < 3; j++) {
				d->pos[j] = dy(r, 4);
				d->tangent_z[j] = dy(r, 1);
			}
			d->point = (int32_t)prng_below(r, np);
		}
	}
	return RC_OK;
}

static enum rc gen_sockets(struct prng *r, const struct gen_psk_opts *o, struct psk_mesh *m)
{
	if (!o->sockets)
		return RC_OK;
	if (!(m->sockets = xcalloc_n(o->sockets, sizeof *m->sockets)))
		return RC_NOMEM;
	m->n_sockets = o->sockets;
	for (uint32_t i = 0; i < o->sockets; i++) {
		struct psk_socket *s = &m->sockets[i];

		gen_name(s->name, "socket", i, o->hostile_names);
		if (o->bones)
			memcpy(s->bone, m->bones[prng_below(r, o->bones)].name, PSK_NAME_LEN);
		for (int j = 0; j < 3; j++) {
			s->loc[j] = dy(r, 64);
			s->rot[j] = dy(r, 180);
			s->scale[j] = 1.0f + (float)prng_below(r, 4) / 4.0f;
		}
	}
	return RC_OK;
}

/* Every part draws from one stream in a fixed order, so a seed always gives the same file;
 * bones come from their own stream so a PSA with match_psk gets the same skeleton. */
static enum rc build_mesh(const struct gen_psk_opts *o, struct psk_mesh *m)
{
	struct mesh_counts k;
	struct prng r, br;
	enum rc res = mesh_counts(o, &k);

	if (res != RC_OK)
		return res;
	prng_seed(&r, o->seed);
	m->head_type_flag = o->head_type_flag ? o->head_type_flag : GEN_DEFAULT_FLAG;
	res = gen_points_materials(&r, o, &k, m);
	if (res == RC_OK)
		res = gen_wedges_faces(&r, &k, m);
	prng_seed(&br, o->seed ^ GEN_BONE_SALT);
	if (res == RC_OK)
		res = gen_bones(&br, o->bones, o->root_parent_minus1, false, o->hostile_names,
				&m->bones);
	if (res != RC_OK)
		return res;
	m->n_bones = o->bones;
	res = gen_weights(&r, o, k.np, m);
	if (res == RC_OK)
		res = gen_vertex_extras(&r, o, &k, m);
	if (res == RC_OK)
		res = gen_morphs(&r, o, k.np, m);
	if (res == RC_OK)
		res = gen_sockets(&r, o, m);
	return res;
}

enum rc gen_psk_mesh(const struct gen_psk_opts *o, struct psk_mesh *out)
{
	enum rc r;

	memset(out, 0, sizeof *out);
	r = build_mesh(o, out);
	if (r != RC_OK)
		psk_mesh_free(out);
	return r;
}

/* The sequences' headers: frames each (all of them overlapping with o->overlap), named, at one
 * of a few rates, laid end to end in the keys (n_keys: all the keys they take). */
static void gen_sequences(struct prng *r, const struct gen_psa_opts *o, uint32_t nb,
			  const uint32_t *frames, struct psa_anim *a)
{
	static const float rates[] = {30.0f, 24.0f, 60.0f, 15.5f};
	uint64_t total = 0;

	for (uint32_t i = 0; i < a->n_seqs; i++) {
		struct psa_sequence *s = &a->seqs[i];

		gen_name(s->name, "seq", i, o->hostile_names);
		memcpy(s->group, "None", 4);
		s->total_bones = (int32_t)nb;
		s->key_quotum = (int32_t)(frames[i] * nb);
		s->key_reduction = 1.0f;
		s->track_time = (float)frames[i];
		s->anim_rate = rates[prng_below(r, 4)];
		s->first_raw_frame = o->overlap ? 0 : (int32_t)total;
		s->num_raw_frames = (int32_t)frames[i];
		s->keys_ok = true;
		total += o->overlap && i ? 0 : frames[i];
	}
	a->n_keys = total * nb;
}

static void gen_keys(struct prng *r, const struct gen_psa_opts *o, struct psa_anim *a)
{
	for (size_t k = 0; k < a->n_keys; k++) {
		struct psa_key *key = &a->keys[k];

		for (int j = 0; j < 3; j++)
			key->pos[j] = dy(r, 32);
		quat(r, key->rot);
		key->time = 1.0f;
	}
	if (!o->scale_keys)
		return;
	a->n_scale_keys = a->n_keys;
	for (size_t k = 0; k < a->n_keys; k++) {
		for (int j = 0; j < 3; j++)
			a->scale_keys[k].scale[j] = 0.25f + (float)prng_below(r, 16) / 8.0f;
		a->scale_keys[k].time = 1.0f;
	}
}

/* Frames per sequence, and room for the keys they need (at most GEN_MAX_RECORDS). */
static enum rc alloc_anim(struct prng *r, const struct gen_psa_opts *o, uint32_t nb, uint32_t ns,
			  uint32_t *frames, struct psa_anim *a)
{
	uint32_t maxf = o->max_frames ? o->max_frames : 8;
	uint64_t total = 0;
	size_t nk;

	for (uint32_t i = 0; i < ns; i++) {
		frames[i] = o->overlap ? maxf : 1 + prng_below(r, maxf);
		total += o->overlap && i ? 0 : frames[i];
	}
	if (total * nb > GEN_MAX_RECORDS)
		return RC_INVAL;
	nk = (size_t)(total * nb);
	a->seqs = xcalloc_n(ns, sizeof *a->seqs);
	a->keys = xcalloc_n(nk ? nk : 1, sizeof *a->keys);
	if (o->scale_keys)
		a->scale_keys = xcalloc_n(nk ? nk : 1, sizeof *a->scale_keys);
	if (!a->seqs || !a->keys || (o->scale_keys && !a->scale_keys))
		return RC_NOMEM;
	a->n_seqs = ns;
	return RC_OK;
}

static enum rc build_anim(const struct gen_psa_opts *o, struct psa_anim *a)
{
	uint32_t nb = o->bones ? o->bones : 3, ns = o->sequences ? o->sequences : 1;
	uint32_t *frames;
	struct prng r, br;
	enum rc res;

	if (nb > 65536 || ns > 65536 || (o->max_frames ? o->max_frames : 8) > GEN_MAX_RECORDS)
		return RC_INVAL;
	prng_seed(&r, o->seed);
	a->head_type_flag = o->head_type_flag ? o->head_type_flag : GEN_DEFAULT_FLAG;
	prng_seed(&br, o->seed ^ GEN_BONE_SALT);
	res = gen_bones(&br, nb, !o->match_psk, !o->match_psk, o->hostile_names, &a->bones);
	if (res != RC_OK)
		return res;
	a->n_bones = nb;
	for (uint32_t i = 0; o->flat_parents && i < nb; i++) {
		a->bones[i].parent = 0;
		a->bones[i].num_children = i == 0 ? (int32_t)nb - 1 : 0;
	}
	if (!(frames = xcalloc_n(ns, sizeof *frames)))
		return RC_NOMEM;
	res = alloc_anim(&r, o, nb, ns, frames, a);
	if (res == RC_OK) {
		gen_sequences(&r, o, nb, frames, a);
		gen_keys(&r, o, a);
	}
	free(frames);
	/* psa_write emits SCALEKEYS (maybe empty) for new-enough heads; say so up front so a
	 * decoded copy compares equal. */
	a->has_scale_chunk = o->scale_keys || a->head_type_flag >= 2003321;
	return res;
}

enum rc gen_psa_anim(const struct gen_psa_opts *o, struct psa_anim *out)
{
	enum rc r;

	memset(out, 0, sizeof *out);
	r = build_anim(o, out);
	if (r != RC_OK)
		psa_anim_free(out);
	return r;
}

enum rc gen_psk_file(const struct gen_psk_opts *o, struct buf *out)
{
	struct psk_mesh m;
	enum rc r = gen_psk_mesh(o, &m);

	if (r != RC_OK)
		return r;
	r = psk_write(&m, out);
	psk_mesh_free(&m);
	return r;
}

enum rc gen_psa_file(const struct gen_psa_opts *o, struct buf *out)
{
	struct psa_anim a;
	enum rc r = gen_psa_anim(o, &a);

	if (r != RC_OK)
		return r;
	r = psa_write(&a, out);
	psa_anim_free(&a);
	return r;
}
