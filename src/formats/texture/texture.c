/*
 * Textures whatever the platform: what a Texture object describes and which part of it the
 * file really holds (tex_describe), canonical rows on demand, DDS headers, the picture rows a
 * PNG is made of, whole images for tests and tools, and texture file names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/png.h"
#include "psgfs/formats/skate_objects.h"
#include "psgfs/formats/skate_platform.h"
#include "psgfs/formats/tex_platform.h"
#include "psgfs/formats/texture.h"

/* ---- describing a texture ---- */

enum rc tex_describe(const struct src *s, const struct arena *a, uint32_t idx, struct tex_desc *d,
		     struct diag *diag)
{
	memset(d, 0, sizeof *d);
	d->index = idx;
	if (idx >= a->n_dict)
		return RC_BOUNDS;
	if (arena_row(a, idx)->type_id != RW_T_TEXTURE)
		return RC_UNSUPPORTED;
	d->tp = skate_platform_decoders(a)->tex;
	return d->tp->describe(s, a, idx, d, diag);
}

/* ---- levels and rows ---- */

enum rc tex_read_rows(const struct src *s, const struct tex_desc *d, uint32_t face, uint32_t level,
		      uint32_t row0, uint32_t n, uint8_t *out)
{
	if (face >= d->have_faces || level >= d->have_mips || row0 > tex_level_rows(d, level) ||
	    n > tex_level_rows(d, level) - row0)
		return RC_BOUNDS;
	if (n == 0)
		return RC_OK;
	return d->tp->read_rows(s, d, face, level, row0, n, out);
}

/* ---- pictures ---- */

static void texel_rgba(enum tex_kind k, const uint8_t *p, uint8_t *d)
{
	uint16_t v;

	switch (k) {
	case TEXK_L8:
		d[0] = d[1] = d[2] = p[0];
		d[3] = 255;
		break;
	case TEXK_BGRA8:
	case TEXK_BGRX8:
		d[0] = p[2];
		d[1] = p[1];
		d[2] = p[0];
		d[3] = k == TEXK_BGRA8 ? p[3] : 255;
		break;
	case TEXK_R5G6B5:
		v = ld_u16le(p);
		d[0] = tex_x5(v >> 11);
		d[1] = tex_x6(v >> 5 & 63);
		d[2] = tex_x5(v & 31);
		d[3] = 255;
		break;
	case TEXK_A1R5G5B5:
		v = ld_u16le(p);
		d[0] = tex_x5(v >> 10 & 31);
		d[1] = tex_x5(v >> 5 & 31);
		d[2] = tex_x5(v & 31);
		d[3] = (v & 0x8000) ? 255 : 0;
		break;
	case TEXK_A4R4G4B4:
		v = ld_u16le(p);
		d[0] = (uint8_t)((v >> 8 & 15) * 17);
		d[1] = (uint8_t)((v >> 4 & 15) * 17);
		d[2] = (uint8_t)((v & 15) * 17);
		d[3] = (uint8_t)((v >> 12) * 17);
		break;
	default:
		memset(d, 0, 4);
		break;
	}
}

void tex_canon_rgba(enum tex_kind k, const uint8_t *canon, uint32_t w, uint32_t n, uint8_t *rgba)
{
	uint32_t bpp = tex_kind_bpp(k);

	if (tex_kind_compressed(k)) {
		dxt_decode_image(k, canon, w, n * 4, rgba);
		return;
	}
	for (size_t i = 0, m = (size_t)w * n; i < m; i++)
		texel_rgba(k, canon + i * bpp, rgba + 4 * i);
}

uint32_t tex_picture_width(const struct tex_desc *d)
{
	return d->width * (d->have_faces > 1 ? d->have_faces : 1);
}

/* Pixel rows [y0, y0+n) of one face's level 0 as RGBA. */
static enum rc face_rgba(const struct src *s, const struct tex_desc *d, uint32_t face, uint32_t y0,
			 uint32_t n, uint8_t *rgba)
{
	bool comp = tex_kind_compressed(d->kind);
	uint32_t r0 = comp ? y0 / 4 : y0, r1 = comp ? (y0 + n + 3) / 4 : y0 + n;
	uint32_t unit = comp ? 4 : 1, w = d->width;
	uint8_t *canon = malloc((size_t)(tex_row_bytes(d, 0) * (r1 - r0)));
	uint8_t *px = malloc((size_t)w * 4 * unit * (r1 - r0));
	enum rc r = canon && px ? tex_read_rows(s, d, face, 0, r0, r1 - r0, canon) : RC_NOMEM;

	if (r == RC_OK) {
		tex_canon_rgba(d->kind, canon, w, r1 - r0, px);
		memcpy(rgba, px + (size_t)(y0 - r0 * unit) * w * 4, (size_t)n * w * 4);
	}
	free(canon);
	free(px);
	return r;
}

