/*
 * Fuzz harness bodies shared by the libFuzzer executables (tests/fuzz/fuzz_*.c built with
 * -DPSGFS_LIBFUZZER) and the plain regression replay (tests/unit/test_fuzz_regressions.c), so
 * both run identical code. Each fuzz_one_* takes any bytes and must neither crash, leak nor
 * allocate more than the input could justify; it returns 0, or -1 when an invariant of the
 * tree (see fuzz_tree_check) failed, after printing why to stderr.
 */
#ifndef PSGFS_FUZZ_HARNESS_H
#define PSGFS_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/tree/tree.h"

int fuzz_one_arena(const uint8_t *p, size_t n);
int fuzz_one_skate(const uint8_t *p, size_t n);
int fuzz_one_psk(const uint8_t *p, size_t n);
int fuzz_one_psa(const uint8_t *p, size_t n);
int fuzz_one_tree(const uint8_t *p, size_t n);
int fuzz_one_folder(const uint8_t *p, size_t n);
int fuzz_one_texmod(const uint8_t *p, size_t n);
int fuzz_one_archive(const uint8_t *p, size_t n);  /* EB, BIGF/BIG4, RefPack, chunked */
int fuzz_one_manifest(const uint8_t *p, size_t n); /* CMAP, CSPA, MMAP */
int fuzz_one_world(const uint8_t *p, size_t n);	   /* DMOData, SplineData, ClusteredMesh */
int fuzz_one_pack(const uint8_t *p, size_t n);	   /* pack --like ORIG (fuzz_pack.c) */

/* Which harnesses a seed feeds (the corpus directory names are arena skate psk psa tree
 * folder texmod archive manifest world pack). */
#define FZ_ARENA    1u
#define FZ_SKATE    2u
#define FZ_PSK	    4u
#define FZ_PSA	    8u
#define FZ_TREE	    16u
#define FZ_FOLDER   32u
#define FZ_TEXMOD   64u
#define FZ_ARCHIVE  128u
#define FZ_MANIFEST 256u
#define FZ_WORLD    512u
#define FZ_PACK	    1024u

/*
 * What mounting and walking one input did (fuzz_tree_check). The invariants: tree_open either
 * refuses with FORMAT/DAMAGED/OPEN or mounts; every listed directory lists; every file either
 * reads back exactly st_size bytes, the same bytes on a second (fresh) render, or fails both
 * times; when anything failed, errors.txt is readable and non-empty.
 */
struct fuzz_tree_result {
	enum tree_open_fail open; /* TREE_FAIL_NONE when it mounted */
	unsigned long dirs, files, failed, bytes;
	uint64_t errors_size; /* st_size of errors.txt (0 when absent) */
	char problem[512];    /* first broken invariant, "" when none */
};
/* Write p to an anonymous file, tree_open it, walk everything and check the invariants.
 * FZT_TWICE: a 1-byte cache, so every read renders afresh, and every file is read twice and
 * compared; otherwise one read per file through a normal cache. FZT_ZUP: the Z-up export.
 * Returns 0 or -1 (res->problem says why). */
#define FZT_TWICE 1u
#define FZT_ZUP	  2u
int fuzz_tree_check(const uint8_t *p, size_t n, unsigned flags, struct fuzz_tree_result *res);

/*
 * Folder mode: the input is up to FUZZ_FOLDER_FILES files of one temporary folder, separated
 * by FUZZ_FOLDER_SEP (m.psg, m_Textures.psg, sub/anim.psa, sub/MESH.PSK, noext, notes.txt, in
 * that order), plus a link to m.psg and one up from sub/. The folder is opened (it must open),
 * walked with the invariants above, every inode number listed once; and each file's entry
 * matches the file opened alone: the same tree (names, types, sizes, bytes, failures) when it
 * mounts, its own bytes when it is not a container, an info.txt with the same reason when it
 * is refused. Returns 0 or -1 (res->problem says why).
 */
#define FUZZ_FOLDER_FILES 6
#define FUZZ_FOLDER_SEP	  "<<psgfs-next-file>>"
int fuzz_folder_check(const uint8_t *p, size_t n, unsigned flags, struct fuzz_tree_result *res);

/* Generated seed inputs (tests/fuzz/seeds.c): deterministic, a few KiB each. */
struct fuzz_seed {
	char name[48];
	unsigned harnesses; /* FZ_* bits it is a seed for */
	uint8_t *data;
	size_t len;
};
/* 0 on success; *out is an array of *n seeds (free with fuzz_seeds_free). */
int fuzz_seeds_make(struct fuzz_seed **out, size_t *n);
void fuzz_seeds_free(struct fuzz_seed *v, size_t n);

#endif
