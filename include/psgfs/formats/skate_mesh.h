/*
 * Skate 3 skeletons, bone palettes, meshes and skin (docs/skate-objects.md, "Vertex
 * descriptor", "RenderOptiMeshData", "RenderModelData", "Skeleton and hierarchy";
 * docs/rw4-arena.md, "References inside objects") and the derived Unreal .psk.
 *
 * Layers: object decoders over one object's bytes (per platform: skate_platform.h), a
 * whole-arena "scene" (structure only, no vertex bytes), on-demand vertex/skin/triangle decode
 * of one mesh, text renderers (src/tree/psg/view_psg_mesh.c) and the PSK export. Nothing here
 * trusts a count, offset or index; problems are diag lines and broken meshes keep ok == false.
 *
 * Conventions (stated once, used everywhere):
 * - Matrices are stored row-major, row-vector convention: rows x/y/z axis, translation in
 *   row 3 (p' = p * M). The inverse bind pose (IBP) is as stored; bind = inverse(IBP), so the
 *   bind's rows are the bone's axes in model space and row 3 its origin.
 * - Quaternions are x y z w, unit, w >= 0, standard right-handed math with column vectors:
 *   q rotates a bone-local vector into model space (its matrix has the bone axes as columns).
 * - Model space is taken as Y-up, right-handed. Inferred: the PSG writers (PsgBuilder, the
 *   GLB converters) copy glTF (Y-up, right-handed, counter-clockwise front faces)
 *   positions and index order into PSGs unchanged; no real skinned file was available.
 * - Triangles are shown as stored (a b c); they are taken as counter-clockwise front faces.
 *   The PSK gets (a c b): PSK triangles are clockwise (docs/psk-psa.md, "Coordinates and winding").
 * - PSK space is right-handed, so no mirroring. zup = true rotates everything +90 degrees
 *   about X ((x, y, z) -> (x, -z, y)): points, bone positions and rotations alike.
 */
#ifndef PSGFS_SKATE_MESH_H
#define PSGFS_SKATE_MESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <math.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"

/* ---- vertex elements, platform-neutral (docs/skate-objects.md, "Vertex descriptor") ---- */

/* What an element is for. */
enum skate_usage {
	SKATE_USAGE_POSITION,
	SKATE_USAGE_NORMAL,
	SKATE_USAGE_TANGENT,
	SKATE_USAGE_BINORMAL,
	SKATE_USAGE_COLOR,
	SKATE_USAGE_SPECULAR,
	SKATE_USAGE_BLEND_WEIGHTS,
	SKATE_USAGE_BLEND_INDICES,
	SKATE_USAGE_TEXCOORD, /* set number in skate_elem.set */
	SKATE_USAGE_OTHER,    /* an element type the platform does not name */
};

/* How an element's components are stored. */
enum skate_ctype {
	SKATE_CT_S16,
	SKATE_CT_U8,
	SKATE_CT_F16,
	SKATE_CT_F32,
	/* One 32-bit word: x bits 0-10 / 1023, y bits 11-21 / 1023, z bits 22-31 / 511, each
	 * sign-extended (signed normalised). */
	SKATE_CT_S11_11_10,
	SKATE_CT_U16,
	/* Four u8 in one 32-bit word read in the element's byte order, x in bits 0-7 (on a
	 * big-endian platform the last byte in memory is x). */
	SKATE_CT_U8_WORD,
	/* One 32-bit word: x bits 0-9, y bits 10-19, z bits 20-29, each / 511 sign-extended;
	 * bits 30-31 (w) ignored. */
	SKATE_CT_S10_10_10,
	/* One 32-bit word: x bits 0-9 / 511, y bits 10-20 / 1023, z bits 21-31 / 1023,
	 * sign-extended. */
	SKATE_CT_S10_11_11,
};

