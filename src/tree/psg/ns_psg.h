/*
 * Internals shared by the files of the PSG namespace: ns_psg.c (kinds, listings, texts, the
 * mount), psg_needs.c (the decodes kinds need), psg_materials.c (materials and the companion
 * texture arena), psg_glb.c (the .glb export).
 */
#ifndef PSGFS_TREE_NS_PSG_H
#define PSGFS_TREE_NS_PSG_H

#include <pthread.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/diag.h"
#include "psgfs/formats/skate_mesh.h"
#include "tree/core/tree_int.h"

/* The decodes of an arena (psg_needs), indexed by the kinds' `need`. */
enum psg_need {
	N_NONE,
	N_SCENE,
	N_TEXNAMES,
	N_TOC,
	N_SWEEP,
	N_FULL,
	N_PLAN,	     /* the export without mesh data: names, vertex counts, skipped meshes */
	N_EXPORT,    /* the export with every mesh's stats: face and weight counts */
	N_MATERIALS, /* the materials and what they resolve to in the companion */
	N_STATS,     /* per mesh */
	N_TEX,	     /* per texture */
	N_GLB,	     /* export/<stem>.glb */
	N_COUNT
};
extern const struct tree_need psg_needs[N_COUNT];

struct psg_mount {
	struct arena a;
	struct diag open_diag;
	char *hierarchy; /* text of the -o hierarchy file, or NULL */
	bool has_model;	 /* a RenderModelData or RenderOptiMeshData exists */
	bool has_textures;
	bool has_materials; /* a RenderMaterialData exists */
	/* The companion texture arena, looked for once (psg_materials.c). */
	pthread_mutex_t comp_mu; /* lock order: tree/core/tree_int.h */
	bool comp_looked, comp_found;
	bool comp_modded;   /* single-file mounts: found in the mods folder */
	uint32_t comp_slot; /* folder mounts: its slot */
	struct asset *comp; /* single-file mounts: kept open, NULL when it would not open */
	char *comp_name;    /* its file name as found, else as expected */
};

static inline struct psg_mount *pm(const struct asset *as)
{
	return as->priv;
}

struct scene_memo {
	struct skate_scene *sc;
	struct diag d;
};
struct stats_memo {
	struct skate_mesh_stats *st;
	struct diag d;
};
struct texnames_memo {
	char **names;
	uint32_t n;
	uint32_t unlisted; /* named textures left out: texels past the end of the file */
};

/* The scene (permanent once loaded: nothing to unpin). */
static inline const struct scene_memo *psg_scene_of(struct asset *as, enum rc *r)
{
	struct cache_ent *ent;

	return asset_need(as, N_SCENE, 0, &ent, r); /* permanent: no pin */
}

/* objects/NNNN.TypeName.txt of row i (view_object_text); RC_NOENT when it has none. */
enum rc psg_object_text(struct asset *as, uint32_t i, struct buf *out, struct diag *d);
/* "NNNN.TypeName" of object i into out (n bytes): objects/ names its files so. */
void psg_obj_name(const struct arena *a, uint32_t i, char *out, size_t n);

/*
 * The companion `<stem>_Textures.<ext>` of a model asset (psg_materials.c): the sibling of that
 * name in a folder mount (held by the folder layer), else the file beside the source (kept
 * open by the model's mount). NULL with RC_NOENT when there is none, RC_FORMAT when it would
 * not open. Release with psg_companion_put.
 */
struct asset *psg_companion_get(struct asset *as, struct cache_ent **pin, enum rc *r);
void psg_companion_put(struct asset *as, struct cache_ent *pin);
/* The companion's file name (as found, else as expected); NULL before any lookup. */
const char *psg_companion_name(struct asset *as);
void psg_companion_close(struct psg_mount *m);

/* export/<stem>.glb (psg_glb.c): N_GLB with arg GLB_FULL; GLB_SHAPE is the same model from
 * headers alone (the export without stats, no bounds, no plan: skate_gltf_shape), which the
 * district's scene.glb places. */
enum { GLB_FULL, GLB_SHAPE };
enum rc psg_load_glb(struct asset *as, uint64_t arg, void **data, size_t *bytes,
		     void (**dtor)(void *));
enum rc psg_glb_layout(const struct tctx *c, struct layout_build *lb);
enum rc psg_glb_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e);
/* The export an N_GLB decode holds (the district's scene.glb places several). */
struct skate_gltf;
const struct skate_gltf *psg_glb_export(const void *glb);
/* Where picture i of an N_GLB memo comes from: texture row `row` of the arena at `slot`, or of
 * that model's companion (companion true, slot the model's). Equal ids are the same picture;
 * false when i is out of range. */
struct psg_pic_id {
	uint32_t slot, row;
	bool companion;
};
bool psg_glb_pic_id(const void *glb, uint32_t i, struct psg_pic_id *id);

#endif
