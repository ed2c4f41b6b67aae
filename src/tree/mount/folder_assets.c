/*
 * Folder mounts (folder_int.h): the archives of the folder (opened once, their slots handed out)
 * and the open assets, at most max_assets of them, least recently used closed first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "psgfs/base/bytes.h"
#include "psgfs/base/hash.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/registry.h"
#include "psgfs/formats/skate_objects.h"
#include "tree/mount/arcdir.h"
#include "tree/mount/guid_index.h"
#include "tree/mount/folder_int.h"
#include "tree/mount/loose.h"

/* ---- archives (arcdir.c) ---- */

enum rc fold_arc_adopt(struct tree *t, struct arcdir *ad)
{
	struct folder *f = t->fold;
	struct arcdir **v;

	pthread_mutex_lock(&f->mu);
	v = xgrow_n(f->arcs, f->n_arcs, &f->cap_arcs, sizeof *v, 8);
	if (v) {
		f->arcs = v;
		f->arcs[f->n_arcs++] = ad;
	}
	pthread_mutex_unlock(&f->mu);
	return v ? RC_OK : RC_NOMEM;
}

uint32_t folder_slots_take(struct tree *t, uint32_t n)
{
	struct folder *f = t->fold;
	uint32_t first = 0;

	pthread_mutex_lock(&f->mu);
	if (f->next_seq < UINT32_MAX - 1 - n) {
		first = f->next_seq;
		f->next_seq += n;
	}
	pthread_mutex_unlock(&f->mu);
	return first;
}

enum rc fold_arc_register(struct tree *t, struct arcdir *ad)
{
	struct folder *f = t->fold;
	uint32_t span = arcdir_span(ad);
	enum rc r = RC_OK;

	pthread_mutex_lock(&f->mu);
	/* Slots base + 1 ... base + span - 1 (node 0 is shown by its owner's slot), below the
	 * temporaries' slot. */
	if (span == 0 || f->next_seq >= UINT32_MAX - 1 - span)
		r = RC_NOMEM;
	else
		arcdir_set_base(ad, f->next_seq); /* before any lookup can find it */
	if (r == RC_OK)
		r = container_add(t, f->next_seq, f->next_seq + span - 1, &arcdir_container, ad);
	if (r == RC_OK)
		f->next_seq += span;
	pthread_mutex_unlock(&f->mu);
	return r;
}

/* The file `name` in dfd, open, when it is an ATOC table that serves the stream file whose
 * first 16 bytes are sh (arc_toc_serves); -1 otherwise. */
static int toc_if_serves(int dfd, const char *name, const uint8_t sh[16])
{
	uint8_t h[16];
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h && arc_toc_serves(sh, h))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/*
 * A stream file's ATOC table (-1: none): the .pst/.xst beside it whose stamp (bytes 8..16)
 * is the collection's (docs/streams.md: one table serves a district's collections, named
 * after the district, e.g. DIST_X_Gfx.pst for cGfx_Global.psf); the one of the same stem
 * (arc_toc_pairs) is taken first, so another table with the same stamp is not. fd: the
 * collection.
 */
int fold_open_toc(int dfd, const char *name, int fd)
{
	char own[NAME_MAX + 1];
	uint8_t h[16];
	int toc = -1, sfd;
	DIR *d;
	struct dirent *de;

	if (fd < 0 || pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h ||
	    fmt_detect(h, sizeof h, FMT_ARCHIVE) != fmt_row(FMT_SFIL))
		return -1;
	if (arc_toc_name(name, own, sizeof own) && (toc = toc_if_serves(dfd, own, h)) >= 0)
		return toc;
	sfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = sfd >= 0 ? fdopendir(sfd) : NULL;
	if (!d) {
		if (sfd >= 0)
			close(sfd);
		return -1;
	}
	/* Any table with the stamp, unless its own (the extension in another case) comes. */
	while ((de = readdir(d))) {
		bool pairs = arc_toc_pairs(name, de->d_name);
		int c;

		if (!fmt_is_companion_name(de->d_name, FMT_ARCHIVE) || (toc >= 0 && !pairs) ||
		    (c = toc_if_serves(dfd, de->d_name, h)) < 0)
			continue;
		if (toc >= 0)
			close(toc);
		toc = c;
		if (pairs)
			break;
	}
	closedir(d);
	return toc;
}

