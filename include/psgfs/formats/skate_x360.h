/*
 * Xbox 360 renderengine values (docs/xbox360.md, "Models"): the vertex format codes vertex
 * descriptor elements carry, the Xenon element types (numbered differently from PS3's), the
 * Direct3D usages, the primitive and index-buffer values, the object sizes, and their names.
 * The decoders are the table skate_platform_x360 (skate_platform.h).
 */
#ifndef PSGFS_SKATE_X360_H
#define PSGFS_SKATE_X360_H

#include <stdbool.h>
#include <stdint.h>

/* Vertex format codes (renderengine::VertexFormat): bits 0-5 the Xenos vertex format, 6-7 the
 * GPU byte swap, 8 signed, 9 integer (not normalised), the upper bits the component routing. */
#define SX360_FMT_FLOAT1    0x002C83A4u
#define SX360_FMT_FLOAT2    0x002C23A5u
#define SX360_FMT_FLOAT3    0x002A23B9u
#define SX360_FMT_FLOAT4    0x001A23A6u
#define SX360_FMT_FLOAT16_2 0x002C235Fu
#define SX360_FMT_FLOAT16_4 0x001A2360u
#define SX360_FMT_SHORT2    0x002C2359u
#define SX360_FMT_SHORT4    0x001A235Au
#define SX360_FMT_SHORT2N   0x002C2159u
#define SX360_FMT_SHORT4N   0x001A215Au
#define SX360_FMT_USHORT2N  0x002C2059u
#define SX360_FMT_USHORT4N  0x001A205Au
#define SX360_FMT_UBYTE4    0x001A2286u
#define SX360_FMT_UBYTE4N   0x001A2086u
#define SX360_FMT_DEC3N	    0x002A2187u
#define SX360_FMT_HEND3N    0x002A2190u
#define SX360_FMT_DHEN3N    0x002A2191u
#define SX360_FMT_UNUSED    0xFFFFFFFFu

/* renderengine::VertexDescriptor::ElementType on Xbox 360. */
enum skate_x360_etype {
	SX360_ET_NA = 0x00,
	SX360_ET_XYZ = 0x01,
	SX360_ET_XYZRHW = 0x02,
	SX360_ET_NORMAL = 0x03,
	SX360_ET_VERTEXCOLOR = 0x04,
	SX360_ET_PRELIT = 0x05,
	SX360_ET_TEX0 = 0x06, /* TEX0..TEX7 = 0x06..0x0D */
	SX360_ET_INDICES = 0x0E,
	SX360_ET_WEIGHTS = 0x0F,
	SX360_ET_XYZ2 = 0x10,
	SX360_ET_NORMAL2 = 0x11,
	SX360_ET_XZ = 0x12,
	SX360_ET_Y = 0x13,
	SX360_ET_Y2 = 0x14,
	SX360_ET_TANGENT = 0x15,
	SX360_ET_BINORMAL = 0x16,
	SX360_ET_SPECULAR = 0x17,
	SX360_ET_FOG = 0x18,
	SX360_ET_PSIZE = 0x19,
	SX360_ET_INDICES2 = 0x1A,
	SX360_ET_WEIGHTS2 = 0x1B,
};

/* Direct3D declaration usages (the element's `usage` byte). */
enum skate_x360_usage {
	SX360_USAGE_POSITION = 0,
	SX360_USAGE_BLENDWEIGHT = 1,
	SX360_USAGE_BLENDINDICES = 2,
	SX360_USAGE_NORMAL = 3,
	SX360_USAGE_PSIZE = 4,
	SX360_USAGE_TEXCOORD = 5,
	SX360_USAGE_TANGENT = 6,
	SX360_USAGE_BINORMAL = 7,
	SX360_USAGE_TESSFACTOR = 8,
	SX360_USAGE_POSITIONT = 9,
	SX360_USAGE_COLOR = 10,
	SX360_USAGE_FOG = 11,
	SX360_USAGE_DEPTH = 12,
	SX360_USAGE_SAMPLE = 13,
};

#define SX360_PRIM_TRIANGLELIST 4u	    /* D3DPT_TRIANGLELIST */
#define SX360_IB_INDEX32	0x80000000u /* in D3DResource.Common: 32-bit indices */
#define SX360_IB_ENDIAN_SHIFT	29	    /* Common bits 29-30: the GPU byte swap */
#define SX360_FETCH_VERTEX	3u	    /* vertex fetch constant dword 0 bits 0-1 */

#define SX360_VDES_HDR	16u /* VertexDescriptor header, then 16-byte elements */
#define SX360_VDES_ELEM 16u
#define SX360_VB_SIZE	0x28u /* D3DVertexBuffer (0x20), m_bufferSize, m_type */
#define SX360_IB_SIZE	0x24u /* D3DIndexBuffer (0x20), m_numIndices */
#define SX360_DIP_SIZE	16u   /* primType, baseVertexIndex, startIndex, indexCount */

/* "FLOAT3", "SHORT4N", ... for every code of the renderengine enum; NULL for others. */
const char *skate_x360_format_name(uint32_t code);
/* Whether psgfs decodes vertices stored in this format. */
bool skate_x360_format_decoded(uint32_t code);
/* Bytes an element of this format occupies (every code of the enum), 0 when unknown. */
unsigned skate_x360_format_size(uint32_t code);
/* "XYZ", "TEX0", "INDICES", ... "NA"; else "TYPE_0xNN" written into buf. */
const char *skate_x360_etype_name(uint8_t type, char buf[16]);
/* "POSITION", "BLENDWEIGHT", ...; else "USAGE_N" written into buf. */
const char *skate_x360_usage_name(uint8_t usage, char buf[16]);

#endif
