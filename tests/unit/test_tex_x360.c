/*
 * Xbox 360 textures: fetch-constant fields (including two constants from real .rx2 files),
 * tiled addressing and mip-tail placement against independent spellings, tile/untile round
 * trips, generated Xbox 360 arenas against their PS3 twins decoded by texture_load, DXN
 * against its source, and hostile Texture objects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_x360_textures.h"
#include "psgfs/formats/tex_x360.h"
#include "psgfs/formats/texture.h"
#include "sanitizer.h"

/* --- a read callback over memory that checks and records what is read --- */

struct rsrc {
	const uint8_t *p; /* NULL: serve 0x5A bytes */
	uint64_t size;
	uint64_t max_n, max_end;
	bool fail;
};

static enum rc rs_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct rsrc *r = ctx;

	if (r->fail)
		return RC_IO;
	if (off > r->size || n > r->size - off)
		return RC_BOUNDS;
	if (r->p)
		memcpy(dst, r->p + off, n);
	else
		memset(dst, 0x5A, n);
	r->max_n = n > r->max_n ? n : r->max_n;
	r->max_end = off + n > r->max_end ? off + n : r->max_end;
	return RC_OK;
}

/*
 * Buffers for the many textures of the round trips and random constants: under ASan each fresh
 * allocation of 128 KiB or more is a new mapping, its page faults and clearing. A buffer of n
 * bytes is taken from a grow-only one, at its end (16-aligned), so that a write past n still
 * meets ASan's redzone.
 */
struct scratch {
	uint8_t *p;
	size_t cap;
};
static struct scratch sc_canon, sc_res, sc_back;

static uint8_t *scratch_get(struct scratch *s, size_t n)
{
	n = n ? n : 1;
	if (n > s->cap) {
		free(s->p);
		s->p = malloc(n);
		s->cap = s->p ? n : 0;
	}
	return s->p ? s->p + ((s->cap - n) & ~(size_t)15) : NULL;
}

static int scratch_free(void **st)
{
	struct scratch *all[] = {&sc_canon, &sc_res, &sc_back};

	(void)st;
	for (size_t i = 0; i < 3; i++) {
		free(all[i]->p);
		*all[i] = (struct scratch){0};
	}
	return 0;
}

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/*
 * The round trips and the random constants are many repetitions of one code path: they are
 * dealt between the builds (tests/README.md, "Keeping the suite fast"). The plain build takes
 * cases 0-2 of every 4, the ASan+UBSan build the 4th; the union is every case. Each case draws
 * from its own seed, so a case is the same in whichever build runs it.
 */
static bool my_share(size_t i)
{
	return (i % 4 == 3) == (PSGFS_ASAN != 0);
}

static void rnd_seed(size_t i)
{
	rnd_state = (uint32_t)(12345u + i * 2654435761u) | 1u;
}

/* --- fetch constant --- */

static void test_fetch_fields(void **st)
{
	/* dword by dword, every field set to a distinct value */
	const uint32_t dw[6] = {
	    2u | 1u << 2 | 2u << 4 | 3u << 6 | 1u << 8 | 5u << 10 | 6u << 13 | 7u << 16 |
		300u << 22 | 1u << 31,
	    0x14u | 2u << 6 | 3u << 8 | 0u << 10 | 1u << 11 | 0xABCDEu << 12,
	    (100u - 1) | (60u - 1) << 13 | 5u << 26,
	    1u | 0x60Au << 1 | 0x3Fu << 13 | 1u << 19 | 2u << 21 | 3u << 23 | 5u << 25 | 6u << 28 |
		1u << 31,
	    1u | 1u << 1 | 3u << 2 | 9u << 6 | 1u << 10 | 0u << 11 | 0x3FFu << 12 | 0x10u << 22 |
		0x0Fu << 27,
	    3u | 1u << 2 | 2u << 3 | 0x8u << 5 | 3u << 9 | 1u << 11 | 0x12345u << 12,
	};
	struct tex_x360_fetch f;
	uint32_t back[6];

	(void)st;
	tex_x360_fetch_decode(dw, &f);
	assert_int_equal(f.type, 2);
	assert_int_equal(f.sign[0], 1);
	assert_int_equal(f.sign[1], 2);
	assert_int_equal(f.sign[2], 3);
	assert_int_equal(f.sign[3], 1);
	assert_int_equal(f.clamp[0], 5);
	assert_int_equal(f.clamp[1], 6);
	assert_int_equal(f.clamp[2], 7);
	assert_int_equal(f.pitch, 300);
	assert_true(f.tiled);
	assert_int_equal(f.format, X360TEX_FMT_DXT4_5);
	assert_int_equal(f.endian, X360TEX_END_8IN32);
	assert_int_equal(f.request_size, 3);
	assert_false(f.stacked);
	assert_true(f.nearest_clamp_policy);
	assert_int_equal(f.base_address, 0xABCDE);
	assert_int_equal(f.dimension, X360TEX_DIM_CUBE);
	assert_int_equal(f.width, 100);
	assert_int_equal(f.height, 60);
	assert_int_equal(f.stack_depth, 5);
	assert_int_equal(f.depth, 1);
	assert_int_equal(f.num_format, 1);
	assert_int_equal(f.swizzle, 0x60A);
	assert_int_equal(f.exp_adjust, -1);
	assert_int_equal(f.mag_filter, 1);
	assert_int_equal(f.min_filter, 2);
	assert_int_equal(f.mip_filter, 3);
	assert_int_equal(f.aniso_filter, 5);
	assert_int_equal(f.arbitrary_filter, 6);
	assert_int_equal(f.border_size, 1);
	assert_int_equal(f.vol_mag_filter, 1);
	assert_int_equal(f.vol_min_filter, 1);
	assert_int_equal(f.mip_min_level, 3);
	assert_int_equal(f.mip_max_level, 9);
	assert_int_equal(f.mag_aniso_walk, 1);
	assert_int_equal(f.min_aniso_walk, 0);
	assert_int_equal(f.lod_bias, -1);
	assert_int_equal(f.grad_exp_adjust_h, -16);
	assert_int_equal(f.grad_exp_adjust_v, 15);
	assert_int_equal(f.border_color, 3);
	assert_int_equal(f.force_bc_w_to_max, 1);
	assert_int_equal(f.tri_clamp, 2);
	assert_int_equal(f.aniso_bias, -8);
	assert_true(f.packed_mips);
	assert_int_equal(f.mip_address, 0x12345);
	tex_x360_fetch_encode(&f, back);
	assert_memory_equal(back, dw, sizeof dw);
	assert_string_equal(tex_x360_format_name(f.format), "DXT4_5");
}

