/* EA archives: RefPack, EB v3, BIGF/BIG4, chunked entries, and the hostile cases of issue 18. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <zlib.h>

#include <cmocka.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/names.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/refpack.h"
#include "psgfs/formats/registry.h"
#include "formats/archive/lzx.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/prng.h"
#include "rp_enc.h"

/* ---- helpers ---- */

static void st16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void st32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Bytes that compress a little and differ everywhere: a seeded mix of runs and noise. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345;
		p[i] = (x >> 24) < 96 ? (uint8_t)(x >> 16) : (uint8_t)(i / 7 + seed);
	}
}

static uint8_t *rp_pack(const uint8_t *src, size_t n, size_t *len)
{
	uint8_t *o = malloc(rpt_bound(n));

	assert_non_null(o);
	*len = rpt_encode(src, n, o);
	assert_true(*len > 0);
	return o;
}

/* Decode a whole entry through its pieces; returns the last failing rc (RC_OK if none). */
static enum rc read_entry(const struct src *s, const struct arc *a, uint32_t i, uint8_t **out,
			  struct diag *d)
{
	struct arc_index *ix;
	enum rc r = arc_index_build(s, a, i, &ix, d), last = RC_OK;
	uint8_t *buf;

	assert_int_equal(r, RC_OK);
	buf = malloc(a->e[i].size ? a->e[i].size : 1);
	assert_non_null(buf);
	for (uint64_t k = 0; k < arc_piece_count(ix); k++) {
		uint64_t off, len;
		size_t got = 0;

		arc_piece_span(ix, k, &off, &len);
		assert_true(len <= ARC_PIECE_MAX);
		assert_int_equal(arc_piece_at(ix, off), k);
		assert_int_equal(arc_piece_at(ix, off + len - 1), k);
		r = arc_piece(s, ix, k, buf + off, &got, NULL);
		if (r != RC_OK)
			last = r;
		else
			assert_int_equal(got, len);
	}
	arc_index_free(ix);
	*out = buf;
	return last;
}

/* ---- EB v3 builder ---- */

struct tent {
	uint16_t folder;
	const char *name;
	const uint8_t *data;
	size_t len;
	uint32_t size; /* 0: len */
	uint8_t comp;
	uint32_t stored_field; /* written as is when set (else len) */
};

struct tarc {
	bool wide;
	uint8_t shift;
	uint8_t name_rec, folder_rec;
	const char *const *folders;
	uint16_t nfold;
};

static uint8_t *eb_build(const struct tarc *o, const struct tent *e, uint32_t n, size_t *len)
{
	size_t rec = o->wide ? 20 : 16, comp = 0x30 + align_up(n * rec, 16);
	size_t names = align_up(comp + n, 16), folders = align_up(names + n * o->name_rec, 16);
	size_t fend = folders + (size_t)o->nfold * o->folder_rec, total, at;
	size_t al = (size_t)1 << o->shift;
	uint8_t *p;

	total = align_up(fend, al);
	for (uint32_t i = 0; i < n; i++)
		total = align_up(total + e[i].len, al);
	p = calloc(1, total);
	assert_non_null(p);
	memcpy(p, "EB\0\3", 4);
	st32(p + 4, n);
	st16(p + 8, o->wide ? 1 : 0);
	p[10] = o->shift;
	st32(p + 12, (uint32_t)names);
	st32(p + 16, (uint32_t)(fend - names));
	p[20] = o->name_rec;
	p[21] = o->folder_rec;
	st16(p + 22, o->nfold);
	st32(p + 28, (uint32_t)total);
	at = align_up(fend, al);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *r = p + 0x30 + i * rec;

		st32(r, (uint32_t)(at >> o->shift));
		st32(r + 4, e[i].stored_field ? e[i].stored_field : (uint32_t)e[i].len);
		st32(r + 8, e[i].size ? e[i].size : (uint32_t)e[i].len);
		st32(r + 12, 0x1000 + i);
		if (o->wide)
			st32(r + 16, 0x2000 + i);
		p[comp + i] = e[i].comp;
		st16(p + names + i * o->name_rec, e[i].folder);
		memcpy(p + names + i * o->name_rec + 2, e[i].name,
		       strnlen(e[i].name, o->name_rec - 2u));
		memcpy(p + at, e[i].data, e[i].len);
		at = align_up(at + e[i].len, al);
	}
	for (uint16_t f = 0; f < o->nfold; f++)
		memcpy(p + folders + (size_t)f * o->folder_rec, o->folders[f],
		       strnlen(o->folders[f], o->folder_rec));
	*len = total;
	return p;
}

static const char *const game_folders[] = {"data/content/createacharacter/texture",
					   "data/content/world/models", ""};

static const struct tarc game = {false, 4, 64, 48, game_folders, 3};

/* ---- RefPack ---- */

static void test_rp_headers(void **state)
{
	(void)state;
	const uint8_t h1[] = {0x10, 0xFB, 0x01, 0x02, 0x03};
	const uint8_t h2[] = {0x90, 0xFB, 0x01, 0x02, 0x03, 0x04};
	const uint8_t h3[] = {0x11, 0xFB, 0x00, 0x00, 0x09, 0x00, 0x00, 0x20};
	const uint8_t h4[] = {0x91, 0xFB, 0, 0, 0, 9, 0, 0, 1, 0};
	const uint8_t h5[] = {0x50, 0xFB, 0, 1, 0};
	const uint8_t no1[] = {0x10, 0xFA, 0, 0, 1}, no2[] = {0x12, 0xFB, 0, 0, 1};
	uint64_t sz;
	size_t hl;

	assert_true(rp_header(h1, sizeof h1, &sz, &hl));
	assert_int_equal(sz, 0x010203);
	assert_int_equal(hl, 5);
	assert_true(rp_header(h2, sizeof h2, &sz, &hl));
	assert_int_equal(sz, 0x01020304);
	assert_int_equal(hl, 6);
	assert_true(rp_header(h3, sizeof h3, &sz, &hl));
	assert_int_equal(sz, 0x20);
	assert_int_equal(hl, 8);
	assert_true(rp_header(h4, sizeof h4, &sz, &hl));
	assert_int_equal(sz, 0x100);
	assert_int_equal(hl, 10);
	assert_true(rp_header(h5, sizeof h5, &sz, &hl));
	assert_int_equal(sz, 0x100);
	assert_false(rp_header(h1, 4, &sz, &hl));
	assert_false(rp_header(no1, sizeof no1, &sz, &hl));
	assert_false(rp_header(no2, sizeof no2, &sz, &hl));
}

/* A hand-written literal-only stream: one 4-byte literal block, then the end command with 3. */
static void test_rp_literal_by_hand(void **state)
{
	(void)state;
	const uint8_t s[] = {0x10, 0xFB, 0, 0, 7, 0xE0, 'a', 'b', 'c', 'd', 0xFF, 'e', 'f', 'g'};
	uint8_t out[16];
	size_t got;

	assert_int_equal(rp_decode(s, sizeof s, out, sizeof out, &got), RC_OK);
	assert_int_equal(got, 7);
	assert_memory_equal(out, "abcdefg", 7);
	/* the destination bounds the output */
	assert_int_equal(rp_decode(s, sizeof s, out, 5, &got), RC_OK);
	assert_int_equal(got, 5);
	/* the input ending inside the literal block */
	assert_int_equal(rp_decode(s, 8, out, sizeof out, &got), RC_TRUNCATED);
	assert_int_equal(got, 2);
	assert_int_equal(rp_decode(s, 3, out, sizeof out, &got), RC_FORMAT);
}

