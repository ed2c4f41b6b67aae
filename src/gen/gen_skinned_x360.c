/*
 * The skinned generator's Xbox 360 layouts (docs/xbox360.md, "Models"). Each PS3 preset has a
 * twin layout whose formats hold the PS3 values exactly (F -> FLOAT, SF -> FLOAT16, S1 ->
 * SHORTN, CMP -> HEND3N, UB/UB256 -> UBYTE4N/UBYTE4 with the bytes in the word's order; a
 * three-component source padded to four where Xbox 360 has no three-component format) and an
 * alt layout that also uses the formats PS3 lacks (DEC3N, DHEN3N, USHORT2N, USHORT4N, SHORT4
 * indices), re-quantising those values. A vertex is transcoded from the PS3 bytes the
 * generator wrote, so the twin's values are the PS3 arena's by construction.
 */
#include <math.h>
#include <string.h>

#include "gen/gen_skinned_x360.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_x360.h"

#define E(fmt, off, et, use, idx)                                                                  \
	{                                                                                          \
		SX360_FMT_##fmt, off, SX360_ET_##et, SX360_USAGE_##use, idx                        \
	}
#define POS(fmt, off)	  E(fmt, off, XYZ, POSITION, 0)
#define NORMAL(fmt, off)  E(fmt, off, NORMAL, NORMAL, 0)
#define TEX0(fmt, off)	  E(fmt, off, TEX0, TEXCOORD, 0)
#define INDICES(fmt, off) E(fmt, off, INDICES, BLENDINDICES, 0)
#define WEIGHTS(fmt, off) E(fmt, off, WEIGHTS, BLENDWEIGHT, 0)

/* Presets 0-4 of gen_psg_skinned.h, element for element (src: the PS3 element stored). */
static const struct gsx_layout twin[] = {
    {32,
     6,
     {POS(FLOAT3, 0), NORMAL(HEND3N, 12), TEX0(FLOAT16_2, 16),
      E(UBYTE4N, 20, VERTEXCOLOR, COLOR, 0), INDICES(UBYTE4, 24), WEIGHTS(UBYTE4N, 28)},
     {0, 1, 2, 3, 4, 5},
     "FLOAT3 as f32"},
    {32,
     5,
     {POS(FLOAT16_4, 0), NORMAL(SHORT4N, 8), TEX0(SHORT2N, 16), INDICES(UBYTE4N, 20),
      WEIGHTS(SHORT4N, 24)},
     {0, 1, 2, 3, 4},
     "FLOAT16_4 as f16"},
    {56,
     6,
     {POS(FLOAT3, 0), E(HEND3N, 12, TANGENT, TANGENT, 0), NORMAL(FLOAT3, 16), TEX0(FLOAT2, 28),
      INDICES(UBYTE4, 36), WEIGHTS(FLOAT4, 40)},
     {0, 1, 2, 3, 4, 5},
     "FLOAT3 as f32"},
    {28,
     4,
     {POS(FLOAT3, 0), NORMAL(HEND3N, 12), TEX0(FLOAT16_2, 16),
      E(SHORT4N, 20, BINORMAL, BINORMAL, 0)},
     {0, 1, 2, 3},
     "FLOAT3 as f32"},
    {24,
     5,
     {POS(SHORT4N, 0), NORMAL(HEND3N, 8), TEX0(SHORT2N, 12), INDICES(UBYTE4, 16),
      WEIGHTS(UBYTE4, 20)},
     {0, 1, 2, 3, 4},
     "SHORT4N as s16/16384 (bone units)"},
};

