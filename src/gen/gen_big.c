/*
 * EB v3 and BIGF/BIG4 writers (docs/archives.md). EB v3 layout, all big-endian:
 *   0x00 "EB" 00 03, u32 count, u16 flags (bit 0: 20-byte records), u8 shift, u8 0,
 *   0x0C u32 names offset, u32 names size, u8 name record size, u8 folder record size,
 *   0x16 u16 folder count, 0x18 u64 archive size, 0x20 u32 table bytes, zeros to 0x30;
 *   records {offset >> shift, stored (0 = as is), unpacked, hash[, hash2]} at 0x30;
 *   one compression byte per entry at 0x30 + align16(count * record);
 *   name records {u16 folder, NUL-padded name} at the names offset (16-aligned);
 *   folder strings at align16(names offset + count * name record).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/hash.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/refpack_enc.h"

#define EB_HDR	  0x30u
#define FILL_STEP (1u << 20)

/* ---- sinks ---- */

static enum rc sink_buf_write(void *ctx, uint64_t off, const void *p, size_t n)
{
	struct buf *b = ctx;

	if (off > SIZE_MAX - n)
		return RC_NOMEM;
	if (off + n > b->len)
		buf_zero(b, (size_t)(off + n - b->len));
	if (b->oom)
		return RC_NOMEM;
	if (!b->count_only && n)
		memcpy(b->data + off, p, n);
	return RC_OK;
}

void gen_sink_buf(struct gen_sink *s, struct buf *b)
{
	s->write_at = sink_buf_write;
	s->ctx = b;
}

static enum rc sink_fd_write(void *ctx, uint64_t off, const void *p, size_t n)
{
	int fd = *(int *)ctx;
	const uint8_t *c = p;

	while (n) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return RC_IO;
		c += w;
		off += (uint64_t)w;
		n -= (size_t)w;
	}
	return RC_OK;
}

void gen_sink_fd(struct gen_sink *s, int *fd)
{
	s->write_at = sink_fd_write;
	s->ctx = fd;
}

static enum rc put(struct gen_sink *s, uint64_t off, const struct buf *b)
{
	if (b->oom)
		return RC_NOMEM;
	return s->write_at(s->ctx, off, b->data, b->len);
}

/* ---- entry bytes ---- */

/* Bytes [off, off+n) of entry e into dst. */
static void entry_bytes(const struct gen_big_entry *e, uint64_t off, uint8_t *dst, size_t n)
{
	if (e->data)
		memcpy(dst, e->data + off, n);
	else if (e->fill)
		e->fill(e->ctx, off, dst, n);
	else
		memset(dst, 0, n);
}

/*
 * Buffers kept across the entries (and chunks) of one write, grown only: the input bytes, the
 * packed bytes and the RefPack tables. Allocated per entry they were up to a mebibyte each time,
 * which under ASan is a fresh mapping, page faults and clearing per entry.
 */
struct gb_work {
	uint8_t *in;
	size_t in_cap;
	struct buf out;
	struct rp_work rp;
};

static void gb_work_init(struct gb_work *w)
{
	memset(w, 0, sizeof *w);
	buf_init(&w->out);
}

static void gb_work_free(struct gb_work *w)
{
	free(w->in);
	buf_free(&w->out);
	rp_work_free(&w->rp);
	gb_work_init(w);
}

/* w->in with room for n bytes (its old contents are not kept). */
static uint8_t *gb_room(struct gb_work *w, size_t n)
{
	w->in = xroom_n(w->in, n, &w->in_cap, 1);
	return w->in;
}

/* w->out emptied for the next entry or chunk. */
static struct buf *gb_out(struct gb_work *w)
{
	if (w->out.oom)
		buf_free(&w->out);
	w->out.len = 0;
	return &w->out;
}

/* The whole entry in memory (RefPack needs its whole input): its own bytes, or w->in. */
static enum rc entry_all(const struct gen_big_entry *e, struct gb_work *w, const uint8_t **out)
{
	uint8_t *p;

