/*
 * The namespace of a mounted RW4 arena (.psg). Mounting parses only the header, sections and
 * dictionary (arena_open); the scene (skeleton, mesh structure), each mesh's vertices, the
 * texture names and each texture are decoded on first use and cached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/arena.h"
#include "psgfs/bytes.h"
#include "psgfs/names.h"
#include "psgfs/skate_mesh.h"
#include "psgfs/skate_objects.h"
#include "psgfs/texture.h"
#include "tree/tree_int.h"

enum {
	K_ROOT,
	K_INFO,
	K_ERRORS,
	K_HEADER,
	K_DICT,
	K_TOC,
	K_SECTIONS,
	K_TYPES,
	K_SUBREFS,
	K_EXTARENAS,
	K_OBJECTS,
	K_OBJ_BIN,
	K_OBJ_TXT,
	K_SKEL,
	K_BONES_TSV,
	K_NAMES,
	K_INVBIND,
	K_BONES,
	K_BONE,
	K_MESHES,
	K_MESH,
	K_M_DESC,
	K_M_PALETTE,
	K_M_ISLANDS,
	K_M_VERTS,
	K_M_TRIS,
	K_M_SKIN,
	K_TEXTURES,
	K_TEX_DDS,
	K_TEX_PNG,
	K_EXPORT,
	K_EXPORT_PSK,
	K_COUNT
};

/* Permanent memo slots, and memo ids inside KEY_FMT for the evictable decodes. */
enum { PERM_SCENE, PERM_TEXNAMES, PERM_SWEEP };
#define MEMO_MESH(k) ((1ull << 40) | (k))
#define MEMO_TEX(i)  ((2ull << 40) | (i))

struct psg_mount {
	struct arena a;
	struct diag open_diag;
	char *hierarchy; /* text of the -o hierarchy file, or NULL */
	bool has_model;	 /* a RenderModelData or RenderOptiMeshData exists */
	bool has_textures;
};

static struct psg_mount *pm(struct tree *t)
{
	return t->priv;
}

/* ---- memoised decodes ---- */

struct scene_memo {
	struct skate_scene *sc;
	struct diag d;
};

static void scene_memo_free(void *p)
{
	struct scene_memo *m = p;

	skate_scene_free(m->sc);
	diag_free(&m->d);
	free(m);
}

static enum rc load_scene(struct tree *t, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	struct scene_memo *m = calloc(1, sizeof *m);
	enum rc r;

	(void)arg;
	if (!m)
		return RC_NOMEM;
	diag_init(&m->d);
	r = skate_scene_load(&t->src, &pm(t)->a, pm(t)->hierarchy, &m->sc, &m->d);
	if (r != RC_OK) {
		scene_memo_free(m);
		return r;
	}
	*data = m;
	*bytes = skate_scene_bytes(m->sc) + sizeof *m;
	*dtor = scene_memo_free;
	return RC_OK;
}

static struct scene_memo *get_scene(struct tree *t, struct cache_ent **ent, enum rc *r)
{
	*ent = NULL; /* permanent: nothing to unpin */
	return tree_memo_perm(t, PERM_SCENE, load_scene, r);
}

struct mesh_memo {
	struct skate_mesh_data *md;
	struct diag d;
};

static void mesh_memo_free(void *p)
{
	struct mesh_memo *m = p;

	skate_mesh_data_free(m->md);
	diag_free(&m->d);
	free(m);
}

static enum rc load_mesh(struct tree *t, uint64_t k, void **data, size_t *bytes,
			 void (**dtor)(void *))
{
	struct mesh_memo *m;
	struct scene_memo *s;
	struct cache_ent *ent;
	enum rc r;

	s = get_scene(t, &ent, &r);
	if (!s)
		return r;
	m = calloc(1, sizeof *m);
	if (!m) {
		cache_unpin(t->cache, ent);
		return RC_NOMEM;
	}
	diag_init(&m->d);
	r = k < s->sc->n_meshes
		? skate_mesh_decode(&t->src, &pm(t)->a, s->sc, (size_t)k, &m->md, &m->d)
		: RC_NOENT;
	cache_unpin(t->cache, ent);
	if (r != RC_OK) {
		mesh_memo_free(m);
		return r;
	}
	*data = m;
	*bytes = skate_mesh_data_bytes(m->md) + sizeof *m;
	*dtor = mesh_memo_free;
	return RC_OK;
}

