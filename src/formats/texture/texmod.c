/*
 * Pictures written over textures (texmod.h): choosing what the texture becomes, laying the
 * arena out again when its shape changes, and streaming the picture's texels into place.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/pngdec.h"
#include "psgfs/formats/tex_encode.h"
#include "psgfs/formats/tex_platform.h"
#include "psgfs/formats/texmod.h"

#define BATCH_BYTES (256u << 10) /* texel bytes read from a DDS at a time */

/* The arena platform's texture row. */
static const struct tex_platform *tex_row(const struct texmod_plan *p)
{
	return p->pl->tex;
}

static bool shape_eq(const struct texmod_shape *a, const struct texmod_shape *b)
{
	return a->kind == b->kind && a->width == b->width && a->height == b->height &&
	       a->mips == b->mips && a->faces == b->faces;
}

static void shape_text(const struct texmod_shape *s, char *out, size_t n)
{
	char faces[24] = "";

	if (s->faces == 6)
		snprintf(faces, sizeof faces, ", cube map");
	else if (s->faces > 1)
		snprintf(faces, sizeof faces, ", %u cube faces", s->faces);
	snprintf(out, n, "%s %ux%u, %u mip level%s%s", tex_kind_name(s->kind), s->width, s->height,
		 s->mips, s->mips == 1 ? "" : "s", faces);
}

/* ---- the picture's header: what the texture becomes ---- */

static enum rc plan_dds(const struct src *pic, const struct tex_desc *d, struct texmod_plan *p,
			char *why, size_t whylen)
{
	enum rc r = dds_read_header(pic, TEXMOD_MAX_SIDE, &p->dds, why, whylen);

	if (r != RC_OK)
		return r;
	p->to = (struct texmod_shape){p->dds.kind, p->dds.width, p->dds.height, p->dds.mips,
				      p->dds.faces};
	if (p->dds.canonical && tex_row(p)->stores(p->dds.kind)) {
		p->dds_direct = true;
		return RC_OK;
	}
	if (!p->have_from)
		return rc_fail(
		    why, whylen, RC_UNSUPPORTED,
		    "DDS %s has no %s texture format, and the texture's own format cannot be "
		    "read to convert it",
		    p->dds.format, p->pl->name);
	p->to.kind = d->kind;
	return RC_OK;
}

static enum rc plan_png(const struct src *pic, const struct tex_desc *d, struct texmod_plan *p,
			char *why, size_t whylen)
{
	struct pngdec *pr;
	uint32_t w, h;
	enum rc r =
	    pngdec_open(pic, TEXMOD_MAX_SIDE * 6, TEXMOD_MAX_SIDE, &pr, &w, &h, why, whylen);

	if (r != RC_OK)
		return r;
	pngdec_close(pr);
	if (!p->have_from)
		return rc_fail(
		    why, whylen, RC_UNSUPPORTED,
		    "the texture cannot be read, so a PNG has no format to be encoded in; "
		    "write a .dds");
	/* The picture textures/<name>.png shows (the faces the data holds), or every face. */
	p->to = w == tex_picture_width(d) ? p->served : p->from;
	if ((w == tex_picture_width(d) || w == d->width * d->faces) && h == d->height)
		return RC_OK;
	if (d->faces > 1 && d->have_faces == d->faces)
		return rc_fail(
		    why, whylen, RC_UNSUPPORTED,
		    "the picture is %ux%u, the texture a cube map of six %ux%u faces: save "
		    "them side by side at %ux%u (a PNG is not scaled), or write a .dds to "
		    "change the size",
		    w, h, d->width, d->height, tex_picture_width(d), d->height);
	if (d->faces > 1)
		return rc_fail(
		    why, whylen, RC_UNSUPPORTED,
		    "the picture is %ux%u, the texture a cube map holding %u of its six "
		    "%ux%u faces: save them side by side at %ux%u (a PNG is not scaled), or "
		    "write a .dds to change the size",
		    w, h, d->have_faces, d->width, d->height, tex_picture_width(d), d->height);
	return rc_fail(why, whylen, RC_UNSUPPORTED,
		       "the picture is %ux%u, the texture %ux%u: save it at %ux%u (a PNG is "
		       "not scaled), or write a .dds to change the size",
		       w, h, d->width, d->height, tex_picture_width(d), d->height);
}

