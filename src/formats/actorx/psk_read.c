/*
 * PSK/PSKX reader: every chunk in any order, then cross-chunk resolution (wedge point width,
 * morph delta ranges) and index validation, since PNTS/REFSKELT may come after their users.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "formats/actorx/psk_int.h"

enum psk_ct {
	CT_HEAD,
	CT_PNTS,
	CT_VTXW,
	CT_FACE16,
	CT_FACE32,
	CT_MATT,
	CT_SKEL,
	CT_WEIGHTS,
	CT_COLOR,
	CT_EXTRAUV,
	CT_NORMS,
	CT_MRPHINFO,
	CT_MRPHDATA,
	CT_SOCKET,
	CT_UNKNOWN,
};

/* Which slot of the mesh a chunk fills; FACE0000 and FACE3200 share one. */
enum psk_slot {
	SLOT_PNTS,
	SLOT_VTXW,
	SLOT_FACE,
	SLOT_MATT,
	SLOT_SKEL,
	SLOT_WEIGHTS,
	SLOT_COLOR,
	SLOT_NORMS,
	SLOT_MRPHINFO,
	SLOT_MRPHDATA,
	SLOT_SOCKET,
	SLOT_UV0,
	SLOT_N = SLOT_UV0 + PSK_MAX_EXTRA_UVS,
};

static float f32(const uint8_t *p)
{
	return f32_from_bits(ld_u32le(p));
}

/* "EXTRAUVS%d" and psk_psa_py's "EXTRAUV%d"; plain decimal digits only. */
static bool extra_uv_index(const char *id, unsigned *set)
{
	const char *d;
	unsigned v = 0;

	if (strncmp(id, "EXTRAUV", 7))
		return false;
	d = id + 7;
	if (*d == 'S')
		d++;
	if (!*d)
		return false;
	for (; *d; d++) {
		if (*d < '0' || *d > '9' || v > 1000)
			return false;
		v = v * 10 + (unsigned)(*d - '0');
	}
	*set = v;
	return true;
}

static enum psk_ct classify(const struct psk_chunk *c, unsigned *set)
{
	static const struct {
		const char *id;
		enum psk_ct t;
	} tab[] = {
	    {"ACTRHEAD", CT_HEAD},	{"PNTS0000", CT_PNTS},	   {"VTXW0000", CT_VTXW},
	    {"VTXW3200", CT_VTXW},	{"FACE0000", CT_FACE16},   {"FACE3200", CT_FACE32},
	    {"MATT0000", CT_MATT},	{"REFSKELT", CT_SKEL},	   {"REFSKEL0", CT_SKEL},
	    {"RAWWEIGHTS", CT_WEIGHTS}, {"RAWW0000", CT_WEIGHTS},  {"VERTEXCOLOR", CT_COLOR},
	    {"VTXNORMS", CT_NORMS},	{"MRPHINFO", CT_MRPHINFO}, {"MRPHDATA", CT_MRPHDATA},
	    {"SKELSOCK", CT_SOCKET},
	};

	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (!strcmp(c->id, tab[i].id))
			return tab[i].t;
	if (extra_uv_index(c->id, set))
		return CT_EXTRAUV;
	return CT_UNKNOWN;
}

struct rd {
	struct psk_index *ix;
	const struct src *s;
	struct diag *d;
	enum rc err;	     /* allocation or read failure */
	size_t used[SLOT_N]; /* chunk index + 1 of the chunk that filled the slot */
};

