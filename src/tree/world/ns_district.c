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
#include <inttypes.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/world/district.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/skate_gltf.h"
#include "tree/core/tree_int.h"
#include "tree/core/views.h"
#include "tree/mount/arcdir.h"
#include "tree/psg/ns_psg.h"
#include "tree/psg/psg_materials.h"

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
	uint32_t slot = tree_slot_sibling(as->t, as->slot, name);
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
	/* an archive file: opened again by the folder layer that holds it */
	if (!as->t->arc_host || !as->t->arc_host->reopen)
		return RC_IO;
	return sib_fd(as->t->arc_host->reopen(as->t, slot), h, s);
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

/* ---- scene.glb and tiles/<collection>.glb ---- */

/*
 * The scene holds no arena: it keeps what its plan needs (each arena's slot, copies of its
 * meshes, primitives, materials and names, the sizes of its pictures' parts), and reading a
 * piece fetches the arena and its .glb decode again from the cache (loading them anew if they
 * were evicted: the same file gives the same export). Memory stays the cache's to bound.
 */
struct scene_img {
	const struct scene *sc;
	uint32_t arena, image; /* the arena's own image index */
	unsigned n_parts;
	uint64_t *n_items;
	uint32_t *item_size;
};

/* A picture of the scene by its source (open addressing; image + 1, 0 empty). */
struct pic_ent {
	struct psg_pic_id id;
	uint32_t image;
};

struct scene {
	struct tree *t;
	uint32_t *slot; /* per arena */
	uint32_t n, cap;
	uint32_t *mesh_arena, *mesh_local; /* glTF mesh -> arena, its mesh there */
	struct gltf_node *nodes;
	struct gltf_mesh *meshes;
	struct gltf_prim *prims;
	struct gltf_material *mats;
	struct gltf_image *images;
	struct scene_img *imgs;
	uint32_t n_meshes, n_prims, n_mats, n_images;
	uint32_t cap_meshes, cap_prims, cap_mats, cap_images;
	char **strs; /* names the model points to */
	size_t n_strs, cap_strs;
	struct pic_ent *pics; /* the pictures already in, by where they come from */
	size_t n_pics, cap_pics;
	struct gltf_model model;
	struct gltf_plan plan;
	bool planned;
	pthread_mutex_t bounds_mu; /* lock order: tree_int.h */
	uint8_t *bounded;	   /* per mesh: its bounds are found */
};

static void scene_free(void *p)
{
	struct scene *sc = p;

	if (sc->planned)
		gltf_plan_free(&sc->plan);
	pthread_mutex_destroy(&sc->bounds_mu);
	free(sc->bounded);
	for (size_t i = 0; i < sc->n_strs; i++)
		free(sc->strs[i]);
	for (uint32_t i = 0; i < sc->n_images; i++) {
		free(sc->imgs[i].n_items);
		free(sc->imgs[i].item_size);
	}
	free(sc->strs);
	free(sc->pics);
	free(sc->slot);
	free(sc->mesh_arena);
	free(sc->mesh_local);
	free(sc->nodes);
	free(sc->meshes);
	free(sc->prims);
	free(sc->mats);
	free(sc->images);
	free(sc->imgs);
	free(sc);
}

/* An arena's .glb export, pinned (release with arena_put). */
struct arena_ref {
	struct tree *t;
	struct asset *as;
	struct cache_ent *pin, *glb_pin;
	const void *glb;
	const struct skate_gltf *g;
};

static const struct gltf_model *arena_get(struct tree *t, uint32_t slot, struct arena_ref *ref,
					  enum rc *r)
{
	const void *glb = NULL;

	*ref = (struct arena_ref){.t = t};
	ref->as = tree_asset_get(t, slot, &ref->pin, r);
	if (ref->as && ref->as->fmt == &tree_format_psg)
		glb = asset_need(ref->as, N_GLB, GLB_SHAPE, &ref->glb_pin, r);
	else if (ref->as)
		*r = RC_FORMAT;
	if (!glb) {
		if (ref->as)
			tree_asset_put(t, ref->pin);
		ref->as = NULL;
		return NULL;
	}
	ref->glb = glb;
	ref->g = psg_glb_export(glb);
	return skate_gltf_model(ref->g);
}

static void arena_put(struct arena_ref *ref)
{
	if (!ref->as)
		return;
	if (ref->glb_pin)
		asset_unpin(ref->as, ref->glb_pin);
	tree_asset_put(ref->t, ref->pin);
	ref->as = NULL;
}

/* Grow *v (of *cap elements) to hold n more past used. */
static bool grow(void **v, uint32_t *cap, uint32_t used, uint64_t more, size_t size)
{
	uint64_t want = (uint64_t)used + more, c = *cap ? *cap : 16;
	void *nv;

	if (want <= *cap)
		return true;
	if (want > UINT32_MAX / 2)
		return false;
	while (c < want)
		c *= 2;
	if (!(nv = xrealloc_n(*v, (size_t)c, size)))
		return false;
	*v = nv;
	*cap = (uint32_t)c;
	return true;
}

/* A copy of an untrusted name the scene keeps. */
static bool keep_name(struct scene *sc, struct gltf_name *nm)
{
	char *p;

	if (sc->n_strs == sc->cap_strs) {
		size_t cap = sc->cap_strs ? sc->cap_strs * 2 : 64;
		char **v = xrealloc_n(sc->strs, cap, sizeof *v);

		if (!v)
			return false;
		sc->strs = v;
		sc->cap_strs = cap;
	}
	if (!(p = malloc(nm->len + 1)))
		return false;
	if (nm->len)
		memcpy(p, nm->p, nm->len);
	p[nm->len] = '\0';
	sc->strs[sc->n_strs++] = p;
	nm->p = p;
	return true;
}

static void img_part(const void *ctx, unsigned part, uint64_t *n_items, uint32_t *item_size)
{
	const struct scene_img *si = ctx;

	*n_items = part < si->n_parts ? si->n_items[part] : 0;
	*item_size = part < si->n_parts ? si->item_size[part] : 0;
}

static enum rc img_render(const void *ctx, unsigned part, uint64_t first, struct emit *e)
{
	const struct scene_img *si = ctx;
	struct arena_ref ref;
	enum rc r;
	const struct gltf_model *m = arena_get(si->sc->t, si->sc->slot[si->arena], &ref, &r);

	if (!m)
		return r == RC_NOMEM ? r : RC_IO;
	r = si->image < m->n_images
		? m->images[si->image].render(m->images[si->image].ctx, part, first, e)
		: RC_IO;
	arena_put(&ref);
	return r;
}

static size_t pic_hash(const struct psg_pic_id *id, size_t cap)
{
	uint64_t h = ((uint64_t)id->slot << 32 | id->row) * 0x9E3779B97F4A7C15ull ^ id->companion;

	return (size_t)(h >> 32) & (cap - 1);
}

static struct pic_ent *pic_at(struct pic_ent *v, size_t cap, const struct psg_pic_id *id)
{
	size_t h = pic_hash(id, cap);

