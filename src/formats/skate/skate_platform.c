/*
 * The platform tables (skate_platform.h): which one serves an arena; a new platform is a row
 * here. Kept apart from skate_vertex.c, whose shared decoders the tables call, so the list and
 * the rows form layers instead of a cycle.
 */
#include <stddef.h>

#include "psgfs/formats/skate_platform.h"

const struct skate_platform *skate_platform_of(const struct arena *a)
{
	static const struct skate_platform *const tables[] = {&skate_platform_ps3,
							      &skate_platform_x360};

	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		if (tables[i]->plat == a->h.plat)
			return tables[i];
	return NULL;
}

const struct skate_platform *skate_platform_decoders(const struct arena *a)
{
	const struct skate_platform *pl = skate_platform_of(a);

	return pl ? pl : &skate_platform_ps3;
}
