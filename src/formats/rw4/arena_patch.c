/* Resizing one base resource of an arena (arena_patch.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/arena_patch.h"

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* Rows of a region in ptr order (qsort_r with the arena). */
static int ptr_cmp(const void *x, const void *y, void *arg)
{
	const struct arena *ar = arg;
	const struct arena_dict_entry *a = arena_row(ar, *(const uint32_t *)x);
	const struct arena_dict_entry *b = arena_row(ar, *(const uint32_t *)y);

	if (a->ptr != b->ptr)
		return a->ptr < b->ptr ? -1 : 1;
	return a->size < b->size ? -1 : a->size > b->size;
}

static unsigned region_of(const struct arena_dict_entry *e)
{
	return e->type_id - 0x0001002Fu;
}

/* The region's resources, sorted, each checked to be where the layout can account for it. */
static enum rc region_rows(const struct arena *a, unsigned k, uint32_t **rows, uint32_t *n,
			   char *why, size_t whylen)
{
	uint32_t *v = xcalloc_n(a->n_dict ? a->n_dict : 1, sizeof *v), m = 0;

	if (!v)
		return RC_NOMEM;
	for (uint32_t i = 0; i < a->n_dict; i++) {
		const struct arena_dict_entry *e = arena_row(a, i);

		if (!e->base_resource || region_of(e) != k)
			continue;
		if (!e->readable || (uint64_t)e->ptr + e->size > a->h.rd[k].size ||
		    !pow2(e->align ? e->align : 1) || (e->align && e->ptr % e->align)) {
			free(v);
			return rc_fail(
			    why, whylen, RC_CORRUPT,
			    "base resource %u (0x%X + 0x%X, align 0x%X) does not fit its "
			    "region",
			    i, e->ptr, e->size, e->align);
		}
		v[m++] = i;
	}
	qsort_r(v, m, sizeof *v, ptr_cmp, (void *)a);
	for (uint32_t j = 1; j < m; j++) {
		const struct arena_dict_entry *p = arena_row(a, v[j - 1]), *e = arena_row(a, v[j]);

		if ((uint64_t)p->ptr + p->size > e->ptr) {
			uint32_t r0 = v[j - 1], r1 = v[j];

			free(v);
			return rc_fail(why, whylen, RC_CORRUPT, "base resources %u and %u overlap",
				       r0, r1);
		}
	}
	*rows = v;
	*n = m;
	return RC_OK;
}

/* Everything read by absolute offset lies where moving the regions cannot change it: the
 * sections, subreference records and ordinary objects in the main block, each base resource
 * inside its own region (one reaching into another would read other bytes afterwards). */
static enum rc layout_accounted(const struct arena *a, char *why, size_t whylen)
{
	uint64_t main = a->h.rd[0].size;

	/* tables_end: a types table may lie anywhere the manifest points (fuzz_texmod found one
	 * in a moving region, whose texels then rewrote the types). sub_count, not n_subrefs:
	 * records ignored for passing the end of the file would fit in the grown one. */
	if (a->tables_end > main ||
	    (a->sub_count && (uint64_t)a->sub_records + 8ull * a->sub_count > main))
		return rc_fail(
		    why, whylen, RC_CORRUPT,
		    "the sections, types table or subreference records lie outside the main block");
	for (uint32_t i = 0; i < a->n_dict; i++) {
		const struct arena_dict_entry *e = arena_row(a, i);
		unsigned k = region_of(e);

		if (e->base_resource &&
		    (k >= a->h.n_rd || (uint64_t)e->ptr + e->size > a->h.rd[k].size))
			return rc_fail(why, whylen, RC_CORRUPT,
				       "base resource %u lies outside its region", i);
		if (!e->base_resource && e->readable && e->start + e->size > main)
			return rc_fail(why, whylen, RC_CORRUPT,
				       "object %u lies outside the main block", i);
	}
	return RC_OK;
}