	while (v[h].image && (v[h].id.slot != id->slot || v[h].id.row != id->row ||
			      v[h].id.companion != id->companion))
		h = (h + 1) & (cap - 1);
	return &v[h];
}

/*
 * The scene's picture of id: *image and true when it is in already, else false with room made
 * for it (pic_add). A district's tiles share their textures (bound by GUID across the streams):
 * each is embedded once, not once per arena that shows it.
 */
static bool pic_known(struct scene *sc, const struct psg_pic_id *id, uint32_t *image, bool *oom)
{
	struct pic_ent *e;

	if ((sc->n_pics + 1) * 2 > sc->cap_pics) {
		size_t cap = sc->cap_pics ? sc->cap_pics * 2 : 64;
		struct pic_ent *v = xcalloc_n(cap, sizeof *v);

		if (!v) {
			*oom = true;
			return false;
		}
		for (size_t i = 0; i < sc->cap_pics; i++)
			if (sc->pics[i].image)
				*pic_at(v, cap, &sc->pics[i].id) = sc->pics[i];
		free(sc->pics);
		sc->pics = v;
		sc->cap_pics = cap;
	}
	e = pic_at(sc->pics, sc->cap_pics, id);
	if (!e->image)
		return false;
	*image = e->image - 1;
	return true;
}

static void pic_add(struct scene *sc, const struct psg_pic_id *id, uint32_t image)
{
	*pic_at(sc->pics, sc->cap_pics, id) = (struct pic_ent){*id, image + 1};
	sc->n_pics++;
}

/* The per-mesh and per-image arrays, as long as the meshes and images. */
static bool scene_side_arrays(struct scene *sc)
{
	uint32_t *ma = xrealloc_n(sc->mesh_arena, sc->cap_meshes, sizeof *ma);
	uint32_t *ml;
	struct scene_img *si;

	if (!ma)
		return false;
	sc->mesh_arena = ma;
	if (!(ml = xrealloc_n(sc->mesh_local, sc->cap_meshes, sizeof *ml)))
		return false;
	sc->mesh_local = ml;
	if (!(si = xrealloc_n(sc->imgs, sc->cap_images ? sc->cap_images : 1, sizeof *si)))
		return false;
	sc->imgs = si;
	return true;
}

/* Scene images for the pictures of arena k's model m (*imap: m's image -> the scene's), each
 * picture once however many arenas show it. */
static enum rc scene_pictures(struct scene *sc, uint32_t k, const struct arena_ref *ref,
			      const struct gltf_model *m, uint32_t *imap)
{
	for (uint32_t j = 0; j < m->n_images; j++) {
		const struct gltf_image *src = &m->images[j];
		struct scene_img *si = &sc->imgs[sc->n_images];
		struct gltf_image *im = &sc->images[sc->n_images];
		struct psg_pic_id id;
		bool has_id = psg_glb_pic_id(ref->glb, j, &id), oom = false;

		if (has_id && pic_known(sc, &id, &imap[j], &oom))
			continue;
		if (oom)
			return RC_NOMEM;
		*si = (struct scene_img){sc, k, j, src->n_parts, NULL, NULL};
		si->n_items = xcalloc_n(src->n_parts ? src->n_parts : 1, sizeof *si->n_items);
		si->item_size = xcalloc_n(src->n_parts ? src->n_parts : 1, sizeof *si->item_size);
		imap[j] = sc->n_images++; /* freed with the scene from here on */
		if (!si->n_items || !si->item_size)
			return RC_NOMEM;
		for (unsigned q = 0; q < src->n_parts; q++)
			src->part(src->ctx, q, &si->n_items[q], &si->item_size[q]);
		*im = *src;
		im->part = img_part;
		im->render = img_render;
		im->ctx = NULL; /* scene_build: &sc->imgs[i] once the array stops moving */
		if (!keep_name(sc, &im->name))
			return RC_NOMEM;
		if (has_id)
			pic_add(sc, &id, imap[j]);
	}
	return RC_OK;
}

/* Copy what the plan needs of arena k's model m: a node (identity: district geometry is fused
 * in world space), its meshes below it, their primitives, materials and pictures renumbered. */
static enum rc scene_take(struct scene *sc, uint32_t k, const struct arena_ref *ref,
			  const struct gltf_model *m)
{
	uint32_t ma0 = sc->n_mats, *imap;
	uint64_t n_prims = 0;
	enum rc r;

	for (uint32_t j = 0; j < m->n_meshes; j++)
		n_prims += m->meshes[j].n_prims;
	if (!grow((void **)&sc->meshes, &sc->cap_meshes, sc->n_meshes, m->n_meshes,
		  sizeof *sc->meshes) ||
	    !grow((void **)&sc->prims, &sc->cap_prims, sc->n_prims, n_prims, sizeof *sc->prims) ||
	    !grow((void **)&sc->mats, &sc->cap_mats, sc->n_mats, m->n_materials,
		  sizeof *sc->mats) ||
	    !grow((void **)&sc->images, &sc->cap_images, sc->n_images, m->n_images,
		  sizeof *sc->images))
		return RC_NOMEM;
	if (!scene_side_arrays(sc) ||
	    !(imap = xcalloc_n(m->n_images ? m->n_images : 1, sizeof *imap)))
		return RC_NOMEM;
	r = scene_pictures(sc, k, ref, m, imap);
	for (uint32_t j = 0; r == RC_OK && j < m->n_materials; j++) {
		struct gltf_material *mt = &sc->mats[sc->n_mats];

		*mt = m->materials[j];
		mt->image = mt->image >= 0 && (uint32_t)mt->image < m->n_images
				? (int32_t)imap[mt->image]
				: -1;
		if (!keep_name(sc, &mt->name))
			r = RC_NOMEM;
		else
			sc->n_mats++;
	}
	free(imap);
	if (r != RC_OK)
		return r;
	for (uint32_t j = 0; j < m->n_meshes; j++) {
		const struct gltf_mesh *me = &m->meshes[j];
		struct gltf_mesh *d = &sc->meshes[sc->n_meshes];

		*d = *me;
		d->skinned = false; /* placed by its arena's node, no skin */
		d->under = k + 1;
		d->targets = NULL; /* district geometry has no morphs */
		d->n_targets = 0;
		d->prims = NULL;
		if (!keep_name(sc, &d->name))
			return RC_NOMEM;
		for (uint32_t q = 0; q < me->n_prims; q++) {
			struct gltf_prim *pr = &sc->prims[sc->n_prims + q];

			*pr = me->prims[q];
			if (pr->material >= 0)
				pr->material += (int32_t)ma0;
		}
		d->prims =
		    (const struct gltf_prim *)(uintptr_t)sc->n_prims; /* fixed in scene_build */
		sc->n_prims += me->n_prims;
		sc->mesh_arena[sc->n_meshes] = k;
		sc->mesh_local[sc->n_meshes] = j;
		sc->n_meshes++;
	}
	return RC_OK;
}

