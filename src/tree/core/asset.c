/*
 * Assets: one open container file each. An asset serves a snapshot of its source as it was when
 * first opened; decodes made from it are memoised, permanently (structural data) or in the
 * shared cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/registry.h"
#include "tree/core/tree_int.h"

/* ---- snapshot reads ---- */

static bool stat_differs(const struct stat *a, const struct stat *b)
{
	return a->st_size != b->st_size || a->st_mtim.tv_sec != b->st_mtim.tv_sec ||
	       a->st_mtim.tv_nsec != b->st_mtim.tv_nsec;
}

/*
 * Once the source's size or mtime differ from the snapshot (truncated, written in place,
 * replaced), nothing new is derived from it: loads and raw reads fail with EIO, while cached
 * views keep serving. Checked after reading, which also catches a write racing the read:
 * writes stamp mtime before they change data. An unlinked source is unchanged (the fd keeps it).
 */
/* The status files of an asset (info.txt, errors.txt...) sit at node (kind, 0, 0). */
static void notify_status(struct asset *as)
{
	struct tree *t = as->t;

	if (!t->on_change || !as->fmt)
		return;
	for (unsigned k = 0; k < as->fmt->n_kinds; k++)
		if (as->fmt->kinds[k].status)
			t->on_change(t->on_change_ctx, ino_make(as->slot, tn((uint8_t)k, 0, 0)));
}

bool asset_source_changed(struct asset *as)
{
	struct stat st;

	if (as->ext.changed) { /* an archive's entry: the archive is the snapshot */
		if (atomic_load(&as->changed))
			return true;
		if (!as->ext.changed(as->ext.ctx))
			return false;
		if (!atomic_exchange(&as->changed, true))
			notify_status(as);
		return true;
	}
	if (as->fd < 0)
		return false; /* a broken asset that never opened its file: nothing derives from it
			       */
	if (atomic_load(&as->changed))
		return true;
	if (as->fd >= 0 && fstat(as->fd, &st) == 0 && !stat_differs(&st, &as->st))
		return false;
	if (!atomic_exchange(&as->changed, true))
		notify_status(as);
	return true;
}

/* Source reads made by this thread: a load that made none cannot be stale. */
static _Thread_local uint64_t tl_src_reads;

static enum rc snap_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct asset *as = ctx;
	struct src fd_src;

	tl_src_reads++; /* attempted reads count: a load that made any is checked for staleness */
	if (atomic_load(&as->changed))
		return RC_IO;
	src_init_fd(&fd_src, &as->fd, as->src.size);
	return fd_src.read(fd_src.ctx, off, dst, n);
}

/* Reads of an archive's entry, counted like snap_read's. */
static enum rc ext_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct asset *as = ctx;

	tl_src_reads++;
	if (atomic_load(&as->changed))
		return RC_IO;
	return as->inner.read(as->inner.ctx, off, dst, n);
}

/* ---- memos ---- */

static void data_free(void *data, void (*dtor)(void *))
{
	if (!data)
		return;
	if (dtor)
		dtor(data);
	else
		free(data);
}

void tree_memo_free(void *p)
{
	struct tree_memo *m = p;

	data_free(m->data, m->dtor);
	free(m);
}

/* Run a load, turning a success built from a source that changed meanwhile into EIO. */
static enum rc run_load(struct asset *as, tree_load_fn fn, uint64_t arg, void **data, size_t *bytes,
			void (**dtor)(void *))
{
	uint64_t reads = tl_src_reads;
	enum rc r;

	*data = NULL;
	*bytes = 0;
	*dtor = NULL;
	r = fn(as, arg, data, bytes, dtor);
	if (r == RC_OK && tl_src_reads != reads && asset_source_changed(as))
		r = RC_IO;
	if (r != RC_OK) {
		data_free(*data, *dtor);
		*data = NULL;
	}
	return r;
}

void *asset_memo_key(struct asset *as, struct cache_key key, tree_load_fn fn, uint64_t arg,
		     struct cache_ent **ent, enum rc *r)
{
	struct cache *c = as->t->cache;
	struct tree_memo *m = cache_get(c, key, ent);
	size_t bytes;