	if (e->len > SIZE_MAX - 1)
		return RC_NOMEM;
	if (e->data) {
		*out = e->data;
		return RC_OK;
	}
	p = gb_room(w, (size_t)e->len);
	if (!p)
		return RC_NOMEM;
	entry_bytes(e, 0, p, (size_t)e->len);
	*out = p;
	return RC_OK;
}

static enum rc write_stored(const struct gen_big_entry *e, struct gen_sink *s, uint64_t at,
			    uint64_t *stored, struct gb_work *w)
{
	size_t step = e->len < FILL_STEP ? (size_t)e->len : FILL_STEP;
	uint8_t *tmp = gb_room(w, step);
	enum rc r = tmp ? RC_OK : RC_NOMEM;

	for (uint64_t off = 0; r == RC_OK && off < e->len; off += FILL_STEP) {
		size_t k = e->len - off < FILL_STEP ? (size_t)(e->len - off) : FILL_STEP;

		entry_bytes(e, off, tmp, k);
		r = s->write_at(s->ctx, at + off, tmp, k);
	}
	*stored = e->len;
	return r;
}

static enum rc write_refpack(const struct gen_big_entry *e, struct gen_sink *s, uint64_t at,
			     uint64_t *stored, struct gb_work *w)
{
	struct rp_enc_opts ro = {.header = e->rp_header, .chain = e->rp_chain};
	const uint8_t *in;
	struct buf *b = gb_out(w);
	enum rc r = entry_all(e, w, &in);

	*stored = 0;
	if (r != RC_OK)
		return r;
	r = rp_encode_work(in, (size_t)e->len, &ro, b, NULL, &w->rp);
	if (r == RC_OK)
		r = put(s, at, b);
	*stored = b->len;
	return r;
}

/* ---- LZX, uncompressed blocks only ---- */

/* LZX bits go MSB first into 16-bit little-endian words (libmspack's lzxd reads them so). */
struct lzx_bits {
	struct buf *out;
	uint32_t acc;
	unsigned n;
};

static void lzx_put_bits(struct lzx_bits *w, uint32_t v, unsigned bits)
{
	while (bits--) {
		w->acc = w->acc << 1 | ((v >> bits) & 1);
		if (++w->n == 16) {
			buf_u8(w->out, (uint8_t)w->acc);
			buf_u8(w->out, (uint8_t)(w->acc >> 8));
			w->acc = 0;
			w->n = 0;
		}
	}
}

/* Pad to the next word; a stream already at a word boundary gets a whole padding word (the
 * decoder drops 1-16 bits before an uncompressed block's R0-R2). */
static void lzx_pad_word(struct lzx_bits *w)
{
	lzx_put_bits(w, 0, 16 - w->n);
}

/*
 * One LZX stream (window 2^17, no E8 translation): per 32 KiB frame an uncompressed block
 * {type 3, 24-bit length, padding, R0 R1 R2 = 1, the bytes, a pad byte when odd}, each frame
 * inside an XMem block {FF, u16 BE unpacked, u16 BE packed}.
 */
void gen_lzx_stored(const uint8_t *in, size_t n, struct buf *out)
{
	size_t done = 0;
	bool first = true;

	do {
		size_t k = n - done < 32768 ? n - done : 32768;
		struct buf f;
		struct lzx_bits w = {.out = &f};

		buf_init(&f);
		if (first)
			lzx_put_bits(&w, 0, 1); /* no E8 translation header */
		lzx_put_bits(&w, 3, 3);
		lzx_put_bits(&w, (uint32_t)k, 24);
		lzx_pad_word(&w);
		for (int r = 0; r < 3; r++)
			buf_u32le(&f, 1);
		buf_put(&f, in + done, k);
		if (k & 1)
			buf_u8(&f, 0);
		buf_u8(out, 0xFF);
		buf_u16be(out, (uint16_t)k);
		buf_u16be(out, (uint16_t)f.len);
		buf_put(out, f.data, f.len);
		buf_free(&f);
		done += k;
		first = false;
	} while (done < n);
}

