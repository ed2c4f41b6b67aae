/* Deterministic PRNG for generators and tests (splitmix64): same seed, same bytes, anywhere. */
#ifndef PSGFS_PRNG_H
#define PSGFS_PRNG_H

#include <stdint.h>

struct prng {
	uint64_t s;
};

static inline void prng_seed(struct prng *r, uint64_t seed)
{
	r->s = seed;
}
uint64_t prng_next(struct prng *r);
/* Uniform in [0, n) (n > 0). */
uint32_t prng_below(struct prng *r, uint32_t n);
/* Uniform float in [lo, hi). */
float prng_float(struct prng *r, float lo, float hi);

#endif
