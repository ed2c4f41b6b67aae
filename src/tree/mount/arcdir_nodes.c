/*
 * Archives as directories (arcdir_int.h): entry names made safe, unique, deterministic path
 * components, and the node tree built from the entries' paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/registry.h"
#include "tree/mount/guid_index.h"
#include "tree/mount/arcdir_int.h"

/* ---- names ---- */

static bool names_add(struct arcdir *ad, const char *s, size_t n, uint32_t *at)
{
	bool ok = name_pool_add(&ad->names, &ad->names_len, &ad->names_cap, s, n, at);

	ad->names_oom |= !ok;
	return ok;
}

/* Length of the valid UTF-8 sequence at p (n bytes left) without control characters; 0 if none. */
static size_t utf8_ok(const uint8_t *p, size_t n)
{
	size_t len;
	uint32_t cp;

	if (p[0] < 0x20 || p[0] == 0x7f)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0x80 && cp < 0xa0))
		return 0;
	return len;
}

static uint32_t fnv32(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/*
 * One path component as a safe name: valid UTF-8 without control characters is kept as it is;
 * any other byte becomes %XX; ".." becomes "_.."; a name longer than NAME_MAX_BYTES is cut and
 * gets "~<hash of the raw bytes>" and its extension. Deterministic; *changed when it differs.
 */
static size_t name_of(const uint8_t *p, size_t n, char *out, bool *changed)
{
	char tmp[4 * 256 + 32];
	size_t o = 0, cut = 0;

	*changed = false;
	if (n == 2 && p[0] == '.' && p[1] == '.') {
		*changed = true;
		memcpy(out, "_..", 4);
		return 3;
	}
	if (n <= NAME_MAX_BYTES) { /* the usual name: printable ASCII, kept as it is */
		size_t k = 0;

		while (k < n && p[k] >= 0x20 && p[k] < 0x7f)
			k++;
		if (k == n) {
			memcpy(out, p, n);
			out[n] = '\0';
			return n;
		}
	}
	for (size_t i = 0; i < n && o < sizeof tmp - 8;) {
		size_t k = utf8_ok(p + i, n - i);

		if (k == 0) {
			o += (size_t)snprintf(tmp + o, sizeof tmp - o, "%%%02X", p[i]);
			*changed = true;
			i++;
		} else {
			memcpy(tmp + o, p + i, k);
			o += k;
			i += k;
		}
		if (o <= NAME_MAX_BYTES)
			cut = o; /* the longest whole prefix that fits */
	}
	if (o > NAME_MAX_BYTES || o >= sizeof tmp - 8) {
		const char *dot = memrchr(tmp, '.', o);
		size_t ext = dot && (size_t)(tmp + o - dot) <= 16 ? (size_t)(tmp + o - dot) : 0;
		char ebuf[17];

		memcpy(ebuf, tmp + o - ext, ext);
		if (cut > NAME_MAX_BYTES - 9 - ext)
			cut = NAME_MAX_BYTES - 9 - ext;
		while (cut > 0 && ((uint8_t)tmp[cut] & 0xc0) == 0x80)
			cut--;
		o = cut;
		o += (size_t)snprintf(tmp + o, sizeof tmp - o, "~%08x", fnv32(p, n));
		memcpy(tmp + o, ebuf, ext);
		o += ext;
		*changed = true;
	}
	memcpy(out, tmp, o);
	out[o] = '\0';
	return o;
}

/* A raw path for errors.txt: valid UTF-8 as it is, other bytes as \xHH (diag_add escapes
 * control bytes and backslashes itself). */
void arcdir_quote_raw(const char *raw, char *out, size_t n)
{
	const uint8_t *p = (const uint8_t *)raw;
	size_t len = strlen(raw), o = 0;

	for (size_t i = 0; i < len && o + 8 < n;) {
		size_t k = p[i] < 0x20 || p[i] == 0x7f ? 1 : utf8_ok(p + i, len - i);

		if (k == 0) {
			o += (size_t)snprintf(out + o, n - o, "<%02X>", p[i]);
			i++;
		} else {
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
		}
	}
	out[o] = '\0';
}

/* ---- the node tree ---- */

/* Folders by (parent, name) while the tree is built. */
struct dirmap {
	uint32_t *v; /* node + 1; 0 = empty */
	size_t mask;
};

static uint32_t dir_hash(uint32_t parent, const char *s)
{
	uint32_t h = fnv32((const uint8_t *)s, strlen(s));

	return (h ^ parent) * 0x9e3779b1u;
}

static uint8_t entry_type(const struct arcdir *ad, uint32_t i, const char *name)
{
	if (ad->a.e[i].bad)
		return AN_FILE;
	if (fmt_by_name(name, FMT_ASSET) && !ad->t->opts.assets_files)
		return AN_ASSET;
	if (fmt_by_name(name, FMT_ARCHIVE) && ad->depth + 1 < ARCDIR_DEPTH_MAX)
		return AN_ARCHIVE;
	return AN_FILE;
}

static struct anode *node_push(struct arcdir *ad, size_t *cap)
{
	struct anode *v = xgrow_n(ad->nodes, ad->n_nodes, cap, sizeof *v, 64);

	if (!v)
		return NULL;
	ad->nodes = v;
	memset(&v[ad->n_nodes], 0, sizeof *v);
	return &v[ad->n_nodes++];
}

/* Twice the slots, every folder placed again (paths can hold many folders per entry). */
static bool dirmap_grow(const struct arcdir *ad, struct dirmap *m)
{
	size_t mask = m->mask * 2 + 1;
	uint32_t *v = calloc(mask + 1, sizeof *v);

	if (!v)
		return false;
	for (size_t b = 0; b <= m->mask; b++) {
		const struct anode *d;
		size_t nb;

		if (!m->v[b])
			continue;
		d = &ad->nodes[m->v[b] - 1];
		for (nb = dir_hash(d->parent, ad->names + d->name) & mask; v[nb];
		     nb = (nb + 1) & mask)
			;
		v[nb] = m->v[b];
	}
	free(m->v);
	m->v = v;
	m->mask = mask;
	return true;
}

/* The folder named s under parent, made when new; NO_PARENT on failure. */
static uint32_t dir_get(struct arcdir *ad, struct dirmap *m, size_t *cap, uint32_t parent,
			const char *s, size_t len)
{
	size_t b = dir_hash(parent, s) & m->mask;
	struct anode *nd;
	uint32_t at;

	for (; m->v[b]; b = (b + 1) & m->mask) {
		const struct anode *d = &ad->nodes[m->v[b] - 1];

		if (d->parent == parent && strcmp(ad->names + d->name, s) == 0)
			return m->v[b] - 1;
	}
	if (ad->n_dirs >= m->mask / 2) {
		if (!dirmap_grow(ad, m))
			return NO_PARENT;
		for (b = dir_hash(parent, s) & m->mask; m->v[b]; b = (b + 1) & m->mask)
			;
	}
	if (!names_add(ad, s, len, &at) || !(nd = node_push(ad, cap)))
		return NO_PARENT;
	nd->parent = parent;
	nd->name = at;
	nd->type = AN_DIR;
	ad->n_dirs++;
	m->v[b] = ad->n_nodes; /* the node's index + 1 */
	return ad->n_nodes - 1;
}

static bool is_sep(char c)
{
	return c == '/' || c == '\\';
}

/* The last component that names something: trailing separators and "." skipped. */
static void last_comp(const char *raw, size_t n, size_t *ls, size_t *le)
{
	size_t e = n, st;

	for (;;) {
		while (e > 0 && is_sep(raw[e - 1]))
			e--;
		for (st = e; st > 0 && !is_sep(raw[st - 1]); st--)
			;
		if (e - st == 1 && raw[st] == '.') {
			e = st;
			continue;
		}
		*ls = st;
		*le = e;
		return;
	}
}

/* What placing an entry needs from one call to the next: the folders of the previous entry's
 * path, which the next one (tables are mostly in folder order) usually shares. */
struct placer {
	struct dirmap m;
	size_t cap;
	bool valid;
	const char *raw; /* the previous prefix (its first len bytes) */
	size_t len;
	uint32_t parent;
	bool renamed;
	size_t jlen;
	char joined[1024]; /* the prefix as shown, '/'-separated, NUL-terminated */
};

/* The folders of raw[0..ls): made as needed; pl's prefix state set. False: out of memory. */
static bool walk_prefix(struct arcdir *ad, struct placer *pl, const char *raw, size_t ls)
{
	const uint8_t *p = (const uint8_t *)raw;
	char name[NAME_MAX_BYTES + 64];
	size_t start = 0;
	bool changed;

	pl->parent = 0;
	pl->renamed = false;
	pl->jlen = 0;
	pl->joined[0] = '\0';
	for (size_t k = 0; k < ls; k++) {
		size_t len;

		if (!is_sep(raw[k]))
			continue;
		if (k == start || (k == start + 1 && p[start] == '.')) { /* "", "." dropped */
			start = k + 1;
			continue;
		}
		len = name_of(p + start, k - start, name, &changed);
		pl->renamed |= changed;
		pl->parent = dir_get(ad, &pl->m, &pl->cap, pl->parent, name, len);
		if (pl->parent == NO_PARENT)
			return false;
		if (pl->jlen + len + 2 < sizeof pl->joined) {
			memcpy(pl->joined + pl->jlen, name, len);
			pl->jlen += len;
			pl->joined[pl->jlen++] = '/';
			pl->joined[pl->jlen] = '\0';
		} else {
			pl->renamed = true;
		}
		start = k + 1;
	}
	pl->raw = raw;
	pl->len = ls;
	pl->valid = true;
	return true;
}

/* Place entry i: its folders made, its own node named and typed. */
static bool place(struct arcdir *ad, struct placer *pl, uint32_t i)
{
	const char *raw = ad->a.paths + ad->a.e[i].path;
	size_t n = strlen(raw), ls, le, len, jlen;
	char name[NAME_MAX_BYTES + 64], joined[1024 + NAME_MAX_BYTES + 64];
	bool changed = false, renamed;
	struct anode *nd;

	last_comp(raw, n, &ls, &le);
	if (!pl->valid || ls != pl->len || memcmp(raw, pl->raw, ls) != 0)
		if (!walk_prefix(ad, pl, raw, ls))
			return false;
	if (le > ls)
		len = name_of((const uint8_t *)raw + ls, le - ls, name, &changed);
	else
		len = (size_t)snprintf(name, sizeof name, "_unnamed_%u", i);
	memcpy(joined, pl->joined, pl->jlen);
	memcpy(joined + pl->jlen, name, len + 1);
	jlen = pl->jlen + len;
	renamed = pl->renamed || changed || le == ls || jlen != n || memcmp(joined, raw, n) != 0;
	nd = &ad->nodes[ARCDIR_FIRST + i];
	nd->parent = pl->parent;
	if (!names_add(ad, name, len, &nd->name))
		return false;
	nd->type = entry_type(ad, i, name);
	if (renamed) {
		char q[1100];

		ad->renamed++;
		arcdir_quote_raw(raw, q, sizeof q);
		diag_add(&ad->d, "entry %u: path %s shown as %s", i, q, joined);
	}
	return true;
}

/* Children lists of every folder, in node order. */
static bool link_kids(struct arcdir *ad)
{
	uint32_t n = ad->n_nodes, *fill;

	ad->kids = calloc(n ? n : 1, sizeof *ad->kids);
	fill = calloc(n ? n : 1, sizeof *fill);
	if (!ad->kids || !fill) {
		free(fill);
		return false;
	}
	for (uint32_t k = 1; k < n; k++)
		ad->nodes[ad->nodes[k].parent].nkids++;
	for (uint32_t k = 0, at = 0; k < n; k++) {
		ad->nodes[k].kid0 = at;
		at += ad->nodes[k].nkids;
	}
	for (uint32_t k = 1; k < n; k++) {
		struct anode *p = &ad->nodes[ad->nodes[k].parent];

		ad->kids[p->kid0 + fill[ad->nodes[k].parent]++] = k;
	}
	free(fill);
	return true;
}

static int kid_cmp(const void *x, const void *y, void *ctx)
{
	const struct arcdir *ad = ctx;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int c = strcmp(ad->names + ad->nodes[a].name, ad->names + ad->nodes[b].name);

	return c ? c : (a > b) - (a < b);
}

static bool is_entry(const struct arcdir *ad, uint32_t node)
{
	return node >= ARCDIR_FIRST && node - ARCDIR_FIRST < ad->a.n;
}

/* In one folder's kids v (in listing order): each file entry's next file (decoding ahead). */
static void link_next(struct arcdir *ad, const uint32_t *v, uint32_t n)
{
	uint32_t prev = NO_PARENT;

	for (uint32_t k = 0; k < n; k++) {
		if (!is_entry(ad, v[k]) || ad->nodes[v[k]].type != AN_FILE)
			continue;
		if (prev != NO_PARENT)
			ad->next[prev - ARCDIR_FIRST] = v[k] - ARCDIR_FIRST;
		prev = v[k];
	}
}

/* Every folder's kids in listing order: each file entry is linked to the file listed after
 * it, and equal names, listed with ~2, ~3... (tlist_finish, by inode order, which is node
 * order), say which entries that renames. */
static bool order_kids(struct arcdir *ad)
{
	uint32_t *v = malloc((size_t)ad->n_nodes * sizeof *v + 1);

	ad->next = malloc((size_t)ad->a.n * sizeof *ad->next + 1);
	if (!v || !ad->next) {
		free(v);
		return false;
	}
	for (uint32_t i = 0; i < ad->a.n; i++)
		ad->next[i] = NO_NEXT;
	for (uint32_t d = 0; d < ad->n_nodes; d++) {
		const struct anode *nd = &ad->nodes[d];

		if (nd->type != AN_DIR || nd->nkids < 2)
			continue;
		memcpy(v, ad->kids + nd->kid0, nd->nkids * sizeof *v);
		qsort_r(v, nd->nkids, sizeof *v, kid_cmp, ad);
		link_next(ad, v, nd->nkids);
		for (uint32_t k = 1; k < nd->nkids; k++) {
			uint32_t c = v[k];

			if (strcmp(ad->names + ad->nodes[c].name,
				   ad->names + ad->nodes[v[k - 1]].name))
				continue;
			if (is_entry(ad, c)) {
				char q[1100];

				arcdir_quote_raw(ad->a.paths + ad->a.e[c - ARCDIR_FIRST].path, q,
						 sizeof q);
				diag_add(
				    &ad->d,
				    "entry %u: path %s: its name is taken in its folder (listed "
				    "with a ~N suffix)",
				    c - ARCDIR_FIRST, q);
			} else {
				diag_add(
				    &ad->d,
				    "folder %s: its name is taken by an entry (listed with a ~N "
				    "suffix)",
				    ad->names + ad->nodes[c].name);
			}
			ad->renamed++;
		}
	}
	free(v);
	return true;
}

bool arcdir_build(struct arcdir *ad)
{
	struct placer *pl = calloc(1, sizeof *pl);
	size_t want = 64;
	bool ok = true;

	while (want < (size_t)ad->a.n / 4 + 64)
		want *= 2;
	if (!pl || !(pl->m.v = calloc(want, sizeof *pl->m.v))) {
		free(pl);
		return false;
	}
	pl->m.mask = want - 1;
	for (unsigned k = 0; k < ARCDIR_FIRST + ad->a.n && ok; k++)
		ok = node_push(ad, &pl->cap) != NULL;
	if (ok) {
		/* Each name goes straight into its node: a failed names_add leaves no
		 * node holding an offset it never wrote. */
		ad->nodes[0] = (struct anode){NO_PARENT, 0, 0, 0, AN_DIR};
		ad->nodes[1] = (struct anode){0, 0, 0, 0, AN_INFO};
		ad->nodes[2] = (struct anode){0, 0, 0, 0, AN_ERRORS};
		ok = names_add(ad, "", 0, &ad->nodes[0].name) &&
		     names_add(ad, "info.txt", 8, &ad->nodes[1].name) &&
		     names_add(ad, "errors.txt", 10, &ad->nodes[2].name);
	}
	for (uint32_t i = 0; ok && i < ad->a.n; i++)
		ok = place(ad, pl, i);
	free(pl->m.v);
	free(pl);
	ok = ok && link_kids(ad) && order_kids(ad);
	if (ok && ad->n_nodes)
		ad->nodes = xshrink_n(ad->nodes, ad->n_nodes, sizeof *ad->nodes);
	return ok;
}

/* The loose view (loose.c) names its entries' path components as the tree does. */
_Static_assert(ARCDIR_NAME_BUF >= NAME_MAX_BYTES + 64, "name_of writes up to this much");

size_t arcdir_safe_name(const char *p, size_t n, char *out, bool *changed)
{
	return name_of((const uint8_t *)p, n, out, changed);
}
