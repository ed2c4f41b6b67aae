/*
 * Internals of folder mounts, shared by folder_entries.c (the entry table, paths), folder.c
 * (the folder as a container, opening and closing), folder_list.c (listing and sniffing a source
 * folder), folder_assets.c (archives of the folder and the open assets' LRU) and folder_index.c
 * (the indexes of texture arenas by name and by TableOfContents).
 */
#ifndef PSGFS_FOLDER_INT_H
#define PSGFS_FOLDER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "tree/core/tree_int.h"

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
	pthread_mutex_t mu; /* entries and listings (lock order: tree/core/tree_int.h) */
	struct fentry root;
	struct fentry **tab;
	size_t n_buckets, n;
	uint32_t next_seq;
	pthread_mutex_t omu; /* held while an archive is opened (one opening each; lock order:
			      * tree/core/tree_int.h) */
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
	struct arcdir **arcs; /* every archive opened (freed at the end) */
	size_t n_arcs, cap_arcs;
	struct loose *loose; /* -o layout=loose: what the archives add (loose.h) */
};

/* folder_entries.c */
struct fentry *fentry_find(struct folder *f, uint32_t slot);
void fentry_free(struct fentry *e);
struct fentry *fentry_get(struct tree *t, uint32_t slot);
size_t fentry_heap(const struct fentry *e);
bool fentry_insert(struct folder *f, struct fentry *e);
void fentry_remove(struct folder *f, uint32_t slot);
int fold_open_dir_of(struct folder *f, uint32_t slot);
uint32_t fold_slot_for(struct folder *f, const struct stat *st);
bool fentry_path(struct tree *t, uint32_t slot, char *out, size_t n);
/* folder_list.c */
bool fold_errno_transient(int e);
enum rc fold_rc_transient(int e);
bool fold_is_mount_point(const struct folder *f, dev_t dir_dev, ino_t d_ino);
bool fold_on_own_mount(const struct folder *f, int dirfd, const char *name);
enum rc fold_read_folder(struct tree *t, struct fentry *dir);
/* folder_assets.c */
/* n consecutive slots of the mount for the loose view's nodes; the first, or 0 when the
 * mount has run out of them. */
uint32_t folder_slots_take(struct tree *t, uint32_t n);
int fold_arc_reopen(struct tree *t, uint32_t slot);
enum rc fold_arc_adopt(struct tree *t, struct arcdir *ad);
enum rc fold_arc_register(struct tree *t, struct arcdir *ad);
void fold_arc_used(struct tree *t, uint32_t slot, struct arcdir *ad);
enum rc fold_open_archive(struct tree *t, struct fentry *e);
int fold_open_toc(int dfd, const char *name, int fd);
struct asset *fold_asset_get(struct tree *t, const struct cref *cr, struct cache_ent **pin,
			     enum rc *r);
void fold_reset(struct tree *t, const struct cref *r);
/* folder_index.c */
void folder_guid_build(void *ctx, struct guid_index *ix);
void folder_toc_build(void *ctx, struct guid_index *ix);

#endif
