/*
 * The archive generator against the archive parsers: the RefPack compressor round trips
 * through the decoder, every EB v3 / BIGF / BIG4 variant psgfs-gen writes parses back with
 * its exact entries and bytes, hostile archives give their diag lines, SFIL collections
 * (every stream format, both consoles, with and without their ATOC table) round trip, and a
 * generated game folder holds what its manifest says.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/hash.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/refpack.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_stream.h"
#include "psgfs/gen/prng.h"
#include "psgfs/gen/refpack_enc.h"

/* ---- helpers ---- */

static size_t diag_with(const struct diag *d, const char *what)
{
	size_t k = 0;

	for (size_t i = 0; i < d->n; i++)
		k += strstr(d->msg[i], what) != NULL;
	return k;
}

/* Entry i's bytes through its index, piece by piece; the first failing rc (RC_OK if none).
 * *got: bytes the pieces really gave. */
static enum rc read_entry(const struct src *s, const struct arc *a, uint32_t i, uint8_t **out,
			  uint64_t *got_total, struct diag *d)
{
	struct arc_index *ix;
	enum rc r = arc_index_build(s, a, i, &ix, d), last = RC_OK;
	uint8_t *buf;

	*out = NULL;
	*got_total = 0;
	if (r != RC_OK)
		return r;
	assert_true(a->e[i].size < (64u << 20));
	buf = malloc(a->e[i].size ? (size_t)a->e[i].size : 1);
	assert_non_null(buf);
	for (uint64_t k = 0; k < arc_piece_count(ix); k++) {
		uint64_t off, len;
		size_t got = 0;

		arc_piece_span(ix, k, &off, &len);
		assert_true(len <= ARC_PIECE_MAX && off + len <= a->e[i].size);
		r = arc_piece(s, ix, k, buf + off, &got, NULL);
		assert_true(got <= len);
		*got_total += got;
		if (r != RC_OK && last == RC_OK)
			last = r;
	}
	arc_index_free(ix);
	*out = buf;
	return last;
}

/* Every entry of a against the manifest rows of file (in table order); LZX entries may be
 * refused (RC_UNSUPPORTED) when no LZX decoder is built in, with their exact sizes listed. */
static void check_against(const struct src *s, const struct arc *a,
			  const struct gen_big_manifest *m, const char *file, size_t *lzx_refused)
{
	uint32_t i = 0;

	for (size_t k = 0; k < m->n; k++) {
		const struct gen_big_row *row = &m->v[k];
		struct diag d;
		uint8_t *bytes;
		uint64_t got;
		enum rc r;

		if (strcmp(row->file, file) || !strcmp(row->path, "-"))
			continue;
		assert_true(i < a->n);
		assert_string_equal(a->paths + a->e[i].path, row->path);
		assert_int_equal(a->e[i].size, row->size);
		assert_false(a->e[i].bad);
		diag_init(&d);
		r = read_entry(s, a, i, &bytes, &got, &d);
		if (r == RC_UNSUPPORTED && row->method == GB_CHUNK_LZX && lzx_refused) {
			(*lzx_refused)++;
		} else {
			if (r != RC_OK)
				fprintf(stderr, "%s: %s (%s)\n", row->path, rc_str(r),
					d.n ? d.msg[0] : "");
			assert_int_equal(r, RC_OK);
			assert_int_equal(got, row->size);
			assert_true(fnv1a_64(bytes, (size_t)row->size) == row->fnv);
		}
		free(bytes);
		diag_free(&d);
		i++;
	}
	assert_int_equal(i, a->n);
}

/* ---- RefPack compressor ---- */

static void make_input(uint8_t *p, size_t n, uint32_t kind, uint64_t seed)
{
	struct prng r;

	prng_seed(&r, seed);
	for (size_t i = 0; i < n; i++) {
		switch (kind) {
		case 0: /* noise */
			p[i] = (uint8_t)prng_next(&r);
			break;
		case 1: /* one byte repeated */
			p[i] = 0x41;
			break;
		case 2: /* text-like, short-range repeats */
			p[i] = (uint8_t) "the quick brown fox "[(i + prng_below(&r, 3)) % 20];
			break;
		default: /* noise blocks repeated from far back (3- and 4-byte commands) */
			p[i] = i >= 20000 && prng_below(&r, 8) ? p[i - 20000 + (i % 7 == 0)]
			       : i >= 5000 && (i / 1000) % 2   ? p[i - 5000]
							       : (uint8_t)prng_next(&r);
		}
	}
}

