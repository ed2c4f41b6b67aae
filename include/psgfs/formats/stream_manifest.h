/*
 * The three manifests of a district stream kind (docs/worlds.md): CMAP, the collection map
 * (.psm/.xsm), CSPA, the collection space (.pss/.xss), and MMAP, the minimap (.pmm/.xmm). Pure
 * parsers on a bounded buffer or a struct src, and deterministic writers; no FUSE, no printf.
 *
 * Everything read is untrusted: counts are capped by what the file can hold, names are raw
 * bytes kept NUL-terminated (with a sanitized copy for file names), floats may be NaN. Each
 * problem is one diag line with stable wording and sets a flag on its record, so a later lint
 * can list the records without parsing the lines. A broken record stays listed.
 *
 * The two consoles are one row of sm_platforms[] each (file extensions, byte order), never a
 * branch: both are big-endian as far as the sources say.
 */
#ifndef PSGFS_STREAM_MANIFEST_H
#define PSGFS_STREAM_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/names.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"

enum sm_platform { SM_PS3 = 0, SM_X360 = 1, SM_PLATFORMS };

/* The five files of a stream kind, in the order of their extensions' suffixes. */
enum sm_file { SM_SFIL = 0, SM_ATOC, SM_CMAP, SM_CSPA, SM_MMAP, SM_FILES };

struct sm_platform_row {
	const char *name; /* "ps3", "x360" */
	char letter;	  /* first letter of the extensions: 'p' (.psm) or 'x' (.xsm) */
	bool big_endian;  /* manifests' byte order */
};
extern const struct sm_platform_row sm_platforms[SM_PLATFORMS];

/* "psf" "pst" "psm" "pss" "pmm" / "xsf" ...: the extension (no dot) of file f on pf. */
void sm_ext(enum sm_platform pf, enum sm_file f, char out[4]);
/* The platform and file of an extension (with or without the dot, case-insensitive). */
bool sm_ext_parse(const char *ext, enum sm_platform *pf, enum sm_file *f);
/* The magic of file f: "SFIL" "ATOC" "CMAP" "CSPA" "MMAP". */
const char *sm_magic(enum sm_file f);

/* Which manifest h (n bytes, n >= 4) is: SM_CMAP, SM_CSPA, SM_MMAP, else SM_FILES. */
enum sm_file sm_detect(const uint8_t *h, size_t n);

/*
 * The stamp every file of a kind carries at 0x08 (a u64: PACK writes a 32-bit group hash in its
 * low half). Works on the first 16 bytes of any of the five files; false when h is too short or
 * its magic is none of theirs.
 */
bool sm_stamp_peek(const uint8_t *h, size_t n, enum sm_platform pf, uint64_t *stamp);

struct sm_stamp {
	const char *file; /* a name for the diag line */
	uint64_t stamp;
};
/* True when all n stamps equal the first; otherwise one line per file that differs:
 * "stamp: B has 0x..., A has 0x...". */
bool sm_stamps_agree(const struct sm_stamp *v, size_t n, struct diag *d);

/* ---- ids (docs/worlds.md, "Names and ids"; PACK's rules) ---- */

#define SM_GLOBAL_PARENT 0xE171E1ABFEDB69EDull /* the parent id of a kind's Global */

/* A collection's id: FNV-1 64 of its name ("cPres_50_50_high"). */
uint64_t sm_collection_id(const char *name);
/* The Global's id of kind ("Pres", "Sim", "Tex") in the district folder dist ("DIST_Foo"):
 * FNV-1 64 of "c<kind>_Global_<dist>". */
uint64_t sm_global_id(const char *kind, const char *dist);

/* ---- records ---- */

/* Record flags: what is wrong with a record (each also one diag line). */
#define SM_F_DUP_ID  0x01u /* an earlier record has this id */
#define SM_F_NAME    0x02u /* CMAP: no NUL within 64 bytes, empty, or not a safe file name */
#define SM_F_NONFIN  0x04u /* CSPA: a bound is NaN or infinite; MMAP: x or y is */
#define SM_F_UNORDER 0x08u /* CSPA: a box's minimum exceeds its maximum */
#define SM_F_LOD     0x10u /* CSPA: level of detail not 0, 1 or 2 */
#define SM_F_CYCLE   0x20u /* CMAP: in, or leading into, a parent cycle (sm_cmap_depths) */
#define SM_F_ORPHAN  0x40u /* CMAP: parent id neither in the map nor SM_GLOBAL_PARENT */

#define SM_NAME_LEN    64u
#define SM_DEPTH_CYCLE UINT32_MAX

enum sm_lod { SM_LOD_HIGH = 0, SM_LOD_LOW = 1, SM_LOD_GLOBAL = 2 };

