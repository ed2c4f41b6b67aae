/*
 * A deterministic Skate 3 district (docs/worlds.md, "Generated districts"): the stream set of
 * a folder DIST_<Name>/ for PS3 or Xbox 360, written through stream_set.h. Pres: cPres_Global
 * and one cPres_<x>_<z>_high per 100 m tile, each holding fused static model arenas in world
 * space (identity InstanceData, "Proc_Fuse_..." names) whose materials name their diffuse
 * texture by GUID. PS3: the textures are per-texture arenas in cTex_Global of the Tex stream
 * (asset id = GUID); Xbox 360: one texture arena in cPres_Global, and the four empty Tex
 * manifests (the stub the Xbox 360 engine needs). Sim: cSim_<x>_<z>_high per tile, one arena
 * each: collision (CollisionModelData -> Volume -> ClusteredMesh with surface ids), rails
 * (SplineData) and placed props (DMOData) whose templates are in worlddmo.big.
 * --broken variants each trip one rule of the district lint.
 */
#ifndef PSGFS_GEN_DISTRICT_H
#define PSGFS_GEN_DISTRICT_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/result.h"

enum gen_district_broken {
	GD_B_NONE,
	GD_B_CMAP_ORPHAN,  /* cmap-orphan-id: a Pres CMAP record without a collection file */
	GD_B_ATOC_MISSING, /* atoc-missing: a Pres ATOC asset no collection holds */
	GD_B_SFIL_EXTRA,   /* sfil-extra: a Pres collection asset the ATOC lacks */
	GD_B_CSPA_MISSING, /* cspa-missing: a Pres tile without its CSPA cell */
	GD_B_TEX_GUID,	   /* tex-guid-missing: a material names a texture GUID nothing has */
	GD_B_TEX_STUB,	   /* tex-stub-missing: Xbox 360 only, no Tex manifests */
	GD_B_STAMP,	   /* stamp-mismatch: the Pres MMAP's stamp differs */
	GD_B_KIND_FIELD,   /* kind-field: cPres_Global's SFIL +0x1C is Sim's 0x57000000 */
	GD_B_PARENT_CYCLE, /* parent-cycle: Pres Global's parent is a tile, whose parent is it */
	GD_B_NAN_MATRIX,   /* nan-matrix: a Pres model's InstanceData matrix holds NaN */
	GD_B_LYING_COUNTS, /* lying-counts: CMAP/CSPA/ATOC headers, a CMAP asset count and an
			      SFIL +0x14 claim far more than the files hold */
	GD_B_COUNT
};
const char *gen_district_broken_name(enum gen_district_broken b);
/* By name; GD_B_COUNT when unknown. */
enum gen_district_broken gen_district_broken_parse(const char *name);

struct gen_district_opts {
	uint64_t seed;
	bool x360;
	const char *name;  /* the district folder, "DIST_<Name>" (NULL = "DIST_Gen") */
	uint32_t tiles;	   /* High tiles, laid out in a square grid (0 = 4) */
	uint32_t models;   /* fused models over Global and the tiles (0 = 2 per tile + 1) */
	uint64_t size;	   /* about this many bytes of model arenas (0 = small models) */
	uint32_t textures; /* diffuse textures (0 = min(models, 8)) */
	enum gen_district_broken broken;
};

/* Where the files go: rel is a file name inside the district folder ("cPres_Global.psf",
 * "DIST_Gen_Pres.psm"), or GEN_DISTRICT_DMO_BIG, the EB archive of the DMO templates, which
 * belongs beside the district (the CLI writes it beside OUT, `game` in data/content/). The
 * generator frees b after the call. */
#define GEN_DISTRICT_DMO_BIG "worlddmo.big"
struct gen_district_sink {
	enum rc (*put)(void *ctx, const char *rel, const struct buf *b);
	void *ctx;
};

/*
 * Write every file of the district through s, one collection at a time (a 400 MB district
 * never sits in memory). RC_INVAL for a name that is not DIST_<something> (under 48 bytes),
 * tex-stub-missing on PS3, more than 10,000 tiles or 1,000,000 models.
 */
enum rc gen_district(const struct gen_district_opts *o, const struct gen_district_sink *s);

#endif
