/* The Xbox 360 vertex layouts of the skinned generator's presets and the transcoding of a PS3
 * vertex into one (gen_skinned_x360.c); used by gen_psg_skinned.c only. */
#ifndef PSGFS_GEN_SKINNED_X360_H
#define PSGFS_GEN_SKINNED_X360_H

#include <stdbool.h>
#include <stdint.h>

#include "psgfs/gen/gen_psg_objects.h"

#define GSX_MAX_ELEMS 6

/* An Xbox 360 layout: element k stores the preset's PS3 element src[k]. */
struct gsx_layout {
	uint8_t stride;
	unsigned n;
	struct psgo_x360_elem el[GSX_MAX_ELEMS];
	uint8_t src[GSX_MAX_ELEMS];
	const char *pos_encoding; /* as skate_elem_encoding says it */
};

/* The layout of preset (0 .. GEN_SK_PRESETS - 1): twin (value-identical formats) or alt (the
 * formats PS3 lacks, re-quantised where needed). */
const struct gsx_layout *gsx_layout_of(int preset, bool alt);

/*
 * Store the PS3 vertex at p (elements ps3[]) as the Xbox 360 vertex at q (layout x). For
 * every element whose values change (re-quantised), bit k of the result is set and val[k]
 * holds the values the decoder must read (n_out floats); others keep the PS3 values exactly.
 */
unsigned gsx_vertex(const struct gsx_layout *x, const struct psgo_vdes_elem *ps3, const uint8_t *p,
		    uint8_t *q, float val[GSX_MAX_ELEMS][4]);

#endif
