/*
 * PSK/PSKX reader: every chunk in any order, then cross-chunk resolution (wedge point width,
 * morph delta ranges) and index validation, since PNTS/REFSKELT may come after their users.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psk_int.h"

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
	struct psk_mesh *m;
	struct diag *d;
	bool nomem;
	size_t used[SLOT_N]; /* chunk index + 1 of the chunk that filled the slot */
};

static void *alloc_recs(struct rd *r, size_t n, size_t sz)
{
	void *p = xcalloc_n(n ? n : 1, sz);

	if (!p)
		r->nomem = true;
	return p;
}

static void read_pnts(const uint8_t *p, size_t n, struct psk_point *v)
{
	for (size_t i = 0; i < n; i++, p += 12) {
		v[i].x = f32(p);
		v[i].y = f32(p + 4);
		v[i].z = f32(p + 8);
	}
}

static void read_chunk(struct rd *r, const uint8_t *file, const struct psk_chunk *c, size_t ci)
{
	struct psk_mesh *m = r->m;
	const uint8_t *p = file + c->payload_off;
	unsigned set = 0;
	enum psk_ct t = classify(c, &set);
	enum psk_slot slot;
	uint32_t want;
	size_t n;
	char id[84];

	psk_id_text(c, id);
	switch (t) {
	case CT_HEAD:
		if (ci != 0 && c->data_count != 0)
			diag_add(r->d, "chunk %zu (%s): repeated head carries %u records", ci, id,
				 c->data_count);
		return;
	case CT_UNKNOWN:
		diag_add(r->d, "chunk %zu (%s): unknown chunk, %u records of %u bytes skipped", ci,
			 id, c->data_count, c->data_size);
		return;
	case CT_PNTS:
		slot = SLOT_PNTS, want = PSK_REC_PNTS;
		break;
	case CT_VTXW:
		slot = SLOT_VTXW, want = PSK_REC_VTXW;
		break;
	case CT_FACE16:
		slot = SLOT_FACE, want = PSK_REC_FACE16;
		break;
	case CT_FACE32:
		slot = SLOT_FACE, want = PSK_REC_FACE32;
		break;
	case CT_MATT:
		slot = SLOT_MATT, want = PSK_REC_MATT;
		break;
	case CT_SKEL:
		slot = SLOT_SKEL, want = PSK_REC_BONE;
		break;
	case CT_WEIGHTS:
		slot = SLOT_WEIGHTS, want = PSK_REC_WEIGHT;
		break;
	case CT_COLOR:
		slot = SLOT_COLOR, want = PSK_REC_COLOR;
		break;
	case CT_NORMS:
		slot = SLOT_NORMS, want = PSK_REC_NORM;
		break;
	case CT_MRPHINFO:
		slot = SLOT_MRPHINFO, want = PSK_REC_MRPHINFO;
		break;
	case CT_MRPHDATA:
		slot = SLOT_MRPHDATA, want = PSK_REC_MRPHDATA;
		break;
	case CT_SOCKET:
		slot = SLOT_SOCKET, want = PSK_REC_SOCKET;
		break;
	case CT_EXTRAUV:
		if (set >= PSK_MAX_EXTRA_UVS) {
			diag_add(r->d,
				 "chunk %zu (%s): extra UV set %u beyond the %d supported, skipped",
				 ci, id, set, PSK_MAX_EXTRA_UVS);
			return;
		}
		slot = (enum psk_slot)(SLOT_UV0 + set), want = PSK_REC_UV;
		break;
	default:
		return;
	}
	if (r->used[slot]) {
		diag_add(r->d, "chunk %zu (%s): duplicate of chunk %zu, ignored", ci, id,
			 r->used[slot] - 1);
		return;
	}
	if (!psk_chunk_records(c, ci, want, &n, r->d))
		return;
	r->used[slot] = ci + 1;

	switch (t) {
	case CT_PNTS:
		if (!(m->points = alloc_recs(r, n, sizeof *m->points)))
			return;
		read_pnts(p, n, m->points);
		m->n_points = n;
		break;
	case CT_NORMS:
		if (!(m->normals = alloc_recs(r, n, sizeof *m->normals)))
			return;
		read_pnts(p, n, m->normals);
		m->n_normals = n;
		break;
	case CT_VTXW:
		if (!(m->wedges = alloc_recs(r, n, sizeof *m->wedges)))
			return;
		for (size_t i = 0; i < n; i++, p += PSK_REC_VTXW) {
			struct psk_wedge *w = &m->wedges[i];

			w->point = ld_u32le(p); /* width resolved once PNTS is known */
			w->u = f32(p + 4);
			w->v = f32(p + 8);
			w->mat = p[12];
			w->reserved = p[13];
		}
		m->n_wedges = n;
		break;
	case CT_FACE16:
	case CT_FACE32:
		if (!(m->faces = alloc_recs(r, n, sizeof *m->faces)))
			return;
		for (size_t i = 0; i < n; i++, p += want) {
			struct psk_face *f = &m->faces[i];

			if (t == CT_FACE16) {
				for (int k = 0; k < 3; k++)
					f->wedge[k] = ld_u16le(p + 2 * k);
				f->mat = p[6];
				f->aux_mat = p[7];
				f->smoothing = ld_u32le(p + 8);
			} else {
				for (int k = 0; k < 3; k++)
					f->wedge[k] = ld_u32le(p + 4 * k);
				f->mat = p[12];
				f->aux_mat = p[13];
				f->smoothing = ld_u32le(p + 14);
			}
		}
		m->n_faces = n;
		m->faces32 = t == CT_FACE32;
		break;
	case CT_MATT:
		if (!(m->materials = alloc_recs(r, n, sizeof *m->materials)))
			return;
		for (size_t i = 0; i < n; i++, p += PSK_REC_MATT) {
			struct psk_material *mt = &m->materials[i];

			memcpy(mt->name, p, PSK_NAME_LEN);
			mt->texture_index = (int32_t)ld_u32le(p + 64);
			mt->poly_flags = ld_u32le(p + 68);
			mt->aux_material = (int32_t)ld_u32le(p + 72);
			mt->aux_flags = ld_u32le(p + 76);
			mt->lod_bias = (int32_t)ld_u32le(p + 80);
			mt->lod_style = (int32_t)ld_u32le(p + 84);
		}
		m->n_materials = n;
		break;
	case CT_SKEL:
		if (!(m->bones = alloc_recs(r, n, sizeof *m->bones)))
			return;
		for (size_t i = 0; i < n; i++, p += PSK_REC_BONE)
			psk_get_bone(p, &m->bones[i]);
		m->n_bones = n;
		break;
	case CT_WEIGHTS:
		if (!(m->weights = alloc_recs(r, n, sizeof *m->weights)))
			return;
		for (size_t i = 0; i < n; i++, p += PSK_REC_WEIGHT) {
			m->weights[i].weight = f32(p);
			m->weights[i].point = (int32_t)ld_u32le(p + 4);
			m->weights[i].bone = (int32_t)ld_u32le(p + 8);
		}
		m->n_weights = n;
		break;
	case CT_COLOR:
		if (!(m->colors = alloc_recs(r, n, sizeof *m->colors)))
			return;
		for (size_t i = 0; i < n; i++, p += PSK_REC_COLOR) {
			m->colors[i].r = p[0];
			m->colors[i].g = p[1];
			m->colors[i].b = p[2];
			m->colors[i].a = p[3];
		}
		m->n_colors = n;
		break;
	case CT_EXTRAUV:
		if (!(m->extra_uvs[set] = alloc_recs(r, n, sizeof *m->extra_uvs[set])))
			return;
		for (size_t i = 0; i < n; i++, p += PSK_REC_UV) {
			m->extra_uvs[set][i].u = f32(p);
			m->extra_uvs[set][i].v = f32(p + 4);
		}
		m->n_extra_uvs[set] = n;
		if (set + 1 > m->n_extra_uv_sets)
			m->n_extra_uv_sets = set + 1;
		break;
	case CT_MRPHINFO:
		if (!(m->morphs = alloc_recs(r, n, sizeof *m->morphs)))
			return;
		for (size_t i = 0; i < n; i++, p += PSK_REC_MRPHINFO) {
			memcpy(m->morphs[i].name, p, PSK_NAME_LEN);
			m->morphs[i].vertex_count = (int32_t)ld_u32le(p + 64);
		}
		m->n_morphs = n;
		break;
	case CT_MRPHDATA:
		if (!(m->deltas = alloc_recs(r, n, sizeof *m->deltas)))
			return;
		for (size_t i = 0; i < n; i++, p += PSK_REC_MRPHDATA) {
			struct psk_morph_delta *dl = &m->deltas[i];

			for (int k = 0; k < 3; k++) {
				dl->pos[k] = f32(p + 4 * k);
				dl->tangent_z[k] = f32(p + 12 + 4 * k);
			}
			dl->point = (int32_t)ld_u32le(p + 24);
		}
		m->n_deltas = n;
		break;
	case CT_SOCKET:
		if (!(m->sockets = alloc_recs(r, n, sizeof *m->sockets)))
			return;
		for (size_t i = 0; i < n; i++, p += PSK_REC_SOCKET) {
			struct psk_socket *s = &m->sockets[i];

			memcpy(s->name, p, PSK_NAME_LEN);
			memcpy(s->bone, p + 64, PSK_NAME_LEN);
			for (int k = 0; k < 3; k++) {
				s->loc[k] = f32(p + 128 + 4 * k);
				s->rot[k] = f32(p + 140 + 4 * k);
				s->scale[k] = f32(p + 152 + 4 * k);
			}
		}
		m->n_sockets = n;
		break;
	default:
		break;
	}
}

