/* Byte reader, output buffer, float text and name sanitizing. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <cmocka.h>

#include "sanitizer.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/emit.h"
#include "psgfs/base/names.h"
#include "psgfs/gen/prng.h"
#include "psgfs/base/sha256.h"
#include "psgfs/base/source.h"

static void test_rng_ok(void **state)
{
	(void)state;
	assert_true(span_ok(10, 0, 10));
	assert_true(span_ok(10, 10, 0));
	assert_false(span_ok(10, 11, 0));
	assert_false(span_ok(10, 5, 6));
	assert_false(span_ok(10, 1, UINT64_MAX));
	assert_false(span_ok(UINT64_MAX, UINT64_MAX - 1, 2));
	uint64_t o;
	assert_false(mul_ok(UINT64_MAX / 2 + 1, 2, &o));
	assert_true(mul_ok(1u << 31, 1u << 31, &o));
	assert_int_equal(o, 1ull << 62);
	assert_false(add_ok(UINT64_MAX, 1, &o));
}

static void test_reader_endian_and_sticky(void **state)
{
	(void)state;
	const uint8_t d[] = {0x12, 0x34, 0x56, 0x78, 0x3f, 0x80, 0x00, 0x00, 0xaa};
	struct br r;

	br_init(&r, d, sizeof d, true);
	assert_int_equal(br_u16(&r), 0x1234);
	assert_int_equal(br_u16(&r), 0x5678);
	assert_true(br_f32(&r) == 1.0f);
	assert_false(r.err);
	assert_int_equal(br_u32(&r), 0); /* only 1 byte left */
	assert_true(r.err);
	assert_int_equal(br_u8(&r), 0); /* sticky */
	br_init(&r, d, sizeof d, false);
	assert_int_equal(br_u32(&r), 0x78563412);
	assert_false(br_seek(&r, 10));
	assert_true(r.err);
	br_init(&r, d, sizeof d, false);
	assert_null(br_take(&r, 10));
	assert_true(r.err);
	br_init(&r, d, sizeof d, false);
	assert_false(br_skip(&r, SIZE_MAX));
}

static void test_buf_count_matches(void **state)
{
	(void)state;
	struct buf a, c;

	buf_init(&a);
	buf_init_count(&c);
	for (int i = 0; i < 1000; i++) {
		buf_printf(&a, "%d\t%s\n", i, "x");
		buf_printf(&c, "%d\t%s\n", i, "x");
		buf_u32be(&a, (uint32_t)i);
		buf_u32be(&c, (uint32_t)i);
	}
	char big[600];
	memset(big, 'q', sizeof big - 1);
	big[sizeof big - 1] = 0;
	buf_printf(&a, "%s", big);
	buf_printf(&c, "%s", big);
	assert_int_equal(a.len, c.len);
	assert_null(c.data);
	assert_false(a.oom);
	assert_memory_equal(a.data + a.len - 599, big, 599);
	buf_set_u32be(&a, 0, 0xdeadbeef);
	assert_int_equal(ld_u32be(a.data), 0xdeadbeef);
	buf_free(&a);
}

/* The definition fmt_f32 must match: the shortest of %.6g .. %.9g that reads back exactly. */
static void ref_f32(char out[32], float f)
{
	if (isnan(f)) {
		strcpy(out, signbit(f) ? "-nan" : "nan");
		return;
	}
	if (isinf(f)) {
		strcpy(out, f < 0 ? "-inf" : "inf");
		return;
	}
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(out, 32, "%.*g", prec, (double)f);
		if (strtof(out, NULL) == f && signbit(strtof(out, NULL)) == signbit(f))
			return;
	}
}

static void test_float_roundtrip(void **state)
{
	(void)state;
	struct prng r;
	char s[32];

	prng_seed(&r, 1);
	for (int i = 0; i < 200000; i++) {
		uint32_t bits = (uint32_t)prng_next(&r);
		float f = f32_from_bits(bits);

		char want[32];

		fmt_f32(s, f);
		if (isnan(f))
			assert_true(isnan(strtof(s, NULL)));
		else
			assert_int_equal(f32_bits(strtof(s, NULL)), bits);
		ref_f32(want, f);
		assert_string_equal(s, want); /* same text as the printf definition */
	}
	fmt_f32(s, 0.1f);
	assert_string_equal(s, "0.1");
	fmt_f32(s, -0.0f);
	assert_string_equal(s, "-0");
	fmt_f32(s, 1.0f / 3.0f);
	assert_string_equal(s, "0.33333334");
}

