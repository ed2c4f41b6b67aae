/*
 * The mounted namespace of one container file, independent of FUSE. Inode numbers are
 * structural (node kind + indices), so they are stable across remounts and need no table.
 * Listings are sorted by name. File contents are rendered lazily on first use and kept in a
 * byte-bounded cache; sizes are exact before the first read.
 */
#ifndef PSGFS_TREE_H
#define PSGFS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "psgfs/cache.h"
#include "psgfs/result.h"

typedef uint64_t tree_ino;
#define TREE_ROOT_INO 1

#define TREE_DEFAULT_CACHE (64u << 20)

struct tree;

struct tree_opts {
	size_t cache_bytes;	    /* 0 = TREE_DEFAULT_CACHE */
	const char *hierarchy_path; /* PSG: TSV "bone parent" by name, or NULL */
	const char *hierarchy_text; /* its text, read and checked by the caller; used when set */
	bool zup;		    /* PSG export: convert Y-up to Z-up */
};

struct tree_stat {
	tree_ino ino;
	bool is_dir;
	uint64_t size;	/* files: exact byte size; dirs: number of entries */
	uint32_t nlink; /* dirs: 2 + subdirectories */
};

/* What refused a mount, so main can pick the exit code. */
enum tree_open_fail {
	TREE_FAIL_NONE,
	TREE_FAIL_OPEN,	   /* cannot open or read the file */
	TREE_FAIL_FORMAT,  /* not a recognised format */
	TREE_FAIL_DAMAGED, /* recognised but too damaged to mount */
	TREE_FAIL_OTHER,   /* out of memory, bad options */
};

/* Open and validate: parses only headers and directories. On failure *why holds one line. */
enum tree_open_fail tree_open(const char *path, const struct tree_opts *o, struct tree **out,
			      char *why, size_t whylen);
void tree_close(struct tree *t);

/* Short name of the mounted format: "psk", "psa" or "psg". */
const char *tree_format_name(const struct tree *t);
/* stat(2) of the source file at open time (mtime/atime for every node). */
const struct stat *tree_source_stat(const struct tree *t);

enum rc tree_lookup(struct tree *t, tree_ino parent, const char *name, struct tree_stat *out);
enum rc tree_getattr(struct tree *t, tree_ino ino, struct tree_stat *out);
/* tree_getattr when that needs no rendering (directories, raw files, sizes already known);
 * false otherwise, so a listing can leave a file's attributes to a later lookup. */
bool tree_getattr_known(struct tree *t, tree_ino ino, struct tree_stat *out);

/* A pinned, sorted directory listing. */
struct tree_dir;
enum rc tree_opendir(struct tree *t, tree_ino ino, struct tree_dir **out);
size_t tree_dir_count(const struct tree_dir *d);
const char *tree_dir_name(const struct tree_dir *d, size_t i);
tree_ino tree_dir_ino(const struct tree_dir *d, size_t i);
bool tree_dir_is_dir(const struct tree_dir *d, size_t i);
void tree_closedir(struct tree *t, struct tree_dir *d);

/* Read up to len bytes at off; *got < len only at end of file. RC_IO for broken views. */
enum rc tree_read(struct tree *t, tree_ino ino, uint64_t off, size_t len, void *dst, size_t *got);

/* Resolve a slash-separated path from the root ("" or "/" is the root). */
enum rc tree_resolve(struct tree *t, const char *path, struct tree_stat *out);

struct tree_counters {
	uint64_t renders, render_bytes, render_failures, raw_reads, raw_bytes;
};
void tree_get_stats(struct tree *t, struct cache_stats *cache, struct tree_counters *ctr);

#endif
