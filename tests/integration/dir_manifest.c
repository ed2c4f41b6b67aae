/*
 * dir_manifest: the manifest of a real directory (a psgfs mount) in exactly the format of
 * `psgfs-tool manifest`, in one process: every entry sorted, 'path<TAB>size<TAB>sha256' for
 * files ('EIO' when a read fails), 'path/<TAB>-<TAB>-' for directories, 'path<TAB>-><TAB>target'
 * for links. Used to show that the mount serves what the tool's tree renders.
 * usage: dir_manifest DIR        exit 0, 1 when a directory cannot be listed, 2 usage
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "psgfs/base/sha256.h"

struct rows {
	char **line;
	size_t n, cap;
};

static void add(struct rows *r, const char *fmt, ...)
{
	va_list ap;
	char *line;

	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		exit(1);
	va_end(ap);
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->line = realloc(r->line, r->cap * sizeof *r->line);
		if (!r->line)
			exit(1);
	}
	r->line[r->n++] = line;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* SHA-256 of the file at p as hex; false when it cannot be read whole. */
static bool hash_file(const char *p, off_t size, char hex[SHA256_HEX_LEN + 1])
{
	static char buf[1 << 16];
	struct sha256 s;
	off_t total = 0;
	ssize_t got;
	int fd = open(p, O_RDONLY);

	if (fd < 0)
		return false;
	sha256_init(&s);
	while ((got = read(fd, buf, sizeof buf)) > 0) {
		sha256_update(&s, buf, (size_t)got);
		total += got;
	}
	close(fd);
	sha256_hex(&s, hex);
	return got == 0 && total == size;
}

static int walk(struct rows *r, const char *root, const char *rel)
{
	char dir[8192];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	snprintf(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel);
	d = opendir(dir);
	if (!d) {
		add(r, "%s/\t-\tEIO\n", rel);
		return 1;
	}
	while ((e = readdir(d))) {
		char p[8192], rp[8192], hex[SHA256_HEX_LEN + 1], target[4096];
		struct stat st;
		ssize_t n;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(rp, sizeof rp, "%s%s%s", rel, *rel ? "/" : "", e->d_name) >=
			(int)sizeof rp ||
		    snprintf(p, sizeof p, "%s/%s", root, rp) >= (int)sizeof p) {
			add(r, "%s\t?\tname too long\n", e->d_name);
			rc = 1;
		} else if (lstat(p, &st) != 0) {
			add(r, "%s\t?\tEIO\n", rp);
		} else if (S_ISDIR(st.st_mode)) {
			add(r, "%s/\t-\t-\n", rp);
			rc |= walk(r, root, rp);
		} else if (S_ISLNK(st.st_mode)) {
			n = readlink(p, target, sizeof target - 1);
			target[n < 0 ? 0 : n] = 0;
			add(r, "%s\t->\t%s\n", rp, n < 0 ? "EIO" : target);
		} else {
			bool ok = hash_file(p, st.st_size, hex);

			add(r, "%s\t%lld\t%s\n", rp, (long long)st.st_size, ok ? hex : "EIO");
		}
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	struct rows r = {0};
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: dir_manifest DIR\n");
		return 2;
	}
	rc = walk(&r, argv[1], "");
	qsort(r.line, r.n, sizeof *r.line, cmp);
	for (size_t i = 0; i < r.n; i++) {
		fputs(r.line[i], stdout);
		free(r.line[i]);
	}
	free(r.line);
	return rc;
}
