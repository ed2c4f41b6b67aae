/*
 * What a compressed PNG inside export/<stem>.glb would cost at stat (issue 29 §8,
 * docs/gltf.md, "Embedded textures stay uncompressed PNGs"). Not a test; see bench/README.md,
 * section 12. The .glb's JSON chunk, its first bytes, holds each image's byteLength, so with
 * deflate-compressed PNGs its exact size (st_size) would need every embedded texture decoded
 * and compressed at stat. Measured, per case (medians of ROUNDS, fresh tree each round):
 *   stat_ms      tree_resolve("export/sky.glb") on a freshly opened tree: the size as a stat
 *                of the mount computes it today (stored PNGs: from the dimensions)
 *   first4k_ms   then tree_read of its first 4 KiB
 *   decode_ms    the embedded texture to PNG scanlines (filter byte + RGB(A) row) through
 *                the library's decoder (tex_describe, tex_picture_rows)
 *   z1_ms z6_ms  zlib compress2 of those scanlines at level 1 and 6
 *   z1_pct z6_pct  compressed size, % of the scanlines
 * and the _cpu_ figures of stat, decode and compress from the thread's CPU time (an idle core).
 * A compressed-PNG .glb's stat would cost at least decode + compress per texture.
 * Cases: sky1024 = psgfs-gen sky + a companion sky_Textures.psg whose diffuse texture (the
 * GUID the sky's material names) is DXT5 1024x1024 with its mip chain, shaped like the real
 * sky (a 4.2 MB .glb); skyreal = sky + `psgfs-gen textures --real-shape` as companion (its
 * diffuse: DXT5 512x512). The generator's pictures are gradients and a checker: they compress
 * far better and faster than real ones, so the costs are lower bounds.
 * Build: cc -O2 -Iinclude bench/glb_png.c build/src/libpsgfs-gen.a build/src/libpsgfs.a \
 *        -lpng -lsquish -lstdc++ -lz -lmspack -lm -lpthread -o glb_png   (-lmspack when found)
 * Run:   glb_png [ROUNDS [DIR]]   prints name<TAB>value lines; the inputs go to DIR (default:
 *        a fresh directory under $TMPDIR, removed at the end)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/texture.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/tree/tree.h"

#define SKY_DIFFUSE 0x2c7f381800171902ull /* the GUID the sky's material names as diffuse */
#define MAXR	    64

struct stamp {
	double wall, cpu;
};

static double clk(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6; /* ms */
}

static struct stamp now(void)
{
	return (struct stamp){clk(CLOCK_MONOTONIC), clk(CLOCK_THREAD_CPUTIME_ID)};
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what)
{
	fprintf(stderr, "glb_png: %s\n", what);
	exit(1);
}

static void write_file(const char *dir, const char *name, const struct buf *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f))
		die(path);
}

/* A companion arena: its bytes and the dictionary row of the texture with GUID SKY_DIFFUSE. */
static void companion(const struct gen_tex_opts *o, struct buf *out, uint32_t *tex_index)
{
	struct gen_tex_truth tr = {0};

	buf_init(out);
	if (gen_psg_textures(o, out, NULL, &tr) != RC_OK || out->oom)
		die("gen_psg_textures");
	*tex_index = UINT32_MAX;
	for (size_t i = 0; i < tr.n; i++)
		if (tr.items[i].guid == SKY_DIFFUSE)
			*tex_index = tr.items[i].tex_index;
	gen_tex_truth_free(&tr);
	if (*tex_index == UINT32_MAX)
		die("no texture with the sky's diffuse GUID");
}

/* Decode the texture to PNG scanlines (filter byte 0 + pixels); *n bytes in a malloc'd block. */
static uint8_t *scanlines(const struct buf *arena, uint32_t tex_index, size_t *n, uint32_t *w,
			  uint32_t *h, unsigned *ch)
{
	struct src_mem m;
	struct src s;
	struct arena a;
	struct diag dg;
	struct tex_desc d;
	uint8_t *px, *out;
	size_t row;

	src_init_mem(&s, &m, arena->data, arena->len);
	diag_init(&dg);
	if (arena_open(&s, &a, &dg) != RC_OK || tex_describe(&s, &a, tex_index, &d, &dg) != RC_OK)
		die("tex_describe");
	*w = tex_picture_width(&d);
	*h = d.height;
	*ch = d.alpha ? 4 : 3;
	row = (size_t)*w * *ch;
	px = malloc(row * *h);
	out = malloc((row + 1) * *h);
	if (!px || !out)
		die("out of memory");
	if (tex_picture_rows(&s, &d, 0, *h, px) != RC_OK)
		die("tex_picture_rows");
	for (uint32_t y = 0; y < *h; y++) {
		out[(row + 1) * y] = 0;
		memcpy(out + (row + 1) * y + 1, px + row * y, row);
	}
	free(px);
	arena_free(&a);
	diag_free(&dg);
	*n = (row + 1) * *h;
	return out;
}

