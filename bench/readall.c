/*
 * readall: read every file of a list to its end through one reused buffer, the benchmark's
 * reader for trees of many files (bench/run). `cat` costs an exec per 2,000 files and a fresh
 * buffer per file; this costs open + read until 0 + close, so a pass over 80,000 small files
 * times the file system, not process start-up.
 * usage: readall DIR LIST      LIST: paths relative to DIR, one a line ("-" = stdin)
 * prints "files N bytes B errors E" on stdout; exit 1 when a file could not be read.
 *        readall -m DIR LIST   reads nothing: prints "missing P", the pages of those files not
 * in the page cache (mmap + mincore), so a pass over them now would send a FUSE file system no
 * READ when P is 0 whatever other requests (OPEN, RELEASE) its opens cost.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* Pages of fd not in the page cache (-1 when it cannot be mapped). */
static long long missing_pages(int fd, unsigned char *vec, size_t vec_len)
{
	long page = sysconf(_SC_PAGESIZE);
	long long missing = 0;
	struct stat st;
	size_t pages;
	void *p;

	if (fstat(fd, &st) != 0)
		return -1;
	if (st.st_size == 0)
		return 0;
	pages = (size_t)((st.st_size + page - 1) / page);
	if (pages > vec_len)
		return -1;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	if (mincore(p, (size_t)st.st_size, vec) != 0)
		missing = -1;
	for (size_t i = 0; missing >= 0 && i < pages; i++)
		missing += !(vec[i] & 1);
	munmap(p, (size_t)st.st_size);
	return missing;
}

/* readall -m: the pages of the listed files not resident. */
static int count_missing(int dfd, FILE *list)
{
	size_t vec_len = 1u << 20, cap = 0; /* files up to 4 GiB */
	unsigned char *vec = malloc(vec_len);
	unsigned long long missing = 0, errors = 0;
	char *line = NULL;
	ssize_t len;

	if (!vec)
		return 2;
	while ((len = getline(&line, &cap, list)) > 0) {
		long long m;
		int fd;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue;
		fd = openat(dfd, line, O_RDONLY | O_CLOEXEC);
		m = fd < 0 ? -1 : missing_pages(fd, vec, vec_len);
		if (fd >= 0)
			close(fd);
		if (m < 0)
			errors++;
		else
			missing += (unsigned long long)m;
	}
	printf("missing %llu errors %llu\n", missing, errors);
	free(line);
	free(vec);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long long files = 0, bytes = 0, errors = 0;
	char *buf, *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *list;
	int dfd;

	bool resident = argc == 4 && !strcmp(argv[1], "-m");

	if (resident) {
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: readall [-m] DIR LIST\n");
		return 2;
	}
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	list = strcmp(argv[2], "-") ? fopen(argv[2], "r") : stdin;
	buf = malloc(BUF_BYTES);
	if (dfd < 0 || !list || !buf) {
		perror("readall");
		return 2;
	}
	if (resident)
		return count_missing(dfd, list);
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