/* One float against the printf definition; its text also reads back to it. */
static void same_f32(uint32_t bits)
{
	float f = f32_from_bits(bits);
	char got[32], want[32];

	fmt_f32(got, f);
	ref_f32(want, f);
	if (strcmp(got, want) != 0)
		fail_msg("0x%08x: fmt_f32 \"%s\", printf \"%s\"", bits, got, want);
}

/*
 * fmt_f32's integer arithmetic against printf: every exponent with both signs, its edge
 * mantissas and a run of random ones, the floats around each power of ten (where the digit
 * count changes) and the short decimals meshes are made of. The random mantissas and the
 * decimals are split between the builds as the costly sets are (tests/README.md, "Keeping the
 * suite fast"): one in four under AddressSanitizer, where printf is dearer, the rest plain.
 */
#if PSGFS_ASAN
#define F32_ASAN_SHARE 1
#else
#define F32_ASAN_SHARE 0
#endif
static void test_f32_vs_printf(void **state)
{
	static const uint32_t edges[] = {0,	   1,	     2,	       3,	 0x3FFFFF,
					 0x400000, 0x400001, 0x7FFFFD, 0x7FFFFE, 0x7FFFFF};
	struct prng r;

	(void)state;
	prng_seed(&r, 28);
	for (uint32_t sign = 0; sign < 2; sign++)
		for (uint32_t bexp = 0; bexp < 255; bexp++) {
			uint32_t hi = sign << 31 | bexp << 23;

			for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
				same_f32(hi | edges[i]);
			for (int i = 0; i < 2000; i++) {
				uint32_t frac = (uint32_t)prng_next(&r) & 0x7FFFFF;

				if ((i % 4 == 0) == F32_ASAN_SHARE)
					same_f32(hi | frac);
			}
		}
	for (int p = -45; p <= 38; p++) {
		char t[16];
		uint32_t near;

		snprintf(t, sizeof t, "1e%d", p);
		near = f32_bits(strtof(t, NULL));
		for (uint32_t d = near < 32 ? 32 - near : 0; d < 64; d++) {
			same_f32(near + d - 32);
			same_f32((near + d - 32) | 0x80000000u);
		}
	}
	for (int n = 0; n < 200000; n++)
		if ((n % 4 == 0) == F32_ASAN_SHARE) {
			same_f32(f32_bits((float)n / 1000.0f));
			same_f32(f32_bits((float)n * 0.1f));
		}
	same_f32(0x80000000u);
	same_f32(0x7F800000u);
	same_f32(0xFF800000u);
	same_f32(0x7FC00000u);
	same_f32(0xFFC00000u);
}

static void test_tsv_name_escapes(void **state)
{
	(void)state;
	const uint8_t raw[8] = {'a', '\t', 'b', '\n', 0x01, '\\', 'z', 'y'};
	struct buf b;

	buf_init(&b);
	buf_tsv_name(&b, raw, sizeof raw);
	buf_putc(&b, 0);
	assert_string_equal((char *)b.data, "a\\tb\\n\\x01\\\\zy");
	buf_free(&b);
}

static void test_name_component(void **state)
{
	(void)state;
	char out[NAME_COMPONENT_MAX + 1];
	uint8_t long_name[300];

	name_component("Bone01      ", 64, out);
	assert_string_equal(out, "Bone01");
	name_component("../etc/passwd", 64, out);
	assert_string_equal(out, "_._etc_passwd");
	name_component("..", 64, out);
	assert_string_equal(out, "_.");
	name_component("", 64, out);
	assert_string_equal(out, "unnamed");
	name_component("   ", 64, out);
	assert_string_equal(out, "unnamed");
	name_component("a\x01\xff/b", 64, out);
	assert_string_equal(out, "a___b");
	memset(long_name, 'A', sizeof long_name);
	name_component(long_name, sizeof long_name, out); /* no NUL at all */
	assert_int_equal(strlen(out), NAME_COMPONENT_MAX);
}

