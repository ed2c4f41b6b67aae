/* Pieces shared by the PSK and PSA namespaces: chunk files, skeleton files, info/errors. */
#ifndef PSGFS_TREE_ACTORX_H
#define PSGFS_TREE_ACTORX_H

#include "psgfs/diag.h"
#include "psgfs/psk.h"
#include "tree/tree_int.h"

/* What a mounted PSK/PSA keeps from mount time: the chunk table only. */
struct actorx_mount {
	struct psk_chunks chunks;
	struct diag scan_diag;
};

enum tree_open_fail actorx_mount(struct tree *t, enum psk_kind want, char *why, size_t whylen);
void actorx_unmount(struct tree *t);
/* Has a chunk with this ID (or alias list "A|B") and at least one record. */
bool actorx_has_chunk(const struct tree *t, const char *ids);

void actorx_list_chunks(struct tree *t, struct tlist *out, uint16_t chunk_kind);
enum psg_result actorx_chunk_extent(struct tree *t, struct tnode self, uint64_t *off,
				    uint64_t *len);

/* Skeleton files from a bone array; point_counts may be NULL (PSA). */
void actorx_list_bones(struct tree *t, const struct psk_bone *b, size_t n, struct tlist *out,
		       uint16_t bone_kind);
void actorx_bones_tsv(const struct psk_bone *b, size_t n, struct buf *out);
void actorx_names_txt(const struct psk_bone *b, size_t n, struct buf *out);
enum psg_result actorx_bone_txt(const struct psk_bone *b, size_t n, size_t i,
				const size_t *point_counts, struct buf *out);

/* "NN.CHUNKID" style helpers. */
void actorx_print_name(struct buf *out, const uint8_t name[PSK_NAME_LEN]);
void actorx_vec(struct buf *out, const float *v, size_t n);
void actorx_errors_txt(const struct diag *d, struct buf *out);
void actorx_chunks_info(const struct tree *t, struct buf *out);

#endif
