/* PS3 VertexDescriptor / VertexBuffer / IndexBuffer / MeshHelper and the GCM vertex formats
 * (spec rw4-arena.md §7.1-§7.4). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psgfs/skate_mesh.h"

const char *skate_vfmt_name(uint8_t vt)
{
	static const char *const n[] = {NULL, "S1", "F", "SF", "UB", "S32K", "CMP", "UB256"};

	return vt < sizeof n / sizeof n[0] ? n[vt] : NULL;
}

unsigned skate_vfmt_comp_size(uint8_t vt)
{
	static const unsigned sz[] = {0, 2, 4, 2, 1, 2, 4, 1};

	return vt < sizeof sz / sizeof sz[0] ? sz[vt] : 0;
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

float skate_half_to_float(uint16_t h)
{
	unsigned sign = h >> 15, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
	float v;

	if (exp == 0)
		v = ldexpf((float)man, -24); /* zero and subnormals */
	else if (exp == 31)
		v = man ? NAN : INFINITY;
	else
		v = ldexpf((float)(man | 0x400), (int)exp - 25);
	return sign ? -v : v;
}

/* Sign-extend the low `bits` bits of v. */
static int32_t sext(uint32_t v, unsigned bits)
{
	uint32_t m = 1u << (bits - 1);

	v &= (1u << bits) - 1;
	return (int32_t)(v ^ m) - (int32_t)m;
}

void skate_cmp_decode(uint32_t v, float out[3])
{
	out[0] = (float)sext(v, 11) / 1023.0f;
	out[1] = (float)sext(v >> 11, 11) / 1023.0f;
	out[2] = (float)sext(v >> 22, 10) / 511.0f;
}

unsigned skate_velem_decode(uint8_t vt, unsigned ncomp, const uint8_t *p, bool as_int, float out[4])
{
	unsigned cs = skate_vfmt_comp_size(vt);

	if (cs == 0 || ncomp < 1 || ncomp > 4)
		return 0;
	if (vt == SKATE_VF_CMP) {
		skate_cmp_decode(ld_u32be(p), out);
		return 3;
	}
	for (unsigned i = 0; i < ncomp; i++, p += cs) {
		switch (vt) {
		case SKATE_VF_S1:
			out[i] = as_int ? (float)(int16_t)ld_u16be(p)
					: (float)(int16_t)ld_u16be(p) / 32767.0f;
			break;
		case SKATE_VF_F:
			out[i] = f32_from_bits(ld_u32be(p));
			break;
		case SKATE_VF_SF:
			out[i] = skate_half_to_float(ld_u16be(p));
			break;
		case SKATE_VF_UB:
			out[i] = as_int ? (float)p[0] : (float)p[0] / 255.0f;
			break;
		case SKATE_VF_S32K:
			out[i] = (float)(int16_t)ld_u16be(p);
			break;
		default: /* UB256 */
			out[i] = (float)p[0];
			break;
		}
	}
	return ncomp;
}

enum rc skate_vdes_parse(const uint8_t *p, size_t n, uint32_t idx, struct skate_vdes *out,
			 struct diag *d)
{
	char tb[16];
	size_t room;

