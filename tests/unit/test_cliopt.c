/* Option values: the size syntax, the bounded text reader and whole-file replacement. */
#include <errno.h>
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

#include "psgfs/base/cliopt.h"

static char why[256];

static enum rc size_of(const char *s, uint64_t *v)
{
	why[0] = 0;
	return cliopt_size(s, v, why, sizeof why);
}

static void test_size_good(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
	    {"0", 0},
	    {"1", 1},
	    {"0064", 64},
	    {"64k", 64ull << 10},
	    {"64K", 64ull << 10},
	    {"64M", 64ull << 20},
	    {"64mb", 64ull << 20},
	    {"3G", 3ull << 30},
	    {"7B", 7},
	    {"18446744073709551615", UINT64_MAX},
	    {"17179869183G", 17179869183ull << 30},
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		assert_int_equal(size_of(ok[i].s, &v), RC_OK);
		assert_true(v == ok[i].v);
	}
}

static void test_size_bad(void **state)
{
	/* strtoull takes every one of the first six (and negates the signed ones). */
	static const char *const malformed[] = {"-1",	 "-5M",	 " 64M", "+64M", "\t1G",
						"0x10",	 "",	 "M",	 "64 M", "64MM",
						"64MBB", "1.5G", "64T",	 "64M ", "1e9"};
	static const char *const huge[] = {"18446744073709551616", "17179869184G",
					   "99999999999999999999999999", "18014398509481984K"};
	uint64_t v = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
		assert_int_equal(size_of(malformed[i], &v), RC_INVAL);
		assert_non_null(strstr(why, "not a size"));
	}
	for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
		assert_int_equal(size_of(huge[i], &v), RC_BOUNDS);
		assert_string_equal(why, "too large");
	}
	assert_true(v == 12345); /* untouched on failure */
}

static void test_cache_size(void **state)
{
	size_t v = 0;

	(void)state;
	assert_int_equal(cliopt_cache_size("1M", &v, why, sizeof why), RC_OK);
	assert_true(v == CLIOPT_CACHE_MIN);
	assert_int_equal(cliopt_cache_size("1048575", &v, why, sizeof why), RC_INVAL);
	assert_string_equal(why, "below the minimum 1M");
	assert_int_equal(cliopt_cache_size("0", &v, why, sizeof why), RC_INVAL);
	assert_int_equal(cliopt_cache_size("-1", &v, why, sizeof why), RC_INVAL);
	assert_int_equal(cliopt_cache_size("20000000000G", &v, why, sizeof why), RC_BOUNDS);
	assert_true(v == CLIOPT_CACHE_MIN);
}

static void test_max_assets(void **state)
{
	unsigned v = 7;

	(void)state;
	assert_int_equal(cliopt_max_assets("1", &v, why, sizeof why), RC_OK);
	assert_int_equal(v, 1);
	assert_int_equal(cliopt_max_assets("65536", &v, why, sizeof why), RC_OK);
	assert_int_equal(v, CLIOPT_ASSETS_MAX);
	/* A count is decimal digits: no size suffix (the message says so; issue 21 item 10). */
	for (unsigned i = 0; i < 5; i++) {
		static const char *const bad[] = {"1K", "64K", "128b", "0x10", " 12"};

		assert_int_equal(cliopt_max_assets(bad[i], &v, why, sizeof why), RC_INVAL);
		assert_string_equal(why, "not a count (decimal digits, e.g. 128)");
	}
	assert_int_equal(v, CLIOPT_ASSETS_MAX);
	assert_int_equal(cliopt_max_assets("0", &v, why, sizeof why), RC_INVAL);
	assert_string_equal(why, "allowed: 1 to 65536");
	assert_int_equal(cliopt_max_assets("65537", &v, why, sizeof why), RC_INVAL);
	assert_int_equal(cliopt_max_assets("4294967297", &v, why, sizeof why), RC_INVAL);
	assert_int_equal(cliopt_max_assets("-1", &v, why, sizeof why), RC_INVAL);
	assert_string_equal(why, "not a count (decimal digits, e.g. 128)");
	assert_int_equal(cliopt_max_assets("99999999999999999999", &v, why, sizeof why), RC_INVAL);
	assert_string_equal(why, "allowed: 1 to 65536");
	assert_int_equal(cliopt_max_assets("", &v, why, sizeof why), RC_INVAL);
	assert_int_equal(v, CLIOPT_ASSETS_MAX); /* untouched on failure */
}

/* A scratch directory per test, removed with everything in it. */
static char dir[64];

