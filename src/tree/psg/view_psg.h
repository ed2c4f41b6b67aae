/* Text views of a mounted PSG (arena, objects, textures, skeleton, meshes). */
#ifndef PSGFS_TREE_VIEW_PSG_H
#define PSGFS_TREE_VIEW_PSG_H

#include "psgfs/formats/arena.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_objects.h"
#include "psgfs/formats/texture.h"
#include "tree/core/views.h"

/* "NNNN.TypeName" for dictionary index i (4 digits, more when >= 10000). */
void view_obj_label(const struct arena *a, uint32_t i, struct buf *out);

/* Helpers of the object views and the platform rows alike (here, below both). A reference
 * field by the one rule (arena_ref_to): "field: 0x... -> NNNN.Type[+0xOFF]", or why it names
 * nothing, then a newline. */
void view_ref_text(struct buf *out, const struct arena *a, const char *field, uint32_t v,
		   uint32_t want);
/* A vertex element's class: PERVERTEX, PERINSTANCE, NA or "?". */
const char *view_elem_class_name(uint32_t c);

enum rc view_header_txt(const struct arena *a, struct buf *out);
enum rc view_external_arenas_tsv(const struct arena *a, struct buf *out);
/* Lines of info.txt about the container (platform, version, object counts by type). */
enum rc view_info_summary(const struct arena *a, struct buf *out);

enum view_arena_table { VA_DICT, VA_TYPES, VA_SUBREFS };
struct rows view_arena_rows(const struct arena *a, enum view_arena_table which);

/* Every TableOfContents entry, in dictionary then entry order (toc.tsv). */
struct view_toc_entry {
	char *name; /* NULL when none or bad */
	size_t name_len;
	uint64_t guid;
	uint32_t type;
	struct skate_ref object;
};
struct view_toc {
	struct view_toc_entry *e;
	size_t n;
};
enum rc view_toc_load(const struct src *s, const struct arena *a, struct view_toc **out);
void view_toc_free(struct view_toc *v);
enum rc view_toc_render(const struct arena *a, const struct view_toc *v, uint64_t first,
			struct emit *e);

/*
 * objects/NNNN.TypeName.txt: one row per type with a decoded view (view_psg_object.c), so a
 * type has a view exactly when it has a row. Every field by name, references as
 * "-> NNNN.TypeName" (+0xOFF for subreferences), then the problems decoding found as one
 * footer, "problems (N):" and a line each, also added to d (may be NULL). RC_BOUNDS for a bad index
 * or an unreadable object, RC_UNSUPPORTED for a type without a row, the decoder's failure when the
 * object is broken.
 */
bool view_object_has_text(uint32_t type_id);
enum rc view_object_text(const struct src *s, const struct arena *a, uint32_t idx, struct buf *out,
			 struct diag *d);

/* What a row's function gets: the object, and its bytes when the row reads them. */
struct view_object {
	const struct src *s;
	const struct arena *a;
	uint32_t idx;
	const uint8_t *p;
	size_t n;
};
/* The rows' functions: they print the view and add what they find to problems. */
enum rc view_obj_version(const struct view_object *o, struct buf *out, struct diag *problems);
enum rc view_obj_toc(const struct view_object *o, struct buf *out, struct diag *problems);
enum rc view_obj_material(const struct view_object *o, struct buf *out, struct diag *problems);
enum rc view_obj_instance(const struct view_object *o, struct buf *out, struct diag *problems);
enum rc view_obj_base_resource(const struct view_object *o, struct buf *out, struct diag *problems);
enum rc view_obj_model(const struct view_object *o, struct buf *out, struct diag *problems);
enum rc view_obj_optimesh(const struct view_object *o, struct buf *out, struct diag *problems);
enum rc view_obj_buffer(const struct view_object *o, struct buf *out, struct diag *problems);
enum rc view_obj_mesh_helper(const struct view_object *o, struct buf *out, struct diag *problems);

/* One info.txt line "name format WxH mips cube|2d". */
enum rc view_texture_info_line(const struct src *s, const struct arena *a, uint32_t idx,
			       const char *name, struct buf *out);

/*
 * What one platform's arenas show their own way: one row per platform (view_psg_ps3.c,
 * view_psg_x360.c) beside its decoders (skate_platform.h). A new platform is a new row.
 */
