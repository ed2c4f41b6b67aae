/*
 * Pictures written over textures (texmod): every texture of the generated PS3 and Xbox 360
 * arenas (every format, NPOT, pitched, swizzled, tiled, packed mip tails, cube maps) gets its
 * own served .dds back byte for byte; PNGs come back exact for uncompressed formats; new
 * shapes, formats, mip counts and faces lay the arena out again and read back as written; a
 * DDS written into an Xbox 360 texture and into its PS3 twin reads back the same; a same-size
 * DDS gives what the community's merge script gives; hostile pictures and arenas are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>

#include "sanitizer.h"
#include "psgfs/formats/dds_read.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_x360_textures.h"
#include "texmod_testutil.h"

enum which { PS3_DEFAULT, X360_DEFAULT, PS3_TWINS, PS3_SHUFFLED, PS3_PARTIAL };

/* Each generated arena is made once and shared, read only, by every case that opens it
 * (ar_close leaves it): generating them anew per case was a seventh of the test. */
static struct {
	uint8_t *p;
	size_t n;
} gen_made[PS3_PARTIAL + 1];

static void gen_make(enum which w)
{
	struct buf b;

	buf_init(&b);
	switch (w) {
	case PS3_DEFAULT:
		assert_int_equal(gen_psg_textures(NULL, &b, NULL, NULL), RC_OK);
		break;
	case PS3_SHUFFLED:
		assert_int_equal(
		    gen_psg_textures(&(struct gen_tex_opts){.shuffle_seed = 9}, &b, NULL, NULL),
		    RC_OK);
		break;
	case X360_DEFAULT:
		assert_int_equal(gen_x360_textures(NULL, &b, NULL, NULL), RC_OK);
		break;
	case PS3_TWINS:
		assert_int_equal(gen_x360_ps3_twins(NULL, &b, NULL, NULL), RC_OK);
		break;
	case PS3_PARTIAL: /* every kind, then the tool-made shapes: data short of the layout */
		assert_int_equal(gen_psg_textures(&(struct gen_tex_opts){.short_cube = true,
									 .partial = true,
									 .shuffle_seed = 5},
						  &b, NULL, NULL),
				 RC_OK);
		break;
	}
	gen_made[w].p = buf_steal(&b, &gen_made[w].n);
}

static void gen(enum which w, struct ar *x)
{
	if (!gen_made[w].p)
		gen_make(w);
	assert_int_equal(ar_open(x, gen_made[w].p, gen_made[w].n), RC_OK);
	x->shared = true;
	assert_int_equal(diag_count(&x->d), 0);
}

/*
 * a and b hold the same n bytes; else the test fails saying how many differ and where the
 * first is. cmocka's assert_memory_equal compares byte by byte in its own loop: on the
 * arenas here (megabytes) it was 6 % of the test.
 */
#define same_bytes(a, b, n) same_bytes_at((a), (b), (n), __FILE__, __LINE__)

static void same_bytes_at(const void *a, const void *b, size_t n, const char *file, int line)
{
	const uint8_t *x = a, *y = b;
	size_t at = 0, diff = 0;

	if (!memcmp(x, y, n))
		return;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i] && !diff++)
			at = i;
	print_error("%zu of %zu bytes differ, the first at 0x%zX (0x%02X, not 0x%02X)\n", diff, n,
		    at, x[at], y[at]);
	_fail(file, line);
}

/* The destination of the writes whose arena is only looked at (texmod_testutil.h, tm_dst). */
static struct tm_dst tm_out, tm_out2; /* the second: for a write beside tm_out's */
/* The destination of the writes nothing looks at past opening them (hostile arenas): not
 * poisoned, since no check reads its bytes. */
static struct tm_dst tm_scratch = {.unread = true};

static int tm_out_free(void **st)
{
	(void)st;
	tm_dst_free(&tm_out);
	tm_dst_free(&tm_out2);
	tm_dst_free(&tm_scratch);
	for (size_t w = 0; w < sizeof gen_made / sizeof gen_made[0]; w++) {
		free(gen_made[w].p);
		gen_made[w].p = NULL;
	}
	return 0;
}

/* Open an arena written into a kept destination (ar_close leaves the bytes to it). Under ASan
 * a fresh multi-megabyte arena per write was fresh mapped pages each time: a third of the
 * test's CPU, in the kernel. */
static void open_kept(struct ar *y, uint8_t *p, size_t n)
{
	assert_int_equal(ar_open(y, p, n), RC_OK);
	y->shared = true;
}

/* The texture rows of an arena, in dictionary order. */
static uint32_t textures(const struct ar *x, uint32_t *rows, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < x->a.n_dict && n < max; i++)
		if (arena_row(&x->a, i)->type_id == RW_T_TEXTURE)
			rows[n++] = i;
	return n;
}

/* ---- a texture's own DDS written back: the same arena, byte for byte ---- */

/* What a picture became names the format once: "DDS DXT5 256x256, ...", not "DXT5 DXT5". */
static void what_once(const char *what)
{
	char word[32];

	if (sscanf(what, "DDS %31s", word) != 1)
		fail_msg("what: %s", what);
	if (strstr(what + 4 + strlen(word), word))
		fail_msg("what says %s twice: %s", word, what);
}

static void dds_back_identical(enum which w)
{
	struct ar x;
	uint32_t rows[512], n;
	char why[256];

	gen(w, &x);
	n = textures(&x, rows, 512);
	assert_true(n > 10);
	for (uint32_t i = 0; i < n; i++) {
		size_t dl, ol;
		enum rc r;
		struct texmod_plan p;
		uint8_t *dds = tm_served(&x, rows[i], false, &dl), *out;

		assert_non_null(dds);
		out = tm_apply_into(&x, rows[i], TEXMOD_DDS, dds, dl, &ol, &r, why, sizeof why, &p,
				    &tm_out);
		if (!out)
			fail_msg("texture %u: %s (%s)", rows[i], why, rc_str(r));
		assert_true(p.in_place);
		what_once(p.what);
		assert_int_equal(ol, x.n);
		if (memcmp(out, x.p, x.n) != 0)
			fail_msg("texture %u: the arena changed", rows[i]);
		free(dds);
	}
	ar_close(&x);
}