/*
 * One vertex element in neutral terms. Decoded value = stored value / divisor, where the
 * stored value is the integer, or the float for F16/F32 (S11_11_10: the already normalised
 * field). The divisor is the element's scale written as 1 / scale so that results stay
 * bit-identical to the formats' definitions (s16 / 32767, u8 / 255).
 */
struct skate_elem {
	uint8_t usage;		 /* enum skate_usage */
	uint8_t set;		 /* texture coordinate set for TEXCOORD, else 0 */
	uint8_t ctype;		 /* enum skate_ctype */
	uint8_t count;		 /* components stored (1 for a packed word) */
	uint8_t n_out;		 /* floats it decodes to: count, or 3 for S11_11_10 */
	uint8_t size;		 /* bytes it occupies in the vertex */
	uint16_t offset;	 /* byte offset in the vertex */
	bool normalized;	 /* the stored integers map to [-1, 1] or [0, 1] */
	bool usable;		 /* known format, 1..4 components, inside the stride */
	uint8_t stored_type;	 /* element type number as stored (the platform's numbering) */
	float divisor;		 /* 1 = as stored */
	const char *format_name; /* the platform's name of the stored format ("S1", "UB256") */
	const char *scale_note;	 /* why the divisor is what it is ("bone units"), or NULL */
	bool name_has_count;	 /* format_name already says how many ("FLOAT3", "SHORT4N") */
};

/* "POSITION", "NORMAL", ..., "TEXCOORD", "OTHER". */
const char *skate_usage_name(uint8_t usage);
/* "s16", "u8", "f16", "f32", "s11_11_10", "u16", "u8 word", "s10_10_10", "s10_11_11". */
const char *skate_ctype_name(uint8_t ctype);
/* Decode element e of the vertex at p (e->size bytes there, byte order be) into n_out
 * floats. An unusable element writes nothing. */
void skate_elem_decode(const struct skate_elem *e, const uint8_t *p, bool be, float out[4]);
/* One line saying how an element is stored and scaled, for descriptor.txt and info.txt:
 * "S1x4 as s16/16384 (bone units)", "Fx3 as f32", "UBx4 as u8/255 (normalised)" (Xbox 360:
 * "SHORT4N as s16/16384 (bone units)"). */
void skate_elem_encoding(const struct skate_elem *e, char out[64]);

/* IEEE half (bits) to float, incl. subnormals, inf and nan (inline: vertex loops use it). */
static inline float skate_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1F, man = h & 0x3FF;

	if (exp == 0) /* zero and subnormals: man * 2^-24, exact in float */
		return f32_from_bits(sign | f32_bits((float)man * 0x1p-24f));
	if (exp == 31)
		return f32_from_bits(sign | f32_bits(man ? NAN : INFINITY));
	return f32_from_bits(sign | (exp + 112) << 23 | man << 13);
}
/* S11_11_10: x bits 0-10 / 1023, y bits 11-21 / 1023, z bits 22-31 / 511, sign-extended. */
void skate_cmp_decode(uint32_t v, float out[3]);
/* Any packed three-component ctype (S11_11_10, S10_10_10, S10_11_11) of word v. */
void skate_packed3_decode(uint8_t ctype, uint32_t v, float out[3]);
/* Whether ctype is one 32-bit word holding three signed normalised fields. */
static inline bool skate_ctype_packed3(uint8_t ctype)
{
	return ctype == SKATE_CT_S11_11_10 || ctype == SKATE_CT_S10_10_10 ||
	       ctype == SKATE_CT_S10_11_11;
}

/* ---- PS3 GCM vertex formats and element types (docs/skate-objects.md, "Vertex descriptor") */

enum skate_vfmt {
	SKATE_VF_S1 = 1,   /* s16 / 32767 */
	SKATE_VF_F = 2,	   /* float32 */
	SKATE_VF_SF = 3,   /* float16 */
	SKATE_VF_UB = 4,   /* u8 / 255 */
	SKATE_VF_S32K = 5, /* raw s16 */
	SKATE_VF_CMP = 6,  /* signed 11:11:10 normalised, one u32 = x y z */
	SKATE_VF_UB256 = 7 /* raw u8 */
};