/* ---- the texture's new object ---- */

/* A new shape: the object and the base resource are laid out again. */
static enum rc plan_relayout(const struct src *as, const struct arena *a, struct texmod_plan *p,
			     char *why, size_t whylen)
{
	enum rc r;

	if (!a->big_endian)
		return rc_fail(why, whylen, RC_UNSUPPORTED, "little-endian arenas are not written");
	if (why && whylen)
		why[0] = 0;
	r = tex_row(p)->relayout(as, a, p, why, whylen);
	if (r != RC_OK)
		return r;
	if (arena_row(a, p->tex)->start + p->obj_len > a->h.rd[0].size)
		return rc_fail(why, whylen, RC_CORRUPT,
			       "the Texture object lies outside the main block");
	r = arena_patch_plan(a, p->res, p->texel_bytes, &p->patch, why, whylen);
	if (r != RC_OK)
		return r;
	p->texels = arena_patch_start(a, &p->patch, p->res);
	return RC_OK;
}

/* The same shape: texels written where they are. */
static enum rc plan_in_place(const struct arena *a, const struct tex_desc *d, struct texmod_plan *p,
			     char *why, size_t whylen)
{
	const struct arena_dict_entry *br;
	enum rc r;

	if (why && whylen)
		why[0] = 0;
	r = tex_row(p)->in_place(a, p, why, whylen);
	if (r != RC_OK)
		return r;
	br = arena_row(a, p->res);
	r = arena_patch_plan(a, p->res, br->size, &p->patch, why, whylen);
	if (r != RC_OK)
		return r;
	p->texels = d->base;
	p->texel_bytes = br->start + br->size - d->base;
	return RC_OK;
}

static void plan_what(struct texmod_plan *p)
{
	char to[96], fr[96], pic[64];

	/* "DDS DXT5 256x256", or "DDS A8R8G8B8 as DXT5 256x256" when converted: each format once */
	if (p->in == TEXMOD_PNG)
		snprintf(pic, sizeof pic, "PNG");
	else if (!strcmp(p->dds.format, tex_kind_name(p->to.kind)))
		snprintf(pic, sizeof pic, "DDS");
	else
		snprintf(pic, sizeof pic, "DDS %s as", p->dds.format);
	shape_text(&p->to, to, sizeof to);
	shape_text(&p->from, fr, sizeof fr);
	if (p->in_place)
		snprintf(p->what, sizeof p->what, "%s %s: texel bytes replaced%s", pic, to,
			 p->in == TEXMOD_PNG && p->to.mips > 1 ? ", mips regenerated" : "");
	else if (p->have_from)
		snprintf(p->what, sizeof p->what, "%s %s%s: laid out again (was %s)", pic, to,
			 p->in == TEXMOD_DDS && !p->dds_direct ? " (converted)" : "", fr);
	else
		snprintf(p->what, sizeof p->what, "%s %s: laid out again", pic, to);
}

