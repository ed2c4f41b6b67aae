/*
 * Skate 3 Pegasus objects inside an RW4 arena (docs/skate-objects.md, "VersionData",
 * "TableOfContents", "RenderMaterialData", "InstanceData"):
 * VersionData, TableOfContents, RenderMaterialData, InstanceData, plus the text renderers for
 * the arena-level files of a mounted PSG (header.txt, dictionary.tsv, sections/, toc.tsv, the
 * decoded objects/NNNN.TypeName.txt views and the PSG lines of info.txt).
 *
 * Decoders take one object's bytes (from arena_read_object) and fill plain structs. They follow
 * the arena's endianness, never trust a count or offset (counts are capped by the object size),
 * and report problems as diag lines "object N (Type): ...". Pointers inside decoded structs
 * (struct skate_str.p) point into the caller's object buffer and live as long as it does.
 * Decoders return RC_CORRUPT only when the fixed header itself is unreadable; anything
 * decodable after that is decoded and the rest reported.
 */
#ifndef PSGFS_SKATE_OBJECTS_H
#define PSGFS_SKATE_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"

/* A NUL-terminated string at an object-relative offset (0 = none). */
struct skate_str {
	uint32_t off;
	const uint8_t *p; /* into the object bytes; NULL when none or bad */
	size_t len;	  /* bytes before the NUL */
	bool bad;	  /* off != 0 but past the object or unterminated inside it */
};

/* A stored reference value and what arena_ref_to made of it for the kind of object its field
 * may point at (docs/rw4-arena.md, "References inside objects", "Row 0 as a reference
 * target"). */
struct skate_ref {
	uint32_t raw;
	enum rc res;	   /* RC_OK, RC_NOENT (null), _BOUNDS (dangling), _UNSUPPORTED */
	uint32_t obj, off; /* target dictionary index and byte offset inside it (res == OK) */
	bool sub;	   /* raw >> 22 == 2: a subreference record */
	bool type_ok;	   /* res == OK and the target is of a type the field may point at */
};

/* VersionData: {version, revision} then extra bytes (8 zero bytes in model PSGs). */
struct skate_version {
	uint32_t version, revision;
	const uint8_t *extra;
	size_t n_extra;
};

/* TableOfContents. Entries are decoded linearly; the type map is read, never trusted. */
struct skate_toc_entry {
	struct skate_str name; /* m_Name, TOC-object-relative */
	uint32_t pad;	       /* garbage word after m_Name */
	uint64_t guid;
	uint32_t type; /* type id or RW_T_TEXTURE_HASH */
	struct skate_ref object;
};
struct skate_toc_map {
	uint32_t type, index;
};
struct skate_toc {
	uint32_t items_count, p_array, p_names, type_count, p_type_map;
	struct skate_toc_entry *entries;
	uint32_t n_entries; /* decoded entries (<= items_count, capped by the object) */
	struct skate_toc_map *map;
	uint32_t n_map;
};

/* RenderMaterialData, Pegasus v25. */
struct skate_rmd_material {
	uint32_t at; /* object-relative offset of this tRMaterial */
	uint32_t num_channels, flags, p_channels;
	/* p_channels as an index into skate_rmd.channels; valid only when channels_ok */
	uint32_t first_channel;
	bool channels_ok;
};
#define SKATE_CHANNEL_CONSTANT 0x2u /* tChannel flag: the union holds f32[4] constants */
struct skate_rmd_channel {
	uint32_t at; /* object-relative offset of this tChannel */
	struct skate_str shader_input;
	uint16_t flags, image_channel;
	uint32_t pad[2]; /* DEADBEEF DEADC0DE */
	uint32_t raw[4]; /* the 16-byte union as stored */
	/*
	 * Which reading of the 16-byte union is primary (both are always filled):
	 * SKATE_UNION_CONSTANTS when the flags have SKATE_CHANNEL_CONSTANT; else
	 * SKATE_UNION_STREAM when raw[2] (m_StreamName) is a non-zero offset at or after the
	 * string list (or the channel array end, when the string list offset is bad) naming a
	 * NUL-terminated string inside the object (the GUID is there too: real texture
	 * channels name a stream and carry the companion's TOC GUID); SKATE_UNION_GUID when
	 * m_StreamName and m_pStream are both 0 and the guid is not; otherwise constants.
	 * m_pStream is resolved as a reference only for SKATE_UNION_STREAM / _GUID.
	 */
	enum skate_union { SKATE_UNION_CONSTANTS, SKATE_UNION_STREAM, SKATE_UNION_GUID } kind;
	bool has_guid; /* a stream or GUID form whose GUID is not 0: a link to resolve */
	uint64_t guid;
	struct skate_str stream_name;
	struct skate_ref stream;
	float constants[4];
};
struct skate_rmd {
	uint32_t num_materials, num_channels, p_materials, p_channels, p_string_list;
	struct skate_rmd_material *materials;
	uint32_t n_materials;
	struct skate_rmd_channel *channels;
	uint32_t n_channels;
	/* consecutive NUL-terminated strings from p_string_list up to the first empty one */
	struct skate_str *strings;
	uint32_t n_strings;
};

