/*
 * The Pegasus and RenderWare objects of a district's Sim stream that place things in the world
 * (docs/worlds.md, "DMOData", "SplineData", "ClusteredMesh"): parsers on the bytes of one
 * arena object (arena_read_object of a dictionary row of that type) and deterministic writers.
 * Pure: bounded buffers, enum rc, diag lines; no FUSE, no printf. Big-endian on both consoles.
 *
 * What to call:
 *   dynamic props (type WO_T_DMODATA, 0x00EB001D):
 *     wo_dmo_parse(obj, len, &dmos, diag) ... dmos.v[i].pos / .rot / .scale / .template_id
 *     (WO_F_NONFINITE: the matrix is not trusted, pos/rot/scale are identity); wo_dmo_free.
 *     wo_dmo_write(&hdr, v, n, &buf): records from .m (wo_compose builds .m from pos/rot/scale).
 *   grind rails (type WO_T_SPLINEDATA, 0x00EB0004):
 *     wo_spline_parse(obj, len, &sd, diag); rail r's segments in chain order are
 *     sd.order[sd.rails[r].first .. + sd.rails[r].count], each sd.segs[k].start / .end;
 *     wo_spline_free. wo_spline_write(rails, n, &buf) writes polylines (struct wo_rail_in).
 *   collision (type WO_T_CLUSTEREDMESH, 0x00080006):
 *     wo_cmesh_parse(obj, len, &cm, diag); cm.ntris triangles; wo_cmesh_tris(&cm, first,
 *     count, out) decodes a range in world space; wo_cmesh_surfaces(&cm, &v, &n) counts per
 *     surface id; wo_surface_split for the audio/physics/pattern fields; wo_cmesh_heap for a
 *     cache budget; wo_cmesh_free.
 *     wo_cmesh_write(tris, n, granularity, &buf) writes one simple valid layout.
 *   CollisionModelData (WO_T_COLLISIONMODEL, 0x00EB000A): wo_cmodel_parse (its volume and
 *     mesh references). A district's collision is every ClusteredMesh row of its Sim arenas.
 *
 * Every count, offset and index read is untrusted: counts are capped by what the object can
 * hold, chains (rail segments, the KD-tree) are walked iteratively with visited marks, so a
 * loop ends the walk with one diag line and costs no stack. A broken record stays listed with
 * a flag; the diag lines have stable wording (docs/worlds.md).
 */
#ifndef PSGFS_WORLD_OBJECTS_H
#define PSGFS_WORLD_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"

#define WO_T_DMODATA	    0x00EB001Du
#define WO_T_SPLINEDATA	    0x00EB0004u
#define WO_T_COLLISIONMODEL 0x00EB000Au
#define WO_T_CLUSTEREDMESH  0x00080006u
#define WO_T_VOLUME	    0x00080001u

#define WO_NONE UINT32_MAX /* an index that names nothing */

/* Record flags (each also one diag line). */
#define WO_F_NONFINITE 0x01u /* a matrix (or bound) value is NaN or infinite */
#define WO_F_SINGULAR  0x02u /* a basis row of the matrix is zero: no rotation can be had */
#define WO_F_SHEAR     0x04u /* the basis rows are not orthogonal (kept, decomposed anyway) */
#define WO_F_NAME      0x08u /* the name offset names no terminated string in the object */
#define WO_F_CYCLE     0x10u /* a chain through this record loops */
#define WO_F_LINK      0x20u /* a link (head, tail, prev, next, spline) names nothing */
#define WO_F_BOUNDS    0x40u /* the bounding box is not finite or its minimum exceeds its max */

/* ---- DMOData: dynamic props ---- */

#define WO_DMO_HDR  0x20u /* 20 bytes of header, padded (SK8: "a 32-byte header") */
#define WO_DMO_REC  0x80u
#define WO_NAME_MAX 127u

struct wo_dmo_header {
	uint32_t type_id; /* +0x00, as stored (not judged) */
	uint32_t count;	  /* +0x04, as claimed */
	uint32_t nstrings;
	uint32_t recs_off;    /* object-relative */
	uint32_t strings_off; /* object-relative */
};

