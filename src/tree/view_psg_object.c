/* objects/NNNN.TypeName.txt of textures, and the view platform table: which row shows an arena. */
#include "psgfs/formats/skate_platform.h"
#include "tree/view_psg.h"

const struct view_platform *view_platform_of(const struct skate_platform *decoders)
{
	static const struct view_platform *const rows[] = {&view_platform_ps3, &view_platform_x360};

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (rows[i]->decoders == decoders)
			return rows[i];
	return &view_platform_ps3;
}

enum rc view_texture_object_text(const struct src *s, const struct arena *a, uint32_t idx,
				 struct buf *out)
{
	return view_platform_of(skate_platform_decoders(a))->texture_text(s, a, idx, out);
}

enum rc view_texture_info_line(const struct src *s, const struct arena *a, uint32_t idx,
			       const char *name, struct buf *out)
{
	return view_platform_of(skate_platform_decoders(a))
	    ->texture_info_line(s, a, idx, name, out);
}
