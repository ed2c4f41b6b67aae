/*
 * The Xbox 360 platform table: vertex format codes, the Xenon element-type numbering and the
 * Xbox 360 layouts of VertexDescriptor, VertexBuffer, IndexBuffer and DrawIndexedParameters
 * (docs/xbox360.md, "Models"). Objects are big-endian as the arena says. Vertex and index data
 * are read big-endian too: the format codes tell the GPU to swap 16-bit components within
 * 16 bits and 32-bit ones within 32 bits, which makes every component a big-endian value in
 * memory order, and four u8 one big-endian word whose low byte is x.
 */
#include <stdio.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_platform.h"
#include "psgfs/formats/tex_platform.h"
#include "psgfs/formats/skate_x360.h"

/* One format code: its name, and how psgfs decodes it (ctype 0xFF: not decoded). */
struct x360_fmt {
	uint32_t code;
	const char *name;
	uint8_t ctype, count;
	bool normalized;
	float divisor;
};

#define NOT_DECODED 0xFF

static const struct x360_fmt x360_fmts[] = {
    {SX360_FMT_FLOAT1, "FLOAT1", SKATE_CT_F32, 1, false, 1.0f},
    {SX360_FMT_FLOAT2, "FLOAT2", SKATE_CT_F32, 2, false, 1.0f},
    {SX360_FMT_FLOAT3, "FLOAT3", SKATE_CT_F32, 3, false, 1.0f},
    {SX360_FMT_FLOAT4, "FLOAT4", SKATE_CT_F32, 4, false, 1.0f},
    {SX360_FMT_FLOAT16_2, "FLOAT16_2", SKATE_CT_F16, 2, false, 1.0f},
    {SX360_FMT_FLOAT16_4, "FLOAT16_4", SKATE_CT_F16, 4, false, 1.0f},
    {SX360_FMT_SHORT2, "SHORT2", SKATE_CT_S16, 2, false, 1.0f},
    {SX360_FMT_SHORT4, "SHORT4", SKATE_CT_S16, 4, false, 1.0f},
    {SX360_FMT_SHORT2N, "SHORT2N", SKATE_CT_S16, 2, true, 32767.0f},
    {SX360_FMT_SHORT4N, "SHORT4N", SKATE_CT_S16, 4, true, 32767.0f},
    {SX360_FMT_USHORT2N, "USHORT2N", SKATE_CT_U16, 2, true, 65535.0f},
    {SX360_FMT_USHORT4N, "USHORT4N", SKATE_CT_U16, 4, true, 65535.0f},
    {SX360_FMT_UBYTE4, "UBYTE4", SKATE_CT_U8_WORD, 4, false, 1.0f},
    {SX360_FMT_UBYTE4N, "UBYTE4N", SKATE_CT_U8_WORD, 4, true, 255.0f},
    {SX360_FMT_DEC3N, "DEC3N", SKATE_CT_S10_10_10, 1, true, 1.0f},
    {SX360_FMT_HEND3N, "HEND3N", SKATE_CT_S11_11_10, 1, true, 1.0f},
    {SX360_FMT_DHEN3N, "DHEN3N", SKATE_CT_S10_11_11, 1, true, 1.0f},
    /* the rest of the enum: named, not decoded */
    {0x002C83A1u, "INT1", NOT_DECODED, 0, false, 1.0f},
    {0x002C23A2u, "INT2", NOT_DECODED, 0, false, 1.0f},
    {0x001A23A3u, "INT4", NOT_DECODED, 0, false, 1.0f},
    {0x002C82A1u, "UINT1", NOT_DECODED, 0, false, 1.0f},
    {0x002C22A2u, "UINT2", NOT_DECODED, 0, false, 1.0f},
    {0x001A22A3u, "UINT4", NOT_DECODED, 0, false, 1.0f},
    {0x002C81A1u, "INT1N", NOT_DECODED, 0, false, 1.0f},
    {0x002C21A2u, "INT2N", NOT_DECODED, 0, false, 1.0f},
    {0x001A21A3u, "INT4N", NOT_DECODED, 0, false, 1.0f},
    {0x002C80A1u, "UINT1N", NOT_DECODED, 0, false, 1.0f},
    {0x002C20A2u, "UINT2N", NOT_DECODED, 0, false, 1.0f},
    {0x001A20A3u, "UINT4N", NOT_DECODED, 0, false, 1.0f},
    {0x00182886u, "D3DCOLOR", NOT_DECODED, 0, false, 1.0f},
    {0x001A2386u, "BYTE4", NOT_DECODED, 0, false, 1.0f},
    {0x001A2186u, "BYTE4N", NOT_DECODED, 0, false, 1.0f},
    {0x002C2259u, "USHORT2", NOT_DECODED, 0, false, 1.0f},
    {0x001A225Au, "USHORT4", NOT_DECODED, 0, false, 1.0f},
    {0x002A2287u, "UDEC3", NOT_DECODED, 0, false, 1.0f},
    {0x002A2387u, "DEC3", NOT_DECODED, 0, false, 1.0f},
    {0x002A2087u, "UDEC3N", NOT_DECODED, 0, false, 1.0f},
    {0x001A2287u, "UDEC4", NOT_DECODED, 0, false, 1.0f},
    {0x001A2387u, "DEC4", NOT_DECODED, 0, false, 1.0f},
    {0x001A2087u, "UDEC4N", NOT_DECODED, 0, false, 1.0f},
    {0x001A2187u, "DEC4N", NOT_DECODED, 0, false, 1.0f},
    {0x002A2290u, "UHEND3", NOT_DECODED, 0, false, 1.0f},
    {0x002A2390u, "HEND3", NOT_DECODED, 0, false, 1.0f},
    {0x002A2090u, "UHEND3N", NOT_DECODED, 0, false, 1.0f},
    {0x002A2291u, "UDHEN3", NOT_DECODED, 0, false, 1.0f},
    {0x002A2391u, "DHEN3", NOT_DECODED, 0, false, 1.0f},
    {0x002A2091u, "UDHEN3N", NOT_DECODED, 0, false, 1.0f},
    {0x00014C86u, "COLOR", NOT_DECODED, 0, false, 1.0f},
};