static bool is_arena_name(const char *name)
{
	return name_has_ext(name, (const char *const[]){".psg", ".rx2", NULL});
}

struct arena_ent {
	uint32_t slot;
	const char *name;
};

static int arena_cmp(const void *x, const void *y)
{
	return strcmp(((const struct arena_ent *)x)->name, ((const struct arena_ent *)y)->name);
}

/* Collection files already walked, by slot: CMAP records naming one file twice (a hostile
 * map can name one big collection in every record) read it once. Open addressing. */
struct slot_set {
	uint32_t *v; /* slot + 1; 0 empty */
	size_t cap, n;
};

static bool slot_seen(struct slot_set *s, uint32_t slot, bool *oom)
{
	size_t h;

	if ((s->n + 1) * 2 > s->cap) {
		struct slot_set g = {xcalloc_n(s->cap ? s->cap * 2 : 64, sizeof *g.v),
				     s->cap ? s->cap * 2 : 64, 0};

		if (!g.v) {
			*oom = true;
			return true;
		}
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i])
				(void)slot_seen(&g, s->v[i] - 1, oom);
		free(s->v);
		*s = g;
	}
	for (h = (slot * 0x9E3779B1u) & (s->cap - 1); s->v[h]; h = (h + 1) & (s->cap - 1))
		if (s->v[h] == slot + 1)
			return true;
	s->v[h] = slot + 1;
	s->n++;
	return false;
}

/* The arenas of the collection file `file` beside the map, sorted by name (*e, *n; names
 * point into *l, which the caller discards). RC_NOENT when there is no such file; RC_EXISTS
 * when seen already walked it. */
static enum rc collection_arenas(struct asset *as, const char *file, struct slot_set *seen,
				 struct tlist *l, struct arena_ent **e, size_t *n)
{
	uint32_t slot = tree_slot_sibling(as->t, as->slot, file);
	bool oom = false;
	enum rc r;

	*e = NULL;
	*n = 0;
	if (!slot)
		return RC_NOENT;       /* lint.txt says so */
	if (seen->n >= DIST_FILES_MAX) /* a hostile map's thousands of collections: enough */
		return RC_EXISTS;
	if (slot_seen(seen, slot, &oom))
		return oom ? RC_NOMEM : RC_EXISTS;
	r = tree_slot_list(as->t, slot, l);
	if (r != RC_OK || l->oom)
		return r == RC_OK || r == RC_NOMEM ? RC_NOMEM : RC_IO;
	*e = xcalloc_n(l->n ? l->n : 1, sizeof **e);
	if (!*e)
		return RC_NOMEM;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].type == TT_DIR && is_arena_name(l->names + l->v[i].name))
			(*e)[(*n)++] =
			    (struct arena_ent){ino_slot(l->v[i].ino), l->names + l->v[i].name};
	qsort(*e, *n, sizeof **e, arena_cmp);
	return RC_OK;
}

/* Add the arenas of one collection file (its entries, by name) that export a model. */
static enum rc scene_add_collection(struct scene *sc, struct asset *as, const char *coll,
				    const char *file, struct slot_set *seen)
{
	struct tlist l = {0};
	struct arena_ent *e;
	size_t n;
	enum rc r = collection_arenas(as, file, seen, &l, &e, &n);

	if (r != RC_OK) {
		free(e);
		tlist_discard(&l);
		return r == RC_EXISTS ? RC_OK : r;
	}
	for (size_t i = 0; i < n && r == RC_OK; i++) {
		struct arena_ref ref;
		const struct gltf_model *m = arena_get(as->t, e[i].slot, &ref, &r);
		char name[2 * NAME_COMPONENT_MAX + 2];
		struct gltf_node *nd;

		if (!m || !m->n_meshes) { /* not a model, or broken: its own errors.txt says why */
			arena_put(&ref);
			r = r == RC_NOMEM ? r : RC_OK;
			continue;
		}
		if (!grow((void **)&sc->nodes, &sc->cap, sc->n, 1, sizeof *sc->nodes) ||
		    !(sc->slot = xrealloc_n(sc->slot, sc->cap, sizeof *sc->slot))) {
			arena_put(&ref);
			r = RC_NOMEM;
			break;
		}
		snprintf(name, sizeof name, "%s/%s", coll, e[i].name);
		nd = &sc->nodes[sc->n];
		*nd = (struct gltf_node){
		    .name = {name, strlen(name)}, .parent = -1, .r = {0, 0, 0, 1}, .s = {1, 1, 1}};
		sc->slot[sc->n] = e[i].slot;
		r = keep_name(sc, &nd->name) ? scene_take(sc, sc->n, &ref, m) : RC_NOMEM;
		sc->n++;
		arena_put(&ref);
	}
	free(e);
	tlist_discard(&l);
	return r;
}

static const struct dist_objects *objects_peek(struct asset *as, unsigned what,
					       struct cache_ent **ent, enum rc *r);

/* A template already in the scene: its meshes (memo by slot, open addressing). */
struct tmpl_memo {
	uint32_t slot; /* + 1; 0 empty */
	uint32_t mesh0, n_meshes;
};

static struct tmpl_memo *memo_at(struct tmpl_memo *v, size_t cap, uint32_t slot)
{
	size_t h = (slot * 0x9E3779B1u) & (cap - 1);

	while (v[h].slot && v[h].slot != slot + 1)
		h = (h + 1) & (cap - 1);
	return &v[h];
}

/* One more node (and its slot) at the end of the scene's nodes. */
static struct gltf_node *scene_node(struct scene *sc, uint32_t slot, const char *name)
{
	struct gltf_node *nd;

	if (!grow((void **)&sc->nodes, &sc->cap, sc->n, 1, sizeof *sc->nodes) ||
	    !(sc->slot = xrealloc_n(sc->slot, sc->cap, sizeof *sc->slot)))
		return NULL;
	nd = &sc->nodes[sc->n];
	*nd = (struct gltf_node){
	    .name = {name, strlen(name)}, .parent = -1, .r = {0, 0, 0, 1}, .s = {1, 1, 1}};
	sc->slot[sc->n] = slot;
	if (!keep_name(sc, &nd->name))
		return NULL;
	sc->n++;
	return nd;
}

/* Prop i: a node at its placement showing its template's meshes. The first prop of a template
 * brings the meshes (their nodes its children); the others show them by reference. */
static enum rc scene_add_prop(struct scene *sc, const struct dist_placed *p, uint32_t i,
			      struct tmpl_memo *me)
{
	char name[64];
	uint32_t k = sc->n, first = !me->slot;
	struct gltf_node *nd;
	enum rc r = RC_OK;

