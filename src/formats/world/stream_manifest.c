/*
 * CMAP, CSPA and MMAP: the manifests of a district stream kind (docs/worlds.md; public
 * sources: the Skate-File-Format-Documentation "World Collection Streaming Files" notes and
 * andrewnakas/skatemods StreamPacker.cs). Layouts:
 *   CMAP: "CMAP", u32 version, u64 stamp, u32 count, u32 format, u32 names offset, u32 unused;
 *         per collection 0x68: u64 id, u64 parent, u32 offset, u32 size, u32 assets,
 *         char name[64], u32 name offset, 8 bytes padding
 *   CSPA: "CSPA", u32 version, u64 stamp, u32 count, u32 unused;
 *         per cell 0x50: u64 id, u8 lod, 7 pad, hull min/max, geometry min/max (float4 each)
 *   MMAP: "MMAP", u32 version, u64 stamp, u32 count, u32 unused; per entry u64 id, f32 x, y
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/hash.h"
#include "psgfs/formats/stream_manifest.h"

const struct sm_platform_row sm_platforms[SM_PLATFORMS] = {
    [SM_PS3] = {"ps3", 'p', true},
    [SM_X360] = {"x360", 'x', true},
};

static const char *const sm_magics[SM_FILES] = {"SFIL", "ATOC", "CMAP", "CSPA", "MMAP"};
static const char *const sm_suffix[SM_FILES] = {"sf", "st", "sm", "ss", "mm"};

const char *sm_magic(enum sm_file f)
{
	return (unsigned)f < SM_FILES ? sm_magics[f] : "";
}

void sm_ext(enum sm_platform pf, enum sm_file f, char out[4])
{
	out[0] = (unsigned)pf < SM_PLATFORMS ? sm_platforms[pf].letter : '?';
	out[1] = (unsigned)f < SM_FILES ? sm_suffix[f][0] : '?';
	out[2] = (unsigned)f < SM_FILES ? sm_suffix[f][1] : '?';
	out[3] = '\0';
}

bool sm_ext_parse(const char *ext, enum sm_platform *pf, enum sm_file *f)
{
	if (ext[0] == '.')
		ext++;
	if (strlen(ext) != 3)
		return false;
	for (int p = 0; p < SM_PLATFORMS; p++)
		for (int k = 0; k < SM_FILES; k++) {
			char e[4];

			sm_ext((enum sm_platform)p, (enum sm_file)k, e);
			if (!strcasecmp(e, ext)) {
				*pf = (enum sm_platform)p;
				*f = (enum sm_file)k;
				return true;
			}
		}
	return false;
}

enum sm_file sm_detect(const uint8_t *h, size_t n)
{
	for (int k = SM_CMAP; n >= 4 && k <= SM_MMAP; k++)
		if (!memcmp(h, sm_magics[k], 4))
			return (enum sm_file)k;
	return SM_FILES;
}

static bool sm_be(enum sm_platform pf)
{
	return (unsigned)pf < SM_PLATFORMS ? sm_platforms[pf].big_endian : true;
}

bool sm_stamp_peek(const uint8_t *h, size_t n, enum sm_platform pf, uint64_t *stamp)
{
	struct br r;

	if (n < 16)
		return false;
	for (int k = 0; k < SM_FILES; k++)
		if (!memcmp(h, sm_magics[k], 4)) {
			r = br_at(h, n, sm_be(pf), 8);
			*stamp = br_u64(&r);
			return true;
		}
	return false;
}

bool sm_stamps_agree(const struct sm_stamp *v, size_t n, struct diag *d)
{
	bool ok = true;

	for (size_t i = 1; i < n; i++)
		if (v[i].stamp != v[0].stamp) {
			diag_add(d, "stamp: %s has 0x%016llx, %s has 0x%016llx", v[i].file,
				 (unsigned long long)v[i].stamp, v[0].file,
				 (unsigned long long)v[0].stamp);
			ok = false;
		}
	return ok;
}

uint64_t sm_collection_id(const char *name)
{
	return fnv1_64(name, strlen(name));
}

uint64_t sm_global_id(const char *kind, const char *dist)
{
	uint64_t h = fnv1_64_update(FNV64_BASIS, "c", 1);

	h = fnv1_64_update(h, kind, strlen(kind));
	h = fnv1_64_update(h, "_Global_", 8);
	return fnv1_64_update(h, dist, strlen(dist));
}

/* ---- reading ---- */

