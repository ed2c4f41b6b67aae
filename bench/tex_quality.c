/*
 * Texture mods, formats layer: quality (PSNR against the source picture) and speed of the
 * encoders per kind, and the seconds a 1024x1024 DXT5 texture with its full mip chain takes
 * from a PNG to a finished arena (texmod_plan + texmod_write, in memory). Not a test; see
 * bench/README.md, "Texture mods". Pictures are synthesised: a smooth gradient, the
 * generator's checker with noise, and a photo-like one (fractal value noise, hard-edged
 * shapes, grain).
 * Build: cc -O2 -Iinclude -Isrc -Itests/unit bench/tex_quality.c build/src/libpsgfs-gen.a \
 *        build/src/libpsgfs.a -lpng -lsquish -lstdc++ -lm -lpthread -o tex_quality
 * Run:   tex_quality [THREADS]      (default: the online CPUs)
 *        tex_quality png FILE        the photo-like 1024x1024 picture as a PNG (bench/run)
 *        tex_quality dds FILE        ... as a DXT5 DDS with its 11 levels
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "psgfs/gen/gen_psg_textures.h"
#include "texmod_testutil.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint32_t seed = 7;

static double frand(void)
{
	return (double)(tm_rnd(&seed) & 0xFFFFFF) / 16777215.0;
}

/* Photo-like: 7 octaves of bilinear value noise (channels partly correlated), discs and bars
 * with hard edges, a soft vignette, grain; alpha a smooth mask with a hard-edged hole. */
static void photo(uint32_t w, uint32_t h, uint8_t *px)
{
	double *acc = calloc((size_t)w * h * 4, sizeof *acc);

	for (int o = 0; o < 7; o++) {
		uint32_t g = 3u << o;
		double amp = 1.0 / (1 << o), *grid = malloc((g + 1) * (g + 1) * 4 * sizeof *grid);

		for (uint32_t i = 0; i < (g + 1) * (g + 1); i++) {
			double base = frand();

			for (int c = 0; c < 4; c++)
				grid[4 * i + c] = 0.6 * base + 0.4 * frand();
		}
		for (uint32_t y = 0; y < h; y++)
			for (uint32_t x = 0; x < w; x++) {
				double fx = (double)x * g / w, fy = (double)y * g / h;
				uint32_t ix = (uint32_t)fx, iy = (uint32_t)fy;
				double tx = fx - ix, ty = fy - iy;

				tx = tx * tx * (3 - 2 * tx), ty = ty * ty * (3 - 2 * ty);
				for (int c = 0; c < 4; c++) {
					double a = grid[4 * (iy * (g + 1) + ix) + c],
					       b = grid[4 * (iy * (g + 1) + ix + 1) + c],
					       d = grid[4 * ((iy + 1) * (g + 1) + ix) + c],
					       e = grid[4 * ((iy + 1) * (g + 1) + ix + 1) + c];

					acc[4 * ((size_t)y * w + x) + c] +=
					    amp * ((a * (1 - tx) + b * tx) * (1 - ty) +
						   (d * (1 - tx) + e * tx) * ty);
				}
			}
		free(grid);
	}
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			double *a = acc + 4 * ((size_t)y * w + x);
			double dx = (double)x / w - 0.5, dy = (double)y / h - 0.5;
			double vig = 1.0 - 0.6 * (dx * dx + dy * dy),
			       r1 = hypot(dx - 0.2, dy + 0.1);
			uint8_t *p = px + 4 * ((size_t)y * w + x);

			for (int c = 0; c < 3; c++) {
				double v = a[c] / 2.0 * vig * 255 + (frand() - 0.5) * 10;

				if (r1 < 0.12) /* a disc: a hard edge */
					v = c == 0 ? 220 : c == 1 ? 40 + 80 * (r1 / 0.12) : 30;
				if ((x / 24) % 9 == 3 && y > h / 2) /* bars */
					v = 250 - c * 60;
				p[c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
			p[3] =
			    (uint8_t)(hypot(dx + 0.25, dy - 0.2) < 0.08 ? 0
									: 255 * (0.5 + a[3] / 4));
		}
	free(acc);
}

static void gradient(uint32_t w, uint32_t h, uint8_t *px)
{
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint8_t *p = px + 4 * ((size_t)y * w + x);

			p[0] = (uint8_t)(x * 255 / (w - 1)), p[1] = (uint8_t)(y * 255 / (h - 1));
			p[2] = (uint8_t)((x + y) * 255 / (w + h - 2));
			p[3] = (uint8_t)(255 - y * 200 / (h - 1));
		}
}

