/*
 * The mounted namespace of one container file, or of a folder of them, independent of FUSE.
 * Inode numbers are structural (which file, which node in it), so they are stable across
 * remounts and need no table. Listings are sorted by name. File contents are rendered lazily,
 * piece by piece, into one byte-bounded cache; sizes are exact before the first read.
 */
#ifndef PSGFS_TREE_H
#define PSGFS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "psgfs/tree/cache.h"
#include "psgfs/base/result.h"

typedef uint64_t tree_ino;
#define TREE_ROOT_INO 1

#define TREE_DEFAULT_CACHE (64u << 20)
#define TREE_PIECE	   (128u << 10) /* rendered files are cached in pieces of this size */

struct tree;

struct tree_opts {
	size_t cache_bytes;	    /* 0 = TREE_DEFAULT_CACHE */
	const char *hierarchy_path; /* PSG: TSV "bone parent" by name, or NULL */
	const char *hierarchy_text; /* PSG: the same text already read (wins over the path) */
	bool yup;		    /* PSK export in the game's Y-up instead of Z-up */
	unsigned max_assets;	    /* folder mounts: open files kept at most (0 = default) */
	bool sniff_all;		    /* folder mounts: classify every file by its first bytes
				       (default: by name and size where they decide) */
	bool assets_files;	    /* folder and archive mounts: assets as plain files (their
				       own bytes), not as directories (-o assets=files) */
	const char *mods_dir;	    /* texture mods: OUTDIR (absolute, a directory), or NULL
				       (include/psgfs/tree/mods.h) */
	bool layout_loose;	    /* folder mounts: the loose view (-o layout=loose): every
				       .big shown as the files it holds, merged into the
				       folder; every file plain; mods_dir only read */
};

enum tree_type { TT_DIR = 1, TT_FILE, TT_LINK };

struct tree_stat {
	tree_ino ino;
	enum tree_type type;
	uint64_t size;	  /* files: exact bytes; links: target length; dirs: entries */
	uint32_t nlink;	  /* dirs: 2 + subdirectories */
	mode_t perm;	  /* permission bits: the source's r (dirs r and x) and the owner's w,
			     as in a read-only image of an ordinary tree (tree_int.h) */
	bool writable;	  /* texture mods: a picture, textures/ or a temporary; its size and
			     content change as pictures are written (callers cache it briefly) */
	bool short_known; /* its bytes are known to end before size (a lying archive entry):
			     read uncached, so a reader gets them and then EIO */
	uid_t uid;
	gid_t gid;
	struct timespec atime, mtime;
};

/* What refused a mount, so main can pick the exit code. */
enum tree_open_fail {
	TREE_FAIL_NONE,
	TREE_FAIL_OPEN,	   /* cannot open or read the file */
	TREE_FAIL_FORMAT,  /* not a recognised format */
	TREE_FAIL_DAMAGED, /* recognised but too damaged to mount */
	TREE_FAIL_OTHER,   /* out of memory, bad options */
};

/* Open a container file, or a folder of them. Parses only headers and directories (a folder:
 * nothing below it). On failure *why holds one line. */
enum tree_open_fail tree_open(const char *path, const struct tree_opts *o, struct tree **out,
			      char *why, size_t whylen);
void tree_close(struct tree *t);

/*
 * The mount the tree is served on: the mount point as stat(2) saw it before mounting (the
 * directory it covers, which is what readdir of its parent reports) and the mount's own device.
 * A folder mount whose DIR holds the mount point then shows it as an empty directory, and
 * leaves out any other path into this mount: entering it would make the kernel call this very
 * daemon from inside a request (a self-deadlock). Call before serving.
 */
void tree_set_mount(struct tree *t, const struct stat *mnt_before, dev_t own_dev);

/* stat(2) of the mounted file or folder at open time. */
const struct stat *tree_source_stat(const struct tree *t);