static int dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/psgfs-cliopt.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int dir_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name)
{
	static char p[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

static void put(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static enum rc read_text(const char *path, size_t cap, char **out)
{
	why[0] = 0;
	*out = NULL;
	return cliopt_read_text(path, cap, out, why, sizeof why);
}

static void test_read_text(void **state)
{
	char *t;

	(void)state;
	put(at("h.tsv"), "a\tb\n", 4);
	assert_int_equal(read_text(at("h.tsv"), 4, &t), RC_OK);
	assert_string_equal(t, "a\tb\n");
	free(t);
	assert_int_equal(read_text(at("h.tsv"), 3, &t), RC_INVAL);
	assert_non_null(strstr(why, "larger than 3 bytes"));
	assert_null(t);
	put(at("empty"), "", 0);
	assert_int_equal(read_text(at("empty"), 16, &t), RC_OK);
	assert_string_equal(t, "");
	free(t);
	assert_int_equal(symlink("h.tsv", at("link")), 0);
	assert_int_equal(read_text(at("link"), 16, &t), RC_OK); /* links to a file are fine */
	free(t);
	put(at("nul"), "a\0b\n", 4);
	assert_int_equal(read_text(at("nul"), 16, &t), RC_INVAL);
	assert_non_null(strstr(why, "NUL"));
	assert_null(t);
}

static void test_read_text_refuses(void **state)
{
	char *t;

	(void)state;
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(read_text(at("fifo"), 16, &t), RC_INVAL); /* returns: never waits */
	assert_string_equal(why, "not a regular file (a FIFO)");
	assert_int_equal(symlink("fifo", at("fifolink")), 0);
	assert_int_equal(read_text(at("fifolink"), 16, &t), RC_INVAL);
	assert_int_equal(read_text(dir, 16, &t), RC_INVAL);
	assert_string_equal(why, "not a regular file (a directory)");
	assert_int_equal(read_text("/dev/zero", 16, &t), RC_INVAL);
	assert_string_equal(why, "not a regular file (a character device)");
	assert_int_equal(read_text(at("missing"), 16, &t), RC_IO);
	assert_non_null(strstr(why, "No such file"));
	assert_null(t);
}

static void fill_hello(FILE *f, void *ctx)
{
	fputs(ctx, f);
}

static size_t count_entries(void)
{
	char cmd[128];
	FILE *p;
	size_t n = 0;
	int c;

	snprintf(cmd, sizeof cmd, "ls -A '%s'", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((c = fgetc(p)) != EOF)
		n += c == '\n';
	pclose(p);
	return n;
}

static void slurp(const char *path, char *out, size_t n)
{
	FILE *f = fopen(path, "rb");
	size_t got;

	assert_non_null(f);
	got = fread(out, 1, n - 1, f);
	out[got] = 0;
	fclose(f);
}

static void test_replace_file(void **state)
{
	char got[64];
	struct stat st;

	(void)state;
	/* A symbolic link at the path is replaced by a regular file; its target is untouched. */
	put(at("target"), "precious\n", 9);
	assert_int_equal(symlink("target", at("stats")), 0);
	assert_int_equal(cliopt_replace_check(at("stats"), why, sizeof why), RC_OK);
	assert_int_equal(cliopt_replace_file(at("stats"), fill_hello, "one\n"), RC_OK);
	assert_int_equal(lstat(at("stats"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	slurp(at("stats"), got, sizeof got);
	assert_string_equal(got, "one\n");
	slurp(at("target"), got, sizeof got);
	assert_string_equal(got, "precious\n");
	/* Replaced again as a whole; no temporary file is left behind, by the check either. */
	assert_int_equal(cliopt_replace_file(at("stats"), fill_hello, "two\n"), RC_OK);
	slurp(at("stats"), got, sizeof got);
	assert_string_equal(got, "two\n");
	assert_int_equal(count_entries(), 2);
	/* A missing file is created. */
	assert_int_equal(cliopt_replace_check(at("new"), why, sizeof why), RC_OK);
	assert_int_equal(count_entries(), 2);
	assert_int_equal(cliopt_replace_file(at("new"), fill_hello, "x"), RC_OK);
	assert_int_equal(count_entries(), 3);
}

static void test_replace_refuses(void **state)
{
	(void)state;
	assert_int_equal(mkdir(at("sub"), 0755), 0);
	assert_int_equal(cliopt_replace_check(at("sub"), why, sizeof why), RC_INVAL);
	assert_string_equal(why, "is a directory");
	assert_int_equal(cliopt_replace_file(at("sub"), fill_hello, "x"), RC_IO);
	assert_int_equal(cliopt_replace_check(at("sub/"), why, sizeof why), RC_INVAL);
	assert_int_equal(cliopt_replace_check(at("nodir/stats"), why, sizeof why), RC_INVAL);
	assert_non_null(strstr(why, "No such file"));
	assert_int_equal(cliopt_replace_check("/dev/null", why, sizeof why), RC_INVAL);
	assert_string_equal(why, "not a regular file (a character device)");
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(cliopt_replace_check(at("fifo"), why, sizeof why), RC_INVAL);
	assert_int_equal(cliopt_replace_file(at("fifo"), fill_hello, "x"), RC_IO);
	/* Nothing left behind by the refusals: sub and fifo only. */
	assert_int_equal(count_entries(), 2);
	if (geteuid() != 0) {
		assert_int_equal(chmod(at("sub"), 0555), 0);
		assert_int_equal(cliopt_replace_check(at("sub/stats"), why, sizeof why), RC_INVAL);
		assert_non_null(strstr(why, "Permission denied"));
		chmod(at("sub"), 0755);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_size_good),
	    cmocka_unit_test(test_size_bad),
	    cmocka_unit_test(test_cache_size),
	    cmocka_unit_test(test_max_assets),
	    cmocka_unit_test_setup_teardown(test_read_text, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_read_text_refuses, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_replace_file, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(test_replace_refuses, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