static void roundtrip(const uint8_t *in, size_t n, uint8_t hdr, unsigned chain, bool lit_only,
		      struct rp_enc_stats *st)
{
	struct rp_enc_opts o = {.header = hdr, .chain = chain, .literal_only = lit_only};
	uint8_t *out = malloc(n ? n : 1);
	struct buf b;
	uint64_t size;
	size_t got = 0, hl;

	assert_non_null(out);
	buf_init(&b);
	assert_int_equal(rp_encode_stats(in, n, &o, &b, st), RC_OK);
	assert_true(rp_header(b.data, b.len, &size, &hl));
	assert_int_equal(size, n);
	assert_int_equal(b.data[0], hdr ? hdr : 0x10);
	assert_int_equal(b.data[1], 0xFB);
	if (hdr & 1) { /* the packed size field counts the whole stream */
		uint64_t packed = 0;

		for (size_t k = 2; k < (hdr & 0x80 ? 6u : 5u); k++)
			packed = packed << 8 | b.data[k];
		assert_int_equal(packed, b.len);
	}
	assert_int_equal(rp_decode(b.data, b.len, out, n, &got), RC_OK);
	assert_int_equal(got, n);
	assert_memory_equal(out, in, n);
	buf_free(&b);
	free(out);
}

static void test_rp_enc_roundtrip(void **state)
{
	static const uint8_t headers[] = {0,	     RP_HDR_10, RP_HDR_11, RP_HDR_90,
					  RP_HDR_91, 0x50,	0xD1};
	static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 111, 112, 113, 1000, 70000, 300000};
	uint8_t *in = malloc(300000);

	(void)state;
	assert_non_null(in);
	for (uint32_t kind = 0; kind < 4; kind++)
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
			for (size_t h = 0; h < sizeof headers; h++) {
				make_input(in, sizes[s], kind, 7 + s);
				roundtrip(in, sizes[s], headers[h], h == 4 ? 1 : 0, false, NULL);
			}
	make_input(in, 5000, 2, 3);
	roundtrip(in, 5000, 0, 0, true, NULL);
	free(in);
}

/* One input that needs every command kind: copies near (2-byte), mid-range (3-byte), far
 * and long (4-byte), literal runs, and a stop with trailing literals. */
static void test_rp_enc_commands(void **state)
{
	size_t n = 200003;
	uint8_t *in = malloc(n);
	struct rp_enc_stats st;

	(void)state;
	assert_non_null(in);
	make_input(in, n, 3, 11);
	memset(in + 150000, 'z', 2000); /* a run longer than one copy (1028) */
	roundtrip(in, n, 0, 0, false, &st);
	assert_true(st.cmd2 > 0 && st.cmd3 > 0 && st.cmd4 > 0 && st.lit > 0);
	assert_int_equal(st.stop, 1);
	free(in);
}

