/* PSK/PSKX: generator -> writer -> reader round trips and hostile byte patches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <malloc.h>

#include "psgfs/gen/gen_psk.h"
#include "psgfs/base/names.h"
#include "psgfs/gen/prng.h"
#include "psk_testutil.h"

/* Generate, write and return the bytes (and the in-memory mesh when m != NULL). */
static uint8_t *gen_bytes(const struct gen_psk_opts *o, struct psk_mesh *m, size_t *len)
{
	struct psk_mesh tmp;
	struct buf b;
	uint8_t *p;

	assert_int_equal(gen_psk_mesh(o, m ? m : &tmp), RC_OK);
	buf_init(&b);
	assert_int_equal(psk_write(m ? m : &tmp, &b), RC_OK);
	if (!m)
		psk_mesh_free(&tmp);
	p = buf_steal(&b, len);
	assert_non_null(p);
	return p;
}

/* Read p and require it to equal m with no problem lines. */
static void read_same(const uint8_t *p, size_t n, const struct psk_mesh *m)
{
	struct psk_mesh got;
	struct diag d;

	diag_init(&d);
	assert_int_equal(psk_read(p, n, &got, &d), RC_OK);
	diag_dump(&d);
	assert_int_equal(diag_count(&d), 0);
	assert_mesh_same(m, &got);
	psk_mesh_free(&got);
	diag_free(&d);
}

static void roundtrip(const struct gen_psk_opts *o)
{
	struct psk_mesh m;
	size_t n;
	uint8_t *p = gen_bytes(o, &m, &n);

	read_same(p, n, &m);
	psk_mesh_free(&m);
	free(p);
}

static void full_opts(struct gen_psk_opts *o, uint64_t seed)
{
	gen_psk_opts_default(o, seed);
	o->bones = 12;
	o->materials = 3;
	o->normals = true;
	o->colors = true;
	o->extra_uv_sets = 3;
	o->morphs = 4;
	o->sockets = 3;
}

static void test_roundtrip(void **state)
{
	struct gen_psk_opts o;

	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		gen_psk_opts_default(&o, seed);
		roundtrip(&o);
		full_opts(&o, seed);
		o.root_parent_minus1 = seed & 1;
		o.max_influences = 1 + seed % 4;
		roundtrip(&o);
	}
	/* No skeleton, no weights, one point. */
	gen_psk_opts_default(&o, 99);
	o.bones = 0;
	o.points = 1;
	o.wedges = 3;
	o.faces = 1;
	roundtrip(&o);
	/* Nothing at all: every mandatory chunk with count 0. */
	{
		struct psk_mesh empty = {.head_type_flag = 20100422};
		struct buf b;
		size_t n;
		uint8_t *p;

		buf_init(&b);
		assert_int_equal(psk_write(&empty, &b), RC_OK);
		p = buf_steal(&b, &n);
		assert_int_equal(n, 7 * PSK_CHUNK_HEADER);
		read_same(p, n, &empty);
		free(p);
	}
}

static void test_generator_properties(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m;
	size_t n1, n2, n3;
	uint8_t *a, *b, *c;

	(void)state;
	full_opts(&o, 7);
	a = gen_bytes(&o, NULL, &n1);
	b = gen_bytes(&o, NULL, &n2);
	o.seed = 8;
	c = gen_bytes(&o, NULL, &n3);
	assert_int_equal(n1, n2);
	assert_memory_equal(a, b, n1);
	assert_true(n1 != n3 || memcmp(a, c, n1) != 0);
	free(a);
	free(b);
	free(c);

	full_opts(&o, 9);
	o.max_influences = 4;
	assert_int_equal(gen_psk_mesh(&o, &m), RC_OK);
	/* Parents first, weights normalised exactly, 1..4 per point, sorted by point. */
	for (size_t i = 1; i < m.n_bones; i++)
		assert_true(m.bones[i].parent >= 0 && (size_t)m.bones[i].parent < i);
	{
		size_t w = 0;

		for (size_t pt = 0; pt < m.n_points; pt++) {
			float sum = 0;
			size_t k = 0;

			while (w < m.n_weights && (size_t)m.weights[w].point == pt)
				sum += m.weights[w++].weight, k++;
			assert_true(k >= 1 && k <= 4);
			assert_true(sum == 1.0f);
		}
		assert_int_equal(w, m.n_weights);
	}
	psk_mesh_free(&m);

	o.materials = 300;
	assert_int_equal(gen_psk_mesh(&o, &m), RC_INVAL);
}

