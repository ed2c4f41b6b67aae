/* Problems found while decoding: one line each, deterministic order, bounded in number. */
#ifndef PSGFS_DIAG_H
#define PSGFS_DIAG_H

#include <stddef.h>

#define DIAG_MAX 10000
/* Bytes of a line before escaping: a longer one keeps its first quarter and its end (where
 * the reason is) around "…" (U+2026). */
#define DIAG_LINE_MAX 2048

struct diag {
	char **msg;
	size_t n;
	size_t cap;
	size_t dropped; /* lines beyond DIAG_MAX (or lost to allocation failure) */
};

void diag_init(struct diag *d);
void diag_free(struct diag *d);
/* Append one line (no trailing newline). Control bytes and backslashes inside are escaped as
 * buf_tsv_name does (\n, \t, \xHH, \\), so a name quoted in a line can neither end it nor
 * forge another. A NULL diag is allowed and ignores the call. */
void diag_add(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Total problems seen, including dropped ones. */
size_t diag_count(const struct diag *d);
/* Heap the lines hold (for charging a cache budget). */
size_t diag_heap_bytes(const struct diag *d);
/* diag_free then free: the destructor of a diag allocated on the heap (a cache entry). */
void diag_box_free(void *d);

/* The one-line form for functions that explain through a `why` buffer of whylen bytes: append
 * a note, after "; " when why is not empty; what does not fit is dropped. why may be NULL. */
void diag_note(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
