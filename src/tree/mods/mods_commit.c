/*
 * A complete picture becomes a game-ready arena (docs/texture-mods.md, "The writable mount"):
 * texmod plans it against the arena the mount serves now (so writes to two textures of one
 * arena both land), writes the new arena into an unnamed file in OUTDIR's folder of the asset
 * (mapped: its pages are the file's, not the daemon's memory), syncs it, gives it a temporary
 * name and renames it over OUTDIR/<the asset's path>, syncs the folder; then the mount serves
 * it: the slot's content epoch moves on, the asset (and a model whose companion it is) opens
 * anew, and the kernel is told to forget what it cached of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "psgfs/formats/registry.h"
#include "psgfs/formats/texmod.h"
#include "tree/psg/ns_psg.h" /* the arena of a PSG asset (pm), inline: no call into it */
#include "tree/mods/mods_int.h"

#define INVAL_MAX   100000u /* nodes one commit tells the kernel about at most */
#define INVAL_DEPTH 8

/* ---- telling the kernel ---- */

static void notify(struct tree *t, tree_ino ino)
{
	if (t->on_change)
		t->on_change(t->on_change_ctx, ino);
}

/* Every node below dir (skipping folders named in `skip`), dir included. */
static void notify_tree(struct tree *t, tree_ino dir, unsigned depth, const char *const *skip,
			unsigned *budget)
{
	struct tree_dir *d;

	notify(t, dir);
	if (!*budget || depth > INVAL_DEPTH || tree_opendir(t, dir, &d) != RC_OK)
		return;
	for (size_t i = 0; i < tree_dir_count(d) && *budget; i++) {
		bool skipped = false;

		for (size_t k = 0; skip && skip[k] && !skipped; k++)
			skipped = !strcmp(tree_dir_name(d, i), skip[k]);
		if (skipped)
			continue;
		(*budget)--;
		if (tree_dir_type(d, i) == TT_DIR)
			notify_tree(t, tree_dir_ino(d, i), depth + 1, skip, budget);
		else
			notify(t, tree_dir_ino(d, i));
	}
	tree_closedir(t, d);
}

static tree_ino asset_root(uint32_t slot)
{
	return ino_make(slot, tn(0, 0, 0));
}

/* The status files (info.txt, errors.txt) of an asset. */
static void notify_status(struct asset *as)
{
	for (unsigned k = 0; as->fmt && k < as->fmt->n_kinds; k++)
		if (as->fmt->kinds[k].status)
			notify(as->t, ino_make(as->slot, tn((uint8_t)k, 0, 0)));
}

/* ---- names ---- */

/* The name node `ino` has in folder `dir`; "?" when not found. */
static void name_in(struct tree *t, tree_ino dir, tree_ino ino, char *out, size_t n)
{
	struct tree_dir *d;

	snprintf(out, n, "?");
	if (tree_opendir(t, dir, &d) != RC_OK)
		return;
	for (size_t i = 0; i < tree_dir_count(d); i++)
		if (tree_dir_ino(d, i) == ino)
			snprintf(out, n, "%s", tree_dir_name(d, i));
	tree_closedir(t, d);
}

void mods_name_of(struct tree *t, tree_ino pic, char *out, size_t n)
{
	struct cache_ent *pin;
	struct asset *as;
	enum rc r;

	snprintf(out, n, "?");
	as = tree_asset_get(t, ino_slot(pic), &pin, &r);
	if (as && as->fmt->textures_dir)
		name_in(t, as->fmt->textures_dir(as), pic, out, n);
	tree_asset_put(t, pin);
}

/* Where the asset's arena goes in OUTDIR: its path in the mounted folder, or its name. */
static bool rel_of(struct tree *t, const struct asset *as, char *out, size_t n)
{
	if (t->fold)
		return tree_slot_relpath(t, as->slot, out, n);
	return (size_t)snprintf(out, n, "%s", as->name) < n;
}

