/*
 * mkdistrict: write the test district of tests/unit/district_fixture.h into a folder, until
 * psgfs-gen district writes complete ones.
 * usage: mkdistrict [--x360] [--broken N] OUTDIR DIST_NAME
 *   --broken N: the df_broken bits to set (each trips one lint rule).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/district_fixture.h"

int main(int argc, char **argv)
{
	bool x360 = false;
	unsigned broken = 0;
	struct df_set s;
	int i = 1;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--x360"))
			x360 = true;
		else if (!strcmp(argv[i], "--broken") && i + 1 < argc)
			broken = (unsigned)strtoul(argv[++i], NULL, 0);
		else
			break;
	}
	if (argc - i != 2) {
		fprintf(stderr, "usage: mkdistrict [--x360] [--broken N] OUTDIR DIST_NAME\n");
		return 2;
	}
	if (df_district(&s, argv[i + 1], x360, broken) != RC_OK) {
		fprintf(stderr, "mkdistrict: cannot generate\n");
		return 1;
	}
	for (size_t k = 0; k < s.n; k++) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof path, "%s/%s", argv[i], s.f[k].name);
		f = fopen(path, "wb");
		if (!f || fwrite(s.f[k].b.data, 1, s.f[k].b.len, f) != s.f[k].b.len ||
		    fclose(f) != 0) {
			fprintf(stderr, "mkdistrict: %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	df_free(&s);
	return 0;
}
