/*
 * The district view (docs/worlds.md, "The district view"): a district's Pres collection map
 * (DIST_<Name>_Pres.psm / .xsm) shown as a directory whose files describe the whole stream
 * set. The map's namespace reaches the other files of the set through its container: the
 * folder layer's sibling lookup (a loose folder, an archive, a nested pack), or the map's own
 * directory in a single-file mount.
 *
 * Mounting reads the map's header only. The manifests (CMAP, CSPA, MMAP, ATOC of each kind)
 * are read on the first use of any file (a permanent decode); the collection files' headers
 * only for info.txt, errors.txt and lint.txt.
 *
 * This file: the listings, the text files and the format, which name each part's decodes and
 * files (ns_district_int.h: the parts and what they share).
 */
#include <stdio.h>

#include "psgfs/base/bytes.h"
#include "tree/core/views.h"
#include "tree/world/ns_district_int.h"

static const struct tree_need dist_needs[ND_COUNT] = {
    [ND_MANIFESTS] = {nd_load_manifests, 0},  [ND_SCAN] = {nd_load_scan, 1},
    [ND_SCENE] = {nd_load_scene, -1},	      [ND_OBJECTS] = {nd_load_objects, -1},
    [ND_COLLISION] = {nd_load_collision, -1}, [ND_RAILS] = {nd_load_rails, -1},
};

/* ---- files ---- */

static enum rc list_root(const struct tctx *c, struct tlist *out)
{
	tlist_add(out, tn(K_INFO, 0, 0), "info.txt");
	tlist_add(out, tn(K_ERRORS, 0, 0), "errors.txt");
	tlist_add(out, tn(K_LINT, 0, 0), "lint.txt");
	tlist_add(out, tn(K_COLLECTIONS, 0, 0), "collections.tsv");
	tlist_add(out, tn(K_MINIMAP, 0, 0), "minimap.tsv");
	if (c->as->t->fold) { /* the arenas are reached through the folder layer */
		tlist_add(out, tn(K_SCENE, 0, 0), "scene.glb");
		tlist_add(out, tn(K_TILES, 0, 0), "tiles");
		tlist_add(out, tn(K_PROPS, 0, 0), "props.tsv");
		tlist_add(out, tn(K_RAILS, 0, 0), "rails.tsv");
		tlist_add(out, tn(K_SURFACES, 0, 0), "surfaces.tsv");
		tlist_add(out, tn(K_COLLISION, 0, 0), "collision.glb");
		tlist_add(out, tn(K_RAILS_GLB, 0, 0), "rails.glb");
	}
	return RC_OK;
}

/* tiles/: one .glb per named Pres collection (the manifests only: a collection without its
 * file gives an empty scene). */
static enum rc list_tiles(const struct tctx *c, struct tlist *out)
{
	enum rc r;
	const struct district *m = nd_manifests(c->as, &r);

	if (!m)
		return r;
	for (uint32_t i = 0; i < m->k[DIST_PRES].cmap.n && i < TNODE_A_MAX; i++)
		if (m->k[DIST_PRES].cmap.v[i].name[0])
			tlist_add(out, tn(K_TILE, i + 1, 0), "%s.glb",
				  m->k[DIST_PRES].cmap.v[i].safe);
	return RC_OK;
}

static enum rc render_info(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct dist_scan *s = c->need;
	struct cache_ent *ent;
	enum rc r;
	const struct dist_objects *o = nd_objects_peek(c->as, OBJ_ALL, &ent, &r);

	(void)part;
	(void)first;
	if (!o && c->as->t->fold)
		return r;
	dist_info(s->m, s, o, &e->b);
	if (ent)
		asset_unpin(c->as, ent);
	emit_item(e);
	return RC_OK;
}

static enum rc render_errors(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct dist_scan *s = c->need;
	struct cache_ent *ent;
	enum rc r;
	const struct dist_objects *o = nd_objects_peek(c->as, OBJ_ALL, &ent, &r);

	(void)part;
	(void)first;
	if (!o && c->as->t->fold)
		return r;
	dist_errors(s->m, s, &e->b);
	for (size_t i = 0; o && i < o->d.n; i++) {
		buf_puts(&e->b, o->d.msg[i]);
		buf_putc(&e->b, '\n');
	}
	if (o && o->d.dropped)
		buf_printf(&e->b, "... %zu more not listed\n", o->d.dropped);
	if (ent)
		asset_unpin(c->as, ent);
	emit_item(e);
	return RC_OK;
}

