/*
 * make_seeds OUTDIR [EVERY]: write the generated seed corpora, OUTDIR/<harness>/<name>, for
 * the harnesses arena, skate, psk, psa, tree, folder, texmod, archive, manifest, world and
 * pack, plus
 * every EVERY-th hostile mutant of each seed (default 16; 0 = none) so fuzzing starts from
 * broken files too.
 * The slow harnesses get fewer (slow[] x EVERY; tree and folder only of seeds up to 16 KiB):
 * libFuzzer runs the whole starting corpus before it mutates, and at 10 runs/s the tree
 * harness spent a 35 s run, and then 70 s more, only replaying mutants that test_hostile
 * already checks one by one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "mutate.h"

#define N_HARNESS 11
static const char *const harness_dir[N_HARNESS] = {"arena",    "skate",	 "psk",	   "psa",
						   "tree",     "folder", "texmod", "archive",
						   "manifest", "world",	 "pack"};

/* Mutant stride multipliers, so a harness's starting corpus runs in about a third of 35 s. */
static const unsigned slow[N_HARNESS] = {1, 8, 1, 1, 32, 16, 1, 1, 1, 1, 1};

static int write_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n) {
		fprintf(stderr, "make_seeds: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

struct sampler {
	const char *out;
	const struct fuzz_seed *seed;
	unsigned every;
	size_t i, written;
	int err;
};

static void sample(void *ctx, const char *what, const uint8_t *p, size_t n)
{
	struct sampler *s = ctx;

	size_t k = s->i++;

	(void)what;
	if (k % s->every != 0)
		return;
	for (int h = 0; h < N_HARNESS; h++) {
		char path[4096];

		if (!(s->seed->harnesses & (1u << h)))
			continue;
		if (k % (slow[h] * s->every) != 0)
			continue;
		/* The tree and folder harnesses run ~100 times slower: none of big seeds. */
		if (((1u << h) == FZ_TREE || (1u << h) == FZ_FOLDER) && s->seed->len > 16384)
			continue;
		snprintf(path, sizeof path, "%s/%s/%s.m%05zu", s->out, harness_dir[h],
			 s->seed->name, k);
		if (write_file(path, p, n))
			s->err = -1;
		s->written++;
	}
}

int main(int argc, char **argv)
{
	struct fuzz_seed *v;
	size_t n, files = 0;
	unsigned every = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 16;
	char path[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: make_seeds OUTDIR [EVERY]\n");
		return 2;
	}
	mkdir(argv[1], 0755);
	for (int h = 0; h < N_HARNESS; h++) {
		snprintf(path, sizeof path, "%s/%s", argv[1], harness_dir[h]);
		mkdir(path, 0755);
	}
	if (fuzz_seeds_make(&v, &n) != 0)
		return 1;
	for (size_t i = 0; i < n; i++) {
		for (int h = 0; h < N_HARNESS; h++) {
			if (!(v[i].harnesses & (1u << h)))
				continue;
			snprintf(path, sizeof path, "%s/%s/%s", argv[1], harness_dir[h], v[i].name);
			if (write_file(path, v[i].data, v[i].len)) {
				fuzz_seeds_free(v, n);
				return 1;
			}
			files++;
		}
		if (every) {
			struct sampler s = {.out = argv[1], .seed = &v[i], .every = every};

			fuzz_mutants(v[i].data, v[i].len, 1000 + i, sample, &s);
			if (s.err) {
				fuzz_seeds_free(v, n);
				return 1;
			}
			files += s.written;
		}
	}
	printf("make_seeds: %zu seeds, %zu files in %s\n", n, files, argv[1]);
	fuzz_seeds_free(v, n);
	return 0;
}
