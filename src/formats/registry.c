/* The format registry (registry.h): one row per format psgfs recognises. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formats/world/district.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/registry.h"

static const char *const psg_exts[] = {".psg", ".rx2", NULL};
static const char *const psk_exts[] = {".psk", ".pskx", NULL};
static const char *const psa_exts[] = {".psa", NULL};
static const char *const big_exts[] = {".big", NULL};
static const char *const dist_exts[] = {".psm", ".xsm", NULL};
static const char *const plain_exts[] = {
    ".txt", ".md",  ".log",  ".xml", ".json", ".ini", ".cfg", ".csv", ".tsv", ".htm", ".html",
    ".png", ".jpg", ".jpeg", ".dds", ".tga",  ".bmp", ".gif", ".wav", ".ogg", ".mp3", NULL};

const struct fmt_row fmt_rows[FMT_COUNT] = {
    [FMT_PSG] = {.id = FMT_PSG,
		 .role = FMT_ASSET,
		 .name = "PSG",
		 .desc = "RenderWare 4 arena",
		 .exts = psg_exts,
		 .magic = "\x89RW4",
		 .magic_len = 4,
		 .min_size = 4,
		 .sibling_suffix = "_Textures"},
    /* The magic is the chunk id with its NUL; a file holds at least one 32-byte chunk
     * header, but 20 bytes are enough to be told apart from anything else. */
    [FMT_PSK] = {.id = FMT_PSK,
		 .role = FMT_ASSET,
		 .name = "PSK",
		 .desc = "ActorX skeletal mesh",
		 .exts = psk_exts,
		 .magic = "ACTRHEAD",
		 .magic_len = 9,
		 .min_size = 20},
    [FMT_PSA] = {.id = FMT_PSA,
		 .role = FMT_ASSET,
		 .name = "PSA",
		 .desc = "ActorX animation",
		 .exts = psa_exts,
		 .magic = "ANIMHEAD",
		 .magic_len = 9,
		 .min_size = 20},
    /* The collection map of a district's Pres kind, by its whole name: the Sim and Tex maps,
     * and any other CMAP, stay plain files (docs/worlds.md, "The district view"). */
    [FMT_DISTRICT] = {.id = FMT_DISTRICT,
		      .role = FMT_ASSET,
		      .name = "district",
		      .desc = "Skate 3 district (Pres collection map)",
		      .exts = dist_exts,
		      .name_ok = dist_is_map,
		      .magic = "CMAP",
		      .magic_len = 4,
		      .min_size = 4},
    [FMT_EB3] = {.id = FMT_EB3,
		 .role = FMT_ARCHIVE,
		 .name = "EB v3",
		 .desc = "EA EB v3 archive (.big)",
		 .exts = big_exts,
		 .magic = {'E', 'B', 0, 3},
		 .magic_len = 4,
		 .min_size = 4,
		 .arc_kind = ARC_EB3},
    [FMT_BIGF] = {.id = FMT_BIGF,
		  .role = FMT_ARCHIVE,
		  .name = "BIGF",
		  .desc = "EA BIGF archive (.big)",
		  .exts = big_exts,
		  .magic = "BIGF",
		  .magic_len = 4,
		  .min_size = 4,
		  .arc_kind = ARC_BIGF},
    [FMT_BIG4] = {.id = FMT_BIG4,
		  .role = FMT_ARCHIVE,
		  .name = "BIG4",
		  .desc = "EA BIG4 archive (.big)",
		  .exts = big_exts,
		  .magic = "BIG4",
		  .magic_len = 4,
		  .min_size = 4,
		  .arc_kind = ARC_BIG4},
    /* The stream file's table is named and matched by archive/sfil.c, its only copy. */
    [FMT_SFIL] = {.id = FMT_SFIL,
		  .role = FMT_ARCHIVE,
		  .name = "SFIL",
		  .desc = "Skate 3 stream file (SFIL)",
		  .exts = arc_stream_exts,
		  .magic = "SFIL",
		  .magic_len = 4,
		  .min_size = 4,
		  .arc_kind = ARC_SFIL,
		  .companion_exts = arc_toc_exts,
		  .pairs = arc_toc_pairs},
    [FMT_PLAIN] = {.id = FMT_PLAIN,
		   .role = FMT_FILE,
		   .name = "plain",
		   .desc = "plain file",
		   .exts = plain_exts},
};

const struct fmt_row *fmt_row(enum fmt_id id)
{
	return (unsigned)id < FMT_COUNT ? &fmt_rows[id] : NULL;
}

const struct fmt_row *fmt_detect(const uint8_t *h, size_t n, unsigned roles)
{
	for (unsigned i = 0; i < FMT_COUNT; i++) {
		const struct fmt_row *r = &fmt_rows[i];

		if ((r->role & roles) && r->magic_len && n >= r->min_size && n >= r->magic_len &&
		    !memcmp(h, r->magic, r->magic_len))
			return r;
	}
	return NULL;
}

const struct fmt_row *fmt_by_name(const char *name, unsigned roles)
{
	for (unsigned i = 0; i < FMT_COUNT; i++)
		if ((fmt_rows[i].role & roles) && name_has_ext(name, fmt_rows[i].exts) &&
		    (!fmt_rows[i].name_ok || fmt_rows[i].name_ok(name)))
			return &fmt_rows[i];
	return NULL;
}

bool fmt_name_is(const char *name, enum fmt_id id)
{
	return (unsigned)id < FMT_COUNT && name_has_ext(name, fmt_rows[id].exts) &&
	       (!fmt_rows[id].name_ok || fmt_rows[id].name_ok(name));
}

const struct fmt_row *fmt_of_arc_kind(unsigned kind)
{
	for (unsigned i = 0; i < FMT_COUNT; i++)
		if (kind && fmt_rows[i].arc_kind == kind)
			return &fmt_rows[i];
	return NULL;
}

bool fmt_is_companion_name(const char *name, unsigned roles)
{
	for (unsigned i = 0; i < FMT_COUNT; i++)
		if ((fmt_rows[i].role & roles) && fmt_rows[i].companion_exts &&
		    name_has_ext(name, fmt_rows[i].companion_exts))
			return true;
	return false;
}

static const char *sibling_suffix(enum fmt_id id)
{
	return (unsigned)id < FMT_COUNT ? fmt_rows[id].sibling_suffix : NULL;
}

char *fmt_sibling_name(enum fmt_id id, const char *model)
{
	const char *suffix = sibling_suffix(id), *ext = name_ext(model);
	char *out;

	if (!suffix || asprintf(&out, "%.*s%s%s", (int)(ext - model), model, suffix, ext) < 0)
		return NULL;
	return out;
}

bool fmt_sibling_model(enum fmt_id id, const char *name, char *out, size_t n)
{
	const char *suffix = sibling_suffix(id), *ext;
	size_t stem, sl;

	if (!suffix)
		return false;
	ext = name_ext(name);
	stem = (size_t)(ext - name);
	sl = strlen(suffix);
	if (stem <= sl || strncasecmp(name + stem - sl, suffix, sl) || stem - sl + strlen(ext) >= n)
		return false;
	memcpy(out, name, stem - sl);
	strcpy(out + stem - sl, ext);
	return true;
}