static void test_fetch_dimensions(void **st)
{
	uint32_t dw[6] = {0};
	struct tex_x360_fetch f;

	(void)st;
	dw[5] = 0u << 9; /* 1D: 24-bit width */
	dw[2] = 0x00ABCDEFu;
	tex_x360_fetch_decode(dw, &f);
	assert_int_equal(f.width, 0xABCDF0);
	assert_int_equal(f.height, 1);
	dw[5] = 2u << 9; /* 3D: 11, 11, 10 bits */
	dw[2] = 10u | 20u << 11 | 30u << 22;
	tex_x360_fetch_decode(dw, &f);
	assert_int_equal(f.width, 11);
	assert_int_equal(f.height, 21);
	assert_int_equal(f.depth, 31);
	dw[5] = 1u << 9; /* stacked 2D: depth = stack depth + 1 */
	dw[1] = 1u << 10;
	dw[2] = 7u | 3u << 13 | 9u << 26;
	tex_x360_fetch_decode(dw, &f);
	assert_true(f.stacked);
	assert_int_equal(f.width, 8);
	assert_int_equal(f.height, 4);
	assert_int_equal(f.depth, 10);
	/* every field pattern survives decode + encode (dword 0 bits 19-21 are padding) */
	for (int i = 0; i < 20000; i++) {
		uint32_t in[6], out[6];

		for (int k = 0; k < 6; k++)
			in[k] = rnd();
		in[0] &= ~(7u << 19);
		in[5] = (in[5] & ~(3u << 9)) | (1u + (rnd() & 2)) << 9; /* 2D or cube */
		tex_x360_fetch_decode(in, &f);
		tex_x360_fetch_encode(&f, out);
		assert_memory_equal(in, out, sizeof in);
	}
	for (unsigned fmt = 0; fmt < 64; fmt++)
		assert_non_null(tex_x360_format_name((uint8_t)fmt));
	assert_null(tex_x360_format_name(64));
	assert_string_equal(tex_x360_format_name(X360TEX_FMT_DXN), "DXN");
	assert_string_equal(tex_x360_format_name(X360TEX_FMT_8_8_8_8), "8_8_8_8");
}

/* A fetch constant from a real file: only dw1 (format), dw2 (size), dw4 and dw5 given. */
static void real_fetch(uint8_t fmt, uint32_t w, uint32_t h, uint32_t dw4, uint32_t dw5,
		       struct tex_x360_fetch *f)
{
	const uint32_t dw[6] = {2u | 1u << 31 | (w <= 16 ? 4u : (w / 4 + 31) / 32 * 4) << 22,
				fmt | X360TEX_END_8IN16 << 6,
				(w - 1) | (h - 1) << 13,
				0,
				dw4,
				dw5};

	tex_x360_fetch_decode(dw, f);
}

static void test_real_constants(void **st)
{
	struct tex_x360_fetch f;
	struct tex_x360_layout l;
	struct tex_x360_object o;
	uint32_t dw[6];
	/* the real 16x16 DXT1 mip tail: level -> texel position in the 32x32-block tile */
	static const uint32_t pos[5][2] = {{16, 0}, {8, 0}, {4, 0}, {0, 8}, {0, 4}};

	(void)st;
	/* 16x16 DXT1, 5 levels */
	real_fetch(X360TEX_FMT_DXT1, 16, 16, 0x100, 0x2A00, &f);
	assert_int_equal(f.mip_min_level, 0);
	assert_int_equal(f.mip_max_level, 4);
	assert_int_equal(f.dimension, X360TEX_DIM_2D);
	assert_true(f.packed_mips);
	assert_int_equal(f.mip_address, 2);
	assert_int_equal(tex_x360_layout_get(&f, &l, NULL, 0), RC_OK);
	assert_int_equal(l.levels, 5);
	assert_int_equal(l.packed_level, 0);
	assert_true(l.base_packed);
	assert_int_equal(l.full, 8192); /* the real base resource's exact size */
	assert_true(l.need <= 8192);
	assert_int_equal(l.mip_offset, 0x2000); /* = mip address 2 << 12 */
	for (uint32_t i = 0; i < 5; i++) {
		uint32_t x, y;

		assert_true(tex_x360_packed_offset(16, 16, i, &x, &y));
		assert_int_equal(x, pos[i][0]);
		assert_int_equal(y, pos[i][1]);
		assert_int_equal(l.lv[i].x_off * 4, pos[i][0]);
		assert_int_equal(l.lv[i].y_off * 4, pos[i][1]);
		assert_int_equal(l.lv[i].storage, 0);
		assert_int_equal(l.lv[i].pitch_units, 32);
		assert_true(l.lv[i].packed);
	}
	/* 32x32 DXT5, 1 level */
	real_fetch(X360TEX_FMT_DXT4_5, 32, 32, 0, 0x4A00, &f);
	assert_int_equal(f.mip_max_level, 0);
	assert_true(f.packed_mips);
	assert_int_equal(f.mip_address, 4);
	assert_int_equal(tex_x360_layout_get(&f, &l, NULL, 0), RC_OK);
	assert_int_equal(l.levels, 1);
	assert_int_equal(l.packed_level, 1);
	assert_false(l.lv[0].packed);
	assert_int_equal(l.full, 16384);
	assert_int_equal(l.mip_offset, 0x4000);
	/* the generator writes the same dw4 and dw5 for the same textures */
	assert_int_equal(gen_x360_texture_object(
			     &(struct gen_x360_spec){X360TEX_FMT_DXT1, 16, 16, 0, false}, &o),
			 RC_OK);
	tex_x360_fetch_encode(&o.fetch, dw);
	assert_int_equal(dw[4], 0x100);
	assert_int_equal(dw[5], 0x2A00);
	assert_int_equal(o.common, 3);
	assert_int_equal(gen_x360_texture_object(
			     &(struct gen_x360_spec){X360TEX_FMT_DXT4_5, 32, 32, 1, false}, &o),
			 RC_OK);
	tex_x360_fetch_encode(&o.fetch, dw);
	assert_int_equal(dw[4], 0);
	assert_int_equal(dw[5], 0x4A00);
	assert_int_equal(dw[2], 31u | 31u << 13);
	/* a public 512x512 DXT5 .rx2 (docs/xbox360.md, "Texture fetch constant"): all six words
	 * and the base resource size 0x60000 */
	assert_int_equal(gen_x360_texture_object(
			     &(struct gen_x360_spec){X360TEX_FMT_DXT4_5, 512, 512, 0, false}, &o),
			 RC_OK);
	tex_x360_fetch_encode(&o.fetch, dw);
	assert_int_equal(dw[0], 0x84000002u);
	assert_int_equal(dw[1], 0x00000054u);
	assert_int_equal(dw[2], 0x003FE1FFu);
	assert_int_equal(dw[3], 0x00000D10u);
	assert_int_equal(dw[4], 0x00000240u);
	assert_int_equal(dw[5], 0x00040A00u);
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	assert_int_equal(l.full, 0x60000);
	assert_int_equal(l.need, 0x60000);
	assert_int_equal(l.packed_level, 5);
	assert_int_equal(l.lv[5].storage, 0x5C000);
}

/* --- addressing against independent spellings --- */

/* XGAddress2DTiledOffset as the XDK spells it (element index), written independently. */
static uint32_t ref_xg_tiled(uint32_t x, uint32_t y, uint32_t w, uint32_t lb)
{
	uint32_t aw = (w + 31) & ~31u;
	uint32_t macro = ((x >> 5) + (y >> 5) * (aw >> 5)) << (lb + 7);
	uint32_t micro = ((x & 7) + ((y & 6) << 2)) << lb;
	uint32_t off =
	    macro + ((micro & ~15u) << 1) + (micro & 15) + ((y & 8) << (3 + lb)) + ((y & 1) << 4);

	return ((((off & ~511u) << 3) + ((off & 448) << 2) + (off & 63) + ((y & 16) << 7) +
		 ((((y & 8) >> 2) + (x >> 3)) & 3) * 64) >>
		lb);
}

