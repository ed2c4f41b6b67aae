/*
 * SFIL stream collections inside the archive layer (docs/streams.md): archive.c opens them
 * through these (the registry detects them: registry.h), arc_index.c builds their entries' indexes.
 */
#ifndef PSGFS_SFIL_H
#define PSGFS_SFIL_H

#include "formats/archive/archive_int.h"

/* Walk the collection's assets (and its ATOC table toc, when given): one entry each, method
 * ARC_SECTIONS, table_method the stream format, named 0x<ID>.psg or .rx2. */
enum rc sfil_open(const struct src *s, const struct src *toc, struct arc *a, struct diag *d);
/* The segments of stream asset i (raw, one RefPack stream, sections or chunks) into ix. */
enum rc sfil_index(const struct src *s, const struct arc *a, uint32_t i, struct arc_index *ix,
		   const char *name, struct diag *d);

#endif
