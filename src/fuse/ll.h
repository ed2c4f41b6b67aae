/* libfuse3 low-level adapter: maps each FUSE request to one tree call and one reply. */
#ifndef PSGFS_FUSE_LL_H
#define PSGFS_FUSE_LL_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdio.h>

#include "psgfs/tree.h"

struct psgfs_ll {
	struct tree *tree;
	double timeout;	 /* entry and attr timeout, seconds */
	mode_t umask;	 /* -o umask= */
	bool no_open;	 /* kernel supports zero-message open */
	bool no_opendir; /* ... and zero-message opendir */
};

extern const struct fuse_lowlevel_ops psgfs_ll_ops;

/* Request counters per opcode plus cache and render figures, one "name value" per line. */
void psgfs_ll_write_stats(struct psgfs_ll *ll, FILE *out);

#endif
