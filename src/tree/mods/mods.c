/*
 * Texture mods (include/psgfs/tree/mods.h): the files being written, editors' temporaries,
 * and the table of slots whose content comes from OUTDIR. Written bytes go to unnamed files
 * in OUTDIR (O_TMPFILE: nothing is ever visible there, and nothing is left by a crash), so the
 * daemon's memory holds only what was written where. Turning a complete picture into an
 * arena is mods_commit.c.
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

#define CLEAN_DEPTH 32

/* ---- slots ---- */

static uint32_t epoch_of(struct tree *t, uint32_t slot)
{
	struct mod_slot *s;
	uint32_t e = 0;

	if (!t->mods)
		return 0;
	pthread_mutex_lock(&t->mods->mu);
	s = mods_slot_get(t->mods, slot, false);
	if (s)
		e = s->epoch;
	pthread_mutex_unlock(&t->mods->mu);
	return e;
}

static void status_lines(struct asset *as, bool errors, struct buf *out)
{
	struct mods *m = as->t->mods;
	struct mod_slot *s;

	if (!m || as->slot == UINT32_MAX)
		return;
	pthread_mutex_lock(&m->mu);
	s = mods_slot_get(m, as->slot, false);
	if (s && !errors && s->in_outdir)
		buf_printf(out, "source: %s/%s (texture mods; the original: %s)\n", m->dir, s->rel,
			   as->path);
	for (unsigned i = 0; s && i < (errors ? s->n_err : s->n_log); i++)
		buf_printf(out, "mods: %s\n", errors ? s->err[i] : s->log[i]);
	pthread_mutex_unlock(&m->mu);
}

static void node_stat(struct tree *t, const struct asset *as, struct tnode n, struct tree_stat *st)
{
	uint32_t row;

	(void)t;
	if (mods_texnode(as, n, &row) == TEX_NOT)
		return;
	st->perm |= 0200;
	st->writable = true;
}

/* ---- OUTDIR ---- */

static unsigned publish_seq(struct mods *m, bool wait)
{
	unsigned seq;

	pthread_mutex_lock(&m->mu);
	while (wait && (m->pub_seq & 1))
		pthread_cond_wait(&m->pub_cv, &m->mu);
	seq = m->pub_seq;
	pthread_mutex_unlock(&m->mu);
	return seq;
}

static bool open_once(struct tree *t, uint32_t slot, const char *logical, const char *rel,
		      enum asset_mode mode, struct asset **out, enum tree_open_fail *f, char *why,
		      size_t whylen)
{
	struct mods *m = t->mods;
	const char *base = strrchr(rel, '/');
	char *dir = base ? strndup(rel, (size_t)(base - rel)) : strdup("");
	struct mod_slot *s;
	struct stat st, expect;
	int dfd = dir ? mods_open_dir(m, dir, false) : -1;

	free(dir);
	base = base ? base + 1 : rel;
	if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
		if (dfd >= 0)
			close(dfd);
		pthread_mutex_lock(&m->mu);
		s = mods_slot_get(m, slot, false);
		if (s && s->in_outdir) { /* served from OUTDIR, and gone from there since */
			snprintf(why, whylen, "its arena in the mods folder is gone");
			*f = TREE_FAIL_OPEN;
		}
		pthread_mutex_unlock(&m->mu);
		return s && s->in_outdir;
	}
	pthread_mutex_lock(&m->mu);
	s = mods_slot_get(m, slot, true);
	expect = s && s->have_st ? s->st : st; /* held to what was written or first seen */
	pthread_mutex_unlock(&m->mu);
	*f = asset_open_as(t, slot, logical, dfd, base, &expect, mode, out, why, whylen);
	close(dfd);
	pthread_mutex_lock(&m->mu);
	if (s && *f == TREE_FAIL_NONE) {
		s->in_outdir = true;
		if (!s->have_st)
			s->st = st, s->have_st = true;
		if (!s->rel)
			s->rel = strdup(rel);
	}
	pthread_mutex_unlock(&m->mu);
	return true;
}

