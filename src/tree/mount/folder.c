/*
 * Folder mounts: a directory of assets shown as one tree. Mounting reads the folder itself and
 * nothing below it. A folder is read when first listed, and that listing is kept as the
 * mount's snapshot of it (later changes in the source folder are not shown). Each regular file
 * is classified then, by its name and size where they decide (classify_by_name), else by its
 * first bytes (sniff): containers become directories holding the asset's own tree, other files
 * pass through. Symbolic links stay links (never followed); FIFOs, sockets
 * and devices are left out. Assets are opened only when something inside them is used, and
 * live in the shared cache like everything else, at most max_assets at a time: file
 * descriptors and memory stay bounded however many are visited. An asset closed by that limit
 * reopens only as the same unchanged file in the same format, else everything below it fails
 * with EIO (same_as_first). Running out of memory or descriptors is never taken for a
 * property of a file: such a listing is not kept, such an opening is not remembered. No lock
 * is held while the source tree is read (a folder listed, an asset opened), and the mount's
 * own mount point, when it lies inside the folder, is never entered (is_mount_point).
 *
 * Slots: an entry's slot is its source inode number when that is below 2^31 and on the
 * mounted folder's device (stable across remounts of an unchanged folder); otherwise, and for a
 * second path to an already-seen inode, the next number from 2^31 up (stable only while the
 * folders are first visited in the same order).
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
#include "tree/mount/loose.h"

#define SEQ_SLOT_FIRST	   0x80000000u
#define DEFAULT_MAX_ASSETS 128u

enum fe_type { FE_DIR = 1, FE_FILE, FE_LINK };

struct fentry {
	uint32_t slot, parent;
	uint8_t type;
	bool asset;   /* a container: shown as a directory */
	bool archive; /* ... an archive (arcdir.c), opened when first listed */
	struct arcdir *arc;
	bool denied; /* assets: the sniff was refused permission (it will open as broken) */
	bool dead;   /* files: reopened as something else; everything below fails with EIO */
	bool named;  /* files: classified by name and size, never read at listing */
	const struct tree_format *fmt; /* files: the format of the first opening */
	uint64_t why_hash;	       /* ... and, when broken, of its reason */
	bool listed;		       /* directories: children read */
	struct stat st;
	char *name;
	char *link;	/* links: the target as stored */
	uint32_t *kids; /* directories: children slots, as read */
	size_t n_kids;
	uint32_t lru_prev, lru_next; /* open assets, most recent first; 0 = none */
	bool in_lru;
	struct fentry *hnext;
};

struct folder {
	int root_fd;
	pthread_mutex_t mu; /* entries and listings */
	struct fentry root;
	struct fentry **tab;
	size_t n_buckets, n;
	uint32_t next_seq;
	pthread_mutex_t omu; /* held while an archive is opened (one opening each) */
	pthread_mutex_t amu; /* the open assets' cache entries and their LRU (never held while a
			      * file is opened) */
	uint32_t lru_head, lru_tail;
	atomic_uint open_assets;
	unsigned max_assets;
	bool assets_files;	/* -o assets=files: containers other than archives are plain */
	struct stat mnt;	/* the mount point before mounting (st_ino 0: not mounted) */
	dev_t own_dev;		/* this mount's device (0: not mounted) */
	struct guid_index *gix; /* per-texture arenas by name, built on first lookup */
	struct guid_index *tix; /* texture arenas by their TOC, built on first lookup */
	size_t uncharged; /* heap of permanent entries not yet charged to the cache (under mu) */
	size_t charged;	  /* ... and charged so far (at most half the budget: see read_folder) */
	/* archives opened, by the slots their nodes use (ascending, as handed out); under mu */
	struct arcreg {
		uint32_t base, end;
		struct arcdir *ad;
	} * regs;
	size_t n_regs, cap_regs;
	struct arcdir **arcs; /* every archive opened (freed at the end) */
	size_t n_arcs, cap_arcs;
	struct loose *loose; /* -o layout=loose: what the archives add (loose.h) */
};

/* ---- the entry table (permanent: entries are what inode numbers resolve to) ---- */

static size_t bucket_of(const struct folder *f, uint32_t slot)
{
	return (size_t)((slot * 0x9e3779b1u) >> 7) & (f->n_buckets - 1);
}

static struct fentry *entry_find(struct folder *f, uint32_t slot)
{
	struct fentry *e;

	if (slot == 0)
		return &f->root;
	for (e = f->tab[bucket_of(f, slot)]; e; e = e->hnext)
		if (e->slot == slot)
			return e;
	return NULL;
}

static bool table_grow(struct folder *f)
{
	size_t nb = f->n_buckets * 2;
	struct fentry **tab = calloc(nb, sizeof *tab);

	if (!tab)
		return false;
	f->uncharged +=
	    cache_heap_cost(nb * sizeof *tab) - cache_heap_cost(f->n_buckets * sizeof *tab);
	for (size_t i = 0; i < f->n_buckets; i++) {
		struct fentry *e = f->tab[i], *next;

		for (; e; e = next) {
			size_t b = (size_t)((e->slot * 0x9e3779b1u) >> 7) & (nb - 1);

			next = e->hnext;
			e->hnext = tab[b];
			tab[b] = e;
		}
	}
	free(f->tab);
	f->tab = tab;
	f->n_buckets = nb;
	return true;
}

static bool entry_insert(struct folder *f, struct fentry *e)
{
	size_t b;

	if (f->n >= f->n_buckets * 2 && !table_grow(f) && f->n >= f->n_buckets * 8)
		return false;
	b = bucket_of(f, e->slot);
	e->hnext = f->tab[b];
	f->tab[b] = e;
	f->n++;
	return true;
}

static void entry_remove(struct folder *f, uint32_t slot)
{
	struct fentry **pp = &f->tab[bucket_of(f, slot)];

	for (; *pp; pp = &(*pp)->hnext) {
		if ((*pp)->slot == slot) {
			*pp = (*pp)->hnext;
			f->n--;
			return;
		}
	}
}

/* What an entry keeps on the heap (its children's array is counted where it grows). */
static size_t entry_heap(const struct fentry *e)
{
	return cache_heap_cost(sizeof *e) + cache_heap_cost(strlen(e->name) + 1) +
	       (e->link ? cache_heap_cost(strlen(e->link) + 1) : 0);
}

static void entry_free(struct fentry *e)
{
	free(e->name);
	free(e->link);
	free(e->kids);
	free(e);
}

/* A stable slot for a new entry (see the comment at the top). */
static uint32_t slot_for(struct folder *f, const struct stat *st)
{
	if (st->st_dev == f->root.st.st_dev && st->st_ino > 0 && st->st_ino < SEQ_SLOT_FIRST &&
	    !entry_find(f, (uint32_t)st->st_ino))
		return (uint32_t)st->st_ino;
	if (f->next_seq == UINT32_MAX)
		return 0;
	return f->next_seq++;
}

