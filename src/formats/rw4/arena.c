/*
 * RW4 arena parser (docs/rw4-arena.md). Reads header, sections, subreference records and
 * dictionary through a bounded source; every count, offset and index is checked against the
 * file before use, and allocations never exceed what the file could hold.
 */
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"

#define AR_SEC_MANIFEST 0x00010004u
#define AR_SEC_TYPES	0x00010005u
#define AR_SEC_EXT	0x00010006u
#define AR_SEC_SUBREFS	0x00010007u
#define AR_SEC_ATOMS	0x00010008u

static const char *const ar_sec_name[4] = {"types", "external arenas", "subreferences", "atoms"};
static const uint32_t ar_sec_tag[4] = {AR_SEC_TYPES, AR_SEC_EXT, AR_SEC_SUBREFS, AR_SEC_ATOMS};
static const uint32_t ar_sec_min[4] = {0x0C, 0x24, 0x1C, 0x0C};

/* Read n bytes at an absolute offset; false when they are not all inside the file. */
static bool ar_read(const struct src *s, uint64_t off, void *dst, size_t n)
{
	return span_ok(s->size, off, n) && src_read(s, off, dst, n) == RC_OK;
}

static const char *ar_label(uint32_t type_id, char buf[16])
{
	return rw_type_label(type_id, buf);
}

/* ---- header ---- */

/* One row per platform: its tag, header layout and the names of its resource descriptors
 * (docs/rw4-arena.md, "Header"; NULL: "RD<k>"). */
static const struct {
	char tag[4];
	enum rw_platform plat;
	unsigned n_rd; /* resource descriptors the platform's header holds */
	const char *rd_name[RW_MAX_RD];
} ar_platforms[] = {
    {"ps3",
     RW_PS3,
     6,
     {"MAINMEMORY", "DISPOSABLE", "UNINITIALIZED", "DISPOSABLE_UNINITIALIZED", "GRAPHICS_SYSTEM",
      "GRAPHICS_LOCAL"}},
    {"xb2",
     RW_XB2,
     5,
     {"MAINMEMORY", "DISPOSABLE", "PHYSICAL", "UNINITIALIZED", "DISPOSABLE_UNINITIALIZED"}},
    {"rev", RW_REV, 4, {"MAINMEMORY"}},
    {"w32", RW_W32, 4, {"MAINMEMORY"}},
};

const char *arena_rd_name(enum rw_platform plat, unsigned k)
{
	static const char *const rd[RW_MAX_RD] = {"RD0", "RD1", "RD2", "RD3", "RD4", "RD5"};

	if (k >= RW_MAX_RD)
		return "RD?";
	for (size_t i = 0; i < sizeof ar_platforms / sizeof ar_platforms[0]; i++)
		if (ar_platforms[i].plat == plat && ar_platforms[i].rd_name[k])
			return ar_platforms[i].rd_name[k];
	return rd[k];
}

/* The magic and the platform tag: which header layout follows. */
static enum rc ar_magic(const struct src *s, struct arena *a)
{
	static const uint8_t pre[4] = {0x89, 'R', 'W', '4'}, suf[4] = {0x0D, 0x0A, 0x1A, 0x0A};
	uint8_t raw[12];

	if (s->size < 12 || src_read(s, 0, raw, 12) != RC_OK)
		return RC_FORMAT;
	if (memcmp(raw, pre, 4) != 0 || memcmp(raw + 8, suf, 4) != 0)
		return RC_FORMAT;
	for (size_t i = 0; i < sizeof ar_platforms / sizeof ar_platforms[0]; i++)
		if (memcmp(raw + 4, ar_platforms[i].tag, 4) == 0) {
			a->h.plat = ar_platforms[i].plat;
			a->h.n_rd = ar_platforms[i].n_rd;
			a->big_endian = a->h.plat != RW_W32;
			memcpy(a->h.magic, raw, 12);
			memcpy(a->h.platform, raw + 4, 3);
			a->h.platform[3] = 0;
			return RC_OK;
		}
	return RC_FORMAT;
}