enum rc texmod_plan(const struct src *as, const struct arena *a, uint32_t tex, enum texmod_input in,
		    const struct src *pic, struct texmod_plan *p, char *why, size_t whylen)
{
	struct tex_desc d;
	enum rc r;

	memset(p, 0, sizeof *p);
	if (why && whylen)
		why[0] = 0;
	p->tex = tex;
	p->in = in;
	p->threads = 1;
	if (tex >= a->n_dict || arena_row(a, tex)->type_id != RW_T_TEXTURE)
		return rc_fail(why, whylen, RC_INVAL, "row %u is not a Texture", tex);
	if (!arena_row(a, tex)->readable)
		return rc_fail(why, whylen, RC_CORRUPT, "the Texture object lies outside the file");
	p->pl = skate_platform_of(a);
	if (!p->pl || !p->pl->tex->relayout)
		return rc_fail(why, whylen, RC_UNSUPPORTED, "textures of %s arenas are not written",
			       a->h.platform);
	p->have_from = tex_describe(as, a, tex, &d, NULL) == RC_OK;
	if (p->have_from) {
		p->from = (struct texmod_shape){d.kind, d.width, d.height, d.mips, d.faces};
		p->served =
		    (struct texmod_shape){d.kind, d.width, d.height, d.have_mips, d.have_faces};
		p->src = d;
	}
	r = in == TEXMOD_DDS ? plan_dds(pic, &d, p, why, whylen)
			     : plan_png(pic, &d, p, why, whylen);
	if (r != RC_OK)
		return r;
	/*
	 * What the mount serves goes back where it came from: of a texture whose data holds only
	 * some faces or levels (a one-face cube map), those, in place; the texture keeps its
	 * declared shape. Every face and level (a full cube map) lays it out again, whole.
	 */
	p->in_place = p->have_from && shape_eq(&p->to, &p->served);
	if (in == TEXMOD_DDS && p->dds.cube && p->dds.faces < 6 && !p->in_place)
		return rc_fail(
		    why, whylen, RC_UNSUPPORTED,
		    "a cube map must hold all six faces (this DDS holds %u; only a texture "
		    "whose data holds its first %u takes them)",
		    p->dds.faces, p->dds.faces);
	r = p->in_place ? plan_in_place(a, &d, p, why, whylen)
			: plan_relayout(as, a, p, why, whylen);
	if (r != RC_OK) {
		texmod_plan_free(p);
		return r;
	}
	p->out_size = p->patch.total;
	plan_what(p);
	return RC_OK;
}

void texmod_plan_free(struct texmod_plan *p)
{
	arena_patch_free(&p->patch);
}

/* ---- writing the texels ---- */

struct sink;

/* Pixel rows of one (face, level) gathered into a batch of unit rows, encoded (in parallel)
 * and stored. */
struct lvl {
	uint32_t w, h, y; /* pixels; next pixel row */
	uint32_t y0;	  /* first pixel row of the batch */
	uint32_t batch;	  /* pixel rows a batch holds (whole unit rows) */
	uint8_t *rgba;	  /* the batch */
	uint8_t *canon;	  /* its unit rows */
};

#define BATCH_BYTES_MAX (256u << 10) /* pixels of a batch, at most 16 unit rows */

struct sink {
	const struct texmod_plan *p;
	const struct src *as; /* the source arena */
	uint8_t *texels;
	struct lvl *lv; /* faces x mips */
	struct tex_mipgen **mg;
	uint32_t face; /* the face a mip callback belongs to */
	bool same;     /* in place, and the picture so far is the texture as served */
	uint8_t *was;  /* the texture's rows as served, to compare with */
	uint32_t was_y0, was_n;
};

static enum rc put_units(const struct sink *k, uint32_t face, uint32_t level, uint32_t row0,
			 uint32_t n, const uint8_t *canon)
{
	const struct texmod_plan *p = k->p;

	return tex_row(p)->write_rows(&p->dst, face, level, row0, n, canon, k->texels,
				      (size_t)p->texel_bytes);
}

static enum rc sink_init(struct sink *k, const struct texmod_plan *p, const struct src *as,
			 uint8_t *dst)
{
	uint32_t n = p->to.faces * p->to.mips, unit = tex_kind_compressed(p->to.kind) ? 4 : 1;

	memset(k, 0, sizeof *k);
	k->p = p;
	k->as = as;
	k->same = p->in_place;
	k->texels = dst + p->texels;
	k->lv = xcalloc_n(n, sizeof *k->lv);
	if (!k->lv)
		return RC_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct lvl *v = &k->lv[i];
		uint32_t units, bw;

		v->w = tex_dim(p->to.width, i % p->to.mips);
		v->h = tex_dim(p->to.height, i % p->to.mips);
		units = BATCH_BYTES_MAX / ((size_t)v->w * 4 * unit);
		units = units < 1 ? 1 : units > 16 ? 16 : units;
		v->batch = units * unit;
		bw = unit == 4 ? (v->w + 3) / 4 : v->w;
		v->rgba = xcalloc_n((size_t)v->w * v->batch, 4);
		v->canon = xcalloc_n((size_t)bw * units, tex_kind_bpp(p->to.kind));
		if (!v->rgba || !v->canon)
			return RC_NOMEM;
	}
	return RC_OK;
}

