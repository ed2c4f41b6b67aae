/*
 * psgfs-tool pack: a folder into an EB v3 (or BIGF/BIG4) archive, through the generator's
 * writer (src/gen/gen_big.c), written to a temporary file beside OUT, read back by psgfs's
 * own archive reader and renamed into place (docs/archives.md, "Writing archives").
 */
#ifndef PSGFS_TOOL_PACK_H
#define PSGFS_TOOL_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <sys/stat.h>

/* Exit codes of pack, one per class of refusal (README, --help). */
enum pack_exit {
	PACK_OK = 0,
	PACK_EXIT_INTERNAL = 1, /* out of memory, or a writer failure that is not the input's */
	PACK_EXIT_USAGE = 2,
	PACK_EXIT_READ = 3,    /* DIR or a file in it cannot be read */
	PACK_EXIT_NAME = 6,    /* a path the archive cannot hold safely */
	PACK_EXIT_HASH = 7,    /* two paths with the same hash */
	PACK_EXIT_LINK = 8,    /* a symbolic link or a special file inside DIR */
	PACK_EXIT_CHANGED = 9, /* a file changed while it was packed */
	PACK_EXIT_WRITE = 10,  /* OUT cannot be written (its folder, the disk) */
	PACK_EXIT_VERIFY = 11, /* the written archive does not read back as the sources */
	PACK_EXIT_LIMIT = 12,  /* beyond the format: entry past 4 GiB, too many entries/folders */
	PACK_EXIT_LIKE = 13,   /* --like: ORIG cannot be reproduced, or DIR lacks or adds paths */
};

/*
 * Whether path (relative, '/'-separated) may be an entry's path: not empty, not absolute, no
 * empty, "." or ".." component, no byte below 0x20, no 0x7F, no backslash, folder at most 253
 * and name at most 252 bytes (EB v3 record sizes). false with the reason in why.
 */
bool pack_path_ok(const char *path, char *why, size_t why_len);

/* Order of entries: bytewise by path (strcmp), the order pack declares and writes. */
int pack_path_cmp(const char *a, const char *b);

/* Index of the first pair of equal hashes among n sorted-by-path entries' hashes, keeping
 * only the upper 32 bits unless wide; -1 if none. *other gets the second one's index. */
long pack_hash_clash(const uint64_t *hash, size_t n, bool wide, size_t *other);

/* `psgfs-tool pack ...`: argv[0] is "pack". Returns the exit status. */
int pack_main(int argc, char **argv);

/* ---- for psgfs-tool pack-stream (pack_stream.c), which follows pack's rules ---- */

/* DIR's regular files as pack sees them: links and special files refused, never followed;
 * each path checked with pack_path_ok; sorted by path. */
struct pack_tree {
	int root; /* DIR, open: read the files relative to it (openat, O_NOFOLLOW) */
	struct pack_item {
		char *path;	/* relative, '/'-separated */
		struct stat st; /* at the walk */
	} * v;
	size_t n;
	int code;		  /* 0, or the enum pack_exit of the first refusal */
	char msg[PATH_MAX + 256]; /* its line: "path: reason" */
};
/* Returns t->code; free t with pack_tree_free either way. */
int pack_walk(const char *dir, struct pack_tree *t);
void pack_tree_free(struct pack_tree *t);
/* Device, inode, size and modification time agree: the file did not change. */
bool pack_same_file(const struct stat *a, const struct stat *b);
/* A temporary file ".NAME.XXXXXX" in OUT's folder (mode 0666 & ~umask); -1 on failure. */
int pack_temp_file(const char *out, char **tmp);

#endif