/* The header's fields after the magic (docs/rw4-arena.md, "Header"). */
static void ar_header_fields(struct br *r, struct arena_header *h)
{
	br_seek(r, 0x0C);
	h->is_big_endian = br_u8(r);
	h->pointer_bits = br_u8(r);
	h->pointer_align = br_u8(r);
	h->unused = br_u8(r);
	br_copy(r, h->major, 4);
	br_copy(r, h->minor, 4);
	h->major[4] = h->minor[4] = 0;
	h->build_no = br_u32(r);
	h->id = br_u32(r);
	h->num_entries = br_u32(r);
	h->num_used = br_u32(r);
	h->alignment = br_u32(r);
	h->virt = br_u32(r);
	h->dict_start = br_u32(r);
	h->sections = br_u32(r);
	h->base = br_u32(r);
	h->unfix_context = br_u32(r);
	h->fix_context = br_u32(r);
	for (unsigned k = 0; k < h->n_rd; k++) {
		h->rd[k].size = br_u32(r);
		h->rd[k].align = br_u32(r);
	}
	for (unsigned k = 0; k < h->n_rd; k++) {
		h->ru[k].size = br_u32(r);
		h->ru[k].align = br_u32(r);
	}
	for (unsigned k = 0; k < h->n_rd; k++)
		h->target_resource[k] = br_u32(r);
	h->arena_group = br_u32(r);
}

/* Where each base-resource region starts, and whether the regions add up to the file. */
static void ar_regions(struct arena *a, uint64_t file_size, struct diag *diag)
{
	struct arena_header *h = &a->h;
	uint64_t sum = 0;

	h->region_base[0] = 0;
	for (unsigned k = 0; k < h->n_rd; k++) {
		sum += h->rd[k].size;
		if (k >= 1) /* rd[0] + sum of rd[1..k-1] */
			h->region_base[k] = sum - h->rd[k].size;
	}
	if (sum != file_size)
		diag_add(diag,
			 "header: resource descriptor sizes add up to %llu, file is %llu bytes",
			 (unsigned long long)sum, (unsigned long long)file_size);
}

/* What the rest of the parse relies on: sections, dictionary and main block inside the file. */
static enum rc ar_header_check(const struct arena *a, uint64_t size, struct diag *diag)
{
	const struct arena_header *h = &a->h;

	if (h->sections > size || h->dict_start > size || h->rd[0].size > size) {
		diag_add(diag,
			 "header: sections 0x%X, dictStart 0x%X or main size 0x%X past end of "
			 "file (%llu bytes)",
			 h->sections, h->dict_start, h->rd[0].size, (unsigned long long)size);
		return RC_CORRUPT;
	}
	if (h->num_used > h->num_entries) {
		diag_add(diag, "header: numUsed %u > numEntries %u", h->num_used, h->num_entries);
		return RC_CORRUPT;
	}
	if (!span_ok(size, h->dict_start, 24ull * h->num_entries)) {
		diag_add(diag, "header: dictionary of %u entries at 0x%X does not fit in the file",
			 h->num_entries, h->dict_start);
		return RC_CORRUPT;
	}
	if (h->sections != h->header_size)
		diag_add(diag, "header: sections at 0x%X, expected 0x%X", h->sections,
			 h->header_size);
	return RC_OK;
}

static enum rc ar_header(const struct src *s, struct arena *a, struct diag *diag)
{
	struct arena_header *h = &a->h;
	uint8_t raw[0xC0];
	struct br r;
	enum rc rc = ar_magic(s, a);

	if (rc != RC_OK)
		return rc;
	h->header_size = 0x48 + 20 * h->n_rd;
	if (s->size < h->header_size)
		return RC_TRUNCATED;
	if (src_read(s, 0, raw, h->header_size) != RC_OK)
		return RC_IO;
	br_init(&r, raw, h->header_size, a->big_endian);
	ar_header_fields(&r, h);
	if (r.err)
		return RC_TRUNCATED;
	if (h->is_big_endian != (a->big_endian ? 1 : 0))
		diag_add(diag, "header: isBigEndian %u does not match platform %s",
			 h->is_big_endian, h->platform);
	if (h->pointer_bits != 32 || h->pointer_align != 4)
		diag_add(diag, "header: pointer size %u bits, alignment %u (expected 32, 4)",
			 h->pointer_bits, h->pointer_align);
	ar_regions(a, s->size, diag);
	return ar_header_check(a, s->size, diag);
}

/* ---- sections ---- */