static void run_case(const char *name, const char *dir, const struct buf *tex, uint32_t tex_index,
		     int rounds)
{
	double st[MAXR], stc[MAXR], f4[MAXR], dec[MAXR], decc[MAXR], z[2][MAXR], zc[2][MAXR];
	const int lvl[2] = {1, 6};
	uint64_t glb = 0, zlen[2] = {0, 0};
	size_t raw = 0;
	uint32_t w = 0, h = 0;
	unsigned ch = 0;
	char path[4096];

	write_file(dir, "sky_Textures.psg", tex);
	snprintf(path, sizeof path, "%s/sky.psg", dir);
	for (int r = 0; r < rounds; r++) {
		struct tree *t;
		struct tree_stat ts;
		char why[256], b4k[4096];
		size_t got;
		struct stamp a, b, c;
		uint8_t *sl, *zb;
		uLongf zn;

		if (tree_open(path, &(struct tree_opts){0}, &t, why, sizeof why) != TREE_FAIL_NONE)
			die(why);
		a = now();
		if (tree_resolve(t, "export/sky.glb", &ts) != RC_OK)
			die("tree_resolve export/sky.glb");
		b = now();
		if (tree_read(t, ts.ino, 0, sizeof b4k, b4k, &got) != RC_OK || got != sizeof b4k)
			die("tree_read export/sky.glb");
		c = now();
		tree_close(t);
		st[r] = b.wall - a.wall;
		stc[r] = b.cpu - a.cpu;
		f4[r] = c.wall - b.wall;
		glb = ts.size;

		a = now();
		sl = scanlines(tex, tex_index, &raw, &w, &h, &ch);
		b = now();
		dec[r] = b.wall - a.wall;
		decc[r] = b.cpu - a.cpu;
		zb = malloc(compressBound(raw));
		if (!zb)
			die("out of memory");
		for (int k = 0; k < 2; k++) {
			zn = compressBound(raw);
			a = now();
			if (compress2(zb, &zn, sl, raw, lvl[k]) != Z_OK)
				die("compress2");
			b = now();
			z[k][r] = b.wall - a.wall;
			zc[k][r] = b.cpu - a.cpu;
			zlen[k] = zn;
		}
		free(zb);
		free(sl);
	}
	if (glb < raw)
		die("the .glb is smaller than the texture's scanlines: is the texture embedded?");
	printf("%s_glb_bytes\t%llu\n", name, (unsigned long long)glb);
	printf("%s_tex\t%ux%u_%s\n", name, w, h, ch == 4 ? "RGBA" : "RGB");
	printf("%s_scanline_bytes\t%zu\n", name, raw);
	printf("%s_stat_ms\t%.4f\n", name, median(st, rounds));
	printf("%s_stat_cpu_ms\t%.4f\n", name, median(stc, rounds));
	printf("%s_first4k_ms\t%.4f\n", name, median(f4, rounds));
	printf("%s_decode_ms\t%.3f\n", name, median(dec, rounds));
	printf("%s_decode_cpu_ms\t%.3f\n", name, median(decc, rounds));
	for (int k = 0; k < 2; k++) {
		printf("%s_z%d_ms\t%.3f\n", name, lvl[k], median(z[k], rounds));
		printf("%s_z%d_cpu_ms\t%.3f\n", name, lvl[k], median(zc[k], rounds));
		printf("%s_z%d_pct\t%.2f\n", name, lvl[k], 100.0 * (double)zlen[k] / (double)raw);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	char tmpl[1024], path[4096];
	const char *dir;
	bool own = argc <= 2;
	struct buf sky, tex;
	uint32_t idx;
	size_t n_real;
	/* One DXT5 1024x1024 texture with its mip chain, numbered as the sky's diffuse. */
	static const struct gen_tex_spec s1024 = {GCM_TEX_DXT5, 1024, 1024, 0, false, 0, false, 0};

	if (rounds < 1 || rounds > MAXR)
		die("ROUNDS: 1 to 64");
	if (own) {
		const char *tmp = getenv("TMPDIR");

		snprintf(tmpl, sizeof tmpl, "%s/glb_png.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(tmpl))
			die("mkdtemp");
		dir = tmpl;
	} else {
		dir = argv[2];
	}
	buf_init(&sky);
	if (gen_psg_sky(0, &sky, NULL) != RC_OK || sky.oom)
		die("gen_psg_sky");
	write_file(dir, "sky.psg", &sky);

	companion(&(struct gen_tex_opts){.specs = &s1024, .n_specs = 1, .guid_first = 2}, &tex,
		  &idx);
	run_case("sky1024", dir, &tex, idx, rounds);
	buf_free(&tex);

	companion(&(struct gen_tex_opts){.specs = gen_tex_real_specs(&n_real), .n_specs = n_real},
		  &tex, &idx);
	run_case("skyreal", dir, &tex, idx, rounds);
	buf_free(&tex);
	buf_free(&sky);
	if (own) {
		snprintf(path, sizeof path, "%s/sky.psg", dir);
		unlink(path);
		snprintf(path, sizeof path, "%s/sky_Textures.psg", dir);
		unlink(path);
		rmdir(dir);
	}
	return 0;
}
