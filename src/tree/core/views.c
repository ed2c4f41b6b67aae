/* Tables and ActorX files rendered item by item (see views.h). */
#include <stdlib.h>

#include "psgfs/base/bytes.h"
#include "tree/core/views.h"

void view_rows_layout(const struct rows *t, struct layout_build *lb)
{
	layout_var(lb, t->n + (t->header != NULL));
}

enum rc view_rows_render(const struct rows *t, uint64_t first, struct emit *e)
{
	uint8_t *batch = NULL;
	uint64_t row;
	enum rc r = RC_OK;

	if (t->header) {
		if (first == 0) {
			buf_puts(&e->b, t->header);
			if (!emit_item(e))
				return RC_OK;
		}
		row = first ? first - 1 : 0;
	} else {
		row = first;
	}
	if (t->load && row < t->n) {
		batch = xcalloc_n(ROWS_BATCH, t->rec_size);
		if (!batch)
			return RC_NOMEM;
	}
	while (row < t->n && r == RC_OK) {
		size_t n = t->n - row < ROWS_BATCH ? (size_t)(t->n - row) : ROWS_BATCH;
		bool more = true;

		if (batch)
			r = t->load(t->ctx, row, n, batch);
		for (size_t i = 0; i < n && r == RC_OK && more; i++) {
			r = t->print(t->ctx, row + i, batch ? batch + i * t->rec_size : NULL,
				     &e->b);
			more = emit_item(e);
		}
		if (!more)
			break;
		row += n;
	}
	free(batch);
	return r;
}

void view_ax_layout(const struct ax_plan *p, struct layout_build *lb)
{
	for (unsigned i = 0; i < p->n; i++) {
		layout_fixed(lb, 1, 32);
		layout_fixed(lb, p->c[i].n, p->c[i].size);
	}
}

enum rc view_ax_render(const struct ax_plan *p, unsigned part, uint64_t first, struct emit *e,
		       ax_records_fn fn, const void *ctx)
{
	const struct ax_chunk *c;

	if (part / 2 >= p->n)
		return RC_INVAL;
	c = &p->c[part / 2];
	if (part % 2 == 0) {
		ax_put_header(&e->b, c);
		emit_item(e);
		return RC_OK;
	}
	return first < c->n ? fn(ctx, c, first, e) : RC_OK;
}

void view_file_layout(const struct view_file *f, struct layout_build *lb)
{
	if (f->plan)
		view_ax_layout(f->plan, lb);
	else
		view_rows_layout(&f->rows, lb);
}

enum rc view_file_render(const struct view_file *f, unsigned part, uint64_t first, struct emit *e)
{
	if (f->plan)
		return view_ax_render(f->plan, part, first, e, f->records, f->ctx);
	return view_rows_render(&f->rows, first, e);
}

void view_glb_layout(const struct gltf_plan *p, struct layout_build *lb)
{
	for (unsigned i = 0; i < gltf_n_parts(p); i++) {
		uint64_t n;
		uint32_t size;

		gltf_part(p, i, &n, &size);
		if (size)
			layout_fixed(lb, n, size);
		else
			layout_var(lb, n);
	}
}

void view_diag_lines(const struct diag *d, struct buf *out)
{
	for (size_t i = 0; i < d->n; i++) {
		buf_puts(out, d->msg[i]);
		buf_putc(out, '\n');
	}
	if (d->dropped)
		buf_printf(out, "... %zu more problems not listed\n", d->dropped);
}
