/*
 * Allocation accounting for the hostile-input tests (test_hostile.c, test_world_hostile.c):
 * linked with -Wl,--wrap=malloc,calloc,realloc,reallocarray,free,strdup (tests/unit/meson.build),
 * so every allocation of the statically linked library is seen. max_req is the largest single
 * request since the test last reset it; live and peak are the bytes (usable sizes) held.
 * Header-only: each test includes it once.
 */
#ifndef PSGFS_TEST_ALLOC_COUNT_H
#define PSGFS_TEST_ALLOC_COUNT_H

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t n, size_t s);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t s);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t n, size_t s);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);

static size_t max_req;	     /* largest single request since the last reset */
static size_t n_mapped;	     /* requests of 128 KiB or more (fresh mappings under ASan) */
static long long live, peak; /* bytes (usable sizes) held through the wrapped calls */

static void note_req(size_t n)
{
	if (n > max_req)
		max_req = n;
	if (n >= (128u << 10))
		n_mapped++;
}

static void note_alloc(void *p)
{
	if (p) {
		live += (long long)malloc_usable_size(p);
		if (live > peak)
			peak = live;
	}
}

void *__wrap_malloc(size_t n)
{
	void *p;

	note_req(n);
	p = __real_malloc(n);
	note_alloc(p);
	return p;
}

void *__wrap_calloc(size_t n, size_t s)
{
	void *p;

	note_req(s && n > SIZE_MAX / s ? SIZE_MAX : n * s);
	p = __real_calloc(n, s);
	note_alloc(p);
	return p;
}

void *__wrap_realloc(void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;
	void *q;

	note_req(n);
	q = __real_realloc(p, n);
	if (q || n == 0) {
		live -= (long long)old;
		note_alloc(q);
	}
	return q;
}

void *__wrap_reallocarray(void *p, size_t n, size_t s)
{
	if (s && n > SIZE_MAX / s) {
		note_req(SIZE_MAX);
		return __real_reallocarray(p, n, s); /* fails with ENOMEM */
	}
	return __wrap_realloc(p, n * s);
}

void __wrap_free(void *p)
{
	if (p)
		live -= (long long)malloc_usable_size(p);
	__real_free(p);
}

char *__wrap_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = __wrap_malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

#endif
