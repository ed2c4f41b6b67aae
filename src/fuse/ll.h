/* libfuse3 low-level adapter: maps each FUSE request to one tree call and one reply. */
#ifndef PSGFS_FUSE_LL_H
#define PSGFS_FUSE_LL_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "psgfs/tree/tree.h"

/* Inodes (and names) whose kernel caches must be dropped, handed to a thread of their own
 * (libfuse's notifications must not run inside a request for the same inode or folder). A
 * texture mod can queue every node of an asset: the queue grows, up to a bound. */
#define PSGFS_LL_INVAL_MAX (1u << 18)
struct psgfs_ll_item {
	fuse_ino_t ino; /* an inode; with name: the folder holding the name */
	char *name;
};
struct psgfs_ll_inval {
	pthread_mutex_t mu; /* a leaf (lock order: src/tree/core/tree_int.h) */
	pthread_cond_t cv;
	struct psgfs_ll_item *q;
	size_t n, cap;
	bool stop, started;
	pthread_t tid;
};

struct psgfs_ll {
	struct tree *tree;
	struct fuse_session *se;
	struct psgfs_ll_inval inval;
	double timeout;	 /* entry and attr timeout, seconds */
	mode_t umask;	 /* -o umask= */
	bool mods;	 /* -o mods: textures/ pictures are writable */
	bool no_open;	 /* kernel supports zero-message open */
	bool no_opendir; /* ... and zero-message opendir */
};

extern const struct fuse_lowlevel_ops psgfs_ll_ops;

/* Start (after the session exists) and stop the invalidation thread. */
int psgfs_ll_start(struct psgfs_ll *ll);
void psgfs_ll_stop(struct psgfs_ll *ll);

/* Request counters per opcode plus cache and render figures, one "name value" per line. */
void psgfs_ll_write_stats(struct psgfs_ll *ll, FILE *out);

#endif