enum skate_etype {
	SKATE_ET_XYZ = 0,
	SKATE_ET_WEIGHTS = 1,
	SKATE_ET_NORMAL = 2,
	SKATE_ET_COLOR = 3,
	SKATE_ET_SPECULAR = 4,
	SKATE_ET_INDICES = 7,
	SKATE_ET_TEX0 = 8, /* TEX0..TEX5 = 8..13 */
	SKATE_ET_TANGENT = 14,
	SKATE_ET_BINORMAL = 15,
};

/* "S1" .. "UB256", NULL for an unknown value. */
const char *skate_vfmt_name(uint8_t vt);
/* Bytes per component (CMP: 4 for the whole vector), 0 when unknown. */
unsigned skate_vfmt_comp_size(uint8_t vt);
/* "XYZ", "WEIGHTS", "NORMAL", "VERTEXCOLOR", "SPECULAR", "INDICES", "TEX0".."TEX5",
 * "TANGENT", "BINORMAL", "NA" (0xFF), else "TYPE_0xNN" written into buf. */
const char *skate_etype_name(uint8_t type, char buf[16]);
/*
 * Decode one GCM-format element (big-endian) from p (the caller checked that compSize*ncomp
 * bytes are there). Returns the number of floats written to out (CMP: 3, else ncomp; 0 when
 * the format is unknown or ncomp is not 1..4). as_int: read the raw integer instead of the
 * normalised value for S1 and UB (blend indices stored as UB are byte values, not fractions).
 */
unsigned skate_velem_decode(uint8_t vt, unsigned ncomp, const uint8_t *p, bool as_int,
			    float out[4]);

/* ---- object decoders (one object's bytes) ----
 * The renderengine objects (VertexDescriptor, VertexBuffer, IndexBuffer, MeshHelper and the
 * DrawIndexedParameters inside RenderOptiMeshData) differ per platform: their decoders are
 * the platform tables of skate_platform.h. The skate_*_parse functions below are those of the
 * PS3 table (big-endian), kept for callers that have no arena at hand. */

struct skate_platform;

#define SKATE_MAX_ELEMS 16
/* One element as stored (PS3 layout; other platforms fill the fields they have). */
struct skate_velem {
	uint8_t vertex_type, num_components; /* PS3: GCM format, components; Xbox 360: 0, count */
	uint16_t stream, offset;
	uint16_t stride;
	uint8_t type;	     /* the platform's element type */
	uint32_t elem_class; /* 1 PERVERTEX, 2 PERINSTANCE, 0 NA */
	bool usable;	     /* known format, 1..4 components, offset + size <= stride */
	/* Xbox 360 only: the D3DDECLTYPE-style format code, D3D method, usage and usage index */
	uint32_t format;
	uint8_t method, usage, usage_index;
};
struct skate_vdes {
	uint32_t ref_count, types_flags;
	uint16_t num_streams, num_elements, freq_div, pad0;
	struct skate_velem el[SKATE_MAX_ELEMS];	 /* as stored */
	struct skate_elem elem[SKATE_MAX_ELEMS]; /* the same elements in neutral terms */
	unsigned n_el; /* elements present (<= num_elements, <= 16, <= what the object holds) */
	uint8_t trailer[8];
	bool has_trailer;
	uint8_t trailer_len; /* bytes of trailer[] present (8 when has_trailer) */
	uint16_t stride;     /* stream stride (PS3: of the first element; Xbox 360: the byte after
				the elements) */
	/* Xbox 360 only: m_d3dVertexDeclaration (a runtime pointer) and m_instanceStreams */
	uint32_t decl;
	uint16_t instance_streams;
};
/* idx only names the object in diag lines. RC_CORRUPT when the 16-byte header is
 * missing; elements that do not fit the stride are kept with usable = false (+ diag). */