/*
 * InstanceData. tInstance is 0x9C bytes; the real single-instance file has its strings
 * right at 0x20 + 0x9C, so instances are taken 0x9C apart, unless the string list sits exactly
 * at m_Instances + 0xA0 * n (a 16-byte padded array), then 0xA0.
 */
#define SKATE_INSTANCE_SIZE   0x9Cu
#define SKATE_INSTANCE_PADDED 0xA0u
struct skate_instance {
	uint32_t at;	  /* object-relative offset */
	float matrix[16]; /* Matrix44Affine, 4 rows of 4 */
	float aabb_min[4], aabb_max[4];
	uint64_t guid, guid_local;
	uint64_t class_key, instance_key;			 /* tAttribPair */
	struct skate_ref rmodel, cmodel, embedded;		 /* 0 = null */
	struct skate_str name, description, component, category; /* InstanceData-relative */
};
struct skate_instance_data {
	uint32_t type_id, num_instances, num_strings, p_instances, p_string_list;
	uint32_t stride; /* 0x9C or 0xA0, see above */
	struct skate_instance *inst;
	uint32_t n_inst;
	struct skate_str *strings; /* num_strings consecutive strings at p_string_list (capped) */
	uint32_t n_strings;
};

/* Read a string at an object-relative offset (0 = none) bounded by the object. */
struct skate_str skate_str_at(const uint8_t *p, size_t len, uint32_t off);
/* Resolve a stored reference field that may point at `want` (a type id, ARENA_WANT_BASERES or
 * ARENA_WANT_UNKNOWN) with arena_ref_to; never fails (see res and type_ok). A target of another
 * type still resolves (res == RC_OK, type_ok false) so views can show where it points. */
struct skate_ref skate_ref_get(const struct arena *a, uint32_t raw, uint32_t want);

/*
 * Decoders. a: the open arena (endianness, reference resolution); idx: the object's dictionary
 * index (for messages); p/len: its bytes. RC_CORRUPT when the fixed header is unreadable
 * (the out struct is then empty and needs no free), RC_NOMEM on allocation failure.
 */
enum rc skate_version_decode(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			     struct skate_version *out, struct diag *d);
enum rc skate_toc_decode(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			 struct skate_toc *out, struct diag *d);
void skate_toc_free(struct skate_toc *t);
enum rc skate_rmd_decode(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			 struct skate_rmd *out, struct diag *d);
void skate_rmd_free(struct skate_rmd *m);
enum rc skate_instance_decode(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			      struct skate_instance_data *out, struct diag *d);
void skate_instance_free(struct skate_instance_data *m);

/*
 * Every TOC entry of every TableOfContents object (dictionary order, then entry order), for
 * naming textures. name: owned NUL-terminated copy, NULL when the entry has none or it is bad.
 * object/offset: resolved target, object = UINT32_MAX when null or dangling. Unreadable TOC
 * objects are skipped with a diag line. Free with skate_toc_items_free.
 */
struct skate_toc_item {
	char *name;
	size_t name_len;
	uint64_t guid;
	uint32_t type;
	uint32_t object, offset;
	uint32_t toc; /* dictionary index of the TableOfContents it came from */
};
enum rc skate_toc_entries(const struct src *s, const struct arena *a, struct skate_toc_item **out,
			  size_t *n, struct diag *d);
void skate_toc_items_free(struct skate_toc_item *v, size_t n);

/*
 * The GUIDs of the textures a texture arena's TableOfContents names (entries whose object is a
 * Texture row), sorted, each once, at most max_guids of them (skate_toc_scan.c). At most
 * max_bytes of s are read in all (header, sections, dictionary, TOC objects; never texture
 * data). RC_UNSUPPORTED: no Texture row (not a texture arena); RC_TOOBIG: more than max_bytes
 * would be needed; RC_FORMAT / RC_CORRUPT as arena_open. Free *out with free().
 */
enum rc skate_toc_texture_guids(const struct src *s, uint64_t max_bytes, size_t max_guids,
				uint64_t **out, size_t *n);

#endif
