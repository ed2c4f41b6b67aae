/*
 * The PS3 platform table: GCM vertex formats, the PS3 element-type numbering (NV/Cg attribute
 * slots) and the PS3 layouts of VertexDescriptor, VertexBuffer, IndexBuffer, MeshHelper and
 * DrawIndexedParameters (docs/skate-objects.md, "Vertex descriptor", "VertexBuffer",
 * "IndexBuffer", "MeshHelper", "RenderOptiMeshData").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_platform.h"
#include "psgfs/formats/tex_platform.h"

#define VDES_HDR  16u
#define VDES_ELEM 8u
#define VB_SIZE	  16u
#define IB_SIZE	  20u
#define MH_HDR	  8u
#define DIP_SIZE  12u
#define PRIM_TRIS 5u /* CELL_GCM_PRIMITIVE_TRIANGLES */

/* CELL_GCM_VERTEX_* as neutral storage: component type, bytes per component, divisor. */
struct skate_ps3_vfmt {
	const char *name;
	uint8_t ctype, comp_size;
	bool normalized;
	float divisor;
};

static const struct skate_ps3_vfmt skate_ps3_vfmts[8] = {
    [SKATE_VF_S1] = {"S1", SKATE_CT_S16, 2, true, 32767.0f},
    [SKATE_VF_F] = {"F", SKATE_CT_F32, 4, false, 1.0f},
    [SKATE_VF_SF] = {"SF", SKATE_CT_F16, 2, false, 1.0f},
    [SKATE_VF_UB] = {"UB", SKATE_CT_U8, 1, true, 255.0f},
    [SKATE_VF_S32K] = {"S32K", SKATE_CT_S16, 2, false, 1.0f},
    [SKATE_VF_CMP] = {"CMP", SKATE_CT_S11_11_10, 4, true, 1.0f},
    [SKATE_VF_UB256] = {"UB256", SKATE_CT_U8, 1, false, 1.0f},
};

static const struct skate_ps3_vfmt *skate_ps3_vfmt_find(uint8_t vt)
{
	return vt < sizeof skate_ps3_vfmts / sizeof skate_ps3_vfmts[0] && skate_ps3_vfmts[vt].name
		   ? &skate_ps3_vfmts[vt]
		   : NULL;
}

const char *skate_vfmt_name(uint8_t vt)
{
	const struct skate_ps3_vfmt *f = skate_ps3_vfmt_find(vt);

	return f ? f->name : NULL;
}

unsigned skate_vfmt_comp_size(uint8_t vt)
{
	const struct skate_ps3_vfmt *f = skate_ps3_vfmt_find(vt);

	return f ? f->comp_size : 0;
}

const char *skate_etype_name(uint8_t type, char buf[16])
{
	static const char *const n[] = {
	    "XYZ",  "WEIGHTS", "NORMAL", "VERTEXCOLOR", "SPECULAR", NULL,   NULL,      "INDICES",
	    "TEX0", "TEX1",    "TEX2",	 "TEX3",	"TEX4",	    "TEX5", "TANGENT", "BINORMAL"};

	if (type < 16 && n[type])
		return n[type];
	if (type == 0xFF)
		return "NA";
	snprintf(buf, 16, "TYPE_0x%02X", type);
	return buf;
}

/* The PS3 `type` byte (an attribute slot) as a neutral usage. */
static void ps3_usage(uint8_t type, struct skate_elem *e)
{
	static const uint8_t u[16] = {
	    SKATE_USAGE_POSITION, SKATE_USAGE_BLEND_WEIGHTS, SKATE_USAGE_NORMAL,
	    SKATE_USAGE_COLOR,	  SKATE_USAGE_SPECULAR,	     SKATE_USAGE_OTHER,
	    SKATE_USAGE_OTHER,	  SKATE_USAGE_BLEND_INDICES, SKATE_USAGE_TEXCOORD,
	    SKATE_USAGE_TEXCOORD, SKATE_USAGE_TEXCOORD,	     SKATE_USAGE_TEXCOORD,
	    SKATE_USAGE_TEXCOORD, SKATE_USAGE_TEXCOORD,	     SKATE_USAGE_TANGENT,
	    SKATE_USAGE_BINORMAL};

	e->usage = type < 16 ? u[type] : SKATE_USAGE_OTHER;
	e->set = e->usage == SKATE_USAGE_TEXCOORD ? (uint8_t)(type - SKATE_ET_TEX0) : 0;
}

