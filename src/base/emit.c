/* Item-by-item rendering windows and counting passes (see include/psgfs/base/emit.h). */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/emit.h"

/* Room for a typical window up front: growing by doubling copies it several times. */
#define EMIT_RESERVE_MAX (256u << 10)

void emit_init_window(struct emit *e, uint64_t first, size_t stop_at)
{
	memset(e, 0, sizeof *e);
	buf_init(&e->b);
	e->item = first;
	e->stop_at = stop_at;
	buf_prealloc(&e->b, stop_at < EMIT_RESERVE_MAX ? stop_at + 256 : EMIT_RESERVE_MAX);
}

void emit_init_count_phase(struct emit *e, size_t cp_every, uint64_t phase)
{
	memset(e, 0, sizeof *e);
	buf_init_count(&e->b);
	e->counting = true;
	e->cp_every = cp_every;
	if (cp_every)
		e->cp_next = (size_t)((cp_every - phase % cp_every) % cp_every);
}

void emit_init_count(struct emit *e, size_t cp_every)
{
	emit_init_count_phase(e, cp_every, 0);
}

void emit_free(struct emit *e)
{
	buf_free(&e->b);
	free(e->cp);
	e->cp = NULL;
	e->n_cp = e->cap_cp = 0;
}

bool emit_checkpoint(struct emit *e)
{
	size_t start = e->cp_last;
	size_t past = e->b.len - e->cp_next; /* > 0: the item [start, b.len) holds cp_next */
	struct emit_cp *v;

	/* The next multiple at or after the end: a byte there is in a later item. */
	e->cp_next += (past + e->cp_every - 1) / e->cp_every * e->cp_every;
	e->cp_last = e->b.len;
	if (e->cp_oom || start == 0) /* item 0 at byte 0 is where a window starts anyway */
		return true;
	v = xgrow_n(e->cp, e->n_cp, &e->cap_cp, sizeof *v, 64);
	if (!v) {
		/* Fewer checkpoints only make later windows render more; not an error. */
		e->cp_oom = true;
		return true;
	}
	e->cp = v;
	e->cp[e->n_cp++] = (struct emit_cp){e->item - 1, start};
	return true;
}
