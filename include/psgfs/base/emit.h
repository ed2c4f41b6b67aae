/*
 * Rendering a file as a run of items, so any byte range can be produced without the rest.
 *
 * A renderer writes items (a TSV row, a PSK record, a PNG chunk...) in order into e->b, starting
 * at the item the caller asks for, and calls emit_item() after each one. emit_item() says when
 * to stop: in window mode once the bytes the caller wants are there, in counting mode never
 * (nothing is stored; a checkpoint "item i starts at byte o" is recorded for the item holding
 * each multiple of cp_every, so a later window starting there renders from that item instead
 * of item 0, at most one item early).
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
	size_t cp_every; /* counting: checkpoint spacing (0: none) */
	size_t cp_last;	 /* counting: where the item being written started */
	size_t cp_next;	 /* counting: the next byte to hold a checkpoint's item */
	struct emit_cp *cp;
	size_t n_cp, cap_cp;
	bool cp_oom;
};

/* Window mode from item `first`: keep rendering until at least `stop_at` bytes are written. */
void emit_init_window(struct emit *e, uint64_t first, size_t stop_at);
/* Counting mode from item 0, a checkpoint for the item holding byte k * cp_every (0: none). */
void emit_init_count(struct emit *e, size_t cp_every);
/* The same for a part starting at byte `phase` of its file: the checkpoints fall on the items
 * holding the file's multiples of cp_every (the cache's piece boundaries). */
void emit_init_count_phase(struct emit *e, size_t cp_every, uint64_t phase);
void emit_free(struct emit *e);

/* Internal to emit_item: the item just ended holds cp_next; record where it started. True. */
bool emit_checkpoint(struct emit *e);

/* End of one item: true to go on with the next, false when the caller has enough. */
static inline bool emit_item(struct emit *e)
{
	e->item++;
	if (e->b.oom)
		return false;
	if (e->counting) {
		if (e->cp_every && e->b.len > e->cp_next)
			return emit_checkpoint(e);
		e->cp_last = e->b.len;
		return true;
	}
	return e->b.len < e->stop_at;
}

#endif