static void test_hostile_names(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m;
	size_t n;
	uint8_t *p;
	bool slash = false, dotdot = false, nonul = false, ctl = false;

	(void)state;
	full_opts(&o, 3);
	o.bones = 14;
	o.hostile_names = true;
	p = gen_bytes(&o, &m, &n);
	for (size_t i = 0; i < m.n_bones; i++) {
		const uint8_t *nm = m.bones[i].name;
		size_t l = name_len(nm, PSK_NAME_LEN);

		slash |= memchr(nm, '/', l) != NULL;
		dotdot |= l == 2 && !memcmp(nm, "..", 2);
		nonul |= l == PSK_NAME_LEN;
		ctl |= memchr(nm, 1, l) != NULL;
	}
	assert_true(slash && dotdot && nonul && ctl);
	read_same(p, n, &m);
	psk_mesh_free(&m);
	free(p);
}

/* ActorX left garbage after the NUL in chunk IDs and in the wedge padding. */
static void test_junk_ids_and_pads(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m;
	struct psk_chunks ch;
	size_t n, vtxw;
	uint8_t *p;
	struct prng r;

	(void)state;
	full_opts(&o, 11);
	p = gen_bytes(&o, &m, &n);
	prng_seed(&r, 5);
	scan_buf(p, n, &ch);
	for (size_t i = 0; i < ch.n; i++) {
		uint8_t *id = p + ch.v[i].offset;
		uint32_t flag = (uint32_t)prng_next(&r); /* any TypeFlag is fine */

		put_u32(id + 20, flag);
		if (i == 0)
			m.head_type_flag = (int32_t)flag;
		for (size_t k = strlen(ch.v[i].id) + 1; k < 20; k++)
			id[k] = (uint8_t)(prng_next(&r) | 1);
	}
	psk_chunks_free(&ch);
	vtxw = chunk_off(p, n, "VTXW0000") + PSK_CHUNK_HEADER;
	assert_true(m.n_points <= 65536);
	for (size_t i = 0; i < m.n_wedges; i++) {
		uint8_t *w = p + vtxw + 16 * i;

		w[2] = (uint8_t)prng_next(&r); /* high word of the point index */
		w[3] = (uint8_t)prng_next(&r) | 0x80;
		w[14] = 0xAA;
		w[15] = 0x55;
	}
	scan_buf(p, n, &ch);
	assert_string_equal(ch.v[1].id, "PNTS0000");
	assert_true(ch.v[1].raw_id[9] != 0);
	psk_chunks_free(&ch);
	read_same(p, n, &m);
	psk_mesh_free(&m);
	free(p);
}

/* > 65536 points: the point index is a real u32 and is not masked. */
static void test_point_index_u32(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m, got;
	struct diag d;
	size_t n, vtxw;
	uint8_t *p;

	(void)state;
	gen_psk_opts_default(&o, 21);
	o.points = 70000;
	o.wedges = 70010;
	o.faces = 100;
	p = gen_bytes(&o, &m, &n);
	assert_true(m.wedges[69999].point == 69999);
	read_same(p, n, &m);
	/* Garbage in the high word is now taken literally and reported. */
	vtxw = chunk_off(p, n, "VTXW0000") + PSK_CHUNK_HEADER;
	p[vtxw + 16 * 5 + 3] = 0x40;
	diag_init(&d);
	assert_int_equal(psk_read(p, n, &got, &d), RC_OK);
	assert_int_equal(got.wedges[5].point, 0x40000000u | m.wedges[5].point);
	assert_true(diag_has(&d, "wedge 5 point"));
	psk_mesh_free(&got);
	diag_free(&d);
	psk_mesh_free(&m);
	free(p);

	/* The threshold is exactly 65536 points: 65536 still masks, 65537 does not. */
	for (uint32_t np = 65536; np <= 65537; np++) {
		gen_psk_opts_default(&o, 23);
		o.points = np;
		o.wedges = np;
		o.faces = 10;
		p = gen_bytes(&o, &m, &n);
		vtxw = chunk_off(p, n, "VTXW0000") + PSK_CHUNK_HEADER;
		p[vtxw + 16 * 7 + 2] = 0x01;
		diag_init(&d);
		assert_int_equal(psk_read(p, n, &got, &d), RC_OK);
		assert_int_equal(got.wedges[7].point, np == 65536 ? 7u : 0x10007u);
		if (np == 65536)
			assert_int_equal(diag_count(&d), 0);
		else
			assert_true(diag_has(&d, "wedge 7 point 65543 out of range"));
		psk_mesh_free(&got);
		diag_free(&d);
		psk_mesh_free(&m);
		free(p);
	}
}

