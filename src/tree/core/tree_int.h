/*
 * Internals shared by the tree core and the namespaces of each format (ns_*.c).
 *
 * Inode numbers are structural: ino = slot << 32 | node. The slot names an asset (a container
 * file) or, in a folder mount, a folder entry; slot 0 is the mount's root (the single file, or
 * the mounted folder). Inside an asset a node is (kind, a, b): kind indexes the format's kind
 * table, a and b are indices the kind interprets (object, bone, mesh, sequence...), packed into
 * 32 bits as kind:6 a:20 b:6, plus one so that 0 is never a node. The same file therefore shows
 * the same numbers on every mount, and any node can be served from its number alone.
 * Limits that follow: 62 kinds per format, indices below 2^20 (a), 2^6 (b).
 */
#ifndef PSGFS_TREE_INT_H
#define PSGFS_TREE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "psgfs/base/buf.h"
#include "psgfs/tree/cache.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/emit.h"
#include "psgfs/base/source.h"
#include "psgfs/tree/tree.h"

#define TNODE_KIND_MAX 62u
#define TNODE_A_MAX    ((1u << 20) - 1)
#define TNODE_B_MAX    ((1u << 6) - 1)

/* The kind of an asset's own bytes (archive entries: asset->own), past every format's kinds. */
#define KIND_OWN 62u

struct tnode {
	uint8_t kind;
	uint32_t a;
	uint8_t b;
};

static inline struct tnode tn(uint8_t kind, uint32_t a, uint8_t b)
{
	struct tnode n = {kind, a, b};

	return n;
}

static inline uint32_t tnode_pack(struct tnode n)
{
	return ((uint32_t)n.kind << 26 | (n.a & TNODE_A_MAX) << 6 | (n.b & TNODE_B_MAX)) + 1;
}

static inline struct tnode tnode_unpack(uint32_t v)
{
	v -= 1;
	return tn((uint8_t)(v >> 26), (v >> 6) & TNODE_A_MAX, (uint8_t)(v & TNODE_B_MAX));
}

/*
 * Permission bits, as a read-only image of an ordinary tree shows them: the owner may write
 * (so a copy made with cp -r can be changed and removed by whoever made it), and reading and
 * searching follow the source's r bits (a folder of a folder mount: its own r and x), never
 * more. Writes fail all the same: EROFS from the read-only mount, or from the daemon with
 * texture mods wherever no picture is written.
 */
static inline mode_t tree_perm_file(mode_t src)
{
	return (src & 0444) | 0200;
}

/* A container shown as a directory: searchable wherever the file is readable. */
static inline mode_t tree_perm_dir(mode_t src)
{
	mode_t r = src & 0444;

	return r | r >> 2 | 0200;
}

/* A folder of a folder mount: its own r and x bits (0744 stays unsearchable). */
static inline mode_t tree_perm_folder(mode_t src)
{
	return (src & 0555) | 0200;
}

static inline tree_ino ino_make(uint32_t slot, struct tnode n)
{
	return (uint64_t)slot << 32 | tnode_pack(n);
}

static inline uint32_t ino_slot(tree_ino ino)
{
	return (uint32_t)(ino >> 32);
}

/* ---- listings ---- */

struct tlist_ent {
	tree_ino ino;
	uint32_t name; /* offset of its NUL-terminated name in the listing's names */
	uint8_t type;  /* enum tree_type */
};

/* Children of a directory as a list() emits them, in any order: the core sorts them. */
struct tlist {
	struct asset *as; /* NULL for folder listings (they add full inode numbers) */
	struct tlist_ent *v;
	size_t n, cap;
	char *names; /* every name, one after the other */
	size_t names_len, names_cap;
	bool oom;
};

/* Add a child node of the listing's asset; the name is printf-formatted (untrusted parts must
 * already be safe path components). Nodes with an index past the packing limits are skipped. */
