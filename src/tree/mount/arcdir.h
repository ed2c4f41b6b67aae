/*
 * Archives as directories (docs/archives.md): an EB/BIGF/BIG4 archive or an SFIL stream file
 * opened once (header and tables only) and presented as a tree of nodes. Node 0 is the archive's
 * root, 1 and 2 its info.txt and errors.txt, 3 + i the entry i of the table, the folders after.
 * Node k > 0 is the slot base + k of the folder layer (folder.c hands out the range); node 0 is
 * the slot of whatever shows the archive (its file in the folder, an entry of the parent archive,
 * or the mount's root). An entry's bytes are read through its index (built on first use) and its
 * pieces, both cache entries; any format opens on them as on a file.
 */
#ifndef PSGFS_ARCDIR_H
#define PSGFS_ARCDIR_H

#include "psgfs/formats/archive.h"
#include "tree/core/tree_int.h"

#define ARCDIR_DEPTH_MAX 4 /* archives in archives: deeper ones are plain files */
#define ARCDIR_FIRST	 3 /* node of entry 0 */

enum an_type {
	AN_DIR = 1, /* a folder of the archive (or its root) */
	AN_FILE,    /* an entry served as its bytes */
	AN_ASSET,   /* an entry opened as an asset (arena, PSK, PSA): a directory */
	AN_ARCHIVE, /* an entry that is itself an archive: a directory */
	AN_INFO,
	AN_ERRORS,
};

struct arcdir;

/*
 * Open the archive in fd (ownership moves, closed on failure too) with its ATOC table in toc_fd
 * (-1: none): its header and tables are read, the archive adopted by the folder layer (freed
 * with the mount). st: the file as stat(2) saw it (the snapshot). name: its file name. An
 * archive whose tables cannot be read is still made (failure class returned, *out set) and
 * only explains itself; NULL only with TREE_FAIL_OTHER.
 */
enum tree_open_fail arcdir_open_fd(struct tree *t, int fd, int toc_fd, const struct stat *st,
				   const char *name, uint32_t owner_slot, struct arcdir **out,
				   char *why, size_t whylen);
void arcdir_free(struct arcdir *ad);

/* Build the nodes and take their slots, once (the first listing of the archive); every
 * function below but arcdir_type of node 0 needs it done. */
enum rc arcdir_ensure(struct arcdir *ad);

/* Every entry opened as an arena (.psg, .rx2) of a built archive (nested archives aside): fn
 * gets its path in the mount, its slot and a source over its unpacked bytes (valid during the
 * call). For the mount's index of texture arenas by TableOfContents (folder_toc_build). */
typedef void (*arcdir_arena_fn)(void *ctx, const char *path, uint32_t slot, const struct src *s);
void arcdir_each_arena(struct arcdir *ad, arcdir_arena_fn fn, void *ctx);

/* Nodes past the root, i.e. the slots the folder layer must hand out (base + 1 ...). */
uint32_t arcdir_span(const struct arcdir *ad);
void arcdir_set_base(struct arcdir *ad, uint32_t base);
uint32_t arcdir_slot(const struct arcdir *ad, uint32_t node);

enum an_type arcdir_type(const struct arcdir *ad, uint32_t node);
enum rc arcdir_getattr(struct arcdir *ad, uint32_t node, struct tree_stat *out);
/* Children of a folder node (node 0 included); nested archives list through their own. */
enum rc arcdir_list(struct arcdir *ad, uint32_t node, struct tlist *out);
bool arcdir_entry_name(const struct arcdir *ad, uint32_t node, uint32_t *parent_slot,
		       const char **name);
/* The node's path from the archive's root ("data/content/x.psg"); false if too long. */
bool arcdir_relpath(const struct arcdir *ad, uint32_t node, char *out, size_t n);
/* A file or asset beside node named name (exact, else ignoring case): its slot; 0 if none. */
uint32_t arcdir_sibling(const struct arcdir *ad, uint32_t node, const char *name);

/* The asset serving a file or asset node (the status files, an entry's bytes or its tree). */
enum rc arcdir_asset_open(struct arcdir *ad, uint32_t node, struct asset **out);

/*
 * The archive an AN_ARCHIVE node holds, opened on first use (its slots registered through
 * folder_arc_register); a node that does not open as one shows info.txt saying why.
 */
struct arcdir *arcdir_nested(struct arcdir *ad, uint32_t node, enum rc *r);

/* Stop the tree's decode-ahead thread (tree_close, before the cache goes); idempotent. */
void arcdir_ahead_stop(struct tree *t);

/*
 * The descriptor of an archive of a folder mount is one of the mount's max_assets (folder.c
 * closes the least recently used). arcdir_fd_live: it is open and not being closed;
 * arcdir_fd_close: close it now, or when its last reader is done. Reads reopen it.
 */
bool arcdir_fd_live(struct arcdir *ad);
void arcdir_fd_close(struct arcdir *ad);
/* folder.c: the archive file of slot opened again (-1, errno set, on failure) ... */
int folder_arc_reopen(struct tree *t, uint32_t slot);
/* ... and an archive's descriptor was used: it joins or moves up the open assets' LRU. */
void folder_arc_used(struct tree *t, uint32_t slot, struct arcdir *ad);

/* folder.c: keep an opened archive until the mount ends (arcdir_open_* do it) ... */
enum rc folder_arc_adopt(struct tree *t, struct arcdir *ad);
/* ... and hand out slots for its nodes, remembered for slot lookups (arcdir_ensure). */
enum rc folder_arc_register(struct tree *t, struct arcdir *ad);

/*
 * The loose view (loose.c) reads an archive's table and its entries by index, without the
 * node tree (arcdir_ensure is never called): the parsed table, why the tables could not be
 * read or indexed (NULL: they were), one raw path component made a safe name as the tree
 * names it (out: ARCDIR_NAME_BUF bytes), and a plain asset over entry i in slot `slot`.
 */
#define ARCDIR_NAME_BUF 264
const struct arc *arcdir_arc(const struct arcdir *ad);
const char *arcdir_why(const struct arcdir *ad); /* NULL, or why its tables were not read */
size_t arcdir_safe_name(const char *p, size_t n, char *out, bool *changed);
enum rc arcdir_entry_open(struct arcdir *ad, uint32_t i, uint32_t slot, const char *logical,
			  struct asset **out);

#endif
