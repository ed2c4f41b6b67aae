/*
 * Growable output buffer shared by writers and text renderers. In counting mode nothing is
 * stored and only `len` advances, so the exact size of a synthesized file costs no memory.
 * Allocation failure is sticky (`oom`); callers check it once at the end.
 */
#ifndef PSGFS_BUF_H
#define PSGFS_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool count_only;
	bool oom;
};

void buf_init(struct buf *b);
void buf_init_count(struct buf *b);
void buf_free(struct buf *b);
/* Hand the bytes to the caller (buffer becomes empty). NULL when empty or oom. */
uint8_t *buf_steal(struct buf *b, size_t *len);

/* Allocate room for cap bytes in all now (no effect on len or in counting mode). */
void buf_prealloc(struct buf *b, size_t cap);

/* Internal to the inline writers below: growth, counting mode and oom. */
void buf_put_slow(struct buf *b, const void *p, size_t n);

/* Room for n more bytes already allocated (never in counting mode, where data is NULL). The
 * writers below are inline for this common case: binary exports write millions of 4-byte
 * values and text views millions of short fields, one call each. */
static inline bool buf_room(const struct buf *b, size_t n)
{
	return b->data && !b->oom && n <= b->cap - b->len;
}

static inline void buf_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0) /* p may be NULL then, which memcpy does not allow */
		return;
	if (buf_room(b, n)) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
		return;
	}
	buf_put_slow(b, p, n);
}

static inline void buf_putc(struct buf *b, char c)
{
	if (buf_room(b, 1)) {
		b->data[b->len++] = (uint8_t)c;
		return;
	}
	buf_put_slow(b, &c, 1);
}

static inline void buf_u32le(struct buf *b, uint32_t v)
{
	uint8_t p[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	if (buf_room(b, 4)) { /* the common case, as one store */
		memcpy(b->data + b->len, p, 4);
		b->len += 4;
		return;
	}
	buf_put_slow(b, p, 4);
}

static inline void buf_f32le(struct buf *b, float v)
{
	uint32_t u;

	memcpy(&u, &v, sizeof u);
	buf_u32le(b, u);
}

void buf_zero(struct buf *b, size_t n);
void buf_puts(struct buf *b, const char *s);
/* snprintf's bytes. Integer, character and string conversions (flags '-' and '0', widths, a
 * string's precision, any length modifier) are written here, without stdio: a view's text is
 * counted at every stat. A call with any other conversion goes to vsnprintf whole. */
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_pad_to(struct buf *b, size_t align); /* zero bytes up to a multiple of align */

void buf_u8(struct buf *b, uint8_t v);
void buf_u16le(struct buf *b, uint16_t v);
void buf_u16be(struct buf *b, uint16_t v);
void buf_u32be(struct buf *b, uint32_t v);
void buf_u64be(struct buf *b, uint64_t v);
void buf_f32be(struct buf *b, float v);
/* Overwrite 4 bytes at an earlier position (no-op in counting mode). */
void buf_set_u32be(struct buf *b, size_t at, uint32_t v);

/* Text helpers: every TSV in the tree goes through these. */
/* Shortest decimal that strtof reads back to the same float32 ("nan", "inf", "-inf" too). */
void fmt_f32(char out[32], float f);
void buf_f32txt(struct buf *b, float f);
/* n floats as TSV fields, each after a tab (fmt_f32's text): one buffer write for a run of
 * columns, the same bytes as a buf_putc('\t') and buf_f32txt() per float. */
void buf_f32_fields(struct buf *b, const float *v, size_t n);
/* Decimal of v as printf's %llu writes it, without the format machinery (a TSV of millions of
 * rows is counted for its size at stat time); returns its length, out is not terminated. */
size_t fmt_u64(char out[20], uint64_t v);
void buf_u64txt(struct buf *b, uint64_t v);
/* Decimal fields joined by tabs, ending in a newline: one TSV row of n numbers. */
void buf_u64_row(struct buf *b, const uint64_t *v, size_t n);
/* A field from an untrusted fixed-size name: stops at NUL, escapes \t \n \r \\ and
 * non-printable bytes as \xHH so a TSV row stays one row. */
void buf_tsv_name(struct buf *b, const void *raw, size_t maxlen);

#endif