static void test_dds_back_ps3(void **st)
{
	(void)st;
	dds_back_identical(PS3_DEFAULT);
	dds_back_identical(PS3_SHUFFLED);
}

static void test_dds_back_x360(void **st)
{
	(void)st;
	dds_back_identical(X360_DEFAULT);
}

/*
 * The two builds split the costly sets (tests/README.md, "Keeping the suite fast"): under
 * AddressSanitizer, where an arena costs ~10x, every fourth case; in the plain build the other
 * three in four. Their union is the whole set.
 */
#if PSGFS_ASAN
#define TM_ASAN_SHARE 1
#else
#define TM_ASAN_SHARE 0
#endif
static bool tm_this_build(uint32_t i)
{
	return (i % 4 == 0) == TM_ASAN_SHARE;
}

/* ---- every served .dds and .png saved back: the source, byte for byte ---- */

/*
 * Every texture of every generated arena (PS3: every format, NPOT, pitched, swizzled, cube
 * maps, and the partial shapes: cube maps holding 1 to 5 faces, face 0 with some of its
 * levels; Xbox 360: tiled, packed mip tails, cube maps; the PS3 twins), its .dds and its .png
 * as the mount serves them, written back: the arena that results is the source byte for byte.
 * For a PNG the writer would regenerate the mips and refit DXT blocks; it sees that the picture
 * is the one served and keeps the texels. A volume texture is listed but not converted (no
 * picture to save): only that is skipped.
 */
static void saved_back_one(struct ar *x, uint32_t tex, bool png, unsigned *partial)
{
	struct tex_desc d;
	size_t pl, ol;
	char why[256];
	enum rc r = tex_describe(&x->s, &x->a, tex, &d, NULL);
	struct texmod_plan p;
	uint8_t *pic, *out;

	if (r == RC_UNSUPPORTED && tex_ps3_header(&d) && tex_ps3_header(&d)->dimension == 3)
		return;
	assert_int_equal(r, RC_OK);
	*partial += d.have_faces != d.faces || d.have_mips != d.mips;
	pic = tm_served(x, tex, png, &pl);
	assert_non_null(pic);
	out = tm_apply_into(x, tex, png ? TEXMOD_PNG : TEXMOD_DDS, pic, pl, &ol, &r, why,
			    sizeof why, &p, &tm_out);
	if (!out)
		fail_msg("texture %u (%s %ux%u, %u of %u faces, %u of %u levels): its .%s is "
			 "refused: %s",
			 tex, d.format_name, d.width, d.height, d.have_faces, d.faces, d.have_mips,
			 d.mips, png ? "png" : "dds", why);
	assert_true(p.in_place);
	assert_int_equal(ol, x->n);
	if (memcmp(out, x->p, x->n) != 0) {
		size_t at = 0, diff = 0;

		for (size_t i = 0; i < x->n; i++)
			if (out[i] != x->p[i] && !diff++)
				at = i;
		fail_msg("texture %u (%s %ux%u, %u of %u faces, %u of %u levels): its .%s "
			 "written back changes %zu bytes, the first at 0x%zX (%s)",
			 tex, d.format_name, d.width, d.height, d.have_faces, d.faces, d.have_mips,
			 d.mips, png ? "png" : "dds", diff, at, p.what);
	}
	free(pic);
}

/* A partial cube map whose cubemap byte and storeType disagree is read as a cube map (either
 * says so); its pictures saved back leave both as they were. */
static void disagreeing_cubes(void)
{
	struct ar x;
	uint32_t rows[512], n, done = 0;
	unsigned partial = 0;

	gen(PS3_PARTIAL, &x);
	n = textures(&x, rows, 512);
	for (uint32_t i = 0; i < n; i++) {
		struct tex_desc d;
		size_t at = arena_row(&x.a, rows[i])->start;

		if (tex_describe(&x.s, &x.a, rows[i], &d, NULL) != RC_OK || d.faces != 6 ||
		    d.have_faces == 6)
			continue;
		for (int v = 0; v < 2; v++) {
			uint8_t *c = malloc(x.n);
			struct ar y;

			memcpy(c, x.p, x.n);
			if (v)
				c[at + 3] = 0; /* cubemap 0, storeType 0x10002 */
			else
				c[at + 29] = 0; /* cubemap 1, storeType 2 */
			assert_int_equal(ar_open(&y, c, x.n), RC_OK);
			saved_back_one(&y, rows[i], false, &partial);
			saved_back_one(&y, rows[i], true, &partial);
			ar_close(&y);
			done++;
		}
	}
	assert_true(done >= 12);
	ar_close(&x);
}

static void test_saved_back(void **st)
{
	enum which ws[] = {PS3_DEFAULT, PS3_SHUFFLED, PS3_PARTIAL, X360_DEFAULT, PS3_TWINS};

	(void)st;
	for (size_t k = 0; k < sizeof ws / sizeof ws[0]; k++) {
		struct ar x;
		uint32_t rows[512], n;
		unsigned partial = 0;

		gen(ws[k], &x);
		n = textures(&x, rows, 512);
		for (uint32_t i = 0; i < n; i++) {
			if (!tm_this_build(i))
				continue;
			saved_back_one(&x, rows[i], false, &partial);
			saved_back_one(&x, rows[i], true, &partial);
		}
		if (ws[k] == PS3_PARTIAL) /* the partial shapes are there, in this build's share */
			assert_true(partial >= (TM_ASAN_SHARE ? 2 : 2 * 4));
		ar_close(&x);
	}
	disagreeing_cubes();
}

/* A DDS of the faces and levels a texture's data holds (a partial cube map keeps its cube
 * flags with the faces it has, as the mount serves it). */
static uint8_t *dds_served_shape(const struct tex_desc *src, const uint8_t *pay, size_t plen,
				 size_t *len)
{
	struct tex_desc d = *src;
	struct buf b;

	buf_init(&b);
	tex_dds_header(&d, &b);
	buf_put(&b, pay, plen);
	return buf_steal(&b, len);
}

static void partial_cube_refused(void);

/*
 * New texels of the served shape into a texture whose data is short of its layout: they go in
 * place, the texture keeps its declared shape (a one-face cube map stays a cube map) and
 * nothing but the texels it holds changes.
 */
