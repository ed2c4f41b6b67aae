/* PSK/PSA writers, spec §12 profile. They write what the struct holds; no normalising. */
#include <stdio.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psk_int.h"

bool psk_needs_pskx(const struct psk_mesh *m)
{
	return m->n_wedges > 65536;
}

/* DataCount is an int32 on disk. */
static bool count_ok(size_t n)
{
	return n <= INT32_MAX;
}

static void put_vec(struct buf *b, const float *v, int n)
{
	for (int i = 0; i < n; i++)
		buf_f32le(b, v[i]);
}

static enum rc finish(struct buf *b)
{
	return b->oom ? RC_NOMEM : RC_OK;
}

enum rc psk_write(const struct psk_mesh *m, struct buf *b)
{
	bool f32 = psk_needs_pskx(m);
	char id[21];

	if (!count_ok(m->n_points) || !count_ok(m->n_wedges) || !count_ok(m->n_faces) ||
	    !count_ok(m->n_materials) || !count_ok(m->n_bones) || !count_ok(m->n_weights) ||
	    !count_ok(m->n_normals) || !count_ok(m->n_colors) || !count_ok(m->n_morphs) ||
	    !count_ok(m->n_deltas) || !count_ok(m->n_sockets))
		return RC_INVAL;
	for (size_t s = 0; s < PSK_MAX_EXTRA_UVS; s++)
		if (!count_ok(m->n_extra_uvs[s]))
			return RC_INVAL;

	psk_put_header(b, "ACTRHEAD", m->head_type_flag ? m->head_type_flag : PSK_WRITER_TYPE_FLAG,
		       0, 0);

	psk_put_header(b, "PNTS0000", 0, PSK_REC_PNTS, (uint32_t)m->n_points);
	for (size_t i = 0; i < m->n_points; i++) {
		buf_f32le(b, m->points[i].x);
		buf_f32le(b, m->points[i].y);
		buf_f32le(b, m->points[i].z);
	}

	psk_put_header(b, "VTXW0000", 0, PSK_REC_VTXW, (uint32_t)m->n_wedges);
	for (size_t i = 0; i < m->n_wedges; i++) {
		const struct psk_wedge *w = &m->wedges[i];

		buf_u32le(b, w->point);
		buf_f32le(b, w->u);
		buf_f32le(b, w->v);
		buf_u8(b, w->mat);
		buf_u8(b, w->reserved);
		buf_u16le(b, 0);
	}

	psk_put_header(b, f32 ? "FACE3200" : "FACE0000", 0, f32 ? PSK_REC_FACE32 : PSK_REC_FACE16,
		       (uint32_t)m->n_faces);
	for (size_t i = 0; i < m->n_faces; i++) {
		const struct psk_face *f = &m->faces[i];

		for (int k = 0; k < 3; k++) {
			if (f32)
				buf_u32le(b, f->wedge[k]);
			else
				buf_u16le(b, (uint16_t)f->wedge[k]);
		}
		buf_u8(b, f->mat);
		buf_u8(b, f->aux_mat);
		buf_u32le(b, f->smoothing);
	}

	psk_put_header(b, "MATT0000", 0, PSK_REC_MATT, (uint32_t)m->n_materials);
	for (size_t i = 0; i < m->n_materials; i++) {
		const struct psk_material *mt = &m->materials[i];

		buf_put(b, mt->name, PSK_NAME_LEN);
		buf_u32le(b, (uint32_t)mt->texture_index);
		buf_u32le(b, mt->poly_flags);
		buf_u32le(b, (uint32_t)mt->aux_material);
		buf_u32le(b, mt->aux_flags);
		buf_u32le(b, (uint32_t)mt->lod_bias);
		buf_u32le(b, (uint32_t)mt->lod_style);
	}

	psk_put_header(b, "REFSKELT", 0, PSK_REC_BONE, (uint32_t)m->n_bones);
	for (size_t i = 0; i < m->n_bones; i++)
		psk_put_bone(b, &m->bones[i]);

	psk_put_header(b, "RAWWEIGHTS", 0, PSK_REC_WEIGHT, (uint32_t)m->n_weights);
	for (size_t i = 0; i < m->n_weights; i++) {
		buf_f32le(b, m->weights[i].weight);
		buf_u32le(b, (uint32_t)m->weights[i].point);
		buf_u32le(b, (uint32_t)m->weights[i].bone);
	}

