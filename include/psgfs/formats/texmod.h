/*
 * A picture written over a texture of an arena, and the arena that results (docs/texture-mods.md).
 *
 * - A DDS whose format psgfs stores on the platform and whose format, size, mip count and faces
 *   equal the texture's as served (textures/<name>.dds: of a texture whose data is shorter than
 *   its layout, the faces and levels it holds): the texel bytes it holds are replaced in place,
 *   every other byte of the arena stays (what the community's merge script produces for the
 *   same DDS).
 * - A DDS of another size, mip count, faces or stored format: the texture takes the DDS's
 *   shape; its Texture object and base resource are laid out again and the resources after it
 *   move (arena_patch.h). A DDS in a format the platform has no texture format for is
 *   converted into the texture's own format, level by level.
 * - A PNG: the texture's own format, size, mips and faces (as served, like a DDS); level 0 from
 *   the picture (a cube map's faces side by side, as textures/<name>.png shows them), the other
 *   levels regenerated (tex_encode.h). A PNG of another size is refused: save it at the
 *   texture's size, or write a DDS to change the size.
 * - Saving what was served changes nothing: a picture written in place whose pixels (PNG) or
 *   canonical texels (DDS) equal the texture's as served keeps the source's texel bytes, so
 *   the arena comes back byte for byte (mips, pitch padding and stored bits the canonical form
 *   does not show included).
 * Everything streams: memory is a few rows per mip level, whatever the picture's size.
 */
#ifndef PSGFS_TEXMOD_H
#define PSGFS_TEXMOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/result.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/arena_patch.h"
#include "psgfs/formats/dds_read.h"
#include "psgfs/formats/skate_platform.h"
#include "psgfs/formats/texture.h"

enum texmod_input { TEXMOD_DDS, TEXMOD_PNG };

/* Bytes of the largest Texture object a platform writes (tex_platform.h). */
#define TEXMOD_OBJ_MAX 64u
/* Largest side of a picture written into a texture (RSX textures are at most 4096). */
#define TEXMOD_MAX_SIDE 4096u

struct texmod_shape {
	enum tex_kind kind;
	uint32_t width, height, mips, faces;
};

struct texmod_plan {
	uint32_t tex, res;		 /* the Texture row and its base resource row */
	const struct skate_platform *pl; /* the arena's: its texture row writes (tex_platform.h) */
	bool have_from;			 /* the texture as it is could be described */
	struct texmod_shape from, to;
	struct texmod_shape served; /* from's faces and levels the data holds (have_*) */
	struct tex_desc src;	    /* the texture as it is (when have_from) */
	bool in_place;		    /* the served shape: only texel bytes change */
	enum texmod_input in;
	struct dds_read_info dds;
	bool dds_direct; /* DDS rows are the new canonical texels as they are */
	/* the texture as written: its object and the layout the writer follows (dst.plat) */
	uint8_t obj[TEXMOD_OBJ_MAX];
	size_t obj_len; /* 0 when the object stays */
	struct tex_desc dst;
	uint64_t texels, texel_bytes; /* where they are in the new file, and how many */
	struct arena_patch patch;
	uint64_t out_size; /* bytes of the new arena */
	unsigned threads;  /* block encoding threads (1; the caller may raise it before writing) */
	char what[320];	   /* one line saying what was done, for info.txt */
};

/*
 * Decide what writing the picture pic (a DDS or a PNG) over Texture row `tex` of arena a
 * (read through as) does, from the picture's header: RC_OK and the plan, or a refusal with one
 * line in why (RC_FORMAT: not that kind of file; RC_UNSUPPORTED: a format, size or shape that
 * cannot be written there; RC_CORRUPT / RC_TRUNCATED: a damaged picture; RC_INVAL: not a
 * texture).
 */
enum rc texmod_plan(const struct src *as, const struct arena *a, uint32_t tex, enum texmod_input in,
		    const struct src *pic, struct texmod_plan *p, char *why, size_t whylen);
/*
 * Write the new arena into dst (p->out_size bytes), decoding the whole picture; a picture that
 * turns out damaged past its header fails with why, and dst is then to be discarded.
 */
enum rc texmod_write(const struct src *as, const struct arena *a, const struct src *pic,
		     const struct texmod_plan *p, uint8_t *dst, char *why, size_t whylen);
void texmod_plan_free(struct texmod_plan *p);

#endif
