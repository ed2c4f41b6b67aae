/*
 * Building blocks of the files a tree shows: tables rendered row by row, and ActorX files
 * rendered chunk by chunk from a plan. Both render any item range (include/psgfs/base/emit.h).
 */
#ifndef PSGFS_TREE_VIEWS_H
#define PSGFS_TREE_VIEWS_H

#include "psgfs/formats/gltf.h"
#include "psgfs/formats/psk.h"
#include "tree/core/tree_int.h"

/* A table: item 0 is the header line (when there is one), item i+1 is row i. Rows are loaded
 * in batches (load may be NULL when print needs nothing loaded). */
#define ROWS_BATCH 512
struct rows {
	const char *header;
	uint64_t n;
	size_t rec_size; /* bytes of one loaded row */
	enum rc (*load)(const void *ctx, uint64_t first, size_t n, void *out);
	/* Print row i (rec: the loaded row, or NULL). Non-OK stops the render. */
	enum rc (*print)(const void *ctx, uint64_t i, const void *rec, struct buf *b);
	const void *ctx;
};
void view_rows_layout(const struct rows *t, struct layout_build *lb);
enum rc view_rows_render(const struct rows *t, uint64_t first, struct emit *e);

/* An ActorX file: two parts per chunk, its 32-byte header and its records. */
typedef enum rc (*ax_records_fn)(const void *ctx, const struct ax_chunk *c, uint64_t first,
				 struct emit *e);
void view_ax_layout(const struct ax_plan *p, struct layout_build *lb);
enum rc view_ax_render(const struct ax_plan *p, unsigned part, uint64_t first, struct emit *e,
		       ax_records_fn fn, const void *ctx);

/*
 * A file whose layout and render both begin by finding what it is made of: a table, or an
 * ActorX plan with the function writing its records. VIEW_FILE(name, scratch, of) defines a
 * kind's name_layout and name_render from
 *     enum rc of(const struct tctx *c, scratch *x, struct view_file *f)
 * which fills f (rows, or plan + records + ctx); x is storage f may point into.
 */
struct view_file {
	struct rows rows; /* when plan is NULL */
	const struct ax_plan *plan;
	ax_records_fn records;
	const void *ctx; /* of records */
};
void view_file_layout(const struct view_file *f, struct layout_build *lb);
enum rc view_file_render(const struct view_file *f, unsigned part, uint64_t first, struct emit *e);

#define VIEW_FILE(name, scratch, of)                                                               \
	static enum rc name##_layout(const struct tctx *c, struct layout_build *lb)                \
	{                                                                                          \
		scratch x;                                                                         \
		struct view_file f = {.plan = NULL};                                               \
		enum rc r = of(c, &x, &f);                                                         \
                                                                                                   \
		if (r == RC_OK)                                                                    \
			view_file_layout(&f, lb);                                                  \
		return r;                                                                          \
	}                                                                                          \
	static enum rc name##_render(const struct tctx *c, unsigned part, uint64_t first,          \
				     struct emit *e)                                               \
	{                                                                                          \
		scratch x;                                                                         \
		struct view_file f = {.plan = NULL};                                               \
		enum rc r = of(c, &x, &f);                                                         \
                                                                                                   \
		return r == RC_OK ? view_file_render(&f, part, first, e) : r;                      \
	}

/* A GLB (include/psgfs/formats/gltf.h): its parts as layout parts; render with gltf_render. */
void view_glb_layout(const struct gltf_plan *p, struct layout_build *lb);

/* errors.txt from a diag: one line each, then a count of those not kept. */
void view_diag_lines(const struct diag *d, struct buf *out);

#endif