static const struct x360_fmt *fmt_lookup(uint32_t code)
{
	for (size_t i = 0; i < sizeof x360_fmts / sizeof x360_fmts[0]; i++)
		if (x360_fmts[i].code == code)
			return &x360_fmts[i];
	return NULL;
}

const char *skate_x360_format_name(uint32_t code)
{
	const struct x360_fmt *f = fmt_lookup(code);

	return f ? f->name : NULL;
}

bool skate_x360_format_decoded(uint32_t code)
{
	const struct x360_fmt *f = fmt_lookup(code);

	return f && f->ctype != NOT_DECODED;
}

unsigned skate_x360_format_size(uint32_t code)
{
	/* by the Xenos vertex format in bits 0-5 (Xenia xenos.h, VertexFormat) */
	switch (code & 0x3F) {
	case 6:	 /* k_8_8_8_8 */
	case 7:	 /* k_2_10_10_10 */
	case 16: /* k_10_11_11 */
	case 17: /* k_11_11_10 */
	case 25: /* k_16_16 */
	case 31: /* k_16_16_FLOAT */
	case 33: /* k_32 */
	case 36: /* k_32_FLOAT */
		return 4;
	case 26: /* k_16_16_16_16 */
	case 32: /* k_16_16_16_16_FLOAT */
	case 34: /* k_32_32 */
	case 37: /* k_32_32_FLOAT */
		return 8;
	case 57: /* k_32_32_32_FLOAT */
		return 12;
	case 35: /* k_32_32_32_32 */
	case 38: /* k_32_32_32_32_FLOAT */
		return 16;
	default:
		return 0;
	}
}