struct texnames_memo {
	char **names;
	uint32_t n;
	struct diag d;
};

static void texnames_free(void *p)
{
	struct texnames_memo *m = p;

	texture_names_free(m->names, m->n);
	diag_free(&m->d);
	free(m);
}

static enum rc load_texnames(struct tree *t, uint64_t arg, void **data, size_t *bytes,
			     void (**dtor)(void *))
{
	struct texnames_memo *m = calloc(1, sizeof *m);
	enum rc r;

	(void)arg;
	if (!m)
		return RC_NOMEM;
	diag_init(&m->d);
	m->n = pm(t)->a.n_dict;
	r = texture_names(&t->src, &pm(t)->a, &m->names, &m->d);
	if (r != RC_OK) {
		m->names = NULL;
		texnames_free(m);
		return r;
	}
	*data = m;
	*bytes = (size_t)m->n * (sizeof(char *) + 32) + sizeof *m;
	*dtor = texnames_free;
	return RC_OK;
}

struct tex_memo {
	struct texture_image *img;
	struct diag d;
};

static void tex_memo_free(void *p)
{
	struct tex_memo *m = p;

	texture_image_free(m->img);
	diag_free(&m->d);
	free(m);
}

static enum rc load_tex(struct tree *t, uint64_t i, void **data, size_t *bytes,
			void (**dtor)(void *))
{
	struct tex_memo *m = calloc(1, sizeof *m);
	enum rc r;

	if (!m)
		return RC_NOMEM;
	diag_init(&m->d);
	r = texture_load(&t->src, &pm(t)->a, (uint32_t)i, &m->img, &m->d);
	if (r != RC_OK) {
		tex_memo_free(m);
		return r;
	}
	*data = m;
	*bytes = texture_image_bytes(m->img) + sizeof *m;
	*dtor = tex_memo_free;
	return RC_OK;
}

/* ---- object files ---- */

static bool type_has_text(uint32_t type_id)
{
	return skate_object_has_text(type_id) || skate_mesh_object_has_text(type_id) ||
	       type_id == RW_T_TEXTURE;
}

static enum rc object_text(struct tree *t, uint32_t i, struct buf *out, struct diag *d)
{
	const struct arena *a = &pm(t)->a;
	uint32_t type;

	if (i >= a->n_dict)
		return RC_NOENT;
	type = a->dict[i].type_id;
	if (skate_object_has_text(type))
		return skate_object_text(&t->src, a, i, out, d);
	if (skate_mesh_object_has_text(type))
		return skate_mesh_object_text(&t->src, a, i, out);
	if (type == RW_T_TEXTURE)
		return texture_object_text(&t->src, a, i, out);
	return RC_NOENT;
}

static void obj_label(struct tree *t, uint32_t i, char *out, size_t n)
{
	struct buf b;

	buf_init(&b);
	psg_obj_label(&pm(t)->a, i, &b);
	buf_putc(&b, 0);
	snprintf(out, n, "%s", b.oom || !b.data ? "object" : (char *)b.data);
	buf_free(&b);
}

/* ---- the validation sweep behind errors.txt and info.txt ---- */

struct sweep {
	struct diag d;
};

static void sweep_free(void *p)
{
	struct sweep *s = p;

	diag_free(&s->d);
	free(s);
}

static void diag_append(struct diag *to, const struct diag *from)
{
	for (size_t i = 0; i < from->n; i++)
		diag_add(to, "%s", from->msg[i]);
	to->dropped += from->dropped;
}