static void checker(uint32_t w, uint32_t h, uint8_t *px)
{
	tm_pattern(1, 0, 0, w, h, true, px);
}

struct kind {
	enum tex_kind k;
	const char *name;
	int ch;	    /* channels compared: 3 RGB, 2 RG (ATI2), 1 L8 (luma of the source) */
	bool alpha; /* alpha compared too */
};

static const struct kind kinds[] = {
    {TEXK_DXT1, "DXT1", 3, false},	  {TEXK_DXT3, "DXT3", 3, true},
    {TEXK_DXT5, "DXT5", 3, true},	  {TEXK_ATI2, "ATI2", 2, false},
    {TEXK_BGRA8, "A8R8G8B8", 3, true},	  {TEXK_BGRX8, "X8R8G8B8", 3, false},
    {TEXK_R5G6B5, "R5G6B5", 3, false},	  {TEXK_A1R5G5B5, "A1R5G5B5", 3, true},
    {TEXK_A4R4G4B4, "A4R4G4B4", 3, true}, {TEXK_L8, "L8", 1, false},
};

static double psnr_ch(const uint8_t *a, const uint8_t *b, size_t n, int c0, int c1)
{
	double se = 0;

	for (size_t i = 0; i < n; i++)
		for (int c = c0; c < c1; c++) {
			double d = (double)a[4 * i + c] - b[4 * i + c];

			se += d * d;
		}
	se /= (double)n * (c1 - c0);
	return se == 0 ? INFINITY : 10 * log10(255.0 * 255.0 / se);
}

/* One kind on one picture: PSNR (RGB or RG or luma; alpha) and MB/s of RGBA input. */
static void one(const struct kind *k, const char *pic, const uint8_t *src, uint32_t w, uint32_t h,
		unsigned threads)
{
	size_t n = (size_t)w * h;
	uint8_t *canon = malloc(n * 4 + 64), *dec = malloc(n * 4 + 64), *ref = malloc(n * 4);
	double t0, t, q, qa = NAN;

	memcpy(ref, src, n * 4);
	if (!k->alpha) /* opaque: DXT1 would make alpha < 128 transparent black */
		for (size_t i = 0; i < n; i++)
			ref[4 * i + 3] = 255;
	t0 = now();
	tex_encode_rows(k->k, ref, w, h, canon, threads);
	t = now() - t0;
	if (tex_kind_compressed(k->k))
		dxt_decode_image(k->k, canon, w, h, dec);
	else
		tex_canon_rgba(k->k, canon, w * h, 1, dec);
	if (k->k == TEXK_L8) /* against the source's luma, which is what L8 can hold */
		for (size_t i = 0; i < n; i++)
			ref[4 * i] = (uint8_t)((77u * src[4 * i] + 150u * src[4 * i + 1] +
						29u * src[4 * i + 2] + 128u) >>
					       8);
	if (k->k == TEXK_ATI2) /* red and green are what it holds */
		memcpy(ref, src, n * 4);
	q = psnr_ch(ref, dec, n, 0, k->ch);
	if (k->alpha)
		qa = psnr_ch(ref, dec, n, 3, 4);
	printf("%s\t%s\t%ux%u\t%.2f\t%.2f\t%.1f\t%u\n", k->name, pic, w, h, q, qa, n * 4 / 1e6 / t,
	       threads);
	free(canon);
	free(dec);
	free(ref);
}