/* A long line is not cut mid-reason: its start and its end stay, around an ellipsis. */
static void test_diag_long_line(void **state)
{
	struct diag d;
	char name[3000];
	const char *m;

	(void)state;
	memset(name, 'a', sizeof name - 1);
	name[sizeof name - 1] = 0;
	name[502] = (char)0xc3, name[503] = (char)0xa9; /* an é across the first cut */
	diag_init(&d);
	diag_add(&d, "entry 7 (%s): cannot decode: inflates past its declared size", name);
	m = d.msg[0];
	assert_true(strlen(m) <= DIAG_LINE_MAX + 16);
	assert_memory_equal(m, "entry 7 (aaa", 12);
	assert_non_null(strstr(m, "\xe2\x80\xa6"));
	assert_non_null(strstr(m, "): cannot decode: inflates past its declared size"));
	assert_null(strstr(m, "\\x")); /* no UTF-8 character cut into escaped bytes */
	diag_add(&d, "short: %s", "kept whole");
	assert_string_equal(d.msg[1], "short: kept whole");
	diag_free(&d);
}

static void test_diag_bounded(void **state)
{
	(void)state;
	struct diag d;

	diag_init(&d);
	for (int i = 0; i < DIAG_MAX + 5; i++)
		diag_add(&d, "problem %d\nwith newline", i);
	assert_int_equal(d.n, DIAG_MAX);
	assert_int_equal(diag_count(&d), DIAG_MAX + 5);
	assert_null(strchr(d.msg[0], '\n'));
	assert_string_equal(d.msg[0], "problem 0\\nwith newline"); /* escaped, not lost */
	diag_free(&d);
	diag_add(NULL, "ignored");
}

static void test_src_mem(void **state)
{
	(void)state;
	const uint8_t d[4] = {1, 2, 3, 4};
	struct src s;
	struct src_mem m;
	uint8_t out[4], *dup;

	src_init_mem(&s, &m, d, sizeof d);
	assert_int_equal(src_read(&s, 1, out, 3), RC_OK);
	assert_int_equal(out[2], 4);
	assert_int_equal(src_read(&s, 2, out, 3), RC_TRUNCATED);
	assert_int_equal(src_read(&s, UINT64_MAX, out, 1), RC_TRUNCATED);
	assert_int_equal(src_dup(&s, 0, 4, &dup), RC_OK);
	assert_memory_equal(dup, d, 4);
	free(dup);
	assert_ptr_equal(xcalloc_n(SIZE_MAX / 2, 4), NULL);
}

/* Doubling from `first`, p kept while there is room, and a refused overflow leaves p alone. */
static void test_xgrow(void **state)
{
	size_t cap = 0, n;
	uint32_t *v = NULL, *g;

	(void)state;
	for (n = 0; n < 100; n++) {
		g = xgrow_n(v, n, &cap, sizeof *v, 4);
		assert_non_null(g);
		assert_true(n < cap);
		if (n < 4)
			assert_int_equal(cap, 4);
		v = g;
		v[n] = (uint32_t)n;
	}
	assert_int_equal(cap, 128);
	for (n = 0; n < 100; n++)
		assert_int_equal(v[n], n);
	g = xgrow_n(v, 99, &cap, sizeof *v, 4);
	assert_ptr_equal(g, v);
	cap = SIZE_MAX / 2 + 1;
	assert_null(xgrow_n(v, cap, &cap, sizeof *v, 4));
	assert_int_equal(cap, SIZE_MAX / 2 + 1);
	free(v);
}

/* xroom_n: the same array while it is long enough, a new one (nothing kept) when not, and on
 * overflow nothing, the old one freed. */