/* Every problem in the file, in a fixed order: open, scene, meshes, textures, objects. */
static enum rc load_sweep(struct tree *t, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	struct psg_mount *m = pm(t);
	struct sweep *s = calloc(1, sizeof *s);
	struct cache_ent *ent;
	enum rc r;

	(void)arg;
	if (!s)
		return RC_NOMEM;
	diag_init(&s->d);
	diag_append(&s->d, &m->open_diag);
	if (m->has_model) {
		struct scene_memo *sc = get_scene(t, &ent, &r);

		if (!sc) {
			diag_add(&s->d, "scene: cannot decode: %s", rc_str(r));
		} else {
			size_t nm = sc->sc->n_meshes;

			diag_append(&s->d, &sc->d);
			cache_unpin(t->cache, ent);
			for (size_t k = 0; k < nm; k++) {
				struct cache_ent *me;
				struct mesh_memo *mm = tree_memo(t, TREE_KEY(KEY_FMT, MEMO_MESH(k)),
								 load_mesh, k, &me, &r);

				if (!mm) {
					diag_add(&s->d, "mesh %02zu: cannot decode: %s", k,
						 rc_str(r));
					continue;
				}
				diag_append(&s->d, &mm->d);
				cache_unpin(t->cache, me);
			}
		}
	}
	for (uint32_t i = 0; i < m->a.n_dict; i++) {
		uint32_t type = m->a.dict[i].type_id;
		char label[64];
		struct buf b;

		if (type == RW_T_TEXTURE) {
			struct diag td;
			struct texture_image *img = NULL;

			diag_init(&td);
			r = texture_load(&t->src, &m->a, i, &img, &td);
			diag_append(&s->d, &td);
			if (r != RC_OK && td.n == 0)
				diag_add(&s->d, "object %u (Texture): cannot decode: %s", i,
					 rc_str(r));
			texture_image_free(img);
			diag_free(&td);
		}
		if (!type_has_text(type) || !m->a.dict[i].readable)
			continue;
		buf_init_count(&b);
		r = object_text(t, i, &b, NULL);
		if (r != RC_OK) {
			obj_label(t, i, label, sizeof label);
			diag_add(&s->d, "objects/%s.txt: cannot decode: %s", label, rc_str(r));
		}
	}
	*data = s;
	*bytes = sizeof *s + s->d.n * 96;
	*dtor = sweep_free;
	return RC_OK;
}

/* ---- listings ---- */

static enum rc list_root(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)self;
	tlist_add(out, tn(K_INFO, 0, 0), "info.txt");
	tlist_add(out, tn(K_ERRORS, 0, 0), "errors.txt");
	tlist_add(out, tn(K_HEADER, 0, 0), "header.txt");
	tlist_add(out, tn(K_DICT, 0, 0), "dictionary.tsv");
	tlist_add(out, tn(K_TOC, 0, 0), "toc.tsv");
	tlist_add(out, tn(K_SECTIONS, 0, 0), "sections");
	tlist_add(out, tn(K_OBJECTS, 0, 0), "objects");
	if (pm(t)->has_model) {
		tlist_add(out, tn(K_SKEL, 0, 0), "skeleton");
		tlist_add(out, tn(K_MESHES, 0, 0), "meshes");
		tlist_add(out, tn(K_EXPORT, 0, 0), "export");
	}
	if (pm(t)->has_textures)
		tlist_add(out, tn(K_TEXTURES, 0, 0), "textures");
	return RC_OK;
}

static enum rc list_sections(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)t;
	(void)self;
	tlist_add(out, tn(K_TYPES, 0, 0), "types.tsv");
	tlist_add(out, tn(K_SUBREFS, 0, 0), "subreferences.tsv");
	tlist_add(out, tn(K_EXTARENAS, 0, 0), "external_arenas.tsv");
	return RC_OK;
}

static enum rc list_objects(struct tree *t, struct tnode self, struct tlist *out)
{
	const struct arena *a = &pm(t)->a;