static void test_partial_in_place(void **st)
{
	struct ar x;
	uint32_t rows[512], n, done = 0;

	(void)st;
	gen(PS3_PARTIAL, &x);
	n = textures(&x, rows, 512);
	for (uint32_t i = 0; i < n; i++) {
		struct tex_desc d, e;
		struct texmod_shape sh;
		struct texmod_plan p;
		struct texture_image *b;
		size_t plen, dl, ol;
		char why[256];
		enum rc r;
		struct ar y;
		uint8_t *pay, *dds, *out;

		if (tex_describe(&x.s, &x.a, rows[i], &d, NULL) != RC_OK ||
		    (d.have_faces == d.faces && d.have_mips == d.mips))
			continue;
		sh = (struct texmod_shape){d.kind, d.width, d.height, d.have_mips, d.have_faces};
		pay = tm_payload(&sh, 300 + i, d.alpha, &plen);
		dds = dds_served_shape(&d, pay, plen, &dl);
		out = tm_apply_into(&x, rows[i], TEXMOD_DDS, dds, dl, &ol, &r, why, sizeof why, &p,
				    &tm_out);
		if (!out)
			fail_msg("texture %u: %s", rows[i], why);
		assert_true(p.in_place);
		assert_int_equal(ol, x.n);
		same_bytes(out, x.p, (size_t)p.texels);
		same_bytes(out + p.texels + p.texel_bytes, x.p + p.texels + p.texel_bytes,
			   x.n - (size_t)(p.texels + p.texel_bytes));
		open_kept(&y, out, ol);
		assert_int_equal(tex_describe(&y.s, &y.a, rows[i], &e, NULL), RC_OK);
		assert_int_equal(e.faces, d.faces);
		assert_int_equal(e.have_faces, d.have_faces);
		assert_int_equal(e.have_mips, d.have_mips);
		assert_int_equal(texture_load(&y.s, &y.a, rows[i], &b, NULL), RC_OK);
		if (!tex_ps3_header(&d) || tex_ps3_header(&d)->base_format !=
					       GCM_TEX_D8R8G8B8) /* its alpha is not stored */
			same_bytes(b->data, pay, plen);
		texture_image_free(b);
		ar_close(&y);
		free(pay);
		free(dds);
		done++;
	}
	assert_true(done >= 8);
	ar_close(&x);
	partial_cube_refused();
}

/* Cube faces a texture cannot take: some of a whole cube map's, or not its first ones. */
static void partial_cube_refused(void)
{
	struct ar x;
	uint32_t rows[64];
	struct tex_desc d;
	size_t dl, ol;
	char why[256];
	enum rc r;
	uint8_t *dds, *out;

	gen(PS3_DEFAULT, &x);
	textures(&x, rows, 64);
	assert_int_equal(tex_describe(&x.s, &x.a, rows[5], &d, NULL), RC_OK); /* DXT1 cube */
	assert_int_equal(d.faces, 6);
	dds = tm_served(&x, rows[5], false, &dl);
	dds[113] = 0xFA; /* caps2 0xFA00: -X .. -Z, no +X */
	out = tm_apply(&x, rows[5], TEXMOD_DDS, dds, dl, &ol, &r, why, sizeof why, NULL);
	assert_null(out);
	assert_non_null(strstr(why, "first ones in order"));
	dds[113] = 0x3E; /* 0x3E00: +X -X +Y -Y, the first four, of a texture of six */
	out = tm_apply(&x, rows[5], TEXMOD_DDS, dds, dl, &ol, &r, why, sizeof why, NULL);
	assert_null(out);
	assert_int_equal(r, RC_UNSUPPORTED);
	assert_non_null(strstr(why, "must hold all six faces (this DDS holds 4"));
	free(dds);
	ar_close(&x);
}

/* ---- PNG back: level 0 exact for uncompressed kinds, close for blocks ---- */

/* The served picture with its last pixel's red changed by one, as a PNG: not the picture
 * served, so the texture is encoded from it. */
static uint8_t *png_touched(struct ar *x, uint32_t tex, size_t *len)
{
	struct tex_desc d;
	uint32_t w, ch;
	uint8_t *px, *rgba, *png;
	size_t n;

	assert_int_equal(tex_describe(&x->s, &x->a, tex, &d, NULL), RC_OK);
	w = tex_picture_width(&d);
	ch = d.alpha ? 4 : 3;
	n = (size_t)w * d.height;
	px = malloc(n * ch);
	rgba = malloc(n * 4);
	assert_int_equal(tex_picture_rows(&x->s, &d, 0, d.height, px), RC_OK);
	for (size_t i = 0; i < n; i++) {
		memcpy(rgba + 4 * i, px + ch * i, ch);
		if (ch == 3)
			rgba[4 * i + 3] = 255;
	}
	rgba[4 * (n - 1)] ^= 1;
	png = tm_png_rgba(rgba, w, d.height, len);
	free(px);
	free(rgba);
	return png;
}

/* Canonical payload of a texture as texture_load gives it. */
static struct texture_image *load(struct ar *x, uint32_t tex)
{
	struct texture_image *img = NULL;

	assert_int_equal(texture_load(&x->s, &x->a, tex, &img, NULL), RC_OK);
	return img;
}

static void level_rgba(const struct texture_image *img, uint32_t face, uint32_t level,
		       uint8_t *rgba)
{
	size_t off, len;
	uint32_t w, h;

	assert_true(texture_level(img, face, level, &off, &len, &w, &h));
	if (tex_kind_compressed(img->d.kind))
		dxt_decode_image(img->d.kind, img->data + off, w, h, rgba);
	else
		tex_canon_rgba(img->d.kind, img->data + off, w, h, rgba);
}