enum rc skate_vdes_parse(const uint8_t *p, size_t n, uint32_t idx, struct skate_vdes *out,
			 struct diag *d);

struct skate_vb {
	uint32_t buffer, offset, buffer_size;
	uint8_t location, lock_flags;
	uint16_t pad0;
	/* Xbox 360 only: the Direct3D resource words, the vertex fetch constant and m_type */
	uint32_t d3d[6], fetch[2], vb_type;
};
enum rc skate_vb_parse(const uint8_t *p, size_t n, struct skate_vb *out);

struct skate_ib {
	uint32_t buffer, offset, num_indices, stride;
	uint8_t index_type, location, type, lock_flags;
	uint32_t width; /* bytes per index (2 or 4), 0 when the stride is unusable */
	/* Xbox 360 only: the Direct3D resource words, Address and Size */
	uint32_t d3d[6], address, size;
};
enum rc skate_ib_parse(const uint8_t *p, size_t n, struct skate_ib *out);

struct skate_mesh_helper {
	uint32_t n_ib, n_vb;
	uint32_t *refs; /* IB refs then VB refs, as many as the object holds */
	uint32_t n_refs;
};
enum rc skate_mesh_helper_parse(const uint8_t *p, size_t n, uint32_t idx,
				struct skate_mesh_helper *out, struct diag *d);
void skate_mesh_helper_free(struct skate_mesh_helper *m);

/* One island = one DrawIndexedParameters record. */
struct skate_island {
	uint32_t start, count; /* in indices */
	uint32_t prim;	       /* primitive code as stored */
	uint8_t pad[3];
	bool triangles;	     /* prim is the platform's triangle list */
	int32_t base_vertex; /* added to every index (Xbox 360 baseVertexIndex; 0 on PS3) */
};
struct skate_optimesh {
	float bbox[8];
	uint32_t num_verts, material, vdes, mesh_helper, ib, vb;
	uint32_t num_islands, island_areas, island_aabbs, draw_params;
	uint32_t num_remap, remap_table;
	uint32_t num_blend_shapes, blend_shape_table, blend_shape_names, pad;
	struct skate_island *islands; /* from draw_params (object-relative), capped by the object */
	uint32_t n_islands;
	uint16_t *remap; /* from +0x4C / +0x48, capped by the object */
	uint32_t n_remap;
};
/* RenderOptiMeshData of platform pl in byte order be. RC_CORRUPT when the 0x60-byte header
 * is missing. */
enum rc skate_optimesh_decode(const struct skate_platform *pl, const uint8_t *p, size_t n, bool be,
			      uint32_t idx, struct skate_optimesh *out, struct diag *d);
/* The same for PS3. */
enum rc skate_optimesh_parse(const uint8_t *p, size_t n, uint32_t idx, struct skate_optimesh *out,
			     struct diag *d);
void skate_optimesh_free(struct skate_optimesh *m);

struct skate_model_mesh {
	uint32_t mesh, material; /* stored references */
};
struct skate_model {
	float bbox[8];
	uint32_t ibp_off, mesh_table_off, name_table_off, name_list_off;
	uint16_t num_total_bones, num_meshes, num_bones, num_islands;
	uint32_t aabbs_off, areas_off;
	uint32_t n_bones; /* bones whose matrix and name-table slot lie inside the object */
	float (*ibp)[16]; /* n_bones, as stored */
	char **names;	  /* n_bones NUL-terminated copies ("" when the offset is bad) */
	struct skate_model_mesh *meshes;
	uint32_t n_meshes;
	float (*aabbs)[8]; /* island AABBs present */
	uint32_t n_aabbs;
	float (*areas)[4]; /* island areas present */
	uint32_t n_areas;
};
/* RenderModelData in byte order be. RC_CORRUPT when the 0x40-byte header is missing. */
enum rc skate_model_decode(const uint8_t *p, size_t n, bool be, uint32_t idx,
			   struct skate_model *out, struct diag *d);
