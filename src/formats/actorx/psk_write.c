/*
 * PSK/PSA writers (docs/psk-psa.md, "Writer profile"). A file is first planned as a list of
 * chunks (which ones, in which order, how many records), so the same plan serves a whole-file
 * write and a streamed one that renders any record range on demand. They write what they are
 * given; no normalising.
 */
#include <stdio.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "formats/actorx/psk_int.h"

/* ---- records ---- */

static void put_vec(struct buf *b, const float *v, int n)
{
	for (int i = 0; i < n; i++)
		buf_f32le(b, v[i]);
}

void psk_put_point(struct buf *b, const struct psk_point *p)
{
	buf_f32le(b, p->x);
	buf_f32le(b, p->y);
	buf_f32le(b, p->z);
}

void psk_put_wedge(struct buf *b, const struct psk_wedge *w)
{
	buf_u32le(b, w->point);
	buf_f32le(b, w->u);
	buf_f32le(b, w->v);
	buf_u8(b, w->mat);
	buf_u8(b, w->reserved);
	buf_u16le(b, 0);
}

void psk_put_face(struct buf *b, const struct psk_face *f, bool wide)
{
	for (int k = 0; k < 3; k++) {
		if (wide)
			buf_u32le(b, f->wedge[k]);
		else
			buf_u16le(b, (uint16_t)f->wedge[k]);
	}
	buf_u8(b, f->mat);
	buf_u8(b, f->aux_mat);
	buf_u32le(b, f->smoothing);
}

void psk_put_material(struct buf *b, const struct psk_material *mt)
{
	buf_put(b, mt->name, PSK_NAME_LEN);
	buf_u32le(b, (uint32_t)mt->texture_index);
	buf_u32le(b, mt->poly_flags);
	buf_u32le(b, (uint32_t)mt->aux_material);
	buf_u32le(b, mt->aux_flags);
	buf_u32le(b, (uint32_t)mt->lod_bias);
	buf_u32le(b, (uint32_t)mt->lod_style);
}

void psk_put_weight(struct buf *b, const struct psk_weight *w)
{
	buf_f32le(b, w->weight);
	buf_u32le(b, (uint32_t)w->point);
	buf_u32le(b, (uint32_t)w->bone);
}

void psk_put_color(struct buf *b, const struct psk_color *c)
{
	const uint8_t rgba[4] = {c->r, c->g, c->b, c->a};

	buf_put(b, rgba, 4);
}

void psk_put_uv(struct buf *b, const struct psk_uv *uv)
{
	buf_f32le(b, uv->u);
	buf_f32le(b, uv->v);
}

void psk_put_morph(struct buf *b, const struct psk_morph *m)
{
	buf_put(b, m->name, PSK_NAME_LEN);
	buf_u32le(b, (uint32_t)m->vertex_count);
}

void psk_put_delta(struct buf *b, const struct psk_morph_delta *d)
{
	put_vec(b, d->pos, 3);
	put_vec(b, d->tangent_z, 3);
	buf_u32le(b, (uint32_t)d->point);
}

void psk_put_socket(struct buf *b, const struct psk_socket *s)
{
	buf_put(b, s->name, PSK_NAME_LEN);
	buf_put(b, s->bone, PSK_NAME_LEN);
	put_vec(b, s->loc, 3);
	put_vec(b, s->rot, 3);
	put_vec(b, s->scale, 3);
}

void psa_put_sequence(struct buf *b, const struct psa_sequence *s)
{
	buf_put(b, s->name, PSK_NAME_LEN);
	buf_put(b, s->group, PSK_NAME_LEN);
	buf_u32le(b, (uint32_t)s->total_bones);
	buf_u32le(b, (uint32_t)s->root_include);
	buf_u32le(b, (uint32_t)s->key_compression_style);
	buf_u32le(b, (uint32_t)s->key_quotum);
	buf_f32le(b, s->key_reduction);
	buf_f32le(b, s->track_time);
	buf_f32le(b, s->anim_rate);
	buf_u32le(b, (uint32_t)s->start_bone);
	buf_u32le(b, (uint32_t)s->first_raw_frame);
	buf_u32le(b, (uint32_t)s->num_raw_frames);
}

void psa_put_key(struct buf *b, const struct psa_key *k)
{
	put_vec(b, k->pos, 3);
	put_vec(b, k->rot, 4);
	buf_f32le(b, k->time);
}

void psa_put_scale_key(struct buf *b, const struct psa_scale_key *k)
{
	put_vec(b, k->scale, 3);
	buf_f32le(b, k->time);
}

/* ---- plans ---- */

static bool plan_add(struct ax_plan *p, enum ax_rec rec, const char *id, int32_t flag,
		     uint32_t size, uint64_t n)
{
	struct ax_chunk *c;

	if (p->n == AX_PLAN_MAX || n > INT32_MAX) /* DataCount is an int32 on disk */
		return false;
	c = &p->c[p->n++];
	memset(c, 0, sizeof *c);
	snprintf(c->id, sizeof c->id, "%s", id);
	c->rec = rec;
	c->flag = flag;
	c->size = size;
	c->n = n;
	return true;
}

