/*
 * The loose view at mount (loose.c, loose_int.h): game paths, the folder walked by name, the
 * namespace built from the archives' tables and OUTDIR's files; and the archives' descriptors,
 * at most max_assets open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/registry.h"
#include "tree/mount/arcdir.h"
#include "tree/mount/loose.h"

#include "tree/mount/loose_int.h"

/* ---- paths ---- */

static bool is_sep(char c)
{
	return c == '/' || c == '\\';
}

static bool comp_is(const char *p, size_t len, const char *word)
{
	return len == strlen(word) && strncasecmp(p, word, len) == 0;
}

bool loose_game_path(const char *raw, char *out, size_t n, bool *changed)
{
	const char *p = raw, *first = NULL, *second = NULL;
	size_t at = 0, first_len = 0, second_len = 0, comps = 0;
	char name[ARCDIR_NAME_BUF];

	*changed = false;
	if (n == 0)
		return false;
	/* The components as shown: "data/content/x.psg", whatever the separators. */
	while (*p) {
		size_t len = 0, nl;
		bool ch;

		while (is_sep(*p))
			p++;
		while (p[len] && !is_sep(p[len]))
			len++;
		if (len == 0 || (len == 1 && p[0] == '.')) {
			p += len;
			continue;
		}
		nl = arcdir_safe_name(p, len, name, &ch);
		*changed |= ch;
		if (at + nl + 2 > n)
			return false;
		if (comps == 0)
			first = out + at, first_len = nl;
		else if (comps == 1)
			second = out + at, second_len = nl;
		memcpy(out + at, name, nl);
		at += nl;
		out[at++] = '/';
		comps++;
		p += len;
	}
	if (comps == 0)
		return false;
	out[--at] = '\0';
	/* A PS3 archive packed from PS3_GAME: USRDIR/data/... is data/... of the game folder. */
	if (comps >= 2 && comp_is(first, first_len, "USRDIR") &&
	    comp_is(second, second_len, "data")) {
		memmove(out, out + first_len + 1, at - first_len);
		*changed = true;
	} else if (comp_is(first, first_len, "content")) { /* packed from data/ itself */
		if (at + 5 + 1 > n)
			return false;
		memmove(out + 5, out, at + 1);
		memcpy(out, "data/", 5);
		*changed = true;
	}
	if (!*changed && strcmp(out, raw) != 0)
		*changed = true;
	return true;
}

/* ---- the namespace while it is built ---- */

static bool names_add(struct loose *L, const char *s, size_t len, uint32_t *at)
{
	char *v;

	if (L->names_len + len + 1 > UINT32_MAX)
		return false;
	v = xgrow_n(L->names, L->names_len + len, &L->names_cap, 1, 4096);
	if (!v)
		return false;
	L->names = v;
	memcpy(v + L->names_len, s, len);
	v[L->names_len + len] = '\0';
	*at = (uint32_t)L->names_len;
	L->names_len += len + 1;
	return true;
}

static size_t hash_of(uint32_t parent, const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull ^ parent;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return (size_t)(h ^ h >> 29);
}

static uint32_t node_find(const struct loose *L, uint32_t parent, const char *s)
{
	for (size_t b = hash_of(parent, s) & L->mask; L->map[b]; b = (b + 1) & L->mask) {
		const struct lnode *k = &L->nodes[L->map[b] - 1];

		if (k->parent == parent && strcmp(L->names + k->name, s) == 0)
			return L->map[b] - 1;
	}
	return NO_NODE;
}

static void map_put(uint32_t *map, size_t mask, const struct loose *L, uint32_t k)
{
	size_t b = hash_of(L->nodes[k].parent, L->names + L->nodes[k].name) & mask;

	while (map[b])
		b = (b + 1) & mask;
	map[b] = k + 1;
}

static bool map_grow(struct loose *L)
{
	size_t mask = L->mask * 2 + 1;
	uint32_t *map = calloc(mask + 1, sizeof *map);

	if (!map)
		return false;
	for (uint32_t k = 1; k < L->n; k++)
		map_put(map, mask, L, k);
	free(L->map);
	L->map = map;
	L->mask = mask;
	return true;
}

