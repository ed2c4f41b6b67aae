/*
 * What psgfs recognises, in one table (in the spirit of libarchive's format bidders): a row
 * per asset format, archive kind and plain-file name family, with the name rule (extensions,
 * any case), the content rule (magic at offset 0 and the smallest file it takes), and the
 * companion rules (a stream file's ATOC table beside it; a model arena's textures in a sibling
 * arena named after it). Folder mounts, archives and the GUID index read it; README's tables
 * ("Folder mounts", "Archives") are checked against it (meson test readme_registry). What each row opens as lives one layer up, keyed by the same
 * enum: tree/core/asset.c (asset namespaces), archive.c (archive openers).
 *
 * A new format is a new enum value and row here (docs/extending.md).
 */
#ifndef PSGFS_FORMATS_REGISTRY_H
#define PSGFS_FORMATS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fmt_id {
	FMT_PSG,      /* RenderWare 4 arena: .psg (PS3), .rx2 (Xbox 360) */
	FMT_PSK,      /* Unreal ActorX skeletal mesh */
	FMT_PSA,      /* Unreal ActorX animation */
	FMT_DISTRICT, /* Skate 3 district: its Pres collection map DIST_<Name>_Pres.psm/.xsm */
	FMT_EB3,      /* EA EB v3 .big */
	FMT_BIGF,     /* EA BIGF .big */
	FMT_BIG4,     /* EA BIG4 .big */
	FMT_SFIL,     /* Skate 3 stream file (.psf/.xsf) with its ATOC table (.pst/.xst) */
	FMT_PLAIN,    /* names no game or exporter gives an asset: text, pictures, sound */
	FMT_COUNT
};

/* What a row is shown as (a mask, so lookups can ask for several). */
enum fmt_role {
	FMT_ASSET = 1,	 /* a directory of its decoded views (a namespace) */
	FMT_ARCHIVE = 2, /* a directory of its entries */
	FMT_FILE = 4,	 /* a plain file, decided by name alone */
};

#define FMT_MAGIC_MAX 12

struct fmt_row {
	enum fmt_id id;
	enum fmt_role role;
	const char *name;	 /* short: "PSG", "EB v3" (tests, psgfs-tool) */
	const char *desc;	 /* what info.txt calls it */
	const char *const *exts; /* lowercase, with the dot, NULL-terminated; any case matches */
	/* A name rule beyond the extension (NULL: the extension decides): fmt_by_name and
	 * fmt_name_is take only the names it accepts, and so must a caller of fmt_detect. */
	bool (*name_ok)(const char *name);
	/* Content: magic_len bytes at offset 0 (0: the row is by name only), on a file of at
	 * least min_size bytes (a file too small for it, named like it, is a plain file). */
	uint8_t magic[FMT_MAGIC_MAX];
	uint8_t magic_len;
	uint32_t min_size;
	uint8_t arc_kind; /* archives: enum arc_kind (archive.h); 0 otherwise */
	/* Companion: a file beside it of one of these extensions that the opener also takes;
	 * pairs says whether a name is this file's own (taken first). NULL: none. */
	const char *const *companion_exts;
	bool (*pairs)(const char *name, const char *companion);
	/* Sibling companion: an asset of the same format named `<stem><sibling_suffix><.ext>`
	 * beside a model `<stem><.ext>` (PSG: the textures of a model arena in
	 * `<stem>_Textures.<ext>`). NULL: none. Names go through fmt_sibling_name and
	 * fmt_sibling_model, never built by hand. */
	const char *sibling_suffix;
};

extern const struct fmt_row fmt_rows[FMT_COUNT];

/* The row of a format. */
const struct fmt_row *fmt_row(enum fmt_id id);

/* The first row of a role in roles whose magic the first n bytes of a file are; NULL: none. */
const struct fmt_row *fmt_detect(const uint8_t *h, size_t n, unsigned roles);

/* The first row of a role in roles whose extension name ends in; NULL: none. */
const struct fmt_row *fmt_by_name(const char *name, unsigned roles);

/* Whether name ends in one of the extensions of format id. */
bool fmt_name_is(const char *name, enum fmt_id id);

/* The row of an archive kind (enum arc_kind); NULL for none. */
const struct fmt_row *fmt_of_arc_kind(unsigned kind);

/* A name one of the rows of roles takes as a companion (.pst/.xst). */
bool fmt_is_companion_name(const char *name, unsigned roles);

/*
 * The sibling companion rule of format id, both ways. A name splits into stem and extension
 * at its last '.' that is not its first byte (name_ext); the extension is kept as it is.
 * fmt_sibling_name: the companion's name of a model named model ("a.psg" -> "a_Textures.psg"),
 * allocated; NULL when the row has no such rule or for want of memory.
 * fmt_sibling_model: whether name is a companion's (its stem ends in the suffix, any case,
 * after at least one byte), and then the model's name in out (n bytes with the NUL);
 * false when it is not, or when the model's name does not fit.
 */
char *fmt_sibling_name(enum fmt_id id, const char *model);
bool fmt_sibling_model(enum fmt_id id, const char *name, char *out, size_t n);

#endif