/* The header and the records the file holds: *raw has n records of rec bytes. */
static enum rc sm_load(const struct src *s, enum sm_file kind, enum sm_platform pf, size_t hdr,
		       size_t rec, struct sm_header *h, uint8_t **raw, uint32_t *n, struct diag *d)
{
	const char *mg = sm_magics[kind];
	uint8_t b[SM_CMAP_HDR];
	uint64_t cap, bytes;
	struct br r;
	enum rc rc;

	*raw = NULL;
	*n = 0;
	memset(h, 0, sizeof *h);
	if (s->size < 4)
		return RC_FORMAT;
	rc = src_read(s, 0, b, 4);
	if (rc != RC_OK)
		return rc;
	if (memcmp(b, mg, 4))
		return RC_FORMAT;
	if (s->size < hdr) {
		diag_add(d, "%s: the file is %llu bytes; its header alone is %zu", mg,
			 (unsigned long long)s->size, hdr);
		return RC_TRUNCATED;
	}
	rc = src_read(s, 0, b, hdr);
	if (rc != RC_OK)
		return rc;
	r = br_at(b, hdr, sm_be(pf), 4);
	h->version = br_u32(&r);
	h->stamp = br_u64(&r);
	h->count = br_u32(&r);
	h->format = br_u32(&r);
	if (hdr == SM_CMAP_HDR) {
		h->names_off = br_u32(&r);
		h->unused = br_u32(&r);
	}
	cap = (s->size - hdr) / rec;
	if (h->count > cap)
		diag_add(d, "%s: claims %u records; the file holds %llu", mg, h->count,
			 (unsigned long long)cap);
	*n = h->count < cap ? h->count : (uint32_t)cap;
	if (!mul_ok(*n, rec, &bytes) || bytes > SIZE_MAX)
		return RC_NOMEM;
	return src_dup(s, hdr, (size_t)bytes, raw);
}

/* One line per record whose id an earlier record has; flags it. Sorted copy, linear. */
struct sm_idx {
	uint64_t id;
	uint32_t i;
};

static int sm_idx_cmp(const void *x, const void *y)
{
	const struct sm_idx *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* ids[i] at stride from base; flags at flag_off of each record. */
static enum rc sm_dups(void *base, size_t stride, size_t id_off, size_t flag_off, uint32_t n,
		       const char *mg, struct diag *d)
{
	struct sm_idx *x = xcalloc_n(n ? n : 1, sizeof *x);
	uint8_t *p = base;

	if (!x)
		return RC_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&x[i].id, p + (size_t)i * stride + id_off, sizeof x[i].id);
		x[i].i = i;
	}
	qsort(x, n, sizeof *x, sm_idx_cmp);
	for (uint32_t k = 1, first = 0; k < n; k++) {
		uint32_t i = x[k].i;

		if (x[k].id != x[first].id) {
			first = k;
			continue;
		}
		p[(size_t)i * stride + flag_off] |= SM_F_DUP_ID;
		diag_add(d, "%s: record %u: id 0x%016llx repeats record %u", mg, i,
			 (unsigned long long)x[k].id, x[first].i);
	}
	free(x);
	return RC_OK;
}

static void sm_name(struct sm_collection *c, const uint8_t *raw, uint32_t i, struct diag *d)
{
	size_t len = name_len(raw, SM_NAME_LEN);

	memcpy(c->name, raw, len);
	c->name[len] = '\0';
	name_component(raw, len, c->safe);
	if (len == SM_NAME_LEN) {
		c->flags |= SM_F_NAME;
		diag_add(d, "CMAP: record %u: the name has no NUL within %u bytes", i, SM_NAME_LEN);
	} else if (len == 0) {
		c->flags |= SM_F_NAME;
		diag_add(d, "CMAP: record %u: the name is empty", i);
	}
	if (len && !name_is_safe(raw, len)) {
		c->flags |= SM_F_NAME;
		diag_add(d, "CMAP: record %u: name \"%.*s\" is not a safe file name (shown as %s)",
			 i, (int)len, c->name, c->safe);
	}
}

/* What one kind of manifest is read into: records of rec bytes after a header of hdr, each
 * decoded by its reader into an element of size bytes whose id and flags are at id_off and
 * flag_off (duplicate ids are flagged). */
struct sm_kind {
	enum sm_file file;
	size_t hdr, rec, size, id_off, flag_off;
	void (*record)(void *e, struct br *r, uint32_t i, struct diag *d);
};

