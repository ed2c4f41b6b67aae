/* Tree core: open/detect, structural inodes, sorted cached listings, lazy rendering. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "psgfs/bytes.h"
#include "tree/tree_int.h"

/* ---- listings ---- */

void tlist_add(struct tlist *l, struct tnode node, const char *fmt, ...)
{
	char name[256];
	va_list ap;
	int n;

	if (l->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	if (n < 0) {
		l->oom = true;
		return;
	}
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
	l->v[l->n].node = node;
	l->v[l->n].is_dir = node.kind < l->t->fmt->n_kinds && l->t->fmt->kinds[node.kind].is_dir;
	l->bytes += sizeof(struct tlist_ent) + strlen(name) + 1;
	l->n++;
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
	return tnode_ino(a->node) < tnode_ino(b->node) ? -1
						       : tnode_ino(a->node) > tnode_ino(b->node);
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

static enum rc load_dir(struct tree *t, uint64_t ino, void **data, size_t *bytes,
			void (**dtor)(void *))
{
	struct tnode self = ino_tnode(ino);
	struct tlist l = {.t = t};
	struct tree_dir *d;
	enum rc r;

	if (self.kind >= t->fmt->n_kinds || !t->fmt->kinds[self.kind].is_dir)
		return RC_NOTDIR;
	r = t->fmt->kinds[self.kind].list(t, self, &l);
	d = calloc(1, sizeof *d);
	if (r == RC_OK && (l.oom || !d))
		r = RC_NOMEM;
	if (r != RC_OK) {
		struct tree_dir tmp = {.v = l.v, .n = l.n};

		for (size_t i = 0; i < tmp.n; i++)
			free(tmp.v[i].name);
		free(tmp.v);
		free(d);
		return r;
	}
	if (l.n) /* an empty listing has l.v == NULL, which qsort must not get */
		qsort(l.v, l.n, sizeof *l.v, ent_cmp);
	for (int pass = 0; pass < 4 && dedupe(l.v, l.n); pass++)
		qsort(l.v, l.n, sizeof *l.v, ent_cmp);
	d->v = l.v;
	d->n = l.n;
	for (size_t i = 0; i < l.n; i++)
		d->subdirs += l.v[i].is_dir;
	*data = d;
	*bytes = l.bytes + sizeof *d;
	*dtor = dir_free;
	return RC_OK;
}

enum rc tree_opendir(struct tree *t, tree_ino ino, struct tree_dir **out)
{
	struct cache_ent *ent;
	enum rc r;
	struct tree_dir *d = tree_memo(t, TREE_KEY(KEY_DIR, ino), load_dir, ino, &ent, &r);
	struct tree_dir *h;

	*out = NULL;
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
	return tnode_ino(d->v[i].node);
}

bool tree_dir_is_dir(const struct tree_dir *d, size_t i)
{
	return d->v[i].is_dir;
}

/* ---- memo ---- */

struct memo {
	enum rc r;
	void *data;
	void (*dtor)(void *);
};

static void memo_free(void *p)
{
	struct memo *m = p;

	if (m->data) {
		if (m->dtor)
			m->dtor(m->data);
		else
			free(m->data);
	}
	free(m);
}

/*
 * The mount serves a snapshot of the file as it was at open. Once its size or mtime differ
 * (truncated, written in place) nothing new is derived from it: loads that read it and raw
 * reads fail with EIO, while cached views and what was parsed at mount keep serving. Checked
 * after reading, which also catches a write racing the read: writes stamp mtime before they
 * change data. An unlinked source is unchanged (the fd keeps it).
 */
static bool source_changed(struct tree *t)
{
	struct stat st;

	if (fstat(t->fd, &st) != 0)
		return true;
	return st.st_size != t->st.st_size || st.st_mtim.tv_sec != t->st.st_mtim.tv_sec ||
	       st.st_mtim.tv_nsec != t->st.st_mtim.tv_nsec;
}

/* Source reads made by this thread: a load that made none cannot be stale. */
static _Thread_local uint64_t tl_src_reads;

static enum rc snap_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct tree *t = ctx;
	struct src fd_src;

	src_init_fd(&fd_src, &t->fd, t->src.size);
	tl_src_reads++;
	return fd_src.read(fd_src.ctx, off, dst, n);
}

void *tree_memo(struct tree *t, uint64_t key, tree_load_fn fn, uint64_t arg, struct cache_ent **ent,
		enum rc *r)
{
	struct memo *m = cache_get(t->cache, key, ent);
	uint64_t reads = tl_src_reads;
	size_t bytes = 0;

	if (!m) {
		m = calloc(1, sizeof *m);
		if (!m) {
			*r = RC_NOMEM;
			return NULL;
		}
		m->r = fn(t, arg, &m->data, &bytes, &m->dtor);
		if (tl_src_reads != reads && source_changed(t))
			m->r = RC_IO;
		if (m->r != RC_OK && m->data) {
			if (m->dtor)
				m->dtor(m->data);
			else
				free(m->data);
			m->data = NULL;
		}
		m = cache_put(t->cache, key, m, bytes + sizeof *m, memo_free, ent);
		if (!m) {
			*r = RC_NOMEM;
			return NULL;
		}
	}
	*r = m->r;
	if (m->r != RC_OK) {
		cache_unpin(t->cache, *ent);
		*ent = NULL;
		return NULL;
	}
	return m->data;
}

void *tree_memo_perm(struct tree *t, unsigned slot, tree_load_fn fn, enum rc *r)
{
	struct tree_perm *p;
	size_t bytes;

	if (slot >= TREE_PERM_SLOTS) {
		*r = RC_INVAL;
		return NULL;
	}
	p = &t->perm[slot];
	/* Held across the load: concurrent first users wait rather than decode twice. */
	pthread_mutex_lock(&p->mu);
	if (!p->done) {
		p->r = fn(t, slot, &p->data, &bytes, &p->dtor);
		if (p->r != RC_OK && p->data) {
			if (p->dtor)
				p->dtor(p->data);
			else
				free(p->data);
			p->data = NULL;
		}
		p->done = true;
	}
	pthread_mutex_unlock(&p->mu);
	*r = p->r;
	return p->r == RC_OK ? p->data : NULL;
}

/* ---- rendering ---- */

#define TREE_TRIM_SHIFT 24 /* malloc_trim after every 16 MiB rendered */

struct content {
	uint8_t *p;
	size_t len;
};

static void content_free(void *p)
{
	struct content *c = p;

	free(c->p);
	free(c);
}

static enum rc load_content(struct tree *t, uint64_t ino, void **data, size_t *bytes,
			    void (**dtor)(void *))
{
	struct tnode self = ino_tnode(ino);
	const struct tree_kind *k = &t->fmt->kinds[self.kind];
	struct content *c;
	struct buf b;
	enum rc r;
	uint64_t before;

	buf_init(&b);
	r = k->render(t, self, &b);
	if (r == RC_OK && b.oom)
		r = RC_NOMEM;
	atomic_fetch_add(&t->renders, 1);
	if (r != RC_OK) {
		atomic_fetch_add(&t->render_failures, 1);
		buf_free(&b);
		return r;
	}
	c = calloc(1, sizeof *c);
	if (!c) {
		buf_free(&b);
		return RC_NOMEM;
	}
	c->p = buf_steal(&b, &c->len);
	/* Renders evict older ones; freed pages stay with malloc's per-thread arenas until
	 * trimmed, which would let RSS grow well past the cache budget. */
	before = atomic_fetch_add(&t->render_bytes, c->len);
	if ((before ^ (before + c->len)) >> TREE_TRIM_SHIFT)
		malloc_trim(0);
	*data = c;
	*bytes = c->len;
	*dtor = content_free;
	return RC_OK;
}

/* An oversize render kept in a big slot, pinned for the caller; NULL when none. */
static struct content *big_get(struct tree *t, tree_ino ino, struct cache_ent **ent)
{
	struct content *c = NULL;

	pthread_mutex_lock(&t->big_mu);
	for (unsigned i = 0; i < TREE_BIG_SLOTS; i++) {
		if (t->big[i].ent && t->big[i].ino == ino) {
			cache_pin(t->cache, t->big[i].ent);
			*ent = t->big[i].ent;
			c = t->big[i].content;
			break;
		}
	}
	pthread_mutex_unlock(&t->big_mu);
	return c;
}

static void big_keep(struct tree *t, tree_ino ino, struct cache_ent *ent, struct content *c)
{
	struct cache_ent *old;

	cache_pin(t->cache, ent);
	pthread_mutex_lock(&t->big_mu);
	for (unsigned i = 0; i < TREE_BIG_SLOTS; i++) {
		if (t->big[i].ent && t->big[i].ino == ino) {
			pthread_mutex_unlock(&t->big_mu); /* another thread kept it first */
			cache_unpin(t->cache, ent);
			return;
		}
	}
	old = t->big[t->big_next].ent;
	t->big[t->big_next] = (struct tree_big){ino, ent, c};
	t->big_next = (t->big_next + 1) % TREE_BIG_SLOTS;
	pthread_mutex_unlock(&t->big_mu);
	cache_unpin(t->cache, old);
}

static void big_drop(struct tree *t, tree_ino ino)
{
	struct cache_ent *old = NULL;

	pthread_mutex_lock(&t->big_mu);
	for (unsigned i = 0; i < TREE_BIG_SLOTS; i++) {
		if (t->big[i].ent && t->big[i].ino == ino) {
			old = t->big[i].ent;
			t->big[i].ent = NULL;
		}
	}
	pthread_mutex_unlock(&t->big_mu);
	cache_unpin(t->cache, old);
}

/* The rendered bytes of a file node, pinned. */
static struct content *content_get(struct tree *t, tree_ino ino, struct cache_ent **ent, enum rc *r)
{
	struct content *c = big_get(t, ino, ent);

	if (c)
		return c;
	c = tree_memo(t, TREE_KEY(KEY_CONTENT, ino), load_content, ino, ent, r);
	if (c && cache_detached(t->cache, *ent))
		big_keep(t, ino, *ent, c);
	return c;
}

static enum rc load_size(struct tree *t, uint64_t ino, void **data, size_t *bytes,
			 void (**dtor)(void *))
{
	struct cache_ent *ent;
	enum rc r;
	struct content *c = content_get(t, ino, &ent, &r);
	uint64_t *sz;

	if (!c)
		return r;
	sz = malloc(sizeof *sz);
	if (!sz) {
		cache_unpin(t->cache, ent);
		return RC_NOMEM;
	}
	*sz = c->len;
	cache_unpin(t->cache, ent);
	*data = sz;
	*bytes = sizeof *sz;
	*dtor = NULL;
	return RC_OK;
}

static bool node_valid(const struct tree *t, struct tnode n)
{
	return n.kind < t->fmt->n_kinds;
}

enum rc tree_getattr(struct tree *t, tree_ino ino, struct tree_stat *out)
{
	struct tnode n = ino_tnode(ino);
	const struct tree_kind *k;
	struct cache_ent *ent;
	enum rc r;

	if (ino == 0 || !node_valid(t, n))
		return RC_NOENT;
	k = &t->fmt->kinds[n.kind];
	memset(out, 0, sizeof *out);
	out->ino = ino;
	out->is_dir = k->is_dir;
	if (k->is_dir) {
		struct tree_dir *d;

		r = tree_opendir(t, ino, &d);
		if (r != RC_OK)
			return r;
		out->size = d->n;
		out->nlink = (uint32_t)(2 + d->subdirs);
		tree_closedir(t, d);
		return RC_OK;
	}
	out->nlink = 1;
	if (k->extent) {
		uint64_t off;

		return k->extent(t, n, &off, &out->size);
	}
	uint64_t *sz = tree_memo(t, TREE_KEY(KEY_SIZE, ino), load_size, ino, &ent, &r);
	if (!sz)
		return r;
	out->size = *sz;
	cache_unpin(t->cache, ent);
	return RC_OK;
}

bool tree_getattr_known(struct tree *t, tree_ino ino, struct tree_stat *out)
{
	struct tnode n = ino_tnode(ino);
	const struct tree_kind *k;
	struct cache_ent *ent;
	struct memo *m;
	bool known;

	if (ino == 0 || !node_valid(t, n))
		return false;
	k = &t->fmt->kinds[n.kind];
	if (k->is_dir || k->extent)
		return tree_getattr(t, ino, out) == RC_OK;
	m = cache_get(t->cache, TREE_KEY(KEY_SIZE, ino), &ent);
	if (!m)
		return false;
	known = m->r == RC_OK;
	cache_unpin(t->cache, ent);
	return known && tree_getattr(t, ino, out) == RC_OK;
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
			child = tnode_ino(d->v[mid].node);
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

enum rc tree_read(struct tree *t, tree_ino ino, uint64_t off, size_t len, void *dst, size_t *got)
{
	struct tnode n = ino_tnode(ino);
	const struct tree_kind *k;
	struct cache_ent *ent;
	struct content *c;
	enum rc r;

	*got = 0;
	if (ino == 0 || !node_valid(t, n))
		return RC_NOENT;
	k = &t->fmt->kinds[n.kind];
	if (k->is_dir)
		return RC_ISDIR;
	if (k->extent) {
		uint64_t start, size;

		r = k->extent(t, n, &start, &size);
		if (r != RC_OK)
			return r;
		if (off >= size)
			return RC_OK;
		if (len > size - off)
			len = (size_t)(size - off);
		r = src_read(&t->src, start + off, dst, len);
		if (r != RC_OK || source_changed(t))
			return RC_IO;
		atomic_fetch_add(&t->raw_reads, 1);
		atomic_fetch_add(&t->raw_bytes, len);
		*got = len;
		return RC_OK;
	}
	c = content_get(t, ino, &ent, &r);
	if (!c)
		return r;
	if (off < c->len) {
		if (len > c->len - off)
			len = (size_t)(c->len - off);
		memcpy(dst, c->p + off, len);
		*got = len;
	}
	if (off + *got >= c->len)
		big_drop(t, ino); /* a reader reached the end: an oversize render has served */
	cache_unpin(t->cache, ent);
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
		if (!out->is_dir)
			return RC_NOTDIR;
		r = tree_lookup(t, out->ino, comp, out);
	}
	return r;
}

/* ---- open/close ---- */

static const struct tree_format *detect(const uint8_t *h, size_t n)
{
	if (n >= 4 && memcmp(h, "\x89RW4", 4) == 0)
		return &tree_format_psg;
	if (n >= 20 && strncmp((const char *)h, "ACTRHEAD", 9) == 0)
		return &tree_format_psk;
	if (n >= 20 && strncmp((const char *)h, "ANIMHEAD", 9) == 0)
		return &tree_format_psa;
	return NULL;
}

static char *make_stem(const char *path)
{
	const char *base = strrchr(path, '/');
	char *s, *dot;

	s = strdup(base ? base + 1 : path);
	if (!s)
		return NULL;
	dot = strrchr(s, '.');
	if (dot && dot != s)
		*dot = '\0';
	return s;
}

enum tree_open_fail tree_open(const char *path, const struct tree_opts *o, struct tree **out,
			      char *why, size_t whylen)
{
	uint8_t head[32];
	struct tree *t;
	enum tree_open_fail f;
	ssize_t got;

	*out = NULL;
	t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	pthread_mutex_init(&t->big_mu, NULL);
	for (unsigned i = 0; i < TREE_PERM_SLOTS; i++)
		pthread_mutex_init(&t->perm[i].mu, NULL);
	/* Non-blocking: opening a FIFO must not wait for a writer (it is refused below). */
	t->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (t->fd < 0 || fstat(t->fd, &t->st) != 0) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		f = TREE_FAIL_OPEN;
		goto fail;
	}
	if (!S_ISREG(t->st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		f = TREE_FAIL_OPEN;
		goto fail;
	}
	got = pread(t->fd, head, sizeof head, 0);
	if (got < 0) {
		snprintf(why, whylen, "cannot read: %s", strerror(errno));
		f = TREE_FAIL_OPEN;
		goto fail;
	}
	t->fmt = detect(head, (size_t)got);
	if (!t->fmt) {
		snprintf(why, whylen,
			 got == 0 ? "empty file"
				  : "not a PSG arena, PSK or PSA file (unknown magic)");
		f = TREE_FAIL_FORMAT;
		goto fail;
	}
	if (o)
		t->opts = *o;
	if (!t->opts.cache_bytes)
		t->opts.cache_bytes = TREE_DEFAULT_CACHE;
	t->path = strdup(path);
	t->stem = make_stem(path);
	t->cache = cache_new(t->opts.cache_bytes);
	if (!t->path || !t->stem || !t->cache) {
		snprintf(why, whylen, "out of memory");
		f = TREE_FAIL_OTHER;
		goto fail;
	}
	src_init_fd(&t->src, &t->fd, (uint64_t)t->st.st_size);
	t->src.read = snap_read; /* counts reads for the staleness check */
	t->src.ctx = t;
	f = t->fmt->mount(t, why, whylen);
	if (f != TREE_FAIL_NONE) {
		t->fmt = NULL; /* nothing to unmount */
		goto fail;
	}
	*out = t;
	return TREE_FAIL_NONE;
fail:
	tree_close(t);
	return f;
}

void tree_close(struct tree *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < TREE_BIG_SLOTS; i++)
		if (t->big[i].ent)
			cache_unpin(t->cache, t->big[i].ent);
	pthread_mutex_destroy(&t->big_mu);
	cache_free(t->cache);
	for (unsigned i = 0; i < TREE_PERM_SLOTS; i++) {
		if (t->perm[i].data) {
			if (t->perm[i].dtor)
				t->perm[i].dtor(t->perm[i].data);
			else
				free(t->perm[i].data);
		}
	}
	for (unsigned i = 0; i < TREE_PERM_SLOTS; i++)
		pthread_mutex_destroy(
		    &t->perm[i].mu); /* before unmount: cached views may point into format state */
	if (t->fmt && t->fmt->unmount)
		t->fmt->unmount(t);
	if (t->fd >= 0)
		close(t->fd);
	free(t->path);
	free(t->stem);
	free(t);
}

const char *tree_format_name(const struct tree *t)
{
	return t->fmt->name;
}

const struct stat *tree_source_stat(const struct tree *t)
{
	return &t->st;
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
	}
}
