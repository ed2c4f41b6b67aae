/*
 * Internals of the district model: district.c defines these helpers, district_scan.c (the
 * collection files and the lint) and district_views.c (the text views) use them; district.c
 * calls neither of them.
 */
#ifndef PSGFS_DISTRICT_INT_H
#define PSGFS_DISTRICT_INT_H

#include "formats/world/district.h"

/* "<dist>_<Kind>.<ext>" of file f. */
void dist_kind_file(const struct district *m, enum dist_kind k, enum sm_file f, char *out,
		    size_t n);
/* The order of two uint64_t ids, for qsort and bsearch. */
int dist_id_cmp(const void *x, const void *y);
/* The first record with this id in an index of n (NULL: none), or -1. */
long dist_ix_find(const struct dist_id_ix *ix, uint32_t n, uint64_t id);
/* Whether the sorted ids v[0..n) hold id. */
bool dist_ids_has(const uint64_t *v, uint32_t n, uint64_t id);
/* Why a file cannot be read, in errors.txt's words. */
const char *dist_rc_why(enum rc r);
/* The first problem a record's SM_F_* flags name, NULL when none. */
const char *dist_flag_words(uint8_t f);
/* A collection the game always loads (no cell bounds needed). */
bool dist_is_global(const struct sm_collection *c);

#endif