/* ---- chunked entries ---- */

static enum rc deflate_chunk(const uint8_t *in, size_t n, bool zlib_header, struct buf *out)
{
	z_stream z = {0};
	uLong bound;
	int rc;

	if (deflateInit2(&z, 6, Z_DEFLATED, zlib_header ? 15 : -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return RC_NOMEM;
	bound = deflateBound(&z, (uLong)n);
	buf_prealloc(out, out->len + bound);
	if (out->oom) {
		deflateEnd(&z);
		return RC_NOMEM;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = out->data + out->len;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	out->len += z.total_out;
	deflateEnd(&z);
	return rc == Z_STREAM_END ? RC_OK : RC_NOMEM;
}

/* Chunk k's packed bytes into out; its method number in *method. */
static enum rc pack_chunk(const struct gen_big_entry *e, const uint8_t *in, size_t n,
			  struct buf *out, uint32_t *method, struct rp_work *rw)
{
	bool rw4 = e->style == GB_STYLE_RW4;
	uint32_t stored_m = rw4 ? 4 : 0;
	enum rc r = RC_OK;

	if (e->method == GB_CHUNK_LZX) {
		gen_lzx_stored(in, n, out);
		*method = 3;
		return out->oom ? RC_NOMEM : RC_OK;
	}
	if (e->method == GB_CHUNK_REFPACK) {
		struct rp_enc_opts ro = {.header = e->rp_header, .chain = e->rp_chain};

		r = rp_encode_work(in, n, &ro, out, NULL, rw);
		*method = 2;
	} else {
		r = deflate_chunk(in, n, !rw4, out);
		*method = rw4 ? 1 : 3;
	}
	if (r == RC_OK && out->len >= n) { /* did not shrink: store it, as the game does */
		out->len = 0;
		buf_put(out, in, n);
		*method = stored_m;
	}
	return r;
}

static enum rc write_chunked(const struct gen_big_entry *e, struct gen_sink *s, uint64_t at,
			     uint64_t *stored, struct gb_work *w)
{
	static const char *const tag[] = {"chunkref", "chunkzip", "chunklzx"};
	uint32_t csize = e->chunk_size ? e->chunk_size : 64u << 10;
	uint32_t align = e->chunk_align ? e->chunk_align : 16;
	uint64_t count = e->len ? (e->len + csize - 1) / csize : 0, cur = 28;
	uint8_t *in = gb_room(w, csize);
	struct buf h, *c;
	enum rc r = in ? RC_OK : RC_NOMEM;

	if (e->len > UINT32_MAX)
		return RC_INVAL;
	buf_init(&h);
	buf_put(&h, tag[e->method - GB_CHUNK_REFPACK], 8);
	buf_u32be(&h, 2);
	buf_u32be(&h, (uint32_t)e->len);
	buf_u32be(&h, csize);
	buf_u32be(&h, (uint32_t)count);
	buf_u32be(&h, align);
	if (r == RC_OK)
		r = put(s, at, &h);
	buf_free(&h);
	for (uint64_t k = 0; r == RC_OK && k < count; k++) {
		size_t n = e->len - k * csize < csize ? (size_t)(e->len - k * csize) : csize;
		uint32_t method;
		uint64_t data = align_up(cur + 8, align);
		uint8_t d[8];

		entry_bytes(e, k * csize, in, n);
		c = gb_out(w);
		r = pack_chunk(e, in, n, c, &method, &w->rp);
		d[0] = (uint8_t)(c->len >> 24), d[1] = (uint8_t)(c->len >> 16);
		d[2] = (uint8_t)(c->len >> 8), d[3] = (uint8_t)c->len;
		d[4] = (uint8_t)(method >> 24), d[5] = (uint8_t)(method >> 16);
		d[6] = (uint8_t)(method >> 8), d[7] = (uint8_t)method;
		if (r == RC_OK)
			r = s->write_at(s->ctx, at + data - 8, d, 8);
		if (r == RC_OK)
			r = put(s, at + data, c);
		cur = data + c->len;
	}
	*stored = cur;
	return r;
}

static enum rc write_entry(const struct gen_big_entry *e, struct gen_sink *s, uint64_t at,
			   uint64_t *stored, struct gb_work *w)
{
	switch (e->method) {
	case GB_STORED:
		return write_stored(e, s, at, stored, w);
	case GB_REFPACK:
		return write_refpack(e, s, at, stored, w);
	case GB_CHUNK_REFPACK:
	case GB_CHUNK_ZLIB:
	case GB_CHUNK_LZX:
		return write_chunked(e, s, at, stored, w);
	default:
		return RC_INVAL;
	}
}

enum rc gen_big_write_entry(const struct gen_big_entry *e, struct gen_sink *s, uint64_t at,
			    uint64_t *stored)
{
	struct gb_work w;
	enum rc r;

	gb_work_init(&w);
	r = write_entry(e, s, at, stored, &w);
	gb_work_free(&w);
	return r;
}

/* ---- the EB v3 tables ---- */

struct eb_layout {
	uint32_t rec, name_rec, folder_rec, n_folders;
	uint16_t *folder_of;  /* per entry */
	const char **folders; /* distinct, in order of first use */
	uint64_t comp_off, names_off, folders_off, data_off;
};

static enum rc eb_folders(const struct gen_big_entry *e, uint32_t n, struct eb_layout *l)
{
	size_t maxf = 0, maxn = 0;

	l->folder_of = calloc(n ? n : 1, sizeof *l->folder_of);
	l->folders = calloc(n ? n : 1, sizeof *l->folders);
	if (!l->folder_of || !l->folders)
		return RC_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t f = 0;

		/* linear, but archives with many folders use few distinct ones in a row */
		for (f = l->n_folders; f > 0; f--)
			if (!strcmp(l->folders[f - 1], e[i].folder))
				break;
		if (f == 0) {
			if (l->n_folders == 65535)
				return RC_INVAL;
			l->folders[l->n_folders++] = e[i].folder;
			f = l->n_folders;
		}
		l->folder_of[i] = (uint16_t)(f - 1);
		if (strlen(e[i].folder) > maxf)
			maxf = strlen(e[i].folder);
		if (strlen(e[i].name) > maxn)
			maxn = strlen(e[i].name);
	}
	if (maxf > 253 || maxn > 252)
		return RC_INVAL;
	l->name_rec = (uint32_t)(2 + maxn + 1);
	l->folder_rec = (uint32_t)(maxf + 1);
	return RC_OK;
}

static void eb_layout_free(struct eb_layout *l)
{
	free(l->folder_of);
	free(l->folders);
}

static enum rc eb_plan(const struct gen_big_opts *o, const struct gen_big_entry *e, uint32_t n,
		       struct eb_layout *l)
{
	uint32_t shift = o->shift_zero ? 0 : o->shift ? o->shift : 4;
	enum rc r;

	l->rec = o->wide ? 20 : 16;
	if ((r = eb_folders(e, n, l)) != RC_OK)
		return r;
	l->comp_off = EB_HDR + align_up((uint64_t)n * l->rec, 16);
	l->names_off = align_up(l->comp_off + n, 16);
	l->folders_off = align_up(l->names_off + (uint64_t)n * l->name_rec, 16);
	l->data_off = align_up(l->folders_off + (uint64_t)l->n_folders * l->folder_rec, 16);
	l->data_off = align_up(l->data_off, 1ull << shift);
	return RC_OK;
}

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int k = bytes - 1; k >= 0; k--, v >>= 8)
		p[k] = (uint8_t)v;
}