/* Move chunk `id` to the end of the file. */
static uint8_t *move_last(const uint8_t *p, size_t n, const char *id, size_t *out_n)
{
	struct psk_chunks ch;
	struct buf o;
	size_t mv = SIZE_MAX;

	scan_buf(p, n, &ch);
	buf_init(&o);
	for (size_t i = 0; i < ch.n; i++) {
		if (!strcmp(ch.v[i].id, id) && mv == SIZE_MAX) {
			mv = i;
			continue;
		}
		buf_put(&o, p + ch.v[i].offset, PSK_CHUNK_HEADER + ch.v[i].payload_len);
	}
	assert_true(mv != SIZE_MAX);
	buf_put(&o, p + ch.v[mv].offset, PSK_CHUNK_HEADER + ch.v[mv].payload_len);
	psk_chunks_free(&ch);
	return buf_steal(&o, out_n);
}

/* PNTS after VTXW: the u16/u32 decision must wait for the whole file. */
static void test_point_rule_after_all_chunks(void **state)
{
	struct psk_mesh m = {0}, got;
	struct psk_point pts[2] = {{1, 2, 3}, {4, 5, 6}};
	struct psk_wedge w[2] = {{.point = 1}, {.point = 0}};
	struct gen_psk_opts o;
	struct buf b;
	struct diag d;
	uint8_t *p, *q;
	size_t n, n2;

	(void)state;
	/* Few points, junk high word, PNTS last: masked. */
	m.head_type_flag = 20100422;
	m.points = pts;
	m.n_points = 2;
	m.wedges = w;
	m.n_wedges = 2;
	buf_init(&b);
	assert_int_equal(psk_write(&m, &b), RC_OK);
	p = buf_steal(&b, &n);
	p[chunk_off(p, n, "VTXW0000") + PSK_CHUNK_HEADER + 2] = 0x77;
	q = move_last(p, n, "PNTS0000", &n2);
	diag_init(&d);
	assert_int_equal(psk_read(q, n2, &got, &d), RC_OK);
	diag_dump(&d);
	assert_int_equal(diag_count(&d), 0);
	assert_int_equal(got.wedges[0].point, 1);
	psk_mesh_free(&got);
	diag_free(&d);
	free(p);
	free(q);

	/* Many points, PNTS last: indices above 65535 survive. */
	gen_psk_opts_default(&o, 22);
	o.points = 70000;
	o.wedges = 70000;
	o.faces = 10;
	p = gen_bytes(&o, &m, &n);
	q = move_last(p, n, "PNTS0000", &n2);
	read_same(q, n2, &m);
	psk_mesh_free(&m);
	free(p);
	free(q);
}

static void test_face3200(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m;
	struct psk_chunks ch;
	size_t n;
	uint8_t *p;

	(void)state;
	gen_psk_opts_default(&o, 31);
	o.big = true;
	o.points = 1000;
	o.faces = 5000;
	p = gen_bytes(&o, &m, &n);
	assert_true(m.n_wedges > 65536);
	assert_true(psk_needs_pskx(&m));
	assert_true(m.faces32);
	scan_buf(p, n, &ch);
	assert_string_equal(ch.v[3].id, "FACE3200");
	assert_int_equal(ch.v[3].data_size, 18);
	assert_int_equal(ch.v[3].payload_len, 18 * 5000);
	psk_chunks_free(&ch);
	/* Some face must reference a wedge beyond 16 bits for the test to mean anything. */
	{
		bool high = false;

		for (size_t i = 0; i < m.n_faces; i++)
			for (int k = 0; k < 3; k++)
				high |= m.faces[i].wedge[k] > 65535;
		assert_true(high);
	}
	read_same(p, n, &m);
	psk_mesh_free(&m);
	free(p);

	/* Exactly 65536 wedges stays FACE0000. */
	gen_psk_opts_default(&o, 32);
	o.points = 100;
	o.wedges = 65536;
	o.faces = 10;
	p = gen_bytes(&o, &m, &n);
	assert_false(psk_needs_pskx(&m));
	assert_false(m.faces32);
	scan_buf(p, n, &ch);
	assert_string_equal(ch.v[3].id, "FACE0000");
	assert_int_equal(ch.v[3].data_size, 12);
	psk_chunks_free(&ch);
	read_same(p, n, &m);
	psk_mesh_free(&m);
	free(p);
}