	if (!m) {
		m = calloc(1, sizeof *m);
		if (!m) {
			*r = RC_NOMEM;
			return NULL;
		}
		m->r = run_load(as, fn, arg, &m->data, &bytes, &m->dtor);
		m = cache_put(c, key, m, bytes + sizeof *m, tree_memo_free, ent);
		if (!m) {
			*r = RC_NOMEM;
			return NULL;
		}
	}
	*r = m->r;
	if (m->r != RC_OK) {
		cache_unpin(c, *ent);
		*ent = NULL;
		return NULL;
	}
	return m->data;
}

void *asset_memo_peek(struct asset *as, struct cache_key key, struct cache_ent **ent)
{
	struct tree_memo *m = cache_get(as->t->cache, key, ent);

	if (m && m->r == RC_OK)
		return m->data;
	if (m)
		cache_unpin(as->t->cache, *ent);
	*ent = NULL;
	return NULL;
}

void *asset_memo(struct asset *as, uint64_t id, tree_load_fn fn, uint64_t arg,
		 struct cache_ent **ent, enum rc *r)
{
	return asset_memo_key(as, cache_key(asset_key(as), KEY_WHAT(KEY_FMT, id)), fn, arg, ent, r);
}

void *asset_perm(struct asset *as, unsigned slot, tree_load_fn fn, enum rc *r)
{
	struct asset_perm *p;
	size_t bytes = 0;

	if (slot >= ASSET_PERM_SLOTS) {
		*r = RC_INVAL;
		return NULL;
	}
	p = &as->perm[slot];
	pthread_mutex_lock(&p->mu);
	if (!p->done) {
		p->r = run_load(as, fn, slot, &p->data, &bytes, &p->dtor);
		p->done = true;
		atomic_fetch_add(&as->bytes, bytes);
		/* Both kinds of mount count permanent decodes against the budget: a folder's asset
		 * entry grows; a single-file mount's asset is never evicted, so its bytes are
		 * fixed. */
		if (as->ent)
			cache_resize(as->t->cache, as->ent, atomic_load(&as->bytes));
		else if (atomic_load(&as->t->single) == as)
			cache_charge(as->t->cache, bytes);
	}
	pthread_mutex_unlock(&p->mu);
	*r = p->r;
	return p->r == RC_OK ? p->data : NULL;
}

const void *asset_need(struct asset *as, unsigned need, uint64_t arg, struct cache_ent **ent,
		       enum rc *r)
{
	const struct tree_need *nd;

	*ent = NULL;
	if (need == 0)
		return NULL;
	if (need >= as->fmt->n_needs) {
		*r = RC_INVAL;
		return NULL;
	}
	nd = &as->fmt->needs[need];
	if (nd->perm_slot >= 0)
		return asset_perm(as, (unsigned)nd->perm_slot, nd->load, r);
	return asset_memo_key(
	    as, cache_key(asset_key(as), KEY_WHAT(KEY_NEED, (uint64_t)need << 40 | arg)), nd->load,
	    arg, ent, r);
}

void asset_unpin(struct asset *as, struct cache_ent *ent)
{
	cache_unpin(as->t->cache, ent);
}

/* ---- open and close ---- */

/* The namespace of each asset row of the format registry (registry.h). */
static const struct tree_format *const asset_ns[FMT_COUNT] = {
    [FMT_PSG] = &tree_format_psg,
    [FMT_PSK] = &tree_format_psk,
    [FMT_PSA] = &tree_format_psa,
    [FMT_DISTRICT] = &tree_format_district,
};

const struct tree_format *asset_detect(const uint8_t *h, size_t n)
{
	const struct fmt_row *r = fmt_detect(h, n, FMT_ASSET);

	return r ? asset_ns[r->id] : NULL;
}

static bool set_names(struct asset *as, const char *path)
{
	const char *base = strrchr(path, '/');
	char *dot;

	as->path = strdup(path);
	as->name = strdup(base ? base + 1 : path);
	as->stem = as->name ? strdup(as->name) : NULL;
	if (!as->path || !as->name || !as->stem)
		return false;
	dot = strrchr(as->stem, '.');
	if (dot && dot != as->stem)
		*dot = '\0';
	return true;
}

static struct asset *asset_new(struct tree *t, uint32_t slot)
{
	struct asset *as = calloc(1, sizeof *as);

	if (!as)
		return NULL;
	as->t = t;
	as->slot = slot;
	as->epoch = mods_epoch(t, slot);
	as->fd = -1;
	for (unsigned i = 0; i < ASSET_PERM_SLOTS; i++)
		pthread_mutex_init(&as->perm[i].mu, NULL);
	return as;
}