/* Open the archive of a folder entry (once; a file that does not open as one explains why in
 * its info.txt). */
enum rc fold_open_archive(struct tree *t, struct fentry *e)
{
	struct folder *f = t->fold;
	struct arcdir *ad = NULL;
	enum rc r = RC_OK;
	char why[256];

	pthread_mutex_lock(&f->omu);
	if (!e->arc) {
		int dfd = fold_open_dir_of(f, e->parent), fd = -1, toc = -1;

		if (dfd < 0 && fold_errno_transient(errno)) {
			r = fold_rc_transient(errno);
			pthread_mutex_unlock(&f->omu);
			return r;
		}
		if (dfd >= 0) {
			fd = openat(dfd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (fd < 0 && fold_errno_transient(errno)) {
				r = fold_rc_transient(errno);
				close(dfd);
				pthread_mutex_unlock(&f->omu);
				return r;
			}
			toc = fold_open_toc(dfd, e->name, fd);
			close(dfd);
		}
		if (arcdir_open_fd(t, fd, toc, &e->st, e->name, e->slot, &ad, why, sizeof why) ==
		    TREE_FAIL_OTHER) {
			r = RC_NOMEM;
		} else {
			pthread_mutex_lock(&f->mu);
			e->arc = ad;
			pthread_mutex_unlock(&f->mu);
			if (ad)
				fold_arc_used(t, e->slot, ad); /* its descriptor counts */
		}
	}
	pthread_mutex_unlock(&f->omu);
	return r;
}

/* ---- open assets ---- */

static void lru_unlink(struct folder *f, struct fentry *e)
{
	struct fentry *p = e->lru_prev ? fentry_find(f, e->lru_prev) : NULL;
	struct fentry *n = e->lru_next ? fentry_find(f, e->lru_next) : NULL;

	if (p)
		p->lru_next = e->lru_next;
	else
		f->lru_head = e->lru_next;
	if (n)
		n->lru_prev = e->lru_prev;
	else
		f->lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = 0;
	e->in_lru = false;
}

static void lru_touch(struct folder *f, struct fentry *e)
{
	struct fentry *h;

	if (e->in_lru)
		lru_unlink(f, e);
	h = f->lru_head ? fentry_find(f, f->lru_head) : NULL;
	e->lru_next = f->lru_head;
	e->lru_prev = 0;
	if (h)
		h->lru_prev = e->slot;
	f->lru_head = e->slot;
	if (!f->lru_tail)
		f->lru_tail = e->slot;
	e->in_lru = true;
}

/* Close the least recently used assets beyond max_assets (each as soon as it is unpinned). */
static void lru_trim(struct tree *t)
{
	struct folder *f = t->fold;

	while (atomic_load(&f->open_assets) > f->max_assets && f->lru_tail) {
		struct fentry *e = fentry_find(f, f->lru_tail);

		lru_unlink(f, e);
		if (e->archive) { /* an archive's descriptor (arcdir_read.c reopens it) */
			arcdir_fd_close(e->arc);
			atomic_fetch_sub(&f->open_assets, 1);
			continue;
		}
		cache_drop(t->cache, asset_ckey(e->slot));
		if (atomic_load(&f->open_assets) > f->max_assets && !f->lru_tail)
			break;
	}
}

/*
 * The archives of a folder keep their file open while in use, and count among max_assets
 * like assets: in the LRU while open (counted once), closed by lru_trim when least recently
 * used, reopened by their next read (arcdir_read.c fd_acquire). A folder of more archives than
 * descriptors allow (1,015 visited at ulimit -n 1024) made every later operation fail.
 */
void fold_arc_used(struct tree *t, uint32_t slot, struct arcdir *ad)
{
	struct folder *f = t->fold;
	struct fentry *e;

	if (!f)
		return;
	if (f->loose && loose_arc_owns(f->loose, slot)) {
		loose_arc_used(f->loose, slot, ad);
		return;
	}
	pthread_mutex_lock(&f->mu);
	e = fentry_find(f, slot);
	pthread_mutex_unlock(&f->mu);
	if (!e || !e->archive || e->arc != ad)
		return;
	pthread_mutex_lock(&f->amu);
	/* Under amu nothing closes it (lru_trim holds amu): live stays live. The LRU walks the
	 * entry table, which fold_read_folder grows under mu: mu too, as folder_asset_get takes it.
	 */
	if (arcdir_fd_live(ad)) {
		pthread_mutex_lock(&f->mu);
		if (!e->in_lru)
			atomic_fetch_add(&f->open_assets, 1);
		lru_touch(f, e);
		lru_trim(t);
		pthread_mutex_unlock(&f->mu);
	}
	pthread_mutex_unlock(&f->amu);
}

int fold_arc_reopen(struct tree *t, uint32_t slot)
{
	struct folder *f = t->fold;
	struct fentry *e;
	int dfd, fd, err;

	if (f->loose && loose_arc_owns(f->loose, slot))
		return loose_arc_reopen(f->loose, slot);
	pthread_mutex_lock(&f->mu);
	e = fentry_find(f, slot);
	pthread_mutex_unlock(&f->mu);
	if (!e) {
		errno = ENOENT;
		return -1;
	}
	dfd = fold_open_dir_of(f, e->parent);
	if (dfd < 0)
		return -1;
	fd = openat(dfd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	err = errno;
	close(dfd);
	errno = err;
	return fd;
}

struct asset_box {
	struct asset *as;
	struct folder *f;
};

static void asset_box_free(void *p)
{
	struct asset_box *b = p;

	atomic_fetch_sub(&b->f->open_assets, 1);
	asset_close(b->as);
	free(b);
}

static uint64_t why_hash(const char *s)
{
	return s ? fnv1a_64(s, strlen(s)) : FNV64_BASIS;
}

/*
 * An asset closed by the limit and opened again must be the file it was: the kernel holds
 * inode numbers and sizes from the first opening, and the numbers of one format mean other
 * things in another (a broken asset's info.txt is another format's node 1). So a reopening
 * that finds another file, a changed one, another format or another reason to be broken
 * marks the entry dead: from then on everything below it fails with EIO, the snapshot rule
 * of single-file mounts (what was read keeps its bytes, nothing new is derived).
 */
static enum rc same_as_first(struct fentry *e, struct asset *as)
{
	uint64_t h = why_hash(as->why);

	if (!e->fmt) {
		e->fmt = as->fmt;
		e->why_hash = h;
		return RC_OK;
	}
	if (as->fmt != e->fmt || h != e->why_hash || asset_source_changed(as))
		e->dead = true;
	return e->dead ? RC_IO : RC_OK;
}

/* Texture mods: a mod of this file in OUTDIR is opened instead of the file. */
static bool open_modded(struct tree *t, struct fentry *e, struct asset **out,
			enum tree_open_fail *fl, char *why, size_t whylen)
{
	char rel[PATH_MAX];

	return t->mods && e->asset && fentry_path(t, e->slot, rel, sizeof rel) &&
	       mods_open_asset(t, e->slot, e->name, rel, ASSET_LENIENT, out, fl, why, whylen);
}

static enum rc open_asset(struct tree *t, struct fentry *e, struct asset **out)
{
	int dfd;
	enum tree_open_fail fl;
	char why[256];

	if (open_modded(t, e, out, &fl, why, sizeof why))
		return fl == TREE_FAIL_NONE ? RC_OK : fl == TREE_FAIL_OTHER ? RC_NOMEM : RC_IO;
	dfd = fold_open_dir_of(t->fold, e->parent);
	if (dfd < 0) {
		if (fold_errno_transient(errno))
			return fold_rc_transient(errno);
		if (!e->asset)
			return RC_IO;
		snprintf(why, sizeof why, "cannot open its folder: %s", strerror(errno));
		fl = asset_open_broken(t, e->slot, e->name, &e->st, why, out);
	} else {
		fl = asset_open(t, e->slot, dfd, e->name, &e->st,
				e->asset ? ASSET_LENIENT : ASSET_PLAIN, out, why, sizeof why);
		close(dfd);
	}
	if (fl != TREE_FAIL_NONE)
		return fl == TREE_FAIL_OTHER ? fold_rc_transient(errno) : RC_IO;
	return RC_OK;
}

/* A newly opened asset joins the cache (under f->amu), unless another thread's opening of the
 * same slot got there first: then that one is used and this one closed. */
static struct asset_box *asset_publish(struct tree *t, struct fentry *e, struct asset *as,
				       struct cache_ent **pin, enum rc *r)
{
	struct folder *f = t->fold;
	struct asset_box *b = cache_get(t->cache, asset_ckey(e->slot), pin);

	if (b) {
		asset_close(as);
		return b;
	}
	*r = same_as_first(e, as);
	b = *r == RC_OK ? calloc(1, sizeof *b) : NULL;
	if (!b) {
		asset_close(as);
		*r = *r == RC_OK ? RC_NOMEM : *r;
		return NULL;
	}
	b->as = as;
	b->f = f;
	atomic_fetch_add(&f->open_assets, 1);
	b = cache_put(t->cache, asset_ckey(e->slot), b, atomic_load(&as->bytes), asset_box_free,
		      pin);
	if (!b)
		*r = RC_NOMEM;
	else
		b->as->ent = *pin;
	return b;
}

struct asset *fold_asset_get(struct tree *t, const struct cref *cr, struct cache_ent **pin,
			     enum rc *r)
{
	struct folder *f = t->fold;
	uint32_t slot = cr->slot;
	struct fentry *e = fentry_get(t, slot);
	struct asset_box *b;

	*pin = NULL;
	if (!e || e->type != FE_FILE || e->archive) {
		*r = e ? RC_ISDIR : RC_NOENT;
		return NULL;
	}
	pthread_mutex_lock(&f->amu);
	b = cache_get(t->cache, asset_ckey(slot), pin);
	for (unsigned tries = 0; !b; tries++) {
		/* Opened without the lock: opening reads the file (headers, dictionary), and
		 * requests for other assets go on meanwhile. */
		struct asset *as;
		bool dead = e->dead;

		pthread_mutex_unlock(&f->amu);
		*r = dead ? RC_IO : open_asset(t, e, &as);
		if (*r != RC_OK)
			return NULL;
		pthread_mutex_lock(&f->amu);
		/* Texture mods: a commit moved the slot on while it opened (and its reset may
		 * have come already): what it opened is the old content, not to be kept. */
		if (t->mods && as->epoch != mods_epoch(t, slot) && tries < 8) {
			asset_close(as);
			b = cache_get(t->cache, asset_ckey(slot), pin);
			continue;
		}
		b = asset_publish(t, e, as, pin, r);
		if (!b) {
			pthread_mutex_unlock(&f->amu);
			return NULL;
		}
	}
	pthread_mutex_lock(&f->mu);
	lru_touch(f, e);
	lru_trim(t);
	pthread_mutex_unlock(&f->mu);
	pthread_mutex_unlock(&f->amu);
	return b->as;
}

void fold_reset(struct tree *t, const struct cref *r)
{
	struct folder *f = t->fold;
	uint32_t slot = r->slot;
	struct fentry *e = fentry_get(t, slot);

	if (!e || e->type != FE_FILE)
		return;
	pthread_mutex_lock(&f->amu);
	e->fmt = NULL; /* the next opening is a first opening */
	e->dead = false;
	cache_drop(t->cache, asset_ckey(slot));
	pthread_mutex_lock(&f->mu);
	if (e->in_lru)
		lru_unlink(f, e);
	pthread_mutex_unlock(&f->mu);
	pthread_mutex_unlock(&f->amu);
}