bool psk_needs_pskx(const struct psk_mesh *m)
{
	return m->n_wedges > 65536;
}

enum rc psk_plan(const struct psk_counts *k, struct ax_plan *p)
{
	bool wide = k->wedges > 65536, ok;
	char id[21];

	p->n = 0;
	ok = plan_add(p, AX_HEAD, "ACTRHEAD", k->head_flag ? k->head_flag : PSK_WRITER_TYPE_FLAG, 0,
		      0);
	ok &= plan_add(p, AX_PNTS, "PNTS0000", 0, PSK_REC_PNTS, k->points);
	ok &= plan_add(p, AX_VTXW, "VTXW0000", 0, PSK_REC_VTXW, k->wedges);
	ok &= plan_add(p, wide ? AX_FACE32 : AX_FACE16, wide ? "FACE3200" : "FACE0000", 0,
		       wide ? PSK_REC_FACE32 : PSK_REC_FACE16, k->faces);
	ok &= plan_add(p, AX_MATT, "MATT0000", 0, PSK_REC_MATT, k->materials);
	ok &= plan_add(p, AX_SKEL, "REFSKELT", 0, PSK_REC_BONE, k->bones);
	ok &= plan_add(p, AX_WEIGHTS, "RAWWEIGHTS", 0, PSK_REC_WEIGHT, k->weights);
	/* Extension chunks after RAWWEIGHTS, so strict readers still find the classic ones. */
	if (k->colors)
		ok &= plan_add(p, AX_COLOR, "VERTEXCOLOR", 0, PSK_REC_COLOR, k->colors);
	for (unsigned s = 0; s < PSK_MAX_EXTRA_UVS; s++) {
		if (!k->uvs[s])
			continue;
		snprintf(id, sizeof id, "EXTRAUVS%u", s);
		ok &= plan_add(p, (enum ax_rec)(AX_UV0 + s), id, 0, PSK_REC_UV, k->uvs[s]);
	}
	if (k->normals)
		ok &= plan_add(p, AX_NORMS, "VTXNORMS", 0, PSK_REC_NORM, k->normals);
	if (k->morphs || k->deltas) {
		ok &= plan_add(p, AX_MRPHINFO, "MRPHINFO", 0, PSK_REC_MRPHINFO, k->morphs);
		ok &= plan_add(p, AX_MRPHDATA, "MRPHDATA", 0, PSK_REC_MRPHDATA, k->deltas);
	}
	if (k->sockets)
		ok &= plan_add(p, AX_SOCKET, "SKELSOCK", 0, PSK_REC_SOCKET, k->sockets);
	return ok ? RC_OK : RC_INVAL;
}

static int32_t psa_flag(int32_t head)
{
	return head ? head : PSK_WRITER_TYPE_FLAG;
}

enum rc psa_plan(int32_t head_flag, size_t bones, size_t seqs, uint64_t keys, uint64_t scale_keys,
		 bool scale_chunk, struct ax_plan *p)
{
	int32_t flag = psa_flag(head_flag);
	bool ok;

	p->n = 0;
	ok = plan_add(p, AX_HEAD, "ANIMHEAD", flag, 0, 0);
	ok &= plan_add(p, AX_BONENAMES, "BONENAMES", 0, PSK_REC_BONE, bones);
	ok &= plan_add(p, AX_ANIMINFO, "ANIMINFO", 0, PSA_REC_ANIMINFO, seqs);
	ok &= plan_add(p, AX_ANIMKEYS, "ANIMKEYS", 0, PSA_REC_KEY, keys);
	/* ActorX-era importers read SCALEKEYS positionally once ANIMHEAD is new enough. */
	if (scale_chunk || scale_keys > 0 || flag >= PSA_SCALEKEYS_FLAG)
		ok &= plan_add(p, AX_SCALEKEYS, "SCALEKEYS", 0, PSA_REC_SCALEKEY, scale_keys);
	return ok ? RC_OK : RC_INVAL;
}

void ax_put_header(struct buf *b, const struct ax_chunk *c)
{
	psk_put_header(b, c->id, c->flag, c->size, (uint32_t)c->n);
}

/* ---- whole files from memory ---- */

static void put_mesh_records(struct buf *b, const struct psk_mesh *m, const struct ax_chunk *c)
{
	for (size_t i = 0; i < c->n; i++) {
		switch (c->rec) {
		case AX_PNTS:
			psk_put_point(b, &m->points[i]);
			break;
		case AX_VTXW:
			psk_put_wedge(b, &m->wedges[i]);
			break;
		case AX_FACE16:
		case AX_FACE32:
			psk_put_face(b, &m->faces[i], c->rec == AX_FACE32);
			break;
		case AX_MATT:
			psk_put_material(b, &m->materials[i]);
			break;
		case AX_SKEL:
			psk_put_bone(b, &m->bones[i]);
			break;
		case AX_WEIGHTS:
			psk_put_weight(b, &m->weights[i]);
			break;
		case AX_COLOR:
			psk_put_color(b, &m->colors[i]);
			break;
		case AX_NORMS:
			psk_put_point(b, &m->normals[i]);
			break;
		case AX_MRPHINFO:
			psk_put_morph(b, &m->morphs[i]);
			break;
		case AX_MRPHDATA:
			psk_put_delta(b, &m->deltas[i]);
			break;
		case AX_SOCKET:
			psk_put_socket(b, &m->sockets[i]);
			break;
		default:
			if (c->rec >= AX_UV0 && c->rec < AX_UV0 + PSK_MAX_EXTRA_UVS)
				psk_put_uv(b, &m->extra_uvs[c->rec - AX_UV0][i]);
		}
	}
}