static void sink_free(struct sink *k)
{
	for (uint32_t i = 0; k->lv && i < k->p->to.faces * k->p->to.mips; i++) {
		free(k->lv[i].rgba);
		free(k->lv[i].canon);
	}
	for (uint32_t f = 0; k->mg && f < k->p->to.faces; f++)
		tex_mipgen_free(k->mg[f]);
	free(k->mg);
	free(k->lv);
	free(k->was);
}

/*
 * No-op detection: while the picture equals the texture as served, its texel bytes are what the
 * source holds, and the source's are kept at the end (sink_done). The writers are exact for
 * canonical texels, but not for what the canonical form does not show (mips a PNG regenerates,
 * DXT blocks libsquish would fit differently, stored bits a widened format drops). A PNG's level
 * 0 rows up to the first that differs are not encoded at all: the source's texels of those rows
 * are already in place and show exactly those pixels.
 */
static bool dds_rows_same(struct sink *k, uint32_t face, uint32_t level, uint32_t row0, uint32_t n,
			  const uint8_t *units, uint64_t bytes)
{
	if (!k->same)
		return false;
	if (!k->was)
		k->was = malloc(BATCH_BYTES); /* dds_direct's batches are at most that */
	/* in place, the served shape equals the target's, so the rows have one size; checked
	 * anyway, since k->was holds one batch of the DDS's rows */
	k->same = k->was && bytes <= BATCH_BYTES && tex_row_bytes(&k->p->src, level) * n == bytes &&
		  tex_read_rows(k->as, &k->p->src, face, level, row0, n, k->was) == RC_OK &&
		  !memcmp(k->was, units, (size_t)bytes);
	return k->same;
}

/* Pixel row y of the PNG (RGBA, every face side by side) against the served picture's. */
static void png_row_same(struct sink *k, uint32_t y, const uint8_t *rgba)
{
	const struct tex_desc *d = &k->p->src;
	uint32_t w = tex_picture_width(d), ch = d->alpha ? 4 : 3;
	const uint8_t *was;

	if (!k->same)
		return;
	if (!k->was || y >= k->was_y0 + k->was_n) { /* 4 rows at a time: a DXT block row */
		k->was_y0 = y;
		k->was_n = d->height - y < 4 ? d->height - y : 4;
		if (!k->was)
			k->was = xcalloc_n((size_t)w * 4, 4);
		if (!k->was || tex_picture_rows(k->as, d, k->was_y0, k->was_n, k->was) != RC_OK) {
			k->same = false;
			return;
		}
	}
	was = k->was + (size_t)(y - k->was_y0) * w * ch;
	for (uint32_t x = 0; x < w && k->same; x++)
		k->same = !memcmp(was + (size_t)x * ch, rgba + (size_t)x * 4, ch);
}

/* The picture was the texture as served: the source's texel bytes, as they were. */
static enum rc sink_done(const struct sink *k)
{
	if (!k->same)
		return RC_OK;
	return src_read(k->as, k->p->texels, k->texels, (size_t)k->p->texel_bytes);
}

/* Pixel row y of (face, level), in order: a batch goes out once full or at the level's end. */
static enum rc sink_row(struct sink *k, uint32_t face, uint32_t level, const uint8_t *rgba)
{
	struct lvl *v = &k->lv[face * k->p->to.mips + level];
	uint32_t unit = tex_kind_compressed(k->p->to.kind) ? 4 : 1, n;
	enum rc r;