/* The fields of section i from its first bytes (docs/rw4-arena.md, "Sections"); returns its
 * type word. */
static uint32_t ar_section_fields(struct arena *a, int i, struct br *r)
{
	switch (i) {
	case 0:
		a->types_type = br_u32(r);
		a->n_types = br_u32(r);
		a->types_dict = br_u32(r);
		break;
	case 1:
		a->ext_type = br_u32(r);
		a->ext_count = br_u32(r);
		a->ext_dict = br_u32(r);
		for (int k = 0; k < 3; k++)
			a->ext_records[k] = br_u32(r);
		for (int k = 0; k < 3; k++)
			a->ext_ptrs[k] = br_u32(r);
		break;
	case 2:
		a->sub_type = br_u32(r);
		a->sub_count = br_u32(r);
		a->sub_dict_after_refix = br_u32(r);
		a->sub_records_after_refix = br_u32(r);
		a->sub_dict = br_u32(r);
		a->sub_records = br_u32(r);
		a->sub_num_used = br_u32(r);
		break;
	default:
		a->atoms_type = br_u32(r);
		a->atoms_count = br_u32(r);
		a->atoms_table = br_u32(r);
		return a->atoms_type;
	}
	return i == 0 ? a->types_type : i == 1 ? a->ext_type : a->sub_type;
}

/* The manifest and the four sections it points at; have[i] when section i could be read.
 * *end: the end of what was read. */
static enum rc ar_manifest(const struct src *s, struct arena *a, uint64_t off[4], bool have[4],
			   uint64_t *end, struct diag *diag)
{
	uint64_t base = a->h.sections;
	uint8_t raw[0x24];
	uint32_t type;
	struct br r;

	if (!ar_read(s, base, raw, 0x0C)) {
		diag_add(diag, "manifest at 0x%llX cannot be read", (unsigned long long)base);
		return RC_CORRUPT;
	}
	br_init(&r, raw, 0x0C, a->big_endian);
	a->manifest_type = br_u32(&r);
	a->manifest_count = br_u32(&r);
	a->manifest_dict = br_u32(&r);
	if (a->manifest_type != AR_SEC_MANIFEST || a->manifest_count != 4)
		diag_add(diag, "manifest: type 0x%08X, %u entries (expected 0x%08X, 4)",
			 a->manifest_type, a->manifest_count, AR_SEC_MANIFEST);
	if (!ar_read(s, base + a->manifest_dict, raw, 16)) {
		diag_add(diag, "manifest: offset table at +0x%X cannot be read", a->manifest_dict);
		return RC_CORRUPT;
	}
	*end = base + a->manifest_dict + 16;
	br_init(&r, raw, 16, a->big_endian);
	for (int i = 0; i < 4; i++)
		a->section_off[i] = br_u32(&r);
	for (int i = 0; i < 4; i++) {
		off[i] = base + a->section_off[i];
		if (!ar_read(s, off[i], raw, ar_sec_min[i])) {
			diag_add(diag, "manifest: %s section at 0x%llX lies outside the file",
				 ar_sec_name[i], (unsigned long long)off[i]);
			continue;
		}
		have[i] = true;
		br_init(&r, raw, ar_sec_min[i], a->big_endian);
		type = ar_section_fields(a, i, &r);
		if (type != ar_sec_tag[i])
			diag_add(diag, "%s section: type 0x%08X, expected 0x%08X", ar_sec_name[i],
				 type, ar_sec_tag[i]);
		if (off[i] + ar_sec_min[i] > *end)
			*end = off[i] + ar_sec_min[i];
	}
	if (!have[0]) {
		diag_add(diag, "types section missing");
		return RC_CORRUPT;
	}
	return RC_OK;
}

/* n u32 values at off into out. */
static enum rc ar_read_u32s(const struct src *s, const struct arena *a, uint64_t off, size_t n,
			    uint32_t *out)
{
	uint8_t *t = malloc(n ? 4 * (size_t)n : 1);
	struct br r;

	if (!t)
		return RC_NOMEM;
	if (n && src_read(s, off, t, 4 * (size_t)n) != RC_OK) {
		free(t);
		return RC_IO;
	}
	br_init(&r, t, 4 * (size_t)n, a->big_endian);
	for (size_t i = 0; i < n; i++)
		out[i] = br_u32(&r);
	free(t);
	return RC_OK;
}