/* ---- paths ---- */

/* The names from the root down to the folder of slot `slot` (deepest first) in *chain; its
 * depth, or -1 (errno set). Taken under f->mu, as the table may grow meanwhile; the names stay
 * valid without it (entries handed out live as long as the mount). Any depth: the chain grows
 * with it, and a parent cycle (impossible by construction) cannot be longer than the table. */
static ssize_t chain_of(struct folder *f, uint32_t slot, const char ***chain)
{
	const struct fentry *e;
	size_t depth = 0, cap = 0;
	const char **v = NULL;
	int err = 0;

	pthread_mutex_lock(&f->mu);
	for (e = entry_find(f, slot); e && e->slot != 0 && !err; e = entry_find(f, e->parent)) {
		if (depth > f->n) {
			err = ELOOP;
		} else {
			const char **nv = xgrow_n(v, depth, &cap, sizeof *nv, 16);

			if (nv)
				v = nv;
			else
				err = ENOMEM;
		}
		if (!err)
			v[depth++] = e->name;
	}
	if (!err && !e)
		err = ENOENT;
	pthread_mutex_unlock(&f->mu);
	if (err) {
		free(v);
		errno = err;
		return -1;
	}
	*chain = v;
	return (ssize_t)depth;
}

/* Open the folder of slot `slot` (a directory) by walking from the root without following
 * links. Called without f->mu: the walk reads the source tree. */
static int open_dir_of(struct folder *f, uint32_t slot)
{
	const char **chain = NULL;
	ssize_t depth = chain_of(f, slot, &chain);
	int fd;

	if (depth < 0)
		return -1;
	/* Not dup(): a duplicate shares the root's directory offset with every other read. */
	fd = openat(f->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd >= 0 && depth--) {
		int next =
		    openat(fd, chain[depth], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;

		close(fd);
		fd = next;
		errno = err;
	}
	free(chain);
	return fd;
}

/* ---- listing a source folder ---- */

/*
 * Classify a regular file by its name and size where they decide (docs: "Folder mounts"),
 * without reading it: an asset extension (registry.h) on a file large enough for the magic
 * is an asset (a misnamed one opens as a broken asset whose info.txt says why); a file too
 * small for the magic of its extension, or with a text, picture or sound extension, is a
 * plain file. True when decided; otherwise (and always with sniff_all) the first bytes
 * decide (sniff).
 */
static bool classify_by_name(const struct tree *t, struct fentry *e)
{
	const struct fmt_row *r;

	if (t->opts.layout_loose && e->type == FE_FILE) { /* every file plain, none read */
		e->asset = false;
		return true;
	}
	if (t->opts.sniff_all || e->type != FE_FILE ||
	    !(r = fmt_by_name(e->name, FMT_ASSET | FMT_FILE)))
		return false;
	e->asset =
	    r->role == FMT_ASSET && e->st.st_size >= (off_t)r->min_size && !t->opts.assets_files;
	return true;
}

/* Out of descriptors or memory: a passing condition, never a property of the file. */
static bool errno_transient(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM;
}

/* What a passing condition is told as: EMFILE for descriptors, ENOMEM for memory. */
static enum rc rc_transient(int e)
{
	return e == EMFILE || e == ENFILE ? RC_NOFILES : RC_NOMEM;
}

/* ---- sniffing: is a regular file a container? By content; by extension if unreadable ---- */

#define SNIFF_BYTES 32

/* Ask for the first page of a file and return at once: the reads of a whole folder go to the
 * disk together. Closing the file does not cancel them. */
static void sniff_hint(int dirfd, const struct fentry *e)
{
	int fd;

	if (e->type != FE_FILE || e->named)
		return;
	fd = openat(dirfd, e->name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		posix_fadvise(fd, 0, SNIFF_BYTES, POSIX_FADV_WILLNEED);
		close(fd);
	}
}

/* Sniff one file; false when it could not be opened for want of descriptors or memory. */
static bool sniff(int dirfd, struct fentry *e, bool assets_files)
{
	uint8_t head[SNIFF_BYTES];
	ssize_t got = -1;
	int fd;

	if (e->type != FE_FILE || e->named)
		return true;
	fd = openat(dirfd, e->name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e->denied = errno == EACCES || errno == EPERM;
		if (errno_transient(errno))
			return false;
	} else {
		got = pread(fd, head, sizeof head, 0);
		close(fd);
	}
	if (got < 0) {
		e->archive = fmt_by_name(e->name, FMT_ARCHIVE) != NULL;
		e->asset = e->archive || (fmt_by_name(e->name, FMT_ASSET) && !assets_files);
	} else {
		const struct fmt_row *r = fmt_detect(head, (size_t)got, FMT_ASSET);

		e->archive = arc_detect(head, (size_t)got);
		/* a row with a name rule (a district's Pres map) takes only the names it names */
		e->asset =
		    e->archive || (r && (!r->name_ok || r->name_ok(e->name)) && !assets_files);
	}
	return true;
}

/*
 * Sniff the regular files of a listing. Each file's first page was asked for as its entry was
 * read (sniff_hint), so the reads are queued together: a folder that is not in the page cache
 * costs about one disk round trip instead of one per file, with one descriptor open at a
 * time. False when a file could not be opened for want of descriptors or memory (the listing
 * is then not kept).
 */
static bool sniff_all(int dirfd, struct fentry **v, size_t n, bool assets_files)
{
	for (size_t i = 0; i < n; i++)
		if (!sniff(dirfd, v[i], assets_files))
			return false;
	return true;
}

/*
 * This daemon's own mount must never be entered: any request it caused would be answered by
 * this same daemon, which is busy asking (with -s, or every worker listing the same folder, it
 * waits for itself forever). The mount point is recognised without a stat through it: readdir
 * reports the directory it covers, whose identity main took before mounting. Any other path
 * into the mount (a bind mount of it inside DIR) is recognised by its device, which statx
 * gives from cached attributes (AT_STATX_DONT_SYNC: FUSE then sends no request).
 */
static bool is_mount_point(const struct folder *f, dev_t dir_dev, ino_t d_ino)
{
	return f->mnt.st_ino != 0 && d_ino == f->mnt.st_ino && dir_dev == f->mnt.st_dev;
}

static bool on_own_mount(const struct folder *f, int dirfd, const char *name)
{
	struct statx sx;

	if (f->own_dev == 0 ||
	    statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, 0,
		  &sx) != 0)
		return false;
	return makedev(sx.stx_dev_major, sx.stx_dev_minor) == f->own_dev;
}

/* The stat of one entry, or false: vanished, or a path into this very mount. The mount point
 * is the empty directory it covers (its attributes as they were before mounting). */
