/* SHA-256 (FIPS 180-4) for the golden manifests of psgfs-tool and the tests: not for secrets. */
#ifndef PSGFS_SHA256_H
#define PSGFS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN 64

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t block[64];
	size_t fill; /* bytes waiting in block */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *p, size_t n);
/* Writes the digest as 64 lowercase hex digits and a NUL into hex; s must be re-initialised
 * before it is used again. */
void sha256_hex(struct sha256 *s, char hex[SHA256_HEX_LEN + 1]);

#endif