enum rc tree_lookup(struct tree *t, tree_ino parent, const char *name, struct tree_stat *out);
enum rc tree_getattr(struct tree *t, tree_ino ino, struct tree_stat *out);
/* tree_getattr when that needs no rendering (directories, raw files, sizes already known or
 * cheap); false otherwise, so a listing can leave a file's attributes to a later lookup. */
bool tree_getattr_known(struct tree *t, tree_ino ino, struct tree_stat *out);
/* The target of a symbolic link, NUL-terminated in a malloc'd string. */
enum rc tree_readlink(struct tree *t, tree_ino ino, char **target);

/* A pinned, sorted directory listing. */
struct tree_dir;
enum rc tree_opendir(struct tree *t, tree_ino ino, struct tree_dir **out);
size_t tree_dir_count(const struct tree_dir *d);
const char *tree_dir_name(const struct tree_dir *d, size_t i);
tree_ino tree_dir_ino(const struct tree_dir *d, size_t i);
enum tree_type tree_dir_type(const struct tree_dir *d, size_t i);
void tree_closedir(struct tree *t, struct tree_dir *d);

/*
 * A read as a list of pinned byte ranges (the cached pieces themselves, or one buffer for raw
 * bytes), so the caller can hand them to the kernel without copying them first. Release with
 * tree_read_end. len < asked only at end of file.
 */
#define TREE_RDV_MAX 12
struct tree_rdv {
	const void *base[TREE_RDV_MAX];
	size_t len[TREE_RDV_MAX];
	unsigned n;
	size_t total;
	struct cache_ent *pin[TREE_RDV_MAX];
	unsigned n_pin;
	void *own; /* malloc'd bytes this view owns */
	struct tree *t;
	struct cache_ent *pin_as; /* the asset, in a folder mount */
	uint32_t epoch;		  /* the content of the asset read (texture mods) */
};
enum rc tree_read_begin(struct tree *t, tree_ino ino, uint64_t off, size_t len, struct tree_rdv *v);
void tree_read_end(struct tree_rdv *v);
/* The same, copied into dst; *got < len only at end of file. RC_IO for broken views. */
enum rc tree_read(struct tree *t, tree_ino ino, uint64_t off, size_t len, void *dst, size_t *got);

/*
 * Where a file may hold bytes other than zeros, for copies that keep holes: the first stretch
 * [*start, *end) at or after off. A file served raw from a file of the source (a loose file of
 * a folder, an asset's own bytes) skips the file system's holes (SEEK_DATA / SEEK_HOLE); any
 * other file is one stretch from off (*end UINT64_MAX). *start at or past the file's size:
 * nothing but zeros from off on.
 */
enum rc tree_data_extent(struct tree *t, tree_ino ino, uint64_t off, uint64_t *start,
			 uint64_t *end);

/* Resolve a slash-separated path from the root ("" or "/" is the root); symlinks are not
 * followed. */
enum rc tree_resolve(struct tree *t, const char *path, struct tree_stat *out);

/* Called (from any thread, possibly inside a request) when the content of a status file
 * (info.txt, errors.txt) changes because its source changed under the mount, and, with
 * texture mods, for every node whose size or bytes a written picture changed. */
void tree_set_change_hook(struct tree *t, void (*fn)(void *ctx, tree_ino ino), void *ctx);
/* Called (likewise) when the node a name leads to changed: after a temporary was renamed over
 * a picture, the name leads to the picture again. */
void tree_set_entry_hook(struct tree *t, void (*fn)(void *ctx, tree_ino parent, const char *name),
			 void *ctx);

struct tree_counters {
	uint64_t renders, render_bytes, render_failures, raw_reads, raw_bytes, asset_opens;
	uint64_t arc_indexes, arc_pieces, arc_piece_bytes; /* archive entries: indexes built,
							      pieces decoded and their bytes */
};
void tree_get_stats(struct tree *t, struct cache_stats *cache, struct tree_counters *ctr);

#endif