static char *join_path(const char *folder, const char *name)
{
	size_t a = strlen(folder), b = strlen(name);
	char *p = malloc(a + b + 2);

	if (p) {
		memcpy(p, folder, a);
		p[a] = '/';
		memcpy(p + a + 1, name, b + 1);
	}
	return p;
}

uint64_t gen_big_hash(const char *folder, const char *name)
{
	char *path = join_path(folder, name);
	uint64_t h = path ? fnv1a_64(path, strlen(path)) : 0;

	free(path);
	return h;
}

static enum rc eb_tables(const struct gen_big_opts *o, const struct gen_big_entry *e, uint32_t n,
			 const struct eb_layout *l, const struct gen_big_placed *pl, uint64_t total,
			 struct gen_sink *s)
{
	uint32_t shift = o->shift_zero ? 0 : o->shift ? o->shift : 4;
	size_t len = (size_t)l->data_off;
	uint8_t *t = calloc(len, 1);
	enum rc r = RC_OK;

	if (!t)
		return RC_NOMEM;
	memcpy(t, "EB\0\3", 4);
	put_be(t + 4, n, 4);
	put_be(t + 8, (o->sort ? o->sort : 0x80) | (o->wide ? 1 : 0), 2);
	t[10] = (uint8_t)shift;
	put_be(t + 12, l->names_off, 4);
	put_be(t + 16, l->folders_off + (uint64_t)l->n_folders * l->folder_rec - l->names_off, 4);
	t[20] = (uint8_t)l->name_rec;
	t[21] = (uint8_t)l->folder_rec;
	put_be(t + 22, l->n_folders, 2);
	put_be(t + 24, total, 8);
	put_be(t + 32, l->data_off, 4);
	for (uint32_t i = 0; i < n && r == RC_OK; i++) {
		uint8_t *rec = t + EB_HDR + (size_t)i * l->rec;
		char *path = join_path(e[i].folder, e[i].name);
		uint64_t h = path ? fnv1a_64(path, strlen(path)) : 0;
		bool as_is = e[i].method == GB_STORED && !e[i].stored_len;

		if (!path)
			r = RC_NOMEM;
		free(path);
		put_be(rec, pl[i].off >> shift, 4);
		put_be(rec + 4, as_is ? 0 : pl[i].stored, 4);
		put_be(rec + 8, e[i].len, 4);
		put_be(rec + 12, h >> 32, 4);
		if (o->wide)
			put_be(rec + 16, h, 4);
		t[l->comp_off + i] = e[i].method;
		rec = t + l->names_off + (size_t)i * l->name_rec;
		put_be(rec, l->folder_of[i], 2);
		memcpy(rec + 2, e[i].name, strlen(e[i].name));
	}
	for (uint32_t f = 0; f < l->n_folders; f++)
		memcpy(t + l->folders_off + (size_t)f * l->folder_rec, l->folders[f],
		       strlen(l->folders[f]));
	if (r == RC_OK)
		r = s->write_at(s->ctx, 0, t, len);
	free(t);
	return r;
}