	(void)self;
	for (uint32_t i = 0; i < a->n_dict; i++) {
		char label[64];

		obj_label(t, i, label, sizeof label);
		tlist_add(out, tn(K_OBJ_BIN, i, 0), "%s.bin", label);
		if (type_has_text(a->dict[i].type_id))
			tlist_add(out, tn(K_OBJ_TXT, i, 0), "%s.txt", label);
	}
	return RC_OK;
}

static enum rc list_skel(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)t;
	(void)self;
	tlist_add(out, tn(K_BONES_TSV, 0, 0), "bones.tsv");
	tlist_add(out, tn(K_NAMES, 0, 0), "names.txt");
	tlist_add(out, tn(K_INVBIND, 0, 0), "inverse_bind.tsv");
	tlist_add(out, tn(K_BONES, 0, 0), "bones");
	return RC_OK;
}

static enum rc list_bones(struct tree *t, struct tnode self, struct tlist *out)
{
	struct cache_ent *ent;
	enum rc r;
	struct scene_memo *s = get_scene(t, &ent, &r);

	(void)self;
	if (!s)
		return r;
	for (uint32_t i = 0; i < s->sc->n_bones; i++) {
		char nm[80];

		skate_bone_file_name(s->sc, i, nm);
		tlist_add(out, tn(K_BONE, i, 0), "%s", nm);
	}
	cache_unpin(t->cache, ent);
	return RC_OK;
}

static enum rc list_meshes(struct tree *t, struct tnode self, struct tlist *out)
{
	struct cache_ent *ent;
	enum rc r;
	struct scene_memo *s = get_scene(t, &ent, &r);

	(void)self;
	if (!s)
		return r;
	for (size_t k = 0; k < s->sc->n_meshes && k < UINT32_MAX; k++)
		tlist_add(out, tn(K_MESH, (uint32_t)k, 0), "%02zu", k);
	cache_unpin(t->cache, ent);
	return RC_OK;
}

static enum rc list_mesh(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)t;
	tlist_add(out, tn(K_M_DESC, self.a, 0), "descriptor.txt");
	tlist_add(out, tn(K_M_PALETTE, self.a, 0), "palette.tsv");
	tlist_add(out, tn(K_M_ISLANDS, self.a, 0), "islands.tsv");
	tlist_add(out, tn(K_M_VERTS, self.a, 0), "vertices.tsv");
	tlist_add(out, tn(K_M_TRIS, self.a, 0), "triangles.tsv");
	tlist_add(out, tn(K_M_SKIN, self.a, 0), "skin.tsv");
	return RC_OK;
}

static enum rc list_textures(struct tree *t, struct tnode self, struct tlist *out)
{
	enum rc r;
	struct texnames_memo *m = tree_memo_perm(t, PERM_TEXNAMES, load_texnames, &r);

	(void)self;
	if (!m)
		return r;
	for (uint32_t i = 0; i < m->n; i++) {
		if (!m->names[i])
			continue;
		tlist_add(out, tn(K_TEX_DDS, i, 0), "%s.dds", m->names[i]);
		tlist_add(out, tn(K_TEX_PNG, i, 0), "%s.png", m->names[i]);
	}
	return RC_OK;
}

static enum rc list_export(struct tree *t, struct tnode self, struct tlist *out)
{
	char stem[NAME_COMPONENT_MAX + 1];
	struct cache_ent *ent;
	enum rc r;
	struct scene_memo *s = get_scene(t, &ent, &r);

	(void)self;
	if (!s)
		return r;
	/* One point and one wedge per exported vertex, so the extension is known up front. */
	name_component(t->stem, strlen(t->stem), stem);
	tlist_add(out, tn(K_EXPORT_PSK, 0, 0), "%s.%s", stem,
		  s->sc->total_vertices > 65536 ? "pskx" : "psk");
	cache_unpin(t->cache, ent);
	return RC_OK;
}

/* ---- renderers ---- */