/* The same, big-endian (PS3). */
enum rc skate_model_parse(const uint8_t *p, size_t n, uint32_t idx, struct skate_model *out,
			  struct diag *d);
void skate_model_free(struct skate_model *m);

/* ---- skeleton math (row-major, row-vector matrices as stored) ---- */

/* 4x4 inverse; false when singular. */
bool skate_mat4_inverse(const float m[16], float out[16]);
/*
 * Split a row-vector bind matrix into translation (row 3) and a unit quaternion (w >= 0).
 * Returns true when the 3x3 part is a rotation within tol (orthonormal rows, det +1); else
 * the rotation comes from Gram-Schmidt-orthonormalised rows and *err holds the deviation.
 */
bool skate_decompose(const float bind[16], float t[3], float q[4], float tol, float *err);
void skate_quat_mul(const float a[4], const float b[4], float out[4]);
void skate_quat_rotate(const float q[4], const float v[3], float out[3]);
/* Standard right-handed quaternion of a column-vector rotation matrix r[row][col]. */
void skate_quat_from_mat3(const float r[3][3], float q[4]);

/* ---- scene: the whole arena's skeleton and meshes (structure only) ---- */

#define SKATE_NONE	UINT32_MAX
#define SKATE_RIGID_TOL 1e-3f

struct skate_bone {
	char *name;
	float ibp[16];	/* as stored */
	float bind[16]; /* inverse(ibp); identity when ibp is singular */
	float t[3];	/* bind translation (model space) */
	float q[4];	/* bind rotation x y z w */
	bool invertible;
	bool rigid;	 /* no scale/shear beyond SKATE_RIGID_TOL */
	float rigid_err; /* largest deviation found */
	int32_t parent;	 /* -1 = root */
};

struct skate_scene_mesh {
	bool ok;	/* vertices, positions and indices can be decoded */
	uint32_t model; /* dict index of the RenderModelData listing it, SKATE_NONE when unlisted */
	uint32_t table_index;
	/* dictionary indices, SKATE_NONE when absent or unresolved */
	uint32_t optimesh, vdes, vb, ib, mesh_helper, vb_res, ib_res, material_obj;
	uint32_t material_off;
	char *material;	     /* resolved material name or "material_NN" */
	bool material_named; /* name came from the RenderMaterialData */
	struct skate_vdes desc;
	bool has_desc;
	uint16_t stride;
	uint32_t vertex_count;
	uint64_t vb_start;		   /* absolute file offset of vertex 0 */
	uint32_t index_count, index_width; /* width 2 or 4 (0 when unusable) */
	uint64_t ib_start;		   /* absolute file offset of index 0 */
	uint32_t indices_avail;		   /* indices actually inside the base resource */
	struct skate_island *islands;
	uint32_t n_islands;
	uint16_t *palette_raw; /* remap table as stored */
	int32_t *palette;      /* global bone per slot, -1 = out of range (dropped) */
	uint32_t n_palette;
	bool skinned; /* has INDICES or WEIGHTS elements */
	int pos_elem; /* the position element in desc.elem, -1 */
	/* How positions are stored and scaled, e.g. "S1x4 as s16/16384 (bone units)" or
	 * "Fx3 as f32" (skate_elem_encoding); "" without a position element. */
	char pos_encoding[64];
	uint64_t tri_estimate; /* raw triples: sum of usable island counts / 3 (= tri_first[n]) */
	/* tri_first[i] = raw triples before island i, n_islands + 1 entries. An island is usable
	 * when it is a triangle list starting inside the available indices; it holds
	 * min(count, indices_avail - start) / 3 raw triples, in index order. */
	uint64_t *tri_first;
};

/* ---- the built-in Skate skater rig (skate_rig.c; docs/skate-objects.md, "Skater rig",
 * "Skeleton and hierarchy") ---- */