static uint32_t node_new(struct loose *L, uint32_t parent, const char *s, uint8_t kind)
{
	struct lnode *v;
	uint32_t at;

	if (L->n >= L->mask / 2 && !map_grow(L))
		return NO_NODE;
	if (L->n == UINT32_MAX - 1 || !names_add(L, s, strlen(s), &at) ||
	    !(v = xgrow_n(L->nodes, L->n, &L->cap, sizeof *v, 256)))
		return NO_NODE;
	L->nodes = v;
	v[L->n] = (struct lnode){.parent = parent, .name = at, .kind = kind};
	map_put(L->map, L->mask, L, L->n);
	return L->n++;
}

/* Who holds node k, for the warning about a path it took. */
static const char *holder(const struct loose *L, uint32_t k)
{
	const struct lnode *nd = &L->nodes[k];

	if (nd->kind == LN_MOD)
		return "a file of OUTDIR";
	if (nd->kind == LN_ENTRY)
		return L->arcs[nd->src].path;
	return "a folder of an earlier source";
}

/*
 * Path `path` (as loose_game_path gives it) for a new node of this kind: made, with its
 * folders, unless an earlier source took it (the path itself, or a file where it needs a
 * folder). Only RC_NOMEM fails; a lost path is warned about (who: its source).
 */
static enum rc claim(struct loose *L, const char *path, uint8_t kind, uint32_t src, uint32_t idx,
		     const char *who)
{
	char comp[ARCDIR_NAME_BUF];
	const char *p = path;
	uint32_t cur = 0, k;

	for (;;) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);

		if (len >= sizeof comp)
			return RC_OK; /* cannot happen: components are safe names */
		memcpy(comp, p, len);
		comp[len] = '\0';
		k = node_find(L, cur, comp);
		if (!slash)
			break;
		if (k == NO_NODE && (k = node_new(L, cur, comp, LN_DIR)) == NO_NODE)
			return RC_NOMEM;
		if (L->nodes[k].kind != LN_DIR)
			break;
		cur = k;
		p = slash + 1;
	}
	if (k == NO_NODE) {
		if ((k = node_new(L, cur, comp, kind)) == NO_NODE)
			return RC_NOMEM;
		L->nodes[k].src = src;
		L->nodes[k].idx = idx;
		return RC_OK;
	}
	if (L->lost++ < WARN_MAX)
		fprintf(stderr, "psgfs: loose view: %s: %s not shown: taken by %s\n", who, path,
			holder(L, k));
	return RC_OK;
}

/* ---- walking a folder by name ---- */

static bool seen_add(struct fid **v, size_t *n, size_t *cap, dev_t dev, ino_t ino)
{
	struct fid *nv;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].dev == dev && (*v)[i].ino == ino)
			return false;
	nv = xgrow_n(*v, *n, cap, sizeof *nv, 64);
	if (!nv)
		return false;
	*v = nv;
	nv[(*n)++] = (struct fid){dev, ino};
	return true;
}

/* Every regular file below dfd that `want` takes (its path relative to dfd), sorted
 * bytewise; folders walked once each (a bind mount cannot loop it), links not followed. */
static bool walk(int dfd, bool (*want)(const char *name), struct name_list *out)
{
	struct name_list todo = {0};
	struct fid *seen = NULL;
	size_t n_seen = 0, cap_seen = 0;
	bool ok = name_list_push(&todo, "", "");

	while (ok && todo.n) {
		char *rel = todo.v[--todo.n];
		int fd = name_open_dir(dfd, rel);
		struct stat dst, st;
		struct dirent *de;
		DIR *d = NULL;

		if (fd >= 0 && fstat(fd, &dst) == 0 &&
		    seen_add(&seen, &n_seen, &cap_seen, dst.st_dev, dst.st_ino))
			d = fdopendir(fd);
		if (!d && fd >= 0)
			close(fd);
		while (ok && d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
				continue;
			if (S_ISDIR(st.st_mode))
				ok = name_list_push(&todo, rel, de->d_name);
			else if (S_ISREG(st.st_mode) && want(de->d_name))
				ok = name_list_push(out, rel, de->d_name);
		}
		if (d)
			closedir(d);
		free(rel);
	}
	name_list_free(&todo);
	free(seen);
	if (ok && out->n)
		qsort(out->v, out->n, sizeof *out->v, name_cmp_str);
	return ok;
}