/* Chunks in a new order: REFSKELT last, VTXNORMS mid-file, ACTRHEAD twice. */
static void test_shuffled_order(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m;
	struct psk_chunks ch;
	struct buf b;
	size_t n;
	uint8_t *p;
	const char *order[] = {"ACTRHEAD",  "ACTRHEAD", "MRPHDATA",   "PNTS0000",
			       "VTXNORMS",  "VTXW0000", "EXTRAUVS1",  "SKELSOCK",
			       "FACE0000",  "MATT0000", "RAWWEIGHTS", "VERTEXCOLOR",
			       "EXTRAUVS0", "MRPHINFO", "EXTRAUVS2",  "REFSKELT"};

	(void)state;
	full_opts(&o, 41);
	p = gen_bytes(&o, &m, &n);
	scan_buf(p, n, &ch);
	assert_int_equal(ch.n, sizeof order / sizeof order[0] - 1);
	buf_init(&b);
	for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
		bool found = false;

		for (size_t i = 0; i < ch.n; i++)
			if (!strcmp(ch.v[i].id, order[k])) {
				buf_put(&b, p + ch.v[i].offset,
					PSK_CHUNK_HEADER + ch.v[i].payload_len);
				found = true;
				break;
			}
		assert_true(found);
	}
	assert_int_equal(b.len, n + PSK_CHUNK_HEADER);
	read_same(b.data, b.len, &m);
	psk_chunks_free(&ch);
	buf_free(&b);
	psk_mesh_free(&m);
	free(p);
}

/* Insert bytes at `at` into a fresh buffer. */
static uint8_t *insert_at(const uint8_t *p, size_t n, size_t at, const void *ins, size_t k,
			  size_t *out_n)
{
	uint8_t *q = malloc(n + k);

	assert_non_null(q);
	memcpy(q, p, at);
	memcpy(q + at, ins, k);
	memcpy(q + at + k, p + at, n - at);
	*out_n = n + k;
	return q;
}

static void test_unknown_chunk(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m, got;
	struct psk_chunks ch;
	struct diag d;
	uint8_t unk[32 + 37] = "ZZZZ0000";
	size_t n, n2;
	uint8_t *p, *q;

	(void)state;
	full_opts(&o, 51);
	p = gen_bytes(&o, &m, &n);
	put_u32(unk + 24, 37); /* odd record size: a reader that re-parses payload breaks */
	put_u32(unk + 28, 1);
	memcpy(unk + 32, "ACTRHEADPNTS0000 this is no header", 34);
	q = insert_at(p, n, chunk_off(p, n, "VTXW0000"), unk, sizeof unk, &n2);
	diag_init(&d);
	assert_int_equal(psk_read(q, n2, &got, &d), RC_OK);
	assert_mesh_same(&m, &got);
	assert_int_equal(diag_count(&d), 1);
	assert_true(diag_has(&d, "chunk 2 (ZZZZ0000): unknown chunk"));
	scan_buf(q, n2, &ch);
	assert_string_equal(ch.v[2].id, "ZZZZ0000");
	assert_int_equal(ch.v[2].payload_len, 37);
	assert_string_equal(ch.v[3].id, "VTXW0000");
	psk_chunks_free(&ch);
	psk_mesh_free(&got);
	diag_free(&d);
	psk_mesh_free(&m);
	free(p);
	free(q);
}