/* Read and decode the small records a mount keeps (bones, materials, morph infos). */
static void *load_recs(struct rd *r, const struct psk_chunk *c, size_t n, size_t rec, size_t sz,
		       void (*get)(const uint8_t *p, void *out))
{
	uint8_t *raw = NULL;
	uint8_t *v = xcalloc_n(n ? n : 1, sz);
	enum rc e = v ? src_dup(r->s, c->payload_off, n * rec, &raw) : RC_NOMEM;

	if (e != RC_OK) {
		free(v);
		r->err = e;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		get(raw + i * rec, v + i * sz);
	free(raw);
	return v;
}

static void get_material(const uint8_t *p, void *out)
{
	struct psk_material *mt = out;

	memcpy(mt->name, p, PSK_NAME_LEN);
	mt->texture_index = (int32_t)ld_u32le(p + 64);
	mt->poly_flags = ld_u32le(p + 68);
	mt->aux_material = (int32_t)ld_u32le(p + 72);
	mt->aux_flags = ld_u32le(p + 76);
	mt->lod_bias = (int32_t)ld_u32le(p + 80);
	mt->lod_style = (int32_t)ld_u32le(p + 84);
}

static void get_bone(const uint8_t *p, void *out)
{
	psk_get_bone(p, out);
}

static void get_morph(const uint8_t *p, void *out)
{
	struct psk_morph *mo = out;

	memcpy(mo->name, p, PSK_NAME_LEN);
	mo->vertex_count = (int32_t)ld_u32le(p + 64);
}

/* What each chunk type fills: its slot and record size. */
static bool chunk_slot(struct rd *r, const struct psk_chunk *c, size_t ci, enum psk_ct t,
		       unsigned set, enum psk_slot *slot, uint32_t *want)
{
	static const struct {
		enum psk_slot slot;
		uint32_t want;
	} tab[] = {
	    [CT_PNTS] = {SLOT_PNTS, PSK_REC_PNTS},
	    [CT_VTXW] = {SLOT_VTXW, PSK_REC_VTXW},
	    [CT_FACE16] = {SLOT_FACE, PSK_REC_FACE16},
	    [CT_FACE32] = {SLOT_FACE, PSK_REC_FACE32},
	    [CT_MATT] = {SLOT_MATT, PSK_REC_MATT},
	    [CT_SKEL] = {SLOT_SKEL, PSK_REC_BONE},
	    [CT_WEIGHTS] = {SLOT_WEIGHTS, PSK_REC_WEIGHT},
	    [CT_COLOR] = {SLOT_COLOR, PSK_REC_COLOR},
	    [CT_NORMS] = {SLOT_NORMS, PSK_REC_NORM},
	    [CT_MRPHINFO] = {SLOT_MRPHINFO, PSK_REC_MRPHINFO},
	    [CT_MRPHDATA] = {SLOT_MRPHDATA, PSK_REC_MRPHDATA},
	    [CT_SOCKET] = {SLOT_SOCKET, PSK_REC_SOCKET},
	};
	char id[84];

	psk_id_text(c, id);
	switch (t) {
	case CT_HEAD:
		if (ci != 0 && c->data_count != 0)
			diag_add(r->d, "chunk %zu (%s): repeated head carries %u records", ci, id,
				 c->data_count);
		return false;
	case CT_UNKNOWN:
		diag_add(r->d, "chunk %zu (%s): unknown chunk, %u records of %u bytes skipped", ci,
			 id, c->data_count, c->data_size);
		return false;
	case CT_EXTRAUV:
		if (set >= PSK_MAX_EXTRA_UVS) {
			diag_add(r->d,
				 "chunk %zu (%s): extra UV set %u beyond the %d supported, skipped",
				 ci, id, set, PSK_MAX_EXTRA_UVS);
			return false;
		}
		*slot = (enum psk_slot)(SLOT_UV0 + set);
		*want = PSK_REC_UV;
		break;
	default:
		*slot = tab[t].slot;
		*want = tab[t].want;
	}
	if (r->used[*slot]) {
		diag_add(r->d, "chunk %zu (%s): duplicate of chunk %zu, ignored", ci, id,
			 r->used[*slot] - 1);
		return false;
	}
	return true;
}

static struct psk_span *span_of(struct psk_index *ix, enum psk_slot slot)
{
	switch (slot) {
	case SLOT_PNTS:
		return &ix->points;
	case SLOT_VTXW:
		return &ix->wedges;
	case SLOT_FACE:
		return &ix->faces;
	case SLOT_WEIGHTS:
		return &ix->weights;
	case SLOT_COLOR:
		return &ix->colors;
	case SLOT_NORMS:
		return &ix->normals;
	case SLOT_MRPHDATA:
		return &ix->deltas;
	case SLOT_SOCKET:
		return &ix->sockets;
	default:
		return slot >= SLOT_UV0 ? &ix->uvs[slot - SLOT_UV0] : NULL;
	}
}

static void index_chunk(struct rd *r, const struct psk_chunk *c, size_t ci)
{
	struct psk_index *ix = r->ix;
	unsigned set = 0;
	enum psk_ct t = classify(c, &set);
	enum psk_slot slot;
	struct psk_span *sp;
	uint32_t want;
	size_t n;

	if (!chunk_slot(r, c, ci, t, set, &slot, &want) ||
	    !psk_chunk_records(c, ci, want, &n, r->d))
		return;
	r->used[slot] = ci + 1;
	sp = span_of(ix, slot);
	if (sp) {
		*sp = (struct psk_span){c->payload_off, n};
		if (slot == SLOT_FACE)
			ix->faces32 = t == CT_FACE32;
		if (slot >= SLOT_UV0 && set + 1 > ix->n_extra_uv_sets)
			ix->n_extra_uv_sets = set + 1;
		return;
	}
	if (slot == SLOT_MATT) {
		ix->materials =
		    load_recs(r, c, n, PSK_REC_MATT, sizeof *ix->materials, get_material);
		ix->n_materials = ix->materials ? n : 0;
	} else if (slot == SLOT_SKEL) {
		ix->bones = load_recs(r, c, n, PSK_REC_BONE, sizeof *ix->bones, get_bone);
		ix->n_bones = ix->bones ? n : 0;
	} else if (slot == SLOT_MRPHINFO) {
		ix->morphs = load_recs(r, c, n, PSK_REC_MRPHINFO, sizeof *ix->morphs, get_morph);
		ix->n_morphs = ix->morphs ? n : 0;
	}
}

/* Deltas of morph i follow those of morph i-1 (docs/psk-psa.md, "Morph targets (MRPHINFO,
 * MRPHDATA)"). */
static void resolve_morphs(struct psk_index *m, struct diag *d)
{
	size_t at = 0, n_deltas = m->deltas.n;
	uint64_t want = 0;
	struct psk_rep rep = {d, "MRPHINFO", 0};

	for (size_t i = 0; i < m->n_morphs; i++) {
		struct psk_morph *mo = &m->morphs[i];
		size_t cnt = mo->vertex_count > 0 ? (size_t)mo->vertex_count : 0;

		if (mo->vertex_count < 0)
			psk_rep_add(&rep, "MRPHINFO: morph %zu has negative vertex count %d", i,
				    mo->vertex_count);
		want += cnt;
		mo->first_delta = at;
		mo->n_deltas = cnt <= n_deltas - at ? cnt : n_deltas - at;
		at += mo->n_deltas;
	}
	psk_rep_end(&rep);
	if (want != n_deltas && (m->n_morphs || n_deltas))
		diag_add(d, "MRPHINFO vertex counts add up to %llu but MRPHDATA holds %zu deltas",
			 (unsigned long long)want, n_deltas);
}

static void check_counts(const struct psk_index *m, struct diag *d)
{
	size_t nw = m->wedges.n;

	if (m->colors.n && m->colors.n != nw)
		diag_add(d, "VERTEXCOLOR has %zu colors for %zu wedges", m->colors.n, nw);
	for (size_t s = 0; s < PSK_MAX_EXTRA_UVS; s++)
		if (m->uvs[s].n && m->uvs[s].n != nw)
			diag_add(d, "EXTRAUVS%zu has %zu UVs for %zu wedges", s, m->uvs[s].n, nw);
	if (m->normals.n && m->normals.n != m->points.n && m->normals.n != nw)
		diag_add(d, "VTXNORMS has %zu normals for %zu points and %zu wedges", m->normals.n,
			 m->points.n, nw);
}

enum rc psk_index_open(const struct src *s, struct psk_index *ix, struct diag *diag)
{
	struct rd r;
	enum rc res;

	memset(ix, 0, sizeof *ix);
	ix->point_mask = 0xFFFFFFFFu;
	res = psk_scan(s, &ix->chunks, diag);
	if (res == RC_CORRUPT && ix->chunks.n == 1) {
		/* A head whose payload covers the file: nothing past it can be reached. (A source
		 * whose read failed with RC_CORRUPT, e.g. an archive entry, leaves no chunks.) */
		ix->head_type_flag = ix->chunks.v[0].type_flag;
		return RC_CORRUPT;
	}
	if (res != RC_OK)
		return res;
	if (ix->chunks.kind != PSK_KIND_MESH) {
		psk_index_free(ix);
		return RC_FORMAT;
	}
	memset(&r, 0, sizeof r);
	r.ix = ix;
	r.s = s;
	r.d = diag;
	ix->head_type_flag = ix->chunks.v[0].type_flag;
	for (size_t i = 0; i < ix->chunks.n && r.err == RC_OK; i++)
		index_chunk(&r, &ix->chunks.v[i], i);
	if (r.err != RC_OK) {
		psk_index_free(ix);
		return r.err == RC_NOMEM ? RC_NOMEM : RC_IO;
	}
	/* The high word of a wedge's point index is ActorX padding garbage unless the mesh
	 * needs 32-bit point indices (docs/psk-psa.md, "Index widths"). */
	if (ix->points.n <= 65536)
		ix->point_mask = 0xFFFF;
	resolve_morphs(ix, diag);
	check_counts(ix, diag);
	psk_check_bones(ix->bones, ix->n_bones, "REFSKELT", diag);
	return RC_OK;
}

void psk_index_free(struct psk_index *ix)
{
	psk_chunks_free(&ix->chunks);
	free(ix->materials);
	free(ix->bones);
	free(ix->morphs);
	memset(ix, 0, sizeof *ix);
}

/* ---- records on demand ---- */

/* Read records [first, first+n) of a span into a fresh buffer. */
static enum rc span_raw(const struct src *s, const struct psk_span *sp, size_t rec, size_t first,
			size_t n, uint8_t **raw)
{
	if (first > sp->n || n > sp->n - first)
		return RC_BOUNDS;
	return src_dup(s, sp->off + (uint64_t)first * rec, n * rec, raw);
}

#define GETTER(name, type, rec, body)                                                              \
	enum rc name(const struct src *s, const struct psk_span *sp, size_t first, size_t n,       \
		     type *out)                                                                    \
	{                                                                                          \
		uint8_t *raw;                                                                      \
		enum rc r = span_raw(s, sp, rec, first, n, &raw);                                  \
                                                                                                   \
		if (r != RC_OK)                                                                    \
			return r;                                                                  \
		for (size_t i = 0; i < n; i++) {                                                   \
			const uint8_t *p = raw + i * (rec);                                        \
			type *o = &out[i];                                                         \
			body;                                                                      \
		}                                                                                  \
		free(raw);                                                                         \
		return RC_OK;                                                                      \
	}

GETTER(psk_get_points, struct psk_point, PSK_REC_PNTS, {
	o->x = f32(p);
	o->y = f32(p + 4);
	o->z = f32(p + 8);
})

enum rc psk_get_points_at(const struct src *s, const struct psk_span *sp, const uint32_t *idx,
			  size_t n, struct psk_point *out)
{
	uint8_t *raw;
	enum rc r;

	if (n == 0)
		return RC_OK;
	for (size_t k = 1; k < n; k++)
		if (idx[k] < idx[k - 1])
			return RC_INVAL;
	r = span_raw(s, sp, PSK_REC_PNTS, idx[0], (size_t)(idx[n - 1] - idx[0]) + 1, &raw);
	if (r != RC_OK)
		return r;
	for (size_t k = 0; k < n; k++) {
		const uint8_t *p = raw + (size_t)(idx[k] - idx[0]) * PSK_REC_PNTS;

		out[k] = (struct psk_point){f32(p), f32(p + 4), f32(p + 8)};
	}
	free(raw);
	return RC_OK;
}

GETTER(psk_get_raw_wedges, struct psk_wedge, PSK_REC_VTXW, {
	o->point = ld_u32le(p);
	o->u = f32(p + 4);
	o->v = f32(p + 8);
	o->mat = p[12];
	o->reserved = p[13];
})

GETTER(psk_get_face16, struct psk_face, PSK_REC_FACE16, {
	for (int k = 0; k < 3; k++)
		o->wedge[k] = ld_u16le(p + 2 * k);
	o->mat = p[6];
	o->aux_mat = p[7];
	o->smoothing = ld_u32le(p + 8);
})

GETTER(psk_get_face32, struct psk_face, PSK_REC_FACE32, {
	for (int k = 0; k < 3; k++)
		o->wedge[k] = ld_u32le(p + 4 * k);
	o->mat = p[12];
	o->aux_mat = p[13];
	o->smoothing = ld_u32le(p + 14);
})

GETTER(psk_get_weights, struct psk_weight, PSK_REC_WEIGHT, {
	o->weight = f32(p);
	o->point = (int32_t)ld_u32le(p + 4);
	o->bone = (int32_t)ld_u32le(p + 8);
})

GETTER(psk_get_colors, struct psk_color, PSK_REC_COLOR, {
	o->r = p[0];
	o->g = p[1];
	o->b = p[2];
	o->a = p[3];
})

GETTER(psk_get_uvs, struct psk_uv, PSK_REC_UV, {
	o->u = f32(p);
	o->v = f32(p + 4);
})

GETTER(psk_get_deltas, struct psk_morph_delta, PSK_REC_MRPHDATA, {
	for (int k = 0; k < 3; k++) {
		o->pos[k] = f32(p + 4 * k);
		o->tangent_z[k] = f32(p + 12 + 4 * k);
	}
	o->point = (int32_t)ld_u32le(p + 24);
})

GETTER(psk_get_sockets, struct psk_socket, PSK_REC_SOCKET, {
	memcpy(o->name, p, PSK_NAME_LEN);
	memcpy(o->bone, p + 64, PSK_NAME_LEN);
	for (int k = 0; k < 3; k++) {
		o->loc[k] = f32(p + 128 + 4 * k);
		o->rot[k] = f32(p + 140 + 4 * k);
		o->scale[k] = f32(p + 152 + 4 * k);
	}
})

enum rc psk_get_wedges(const struct src *s, const struct psk_index *ix, size_t first, size_t n,
		       struct psk_wedge *out)
{
	enum rc r = psk_get_raw_wedges(s, &ix->wedges, first, n, out);

	for (size_t i = 0; r == RC_OK && i < n; i++)
		out[i].point &= ix->point_mask;
	return r;
}

enum rc psk_get_faces(const struct src *s, const struct psk_index *ix, size_t first, size_t n,
		      struct psk_face *out)
{
	return ix->faces32 ? psk_get_face32(s, &ix->faces, first, n, out)
			   : psk_get_face16(s, &ix->faces, first, n, out);
}

/* ---- index checks: one streaming pass over the records that point at others ---- */

#define CHECK_BATCH 4096

static enum rc check_wedges(const struct src *s, const struct psk_index *ix, struct diag *d)
{
	struct psk_rep rep = {d, "VTXW0000", 0};
	struct psk_wedge w[CHECK_BATCH / 4];
	enum rc r = RC_OK;

	for (size_t at = 0; at < ix->wedges.n && r == RC_OK; at += CHECK_BATCH / 4) {
		size_t n =
		    ix->wedges.n - at < CHECK_BATCH / 4 ? ix->wedges.n - at : CHECK_BATCH / 4;

		r = psk_get_wedges(s, ix, at, n, w);
		for (size_t i = 0; r == RC_OK && i < n; i++)
			if (w[i].point >= ix->points.n)
				psk_rep_add(
				    &rep, "VTXW0000: wedge %zu point %u out of range (%zu points)",
				    at + i, w[i].point, ix->points.n);
	}
	psk_rep_end(&rep);
	return r;
}

static enum rc check_faces(const struct src *s, const struct psk_index *ix, struct diag *d)
{
	struct psk_rep fw = {d, "faces", 0}, fm = {d, "faces", 0};
	struct psk_face f[CHECK_BATCH / 8];
	enum rc r = RC_OK;

	for (size_t at = 0; at < ix->faces.n && r == RC_OK; at += CHECK_BATCH / 8) {
		size_t n = ix->faces.n - at < CHECK_BATCH / 8 ? ix->faces.n - at : CHECK_BATCH / 8;

		r = psk_get_faces(s, ix, at, n, f);
		for (size_t i = 0; r == RC_OK && i < n; i++) {
			for (int k = 0; k < 3; k++)
				if (f[i].wedge[k] >= ix->wedges.n)
					psk_rep_add(&fw,
						    "face %zu wedge %u out of range (%zu wedges)",
						    at + i, f[i].wedge[k], ix->wedges.n);
			if (f[i].mat >= ix->n_materials)
				psk_rep_add(&fm,
					    "face %zu material %u out of range (%zu materials)",
					    at + i, f[i].mat, ix->n_materials);
		}
	}
	psk_rep_end(&fw);
	psk_rep_end(&fm);
	return r;
}

static enum rc check_weights(const struct src *s, const struct psk_index *ix, struct diag *d)
{
	struct psk_rep rep = {d, "RAWWEIGHTS", 0};
	struct psk_weight w[CHECK_BATCH / 4];
	enum rc r = RC_OK;

	for (size_t at = 0; at < ix->weights.n && r == RC_OK; at += CHECK_BATCH / 4) {
		size_t n =
		    ix->weights.n - at < CHECK_BATCH / 4 ? ix->weights.n - at : CHECK_BATCH / 4;

		r = psk_get_weights(s, &ix->weights, at, n, w);
		for (size_t i = 0; r == RC_OK && i < n; i++) {
			if (w[i].point < 0 || (uint64_t)w[i].point >= ix->points.n)
				psk_rep_add(
				    &rep,
				    "RAWWEIGHTS: weight %zu point %d out of range (%zu points)",
				    at + i, w[i].point, ix->points.n);
			if (w[i].bone < 0 || (uint64_t)w[i].bone >= ix->n_bones)
				psk_rep_add(
				    &rep, "RAWWEIGHTS: weight %zu bone %d out of range (%zu bones)",
				    at + i, w[i].bone, ix->n_bones);
		}
	}
	psk_rep_end(&rep);
	return r;
}

static enum rc check_deltas(const struct src *s, const struct psk_index *ix, struct diag *d)
{
	struct psk_rep rep = {d, "MRPHDATA", 0};
	struct psk_morph_delta v[CHECK_BATCH / 16];
	enum rc r = RC_OK;

	for (size_t at = 0; at < ix->deltas.n && r == RC_OK; at += CHECK_BATCH / 16) {
		size_t n =
		    ix->deltas.n - at < CHECK_BATCH / 16 ? ix->deltas.n - at : CHECK_BATCH / 16;

		r = psk_get_deltas(s, &ix->deltas, at, n, v);
		for (size_t i = 0; r == RC_OK && i < n; i++)
			if (v[i].point < 0 || (uint64_t)v[i].point >= ix->points.n)
				psk_rep_add(
				    &rep, "MRPHDATA: delta %zu point %d out of range (%zu points)",
				    at + i, v[i].point, ix->points.n);
	}
	psk_rep_end(&rep);
	return r;
}

enum rc psk_check_data(const struct src *s, const struct psk_index *ix, struct diag *d)
{
	enum rc r = check_wedges(s, ix, d);

	if (r == RC_OK)
		r = check_faces(s, ix, d);
	if (r == RC_OK)
		r = check_weights(s, ix, d);
	if (r == RC_OK)
		r = check_deltas(s, ix, d);
	return r;
}

/* ---- the whole mesh in memory ---- */

static void *all_recs(const struct psk_span *sp, size_t sz, size_t *n, enum rc *r)
{
	void *v = *r == RC_OK ? xcalloc_n(sp->n ? sp->n : 1, sz) : NULL;

	if (!v && *r == RC_OK)
		*r = RC_NOMEM;
	*n = v ? sp->n : 0;
	return v;
}

static enum rc read_all(const struct src *s, const struct psk_index *ix, struct psk_mesh *m)
{
	enum rc r = RC_OK;

	m->points = all_recs(&ix->points, sizeof *m->points, &m->n_points, &r);
	m->wedges = all_recs(&ix->wedges, sizeof *m->wedges, &m->n_wedges, &r);
	m->faces = all_recs(&ix->faces, sizeof *m->faces, &m->n_faces, &r);
	m->weights = all_recs(&ix->weights, sizeof *m->weights, &m->n_weights, &r);
	m->normals = all_recs(&ix->normals, sizeof *m->normals, &m->n_normals, &r);
	m->colors = all_recs(&ix->colors, sizeof *m->colors, &m->n_colors, &r);
	m->deltas = all_recs(&ix->deltas, sizeof *m->deltas, &m->n_deltas, &r);
	m->sockets = all_recs(&ix->sockets, sizeof *m->sockets, &m->n_sockets, &r);
	for (size_t u = 0; u < PSK_MAX_EXTRA_UVS; u++)
		if (ix->uvs[u].n)
			m->extra_uvs[u] =
			    all_recs(&ix->uvs[u], sizeof *m->extra_uvs[u], &m->n_extra_uvs[u], &r);
	if (r != RC_OK)
		return r;
	r = psk_get_points(s, &ix->points, 0, m->n_points, m->points);
	if (r == RC_OK)
		r = psk_get_wedges(s, ix, 0, m->n_wedges, m->wedges);
	if (r == RC_OK)
		r = psk_get_faces(s, ix, 0, m->n_faces, m->faces);
	if (r == RC_OK)
		r = psk_get_weights(s, &ix->weights, 0, m->n_weights, m->weights);
	if (r == RC_OK)
		r = psk_get_points(s, &ix->normals, 0, m->n_normals, m->normals);
	if (r == RC_OK)
		r = psk_get_colors(s, &ix->colors, 0, m->n_colors, m->colors);
	if (r == RC_OK)
		r = psk_get_deltas(s, &ix->deltas, 0, m->n_deltas, m->deltas);
	if (r == RC_OK)
		r = psk_get_sockets(s, &ix->sockets, 0, m->n_sockets, m->sockets);
	for (size_t u = 0; r == RC_OK && u < PSK_MAX_EXTRA_UVS; u++)
		if (m->extra_uvs[u])
			r = psk_get_uvs(s, &ix->uvs[u], 0, m->n_extra_uvs[u], m->extra_uvs[u]);
	return r;
}

/* Move the small decoded records from the index into the mesh. */
static void take_small(struct psk_index *ix, struct psk_mesh *m)
{
	m->head_type_flag = ix->head_type_flag;
	m->faces32 = ix->faces32;
	m->n_extra_uv_sets = ix->n_extra_uv_sets;
	m->materials = ix->materials;
	m->n_materials = ix->n_materials;
	m->bones = ix->bones;
	m->n_bones = ix->n_bones;
	m->morphs = ix->morphs;
	m->n_morphs = ix->n_morphs;
	ix->materials = NULL;
	ix->bones = NULL;
	ix->morphs = NULL;
}

enum rc psk_read(const uint8_t *p, size_t size, struct psk_mesh *out, struct diag *diag)
{
	struct psk_index ix;
	struct src s;
	struct src_mem sm;
	enum rc r;

	memset(out, 0, sizeof *out);
	src_init_mem(&s, &sm, p, size);
	r = psk_index_open(&s, &ix, diag);
	if (r == RC_CORRUPT) { /* a PSK with nothing reachable: an empty mesh */
		out->head_type_flag = ix.head_type_flag;
		psk_index_free(&ix);
		return RC_OK;
	}
	if (r != RC_OK)
		return r;
	r = read_all(&s, &ix, out);
	if (r == RC_OK)
		r = psk_check_data(&s, &ix, diag);
	take_small(&ix, out);
	psk_index_free(&ix);
	if (r != RC_OK)
		psk_mesh_free(out);
	return r;
}

void psk_mesh_free(struct psk_mesh *m)
{
	free(m->points);
	free(m->wedges);
	free(m->faces);
	free(m->materials);
	free(m->bones);
	free(m->weights);
	free(m->normals);
	free(m->colors);
	for (size_t i = 0; i < PSK_MAX_EXTRA_UVS; i++)
		free(m->extra_uvs[i]);
	free(m->morphs);
	free(m->deltas);
	free(m->sockets);
	memset(m, 0, sizeof *m);
}
