/*
 * The district view's base (ns_district_int.h): what its parts share. The files of the set
 * beside the map (the siblings), the manifests and the scan (needs), the arenas of the
 * collection files, and the objects' decode as the scene and the text files peek at it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "tree/mount/arcdir.h"
#include "tree/world/ns_district_int.h"

/* ---- the files beside the map ---- */

/* One opened sibling: an asset of the mount (pinned), or a descriptor of its own. */
struct sib {
	struct tree *t;
	struct cache_ent *pin;
	int fd;
};

static enum rc sib_fd(int fd, struct sib *h, struct src *s)
{
	struct stat st;

	if (fd < 0)
		return errno == ENOENT ? RC_NOENT : RC_IO;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return RC_IO;
	}
	h->fd = fd;
	src_init_fd(s, &h->fd, (uint64_t)st.st_size);
	return RC_OK;
}

/* Folder mounts: the folder layer's sibling. A file's bytes are its asset's source (a plain
 * file, or the file under the tree any format shows of it); a collection file shown as an
 * archive is read through its own descriptor. */
static enum rc sib_folder(struct asset *as, const char *name, struct sib *h, struct src *s)
{
	uint32_t slot = tree_slot_sibling(as->t, as->slot, name);
	struct asset *a;
	enum rc r;

	if (!slot)
		return RC_NOENT;
	a = tree_asset_get(as->t, slot, &h->pin, &r);
	if (a && a->fmt == &tree_format_broken) { /* it explains itself; its bytes are not read */
		tree_asset_put(as->t, h->pin);
		return RC_IO;
	}
	if (a) {
		*s = a->src;
		return RC_OK;
	}
	if (r != RC_ISDIR)
		return r == RC_NOENT ? RC_IO : r;
	/* an archive file: opened again by the folder layer that holds it */
	if (!as->t->arc_host || !as->t->arc_host->reopen)
		return RC_IO;
	return sib_fd(as->t->arc_host->reopen(as->t, slot), h, s);
}

/* Single-file mounts: the file of that name (exact, else ignoring case) in the map's own
 * directory. */
static enum rc sib_beside(struct asset *as, const char *name, struct sib *h, struct src *s)
{
	const char *slash = strrchr(as->path, '/');
	char *dir = slash ? strndup(as->path, (size_t)(slash - as->path) + 1) : strdup("./");
	char *path = NULL, *found = NULL;
	struct dirent *de;
	DIR *d;
	int fd;

	if (!dir)
		return RC_NOMEM;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, name) == 0) {
			free(found);
			found = strdup(de->d_name);
			break;
		}
		if (!found && strcasecmp(de->d_name, name) == 0)
			found = strdup(de->d_name);
	}
	if (d)
		closedir(d);
	if (!found || asprintf(&path, "%s%s", dir, found) < 0)
		path = NULL;
	free(dir);
	free(found);
	if (!path)
		return RC_NOENT;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	free(path);
	return sib_fd(fd, h, s);
}

static enum rc sib_open(void *ctx, const char *name, struct src *s, void **hp)
{
	struct asset *as = ctx;
	struct sib *h = calloc(1, sizeof *h);
	enum rc r;

	if (!h)
		return RC_NOMEM;
	h->t = as->t;
	h->fd = -1;
	r = as->t->fold ? sib_folder(as, name, h, s) : sib_beside(as, name, h, s);
	if (r != RC_OK) {
		free(h);
		return r;
	}
	*hp = h;
	return RC_OK;
}

static void sib_close(void *ctx, void *hp)
{
	struct sib *h = hp;

	(void)ctx;
	if (h->pin)
		tree_asset_put(h->t, h->pin);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}

/* ---- needs ---- */

static void manifests_free(void *p)
{
	dist_free(p);
	free(p);
}

enum rc nd_load_manifests(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	struct dist_io io = {as, sib_open, sib_close};
	struct district *m = calloc(1, sizeof *m);
	enum rc r;

	(void)arg;
	if (!m)
		return RC_NOMEM;
	r = dist_load(m, as->name, &as->src, &io);
	if (r != RC_OK) {
		manifests_free(m);
		return r;
	}
	*data = m;
	*bytes = dist_heap(m);
	*dtor = manifests_free;
	return RC_OK;
}

const struct district *nd_manifests(struct asset *as, enum rc *r)
{
	return asset_perm(as, 0, nd_load_manifests, r);
}

static void scan_free(void *p)
{
	dist_scan_free(p);
	free(p);
}

enum rc nd_load_scan(struct asset *as, uint64_t arg, void **data, size_t *bytes,
		     void (**dtor)(void *))
{
	struct dist_io io = {as, sib_open, sib_close};
	const struct district *m;
	struct dist_scan *s;
	enum rc r;

	(void)arg;
	if (!(m = nd_manifests(as, &r)))
		return r;
	if (!(s = calloc(1, sizeof *s)))
		return RC_NOMEM;
	r = dist_scan(s, m, &io);
	if (r != RC_OK) {
		scan_free(s);
		return r;
	}
	*data = s;
	*bytes = sizeof *s + diag_heap_bytes(&s->d) + diag_heap_bytes(&s->lint);
	*dtor = scan_free;
	return RC_OK;
}

