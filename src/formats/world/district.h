/*
 * A Skate 3 district as a whole (docs/worlds.md): the manifests of its three stream kinds
 * (Pres, Sim, Tex: CMAP, CSPA, MMAP and the ATOC table each), the collection files' headers,
 * and the text views built from them: info.txt, errors.txt, collections.tsv, minimap.tsv and
 * lint.txt. Pure: the files beside the collection map come through a dist_io the caller
 * provides (a folder, an archive, a single file's directory); no FUSE, no printf.
 *
 * Everything read is untrusted. Counts are capped by what each file holds, a collection
 * file's walk by its size and DIST_WALK_MAX, lookups are by sorted id (no quadratic scan), and
 * a file that cannot be read is a line in errors.txt and lint.txt, never a failure of the rest.
 */
#ifndef PSGFS_DISTRICT_H
#define PSGFS_DISTRICT_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/names.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/stream_manifest.h"
#include "psgfs/formats/world_objects.h"

enum dist_kind { DIST_PRES = 0, DIST_SIM, DIST_TEX, DIST_KINDS };
extern const char *const dist_kind_names[DIST_KINDS]; /* "Pres" "Sim" "Tex" */

/* Assets one collection file's walk reads at most (each costs a 0x18-byte header read). */
#define DIST_WALK_MAX (1u << 20)
/* ... and all the walks of a scan together, and the collection files a scan opens: far past a
 * real district (hundreds of collections, thousands of assets), a bound for a hostile map. */
#define DIST_WALK_TOTAL (1u << 22)
#define DIST_FILES_MAX	(1u << 16)
/* The +0x1C word of a collection file as the real packer writes it (PACK): per kind. */
#define DIST_W1C_PRES 0x58000000u
#define DIST_W1C_SIM  0x57000000u

/*
 * The district's map: `DIST_<Name>_Pres.psm` or `.xsm` (the extension's case aside): true with
 * the district's folder name ("DIST_<Name>", the part before "_Pres") in dist (at least
 * NAME_COMPONENT_MAX + 1 bytes) and the platform. Any other name is false.
 */
bool dist_map_name(const char *name, char *dist, enum sm_platform *pf);
/* The same, as a yes or no (containers: is this entry a directory?). */
bool dist_is_map(const char *name);

/* The files beside the map. open: RC_OK with *s (valid until close(h)), RC_NOENT when there is
 * no such file, else why it cannot be read. */
struct dist_io {
	void *ctx;
	enum rc (*open)(void *ctx, const char *name, struct src *s, void **h);
	void (*close)(void *ctx, void *h);
};

enum dist_state { DS_ABSENT = 0, DS_OK, DS_BAD };

struct dist_id_ix { /* a record by id: sorted by id, then index (lookups take the first) */
	uint64_t id;
	uint32_t i;
};

struct dist_atoc {
	uint32_t n;
	uint64_t *ids; /* sorted, as the table lists them (repeats kept) */
};

struct dist_kind_set {
	enum dist_state st[SM_FILES]; /* ATOC, CMAP, CSPA, MMAP (SFIL: per collection) */
	bool stamped[SM_FILES];
	uint64_t stamp[SM_FILES];
	struct sm_cmap cmap;
	struct sm_cspa cspa;
	struct sm_mmap mmap;
	struct dist_atoc atoc;
	struct dist_id_ix *cspa_ix, *mmap_ix, *cmap_ix;
	uint32_t cyclic; /* collections in or leading into a parent cycle */
};

/* The manifests of a district (dist_load). */
struct district {
	enum sm_platform pf;
	char dist[NAME_COMPONENT_MAX + 1];
	struct dist_kind_set k[DIST_KINDS];
	struct diag d; /* errors.txt: reading the manifests */
};

/* One collection file's header and the ids its walk met. */
struct dist_sfil {
	enum dist_state st;
	bool stamped;
	uint64_t stamp;
	uint32_t w1c;
	uint32_t n;
	uint64_t *ids; /* sorted */
};

/* The collection files of every kind (dist_scan), and the findings of the lint. */
struct dist_scan {
	const struct district *m;
	struct dist_sfil *sf[DIST_KINDS]; /* per CMAP record of the kind */
	uint32_t n_sf[DIST_KINDS];	  /* ... how many (the manifests may go first) */
	struct diag d;			  /* errors.txt: reading the collection files */
	struct diag lint;		  /* lint.txt: one line per finding */
	size_t unresolved;		  /* references that name nothing: ids, assets */
	uint64_t walked;		  /* assets walked so far (DIST_WALK_TOTAL) */
	uint32_t opened, cut;		  /* collection files opened; 1 once the bounds cut */
};

/*
 * Read the manifests: the Pres CMAP from map (the map file itself) and every other manifest
 * and ATOC table through io. RC_IO or RC_FORMAT when the map itself cannot be read as a CMAP
 * (nothing else is then read); RC_NOMEM. Any other file's problem is a line in m->d and its
 * state. Free with dist_free either way.
 */