static void png_back_one(struct ar *x, uint32_t tex, double *worst)
{
	struct texture_image *a = load(x, tex), *b;
	size_t pl, ol, off, len, off2, len2;
	char why[256];
	enum rc r;
	struct ar y;
	uint8_t *png = png_touched(x, tex, &pl), *out;

	out = tm_apply_into(x, tex, TEXMOD_PNG, png, pl, &ol, &r, why, sizeof why, NULL, &tm_out);
	if (!out)
		fail_msg("texture %u: %s", tex, why);
	assert_int_equal(ol, x->n);
	open_kept(&y, out, ol);
	b = load(&y, tex);
	assert_int_equal(a->size, b->size);
	for (uint32_t f = 0; f < a->d.have_faces; f++) {
		assert_true(texture_level(a, f, 0, &off, &len, NULL, NULL));
		assert_true(texture_level(b, f, 0, &off2, &len2, NULL, NULL));
		if (!tex_kind_compressed(a->d.kind)) {
			/* all but the touched pixel: the last of the last face */
			size_t skip = f + 1 == a->d.have_faces ? tex_kind_bpp(a->d.kind) : 0;

			same_bytes(a->data + off, b->data + off2, len - skip);
		} else {
			size_t px = (size_t)a->d.width * a->d.height;
			uint8_t *ra = malloc((px + 64) * 4), *rb = malloc((px + 64) * 4);
			double q;

			/* rows before the touched one keep their blocks (16 block rows at most
			 * are encoded together) */
			if (a->d.height > 64)
				same_bytes(a->data + off, b->data + off2,
					   (size_t)tex_row_bytes(&a->d, 0));
			level_rgba(a, f, 0, ra);
			level_rgba(b, f, 0, rb);
			q = tm_psnr(ra, rb, px, 4);
			*worst = q < *worst ? q : *worst;
			free(ra);
			free(rb);
		}
	}
	/* in place: nothing but the texels moved */
	texture_image_free(a);
	texture_image_free(b);
	ar_close(&y);
	free(png);
}

static void png_back(enum which w)
{
	struct ar x;
	uint32_t rows[512], n;
	double worst = 99;

	gen(w, &x);
	n = textures(&x, rows, 512);
	for (uint32_t i = 0; i < n; i++)
		png_back_one(&x, rows[i], &worst);
	/* re-encoding decoded DXT blocks: squish finds (nearly) the same blocks again */
	print_message("worst PSNR of a block texture's PNG written back: %.1f dB\n", worst);
	assert_true(worst > 40.0);
	ar_close(&x);
}

static void test_png_back_ps3(void **st)
{
	(void)st;
	png_back(PS3_DEFAULT);
}

static void test_png_back_x360(void **st)
{
	(void)st;
	png_back(X360_DEFAULT);
}

/* PNG mips are the box filter of level 0 (checked where the kind is exact). */
static void test_png_mips(void **st)
{
	struct ar x, y;
	uint32_t rows[64], n, checked = 0;

	(void)st;
	gen(PS3_DEFAULT, &x);
	n = textures(&x, rows, 64);
	for (uint32_t i = 0; i < n; i++) {
		struct texture_image *a = load(&x, rows[i]), *b;
		size_t pl, ol;
		char why[256];
		enum rc r;
		uint8_t *png, *out, *l0, *l1, *want;
		uint32_t w = a->d.width, h = a->d.height, w1, h1;

		if (tex_kind_compressed(a->d.kind) || a->d.have_mips < 2 ||
		    a->d.kind == TEXK_A1R5G5B5) { /* 1-bit alpha: the mean is thresholded */
			texture_image_free(a);
			continue;
		}
		png = png_touched(&x, rows[i], &pl);
		out = tm_apply_into(&x, rows[i], TEXMOD_PNG, png, pl, &ol, &r, why, sizeof why,
				    NULL, &tm_out);
		assert_non_null(out);
		open_kept(&y, out, ol);
		b = load(&y, rows[i]);
		w1 = tex_dim(w, 1), h1 = tex_dim(h, 1);
		l0 = malloc((size_t)w * h * 4), l1 = malloc((size_t)w1 * h1 * 4);
		want = malloc((size_t)w1 * h1 * 4);
		level_rgba(b, 0, 0, l0);
		level_rgba(b, 0, 1, l1);
		for (uint32_t yy = 0; yy < h1; yy++) /* 2x2 means (sizes here are even or 1) */
			for (uint32_t xx = 0; xx < w1; xx++)
				for (int c = 0; c < 4; c++) {
					uint32_t x0 = w > 1 ? 2 * xx : 0,
						 x1 = w > 1 ? 2 * xx + 1 : 0;
					uint32_t y0 = h > 1 ? 2 * yy : 0,
						 y1 = h > 1 ? 2 * yy + 1 : 0;
					uint32_t s =
					    l0[4 * (y0 * w + x0) + c] + l0[4 * (y0 * w + x1) + c] +
					    l0[4 * (y1 * w + x0) + c] + l0[4 * (y1 * w + x1) + c];

					want[4 * (yy * w1 + xx) + c] = (uint8_t)((s + 2) / 4);
				}
		if (w % 2 == 0 && h % 2 == 0) {
			/* quantised to the kind: compare after a round through it */
			uint8_t *q = malloc((size_t)w1 * h1 * 4), *cu = malloc((size_t)w1 * h1 * 4);

			tex_encode_units(b->d.kind, want, w1 * h1, 1, cu);
			tex_canon_rgba(b->d.kind, cu, w1 * h1, 1, q);
			same_bytes(q, l1, (size_t)w1 * h1 * 4);
			checked++;
			free(q);
			free(cu);
		}
		free(l0);
		free(l1);
		free(want);
		free(png);
		texture_image_free(a);
		texture_image_free(b);
		ar_close(&y);
	}
	assert_true(checked >= 5);
	ar_close(&x);
}

/* ---- new pixels, same shape: the texels change, nothing else ---- */

/* Formats that drop part of a canonical texel (no red, 6-5-5 bits, no alpha bit). */
static bool lossy_store(const struct ar *x, const struct texture_image *img)
{
	const struct ps3_texture *t = tex_ps3_header(&img->d);
	uint8_t b = t ? t->base_format : 0;

	return x->a.h.plat == RW_PS3 &&
	       (b == GCM_TEX_G8B8 || b == GCM_TEX_R6G5B5 || b == GCM_TEX_D1R5G5B5);
}

