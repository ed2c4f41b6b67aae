/*
 * Replays the fuzz harnesses (tests/fuzz/fuzz_*.c, the same code libFuzzer runs) in the normal
 * suite: every generated seed through its harnesses, then every file kept in
 * tests/fuzz/regressions/<harness>/ (crashes, leaks, OOMs and timeouts found by tests/fuzz/run)
 * through all eleven harnesses. A regression that comes back crashes or fails here. Replaying
 * no file at all, or a file that cannot be read, fails too: a moved or emptied regressions
 * folder must not pass unnoticed. PSGFS_FUZZ_REGRESSIONS names another folder to replay (then
 * only that replay runs: the suite checks that an empty one fails).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifndef FUZZ_DIR
#error "FUZZ_DIR must name tests/fuzz"
#endif

static const struct {
	const char *name;
	int (*fn)(const uint8_t *p, size_t n);
	unsigned bit;
} harnesses[] = {
    {"arena", fuzz_one_arena, FZ_ARENA},
    {"skate", fuzz_one_skate, FZ_SKATE},
    {"psk", fuzz_one_psk, FZ_PSK},
    {"psa", fuzz_one_psa, FZ_PSA},
    {"tree", fuzz_one_tree, FZ_TREE},
    {"folder", fuzz_one_folder, FZ_FOLDER},
    {"texmod", fuzz_one_texmod, FZ_TEXMOD},
    {"archive", fuzz_one_archive, FZ_ARCHIVE},
    {"manifest", fuzz_one_manifest, FZ_MANIFEST},
    {"world", fuzz_one_world, FZ_WORLD},
    {"pack", fuzz_one_pack, FZ_PACK},
};
#define N_HARNESS (sizeof harnesses / sizeof harnesses[0])

static void test_seeds(void **state)
{
	struct fuzz_seed *v;
	size_t n, runs = 0;

	(void)state;
	assert_int_equal(fuzz_seeds_make(&v, &n), 0);
	assert_true(n >= 15);
	for (size_t i = 0; i < n; i++) {
		for (size_t h = 0; h < N_HARNESS; h++) {
			if (!(v[i].harnesses & harnesses[h].bit))
				continue;
			if (harnesses[h].fn(v[i].data, v[i].len) != 0)
				fail_msg("seed %s fails harness %s", v[i].name, harnesses[h].name);
			runs++;
		}
		/* A clean generated file mounts and every one of its files reads; a folder seed
		 * opens, and its clean files read (the hostile one has failures). */
		struct fuzz_tree_result r;

		if (v[i].harnesses == FZ_TEXMOD) /* pictures: no container to mount */
			continue;
		if (v[i].harnesses &
		    FZ_ARCHIVE) /* archives: the archive (and pack) harness alone */
			continue;
		if (v[i].harnesses == FZ_MANIFEST) /* manifests: the manifest harness alone */
			continue;
		if (v[i].harnesses == FZ_WORLD) /* world objects: the world harness alone */
			continue;
		if (v[i].harnesses == FZ_FOLDER) {
			assert_int_equal(fuzz_folder_check(v[i].data, v[i].len, FZT_TWICE, &r), 0);
			assert_int_equal(r.open, TREE_FAIL_NONE);
			assert_true(r.files > 20);
			if (strcmp(v[i].name, "folder_hostile") && r.failed)
				fail_msg("seed %s: %lu of %lu files fail", v[i].name, r.failed,
					 r.files);
			continue;
		}
		assert_int_equal(fuzz_tree_check(v[i].data, v[i].len, FZT_TWICE, &r), 0);
		assert_int_equal(r.open, TREE_FAIL_NONE);
		if (r.failed)
			fail_msg("seed %s: %lu of %lu files fail", v[i].name, r.failed, r.files);
		assert_true(r.files > 5);
	}
	print_message("seeds: %zu inputs, %zu harness runs\n", n, runs);
	fuzz_seeds_free(v, n);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		p = malloc((size_t)n + 1);
		if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
			free(p);
			p = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return p;
}

/* Every regular file under dir/<harness>/ through every harness; returns files replayed. */
static size_t replay_dir(const char *dir)
{
	size_t files = 0;

	for (size_t h = 0; h < N_HARNESS; h++) {
		char sub[4096];
		DIR *d;
		struct dirent *e;

		snprintf(sub, sizeof sub, "%s/%s", dir, harnesses[h].name);
		d = opendir(sub);
		if (!d)
			continue;
		while ((e = readdir(d)) != NULL) {
			char path[8192];
			uint8_t *p;
			size_t len = 0;

			if (e->d_name[0] == '.' || !strcmp(e->d_name, "README"))
				continue;
			snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
			p = slurp(path, &len);
			if (!p)
				fail_msg("%s cannot be read", path);
			for (size_t k = 0; k < N_HARNESS; k++)
				if (harnesses[k].fn(p, len) != 0)
					fail_msg("%s fails harness %s", path, harnesses[k].name);
			free(p);
			files++;
		}
		closedir(d);
	}
	return files;
}

static const char *regressions_dir(void)
{
	const char *env = getenv("PSGFS_FUZZ_REGRESSIONS");

	return env && *env ? env : FUZZ_DIR "/regressions";
}

static void test_regressions(void **state)
{
	const char *dir = regressions_dir();
	size_t n;

	(void)state;
	n = replay_dir(dir);
	print_message("regressions: %zu files replayed through %zu harnesses\n", n, N_HARNESS);
	if (n == 0)
		fail_msg("no regression file replayed from %s/<harness>/", dir);
}

/* Inputs that the harnesses must survive but no generator makes. */
static void test_edge_inputs(void **state)
{
	static const uint8_t rw4[] = {0x89, 'R', 'W',  '4',  'p',  's',
				      '3',  0,	 0x0D, 0x0A, 0x1A, 0x0A};
	static const char actr[32] = "ACTRHEAD", anim[32] = "ANIMHEAD";
	const struct {
		const void *p;
		size_t n;
	} in[] = {{"", 0},    {rw4, sizeof rw4}, {actr, sizeof actr}, {anim, sizeof anim},
		  {actr, 20}, {anim, 9}};

	(void)state;
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
		for (size_t h = 0; h < N_HARNESS; h++)
			if (harnesses[h].fn(in[i].p, in[i].n) != 0)
				fail_msg("edge input %zu fails harness %s", i, harnesses[h].name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seeds),
	    cmocka_unit_test(test_edge_inputs),
	    cmocka_unit_test(test_regressions),
	};
	const struct CMUnitTest replay_only[] = {
	    cmocka_unit_test(test_regressions),
	};

	if (getenv("PSGFS_FUZZ_REGRESSIONS"))
		return cmocka_run_group_tests(replay_only, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
