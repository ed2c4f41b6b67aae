/*
 * Texture mods: the contents of written files and temporaries, their bytes spilled to unnamed
 * files in OUTDIR (mods.c, mods_int.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "tree/mods/mods_int.h"

#define READ_CHUNK (1u << 20)

/* ---- spill files ---- */

static bool no_tmpfile(int e)
{
	return e == EOPNOTSUPP || e == EISDIR || e == EINVAL; /* the file system has none */
}

static int spill_named(struct mods *m)
{
	char name[64];
	int fd;

	snprintf(name, sizeof name, ".spill-%ld-%llu" MODS_TMP_SUFFIX, (long)getpid(),
		 (unsigned long long)atomic_fetch_add(&m->spill_seq, 1));
	fd = openat(m->dirfd, name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		unlinkat(m->dirfd, name, 0);
	return fd;
}

/* An unnamed file in OUTDIR; where O_TMPFILE is not supported, a named one unlinked at once
 * (a crash in between leaves it for the clean-up at the next start). */
static int spill_open(struct mods *m)
{
	int fd = openat(m->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0)
		return fd;
	if (no_tmpfile(errno)) { /* straight to a named file: no check, no second try */
		fd = spill_named(m);
		if (fd < 0 && errno == ENOENT && mods_dir_ok(m)) /* re-created since */
			fd = spill_named(m);
		return fd;
	}
	if (!mods_dir_ok(m)) { /* removed (ext4 says EPERM, not ENOENT) */
		errno = ENOENT;
		return -1;
	}
	/* again: it may have been removed and re-created since */
	fd = openat(m->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return fd >= 0 || !no_tmpfile(errno) ? fd : spill_named(m);
}

static enum rc errno_rc(int e)
{
	return e == ENOSPC || e == EDQUOT ? RC_NOSPACE
	       : e == EFBIG		  ? RC_TOOBIG
	       : e == ENOMEM		  ? RC_NOMEM
					  : RC_IO;
}

/* ---- contents ---- */

enum rc mods_content_init(struct mods *m, struct mod_content *c, tree_ino base, uint64_t len)
{
	memset(c, 0, sizeof *c);
	pthread_mutex_init(&c->mu, NULL);
	c->base_ino = base;
	c->base_len = c->size = len;
	c->fd = spill_open(m);
	if (c->fd < 0) {
		pthread_mutex_destroy(&c->mu);
		return errno_rc(errno);
	}
	return RC_OK;
}

void mods_content_free(struct mod_content *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->ext);
	c->ext = NULL;
	c->n_ext = c->cap_ext = 0;
	pthread_mutex_destroy(&c->mu);
}

/* Record [off, off + len) as written: extents stay sorted, disjoint and merged. */
static enum rc extent_add(struct mod_content *c, uint64_t off, uint64_t len)
{
	size_t i = 0, j;
	uint64_t end = off + len;

	while (i < c->n_ext && c->ext[i].off + c->ext[i].len < off)
		i++;
	for (j = i; j < c->n_ext && c->ext[j].off <= end; j++) {
		uint64_t e = c->ext[j].off + c->ext[j].len;

		off = c->ext[j].off < off ? c->ext[j].off : off;
		end = e > end ? e : end;
	}
	if (j == i) { /* a new extent at i */
		if (c->n_ext == c->cap_ext) {
			size_t cap = c->cap_ext ? c->cap_ext * 2 : 8;
			struct mod_extent *v = xrealloc_n(c->ext, cap, sizeof *v);

			if (!v)
				return RC_NOMEM;
			c->ext = v;
			c->cap_ext = cap;
		}
		memmove(c->ext + i + 1, c->ext + i, (c->n_ext - i) * sizeof *c->ext);
		c->n_ext++;
	} else { /* extents i..j-1 become one */
		memmove(c->ext + i + 1, c->ext + j, (c->n_ext - j) * sizeof *c->ext);
		c->n_ext -= j - i - 1;
	}
	c->ext[i] = (struct mod_extent){off, end - off};
	return RC_OK;
}

enum rc mods_content_write(struct mod_content *c, uint64_t off, const void *p, size_t n)
{
	enum rc r;

	if (off > MODS_FILE_MAX || n > MODS_FILE_MAX - off)
		return RC_TOOBIG;
	if (n == 0)
		return RC_OK;
	pthread_mutex_lock(&c->mu);
	r = pwrite(c->fd, p, n, (off_t)off) == (ssize_t)n ? extent_add(c, off, n) : errno_rc(errno);
	if (r == RC_OK) {
		c->size = off + n > c->size ? off + n : c->size;
		c->dirty = true;
	}
	pthread_mutex_unlock(&c->mu);
	return r;
}

enum rc mods_content_truncate(struct mod_content *c, uint64_t size)
{
	enum rc r = RC_OK;

	if (size > MODS_FILE_MAX)
		return RC_TOOBIG;
	pthread_mutex_lock(&c->mu);
	if (ftruncate(c->fd, (off_t)size) != 0) {
		r = errno_rc(errno);
	} else {
		size_t k = 0;

		for (size_t i = 0; i < c->n_ext; i++) { /* what lies past the end is gone */
			if (c->ext[i].off >= size)
				continue;
			if (c->ext[i].off + c->ext[i].len > size)
				c->ext[i].len = size - c->ext[i].off;
			c->ext[k++] = c->ext[i];
		}
		c->n_ext = k;
		c->base_len = c->base_len < size ? c->base_len : size;
		c->size = size;
		c->dirty = true;
	}
	pthread_mutex_unlock(&c->mu);
	return r;
}

/* Bytes [off, off + n) of what the content says, with c->mu held. */
static enum rc content_pread(struct mods *m, struct mod_content *c, uint64_t off, size_t n,
			     uint8_t *dst)
{
	size_t i = 0;

	while (n) {
		uint64_t run;
		enum rc r = RC_OK;

		while (i < c->n_ext && c->ext[i].off + c->ext[i].len <= off)
			i++;
		if (i < c->n_ext && c->ext[i].off <= off) { /* written */
			run = c->ext[i].off + c->ext[i].len - off;
			run = run < n ? run : n;
			if (pread(c->fd, dst, (size_t)run, (off_t)off) != (ssize_t)run)
				r = RC_IO;
		} else {
			run = i < c->n_ext ? c->ext[i].off - off : n;
			run = run < n ? run : n;
			if (off < c->base_len) { /* the file as it was */
				size_t got = 0;

				run = run < c->base_len - off ? run : c->base_len - off;
				r = tree_read(m->t, c->base_ino, off, (size_t)run, dst, &got);
				if (r == RC_OK && got != run)
					r = RC_IO;
			} else {
				memset(dst, 0, (size_t)run);
			}
		}
		if (r != RC_OK)
			return r;
		off += run;
		dst += run;
		n -= (size_t)run;
	}
	return RC_OK;
}

enum rc mods_content_read(struct mods *m, struct mod_content *c, uint64_t off, size_t n, void *dst,
			  size_t *got)
{
	enum rc r = RC_OK;

	pthread_mutex_lock(&c->mu);
	*got = 0;
	if (off < c->size) {
		*got = n < c->size - off ? n : (size_t)(c->size - off);
		r = content_pread(m, c, off, *got, dst);
	}
	pthread_mutex_unlock(&c->mu);
	return r;
}

enum rc mods_content_complete(struct mods *m, struct mod_content *c, char *why, size_t whylen)
{
	uint8_t *buf = NULL;
	enum rc r = RC_OK;

	/* Every byte of the base nobody wrote is copied in; the rest is written or zero. */
	for (uint64_t off = 0; off < c->base_len && r == RC_OK; off += READ_CHUNK) {
		size_t n =
		    c->base_len - off < READ_CHUNK ? (size_t)(c->base_len - off) : READ_CHUNK;

		if (!buf && !(buf = malloc(READ_CHUNK))) {
			snprintf(why, whylen, "out of memory");
			return RC_NOMEM;
		}
		r = content_pread(m, c, off, n, buf);
		if (r != RC_OK) {
			snprintf(why, whylen,
				 "cannot read the bytes it did not write from the picture: %s",
				 rc_str(r));
		} else if (pwrite(c->fd, buf, n, (off_t)off) != (ssize_t)n) {
			snprintf(why, whylen,
				 "cannot copy the bytes it did not write into its file in the "
				 "mods folder: %s",
				 strerror(errno));
			r = errno_rc(errno);
		}
	}
	free(buf);
	if (r == RC_OK && c->base_len) {
		c->n_ext = 0;
		r = extent_add(c, 0, c->base_len);
		c->base_len = 0;
		if (r != RC_OK)
			snprintf(why, whylen, "out of memory");
	}
	if (r == RC_OK && ftruncate(c->fd, (off_t)c->size) != 0) {
		snprintf(why, whylen, "cannot set the length of its file in the mods folder: %s",
			 strerror(errno));
		r = errno_rc(errno);
	}
	return r;
}