static void new_pixels_one(struct ar *x, uint32_t tex, uint32_t seed)
{
	struct texture_image *a = load(x, tex), *b, *c;
	const struct texmod_shape sh = {a->d.kind, a->d.width, a->d.height, a->d.have_mips,
					a->d.have_faces};
	size_t plen, dl, ol, ol2;
	struct texmod_plan p;
	char why[256];
	enum rc r;
	struct ar y;
	uint8_t *pay = tm_payload(&sh, seed, a->d.alpha, &plen), *dds = tm_dds(&sh, pay, plen, &dl);
	uint8_t *out = tm_apply_into(x, tex, TEXMOD_DDS, dds, dl, &ol, &r, why, sizeof why, &p,
				     &tm_out),
		*out2;

	if (!out)
		fail_msg("texture %u: %s", tex, why);
	assert_true(p.in_place);
	assert_int_equal(ol, x->n);
	/* outside the texels, every byte as it was */
	same_bytes(out, x->p, (size_t)p.texels);
	same_bytes(out + p.texels + p.texel_bytes, x->p + p.texels + p.texel_bytes,
		   x->n - (size_t)(p.texels + p.texel_bytes));
	open_kept(&y, out, ol);
	b = load(&y, tex);
	assert_int_equal(b->size, plen);
	if (!lossy_store(x, a)) {
		same_bytes(b->data, pay, plen);
	} else { /* what the format holds, stored again, is stored as it is */
		free(dds);
		dds = tm_dds(&sh, b->data, b->size, &dl);
		out2 = tm_apply_into(&y, tex, TEXMOD_DDS, dds, dl, &ol2, &r, why, sizeof why, NULL,
				     &tm_out2);
		assert_non_null(out2);
		same_bytes(out2, out, ol);
	}
	c = load(x, tex);
	assert_memory_not_equal(c->data, b->data, plen < 64 ? plen : 64);
	texture_image_free(a);
	texture_image_free(b);
	texture_image_free(c);
	ar_close(&y);
	free(pay);
	free(dds);
}

static void test_new_pixels(void **st)
{
	enum which ws[] = {PS3_DEFAULT, X360_DEFAULT};

	(void)st;
	for (size_t k = 0; k < 2; k++) {
		struct ar x;
		uint32_t rows[512], n;

		gen(ws[k], &x);
		n = textures(&x, rows, 512);
		for (uint32_t i = 0, big = 0; i < n; i++) {
			struct tex_desc d;

			/* one texture of 1024x512 per arena is enough (encoding them is slow) */
			assert_int_equal(tex_describe(&x.s, &x.a, rows[i], &d, NULL), RC_OK);
			if (d.width * d.height > 256 * 256 && big++)
				continue;
			new_pixels_one(&x, rows[i], 1000 + i);
		}
		ar_close(&x);
	}
}

/* ---- new shapes: laid out again ---- */

/* The arena after writing `sh` into tex reads back as written, every other texture unchanged,
 * and its layout is what psgfs and the structure rules expect. */
static void reshape(struct ar *x, uint32_t tex, const struct texmod_shape *sh, uint32_t seed)
{
	size_t plen, dl, ol;
	struct texmod_plan p;
	char why[256];
	enum rc r;
	struct ar y;
	uint8_t *pay = tm_payload(sh, seed, true, &plen), *dds = tm_dds(sh, pay, plen, &dl);
	uint8_t *out =
	    tm_apply_into(x, tex, TEXMOD_DDS, dds, dl, &ol, &r, why, sizeof why, &p, &tm_out);
	uint64_t sum = 0;

	if (!out)
		fail_msg("texture %u into %ux%u: %s", tex, sh->width, sh->height, why);
	open_kept(&y, out, ol);
	if (diag_count(&y.d))
		fail_msg("texture %u: %s", tex, y.d.msg[0]);
	for (unsigned k = 0; k < y.a.h.n_rd; k++)
		sum += y.a.h.rd[k].size;
	assert_int_equal(sum, ol);
	assert_int_equal(y.a.n_dict, x->a.n_dict);
	for (uint32_t i = 0; i < x->a.n_dict; i++) {
		struct texture_image *b;
		struct tex_desc td;
		struct diag d;
		uint8_t *o1, *o2;
		size_t l1, l2;

		if (i != tex && i != p.res) { /* every other object: the same bytes */
			assert_int_equal(arena_read_object(&x->s, &x->a, i, &o1, &l1), RC_OK);
			assert_int_equal(arena_read_object(&y.s, &y.a, i, &o2, &l2), RC_OK);
			assert_int_equal(l1, l2);
			same_bytes(o1, o2, l1);
			free(o1);
			free(o2);
		}
		if (arena_row(&x->a, i)->type_id != RW_T_TEXTURE)
			continue;
		diag_init(&d);
		assert_int_equal(tex_describe(&y.s, &y.a, i, &td, &d), RC_OK);
		if (diag_count(&d))
			fail_msg("texture %u after %u changed: %s", i, tex, d.msg[0]);
		diag_free(&d);
		if (i != tex)
			continue;
		b = load(&y, i);
		assert_int_equal(b->d.kind, sh->kind);
		assert_int_equal(b->d.width, sh->width);
		assert_int_equal(b->d.height, sh->height);
		assert_int_equal(b->d.have_mips, sh->mips);
		assert_int_equal(b->d.have_faces, sh->faces);
		assert_int_equal(b->size, plen);
		same_bytes(b->data, pay, plen);
		texture_image_free(b);
	}
	ar_close(&y);
	free(pay);
	free(dds);
}

static void test_reshape_ps3(void **st)
{
	static const struct texmod_shape shapes[] = {
	    {TEXK_DXT5, 128, 64, 8, 1},	  {TEXK_DXT1, 8, 8, 1, 1},     {TEXK_BGRA8, 32, 32, 6, 1},
	    {TEXK_BGRX8, 20, 12, 2, 1},	  {TEXK_R5G6B5, 16, 16, 5, 1}, {TEXK_L8, 7, 9, 1, 1},
	    {TEXK_A4R4G4B4, 64, 8, 7, 1}, {TEXK_DXT3, 16, 16, 5, 6},   {TEXK_A1R5G5B5, 4, 4, 3, 6},
	};
	struct ar x;
	uint32_t rows[64], n;

	(void)st;
	gen(PS3_DEFAULT, &x);
	n = textures(&x, rows, 64);
	for (uint32_t i = 0; i < n; i++)
		reshape(&x, rows[i], &shapes[i % (sizeof shapes / sizeof shapes[0])], i);
	ar_close(&x);
	gen(PS3_SHUFFLED, &x);
	n = textures(&x, rows, 64);
	for (uint32_t i = 0; i < n; i += 3)
		reshape(&x, rows[i], &shapes[(i + 1) % (sizeof shapes / sizeof shapes[0])], i);
	ar_close(&x);
}

