/*
 * An arena with one base resource resized, everything else kept (docs/rw4-arena.md, "File
 * layout", "Writing an arena"): the resources after it in its region move to the next multiple
 * of their own alignment, the region's descriptor and the dictionary rows follow, every other
 * byte of the file is copied. The main block (header, sections, objects, dictionary) keeps its
 * size and place, so nothing that points into it changes. The same size is a plain copy.
 */
#ifndef PSGFS_ARENA_PATCH_H
#define PSGFS_ARENA_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/result.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/arena.h"

struct arena_patch {
	uint32_t row; /* the resized base resource */
	uint32_t old_size, new_size;
	unsigned k;		/* its region */
	uint32_t *ptr;		/* new ptr of every dictionary row (n_dict) */
	uint32_t *rows, n_rows; /* the region's base resources in ptr order (old and new) */
	uint32_t rd[RW_MAX_RD]; /* new descriptor sizes */
	uint64_t total;		/* size of the new file */
	bool same;		/* nothing moves: the file is copied as it is */
};

/*
 * Plan resizing base resource `row` to new_size. Only a layout it can account for is changed:
 * the regions add up to the file, and the base resources of the row's region are readable,
 * inside the region, aligned to powers of two and do not overlap (RC_CORRUPT with a line in
 * why otherwise); RC_UNSUPPORTED past 4 GiB.
 */
enum rc arena_patch_plan(const struct arena *a, uint32_t row, uint64_t new_size,
			 struct arena_patch *p, char *why, size_t whylen);
/* Absolute offset of row i's bytes in the new file. */
uint64_t arena_patch_start(const struct arena *a, const struct arena_patch *p, uint32_t i);
/* Write the new file into dst (p->total bytes): the resized resource reads as zeros (its old
 * bytes when the size is unchanged), everything else as described above. */
enum rc arena_patch_write(const struct src *s, const struct arena *a, const struct arena_patch *p,
			  uint8_t *dst);
void arena_patch_free(struct arena_patch *p);

#endif