#define SKATE_RIG_BONES 131
struct skate_rig_bone {
	const char *name; /* upper case as in the source table */
	int16_t parent;	  /* index into skate_rig (always smaller), -1 = root */
};
extern const struct skate_rig_bone skate_rig[SKATE_RIG_BONES];
/* Index of a rig bone by name, compared case-insensitively; -1 when it is none. */
int32_t skate_rig_find(const char *name);

/*
 * Where the bone parents come from. TSV: the hierarchy file. RIG: no file, and the bone names
 * match the skater rig well enough: at least SKATE_RIG_MIN_MATCH bones and at least half of
 * them are rig bones; each matched bone hangs from its nearest rig ancestor present in the
 * model (a root when none is), every other bone from the first root. DEFAULT: every bone but
 * 0 hangs from bone 0. Whatever the source, the parents are checked to be acyclic.
 */
enum skate_hierarchy { SKATE_HIER_DEFAULT, SKATE_HIER_TSV, SKATE_HIER_RIG };
#define SKATE_RIG_MIN_MATCH 3

struct skate_scene {
	const struct skate_platform *platform; /* decoders of the arena's platform */
	struct skate_bone *bones;
	uint32_t n_bones;
	uint32_t skeleton_model; /* dict index of the first RenderModelData, SKATE_NONE if none */
	enum skate_hierarchy hierarchy; /* DEFAULT: every bone but 0 hangs from bone 0 */
	uint32_t hier_matched;		/* RIG: bones named as rig bones; TSV: bones listed */
	uint32_t n_models;
	uint32_t n_nonrigid;
	struct skate_scene_mesh *meshes;
	size_t n_meshes;
	uint64_t total_vertices, total_triangles; /* of ok meshes (triangles estimated) */
	size_t n_problems;			  /* diag lines produced by skate_scene_load */
};

/*
 * Build the scene: skeleton from the first RenderModelData in
 * dictionary order, meshes from every model's mesh table (model order, table order), then every
 * RenderOptiMeshData no model lists. hierarchy_tsv: NULL or the text of "bone<TAB>parent" rows
 * by name (header line optional; empty parent, "-", "-1" or "none" = root); unknown names and
 * cycles are reported and fall back to bone 0. Without it, the built-in skater rig when the
 * names match it (enum skate_hierarchy). RC_UNSUPPORTED for arenas of a platform without a
 * table, RC_NOMEM; broken pieces are diag lines, never failures.
 */
enum rc skate_scene_load(const struct src *s, const struct arena *a, const char *hierarchy_tsv,
			 struct skate_scene **out, struct diag *diag);
void skate_scene_free(struct skate_scene *sc);
/* Where the hierarchy came from, one line without newline: "built-in Skate skater rig: 57 of
 * 60 bones matched", "from the hierarchy file: 14 of 14 bones listed" or "not in the PSG: every
 * bone but 0 hangs from bone 0". */
void skate_hierarchy_text(const struct skate_scene *sc, char out[96]);
size_t skate_scene_bytes(const struct skate_scene *sc);
static inline uint32_t skate_scene_bone_count(const struct skate_scene *sc)
{
	return sc->n_bones;
}
static inline size_t skate_scene_mesh_count(const struct skate_scene *sc)
{
	return sc->n_meshes;
}

/* ---- one mesh's decoded vertices, skin and triangles ---- */

struct skate_attr {
	struct skate_elem e; /* how it is stored and scaled */
	/* The element's usage in the PS3 numbering (skate_etype), whatever the platform, for
	 * renderers written against it. */
	uint8_t type;
	uint8_t n; /* floats per vertex (= e.n_out) */
	float *v;  /* n_verts * n; blend indices hold the raw integers */
};
struct skate_influence {
	uint32_t bone; /* global bone */
	float weight;
};
struct skate_mesh_data {
	uint32_t n_verts;
	struct skate_attr attr[SKATE_MAX_ELEMS]; /* usable elements in descriptor order */
	unsigned n_attr;
	int pos, normal, tangent, binormal, color, weights, indices; /* attr index or -1 */
	int tex[6];						     /* TEX0..TEX5, -1 absent */
	/* skin: <= 4 influences per vertex, zero weights dropped, normalised to sum 1 */
	uint8_t *n_infl;
	struct skate_influence (*infl)[4];
	uint32_t n_unweighted; /* skinned vertices left without any influence */
	/* triangles in island order; island index per triangle */
	uint32_t (*tri)[3];
	uint32_t *tri_island;
	size_t n_tri;
};