const char *skate_x360_etype_name(uint8_t type, char buf[16])
{
	static const char *const n[] = {
	    "NA",      "XYZ",	   "XYZRHW",   "NORMAL",  "VERTEXCOLOR", "PRELIT",   "TEX0",
	    "TEX1",    "TEX2",	   "TEX3",     "TEX4",	  "TEX5",	 "TEX6",     "TEX7",
	    "INDICES", "WEIGHTS",  "XYZ2",     "NORMAL2", "XZ",		 "Y",	     "Y2",
	    "TANGENT", "BINORMAL", "SPECULAR", "FOG",	  "PSIZE",	 "INDICES2", "WEIGHTS2"};

	if (type < sizeof n / sizeof n[0])
		return n[type];
	snprintf(buf, 16, "TYPE_0x%02X", type);
	return buf;
}

const char *skate_x360_usage_name(uint8_t usage, char buf[16])
{
	static const char *const n[] = {
	    "POSITION", "BLENDWEIGHT", "BLENDINDICES", "NORMAL", "PSIZE", "TEXCOORD", "TANGENT",
	    "BINORMAL", "TESSFACTOR",  "POSITIONT",    "COLOR",	 "FOG",	  "DEPTH",    "SAMPLE"};

	if (usage < sizeof n / sizeof n[0])
		return n[usage];
	snprintf(buf, 16, "USAGE_%u", usage);
	return buf;
}

/* ---- element meaning ---- */

/* The Xenon element type as a neutral usage; false when it names none the scene uses. */
static bool etype_usage(uint8_t type, struct skate_elem *e)
{
	if (type >= SX360_ET_TEX0 && type < SX360_ET_TEX0 + 8) {
		e->usage = SKATE_USAGE_TEXCOORD;
		e->set = (uint8_t)(type - SX360_ET_TEX0);
		return true;
	}
	switch (type) {
	case SX360_ET_XYZ:
		e->usage = SKATE_USAGE_POSITION;
		return true;
	case SX360_ET_NORMAL:
		e->usage = SKATE_USAGE_NORMAL;
		return true;
	case SX360_ET_VERTEXCOLOR:
		e->usage = SKATE_USAGE_COLOR;
		return true;
	case SX360_ET_SPECULAR:
		e->usage = SKATE_USAGE_SPECULAR;
		return true;
	case SX360_ET_INDICES:
		e->usage = SKATE_USAGE_BLEND_INDICES;
		return true;
	case SX360_ET_WEIGHTS:
		e->usage = SKATE_USAGE_BLEND_WEIGHTS;
		return true;
	case SX360_ET_TANGENT:
		e->usage = SKATE_USAGE_TANGENT;
		return true;
	case SX360_ET_BINORMAL:
		e->usage = SKATE_USAGE_BINORMAL;
		return true;
	default:
		e->usage = SKATE_USAGE_OTHER;
		return type != SX360_ET_NA;
	}
}

/* The Direct3D usage and usage index as a neutral usage (when the element type is NA). */
static void d3d_usage(uint8_t usage, uint8_t index, struct skate_elem *e)
{
	switch (usage) {
	case SX360_USAGE_POSITION:
		e->usage = index == 0 ? SKATE_USAGE_POSITION : SKATE_USAGE_OTHER;
		break;
	case SX360_USAGE_BLENDWEIGHT:
		e->usage = index == 0 ? SKATE_USAGE_BLEND_WEIGHTS : SKATE_USAGE_OTHER;
		break;
	case SX360_USAGE_BLENDINDICES:
		e->usage = index == 0 ? SKATE_USAGE_BLEND_INDICES : SKATE_USAGE_OTHER;
		break;
	case SX360_USAGE_NORMAL:
		e->usage = index == 0 ? SKATE_USAGE_NORMAL : SKATE_USAGE_OTHER;
		break;
	case SX360_USAGE_TEXCOORD:
		e->usage = index < 8 ? SKATE_USAGE_TEXCOORD : SKATE_USAGE_OTHER;
		e->set = index < 8 ? index : 0;
		break;
	case SX360_USAGE_TANGENT:
		e->usage = SKATE_USAGE_TANGENT;
		break;
	case SX360_USAGE_BINORMAL:
		e->usage = SKATE_USAGE_BINORMAL;
		break;
	case SX360_USAGE_COLOR:
		e->usage = index == 0 ? SKATE_USAGE_COLOR : SKATE_USAGE_SPECULAR;
		break;
	default:
		e->usage = SKATE_USAGE_OTHER;
	}
}

