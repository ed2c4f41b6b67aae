/* FNV-1 64 and FNV-1a 64 (include/psgfs/base/hash.h). */
#include "psgfs/base/hash.h"

uint64_t fnv1_64_update(uint64_t h, const void *p, size_t n)
{
	const uint8_t *q = p;

	for (size_t i = 0; i < n; i++)
		h = (h * FNV64_PRIME) ^ q[i];
	return h;
}

uint64_t fnv1_64(const void *p, size_t n)
{
	return fnv1_64_update(FNV64_BASIS, p, n);
}

uint64_t fnv1a_64_update(uint64_t h, const void *p, size_t n)
{
	const uint8_t *q = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ q[i]) * FNV64_PRIME;
	return h;
}

uint64_t fnv1a_64(const void *p, size_t n)
{
	return fnv1a_64_update(FNV64_BASIS, p, n);
}
