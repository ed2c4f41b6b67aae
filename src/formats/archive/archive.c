/* EA archive tables: EB v3 and BIGF/BIG4 (docs/archives.md). Only the tables are read here. */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/refpack.h"
#include "psgfs/formats/registry.h"
#include "formats/archive/sfil.h"

#define EB_HDR 0x30u

/* The kind named by the magic (the registry's archive rows), 0 when none. */
static int arc_kind_of(const uint8_t *h, size_t n)
{
	const struct fmt_row *r = fmt_detect(h, n, FMT_ARCHIVE);

	return r ? r->arc_kind : 0;
}

bool arc_detect(const uint8_t *h, size_t n)
{
	return arc_kind_of(h, n) != 0;
}

void arc_free(struct arc *a)
{
	free(a->e);
	free(a->paths);
	memset(a, 0, sizeof *a);
}

/* The paths buffer, grown by doubling. */
struct pathbuf {
	char *p;
	size_t len, cap;
};

static bool pb_put(struct pathbuf *b, const void *s, size_t n)
{
	return name_pool_put(&b->p, &b->len, &b->cap, s, n);
}

/* One pass over the entries sorted by offset: partial overlaps make both entries bad.
 * Entries sharing exactly the same bytes are not an overlap (one stored copy, two names). */
struct span {
	uint64_t off, end;
	uint32_t i;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static void mark_bad(struct arc *a, uint32_t i, struct diag *d, const char *why)
{
	if (a->e[i].bad)
		return;
	a->e[i].bad = 1;
	diag_add(d, "entry %u (%s): %s", i, a->paths + a->e[i].path, why);
}

static enum rc check_overlaps(struct arc *a, struct diag *d)
{
	struct span *v = xcalloc_n(a->n ? a->n : 1, sizeof *v);
	size_t m = 0;
	uint64_t max_end = 0;
	size_t holder = SIZE_MAX;