static void test_record_size_mismatch(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m, got;
	struct diag d;
	size_t n, off;
	uint8_t *p;

	(void)state;
	full_opts(&o, 61);
	o.faces = 30; /* 30 * 12 bytes = 20 * 18: the chunk chain stays intact */
	p = gen_bytes(&o, &m, &n);
	/* Same bytes, different stride: RAWWEIGHTS as 2*count records of 6 bytes. */
	off = chunk_off(p, n, "RAWWEIGHTS");
	put_u32(p + off + 24, 6);
	put_u32(p + off + 28, (uint32_t)m.n_weights * 2);
	/* FACE0000 claiming the FACE3200 record size: skip, don't guess. */
	off = chunk_off(p, n, "FACE0000");
	put_u32(p + off + 24, 18);
	put_u32(p + off + 28, (uint32_t)m.n_faces * 12 / 18);
	diag_init(&d);
	assert_int_equal(psk_read(p, n, &got, &d), RC_OK);
	assert_true(diag_has(&d, "(RAWWEIGHTS): record size 6, expected 12: chunk skipped"));
	assert_true(diag_has(&d, "(FACE0000): record size 18, expected 12: chunk skipped"));
	assert_int_equal(got.n_weights, 0);
	assert_int_equal(got.n_faces, 0);
	assert_int_equal(got.n_points, m.n_points); /* the rest still decodes */
	assert_int_equal(got.n_morphs, m.n_morphs);
	psk_mesh_free(&got);
	diag_free(&d);
	psk_mesh_free(&m);
	free(p);
}

static void test_aliases(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m;
	size_t n;
	uint8_t *p;

	(void)state;
	full_opts(&o, 71);
	p = gen_bytes(&o, &m, &n);
	rename_chunk(p, n, "REFSKELT", "REFSKEL0");
	rename_chunk(p, n, "RAWWEIGHTS", "RAWW0000");
	rename_chunk(p, n, "EXTRAUVS1", "EXTRAUV1"); /* psk_psa_py spelling */
	rename_chunk(p, n, "VTXW0000", "VTXW3200");
	read_same(p, n, &m);
	psk_mesh_free(&m);
	free(p);
}

/* Every boundary and many random cut points: no crash, and a report for mid-chunk cuts. */
static void test_truncation(void **state)
{
	struct gen_psk_opts o;
	struct psk_chunks ch;
	struct prng r;
	size_t n;
	uint8_t *p;

	(void)state;
	full_opts(&o, 81);
	p = gen_bytes(&o, NULL, &n);
	scan_buf(p, n, &ch);
	prng_seed(&r, 1);
	for (size_t t = 0; t < ch.n * 3 + 400; t++) {
		size_t cut;
		bool boundary = false;
		struct psk_mesh got;
		struct diag d;
		uint8_t *q;
		enum rc res;

		if (t < ch.n * 3) {
			size_t i = t / 3;

			cut = (size_t)ch.v[i].offset + (t % 3 == 0 ? 0 : t % 3 == 1 ? 7 : 33);
			if (cut > n)
				cut = n;
		} else {
			cut = prng_below(&r, (uint32_t)n);
		}
		boundary = cut == n;
		for (size_t i = 0; i < ch.n; i++)
			boundary |= ch.v[i].offset == cut;
		q = malloc(cut ? cut : 1); /* exact-size copy so ASan sees any overread */
		memcpy(q, p, cut);
		diag_init(&d);
		res = psk_read(q, cut, &got, &d);
		if (cut < PSK_CHUNK_HEADER) {
			assert_int_equal(res, RC_FORMAT);
		} else {
			assert_int_equal(res, RC_OK);
			if (!boundary)
				assert_true(diag_count(&d) > 0);
			psk_mesh_free(&got);
		}
		diag_free(&d);
		free(q);
	}
	psk_chunks_free(&ch);
	free(p);
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* Claimed counts far beyond the file allocate nothing big. */
static void test_huge_counts(void **state)
{
	static const uint32_t sizes[][2] = {
	    {12, 0x7fffffff},	{12, 0xffffffff},  {0xffffffff, 0xffffffff},
	    {0x10000, 0x10000}, {120, 0x7fffffff}, {0, 0xffffffff},
	};
	const char *ids[] = {"PNTS0000", "REFSKELT", "MRPHDATA", "VTXW0000"};

	(void)state;
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
			uint8_t f[32 * 2 + 40] = "ACTRHEAD";
			struct psk_mesh got;
			struct diag d;
			size_t before;

			memcpy(f + 32, ids[k], strlen(ids[k]));
			put_u32(f + 32 + 24, sizes[s][0]);
			put_u32(f + 32 + 28, sizes[s][1]);
			diag_init(&d);
			before = heap_in_use();
			assert_int_equal(psk_read(f, sizeof f, &got, &d), RC_OK);
			assert_true(heap_in_use() < before + 64 * 1024);
			if (sizes[s][0] != 0)
				assert_true(diag_has(&d, "run past the end of the file"));
			assert_true(got.n_points + got.n_bones + got.n_deltas + got.n_wedges <= 40);
			psk_mesh_free(&got);
			diag_free(&d);
		}

	/* A file of 10000 empty chunk headers: a table of 10001 entries, no more. */
	{
		size_t n = 32 * 10001;
		uint8_t *p = calloc(1, n);
		struct psk_chunks ch;
		struct psk_mesh got;
		struct diag d;

		memcpy(p, "ACTRHEAD", 8);
		for (size_t i = 1; i <= 10000; i++)
			memcpy(p + 32 * i, "JUNK", 4);
		scan_buf(p, n, &ch);
		assert_int_equal(ch.n, 10001);
		psk_chunks_free(&ch);
		diag_init(&d);
		assert_int_equal(psk_read(p, n, &got, &d), RC_OK);
		assert_true(d.dropped > 0 || d.n == 10000);
		psk_mesh_free(&got);
		diag_free(&d);
		free(p);
	}
}