static void test_rp_enc_refusals(void **state)
{
	static const uint8_t one = 0;
	struct rp_enc_opts o = {.header = RP_HDR_10};
	struct buf b;

	(void)state;
	buf_init(&b);
	/* the size check comes before any input byte is read */
	assert_int_equal(rp_encode(&one, 1u << 24, &o, &b), RC_INVAL);
	o.header = RP_HDR_11;
	assert_int_equal(rp_encode(&one, 1u << 24, &o, &b), RC_INVAL);
	o.header = 0x30;
	assert_int_equal(rp_encode(&one, 1, &o, &b), RC_INVAL);
	o.header = 0x12;
	assert_int_equal(rp_encode(&one, 1, &o, &b), RC_INVAL);
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

/* ---- LZX streams (uncompressed blocks) ---- */

/* Read the stream back by the LZX block format (docs/archives.md, "LZX"): XMem frames, the
 * E8 header bit, block type 3, 24-bit length, padding to the 16-bit word, R0-R2, bytes. */
static void test_lzx_structure(void **state)
{
	static const size_t sizes[] = {1, 2, 32767, 32768, 32769, 100001};
	uint8_t *in = malloc(100001);

	(void)state;
	assert_non_null(in);
	make_input(in, 100001, 0, 5);
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		size_t n = sizes[s], done = 0, at = 0;
		struct buf b;

		buf_init(&b);
		gen_lzx_stored(in, n, &b);
		while (done < n) {
			const uint8_t *f = b.data + at + 5;
			uint32_t un = (uint32_t)b.data[at + 1] << 8 | b.data[at + 2];
			uint32_t pk = (uint32_t)b.data[at + 3] << 8 | b.data[at + 4];
			uint32_t bits =
			    (uint32_t)(f[0] | f[1] << 8) << 16 | (uint32_t)(f[2] | f[3] << 8);
			int pos = 31;

			assert_int_equal(b.data[at], 0xFF);
			assert_int_equal(un, n - done < 32768 ? n - done : 32768);
			assert_int_equal(pk, 16 + un + (un & 1));
			if (done == 0)
				assert_int_equal((bits >> pos--) & 1, 0); /* no E8 translation */
			assert_int_equal((bits >> (pos - 2)) & 7, 3);
			pos -= 3;
			assert_int_equal((bits >> (pos - 23)) & 0xFFFFFF, un);
			for (int r = 0; r < 3; r++)
				assert_int_equal(f[4 + 4 * r], 1);
			assert_memory_equal(f + 16, in + done, un);
			done += un;
			at += 5 + pk;
		}
		assert_int_equal(at, b.len);
		buf_free(&b);
	}
	free(in);
}

/* ---- EB v3 variants ---- */

static void check_game(const struct gen_big_game_opts *o, size_t *lzx_refused)
{
	struct gen_big_manifest m = {0};
	struct buf b;
	struct gen_sink sk;
	struct src s;
	struct src_mem sm;
	struct arc a;
	struct diag d;

	buf_init(&b);
	gen_sink_buf(&sk, &b);
	assert_int_equal(gen_big_game(o, &sk, &m), RC_OK);
	src_init_mem(&s, &sm, b.data, b.len);
	diag_init(&d);
	assert_true(arc_detect(b.data, b.len));
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	if (d.n)
		fprintf(stderr, "unexpected: %s\n", d.msg[0]);
	assert_int_equal(d.n, 0);
	assert_int_equal(a.kind, ARC_EB3);
	assert_int_equal(a.n, m.n);
	for (uint32_t i = 0; i < a.n; i++)
		assert_int_equal(a.e[i].table_method, m.v[i].method);
	check_against(&s, &a, &m, "", lzx_refused);
	arc_free(&a);
	diag_free(&d);
	gen_big_manifest_free(&m);
	buf_free(&b);
}

static void test_eb_every_variant(void **state)
{
	static const uint8_t rph[] = {0, RP_HDR_11, RP_HDR_90, RP_HDR_91};
	size_t lzx = 0;

	(void)state;
	for (int method = -1; method <= GB_CHUNK_LZX; method++)
		for (int x360 = 0; x360 < 2; x360++) {
			struct gen_big_game_opts o = {.seed = 3 + (uint64_t)method,
						      .x360 = x360,
						      .wide = (method + x360) & 1,
						      .only_method = method,
						      .assets = 8};

			check_game(&o, &lzx);
		}
	for (unsigned k = 0; k < 4; k++) { /* shifts, header variants, chunk numbering */
		struct gen_big_game_opts o = {.seed = 40 + k,
					      .wide = k & 1,
					      .shift = (uint8_t)(k == 1	  ? 11
								 : k == 2 ? 7
									  : 0),
					      .shift_zero = k == 0,
					      .only_method = -1,
					      .rp_header = rph[k],
					      .style = k & 1 ? GB_STYLE_SK8 : GB_STYLE_RW4,
					      .assets = 12};

		check_game(&o, &lzx);
	}
	fprintf(stderr, "LZX entries refused (no LZX decoder): %zu\n", lzx);
}

