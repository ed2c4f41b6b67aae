/*
 * Deterministic asset folders shaped like an unpacked Skate 3 game
 * (data/content/createacharacter/model/cas_db/<category>/<group>/...): models (static and
 * skinned arenas) each beside its <stem>_Textures.psg companion, texture arenas, Unreal PSK
 * and PSA files, and a fixed set of junk that a folder mount must survive (empty and truncated
 * files, a text file called .psg, links that loop or dangle, a FIFO, a socket, an unreadable
 * file, ...). The same options give the same tree and the same bytes on every machine; only
 * inode numbers, times and the owner are the file system's.
 */
#ifndef PSGFS_GEN_FOLDER_H
#define PSGFS_GEN_FOLDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/result.h"

#define GEN_FOLDER_MAX_ASSETS 1000000u

struct gen_folder_opts {
	uint64_t seed;
	uint32_t assets; /* well-formed asset files outside the junk (0 = 60) */
	uint32_t wide;	 /* of those, this many in one folder, cas_db/wide (0 = none) */
	/* Assets sized like real Skate 3 character files (rw4-arena.md §17-18): skater models of
	 * 40-131 rig bones and 2-6 meshes of 1,000-5,000 vertices (~0.2-1 MB), each beside a
	 * companion of 3-8 DXT1/DXT5 textures up to 1024x1024 (~0.1-1.9 MB), and per-texture
	 * arenas named 0x<GUID>.psg; no PSK/PSA outside the junk. For memory benchmarks. */
	bool real_shape;
};

/*
 * One entry as written, and how a folder mount shows it:
 *   "dir"    a folder, mirrored
 *   "asset"  a directory holding the file's tree (the same as a single-file mount)
 *   "broken" a directory whose info.txt and errors.txt say why it cannot be mounted
 *   "file"   a regular file passed through with its own bytes
 *   "link"   a symbolic link with the same target
 *   "absent" not shown (FIFOs, sockets)
 * The unreadable file is "broken" for a user the permissions stop; root reads it ("asset").
 */
struct gen_folder_entry {
	char *path;	   /* relative to the output folder */
	const char *kind;  /* dir model companion textures psk psa rx2 disguised plain empty
			      not-arena truncated hardlink unreadable link fifo socket */
	const char *shown; /* see above */
};

struct gen_folder_manifest {
	struct gen_folder_entry *v;
	size_t n, cap;
	uint32_t assets; /* "asset" entries among v */
};

/*
 * Write the folder under outdir, which must not exist yet (RC_INVAL if it does). m, when not
 * NULL, receives every entry in creation order. RC_INVAL for wide > assets or assets past
 * GEN_FOLDER_MAX_ASSETS, RC_IO when writing fails (errno is kept), RC_NOMEM.
 */
enum rc gen_folder(const struct gen_folder_opts *o, const char *outdir,
		   struct gen_folder_manifest *m);
void gen_folder_manifest_free(struct gen_folder_manifest *m);

#endif