	if (first) {
		struct arena_ref ref;
		const struct gltf_model *m = arena_get(sc->t, p->model, &ref, &r);

		me->slot = p->model + 1;
		me->mesh0 = sc->n_meshes;
		me->n_meshes = 0;
		if (!m || !m->n_meshes) { /* not a model: props.tsv names it; nothing to place */
			arena_put(&ref);
			return r == RC_NOMEM ? r : RC_OK;
		}
		snprintf(name, sizeof name, "prop %u 0x%016" PRIx64, i, p->template_id);
		if (!(nd = scene_node(sc, p->model, name)))
			r = RC_NOMEM;
		else
			r = scene_take(sc, k, &ref, m);
		if (r == RC_OK)
			me->n_meshes = sc->n_meshes - me->mesh0;
		arena_put(&ref);
	} else {
		if (!me->n_meshes)
			return RC_OK;
		snprintf(name, sizeof name, "prop %u 0x%016" PRIx64, i, p->template_id);
		if (!(nd = scene_node(sc, p->model, name)))
			return RC_NOMEM;
		if (me->n_meshes == 1)
			nd->mesh = me->mesh0 + 1;
		for (uint32_t j = 0; me->n_meshes > 1 && j < me->n_meshes; j++) {
			struct gltf_node *c = scene_node(sc, p->model, name);

			if (!c)
				return RC_NOMEM;
			c->parent = (int32_t)k;
			c->mesh = me->mesh0 + j + 1;
		}
		nd = &sc->nodes[k]; /* the array may have moved */
	}
	if (r == RC_OK) {
		nd = &sc->nodes[k];
		memcpy(nd->t, p->pos, sizeof nd->t);
		memcpy(nd->r, p->rot, sizeof nd->r);
		memcpy(nd->s, p->scale, sizeof nd->s);
	}
	return r;
}

/* The props whose template resolved (props.tsv), placed: one mesh per template, many nodes. */
static enum rc scene_add_props(struct scene *sc, struct asset *as)
{
	struct cache_ent *ent;
	enum rc r;
	const struct dist_objects *o = objects_peek(as, OBJ_PLACED, &ent, &r);
	size_t n, cap = 16;
	struct tmpl_memo *memo;

	if (!o)
		return r == RC_NOMEM ? r : RC_OK; /* errors.txt says why */
	n = o->n_placed < DIST_PLACED_MAX ? o->n_placed : DIST_PLACED_MAX;
	while (cap < 2 * n)
		cap *= 2;
	if (!(memo = xcalloc_n(cap, sizeof *memo)))
		r = RC_NOMEM;
	for (size_t i = 0; memo && i < n && r == RC_OK; i++)
		r = scene_add_prop(sc, &o->placed[i], (uint32_t)i,
				   memo_at(memo, cap, o->placed[i].model));
	free(memo);
	if (ent)
		asset_unpin(as, ent);
	return r;
}

static enum rc scene_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out);

/*
 * Mesh i's POSITION bounds, found the first time the JSON needs them: the plan comes from the
 * arenas' headers alone, so a stat reads no vertex. An arena that cannot give them leaves
 * zeros (its data then fails to read, and its own errors.txt says why).
 */
static enum rc scene_bounds(void *ctx, uint32_t i)
{
	struct scene *sc = ctx;
	enum rc r = RC_OK;

	if (i >= sc->n_meshes)
		return RC_INVAL;
	pthread_mutex_lock(&sc->bounds_mu);
	if (!sc->bounded[i]) {
		float mn[3] = {0, 0, 0}, mx[3] = {0, 0, 0};
		struct arena_ref ref;
		const struct gltf_model *m =
		    arena_get(sc->t, sc->slot[sc->mesh_arena[i]], &ref, &r);

		if (m && sc->mesh_local[i] < m->n_meshes)
			r = skate_gltf_mesh_bounds(ref.g, &ref.as->src, sc->mesh_local[i], mn, mx);
		arena_put(&ref);
		if (r != RC_OK && r != RC_NOMEM)
			memset(mn, 0, sizeof mn), memset(mx, 0, sizeof mx);
		if (r != RC_NOMEM) { /* memory may come back: found again next time */
			memcpy(sc->meshes[i].min, mn, sizeof mn);
			memcpy(sc->meshes[i].max, mx, sizeof mx);
			sc->bounded[i] = 1;
			r = RC_OK;
		}
	}
	pthread_mutex_unlock(&sc->bounds_mu);
	return r;
}

/* The model over what scene_take copied: primitives' pointers set now the array is whole. */
static bool scene_build(struct scene *sc)
{
	for (uint32_t i = 0; i < sc->n_meshes; i++)
		sc->meshes[i].prims = sc->prims + (uintptr_t)sc->meshes[i].prims;
	for (uint32_t i = 0; i < sc->n_images; i++) /* the array moved as it grew */
		sc->images[i].ctx = &sc->imgs[i];
	sc->model = (struct gltf_model){
	    .nodes = sc->nodes,
	    .n_nodes = sc->n,
	    .meshes = sc->meshes,
	    .n_meshes = sc->n_meshes,
	    .materials = sc->mats,
	    .n_materials = sc->n_mats,
	    .images = sc->images,
	    .n_images = sc->n_images,
	    .fill = scene_fill,
	    .bounds_later = scene_bounds,
	};
	sc->bounded = calloc(sc->n_meshes ? sc->n_meshes : 1, 1);
	return sc->bounded != NULL;
}

/* Data of scene mesh q->mesh: its arena's export, read from the arena's own bytes. */
static enum rc scene_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct scene *sc = ctx;
	struct gltf_req lq = *q;
	struct arena_ref ref;
	const struct gltf_model *m;
	enum rc r;

	if (q->mesh >= sc->model.n_meshes)
		return RC_INVAL;
	m = arena_get(sc->t, sc->slot[sc->mesh_arena[q->mesh]], &ref, &r);
	if (!m)
		return r == RC_NOMEM ? r : RC_IO;
	lq.mesh = sc->mesh_local[q->mesh];
	r = lq.mesh < m->n_meshes ? skate_gltf_fill(ref.g, &ref.as->src, &lq, first, n, out)
				  : RC_IO;
	arena_put(&ref);
	return r;
}

/* The Pres collections of the scene (arg 0: the Global and every High tile; else CMAP record
 * arg - 1 alone), their arenas placed. */
