/*
 * A district's manifests, collection headers and text views (district.h, docs/worlds.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formats/world/district.h"
#include "psgfs/base/bytes.h"

const char *const dist_kind_names[DIST_KINDS] = {"Pres", "Sim", "Tex"};

#define SF_HDR	 0x20u /* collection header fields read */
#define SF_ASSET 0x18u /* asset header fields read */
#define ATOC_HDR 24u

bool dist_map_name(const char *name, char *dist, enum sm_platform *pf)
{
	static const char suffix[] = "_pres.";
	size_t n = strlen(name), k = sizeof suffix - 1;
	enum sm_file f;

	/* "<dist>_Pres.?sm" with a district name of at least one byte */
	if (n < k + 3 + 1 || n - k - 3 > NAME_COMPONENT_MAX)
		return false;
	if (strncasecmp(name + n - k - 3, suffix, k) != 0)
		return false;
	if (!sm_ext_parse(name + n - 3, pf, &f) || f != SM_CMAP)
		return false;
	memcpy(dist, name, n - k - 3);
	dist[n - k - 3] = '\0';
	return true;
}

bool dist_is_map(const char *name)
{
	char dist[NAME_COMPONENT_MAX + 1];
	enum sm_platform pf;

	return dist_map_name(name, dist, &pf);
}

/* ---- reading ---- */

/* "<dist>_<Kind>.<ext>" of file f. */
static void kind_file(const struct district *m, enum dist_kind k, enum sm_file f, char *out,
		      size_t n)
{
	char ext[4];

	sm_ext(m->pf, f, ext);
	snprintf(out, n, "%s_%s.%s", m->dist, dist_kind_names[k], ext);
}

/* Lines of one parse, each prefixed with the file's name. */
static void diag_move(struct diag *to, struct diag *from, const char *file)
{
	for (size_t i = 0; i < from->n; i++)
		diag_add(to, "%s: %s", file, from->msg[i]);
	if (from->dropped)
		diag_add(to, "%s: %zu more problems not listed", file, from->dropped);
	diag_free(from);
}

static int ix_cmp(const void *x, const void *y)
{
	const struct dist_id_ix *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int id_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* An index of n records by the id each has at id_of(i). */
static struct dist_id_ix *ix_build(const void *v, size_t stride, uint32_t n)
{
	struct dist_id_ix *ix = xcalloc_n(n ? n : 1, sizeof *ix);

	if (!ix)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		ix[i] = (struct dist_id_ix){*(const uint64_t *)((const char *)v + i * stride), i};
	qsort(ix, n, sizeof *ix, ix_cmp);
	return ix;
}

/* The first record with this id, or -1. */
static long ix_find(const struct dist_id_ix *ix, uint32_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	if (!ix)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ix[lo].id == id ? (long)ix[lo].i : -1;
}

static bool ids_has(const uint64_t *v, uint32_t n, uint64_t id)
{
	return n && bsearch(&id, v, n, sizeof *v, id_cmp) != NULL;
}

/* The ATOC table: its ids (the record size as sfil.c decides it: what fills the file). */
static enum rc atoc_read(const struct src *s, struct dist_atoc *a, struct diag *d)
{
	uint8_t h[ATOC_HDR];
	uint64_t count, n, rec = 64;
	enum rc r = src_read(s, 0, h, sizeof h);

	if (r != RC_OK)
		return s->size < ATOC_HDR ? RC_TRUNCATED : r;
	if (memcmp(h, "ATOC", 4) != 0)
		return RC_FORMAT;
	count = ld_u32be(h + 16);
	if (count && s->size == ATOC_HDR + count * 72)
		rec = 72;
	n = (s->size - ATOC_HDR) / rec;
	if (n < count)
		diag_add(d, "ATOC: claims %llu assets; the file holds %llu",
			 (unsigned long long)count, (unsigned long long)n);
	n = n < count ? n : count;
	a->ids = xcalloc_n(n ? (size_t)n : 1, sizeof *a->ids);
	if (!a->ids)
		return RC_NOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint8_t b[8];

		if ((r = src_read(s, ATOC_HDR + i * rec, b, 8)) != RC_OK)
			return r;
		a->ids[i] = ld_u64be(b);
	}
	a->n = (uint32_t)n;
	qsort(a->ids, a->n, sizeof *a->ids, id_cmp);
	return RC_OK;
}

static const char *rc_why(enum rc r)
{
	switch (r) {
	case RC_FORMAT:
		return "not the expected magic";
	case RC_TRUNCATED:
		return "shorter than its header";
	default:
		return rc_str(r);
	}
}

/* One manifest of kind k: parsed into its slot of ks, or its state set to say why not. */
static enum rc load_file(struct district *m, enum dist_kind k, enum sm_file f, const struct src *s)
{
	struct dist_kind_set *ks = &m->k[k];
	struct diag d;
	uint8_t h[16];
	char file[NAME_COMPONENT_MAX + 16];
	enum rc r;

	kind_file(m, k, f, file, sizeof file);
	diag_init(&d);
	switch (f) {
	case SM_CMAP:
		r = sm_cmap_read(s, m->pf, &ks->cmap, &d);
		if (r == RC_OK)
			r = sm_cmap_depths(&ks->cmap, &ks->cyclic, &d);
		break;
	case SM_CSPA:
		r = sm_cspa_read(s, m->pf, &ks->cspa, &d);
		break;
	case SM_MMAP:
		r = sm_mmap_read(s, m->pf, &ks->mmap, &d);
		break;
	default:
		r = atoc_read(s, &ks->atoc, &d);
		break;
	}
	diag_move(&m->d, &d, file);
	if (r == RC_NOMEM)
		return r;
	ks->st[f] = r == RC_OK ? DS_OK : DS_BAD;
	if (r != RC_OK)
		diag_add(&m->d, "%s: cannot be read: %s", file, rc_why(r));
	else if (src_read(s, 0, h, sizeof h) == RC_OK &&
		 sm_stamp_peek(h, sizeof h, m->pf, &ks->stamp[f]))
		ks->stamped[f] = true;
	return RC_OK;
}