/* The types table, capped by the limit and by the bytes the file still has. */
static enum rc ar_types(const struct src *s, struct arena *a, uint64_t types_off, uint64_t *end,
			struct diag *diag)
{
	uint64_t tt = types_off + a->types_dict, avail;
	uint32_t n = a->n_types;
	enum rc r;

	if (tt > s->size) {
		diag_add(diag, "types section: table at 0x%llX past end of file",
			 (unsigned long long)tt);
		return RC_CORRUPT;
	}
	avail = (s->size - tt) / 4;
	if (n > ARENA_MAX_TYPES || n > avail) {
		uint32_t cap = (uint32_t)(avail < ARENA_MAX_TYPES ? avail : ARENA_MAX_TYPES);

		diag_add(diag, "types section: %u types, only %u read", n, cap);
		n = cap;
	}
	a->n_types = n;
	a->types = xcalloc_n(n ? n : 1, sizeof *a->types);
	if (!a->types)
		return RC_NOMEM;
	r = ar_read_u32s(s, a, tt, n, a->types);
	if (r == RC_OK && n && tt + 4ull * n > *end)
		*end = tt + 4ull * n;
	return r;
}

/* The layout real files have: the sections follow each other in manifest order (C-bin). */
static void ar_layout_check(struct arena *a, const uint64_t off[4], const bool have[4],
			    uint64_t end, struct diag *diag)
{
	if (a->section_off[0] != 0x1C || a->section_off[1] != 0x1C + 0x0C + 4 * a->n_types ||
	    a->section_off[2] != a->section_off[1] + 0x24 ||
	    a->section_off[3] != a->section_off[2] + 0x1C)
		diag_add(diag, "manifest: unusual section offsets [0x%X, 0x%X, 0x%X, 0x%X]",
			 a->section_off[0], a->section_off[1], a->section_off[2],
			 a->section_off[3]);
	a->sections_end = have[3] ? off[3] + 0x0C : end;
	a->tables_end = end > a->sections_end ? end : a->sections_end;
	if (a->sections_end > a->h.dict_start)
		diag_add(diag, "dictionary at 0x%X starts inside the sections (end 0x%llX)",
			 a->h.dict_start, (unsigned long long)a->sections_end);
}

/* Subreference records: a bad section is reported and ignored, not fatal. */
static enum rc ar_subrefs(const struct src *s, struct arena *a, struct diag *diag)
{
	uint64_t bytes, want_rec = (uint64_t)a->h.dict_start + 24ull * a->h.num_entries;
	enum rc r = RC_OK;

	if (a->sub_count) {
		if (!mul_ok(a->sub_count, 8, &bytes) || !span_ok(s->size, a->sub_records, bytes)) {
			diag_add(diag,
				 "subreferences: %u records at 0x%X do not fit in the file; "
				 "ignored",
				 a->sub_count, a->sub_records);
		} else {
			uint32_t *t = xcalloc_n(2 * (size_t)a->sub_count, sizeof *t);

			a->subrefs = xcalloc_n(a->sub_count, sizeof *a->subrefs);
			r = t && a->subrefs
				? ar_read_u32s(s, a, a->sub_records, 2 * (size_t)a->sub_count, t)
				: RC_NOMEM;
			for (uint32_t i = 0; r == RC_OK && i < a->sub_count; i++) {
				a->subrefs[i].object = t[2 * i];
				a->subrefs[i].offset = t[2 * i + 1];
			}
			free(t);
			if (r != RC_OK)
				return r;
			a->n_subrefs = a->sub_count;
		}
	}
	if (a->sub_records != want_rec)
		diag_add(diag, "subreferences: records at 0x%X, expected 0x%llX", a->sub_records,
			 (unsigned long long)want_rec);
	if (a->sub_dict != (uint64_t)a->sub_records + 8ull * a->sub_count)
		diag_add(diag, "subreferences: dict at 0x%X, expected 0x%llX", a->sub_dict,
			 (unsigned long long)a->sub_records + 8ull * a->sub_count);
	if (a->sub_num_used != a->sub_count)
		diag_add(diag, "subreferences: numUsed %u != numEntries %u", a->sub_num_used,
			 a->sub_count);
	return r;
}