static enum rc render_info(struct tree *t, struct tnode self, struct buf *out)
{
	struct psg_mount *m = pm(t);
	struct cache_ent *sent;
	enum rc r;
	struct sweep *sw;

	(void)self;
	buf_printf(out, "format: psg\nfile: %s\nsize: %llu\n", t->stem,
		   (unsigned long long)t->src.size);
	r = psg_render_info_summary(&t->src, &m->a, out);
	if (r != RC_OK)
		return r;
	if (m->has_model) {
		struct scene_memo *s = get_scene(t, &sent, &r);

		if (s) {
			skate_scene_summary(s->sc, out);
			cache_unpin(t->cache, sent);
		} else {
			buf_printf(out, "scene: cannot decode: %s\n", rc_str(r));
		}
	}
	if (m->has_textures) {
		struct texnames_memo *tn_ = tree_memo_perm(t, PERM_TEXNAMES, load_texnames, &r);

		buf_puts(out, "textures:\n");
		for (uint32_t i = 0; tn_ && i < tn_->n; i++) {
			if (!tn_->names[i])
				continue;
			buf_puts(out, "  ");
			if (texture_info_line(&t->src, &m->a, i, tn_->names[i], out) != RC_OK)
				buf_printf(out, "%s (unreadable)\n", tn_->names[i]);
		}
	}
	sw = tree_memo_perm(t, PERM_SWEEP, load_sweep, &r);
	if (!sw)
		return r;
	buf_printf(out, "problems: %zu\n", diag_count(&sw->d));
	return RC_OK;
}

static enum rc render_errors(struct tree *t, struct tnode self, struct buf *out)
{
	enum rc r;
	struct sweep *sw = tree_memo_perm(t, PERM_SWEEP, load_sweep, &r);

	(void)self;
	if (!sw)
		return r;
	for (size_t i = 0; i < sw->d.n; i++) {
		buf_puts(out, sw->d.msg[i]);
		buf_putc(out, '\n');
	}
	if (sw->d.dropped)
		buf_printf(out, "... %zu more problems not listed\n", sw->d.dropped);
	return RC_OK;
}

static enum rc render_arena_file(struct tree *t, struct tnode self, struct buf *out)
{
	const struct arena *a = &pm(t)->a;

	switch (self.kind) {
	case K_HEADER:
		return psg_render_header_txt(&t->src, a, out);
	case K_DICT:
		return psg_render_dictionary_tsv(&t->src, a, out);
	case K_TOC:
		return psg_render_toc_tsv(&t->src, a, out, NULL);
	case K_TYPES:
		return psg_render_types_tsv(&t->src, a, out);
	case K_SUBREFS:
		return psg_render_subrefs_tsv(&t->src, a, out);
	case K_EXTARENAS:
		return psg_render_external_arenas_tsv(&t->src, a, out);
	default:
		return RC_NOENT;
	}
}

static enum rc obj_extent(struct tree *t, struct tnode self, uint64_t *off, uint64_t *len)
{
	const struct arena *a = &pm(t)->a;

	if (self.a >= a->n_dict)
		return RC_NOENT;
	if (!a->dict[self.a].readable)
		return RC_BOUNDS; /* listed in errors.txt; the file answers EIO */
	*off = a->dict[self.a].start;
	*len = a->dict[self.a].size;
	return RC_OK;
}

static enum rc render_obj_txt(struct tree *t, struct tnode self, struct buf *out)
{
	enum rc r = object_text(t, self.a, out, NULL);

	/* Anything short of a full decode is EIO for the view; the .bin stays readable. */
	return r == RC_OK || r == RC_NOENT || r == RC_NOMEM ? r : RC_CORRUPT;
}

static enum rc render_skel(struct tree *t, struct tnode self, struct buf *out)
{
	struct cache_ent *ent;
	enum rc r;
	struct scene_memo *s = get_scene(t, &ent, &r);

