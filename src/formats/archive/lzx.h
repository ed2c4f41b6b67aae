/* Xbox 360 LZX in XMem frames (docs/archives.md, "LZX"), decoded by libmspack when present. */
#ifndef PSGFS_LZX_H
#define PSGFS_LZX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/result.h"

/* Decode the XMem-framed LZX stream in[0, n) (window 2^17) into out: at most cap bytes, *got
 * what came. RC_UNSUPPORTED without libmspack, RC_CORRUPT for frames or data it refuses. */
enum rc lzx_xmem_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *got);
/* Whether this build decodes LZX. */
bool lzx_available(void);

#endif
