/* PSA reader: BONENAMES, ANIMINFO, ANIMKEYS, SCALEKEYS in any order, then key ranges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "formats/actorx/psk_int.h"

static float f32(const uint8_t *p)
{
	return f32_from_bits(ld_u32le(p));
}

enum psa_slot { PSA_BONES, PSA_INFO, PSA_KEYS, PSA_SCALE, PSA_NSLOT };

/* Key range [first, end) of sequence s in frame-major key units; false if negative. */
static bool seq_range(size_t n_bones, const struct psa_sequence *s, uint64_t *first, uint64_t *end)
{
	uint64_t f, n;

	if (s->first_raw_frame < 0 || s->num_raw_frames < 0)
		return false;
	/* int32 frames times a bone count bounded by the file: no overflow in 64 bits. */
	f = (uint64_t)s->first_raw_frame * n_bones;
	n = (uint64_t)s->num_raw_frames * n_bones;
	*first = f;
	*end = f + n;
	return true;
}

/*
 * CUE4Parse before PR #104 wrote FirstRawFrame = NumRawFrames (issue #103). psk_psa_py's
 * rule: when sequence 0 shows that pattern, recompute cumulative offsets. A sequence 0 with
 * no frames matches trivially and proves nothing, so it does not trigger the repair.
 */
static void repair_first_frames(struct psa_index *a, struct diag *d)
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

static void check_seqs(struct psa_index *a, struct diag *d)
{
	struct psk_rep tb = {d, "ANIMINFO", 0}, kr = {d, "ANIMINFO", 0};
	uint64_t used = 0;

	for (size_t i = 0; i < a->n_seqs; i++) {
		struct psa_sequence *s = &a->seqs[i];
		uint64_t first, end;

		if (s->total_bones < 0 || (uint64_t)s->total_bones != a->n_bones)
			psk_rep_add(&tb, "ANIMINFO: sequence %zu TotalBones %d, BONENAMES has %zu",
				    i, s->total_bones, a->n_bones);
		if (!seq_range(a->n_bones, s, &first, &end)) {
			s->keys_ok = false;
			psk_rep_add(&kr,
				    "ANIMINFO: sequence %zu has negative FirstRawFrame %d or "
				    "NumRawFrames %d",
				    i, s->first_raw_frame, s->num_raw_frames);
			continue;
		}
		s->keys_ok = end <= a->keys.n;
		if (!s->keys_ok)
			psk_rep_add(&kr,
				    "ANIMINFO: sequence %zu keys %llu..%llu run past ANIMKEYS (%zu "
				    "keys)",
				    i, (unsigned long long)first, (unsigned long long)end,
				    a->keys.n);
		used += end - first;
	}
	psk_rep_end(&tb);
	psk_rep_end(&kr);
	if (a->keys.n != used)
		diag_add(d, "ANIMKEYS holds %zu keys, sequences use %llu", a->keys.n,
			 (unsigned long long)used);
	if (a->scale_keys.n && a->scale_keys.n != a->keys.n)
		diag_add(d, "SCALEKEYS holds %zu keys, ANIMKEYS %zu", a->scale_keys.n, a->keys.n);
}

static void get_seq(const uint8_t *q, struct psa_sequence *sq)
{
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

/* Which slot a chunk fills and its record size; false (with a diag line) for the others. */
static bool psa_slot(const struct psk_chunk *c, size_t ci, const size_t *used, enum psa_slot *slot,
		     uint32_t *want, struct diag *diag)
{
	static const struct {
		const char *id;
		enum psa_slot slot;
		uint32_t want;
	} tab[] = {
	    {"BONENAMES", PSA_BONES, PSK_REC_BONE},
	    {"ANIMINFO", PSA_INFO, PSA_REC_ANIMINFO},
	    {"ANIMKEYS", PSA_KEYS, PSA_REC_KEY},
	    {"SCALEKEYS", PSA_SCALE, PSA_REC_SCALEKEY},
	};
	char id[84];

	psk_id_text(c, id);
	if (!strcmp(c->id, "ANIMHEAD")) {
		if (ci != 0 && c->data_count != 0)
			diag_add(diag, "chunk %zu (%s): repeated head carries %u records", ci, id,
				 c->data_count);
		return false;
	}
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
		if (strcmp(c->id, tab[i].id))
			continue;
		if (used[tab[i].slot]) {
			diag_add(diag, "chunk %zu (%s): duplicate of chunk %zu, ignored", ci, id,
				 used[tab[i].slot] - 1);
			return false;
		}
		*slot = tab[i].slot;
		*want = tab[i].want;
		return true;
	}
	diag_add(diag, "chunk %zu (%s): unknown chunk, %u records of %u bytes skipped", ci, id,
		 c->data_count, c->data_size);
	return false;
}