static bool entry_stat(const struct folder *f, int dirfd, dev_t dir_dev, const struct dirent *de,
		       struct stat *st, bool *self)
{
	*self = is_mount_point(f, dir_dev, de->d_ino);
	if (*self) {
		*st = f->mnt;
		return true;
	}
	if (on_own_mount(f, dirfd, de->d_name)) {
		errno = ENOENT; /* left out */
		return false;
	}
	return fstatat(dirfd, de->d_name, st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The entry of one name (not sniffed yet), or NULL: vanished or not shown, or *again when it
 * could not be read for want of memory or descriptors (then the listing is not to be kept). */
static struct fentry *entry_from(const struct folder *f, int dirfd, dev_t dir_dev, uint32_t parent,
				 const struct dirent *de, bool *again)
{
	const char *name = de->d_name;
	struct fentry *e;
	struct stat st;
	bool self;

	*again = false;
	if (!entry_stat(f, dirfd, dir_dev, de, &st, &self)) {
		*again = errno_transient(errno);
		return NULL;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return NULL; /* FIFOs, sockets, devices: left out */
	e = calloc(1, sizeof *e);
	*again = !e;
	if (!e)
		return NULL;
	e->parent = parent;
	e->st = st;
	e->name = strdup(name);
	e->type = S_ISDIR(st.st_mode) ? FE_DIR : S_ISLNK(st.st_mode) ? FE_LINK : FE_FILE;
	e->listed = self; /* the mount point: empty, never read */
	if (e->type == FE_LINK) {
		char target[4096];
		ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);

		target[n > 0 ? n : 0] = '\0';
		e->link = strdup(target);
	}
	if (!e->name || (e->type == FE_LINK && !e->link))
		*again = true;
	if (*again) {
		entry_free(e);
		return NULL;
	}
	return e;
}

static enum rc add_kid(struct fentry *dir, uint32_t slot, size_t *cap)
{
	uint32_t *v = xgrow_n(dir->kids, dir->n_kids, cap, sizeof *v, 32);

	if (!v)
		return RC_NOMEM;
	dir->kids = v;
	dir->kids[dir->n_kids++] = slot;
	return RC_OK;
}

/* Forget what a listing that is not kept added (its entries were never handed out). */
static void unlist(struct folder *f, struct fentry *dir)
{
	for (size_t i = 0; i < dir->n_kids; i++) {
		struct fentry *e = entry_find(f, dir->kids[i]);

		entry_remove(f, dir->kids[i]);
		if (e)
			entry_free(e);
	}
	free(dir->kids);
	dir->kids = NULL;
	dir->n_kids = 0;
}

/* Entries read from a folder, not yet in the table. */
struct pending {
	struct fentry **v;
	size_t n, cap;
};

static bool pending_add(struct pending *p, struct fentry *e)
{
	struct fentry **v = xgrow_n(p->v, p->n, &p->cap, sizeof *v, 64);

	if (!v)
		return false;
	p->v = v;
	p->v[p->n++] = e;
	return true;
}

/* Entries from index `from` on (those not handed to the table). */
static void pending_free(struct pending *p, size_t from)
{
	for (size_t i = from; i < p->n; i++)
		entry_free(p->v[i]);
	free(p->v);
}

/* Names and stats of a folder's entries, each file's first page asked for on the way, then
 * their sniffs; false: for want of memory or descriptors (nothing to keep). */
static bool gather(const struct tree *t, DIR *d, uint32_t parent, struct pending *p)
{
	const struct folder *f = t->fold;
	struct dirent *de;
	struct stat dst;
	bool again = false;

	if (fstat(dirfd(d), &dst) != 0)
		return false;
	while (!again && (de = readdir(d))) {
		struct fentry *e;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		e = entry_from(f, dirfd(d), dst.st_dev, parent, de, &again);
		if (e && !pending_add(p, e)) {
			entry_free(e);
			again = true;
		}
		/* Unless its name decides, its first page comes in while the rest of the
		 * folder is read. */
		if (e && !again) {
			e->named = classify_by_name(t, e);
			/* An asset this daemon may not read opens as broken (see denied). */
			if (e->named && e->asset &&
			    faccessat(dirfd(d), e->name, R_OK, AT_EACCESS) != 0)
				e->denied = errno == EACCES || errno == EPERM;
			sniff_hint(dirfd(d), e);
		}
	}
	return !again && sniff_all(dirfd(d), p->v, p->n, f->assets_files);
}

/* The entries read join the table as dir's children (under f->mu). Out of memory: nothing. */
static enum rc publish(struct folder *f, struct fentry *dir, struct pending *pp)
{
	struct pending p = *pp;
	size_t cap = 0, i;

	for (i = 0; i < p.n; i++) {
		struct fentry *e = p.v[i];

		e->slot = slot_for(f, &e->st);
		if (e->slot == 0 || add_kid(dir, e->slot, &cap) != RC_OK)
			break;
		if (!entry_insert(f, e)) {
			dir->n_kids--;
			break;
		}
	}
	if (i < p.n) { /* out of memory: forget the inserted ones, free the rest */
		unlist(f, dir);
		pending_free(&p, i);
		return RC_NOMEM;
	}
	/* The entries are permanent: the cache is charged for them (read_folder). */
	for (i = 0; i < p.n; i++)
		f->uncharged += entry_heap(p.v[i]);
	f->uncharged += cache_heap_cost(cap * sizeof *dir->kids);
	pending_free(&p, p.n);
	dir->listed = true; /* even a partial read is the snapshot from now on */
	return RC_OK;
}

/*
 * Read a source folder once: its entries join the table. The folder is read without f->mu
 * (no lock is ever held across a read of the source tree: other requests go on meanwhile),
 * then published under it; when two threads read the same folder at once, the first to
 * publish makes the snapshot and the other's reading is dropped. Running out of memory or
 * descriptors keeps nothing, so the next visit reads the folder again; any other failure
 * keeps what was read as the snapshot (a folder that fails half-way stays half).
 */
static enum rc read_folder(struct tree *t, struct fentry *dir)
{
	struct folder *f = t->fold;
	struct pending p = {0};
	enum rc r = RC_OK;
	size_t charge, half;
	DIR *d;
	int fd = open_dir_of(f, dir->slot);

	if (fd < 0 || !(d = fdopendir(fd))) {
		r = errno_transient(errno) ? rc_transient(errno) : RC_IO;
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (!gather(t, d, dir->slot, &p)) {
		r = rc_transient(errno);
		closedir(d);
		pending_free(&p, 0);
		return r;
	}
	closedir(d);
	/* The entries are charged up to half the budget: a folder of more files than a small
	 * budget holds still leaves room to keep its assets open and its listings. */
	half = cache_get_stats(t->cache).budget / 2;
	pthread_mutex_lock(&f->mu);
	if (dir->listed)
		pending_free(&p, 0);
	else
		r = publish(f, dir, &p);
	charge = f->charged < half ? f->uncharged : 0;
	charge = charge < half - f->charged ? charge : half - f->charged;
	f->charged += charge;
	f->uncharged = 0;
	pthread_mutex_unlock(&f->mu);
	/* Outside f->mu: charging may evict, and evicting an asset takes f->amu. */
	if (charge)
		cache_charge(t->cache, charge);
	return r;
}

static struct cache_key asset_ckey(uint32_t slot)
{
	return cache_key((uint64_t)slot << 32, KEY_WHAT(KEY_ASSET, 0));
}

/* ---- archives (arcdir.c) ---- */

/* The archive whose nodes use slot, and the node (under f->mu); NULL if none. */
static struct arcdir *reg_find(const struct folder *f, uint32_t slot, uint32_t *node)
{
	size_t lo = 0, hi = f->n_regs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (slot < f->regs[mid].base) {
			hi = mid;
		} else if (slot >= f->regs[mid].end) {
			lo = mid + 1;
		} else {
			*node = slot - f->regs[mid].base;
			return f->regs[mid].ad;
		}
	}
	return NULL;
}

enum rc folder_arc_adopt(struct tree *t, struct arcdir *ad)
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

enum rc folder_arc_register(struct tree *t, struct arcdir *ad)
{
	struct folder *f = t->fold;
	uint32_t span = arcdir_span(ad);
	struct arcreg *v;
	enum rc r = RC_OK;

	pthread_mutex_lock(&f->mu);
	/* Slots base + 1 ... base + span - 1 (node 0 is shown by its owner's slot). */
	if (f->next_seq >= UINT32_MAX - 1 - span)
		r = RC_NOMEM;
	else if (!(v = xgrow_n(f->regs, f->n_regs, &f->cap_regs, sizeof *v, 8)))
		r = RC_NOMEM;
	if (r == RC_OK) {
		f->regs = v;
		f->regs[f->n_regs++] = (struct arcreg){f->next_seq, f->next_seq + span, ad};
		arcdir_set_base(ad, f->next_seq);
		f->next_seq += span;
	}
	pthread_mutex_unlock(&f->mu);
	return r;
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

/* A slot an archive shows: its file in the folder (node 0 of e->arc, NULL until opened) or one
 * of its nodes. False for any other slot. */
struct aref {
	struct arcdir *ad;
	uint32_t node;
	struct fentry *fe; /* the archive's own file, when the slot is that */
};

static bool arc_ref(struct folder *f, uint32_t slot, struct aref *a)
{
	struct fentry *e;
	bool is;

	memset(a, 0, sizeof *a);
	pthread_mutex_lock(&f->mu);
	e = entry_find(f, slot);
	if (e) {
		is = e->archive;
		a->fe = is ? e : NULL;
		a->ad = is ? e->arc : NULL;
	} else {
		a->ad = reg_find(f, slot, &a->node);
		is = a->ad != NULL;
	}
	pthread_mutex_unlock(&f->mu);
	return is;
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
static int open_toc(int dfd, const char *name, int fd)
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
static enum rc open_archive(struct tree *t, struct fentry *e)
{
	struct folder *f = t->fold;
	struct arcdir *ad = NULL;
	enum rc r = RC_OK;
	char why[256];

	pthread_mutex_lock(&f->omu);
	if (!e->arc) {
		int dfd = open_dir_of(f, e->parent), fd = -1, toc = -1;

		if (dfd < 0 && errno_transient(errno)) {
			r = rc_transient(errno);
			pthread_mutex_unlock(&f->omu);
			return r;
		}
		if (dfd >= 0) {
			fd = openat(dfd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (fd < 0 && errno_transient(errno)) {
				r = rc_transient(errno);
				close(dfd);
				pthread_mutex_unlock(&f->omu);
				return r;
			}
			toc = open_toc(dfd, e->name, fd);
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
				folder_arc_used(t, e->slot, ad); /* its descriptor counts */
		}
	}
	pthread_mutex_unlock(&f->omu);
	return r;
}

/* The archive folder a slot shows (opening the archive, or a nested one, when needed). */
static enum rc arc_dir(struct tree *t, struct aref *a)
{
	enum rc r = RC_OK;

	if (a->fe && !a->ad) {
		r = open_archive(t, a->fe);
		if (r != RC_OK)
			return r;
		a->ad = a->fe->arc;
		a->node = 0;
	}
	if (arcdir_type(a->ad, a->node) == AN_ARCHIVE) {
		a->ad = arcdir_nested(a->ad, a->node, &r);
		a->node = 0;
		if (!a->ad)
			return r;
	}
	if (a->node == 0 && (r = arcdir_ensure(a->ad)) != RC_OK)
		return r;
	return arcdir_type(a->ad, a->node) == AN_DIR ? RC_OK : RC_NOTDIR;
}

static void arc_box_free(void *p)
{
	asset_close(p);
}

/* The asset of an archive's file or asset node, pinned in *pin. */
static struct asset *arc_asset_get(struct tree *t, struct aref *a, uint32_t slot,
				   struct cache_ent **pin, enum rc *r)
{
	struct asset *as = cache_get(t->cache, asset_ckey(slot), pin);

	if (as)
		return as;
	*r = arcdir_asset_open(a->ad, a->node, &as);
	if (*r != RC_OK)
		return NULL;
	as = cache_put(t->cache, asset_ckey(slot), as, atomic_load(&as->bytes), arc_box_free, pin);
	if (!as)
		*r = RC_NOMEM;
	else if (as->ent == NULL)
		as->ent = *pin;
	return as;
}

/* ---- requests from the tree core ---- */

static struct fentry *entry_get(struct tree *t, uint32_t slot)
{
	struct folder *f = t->fold;
	struct fentry *e;

	pthread_mutex_lock(&f->mu);
	e = entry_find(f, slot);
	pthread_mutex_unlock(&f->mu);
	return e; /* entries are never freed before the mount ends */
}

bool folder_slot_is_file(struct tree *t, uint32_t slot)
{
	struct aref a;

	if (t->fold->loose && loose_owns(t->fold->loose, slot))
		return !loose_is_dir(t->fold->loose, slot);

	if (arc_ref(t->fold, slot, &a)) {
		enum an_type ty = a.fe ? AN_ARCHIVE : arcdir_type(a.ad, a.node);

		return ty != AN_DIR && ty != AN_ARCHIVE;
	}
	struct fentry *e = entry_get(t, slot);

	return e && e->type == FE_FILE;
}

bool folder_slot_is_dir(struct tree *t, uint32_t slot)
{
	struct aref a;

	if (t->fold->loose && loose_owns(t->fold->loose, slot))
		return loose_is_dir(t->fold->loose, slot);

	if (arc_ref(t->fold, slot, &a)) {
		enum an_type ty = a.fe ? AN_ARCHIVE : arcdir_type(a.ad, a.node);

		return ty == AN_DIR || ty == AN_ARCHIVE;
	}
	struct fentry *e = entry_get(t, slot);

	return e && e->type == FE_DIR;
}

enum rc folder_getattr(struct tree *t, tree_ino ino, struct tree_stat *out)
{
	struct fentry *e = entry_get(t, ino_slot(ino));
	struct aref a;

	if (!e && t->fold->loose && loose_owns(t->fold->loose, ino_slot(ino)))
		return loose_getattr(t, t->fold->loose, ino_slot(ino), out);
	if (!e && arc_ref(t->fold, ino_slot(ino), &a))
		return arcdir_getattr(a.ad, a.node, out);
	if (!e)
		return RC_NOENT;
	/* Folders and assets report nlink 1 ("unknown"): counting subdirectories would mean
	 * reading below what was visited. */
	out->nlink = 1;
	out->uid = e->st.st_uid;
	out->gid = e->st.st_gid;
	out->atime = e->st.st_atim;
	out->mtime = e->st.st_mtim;
	/* The bits: tree_perm_* (tree_int.h). A folder keeps its own r and x; an asset (a file
	 * shown as a directory) is searchable wherever the file is readable, as in a single-file
	 * mount. */
	if (e->type == FE_DIR) {
		out->type = TT_DIR;
		out->perm = tree_perm_folder(e->st.st_mode);
	} else if (e->type == FE_FILE && e->asset) {
		out->type = TT_DIR;
		/* An asset this daemon may not read opens as broken: open to all, like its
		 * explanation (see asset_getattr). */
		out->perm = tree_perm_dir(e->denied ? 0444 : e->st.st_mode);
	} else if (e->type == FE_LINK) {
		out->type = TT_LINK;
		out->perm = 0777;
		out->size = strlen(e->link);
	} else {
		out->type = TT_FILE;
		out->perm = tree_perm_file(e->st.st_mode);
		out->size = (uint64_t)e->st.st_size;
	}
	return RC_OK;
}

enum rc folder_list(struct tree *t, tree_ino ino, struct tlist *out)
{
	struct folder *f = t->fold;
	struct fentry *dir;
	enum rc r = RC_OK;
	bool listed;

	struct aref a;

	if (f->loose && loose_owns(f->loose, ino_slot(ino)))
		return loose_list(t, f->loose, ino_slot(ino), out);
	if (arc_ref(f, ino_slot(ino), &a)) {
		r = arc_dir(t, &a);
		return r == RC_OK ? arcdir_list(a.ad, a.node, out) : r;
	}
	dir = entry_get(t, ino_slot(ino));
	if (!dir || dir->type != FE_DIR)
		return dir ? RC_NOTDIR : RC_NOENT;
	pthread_mutex_lock(&f->mu);
	listed = dir->listed;
	pthread_mutex_unlock(&f->mu);
	if (!listed)
		r = read_folder(t, dir); /* without the lock: it reads the source tree */
	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; r == RC_OK && i < dir->n_kids; i++) {
		struct fentry *e = entry_find(f, dir->kids[i]);
		uint8_t type = e->type == FE_LINK	       ? TT_LINK
			       : e->type == FE_DIR || e->asset ? TT_DIR
							       : TT_FILE;

		if (f->loose && loose_hides(f->loose, &e->st))
			continue; /* an archive the loose view unpacked */
		tlist_add_ino(out, (tree_ino)e->slot << 32 | 1, type, e->name);
	}
	pthread_mutex_unlock(&f->mu);
	if (r == RC_OK && f->loose)
		r = loose_merge(t, f->loose, dir->slot, out);
	return r;
}

enum rc folder_readlink(struct tree *t, tree_ino ino, struct buf *out)
{
	struct fentry *e = entry_get(t, ino_slot(ino));

	if (!e)
		return RC_NOENT; /* an archive's nodes are never links */
	if (e->type != FE_LINK)
		return RC_INVAL;
	buf_puts(out, e->link);
	return RC_OK;
}

/* The path of a folder entry from DIR ("data/x/y.psg"). */
static bool fentry_path(struct tree *t, uint32_t slot, char *out, size_t n)
{
	const char **chain = NULL;
	ssize_t depth = chain_of(t->fold, slot, &chain);
	size_t at = 0;
	bool ok = depth > 0;

	while (ok && depth--) { /* chain[0] is the entry itself, the last its top folder */
		size_t len = strlen(chain[depth]);

		ok = at + len + 2 <= n;
		if (ok) {
			memcpy(out + at, chain[depth], len);
			at += len;
			out[at++] = depth ? '/' : '\0';
		}
	}
	free(chain);
	return ok;
}

bool folder_slot_relpath(struct tree *t, uint32_t slot, char *out, size_t n)
{
	struct aref a;

	/* An archive's entry: its path inside the archive (what unpacking tools write). */
	if (arc_ref(t->fold, slot, &a) && !a.fe)
		return arcdir_relpath(a.ad, a.node, out, n);
	return fentry_path(t, slot, out, n);
}

bool folder_slot_mountpath(struct tree *t, uint32_t slot, char *out, size_t n)
{
	uint32_t owner;
	struct aref a;
	size_t k = 0;

	if (!arc_ref(t->fold, slot, &a) || a.fe)
		return slot == 0 ? (n > 0 && (out[0] = '\0', true)) : fentry_path(t, slot, out, n);
	/* An archive's node: the path of what shows the archive, then its path inside. */
	owner = arcdir_slot(a.ad, 0);
	if (owner != 0) {
		if (!folder_slot_mountpath(t, owner, out, n))
			return false;
		k = strlen(out);
		if (k + 2 > n)
			return false;
		out[k++] = '/';
	}
	return arcdir_relpath(a.ad, a.node, out + k, n - k);
}

bool folder_entry_name(struct tree *t, uint32_t slot, uint32_t *parent, const char **name)
{
	struct aref a;

	if (arc_ref(t->fold, slot, &a) && !a.fe)
		return arcdir_entry_name(a.ad, a.node, parent, name);

	struct fentry *e = entry_get(t, slot);

	if (!e || slot == 0)
		return false;
	*parent = e->parent;
	*name = e->name;
	return true;
}

uint32_t folder_sibling(struct tree *t, uint32_t slot, const char *name)
{
	struct folder *f = t->fold;
	struct fentry *e, *dir;
	uint32_t found = 0;
	struct aref a;

	if (arc_ref(f, slot, &a) && !a.fe)
		return arcdir_sibling(a.ad, a.node, name);
	pthread_mutex_lock(&f->mu);
	e = entry_find(f, slot);
	dir = e ? entry_find(f, e->parent) : NULL;
	for (int pass = 0; dir && pass < 2 && !found; pass++) {
		for (size_t i = 0; i < dir->n_kids && !found; i++) {
			struct fentry *k = entry_find(f, dir->kids[i]);

			if (k->type == FE_FILE &&
			    (pass ? strcasecmp(k->name, name) == 0 : strcmp(k->name, name) == 0))
				found = k->slot;
		}
	}
	pthread_mutex_unlock(&f->mu);
	return found;
}

size_t folder_siblings(struct tree *t, uint32_t slot, uint32_t **out)
{
	struct folder *f = t->fold;
	struct fentry *e, *dir;
	uint32_t *v = NULL;
	size_t n = 0;

	pthread_mutex_lock(&f->mu);
	e = entry_find(f, slot);
	dir = e ? entry_find(f, e->parent) : NULL;
	if (dir && dir->n_kids && (v = xcalloc_n(dir->n_kids, sizeof *v)))
		for (size_t i = 0; i < dir->n_kids; i++) {
			struct fentry *k = entry_find(f, dir->kids[i]);

			if (k->type == FE_FILE && k->slot != slot)
				v[n++] = k->slot;
		}
	pthread_mutex_unlock(&f->mu);
	*out = v;
	return n;
}

/* ---- per-texture arenas by name (guid_index.h) ---- */

/* Directories already walked, by identity: a bind mount inside DIR cannot loop the walk. */
struct seen {
	struct {
		dev_t dev;
		ino_t ino;
	} * v;
	size_t n, cap; /* cap: a power of two, 0 before the first */
};

static size_t seen_hash(dev_t dev, ino_t ino, size_t cap)
{
	return (size_t)(((uint64_t)ino * 0x9e3779b97f4a7c15ull) ^ (uint64_t)dev) & (cap - 1);
}

/* True when (dev, ino) is new (and now recorded); false when seen or out of memory. */
static bool seen_add(struct seen *s, dev_t dev, ino_t ino)
{
	size_t h;

	if (2 * (s->n + 1) > s->cap) {
		struct seen old = *s;
		size_t cap = old.cap ? old.cap * 2 : 64;

		s->v = calloc(cap, sizeof *s->v);
		if (!s->v) {
			*s = old;
			return false;
		}
		s->cap = cap;
		s->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.v[i].ino)
				seen_add(s, old.v[i].dev, old.v[i].ino);
		free(old.v);
	}
	for (h = seen_hash(dev, ino ? ino : 1, s->cap); s->v[h].ino; h = (h + 1) & (s->cap - 1))
		if (s->v[h].dev == dev && s->v[h].ino == (ino ? ino : 1))
			return false;
	s->v[h].dev = dev;
	s->v[h].ino = ino ? ino : 1;
	s->n++;
	return true;
}

/* Open the folder at `rel` ("" = the root) one component at a time, links never followed. */
static int open_rel(struct folder *f, const char *rel)
{
	int fd = openat(f->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *p = rel;

	while (fd >= 0 && *p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		char name[NAME_MAX + 1];
		int next = -1;

		if (len <= NAME_MAX) {
			memcpy(name, p, len);
			name[len] = '\0';
			next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		close(fd);
		fd = next;
		p += len + (slash != NULL);
	}
	return fd;
}

/* A pending folder of the walk: its path inside the mount ("" = the root). */
struct walk {
	char **v;
	size_t n, cap;
};

static bool walk_push(struct walk *w, const char *dir, const char *name)
{
	char **v = xgrow_n(w->v, w->n, &w->cap, sizeof *v, 64);
	char *p = NULL;

	if (!v)
		return false;
	w->v = v;
	if (asprintf(&p, "%s%s%s", dir, *dir ? "/" : "", name) < 0)
		return false;
	w->v[w->n++] = p;
	return true;
}

/* One folder: GUID-named files fed to ix (when not NULL), files named like an arena pushed on
 * arenas (when not NULL), subfolders pushed. Names only: no file is opened. */
static void walk_one(struct folder *f, const char *rel, struct walk *w, struct seen *seen,
		     struct guid_index *ix, struct walk *arcs, struct walk *arenas)
{
	int fd = open_rel(f, rel);
	struct stat dst;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	if (fstat(fd, &dst) != 0 || !seen_add(seen, dst.st_dev, dst.st_ino) ||
	    !(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		unsigned char type = de->d_type;
		uint64_t guid;
		struct stat st;
		bool is_guid = guid_index_name(de->d_name, &guid);

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    is_mount_point(f, dst.st_dev, de->d_ino))
			continue;
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
		}
		if (type == DT_DIR && !on_own_mount(f, dirfd(d), de->d_name)) {
			walk_push(w, rel, de->d_name);
		} else if (type == DT_REG && arenas && fmt_name_is(de->d_name, FMT_PSG)) {
			walk_push(arenas, rel, de->d_name);
		} else if (type == DT_REG && is_guid && ix) {
			char *p = NULL;

			if (asprintf(&p, "%s%s%s", rel, *rel ? "/" : "", de->d_name) >= 0)
				guid_index_feed(ix, p, 0);
			free(p);
		} else if (type == DT_REG && fmt_by_name(de->d_name, FMT_ARCHIVE)) {
			walk_push(arcs, rel, de->d_name); /* its entries: fed once it is built */
		}
	}
	closedir(d);
}

/* The build of the mount's GUID index: every source folder below DIR read by name (as the
 * folder layer would show them: links not followed, the mount point and paths into this
 * mount left out), each GUID-named regular file fed by its path. */
static void folder_guid_build(void *ctx, struct guid_index *ix)
{
	struct tree *t = ctx;
	struct folder *f = t->fold;
	struct walk w = {0}, arcs = {0};
	struct seen seen = {0};

	/* A single archive's mount: its entries are all there is (fed by arcdir_ensure). */
	if (f->root.archive) {
		if (f->root.arc)
			arcdir_ensure(f->root.arc);
		return;
	}
	if (!walk_push(&w, "", ""))
		return;
	while (w.n) {
		char *rel = w.v[--w.n];

		walk_one(f, rel, &w, &seen, ix, &arcs, NULL);
		free(rel);
	}
	/* Archives by name (.big, .psf, .xsf): their tables read, their entries fed. */
	while (arcs.n) {
		char *rel = arcs.v[--arcs.n];
		uint32_t slot = folder_slot_at(t, rel);
		struct fentry *e = slot ? entry_get(t, slot) : NULL;

		if (e && e->archive && open_archive(t, e) == RC_OK && e->arc)
			arcdir_ensure(e->arc);
		free(rel);
	}
	free(arcs.v);
	free(w.v);
	free(seen.v);
}

struct guid_index *folder_guid_index(struct tree *t)
{
	return t->fold ? t->fold->gix : NULL;
}

/* ---- texture arenas by their TableOfContents (docs/skate-objects.md) ---- */

/* Bounds of the build: bytes read per arena (header, dictionary, TOC; never texel data),
 * bytes read in all (the build runs inside one FUSE request: a mount of thousands of arenas
 * must not read gigabytes there), texture GUIDs kept per arena, arenas read, and the index's
 * memory (its entries and their paths, charged to the cache budget): at most 8 MiB, about
 * 100,000 entries. Past a bound the rest is left out; a GUID found only there does not link.
 * Stopping at the read budget or the arena count marks the index partial (material.txt says
 * so for a GUID it did not find). */
#define TOC_SCAN_BYTES	(1u << 20)
#define TOC_SCAN_TOTAL	(256ull << 20)
#define TOC_SCAN_GUIDS	4096u
#define TOC_SCAN_ARENAS 8192u
#define TOC_INDEX_BYTES (8u << 20)

struct toc_build {
	struct tree *t;
	struct guid_index *ix;
	size_t arenas, bytes;
	uint64_t read; /* bytes read from arenas so far, against folder_toc_budget */
};

_Atomic uint64_t folder_toc_budget = TOC_SCAN_TOTAL;

/* Reads through to the arena, counting what they take against the build's total. */
struct toc_counted {
	const struct src *s;
	uint64_t *read;
};

static enum rc toc_counted_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct toc_counted *c = ctx;

	*c->read += n;
	return src_read(c->s, off, dst, n);
}

/* One arena's texture GUIDs fed under its path (slot: 0 when not known yet). */
static void toc_feed(struct toc_build *b, const char *path, uint32_t slot, const struct src *s)
{
	uint64_t *g;
	size_t n,
	    each = sizeof(uint64_t) + 2 * sizeof(uint32_t) + sizeof(char *) + strlen(path) + 1;

	struct toc_counted c = {s, &b->read};
	struct src cs = {toc_counted_read, &c, s->size};
	uint64_t total = atomic_load(&folder_toc_budget);
	uint64_t left = total - (b->read < total ? b->read : total);
	enum rc r;

	if (b->arenas >= TOC_SCAN_ARENAS || !left) {
		guid_index_set_partial(b->ix);
		return;
	}
	b->arenas++;
	r = skate_toc_texture_guids(&cs, left < TOC_SCAN_BYTES ? left : TOC_SCAN_BYTES,
				    TOC_SCAN_GUIDS, &g, &n);
	if (r == RC_TOOBIG && left < TOC_SCAN_BYTES) { /* the budget, not the arena: stop */
		b->read = total;
		guid_index_set_partial(b->ix);
	}
	if (r != RC_OK)
		return;
	for (size_t k = 0; k < n && b->bytes + each <= TOC_INDEX_BYTES; k++)
		if (guid_index_feed_guid(b->ix, path, g[k], slot) == RC_OK)
			b->bytes += each;
	free(g);
}

static void toc_feed_file(struct toc_build *b, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	char *dir = slash ? strndup(rel, (size_t)(slash - rel)) : strdup("");
	int dfd = dir ? open_rel(b->t->fold, dir) : -1;
	int fd = dfd >= 0 ? openat(dfd, slash ? slash + 1 : rel,
				   O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
			  : -1;
	struct stat st;
	struct src s;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		src_init_fd(&s, &fd, (uint64_t)st.st_size);
		toc_feed(b, rel, 0, &s);
	}
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(dir);
}

static void toc_feed_entry(void *ctx, const char *path, uint32_t slot, const struct src *s)
{
	toc_feed(ctx, path, slot, s);
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void toc_feed_archive(struct toc_build *b, struct fentry *e)
{
	if (e && e->archive && open_archive(b->t, e) == RC_OK && e->arc &&
	    arcdir_ensure(e->arc) == RC_OK)
		arcdir_each_arena(e->arc, toc_feed_entry, b);
}

/* The build of the mount's TOC index: every file named like an arena (.psg, .rx2) below DIR
 * found as the name index's walk finds files, in path order, and the arena entries of the
 * archives of the mount, each read for its texture GUIDs within the bounds above. */
static void folder_toc_build(void *ctx, struct guid_index *ix)
{
	struct tree *t = ctx;
	struct folder *f = t->fold;
	struct walk w = {0}, arcs = {0}, arenas = {0};
	struct seen seen = {0};
	struct toc_build b = {.t = t, .ix = ix};

	/* A single archive's mount: its entries are all there is (opened at mount). */
	if (f->root.archive) {
		if (f->root.arc && arcdir_ensure(f->root.arc) == RC_OK)
			arcdir_each_arena(f->root.arc, toc_feed_entry, &b);
		goto out;
	}
	if (!walk_push(&w, "", ""))
		return;
	while (w.n) {
		char *rel = w.v[--w.n];

		walk_one(f, rel, &w, &seen, NULL, &arcs, &arenas);
		free(rel);
	}
	if (arenas.n)
		qsort(arenas.v, arenas.n, sizeof *arenas.v, by_str);
	if (arcs.n)
		qsort(arcs.v, arcs.n, sizeof *arcs.v, by_str);
	for (size_t i = 0; i < arenas.n; i++) {
		toc_feed_file(&b, arenas.v[i]);
		free(arenas.v[i]);
	}
	for (size_t i = 0; i < arcs.n; i++) {
		uint32_t slot = folder_slot_at(t, arcs.v[i]);

		toc_feed_archive(&b, slot ? entry_get(t, slot) : NULL);
		free(arcs.v[i]);
	}
out:
	cache_charge(t->cache, b.bytes);
	free(arenas.v);
	free(arcs.v);
	free(w.v);
	free(seen.v);
}

struct guid_index *folder_toc_index(struct tree *t)
{
	return t->fold ? t->fold->tix : NULL;
}

uint32_t folder_slot_at(struct tree *t, const char *path)
{
	struct folder *f = t->fold;
	uint32_t slot = 0;
	const char *p = path;

	while (*p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		struct fentry *dir = entry_get(t, slot), *hit = NULL;
		bool listed;

		if (!dir || dir->type != FE_DIR)
			return 0;
		pthread_mutex_lock(&f->mu);
		listed = dir->listed;
		pthread_mutex_unlock(&f->mu);
		if (!listed && read_folder(t, dir) != RC_OK)
			return 0;
		pthread_mutex_lock(&f->mu);
		for (size_t i = 0; i < dir->n_kids && !hit; i++) {
			struct fentry *k = entry_find(f, dir->kids[i]);

			if (strlen(k->name) == len && memcmp(k->name, p, len) == 0)
				hit = k;
		}
		pthread_mutex_unlock(&f->mu);
		if (!hit)
			return 0;
		slot = hit->slot;
		p += len + (slash != NULL);
	}
	return slot;
}

/* ---- open assets ---- */

static void lru_unlink(struct folder *f, struct fentry *e)
{
	struct fentry *p = e->lru_prev ? entry_find(f, e->lru_prev) : NULL;
	struct fentry *n = e->lru_next ? entry_find(f, e->lru_next) : NULL;

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
	h = f->lru_head ? entry_find(f, f->lru_head) : NULL;
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
		struct fentry *e = entry_find(f, f->lru_tail);

		lru_unlink(f, e);
		if (e->archive) { /* an archive's descriptor (arcdir.c reopens it) */
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
 * used, reopened by their next read (arcdir.c fd_acquire). A folder of more archives than
 * descriptors allow (1,015 visited at ulimit -n 1024) made every later operation fail.
 */
void folder_arc_used(struct tree *t, uint32_t slot, struct arcdir *ad)
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
	e = entry_find(f, slot);
	pthread_mutex_unlock(&f->mu);
	if (!e || !e->archive || e->arc != ad)
		return;
	pthread_mutex_lock(&f->amu);
	/* Under amu nothing closes it (lru_trim holds amu): live stays live. The LRU walks the
	 * entry table, which read_folder grows under mu: mu too, as folder_asset_get takes it. */
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

int folder_arc_reopen(struct tree *t, uint32_t slot)
{
	struct folder *f = t->fold;
	struct fentry *e;
	int dfd, fd, err;

	if (f->loose && loose_arc_owns(f->loose, slot))
		return loose_arc_reopen(f->loose, slot);
	pthread_mutex_lock(&f->mu);
	e = entry_find(f, slot);
	pthread_mutex_unlock(&f->mu);
	if (!e) {
		errno = ENOENT;
		return -1;
	}
	dfd = open_dir_of(f, e->parent);
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

	return t->mods && e->asset && folder_slot_relpath(t, e->slot, rel, sizeof rel) &&
	       mods_open_asset(t, e->slot, e->name, rel, ASSET_LENIENT, out, fl, why, whylen);
}

static enum rc open_asset(struct tree *t, struct fentry *e, struct asset **out)
{
	int dfd;
	enum tree_open_fail fl;
	char why[256];

	if (open_modded(t, e, out, &fl, why, sizeof why))
		return fl == TREE_FAIL_NONE ? RC_OK : fl == TREE_FAIL_OTHER ? RC_NOMEM : RC_IO;
	dfd = open_dir_of(t->fold, e->parent);
	if (dfd < 0) {
		if (errno_transient(errno))
			return rc_transient(errno);
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
		return fl == TREE_FAIL_OTHER ? rc_transient(errno) : RC_IO;
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

struct asset *folder_asset_get(struct tree *t, uint32_t slot, struct cache_ent **pin, enum rc *r)
{
	struct folder *f = t->fold;
	struct fentry *e = entry_get(t, slot);
	struct asset_box *b;
	struct aref a;

	*pin = NULL;
	if (!e && f->loose && loose_owns(f->loose, slot))
		return loose_asset_get(t, f->loose, slot, pin, r);
	if (!e && arc_ref(f, slot, &a)) {
		if (arcdir_type(a.ad, a.node) == AN_DIR) {
			*r = RC_ISDIR;
			return NULL;
		}
		return arc_asset_get(t, &a, slot, pin, r);
	}
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

void folder_slot_reset(struct tree *t, uint32_t slot)
{
	struct folder *f = t->fold;
	struct fentry *e = entry_get(t, slot);
	struct aref a;

	if (!e && arc_ref(f, slot, &a)) {
		cache_drop(t->cache, asset_ckey(slot));
		return;
	}
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

/* ---- open and close ---- */

static struct folder *folder_new(struct tree *t, char *why, size_t whylen)
{
	struct folder *f = calloc(1, sizeof *f);

	if (!f) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&f->mu, NULL);
	pthread_mutex_init(&f->omu, NULL);
	pthread_mutex_init(&f->amu, NULL);
	f->n_buckets = 1024;
	f->tab = calloc(f->n_buckets, sizeof *f->tab);
	f->next_seq = SEQ_SLOT_FIRST;
	f->max_assets = t->opts.max_assets ? t->opts.max_assets : DEFAULT_MAX_ASSETS;
	f->assets_files = t->opts.assets_files;
	f->root.type = FE_DIR;
	f->root_fd = -1;
	t->fold = f;
	f->gix = guid_index_new(folder_guid_build, t);
	f->tix = guid_index_new(folder_toc_build, t);
	if (!f->tab || !f->gix || !f->tix) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	return f;
}

enum tree_open_fail folder_open(struct tree *t, const char *path, char *why, size_t whylen)
{
	struct folder *f = folder_new(t, why, whylen);

	if (!f)
		return TREE_FAIL_OTHER;
	f->root_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->root_fd < 0 || fstat(f->root_fd, &f->root.st) != 0) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		return TREE_FAIL_OPEN;
	}
	if (t->opts.layout_loose && !(f->loose = loose_open(t, f->root_fd, why, whylen)))
		return TREE_FAIL_OTHER;
	return TREE_FAIL_NONE;
}

enum tree_open_fail folder_open_archive(struct tree *t, const char *path, char *why, size_t whylen)
{
	struct folder *f = folder_new(t, why, whylen);
	const char *slash = strrchr(path, '/');
	char *dir = NULL;
	struct arcdir *ad;
	enum tree_open_fail fl;
	int fd, toc = -1;

	if (!f)
		return TREE_FAIL_OTHER;
	f->root.type = FE_FILE;
	f->root.asset = f->root.archive = true;
	f->root.name = strdup(slash ? slash + 1 : path);
	dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	if (!f->root.name || !dir) {
		free(dir);
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	f->root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &f->root.st) != 0) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return TREE_FAIL_OPEN;
	}
	if (f->root_fd >= 0)
		toc = open_toc(f->root_fd, f->root.name, fd);
	fl = arcdir_open_fd(t, fd, toc, &f->root.st, f->root.name, 0, &ad, why, whylen);
	f->root.arc = ad; /* adopted: freed with the mount */
	return fl;
}

void folder_close(struct folder *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->tab && i < f->n_buckets; i++) {
		struct fentry *e = f->tab[i], *next;

		for (; e; e = next) {
			next = e->hnext;
			entry_free(e);
		}
	}
	loose_free(f->loose);
	for (size_t i = 0; i < f->n_arcs; i++)
		arcdir_free(f->arcs[i]);
	free(f->arcs);
	free(f->regs);
	free(f->root.kids);
	free(f->root.name);
	free(f->tab);
	guid_index_free(f->gix);
	guid_index_free(f->tix);
	if (f->root_fd >= 0)
		close(f->root_fd);
	pthread_mutex_destroy(&f->mu);
	pthread_mutex_destroy(&f->omu);
	pthread_mutex_destroy(&f->amu);
	free(f);
}

void folder_set_mount(struct folder *f, const struct stat *mnt_before, dev_t own_dev)
{
	f->mnt = *mnt_before;
	f->own_dev = own_dev;
}

const struct stat *folder_root_stat(const struct folder *f)
{
	return &f->root.st;
}
