/*
 * SFIL stream collections and their ATOC tables (docs/streams.md; public sources: the
 * Skate-File-Format-Documentation "World Collection Streaming Files" notes, RW4ArchiveTool's
 * sf_parser.h and the SK8 skate3_streams.py reader). Big-endian on both consoles.
 *   header: "SFIL", u32 version, u64 stamp, u32 first asset offset, u32 assets, u32 stream
 *           format (0 raw, 1 RefPack, 2 sections, 3 chunked sections), u32 unknown
 *   asset:  u64 ID, u32 stored size, u32 header size, u32 stride to the next asset
 * An asset's unpacked bytes are its arena: the CPU part then the GPU part.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "formats/archive/sfil.h"

#define SF_HDR	 0x20u /* header fields we read */
#define SF_ASSET 0x18u /* asset fields we read */
#define SF_SECT	 0x50u /* format 2: five 16-byte section records */
#define SF_CHDR	 32u   /* format 3: fixed chunk header */
#define ATOC_HDR 24u

const char *const arc_stream_exts[] = {".psf", ".xsf", NULL};
const char *const arc_toc_exts[] = {".pst", ".xst", NULL};

/* .psf or .xsf, any case: the length of the name before it, or 0. */
static size_t stream_stem(const char *name)
{
	size_t n = strlen(name);

	if (n <= 4 || !name_has_ext(name, arc_stream_exts))
		return 0;
	return n - 4;
}

bool arc_toc_name(const char *stream, char *out, size_t n)
{
	size_t stem = stream_stem(stream);

	if (!stem || stem + 5 > n)
		return false;
	memcpy(out, stream, stem + 4);
	out[stem + 3] = stream[stem + 3] == 'F' ? 'T' : 't';
	out[stem + 4] = '\0';
	return true;
}

bool arc_toc_pairs(const char *stream, const char *toc)
{
	size_t stem = stream_stem(stream);

	return stem && strlen(toc) == stem + 4 && !memcmp(toc, stream, stem + 1) &&
	       !strncasecmp(toc + stem + 1, stream + stem + 1, 2) &&
	       tolower((unsigned char)toc[stem + 3]) == 't';
}

bool arc_toc_serves(const uint8_t sh[16], const uint8_t th[16])
{
	return !memcmp(sh, "SFIL", 4) && !memcmp(th, "ATOC", 4) && !memcmp(sh + 8, th + 8, 8);
}

/* ---- the ATOC table: sizes by ID ---- */

struct toc_row {
	uint64_t id, size;
};

struct toc {
	struct toc_row *v;
	size_t n;
	unsigned rec; /* 64 Xbox 360, 72 PS3, 0 unknown */
};