static enum rc load_kind(struct district *m, enum dist_kind k, const struct src *map,
			 const struct dist_io *io)
{
	static const enum sm_file files[] = {SM_CMAP, SM_CSPA, SM_MMAP, SM_ATOC};
	struct dist_kind_set *ks = &m->k[k];
	enum rc r = RC_OK;

	for (size_t i = 0; i < sizeof files / sizeof *files && r == RC_OK; i++) {
		char file[NAME_COMPONENT_MAX + 16];
		struct src s;
		void *h = NULL;
		enum rc o;

		if (files[i] == SM_CMAP && map) {
			r = load_file(m, k, SM_CMAP, map);
			continue;
		}
		kind_file(m, k, files[i], file, sizeof file);
		o = io->open(io->ctx, file, &s, &h);
		if (o == RC_NOENT)
			continue;
		if (o != RC_OK) {
			if (o == RC_NOMEM)
				return o;
			ks->st[files[i]] = DS_BAD;
			diag_add(&m->d, "%s: cannot be read: %s", file, rc_why(o));
			continue;
		}
		r = load_file(m, k, files[i], &s);
		io->close(io->ctx, h);
	}
	if (r != RC_OK)
		return r;
	ks->cmap_ix = ix_build(ks->cmap.v, sizeof *ks->cmap.v, ks->cmap.n);
	ks->cspa_ix = ix_build(ks->cspa.v, sizeof *ks->cspa.v, ks->cspa.n);
	ks->mmap_ix = ix_build(ks->mmap.v, sizeof *ks->mmap.v, ks->mmap.n);
	return ks->cmap_ix && ks->cspa_ix && ks->mmap_ix ? RC_OK : RC_NOMEM;
}

enum rc dist_load(struct district *m, const char *map_name, const struct src *map,
		  const struct dist_io *io)
{
	enum rc r = RC_OK;

	memset(m, 0, sizeof *m);
	diag_init(&m->d);
	if (!dist_map_name(map_name, m->dist, &m->pf))
		return RC_FORMAT;
	for (int k = 0; k < DIST_KINDS && r == RC_OK; k++)
		r = load_kind(m, (enum dist_kind)k, k == DIST_PRES ? map : NULL, io);
	if (r == RC_OK && m->k[DIST_PRES].st[SM_CMAP] != DS_OK)
		r = map->size < SM_CMAP_HDR ? RC_TRUNCATED : RC_IO;
	return r;
}

void dist_free(struct district *m)
{
	for (int k = 0; k < DIST_KINDS; k++) {
		struct dist_kind_set *ks = &m->k[k];

		sm_cmap_free(&ks->cmap);
		sm_cspa_free(&ks->cspa);
		sm_mmap_free(&ks->mmap);
		free(ks->atoc.ids);
		free(ks->cmap_ix);
		free(ks->cspa_ix);
		free(ks->mmap_ix);
	}
	diag_free(&m->d);
	memset(m, 0, sizeof *m);
}

size_t dist_heap(const struct district *m)
{
	size_t n = sizeof *m + diag_heap_bytes(&m->d);

	for (int k = 0; k < DIST_KINDS; k++) {
		const struct dist_kind_set *ks = &m->k[k];

		n += sm_cmap_heap(&ks->cmap) + (size_t)ks->cspa.n * sizeof *ks->cspa.v +
		     (size_t)ks->mmap.n * sizeof *ks->mmap.v + (size_t)ks->atoc.n * 8 +
		     ((size_t)ks->cmap.n + ks->cspa.n + ks->mmap.n) * sizeof(struct dist_id_ix);
	}
	return n;
}

/* ---- the collection files ---- */

/* Walk one collection's asset headers (at most budget): ids in sf, problems in d. */
static enum rc sfil_walk(const struct src *s, const char *file, struct dist_sfil *sf,
			 uint64_t budget, struct diag *d)
{
	uint8_t h[SF_HDR];
	uint64_t cur, max = s->size / SF_ASSET;
	enum rc r = src_read(s, 0, h, sizeof h);

	if (r != RC_OK || memcmp(h, "SFIL", 4) != 0) {
		diag_add(d, "%s: cannot be read: %s", file,
			 r != RC_OK ? rc_why(s->size < SF_HDR ? RC_TRUNCATED : r)
				    : "not the expected magic");
		sf->st = DS_BAD;
		return RC_OK;
	}
	sf->st = DS_OK;
	sf->stamped = sm_stamp_peek(h, sizeof h, SM_PS3, &sf->stamp);
	sf->w1c = ld_u32be(h + 0x1C);
	max = max < DIST_WALK_MAX ? max : DIST_WALK_MAX;
	max = max < budget ? max : budget;
	sf->ids = xcalloc_n(max ? (size_t)max : 1, sizeof *sf->ids);
	if (!sf->ids)
		return RC_NOMEM;
	cur = ld_u32be(h + 0x10);
	if (cur < SF_HDR || cur > s->size)
		diag_add(d, "%s: the first asset at %llu is outside the file", file,
			 (unsigned long long)cur);
	while (cur >= SF_HDR && cur <= s->size && s->size - cur >= SF_ASSET && sf->n < max) {
		uint8_t a[SF_ASSET];
		uint64_t id;
		uint32_t stored, hsize, stride;

		if ((r = src_read(s, cur, a, sizeof a)) != RC_OK) {
			diag_add(d, "%s: asset at %llu: %s", file, (unsigned long long)cur,
				 rc_str(r));
			break;
		}
		id = ld_u64be(a);
		stored = ld_u32be(a + 8);
		hsize = ld_u32be(a + 12);
		stride = ld_u32be(a + 16);
		if (!id && !stored && !hsize && !stride)
			break; /* zero padding: the collection ends */
		sf->ids[sf->n++] = id;
		if (hsize < SF_ASSET || (uint64_t)hsize + stored > s->size - cur) {
			diag_add(d, "%s: asset 0x%016" PRIx64 " at %llu runs past the end", file,
				 id, (unsigned long long)cur);
			break;
		}
		if (stride < (uint64_t)hsize + stored) {
			diag_add(d, "%s: asset 0x%016" PRIx64 ": stride %u shorter than the asset",
				 file, id, stride);
			break;
		}
		cur += stride;
	}
	if (sf->n == max && max == DIST_WALK_MAX)
		diag_add(d, "%s: more than %u assets; the rest are not read", file, DIST_WALK_MAX);
	qsort(sf->ids, sf->n, sizeof *sf->ids, id_cmp);
	return RC_OK;
}

