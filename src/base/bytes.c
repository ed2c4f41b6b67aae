/* Checked byte reader and overflow-checked allocation. */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/result.h"

bool br_seek(struct br *r, size_t off)
{
	if (r->err || off > r->size) {
		r->err = true;
		r->off = r->size;
		return false;
	}
	r->off = off;
	return true;
}

bool br_skip(struct br *r, size_t n)
{
	if (r->err || n > r->size - r->off) {
		r->err = true;
		r->off = r->size;
		return false;
	}
	r->off += n;
	return true;
}

const uint8_t *br_take(struct br *r, size_t n)
{
	const uint8_t *p = r->p + r->off;

	if (!br_skip(r, n))
		return NULL;
	return p;
}

bool br_copy(struct br *r, void *dst, size_t n)
{
	const uint8_t *p = br_take(r, n);

	if (!p) {
		memset(dst, 0, n);
		return false;
	}
	memcpy(dst, p, n);
	return true;
}

uint8_t br_u8(struct br *r)
{
	const uint8_t *p = br_take(r, 1);

	return p ? p[0] : 0;
}

uint16_t br_u16(struct br *r)
{
	const uint8_t *p = br_take(r, 2);

	if (!p)
		return 0;
	return r->be ? ld_u16be(p) : ld_u16le(p);
}

uint32_t br_u32(struct br *r)
{
	const uint8_t *p = br_take(r, 4);

	if (!p)
		return 0;
	return r->be ? ld_u32be(p) : ld_u32le(p);
}

uint64_t br_u64(struct br *r)
{
	const uint8_t *p = br_take(r, 8);

	if (!p)
		return 0;
	return r->be ? ld_u64be(p) : ld_u64le(p);
}

float br_f32(struct br *r)
{
	return f32_from_bits(br_u32(r));
}

void *xcalloc_n(size_t n, size_t size)
{
	uint64_t total;

	if (!mul_ok(n, size, &total) || total > SIZE_MAX)
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

void *xrealloc_n(void *p, size_t n, size_t size)
{
	uint64_t total;

	if (!mul_ok(n, size, &total) || total > SIZE_MAX)
		return NULL;
	return realloc(p, total ? total : 1);
}

void *xgrow_n(void *p, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t nc;
	void *q;

	if (n < *cap)
		return p;
	if (*cap > SIZE_MAX / 2)
		return NULL;
	nc = *cap ? *cap * 2 : first;
	q = xrealloc_n(p, nc, size);
	if (q)
		*cap = nc;
	return q;
}

void *xroom_n(void *p, size_t n, size_t *cap, size_t size)
{
	n = n ? n : 1;
	if (p && n <= *cap)
		return p;
	free(p);
	p = xrealloc_n(NULL, n, size);
	*cap = p ? n : 0;
	return p;
}

void *xshrink_n(void *p, size_t n, size_t size)
{
	void *q;

	if (!p || n == 0) {
		free(p);
		return NULL;
	}
	q = realloc(p, n * size); /* no overflow: p already holds at least n elements */
	return q ? q : p;
}

enum rc rc_fail(char *why, size_t whylen, enum rc r, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return r;
}

const char *rc_str(enum rc r)
{
	switch (r) {
	case RC_OK:
		return "ok";
	case RC_TRUNCATED:
		return "truncated";
	case RC_BOUNDS:
		return "out of bounds";
	case RC_FORMAT:
		return "not a recognised format";
	case RC_CORRUPT:
		return "corrupt";
	case RC_UNSUPPORTED:
		return "unsupported";
	case RC_NOMEM:
		return "out of memory";
	case RC_IO:
		return "read error";
	case RC_NOENT:
		return "no such entry";
	case RC_NOTDIR:
		return "not a directory";
	case RC_ISDIR:
		return "is a directory";
	case RC_INVAL:
		return "invalid argument";
	case RC_READONLY:
		return "read-only";
	case RC_NOSPACE:
		return "no space";
	case RC_TOOBIG:
		return "too big";
	case RC_EXISTS:
		return "exists";
	case RC_DENIED:
		return "not permitted";
	case RC_NOFILES:
		return "too many open files";
	}
	return "unknown error";
}

size_t heap_block(const void *p)
{
	return p ? malloc_usable_size((void *)p) + sizeof(size_t) : 0;
}
