/* PSA reader: BONENAMES, ANIMINFO, ANIMKEYS, SCALEKEYS in any order, then key ranges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psk_int.h"

static float f32(const uint8_t *p)
{
	return f32_from_bits(ld_u32le(p));
}

enum psa_slot { PSA_BONES, PSA_INFO, PSA_KEYS, PSA_SCALE, PSA_NSLOT };

/* Key range [first, end) of sequence s in frame-major key units; false if negative. */
static bool seq_range(const struct psa_anim *a, const struct psa_sequence *s, uint64_t *first,
		      uint64_t *end)
{
	uint64_t f, n;

	if (s->first_raw_frame < 0 || s->num_raw_frames < 0)
		return false;
	/* int32 frames times a bone count bounded by the file: no overflow in 64 bits. */
	f = (uint64_t)s->first_raw_frame * a->n_bones;
	n = (uint64_t)s->num_raw_frames * a->n_bones;
	*first = f;
	*end = f + n;
	return true;
}

/*
 * CUE4Parse before PR #104 wrote FirstRawFrame = NumRawFrames (issue #103). psk_psa_py's
 * rule: when sequence 0 shows that pattern, recompute cumulative offsets. A sequence 0 with
 * no frames matches trivially and proves nothing, so it does not trigger the repair.
 */
static void repair_first_frames(struct psa_anim *a, struct diag *d)
{
	int64_t at = 0;
	bool changed = false;

	if (a->n_seqs == 0 || a->seqs[0].num_raw_frames <= 0 ||
	    a->seqs[0].first_raw_frame != a->seqs[0].num_raw_frames)
		return;
	for (size_t i = 0; i < a->n_seqs; i++) {
		struct psa_sequence *s = &a->seqs[i];
		int32_t v = at > INT32_MAX ? INT32_MAX : (int32_t)at;

		if (s->first_raw_frame != v)
			changed = true;
		s->first_raw_frame = v;
		if (s->num_raw_frames > 0)
			at += s->num_raw_frames;
	}
	if (changed) {
		a->repaired_first_frames = true;
		diag_add(d,
			 "ANIMINFO: FirstRawFrame equals NumRawFrames in sequence 0 (CUE4Parse "
			 "issue #103): recomputed cumulative FirstRawFrame for %zu sequences",
			 a->n_seqs);
	}
}

static void check_seqs(struct psa_anim *a, struct diag *d)
{
	struct psk_rep tb = {d, "ANIMINFO", 0}, kr = {d, "ANIMINFO", 0};
	uint64_t used = 0;

	for (size_t i = 0; i < a->n_seqs; i++) {
		struct psa_sequence *s = &a->seqs[i];
		uint64_t first, end;

		if (s->total_bones < 0 || (uint64_t)s->total_bones != a->n_bones)
			psk_rep_add(&tb, "ANIMINFO: sequence %zu TotalBones %d, BONENAMES has %zu",
				    i, s->total_bones, a->n_bones);
		if (!seq_range(a, s, &first, &end)) {
			s->keys_ok = false;
			psk_rep_add(&kr,
				    "ANIMINFO: sequence %zu has negative FirstRawFrame %d or "
				    "NumRawFrames %d",
				    i, s->first_raw_frame, s->num_raw_frames);
			continue;
		}
		s->keys_ok = end <= a->n_keys;
		if (!s->keys_ok)
			psk_rep_add(&kr,
				    "ANIMINFO: sequence %zu keys %llu..%llu run past ANIMKEYS (%zu "
				    "keys)",
				    i, (unsigned long long)first, (unsigned long long)end,
				    a->n_keys);
		used += end - first;
	}
	psk_rep_end(&tb);
	psk_rep_end(&kr);
	if (a->n_keys != used)
		diag_add(d, "ANIMKEYS holds %zu keys, sequences use %llu", a->n_keys,
			 (unsigned long long)used);
	if (a->n_scale_keys && a->n_scale_keys != a->n_keys)
		diag_add(d, "SCALEKEYS holds %zu keys, ANIMKEYS %zu", a->n_scale_keys, a->n_keys);
}

enum rc psa_read(const uint8_t *p, size_t size, struct psa_anim *out, struct diag *diag)
{
	struct psk_chunks ch;
	struct src s;
	struct src_mem sm;
	enum rc res;
	size_t used[PSA_NSLOT] = {0};

