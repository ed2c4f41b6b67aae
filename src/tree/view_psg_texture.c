/* Text views of PS3 Texture objects: objects/NNNN.Texture.txt and the info.txt lines. */
#include <stdlib.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/texture.h"
#include "tree/view_psg.h"

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

static enum rc read_header(const struct src *s, const struct arena *a, uint32_t idx,
			   struct ps3_texture *t)
{
	uint8_t *p = NULL;
	size_t len = 0;
	enum rc r;

	if (idx >= a->n_dict)
		return RC_BOUNDS;
	if (a->dict[idx].type_id != RW_T_TEXTURE)
		return RC_UNSUPPORTED;
	r = arena_read_object(s, a, idx, &p, &len);
	if (r != RC_OK)
		return RC_BOUNDS;
	r = ps3_texture_decode(p, len, a->big_endian, t);
	free(p);
	return r == RC_OK ? RC_OK : RC_CORRUPT;
}

/* Problems tex_describe finds (the same checks the pictures make), as an indented list. */
static void describe_problems(const struct src *s, const struct arena *a, uint32_t idx,
			      struct diag *d, struct buf *out)
{
	struct tex_desc td;

	tex_describe(s, a, idx, &td, d);
	if (d->n) {
		buf_puts(out, "problems:\n");
		for (size_t i = 0; i < d->n; i++)
			buf_printf(out, "  %s\n", d->msg[i]);
	}
}

static enum rc x360_header(const struct src *s, const struct arena *a, uint32_t idx,
			   struct tex_x360_object *o)
{
	uint8_t *p = NULL;
	size_t len = 0;
	enum rc r;

	if (idx >= a->n_dict)
		return RC_BOUNDS;
	if (a->dict[idx].type_id != RW_T_TEXTURE)
		return RC_UNSUPPORTED;
	r = arena_read_object(s, a, idx, &p, &len);
	if (r != RC_OK)
		return RC_BOUNDS;
	r = tex_x360_object_decode(p, len, o);
	free(p);
	return r == RC_OK ? RC_OK : RC_CORRUPT;
}

static const char *const x360_dims[] = {"1D", "2D", "3D", "cube"};

/* objects/NNNN.Texture.txt of an Xbox 360 arena: the object words, the fetch constant. */
static enum rc x360_object_text(const struct src *s, const struct arena *a, uint32_t idx,
				struct buf *out)
{
	struct tex_x360_object o;
	const struct tex_x360_fetch *f = &o.fetch;
	const char *fname;
	struct diag d;
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
			   a->dict[idx - 1].base_resource ? "BaseResource"
							  : "(not a BaseResource)");
	diag_init(&d);
	describe_problems(s, a, idx, &d, out);
	diag_free(&d);
	return out->oom ? RC_NOMEM : RC_OK;
}

enum rc view_texture_object_text(const struct src *s, const struct arena *a, uint32_t idx,
				 struct buf *out)
{
	struct ps3_texture t;
	struct tex_layout l;
	struct diag d;
	char why[256], tmp[16];
	const char *fname;
	enum rc r, lr;

	if (a->h.plat == RW_XB2)
		return x360_object_text(s, a, idx, out);
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
			   rw_type_label(a->dict[t.m_buffer].type_id, tmp));
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
		buf_printf(out, "actual_bytes: %u\n", a->dict[t.m_buffer].size);

	/* the same checks tex_describe makes, as problem lines */
	diag_init(&d);
	if (lr == RC_OK) {
		struct tex_desc td;

		tex_describe(s, a, idx, &td, &d);
	} else
		diag_add(&d, "object %u (Texture): %s", idx, why);
	if (t.format_copy != t.format)
		diag_add(&d, "object %u (Texture): format copy 0x%02X differs from format 0x%02X",
			 idx, t.format_copy, t.format);
	if (d.n) {
		buf_puts(out, "problems:\n");
		for (size_t i = 0; i < d.n; i++)
			buf_printf(out, "  %s\n", d.msg[i]);
	}
	diag_free(&d);
	return out->oom ? RC_NOMEM : RC_OK;
}

enum rc view_texture_info_line(const struct src *s, const struct arena *a, uint32_t idx,
			       const char *name, struct buf *out)
{
	struct ps3_texture t;
	const char *fname;
	bool cube;
	enum rc r;

	if (a->h.plat == RW_XB2) {
		struct tex_x360_object o;
		struct tex_x360_layout l;

		r = x360_header(s, a, idx, &o);
		if (r != RC_OK)
			return r;
		fname = tex_x360_format_name(o.fetch.format);
		buf_printf(out, "%s %s %ux%u %u %s\n", name, fname ? fname : "unknown",
			   o.fetch.width, o.fetch.height,
			   tex_x360_layout_get(&o.fetch, &l, NULL, 0) == RC_OK ? l.levels : 0,
			   o.fetch.dimension == 3 ? "cube" : "2d");
		return out->oom ? RC_NOMEM : RC_OK;
	}
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
