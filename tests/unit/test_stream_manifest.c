/* District stream manifests CMAP, CSPA, MMAP (docs/worlds.md): round trips through the writers,
 * PACK's id rules, and every hostile case of issue 26 item 1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/hash.h"
#include "psgfs/formats/stream_manifest.h"

/* ---- helpers ---- */

static size_t lines_with(const struct diag *d, const char *what)
{
	size_t k = 0;

	for (size_t i = 0; i < d->n; i++)
		k += strstr(d->msg[i], what) != NULL;
	return k;
}

static void st32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void st64(uint8_t *p, uint64_t v)
{
	st32(p, (uint32_t)(v >> 32));
	st32(p + 4, (uint32_t)v);
}

static const struct sm_header hdr = {
    .version = 1, .stamp = 0x12345678u, .format = 0, .names_off = 0, .unused = 0};

/* A Pres map as PACK writes it: the Global first, then tiles in name order. */
static const char *const tiles[] = {"cPres_-50_150_high", "cPres_150_50_high", "cPres_50_50_high"};
#define N_TILES 3

static uint32_t cmap_sample(struct sm_collection *v)
{
	uint64_t g = sm_global_id("Pres", "DIST_Test");

	memset(v, 0, sizeof *v * (N_TILES + 1));
	v[0].id = g;
	v[0].parent = SM_GLOBAL_PARENT;
	snprintf(v[0].name, sizeof v[0].name, "cPres_Global");
	for (uint32_t i = 0; i < N_TILES; i++) {
		v[i + 1].id = sm_collection_id(tiles[i]);
		v[i + 1].parent = g;
		snprintf(v[i + 1].name, sizeof v[i + 1].name, "%s", tiles[i]);
	}
	for (uint32_t i = 0; i < N_TILES + 1; i++) {
		v[i].offset = 0x100;
		v[i].size = 0x1000 * (i + 1);
		v[i].assets = 3 + i;
		v[i].name_off = 0x40 * i;
	}
	return N_TILES + 1;
}

static uint8_t *cmap_bytes(const struct sm_collection *v, uint32_t n, size_t *len)
{
	struct buf b;

	buf_init(&b);
	assert_int_equal(sm_cmap_write(SM_X360, &hdr, v, n, &b), RC_OK);
	return buf_steal(&b, len);
}

static void cell_set(struct sm_cell *c, uint64_t id, float cx, float cz)
{
	const float lo[4] = {cx - 50, -10, cz - 50, 1}, hi[4] = {cx + 50, 90, cz + 50, 1},
		    gl[4] = {cx, -10, cz, 1};

	memset(c, 0, sizeof *c);
	c->id = id;
	memcpy(c->hull_min, lo, sizeof lo);
	memcpy(c->hull_max, hi, sizeof hi);
	memcpy(c->geom_min, gl, sizeof gl);
	memcpy(c->geom_max, hi, sizeof hi);
}

static uint8_t *cspa_bytes(uint32_t n, size_t *len)
{
	struct sm_cell c[8];
	struct buf b;

	for (uint32_t i = 0; i < n; i++) {
		cell_set(&c[i], 100 + i, 50.0f + 100.0f * (float)i, 50);
		c[i].lod = (uint8_t)(i % 3);
	}
	buf_init(&b);
	assert_int_equal(sm_cspa_write(SM_PS3, &hdr, c, n, &b), RC_OK);
	return buf_steal(&b, len);
}

/* ---- ids ---- */

static void test_fnv1_64(void **state)
{
	(void)state;
	assert_true(fnv1_64("cPres_50_50_high", 16) == 0xfb4c3af3cd410a21ull);
	assert_true(sm_collection_id("cPres_50_50_high") == 0xfb4c3af3cd410a21ull);
	assert_true(fnv1_64("", 0) == FNV64_BASIS);
	/* FNV-1 multiplies first: "a" is (basis * prime) ^ 'a', not FNV-1a's */
	assert_true(fnv1_64("a", 1) == ((FNV64_BASIS * FNV64_PRIME) ^ 'a'));
	assert_true(fnv1_64("a", 1) == 0xaf63bd4c8601b7beull);
	/* FNV-1a (the generators' records): xor first; the published vectors */
	assert_true(fnv1a_64("", 0) == FNV64_BASIS);
	assert_true(fnv1a_64("a", 1) == 0xaf63dc4c8601ec8cull);
	assert_true(fnv1a_64("foobar", 6) == 0x85944171f73967e8ull);
	assert_true(fnv1a_64_update(fnv1a_64("foo", 3), "bar", 3) == fnv1a_64("foobar", 6));
	assert_true(sm_global_id("Pres", "DIST_Test") == fnv1_64("cPres_Global_DIST_Test", 22));
	assert_true(sm_global_id("Sim", "DIST_Test") != sm_global_id("Pres", "DIST_Test"));
}