/* Skate's own encodings as on PS3 (docs/skate-objects.md, "Skater vertex encoding"): blend
 * indices are palette slots; UBYTE4 weights are byte / 255; four s16 positions are s16 /
 * 16384 model units ("bone units"). */
static void x360_skater_rules(struct skate_elem *e)
{
	if (e->usage == SKATE_USAGE_BLEND_INDICES) {
		e->normalized = false;
		e->divisor = 1.0f;
	} else if (e->usage == SKATE_USAGE_BLEND_WEIGHTS && e->ctype == SKATE_CT_U8_WORD) {
		e->normalized = true;
		e->divisor = 255.0f;
	} else if (e->usage == SKATE_USAGE_POSITION && e->ctype == SKATE_CT_S16 && e->count == 4) {
		e->normalized = false;
		e->divisor = 16384.0f;
		e->scale_note = "bone units";
	}
}

static void x360_elem_describe(const struct skate_velem *el, struct skate_elem *e)
{
	const struct x360_fmt *f = fmt_lookup(el->format);

	memset(e, 0, sizeof *e);
	if (!etype_usage(el->type, e))
		d3d_usage(el->usage, el->usage_index, e);
	e->stored_type = el->type;
	e->offset = el->offset;
	e->divisor = 1.0f;
	e->name_has_count = true;
	e->format_name = f ? f->name : NULL;
	e->usable = el->usable && f && f->ctype != NOT_DECODED;
	if (!e->usable)
		return;
	e->ctype = f->ctype;
	e->count = f->count;
	e->normalized = f->normalized;
	e->divisor = f->divisor;
	e->n_out = skate_ctype_packed3(f->ctype) ? 3 : f->count;
	e->size = (uint8_t)skate_x360_format_size(f->code);
	x360_skater_rules(e);
}

/* ---- VertexDescriptor ---- */

/* Whether element i can be decoded from stream 0 within the stride; reports why not. */
static bool x360_elem_fits(const struct skate_velem *v, unsigned i, uint16_t stride, uint32_t idx,
			   struct diag *d)
{
	unsigned size = skate_x360_format_size(v->format);
	const char *fn = skate_x360_format_name(v->format);
	char tb[16];

	if (!fn || !skate_x360_format_decoded(v->format)) {
		diag_add(d, "object %u (VertexDescriptor): element %u (%s) format 0x%08X %s", idx,
			 i, skate_x360_etype_name(v->type, tb), v->format,
			 fn ? "is not decoded" : "unknown");
		return false;
	}
	if (v->stream != 0) {
		diag_add(d,
			 "object %u (VertexDescriptor): element %u (%s) in stream %u (only stream "
			 "0 is understood)",
			 idx, i, skate_x360_etype_name(v->type, tb), v->stream);
		return false;
	}
	if ((unsigned)v->offset + size > stride) {
		diag_add(d,
			 "object %u (VertexDescriptor): element %u (%s) %s at offset %u does not "
			 "fit stride %u",
			 idx, i, skate_x360_etype_name(v->type, tb), fn, v->offset, stride);
		return false;
	}
	return true;
}

/* The element type decides what an element is; say so when its Direct3D usage disagrees. */
static void x360_usage_check(const struct skate_velem *v, const struct skate_elem *e, unsigned i,
			     uint32_t idx, struct diag *d)
{
	struct skate_elem u;
	char tb[16], ub[16];

	memset(&u, 0, sizeof u);
	d3d_usage(v->usage, v->usage_index, &u);
	if (v->type == SX360_ET_NA || (u.usage == e->usage && u.set == e->set))
		return;
	diag_add(d,
		 "object %u (VertexDescriptor): element %u type %s but Direct3D usage %s %u; "
		 "the type used",
		 idx, i, skate_x360_etype_name(v->type, tb), skate_x360_usage_name(v->usage, ub),
		 v->usage_index);
}