static void test_head_problems(void **state)
{
	uint8_t f[64] = "ACTRHEAD";
	struct psk_mesh got;
	struct psa_anim a;
	struct psk_chunks ch;
	struct src s;
	struct src_mem sm;
	struct diag d;

	(void)state;
	assert_int_equal(psk_read(f, 31, &got, NULL), RC_FORMAT);
	/* The head claims the whole world: nothing after it can be found. */
	put_u32(f + 24, 1000);
	put_u32(f + 28, 1000);
	src_init_mem(&s, &sm, f, sizeof f);
	diag_init(&d);
	assert_int_equal(psk_scan(&s, &ch, &d), RC_CORRUPT);
	assert_int_equal(ch.n, 1);
	assert_true(ch.v[0].truncated);
	psk_chunks_free(&ch);
	assert_int_equal(psk_read(f, sizeof f, &got, &d), RC_OK);
	assert_int_equal(got.n_points, 0);
	assert_true(diag_count(&d) >= 2);
	psk_mesh_free(&got);
	diag_free(&d);
	/* Not a PSK; a PSA is not a mesh. */
	memcpy(f, "PNTS0000", 8);
	assert_int_equal(psk_read(f, sizeof f, &got, NULL), RC_FORMAT);
	memset(f, 0, sizeof f);
	memcpy(f, "ANIMHEAD", 8);
	assert_int_equal(psk_read(f, sizeof f, &got, NULL), RC_FORMAT);
	memcpy(f, "ACTRHEAD", 8);
	assert_int_equal(psa_read(f, sizeof f, &a, NULL), RC_FORMAT);
	/* Trailing bytes shorter than a header are reported. */
	diag_init(&d);
	assert_int_equal(psk_read(f, 40, &got, &d), RC_OK);
	assert_true(diag_has(&d, "8 trailing bytes at offset 32"));
	psk_mesh_free(&got);
	diag_free(&d);
}

