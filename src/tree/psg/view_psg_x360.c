/* The Xbox 360 row of the view platform table (view_psg.h, struct view_platform): the text of
 * what Xbox 360 arenas store their own way (docs/xbox360.md, "Models", "Texture object"):
 * meshes/NN/descriptor.txt, objects/NNNN.{VertexDescriptor,VertexBuffer,IndexBuffer}.txt,
 * Texture objects and their info.txt lines. Everything else a model shows is platform-neutral
 * and rendered by view_psg_mesh.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/skate_platform.h"
#include "psgfs/formats/skate_x360.h"
#include "psgfs/formats/tex_x360.h"
#include "psgfs/formats/texture.h"
#include "tree/psg/view_psg.h"

static void format_field(struct buf *out, uint32_t code)
{
	const char *fn = skate_x360_format_name(code);

	if (fn)
		buf_puts(out, fn);
	else
		buf_printf(out, "0x%08X", code);
}

static enum rc x360_descriptor(const struct skate_scene *sc, size_t mesh, struct buf *out)
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
			   e->stride, e->stream, view_elem_class_name(e->elem_class),
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

static void x360_vdes_text(struct buf *out, const struct skate_vdes *v)
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
		buf_printf(
		    out, " (0x%08X) method %u usage %s %u stream %u offset %u class %s (%u)%s\n",
		    e->format, e->method, skate_x360_usage_name(e->usage, ub), e->usage_index,
		    e->stream, e->offset, view_elem_class_name(e->elem_class), e->elem_class,
		    v->elem[i].usable ? "" : " UNUSABLE");
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
	if (idx == 0 || idx > a->n_dict || !arena_row(a, idx - 1)->base_resource) {
		buf_puts(out, "none\n");
		return;
	}
	view_obj_label(a, idx - 1, out);
	buf_printf(out, " (%u bytes)\n", arena_row(a, idx - 1)->size);
}

static void d3d_words(struct buf *out, const uint32_t w[6])
{
	buf_printf(out,
		   "Common: 0x%08X\nReferenceCount: %u\nFence: 0x%08X\nReadFence: 0x%08X\n"
		   "Identifier: 0x%08X\nBaseFlush: 0x%08X\n",
		   w[0], w[1], w[2], w[3], w[4], w[5]);
}

static void x360_vb_text(struct buf *out, const struct arena *a, uint32_t idx,
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

static void x360_ib_text(struct buf *out, const struct arena *a, uint32_t idx,
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

/* ---- textures (docs/xbox360.md, "Texture object") ---- */

/* The object by the platform's one reader; unreadable is out of bounds, too short corrupt. */
static enum rc x360_header(const struct src *s, const struct arena *a, uint32_t idx,
			   struct tex_x360_object *o)
{
	enum rc r = tex_x360_read_object(s, a, idx, o);

	if (r == RC_OK || r == RC_UNSUPPORTED)
		return r;
	return r == RC_TRUNCATED && arena_row(a, idx)->size < X360TEX_OBJECT_SIZE ? RC_CORRUPT
										  : RC_BOUNDS;
}

static const char *const x360_dims[] = {"1D", "2D", "3D", "cube"};

/* objects/NNNN.Texture.txt of an Xbox 360 arena: the object words, the fetch constant. */
static enum rc x360_texture_text(const struct src *s, const struct arena *a, uint32_t idx,
				 struct buf *out, struct diag *problems)
{
	struct tex_x360_object o;
	const struct tex_x360_fetch *f = &o.fetch;
	const char *fname;
	struct tex_desc td;
	enum rc r = x360_header(s, a, idx, &o);

	if (r != RC_OK)
		return r;
	fname = tex_x360_format_name(f->format);
	buf_printf(out, "object: %04u.Texture\n", idx);
	buf_printf(out, "common: 0x%08X\nref_count: %u\nfence: 0x%08X\nread_fence: 0x%08X\n",
		   o.common, o.ref_count, o.fence, o.read_fence);
	buf_printf(out, "identifier: 0x%08X\nbase_flush: 0x%08X\nmip_flush: 0x%08X\n", o.identifier,
		   o.base_flush, o.mip_flush);
	buf_printf(out, "fetch_constant: %08X %08X %08X %08X %08X %08X\n", f->dw[0], f->dw[1],
		   f->dw[2], f->dw[3], f->dw[4], f->dw[5]);
	buf_printf(out, "format: 0x%02X %s\nendian: %u\ntiled: %s\n", f->format,
		   fname ? fname : "unknown", f->endian, f->tiled ? "yes" : "no");
	buf_printf(out, "dimension: %s\nwidth: %u\nheight: %u\ndepth: %u\n",
		   x360_dims[f->dimension & 3], f->width, f->height, f->depth);
	buf_printf(out, "pitch: %u\nbase_address: 0x%08X\nmip_address: 0x%08X\n",
		   (unsigned)f->pitch << 5, f->base_address << 12, f->mip_address << 12);
	buf_printf(out, "mip_min_level: %u\nmip_max_level: %u\npacked_mips: %s\n", f->mip_min_level,
		   f->mip_max_level, f->packed_mips ? "yes" : "no");
	buf_printf(out, "swizzle: 0x%03X\nnum_format: %u\n", f->swizzle, f->num_format);
	if (idx > 0)
		buf_printf(out, "texels: %04u.%s (the row before)\n", idx - 1,
			   arena_row(a, idx - 1)->base_resource ? "BaseResource"
								: "(not a BaseResource)");
	tex_describe(s, a, idx, &td, problems); /* the checks the pictures make */
	return out->oom ? RC_NOMEM : RC_OK;
}

/* info.txt names a format by what its .dds holds, in the PS3 (GCM) words, so byte-identical
 * twins read the same on both platforms (DXT4_5 is DXT5, 8_8_8_8 is A8R8G8B8); formats the
 * PS3 lacks (DXN) keep their Xenos name. The object's .txt keeps the hardware name. */
static const char *common_format_name(enum tex_x360_canon canon)
{
	enum tex_kind k;
	uint8_t base;

	if (!tex_x360_canon_kind(canon, &k) || !(base = tex_ps3_base_for_kind(k)))
		return NULL;
	return tex_ps3_format_name(base);
}

static enum rc x360_texture_info_line(const struct src *s, const struct arena *a, uint32_t idx,
				      const char *name, struct buf *out)
{
	struct tex_x360_object o;
	struct tex_x360_layout l;
	const char *fname;
	bool ok;
	enum rc r = x360_header(s, a, idx, &o);

	if (r != RC_OK)
		return r;
	ok = tex_x360_layout_get(&o.fetch, &l, NULL, 0) == RC_OK;
	fname = ok ? common_format_name(l.canon) : NULL;
	if (!fname)
		fname = tex_x360_format_name(o.fetch.format);
	buf_printf(out, "%s %s %ux%u %u %s\n", name, fname ? fname : "unknown", o.fetch.width,
		   o.fetch.height, ok ? l.levels : 0, o.fetch.dimension == 3 ? "cube" : "2d");
	return out->oom ? RC_NOMEM : RC_OK;
}

const struct view_platform view_platform_x360 = {
    .decoders = &skate_platform_x360,
    .descriptor = x360_descriptor,
    .vdes_text = x360_vdes_text,
    .vb_text = x360_vb_text,
    .ib_text = x360_ib_text,
    .texture_text = x360_texture_text,
    .texture_info_line = x360_texture_info_line,
};
