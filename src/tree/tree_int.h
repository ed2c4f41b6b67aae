/*
 * Internals shared by the tree core and the per-format namespaces (fmt_*.c).
 * A node is (kind, a, b): kind indexes the format's kind table, a and b are indices the kind
 * interprets (chunk number, bone, mesh, sequence...). The inode number is that triple packed,
 * so it is the same on every mount of the same file.
 */
#ifndef PSGFS_TREE_INT_H
#define PSGFS_TREE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "psgfs/buf.h"
#include "psgfs/cache.h"
#include "psgfs/source.h"
#include "psgfs/tree.h"

struct tnode {
	uint16_t kind;
	uint32_t a;
	uint16_t b;
};

static inline tree_ino tnode_ino(struct tnode n)
{
	return (((uint64_t)n.kind << 48) | ((uint64_t)n.a << 16) | n.b) + 1;
}

static inline struct tnode ino_tnode(tree_ino ino)
{
	struct tnode n;

	ino -= 1;
	n.kind = (uint16_t)(ino >> 48);
	n.a = (uint32_t)(ino >> 16);
	n.b = (uint16_t)ino;
	return n;
}

static inline struct tnode tn(uint16_t kind, uint32_t a, uint16_t b)
{
	struct tnode n = {kind, a, b};

	return n;
}

struct tlist_ent {
	char *name;
	struct tnode node;
	bool is_dir;
};

/* Children of a directory as a kind's list() emits them (any order; the core sorts). */
struct tlist {
	struct tree *t;
	struct tlist_ent *v;
	size_t n, cap;
	size_t bytes;
	bool oom;
};

void tlist_add(struct tlist *l, struct tnode node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct tree_kind {
	const char *what;
	bool is_dir;
	enum psg_result (*list)(struct tree *t, struct tnode self, struct tlist *out);
	enum psg_result (*render)(struct tree *t, struct tnode self, struct buf *out);
	/* Raw files: a slice of the source file served as is. */
	enum psg_result (*extent)(struct tree *t, struct tnode self, uint64_t *off, uint64_t *len);
};

struct tree_format {
	const char *name;
	const struct tree_kind *kinds;
	size_t n_kinds;
	enum tree_open_fail (*mount)(struct tree *t, char *why, size_t whylen);
	void (*unmount)(struct tree *t);
};

struct tree {
	const struct tree_format *fmt;
	void *priv;
	int fd;
	struct src src;
	struct stat st;
	struct tree_opts opts;
	char *path;
	char *stem; /* file name without directory and extension */
	struct cache *cache;
	atomic_uint_fast64_t renders, render_bytes, render_failures, raw_reads, raw_bytes;
};

/* Cache key spaces; formats use KEY_FMT and up for their parsed structures. */
enum { KEY_CONTENT = 1, KEY_SIZE, KEY_DIR, KEY_FMT };
#define TREE_KEY(space, id) (((uint64_t)(space) << 56) | ((id) & ((1ull << 56) - 1)))

/*
 * Memoised load of a parsed structure. fn builds it (data, approximate bytes, destructor);
 * success and failure are both remembered, so a broken object is decoded once. Returns the
 * pinned data (release with cache_unpin(t->cache, *ent)) or NULL with *r set.
 */
typedef enum psg_result (*tree_load_fn)(struct tree *t, uint64_t arg, void **data, size_t *bytes,
					void (**dtor)(void *));
void *tree_memo(struct tree *t, uint64_t key, tree_load_fn fn, uint64_t arg,
		struct cache_ent **ent, enum psg_result *r);

extern const struct tree_format tree_format_psk;
extern const struct tree_format tree_format_psa;
extern const struct tree_format tree_format_psg;

#endif
