/*
 * EA RenderWare 4 arena container (Skate 3 .psg; docs/rw4-arena.md).
 * arena_open reads only the header, sections, subreference records and dictionary through a
 * positioned-read source; objects are read later with arena_read_object. PS3 is big-endian;
 * xb2 (5 descriptors), rev (4) and w32 (4, little-endian) are parsed to the dictionary.
 */
#ifndef PSGFS_ARENA_H
#define PSGFS_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"

#define RW_MAX_RD	6
#define ARENA_MAX_TYPES 4096

enum rw_platform { RW_PS3, RW_XB2, RW_REV, RW_W32 };

/* Type IDs the decoders care about (docs/rw4-arena.md, "Type IDs"). */
#define RW_T_NULL	    0x00000000u
#define RW_T_BASERES_FIRST  0x00010030u
#define RW_T_BASERES_LAST   0x0001003Fu
#define RW_T_PS3_GPU	    0x00010034u
#define RW_T_MESHHELPER	    0x00020081u
#define RW_T_TEXTURE	    0x000200E8u
#define RW_T_VDES	    0x000200E9u
#define RW_T_VB		    0x000200EAu
#define RW_T_IB		    0x000200EBu
#define RW_T_RENDERMESH	    0x00EB0000u
#define RW_T_RENDERMODEL    0x00EB0001u
#define RW_T_RENDERMATERIAL 0x00EB0005u
#define RW_T_VERSION	    0x00EB0008u
#define RW_T_TOC	    0x00EB000Bu
#define RW_T_COLLISIONMODEL 0x00EB000Au
#define RW_T_INSTANCE	    0x00EB000Du
#define RW_T_EMBEDDED	    0x00EB001Bu
#define RW_T_OPTIMESH	    0x00EB0023u
#define RW_T_TEXTURE_HASH   0xAC462E4Au /* RwHash32("Texture"), TOC m_Type of textures */
/* TOC m_Type of entries that name a record inside a RenderMaterialData / InstanceData */
#define RW_T_SUBREF_RENDERMATERIAL 0x00EB0066u
#define RW_T_SUBREF_INSTANCE	   0x00EB0069u

struct rw_rd {
	uint32_t size, align;
};

struct arena_header {
	uint8_t magic[12];
	char platform[4]; /* "ps3", "xb2", "rev", "w32" (NUL-terminated) */
	enum rw_platform plat;
	uint8_t is_big_endian, pointer_bits, pointer_align, unused;
	char major[5], minor[5]; /* NUL-terminated copies of the 4-byte fields */
	uint32_t build_no, id, num_entries, num_used, alignment, virt;
	uint32_t dict_start, sections, base, unfix_context, fix_context;
	unsigned n_rd;		    /* 6 PS3, 5 xb2, 4 rev/w32 */
	struct rw_rd rd[RW_MAX_RD]; /* m_resourceDescriptor */
	struct rw_rd ru[RW_MAX_RD]; /* m_resourcesUsed (bookkeeping, ignored) */
	uint32_t target_resource[RW_MAX_RD];
	uint32_t arena_group;
	uint32_t header_size;		 /* 0x48 + 20 * n_rd */
	uint64_t region_base[RW_MAX_RD]; /* regionBase(k) = rd[0].size + sum rd[1..k-1].size */
};

struct arena_dict_entry {
	uint32_t ptr, reloc, size, align, type_index, type_id;
	uint64_t start; /* absolute file offset after base-resource resolution */
	bool base_resource;
	bool readable; /* [start, start+size) lies inside the file */
};

struct arena_subref {
	uint32_t object; /* dictionary index */
	uint32_t offset; /* byte offset inside that object */
	bool valid;	 /* object exists and offset < its size */
};

struct arena {
	struct arena_header h;
	uint64_t file_size;
	/* manifest, relative offsets as stored */
	uint32_t manifest_type, manifest_count, manifest_dict;
	uint32_t section_off[4]; /* types, external arenas, subreferences, atoms */
	uint64_t sections_end;	 /* absolute end of the atoms section */
	uint64_t tables_end;	 /* end of all the manifest, sections and types table read */
	/* types */
	uint32_t types_type, types_dict;
	uint32_t *types;
	uint32_t n_types;
	/* external arenas */
	uint32_t ext_type, ext_count, ext_dict;
	uint32_t ext_records[3], ext_ptrs[3];
	/* subreferences */
	uint32_t sub_type, sub_count, sub_dict_after_refix, sub_records_after_refix;
	uint32_t sub_dict, sub_records, sub_num_used;
	struct arena_subref *subrefs;
	uint32_t n_subrefs;
	/* atoms */
	uint32_t atoms_type, atoms_count, atoms_table;
	/* dictionary: numUsed rows, read with arena_row. Kept as runs of identical rows (a hole
	 * in the file reads as one run of zero rows, whatever numUsed claims): run k is runs[k]
	 * and covers rows [run_first[k], run_first[k + 1]). run_first is NULL when that would
	 * not save memory; runs[i] is then row i. */
	struct arena_dict_entry *runs;
	uint32_t *run_first;
	uint32_t n_runs;
	uint32_t n_dict;
	bool big_endian;
};