static enum rc scan_kind(struct dist_scan *s, enum dist_kind k, const struct dist_io *io)
{
	const struct dist_kind_set *ks = &s->m->k[k];
	char ext[4];

	sm_ext(s->m->pf, SM_SFIL, ext);
	s->sf[k] = xcalloc_n(ks->cmap.n ? ks->cmap.n : 1, sizeof *s->sf[k]);
	if (!s->sf[k])
		return RC_NOMEM;
	s->n_sf[k] = ks->cmap.n;
	for (uint32_t i = 0; i < ks->cmap.n; i++) {
		const struct sm_collection *c = &ks->cmap.v[i];
		char file[NAME_COMPONENT_MAX + 8];
		struct src src;
		void *h = NULL;
		enum rc r;

		if (ix_find(ks->cmap_ix, ks->cmap.n, c->id) != (long)i || !c->name[0])
			continue; /* a repeated id or no name: the first record speaks */
		if (s->walked >= DIST_WALK_TOTAL || ++s->opened > DIST_FILES_MAX) {
			if (!s->cut++)
				diag_add(
				    &s->d,
				    "%s: more collection files or assets than a district holds "
				    "(%u files, %u assets); the rest are not read",
				    dist_kind_names[k], DIST_FILES_MAX, DIST_WALK_TOTAL);
			s->sf[k][i].st = DS_BAD;
			continue;
		}
		snprintf(file, sizeof file, "%s.%s", c->safe, ext);
		r = io->open(io->ctx, file, &src, &h);
		if (r == RC_NOENT)
			continue;
		if (r != RC_OK) {
			if (r == RC_NOMEM)
				return r;
			s->sf[k][i].st = DS_BAD;
			diag_add(&s->d, "%s: cannot be read: %s", file, rc_why(r));
			continue;
		}
		r = sfil_walk(&src, file, &s->sf[k][i], DIST_WALK_TOTAL - s->walked, &s->d);
		s->walked += s->sf[k][i].n;
		io->close(io->ctx, h);
		if (r != RC_OK)
			return r;
	}
	return RC_OK;
}

/* ---- the lint (docs/worlds.md, "The district view") ---- */

static const char *flag_words(uint8_t f)
{
	if (f & SM_F_CYCLE)
		return "in or leading into a parent cycle";
	if (f & SM_F_DUP_ID)
		return "its id repeats an earlier record";
	if (f & SM_F_NAME)
		return "its name is not a usable file name";
	if (f & SM_F_NONFIN)
		return "a bound or point is not finite";
	if (f & SM_F_UNORDER)
		return "a box's minimum exceeds its maximum";
	if (f & SM_F_LOD)
		return "its level of detail is not 0, 1 or 2";
	return NULL;
}

static bool is_global(const struct sm_collection *c)
{
	return c->parent == SM_GLOBAL_PARENT || strcasestr(c->name, "_global") != NULL;
}

/* A count the file cannot hold: the game would read past the manifest's end. */
static void lint_count(struct dist_scan *s, const char *file, uint32_t claimed, uint32_t held,
		       const char *what)
{
	if (claimed > held)
		diag_add(&s->lint, "%s: claims %u %s; the file holds %u", file, claimed, what,
			 held);
}

static void lint_records(struct dist_scan *s, enum dist_kind k)
{
	const struct district *m = s->m;
	const struct dist_kind_set *ks = &m->k[k];
	char file[NAME_COMPONENT_MAX + 16];

	kind_file(m, k, SM_CMAP, file, sizeof file);
	lint_count(s, file, ks->cmap.h.count, ks->cmap.n, "collections");
	for (uint32_t i = 0; i < ks->cmap.n; i++) {
		const char *w = flag_words(ks->cmap.v[i].flags);

		if (w)
			diag_add(&s->lint, "%s: collection %u (%s): %s", file, i,
				 ks->cmap.v[i].safe, w);
	}
	kind_file(m, k, SM_CSPA, file, sizeof file);
	lint_count(s, file, ks->cspa.h.count, ks->cspa.n, "cells");
	for (uint32_t i = 0; i < ks->cspa.n; i++) {
		const char *w = flag_words(ks->cspa.v[i].flags);

		if (w)
			diag_add(&s->lint, "%s: cell %u (0x%016" PRIx64 "): %s", file, i,
				 ks->cspa.v[i].id, w);
		if (ks->st[SM_CMAP] == DS_OK &&
		    ix_find(ks->cmap_ix, ks->cmap.n, ks->cspa.v[i].id) < 0)
			diag_add(&s->lint, "%s: cell %u (0x%016" PRIx64 ") names no collection",
				 file, i, ks->cspa.v[i].id);
	}
	kind_file(m, k, SM_MMAP, file, sizeof file);
	lint_count(s, file, ks->mmap.h.count, ks->mmap.n, "points");
	for (uint32_t i = 0; i < ks->mmap.n; i++) {
		const char *w = flag_words(ks->mmap.v[i].flags);

		if (w)
			diag_add(&s->lint, "%s: point %u (0x%016" PRIx64 "): %s", file, i,
				 ks->mmap.v[i].id, w);
	}
}