struct wo_dmo {
	float m[16];		/* +0x00 row-vector affine matrix, rows x, y, z, translation */
	float bmin[4], bmax[4]; /* +0x40 */
	/* +0x60 +0x68 +0x70: SFFD's guid, local guid, instance guid; SK8's instance id, locator
	 * id, template id (docs/worlds.md): both names kept */
	uint64_t guid, guid_local, template_id;
	uint32_t instance; /* +0x78 SFFD: dictionary index of an instance */
	uint32_t name_off; /* +0x7C object-relative; 0 = none */
	char name[WO_NAME_MAX + 1];
	/* decomposed from m (identity when WO_F_NONFINITE or WO_F_SINGULAR) */
	float pos[3];
	float rot[4]; /* unit quaternion x, y, z, w, for column vectors (glTF) */
	float scale[3];
	uint8_t flags;
};

struct wo_dmos {
	struct wo_dmo_header h;
	uint32_t n; /* records read */
	struct wo_dmo *v;
};

/* RC_TRUNCATED: shorter than its 20-byte header; RC_NOMEM. Otherwise RC_OK with every whole
 * record the object holds (at most the claimed count), one diag line per problem. */
enum rc wo_dmo_parse(const uint8_t *p, size_t n, struct wo_dmos *out, struct diag *d);
void wo_dmo_free(struct wo_dmos *m);

/* pos, rot (any non-zero quaternion, normalised here) and scale to a row-vector matrix. */
void wo_compose(const float pos[3], const float rot[4], const float scale[3], float m[16]);
/* m to pos/rot/scale; returns the WO_F_* flags found (NONFINITE, SINGULAR, SHEAR); on
 * NONFINITE or SINGULAR the outputs are identity. */
uint8_t wo_decompose(const float m[16], float pos[3], float rot[4], float scale[3]);

/* Header (count = n, recs_off 0x20, strings after the records; type_id and nstrings as given,
 * nstrings 0 = the number of names written), the records from .m .bmin .bmax ids .instance,
 * then each non-empty name, NUL-terminated, in record order. Deterministic; padding zero.
 * RC_INVAL for a name without a NUL in its WO_NAME_MAX + 1 bytes. */
enum rc wo_dmo_write(const struct wo_dmo_header *h, const struct wo_dmo *v, uint32_t n,
		     struct buf *out);

/* ---- SplineData: grind rails ---- */

#define WO_SPLINE_HDR 0x10u
#define WO_SPLINE_REC 0x20u
#define WO_SEG_REC    0x90u /* DUMB, LCMP: the segment padded to 16 bytes */
#define WO_SEG_FIELDS 0x84u /* SFFD: the fields alone (a stride some files may use) */

struct wo_spline_header {
	uint32_t nsplines, nsegments; /* as claimed */
	uint32_t splines_off, segments_off;
};

struct wo_rail { /* a spline header, 0x20 bytes */
	uint64_t guid, guid_local;
	uint32_t instance;
	uint32_t head_raw, tail_raw; /* as stored */
	uint32_t head, tail;	     /* segment indices, or WO_NONE */
	uint32_t first, count;	     /* its segments in chain order: order[first .. first+count) */
	uint8_t flags;
};

struct wo_segment {	 /* 0x84 bytes of fields */
	float basis[16]; /* rows 0-3; row 3 is the start point */
	float inverse[4];
	float bmin[4], bmax[4];
	float length, distance;
	uint32_t spline_raw, prev_raw, next_raw; /* as stored */
	uint32_t spline, prev, next;		 /* indices, or WO_NONE */
	float start[3], end[3]; /* row 3, and rows 0-3 summed (t = 0 and t = 1); 0 if not finite */
	uint8_t flags;
};

