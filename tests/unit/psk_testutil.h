/* Shared helpers for the PSK/PSA unit tests: field-by-field comparison and chunk surgery.
 * Include after <cmocka.h>. */
#ifndef PSGFS_PSK_TESTUTIL_H
#define PSGFS_PSK_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"
#include "psgfs/formats/psk.h"
#include "psgfs/base/source.h"

#define TU __attribute__((unused)) static

/* Floats compare by bit pattern: the formats must round-trip them exactly. */
#define assert_f32_same(a, b) assert_int_equal(f32_bits(a), f32_bits(b))

TU void assert_vec_same(const float *a, const float *b, int n)
{
	for (int i = 0; i < n; i++)
		assert_f32_same(a[i], b[i]);
}

TU void assert_bone_same(const struct psk_bone *a, const struct psk_bone *b)
{
	assert_memory_equal(a->name, b->name, PSK_NAME_LEN);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->num_children, b->num_children);
	assert_int_equal(a->parent, b->parent);
	assert_vec_same(a->rot, b->rot, 4);
	assert_vec_same(a->pos, b->pos, 3);
	assert_f32_same(a->length, b->length);
	assert_vec_same(a->size, b->size, 3);
}

TU void assert_mesh_same(const struct psk_mesh *a, const struct psk_mesh *b)
{
	assert_int_equal(a->head_type_flag, b->head_type_flag);
	assert_int_equal(a->n_points, b->n_points);
	for (size_t i = 0; i < a->n_points; i++)
		assert_vec_same(&a->points[i].x, &b->points[i].x, 3);
	assert_int_equal(a->n_wedges, b->n_wedges);
	for (size_t i = 0; i < a->n_wedges; i++) {
		assert_int_equal(a->wedges[i].point, b->wedges[i].point);
		assert_f32_same(a->wedges[i].u, b->wedges[i].u);
		assert_f32_same(a->wedges[i].v, b->wedges[i].v);
		assert_int_equal(a->wedges[i].mat, b->wedges[i].mat);
		assert_int_equal(a->wedges[i].reserved, b->wedges[i].reserved);
	}
	assert_int_equal(a->n_faces, b->n_faces);
	assert_int_equal(a->faces32, b->faces32);
	for (size_t i = 0; i < a->n_faces; i++) {
		for (int k = 0; k < 3; k++)
			assert_int_equal(a->faces[i].wedge[k], b->faces[i].wedge[k]);
		assert_int_equal(a->faces[i].mat, b->faces[i].mat);
		assert_int_equal(a->faces[i].aux_mat, b->faces[i].aux_mat);
		assert_int_equal(a->faces[i].smoothing, b->faces[i].smoothing);
	}
	assert_int_equal(a->n_materials, b->n_materials);
	for (size_t i = 0; i < a->n_materials; i++) {
		const struct psk_material *x = &a->materials[i], *y = &b->materials[i];

		assert_memory_equal(x->name, y->name, PSK_NAME_LEN);
		assert_int_equal(x->texture_index, y->texture_index);
		assert_int_equal(x->poly_flags, y->poly_flags);
		assert_int_equal(x->aux_material, y->aux_material);
		assert_int_equal(x->aux_flags, y->aux_flags);
		assert_int_equal(x->lod_bias, y->lod_bias);
		assert_int_equal(x->lod_style, y->lod_style);
	}
	assert_int_equal(a->n_bones, b->n_bones);
	for (size_t i = 0; i < a->n_bones; i++)
		assert_bone_same(&a->bones[i], &b->bones[i]);
	assert_int_equal(a->n_weights, b->n_weights);
	for (size_t i = 0; i < a->n_weights; i++) {
		assert_f32_same(a->weights[i].weight, b->weights[i].weight);
		assert_int_equal(a->weights[i].point, b->weights[i].point);
		assert_int_equal(a->weights[i].bone, b->weights[i].bone);
	}
	assert_int_equal(a->n_normals, b->n_normals);
	for (size_t i = 0; i < a->n_normals; i++)
		assert_vec_same(&a->normals[i].x, &b->normals[i].x, 3);
	assert_int_equal(a->n_colors, b->n_colors);
	for (size_t i = 0; i < a->n_colors; i++) {
		assert_int_equal(a->colors[i].r, b->colors[i].r);
		assert_int_equal(a->colors[i].g, b->colors[i].g);
		assert_int_equal(a->colors[i].b, b->colors[i].b);
		assert_int_equal(a->colors[i].a, b->colors[i].a);
	}
	assert_int_equal(a->n_extra_uv_sets, b->n_extra_uv_sets);
	for (size_t s = 0; s < PSK_MAX_EXTRA_UVS; s++) {
		assert_int_equal(a->n_extra_uvs[s], b->n_extra_uvs[s]);
		for (size_t i = 0; i < a->n_extra_uvs[s]; i++) {
			assert_f32_same(a->extra_uvs[s][i].u, b->extra_uvs[s][i].u);
			assert_f32_same(a->extra_uvs[s][i].v, b->extra_uvs[s][i].v);
		}
	}
	assert_int_equal(a->n_morphs, b->n_morphs);
	for (size_t i = 0; i < a->n_morphs; i++) {
		assert_memory_equal(a->morphs[i].name, b->morphs[i].name, PSK_NAME_LEN);
		assert_int_equal(a->morphs[i].vertex_count, b->morphs[i].vertex_count);
		assert_int_equal(a->morphs[i].first_delta, b->morphs[i].first_delta);
		assert_int_equal(a->morphs[i].n_deltas, b->morphs[i].n_deltas);
	}
	assert_int_equal(a->n_deltas, b->n_deltas);
	for (size_t i = 0; i < a->n_deltas; i++) {
		assert_vec_same(a->deltas[i].pos, b->deltas[i].pos, 3);
		assert_vec_same(a->deltas[i].tangent_z, b->deltas[i].tangent_z, 3);
		assert_int_equal(a->deltas[i].point, b->deltas[i].point);
	}
	assert_int_equal(a->n_sockets, b->n_sockets);
	for (size_t i = 0; i < a->n_sockets; i++) {
		assert_memory_equal(a->sockets[i].name, b->sockets[i].name, PSK_NAME_LEN);
		assert_memory_equal(a->sockets[i].bone, b->sockets[i].bone, PSK_NAME_LEN);
		assert_vec_same(a->sockets[i].loc, b->sockets[i].loc, 3);
		assert_vec_same(a->sockets[i].rot, b->sockets[i].rot, 3);
		assert_vec_same(a->sockets[i].scale, b->sockets[i].scale, 3);
	}
}