	if (!s)
		return r;
	switch (self.kind) {
	case K_BONES_TSV:
		r = skate_text_bones(s->sc, out);
		break;
	case K_NAMES:
		r = skate_text_bone_names(s->sc, out);
		break;
	case K_INVBIND:
		r = skate_text_inverse_bind(s->sc, out);
		break;
	case K_BONE:
		r = skate_text_bone(s->sc, self.a, out);
		break;
	case K_M_DESC:
		r = skate_text_descriptor(s->sc, self.a, out);
		break;
	case K_M_PALETTE:
		r = skate_text_palette(s->sc, self.a, out);
		break;
	case K_M_ISLANDS:
		r = skate_text_islands(s->sc, self.a, out);
		break;
	case K_EXPORT_PSK: {
		bool pskx;

		r = skate_export_psk(&t->src, &pm(t)->a, s->sc, t->opts.zup, out, &pskx);
		break;
	}
	default:
		r = RC_NOENT;
	}
	cache_unpin(t->cache, ent);
	return r;
}

static enum rc render_mesh_data(struct tree *t, struct tnode self, struct buf *out)
{
	struct cache_ent *ent, *sent;
	enum rc r;
	struct mesh_memo *m =
	    tree_memo(t, TREE_KEY(KEY_FMT, MEMO_MESH(self.a)), load_mesh, self.a, &ent, &r);
	struct scene_memo *s;

	if (!m)
		return r;
	switch (self.kind) {
	case K_M_VERTS:
		r = skate_text_vertices(m->md, out);
		break;
	case K_M_TRIS:
		r = skate_text_triangles(m->md, out);
		break;
	case K_M_SKIN:
		s = get_scene(t, &sent, &r);
		if (s) {
			r = skate_text_skin(s->sc, m->md, out);
			cache_unpin(t->cache, sent);
		}
		break;
	default:
		r = RC_NOENT;
	}
	cache_unpin(t->cache, ent);
	return r;
}

static enum rc render_texture(struct tree *t, struct tnode self, struct buf *out)
{
	struct cache_ent *ent;
	enum rc r;
	struct tex_memo *m =
	    tree_memo(t, TREE_KEY(KEY_FMT, MEMO_TEX(self.a)), load_tex, self.a, &ent, &r);

	if (!m)
		return r;
	r = self.kind == K_TEX_DDS ? texture_dds(m->img, out) : texture_png(m->img, out);
	cache_unpin(t->cache, ent);
	return r;
}

/* ---- mount ---- */

static char *read_text_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	char chunk[4096];
	size_t n;
	size_t len;

	if (!f)
		return NULL;
	buf_init(&b);
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len < (16u << 20))
		buf_put(&b, chunk, n);
	fclose(f);
	buf_putc(&b, 0);
	return (char *)buf_steal(&b, &len);
}

static void psg_unmount(struct tree *t)
{
	struct psg_mount *m = t->priv;

	if (!m)
		return;
	arena_free(&m->a);
	diag_free(&m->open_diag);
	free(m->hierarchy);
	free(m);
	t->priv = NULL;
}

static enum tree_open_fail psg_mount(struct tree *t, char *why, size_t whylen)
{
	struct psg_mount *m = calloc(1, sizeof *m);
	enum rc r;