/* Offsets and stored sizes as the writer placed them, for both record widths. */
static void test_eb_placement(void **state)
{
	static const char *const names[] = {"a.psg", "b.psg", "c.bin", "d.bin"};
	uint8_t data[4][3000];
	struct gen_big_entry e[4] = {0};
	struct gen_big_placed pl[4];
	uint64_t total;

	(void)state;
	for (int wide = 0; wide < 2; wide++) {
		struct gen_big_opts o = {.wide = wide, .shift = wide ? 11 : 4};
		struct buf b;
		struct gen_sink sk;
		struct src s;
		struct src_mem sm;
		struct arc a;

		for (int i = 0; i < 4; i++) {
			make_input(data[i], sizeof data[i], (uint32_t)i, 9);
			e[i] = (struct gen_big_entry){.folder = "data/content/x",
						      .name = names[i],
						      .data = data[i],
						      .len = sizeof data[i],
						      .method = (uint8_t)i,
						      .stored_len = i == 0};
		}
		buf_init(&b);
		gen_sink_buf(&sk, &b);
		assert_int_equal(gen_big_write(&o, e, 4, &sk, pl, &total), RC_OK);
		assert_int_equal(total, b.len);
		assert_int_equal(b.data[9] & 1, wide);
		src_init_mem(&s, &sm, b.data, b.len);
		assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_OK);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(a.e[i].off, pl[i].off);
			assert_int_equal(a.e[i].off % (1u << o.shift), 0);
			assert_int_equal(a.e[i].stored, pl[i].stored);
			assert_int_equal(a.e[i].size, sizeof data[i]);
			assert_int_equal(a.e[i].method, i);
			assert_true(wide ? a.e[i].id > UINT32_MAX : a.e[i].id <= UINT32_MAX);
		}
		arc_free(&a);
		buf_free(&b);
	}
}

static void test_bigf_big4(void **state)
{
	(void)state;
	for (int big4 = 0; big4 < 2; big4++) {
		struct gen_big_game_opts o = {.seed = 5, .only_method = -1, .assets = 6};
		struct gen_big_manifest m = {0};
		struct buf b;
		struct src s;
		struct src_mem sm;
		struct arc a;
		struct diag d;

		buf_init(&b);
		assert_int_equal(gen_big_game_bigf(&o, big4, &b, &m), RC_OK);
		src_init_mem(&s, &sm, b.data, b.len);
		diag_init(&d);
		assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
		assert_int_equal(d.n, 0);
		assert_int_equal(a.kind, big4 ? ARC_BIG4 : ARC_BIGF);
		for (uint32_t i = 0; i < a.n; i++)
			assert_int_equal(a.e[i].method,
					 m.v[i].method == GB_REFPACK ? ARC_REFPACK : ARC_STORED);
		check_against(&s, &a, &m, "", NULL);
		arc_free(&a);
		diag_free(&d);
		gen_big_manifest_free(&m);
		buf_free(&b);
	}
}

/* ---- hostile archives ---- */

/* Open, then read every entry: nothing may crash; returns the diag lines of both. */
static enum rc open_and_read_all(const struct buf *b, struct arc *a, struct diag *d,
				 size_t *read_fail)
{
	struct src s;
	struct src_mem sm;
	enum rc r;

	src_init_mem(&s, &sm, b->data, b->len);
	r = arc_open(&s, NULL, a, d);
	*read_fail = 0;
	for (uint32_t i = 0; r == RC_OK && i < a->n; i++) {
		uint8_t *bytes;
		uint64_t got;

		if (a->e[i].size >= (64u << 20)) { /* a lying size: read its first piece only */
			struct arc_index *ix;
			uint8_t *p = malloc(ARC_PIECE_MAX);
			size_t g = 0;

			assert_non_null(p);
			if (arc_index_build(&s, a, i, &ix, d) == RC_OK) {
				uint64_t off, len;

				arc_piece_span(ix, 0, &off, &len);
				*read_fail += arc_piece(&s, ix, 0, p, &g, NULL) != RC_OK;
				*read_fail += arc_piece(&s, ix, arc_piece_count(ix) - 1, p, &g,
							NULL) != RC_OK;
				arc_index_free(ix);
			}
			free(p);
			continue;
		}
		*read_fail += read_entry(&s, a, i, &bytes, &got, d) != RC_OK;
		free(bytes);
	}
	return r;
}

