/*
 * RefPack encoding (issue 27: >= 50 MB/s of input, a ratio within 10 % of the best public
 * encoder). Not a test; see bench/README.md, "Packing". Each FILE is encoded on its own, as
 * psgfs-tool pack encodes an entry; prints the total in, out, the ratio (out / in) and the
 * median MB/s of input over ROUNDS (wall clock, then the thread's CPU time), and checks that
 * psgfs's decoder gives every file back.
 * Build: cc -O2 -Iinclude bench/refpack_enc.c build/src/libpsgfs-gen.a build/src/libpsgfs.a \
 *        -lz -lm -lpthread -o refpack_enc
 * Run:   refpack_enc ROUNDS FILE...   (RP_CHAIN=N: candidates per position, default the
 *        encoder's, as pack uses it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "psgfs/base/buf.h"
#include "psgfs/formats/refpack.h"
#include "psgfs/gen/refpack_enc.h"

static double clk(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long len;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	p = malloc((size_t)len + 1);
	if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
		free(p);
		p = NULL;
	}
	*n = (size_t)len;
out:
	if (f)
		fclose(f);
	return p;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3, nf = argc - 2, bad = 0;
	uint8_t **in = calloc((size_t)(nf > 0 ? nf : 1), sizeof *in);
	size_t *len = calloc((size_t)(nf > 0 ? nf : 1), sizeof *len), tin = 0, tout = 0;
	struct rp_enc_opts o = {.chain =
				    getenv("RP_CHAIN") ? (unsigned)atoi(getenv("RP_CHAIN")) : 0};
	double *wall = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *wall),
	       *cpu = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *cpu);

	if (rounds < 1 || nf < 1 || !in || !len || !wall || !cpu) {
		fprintf(stderr, "usage: refpack_enc ROUNDS FILE...\n");
		return 2;
	}
	for (int i = 0; i < nf; i++) {
		if (!(in[i] = slurp(argv[i + 2], &len[i]))) {
			fprintf(stderr, "refpack_enc: cannot read %s\n", argv[i + 2]);
			return 1;
		}
		tin += len[i];
	}
	for (int i = 0; i < nf; i++) { /* psgfs's decoder gives every file back (untimed) */
		struct buf b;
		uint8_t *back = malloc(len[i] + 1);
		size_t got = 0;

		buf_init(&b);
		if (!back || rp_encode(in[i], len[i], &o, &b) != RC_OK ||
		    rp_decode(b.data, b.len, back, len[i], &got) != RC_OK || got != len[i] ||
		    memcmp(back, in[i], len[i]))
			bad++;
		tout += b.len;
		free(back);
		buf_free(&b);
	}
	for (int r = 0; r < rounds; r++) {
		double w = clk(CLOCK_MONOTONIC), c = clk(CLOCK_THREAD_CPUTIME_ID);

		for (int i = 0; i < nf; i++) {
			struct buf b;

			buf_init(&b);
			if (rp_encode(in[i], len[i], &o, &b) != RC_OK)
				bad++;
			buf_free(&b);
		}
		wall[r] = (double)tin / (clk(CLOCK_MONOTONIC) - w) / 1e6;
		cpu[r] = (double)tin / (clk(CLOCK_THREAD_CPUTIME_ID) - c) / 1e6;
	}
	qsort(wall, (size_t)rounds, sizeof *wall, cmpd);
	qsort(cpu, (size_t)rounds, sizeof *cpu, cmpd);
	printf("files\t%d\nin\t%zu\nout\t%zu\nratio\t%.4f\nmbps\t%.1f\nmbps_cpu\t%.1f\nbad\t%d\n",
	       nf, tin, tout, (double)tout / (double)tin, wall[rounds / 2], cpu[rounds / 2], bad);
	return bad != 0;
}
