/*
 * psgfs-tool pack's rules (src/tools/pack.c): which paths an archive may hold, the declared
 * order, hash clashes at the record's width; and the writer pieces pack relies on: the EB v3
 * hash of a path, a BIGF entry of the root folder named without a leading "/", chunked
 * entries using only the chunk methods both public readers share, 16-aligned chunk data.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/hash.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/archive.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_psg.h"

#include "../../src/tools/pack.h"

static bool ok(const char *p)
{
	char why[128];

	return pack_path_ok(p, why, sizeof why);
}

static void test_path_rules(void **state)
{
	char long_name[300], long_folder[300];

	(void)state;
	assert_true(ok("a"));
	assert_true(ok("data/content/x.big"));
	assert_true(ok("a/.hidden/..b/c.."));
	assert_false(ok(""));
	assert_false(ok("/etc/passwd"));
	assert_false(ok("../x"));
	assert_false(ok("a/../x"));
	assert_false(ok("a/.."));
	assert_false(ok("./a"));
	assert_false(ok("a//b"));
	assert_false(ok("a/"));
	assert_false(ok("a\\b"));
	assert_false(ok("a\nb"));
	assert_false(ok("a\x01"));
	assert_false(ok("a\x7f"));
	memset(long_name, 'n', 252);
	long_name[252] = 0;
	assert_true(ok(long_name));
	long_name[252] = 'n', long_name[253] = 0;
	assert_false(ok(long_name));
	memset(long_folder, 'f', 253);
	strcpy(long_folder + 253, "/x");
	assert_true(ok(long_folder));
	memmove(long_folder + 1, long_folder, strlen(long_folder) + 1);
	assert_false(ok(long_folder));
}

static void test_path_order(void **state)
{
	(void)state;
	/* bytewise: '/' (0x2F) sorts before letters and after '-' and '.' */
	assert_true(pack_path_cmp("a/b", "a-b") > 0);
	assert_true(pack_path_cmp("a/b", "ab") < 0);
	assert_true(pack_path_cmp("B", "a") < 0);
	assert_true(pack_path_cmp("\xc3\xa9", "z") > 0);
}

static void test_hash_clash(void **state)
{
	uint64_t h[4] = {0x1111111100000001ull, 0x2222222200000000ull, 0x3333333300000000ull,
			 0x1111111100000002ull};
	size_t other = 0;

	(void)state;
	assert_int_equal(pack_hash_clash(h, 4, false, &other), 0);
	assert_int_equal(other, 3);
	assert_int_equal(pack_hash_clash(h, 4, true, &other), -1);
	assert_int_equal(pack_hash_clash(h, 0, false, &other), -1);
	/* two real names whose upper hash words collide (the integration test packs them) */
	assert_int_equal(gen_big_hash("", "f517928") >> 32, gen_big_hash("", "f810748") >> 32);
	assert_int_not_equal(gen_big_hash("", "f517928"), gen_big_hash("", "f810748"));
}

static void test_hash_is_written(void **state)
{
	const uint8_t d[3] = {1, 2, 3};
	struct gen_big_entry e = {.folder = "data/x", .name = "y.bin", .data = d, .len = 3};
	struct gen_big_opts o = {.wide = true};
	struct buf b;
	struct gen_sink s;
	uint64_t h = gen_big_hash("data/x", "y.bin");

	(void)state;
	buf_init(&b);
	gen_sink_buf(&s, &b);
	assert_int_equal(gen_big_write(&o, &e, 1, &s, NULL, NULL), RC_OK);
	assert_int_equal(h, fnv1a_64("data/x/y.bin", 12));
	for (int k = 0; k < 8; k++)
		assert_int_equal(b.data[0x30 + 12 + k], (uint8_t)(h >> (56 - 8 * k)));
	buf_free(&b);
}

static void test_bigf_root_name(void **state)
{
	const uint8_t d[5] = "hello";
	struct gen_big_entry e[2] = {{.folder = "", .name = "top.txt", .data = d, .len = 5},
				     {.folder = "a", .name = "b", .data = d, .len = 5}};
	struct buf b;
	struct src s;
	struct src_mem m;
	struct arc a;
	struct diag dg;

	(void)state;
	buf_init(&b);
	assert_int_equal(gen_bigf_write(false, e, 2, &b), RC_OK);
	src_init_mem(&s, &m, b.data, b.len);
	diag_init(&dg);
	assert_int_equal(arc_open(&s, NULL, &a, &dg), RC_OK);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.paths + a.e[0].path, "top.txt");
	assert_string_equal(a.paths + a.e[1].path, "a/b");
	assert_int_equal(dg.n, 0);
	arc_free(&a);
	diag_free(&dg);
	buf_free(&b);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* What pack writes for --compress chunked: RW4 numbering, so 2 RefPack and 4 stored only. */
static void test_chunked_methods(void **state)
{
	size_t n = 200000;
	uint8_t *d = malloc(n);
	struct gen_big_entry e = {.folder = "f",
				  .name = "c",
				  .data = d,
				  .len = n,
				  .method = GB_CHUNK_REFPACK,
				  .style = GB_STYLE_RW4,
				  .chunk_align = 16};
	struct gen_big_placed pl;
	struct buf b;
	struct gen_sink s;
	uint64_t cur = 28;

	(void)state;
	assert_non_null(d);
	for (size_t i = 0; i < n; i++) /* first chunk compresses, the rest is noise */
		d[i] = i < 65536 ? (uint8_t)(i % 7) : (uint8_t)((i * 2654435761u) >> 13);
	buf_init(&b);
	gen_sink_buf(&s, &b);
	assert_int_equal(gen_big_write(NULL, &e, 1, &s, &pl, NULL), RC_OK);
	assert_memory_equal(b.data + pl.off, "chunkref", 8);
	assert_int_equal(be32(b.data + pl.off + 24), 16);
	for (uint32_t k = 0; k < be32(b.data + pl.off + 20); k++) {
		uint64_t data = (cur + 8 + 15) / 16 * 16;
		uint32_t method = be32(b.data + pl.off + data - 4);

		assert_true(method == 2 || method == 4);
		assert_int_equal((pl.off + data) % 16, 0);
		if (k == 0)
			assert_int_equal(method, 2);
		cur = data + be32(b.data + pl.off + data - 8);
	}
	buf_free(&b);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_rules),	   cmocka_unit_test(test_path_order),
	    cmocka_unit_test(test_hash_clash),	   cmocka_unit_test(test_hash_is_written),
	    cmocka_unit_test(test_bigf_root_name), cmocka_unit_test(test_chunked_methods),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
