/* Option values: sizes, small text files, whole-file replacement (see cliopt.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/cliopt.h"

static enum rc fail(enum rc r, char *why, size_t whylen, const char *msg, const char *arg)
{
	snprintf(why, whylen, msg, arg);
	return r;
}

static uint64_t size_unit(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 1ull << 10;
	case 'm':
	case 'M':
		return 1ull << 20;
	case 'g':
	case 'G':
		return 1ull << 30;
	default:
		return 1;
	}
}

/* Digits by hand rather than strtoull, which takes blanks, a sign (and negates), and 0x. */
enum rc cliopt_size(const char *s, uint64_t *out, char *why, size_t whylen)
{
	static const char bad[] = "not a size (digits with an optional K, M or G suffix, e.g. 64M)";
	const char *p = s;
	uint64_t v = 0, unit;

	if (*p < '0' || *p > '9')
		return fail(RC_INVAL, why, whylen, "%s", bad);
	for (; *p >= '0' && *p <= '9'; p++) {
		if (!mul_ok(v, 10, &v) || !add_ok(v, (uint64_t)(*p - '0'), &v))
			return fail(RC_BOUNDS, why, whylen, "%s", "too large");
	}
	unit = size_unit(*p);
	if (unit != 1)
		p++;
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p)
		return fail(RC_INVAL, why, whylen, "%s", bad);
	if (!mul_ok(v, unit, out))
		return fail(RC_BOUNDS, why, whylen, "%s", "too large");
	return RC_OK;
}

enum rc cliopt_cache_size(const char *s, size_t *out, char *why, size_t whylen)
{
	uint64_t v;
	enum rc r = cliopt_size(s, &v, why, whylen);

	if (r != RC_OK)
		return r;
	if (v < CLIOPT_CACHE_MIN)
		return fail(RC_INVAL, why, whylen, "%s", "below the minimum 1M");
	if (v > SIZE_MAX)
		return fail(RC_BOUNDS, why, whylen, "%s", "too large");
	*out = (size_t)v;
	return RC_OK;
}

enum rc cliopt_max_assets(const char *s, unsigned *out, char *why, size_t whylen)
{
	const char *p = s;
	uint64_t v = 0;

	/* A count: decimal digits and nothing else (no size suffix, sign, blank or base). */
	if (*p < '0' || *p > '9')
		return fail(RC_INVAL, why, whylen, "%s", "not a count (decimal digits, e.g. 128)");
	for (; *p >= '0' && *p <= '9'; p++)
		if (v <= CLIOPT_ASSETS_MAX)
			v = v * 10 + (uint64_t)(*p - '0');
	if (*p)
		return fail(RC_INVAL, why, whylen, "%s", "not a count (decimal digits, e.g. 128)");
	if (v < 1 || v > CLIOPT_ASSETS_MAX)
		return fail(RC_INVAL, why, whylen, "%s", "allowed: 1 to 65536");
	*out = (unsigned)v;
	return RC_OK;
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

static enum rc not_regular(mode_t m, char *why, size_t whylen)
{
	const char *k = file_kind(m);

	if (k[0] == 'n')
		return fail(RC_INVAL, why, whylen, "%s", k);
	return fail(RC_INVAL, why, whylen, "not a regular file (%s)", k);
}

static enum rc errno_fail(enum rc r, const char *what, char *why, size_t whylen)
{
	snprintf(why, whylen, "%s: %s", what, strerror(errno));
	return r;
}

static enum rc too_large(size_t cap, char *why, size_t whylen)
{
	snprintf(why, whylen, "larger than %zu bytes", cap);
	return RC_INVAL;
}

/* All of fd, NUL-terminated; more than cap bytes (the file grew after the fstat) is refused.
 * The buffer starts at the size fstat gave and grows to at most cap + 2 bytes. */
static enum rc read_all(int fd, size_t hint, size_t cap, char **out, size_t *len, char *why,
			size_t whylen)
{
	size_t n = 0, room = (hint < cap ? hint : cap) + 2;
	char *b = malloc(room);

	if (!b)
		return fail(RC_NOMEM, why, whylen, "%s", "out of memory");
	for (;;) {
		ssize_t got;

		if (n + 1 == room) {
			char *nb;

			room = room > cap / 2 ? cap + 2 : 2 * room;
			nb = realloc(b, room);
			if (!nb) {
				free(b);
				return fail(RC_NOMEM, why, whylen, "%s", "out of memory");
			}
			b = nb;
		}
		got = read(fd, b + n, room - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(b);
			return errno_fail(RC_IO, "cannot read", why, whylen);
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > cap) {
			free(b);
			return too_large(cap, why, whylen);
		}
	}
	b[n] = 0;
	*out = b;
	*len = n;
	return RC_OK;
}

enum rc cliopt_read_text(const char *path, size_t cap, char **out, char *why, size_t whylen)
{
	struct stat st;
	size_t len = 0;
	enum rc r;
	int fd;

