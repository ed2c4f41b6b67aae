/*
 * Opening and closing a mount: the containers it starts with (the mounted folder or archive,
 * folder.c; the single asset, here; texture mods' temporaries, mods.c) and what they are torn
 * down with. The only file of the core that names them: requests go through their tables.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "psgfs/formats/archive.h"
#include "tree/core/tree_int.h"
#include "tree/mount/arcdir.h"

/* ---- the single asset of a single-file mount: slot 0 ---- */

static enum cslot single_kind(struct tree *t, const struct cref *r)
{
	(void)t;
	return r->slot == 0 ? CS_ASSET : CS_NONE;
}

static struct asset *single_asset_get(struct tree *t, const struct cref *r, struct cache_ent **pin,
				      enum rc *rc)
{
	*pin = NULL;
	if (r->slot != 0) {
		*rc = RC_NOENT;
		return NULL;
	}
	return atomic_load(&t->single);
}

/* Its asset answers for every node (getattr NULL); it has no folder around it, so no path,
 * name or neighbours (NULL: a companion is looked for by the namespace itself). */
static const struct container_ops single_container = {
    .name = "single file",
    .kind = single_kind,
    .asset_get = single_asset_get,
};

/* ---- open and close ---- */

/* The asset of a single-file mount, by an absolute path: files looked for beside it later
 * (a model's companion) must still be found after the daemon has changed to "/". */
static enum tree_open_fail open_single(struct tree *t, const char *path, char *why, size_t whylen)
{
	char cwd[PATH_MAX], *abs = NULL;
	const char *base = strrchr(path, '/');
	struct asset *as = NULL;
	enum tree_open_fail f;

	if (path[0] != '/' && getcwd(cwd, sizeof cwd) && asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	/* Texture mods: a mod of the file already in OUTDIR/<name> is what the mount serves. */
	if (!t->mods || !mods_open_asset(t, 0, abs ? abs : path, base ? base + 1 : path,
					 ASSET_STRICT, &as, &f, why, whylen))
		f = asset_open(t, 0, AT_FDCWD, abs ? abs : path, NULL, ASSET_STRICT, &as, why,
			       whylen);
	atomic_store(&t->single, as);
	container_set_base(t, &single_container, NULL);
	free(abs);
	return f;
}

/* An archive (EB, BIGF, BIG4, SFIL) by its first bytes. */
static bool is_archive(const char *path)
{
	uint8_t head[64];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t got = fd >= 0 ? pread(fd, head, sizeof head, 0) : -1;

	if (fd >= 0)
		close(fd);
	return got > 0 && arc_detect(head, (size_t)got);
}

enum tree_open_fail tree_open(const char *path, const struct tree_opts *o, struct tree **out,
			      char *why, size_t whylen)
{
	struct tree *t = calloc(1, sizeof *t);
	enum tree_open_fail f;
	struct stat st;

	*out = NULL;
	if (!t) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	pthread_mutex_init(&t->streams_mu, NULL);
	pthread_mutex_init(&t->cont_mu, NULL);
	if (o)
		t->opts = *o;
	if (!t->opts.cache_bytes)
		t->opts.cache_bytes = TREE_DEFAULT_CACHE;
	t->cache = cache_new(t->opts.cache_bytes);
	if (!t->cache) {
		free(t);
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	/* The loose view only reads OUTDIR (loose.c): no picture is written there. */
	f = t->opts.mods_dir && !t->opts.layout_loose ? mods_init(t, why, whylen) : TREE_FAIL_NONE;
	if (stat(path, &st) != 0)
		st.st_mode = 0;
	if (f == TREE_FAIL_NONE && t->opts.layout_loose && st.st_mode && !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "layout=loose needs a folder (the game's)");
		f = TREE_FAIL_OTHER;
	}
	if (f == TREE_FAIL_NONE && S_ISDIR(st.st_mode))
		f = folder_open(t, path, why, whylen);
	else if (f == TREE_FAIL_NONE && S_ISREG(st.st_mode) && is_archive(path))
		f = folder_open_archive(t, path, why, whylen);
	else if (f == TREE_FAIL_NONE)
		f = open_single(t, path, why, whylen);
	if (f == TREE_FAIL_NONE && t->single) /* what its mount decoded; later loads add theirs */
		cache_charge(t->cache, atomic_load(&atomic_load(&t->single)->bytes));
	if (f != TREE_FAIL_NONE) {
		tree_close(t);
		return f;
	}
	*out = t;
	return TREE_FAIL_NONE;
}

void tree_close(struct tree *t)
{
	if (!t)
		return;
	arcdir_ahead_stop(t); /* it decodes into the cache */
	/* Cached views may point into format state: the cache goes first (and the listings kept
	 * while read, whose pins it would not see, before it). */
	tree_streams_drop(t);
	cache_free(t->cache);
	asset_close(atomic_load(&t->single));
	folder_close(t->fold);
	mods_free(t->mods);
	containers_free(t);
	pthread_mutex_destroy(&t->cont_mu);
	pthread_mutex_destroy(&t->streams_mu);
	free(t);
}

void tree_set_mount(struct tree *t, const struct stat *mnt_before, dev_t own_dev)
{
	t->mnt = *mnt_before;
	t->own_dev = own_dev;
	if (t->fold)
		folder_set_mount(t->fold, mnt_before, own_dev);
}

const struct stat *tree_source_stat(const struct tree *t)
{
	return t->fold ? folder_root_stat(t->fold) : &atomic_load(&t->single)->st;
}
