/* PSA: round trips, key addressing, FirstRawFrame repair, per-sequence export, hostile input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "psgfs/gen/gen_psk.h"
#include "psgfs/gen/prng.h"
#include "psk_testutil.h"

static uint8_t *write_anim(const struct psa_anim *a, size_t *n)
{
	struct buf b;
	uint8_t *p;

	buf_init(&b);
	assert_int_equal(psa_write(a, &b), RC_OK);
	p = buf_steal(&b, n);
	assert_non_null(p);
	return p;
}

static void read_anim_clean(const uint8_t *p, size_t n, struct psa_anim *out)
{
	struct diag d;

	diag_init(&d);
	assert_int_equal(psa_read(p, n, out, &d), RC_OK);
	diag_dump(&d);
	assert_int_equal(diag_count(&d), 0);
	diag_free(&d);
}

static void test_roundtrip(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 24; seed++) {
		struct gen_psa_opts o;
		struct psa_anim a, got;
		size_t n;
		uint8_t *p;

		gen_psa_opts_default(&o, seed);
		o.bones = 1 + seed % 9;
		o.sequences = 1 + seed % 5;
		o.max_frames = 1 + seed % 13;
		o.scale_keys = seed & 1;
		o.hostile_names = seed % 3 == 0;
		o.head_type_flag = seed % 4 == 0 ? 1999801 : 0;
		assert_int_equal(gen_psa_anim(&o, &a), RC_OK);
		p = write_anim(&a, &n);
		read_anim_clean(p, n, &got);
		assert_anim_same(&a, &got);
		/* Frame-major addressing. */
		for (size_t s = 0; s < got.n_seqs; s++) {
			size_t first = (size_t)a.seqs[s].first_raw_frame;

			assert_true(got.seqs[s].keys_ok);
			for (size_t f = 0; f < (size_t)got.seqs[s].num_raw_frames; f++)
				for (size_t b = 0; b < got.n_bones; b++) {
					size_t k = (first + f) * got.n_bones + b;

					assert_ptr_equal(psa_key_at(&got, s, f, b), &got.keys[k]);
					if (o.scale_keys)
						assert_ptr_equal(psa_scale_key_at(&got, s, f, b),
								 &got.scale_keys[k]);
					else
						assert_null(psa_scale_key_at(&got, s, f, b));
				}
			assert_null(psa_key_at(&got, s, (size_t)got.seqs[s].num_raw_frames, 0));
			assert_null(psa_key_at(&got, s, 0, got.n_bones));
		}
		assert_null(psa_key_at(&got, got.n_seqs, 0, 0));
		psa_anim_free(&got);
		psa_anim_free(&a);
		free(p);
	}
}

/* SCALEKEYS: present for new heads (maybe empty), absent for old heads without scales. */
static void test_scalekeys_rule(void **state)
{
	struct gen_psa_opts o;
	struct psa_anim a;
	struct psk_chunks ch;
	size_t n;
	uint8_t *p;

	(void)state;
	gen_psa_opts_default(&o, 5);
	assert_int_equal(gen_psa_anim(&o, &a), RC_OK);
	p = write_anim(&a, &n);
	scan_buf(p, n, &ch);
	assert_int_equal(ch.n, 5);
	assert_string_equal(ch.v[0].id, "ANIMHEAD");
	assert_int_equal(ch.v[0].type_flag, 20100422);
	assert_string_equal(ch.v[1].id, "BONENAMES");
	assert_string_equal(ch.v[2].id, "ANIMINFO");
	assert_string_equal(ch.v[3].id, "ANIMKEYS");
	assert_string_equal(ch.v[4].id, "SCALEKEYS");
	assert_int_equal(ch.v[4].data_size, 16);
	assert_int_equal(ch.v[4].data_count, 0);
	for (size_t i = 1; i < ch.n; i++)
		assert_int_equal(ch.v[i].type_flag, 0);
	psk_chunks_free(&ch);
	free(p);

	a.head_type_flag = 1999801;
	a.has_scale_chunk = false;
	p = write_anim(&a, &n);
	scan_buf(p, n, &ch);
	assert_int_equal(ch.n, 4);
	psk_chunks_free(&ch);
	free(p);

	a.has_scale_chunk = true; /* an empty chunk that existed is kept */
	p = write_anim(&a, &n);
	scan_buf(p, n, &ch);
	assert_int_equal(ch.n, 5);
	psk_chunks_free(&ch);
	free(p);
	psa_anim_free(&a);
}