static enum rc ar_sections(const struct src *s, struct arena *a, struct diag *diag)
{
	uint64_t off[4] = {0}, end = a->h.sections;
	bool have[4] = {false};
	enum rc r = ar_manifest(s, a, off, have, &end, diag);

	if (r == RC_OK)
		r = ar_types(s, a, off[0], &end, diag);
	if (r != RC_OK)
		return r;
	ar_layout_check(a, off, have, end, diag);
	return have[2] ? ar_subrefs(s, a, diag) : RC_OK;
}

/* ---- dictionary ---- */

/* Where row i's bytes lie: in its base-resource region, else in the object area. */
static void ar_place(const struct arena *a, struct arena_dict_entry *e, uint32_t i, const char *nm,
		     struct diag *diag)
{

	e->readable = true;
	if (e->base_resource) {
		uint32_t k = e->type_id - 0x0001002Fu;

		if (k >= a->h.n_rd) {
			diag_add(diag,
				 "object %u (%s): resource descriptor %u does not exist on %s", i,
				 nm, k, a->h.platform);
			e->readable = false;
			e->start = 0;
			return;
		}
		e->start = a->h.region_base[k] + e->ptr;
		if ((uint64_t)e->ptr + e->size > a->h.rd[k].size)
			diag_add(diag,
				 "object %u (%s): 0x%X + 0x%X past the end of resource %u (0x%X "
				 "bytes)",
				 i, nm, e->ptr, e->size, k, a->h.rd[k].size);
	} else {
		e->start = e->ptr;
		if (e->start < a->sections_end || e->start >= a->h.dict_start)
			diag_add(diag,
				 "object %u (%s): offset 0x%X outside the object area [0x%llX, "
				 "0x%X)",
				 i, nm, e->ptr, (unsigned long long)a->sections_end,
				 a->h.dict_start);
	}
	if (!span_ok(a->file_size, e->start, e->size)) {
		diag_add(diag, "object %u (%s): bytes 0x%llX + 0x%X past end of file (%llu bytes)",
			 i, nm, (unsigned long long)e->start, e->size,
			 (unsigned long long)a->file_size);
		e->readable = false;
	}
	if (e->align > 1 && e->ptr % e->align)
		diag_add(diag, "object %u (%s): offset 0x%X not aligned to %u", i, nm, e->ptr,
			 e->align);
}

/* Row i from its 24 bytes into e, its type checked against the types table. */
static void ar_row(const struct arena *a, struct arena_dict_entry *e, uint32_t i, struct br *r,
		   struct diag *diag)
{
	char lb[16];
	const char *nm;

	e->ptr = br_u32(r);
	e->reloc = br_u32(r);
	e->size = br_u32(r);
	e->align = br_u32(r);
	e->type_index = br_u32(r);
	e->type_id = br_u32(r);
	nm = ar_label(e->type_id, lb);
	if (e->type_index >= a->n_types)
		diag_add(diag, "object %u (%s): type index %u out of range (%u types)", i, nm,
			 e->type_index, a->n_types);
	else if (a->types[e->type_index] != e->type_id)
		diag_add(diag, "object %u (%s): type index %u names 0x%08X, row says 0x%08X", i, nm,
			 e->type_index, a->types[e->type_index], e->type_id);
	e->base_resource = rw_is_base_resource(e->type_id);
	ar_place(a, e, i, nm, diag);
}

/* A subreference names a byte inside an object that exists. */
static void ar_subrefs_check(struct arena *a, struct diag *diag)
{
	char lb[16];

	for (uint32_t i = 0; i < a->n_subrefs; i++) {
		struct arena_subref *r = &a->subrefs[i];

		if (r->object >= a->n_dict)
			diag_add(diag, "subreference %u: object %u out of range (%u objects)", i,
				 r->object, a->n_dict);
		else if (r->offset >= arena_row(a, r->object)->size)
			diag_add(
			    diag, "subreference %u: offset 0x%X past object %u (%s, 0x%X bytes)", i,
			    r->offset, r->object, ar_label(arena_row(a, r->object)->type_id, lb),
			    arena_row(a, r->object)->size);
		else
			r->valid = true;
	}
}

/* Rows read per pread: the dictionary is never held as raw bytes. */
#define AR_DICT_CHUNK 2048u