/* Bones and sequences are small and kept decoded; keys stay in the file. */
static enum rc index_psa_chunk(const struct src *s, struct psa_index *ix, const struct psk_chunk *c,
			       enum psa_slot slot, size_t n)
{
	uint32_t rec = slot == PSA_BONES ? PSK_REC_BONE : PSA_REC_ANIMINFO;
	uint8_t *raw;
	enum rc r;

	if (slot == PSA_KEYS || slot == PSA_SCALE) {
		struct psk_span *sp = slot == PSA_KEYS ? &ix->keys : &ix->scale_keys;

		*sp = (struct psk_span){c->payload_off, n};
		ix->has_scale_chunk |= slot == PSA_SCALE;
		return RC_OK;
	}
	r = src_dup(s, c->payload_off, n * rec, &raw);
	if (r != RC_OK)
		return r;
	if (slot == PSA_BONES) {
		ix->bones = xcalloc_n(n ? n : 1, sizeof *ix->bones);
		for (size_t i = 0; ix->bones && i < n; i++)
			psk_get_bone(raw + i * rec, &ix->bones[i]);
		ix->n_bones = ix->bones ? n : 0;
		r = ix->bones ? RC_OK : RC_NOMEM;
	} else {
		ix->seqs = xcalloc_n(n ? n : 1, sizeof *ix->seqs);
		for (size_t i = 0; ix->seqs && i < n; i++)
			get_seq(raw + i * rec, &ix->seqs[i]);
		ix->n_seqs = ix->seqs ? n : 0;
		r = ix->seqs ? RC_OK : RC_NOMEM;
	}
	free(raw);
	return r;
}

enum rc psa_index_open(const struct src *s, struct psa_index *ix, struct diag *diag)
{
	size_t used[PSA_NSLOT] = {0};
	enum rc res;

	memset(ix, 0, sizeof *ix);
	res = psk_scan(s, &ix->chunks, diag);
	if (res == RC_CORRUPT && ix->chunks.n == 1) {
		/* A head whose payload covers the file: nothing past it can be reached. (A source
		 * whose read failed with RC_CORRUPT, e.g. an archive entry, leaves no chunks.) */
		ix->head_type_flag = ix->chunks.v[0].type_flag;
		return RC_CORRUPT;
	}
	if (res != RC_OK)
		return res;
	if (ix->chunks.kind != PSK_KIND_ANIM) {
		psa_index_free(ix);
		return RC_FORMAT;
	}
	ix->head_type_flag = ix->chunks.v[0].type_flag;
	for (size_t ci = 0; ci < ix->chunks.n && res == RC_OK; ci++) {
		const struct psk_chunk *c = &ix->chunks.v[ci];
		enum psa_slot slot;
		uint32_t want;
		size_t n;

		if (!psa_slot(c, ci, used, &slot, &want, diag) ||
		    !psk_chunk_records(c, ci, want, &n, diag))
			continue;
		used[slot] = ci + 1;
		res = index_psa_chunk(s, ix, c, slot, n);
	}
	if (res != RC_OK) {
		psa_index_free(ix);
		return res == RC_NOMEM ? res : RC_IO;
	}
	repair_first_frames(ix, diag);
	check_seqs(ix, diag);
	psk_check_bones(ix->bones, ix->n_bones, "BONENAMES", diag);
	return RC_OK;
}