/* The file in OUTDIR, the identity it is held to and the epoch the asset takes must be of one
 * commit: an opening that a commit's publication overlapped is made again. */
static bool open_modded(struct tree *t, uint32_t slot, const char *logical, const char *rel,
			enum asset_mode mode, struct asset **out, enum tree_open_fail *f, char *why,
			size_t whylen)
{
	for (unsigned tries = 0;; tries++) {
		unsigned seq = publish_seq(t->mods, true);
		bool mine;

		*out = NULL;
		mine = open_once(t, slot, logical, rel, mode, out, f, why, whylen);
		if (publish_seq(t->mods, false) == seq || tries == 8)
			return mine;
		asset_close(*out);
	}
}

/* Our own temporaries left by a crash: ".<name>.psgfs-tmp" files anywhere below OUTDIR. */
static void clean_dir(int fd, unsigned depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	size_t sl = strlen(MODS_TMP_SUFFIX);

	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_DIR && depth < CLEAN_DEPTH) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				clean_dir(sub, depth + 1);
		} else if ((de->d_type == DT_REG || de->d_type == DT_UNKNOWN) &&
			   de->d_name[0] == '.' && n > sl &&
			   !strcmp(de->d_name + n - sl, MODS_TMP_SUFFIX)) {
			unlinkat(dirfd(d), de->d_name, 0);
		}
	}
	closedir(d);
}

static const struct tree_mods_ops mods_tree_ops = {
    .epoch = epoch_of,
    .open_asset = open_modded,
    .stat = node_stat,
    .status = status_lines,
};

enum tree_open_fail mods_init(struct tree *t, char *why, size_t whylen)
{
	struct mods *m = calloc(1, sizeof *m);
	long nc = sysconf(_SC_NPROCESSORS_ONLN);
	int fd;