/* The header and every record of a manifest of kind k; *v (n elements) is freed on failure. */
static enum rc sm_read(const struct src *s, enum sm_platform pf, const struct sm_kind *k,
		       struct sm_header *h, void **v, uint32_t *n, struct diag *d)
{
	uint8_t *raw, *e = NULL;
	enum rc rc = sm_load(s, k->file, pf, k->hdr, k->rec, h, &raw, n, d);

	if (rc == RC_OK && !(e = xcalloc_n(*n ? *n : 1, k->size)))
		rc = RC_NOMEM;
	for (uint32_t i = 0; rc == RC_OK && i < *n; i++) {
		struct br r = br_at(raw, (size_t)*n * k->rec, sm_be(pf), (size_t)i * k->rec);

		k->record(e + (size_t)i * k->size, &r, i, d);
	}
	if (rc == RC_OK)
		rc = sm_dups(e, k->size, k->id_off, k->flag_off, *n, sm_magics[k->file], d);
	free(raw);
	if (rc != RC_OK) {
		free(e);
		e = NULL;
		*n = 0;
	}
	*v = e;
	return rc;
}

static void sm_cmap_record(void *e, struct br *r, uint32_t i, struct diag *d)
{
	struct sm_collection *c = e;

	c->id = br_u64(r);
	c->parent = br_u64(r);
	c->offset = br_u32(r);
	c->size = br_u32(r);
	c->assets = br_u32(r);
	sm_name(c, br_take(r, SM_NAME_LEN), i, d);
	c->name_off = br_u32(r);
}

static const struct sm_kind sm_cmap_kind = {
    .file = SM_CMAP,
    .hdr = SM_CMAP_HDR,
    .rec = SM_CMAP_REC,
    .size = sizeof(struct sm_collection),
    .id_off = offsetof(struct sm_collection, id),
    .flag_off = offsetof(struct sm_collection, flags),
    .record = sm_cmap_record,
};

static void sm_f4(struct br *r, float v[4])
{
	for (int k = 0; k < 4; k++)
		v[k] = br_f32(r);
}

/* Finite and ordered in x, y, z (w is not a coordinate: 1 in what PACK writes). */
static void sm_box(struct sm_cell *c, const float lo[4], const float hi[4], const char *what,
		   uint32_t i, struct diag *d)
{
	for (int k = 0; k < 4; k++)
		if (!isfinite(lo[k]) || !isfinite(hi[k])) {
			c->flags |= SM_F_NONFIN;
			diag_add(d, "CSPA: record %u: the %s box is not finite", i, what);
			return;
		}
	for (int k = 0; k < 3; k++)
		if (lo[k] > hi[k]) {
			c->flags |= SM_F_UNORDER;
			diag_add(d, "CSPA: record %u: the %s box's minimum %c exceeds its maximum",
				 i, what, "xyz"[k]);
			return;
		}
}

static void sm_cspa_record(void *e, struct br *r, uint32_t i, struct diag *d)
{
	struct sm_cell *c = e;

	c->id = br_u64(r);
	c->lod = br_u8(r);
	br_skip(r, 7);
	sm_f4(r, c->hull_min);
	sm_f4(r, c->hull_max);
	sm_f4(r, c->geom_min);
	sm_f4(r, c->geom_max);
	if (c->lod > SM_LOD_GLOBAL) {
		c->flags |= SM_F_LOD;
		diag_add(d, "CSPA: record %u: level of detail %u (0, 1 or 2 expected)", i, c->lod);
	}
	sm_box(c, c->hull_min, c->hull_max, "hull", i, d);
	sm_box(c, c->geom_min, c->geom_max, "geometry", i, d);
}

static const struct sm_kind sm_cspa_kind = {
    .file = SM_CSPA,
    .hdr = SM_CSPA_HDR,
    .rec = SM_CSPA_REC,
    .size = sizeof(struct sm_cell),
    .id_off = offsetof(struct sm_cell, id),
    .flag_off = offsetof(struct sm_cell, flags),
    .record = sm_cspa_record,
};

static void sm_mmap_record(void *e, struct br *r, uint32_t i, struct diag *d)
{
	struct sm_point *c = e;

	c->id = br_u64(r);
	c->x = br_f32(r);
	c->y = br_f32(r);
	if (!isfinite(c->x) || !isfinite(c->y)) {
		c->flags |= SM_F_NONFIN;
		diag_add(d, "MMAP: record %u: the point is not finite", i);
	}
}

static const struct sm_kind sm_mmap_kind = {
    .file = SM_MMAP,
    .hdr = SM_MMAP_HDR,
    .rec = SM_MMAP_REC,
    .size = sizeof(struct sm_point),
    .id_off = offsetof(struct sm_point, id),
    .flag_off = offsetof(struct sm_point, flags),
    .record = sm_mmap_record,
};