void psa_index_free(struct psa_index *ix)
{
	psk_chunks_free(&ix->chunks);
	free(ix->bones);
	free(ix->seqs);
	memset(ix, 0, sizeof *ix);
}

bool psa_seq_keys(const struct psa_index *ix, size_t seq, uint64_t *first, uint64_t *n)
{
	uint64_t end;

	if (seq >= ix->n_seqs || !seq_range(ix->n_bones, &ix->seqs[seq], first, &end))
		return false;
	*n = end - *first;
	return true;
}

enum rc psa_get_keys(const struct src *s, const struct psk_span *sp, uint64_t first, size_t n,
		     struct psa_key *out)
{
	uint8_t *raw;
	enum rc r;

	if (first > sp->n || n > sp->n - first)
		return RC_BOUNDS;
	r = src_dup(s, sp->off + first * PSA_REC_KEY, n * PSA_REC_KEY, &raw);
	if (r != RC_OK)
		return r;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *q = raw + i * PSA_REC_KEY;

		for (int j = 0; j < 3; j++)
			out[i].pos[j] = f32(q + 4 * j);
		for (int j = 0; j < 4; j++)
			out[i].rot[j] = f32(q + 12 + 4 * j);
		out[i].time = f32(q + 28);
	}
	free(raw);
	return RC_OK;
}

enum rc psa_get_scale_keys(const struct src *s, const struct psk_span *sp, uint64_t first, size_t n,
			   struct psa_scale_key *out)
{
	uint8_t *raw;
	enum rc r;

	if (first > sp->n || n > sp->n - first)
		return RC_BOUNDS;
	r = src_dup(s, sp->off + first * PSA_REC_SCALEKEY, n * PSA_REC_SCALEKEY, &raw);
	if (r != RC_OK)
		return r;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *q = raw + i * PSA_REC_SCALEKEY;

		for (int j = 0; j < 3; j++)
			out[i].scale[j] = f32(q + 4 * j);
		out[i].time = f32(q + 12);
	}
	free(raw);
	return RC_OK;
}

enum rc psa_read(const uint8_t *p, size_t size, struct psa_anim *out, struct diag *diag)
{
	struct psa_index ix;
	struct src s;
	struct src_mem sm;
	enum rc r;

	memset(out, 0, sizeof *out);
	src_init_mem(&s, &sm, p, size);
	r = psa_index_open(&s, &ix, diag);
	if (r == RC_CORRUPT) { /* a PSA with nothing reachable: an empty animation */
		out->head_type_flag = ix.head_type_flag;
		psa_index_free(&ix);
		return RC_OK;
	}
	if (r != RC_OK)
		return r;
	out->keys = xcalloc_n(ix.keys.n ? ix.keys.n : 1, sizeof *out->keys);
	out->scale_keys = xcalloc_n(ix.scale_keys.n ? ix.scale_keys.n : 1, sizeof *out->scale_keys);
	r = out->keys && out->scale_keys ? RC_OK : RC_NOMEM;
	if (r == RC_OK)
		r = psa_get_keys(&s, &ix.keys, 0, ix.keys.n, out->keys);
	if (r == RC_OK)
		r = psa_get_scale_keys(&s, &ix.scale_keys, 0, ix.scale_keys.n, out->scale_keys);
	out->n_keys = ix.keys.n;
	out->n_scale_keys = ix.scale_keys.n;
	out->head_type_flag = ix.head_type_flag;
	out->bones = ix.bones;
	out->n_bones = ix.n_bones;
	out->seqs = ix.seqs;
	out->n_seqs = ix.n_seqs;
	out->has_scale_chunk = ix.has_scale_chunk;
	out->repaired_first_frames = ix.repaired_first_frames;
	ix.bones = NULL;
	ix.seqs = NULL;
	psa_index_free(&ix);
	if (r != RC_OK)
		psa_anim_free(out);
	return r;
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
	if (!seq_range(a->n_bones, s, &first, &end) || frame >= (uint64_t)s->num_raw_frames)
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