	/* stat first so a device is never opened (opening some has effects); fstat after the
	 * open decides, in case the path changed in between. O_NONBLOCK: a FIFO that slips
	 * through opens without waiting for a writer, then fails the fstat check. */
	if (stat(path, &st) != 0)
		return errno_fail(RC_IO, "cannot open", why, whylen);
	if (!S_ISREG(st.st_mode))
		return not_regular(st.st_mode, why, whylen);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno_fail(RC_IO, "cannot open", why, whylen);
	if (fstat(fd, &st) != 0) {
		r = errno_fail(RC_IO, "cannot stat", why, whylen);
	} else if (!S_ISREG(st.st_mode)) {
		r = not_regular(st.st_mode, why, whylen);
	} else if ((uint64_t)st.st_size > cap) {
		r = too_large(cap, why, whylen);
	} else {
		r = read_all(fd, (size_t)st.st_size, cap, out, &len, why, whylen);
	}
	close(fd);
	if (r == RC_OK && memchr(*out, 0, len)) {
		free(*out);
		*out = NULL;
		r = fail(RC_INVAL, why, whylen, "%s", "contains a NUL byte (not a text file)");
	}
	return r;
}

/* A new file beside path: "path.PID.N.tmp", created exclusively, never through a link. */
static int create_beside(const char *path, char **tmp)
{
	static atomic_uint seq;
	size_t n = strlen(path) + 48;
	char *name = malloc(n);
	int fd = -1;

	if (!name)
		return -1;
	for (int i = 0; i < 64; i++) {
		snprintf(name, n, "%s.%ld.%u.tmp", path, (long)getpid(), atomic_fetch_add(&seq, 1));
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
			  0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int e = errno;

		free(name);
		errno = e;
		return -1;
	}
	*tmp = name;
	return fd;
}

/* Missing, a regular file or a symbolic link: something rename may replace. */
static enum rc replaceable(const char *path, char *why, size_t whylen)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? RC_OK : errno_fail(RC_INVAL, "cannot stat", why, whylen);
	if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
		return RC_OK;
	if (S_ISDIR(st.st_mode))
		return fail(RC_INVAL, why, whylen, "%s", "is a directory");
	return not_regular(st.st_mode, why, whylen);
}

enum rc cliopt_replace_check(const char *path, char *why, size_t whylen)
{
	enum rc r = replaceable(path, why, whylen);
	char *tmp;
	int fd;

	if (r != RC_OK)
		return r;
	if (path[0] == 0 || path[strlen(path) - 1] == '/')
		return fail(RC_INVAL, why, whylen, "%s", "names a directory");
	fd = create_beside(path, &tmp);
	if (fd < 0)
		return errno_fail(RC_INVAL, "cannot create a file in its directory", why, whylen);
	close(fd);
	unlink(tmp);
	free(tmp);
	return RC_OK;
}

enum rc cliopt_replace_file(const char *path, void (*fill)(FILE *f, void *ctx), void *ctx)
{
	char why[8];
	char *tmp;
	FILE *f;
	int fd = create_beside(path, &tmp);
	bool ok;

	if (fd < 0)
		return RC_IO;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		free(tmp);
		return RC_NOMEM;
	}
	fill(f, ctx);
	ok = !ferror(f);
	ok &= fclose(f) == 0;
	/* Checked again now: the path may have become a directory or device since the mount. */
	ok = ok && replaceable(path, why, sizeof why) == RC_OK && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
	free(tmp);
	return ok ? RC_OK : RC_IO;
}
