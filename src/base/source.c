/* pread and memory sources. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/source.h"

enum rc src_read(const struct src *s, uint64_t off, void *dst, size_t n)
{
	if (!span_ok(s->size, off, n))
		return RC_TRUNCATED;
	if (n == 0)
		return RC_OK;
	return s->read(s->ctx, off, dst, n);
}

static enum rc mem_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct src_mem *m = ctx;

	if (!span_ok(m->size, off, n))
		return RC_TRUNCATED;
	memcpy(dst, m->p + off, n);
	return RC_OK;
}

void src_init_mem(struct src *s, struct src_mem *m, const void *p, size_t size)
{
	m->p = p;
	m->size = size;
	s->read = mem_read;
	s->ctx = m;
	s->size = size;
}

static enum rc fd_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	int fd = *(int *)ctx;
	uint8_t *p = dst;

	while (n > 0) {
		ssize_t got = pread(fd, p, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return RC_IO; /* error, or the file shrank under us */
		p += got;
		off += (uint64_t)got;
		n -= (size_t)got;
	}
	return RC_OK;
}

void src_init_fd(struct src *s, int *fd, uint64_t size)
{
	s->read = fd_read;
	s->ctx = fd;
	s->size = size;
}

enum rc src_dup(const struct src *s, uint64_t off, size_t n, uint8_t **out)
{
	enum rc r;
	uint8_t *p;

	*out = NULL;
	if (!span_ok(s->size, off, n))
		return RC_TRUNCATED;
	p = malloc(n ? n : 1);
	if (!p)
		return RC_NOMEM;
	r = src_read(s, off, p, n);
	if (r != RC_OK) {
		free(p);
		return r;
	}
	*out = p;
	return RC_OK;
}
