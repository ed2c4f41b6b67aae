/* Text views of the Xbox 360 mesh objects (docs/xbox360.md, "Models"): meshes/NN/descriptor.txt
 * and objects/NNNN.{VertexDescriptor,VertexBuffer,IndexBuffer}.txt. Everything else a model
 * shows is platform-neutral and rendered by view_psg_mesh.c. */
#include <stdio.h>
#include <string.h>

#include "psgfs/formats/skate_x360.h"
#include "tree/view_psg.h"

static const char *class_name(uint32_t c)
{
	return c == 1 ? "PERVERTEX" : c == 2 ? "PERINSTANCE" : c == 0 ? "NA" : "?";
}

static void format_field(struct buf *out, uint32_t code)
{
	const char *fn = skate_x360_format_name(code);

	if (fn)
		buf_puts(out, fn);
	else
		buf_printf(out, "0x%08X", code);
}

enum rc view_x360_descriptor(const struct skate_scene *sc, size_t mesh, struct buf *out)
{
	const struct skate_scene_mesh *m = &sc->meshes[mesh];
	const struct skate_vdes *v = &m->desc;
	char tb[16], ub[16], enc[64];

	buf_printf(out, "mesh: %zu\ndecodable: %s\n", mesh, m->ok ? "yes" : "no");
	if (m->vdes != SKATE_NONE)
		buf_printf(out, "vertex descriptor: object %u\n", m->vdes);
	else
		buf_puts(out, "vertex descriptor: none\n");
	if (!m->has_desc)
		return out->oom ? RC_NOMEM : RC_OK;
	buf_printf(out,
		   "stride: %u\nvertex count: %u\ntypes flags: 0x%08X\nelements: %u\n"
		   "instance streams: %u\nposition encoding: %s\n",
		   m->stride, m->vertex_count, v->types_flags, v->num_elements, v->instance_streams,
		   m->pos_encoding[0] ? m->pos_encoding : "none");
	buf_puts(out, "\nelement\ttype\tformat\tcomponents\toffset\tstride\tstream\tclass\tusable"
		      "\tdecoded as\tusage\n");
	for (unsigned i = 0; i < v->n_el; i++) {
		const struct skate_velem *e = &v->el[i];

		buf_printf(out, "%u\t%s\t", i, skate_x360_etype_name(e->type, tb));
		format_field(out, e->format);
		buf_printf(out, "\t%u\t%u\t%u\t%u\t%s\t%s\t", e->num_components, e->offset,
			   e->stride, e->stream, class_name(e->elem_class),
			   v->elem[i].usable ? "yes" : "no");
		if (v->elem[i].usable) {
			skate_elem_encoding(&v->elem[i], enc);
			buf_puts(out, enc);
		} else {
			buf_putc(out, '-');
		}
		buf_printf(out, "\t%s %u\n", skate_x360_usage_name(e->usage, ub), e->usage_index);
	}
	return out->oom ? RC_NOMEM : RC_OK;
}

void view_x360_vdes_text(struct buf *out, const struct skate_vdes *v)
{
	char tb[16], ub[16];

	buf_printf(out,
		   "m_d3dVertexDeclaration: 0x%08X\nm_typesFlags: 0x%08X\nm_numElements: %u\n"
		   "m_refCount: %u\nm_instanceStreams: %u\nm_pad0: %u\nstride: %u\n",
		   v->decl, v->types_flags, v->num_elements, v->ref_count, v->instance_streams,
		   v->pad0, v->stride);
	for (unsigned i = 0; i < v->n_el; i++) {
		const struct skate_velem *e = &v->el[i];

		buf_printf(out, "element %u: type %s format ", i,
			   skate_x360_etype_name(e->type, tb));
		format_field(out, e->format);
		buf_printf(out,
			   " (0x%08X) method %u usage %s %u stream %u offset %u class %s (%u)%s\n",
			   e->format, e->method, skate_x360_usage_name(e->usage, ub),
			   e->usage_index, e->stream, e->offset, class_name(e->elem_class),
			   e->elem_class, v->elem[i].usable ? "" : " UNUSABLE");
	}
	buf_puts(out, "after the elements:");
	for (unsigned i = 0; i < v->trailer_len; i++)
		buf_printf(out, " %02X", v->trailer[i]);
	buf_puts(out, v->trailer_len ? " (byte 0: stride)\n" : " nothing\n");
}

/* The row before a buffer object, which holds its data (docs/xbox360.md, "Models"). */
static void base_res_line(struct buf *out, const struct arena *a, uint32_t idx)
{
	buf_puts(out, "base resource (the row before): ");
	if (idx == 0 || idx > a->n_dict || !a->dict[idx - 1].base_resource) {
		buf_puts(out, "none\n");
		return;
	}
	view_obj_label(a, idx - 1, out);
	buf_printf(out, " (%u bytes)\n", a->dict[idx - 1].size);
}

static void d3d_words(struct buf *out, const uint32_t w[6])
{
	buf_printf(out,
		   "Common: 0x%08X\nReferenceCount: %u\nFence: 0x%08X\nReadFence: 0x%08X\n"
		   "Identifier: 0x%08X\nBaseFlush: 0x%08X\n",
		   w[0], w[1], w[2], w[3], w[4], w[5]);
}

void view_x360_vb_text(struct buf *out, const struct arena *a, uint32_t idx,
		       const struct skate_vb *v)
{
	base_res_line(out, a, idx);
	d3d_words(out, v->d3d);
	buf_printf(out,
		   "fetch constant: 0x%08X 0x%08X (type %u, address 0x%X dwords, byte swap %u, "
		   "size %u dwords)\nm_bufferSize: %u\nm_type: %u\n",
		   v->fetch[0], v->fetch[1], v->fetch[0] & 3, v->fetch[0] >> 2, v->fetch[1] & 3,
		   v->fetch[1] >> 2 & 0xFFFFFF, v->buffer_size, v->vb_type);
}

void view_x360_ib_text(struct buf *out, const struct arena *a, uint32_t idx,
		       const struct skate_ib *v)
{
	base_res_line(out, a, idx);
	d3d_words(out, v->d3d);
	buf_printf(out,
		   "index size: %u-bit (Common bit 31)\nbyte swap: %u (Common bits 29-30)\n"
		   "Address: 0x%08X\nSize: %u\nm_numIndices: %u\n",
		   8 * v->width, v->d3d[0] >> SX360_IB_ENDIAN_SHIFT & 3, v->address, v->size,
		   v->num_indices);
}