/* New places of the resources after `row` in region order. */
static enum rc relocate(const struct arena *a, struct arena_patch *p, const uint32_t *rows,
			uint32_t n, char *why, size_t whylen)
{
	uint64_t end = 0, old_end = 0;
	bool after = false;

	for (uint32_t j = 0; j < n; j++) {
		const struct arena_dict_entry *e = arena_row(a, rows[j]);
		uint64_t ptr = e->ptr, size = rows[j] == p->row ? p->new_size : e->size;

		if (after)
			ptr = align_up(end, e->align ? e->align : 1);
		after |= rows[j] == p->row;
		if (ptr + size > UINT32_MAX)
			return rc_fail(why, whylen, RC_UNSUPPORTED, "the region would pass 4 GiB");
		p->ptr[rows[j]] = (uint32_t)ptr;
		end = ptr + size;
		old_end = (uint64_t)e->ptr + e->size;
	}
	/* Bytes after the last resource (real files have none) stay after it. */
	end += a->h.rd[p->k].size - old_end;
	if (end > UINT32_MAX)
		return rc_fail(why, whylen, RC_UNSUPPORTED, "the region would pass 4 GiB");
	p->rd[p->k] = (uint32_t)end;
	return RC_OK;
}

enum rc arena_patch_plan(const struct arena *a, uint32_t row, uint64_t new_size,
			 struct arena_patch *p, char *why, size_t whylen)
{
	uint64_t sum = 0;
	uint32_t *rows = NULL, n = 0;
	enum rc r;

	memset(p, 0, sizeof *p);
	if (row >= a->n_dict || !arena_row(a, row)->base_resource || !arena_row(a, row)->readable ||
	    region_of(arena_row(a, row)) >= a->h.n_rd || region_of(arena_row(a, row)) == 0)
		return rc_fail(why, whylen, RC_CORRUPT, "row %u is no readable base resource", row);
	if (new_size > UINT32_MAX)
		return rc_fail(why, whylen, RC_UNSUPPORTED, "a resource of %llu bytes passes 4 GiB",
			       (unsigned long long)new_size);
	p->row = row;
	p->k = region_of(arena_row(a, row));
	p->old_size = arena_row(a, row)->size;
	p->new_size = (uint32_t)new_size;
	p->ptr = xcalloc_n(a->n_dict ? a->n_dict : 1, sizeof *p->ptr);
	if (!p->ptr)
		return RC_NOMEM;
	for (uint32_t i = 0; i < a->n_dict; i++)
		p->ptr[i] = arena_row(a, i)->ptr;
	for (unsigned k = 0; k < a->h.n_rd; k++) {
		p->rd[k] = a->h.rd[k].size;
		sum += a->h.rd[k].size;
	}
	p->same = p->new_size == p->old_size;
	p->total = a->file_size;
	if (p->same)
		return RC_OK;
	if (sum != a->file_size) {
		arena_patch_free(p);
		return rc_fail(why, whylen, RC_CORRUPT,
			       "the resource descriptors add up to %llu bytes, the file has %llu",
			       (unsigned long long)sum, (unsigned long long)a->file_size);
	}
	/* What is rewritten in place (descriptors, dictionary rows) must lie in the main block. */
	if (a->h.rd[0].size < a->h.header_size ||
	    (uint64_t)a->h.dict_start + 24ull * a->n_dict > a->h.rd[0].size) {
		arena_patch_free(p);
		return rc_fail(why, whylen, RC_CORRUPT,
			       "the header or dictionary lies outside the main block (0x%X bytes)",
			       a->h.rd[0].size);
	}
	r = layout_accounted(a, why, whylen);
	if (r == RC_OK)
		r = region_rows(a, p->k, &rows, &n, why, whylen);
	if (r == RC_OK)
		r = relocate(a, p, rows, n, why, whylen);
	p->rows = rows;
	p->n_rows = n;
	if (r != RC_OK) {
		arena_patch_free(p);
		return r;
	}
	p->total = 0;
	for (unsigned k = 0; k < a->h.n_rd; k++)
		p->total += p->rd[k];
	if (p->total > UINT32_MAX) {
		arena_patch_free(p);
		return rc_fail(why, whylen, RC_UNSUPPORTED, "the arena would pass 4 GiB");
	}
	return RC_OK;
}