/* The rows being read: the runs so far and the raw bytes of the last row. */
struct ar_dict_build {
	size_t cap_runs, cap_first;
	uint8_t last[24];
	uint32_t run_problems; /* problem lines the current run's first row gave */
};

/* Close the current run: one line for its repeats when its first row had problems. */
static void ar_run_end(struct arena *a, const struct ar_dict_build *b, uint32_t end,
		       struct diag *diag)
{
	uint32_t first;

	if (!a->n_runs || !b->run_problems)
		return;
	first = a->run_first[a->n_runs - 1];
	if (end - first > 1)
		diag_add(diag, "objects %u to %u: %u more rows identical to object %u", first + 1,
			 end - 1, end - first - 1, first);
}

/* Row i (raw bytes p) extends the current run or starts a new one. */
static enum rc ar_dict_row(struct arena *a, struct ar_dict_build *b, uint32_t i, const uint8_t *p,
			   struct diag *diag)
{
	struct arena_dict_entry *runs;
	uint32_t *first;
	size_t before;
	struct br r;

	if (a->n_runs && memcmp(b->last, p, 24) == 0)
		return RC_OK;
	ar_run_end(a, b, i, diag);
	runs = xgrow_n(a->runs, a->n_runs, &b->cap_runs, sizeof *runs, 64);
	if (runs)
		a->runs = runs;
	first = xgrow_n(a->run_first, a->n_runs, &b->cap_first, sizeof *first, 64);
	if (first)
		a->run_first = first;
	if (!runs || !first)
		return RC_NOMEM;
	memset(&a->runs[a->n_runs], 0, sizeof *a->runs);
	a->run_first[a->n_runs] = i;
	before = diag ? diag_count(diag) : 0;
	br_init(&r, p, 24, a->big_endian);
	ar_row(a, &a->runs[a->n_runs], i, &r, diag);
	b->run_problems = (uint32_t)((diag ? diag_count(diag) : 0) - before);
	memcpy(b->last, p, 24);
	a->n_runs++;
	return RC_OK;
}

/* Runs cut to length; a flat array of rows instead when the runs save nothing. */
static enum rc ar_dict_settle(struct arena *a)
{
	struct arena_dict_entry *flat;

	if ((uint64_t)a->n_runs * (sizeof *a->runs + sizeof *a->run_first) <
	    (uint64_t)a->n_dict * sizeof *a->runs) {
		a->runs = xshrink_n(a->runs, a->n_runs ? a->n_runs : 1, sizeof *a->runs);
		a->run_first =
		    xshrink_n(a->run_first, a->n_runs ? a->n_runs : 1, sizeof *a->run_first);
		return RC_OK;
	}
	/* Few repeats: n_dict rows cost no more than the runs did. */
	flat = xcalloc_n(a->n_dict ? a->n_dict : 1, sizeof *flat);
	if (!flat)
		return RC_NOMEM;
	for (uint32_t k = 0; k < a->n_runs; k++) {
		uint32_t end = k + 1 < a->n_runs ? a->run_first[k + 1] : a->n_dict;

		for (uint32_t i = a->run_first[k]; i < end; i++)
			flat[i] = a->runs[k];
	}
	free(a->runs);
	free(a->run_first);
	a->runs = flat;
	a->run_first = NULL;
	a->n_runs = a->n_dict;
	return RC_OK;
}

static enum rc ar_dict(const struct src *s, struct arena *a, struct diag *diag)
{
	uint32_t n = a->h.num_used;
	struct ar_dict_build b = {0};
	uint8_t *t = malloc(24 * AR_DICT_CHUNK);
	enum rc r = t ? RC_OK : RC_NOMEM;

	/* ar_header checked that numEntries (>= numUsed) rows fit in the file. */
	a->n_dict = n;
	for (uint32_t i = 0; r == RC_OK && i < n;) {
		uint32_t k = n - i < AR_DICT_CHUNK ? n - i : AR_DICT_CHUNK;

		if (src_read(s, a->h.dict_start + 24ull * i, t, 24 * (size_t)k) != RC_OK)
			r = RC_IO;
		for (uint32_t j = 0; r == RC_OK && j < k; j++)
			r = ar_dict_row(a, &b, i + j, t + 24 * (size_t)j, diag);
		i += k;
	}
	free(t);
	if (r == RC_OK) {
		ar_run_end(a, &b, n, diag);
		r = ar_dict_settle(a);
	}
	if (r == RC_OK)
		ar_subrefs_check(a, diag);
	return r;
}