/* Row i of the dictionary (i < n_dict), through its run when rows are kept as runs. */
const struct arena_dict_entry *arena_row_run(const struct arena *a, uint32_t i);
static inline const struct arena_dict_entry *arena_row(const struct arena *a, uint32_t i)
{
	return a->run_first ? arena_row_run(a, i) : &a->runs[i];
}

/* How many rows run k covers (k < n_runs). */
static inline uint32_t arena_run_rows(const struct arena *a, uint32_t k)
{
	if (!a->run_first)
		return 1;
	return (k + 1 < a->n_runs ? a->run_first[k + 1] : a->n_dict) - a->run_first[k];
}

/* Bytes of heap the parse holds (types, subreferences, the dictionary's runs): at most
 * about 44 bytes per run, and a run boundary needs a row that is not all zero next to it,
 * so a dictionary costs at most ~88 bytes per 24-byte row the file really stores
 * (docs/rw4-arena.md, "What a mount holds"). */
size_t arena_heap_bytes(const struct arena *a);

/*
 * Parse header, sections, subreference records and dictionary. RC_FORMAT: not an RW4
 * arena. RC_CORRUPT: header or dictionary cannot be trusted (mount must refuse). Per-object
 * problems (out of bounds, bad type index, misalignment) are diag lines, not failures.
 * Allocations are capped by what the file could hold.
 */
enum rc arena_open(const struct src *s, struct arena *a, struct diag *diag);
void arena_free(struct arena *a);

/* Read object i's bytes into a fresh buffer; RC_BOUNDS if not readable. */
enum rc arena_read_object(const struct src *s, const struct arena *a, uint32_t i, uint8_t **out,
			  size_t *len);

/*
 * Resolve a stored reference value without knowing the field (docs/rw4-arena.md, "References
 * inside objects"): v>>22 == 0 is a dictionary index, == 2 a subreference record, == 1 null.
 * On success *obj is the target dictionary index and *off the byte offset inside it.
 * RC_NOENT for null (0 always reads as null here: see arena_ref_to), RC_BOUNDS for dangling,
 * RC_UNSUPPORTED for other kinds.
 */
enum rc arena_resolve_ref(const struct arena *a, uint32_t v, uint32_t *obj, uint32_t *off);

/* What a reference field may point at: a type id, or one of these. */
#define ARENA_WANT_BASERES 0xFFFFFFF0u /* any BaseResource type */
/* A field whose target types are not known: any target is accepted, and 0 is always null (row
 * 0 is never assumed to be what it names). */
#define ARENA_WANT_UNKNOWN 0xFFFFFFF1u

/* Whether an object of type_id is something a field wanting `want` may point at. */
bool arena_type_fits(uint32_t type_id, uint32_t want);
/* "BaseResource", "anything" or the type's label, for messages (buf >= 16 bytes). */
const char *arena_want_name(uint32_t want, char buf[16]);
/* Name of resource descriptor k on a platform ("MAINMEMORY", "GRAPHICS_LOCAL", ...), "RD<k>"
 * when the platform's row names none. */
const char *arena_rd_name(enum rw_platform plat, unsigned k);

/*
 * Resolve reference field value v that may point at `want` (docs/rw4-arena.md, "Row 0 as a
 * reference target"): the index is resolved first, and 0 reads as null only when row 0 is
 * missing or its type is not one the field may point at. RC_OK: *obj, *off set. RC_NOENT:
 * null. RC_CORRUPT: it resolves, but to a type the field may not point at (*obj, *off set,
 * for messages). RC_BOUNDS: dangling. RC_UNSUPPORTED: another reference kind.
 */
enum rc arena_ref_to(const struct arena *a, uint32_t v, uint32_t want, uint32_t *obj,
		     uint32_t *off);

/* First dictionary index with this type id, or UINT32_MAX. */
uint32_t arena_find_type(const struct arena *a, uint32_t type_id);

/* Name from docs/rw4-arena.md, "Type IDs" ("RenderModelData", "BaseResource", ...) or NULL when
 * unknown. */
const char *rw_type_name(uint32_t type_id);
/* Name for file names: rw_type_name or "Type_0xXXXXXXXX" written into buf (>= 16 bytes). */
const char *rw_type_label(uint32_t type_id, char buf[16]);
bool rw_is_base_resource(uint32_t type_id);

/* RW FNV-1 32 hash (seed 0x811C9DC5, multiply then xor). */
uint32_t rw_hash32(const char *s);

#endif
