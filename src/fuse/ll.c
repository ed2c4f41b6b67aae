/*
 * Thin libfuse3 low-level adapter. Every handler makes one tree call and replies exactly once;
 * enum rc -> errno mapping lives here and nowhere else. The filesystem is read-only and
 * immutable while mounted, so attributes and entries get long timeouts, open/opendir are
 * zero-message where the kernel supports it, and readdirplus answers lookups in bulk.
 */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fuse/ll.h"
#include "psgfs/tree/mods.h"

enum {
	OP_LOOKUP,
	OP_GETATTR,
	OP_OPEN,
	OP_READ,
	OP_RELEASE,
	OP_OPENDIR,
	OP_READDIR,
	OP_READDIRPLUS,
	OP_RELEASEDIR,
	OP_STATFS,
	OP_FORGET,
	OP_READLINK,
	OP_WRITE,
	OP_CREATE,
	OP_FLUSH,
	OP_SETATTR,
	OP_RENAME,
	OP_UNLINK,
	OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
    "lookup",  "getattr",     "open",	    "read",    "release", "opendir",
    "readdir", "readdirplus", "releasedir", "statfs",  "forget",  "readlink",
    "write",   "create",      "flush",	    "setattr", "rename",  "unlink",
};
static atomic_uint_fast64_t op_count[OP_COUNT];

static struct psgfs_ll *ll_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static int to_errno(enum rc r)
{
	switch (r) {
	case RC_OK:
		return 0;
	case RC_NOENT:
		return ENOENT;
	case RC_NOTDIR:
		return ENOTDIR;
	case RC_ISDIR:
		return EISDIR;
	case RC_NOMEM:
		return ENOMEM;
	case RC_INVAL:
		return EINVAL; /* also a picture texture mods refused: errors.txt says why */
	case RC_READONLY:
		return EROFS;
	case RC_NOSPACE:
		return ENOSPC;
	case RC_TOOBIG:
		return EFBIG;
	case RC_EXISTS:
		return EEXIST;
	case RC_DENIED:
		return EPERM; /* texture mods: a new texture, a picture's mode or times */
	case RC_NOFILES:
		return EMFILE;
	default:
		return EIO; /* a broken decoded view, or the source changed under us */
	}
}

static mode_t type_bits(enum tree_type t)
{
	return t == TT_DIR ? S_IFDIR : t == TT_LINK ? S_IFLNK : S_IFREG;
}

/* Permission bits follow the source (files never executable, directories searchable where
 * readable), less -o umask; owner and group are the source's. */
static void fill_stat(const struct psgfs_ll *ll, const struct tree_stat *ts, struct stat *st)
{
	bool dir = ts->type == TT_DIR;

	memset(st, 0, sizeof *st);
	st->st_ino = ts->ino;
	st->st_mode = type_bits(ts->type) | (ts->perm & ~ll->umask & 07777);
	st->st_nlink = ts->nlink;
	st->st_uid = ts->uid;
	st->st_gid = ts->gid;
	st->st_size = dir ? 0 : (off_t)ts->size;
	st->st_blksize = 4096;
	st->st_blocks = dir ? 0 : (blkcnt_t)((ts->size + 511) / 512);
	st->st_atim = ts->atime;
	st->st_mtim = ts->mtime;
	st->st_ctim = ts->mtime;
}

/* Texture mods change what a picture holds when it is written: its attributes are cached
 * for a second, and a temporary's name may go any time. */
#define MODS_TIMEOUT 1.0

static double attr_timeout(const struct psgfs_ll *ll, const struct tree_stat *ts)
{
	return ts->writable ? MODS_TIMEOUT : ll->timeout;
}

static void fill_entry(const struct psgfs_ll *ll, const struct tree_stat *ts,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof *e);
	e->ino = ts->ino;
	e->generation = 1;
	e->attr_timeout = attr_timeout(ll, ts);
	e->entry_timeout = attr_timeout(ll, ts);
	fill_stat(ll, ts, &e->attr);
}

