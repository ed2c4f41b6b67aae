/*
 * Encoders for the RW4 / Pegasus objects of a PS3 model arena (docs/skate-objects.md) and the
 * Xbox 360 renderengine objects (docs/xbox360.md, "Models"), shared by every PSG generator. Each
 * psgo_* writer serialises one object big-endian into dictionary slot `idx` of a builder (pass
 * PSGO_NEW to take the next index) and declares its dictionary-index reference fields with
 * psgb_ref, so shuffled arenas stay consistent. Reference fields take the stored value
 * (docs/rw4-arena.md, "References inside objects"): a dictionary index, a subreference value from
 * psgb_add_subref (0x00800000 | i), or 0 for null. Returns the slot index.
 */
#ifndef PSGFS_GEN_PSG_OBJECTS_H
#define PSGFS_GEN_PSG_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/gen/gen_psg.h"

#define PSGO_NEW UINT32_MAX

/* tAABB: min.xyzw, max.xyzw. */
struct psgo_aabb {
	float min[4], max[4];
};

/* VersionData. model = true: 16 bytes {25, 13, 0, 0}; false (textures): 8 bytes {25, 13}. */
uint32_t psgo_version(struct psg_builder *b, uint32_t idx, bool model);

/* Vertex element: GCM vertex type, components, byte offset, PS3 attribute type. */
struct psgo_vdes_elem {
	uint8_t vertex_type;	/* 1 S1, 2 F, 3 SF, 4 UB, 5 S32K, 6 CMP, 7 UB256 */
	uint8_t num_components; /* 1..4 */
	uint8_t offset;		/* byte offset in the vertex */
	uint8_t type;		/* 0 XYZ, 1 WEIGHTS, 2 NORMAL, 7 INDICES, 8.. TEX0.. */
};
#define PSGO_VT_S1	 1
#define PSGO_VT_F	 2
#define PSGO_VT_SF	 3
#define PSGO_VT_UB	 4
#define PSGO_VT_S32K	 5
#define PSGO_VT_CMP	 6
#define PSGO_VT_UB256	 7
#define PSGO_ET_XYZ	 0
#define PSGO_ET_WEIGHTS	 1
#define PSGO_ET_NORMAL	 2
#define PSGO_ET_COLOR	 3
#define PSGO_ET_INDICES	 7
#define PSGO_ET_TEX0	 8
#define PSGO_ET_TANGENT	 14
#define PSGO_ET_BINORMAL 15
/* VertexDescriptor, one stream: typesFlags = OR of 1 << type, frequency = (1 << n) - 1,
 * elements (class PERVERTEX), trailer FF 00 FF 00 00 00 00 00. Size 16 + 8n + 8. */
uint32_t psgo_vdes(struct psg_builder *b, uint32_t idx, const struct psgo_vdes_elem *el, unsigned n,
		   uint16_t stride);

/* VertexBuffer {m_buffer = dict index of the BaseResource, 0, size, location 0} (16 bytes). */
uint32_t psgo_vertex_buffer(struct psg_builder *b, uint32_t idx, uint32_t base_res, uint32_t size);
/* IndexBuffer {buffer, 0, numIndices, stride, indexType (1 = u16 when stride 2, else 0),
 * 0, 0, 0} (20 bytes). */
uint32_t psgo_index_buffer(struct psg_builder *b, uint32_t idx, uint32_t base_res,
			   uint32_t num_indices, uint32_t stride);
/* MeshHelper {nIB, nVB, IB refs..., VB refs...}. */
uint32_t psgo_mesh_helper(struct psg_builder *b, uint32_t idx, const uint32_t *ibs, unsigned n_ib,
			  const uint32_t *vbs, unsigned n_vb);

/* PS3 DrawIndexedParameters (12 bytes), prim 5 = triangles; Xbox 360 (16 bytes), prim 4 =
 * triangles, with a base vertex. */
