/*
 * Archives as directories (arcdir_int.h): reading the archive and its entries (descriptors,
 * indexes, pieces, bytes shared by entries), and decoding the next file ahead of a reader.
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
#include "tree/mount/guid_index.h"
#include "tree/mount/arcdir_int.h"

static void ahead_schedule(struct arcdir *ad, uint32_t i);
struct ixmemo;
static struct ixmemo *hot_get(struct arcdir *ad, uint32_t i, struct cache_ent **pin);
static void hot_keep(struct arcdir *ad, uint32_t i, struct ixmemo *m, struct cache_ent *pin);

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

bool arcdir_changed(struct arcdir *ad)
{
	struct stat st;
	bool same;

	if (atomic_load(&ad->changed))
		return true;
	if (ad->parent)
		return arcdir_changed(ad->parent);
	pthread_mutex_lock(&ad->fd_mu); /* folder_assets.c may close it meanwhile */
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
	while (ad->fd < 0) {
		int fd, err;

		/* Reopened without fd_mu: the folder answers under its mu, which lru_trim holds
		 * while it closes an archive (fd_mu) (tree_int.h, "Lock order"). */
		pthread_mutex_unlock(&ad->fd_mu);
		fd = ad->t->arc_host->reopen(ad->t, ad->owner_slot);
		err = errno;
		pthread_mutex_lock(&ad->fd_mu);
		if (fd < 0) {
			pthread_mutex_unlock(&ad->fd_mu);
			return err == EMFILE || err == ENFILE ? RC_NOFILES
			       : err == ENOMEM		      ? RC_NOMEM
							      : RC_IO;
		}
		if (ad->fd >= 0) { /* another reader reopened it meanwhile */
			close(fd);
			break;
		}
		ad->fd = fd;
		if (fstat(fd, &st) != 0 || st.st_ino != ad->st.st_ino ||
		    st.st_dev != ad->st.st_dev || !same_file(&st, &ad->st))
			atomic_store(&ad->changed, true);
	}
	ad->fd_closing = false;
	ad->fd_users++;
	pthread_mutex_unlock(&ad->fd_mu);
	ad->t->arc_host->used(ad->t, ad->owner_slot, ad);
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

enum rc arcdir_fd_read(void *ctx, uint64_t off, void *dst, size_t n)
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

	arcdir_quote_raw(ad->a.paths + ad->a.e[i].path, q, sizeof q);
	pthread_mutex_lock(&ad->mu);
	if (ad->reported && !(ad->reported[i] & 1)) {
		ad->reported[i] |= 1;
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
		pthread_mutex_lock(&ad->mu); /* later opens read it uncached (arcdir_getattr) */
		if (ad->reported)
			ad->reported[i] |= ARCDIR_SHORT;
		pthread_mutex_unlock(&ad->mu);
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
enum rc arcdir_entry_read(void *ctx, uint64_t off, void *dst, size_t n)
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

/* The same bytes as arcdir_entry_read, as the cached pieces themselves (asset_ext.view); except
 * that where the stored bytes end before the size the table claims (a lying entry), a read that
 * starts before their end gets the bytes up to it (a short read) and one from there fails. */
enum rc arcdir_entry_view(void *ctx, uint64_t off, size_t n, struct tree_rdv *v)
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
	pthread_mutex_t mu; /* a leaf (lock order: tree/core/tree_int.h) */
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
void arcdir_ahead_forget(struct arcdir *ad)
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