/* Element count the object holds (an end marker, stream 0xFF or format UNUSED, ends it). */
static unsigned x360_vdes_count(const struct skate_vdes *v, const uint8_t *p, size_t n,
				uint32_t idx, struct diag *d)
{
	size_t room = (n - SX360_VDES_HDR) / SX360_VDES_ELEM;
	unsigned k = v->num_elements;

	if (k > SKATE_MAX_ELEMS) {
		diag_add(d, "object %u (VertexDescriptor): %u elements, only %u read", idx,
			 v->num_elements, SKATE_MAX_ELEMS);
		k = SKATE_MAX_ELEMS;
	}
	if (k > room) {
		diag_add(d, "object %u (VertexDescriptor): %u elements but room for %zu", idx,
			 v->num_elements, room);
		k = (unsigned)room;
	}
	for (unsigned i = 0; i < k; i++) {
		const uint8_t *e = p + SX360_VDES_HDR + (size_t)SX360_VDES_ELEM * i;

		if (ld_u16be(e) == 0xFF || ld_u32be(e + 4) == SX360_FMT_UNUSED)
			return i;
	}
	return k;
}

static void x360_vdes_element(struct br *r, struct skate_velem *v)
{
	const struct x360_fmt *f;

	memset(v, 0, sizeof *v);
	v->stream = br_u16(r);
	v->offset = br_u16(r);
	v->format = br_u32(r);
	v->method = br_u8(r);
	v->usage = br_u8(r);
	v->usage_index = br_u8(r);
	v->type = br_u8(r);
	v->elem_class = br_u32(r);
	f = fmt_lookup(v->format);
	v->num_components = f ? f->count : 0;
}

/* The stride: the byte after the elements; when it is missing or 0, the elements' extent. */
static void x360_vdes_stride(struct skate_vdes *out, struct br *r, uint32_t idx, struct diag *d)
{
	unsigned ext = 0;

	for (unsigned i = 0; i < out->n_el; i++) {
		unsigned end = out->el[i].offset + skate_x360_format_size(out->el[i].format);

		if (out->el[i].stream == 0 && end > ext)
			ext = end;
	}
	size_t left = br_left(r);

	out->trailer_len = (uint8_t)(left < sizeof out->trailer ? left : sizeof out->trailer);
	br_copy(r, out->trailer, out->trailer_len);
	out->has_trailer = out->trailer_len == sizeof out->trailer;
	out->stride = out->trailer_len ? out->trailer[0] : 0;
	if (out->stride == 0 && ext > 0 && ext <= 0xFFFF) {
		diag_add(d,
			 "object %u (VertexDescriptor): %s stride byte; the elements' extent %u "
			 "used",
			 idx, out->trailer_len ? "zero" : "no", ext);
		out->stride = (uint16_t)ext;
	} else if (out->stride == 0) {
		diag_add(d, "object %u (VertexDescriptor): stride 0", idx);
	}
}

static enum rc x360_vdes_parse(const uint8_t *p, size_t n, bool be, uint32_t idx,
			       struct skate_vdes *out, struct diag *d)
{
	struct br r;

	memset(out, 0, sizeof *out);
	if (n < SX360_VDES_HDR) {
		diag_add(d, "object %u (VertexDescriptor): %zu bytes, header needs 16", idx, n);
		return RC_CORRUPT;
	}
	br_init(&r, p, n, be);
	out->decl = br_u32(&r);
	out->types_flags = br_u32(&r);
	out->num_elements = br_u16(&r);
	out->ref_count = br_u16(&r);
	out->instance_streams = br_u16(&r);
	out->pad0 = br_u16(&r);
	out->num_streams = 1;
	out->n_el = x360_vdes_count(out, p, n, idx, d);
	for (unsigned i = 0; i < out->n_el; i++)
		x360_vdes_element(&r, &out->el[i]);
	x360_vdes_stride(out, &r, idx, d);
	for (unsigned i = 0; i < out->n_el; i++) {
		out->el[i].stride = out->stride;
		out->el[i].usable = x360_elem_fits(&out->el[i], i, out->stride, idx, d);
		x360_elem_describe(&out->el[i], &out->elem[i]);
		x360_usage_check(&out->el[i], &out->elem[i], i, idx, d);
	}
	return RC_OK;
}