/* PNG of the photo -> a 1024x1024 DXT5 texture with 11 levels, in a generated arena. */
static void end_to_end(unsigned threads)
{
	static const struct gen_tex_spec spec = {GCM_TEX_DXT5, 1024, 1024, 0, false, 0, false, 0};
	uint8_t *px = malloc(1024 * 1024 * 4), *png, *out, *raw;
	struct src_mem pm;
	struct src ps;
	struct texmod_plan p;
	struct buf b;
	struct ar x;
	size_t pl, n;
	char why[256];
	double t0, t1, best = 1e9;

	photo(1024, 1024, px);
	png = tm_png_rgba(px, 1024, 1024, &pl);
	buf_init(&b);
	gen_psg_textures(&(struct gen_tex_opts){.specs = &spec, .n_specs = 1}, &b, NULL, NULL);
	raw = buf_steal(&b, &n);
	ar_open(&x, raw, n);
	for (int round = 0; round < 3; round++) {
		src_init_mem(&ps, &pm, png, pl);
		t0 = now();
		if (texmod_plan(&x.s, &x.a, 1, TEXMOD_PNG, &ps, &p, why, sizeof why) != RC_OK) {
			fprintf(stderr, "plan: %s\n", why);
			exit(1);
		}
		p.threads = threads;
		out = malloc((size_t)p.out_size);
		if (texmod_write(&x.s, &x.a, &ps, &p, out, why, sizeof why) != RC_OK) {
			fprintf(stderr, "write: %s\n", why);
			exit(1);
		}
		t1 = now() - t0;
		best = t1 < best ? t1 : best;
		texmod_plan_free(&p);
		free(out);
	}
	printf("png1024_dxt5_mips_s\t%.3f\t%u\t(PNG %zu bytes, arena %zu bytes)\n", best, threads,
	       pl, n);
	ar_close(&x);
	free(png);
	free(px);
}

static void spit(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* The photo-like picture as a file for bench/run: a PNG, or a DXT5 DDS with every level. */
static int write_picture(const char *kind, const char *path)
{
	const struct texmod_shape sh = {TEXK_DXT5, 1024, 1024, 11, 1};
	uint8_t *px = malloc(1024 * 1024 * 4), *file;
	struct buf pay;
	size_t n;

	photo(1024, 1024, px);
	if (!strcmp(kind, "png")) {
		file = tm_png_rgba(px, 1024, 1024, &n);
	} else {
		buf_init(&pay);
		for (uint32_t l = 0, w = 1024; l < sh.mips; l++, w /= 2) {
			uint8_t *lv = malloc((size_t)w * w * 4), *c = malloc((size_t)w * w + 16);

			/* point-sampled levels: enough for a bench input */
			for (uint32_t y = 0; y < w; y++)
				for (uint32_t x = 0; x < w; x++)
					memcpy(lv + 4 * ((size_t)y * w + x),
					       px + 4 * ((size_t)y * (1024 / w) * 1024 +
							 x * (1024 / w)),
					       4);
			tex_encode_rows(TEXK_DXT5, lv, w, w, c, 2);
			buf_put(&pay, c, (size_t)((w + 3) / 4) * ((w + 3) / 4) * 16);
			free(lv);
			free(c);
		}
		file = tm_dds(&sh, pay.data, pay.len, &n);
		buf_free(&pay);
	}
	spit(path, file, n);
	free(file);
	free(px);
	return 0;
}

int main(int argc, char **argv)
{
	long nc = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : (unsigned)(nc > 0 ? nc : 1);
	const uint32_t w = 1024, h = 1024;
	uint8_t *pics[3];
	const char *names[3] = {"gradient", "checker", "photo"};

	if (argc == 3)
		return write_picture(argv[1], argv[2]);

	pics[0] = malloc(w * h * 4), pics[1] = malloc(w * h * 4), pics[2] = malloc(w * h * 4);
	gradient(w, h, pics[0]);
	checker(w, h, pics[1]);
	photo(w, h, pics[2]);
	printf("kind\tpicture\tsize\tpsnr_db\talpha_psnr_db\tMB_per_s\tthreads\n");
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		for (int i = 0; i < 3; i++)
			one(&kinds[k], names[i], pics[i], w, h, threads);
	for (unsigned t = 1; t <= threads; t += threads > 1 ? threads - 1 : 1)
		one(&kinds[2], "photo", pics[2], w, h, t);
	end_to_end(1);
	if (threads > 1)
		end_to_end(threads);
	for (int i = 0; i < 3; i++)
		free(pics[i]);
	return 0;
}
