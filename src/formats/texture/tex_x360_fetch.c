/*
 * Xbox 360 Texture objects as stored (tex_x360.h): the six-dword texture fetch constant split
 * into fields and packed back (bit positions as in Xenia's xenos.h, xe_gpu_texture_fetch_t),
 * the 0x34-byte object around it, and the one reader of that object from an arena. The
 * layout the fields describe is tex_x360.c's.
 */
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/tex_x360.h"

/* --- fetch constant --- */

static uint32_t bits(uint32_t v, unsigned at, unsigned n)
{
	return v >> at & ((1u << n) - 1);
}

static int32_t sbits(uint32_t v, unsigned at, unsigned n)
{
	uint32_t u = bits(v, at, n);

	return (u & 1u << (n - 1)) ? (int32_t)u - (int32_t)(1u << n) : (int32_t)u;
}

static void fetch_size_decode(uint32_t d2, struct tex_x360_fetch *f)
{
	f->width = f->height = f->depth = 1;
	f->stack_depth = 0;
	switch (f->dimension) {
	case X360TEX_DIM_1D:
		f->width = bits(d2, 0, 24) + 1;
		break;
	case X360TEX_DIM_3D:
		f->width = bits(d2, 0, 11) + 1;
		f->height = bits(d2, 11, 11) + 1;
		f->depth = bits(d2, 22, 10) + 1;
		break;
	default: /* 2D, stacked 2D, cube */
		f->width = bits(d2, 0, 13) + 1;
		f->height = bits(d2, 13, 13) + 1;
		f->stack_depth = (uint8_t)bits(d2, 26, 6);
		if (f->stacked && f->dimension == X360TEX_DIM_2D)
			f->depth = f->stack_depth + 1u;
		break;
	}
}

void tex_x360_fetch_decode(const uint32_t dw[6], struct tex_x360_fetch *f)
{
	memset(f, 0, sizeof *f);
	memcpy(f->dw, dw, sizeof f->dw);
	f->type = (uint8_t)bits(dw[0], 0, 2);
	for (unsigned i = 0; i < 4; i++)
		f->sign[i] = (uint8_t)bits(dw[0], 2 + 2 * i, 2);
	for (unsigned i = 0; i < 3; i++)
		f->clamp[i] = (uint8_t)bits(dw[0], 10 + 3 * i, 3);
	f->pitch = (uint16_t)bits(dw[0], 22, 9);
	f->tiled = bits(dw[0], 31, 1);
	f->format = (uint8_t)bits(dw[1], 0, 6);
	f->endian = (uint8_t)bits(dw[1], 6, 2);
	f->request_size = (uint8_t)bits(dw[1], 8, 2);
	f->stacked = bits(dw[1], 10, 1);
	f->nearest_clamp_policy = bits(dw[1], 11, 1);
	f->base_address = bits(dw[1], 12, 20);
	f->num_format = (uint8_t)bits(dw[3], 0, 1);
	f->swizzle = (uint16_t)bits(dw[3], 1, 12);
	f->exp_adjust = (int8_t)sbits(dw[3], 13, 6);
	f->mag_filter = (uint8_t)bits(dw[3], 19, 2);
	f->min_filter = (uint8_t)bits(dw[3], 21, 2);
	f->mip_filter = (uint8_t)bits(dw[3], 23, 2);
	f->aniso_filter = (uint8_t)bits(dw[3], 25, 3);
	f->arbitrary_filter = (uint8_t)bits(dw[3], 28, 3);
	f->border_size = (uint8_t)bits(dw[3], 31, 1);
	f->vol_mag_filter = (uint8_t)bits(dw[4], 0, 1);
	f->vol_min_filter = (uint8_t)bits(dw[4], 1, 1);
	f->mip_min_level = (uint8_t)bits(dw[4], 2, 4);
	f->mip_max_level = (uint8_t)bits(dw[4], 6, 4);
	f->mag_aniso_walk = (uint8_t)bits(dw[4], 10, 1);
	f->min_aniso_walk = (uint8_t)bits(dw[4], 11, 1);
	f->lod_bias = (int16_t)sbits(dw[4], 12, 10);
	f->grad_exp_adjust_h = (int8_t)sbits(dw[4], 22, 5);
	f->grad_exp_adjust_v = (int8_t)sbits(dw[4], 27, 5);
	f->border_color = (uint8_t)bits(dw[5], 0, 2);
	f->force_bc_w_to_max = (uint8_t)bits(dw[5], 2, 1);
	f->tri_clamp = (uint8_t)bits(dw[5], 3, 2);
	f->aniso_bias = (int8_t)sbits(dw[5], 5, 4);
	f->dimension = (uint8_t)bits(dw[5], 9, 2);
	f->packed_mips = bits(dw[5], 11, 1);
	f->mip_address = bits(dw[5], 12, 20);
	fetch_size_decode(dw[2], f); /* needs dimension and stacked */
}

/* v (possibly negative) into an n-bit field at `at`. */
static uint32_t put(int64_t v, unsigned at, unsigned n)
{
	uint32_t mask = n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1;

	return ((uint32_t)v & mask) << at;
}