/* ---- OUTDIR ---- */

static void advance(struct mods *m, uint32_t slot, const struct stat *st, const char *rel);

/* The finished file: synced, named `.<base>.psgfs-tmp`, renamed over base (and from then on
 * what the slot serves: its identity and epoch move on in the same publication), folder
 * synced. After the rename the arena is written whatever follows: a failed folder sync only
 * says so in *unsynced (the errno). */
static enum rc publish(struct mods *m, uint32_t slot, const char *rel, int dfd, int fd,
		       bool unnamed, const char *tmp, const char *base, struct stat *st,
		       int *unsynced, char *why, size_t whylen)
{
	char proc[64];
	int e;

	if (fsync(fd) != 0 || fstat(fd, st) != 0) {
		snprintf(why, whylen, "cannot sync the new arena: %s", strerror(errno));
		return RC_IO;
	}
	if (unnamed) {
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		unlinkat(dfd, tmp, 0); /* one of ours left by a crash */
		if (linkat(AT_FDCWD, proc, dfd, tmp, AT_SYMLINK_FOLLOW) != 0) {
			snprintf(why, whylen, "cannot name the new arena in the mods folder: %s",
				 strerror(errno));
			return RC_IO;
		}
	}
	mods_publish_begin(m);
	e = renameat(dfd, tmp, dfd, base) != 0 ? errno : 0;
	if (!e)
		advance(m, slot, st, rel);
	mods_publish_end(m);
	if (e) {
		unlinkat(dfd, tmp, 0);
		snprintf(why, whylen, "cannot put %.200s in place: %s", rel, strerror(e));
		return RC_IO;
	}
	*unsynced = fsync(dfd) == 0 ? 0 : errno;
	return RC_OK;
}

/* A file for the new arena in folder dfd: unnamed where the file system can, else named tmp. */
static int out_open(int dfd, const char *tmp, bool *unnamed)
{
	int fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);

	*unnamed = fd >= 0;
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	unlinkat(dfd, tmp, 0);
	return openat(dfd, tmp, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
}

struct outfile {
	int dfd, fd;
	bool unnamed;
	char tmp[NAME_MAX + 1];
	const char *base;
	struct stat st;
};

/* Room for the arena first (a mapped write past a full disk would be SIGBUS), then texmod. */
static enum rc out_fill(struct asset *as, const struct src *pic, const struct texmod_plan *p,
			struct outfile *o, char *why, size_t whylen)
{
	uint8_t *dst;
	enum rc r;
	int e = posix_fallocate(o->fd, 0, (off_t)p->out_size);

	if (e) {
		snprintf(why, whylen, "no room for %llu bytes in the mods folder: %s",
			 (unsigned long long)p->out_size, strerror(e));
		return e == ENOSPC || e == EDQUOT ? RC_NOSPACE : RC_IO;
	}
	dst = mmap(NULL, (size_t)p->out_size, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, 0);
	if (dst == MAP_FAILED) {
		snprintf(why, whylen, "cannot map the new arena: %s", strerror(errno));
		return RC_NOMEM;
	}
	r = texmod_write(&as->src, &pm(as)->a, pic, p, dst, why, whylen);
	munmap(dst, (size_t)p->out_size);
	return r;
}

/* OUTDIR's folder of rel, made as needed (OUTDIR removed and re-created since is used anew);
 * *gone when OUTDIR is removed and not re-created. */
static int out_dir(struct mods *m, const char *rel, bool *gone)
{
	const char *slash = strrchr(rel, '/');
	char *dir = slash ? strndup(rel, (size_t)(slash - rel)) : strdup("");
	int fd = -1;

	*gone = !mods_dir_ok(m);
	if (*gone)
		errno = ENOENT;
	else if (!dir)
		errno = ENOMEM;
	else
		fd = mods_open_dir(m, dir, true);
	free(dir);
	return fd;
}