static int row_cmp(const void *x, const void *y)
{
	const struct toc_row *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

/* The record size: what makes the table end exactly at the end of the file (the SK8 reader
 * requires it for .xst), else what the names offset implies, else 64 with a diag line. */
static unsigned toc_rec(uint64_t size, uint64_t count, uint32_t names, struct diag *d)
{
	static const unsigned recs[] = {64, 72};

	for (int k = 0; k < 2; k++)
		if (count && size == ATOC_HDR + count * recs[k])
			return recs[k];
	for (int k = 0; k < 2; k++)
		if (count && names == ATOC_HDR + count * recs[k])
			return recs[k];
	if (count)
		diag_add(d, "ATOC: %llu records do not fill the table; reading 64-byte records",
			 (unsigned long long)count);
	return 64;
}

static enum rc toc_read(const struct src *t, struct toc *o, struct diag *d)
{
	uint8_t h[ATOC_HDR], *raw = NULL;
	uint64_t count, n;
	enum rc r;

	memset(o, 0, sizeof *o);
	if (!t)
		return RC_OK;
	r = src_read(t, 0, h, sizeof h);
	if (r != RC_OK || memcmp(h, "ATOC", 4)) {
		diag_add(d, "ATOC: the table is not an ATOC table; sizes come from the stream");
		return RC_OK;
	}
	if (ld_u32be(h + 4) != 3)
		diag_add(d, "ATOC: version %u (3 expected)", ld_u32be(h + 4));
	count = ld_u32be(h + 16);
	o->rec = toc_rec(t->size, count, ld_u32be(h + 20), d);
	n = (t->size - ATOC_HDR) / o->rec;
	if (n < count)
		diag_add(d, "ATOC: claims %llu assets; the table holds %llu",
			 (unsigned long long)count, (unsigned long long)n);
	n = n < count ? n : count;
	o->v = xcalloc_n(n ? n : 1, sizeof *o->v);
	if (!o->v)
		return RC_NOMEM;
	r = src_dup(t, ATOC_HDR, (size_t)(n * o->rec), &raw);
	for (uint64_t i = 0; r == RC_OK && i < n; i++) {
		o->v[i].id = ld_u64be(raw + i * o->rec);
		o->v[i].size = ld_u32be(raw + i * o->rec + 12);
	}
	free(raw);
	o->n = r == RC_OK ? (size_t)n : 0;
	qsort(o->v, o->n, sizeof *o->v, row_cmp);
	return r;
}

static const struct toc_row *toc_find(const struct toc *t, uint64_t id)
{
	struct toc_row key = {.id = id};

	return t->n ? bsearch(&key, t->v, t->n, sizeof *t->v, row_cmp) : NULL;
}

/* ---- an asset's layout ---- */

/* Where one asset's stored bytes are and how the collection stores them. */
struct sf_asset {
	uint64_t id, data, stored; /* data: absolute offset of the stored bytes */
	uint32_t format;
};

/* Receives the segments in output order (NULL ix: only the size is wanted). */
struct sf_out {
	struct arc_index *ix;
	uint64_t size;
	enum rc r;
	struct arc_seg first; /* the first segment with output (platform sniffing) */
};

static void emit(struct sf_out *o, uint64_t in_off, uint64_t in_len, uint64_t out_len,
		 enum arc_seg_method m, enum rc why)
{
	struct arc_seg g = {.out_off = o->size,
			    .out_len = out_len,
			    .in_off = in_off,
			    .in_len = in_len,
			    .method = (uint8_t)m};

	if (o->r == RC_OK && o->ix)
		o->r = arcx_add(o->ix, &g, why);
	if (o->size == 0 && out_len && !o->first.out_len)
		o->first = g;
	o->size += out_len;
}

/* The RefPack header at off: its claimed size; false when there is none. */
static bool rp_at(const struct src *s, uint64_t off, uint64_t len, uint64_t *size)
{
	uint8_t h[10]; /* the longest header: 91 FB, u32 packed size, u32 size */
	size_t n = len < sizeof h ? (size_t)len : sizeof h, hl;

	return n >= 2 && src_read(s, off, h, n) == RC_OK && rp_header(h, n, size, &hl);
}

/* Format 2: five {unpacked, stored, compressed, 0} records; true when they account for the
 * stored bytes exactly (otherwise the asset is not in sections: raw, as the SK8 reader says
 * assets whose stored size is the asset's own are). */
static bool sections_ok(const uint8_t *t, uint64_t stored)
{
	uint64_t sum = SF_SECT;

	for (int k = 0; k < 5; k++) {
		if (ld_u32be(t + 16 * k + 8) > 1)
			return false;
		sum += ld_u32be(t + 16 * k + 4);
	}
	return sum == stored;
}

static void layout_sections(const struct src *s, const struct sf_asset *a, const uint8_t *t,
			    const char *name, struct sf_out *o, struct diag *d)
{
	uint64_t in = a->data + SF_SECT;

	for (int k = 0; k < 5; k++) {
		uint32_t dst = ld_u32be(t + 16 * k), src = ld_u32be(t + 16 * k + 4);
		bool packed = ld_u32be(t + 16 * k + 8) == 1;
		uint64_t claim;

		if (packed && !rp_at(s, in, src, &claim)) {
			diag_add(d, "%s: section %d is marked RefPack but has no RefPack header",
				 name, k);
			emit(o, in, src, dst, ARC_SEG_BAD, RC_CORRUPT);
		} else if (packed) {
			if (claim != dst && o->ix)
				diag_add(d,
					 "%s: section %d claims %u bytes; its RefPack stream %llu",
					 name, k, dst, (unsigned long long)claim);
			emit(o, in, src, dst, ARC_SEG_REFPACK, RC_OK);
		} else {
			if (src != dst && o->ix)
				diag_add(d, "%s: raw section %d: %u stored bytes for %u", name, k,
					 src, dst);
			emit(o, in, src, dst, ARC_SEG_STORED, RC_OK);
		}
		in += src;
	}
}

/* Format 3: {chunk data offset, chunks, chunks per section (5), 0}, u32 sizes, chunks. */
static bool chunks_ok(const struct src *s, const struct sf_asset *a, uint8_t **sizes,
		      uint32_t *count, uint32_t *hsize)
{
	uint8_t h[SF_CHDR];
	uint64_t sum;

	*sizes = NULL;
	if (a->stored < SF_CHDR || src_read(s, a->data, h, SF_CHDR) != RC_OK)
		return false;
	*hsize = ld_u32be(h);
	*count = ld_u32be(h + 4);
	if (*hsize < SF_CHDR || *hsize > a->stored || (*hsize - SF_CHDR) / 4 < *count)
		return false;
	if (src_dup(s, a->data + SF_CHDR, (size_t)*count * 4, sizes) != RC_OK)
		return false;
	sum = *hsize;
	for (uint32_t k = 0; k < *count; k++)
		sum += ld_u32be(*sizes + 4 * (size_t)k);
	if (sum != a->stored) {
		free(*sizes);
		*sizes = NULL;
		return false;
	}
	return true;
}

static void layout_chunks(const struct src *s, const struct sf_asset *a, const uint8_t *sizes,
			  uint32_t count, uint32_t hsize, const char *name, struct sf_out *o,
			  struct diag *d)
{
	uint64_t in = a->data + hsize;

	for (uint32_t k = 0; k < count && o->r == RC_OK; k++) {
		uint32_t len = ld_u32be(sizes + 4 * (size_t)k);
		uint64_t claim;

		if (rp_at(s, in, len, &claim)) {
			emit(o, in, len, claim, ARC_SEG_REFPACK, RC_OK);
		} else {
			if (o->ix)
				diag_add(d, "%s: chunk %u has no RefPack header; read as stored",
					 name, k);
			emit(o, in, len, len, ARC_SEG_STORED, RC_OK);
		}
		in += len;
	}
}

static void layout_raw(const struct sf_asset *a, struct sf_out *o)
{
	emit(o, a->data, a->stored, a->stored, ARC_SEG_STORED, RC_OK);
}

/* The segments of asset a, by its stream format and what its bytes hold. */
static void layout(const struct src *s, const struct sf_asset *a, const char *name,
		   struct sf_out *o, struct diag *d)
{
	uint8_t t[SF_SECT], *sizes;
	uint32_t count, hsize;
	uint64_t claim;

	switch (a->format) {
	case 1:
		if (rp_at(s, a->data, a->stored, &claim))
			emit(o, a->data, a->stored, claim, ARC_SEG_REFPACK, RC_OK);
		else
			layout_raw(a, o);
		return;
	case 2:
		if (a->stored >= SF_SECT && src_read(s, a->data, t, SF_SECT) == RC_OK &&
		    sections_ok(t, a->stored))
			layout_sections(s, a, t, name, o, d);
		else
			layout_raw(a, o);
		return;
	case 3:
		if (chunks_ok(s, a, &sizes, &count, &hsize)) {
			layout_chunks(s, a, sizes, count, hsize, name, o, d);
			free(sizes);
		} else {
			layout_raw(a, o);
		}
		return;
	default:
		layout_raw(a, o);
	}
}

/* ---- the collection ---- */

struct sf_walk {
	struct arc *a;
	size_t cap;
	char *paths;
	size_t plen, pcap;
	const char *ext;
};

static enum rc walk_add(struct sf_walk *w, const struct arc_entry *e)
{
	struct arc_entry *v;
	char name[40];
	int n = snprintf(name, sizeof name, "0x%016" PRIx64 ".%s", e->id, w->ext);

	v = xgrow_n(w->a->e, w->a->n, &w->cap, sizeof *v, 16);
	if (!v)
		return RC_NOMEM;
	w->a->e = v;
	if (w->plen + (size_t)n + 1 > w->pcap) {
		size_t cap = w->pcap ? 2 * w->pcap : 1024;
		char *p = realloc(w->paths, cap);

		if (!p)
			return RC_NOMEM;
		w->paths = p;
		w->pcap = cap;
	}
	v[w->a->n] = *e;
	v[w->a->n].path = (uint32_t)w->plen;
	memcpy(w->paths + w->plen, name, (size_t)n + 1);
	w->plen += (size_t)n + 1;
	w->a->n++;
	return RC_OK;
}

/* The extension: the ATOC's record size says the console; else the first asset's arena
 * header does ("ps3" or "xb2" after the 4-byte magic), decoded from its first segment. */
static const char *sniff_ext(const struct src *s, uint64_t first, uint32_t format,
			     const struct toc *t)
{
	uint8_t h[SF_ASSET], in[256], m[8];
	struct sf_asset as = {.format = format};
	struct sf_out o = {0};
	size_t got = 0, n;

	if (t->rec)
		return t->rec == 64 ? "rx2" : "psg";
	if (src_read(s, first, h, SF_ASSET) != RC_OK)
		return "psg";
	as.data = first + ld_u32be(h + 12);
	as.stored = ld_u32be(h + 8);
	if (!span_ok(s->size, as.data, as.stored))
		return "psg";
	layout(s, &as, "", &o, NULL);
	n = o.first.in_len < sizeof in ? (size_t)o.first.in_len : sizeof in;
	if (n < sizeof m || src_read(s, o.first.in_off, in, n) != RC_OK)
		return "psg";
	if (o.first.method == ARC_SEG_STORED)
		memcpy(m, in, sizeof m), got = sizeof m;
	else if (o.first.method == ARC_SEG_REFPACK)
		rp_decode(in, n, m, sizeof m, &got);
	return got == sizeof m && !memcmp(m + 4, "xb2", 3) ? "rx2" : "psg";
}

/* One asset record at cur into e; the offset of the next one (0: the walk ends). */
static uint64_t walk_one(const struct src *s, uint64_t cur, uint32_t format, const struct toc *t,
			 struct arc_entry *e, struct diag *d)
{
	uint8_t h[SF_ASSET];
	uint32_t stored, hsize, stride;
	const struct toc_row *row;

	if (src_read(s, cur, h, SF_ASSET) != RC_OK)
		return 0;
	memset(e, 0, sizeof *e);
	e->id = ld_u64be(h);
	stored = ld_u32be(h + 8);
	hsize = ld_u32be(h + 12);
	stride = ld_u32be(h + 16);
	if (!e->id && !stored && !hsize && !stride)
		return 0; /* zero padding: the collection ends */
	e->off = cur;
	e->stored = (uint64_t)hsize + stored;
	e->method = ARC_SECTIONS;
	e->table_method = (uint8_t)(format < 255 ? format : 255);
	row = toc_find(t, e->id);
	e->size = row ? row->size : UINT64_MAX; /* UINT64_MAX: computed by the caller */
	if (hsize < SF_ASSET || !span_ok(s->size, cur, e->stored)) {
		e->bad = 1;
		diag_add(d,
			 "asset 0x%016" PRIx64 " at %llu: header %u + %u stored bytes run "
			 "past the end of the collection",
			 e->id, (unsigned long long)cur, hsize, stored);
	}
	if (format > 3 && !e->bad) {
		e->bad = 1;
		diag_add(d, "asset 0x%016" PRIx64 ": stream format %u is not one of 0-3", e->id,
			 format);
	}
	if (t->rec && !row)
		diag_add(d, "asset 0x%016" PRIx64 " is absent from the ATOC table", e->id);
	if (stride < e->stored || stride < SF_ASSET || cur + stride <= cur) {
		diag_add(d,
			 "asset 0x%016" PRIx64 ": stride %u shorter than the asset; the walk "
			 "stops here",
			 e->id, stride);
		return 0;
	}
	return cur + stride;
}

/* Sizes the ATOC does not give come from the asset's own layout. */
static void fill_sizes(const struct src *s, struct arc *a, const char *paths, struct diag *d)
{
	for (uint32_t i = 0; i < a->n; i++) {
		struct arc_entry *e = &a->e[i];
		struct sf_asset as = {.id = e->id, .format = e->table_method};
		struct sf_out o = {0};
		uint8_t h[SF_ASSET];

		if (e->size != UINT64_MAX)
			continue;
		e->size = 0;
		if (e->bad || src_read(s, e->off, h, SF_ASSET) != RC_OK)
			continue;
		as.data = e->off + ld_u32be(h + 12);
		as.stored = ld_u32be(h + 8);
		layout(s, &as, paths + e->path, &o, d);
		e->size = o.size;
	}
}

enum rc sfil_open(const struct src *s, const struct src *toc, struct arc *a, struct diag *d)
{
	uint8_t h[SF_HDR];
	uint32_t first, count, format;
	struct sf_walk w = {.a = a};
	struct toc t;
	uint64_t cur;
	enum rc r = src_read(s, 0, h, SF_HDR);

	if (r != RC_OK)
		return r;
	if (memcmp(h, "SFIL", 4)) /* archive.c opens what the registry's SFIL row detects */
		return RC_FORMAT;
	first = ld_u32be(h + 16);
	count = ld_u32be(h + 20);
	format = ld_u32be(h + 24);
	if (first < SF_HDR || first > s->size) {
		diag_add(d, "SFIL header: first asset at %u, outside the collection", first);
		return RC_CORRUPT;
	}
	if ((r = toc_read(toc, &t, d)) != RC_OK) {
		free(t.v);
		return r;
	}
	a->kind = ARC_SFIL;
	a->big_endian = true;
	w.ext = sniff_ext(s, first, format, &t);
	for (cur = first; r == RC_OK && cur && span_ok(s->size, cur, SF_ASSET);) {
		struct arc_entry e = {0};
		uint64_t next = walk_one(s, cur, format, &t, &e, d);

		if (e.off == cur && (e.id || e.stored))
			r = walk_add(&w, &e);
		cur = next;
	}
	free(t.v);
	a->paths = w.paths;
	a->paths_len = w.plen;
	if (r != RC_OK)
		return r;
	/* +0x14 is 1 from the real packer (a collection per file), the asset count from DOC's
	 * reading and our generator: either is clean (docs/streams.md, "SFIL collection"). */
	if (count != 1 && a->n != count)
		diag_add(d, "SFIL header claims %u assets; the collection holds %u", count, a->n);
	fill_sizes(s, a, a->paths, d);
	return RC_OK;
}

enum rc sfil_index(const struct src *s, const struct arc *a, uint32_t i, struct arc_index *ix,
		   const char *name, struct diag *d)
{
	const struct arc_entry *e = &a->e[i];
	struct sf_asset as = {.id = e->id, .format = e->table_method};
	struct sf_out o = {.ix = ix};
	uint8_t h[SF_ASSET];
	enum rc r = src_read(s, e->off, h, SF_ASSET);

	if (r != RC_OK)
		return r;
	as.data = e->off + ld_u32be(h + 12);
	as.stored = ld_u32be(h + 8);
	layout(s, &as, name, &o, d);
	if (o.r == RC_OK && o.size != e->size)
		diag_add(d, "%s: the ATOC claims %llu bytes; the stream holds %llu", name,
			 (unsigned long long)e->size, (unsigned long long)o.size);
	return o.r;
}
