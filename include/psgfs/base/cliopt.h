/*
 * Option values shared by psgfs, psgfs-tool and psgfs-gen, so each has one syntax and one set
 * of reasons. Nothing here prints: on failure *why holds a short lower-case reason that the
 * caller puts after the program and option names, on one line.
 */
#ifndef PSGFS_CLIOPT_H
#define PSGFS_CLIOPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "psgfs/base/result.h"

#define CLIOPT_CACHE_MIN     (1u << 20)	 /* smallest cache budget either program accepts */
#define CLIOPT_HIERARCHY_MAX (16u << 20) /* largest hierarchy file read */
#define CLIOPT_ASSETS_MAX    65536u	 /* most assets a folder mount keeps open */

/*
 * "64M" -> 67108864: decimal digits, then an optional K, M or G (powers of 1024, any case),
 * then an optional B. No sign, no blanks, no other base. RC_INVAL when malformed, RC_BOUNDS
 * when the value does not fit in 64 bits.
 */
enum rc cliopt_size(const char *s, uint64_t *out, char *why, size_t whylen);

/* A cache budget: cliopt_size, at least CLIOPT_CACHE_MIN, and fits in size_t. */
enum rc cliopt_cache_size(const char *s, size_t *out, char *why, size_t whylen);

/* Open assets of a folder mount (each holds a file descriptor): decimal digits only (a count
 * takes no K/M/G suffix), 1 to CLIOPT_ASSETS_MAX. */
enum rc cliopt_max_assets(const char *s, unsigned *out, char *why, size_t whylen);

/*
 * The whole text of a small user-given file, NUL-terminated (free() it). Symbolic links are
 * followed, but the file finally opened must be a regular file of at most cap bytes without
 * NUL bytes; it is never waited on (a FIFO or device is refused, not opened for blocking
 * reads). RC_INVAL (not a regular file, too large, a NUL byte), RC_IO, RC_NOMEM.
 */
enum rc cliopt_read_text(const char *path, size_t cap, char **out, char *why, size_t whylen);

/*
 * Whether cliopt_replace_file can write path: path is missing, a regular file or a symbolic
 * link (never followed), and a new file can be created in its directory (tried for real, then
 * removed). RC_INVAL otherwise.
 */
enum rc cliopt_replace_check(const char *path, char *why, size_t whylen);

/*
 * Write path as a whole: fill a new file beside it (created with O_EXCL, never through a
 * link), then rename it over path. Readers see the old file or the new one, never half of one;
 * a symbolic link at path is replaced, not followed; a directory, FIFO or device is never
 * replaced. The new file's mode is 0666 less the umask.
 */
enum rc cliopt_replace_file(const char *path, void (*fill)(FILE *f, void *ctx), void *ctx);

#endif
