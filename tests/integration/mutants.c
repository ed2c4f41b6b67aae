/*
 * mutants FILE DIR [EVERY]: write the generated hostile set of FILE (tests/fuzz/mutate.c) into
 * DIR as m00000.<ext>, m00001.<ext>..., keeping every EVERY-th mutant (default 1), so an
 * integration test can mount them as one folder. Prints how many were written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mutate.h"

struct out {
	const char *dir, *ext;
	unsigned long every, seen, written;
	int err;
};

static void one(void *ctx, const char *what, const uint8_t *p, size_t n)
{
	struct out *o = ctx;
	char path[4096];
	FILE *f;

	(void)what;
	if (o->seen++ % o->every)
		return;
	snprintf(path, sizeof path, "%s/m%05lu.%s", o->dir, o->written, o->ext);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n)
		o->err = 1;
	if (f && fclose(f))
		o->err = 1;
	o->written++;
}

int main(int argc, char **argv)
{
	struct out o = {0};
	const char *dot;
	uint8_t *p;
	long n;
	FILE *f;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: mutants FILE DIR [EVERY]\n");
		return 2;
	}
	o.dir = argv[2];
	o.every = argc == 4 ? strtoul(argv[3], NULL, 10) : 1;
	o.every = o.every ? o.every : 1;
	dot = strrchr(argv[1], '.');
	o.ext = dot ? dot + 1 : "bin";
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(argv[1]);
		return 1;
	}
	p = malloc((size_t)n + 1);
	if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
		perror(argv[1]);
		return 1;
	}
	fclose(f);
	fuzz_mutants(p, (size_t)n, 0x91f, one, &o);
	free(p);
	printf("%lu\n", o.written);
	return o.err;
}