static void ll_init(void *userdata, struct fuse_conn_info *conn)
{
	struct psgfs_ll *ll = userdata;

	/* Zero-message open and opendir: the kernel stops sending OPEN/OPENDIR (and their
	 * RELEASE) once we answer ENOSYS, and then treats every open as FOPEN_KEEP_CACHE and
	 * every opendir as FOPEN_CACHE_DIR, so cached listings and pages survive reopening. */
	/* Not with texture mods: writers are told apart by their open. */
	ll->no_open = !ll->mods && (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) != 0;
	if (ll->no_open)
		conn->want |= FUSE_CAP_NO_OPEN_SUPPORT;
	ll->no_opendir = (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) != 0;
	if (ll->no_opendir)
		conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	/* Always plus: every listing is followed by stats in the tools our users run. */
	conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct psgfs_ll *ll = ll_of(req);
	struct fuse_entry_param e;
	struct tree_stat ts;
	enum rc r;

	atomic_fetch_add(&op_count[OP_LOOKUP], 1);
	r = tree_lookup(ll->tree, parent, name, &ts);
	if (r == RC_NOENT) {
		/* A negative entry with a long timeout: the tree never changes while mounted. */
		memset(&e, 0, sizeof e);
		e.entry_timeout = ll->timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return;
	}
	fill_entry(ll, &ts, &e);
	fuse_reply_entry(req, &e);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	(void)ino;
	(void)nlookup;
	atomic_fetch_add(&op_count[OP_FORGET], 1);
	fuse_reply_none(req); /* structural inodes: nothing to forget */
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	(void)count;
	(void)forgets;
	atomic_fetch_add(&op_count[OP_FORGET], 1);
	fuse_reply_none(req);
}

/* The handle of a file opened uncached that has no mods file (ll_open): never a pointer. */
#define FH_UNCACHED ((uint64_t)1)

static struct tree_mods_file *mods_fh(const struct fuse_file_info *fi)
{
	return fi && fi->fh != FH_UNCACHED ? (struct tree_mods_file *)(uintptr_t)fi->fh : NULL;
}

static void reply_attr(fuse_req_t req, enum rc r, const struct tree_stat *ts)
{
	struct stat st;

	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return;
	}
	fill_stat(ll_of(req), ts, &st);
	fuse_reply_attr(req, &st, attr_timeout(ll_of(req), ts));
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct psgfs_ll *ll = ll_of(req);
	struct tree_stat ts;
	enum rc r;

	atomic_fetch_add(&op_count[OP_GETATTR], 1);
	if (mods_fh(fi))
		r = tree_mods_fgetattr(mods_fh(fi), &ts);
	else
		r = tree_getattr(ll->tree, ino, &ts);
	reply_attr(req, r, &ts);
}

/* Texture mods: a writer gets its handle; writes bypass the page cache, so nothing of an
 * unfinished picture reaches other readers. */
static void open_writer(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tree_mods_file *f;
	enum rc r = tree_mods_open(ll_of(req)->tree, ino, (fi->flags & O_TRUNC) != 0, &f);

	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return;
	}
	fi->fh = (uintptr_t)f;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	if (fuse_reply_open(req, fi) != 0)
		tree_mods_release(f);
}

/* Texture mods: a reader of a picture reads the content it opened (or EIO), never a part of
 * a later one; true when it replied. */