/* ---- streaming: any range of one mesh, in bounded memory ----
 * The skin rules (shared by everything below and skate_mesh_decode): blend indices go
 * through the palette (slots outside it, or naming a dropped bone, are counted and skipped);
 * zero and non-finite weights are dropped; three weights with four indices give the fourth
 * 1 - sum (inferred D3D/RW style); influences on the same bone merge, at most 4 are kept, and
 * they are normalised to sum 1; a skinned vertex whose weights add up to nothing keeps no
 * influence (unweighted). Static meshes (no blend elements) get weight 1 on palette[0], else
 * bone 0; with no skeleton at all they get none. */

#define SKATE_VBATCH_MAX   4096u      /* vertices per skate_mesh_read_vertices call ... */
#define SKATE_VBATCH_BYTES (4u << 20) /* ... and vertex bytes read per call */

/* Decoded vertices [first, first + count) of one mesh. Reuse one across calls. */
struct skate_vbatch {
	/* Set by the caller: usages to decode as a mask of 1 << SKATE_USAGE_*; 0 = all. The
	 * skin is computed only when blend indices or weights are wanted (else no influences);
	 * elements not wanted keep their place in elem[] but their v[] is not filled. */
	uint32_t want;
	uint32_t first, count;
	unsigned n_elem;			 /* usable elements in descriptor order */
	struct skate_elem elem[SKATE_MAX_ELEMS]; /* their descriptions */
	float *v[SKATE_MAX_ELEMS];		 /* count * elem[k].n_out floats each */
	uint8_t *n_infl;			 /* count: influences (0..4) */
	struct skate_influence (*infl)[4];	 /* count */
	bool *unweighted;			 /* count: skinned, yet no usable weight */
	/* this call's problems (skate_mesh_stats_build turns them into diag lines) */
	uint32_t n_unweighted;
	uint64_t n_bad_slots;	   /* blend indices outside the palette */
	uint32_t first_bad_vertex; /* of the first one, when n_bad_slots */
	float first_bad_slot;
	/* private */
	uint8_t *raw;
	float *vals;
	size_t raw_cap, vals_cap;
	uint32_t cap; /* vertices the rows hold */
};
void skate_vbatch_init(struct skate_vbatch *b);
void skate_vbatch_free(struct skate_vbatch *b);
/* Vertices one call may return for this mesh: min(SKATE_VBATCH_MAX, SKATE_VBATCH_BYTES /
 * stride), at least 1. */
uint32_t skate_vbatch_cap(const struct skate_scene_mesh *m);
/*
 * Decode vertices [first, first + count) of mesh `mesh`: every usable element as floats (by
 * its neutral description) and the skin of each vertex. Reads exactly those vertices' bytes
 * (one read of count * stride) and allocates nothing that grows with the mesh. Fewer than
 * count come back when count exceeds skate_vbatch_cap or the mesh ends: b->count says how
 * many. RC_NOENT: no such mesh; RC_CORRUPT: mesh not ok; RC_BOUNDS: first past the vertex
 * count; RC_IO; RC_NOMEM. No diag lines (see skate_mesh_stats_build).
 */
enum rc skate_mesh_read_vertices(const struct src *s, const struct arena *a,
				 const struct skate_scene *sc, size_t mesh, uint32_t first,
				 uint32_t count, struct skate_vbatch *b);

#define SKATE_TBATCH_MAX 4096u /* raw triples per skate_mesh_read_triangles call */

/* One raw index triple: the vertices it names (index value plus the island's base vertex).
 * valid: all three are below the vertex count. */