static void test_tiled_offset(void **st)
{
	(void)st;
	for (uint32_t lb = 0; lb <= 4; lb++) {
		for (uint32_t pitch = 32; pitch <= 160; pitch += 32) {
			uint32_t h = 64,
				 stride = (uint32_t)align_up((uint64_t)pitch * h << lb, 4096);
			uint8_t *seen = calloc(stride, 1);

			assert_non_null(seen);
			for (uint32_t y = 0; y < h; y++) {
				for (uint32_t x = 0; x < pitch; x++) {
					uint32_t a = tex_x360_tiled_offset(x, y, pitch, lb);

					assert_int_equal(a, ref_xg_tiled(x, y, pitch, lb) << lb);
					/* a bijection into the 4 KiB-aligned storage */
					assert_true(a + (1u << lb) <= stride);
					assert_int_equal(seen[a], 0);
					seen[a] = 1;
				}
			}
			free(seen);
		}
	}
	/* far macro tiles */
	assert_int_equal(tex_x360_tiled_offset(8191, 8191, 8192, 4),
			 ref_xg_tiled(8191, 8191, 8192, 4) << 4);
}

static uint32_t clog2(uint32_t v)
{
	uint32_t l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

/* The mip-tail offset as reverse-engineered from D3D (tail base level, tail dims rounded to
 * powers of two), an independent spelling of GetPackedMipOffset for 2D. */
static bool ref_tail(uint32_t w, uint32_t h, uint32_t level, uint32_t *x, uint32_t *y)
{
	uint32_t m = clog2(w) < clog2(h) ? clog2(w) : clog2(h);
	uint32_t tb = m > 4 ? m - 4 : 0, rel, tw, th;
	bool wide;

	*x = *y = 0;
	if (level < tb)
		return false;
	rel = level - tb;
	tw = (1u << clog2(w)) >> tb;
	th = (1u << clog2(h)) >> tb;
	wide = clog2(th) < clog2(tw);
	if (rel < 3)
		*(wide ? y : x) = 16u >> rel;
	else if (wide)
		*x = tw >> (rel - 2);
	else
		*y = th >> (rel - 2);
	return true;
}

static void test_packed_offsets(void **st)
{
	static const uint32_t dims[] = {1,   2,	  3,   4,   5,	 7,   8,    9,	  15,	16,
					17,  24,  31,  32,  33,	 40,  60,   63,	  64,	65,
					100, 127, 128, 129, 256, 600, 1024, 1025, 4096, 8192};
	const size_t nd = sizeof dims / sizeof dims[0];

	(void)st;
	for (size_t i = 0; i < nd; i++) {
		for (size_t j = 0; j < nd; j++) {
			uint32_t w = dims[i], h = dims[j], top = clog2(w > h ? w : h);

			assert_int_equal(tex_x360_packed_level(w, h),
					 (clog2(w < h ? w : h) > 4 ? clog2(w < h ? w : h) - 4 : 0));
			for (uint32_t lv = 0; lv <= top; lv++) {
				uint32_t x, y, rx, ry;
				bool p = tex_x360_packed_offset(w, h, lv, &x, &y);

				assert_int_equal(p, ref_tail(w, h, lv, &rx, &ry));
				assert_int_equal(x, rx);
				assert_int_equal(y, ry);
			}
		}
	}
}

/* Tail levels of every size and unit size: inside the storage, never overlapping. */
static void test_tail_no_overlap(void **st)
{
	static const uint8_t fmts[] = {X360TEX_FMT_8, X360TEX_FMT_5_6_5, X360TEX_FMT_8_8_8_8,
				       X360TEX_FMT_DXT1, X360TEX_FMT_DXN};

	(void)st;
	for (size_t fi = 0; fi < sizeof fmts; fi++) {
		for (uint32_t w = 1; w <= 80; w += (w < 40 ? 1 : 7)) {
			for (uint32_t h = 1; h <= 80; h += (h < 40 ? 1 : 7)) {
				struct gen_x360_spec s = {fmts[fi], (uint16_t)w, (uint16_t)h, 0,
							  false};
				struct tex_x360_object o;
				struct tex_x360_layout l;

				assert_int_equal(gen_x360_texture_object(&s, &o), RC_OK);
				assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
				for (uint32_t a = 0; a < l.levels; a++) {
					const struct tex_x360_level *p = &l.lv[a];

					for (uint32_t b = a + 1; b < l.levels; b++) {
						const struct tex_x360_level *q = &l.lv[b];

						if (p->storage != q->storage)
							continue;
						assert_true(p->x_off + p->units_w <= q->x_off ||
							    q->x_off + q->units_w <= p->x_off ||
							    p->y_off + p->units_h <= q->y_off ||
							    q->y_off + q->units_h <= p->y_off);
					}
				}
			}
		}
	}
}

/* --- round trips --- */

struct rt_case {
	uint8_t fmt;
	uint16_t swizzle;
};

static void round_trip(const struct rt_case *c, uint32_t w, uint32_t h, uint8_t mips, bool cube,
		       bool tiled, uint8_t endian)
{
	struct gen_x360_spec s = {c->fmt, (uint16_t)w, (uint16_t)h, mips, cube};
	struct tex_x360_object o;
	struct tex_x360_layout l;
	struct rsrc rs = {0};
	uint8_t *canon, *res, *back;

	assert_int_equal(gen_x360_texture_object(&s, &o), RC_OK);
	o.fetch.tiled = tiled;
	o.fetch.endian = endian;
	if (c->swizzle)
		o.fetch.swizzle = c->swizzle;
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	assert_true(l.need <= l.full);
	canon = scratch_get(&sc_canon, l.canon_bytes);
	res = scratch_get(&sc_res, l.full);
	back = scratch_get(&sc_back, l.canon_bytes);
	assert_non_null(canon);
	assert_non_null(res);
	assert_non_null(back);
	memset(res, 0, l.full);
	for (size_t i = 0; i < l.canon_bytes; i++)
		canon[i] = (uint8_t)rnd();
	for (uint32_t f = 0; f < l.faces; f++)
		for (uint32_t i = 0; i < l.levels; i++)
			assert_int_equal(
			    tex_x360_write_level(&l, f, i,
						 canon + f * l.face_bytes + l.lv[i].canon_offset,
						 res, l.full),
			    RC_OK);
	rs.p = res;
	rs.size = l.need; /* nothing past need may be read */
	for (uint32_t f = 0; f < l.faces; f++) {
		for (uint32_t i = 0; i < l.levels; i++) {
			const struct tex_x360_level *v = &l.lv[i];
			uint8_t *d = back + f * l.face_bytes + v->canon_offset;
			size_t row = (size_t)v->units_w * l.unit_bytes;
			uint32_t r0 = v->units_h > 2 ? 1 + rnd() % (v->units_h - 1) : 0;

			assert_int_equal(tex_x360_read_level(&l, f, i, rs_read, &rs, d), RC_OK);
			/* a row window equals the same rows of the whole level */
			if (v->units_h > 2) {
				uint8_t *part = malloc(row * 2);

				assert_int_equal(
				    tex_x360_read_rows(&l, f, i, r0 - 1, 2, rs_read, &rs, part),
				    RC_OK);
				assert_memory_equal(part, d + (r0 - 1) * row, row * 2);
				free(part);
			}
		}
	}
	/* every level and face back intact: nothing written over anything else */
	assert_memory_equal(back, canon, l.canon_bytes);
	/* memory bound: one band of the widest storage (+ page rounding) per read */
	assert_true(rs.max_n <= (uint64_t)l.lv[0].row_bytes * 32 + 8192);
}

/* Round trip number i when it is this build's share, seeded by i alone: 1 if it ran. */
static size_t trip_if_mine(const struct rt_case *c, uint32_t w, uint32_t h, uint8_t mips, bool cube,
			   bool tiled, uint8_t endian, size_t i)
{
	if (!my_share(i))
		return 0;
	rnd_seed(i);
	round_trip(c, w, h, mips, cube, tiled, endian);
	return 1;
}

static void test_round_trips(void **st)
{
	static const struct rt_case cases[] = {
	    {X360TEX_FMT_DXT1, 0},
	    {X360TEX_FMT_DXT2_3, 0},
	    {X360TEX_FMT_DXT4_5, 0},
	    {X360TEX_FMT_DXN, 0},
	    {X360TEX_FMT_8_8_8_8, 0}, /* ZYXW */
	    {X360TEX_FMT_8_8_8_8,
	     X360TEX_SWIZZLE(X360TEX_SWZ_X, X360TEX_SWZ_Y, X360TEX_SWZ_Z, X360TEX_SWZ_W)},
	    {X360TEX_FMT_8_8_8_8,
	     X360TEX_SWIZZLE(X360TEX_SWZ_Y, X360TEX_SWZ_Z, X360TEX_SWZ_W, X360TEX_SWZ_X)},
	    {X360TEX_FMT_5_6_5, 0}, /* ZYX1 */
	    {X360TEX_FMT_5_6_5,
	     X360TEX_SWIZZLE(X360TEX_SWZ_X, X360TEX_SWZ_Y, X360TEX_SWZ_Z, X360TEX_SWZ_1)},
	    {X360TEX_FMT_8, 0},
	};
	static const uint16_t sizes[][2] = {
	    {1, 1},   {2, 2},	{3, 5},	  {4, 4},    {8, 8},   {16, 16}, {17, 9},  {24, 40},
	    {32, 32}, {33, 65}, {64, 16}, {100, 60}, {128, 4}, {600, 8}, {8, 600}, {256, 256}};
	size_t n = 0, run = 0;

	(void)st;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
			uint32_t w = sizes[s][0], h = sizes[s][1];

			for (int m = 0; m < 2; m++)
				for (uint8_t e = 0; e < 4; e++)
					run += trip_if_mine(&cases[c], w, h, m ? 0 : 1, false,
							    e & 1, e, n++);
			if (w == h && w <= 64) {
				run += trip_if_mine(&cases[c], w, h, 0, true, true,
						    X360TEX_END_8IN16, n++);
				run += trip_if_mine(&cases[c], w, h, 1, true, false,
						    X360TEX_END_8IN32, n++);
			}
		}
	}
	print_message("%zu of %zu tile/untile round trips (this build's share)\n", run, n);
}