static enum rc load_scene(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	struct slot_set seen = {0};
	const struct district *m;
	const struct dist_kind_set *ks;
	struct scene *sc;
	char ext[4];
	enum rc r;

	if (!(m = manifests(as, &r)))
		return r;
	if (!as->t->fold)
		return RC_NOENT;
	ks = &m->k[DIST_PRES];
	if (arg > ks->cmap.n)
		return RC_NOENT;
	if (!(sc = calloc(1, sizeof *sc)))
		return RC_NOMEM;
	sc->t = as->t;
	pthread_mutex_init(&sc->bounds_mu, NULL);
	sm_ext(m->pf, SM_SFIL, ext);
	for (uint32_t i = 0; i < ks->cmap.n && r == RC_OK; i++) {
		const struct sm_collection *c = &ks->cmap.v[i];
		char file[NAME_COMPONENT_MAX + 8];

		if (arg ? i != arg - 1 : !dist_in_scene(m, DIST_PRES, i))
			continue;
		snprintf(file, sizeof file, "%s.%s", c->safe, ext);
		r = scene_add_collection(sc, as, c->safe, file, &seen);
		if (r == RC_NOENT) /* a tile without its file cannot be shown; the scene goes on */
			r = arg ? RC_IO : RC_OK;
	}
	free(seen.v);
	if (r == RC_OK && !arg)
		r = scene_add_props(sc, as);
	if (r == RC_OK)
		r = scene_build(sc) ? RC_OK : RC_NOMEM;
	if (r == RC_OK) {
		r = gltf_plan(&sc->model, &sc->plan);
		sc->planned = r == RC_OK;
	}
	if (r != RC_OK) {
		scene_free(sc);
		return r;
	}
	*data = sc;
	*bytes = sizeof *sc + gltf_plan_heap(&sc->plan) +
		 (size_t)sc->cap_meshes * (sizeof *sc->meshes + 8) +
		 (size_t)sc->cap_prims * sizeof *sc->prims +
		 (size_t)sc->cap_mats * sizeof *sc->mats +
		 (size_t)sc->cap_images * (sizeof *sc->images + sizeof *sc->imgs + 64) +
		 (size_t)sc->cap * (sizeof *sc->nodes + 4) + sc->n_strs * 48 +
		 sc->cap_pics * sizeof *sc->pics;
	*dtor = scene_free;
	return RC_OK;
}

static enum rc scene_layout(const struct tctx *c, struct layout_build *lb)
{
	const struct scene *sc = c->need;

	view_glb_layout(&sc->plan, lb);
	return RC_OK;
}

static enum rc scene_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct scene *sc = c->need;

	return gltf_render(&sc->plan, (void *)sc, part, first, e);
}

/* ---- worlddmo.big: the templates the props name ---- */

/*
 * The mount's worlddmo.big: beside the district's folder (psgfs-gen district's layout), else
 * data/content/worlddmo.big from the mount's root (the game's). Its templates are the entries
 * data/content/worlddmo/0x<16 hex digits>.psg (or .rx2), by name; a placement's template id is
 * looked up in that table (sorted once per load: lookups are memoised). A template is an
 * entry, not a chain, so no lookup can loop.
 */
#define DMO_BIG		  "worlddmo.big"
#define DMO_TEMPLATES_MAX (1u << 16)

struct dmo_tmpl {
	uint64_t id;
	uint32_t slot;
};

struct dmo_cat {
	struct tree *t;
	struct dmo_tmpl *v;
	size_t n;
	char path[PATH_MAX];
};

/* The child of directory slot `dir` named `name` (ignoring case); 0 if none. */
static uint32_t slot_child(struct tree *t, uint32_t dir, const char *name)
{
	struct tlist l = {0};
	uint32_t slot = 0;

	if (tree_slot_list(t, dir, &l) == RC_OK && !l.oom)
		for (size_t i = 0; i < l.n && !slot; i++)
			if (!strcasecmp(l.names + l.v[i].name, name))
				slot = ino_slot(l.v[i].ino);
	tlist_discard(&l);
	return slot;
}

static uint32_t dmo_big_slot(struct asset *as)
{
	uint32_t parent = 0, slot = 0;
	const char *name;

	if (tree_slot_entry_name(as->t, as->slot, &parent, &name) && parent)
		slot = tree_slot_sibling(as->t, parent, DMO_BIG);
	if (!slot)
		slot = folder_slot_at(as->t, "data/content/" DMO_BIG);
	return slot;
}

static int tmpl_cmp(const void *x, const void *y)
{
	const struct dmo_tmpl *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id ? 1 : a->slot < b->slot ? -1 : a->slot > b->slot;
}

/* The template table; false (and an empty table) when the mount has no worlddmo.big. */
static enum rc dmo_cat_load(struct dmo_cat *c, struct asset *as, bool *found)
{
	uint32_t dir = dmo_big_slot(as);
	struct tlist l = {0};
	enum rc r = RC_OK;

	*c = (struct dmo_cat){.t = as->t};
	*found = dir != 0;
	if (dir)
		dir = slot_child(as->t, dir, "data");
	if (dir)
		dir = slot_child(as->t, dir, "content");
	if (dir)
		dir = slot_child(as->t, dir, "worlddmo");
	if (!dir)
		return RC_OK; /* every lookup says why */
	if (tree_slot_list(as->t, dir, &l) != RC_OK || l.oom) {
		tlist_discard(&l);
		return l.oom ? RC_NOMEM : RC_OK;
	}
	c->v = xcalloc_n(l.n ? l.n : 1, sizeof *c->v);
	if (!c->v)
		r = RC_NOMEM;
	for (size_t i = 0; c->v && i < l.n && c->n < DMO_TEMPLATES_MAX; i++) {
		const char *nm = l.names + l.v[i].name;
		char *end;
		uint64_t id;

		if (strncasecmp(nm, "0x", 2) || !is_arena_name(nm))
			continue;
		id = strtoull(nm + 2, &end, 16);
		if (end - nm != 18 || *end != '.')
			continue;
		c->v[c->n++] = (struct dmo_tmpl){id, ino_slot(l.v[i].ino)};
	}
	if (c->n)
		qsort(c->v, c->n, sizeof *c->v, tmpl_cmp);
	tlist_discard(&l);
	return r;
}

static uint32_t dmo_model_of(void *ctx, uint64_t id, const char **path, const char **why)
{
	struct dmo_cat *c = ctx;
	size_t lo = 0, hi = c->n;

	while (lo < hi) { /* the first of that id */
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->n || c->v[lo].id != id) {
		*why = c->v ? "worlddmo.big has no such template"
			    : "worlddmo.big has no data/content/worlddmo folder";
		return 0;
	}
	if (!tree_slot_mountpath(c->t, c->v[lo].slot, c->path, sizeof c->path)) {
		*why = "its path is too long";
		return 0;
	}
	*path = c->path;
	return c->v[lo].slot;
}

/* ---- props.tsv, rails.tsv, surfaces.tsv: the Sim stream's objects ---- */

static void objects_free(void *p)
{
	dist_objects_free(p);
	free(p);
}

/* The DMOData, SplineData and ClusteredMesh objects of one arena (only the DMOData when
 * placed_only). */
static enum rc objects_of_arena(struct dist_objects *o, struct asset *a, const char *where,
				bool placed_only)
{
	const struct arena *ar = &pm(a)->a;
	enum rc r = RC_OK;

	for (uint32_t i = 0; i < ar->n_dict && r == RC_OK; i++) {
		const struct arena_dict_entry *de = arena_row(ar, i);
		uint8_t *obj = NULL;
		size_t len = 0;
		enum rc ro;

		if (!de || (de->type_id != WO_T_DMODATA &&
			    (placed_only || (de->type_id != WO_T_SPLINEDATA &&
					     de->type_id != WO_T_CLUSTEREDMESH))))
			continue;
		ro = arena_read_object(&a->src, ar, i, &obj, &len);
		if (ro == RC_OK)
			r = dist_objects_add(o, where, i, de->type_id, obj, len);
		else if (ro == RC_NOMEM)
			r = ro;
		else
			diag_add(&o->d, "%s: object %u cannot be read: %s", where, i, rc_str(ro));
		free(obj);
	}
	return r;
}