static void test_hostile(void **state)
{
	static const struct {
		enum gen_big_hostile h;
		const char *line; /* a diag line that must appear */
		bool reads_fail;
	} want[] = {
	    {GB_H_OVERLAP, "overlap", false},
	    {GB_H_PAST_EOF, "past the end", false},
	    {GB_H_LYING, "", true},
	    {GB_H_FOLDER_INDEX, "folder index", false},
	    {GB_H_MILLION, "claims 1000000 entries", false},
	    {GB_H_BACKREF, "", true},
	    {GB_H_CHUNKS, "", true},
	    {GB_H_TRUNCATED, "claims 3 entries", false},
	};

	(void)state;
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		struct buf b;
		struct arc a;
		struct diag d;
		size_t fails;

		buf_init(&b);
		assert_int_equal(gen_big_hostile(want[k].h, 1, 0, &b), RC_OK);
		diag_init(&d);
		assert_int_equal(open_and_read_all(&b, &a, &d, &fails), RC_OK);
		if (!diag_with(&d, want[k].line) || (want[k].reads_fail && !fails)) {
			fprintf(stderr, "%s: %zu lines, %zu failed reads\n",
				gen_big_hostile_name(want[k].h), d.n, fails);
			for (size_t i = 0; i < d.n; i++)
				fprintf(stderr, "  %s\n", d.msg[i]);
		}
		if (want[k].line[0])
			assert_true(diag_with(&d, want[k].line) > 0);
		if (want[k].reads_fail)
			assert_true(fails > 0);
		arc_free(&a);
		diag_free(&d);
		buf_free(&b);
	}
}

/* Hostile names stay the raw bytes the table holds (the tree makes them safe). */
static void test_hostile_names(void **state)
{
	struct buf b;
	struct arc a;
	struct diag d;
	size_t fails, dup = 0;
	bool traversal = false, control = false, empty_folder = false;

	(void)state;
	buf_init(&b);
	assert_int_equal(gen_big_hostile(GB_H_NAMES, 1, 0, &b), RC_OK);
	diag_init(&d);
	assert_int_equal(open_and_read_all(&b, &a, &d, &fails), RC_OK);
	assert_int_equal(fails, 0);
	assert_int_equal(a.n, 15);
	for (uint32_t i = 0; i < a.n; i++) {
		const char *p = a.paths + a.e[i].path;

		traversal |= !strcmp(p, "data/content/../../../../etc/passwd");
		control |= strchr(p, '\x1b') != NULL;
		empty_folder |= !strcmp(p, "nofolder.bin");
		dup += !strcmp(p, "data/content/dup.bin");
	}
	assert_true(traversal && control && empty_folder);
	assert_int_equal(dup, 2);
	arc_free(&a);
	diag_free(&d);
	buf_free(&b);
}

/* Nested archives: each level's single entry is the next archive, down to the leaf. */
static void test_hostile_nested(void **state)
{
	struct buf b;
	uint8_t *cur;
	uint64_t len, got;
	unsigned levels = 0;

	(void)state;
	buf_init(&b);
	assert_int_equal(gen_big_hostile(GB_H_NESTED, 1, 20, &b), RC_OK);
	cur = b.data;
	len = b.len;
	while (arc_detect(cur, (size_t)len)) {
		struct src s;
		struct src_mem sm;
		struct arc a;
		uint8_t *next;

		src_init_mem(&s, &sm, cur, (size_t)len);
		assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_OK);
		assert_int_equal(a.n, 1);
		assert_int_equal(read_entry(&s, &a, 0, &next, &got, NULL), RC_OK);
		if (cur != b.data)
			free(cur);
		cur = next;
		len = got;
		arc_free(&a);
		levels++;
	}
	assert_int_equal(levels, 20);
	assert_memory_equal(cur, "the innermost file", 18);
	free(cur);
	buf_free(&b);
}

/* ---- SFIL ---- */

