/* Growable output buffer with a counting mode, plus the text helpers every TSV uses. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/buf.h"
#include "psgfs/bytes.h"

void buf_init(struct buf *b)
{
	memset(b, 0, sizeof *b);
}

void buf_init_count(struct buf *b)
{
	memset(b, 0, sizeof *b);
	b->count_only = true;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

uint8_t *buf_steal(struct buf *b, size_t *len)
{
	uint8_t *p = b->oom ? NULL : b->data;

	*len = p ? b->len : 0;
	if (!p)
		free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

/* Make room for n more bytes; false (and oom) when that cannot be done. */
static bool buf_reserve(struct buf *b, size_t n)
{
	size_t want, cap;
	uint8_t *p;

	if (b->oom)
		return false;
	if (n > SIZE_MAX - b->len) {
		b->oom = true;
		return false;
	}
	if (b->count_only) {
		b->len += n;
		return false;
	}
	want = b->len + n;
	if (want <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void buf_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0 || !buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void buf_zero(struct buf *b, size_t n)
{
	if (n == 0 || !buf_reserve(b, n))
		return;
	memset(b->data + b->len, 0, n);
	b->len += n;
}

void buf_putc(struct buf *b, char c)
{
	buf_put(b, &c, 1);
}

void buf_puts(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof small) {
		buf_put(b, small, (size_t)n);
		return;
	}
	if (b->count_only) {
		buf_reserve(b, (size_t)n);
		return;
	}
	if (!buf_reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_pad_to(struct buf *b, size_t align)
{
	if (align > 1 && b->len % align)
		buf_zero(b, align - b->len % align);
}

void buf_u8(struct buf *b, uint8_t v)
{
	buf_put(b, &v, 1);
}

void buf_u16le(struct buf *b, uint16_t v)
{
	uint8_t p[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	buf_put(b, p, 2);
}

void buf_u32le(struct buf *b, uint32_t v)
{
	uint8_t p[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	buf_put(b, p, 4);
}

void buf_u64le(struct buf *b, uint64_t v)
{
	buf_u32le(b, (uint32_t)v);
	buf_u32le(b, (uint32_t)(v >> 32));
}

void buf_f32le(struct buf *b, float v)
{
	buf_u32le(b, f32_bits(v));
}

void buf_u16be(struct buf *b, uint16_t v)
{
	uint8_t p[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	buf_put(b, p, 2);
}

void buf_u32be(struct buf *b, uint32_t v)
{
	uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	buf_put(b, p, 4);
}

void buf_u64be(struct buf *b, uint64_t v)
{
	buf_u32be(b, (uint32_t)(v >> 32));
	buf_u32be(b, (uint32_t)v);
}

void buf_f32be(struct buf *b, float v)
{
	buf_u32be(b, f32_bits(v));
}

void buf_set_u32be(struct buf *b, size_t at, uint32_t v)
{
	if (b->count_only || b->oom || at > b->len || b->len - at < 4)
		return;
	b->data[at] = (uint8_t)(v >> 24);
	b->data[at + 1] = (uint8_t)(v >> 16);
	b->data[at + 2] = (uint8_t)(v >> 8);
	b->data[at + 3] = (uint8_t)v;
}

void buf_set_u32le(struct buf *b, size_t at, uint32_t v)
{
	if (b->count_only || b->oom || at > b->len || b->len - at < 4)
		return;
	b->data[at] = (uint8_t)v;
	b->data[at + 1] = (uint8_t)(v >> 8);
	b->data[at + 2] = (uint8_t)(v >> 16);
	b->data[at + 3] = (uint8_t)(v >> 24);
}

void fmt_f32(char out[32], float f)
{
	if (isnan(f)) {
		strcpy(out, signbit(f) ? "-nan" : "nan");
		return;
	}
	if (isinf(f)) {
		strcpy(out, f < 0 ? "-inf" : "inf");
		return;
	}
	/* %.9g always round-trips a float32; try shorter forms first so output reads well. */
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(out, 32, "%.*g", prec, (double)f);
		if (strtof(out, NULL) == f && (f != 0 || signbit(strtof(out, NULL)) == signbit(f)))
			return;
	}
}

void buf_f32txt(struct buf *b, float f)
{
	char s[32];

	fmt_f32(s, f);
	buf_puts(b, s);
}

void buf_tsv_name(struct buf *b, const void *raw, size_t maxlen)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = raw;

	for (size_t i = 0; i < maxlen && p[i]; i++) {
		uint8_t c = p[i];

		if (c == '\t')
			buf_puts(b, "\\t");
		else if (c == '\n')
			buf_puts(b, "\\n");
		else if (c == '\r')
			buf_puts(b, "\\r");
		else if (c == '\\')
			buf_puts(b, "\\\\");
		else if (c < 0x20 || c == 0x7f) {
			char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};

			buf_put(b, e, 4);
		} else {
			buf_putc(b, (char)c);
		}
	}
}
