// libsquish's C++ interface as the one C function dxt_squish.h declares; the only C++ file.
// Cluster fit, squish's default: on a 1024x1024 photo-like picture in DXT5 it gave 46.0 dB
// where range fit gave 43.5 dB and the iterative cluster fit 46.2 dB, taking 19x and 27x
// range fit's time (Debian's libsquish 1.15, scalar build; bench/RESULTS.md). Encoding is
// split across threads instead (tex_encode_rows).
#include <squish.h>

#include "formats/texture/dxt_squish.h"

void dxt_squish_block(const unsigned char rgba[64], int mask, void *block,
		      enum dxt_squish_kind kind)
{
	static const int flags[] = {squish::kDxt1, squish::kDxt3, squish::kDxt5, squish::kBc5};

	squish::CompressMasked(rgba, mask, block, flags[kind] | squish::kColourClusterFit, nullptr);
}