static enum rc render_lint(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	struct cache_ent *ent;
	enum rc r;
	const struct dist_objects *o = nd_objects_peek(c->as, OBJ_ALL, &ent, &r);

	(void)part;
	(void)first;
	if (!o && c->as->t->fold)
		return r;
	dist_lint(c->need, o, &e->b);
	if (ent)
		asset_unpin(c->as, ent);
	emit_item(e);
	return RC_OK;
}

static enum rc print_collection(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	(void)rec;
	dist_collection_row(ctx, i, b);
	return RC_OK;
}

static enum rc print_point(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	(void)rec;
	dist_minimap_row(ctx, i, b);
	return RC_OK;
}

static enum rc table_of(const struct tctx *c, int *x, struct view_file *f)
{
	const struct district *m = c->need;

	(void)x;
	if (c->self.kind == K_COLLECTIONS)
		f->rows = (struct rows){
		    dist_collections_header, dist_collection_rows(m), 0, NULL, print_collection, m};
	else
		f->rows = (struct rows){
		    dist_minimap_header, dist_minimap_rows(m), 0, NULL, print_point, m};
	return RC_OK;
}

VIEW_FILE(table, int, table_of)

/* ---- the format ---- */

static enum tree_open_fail dist_mount(struct asset *as, char *why, size_t whylen)
{
	char dist[NAME_COMPONENT_MAX + 1];
	enum sm_platform pf;
	uint8_t h[SM_CMAP_HDR];

	if (!dist_map_name(as->name, dist, &pf)) {
		snprintf(why, whylen,
			 "a collection map that is not a district's Pres map "
			 "(DIST_<Name>_Pres.psm or .xsm)");
		return TREE_FAIL_FORMAT;
	}
	if (as->src.size < SM_CMAP_HDR) {
		snprintf(why, whylen, "CMAP: the file is %llu bytes; its header alone is %u",
			 (unsigned long long)as->src.size, SM_CMAP_HDR);
		return TREE_FAIL_FORMAT;
	}
	if (src_read(&as->src, 0, h, sizeof h) != RC_OK) {
		snprintf(why, whylen, "cannot read its header");
		return TREE_FAIL_OPEN;
	}
	return TREE_FAIL_NONE;
}

#define FILE_(w, n, l, r)                                                                          \
	{                                                                                          \
		w, TT_FILE, n, false, NULL, l, r, NULL, NULL, false                                \
	}

static const struct tree_kind dist_kinds[K_COUNT] = {
    [K_ROOT] = {"root", TT_DIR, 0, false, list_root, NULL, NULL, NULL, NULL, false},
    [K_INFO] = FILE_("info", ND_SCAN, NULL, render_info),
    [K_ERRORS] = FILE_("errors", ND_SCAN, NULL, render_errors),
    [K_LINT] = FILE_("lint", ND_SCAN, NULL, render_lint),
    [K_COLLECTIONS] = FILE_("collections", ND_MANIFESTS, table_layout, table_render),
    [K_MINIMAP] = FILE_("minimap", ND_MANIFESTS, table_layout, table_render),
    [K_SCENE] = FILE_("scene", ND_SCENE, nd_scene_layout, nd_scene_render),
    [K_TILES] = {"tiles", TT_DIR, 0, false, list_tiles, NULL, NULL, NULL, NULL, false},
    [K_TILE] = FILE_("tile", ND_SCENE, nd_scene_layout, nd_scene_render),
    [K_PROPS] = FILE_("props", ND_OBJECTS, NULL, nd_render_objects),
    [K_RAILS] = FILE_("rails", ND_OBJECTS, NULL, nd_render_objects),
    [K_SURFACES] = FILE_("surfaces", ND_OBJECTS, NULL, nd_render_objects),
    [K_COLLISION] = FILE_("collision", ND_COLLISION, nd_coll_layout, nd_coll_render),
    [K_RAILS_GLB] = FILE_("rails glb", ND_RAILS, nd_rails_layout, nd_rails_render),
};

const struct tree_format tree_format_district = {
    .name = "district",
    .kinds = dist_kinds,
    .n_kinds = K_COUNT,
    .needs = dist_needs,
    .n_needs = ND_COUNT,
    .mount = dist_mount,
};