static enum rc write_outdir(struct mods *m, struct asset *as, const char *rel,
			    const struct src *pic, const struct texmod_plan *p, int *unsynced,
			    char *why, size_t whylen)
{
	const char *slash = strrchr(rel, '/');
	struct outfile o = {.fd = -1};
	bool gone;
	enum rc r;

	o.dfd = out_dir(m, rel, &gone);
	o.base = slash ? slash + 1 : rel;
	snprintf(o.tmp, sizeof o.tmp, ".%.200s" MODS_TMP_SUFFIX, o.base);
	if (o.dfd < 0 || (o.fd = out_open(o.dfd, o.tmp, &o.unnamed)) < 0) {
		if (gone)
			snprintf(why, whylen,
				 "the mods folder %s is gone (removed while mounted; saves work "
				 "again once it is re-created)",
				 m->dir);
		else
			snprintf(why, whylen, "cannot write in the mods folder %s: %s", m->dir,
				 strerror(errno));
		r = errno == ENOSPC ? RC_NOSPACE : RC_IO;
	} else {
		r = out_fill(as, pic, p, &o, why, whylen);
		if (r == RC_OK)
			r = publish(m, as->slot, rel, o.dfd, o.fd, o.unnamed, o.tmp, o.base, &o.st,
				    unsynced, why, whylen);
		if (r != RC_OK && !o.unnamed)
			unlinkat(o.dfd, o.tmp, 0);
	}
	if (o.fd >= 0)
		close(o.fd);
	if (o.dfd >= 0)
		close(o.dfd);
	return r;
}

/* ---- serving the new arena ---- */

/* Single-file mounts: the new arena is opened as slot 0's asset; the old one stays until
 * unmount (readers may hold it). */
static void switch_single(struct mods *m, struct asset *old, const char *rel)
{
	struct tree *t = m->t;
	struct asset *na = NULL, **v;
	enum tree_open_fail f;
	char why[256];

	if (!mods_open_asset(t, 0, old->path, rel, ASSET_STRICT, &na, &f, why, sizeof why) ||
	    f != TREE_FAIL_NONE) {
		mods_log(m, 0, true, "%s was written but cannot be served: %s", rel, why);
		return;
	}
	pthread_mutex_lock(&m->mu);
	v = realloc(m->retired, (m->n_retired + 1) * sizeof *v);
	if (v) {
		m->retired = v;
		m->retired[m->n_retired++] = old;
	}
	pthread_mutex_unlock(&m->mu);
	if (v)
		atomic_store(&t->single, na);
	else
		asset_close(na); /* keep serving the old one rather than lose track of it */
}

/* A new content for a slot: its epoch moves on (and its identity in OUTDIR, st). */
static void advance(struct mods *m, uint32_t slot, const struct stat *st, const char *rel)
{
	struct mod_slot *s;

	pthread_mutex_lock(&m->mu);
	s = mods_slot_get(m, slot, true);
	if (s) {
		s->epoch++;
		if (st) {
			s->in_outdir = true;
			s->st = *st;
			s->have_st = true;
			if (!s->rel)
				s->rel = strdup(rel);
		}
	}
	pthread_mutex_unlock(&m->mu);
}

/* ... and, in a folder, its asset opens anew. */
static void bump(struct mods *m, uint32_t slot)
{
	advance(m, slot, NULL, NULL);
	if (m->t->fold)
		tree_slot_reset(m->t, slot);
}

/* The model whose companion a texture arena is (the registry's sibling rule, backwards). */
static uint32_t model_of(struct tree *t, uint32_t slot)
{
	uint32_t parent;
	const char *name;
	char model[NAME_MAX + 1];

	if (!t->fold || !tree_slot_entry_name(t, slot, &parent, &name) ||
	    !fmt_sibling_model(FMT_PSG, name, model, sizeof model))
		return 0;
	return tree_slot_sibling(t, slot, model);
}