static const struct gsx_layout alt[] = {
    {32,
     6,
     {POS(FLOAT3, 0), NORMAL(DEC3N, 12), TEX0(USHORT2N, 16), E(UBYTE4N, 20, VERTEXCOLOR, COLOR, 0),
      INDICES(UBYTE4, 24), WEIGHTS(UBYTE4N, 28)},
     {0, 1, 2, 3, 4, 5},
     "FLOAT3 as f32"},
    {32,
     5,
     {POS(FLOAT16_4, 0), NORMAL(DHEN3N, 8), TEX0(SHORT2N, 16), INDICES(UBYTE4N, 20),
      WEIGHTS(USHORT4N, 24)},
     {0, 1, 2, 3, 4},
     "FLOAT16_4 as f16"},
    {60,
     6,
     {POS(FLOAT3, 0), E(DEC3N, 12, TANGENT, TANGENT, 0), NORMAL(FLOAT3, 16), TEX0(FLOAT2, 28),
      INDICES(SHORT4, 36), WEIGHTS(FLOAT4, 44)},
     {0, 1, 2, 3, 4, 5},
     "FLOAT3 as f32"},
    {24,
     4,
     {POS(FLOAT3, 0), NORMAL(HEND3N, 12), TEX0(FLOAT16_2, 16),
      E(DHEN3N, 20, BINORMAL, BINORMAL, 0)},
     {0, 1, 2, 3},
     "FLOAT3 as f32"},
    {24,
     5,
     {POS(SHORT4N, 0), NORMAL(HEND3N, 8), TEX0(SHORT2N, 12), INDICES(UBYTE4, 16),
      WEIGHTS(UBYTE4, 20)},
     {0, 1, 2, 3, 4},
     "SHORT4N as s16/16384 (bone units)"},
};

const struct gsx_layout *gsx_layout_of(int preset, bool use_alt)
{
	if (preset < 0 || preset >= (int)(sizeof twin / sizeof twin[0]))
		return NULL;
	return use_alt ? &alt[preset] : &twin[preset];
}

/* ---- the PS3 element as stored, and as the PS3 decoder reads it ---- */

struct comps {
	uint32_t w[4]; /* s16 / u8 / half bits / f32 bits / the CMP word */
	unsigned n;
};

static int32_t sext(uint32_t v, unsigned bits)
{
	uint32_t m = 1u << (bits - 1);

	v &= (1u << bits) - 1;
	return (int32_t)(v ^ m) - (int32_t)m;
}

/* A normal half or zero (all the generator writes) as a float. */
static float half_value(uint32_t h)
{
	uint32_t exp = h >> 10 & 0x1F, man = h & 0x3FF;
	float f = exp ? ldexpf(1.0f + (float)man / 1024.0f, (int)exp - 15) : 0.0f;

	return h & 0x8000 ? -f : f;
}

static void ps3_read(const struct psgo_vdes_elem *s, const uint8_t *p, struct comps *c, float v[4])
{
	const uint8_t *a = p + s->offset;

	memset(c, 0, sizeof *c);
	c->n = s->vertex_type == PSGO_VT_CMP ? 1 : s->num_components;
	for (unsigned i = 0; i < c->n && i < 4; i++) {
		switch (s->vertex_type) {
		case PSGO_VT_S1:
			c->w[i] = ld_u16be(a + 2 * i);
			v[i] = (float)(int16_t)c->w[i] / 32767.0f;
			break;
		case PSGO_VT_S32K:
			c->w[i] = ld_u16be(a + 2 * i);
			v[i] = (float)(int16_t)c->w[i];
			break;
		case PSGO_VT_SF:
			c->w[i] = ld_u16be(a + 2 * i);
			v[i] = half_value(c->w[i]);
			break;
		case PSGO_VT_F:
			c->w[i] = ld_u32be(a + 4 * i);
			v[i] = f32_from_bits(c->w[i]);
			break;
		case PSGO_VT_UB:
			c->w[i] = a[i];
			v[i] = (float)a[i] / 255.0f;
			break;
		case PSGO_VT_UB256:
			c->w[i] = a[i];
			v[i] = (float)a[i];
			break;
		default: /* CMP */
			c->w[0] = ld_u32be(a);
			v[0] = (float)sext(c->w[0], 11) / 1023.0f;
			v[1] = (float)sext(c->w[0] >> 11, 11) / 1023.0f;
			v[2] = (float)sext(c->w[0] >> 22, 10) / 511.0f;
		}
	}
}

/* ---- Xbox 360 writers ---- */

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A signed normalised field of `bits` bits for x in [-1, 1], and the value it decodes to. */
static uint32_t snorm(float x, unsigned bits, float *out)
{
	float m = (float)((1u << (bits - 1)) - 1);
	long q = lrintf(fmaxf(-1.0f, fminf(1.0f, x)) * m);

	*out = (float)q / m;
	return (uint32_t)q & ((1u << bits) - 1);
}