/* Unit conversions on known values. */
static void test_texel_conversion(void **st)
{
	struct gen_x360_spec s = {X360TEX_FMT_8_8_8_8, 32, 32, 1, false};
	struct tex_x360_object o;
	struct tex_x360_layout l;
	struct rsrc rs = {0};
	uint8_t res[4096] = {0}, out[4];
	uint32_t a;

	(void)st;
	/* A8R8G8B8 as D3D stores it: bytes A R G B, 8in32, swizzle ZYXW -> canonical B G R A */
	assert_int_equal(gen_x360_texture_object(&s, &o), RC_OK);
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	assert_int_equal(l.full, 4096);
	a = tex_x360_tiled_offset(0, 0, 32, 2);
	res[a] = 0x11, res[a + 1] = 0x22, res[a + 2] = 0x33, res[a + 3] = 0x44;
	rs.p = res;
	rs.size = sizeof res;
	assert_int_equal(tex_x360_read_rows(&l, 0, 0, 0, 1, rs_read, &rs, NULL), RC_INVAL);
	{
		uint8_t row[32 * 4];

		assert_int_equal(tex_x360_read_rows(&l, 0, 0, 0, 1, rs_read, &rs, row), RC_OK);
		memcpy(out, row, 4);
	}
	assert_int_equal(out[0], 0x44); /* B */
	assert_int_equal(out[1], 0x33); /* G */
	assert_int_equal(out[2], 0x22); /* R */
	assert_int_equal(out[3], 0x11); /* A */
	/* X8R8G8B8 (alpha swizzled to one) reads as BGRX with X = 0xFF */
	o.fetch.swizzle =
	    X360TEX_SWIZZLE(X360TEX_SWZ_Z, X360TEX_SWZ_Y, X360TEX_SWZ_X, X360TEX_SWZ_1);
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	assert_int_equal(l.canon, X360TEX_C_BGRX8);
	{
		uint8_t row[32 * 4];
		enum tex_kind k;

		assert_int_equal(tex_x360_read_rows(&l, 0, 0, 0, 1, rs_read, &rs, row), RC_OK);
		assert_int_equal(row[0], 0x44);
		assert_int_equal(row[3], 0xFF);
		assert_true(tex_x360_canon_kind(l.canon, &k));
		assert_int_equal(k, TEXK_BGRX8);
	}
	/* R5G6B5: big-endian 0xF800 (red), 8in16 -> little-endian 0xF800 */
	s.format = X360TEX_FMT_5_6_5;
	memset(res, 0, sizeof res);
	assert_int_equal(gen_x360_texture_object(&s, &o), RC_OK);
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	a = tex_x360_tiled_offset(1, 0, 32, 1);
	res[a] = 0xF8, res[a + 1] = 0x00;
	{
		uint8_t row[32 * 2];

		assert_int_equal(tex_x360_read_rows(&l, 0, 0, 0, 1, rs_read, &rs, row), RC_OK);
		assert_int_equal(ld_u16le(row + 2), 0xF800);
		/* red from component X instead: the 5-bit ends trade places */
		o.fetch.swizzle =
		    X360TEX_SWIZZLE(X360TEX_SWZ_X, X360TEX_SWZ_Y, X360TEX_SWZ_Z, X360TEX_SWZ_1);
		assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
		assert_int_equal(tex_x360_read_rows(&l, 0, 0, 0, 1, rs_read, &rs, row), RC_OK);
		assert_int_equal(ld_u16le(row + 2), 0x001F);
	}
	/* every canonical form has a kind; DXN is ATI2 (BC5) */
	{
		enum tex_kind k;

		assert_true(tex_x360_canon_kind(X360TEX_C_DXN, &k));
		assert_int_equal(k, TEXK_ATI2);
		assert_true(tex_x360_canon_kind(X360TEX_C_DXT5, &k));
		assert_int_equal(k, TEXK_DXT5);
	}
}

/* --- generated twins --- */

struct xarena {
	struct buf file;
	struct src s;
	struct src_mem m;
	struct arena a;
	struct diag d;
};

static void xa_open(struct xarena *x)
{
	diag_init(&x->d);
	src_init_mem(&x->s, &x->m, x->file.data, x->file.len);
	assert_int_equal(arena_open(&x->s, &x->a, &x->d), RC_OK);
	assert_int_equal(diag_count(&x->d), 0);
}

static void xa_close(struct xarena *x)
{
	arena_free(&x->a);
	buf_free(&x->file);
	diag_free(&x->d);
}

/*
 * The default Xbox 360 arena, made once for the tests that read it (the twins and DXN): its
 * DXT encoding was a fifth of this test's time under ASan, made twice. Each caller gets its
 * own copy of the file and shares the truth (x360_gen_done frees only one made for opts).
 */
static struct buf xdef_file;
static struct gen_x360_truth xdef_truth;
static bool xdef_made;