void psk_counts_of(const struct psk_mesh *m, struct psk_counts *k)
{
	memset(k, 0, sizeof *k);
	k->head_flag = m->head_type_flag;
	k->points = m->n_points;
	k->wedges = m->n_wedges;
	k->faces = m->n_faces;
	k->materials = m->n_materials;
	k->bones = m->n_bones;
	k->weights = m->n_weights;
	k->colors = m->n_colors;
	k->normals = m->n_normals;
	k->morphs = m->n_morphs;
	k->deltas = m->n_deltas;
	k->sockets = m->n_sockets;
	for (size_t s = 0; s < PSK_MAX_EXTRA_UVS; s++)
		k->uvs[s] = m->n_extra_uvs[s];
}

enum rc psk_write(const struct psk_mesh *m, struct buf *b)
{
	struct psk_counts k;
	struct ax_plan p;
	enum rc r;

	psk_counts_of(m, &k);
	r = psk_plan(&k, &p);
	if (r != RC_OK)
		return r;
	for (unsigned i = 0; i < p.n; i++) {
		ax_put_header(b, &p.c[i]);
		put_mesh_records(b, m, &p.c[i]);
	}
	return b->oom ? RC_NOMEM : RC_OK;
}

enum rc psa_write(const struct psa_anim *a, struct buf *b)
{
	struct ax_plan p;
	enum rc r = psa_plan(a->head_type_flag, a->n_bones, a->n_seqs, a->n_keys, a->n_scale_keys,
			     a->has_scale_chunk, &p);

	if (r != RC_OK)
		return r;
	for (unsigned c = 0; c < p.n; c++) {
		ax_put_header(b, &p.c[c]);
		for (size_t i = 0; i < p.c[c].n; i++) {
			if (p.c[c].rec == AX_BONENAMES)
				psk_put_bone(b, &a->bones[i]);
			else if (p.c[c].rec == AX_ANIMINFO)
				psa_put_sequence(b, &a->seqs[i]);
			else if (p.c[c].rec == AX_ANIMKEYS)
				psa_put_key(b, &a->keys[i]);
			else if (p.c[c].rec == AX_SCALEKEYS)
				psa_put_scale_key(b, &a->scale_keys[i]);
		}
	}
	return b->oom ? RC_NOMEM : RC_OK;
}

enum rc psa_sequence_export(const struct psa_sequence *in, size_t n_bones, uint64_t n_keys_avail,
			    uint64_t n_scale_avail, int32_t head_flag, struct psa_sequence *out,
			    struct ax_plan *p, uint64_t *first)
{
	uint64_t n;
	bool scales;

	if (in->first_raw_frame < 0 || in->num_raw_frames < 0)
		return RC_CORRUPT;
	*first = (uint64_t)in->first_raw_frame * n_bones;
	n = (uint64_t)in->num_raw_frames * n_bones;
	if (*first > n_keys_avail || n > n_keys_avail - *first)
		return RC_CORRUPT;
	if (n > INT32_MAX || n_bones > INT32_MAX)
		return RC_INVAL;
	scales = *first <= n_scale_avail && n <= n_scale_avail - *first && n > 0;
	*out = *in;
	out->first_raw_frame = 0;
	out->key_quotum = (int32_t)n;
	/* One sequence per file: SCALEKEYS always written (empty when it has none). */
	return psa_plan(head_flag, n_bones, 1, n, scales ? n : 0, true, p);
}

enum rc psa_write_sequence(const struct psa_anim *a, size_t seq, struct buf *b)
{
	struct psa_sequence s;
	struct ax_plan p;
	uint64_t first;
	enum rc r;

	if (seq >= a->n_seqs)
		return RC_INVAL;
	r = psa_sequence_export(&a->seqs[seq], a->n_bones, a->n_keys, a->n_scale_keys,
				a->head_type_flag, &s, &p, &first);
	if (r != RC_OK)
		return r;
	for (unsigned c = 0; c < p.n; c++) {
		ax_put_header(b, &p.c[c]);
		for (size_t i = 0; i < p.c[c].n; i++) {
			if (p.c[c].rec == AX_BONENAMES)
				psk_put_bone(b, &a->bones[i]);
			else if (p.c[c].rec == AX_ANIMINFO)
				psa_put_sequence(b, &s);
			else if (p.c[c].rec == AX_ANIMKEYS)
				psa_put_key(b, &a->keys[first + i]);
			else if (p.c[c].rec == AX_SCALEKEYS)
				psa_put_scale_key(b, &a->scale_keys[first + i]);
		}
	}
	return b->oom ? RC_NOMEM : RC_OK;
}
