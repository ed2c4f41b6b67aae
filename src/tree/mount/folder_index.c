/*
 * Folder mounts (folder_int.h): the mount's indexes of texture arenas, by name and by the GUIDs
 * of their TableOfContents, and slots by path.
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

/* ---- per-texture arenas by name (guid_index.h) ---- */

/* Directories already walked, by identity: a bind mount inside DIR cannot loop the walk. */
struct seen {
	struct {
		dev_t dev;
		ino_t ino;
	} * v;
	size_t n, cap; /* cap: a power of two, 0 before the first */
};

static size_t seen_hash(dev_t dev, ino_t ino, size_t cap)
{
	return (size_t)(((uint64_t)ino * 0x9e3779b97f4a7c15ull) ^ (uint64_t)dev) & (cap - 1);
}

/* True when (dev, ino) is new (and now recorded); false when seen or out of memory. */
static bool seen_add(struct seen *s, dev_t dev, ino_t ino)
{
	size_t h;

	if (2 * (s->n + 1) > s->cap) {
		struct seen old = *s;
		size_t cap = old.cap ? old.cap * 2 : 64;

		s->v = calloc(cap, sizeof *s->v);
		if (!s->v) {
			*s = old;
			return false;
		}
		s->cap = cap;
		s->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.v[i].ino)
				seen_add(s, old.v[i].dev, old.v[i].ino);
		free(old.v);
	}
	for (h = seen_hash(dev, ino ? ino : 1, s->cap); s->v[h].ino; h = (h + 1) & (s->cap - 1))
		if (s->v[h].dev == dev && s->v[h].ino == (ino ? ino : 1))
			return false;
	s->v[h].dev = dev;
	s->v[h].ino = ino ? ino : 1;
	s->n++;
	return true;
}

/* One folder: GUID-named files fed to ix (when not NULL), files named like an arena pushed on
 * arenas (when not NULL), subfolders pushed. Names only: no file is opened. */
static void walk_one(struct folder *f, const char *rel, struct name_list *w, struct seen *seen,
		     struct guid_index *ix, struct name_list *arcs, struct name_list *arenas)
{
	int fd = name_open_dir(f->root_fd, rel);
	struct stat dst;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	if (fstat(fd, &dst) != 0 || !seen_add(seen, dst.st_dev, dst.st_ino) ||
	    !(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		unsigned char type = de->d_type;
		uint64_t guid;
		struct stat st;
		bool is_guid = guid_index_name(de->d_name, &guid);

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fold_is_mount_point(f, dst.st_dev, de->d_ino))
			continue;
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
		}
		if (type == DT_DIR && !fold_on_own_mount(f, dirfd(d), de->d_name)) {
			name_list_push(w, rel, de->d_name);
		} else if (type == DT_REG && arenas && fmt_name_is(de->d_name, FMT_PSG)) {
			name_list_push(arenas, rel, de->d_name);
		} else if (type == DT_REG && is_guid && ix) {
			char *p = NULL;

			if (asprintf(&p, "%s%s%s", rel, *rel ? "/" : "", de->d_name) >= 0)
				guid_index_feed(ix, p, 0);
			free(p);
		} else if (type == DT_REG && fmt_by_name(de->d_name, FMT_ARCHIVE)) {
			name_list_push(arcs, rel,
				       de->d_name); /* its entries: fed once it is built */
		}
	}
	closedir(d);
}

/* Archives nested in the mount's archives each index build opens at most (tables only: an
 * SFIL header, its asset records and ATOC): a district's stream files inside its .big, the
 * .big of a DLC pack. Past it the rest is left out and the index is partial. Tests lower it. */
#define TEX_NESTED_MAX 4096u
_Atomic uint32_t folder_nested_max = TEX_NESTED_MAX;

/* The archive of the mount at rel (its tables read), NULL if none. */
static struct arcdir *archive_at(struct tree *t, const char *rel)
{
	uint32_t slot = folder_slot_at(t, rel);
	struct fentry *e = slot ? fentry_get(t, slot) : NULL;

	return e && e->archive && fold_open_archive(t, e) == RC_OK ? e->arc : NULL;
}

/* An archive of the mount built (its 0x<GUID> entries fed to the name index by
 * arcdir_ensure) and the archives nested in it that arcdir_walk_nested's pass 0 takes (archives
 * of archives and Tex streams, not the Pres and Sim collections: a texture GUID they alone hold
 * is found by the TOC index, whose walk takes both passes), within *left. False once the
 * index is partial. */
static bool guid_feed_archive(struct guid_index *ix, struct arcdir *ad, uint32_t *left)
{
	if (!ad || arcdir_ensure(ad) != RC_OK || arcdir_walk_nested(ad, 0, left, NULL, NULL))
		return true;
	guid_index_set_partial(ix);
	return false;
}

