/* splitmix64: tiny, fast, and identical on every platform. */
#include "psgfs/gen/prng.h"

uint64_t prng_next(struct prng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint32_t prng_below(struct prng *r, uint32_t n)
{
	return (uint32_t)((prng_next(r) >> 32) * n >> 32);
}

float prng_float(struct prng *r, float lo, float hi)
{
	float u = (float)(prng_next(r) >> 40) / (float)(1u << 24);

	return lo + (hi - lo) * u;
}
