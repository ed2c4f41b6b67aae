/*
 * psgfs-tool pack-stream's pure parts (src/tools/pack_stream.c): the asset id of a file name.
 * The packing itself is tests/integration/pack_stream.sh (a generated district round trip,
 * refusals); the writer under it is tests/unit/test_gen_district.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../src/tools/pack_stream.h"

static void test_asset_id(void **state)
{
	(void)state;
	uint64_t id;
	bool x360;

	assert_true(pack_stream_asset_id("0x5d2a6b1c00180002.psg", &id, &x360));
	assert_true(id == 0x5d2a6b1c00180002ull && !x360);
	assert_true(pack_stream_asset_id("0X00000000DEADBEEF.RX2", &id, &x360));
	assert_true(id == 0xdeadbeefull && x360);
	assert_true(pack_stream_asset_id("ffffffffffffffff.psg", &id, &x360));
	assert_true(id == UINT64_MAX);
	assert_true(pack_stream_asset_id("1.psg", &id, &x360) && id == 1);
	assert_false(pack_stream_asset_id("10000000000000000.psg", &id, &x360)); /* 17 digits */
	assert_false(pack_stream_asset_id("0x.psg", &id, &x360));
	assert_false(pack_stream_asset_id(".psg", &id, &x360));
	assert_false(pack_stream_asset_id("0x12g4.psg", &id, &x360));
	assert_false(pack_stream_asset_id("0x1234.bin", &id, &x360));
	assert_false(pack_stream_asset_id("0x1234", &id, &x360));
	assert_false(pack_stream_asset_id("info.txt", &id, &x360));
	assert_false(pack_stream_asset_id("0x12 4.psg", &id, &x360));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_asset_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