	if (v->y >= v->h)
		return RC_INVAL;
	memcpy(v->rgba + (size_t)(v->y - v->y0) * v->w * 4, rgba, (size_t)v->w * 4);
	v->y++;
	n = v->y - v->y0;
	if (n < v->batch && v->y < v->h)
		return RC_OK;
	if (level == 0 && k->same) { /* rows the served picture has: its texels stay */
		v->y0 = v->y;
		return RC_OK;
	}
	tex_encode_rows(k->p->to.kind, v->rgba, v->w, n, v->canon, k->p->threads);
	r = put_units(k, face, level, v->y0 / unit, (n + unit - 1) / unit, v->canon);
	v->y0 = v->y;
	return r;
}

static enum rc mip_row(void *ctx, uint32_t level, uint32_t y, const uint8_t *rgba)
{
	struct sink *k = ctx;

	(void)y;
	return sink_row(k, k->face, level, rgba);
}

/* A DDS whose rows are the new texels: copied level by level. */
static enum rc dds_direct(const struct src *pic, struct sink *k)
{
	const struct texmod_plan *p = k->p;
	const struct dds_read_info *d = &p->dds;
	uint8_t *buf = malloc(BATCH_BYTES);
	enum rc r = buf ? RC_OK : RC_NOMEM;

	for (uint32_t f = 0; f < d->faces && r == RC_OK; f++)
		for (uint32_t l = 0; l < d->mips && r == RC_OK; l++) {
			uint64_t rb = dds_read_row_bytes(d, l);
			uint32_t rows = dds_read_level_rows(d, l);
			uint32_t batch = rb >= BATCH_BYTES ? 1 : (uint32_t)(BATCH_BYTES / rb);

			for (uint32_t y = 0; y < rows && r == RC_OK; y += batch) {
				uint32_t n = rows - y < batch ? rows - y : batch;

				if (rb > BATCH_BYTES) {
					r = RC_NOMEM; /* a row of more than 256 KiB: 16384 texels */
					break;
				}
				r = dds_read_units(pic, d, f, l, y, n, buf);
				if (r == RC_OK)
					dds_rows_same(k, f, l, y, n, buf, n * rb);
				if (r == RC_OK)
					r = put_units(k, f, l, y, n, buf);
			}
		}
	free(buf);
	return r;
}

/* A DDS in a format the platform lacks: each level decoded and encoded again. */
static enum rc dds_convert(const struct src *pic, struct sink *k)
{
	const struct dds_read_info *d = &k->p->dds;
	uint32_t unit = d->compressed ? 4 : 1;
	uint64_t rb = dds_read_row_bytes(d, 0);
	uint8_t *tmp = malloc((size_t)rb), *rgba = malloc((size_t)d->width * 4 * unit);
	enum rc r = tmp && rgba ? RC_OK : RC_NOMEM;

	for (uint32_t f = 0; f < d->faces && r == RC_OK; f++)
		for (uint32_t l = 0; l < d->mips && r == RC_OK; l++) {
			uint32_t w = tex_dim(d->width, l), h = tex_dim(d->height, l);

			for (uint32_t u = 0; u < dds_read_level_rows(d, l) && r == RC_OK; u++) {
				r = dds_read_rgba(pic, d, f, l, u, 1, tmp, rgba);
				for (uint32_t y = 0; y < unit && u * unit + y < h && r == RC_OK;
				     y++)
					r = sink_row(k, f, l, rgba + (size_t)y * w * 4);
			}
		}
	free(tmp);
	free(rgba);
	return r;
}

/* A PNG: level 0 of every face from the picture, the other levels built from it. */
static enum rc png_pixels(const struct src *pic, struct sink *k, char *why, size_t whylen)
{
	const struct texmod_plan *p = k->p;
	uint32_t w, h, fw = p->to.width, faces = p->to.faces;
	struct pngdec *pr;
	uint8_t *row = NULL;
	enum rc r =
	    pngdec_open(pic, TEXMOD_MAX_SIDE * 6, TEXMOD_MAX_SIDE, &pr, &w, &h, why, whylen);