/* Every copy form by hand, including an overlapping run. */
static void test_rp_forms_by_hand(void **state)
{
	(void)state;
	/* "abcd" literal, short copy dist 4 len 3 (+1 lit 'x'), medium copy dist 2 len 4,
	 * long copy dist 1 len 6, end */
	const uint8_t s[] = {
	    0x10, 0xFB, 0,    0,    18,	  0xE0, 'a',  'b',  'c',  'd', (0 << 5) | (0 << 2) | 1,
	    3,	  'x',	0x80, 0x00, 0x01, 0xC0, 0x00, 0x00, 0x01, 0xFC};
	uint8_t out[32];
	size_t got;

	assert_int_equal(rp_decode(s, sizeof s, out, sizeof out, &got), RC_OK);
	assert_int_equal(got, 18);
	assert_memory_equal(out, "abcdxbcdcdcddddddd", 18);
}

static void test_rp_backref_before_start(void **state)
{
	(void)state;
	/* two literal bytes, then a copy reaching 3 back */
	const uint8_t s1[] = {0x10, 0xFB, 0, 0, 9, 0x02, 0x02, 'a', 'b', 0xFC};
	/* a copy with no output at all */
	const uint8_t s2[] = {0x10, 0xFB, 0, 0, 9, 0xC0, 0xFF, 0xFF, 0x00, 0xFC};
	uint8_t out[32];
	size_t got;

	assert_int_equal(rp_decode(s1, sizeof s1, out, sizeof out, &got), RC_CORRUPT);
	assert_int_equal(rp_decode(s2, sizeof s2, out, sizeof out, &got), RC_CORRUPT);
	assert_int_equal(got, 0);
}

static void test_rp_roundtrip(void **state)
{
	(void)state;
	size_t n = 600000, len, got;
	uint8_t *src = malloc(n), *dst = malloc(n + 10), *enc;

	assert_non_null(src);
	assert_non_null(dst);
	fill(src, n, 7);
	/* a far repeat so that long distances are used */
	memcpy(src + 300000, src + 300000 - 120000, 5000);
	enc = rp_pack(src, n, &len);
	assert_true(len < n);
	assert_int_equal(rp_decode(enc, len, dst, n + 10, &got), RC_OK);
	assert_int_equal(got, n);
	assert_memory_equal(src, dst, n);
	free(src);
	free(dst);
	free(enc);
}

/* Feeding the decoder one input byte at a time, into a small sliding buffer, gives the same
 * bytes: the state plus the window is all it needs. */
static void test_rp_resume(void **state)
{
	(void)state;
	size_t n = 400000, len, end, o = 0, pos = 0;
	size_t bsz = RP_WINDOW + 1000;
	uint8_t *src = malloc(n), *dst = malloc(n), *buf = malloc(bsz), *enc;
	struct rp_state st;
	uint64_t claimed;

	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(buf);
	fill(src, n, 3);
	enc = rp_pack(src, n, &len);
	assert_true(rp_start(&st, enc, len, &claimed));
	assert_int_equal(claimed, n);
	while (!rp_finished(&st)) {
		/* 4 bytes hold any opcode: the least that guarantees progress */
		size_t want = 4 + o % 5,
		       avail = len - (size_t)st.in < want ? len - (size_t)st.in : want;
		enum rc r;

		if (pos == bsz) {
			memmove(buf, buf + bsz - RP_WINDOW, RP_WINDOW);
			pos = RP_WINDOW;
		}
		r = rp_run(&st, enc + st.in, avail, buf, pos, pos + 333 < bsz ? pos + 333 : bsz,
			   &end);
		assert_true(r == RC_OK || r == RC_TRUNCATED);
		memcpy(dst + o, buf + pos, end - pos);
		o += end - pos;
		pos = end;
		assert_true(o <= n);
	}
	assert_int_equal(o, n);
	assert_memory_equal(src, dst, n);
	free(src);
	free(dst);
	free(buf);
	free(enc);
}

/* ---- EB v3 ---- */

static void check_eb_roundtrip(bool wide, uint8_t shift)
{
	struct tarc o = game;
	uint8_t a1[1000], a2[5000], a3[3], *p2, *p, *got;
	size_t l2, len;
	struct tent e[4];
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag d;

	o.wide = wide;
	o.shift = shift;
	fill(a1, sizeof a1, 1);
	fill(a2, sizeof a2, 2);
	memcpy(a3, "xyz", 3);
	p2 = rp_pack(a2, sizeof a2, &l2);
	e[0] = (struct tent){0, "0x2c7f3818.psg", a1, sizeof a1, 0, 0, 0};
	e[1] = (struct tent){1, "DIST_a_Textures.psg", p2, l2, sizeof a2, 1, 0};
	e[2] = (struct tent){2, "top.bin", a3, 3, 0, 0, 0};
	e[3] = (struct tent){0, "empty", a3, 0, 0, 0, 0};
	p = eb_build(&o, e, 4, &len);
	src_init_mem(&s, &m, p, len);
	diag_init(&d);
	assert_true(arc_detect(p, len));
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(a.kind, ARC_EB3);
	assert_int_equal(a.n, 4);
	assert_string_equal(a.paths + a.e[0].path,
			    "data/content/createacharacter/texture/0x2c7f3818.psg");
	assert_string_equal(a.paths + a.e[1].path, "data/content/world/models/DIST_a_Textures.psg");
	assert_string_equal(a.paths + a.e[2].path, "top.bin");
	assert_int_equal(a.e[1].method, ARC_REFPACK);
	assert_int_equal(a.e[1].size, sizeof a2);
	assert_int_equal(a.e[1].stored, l2);
	assert_int_equal(a.e[0].id, wide ? 0x0000100000002000ull : 0x1000);
	assert_int_equal(a.e[0].off % (1u << shift), 0);
	assert_true(a.heap_bytes > 0);
	assert_int_equal(read_entry(&s, &a, 0, &got, &d), RC_OK);
	assert_memory_equal(got, a1, sizeof a1);
	free(got);
	assert_int_equal(read_entry(&s, &a, 1, &got, &d), RC_OK);
	assert_memory_equal(got, a2, sizeof a2);
	free(got);
	assert_int_equal(read_entry(&s, &a, 2, &got, &d), RC_OK);
	assert_memory_equal(got, "xyz", 3);
	free(got);
	assert_int_equal(read_entry(&s, &a, 3, &got, &d), RC_OK);
	free(got);
	assert_int_equal(d.n, 0);
	arc_free(&a);
	diag_free(&d);
	free(p);
	free(p2);
}

static void test_eb_records(void **state)
{
	(void)state;
	check_eb_roundtrip(false, 4);
	check_eb_roundtrip(true, 4);
	check_eb_roundtrip(true, 0);
	check_eb_roundtrip(false, 11);
}

/* An EB v3 archive without compression bytes (RW4ArchiveTool: not every version has them):
 * the names follow the records, and the bytes decide the method. */
