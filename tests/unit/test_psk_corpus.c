/*
 * Real third-party PSK/PSA files ($PSGFS_SHARED/corpus/psk; docs/psk-psa.md, "Test corpus"): exact
 * counts, then psk_write/psa_write and read back equal. Skips when the corpus is absent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "psgfs/base/names.h"
#include "psk_testutil.h"

static uint8_t *load(const char *rel, size_t *n)
{
	const char *root = getenv("PSGFS_SHARED");
	char path[4096];
	FILE *f;
	long len;
	uint8_t *p;

	snprintf(path, sizeof path, "%s/corpus/psk/%s", root && *root ? root : "../shared", rel);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	p = malloc((size_t)len ? (size_t)len : 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return p;
}

/* cmocka's skip() leaves the test, so callers need no cleanup path. */
#define LOAD_OR_SKIP(var, rel, n)                                                                  \
	do {                                                                                       \
		var = load(rel, n);                                                                \
		if (!var) {                                                                        \
			printf("# corpus file %s absent (set PSGFS_SHARED): skipped\n", rel);      \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

struct mesh_want {
	const char *path;
	size_t file_size;
	int32_t head_flag;
	size_t points, wedges, faces, materials, bones, weights;
	size_t normals, colors, uv0, morphs, deltas;
	const char *mat0, *bone0;
	int32_t root_parent;
};

static const struct mesh_want meshes[] = {
    {"pyffi/examplemesh.psk", 5424, 1999801, 58, 129, 108, 1, 3, 58, 0, 0, 0, 0, 0, "1- Default",
     "Bone01", 0},
    {"psk_psa_py/psk/Suzanne.psk", 27012, 1999801, 507, 555, 968, 1, 1, 0, 0, 0, 0, 0, 0, "None",
     "ROOT", 0},
    {"psk_psa_py/psk/MAXIM_TURRET_EXT.psk", 129452, 1999801, 2517, 2606, 2103, 1, 15, 2517, 0, 0, 0,
     0, 0, "MAXIM_TURRET_EXT", "TURRET", 0},
    {"psk_psa_py/psk/Shrek.psk", 95020, 20100422, 1100, 1428, 2066, 2, 64, 2175, 0, 0, 0, 0, 0,
     "Shrek", "body_root_joint", 0},
    {"psk_psa_py/psk/Slurp_Monster_Axe_LOD0.psk", 109548, 20220723, 490, 738, 976, 1, 4, 490, 490,
     738, 738, 5, 2080, "M__Slurp_Monster_Pickaxe_inst", "b_AR_Root", -1},
};

static void check_mesh(const struct mesh_want *w)
{
	struct psk_mesh m, back;
	struct diag d;
	struct buf b;
	size_t n, n2;
	uint8_t *p, *q;

	LOAD_OR_SKIP(p, w->path, &n);

	assert_int_equal(n, w->file_size);
	diag_init(&d);
	assert_int_equal(psk_read(p, n, &m, &d), RC_OK);
	diag_dump(&d);
	assert_int_equal(diag_count(&d), 0);
	diag_free(&d);
	assert_int_equal(m.head_type_flag, w->head_flag);
	assert_int_equal(m.n_points, w->points);
	assert_int_equal(m.n_wedges, w->wedges);
	assert_int_equal(m.n_faces, w->faces);
	assert_false(m.faces32);
	assert_int_equal(m.n_materials, w->materials);
	assert_int_equal(m.n_bones, w->bones);
	assert_int_equal(m.n_weights, w->weights);
	assert_int_equal(m.n_normals, w->normals);
	assert_int_equal(m.n_colors, w->colors);
	assert_int_equal(m.n_extra_uvs[0], w->uv0);
	assert_int_equal(m.n_extra_uv_sets, w->uv0 ? 1 : 0);
	assert_int_equal(m.n_morphs, w->morphs);
	assert_int_equal(m.n_deltas, w->deltas);
	assert_int_equal(m.n_sockets, 0);
	assert_int_equal(name_len(m.materials[0].name, PSK_NAME_LEN), strlen(w->mat0));
	assert_memory_equal(m.materials[0].name, w->mat0, strlen(w->mat0));
	assert_memory_equal(m.bones[0].name, w->bone0, strlen(w->bone0));
	assert_int_equal(m.bones[0].parent, w->root_parent);
	if (m.n_morphs) {
		const struct psk_morph *last = &m.morphs[m.n_morphs - 1];

		assert_int_equal(last->first_delta + last->n_deltas, m.n_deltas);
	}

	buf_init(&b);
	assert_int_equal(psk_write(&m, &b), RC_OK);
	q = buf_steal(&b, &n2);
	diag_init(&d);
	assert_int_equal(psk_read(q, n2, &back, &d), RC_OK);
	diag_dump(&d);
	assert_int_equal(diag_count(&d), 0);
	assert_mesh_same(&m, &back);
	diag_free(&d);
	psk_mesh_free(&back);
	free(q);
	psk_mesh_free(&m);
	free(p);
}

static void test_examplemesh(void **state)
{
	struct psk_chunks ch;
	size_t n, junk = 0;
	uint8_t *p;

	(void)state;
	check_mesh(&meshes[0]);
	/* The fixture really has junk after the NUL in its chunk IDs (docs/psk-psa.md, "Junk
	 * bytes"). */
	LOAD_OR_SKIP(p, meshes[0].path, &n);
	scan_buf(p, n, &ch);
	for (size_t i = 0; i < ch.n; i++)
		for (size_t k = strlen(ch.v[i].id) + 1; k < 20; k++)
			junk += ch.v[i].raw_id[k] != 0;
	assert_true(junk > 0);
	psk_chunks_free(&ch);
	free(p);
}

static void test_suzanne(void **state)
{
	(void)state;
	check_mesh(&meshes[1]);
}

static void test_maxim_turret(void **state)
{
	(void)state;
	check_mesh(&meshes[2]);
}

static void test_shrek(void **state)
{
	(void)state;
	check_mesh(&meshes[3]);
}

static void test_slurp(void **state)
{
	(void)state;
	check_mesh(&meshes[4]);
}

/* Read, check, write whole and per sequence, read back. */
static void check_anim(const char *rel, size_t file_size, size_t bones, size_t frames, float rate,
		       const char *seq_name, size_t keys, size_t scale_keys, bool repaired)
{
	struct psa_anim a, back, want;
	struct diag d;
	struct buf b;
	size_t n, n2;
	uint8_t *p, *q;

	LOAD_OR_SKIP(p, rel, &n);

	assert_int_equal(n, file_size);
	diag_init(&d);
	assert_int_equal(psa_read(p, n, &a, &d), RC_OK);
	diag_dump(&d);
	assert_int_equal(diag_count(&d), repaired ? 1 : 0);
	diag_free(&d);
	assert_int_equal(a.repaired_first_frames, repaired);
	assert_int_equal(a.n_bones, bones);
	assert_int_equal(a.n_seqs, 1);
	assert_int_equal(a.seqs[0].num_raw_frames, frames);
	assert_int_equal(a.seqs[0].first_raw_frame, 0);
	assert_true(a.seqs[0].keys_ok);
	assert_true(a.seqs[0].anim_rate == rate);
	assert_int_equal(name_len(a.seqs[0].name, PSK_NAME_LEN), strlen(seq_name));
	assert_memory_equal(a.seqs[0].name, seq_name, strlen(seq_name));
	assert_int_equal(a.n_keys, keys);
	assert_int_equal(a.n_scale_keys, scale_keys);
	assert_int_equal(a.has_scale_chunk, scale_keys > 0);
	assert_non_null(psa_key_at(&a, 0, frames - 1, bones - 1));

	buf_init(&b);
	assert_int_equal(psa_write(&a, &b), RC_OK);
	q = buf_steal(&b, &n2);
	diag_init(&d);
	assert_int_equal(psa_read(q, n2, &back, &d), RC_OK);
	assert_int_equal(diag_count(&d), 0);
	diag_free(&d);
	want = a;
	if (!want.head_type_flag) /* pendulum: the writer supplies its head flag and SCALEKEYS */
		want.head_type_flag = 20100422, want.has_scale_chunk = true;
	want.repaired_first_frames = false; /* the rewrite carries the repaired offsets */
	assert_anim_same(&want, &back);
	psa_anim_free(&back);
	free(q);

	buf_init(&b);
	assert_int_equal(psa_write_sequence(&a, 0, &b), RC_OK);
	q = buf_steal(&b, &n2);
	assert_int_equal(psa_read(q, n2, &back, NULL), RC_OK);
	assert_int_equal(back.n_keys, keys);
	assert_int_equal(back.n_scale_keys, scale_keys);
	for (size_t i = 0; i < keys; i++)
		assert_key_same(&a.keys[i], &back.keys[i]);
	psa_anim_free(&back);
	free(q);
	psa_anim_free(&a);
	free(p);
}

static void test_pendulum(void **state)
{
	(void)state;
	check_anim("pyffi/pendulum.psa", 2576, 3, 20, 30.0f, "Swinging", 60, 0, false);
}

static void test_grunt(void **state)
{
	(void)state;
	/* CUE4Parse wrote FirstRawFrame = NumRawFrames (= 101) here: repaired to 0. */
	check_anim("psk_psa_py/psa/grunt_hh_grabplayer_crouch_SEQ0.psa", 442480, 89, 101,
		   30.30000114440918f, "grunt_hh_grabplayer_crouch", 8989, 8989, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_examplemesh),	 cmocka_unit_test(test_suzanne),
	    cmocka_unit_test(test_maxim_turret), cmocka_unit_test(test_shrek),
	    cmocka_unit_test(test_slurp),	 cmocka_unit_test(test_pendulum),
	    cmocka_unit_test(test_grunt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