enum rc tex_picture_rows(const struct src *s, const struct tex_desc *d, uint32_t y0, uint32_t n,
			 uint8_t *px)
{
	uint32_t faces = d->have_faces > 1 ? d->have_faces : 1, w = d->width;
	unsigned ch = d->alpha ? 4 : 3;
	uint32_t pw = w * faces;
	uint8_t *rgba = malloc((size_t)w * 4 * n);
	enum rc r = rgba ? RC_OK : RC_NOMEM;

	for (uint32_t f = 0; f < faces && r == RC_OK; f++) {
		r = face_rgba(s, d, f, y0, n, rgba);
		for (uint32_t y = 0; y < n && r == RC_OK; y++)
			for (uint32_t x = 0; x < w; x++) {
				const uint8_t *sp = rgba + ((size_t)y * w + x) * 4;
				uint8_t *dp = px + ((size_t)y * pw + (size_t)f * w + x) * ch;

				memcpy(dp, sp, ch);
			}
	}
	free(rgba);
	return r;
}

static enum rc pic_rows(const void *ctx, uint32_t y0, uint32_t n, uint8_t *px)
{
	const struct tex_pic *p = ctx;

	return tex_picture_rows(p->s, p->d, y0, n, px);
}

enum rc tex_picture_png(struct pngs *p, struct tex_pic *pic, const struct src *s,
			const struct tex_desc *d)
{
	*pic = (struct tex_pic){s, d};
	return pngs_init(p, tex_picture_width(d), d->height, d->alpha, s ? pic_rows : NULL,
			 s ? pic : NULL);
}

/* ---- whole images ---- */

void texture_image_free(struct texture_image *t)
{
	if (!t)
		return;
	free(t->data);
	free(t);
}

bool texture_level(const struct texture_image *t, uint32_t face, uint32_t level, size_t *off,
		   size_t *len, uint32_t *w, uint32_t *h)
{
	const struct tex_desc *d = &t->d;
	uint64_t face_bytes = 0, o = 0;

	if (face >= d->have_faces || level >= d->have_mips)
		return false;
	for (uint32_t i = 0; i < d->have_mips; i++) {
		if (i < level)
			o += tex_level_bytes(d, i);
		face_bytes += tex_level_bytes(d, i);
	}
	*off = (size_t)(face * face_bytes + o);
	*len = (size_t)tex_level_bytes(d, level);
	if (w)
		*w = tex_dim(d->width, level);
	if (h)
		*h = tex_dim(d->height, level);
	return true;
}

enum rc texture_load(const struct src *s, const struct arena *a, uint32_t tex_idx,
		     struct texture_image **out, struct diag *diag)
{
	struct texture_image *img = calloc(1, sizeof *img);
	enum rc r;
	uint64_t size;

	*out = NULL;
	if (!img)
		return RC_NOMEM;
	r = tex_describe(s, a, tex_idx, &img->d, diag);
	if (r != RC_OK) {
		free(img);
		return r;
	}
	/* What is served lies inside a readable base resource: bounded by the file. */
	size = tex_dds_size(&img->d) - DDS_HEADER_BYTES;
	img->data = malloc(size ? (size_t)size : 1);
	img->size = (size_t)size;
	r = img->data ? RC_OK : RC_NOMEM;
	for (uint32_t f = 0; f < img->d.have_faces && r == RC_OK; f++)
		for (uint32_t m = 0; m < img->d.have_mips && r == RC_OK; m++) {
			size_t off, len;

			texture_level(img, f, m, &off, &len, NULL, NULL);
			r = tex_read_rows(s, &img->d, f, m, 0, tex_level_rows(&img->d, m),
					  img->data + off);
		}
	if (r != RC_OK) {
		diag_add(diag, "object %u (Texture): texels unreadable (%s)", tex_idx, rc_str(r));
		texture_image_free(img);
		return r;
	}
	*out = img;
	return RC_OK;
}