/* The texture GUIDs of one Pres arena's materials that nothing provides: neither the
 * companion or a texture arena of the mount (psg_materials.c) nor a Pres or Tex stream asset
 * of that id (a per-texture arena, which an archive's own index may not reach). */
static void textures_of_arena(struct dist_objects *o, struct asset *a, const char *where,
			      const struct district *m)
{
	struct cache_ent *ent;
	enum rc r;
	const struct psg_materials *ms = asset_need(a, N_MATERIALS, 0, &ent, &r);

	for (uint32_t i = 0; ms && i < ms->n; i++)
		for (uint32_t k = 0; k < ms->v[i].n_ch; k++) {
			const struct psg_channel *ch = &ms->v[i].ch[k];

			if (ch->kind != SKATE_UNION_STREAM || !ch->has_guid || ch->texture ||
			    dist_atoc_has(m, DIST_TEX, ch->guid) ||
			    dist_atoc_has(m, DIST_PRES, ch->guid))
				continue;
			diag_add(&o->lint,
				 "%s: material %u: texture 0x%016" PRIx64
				 " (%s) is provided by nothing in the mount",
				 where, i, ch->guid, ch->input ? ch->input : "?");
			o->unresolved++;
		}
	if (ent)
		asset_unpin(a, ent);
}

/* fn(ctx, arena, "<collection>/<arena name>") for every arena of every collection of kind k,
 * in CMAP order then by name, each collection file walked once. A collection file missing or
 * unreadable, or walked already, is not a failure (lint.txt and errors.txt say so); fn's
 * other failures end the walk. */
static enum rc each_arena(struct asset *as, const struct district *m, enum dist_kind k,
			  enum rc (*fn)(void *ctx, struct asset *a, const char *where), void *ctx)
{
	const struct dist_kind_set *ks = &m->k[k];
	struct slot_set seen = {0};
	enum rc r = RC_OK;
	char ext[4];

	sm_ext(m->pf, SM_SFIL, ext);
	for (uint32_t i = 0; i < ks->cmap.n && r == RC_OK; i++) {
		const struct sm_collection *c = &ks->cmap.v[i];
		char file[NAME_COMPONENT_MAX + 8];
		struct tlist l = {0};
		struct arena_ent *e;
		size_t n;

		if (!dist_first_of_id(m, k, i))
			continue;
		snprintf(file, sizeof file, "%s.%s", c->safe, ext);
		r = collection_arenas(as, file, &seen, &l, &e, &n);
		for (size_t k = 0; r == RC_OK && k < n; k++) {
			struct cache_ent *pin;
			enum rc ra;
			struct asset *a = tree_asset_get(as->t, e[k].slot, &pin, &ra);
			char where[2 * NAME_COMPONENT_MAX + 2];

			if (!a)
				continue;
			snprintf(where, sizeof where, "%s/%s", c->safe, e[k].name);
			if (a->fmt == &tree_format_psg)
				r = fn(ctx, a, where);
			tree_asset_put(as->t, pin);
		}
		if (r == RC_NOENT || r == RC_IO || r == RC_EXISTS)
			r = RC_OK;
		free(e);
		tlist_discard(&l);
	}
	free(seen.v);
	return r;
}

struct tex_lint {
	struct dist_objects *o;
	const struct district *m;
};

static enum rc pres_textures(void *ctx, struct asset *a, const char *where)
{
	struct tex_lint *tl = ctx;

	textures_of_arena(tl->o, a, where, tl->m);
	return RC_OK;
}

static enum rc textures_lint(struct dist_objects *o, struct asset *as, const struct district *m)
{
	struct tex_lint tl = {o, m};

	return each_arena(as, m, DIST_PRES, pres_textures, &tl);
}

static enum rc sim_objects(void *ctx, struct asset *a, const char *where)
{
	return objects_of_arena(ctx, a, where, false);
}

static enum rc sim_placed(void *ctx, struct asset *a, const char *where)
{
	return objects_of_arena(ctx, a, where, true);
}

/* Every Sim collection's arenas, in CMAP order then by name. Problems are lines of errors.txt;
 * only memory fails the load. arg OBJ_PLACED: the props' placements alone, for scene.glb (no
 * rails, collision or texture lint, which cost a pass over every Pres arena). */
static enum rc load_objects(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			    void (**dtor)(void *))
{
	const struct district *m;
	struct dist_objects *o;
	struct dmo_cat cat = {0};
	bool found = false;
	enum rc r;

	if (!(m = manifests(as, &r)))
		return r;
	if (!as->t->fold)
		return RC_NOENT;
	if (!(o = calloc(1, sizeof *o)))
		return RC_NOMEM;
	dist_objects_init(o);
	r = dmo_cat_load(&cat, as, &found);
	if (found) {
		o->model_of = dmo_model_of;
		o->model_ctx = &cat;
	}
	if (r == RC_OK)
		r = each_arena(as, m, DIST_SIM, arg == OBJ_PLACED ? sim_placed : sim_objects, o);
	free(cat.v);
	o->model_of = NULL;
	o->model_ctx = NULL;
	if (r == RC_OK && arg != OBJ_PLACED)
		r = textures_lint(o, as, m);
	if (r == RC_OK)
		r = dist_objects_finish(o);
	if (r != RC_OK) {
		objects_free(o);
		return r;
	}
	*data = o;
	*bytes = sizeof *o + o->props.cap + o->rails.cap + o->surfaces.cap +
		 o->cap_placed * sizeof *o->placed + o->cap_surf * sizeof *o->surf +
		 diag_heap_bytes(&o->d);
	*dtor = objects_free;
	return RC_OK;
}

static enum rc render_objects(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct dist_objects *o = c->need;
	const struct buf *body = c->self.kind == K_PROPS   ? &o->props
				 : c->self.kind == K_RAILS ? &o->rails
							   : &o->surfaces;

	(void)part;
	(void)first;
	buf_puts(&e->b, c->self.kind == K_PROPS	  ? dist_props_header
			: c->self.kind == K_RAILS ? dist_rails_header
						  : dist_surfaces_header);
	if (body->len)
		buf_put(&e->b, body->data, body->len);
	emit_item(e);
	return RC_OK;
}

/* The objects (what: OBJ_ALL, or OBJ_PLACED), pinned (NULL without a folder layer). */
static const struct dist_objects *objects_peek(struct asset *as, unsigned what,
					       struct cache_ent **ent, enum rc *r)
{
	*ent = NULL;
	*r = RC_OK;
	if (!as->t->fold)
		return NULL;
	return asset_need(as, ND_OBJECTS, what, ent, r);
}

/* ---- collision.glb: the Sim stream's ClusteredMesh triangles in world space ---- */