struct wo_splines {
	struct wo_spline_header h;
	bool offsets;	     /* links read as byte offsets (DUMB, LCMP), else as indices (SFFD) */
	uint32_t seg_stride; /* WO_SEG_REC or WO_SEG_FIELDS */
	uint32_t nrails, nsegs;
	struct wo_rail *rails;
	struct wo_segment *segs;
	uint32_t norder; /* segments in some rail's chain */
	uint32_t *order;
};

/*
 * RC_TRUNCATED: shorter than its 16-byte header; RC_NOMEM. Otherwise RC_OK: every whole
 * spline and segment the object holds (at most the claimed counts); links read in the form
 * most of them fit (offsets or indices, docs/worlds.md "SplineData"); each rail's chain
 * walked from its head along next links, iteratively, each segment in at most one chain: a
 * loop or a segment taken twice ends the chain with one diag line (WO_F_CYCLE / WO_F_LINK).
 */
enum rc wo_spline_parse(const uint8_t *p, size_t n, struct wo_splines *out, struct diag *d);
void wo_spline_free(struct wo_splines *s);

struct wo_rail_in { /* a polyline for the writer */
	uint64_t guid, guid_local;
	uint32_t instance;
	uint32_t npoints; /* segments = npoints - 1 (none below 2 points) */
	const float (*points)[3];
};
/* DUMB's layout: header, spline headers, 0x90-byte linear segments (basis row 0 = end - start,
 * row 3 = start, inverse x = 1 / length), links as byte offsets, 0 = none. Deterministic. */
enum rc wo_spline_write(const struct wo_rail_in *v, uint32_t n, struct buf *out);

/* ---- ClusteredMesh: collision ---- */

#define WO_CM_HDR	0x60u
#define WO_KD_HDR	0x30u
#define WO_KD_NODE	0x20u
#define WO_CL_HDR	0x10u
#define WO_KD_BRANCH	0xFFFFFFFFu /* NodeRef content of a branch child */
#define WO_CMF_20BIT	0x0004u	    /* ClusterParams flag: KD entries keep 20 bits of offset */
#define WO_CMF_ONESIDED 0x0010u

/* Unit byte 0: type in the low 4 bits, then what follows the vertex indices. */
#define WO_UNIT_OLDTRI	  0u
#define WO_UNIT_TRI	  1u
#define WO_UNIT_QUAD	  2u
#define WO_UNIT_TRILIST	  3u
#define WO_UNIT_EDGEANGLE 0x20u
#define WO_UNIT_GROUPID	  0x40u
#define WO_UNIT_SURFACEID 0x80u

/* Surface id: audio bits 0-6, physics bits 7-11, pattern bits 12-15. */
static inline void wo_surface_split(uint16_t id, uint8_t *audio, uint8_t *physics, uint8_t *pattern)
{
	*audio = id & 0x7F;
	*physics = (id >> 7) & 0x1F;
	*pattern = (id >> 12) & 0x0F;
}
static inline uint16_t wo_surface_make(unsigned audio, unsigned physics, unsigned pattern)
{
	return (uint16_t)((audio & 0x7F) | (physics & 0x1F) << 7 | (pattern & 0x0F) << 12);
}

struct wo_cluster {   /* the 16-byte cluster header, and what the walk found */
	uint32_t off; /* from the mesh's start */
	uint16_t unit_count, unit_data_size, unit_data_start, normal_start, total_size;
	uint8_t vertex_count, normal_count, compression; /* 0 float, 1 16-bit, 2 32-bit */
	int32_t base[3];	       /* 16-bit mode: the signed base of the unsigned offsets */
	uint32_t units_off;	       /* first unit byte, from the mesh's start */
	uint32_t units_len;	       /* unit bytes that lie in the object */
	uint32_t tri_first, tri_count; /* its triangles in the mesh's numbering */
	uint32_t units_read;	       /* whole units walked (trilists included) */
	bool bad;		       /* vertices or units out of the object: no triangles */
};

