/*
 * RefPack (EA's LZ77 variant, docs/archives.md "RefPack") compressor for the generator only:
 * the daemon never compresses. Greedy hash-chain matching over the 128 KiB window; emits all
 * command kinds (2-, 3- and 4-byte copies, literal runs, the stop command with its trailing
 * literals), so its output exercises every path of a decoder.
 */
#ifndef PSGFS_REFPACK_ENC_H
#define PSGFS_REFPACK_ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/result.h"

/* Header byte variants: 0x10 u24 unpacked size; 0x11 adds a u24 packed size before it; 0x90 and
 * 0x91 are the same with u32 sizes. The 0x40 flag (0x50, 0x51, 0xD0, 0xD1) changes nothing in
 * the layout; readers must accept it. The second byte is always 0xFB. */
#define RP_HDR_10 0x10u
#define RP_HDR_11 0x11u
#define RP_HDR_90 0x90u
#define RP_HDR_91 0x91u

struct rp_enc_opts {
	uint8_t header;	   /* one of RP_HDR_* (0 = 0x10 when the size fits 24 bits, else 0x90) */
	unsigned chain;	   /* candidates tried per position (0 = 32; 1 = fastest) */
	bool literal_only; /* no copies at all: literal runs and the stop command */
};

/*
 * Append the RefPack stream of in[0..n) to out. RC_INVAL for a header that cannot hold n
 * (without 0x80: past 16 MiB - 1; any past 4 GiB - 1) or an unknown header byte; RC_NOMEM.
 * The packed size of the 0x11/0x91 headers counts the whole stream, header included.
 */
enum rc rp_encode(const uint8_t *in, size_t n, const struct rp_enc_opts *o, struct buf *out);

/* Command kinds the last stream used, for tests that must see each one. */
struct rp_enc_stats {
	uint64_t cmd2, cmd3, cmd4, lit, stop;
};
enum rc rp_encode_stats(const uint8_t *in, size_t n, const struct rp_enc_opts *o, struct buf *out,
			struct rp_enc_stats *st);

/*
 * The match tables, kept between calls by a caller that encodes many entries or chunks
 * (zero-initialised = none yet): grown only, so the loop allocates them once instead of up to
 * 768 KiB per call (under ASan each is a fresh mapping). The output is the same as
 * rp_encode_stats's; st may be NULL. rp_work_free releases them.
 */
struct rp_work {
	uint32_t *head, *prev;
	size_t head_n, prev_n; /* entries */
};
enum rc rp_encode_work(const uint8_t *in, size_t n, const struct rp_enc_opts *o, struct buf *out,
		       struct rp_enc_stats *st, struct rp_work *w);
void rp_work_free(struct rp_work *w);

#endif