/* Deltas of morph i follow those of morph i-1 (spec §3 MRPHDATA). */
static void resolve_morphs(struct psk_mesh *m, struct diag *d)
{
	size_t at = 0;
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
		mo->n_deltas = cnt <= m->n_deltas - at ? cnt : m->n_deltas - at;
		at += mo->n_deltas;
	}
	psk_rep_end(&rep);
	if (want != m->n_deltas && (m->n_morphs || m->n_deltas))
		diag_add(d, "MRPHINFO vertex counts add up to %llu but MRPHDATA holds %zu deltas",
			 (unsigned long long)want, m->n_deltas);
}

static void check_counts(const struct psk_mesh *m, struct diag *d)
{
	if (m->n_colors && m->n_colors != m->n_wedges)
		diag_add(d, "VERTEXCOLOR has %zu colors for %zu wedges", m->n_colors, m->n_wedges);
	for (size_t s = 0; s < PSK_MAX_EXTRA_UVS; s++)
		if (m->n_extra_uvs[s] && m->n_extra_uvs[s] != m->n_wedges)
			diag_add(d, "EXTRAUVS%zu has %zu UVs for %zu wedges", s, m->n_extra_uvs[s],
				 m->n_wedges);
	if (m->n_normals && m->n_normals != m->n_points && m->n_normals != m->n_wedges)
		diag_add(d, "VTXNORMS has %zu normals for %zu points and %zu wedges", m->n_normals,
			 m->n_points, m->n_wedges);
}

