/*
 * The GUID index of per-texture arenas (guid_index.h). Entries are appended as they are fed
 * and sorted by (GUID, path) on the next lookup, so feeding stays O(1) and a lookup after a
 * build of n entries costs one sort, then O(log n). Two locks: build_mu is held across the
 * build callback (which feeds, taking mu), so the walk runs once and concurrent first users
 * wait for it; mu guards the entries.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/registry.h"
#include "tree/mount/guid_index.h"

struct gi_ent {
	uint64_t guid;
	uint32_t slot;
	char *path;
};

struct guid_index {
	pthread_mutex_t build_mu, mu;
	guid_index_build_fn build;
	void *ctx;
	bool built;
	bool partial; /* the build stopped at one of its bounds (guid_index_set_partial) */
	struct gi_ent *v;
	size_t n, cap;
	bool sorted;
};

struct guid_index *guid_index_new(guid_index_build_fn build, void *ctx)
{
	struct guid_index *ix = calloc(1, sizeof *ix);

	if (!ix)
		return NULL;
	pthread_mutex_init(&ix->build_mu, NULL);
	pthread_mutex_init(&ix->mu, NULL);
	ix->build = build;
	ix->ctx = ctx;
	ix->built = !build;
	ix->sorted = true;
	return ix;
}

void guid_index_free(struct guid_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n; i++)
		free(ix->v[i].path);
	free(ix->v);
	pthread_mutex_destroy(&ix->build_mu);
	pthread_mutex_destroy(&ix->mu);
	free(ix);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "0x" + 16 hex + ".psg"/".rx2", or 16 hex + ".psg"; any case. */
bool guid_index_name(const char *name, uint64_t *guid)
{
	const char *p = name, *ext;
	uint64_t g = 0;
	bool prefixed = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');

	if (prefixed)
		p += 2;
	for (int i = 0; i < 16; i++) {
		int d = hexval(p[i]);

		if (d < 0)
			return false;
		g = g << 4 | (uint64_t)d;
	}
	/* An arena's extension (registry.h) right after the hex; without 0x only .psg, as
	 * the PS3 tools name them. */
	ext = p + 16;
	if (*ext != '.' || strchr(ext + 1, '.') || !fmt_name_is(name, FMT_PSG) ||
	    (!prefixed && strcasecmp(ext, ".psg") != 0))
		return false;
	*guid = g;
	return true;
}

enum rc guid_index_feed(struct guid_index *ix, const char *path, uint32_t slot)
{
	const char *name = strrchr(path, '/');
	uint64_t guid;

	if (!guid_index_name(name ? name + 1 : path, &guid))
		return RC_OK;
	return guid_index_feed_guid(ix, path, guid, slot);
}

enum rc guid_index_feed_guid(struct guid_index *ix, const char *path, uint64_t guid, uint32_t slot)
{
	struct gi_ent *v;
	char *dup;

	dup = strdup(path);
	if (!dup)
		return RC_NOMEM;
	pthread_mutex_lock(&ix->mu);
	v = xgrow_n(ix->v, ix->n, &ix->cap, sizeof *v, 64);
	if (v) {
		ix->v = v;
		ix->v[ix->n++] = (struct gi_ent){guid, slot, dup};
		ix->sorted = false;
	}
	pthread_mutex_unlock(&ix->mu);
	if (!v) {
		free(dup);
		return RC_NOMEM;
	}
	return RC_OK;
}

static int by_guid_path(const void *pa, const void *pb)
{
	const struct gi_ent *a = pa, *b = pb;

	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return strcmp(a->path, b->path);
}

/* Sorted, one entry per (GUID, path), keeping a known slot (under mu). */
static void gi_sort(struct guid_index *ix)
{
	size_t w = 0;

	if (ix->sorted)
		return;
	qsort(ix->v, ix->n, sizeof *ix->v, by_guid_path);
	for (size_t i = 0; i < ix->n; i++) {
		if (w && by_guid_path(&ix->v[w - 1], &ix->v[i]) == 0) {
			if (!ix->v[w - 1].slot)
				ix->v[w - 1].slot = ix->v[i].slot;
			free(ix->v[i].path);
			continue;
		}
		ix->v[w++] = ix->v[i];
	}
	ix->n = w;
	ix->sorted = true;
}

void guid_index_set_slot(struct guid_index *ix, const char *path, uint32_t slot)
{
	pthread_mutex_lock(&ix->mu);
	for (size_t i = 0; i < ix->n; i++) /* rare: once per arena first opened */
		if (strcmp(ix->v[i].path, path) == 0)
			ix->v[i].slot = slot;
	pthread_mutex_unlock(&ix->mu);
}

static void gi_build(struct guid_index *ix)
{
	pthread_mutex_lock(&ix->build_mu);
	if (!ix->built) {
		ix->build(ix->ctx, ix);
		ix->built = true;
	}
	pthread_mutex_unlock(&ix->build_mu);
}

static bool ext_is(const char *path, const char *ext)
{
	const char *dot = strrchr(path, '.');

	return !ext || (dot && strcasecmp(dot + 1, ext) == 0);
}

size_t guid_index_find(struct guid_index *ix, uint64_t guid, const char *ext, struct guid_hit *out,
		       size_t max)
{
	size_t lo = 0, hi, got = 0;

	gi_build(ix);
	pthread_mutex_lock(&ix->mu);
	gi_sort(ix);
	hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->v[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Pass 0: the model's own extension; pass 1: the others. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = lo; i < ix->n && ix->v[i].guid == guid && got < max; i++) {
			if (ext_is(ix->v[i].path, ext) == (pass == 1))
				continue;
			out[got].path = strdup(ix->v[i].path);
			if (!out[got].path)
				break;
			out[got++].slot = ix->v[i].slot;
		}
		if (!ext)
			break;
	}
	pthread_mutex_unlock(&ix->mu);
	return got;
}

size_t guid_index_count(struct guid_index *ix)
{
	size_t n;

	gi_build(ix);
	pthread_mutex_lock(&ix->mu);
	gi_sort(ix);
	n = ix->n;
	pthread_mutex_unlock(&ix->mu);
	return n;
}

bool guid_index_built(struct guid_index *ix)
{
	bool b;

	pthread_mutex_lock(&ix->build_mu);
	b = ix->built;
	pthread_mutex_unlock(&ix->build_mu);
	return b;
}

void guid_index_set_partial(struct guid_index *ix)
{
	pthread_mutex_lock(&ix->mu);
	ix->partial = true;
	pthread_mutex_unlock(&ix->mu);
}

bool guid_index_partial(struct guid_index *ix)
{
	bool b;

	pthread_mutex_lock(&ix->mu);
	b = ix->partial;
	pthread_mutex_unlock(&ix->mu);
	return b;
}