enum rc texture_dds(const struct texture_image *t, struct buf *out)
{
	tex_dds_header(&t->d, out);
	buf_put(out, t->data, t->size);
	return out->oom ? RC_NOMEM : RC_OK;
}

enum rc texture_png(const struct src *s, const struct texture_image *t, struct buf *out)
{
	struct tex_pic pic;
	struct pngs p;
	enum rc r = tex_picture_png(&p, &pic, s, &t->d);

	for (unsigned part = 0; part < PNGS_PARTS && r == RC_OK; part++) {
		uint64_t n;
		uint32_t size;
		struct emit e;

		pngs_part(&p, part, &n, &size);
		if (n == 0)
			continue;
		emit_init_window(&e, 0, SIZE_MAX);
		r = pngs_render(&p, part, 0, &e);
		buf_put(out, e.b.data, e.b.len);
		emit_free(&e);
	}
	return r == RC_OK && out->oom ? RC_NOMEM : r;
}

/* ---- names ---- */

struct stem_row {
	char *name;
	uint32_t idx;
};

static int stem_cmp(const void *pa, const void *pb)
{
	const struct stem_row *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* TOC entries name their Texture targets (first entry wins), without a ".Texture" suffix. */
static enum rc names_from_toc(const struct src *s, const struct arena *a, char **names)
{
	static const char suffix[] = ".Texture";
	struct skate_toc_item *v;
	size_t n;
	enum rc r = skate_toc_entries(s, a, &v, &n, NULL);

	if (r != RC_OK)
		return r;
	for (size_t i = 0; i < n; i++) {
		char comp[NAME_COMPONENT_MAX + 1];
		size_t nl = v[i].name_len;
		uint32_t obj = v[i].object;

		if (!v[i].name || obj >= a->n_dict || arena_row(a, obj)->type_id != RW_T_TEXTURE ||
		    names[obj])
			continue;
		if (nl > sizeof suffix - 1 &&
		    memcmp(v[i].name + nl - (sizeof suffix - 1), suffix, sizeof suffix - 1) == 0)
			nl -= sizeof suffix - 1;
		if (nl == 0)
			continue;
		name_component(v[i].name, nl, comp);
		names[obj] = strdup(comp);
	}
	skate_toc_items_free(v, n);
	return RC_OK;
}

/* Later twins of a name get ".NNNN" (their dictionary row); the lowest row keeps it. */
static void dedupe_names(char **names, struct stem_row *rows, size_t nr)
{
	qsort(rows, nr, sizeof *rows, stem_cmp);
	for (size_t k = 1; k < nr; k++) {
		size_t m;
		char *nn;

		if (strcmp(rows[k].name, rows[k - 1].name) != 0)
			continue;
		m = strlen(names[rows[k].idx]) + 16;
		nn = malloc(m);
		if (!nn)
			continue;
		snprintf(nn, m, "%s.%04u", names[rows[k].idx], rows[k].idx);
		names[rows[k].idx] = nn; /* rows[k].name keeps the old text for the next compare */
	}
	for (size_t k = 1; k < nr; k++)
		if (rows[k].name != names[rows[k].idx])
			free(rows[k].name);
}

enum rc texture_names(const struct src *s, const struct arena *a, char ***names_out,
		      struct diag *diag)
{
	char **names;
	struct stem_row *rows;
	size_t nr = 0;
	enum rc r;

	(void)diag;
	*names_out = NULL;
	names = xcalloc_n(a->n_dict ? a->n_dict : 1, sizeof *names);
	rows = xcalloc_n(a->n_dict ? a->n_dict : 1, sizeof *rows);
	r = names && rows ? names_from_toc(s, a, names) : RC_NOMEM;
	for (uint32_t i = 0; r == RC_OK && i < a->n_dict; i++) {
		if (arena_row(a, i)->type_id != RW_T_TEXTURE)
			continue;
		if (!names[i] && (names[i] = malloc(24)))
			snprintf(names[i], 24, "%04u.Texture", i);
		if (!names[i])
			r = RC_NOMEM;
		rows[nr].name = names[i];
		rows[nr++].idx = i;
	}
	if (r != RC_OK) {
		free(rows);
		texture_names_free(names, a->n_dict);
		return r;
	}
	dedupe_names(names, rows, nr);
	free(rows);
	*names_out = names;
	return RC_OK;
}

void texture_names_free(char **names, uint32_t n)
{
	if (!names)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