static void test_eb_no_compression_bytes(void **state)
{
	(void)state;
	uint8_t a1[40], a2[300], *pk, *p, *got;
	size_t pl, len;
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag d;

	fill(a1, sizeof a1, 50);
	fill(a2, sizeof a2, 51);
	pk = rp_pack(a2, sizeof a2, &pl);
	len = 0x80 + sizeof a1 + pl;
	p = calloc(1, len);
	assert_non_null(p);
	memcpy(p, "EB\0\3", 4);
	st32(p + 4, 2);
	st32(p + 12, 0x50); /* names right after the two records */
	st32(p + 16, 0x30);
	p[20] = 16;
	p[21] = 16;
	st16(p + 22, 1);
	st32(p + 0x30, 0x80);
	st32(p + 0x30 + 4, 0); /* stored as is */
	st32(p + 0x30 + 8, sizeof a1);
	st32(p + 0x40, (uint32_t)(0x80 + sizeof a1));
	st32(p + 0x40 + 4, (uint32_t)pl);
	st32(p + 0x40 + 8, sizeof a2);
	memcpy(p + 0x52, "plain", 5);
	memcpy(p + 0x62, "packed", 6);
	memcpy(p + 0x70, "data", 4);
	memcpy(p + 0x80, a1, sizeof a1);
	memcpy(p + 0x80 + sizeof a1, pk, pl);
	src_init_mem(&s, &m, p, len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.paths + a.e[1].path, "data/packed");
	assert_int_equal(a.e[0].method, ARC_STORED);
	assert_int_equal(a.e[0].stored, sizeof a1);
	assert_int_equal(a.e[1].method, ARC_METHOD_UNKNOWN);
	assert_int_equal(read_entry(&s, &a, 0, &got, &d), RC_OK);
	assert_memory_equal(got, a1, sizeof a1);
	free(got);
	assert_int_equal(read_entry(&s, &a, 1, &got, &d), RC_OK);
	assert_memory_equal(got, a2, sizeof a2);
	free(got);
	assert_int_equal(d.n, 0);
	arc_free(&a);
	diag_free(&d);
	free(p);
	free(pk);
}

static size_t diag_with(const struct diag *d, const char *what)
{
	size_t k = 0;

	for (size_t i = 0; i < d->n; i++)
		k += strstr(d->msg[i], what) != NULL;
	return k;
}

static void test_eb_bad_entries(void **state)
{
	(void)state;
	uint8_t a1[64], *p;
	size_t len;
	struct tent e[6];
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag d;

	fill(a1, sizeof a1, 5);
	for (int i = 0; i < 6; i++)
		e[i] = (struct tent){0, "f", a1, sizeof a1, 0, 0, 0};
	e[0].name = "../../etc/passwd";
	e[5].folder = 7; /* out of range */
	p = eb_build(&game, e, 6, &len);
	/* entry 1 overlaps entry 2; entry 3 runs past the end; entry 4 sits in the tables */
	st32(p + 0x30 + 1 * 16, ld_u32be(p + 0x30 + 2 * 16) - 1);
	st32(p + 0x30 + 3 * 16 + 4, 0x7FFFFFF0);
	st32(p + 0x30 + 4 * 16, 1);
	src_init_mem(&s, &m, p, len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	assert_int_equal(a.n, 6);
	assert_false(a.e[0].bad);
	/* names stay raw here: making them safe is the tree's job */
	assert_string_equal(a.paths + a.e[0].path,
			    "data/content/createacharacter/texture/../../etc/passwd");
	assert_true(a.e[1].bad);
	assert_true(a.e[2].bad);
	assert_true(a.e[3].bad);
	assert_true(a.e[4].bad);
	assert_true(a.e[5].bad);
	assert_string_equal(a.paths + a.e[5].path, "f");
	assert_int_equal(d.n, 5); /* one line per bad entry */
	assert_int_equal(diag_with(&d, "overlaps another entry"), 2);
	assert_int_equal(diag_with(&d, "past the end"), 1);
	assert_int_equal(diag_with(&d, "tables"), 1);
	assert_int_equal(diag_with(&d, "folder index 7"), 1);
	/* a bad entry keeps its table size and fails its reads */
	{
		struct arc_index *ix;
		uint8_t buf[64];
		size_t got;

		assert_int_equal(arc_index_build(&s, &a, 3, &ix, &d), RC_OK);
		assert_int_equal(arc_piece_count(ix), 1);
		assert_int_equal(arc_piece(&s, ix, 0, buf, &got, NULL), RC_TRUNCATED);
		arc_index_free(ix);
	}
	arc_free(&a);
	diag_free(&d);
	free(p);
}

/* Entries sharing the same stored bytes are not overlaps. */
static void test_eb_shared_bytes(void **state)
{
	(void)state;
	uint8_t a1[64], *p;
	size_t len;
	struct tent e[2] = {{0, "a", a1, sizeof a1, 0, 0, 0}, {0, "b", a1, sizeof a1, 0, 0, 0}};
	struct src s;
	struct src_mem m;
	struct arc a;

	fill(a1, sizeof a1, 9);
	p = eb_build(&game, e, 2, &len);
	memcpy(p + 0x30 + 16, p + 0x30, 4);
	src_init_mem(&s, &m, p, len);
	assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_OK);
	assert_false(a.e[0].bad);
	assert_false(a.e[1].bad);
	arc_free(&a);
	free(p);
}

static void test_eb_million_claimed(void **state)
{
	(void)state;
	uint8_t a1[8] = "abcdefgh", *p;
	size_t len;
	struct tent e[1] = {{0, "a", a1, sizeof a1, 0, 0, 0}};
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag d;

	p = eb_build(&game, e, 1, &len);
	st32(p + 4, 1000000);
	src_init_mem(&s, &m, p, len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	assert_true(a.n <= len / 16);
	assert_true(a.heap_bytes < 64u * len);
	assert_true(diag_with(&d, "claims 1000000 entries") == 1);
	arc_free(&a);
	diag_free(&d);
	/* tiny name records all naming a 255-byte folder: the paths would outgrow the file */
	{
		size_t big = 0x30 + 300000 * 19 + 512;
		uint8_t *q = calloc(1, big);

		assert_non_null(q);
		memcpy(q, "EB\0\3", 4);
		st32(q + 4, 300000);
		st32(q + 12, 0x30 + 300000 * 16);
		q[20] = 3;
		q[21] = 255;
		st16(q + 22, 1);
		memset(q + align_up(0x30 + 300000 * 19, 16), 'f', 255);
		for (size_t i = 0; i < 300000; i++)
			q[0x30 + 300000 * 16 + i * 3 + 2] = 'n';
		src_init_mem(&s, &m, q, big);
		diag_init(&d);
		assert_int_equal(arc_open(&s, NULL, &a, &d), RC_CORRUPT);
		assert_int_equal(diag_with(&d, "paths take more than"), 1);
		diag_free(&d);
		free(q);
	}
	/* and the worst: a bare header claiming 2^32-1 */
	memset(p + 0x30, 0, len - 0x30);
	st32(p + 4, 0xFFFFFFFF);
	src_init_mem(&s, &m, p, 0x30);
	assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_OK);
	assert_int_equal(a.n, 0);
	arc_free(&a);
	free(p);
}

static void test_eb_hostile_header(void **state)
{
	(void)state;
	uint8_t h[0x30] = "EB\0\3";
	struct src s;
	struct src_mem m;
	struct arc a;

	h[10] = 40; /* alignment shift */
	h[20] = 10;
	src_init_mem(&s, &m, h, sizeof h);
	assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_CORRUPT);
	src_init_mem(&s, &m, h, 20);
	assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_TRUNCATED);
	h[0] = 'X';
	src_init_mem(&s, &m, h, sizeof h);
	assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_FORMAT);
}

/* A 100-byte entry claiming 4 GiB: sizes stay the table's, reads past the real bytes fail,
 * memory stays small. */
