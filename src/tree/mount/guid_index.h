/*
 * GUID -> per-texture arenas of a folder (or archive) mount, by name (guid_index.c;
 * docs/skate-objects.md, "Per-texture arenas"). The game names a standalone texture arena
 * after the GUID of its only TableOfContents entry: "0x<16 hex digits>.psg" or ".rx2" (any
 * case), or "<16 hex digits>.psg" as unpacking tools write them. Nothing is opened to fill
 * the index: callers open a hit and check that its TOC holds the GUID.
 *
 * Filling it. guid_index_new takes a build callback, run once, on the first lookup (never at
 * mount time): the folder layer's walks the source folders by name (folder_guid_build).
 * Any layer may also FEED entries at any time, from any thread, before or after the build:
 * guid_index_feed(ix, path, slot) with the file's path inside the mount (its last component
 * is the name the GUID is read from; the path also orders hits and makes links) and its slot
 * in the folder layer, or 0 when it has none yet (guid_index_set_slot remembers the slot once
 * found). An archive layer feeds its entries named 0x<GUID>.psg when their archive is listed
 * or from its own build step; feeding the same path again only fills a missing slot.
 *
 * The same structure, fed with guid_index_feed_guid, is the mount's second index: texture
 * arenas of any name by the GUIDs their TableOfContents names (folder_toc_index, whose build
 * reads each arena's header and TOC; docs/skate-objects.md, "Texture arenas under any name").
 */
#ifndef PSGFS_TREE_GUID_INDEX_H
#define PSGFS_TREE_GUID_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/result.h"

struct guid_index;
typedef void (*guid_index_build_fn)(void *ctx, struct guid_index *ix);

/* build may be NULL (an index filled by feeding only). NULL when out of memory. */
struct guid_index *guid_index_new(guid_index_build_fn build, void *ctx);
void guid_index_free(struct guid_index *ix);

/* True when `name` (a last path component) is a GUID arena's name; its GUID in *guid. */
bool guid_index_name(const char *name, uint64_t *guid);

/* Add the file at `path` (inside the mount, '/'-separated) if its name is a GUID arena's;
 * slot: its folder-layer slot, 0 if not known yet. RC_OK also for names that are not. */
enum rc guid_index_feed(struct guid_index *ix, const char *path, uint32_t slot);
/* Add the file at `path` as holding `guid`, whatever its name (the index of texture arenas by
 * their TableOfContents, folder_toc_index). */
enum rc guid_index_feed_guid(struct guid_index *ix, const char *path, uint64_t guid, uint32_t slot);
/* The slot of the file at `path`, found by the caller (every entry of that path). */
void guid_index_set_slot(struct guid_index *ix, const char *path, uint32_t slot);

struct guid_hit {
	char *path;    /* a copy: free() it */
	uint32_t slot; /* 0: not known yet */
};
/* The files named after guid (building the index first if it was not), best first: those
 * whose extension is `ext` (the model's platform; NULL: any) before the others, then by
 * path. At most max of them in out; returns how many (0 also when out of memory). */
size_t guid_index_find(struct guid_index *ix, uint64_t guid, const char *ext, struct guid_hit *out,
		       size_t max);
/* Entries held (after the build, if it ran). */
size_t guid_index_count(struct guid_index *ix);
/* Whether the build has run (it runs on the first guid_index_find or _count). */
bool guid_index_built(struct guid_index *ix);
/* The build says it stopped at one of its bounds (entries past it are left out). */
void guid_index_set_partial(struct guid_index *ix);
bool guid_index_partial(struct guid_index *ix);

#endif