static void test_platform_rows(void **state)
{
	enum sm_platform pf;
	enum sm_file f;
	char e[4];

	(void)state;
	sm_ext(SM_PS3, SM_CMAP, e);
	assert_string_equal(e, "psm");
	sm_ext(SM_X360, SM_MMAP, e);
	assert_string_equal(e, "xmm");
	assert_true(sm_ext_parse(".XSS", &pf, &f));
	assert_int_equal(pf, SM_X360);
	assert_int_equal(f, SM_CSPA);
	assert_true(sm_ext_parse("pst", &pf, &f));
	assert_int_equal(pf, SM_PS3);
	assert_int_equal(f, SM_ATOC);
	assert_false(sm_ext_parse("psg", &pf, &f));
	assert_false(sm_ext_parse("psmm", &pf, &f));
	assert_string_equal(sm_magic(SM_CSPA), "CSPA");
	assert_int_equal(sm_detect((const uint8_t *)"MMAP", 4), SM_MMAP);
	assert_int_equal(sm_detect((const uint8_t *)"CMAP", 4), SM_CMAP);
	assert_int_equal(sm_detect((const uint8_t *)"SFIL", 4), SM_FILES);
	assert_int_equal(sm_detect((const uint8_t *)"CSP", 3), SM_FILES);
}

/* ---- round trips ---- */

