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

void diag_add(struct diag *d, const char *fmt, ...)
{
	char line[512], **v;
	va_list ap;

	if (!d)
		return;
	if (d->n >= DIAG_MAX) {
		d->dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	v = xgrow_n(d->msg, d->n, &d->cap, sizeof *v, 16);
	if (!v) {
		d->dropped++;
		return;
	}
	d->msg = v;
	d->msg[d->n] = escaped(line);
	if (!d->msg[d->n]) {
		d->dropped++;
		return;
	}
	d->n++;
}