struct wo_cmesh {
	/* header, 0x60 bytes (DUMB, SFFD detail/fpu/clusteredmesh.h) */
	float bmin[4], bmax[4];
	uint32_t num_tag_bits, num_volumes, agg_flags;
	uint32_t kd_off, clusters_off; /* from the mesh's start */
	float granularity;
	uint16_t cm_flags;
	uint8_t group_id_size, surface_id_size;
	uint32_t num_clusters, max_clusters, num_units, max_units, size_of_this;
	uint16_t default_group, default_surface;
	uint8_t default_edge;
	uint32_t cluster_tag_bits;
	/* KD-tree: header and what the walk found */
	uint32_t kd_branch_off, kd_nodes, kd_entries;
	uint32_t kd_reached, kd_leaf_entries; /* branch nodes reached; entries in their leaves */
	bool kd_cycle;
	/* clusters and triangles */
	uint32_t ncl;
	struct wo_cluster *cl;
	uint32_t ntris;	  /* triangles of all clusters (a quad is two) */
	uint32_t skipped; /* trilist units passed over (RW no longer reads them) */
	uint8_t *data;	  /* a copy of the object: triangles decode from it on demand */
	size_t size;
};

struct wo_tri {
	float v[3][3]; /* world space */
	uint16_t surface, group;
	uint32_t cluster;
	bool bad; /* a vertex index past the cluster's vertices, or a vertex not finite: v is 0 */
};

/*
 * RC_TRUNCATED: shorter than its 0x60-byte header; RC_NOMEM. Otherwise RC_OK: the clusters
 * the pointer table and the object hold (at most the claimed count), each one's units walked
 * to count its triangles; the KD-tree walked iteratively with a visited mark per branch node
 * (a cycle is one line and sets kd_cycle), leaf entries checked against the clusters. The
 * object is copied; free with wo_cmesh_free.
 */
enum rc wo_cmesh_parse(const uint8_t *p, size_t n, struct wo_cmesh *out, struct diag *d);
void wo_cmesh_free(struct wo_cmesh *m);
/* Heap a parsed mesh holds (its copy of the object and the clusters), for a cache budget. */
size_t wo_cmesh_heap(const struct wo_cmesh *m);

/* Triangles first .. first + count - 1 (clamped to ntris) into out; returns how many. A unit's
 * triangles in order: a triangle (v0 v1 v2), a quad (v0 v1 v2) and (v3 v2 v1). */
uint32_t wo_cmesh_tris(const struct wo_cmesh *m, uint32_t first, uint32_t count,
		       struct wo_tri *out);

struct wo_surface_count {
	uint16_t id;
	uint32_t tris;
};
/* Triangles per surface id, ascending id, into a fresh array (*v, *n). Bad triangles count. */
enum rc wo_cmesh_surfaces(const struct wo_cmesh *m, struct wo_surface_count **v, uint32_t *n);

struct wo_tri_in {
	float v[3][3];
	uint16_t surface;
};
/*
 * One simple valid layout (docs/worlds.md, "ClusteredMesh"): clusters of at most 84
 * triangles, each vertex stored once per triangle; 16-bit vertices (the cluster's minimum as
 * base, unsigned offsets) when granularity > 0 and the cluster's range fits, else 32-bit,
 * else floats (granularity 0: floats always); 9-byte units (triangle, edge angles 0x1F,
 * 2-byte surface id); a KD-tree of one branch per cluster but the last, each splitting off
 * one cluster. Deterministic. RC_INVAL for a non-finite vertex or granularity.
 */
enum rc wo_cmesh_write(const struct wo_tri_in *t, uint32_t n, float granularity, struct buf *out);

/* ---- CollisionModelData (0x00EB000A), 20 bytes (DUMB) ---- */

struct wo_cmodel {
	uint32_t volume;     /* reference to the bounding Volume (0x00080001) */
	uint32_t num_meshes; /* 0xFFFFFFFF: meshes_off is itself a reference */
	uint32_t meshes_off;
	uint32_t first; /* the first mesh-table word (at 0x0C) */
};
/* RC_TRUNCATED below 16 bytes. */
enum rc wo_cmodel_parse(const uint8_t *p, size_t n, struct wo_cmodel *out);

#endif
