/* Where a parser's bytes come from: positioned reads over a file or a memory buffer. */
#ifndef PSGFS_SOURCE_H
#define PSGFS_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/result.h"

struct src {
	/* Read exactly n bytes at off; RC_IO (or TRUNCATED) when that cannot be done. */
	enum rc (*read)(void *ctx, uint64_t off, void *dst, size_t n);
	void *ctx;
	uint64_t size; /* size at open time; reads are checked against it first */
};

/* Bounds-checked read through s->read. */
enum rc src_read(const struct src *s, uint64_t off, void *dst, size_t n);

/* A source over a memory buffer (tests, fuzzers, offline tool). mem must outlive s. */
struct src_mem {
	const uint8_t *p;
	size_t size;
};
void src_init_mem(struct src *s, struct src_mem *m, const void *p, size_t size);

/* A source over an open file descriptor using pread; short reads are RC_IO. */
void src_init_fd(struct src *s, int *fd, uint64_t size);

/* Read [off, off+n) into a fresh malloc'd buffer (n may be 0). */
enum rc src_dup(const struct src *s, uint64_t off, size_t n, uint8_t **out);

#endif
