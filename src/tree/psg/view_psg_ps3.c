/*
 * The PlayStation 3 row of the view platform table (view_psg.h, struct view_platform): the text
 * of what PS3 arenas store their own way — meshes/NN/descriptor.txt, the VertexDescriptor,
 * VertexBuffer and IndexBuffer objects, Texture objects and their info.txt lines
 * (docs/skate-objects.md). Arenas of platforms without a row of their own are shown as PS3.
 */
#include <stdlib.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_platform.h"
#include "psgfs/formats/texture.h"
#include "tree/psg/view_psg.h"

/* ---- meshes ---- */

static enum rc ps3_descriptor(const struct skate_scene *sc, size_t mesh, struct buf *out)
{
	const struct skate_scene_mesh *m;
	const struct skate_vdes *v;
	char tb[16], enc[64];

	m = &sc->meshes[mesh];
	v = &m->desc;
	buf_printf(out, "mesh: %zu\ndecodable: %s\n", mesh, m->ok ? "yes" : "no");
	if (m->vdes != SKATE_NONE)
		buf_printf(out, "vertex descriptor: object %u\n", m->vdes);
	else
		buf_puts(out, "vertex descriptor: none\n");
	if (!m->has_desc)
		return out->oom ? RC_NOMEM : RC_OK;
	buf_printf(out,
		   "stride: %u\nvertex count: %u\ntypes flags: 0x%08X\nstreams: %u\nelements: %u\n"
		   "frequency divider operation: 0x%04X\nposition encoding: %s\n",
		   m->stride, m->vertex_count, v->types_flags, v->num_streams, v->num_elements,
		   v->freq_div, m->pos_encoding[0] ? m->pos_encoding : "none");
	buf_puts(out, "\nelement\ttype\tformat\tcomponents\toffset\tstride\tstream\tclass\tusable"
		      "\tdecoded as\n");
	for (unsigned i = 0; i < v->n_el; i++) {
		const struct skate_velem *e = &v->el[i];
		const char *fn = skate_vfmt_name(e->vertex_type);

		buf_printf(out, "%u\t%s\t", i, skate_etype_name(e->type, tb));
		if (fn)
			buf_puts(out, fn);
		else
			buf_printf(out, "0x%02X", e->vertex_type);
		buf_printf(out, "\t%u\t%u\t%u\t%u\t%s\t%s\t", e->num_components, e->offset,
			   e->stride, e->stream, view_elem_class_name(e->elem_class),
			   e->usable ? "yes" : "no");
		if (e->usable) {
			skate_elem_encoding(&v->elem[i], enc);
			buf_puts(out, enc);
		} else {
			buf_putc(out, '-');
		}
		buf_putc(out, '\n');
	}
	return out->oom ? RC_NOMEM : RC_OK;
}

static void ps3_vdes_text(struct buf *out, const struct skate_vdes *v)
{
	char tb[16];

	buf_printf(out,
		   "m_refCount: %u\nm_typesFlags: 0x%08X\nm_numStreams: %u\nm_numElements: %u\n"
		   "m_frequencyDividerOperation: 0x%04X\nm_pad0: %u\nstride: %u\n",
		   v->ref_count, v->types_flags, v->num_streams, v->num_elements, v->freq_div,
		   v->pad0, v->stride);
	for (unsigned i = 0; i < v->n_el; i++) {
		const struct skate_velem *e = &v->el[i];
		const char *fn = skate_vfmt_name(e->vertex_type);

		buf_printf(out, "element %u: type %s vertexType ", i,
			   skate_etype_name(e->type, tb));
		if (fn)
			buf_printf(out, "%s (%u)", fn, e->vertex_type);
		else
			buf_printf(out, "unknown (%u)", e->vertex_type);
		buf_printf(out, " components %u stream %u offset %u stride %u class %s (%u)%s\n",
			   e->num_components, e->stream, e->offset, e->stride,
			   view_elem_class_name(e->elem_class), e->elem_class,
			   e->usable ? "" : " UNUSABLE");
	}
	if (v->has_trailer)
		buf_printf(out, "trailer: %02X %02X %02X %02X %02X %02X %02X %02X\n", v->trailer[0],
			   v->trailer[1], v->trailer[2], v->trailer[3], v->trailer[4],
			   v->trailer[5], v->trailer[6], v->trailer[7]);
}

static void ps3_vb_text(struct buf *out, const struct arena *a, uint32_t idx,
			const struct skate_vb *v)
{
	(void)idx;
	view_ref_text(out, a, "m_buffer", v->buffer, ARENA_WANT_BASERES);
	buf_printf(out,
		   "m_offset: %u\nm_bufferSize: %u\nm_location: %u\nm_lockFlags: %u\n"
		   "m_pad0: %u\n",
		   v->offset, v->buffer_size, v->location, v->lock_flags, v->pad0);
}

static void ps3_ib_text(struct buf *out, const struct arena *a, uint32_t idx,
			const struct skate_ib *v)
{
	(void)idx;
	view_ref_text(out, a, "m_buffer", v->buffer, ARENA_WANT_BASERES);
	buf_printf(out,
		   "m_offset: %u\nm_numIndices: %u\nm_stride: %u\nm_indexType: %u (%s)\n"
		   "m_location: %u\nm_type: %u\nm_lockFlags: %u\n",
		   v->offset, v->num_indices, v->stride, v->index_type,
		   v->index_type == 1	? "16-bit"
		   : v->index_type == 0 ? "32-bit"
					: "unknown",
		   v->location, v->type, v->lock_flags);
}

/* ---- textures ---- */