	memset(out, 0, sizeof *out);
	if (n < 16) {
		diag_add(d, "object %u (VertexDescriptor): %zu bytes, header needs 16", idx, n);
		return RC_CORRUPT;
	}
	out->ref_count = ld_u32be(p);
	out->types_flags = ld_u32be(p + 4);
	out->num_streams = ld_u16be(p + 8);
	out->num_elements = ld_u16be(p + 10);
	out->freq_div = ld_u16be(p + 12);
	out->pad0 = ld_u16be(p + 14);
	room = (n - 16) / 8;
	out->n_el = out->num_elements;
	if (out->n_el > SKATE_MAX_ELEMS) {
		diag_add(d, "object %u (VertexDescriptor): %u elements, only %u read", idx,
			 out->num_elements, SKATE_MAX_ELEMS);
		out->n_el = SKATE_MAX_ELEMS;
	}
	if (out->n_el > room) {
		diag_add(d, "object %u (VertexDescriptor): %u elements but room for %zu", idx,
			 out->num_elements, room);
		out->n_el = (unsigned)room;
	}
	if (out->num_streams != 1)
		diag_add(d, "object %u (VertexDescriptor): %u streams (only 1 is understood)", idx,
			 out->num_streams);
	for (unsigned i = 0; i < out->n_el; i++) {
		const uint8_t *e = p + 16 + 8 * i;
		struct skate_velem *v = &out->el[i];
		unsigned cs;

		v->vertex_type = e[0];
		v->num_components = e[1];
		v->stream = e[2];
		v->offset = e[3];
		v->stride = ld_u16be(e + 4);
		v->type = e[6];
		v->elem_class = e[7];
		cs = skate_vfmt_comp_size(v->vertex_type);
		if (i == 0)
			out->stride = v->stride;
		else if (v->stride != out->stride)
			diag_add(
			    d, "object %u (VertexDescriptor): element %u stride %u differs from %u",
			    idx, i, v->stride, out->stride);
		if (cs == 0) {
			diag_add(
			    d,
			    "object %u (VertexDescriptor): element %u (%s) unknown vertex type %u",
			    idx, i, skate_etype_name(v->type, tb), v->vertex_type);
		} else if (v->num_components < 1 || v->num_components > 4) {
			diag_add(d,
				 "object %u (VertexDescriptor): element %u (%s) has %u components",
				 idx, i, skate_etype_name(v->type, tb), v->num_components);
		} else if ((unsigned)v->offset +
			       cs * (v->vertex_type == SKATE_VF_CMP ? 1u : v->num_components) >
			   out->stride) {
			diag_add(
			    d,
			    "object %u (VertexDescriptor): element %u (%s) %s x%u at offset %u "
			    "does not fit stride %u",
			    idx, i, skate_etype_name(v->type, tb), skate_vfmt_name(v->vertex_type),
			    v->num_components, v->offset, out->stride);
		} else {
			v->usable = true;
		}
	}
	if (n >= 16 + 8 * (size_t)out->n_el + 8) {
		memcpy(out->trailer, p + 16 + 8 * out->n_el, 8);
		out->has_trailer = true;
	}
	if (out->stride == 0)
		diag_add(d, "object %u (VertexDescriptor): stride 0", idx);
	return RC_OK;
}

enum rc skate_vb_parse(const uint8_t *p, size_t n, struct skate_vb *out)
{
	memset(out, 0, sizeof *out);
	if (n < 16)
		return RC_CORRUPT;
	out->buffer = ld_u32be(p);
	out->offset = ld_u32be(p + 4);
	out->buffer_size = ld_u32be(p + 8);
	out->location = p[12];
	out->lock_flags = p[13];
	out->pad0 = ld_u16be(p + 14);
	return RC_OK;
}

enum rc skate_ib_parse(const uint8_t *p, size_t n, struct skate_ib *out)
{
	memset(out, 0, sizeof *out);
	if (n < 20)
		return RC_CORRUPT;
	out->buffer = ld_u32be(p);
	out->offset = ld_u32be(p + 4);
	out->num_indices = ld_u32be(p + 8);
	out->stride = ld_u32be(p + 12);
	out->index_type = p[16];
	out->location = p[17];
	out->type = p[18];
	out->lock_flags = p[19];
	return RC_OK;
}

enum rc skate_mesh_helper_parse(const uint8_t *p, size_t n, uint32_t idx,
				struct skate_mesh_helper *out, struct diag *d)
{
	uint64_t want;
	size_t room;

	memset(out, 0, sizeof *out);
	if (n < 8) {
		diag_add(d, "object %u (MeshHelper): %zu bytes, header needs 8", idx, n);
		return RC_CORRUPT;
	}
	out->n_ib = ld_u32be(p);
	out->n_vb = ld_u32be(p + 4);
	want = (uint64_t)out->n_ib + out->n_vb;
	room = (n - 8) / 4;
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
		out->refs[i] = ld_u32be(p + 8 + 4 * i);
	return RC_OK;
}

void skate_mesh_helper_free(struct skate_mesh_helper *m)
{
	free(m->refs);
	memset(m, 0, sizeof *m);
}