void tlist_add(struct tlist *l, struct tnode node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tlist_add_ino(struct tlist *l, tree_ino ino, uint8_t type, const char *name);
void tlist_discard(struct tlist *l);
/* The listing sorted by name, names made unique ("~2", "~3"... after a run of equal names);
 * consumes l. O(n log n) whatever the names. */
enum rc tlist_finish(struct tlist *l, struct tree_dir **out);
void tree_dir_free(struct tree_dir *d);
/* Drop the listings kept while read (tree.c; before the cache goes at tree_close). */
void tree_streams_drop(struct tree *t);

/* ---- what a file is made of: parts of items (see include/psgfs/base/emit.h) ---- */

struct layout_part {
	uint64_t off;  /* in the file */
	uint64_t size; /* bytes */
	uint64_t n_items;
	uint32_t item_size; /* fixed-size items; 0 = variable (checkpoints below) */
	uint32_t n_cp;
	struct emit_cp *cp; /* variable parts: where items start, ascending */
};

struct layout {
	uint64_t size;
	unsigned n_parts;
	struct layout_part *parts;
};

/* What a kind's layout() adds to, in file order. */
struct layout_build {
	struct layout_part *parts;
	unsigned n;
	size_t cap;
	bool oom;
};
/* n fixed-size items; their bytes are known from the count alone. */
void layout_fixed(struct layout_build *lb, uint64_t n_items, uint32_t item_size);
/* n items of varying size: the core counts them once (one pass, nothing stored). */
void layout_var(struct layout_build *lb, uint64_t n_items);

/* ---- kinds: one row per kind of node a format shows ---- */

struct asset;

/* What a kind's handlers see: the asset, the node, and the decoded data its `need` names,
 * pinned by the core for the duration of the call. */
struct tctx {
	struct asset *as;
	struct tnode self;
	tree_ino ino;
	const void *need;
};

struct tree_kind {
	const char *what;
	uint8_t type; /* enum tree_type */
	uint8_t need; /* index into the format's needs; 0 = none */
	bool cheap;   /* layout() costs no decode beyond `need`: sizes can go out in listings */
	enum rc (*list)(const struct tctx *c, struct tlist *out);
	/* Files. layout NULL: one variable item, i.e. render() writes the whole file. */
	enum rc (*layout)(const struct tctx *c, struct layout_build *lb);
	enum rc (*render)(const struct tctx *c, unsigned part, uint64_t first, struct emit *e);
	/* Raw files: a slice of the source file served as it is. */
	enum rc (*extent)(const struct tctx *c, uint64_t *off, uint64_t *len);
	/* Symbolic links: the target text. */
	enum rc (*link)(const struct tctx *c, struct buf *target);
	/* A status file (info.txt, errors.txt): rendered afresh on every read, never cached,
	 * and still served once the source changed (it then says so). */
	bool status;
};

/*
 * Decoded structures kinds need. Loaded on first use, success and failure alike remembered.
 * perm: kept as long as the asset is open (structural data bounded by the file's directory,
 * which almost every file of the tree needs); else an evictable cache entry keyed by
 * (asset, need, node.a).
 */
typedef enum rc (*tree_load_fn)(struct asset *as, uint64_t arg, void **data, size_t *bytes,
				void (**dtor)(void *));
struct tree_need {
	tree_load_fn load;
	int perm_slot; /* >= 0: permanent slot; -1: evictable */
};

enum tree_open_fail;

/* What a node is to texture mods (tree_format.texnode). */
enum tree_texnode { TEX_NOT, TEX_DIR, TEX_DDS, TEX_PNG };

struct tree_format {
	const char *name;
	const struct tree_kind *kinds;
	unsigned n_kinds;
	const struct tree_need *needs;
	unsigned n_needs;
	enum tree_open_fail (*mount)(struct asset *as, char *why, size_t whylen);
	void (*unmount)(struct asset *as);
	/* Optional: a file whose bytes are those of another node of the asset (e.g. overlapping
	 * sequences' keys) sets *canon to that node and returns true; the two then share one
	 * layout (one counting pass) and their cached pieces. */
	bool (*same_as)(struct asset *as, struct tnode n, struct tnode *canon);
	/* Optional, texture mods (mods.c): what node n is (textures/, a picture of texture row
	 * *row, or none of them) and the inode of the asset's textures/. Formats without
	 * pictures to write leave both NULL, and mods then writes nothing of theirs. */
	enum tree_texnode (*texnode)(const struct asset *as, struct tnode n, uint32_t *row);
	tree_ino (*textures_dir)(const struct asset *as);
};

/* ---- assets ---- */

#define ASSET_PERM_SLOTS 8

struct asset_perm {
	pthread_mutex_t mu; /* held across the load: concurrent first users wait (lock order:
			       tree_int.h) */
	bool done;
	enum rc r;
	void *data;
	void (*dtor)(void *);
};

/* An asset over bytes that are not a file of its own (an archive's entry): whether they
 * changed under it, and what to free with it. */
struct asset_ext {
	bool (*changed)(void *ctx);
	void (*release)(void *ctx);
	/* The bytes [off, off + len) as pinned ranges in v (released by tree_read_end); v left
	 * empty when they take more ranges than v holds (then read them through src). */
	enum rc (*view)(void *ctx, uint64_t off, size_t len, struct tree_rdv *v);
	void *ctx;
};

struct asset {
	struct tree *t;
	uint32_t slot;
	uint32_t gen;	/* which opening of the slot: memos of an earlier one are never reused */
	uint32_t epoch; /* which content of the slot (texture mods): keys of nodes' pieces,
			   layouts and listings carry it, so a new content renders anew */
	const struct tree_format *fmt;
	void *priv;
	int fd;
	struct src src; /* reads of the snapshot: fail once the source changed */
	struct stat st; /* the source at first open: the snapshot's identity */
	char *path;	/* as opened */
	char *name;	/* last path component */
	char *stem;	/* name without its extension */
	char *why;	/* broken assets: why the format refused it */
	struct asset_perm perm[ASSET_PERM_SLOTS];
	atomic_bool changed;   /* the source no longer matches st */
	atomic_size_t bytes;   /* permanent decodes, charged to the cache */
	struct cache_ent *ent; /* folder mounts: the asset's own cache entry */
	struct asset_ext ext;  /* assets over an archive's entry (else all NULL) */
	struct src inner;      /* ... the entry's own source, which src counts reads of */
	char *own;	       /* archive entries: the name of the file of its own bytes, listed
				  in its root as node KIND_OWN (arcdir.h) */
};

/* Memo keys: owner = asset key or inode, what = space | id. */
enum {
	KEY_LAYOUT = 1,
	KEY_PIECE,
	KEY_DIR,
	KEY_NEED,
	KEY_ASSET,
	KEY_FMT,
	KEY_ARC_INDEX,
	KEY_ARC_PIECE
};
#define KEY_WHAT(space, id) ((uint64_t)(space) << 56 | ((uint64_t)(id) & ((1ull << 56) - 1)))
static inline uint64_t asset_key(const struct asset *as)
{
	return (uint64_t)as->slot << 32 | as->gen;
}

/* The decoded data of need `need` for node arg, pinned (*ent; NULL for permanent ones). */
const void *asset_need(struct asset *as, unsigned need, uint64_t arg, struct cache_ent **ent,
		       enum rc *r);
/* A permanent decode built by fn in slot `slot` (outside the need table). */
void *asset_perm(struct asset *as, unsigned slot, tree_load_fn fn, enum rc *r);
/* A memoised load as the cache holds it. */
struct tree_memo {
	enum rc r;
	void *data;
	void (*dtor)(void *);
};

void tree_memo_free(void *memo);

/* An evictable memo under any key; success and failure alike are remembered. */
void *asset_memo_key(struct asset *as, struct cache_key key, tree_load_fn fn, uint64_t arg,
		     struct cache_ent **ent, enum rc *r);
/* The data of a memo already loaded successfully, pinned; NULL otherwise (nothing loads). */
void *asset_memo_peek(struct asset *as, struct cache_key key, struct cache_ent **ent);
/* An evictable memo keyed (asset, KEY_FMT | id); pinned in *ent. */
void *asset_memo(struct asset *as, uint64_t id, tree_load_fn fn, uint64_t arg,
		 struct cache_ent **ent, enum rc *r);
void asset_unpin(struct asset *as, struct cache_ent *ent);
/* True when the source changed since the snapshot was taken (checks it now). The first time
 * it finds a change, the mount's on_change hook hears of every status file of the asset. */
bool asset_source_changed(struct asset *as);

/*
 * Lock order. Every mutex of the daemon, outermost first: one may be held while taking any
 * listed after it, never one listed before it (two of the same line: never both, except the
 * asset_perm of different assets, taken asset by asset as a load opens a companion). Leaves
 * call nothing that locks. Cited from each declaration as "lock order: tree_int.h".
 *
 *  1. mods.commit_mu (mods_int.h)    one commit: reads the tree, writes OUTDIR, resets slots
 *  2. mod_content.mu (mods_int.h)    a picture's content while it is committed or read
 *  2a. scene.bounds_mu (ns_district.c) a district scene's bounds, found under it (opens
 *                                    arenas: everything below; only the scene's JSON takes it)
 *  3. asset_perm.mu (here)           held across a permanent load, which may open companions
 *  4. psg_mount.comp_mu (ns_psg.h)   a model's companion arena, opened under it
 *  5. guid_index.build_mu            the one build of an index (walks the folder, opens
 *                                    archives: everything below)
 *  6. arcdir.nest_mu                 a nested archive while it opens (reads its parent)
 *  7. arcdir.build_mu                an archive's nodes, built once (registers its slots)
 *  8. folder.omu                     one opening of an archive file
 *  9. folder.amu                     the open assets' cache entries and their LRU
 * 10. folder.mu                      entries, listings, the LRU's links (lru_trim closes the
 *                                    least recently used archive under it: fd_mu below)
 * 11. arcdir.fd_mu                   a folder's archive descriptor. Never held while the folder
 *                                    is asked anything: fd_acquire reopens without it (it
 *                                    used to hold it across the folder's reopen, which takes
 *                                    folder.mu: the inverse of 10 -> 11; test arcdir_lock_order)
 * 12. mods.mu (mods_int.h)           the slot and temporary tables (leaf but for cache.mu)
 *     tree.streams_mu (here)         listings kept while read (takes cache.mu)
 * 13. leaves: tree.cont_mu (container.c), cache.mu (cache.c; entries' dtors run after it is
 *     released), arcdir.mu, arcdir.same_mu, arc_ahead.mu (arcdir_read.c; the thread decodes
 *     without it), guid_index.mu, psgfs_ll_inval.mu (fuse/ll.h), g_stats_lock and
 *     g_fuse_err_lock (main.c).
 *
 * Adding a mutex: put it on this list and cite it; never call into another module's
 * functions while holding a leaf.
 */

/* ---- the mount ---- */

struct folder;
struct mods;

/* A listing the cache does not keep, kept whole while it is being read (tree.c). */
#define TREE_STREAMS 4
struct tree_stream {
	tree_ino ino;
	struct tree_dir *d;
	struct cache_ent *ent; /* the stream's pin */
	size_t held;	       /* charged with cache_hold */
	uint64_t used;	       /* last use, CLOCK_MONOTONIC nanoseconds */
};

struct arc_ahead;
struct arcdir_host;
struct crange;

struct tree {
	struct tree_opts opts;
	void (*on_change)(void *ctx, tree_ino ino); /* a status file's content changed */
	void *on_change_ctx;
	void (*on_entry)(void *ctx, tree_ino parent, const char *name); /* a name's target */
	void *on_entry_ctx;
	struct cache *cache;
	/* single-file mounts: the asset in slot 0, always open; texture mods replace it with a
	 * new opening (the old one is kept until unmount: readers may still hold it) */
	_Atomic(struct asset *) single;
	struct folder *fold;		      /* folder mounts */
	struct mods *mods;		      /* texture mods (mods.c), NULL without -o mods */
	const struct tree_mods_ops *mods_ops; /* ... and what it adds to the tree (mods_init) */
	struct stat mnt; /* tree_set_mount: the mount point before mounting (st_ino 0: none) */
	dev_t own_dev;	 /* ... and the mount's own device (0: none) */
	atomic_uint_fast64_t renders, render_bytes, render_failures, raw_reads, raw_bytes;
	atomic_uint_fast64_t asset_opens;
	atomic_uint_fast64_t arc_indexes, arc_pieces, arc_piece_bytes;
	/* arcdir_read.c's decode-ahead thread, once started */
	_Atomic(struct arc_ahead *) arc_ahead;
	const struct arcdir_host *arc_host; /* the folder layer, as archives see it (arcdir.h) */
	pthread_mutex_t streams_mu;	    /* lock order: tree_int.h */
	struct tree_stream streams[TREE_STREAMS];
	/* containers (container.c): ranges of slots and who shows them, ascending; the base
	 * container shows every other slot */
	pthread_mutex_t cont_mu; /* a leaf (lock order: tree_int.h) */
	struct crange *ranges;
	size_t n_ranges, cap_ranges;
	const struct container_ops *base_ops;
	void *base_c;
};

/* True when a directory entry (its folder's device, its d_ino) is the mount point of this
 * mount, which must never be entered (tree_set_mount). */
static inline bool tree_is_mount_point(const struct tree *t, dev_t dir_dev, ino_t d_ino)
{
	return t->mnt.st_ino != 0 && d_ino == t->mnt.st_ino && dir_dev == t->mnt.st_dev;
}

/* The open asset of a slot, pinned in *pin (NULL when nothing needs releasing). NULL with *r
 * for a folder, a link, or a failure. */
struct asset *tree_asset_get(struct tree *t, uint32_t slot, struct cache_ent **pin, enum rc *r);
void tree_asset_put(struct tree *t, struct cache_ent *pin);

/*
 * Open a file as an asset of the mount, relative to dirfd. STRICT: the format comes from the
 * first bytes and any failure is returned (single-file mounts). LENIENT: a file that fails to
 * open as a container opens as a "broken" asset that explains itself (folder mounts). PLAIN:
 * the bytes are served as they are. expect: the snapshot identity to hold the file to (NULL:
 * take it now; otherwise links are not followed).
 */
enum asset_mode { ASSET_STRICT, ASSET_LENIENT, ASSET_PLAIN };
enum tree_open_fail asset_open(struct tree *t, uint32_t slot, int dirfd, const char *path,
			       const struct stat *expect, enum asset_mode mode, struct asset **out,
			       char *why, size_t whylen);
/* The same, opening `path` (relative to dirfd) for the asset whose own path is `logical`
 * (texture mods: the arena in OUTDIR stands for the source file). */
enum tree_open_fail asset_open_as(struct tree *t, uint32_t slot, const char *logical, int dirfd,
				  const char *path, const struct stat *expect, enum asset_mode mode,
				  struct asset **out, char *why, size_t whylen);
/* The same over the bytes of s (an archive's entry; read through, never a file of its own):
 * st is what the asset shows of its source, ext how to tell a change and what to free (it is
 * released on failure too). */
enum tree_open_fail asset_open_src(struct tree *t, uint32_t slot, const char *logical,
				   const struct src *s, const struct stat *st, enum asset_mode mode,
				   const struct asset_ext *ext, struct asset **out, char *why,
				   size_t whylen);
/* List the asset's own bytes in its root under name (archive entries). */
enum rc asset_set_own(struct asset *as, const char *name);
/* A broken asset that only explains why it could not be opened. */
enum tree_open_fail asset_open_broken(struct tree *t, uint32_t slot, const char *name,
				      const struct stat *st, const char *why, struct asset **out);
void asset_close(struct asset *as);
const struct tree_format *asset_detect(const uint8_t *head, size_t n);

/* ---- rendering (render.c) ---- */

enum rc render_size(struct asset *as, tree_ino ino, struct tnode n, uint64_t *size);
bool render_size_known(struct asset *as, tree_ino ino, struct tnode n, uint64_t *size);
enum rc render_read(struct asset *as, tree_ino ino, struct tnode n, uint64_t off, size_t len,
		    struct tree_rdv *v);

/* ---- containers: what shows each slot (container.c) ---- */

struct container_ops;

/* A slot as the container showing it sees it. */
struct cref {
	const struct container_ops *ops;
	void *c; /* the container: struct folder, struct arcdir, struct mods... */
	uint32_t slot;
	uint32_t node; /* the slot's place in c (slot - first of c's range; the slot itself in the
			  base container) */
};

/* What a slot shows. */
enum cslot {
	CS_NONE,  /* nothing (a slot no entry has) */
	CS_DIR,	  /* a directory the container lists itself */
	CS_ASSET, /* a file, or a container file, served by an asset (asset_get) */
	CS_LINK,  /* a symbolic link (readlink) */
};

/*
 * One kind of container: the mounted folder, an archive (arcdir.c), the single asset of a
 * single-file mount, editors' temporaries (mods.c). The core resolves a slot to its container
 * (container_at) and calls these. An operation a container does not have is NULL, and each
 * caller says what that means (an error, or "the asset answers"), never another container's
 * answer. A new container is one table and a range of slots (container_add).
 */
struct container_ops {
	const char *name;
	/* Every inode number of its slots is its own, none an asset's node (temporaries). */
	bool own_nodes;
	enum cslot (*kind)(struct tree *t, const struct cref *r);
	/* The slot's node (slot << 32 | 1; any inode of the slot with own_nodes), from what the
	 * container knows (stat opens no file). NULL: the slot's asset answers. */
	enum rc (*getattr)(struct tree *t, const struct cref *r, tree_ino ino,
			   struct tree_stat *out);
	/* Children of a CS_DIR slot as full inode numbers (tlist_add_ino). */
	enum rc (*list)(struct tree *t, const struct cref *r, struct tlist *out);
	/* Names it adds to any directory `parent` (temporaries); RC_NOENT when none. */
	enum rc (*lookup)(struct tree *t, const struct cref *r, tree_ino parent, const char *name,
			  struct tree_stat *out);
	enum rc (*readlink)(struct tree *t, const struct cref *r, struct buf *out);
	/* own_nodes: the bytes of node ino. */
	enum rc (*read)(struct tree *t, const struct cref *r, tree_ino ino, uint64_t off,
			size_t len, struct tree_rdv *v);
	/* The open asset of a CS_ASSET slot, opening it when needed, pinned in *pin. */
	struct asset *(*asset_get)(struct tree *t, const struct cref *r, struct cache_ent **pin,
				   enum rc *rc);
	/* Texture mods: the slot's content changed. Its open asset is closed (freed when
	 * unpinned) and the next use opens it again as a first opening. */
	void (*reset)(struct tree *t, const struct cref *r);
	/* Where the slot sits: its parent slot and its name (for links between files). */
	bool (*entry_name)(struct tree *t, const struct cref *r, uint32_t *parent,
			   const char **name);
	/* Its path inside what the container shows ("data/x/y.psg" in the mounted folder, in
	 * the archive); false if too long. */
	bool (*relpath)(struct tree *t, const struct cref *r, char *out, size_t n);
	/* Its path in the mount ("data/a.big/data/x/y.psg"; "" for the root). */
	bool (*mountpath)(struct tree *t, const struct cref *r, char *out, size_t n);
	/* A file beside it named `name` (exact, else ignoring case): its slot; 0 if none. */
	uint32_t (*sibling)(struct tree *t, const struct cref *r, const char *name);
	/* The other files beside it, as slots in listing order (*out: free()); 0 and *out NULL
	 * when none or out of memory. */
	size_t (*siblings)(struct tree *t, const struct cref *r, uint32_t **out);
};

/* The container of slot: the one registered for a range holding it, else the mount's base
 * container (the mounted folder, or the single asset). False when there is none. */
bool container_at(struct tree *t, uint32_t slot, struct cref *out);
/* Slots first...last are shown by c through ops from now on (node = slot - first). */
enum rc container_add(struct tree *t, uint32_t first, uint32_t last,
		      const struct container_ops *ops, void *c);
void container_set_base(struct tree *t, const struct container_ops *ops, void *c);
void containers_free(struct tree *t);

/* The operations above for a slot, through its container: what a format namespace asks of
 * its asset's neighbours. CS_NONE, false or 0 where the container has no such operation. */
enum cslot tree_slot_kind(struct tree *t, uint32_t slot);
bool tree_slot_entry_name(struct tree *t, uint32_t slot, uint32_t *parent, const char **name);
bool tree_slot_relpath(struct tree *t, uint32_t slot, char *out, size_t n);
bool tree_slot_mountpath(struct tree *t, uint32_t slot, char *out, size_t n);
uint32_t tree_slot_sibling(struct tree *t, uint32_t slot, const char *name);
size_t tree_slot_siblings(struct tree *t, uint32_t slot, uint32_t **out);
void tree_slot_reset(struct tree *t, uint32_t slot);
/* The children of a CS_DIR slot (a folder, or an archive file's root), as its container lists
 * them; RC_NOTDIR for any other slot. */
enum rc tree_slot_list(struct tree *t, uint32_t slot, struct tlist *out);
/* True when inode ino is answered by its container, not by an asset's node. */
bool tree_ino_is_container(struct tree *t, tree_ino ino);

/* ---- folder mounts (folder*.c; their slots through folder_container) ---- */

enum tree_open_fail folder_open(struct tree *t, const char *path, char *why, size_t whylen);
/* A mount of one archive file: the folder layer's root is the archive (arcdir.h). */
enum tree_open_fail folder_open_archive(struct tree *t, const char *path, char *why, size_t whylen);
void folder_close(struct folder *f);
const struct stat *folder_root_stat(const struct folder *f);
void folder_set_mount(struct folder *f, const struct stat *mnt_before, dev_t own_dev);
/* The mount's index of per-texture arenas by name (guid_index.h; layers that add slots feed
 * it), NULL outside folder mounts. */
struct guid_index *folder_guid_index(struct tree *t);
/* The mount's index of texture arenas by the GUIDs of their TableOfContents, whatever their
 * names (guid_index.h; built on its first lookup: folder_index.c, folder_toc_build). */
struct guid_index *folder_toc_index(struct tree *t);
/* Bytes the TOC index's build reads in all (256 MiB; tests lower it). */
extern _Atomic uint64_t folder_toc_budget;
/* Nested archives each texture index's build opens at most (4096; tests lower it). */
extern _Atomic uint32_t folder_nested_max;
/* The slot of the entry at `path` inside the mounted folder ("data/x/0x...psg"), listing the
 * folders on the way as a visit would; 0 when there is none. */
uint32_t folder_slot_at(struct tree *t, const char *path);

/* ---- texture mods (mods.c, mods_commit.c) ---- */

#define TREE_TEMP_SLOT 0xFFFFFFFFu /* inode slot of editors' temporaries */

/* Called by tree_open/tree_close (open.c) only: the rest of the tree reaches mods through
 * t->mods_ops (below) and the temporaries' container, so no file of it calls into mods. */
enum tree_open_fail mods_init(struct tree *t, char *why, size_t whylen);
void mods_free(struct mods *m);

/* What mods adds to the rest of the tree, set by mods_init (NULL without -o mods). */
struct tree_mods_ops {
	uint32_t (*epoch)(struct tree *t, uint32_t slot);
	bool (*open_asset)(struct tree *t, uint32_t slot, const char *logical, const char *rel,
			   enum asset_mode mode, struct asset **out, enum tree_open_fail *f,
			   char *why, size_t whylen);
	void (*stat)(struct tree *t, const struct asset *as, struct tnode n, struct tree_stat *st);
	void (*status)(struct asset *as, bool errors, struct buf *out);
};

/* The content epoch of a slot (0 until a mod changed it in this mount). */
static inline uint32_t mods_epoch(struct tree *t, uint32_t slot)
{
	return t->mods_ops ? t->mods_ops->epoch(t, slot) : 0;
}

/* Open the asset of a slot from OUTDIR/rel when a mod of it is there (true, *f and *out as
 * asset_open gives them); false when there is none. logical: the asset's own path. */
static inline bool mods_open_asset(struct tree *t, uint32_t slot, const char *logical,
				   const char *rel, enum asset_mode mode, struct asset **out,
				   enum tree_open_fail *f, char *why, size_t whylen)
{
	return t->mods_ops &&
	       t->mods_ops->open_asset(t, slot, logical, rel, mode, out, f, why, whylen);
}

/* Permission bits and the writable flag of a node of an asset. */
static inline void mods_stat(struct tree *t, const struct asset *as, struct tnode n,
			     struct tree_stat *st)
{
	if (t->mods_ops)
		t->mods_ops->stat(t, as, n, st);
}

/* info.txt (errors: errors.txt) lines about the asset's mods. */
static inline void mods_status(struct asset *as, bool errors, struct buf *out)
{
	if (as->t->mods_ops)
		as->t->mods_ops->status(as, errors, out);
}

/* Temporaries: inode numbers in slot TREE_TEMP_SLOT (a container of their own, mods.c). */
static inline bool mods_is_temp(tree_ino ino)
{
	return ino_slot(ino) == TREE_TEMP_SLOT;
}

extern const struct tree_format tree_format_psk;
extern const struct tree_format tree_format_psa;
extern const struct tree_format tree_format_psg;
extern const struct tree_format tree_format_district;
extern const struct tree_format tree_format_plain;
extern const struct tree_format tree_format_broken;

#endif
