/*
 * Folder mounts (folder_int.h): a source folder read when first listed, each regular file
 * classified by its name and size, else by its first bytes (sniff).
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
bool fold_errno_transient(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM;
}

/* What a passing condition is told as: EMFILE for descriptors, ENOMEM for memory. */
enum rc fold_rc_transient(int e)
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
		if (fold_errno_transient(errno))
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
bool fold_is_mount_point(const struct folder *f, dev_t dir_dev, ino_t d_ino)
{
	return f->mnt.st_ino != 0 && d_ino == f->mnt.st_ino && dir_dev == f->mnt.st_dev;
}

bool fold_on_own_mount(const struct folder *f, int dirfd, const char *name)
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
	*self = fold_is_mount_point(f, dir_dev, de->d_ino);
	if (*self) {
		*st = f->mnt;
		return true;
	}
	if (fold_on_own_mount(f, dirfd, de->d_name)) {
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
		*again = fold_errno_transient(errno);
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
		fentry_free(e);
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
		struct fentry *e = fentry_find(f, dir->kids[i]);

		fentry_remove(f, dir->kids[i]);
		if (e)
			fentry_free(e);
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
		fentry_free(p->v[i]);
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
			fentry_free(e);
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

		e->slot = fold_slot_for(f, &e->st);
		if (e->slot == 0 || add_kid(dir, e->slot, &cap) != RC_OK)
			break;
		if (!fentry_insert(f, e)) {
			dir->n_kids--;
			break;
		}
	}
	if (i < p.n) { /* out of memory: forget the inserted ones, free the rest */
		unlist(f, dir);
		pending_free(&p, i);
		return RC_NOMEM;
	}
	/* The entries are permanent: the cache is charged for them (fold_read_folder). */
	for (i = 0; i < p.n; i++)
		f->uncharged += fentry_heap(p.v[i]);
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
enum rc fold_read_folder(struct tree *t, struct fentry *dir)
{
	struct folder *f = t->fold;
	struct pending p = {0};
	enum rc r = RC_OK;
	size_t charge, half;
	DIR *d;
	int fd = fold_open_dir_of(f, dir->slot);

	if (fd < 0 || !(d = fdopendir(fd))) {
		r = fold_errno_transient(errno) ? fold_rc_transient(errno) : RC_IO;
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (!gather(t, d, dir->slot, &p)) {
		r = fold_rc_transient(errno);
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