struct skate_tri {
	uint32_t v[3];
	uint32_t island;
	bool valid;
};
/* Raw triples [first, first + count) of one mesh. Reuse one across calls. */
struct skate_tbatch {
	uint64_t first;
	uint32_t count;
	struct skate_tri *tri; /* count */
	uint32_t n_invalid;
	/* of the first invalid triple: its last out-of-range index value and its triangle
	 * number in the index buffer (index position / 3) */
	uint32_t first_bad_value;
	uint64_t first_bad_triangle;
	/* private */
	uint8_t *raw;
};
void skate_tbatch_init(struct skate_tbatch *b);
void skate_tbatch_free(struct skate_tbatch *b);
/*
 * Raw index triples [first_raw, first_raw + count) of mesh `mesh`, in island order (numbered
 * by tri_first), count <= SKATE_TBATCH_MAX (more is cut; b->count says how many). Reads only
 * those indices. Errors as skate_mesh_read_vertices (RC_BOUNDS: first_raw past the triples).
 */
enum rc skate_mesh_read_triangles(const struct src *s, const struct arena *a,
				  const struct skate_scene *sc, size_t mesh, uint64_t first_raw,
				  uint32_t count, struct skate_tbatch *b);

#define SKATE_STATS_STEP 1024u /* restart table spacing, in raw triples or vertices */

/* Whole-mesh counts from one streaming pass, for sizes and seeks of rendered files. */
struct skate_mesh_stats {
	uint32_t n_verts;
	uint64_t n_raw_tri;	/* = tri_estimate */
	uint64_t n_valid_tri;	/* triples with all indices below n_verts */
	uint64_t n_influences;	/* sum of influences per vertex (skin.tsv rows) */
	uint64_t n_psk_weights; /* sum of max(1, influences) per vertex (PSK RAWWEIGHTS rows) */
	uint32_t n_unweighted;
	uint64_t n_bad_slots;
	bool has_bounds;	      /* n_verts > 0 */
	float pos_min[3], pos_max[3]; /* of x, y, z of the position element (missing ones 0) */
	/* restart tables: entry k counts what precedes raw triple / vertex k * SKATE_STATS_STEP;
	 * n_* entries = total / SKATE_STATS_STEP + 1 */
	uint64_t *tri_valid_before;
	uint64_t *infl_before;
	uint64_t *psk_weights_before;
	size_t n_tri_restart, n_vert_restart;
};
/*
 * One pass over the mesh's vertex and index bytes in 128 KiB reads; memory: that buffer, a
 * 64 KiB cache, and the restart tables (16 bytes per 1024 vertices, 8 per 1024 triples; the
 * only part that grows with the mesh). Appends the same diag lines
 * skate_mesh_decode does (blend indices outside the palette, unweighted vertices, triangles
 * past the vertex count). Errors as skate_mesh_read_vertices.
 */
enum rc skate_mesh_stats_build(const struct src *s, const struct arena *a,
			       const struct skate_scene *sc, size_t mesh,
			       struct skate_mesh_stats **out, struct diag *d);
void skate_mesh_stats_free(struct skate_mesh_stats *st);

/* ---- one mesh decoded whole (superseded by the streaming calls above) ---- */

/*
 * Decode mesh `mesh` of the scene with the skin rules above. Indices past the vertex count
 * drop their triangle (diag); islands past numIndices are clamped (diag at scene load).
 * At most 2^26 vertices (RC_UNSUPPORTED beyond). RC_CORRUPT when the mesh is not ok, RC_IO,
 * RC_NOMEM.
 */
enum rc skate_mesh_decode(const struct src *s, const struct arena *a, const struct skate_scene *sc,
			  size_t mesh, struct skate_mesh_data **out, struct diag *diag);
void skate_mesh_data_free(struct skate_mesh_data *md);
size_t skate_mesh_data_bytes(const struct skate_mesh_data *md);

#endif