	memset(out, 0, sizeof *out);
	src_init_mem(&s, &sm, p, size);
	res = psk_scan(&s, &ch, diag);
	if (res == RC_CORRUPT) {
		out->head_type_flag = ch.v[0].type_flag;
		psk_chunks_free(&ch);
		return RC_OK;
	}
	if (res != RC_OK)
		return res;
	if (ch.kind != PSK_KIND_ANIM) {
		psk_chunks_free(&ch);
		return RC_FORMAT;
	}
	out->head_type_flag = ch.v[0].type_flag;
	for (size_t ci = 0; ci < ch.n; ci++) {
		const struct psk_chunk *c = &ch.v[ci];
		const uint8_t *q = p + c->payload_off;
		enum psa_slot slot;
		uint32_t want;
		size_t n;
		char id[84];

		psk_id_text(c, id);
		if (!strcmp(c->id, "ANIMHEAD")) {
			if (ci != 0 && c->data_count != 0)
				diag_add(diag, "chunk %zu (%s): repeated head carries %u records",
					 ci, id, c->data_count);
			continue;
		} else if (!strcmp(c->id, "BONENAMES")) {
			slot = PSA_BONES, want = PSK_REC_BONE;
		} else if (!strcmp(c->id, "ANIMINFO")) {
			slot = PSA_INFO, want = PSA_REC_ANIMINFO;
		} else if (!strcmp(c->id, "ANIMKEYS")) {
			slot = PSA_KEYS, want = PSA_REC_KEY;
		} else if (!strcmp(c->id, "SCALEKEYS")) {
			slot = PSA_SCALE, want = PSA_REC_SCALEKEY;
		} else {
			diag_add(diag,
				 "chunk %zu (%s): unknown chunk, %u records of %u bytes skipped",
				 ci, id, c->data_count, c->data_size);
			continue;
		}
		if (used[slot]) {
			diag_add(diag, "chunk %zu (%s): duplicate of chunk %zu, ignored", ci, id,
				 used[slot] - 1);
			continue;
		}
		if (!psk_chunk_records(c, ci, want, &n, diag))
			continue;
		used[slot] = ci + 1;
		switch (slot) {
		case PSA_BONES:
			if (!(out->bones = xcalloc_n(n ? n : 1, sizeof *out->bones)))
				goto nomem;
			for (size_t i = 0; i < n; i++, q += PSK_REC_BONE)
				psk_get_bone(q, &out->bones[i]);
			out->n_bones = n;
			break;
		case PSA_INFO:
			if (!(out->seqs = xcalloc_n(n ? n : 1, sizeof *out->seqs)))
				goto nomem;
			for (size_t i = 0; i < n; i++, q += PSA_REC_ANIMINFO) {
				struct psa_sequence *sq = &out->seqs[i];

				memcpy(sq->name, q, PSK_NAME_LEN);
				memcpy(sq->group, q + 64, PSK_NAME_LEN);
				sq->total_bones = (int32_t)ld_u32le(q + 128);
				sq->root_include = (int32_t)ld_u32le(q + 132);
				sq->key_compression_style = (int32_t)ld_u32le(q + 136);
				sq->key_quotum = (int32_t)ld_u32le(q + 140);
				sq->key_reduction = f32(q + 144);
				sq->track_time = f32(q + 148);
				sq->anim_rate = f32(q + 152);
				sq->start_bone = (int32_t)ld_u32le(q + 156);
				sq->first_raw_frame = (int32_t)ld_u32le(q + 160);
				sq->num_raw_frames = (int32_t)ld_u32le(q + 164);
			}
			out->n_seqs = n;
			break;
		case PSA_KEYS:
			if (!(out->keys = xcalloc_n(n ? n : 1, sizeof *out->keys)))
				goto nomem;
			for (size_t i = 0; i < n; i++, q += PSA_REC_KEY) {
				struct psa_key *k = &out->keys[i];

				for (int j = 0; j < 3; j++)
					k->pos[j] = f32(q + 4 * j);
				for (int j = 0; j < 4; j++)
					k->rot[j] = f32(q + 12 + 4 * j);
				k->time = f32(q + 28);
			}
			out->n_keys = n;
			break;
		case PSA_SCALE:
			if (!(out->scale_keys = xcalloc_n(n ? n : 1, sizeof *out->scale_keys)))
				goto nomem;
			for (size_t i = 0; i < n; i++, q += PSA_REC_SCALEKEY) {
				for (int j = 0; j < 3; j++)
					out->scale_keys[i].scale[j] = f32(q + 4 * j);
				out->scale_keys[i].time = f32(q + 12);
			}
			out->n_scale_keys = n;
			out->has_scale_chunk = true;
			break;
		default:
			break;
		}
	}
	psk_chunks_free(&ch);
	repair_first_frames(out, diag);
	check_seqs(out, diag);
	psk_check_bones(out->bones, out->n_bones, "BONENAMES", diag);
	return RC_OK;
nomem:
	psk_chunks_free(&ch);
	psa_anim_free(out);
	return RC_NOMEM;
}

void psa_anim_free(struct psa_anim *a)
{
	free(a->bones);
	free(a->seqs);
	free(a->keys);
	free(a->scale_keys);
	memset(a, 0, sizeof *a);
}

static bool key_index(const struct psa_anim *a, size_t seq, size_t frame, size_t bone,
		      uint64_t *idx)
{
	const struct psa_sequence *s;
	uint64_t first, end;

	if (seq >= a->n_seqs || bone >= a->n_bones)
		return false;
	s = &a->seqs[seq];
	if (!seq_range(a, s, &first, &end) || frame >= (uint64_t)s->num_raw_frames)
		return false;
	*idx = first + (uint64_t)frame * a->n_bones + bone;
	return true;
}

const struct psa_key *psa_key_at(const struct psa_anim *a, size_t seq, size_t frame, size_t bone)
{
	uint64_t i;

	if (!key_index(a, seq, frame, bone, &i) || i >= a->n_keys)
		return NULL;
	return &a->keys[i];
}

const struct psa_scale_key *psa_scale_key_at(const struct psa_anim *a, size_t seq, size_t frame,
					     size_t bone)
{
	uint64_t i;

	if (!key_index(a, seq, frame, bone, &i) || i >= a->n_scale_keys)
		return NULL;
	return &a->scale_keys[i];
}