static enum rc x360_gen(const struct gen_x360_opts *opts, struct buf *file,
			struct gen_x360_truth *xt)
{
	enum rc r;

	if (opts)
		return gen_x360_textures(opts, file, NULL, xt);
	if (!xdef_made) {
		buf_init(&xdef_file);
		r = gen_x360_textures(NULL, &xdef_file, NULL, &xdef_truth);
		if (r != RC_OK)
			return r;
		xdef_made = true;
	}
	buf_put(file, xdef_file.data, xdef_file.len);
	*xt = xdef_truth;
	return RC_OK;
}

static void x360_gen_done(const struct gen_x360_opts *opts, struct gen_x360_truth *xt)
{
	if (opts)
		gen_x360_truth_free(xt);
}

static int group_free(void **st)
{
	if (xdef_made) {
		buf_free(&xdef_file);
		gen_x360_truth_free(&xdef_truth);
		xdef_made = false;
	}
	return scratch_free(st);
}

struct obj_read {
	const struct src *s;
	uint64_t start, size;
};

static enum rc obj_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct obj_read *o = ctx;

	if (off > o->size || n > o->size - off)
		return RC_BOUNDS;
	return src_read(o->s, o->start + off, dst, n);
}

/* Decode Xbox 360 texture tex (its base resource at row br) into a canonical payload. */
static uint8_t *x360_load(struct xarena *x, uint32_t tex, uint32_t br, struct tex_x360_layout *l)
{
	struct tex_x360_object o;
	struct obj_read rd = {&x->s, arena_row(&x->a, br)->start, arena_row(&x->a, br)->size};
	uint8_t *obj = NULL, *canon;
	size_t len = 0;

	assert_int_equal(arena_read_object(&x->s, &x->a, tex, &obj, &len), RC_OK);
	assert_int_equal(len, X360TEX_OBJECT_SIZE);
	assert_int_equal(tex_x360_prepare(obj, len, arena_row(&x->a, br)->size, tex, &o, l, &x->d),
			 RC_OK);
	free(obj);
	canon = malloc(l->canon_bytes);
	assert_non_null(canon);
	for (uint32_t f = 0; f < l->faces; f++)
		for (uint32_t i = 0; i < l->levels; i++)
			assert_int_equal(
			    tex_x360_read_level(l, f, i, obj_read, &rd,
						canon + f * l->face_bytes + l->lv[i].canon_offset),
			    RC_OK);
	return canon;
}

/* Every (face, level) of an Xbox 360 canonical payload equals the PS3 twin's, and so do the DDS
 * files made from them; returns the number of (face, level) pairs. */
static size_t twin_equal(uint8_t *canon, const struct tex_x360_layout *l, struct texture_image *img)
{
	struct texture_image xi = *img;
	struct buf a, b;
	enum tex_kind kind;
	size_t n = 0;

	assert_true(tex_x360_canon_kind(l->canon, &kind));
	assert_int_equal(kind, img->d.kind);
	assert_int_equal(img->d.have_faces, l->faces);
	assert_int_equal(img->d.have_mips, l->levels);
	for (uint32_t f = 0; f < l->faces; f++) {
		for (uint32_t i = 0; i < l->levels; i++) {
			size_t off, len;

			assert_true(texture_level(img, f, i, &off, &len, NULL, NULL));
			assert_int_equal(len, l->lv[i].canon_bytes);
			assert_memory_equal(canon + f * l->face_bytes + l->lv[i].canon_offset,
					    img->data + off, len);
			n++;
		}
	}
	xi.data = canon;
	buf_init(&a);
	buf_init(&b);
	assert_int_equal(texture_dds(&xi, &a), RC_OK);
	assert_int_equal(texture_dds(img, &b), RC_OK);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	buf_free(&a);
	buf_free(&b);
	return n;
}

/* Every level of every face of every twin equals what texture_load gives for the PS3 twin. */
static void check_twins(const struct gen_x360_opts *opts, size_t *n_twins, size_t *n_levels)
{
	struct xarena x = {0}, p = {0};
	struct gen_x360_truth xt;
	struct gen_tex_truth pt;
	char **xnames = NULL, **pnames = NULL;

	buf_init(&x.file);
	buf_init(&p.file);
	assert_int_equal(x360_gen(opts, &x.file, &xt), RC_OK);
	assert_int_equal(gen_x360_ps3_twins(opts, &p.file, NULL, &pt), RC_OK);
	xa_open(&x);
	xa_open(&p);
	assert_memory_equal(x.file.data + 4, "xb2", 4);
	assert_int_equal(x.a.h.header_size, 0xAC);
	assert_int_equal(x.a.n_types, 9);
	assert_int_equal(x.a.h.rd[2].align, 0x1000);
	assert_int_equal(arena_row(&x.a, x.a.n_dict - 2)->type_id, RW_T_TOC);
	assert_int_equal(arena_row(&x.a, x.a.n_dict - 1)->type_id, RW_T_VERSION);
	assert_int_equal(texture_names(&x.s, &x.a, &xnames, &x.d), RC_OK);
	assert_int_equal(texture_names(&p.s, &p.a, &pnames, &p.d), RC_OK);
	for (size_t k = 0; k < xt.n; k++) {
		const struct gen_x360_truth_item *ti = &xt.items[k];
		struct texture_image *img = NULL;
		struct tex_x360_layout l;
		uint8_t *canon;

		assert_int_equal(arena_row(&x.a, ti->buf_index)->type_id, 0x00010031u);
		assert_int_equal(arena_row(&x.a, ti->tex_index)->type_id, RW_T_TEXTURE);
		assert_string_equal(xnames[ti->tex_index], ti->name);
		canon = x360_load(&x, ti->tex_index, ti->buf_index, &l);
		assert_int_equal(l.canon_bytes, ti->canon_len);
		assert_memory_equal(canon, ti->canon, ti->canon_len);
		assert_int_equal(l.width, ti->width);
		assert_int_equal(l.height, ti->height);
		assert_int_equal(l.levels, ti->mips);
		assert_int_equal(l.faces, ti->cube ? 6 : 1);
		if (!ti->twin) {
			free(canon);
			continue;
		}
		{
			const struct gen_tex_truth_item *pi = &pt.items[ti->twin_index];

			assert_string_equal(pnames[pi->tex_index], ti->name); /* same TOC name */
			assert_int_equal(pi->guid, ti->guid);
			assert_int_equal(texture_load(&p.s, &p.a, pi->tex_index, &img, &p.d),
					 RC_OK);
		}
		*n_levels += twin_equal(canon, &l, img);
		(*n_twins)++;
		texture_image_free(img);
		free(canon);
	}
	assert_int_equal(diag_count(&x.d), 0);
	assert_int_equal(diag_count(&p.d), 0);
	texture_names_free(xnames, x.a.n_dict);
	texture_names_free(pnames, p.a.n_dict);
	x360_gen_done(opts, &xt);
	gen_tex_truth_free(&pt);
	xa_close(&x);
	xa_close(&p);
}

static void test_twins_default(void **st)
{
	size_t n_twins = 0, n_levels = 0, n;

	(void)st;
	gen_x360_default_specs(&n);
	check_twins(NULL, &n_twins, &n_levels);
	print_message("%zu twin textures, %zu (face, level) pairs equal\n", n_twins, n_levels);
	assert_true(n_twins >= 6 * 19 + 3);
	assert_true(n > n_twins); /* the DXN ones */
}