/* The word at +0x1C: the kind's constant (PACK), 0xFFFFFFFF or the CMAP's count byte-swapped
 * (SFFD) are all what real files hold; anything else, or the other kind's constant, is not. */
static bool w1c_ok(enum dist_kind k, uint32_t w, uint32_t n)
{
	uint32_t swapped = (n >> 24) | (n >> 8 & 0xFF00u) | (n << 8 & 0xFF0000u) | n << 24;

	if (k == DIST_TEX)
		return true;
	return w == (k == DIST_PRES ? DIST_W1C_PRES : DIST_W1C_SIM) || w == 0xFFFFFFFFu ||
	       w == swapped;
}

static void lint_collections(struct dist_scan *s, enum dist_kind k)
{
	const struct district *m = s->m;
	const struct dist_kind_set *ks = &m->k[k];
	char ext[4], cspa[NAME_COMPONENT_MAX + 16], atoc[NAME_COMPONENT_MAX + 16];

	sm_ext(m->pf, SM_SFIL, ext);
	kind_file(m, k, SM_CSPA, cspa, sizeof cspa);
	kind_file(m, k, SM_ATOC, atoc, sizeof atoc);
	for (uint32_t i = 0; i < ks->cmap.n; i++) {
		const struct sm_collection *c = &ks->cmap.v[i];
		const struct dist_sfil *sf = &s->sf[k][i];

		if (ix_find(ks->cmap_ix, ks->cmap.n, c->id) != (long)i)
			continue;
		if (sf->st == DS_ABSENT) {
			diag_add(&s->lint, "%s: collection %s (0x%016" PRIx64 ") has no file %s.%s",
				 dist_kind_names[k], c->safe, c->id, c->safe, ext);
			s->unresolved++;
		} else if (sf->st == DS_BAD) {
			diag_add(&s->lint, "%s: %s.%s cannot be read", dist_kind_names[k], c->safe,
				 ext);
		} else {
			if (sf->n != c->assets)
				diag_add(&s->lint, "%s: %s.%s holds %u assets; the CMAP says %u",
					 dist_kind_names[k], c->safe, ext, sf->n, c->assets);
			if (!w1c_ok(k, sf->w1c, ks->cmap.h.count))
				diag_add(&s->lint,
					 "%s: %s.%s: the word at +0x1C is 0x%08x (0x%08x for %s)",
					 dist_kind_names[k], c->safe, ext, sf->w1c,
					 k == DIST_PRES ? DIST_W1C_PRES : DIST_W1C_SIM,
					 dist_kind_names[k]);
			for (uint32_t j = 0; ks->st[SM_ATOC] == DS_OK && j < sf->n; j++)
				if ((!j || sf->ids[j] != sf->ids[j - 1]) &&
				    !ids_has(ks->atoc.ids, ks->atoc.n, sf->ids[j])) {
					diag_add(&s->lint,
						 "%s: %s.%s: asset 0x%016" PRIx64 " is not in %s",
						 dist_kind_names[k], c->safe, ext, sf->ids[j],
						 atoc);
					s->unresolved++;
				}
		}
		if (ks->st[SM_CSPA] == DS_OK && !is_global(c) &&
		    ix_find(ks->cspa_ix, ks->cspa.n, c->id) < 0)
			diag_add(&s->lint,
				 "%s: collection %s (0x%016" PRIx64 ") has no bounds in %s",
				 dist_kind_names[k], c->safe, c->id, cspa);
	}
}

/* ATOC assets that no collection file holds (only once every collection was read). */
static void lint_atoc(struct dist_scan *s, enum dist_kind k)
{
	const struct dist_kind_set *ks = &s->m->k[k];
	char atoc[NAME_COMPONENT_MAX + 16];

	if (ks->st[SM_ATOC] != DS_OK)
		return;
	for (uint32_t i = 0; i < ks->cmap.n; i++)
		if (s->sf[k][i].st != DS_OK && ks->cmap.v[i].name[0] &&
		    ix_find(ks->cmap_ix, ks->cmap.n, ks->cmap.v[i].id) == (long)i)
			return; /* a collection not read: its assets would be listed as lost */
	kind_file(s->m, k, SM_ATOC, atoc, sizeof atoc);
	/* every walked id of the kind in one sorted array: linear in what was read, whatever
	 * the numbers of collections and of table rows */
	size_t total = 0, at = 0;
	uint64_t *all;

	for (uint32_t i = 0; i < ks->cmap.n; i++)
		total += s->sf[k][i].n;
	if (!(all = xcalloc_n(total ? total : 1, sizeof *all))) {
		diag_add(&s->d, "%s: out of memory comparing it with the collections", atoc);
		return;
	}
	for (uint32_t i = 0; i < ks->cmap.n; i++) {
		if (s->sf[k][i].n)
			memcpy(all + at, s->sf[k][i].ids, s->sf[k][i].n * sizeof *all);
		at += s->sf[k][i].n;
	}
	qsort(all, total, sizeof *all, id_cmp);
	for (uint32_t j = 0; j < ks->atoc.n; j++) {
		bool found;

		if (j && ks->atoc.ids[j] == ks->atoc.ids[j - 1])
			continue;
		found = total && bsearch(&ks->atoc.ids[j], all, total, sizeof *all, id_cmp);
		if (!found) {
			diag_add(&s->lint, "%s: asset 0x%016" PRIx64 " is in no collection", atoc,
				 ks->atoc.ids[j]);
			s->unresolved++;
		}
	}
	free(all);
}

/* Stamps of the five files of a kind: the CMAP's first, then the others, then each
 * collection file (by CMAP order). */
