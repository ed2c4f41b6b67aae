/* Pieces shared by the PSK and PSA namespaces: chunk files, skeleton files, info/errors. */
#ifndef PSGFS_TREE_ACTORX_H
#define PSGFS_TREE_ACTORX_H

#include "psgfs/diag.h"
#include "psgfs/psk.h"
#include "tree/tree_int.h"

/* Kinds both namespaces share, in this order, before their own ones (AX_K_FIRST_OWN on). */
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

/*
 * The whole file decoded, built once on first use of anything beyond the chunk table. Each
 * format's own struct starts with this one; `bone_points` (PSK only) counts the points each
 * bone weights.
 */
struct actorx_decoded {
	struct diag d;
	const struct psk_bone *bones;
	size_t n_bones;
	const size_t *bone_points;
};

/* What a mounted PSK/PSA keeps from mount time: the chunk table, and how to decode the rest. */
struct actorx_mount {
	struct psk_chunks chunks;
	struct diag scan_diag;
	tree_load_fn decode; /* builds the format's struct (starting with actorx_decoded) */
	const char *what;    /* "mesh" or "animation", for errors.txt */
};

enum tree_open_fail actorx_mount(struct tree *t, enum psk_kind want, tree_load_fn decode, char *why,
				 size_t whylen);
/* The decoded file (kept for the mount's lifetime), or NULL with *r set. */
struct actorx_decoded *actorx_get(struct tree *t, enum rc *r);
/* Read the whole source into memory for a decoder; RC_IO when it cannot be read. */
enum rc actorx_slurp(struct tree *t, uint8_t **file);

/* Handlers of the shared kinds, used by both kind tables. */
enum rc actorx_list_chunks_dir(struct tree *t, struct tnode self, struct tlist *out);
enum rc actorx_list_skel(struct tree *t, struct tnode self, struct tlist *out);
enum rc actorx_list_bones_dir(struct tree *t, struct tnode self, struct tlist *out);
enum rc actorx_render_errors(struct tree *t, struct tnode self, struct buf *out);
enum rc actorx_render_bones_tsv(struct tree *t, struct tnode self, struct buf *out);
enum rc actorx_render_names(struct tree *t, struct tnode self, struct buf *out);
enum rc actorx_render_bone(struct tree *t, struct tnode self, struct buf *out);
void actorx_unmount(struct tree *t);
/* Has a chunk with this ID (or alias list "A|B") and at least one record. */
bool actorx_has_chunk(const struct tree *t, const char *ids);

enum rc actorx_chunk_extent(struct tree *t, struct tnode self, uint64_t *off, uint64_t *len);

/* "NN.CHUNKID" style helpers. */
void actorx_print_name(struct buf *out, const uint8_t name[PSK_NAME_LEN]);
void actorx_vec(struct buf *out, const float *v, size_t n);
void actorx_chunks_info(const struct tree *t, struct buf *out);

#endif