	if (!v)
		return RC_NOMEM;
	for (uint32_t i = 0; i < a->n; i++)
		if (!a->e[i].bad && a->e[i].stored > 0)
			v[m++] = (struct span){a->e[i].off, a->e[i].off + a->e[i].stored, i};
	qsort(v, m, sizeof *v, span_cmp);
	for (size_t k = 0; k < m; k++) {
		if (holder != SIZE_MAX && v[k].off < max_end &&
		    !(v[k].off == v[holder].off && v[k].end == v[holder].end)) {
			mark_bad(a, v[k].i, d, "overlaps another entry");
			mark_bad(a, v[holder].i, d, "overlaps another entry");
		}
		if (holder == SIZE_MAX || v[k].end > max_end) {
			max_end = v[k].end;
			holder = k;
		}
	}
	free(v);
	return RC_OK;
}

/* Entries past the end of the file or inside the tables. */
static void check_bounds(struct arc *a, uint64_t fsize, uint64_t table_end, struct diag *d)
{
	for (uint32_t i = 0; i < a->n; i++) {
		struct arc_entry *e = &a->e[i];

		if (!span_ok(fsize, e->off, e->stored))
			mark_bad(a, i, d, "stored bytes run past the end of the archive");
		else if (e->stored > 0 && e->off < table_end)
			mark_bad(a, i, d, "stored bytes overlap the archive's tables");
	}
}

/* ---- EB v3 ---- */

struct eb_hdr {
	uint32_t count;
	uint16_t flags;
	uint8_t shift;
	uint32_t names_off, names_size;
	uint8_t name_rec, folder_rec;
	uint16_t folders;
};

static void eb_parse_hdr(const uint8_t *h, struct eb_hdr *x)
{
	x->count = ld_u32be(h + 4);
	x->flags = ld_u16be(h + 8);
	x->shift = h[10];
	x->names_off = ld_u32be(h + 12);
	x->names_size = ld_u32be(h + 16);
	x->name_rec = h[20];
	x->folder_rec = h[21];
	x->folders = ld_u16be(h + 22);
}

/* How many of `want` records of `rec` bytes at `off` the file holds. */
static uint64_t fits(uint64_t fsize, uint64_t off, uint64_t rec, uint64_t want)
{
	uint64_t n;

	if (off > fsize || rec == 0)
		return 0;
	n = (fsize - off) / rec;
	return n < want ? n : want;
}

/* The table's compression byte as an arc_method; unknown values are refined by the bytes. */
static uint8_t eb_method(uint8_t b)
{
	return b <= ARC_LZX ? b : ARC_METHOD_UNKNOWN;
}

struct eb_tables {
	uint8_t *rec, *comp, *names, *folders;
	uint64_t nfold;
};

static void eb_tables_free(struct eb_tables *t)
{
	free(t->rec);
	free(t->comp);
	free(t->names);
	free(t->folders);
}

/*
 * Folder strings are shared, so a hostile archive could make every tiny name record stand for
 * a 255-byte folder: the paths may take at most 4 bytes per byte of the file (real archives
 * need far less: their data dominates).
 */
static enum rc eb_paths(struct arc *a, const struct eb_hdr *h, const struct eb_tables *t,
			uint64_t fsize, struct pathbuf *pb, struct diag *d)
{
	uint64_t budget = 4 * fsize + (1u << 20);

	for (uint32_t i = 0; i < a->n; i++) {
		const uint8_t *nr = t->names + (size_t)i * h->name_rec;
		uint16_t fi = ld_u16be(nr);
		size_t nl = name_len(nr + 2, h->name_rec - 2u);
		bool fbad = fi >= t->nfold;

		a->e[i].path = (uint32_t)pb->len;
		if (pb->len > UINT32_MAX - 1024)
			return RC_NOMEM; /* 4 GiB of paths: no file could hold that many names */
		if (!fbad) {
			const uint8_t *fr = t->folders + (size_t)fi * h->folder_rec;
			size_t fl = name_len(fr, h->folder_rec);

			if (fl > 0 && (!pb_put(pb, fr, fl) || !pb_put(pb, "/", 1)))
				return RC_NOMEM;
		}
		if (!pb_put(pb, nr + 2, nl) || !pb_put(pb, "", 1))
			return RC_NOMEM;
		if (pb->len > budget) {
			diag_add(d, "EB names: %u entries' paths take more than %llu bytes", i + 1,
				 (unsigned long long)budget);
			return RC_CORRUPT;
		}
		if (fbad) {
			a->e[i].bad = 1;
			diag_add(d, "entry %u (%.*s): folder index %u out of range (%llu folders)",
				 i, (int)nl, (const char *)nr + 2, fi,
				 (unsigned long long)t->nfold);
		}
	}
	return RC_OK;
}

static enum rc eb_read_tables(const struct src *s, const struct eb_hdr *h, uint32_t n, bool comp,
			      uint64_t folders_off, struct eb_tables *t)
{
	size_t rec = (h->flags & 1) ? 20 : 16;
	enum rc r;

	if (n == 0)
		return RC_OK; /* nothing to read, wherever the tables claim to be */
	r = src_dup(s, EB_HDR, (size_t)n * rec, &t->rec);
	if (r == RC_OK && comp)
		r = src_dup(s, EB_HDR + align_up((uint64_t)h->count * rec, 16), n, &t->comp);
	if (r == RC_OK)
		r = src_dup(s, h->names_off, (size_t)n * h->name_rec, &t->names);
	if (r == RC_OK && t->nfold)
		r = src_dup(s, folders_off, (size_t)(t->nfold * h->folder_rec), &t->folders);
	return r;
}

static void eb_entries(struct arc *a, const struct eb_hdr *h, const struct eb_tables *t)
{
	size_t rec = (h->flags & 1) ? 20 : 16;

	for (uint32_t i = 0; i < a->n; i++) {
		const uint8_t *r = t->rec + (size_t)i * rec;
		struct arc_entry *e = &a->e[i];
		uint32_t stored = ld_u32be(r + 4), size = ld_u32be(r + 8);

		e->off = (uint64_t)ld_u32be(r) << h->shift;
		/* stored 0: kept as is. Unpacked 0 is an empty file whatever its stored
		 * bytes: an empty RefPack stream (6 bytes) or chunk header (28 or more) is
		 * stored bytes of an empty entry, as RW4ArchiveTool reads them. */
		e->size = size;
		e->stored = stored ? stored : size;
		e->id = ld_u32be(r + 12);
		if (rec == 20)
			e->id = e->id << 32 | ld_u32be(r + 16);
		if (t->comp) {
			e->table_method = t->comp[i];
			e->method = eb_method(t->comp[i]);
		} else {
			e->table_method = ARC_METHOD_UNKNOWN;
			e->method = e->stored == e->size ? ARC_STORED : ARC_METHOD_UNKNOWN;
		}
	}
}

static enum rc eb_open(const struct src *s, struct arc *a, struct diag *d)
{
	uint8_t hb[EB_HDR];
	struct eb_hdr h;
	struct eb_tables t = {0};
	struct pathbuf pb = {0};
	uint64_t fsize = s->size, rec, n, comp_off, folders_off, table_end;
	bool comp;
	enum rc r;