/* What the kernel may hold of an asset's nodes, and of the model that embeds its textures. */
static void forget(struct mods *m, uint32_t slot)
{
	static const char *const model_skip[] = {"meshes", "objects", "skeleton", "sections", NULL};
	struct tree *t = m->t;
	unsigned budget = INVAL_MAX;
	uint32_t model = model_of(t, slot);

	notify_tree(t, asset_root(slot), 0, NULL, &budget);
	if (model) {
		bump(m, model);
		notify_tree(t, asset_root(model), 0, model_skip, &budget);
	}
}

static enum rc commit_locked(struct mods *m, struct asset *as, uint32_t row, enum texmod_input in,
			     const char *name, struct mod_content *c)
{
	struct tree *t = m->t;
	struct texmod_plan p;
	struct src pic;
	char why[1024], rel[PATH_MAX];
	int unsynced = 0;
	enum rc r;

	src_init_fd(&pic, &c->fd, c->size);
	r = texmod_plan(&as->src, &pm(as)->a, row, in, &pic, &p, why, sizeof why);
	if (r != RC_OK) {
		mods_log(m, as->slot, true, "textures/%s: refused: %s", name, why);
		return RC_INVAL;
	}
	p.threads = m->threads;
	if (!rel_of(t, as, rel, sizeof rel)) {
		snprintf(why, sizeof why, "its path is too long");
		r = RC_IO;
	} else {
		r = write_outdir(m, as, rel, &pic, &p, &unsynced, why, sizeof why);
	}
	if (r == RC_INVAL || r == RC_CORRUPT || r == RC_TRUNCATED || r == RC_FORMAT ||
	    r == RC_UNSUPPORTED) { /* the picture turned out damaged past its header */
		mods_log(m, as->slot, true, "textures/%s: refused: %s", name, why);
		r = RC_INVAL;
	} else if (r != RC_OK) {
		mods_log(m, as->slot, true, "textures/%s: not written: %s", name, why);
	} else {
		mods_log(m, as->slot, false, "textures/%s: %s; in %s/%s", name, p.what, m->dir,
			 rel);
		if (unsynced) /* in place and served: only its durability is in doubt */
			mods_log(
			    m, as->slot, true,
			    "textures/%s: written to %s/%s, but its folder could not be synced "
			    "(%s): a crash now could lose it",
			    name, m->dir, rel, strerror(unsynced));
		if (t->fold)
			tree_slot_reset(t, as->slot);
		else
			switch_single(m, as, rel);
	}
	texmod_plan_free(&p);
	return r;
}

enum rc mods_commit(struct mods *m, tree_ino pic, struct mod_content *c)
{
	struct tree *t = m->t;
	struct cache_ent *pin;
	struct asset *as;
	enum tree_texnode k = TEX_NOT;
	uint32_t row = 0, slot = ino_slot(pic);
	char name[NAME_MAX + 1], why[512];
	enum rc r;

	pthread_mutex_lock(&m->commit_mu);
	as = tree_asset_get(t, slot, &pin, &r); /* what the mount serves now */
	if (as)
		k = mods_texnode(as, tnode_unpack((uint32_t)pic), &row);
	if (k != TEX_DDS && k != TEX_PNG) {
		tree_asset_put(t, pin);
		pthread_mutex_unlock(&m->commit_mu);
		return as ? RC_READONLY : r;
	}
	name_in(t, as->fmt->textures_dir(as), pic, name, sizeof name);
	r = m->complete(m, c, why, sizeof why);
	if (r != RC_OK)
		mods_log(m, slot, true, "textures/%s: not written: %s", name, why);
	else
		r = commit_locked(m, as, row, k == TEX_PNG ? TEXMOD_PNG : TEXMOD_DDS, name, c);
	if (r == RC_OK) {
		forget(m, slot);
	} else { /* errors.txt says why; the writer's sizes are not the picture's */
		notify_status(as);
		notify(t, pic);
	}
	tree_asset_put(t, pin);
	pthread_mutex_unlock(&m->commit_mu);
	return r;
}
