/*
 * Folder mounts (folder_int.h): the table of entries (permanent: inode numbers resolve to
 * them) and their paths in the source folder. The base of the folder files: it calls none of
 * the others.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "psgfs/base/bytes.h"
#include "psgfs/base/hash.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/registry.h"
#include "psgfs/formats/skate_objects.h"
#include "tree/mount/arcdir.h"
#include "tree/mount/guid_index.h"
#include "tree/mount/folder_int.h"

/* ---- the entry table (permanent: entries are what inode numbers resolve to) ---- */

static size_t bucket_of(const struct folder *f, uint32_t slot)
{
	return (size_t)((slot * 0x9e3779b1u) >> 7) & (f->n_buckets - 1);
}

struct fentry *fentry_find(struct folder *f, uint32_t slot)
{
	struct fentry *e;

	if (slot == 0)
		return &f->root;
	for (e = f->tab[bucket_of(f, slot)]; e; e = e->hnext)
		if (e->slot == slot)
			return e;
	return NULL;
}

static bool table_grow(struct folder *f)
{
	size_t nb = f->n_buckets * 2;
	struct fentry **tab = calloc(nb, sizeof *tab);

	if (!tab)
		return false;
	f->uncharged +=
	    cache_heap_cost(nb * sizeof *tab) - cache_heap_cost(f->n_buckets * sizeof *tab);
	for (size_t i = 0; i < f->n_buckets; i++) {
		struct fentry *e = f->tab[i], *next;

		for (; e; e = next) {
			size_t b = (size_t)((e->slot * 0x9e3779b1u) >> 7) & (nb - 1);

			next = e->hnext;
			e->hnext = tab[b];
			tab[b] = e;
		}
	}
	free(f->tab);
	f->tab = tab;
	f->n_buckets = nb;
	return true;
}

bool fentry_insert(struct folder *f, struct fentry *e)
{
	size_t b;

	if (f->n >= f->n_buckets * 2 && !table_grow(f) && f->n >= f->n_buckets * 8)
		return false;
	b = bucket_of(f, e->slot);
	e->hnext = f->tab[b];
	f->tab[b] = e;
	f->n++;
	return true;
}

void fentry_remove(struct folder *f, uint32_t slot)
{
	struct fentry **pp = &f->tab[bucket_of(f, slot)];

	for (; *pp; pp = &(*pp)->hnext) {
		if ((*pp)->slot == slot) {
			*pp = (*pp)->hnext;
			f->n--;
			return;
		}
	}
}

/* What an entry keeps on the heap (its children's array is counted where it grows). */
size_t fentry_heap(const struct fentry *e)
{
	return cache_heap_cost(sizeof *e) + cache_heap_cost(strlen(e->name) + 1) +
	       (e->link ? cache_heap_cost(strlen(e->link) + 1) : 0);
}

void fentry_free(struct fentry *e)
{
	free(e->name);
	free(e->link);
	free(e->kids);
	free(e);
}

/* A stable slot for a new entry (see the comment at the top). */
uint32_t fold_slot_for(struct folder *f, const struct stat *st)
{
	if (st->st_dev == f->root.st.st_dev && st->st_ino > 0 && st->st_ino < SEQ_SLOT_FIRST &&
	    !fentry_find(f, (uint32_t)st->st_ino))
		return (uint32_t)st->st_ino;
	if (f->next_seq == UINT32_MAX)
		return 0;
	return f->next_seq++;
}

/* ---- paths ---- */

/* The names from the root down to the folder of slot `slot` (deepest first) in *chain; its
 * depth, or -1 (errno set). Taken under f->mu, as the table may grow meanwhile; the names stay
 * valid without it (entries handed out live as long as the mount). Any depth: the chain grows
 * with it, and a parent cycle (impossible by construction) cannot be longer than the table. */
static ssize_t chain_of(struct folder *f, uint32_t slot, const char ***chain)
{
	const struct fentry *e;
	size_t depth = 0, cap = 0;
	const char **v = NULL;
	int err = 0;

	pthread_mutex_lock(&f->mu);
	for (e = fentry_find(f, slot); e && e->slot != 0 && !err; e = fentry_find(f, e->parent)) {
		if (depth > f->n) {
			err = ELOOP;
		} else {
			const char **nv = xgrow_n(v, depth, &cap, sizeof *nv, 16);

			if (nv)
				v = nv;
			else
				err = ENOMEM;
		}
		if (!err)
			v[depth++] = e->name;
	}
	if (!err && !e)
		err = ENOENT;
	pthread_mutex_unlock(&f->mu);
	if (err) {
		free(v);
		errno = err;
		return -1;
	}
	*chain = v;
	return (ssize_t)depth;
}

/* Open the folder of slot `slot` (a directory) by walking from the root without following
 * links. Called without f->mu: the walk reads the source tree. */
int fold_open_dir_of(struct folder *f, uint32_t slot)
{
	const char **chain = NULL;
	ssize_t depth = chain_of(f, slot, &chain);
	int fd;

	if (depth < 0)
		return -1;
	/* Not dup(): a duplicate shares the root's directory offset with every other read. */
	fd = openat(f->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd >= 0 && depth--) {
		int next =
		    openat(fd, chain[depth], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;

		close(fd);
		fd = next;
		errno = err;
	}
	free(chain);
	return fd;
}

struct fentry *fentry_get(struct tree *t, uint32_t slot)
{
	struct folder *f = t->fold;
	struct fentry *e;

	pthread_mutex_lock(&f->mu);
	e = fentry_find(f, slot);
	pthread_mutex_unlock(&f->mu);
	return e; /* entries are never freed before the mount ends */
}

/* The path of a folder entry from DIR ("data/x/y.psg"). */
bool fentry_path(struct tree *t, uint32_t slot, char *out, size_t n)
{
	const char **chain = NULL;
	ssize_t depth = chain_of(t->fold, slot, &chain);
	size_t at = 0;
	bool ok = depth > 0;

	while (ok && depth--) { /* chain[0] is the entry itself, the last its top folder */
		size_t len = strlen(chain[depth]);

		ok = at + len + 2 <= n;
		if (ok) {
			memcpy(out + at, chain[depth], len);
			at += len;
			out[at++] = depth ? '/' : '\0';
		}
	}
	free(chain);
	return ok;
}
