/*
 * arc_decode: the archive decoders' own throughput, the reference for reading every entry
 * through the mount (bench/run, 10.): every entry of ARCHIVE unpacked piece by piece with
 * the same calls the tree makes (arc_open, arc_index_build, arc_piece), no FUSE, no cache.
 * With -m the archive is read into memory first (not timed) and decoded from there: the
 * decoders' own cost, the floor of reading every entry through the mount (bench/archives).
 * usage: arc_decode [-m] ARCHIVE   prints: entries N, bytes B, ms T, failed F (tab-separated)
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "psgfs/formats/archive.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	uint64_t bytes = 0, failed = 0;
	struct stat st;
	struct arc a;
	struct src s;
	struct src_mem sm;
	struct diag d;
	uint8_t *buf, *whole = NULL;
	const char *path = argv[argc - 1];
	bool mem = argc == 3 && !strcmp(argv[1], "-m");
	double t0;
	int fd;

	if (argc != 2 && !mem) {
		fprintf(stderr, "usage: arc_decode [-m] ARCHIVE\n");
		return 2;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0)
		return 1;
	buf = malloc(ARC_PIECE_MAX);
	if (!buf)
		return 1;
	if (mem) {
		whole = malloc(st.st_size ? (size_t)st.st_size : 1);
		for (off_t at = 0; whole && at < st.st_size;) {
			ssize_t n = pread(fd, whole + at, (size_t)(st.st_size - at), at);

			if (n <= 0)
				return 1;
			at += n;
		}
		if (!whole)
			return 1;
		src_init_mem(&s, &sm, whole, (size_t)st.st_size);
	} else {
		src_init_fd(&s, &fd, (uint64_t)st.st_size);
	}
	diag_init(&d);
	t0 = now_ms();
	if (arc_open(&s, NULL, &a, &d) != RC_OK) {
		fprintf(stderr, "arc_decode: %s: not an archive\n", path);
		return 1;
	}
	for (uint32_t i = 0; i < a.n; i++) {
		struct arc_index *ix;

		if (arc_index_build(&s, &a, i, &ix, &d) != RC_OK) {
			failed++;
			continue;
		}
		for (uint64_t k = 0; k < arc_piece_count(ix); k++) {
			size_t got = 0;

			if (arc_piece(&s, ix, k, buf, &got, NULL) != RC_OK)
				failed++;
			bytes += got;
		}
		arc_index_free(ix);
	}
	printf("entries\t%u\nbytes\t%llu\nms\t%.1f\nfailed\t%llu\n", a.n, (unsigned long long)bytes,
	       now_ms() - t0, (unsigned long long)failed);
	arc_free(&a);
	diag_free(&d);
	free(buf);
	free(whole);
	close(fd);
	return 0;
}