static const char *store_type_name(uint32_t v)
{
	switch (v) {
	case 1:
		return "1D";
	case TEX_STORE_2D:
		return "2D";
	case 3:
		return "3D";
	case TEX_STORE_CUBE:
		return "cube";
	default:
		return "unknown";
	}
}

/* The object by the platform's one reader; unreadable is out of bounds, too short corrupt. */
static enum rc read_header(const struct src *s, const struct arena *a, uint32_t idx,
			   struct ps3_texture *t)
{
	enum rc r = tex_ps3_read_object(s, a, idx, t);

	if (r == RC_OK || r == RC_UNSUPPORTED)
		return r;
	return r == RC_TRUNCATED && arena_row(a, idx)->size < PS3_TEXTURE_SIZE ? RC_CORRUPT
									       : RC_BOUNDS;
}

static enum rc ps3_texture_text(const struct src *s, const struct arena *a, uint32_t idx,
				struct buf *out, struct diag *problems)
{
	struct ps3_texture t;
	struct tex_layout l;
	char why[256], tmp[16];
	const char *fname;
	enum rc r, lr;

	r = read_header(s, a, idx, &t);
	if (r != RC_OK)
		return r;
	fname = tex_ps3_format_name(t.base_format);
	lr = tex_layout_get(&t, &l, why, sizeof why);

	buf_printf(out, "object: %04u.Texture\n", idx);
	buf_printf(out, "format: 0x%02X %s%s%s\n", t.format, fname ? fname : "unknown",
		   t.linear ? " LN" : "", t.unnormalized ? " UN" : "");
	buf_printf(out, "base_format: 0x%02X\n", t.base_format);
	buf_printf(out, "linear: %s\n", t.linear ? "yes" : "no");
	buf_printf(out, "unnormalized: %s\n", t.unnormalized ? "yes" : "no");
	buf_printf(out, "mipmap: %u\n", t.mipmap);
	buf_printf(out, "dimension: %u\n", t.dimension);
	buf_printf(out, "cubemap: %u\n", t.cubemap);
	buf_printf(out, "remap: 0x%08X\n", t.remap);
	buf_printf(out, "width: %u\n", t.width);
	buf_printf(out, "height: %u\n", t.height);
	buf_printf(out, "depth: %u\n", t.depth);
	buf_printf(out, "location: %u\n", t.location);
	buf_printf(out, "padding: %u\n", t.padding);
	buf_printf(out, "pitch: %u\n", t.pitch);
	buf_printf(out, "offset: %u\n", t.offset);
	if (t.m_buffer >> 22 == 0 && t.m_buffer < a->n_dict)
		buf_printf(out, "m_buffer: %u -> %04u.%s\n", t.m_buffer, t.m_buffer,
			   rw_type_label(arena_row(a, t.m_buffer)->type_id, tmp));
	else
		buf_printf(out, "m_buffer: %u -> (out of range)\n", t.m_buffer);
	buf_printf(out, "storeType: 0x%08X (%s)\n", t.store_type, store_type_name(t.store_type));
	buf_printf(out, "storeFlags: 0x%08X\n", t.store_flags);
	buf_printf(out, "unknown_24: 0x%04X\n", t.unknown_24);
	buf_printf(out, "unknown_26: 0x%02X\n", t.unknown_26);
	buf_printf(out, "format_copy: 0x%02X\n", t.format_copy);
	if (lr == RC_OK) {
		buf_printf(out, "layout: %s\n",
			   l.compressed ? "block-linear"
			   : l.swizzled ? "swizzled"
					: "linear");
		buf_printf(out, "faces: %u\n", l.faces);
		buf_printf(out, "face_bytes: %llu\n", (unsigned long long)l.face_bytes);
		buf_printf(out, "expected_bytes: %llu\n", (unsigned long long)(l.total + t.offset));
	}
	if (t.m_buffer >> 22 == 0 && t.m_buffer < a->n_dict)
		buf_printf(out, "actual_bytes: %u\n", arena_row(a, t.m_buffer)->size);

	/* the same checks tex_describe makes, as problem lines */
	if (lr == RC_OK) {
		struct tex_desc td;

		tex_describe(s, a, idx, &td, problems);
	} else {
		diag_add(problems, "object %u (Texture): %s", idx, why);
	}
	if (t.format_copy != t.format)
		diag_add(problems,
			 "object %u (Texture): format copy 0x%02X differs from format 0x%02X", idx,
			 t.format_copy, t.format);
	return out->oom ? RC_NOMEM : RC_OK;
}

static enum rc ps3_texture_info_line(const struct src *s, const struct arena *a, uint32_t idx,
				     const char *name, struct buf *out)
{
	struct ps3_texture t;
	const char *fname;
	bool cube;
	enum rc r;

	r = read_header(s, a, idx, &t);
	if (r != RC_OK)
		return r;
	fname = tex_ps3_format_name(t.base_format);
	cube = t.cubemap != 0 || t.store_type == TEX_STORE_CUBE;
	if (fname)
		buf_printf(out, "%s %s %ux%u %u %s\n", name, fname, t.width, t.height, t.mipmap,
			   cube ? "cube" : "2d");
	else
		buf_printf(out, "%s 0x%02X %ux%u %u %s\n", name, t.format, t.width, t.height,
			   t.mipmap, cube ? "cube" : "2d");
	return out->oom ? RC_NOMEM : RC_OK;
}

const struct view_platform view_platform_ps3 = {
    .decoders = &skate_platform_ps3,
    .descriptor = ps3_descriptor,
    .vdes_text = ps3_vdes_text,
    .vb_text = ps3_vb_text,
    .ib_text = ps3_ib_text,
    .texture_text = ps3_texture_text,
    .texture_info_line = ps3_texture_info_line,
};