static void test_eb_lying_sizes(void **state)
{
	(void)state;
	uint8_t a1[100], *p, *pk, buf[4096];
	uint8_t *piece = malloc(ARC_PIECE_MAX);
	size_t len, pl, got;
	struct tent e[2];
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag d;
	struct arc_index *ix;

	assert_non_null(piece);
	fill(a1, sizeof a1, 11);
	pk = rp_pack(a1, sizeof a1, &pl);
	e[0] = (struct tent){0, "stored", a1, sizeof a1, 0xFFFFFFFF, 0, 0};
	e[1] = (struct tent){0, "packed", pk, pl, 0xFFFFFFFF, 1, 0};
	e[0].stored_field = sizeof a1;
	p = eb_build(&game, e, 2, &len);
	src_init_mem(&s, &m, p, len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	assert_int_equal(a.e[0].size, 0xFFFFFFFFu);
	assert_int_equal(a.e[1].size, 0xFFFFFFFFu);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(arc_index_build(&s, &a, i, &ix, &d), RC_OK);
		assert_int_equal(arc_piece_count(ix), 1024);
		assert_true(arc_index_bytes(ix) < 64u << 10);
		/* the stored bytes end early: RC_TRUNCATED, the bytes they give, then none */
		assert_int_equal(arc_piece(&s, ix, 0, piece, &got, NULL), RC_TRUNCATED);
		assert_int_equal(got, 100);
		assert_memory_equal(piece, a1, 100);
		assert_int_equal(arc_piece(&s, ix, 700, piece, &got, NULL), RC_TRUNCATED);
		assert_int_equal(got, 0);
		assert_int_equal(arc_piece(&s, ix, 1024, buf, &got, NULL), RC_BOUNDS);
		arc_index_free(ix);
	}
	arc_free(&a);
	diag_free(&d);
	free(p);
	free(pk);
	free(piece);
}

/* A RefPack entry longer than a piece: restart points let any piece decode alone, and the
 * index stays within its bound. */
