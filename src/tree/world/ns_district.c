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
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/world/district.h"
#include "psgfs/base/bytes.h"
#include "tree/core/tree_int.h"
#include "tree/core/views.h"
#include "tree/mount/arcdir.h"

enum { K_ROOT, K_INFO, K_ERRORS, K_LINT, K_COLLECTIONS, K_MINIMAP, K_COUNT };
enum { N_NONE, N_MANIFESTS, N_SCAN, N_COUNT };

/* ---- the files beside the map ---- */

/* One opened sibling: an asset of the mount (pinned), or a descriptor of its own. */
struct sib {
	struct tree *t;
	struct cache_ent *pin;
	int fd;
};

static enum rc sib_fd(int fd, struct sib *h, struct src *s)
{
	struct stat st;

	if (fd < 0)
		return errno == ENOENT ? RC_NOENT : RC_IO;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return RC_IO;
	}
	h->fd = fd;
	src_init_fd(s, &h->fd, (uint64_t)st.st_size);
	return RC_OK;
}

/* Folder mounts: the folder layer's sibling. A file's bytes are its asset's source (a plain
 * file, or the file under the tree any format shows of it); a collection file shown as an
 * archive is read through its own descriptor. */
static enum rc sib_folder(struct asset *as, const char *name, struct sib *h, struct src *s)
{
	uint32_t slot = folder_sibling(as->t, as->slot, name);
	struct asset *a;
	enum rc r;

	if (!slot)
		return RC_NOENT;
	a = tree_asset_get(as->t, slot, &h->pin, &r);
	if (a && a->fmt == &tree_format_broken) { /* it explains itself; its bytes are not read */
		tree_asset_put(as->t, h->pin);
		return RC_IO;
	}
	if (a) {
		*s = a->src;
		return RC_OK;
	}
	if (r != RC_ISDIR)
		return r == RC_NOENT ? RC_IO : r;
	return sib_fd(folder_arc_reopen(as->t, slot), h, s);
}

/* Single-file mounts: the file of that name (exact, else ignoring case) in the map's own
 * directory. */
static enum rc sib_beside(struct asset *as, const char *name, struct sib *h, struct src *s)
{
	const char *slash = strrchr(as->path, '/');
	char *dir = slash ? strndup(as->path, (size_t)(slash - as->path) + 1) : strdup("./");
	char *path = NULL, *found = NULL;
	struct dirent *de;
	DIR *d;
	int fd;

	if (!dir)
		return RC_NOMEM;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, name) == 0) {
			free(found);
			found = strdup(de->d_name);
			break;
		}
		if (!found && strcasecmp(de->d_name, name) == 0)
			found = strdup(de->d_name);
	}
	if (d)
		closedir(d);
	if (!found || asprintf(&path, "%s%s", dir, found) < 0)
		path = NULL;
	free(dir);
	free(found);
	if (!path)
		return RC_NOENT;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	free(path);
	return sib_fd(fd, h, s);
}

static enum rc sib_open(void *ctx, const char *name, struct src *s, void **hp)
{
	struct asset *as = ctx;
	struct sib *h = calloc(1, sizeof *h);
	enum rc r;

	if (!h)
		return RC_NOMEM;
	h->t = as->t;
	h->fd = -1;
	r = as->t->fold ? sib_folder(as, name, h, s) : sib_beside(as, name, h, s);
	if (r != RC_OK) {
		free(h);
		return r;
	}
	*hp = h;
	return RC_OK;
}

static void sib_close(void *ctx, void *hp)
{
	struct sib *h = hp;

	(void)ctx;
	if (h->pin)
		tree_asset_put(h->t, h->pin);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}

/* ---- needs ---- */

static void manifests_free(void *p)
{
	dist_free(p);
	free(p);
}

static enum rc load_manifests(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			      void (**dtor)(void *))
{
	struct dist_io io = {as, sib_open, sib_close};
	struct district *m = calloc(1, sizeof *m);
	enum rc r;

	(void)arg;
	if (!m)
		return RC_NOMEM;
	r = dist_load(m, as->name, &as->src, &io);
	if (r != RC_OK) {
		manifests_free(m);
		return r;
	}
	*data = m;
	*bytes = dist_heap(m);
	*dtor = manifests_free;
	return RC_OK;
}

static const struct district *manifests(struct asset *as, enum rc *r)
{
	return asset_perm(as, 0, load_manifests, r);
}

static void scan_free(void *p)
{
	dist_scan_free(p);
	free(p);
}

static enum rc load_scan(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			 void (**dtor)(void *))
{
	struct dist_io io = {as, sib_open, sib_close};
	const struct district *m;
	struct dist_scan *s;
	enum rc r;

	(void)arg;
	if (!(m = manifests(as, &r)))
		return r;
	if (!(s = calloc(1, sizeof *s)))
		return RC_NOMEM;
	r = dist_scan(s, m, &io);
	if (r != RC_OK) {
		scan_free(s);
		return r;
	}
	*data = s;
	*bytes = sizeof *s + diag_heap_bytes(&s->d) + diag_heap_bytes(&s->lint);
	*dtor = scan_free;
	return RC_OK;
}

static const struct tree_need dist_needs[N_COUNT] = {
    [N_MANIFESTS] = {load_manifests, 0},
    [N_SCAN] = {load_scan, 1},
};

/* ---- files ---- */

static enum rc list_root(const struct tctx *c, struct tlist *out)
{
	(void)c;
	tlist_add(out, tn(K_INFO, 0, 0), "info.txt");
	tlist_add(out, tn(K_ERRORS, 0, 0), "errors.txt");
	tlist_add(out, tn(K_LINT, 0, 0), "lint.txt");
	tlist_add(out, tn(K_COLLECTIONS, 0, 0), "collections.tsv");
	tlist_add(out, tn(K_MINIMAP, 0, 0), "minimap.tsv");
	return RC_OK;
}

static enum rc render_info(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct dist_scan *s = c->need;

	(void)part;
	(void)first;
	dist_info(s->m, s, &e->b);
	emit_item(e);
	return RC_OK;
}

static enum rc render_errors(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct dist_scan *s = c->need;

	(void)part;
	(void)first;
	dist_errors(s->m, s, &e->b);
	emit_item(e);
	return RC_OK;
}

static enum rc render_lint(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	(void)part;
	(void)first;
	dist_lint(c->need, &e->b);
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
    [K_INFO] = FILE_("info", N_SCAN, NULL, render_info),
    [K_ERRORS] = FILE_("errors", N_SCAN, NULL, render_errors),
    [K_LINT] = FILE_("lint", N_SCAN, NULL, render_lint),
    [K_COLLECTIONS] = FILE_("collections", N_MANIFESTS, table_layout, table_render),
    [K_MINIMAP] = FILE_("minimap", N_MANIFESTS, table_layout, table_render),
};

const struct tree_format tree_format_district = {
    .name = "district",
    .kinds = dist_kinds,
    .n_kinds = K_COUNT,
    .needs = dist_needs,
    .n_needs = N_COUNT,
    .mount = dist_mount,
};
