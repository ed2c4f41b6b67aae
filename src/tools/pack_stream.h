/*
 * psgfs-tool pack-stream: a folder of collection folders into a district's stream set
 * (docs/worlds.md, "Writing a stream set"; the replacement of EA's `Stream File Tool.exe
 * pack`), through the writer psgfs-gen district uses (stream_set.h), with pack's safety rules:
 * every file to a temporary beside its final name, synced, read back by psgfs's own parsers,
 * and only then renamed into place.
 */
#ifndef PSGFS_TOOL_PACK_STREAM_H
#define PSGFS_TOOL_PACK_STREAM_H

#include <stdbool.h>
#include <stdint.h>

/* Exit codes beyond pack's (pack.h, enum pack_exit, which pack-stream uses for the rest). */
enum pack_stream_exit {
	PACK_STREAM_EXIT_ASSET = 20, /* an asset is not an RW4 arena of the platform (or its
					header's sizes are not its file's), or an id
					repeats in one collection */
	PACK_STREAM_EXIT_LIKE = 21,  /* --like STUB holds no stream file that can be read, or a
					header word the packed set cannot carry */
};

/* The asset id of a file name "0x<hex>.psg" / "<hex>.rx2" (up to 16 hex digits, the
 * extension's case aside); *x360 says which console the extension names. */
bool pack_stream_asset_id(const char *name, uint64_t *id, bool *x360);

/* `psgfs-tool pack-stream ...`: argv[0] is "pack-stream". Returns the exit status. */
int pack_stream_main(int argc, char **argv);

#endif