/* ---- buffers ---- */

static enum rc x360_vb_parse(const uint8_t *p, size_t n, bool be, uint32_t idx,
			     struct skate_vb *out, struct diag *d)
{
	struct br r;

	memset(out, 0, sizeof *out);
	if (n < SX360_VB_SIZE - 4) {
		diag_add(d, "object %u (VertexBuffer): %zu bytes, needs 36", idx, n);
		return RC_CORRUPT;
	}
	br_init(&r, p, n, be);
	for (int i = 0; i < 6; i++)
		out->d3d[i] = br_u32(&r);
	out->fetch[0] = br_u32(&r);
	out->fetch[1] = br_u32(&r);
	out->buffer_size = br_u32(&r);
	out->vb_type = br_u32(&r); /* 0 when the object stops before m_type */
	if ((out->fetch[0] & 3) != SX360_FETCH_VERTEX)
		diag_add(d, "object %u (VertexBuffer): fetch constant type %u (3 = vertex)", idx,
			 out->fetch[0] & 3);
	return RC_OK;
}

static enum rc x360_ib_parse(const uint8_t *p, size_t n, bool be, uint32_t idx,
			     struct skate_ib *out, struct diag *d)
{
	unsigned endian;
	struct br r;

	memset(out, 0, sizeof *out);
	if (n < SX360_IB_SIZE) {
		diag_add(d, "object %u (IndexBuffer): %zu bytes, needs 36", idx, n);
		return RC_CORRUPT;
	}
	br_init(&r, p, n, be);
	for (int i = 0; i < 6; i++)
		out->d3d[i] = br_u32(&r);
	out->address = br_u32(&r);
	out->size = br_u32(&r);
	out->num_indices = br_u32(&r);
	out->width = out->d3d[0] & SX360_IB_INDEX32 ? 4 : 2;
	out->stride = out->width;
	out->index_type = out->width == 2;
	/* The GPU swap that makes the indices big-endian: 8in16 for u16, 8in32 for u32. */
	endian = out->d3d[0] >> SX360_IB_ENDIAN_SHIFT & 3;
	if (endian != (out->width == 2 ? 1u : 2u))
		diag_add(d,
			 "object %u (IndexBuffer): byte swap %u with %u-byte indices; read "
			 "big-endian",
			 idx, endian, out->width);
	return RC_OK;
}

/* Xbox 360 DrawIndexedParameters: primType, baseVertexIndex, startIndex, indexCount. */
static void x360_dip_decode(struct br *r, struct skate_island *out)
{
	out->prim = br_u32(r);
	out->base_vertex = (int32_t)br_u32(r);
	out->start = br_u32(r);
	out->count = br_u32(r);
	memset(out->pad, 0, sizeof out->pad);
	out->triangles = out->prim == SX360_PRIM_TRIANGLELIST;
}

const struct skate_platform skate_platform_x360 = {
    .name = "Xbox 360",
    .plat = RW_XB2,
    .vdes_parse = x360_vdes_parse,
    .vb_parse = x360_vb_parse,
    .ib_parse = x360_ib_parse,
    .mesh_helper_parse = skate_mesh_helper_decode,
    .dip_size = SX360_DIP_SIZE,
    .dip_decode = x360_dip_decode,
    .tri_prim = SX360_PRIM_TRIANGLELIST,
    .elem_describe = x360_elem_describe,
    .elem_type_name = skate_x360_etype_name,
    .base_res_row_before = true,
    .island_base_vertex = true,
    .tex = &tex_platform_x360,
};
