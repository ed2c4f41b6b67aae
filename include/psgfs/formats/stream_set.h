/*
 * Writing a district's stream set (docs/worlds.md, "Writing a stream set"): for one stream kind
 * (Pres, Sim, Tex) the SFIL collection of each folder of arenas, and the four files of the kind
 * (ATOC asset table, CMAP collection map, CSPA collection space, MMAP minimap), all with the
 * kind's stamp, ids by PACK's rules (stream_manifest.h), CSPA bounds from the arenas' own
 * RenderModelData and ClusteredMesh boxes, the kind's SFIL +0x1C word and PS3's 0x100 framing. Pure: buffers in,
 * buffers out. psgfs-gen district and psgfs-tool pack-stream both write through it, so the two
 * cannot drift.
 *
 * Collections are handed over one at a time (ssw_collection gives its SFIL bytes back at once),
 * so a writer holds per collection only its name, bounds and asset rows, never the arenas.
 */
#ifndef PSGFS_STREAM_SET_H
#define PSGFS_STREAM_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/result.h"
#include "psgfs/formats/stream_manifest.h"

enum ss_kind { SS_PRES = 0, SS_SIM, SS_TEX, SS_KINDS };

/* "Pres", "Sim", "Tex". */
const char *ss_kind_name(enum ss_kind k);
/* The kind of a collection name "c<Kind>_..." (case as written); false for anything else. */
bool ss_collection_kind(const char *name, enum ss_kind *k);
/*
 * The SFIL word at +0x1C a kind's collections carry: 0x58000000 Pres, 0x57000000 Sim (PACK);
 * Tex 0xFFFFFFFF (SFFD's "unused" value: PACK writes no Tex collection, so no constant is
 * known for it). A lint compares Pres and Sim collections with it.
 */
uint32_t ss_kind_field(enum ss_kind k);
/* Level of detail of a collection name: 2 for "..._Global", 1 for "..._low", else 0. */
enum sm_lod ss_collection_lod(const char *name);
/* The centre (x, z) of a tile name "c<Kind>_<x>_<y>_<lod>" (its y is the world's z); false
 * when the name does not hold two numbers there. */
bool ss_tile_centre(const char *name, float *x, float *z);
/* The SFIL header and asset header size: 0x100 on PS3 (PACK's framing), 0x80 on Xbox 360. */
uint32_t ss_header_size(enum sm_platform pf);

/* File names: SM_SFIL gives "<collection>.psf"; the others "<dist>_<Kind>.<ext>". false when
 * out is too small. */
bool ss_file_name(enum sm_platform pf, const char *dist, enum ss_kind k, enum sm_file f,
		  const char *collection, char *out, size_t n);

/* Header words of a set (psgfs-tool pack-stream --like copies them from an existing set). */
struct ss_fields {
	uint64_t stamp[SS_KINDS]; /* 0: the default (ss_default_stamp) */
	uint32_t sfil_version, atoc_version, cmap_version, cspa_version, mmap_version;
	uint32_t sfil_count; /* SFIL +0x14: 1 as PACK writes */
	uint32_t format;     /* stream format at SFIL +0x18 and CMAP +0x14: 0 raw */
	uint32_t cspa_word;  /* CSPA +0x14 */
	uint32_t mmap_word;  /* MMAP +0x14 */
};
/* SFIL and ATOC version 3, manifests 1, count 1, format 0, stamps default. */
void ss_fields_default(struct ss_fields *f);
/* PACK packs a 32-bit stamp into the low half of the u64 at 0x08; its derivation is unknown.
 * Ours: the low 32 bits of FNV-1 64 of "<dist>_<Kind>", so kinds differ and a repack of the
 * same district gets the same stamps. */
uint64_t ss_default_stamp(const char *dist, enum ss_kind k);

/* An asset: a whole RW4 arena and its 64-bit id (the Tex stream's: the texture's GUID). */
struct ss_asset {
	uint64_t id;
	const uint8_t *data;
	size_t len;
};

struct ss_coll; /* private */
struct ss_writer {
	enum sm_platform pf;
	enum ss_kind kind;
	char dist[SM_NAME_LEN];
	struct ss_fields f;
	uint64_t stamp;
	struct ss_coll *c;
	uint32_t n;
	size_t cap;
	char why[160]; /* the reason of the last failure, for a one-line refusal */
};

/* RC_INVAL: dist empty or 63 bytes or more. */
enum rc ssw_begin(struct ss_writer *w, enum sm_platform pf, const char *dist, enum ss_kind k,
		  const struct ss_fields *f);
/*
 * One collection: its SFIL bytes are appended to sfil (assets sorted by id). Refusals (w->why
 * says which): RC_INVAL for a name that is not a collection of this kind, a repeated name, 64
 * bytes or more, or an id twice in one collection; RC_FORMAT for an asset that is not an RW4
 * arena of the platform; RC_UNSUPPORTED past 4 GiB; RC_NOMEM.
 */
enum rc ssw_collection(struct ss_writer *w, const char *name, const struct ss_asset *a, uint32_t n,
		       struct buf *sfil);
/* The kind's ATOC, CMAP, CSPA and MMAP (any may be NULL). With no collection they are the
 * empty stub PACK writes (the Xbox 360 engine needs a Tex stub). */
enum rc ssw_finish(struct ss_writer *w, struct buf *atoc, struct buf *cmap, struct buf *cspa,
		   struct buf *mmap);
void ssw_free(struct ss_writer *w);

/* The box of an arena's RenderModelData and ClusteredMesh objects (both begin with their
 * bounding box: min xyzw, max xyzw): min and max x, y, z; false when it has none that is
 * finite and ordered. */
bool ss_arena_bounds(const uint8_t *p, size_t n, float mn[3], float mx[3]);

#endif