/* CUE4Parse issue #103: FirstRawFrame = NumRawFrames. */
static void test_first_frame_repair(void **state)
{
	struct gen_psa_opts o;
	struct psa_anim a, got;
	struct diag d;
	size_t n;
	uint8_t *p;

	(void)state;
	gen_psa_opts_default(&o, 77);
	o.sequences = 4;
	o.bones = 5;
	o.max_frames = 9;
	assert_int_equal(gen_psa_anim(&o, &a), RC_OK);
	{
		struct psa_anim bad = a;
		struct psa_sequence seqs[4];

		memcpy(seqs, a.seqs, sizeof seqs);
		for (int i = 0; i < 4; i++)
			seqs[i].first_raw_frame = seqs[i].num_raw_frames;
		bad.seqs = seqs;
		p = write_anim(&bad, &n);
	}
	diag_init(&d);
	assert_int_equal(psa_read(p, n, &got, &d), RC_OK);
	assert_true(got.repaired_first_frames);
	assert_true(diag_has(&d, "CUE4Parse issue #103"));
	assert_int_equal(diag_count(&d), 1);
	got.repaired_first_frames = false;
	assert_anim_same(&a, &got);
	for (size_t s = 0; s < 4; s++)
		for (size_t f = 0; f < (size_t)a.seqs[s].num_raw_frames; f++)
			for (size_t b = 0; b < 5; b++)
				assert_key_same(psa_key_at(&a, s, f, b), psa_key_at(&got, s, f, b));
	psa_anim_free(&got);
	diag_free(&d);
	free(p);

	/* Correct files are left alone, and a zero-frame sequence 0 proves nothing. */
	a.seqs[0].num_raw_frames = 0;
	a.seqs[1].first_raw_frame = 0;
	p = write_anim(&a, &n);
	diag_init(&d);
	assert_int_equal(psa_read(p, n, &got, &d), RC_OK);
	assert_false(got.repaired_first_frames);
	assert_int_equal(got.seqs[1].first_raw_frame, 0);
	psa_anim_free(&got);
	diag_free(&d);
	free(p);
	psa_anim_free(&a);
}

static void test_key_problems(void **state)
{
	struct gen_psa_opts o;
	struct psa_anim a, got;
	struct diag d;
	size_t n, off;
	uint8_t *p;

	(void)state;
	gen_psa_opts_default(&o, 88);
	o.sequences = 3;
	o.bones = 4;
	o.scale_keys = true;
	assert_int_equal(gen_psa_anim(&o, &a), RC_OK);
	a.seqs[1].total_bones = 7;
	p = write_anim(&a, &n);
	/* Drop the last frame's keys (and everything after ANIMKEYS): only the last sequence
	 * runs past ANIMKEYS. */
	off = chunk_off(p, n, "ANIMKEYS");
	put_u32(p + off + 28, (uint32_t)(a.n_keys - 4));
	diag_init(&d);
	assert_int_equal(psa_read(p, off + 32 + 32 * (a.n_keys - 4), &got, &d), RC_OK);
	diag_dump(&d);
	assert_true(got.seqs[0].keys_ok);
	assert_true(got.seqs[1].keys_ok);
	assert_false(got.seqs[2].keys_ok);
	assert_true(diag_has(&d, "sequence 2 keys"));
	assert_true(diag_has(&d, "sequence 1 TotalBones 7, BONENAMES has 4"));
	assert_false(got.has_scale_chunk);
	if (got.seqs[2].num_raw_frames >= 2)
		assert_non_null(psa_key_at(&got, 2, 0, 0));
	assert_null(psa_key_at(&got, 2, (size_t)got.seqs[2].num_raw_frames - 1, 0));
	/* A sequence with missing keys cannot be exported on its own. */
	{
		struct buf b;

		buf_init(&b);
		assert_int_equal(psa_write_sequence(&got, 2, &b), RC_CORRUPT);
		assert_int_equal(psa_write_sequence(&got, 3, &b), RC_INVAL);
		buf_free(&b);
	}
	psa_anim_free(&got);
	diag_free(&d);

	/* Negative frame fields. */
	a.seqs[1].total_bones = 4;
	a.seqs[0].first_raw_frame = -5;
	free(p);
	p = write_anim(&a, &n);
	diag_init(&d);
	assert_int_equal(psa_read(p, n, &got, &d), RC_OK);
	assert_false(got.seqs[0].keys_ok);
	assert_null(psa_key_at(&got, 0, 0, 0));
	assert_true(diag_has(&d, "negative FirstRawFrame -5"));
	psa_anim_free(&got);
	diag_free(&d);
	free(p);
	psa_anim_free(&a);
}

