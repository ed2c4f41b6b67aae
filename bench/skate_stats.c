/*
 * Time of skate_mesh_stats_build over every mesh of a model PSG (the file is read once
 * first so it is in the page cache), best of N runs. Not a test; see bench/README.md.
 * Build: cc -O2 -Iinclude bench/skate_stats.c build/src/libpsgfs.a -lm -lpng -o skate_stats
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "psgfs/formats/arena.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/base/source.h"

static double clock_s(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct stat stt;
	struct src s;
	struct arena a;
	struct skate_scene *sc;
	double best = 1e9, best_cpu = 1e9;
	int fd, runs = argc > 2 ? atoi(argv[2]) : 10;
	char buf[1 << 16];

	if (argc < 2 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &stt) != 0)
		return 2;
	while (read(fd, buf, sizeof buf) > 0)
		;
	src_init_fd(&s, &fd, (uint64_t)stt.st_size);
	if (arena_open(&s, &a, NULL) != RC_OK || skate_scene_load(&s, &a, NULL, &sc, NULL) != RC_OK)
		return 1;
	for (int r = 0; r < runs; r++) {
		double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		uint64_t v = 0, tri = 0, w = 0;

		for (size_t m = 0; m < sc->n_meshes; m++) {
			struct skate_mesh_stats *st;

			if (skate_mesh_stats_build(&s, &a, sc, m, &st, NULL) != RC_OK)
				continue;
			v += st->n_verts;
			tri += st->n_valid_tri;
			w += st->n_psk_weights;
			skate_mesh_stats_free(st);
		}
		t0 = clock_s(CLOCK_MONOTONIC) - t0;
		c0 = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (t0 < best)
			best = t0;
		if (c0 < best_cpu)
			best_cpu = c0;
		if (r == 0)
			printf("%s: %lld bytes, %zu meshes, %llu vertices, %llu triangles, %llu "
			       "weights\n",
			       argv[1], (long long)stt.st_size, sc->n_meshes, (unsigned long long)v,
			       (unsigned long long)tri, (unsigned long long)w);
	}
	printf("stats of every mesh: best of %d: %.1f ms wall, %.1f ms cpu\n", runs, best * 1e3,
	       best_cpu * 1e3);
	skate_scene_free(sc);
	arena_free(&a);
	close(fd);
	return 0;
}