/* Three signed normalised fields from bit 0 up (DEC3N 10/10/10, DHEN3N 10/11/11). */
static void put_packed3(uint8_t *q, const float v[3], unsigned wx, unsigned wy, unsigned wz,
			float out[4])
{
	uint32_t w = snorm(v[0], wx, &out[0]) | snorm(v[1], wy, &out[1]) << wx |
		     snorm(v[2], wz, &out[2]) << (wx + wy);

	put32(q, w);
}

/* USHORTnN: u16 / 65535 of values in [0, 1]. */
static void put_unorm16(uint8_t *q, const float *v, unsigned n, float out[4])
{
	for (unsigned i = 0; i < n; i++) {
		long u = lrintf(fmaxf(0.0f, fminf(1.0f, v[i])) * 65535.0f);

		put16(q + 2 * i, (uint32_t)u);
		out[i] = (float)u / 65535.0f;
	}
}

/* Element e from the PS3 components c (values v); true when the values changed (out set). */
static bool x360_put(const struct psgo_x360_elem *e, const struct comps *c, const float v[4],
		     uint8_t *q, float out[4])
{
	uint8_t *a = q + e->offset;
	unsigned n4 = 4;

	switch (e->format) {
	case SX360_FMT_FLOAT2:
	case SX360_FMT_FLOAT3:
	case SX360_FMT_FLOAT4:
		n4 = e->format == SX360_FMT_FLOAT2 ? 2 : e->format == SX360_FMT_FLOAT3 ? 3 : 4;
		for (unsigned i = 0; i < n4; i++)
			put32(a + 4 * i, i < c->n ? f32_bits(v[i]) : 0);
		return false;
	case SX360_FMT_FLOAT16_2:
	case SX360_FMT_FLOAT16_4: /* a missing fourth component is 1.0 */
		n4 = e->format == SX360_FMT_FLOAT16_2 ? 2 : 4;
		for (unsigned i = 0; i < n4; i++)
			put16(a + 2 * i, i < c->n ? c->w[i] : 0x3C00);
		return false;
	case SX360_FMT_SHORT2N:
	case SX360_FMT_SHORT4N:
	case SX360_FMT_SHORT4: /* s16 as stored (integers: blend indices) */
		n4 = e->format == SX360_FMT_SHORT2N ? 2 : 4;
		for (unsigned i = 0; i < n4; i++)
			put16(a + 2 * i, i < c->n ? c->w[i] : 0);
		return false;
	case SX360_FMT_UBYTE4:
	case SX360_FMT_UBYTE4N: /* x is the word's low byte: the last in memory */
		for (unsigned i = 0; i < 4; i++)
			a[3 - i] = (uint8_t)(i < c->n ? c->w[i] : 0);
		return false;
	case SX360_FMT_HEND3N: /* the PS3 CMP word, bit for bit */
		put32(a, c->w[0]);
		return false;
	case SX360_FMT_DEC3N:
		put_packed3(a, v, 10, 10, 10, out);
		return true;
	case SX360_FMT_DHEN3N:
		put_packed3(a, v, 10, 11, 11, out);
		return true;
	default: /* USHORT2N, USHORT4N */
		put_unorm16(a, v, e->format == SX360_FMT_USHORT2N ? 2 : 4, out);
		return true;
	}
}

unsigned gsx_vertex(const struct gsx_layout *x, const struct psgo_vdes_elem *ps3, const uint8_t *p,
		    uint8_t *q, float val[GSX_MAX_ELEMS][4])
{
	unsigned changed = 0;

	memset(q, 0, x->stride);
	for (unsigned k = 0; k < x->n; k++) {
		struct comps c;
		float v[4] = {0, 0, 0, 0};

		ps3_read(&ps3[x->src[k]], p, &c, v);
		memset(val[k], 0, sizeof val[k]);
		if (x360_put(&x->el[k], &c, v, q, val[k]))
			changed |= 1u << k;
	}
	return changed;
}
