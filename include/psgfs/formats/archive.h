/*
 * EA archives as Skate 3 ships them (docs/archives.md): EB v3 `.big` (both consoles,
 * big-endian), the older BIGF/BIG4, and the SFIL stream collections (.psf/.xsf, with their
 * ATOC tables .pst/.xst), whose assets are presented as entries named 0x<ID>.psg / .rx2.
 *
 * arc_open reads the header and the tables only. An entry's unpacked bytes come through an
 * index built on first use (arc_index_build): a list of segments, each cut into pieces that
 * decode on their own, so any byte range costs at most the pieces that cover it. Everything
 * read from the archive is untrusted: paths are raw bytes (sanitize them before use), sizes
 * are claims (st_size follows the table; decoding past the real output fails with
 * RC_CORRUPT), counts are capped by what the file can hold.
 */
#ifndef PSGFS_ARCHIVE_H
#define PSGFS_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"

enum arc_kind { ARC_EB3 = 1, ARC_BIGF, ARC_BIG4, ARC_SFIL };

/* How an entry is stored, as the table says (EB v3 compression byte; refined by the bytes). */
enum arc_method {
	ARC_STORED = 0,
	ARC_REFPACK = 1,
	ARC_CHUNK_REFPACK = 2,
	ARC_CHUNK_ZLIB = 3,
	ARC_LZX = 4,
	ARC_CHUNKED = 5,  /* chunked, the chunk header names the method (chunkref/zip/lzx) */
	ARC_SECTIONS = 6, /* a stream asset: sections stored raw or RefPack-compressed */
	ARC_METHODS,	  /* how many methods there are: a new one goes above, named in archive.c */
	ARC_METHOD_UNKNOWN = 255,
};

struct arc_entry {
	uint64_t off;	 /* first stored byte in the archive */
	uint64_t stored; /* stored bytes in the archive */
	uint64_t size;	 /* unpacked size as the table claims: what st_size says */
	uint64_t id;	 /* EB: hash word(s); SFIL: the asset's 64-bit ID */
	uint32_t path;	 /* offset in arc.paths of the raw "folder/name" path, NUL-terminated */
	uint8_t method;	 /* enum arc_method */
	uint8_t table_method; /* the byte as stored, for info.txt */
	uint8_t bad;	      /* the table entry is broken (diag says why): list it, reads fail */
};

struct arc {
	enum arc_kind kind;
	bool big_endian;
	uint32_t n;
	struct arc_entry *e; /* table order */
	char *paths;	     /* raw paths, untrusted bytes except for the terminating NUL */
	size_t paths_len;
	uint64_t heap_bytes; /* what arc_open allocated: the caller charges it to its budget */
};

/* The first 64 bytes (or fewer, for a short file) suffice. */
bool arc_detect(const uint8_t *h, size_t n);

/*
 * Parse the tables of the archive s. toc is the companion ATOC table of an SFIL collection
 * (NULL when absent or for the other kinds). Broken entries stay listed with bad set and one
 * diag line each; an archive whose tables cannot be read at all fails.
 */
enum rc arc_open(const struct src *s, const struct src *toc, struct arc *a, struct diag *d);
void arc_free(struct arc *a);

/*
 * Stream files and their ATOC tables (docs/streams.md), the only copy of the rule: a stream
 * file is named .psf/.xsf (arc_stream_exts), a table .pst/.xst (arc_toc_exts). A stream
 * file's own table has its stem, its extension's last letter f made t (.psf -> .pst, .xsf ->
 * .xst, the case kept). arc_toc_name writes it to out (false: stream is not .psf/.xsf, or out
 * is too small); arc_toc_pairs says whether toc is that name, the extension compared without
 * case. arc_toc_serves: the first 16 bytes of a table (th) serve those of a stream file (sh):
 * an SFIL and an ATOC magic and the same stamp (bytes 8..16), as one district table serves
 * all its collections.
 */
extern const char *const arc_stream_exts[];
extern const char *const arc_toc_exts[];
bool arc_toc_name(const char *stream, char *out, size_t n);
bool arc_toc_pairs(const char *stream, const char *toc);
bool arc_toc_serves(const uint8_t sh[16], const uint8_t th[16]);

/* Short static names for info.txt: "stored", "refpack", "chunked zlib", ... (a kind's name
 * is its format row's: registry.h); "stored", "refpack", "zlib", "deflate", "lzx", "bad".
 * Unknown values give "unknown". */
const char *arc_method_str(uint8_t method);
const char *arc_seg_method_str(uint8_t method);

/* Segment methods: how one run of stored bytes becomes a run of unpacked bytes. */
enum arc_seg_method {
	ARC_SEG_STORED,
	ARC_SEG_REFPACK,
	ARC_SEG_ZLIB,
	ARC_SEG_DEFLATE, /* raw deflate */
	ARC_SEG_LZX,
	ARC_SEG_BAD, /* cannot be decoded (reads fail with RC_UNSUPPORTED or RC_CORRUPT) */
};

struct arc_seg {
	uint64_t out_off, out_len; /* unpacked bytes this segment produces */
	uint64_t in_off, in_len;   /* its stored bytes in the archive */
	uint8_t method;		   /* enum arc_seg_method */
};

/* An entry's pieces never exceed this many unpacked bytes (a cache piece). */
#define ARC_PIECE_MAX (4u << 20)

/* Read-only once built, shared between threads. */
struct arc_index;

/*
 * Build the index of entry i: read its chunk table or section list; a RefPack or deflate
 * segment longer than ARC_PIECE_MAX is decoded once, sequentially, to place restart points
 * (memory bounded; arc_index_bytes says how much). Problems go to d.
 */
enum rc arc_index_build(const struct src *s, const struct arc *a, uint32_t i,
			struct arc_index **out, struct diag *d);
void arc_index_free(struct arc_index *ix);
uint64_t arc_index_bytes(const struct arc_index *ix);

/* Pieces cover the unpacked bytes in order, without gaps. */
uint64_t arc_piece_count(const struct arc_index *ix);
void arc_piece_span(const struct arc_index *ix, uint64_t k, uint64_t *off, uint64_t *len);
uint64_t arc_piece_at(const struct arc_index *ix, uint64_t off); /* the piece holding off */

/*
 * Decode piece k into dst (its span's length). *got is what the stored bytes really gave:
 * less than the span when an unpacked size lied: then RC_TRUNCATED when the stored bytes
 * end there (the entry's last segment ends early: a lying size), RC_CORRUPT otherwise.
 * *over (if not NULL): this decode found its segment's stream going on past the segment's
 * declared size (zlib, deflate; the declared bytes are given, the rest is not): a problem to
 * report, for this piece alone whatever other threads decode meanwhile.
 */
enum rc arc_piece(const struct src *s, const struct arc_index *ix, uint64_t k, uint8_t *dst,
		  size_t *got, bool *over);

/* The segment piece k decodes (info.txt, tests); false when k is out of range. */
bool arc_piece_seg(const struct arc_index *ix, uint64_t k, struct arc_seg *out);
/* Segment decodes arc_piece has started on this index (a relaxed counter, for tests). */
uint64_t arc_index_decodes(const struct arc_index *ix);
/* Decodes that found a stream going on past its segment's declared size (arc_piece's *over),
 * counted for tests and statistics (a relaxed counter shared by all threads: never compare it
 * around one decode, use *over). */
uint64_t arc_index_overruns(const struct arc_index *ix);
/* Bytes the decoders produced for arc_piece on this index, including those decoded only to be
 * dropped before a piece's start (a relaxed counter: the work reads cost, for tests). */
uint64_t arc_index_decoded(const struct arc_index *ix);

#endif