const struct arena_dict_entry *arena_row_run(const struct arena *a, uint32_t i)
{
	uint32_t lo = 0, hi = a->n_runs; /* run_first[lo] <= i < run_first[hi] */

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a->run_first[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	return &a->runs[lo];
}

size_t arena_heap_bytes(const struct arena *a)
{
	return sizeof *a + (size_t)a->n_types * sizeof *a->types +
	       (size_t)a->n_subrefs * sizeof *a->subrefs + (size_t)a->n_runs * sizeof *a->runs +
	       (a->run_first ? (size_t)a->n_runs * sizeof *a->run_first : 0);
}

enum rc arena_open(const struct src *s, struct arena *a, struct diag *diag)
{
	enum rc r;

	memset(a, 0, sizeof *a);
	a->file_size = s->size;
	r = ar_header(s, a, diag);
	if (r == RC_OK)
		r = ar_sections(s, a, diag);
	if (r == RC_OK)
		r = ar_dict(s, a, diag);
	if (r != RC_OK)
		arena_free(a);
	return r;
}

void arena_free(struct arena *a)
{
	free(a->types);
	free(a->subrefs);
	free(a->runs);
	free(a->run_first);
	memset(a, 0, sizeof *a);
}

enum rc arena_read_object(const struct src *s, const struct arena *a, uint32_t i, uint8_t **out,
			  size_t *len)
{
	enum rc r;

	*out = NULL;
	*len = 0;
	if (i >= a->n_dict || !arena_row(a, i)->readable)
		return RC_BOUNDS;
	r = src_dup(s, arena_row(a, i)->start, arena_row(a, i)->size, out);
	if (r == RC_OK)
		*len = arena_row(a, i)->size;
	return r;
}

enum rc arena_resolve_ref(const struct arena *a, uint32_t v, uint32_t *obj, uint32_t *off)
{
	uint32_t i;

	*obj = 0;
	*off = 0;
	switch (v >> 22) {
	case 0:
		if (v == 0)
			return RC_NOENT;
		if (v >= a->n_dict)
			return RC_BOUNDS;
		*obj = v;
		return RC_OK;
	case 1:
		return RC_NOENT;
	case 2:
		i = v & 0x3FFFFFu;
		if (i >= a->n_subrefs || !a->subrefs[i].valid)
			return RC_BOUNDS;
		*obj = a->subrefs[i].object;
		*off = a->subrefs[i].offset;
		return RC_OK;
	default:
		return RC_UNSUPPORTED;
	}
}

bool arena_type_fits(uint32_t type_id, uint32_t want)
{
	switch (want) {
	case ARENA_WANT_BASERES:
		return rw_is_base_resource(type_id);
	case ARENA_WANT_UNKNOWN:
		return true;
	default:
		return type_id == want;
	}
}

const char *arena_want_name(uint32_t want, char buf[16])
{
	if (want == ARENA_WANT_BASERES)
		return "BaseResource";
	if (want == ARENA_WANT_UNKNOWN)
		return "anything";
	return rw_type_label(want, buf);
}

enum rc arena_ref_to(const struct arena *a, uint32_t v, uint32_t want, uint32_t *obj, uint32_t *off)
{
	enum rc r;

	if (v == 0) { /* row 0 first; null only when it cannot be what the field wants */
		*obj = *off = 0;
		if (want == ARENA_WANT_UNKNOWN || !a->n_dict ||
		    !arena_type_fits(arena_row(a, 0)->type_id, want))
			return RC_NOENT;
		return RC_OK;
	}
	r = arena_resolve_ref(a, v, obj, off);
	if (r != RC_OK)
		return r;
	return arena_type_fits(arena_row(a, *obj)->type_id, want) ? RC_OK : RC_CORRUPT;
}

uint32_t arena_find_type(const struct arena *a, uint32_t type_id)
{
	for (uint32_t k = 0; k < a->n_runs; k++)
		if (a->runs[k].type_id == type_id)
			return a->run_first ? a->run_first[k] : k;
	return UINT32_MAX;
}
