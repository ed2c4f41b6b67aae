/*
 * RefPack (EA's LZ77 variant, docs/archives.md): a 5- or 6-byte header (`10 FB` + u24 size,
 * `90 FB` + u32 size, and the flag variants of the first byte) then byte-aligned commands.
 * The decoder is bounds-checked on both sides and resumable: its whole state is a struct
 * rp_state plus the last RP_WINDOW output bytes, so a long stream can be restarted anywhere
 * a restart point was recorded, with bounded memory.
 */
#ifndef PSGFS_REFPACK_H
#define PSGFS_REFPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/result.h"

/* The farthest a back-reference reaches: all history a restart point needs. */
#define RP_WINDOW (128u << 10)
/* Longest command with its literal bytes (4-byte opcode + 3 literals, or 1 + 112). */
#define RP_CMD_MAX 116u

/* The header at p (n bytes available): true with the claimed size and the header length. */
bool rp_header(const uint8_t *p, size_t n, uint64_t *size, size_t *hdr_len);

struct rp_state {
	uint64_t in;   /* stream bytes consumed, counted from the header's first byte */
	uint64_t out;  /* output bytes produced */
	uint32_t lit;  /* literal bytes of the current command still to copy (they follow at in) */
	uint32_t copy; /* back-reference bytes still to copy after them */
	uint32_t dist; /* their distance */
	bool done;     /* the end-of-stream command was read (pending bytes may remain) */
};

/* A state positioned after the header of the stream starting with p; false if none. */
bool rp_start(struct rp_state *st, const uint8_t *p, size_t n, uint64_t *size);

/*
 * Run the decoder. in holds in_len stream bytes starting at stream position st->in. buf
 * holds history in [0, pos) — at least min(st->out, RP_WINDOW) bytes, the latest output —
 * and receives output from pos up to cap. Stops when buf is full or the stream ended
 * (RC_OK, *end = new pos; st->done and no pending bytes means finished), when the input is
 * exhausted before the next whole command (RC_TRUNCATED: call again with input from st->in),
 * on a back-reference before the first output byte (RC_CORRUPT), or past the history
 * given (RC_INVAL: a caller bug).
 */
enum rc rp_run(struct rp_state *st, const uint8_t *in, size_t in_len, uint8_t *buf, size_t pos,
	       size_t cap, size_t *end);

/* True when the stream is finished (end command read, nothing pending). */
static inline bool rp_finished(const struct rp_state *st)
{
	return st->done && st->lit == 0 && st->copy == 0;
}

/*
 * Whole-buffer decode of the stream in[0, n) into dst (at most cap bytes). *got = bytes
 * produced. RC_OK when the stream ended or dst filled; RC_TRUNCATED when the input ended
 * first; RC_CORRUPT on a bad back-reference; RC_FORMAT without a header.
 */
enum rc rp_decode(const uint8_t *in, size_t n, uint8_t *dst, size_t cap, size_t *got);

#endif
