/*
 * Tree core: opening a mount, sorted cached listings, and the dispatch of every request to the
 * folder layer (folder.c) or to the asset a node belongs to (its format's kind table).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "tree/tree_int.h"

/* ---- listings ---- */

static void tlist_push(struct tlist *l, tree_ino ino, uint8_t type, const char *name)
{
	if (l->oom)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct tlist_ent *v = xrealloc_n(l->v, cap, sizeof *v);

		if (!v) {
			l->oom = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].name = strdup(name);
	if (!l->v[l->n].name) {
		l->oom = true;
		return;
	}
	l->v[l->n].ino = ino;
	l->v[l->n].type = type;
	/* Block costs, not bare lengths: those undercharged listings of short names by half. */
	l->bytes += cache_heap_cost(strlen(name) + 1);
	l->n++;
}

void tlist_add(struct tlist *l, struct tnode node, const char *fmt, ...)
{
	const struct tree_format *f = l->as->fmt;
	char name[256];
	va_list ap;
	int n;

	if (node.a > TNODE_A_MAX || node.b > TNODE_B_MAX || node.kind >= f->n_kinds)
		return; /* past what an inode number can carry (documented limits) */
	va_start(ap, fmt);
	n = vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	if (n < 0) {
		l->oom = true;
		return;
	}
	tlist_push(l, ino_make(l->as->slot, node), f->kinds[node.kind].type, name);
}

void tlist_add_ino(struct tlist *l, tree_ino ino, uint8_t type, const char *name)
{
	tlist_push(l, ino, type, name);
}

struct tree_dir {
	struct tlist_ent *v;
	size_t n;
	size_t subdirs;
	struct cache_ent *ent; /* the pin, when handed out by tree_opendir */
};

static void dir_free(void *p)
{
	struct tree_dir *d = p;

	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].name);
	free(d->v);
	free(d);
}

