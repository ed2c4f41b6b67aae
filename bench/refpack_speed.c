/*
 * RefPack decoding speed (issue 18: >= 400 MB/s of output). Not a test; see bench/README.md,
 * "Archives". Data is synthesised: 64 MiB mixing text-like records, runs, repeated blocks
 * at far distances and noise, packed by the test encoder (tests/unit/rp_enc.h). Measured:
 *   rp_decode     one whole-buffer decode (the decoder alone, memory to memory)
 *   arc_piece     every piece of one 64 MiB single-RefPack entry of an in-memory EB archive
 *                 (restart points, bounded buffers: what the mount does per piece)
 *   index_build   the sequential decode that places the restart points
 * Build: cc -O2 -Iinclude -Isrc -Itests/unit bench/refpack_speed.c build/src/libpsgfs.a \
 *        -lz -lmspack -lm -lpthread -o refpack_speed   (-lmspack when the build found it)
 * Run:   refpack_speed [ROUNDS]    prints name<TAB>MB/s lines (medians of wall-clock figures,
 *        then _cpu_ ones from the thread's CPU time: the figure on an idle core)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/refpack.h"
#include "rp_enc.h"

#define N (64u << 20)

static double clk(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Wall time, and this thread's CPU time (what the figure would be on an idle core). */
struct stamp {
	double wall, cpu;
};

static struct stamp now(void)
{
	return (struct stamp){clk(CLOCK_MONOTONIC), clk(CLOCK_THREAD_CPUTIME_ID)};
}

static void since(struct stamp t, double *wall, double *cpu)
{
	struct stamp u = now();

	*wall = N / (u.wall - t.wall) / 1e6;
	*cpu = N / (u.cpu - t.cpu) / 1e6;
}

static void synth(uint8_t *p, size_t n)
{
	uint32_t x = 12345;
	size_t i = 0;

	while (i < n) {
		size_t len;

		x = x * 1103515245u + 12345;
		len = 64 + (x >> 20) % 4000;
		if (len > n - i)
			len = n - i;
		switch ((x >> 8) & 3) {
		case 0: /* text-like records */
			for (size_t k = 0; k < len; k++)
				p[i + k] = (uint8_t)("data/content/world/models/0123456789abcdef_"
							 [(k * 7 + (x >> 12)) % 43]);
			break;
		case 1: /* an earlier block again, up to 128 KiB back */
			if (i > 140000) {
				memmove(p + i, p + i - 1000 - (x >> 4) % 130000, len);
				break;
			}
			/* fall through */
		case 2: /* noise */
			for (size_t k = 0; k < len; k++) {
				x = x * 1103515245u + 12345;
				p[i + k] = (uint8_t)(x >> 24);
			}
			break;
		default: /* runs */
			memset(p + i, (int)(x >> 16), len);
			break;
		}
		i += len;
	}
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* An EB archive in memory with one RefPack entry. */
static uint8_t *eb_one(const uint8_t *pk, size_t pl, size_t n, size_t *len)
{
	size_t at = 0x100;
	uint8_t *p = calloc(1, at + pl);

	if (!p)
		return NULL;
	memcpy(p, "EB\0\3", 4);
	p[7] = 1;     /* one entry */
	p[15] = 0x50; /* names at 0x50 */
	p[19] = 0x20; /* names and folders: 0x20 bytes */
	p[20] = 16;   /* name record */
	p[21] = 16;   /* folder record */
	p[23] = 1;    /* one folder */
	p[0x30 + 2] = (uint8_t)(at >> 8);
	for (int k = 0; k < 4; k++) {
		p[0x34 + k] = (uint8_t)(pl >> (24 - 8 * k));
		p[0x38 + k] = (uint8_t)(n >> (24 - 8 * k));
	}
	p[0x40] = 1; /* RefPack */
	memcpy(p + 0x52, "big.psg", 7);
	memcpy(p + 0x60, "data", 4);
	memcpy(p + at, pk, pl);
	*len = at + pl;
	return p;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	uint8_t *src = malloc(N), *dst = malloc(N), *pk = malloc(rpt_bound(N)), *arc;
	uint8_t *piece = malloc(ARC_PIECE_MAX);
	double *t1 = calloc((size_t)rounds, sizeof *t1), *t2 = calloc((size_t)rounds, sizeof *t2);
	double *t3 = calloc((size_t)rounds, sizeof *t3), *c[3];
	size_t pl, got, alen;
	struct src s;
	struct src_mem m;
	struct arc a;

	for (int k = 0; k < 3; k++)
		c[k] = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *c[k]);
	if (!src || !dst || !pk || !piece || !t1 || !t2 || !t3 || !c[0] || !c[1] || !c[2] ||
	    rounds < 1)
		return 2;
	synth(src, N);
	pl = rpt_encode(src, N, pk);
	arc = eb_one(pk, pl, N, &alen);
	if (!arc)
		return 2;
	src_init_mem(&s, &m, arc, alen);
	if (arc_open(&s, NULL, &a, NULL) != RC_OK || a.n != 1)
		return 1;
	for (int r = 0; r < rounds; r++) {
		struct arc_index *ix;
		struct stamp t;

		t = now();
		if (rp_decode(pk, pl, dst, N, &got) != RC_OK || got != N || memcmp(src, dst, N))
			return 1;
		since(t, &t1[r], &c[0][r]);
		t = now();
		if (arc_index_build(&s, &a, 0, &ix, NULL) != RC_OK)
			return 1;
		since(t, &t3[r], &c[2][r]);
		t = now();
		for (uint64_t k = 0; k < arc_piece_count(ix); k++) {
			uint64_t off, len;

			arc_piece_span(ix, k, &off, &len);
			if (arc_piece(&s, ix, k, piece, &got, NULL) != RC_OK || got != len ||
			    memcmp(piece, src + off, len))
				return 1;
		}
		since(t, &t2[r], &c[1][r]);
		if (r == 0)
			fprintf(stderr,
				"refpack_speed: %u MiB -> %zu bytes packed (%.1f%%), index %llu "
				"bytes\n",
				N >> 20, pl, 100.0 * (double)pl / N,
				(unsigned long long)arc_index_bytes(ix));
		arc_index_free(ix);
	}
	qsort(t1, (size_t)rounds, sizeof *t1, cmpd);
	qsort(t2, (size_t)rounds, sizeof *t2, cmpd);
	qsort(t3, (size_t)rounds, sizeof *t3, cmpd);
	for (int k = 0; k < 3; k++)
		qsort(c[k], (size_t)rounds, sizeof *c[k], cmpd);
	printf("rp_decode_mbps\t%.0f\n", t1[rounds / 2]);
	printf("arc_piece_mbps\t%.0f\n", t2[rounds / 2]);
	printf("index_build_mbps\t%.0f\n", t3[rounds / 2]);
	printf("rp_decode_cpu_mbps\t%.0f\n", c[0][rounds / 2]);
	printf("arc_piece_cpu_mbps\t%.0f\n", c[1][rounds / 2]);
	printf("index_build_cpu_mbps\t%.0f\n", c[2][rounds / 2]);
	arc_free(&a);
	free(arc);
	free(src);
	free(dst);
	free(pk);
	free(piece);
	free(t1);
	free(t2);
	free(t3);
	for (int k = 0; k < 3; k++)
		free(c[k]);
	return 0;
}