static void check_indices(const struct psk_mesh *m, struct diag *d)
{
	struct psk_rep wp = {d, "VTXW0000", 0}, fw = {d, "faces", 0}, fm = {d, "faces", 0};
	struct psk_rep wt = {d, "RAWWEIGHTS", 0}, md = {d, "MRPHDATA", 0};

	for (size_t i = 0; i < m->n_wedges; i++)
		if (m->wedges[i].point >= m->n_points)
			psk_rep_add(&wp, "VTXW0000: wedge %zu point %u out of range (%zu points)",
				    i, m->wedges[i].point, m->n_points);
	psk_rep_end(&wp);
	for (size_t i = 0; i < m->n_faces; i++) {
		const struct psk_face *f = &m->faces[i];

		for (int k = 0; k < 3; k++)
			if (f->wedge[k] >= m->n_wedges)
				psk_rep_add(&fw, "face %zu wedge %u out of range (%zu wedges)", i,
					    f->wedge[k], m->n_wedges);
		if (f->mat >= m->n_materials)
			psk_rep_add(&fm, "face %zu material %u out of range (%zu materials)", i,
				    f->mat, m->n_materials);
	}
	psk_rep_end(&fw);
	psk_rep_end(&fm);
	for (size_t i = 0; i < m->n_weights; i++) {
		const struct psk_weight *w = &m->weights[i];

		if (w->point < 0 || (uint64_t)w->point >= m->n_points)
			psk_rep_add(&wt,
				    "RAWWEIGHTS: weight %zu point %d out of range (%zu points)", i,
				    w->point, m->n_points);
		if (w->bone < 0 || (uint64_t)w->bone >= m->n_bones)
			psk_rep_add(&wt, "RAWWEIGHTS: weight %zu bone %d out of range (%zu bones)",
				    i, w->bone, m->n_bones);
	}
	psk_rep_end(&wt);
	for (size_t i = 0; i < m->n_deltas; i++)
		if (m->deltas[i].point < 0 || (uint64_t)m->deltas[i].point >= m->n_points)
			psk_rep_add(&md, "MRPHDATA: delta %zu point %d out of range (%zu points)",
				    i, m->deltas[i].point, m->n_points);
	psk_rep_end(&md);
	psk_check_bones(m->bones, m->n_bones, "REFSKELT", d);
}

enum rc psk_read(const uint8_t *p, size_t size, struct psk_mesh *out, struct diag *diag)
{
	struct psk_chunks ch;
	struct src s;
	struct src_mem sm;
	struct rd r;
	enum rc res;

	memset(out, 0, sizeof *out);
	src_init_mem(&s, &sm, p, size);
	res = psk_scan(&s, &ch, diag);
	if (res == RC_CORRUPT) {
		/* A head whose payload covers the file: a PSK with nothing we can reach. */
		out->head_type_flag = ch.v[0].type_flag;
		psk_chunks_free(&ch);
		return RC_OK;
	}
	if (res != RC_OK)
		return res;
	if (ch.kind != PSK_KIND_MESH) {
		psk_chunks_free(&ch);
		return RC_FORMAT;
	}
	memset(&r, 0, sizeof r);
	r.m = out;
	r.d = diag;
	out->head_type_flag = ch.v[0].type_flag;
	for (size_t i = 0; i < ch.n && !r.nomem; i++)
		read_chunk(&r, p, &ch.v[i], i);
	psk_chunks_free(&ch);
	if (r.nomem) {
		psk_mesh_free(out);
		return RC_NOMEM;
	}
	/* Spec §4 safe reader rule: the high word is ActorX padding garbage unless the
	 * mesh needs 32-bit point indices. */
	if (out->n_points <= 65536)
		for (size_t i = 0; i < out->n_wedges; i++)
			out->wedges[i].point &= 0xFFFF;
	resolve_morphs(out, diag);
	check_counts(out, diag);
	check_indices(out, diag);
	return RC_OK;
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