/* The 0x18/0x20 bytes before the records. */
struct sm_header {
	uint32_t version;
	uint64_t stamp;
	uint32_t count;	    /* as the file claims (the records read may be fewer) */
	uint32_t format;    /* CMAP: stream format (0 raw .. 3); CSPA, MMAP: the word at 0x14 */
	uint32_t names_off; /* CMAP: offset of a name table (0x18); 0 for the others */
	uint32_t unused;    /* CMAP: the word at 0x1C; 0 for the others */
};

struct sm_collection { /* CMAP, 0x68 bytes */
	uint64_t id, parent;
	uint32_t offset, size, assets, name_off;
	char name[SM_NAME_LEN + 1];	   /* raw bytes up to the first NUL, terminated */
	char safe[NAME_COMPONENT_MAX + 1]; /* name_component of name: a file name */
	uint32_t depth; /* sm_cmap_depths: 0 for a root, SM_DEPTH_CYCLE in a cycle */
	uint8_t flags;
};

struct sm_cell { /* CSPA, 0x50 bytes */
	uint64_t id;
	uint8_t lod; /* enum sm_lod, or what the file says */
	float hull_min[4], hull_max[4], geom_min[4], geom_max[4];
	uint8_t flags;
};

struct sm_point { /* MMAP, 0x10 bytes */
	uint64_t id;
	float x, y;
	uint8_t flags;
};

struct sm_cmap {
	struct sm_header h;
	uint32_t n; /* records read */
	struct sm_collection *v;
};
struct sm_cspa {
	struct sm_header h;
	uint32_t n;
	struct sm_cell *v;
};
struct sm_mmap {
	struct sm_header h;
	uint32_t n;
	struct sm_point *v;
};

#define SM_CMAP_HDR 0x20u
#define SM_CMAP_REC 0x68u
#define SM_CSPA_HDR 0x18u
#define SM_CSPA_REC 0x50u
#define SM_MMAP_HDR 0x18u
#define SM_MMAP_REC 0x10u

/*
 * Parse a manifest. RC_FORMAT: another magic; RC_TRUNCATED: shorter than its header; RC_IO
 * from the source; RC_NOMEM. Otherwise RC_OK with every record the file holds (at most the
 * claimed count) and one diag line per problem: a count the file cannot hold, a name, a
 * non-finite or unordered bound, a bad level of detail, a repeated id. The result is
 * zeroed on failure; free it with sm_*_free either way.
 */
enum rc sm_cmap_read(const struct src *s, enum sm_platform pf, struct sm_cmap *out, struct diag *d);
enum rc sm_cspa_read(const struct src *s, enum sm_platform pf, struct sm_cspa *out, struct diag *d);
enum rc sm_mmap_read(const struct src *s, enum sm_platform pf, struct sm_mmap *out, struct diag *d);
enum rc sm_cmap_parse(const uint8_t *p, size_t n, enum sm_platform pf, struct sm_cmap *out,
		      struct diag *d);
enum rc sm_cspa_parse(const uint8_t *p, size_t n, enum sm_platform pf, struct sm_cspa *out,
		      struct diag *d);
enum rc sm_mmap_parse(const uint8_t *p, size_t n, enum sm_platform pf, struct sm_mmap *out,
		      struct diag *d);
void sm_cmap_free(struct sm_cmap *m);
void sm_cspa_free(struct sm_cspa *m);
void sm_mmap_free(struct sm_mmap *m);
/* Heap a parsed manifest holds (for a cache budget). */
size_t sm_cmap_heap(const struct sm_cmap *m);

/*
 * Each collection's depth below its root (a collection whose parent id is SM_GLOBAL_PARENT,
 * or not in the map: then SM_F_ORPHAN, without a line, since a Sim kind's tiles name a Global
 * that has no record). Iterative and linear: a parent cycle (a self-parent too) sets
 * SM_DEPTH_CYCLE and SM_F_CYCLE on its members and on the collections that lead into it, and
 * gives one line per cycle. *cyclic (may be NULL) counts those collections. Ids that repeat
 * resolve to their first record.
 */
enum rc sm_cmap_depths(struct sm_cmap *m, uint32_t *cyclic, struct diag *d);

/* The first record with this id, or -1 (a linear scan: for tests and small maps). */
long sm_cmap_find(const struct sm_cmap *m, uint64_t id);

/*
 * Writers: the header (count = n) then the records, in the given order, in pf's byte order;
 * padding is zero, so equal input gives equal bytes. RC_INVAL for a CMAP name of 64 bytes or
 * more (it would have no NUL). Flags and depth are not written.
 */
enum rc sm_cmap_write(enum sm_platform pf, const struct sm_header *h, const struct sm_collection *v,
		      uint32_t n, struct buf *out);
enum rc sm_cspa_write(enum sm_platform pf, const struct sm_header *h, const struct sm_cell *v,
		      uint32_t n, struct buf *out);
enum rc sm_mmap_write(enum sm_platform pf, const struct sm_header *h, const struct sm_point *v,
		      uint32_t n, struct buf *out);

#endif