	if (!m || !(m->dir = strdup(t->opts.mods_dir))) {
		free(m);
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	m->t = t;
	pthread_mutex_init(&m->mu, NULL);
	pthread_mutex_init(&m->commit_mu, NULL);
	pthread_cond_init(&m->pub_cv, NULL);
	m->complete = mods_content_complete;
	m->threads = nc < 1 ? 1 : nc > 16 ? 16 : (unsigned)nc;
	t->mods = m;
	t->mods_ops = &mods_tree_ops;
	if (container_add(t, TREE_TEMP_SLOT, TREE_TEMP_SLOT, &mods_temp_container, m) != RC_OK) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	m->dirfd = open(m->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m->dirfd < 0) {
		snprintf(why, whylen, "mods folder %s: %s", m->dir, strerror(errno));
		return TREE_FAIL_OPEN;
	}
	if (fstatat(m->dirfd, "..", &m->dir_parent, 0) != 0)
		memset(&m->dir_parent, 0, sizeof m->dir_parent);
	fd = openat(m->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		clean_dir(fd, 0);
	return TREE_FAIL_NONE;
}

void mods_free(struct mods *m)
{
	if (!m)
		return;
	while (m->temps) {
		struct mod_temp *n = m->temps->next;

		mods_temp_free(m->temps);
		m->temps = n;
	}
	while (m->slots) {
		struct mod_slot *n = m->slots->next;

		for (unsigned i = 0; i < m->slots->n_log; i++)
			free(m->slots->log[i]);
		for (unsigned i = 0; i < m->slots->n_err; i++)
			free(m->slots->err[i]);
		free(m->slots->rel);
		free(m->slots);
		m->slots = n;
	}
	for (size_t i = 0; i < m->n_retired; i++)
		asset_close(m->retired[i]);
	free(m->retired);
	if (m->dirfd >= 0)
		close(m->dirfd);
	pthread_mutex_destroy(&m->mu);
	pthread_mutex_destroy(&m->commit_mu);
	pthread_cond_destroy(&m->pub_cv);
	free(m->dir);
	free(m);
}

/* ---- what a node is ---- */

/* Picture (DDS/PNG), textures/ or nothing writable (*k); ino's asset is looked at and
 * released. An asset that cannot be had now (closed by the open-asset limit and failing to
 * open again, out of memory) is that failure, not "read-only". */
static enum rc node_kind(struct tree *t, tree_ino ino, enum tree_texnode *k)
{
	struct cache_ent *pin;
	uint32_t row;
	enum rc r = RC_OK;
	struct asset *as;

	*k = TEX_NOT;
	if (tree_ino_is_container(t, ino))
		return RC_OK; /* a container's node: a folder, a plain file, an asset root */
	as = tree_asset_get(t, ino_slot(ino), &pin, &r);
	if (as)
		*k = mods_texnode(as, tnode_unpack((uint32_t)ino), &row);
	tree_asset_put(t, pin);
	return as || r == RC_NOENT || r == RC_ISDIR ? RC_OK : r;
}

static bool is_picture(enum tree_texnode k)
{
	return k == TEX_DDS || k == TEX_PNG;
}

/* A name that says "a picture": written into textures/ where no texture has it, it would be a
 * new texture, which a mod cannot add (a temporary of that name would vanish unseen). */
static bool adds_texture(const char *name)
{
	static const char *const ext[] = {".dds", ".png", ".tga",  ".jpg",  ".jpeg", ".bmp",
					  ".gif", ".tif", ".tiff", ".webp", NULL};

	return name_has_ext(name, ext);
}

/* `name` is one of dir's pictures' names followed by a suffix ("T.png.XXXXXX", "T.dds~"). */
static bool extends_picture(struct tree *t, tree_ino dir, const char *name)
{
	struct tree_dir *d;
	bool hit = false;

	if (tree_opendir(t, dir, &d) != RC_OK)
		return false;
	for (size_t i = 0; i < tree_dir_count(d) && !hit; i++) {
		const char *p = tree_dir_name(d, i);
		size_t n = strlen(p);

		hit = strncmp(name, p, n) == 0 && name[n] != '\0';
	}
	tree_closedir(t, d);
	return hit;
}

/*
 * Whether a new name in textures/ may be an editor's temporary: hidden (GIO's
 * .goutputstream-*, rsync's .T.png.*), a backup (T.png~), or a picture's name with a suffix
 * (T.png.XXXXXX). Anything else would be a file the mount cannot keep: it lives in the daemon
 * only, is never listed and is gone at unmount, so it is refused rather than lost
 * (docs/texture-mods.md, "The writable mount").
 */
static bool temp_name(struct tree *t, tree_ino dir, const char *name)
{
	size_t n = strlen(name);

	if (adds_texture(name))
		return false;
	return name[0] == '.' || (n && name[n - 1] == '~') || extends_picture(t, dir, name);
}

static enum rc refuse_new_name(struct mods *m, tree_ino dir, const char *name)
{
	if (adds_texture(name))
		mods_log(
		    m, ino_slot(dir), true,
		    "textures/%s: refused: no texture of this arena has that name, and texture "
		    "mods cannot add one (write over one of its pictures)",
		    name);
	else
		mods_log(
		    m, ino_slot(dir), true,
		    "textures/%s: refused: not a picture of this arena nor a temporary's name "
		    "(hidden, ending in '~', or a picture's name with a suffix); a file of that "
		    "name would be lost at unmount",
		    name);
	return RC_DENIED;
}

/* The node `name` of folder `parent` leads to, from the mount's own listing (not temporaries). */
static enum rc child_of(struct tree *t, tree_ino parent, const char *name, tree_ino *child)
{
	struct tree_dir *d;
	enum rc r = tree_opendir(t, parent, &d);

	*child = 0;
	if (r != RC_OK)
		return r;
	for (size_t i = 0; i < tree_dir_count(d) && !*child; i++)
		if (!strcmp(tree_dir_name(d, i), name))
			*child = tree_dir_ino(d, i);
	tree_closedir(t, d);
	return *child ? RC_OK : RC_NOENT;
}

/* ---- open files ---- */

static enum rc new_file(struct mods *m, tree_ino ino, struct mod_temp *tp,
			struct tree_mods_file **out)
{
	struct tree_mods_file *f = calloc(1, sizeof *f);

	if (!f)
		return RC_NOMEM;
	f->m = m;
	f->ino = ino;
	f->tmp = tp;
	f->own.fd = -1;
	*out = f;
	return RC_OK;
}

/* A writer's file in OUTDIR could not be made: errors.txt says why (the name, or picture pic's). */
static void log_no_file(struct mods *m, uint32_t slot, const char *name, tree_ino pic, int e)
{
	char nm[NAME_MAX + 1];

	if (!name)
		mods_name_of(m->t, pic, nm, sizeof nm);
	if (e == ENOENT)
		mods_log(
		    m, slot, true,
		    "textures/%s: not written: the mods folder %s is gone (removed while mounted; "
		    "saves work again once it is re-created)",
		    name ? name : nm, m->dir);
	else
		mods_log(m, slot, true,
			 "textures/%s: not written: cannot make a file in the mods "
			 "folder %s: %s",
			 name ? name : nm, m->dir, strerror(e));
}

/* A writer of picture ino: its own copy, over the picture as it is unless truncated. */
static enum rc open_picture(struct tree *t, tree_ino ino, bool trunc, struct tree_mods_file **out)
{
	struct mods *m = t->mods;
	struct tree_stat st;
	char gone[NAME_MAX + 1];
	tree_ino gone_dir;
	enum rc r = trunc ? RC_OK : tree_getattr(t, ino, &st);

	if (r != RC_OK)
		return r;
	pthread_mutex_lock(&m->mu);
	r = mods_temps_room(m, gone, sizeof gone, &gone_dir) ? RC_OK : RC_NOSPACE;
	m->n_open += r == RC_OK;
	pthread_mutex_unlock(&m->mu);
	mods_log_discarded(m, gone, gone_dir);
	if (r == RC_OK)
		r = new_file(m, ino, NULL, out);
	if (r == RC_OK) {
		r = mods_content_init(m, &(*out)->own, ino, trunc ? 0 : st.size);
		if (r != RC_OK && r != RC_NOMEM)
			log_no_file(m, ino_slot(ino), NULL, ino, errno);
		else
			(*out)->own.dirty = trunc; /* an emptied picture is a change */
	}
	if (r != RC_OK) {
		if (*out)
			free(*out);
		*out = NULL;
		pthread_mutex_lock(&m->mu);
		m->n_open--;
		pthread_mutex_unlock(&m->mu);
	}
	return r;
}

/* Another descriptor of temporary tp (m->mu held). */
static enum rc open_temp(struct mods *m, struct mod_temp *tp, bool trunc,
			 struct tree_mods_file **out)
{
	enum rc r = new_file(m, mods_temp_ino(tp), tp, out);

	if (r != RC_OK)
		return r;
	tp->opens++;
	if (trunc)
		r = mods_content_truncate(&tp->c, 0);
	if (r != RC_OK) {
		tp->opens--;
		free(*out);
		*out = NULL;
	}
	return r;
}

enum rc tree_mods_open(struct tree *t, tree_ino ino, bool trunc, struct tree_mods_file **out)
{
	struct mods *m = t->mods;
	struct mod_temp *tp;
	enum tree_texnode k;
	enum rc r = RC_NOENT;

	*out = NULL;
	if (!m)
		return RC_READONLY;
	if (mods_is_temp(ino)) {
		tree_ino alias = 0;

		pthread_mutex_lock(&m->mu);
		tp = mods_temp_by_ino(m, ino);
		if (tp && tp->alias)
			alias = tp->alias; /* renamed over a picture: the name is the picture's */
		else if (tp && tp->c.fd >= 0)
			r = open_temp(m, tp, trunc, out);
		pthread_mutex_unlock(&m->mu);
		return alias ? tree_mods_open(t, alias, trunc, out) : r;
	}
	r = node_kind(t, ino, &k);
	if (r != RC_OK)
		return r;
	if (!is_picture(k))
		return RC_READONLY;
	return open_picture(t, ino, trunc, out);
}

enum rc tree_mods_open_reader(struct tree *t, tree_ino ino, struct tree_mods_file **out,
			      bool *direct)
{
	struct cache_ent *pin;
	struct asset *as;
	uint32_t row;
	enum rc r = RC_OK;

	*out = NULL;
	*direct = false;
	if (!t->mods || tree_ino_is_container(t, ino))
		return RC_OK;
	as = tree_asset_get(t, ino_slot(ino), &pin, &r);
	if (!as)
		return RC_OK; /* opened as any node: its reads say what fails */
	if (is_picture(mods_texnode(as, tnode_unpack((uint32_t)ino), &row))) {
		r = new_file(t->mods, ino, NULL, out);
		if (r == RC_OK) {
			(*out)->reader = true;
			(*out)->epoch = as->epoch;
			/* The page cache holds only what the first content gave (its readers
			 * read nothing else): a later content's readers go around it. */
			*direct = as->epoch != 0;
		}
	}
	tree_asset_put(t, pin);
	return r;
}

bool tree_mods_is_reader(const struct tree_mods_file *f)
{
	return f && f->reader;
}

enum rc tree_mods_read_view(struct tree_mods_file *f, uint64_t off, size_t len, struct tree_rdv *v)
{
	enum rc r = tree_read_begin(f->m->t, f->ino, off, len, v);

	if (r == RC_OK && v->epoch != f->epoch) { /* saved since it was opened: never a mix */
		tree_read_end(v);
		r = RC_IO;
	}
	return r;
}

static bool name_ok(const char *name)
{
	size_t n = strlen(name);

	return n && n <= NAME_MAX && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

static enum rc new_temp(struct tree *t, tree_ino parent, const char *name, uid_t uid, gid_t gid,
			struct mod_temp **out)
{
	struct mods *m = t->mods;
	struct mod_temp *tp = calloc(1, sizeof *tp);
	enum rc r = tp && (tp->name = strdup(name)) ? mods_content_init(m, &tp->c, 0, 0) : RC_NOMEM;

	if (r != RC_OK) {
		if (tp)
			free(tp->name);
		free(tp);
		return r;
	}
	tp->parent = parent;
	tp->perm = 0644;
	tp->uid = uid;
	tp->gid = gid;
	clock_gettime(CLOCK_REALTIME, &tp->mtime);
	*out = tp;
	return RC_OK;
}

enum rc tree_mods_create(struct tree *t, tree_ino parent, const char *name, bool excl, bool trunc,
			 uid_t uid, gid_t gid, struct tree_stat *st, struct tree_mods_file **out)
{
	struct mods *m = t->mods;
	struct mod_temp *tp, *fresh = NULL;
	char gone[NAME_MAX + 1];
	tree_ino child, gone_dir = 0;
	enum tree_texnode k;
	enum rc r;
	bool refused = false, temp_ok;

	*out = NULL;
	if (!m)
		return RC_READONLY;
	r = node_kind(t, parent, &k);
	if (r != RC_OK || k != TEX_DIR)
		return r != RC_OK ? r : RC_READONLY;
	if (!name_ok(name))
		return RC_INVAL;
	r = child_of(t, parent, name, &child);
	if (r == RC_OK) { /* a picture, or another file */
		if (excl)
			return RC_EXISTS;
		r = tree_mods_open(t, child, trunc, out);
		return r == RC_OK ? tree_mods_fgetattr(*out, st) : r;
	}
	if (r != RC_NOENT)
		return r;
	temp_ok = temp_name(t, parent, name);
	pthread_mutex_lock(&m->mu);
	tp = mods_temp_by_name(m, parent, name);
	pthread_mutex_unlock(&m->mu);
	if (!tp && !temp_ok)
		return refuse_new_name(m, parent, name);
	r = new_temp(t, parent, name, uid, gid, &fresh);
	if (r != RC_OK) {
		if (r != RC_NOMEM)
			log_no_file(m, ino_slot(parent), name, 0, errno);
		return r;
	}
	pthread_mutex_lock(&m->mu);
	tp = mods_temp_by_name(m, parent, name);
	if (tp && excl) {
		r = RC_EXISTS;
	} else if (!tp && !temp_ok) { /* the temporary went while unlocked */
		r = RC_DENIED;
		refused = true;
	} else if (!tp && !mods_temps_room(m, gone, sizeof gone, &gone_dir)) {
		r = RC_NOSPACE;
	} else if (!tp) {
		tp = fresh;
		fresh = NULL;
		tp->id = ++m->next_temp;
		tp->next = m->temps;
		m->temps = tp;
		m->n_open++; /* a temporary counts as an open file until it is gone */
	}
	if (r == RC_OK)
		r = open_temp(m, tp, trunc, out);
	if (r == RC_OK)
		mods_temp_stat(tp, st);
	pthread_mutex_unlock(&m->mu);
	mods_log_discarded(m, gone, gone_dir);
	if (fresh)
		mods_temp_free(fresh);
	return refused ? refuse_new_name(m, parent, name) : r;
}

static struct mod_content *content_of(struct tree_mods_file *f)
{
	return f->tmp ? &f->tmp->c : &f->own;
}

enum rc tree_mods_write(struct tree_mods_file *f, uint64_t off, const void *p, size_t n)
{
	enum rc r = f->reader ? RC_INVAL : mods_content_write(content_of(f), off, p, n);

	if (r == RC_OK && f->tmp)
		clock_gettime(CLOCK_REALTIME, &f->tmp->mtime);
	return r;
}

enum rc tree_mods_read(struct tree_mods_file *f, uint64_t off, size_t n, void *dst, size_t *got)
{
	struct tree_rdv v;
	size_t at = 0;
	enum rc r;

	if (!f->reader)
		return mods_content_read(f->m, content_of(f), off, n, dst, got);
	*got = 0;
	r = tree_mods_read_view(f, off, n, &v);
	for (unsigned i = 0; r == RC_OK && i < v.n; i++) {
		memcpy((uint8_t *)dst + at, v.base[i], v.len[i]);
		at += v.len[i];
	}
	if (r == RC_OK)
		tree_read_end(&v);
	*got = at;
	return r;
}

enum rc tree_mods_fgetattr(struct tree_mods_file *f, struct tree_stat *st)
{
	enum rc r = RC_OK;

	if (f->tmp) {
		pthread_mutex_lock(&f->m->mu);
		mods_temp_stat(f->tmp, st);
		pthread_mutex_unlock(&f->m->mu);
		return RC_OK;
	}
	r = tree_getattr(f->m->t, f->ino, st);
	if (r == RC_OK && !f->reader)
		st->size = f->own.size; /* what this writer's file holds */
	return r;
}

enum rc tree_mods_truncate(struct tree *t, tree_ino ino, struct tree_mods_file *f, uint64_t size,
			   struct tree_stat *st)
{
	struct mods *m = t->mods;
	struct tree_mods_file *tf = NULL;
	enum rc r;

	if (!m)
		return RC_READONLY;
	if (!f) { /* truncate(2) by name: a temporary only; a picture needs a writer */
		r = mods_is_temp(ino) ? tree_mods_open(t, ino, false, &tf) : RC_READONLY;
		if (r != RC_OK)
			return r;
		f = tf;
	}
	r = f->reader ? RC_INVAL : mods_content_truncate(content_of(f), size);
	if (r == RC_OK)
		r = tree_mods_fgetattr(f, st);
	if (tf)
		tree_mods_release(tf);
	return r;
}

enum rc tree_mods_flush(struct tree_mods_file *f)
{
	struct mod_content *c = &f->own;
	bool dirty;

	if (f->tmp || f->reader)
		return RC_OK; /* a temporary becomes a picture when renamed over one */
	pthread_mutex_lock(&c->mu);
	/* An emptied file is no picture yet: `cmd > file` closes the descriptor it opened before
	 * the command writes through its copy. */
	dirty = c->dirty && c->size > 0;
	if (dirty) {
		c->dirty = false;
		f->last = mods_commit(f->m, f->ino, c);
	}
	pthread_mutex_unlock(&c->mu);
	return f->last;
}

void tree_mods_release(struct tree_mods_file *f)
{
	struct mods *m;

	if (!f)
		return;
	m = f->m;
	pthread_mutex_lock(&m->mu);
	if (f->tmp) {
		f->tmp->opens--;
		mods_temps_trim(m);
	} else if (!f->reader) {
		m->n_open--;
	}
	pthread_mutex_unlock(&m->mu);
	if (!f->tmp && f->own.fd >= 0)
		mods_content_free(&f->own);
	free(f);
}

enum rc tree_mods_unlink(struct tree *t, tree_ino parent, const char *name)
{
	struct mods *m = t->mods;
	struct mod_temp *tp;
	tree_ino child;

	if (!m)
		return RC_READONLY;
	pthread_mutex_lock(&m->mu);
	tp = mods_temp_by_name(m, parent, name);
	if (tp)
		mods_temp_gone(m, tp, 0);
	pthread_mutex_unlock(&m->mu);
	if (tp)
		return RC_OK;
	return child_of(t, parent, name, &child) == RC_OK ? RC_READONLY : RC_NOENT;
}

/* Rename temporary tp over picture `pic`: the picture is written from it. */
static enum rc rename_over_picture(struct tree *t, struct mod_temp *tp, tree_ino newparent,
				   const char *newname, tree_ino pic)
{
	struct mods *m = t->mods;
	enum rc r;

	pthread_mutex_lock(&tp->c.mu);
	r = mods_commit(m, pic, &tp->c);
	pthread_mutex_unlock(&tp->c.mu);
	pthread_mutex_lock(&m->mu);
	tp->opens--; /* held by the caller for the commit */
	if (r == RC_OK)
		mods_temp_gone(m, tp, pic);
	else if (r == RC_INVAL) /* refused (errors.txt says why): it would never be a picture */
		mods_temp_gone(m, tp, 0);
	else
		mods_temps_trim(m);
	pthread_mutex_unlock(&m->mu);
	/* The kernel now holds the temporary's inode under the picture's name. */
	if (r == RC_OK && t->on_entry)
		t->on_entry(t->on_entry_ctx, newparent, newname);
	return r;
}

/* Rename temporary tp to a name that is no picture (m->mu held). */
static enum rc rename_temp(struct mods *m, struct mod_temp *tp, tree_ino newparent,
			   const char *newname, unsigned flags)
{
	struct mod_temp *dst = mods_temp_by_name(m, newparent, newname);
	char *nn;

	if (dst == tp)
		return RC_OK;
	if (dst && (flags & RENAME_NOREPLACE))
		return RC_EXISTS;
	if (!(nn = strdup(newname)))
		return RC_NOMEM;
	if (dst)
		mods_temp_gone(m, dst, 0);
	free(tp->name);
	tp->name = nn;
	tp->parent = newparent;
	return RC_OK;
}

enum rc tree_mods_rename(struct tree *t, tree_ino parent, const char *name, tree_ino newparent,
			 const char *newname, unsigned flags)
{
	struct mods *m = t->mods;
	struct mod_temp *tp;
	tree_ino child = 0, pic = 0;
	enum tree_texnode k;
	enum rc r;
	bool temp_ok;

	if (!m)
		return RC_READONLY;
	if (flags & ~(unsigned)RENAME_NOREPLACE)
		return RC_INVAL; /* RENAME_EXCHANGE, RENAME_WHITEOUT */
	r = node_kind(t, newparent, &k);
	if (r != RC_OK || k != TEX_DIR)
		return r != RC_OK ? r : RC_READONLY;
	if (!name_ok(newname))
		return RC_INVAL;
	r = child_of(t, newparent, newname, &child);
	if (r != RC_OK && r != RC_NOENT)
		return r;
	if (r == RC_OK) {
		r = node_kind(t, child, &k);
		if (r != RC_OK || !is_picture(k))
			return r != RC_OK ? r : RC_READONLY;
		if (flags & RENAME_NOREPLACE)
			return RC_EXISTS;
		pic = child;
	}
	temp_ok = pic || temp_name(t, newparent, newname);
	pthread_mutex_lock(&m->mu);
	tp = mods_temp_by_name(m, parent, name);
	if (tp && !pic && !mods_temp_by_name(m, newparent, newname) && !temp_ok) {
		pthread_mutex_unlock(&m->mu);
		return refuse_new_name(m, newparent, newname);
	}
	if (tp && pic)
		tp->opens++; /* kept while its picture is written */
	r = !tp ? RC_NOENT : pic ? RC_OK : rename_temp(m, tp, newparent, newname, flags);
	pthread_mutex_unlock(&m->mu);
	if (!tp)
		return child_of(t, parent, name, &child) == RC_OK ? RC_READONLY : RC_NOENT;
	return pic ? rename_over_picture(t, tp, newparent, newname, pic) : r;
}

/* A temporary keeps what it is given (editors copy the picture's mode onto theirs). */
static enum rc temp_setattr(struct tree *t, tree_ino ino, unsigned what,
			    const struct tree_stat *want, struct tree_stat *st)
{
	struct mods *m = t->mods;
	struct mod_temp *tp;
	tree_ino alias;

	pthread_mutex_lock(&m->mu);
	tp = mods_temp_by_ino(m, ino);
	alias = tp ? tp->alias : 0;
	if (tp && !alias) {
		if (what & TREE_SET_MODE)
			tp->perm = want->perm & 07777;
		if (what & TREE_SET_UID)
			tp->uid = want->uid;
		if (what & TREE_SET_GID)
			tp->gid = want->gid;
		if (what & TREE_SET_MTIME)
			tp->mtime = want->mtime;
	}
	pthread_mutex_unlock(&m->mu);
	if (!tp)
		return RC_NOENT;
	return alias ? tree_mods_setattr(t, alias, what, want, st) : mods_temp_getattr(t, ino, st);
}

enum rc tree_mods_setattr(struct tree *t, tree_ino ino, unsigned what, const struct tree_stat *want,
			  struct tree_stat *st)
{
	char name[NAME_MAX + 1];
	enum tree_texnode k;
	enum rc r;

	if (!t->mods)
		return RC_READONLY;
	if (mods_is_temp(ino))
		return temp_setattr(t, ino, what, want, st);
	r = node_kind(t, ino, &k);
	if (r != RC_OK)
		return r;
	if (k == TEX_NOT)
		return RC_READONLY;
	if (what && is_picture(k)) { /* they are the arena's: nothing written would keep them */
		mods_name_of(t, ino, name, sizeof name);
		mods_log(t->mods, ino_slot(ino), true,
			 "textures/%s: refused to change its %s: a picture's mode, owner and times "
			 "are its arena's",
			 name,
			 what & TREE_SET_MODE			? "mode"
			 : what & (TREE_SET_UID | TREE_SET_GID) ? "owner"
								: "times");
		return RC_DENIED;
	}
	return what ? RC_DENIED : tree_getattr(t, ino, st);
}
