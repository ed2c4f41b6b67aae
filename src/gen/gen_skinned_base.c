/* The byte writers and the quaternion math the skinned model generator's files share
 * (gen_skinned_int.h). */
#include <string.h>

#include "gen/gen_skinned_int.h"
#include "psgfs/base/bytes.h"

/* ---- byte writers ---- */

void gsk_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void gsk_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Half bits of a float that is exactly representable as a normal half (or zero). */
uint16_t gsk_half_bits(float f)
{
	uint32_t u = f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	int exp = (int)((u >> 23) & 0xFF) - 127 + 15;

	if ((u & 0x7FFFFFFF) == 0)
		return sign;
	return (uint16_t)(sign | (unsigned)exp << 10 | (u & 0x7FFFFF) >> 13);
}

/* ---- tiny quaternion math for the truth (independent of skate_skeleton.c) ---- */

void gsk_qmul(const double a[4], const double b[4], double o[4])
{
	double r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
		       a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
		       a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
		       a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};

	memcpy(o, r, sizeof r);
}

void gsk_qmat(const double q[4], double r[3][3])
{
	double x = q[0], y = q[1], z = q[2], w = q[3];

	r[0][0] = 1 - 2 * (y * y + z * z);
	r[0][1] = 2 * (x * y - z * w);
	r[0][2] = 2 * (x * z + y * w);
	r[1][0] = 2 * (x * y + z * w);
	r[1][1] = 1 - 2 * (x * x + z * z);
	r[1][2] = 2 * (y * z - x * w);
	r[2][0] = 2 * (x * z - y * w);
	r[2][1] = 2 * (y * z + x * w);
	r[2][2] = 1 - 2 * (x * x + y * y);
}
