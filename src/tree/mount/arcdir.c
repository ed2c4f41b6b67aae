/*
 * Archives as directories (arcdir.h, docs/archives.md). Opening reads the header and tables
 * (arc_open) and builds the node tree from the entries' paths: each path is cut at '/' and '\',
 * empty and "." components dropped, every component made a safe name (name_of below), folders
 * made on the way. Entries are typed by their name's extension: assets (.psg .rx2 .psk .pskx
 * .psa) are directories holding their tree, archives (.big, and .psf/.xsf beside their
 * .pst/.xst) directories holding theirs, anything else a file of its unpacked bytes. The
 * tables are permanent (charged to the cache budget); an entry's index and its decoded pieces
 * are cache entries like any rendered piece.
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
#include "tree/mount/arcdir.h"
#include "tree/mount/guid_index.h"

#define NAME_MAX_BYTES 200 /* longer names are cut (and keep a hash and their extension) */
#define NO_PARENT      UINT32_MAX
#define NO_NEXT	       UINT32_MAX   /* ad->next: no file listed after it */
#define HOT_MIN	       (128u << 10) /* indexes with restart points (hot_keep) */

struct anode {
	uint32_t parent;
	uint32_t name; /* offset in names */
	uint32_t kid0, nkids;
	uint8_t type; /* enum an_type */
};

/* What an entry's source reads: one entry of one archive. */
struct arcent {
	struct arcdir *ad;
	uint32_t i;
};

struct arcdir {
	struct tree *t;
	struct arcdir *parent; /* nested: the archive holding this one ... */
	uint32_t parent_node;  /* ... and its node there */
	struct arcent self;    /* nested: the source of this archive's bytes */
	unsigned depth;
	int fd;
	pthread_mutex_t fd_mu; /* fd, fd_users, fd_closing of a folder's archive (fd_acquire) */
	unsigned fd_users;
	bool fd_closing; /* folder.c closed it: the last reader closes fd */
	struct stat st;
	struct src src;
	char *name; /* the archive's file name */
	char *why;  /* could not be opened: why (then only info.txt and errors.txt) */
	struct arc a;
	uint32_t base, owner_slot;
	uint64_t key; /* cache owner of indexes and pieces */
	struct anode *nodes;
	uint32_t n_nodes, n_dirs;
	uint32_t *kids;
	char *names;
	size_t names_len, names_cap;
	size_t renamed, n_bad;
	bool names_oom;
	bool over_budget; /* its tables do not fit the cache budget: why says so */
	atomic_bool changed;
	pthread_mutex_t mu;	  /* d, reported */
	pthread_mutex_t nest_mu;  /* nested (held while one opens: reads, never under mu) */
	pthread_mutex_t build_mu; /* the nodes, built once on first use */
	bool built;
	enum rc build_r;
	struct diag d;
	uint8_t *reported;	/* per entry: its read failure is already in errors.txt */
	struct arcdir **nested; /* per entry node: the archive it holds, once opened */
	uint32_t *next;		/* per entry: the file listed after it in its folder, or NO_NEXT */
	uint64_t heap;
	/* Long compressed entries naming the same stored bytes as an earlier one: {entry, that
	 * one} sorted by entry, made on first use (same_bytes) */
	pthread_mutex_t same_mu;
	atomic_bool same_made;
	uint32_t (*same)[2];
	uint32_t n_same;
};

