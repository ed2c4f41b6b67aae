/*
 * SFIL stream collections inside the archive layer (docs/streams.md): archive.c detects and
 * opens them through these, arc_index.c builds their entries' indexes.
 */
#ifndef PSGFS_SFIL_H
#define PSGFS_SFIL_H

#include "formats/archive/archive_int.h"

/* "SFIL" at the start. */
bool sfil_detect(const uint8_t *h, size_t n);
/* Walk the collection's assets (and its ATOC table toc, when given): one entry each, method
 * ARC_SECTIONS, table_method the stream format, named 0x<ID>.psg or .rx2. */
enum rc sfil_open(const struct src *s, const struct src *toc, struct arc *a, struct diag *d);
/* The segments of stream asset i (raw, one RefPack stream, sections or chunks) into ix. */
enum rc sfil_index(const struct src *s, const struct arc *a, uint32_t i, struct arc_index *ix,
		   const char *name, struct diag *d);

#endif