/* The build of the mount's GUID index: every source folder below DIR read by name (as the
 * folder layer would show them: links not followed, the mount point and paths into this
 * mount left out), each GUID-named regular file fed by its path. */
void folder_guid_build(void *ctx, struct guid_index *ix)
{
	struct tree *t = ctx;
	struct folder *f = t->fold;
	struct name_list w = {0}, arcs = {0};
	struct seen seen = {0};
	uint32_t nested = atomic_load(&folder_nested_max);

	/* A single archive's mount: its entries are all there is (fed by arcdir_ensure). */
	if (f->root.archive) {
		guid_feed_archive(ix, f->root.arc, &nested);
		return;
	}
	if (!name_list_push(&w, "", ""))
		return;
	while (w.n) {
		char *rel = w.v[--w.n];

		walk_one(f, rel, &w, &seen, ix, &arcs, NULL);
		free(rel);
	}
	/* Archives by name (.big, .psf, .xsf): their tables read, their entries fed, in path
	 * order, with the archives nested in them that guid_feed_archive takes. */
	if (arcs.n)
		qsort(arcs.v, arcs.n, sizeof *arcs.v, name_cmp_str);
	for (size_t i = 0, more = 1; i < arcs.n && more; i++)
		more = guid_feed_archive(ix, archive_at(t, arcs.v[i]), &nested);
	for (size_t i = 0; i < arcs.n; i++)
		free(arcs.v[i]);
	free(arcs.v);
	free(w.v);
	free(seen.v);
}

struct guid_index *folder_guid_index(struct tree *t)
{
	return t->fold ? t->fold->gix : NULL;
}

/* ---- texture arenas by their TableOfContents (docs/skate-objects.md) ---- */

/* Bounds of the build: bytes read per arena (header, dictionary, TOC; never texel data),
 * bytes read in all (the build runs inside one FUSE request: a mount of thousands of arenas
 * must not read gigabytes there), texture GUIDs kept per arena, arenas read, and the index's
 * memory (its entries and their paths, charged to the cache budget): at most 8 MiB, about
 * 100,000 entries. Past a bound the rest is left out; a GUID found only there does not link.
 * Stopping at the read budget or the arena count marks the index partial (material.txt says
 * so for a GUID it did not find). */
#define TOC_SCAN_BYTES	(1u << 20)
#define TOC_SCAN_TOTAL	(256ull << 20)
#define TOC_SCAN_GUIDS	4096u
#define TOC_SCAN_ARENAS 8192u
#define TOC_INDEX_BYTES (8u << 20)

struct toc_build {
	struct tree *t;
	struct guid_index *ix;
	size_t arenas, bytes;
	uint64_t read;	 /* bytes read from arenas so far, against folder_toc_budget */
	uint32_t nested; /* nested archives it may still open (TEX_NESTED_MAX) */
};

_Atomic uint64_t folder_toc_budget = TOC_SCAN_TOTAL;

/* Reads through to the arena, counting what they take against the build's total. */
struct toc_counted {
	const struct src *s;
	uint64_t *read;
};

static enum rc toc_counted_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct toc_counted *c = ctx;

	*c->read += n;
	return src_read(c->s, off, dst, n);
}

/* One arena's texture GUIDs fed under its path (slot: 0 when not known yet). */
static void toc_feed(struct toc_build *b, const char *path, uint32_t slot, const struct src *s)
{
	uint64_t *g;
	size_t n,
	    each = sizeof(uint64_t) + 2 * sizeof(uint32_t) + sizeof(char *) + strlen(path) + 1;

	struct toc_counted c = {s, &b->read};
	struct src cs = {toc_counted_read, &c, s->size};
	uint64_t total = atomic_load(&folder_toc_budget);
	uint64_t left = total - (b->read < total ? b->read : total);
	enum rc r;

	if (b->arenas >= TOC_SCAN_ARENAS || !left) {
		guid_index_set_partial(b->ix);
		return;
	}
	b->arenas++;
	r = skate_toc_texture_guids(&cs, left < TOC_SCAN_BYTES ? left : TOC_SCAN_BYTES,
				    TOC_SCAN_GUIDS, &g, &n);
	if (r == RC_TOOBIG && left < TOC_SCAN_BYTES) { /* the budget, not the arena: stop */
		b->read = total;
		guid_index_set_partial(b->ix);
	}
	if (r != RC_OK)
		return;
	for (size_t k = 0; k < n && b->bytes + each <= TOC_INDEX_BYTES; k++)
		if (guid_index_feed_guid(b->ix, path, g[k], slot) == RC_OK)
			b->bytes += each;
	free(g);
}