/*
 * One glTF mesh per ClusteredMesh object (named <arena>/<row>), three vertices per triangle in
 * the object's order, one primitive per surface id (ascending) whose indices are that
 * surface's triangles' vertices. The parsed objects are kept (their triangles decode on
 * demand); an index range is found by one pass over the object's triangles.
 */
#define COLL_BATCH 256u

struct collision {
	struct wo_cmesh *cm;
	uint16_t **surf; /* per mesh: the surface id of each primitive */
	char **names;
	struct gltf_mesh *meshes;
	struct gltf_prim **prims;
	uint32_t n, cap;
	struct gltf_model model;
	struct gltf_plan plan;
	bool planned;
};

static void collision_free(void *p)
{
	struct collision *co = p;

	if (co->planned)
		gltf_plan_free(&co->plan);
	for (uint32_t i = 0; i < co->n; i++) {
		wo_cmesh_free(&co->cm[i]);
		free(co->surf[i]);
		free(co->names[i]);
		free(co->prims[i]);
	}
	free(co->cm);
	free(co->surf);
	free(co->names);
	free(co->meshes);
	free(co->prims);
	free(co);
}

static enum rc coll_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct collision *co = ctx;
	const struct wo_cmesh *cm;
	struct wo_tri t[COLL_BATCH];
	uint64_t done = 0, seen = 0;

	if (q->mesh >= co->n)
		return RC_INVAL;
	cm = &co->cm[q->mesh];
	if (q->what == GLTF_D_POSITION) {
		float(*v)[3] = out;

		while (done < n) {
			uint64_t at = first + done, tri = at / 3;
			uint32_t got = wo_cmesh_tris(cm, (uint32_t)tri, COLL_BATCH, t);

			if (!got)
				return RC_CORRUPT;
			for (uint32_t k = 0; k < got && done < n; k++)
				for (uint64_t c = (k == 0 ? at % 3 : 0); c < 3 && done < n; c++)
					memcpy(v[done++], t[k].v[c], sizeof v[0]);
		}
		return RC_OK;
	}
	if (q->what != GLTF_D_INDEX || q->set >= co->meshes[q->mesh].n_prims)
		return RC_INVAL;
	for (uint32_t tri = 0; done < n && tri < cm->ntris;) {
		uint32_t got = wo_cmesh_tris(cm, tri, COLL_BATCH, t);

		if (!got)
			break;
		for (uint32_t k = 0; k < got && done < n; k++) {
			if (t[k].surface != co->surf[q->mesh][q->set])
				continue;
			for (uint32_t c = 0; c < 3 && done < n; c++, seen++)
				if (seen >= first)
					((uint32_t *)out)[done++] = (tri + k) * 3 + c;
		}
		tri += got;
	}
	return done == n ? RC_OK : RC_CORRUPT;
}

/* Take a parsed ClusteredMesh (moved into the collision) as a mesh of its surfaces. */
static enum rc coll_take(struct collision *co, struct wo_cmesh *cm, const char *name)
{
	struct wo_surface_count *sv = NULL;
	uint32_t ns = 0;
	enum rc r;

	if (!cm->ntris || cm->ntris > UINT32_MAX / 3) {
		wo_cmesh_free(cm);
		return RC_OK;
	}
	if (co->n == co->cap) {
		uint32_t cap = co->cap ? co->cap * 2 : 16;
		void *a = xrealloc_n(co->cm, cap, sizeof *co->cm),
		     *b = a ? (co->cm = a, xrealloc_n(co->surf, cap, sizeof *co->surf)) : NULL,
		     *c = b ? (co->surf = b, xrealloc_n(co->names, cap, sizeof *co->names)) : NULL,
		     *d = c ? (co->names = c, xrealloc_n(co->meshes, cap, sizeof *co->meshes))
			    : NULL,
		     *e =
			 d ? (co->meshes = d, xrealloc_n(co->prims, cap, sizeof *co->prims)) : NULL;

		if (!e) {
			wo_cmesh_free(cm);
			return RC_NOMEM;
		}
		co->prims = e;
		co->cap = cap;
	}
	r = wo_cmesh_surfaces(cm, &sv, &ns);
	co->cm[co->n] = *cm;
	co->surf[co->n] = xcalloc_n(ns ? ns : 1, sizeof **co->surf);
	co->prims[co->n] = xcalloc_n(ns ? ns : 1, sizeof **co->prims);
	co->names[co->n] = strdup(name);
	co->n++;
	if (r != RC_OK || !co->surf[co->n - 1] || !co->prims[co->n - 1] || !co->names[co->n - 1]) {
		free(sv);
		return r != RC_OK ? r : RC_NOMEM;
	}
	for (uint32_t k = 0; k < ns; k++) {
		co->surf[co->n - 1][k] = sv[k].id;
		co->prims[co->n - 1][k] = (struct gltf_prim){-1, (uint64_t)sv[k].tris * 3, false};
	}
	co->meshes[co->n - 1] = (struct gltf_mesh){
	    .name = {co->names[co->n - 1], strlen(co->names[co->n - 1])},
	    .n_vertices = (uint64_t)cm->ntris * 3,
	    .prims = co->prims[co->n - 1],
	    .n_prims = ns,
	};
	free(sv);
	return RC_OK;
}

/* The ClusteredMesh objects of one arena. */
static enum rc coll_of_arena(struct collision *co, struct asset *a, const char *where)
{
	const struct arena *ar = &pm(a)->a;
	enum rc r = RC_OK;

	for (uint32_t i = 0; i < ar->n_dict && r == RC_OK; i++) {
		const struct arena_dict_entry *de = arena_row(ar, i);
		uint8_t *obj = NULL;
		size_t len = 0;
		struct wo_cmesh cm = {0};
		char name[2 * NAME_COMPONENT_MAX + 16];

		if (!de || de->type_id != WO_T_CLUSTEREDMESH)
			continue;
		r = arena_read_object(&a->src, ar, i, &obj, &len);
		if (r == RC_OK && wo_cmesh_parse(obj, len, &cm, NULL) == RC_OK) {
			snprintf(name, sizeof name, "%s/%u", where, i);
			r = coll_take(co, &cm, name);
		} else {
			wo_cmesh_free(&cm);
			r = r == RC_NOMEM ? r : RC_OK; /* errors.txt says why (props.tsv's pass) */
		}
		free(obj);
	}
	return r;
}

static enum rc sim_collision(void *ctx, struct asset *a, const char *where)
{
	return coll_of_arena(ctx, a, where);
}

static enum rc load_collision(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			      void (**dtor)(void *))
{
	const struct district *m;
	struct collision *co;
	size_t held = 0;
	enum rc r;