struct view_platform {
	const struct skate_platform *decoders;
	/* meshes/NN/descriptor.txt (mesh < sc->n_meshes). */
	enum rc (*descriptor)(const struct skate_scene *sc, size_t mesh, struct buf *out);
	/* The fields of a decoded VertexDescriptor, VertexBuffer or IndexBuffer (object idx). */
	void (*vdes_text)(struct buf *out, const struct skate_vdes *v);
	void (*vb_text)(struct buf *out, const struct arena *a, uint32_t idx,
			const struct skate_vb *v);
	void (*ib_text)(struct buf *out, const struct arena *a, uint32_t idx,
			const struct skate_ib *v);
	/* objects/NNNN.Texture.txt (its problems added to problems) and view_texture_info_line
	 * of the platform. */
	enum rc (*texture_text)(const struct src *s, const struct arena *a, uint32_t idx,
				struct buf *out, struct diag *problems);
	enum rc (*texture_info_line)(const struct src *s, const struct arena *a, uint32_t idx,
				     const char *name, struct buf *out);
};
extern const struct view_platform view_platform_ps3;
extern const struct view_platform view_platform_x360;
/* The row of the platform whose decoders these are (skate_platform_decoders); the PS3 one
 * when none is theirs, or for NULL (view_psg_platform.c). */
const struct view_platform *view_platform_of(const struct skate_platform *decoders);

/* ---- skeleton and meshes (view_psg_mesh.c); TSV with a header line ---- */

/* "NNN.<safe name>.txt" for skeleton/bones/ (3+ digits). out must hold 80 bytes. */
void view_bone_file_name(const struct skate_scene *sc, uint32_t bone, char out[80]);

/* skeleton/bones.tsv (index name parent tx ty tz qx qy qz qw: bind pose, model space),
 * names.txt (one name per line), inverse_bind.tsv (index name m00 .. m33, as stored). */
enum view_skel_table { VS_BONES, VS_NAMES, VS_INVBIND };
struct rows view_skel_rows(const struct skate_scene *sc, enum view_skel_table which);
/* meshes/NN/palette.tsv (slot bone name) or islands.tsv (island start count primitive, and
 * base_vertex on Xbox 360) from item `first`; items (optional): only count the items (header
 * included). */
enum rc view_mesh_table(const struct skate_scene *sc, size_t mesh, bool islands, uint64_t first,
			struct emit *e, uint64_t *items);
/* The same tables whole. */
enum rc view_bones_text(const struct skate_scene *sc, struct buf *out);
/* skeleton/names.txt: one name per line. */
enum rc view_bone_names_text(const struct skate_scene *sc, struct buf *out);
/* skeleton/inverse_bind.tsv: index name m00 .. m33 (row-major as stored). */
enum rc view_inverse_bind_text(const struct skate_scene *sc, struct buf *out);
/* skeleton/bones/NNN.name.txt. RC_NOENT for a bad index. */
enum rc view_bone_text(const struct skate_scene *sc, uint32_t bone, struct buf *out);
/* meshes/NN/descriptor.txt, palette.tsv (slot bone name), islands.tsv
 * (island start count primitive). RC_NOENT for a bad mesh index. */
enum rc view_descriptor_text(const struct skate_scene *sc, size_t mesh, struct buf *out);
enum rc view_palette_text(const struct skate_scene *sc, size_t mesh, struct buf *out);
enum rc view_islands_text(const struct skate_scene *sc, size_t mesh, struct buf *out);
/*
 * A mesh's data files, rendered from any item on: vertices.tsv (vertex + one column per
 * component: px py pz, nx ny nz, u0 v0, r g b a, w0.., i0.., tx.., bx.., ...; item v+1 is
 * vertex v), triangles.tsv (triangle a b c island, numbered among the valid ones; item r+1 is
 * raw triple r, which writes nothing when invalid; needs the mesh's stats), skin.tsv (vertex
 * bone name weight; item v+1 is vertex v's influences). Item 0 is the header line.
 */
struct view_mesh {
	const struct src *s;
	const struct arena *a;
	const struct skate_scene *sc;
	size_t mesh;
	const struct skate_mesh_stats *st; /* triangles.tsv only */
};
enum rc view_vertices(const struct view_mesh *vm, uint64_t first, struct emit *e);
enum rc view_triangles(const struct view_mesh *vm, uint64_t first, struct emit *e);
enum rc view_skin(const struct view_mesh *vm, uint64_t first, struct emit *e);
/* info.txt lines: bones, hierarchy source, meshes, vertices, triangles, problems. */
void view_scene_summary(const struct skate_scene *sc, struct buf *out);

#endif