	r = src_read(s, 0, hb, EB_HDR);
	if (r != RC_OK)
		return r == RC_TRUNCATED ? RC_TRUNCATED : r;
	eb_parse_hdr(hb, &h);
	rec = (h.flags & 1) ? 20 : 16;
	if (h.shift > 31 || h.name_rec < 2) {
		diag_add(d, "EB header: alignment shift %u, name record %u bytes: unusable",
			 h.shift, h.name_rec);
		return RC_CORRUPT;
	}
	n = fits(fsize, EB_HDR, rec, h.count);
	n = fits(fsize, h.names_off, h.name_rec, n);
	if (n < h.count)
		diag_add(d, "EB header claims %u entries; the file holds the tables of %llu",
			 h.count, (unsigned long long)n);
	comp_off = EB_HDR + align_up(h.count * rec, 16);
	/* Some EB v3 writers have no compression bytes (RW4ArchiveTool notes it): then the
	 * names follow the records directly and the methods come from the bytes. */
	comp = span_ok(fsize, comp_off, n) && comp_off + h.count <= h.names_off;
	folders_off = align_up((uint64_t)h.names_off + (uint64_t)h.count * h.name_rec, 16);
	t.nfold = h.folder_rec ? fits(fsize, folders_off, h.folder_rec, h.folders) : 0;
	if (t.nfold < h.folders)
		diag_add(d, "EB header claims %u folders; the file holds %llu", h.folders,
			 (unsigned long long)t.nfold);
	/* The tables as read (a claimed count beyond them does not push entries out). */
	table_end = comp ? comp_off + n : EB_HDR + n * rec;
	if (n && h.names_off + n * h.name_rec > table_end)
		table_end = h.names_off + n * h.name_rec;
	if (t.nfold && folders_off + t.nfold * h.folder_rec > table_end)
		table_end = folders_off + t.nfold * h.folder_rec;

	a->kind = ARC_EB3;
	a->big_endian = true;
	a->n = (uint32_t)n;
	a->e = xcalloc_n(n ? n : 1, sizeof *a->e);
	if (!a->e)
		return RC_NOMEM;
	r = eb_read_tables(s, &h, a->n, comp, folders_off, &t);
	if (r == RC_OK) {
		eb_entries(a, &h, &t);
		r = eb_paths(a, &h, &t, fsize, &pb, d);
	}
	eb_tables_free(&t);
	a->paths = pb.p;
	a->paths_len = pb.len;
	if (r != RC_OK)
		return r;
	check_bounds(a, fsize, table_end, d);
	return check_overlaps(a, d);
}

/* ---- BIGF / BIG4 ---- */

/* The unpacked size: the RefPack header's claim when the bytes start with one. */
static enum rc big_refine(const struct src *s, struct arc_entry *e)
{
	uint8_t h[6];
	size_t n = e->stored < sizeof h ? (size_t)e->stored : sizeof h, hl;
	uint64_t size;
	enum rc r;

	e->method = ARC_STORED;
	e->table_method = 0;
	e->size = e->stored;
	if (!span_ok(s->size, e->off, e->stored) || n < 2)
		return RC_OK;
	r = src_read(s, e->off, h, n);
	if (r != RC_OK)
		return r;
	if (rp_header(h, n, &size, &hl)) {
		e->method = ARC_REFPACK;
		e->table_method = 1;
		e->size = size;
	}
	return RC_OK;
}

static enum rc big_open(const struct src *s, struct arc *a, int kind, struct diag *d)
{
	uint8_t hb[16];
	uint8_t *dir = NULL;
	struct pathbuf pb = {0};
	uint64_t count, end, n;
	size_t cur = 0;
	enum rc r;