static enum rc lint_stamps(struct dist_scan *s, enum dist_kind k)
{
	static const enum sm_file order[] = {SM_CMAP, SM_ATOC, SM_CSPA, SM_MMAP};
	const struct dist_kind_set *ks = &s->m->k[k];
	struct sm_stamp *v = xcalloc_n((size_t)ks->cmap.n + 4, sizeof *v);
	char(*names)[NAME_COMPONENT_MAX + 16] = xcalloc_n((size_t)ks->cmap.n + 4, sizeof *names);
	char ext[4];
	size_t n = 0;

	if (!v || !names) {
		free(v);
		free(names);
		return RC_NOMEM;
	}
	sm_ext(s->m->pf, SM_SFIL, ext);
	for (size_t i = 0; i < sizeof order / sizeof *order; i++)
		if (ks->stamped[order[i]]) {
			kind_file(s->m, k, order[i], names[n], sizeof names[n]);
			v[n] = (struct sm_stamp){names[n], ks->stamp[order[i]]};
			n++;
		}
	for (uint32_t i = 0; i < ks->cmap.n; i++)
		if (s->sf[k][i].stamped) {
			snprintf(names[n], sizeof names[n], "%s.%s", ks->cmap.v[i].safe, ext);
			v[n] = (struct sm_stamp){names[n], s->sf[k][i].stamp};
			n++;
		}
	sm_stamps_agree(v, n, &s->lint);
	free(v);
	free(names);
	return RC_OK;
}

static void lint_missing(struct dist_scan *s)
{
	static const enum sm_file stub[] = {SM_CMAP, SM_MMAP, SM_CSPA, SM_ATOC};
	const struct district *m = s->m;
	char file[NAME_COMPONENT_MAX + 16];

	for (int k = 0; k < DIST_KINDS; k++) {
		const struct dist_kind_set *ks = &m->k[k];

		for (size_t i = 0; i < sizeof stub / sizeof *stub; i++) {
			kind_file(m, (enum dist_kind)k, stub[i], file, sizeof file);
			if (ks->st[stub[i]] == DS_BAD)
				diag_add(&s->lint, "%s cannot be read", file);
			else if (ks->st[stub[i]] == DS_ABSENT && k == DIST_TEX)
				diag_add(&s->lint, "Tex stream stub missing: %s", file);
			else if (ks->st[stub[i]] == DS_ABSENT &&
				 (stub[i] == SM_CMAP || ks->st[SM_CMAP] != DS_ABSENT))
				diag_add(&s->lint, "%s is missing", file);
		}
	}
}

enum rc dist_scan(struct dist_scan *s, const struct district *m, const struct dist_io *io)
{
	enum rc r = RC_OK;

	memset(s, 0, sizeof *s);
	s->m = m;
	diag_init(&s->d);
	diag_init(&s->lint);
	for (int k = 0; k < DIST_KINDS && r == RC_OK; k++)
		r = scan_kind(s, (enum dist_kind)k, io);
	if (r != RC_OK)
		return r;
	lint_missing(s);
	for (int k = 0; k < DIST_KINDS && r == RC_OK; k++) {
		lint_records(s, (enum dist_kind)k);
		lint_collections(s, (enum dist_kind)k);
		lint_atoc(s, (enum dist_kind)k);
		r = lint_stamps(s, (enum dist_kind)k);
	}
	return r;
}

void dist_scan_free(struct dist_scan *s)
{
	/* never through s->m: an asset frees its permanent decodes in slot order, the
	 * manifests first */
	for (int k = 0; k < DIST_KINDS; k++) {
		for (uint32_t i = 0; s->sf[k] && i < s->n_sf[k]; i++)
			free(s->sf[k][i].ids);
		free(s->sf[k]);
	}
	diag_free(&s->d);
	diag_free(&s->lint);
	memset(s, 0, sizeof *s);
}

bool dist_first_of_id(const struct district *m, enum dist_kind k, uint32_t i)
{
	const struct dist_kind_set *ks = &m->k[k];

	return i < ks->cmap.n && ks->cmap.v[i].name[0] &&
	       ix_find(ks->cmap_ix, ks->cmap.n, ks->cmap.v[i].id) == (long)i;
}

bool dist_in_scene(const struct district *m, enum dist_kind k, uint32_t i)
{
	const struct dist_kind_set *ks = &m->k[k];
	const struct sm_collection *c;
	long cell;

	if (i >= ks->cmap.n)
		return false;
	c = &ks->cmap.v[i];
	if (!c->name[0] || ix_find(ks->cmap_ix, ks->cmap.n, c->id) != (long)i)
		return false;
	if (is_global(c))
		return true;
	cell = ix_find(ks->cspa_ix, ks->cspa.n, c->id);
	return cell >= 0 && ks->cspa.v[cell].lod == SM_LOD_HIGH;
}

/* ---- views ---- */

const char dist_collections_header[] =
    "kind\tname\tid\tparent_id\tdepth\tlod\tassets\tbytes\thull_min_x\thull_min_y\thull_min_z\t"
    "hull_max_x\thull_max_y\thull_max_z\tgeom_min_x\tgeom_min_y\tgeom_min_z\tgeom_max_x\t"
    "geom_max_y\tgeom_max_z\tproblem\n";
const char dist_minimap_header[] = "kind\tid\tcollection\tx\ty\tproblem\n";

uint64_t dist_collection_rows(const struct district *m)
{
	uint64_t n = 0;

	for (int k = 0; k < DIST_KINDS; k++)
		n += m->k[k].cmap.n;
	return n;
}

/* Row i of a per-kind concatenation: the kind and the row inside it. */
static int kind_of_row(const struct district *m, uint64_t *i, bool minimap)
{
	for (int k = 0; k < DIST_KINDS; k++) {
		uint32_t n = minimap ? m->k[k].mmap.n : m->k[k].cmap.n;

		if (*i < n)
			return k;
		*i -= n;
	}
	return -1;
}

