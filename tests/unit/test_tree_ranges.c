/*
 * Any byte range of any file equals the same bytes of a whole read: every file of every
 * generated input (PSK, PSKX, PSA, static and skinned PS3 and Xbox 360 models, PS3 and Xbox
 * 360 texture arenas, a sized model arena) and of the real corpus PSK/PSA files, mounted with
 * the smallest cache (1 MiB) so that pieces are evicted between reads. Each file is read whole,
 * then piece by piece from its end back to its start, then at random ranges of 1 byte to
 * 1 MiB; a second whole read must equal the first.
 *
 * The two builds split the range checks (tests/README.md, "Keeping the suite fast"): every
 * file is read whole in both, and its ranges are checked under AddressSanitizer for every
 * fourth file in walk order, in the plain build for the other three in four.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sanitizer.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/gen/gen_x360_textures.h"
#include "psgfs/tree/tree.h"

#define CACHE	 (1u << 20)
#define N_RANDOM 24

struct tally {
	size_t files, reads, ranged;
	uint64_t bytes;
	uint8_t *buf; /* the ranges' buffer (1 MiB + 1): one per tree, not one per file */
};

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static size_t file_no; /* files met so far, in walk order, over the whole run */

/* Whether this build checks the ranges of the next file (the other build checks the rest). */
static bool my_share(void)
{
	return (file_no++ % 4 == 3) == (PSGFS_ASAN != 0);
}

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint8_t *read_whole(struct tree *t, tree_ino ino, uint64_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	size_t got = 0;

	assert_non_null(p);
	assert_int_equal(tree_read(t, ino, 0, size, p, &got), RC_OK);
	assert_int_equal(got, size);
	return p;
}

/* [off, off+len) read alone equals the same bytes of the whole (short only past the end). */
static void check_range(struct tree *t, tree_ino ino, const uint8_t *whole, uint64_t size,
			uint64_t off, size_t len, uint8_t *buf, struct tally *ty)
{
	size_t got = 0, want = off >= size ? 0 : (size_t)(size - off < len ? size - off : len);

	assert_int_equal(tree_read(t, ino, off, len, buf, &got), RC_OK);
	assert_int_equal(got, want);
	if (memcmp(buf, whole + off, got) != 0)
		fail_msg("inode %llu: bytes %llu..%llu differ from the whole read",
			 (unsigned long long)ino, (unsigned long long)off,
			 (unsigned long long)(off + got));
	ty->reads++;
	ty->bytes += got;
}

static void check_file(struct tree *t, tree_ino ino, struct tally *ty)
{
	struct tree_stat st;
	uint8_t *whole, *again, *buf = ty->buf;
	uint64_t step;

	assert_int_equal(tree_getattr(t, ino, &st), RC_OK);
	whole = read_whole(t, ino, st.size);
	ty->files++;
	if (!my_share()) {
		free(whole);
		return;
	}
	/* Backwards, a piece and a bit at a time, so each read straddles a piece boundary. */
	step = TREE_PIECE + 4097;
	for (uint64_t end = st.size; end > 0;) {
		uint64_t off = end > step ? end - step : 0;

		check_range(t, ino, whole, st.size, off, (size_t)(end - off), buf, ty);
		end = off;
	}
	for (int i = 0; i < N_RANDOM && st.size; i++) {
		size_t len = 1 + (size_t)(next() % (1u << (next() % 21))); /* 1 B .. 1 MiB */
		uint64_t off = next() % st.size;

		check_range(t, ino, whole, st.size, off, len, buf, ty);
	}
	check_range(t, ino, whole, st.size, st.size, 1, buf, ty); /* at the end: nothing */
	again = read_whole(t, ino, st.size);
	if (st.size)
		assert_memory_equal(again, whole, st.size);
	free(again);
	free(whole);
	ty->ranged++;
}

static void walk(struct tree *t, tree_ino dir_ino, struct tally *ty)
{
	struct tree_dir *d;

	assert_int_equal(tree_opendir(t, dir_ino, &d), RC_OK);
	for (size_t i = 0; i < tree_dir_count(d); i++) {
		enum tree_type ty_i = tree_dir_type(d, i);

		if (ty_i == TT_DIR)
			walk(t, tree_dir_ino(d, i), ty);
		else if (ty_i == TT_FILE)
			check_file(t, tree_dir_ino(d, i), ty);
	}
	tree_closedir(t, d);
}

static void check_tree_at(const char *path, const char *what)
{
	struct tree_opts o = {.cache_bytes = CACHE};
	struct tally ty = {0};
	struct tree *t;
	char why[256];

	assert_int_equal(tree_open(path, &o, &t, why, sizeof why), TREE_FAIL_NONE);
	/* under ASan a mebibyte is a fresh mapping each time it is allocated */
	ty.buf = malloc((1u << 20) + 1);
	assert_non_null(ty.buf);
	walk(t, TREE_ROOT_INO, &ty);
	free(ty.buf);
	tree_close(t);
	print_message(
	    "%s: %zu files read whole, %zu of them by ranges: %zu range reads, %llu bytes "
	    "compared\n",
	    what, ty.files, ty.ranged, ty.reads, (unsigned long long)ty.bytes);
	assert_true(ty.files > 0);
}