/* The archives the game opens by name (.big: EB v3, BIGF, BIG4), by the registry's names; a
 * stream file (SFIL) is a file the game reads as it is. */
static bool is_big(const char *name)
{
	const struct fmt_row *r = fmt_by_name(name, FMT_ARCHIVE);

	return r && r->id != FMT_SFIL;
}

/* OUTDIR's files, but not the temporaries a crashed texture mod may have left there. */
static bool is_mod(const char *name)
{
	size_t n = strlen(name), t = strlen(".psgfs-tmp");

	return !(n > t && strcmp(name + n - t, ".psgfs-tmp") == 0);
}

/* ---- building the view ---- */

/* The file at rel below dfd, opened without following a link at its end, and its stat. */
static int open_file_at(int dfd, const char *rel, struct stat *st)
{
	const char *slash = strrchr(rel, '/');
	char *dir = slash ? strndup(rel, (size_t)(slash - rel)) : strdup("");
	int d = dir ? name_open_dir(dfd, dir) : -1, fd = -1;

	if (d >= 0)
		fd = openat(d, slash ? slash + 1 : rel,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
		close(fd);
		fd = -1;
	}
	if (d >= 0)
		close(d);
	free(dir);
	return fd;
}

/* What the view adds for an archive's entries, at most: a node, a kid, a map slot and a
 * name per entry (its folders share the rest). */
static uint64_t arc_cost(const struct arc *a)
{
	return (uint64_t)a->n * (sizeof(struct lnode) + 3 * sizeof(uint32_t)) + a->paths_len;
}

int loose_fid_cmp(const void *x, const void *y)
{
	const struct fid *a = x, *b = y;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (a->ino > b->ino) - (a->ino < b->ino);
}

/* The archive's own file, hidden from the folder's listing (loose_hides). */
static enum rc hide_file(struct loose *L, const struct stat *st)
{
	struct fid *h = xgrow_n(L->hidden, L->n_hidden, &L->cap_hidden, sizeof *h, 16);

	if (!h)
		return RC_NOMEM;
	L->hidden = h;
	h[L->n_hidden++] = (struct fid){st->st_dev, st->st_ino};
	return RC_OK;
}

/* Archive ai's entries, each at the path the game loads it from. */
static enum rc claim_entries(struct loose *L, const struct arc *a, uint32_t ai, const char *rel)
{
	char path[PATH_MAX];

	for (uint32_t i = 0; i < a->n; i++) {
		bool changed;

		if (loose_game_path(a->paths + a->e[i].path, path, sizeof path, &changed) &&
		    claim(L, path, LN_ENTRY, ai, i, rel) != RC_OK)
			return RC_NOMEM;
	}
	return RC_OK;
}

/* The archive at rel: its tables read, its entries claimed, its file hidden. */
static enum rc add_archive(struct loose *L, int root_fd, const char *rel, uint32_t slot)
{
	const char *name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	struct arcdir *ad = NULL;
	const struct arc *a;
	struct larc *v;
	struct stat st;
	char why[256];
	uint32_t ai;
	int fd = open_file_at(root_fd, rel, &st);