static void test_index_validation(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m, got;
	struct diag d;
	struct buf b;
	size_t n;
	uint8_t *p;

	(void)state;
	full_opts(&o, 91);
	assert_int_equal(gen_psk_mesh(&o, &m), RC_OK);
	m.wedges[2].point = (uint32_t)m.n_points;
	m.faces[3].wedge[1] = (uint32_t)m.n_wedges + 5;
	m.faces[4].mat = (uint8_t)m.n_materials;
	m.weights[5].point = -1;
	m.weights[6].bone = (int32_t)m.n_bones;
	m.bones[0].parent = 3;
	m.bones[4].parent = 4;
	m.bones[7].parent = 50;
	m.deltas[1].point = (int32_t)m.n_points + 1;
	m.morphs[0].vertex_count += 1000; /* more deltas claimed than MRPHDATA holds */
	buf_init(&b);
	assert_int_equal(psk_write(&m, &b), RC_OK);
	p = buf_steal(&b, &n);
	diag_init(&d);
	assert_int_equal(psk_read(p, n, &got, &d), RC_OK);
	diag_dump(&d);
	assert_true(diag_has(&d, "wedge 2 point"));
	assert_true(diag_has(&d, "face 3 wedge"));
	assert_true(diag_has(&d, "face 4 material"));
	assert_true(diag_has(&d, "weight 5 point -1"));
	assert_true(diag_has(&d, "weight 6 bone"));
	assert_true(diag_has(&d, "bone 0 parent 3"));
	assert_true(diag_has(&d, "bone 4 parent 4 does not come before it"));
	assert_true(diag_has(&d, "bone 4 is in a parent cycle"));
	assert_true(diag_has(&d, "bone 7 parent 50 out of range"));
	assert_true(diag_has(&d, "delta 1 point"));
	assert_true(diag_has(&d, "MRPHINFO vertex counts add up to"));
	/* Morph deltas are clamped to what exists. */
	assert_int_equal(got.morphs[0].first_delta, 0);
	assert_int_equal(got.morphs[0].n_deltas, m.n_deltas);
	assert_int_equal(got.morphs[1].n_deltas, 0);
	/* The reader reports; it keeps the values as stored. */
	assert_int_equal(got.wedges[2].point, m.n_points);
	assert_int_equal(got.bones[7].parent, 50);
	psk_mesh_free(&got);
	diag_free(&d);
	free(p);

	/* A longer cycle among forward references. */
	m.bones[0].parent = 0;
	m.bones[4].parent = 6;
	m.bones[6].parent = 9;
	m.bones[9].parent = 4;
	m.bones[7].parent = 1;
	m.morphs[0].vertex_count -= 1000;
	m.wedges[2].point = 0;
	buf_init(&b);
	assert_int_equal(psk_write(&m, &b), RC_OK);
	p = buf_steal(&b, &n);
	diag_init(&d);
	assert_int_equal(psk_read(p, n, &got, &d), RC_OK);
	diag_dump(&d);
	assert_true(diag_has(&d, "is in a parent cycle"));
	assert_false(diag_has(&d, "MRPHINFO vertex counts"));
	assert_false(diag_has(&d, "wedge 2 point"));
	psk_mesh_free(&got);
	diag_free(&d);
	free(p);
	psk_mesh_free(&m);
}

/* VTXNORMS per wedge is accepted; other counts are reported. Duplicates keep the first. */
static void test_counts_and_duplicates(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m, got;
	struct diag d;
	struct buf b;
	size_t n, n2, off, len;
	uint8_t *p, *q;

	(void)state;
	full_opts(&o, 101);
	assert_int_equal(gen_psk_mesh(&o, &m), RC_OK);
	free(m.normals);
	m.normals = calloc(m.n_wedges, sizeof *m.normals);
	m.n_normals = m.n_wedges;
	buf_init(&b);
	assert_int_equal(psk_write(&m, &b), RC_OK);
	p = buf_steal(&b, &n);
	read_same(p, n, &m);
	free(p);

	m.n_normals = m.n_wedges - 1;
	m.n_colors = m.n_wedges - 2;
	m.n_extra_uvs[1] = 3;
	buf_init(&b);
	assert_int_equal(psk_write(&m, &b), RC_OK);
	p = buf_steal(&b, &n);
	diag_init(&d);
	assert_int_equal(psk_read(p, n, &got, &d), RC_OK);
	assert_true(diag_has(&d, "VTXNORMS has"));
	assert_true(diag_has(&d, "VERTEXCOLOR has"));
	assert_true(diag_has(&d, "EXTRAUVS1 has 3 UVs"));
	psk_mesh_free(&got);
	diag_free(&d);

	/* A second PNTS0000 at the end with other values is ignored. */
	off = chunk_off(p, n, "PNTS0000");
	len = PSK_CHUNK_HEADER + 12 * m.n_points;
	q = insert_at(p, n, n, p + off, len, &n2);
	memset(q + n + PSK_CHUNK_HEADER, 0x41, len - PSK_CHUNK_HEADER);
	diag_init(&d);
	assert_int_equal(psk_read(q, n2, &got, &d), RC_OK);
	assert_true(diag_has(&d, "(PNTS0000): duplicate of chunk 1, ignored"));
	assert_f32_same(got.points[0].x, m.points[0].x);
	psk_mesh_free(&got);
	diag_free(&d);
	free(q);
	free(p);
	psk_mesh_free(&m);
}