TU void assert_seq_same(const struct psa_sequence *x, const struct psa_sequence *y)
{
	assert_memory_equal(x->name, y->name, PSK_NAME_LEN);
	assert_memory_equal(x->group, y->group, PSK_NAME_LEN);
	assert_int_equal(x->total_bones, y->total_bones);
	assert_int_equal(x->root_include, y->root_include);
	assert_int_equal(x->key_compression_style, y->key_compression_style);
	assert_int_equal(x->key_quotum, y->key_quotum);
	assert_f32_same(x->key_reduction, y->key_reduction);
	assert_f32_same(x->track_time, y->track_time);
	assert_f32_same(x->anim_rate, y->anim_rate);
	assert_int_equal(x->start_bone, y->start_bone);
	assert_int_equal(x->first_raw_frame, y->first_raw_frame);
	assert_int_equal(x->num_raw_frames, y->num_raw_frames);
	assert_int_equal(x->keys_ok, y->keys_ok);
}

TU void assert_key_same(const struct psa_key *x, const struct psa_key *y)
{
	assert_non_null(x);
	assert_non_null(y);
	assert_vec_same(x->pos, y->pos, 3);
	assert_vec_same(x->rot, y->rot, 4);
	assert_f32_same(x->time, y->time);
}

TU void assert_anim_same(const struct psa_anim *a, const struct psa_anim *b)
{
	assert_int_equal(a->head_type_flag, b->head_type_flag);
	assert_int_equal(a->n_bones, b->n_bones);
	for (size_t i = 0; i < a->n_bones; i++)
		assert_bone_same(&a->bones[i], &b->bones[i]);
	assert_int_equal(a->n_seqs, b->n_seqs);
	for (size_t i = 0; i < a->n_seqs; i++)
		assert_seq_same(&a->seqs[i], &b->seqs[i]);
	assert_int_equal(a->n_keys, b->n_keys);
	for (size_t i = 0; i < a->n_keys; i++)
		assert_key_same(&a->keys[i], &b->keys[i]);
	assert_int_equal(a->n_scale_keys, b->n_scale_keys);
	for (size_t i = 0; i < a->n_scale_keys; i++) {
		assert_vec_same(a->scale_keys[i].scale, b->scale_keys[i].scale, 3);
		assert_f32_same(a->scale_keys[i].time, b->scale_keys[i].time);
	}
	assert_int_equal(a->has_scale_chunk, b->has_scale_chunk);
	assert_int_equal(a->repaired_first_frames, b->repaired_first_frames);
}

/* True when some diag line contains `needle`. */
TU bool diag_has(const struct diag *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msg[i], needle))
			return true;
	return false;
}

TU void diag_dump(const struct diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		printf("# diag: %s\n", d->msg[i]);
}

/* The chunk table of a buffer (asserts the scan succeeds). */
TU void scan_buf(const uint8_t *p, size_t n, struct psk_chunks *ch)
{
	struct src s;
	struct src_mem sm;

	src_init_mem(&s, &sm, p, n);
	assert_int_equal(psk_scan(&s, ch, NULL), RC_OK);
}

/* Offset of the first chunk header whose ID is `id`; asserts it exists. */
TU size_t chunk_off(const uint8_t *p, size_t n, const char *id)
{
	struct psk_chunks ch;
	size_t off = SIZE_MAX;

	scan_buf(p, n, &ch);
	for (size_t i = 0; i < ch.n && off == SIZE_MAX; i++)
		if (!strcmp(ch.v[i].id, id))
			off = (size_t)ch.v[i].offset;
	psk_chunks_free(&ch);
	assert_true(off != SIZE_MAX);
	return off;
}

TU void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Rename a chunk in place (new ID up to 19 chars, NUL-filled). */
TU void rename_chunk(uint8_t *p, size_t n, const char *from, const char *to)
{
	size_t off = chunk_off(p, n, from);

	memset(p + off, 0, 20);
	memcpy(p + off, to, strlen(to));
}

#endif