	if (fd < 0) {
		fprintf(stderr, "psgfs: loose view: %s: not unpacked: %s\n", rel, strerror(errno));
		return errno == ENOMEM ? RC_NOMEM : RC_OK;
	}
	if (arcdir_open_fd(L->t, fd, -1, &st, name, slot, &ad, why, sizeof why) == TREE_FAIL_OTHER)
		return RC_NOMEM;
	if (!ad || arcdir_why(ad)) {
		fprintf(stderr, "psgfs: loose view: %s: not unpacked (shown as the file): %s\n",
			rel, ad ? arcdir_why(ad) : why);
		if (ad)
			arcdir_fd_close(ad); /* never read again */
		return RC_OK;
	}
	a = arcdir_arc(ad);
	if (arc_cost(a) > cache_room(L->t->cache)) {
		arcdir_fd_close(ad);
		fprintf(stderr,
			"psgfs: loose view: %s: not unpacked (shown as the file): its %u entries "
			"need more than what is left of cache_size; mount with a larger -o "
			"cache_size\n",
			rel, a->n);
		return RC_OK;
	}
	v = xgrow_n(L->arcs, L->n_arcs, &L->cap_arcs, sizeof *v, 16);
	if (!v)
		return RC_NOMEM;
	L->arcs = v;
	ai = (uint32_t)L->n_arcs;
	v[ai] = (struct larc){ad, st, strdup(rel), slot, 0, false};
	if (!v[ai].path)
		return RC_NOMEM;
	L->n_arcs++;
	L->arc_at[slot - L->arc_base] = ai;
	if (hide_file(L, &st) != RC_OK)
		return RC_NOMEM;
	if (claim_entries(L, a, ai, rel) != RC_OK)
		return RC_NOMEM;
	loose_arc_used(L, slot, ad); /* its descriptor counts from now on */
	/* Charged as it grows: the next archive's room check sees this one's nodes. */
	cache_charge(L->t->cache, (size_t)arc_cost(a));
	L->charged += (size_t)arc_cost(a);
	return RC_OK;
}

static enum rc add_mods(struct loose *L, const char *dir)
{
	struct name_list files = {0};
	char path[PATH_MAX];
	enum rc r = RC_OK;

	L->mods_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (L->mods_fd < 0) {
		fprintf(stderr, "psgfs: loose view: mods folder %s: %s\n", dir, strerror(errno));
		return RC_OK;
	}
	if (!walk(L->mods_fd, is_mod, &files))
		r = RC_NOMEM;
	for (size_t i = 0; r == RC_OK && i < files.n; i++) {
		struct lmod *v = xgrow_n(L->mods, L->n_mods, &L->cap_mods, sizeof *v, 16);
		bool changed;
		int fd;

		if (!v) {
			r = RC_NOMEM;
			break;
		}
		L->mods = v;
		fd = open_file_at(L->mods_fd, files.v[i], &v[L->n_mods].st);
		if (fd < 0)
			continue;
		close(fd);
		v[L->n_mods].path = files.v[i];
		files.v[i] = NULL;
		if (loose_game_path(v[L->n_mods].path, path, sizeof path, &changed))
			r = claim(L, path, LN_MOD, (uint32_t)L->n_mods, 0, "OUTDIR");
		L->n_mods++;
	}
	name_list_free(&files);
	return r;
}

static int kid_cmp(const void *x, const void *y, void *ctx)
{
	const struct loose *L = ctx;

	return strcmp(L->names + L->nodes[*(const uint32_t *)x].name,
		      L->names + L->nodes[*(const uint32_t *)y].name);
}

/* Each folder's children, sorted by name (names are unique within a folder). */
static bool link_kids(struct loose *L)
{
	uint32_t *fill = calloc(L->n ? L->n : 1, sizeof *fill);

	L->kids = calloc(L->n ? L->n : 1, sizeof *L->kids);
	if (!fill || !L->kids) {
		free(fill);
		return false;
	}
	for (uint32_t k = 1; k < L->n; k++)
		L->nodes[L->nodes[k].parent].nkids++;
	for (uint32_t k = 0, at = 0; k < L->n; k++) {
		L->nodes[k].kid0 = at;
		at += L->nodes[k].nkids;
	}
	for (uint32_t k = 1; k < L->n; k++) {
		const struct lnode *p = &L->nodes[L->nodes[k].parent];

		L->kids[p->kid0 + fill[L->nodes[k].parent]++] = k;
	}
	for (uint32_t k = 0; k < L->n; k++)
		if (L->nodes[k].nkids > 1)
			qsort_r(L->kids + L->nodes[k].kid0, L->nodes[k].nkids, sizeof *L->kids,
				kid_cmp, L);
	free(fill);
	return true;
}