static void toc_feed_file(struct toc_build *b, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	char *dir = slash ? strndup(rel, (size_t)(slash - rel)) : strdup("");
	int dfd = dir ? name_open_dir(b->t->fold->root_fd, dir) : -1;
	int fd = dfd >= 0 ? openat(dfd, slash ? slash + 1 : rel,
				   O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
			  : -1;
	struct stat st;
	struct src s;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		src_init_fd(&s, &fd, (uint64_t)st.st_size);
		toc_feed(b, rel, 0, &s);
	}
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(dir);
}

static void toc_feed_entry(void *ctx, const char *path, uint32_t slot, const struct src *s)
{
	toc_feed(ctx, path, slot, s);
}

static void toc_feed_nested(void *ctx, struct arcdir *ad)
{
	arcdir_each_arena(ad, toc_feed_entry, ctx);
}

/* Pass 0: an archive's arenas, then those of the archives nested in it that pass 0 takes;
 * pass 1: the others (arcdir_walk_nested). False once the index is partial. */
static bool toc_feed_arcdir(struct toc_build *b, struct arcdir *ad, int pass)
{
	if (!ad || arcdir_ensure(ad) != RC_OK)
		return true;
	if (!pass)
		arcdir_each_arena(ad, toc_feed_entry, b);
	if (arcdir_walk_nested(ad, pass, &b->nested, toc_feed_nested, b))
		return true;
	guid_index_set_partial(b->ix);
	return false;
}

/* The build of the mount's TOC index: every file named like an arena (.psg, .rx2) below DIR
 * found as the name index's walk finds files, in path order, and the arena entries of the
 * archives of the mount, each read for its texture GUIDs within the bounds above. */
void folder_toc_build(void *ctx, struct guid_index *ix)
{
	struct tree *t = ctx;
	struct folder *f = t->fold;
	struct name_list w = {0}, arcs = {0}, arenas = {0};
	struct seen seen = {0};
	struct toc_build b = {.t = t, .ix = ix, .nested = atomic_load(&folder_nested_max)};

	/* A single archive's mount: its entries are all there is (opened at mount). */
	if (f->root.archive) {
		if (toc_feed_arcdir(&b, f->root.arc, 0))
			toc_feed_arcdir(&b, f->root.arc, 1);
		goto out;
	}
	if (!name_list_push(&w, "", ""))
		return;
	while (w.n) {
		char *rel = w.v[--w.n];

		walk_one(f, rel, &w, &seen, NULL, &arcs, &arenas);
		free(rel);
	}
	if (arenas.n)
		qsort(arenas.v, arenas.n, sizeof *arenas.v, name_cmp_str);
	if (arcs.n)
		qsort(arcs.v, arcs.n, sizeof *arcs.v, name_cmp_str);
	for (size_t i = 0; i < arenas.n; i++) {
		toc_feed_file(&b, arenas.v[i]);
		free(arenas.v[i]);
	}
	for (int pass = 0, more = 1; pass < 2 && more; pass++)
		for (size_t i = 0; i < arcs.n && more; i++)
			more = toc_feed_arcdir(&b, archive_at(t, arcs.v[i]), pass);
	for (size_t i = 0; i < arcs.n; i++)
		free(arcs.v[i]);
out:
	cache_charge(t->cache, b.bytes);
	free(arenas.v);
	free(arcs.v);
	free(w.v);
	free(seen.v);
}

struct guid_index *folder_toc_index(struct tree *t)
{
	return t->fold ? t->fold->tix : NULL;
}

uint32_t folder_slot_at(struct tree *t, const char *path)
{
	struct folder *f = t->fold;
	uint32_t slot = 0;
	const char *p = path;

	while (*p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		struct fentry *dir = fentry_get(t, slot), *hit = NULL;
		bool listed;

		if (!dir || dir->type != FE_DIR)
			return 0;
		pthread_mutex_lock(&f->mu);
		listed = dir->listed;
		pthread_mutex_unlock(&f->mu);
		if (!listed && fold_read_folder(t, dir) != RC_OK)
			return 0;
		pthread_mutex_lock(&f->mu);
		for (size_t i = 0; i < dir->n_kids && !hit; i++) {
			struct fentry *k = fentry_find(f, dir->kids[i]);

			if (strlen(k->name) == len && memcmp(k->name, p, len) == 0)
				hit = k;
		}
		pthread_mutex_unlock(&f->mu);
		if (!hit)
			return 0;
		slot = hit->slot;
		p += len + (slash != NULL);
	}
	return slot;
}