	r = src_read(s, 0, hb, sizeof hb);
	if (r != RC_OK)
		return r;
	count = ld_u32be(hb + 8);
	end = ld_u32be(hb + 12); /* end of the directory: where the data may start */
	if (end < 16 || end > s->size) {
		diag_add(d, "%s header: directory end %llu outside the file",
			 kind == ARC_BIGF ? "BIGF" : "BIG4", (unsigned long long)end);
		return RC_CORRUPT;
	}
	n = count < (end - 16) / 9 ? count : (end - 16) / 9; /* 8 bytes + a NUL at least */
	a->kind = kind;
	a->big_endian = true;
	a->e = xcalloc_n(n ? n : 1, sizeof *a->e);
	r = a->e ? src_dup(s, 16, (size_t)(end - 16), &dir) : RC_NOMEM;
	for (uint64_t i = 0; r == RC_OK && i < n; i++) {
		size_t left = (size_t)(end - 16) - cur, nl;
		struct arc_entry *e = &a->e[i];

		if (left < 9)
			break;
		nl = name_len(dir + cur + 8, left - 8);
		if (nl == left - 8)
			break; /* a name without its NUL: the directory ends here */
		if (pb.len > UINT32_MAX - nl - 1) {
			r = RC_NOMEM; /* 4 GiB of names */
			break;
		}
		e->off = ld_u32be(dir + cur);
		e->stored = ld_u32be(dir + cur + 4);
		e->path = (uint32_t)pb.len;
		if (!pb_put(&pb, dir + cur + 8, nl) || !pb_put(&pb, "", 1))
			r = RC_NOMEM;
		cur += 8 + nl + 1;
		a->n++;
	}
	free(dir);
	if (r == RC_OK && a->n < count)
		diag_add(d, "%s header claims %llu entries; the directory holds %u",
			 kind == ARC_BIGF ? "BIGF" : "BIG4", (unsigned long long)count, a->n);
	a->paths = pb.p;
	a->paths_len = pb.len;
	for (uint32_t i = 0; r == RC_OK && i < a->n; i++)
		r = big_refine(s, &a->e[i]);
	if (r != RC_OK)
		return r;
	check_bounds(a, s->size, end, d);
	return check_overlaps(a, d);
}

const char *arc_method_str(uint8_t method)
{
	static const char *const v[ARC_METHODS] = {
	    [ARC_STORED] = "stored",
	    [ARC_REFPACK] = "refpack",
	    [ARC_CHUNK_REFPACK] = "chunked refpack",
	    [ARC_CHUNK_ZLIB] = "chunked zlib",
	    [ARC_LZX] = "lzx",
	    [ARC_CHUNKED] = "chunked",
	    [ARC_SECTIONS] = "sections",
	};

	return method < ARC_METHODS && v[method] ? v[method] : "unknown";
}

const char *arc_seg_method_str(uint8_t method)
{
	static const char *const v[] = {"stored", "refpack", "zlib", "deflate", "lzx", "bad"};

	return method < sizeof v / sizeof v[0] ? v[method] : "unknown";
}

enum rc arc_open(const struct src *s, const struct src *toc, struct arc *a, struct diag *d)
{
	uint8_t h[64];
	size_t n = s->size < sizeof h ? (size_t)s->size : sizeof h;
	enum rc r;

	memset(a, 0, sizeof *a);
	r = src_read(s, 0, h, n);
	if (r != RC_OK)
		return r;
	switch (arc_kind_of(h, n)) {
	case ARC_EB3:
		r = eb_open(s, a, d);
		break;
	case ARC_BIGF:
	case ARC_BIG4:
		r = big_open(s, a, arc_kind_of(h, n), d);
		break;
	case ARC_SFIL:
		r = sfil_open(s, toc, a, d);
		break;
	default:
		return RC_FORMAT;
	}
	if (r != RC_OK) {
		arc_free(a);
		return r;
	}
	/* Kept for the mount's lifetime: no slack. */
	if (a->paths && a->paths_len)
		a->paths = xshrink_n(a->paths, a->paths_len, 1);
	a->heap_bytes = (uint64_t)a->n * sizeof *a->e + a->paths_len;
	return RC_OK;
}
