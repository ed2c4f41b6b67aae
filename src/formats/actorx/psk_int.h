/* Private helpers shared by the PSK/PSA scanner, readers and writers (not a public API). */
#ifndef PSGFS_PSK_INT_H
#define PSGFS_PSK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/formats/psk.h"

/* On-disk record sizes (docs/psk-psa.md, "PSK chunk list", "PSA chunks"). */
#define PSK_REC_PNTS	 12
#define PSK_REC_VTXW	 16
#define PSK_REC_FACE16	 12
#define PSK_REC_FACE32	 18
#define PSK_REC_MATT	 88
#define PSK_REC_BONE	 120
#define PSK_REC_WEIGHT	 12
#define PSK_REC_COLOR	 4
#define PSK_REC_UV	 8
#define PSK_REC_NORM	 12
#define PSK_REC_MRPHINFO 68
#define PSK_REC_MRPHDATA 28
#define PSK_REC_SOCKET	 164
#define PSA_REC_ANIMINFO 168
#define PSA_REC_KEY	 32
#define PSA_REC_SCALEKEY 16

#define PSK_WRITER_TYPE_FLAG 20100422
#define PSA_SCALEKEYS_FLAG   2003321 /* ActorX: ANIMHEAD >= this expects SCALEKEYS */

/* Printable form of a chunk's ID (non-printable bytes as \xHH) for diag lines. */
void psk_id_text(const struct psk_chunk *c, char out[84]);

/*
 * How many whole records of `want` bytes chunk c holds. Count 0 is always fine. A DataSize
 * other than `want` is reported and the chunk skipped (returns false): no writer is known to
 * extend these records, so reading a prefix of an unknown layout would only invent data.
 * A truncated chunk yields the records that are wholly present (and a diag line).
 */
bool psk_chunk_records(const struct psk_chunk *c, size_t idx, uint32_t want, size_t *n,
		       struct diag *d);

/* Per-category problem reporting: the first few lines in full, then one summary line. */
struct psk_rep {
	struct diag *d;
	const char *what;
	size_t n;
};
void psk_rep_add(struct psk_rep *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void psk_rep_end(struct psk_rep *r);

void psk_get_bone(const uint8_t *p, struct psk_bone *b);

/* Parent indices: bone 0 may point at 0 or -1, others must point before themselves. */
void psk_check_bones(const struct psk_bone *b, size_t n, const char *chunk, struct diag *d);

#endif