enum rc dist_load(struct district *m, const char *map_name, const struct src *map,
		  const struct dist_io *io);
void dist_free(struct district *m);
size_t dist_heap(const struct district *m);

/* Walk the collection files of every kind (headers only) and run the lint. RC_NOMEM only;
 * free with dist_scan_free either way. */
enum rc dist_scan(struct dist_scan *s, const struct district *m, const struct dist_io *io);
void dist_scan_free(struct dist_scan *s);

/* Whether CMAP record i of kind k belongs in the district's scene: the first record of its id,
 * named, and a Global (parent 0xE171E1ABFEDB69ED or "_Global" in the name) or a High tile (its
 * CSPA cell's level of detail 0). */
bool dist_in_scene(const struct district *m, enum dist_kind k, uint32_t i);
/* Whether CMAP record i of kind k is named and the first of its id (the one that speaks). */
bool dist_first_of_id(const struct district *m, enum dist_kind k, uint32_t i);

/* The views. Tables: one header line, then row i of dist_*_rows() rows. */
extern const char dist_collections_header[];
extern const char dist_minimap_header[];
uint64_t dist_collection_rows(const struct district *m);
void dist_collection_row(const struct district *m, uint64_t i, struct buf *b);
uint64_t dist_minimap_rows(const struct district *m);
void dist_minimap_row(const struct district *m, uint64_t i, struct buf *b);
struct dist_objects;
/* o: the Sim stream's objects, or NULL when they cannot be reached (a single-file mount). */
void dist_info(const struct district *m, const struct dist_scan *s, const struct dist_objects *o,
	       struct buf *b);
void dist_errors(const struct district *m, const struct dist_scan *s, struct buf *b);
/* o (may be NULL): the arenas' findings, after the manifests'. */
void dist_lint(const struct dist_scan *s, const struct dist_objects *o, struct buf *b);
/* Whether the ATOC of kind k lists asset id (a stream asset: a per-texture arena's GUID). */
bool dist_atoc_has(const struct district *m, enum dist_kind k, uint64_t id);

/* ---- the Sim stream's objects: props.tsv, rails.tsv, surfaces.tsv ---- */

/* Props placed in scene.glb at most (props past it stay rows of props.tsv; errors.txt says so). */
#define DIST_PLACED_MAX (1u << 16)

/* A prop whose template resolved: where scene.glb places which template. */
struct dist_placed {
	uint32_t model; /* the resolver's handle (ns_district_objects.c: a template arena slot) */
	uint64_t template_id;
	float pos[3], rot[4], scale[3];
};

/*
 * The template of a DMO placement (set before dist_objects_add; NULL: none to ask, every prop
 * `unresolved` without a finding). Returns the template's handle (non-zero) and its path in
 * *path, or 0 with the reason in *why (a finding of lint.txt).
 */
typedef uint32_t (*dist_model_fn)(void *ctx, uint64_t template_id, const char **path,
				  const char **why);

/* Rows of the three tables, as text (one line each), accumulated arena by arena. */
struct dist_objects {
	dist_model_fn model_of;
	void *model_ctx;
	uint64_t n_resolved;
	struct dist_placed *placed; /* resolved props, at most DIST_PLACED_MAX */
	size_t n_placed, cap_placed;
	struct buf props, rails, surfaces;
	uint64_t n_props, n_rails, n_segments, n_tris, n_meshes;
	float (*seg)[2][3];  /* every rail segment's start and end, rail after rail */
	uint32_t *rail_segs; /* per rail with segments: how many (rails.glb) */
	size_t n_seg, cap_seg, n_rail_list, cap_rail_list;
	struct wo_surface_count *surf; /* every mesh's counts; merged by dist_objects_finish */
	size_t n_surf, cap_surf;
	struct diag d;	   /* errors.txt: what the objects' parsers said, prefixed by where */
	struct diag lint;  /* lint.txt: flagged props and rails, textures nothing provides */
	size_t unresolved; /* texture GUIDs nothing provides */
};
extern const char dist_props_header[];
extern const char dist_rails_header[];
extern const char dist_surfaces_header[];
void dist_objects_init(struct dist_objects *o);
/* One object of type type_id (WO_T_DMODATA, WO_T_SPLINEDATA, WO_T_CLUSTEREDMESH; any other
 * type is ignored) from the arena `where` ("cSim_0_0_high/0x....psg"), its bytes p[0..n).
 * RC_NOMEM only: a broken object is diag lines and what rows it gives. */
enum rc dist_objects_add(struct dist_objects *o, const char *where, uint32_t index,
			 uint32_t type_id, const uint8_t *p, size_t n);
/* surfaces.tsv's rows from the counts of every mesh. */
enum rc dist_objects_finish(struct dist_objects *o);
void dist_objects_free(struct dist_objects *o);

#endif