static void put_box(struct buf *b, const float *lo, const float *hi)
{
	for (int j = 0; j < 3; j++) {
		buf_putc(b, '\t');
		buf_f32txt(b, lo[j]);
	}
	for (int j = 0; j < 3; j++) {
		buf_putc(b, '\t');
		buf_f32txt(b, hi[j]);
	}
}

void dist_collection_row(const struct district *m, uint64_t i, struct buf *b)
{
	int k = kind_of_row(m, &i, false);
	const struct dist_kind_set *ks;
	const struct sm_collection *c;
	const char *w;
	long cell;

	if (k < 0)
		return;
	ks = &m->k[k];
	c = &ks->cmap.v[i];
	cell = ix_find(ks->cspa_ix, ks->cspa.n, c->id);
	buf_printf(b, "%s\t%s\t0x%016" PRIx64 "\t0x%016" PRIx64 "\t", dist_kind_names[k], c->safe,
		   c->id, c->parent);
	if (c->depth == SM_DEPTH_CYCLE)
		buf_puts(b, "cycle");
	else
		buf_printf(b, "%u", c->depth);
	if (cell >= 0)
		buf_printf(b, "\t%u", ks->cspa.v[cell].lod);
	else
		buf_puts(b, "\t-");
	buf_printf(b, "\t%u\t%u", c->assets, c->size);
	if (cell >= 0) {
		put_box(b, ks->cspa.v[cell].hull_min, ks->cspa.v[cell].hull_max);
		put_box(b, ks->cspa.v[cell].geom_min, ks->cspa.v[cell].geom_max);
	} else {
		buf_puts(b, "\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-");
	}
	w = flag_words(c->flags | (cell >= 0 ? ks->cspa.v[cell].flags : 0));
	buf_printf(b, "\t%s\n", w ? w : "-");
}

uint64_t dist_minimap_rows(const struct district *m)
{
	uint64_t n = 0;

	for (int k = 0; k < DIST_KINDS; k++)
		n += m->k[k].mmap.n;
	return n;
}

void dist_minimap_row(const struct district *m, uint64_t i, struct buf *b)
{
	int k = kind_of_row(m, &i, true);
	const struct dist_kind_set *ks;
	const struct sm_point *p;
	const char *w;
	long c;

	if (k < 0)
		return;
	ks = &m->k[k];
	p = &ks->mmap.v[i];
	c = ix_find(ks->cmap_ix, ks->cmap.n, p->id);
	buf_printf(b, "%s\t0x%016" PRIx64 "\t%s\t", dist_kind_names[k], p->id,
		   c >= 0 ? ks->cmap.v[c].safe : "-");
	buf_f32txt(b, p->x);
	buf_putc(b, '\t');
	buf_f32txt(b, p->y);
	w = flag_words(p->flags);
	buf_printf(b, "\t%s\n", w ? w : "-");
}

static const char *state_word(enum dist_state st)
{
	return st == DS_OK ? "read" : st == DS_BAD ? "unreadable" : "missing";
}

void dist_info(const struct district *m, const struct dist_scan *s, const struct dist_objects *o,
	       struct buf *b)
{
	uint64_t cols = 0, assets = 0;

	buf_printf(b, "format: district\ndistrict: %s\nplatform: %s\n", m->dist,
		   sm_platforms[m->pf].name);
	for (int k = 0; k < DIST_KINDS; k++) {
		const struct dist_kind_set *ks = &m->k[k];
		char file[NAME_COMPONENT_MAX + 16];

		buf_printf(b, "%s:", dist_kind_names[k]);
		for (int f = SM_ATOC; f < SM_FILES; f++) {
			kind_file(m, (enum dist_kind)k, (enum sm_file)f, file, sizeof file);
			buf_printf(b, " %s %s,", file, state_word(ks->st[f]));
		}
		b->len--; /* the last comma */
		if (ks->stamped[SM_CMAP])
			buf_printf(b, "\n%s_stamp: 0x%016" PRIx64, dist_kind_names[k],
				   ks->stamp[SM_CMAP]);
		buf_printf(b, "\n%s_collections: %u\n%s_assets: %u\n", dist_kind_names[k],
			   ks->cmap.n, dist_kind_names[k], ks->atoc.n);
		cols += ks->cmap.n;
		assets += ks->atoc.n;
	}
	buf_printf(b, "collections: %" PRIu64 "\nassets: %" PRIu64 "\nmodels: %u\ntextures: %u\n",
		   cols, assets, m->k[DIST_PRES].atoc.n, m->k[DIST_TEX].atoc.n);
	if (o)
		buf_printf(b,
			   "props: %" PRIu64 "\nprops_unresolved: %" PRIu64 "\nrails: %" PRIu64
			   "\nrail_segments: %" PRIu64 "\ncollision_meshes: %" PRIu64
			   "\ncollision_triangles: %" PRIu64 "\n",
			   o->n_props, o->n_props - o->n_resolved, o->n_rails, o->n_segments,
			   o->n_meshes, o->n_tris);
	else
		buf_puts(
		    b, "props: not read (a single-file mount reaches no arena)\nrails: not read\n");
	buf_printf(b, "unresolved: %zu\nproblems: %zu\nfindings: %zu\n",
		   s->unresolved + (o ? o->unresolved : 0),
		   diag_count(&m->d) + diag_count(&s->d) + (o ? diag_count(&o->d) : 0),
		   diag_count(&s->lint) + (o ? diag_count(&o->lint) : 0));
}

static void diag_lines(const struct diag *d, struct buf *b)
{
	for (size_t i = 0; i < d->n; i++) {
		buf_puts(b, d->msg[i]);
		buf_putc(b, '\n');
	}
	if (d->dropped)
		buf_printf(b, "... %zu more not listed\n", d->dropped);
}

