/* Checked byte reading for every parser: bounds by subtraction, sticky errors, both endians. */
#ifndef PSGFS_BYTES_H
#define PSGFS_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* True when [off, off+len) lies inside a buffer of `size` bytes. Never overflows. */
static inline bool span_ok(uint64_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

/* *out = a * b; false on overflow. */
static inline bool mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a != 0 && b > UINT64_MAX / a)
		return false;
	*out = a * b;
	return true;
}

/* *out = a + b; false on overflow. */
static inline bool add_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	if (b > UINT64_MAX - a)
		return false;
	*out = a + b;
	return true;
}

/* Align x up to a power-of-two or any non-zero a (a == 0 returns x). */
static inline uint64_t align_up(uint64_t x, uint64_t a)
{
	if (a <= 1)
		return x;
	return (x + a - 1) / a * a;
}

/* Unchecked loads from a pointer the caller has already bounds-checked. */
static inline uint16_t ld_u16be(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint16_t ld_u16le(const uint8_t *p)
{
	return (uint16_t)(p[1] << 8 | p[0]);
}
static inline uint32_t ld_u32be(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint32_t ld_u32le(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
static inline uint64_t ld_u64be(const uint8_t *p)
{
	return (uint64_t)ld_u32be(p) << 32 | ld_u32be(p + 4);
}
static inline uint64_t ld_u64le(const uint8_t *p)
{
	return (uint64_t)ld_u32le(p + 4) << 32 | ld_u32le(p);
}
static inline float f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}
static inline uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/*
 * A cursor over a bounded buffer. Any read past the end sets `err`, returns 0 and leaves the
 * cursor at the end, so a parser can read a whole record and check `err` once.
 */
struct br {
	const uint8_t *p;
	size_t size;
	size_t off;
	bool be;  /* big-endian */
	bool err; /* sticky: a read or seek failed */
};

static inline void br_init(struct br *r, const void *p, size_t size, bool big_endian)
{
	r->p = p;
	r->size = size;
	r->off = 0;
	r->be = big_endian;
	r->err = false;
}

/* A fresh cursor at off (sticky error set when off is past the end): decoders of objects with
 * several independent tables take one per table, so a bad offset spoils only its own table. */
static inline struct br br_at(const void *p, size_t size, bool big_endian, size_t off)
{
	struct br r;

	br_init(&r, p, size, big_endian);
	if (off > size) {
		r.err = true;
		r.off = size;
	} else {
		r.off = off;
	}
	return r;
}

/* Bytes left after the cursor. */
static inline size_t br_left(const struct br *r)
{
	return r->size - r->off;
}

bool br_seek(struct br *r, size_t off);
bool br_skip(struct br *r, size_t n);
/* Pointer to the next n bytes and advance; NULL (and err) when fewer remain. */
const uint8_t *br_take(struct br *r, size_t n);
bool br_copy(struct br *r, void *dst, size_t n);
uint8_t br_u8(struct br *r);
uint16_t br_u16(struct br *r);
uint32_t br_u32(struct br *r);
uint64_t br_u64(struct br *r);
float br_f32(struct br *r);

/* calloc(n, size) that refuses overflow and zero-size requests are fine (returns non-NULL). */
void *xcalloc_n(size_t n, size_t size);
/* reallocarray that refuses overflow. */
void *xrealloc_n(void *p, size_t n, size_t size);
/* Room for element n of the array p of *cap elements of `size` bytes, growing it by doubling:
 * p itself while n < *cap; else p reallocated to 2 * *cap elements (`first` when *cap is 0)
 * and *cap updated. NULL when that overflows or fails, p and *cap then left as they were. */
void *xgrow_n(void *p, size_t n, size_t *cap, size_t size, size_t first);
/* Scratch room for n elements (at least 1) of `size` bytes whose contents need not survive:
 * p itself while n <= *cap, else p freed and a new array allocated (nothing copied), *cap
 * updated. NULL when that overflows or fails, p then freed and *cap 0. */
void *xroom_n(void *p, size_t n, size_t *cap, size_t size);
/* An array grown by doubling cut to its n elements, for data kept long: p itself when realloc
 * fails; freed (NULL) when n is 0. */
void *xshrink_n(void *p, size_t n, size_t size);
/* What malloc holds for block p (its usable size and header; 0 for NULL): what a structure kept
 * long is charged to a cache budget. */
size_t heap_block(const void *p);

#endif