static bool open_reader(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tree_mods_file *f;
	bool direct;
	enum rc r = tree_mods_open_reader(ll_of(req)->tree, ino, &f, &direct);

	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return true;
	}
	if (!f)
		return false;
	fi->fh = (uintptr_t)f;
	fi->direct_io = direct;
	if (fuse_reply_open(req, fi) != 0)
		tree_mods_release(f);
	return true;
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct psgfs_ll *ll = ll_of(req);
	struct tree_stat ts;
	bool known;

	atomic_fetch_add(&op_count[OP_OPEN], 1);
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
		if (ll->mods)
			open_writer(req, ino, fi);
		else
			fuse_reply_err(req, EROFS);
		return;
	}
	if (ll->no_open) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	/* Kernels without zero-message open still get cache-friendly opens; a picture that can
	 * be written drops its cached pages at every open. */
	known = ll->mods ? tree_getattr(ll->tree, ino, &ts) == RC_OK
			 : tree_getattr_known(ll->tree, ino, &ts); /* renders nothing */
	fi->keep_cache = !(ll->mods && known && ts.writable);
	fi->noflush = 1;
	/* A file whose bytes end before its size (a lying archive entry): read uncached, since the
	 * kernel takes a short read into its page cache as the end of the file; uncached, the
	 * reader gets the bytes and then the EIO of a read past them */
	if (known && ts.short_known) {
		fi->direct_io = 1;
		fi->keep_cache = 0;
		fi->fh = FH_UNCACHED;
		fuse_reply_open(req, fi);
		return;
	}
	if (!fi->keep_cache && open_reader(req, ino, fi))
		return;
	fuse_reply_open(req, fi);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct psgfs_ll *ll = ll_of(req);
	struct iovec iov[TREE_RDV_MAX];
	struct tree_rdv v;
	enum rc r;

	atomic_fetch_add(&op_count[OP_READ], 1);
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (mods_fh(fi) && !tree_mods_is_reader(mods_fh(fi))) { /* a writer reads its own */
		char *buf = malloc(size ? size : 1);
		size_t got = 0;

		r = buf ? tree_mods_read(mods_fh(fi), (uint64_t)off, size, buf, &got) : RC_NOMEM;
		if (r == RC_OK)
			fuse_reply_buf(req, buf, got);
		else
			fuse_reply_err(req, to_errno(r));
		free(buf);
		return;
	}
	if (mods_fh(fi))
		r = tree_mods_read_view(mods_fh(fi), (uint64_t)off, size, &v);
	else
		r = tree_read_begin(ll->tree, ino, (uint64_t)off, size, &v);
	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return;
	}
	/* The cached pieces go to the kernel as they are: one copy, the kernel's. */
	for (unsigned i = 0; i < v.n; i++) {
		iov[i].iov_base = (void *)v.base[i];
		iov[i].iov_len = v.len[i];
	}
	fuse_reply_iov(req, iov, (int)v.n);
	tree_read_end(&v);
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct psgfs_ll *ll = ll_of(req);
	char *target;
	enum rc r;

	atomic_fetch_add(&op_count[OP_READLINK], 1);
	r = tree_readlink(ll->tree, ino, &target);
	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return;
	}
	fuse_reply_readlink(req, target);
	free(target);
}

static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	atomic_fetch_add(&op_count[OP_RELEASE], 1);
	tree_mods_release(mods_fh(fi));
	fuse_reply_err(req, 0);
}

/* ---- texture mods: writes ---- */

static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	enum rc r;

	(void)ino;
	atomic_fetch_add(&op_count[OP_WRITE], 1);
	if (!mods_fh(fi) || off < 0) {
		fuse_reply_err(req, mods_fh(fi) ? EINVAL : EROFS);
		return;
	}
	r = tree_mods_write(mods_fh(fi), (uint64_t)off, buf, size);
	if (r == RC_OK)
		fuse_reply_write(req, size);
	else
		fuse_reply_err(req, to_errno(r));
}

/* Each close: a picture written since the last one is checked and written to OUTDIR here, so
 * close(2) reports a refused picture (EINVAL). */
static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	atomic_fetch_add(&op_count[OP_FLUSH], 1);
	/* Without texture mods nothing is ever written: ENOSYS makes the kernel stop sending
	 * FLUSH, which zero-message open would otherwise cost on every close (one round trip
	 * per file of a warm `cat`, where squashfuse_ll has none). */
	if (!ll_of(req)->mods) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fuse_reply_err(req, mods_fh(fi) ? to_errno(tree_mods_flush(mods_fh(fi))) : 0);
}

/* The bytes live in the daemon until the picture is complete: nothing to sync yet. */
static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, 0);
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Mode, owner, times: only what would change what is served is asked of the tree (a chmod to
 * the mode shown is no change, and succeeds). */
