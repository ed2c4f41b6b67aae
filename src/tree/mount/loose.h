/*
 * The loose view of a game folder (-o layout=loose, docs/archives.md "The loose view"): every
 * .big archive below the mounted folder is shown as the loose files it holds, at the paths the
 * game loads them from, merged into the folder; the archive itself is hidden; every file is
 * plain (its own bytes); with -o mods=OUTDIR, OUTDIR's files are layered over everything.
 *
 * The folder layer (folder.c) still serves the folder's own files and folders; this module
 * adds the namespace the archives (and OUTDIR) bring: built once at mount from the archives'
 * tables (no entry is read), immutable afterwards, its nodes in a range of slots of their own.
 * Who wins where two sources hold one path, in this order: a file of OUTDIR, then a loose
 * file or folder of the game folder, then the archives in the bytewise order of their paths,
 * each in table order (the first to claim a path keeps it; a file where an earlier source has
 * a folder, or below an earlier source's file, loses).
 */
#ifndef PSGFS_LOOSE_H
#define PSGFS_LOOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "tree/core/tree_int.h"

struct loose;
struct arcdir;

/*
 * The path an entry of raw path `raw` is loaded from, relative to the folder holding data/:
 * cut at '/' and '\', empty and "." components dropped, each component a safe name as in
 * archive mounts; a path rooted at the PS3 game folder ("USRDIR/data/...") loses "USRDIR/",
 * one rooted at data/ ("content/...") gains "data/" (the candidates of UTT's game_route.py).
 * False when nothing is left or it does not fit in n bytes. *changed: other than raw.
 */
bool loose_game_path(const char *raw, char *out, size_t n, bool *changed);

/* What the view asks of the folder layer, which sits above it (folder.c sets it, like
 * struct arcdir_host): the view calls no folder function. */
struct loose_host {
	/* n consecutive slots of the mount for the view's nodes; the first, or 0 when the
	 * mount has run out of them. */
	uint32_t (*slots_take)(struct tree *t, uint32_t n);
	/* The mounted folder's own stat (the owner and times of the view's folders). */
	const struct stat *(*root_stat)(const struct folder *f);
};

/* Build the view of the folder open as root_fd (the tables of its archives read, OUTDIR's
 * files listed); warnings (archives not unpacked, paths lost to another source) go to stderr.
 * NULL only for want of memory or slots (why says so). host outlives the view. */
struct loose *loose_open(struct tree *t, int root_fd, const struct loose_host *host, char *why,
			 size_t whylen);
void loose_free(struct loose *L);

/* A file of the folder that is an archive the view unpacked: it is not listed. */
bool loose_hides(const struct loose *L, const struct stat *st);
/* Add to out (a real folder's listing, slot dir_slot) what the view brings there: mods take
 * the place of what they shadow, other entries go only where no name is taken. */
enum rc loose_merge(struct tree *t, struct loose *L, uint32_t dir_slot, struct tlist *out);

/* The nodes of the view (slots the view owns). */
bool loose_owns(const struct loose *L, uint32_t slot);
bool loose_is_dir(const struct loose *L, uint32_t slot);
enum rc loose_getattr(struct tree *t, struct loose *L, uint32_t slot, struct tree_stat *out);
enum rc loose_list(struct tree *t, struct loose *L, uint32_t slot, struct tlist *out);
struct asset *loose_asset_get(struct tree *t, struct loose *L, uint32_t slot,
			      struct cache_ent **pin, enum rc *r);

/* The descriptors of the archives the view reads: at most max_assets open, the least recently
 * used closed and reopened (by its slot, checked to be the same file) when read again. folder.c
 * hands folder_arc_reopen and folder_arc_used of the view's archives to these. */
bool loose_arc_owns(const struct loose *L, uint32_t slot);
int loose_arc_reopen(struct loose *L, uint32_t slot);
void loose_arc_used(struct loose *L, uint32_t slot, struct arcdir *ad);

#endif
