/*
 * Texture mods: editors' temporaries and their container (mods.c, mods_int.h).
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

#define GONE_MAX 1024u /* temporaries renamed over pictures kept as aliases */

/* ---- temporaries ---- */

void mods_temp_free(struct mod_temp *tp)
{
	if (tp->c.fd >= 0)
		mods_content_free(&tp->c);
	free(tp->name);
	free(tp);
}

struct mod_temp *mods_temp_by_ino(struct mods *m, tree_ino ino)
{
	for (struct mod_temp *tp = m->temps; tp; tp = tp->next)
		if (ino_slot(ino) == TREE_TEMP_SLOT && tp->id == (uint32_t)ino)
			return tp;
	return NULL;
}

struct mod_temp *mods_temp_by_name(struct mods *m, tree_ino parent, const char *name)
{
	for (struct mod_temp *tp = m->temps; tp; tp = tp->next)
		if (!tp->gone && tp->parent == parent && !strcmp(tp->name, name))
			return tp;
	return NULL;
}

tree_ino mods_temp_ino(const struct mod_temp *tp)
{
	return (tree_ino)TREE_TEMP_SLOT << 32 | tp->id;
}

/* Attributes of a live temporary (m->mu held). */
void mods_temp_stat(const struct mod_temp *tp, struct tree_stat *out)
{
	memset(out, 0, sizeof *out);
	out->ino = mods_temp_ino(tp);
	out->type = TT_FILE;
	out->size = tp->c.size;
	out->nlink = tp->gone ? 0 : 1;
	out->perm = tp->perm;
	out->uid = tp->uid;
	out->gid = tp->gid;
	out->atime = out->mtime = tp->mtime;
	out->writable = true;
}

/* Forget temporaries that are gone, closed and beyond what aliases are kept for (m->mu). */
void mods_temps_trim(struct mods *m)
{
	unsigned gone = 0;

	for (struct mod_temp **pp = &m->temps; *pp;) {
		struct mod_temp *tp = *pp;

		if (tp->gone && !tp->opens && (!tp->alias || ++gone > GONE_MAX)) {
			*pp = tp->next;
			mods_temp_free(tp);
			continue;
		}
		if (tp->gone && !tp->opens && tp->c.fd >= 0)
			mods_content_free(&tp->c); /* an alias needs no bytes */
		pp = &tp->next;
	}
}

/* Room for one more writer or temporary (m->mu held): at the limit, the oldest temporary
 * nobody has open (an abandoned one: an editor's save that never renamed it) is discarded;
 * its name goes to *gone (for errors.txt, after m->mu) and its folder to *gone_dir. */
bool mods_temps_room(struct mods *m, char *gone, size_t n, tree_ino *gone_dir)
{
	struct mod_temp *old = NULL;

	*gone_dir = 0;
	if (m->n_open < MODS_TEMPS_MAX)
		return true;
	for (struct mod_temp *tp = m->temps; tp; tp = tp->next) /* newest first */
		if (!tp->gone && !tp->opens)
			old = tp;
	if (!old)
		return false;
	snprintf(gone, n, "%s", old->name);
	*gone_dir = old->parent;
	mods_temp_gone(m, old, 0);
	return m->n_open < MODS_TEMPS_MAX;
}

void mods_log_discarded(struct mods *m, const char *name, tree_ino dir)
{
	if (dir)
		mods_log(m, ino_slot(dir), true,
			 "textures/%s: a temporary nobody had open was discarded to make room (at "
			 "most %u writers and temporaries at once)",
			 name, MODS_TEMPS_MAX);
}

enum rc mods_temp_getattr(struct tree *t, tree_ino ino, struct tree_stat *out)
{
	struct mods *m = t->mods;
	struct mod_temp *tp;
	tree_ino alias = 0;
	struct tree_stat st;

	if (!m)
		return RC_NOENT;
	pthread_mutex_lock(&m->mu);
	tp = mods_temp_by_ino(m, ino);
	if (tp && tp->alias)
		alias = tp->alias;
	else if (tp)
		mods_temp_stat(tp, &st);
	pthread_mutex_unlock(&m->mu);
	if (!tp)
		return RC_NOENT;
	if (alias)
		return out ? tree_getattr(t, alias, out) : RC_OK;
	if (out)
		*out = st;
	return RC_OK;
}

static enum rc temp_lookup(struct tree *t, const struct cref *r, tree_ino parent, const char *name,
			   struct tree_stat *out)
{
	struct mods *m = r->c;
	struct mod_temp *tp;

	(void)t;
	pthread_mutex_lock(&m->mu);
	tp = mods_temp_by_name(m, parent, name);
	if (tp)
		mods_temp_stat(tp, out);
	pthread_mutex_unlock(&m->mu);
	return tp ? RC_OK : RC_NOENT;
}

static enum rc temp_read(struct tree *t, const struct cref *cr, tree_ino ino, uint64_t off,
			 size_t len, struct tree_rdv *v)
{
	struct mods *m = t->mods;
	struct mod_temp *tp;
	tree_ino alias = 0;
	size_t got = 0;
	enum rc r;

	(void)cr;
	if (!m)
		return RC_NOENT;
	pthread_mutex_lock(&m->mu);
	tp = mods_temp_by_ino(m, ino);
	if (tp && tp->alias)
		alias = tp->alias;
	else if (tp)
		tp->opens++; /* kept while read */
	pthread_mutex_unlock(&m->mu);
	if (!tp)
		return RC_NOENT;
	if (alias)
		return tree_read_begin(t, alias, off, len, v);
	v->own = malloc(len ? len : 1);
	r = v->own ? mods_content_read(m, &tp->c, off, len, v->own, &got) : RC_NOMEM;
	pthread_mutex_lock(&m->mu);
	tp->opens--;
	mods_temps_trim(m);
	pthread_mutex_unlock(&m->mu);
	if (r != RC_OK)
		return r;
	v->base[0] = v->own;
	v->len[0] = v->total = got;
	v->n = 1;
	return RC_OK;
}

/* The temporary is gone from its name (m->mu held); alias: the picture it became. */
void mods_temp_gone(struct mods *m, struct mod_temp *tp, tree_ino alias)
{
	if (!tp->gone)
		m->n_open--;
	tp->gone = true;
	tp->alias = alias;
	mods_temps_trim(m);
}

static enum rc temp_cgetattr(struct tree *t, const struct cref *r, tree_ino ino,
			     struct tree_stat *out)
{
	(void)r;
	return mods_temp_getattr(t, ino, out);
}

static enum cslot temp_kind(struct tree *t, const struct cref *r)
{
	(void)t;
	(void)r;
	return CS_ASSET; /* files, read through read() (own_nodes) */
}

/* Editors' temporaries: files only, in slot TREE_TEMP_SLOT, named in any directory (lookup);
 * no asset, no path in the source, no neighbours. */
const struct container_ops mods_temp_container = {
    .name = "temporaries",
    .own_nodes = true,
    .kind = temp_kind,
    .getattr = temp_cgetattr,
    .lookup = temp_lookup,
    .read = temp_read,
};