static enum rc mods_setattr(struct psgfs_ll *ll, fuse_ino_t ino, const struct stat *attr,
			    int to_set, struct tree_stat *ts)
{
	struct tree_stat want = {0};
	struct timespec now;
	struct stat cur;
	unsigned what = 0;
	enum rc r = tree_getattr(ll->tree, ino, ts);

	if (r != RC_OK)
		return r;
	fill_stat(ll, ts, &cur);
	clock_gettime(CLOCK_REALTIME, &now);
	want.perm = attr->st_mode & 07777;
	want.uid = attr->st_uid;
	want.gid = attr->st_gid;
	want.atime = to_set & FUSE_SET_ATTR_ATIME_NOW ? now : attr->st_atim;
	want.mtime = to_set & FUSE_SET_ATTR_MTIME_NOW ? now : attr->st_mtim;
	if ((to_set & FUSE_SET_ATTR_MODE) && want.perm != (cur.st_mode & 07777))
		what |= TREE_SET_MODE;
	if ((to_set & FUSE_SET_ATTR_UID) && want.uid != cur.st_uid)
		what |= TREE_SET_UID;
	if ((to_set & FUSE_SET_ATTR_GID) && want.gid != cur.st_gid)
		what |= TREE_SET_GID;
	if ((to_set & FUSE_SET_ATTR_ATIME) && !same_time(want.atime, cur.st_atim))
		what |= TREE_SET_ATIME;
	if ((to_set & FUSE_SET_ATTR_MTIME) && !same_time(want.mtime, cur.st_mtim))
		what |= TREE_SET_MTIME;
	return tree_mods_setattr(ll->tree, ino, what, &want, ts);
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct psgfs_ll *ll = ll_of(req);
	struct tree_stat ts;
	enum rc r;

	atomic_fetch_add(&op_count[OP_SETATTR], 1);
	if (!ll->mods)
		r = RC_READONLY;
	else if (to_set & FUSE_SET_ATTR_SIZE)
		r = tree_mods_truncate(ll->tree, ino, mods_fh(fi), (uint64_t)attr->st_size, &ts);
	else
		r = mods_setattr(ll, ino, attr, to_set, &ts);
	reply_attr(req, r, &ts);
}

static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct psgfs_ll *ll = ll_of(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct fuse_entry_param e;
	struct tree_mods_file *f;
	struct tree_stat ts;
	enum rc r;

	(void)mode;
	atomic_fetch_add(&op_count[OP_CREATE], 1);
	r = ll->mods ? tree_mods_create(ll->tree, parent, name, (fi->flags & O_EXCL) != 0,
					(fi->flags & O_TRUNC) != 0, ctx->uid, ctx->gid, &ts, &f)
		     : RC_READONLY;
	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return;
	}
	fill_entry(ll, &ts, &e);
	fi->fh = (uintptr_t)f;
	fi->direct_io = 1;
	if (fuse_reply_create(req, &e, fi) != 0)
		tree_mods_release(f);
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct psgfs_ll *ll = ll_of(req);

	atomic_fetch_add(&op_count[OP_RENAME], 1);
	fuse_reply_err(req, ll->mods ? to_errno(tree_mods_rename(ll->tree, parent, name, newparent,
								 newname, flags))
				     : EROFS);
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct psgfs_ll *ll = ll_of(req);

	atomic_fetch_add(&op_count[OP_UNLINK], 1);
	fuse_reply_err(req, ll->mods ? to_errno(tree_mods_unlink(ll->tree, parent, name)) : EROFS);
}

/* Everything else that writes (reached only with texture mods: the mount is not read-only). */
static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	fuse_reply_err(req, EROFS);
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent, (void)name;
	fuse_reply_err(req, EROFS);
}

static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link, (void)parent, (void)name;
	fuse_reply_err(req, EROFS);
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino, (void)newparent, (void)newname;
	fuse_reply_err(req, EROFS);
}

static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	fuse_reply_err(req, EROFS);
}

static void ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	(void)ino, (void)name, (void)value, (void)size, (void)flags;
	fuse_reply_err(req, EROFS);
}

static void ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino, (void)name;
	fuse_reply_err(req, EROFS);
}

static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct psgfs_ll *ll = ll_of(req);
	struct tree_stat ts;
	enum rc r;

	atomic_fetch_add(&op_count[OP_OPENDIR], 1);
	if (ll->no_opendir) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	r = tree_getattr(ll->tree, ino, &ts);
	if (r == RC_OK && ts.type != TT_DIR)
		r = RC_NOTDIR;
	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return;
	}
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