static enum tree_open_fail fail(char *why, size_t whylen, enum tree_open_fail f, const char *fmt,
				const char *arg)
{
	snprintf(why, whylen, fmt, arg);
	return f;
}

/* Open the source and pick the format from its first bytes. */
static enum tree_open_fail open_source(struct asset *as, int dirfd, const char *path,
				       const struct stat *expect, bool plain, char *why,
				       size_t whylen)
{
	uint8_t head[32];
	ssize_t got;

	/* Non-blocking: opening a FIFO must not wait for a writer (it is refused below). */
	as->fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (expect ? O_NOFOLLOW : 0));
	if (as->fd < 0 || fstat(as->fd, &as->st) != 0) {
		/* Out of descriptors or memory says nothing about the file: not "broken". */
		int err = errno;
		bool passing = err == EMFILE || err == ENFILE || err == ENOMEM;
		enum tree_open_fail f =
		    fail(why, whylen, passing ? TREE_FAIL_OTHER : TREE_FAIL_OPEN, "cannot open: %s",
			 strerror(err));

		errno = err; /* the caller tells EMFILE from ENOMEM */
		return f;
	}
	if (!S_ISREG(as->st.st_mode))
		return fail(why, whylen, TREE_FAIL_OPEN, "%s", "not a regular file");
	if (expect) {
		/* A reopened asset is held to the snapshot taken when it was first listed. */
		if (as->st.st_ino != expect->st_ino || as->st.st_dev != expect->st_dev ||
		    stat_differs(&as->st, expect))
			atomic_store(&as->changed, true);
		as->st = *expect;
	}
	src_init_fd(&as->src, &as->fd, (uint64_t)as->st.st_size);
	as->src.read = snap_read; /* counts reads for the staleness check */
	as->src.ctx = as;
	if (plain) {
		as->fmt = &tree_format_plain;
		return TREE_FAIL_NONE;
	}
	got = pread(as->fd, head, sizeof head, 0);
	if (got < 0)
		return fail(why, whylen, TREE_FAIL_OPEN, "cannot read: %s", strerror(errno));
	as->fmt = asset_detect(head, (size_t)got);
	if (!as->fmt)
		return fail(why, whylen, TREE_FAIL_FORMAT, "%s",
			    got == 0 ? "empty file"
				     : "not a PSG arena, PSK or PSA file (unknown magic)");
	return TREE_FAIL_NONE;
}

enum tree_open_fail asset_open(struct tree *t, uint32_t slot, int dirfd, const char *path,
			       const struct stat *expect, enum asset_mode mode, struct asset **out,
			       char *why, size_t whylen)
{
	return asset_open_as(t, slot, path, dirfd, path, expect, mode, out, why, whylen);
}

enum tree_open_fail asset_open_as(struct tree *t, uint32_t slot, const char *logical, int dirfd,
				  const char *path, const struct stat *expect, enum asset_mode mode,
				  struct asset **out, char *why, size_t whylen)
{
	struct asset *as = asset_new(t, slot);
	enum tree_open_fail f;

	*out = NULL;
	if (!as || !set_names(as, logical)) {
		asset_close(as);
		return fail(why, whylen, TREE_FAIL_OTHER, "%s", "out of memory");
	}
	as->gen = (uint32_t)atomic_fetch_add(&t->asset_opens, 1) + 1;
	f = open_source(as, dirfd, path, expect, mode == ASSET_PLAIN, why, whylen);
	if (f == TREE_FAIL_NONE) {
		f = as->fmt->mount(as, why, whylen);
		if (f != TREE_FAIL_NONE)
			as->fmt = NULL; /* nothing to unmount */
	}
	if (f != TREE_FAIL_NONE && mode == ASSET_LENIENT && f != TREE_FAIL_OTHER) {
		/* The explanation derives nothing from the file: it stays readable whatever
		 * the file does next. A file already changed since it was listed says so. */
		if (atomic_load(&as->changed))
			snprintf(why, whylen, "changed since its folder was listed");
		if (as->fd >= 0)
			close(as->fd);
		as->fd = -1;
		as->why = strdup(why);
		as->fmt = &tree_format_broken;
		if (as->why && as->fmt->mount(as, why, whylen) == TREE_FAIL_NONE)
			f = TREE_FAIL_NONE;
	}
	if (f != TREE_FAIL_NONE) {
		int err = errno; /* EMFILE or ENOMEM, for the caller */

		asset_close(as);
		errno = err;
		return f;
	}
	atomic_fetch_add(&as->bytes, sizeof *as + strlen(as->path) * 3); /* after any mount loads */
	*out = as;
	return TREE_FAIL_NONE;
}

