/*
 * The loose view of a game folder (loose.h, docs/archives.md "The loose view"). At mount the
 * folder is walked by name (links never followed, each folder once), every regular file named
 * .big has its tables read (arcdir_open_fd: header and directory, never an entry's data), and
 * the paths of its entries, mapped to where the game loads them (loose_game_path), become the
 * nodes of one namespace together with OUTDIR's files. The folder layer lists the game
 * folder's own files and asks loose_merge what to add to each listing; everything else about
 * the view's nodes (attributes, listings of folders only the archives have, the bytes of an
 * entry through the archive's index and pieces) is answered here from the nodes, which never
 * change after mount and need no lock.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/registry.h"
#include "tree/mount/arcdir.h"
#include "tree/mount/loose.h"

#include "tree/mount/loose_int.h"

static const struct container_ops loose_container;

struct loose *loose_open(struct tree *t, int root_fd, const struct loose_host *host, char *why,
			 size_t whylen)
{
	struct loose *L = calloc(1, sizeof *L);

	if (!L) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	L->t = t;
	L->host = host;
	L->root_fd = root_fd;
	L->mods_fd = -1;
	L->max_open = t->opts.max_assets ? t->opts.max_assets : 128; /* folder.c's default */
	pthread_mutex_init(&L->mu, NULL);
	if (loose_build(L, root_fd) != RC_OK) {
		snprintf(why, whylen, "out of memory");
		loose_free(L);
		return NULL;
	}
	L->base = L->n ? host->slots_take(t, L->n) : 0;
	if (L->n && (!L->base ||
		     container_add(t, L->base, L->base + L->n - 1, &loose_container, L) != RC_OK)) {
		snprintf(why, whylen, "out of inode numbers");
		loose_free(L);
		return NULL;
	}
	if (L->heap > L->charged)
		cache_charge(t->cache, L->heap - L->charged);
	return L;
}

void loose_free(struct loose *L)
{
	if (!L)
		return;
	for (size_t i = 0; i < L->n_arcs; i++)
		free(L->arcs[i].path);
	for (size_t i = 0; i < L->n_mods; i++)
		free(L->mods[i].path);
	if (L->mods_fd >= 0)
		close(L->mods_fd);
	free(L->arcs);
	free(L->mods);
	free(L->hidden);
	free(L->nodes);
	free(L->kids);
	free(L->names);
	free(L->map);
	free(L->arc_at);
	pthread_mutex_destroy(&L->mu);
	free(L);
}

/* ---- requests ---- */

bool loose_hides(const struct loose *L, const struct stat *st)
{
	struct fid key = {st->st_dev, st->st_ino};

	return S_ISREG(st->st_mode) && L->n_hidden &&
	       bsearch(&key, L->hidden, L->n_hidden, sizeof key, loose_fid_cmp) != NULL;
}

static uint32_t node_of(const struct loose *L, uint32_t slot)
{
	return slot > L->base && slot - L->base < L->n ? slot - L->base : NO_NODE;
}

bool loose_owns(const struct loose *L, uint32_t slot)
{
	return node_of(L, slot) != NO_NODE;
}

bool loose_is_dir(const struct loose *L, uint32_t slot)
{
	uint32_t k = node_of(L, slot);

	return k != NO_NODE && L->nodes[k].kind == LN_DIR;
}

