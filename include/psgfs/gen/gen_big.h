/*
 * Deterministic EA archives (docs/archives.md): EB v3 .big with every compression (stored,
 * RefPack, chunked RefPack, chunked zlib or raw deflate, chunked LZX in uncompressed LZX
 * blocks), both record widths, any alignment shift; BIGF/BIG4; hostile variants; and the
 * game's layout (a generated data/ folder). Archives are written through a sink so a 1 GB
 * benchmark archive never sits in memory.
 */
#ifndef PSGFS_GEN_BIG_H
#define PSGFS_GEN_BIG_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/result.h"

/* Where an archive goes: positioned writes (a buf grows and zero-fills gaps; a file uses
 * pwrite, so holes stay sparse). */
struct gen_sink {
	enum rc (*write_at)(void *ctx, uint64_t off, const void *p, size_t n);
	void *ctx;
};
void gen_sink_buf(struct gen_sink *s, struct buf *b);
void gen_sink_fd(struct gen_sink *s, int *fd);

/* EB v3 compression bytes, as written to the table. */
enum gen_big_method {
	GB_STORED = 0,
	GB_REFPACK = 1,
	GB_CHUNK_REFPACK = 2, /* "chunkref" */
	GB_CHUNK_ZLIB = 3,    /* "chunkzip" */
	GB_CHUNK_LZX = 4,     /* "chunklzx", LZX streams of uncompressed blocks */
};

/* Chunk method numbers: the two public readers disagree (docs/archives.md, "Chunk methods"). */
enum gen_chunk_style {
	GB_STYLE_RW4, /* 1 raw deflate, 2 RefPack, 3 LZX, 4 stored */
	GB_STYLE_SK8, /* 0 stored, 2 RefPack, 3 zlib (LZX chunks keep 3) */
};

typedef void (*gen_fill_fn)(void *ctx, uint64_t off, uint8_t *dst, size_t n);

struct gen_big_entry {
	const char *folder;  /* raw folder string ("" allowed) */
	const char *name;    /* raw name */
	const uint8_t *data; /* the unpacked bytes, or NULL and fill(ctx, off, dst, n) */
	uint64_t len;
	gen_fill_fn fill;
	void *ctx;
	uint8_t method;	      /* enum gen_big_method */
	uint8_t rp_header;    /* RefPack header byte (0 = 0x10 or 0x90 by size) */
	uint32_t chunk_size;  /* chunked: unpacked bytes per chunk (0 = 64 KiB) */
	uint32_t chunk_align; /* chunked: alignment of chunk data (0 = 16) */
	uint8_t style;	      /* enum gen_chunk_style */
	bool stored_len;      /* stored entries: write the length as stored size (default 0) */
	unsigned rp_chain;    /* RefPack match effort (0 = default) */
};

struct gen_big_opts {
	bool wide;	 /* 20-byte records with a second hash word (flags bit 0) */
	uint8_t shift;	 /* entry offsets are stored >> shift (0 = 4) */
	bool shift_zero; /* use shift 0 (offsets in bytes) */
	uint16_t sort;	 /* sort-order flag bits written (0 = 0x80, offset order) */
};

/* One entry's stored bytes (e->method) at `at` of the sink; *stored their length. */
enum rc gen_big_write_entry(const struct gen_big_entry *e, struct gen_sink *s, uint64_t at,
			    uint64_t *stored);

/* What the writer placed, by table index (tests compare arc_open's view with it). */
struct gen_big_placed {
	uint64_t off, stored;
};

/*
 * Write an EB v3 archive of n entries in table order. placed (optional, n rows) receives
 * where each went; *total the archive size. RC_INVAL for names or folders past 253 bytes,
 * more than 65535 folders or an entry past 4 GiB; RC_NOMEM; RC_IO from the sink.
 */
enum rc gen_big_write(const struct gen_big_opts *o, const struct gen_big_entry *e, uint32_t n,
		      struct gen_sink *out, struct gen_big_placed *placed, uint64_t *total);

/* The hash an EB v3 record holds for folder/name: FNV-1a 64 of folder + "/" + name (the
 * upper word in 16-byte records, both words in 20-byte ones). */
uint64_t gen_big_hash(const char *folder, const char *name);

/* BIGF and BIG4: "BIGF"/"BIG4", u32 little-endian archive size, u32 big-endian count and
 * header size, then {u32 BE offset, u32 BE size, NUL-terminated name} per entry. Entries with
 * method GB_REFPACK are RefPack streams (readers detect them by their header); others are
 * stored. Folder and name are joined with "/" (the name alone when the folder is empty). */