enum rc gen_big_write(const struct gen_big_opts *o, const struct gen_big_entry *e, uint32_t n,
		      struct gen_sink *out, struct gen_big_placed *placed, uint64_t *total)
{
	static const struct gen_big_opts defaults = {0};
	uint32_t shift;
	struct eb_layout l = {0};
	struct gen_big_placed *pl = placed ? placed : calloc(n ? n : 1, sizeof *pl);
	uint64_t at, max_end = 0;
	struct gb_work w;
	enum rc r;

	o = o ? o : &defaults;
	shift = o->shift_zero ? 0 : o->shift ? o->shift : 4;
	if (!pl)
		return RC_NOMEM;
	gb_work_init(&w);
	r = eb_plan(o, e, n, &l);
	at = l.data_off;
	for (uint32_t i = 0; r == RC_OK && i < n; i++) {
		if (e[i].len > UINT32_MAX || (at >> shift) > UINT32_MAX) {
			r = RC_INVAL;
			break;
		}
		pl[i].off = at;
		r = write_entry(&e[i], out, at, &pl[i].stored, &w);
		if (r == RC_OK && pl[i].stored > UINT32_MAX)
			r = RC_INVAL;
		if (pl[i].stored && pl[i].off + pl[i].stored > max_end)
			max_end = pl[i].off + pl[i].stored;
		at = align_up(at + pl[i].stored, 1ull << shift);
	}
	gb_work_free(&w);
	if (r == RC_OK && n && at > max_end) {
		uint8_t z = 0; /* the file ends on the alignment, as the game's do */

		r = out->write_at(out->ctx, at - 1, &z, 1);
	}
	if (r == RC_OK)
		r = eb_tables(o, e, n, &l, pl, at, out);
	if (total)
		*total = at;
	eb_layout_free(&l);
	if (!placed)
		free(pl);
	return r;
}