void dist_errors(const struct district *m, const struct dist_scan *s, struct buf *b)
{
	diag_lines(&m->d, b);
	diag_lines(&s->d, b);
}

void dist_lint(const struct dist_scan *s, const struct dist_objects *o, struct buf *b)
{
	diag_lines(&s->lint, b);
	if (o)
		diag_lines(&o->lint, b);
	buf_printf(b, "%zu findings\n", diag_count(&s->lint) + (o ? diag_count(&o->lint) : 0));
}

bool dist_atoc_has(const struct district *m, enum dist_kind k, uint64_t id)
{
	return ids_has(m->k[k].atoc.ids, m->k[k].atoc.n, id);
}

/* ---- the Sim stream's objects ---- */

const char dist_props_header[] =
    "arena\tobject\tindex\tname\ttemplate_id\tguid\tguid_local\tinstance\tmodel\tx\ty\tz\tqx\tqy\t"
    "qz\tqw\tsx\tsy\tsz\tproblem\n";
const char dist_rails_header[] =
    "arena\tobject\trail\tguid\tsegment\tstart_x\tstart_y\tstart_z\tend_x\tend_y\tend_z\tlength\t"
    "problem\n";
const char dist_surfaces_header[] = "surface\taudio\tphysics\tpattern\ttriangles\n";

void dist_objects_init(struct dist_objects *o)
{
	memset(o, 0, sizeof *o);
	buf_init(&o->props);
	buf_init(&o->rails);
	buf_init(&o->surfaces);
	diag_init(&o->d);
	diag_init(&o->lint);
}

void dist_objects_free(struct dist_objects *o)
{
	buf_free(&o->props);
	buf_free(&o->rails);
	buf_free(&o->surfaces);
	free(o->surf);
	free(o->seg);
	free(o->rail_segs);
	free(o->placed);
	diag_free(&o->d);
	diag_free(&o->lint);
	memset(o, 0, sizeof *o);
}

static void put_floats(struct buf *b, const float *v, int n)
{
	for (int k = 0; k < n; k++) {
		buf_putc(b, '\t');
		buf_f32txt(b, v[k]);
	}
}

static const char *wo_words(uint8_t f)
{
	if (f & WO_F_NONFINITE)
		return "not finite";
	if (f & WO_F_SINGULAR)
		return "singular matrix";
	if (f & WO_F_CYCLE)
		return "chain loops";
	if (f & WO_F_LINK)
		return "link names nothing";
	if (f & WO_F_BOUNDS)
		return "bounds";
	if (f & WO_F_NAME)
		return "name";
	if (f & WO_F_SHEAR)
		return "sheared matrix";
	return "-";
}

/* Remember a resolved prop for scene.glb; past DIST_PLACED_MAX one line says so. */
static void place_prop(struct dist_objects *o, uint32_t model, const struct wo_dmo *p)
{
	struct dist_placed *v;

	if (o->n_placed == DIST_PLACED_MAX) {
		diag_add(&o->d,
			 "scene.glb places the first %u resolved props; the rest only in "
			 "props.tsv",
			 DIST_PLACED_MAX);
		o->n_placed++; /* said once */
		return;
	}
	if (o->n_placed > DIST_PLACED_MAX)
		return;
	if (o->n_placed == o->cap_placed) {
		size_t cap = o->cap_placed ? o->cap_placed * 2 : 16;

		if (!(v = xrealloc_n(o->placed, cap, sizeof *v))) {
			o->props.oom = true; /* dist_objects_finish: RC_NOMEM */
			return;
		}
		o->placed = v;
		o->cap_placed = cap;
	}
	v = &o->placed[o->n_placed++];
	*v = (struct dist_placed){.model = model, .template_id = p->template_id};
	memcpy(v->pos, p->pos, sizeof v->pos);
	memcpy(v->rot, p->rot, sizeof v->rot);
	memcpy(v->scale, p->scale, sizeof v->scale);
}

static void add_props(struct dist_objects *o, const char *where, uint32_t index,
		      const struct wo_dmos *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		const struct wo_dmo *p = &m->v[i];
		const char *path = NULL, *why = NULL;
		uint32_t model =
		    o->model_of ? o->model_of(o->model_ctx, p->template_id, &path, &why) : 0;

		buf_printf(&o->props, "%s\t%u\t%u\t", where, index, i);
		buf_tsv_name(&o->props, p->name[0] ? p->name : "-", WO_NAME_MAX + 1);
		buf_printf(&o->props,
			   "\t0x%016" PRIx64 "\t0x%016" PRIx64 "\t0x%016" PRIx64 "\t%u\t",
			   p->template_id, p->guid, p->guid_local, p->instance);
		if (model && path) {
			buf_tsv_name(&o->props, path, 4096);
			o->n_resolved++;
			place_prop(o, model, p);
		} else {
			buf_puts(&o->props, "unresolved");
			if (o->model_of) {
				diag_add(&o->lint,
					 "%s: object %u: prop %u: template 0x%016" PRIx64
					 " is unresolved: %s",
					 where, index, i, p->template_id, why ? why : "?");
				o->unresolved++;
			}
		}
		put_floats(&o->props, p->pos, 3);
		put_floats(&o->props, p->rot, 4);
		put_floats(&o->props, p->scale, 3);
		buf_printf(&o->props, "\t%s\n", wo_words(p->flags));
		if (p->flags & (WO_F_NONFINITE | WO_F_SINGULAR))
			diag_add(&o->lint, "%s: object %u: prop %u: its matrix is %s (placed at 0)",
				 where, index, i, wo_words(p->flags));
	}
	o->n_props += m->n;
}

