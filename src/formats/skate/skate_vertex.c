/* Vertex elements in neutral terms: decoding stored components to floats, names and the
 * one-line encoding text (docs/skate-objects.md, "Vertex descriptor"). The choice of a
 * platform table is skate_platform.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/formats/skate_platform.h"

const char *skate_usage_name(uint8_t usage)
{
	static const char *const n[] = {"POSITION",	 "NORMAL",	  "TANGENT",
					"BINORMAL",	 "COLOR",	  "SPECULAR",
					"BLEND_WEIGHTS", "BLEND_INDICES", "TEXCOORD"};

	return usage < sizeof n / sizeof n[0] ? n[usage] : "OTHER";
}

const char *skate_ctype_name(uint8_t ctype)
{
	static const char *const n[] = {"s16", "u8",	  "f16",       "f32",	   "s11_11_10",
					"u16", "u8 word", "s10_10_10", "s10_11_11"};

	return ctype < sizeof n / sizeof n[0] ? n[ctype] : "?";
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

/* Field widths from bit 0 up, and each field's largest positive value. */
static void packed3(uint32_t v, unsigned wx, unsigned wy, unsigned wz, float out[3])
{
	out[0] = (float)sext(v, wx) / (float)((1u << (wx - 1)) - 1);
	out[1] = (float)sext(v >> wx, wy) / (float)((1u << (wy - 1)) - 1);
	out[2] = (float)sext(v >> (wx + wy), wz) / (float)((1u << (wz - 1)) - 1);
}

void skate_packed3_decode(uint8_t ctype, uint32_t v, float out[3])
{
	if (ctype == SKATE_CT_S10_10_10)
		packed3(v, 10, 10, 10, out);
	else if (ctype == SKATE_CT_S10_11_11)
		packed3(v, 10, 11, 11, out);
	else
		skate_cmp_decode(v, out);
}

/* Four u8 of a word: x in bits 0-7. */
static void u8_word(uint32_t w, float out[4])
{
	for (unsigned i = 0; i < 4; i++)
		out[i] = (float)(w >> (8 * i) & 0xFF);
}

void skate_elem_decode(const struct skate_elem *e, const uint8_t *p, bool be, float out[4])
{
	struct br r;
	unsigned n = e->count < 4 ? e->count : 4;

	if (!e->usable)
		return;
	br_init(&r, p, e->size, be);
	switch (e->ctype) {
	case SKATE_CT_S11_11_10:
	case SKATE_CT_S10_10_10:
	case SKATE_CT_S10_11_11:
		skate_packed3_decode(e->ctype, br_u32(&r), out);
		break;
	case SKATE_CT_U8_WORD:
		u8_word(br_u32(&r), out);
		break;
	case SKATE_CT_U16:
		for (unsigned i = 0; i < n; i++)
			out[i] = (float)br_u16(&r);
		break;
	case SKATE_CT_S16:
		for (unsigned i = 0; i < n; i++)
			out[i] = (float)(int16_t)br_u16(&r);
		break;
	case SKATE_CT_U8:
		for (unsigned i = 0; i < n; i++)
			out[i] = (float)br_u8(&r);
		break;
	case SKATE_CT_F16:
		for (unsigned i = 0; i < n; i++)
			out[i] = skate_half_to_float(br_u16(&r));
		break;
	default:
		for (unsigned i = 0; i < n; i++)
			out[i] = br_f32(&r);
		break;
	}
	if (e->divisor != 1.0f)
		for (unsigned i = 0; i < e->n_out && i < 4; i++)
			out[i] /= e->divisor;
}

void skate_elem_encoding(const struct skate_elem *e, char out[64])
{
	char div[24] = "", count[8] = "";

	if (e->divisor != 1.0f)
		snprintf(div, sizeof div, "/%g", (double)e->divisor);
	if (!e->name_has_count)
		snprintf(count, sizeof count, "x%u", e->count);
	snprintf(out, 64, "%s%s as %s%s%s%s%s", e->format_name ? e->format_name : "?", count,
		 skate_ctype_name(e->ctype), div, e->scale_note || e->normalized ? " (" : "",
		 e->scale_note	 ? e->scale_note
		 : e->normalized ? "normalised"
				 : "",
		 e->scale_note || e->normalized ? ")" : "");
}
