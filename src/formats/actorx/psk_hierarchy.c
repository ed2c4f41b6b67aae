/*
 * Bone parents for ActorX skeletons that store none (docs/psk-psa.md, "Bone parents"): many
 * exporters write parent 0 for every bone of a PSA, so its animation collapses onto the root.
 * Parents then come from a "bone<TAB>parent" file, or from a PSK whose bone names match.
 * Names compare as ActorX stores them (64 bytes, padded with NULs or spaces), exactly, else
 * ignoring case; lookups go through a sorted index, so hostile counts stay n log n.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/psk.h"

bool psk_bones_flat(const struct psk_bone *b, size_t n)
{
	if (n < 2)
		return false;
	for (size_t i = 1; i < n; i++)
		if (b[i].parent != 0)
			return false;
	return true;
}

/* A name without its padding: its length. */
static size_t bone_len(const uint8_t *name)
{
	size_t n = 0;

	while (n < PSK_NAME_LEN && name[n])
		n++;
	while (n && name[n - 1] == ' ')
		n--;
	return n;
}

static int name_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	size_t n = na < nb ? na : nb;

	for (size_t i = 0; i < n; i++) {
		int ca = a[i] >= 'A' && a[i] <= 'Z' ? a[i] + 32 : a[i];
		int cb = b[i] >= 'A' && b[i] <= 'Z' ? b[i] + 32 : b[i];

		if (ca != cb)
			return ca - cb;
	}
	return (na > nb) - (na < nb);
}

struct bone_ix {
	const uint8_t *name;
	size_t len, idx;
};

static int bone_ix_cmp(const void *x, const void *y)
{
	const struct bone_ix *a = x, *b = y;
	int c = name_cmp(a->name, a->len, b->name, b->len);

	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

static struct bone_ix *index_of(const struct psk_bone *b, size_t n)
{
	struct bone_ix *ix = xcalloc_n(n ? n : 1, sizeof *ix);

	if (!ix)
		return NULL;
	for (size_t i = 0; i < n; i++)
		ix[i] = (struct bone_ix){b[i].name, bone_len(b[i].name), i};
	qsort(ix, n, sizeof *ix, bone_ix_cmp);
	return ix;
}

/* The lowest-numbered bone of that name (ignoring case), or -1. */
static int64_t find(const struct bone_ix *ix, size_t n, const uint8_t *name, size_t len)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (name_cmp(ix[mid].name, ix[mid].len, name, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !name_cmp(ix[lo].name, ix[lo].len, name, len) ? (int64_t)ix[lo].idx : -1;
}

static bool is_root_word(const char *s, size_t n)
{
	return n == 0 || (n == 1 && *s == '-') || (n == 2 && !strncmp(s, "-1", 2)) ||
	       (n == 4 && (!strncasecmp(s, "none", 4) || !strncasecmp(s, "null", 4)));
}

size_t psk_bones_apply_tsv(struct psk_bone *b, size_t n, const char *tsv, struct diag *d)
{
	struct bone_ix *ix = index_of(b, n);
	size_t set = 0, line = 0;

	if (!ix)
		return 0;
	for (const char *p = tsv; p && *p; line++) {
		const char *end = strchr(p, '\n'), *tab;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int64_t bone, parent;

		if (len && p[len - 1] == '\r')
			len--;
		tab = memchr(p, '\t', len);
		if (tab && *p != '#') {
			const char *q = tab + 1;
			size_t ql = len - (size_t)(q - p);

			bone = find(ix, n, (const uint8_t *)p, (size_t)(tab - p));
			parent = is_root_word(q, ql) ? 0 : find(ix, n, (const uint8_t *)q, ql);
			if (bone < 0 || parent < 0) {
				if (line > 0 || bone >= 0) /* the first line may be a header */
					diag_add(d,
						 "hierarchy line %zu: %s not a bone of this file",
						 line + 1, bone < 0 ? "bone" : "parent");
			} else if (bone > 0) {
				b[bone].parent = (int32_t)parent;
				set++;
			}
		}
		p = end ? end + 1 : NULL;
	}
	free(ix);
	return set;
}

size_t psk_bones_match(struct psk_bone *b, size_t n, const struct psk_bone *ref, size_t n_ref,
		       bool apply)
{
	struct bone_ix *mine = index_of(b, n), *theirs = index_of(ref, n_ref);
	size_t matched = 0;

	for (size_t i = 1; mine && theirs && i < n; i++) {
		int64_t j = find(theirs, n_ref, b[i].name, bone_len(b[i].name)), k = -1;

		if (j < 0)
			continue;
		matched++;
		/* The nearest ancestor of j (in the PSK) that this skeleton has, else the root;
		 * at most n_ref steps: a parent cycle in the PSK cannot spin. */
		for (size_t steps = 0; k < 0 && steps < n_ref; steps++) {
			int32_t p = ref[j].parent;

			if (j == 0 || p < 0 || (size_t)p >= n_ref || p == j)
				break;
			j = p;
			k = find(mine, n, ref[j].name, bone_len(ref[j].name));
		}
		if (k == (int64_t)i)
			k = -1; /* its own ancestor (a cycle in the PSK): the root */
		if (apply)
			b[i].parent = k > 0 ? (int32_t)k : 0;
	}
	free(mine);
	free(theirs);
	return matched;
}
