/* Bounded list of problem lines. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"

void diag_init(struct diag *d)
{
	memset(d, 0, sizeof *d);
}

void diag_free(struct diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->msg[i]);
	free(d->msg);
	memset(d, 0, sizeof *d);
}

size_t diag_count(const struct diag *d)
{
	return d->n + d->dropped;
}

size_t diag_heap_bytes(const struct diag *d)
{
	size_t n = d->cap * sizeof *d->msg;

	for (size_t i = 0; i < d->n; i++)
		n += strlen(d->msg[i]) + 1 + 2 * sizeof(size_t); /* and malloc's header */
	return n;
}

void diag_box_free(void *d)
{
	diag_free(d);
	free(d);
}

void diag_note(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	size_t used;

	if (!why || whylen == 0)
		return;
	used = strlen(why);
	if (used + 3 >= whylen)
		return;
	if (used) {
		memcpy(why + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(why + used, whylen - used, fmt, ap);
	va_end(ap);
}

/* The line as one line of text, in a malloc'd string (NULL when out of memory). */
static char *escaped(const char *line)
{
	struct buf b;
	size_t len;

	buf_init(&b);
	buf_tsv_name(&b, line, strlen(line));
	buf_putc(&b, '\0');
	return b.oom ? (buf_free(&b), NULL) : (char *)buf_steal(&b, &len);
}

/* A line longer than DIAG_LINE_MAX keeps its start (what) and its end (why, where lines put
 * it) around an ellipsis, cut between UTF-8 characters. */
static void shorten(char *line)
{
	static const char dots[] = "\xe2\x80\xa6"; /* U+2026 */
	size_t n = strlen(line), head = DIAG_LINE_MAX / 4, tail;

	if (n <= DIAG_LINE_MAX)
		return;
	while (head && ((uint8_t)line[head] & 0xC0) == 0x80)
		head--;
	tail = n - (DIAG_LINE_MAX - head - (sizeof dots - 1));
	while (tail < n && ((uint8_t)line[tail] & 0xC0) == 0x80)
		tail++;
	memcpy(line + head, dots, sizeof dots - 1);
	memmove(line + head + sizeof dots - 1, line + tail, n - tail + 1);
}

void diag_add(struct diag *d, const char *fmt, ...)
{
	char stack[512], *line = stack, **v;
	va_list ap, aq;
	int n;

	if (!d)
		return;
	if (d->n >= DIAG_MAX) {
		d->dropped++;
		return;
	}
	va_start(ap, fmt);
	va_copy(aq, ap);
	n = vsnprintf(stack, sizeof stack, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof stack) { /* whole, then shortened where it says least */
		line = malloc((size_t)n + 1);
		if (line)
			vsnprintf(line, (size_t)n + 1, fmt, aq);
	}
	va_end(aq);
	v = line ? xgrow_n(d->msg, d->n, &d->cap, sizeof *v, 16) : NULL;
	if (!v) {
		if (line != stack)
			free(line);
		d->dropped++;
		return;
	}
	shorten(line);
	d->msg = v;
	d->msg[d->n] = escaped(line);
	if (line != stack)
		free(line);
	if (!d->msg[d->n]) {
		d->dropped++;
		return;
	}
	d->n++;
}