static void ahead_schedule(struct arcdir *ad, uint32_t i);
struct ixmemo;
static struct ixmemo *hot_get(struct arcdir *ad, uint32_t i, struct cache_ent **pin);
static void hot_keep(struct arcdir *ad, uint32_t i, struct ixmemo *m, struct cache_ent *pin);

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
static void quote_raw(const char *raw, char *out, size_t n)
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
		quote_raw(raw, q, sizeof q);
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

				quote_raw(ad->a.paths + ad->a.e[c - ARCDIR_FIRST].path, q,
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

static bool build(struct arcdir *ad)
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

/* ---- reading the archive and its entries ---- */

/* info.txt and errors.txt say something new: the kernel forgets what it cached of them. */
static void notify_status(struct arcdir *ad)
{
	if (ad->t->on_change && ad->base) {
		ad->t->on_change(ad->t->on_change_ctx, (tree_ino)(ad->base + 1) << 32 | 1);
		ad->t->on_change(ad->t->on_change_ctx, (tree_ino)(ad->base + 2) << 32 | 1);
	}
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static bool arcdir_changed(struct arcdir *ad)
{
	struct stat st;
	bool same;

	if (atomic_load(&ad->changed))
		return true;
	if (ad->parent)
		return arcdir_changed(ad->parent);
	pthread_mutex_lock(&ad->fd_mu); /* folder.c may close it meanwhile */
	same = ad->fd < 0 || (fstat(ad->fd, &st) == 0 && same_file(&st, &ad->st));
	pthread_mutex_unlock(&ad->fd_mu);
	if (same)
		return false;
	if (!atomic_exchange(&ad->changed, true))
		notify_status(ad);
	return true;
}

/* An archive of a folder mount: its descriptor may be closed by the folder's LRU. */
static bool fd_shared(const struct arcdir *ad)
{
	return !ad->parent && ad->owner_slot != 0 && !ad->why;
}

/*
 * Before reading ad's bytes: the descriptor of the archive holding them (ad's, or its outer
 * archive's) open and kept open until fd_release. A folder's archive closed by max_assets is
 * opened again, and must be the same file (else the archive counts as changed). RC_NOFILES
 * when out of descriptors.
 */
static enum rc fd_acquire(struct arcdir *ad)
{
	struct stat st;

	while (ad->parent)
		ad = ad->parent;
	if (!fd_shared(ad))
		return RC_OK;
	pthread_mutex_lock(&ad->fd_mu);
	if (ad->fd < 0) {
		int fd = folder_arc_reopen(ad->t, ad->owner_slot), err = errno;

		if (fd < 0) {
			pthread_mutex_unlock(&ad->fd_mu);
			return err == EMFILE || err == ENFILE ? RC_NOFILES
			       : err == ENOMEM		      ? RC_NOMEM
							      : RC_IO;
		}
		ad->fd = fd;
		if (fstat(fd, &st) != 0 || st.st_ino != ad->st.st_ino ||
		    st.st_dev != ad->st.st_dev || !same_file(&st, &ad->st))
			atomic_store(&ad->changed, true);
	}
	ad->fd_closing = false;
	ad->fd_users++;
	pthread_mutex_unlock(&ad->fd_mu);
	folder_arc_used(ad->t, ad->owner_slot, ad);
	return RC_OK;
}

static void fd_release(struct arcdir *ad)
{
	while (ad->parent)
		ad = ad->parent;
	if (!fd_shared(ad))
		return;
	pthread_mutex_lock(&ad->fd_mu);
	if (--ad->fd_users == 0 && ad->fd_closing) {
		close(ad->fd);
		ad->fd = -1;
		ad->fd_closing = false;
	}
	pthread_mutex_unlock(&ad->fd_mu);
}

bool arcdir_fd_live(struct arcdir *ad)
{
	bool live;

	pthread_mutex_lock(&ad->fd_mu);
	live = ad->fd >= 0 && !ad->fd_closing;
	pthread_mutex_unlock(&ad->fd_mu);
	return live;
}

void arcdir_fd_close(struct arcdir *ad)
{
	pthread_mutex_lock(&ad->fd_mu);
	if (ad->fd >= 0 && ad->fd_users == 0) {
		close(ad->fd);
		ad->fd = -1;
	} else if (ad->fd >= 0) {
		ad->fd_closing = true;
	}
	pthread_mutex_unlock(&ad->fd_mu);
}

static enum rc fd_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct arcdir *ad = ctx;
	uint8_t *p = dst;

	if (atomic_load(&ad->changed) || ad->fd < 0)
		return RC_IO;
	while (n > 0) {
		ssize_t got = pread(ad->fd, p, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return RC_IO;
		p += got;
		off += (uint64_t)got;
		n -= (size_t)got;
	}
	return RC_OK;
}

/* An entry's read failure, once in errors.txt. */
static void report(struct arcdir *ad, uint32_t i, const char *what, enum rc r)
{
	char q[1100];

	quote_raw(ad->a.paths + ad->a.e[i].path, q, sizeof q);
	pthread_mutex_lock(&ad->mu);
	if (ad->reported && !ad->reported[i]) {
		ad->reported[i] = 1;
		if (r == RC_OK) /* what says it all */
			diag_add(&ad->d, "entry %u (%s): %s", i, q, what);
		else
			diag_add(&ad->d, "entry %u (%s): %s: %s", i, q, what, rc_str(r));
	}
	pthread_mutex_unlock(&ad->mu);
	notify_status(ad);
}

struct ixmemo {
	enum rc r;
	struct arc_index *ix;
};

static void ixmemo_free(void *p)
{
	struct ixmemo *m = p;

	arc_index_free(m->ix);
	free(m);
}

/* Entries whose index may cost a decode of the whole entry (restart points): compressed and
 * longer than a piece. */
static bool costly(const struct arc_entry *e)
{
	return !e->bad && e->size > ARC_PIECE_MAX && e->stored != e->size &&
	       e->method != ARC_SECTIONS;
}

static bool same_key(const struct arc_entry *a, const struct arc_entry *b)
{
	return a->off == b->off && a->stored == b->stored && a->size == b->size &&
	       a->method == b->method;
}

/* By the bytes an entry names (then by entry: the first of equals comes first). */
static int same_cmp(const void *x, const void *y, void *ctx)
{
	const struct arc_entry *v = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	const struct arc_entry *a = &v[i], *b = &v[j];

	if (!same_key(a, b)) {
		if (a->off != b->off)
			return a->off < b->off ? -1 : 1;
		if (a->stored != b->stored)
			return a->stored < b->stored ? -1 : 1;
		if (a->size != b->size)
			return a->size < b->size ? -1 : 1;
		return a->method < b->method ? -1 : 1;
	}
	return (i > j) - (i < j);
}

static int pair_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/* The costly entries that repeat an earlier one's bytes, once per archive (sorted copies). */
static void same_make(struct arcdir *ad)
{
	const struct arc_entry *e = ad->a.e;
	uint32_t *v, m = 0, k = 0;

	for (uint32_t i = 0; i < ad->a.n; i++)
		m += costly(&e[i]);
	v = m ? malloc((size_t)m * sizeof *v) : NULL;
	ad->same = m ? malloc((size_t)m * sizeof *ad->same) : NULL;
	if (!v || !ad->same) {
		free(v);
		free(ad->same);
		ad->same = NULL;
		return; /* nothing shared: only costs speed */
	}
	for (uint32_t i = 0; i < ad->a.n; i++)
		if (costly(&e[i]))
			v[k++] = i;
	qsort_r(v, m, sizeof *v, same_cmp, (void *)e);
	for (uint32_t a = 0, b; a < m; a = b) {
		for (b = a + 1; b < m && same_key(&e[v[a]], &e[v[b]]); b++) {
			ad->same[ad->n_same][0] = v[b];
			ad->same[ad->n_same++][1] = v[a];
		}
	}
	free(v);
	qsort(ad->same, ad->n_same, sizeof *ad->same, pair_cmp);
	cache_charge(ad->t->cache, (size_t)m * sizeof *ad->same);
}

/*
 * The entry whose index and pieces entry i uses: the first entry naming the same stored bytes
 * the same way, when entry i is costly. A thousand entries naming one 4 GiB RefPack stream
 * otherwise decoded it whole a thousand times (2.1 s per entry's first byte).
 */
static uint32_t same_bytes(struct arcdir *ad, uint32_t i)
{
	uint32_t lo = 0, hi;

	if (!costly(&ad->a.e[i]))
		return i;
	if (!atomic_load(&ad->same_made)) {
		pthread_mutex_lock(&ad->same_mu);
		if (!atomic_load(&ad->same_made))
			same_make(ad);
		atomic_store(&ad->same_made, true);
		pthread_mutex_unlock(&ad->same_mu);
	}
	hi = ad->n_same;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ad->same[mid][0] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ad->n_same && ad->same[lo][0] == i ? ad->same[lo][1] : i;
}

/* Entry i's index, pinned. quiet (decoding ahead): an index that fails or has anything to
 * report is neither reported nor kept, so errors.txt says only what readers met, in their
 * order, whatever the thread did before them. */
static struct arc_index *index_get(struct arcdir *ad, uint32_t i, struct cache_ent **pin,
				   enum rc *r, bool quiet)
{
	struct cache *c = ad->t->cache;
	uint32_t j = same_bytes(ad, i);
	struct cache_key key = cache_key(ad->key, KEY_WHAT(KEY_ARC_INDEX, j));
	struct ixmemo *m = hot_get(ad, j, pin);

	if (!m)
		m = cache_get(c, key, pin);
	if (!m) {
		struct diag d;

		m = calloc(1, sizeof *m);
		if (!m) {
			*r = RC_NOMEM;
			return NULL;
		}
		diag_init(&d);
		m->r = arc_index_build(&ad->src, &ad->a, j, &m->ix, &d);
		atomic_fetch_add(&ad->t->arc_indexes, 1);
		if (quiet && (m->r != RC_OK || diag_count(&d))) {
			diag_free(&d);
			ixmemo_free(m);
			*r = RC_IO;
			return NULL;
		}
		if (m->r != RC_OK || diag_count(&d)) {
			pthread_mutex_lock(&ad->mu);
			for (size_t k = 0; k < d.n; k++)
				if (!ad->reported[i])
					diag_add(&ad->d, "entry %u: %s", i, d.msg[k]);
			pthread_mutex_unlock(&ad->mu);
		}
		diag_free(&d);
		if (m->r != RC_OK)
			report(ad, i, "cannot index", m->r);
		if (m->r != RC_NOMEM && arcdir_changed(ad)) {
			ixmemo_free(m);
			*r = RC_IO;
			return NULL;
		}
		m = cache_put(c, key, m, sizeof *m + (m->ix ? arc_index_bytes(m->ix) : 0),
			      ixmemo_free, pin);
		if (!m) {
			*r = RC_NOMEM;
			return NULL;
		}
		if (m->r == RC_OK && arc_index_bytes(m->ix) >= HOT_MIN)
			hot_keep(ad, j, m, *pin);
	}
	*r = m->r;
	if (m->r != RC_OK) {
		cache_unpin(c, *pin);
		*pin = NULL;
		return NULL;
	}
	return m->ix;
}

struct piece {
	enum rc r;
	size_t got;
	uint8_t data[];
};

/* Piece k (len bytes) of entry i, pinned; quiet as for index_get. */
static struct piece *piece_get(struct arcdir *ad, uint32_t i, const struct arc_index *ix,
			       uint64_t k, uint64_t len, struct cache_ent **pin, enum rc *r,
			       bool quiet)
{
	struct cache *c = ad->t->cache;
	struct cache_key key =
	    cache_key(ad->key, KEY_WHAT(KEY_ARC_PIECE, (uint64_t)same_bytes(ad, i) << 32 | k));
	struct piece *p = cache_get(c, key, pin), *q;
	bool over;

	if (p)
		return p;
	p = malloc(sizeof *p + (size_t)len);
	if (!p) {
		*r = RC_NOMEM;
		return NULL;
	}
	p->got = 0;
	p->r = arc_piece(&ad->src, ix, k, p->data, &p->got, &over);
	if (p->got > len)
		p->got = (size_t)len;
	atomic_fetch_add(&ad->t->arc_pieces, 1);
	atomic_fetch_add(&ad->t->arc_piece_bytes, p->got);
	if (quiet && (p->r != RC_OK || p->got < len || over)) {
		free(p);
		*r = RC_IO;
		return NULL;
	}
	if (p->r == RC_TRUNCATED) {
		uint64_t poff, plen;
		char what[160];

		arc_piece_span(ix, k, &poff, &plen);
		snprintf(what, sizeof what,
			 "its stored bytes end at byte %llu of the %llu the table claims: reads "
			 "past them fail with EIO",
			 (unsigned long long)(poff + p->got), (unsigned long long)ad->a.e[i].size);
		report(ad, i, what, RC_OK);
	} else if (p->r != RC_OK && p->r != RC_NOMEM) {
		report(ad, i, "cannot decode", p->r);
	} else if (over) { /* served as declared, but said */
		report(ad, i,
		       "a chunk inflates past its declared size (its declared bytes are served)",
		       RC_CORRUPT);
	}
	if (p->r == RC_NOMEM || arcdir_changed(ad)) {
		*r = p->r == RC_NOMEM ? RC_NOMEM : RC_IO;
		free(p);
		return NULL;
	}
	if (p->got < len && (q = realloc(p, sizeof *p + p->got + 1))) /* a lying size */
		p = q;
	p = cache_put(c, key, p, cache_heap_cost(sizeof *p + p->got), NULL, pin);
	if (!p)
		*r = RC_NOMEM;
	return p;
}

/* The piece of entry i holding off, pinned; *at is off's place in it and *take how many of the
 * n bytes asked it holds (all present: a short piece gives its error instead, unless *partial
 * is given: then a short piece holding off gives the bytes it has and sets *partial). */
static struct piece *piece_at(struct arcdir *ad, uint32_t i, const struct arc_index *ix,
			      uint64_t off, size_t n, uint64_t *at, size_t *take,
			      struct cache_ent **pin, enum rc *r, bool quiet, bool *partial)
{
	uint64_t k = arc_piece_at(ix, off), poff, plen;
	struct piece *p;

	if (k >= arc_piece_count(ix) || k > UINT32_MAX) {
		*r = RC_CORRUPT;
		return NULL;
	}
	arc_piece_span(ix, k, &poff, &plen);
	if (off < poff || off - poff >= plen || plen > ARC_PIECE_MAX) {
		*r = RC_CORRUPT;
		return NULL;
	}
	p = piece_get(ad, i, ix, k, plen, pin, r, quiet);
	if (!p)
		return NULL;
	*at = off - poff;
	*take = plen - *at < n ? (size_t)(plen - *at) : n;
	if (partial && p->r == RC_TRUNCATED && p->got > *at && p->got - *at < *take) {
		*take = p->got - (size_t)*at; /* a lying size: the bytes the piece has */
		*partial = true;
	}
	if (*at + *take > p->got) {
		*r = p->r != RC_OK ? p->r : RC_CORRUPT;
		cache_unpin(ad->t->cache, *pin);
		return NULL;
	}
	return p;
}

/* The unpacked bytes of an entry: reads past what the stored bytes really give fail. */
static enum rc entry_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	const struct arcent *e = ctx;
	struct arcdir *ad = e->ad;
	struct cache *c = ad->t->cache;
	struct cache_ent *ipin, *ppin;
	uint8_t *out = dst;
	enum rc r = fd_acquire(ad);
	bool held = r == RC_OK;
	const struct arc_index *ix = held ? index_get(ad, e->i, &ipin, &r, false) : NULL;

	if (!ix) {
		if (held)
			fd_release(ad);
		return r == RC_OK || r == RC_NOMEM || r == RC_NOFILES ? r : RC_IO;
	}
	while (n > 0 && r == RC_OK) {
		uint64_t at;
		size_t take;
		struct piece *p =
		    piece_at(ad, e->i, ix, off, n, &at, &take, &ppin, &r, false, NULL);

		if (!p)
			break;
		memcpy(out, p->data + at, take);
		out += take;
		off += take;
		n -= take;
		cache_unpin(c, ppin);
	}
	cache_unpin(c, ipin);
	fd_release(ad);
	/* A source fails with RC_IO (source.h): parsers read RC_CORRUPT as their own finding. */
	return r == RC_OK || r == RC_NOMEM || r == RC_NOFILES ? r : RC_IO;
}

/* The same bytes as entry_read, as the cached pieces themselves (asset_ext.view); except that
 * where the stored bytes end before the size the table claims (a lying entry), a read that
 * starts before their end gets the bytes up to it (a short read) and one from there fails. */
static enum rc entry_view(void *ctx, uint64_t off, size_t n, struct tree_rdv *v)
{
	const struct arcent *e = ctx;
	struct arcdir *ad = e->ad;
	struct cache *c = ad->t->cache;
	struct cache_ent *ipin, *ppin;
	enum rc r = fd_acquire(ad);
	bool held = r == RC_OK, partial = false;
	const struct arc_index *ix = held ? index_get(ad, e->i, &ipin, &r, false) : NULL;

	if (!ix) {
		if (held)
			fd_release(ad);
		return r;
	}
	if (off == 0 && ad->next && ad->next[e->i] != NO_NEXT)
		ahead_schedule(ad, ad->next[e->i]);
	while (n > 0 && r == RC_OK && !partial) {
		uint64_t at;
		size_t take;
		struct piece *p;

		if (v->n == TREE_RDV_MAX || v->n_pin == TREE_RDV_MAX)
			break; /* more pieces than v holds: the caller copies instead */
		p = piece_at(ad, e->i, ix, off, n, &at, &take, &ppin, &r, false, &partial);
		if (!p)
			break;
		v->pin[v->n_pin++] = ppin;
		v->base[v->n] = p->data + at;
		v->len[v->n++] = take;
		v->total += take;
		off += take;
		n -= take;
	}
	cache_unpin(c, ipin);
	fd_release(ad);
	if (r == RC_TRUNCATED && v->n) { /* the bytes before a lying entry's end: a short read */
		r = RC_OK;
		partial = true;
	}
	if (r != RC_OK || (n > 0 && !partial)) { /* nothing handed out */
		for (unsigned i = 0; i < v->n_pin; i++)
			cache_unpin(c, v->pin[i]);
		v->n = v->n_pin = 0;
		v->total = 0;
	}
	return r;
}

/* ---- decoding ahead ---- */

/*
 * A reader that starts one file of an archive's folder (cp -r, a file manager's copy, find |
 * xargs cat) most likely reads the file listed after it next: its first piece is decoded on a
 * thread of the mount's own meanwhile, into the cache where the reader then finds it, so
 * decoding overlaps the kernel's copying. One job waits at a time and the latest wins: a
 * reader that jumps around costs at most one unused decode per file it starts.
 */
struct arc_ahead {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	pthread_t th;
	bool stop;
	struct arcdir *ad, *busy; /* the job waiting, the one being decoded */
	uint32_t i;
	/* The last costly index built (hot_keep), pinned: its archive's key and its entry. */
	struct ixmemo *hot;
	struct cache_ent *hot_pin;
	uint64_t hot_key;
	uint32_t hot_i;
	size_t hot_held; /* its bytes, held against the budget when the cache did not keep it */
};

/*
 * The index of a long RefPack entry holds up to 32 restart points of 128 KiB, and building it
 * decodes the whole entry. When the cache cannot keep it (a budget under ~4 MiB, or pieces
 * evicting it), a reader going through the entry would rebuild it for every read: 7.7 s
 * instead of 0.47 s for the first 4 MiB of a 200 MiB entry. So the last index that cost a
 * decode stays pinned here until another replaces it: at most one rebuild per sequential
 * pass, and at most one such index beyond what the cache holds (counted against the budget
 * while the cache does not keep it).
 */
static struct ixmemo *hot_get(struct arcdir *ad, uint32_t i, struct cache_ent **pin)
{
	struct arc_ahead *w = atomic_load(&ad->t->arc_ahead);
	struct ixmemo *m = NULL;

	if (!w)
		return NULL;
	pthread_mutex_lock(&w->mu);
	if (w->hot && w->hot_key == ad->key && w->hot_i == i) {
		cache_pin(ad->t->cache, w->hot_pin);
		*pin = w->hot_pin;
		m = w->hot;
	}
	pthread_mutex_unlock(&w->mu);
	return m;
}

static void hot_drop(struct cache *c, struct arc_ahead *w)
{
	cache_release(c, w->hot_held);
	cache_unpin(c, w->hot_pin);
	w->hot = NULL;
	w->hot_pin = NULL;
	w->hot_held = 0;
}

static struct arc_ahead *ahead_of(struct tree *t);

static void hot_keep(struct arcdir *ad, uint32_t i, struct ixmemo *m, struct cache_ent *pin)
{
	struct arc_ahead *w = ahead_of(ad->t);
	struct cache *c = ad->t->cache;

	if (!w)
		return;
	cache_pin(c, pin);
	pthread_mutex_lock(&w->mu);
	if (w->hot)
		hot_drop(c, w);
	w->hot = m;
	w->hot_pin = pin;
	w->hot_key = ad->key;
	w->hot_i = i;
	if (!cache_is_kept(c, pin)) {
		w->hot_held = arc_index_bytes(m->ix);
		cache_hold(c, w->hot_held);
	}
	pthread_mutex_unlock(&w->mu);
}

static void ahead_decode(struct arcdir *ad, uint32_t i)
{
	struct cache_ent *ipin, *ppin;
	uint64_t at;
	size_t take;
	enum rc r = fd_acquire(ad);
	const struct arc_index *ix;

	if (r != RC_OK)
		return;
	ix = index_get(ad, i, &ipin, &r, true);
	if (ix) {
		if (arc_piece_count(ix) > 0 &&
		    piece_at(ad, i, ix, 0, 1, &at, &take, &ppin, &r, true, NULL))
			cache_unpin(ad->t->cache, ppin);
		cache_unpin(ad->t->cache, ipin);
	}
	fd_release(ad);
}

static void *ahead_main(void *arg)
{
	struct arc_ahead *w = arg;
	sigset_t all;

	/* Signals (SIGUSR1 for stats, the unmount signals) go to the daemon's other threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct arcdir *ad;
		uint32_t i;

		while (!w->ad && !w->stop)
			pthread_cond_wait(&w->work, &w->mu);
		if (w->stop)
			break;
		ad = w->ad;
		i = w->i;
		w->ad = NULL;
		w->busy = ad;
		pthread_mutex_unlock(&w->mu);
		ahead_decode(ad, i);
		pthread_mutex_lock(&w->mu);
		w->busy = NULL;
		pthread_cond_broadcast(&w->done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Stop the thread (its waiting job dropped) and free it. */
static void ahead_free(struct tree *t, struct arc_ahead *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	w->ad = NULL;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	if (w->hot)
		hot_drop(t->cache, w);
	pthread_cond_destroy(&w->done);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

/* The tree's worker, started on first use (after daemonising: reads come after it). */
static struct arc_ahead *ahead_of(struct tree *t)
{
	struct arc_ahead *w = atomic_load(&t->arc_ahead), *none = NULL;

	if (w)
		return w;
	w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->done, NULL);
	if (pthread_create(&w->th, NULL, ahead_main, w) != 0) {
		pthread_cond_destroy(&w->done);
		pthread_cond_destroy(&w->work);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return NULL;
	}
	if (!atomic_compare_exchange_strong(&t->arc_ahead, &none, w)) {
		ahead_free(t, w);
		return none;
	}
	return w;
}

static void ahead_schedule(struct arcdir *ad, uint32_t i)
{
	struct arc_ahead *w = ahead_of(ad->t);

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	if (!w->stop) {
		w->ad = ad;
		w->i = i;
		pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&w->mu);
}

/* Before ad goes: its waiting job dropped, its running one finished. */
static void ahead_forget(struct arcdir *ad)
{
	struct arc_ahead *w = atomic_load(&ad->t->arc_ahead);

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	if (w->ad == ad)
		w->ad = NULL;
	while (w->busy == ad)
		pthread_cond_wait(&w->done, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

void arcdir_ahead_stop(struct tree *t)
{
	ahead_free(t, atomic_exchange(&t->arc_ahead, NULL));
}

/* ---- opening ---- */

static void arcdir_init(struct arcdir *ad, struct tree *t)
{
	ad->t = t;
	ad->fd = -1;
	pthread_mutex_init(&ad->mu, NULL);
	pthread_mutex_init(&ad->nest_mu, NULL);
	pthread_mutex_init(&ad->build_mu, NULL);
	pthread_mutex_init(&ad->same_mu, NULL);
	pthread_mutex_init(&ad->fd_mu, NULL);
	diag_init(&ad->d);
}

static uint64_t next_key(void)
{
	static atomic_uint_fast64_t n;

	/* Owners of the cache's keys are asset keys (slot << 32 | gen) and inode numbers
	 * (slot << 32 | node), never 0 in the low word: these never meet them. */
	return (uint64_t)(atomic_fetch_add(&n, 1) + 1) << 32;
}

/*
 * What an archive's tables hold for the mount's lifetime once its folder tree is built: the
 * entries and raw paths (arc_open's heap_bytes), and per entry a node, a child slot, a next
 * link, a report flag, a nested-archive pointer, and its shown name (at most about its path).
 */
static uint64_t tables_cost(const struct arc *a)
{
	return a->heap_bytes +
	       (uint64_t)a->n *
		   (sizeof(struct anode) + 2 * sizeof(uint32_t) + 1 + sizeof(struct arcdir *)) +
	       a->paths_len;
}

/*
 * The tables are data like any other: an archive whose tables need more than what is left of
 * the cache budget (every archive's tables are charged to it for good) is not indexed, unless
 * they take at most TABLES_FREE (small archives under a tiny budget still open: a 1-byte cache
 * reads everything afresh, tables excepted). Its info.txt and errors.txt say so; reading the
 * tables (arc_open) cost their size once, freed at once.
 */
#define TABLES_FREE (1u << 20)

static bool over_budget(struct arcdir *ad, char *why, size_t whylen)
{
	uint64_t need = tables_cost(&ad->a), room = cache_room(ad->t->cache);
	enum arc_kind kind = ad->a.kind;
	bool be = ad->a.big_endian;
	uint32_t n = ad->a.n;

	if (need <= room || need <= TABLES_FREE)
		return false;
	snprintf(why, whylen,
		 "not indexed: its tables (%u entries) need %llu KiB, more than the %llu KiB left "
		 "of cache_size; mount with a larger -o cache_size",
		 n, (unsigned long long)(need + 1023) / 1024, (unsigned long long)room / 1024);
	arc_free(&ad->a);
	memset(&ad->a, 0, sizeof ad->a);
	ad->a.kind = kind;
	ad->a.big_endian = be;
	ad->over_budget = true;
	ad->why = strdup(why);
	diag_add(&ad->d, "%s", why);
	return true;
}

/* Parse the tables (the nodes are built on first use: arcdir_ensure); an archive whose tables
 * cannot be read keeps only info.txt and errors.txt. */
static enum tree_open_fail arcdir_parse(struct arcdir *ad, const struct src *toc, char *why,
					size_t whylen)
{
	enum rc r = arc_open(&ad->src, toc, &ad->a, &ad->d);
	enum tree_open_fail f = TREE_FAIL_NONE;

	ad->key = next_key();
	if (r == RC_OK && ad->a.n >= (1u << 24)) {
		r = RC_UNSUPPORTED;
		arc_free(&ad->a);
	}
	if (r != RC_OK) {
		snprintf(why, whylen, "not a readable archive: %s", rc_str(r));
		f = r == RC_FORMAT  ? TREE_FAIL_FORMAT
		    : r == RC_IO    ? TREE_FAIL_OPEN
		    : r == RC_NOMEM ? TREE_FAIL_OTHER
				    : TREE_FAIL_DAMAGED;
		memset(&ad->a, 0, sizeof ad->a);
		ad->why = strdup(why);
		diag_add(&ad->d, "%s", why);
	} else {
		over_budget(ad, why, whylen);
	}
	for (uint32_t i = 0; i < ad->a.n; i++)
		ad->n_bad += ad->a.e[i].bad != 0;
	ad->reported = calloc(ad->a.n ? ad->a.n : 1, 1);
	ad->nested = calloc(ARCDIR_FIRST + ad->a.n, sizeof *ad->nested);
	if (!ad->reported || !ad->nested) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	ad->heap = ad->a.heap_bytes + ad->a.n * (1 + sizeof *ad->nested);
	if (f != TREE_FAIL_OTHER && folder_arc_adopt(ad->t, ad) != RC_OK) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	cache_charge(ad->t->cache, (size_t)ad->heap);
	return f;
}

/* Entries named after a texture GUID (0x<GUID>.psg) join the mount's GUID index, with their
 * path in the mount and their slot: a model anywhere in the mount finds its textures there. */
static void feed_guids(struct arcdir *ad)
{
	struct guid_index *ix = folder_guid_index(ad->t);
	char path[PATH_MAX];
	uint64_t guid;

	for (uint32_t k = ARCDIR_FIRST; ix && k < ARCDIR_FIRST + ad->a.n; k++)
		if (ad->nodes[k].type == AN_ASSET &&
		    guid_index_name(ad->names + ad->nodes[k].name, &guid) &&
		    folder_slot_mountpath(ad->t, arcdir_slot(ad, k), path, sizeof path))
			guid_index_feed(ix, path, arcdir_slot(ad, k));
}

void arcdir_each_arena(struct arcdir *ad, arcdir_arena_fn fn, void *ctx)
{
	char path[PATH_MAX];

	for (uint32_t k = ARCDIR_FIRST; k < ARCDIR_FIRST + ad->a.n && k < ad->n_nodes; k++) {
		struct arcent e = {ad, k - ARCDIR_FIRST};
		struct src s = {entry_read, &e, ad->a.e[e.i].size};

		if (ad->nodes[k].type != AN_ASSET ||
		    !fmt_name_is(ad->names + ad->nodes[k].name, FMT_PSG) ||
		    !folder_slot_mountpath(ad->t, arcdir_slot(ad, k), path, sizeof path))
			continue;
		fn(ctx, path, arcdir_slot(ad, k), &s);
	}
}

enum rc arcdir_ensure(struct arcdir *ad)
{
	enum rc r;

	pthread_mutex_lock(&ad->build_mu);
	if (!ad->built) {
		size_t before = (size_t)ad->heap;

		ad->built = true;
		ad->build_r = build(ad) && !ad->names_oom ? RC_OK : RC_NOMEM;
		if (ad->build_r == RC_OK)
			ad->build_r = folder_arc_register(ad->t, ad);
		if (ad->build_r == RC_OK)
			feed_guids(ad);
		ad->heap += (uint64_t)ad->n_nodes * (sizeof *ad->nodes + sizeof *ad->kids) +
			    (uint64_t)ad->a.n * sizeof *ad->next + ad->names_cap;
		cache_charge(ad->t->cache, (size_t)ad->heap - before);
	}
	r = ad->build_r;
	pthread_mutex_unlock(&ad->build_mu);
	return r;
}

enum tree_open_fail arcdir_open_fd(struct tree *t, int fd, int toc_fd, const struct stat *st,
				   const char *name, uint32_t owner_slot, struct arcdir **out,
				   char *why, size_t whylen)
{
	struct arcdir *ad = calloc(1, sizeof *ad);
	struct src toc;
	struct stat tst;
	enum tree_open_fail f;

	*out = NULL;
	if (!ad || !(ad->name = strdup(name))) {
		free(ad);
		if (fd >= 0)
			close(fd);
		if (toc_fd >= 0)
			close(toc_fd);
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	arcdir_init(ad, t);
	ad->fd = fd;
	ad->st = *st;
	ad->owner_slot = owner_slot;
	ad->src = (struct src){fd_read, ad, (uint64_t)st->st_size};
	if (toc_fd >= 0 && fstat(toc_fd, &tst) == 0)
		src_init_fd(&toc, &toc_fd, (uint64_t)tst.st_size);
	f = arcdir_parse(ad, toc_fd >= 0 ? &toc : NULL, why, whylen);
	if (toc_fd >= 0)
		close(toc_fd); /* the tables are read: the ATOC is not needed again */
	if (f == TREE_FAIL_OTHER) {
		arcdir_free(ad);
		return f;
	}
	*out = ad;
	return f;
}

/* The first 16 bytes of entry i (false when it has fewer or they cannot be read). */
static bool entry_head(struct arcdir *ad, uint32_t i, uint8_t h[16])
{
	struct arcent e = {ad, i};

	return ad->a.e[i].size >= 16 && entry_read(&e, 0, h, 16) == RC_OK;
}

/*
 * The ATOC table of the stream file at node (an entry index; UINT32_MAX: none): the
 * .pst/.xst entry beside it whose stamp (bytes 8..16) is the collection's, its own
 * (arc_toc_pairs) taken first (docs/streams.md: one table serves a district's collections).
 */
static uint32_t find_toc(struct arcdir *ad, uint32_t node)
{
	const char *name = ad->names + ad->nodes[node].name;
	const struct anode *p = &ad->nodes[ad->nodes[node].parent];
	uint8_t h[16], t[16];
	uint32_t best = UINT32_MAX;

	if (!fmt_name_is(name, FMT_SFIL) || !entry_head(ad, node - ARCDIR_FIRST, h) ||
	    fmt_detect(h, sizeof h, FMT_ARCHIVE) != fmt_row(FMT_SFIL))
		return UINT32_MAX;
	for (uint32_t k = 0; k < p->nkids; k++) {
		uint32_t c = ad->kids[p->kid0 + k];
		const char *cn = ad->names + ad->nodes[c].name;

		if (c < ARCDIR_FIRST || c >= ARCDIR_FIRST + ad->a.n ||
		    !fmt_is_companion_name(cn, FMT_ARCHIVE) ||
		    !entry_head(ad, c - ARCDIR_FIRST, t) || !arc_toc_serves(h, t))
			continue;
		if (best == UINT32_MAX || arc_toc_pairs(name, cn))
			best = c - ARCDIR_FIRST;
	}
	return best;
}

static struct arcdir *open_nested(struct arcdir *ad, uint32_t node, enum rc *r)
{
	struct arcdir *c = calloc(1, sizeof *c);
	const struct anode *nd = &ad->nodes[node];
	uint32_t i = node - ARCDIR_FIRST, toc_i;
	struct arcent *toc_ent = NULL;
	struct src toc;
	char why[256];

	if (!c || !(c->name = strdup(ad->names + nd->name))) {
		free(c);
		*r = RC_NOMEM;
		return NULL;
	}
	arcdir_init(c, ad->t);
	c->parent = ad;
	c->parent_node = node;
	c->depth = ad->depth + 1;
	c->st = ad->st;
	c->st.st_size = (off_t)ad->a.e[i].size;
	c->owner_slot = arcdir_slot(ad, node);
	c->self = (struct arcent){ad, i};
	c->src = (struct src){entry_read, &c->self, ad->a.e[i].size};
	/* A stream file's table: the .pst/.xst beside it with its stamp (find_toc). */
	toc_i = find_toc(ad, node);
	if (toc_i != UINT32_MAX && (toc_ent = malloc(sizeof *toc_ent))) {
		*toc_ent = (struct arcent){ad, toc_i};
		toc = (struct src){entry_read, toc_ent, ad->a.e[toc_i].size};
	}
	if (arcdir_parse(c, toc_ent ? &toc : NULL, why, sizeof why) == TREE_FAIL_OTHER) {
		free(toc_ent);
		arcdir_free(c);
		*r = RC_NOMEM;
		return NULL;
	}
	free(toc_ent);
	return c;
}

struct arcdir *arcdir_nested(struct arcdir *ad, uint32_t node, enum rc *r)
{
	struct arcdir *c;

	if (node >= ad->n_nodes || ad->nodes[node].type != AN_ARCHIVE) {
		*r = RC_NOTDIR;
		return NULL;
	}
	/* Opened under the lock: two first listings of one nested archive make one. */
	pthread_mutex_lock(&ad->nest_mu);
	c = ad->nested[node];
	if (!c) {
		c = open_nested(ad, node, r);
		if (c)
			ad->nested[node] = c;
	}
	pthread_mutex_unlock(&ad->nest_mu);
	return c;
}

void arcdir_free(struct arcdir *ad)
{
	if (!ad)
		return;
	ahead_forget(ad);
	arc_free(&ad->a);
	if (ad->fd >= 0)
		close(ad->fd);
	diag_free(&ad->d);
	pthread_mutex_destroy(&ad->mu);
	pthread_mutex_destroy(&ad->nest_mu);
	pthread_mutex_destroy(&ad->build_mu);
	pthread_mutex_destroy(&ad->same_mu);
	pthread_mutex_destroy(&ad->fd_mu);
	free(ad->same);
	free(ad->nodes);
	free(ad->kids);
	free(ad->names);
	free(ad->reported);
	free(ad->nested); /* nested archives are adopted: freed by the folder layer */
	free(ad->next);
	free(ad->name);
	free(ad->why);
	free(ad);
}

/* ---- nodes ---- */

uint32_t arcdir_span(const struct arcdir *ad)
{
	return ad->n_nodes;
}

void arcdir_set_base(struct arcdir *ad, uint32_t base)
{
	ad->base = base;
}

uint32_t arcdir_slot(const struct arcdir *ad, uint32_t node)
{
	return node == 0 ? ad->owner_slot : ad->base + node;
}

enum an_type arcdir_type(const struct arcdir *ad, uint32_t node)
{
	return node < ad->n_nodes ? (enum an_type)ad->nodes[node].type : 0;
}

static size_t status_text(struct arcdir *ad, bool errors, struct buf *b);

enum rc arcdir_getattr(struct arcdir *ad, uint32_t node, struct tree_stat *out)
{
	const struct anode *nd;
	struct buf b;

	if (node >= ad->n_nodes)
		return RC_NOENT;
	nd = &ad->nodes[node];
	out->nlink = 1;
	out->uid = ad->st.st_uid;
	out->gid = ad->st.st_gid;
	out->atime = ad->st.st_atim;
	out->mtime = ad->st.st_mtim;
	switch (nd->type) {
	case AN_DIR:
	case AN_ASSET:
	case AN_ARCHIVE:
		out->type = TT_DIR;
		out->perm = tree_perm_dir(ad->st.st_mode);
		if (nd->type == AN_DIR) {
			out->size = nd->nkids;
			out->nlink = 2;
		}
		break;
	case AN_FILE:
		out->type = TT_FILE;
		out->perm = tree_perm_file(ad->st.st_mode);
		out->size = ad->a.e[node - ARCDIR_FIRST].size;
		break;
	default: /* info.txt, errors.txt: what they say now */
		out->type = TT_FILE;
		out->perm = tree_perm_file(0444);
		buf_init(&b);
		out->size = status_text(ad, nd->type == AN_ERRORS, &b);
		buf_free(&b);
		break;
	}
	return RC_OK;
}

static uint8_t tt_of(uint8_t type)
{
	return type == AN_DIR || type == AN_ASSET || type == AN_ARCHIVE ? TT_DIR : TT_FILE;
}

enum rc arcdir_list(struct arcdir *ad, uint32_t node, struct tlist *out)
{
	const struct anode *nd;

	if (node >= ad->n_nodes)
		return RC_NOENT;
	nd = &ad->nodes[node];
	if (nd->type != AN_DIR)
		return RC_NOTDIR;
	for (uint32_t k = 0; k < nd->nkids; k++) {
		const struct anode *c = &ad->nodes[ad->kids[nd->kid0 + k]];

		tlist_add_ino(out, (tree_ino)arcdir_slot(ad, ad->kids[nd->kid0 + k]) << 32 | 1,
			      tt_of(c->type), ad->names + c->name);
	}
	/* A nested archive's own bytes, under the entry's name. */
	if (node == 0 && ad->parent)
		tlist_add_ino(out, (tree_ino)ad->owner_slot << 32 | tnode_pack(tn(KIND_OWN, 0, 0)),
			      TT_FILE, ad->name);
	return RC_OK;
}

bool arcdir_entry_name(const struct arcdir *ad, uint32_t node, uint32_t *parent_slot,
		       const char **name)
{
	if (node == 0 || node >= ad->n_nodes)
		return false;
	*parent_slot = arcdir_slot(ad, ad->nodes[node].parent);
	*name = ad->names + ad->nodes[node].name;
	return true;
}

bool arcdir_relpath(const struct arcdir *ad, uint32_t node, char *out, size_t n)
{
	uint32_t chain[256];
	size_t depth = 0, at = 0;

	if (node == 0 || node >= ad->n_nodes)
		return false;
	for (uint32_t k = node; k != 0 && k != NO_PARENT; k = ad->nodes[k].parent) {
		if (depth == sizeof chain / sizeof *chain)
			return false;
		chain[depth++] = k;
	}
	while (depth--) {
		const char *s = ad->names + ad->nodes[chain[depth]].name;
		size_t len = strlen(s);

		if (at + len + 2 > n)
			return false;
		memcpy(out + at, s, len);
		at += len;
		out[at++] = depth ? '/' : '\0';
	}
	return true;
}

uint32_t arcdir_sibling(const struct arcdir *ad, uint32_t node, const char *name)
{
	const struct anode *p;

	if (node == 0 || node >= ad->n_nodes)
		return 0;
	p = &ad->nodes[ad->nodes[node].parent];
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < p->nkids; k++) {
			uint32_t c = ad->kids[p->kid0 + k];
			const char *s = ad->names + ad->nodes[c].name;

			if (c < ARCDIR_FIRST || ad->nodes[c].type == AN_DIR)
				continue;
			if (pass ? strcasecmp(s, name) == 0 : strcmp(s, name) == 0)
				return arcdir_slot(ad, c);
		}
	}
	return 0;
}

/* ---- status files ---- */

/* What info.txt calls an archive kind: its format row's description. */
static const char *kind_name(enum arc_kind k)
{
	const struct fmt_row *r = fmt_of_arc_kind(k);

	return r ? r->desc : "archive";
}

static size_t status_text(struct arcdir *ad, bool errors, struct buf *b)
{
	uint64_t count[ARC_METHODS + 1] = {0}, bytes = 0, files = 0, assets = 0, archives = 0;

	if (errors) {
		pthread_mutex_lock(&ad->mu);
		for (size_t i = 0; i < ad->d.n; i++) {
			buf_puts(b, ad->d.msg[i]);
			buf_putc(b, '\n');
		}
		if (ad->d.dropped)
			buf_printf(b, "(%zu more problems not listed)\n", ad->d.dropped);
		pthread_mutex_unlock(&ad->mu);
		return b->len;
	}
	for (uint32_t i = 0; i < ad->a.n; i++) {
		uint8_t m = ad->a.e[i].method;

		count[m < ARC_METHODS ? m : ARC_METHODS]++; /* the last: unknown */
		bytes += ad->a.e[i].size;
	}
	for (uint32_t k = ARCDIR_FIRST; k < ARCDIR_FIRST + ad->a.n && k < ad->n_nodes; k++) {
		files += ad->nodes[k].type == AN_FILE;
		assets += ad->nodes[k].type == AN_ASSET;
		archives += ad->nodes[k].type == AN_ARCHIVE;
	}
	buf_printf(b, "format: %s\nfile: ",
		   ad->why && !ad->over_budget ? "unreadable archive" : kind_name(ad->a.kind));
	buf_tsv_name(b, ad->name, strlen(ad->name));
	buf_printf(b, "\nsize: %llu\n", (unsigned long long)ad->src.size);
	if (ad->why) {
		buf_puts(b, "status: cannot mount: ");
		buf_tsv_name(b, ad->why, strlen(ad->why));
		buf_putc(b, '\n');
		return b->len;
	}
	buf_printf(b, "byte order: %s\nentries: %u\nfolders: %u\n",
		   ad->a.big_endian ? "big-endian" : "little-endian", ad->a.n, ad->n_dirs);
	for (unsigned m = 0; m <= ARC_METHODS; m++)
		if (count[m])
			buf_printf(b, "entries %s: %llu\n", arc_method_str((uint8_t)m),
				   (unsigned long long)count[m]);
	buf_printf(b,
		   "shown as files: %llu\nshown as assets: %llu\nshown as archives: %llu\n"
		   "unpacked bytes (as the table says): %llu\nbroken entries: %zu\n"
		   "renamed paths: %zu\n",
		   (unsigned long long)files, (unsigned long long)assets,
		   (unsigned long long)archives, (unsigned long long)bytes, ad->n_bad, ad->renamed);
	if (ad->depth)
		buf_printf(b, "nested: depth %u (archives deeper than %u are files)\n", ad->depth,
			   ARCDIR_DEPTH_MAX - 1);
	pthread_mutex_lock(&ad->mu);
	buf_printf(b, "problems: %zu%s\n", diag_count(&ad->d),
		   diag_count(&ad->d) ? " (see errors.txt)" : "");
	pthread_mutex_unlock(&ad->mu);
	if (arcdir_changed(ad))
		buf_puts(b, "status: the archive changed since it was mounted; what was read "
			    "keeps its bytes, anything new fails with EIO\n");
	return b->len;
}

static enum rc stat_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	struct arcdir *ad = c->as->priv;

	(void)part;
	(void)first;
	status_text(ad, c->as->slot == ad->base + 2, &e->b);
	emit_item(e);
	return RC_OK;
}

static enum tree_open_fail stat_mount(struct asset *as, char *why, size_t whylen)
{
	(void)as;
	(void)why;
	(void)whylen;
	return TREE_FAIL_NONE;
}

static const struct tree_kind arcstat_kinds[] = {
    {.what = "status", .type = TT_FILE, .render = stat_render, .status = true},
};

static const struct tree_format tree_format_arcstat = {
    .name = "archive status",
    .kinds = arcstat_kinds,
    .n_kinds = 1,
    .mount = stat_mount,
};

/* ---- assets over entries ---- */

static bool ent_changed(void *ctx)
{
	return arcdir_changed(((struct arcent *)ctx)->ad);
}

static void ent_release(void *ctx)
{
	free(ctx);
}

static enum rc open_status(struct arcdir *ad, uint32_t node, struct asset **out)
{
	struct asset_ext ext = {0};
	struct src none = {0};

	char why[64];
	const char *name = ad->names + ad->nodes[node].name;

	if (asset_open_src(ad->t, arcdir_slot(ad, node), name, &none, &ad->st, ASSET_PLAIN, &ext,
			   out, why, sizeof why) != TREE_FAIL_NONE)
		return RC_NOMEM;
	(*out)->fmt = &tree_format_arcstat;
	(*out)->priv = ad;
	return RC_OK;
}

static enum rc own(struct asset **as, const char *name)
{
	enum rc r = asset_set_own(*as, name);

	if (r != RC_OK)
		*as = NULL; /* closed */
	return r;
}

enum rc arcdir_asset_open(struct arcdir *ad, uint32_t node, struct asset **out)
{
	const struct anode *nd;
	struct arcent *e;
	struct asset_ext ext;
	struct stat st;
	struct src s;
	char logical[4096], rel[4096], why[256];
	uint32_t slot = arcdir_slot(ad, node);
	enum tree_open_fail f;
	enum asset_mode mode;

	*out = NULL;
	if (node >= ad->n_nodes)
		return RC_NOENT;
	nd = &ad->nodes[node];
	if (nd->type == AN_INFO || nd->type == AN_ERRORS)
		return open_status(ad, node, out);
	if (nd->type == AN_DIR || node < ARCDIR_FIRST)
		return RC_ISDIR;
	mode = nd->type == AN_ASSET ? ASSET_LENIENT : ASSET_PLAIN;
	if (!arcdir_relpath(ad, node, rel, sizeof rel))
		snprintf(rel, sizeof rel, "%s", ad->names + nd->name);
	if ((size_t)snprintf(logical, sizeof logical, "%s/%s", ad->name, rel) >= sizeof logical)
		snprintf(logical, sizeof logical, "%s", ad->names + nd->name);
	/* Texture mods: the arena in OUTDIR at the entry's path stands for the entry. */
	if (mode == ASSET_LENIENT && ad->t->mods &&
	    mods_open_asset(ad->t, slot, logical, rel, mode, out, &f, why, sizeof why)) {
		if (f != TREE_FAIL_NONE)
			return f == TREE_FAIL_OTHER ? RC_NOMEM : RC_IO;
		return own(out, ad->names + nd->name);
	}
	e = malloc(sizeof *e);
	if (!e)
		return RC_NOMEM;
	*e = (struct arcent){ad, node - ARCDIR_FIRST};
	s = (struct src){entry_read, e, ad->a.e[e->i].size};
	st = ad->st;
	st.st_size = (off_t)ad->a.e[e->i].size;
	ext = (struct asset_ext){ent_changed, ent_release, entry_view, e};
	f = asset_open_src(ad->t, slot, logical, &s, &st, mode, &ext, out, why, sizeof why);
	if (f != TREE_FAIL_NONE)
		return f == TREE_FAIL_OTHER ? RC_NOMEM : RC_IO;
	return nd->type == AN_FILE ? RC_OK : own(out, ad->names + nd->name);
}

/* ---- the loose view (loose.c): entries addressed by index, never by node ---- */

const struct arc *arcdir_arc(const struct arcdir *ad)
{
	return &ad->a;
}

const char *arcdir_why(const struct arcdir *ad)
{
	return ad->why;
}

_Static_assert(ARCDIR_NAME_BUF >= NAME_MAX_BYTES + 64, "name_of writes up to this much");

size_t arcdir_safe_name(const char *p, size_t n, char *out, bool *changed)
{
	return name_of((const uint8_t *)p, n, out, changed);
}

enum rc arcdir_entry_open(struct arcdir *ad, uint32_t i, uint32_t slot, const char *logical,
			  struct asset **out)
{
	struct arcent *e;
	struct asset_ext ext;
	struct stat st;
	struct src s;
	char why[256];

	*out = NULL;
	if (i >= ad->a.n)
		return RC_NOENT;
	e = malloc(sizeof *e);
	if (!e)
		return RC_NOMEM;
	*e = (struct arcent){ad, i};
	s = (struct src){entry_read, e, ad->a.e[i].size};
	st = ad->st;
	st.st_size = (off_t)ad->a.e[i].size;
	ext = (struct asset_ext){ent_changed, ent_release, entry_view, e};
	switch (asset_open_src(ad->t, slot, logical, &s, &st, ASSET_PLAIN, &ext, out, why,
			       sizeof why)) {
	case TREE_FAIL_NONE:
		return RC_OK;
	case TREE_FAIL_OTHER:
		return RC_NOMEM;
	default:
		return RC_IO;
	}
}