static void test_cmap_round_trip(void **state)
{
	struct sm_collection v[N_TILES + 1];
	uint32_t n = cmap_sample(v), cyc = 99;
	size_t len;
	uint8_t *p = cmap_bytes(v, n, &len);
	struct sm_cmap m;
	struct diag d;
	struct buf b;

	(void)state;
	assert_int_equal(len, SM_CMAP_HDR + n * SM_CMAP_REC);
	assert_memory_equal(p, "CMAP", 4);
	assert_int_equal(ld_u32be(p + 0x10), n);
	assert_string_equal((const char *)p + 0x20 + 0x1C, "cPres_Global");
	diag_init(&d);
	assert_int_equal(sm_cmap_parse(p, len, SM_X360, &m, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.n, n);
	assert_true(m.h.stamp == hdr.stamp);
	assert_int_equal(m.h.version, 1);
	for (uint32_t i = 0; i < n; i++) {
		assert_true(m.v[i].id == v[i].id);
		assert_true(m.v[i].parent == v[i].parent);
		assert_int_equal(m.v[i].offset, v[i].offset);
		assert_int_equal(m.v[i].size, v[i].size);
		assert_int_equal(m.v[i].assets, v[i].assets);
		assert_int_equal(m.v[i].name_off, v[i].name_off);
		assert_string_equal(m.v[i].name, v[i].name);
		assert_string_equal(m.v[i].safe, v[i].name);
		assert_int_equal(m.v[i].flags, 0);
	}
	assert_int_equal(sm_cmap_depths(&m, &cyc, &d), RC_OK);
	assert_int_equal(cyc, 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.v[0].depth, 0);
	for (uint32_t i = 1; i < n; i++)
		assert_int_equal(m.v[i].depth, 1);
	assert_int_equal(sm_cmap_find(&m, sm_collection_id("cPres_50_50_high")), 3);
	assert_int_equal(sm_cmap_find(&m, 1), -1);
	assert_true(sm_cmap_heap(&m) >= n * sizeof *m.v);
	/* write -> parse -> write gives the same bytes; both consoles are one byte order */
	for (int pf = 0; pf < SM_PLATFORMS; pf++) {
		buf_init(&b);
		assert_int_equal(sm_cmap_write((enum sm_platform)pf, &m.h, m.v, m.n, &b), RC_OK);
		assert_int_equal(b.len, len);
		assert_memory_equal(b.data, p, len);
		buf_free(&b);
	}
	sm_cmap_free(&m);
	/* the empty map */
	buf_init(&b);
	assert_int_equal(sm_cmap_write(SM_PS3, &hdr, NULL, 0, &b), RC_OK);
	assert_int_equal(b.len, SM_CMAP_HDR);
	assert_int_equal(sm_cmap_parse(b.data, b.len, SM_PS3, &m, &d), RC_OK);
	assert_int_equal(m.n, 0);
	assert_int_equal(sm_cmap_depths(&m, &cyc, &d), RC_OK);
	sm_cmap_free(&m);
	buf_free(&b);
	assert_int_equal(d.n, 0);
	diag_free(&d);
	free(p);
}

static void test_cspa_round_trip(void **state)
{
	size_t len;
	uint8_t *p = cspa_bytes(5, &len);
	struct sm_cspa m;
	struct diag d;
	struct buf b;

	(void)state;
	assert_int_equal(len, SM_CSPA_HDR + 5 * SM_CSPA_REC);
	diag_init(&d);
	assert_int_equal(sm_cspa_parse(p, len, SM_PS3, &m, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.n, 5);
	for (uint32_t i = 0; i < 5; i++) {
		assert_true(m.v[i].id == 100 + i);
		assert_int_equal(m.v[i].lod, i % 3);
		assert_true(m.v[i].hull_min[0] == 50.0f + 100.0f * (float)i - 50);
		assert_true(m.v[i].geom_min[2] == 50.0f);
		assert_true(m.v[i].hull_max[3] == 1.0f);
		assert_int_equal(m.v[i].flags, 0);
	}
	/* the level of detail at +8, padding zero */
	assert_int_equal(p[SM_CSPA_HDR + SM_CSPA_REC + 8], 1);
	for (int k = 9; k < 16; k++)
		assert_int_equal(p[SM_CSPA_HDR + SM_CSPA_REC + k], 0);
	buf_init(&b);
	assert_int_equal(sm_cspa_write(SM_X360, &m.h, m.v, m.n, &b), RC_OK);
	assert_int_equal(b.len, len);
	assert_memory_equal(b.data, p, len);
	buf_free(&b);
	sm_cspa_free(&m);
	diag_free(&d);
	free(p);
}

static void test_mmap_round_trip(void **state)
{
	struct sm_point v[3] = {{1, 0.5f, -2.0f, 0}, {2, 1e6f, 3.25f, 0}, {3, -0.0f, 0, 0}};
	struct sm_mmap m;
	struct diag d;
	struct buf b, b2;

	(void)state;
	buf_init(&b);
	assert_int_equal(sm_mmap_write(SM_X360, &hdr, v, 3, &b), RC_OK);
	assert_int_equal(b.len, SM_MMAP_HDR + 3 * SM_MMAP_REC);
	diag_init(&d);
	assert_int_equal(sm_mmap_parse(b.data, b.len, SM_X360, &m, &d), RC_OK);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.n, 3);
	for (int i = 0; i < 3; i++) {
		assert_true(m.v[i].id == v[i].id);
		assert_true(f32_bits(m.v[i].x) == f32_bits(v[i].x));
		assert_true(f32_bits(m.v[i].y) == f32_bits(v[i].y));
	}
	buf_init(&b2);
	assert_int_equal(sm_mmap_write(SM_PS3, &m.h, m.v, m.n, &b2), RC_OK);
	assert_int_equal(b2.len, b.len);
	assert_memory_equal(b2.data, b.data, b.len);
	sm_mmap_free(&m);
	/* PACK's empty minimap: the header and no entries */
	buf_free(&b2);
	buf_init(&b2);
	assert_int_equal(sm_mmap_write(SM_X360, &hdr, NULL, 0, &b2), RC_OK);
	assert_int_equal(b2.len, SM_MMAP_HDR);
	assert_int_equal(sm_mmap_parse(b2.data, b2.len, SM_X360, &m, &d), RC_OK);
	assert_int_equal(m.n, 0);
	assert_int_equal(d.n, 0);
	sm_mmap_free(&m);
	buf_free(&b2);
	buf_free(&b);
	diag_free(&d);
}

/* ---- hostile ---- */

static void test_wrong_magic(void **state)
{
	size_t len;
	uint8_t *p = cspa_bytes(2, &len);
	struct sm_cmap c;
	struct sm_mmap mm;
	struct diag d;

	(void)state;
	diag_init(&d);
	assert_int_equal(sm_cmap_parse(p, len, SM_PS3, &c, &d), RC_FORMAT);
	assert_int_equal(c.n, 0);
	assert_null(c.v);
	assert_int_equal(sm_mmap_parse(p, len, SM_PS3, &mm, &d), RC_FORMAT);
	assert_int_equal(sm_mmap_parse(NULL, 0, SM_PS3, &mm, &d), RC_FORMAT);
	assert_int_equal(d.n, 0);
	sm_cmap_free(&c);
	sm_mmap_free(&mm);
	diag_free(&d);
	free(p);
}

static void test_lying_counts(void **state)
{
	static const uint32_t claims[] = {4, 5, 1000, 0x7fffffffu, 0xffffffffu};
	struct sm_collection v[N_TILES + 1];
	uint32_t n = cmap_sample(v);
	size_t len, clen;
	uint8_t *p = cmap_bytes(v, n, &len), *c = cspa_bytes(3, &clen);
	struct diag d;

	(void)state;
	for (size_t k = 0; k < sizeof claims / sizeof claims[0]; k++) {
		struct sm_cmap m;
		struct sm_cspa s;

		diag_init(&d);
		st32(p + 0x10, claims[k]);
		st32(c + 0x10, claims[k]);
		assert_int_equal(sm_cmap_parse(p, len, SM_PS3, &m, &d), RC_OK);
		assert_int_equal(m.n, 4);
		assert_int_equal(m.h.count, claims[k]);
		assert_int_equal(lines_with(&d, "CMAP: claims"), claims[k] > 4);
		assert_int_equal(sm_cspa_parse(c, clen, SM_PS3, &s, &d), RC_OK);
		assert_int_equal(s.n, 3);
		assert_int_equal(lines_with(&d, "CSPA: claims"), claims[k] > 3);
		sm_cmap_free(&m);
		sm_cspa_free(&s);
		diag_free(&d);
	}
	/* a count below what the file holds reads only what is claimed, without a line */
	diag_init(&d);
	st32(p + 0x10, 2);
	{
		struct sm_cmap m;

		assert_int_equal(sm_cmap_parse(p, len, SM_PS3, &m, &d), RC_OK);
		assert_int_equal(m.n, 2);
		assert_int_equal(d.n, 0);
		sm_cmap_free(&m);
	}
	diag_free(&d);
	free(p);
	free(c);
}

/* Every prefix of each manifest: <4 bytes is no manifest, a short header is truncated, and
 * after it the whole records the prefix holds. */
static void test_truncated(void **state)
{
	struct sm_collection v[N_TILES + 1];
	struct sm_point pt[4] = {{1, 1, 1, 0}, {2, 2, 2, 0}, {3, 3, 3, 0}, {4, 4, 4, 0}};
	uint32_t n = cmap_sample(v);
	size_t len[3];
	uint8_t *p[3];
	struct buf b;

	(void)state;
	p[0] = cmap_bytes(v, n, &len[0]);
	p[1] = cspa_bytes(4, &len[1]);
	buf_init(&b);
	assert_int_equal(sm_mmap_write(SM_PS3, &hdr, pt, 4, &b), RC_OK);
	p[2] = buf_steal(&b, &len[2]);
	for (int k = 0; k < 3; k++) {
		size_t hl = k == 0 ? SM_CMAP_HDR : SM_CSPA_HDR, rl = k == 0   ? SM_CMAP_REC
								     : k == 1 ? SM_CSPA_REC
									      : SM_MMAP_REC;

		for (size_t l = 0; l <= len[k]; l++) {
			/* a copy of exactly l bytes, so ASan sees any read past it */
			uint8_t *q = malloc(l ? l : 1);
			struct diag d;
			uint32_t got = 0;
			enum rc r, want = l < 4 ? RC_FORMAT : l < hl ? RC_TRUNCATED : RC_OK;

			memcpy(q, p[k], l);
			diag_init(&d);
			if (k == 0) {
				struct sm_cmap m;

				r = sm_cmap_parse(q, l, SM_PS3, &m, &d);
				got = m.n;
				if (r == RC_OK)
					assert_int_equal(sm_cmap_depths(&m, NULL, &d), RC_OK);
				sm_cmap_free(&m);
			} else if (k == 1) {
				struct sm_cspa m;

				r = sm_cspa_parse(q, l, SM_PS3, &m, &d);
				got = m.n;
				sm_cspa_free(&m);
			} else {
				struct sm_mmap m;

				r = sm_mmap_parse(q, l, SM_PS3, &m, &d);
				got = m.n;
				sm_mmap_free(&m);
			}
			assert_int_equal(r, want);
			if (r == RC_OK) {
				assert_int_equal(got, (l - hl) / rl);
				assert_int_equal(d.n, got < 4);
			} else {
				assert_int_equal(got, 0);
				assert_int_equal(d.n, r == RC_TRUNCATED);
			}
			if (r == RC_TRUNCATED)
				assert_int_equal(lines_with(&d, "its header alone is"), 1);
			diag_free(&d);
			free(q);
		}
		free(p[k]);
	}
}

static void test_cspa_bounds(void **state)
{
	size_t len;
	uint8_t *p = cspa_bytes(6, &len);
	uint8_t *c = p + SM_CSPA_HDR;
	struct sm_cspa m;
	struct diag d;

	(void)state;
	/* cell 0 clean; 1: NaN hull min x; 2: +inf geometry max w; 3: -inf hull max y;
	 * 4: hull min z > max z; 5: geometry min x > max x and a NaN in the hull */
	st32(c + 1 * SM_CSPA_REC + 0x10, 0x7fc00000u);
	st32(c + 2 * SM_CSPA_REC + 0x4C, 0x7f800000u);
	st32(c + 3 * SM_CSPA_REC + 0x24, 0xff800000u);
	st32(c + 4 * SM_CSPA_REC + 0x18, f32_bits(1e9f));
	st32(c + 5 * SM_CSPA_REC + 0x30, f32_bits(1e9f));
	st32(c + 5 * SM_CSPA_REC + 0x2C, 0xffc00001u);
	diag_init(&d);
	assert_int_equal(sm_cspa_parse(p, len, SM_X360, &m, &d), RC_OK);
	assert_int_equal(m.n, 6);
	assert_int_equal(m.v[0].flags, 0);
	assert_int_equal(m.v[1].flags, SM_F_NONFIN);
	assert_true(isnan(m.v[1].hull_min[0]));
	assert_int_equal(m.v[2].flags, SM_F_NONFIN);
	assert_int_equal(m.v[3].flags, SM_F_NONFIN);
	assert_int_equal(m.v[4].flags, SM_F_UNORDER);
	assert_int_equal(m.v[5].flags, SM_F_NONFIN | SM_F_UNORDER);
	assert_int_equal(d.n, 6);
	assert_int_equal(lines_with(&d, "CSPA: record 1: the hull box is not finite"), 1);
	assert_int_equal(lines_with(&d, "CSPA: record 2: the geometry box is not finite"), 1);
	assert_int_equal(lines_with(&d, "CSPA: record 3: the hull box is not finite"), 1);
	assert_int_equal(
	    lines_with(&d, "CSPA: record 4: the hull box's minimum z exceeds its maximum"), 1);
	assert_int_equal(
	    lines_with(&d, "CSPA: record 5: the geometry box's minimum x exceeds its maximum"), 1);
	sm_cspa_free(&m);
	diag_free(&d);
	free(p);
}

static void test_cspa_lod(void **state)
{
	size_t len;
	uint8_t *p = cspa_bytes(4, &len);
	struct sm_cspa m;
	struct diag d;

	(void)state;
	p[SM_CSPA_HDR + 8] = 2;
	p[SM_CSPA_HDR + SM_CSPA_REC + 8] = 3;
	p[SM_CSPA_HDR + 2 * SM_CSPA_REC + 8] = 255;
	p[SM_CSPA_HDR + 3 * SM_CSPA_REC + 9] = 0xAA; /* padding: not looked at */
	diag_init(&d);
	assert_int_equal(sm_cspa_parse(p, len, SM_PS3, &m, &d), RC_OK);
	assert_int_equal(m.v[0].flags, 0);
	assert_int_equal(m.v[1].flags, SM_F_LOD);
	assert_int_equal(m.v[1].lod, 3);
	assert_int_equal(m.v[2].flags, SM_F_LOD);
	assert_int_equal(m.v[3].flags, 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(lines_with(&d, "CSPA: record 1: level of detail 3 (0, 1 or 2 expected)"),
			 1);
	assert_int_equal(lines_with(&d, "CSPA: record 2: level of detail 255"), 1);
	sm_cspa_free(&m);
	diag_free(&d);
	free(p);
}

static void test_mmap_nonfinite(void **state)
{
	struct sm_point v[3] = {{1, 0, 0, 0}, {2, NAN, 0, 0}, {3, 0, -INFINITY, 0}};
	struct sm_mmap m;
	struct diag d;
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(sm_mmap_write(SM_PS3, &hdr, v, 3, &b), RC_OK);
	diag_init(&d);
	assert_int_equal(sm_mmap_parse(b.data, b.len, SM_PS3, &m, &d), RC_OK);
	assert_int_equal(m.v[0].flags, 0);
	assert_int_equal(m.v[1].flags, SM_F_NONFIN);
	assert_int_equal(m.v[2].flags, SM_F_NONFIN);
	assert_int_equal(lines_with(&d, "MMAP: record 2: the point is not finite"), 1);
	assert_int_equal(d.n, 2);
	sm_mmap_free(&m);
	diag_free(&d);
	buf_free(&b);
}

static void test_dup_ids(void **state)
{
	struct sm_collection v[N_TILES + 1];
	uint32_t n = cmap_sample(v);
	struct sm_point pt[5] = {
	    {7, 0, 0, 0}, {8, 0, 0, 0}, {7, 0, 0, 0}, {7, 0, 0, 0}, {9, 0, 0, 0}};
	size_t len, clen;
	uint8_t *p, *c = cspa_bytes(3, &clen);
	struct sm_cmap m;
	struct sm_cspa s;
	struct sm_mmap mm;
	struct diag d;
	struct buf b;

	(void)state;
	v[3].id = v[1].id;
	p = cmap_bytes(v, n, &len);
	diag_init(&d);
	assert_int_equal(sm_cmap_parse(p, len, SM_PS3, &m, &d), RC_OK);
	assert_int_equal(m.v[1].flags, 0);
	assert_int_equal(m.v[3].flags, SM_F_DUP_ID);
	assert_int_equal(d.n, 1);
	assert_int_equal(lines_with(&d, "CMAP: record 3: id 0x"), 1);
	assert_int_equal(lines_with(&d, "repeats record 1"), 1);
	sm_cmap_free(&m);
	st64(c + SM_CSPA_HDR + 2 * SM_CSPA_REC, 100);
	assert_int_equal(sm_cspa_parse(c, clen, SM_PS3, &s, &d), RC_OK);
	assert_int_equal(s.v[2].flags, SM_F_DUP_ID);
	assert_int_equal(lines_with(&d, "CSPA: record 2: id 0x0000000000000064 repeats record 0"),
			 1);
	sm_cspa_free(&s);
	buf_init(&b);
	assert_int_equal(sm_mmap_write(SM_PS3, &hdr, pt, 5, &b), RC_OK);
	assert_int_equal(sm_mmap_parse(b.data, b.len, SM_PS3, &mm, &d), RC_OK);
	assert_int_equal(mm.v[0].flags | mm.v[1].flags | mm.v[4].flags, 0);
	assert_int_equal(mm.v[2].flags, SM_F_DUP_ID);
	assert_int_equal(mm.v[3].flags, SM_F_DUP_ID);
	assert_int_equal(lines_with(&d, "MMAP: record 2: id 0x0000000000000007 repeats record 0"),
			 1);
	assert_int_equal(lines_with(&d, "MMAP: record 3: id 0x0000000000000007 repeats record 0"),
			 1);
	assert_int_equal(d.n, 4);
	sm_mmap_free(&mm);
	buf_free(&b);
	diag_free(&d);
	free(p);
	free(c);
}

/* n collections, v[i].parent given by par(i) (an id: i + 1000, or SM_GLOBAL_PARENT). */
static void chain_map(struct sm_cmap *m, uint32_t n)
{
	m->n = n;
	m->v = calloc(n, sizeof *m->v);
	assert_non_null(m->v);
	for (uint32_t i = 0; i < n; i++) {
		m->v[i].id = 1000 + i;
		m->v[i].parent = i == 0 ? SM_GLOBAL_PARENT : 1000 + i - 1;
		snprintf(m->v[i].name, sizeof m->v[i].name, "c%u", i);
	}
}

static void test_parent_cycles(void **state)
{
	enum { LONG = 200000 };
	struct sm_cmap m = {0};
	struct diag d;
	uint32_t cyc;

	(void)state;
	diag_init(&d);
	/* a long chain: depths 0 .. LONG-1, no recursion (a recursive walk would overflow) */
	chain_map(&m, LONG);
	/* reversed order, so walks start at the deepest collection */
	for (uint32_t i = 0; i < LONG / 2; i++) {
		struct sm_collection t = m.v[i];

		m.v[i] = m.v[LONG - 1 - i];
		m.v[LONG - 1 - i] = t;
	}
	assert_int_equal(sm_cmap_depths(&m, &cyc, &d), RC_OK);
	assert_int_equal(cyc, 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(m.v[0].depth, LONG - 1);
	assert_int_equal(m.v[LONG - 1].depth, 0);
	/* close it into one long cycle: every member flagged, one line */
	m.v[LONG - 1].parent = 1000 + LONG - 1;
	assert_int_equal(sm_cmap_depths(&m, &cyc, &d), RC_OK);
	assert_int_equal(cyc, LONG);
	assert_int_equal(d.n, 1);
	assert_int_equal(lines_with(&d, "a parent cycle of 200000 collections"), 1);
	assert_true(m.v[7].depth == SM_DEPTH_CYCLE);
	assert_true(m.v[7].flags & SM_F_CYCLE);
	sm_cmap_free(&m);
	diag_free(&d);

	/* self-parent, a 2-cycle with a collection leading into it, an orphan, a clean pair */
	diag_init(&d);
	chain_map(&m, 7);
	m.v[0].parent = m.v[0].id; /* 0 -> 0 */
	m.v[1].parent = m.v[2].id; /* 1 -> 2 -> 1 */
	m.v[2].parent = m.v[1].id;
	m.v[3].parent = m.v[2].id;	  /* 3 -> the cycle */
	m.v[4].parent = 0x5eedull;	  /* not in the map */
	m.v[5].parent = SM_GLOBAL_PARENT; /* 5 <- 6 */
	m.v[6].parent = m.v[5].id;
	assert_int_equal(sm_cmap_depths(&m, &cyc, &d), RC_OK);
	assert_int_equal(cyc, 4);
	assert_int_equal(d.n, 2);
	assert_int_equal(lines_with(&d, "CMAP: record 0 (c0): a parent cycle of 1 collection,"), 1);
	assert_int_equal(lines_with(&d, "a parent cycle of 2 collections"), 1);
	for (int i = 0; i < 4; i++) {
		assert_true(m.v[i].depth == SM_DEPTH_CYCLE);
		assert_int_equal(m.v[i].flags, SM_F_CYCLE);
	}
	assert_int_equal(m.v[4].depth, 0);
	assert_int_equal(m.v[4].flags, SM_F_ORPHAN);
	assert_int_equal(m.v[5].depth, 0);
	assert_int_equal(m.v[5].flags, 0);
	assert_int_equal(m.v[6].depth, 1);
	assert_int_equal(m.v[6].flags, 0);
	/* fixing the map and walking again clears the flags */
	m.v[0].parent = SM_GLOBAL_PARENT;
	m.v[2].parent = m.v[0].id;
	assert_int_equal(sm_cmap_depths(&m, &cyc, &d), RC_OK);
	assert_int_equal(cyc, 0);
	assert_int_equal(m.v[1].depth, 2);
	assert_int_equal(m.v[3].depth, 2);
	assert_int_equal(m.v[3].flags, 0);
	sm_cmap_free(&m);
	diag_free(&d);
}

/* Repeated ids: parents resolve to the first record with the id. */
static void test_parent_dup(void **state)
{
	struct sm_cmap m = {0};
	struct diag d;
	uint32_t cyc;

	(void)state;
	diag_init(&d);
	chain_map(&m, 3);
	m.v[2].id = m.v[0].id; /* its parent is v[1], whose parent resolves to v[0]: no cycle */
	assert_int_equal(sm_cmap_depths(&m, &cyc, &d), RC_OK);
	assert_int_equal(cyc, 0);
	assert_int_equal(m.v[2].depth, 2);
	sm_cmap_free(&m);
	diag_free(&d);
}

static void test_names(void **state)
{
	static const char *const bad[] = {"../../etc", "a/b", "..", ".", "name\x01", "sp ace"};
	struct sm_collection v[N_TILES + 1], w[1];
	uint32_t n = cmap_sample(v);
	size_t len;
	uint8_t *p, *rec;
	struct sm_cmap m;
	struct diag d;
	struct buf b;

	(void)state;
	p = cmap_bytes(v, n, &len);
	rec = p + SM_CMAP_HDR;
	diag_init(&d);
	/* 64 bytes without a NUL: kept whole, terminated, flagged */
	memset(rec + 0x1C, 'A', SM_NAME_LEN);
	/* an empty name */
	memset(rec + SM_CMAP_REC + 0x1C, 0, SM_NAME_LEN);
	assert_int_equal(sm_cmap_parse(p, len, SM_PS3, &m, &d), RC_OK);
	assert_int_equal(strlen(m.v[0].name), SM_NAME_LEN);
	assert_int_equal(strlen(m.v[0].safe), NAME_COMPONENT_MAX);
	assert_int_equal(m.v[0].flags, SM_F_NAME);
	assert_int_equal(lines_with(&d, "CMAP: record 0: the name has no NUL within 64 bytes"), 1);
	assert_int_equal(m.v[1].flags, SM_F_NAME);
	assert_string_equal(m.v[1].safe, "unnamed");
	assert_int_equal(lines_with(&d, "CMAP: record 1: the name is empty"), 1);
	assert_int_equal(m.v[2].flags | m.v[3].flags, 0);
	assert_int_equal(d.n, 2);
	sm_cmap_free(&m);
	diag_free(&d);
	memcpy(rec + SM_CMAP_REC + 0x1C, v[1].name, strlen(v[1].name));
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		diag_init(&d);
		memset(rec + 0x1C, 0, SM_NAME_LEN);
		memcpy(rec + 0x1C, bad[k], strlen(bad[k]));
		assert_int_equal(sm_cmap_parse(p, len, SM_PS3, &m, &d), RC_OK);
		assert_string_equal(m.v[0].name, bad[k]);
		assert_int_equal(m.v[0].flags, SM_F_NAME);
		assert_null(strchr(m.v[0].safe, '/'));
		assert_true(m.v[0].safe[0] != '.');
		assert_int_equal(lines_with(&d, "CMAP: record 0: name \""), 1);
		assert_int_equal(lines_with(&d, "is not a safe file name (shown as "), 1);
		assert_int_equal(lines_with(&d, "\x01"), 0); /* escaped in the line */
		assert_int_equal(d.n, 1);
		sm_cmap_free(&m);
		diag_free(&d);
	}
	/* the writer refuses a name that would fill the field */
	memset(w, 0, sizeof w);
	memset(w[0].name, 'B', SM_NAME_LEN);
	buf_init(&b);
	assert_int_equal(sm_cmap_write(SM_PS3, &hdr, w, 1, &b), RC_INVAL);
	buf_free(&b);
	w[0].name[SM_NAME_LEN - 1] = '\0';
	buf_init(&b);
	assert_int_equal(sm_cmap_write(SM_PS3, &hdr, w, 1, &b), RC_OK);
	assert_int_equal(b.data[SM_CMAP_HDR + 0x1C + SM_NAME_LEN - 1], 0);
	buf_free(&b);
	free(p);
}

static void test_stamps(void **state)
{
	struct sm_collection v[N_TILES + 1];
	uint32_t n = cmap_sample(v);
	size_t len, clen;
	uint8_t *p = cmap_bytes(v, n, &len), *c = cspa_bytes(1, &clen);
	uint8_t sfil[16] = "SFIL", other[16] = "RW4x";
	uint64_t st = 0;
	struct sm_stamp s[4];
	struct diag d;

	(void)state;
	st64(sfil + 8, 0x12345678u);
	assert_true(sm_stamp_peek(p, len, SM_X360, &st));
	assert_true(st == 0x12345678u);
	assert_true(sm_stamp_peek(sfil, 16, SM_PS3, &st));
	assert_true(st == 0x12345678u);
	assert_false(sm_stamp_peek(sfil, 15, SM_PS3, &st));
	assert_false(sm_stamp_peek(other, 16, SM_PS3, &st));
	s[0] = (struct sm_stamp){"DIST_A_Pres.xsm", 0x12345678u};
	s[1] = (struct sm_stamp){"DIST_A_Pres.xss", 0x12345678u};
	s[2] = (struct sm_stamp){"DIST_A_Pres.xmm", 0x12345679u};
	s[3] = (struct sm_stamp){"cPres_Global.xsf", 0x12345678u};
	diag_init(&d);
	assert_true(sm_stamps_agree(s, 2, &d));
	assert_true(sm_stamps_agree(s, 1, &d));
	assert_true(sm_stamps_agree(s, 0, &d));
	assert_int_equal(d.n, 0);
	assert_false(sm_stamps_agree(s, 4, &d));
	assert_int_equal(d.n, 1);
	assert_string_equal(d.msg[0], "stamp: DIST_A_Pres.xmm has 0x0000000012345679, "
				      "DIST_A_Pres.xsm has 0x0000000012345678");
	diag_free(&d);
	free(p);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fnv1_64),	    cmocka_unit_test(test_platform_rows),
	    cmocka_unit_test(test_cmap_round_trip), cmocka_unit_test(test_cspa_round_trip),
	    cmocka_unit_test(test_mmap_round_trip), cmocka_unit_test(test_wrong_magic),
	    cmocka_unit_test(test_lying_counts),    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_cspa_bounds),	    cmocka_unit_test(test_cspa_lod),
	    cmocka_unit_test(test_mmap_nonfinite),  cmocka_unit_test(test_dup_ids),
	    cmocka_unit_test(test_parent_cycles),   cmocka_unit_test(test_parent_dup),
	    cmocka_unit_test(test_names),	    cmocka_unit_test(test_stamps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
