/*
 * Internals of the district view. ns_district_base.c defines what the parts share: the files
 * beside the map, the manifests and the scan, the arenas of the collection files, the objects'
 * decode as others peek at it. The parts, ns_district_scene.c (scene.glb, tiles/),
 * ns_district_objects.c (props.tsv, rails.tsv, surfaces.tsv), ns_district_collision.c
 * (collision.glb) and ns_district_rails.c (rails.glb), call the base and nothing else of the
 * view; ns_district.c (the listings, the text files, the format) names them all. A part that
 * needs another's decode asks for it through the needs table (asset_need), never by a call.
 */
#ifndef PSGFS_NS_DISTRICT_INT_H
#define PSGFS_NS_DISTRICT_INT_H

#include "formats/world/district.h"
#include "tree/core/tree_int.h"

enum {
	K_ROOT,
	K_INFO,
	K_ERRORS,
	K_LINT,
	K_COLLECTIONS,
	K_MINIMAP,
	K_SCENE,
	K_TILES,
	K_TILE,
	K_PROPS,
	K_RAILS,
	K_SURFACES,
	K_COLLISION,
	K_RAILS_GLB,
	K_COUNT
};
enum { ND_NONE, ND_MANIFESTS, ND_SCAN, ND_SCENE, ND_OBJECTS, ND_COLLISION, ND_RAILS, ND_COUNT };
enum { OBJ_ALL, OBJ_PLACED }; /* ND_OBJECTS' arg */

/* The scene decode's argument (the node's a): 0 every Global and High collection (scene.glb),
 * i + 1 the Pres CMAP record i alone (tiles/<collection>.glb). */

/* An arena of a collection file: its slot and its name there. */
struct nd_arena_ent {
	uint32_t slot;
	const char *name;
};

/* Collection files already walked, by slot: CMAP records naming one file twice (a hostile
 * map can name one big collection in every record) read it once. Open addressing. */
struct nd_slot_set {
	uint32_t *v; /* slot + 1; 0 empty */
	size_t cap, n;
};

/* ns_district_base.c */

/* ND_MANIFESTS: the manifests of every kind, read through the map's siblings. */
enum rc nd_load_manifests(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *));
/* The manifests (a permanent decode); NULL and *r when they cannot be read. */
const struct district *nd_manifests(struct asset *as, enum rc *r);
/* ND_SCAN: the collection files' headers, for info.txt, errors.txt and lint.txt. */
enum rc nd_load_scan(struct asset *as, uint64_t arg, void **data, size_t *bytes,
		     void (**dtor)(void *));
/* The objects (what: OBJ_ALL, or OBJ_PLACED), pinned (NULL without a folder layer). */
const struct dist_objects *nd_objects_peek(struct asset *as, unsigned what, struct cache_ent **ent,
					   enum rc *r);
/* Whether an entry's name is an arena's (.psg, .rx2). */
bool nd_is_arena_name(const char *name);
/* The arenas of the collection file `file` beside the map, sorted by name (*e, *n; names
 * point into *l, which the caller discards). RC_NOENT: no such file; RC_EXISTS: walked. */
enum rc nd_collection_arenas(struct asset *as, const char *file, struct nd_slot_set *seen,
			     struct tlist *l, struct nd_arena_ent **e, size_t *n);
/* fn(ctx, arena, "<collection>/<arena name>") for every arena of kind k's collections. */
enum rc nd_each_arena(struct asset *as, const struct district *m, enum dist_kind k,
		      enum rc (*fn)(void *ctx, struct asset *a, const char *where), void *ctx);

/* ns_district_scene.c: ND_SCENE, the files K_SCENE and K_TILE */
enum rc nd_load_scene(struct asset *as, uint64_t arg, void **data, size_t *bytes,
		      void (**dtor)(void *));
enum rc nd_scene_layout(const struct tctx *c, struct layout_build *lb);
enum rc nd_scene_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e);

/* ns_district_objects.c: ND_OBJECTS, the files K_PROPS, K_RAILS and K_SURFACES */
enum rc nd_load_objects(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			void (**dtor)(void *));
enum rc nd_render_objects(const struct tctx *c, unsigned part, uint64_t first, struct emit *e);

/* ns_district_collision.c: ND_COLLISION, the file K_COLLISION */
enum rc nd_load_collision(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *));
enum rc nd_coll_layout(const struct tctx *c, struct layout_build *lb);
enum rc nd_coll_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e);

/* ns_district_rails.c: ND_RAILS (over ND_OBJECTS), the file K_RAILS_GLB */
enum rc nd_load_rails(struct asset *as, uint64_t arg, void **data, size_t *bytes,
		      void (**dtor)(void *));
enum rc nd_rails_layout(const struct tctx *c, struct layout_build *lb);
enum rc nd_rails_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e);

#endif