/* The objects (what: OBJ_ALL, or OBJ_PLACED), pinned (NULL without a folder layer). */
const struct dist_objects *nd_objects_peek(struct asset *as, unsigned what, struct cache_ent **ent,
					   enum rc *r)
{
	*ent = NULL;
	*r = RC_OK;
	if (!as->t->fold)
		return NULL;
	return asset_need(as, ND_OBJECTS, what, ent, r);
}

/* ---- the arenas of the collection files ---- */

bool nd_is_arena_name(const char *name)
{
	return name_has_ext(name, (const char *const[]){".psg", ".rx2", NULL});
}

static int arena_cmp(const void *x, const void *y)
{
	return strcmp(((const struct nd_arena_ent *)x)->name,
		      ((const struct nd_arena_ent *)y)->name);
}

static bool slot_seen(struct nd_slot_set *s, uint32_t slot, bool *oom)
{
	size_t h;

	if ((s->n + 1) * 2 > s->cap) {
		struct nd_slot_set g = {xcalloc_n(s->cap ? s->cap * 2 : 64, sizeof *g.v),
					s->cap ? s->cap * 2 : 64, 0};

		if (!g.v) {
			*oom = true;
			return true;
		}
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i])
				(void)slot_seen(&g, s->v[i] - 1, oom);
		free(s->v);
		*s = g;
	}
	for (h = (slot * 0x9E3779B1u) & (s->cap - 1); s->v[h]; h = (h + 1) & (s->cap - 1))
		if (s->v[h] == slot + 1)
			return true;
	s->v[h] = slot + 1;
	s->n++;
	return false;
}

/* The arenas of the collection file `file` beside the map, sorted by name (*e, *n; names
 * point into *l, which the caller discards). RC_NOENT when there is no such file; RC_EXISTS
 * when seen already walked it. */
enum rc nd_collection_arenas(struct asset *as, const char *file, struct nd_slot_set *seen,
			     struct tlist *l, struct nd_arena_ent **e, size_t *n)
{
	uint32_t slot = tree_slot_sibling(as->t, as->slot, file);
	bool oom = false;
	enum rc r;

	*e = NULL;
	*n = 0;
	if (!slot)
		return RC_NOENT;       /* lint.txt says so */
	if (seen->n >= DIST_FILES_MAX) /* a hostile map's thousands of collections: enough */
		return RC_EXISTS;
	if (slot_seen(seen, slot, &oom))
		return oom ? RC_NOMEM : RC_EXISTS;
	r = tree_slot_list(as->t, slot, l);
	if (r != RC_OK || l->oom)
		return r == RC_OK || r == RC_NOMEM ? RC_NOMEM : RC_IO;
	*e = xcalloc_n(l->n ? l->n : 1, sizeof **e);
	if (!*e)
		return RC_NOMEM;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].type == TT_DIR && nd_is_arena_name(l->names + l->v[i].name))
			(*e)[(*n)++] =
			    (struct nd_arena_ent){ino_slot(l->v[i].ino), l->names + l->v[i].name};
	qsort(*e, *n, sizeof **e, arena_cmp);
	return RC_OK;
}

/* fn(ctx, arena, "<collection>/<arena name>") for every arena of every collection of kind k,
 * in CMAP order then by name, each collection file walked once. A collection file missing or
 * unreadable, or walked already, is not a failure (lint.txt and errors.txt say so); fn's
 * other failures end the walk. */
enum rc nd_each_arena(struct asset *as, const struct district *m, enum dist_kind k,
		      enum rc (*fn)(void *ctx, struct asset *a, const char *where), void *ctx)
{
	const struct dist_kind_set *ks = &m->k[k];
	struct nd_slot_set seen = {0};
	enum rc r = RC_OK;
	char ext[4];

	sm_ext(m->pf, SM_SFIL, ext);
	for (uint32_t i = 0; i < ks->cmap.n && r == RC_OK; i++) {
		const struct sm_collection *c = &ks->cmap.v[i];
		char file[NAME_COMPONENT_MAX + 8];
		struct tlist l = {0};
		struct nd_arena_ent *e;
		size_t n;

		if (!dist_first_of_id(m, k, i))
			continue;
		snprintf(file, sizeof file, "%s.%s", c->safe, ext);
		r = nd_collection_arenas(as, file, &seen, &l, &e, &n);
		for (size_t k = 0; r == RC_OK && k < n; k++) {
			struct cache_ent *pin;
			enum rc ra;
			struct asset *a = tree_asset_get(as->t, e[k].slot, &pin, &ra);
			char where[2 * NAME_COMPONENT_MAX + 2];

			if (!a)
				continue;
			snprintf(where, sizeof where, "%s/%s", c->safe, e[k].name);
			if (a->fmt == &tree_format_psg)
				r = fn(ctx, a, where);
			tree_asset_put(as->t, pin);
		}
		if (r == RC_NOENT || r == RC_IO || r == RC_EXISTS)
			r = RC_OK;
		free(e);
		tlist_discard(&l);
	}
	free(seen.v);
	return r;
}
