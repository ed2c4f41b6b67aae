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

#include "fuse/ll.h"

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
	OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
    "lookup",  "getattr",     "open",	    "read",   "release", "opendir",
    "readdir", "readdirplus", "releasedir", "statfs", "forget",	 "readlink",
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
		return EINVAL;
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

static void fill_entry(const struct psgfs_ll *ll, const struct tree_stat *ts,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof *e);
	e->ino = ts->ino;
	e->generation = 1;
	e->attr_timeout = ll->timeout;
	e->entry_timeout = ll->timeout;
	fill_stat(ll, ts, &e->attr);
}

static void ll_init(void *userdata, struct fuse_conn_info *conn)
{
	struct psgfs_ll *ll = userdata;

	/* Zero-message open and opendir: the kernel stops sending OPEN/OPENDIR (and their
	 * RELEASE) once we answer ENOSYS, and then treats every open as FOPEN_KEEP_CACHE and
	 * every opendir as FOPEN_CACHE_DIR, so cached listings and pages survive reopening. */
	ll->no_open = (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) != 0;
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

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct psgfs_ll *ll = ll_of(req);
	struct tree_stat ts;
	struct stat st;
	enum rc r;

	(void)fi;
	atomic_fetch_add(&op_count[OP_GETATTR], 1);
	r = tree_getattr(ll->tree, ino, &ts);
	if (r != RC_OK) {
		fuse_reply_err(req, to_errno(r));
		return;
	}
	fill_stat(ll, &ts, &st);
	fuse_reply_attr(req, &st, ll->timeout);
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	atomic_fetch_add(&op_count[OP_OPEN], 1);
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (ll_of(req)->no_open) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	/* Kernels without zero-message open still get cache-friendly opens. */
	fi->keep_cache = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct psgfs_ll *ll = ll_of(req);
	struct iovec iov[TREE_RDV_MAX];
	struct tree_rdv v;
	enum rc r;

	(void)fi;
	atomic_fetch_add(&op_count[OP_READ], 1);
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
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
	(void)fi;
	atomic_fetch_add(&op_count[OP_RELEASE], 1);
	fuse_reply_err(req, 0);
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
	sv.f_flag = ST_RDONLY | ST_NOSUID | ST_NODEV;
	fuse_reply_statfs(req, &sv);
}

/* ---- kernel cache invalidation of status files ---- */

static void inval_queue(void *ctx, tree_ino ino)
{
	struct psgfs_ll_inval *iv = &((struct psgfs_ll *)ctx)->inval;

	pthread_mutex_lock(&iv->mu);
	if (iv->n < PSGFS_LL_INVAL_MAX)
		iv->q[iv->n++] = ino;
	pthread_cond_signal(&iv->cv);
	pthread_mutex_unlock(&iv->mu);
}

static void *inval_thread(void *arg)
{
	struct psgfs_ll *ll = arg;
	struct psgfs_ll_inval *iv = &ll->inval;

	pthread_mutex_lock(&iv->mu);
	while (!iv->stop) {
		while (iv->n) {
			fuse_ino_t ino = iv->q[--iv->n];

			pthread_mutex_unlock(&iv->mu);
			/* -ENOENT when the kernel has no inode for it: nothing cached, fine. */
			fuse_lowlevel_notify_inval_inode(ll->se, ino, 0, 0);
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
	return 0;
}

void psgfs_ll_stop(struct psgfs_ll *ll)
{
	struct psgfs_ll_inval *iv = &ll->inval;

	if (!iv->started)
		return;
	tree_set_change_hook(ll->tree, NULL, NULL);
	pthread_mutex_lock(&iv->mu);
	iv->stop = true;
	pthread_cond_signal(&iv->cv);
	pthread_mutex_unlock(&iv->mu);
	pthread_join(iv->tid, NULL);
	iv->started = false;
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
};