static void test_reshape_x360(void **st)
{
	static const struct texmod_shape shapes[] = {
	    {TEXK_DXT5, 128, 64, 8, 1}, {TEXK_DXT1, 8, 8, 4, 1},     {TEXK_BGRA8, 32, 32, 6, 1},
	    {TEXK_BGRX8, 20, 12, 2, 1}, {TEXK_R5G6B5, 16, 16, 5, 1}, {TEXK_L8, 7, 9, 1, 1},
	    {TEXK_ATI2, 64, 32, 7, 1},	{TEXK_DXT3, 16, 16, 5, 6},   {TEXK_DXT1, 300, 20, 3, 1},
	};
	struct ar x;
	uint32_t rows[512], n;

	(void)st;
	gen(X360_DEFAULT, &x);
	n = textures(&x, rows, 512);
	for (uint32_t i = 0; i < n; i += 5)
		reshape(&x, rows[i], &shapes[i % (sizeof shapes / sizeof shapes[0])], i);
	ar_close(&x);
}

/* Every mip count of a texture, on both platforms, 2D and cube. */
static void test_every_mip_count(void **st)
{
	static const enum tex_kind ks[] = {TEXK_DXT5, TEXK_DXT1, TEXK_BGRA8, TEXK_L8};
	enum which ws[] = {PS3_DEFAULT, X360_DEFAULT};

	(void)st;
	for (size_t k = 0; k < 2; k++) {
		struct ar x;
		uint32_t rows[512];

		gen(ws[k], &x);
		textures(&x, rows, 512);
		for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++)
			for (uint32_t m = 1; m <= 7; m++) {
				struct texmod_shape sh = {ks[j], 64, 40, m, 1 + 5 * (m % 3 == 0)};

				reshape(&x, rows[(j + m) % 8], &sh, m);
			}
		ar_close(&x);
	}
}

/* ---- twins: one DDS into the Xbox 360 texture and its PS3 twin reads back the same ---- */

static void test_twins(void **st)
{
	struct gen_x360_truth t;
	struct buf b;
	struct ar x, p;
	size_t n, done = 0;
	uint8_t *raw;

	(void)st;
	buf_init(&b);
	assert_int_equal(gen_x360_textures(NULL, &b, NULL, &t), RC_OK);
	raw = buf_steal(&b, &n);
	assert_int_equal(ar_open(&x, raw, n), RC_OK);
	gen(PS3_TWINS, &p);
	for (size_t i = 0; i < t.n; i += 3) {
		const struct gen_x360_truth_item *it = &t.items[i];
		uint32_t prow[512], pn = textures(&p, prow, 512);
		struct texmod_shape sh = {TEXK_DXT5, it->width > 128 ? 96 : it->width * 2,
					  it->height > 128 ? 40 : it->height, 1, it->cube ? 6 : 1};
		size_t plen, dl, l1, l2;
		char why[256];
		enum rc r;
		uint8_t *pay, *dds, *o1, *o2;
		struct ar y1, y2;
		struct texture_image *a, *c;

		if (!it->twin)
			continue;
		assert_true(it->twin_index < pn);
		sh.mips = tex_chain_levels(sh.width, sh.height) - (uint32_t)(i % 3);
		pay = tm_payload(&sh, (uint32_t)i, true, &plen);
		dds = tm_dds(&sh, pay, plen, &dl);
		o1 = tm_apply_into(&x, it->tex_index, TEXMOD_DDS, dds, dl, &l1, &r, why, sizeof why,
				   NULL, &tm_out);
		o2 = tm_apply_into(&p, prow[it->twin_index], TEXMOD_DDS, dds, dl, &l2, &r, why,
				   sizeof why, NULL, &tm_out2);
		assert_non_null(o1);
		assert_non_null(o2);
		open_kept(&y1, o1, l1);
		open_kept(&y2, o2, l2);
		a = load(&y1, it->tex_index);
		c = load(&y2, prow[it->twin_index]);
		assert_int_equal(a->size, c->size);
		same_bytes(a->data, c->data, a->size);
		same_bytes(a->data, pay, plen);
		texture_image_free(a);
		texture_image_free(c);
		ar_close(&y1);
		ar_close(&y2);
		free(pay);
		free(dds);
		done++;
	}
	assert_true(done > 30);
	gen_x360_truth_free(&t);
	ar_close(&x);
	ar_close(&p);
}

/* ---- the community's merge script: same size, the DDS's texels at the resource's place ---- */

static void test_merge_script(void **st)
{
	static const struct gen_tex_spec one[] = {{GCM_TEX_DXT5, 256, 256, 0, false, 0, false, 0},
						  {GCM_TEX_DXT1, 512, 256, 0, false, 0, false, 0}};

	(void)st;
	for (size_t k = 0; k < 2; k++) {
		struct buf b;
		struct ar x;
		size_t n, plen, dl, ol;
		char why[256];
		enum rc r;
		uint8_t *raw, *pay, *dds, *out;
		struct texmod_shape sh = {k ? TEXK_DXT1 : TEXK_DXT5, one[k].width, one[k].height,
					  tex_chain_levels(one[k].width, one[k].height), 1};

		buf_init(&b);
		assert_int_equal(
		    gen_psg_textures(&(struct gen_tex_opts){.specs = &one[k], .n_specs = 1}, &b,
				     NULL, NULL),
		    RC_OK);
		raw = buf_steal(&b, &n);
		assert_int_equal(ar_open(&x, raw, n), RC_OK);
		pay = tm_payload(&sh, 77, true, &plen);
		dds = tm_dds(&sh, pay, plen, &dl);
		out = tm_apply(&x, 1, TEXMOD_DDS, dds, dl, &ol, &r, why, sizeof why, NULL);
		assert_non_null(out);
		/* the script: data[PSG_OFFSET:] = dds[128:], sizes asserted equal */
		assert_int_equal(ol, n);
		assert_int_equal(n - arena_row(&x.a, 0)->start, dl - 128);
		same_bytes(out, raw, (size_t)arena_row(&x.a, 0)->start);
		same_bytes(out + arena_row(&x.a, 0)->start, dds + 128, dl - 128);
		free(out);
		free(pay);
		free(dds);
		ar_close(&x);
	}
}