/* Offsets: 0 ".", 1 "..", then child i at i + 2; each entry's `off` is the next position. */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct psgfs_ll *ll = ll_of(req);
	struct tree_dir *d;
	enum rc r;
	size_t used = 0, n;
	char *buf;

	atomic_fetch_add(&op_count[plus ? OP_READDIRPLUS : OP_READDIR], 1);
	r = tree_opendir(ll->tree, ino, &d);
	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		tree_closedir(ll->tree, d);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = tree_dir_count(d);
	for (off_t pos = off < 0 ? 0 : off; (size_t)pos < n + 2; pos++) {
		struct fuse_entry_param e;
		const char *name;
		struct tree_stat ts;
		size_t want;

		memset(&e, 0, sizeof e);
		if (pos < 2) {
			name = pos == 0 ? "." : "..";
			e.attr.st_ino = pos == 0 ? ino : FUSE_ROOT_ID;
			e.attr.st_mode = S_IFDIR;
		} else {
			size_t i = (size_t)pos - 2;

			name = tree_dir_name(d, i);
			e.attr.st_ino = tree_dir_ino(d, i);
			e.attr.st_mode = type_bits(tree_dir_type(d, i));
			/* Attributes only when they cost no render: a file whose size is not yet
			 * known gets ino 0, which the kernel takes as "no entry data" and looks up
			 * when something stats it, so find and plain ls render nothing. A node
			 * whose attributes fail still lists; its lookup reports EIO. */
			if (plus && tree_getattr_known(ll->tree, e.attr.st_ino, &ts))
				fill_entry(ll, &ts, &e);
		}
		if (plus)
			want =
			    fuse_add_direntry_plus(req, buf + used, size - used, name, &e, pos + 1);
		else
			want =
			    fuse_add_direntry(req, buf + used, size - used, name, &e.attr, pos + 1);
		if (want > size - used)
			break;
		used += want;
	}
	tree_closedir(ll->tree, d);
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, false);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, true);
}

static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	atomic_fetch_add(&op_count[OP_RELEASEDIR], 1);
	fuse_reply_err(req, 0);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct psgfs_ll *ll = ll_of(req);
	const struct stat *src = tree_source_stat(ll->tree);
	struct statvfs sv;

	(void)ino;
	atomic_fetch_add(&op_count[OP_STATFS], 1);
	memset(&sv, 0, sizeof sv);
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_blocks = (fsblkcnt_t)((src->st_size + 4095) / 4096);
	sv.f_namemax = 255;
	sv.f_flag = (ll->mods ? 0 : ST_RDONLY) | ST_NOSUID | ST_NODEV;
	fuse_reply_statfs(req, &sv);
}

/* ---- kernel cache invalidation (status files, texture mods) ---- */

static void inval_push(struct psgfs_ll *ll, fuse_ino_t ino, const char *name)
{
	struct psgfs_ll_inval *iv = &ll->inval;
	char *dup = name ? strdup(name) : NULL;

	pthread_mutex_lock(&iv->mu);
	if (iv->n == iv->cap && iv->cap < PSGFS_LL_INVAL_MAX) {
		size_t cap = iv->cap ? iv->cap * 2 : 64;
		struct psgfs_ll_item *q = realloc(iv->q, cap * sizeof *q);

		if (q) {
			iv->q = q;
			iv->cap = cap;
		}
	}
	if (iv->n < iv->cap && (dup || !name)) {
		iv->q[iv->n++] = (struct psgfs_ll_item){ino, dup};
		dup = NULL;
	}
	pthread_cond_signal(&iv->cv);
	pthread_mutex_unlock(&iv->mu);
	free(dup); /* past the bound: the kernel's caches expire on their own */
}

static void inval_queue(void *ctx, tree_ino ino)
{
	inval_push(ctx, ino, NULL);
}

static void inval_entry_queue(void *ctx, tree_ino parent, const char *name)
{
	inval_push(ctx, parent, name);
}

static void *inval_thread(void *arg)
{
	struct psgfs_ll *ll = arg;
	struct psgfs_ll_inval *iv = &ll->inval;

	pthread_mutex_lock(&iv->mu);
	while (!iv->stop) {
		while (iv->n) {
			struct psgfs_ll_item it = iv->q[--iv->n];

			pthread_mutex_unlock(&iv->mu);
			/* -ENOENT when the kernel has no inode for it: nothing cached, fine. */
			if (it.name)
				fuse_lowlevel_notify_inval_entry(ll->se, it.ino, it.name,
								 strlen(it.name));
			else
				fuse_lowlevel_notify_inval_inode(ll->se, it.ino, 0, 0);
			free(it.name);
			pthread_mutex_lock(&iv->mu);
		}
		pthread_cond_wait(&iv->cv, &iv->mu);
	}
	pthread_mutex_unlock(&iv->mu);
	return NULL;
}

