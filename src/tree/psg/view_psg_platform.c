/*
 * The view platform table: which row (view_psg_ps3.c, view_psg_x360.c) shows an arena. Its
 * own file, below the views that ask it (objects, meshes), so the rows it names never lead
 * back to them.
 */
#include <stdlib.h>

#include "psgfs/formats/skate_platform.h"
#include "tree/psg/view_psg.h"

const struct view_platform *view_platform_of(const struct skate_platform *decoders)
{
	static const struct view_platform *const rows[] = {&view_platform_ps3, &view_platform_x360};

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (rows[i]->decoders == decoders)
			return rows[i];
	return &view_platform_ps3;
}