static void check_one_sequence(const struct psa_anim *a, size_t s, bool want_scales)
{
	struct buf b;
	struct psa_anim got;
	struct psk_chunks ch;
	size_t n;
	uint8_t *p;
	size_t nb = a->n_bones, nf = (size_t)a->seqs[s].num_raw_frames;

	buf_init(&b);
	assert_int_equal(psa_write_sequence(a, s, &b), RC_OK);
	p = buf_steal(&b, &n);
	scan_buf(p, n, &ch);
	assert_int_equal(ch.n, 5);
	assert_string_equal(ch.v[4].id, "SCALEKEYS");
	assert_int_equal(ch.v[4].data_size, 16);
	assert_int_equal(ch.v[4].data_count, want_scales ? nf * nb : 0);
	psk_chunks_free(&ch);
	read_anim_clean(p, n, &got);
	assert_int_equal(got.n_seqs, 1);
	assert_int_equal(got.seqs[0].first_raw_frame, 0);
	assert_int_equal(got.seqs[0].key_quotum, (int32_t)(nf * nb));
	assert_int_equal(got.n_keys, nf * nb);
	{
		struct psa_sequence want = a->seqs[s];

		want.first_raw_frame = 0;
		want.key_quotum = (int32_t)(nf * nb);
		want.keys_ok = true;
		assert_seq_same(&want, &got.seqs[0]);
	}
	assert_int_equal(got.n_bones, nb);
	for (size_t i = 0; i < nb; i++)
		assert_bone_same(&a->bones[i], &got.bones[i]);
	for (size_t f = 0; f < nf; f++)
		for (size_t bn = 0; bn < nb; bn++) {
			assert_key_same(psa_key_at(a, s, f, bn), psa_key_at(&got, 0, f, bn));
			if (want_scales) {
				const struct psa_scale_key *x = psa_scale_key_at(a, s, f, bn);
				const struct psa_scale_key *y = psa_scale_key_at(&got, 0, f, bn);

				assert_non_null(y);
				assert_vec_same(x->scale, y->scale, 3);
				assert_f32_same(x->time, y->time);
			}
		}
	psa_anim_free(&got);
	free(p);
}

static void test_write_sequence(void **state)
{
	struct gen_psa_opts o;
	struct psa_anim a;

	(void)state;
	for (int scales = 0; scales < 2; scales++) {
		gen_psa_opts_default(&o, 99 + (uint64_t)scales);
		o.sequences = 5;
		o.bones = 6;
		o.max_frames = 7;
		o.scale_keys = scales;
		o.hostile_names = true;
		assert_int_equal(gen_psa_anim(&o, &a), RC_OK);
		for (size_t s = 0; s < a.n_seqs; s++)
			check_one_sequence(&a, s, scales);
		psa_anim_free(&a);
	}
}

static void test_truncation_and_garbage(void **state)
{
	struct gen_psa_opts o;
	struct psk_chunks ch;
	struct prng r;
	size_t n;
	uint8_t *p;

	(void)state;
	gen_psa_opts_default(&o, 123);
	o.sequences = 3;
	o.bones = 5;
	o.scale_keys = true;
	{
		struct buf b;

		buf_init(&b);
		assert_int_equal(gen_psa_file(&o, &b), RC_OK);
		p = buf_steal(&b, &n);
	}
	scan_buf(p, n, &ch);
	prng_seed(&r, 9);
	for (size_t t = 0; t < 600; t++) {
		size_t cut = t < ch.n * 2 ? (size_t)ch.v[t / 2].offset + (t & 1) * 45
					  : prng_below(&r, (uint32_t)n + 1);
		bool boundary = cut == n;
		struct psa_anim got;
		struct diag d;
		uint8_t *q;
		enum rc res;

		if (cut > n)
			cut = n;
		for (size_t i = 0; i < ch.n; i++)
			boundary |= ch.v[i].offset == cut;
		q = malloc(cut ? cut : 1);
		memcpy(q, p, cut);
		/* Also flip a few bytes: random counts and sizes must stay harmless. */
		if (t >= 300 && cut > 40)
			for (int k = 0; k < 4; k++)
				q[prng_below(&r, (uint32_t)cut)] = (uint8_t)prng_next(&r);
		diag_init(&d);
		res = psa_read(q, cut, &got, &d);
		if (t < 300) {
			if (cut < PSK_CHUNK_HEADER)
				assert_int_equal(res, RC_FORMAT);
			else
				assert_int_equal(res, RC_OK);
			if (cut >= PSK_CHUNK_HEADER && !boundary)
				assert_true(diag_count(&d) > 0);
		}
		if (res == RC_OK) {
			/* Every sequence that claims its keys really has them. */
			for (size_t s = 0; s < got.n_seqs; s++)
				if (got.seqs[s].keys_ok && got.seqs[s].num_raw_frames > 0 &&
				    got.n_bones > 0)
					assert_non_null(psa_key_at(
					    &got, s, (size_t)got.seqs[s].num_raw_frames - 1,
					    got.n_bones - 1));
			psa_anim_free(&got);
		}
		diag_free(&d);
		free(q);
	}
	psk_chunks_free(&ch);
	free(p);
}