/* A different order (DXN first, twins after) keeps twins and names aligned. */
static void test_twins_mixed_order(void **st)
{
	static const struct gen_x360_spec specs[] = {
	    {X360TEX_FMT_DXN, 16, 16, 0, false},   {X360TEX_FMT_8_8_8_8, 24, 40, 0, false},
	    {X360TEX_FMT_DXN, 40, 24, 1, true},	   {X360TEX_FMT_DXT1, 8, 600, 0, false},
	    {X360TEX_FMT_5_6_5, 600, 8, 0, false}, {X360TEX_FMT_8, 16, 16, 0, true},
	};
	struct gen_x360_opts o = {specs, sizeof specs / sizeof specs[0], 0x1234};
	size_t n_twins = 0, n_levels = 0;

	(void)st;
	check_twins(&o, &n_twins, &n_levels);
	assert_int_equal(n_twins, 4);
}

/* DXN (no PS3 twin): the decoded blocks equal the encoded ones and decode to the source. */
static void test_dxn_source(void **st)
{
	size_t n, checked = 0;
	const struct gen_x360_spec *specs = gen_x360_default_specs(&n);
	struct xarena x = {0};
	struct gen_x360_truth xt;
	int worst = 0;

	(void)st;
	(void)specs;
	buf_init(&x.file);
	assert_int_equal(x360_gen(NULL, &x.file, &xt), RC_OK);
	xa_open(&x);
	for (size_t k = 0; k < xt.n; k++) {
		const struct gen_x360_truth_item *ti = &xt.items[k];
		struct tex_x360_layout l;
		uint8_t *canon;
		uint32_t bw, bh;

		if (ti->format != X360TEX_FMT_DXN)
			continue;
		assert_false(ti->twin);
		canon = x360_load(&x, ti->tex_index, ti->buf_index, &l);
		assert_int_equal(l.canon, X360TEX_C_DXN);
		assert_memory_equal(canon, ti->canon, ti->canon_len);
		bw = (ti->width + 3) / 4;
		bh = (ti->height + 3) / 4;
		for (uint32_t by = 0; by < bh; by++) {
			for (uint32_t bx = 0; bx < bw; bx++) {
				const uint8_t *blk = canon + ((size_t)by * bw + bx) * 16;

				/* a BC4 block decodes like a DXT5 alpha block */
				for (int ch = 0; ch < 2; ch++) {
					uint8_t d5[16] = {0}, px[64];

					memcpy(d5, blk + 8 * ch, 8);
					dxt5_block(d5, px);
					for (uint32_t i = 0; i < 16; i++) {
						uint32_t xx = bx * 4 + i % 4, yy = by * 4 + i / 4;
						int e;

						if (xx >= ti->width || yy >= ti->height)
							continue;
						e = abs(
						    px[4 * i + 3] -
						    ti->src_rg[2 * ((size_t)yy * ti->width + xx) +
							       ch]);
						worst = e > worst ? e : worst;
					}
				}
			}
		}
		checked++;
		free(canon);
	}
	assert_int_equal(diag_count(&x.d), 0);
	print_message("%zu DXN textures, worst channel error %d\n", checked, worst);
	assert_true(checked >= 19);
	assert_true(worst <= 20); /* 8-value BC4: at most half a step of (max - min) / 7 */
	x360_gen_done(NULL, &xt);
	xa_close(&x);
}

/* Storage offsets and tail positions worked out by hand from the layout rules. */
static void test_pinned_layouts(void **st)
{
	struct tex_x360_object o;
	struct tex_x360_layout l;
	/* 600x40 8_8_8_8, 10 levels: base 608 x 64 texels, mips in power-of-two storages
	 * (1024 >> 1 = 512 wide for level 1, not 300 -> 320), the tail from level 2 */
	static const uint32_t st600[10] = {0,	   155648, 221184, 221184, 221184,
					   221184, 221184, 221184, 221184, 221184};
	static const uint32_t off600[10][2] = {{0, 0},	 {0, 0},  {0, 16}, {0, 8},  {0, 4},
					       {128, 0}, {64, 0}, {32, 0}, {16, 0}, {8, 0}};

	(void)st;
	assert_int_equal(gen_x360_texture_object(
			     &(struct gen_x360_spec){X360TEX_FMT_8_8_8_8, 600, 40, 0, false}, &o),
			 RC_OK);
	assert_int_equal(o.fetch.pitch, 19);
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	assert_int_equal(l.levels, 10);
	assert_int_equal(l.packed_level, 2);
	assert_int_equal(l.mip_offset, 155648);
	assert_int_equal(l.full, 253952);
	assert_int_equal(l.lv[1].pitch_units, 512);
	assert_int_equal(l.lv[1].height_units, 32);
	assert_int_equal(l.lv[2].pitch_units, 256);
	for (uint32_t i = 0; i < 10; i++) {
		assert_int_equal(l.lv[i].storage, st600[i]);
		assert_int_equal(l.lv[i].x_off, off600[i][0]);
		assert_int_equal(l.lv[i].y_off, off600[i][1]);
	}
	/* 16x16 DXT5 cube, base in the tail: six one-tile faces, nothing else */
	assert_int_equal(gen_x360_texture_object(
			     &(struct gen_x360_spec){X360TEX_FMT_DXT4_5, 16, 16, 0, true}, &o),
			 RC_OK);
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	assert_int_equal(l.faces, 6);
	assert_int_equal(l.lv[4].face_stride, 16384);
	assert_int_equal(l.full, 6 * 16384);
	/* 64x64 DXT1 cube: base faces, then level 1's six faces, then the tail's six */
	assert_int_equal(
	    gen_x360_texture_object(&(struct gen_x360_spec){X360TEX_FMT_DXT1, 64, 64, 0, true}, &o),
	    RC_OK);
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	assert_int_equal(l.mip_offset, 49152);
	assert_int_equal(l.lv[1].storage, 49152);
	assert_int_equal(l.lv[2].storage, 98304);
	assert_int_equal(l.lv[6].storage, 98304);
	assert_int_equal(l.full, 147456);
	assert_int_equal(l.lv[2].x_off, 4); /* 16x16 at texel (16, 0) */
}

/* The generated bytes read with the XDK address formula and a plain 16-bit swap, as the real
 * .rx2 files were checked: equal to the PS3 twin's blocks. */