enum tree_open_fail asset_open_broken(struct tree *t, uint32_t slot, const char *name,
				      const struct stat *st, const char *why, struct asset **out)
{
	struct asset *as = asset_new(t, slot);
	char tmp[16];

	*out = NULL;
	if (!as || !set_names(as, name) || !(as->why = strdup(why))) {
		asset_close(as);
		return TREE_FAIL_OTHER;
	}
	as->gen = (uint32_t)atomic_fetch_add(&t->asset_opens, 1) + 1;
	as->st = *st;
	as->fmt = &tree_format_broken;
	if (as->fmt->mount(as, tmp, sizeof tmp) != TREE_FAIL_NONE) {
		as->fmt = NULL;
		asset_close(as);
		return TREE_FAIL_OTHER;
	}
	atomic_fetch_add(&as->bytes, sizeof *as);
	*out = as;
	return TREE_FAIL_NONE;
}

enum tree_open_fail asset_open_src(struct tree *t, uint32_t slot, const char *logical,
				   const struct src *s, const struct stat *st, enum asset_mode mode,
				   const struct asset_ext *ext, struct asset **out, char *why,
				   size_t whylen)
{
	struct asset *as = asset_new(t, slot);
	enum tree_open_fail f = TREE_FAIL_NONE;
	uint8_t head[32];
	size_t n;

	*out = NULL;
	if (!as) {
		if (ext->release)
			ext->release(ext->ctx);
		return fail(why, whylen, TREE_FAIL_OTHER, "%s", "out of memory");
	}
	as->ext = *ext;
	if (!set_names(as, logical)) {
		asset_close(as);
		return fail(why, whylen, TREE_FAIL_OTHER, "%s", "out of memory");
	}
	as->gen = (uint32_t)atomic_fetch_add(&t->asset_opens, 1) + 1;
	as->st = *st;
	as->inner = *s;
	as->src = (struct src){ext_read, as, s->size};
	n = s->size < sizeof head ? (size_t)s->size : sizeof head;
	if (mode == ASSET_PLAIN) {
		as->fmt = &tree_format_plain;
	} else if (src_read(&as->src, 0, head, n) != RC_OK) {
		f = fail(why, whylen, TREE_FAIL_OPEN, "%s", "cannot read its first bytes");
	} else if (!(as->fmt = asset_detect(head, n))) {
		f = fail(why, whylen, TREE_FAIL_FORMAT, "%s",
			 n == 0 ? "empty file"
				: "not a PSG arena, PSK or PSA file (unknown magic)");
	} else if ((f = as->fmt->mount(as, why, whylen)) != TREE_FAIL_NONE) {
		as->fmt = NULL;
	}
	if (f != TREE_FAIL_NONE && mode == ASSET_LENIENT && f != TREE_FAIL_OTHER) {
		/* Its own bytes stay readable (asset_set_own); the tree only explains. */
		as->fmt = &tree_format_broken;
		as->why = strdup(why);
		if (as->why && as->fmt->mount(as, why, whylen) == TREE_FAIL_NONE)
			f = TREE_FAIL_NONE;
	}
	if (f != TREE_FAIL_NONE) {
		asset_close(as);
		return f;
	}
	atomic_fetch_add(&as->bytes, sizeof *as + strlen(as->path) * 3);
	*out = as;
	return TREE_FAIL_NONE;
}

enum rc asset_set_own(struct asset *as, const char *name)
{
	as->own = strdup(name);
	if (as->own)
		return RC_OK;
	asset_close(as);
	return RC_NOMEM;
}

void asset_close(struct asset *as)
{
	if (!as)
		return;
	for (unsigned i = 0; i < ASSET_PERM_SLOTS; i++) {
		data_free(as->perm[i].data, as->perm[i].dtor);
		pthread_mutex_destroy(&as->perm[i].mu);
	}
	if (as->fmt && as->fmt->unmount)
		as->fmt->unmount(as);
	if (as->fd >= 0)
		close(as->fd);
	free(as->path);
	free(as->name);
	free(as->stem);
	free(as->why);
	free(as->own);
	if (as->ext.release)
		as->ext.release(as->ext.ctx);
	free(as);
}
