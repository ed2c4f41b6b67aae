/*
 * readall: read every file of a list to its end through one reused buffer, the benchmark's
 * reader for trees of many files (bench/run). `cat` costs an exec per 2,000 files and a fresh
 * buffer per file; this costs open + read until 0 + close, so a pass over 80,000 small files
 * times the file system, not process start-up.
 * usage: readall DIR LIST      LIST: paths relative to DIR, one a line ("-" = stdin)
 * prints "files N bytes B errors E" on stdout; exit 1 when a file could not be read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_BYTES (1u << 20)

/* Read fd to its end into buf; the bytes read, or -1. */
static long long drain(int fd, char *buf)
{
	long long total = 0;

	for (;;) {
		ssize_t n = read(fd, buf, BUF_BYTES);

		if (n == 0)
			return total;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		total += n;
	}
}

int main(int argc, char **argv)
{
	unsigned long long files = 0, bytes = 0, errors = 0;
	char *buf, *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *list;
	int dfd;

	if (argc != 3) {
		fprintf(stderr, "usage: readall DIR LIST\n");
		return 2;
	}
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	list = strcmp(argv[2], "-") ? fopen(argv[2], "r") : stdin;
	buf = malloc(BUF_BYTES);
	if (dfd < 0 || !list || !buf) {
		perror("readall");
		return 2;
	}
	while ((len = getline(&line, &cap, list)) > 0) {
		long long got;
		int fd;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue;
		fd = openat(dfd, line, O_RDONLY | O_CLOEXEC);
		got = fd < 0 ? -1 : drain(fd, buf);
		if (fd >= 0)
			close(fd);
		if (got < 0) {
			if (errors++ < 5)
				fprintf(stderr, "readall: %s: %s\n", line, strerror(errno));
			continue;
		}
		files++;
		bytes += (unsigned long long)got;
	}
	printf("files %llu bytes %llu errors %llu\n", files, bytes, errors);
	free(line);
	free(buf);
	return errors ? 1 : 0;
}