/* ---- formats the platform lacks: converted into the texture's own ---- */

/* The converted texture holds exactly the DDS's pixels (want_rgba) encoded in its own kind. */
static void convert_case(enum which w, const uint8_t *dds, size_t dl, const uint8_t *want_rgba)
{
	struct ar x, y;
	uint32_t rows[512];
	size_t ol;
	char why[256];
	enum rc r;
	struct texmod_plan p;
	struct texture_image *a, *b;
	uint8_t *out, want[16 * 16 * 4];

	gen(w, &x);
	textures(&x, rows, 512);
	a = load(&x, rows[3]);
	out = tm_apply(&x, rows[3], TEXMOD_DDS, dds, dl, &ol, &r, why, sizeof why, &p);
	if (!out)
		fail_msg("%s", why);
	assert_false(p.dds_direct);
	assert_non_null(strstr(p.what, "converted"));
	assert_int_equal(ar_open(&y, out, ol), RC_OK);
	b = load(&y, rows[3]);
	assert_int_equal(b->d.kind, a->d.kind);
	assert_int_equal(b->d.width, 16);
	assert_int_equal(b->d.have_mips, 1);
	if (tex_kind_compressed(b->d.kind)) {
		for (int y0 = 0; y0 < 16; y0 += 4)
			tex_encode_units(b->d.kind, want_rgba + y0 * 16 * 4, 16, 4,
					 want + y0 / 4 * 4 * tex_kind_bpp(b->d.kind));
	} else {
		tex_encode_units(b->d.kind, want_rgba, 16 * 16, 1, want);
	}
	same_bytes(b->data, want, b->size);
	texture_image_free(a);
	texture_image_free(b);
	ar_close(&x);
	ar_close(&y);
}

static void test_convert(void **st)
{
	uint8_t src[16 * 16 * 4], f[128 + 16 * 16 * 4];
	struct texmod_shape sh = {TEXK_ATI2, 16, 16, 1, 1};
	size_t plen, dl;
	uint8_t *pay, *dds;

	(void)st;
	tm_pattern(4, 0, 0, 16, 16, true, src);
	/* A8B8G8R8 (bytes R G B A): no platform stores it */
	dds = tm_dds(&sh, src, 0, &dl);
	memcpy(f, dds, 128);
	free(dds);
	f[80] = 0x41, f[84] = f[85] = f[86] = f[87] = 0, f[88] = 32;
	memcpy(f + 92, (const uint32_t[]){0xFF, 0xFF00, 0xFF0000, 0xFF000000}, 16);
	memcpy(f + 128, src, sizeof src);
	convert_case(PS3_DEFAULT, f, sizeof f, src);
	convert_case(X360_DEFAULT, f, sizeof f, src);
	/* ATI2 has no PS3 format: red and green (blue 0, alpha 255) go into the texture's */
	pay = tm_payload(&sh, 4, false, &plen);
	dds = tm_dds(&sh, pay, plen, &dl);
	dxt_decode_image(TEXK_ATI2, pay, 16, 16, src);
	convert_case(PS3_DEFAULT, dds, dl, src);
	free(pay);
	free(dds);
	/* A4R4G4B4 has no Xbox 360 format here */
	sh.kind = TEXK_A4R4G4B4;
	pay = tm_payload(&sh, 4, true, &plen);
	dds = tm_dds(&sh, pay, plen, &dl);
	tex_canon_rgba(TEXK_A4R4G4B4, pay, 16 * 16, 1, src);
	convert_case(X360_DEFAULT, dds, dl, src);
	free(pay);
	free(dds);
}

/* ---- refusals ---- */

static void refused(struct ar *x, uint32_t tex, enum texmod_input in, const uint8_t *pic, size_t n,
		    enum rc want, const char *says)
{
	size_t ol;
	char why[256] = "";
	enum rc r;
	uint8_t *out = tm_apply(x, tex, in, pic, n, &ol, &r, why, sizeof why, NULL);

	assert_null(out);
	assert_int_equal(r, want);
	if (!strstr(why, says))
		fail_msg("'%s' does not say '%s'", why, says);
}

static void test_refusals(void **st)
{
	struct ar x;
	uint32_t rows[64];
	uint8_t src[64 * 64 * 4], *png, *dds, *pay, garbage[300];
	size_t pl, dl, plen;
	const struct texmod_shape sh = {TEXK_DXT1, 64, 64, 1, 1};
	const struct texmod_shape big = {TEXK_DXT1, 8192, 4, 1, 1};
	bool cube = false;

	(void)st;
	gen(PS3_DEFAULT, &x);
	textures(&x, rows, 64);
	/* a PNG of another size (texture 0 is DXT1 64x64) */
	tm_pattern(1, 0, 0, 40, 16, true, src);
	png = tm_png_rgba(src, 40, 16, &pl);
	refused(&x, rows[0], TEXMOD_PNG, png, pl, RC_UNSUPPORTED, "save it at 64x64");
	free(png);
	/* one face for a cube map: the refusal says what differs (faces), not "WxH vs WxH" */
	for (uint32_t i = 0, n = textures(&x, rows, 64); i < n && !cube; i++) {
		struct texture_image *a = load(&x, rows[i]);
		uint32_t fw = a->d.width, fh = a->d.height, faces = a->d.faces;
		uint8_t *face = calloc((size_t)fw * fh, 4);
		char want[128];

		texture_image_free(a);
		if (faces != 6) {
			free(face);
			continue;
		}
		png = tm_png_rgba(face, fw, fh, &pl);
		snprintf(want, sizeof want,
			 "the picture is %ux%u, the texture a cube map of six %ux%u faces: save "
			 "them side by side at %ux%u",
			 fw, fh, fw, fh, 6 * fw, fh);
		refused(&x, rows[i], TEXMOD_PNG, png, pl, RC_UNSUPPORTED, want);
		free(png);
		free(face);
		cube = true;
	}
	assert_true(cube);
	textures(&x, rows, 64);
	/* a damaged PNG: its header is fine, its pixels are not */
	tm_pattern(1, 0, 0, 64, 64, true, src);
	png = tm_png_rgba(src, 64, 64, &pl);
	png[pl / 2] ^= 0x10;
	refused(&x, rows[0], TEXMOD_PNG, png, pl, RC_CORRUPT, "PNG");
	free(png);
	/* not a texture; garbage; a truncated DDS; a DDS past the size limit */
	pay = tm_payload(&sh, 1, false, &plen);
	dds = tm_dds(&sh, pay, plen, &dl);
	refused(&x, rows[0] + 1, TEXMOD_DDS, dds, dl, RC_INVAL, "not a Texture");
	memset(garbage, 0x5A, sizeof garbage);
	refused(&x, rows[0], TEXMOD_DDS, garbage, sizeof garbage, RC_FORMAT, "not a DDS");
	refused(&x, rows[0], TEXMOD_PNG, garbage, sizeof garbage, RC_FORMAT, "not a PNG");
	refused(&x, rows[0], TEXMOD_DDS, dds, dl - 1, RC_TRUNCATED, "truncated");
	free(dds);
	dds = tm_dds(&big, pay, 0, &dl);
	refused(&x, rows[0], TEXMOD_DDS, dds, dl, RC_UNSUPPORTED, "larger than 4096x4096");
	free(dds);
	/* a base resource two textures share cannot change size; in place it can change */
	{
		uint8_t *m = malloc(x.n), *out;
		struct ar y;
		size_t ol;
		char why[256];
		enum rc r;
		const uint32_t tex1 = rows[1], res0 = rows[0] - 1;

		memcpy(m, x.p, x.n);
		m[arena_row(&x.a, tex1)->start + 0x18 + 3] =
		    (uint8_t)res0; /* m_buffer of texture 1 */
		assert_int_equal(ar_open(&y, m, x.n), RC_OK);
		dds = tm_dds(&sh, pay, plen, &dl);
		dds[12] = 32; /* height 32: another size */
		refused(&y, rows[0], TEXMOD_DDS, dds, dl - plen / 2, RC_UNSUPPORTED,
			"holds texture");
		free(dds);
		dds = tm_served(&y, rows[0], false, &dl);
		out = tm_apply(&y, rows[0], TEXMOD_DDS, dds, dl, &ol, &r, why, sizeof why, NULL);
		assert_non_null(out);
		free(out);
		free(dds);
		ar_close(&y);
	}
	free(pay);
	ar_close(&x);
}