/* The child of folder node dir named name, or NO_NODE. */
static uint32_t kid_named(const struct loose *L, uint32_t dir, const char *name, size_t len)
{
	const struct lnode *d = &L->nodes[dir];
	size_t lo = 0, hi = d->nkids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *s = L->names + L->nodes[L->kids[d->kid0 + mid]].name;
		int c = strncmp(name, s, len);

		if (c == 0 && s[len] != '\0')
			c = -1;
		if (c == 0)
			return L->kids[d->kid0 + mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NO_NODE;
}

/* The folder node at path ("" = the root), or NO_NODE. */
static uint32_t dir_at(const struct loose *L, const char *path)
{
	uint32_t k = 0;

	while (*path && k != NO_NODE) {
		const char *slash = strchr(path, '/');
		size_t len = slash ? (size_t)(slash - path) : strlen(path);

		k = kid_named(L, k, path, len);
		if (k != NO_NODE && L->nodes[k].kind != LN_DIR)
			k = NO_NODE;
		path += len + (slash != NULL);
	}
	return k;
}

static void add_node(const struct loose *L, uint32_t k, struct tlist *out)
{
	tlist_add_ino(out, (tree_ino)(L->base + k) << 32 | 1,
		      L->nodes[k].kind == LN_DIR ? TT_DIR : TT_FILE, L->names + L->nodes[k].name);
}

enum rc loose_list(struct tree *t, struct loose *L, uint32_t slot, struct tlist *out)
{
	uint32_t k = node_of(L, slot);
	const struct lnode *d;

	(void)t;
	if (k == NO_NODE)
		return RC_NOENT;
	d = &L->nodes[k];
	if (d->kind != LN_DIR)
		return RC_NOTDIR;
	for (uint32_t i = 0; i < d->nkids; i++)
		add_node(L, L->kids[d->kid0 + i], out);
	return out->oom ? RC_NOMEM : RC_OK;
}

static int ent_cmp(const void *x, const void *y, void *ctx)
{
	const struct tlist *l = ctx;

	return strcmp(l->names + l->v[*(const size_t *)x].name,
		      l->names + l->v[*(const size_t *)y].name);
}

/* The folder's own entries (the listing so far) by name, and the view's children of the same
 * folder (sorted too) walked together: a name both have stays the folder's, unless the view's
 * is a file of OUTDIR, which takes its place. */
enum rc loose_merge(struct tree *t, struct loose *L, uint32_t dir_slot, struct tlist *out)
{
	char path[PATH_MAX];
	size_t real = out->n, *by = NULL, i = 0;
	bool dropped = false;
	const struct lnode *d;
	uint32_t k;

	if (dir_slot == 0)
		path[0] = '\0';
	else if (!tree_slot_relpath(t, dir_slot, path, sizeof path))
		return RC_OK; /* deeper than any path the view holds */
	k = dir_at(L, path);
	if (k == NO_NODE)
		return RC_OK;
	d = &L->nodes[k];
	if (real && !(by = xcalloc_n(real, sizeof *by)))
		return RC_NOMEM;
	for (size_t r = 0; r < real; r++)
		by[r] = r;
	if (real > 1)
		qsort_r(by, real, sizeof *by, ent_cmp, out);
	for (uint32_t j = 0; j < d->nkids; j++) {
		uint32_t c = L->kids[d->kid0 + j];
		const char *name = L->names + L->nodes[c].name;
		int cmp = 1;

		while (i < real && (cmp = strcmp(out->names + out->v[by[i]].name, name)) < 0)
			i++;
		if (i < real && cmp == 0) {
			if (L->nodes[c].kind != LN_MOD)
				continue;
			out->v[by[i]].ino = 0;
			dropped = true;
		}
		add_node(L, c, out);
	}
	free(by);
	if (dropped) {
		size_t w = 0;

		for (size_t r = 0; r < out->n; r++)
			if (out->v[r].ino)
				out->v[w++] = out->v[r];
		out->n = w;
	}
	return out->oom ? RC_NOMEM : RC_OK;
}

enum rc loose_getattr(struct tree *t, struct loose *L, uint32_t slot, struct tree_stat *out)
{
	uint32_t k = node_of(L, slot);
	const struct lnode *nd;
	const struct stat *st;

	if (k == NO_NODE)
		return RC_NOENT;
	nd = &L->nodes[k];
	st = nd->kind == LN_ENTRY ? &L->arcs[nd->src].st
	     : nd->kind == LN_MOD ? &L->mods[nd->src].st
				  : L->host->root_stat(t->fold);
	out->nlink = 1;
	out->uid = st->st_uid;
	out->gid = st->st_gid;
	out->atime = st->st_atim;
	out->mtime = st->st_mtim;
	if (nd->kind == LN_DIR) {
		out->type = TT_DIR;
		out->perm = tree_perm_folder(st->st_mode);
		return RC_OK;
	}
	out->type = TT_FILE;
	out->perm = tree_perm_file(st->st_mode);
	out->size = nd->kind == LN_MOD ? (uint64_t)st->st_size
				       : arcdir_arc(L->arcs[nd->src].ad)->e[nd->idx].size;
	return RC_OK;
}

static void box_free(void *p)
{
	asset_close(p);
}

static enum rc open_node(struct tree *t, struct loose *L, uint32_t k, uint32_t slot,
			 struct asset **out)
{
	const struct lnode *nd = &L->nodes[k];
	const struct lmod *m;
	char why[256];
	enum tree_open_fail f;

	if (nd->kind == LN_ENTRY)
		return arcdir_entry_open(L->arcs[nd->src].ad, nd->idx, slot, L->names + nd->name,
					 out);
	m = &L->mods[nd->src];
	f = asset_open(t, slot, L->mods_fd, m->path, &m->st, ASSET_PLAIN, out, why, sizeof why);
	if (f == TREE_FAIL_OTHER)
		return errno == EMFILE || errno == ENFILE ? RC_NOFILES : RC_NOMEM;
	return f == TREE_FAIL_NONE ? RC_OK : RC_IO;
}

struct asset *loose_asset_get(struct tree *t, struct loose *L, uint32_t slot,
			      struct cache_ent **pin, enum rc *r)
{
	struct cache_key key = cache_key((uint64_t)slot << 32, KEY_WHAT(KEY_ASSET, 0));
	uint32_t k = node_of(L, slot);
	struct asset *as;

	*pin = NULL;
	if (k == NO_NODE || L->nodes[k].kind == LN_DIR) {
		*r = k == NO_NODE ? RC_NOENT : RC_ISDIR;
		return NULL;
	}
	as = cache_get(t->cache, key, pin);
	if (as)
		return as;
	*r = open_node(t, L, k, slot, &as);
	if (*r != RC_OK)
		return NULL;
	as = cache_put(t->cache, key, as, atomic_load(&as->bytes), box_free, pin);
	if (!as)
		*r = RC_NOMEM;
	else if (!as->ent)
		as->ent = *pin;
	return as;
}

/* ---- the view as a container (tree_int.h, struct container_ops): its range of slots ---- */

static enum cslot lv_kind(struct tree *t, const struct cref *r)
{
	(void)t;
	if (!loose_owns(r->c, r->slot))
		return CS_NONE;
	return loose_is_dir(r->c, r->slot) ? CS_DIR : CS_ASSET;
}

static enum rc lv_getattr(struct tree *t, const struct cref *r, tree_ino ino, struct tree_stat *out)
{
	(void)ino;
	return loose_getattr(t, r->c, r->slot, out);
}

static enum rc lv_list(struct tree *t, const struct cref *r, struct tlist *out)
{
	return loose_list(t, r->c, r->slot, out);
}

static struct asset *lv_asset_get(struct tree *t, const struct cref *r, struct cache_ent **pin,
				  enum rc *rc)
{
	return loose_asset_get(t, r->c, r->slot, pin, rc);
}

/* Plain files only: no namespace asks for a file's neighbours, so no sibling operations. */
static const struct container_ops loose_container = {
    .name = "loose",
    .kind = lv_kind,
    .getattr = lv_getattr,
    .list = lv_list,
    .asset_get = lv_asset_get,
};