static uint32_t fetch_size_encode(const struct tex_x360_fetch *f)
{
	switch (f->dimension) {
	case X360TEX_DIM_1D:
		return put(f->width - 1, 0, 24);
	case X360TEX_DIM_3D:
		return put(f->width - 1, 0, 11) | put(f->height - 1, 11, 11) |
		       put(f->depth - 1, 22, 10);
	default:
		return put(f->width - 1, 0, 13) | put(f->height - 1, 13, 13) |
		       put(f->stack_depth, 26, 6);
	}
}

void tex_x360_fetch_encode(const struct tex_x360_fetch *f, uint32_t dw[6])
{
	dw[0] = put(f->type, 0, 2) | put(f->pitch, 22, 9) | put(f->tiled, 31, 1);
	for (unsigned i = 0; i < 4; i++)
		dw[0] |= put(f->sign[i], 2 + 2 * i, 2);
	for (unsigned i = 0; i < 3; i++)
		dw[0] |= put(f->clamp[i], 10 + 3 * i, 3);
	dw[1] = put(f->format, 0, 6) | put(f->endian, 6, 2) | put(f->request_size, 8, 2) |
		put(f->stacked, 10, 1) | put(f->nearest_clamp_policy, 11, 1) |
		put(f->base_address, 12, 20);
	dw[2] = fetch_size_encode(f);
	dw[3] = put(f->num_format, 0, 1) | put(f->swizzle, 1, 12) | put(f->exp_adjust, 13, 6) |
		put(f->mag_filter, 19, 2) | put(f->min_filter, 21, 2) | put(f->mip_filter, 23, 2) |
		put(f->aniso_filter, 25, 3) | put(f->arbitrary_filter, 28, 3) |
		put(f->border_size, 31, 1);
	dw[4] = put(f->vol_mag_filter, 0, 1) | put(f->vol_min_filter, 1, 1) |
		put(f->mip_min_level, 2, 4) | put(f->mip_max_level, 6, 4) |
		put(f->mag_aniso_walk, 10, 1) | put(f->min_aniso_walk, 11, 1) |
		put(f->lod_bias, 12, 10) | put(f->grad_exp_adjust_h, 22, 5) |
		put(f->grad_exp_adjust_v, 27, 5);
	dw[5] = put(f->border_color, 0, 2) | put(f->force_bc_w_to_max, 2, 1) |
		put(f->tri_clamp, 3, 2) | put(f->aniso_bias, 5, 4) | put(f->dimension, 9, 2) |
		put(f->packed_mips, 11, 1) | put(f->mip_address, 12, 20);
}

enum rc tex_x360_object_decode(const uint8_t *obj, size_t len, struct tex_x360_object *out)
{
	uint32_t dw[6];

	memset(out, 0, sizeof *out);
	if (!obj || len < X360TEX_OBJECT_SIZE)
		return RC_TRUNCATED;
	out->common = ld_u32be(obj);
	out->ref_count = ld_u32be(obj + 4);
	out->fence = ld_u32be(obj + 8);
	out->read_fence = ld_u32be(obj + 12);
	out->identifier = ld_u32be(obj + 16);
	out->base_flush = ld_u32be(obj + 20);
	out->mip_flush = ld_u32be(obj + 24);
	for (unsigned i = 0; i < 6; i++)
		dw[i] = ld_u32be(obj + X360TEX_FETCH_OFFSET + 4 * i);
	tex_x360_fetch_decode(dw, &out->fetch);
	return RC_OK;
}

static void st_u32be(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void tex_x360_object_encode(const struct tex_x360_object *o, uint8_t out[X360TEX_OBJECT_SIZE])
{
	uint32_t dw[6];
	const uint32_t head[7] = {o->common,	 o->ref_count,	o->fence,    o->read_fence,
				  o->identifier, o->base_flush, o->mip_flush};

	for (unsigned i = 0; i < 7; i++)
		st_u32be(out + 4 * i, head[i]);
	tex_x360_fetch_encode(&o->fetch, dw);
	for (unsigned i = 0; i < 6; i++)
		st_u32be(out + X360TEX_FETCH_OFFSET + 4 * i, dw[i]);
}

enum rc tex_x360_read_object(const struct src *s, const struct arena *a, uint32_t idx,
			     struct tex_x360_object *o)
{
	uint8_t raw[X360TEX_OBJECT_SIZE];
	enum rc r;

	memset(o, 0, sizeof *o);
	if (idx >= a->n_dict)
		return RC_BOUNDS;
	if (arena_row(a, idx)->type_id != RW_T_TEXTURE)
		return RC_UNSUPPORTED;
	if (!arena_row(a, idx)->readable)
		return RC_BOUNDS;
	if (arena_row(a, idx)->size < sizeof raw)
		return RC_TRUNCATED;
	r = src_read(s, arena_row(a, idx)->start, raw, sizeof raw);
	return r == RC_OK ? tex_x360_object_decode(raw, sizeof raw, o) : r;
}
