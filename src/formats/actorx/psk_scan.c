/* PSK/PSA chunk scan plus the record helpers the readers and writers share. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "formats/actorx/psk_int.h"

void psk_id_text(const struct psk_chunk *c, char out[84])
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (const char *s = c->id; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch >= 0x7f || ch == '\\') {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		} else {
			out[o++] = (char)ch;
		}
	}
	out[o] = 0;
}

bool psk_chunk_records(const struct psk_chunk *c, size_t idx, uint32_t want, size_t *n,
		       struct diag *d)
{
	char id[84];

	*n = 0;
	if (c->data_count == 0)
		return true;
	psk_id_text(c, id);
	if (c->data_size != want) {
		diag_add(d, "chunk %zu (%s): record size %u, expected %u: chunk skipped", idx, id,
			 c->data_size, want);
		return false;
	}
	*n = (size_t)(c->payload_len / want);
	if (*n < c->data_count)
		diag_add(d, "chunk %zu (%s): only %zu of %u records present", idx, id, *n,
			 c->data_count);
	return true;
}

#define PSK_REP_MAX 8

void psk_rep_add(struct psk_rep *r, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	if (r->n++ >= PSK_REP_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	diag_add(r->d, "%s", line);
}

void psk_rep_end(struct psk_rep *r)
{
	if (r->n > PSK_REP_MAX)
		diag_add(r->d, "%s: %zu more problems like the above", r->what, r->n - PSK_REP_MAX);
}

static float ld_f32le(const uint8_t *p)
{
	return f32_from_bits(ld_u32le(p));
}

void psk_get_bone(const uint8_t *p, struct psk_bone *b)
{
	memcpy(b->name, p, PSK_NAME_LEN);
	b->flags = ld_u32le(p + 64);
	b->num_children = (int32_t)ld_u32le(p + 68);
	b->parent = (int32_t)ld_u32le(p + 72);
	for (int i = 0; i < 4; i++)
		b->rot[i] = ld_f32le(p + 76 + 4 * i);
	for (int i = 0; i < 3; i++)
		b->pos[i] = ld_f32le(p + 92 + 4 * i);
	b->length = ld_f32le(p + 104);
	for (int i = 0; i < 3; i++)
		b->size[i] = ld_f32le(p + 108 + 4 * i);
}

void psk_put_bone(struct buf *b, const struct psk_bone *bone)
{
	buf_put(b, bone->name, PSK_NAME_LEN);
	buf_u32le(b, bone->flags);
	buf_u32le(b, (uint32_t)bone->num_children);
	buf_u32le(b, (uint32_t)bone->parent);
	for (int i = 0; i < 4; i++)
		buf_f32le(b, bone->rot[i]);
	for (int i = 0; i < 3; i++)
		buf_f32le(b, bone->pos[i]);
	buf_f32le(b, bone->length);
	for (int i = 0; i < 3; i++)
		buf_f32le(b, bone->size[i]);
}

void psk_put_header(struct buf *b, const char *id, int32_t flag, uint32_t size, uint32_t count)
{
	uint8_t raw[20] = {0};

	memcpy(raw, id, strnlen(id, sizeof raw));
	buf_put(b, raw, sizeof raw);
	buf_u32le(b, (uint32_t)flag);
	buf_u32le(b, size);
	buf_u32le(b, count);
}

static bool parent_of(const struct psk_bone *b, size_t n, size_t j, size_t *out)
{
	int32_t p = b[j].parent;

	if (j == 0 || p < 0 || (uint64_t)p >= n)
		return false;
	*out = (size_t)p;
	return true;
}

void psk_check_bones(const struct psk_bone *b, size_t n, const char *chunk, struct diag *d)
{
	struct psk_rep rep = {d, chunk, 0};
	uint8_t *state;
	bool forward = false;

	for (size_t i = 0; i < n; i++) {
		int32_t p = b[i].parent;

		if (i == 0) {
			if (p != 0 && p != -1)
				psk_rep_add(&rep, "%s: bone 0 parent %d (root must be 0 or -1)",
					    chunk, p);
		} else if (p < 0 || (uint64_t)p >= n) {
			psk_rep_add(&rep, "%s: bone %zu parent %d out of range (%zu bones)", chunk,
				    i, p, n);
		} else if ((size_t)p >= i) {
			psk_rep_add(&rep, "%s: bone %zu parent %d does not come before it", chunk,
				    i, p);
			forward = true;
		}
	}
	psk_rep_end(&rep);
	if (!forward)
		return; /* every parent precedes its child: no cycle possible */

	/* Walk each chain once: 1 = on the current path, 2 = finished. */
	state = calloc(n, 1);
	if (!state)
		return;
	struct psk_rep cyc = {d, chunk, 0};
	for (size_t i = 0; i < n; i++) {
		size_t j = i;
		bool loop = false;

		for (;;) {
			if (state[j] == 1) {
				loop = true;
				break;
			}
			if (state[j] == 2)
				break;
			state[j] = 1;
			if (!parent_of(b, n, j, &j))
				break;
		}
		if (loop)
			psk_rep_add(&cyc, "%s: bone %zu is in a parent cycle", chunk, j);
		for (j = i; state[j] == 1;) {
			state[j] = 2;
			if (!parent_of(b, n, j, &j))
				break;
		}
	}
	psk_rep_end(&cyc);
	free(state);
}