static void test_generated_bytes(void **st)
{
	static const struct gen_x360_spec specs[] = {
	    {X360TEX_FMT_DXT1, 16, 16, 0, false},
	    {X360TEX_FMT_DXT4_5, 32, 32, 1, false},
	};
	static const uint32_t pos[5][2] = {{16, 0}, {8, 0}, {4, 0}, {0, 8}, {0, 4}};
	struct gen_x360_opts opts = {specs, 2, 0};
	struct xarena x = {0}, p = {0};
	struct gen_x360_truth xt;
	struct gen_tex_truth pt;

	(void)st;
	buf_init(&x.file);
	buf_init(&p.file);
	assert_int_equal(gen_x360_textures(&opts, &x.file, NULL, &xt), RC_OK);
	assert_int_equal(gen_x360_ps3_twins(&opts, &p.file, NULL, &pt), RC_OK);
	xa_open(&x);
	xa_open(&p);
	for (size_t k = 0; k < 2; k++) {
		const struct arena_dict_entry *br = arena_row(&x.a, xt.items[k].buf_index);
		uint32_t bb = k ? 16 : 8, lb = k ? 4 : 3;
		struct texture_image *img = NULL;

		assert_int_equal(br->size, k ? 16384 : 8192);
		assert_int_equal(texture_load(&p.s, &p.a,
					      pt.items[xt.items[k].twin_index].tex_index, &img,
					      &p.d),
				 RC_OK);
		for (uint32_t lv = 0; lv < img->d.have_mips; lv++) {
			size_t off, len;
			uint32_t w, h, ox = k ? 0 : pos[lv][0] / 4, oy = k ? 0 : pos[lv][1] / 4;

			assert_true(texture_level(img, 0, lv, &off, &len, &w, &h));
			for (uint32_t by = 0; by < (h + 3) / 4; by++) {
				for (uint32_t bx = 0; bx < (w + 3) / 4; bx++) {
					uint32_t a = ref_xg_tiled(ox + bx, oy + by, 32, lb) << lb;
					const uint8_t *ps3 = img->data + off +
							     ((size_t)by * ((w + 3) / 4) + bx) * bb;
					uint8_t blk[16];

					assert_true(a + bb <= br->size);
					for (uint32_t i = 0; i < bb; i++)
						blk[i] = x.file.data[br->start + a + (i ^ 1)];
					assert_memory_equal(blk, ps3, bb);
				}
			}
		}
		texture_image_free(img);
	}
	gen_x360_truth_free(&xt);
	gen_tex_truth_free(&pt);
	xa_close(&x);
	xa_close(&p);
}

/* --- hostile objects --- */

static void obj_bytes(const struct gen_x360_spec *s, uint8_t out[X360TEX_OBJECT_SIZE],
		      struct tex_x360_object *o)
{
	assert_int_equal(gen_x360_texture_object(s, o), RC_OK);
	tex_x360_object_encode(o, out);
}

static enum rc prep(const uint8_t *b, size_t len, uint64_t res, struct diag *d)
{
	struct tex_x360_object o;
	struct tex_x360_layout l;

	return tex_x360_prepare(b, len, res, 7, &o, &l, d);
}

static void test_hostile(void **st)
{
	struct gen_x360_spec s = {X360TEX_FMT_DXT1, 64, 64, 0, false};
	struct tex_x360_object o;
	struct tex_x360_layout l;
	uint8_t b[X360TEX_OBJECT_SIZE + 4];
	struct diag d;

	(void)st;
	diag_init(&d);
	obj_bytes(&s, b, &o);
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	assert_int_equal(prep(b, sizeof b, l.full, &d), RC_OK); /* longer object: fine */
	assert_int_equal(diag_count(&d), 0);
	/* truncated object */
	assert_int_equal(prep(b, X360TEX_OBJECT_SIZE - 1, l.full, &d), RC_CORRUPT);
	assert_int_equal(prep(NULL, 0, l.full, &d), RC_CORRUPT);
	assert_int_equal(diag_count(&d), 2);
	assert_non_null(strstr(d.msg[0], "object 7 (Texture): 51 bytes"));
	/* base resource one byte short, then longer than the padded layout */
	assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, l.need - 1, &d), RC_CORRUPT);
	assert_non_null(strstr(d.msg[2], "needs"));
	assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, l.full + 100, &d), RC_OK);
	assert_non_null(strstr(d.msg[3], "100 more"));
	assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 0, &d), RC_CORRUPT);
	diag_free(&d);
}

/* Fields the layout refuses: formats, dimensions, mip counts, pitch, swizzles, sizes. */
static void test_hostile_fields(void **st)
{
	struct gen_x360_spec s = {X360TEX_FMT_DXT1, 64, 64, 0, false};
	struct tex_x360_object o;
	uint8_t b[X360TEX_OBJECT_SIZE];
	struct diag d;

	(void)st;
	diag_init(&d);
	obj_bytes(&s, b, &o);
	/* unknown and unconverted formats, 1D, 3D, stacked */
	{
		static const uint8_t bad_fmt[] = {0x00, 0x07, 0x0A, 0x20, 0x3A, 0x3F};

		for (size_t i = 0; i < sizeof bad_fmt; i++) {
			struct tex_x360_object h = o;

			h.fetch.format = bad_fmt[i];
			tex_x360_object_encode(&h, b);
			assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d),
					 RC_UNSUPPORTED);
		}
		for (uint8_t dim = 0; dim <= 2; dim += 2) {
			struct tex_x360_object h = o;

			h.fetch.dimension = dim;
			tex_x360_object_encode(&h, b);
			assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d),
					 RC_UNSUPPORTED);
		}
		{
			struct tex_x360_object h = o;

			h.fetch.stacked = true;
			h.fetch.stack_depth = 3;
			tex_x360_object_encode(&h, b);
			assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d),
					 RC_UNSUPPORTED);
		}
	}
	/* mip levels past the size: 64x64 has 7 */
	{
		struct tex_x360_object h = o;

		h.fetch.mip_max_level = 7;
		tex_x360_object_encode(&h, b);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d), RC_CORRUPT);
		assert_non_null(strstr(d.msg[d.n - 1], "past the 64x64 chain"));
		h.fetch.mip_max_level = 15;
		tex_x360_object_encode(&h, b);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d), RC_CORRUPT);
	}
	/* pitch too small for the width (0 and 1 x 32 texels for 64 wide DXT1 is 32 units...) */
	{
		struct tex_x360_object h = o;

		h.fetch.pitch = 0;
		tex_x360_object_encode(&h, b);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d), RC_CORRUPT);
		assert_non_null(strstr(d.msg[d.n - 1], "does not fit"));
		h = o;
		h.fetch.format = X360TEX_FMT_8_8_8_8;
		h.fetch.swizzle = 0x60A;
		h.fetch.pitch = 1; /* 32 texels for a 64-texel row */
		tex_x360_object_encode(&h, b);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d), RC_CORRUPT);
	}
	diag_free(&d);
}

/* Swizzles with no canonical form; a huge texture refused before anything is read. */
static void test_hostile_swizzle_size(void **st)
{
	struct gen_x360_spec s = {X360TEX_FMT_DXT1, 64, 64, 0, false};
	struct tex_x360_object o;
	struct tex_x360_layout l;
	uint8_t b[X360TEX_OBJECT_SIZE];
	struct diag d;

	(void)st;
	diag_init(&d);
	obj_bytes(&s, b, &o);
	{
		struct tex_x360_object h = o;

		h.fetch.format = X360TEX_FMT_5_6_5;
		h.fetch.swizzle =
		    X360TEX_SWIZZLE(X360TEX_SWZ_Y, X360TEX_SWZ_X, X360TEX_SWZ_Z, X360TEX_SWZ_1);
		tex_x360_object_encode(&h, b);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d), RC_UNSUPPORTED);
		h.fetch.format = X360TEX_FMT_8;
		h.fetch.swizzle =
		    X360TEX_SWIZZLE(X360TEX_SWZ_0, X360TEX_SWZ_0, X360TEX_SWZ_0, X360TEX_SWZ_X);
		tex_x360_object_encode(&h, b);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d), RC_UNSUPPORTED);
		h.fetch.format = X360TEX_FMT_8_8_8_8;
		h.fetch.swizzle = 6u; /* reserved selector */
		tex_x360_object_encode(&h, b);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 30, &d), RC_UNSUPPORTED);
	}
	/* huge size, resource short: an error before anything is allocated or read */
	{
		struct tex_x360_object h = o;

		h.fetch.width = h.fetch.height = 8192;
		h.fetch.pitch = 8192 >> 5;
		h.fetch.mip_max_level = 13;
		tex_x360_object_encode(&h, b);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, 1u << 20, &d), RC_CORRUPT);
		assert_int_equal(tex_x360_layout_get(&h.fetch, &l, NULL, 0), RC_OK);
		assert_true(l.need > (32u << 20)); /* 8192^2 / 2 bytes of DXT1 and more */
	}
	diag_free(&d);
}