/*
 * Where Skate's own encodings differ from the GCM definitions (docs/skate-objects.md, "Skater
 * vertex encoding"): blend indices are palette slots (byte or short values in memory order,
 * never fractions); weights stored UB256 are byte / 255; positions stored S1 or S32K with four
 * components are s16 / 16384 model units ("bone units": the scale that lines the mesh up with
 * the inverse bind matrices).
 */
static void ps3_skater_rules(const struct skate_velem *el, struct skate_elem *e)
{
	if (e->usage == SKATE_USAGE_BLEND_INDICES) {
		e->normalized = false;
		e->divisor = 1.0f;
	} else if (e->usage == SKATE_USAGE_BLEND_WEIGHTS && el->vertex_type == SKATE_VF_UB256) {
		e->normalized = true;
		e->divisor = 255.0f;
	} else if (e->usage == SKATE_USAGE_POSITION && el->num_components == 4 &&
		   (el->vertex_type == SKATE_VF_S1 || el->vertex_type == SKATE_VF_S32K)) {
		e->normalized = false;
		e->divisor = 16384.0f;
		e->scale_note = "bone units";
	}
}

static void ps3_elem_describe(const struct skate_velem *el, struct skate_elem *e)
{
	const struct skate_ps3_vfmt *f = skate_ps3_vfmt_find(el->vertex_type);

	memset(e, 0, sizeof *e);
	ps3_usage(el->type, e);
	e->stored_type = el->type;
	e->offset = el->offset;
	e->count = el->num_components;
	e->divisor = 1.0f;
	e->usable = el->usable && f;
	if (!f)
		return;
	e->format_name = f->name;
	e->ctype = f->ctype;
	e->normalized = f->normalized;
	e->divisor = f->divisor;
	e->n_out = f->ctype == SKATE_CT_S11_11_10 ? 3 : el->num_components;
	e->size = (uint8_t)(f->ctype == SKATE_CT_S11_11_10 ? f->comp_size
							   : f->comp_size * el->num_components);
	ps3_skater_rules(el, e);
}

unsigned skate_velem_decode(uint8_t vt, unsigned ncomp, const uint8_t *p, bool as_int, float out[4])
{
	struct skate_velem el = {.vertex_type = vt,
				 .num_components = (uint8_t)ncomp,
				 .type = as_int ? SKATE_ET_INDICES : SKATE_ET_TEX0,
				 .usable = true};
	struct skate_elem e;

	if (!skate_ps3_vfmt_find(vt) || ncomp < 1 || ncomp > 4)
		return 0;
	ps3_elem_describe(&el, &e);
	skate_elem_decode(&e, p, true, out);
	return e.n_out;
}

/* Whether element i fits the stride; reports why not. */
static bool ps3_elem_fits(const struct skate_velem *v, unsigned i, uint16_t stride, uint32_t idx,
			  struct diag *d)
{
	unsigned cs = skate_vfmt_comp_size(v->vertex_type);
	char tb[16];

	if (cs == 0) {
		diag_add(d, "object %u (VertexDescriptor): element %u (%s) unknown vertex type %u",
			 idx, i, skate_etype_name(v->type, tb), v->vertex_type);
		return false;
	}
	if (v->num_components < 1 || v->num_components > 4) {
		diag_add(d, "object %u (VertexDescriptor): element %u (%s) has %u components", idx,
			 i, skate_etype_name(v->type, tb), v->num_components);
		return false;
	}
	if ((unsigned)v->offset + cs * (v->vertex_type == SKATE_VF_CMP ? 1u : v->num_components) >
	    stride) {
		diag_add(d,
			 "object %u (VertexDescriptor): element %u (%s) %s x%u at offset %u does "
			 "not fit stride %u",
			 idx, i, skate_etype_name(v->type, tb), skate_vfmt_name(v->vertex_type),
			 v->num_components, v->offset, stride);
		return false;
	}
	return true;
}