	if (!m) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	t->priv = m;
	diag_init(&m->open_diag);
	r = arena_open(&t->src, &m->a, &m->open_diag);
	if (r != RC_OK) {
		snprintf(why, whylen, "PSG arena: %s",
			 m->open_diag.n ? m->open_diag.msg[m->open_diag.n - 1] : rc_str(r));
		psg_unmount(t);
		if (r == RC_NOMEM)
			return TREE_FAIL_OTHER;
		if (r == RC_IO)
			return TREE_FAIL_OPEN;
		return r == RC_FORMAT ? TREE_FAIL_FORMAT : TREE_FAIL_DAMAGED;
	}
	if (t->opts.hierarchy_path) {
		m->hierarchy = read_text_file(t->opts.hierarchy_path);
		if (!m->hierarchy) {
			snprintf(why, whylen, "cannot read hierarchy file %s",
				 t->opts.hierarchy_path);
			psg_unmount(t);
			return TREE_FAIL_OTHER;
		}
	}
	for (uint32_t i = 0; i < m->a.n_dict; i++) {
		uint32_t type = m->a.dict[i].type_id;

		m->has_model |= type == RW_T_RENDERMODEL || type == RW_T_OPTIMESH;
		m->has_textures |= type == RW_T_TEXTURE;
	}
	/* The scene decodes PS3 only: list no skeleton/meshes/export that could not be opened. */
	if (m->has_model && m->a.h.plat != RW_PS3) {
		diag_add(&m->open_diag, "platform %s: meshes are decoded for ps3 only",
			 m->a.h.platform);
		m->has_model = false;
	}
	return TREE_FAIL_NONE;
}

static const struct tree_kind psg_kinds[K_COUNT] = {
    [K_ROOT] = {"root", true, list_root, NULL, NULL},
    [K_INFO] = {"info", false, NULL, render_info, NULL},
    [K_ERRORS] = {"errors", false, NULL, render_errors, NULL},
    [K_HEADER] = {"header", false, NULL, render_arena_file, NULL},
    [K_DICT] = {"dictionary", false, NULL, render_arena_file, NULL},
    [K_TOC] = {"toc", false, NULL, render_arena_file, NULL},
    [K_SECTIONS] = {"sections", true, list_sections, NULL, NULL},
    [K_TYPES] = {"types", false, NULL, render_arena_file, NULL},
    [K_SUBREFS] = {"subreferences", false, NULL, render_arena_file, NULL},
    [K_EXTARENAS] = {"external arenas", false, NULL, render_arena_file, NULL},
    [K_OBJECTS] = {"objects", true, list_objects, NULL, NULL},
    [K_OBJ_BIN] = {"object bytes", false, NULL, NULL, obj_extent},
    [K_OBJ_TXT] = {"object view", false, NULL, render_obj_txt, NULL},
    [K_SKEL] = {"skeleton", true, list_skel, NULL, NULL},
    [K_BONES_TSV] = {"bones.tsv", false, NULL, render_skel, NULL},
    [K_NAMES] = {"names.txt", false, NULL, render_skel, NULL},
    [K_INVBIND] = {"inverse_bind.tsv", false, NULL, render_skel, NULL},
    [K_BONES] = {"bones", true, list_bones, NULL, NULL},
    [K_BONE] = {"bone", false, NULL, render_skel, NULL},
    [K_MESHES] = {"meshes", true, list_meshes, NULL, NULL},
    [K_MESH] = {"mesh", true, list_mesh, NULL, NULL},
    [K_M_DESC] = {"descriptor", false, NULL, render_skel, NULL},
    [K_M_PALETTE] = {"palette", false, NULL, render_skel, NULL},
    [K_M_ISLANDS] = {"islands", false, NULL, render_skel, NULL},
    [K_M_VERTS] = {"vertices", false, NULL, render_mesh_data, NULL},
    [K_M_TRIS] = {"triangles", false, NULL, render_mesh_data, NULL},
    [K_M_SKIN] = {"skin", false, NULL, render_mesh_data, NULL},
    [K_TEXTURES] = {"textures", true, list_textures, NULL, NULL},
    [K_TEX_DDS] = {"dds", false, NULL, render_texture, NULL},
    [K_TEX_PNG] = {"png", false, NULL, render_texture, NULL},
    [K_EXPORT] = {"export", true, list_export, NULL, NULL},
    [K_EXPORT_PSK] = {"psk export", false, NULL, render_skel, NULL},
};

const struct tree_format tree_format_psg = {
    .name = "psg",
    .kinds = psg_kinds,
    .n_kinds = K_COUNT,
    .mount = psg_mount,
    .unmount = psg_unmount,
};
