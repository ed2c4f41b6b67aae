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
 * own mount point, when it lies inside the folder, is never entered (fold_is_mount_point).
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
#include "tree/mount/folder_int.h"
#include "tree/mount/loose.h"

/* ---- the folder as a container (struct container_ops) ---- */

static enum cslot fold_kind(struct tree *t, const struct cref *r)
{
	struct fentry *e = fentry_get(t, r->slot);

	if (!e)
		return CS_NONE;
	if (e->type == FE_FILE)
		return e->archive ? CS_DIR : CS_ASSET; /* an archive lists through arcdir.c */
	return e->type == FE_DIR ? CS_DIR : CS_LINK;
}

static enum rc fold_getattr(struct tree *t, const struct cref *r, tree_ino ino,
			    struct tree_stat *out)
{
	struct fentry *e = fentry_get(t, r->slot);

	(void)ino;
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

/* An archive file of the folder lists as the root of its archive, opened on first use. */
static enum rc list_archive(struct tree *t, struct fentry *e, struct tlist *out)
{
	struct cref ar = {&arcdir_container, NULL, e->slot, 0};
	enum rc r = RC_OK;

	pthread_mutex_lock(&t->fold->mu);
	ar.c = e->arc;
	pthread_mutex_unlock(&t->fold->mu);
	if (!ar.c && (r = fold_open_archive(t, e)) == RC_OK) {
		pthread_mutex_lock(&t->fold->mu);
		ar.c = e->arc;
		pthread_mutex_unlock(&t->fold->mu);
	}
	return r == RC_OK ? arcdir_container.list(t, &ar, out) : r;
}

static enum rc fold_list(struct tree *t, const struct cref *r, struct tlist *out)
{
	struct folder *f = t->fold;
	struct fentry *dir = fentry_get(t, r->slot);
	enum rc rc = RC_OK;
	bool listed;

	if (dir && dir->type == FE_FILE && dir->archive)
		return list_archive(t, dir, out);
	if (!dir || dir->type != FE_DIR)
		return dir ? RC_NOTDIR : RC_NOENT;
	pthread_mutex_lock(&f->mu);
	listed = dir->listed;
	pthread_mutex_unlock(&f->mu);
	if (!listed)
		rc = fold_read_folder(t, dir); /* without the lock: it reads the source tree */
	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; rc == RC_OK && i < dir->n_kids; i++) {
		struct fentry *e = fentry_find(f, dir->kids[i]);
		uint8_t type = e->type == FE_LINK	       ? TT_LINK
			       : e->type == FE_DIR || e->asset ? TT_DIR
							       : TT_FILE;

		if (f->loose && loose_hides(f->loose, &e->st))
			continue; /* an archive the loose view unpacked */
		tlist_add_ino(out, (tree_ino)e->slot << 32 | 1, type, e->name);
	}
	pthread_mutex_unlock(&f->mu);
	if (rc == RC_OK && f->loose)
		rc = loose_merge(t, f->loose, dir->slot, out);
	return rc;
}

static enum rc fold_readlink(struct tree *t, const struct cref *r, struct buf *out)
{
	struct fentry *e = fentry_get(t, r->slot);

	if (!e)
		return RC_NOENT;
	if (e->type != FE_LINK)
		return RC_INVAL;
	buf_puts(out, e->link);
	return RC_OK;
}

static bool fold_relpath(struct tree *t, const struct cref *r, char *out, size_t n)
{
	return fentry_path(t, r->slot, out, n);
}

static bool fold_mountpath(struct tree *t, const struct cref *r, char *out, size_t n)
{
	if (r->slot == 0)
		return n > 0 && (out[0] = '\0', true);
	return fentry_path(t, r->slot, out, n);
}

static bool fold_entry_name(struct tree *t, const struct cref *r, uint32_t *parent,
			    const char **name)
{
	struct fentry *e = fentry_get(t, r->slot);

	if (!e || r->slot == 0)
		return false;
	*parent = e->parent;
	*name = e->name;
	return true;
}

static uint32_t fold_sibling(struct tree *t, const struct cref *r, const char *name)
{
	struct folder *f = t->fold;
	struct fentry *e, *dir;
	uint32_t found = 0;

	pthread_mutex_lock(&f->mu);
	e = fentry_find(f, r->slot);
	dir = e ? fentry_find(f, e->parent) : NULL;
	for (int pass = 0; dir && pass < 2 && !found; pass++) {
		for (size_t i = 0; i < dir->n_kids && !found; i++) {
			struct fentry *k = fentry_find(f, dir->kids[i]);

			if (k->type == FE_FILE &&
			    (pass ? strcasecmp(k->name, name) == 0 : strcmp(k->name, name) == 0))
				found = k->slot;
		}
	}
	pthread_mutex_unlock(&f->mu);
	return found;
}

static size_t fold_siblings(struct tree *t, const struct cref *r, uint32_t **out)
{
	struct folder *f = t->fold;
	struct fentry *e, *dir;
	uint32_t *v = NULL;
	size_t n = 0;

	pthread_mutex_lock(&f->mu);
	e = fentry_find(f, r->slot);
	dir = e ? fentry_find(f, e->parent) : NULL;
	if (dir && dir->n_kids && (v = xcalloc_n(dir->n_kids, sizeof *v)))
		for (size_t i = 0; i < dir->n_kids; i++) {
			struct fentry *k = fentry_find(f, dir->kids[i]);

			if (k->type == FE_FILE && k->slot != r->slot)
				v[n++] = k->slot;
		}
	pthread_mutex_unlock(&f->mu);
	*out = v;
	return n;
}

/* The mounted folder: every slot no archive (or other range) registered. */
static const struct container_ops folder_container = {
    .name = "folder",
    .kind = fold_kind,
    .getattr = fold_getattr,
    .list = fold_list,
    .readlink = fold_readlink,
    .asset_get = fold_asset_get,
    .reset = fold_reset,
    .entry_name = fold_entry_name,
    .relpath = fold_relpath,
    .mountpath = fold_mountpath,
    .sibling = fold_sibling,
    .siblings = fold_siblings,
};

/* The folder layer as its archives see it (arcdir.h). */
static const struct arcdir_host folder_arc_host = {
    .reopen = fold_arc_reopen,
    .used = fold_arc_used,
    .adopt = fold_arc_adopt,
    .register_slots = fold_arc_register,
    .guid_index = folder_guid_index,
};

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
	container_set_base(t, &folder_container, f);
	t->arc_host = &folder_arc_host;
	f->gix = guid_index_new(folder_guid_build, t);
	f->tix = guid_index_new(folder_toc_build, t);
	if (!f->tab || !f->gix || !f->tix) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	return f;
}

static const struct loose_host loose_host = {
    .slots_take = folder_slots_take,
    .root_stat = folder_root_stat,
};

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
	if (t->opts.layout_loose &&
	    !(f->loose = loose_open(t, f->root_fd, &loose_host, why, whylen)))
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
		toc = fold_open_toc(f->root_fd, f->root.name, fd);
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
			fentry_free(e);
		}
	}
	loose_free(f->loose);
	for (size_t i = 0; i < f->n_arcs; i++)
		arcdir_free(f->arcs[i]);
	free(f->arcs);
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
