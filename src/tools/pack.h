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

#endif
