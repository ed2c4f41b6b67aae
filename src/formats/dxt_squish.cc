// libsquish's C++ interface as the one C function dxt_squish.h declares; the only C++ file.
// Cluster fit is squish's default: clearly better than its range fit, and the iterative
// variant costs about 3x the time for a fraction of a dB (bench/RESULTS.md, texture rows).
#include <squish.h>

#include "dxt_squish.h"

void dxt_squish_block(const unsigned char rgba[64], int mask, void *block,
		      enum dxt_squish_kind kind)
{
	static const int flags[] = {squish::kDxt1, squish::kDxt3, squish::kDxt5, squish::kBc5};

	squish::CompressMasked(rgba, mask, block, flags[kind] | squish::kColourClusterFit, nullptr);
}
