/*
 * The segment list of an entry index (archive_int.h): what every parser fills, in output order,
 * before arc_index.c cuts it into pieces. Apart from arc_index.c so the parsers (sfil.c) and the
 * index that calls them form layers, not a cycle.
 */
#include <stdlib.h>

#include "formats/archive/archive_int.h"
#include "psgfs/base/bytes.h"

struct arc_index *arcx_new(uint64_t size)
{
	struct arc_index *ix = calloc(1, sizeof *ix);

	if (ix) {
		ix->size = size;
		ix->bytes = sizeof *ix;
		atomic_init(&ix->decodes, 0);
		atomic_init(&ix->decoded, 0);
	}
	return ix;
}

enum rc arcx_add(struct arc_index *ix, const struct arc_seg *s, enum rc why)
{
	struct arcx_seg *v;
	size_t cap = ix->segcap;

	if (s->out_len == 0)
		return RC_OK;
	v = xgrow_n(ix->seg, ix->nseg, &cap, sizeof *v, 8);
	if (!v)
		return RC_NOMEM;
	ix->seg = v;
	ix->segcap = (uint32_t)cap;
	v[ix->nseg] = (struct arcx_seg){.s = *s, .real = s->out_len, .why = (uint8_t)why};
	ix->nseg++;
	return RC_OK;
}
