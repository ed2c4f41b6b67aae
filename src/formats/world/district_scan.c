/*
 * A district's collection files (their asset headers, walked) and the lint over them and the
 * manifests (district.h, docs/worlds.md, "The district view").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/world/district_int.h"
#include "psgfs/base/bytes.h"

#define SF_HDR	 0x20u /* collection header fields read */
#define SF_ASSET 0x18u /* asset header fields read */

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
			 r != RC_OK ? dist_rc_why(s->size < SF_HDR ? RC_TRUNCATED : r)
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
	qsort(sf->ids, sf->n, sizeof *sf->ids, dist_id_cmp);
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

		if (dist_ix_find(ks->cmap_ix, ks->cmap.n, c->id) != (long)i || !c->name[0])
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
			diag_add(&s->d, "%s: cannot be read: %s", file, dist_rc_why(r));
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

	dist_kind_file(m, k, SM_CMAP, file, sizeof file);
	lint_count(s, file, ks->cmap.h.count, ks->cmap.n, "collections");
	for (uint32_t i = 0; i < ks->cmap.n; i++) {
		const char *w = dist_flag_words(ks->cmap.v[i].flags);

		if (w)
			diag_add(&s->lint, "%s: collection %u (%s): %s", file, i,
				 ks->cmap.v[i].safe, w);
	}
	dist_kind_file(m, k, SM_CSPA, file, sizeof file);
	lint_count(s, file, ks->cspa.h.count, ks->cspa.n, "cells");
	for (uint32_t i = 0; i < ks->cspa.n; i++) {
		const char *w = dist_flag_words(ks->cspa.v[i].flags);

		if (w)
			diag_add(&s->lint, "%s: cell %u (0x%016" PRIx64 "): %s", file, i,
				 ks->cspa.v[i].id, w);
		if (ks->st[SM_CMAP] == DS_OK &&
		    dist_ix_find(ks->cmap_ix, ks->cmap.n, ks->cspa.v[i].id) < 0)
			diag_add(&s->lint, "%s: cell %u (0x%016" PRIx64 ") names no collection",
				 file, i, ks->cspa.v[i].id);
	}
	dist_kind_file(m, k, SM_MMAP, file, sizeof file);
	lint_count(s, file, ks->mmap.h.count, ks->mmap.n, "points");
	for (uint32_t i = 0; i < ks->mmap.n; i++) {
		const char *w = dist_flag_words(ks->mmap.v[i].flags);

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
	dist_kind_file(m, k, SM_CSPA, cspa, sizeof cspa);
	dist_kind_file(m, k, SM_ATOC, atoc, sizeof atoc);
	for (uint32_t i = 0; i < ks->cmap.n; i++) {
		const struct sm_collection *c = &ks->cmap.v[i];
		const struct dist_sfil *sf = &s->sf[k][i];

		if (dist_ix_find(ks->cmap_ix, ks->cmap.n, c->id) != (long)i)
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
				    !dist_ids_has(ks->atoc.ids, ks->atoc.n, sf->ids[j])) {
					diag_add(&s->lint,
						 "%s: %s.%s: asset 0x%016" PRIx64 " is not in %s",
						 dist_kind_names[k], c->safe, ext, sf->ids[j],
						 atoc);
					s->unresolved++;
				}
		}
		if (ks->st[SM_CSPA] == DS_OK && !dist_is_global(c) &&
		    dist_ix_find(ks->cspa_ix, ks->cspa.n, c->id) < 0)
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
		    dist_ix_find(ks->cmap_ix, ks->cmap.n, ks->cmap.v[i].id) == (long)i)
			return; /* a collection not read: its assets would be listed as lost */
	dist_kind_file(s->m, k, SM_ATOC, atoc, sizeof atoc);
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
	qsort(all, total, sizeof *all, dist_id_cmp);
	for (uint32_t j = 0; j < ks->atoc.n; j++) {
		bool found;

		if (j && ks->atoc.ids[j] == ks->atoc.ids[j - 1])
			continue;
		found = total && bsearch(&ks->atoc.ids[j], all, total, sizeof *all, dist_id_cmp);
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
			dist_kind_file(s->m, k, order[i], names[n], sizeof names[n]);
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
			dist_kind_file(m, (enum dist_kind)k, stub[i], file, sizeof file);
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