#define SM_READ(kind)                                                                              \
	enum rc sm_##kind##_read(const struct src *s, enum sm_platform pf, struct sm_##kind *out,  \
				 struct diag *d)                                                   \
	{                                                                                          \
		void *v;                                                                           \
		enum rc rc;                                                                        \
                                                                                                   \
		memset(out, 0, sizeof *out);                                                       \
		rc = sm_read(s, pf, &sm_##kind##_kind, &out->h, &v, &out->n, d);                   \
		out->v = v;                                                                        \
		return rc;                                                                         \
	}
SM_READ(cmap)
SM_READ(cspa)
SM_READ(mmap)

#define SM_PARSE(kind)                                                                             \
	enum rc sm_##kind##_parse(const uint8_t *p, size_t n, enum sm_platform pf,                 \
				  struct sm_##kind *out, struct diag *d)                           \
	{                                                                                          \
		struct src s;                                                                      \
		struct src_mem m;                                                                  \
                                                                                                   \
		src_init_mem(&s, &m, p, n);                                                        \
		return sm_##kind##_read(&s, pf, out, d);                                           \
	}
SM_PARSE(cmap)
SM_PARSE(cspa)
SM_PARSE(mmap)

#define SM_FREE(kind)                                                                              \
	void sm_##kind##_free(struct sm_##kind *m)                                                 \
	{                                                                                          \
		free(m->v);                                                                        \
		m->v = NULL;                                                                       \
		m->n = 0;                                                                          \
	}
SM_FREE(cmap)
SM_FREE(cspa)
SM_FREE(mmap)

size_t sm_cmap_heap(const struct sm_cmap *m)
{
	return heap_block(m->v);
}

long sm_cmap_find(const struct sm_cmap *m, uint64_t id)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (m->v[i].id == id)
			return (long)i;
	return -1;
}

/* ---- parents ---- */

/* par[i]: the index of i's parent record (its first with that id), or -1 for a root. */
static enum rc sm_parents(const struct sm_cmap *m, int64_t *par)
{
	struct sm_idx *x = xcalloc_n(m->n ? m->n : 1, sizeof *x);
	uint32_t u = 0;

	if (!x)
		return RC_NOMEM;
	for (uint32_t i = 0; i < m->n; i++)
		x[i] = (struct sm_idx){m->v[i].id, i};
	qsort(x, m->n, sizeof *x, sm_idx_cmp);
	for (uint32_t k = 0; k < m->n; k++) /* keep each id's first record */
		if (k == 0 || x[k].id != x[k - 1].id)
			x[u++] = x[k];
	for (uint32_t i = 0; i < m->n; i++) {
		struct sm_collection *c = &m->v[i];
		uint32_t lo = 0, hi = u;

		par[i] = -1;
		c->flags &= (uint8_t) ~(SM_F_ORPHAN | SM_F_CYCLE);
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (x[mid].id < c->parent)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < u && x[lo].id == c->parent)
			par[i] = x[lo].i;
		else if (c->parent != SM_GLOBAL_PARENT)
			c->flags |= SM_F_ORPHAN;
	}
	free(x);
	return RC_OK;
}

/*
 * Walk up from each unresolved collection, pushing the path, until a root, a resolved one, or
 * one already on the path (a cycle); then resolve the path top down. state: 0 new, 1 on the
 * path, 2 done. Every collection is pushed once: linear.
 */
enum rc sm_cmap_depths(struct sm_cmap *m, uint32_t *cyclic, struct diag *d)
{
	int64_t *par = xcalloc_n(m->n ? m->n : 1, sizeof *par);
	uint32_t *path = xcalloc_n(m->n ? m->n : 1, sizeof *path), bad = 0;
	uint8_t *state = xcalloc_n(m->n ? m->n : 1, 1);
	enum rc rc = par && path && state ? sm_parents(m, par) : RC_NOMEM;

