/*
 * The texture GUIDs of an arena's TableOfContents, read cheaply and boundedly for the mount's
 * index of texture arenas by content (docs/skate-objects.md, "Texture arenas under any name"):
 * the header, sections and dictionary as arena_open reads them and the TableOfContents objects,
 * through a source that refuses to read more than a fixed number of bytes in all. Texture
 * data is never read. Only entries whose object resolves to a Texture row count: a TOC naming
 * a GUID on anything else is not taken at its word.
 */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/skate_objects.h"

struct capped {
	const struct src *s;
	uint64_t left;
	bool over;
};

static enum rc capped_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct capped *c = ctx;

	if (n > c->left) {
		c->over = true;
		return RC_IO;
	}
	c->left -= n;
	return src_read(c->s, off, dst, n);
}

static bool has_texture_row(const struct arena *a)
{
	for (uint32_t k = 0; k < a->n_runs; k++)
		if (a->runs[k].type_id == RW_T_TEXTURE)
			return true;
	return false;
}

static int by_value(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* Sorted, each GUID once. */
static size_t unique(uint64_t *v, size_t n)
{
	size_t w = 0;

	qsort(v, n, sizeof *v, by_value);
	for (size_t i = 0; i < n; i++)
		if (!w || v[w - 1] != v[i])
			v[w++] = v[i];
	return w;
}

static enum rc collect(const struct arena *a, const struct skate_toc_item *it, size_t n_it,
		       size_t max_guids, uint64_t **out, size_t *n)
{
	size_t cap = n_it < max_guids ? n_it : max_guids;
	uint64_t *v = xcalloc_n(cap ? cap : 1, sizeof *v);
	size_t got = 0;

	if (!v)
		return RC_NOMEM;
	for (size_t k = 0; k < n_it && got < cap; k++)
		if (it[k].object < a->n_dict && arena_row(a, it[k].object)->type_id == RW_T_TEXTURE)
			v[got++] = it[k].guid;
	*n = unique(v, got);
	*out = v;
	return RC_OK;
}

enum rc skate_toc_texture_guids(const struct src *s, uint64_t max_bytes, size_t max_guids,
				uint64_t **out, size_t *n)
{
	struct capped c = {s, max_bytes, false};
	struct src cs = {capped_read, &c, s->size};
	struct skate_toc_item *it = NULL;
	struct arena a;
	struct diag d;
	size_t n_it = 0;
	enum rc r;

	*out = NULL;
	*n = 0;
	diag_init(&d);
	memset(&a, 0, sizeof a);
	r = arena_open(&cs, &a, &d);
	if (r == RC_OK && !has_texture_row(&a))
		r = RC_UNSUPPORTED;
	if (r == RC_OK)
		r = skate_toc_entries(&cs, &a, &it, &n_it, &d);
	/* A TOC object cut by the cap is skipped by skate_toc_entries: the arena is refused
	 * whole rather than indexed in part. */
	if (r == RC_OK && c.over)
		r = RC_TOOBIG;
	if (r == RC_OK)
		r = collect(&a, it, n_it, max_guids, out, n);
	if (r != RC_OK && c.over && r != RC_NOMEM)
		r = RC_TOOBIG;
	skate_toc_items_free(it, n_it);
	arena_free(&a);
	diag_free(&d);
	return r;
}