static void test_xroom(void **state)
{
	size_t cap = 0;
	uint32_t *v = xroom_n(NULL, 0, &cap, sizeof *v), *w;

	(void)state;
	assert_non_null(v);
	assert_int_equal(cap, 1);
	v = xroom_n(v, 100, &cap, sizeof *v);
	assert_non_null(v);
	assert_int_equal(cap, 100);
	v[99] = 7;
	w = xroom_n(v, 50, &cap, sizeof *v);
	assert_ptr_equal(w, v);
	assert_int_equal(cap, 100);
	assert_null(xroom_n(w, SIZE_MAX / 2, &cap, sizeof *v));
	assert_int_equal(cap, 0);
}

static void sha_of(const void *p, size_t n, size_t step, char hex[SHA256_HEX_LEN + 1])
{
	struct sha256 s;

	sha256_init(&s);
	for (size_t off = 0; off < n; off += step)
		sha256_update(&s, (const uint8_t *)p + off, n - off < step ? n - off : step);
	sha256_hex(&s, hex);
}

/* FIPS 180-4 examples (NIST's SHA256.pdf) fed whole and in odd pieces, and a length on each
 * side of the 56-byte padding limit. */
static void test_sha256(void **state)
{
	static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char hex[SHA256_HEX_LEN + 1], *million = malloc(1000000);

	(void)state;
	sha_of("", 0, 1, hex);
	assert_string_equal(hex,
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha_of("abc", 3, 1, hex);
	assert_string_equal(hex,
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	for (size_t step = 1; step <= 64; step += 7) {
		sha_of(two_blocks, strlen(two_blocks), step, hex);
		assert_string_equal(
		    hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	}
	assert_non_null(million);
	memset(million, 'a', 1000000);
	sha_of(million, 1000000, 4093, hex);
	assert_string_equal(hex,
			    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	sha_of(million, 55, 55, hex);
	assert_string_equal(hex,
			    "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	sha_of(million, 56, 56, hex);
	assert_string_equal(hex,
			    "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
	free(million);
}

/* fmt_u64 and buf_u64_row write what printf's %llu does, in a window and counting alike. */
static void test_u64_text(void **state)
{
	static const uint64_t vals[] = {
	    0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u, 10000000000000000000u, UINT64_MAX};
	struct buf b, c;
	char want[64], got[21];
	uint64_t row[12];

	(void)state;
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		size_t n = fmt_u64(got, vals[i]);

		snprintf(want, sizeof want, "%llu", (unsigned long long)vals[i]);
		assert_int_equal(n, strlen(want));
		assert_memory_equal(got, want, n);
	}
	/* rows of every length up to past what one row buffer holds */
	for (size_t n = 1; n <= 12; n++) {
		buf_init(&b);
		buf_init_count(&c);
		for (size_t i = 0; i < n; i++)
			row[i] = UINT64_MAX - i;
		buf_u64_row(&b, row, n);
		buf_u64_row(&c, row, n);
		{
			struct buf w;

			buf_init(&w);
			for (size_t i = 0; i < n; i++)
				buf_printf(&w, "%llu%c", (unsigned long long)row[i],
					   i + 1 < n ? '\t' : '\n');
			assert_int_equal(b.len, w.len);
			assert_memory_equal(b.data, w.data, w.len);
			assert_int_equal(c.len, w.len);
			buf_free(&w);
		}
		buf_free(&b);
		buf_free(&c);
	}
}

/* buf_printf writes what snprintf does, stored and counted alike. */
static void same_text(const char *want, int n, struct buf *b, struct buf *c)
{
	assert_true(n >= 0);
	assert_int_equal(b->len, (size_t)n);
	assert_memory_equal(b->data, want, (size_t)n);
	assert_int_equal(c->len, (size_t)n);
	assert_false(b->oom);
	buf_free(b);
	buf_free(c);
}

#define SAME(...)                                                                                  \
	do {                                                                                       \
		char w_[32768];                                                                    \
		struct buf b_, c_;                                                                 \
		int n_ = snprintf(w_, sizeof w_, __VA_ARGS__);                                     \
                                                                                                   \
		buf_init(&b_);                                                                     \
		buf_init_count(&c_);                                                               \
		buf_printf(&b_, __VA_ARGS__);                                                      \
		buf_printf(&c_, __VA_ARGS__);                                                      \
		same_text(w_, n_, &b_, &c_);                                                       \
	} while (0)

/* Every flag, width and length modifier of the integer conversions over each type's edges. */
#define INT_CASES(lenmod, stype, utype, smin, smax, umax)                                          \
	do {                                                                                       \
		static const char *const convs_[] = {"d", "i", "u", "x", "X"};                     \
		const stype sv_[] = {0, 1, -1, 9, -10, 127, -128, smax, smin};                     \
		const utype uv_[] = {0, 1, 9, 10, 15, 16, 255, 4096, umax, umax / 2};              \
                                                                                                   \
		for (size_t ci = 0; ci < 5; ci++)                                                  \
			for (size_t fi = 0; fi < sizeof flags / sizeof flags[0]; fi++)             \
				for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) { \
					char f_[32];                                               \
                                                                                                   \
					snprintf(f_, sizeof f_, "<%%%s%s" lenmod "%s>", flags[fi], \
						 widths[wi], convs_[ci]);                          \
					for (size_t vi = 0; vi < 9 && ci < 2; vi++)                \
						SAME(f_, sv_[vi]);                                 \
					for (size_t vi = 0; vi < 10 && ci >= 2; vi++)              \
						SAME(f_, uv_[vi]);                                 \
				}                                                                  \
	} while (0)

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
static void test_printf_fast(void **state)
{
	static const char *const flags[] = {"", "-", "0", "-0", "0-", "00"};
	static const char *const widths[] = {"", "1", "2", "5", "8", "16", "21", "25", "4096"};
	/* not a constant, so that the compiler lets it through */
	const char *volatile null_s = NULL;
	char long_s[700];

	(void)state;
	INT_CASES("", int, unsigned, INT_MIN, INT_MAX, UINT_MAX);
	INT_CASES("hh", int, unsigned, -129, 300, 511u);
	INT_CASES("h", int, unsigned, -32769, 70000, 131071u);
	INT_CASES("l", long, unsigned long, LONG_MIN, LONG_MAX, ULONG_MAX);
	INT_CASES("ll", long long, unsigned long long, LLONG_MIN, LLONG_MAX, ULLONG_MAX);
	INT_CASES("z", ptrdiff_t, size_t, PTRDIFF_MIN, PTRDIFF_MAX, SIZE_MAX);
	INT_CASES("j", intmax_t, uintmax_t, INTMAX_MIN, INTMAX_MAX, UINTMAX_MAX);
	INT_CASES("t", ptrdiff_t, size_t, PTRDIFF_MIN, PTRDIFF_MAX, SIZE_MAX);
	/* '*' widths, negative ones left-justify */
	for (int w = -30; w <= 30; w += 3) {
		SAME("[%*d|%0*u|%-*x|%*s|%*c]", w, -42, w, 42u, w, 0xabcu, w, "str", w, 'q');
		SAME("[%.*s|%*.*s]", w, "precision", w, w / 3, "both");
	}
	/* strings and characters: widths, precisions, both sides */
	SAME("%s%s|%5s|%-5s|%.2s|%.0s|%.s|%8.3s|%-8.3s|%.20s", "", "a", "ab", "ab", "abc", "abc",
	     "abc", "abcdef", "abcdef", "abc");
	SAME("%c%c%3c%-3c|", 'a', 0x1ff, 'b', 'c');
	SAME("100%% %d%%%s", 5, "x");
	memset(long_s, 'y', sizeof long_s - 1);
	long_s[sizeof long_s - 1] = 0;
	SAME("%s|%300d|%s|%-300s|", long_s, 7, long_s + 400, "z");
	SAME("%s", long_s);
	/* what the fast path leaves to stdio, also after a long staged prefix */
	SAME("%s %g %.17g %-*.17g|", long_s, 1.5, 0.1, 30, 2.0);
	SAME("%+d % d %#x %#o %o %.3d %5.3u %p %s", 1, 2, 255u, 8u, 8u, 4, 5u, (void *)0x10,
	     null_s);
#if !PSGFS_ASAN /* whose printf interceptor warns of it */
	SAME("%5%|%-%");
#endif
	SAME("%1$d %1$d", 3);
	SAME("%9999d|%*d|%*d", 1, -5000, 2, 5000, 3);
	SAME("%e %E %f %G %a", 1e10, 2.5, 3.25, 1e-30, 1.0);
	SAME("%ls %lc", L"wide", (wint_t)L'w');
	SAME("%.*s|%.*s|%.*s|", -1, "neg", 2, null_s, 6, null_s);
	SAME("%s", "");
	SAME("plain text, no conversion");
}
#pragma GCC diagnostic pop

/* buf_f32_fields writes the same bytes as a tab and buf_f32txt per float, for any run length
 * (rows longer than its staging buffer too) and any bit pattern (nan, inf, subnormals). */
static void test_f32_fields(void **state)
{
	struct prng r;
	float v[40];

	(void)state;
	prng_seed(&r, 11);
	for (unsigned round = 0; round < 20000; round++) {
		size_t n = prng_below(&r, 41);
		struct buf a, b;

		for (size_t i = 0; i < n; i++) {
			uint32_t bits = (uint32_t)prng_next(&r);

			if (round % 2)
				v[i] = prng_float(&r, -1000.0f, 1000.0f);
			else
				memcpy(&v[i], &bits, sizeof bits);
		}
		buf_init(&a);
		buf_init(&b);
		buf_puts(&a, "x");
		buf_puts(&b, "x");
		for (size_t i = 0; i < n; i++) {
			buf_putc(&a, '\t');
			buf_f32txt(&a, v[i]);
		}
		buf_f32_fields(&b, v, n);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		buf_free(&a);
		buf_free(&b);
	}
}

/* Counting checkpoints: exactly one per multiple of the spacing (shifted by the part's phase)
 * that lies inside a non-empty item, naming that item and its start, so a window starting at
 * a piece boundary renders at most the one item it falls in before the bytes it wants. */
static void test_emit_checkpoints(void **state)
{
	static const size_t every[] = {1, 7, 64, 4096};
	struct prng r;

	(void)state;
	prng_seed(&r, 7);
	for (unsigned round = 0; round < 400; round++) {
		size_t ev = every[round % 4], n = 1 + prng_below(&r, 3000), k = 0;
		uint64_t phase = prng_next(&r) % (3 * ev + 1), start = 0;
		uint32_t span = round % 3 == 0 ? 3 * (uint32_t)ev : 40;
		struct emit e;

		emit_init_count_phase(&e, ev, phase);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t len = prng_below(&r, 5) == 0 ? 0 : prng_below(&r, span + 1);

			buf_zero(&e.b, (size_t)len);
			assert_true(emit_item(&e));
			/* first multiple (in file bytes) at or after this item's start */
			uint64_t m = (start + phase + ev - 1) / ev * ev - phase;

			if (m < start + len && start != 0) {
				assert_true(k < e.n_cp);
				assert_int_equal(e.cp[k].item, i);
				assert_int_equal(e.cp[k].off, start);
				k++;
			}
			start += len;
		}
		assert_int_equal(k, e.n_cp);
		emit_free(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rng_ok),
	    cmocka_unit_test(test_reader_endian_and_sticky),
	    cmocka_unit_test(test_buf_count_matches),
	    cmocka_unit_test(test_float_roundtrip),
	    cmocka_unit_test(test_f32_vs_printf),
	    cmocka_unit_test(test_tsv_name_escapes),
	    cmocka_unit_test(test_name_component),
	    cmocka_unit_test(test_diag_bounded),
	    cmocka_unit_test(test_diag_long_line),
	    cmocka_unit_test(test_src_mem),
	    cmocka_unit_test(test_sha256),
	    cmocka_unit_test(test_xgrow),
	    cmocka_unit_test(test_xroom),
	    cmocka_unit_test(test_u64_text),
	    cmocka_unit_test(test_printf_fast),
	    cmocka_unit_test(test_emit_checkpoints),
	    cmocka_unit_test(test_f32_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