static void check_stream(const struct gen_stream_opts *o, bool with_toc)
{
	struct gen_big_manifest m = {0};
	struct buf sf, toc;
	struct src s, t;
	struct src_mem sm, tm;
	struct arc a;
	struct diag d;

	buf_init(&sf);
	buf_init(&toc);
	assert_int_equal(gen_stream(o, GS_H_NONE, &sf, &toc, &m), RC_OK);
	src_init_mem(&s, &sm, sf.data, sf.len);
	src_init_mem(&t, &tm, toc.data, toc.len);
	diag_init(&d);
	assert_true(arc_detect(sf.data, sf.len));
	assert_int_equal(arc_open(&s, with_toc ? &t : NULL, &a, &d), RC_OK);
	if (d.n)
		fprintf(stderr, "unexpected: %s\n", d.msg[0]);
	assert_int_equal(d.n, 0);
	assert_int_equal(a.kind, ARC_SFIL);
	assert_int_equal(a.n, m.n);
	for (uint32_t i = 0; i < a.n; i++) {
		assert_int_equal(a.e[i].method, ARC_SECTIONS);
		assert_int_equal(a.e[i].table_method, o->format);
	}
	check_against(&s, &a, &m, "", NULL);
	arc_free(&a);
	diag_free(&d);
	gen_big_manifest_free(&m);
	buf_free(&sf);
	buf_free(&toc);
}

/* SFIL +0x14: the real packer (StreamPacker) writes 1 for every collection, psgfs's generator
 * the asset count; both read clean, as does either +0x1C word. Any other value is a line. */
static size_t sfil_lines_with(uint32_t at14, uint32_t at1c)
{
	struct gen_stream_opts o = {.seed = 3, .format = 0, .assets = 5};
	struct buf sf, toc;
	struct src s, t;
	struct src_mem sm, tm;
	struct arc a;
	struct diag d;
	size_t n;

	buf_init(&sf);
	buf_init(&toc);
	assert_int_equal(gen_stream(&o, GS_H_NONE, &sf, &toc, NULL), RC_OK);
	buf_set_u32be(&sf, 0x14, at14);
	buf_set_u32be(&sf, 0x1C, at1c);
	src_init_mem(&s, &sm, sf.data, sf.len);
	src_init_mem(&t, &tm, toc.data, toc.len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, &t, &a, &d), RC_OK);
	assert_int_equal(a.n, 5);
	n = d.n;
	if (n)
		assert_true(diag_with(&d, "SFIL header") == n);
	arc_free(&a);
	diag_free(&d);
	buf_free(&sf);
	buf_free(&toc);
	return n;
}

static void test_sfil_header_counts(void **state)
{
	(void)state;
	assert_int_equal(sfil_lines_with(5, 0xFFFFFFFF), 0);
	assert_int_equal(sfil_lines_with(1, 0x58000000), 0);
	assert_int_equal(sfil_lines_with(1, 0x57000000), 0);
	assert_int_equal(sfil_lines_with(1, 0x05000000), 0);
	assert_int_equal(sfil_lines_with(3, 0xFFFFFFFF), 1);
	assert_int_equal(sfil_lines_with(0, 0xFFFFFFFF), 1);
}

static void test_sfil_roundtrip(void **state)
{
	(void)state;
	for (uint32_t f = 0; f < 4; f++)
		for (int x360 = 0; x360 < 2; x360++)
			for (int toc = 0; toc < 2; toc++) {
				struct gen_stream_opts o = {.seed = 10 + f,
							    .x360 = x360,
							    .format = f,
							    .assets = 5,
							    .chunk = f == 3 && toc ? 4096 : 0,
							    .rp_header = x360 ? RP_HDR_91 : 0};

				check_stream(&o, toc);
			}
}

static void test_sfil_hostile(void **state)
{
	static const struct {
		enum gen_stream_hostile h;
		uint32_t format;
		const char *line;
	} want[] = {
	    {GS_H_STRIDE, 2, "stride 0"},
	    {GS_H_PAST_EOF, 2, "past the end"},
	    {GS_H_SECTIONS, 2, "ATOC claims"},
	    {GS_H_CHUNKS, 3, "ATOC claims"},
	    {GS_H_TOC_LIES, 1, "absent from the ATOC"},
	    {GS_H_BACKREF, 2, ""},
	};

	(void)state;
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		struct gen_stream_opts o = {.seed = 3, .format = want[k].format};
		struct buf sf, toc;
		struct src s, t;
		struct src_mem sm, tm;
		struct arc a;
		struct diag d;
		size_t fails = 0;
		enum rc r;

		buf_init(&sf);
		buf_init(&toc);
		assert_int_equal(gen_stream(&o, want[k].h, &sf, &toc, NULL), RC_OK);
		src_init_mem(&s, &sm, sf.data, sf.len);
		src_init_mem(&t, &tm, toc.data, toc.len);
		diag_init(&d);
		r = arc_open(&s, &t, &a, &d);
		assert_int_equal(r, RC_OK);
		for (uint32_t i = 0; i < a.n; i++) {
			uint8_t *bytes = NULL;
			uint64_t got;

			if (a.e[i].size >= (64u << 20)) {
				fails++;
				continue;
			}
			fails += read_entry(&s, &a, i, &bytes, &got, &d) != RC_OK;
			free(bytes);
		}
		if (!diag_with(&d, want[k].line) || !fails) {
			fprintf(stderr, "%s: %zu failed reads\n",
				gen_stream_hostile_name(want[k].h), fails);
			for (size_t i = 0; i < d.n; i++)
				fprintf(stderr, "  %s\n", d.msg[i]);
		}
		if (want[k].line[0])
			assert_true(diag_with(&d, want[k].line) > 0);
		assert_true(fails > 0 || want[k].h == GS_H_STRIDE || want[k].h == GS_H_TOC_LIES);
		arc_free(&a);
		diag_free(&d);
		buf_free(&sf);
		buf_free(&toc);
	}
}

