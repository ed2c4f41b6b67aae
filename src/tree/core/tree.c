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
#include <time.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "tree/mount/arcdir.h"
#include "psgfs/formats/archive.h"
#include "tree/core/tree_int.h"

/* ---- listings ---- */

static void tlist_push(struct tlist *l, tree_ino ino, uint8_t type, const char *name)
{
	struct tlist_ent *v = l->oom ? NULL : xgrow_n(l->v, l->n, &l->cap, sizeof *v, 16);
	uint32_t at;

	if (!v) {
		l->oom = true;
		return;
	}
	l->v = v;
	if (!name_pool_add(&l->names, &l->names_len, &l->names_cap, name, strlen(name), &at)) {
		l->oom = true;
		return;
	}
	l->v[l->n++] = (struct tlist_ent){ino, at, type};
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

void tlist_discard(struct tlist *l)
{
	free(l->v);
	free(l->names);
	l->v = NULL;
	l->names = NULL;
	l->n = l->cap = l->names_len = l->names_cap = 0;
}

struct tree_dir {
	struct tlist_ent *v; /* sorted by name */
	char *names;
	size_t n;
	size_t subdirs;
	size_t bytes;	       /* what it holds on the heap */
	struct cache_ent *ent; /* the pin, when handed out by tree_opendir */
};

void tree_dir_free(struct tree_dir *d)
{
	if (!d)
		return;
	free(d->v);
	free(d->names);
	free(d);
}

static void dir_free(void *p)
{
	tree_dir_free(p);
}

static int ent_cmp(const void *x, const void *y, void *names)
{
	const struct tlist_ent *a = x, *b = y;
	int c = strcmp((const char *)names + a->name, (const char *)names + b->name);

	if (c)
		return c;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

static void tlist_sort(struct tlist *l)
{
	if (l->n) /* an empty listing has v == NULL, which qsort must not get */
		qsort_r(l->v, l->n, sizeof *l->v, ent_cmp, l->names);
}

/* Whether a name is one of the listing's (sorted) names. */
static bool name_listed(const struct tlist *l, const char *name)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, l->names + l->v[mid].name);

		if (c == 0)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

/*
 * Names from files can collide after sanitising: in each run of equal names (sorted, so runs
 * are adjacent) the first keeps its name and the others get "~2", "~3"... skipping any name the
 * listing already has. One pass over the sorted listing and one sort after: a new name ends in
 * "~digits" after the run's name, so no two new names are equal, and none equals an old one.
 * The new names are collected first and applied after the pass, so the search stays valid.
 */
static bool dedupe(struct tlist *l)
{
	uint32_t *renamed = NULL; /* pairs: entry index, new name offset */
	size_t n_ren = 0, cap_ren = 0, run = 0;
	unsigned next = 2;
	bool ok = true;

	for (size_t i = 1; ok && i < l->n; i++) {
		const char *base = l->names + l->v[run].name;
		char cand[300];
		uint32_t at;

		if (strcmp(l->names + l->v[i].name, base) != 0) {
			run = i;
			next = 2;
			continue;
		}
		do
			snprintf(cand, sizeof cand, "%s~%u", l->names + l->v[run].name, next++);
		while (name_listed(l, cand));
		if (ok) { /* room for the pair (index, name) at n_ren */
			uint32_t *v = xgrow_n(renamed, n_ren + 1, &cap_ren, sizeof *v, 64);

			ok = v != NULL;
			renamed = v ? v : renamed;
		}
		ok = ok && name_pool_add(&l->names, &l->names_len, &l->names_cap, cand,
					 strlen(cand), &at);
		if (ok) {
			renamed[n_ren++] = (uint32_t)i;
			renamed[n_ren++] = at;
		}
	}
	for (size_t k = 0; ok && k < n_ren; k += 2)
		l->v[renamed[k]].name = renamed[k + 1];
	free(renamed);
	if (ok && n_ren)
		tlist_sort(l);
	return ok;
}

enum rc tlist_finish(struct tlist *l, struct tree_dir **out)
{
	struct tree_dir *d = calloc(1, sizeof *d);

	*out = NULL;
	if (!d || l->oom || l->n > UINT32_MAX) {
		free(d);
		tlist_discard(l);
		return RC_NOMEM;
	}
	tlist_sort(l);
	if (!dedupe(l)) {
		free(d);
		tlist_discard(l);
		return RC_NOMEM;
	}
	/* Arrays as long as the listing: growth by doubling left up to half of them unused. */
	d->v = xshrink_n(l->v, l->n, sizeof *l->v);
	d->names = l->names_len ? xshrink_n(l->names, l->names_len, 1) : l->names;
	d->n = l->n;
	for (size_t i = 0; i < d->n; i++)
		d->subdirs += d->v[i].type == TT_DIR;
	d->bytes = cache_heap_cost(l->n * sizeof *l->v) + cache_heap_cost(l->names_len) +
		   cache_heap_cost(sizeof *d);
	l->v = NULL;
	l->names = NULL;
	*out = d;
	return RC_OK;
}

/* Sorted, deduplicated listing from what list() emitted. */
static enum rc dir_finish(struct tlist *l, enum rc r, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	struct tree_dir *d;

	if (r != RC_OK) {
		tlist_discard(l);
		return r;
	}
	r = tlist_finish(l, &d);
	if (r != RC_OK)
		return r;
	*data = d;
	*bytes = d->bytes;
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

/* An archive entry's own bytes (asset->own): its source as it is. */
static enum rc own_extent(const struct tctx *c, uint64_t *off, uint64_t *len)
{
	*off = 0;
	*len = c->as->src.size;
	return RC_OK;
}

static const struct tree_kind own_kind = {
    .what = "own bytes", .type = TT_FILE, .cheap = true, .extent = own_extent};

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
	if (w->n.kind == KIND_OWN && w->as->own && w->n.a == 0 && w->n.b == 0) {
		w->k = &own_kind;
		return RC_OK;
	}
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
	/* An archive entry's root also holds the entry's own bytes. */
	if (r == RC_OK && as->own && la->w->n.kind == 0 && la->w->n.a == 0 && la->w->n.b == 0)
		tlist_add_ino(&l, ino_make(as->slot, tn(KIND_OWN, 0, 0)), TT_FILE, as->own);
	return dir_finish(&l, r, data, bytes, dtor);
}

static struct tree_dir *dir_get(struct tree *t, tree_ino ino, struct where *w,
				struct cache_ent **ent, enum rc *r)
{
	struct list_arg la = {t, w, ino};
	struct cache_key key = cache_key(ino, KEY_WHAT(KEY_DIR, w->as ? w->as->epoch : 0));

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

/* ---- listings kept while they are read ---- */

/*
 * readdir comes a few KiB at a time, each request with the offset where the last one stopped
 * (ll.c; there is no handle: opendir is zero-message). A listing the cache keeps is found
 * again; one it does not keep (larger than what the budget leaves) would be built again for
 * every request: n/100 builds of n entries. Such a listing is kept here whole while it is read,
 * charged against the budget (cache_hold), and lookups and stats in that directory use it too:
 * one build per reading, O(n log n) whatever the budget. At most TREE_STREAMS are kept, each
 * until it has not been used for STREAM_IDLE_NS (looked at with the next listing) or its room
 * is needed: together they hold at most the budget, or one listing when it alone is larger.
 */
#define STREAM_IDLE_NS (2ull * 1000000000ull)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Under streams_mu. */
static void stream_drop(struct tree *t, struct tree_stream *s)
{
	if (!s->d)
		return;
	cache_release(t->cache, s->held);
	cache_unpin(t->cache, s->ent);
	memset(s, 0, sizeof *s);
}

static void streams_drop_all(struct tree *t)
{
	pthread_mutex_lock(&t->streams_mu);
	for (unsigned i = 0; i < TREE_STREAMS; i++)
		stream_drop(t, &t->streams[i]);
	pthread_mutex_unlock(&t->streams_mu);
}

/* The kept listing of ino, pinned once more in *ent; NULL when none. Drops idle ones. */
static struct tree_dir *stream_find(struct tree *t, tree_ino ino, struct cache_ent **ent)
{
	uint64_t now = now_ns();
	struct tree_dir *d = NULL;

	pthread_mutex_lock(&t->streams_mu);
	for (unsigned i = 0; i < TREE_STREAMS; i++) {
		struct tree_stream *s = &t->streams[i];

		if (s->d && s->ino == ino) {
			cache_pin(t->cache, s->ent);
			*ent = s->ent;
			s->used = now;
			d = s->d;
		} else if (s->d && now - s->used > STREAM_IDLE_NS) {
			stream_drop(t, s);
		}
	}
	pthread_mutex_unlock(&t->streams_mu);
	return d;
}

/* A free slot, after dropping the least recently used streams until d fits beside the rest. */
static struct tree_stream *stream_room(struct tree *t, const struct tree_dir *d)
{
	size_t cap = d->bytes > t->opts.cache_bytes ? d->bytes : t->opts.cache_bytes;

	for (;;) {
		struct tree_stream *free_slot = NULL, *oldest = NULL;
		size_t held = 0;

		for (unsigned i = 0; i < TREE_STREAMS; i++) {
			struct tree_stream *s = &t->streams[i];

			held += s->held;
			if (!s->d)
				free_slot = free_slot ? free_slot : s;
			else if (!oldest || s->used < oldest->used)
				oldest = s;
		}
		if (free_slot && held + d->bytes <= cap)
			return free_slot;
		if (!oldest)
			return free_slot;
		stream_drop(t, oldest);
	}
}

/* Keep a listing the cache did not keep (ent pinned by the caller) while it is read. */
static void stream_add(struct tree *t, tree_ino ino, struct tree_dir *d, struct cache_ent *ent)
{
	struct tree_stream *s;

	pthread_mutex_lock(&t->streams_mu);
	for (unsigned i = 0; i < TREE_STREAMS; i++)
		if (t->streams[i].d && t->streams[i].ino == ino) {
			pthread_mutex_unlock(&t->streams_mu); /* another reader kept its own */
			return;
		}
	s = stream_room(t, d);
	if (s) {
		cache_pin(t->cache, ent);
		*s = (struct tree_stream){ino, d, ent, d->bytes, now_ns()};
		cache_hold(t->cache, d->bytes);
	}
	pthread_mutex_unlock(&t->streams_mu);
}

/* The listing of ino, pinned in *ent: a kept stream, the cache, or built. */
static struct tree_dir *dir_use(struct tree *t, tree_ino ino, struct where *w,
				struct cache_ent **ent, enum rc *r)
{
	struct tree_dir *d = stream_find(t, ino, ent);

	if (d)
		return d;
	d = dir_get(t, ino, w, ent, r);
	if (d && !cache_is_kept(t->cache, *ent))
		stream_add(t, ino, d, *ent);
	return d;
}

/* ---- requests ---- */

static void stat_from_source(struct tree_stat *out, const struct stat *st)
{
	out->perm = out->type == TT_DIR ? tree_perm_dir(st->st_mode) : tree_perm_file(st->st_mode);
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
		out->perm = k->type == TT_DIR ? tree_perm_dir(0444) : tree_perm_file(0444);
	if (t->mods && k != &own_kind)
		mods_stat(t, w->as, w->n, out);
	if (k->type == TT_DIR) {
		struct cache_ent *ent;
		struct tree_dir *d;

		d = dir_use(t, ino, w, &ent, &r);
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
	if (mods_is_temp(ino))
		return mods_temp_getattr(t, ino, out);
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
	enum rc r;

	*out = NULL;
	if (mods_is_temp(ino))
		return mods_temp_getattr(t, ino, NULL) == RC_OK ? RC_NOTDIR : RC_NOENT;
	r = where_get(t, ino, &w);
	if (r != RC_OK)
		return r;
	if (w.as && w.k->type != TT_DIR) {
		where_put(t, &w);
		return RC_NOTDIR;
	}
	if (!w.as && !folder_slot_is_dir(t, ino_slot(ino)))
		return RC_NOTDIR;
	d = dir_use(t, ino, &w, &ent, &r);
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
	return d->names + d->v[i].name;
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
		int c = strcmp(name, d->names + d->v[mid].name);

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
		return t->mods ? mods_temp_lookup(t, parent, name, out) : RC_NOENT;
	return tree_getattr(t, child, out);
}

enum rc tree_readlink(struct tree *t, tree_ino ino, char **target)
{
	struct where w;
	struct buf b;
	size_t len;
	enum rc r;

	*target = NULL;
	if (mods_is_temp(ino))
		return RC_INVAL;
	r = where_get(t, ino, &w);
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
	/* An archive's entry: its decoded pieces handed out pinned, not copied. */
	if (w->as->ext.view && start == 0 && size == w->as->src.size) {
		r = w->as->ext.view(w->as->ext.ctx, off, len, v);
		if (r == RC_OK && v->n && asset_source_changed(w->as))
			r = RC_IO;
		if (r != RC_OK)
			return RC_IO;
		if (v->n) { /* v->total < len: a lying entry's bytes end there (a short read) */
			atomic_fetch_add(&t->raw_reads, 1);
			atomic_fetch_add(&t->raw_bytes, v->total);
			return RC_OK;
		}
	}
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

/* [off, size) of the source file fd past its start, its holes aside: the first stretch of
 * data (SEEK_DATA, SEEK_HOLE), or all of it when the file system cannot tell. */
static void data_extent_fd(int fd, uint64_t start, uint64_t size, uint64_t off, uint64_t *ds,
			   uint64_t *de)
{
	off_t at = lseek(fd, (off_t)(start + off), SEEK_DATA), hole;

	*ds = off;
	*de = size;
	if (at < 0) {
		if (errno == ENXIO) /* nothing but a hole to the end */
			*ds = size;
		return;
	}
	hole = lseek(fd, at, SEEK_HOLE);
	*ds = (uint64_t)at - start > off ? (uint64_t)at - start : off;
	if (*ds > size)
		*ds = size;
	if (hole >= at && (uint64_t)hole - start < size)
		*de = (uint64_t)hole - start;
	if (*de < *ds)
		*de = *ds;
}

enum rc tree_data_extent(struct tree *t, tree_ino ino, uint64_t off, uint64_t *ds, uint64_t *de)
{
	struct cache_ent *nent;
	struct tctx c;
	struct where w;
	uint64_t start, size;
	enum rc r;

	*ds = off;
	*de = UINT64_MAX;
	if (mods_is_temp(ino))
		return RC_OK;
	r = where_get(t, ino, &w);
	if (r != RC_OK || !w.as)
		return r;
	/* Only a file's own bytes read raw from a file of the source: it has holes to ask for. */
	if (w.k->type == TT_FILE && w.k->extent && w.as->fd >= 0 && !w.as->ext.ctx) {
		r = kctx_open(&w, ino, &c, &nent);
		if (r == RC_OK)
			r = w.k->extent(&c, &start, &size);
		kctx_close(&w, nent);
		if (r == RC_OK && off >= size)
			*ds = *de = off;
		else if (r == RC_OK && span_ok(w.as->src.size, start, size))
			data_extent_fd(w.as->fd, start, size, off, ds, de);
	}
	where_put(t, &w);
	return r;
}

enum rc tree_read_begin(struct tree *t, tree_ino ino, uint64_t off, size_t len, struct tree_rdv *v)
{
	struct where w;
	enum rc r;

	memset(v, 0, sizeof *v);
	v->t = t;
	if (mods_is_temp(ino))
		return mods_temp_read(t, ino, off, len, v);
	r = where_get(t, ino, &w);
	if (r != RC_OK)
		return r;
	if (!w.as)
		return folder_slot_is_dir(t, ino_slot(ino)) ? RC_ISDIR : RC_INVAL;
	v->pin_as = w.pin; /* released by tree_read_end */
	v->epoch = w.as->epoch;
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
		return atomic_load(&t->single);
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
	const char *base = strrchr(path, '/');
	struct asset *as = NULL;
	enum tree_open_fail f;

	if (path[0] != '/' && getcwd(cwd, sizeof cwd) && asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	/* Texture mods: a mod of the file already in OUTDIR/<name> is what the mount serves. */
	if (!t->mods || !mods_open_asset(t, 0, abs ? abs : path, base ? base + 1 : path,
					 ASSET_STRICT, &as, &f, why, whylen))
		f = asset_open(t, 0, AT_FDCWD, abs ? abs : path, NULL, ASSET_STRICT, &as, why,
			       whylen);
	atomic_store(&t->single, as);
	free(abs);
	return f;
}

/* An archive (EB, BIGF, BIG4, SFIL) by its first bytes. */
static bool is_archive(const char *path)
{
	uint8_t head[64];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t got = fd >= 0 ? pread(fd, head, sizeof head, 0) : -1;

	if (fd >= 0)
		close(fd);
	return got > 0 && arc_detect(head, (size_t)got);
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
	pthread_mutex_init(&t->streams_mu, NULL);
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
	/* The loose view only reads OUTDIR (loose.c): no picture is written there. */
	f = t->opts.mods_dir && !t->opts.layout_loose ? mods_init(t, why, whylen) : TREE_FAIL_NONE;
	if (stat(path, &st) != 0)
		st.st_mode = 0;
	if (f == TREE_FAIL_NONE && t->opts.layout_loose && st.st_mode && !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "layout=loose needs a folder (the game's)");
		f = TREE_FAIL_OTHER;
	}
	if (f == TREE_FAIL_NONE && S_ISDIR(st.st_mode))
		f = folder_open(t, path, why, whylen);
	else if (f == TREE_FAIL_NONE && S_ISREG(st.st_mode) && is_archive(path))
		f = folder_open_archive(t, path, why, whylen);
	else if (f == TREE_FAIL_NONE)
		f = open_single(t, path, why, whylen);
	if (f == TREE_FAIL_NONE && t->single) /* what its mount decoded; later loads add theirs */
		cache_charge(t->cache, atomic_load(&atomic_load(&t->single)->bytes));
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
	arcdir_ahead_stop(t); /* it decodes into the cache */
	/* Cached views may point into format state: the cache goes first (and the listings kept
	 * while read, whose pins it would not see, before it). */
	streams_drop_all(t);
	cache_free(t->cache);
	asset_close(atomic_load(&t->single));
	folder_close(t->fold);
	mods_free(t->mods);
	pthread_mutex_destroy(&t->streams_mu);
	free(t);
}

void tree_set_change_hook(struct tree *t, void (*fn)(void *ctx, tree_ino ino), void *ctx)
{
	t->on_change_ctx = ctx;
	t->on_change = fn;
}

void tree_set_entry_hook(struct tree *t, void (*fn)(void *ctx, tree_ino parent, const char *name),
			 void *ctx)
{
	t->on_entry_ctx = ctx;
	t->on_entry = fn;
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
	return t->fold ? folder_root_stat(t->fold) : &atomic_load(&t->single)->st;
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
		ctr->arc_indexes = atomic_load(&t->arc_indexes);
		ctr->arc_pieces = atomic_load(&t->arc_pieces);
		ctr->arc_piece_bytes = atomic_load(&t->arc_piece_bytes);
	}
}