enum rc loose_build(struct loose *L, int root_fd)
{
	struct name_list bigs = {0};
	enum rc r = RC_OK;
	uint32_t root;

	L->mask = 1023;
	L->map = calloc(L->mask + 1, sizeof *L->map);
	if (!L->map || (root = node_new(L, NO_NODE, "", LN_DIR)) == NO_NODE)
		return RC_NOMEM;
	/* The order is the precedence: OUTDIR first, then the archives by path. */
	if (L->t->opts.mods_dir)
		r = add_mods(L, L->t->opts.mods_dir);
	if (r == RC_OK && !walk(root_fd, is_big, &bigs))
		r = RC_NOMEM;
	/* A slot per archive for its descriptor (reopened by slot when max_assets closed it). */
	if (r == RC_OK && bigs.n &&
	    (bigs.n >= UINT32_MAX / 2 ||
	     !(L->arc_base = L->host->slots_take(L->t, (uint32_t)bigs.n))))
		r = RC_NOMEM;
	L->n_bigs = (uint32_t)bigs.n;
	if (r == RC_OK && bigs.n && !(L->arc_at = malloc(bigs.n * sizeof *L->arc_at)))
		r = RC_NOMEM;
	for (size_t i = 0; r == RC_OK && i < bigs.n; i++)
		L->arc_at[i] = NO_NODE;
	for (size_t i = 0; r == RC_OK && i < bigs.n; i++)
		r = add_archive(L, root_fd, bigs.v[i], L->arc_base + (uint32_t)i);
	name_list_free(&bigs);
	if (L->lost > WARN_MAX)
		fprintf(stderr,
			"psgfs: loose view: %zu more paths not shown (taken by another "
			"source)\n",
			L->lost - WARN_MAX);
	free(L->map);
	L->map = NULL;
	if (r != RC_OK || !link_kids(L))
		return RC_NOMEM;
	if (L->n_hidden)
		qsort(L->hidden, L->n_hidden, sizeof *L->hidden, loose_fid_cmp);
	L->heap = heap_block(L->nodes) + heap_block(L->kids) + heap_block(L->names) +
		  heap_block(L->arcs) + heap_block(L->mods) + heap_block(L->hidden) +
		  heap_block(L->arc_at);
	return RC_OK;
}

/* ---- the archives' descriptors: at most max_assets open (as folder.c keeps its own) ---- */

static struct larc *arc_of(struct loose *L, uint32_t slot)
{
	uint32_t i = loose_arc_owns(L, slot) ? L->arc_at[slot - L->arc_base] : NO_NODE;

	return i == NO_NODE ? NULL : &L->arcs[i];
}

bool loose_arc_owns(const struct loose *L, uint32_t slot)
{
	return L->n_bigs && slot >= L->arc_base && slot - L->arc_base < L->n_bigs;
}

int loose_arc_reopen(struct loose *L, uint32_t slot)
{
	struct larc *a = arc_of(L, slot);
	struct stat st;

	if (!a) {
		errno = ENOENT;
		return -1;
	}
	return open_file_at(L->root_fd, a->path, &st);
}

void loose_arc_used(struct loose *L, uint32_t slot, struct arcdir *ad)
{
	struct larc *a = arc_of(L, slot);

	if (!a || a->ad != ad)
		return;
	pthread_mutex_lock(&L->mu);
	if (arcdir_fd_live(ad)) {
		if (!a->open) {
			a->open = true;
			L->open_arcs++;
		}
		a->used = ++L->clock;
		/* Over the limit (only when one was just opened): the least recently used goes,
		 * now or when its last reader is done (arcdir_fd_close). */
		while (L->open_arcs > L->max_open) {
			struct larc *old = NULL;

			for (size_t i = 0; i < L->n_arcs; i++)
				if (L->arcs[i].open && &L->arcs[i] != a &&
				    (!old || L->arcs[i].used < old->used))
					old = &L->arcs[i];
			if (!old)
				break;
			arcdir_fd_close(old->ad);
			old->open = false;
			L->open_arcs--;
		}
	}
	pthread_mutex_unlock(&L->mu);
}
