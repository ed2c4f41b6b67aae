/* Non-cryptographic hashes the formats define (one copy each, here). */
#ifndef PSGFS_HASH_H
#define PSGFS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV64_BASIS 0xcbf29ce484222325ull
#define FNV64_PRIME 0x100000001b3ull

/* FNV-1 64: for each byte multiply by the prime, then xor (the stream collection ids,
 * docs/worlds.md: "cPres_50_50_high" -> 0xfb4c3af3cd410a21). */
uint64_t fnv1_64(const void *p, size_t n);
/* Continue an FNV-1 64 hash h over n more bytes (start from FNV64_BASIS). */
uint64_t fnv1_64_update(uint64_t h, const void *p, size_t n);

/* FNV-1a 64: for each byte xor, then multiply by the prime (the generators' records and
 * manifests, psgfs-gen hash, the folder layer's reasons). */
uint64_t fnv1a_64(const void *p, size_t n);
/* Continue an FNV-1a 64 hash h over n more bytes (start from FNV64_BASIS). */
uint64_t fnv1a_64_update(uint64_t h, const void *p, size_t n);

#endif