struct psgo_island {
	uint32_t start_index, index_count;
	uint32_t prim;
	int32_t base_vertex; /* Xbox 360 only */
};
struct psgo_optimesh {
	struct psgo_aabb bbox;	    /* w = 0 */
	uint32_t num_verts;	    /* 0 in real files */
	uint32_t material;	    /* ref: subref value to the tRMaterial, or 0 */
	uint32_t vdes, mesh_helper; /* refs (dictionary indices) */
	uint32_t ib, vb;	    /* refs (dictionary indices) */
	uint32_t island_areas;	    /* ref: subref value into RenderModelData */
	uint32_t island_aabbs;	    /* ref: subref value into RenderModelData */
	const struct psgo_island *islands;
	uint32_t n_islands;
	const uint16_t *remap; /* bone palette; static meshes use {0} */
	uint32_t n_remap;
	bool x360; /* Xbox 360 DrawIndexedParameters (16 bytes) */
};
/* RenderOptiMeshData; size align4(0x60 + 12*islands + 2*remap), 16*islands on Xbox 360. */
uint32_t psgo_optimesh(struct psg_builder *b, uint32_t idx, const struct psgo_optimesh *m);
size_t psgo_optimesh_size(uint32_t n_islands, uint32_t n_remap);

/* ---- Xbox 360 (docs/xbox360.md, "Models"; values in skate_x360.h) ---- */

/* Vertex element: format code, byte offset, Xenon element type, Direct3D usage and index. */
struct psgo_x360_elem {
	uint32_t format;
	uint16_t offset;
	uint8_t type;
	uint8_t usage, usage_index;
};
/* VertexDescriptor {declaration 0, typesFlags = OR of 1 << type, numElements, refCount 0,
 * instanceStreams 0, pad}, 16-byte elements (stream 0, method 0, class PERVERTEX), then the
 * stride byte and 7 zero bytes. */
uint32_t psgo_x360_vdes(struct psg_builder *b, uint32_t idx, const struct psgo_x360_elem *el,
			unsigned n, uint8_t stride);
/* VertexBuffer: Direct3D resource {Common 1, ReferenceCount 1, 0, 0, 0, BaseFlush 0xFFFF0000},
 * vertex fetch constant {type 3, address 0; byte swap 8in32, size in dwords}, m_bufferSize,
 * m_type 0 (0x28 bytes). Its data is the base resource in the row before it: add that first. */
uint32_t psgo_x360_vertex_buffer(struct psg_builder *b, uint32_t idx, uint32_t size);
/* IndexBuffer: Direct3D resource {Common 2 | 32-bit flag | byte swap (8in16 for u16, 8in32
 * for u32) << 29, 1, 0, 0, 0, 0xFFFF0000}, Address 0, Size, m_numIndices (0x24 bytes). */
uint32_t psgo_x360_index_buffer(struct psg_builder *b, uint32_t idx, uint32_t num_indices,
				uint32_t width);

/* RenderModelData mesh-table row. */
struct psgo_mesh_ref {
	uint32_t mesh;	   /* ref to the OptiMesh */
	uint32_t material; /* ref or 0 */
};
struct psgo_model {
	struct psgo_aabb bbox; /* w = 0 */
	uint16_t n_bones;
	uint16_t n_total_bones;	  /* 0 = n_bones */
	const float (*ibp)[16];	  /* n_bones row-major Matrix44 (NULL = identity) */
	const char *const *names; /* n_bones bone names */
	const struct psgo_mesh_ref *meshes;
	uint16_t n_meshes;
	const struct psgo_aabb *island_aabbs; /* n_islands, w = half diagonal */
	const float (*island_areas)[4];	      /* n_islands */
	uint16_t n_islands;
};
/* Object-relative offsets of a RenderModelData, computed before writing it so subreferences
 * to the island tables can be made first. */
struct psgo_model_layout {
	uint32_t ibp, mesh_table, name_table, names, aabbs, areas, size;
};
void psgo_model_layout(const struct psgo_model *m, struct psgo_model_layout *l);
uint32_t psgo_model(struct psg_builder *b, uint32_t idx, const struct psgo_model *m);

/* TableOfContents entry. object is a ref (dict index or subref value). */
struct psgo_toc_entry {
	const char *name; /* NULL = no name */
	uint32_t pad;	  /* the "garbage" word at +4 */
	uint64_t guid;
	uint32_t type;
	uint32_t object;
};
/* TOC: header, entries, type map (first occurrence) at the end; names (if any entry has one)
 * go after the entries and the names block is padded to 4 with zero bytes. */
