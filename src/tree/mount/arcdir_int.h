/*
 * Internals of archives as directories, shared by arcdir.c (opening, nodes, status files, the
 * container), arcdir_nodes.c (names and the node tree) and arcdir_read.c (reading entries and
 * decoding ahead).
 */
#ifndef PSGFS_ARCDIR_INT_H
#define PSGFS_ARCDIR_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "psgfs/formats/archive.h"
#include "tree/mount/arcdir.h"

#define NAME_MAX_BYTES 200 /* longer names are cut (and keep a hash and their extension) */
#define NO_PARENT      UINT32_MAX
#define NO_NEXT	       UINT32_MAX   /* ad->next: no file listed after it */
#define HOT_MIN	       (128u << 10) /* indexes with restart points (hot_keep) */

struct anode {
	uint32_t parent;
	uint32_t name; /* offset in names */
	uint32_t kid0, nkids;
	uint8_t type; /* enum an_type */
};

/* What an entry's source reads: one entry of one archive. */
#define ARCDIR_SHORT 2u

struct arcent {
	struct arcdir *ad;
	uint32_t i;
};

struct arcdir {
	struct tree *t;
	struct arcdir *parent; /* nested: the archive holding this one ... */
	uint32_t parent_node;  /* ... and its node there */
	struct arcent self;    /* nested: the source of this archive's bytes */
	unsigned depth;
	int fd;
	pthread_mutex_t fd_mu; /* fd, fd_users, fd_closing of a folder's archive (fd_acquire;
				lock order: tree/core/tree_int.h, as for every mutex here) */
	unsigned fd_users;
	bool fd_closing; /* folder_assets.c closed it: the last reader closes fd */
	struct stat st;
	struct src src;
	char *name; /* the archive's file name */
	char *why;  /* could not be opened: why (then only info.txt and errors.txt) */
	struct arc a;
	uint32_t base, owner_slot;
	uint64_t key; /* cache owner of indexes and pieces */
	struct anode *nodes;
	uint32_t n_nodes, n_dirs;
	uint32_t *kids;
	char *names;
	size_t names_len, names_cap;
	size_t renamed, n_bad;
	bool names_oom;
	bool over_budget; /* its tables do not fit the cache budget: why says so */
	atomic_bool changed;
	pthread_mutex_t mu;	  /* d, reported */
	pthread_mutex_t nest_mu;  /* nested (held while one opens: reads, never under mu) */
	pthread_mutex_t build_mu; /* the nodes, built once on first use */
	bool built;
	enum rc build_r;
	struct diag d;
	uint8_t *reported;	/* per entry: its read failure is already in errors.txt (bit 0);
				   its bytes end before its size (bit 1, ARCDIR_SHORT) */
	struct arcdir **nested; /* per entry node: the archive it holds, once opened */
	uint32_t *next;		/* per entry: the file listed after it in its folder, or NO_NEXT */
	uint64_t heap;
	/* Long compressed entries naming the same stored bytes as an earlier one: {entry, that
	 * one} sorted by entry, made on first use (same_bytes) */
	pthread_mutex_t same_mu; /* a leaf */
	atomic_bool same_made;
	uint32_t (*same)[2];
	uint32_t n_same;
};

struct ixmemo;

/* arcdir_nodes.c */
void arcdir_quote_raw(const char *raw, char *out, size_t n);
bool arcdir_build(struct arcdir *ad);
/* arcdir_read.c */
bool arcdir_changed(struct arcdir *ad);
enum rc arcdir_fd_read(void *ctx, uint64_t off, void *dst, size_t n);
enum rc arcdir_entry_read(void *ctx, uint64_t off, void *dst, size_t n);
enum rc arcdir_entry_view(void *ctx, uint64_t off, size_t n, struct tree_rdv *v);
void arcdir_ahead_forget(struct arcdir *ad);

#endif