	for (uint32_t i = 0; rc == RC_OK && i < m->n; i++) {
		uint32_t top = 0, depth;
		int64_t j = i;

		while (j >= 0 && state[j] == 0) {
			state[j] = 1;
			path[top++] = (uint32_t)j;
			j = par[j];
		}
		if (j < 0) {
			depth = 0;
		} else if (state[j] == 2) {
			depth =
			    m->v[j].depth == SM_DEPTH_CYCLE ? SM_DEPTH_CYCLE : m->v[j].depth + 1;
		} else { /* j is on the path: path[k..top) is the cycle */
			uint32_t k = top;

			while (path[k - 1] != (uint32_t)j)
				k--;
			diag_add(d,
				 "CMAP: record %u (%s): a parent cycle of %u collection%s, "
				 "id 0x%016llx",
				 (uint32_t)j, m->v[j].name, top - k + 1,
				 top - k + 1 == 1 ? "" : "s", (unsigned long long)m->v[j].id);
			depth = SM_DEPTH_CYCLE;
		}
		/* the top of the path is the nearest to the root */
		while (top > 0) {
			struct sm_collection *c = &m->v[path[--top]];

			c->depth = depth;
			state[path[top]] = 2;
			if (depth == SM_DEPTH_CYCLE) {
				c->flags |= SM_F_CYCLE;
				bad++;
			} else {
				depth = depth + 1;
			}
		}
	}
	free(par);
	free(path);
	free(state);
	if (cyclic)
		*cyclic = bad;
	return rc;
}

/* ---- writing ---- */

static void sm_w32(struct buf *b, enum sm_platform pf, uint32_t v)
{
	if (sm_be(pf))
		buf_u32be(b, v);
	else
		buf_u32le(b, v);
}

static void sm_w64(struct buf *b, enum sm_platform pf, uint64_t v)
{
	if (sm_be(pf)) {
		buf_u64be(b, v);
	} else {
		buf_u32le(b, (uint32_t)v);
		buf_u32le(b, (uint32_t)(v >> 32));
	}
}

static void sm_wf(struct buf *b, enum sm_platform pf, const float *v, int n)
{
	for (int k = 0; k < n; k++)
		sm_w32(b, pf, f32_bits(v[k]));
}

static void sm_whdr(struct buf *b, enum sm_platform pf, enum sm_file kind,
		    const struct sm_header *h, uint32_t n)
{
	buf_put(b, sm_magics[kind], 4);
	sm_w32(b, pf, h->version);
	sm_w64(b, pf, h->stamp);
	sm_w32(b, pf, n);
	sm_w32(b, pf, h->format);
	if (kind == SM_CMAP) {
		sm_w32(b, pf, h->names_off);
		sm_w32(b, pf, h->unused);
	}
}

static enum rc sm_done(struct buf *b)
{
	return b->oom ? RC_NOMEM : RC_OK;
}

enum rc sm_cmap_write(enum sm_platform pf, const struct sm_header *h, const struct sm_collection *v,
		      uint32_t n, struct buf *out)
{
	for (uint32_t i = 0; i < n; i++)
		if (name_len(v[i].name, sizeof v[i].name) >= SM_NAME_LEN)
			return RC_INVAL;
	sm_whdr(out, pf, SM_CMAP, h, n);
	for (uint32_t i = 0; i < n; i++) {
		size_t len = name_len(v[i].name, sizeof v[i].name);

		sm_w64(out, pf, v[i].id);
		sm_w64(out, pf, v[i].parent);
		sm_w32(out, pf, v[i].offset);
		sm_w32(out, pf, v[i].size);
		sm_w32(out, pf, v[i].assets);
		buf_put(out, v[i].name, len);
		buf_zero(out, SM_NAME_LEN - len);
		sm_w32(out, pf, v[i].name_off);
		buf_zero(out, 8);
	}
	return sm_done(out);
}

enum rc sm_cspa_write(enum sm_platform pf, const struct sm_header *h, const struct sm_cell *v,
		      uint32_t n, struct buf *out)
{
	sm_whdr(out, pf, SM_CSPA, h, n);
	for (uint32_t i = 0; i < n; i++) {
		sm_w64(out, pf, v[i].id);
		buf_u8(out, v[i].lod);
		buf_zero(out, 7);
		sm_wf(out, pf, v[i].hull_min, 4);
		sm_wf(out, pf, v[i].hull_max, 4);
		sm_wf(out, pf, v[i].geom_min, 4);
		sm_wf(out, pf, v[i].geom_max, 4);
	}
	return sm_done(out);
}

enum rc sm_mmap_write(enum sm_platform pf, const struct sm_header *h, const struct sm_point *v,
		      uint32_t n, struct buf *out)
{
	sm_whdr(out, pf, SM_MMAP, h, n);
	for (uint32_t i = 0; i < n; i++) {
		sm_w64(out, pf, v[i].id);
		sm_wf(out, pf, &v[i].x, 1);
		sm_wf(out, pf, &v[i].y, 1);
	}
	return sm_done(out);
}