/* The writer profile (docs/psk-psa.md, "Writer profile (psgfs)"), byte level. */
static void test_writer_profile(void **state)
{
	struct gen_psk_opts o;
	struct psk_mesh m;
	struct psk_chunks ch;
	size_t n, vtxw;
	uint8_t *p;
	const char *order[] = {"ACTRHEAD",  "PNTS0000",	  "VTXW0000",	 "FACE0000",  "MATT0000",
			       "REFSKELT",  "RAWWEIGHTS", "VERTEXCOLOR", "EXTRAUVS0", "EXTRAUVS1",
			       "EXTRAUVS2", "VTXNORMS",	  "MRPHINFO",	 "MRPHDATA",  "SKELSOCK"};

	(void)state;
	full_opts(&o, 111);
	assert_int_equal(gen_psk_mesh(&o, &m), RC_OK);
	m.head_type_flag = 0;
	{
		struct buf b;

		buf_init(&b);
		assert_int_equal(psk_write(&m, &b), RC_OK);
		p = buf_steal(&b, &n);
	}
	scan_buf(p, n, &ch);
	assert_int_equal(ch.n, sizeof order / sizeof order[0]);
	for (size_t i = 0; i < ch.n; i++) {
		assert_string_equal(ch.v[i].id, order[i]);
		for (size_t k = strlen(order[i]); k < 20; k++)
			assert_int_equal(ch.v[i].raw_id[k], 0);
		assert_int_equal(ch.v[i].type_flag, i == 0 ? 20100422 : 0);
		assert_false(ch.v[i].truncated);
	}
	assert_int_equal(ch.v[ch.n - 1].payload_off + ch.v[ch.n - 1].payload_len, n);
	psk_chunks_free(&ch);
	vtxw = chunk_off(p, n, "VTXW0000") + PSK_CHUNK_HEADER;
	for (size_t i = 0; i < m.n_wedges; i++) {
		assert_int_equal(p[vtxw + 16 * i + 14], 0);
		assert_int_equal(p[vtxw + 16 * i + 15], 0);
		assert_int_equal(ld_u32le(p + vtxw + 16 * i), m.wedges[i].point);
	}
	free(p);

	/* Head flag from the struct; optional chunks only when non-empty. */
	m.head_type_flag = 1999801;
	m.n_colors = m.n_normals = m.n_morphs = m.n_deltas = m.n_sockets = 0;
	m.n_extra_uvs[0] = m.n_extra_uvs[1] = m.n_extra_uvs[2] = 0;
	{
		struct buf b;

		buf_init(&b);
		assert_int_equal(psk_write(&m, &b), RC_OK);
		p = buf_steal(&b, &n);
	}
	scan_buf(p, n, &ch);
	assert_int_equal(ch.n, 7);
	assert_int_equal(ch.v[0].type_flag, 1999801);
	psk_chunks_free(&ch);
	free(p);
	psk_mesh_free(&m);
}

/* A source whose reads fail as a damaged archive entry's do (RC_CORRUPT): the parsers give that
 * back, with nothing left to free or read. */
static enum rc read_corrupt(void *ctx, uint64_t off, void *dst, size_t n)
{
	(void)ctx, (void)off, (void)dst, (void)n;
	return RC_CORRUPT;
}

static void test_source_read_corrupt(void **state)
{
	struct src s = {read_corrupt, NULL, 4096};
	struct psk_index ix;
	struct psa_index pa;
	struct diag d;

	(void)state;
	diag_init(&d);
	assert_int_equal(psk_index_open(&s, &ix, &d), RC_CORRUPT);
	psk_index_free(&ix);
	assert_int_equal(psa_index_open(&s, &pa, &d), RC_CORRUPT);
	psa_index_free(&pa);
	diag_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_generator_properties),
	    cmocka_unit_test(test_hostile_names),
	    cmocka_unit_test(test_junk_ids_and_pads),
	    cmocka_unit_test(test_point_index_u32),
	    cmocka_unit_test(test_point_rule_after_all_chunks),
	    cmocka_unit_test(test_face3200),
	    cmocka_unit_test(test_shuffled_order),
	    cmocka_unit_test(test_unknown_chunk),
	    cmocka_unit_test(test_record_size_mismatch),
	    cmocka_unit_test(test_aliases),
	    cmocka_unit_test(test_truncation),
	    cmocka_unit_test(test_huge_counts),
	    cmocka_unit_test(test_head_problems),
	    cmocka_unit_test(test_index_validation),
	    cmocka_unit_test(test_counts_and_duplicates),
	    cmocka_unit_test(test_writer_profile),
	    cmocka_unit_test(test_source_read_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
