/* What the PSK and PSA namespaces share: mount, chunk files, skeleton files, errors. */
#ifndef PSGFS_TREE_NS_ACTORX_H
#define PSGFS_TREE_NS_ACTORX_H

#include "psgfs/base/diag.h"
#include "psgfs/formats/psk.h"
#include "tree/core/tree_int.h"
#include "tree/core/views.h"

/* Kinds both namespaces share, first in their kind tables (AX_K_FIRST_OWN on: their own). */
enum {
	AX_K_ROOT,
	AX_K_INFO,
	AX_K_ERRORS,
	AX_K_CHUNKS,
	AX_K_CHUNK,
	AX_K_SKEL,
	AX_K_BONES_TSV,
	AX_K_NAMES,
	AX_K_BONES,
	AX_K_BONE,
	AX_K_FIRST_OWN
};

/* The rows of the shared kinds in a namespace's kind table: its root lister, info renderer,
 * bone renderer and the need of a bone's file (0: none). */
#define AX_SHARED_KINDS(root_list, info_render, bone_render, bone_need)                            \
	[AX_K_ROOT] = {.what = "root", .type = TT_DIR, .list = root_list},                         \
	[AX_K_INFO] = {.what = "info", .type = TT_FILE, .render = info_render, .status = true},    \
	[AX_K_ERRORS] = {.what = "errors",                                                         \
			 .type = TT_FILE,                                                          \
			 .layout = ax_errors_layout,                                               \
			 .render = ax_errors,                                                      \
			 .status = true},                                                          \
	[AX_K_CHUNKS] = {.what = "chunks", .type = TT_DIR, .list = ax_list_chunks},                \
	[AX_K_CHUNK] = {.what = "chunk",                                                           \
			.type = TT_FILE,                                                           \
			.cheap = true,                                                             \
			.extent = ax_chunk_extent},                                                \
	[AX_K_SKEL] = {.what = "skeleton", .type = TT_DIR, .list = ax_list_skel},                  \
	[AX_K_BONES_TSV] = {.what = "bones.tsv",                                                   \
			    .type = TT_FILE,                                                       \
			    .layout = ax_bones_tsv_layout,                                         \
			    .render = ax_bones_tsv},                                               \
	[AX_K_NAMES] = {.what = "names.txt",                                                       \
			.type = TT_FILE,                                                           \
			.layout = ax_names_layout,                                                 \
			.render = ax_names},                                                       \
	[AX_K_BONES] = {.what = "bones", .type = TT_DIR, .list = ax_list_bones},                   \
	[AX_K_BONE] = {.what = "bone", .type = TT_FILE, .need = bone_need, .render = bone_render}

/* A mounted PSK or PSA (the asset's priv): the index built at mount and what it found. */
struct ax_ns {
	bool anim;
	struct psk_index psk;
	struct psa_index psa;
	struct diag d; /* structural problems, in file order */
	const struct psk_chunks *chunks;
	const struct psk_bone *bones;
	size_t n_bones;
	/* PSA bone parents (ns_psa.c): the file's, or where they came from when it stores 0
	 * for every bone (docs/psk-psa.md, "Bone parents"). */
	bool flat_in_file;  /* every bone after the first has parent 0 in the file */
	bool flat;	    /* ... and still, after -o hierarchy and a matching PSK */
	char *parents_from; /* "-o hierarchy", a sibling PSK's name, NULL: the file */
	size_t parents_set; /* bones whose parent that source gave */
	/* PSA: per sequence, the first sequence with the same keys (the same range of ANIMKEYS):
	 * their keys.tsv and scale_keys.tsv are the same bytes (ns_psa.c). */
	uint32_t *seq_canon;
};

static inline const struct ax_ns *ax_of(const struct tctx *c)
{
	return c->as->priv;
}

enum tree_open_fail ax_mount(struct asset *as, bool anim, char *why, size_t whylen);
void ax_unmount(struct asset *as);
/* Lines of info.txt every ActorX file has: the file, its chunk table, the source's state. */
void ax_info_head(const struct tctx *c, const char *format, struct buf *out);

/* Handlers of the shared kinds. bone_points: per bone the points it weights, or NULL. */
enum rc ax_list_chunks(const struct tctx *c, struct tlist *out);
enum rc ax_chunk_extent(const struct tctx *c, uint64_t *off, uint64_t *len);
enum rc ax_list_skel(const struct tctx *c, struct tlist *out);
enum rc ax_list_bones(const struct tctx *c, struct tlist *out);
enum rc ax_bones_tsv_layout(const struct tctx *c, struct layout_build *lb);
enum rc ax_bones_tsv(const struct tctx *c, unsigned part, uint64_t first, struct emit *e);
enum rc ax_names_layout(const struct tctx *c, struct layout_build *lb);
enum rc ax_names(const struct tctx *c, unsigned part, uint64_t first, struct emit *e);
enum rc ax_bone_txt(const struct tctx *c, const size_t *bone_points, struct emit *e);
enum rc ax_errors_layout(const struct tctx *c, struct layout_build *lb);
enum rc ax_errors(const struct tctx *c, unsigned part, uint64_t first, struct emit *e);
void ax_vec(struct buf *out, const float *v, size_t n);

#endif