static void test_bones_and_unknown(void **state)
{
	struct gen_psa_opts o;
	struct psa_anim a, got;
	struct diag d;
	size_t n;
	uint8_t *p;

	(void)state;
	gen_psa_opts_default(&o, 7);
	o.bones = 6;
	assert_int_equal(gen_psa_anim(&o, &a), RC_OK);
	assert_int_equal(a.bones[0].parent, -1); /* CUE4Parse/UEViewer PSA style root */
	a.bones[2].parent = 4;
	a.bones[4].parent = 2;
	p = write_anim(&a, &n);
	rename_chunk(p, n, "SCALEKEYS", "SCALEKEYZ");
	diag_init(&d);
	assert_int_equal(psa_read(p, n, &got, &d), RC_OK);
	assert_true(diag_has(&d, "BONENAMES: bone 2 parent 4 does not come before it"));
	assert_true(diag_has(&d, "parent cycle"));
	assert_true(diag_has(&d, "(SCALEKEYZ): unknown chunk"));
	assert_false(got.has_scale_chunk);
	assert_int_equal(got.bones[2].parent, 4);
	psa_anim_free(&got);
	diag_free(&d);
	free(p);
	psa_anim_free(&a);
}

/* Bone parents for PSA files that store 0 for every bone (src/formats/actorx/psk_hierarchy.c). */
static void set_bones(struct psk_bone *b, const char *const *names, const int32_t *parents,
		      size_t n)
{
	memset(b, 0, n * sizeof *b);
	for (size_t i = 0; i < n; i++) {
		memcpy(b[i].name, names[i], strlen(names[i]));
		b[i].parent = parents[i];
	}
}

static void test_bone_parents(void **state)
{
	static const char *const names[] = {"Root", "Hips", "Spine", "Head", "Prop"};
	static const int32_t flat[] = {0, 0, 0, 0, 0};
	/* the PSK: other case, padded with spaces, an extra bone between Spine and Head, no Prop */
	static const char *const pnames[] = {"root", "HIPS  ", "spine", "neck", "head"};
	static const int32_t pparents[] = {0, 0, 1, 2, 3};
	struct psk_bone b[5], ref[5];
	struct diag d;

	(void)state;
	diag_init(&d);
	set_bones(b, names, flat, 5);
	assert_true(psk_bones_flat(b, 5));
	assert_false(psk_bones_flat(b, 1));
	/* a PSK whose names match: nearest ancestor present, unmatched bones stay at 0 */
	set_bones(ref, pnames, pparents, 5);
	assert_int_equal(psk_bones_match(b, 5, ref, 5, false), 3);
	assert_true(psk_bones_flat(b, 5)); /* counting changes nothing */
	assert_int_equal(psk_bones_match(b, 5, ref, 5, true), 3);
	assert_int_equal(b[1].parent, 0);
	assert_int_equal(b[2].parent, 1);
	assert_int_equal(b[3].parent, 2); /* Neck is missing here: Spine */
	assert_int_equal(b[4].parent, 0);
	assert_false(psk_bones_flat(b, 5));
	/* a parent cycle in the reference cannot spin */
	ref[2].parent = 3;
	ref[3].parent = 2;
	set_bones(b, names, flat, 5);
	psk_bones_match(b, 5, ref, 5, true);
	assert_true(b[2].parent >= 0 && b[2].parent < 5);
	/* a hierarchy file: header line, names ignoring case, root words, unknown names listed */
	set_bones(b, names, flat, 5);
	assert_int_equal(psk_bones_apply_tsv(b, 5,
					     "bone\tparent\nspine\tHIPS\nHead\tSpine\r\n"
					     "Prop\tnone\nHips\tRoot\nTail\tHips\n",
					     &d),
			 4);
	assert_int_equal(b[2].parent, 1);
	assert_int_equal(b[3].parent, 2);
	assert_int_equal(b[4].parent, 0);
	assert_int_equal(d.n, 1); /* Tail */
	diag_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_scalekeys_rule),
	    cmocka_unit_test(test_first_frame_repair),
	    cmocka_unit_test(test_key_problems),
	    cmocka_unit_test(test_write_sequence),
	    cmocka_unit_test(test_truncation_and_garbage),
	    cmocka_unit_test(test_bones_and_unknown),
	    cmocka_unit_test(test_bone_parents),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
