/* Internals of the loose view: loose_build.c builds it at mount, loose.c serves it. */
#ifndef PSGFS_TREE_MOUNT_LOOSE_INT_H
#define PSGFS_TREE_MOUNT_LOOSE_INT_H

#include <pthread.h>
#include <sys/stat.h>

#include "tree/mount/arcdir.h"
#include "tree/mount/loose.h"

#define NO_NODE	 UINT32_MAX
#define WARN_MAX 20u /* paths lost to another source named at mount; the rest counted */

enum ln_kind { LN_DIR = 1, LN_ENTRY, LN_MOD };

struct lnode {
	uint32_t parent;
	uint32_t name;	      /* offset in names */
	uint32_t kid0, nkids; /* folders: kids[kid0 ...], sorted by name */
	uint32_t src;	      /* entries: the archive; mods: the file of OUTDIR */
	uint32_t idx;	      /* entries: the index in the archive's table */
	uint8_t kind;
};

struct larc {
	struct arcdir *ad; /* adopted by the folder layer: freed with the mount */
	struct stat st;
	char *path;    /* in the game folder */
	uint32_t slot; /* the archive's own (its descriptor's, for folder_arc_reopen) */
	uint64_t used; /* under mu: last use of its descriptor ... */
	bool open;     /* ... and whether it counts as open */
};

struct lmod {
	struct stat st;
	char *path; /* in OUTDIR */
};

struct fid {
	dev_t dev;
	ino_t ino;
};

struct loose {
	struct tree *t;
	const struct loose_host *host;
	int root_fd; /* the folder layer's, for reopening archives */
	int mods_fd;
	uint32_t arc_base, n_bigs; /* slots of the archives' descriptors ... */
	uint32_t *arc_at;	   /* ... and the archive of each (NO_NODE: not unpacked) */
	pthread_mutex_t mu;	   /* the archives' descriptors: used, open, open_arcs */
	uint64_t clock;
	unsigned open_arcs, max_open;
	uint32_t base; /* node k > 0 is slot base + k */
	struct lnode *nodes;
	uint32_t n;
	size_t cap;
	uint32_t *kids;
	char *names;
	size_t names_len, names_cap;
	struct larc *arcs;
	size_t n_arcs, cap_arcs;
	struct lmod *mods;
	size_t n_mods, cap_mods;
	struct fid *hidden; /* sorted */
	size_t n_hidden, cap_hidden;
	uint32_t *map; /* while building: (parent, name) -> node + 1 */
	size_t mask;
	size_t lost;
	size_t heap, charged; /* what the view holds; charged to the cache so far */
};

/* loose_build.c */
int loose_fid_cmp(const void *x, const void *y);
/* The namespace of the folder behind root_fd and of OUTDIR, built once at mount. */
enum rc loose_build(struct loose *L, int root_fd);

#endif