	if (m->n_colors) {
		psk_put_header(b, "VERTEXCOLOR", 0, PSK_REC_COLOR, (uint32_t)m->n_colors);
		for (size_t i = 0; i < m->n_colors; i++) {
			const struct psk_color *c = &m->colors[i];
			const uint8_t rgba[4] = {c->r, c->g, c->b, c->a};

			buf_put(b, rgba, 4);
		}
	}
	for (size_t s = 0; s < PSK_MAX_EXTRA_UVS; s++) {
		if (!m->n_extra_uvs[s])
			continue;
		snprintf(id, sizeof id, "EXTRAUVS%zu", s);
		psk_put_header(b, id, 0, PSK_REC_UV, (uint32_t)m->n_extra_uvs[s]);
		for (size_t i = 0; i < m->n_extra_uvs[s]; i++) {
			buf_f32le(b, m->extra_uvs[s][i].u);
			buf_f32le(b, m->extra_uvs[s][i].v);
		}
	}
	if (m->n_normals) {
		psk_put_header(b, "VTXNORMS", 0, PSK_REC_NORM, (uint32_t)m->n_normals);
		for (size_t i = 0; i < m->n_normals; i++) {
			buf_f32le(b, m->normals[i].x);
			buf_f32le(b, m->normals[i].y);
			buf_f32le(b, m->normals[i].z);
		}
	}
	if (m->n_morphs || m->n_deltas) {
		psk_put_header(b, "MRPHINFO", 0, PSK_REC_MRPHINFO, (uint32_t)m->n_morphs);
		for (size_t i = 0; i < m->n_morphs; i++) {
			buf_put(b, m->morphs[i].name, PSK_NAME_LEN);
			buf_u32le(b, (uint32_t)m->morphs[i].vertex_count);
		}
		psk_put_header(b, "MRPHDATA", 0, PSK_REC_MRPHDATA, (uint32_t)m->n_deltas);
		for (size_t i = 0; i < m->n_deltas; i++) {
			put_vec(b, m->deltas[i].pos, 3);
			put_vec(b, m->deltas[i].tangent_z, 3);
			buf_u32le(b, (uint32_t)m->deltas[i].point);
		}
	}
	if (m->n_sockets) {
		psk_put_header(b, "SKELSOCK", 0, PSK_REC_SOCKET, (uint32_t)m->n_sockets);
		for (size_t i = 0; i < m->n_sockets; i++) {
			const struct psk_socket *s = &m->sockets[i];

			buf_put(b, s->name, PSK_NAME_LEN);
			buf_put(b, s->bone, PSK_NAME_LEN);
			put_vec(b, s->loc, 3);
			put_vec(b, s->rot, 3);
			put_vec(b, s->scale, 3);
		}
	}
	return finish(b);
}

/* ------------------------------------------------------------------------------- PSA */

static int32_t psa_head_flag(const struct psa_anim *a)
{
	return a->head_type_flag ? a->head_type_flag : PSK_WRITER_TYPE_FLAG;
}

static void put_seq(struct buf *b, const struct psa_sequence *s)
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

static void put_keys(struct buf *b, const struct psa_key *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_vec(b, k[i].pos, 3);
		put_vec(b, k[i].rot, 4);
		buf_f32le(b, k[i].time);
	}
}

static void put_scale_keys(struct buf *b, const struct psa_scale_key *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_vec(b, k[i].scale, 3);
		buf_f32le(b, k[i].time);
	}
}

static void put_bones(struct buf *b, const struct psk_bone *bones, size_t n)
{
	psk_put_header(b, "BONENAMES", 0, PSK_REC_BONE, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		psk_put_bone(b, &bones[i]);
}

enum rc psa_write(const struct psa_anim *a, struct buf *b)
{
	int32_t flag = psa_head_flag(a);

	if (!count_ok(a->n_bones) || !count_ok(a->n_seqs) || !count_ok(a->n_keys) ||
	    !count_ok(a->n_scale_keys))
		return RC_INVAL;
	psk_put_header(b, "ANIMHEAD", flag, 0, 0);
	put_bones(b, a->bones, a->n_bones);
	psk_put_header(b, "ANIMINFO", 0, PSA_REC_ANIMINFO, (uint32_t)a->n_seqs);
	for (size_t i = 0; i < a->n_seqs; i++)
		put_seq(b, &a->seqs[i]);
	psk_put_header(b, "ANIMKEYS", 0, PSA_REC_KEY, (uint32_t)a->n_keys);
	put_keys(b, a->keys, a->n_keys);
	if (a->has_scale_chunk || a->n_scale_keys > 0 || flag >= PSA_SCALEKEYS_FLAG) {
		psk_put_header(b, "SCALEKEYS", 0, PSA_REC_SCALEKEY, (uint32_t)a->n_scale_keys);
		put_scale_keys(b, a->scale_keys, a->n_scale_keys);
	}
	return finish(b);
}

enum rc psa_write_sequence(const struct psa_anim *a, size_t seq, struct buf *b)
{
	struct psa_sequence s;
	uint64_t first, n;
	bool scales;

	if (seq >= a->n_seqs || !count_ok(a->n_bones))
		return RC_INVAL;
	s = a->seqs[seq];
	if (s.first_raw_frame < 0 || s.num_raw_frames < 0)
		return RC_CORRUPT;
	first = (uint64_t)s.first_raw_frame * a->n_bones;
	n = (uint64_t)s.num_raw_frames * a->n_bones;
	if (first > a->n_keys || n > a->n_keys - first)
		return RC_CORRUPT;
	if (n > INT32_MAX)
		return RC_INVAL;
	scales = first <= a->n_scale_keys && n <= a->n_scale_keys - first && n > 0;
	s.first_raw_frame = 0;
	s.key_quotum = (int32_t)n;

	psk_put_header(b, "ANIMHEAD", psa_head_flag(a), 0, 0);
	put_bones(b, a->bones, a->n_bones);
	psk_put_header(b, "ANIMINFO", 0, PSA_REC_ANIMINFO, 1);
	put_seq(b, &s);
	psk_put_header(b, "ANIMKEYS", 0, PSA_REC_KEY, (uint32_t)n);
	put_keys(b, n ? a->keys + first : NULL, (size_t)n); /* keys is NULL when there are none */
	psk_put_header(b, "SCALEKEYS", 0, PSA_REC_SCALEKEY, scales ? (uint32_t)n : 0);
	if (scales)
		put_scale_keys(b, a->scale_keys + first, (size_t)n);
	return finish(b);
}
