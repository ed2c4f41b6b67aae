/* A model's materials and their links into the companion texture arena (psg_materials.c). */
#ifndef PSGFS_TREE_PSG_MATERIALS_H
#define PSGFS_TREE_PSG_MATERIALS_H

#include "psgfs/formats/arena.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/skate_objects.h"
#include "tree/core/tree_int.h"

/* Where the companion `<stem>_Textures.<ext>` was found. */
enum psg_comp_where {
	PSG_COMP_NONE,	 /* not found */
	PSG_COMP_FOLDER, /* a sibling in the mounted folder: materials link into it */
	PSG_COMP_BESIDE, /* beside the source of a single-file mount: named, not linked */
	PSG_COMP_BROKEN, /* found, but it is not a readable texture arena */
	PSG_COMP_MODS,	 /* single-file mount: the companion's mod in OUTDIR (-o mods) */
};

struct psg_channel {
	char *input;			   /* m_ShaderInput ("diffuse"), NULL when bad */
	char file[NAME_COMPONENT_MAX + 1]; /* link name stem, unique in the material */
	uint8_t kind;			   /* enum skate_union */
	bool has_guid;			   /* a GUID to resolve, whatever the form (stream too) */
	uint64_t guid;
	char *stream; /* the stream form's name, NULL otherwise */
	float constants[4];
	char *texture;	  /* GUID channels: the texture's file stem, NULL if none */
	uint32_t tex_row; /* and that texture's dictionary row in its arena */
	/* Folder mounts, a GUID the companion lacks (docs/skate-objects.md, "Per-texture
	 * arenas"): the slot of the 0x<GUID> arena elsewhere in the mount that holds it (0:
	 * the texture is the companion's), its path in the mount, and that path relative to
	 * the model's folder (links are ../../../ + it). */
	uint32_t tex_slot;
	char *tex_arena, *tex_link;
	/* Found by the TableOfContents of a texture arena of any name (folder_toc_index): then
	 * the other arenas the index says hold it too, ", "-separated (NULL: none). */
	bool by_toc;
	char *tex_also;
	char *own;	   /* guid channels naming an entry of the model's own TOC: its name */
	int64_t own_entry; /* that entry's index, -1 if none */
};

struct psg_material {
	uint32_t rmd, at; /* RenderMaterialData row, offset of the tRMaterial */
	char label[NAME_COMPONENT_MAX + 1];
	struct psg_channel *ch;
	uint32_t n_ch;
};

struct psg_materials {
	struct psg_material *v;
	uint32_t n;
	char *companion; /* its file name (as found, else as expected) */
	enum psg_comp_where where;
	bool searched;	  /* folder mounts: GUIDs the companion lacks were looked for elsewhere */
	bool toc_partial; /* ... and the TOC index stopped at a bound (folder_index.c, TOC_SCAN_*) */
};

/* TOC GUID -> name: a companion's textures (file stems), or the model's own entries. */
struct psg_tex_ref {
	uint64_t guid;
	const char *name;
	uint32_t row; /* the object the entry names */
	size_t order; /* TOC position: the first of equal GUIDs wins */
};
struct psg_textures_index {
	struct psg_tex_ref *v;
	size_t n;
};

/* Every tRMaterial of every RenderMaterialData in dictionary order; name: the model's file
 * name, for its companion's (fmt_sibling_name). */
enum rc psg_materials_load(const struct src *s, const struct arena *a, const char *name,
			   struct psg_materials **out);
void psg_materials_free(struct psg_materials *ms);
/* Fill each channel with a GUID from an index (sorts it): own = the model's own TOC (the Name
 * channel's target, which also labels the material), else the companion's textures. */
enum rc psg_materials_resolve(struct psg_materials *ms, struct psg_textures_index *ix, bool own);
/* Find the companion of the model asset `as` (a sibling in a folder mount, else beside the
 * source), set ms->where and resolve the channels through it; in a folder mount, then each
 * GUID still unresolved through the 0x<GUID> arenas of the mount (guid_index.h), then through
 * the TableOfContents of every texture arena of the mount (folder_toc_index), each checked
 * against the arena's TableOfContents as the mount opens it. Fails only for memory. */
enum rc psg_materials_link(struct asset *as, struct psg_materials *ms);
/* The texture index of an open arena asset, borrowing its memoised
 * TableOfContents and texture names (valid while the asset stays open); RC_UNSUPPORTED when
 * the asset is not a PSG arena with textures. Free ix->v with free(). */
enum rc psg_textures_index_of(struct asset *as, struct psg_textures_index *ix);
/* Counts for info.txt: channels with a GUID that is not the model's own TOC entry (whatever
 * their form; constants never), and how many of them name a texture. */
void psg_materials_counts(const struct psg_materials *ms, uint32_t *guid_ch, uint32_t *resolved,
			  uint32_t *elsewhere);
/* Of the `elsewhere` ones, how many were found by a TableOfContents (not by a 0x<GUID> name). */
uint32_t psg_materials_count_toc(const struct psg_materials *ms);
/* The texture arena a resolved channel names (the companion, or a slot elsewhere), pinned in
 * *pin; NULL with *r when it cannot be had. Release with psg_channel_arena_put. */
struct asset *psg_channel_arena_get(struct asset *model, uint32_t tex_slot, struct cache_ent **pin,
				    enum rc *r);
void psg_channel_arena_put(struct asset *model, uint32_t tex_slot, struct cache_ent *pin);
/* materials/NN.name/material.txt */
void psg_material_text(const struct psg_materials *ms, uint32_t i, struct buf *out);

#endif
