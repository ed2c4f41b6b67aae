/*
 * Bone parents, which a Skate model does not store (docs/skate-objects.md, "Skeleton and
 * hierarchy"): from a "bone<TAB>parent" file, else from the built-in skater rig when the bone
 * names match it, else every bone hangs from bone 0. Whatever the source, cycles are broken
 * afterwards, so the parents always form a forest.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_mesh.h"
#include "formats/skate/skate_int.h"

#define UNSET (-2) /* parent not decided yet */

/* ---- the hierarchy file ---- */

struct name_ix {
	const char *name;
	uint32_t idx;
};

static int name_ix_cmp(const void *x, const void *y)
{
	const struct name_ix *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

static int name_ix_casecmp(const void *x, const void *y)
{
	const struct name_ix *a = x, *b = y;
	int c = strcasecmp(a->name, b->name);

	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

static int64_t find_in(const struct name_ix *ix, uint32_t n, const char *name,
		       int (*cmp)(const char *, const char *))
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cmp(ix[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !cmp(ix[lo].name, name) ? (int64_t)ix[lo].idx : -1;
}

/* The bone of that name: spelled exactly, else ignoring case (files and tools disagree on
 * case: "Hips", "HIPS"), the lowest index first. ix holds n exact-sorted then n case-sorted. */
static int64_t find_bone(const struct name_ix *ix, uint32_t n, const char *name)
{
	int64_t b = find_in(ix, n, name, strcmp);

	return b >= 0 ? b : find_in(ix + n, n, name, strcasecmp);
}

static bool is_root_word(const char *s)
{
	return !*s || !strcmp(s, "-") || !strcmp(s, "-1") || !strcasecmp(s, "none") ||
	       !strcasecmp(s, "null") || !strcasecmp(s, "root:");
}

/* Bones sorted by name, exactly and ignoring case (2n entries), with a diag line for each
 * duplicate name. */
static struct name_ix *name_index(const struct skate_scene *sc, struct diag *d)
{
	uint32_t n = sc->n_bones;
	struct name_ix *ix = xcalloc_n(2 * (size_t)n, sizeof *ix);

	if (!ix)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		ix[i].name = sc->bones[i].name;
		ix[i].idx = i;
	}
	qsort(ix, n, sizeof *ix, name_ix_cmp);
	memcpy(ix + n, ix, n * sizeof *ix);
	qsort(ix + n, n, sizeof *ix, name_ix_casecmp);
	for (uint32_t i = 0; i + 1 < n; i++)
		if (!strcmp(ix[i].name, ix[i + 1].name))
			diag_add(d,
				 "skeleton: bones %u and %u share the name \"%.64s\"; the "
				 "hierarchy uses %u",
				 ix[i].idx, ix[i + 1].idx, ix[i].name, ix[i].idx);
	return ix;
}

/* One "bone<TAB>parent" line (buf holds it, NUL-terminated, no newline). */
static void tsv_line(struct skate_scene *sc, const struct name_ix *ix, bool *seen, char *buf,
		     size_t lineno, struct diag *d)
{
	uint32_t n = sc->n_bones;
	char *tab = strchr(buf, '\t'), *parent = tab ? tab + 1 : buf + strlen(buf);
	int64_t c, p;

	if (tab)
		*tab = 0;
	if ((tab = strchr(parent, '\t')) != NULL)
		*tab = 0;
	/* errors.txt may be readable by anyone (allow_other) while the hierarchy file is not:
	 * lines quote the model's own bone names, never the file's text. */
	c = find_bone(ix, n, buf);
	if (c < 0) {
		if (lineno != 1) /* else a header line */
			diag_add(d, "hierarchy line %zu: names no bone of the model", lineno);
		return;
	}
	if (seen[c]) {
		diag_add(d,
			 "hierarchy line %zu: bone %" PRId64 " (\"%.64s\") listed again, ignored",
			 lineno, c, sc->bones[c].name);
		return;
	}
	seen[c] = true;
	if (is_root_word(parent)) {
		sc->bones[c].parent = -1;
	} else if ((p = find_bone(ix, n, parent)) < 0) {
		diag_add(d,
			 "hierarchy line %zu: bone %" PRId64 " (\"%.64s\") has a parent that names "
			 "no bone of the model; hung from bone 0",
			 lineno, c, sc->bones[c].name);
		sc->bones[c].parent = c == 0 ? -1 : 0;
	} else {
		sc->bones[c].parent = (int32_t)p;
	}
}

/* Apply "bone<TAB>parent" rows; bones not listed hang from bone 0. */
static enum rc apply_tsv(struct skate_scene *sc, const char *tsv, struct diag *d)
{
	uint32_t n = sc->n_bones, unlisted = 0;
	struct name_ix *ix = name_index(sc, d);
	bool *seen = xcalloc_n(n, sizeof *seen);
	size_t lineno = 0;

	if (!ix || !seen) {
		free(ix);
		free(seen);
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		sc->bones[i].parent = UNSET;
	for (const char *line = tsv; *line; lineno++) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[512];

		if (len >= sizeof buf) {
			diag_add(d, "hierarchy line %zu: longer than %zu bytes, ignored",
				 lineno + 1, sizeof buf - 1);
		} else {
			memcpy(buf, line, len);
			buf[len] = 0;
			if (len && buf[len - 1] == '\r')
				buf[--len] = 0;
			if (len && buf[0] != '#')
				tsv_line(sc, ix, seen, buf, lineno + 1, d);
		}
		line = end ? end + 1 : line + len;
	}
	for (uint32_t i = 0; i < n; i++)
		if (sc->bones[i].parent == UNSET) {
			sc->bones[i].parent = i == 0 ? -1 : 0;
			unlisted++;
		}
	if (unlisted)
		diag_add(d, "hierarchy: %u of %u bones not listed; hung from bone 0", unlisted, n);
	sc->hier_matched = n - unlisted;
	free(ix);
	free(seen);
	return RC_OK;
}

/* ---- the built-in skater rig ---- */

/* rig[] = rig index of each bone (-1 when its name is not a rig bone); returns how many are. */
static uint32_t rig_match(const struct skate_scene *sc, int32_t *rig)
{
	uint32_t matched = 0;

	for (uint32_t i = 0; i < sc->n_bones; i++) {
		rig[i] = skate_rig_find(sc->bones[i].name);
		matched += rig[i] >= 0;
	}
	return matched;
}

/* Each matched bone hangs from the model bone of its nearest rig ancestor present (the first
 * bone of that name), else is a root; the others hang from the first root. */
static void apply_rig(struct skate_scene *sc, const int32_t *rig)
{
	int32_t present[SKATE_RIG_BONES], first_root = -1;

	for (uint32_t k = 0; k < SKATE_RIG_BONES; k++)
		present[k] = -1;
	for (uint32_t i = sc->n_bones; i-- > 0;) /* downwards: the first bone of a name wins */
		if (rig[i] >= 0)
			present[rig[i]] = (int32_t)i;
	for (uint32_t i = 0; i < sc->n_bones; i++) {
		int32_t p;

		if (rig[i] < 0)
			continue;
		for (p = skate_rig[rig[i]].parent; p >= 0 && present[p] < 0;
		     p = skate_rig[p].parent)
			;
		sc->bones[i].parent = p >= 0 ? present[p] : -1;
		if (p < 0 && first_root < 0)
			first_root = (int32_t)i;
	}
	for (uint32_t i = 0; i < sc->n_bones; i++)
		if (rig[i] < 0)
			sc->bones[i].parent = first_root; /* a matched bone: never i */
}

/* Whether the names match the rig well enough to use it (enum skate_hierarchy). */
static bool rig_fits(uint32_t matched, uint32_t n)
{
	return matched >= SKATE_RIG_MIN_MATCH && 2 * (uint64_t)matched >= n;
}

/* ---- cycles ---- */

/* Break parent cycles iteratively (no recursion): bone 0 first, then the rest in order. */
static void break_cycle(struct skate_scene *sc, uint32_t s0, uint32_t x, struct diag *d)
{
	if (s0 == 0 || x == 0) {
		diag_add(d, "hierarchy: parent cycle through bone %u (\"%.64s\"); made it a root",
			 x, sc->bones[x].name);
		sc->bones[x].parent = -1;
	} else {
		diag_add(d, "hierarchy: parent cycle through bone %u (\"%.64s\"); hung from bone 0",
			 x, sc->bones[x].name);
		sc->bones[x].parent = 0;
	}
}

static enum rc fix_cycles(struct skate_scene *sc, struct diag *d)
{
	uint32_t n = sc->n_bones;
	uint8_t *st = xcalloc_n(n, 1); /* 0 unseen, 1 on the current path, 2 done */
	uint32_t *path = xcalloc_n(n, sizeof *path);

	if (!st || !path) {
		free(st);
		free(path);
		return RC_NOMEM;
	}
	for (uint32_t s0 = 0; s0 < n; s0++) {
		uint32_t len = 0, x = s0;

		while (st[x] != 2) {
			int32_t p = sc->bones[x].parent;

			st[x] = 1;
			path[len++] = x;
			if (p < 0 || (uint32_t)p >= n || st[p] == 2)
				break;
			if (st[p] == 1) {
				break_cycle(sc, s0, x, d);
				break;
			}
			x = (uint32_t)p;
		}
		for (uint32_t i = 0; i < len; i++)
			st[path[i]] = 2;
	}
	free(st);
	free(path);
	return RC_OK;
}

/* ---- entry points ---- */

enum rc skate_hierarchy_build(struct skate_scene *sc, const char *tsv, struct diag *d)
{
	int32_t *rig;
	enum rc r = RC_OK;

	if (!sc->n_bones)
		return RC_OK;
	if (tsv) {
		sc->hierarchy = SKATE_HIER_TSV;
		r = apply_tsv(sc, tsv, d);
		return r == RC_OK ? fix_cycles(sc, d) : r;
	}
	rig = xcalloc_n(sc->n_bones, sizeof *rig);
	if (!rig)
		return RC_NOMEM;
	sc->hier_matched = rig_match(sc, rig);
	if (rig_fits(sc->hier_matched, sc->n_bones)) {
		sc->hierarchy = SKATE_HIER_RIG;
		apply_rig(sc, rig);
		r = fix_cycles(sc, d); /* the rig is a tree; checked anyway */
	} else {
		sc->hier_matched = 0;
	}
	free(rig);
	return r;
}

void skate_hierarchy_text(const struct skate_scene *sc, char out[96])
{
	switch (sc->hierarchy) {
	case SKATE_HIER_TSV:
		snprintf(out, 96, "from the hierarchy file: %u of %u bones listed",
			 sc->hier_matched, sc->n_bones);
		break;
	case SKATE_HIER_RIG:
		snprintf(out, 96, "built-in Skate skater rig: %u of %u bones matched",
			 sc->hier_matched, sc->n_bones);
		break;
	default:
		snprintf(out, 96, "not in the PSG: every bone but 0 hangs from bone 0");
		break;
	}
}