enum rc gen_bigf_write(bool big4, const struct gen_big_entry *e, uint32_t n, struct buf *out);

/* The LZX stream (uncompressed blocks, XMem framing) of in[0..n), appended to out. */
void gen_lzx_stored(const uint8_t *in, size_t n, struct buf *out);

/* Hostile archives: each a small archive broken in one way (docs/archives.md, "Hostile input"). */
enum gen_big_hostile {
	GB_H_OVERLAP,	   /* entries overlapping each other and the table */
	GB_H_PAST_EOF,	   /* an entry starting past the end, one running past it */
	GB_H_LYING,	   /* a 100-byte stored entry claiming 4 GiB - 1; RefPack claiming more */
	GB_H_NAMES,	   /* traversal, absolute, backslash, control, non-UTF-8, empty, dupes */
	GB_H_FOLDER_INDEX, /* a folder index past the folder table */
	GB_H_MILLION,	   /* the header claims 1,000,000 entries in a small file */
	GB_H_NESTED,	   /* archives nested `depth` deep (default 12) */
	GB_H_BACKREF,	   /* a RefPack copy reaching before the start */
	GB_H_CHUNKS,	   /* chunk counts and sizes that cannot fit */
	GB_H_TRUNCATED,	   /* the file ends inside the name table */
	GB_H_COUNT
};
const char *gen_big_hostile_name(enum gen_big_hostile h);
enum rc gen_big_hostile(enum gen_big_hostile h, uint64_t seed, unsigned depth, struct buf *out);

/* A "normal" archive of the game's kind: createacharacter-like folders with texture and
 * model arenas (PS3 or Xbox 360), companions, PSK/PSA, plain files, every compression. */
struct gen_big_game_opts {
	uint64_t seed;
	bool x360;     /* .rx2 arenas, Xbox 360 */
	bool wide;     /* 20-byte records */
	uint8_t shift; /* 0 = 4 */
	bool shift_zero;
	int only_method;   /* -1: a mix; else every entry uses that method */
	uint8_t rp_header; /* RefPack header variant (0 = by size) */
	uint8_t style;	   /* chunk method numbering */
	uint32_t assets;   /* asset entries (0 = 24) */
};

/* One row per entry written: path, method, unpacked size, FNV-1a 64 of the bytes. */
struct gen_big_row {
	char *file; /* the file holding it, relative to the game folder ("" for gen_big_*) */
	char *path; /* the entry's raw path inside it ("-" for a loose file) */
	uint8_t method;
	uint64_t size, fnv;
};
struct gen_big_manifest {
	struct gen_big_row *v;
	size_t n, cap;
};
void gen_big_manifest_free(struct gen_big_manifest *m);
/* Append a row (copies of file and path); a NULL manifest takes nothing. */
enum rc gen_big_manifest_add(struct gen_big_manifest *m, const char *file, const char *path,
			     uint8_t method, uint64_t size, uint64_t fnv);

enum rc gen_big_game(const struct gen_big_game_opts *o, struct gen_sink *out,
		     struct gen_big_manifest *m);
/* The same entries as a BIGF (or BIG4) archive: RefPack entries stay RefPack, the rest are
 * stored. */
enum rc gen_big_game_bigf(const struct gen_big_game_opts *o, bool big4, struct buf *out,
			  struct gen_big_manifest *m);

/* Benchmark archive: about `bytes` of entries (count of them), plus one chunked entry of
 * chunked_bytes when not 0; mostly RefPack, one in eight stored. */
struct gen_big_bench_opts {
	uint64_t seed, bytes, chunked_bytes;
	uint32_t entries;
};
enum rc gen_big_bench(const struct gen_big_bench_opts *o, struct gen_sink *out,
		      struct gen_big_manifest *m);

/* A small Xbox 360 texture arena (three textures of five, picked by k), for archives and
 * streams: the default set is 16 MiB. */
enum rc gen_big_x360_textures(uint32_t k, struct buf *b);

/* A game data/ folder under dir (which must not exist): data/content/<name>.big, a BIGF music
 * bank, loose files and stream files (SFIL + ATOC) beside and inside the archives. */
enum rc gen_game_dir(uint64_t seed, bool x360, const char *dir, struct gen_big_manifest *m);

#endif