/* Region k's start in the new file. */
static uint64_t new_base(const struct arena_patch *p, unsigned k)
{
	uint64_t b = p->rd[0];

	for (unsigned j = 1; j < k; j++)
		b += p->rd[j];
	return k ? b : 0;
}

uint64_t arena_patch_start(const struct arena *a, const struct arena_patch *p, uint32_t i)
{
	const struct arena_dict_entry *e = arena_row(a, i);

	if (p->same || !e->base_resource || region_of(e) >= a->h.n_rd)
		return e->start;
	return new_base(p, region_of(e)) + p->ptr[i];
}

static void put_u32(uint8_t *at, uint32_t v, bool be)
{
	for (int i = 0; i < 4; i++)
		at[be ? i : 3 - i] = (uint8_t)(v >> (24 - 8 * i));
}

/*
 * The moved resources of region k, zeros between them and for the resized one, and the bytes
 * after its last one. Each byte is written once: in ptr order (the old and the new, relocate
 * keeps it) only the gaps are cleared, not the whole region before the copies went over it.
 */
static enum rc write_region(const struct src *s, const struct arena *a, const struct arena_patch *p,
			    uint8_t *dst)
{
	uint8_t *out = dst + new_base(p, p->k);
	uint64_t old_base = a->h.region_base[p->k];
	uint64_t last_old = 0, at = 0;
	enum rc r = RC_OK;

	for (uint32_t j = 0; j < p->n_rows && r == RC_OK; j++) {
		uint32_t i = p->rows[j];
		const struct arena_dict_entry *e = arena_row(a, i);

		memset(out + at, 0, p->ptr[i] - at);
		if (i == p->row)
			memset(out + p->ptr[i], 0, p->new_size);
		else
			r = src_read(s, old_base + e->ptr, out + p->ptr[i], e->size);
		last_old = (uint64_t)e->ptr + e->size;
		at = (uint64_t)p->ptr[i] + (i == p->row ? p->new_size : e->size);
	}
	if (r == RC_OK && a->h.rd[p->k].size > last_old)
		r = src_read(s, old_base + last_old, out + at, a->h.rd[p->k].size - last_old);
	return r;
}

enum rc arena_patch_write(const struct src *s, const struct arena *a, const struct arena_patch *p,
			  uint8_t *dst)
{
	const struct arena_header *h = &a->h;
	enum rc r;

	if (p->same)
		return src_read(s, 0, dst, (size_t)a->file_size);
	r = src_read(s, 0, dst, h->rd[0].size);
	for (unsigned k = 1; k < h->n_rd && r == RC_OK; k++) {
		if (k == p->k)
			r = write_region(s, a, p, dst);
		else
			r = src_read(s, h->region_base[k], dst + new_base(p, k), h->rd[k].size);
	}
	if (r != RC_OK)
		return r;
	for (unsigned k = 0; k < h->n_rd; k++)
		put_u32(dst + 0x44 + 8 * k, p->rd[k], a->big_endian);
	for (uint32_t i = 0; i < a->n_dict; i++) {
		uint8_t *row = dst + h->dict_start + 24ull * i;

		put_u32(row, p->ptr[i], a->big_endian);
		if (i == p->row)
			put_u32(row + 8, p->new_size, a->big_endian);
	}
	return RC_OK;
}

void arena_patch_free(struct arena_patch *p)
{
	free(p->ptr);
	free(p->rows);
	p->ptr = NULL;
	p->rows = NULL;
	p->n_rows = 0;
}