static void check_buf(struct buf *b, const char *what)
{
	char path[] = "/tmp/psgfs-ranges.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_false(b->oom);
	assert_int_equal(write(fd, b->data, b->len), (ssize_t)b->len);
	close(fd);
	buf_free(b);
	check_tree_at(path, what);
	unlink(path);
}

static void test_psk_psa(void **state)
{
	struct gen_psk_opts pk;
	struct gen_psa_opts pa;
	struct buf b;

	(void)state;
	gen_psk_opts_default(&pk, 3);
	pk.normals = pk.colors = true;
	pk.morphs = 2;
	pk.sockets = 2;
	pk.extra_uv_sets = 1;
	buf_init(&b);
	assert_int_equal(gen_psk_file(&pk, &b), RC_OK);
	check_buf(&b, "psk");
	gen_psk_opts_default(&pk, 4);
	pk.big = true;
	pk.points = 70000;
	buf_init(&b);
	assert_int_equal(gen_psk_file(&pk, &b), RC_OK);
	check_buf(&b, "pskx, 70000 points");
	gen_psa_opts_default(&pa, 5);
	pa.scale_keys = true;
	buf_init(&b);
	assert_int_equal(gen_psa_file(&pa, &b), RC_OK);
	check_buf(&b, "psa");
}

static void test_models(void **state)
{
	struct gen_skinned_opts sk = {.seed = 6, .layout = -1, .verts = 3000, .tris = 600};
	struct gen_skinned_truth truth = {0};
	struct psg_gen_record rec = {0};
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(gen_psg_sky_platform(PSGB_PS3, PSGB_ORDER_LOGICAL, 0, &b, &rec), RC_OK);
	check_buf(&b, "sky");
	psg_gen_record_free(&rec);
	buf_init(&b);
	assert_int_equal(gen_psg_sky_platform(PSGB_XB2, PSGB_ORDER_LOGICAL, 0, &b, &rec), RC_OK);
	check_buf(&b, "sky, Xbox 360");
	psg_gen_record_free(&rec);
	buf_init(&b);
	assert_int_equal(gen_psg_skinned(&sk, &b, &truth), RC_OK);
	gen_skinned_truth_free(&truth);
	check_buf(&b, "skinned, every preset");
	sk.layout = GEN_SK_SKATER;
	sk.rig_names = true;
	sk.platform = GEN_SK_X360;
	buf_init(&b);
	assert_int_equal(gen_psg_skinned(&sk, &b, &truth), RC_OK);
	gen_skinned_truth_free(&truth);
	check_buf(&b, "skater, Xbox 360");
	buf_init(&b);
	assert_int_equal(gen_psg_sized(1 << 20, 7, &b, &rec), RC_OK);
	psg_gen_record_free(&rec);
	check_buf(&b, "sized 1M");
}

static void test_textures(void **state)
{
	struct gen_tex_opts to = {.short_cube = true};
	struct psg_gen_record rec = {0};
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(gen_psg_textures(&to, &b, &rec, NULL), RC_OK);
	psg_gen_record_free(&rec);
	check_buf(&b, "textures, with a one-face cube");
	buf_init(&b);
	assert_int_equal(gen_x360_textures(NULL, &b, &rec, NULL), RC_OK);
	psg_gen_record_free(&rec);
	check_buf(&b, "textures, Xbox 360");
}

static void test_corpus(void **state)
{
	static const char *const files[] = {"psk_psa_py/psk/Shrek.psk",
					    "psk_psa_py/psk/Slurp_Monster_Axe_LOD0.psk",
					    "psk_psa_py/psk/Suzanne.psk",
					    "psk_psa_py/psk/MAXIM_TURRET_EXT.psk",
					    "psk_psa_py/psa/grunt_hh_grabplayer_crouch_SEQ0.psa",
					    "pyffi/examplemesh.psk",
					    "pyffi/pendulum.psa"};
	const char *root = getenv("PSGFS_SHARED");
	char path[4096];
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/corpus/psk/%s", root && *root ? root : "../shared",
			 files[i]);
		if (access(path, R_OK) != 0) {
			print_message("# corpus file %s absent (set PSGFS_SHARED): skipped\n",
				      files[i]);
			continue;
		}
		check_tree_at(path, files[i]);
		n++;
	}
	if (n == 0)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_psk_psa),
	    cmocka_unit_test(test_models),
	    cmocka_unit_test(test_textures),
	    cmocka_unit_test(test_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
