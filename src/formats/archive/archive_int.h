/*
 * Inside the archive layer: the entry index shared by the EB/BIG code (archive.c) and the
 * stream collections (sfil.c). A parser fills an arc_index with segments in output order
 * through arcx_add, then arcx_finish cuts them into pieces.
 */
#ifndef PSGFS_ARCHIVE_INT_H
#define PSGFS_ARCHIVE_INT_H

#include <stdatomic.h>

#include "psgfs/formats/archive.h"
#include "psgfs/formats/refpack.h"

/* A RefPack restart point: the decoder state and the last min(out, RP_WINDOW) bytes. */
struct arcx_restart {
	struct rp_state st;
	uint8_t *win;
	uint32_t win_len;
};

struct arcx_seg {
	struct arc_seg s;
	uint64_t piece0; /* its first piece */
	uint64_t real;	 /* bytes the stored bytes really give, when an index-time decode knows */
	uint64_t step;	 /* RefPack: output bytes between restart points (0: none) */
	uint32_t rs0;	 /* restart point r >= 1 is rs[rs0 + r - 1] */
	uint32_t nrs;
	uint8_t why; /* enum rc a BAD segment's reads fail with */
};

struct arc_index {
	uint64_t size; /* unpacked bytes the table claims */
	struct arcx_seg *seg;
	uint32_t nseg, segcap;
	struct arcx_restart *rs;
	uint32_t nrs, rscap;
	uint64_t npieces;
	uint64_t bytes;
	atomic_ullong decodes;	/* segment decodes by arc_piece, for tests and info */
	atomic_ullong overruns; /* decodes that found a segment holding more than it declares */
	atomic_ullong decoded;	/* bytes decoders produced for arc_piece, dropped ones included */
};

/* At most this many chunks per entry (a 4 GiB entry in 64 KiB chunks): the index costs about
 * 80 bytes per chunk, and 8 stored bytes per chunk must not buy 80 bytes of memory. */
#define ARCX_CHUNKS_MAX 65536u

/* zlib and raw deflate chunks that unpack to more than this are not decoded: each piece of
 * such a chunk inflates from the chunk's start (zlib keeps no restart points), so one 4 GiB
 * chunk of a 4 MB archive would cost 2 TiB of inflating to read whole. */
#define ARCX_INFLATE_MAX (16u << 20)

/* At most this many restart points per RefPack segment (each holds RP_WINDOW bytes). */
#define ARCX_RESTARTS_MAX 32u

struct arc_index *arcx_new(uint64_t size);
/* Append a segment (out_off must follow the previous one; zero-length ones are dropped). */
enum rc arcx_add(struct arc_index *ix, const struct arc_seg *s, enum rc why);
/* Cover what the segments leave of ix->size with a BAD segment, clip what overflows it,
 * place restart points in long RefPack segments (reading s), and count the pieces. */
enum rc arcx_finish(const struct src *s, struct arc_index *ix, const char *name, struct diag *d);

#endif
