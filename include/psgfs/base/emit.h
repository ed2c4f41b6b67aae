/*
 * Rendering a file as a run of items, so any byte range can be produced without the rest.
 *
 * A renderer writes items (a TSV row, a PSK record, a PNG chunk...) in order into e->b, starting
 * at the item the caller asks for, and calls emit_item() after each one. emit_item() says when
 * to stop: in window mode once the bytes the caller wants are there, in counting mode never
 * (nothing is stored; every so many bytes a checkpoint "item i starts at byte o" is recorded, so
 * a later window can start rendering near where it is needed instead of at item 0).
 */
#ifndef PSGFS_EMIT_H
#define PSGFS_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"

struct emit_cp {
	uint64_t item; /* first item rendered from this point */
	uint64_t off;  /* its byte offset inside the part */
};

struct emit {
	struct buf b;	 /* bytes from the start item on (counting: length only) */
	uint64_t item;	 /* index of the item being written */
	size_t stop_at;	 /* window: stop once b.len reaches this */
	bool counting;	 /* no bytes kept; checkpoints recorded */
	size_t cp_every; /* counting: bytes between checkpoints */
	size_t cp_last;	 /* counting: b.len at the last checkpoint */
	struct emit_cp *cp;
	size_t n_cp, cap_cp;
	bool cp_oom;
};

/* Window mode from item `first`: keep rendering until at least `stop_at` bytes are written. */
void emit_init_window(struct emit *e, uint64_t first, size_t stop_at);
/* Counting mode from item 0, a checkpoint every cp_every bytes (0: none). */
void emit_init_count(struct emit *e, size_t cp_every);
void emit_free(struct emit *e);

/* Internal to emit_item: record a checkpoint at the current position; always true. */
bool emit_checkpoint(struct emit *e);

/* End of one item: true to go on with the next, false when the caller has enough. */
static inline bool emit_item(struct emit *e)
{
	e->item++;
	if (e->b.oom)
		return false;
	if (e->counting)
		return e->cp_every == 0 || e->b.len - e->cp_last < e->cp_every ||
		       emit_checkpoint(e);
	return e->b.len < e->stop_at;
}

#endif