/* The benchmark archive at a small size: every entry exact, the chunked one too. */
static void test_bench_archive(void **state)
{
	struct gen_big_bench_opts o = {
	    .seed = 9, .bytes = 4u << 20, .entries = 40, .chunked_bytes = 3u << 20};
	struct gen_big_manifest m = {0};
	struct buf b;
	struct gen_sink sk;
	struct src s;
	struct src_mem sm;
	struct arc a;
	struct diag d;
	uint64_t unpacked = 0;

	(void)state;
	buf_init(&b);
	gen_sink_buf(&sk, &b);
	assert_int_equal(gen_big_bench(&o, &sk, &m), RC_OK);
	assert_int_equal(m.n, 41);
	for (size_t i = 0; i < m.n; i++)
		unpacked += m.v[i].size;
	assert_true(unpacked > (6u << 20) && unpacked < (8u << 20));
	assert_true(b.len < unpacked); /* RefPack gets some of it */
	assert_int_equal(m.v[40].method, GB_CHUNK_REFPACK);
	src_init_mem(&s, &sm, b.data, b.len);
	diag_init(&d);
	assert_int_equal(arc_open(&s, NULL, &a, &d), RC_OK);
	assert_int_equal(d.n, 0);
	check_against(&s, &a, &m, "", NULL);
	arc_free(&a);
	diag_free(&d);
	gen_big_manifest_free(&m);
	buf_free(&b);
}

/* ---- a game folder ---- */

static void test_game_dir(void **state)
{
	char dir[] = "/tmp/psgfs-test-game-XXXXXX", root[64], path[256];
	struct gen_big_manifest m = {0};
	const char *files[] = {"data/content/createacharacter.big", "data/content/world.big",
			       "data/audio/music.big"};

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(root, sizeof root, "%s/g", dir);
	assert_int_equal(gen_game_dir(1, false, root, &m), RC_OK);
	assert_int_equal(gen_game_dir(1, false, root, NULL), RC_INVAL); /* exists */
	for (size_t k = 0; k < 3; k++) {
		struct stat st;
		struct src s;
		struct arc a;
		int fd;

		snprintf(path, sizeof path, "%s/%s", root, files[k]);
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0 && fstat(fd, &st) == 0);
		src_init_fd(&s, &fd, (uint64_t)st.st_size);
		assert_int_equal(arc_open(&s, NULL, &a, NULL), RC_OK);
		check_against(&s, &a, &m, files[k], NULL);
		arc_free(&a);
		close(fd);
	}
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
	gen_big_manifest_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rp_enc_roundtrip), cmocka_unit_test(test_rp_enc_commands),
	    cmocka_unit_test(test_rp_enc_refusals),  cmocka_unit_test(test_lzx_structure),
	    cmocka_unit_test(test_eb_every_variant), cmocka_unit_test(test_eb_placement),
	    cmocka_unit_test(test_bigf_big4),	     cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_hostile_names),    cmocka_unit_test(test_hostile_nested),
	    cmocka_unit_test(test_sfil_roundtrip),   cmocka_unit_test(test_sfil_header_counts),
	    cmocka_unit_test(test_sfil_hostile),     cmocka_unit_test(test_bench_archive),
	    cmocka_unit_test(test_game_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