/* Oddities that still decode: one diag line naming each. */
static void test_hostile_notes(void **st)
{
	struct gen_x360_spec s = {X360TEX_FMT_DXT1, 64, 64, 0, false};
	struct tex_x360_object o;
	struct tex_x360_layout l;
	uint8_t b[X360TEX_OBJECT_SIZE];
	struct diag d;

	(void)st;
	diag_init(&d);
	obj_bytes(&s, b, &o);
	{
		struct tex_x360_object h = o;
		size_t before = diag_count(&d);

		h.common = 5;
		h.fetch.type = 0;
		h.fetch.mip_min_level = 9;
		h.fetch.mip_address = 0x77;
		tex_x360_object_encode(&h, b);
		assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, l.full, &d), RC_OK);
		assert_int_equal(diag_count(&d), before + 1);
		assert_non_null(strstr(d.msg[d.n - 1], "type 0"));
		assert_non_null(strstr(d.msg[d.n - 1], "min level 9"));
		assert_non_null(strstr(d.msg[d.n - 1], "common word 0x00000005"));
		assert_non_null(strstr(d.msg[d.n - 1], "mip address 0x77000"));
		h = o;
		h.fetch.mip_address = 0; /* Xenia would drop the mips; the layout still has them */
		tex_x360_object_encode(&h, b);
		assert_int_equal(prep(b, X360TEX_OBJECT_SIZE, l.full, &d), RC_OK);
		assert_non_null(strstr(d.msg[d.n - 1], "mip address 0 with 7 levels"));
	}
	diag_free(&d);
}

static void test_hostile_reads(void **st)
{
	struct gen_x360_spec s = {X360TEX_FMT_DXT4_5, 100, 60, 0, true};
	struct tex_x360_object o;
	struct tex_x360_layout l;
	struct rsrc rs = {0};
	uint8_t *dst;

	(void)st;
	assert_int_equal(gen_x360_texture_object(&s, &o), RC_OK);
	assert_int_equal(tex_x360_layout_get(&o.fetch, &l, NULL, 0), RC_OK);
	dst = malloc(l.lv[0].canon_bytes);
	assert_non_null(dst);
	rs.size = l.need;
	assert_int_equal(tex_x360_read_level(&l, 6, 0, rs_read, &rs, dst), RC_INVAL);
	assert_int_equal(tex_x360_read_level(&l, 0, l.levels, rs_read, &rs, dst), RC_INVAL);
	assert_int_equal(tex_x360_read_rows(&l, 0, 0, l.lv[0].units_h, 1, rs_read, &rs, dst),
			 RC_INVAL);
	assert_int_equal(tex_x360_read_rows(&l, 0, 0, 1, UINT32_MAX, rs_read, &rs, dst), RC_INVAL);
	assert_int_equal(tex_x360_read_rows(&l, 0, 0, 0, 0, rs_read, &rs, NULL), RC_OK);
	assert_int_equal(tex_x360_read_level(&l, 5, 0, NULL, &rs, dst), RC_INVAL);
	rs.fail = true;
	assert_int_equal(tex_x360_read_level(&l, 5, 0, rs_read, &rs, dst), RC_IO);
	rs.fail = false;
	rs.size = l.need - 1; /* a resource shorter than the layout: a read says so */
	{
		int short_reads = 0;

		for (uint32_t i = 0; i < l.levels; i++) {
			enum rc r = tex_x360_read_level(&l, 5, i, rs_read, &rs, dst);

			assert_true(r == RC_OK || r == RC_BOUNDS);
			short_reads += r == RC_BOUNDS;
		}
		assert_true(short_reads >= 1);
	}
	assert_int_equal(tex_x360_write_level(&l, 0, 0, dst, dst, 16), RC_INVAL);
	free(dst);
}

/* Random fetch constants: never a crash; when accepted, reads stay inside `need`. */
static void test_random_constants(void **st)
{
	size_t accepted = 0, readable = 0, read = 0;

	(void)st;
	rnd_state = 12345;
	for (int i = 0; i < 60000; i++) {
		uint32_t dw[6];
		struct tex_x360_fetch f;
		struct tex_x360_layout l;
		char why[320];

		for (int k = 0; k < 6; k++)
			dw[k] = rnd();
		if (i & 1) { /* steer half of them to plausible formats and sizes */
			static const uint8_t fm[] = {2, 4, 6, 0x12, 0x13, 0x14, 0x31};

			dw[1] = (dw[1] & ~0x43Fu) | fm[rnd() % 7];
			dw[2] &= (rnd() & 1 ? 0x3Fu : 0x1FFu) * (1u | 1u << 13);
			dw[5] = (dw[5] & ~(3u << 9)) | (rnd() & 1 ? 3u : 1u) << 9;
			dw[4] = (dw[4] & ~(15u << 6)) | (rnd() % 10) << 6;
			dw[3] = (dw[3] & ~(0xFFFu << 1)) | 0x60Au << 1;
		}
		tex_x360_fetch_decode(dw, &f);
		if (tex_x360_layout_get(&f, &l, why, sizeof why) != RC_OK)
			continue;
		accepted++;
		assert_true(l.need <= l.full);
		assert_true(l.levels >= 1 && l.levels <= X360TEX_MAX_LEVELS);
		if (l.canon_bytes <= (1u << 18) && my_share(readable++)) {
			struct rsrc rs = {NULL, l.need, 0, 0, false};
			uint8_t *dst = scratch_get(&sc_back, l.canon_bytes);

			assert_non_null(dst);
			for (uint32_t lv = 0; lv < l.levels; lv++)
				assert_int_equal(tex_x360_read_level(&l, l.faces - 1, lv, rs_read,
								     &rs,
								     dst + l.lv[lv].canon_offset),
						 RC_OK);
			assert_true(rs.max_end <= l.need);
			read++;
		}
	}
	print_message("%zu of 60000 random constants accepted, %zu small enough to read, %zu read "
		      "(this build's share)\n",
		      accepted, readable, read);
	assert_true(accepted > 1000);
	assert_true(readable > 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fetch_fields),     cmocka_unit_test(test_fetch_dimensions),
	    cmocka_unit_test(test_real_constants),   cmocka_unit_test(test_tiled_offset),
	    cmocka_unit_test(test_packed_offsets),   cmocka_unit_test(test_tail_no_overlap),
	    cmocka_unit_test(test_round_trips),	     cmocka_unit_test(test_texel_conversion),
	    cmocka_unit_test(test_twins_default),    cmocka_unit_test(test_twins_mixed_order),
	    cmocka_unit_test(test_dxn_source),	     cmocka_unit_test(test_pinned_layouts),
	    cmocka_unit_test(test_generated_bytes),  cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_hostile_fields),   cmocka_unit_test(test_hostile_swizzle_size),
	    cmocka_unit_test(test_hostile_notes),    cmocka_unit_test(test_hostile_reads),
	    cmocka_unit_test(test_random_constants),
	};

	return cmocka_run_group_tests(tests, NULL, group_free);
}