/* The element count the object can hold, with the reasons it was cut. */
static unsigned ps3_vdes_count(const struct skate_vdes *v, size_t n, uint32_t idx, struct diag *d)
{
	size_t room = (n - VDES_HDR) / VDES_ELEM;
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
	return k;
}

static void ps3_vdes_element(struct br *r, struct skate_vdes *out, unsigned i, uint32_t idx,
			     struct diag *d)
{
	struct skate_velem *v = &out->el[i];

	v->vertex_type = br_u8(r);
	v->num_components = br_u8(r);
	v->stream = br_u8(r);
	v->offset = br_u8(r);
	v->stride = br_u16(r);
	v->type = br_u8(r);
	v->elem_class = br_u8(r);
	if (i == 0)
		out->stride = v->stride;
	else if (v->stride != out->stride)
		diag_add(d, "object %u (VertexDescriptor): element %u stride %u differs from %u",
			 idx, i, v->stride, out->stride);
	v->usable = ps3_elem_fits(v, i, out->stride, idx, d);
	ps3_elem_describe(v, &out->elem[i]);
}

static enum rc ps3_vdes_parse(const uint8_t *p, size_t n, bool be, uint32_t idx,
			      struct skate_vdes *out, struct diag *d)
{
	struct br r;

	memset(out, 0, sizeof *out);
	if (n < VDES_HDR) {
		diag_add(d, "object %u (VertexDescriptor): %zu bytes, header needs 16", idx, n);
		return RC_CORRUPT;
	}
	br_init(&r, p, n, be);
	out->ref_count = br_u32(&r);
	out->types_flags = br_u32(&r);
	out->num_streams = br_u16(&r);
	out->num_elements = br_u16(&r);
	out->freq_div = br_u16(&r);
	out->pad0 = br_u16(&r);
	out->n_el = ps3_vdes_count(out, n, idx, d);
	if (out->num_streams != 1)
		diag_add(d, "object %u (VertexDescriptor): %u streams (only 1 is understood)", idx,
			 out->num_streams);
	for (unsigned i = 0; i < out->n_el; i++)
		ps3_vdes_element(&r, out, i, idx, d);
	out->has_trailer = br_copy(&r, out->trailer, sizeof out->trailer);
	out->trailer_len = out->has_trailer ? sizeof out->trailer : 0;
	if (out->stride == 0)
		diag_add(d, "object %u (VertexDescriptor): stride 0", idx);
	return RC_OK;
}

static enum rc ps3_vb_parse(const uint8_t *p, size_t n, bool be, uint32_t idx, struct skate_vb *out,
			    struct diag *d)
{
	struct br r;

	memset(out, 0, sizeof *out);
	if (n < VB_SIZE) {
		diag_add(d, "object %u (VertexBuffer): %zu bytes, needs 16", idx, n);
		return RC_CORRUPT;
	}
	br_init(&r, p, n, be);
	out->buffer = br_u32(&r);
	out->offset = br_u32(&r);
	out->buffer_size = br_u32(&r);
	out->location = br_u8(&r);
	out->lock_flags = br_u8(&r);
	out->pad0 = br_u16(&r);
	return RC_OK;
}

static enum rc ps3_ib_parse(const uint8_t *p, size_t n, bool be, uint32_t idx, struct skate_ib *out,
			    struct diag *d)
{
	struct br r;

