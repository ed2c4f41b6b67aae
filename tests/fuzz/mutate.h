/*
 * The generated hostile-input set: structured mutants of a clean generated PSK, PSA or PSG
 * (truncation at every chunk/object/section boundary and at random points; counts set to 0,
 * 1, 2^31, 2^32-1; offsets and sizes past EOF and overlapping; count x size overflow;
 * references to themselves and in cycles; bone parents in cycles; hostile names; duplicate,
 * dropped and reordered chunks; type confusion; random byte flips). Deterministic in seed.
 */
#ifndef PSGFS_FUZZ_MUTATE_H
#define PSGFS_FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

/* Called once per mutant; p is valid only during the call. */
typedef void (*fuzz_mutant_fn)(void *ctx, const char *what, const uint8_t *p, size_t n);

/* Emit every mutant of base; returns how many (0 when base is not a PSK, PSA or PSG). */
size_t fuzz_mutants(const uint8_t *base, size_t n, uint64_t seed, fuzz_mutant_fn cb, void *ctx);

#endif
