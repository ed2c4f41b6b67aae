/* psgfs-tool pack's internals, shared by pack.c, pack_like.c and pack_walk.c. */
#ifndef PSGFS_TOOL_PACK_INT_H
#define PSGFS_TOOL_PACK_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "psgfs/base/sha256.h"
#include "psgfs/formats/archive.h"

#include "pack.h"

#define PK_FOLDER_MAX 253
#define PK_NAME_MAX   252

enum pk_format { PK_EB, PK_BIGF, PK_BIG4 };
enum pk_compress { PK_NONE, PK_REFPACK, PK_CHUNKED };

struct pk_file {
	char *path; /* relative to DIR, '/'-separated */
	char *folder, *name;
	struct stat st; /* at the walk (virt: st_size only) */
	int root;	/* the folder it is relative to */
	bool over;	/* from --overlay */
	bool virt;	/* --like without DIR: ORIG's entry, copied as stored */
	bool copied;	/* --like: ORIG's stored bytes copied, checked as such at the read back */
	struct arc_entry orig; /* --like: ORIG's entry (copied: its stored bytes and fields) */
	struct sha256 sha;
	uint64_t hashed; /* bytes of it hashed so far (the writer reads each once, in order) */
	struct pk *pk;
};

struct pk {
	int root, root2; /* DIR, --overlay DIR2 */
	int walk_root;	 /* the folder being walked */
	bool walk_over;
	struct pk_file *f;
	size_t n, cap;
	struct pk_file *cur; /* the file open in cur_fd */
	int cur_fd;
	int code; /* first failure: exit code and its line */
	char msg[PATH_MAX + 256];
	const char *hook;    /* PSGFS_PACK_TEST_CHANGE: a file changed after it is read (tests) */
	const char *corrupt; /* PSGFS_PACK_TEST_CORRUPT=N: the archive's byte N from the end
				flipped before the read back (tests) */
	int orig_fd;	     /* --like: ORIG, open until the read back */
	bool renamed;	     /* OUT is in place (a later failure leaves it) */
	const char *out;
};

struct pk_opts {
	enum pk_format format;
	enum pk_compress compress;
	uint64_t min_size;
	bool wide, x360;
	bool shaped;	 /* --format, --compress, --wide or --min-size given */
	bool skip_added; /* --skip-added: overlay files ORIG lacks are skipped, not refused */
	const char *dir, *out, *like, *overlay;
};

struct pk_like {
	int fd;
	struct src s;
	struct arc a;
	bool open, eb;
	uint8_t *head; /* ORIG's bytes before its first entry: header and tables, patched */
	size_t head_len;
	uint32_t shift, rec; /* EB: alignment shift, record width */
	uint64_t align;	     /* entries' alignment: 1 << shift (EB), 16 or 1 (BIGF/BIG4) */
	uint64_t size;	     /* ORIG's file size */
	struct stat st;	     /* ORIG at its opening: it must not change while it is packed */
	size_t *dir;	     /* BIGF/BIG4: where entry i's directory record starts in head */
};

/* pack_walk.c: the rules, the walk, the sources, the temporary file */
size_t pk_put_escaped(char *dst, size_t cap, const char *path);
/* Record the first failure; returns -1 for the callers' convenience. */
int pk_fail(struct pk *pk, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void pk_close_cur(struct pk *pk);
void pk_fill(void *ctx, uint64_t off, uint8_t *dst, size_t n);
enum rc pk_entry_sha(const struct src *s, const struct arc *a, uint32_t i, uint8_t *piece,
		     struct sha256 *sha);
int pk_path_sort(const void *a, const void *b);

/* pack_like.c: --like ORIG.big */
void pk_like_close(struct pk_like *l);
int pk_like_open(struct pk *pk, const char *path, struct pk_like *l);
void pk_like_virtual(struct pk *pk, const struct pk_like *l);
int pk_like_match(struct pk *pk, const struct pk_like *l, const char *orig, bool skip_added);
void pk_like_write(struct pk *pk, struct pk_like *l, int fd, const char *out);

int pk_add(struct pk *pk, const char *path, const struct stat *st);
int pk_walk_root(struct pk *pk, const char *dir, bool over);
void pk_merge(struct pk *pk);
int pk_temp(const char *out, char **tmp);
int pk_sync_folder(const char *out);
/* Every file once more: the same file as at the walk. */
void pk_recheck(struct pk *pk);

#endif