static int ent_cmp(const void *x, const void *y)
{
	const struct tlist_ent *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

/* Names from files can collide after sanitising; later ones get "~N" until unique. */
static bool dedupe(struct tlist_ent *v, size_t n)
{
	bool changed = false;

	for (size_t i = 1; i < n; i++) {
		if (strcmp(v[i].name, v[i - 1].name) != 0)
			continue;
		for (unsigned k = 2;; k++) {
			char cand[300];
			bool taken = false;

			snprintf(cand, sizeof cand, "%s~%u", v[i - 1].name, k);
			for (size_t j = 0; j < n && !taken; j++)
				taken = strcmp(v[j].name, cand) == 0;
			if (taken)
				continue;
			char *s = strdup(cand);
			if (!s)
				return changed;
			free(v[i].name);
			v[i].name = s;
			changed = true;
			break;
		}
	}
	return changed;
}

static void tlist_discard(struct tlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
}

/* Sorted, deduplicated listing from what list() emitted. */
static enum rc dir_finish(struct tlist *l, enum rc r, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	struct tree_dir *d = calloc(1, sizeof *d);

	if (r == RC_OK && (l->oom || !d))
		r = RC_NOMEM;
	if (r != RC_OK) {
		tlist_discard(l);
		free(d);
		return r;
	}
	if (l->n) /* an empty listing has v == NULL, which qsort must not get */
		qsort(l->v, l->n, sizeof *l->v, ent_cmp);
	for (int pass = 0; pass < 4 && dedupe(l->v, l->n); pass++)
		qsort(l->v, l->n, sizeof *l->v, ent_cmp);
	/* The array as long as the listing: growth by doubling left up to half of it unused. */
	l->v = xshrink_n(l->v, l->n, sizeof *l->v);
	d->v = l->v;
	d->n = l->n;
	for (size_t i = 0; i < l->n; i++)
		d->subdirs += l->v[i].type == TT_DIR;
	*data = d;
	*bytes = l->bytes + cache_heap_cost(l->n * sizeof *l->v) + cache_heap_cost(sizeof *d);
	*dtor = dir_free;
	return RC_OK;
}

/* ---- which layer a node belongs to ---- */

struct where {
	struct asset *as; /* pinned; NULL: a folder-layer node */
	struct cache_ent *pin;
	struct tnode n;
	const struct tree_kind *k;
};

static enum rc where_get(struct tree *t, tree_ino ino, struct where *w)
{
	uint32_t slot = ino_slot(ino), node = (uint32_t)ino;
	enum rc r;

	memset(w, 0, sizeof *w);
	if (node == 0)
		return RC_NOENT;
	if (t->fold && node == 1 && (slot == 0 || !folder_slot_is_file(t, slot)))
		return RC_OK; /* the mounted folder, a folder in it, a link */
	w->as = tree_asset_get(t, slot, &w->pin, &r);
	if (!w->as)
		return r;
	w->n = tnode_unpack(node);
	if (w->n.kind >= w->as->fmt->n_kinds) {
		tree_asset_put(t, w->pin);
		w->as = NULL;
		return RC_NOENT;
	}
	w->k = &w->as->fmt->kinds[w->n.kind];
	return RC_OK;
}

static void where_put(struct tree *t, struct where *w)
{
	tree_asset_put(t, w->pin);
}

/* A handler's context with the kind's need loaded and pinned (released by kctx_close). */
static enum rc kctx_open(const struct where *w, tree_ino ino, struct tctx *c,
			 struct cache_ent **ent)
{
	enum rc r = RC_OK;

	*c = (struct tctx){w->as, w->n, ino, NULL};
	*ent = NULL;
	if (w->k->need)
		c->need = asset_need(w->as, w->k->need, w->n.a, ent, &r);
	return w->k->need && !c->need ? r : RC_OK;
}

static void kctx_close(const struct where *w, struct cache_ent *ent)
{
	asset_unpin(w->as, ent);
}

struct list_arg {
	struct tree *t;
	struct where *w;
	tree_ino ino;
};

static enum rc load_dir(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			void (**dtor)(void *))
{
	const struct list_arg *la = (const struct list_arg *)(uintptr_t)arg;
	struct tlist l = {.as = as};
	struct cache_ent *nent;
	struct tctx c;
	enum rc r;

	if (!as)
		return dir_finish(&l, folder_list(la->t, la->ino, &l), data, bytes, dtor);
	r = kctx_open(la->w, la->ino, &c, &nent);
	if (r == RC_OK)
		r = la->w->k->list(&c, &l);
	kctx_close(la->w, nent);
	return dir_finish(&l, r, data, bytes, dtor);
}

static struct tree_dir *dir_get(struct tree *t, tree_ino ino, struct where *w,
				struct cache_ent **ent, enum rc *r)
{
	struct list_arg la = {t, w, ino};
	struct cache_key key = cache_key(ino, KEY_WHAT(KEY_DIR, 0));

	if (w->as)
		return asset_memo_key(w->as, key, load_dir, (uint64_t)(uintptr_t)&la, ent, r);
	/* Folder listings: the folder layer keeps its own snapshot; this is the sorted view. */
	struct tree_memo *m = cache_get(t->cache, key, ent);
	void (*dtor)(void *);
	size_t bytes;
	void *data;

	if (m)
		return m->data;
	*r = load_dir(NULL, (uint64_t)(uintptr_t)&la, &data, &bytes, &dtor);
	if (*r != RC_OK)
		return NULL;
	m = calloc(1, sizeof *m);
	if (!m) {
		dtor(data);
		*r = RC_NOMEM;
		return NULL;
	}
	*m = (struct tree_memo){RC_OK, data, dtor};
	m = cache_put(t->cache, key, m, bytes + sizeof *m, tree_memo_free, ent);
	if (!m)
		*r = RC_NOMEM;
	return m ? m->data : NULL;
}

/* ---- requests ---- */

static mode_t perm_of(mode_t m, bool dir)
{
	mode_t r = m & 0444;

	return dir ? r | r >> 2 : r; /* directories: x wherever r */
}

static void stat_from_source(struct tree_stat *out, const struct stat *st)
{
	out->perm = perm_of(st->st_mode, out->type == TT_DIR);
	out->uid = st->st_uid;
	out->gid = st->st_gid;
	out->atime = st->st_atim;
	out->mtime = st->st_mtim;
}

static enum rc asset_getattr(struct tree *t, tree_ino ino, struct where *w, bool known_only,
			     struct tree_stat *out)
{
	const struct tree_kind *k = w->k;
	enum rc r = RC_OK;

	out->type = k->type;
	out->nlink = 1;
	stat_from_source(out, &w->as->st);
	/* A broken asset explains itself to anyone who sees it: what it says (name, size, why)
	 * the listing already shows, and a file the daemon could not read often has no r bits. */
	if (w->as->fmt == &tree_format_broken)
		out->perm = k->type == TT_DIR ? 0555 : 0444;
	if (k->type == TT_DIR) {
		struct cache_ent *ent;
		struct tree_dir *d;

		d = dir_get(t, ino, w, &ent, &r);
		if (!d)
			return r;
		out->size = d->n;
		out->nlink = (uint32_t)(2 + d->subdirs);
		cache_unpin(t->cache, ent);
		return RC_OK;
	}
	if (k->extent) {
		struct cache_ent *nent;
		struct tctx c;
		uint64_t off;

		r = kctx_open(w, ino, &c, &nent);
		if (r == RC_OK)
			r = k->extent(&c, &off, &out->size);
		kctx_close(w, nent);
		return r;
	}
	if (k->type == TT_LINK) {
		char *target;

		r = tree_readlink(t, ino, &target);
		if (r == RC_OK)
			out->size = strlen(target);
		free(target);
		return r;
	}
	if (known_only)
		return render_size_known(w->as, ino, w->n, &out->size) ? RC_OK : RC_INVAL;
	return render_size(w->as, ino, w->n, &out->size);
}

static enum rc getattr_impl(struct tree *t, tree_ino ino, bool known_only, struct tree_stat *out)
{
	struct where w;
	enum rc r;

	memset(out, 0, sizeof *out);
	out->ino = ino;
	/* Every entry of a mounted folder is answered from its listing: stat opens no file. */
	if (t->fold && (uint32_t)ino == 1)
		return folder_getattr(t, ino, out);
	r = where_get(t, ino, &w);
	if (r != RC_OK)
		return r;
	r = asset_getattr(t, ino, &w, known_only, out);
	where_put(t, &w);
	return r;
}

enum rc tree_getattr(struct tree *t, tree_ino ino, struct tree_stat *out)
{
	return getattr_impl(t, ino, false, out);
}

bool tree_getattr_known(struct tree *t, tree_ino ino, struct tree_stat *out)
{
	return getattr_impl(t, ino, true, out) == RC_OK;
}

enum rc tree_opendir(struct tree *t, tree_ino ino, struct tree_dir **out)
{
	struct cache_ent *ent;
	struct tree_dir *d, *h;
	struct where w;
	enum rc r = where_get(t, ino, &w);

	*out = NULL;
	if (r != RC_OK)
		return r;
	if (w.as && w.k->type != TT_DIR) {
		where_put(t, &w);
		return RC_NOTDIR;
	}
	if (!w.as && !folder_slot_is_dir(t, ino_slot(ino)))
		return RC_NOTDIR;
	d = dir_get(t, ino, &w, &ent, &r);
	where_put(t, &w);
	if (!d)
		return r;
	/* A small handle carries the pin so several opens of one listing can coexist. */
	h = malloc(sizeof *h);
	if (!h) {
		cache_unpin(t->cache, ent);
		return RC_NOMEM;
	}
	*h = *d;
	h->ent = ent;
	*out = h;
	return RC_OK;
}

void tree_closedir(struct tree *t, struct tree_dir *d)
{
	if (!d)
		return;
	cache_unpin(t->cache, d->ent);
	free(d);
}

size_t tree_dir_count(const struct tree_dir *d)
{
	return d->n;
}

const char *tree_dir_name(const struct tree_dir *d, size_t i)
{
	return d->v[i].name;
}

tree_ino tree_dir_ino(const struct tree_dir *d, size_t i)
{
	return d->v[i].ino;
}

enum tree_type tree_dir_type(const struct tree_dir *d, size_t i)
{
	return (enum tree_type)d->v[i].type;
}

enum rc tree_lookup(struct tree *t, tree_ino parent, const char *name, struct tree_stat *out)
{
	struct tree_dir *d;
	enum rc r = tree_opendir(t, parent, &d);
	size_t lo = 0, hi;
	tree_ino child = 0;

	if (r != RC_OK)
		return r;
	hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, d->v[mid].name);

		if (c == 0) {
			child = d->v[mid].ino;
			break;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	tree_closedir(t, d);
	if (!child)
		return RC_NOENT;
	return tree_getattr(t, child, out);
}

enum rc tree_readlink(struct tree *t, tree_ino ino, char **target)
{
	struct where w;
	struct buf b;
	size_t len;
	enum rc r = where_get(t, ino, &w);

	*target = NULL;
	if (r != RC_OK)
		return r;
	buf_init(&b);
	if (!w.as) {
		r = folder_readlink(t, ino, &b);
	} else if (w.k->type != TT_LINK || !w.k->link) {
		r = RC_INVAL;
	} else {
		struct cache_ent *nent;
		struct tctx c;

		r = kctx_open(&w, ino, &c, &nent);
		if (r == RC_OK)
			r = w.k->link(&c, &b);
		kctx_close(&w, nent);
	}
	where_put(t, &w);
	buf_putc(&b, '\0');
	if (r == RC_OK && b.oom)
		r = RC_NOMEM;
	if (r != RC_OK) {
		buf_free(&b);
		return r;
	}
	*target = (char *)buf_steal(&b, &len);
	return *target ? RC_OK : RC_NOMEM;
}

static enum rc read_raw(struct tree *t, const struct where *w, tree_ino ino, uint64_t off,
			size_t len, struct tree_rdv *v)
{
	struct cache_ent *nent;
	struct tctx c;
	uint64_t start, size;
	enum rc r = kctx_open(w, ino, &c, &nent);

	if (r == RC_OK)
		r = w->k->extent(&c, &start, &size);
	kctx_close(w, nent);
	if (r != RC_OK)
		return r;
	if (off >= size)
		return RC_OK;
	if (len > size - off)
		len = (size_t)(size - off);
	v->own = malloc(len ? len : 1);
	if (!v->own)
		return RC_NOMEM;
	r = src_read(&w->as->src, start + off, v->own, len);
	if (r != RC_OK || asset_source_changed(w->as))
		return RC_IO;
	atomic_fetch_add(&t->raw_reads, 1);
	atomic_fetch_add(&t->raw_bytes, len);
	v->base[0] = v->own;
	v->len[0] = len;
	v->n = 1;
	v->total = len;
	return RC_OK;
}

enum rc tree_read_begin(struct tree *t, tree_ino ino, uint64_t off, size_t len, struct tree_rdv *v)
{
	struct where w;
	enum rc r = where_get(t, ino, &w);

	memset(v, 0, sizeof *v);
	v->t = t;
	if (r != RC_OK)
		return r;
	if (!w.as)
		return folder_slot_is_dir(t, ino_slot(ino)) ? RC_ISDIR : RC_INVAL;
	v->pin_as = w.pin; /* released by tree_read_end */
	if (w.k->type == TT_DIR)
		r = RC_ISDIR;
	else if (w.k->type == TT_LINK)
		r = RC_INVAL;
	else if (w.k->extent)
		r = read_raw(t, &w, ino, off, len, v);
	else
		r = render_read(w.as, ino, w.n, off, len, v);
	if (r != RC_OK)
		tree_read_end(v);
	return r;
}

void tree_read_end(struct tree_rdv *v)
{
	if (!v->t)
		return;
	for (unsigned i = 0; i < v->n_pin; i++)
		cache_unpin(v->t->cache, v->pin[i]);
	free(v->own);
	tree_asset_put(v->t, v->pin_as);
	memset(v, 0, sizeof *v);
}

enum rc tree_read(struct tree *t, tree_ino ino, uint64_t off, size_t len, void *dst, size_t *got)
{
	struct tree_rdv v;
	enum rc r = tree_read_begin(t, ino, off, len, &v);
	size_t at = 0;

	*got = 0;
	if (r != RC_OK)
		return r;
	for (unsigned i = 0; i < v.n; i++) {
		memcpy((uint8_t *)dst + at, v.base[i], v.len[i]);
		at += v.len[i];
	}
	*got = at;
	tree_read_end(&v);
	return RC_OK;
}

enum rc tree_resolve(struct tree *t, const char *path, struct tree_stat *out)
{
	char comp[256];
	enum rc r = tree_getattr(t, TREE_ROOT_INO, out);

	while (r == RC_OK && *path) {
		size_t n;

		while (*path == '/')
			path++;
		if (!*path)
			break;
		n = strcspn(path, "/");
		if (n >= sizeof comp)
			return RC_NOENT;
		memcpy(comp, path, n);
		comp[n] = '\0';
		path += n;
		if (out->type != TT_DIR)
			return RC_NOTDIR;
		r = tree_lookup(t, out->ino, comp, out);
	}
	return r;
}

/* ---- assets of the mount ---- */

struct asset *tree_asset_get(struct tree *t, uint32_t slot, struct cache_ent **pin, enum rc *r)
{
	*pin = NULL;
	if (!t->fold) {
		if (slot != 0) {
			*r = RC_NOENT;
			return NULL;
		}
		return t->single;
	}
	return folder_asset_get(t, slot, pin, r);
}

void tree_asset_put(struct tree *t, struct cache_ent *pin)
{
	cache_unpin(t->cache, pin);
}

/* ---- open and close ---- */

/* The asset of a single-file mount, by an absolute path: files looked for beside it later
 * (a model's companion) must still be found after the daemon has changed to "/". */
static enum tree_open_fail open_single(struct tree *t, const char *path, char *why, size_t whylen)
{
	char cwd[PATH_MAX], *abs = NULL;
	enum tree_open_fail f;

	if (path[0] != '/' && getcwd(cwd, sizeof cwd) && asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	f = asset_open(t, 0, AT_FDCWD, abs ? abs : path, NULL, ASSET_STRICT, &t->single, why,
		       whylen);
	free(abs);
	return f;
}

enum tree_open_fail tree_open(const char *path, const struct tree_opts *o, struct tree **out,
			      char *why, size_t whylen)
{
	struct tree *t = calloc(1, sizeof *t);
	enum tree_open_fail f;
	struct stat st;

	*out = NULL;
	if (!t) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	if (o)
		t->opts = *o;
	if (!t->opts.cache_bytes)
		t->opts.cache_bytes = TREE_DEFAULT_CACHE;
	t->cache = cache_new(t->opts.cache_bytes);
	if (!t->cache) {
		free(t);
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		f = folder_open(t, path, why, whylen);
	else
		f = open_single(t, path, why, whylen);
	if (f == TREE_FAIL_NONE && t->single) /* what its mount decoded; later loads add theirs */
		cache_charge(t->cache, atomic_load(&t->single->bytes));
	if (f != TREE_FAIL_NONE) {
		tree_close(t);
		return f;
	}
	*out = t;
	return TREE_FAIL_NONE;
}

void tree_close(struct tree *t)
{
	if (!t)
		return;
	/* Cached views may point into format state: the cache goes first. */
	cache_free(t->cache);
	asset_close(t->single);
	folder_close(t->fold);
	free(t);
}

void tree_set_change_hook(struct tree *t, void (*fn)(void *ctx, tree_ino ino), void *ctx)
{
	t->on_change_ctx = ctx;
	t->on_change = fn;
}

void tree_set_mount(struct tree *t, const struct stat *mnt_before, dev_t own_dev)
{
	t->mnt = *mnt_before;
	t->own_dev = own_dev;
	if (t->fold)
		folder_set_mount(t->fold, mnt_before, own_dev);
}

const struct stat *tree_source_stat(const struct tree *t)
{
	return t->fold ? folder_root_stat(t->fold) : &t->single->st;
}

void tree_get_stats(struct tree *t, struct cache_stats *cache, struct tree_counters *ctr)
{
	if (cache)
		*cache = cache_get_stats(t->cache);
	if (ctr) {
		ctr->renders = atomic_load(&t->renders);
		ctr->render_bytes = atomic_load(&t->render_bytes);
		ctr->render_failures = atomic_load(&t->render_failures);
		ctr->raw_reads = atomic_load(&t->raw_reads);
		ctr->raw_bytes = atomic_load(&t->raw_bytes);
		ctr->asset_opens = atomic_load(&t->asset_opens);
	}
}