static void test_eb_long_refpack(void **state)
{
	(void)state;
	size_t n = 3 * ARC_PIECE_MAX + 12345, pl, len, got;
	uint8_t *a1 = malloc(n), *pk, *p, *piece = malloc(ARC_PIECE_MAX);
	struct tent e[1];
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag d;
	struct arc_index *ix;

	assert_non_null(a1);
	assert_non_null(piece);
	fill(a1, n, 21);
	pk = rp_pack(a1, n, &pl);
	e[0] = (struct tent){1, "big.psg", pk, pl, (uint32_t)n, 1, 0};
	p = eb_build(&game, e, 1, &len);
	src_init_mem(&s, &m, p, len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	assert_int_equal(arc_index_build(&s, &a, 0, &ix, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(arc_piece_count(ix), 4);
	assert_true(arc_index_bytes(ix) <= 4096 + 3 * (RP_WINDOW + 64));
	for (int k = 3; k >= 0; k--) {
		uint64_t off, pl2;

		arc_piece_span(ix, (uint64_t)k, &off, &pl2);
		assert_int_equal(arc_piece(&s, ix, (uint64_t)k, piece, &got, NULL), RC_OK);
		assert_int_equal(got, pl2);
		assert_memory_equal(piece, a1 + off, pl2);
	}
	arc_index_free(ix);
	/* the same stream cut short: the index knows where the output really ends */
	m.size = s.size = len - (len - (size_t)a.e[0].off) / 2;
	a.e[0].stored = (a.e[0].stored) / 2;
	assert_int_equal(arc_index_build(&s, &a, 0, &ix, &d), RC_OK);
	assert_int_equal(diag_with(&d, "RefPack stream gives"), 1);
	assert_int_equal(arc_piece(&s, ix, 3, piece, &got, NULL), RC_TRUNCATED);
	arc_index_free(ix);
	arc_free(&a);
	diag_free(&d);
	free(a1);
	free(pk);
	free(p);
	free(piece);
}

/* One index, four threads decoding every piece in different orders: the index is read-only. */
struct par {
	const struct src *s;
	const struct arc_index *ix;
	const uint8_t *want;
	unsigned seed;
	int bad;
};

static void *par_run(void *arg)
{
	struct par *p = arg;
	uint8_t *piece = malloc(ARC_PIECE_MAX);
	uint64_t n = arc_piece_count(p->ix);

	if (!piece) {
		p->bad = 1;
		return NULL;
	}
	for (uint64_t j = 0; j < 2 * n; j++) {
		uint64_t k = (j * 7 + p->seed) % n, off, len;
		size_t got;

		arc_piece_span(p->ix, k, &off, &len);
		if (arc_piece(p->s, p->ix, k, piece, &got, NULL) != RC_OK || got != len ||
		    memcmp(piece, p->want + off, len))
			p->bad = 1;
	}
	free(piece);
	return NULL;
}

static void test_parallel_pieces(void **state)
{
	(void)state;
	size_t n = 2 * ARC_PIECE_MAX + 777, pl, len;
	uint8_t *a1 = malloc(n), *pk, *p;
	struct tent e[1];
	struct src s;
	struct src_mem m;
	struct arc a;
	struct arc_index *ix;
	pthread_t th[4];
	struct par pr[4];

	assert_non_null(a1);
	fill(a1, n, 77);
	pk = rp_pack(a1, n, &pl);
	e[0] = (struct tent){0, "shared.psg", pk, pl, (uint32_t)n, 1, 0};
	p = eb_build(&game, e, 1, &len);
	src_init_mem(&s, &m, p, len);
	assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_OK);
	assert_int_equal(arc_index_build(&s, &a, 0, &ix, NULL), RC_OK);
	for (int t = 0; t < 4; t++) {
		pr[t] = (struct par){&s, ix, a1, (unsigned)t, 0};
		assert_int_equal(pthread_create(&th[t], NULL, par_run, &pr[t]), 0);
	}
	for (int t = 0; t < 4; t++) {
		pthread_join(th[t], NULL);
		assert_int_equal(pr[t].bad, 0);
	}
	assert_int_equal(arc_index_decodes(ix), 4 * 2 * arc_piece_count(ix));
	arc_index_free(ix);
	arc_free(&a);
	free(p);
	free(pk);
	free(a1);
}

/* ---- chunked entries ---- */

/* How each chunk is packed: r RefPack (method 2), z zlib (3, the SK8 reading), d raw deflate
 * (1, the RW4ArchiveTool reading), s stored (4), 0 stored (0), x garbage as LZX (3). */
static size_t pack_chunk(char how, const uint8_t *src, size_t n, uint8_t *o, uint32_t *method)
{
	uLongf zl = compressBound(n);
	z_stream z;

	switch (how) {
	case 'r':
		*method = 2;
		return rpt_encode(src, n, o);
	case 'z':
		*method = 3;
		assert_int_equal(compress2(o, &zl, src, n, 6), Z_OK);
		return zl;
	case 'd':
		*method = 1;
		memset(&z, 0, sizeof z);
		assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
		z.next_in = (uint8_t *)src;
		z.avail_in = (uInt)n;
		z.next_out = o;
		z.avail_out = (uInt)(rpt_bound(n) + 64);
		assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
		zl = z.total_out;
		deflateEnd(&z);
		return zl;
	case 'x':
		*method = 3;
		memset(o, 0x5A, n / 2 + 1);
		return n / 2 + 1;
	case 'l': { /* LZX in XMem frames, uncompressed blocks (the generator's) */
		struct buf b;
		size_t k;

		*method = 3;
		buf_init(&b);
		gen_lzx_stored(src, n, &b);
		assert_false(b.oom);
		memcpy(o, b.data, b.len);
		k = b.len;
		buf_free(&b);
		return k;
	}
	default:
		*method = how == 's' ? 4 : 0;
		memcpy(o, src, n);
		return n;
	}
}

/* A chunk stream: the 28-byte header, then per chunk {packed, method} with the data at
 * align(cursor + 8, alignment). hows[i % strlen(hows)] packs chunk i. */
static uint8_t *chunk_build(const char *magic, const uint8_t *src, size_t n, uint32_t csize,
			    uint32_t align, const char *hows, size_t *len)
{
	uint32_t count = (uint32_t)((n + csize - 1) / csize);
	size_t cap = 28 + (size_t)count * (align + 8 + 64) + rpt_bound(n) + 64, cur = 28;
	uint8_t *o = calloc(1, cap);

	assert_non_null(o);
	memcpy(o, magic, 8);
	st32(o + 8, 2);
	st32(o + 12, (uint32_t)n);
	st32(o + 16, csize);
	st32(o + 20, count);
	st32(o + 24, align);
	for (uint32_t i = 0; i < count; i++) {
		size_t at = i * (size_t)csize, cn = n - at < csize ? n - at : csize;
		size_t pay = align_up(cur + 8, align), pl;
		uint32_t m;

		pl = pack_chunk(hows[i % strlen(hows)], src + at, cn, o + pay, &m);
		st32(o + pay - 8, (uint32_t)pl);
		st32(o + pay - 4, m);
		cur = pay + pl;
		assert_true(cur <= cap);
	}
	*len = cur;
	return o;
}

/* One entry holding `body` (table method comp, unpacked size n) in an EB archive. */
static void one_entry(const uint8_t *body, size_t bl, size_t n, uint8_t comp, uint8_t **p,
		      size_t *len, struct src *s, struct src_mem *m, struct arc *a)
{
	struct tent e[1] = {{1, "chunked.psg", body, bl, (uint32_t)n, comp, 0}};

	*p = eb_build(&game, e, 1, len);
	src_init_mem(s, m, *p, *len);
	assert_int_equal(arc_open(s, NULL, a, NULL), RC_OK);
}

static void test_chunked_methods(void **state)
{
	(void)state;
	static const struct {
		const char *magic, *hows;
		uint32_t csize, align;
		uint8_t comp;
	} v[] = {
	    {"chunkref", "r", 65536, 16, 2},	{"chunkzip", "z", 65536, 16, 3},
	    {"chunkzip", "d", 32768, 128, 3},	{"chunkref", "s", 65536, 1, 2},
	    {"chunkref", "0", 100000, 2048, 2}, {"chunkzip", "rzds0", 40000, 16, 3},
	    {"chunkref", "r", 5u << 20, 16, 1}, /* a chunk longer than a piece */
	};
	size_t n = 300000;
	uint8_t *src = malloc(6u << 20);

	assert_non_null(src);
	fill(src, 6u << 20, 31);
	for (size_t t = 0; t < sizeof v / sizeof v[0]; t++) {
		size_t nn = v[t].csize > n ? 6u << 20 : n, bl, len;
		uint8_t *body = chunk_build(v[t].magic, src, nn, v[t].csize, v[t].align, v[t].hows,
					    &bl),
			*p, *got;
		struct src s;
		struct src_mem m;
		struct arc a;
		struct diag d;

		one_entry(body, bl, nn, v[t].comp, &p, &len, &s, &m, &a);
		diag_init(&d);
		assert_int_equal(read_entry(&s, &a, 0, &got, &d), RC_OK);
		assert_memory_equal(got, src, nn);
		assert_int_equal(d.n, 0);
		free(got);
		diag_free(&d);
		arc_free(&a);
		free(p);
		free(body);
	}
	free(src);
}

static void test_chunked_lzx(void **state)
{
	(void)state;
	size_t n = 100000, bl, len, got;
	uint8_t *src = malloc(n), *body, *p, buf[65536];
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag d;
	struct arc_index *ix;
	struct arc_seg g;

	assert_non_null(src);
	fill(src, n, 4);
	body = chunk_build("chunklzx", src, n, 65536, 16, "x", &bl);
	one_entry(body, bl, n, 4, &p, &len, &s, &m, &a);
	diag_init(&d);
	assert_int_equal(a.e[0].size, n);
	assert_int_equal(arc_index_build(&s, &a, 0, &ix, &d), RC_OK);
	assert_int_equal(diag_with(&d, "LZX"), lzx_available() ? 0 : 1);
	assert_int_equal(arc_piece_count(ix), 2);
	assert_true(arc_piece_seg(ix, 1, &g));
	assert_int_equal(g.method, ARC_SEG_LZX);
	assert_int_equal(g.out_len, n - 65536);
	/* garbage in an LZX chunk: refused by the decoder, or no decoder */
	assert_int_equal(arc_piece(&s, ix, 0, buf, &got, NULL),
			 lzx_available() ? RC_CORRUPT : RC_UNSUPPORTED);
	assert_string_equal(arc_seg_method_str(g.method), "lzx");
	assert_string_equal(arc_method_str(a.e[0].method), "lzx");
	assert_string_equal(fmt_of_arc_kind(a.kind)->name, "EB v3");
	assert_string_equal(arc_method_str(200), "unknown");
	arc_index_free(ix);
	diag_free(&d);
	arc_free(&a);
	free(p);
	free(body);
	/* real LZX streams (XMem frames of uncompressed LZX blocks, as psgfs-gen writes them),
	 * in chunks of 64 KiB and of 5 MiB (a chunk longer than a piece) */
	for (int t = 0; t < 2; t++) {
		size_t nn = t ? (6u << 20) + 1234 : n, cs = t ? 5u << 20 : 65536;
		uint8_t *big = malloc(nn), *got_all;
		enum rc r;

		assert_non_null(big);
		fill(big, nn, 5);
		body = chunk_build("chunklzx", big, nn, (uint32_t)cs, 16, "l", &bl);
		one_entry(body, bl, nn, 4, &p, &len, &s, &m, &a);
		diag_init(&d);
		r = read_entry(&s, &a, 0, &got_all, &d);
		if (lzx_available()) {
			assert_int_equal(r, RC_OK);
			assert_memory_equal(got_all, big, nn);
			assert_int_equal(d.n, 0);
		} else {
			assert_int_equal(r, RC_UNSUPPORTED);
		}
		free(got_all);
		diag_free(&d);
		arc_free(&a);
		free(p);
		free(body);
		free(big);
	}
	free(src);
}

/* Chunk tables that cannot be right: every problem is a diag line, the sizes stay the
 * table's, and what cannot be decoded fails. */
/* A zlib chunk that inflates past its declared size: the declared bytes are given, and the
 * index counts the overrun (arcdir reports it in errors.txt). */
static void test_chunked_overrun(void **state)
{
	(void)state;
	size_t n = 131072, decl = 65536 + 1000, bl, len;
	uint8_t *src = malloc(n), *body, *p, *got;
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag d;
	struct arc_index *ix;

	assert_non_null(src);
	fill(src, n, 5);
	for (int t = 0; t < 2; t++) { /* zlib, raw deflate */
		body = chunk_build("chunkzip", src, n, 65536, 16, t ? "d" : "z", &bl);
		st32(body + 12, (uint32_t)decl); /* the last chunk claims 1000 of its 65536 */
		one_entry(body, bl, decl, 3, &p, &len, &s, &m, &a);
		diag_init(&d);
		assert_int_equal(arc_index_build(&s, &a, 0, &ix, &d), RC_OK);
		assert_int_equal(arc_index_overruns(ix), 0);
		arc_index_free(ix);
		assert_int_equal(read_entry(&s, &a, 0, &got, &d), RC_OK);
		assert_memory_equal(got, src, decl);
		free(got);
		assert_int_equal(arc_index_build(&s, &a, 0, &ix, &d), RC_OK);
		{
			uint64_t k = arc_piece_count(ix) - 1, off, pl;
			size_t g = 0;
			uint8_t *piece = malloc(ARC_PIECE_MAX);
			bool over = false;

			arc_piece_span(ix, k, &off, &pl);
			assert_int_equal(arc_piece(&s, ix, k, piece, &g, &over), RC_OK);
			assert_int_equal(g, pl);
			assert_true(over); /* said by the decode itself, not by a shared counter */
			assert_int_equal(arc_index_overruns(ix), 1);
			assert_int_equal(arc_piece(&s, ix, 0, piece, &g, &over),
					 RC_OK); /* not its last */
			assert_false(over);
			assert_int_equal(arc_index_overruns(ix), 1);
			free(piece);
		}
		arc_index_free(ix);
		diag_free(&d);
		arc_free(&a);
		free(p);
		free(body);
	}
	free(src);
}

static void test_chunked_hostile(void **state)
{
	(void)state;
	size_t n = 200000, bl, len, got;
	uint8_t *src = malloc(n), *body, *p, *piece = malloc(ARC_PIECE_MAX);
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag d;
	struct arc_index *ix;

	assert_non_null(src);
	assert_non_null(piece);
	fill(src, n, 8);
	for (int t = 0; t < 7; t++) {
		body = chunk_build("chunkref", src, n, t == 6 ? 2 : 65536, 16, t == 6 ? "s" : "r",
				   &bl);
		switch (t) {
		case 0: /* a million chunks in a small entry */
			st32(body + 16, 1);
			st32(body + 20, 1000000);
			break;
		case 1: /* chunk size 0 */
			st32(body + 16, 0);
			break;
		case 2: /* second chunk runs past the entry */
			st32(body + align_up(28 + 8, 16) - 8, 0x7FFFFFFF);
			break;
		case 3: /* header total differs from the table */
			st32(body + 12, (uint32_t)n / 2);
			break;
		case 4: /* alignment that is no power of two */
			st32(body + 24, 24);
			break;
		case 5: /* version */
			st32(body + 8, 7);
			break;
		default: /* 100,000 chunks of 2 bytes: more than an index may hold */
			break;
		}
		one_entry(body, bl, n, 2, &p, &len, &s, &m, &a);
		diag_init(&d);
		assert_int_equal(a.e[0].size, n);
		assert_int_equal(arc_index_build(&s, &a, 0, &ix, &d), RC_OK);
		assert_true(d.n >= 1);
		assert_true(arc_index_bytes(ix) < (t == 6 ? 8u << 20 : 64u << 10));
		{
			uint64_t total = 0, off, pl;
			bool failed = false;

			for (uint64_t k = 0; k < arc_piece_count(ix); k++) {
				arc_piece_span(ix, k, &off, &pl);
				assert_int_equal(off, total);
				total += pl;
				failed |= arc_piece(&s, ix, k, piece, &got, NULL) != RC_OK;
			}
			assert_int_equal(total, n);
			assert_true(failed);
		}
		arc_index_free(ix);
		diag_free(&d);
		arc_free(&a);
		free(p);
		free(body);
	}
	free(src);
	free(piece);
}

/* Issue 30 item 11: a zlib chunk longer than a piece inflates from its start for each piece
 * (zlib keeps no restart points), so the work of reading it grows with the chunk's square.
 * Counted in bytes inflated: a piece of a 16 MiB chunk (the limit) costs at most 16 MiB, and
 * a 64 MiB chunk is refused with a diag line instead of costing 64 MiB for its last piece. */
static void test_chunk_inflate_bounded(void **state)
{
	(void)state;
	const size_t limit = 16u << 20;
	uint8_t *src = malloc(64u << 20), *piece = malloc(ARC_PIECE_MAX);

	assert_non_null(src);
	assert_non_null(piece);
	for (size_t i = 0; i < (64u << 20); i++)
		src[i] = (uint8_t)(i / 4096 * 7);
	for (int t = 0; t < 2; t++) {
		size_t n = t ? 64u << 20 : limit, bl, len, got;
		uint8_t *body = chunk_build("chunkzip", src, n, (uint32_t)n, 16, "z", &bl), *p;
		struct src s;
		struct src_mem m;
		struct arc a;
		struct diag d;
		struct arc_index *ix;
		uint64_t k, last = 0;

		one_entry(body, bl, n, 3, &p, &len, &s, &m, &a);
		diag_init(&d);
		assert_int_equal(arc_index_build(&s, &a, 0, &ix, &d), RC_OK);
		assert_int_equal(arc_piece_count(ix), n / ARC_PIECE_MAX);
		for (k = arc_piece_count(ix); k-- > 0;) { /* the last piece, the costliest, first */
			enum rc r = arc_piece(&s, ix, k, piece, &got, NULL);

			assert_true(arc_index_decoded(ix) - last <= limit);
			last = arc_index_decoded(ix);
			if (t) {
				assert_int_equal(r, RC_UNSUPPORTED);
			} else {
				assert_int_equal(r, RC_OK);
				assert_memory_equal(piece, src + k * ARC_PIECE_MAX, ARC_PIECE_MAX);
			}
		}
		assert_int_equal(diag_with(&d, "not decoded"), t ? 1 : 0);
		arc_index_free(ix);
		diag_free(&d);
		arc_free(&a);
		free(p);
		free(body);
	}
	free(src);
	free(piece);
}

/* A 100 MiB chunked entry made up on the fly (stored 64 KiB chunks, alignment 16): any 4 KiB
 * read decodes at most 2 chunks. */
#define BIGN	(100u << 20)
#define BIGC	65536u
#define BIGSTEP (BIGC + 16u)

struct synth {
	uint8_t *head; /* the EB archive's first hlen bytes */
	size_t hlen;
	uint64_t body; /* the entry's first byte */
};

static uint8_t synth_byte(const struct synth *y, uint64_t off)
{
	uint64_t x, i, j;

	if (off < y->hlen)
		return y->head[off];
	if (off < y->body)
		return 0;
	x = off - y->body;
	if (x < 28) {
		uint8_t h[28] = "chunkref";

		st32(h + 8, 2);
		st32(h + 12, BIGN);
		st32(h + 16, BIGC);
		st32(h + 20, BIGN / BIGC);
		st32(h + 24, 16);
		return h[x];
	}
	if (x < 40)
		return 0;
	i = (x - 40) / BIGSTEP;
	j = (x - 40) % BIGSTEP;
	if (j < 8) {
		uint8_t dsc[8];

		st32(dsc, BIGC);
		st32(dsc + 4, 4);
		return dsc[j];
	}
	return (uint8_t)(i * 7 + (j - 8) * 13);
}

static enum rc synth_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	for (size_t k = 0; k < n; k++)
		((uint8_t *)dst)[k] = synth_byte(ctx, off + k);
	return RC_OK;
}

static void test_chunked_random_reads(void **state)
{
	(void)state;
	uint8_t dummy[1] = {0}, *piece = malloc(ARC_PIECE_MAX);
	struct tent e[1] = {{1, "huge.psg", dummy, 1, BIGN, 2, 0}};
	struct synth y;
	struct src s;
	struct arc a;
	struct diag d;
	struct arc_index *ix;
	uint64_t stored = 40 + (uint64_t)(BIGN / BIGC) * BIGSTEP - 8;
	struct prng rng;

	assert_non_null(piece);
	y.head = eb_build(&game, e, 1, &y.hlen);
	y.body = ld_u32be(y.head + 0x30) << game.shift;
	y.hlen = (size_t)y.body; /* the tables; the entry's bytes are made up */
	st32(y.head + 0x30 + 4, (uint32_t)stored);
	s.read = synth_read;
	s.ctx = &y;
	s.size = y.body + stored;
	diag_init(&d);
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(arc_index_build(&s, &a, 0, &ix, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(arc_piece_count(ix), BIGN / BIGC);
	prng_seed(&rng, 18);
	for (int t = 0; t < 200; t++) {
		uint64_t off = prng_below(&rng, BIGN - 4096), before = arc_index_decodes(ix);
		uint64_t k0 = arc_piece_at(ix, off), k1 = arc_piece_at(ix, off + 4095);

		for (uint64_t k = k0; k <= k1; k++) {
			uint64_t po, pl;
			size_t got;

			arc_piece_span(ix, k, &po, &pl);
			assert_int_equal(arc_piece(&s, ix, k, piece, &got, NULL), RC_OK);
			assert_int_equal(got, pl);
			for (uint64_t b = off > po ? off : po; b < off + 4096 && b < po + pl; b++)
				assert_int_equal(piece[b - po],
						 (uint8_t)((b / BIGC) * 7 + (b % BIGC) * 13));
		}
		assert_true(arc_index_decodes(ix) - before <= 2);
	}
	arc_index_free(ix);
	arc_free(&a);
	diag_free(&d);
	free(y.head);
	free(piece);
}

/* ---- BIGF / BIG4 ---- */

static uint8_t *big_build(const char *magic, const char *const *names, const uint8_t *const *data,
			  const size_t *lens, uint32_t n, size_t *len)
{
	size_t dir = 16, at;
	uint8_t *p;

	for (uint32_t i = 0; i < n; i++)
		dir += 8 + strlen(names[i]) + 1;
	at = align_up(dir + 8, 16); /* room for the "L231" footer the packers add */
	*len = at;
	for (uint32_t i = 0; i < n; i++)
		*len += lens[i];
	p = calloc(1, *len);
	assert_non_null(p);
	memcpy(p, magic, 4);
	p[4] = (uint8_t)*len; /* little-endian archive size, unused */
	st32(p + 8, n);
	st32(p + 12, (uint32_t)dir);
	dir = 16;
	for (uint32_t i = 0; i < n; i++) {
		st32(p + dir, (uint32_t)at);
		st32(p + dir + 4, (uint32_t)lens[i]);
		strcpy((char *)p + dir + 8, names[i]);
		dir += 8 + strlen(names[i]) + 1;
		memcpy(p + at, data[i], lens[i]);
		at += lens[i];
	}
	return p;
}

/* A stream file's own ATOC table: the same stem, the extension's f made t (issue 30 item 8). */
static void test_toc_name(void **state)
{
	char out[32];

	(void)state;
	assert_true(arc_toc_name("x0.xsf", out, sizeof out));
	assert_string_equal(out, "x0.xst");
	assert_true(arc_toc_name("cGfx_Global.PSF", out, sizeof out));
	assert_string_equal(out, "cGfx_Global.PST");
	assert_false(arc_toc_name("x0.big", out, sizeof out));
	assert_false(arc_toc_name(".psf", out, sizeof out));
	assert_false(arc_toc_name("abcdef.psf", out, 10)); /* no room for the NUL */
	assert_true(arc_toc_name("abcde.psf", out, 10));
	assert_true(arc_toc_pairs("x0.xsf", "x0.xst"));
	assert_true(arc_toc_pairs("x0.xsf", "x0.XST"));
	assert_false(arc_toc_pairs("x0.xsf", "x0.xtf"));
	assert_false(arc_toc_pairs("x0.xsf", "x0.pst"));
	assert_false(arc_toc_pairs("x0.xsf", "X0.xst"));
	assert_false(arc_toc_pairs("x0.xsf", "x00.xst"));
	assert_false(arc_toc_pairs("x0.big", "x0.bit"));
}

/* The pairing rule's stamp half: an SFIL and an ATOC magic with one stamp. */
static void test_toc_serves(void **state)
{
	uint8_t s[16] = "SFIL", t[16] = "ATOC";

	(void)state;
	memcpy(s + 8, "stampxyz", 8);
	memcpy(t + 8, "stampxyz", 8);
	assert_true(arc_toc_serves(s, t));
	t[15] = 'Z';
	assert_false(arc_toc_serves(s, t));
	t[15] = 'z';
	assert_false(arc_toc_serves(t, s));
	memcpy(s, "SFIX", 4);
	assert_false(arc_toc_serves(s, t));
}

/* Every method below ARC_METHODS has a name (a new one counts under its own in info.txt). */
static void test_method_names(void **state)
{
	(void)state;
	for (unsigned m = 0; m < ARC_METHODS; m++)
		assert_string_not_equal(arc_method_str((uint8_t)m), "unknown");
	assert_string_equal(arc_method_str(ARC_METHODS), "unknown");
	assert_string_equal(arc_method_str(ARC_METHOD_UNKNOWN), "unknown");
}

/* The registry: every row is itself, archive kinds map both ways, lookups by name and by
 * magic agree with the formats' own tests. */
static void test_registry(void **state)
{
	static const uint8_t eb[] = {'E', 'B', 0, 3}, psk[20] = "ACTRHEAD";

	(void)state;
	for (unsigned i = 0; i < FMT_COUNT; i++) {
		const struct fmt_row *r = fmt_row((enum fmt_id)i);

		assert_int_equal(r->id, i);
		assert_non_null(r->name);
		assert_non_null(r->exts);
		assert_true(r->magic_len <= r->min_size);
		if (r->arc_kind)
			assert_ptr_equal(fmt_of_arc_kind(r->arc_kind), r);
	}
	assert_ptr_equal(fmt_detect(eb, sizeof eb, FMT_ARCHIVE), fmt_row(FMT_EB3));
	assert_null(fmt_detect(eb, 3, FMT_ARCHIVE));
	assert_null(fmt_detect(eb, sizeof eb, FMT_ASSET));
	assert_ptr_equal(fmt_detect(psk, 20, FMT_ASSET), fmt_row(FMT_PSK));
	assert_null(fmt_detect(psk, 19, FMT_ASSET)); /* too small for the format */
	assert_ptr_equal(fmt_by_name("A.PSKX", FMT_ASSET), fmt_row(FMT_PSK));
	assert_ptr_equal(fmt_by_name("x.xsf", FMT_ARCHIVE | FMT_ASSET), fmt_row(FMT_SFIL));
	assert_int_equal(fmt_by_name("x.Big", FMT_ARCHIVE)->id, FMT_EB3);
	assert_null(fmt_by_name(".big", FMT_ARCHIVE));
	assert_null(fmt_by_name("x.big", FMT_ASSET));
	assert_ptr_equal(fmt_by_name("notes.TXT", FMT_FILE), fmt_row(FMT_PLAIN));
	assert_true(fmt_name_is("0x1.rx2", FMT_PSG));
	assert_false(fmt_name_is("0x1.rx2", FMT_PSK));
	assert_true(fmt_is_companion_name("DIST_X_Gfx.PST", FMT_ARCHIVE));
	assert_false(fmt_is_companion_name("DIST_X_Gfx.psf", FMT_ARCHIVE));
	assert_null(fmt_of_arc_kind(0));
	/* A row with a name rule: a district's Pres map by its whole name, not every .psm. */
	assert_ptr_equal(fmt_by_name("DIST_X_Pres.psm", FMT_ASSET), fmt_row(FMT_DISTRICT));
	assert_ptr_equal(fmt_by_name("dist_x_pres.XSM", FMT_ASSET), fmt_row(FMT_DISTRICT));
	assert_null(fmt_by_name("DIST_X_Sim.psm", FMT_ASSET | FMT_ARCHIVE | FMT_FILE));
	assert_true(fmt_name_is("DIST_X_Pres.xsm", FMT_DISTRICT));
	assert_false(fmt_name_is("DIST_X_Tex.xsm", FMT_DISTRICT));
	assert_ptr_equal(fmt_detect((const uint8_t *)"CMAP", 4, FMT_ASSET), fmt_row(FMT_DISTRICT));
}

/* The sibling companion rule, both ways from its one definition (the registry's PSG row):
 * model -> `<stem>_Textures<.ext>` -> model, on the names a hostile folder or archive holds. */
static void sibling_round_trip(const char *model, const char *want)
{
	char *comp = fmt_sibling_name(FMT_PSG, model), back[NAME_MAX + 1];

	assert_non_null(comp);
	assert_string_equal(comp, want);
	assert_true(fmt_sibling_model(FMT_PSG, comp, back, sizeof back));
	assert_string_equal(back, model);
	free(comp);
}

static void test_sibling_rule(void **state)
{
	char out[NAME_COMPONENT_MAX + 8], model[NAME_COMPONENT_MAX + 1], comp[NAME_MAX + 1];
	char *made;
	size_t len;

	(void)state;
	sibling_round_trip("deck.psg", "deck_Textures.psg");
	sibling_round_trip("Deck.RX2", "Deck_Textures.RX2"); /* the extension as it is */
	sibling_round_trip("deck", "deck_Textures");	     /* no extension */
	sibling_round_trip("a.b.psg", "a.b_Textures.psg");   /* the last '.' splits */
	sibling_round_trip("a.", "a_Textures.");	     /* an empty extension */
	sibling_round_trip(".psg", ".psg_Textures");	     /* a leading '.' is the stem's */
	sibling_round_trip("_Textures.psg", "_Textures_Textures.psg");
	sibling_round_trip("x_Textures.psg", "x_Textures_Textures.psg");

	/* Backwards, the suffix in any case, always after a non-empty stem. */
	assert_true(fmt_sibling_model(FMT_PSG, "deck_TEXTURES.psg", out, sizeof out));
	assert_string_equal(out, "deck.psg");
	assert_false(fmt_sibling_model(FMT_PSG, "_Textures.psg", out, sizeof out));
	assert_false(fmt_sibling_model(FMT_PSG, "_textures", out, sizeof out));
	assert_false(fmt_sibling_model(FMT_PSG, "", out, sizeof out));
	assert_false(fmt_sibling_model(FMT_PSG, ".psg", out, sizeof out));
	assert_false(fmt_sibling_model(FMT_PSG, "deck.psg", out, sizeof out));
	assert_false(fmt_sibling_model(FMT_PSG, "deck_Texture.psg", out, sizeof out));
	assert_false(fmt_sibling_model(FMT_PSG, "a_Textures.b.psg", out, sizeof out));
	assert_false(fmt_sibling_model(FMT_PSG, "Textures.psg", out, sizeof out));

	/* An empty stem: the companion is the suffix alone, which names no model back. */
	made = fmt_sibling_name(FMT_PSG, "");
	assert_non_null(made);
	assert_string_equal(made, "_Textures");
	assert_false(fmt_sibling_model(FMT_PSG, made, out, sizeof out));
	free(made);

	/* Long names: a model of NAME_COMPONENT_MAX bytes, back into exactly its room and not
	 * one byte less (nothing written past it, never a cut name). */
	memset(model, 'm', NAME_COMPONENT_MAX - 4);
	memcpy(model + NAME_COMPONENT_MAX - 4, ".psg", 5);
	assert_int_equal(strlen(model), NAME_COMPONENT_MAX);
	snprintf(comp, sizeof comp, "%.*s_Textures.psg", NAME_COMPONENT_MAX - 4, model);
	sibling_round_trip(model, comp);
	len = strlen(comp);
	assert_int_equal(len, NAME_COMPONENT_MAX + 9);
	memset(out, '#', sizeof out);
	assert_true(fmt_sibling_model(FMT_PSG, comp, out, NAME_COMPONENT_MAX + 1));
	assert_string_equal(out, model);
	assert_int_equal(out[NAME_COMPONENT_MAX + 1], '#');
	memset(out, '#', sizeof out);
	assert_false(fmt_sibling_model(FMT_PSG, comp, out, NAME_COMPONENT_MAX));
	assert_int_equal(out[NAME_COMPONENT_MAX - 1], '#');
	assert_false(fmt_sibling_model(FMT_PSG, comp, out, 0));

	/* Formats without the rule, and no format at all. */
	assert_null(fmt_sibling_name(FMT_PSK, "deck.psk"));
	assert_false(fmt_sibling_model(FMT_PSK, "deck_Textures.psk", out, sizeof out));
	assert_null(fmt_sibling_name(FMT_COUNT, "deck.psg"));
	assert_false(fmt_sibling_model(FMT_COUNT, "deck_Textures.psg", out, sizeof out));
}

static void test_bigf(void **state)
{
	(void)state;
	uint8_t plain[3000], packed_src[20000], *pk, *p, *got;
	size_t pl, len;
	const char *names[] = {"audio\\music\\track01.snu", "data/packed.bin"};
	const uint8_t *data[2];
	size_t lens[2];
	const char *magic[] = {"BIGF", "BIG4"};

	fill(plain, sizeof plain, 40);
	fill(packed_src, sizeof packed_src, 41);
	pk = rp_pack(packed_src, sizeof packed_src, &pl);
	data[0] = plain;
	data[1] = pk;
	lens[0] = sizeof plain;
	lens[1] = pl;
	for (int t = 0; t < 2; t++) {
		struct src s;
		struct src_mem m;
		struct arc a;
		struct diag d;

		p = big_build(magic[t], names, data, lens, 2, &len);
		src_init_mem(&s, &m, p, len);
		diag_init(&d);
		assert_true(arc_detect(p, len));
		assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
		assert_int_equal(a.kind, t ? ARC_BIG4 : ARC_BIGF);
		assert_int_equal(a.n, 2);
		assert_string_equal(a.paths + a.e[0].path, "audio\\music\\track01.snu");
		assert_int_equal(a.e[0].method, ARC_STORED);
		assert_int_equal(a.e[1].method, ARC_REFPACK);
		assert_int_equal(a.e[1].size, sizeof packed_src);
		assert_int_equal(read_entry(&s, &a, 0, &got, &d), RC_OK);
		assert_memory_equal(got, plain, sizeof plain);
		free(got);
		assert_int_equal(read_entry(&s, &a, 1, &got, &d), RC_OK);
		assert_memory_equal(got, packed_src, sizeof packed_src);
		free(got);
		assert_int_equal(d.n, 0);
		arc_free(&a);
		/* hostile: a million claimed entries, a name without its NUL, an entry past EOF */
		st32(p + 8, 1000000);
		st32(p + 16 + 8 + strlen(names[0]) + 1 + 4, 0x7FFFFFFF);
		assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
		assert_int_equal(a.n, 2);
		assert_true(a.e[1].bad);
		assert_int_equal(diag_with(&d, "claims 1000000"), 1);
		arc_free(&a);
		st32(p + 12, (uint32_t)len + 1);
		assert_int_equal(arc_open(&s, NULL, &a, &d), RC_CORRUPT);
		diag_free(&d);
		free(p);
	}
	free(pk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rp_headers),
	    cmocka_unit_test(test_rp_literal_by_hand),
	    cmocka_unit_test(test_rp_forms_by_hand),
	    cmocka_unit_test(test_rp_backref_before_start),
	    cmocka_unit_test(test_rp_roundtrip),
	    cmocka_unit_test(test_rp_resume),
	    cmocka_unit_test(test_eb_records),
	    cmocka_unit_test(test_eb_no_compression_bytes),
	    cmocka_unit_test(test_eb_bad_entries),
	    cmocka_unit_test(test_eb_shared_bytes),
	    cmocka_unit_test(test_eb_million_claimed),
	    cmocka_unit_test(test_eb_hostile_header),
	    cmocka_unit_test(test_eb_lying_sizes),
	    cmocka_unit_test(test_eb_long_refpack),
	    cmocka_unit_test(test_parallel_pieces),
	    cmocka_unit_test(test_chunked_methods),
	    cmocka_unit_test(test_chunked_lzx),
	    cmocka_unit_test(test_chunked_hostile),
	    cmocka_unit_test(test_chunked_overrun),
	    cmocka_unit_test(test_chunk_inflate_bounded),
	    cmocka_unit_test(test_chunked_random_reads),
	    cmocka_unit_test(test_toc_name),
	    cmocka_unit_test(test_toc_serves),
	    cmocka_unit_test(test_method_names),
	    cmocka_unit_test(test_registry),
	    cmocka_unit_test(test_sibling_rule),
	    cmocka_unit_test(test_bigf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
