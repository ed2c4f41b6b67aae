/*
 * Internals shared by the tree core and the per-format namespaces (fmt_*.c).
 * A node is (kind, a, b): kind indexes the format's kind table, a and b are indices the kind
 * interprets (chunk number, bone, mesh, sequence...). The inode number is that triple packed,
 * so it is the same on every mount of the same file.
 */
#ifndef PSGFS_TREE_INT_H
#define PSGFS_TREE_INT_H

#include <pthread.h>
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
	enum rc (*list)(struct tree *t, struct tnode self, struct tlist *out);
	enum rc (*render)(struct tree *t, struct tnode self, struct buf *out);
	/* Raw files: a slice of the source file served as is. */
	enum rc (*extent)(struct tree *t, struct tnode self, uint64_t *off, uint64_t *len);
};

struct tree_format {
	const char *name;
	const struct tree_kind *kinds;
	size_t n_kinds;
	enum tree_open_fail (*mount)(struct tree *t, char *why, size_t whylen);
	void (*unmount)(struct tree *t);
};

/*
 * Rendered files larger than the cache budget cannot stay in the cache; without a place to live
 * every read chunk would render them again. A few such files are kept pinned here from their
 * first render until a read reaches their end (cp, cat) or a newer one displaces them.
 */
#define TREE_BIG_SLOTS 2
struct tree_big {
	tree_ino ino;
	struct cache_ent *ent;
	void *content;
};

/* Structural decodes (a mesh's whole parse, an arena's scene) live as long as the mount: they
 * are bounded by the file's directory, and every file of the tree needs them. */
#define TREE_PERM_SLOTS 4
struct tree_perm {
	pthread_mutex_t mu; /* per slot: one decode may need another (the sweep needs the scene) */
	bool done;
	enum rc r;
	void *data;
	void (*dtor)(void *);
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
	struct tree_perm perm[TREE_PERM_SLOTS];
	pthread_mutex_t big_mu;
	struct tree_big big[TREE_BIG_SLOTS];
	unsigned big_next;
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
typedef enum rc (*tree_load_fn)(struct tree *t, uint64_t arg, void **data, size_t *bytes,
				void (**dtor)(void *));
void *tree_memo(struct tree *t, uint64_t key, tree_load_fn fn, uint64_t arg, struct cache_ent **ent,
		enum rc *r);

/*
 * Like tree_memo, but built once per mount and never evicted (slot < TREE_PERM_SLOTS). The data
 * needs no pin. A failure is remembered too.
 */
void *tree_memo_perm(struct tree *t, unsigned slot, tree_load_fn fn, enum rc *r);

extern const struct tree_format tree_format_psk;
extern const struct tree_format tree_format_psa;
extern const struct tree_format tree_format_psg;

#endif
