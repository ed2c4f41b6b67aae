/*
 * What the writable mount (mods.c) and the commit (mods_commit.c) both use: the table of
 * slots with their logs, and OUTDIR (its folders, its return when re-created, the publication
 * sequence). Below both, so neither calls the other back.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tree/mods/mods_int.h"

/* ---- slots ---- */

struct mod_slot *mods_slot_get(struct mods *m, uint32_t slot, bool create)
{
	struct mod_slot *s;

	for (s = m->slots; s; s = s->next)
		if (s->slot == slot)
			return s;
	if (!create || !(s = calloc(1, sizeof *s)))
		return NULL;
	s->slot = slot;
	s->next = m->slots;
	m->slots = s;
	return s;
}

void mods_log(struct mods *m, uint32_t slot, bool error, const char *fmt, ...)
{
	struct mod_slot *s;
	char *line = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	for (char *p = line; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	pthread_mutex_lock(&m->mu);
	s = mods_slot_get(m, slot, true);
	if (s) {
		char **v = error ? s->err : s->log;
		unsigned *k = error ? &s->n_err : &s->n_log;

		if (*k == MODS_LOG_MAX) { /* the oldest goes */
			free(v[0]);
			memmove(v, v + 1, (MODS_LOG_MAX - 1) * sizeof *v);
			(*k)--;
		}
		v[(*k)++] = line;
		line = NULL;
	}
	pthread_mutex_unlock(&m->mu);
	free(line);
}

/* ---- OUTDIR ---- */

int mods_open_dir(struct mods *m, const char *rel_dir, bool create)
{
	int fd = openat(m->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *p = rel_dir;

	while (fd >= 0 && *p) {
		char comp[NAME_MAX + 1];
		size_t n = strcspn(p, "/");
		int next;

		if (n == 0 || n > NAME_MAX || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.')) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = 0;
		if (create && mkdirat(fd, comp, 0755) != 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
		p += n;
		p += *p == '/';
	}
	return fd;
}

bool mods_dir_ok(struct mods *m)
{
	struct stat st, par;
	int fd;

	if (fstat(m->dirfd, &st) == 0 && st.st_nlink > 0)
		return true;
	/* Removed: a folder of its name in the same parent, not one a link leads to, takes its
	 * place (dup3 swaps it under the same descriptor for every thread at once). */
	fd = open(m->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstatat(fd, "..", &par, 0) != 0 || par.st_dev != m->dir_parent.st_dev ||
	    par.st_ino != m->dir_parent.st_ino || dup3(fd, m->dirfd, O_CLOEXEC) < 0) {
		close(fd);
		errno = ENOENT;
		return false;
	}
	close(fd);
	return true;
}

void mods_publish_begin(struct mods *m)
{
	pthread_mutex_lock(&m->mu);
	m->pub_seq++;
	pthread_mutex_unlock(&m->mu);
}

void mods_publish_end(struct mods *m)
{
	pthread_mutex_lock(&m->mu);
	m->pub_seq++;
	pthread_cond_broadcast(&m->pub_cv);
	pthread_mutex_unlock(&m->mu);
}