/* ---- hostile arenas: whatever a stranger's file says, nothing is read or written outside ---- */

/* dds: the picture written over every texture picked (the same for every mutant). */
static void hostile_one(struct ar *y, uint32_t *st, const uint8_t *dds, size_t dl)
{
	size_t ol;
	char why[256];
	enum rc r;
	uint8_t *out;

	for (uint32_t i = 0; i < y->a.n_dict && i < 400; i++) {
		struct src_mem pm;
		struct src ps;
		struct texmod_plan p;

		if (arena_row(&y->a, i)->type_id != RW_T_TEXTURE || tm_rnd(st) % 4)
			continue;
		src_init_mem(&ps, &pm, dds, dl);
		if (texmod_plan(&y->s, &y->a, i, TEXMOD_DDS, &ps, &p, why, sizeof why) == RC_OK) {
			if (p.out_size < (64u << 20)) {
				out = tm_dst_room(&tm_scratch, (size_t)p.out_size);
				if (texmod_write(&y->s, &y->a, &ps, &p, out, why, sizeof why) ==
				    RC_OK) {
					struct ar z;

					ar_open(&z, out, (size_t)p.out_size);
					arena_free(&z.a); /* the bytes are tm_scratch's */
					diag_free(&z.d);
				}
			}
			texmod_plan_free(&p);
		}
		out = tm_served(y, i, false, &ol);
		if (out) {
			tm_apply_into(y, i, TEXMOD_DDS, out, ol, &ol, &r, why, sizeof why, NULL,
				      &tm_scratch);
			free(out);
		}
	}
}

static void test_hostile_arenas(void **st)
{
	enum which ws[] = {PS3_DEFAULT, X360_DEFAULT};
	uint32_t s = 4242;
	const struct texmod_shape sh = {TEXK_DXT5, 32, 16, 2, 1};
	size_t plen, dl;
	uint8_t *pay = tm_payload(&sh, 1, true, &plen), *dds = tm_dds(&sh, pay, plen, &dl);

	(void)st;
	for (size_t k = 0; k < 2; k++) {
		struct ar x;
		uint8_t *c;

		gen(ws[k], &x);
		c = malloc(x.n); /* one mutant buffer, each mutant copied over it whole */
		assert_non_null(c);
		for (int m = 0; m < (k ? 40 : 150); m++) {
			struct ar y;
			int flips = 1 + (int)(tm_rnd(&s) % 8);

			memcpy(c, x.p, x.n);
			for (int f = 0; f < flips; f++) {
				/* mostly the main block: header, dictionary, Texture objects */
				size_t at = tm_rnd(&s) % 3 ? tm_rnd(&s) % x.a.h.rd[0].size
							   : tm_rnd(&s) % x.n;

				c[at] = (uint8_t)(tm_rnd(&s) % 5 ? tm_rnd(&s) : c[at] ^ 0x80);
			}
			/* The mutants are the same in both builds; each checks its share. */
			if (!tm_this_build(m))
				continue;
			if (ar_open(&y, c, x.n) == RC_OK) {
				uint32_t hs =
				    s; /* its own draws, so the next mutant does not depend on it */

				hostile_one(&y, &hs, dds, dl);
			}
			arena_free(&y.a);
			diag_free(&y.d);
		}
		free(c);
		ar_close(&x);
	}
	free(pay);
	free(dds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dds_back_ps3),    cmocka_unit_test(test_dds_back_x360),
	    cmocka_unit_test(test_png_back_ps3),    cmocka_unit_test(test_png_back_x360),
	    cmocka_unit_test(test_png_mips),	    cmocka_unit_test(test_new_pixels),
	    cmocka_unit_test(test_reshape_ps3),	    cmocka_unit_test(test_reshape_x360),
	    cmocka_unit_test(test_every_mip_count), cmocka_unit_test(test_twins),
	    cmocka_unit_test(test_merge_script),    cmocka_unit_test(test_convert),
	    cmocka_unit_test(test_refusals),	    cmocka_unit_test(test_hostile_arenas),
	    cmocka_unit_test(test_saved_back),	    cmocka_unit_test(test_partial_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, tm_out_free);
}