/* ---- BIGF / BIG4 ---- */

enum rc gen_bigf_write(bool big4, const struct gen_big_entry *e, uint32_t n, struct buf *out)
{
	uint64_t hdr = 16, at;
	size_t base = out->len;
	struct buf d;
	struct gb_work w;
	enum rc r = RC_OK;

	gb_work_init(&w);
	for (uint32_t i = 0; i < n; i++)
		hdr += 8 + strlen(e[i].folder) + (*e[i].folder ? 1 : 0) + strlen(e[i].name) + 1;
	hdr = align_up(hdr, 16);
	buf_put(out, big4 ? "BIG4" : "BIGF", 4);
	buf_u32le(out, 0); /* archive size, set below */
	buf_u32be(out, n);
	buf_u32be(out, (uint32_t)hdr);
	buf_init(&d);
	at = hdr;
	for (uint32_t i = 0; r == RC_OK && i < n; i++) {
		size_t start = d.len;
		const uint8_t *in;

		if ((r = entry_all(&e[i], &w, &in)) != RC_OK)
			break;
		if (e[i].method == GB_REFPACK) {
			struct rp_enc_opts ro = {.header = e[i].rp_header};

			r = rp_encode_work(in, (size_t)e[i].len, &ro, &d, NULL, &w.rp);
		} else {
			buf_put(&d, in, (size_t)e[i].len);
		}
		buf_u32be(out, (uint32_t)(at + start));
		buf_u32be(out, (uint32_t)(d.len - start));
		if (*e[i].folder) { /* an empty folder: the name alone, never "/name" */
			buf_puts(out, e[i].folder);
			buf_putc(out, '/');
		}
		buf_puts(out, e[i].name);
		buf_putc(out, 0);
		buf_pad_to(&d, 16);
	}
	gb_work_free(&w);
	buf_zero(out, (size_t)(base + hdr - out->len));
	buf_put(out, d.data, d.len);
	buf_free(&d);
	if (!out->count_only && !out->oom) {
		uint64_t size = out->len - base;

		for (int k = 0; k < 4; k++)
			out->data[base + 4 + (size_t)k] = (uint8_t)(size >> (8 * k));
	}
	return r != RC_OK ? r : out->oom ? RC_NOMEM : RC_OK;
}

/* ---- the manifest of what a generator wrote (gen_big.h) ---- */

void gen_big_manifest_free(struct gen_big_manifest *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].file);
		free(m->v[i].path);
	}
	free(m->v);
	memset(m, 0, sizeof *m);
}

enum rc gen_big_manifest_add(struct gen_big_manifest *m, const char *file, const char *path,
			     uint8_t method, uint64_t size, uint64_t fnv)
{
	struct gen_big_row *r, *v;

	if (!m)
		return RC_OK;
	v = xgrow_n(m->v, m->n, &m->cap, sizeof *m->v, 64);
	if (!v)
		return RC_NOMEM;
	m->v = v;
	r = &m->v[m->n];
	r->file = strdup(file);
	r->path = strdup(path);
	r->method = method;
	r->size = size;
	r->fnv = fnv;
	if (!r->file || !r->path) {
		free(r->file);
		free(r->path);
		return RC_NOMEM;
	}
	m->n++;
	return RC_OK;
}