/* ----------------------------------------------------------------------------- scan */

static void set_id(struct psk_chunk *c, const uint8_t *raw)
{
	size_t n = name_len(raw, 20);

	memcpy(c->raw_id, raw, 20);
	memcpy(c->id, raw, n);
	c->id[n] = 0;
}

void psk_chunks_free(struct psk_chunks *c)
{
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

/* Room for one more chunk: every chunk takes at least 32 bytes, so size/32 bounds the table. */
static enum rc chunks_grow(struct psk_chunks *out, size_t *cap, size_t max_chunks)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	struct psk_chunk *v;

	if (out->n < *cap)
		return RC_OK;
	if (ncap > max_chunks)
		ncap = max_chunks;
	v = xrealloc_n(out->v, ncap, sizeof *v);
	if (!v)
		return RC_NOMEM;
	out->v = v;
	*cap = ncap;
	return RC_OK;
}

/* The chunk whose header h sits at off; the first one says what the file is. */
static enum rc chunk_at(struct psk_chunks *out, const uint8_t *h, uint64_t off)
{
	struct psk_chunk *c = &out->v[out->n];

	memset(c, 0, sizeof *c);
	set_id(c, h);
	c->type_flag = (int32_t)ld_u32le(h + 20);
	c->data_size = ld_u32le(h + 24);
	c->data_count = ld_u32le(h + 28);
	c->offset = off;
	c->payload_off = off + PSK_CHUNK_HEADER;
	if (out->n == 0) {
		if (!strcmp(c->id, "ACTRHEAD"))
			out->kind = PSK_KIND_MESH;
		else if (!strcmp(c->id, "ANIMHEAD"))
			out->kind = PSK_KIND_ANIM;
		else
			return RC_FORMAT;
	}
	out->n++;
	return RC_OK;
}

enum rc psk_scan(const struct src *s, struct psk_chunks *out, struct diag *diag)
{
	uint64_t size = s->size, off = 0;
	size_t cap = 0, max_chunks = (size_t)(size / PSK_CHUNK_HEADER);
	uint8_t h[PSK_CHUNK_HEADER];
	enum rc r = RC_OK;

	memset(out, 0, sizeof *out);
	out->file_size = size;
	if (size < PSK_CHUNK_HEADER)
		return RC_FORMAT;
	while (off < size && r == RC_OK) {
		struct psk_chunk *c;
		uint64_t len, left;
		char id[84];

		if (size - off < PSK_CHUNK_HEADER) {
			diag_add(
			    diag,
			    "%llu trailing bytes at offset %llu are too short for a chunk header",
			    (unsigned long long)(size - off), (unsigned long long)off);
			break;
		}
		r = src_read(s, off, h, sizeof h);
		if (r == RC_OK)
			r = chunks_grow(out, &cap, max_chunks);
		if (r == RC_OK)
			r = chunk_at(out, h, off);
		if (r != RC_OK)
			break;
		c = &out->v[out->n - 1];
		left = size - c->payload_off;
		psk_id_text(c, id);
		if (!mul_ok(c->data_size, c->data_count, &len) || len > left) {
			c->truncated = true;
			c->payload_len = left;
			diag_add(
			    diag,
			    "chunk %zu (%s) at offset %llu: %u records of %u bytes run past the "
			    "end of the file (%llu bytes present)",
			    out->n - 1, id, (unsigned long long)off, c->data_count, c->data_size,
			    (unsigned long long)left);
			if (out->n == 1)
				return RC_CORRUPT; /* the head hides where chunk 1 starts */
			break;
		}
		c->payload_len = len;
		if (out->n == 1 && len != 0)
			diag_add(diag, "chunk 0 (%s): head chunk carries %llu payload bytes", id,
				 (unsigned long long)len);
		off = c->payload_off + len;
	}
	if (r != RC_OK)
		psk_chunks_free(out);
	return r;
}
