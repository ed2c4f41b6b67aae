/*
 * The generator's LZX streams (gen_lzx_stored: uncompressed LZX blocks in XMem frames,
 * docs/archives.md "LZX") decoded by an independent, well-kept LZX decoder: libmspack's, reached
 * through its CAB reader. Each XMem frame's payload becomes one CFDATA block of an LZX folder
 * with the same window (2^17), which is the same bitstream split the same way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <mspack.h>

#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/prng.h"

static void le16(struct buf *b, unsigned v)
{
	buf_u16le(b, (uint16_t)v);
}

static void le32(struct buf *b, uint32_t v)
{
	buf_u32le(b, v);
}

/* The cabinet: header, one LZX folder, one file, one CFDATA block per XMem frame. */
static void cab_of(const struct buf *lzx, size_t n, struct buf *cab)
{
	static const char name[] = "a.bin";
	size_t at = 0, frames = 0, data = 0, data_off = 36 + 8 + 16 + sizeof name;

	while (at < lzx->len) {
		size_t packed = (size_t)lzx->data[at + 3] << 8 | lzx->data[at + 4];

		assert_int_equal(lzx->data[at], 0xFF);
		data += 8 + packed;
		at += 5 + packed;
		frames++;
	}
	assert_int_equal(at, lzx->len);
	buf_put(cab, "MSCF", 4);
	le32(cab, 0);
	le32(cab, (uint32_t)(data_off + data));
	le32(cab, 0);
	le32(cab, 36 + 8); /* the first CFFILE */
	le32(cab, 0);
	buf_u8(cab, 3); /* version 1.3 */
	buf_u8(cab, 1);
	le16(cab, 1); /* folders */
	le16(cab, 1); /* files */
	le16(cab, 0);
	le16(cab, 0);
	le16(cab, 0);
	le32(cab, (uint32_t)data_off);
	le16(cab, (unsigned)frames);
	le16(cab, 0x1103); /* LZX, window 2^17 */
	le32(cab, (uint32_t)n);
	le32(cab, 0);
	le16(cab, 0);
	le16(cab, 0x21);
	le16(cab, 0);
	le16(cab, 0x20);
	buf_put(cab, name, sizeof name);
	for (at = 0; at < lzx->len;) {
		unsigned un = (unsigned)lzx->data[at + 1] << 8 | lzx->data[at + 2];
		unsigned packed = (unsigned)lzx->data[at + 3] << 8 | lzx->data[at + 4];

		le32(cab, 0); /* no checksum */
		le16(cab, packed);
		le16(cab, un);
		buf_put(cab, lzx->data + at + 5, packed);
		at += 5 + packed;
	}
}

static void test_lzx_through_libmspack(void **state)
{
	static const size_t sizes[] = {1, 2, 100, 32767, 32768, 32769, 65536, 100001, 300000};
	char dir[] = "/tmp/psgfs-lzx-XXXXXX", cab_path[64], out_path[64];
	uint8_t *in = malloc(300000), *out = malloc(300001);
	struct prng r;

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	assert_non_null(mkdtemp(dir));
	snprintf(cab_path, sizeof cab_path, "%s/t.cab", dir);
	snprintf(out_path, sizeof out_path, "%s/t.out", dir);
	prng_seed(&r, 17);
	for (size_t i = 0; i < 300000; i++)
		in[i] = (uint8_t)(i % 3 ? prng_next(&r) : i >> 7);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		struct mscab_decompressor *cd = mspack_create_cab_decompressor(NULL);
		struct mscabd_cabinet *c;
		struct buf lzx, cab;
		FILE *f;
		size_t got;

		assert_non_null(cd);
		buf_init(&lzx);
		buf_init(&cab);
		gen_lzx_stored(in, sizes[k], &lzx);
		cab_of(&lzx, sizes[k], &cab);
		f = fopen(cab_path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(cab.data, 1, cab.len, f), cab.len);
		assert_int_equal(fclose(f), 0);
		c = cd->open(cd, cab_path);
		assert_non_null(c);
		assert_int_equal(cd->extract(cd, c->files, out_path), MSPACK_ERR_OK);
		cd->close(cd, c);
		mspack_destroy_cab_decompressor(cd);
		f = fopen(out_path, "rb");
		assert_non_null(f);
		got = fread(out, 1, 300001, f);
		fclose(f);
		assert_int_equal(got, sizes[k]);
		assert_memory_equal(out, in, sizes[k]);
		buf_free(&lzx);
		buf_free(&cab);
	}
	unlink(cab_path);
	unlink(out_path);
	rmdir(dir);
	free(in);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lzx_through_libmspack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