int psgfs_ll_start(struct psgfs_ll *ll)
{
	struct psgfs_ll_inval *iv = &ll->inval;

	pthread_mutex_init(&iv->mu, NULL);
	pthread_cond_init(&iv->cv, NULL);
	if (pthread_create(&iv->tid, NULL, inval_thread, ll) != 0)
		return -1;
	iv->started = true;
	tree_set_change_hook(ll->tree, inval_queue, ll);
	tree_set_entry_hook(ll->tree, inval_entry_queue, ll);
	return 0;
}

void psgfs_ll_stop(struct psgfs_ll *ll)
{
	struct psgfs_ll_inval *iv = &ll->inval;

	if (!iv->started)
		return;
	tree_set_change_hook(ll->tree, NULL, NULL);
	tree_set_entry_hook(ll->tree, NULL, NULL);
	pthread_mutex_lock(&iv->mu);
	iv->stop = true;
	pthread_cond_signal(&iv->cv);
	pthread_mutex_unlock(&iv->mu);
	pthread_join(iv->tid, NULL);
	iv->started = false;
	while (iv->n)
		free(iv->q[--iv->n].name);
	free(iv->q);
	iv->q = NULL;
	iv->cap = 0;
}

void psgfs_ll_write_stats(struct psgfs_ll *ll, FILE *out)
{
	struct cache_stats cs;
	struct tree_counters tc;

	tree_get_stats(ll->tree, &cs, &tc);
	for (int i = 0; i < OP_COUNT; i++)
		fprintf(out, "op_%s %llu\n", op_names[i],
			(unsigned long long)atomic_load(&op_count[i]));
	fprintf(out,
		"cache_hits %llu\ncache_misses %llu\ncache_inserts %llu\ncache_evictions %llu\n"
		"cache_bytes %llu\ncache_peak_bytes %llu\ncache_entries %llu\ncache_budget %llu\n"
		"renders %llu\nrender_bytes %llu\nrender_failures %llu\nraw_reads %llu\n"
		"asset_opens %llu\nraw_bytes %llu\n",
		(unsigned long long)cs.hits, (unsigned long long)cs.misses,
		(unsigned long long)cs.inserts, (unsigned long long)cs.evictions,
		(unsigned long long)cs.bytes, (unsigned long long)cs.peak_bytes,
		(unsigned long long)cs.entries, (unsigned long long)cs.budget,
		(unsigned long long)tc.renders, (unsigned long long)tc.render_bytes,
		(unsigned long long)tc.render_failures, (unsigned long long)tc.raw_reads,
		(unsigned long long)tc.asset_opens, (unsigned long long)tc.raw_bytes);
	fprintf(out, "arc_indexes %llu\narc_pieces %llu\narc_piece_bytes %llu\n",
		(unsigned long long)tc.arc_indexes, (unsigned long long)tc.arc_pieces,
		(unsigned long long)tc.arc_piece_bytes);
#ifdef __GLIBC__
	/* What malloc holds beside the cache's own count: live blocks and freed-but-kept bytes. */
	struct mallinfo2 mi = mallinfo2();

	fprintf(out, "heap_in_use %zu\nheap_free %zu\n", mi.uordblks + mi.hblkhd, mi.fordblks);
#endif
	fflush(out);
}

const struct fuse_lowlevel_ops psgfs_ll_ops = {
    .init = ll_init,
    .lookup = ll_lookup,
    .forget = ll_forget,
    .forget_multi = ll_forget_multi,
    .getattr = ll_getattr,
    .open = ll_open,
    .read = ll_read,
    .readlink = ll_readlink,
    .release = ll_release,
    .opendir = ll_opendir,
    .readdir = ll_readdir,
    .readdirplus = ll_readdirplus,
    .releasedir = ll_releasedir,
    .statfs = ll_statfs,
    .write = ll_write,
    .flush = ll_flush,
    .fsync = ll_fsync,
    .setattr = ll_setattr,
    .create = ll_create,
    .rename = ll_rename,
    .unlink = ll_unlink,
    .mkdir = ll_mkdir,
    .rmdir = ll_rmdir,
    .symlink = ll_symlink,
    .link = ll_link,
    .mknod = ll_mknod,
    .setxattr = ll_setxattr,
    .removexattr = ll_removexattr,
};