	(void)arg;
	if (!(m = manifests(as, &r)))
		return r;
	if (!as->t->fold)
		return RC_NOENT;
	if (!(co = calloc(1, sizeof *co)))
		return RC_NOMEM;
	r = each_arena(as, m, DIST_SIM, sim_collision, co);
	co->model = (struct gltf_model){.meshes = co->meshes, .n_meshes = co->n, .fill = coll_fill};
	if (r == RC_OK)
		r = gltf_bounds(&co->model, co);
	if (r == RC_OK) {
		r = gltf_plan(&co->model, &co->plan);
		co->planned = r == RC_OK;
	}
	if (r != RC_OK) {
		collision_free(co);
		return r;
	}
	for (uint32_t i = 0; i < co->n; i++)
		held += co->cm[i].size + co->cm[i].ncl * sizeof *co->cm[i].cl + 128;
	*data = co;
	*bytes = sizeof *co + held + gltf_plan_heap(&co->plan);
	*dtor = collision_free;
	return RC_OK;
}

static enum rc coll_layout(const struct tctx *c, struct layout_build *lb)
{
	const struct collision *co = c->need;

	view_glb_layout(&co->plan, lb);
	return RC_OK;
}

static enum rc coll_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct collision *co = c->need;

	return gltf_render(&co->plan, (void *)co, part, first, e);
}

/* ---- rails.glb: the grind rails as line primitives ---- */

/* One mesh "rails": two vertices per segment (start, end), rail after rail as rails.tsv lists
 * them; one LINES primitive per rail. A copy of the segments is kept. */
struct rails_glb {
	float (*seg)[2][3];
	uint32_t n_seg;
	struct gltf_prim *prims;
	uint32_t *first; /* per rail: its first segment */
	struct gltf_mesh mesh;
	struct gltf_model model;
	struct gltf_plan plan;
	bool planned;
};

static void rails_free(void *p)
{
	struct rails_glb *rg = p;

	if (rg->planned)
		gltf_plan_free(&rg->plan);
	free(rg->seg);
	free(rg->prims);
	free(rg->first);
	free(rg);
}

static enum rc rails_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct rails_glb *rg = ctx;

	if (q->mesh != 0)
		return RC_INVAL;
	if (q->what == GLTF_D_POSITION) {
		for (size_t k = 0; k < n; k++) {
			uint64_t v = first + k;

			if (v / 2 >= rg->n_seg)
				return RC_INVAL;
			memcpy((float *)out + 3 * k, rg->seg[v / 2][v % 2], 3 * sizeof(float));
		}
		return RC_OK;
	}
	if (q->what != GLTF_D_INDEX || q->set >= rg->mesh.n_prims)
		return RC_INVAL;
	for (size_t k = 0; k < n; k++)
		((uint32_t *)out)[k] = (uint32_t)(2 * (uint64_t)rg->first[q->set] + first + k);
	return RC_OK;
}

static enum rc load_rails(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	struct cache_ent *ent;
	enum rc r;
	const struct dist_objects *o = asset_need(as, ND_OBJECTS, 0, &ent, &r);
	struct rails_glb *rg;
	uint32_t at = 0;

	(void)arg;
	if (!o)
		return r;
	if (o->n_seg > UINT32_MAX / 4 || !(rg = calloc(1, sizeof *rg))) {
		asset_unpin(as, ent);
		return RC_NOMEM;
	}
	rg->n_seg = (uint32_t)o->n_seg;
	rg->seg = xcalloc_n(o->n_seg ? o->n_seg : 1, sizeof *rg->seg);
	rg->prims = xcalloc_n(o->n_rail_list ? o->n_rail_list : 1, sizeof *rg->prims);
	rg->first = xcalloc_n(o->n_rail_list ? o->n_rail_list : 1, sizeof *rg->first);
	r = rg->seg && rg->prims && rg->first ? RC_OK : RC_NOMEM;
	if (r == RC_OK && o->n_seg)
		memcpy(rg->seg, o->seg, o->n_seg * sizeof *rg->seg);
	for (size_t i = 0; r == RC_OK && i < o->n_rail_list; i++) {
		rg->first[i] = at;
		rg->prims[i] = (struct gltf_prim){-1, 2 * (uint64_t)o->rail_segs[i], true};
		at += o->rail_segs[i];
	}
	asset_unpin(as, ent);
	rg->mesh = (struct gltf_mesh){.name = {"rails", 5},
				      .n_vertices = 2 * (uint64_t)rg->n_seg,
				      .prims = rg->prims,
				      .n_prims = (uint32_t)o->n_rail_list};
	rg->model = (struct gltf_model){
	    .meshes = &rg->mesh, .n_meshes = rg->mesh.n_prims ? 1 : 0, .fill = rails_fill};
	if (r == RC_OK)
		r = gltf_bounds(&rg->model, rg);
	if (r == RC_OK) {
		r = gltf_plan(&rg->model, &rg->plan);
		rg->planned = r == RC_OK;
	}
	if (r != RC_OK) {
		rails_free(rg);
		return r;
	}
	*data = rg;
	*bytes = sizeof *rg + (size_t)rg->n_seg * sizeof *rg->seg +
		 (size_t)rg->mesh.n_prims * (sizeof *rg->prims + 4) + gltf_plan_heap(&rg->plan);
	*dtor = rails_free;
	return RC_OK;
}

static enum rc rails_layout(const struct tctx *c, struct layout_build *lb)
{
	const struct rails_glb *rg = c->need;

	view_glb_layout(&rg->plan, lb);
	return RC_OK;
}

static enum rc rails_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct rails_glb *rg = c->need;

	return gltf_render(&rg->plan, (void *)rg, part, first, e);
}

static const struct tree_need dist_needs[ND_COUNT] = {
    [ND_MANIFESTS] = {load_manifests, 0},  [ND_SCAN] = {load_scan, 1},
    [ND_SCENE] = {load_scene, -1},	   [ND_OBJECTS] = {load_objects, -1},
    [ND_COLLISION] = {load_collision, -1}, [ND_RAILS] = {load_rails, -1},
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
	const struct district *m = manifests(c->as, &r);

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
	const struct dist_objects *o = objects_peek(c->as, OBJ_ALL, &ent, &r);

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
	const struct dist_objects *o = objects_peek(c->as, OBJ_ALL, &ent, &r);

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
	const struct dist_objects *o = objects_peek(c->as, OBJ_ALL, &ent, &r);

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
    [K_SCENE] = FILE_("scene", ND_SCENE, scene_layout, scene_render),
    [K_TILES] = {"tiles", TT_DIR, 0, false, list_tiles, NULL, NULL, NULL, NULL, false},
    [K_TILE] = FILE_("tile", ND_SCENE, scene_layout, scene_render),
    [K_PROPS] = FILE_("props", ND_OBJECTS, NULL, render_objects),
    [K_RAILS] = FILE_("rails", ND_OBJECTS, NULL, render_objects),
    [K_SURFACES] = FILE_("surfaces", ND_OBJECTS, NULL, render_objects),
    [K_COLLISION] = FILE_("collision", ND_COLLISION, coll_layout, coll_render),
    [K_RAILS_GLB] = FILE_("rails glb", ND_RAILS, rails_layout, rails_render),
};

const struct tree_format tree_format_district = {
    .name = "district",
    .kinds = dist_kinds,
    .n_kinds = K_COUNT,
    .needs = dist_needs,
    .n_needs = ND_COUNT,
    .mount = dist_mount,
};
