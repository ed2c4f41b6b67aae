/*
 * One platform's textures, as a row (skate_platform.h's tex member): how its Texture objects
 * are described and read (texture.h) and how a picture is written over them (texmod.h).
 * texture.c and texmod.c call rows only; the platform part of a struct tex_desc (its plat
 * block: the decoded object and the texel layout) is filled and read by its row alone, in
 * the platform's file (tex_ps3.c, tex_x360.c). A new platform is a new row, not a branch.
 */
#ifndef PSGFS_TEX_PLATFORM_H
#define PSGFS_TEX_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/tex_kind.h"

struct tex_desc;
struct texmod_plan;

struct tex_platform {
	/* tex_describe's platform part, for a row known to be a Texture (d zeroed but for index
	 * and tp): the neutral fields, base, what the data holds, and d->plat. */
	enum rc (*describe)(const struct src *s, const struct arena *a, uint32_t idx,
			    struct tex_desc *d, struct diag *diag);
	/* tex_read_rows' part, once the range is checked. */
	enum rc (*read_rows)(const struct src *s, const struct tex_desc *d, uint32_t face,
			     uint32_t level, uint32_t row0, uint32_t n, uint8_t *out);
	/* Writing (texmod.c); NULL members: the platform's textures are not written. */
	/* The platform has a texture format holding kind k's canonical texels as they are. */
	bool (*stores)(enum tex_kind k);
	/* The same shape (p->src described): p->res, the base resource row of the texels, and
	 * p->dst, the layout they are written with. */
	enum rc (*in_place)(const struct arena *a, struct texmod_plan *p, char *why, size_t whylen);
	/* A new shape p->to (the format kept when p->to.kind is p->from's): the base resource
	 * the texture owns alone (p->res), its new object (p->obj, p->obj_len), the layout
	 * (p->dst) and the base resource's new size (p->texel_bytes). why starts empty. */
	enum rc (*relayout)(const struct src *as, const struct arena *a, struct texmod_plan *p,
			    char *why, size_t whylen);
	/* Store canonical unit rows [row0, row0+n) of (face, level) into the texels res with
	 * d's layout (texmod's sink; d->kind the canonical kind). */
	enum rc (*write_rows)(const struct tex_desc *d, uint32_t face, uint32_t level,
			      uint32_t row0, uint32_t n, const uint8_t *canon, uint8_t *res,
			      size_t res_len);
};

/* PS3 GCM textures (tex_ps3.c). */
extern const struct tex_platform tex_platform_ps3;
/* Xbox 360 Xenos textures (tex_x360.c; docs/xbox360.md, "Texture object"). */
extern const struct tex_platform tex_platform_x360;

#endif