	if (r != RC_OK)
		return r;
	k->mg = xcalloc_n(faces, sizeof *k->mg);
	row = malloc((size_t)w * 4);
	r = !k->mg || !row ? RC_NOMEM : w != fw * faces || h != p->to.height ? RC_INVAL : RC_OK;
	for (uint32_t f = 0; f < faces && r == RC_OK; f++)
		r = tex_mipgen_new(fw, h, p->to.mips, mip_row, k, &k->mg[f]);
	for (uint32_t y = 0; y < h && r == RC_OK; y++) {
		r = pngdec_rows(pr, 1, row, why, whylen);
		if (r == RC_OK)
			png_row_same(k, y, row);
		for (uint32_t f = 0; f < faces && r == RC_OK; f++) {
			k->face = f;
			r = tex_mipgen_push(k->mg[f], row + (size_t)f * fw * 4);
		}
	}
	if (r == RC_OK)
		r = pngdec_finish(pr, why, whylen);
	pngdec_close(pr);
	free(row);
	return r;
}

/* Problems arena_open finds in s, or -1 when it does not open. */
static long open_problems(const struct src *s)
{
	struct arena a;
	struct diag d;
	long k = -1;

	diag_init(&d);
	if (arena_open(s, &a, &d) == RC_OK) {
		k = (long)diag_count(&d);
		arena_free(&a);
	}
	diag_free(&d);
	return k;
}

/*
 * The new arena must read back as the source did, no new problem and the texture describing
 * itself. A hostile layout can place what the parser reads (types, subreference records) in
 * bytes the writer rewrites; arena_patch_plan refuses the ones known, this catches the rest
 * (fuzz_texmod's invariant, kept by the writer itself).
 */
static enum rc verify(const struct src *as, const struct texmod_plan *p, const uint8_t *dst,
		      char *why, size_t whylen)
{
	struct src s;
	struct src_mem m;
	struct arena b;
	struct tex_desc d;
	struct diag dg;
	long before = open_problems(as);
	enum rc r;

	src_init_mem(&s, &m, dst, (size_t)p->out_size);
	diag_init(&dg);
	r = arena_open(&s, &b, &dg);
	if (r != RC_OK || (before >= 0 && (long)diag_count(&dg) > before)) {
		if (r == RC_OK)
			arena_free(&b);
		r = rc_fail(why, whylen, RC_CORRUPT,
			    "the rewritten arena would not read back as this one does (%s)",
			    dg.n ? dg.msg[dg.n - 1] : "it does not open");
		diag_free(&dg);
		return r;
	}
	diag_free(&dg);
	r = tex_describe(&s, &b, p->tex, &d, NULL);
	arena_free(&b);
	if (r != RC_OK)
		return rc_fail(why, whylen, RC_CORRUPT,
			       "the rewritten texture would not read back (%s)", rc_str(r));
	return RC_OK;
}

enum rc texmod_write(const struct src *as, const struct arena *a, const struct src *pic,
		     const struct texmod_plan *p, uint8_t *dst, char *why, size_t whylen)
{
	struct sink k;
	enum rc r = arena_patch_write(as, a, &p->patch, dst);

	if (r != RC_OK)
		return rc_fail(why, whylen, r, "the arena cannot be read (%s)", rc_str(r));
	if (p->obj_len)
		memcpy(dst + arena_row(a, p->tex)->start, p->obj, p->obj_len);
	r = sink_init(&k, p, as, dst);
	if (r == RC_OK) {
		if (p->in == TEXMOD_PNG) {
			r = png_pixels(pic, &k, why, whylen);
		} else if (p->dds_direct) {
			r = dds_direct(pic, &k);
		} else {
			k.same = false; /* converted: not the texels served */
			r = dds_convert(pic, &k);
		}
	}
	if (r == RC_OK)
		r = sink_done(&k);
	sink_free(&k);
	if (r != RC_OK && why && whylen && !why[0])
		snprintf(why, whylen, "writing the texels failed (%s)", rc_str(r));
	return r == RC_OK ? verify(as, p, dst, why, whylen) : r;
}