/* Room for n more segments and one more rail in the geometry rails.glb draws. */
static bool rail_room(struct dist_objects *o, size_t n)
{
	if (o->n_seg + n > o->cap_seg) {
		size_t cap = o->cap_seg ? o->cap_seg : 64;
		void *v;

		while (cap < o->n_seg + n)
			cap *= 2;
		if (!(v = xrealloc_n(o->seg, cap, sizeof *o->seg)))
			return false;
		o->seg = v;
		o->cap_seg = cap;
	}
	if (o->n_rail_list == o->cap_rail_list) {
		size_t cap = o->cap_rail_list ? o->cap_rail_list * 2 : 16;
		void *v = xrealloc_n(o->rail_segs, cap, sizeof *o->rail_segs);

		if (!v)
			return false;
		o->rail_segs = v;
		o->cap_rail_list = cap;
	}
	return true;
}

static enum rc add_rails(struct dist_objects *o, const char *where, uint32_t index,
			 const struct wo_splines *sd)
{
	for (uint32_t r = 0; r < sd->nrails; r++) {
		const struct wo_rail *rl = &sd->rails[r];
		uint32_t drawn = 0;

		if (!rail_room(o, rl->count))
			return RC_NOMEM;

		for (uint32_t k = 0; k < rl->count && rl->first + k < sd->norder; k++) {
			uint32_t si = sd->order[rl->first + k];
			const struct wo_segment *sg;

			if (si >= sd->nsegs)
				continue;
			sg = &sd->segs[si];
			buf_printf(&o->rails, "%s\t%u\t%u\t0x%016" PRIx64 "\t%u", where, index, r,
				   rl->guid, k);
			put_floats(&o->rails, sg->start, 3);
			put_floats(&o->rails, sg->end, 3);
			put_floats(&o->rails, &sg->length, 1);
			buf_printf(&o->rails, "\t%s\n", wo_words(sg->flags | rl->flags));
			memcpy(o->seg[o->n_seg][0], sg->start, sizeof sg->start);
			memcpy(o->seg[o->n_seg][1], sg->end, sizeof sg->end);
			o->n_seg++;
			drawn++;
			o->n_segments++;
		}
		if (drawn)
			o->rail_segs[o->n_rail_list++] = drawn;
		if (rl->flags & (WO_F_CYCLE | WO_F_LINK))
			diag_add(&o->lint, "%s: object %u: rail %u: its %s", where, index, r,
				 rl->flags & WO_F_CYCLE ? "segment chain loops"
							: "segment chain names nothing");
	}
	o->n_rails += sd->nrails;
	return RC_OK;
}

static enum rc add_surfaces(struct dist_objects *o, const struct wo_cmesh *cm)
{
	struct wo_surface_count *v = NULL;
	uint32_t n = 0;
	enum rc r = wo_cmesh_surfaces(cm, &v, &n);

	if (r != RC_OK)
		return r;
	if (o->n_surf + n > o->cap_surf) {
		size_t cap = o->cap_surf ? o->cap_surf : 64;
		struct wo_surface_count *nv;

		while (cap < o->n_surf + n)
			cap *= 2;
		if (!(nv = xrealloc_n(o->surf, cap, sizeof *nv))) {
			free(v);
			return RC_NOMEM;
		}
		o->surf = nv;
		o->cap_surf = cap;
	}
	if (n)
		memcpy(o->surf + o->n_surf, v, n * sizeof *v);
	o->n_surf += n;
	o->n_tris += cm->ntris;
	o->n_meshes++;
	free(v);
	return RC_OK;
}

enum rc dist_objects_add(struct dist_objects *o, const char *where, uint32_t index,
			 uint32_t type_id, const uint8_t *p, size_t n)
{
	struct diag d;
	enum rc r = RC_OK;

	diag_init(&d);
	if (type_id == WO_T_DMODATA) {
		struct wo_dmos m = {0};

		r = wo_dmo_parse(p, n, &m, &d);
		if (r == RC_OK)
			add_props(o, where, index, &m);
		wo_dmo_free(&m);
	} else if (type_id == WO_T_SPLINEDATA) {
		struct wo_splines sd = {0};

		r = wo_spline_parse(p, n, &sd, &d);
		if (r == RC_OK)
			r = add_rails(o, where, index, &sd);
		wo_spline_free(&sd);
	} else if (type_id == WO_T_CLUSTEREDMESH) {
		struct wo_cmesh cm = {0};

		r = wo_cmesh_parse(p, n, &cm, &d);
		if (r == RC_OK)
			r = add_surfaces(o, &cm);
		wo_cmesh_free(&cm);
	} else {
		return RC_OK;
	}
	for (size_t i = 0; i < d.n; i++)
		diag_add(&o->d, "%s: object %u: %s", where, index, d.msg[i]);
	if (r != RC_OK && r != RC_NOMEM)
		diag_add(&o->d, "%s: object %u (type 0x%08x): %s", where, index, type_id,
			 rc_str(r));
	diag_free(&d);
	return r == RC_NOMEM ? r : RC_OK;
}

static int surf_cmp(const void *x, const void *y)
{
	const struct wo_surface_count *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

enum rc dist_objects_finish(struct dist_objects *o)
{
	size_t i = 0;

	if (o->n_surf)
		qsort(o->surf, o->n_surf, sizeof *o->surf, surf_cmp);
	while (i < o->n_surf) {
		uint16_t id = o->surf[i].id;
		uint64_t tris = 0;
		uint8_t audio, physics, pattern;

		for (; i < o->n_surf && o->surf[i].id == id; i++)
			tris += o->surf[i].tris;
		wo_surface_split(id, &audio, &physics, &pattern);
		buf_printf(&o->surfaces, "0x%04x\t%u\t%u\t%u\t%" PRIu64 "\n", id, audio, physics,
			   pattern, tris);
	}
	return o->props.oom || o->rails.oom || o->surfaces.oom ? RC_NOMEM : RC_OK;
}