	memset(out, 0, sizeof *out);
	if (n < IB_SIZE) {
		diag_add(d, "object %u (IndexBuffer): %zu bytes, needs 20", idx, n);
		return RC_CORRUPT;
	}
	br_init(&r, p, n, be);
	out->buffer = br_u32(&r);
	out->offset = br_u32(&r);
	out->num_indices = br_u32(&r);
	out->stride = br_u32(&r);
	out->index_type = br_u8(&r);
	out->location = br_u8(&r);
	out->type = br_u8(&r);
	out->lock_flags = br_u8(&r);
	if (out->stride == 2 || out->stride == 4)
		out->width = out->stride;
	else
		diag_add(d, "object %u (IndexBuffer): stride %u (2 or 4 expected)", idx,
			 out->stride);
	/* CELL_GCM_DRAW_INDEX_ARRAY_TYPE_16 = 1, _32 = 0 */
	if (out->width && (out->index_type == 1) != (out->width == 2))
		diag_add(d,
			 "object %u (IndexBuffer): index type %u disagrees with stride %u; stride "
			 "used",
			 idx, out->index_type, out->stride);
	return RC_OK;
}

enum rc skate_mesh_helper_decode(const uint8_t *p, size_t n, bool be, uint32_t idx,
				 struct skate_mesh_helper *out, struct diag *d)
{
	uint64_t want;
	size_t room;
	struct br r;

	memset(out, 0, sizeof *out);
	if (n < MH_HDR) {
		diag_add(d, "object %u (MeshHelper): %zu bytes, header needs 8", idx, n);
		return RC_CORRUPT;
	}
	br_init(&r, p, n, be);
	out->n_ib = br_u32(&r);
	out->n_vb = br_u32(&r);
	want = (uint64_t)out->n_ib + out->n_vb;
	room = (n - MH_HDR) / 4;
	if (want > room) {
		diag_add(d, "object %u (MeshHelper): %u + %u buffers but room for %zu", idx,
			 out->n_ib, out->n_vb, room);
		want = room;
	}
	out->n_refs = (uint32_t)want;
	out->refs = xcalloc_n(out->n_refs, sizeof *out->refs);
	if (!out->refs)
		return RC_NOMEM;
	for (uint32_t i = 0; i < out->n_refs; i++)
		out->refs[i] = br_u32(&r);
	return RC_OK;
}

void skate_mesh_helper_free(struct skate_mesh_helper *m)
{
	free(m->refs);
	memset(m, 0, sizeof *m);
}

/* PS3 DrawIndexedParameters: startIndex, indexCount, primType, 3 zero bytes. */
static void ps3_dip_decode(struct br *r, struct skate_island *out)
{
	out->start = br_u32(r);
	out->count = br_u32(r);
	out->prim = br_u8(r);
	br_copy(r, out->pad, sizeof out->pad);
	out->triangles = out->prim == PRIM_TRIS;
	out->base_vertex = 0;
}

const struct skate_platform skate_platform_ps3 = {
    .name = "PS3",
    .plat = RW_PS3,
    .vdes_parse = ps3_vdes_parse,
    .vb_parse = ps3_vb_parse,
    .ib_parse = ps3_ib_parse,
    .mesh_helper_parse = skate_mesh_helper_decode,
    .dip_size = DIP_SIZE,
    .dip_decode = ps3_dip_decode,
    .tri_prim = PRIM_TRIS,
    .elem_describe = ps3_elem_describe,
    .elem_type_name = skate_etype_name,
    .tex = &tex_platform_ps3,
};

/* ---- the same decoders for callers without an arena (PS3 is big-endian) ---- */

enum rc skate_vdes_parse(const uint8_t *p, size_t n, uint32_t idx, struct skate_vdes *out,
			 struct diag *d)
{
	return ps3_vdes_parse(p, n, true, idx, out, d);
}

enum rc skate_vb_parse(const uint8_t *p, size_t n, struct skate_vb *out)
{
	return ps3_vb_parse(p, n, true, 0, out, NULL);
}

enum rc skate_ib_parse(const uint8_t *p, size_t n, struct skate_ib *out)
{
	return ps3_ib_parse(p, n, true, 0, out, NULL);
}

enum rc skate_mesh_helper_parse(const uint8_t *p, size_t n, uint32_t idx,
				struct skate_mesh_helper *out, struct diag *d)
{
	return skate_mesh_helper_decode(p, n, true, idx, out, d);
}
