/*
 * Per-platform decoders of the renderengine objects a Skate mesh is made of
 * (docs/skate-objects.md, "Vertex descriptor", "VertexBuffer", "IndexBuffer", "MeshHelper",
 * "RenderOptiMeshData"). PS3 and Xbox 360 number element types differently, store different
 * vertex formats and lay out VertexBuffer, IndexBuffer, MeshHelper and DrawIndexedParameters
 * differently, so each platform is one const table, chosen once from the arena's platform.
 * Adding a platform is new files and rows, not branches: its tag and resource descriptors (a
 * row of arena.c), this table (skate_<platform>.c, listed in skate_platform.c) with its
 * texture row (tex_<platform>.c: reading and writing textures, tex_platform.h), and its view
 * row (src/tree/psg/view_psg_<platform>.c, listed in view_platform_of). Everything above works
 * on the neutral forms of skate_mesh.h and texture.h.
 */
#ifndef PSGFS_SKATE_PLATFORM_H
#define PSGFS_SKATE_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/skate_mesh.h"

struct tex_platform;

/*
 * One platform's object decoders. Every decoder takes one object's bytes, the arena's byte
 * order (be) and the object's dictionary index (idx, for diag lines "object N (Type): ...");
 * it never trusts a count or offset and returns RC_CORRUPT only when the fixed header is
 * missing. d may be NULL.
 */
struct skate_platform {
	const char *name;      /* "PS3" */
	enum rw_platform plat; /* the arena platform it serves */
	/* VertexDescriptor: header, elements as stored and their neutral descriptions. */
	enum rc (*vdes_parse)(const uint8_t *p, size_t n, bool be, uint32_t idx,
			      struct skate_vdes *out, struct diag *d);
	/* VertexBuffer: base-resource reference, offset and size. */
	enum rc (*vb_parse)(const uint8_t *p, size_t n, bool be, uint32_t idx, struct skate_vb *out,
			    struct diag *d);
	/* IndexBuffer: base-resource reference, count and index width (2, 4 or 0 = unusable). */
	enum rc (*ib_parse)(const uint8_t *p, size_t n, bool be, uint32_t idx, struct skate_ib *out,
			    struct diag *d);
	/* MeshHelper: index- then vertex-buffer references. */
	enum rc (*mesh_helper_parse)(const uint8_t *p, size_t n, bool be, uint32_t idx,
				     struct skate_mesh_helper *out, struct diag *d);
	/* DrawIndexedParameters: bytes per record and the decoder of one record at the cursor. */
	uint32_t dip_size;
	void (*dip_decode)(struct br *r, struct skate_island *out);
	uint8_t tri_prim; /* the primitive code of triangle lists, for messages */
	/* Element decode: the neutral description of one element as stored. */
	void (*elem_describe)(const struct skate_velem *el, struct skate_elem *out);
	/* The platform's name of a stored element type ("XYZ", "TEX0", ...). */
	const char *(*elem_type_name)(uint8_t type, char buf[16]);
	/* VertexBuffer and IndexBuffer name no base resource: theirs is the dictionary row just
	 * before them (Xbox 360). Else the objects' buffer field is a reference. */
	bool base_res_row_before;
	/* DrawIndexedParameters carry a base vertex (islands.tsv then shows it). */
	bool island_base_vertex;
	/* Textures: reading and writing them (tex_platform.h). */
	const struct tex_platform *tex;
};

/* The PS3 table (skate_ps3.c). */
extern const struct skate_platform skate_platform_ps3;
/* The Xbox 360 table (skate_x360.c; docs/xbox360.md, "Models"). */
extern const struct skate_platform skate_platform_x360;

/* MeshHelper {numIndexBuffers, numVertexBuffers, IB refs, VB refs}, the same on every
 * platform, in byte order be. */
enum rc skate_mesh_helper_decode(const uint8_t *p, size_t n, bool be, uint32_t idx,
				 struct skate_mesh_helper *out, struct diag *d);

/* The table of the arena's platform, NULL when there is none yet (scene load then gives
 * RC_UNSUPPORTED). */
const struct skate_platform *skate_platform_of(const struct arena *a);
/* The table whose decoders serve the arena's objects and textures: its platform's, else the
 * PS3 one (the object views and textures of other platforms decode as PS3). */
const struct skate_platform *skate_platform_decoders(const struct arena *a);

#endif