uint32_t psgo_toc(struct psg_builder *b, uint32_t idx, const struct psgo_toc_entry *e, uint32_t n);

/* RenderMaterialData. */
struct psgo_channel {
	const char *shader_input;
	uint16_t flags;
	uint16_t image_channel; /* 0xFFFF */
	bool is_constants;	/* union holds constants[4] instead of guid/stream */
	float constants[4];
	uint64_t guid;
	const char *stream_name; /* NULL = 0 offset */
	uint32_t stream;	 /* ref or 0 */
};
struct psgo_material {
	uint32_t flags;
	const struct psgo_channel *ch;
	uint32_t n_ch;
};
/* Materials at 0x14 + 12k (subreference targets), channels after them, pooled strings
 * from pChannels + 32*numChannels, 16 zero bytes at the end. */
uint32_t psgo_material(struct psg_builder *b, uint32_t idx, const struct psgo_material *m,
		       uint32_t n);
/* Object-relative offset of tRMaterial k (for psgb_add_subref). */
static inline uint32_t psgo_material_offset(uint32_t k)
{
	return 0x14 + 12 * k;
}

/* InstanceData. */
struct psgo_instance {
	float matrix[16]; /* Matrix44Affine, row-major */
	struct psgo_aabb bbox;
	uint64_t guid, guid_local;
	uint8_t attrib[16];
	uint32_t rmodel, cmodel, embedded; /* refs */
	const char *name, *description, *component, *category;
};
/* Header {typeId, n, numStrings, 0x20, stringList}, instances from 0x20 (0x9C bytes each),
 * pooled strings, ends at the last string. */
uint32_t psgo_instance(struct psg_builder *b, uint32_t idx, uint32_t type_id_field,
		       const struct psgo_instance *in, uint32_t n);
static inline uint32_t psgo_instance_offset(uint32_t k)
{
	return 0x20 + 0x9C * k;
}

/* Geometry helpers (island boxes and areas as real files have them) over float xyz positions and
 * u16 or u32 indices (exactly one non-NULL). Triangle list [start, start+count). Out-of-range
 * indices are skipped. */
void psgo_island_bounds(const float (*pos)[3], uint32_t n_verts, const uint16_t *idx16,
			const uint32_t *idx32, uint32_t start, uint32_t count,
			struct psgo_aabb *box, float area[4]);
/* Plain box over all vertices, w = 0. */
void psgo_bounds(const float (*pos)[3], uint32_t n_verts, struct psgo_aabb *box);

/* ---- a one-mesh static model arena (the night sky, a district's fused model) ---- */

/* Its 16-byte vertex: F32x3 position, S1x2 texture coordinate (big-endian). */
void psgo_vertex16(uint8_t *p, const float pos[3], float u, float v);

/* Rows 0 VersionData, 1 RenderMaterialData, 2 InstanceData, 3 VB resource, 4 VertexBuffer,
 * 5 IB resource, 6 IndexBuffer, 7 OptimizedMesh, 8 VertexDescriptor, 9 MeshHelper,
 * 10 RenderModelData, 11 TableOfContents; one bone at identity, one mesh. */
struct psgo_static1 {
	const uint8_t *vb, *ib; /* nv psgo_vertex16 vertices; ni big-endian u16 indices */
	uint32_t nv, ni;
	struct psgo_aabb box;
	const struct psgo_island *islands;
	const struct psgo_aabb *island_aabbs;
	const float (*island_areas)[4];
	uint16_t n_islands;
	const char *bone;
	uint64_t toc_guid[4]; /* the TOC's material, model, mesh and instance */
	bool x360;
};
/* Its rows and the subreference values of its material, instance and island tables. */
struct psgo_static1_rows {
	uint32_t o[12];
	uint32_t s_mat, s_inst, s_areas, s_aabbs;
};
/* Reserves the rows (Xbox 360: its platform and GPU alignment first) and writes row 0; the
 * caller writes rows 1 and 2 (its material and instance), psgo_static1_finish the others. */
void psgo_static1_begin(struct psg_builder *b, const struct psgo_static1 *m,
			struct psgo_static1_rows *r);
void psgo_static1_finish(struct psg_builder *b, const struct psgo_static1 *m,
			 const struct psgo_static1_rows *r);

#endif
