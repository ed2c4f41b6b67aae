/* Deterministic PRNG for generators and tests (splitmix64): same seed, same bytes, anywhere. */
#ifndef PSGFS_RNG_H
#define PSGFS_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s;
};

static inline void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = seed;
}
uint64_t rng_next(struct rng *r);
/* Uniform in [0, n) (n > 0). */
uint32_t rng_below(struct rng *r, uint32_t n);
/* Uniform float in [lo, hi). */
float rng_float(struct rng *r, float lo, float hi);

#endif
