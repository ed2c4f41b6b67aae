/*
 * Archives as directories (arcdir.h, docs/archives.md). Opening reads the header and tables
 * (arc_open) and builds the node tree from the entries' paths: each path is cut at '/' and '\',
 * empty and "." components dropped, every component made a safe name (name_of below), folders
 * made on the way. Entries are typed by their name's extension: assets (.psg .rx2 .psk .pskx
 * .psa) are directories holding their tree, archives (.big, and .psf/.xsf beside their
 * .pst/.xst) directories holding theirs, anything else a file of its unpacked bytes. The
 * tables are permanent (charged to the cache budget); an entry's index and its decoded pieces
 * are cache entries like any rendered piece.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/registry.h"
#include "tree/mount/guid_index.h"
#include "tree/mount/arcdir_int.h"

/* ---- opening ---- */

static void arcdir_init(struct arcdir *ad, struct tree *t)
{
	ad->t = t;
	ad->fd = -1;
	pthread_mutex_init(&ad->mu, NULL);
	pthread_mutex_init(&ad->nest_mu, NULL);
	pthread_mutex_init(&ad->build_mu, NULL);
	pthread_mutex_init(&ad->same_mu, NULL);
	pthread_mutex_init(&ad->fd_mu, NULL);
	diag_init(&ad->d);
}

static uint64_t next_key(void)
{
	static atomic_uint_fast64_t n;

	/* Owners of the cache's keys are asset keys (slot << 32 | gen) and inode numbers
	 * (slot << 32 | node), never 0 in the low word: these never meet them. */
	return (uint64_t)(atomic_fetch_add(&n, 1) + 1) << 32;
}

/*
 * What an archive's tables hold for the mount's lifetime once its folder tree is built: the
 * entries and raw paths (arc_open's heap_bytes), and per entry a node, a child slot, a next
 * link, a report flag, a nested-archive pointer, and its shown name (at most about its path).
 */
static uint64_t tables_cost(const struct arc *a)
{
	return a->heap_bytes +
	       (uint64_t)a->n *
		   (sizeof(struct anode) + 2 * sizeof(uint32_t) + 1 + sizeof(struct arcdir *)) +
	       a->paths_len;
}

/*
 * The tables are data like any other: an archive whose tables need more than what is left of
 * the cache budget (every archive's tables are charged to it for good) is not indexed, unless
 * they take at most TABLES_FREE (small archives under a tiny budget still open: a 1-byte cache
 * reads everything afresh, tables excepted). Its info.txt and errors.txt say so; reading the
 * tables (arc_open) cost their size once, freed at once.
 */
#define TABLES_FREE (1u << 20)

static bool over_budget(struct arcdir *ad, char *why, size_t whylen)
{
	uint64_t need = tables_cost(&ad->a), room = cache_room(ad->t->cache);
	enum arc_kind kind = ad->a.kind;
	bool be = ad->a.big_endian;
	uint32_t n = ad->a.n;

	if (need <= room || need <= TABLES_FREE)
		return false;
	snprintf(why, whylen,
		 "not indexed: its tables (%u entries) need %llu KiB, more than the %llu KiB left "
		 "of cache_size; mount with a larger -o cache_size",
		 n, (unsigned long long)(need + 1023) / 1024, (unsigned long long)room / 1024);
	arc_free(&ad->a);
	memset(&ad->a, 0, sizeof ad->a);
	ad->a.kind = kind;
	ad->a.big_endian = be;
	ad->over_budget = true;
	ad->why = strdup(why);
	diag_add(&ad->d, "%s", why);
	return true;
}

/* Parse the tables (the nodes are built on first use: arcdir_ensure); an archive whose tables
 * cannot be read keeps only info.txt and errors.txt. */
static enum tree_open_fail arcdir_parse(struct arcdir *ad, const struct src *toc, char *why,
					size_t whylen)
{
	enum rc r = arc_open(&ad->src, toc, &ad->a, &ad->d);
	enum tree_open_fail f = TREE_FAIL_NONE;

	ad->key = next_key();
	if (r == RC_OK && ad->a.n >= (1u << 24)) {
		r = RC_UNSUPPORTED;
		arc_free(&ad->a);
	}
	if (r != RC_OK) {
		snprintf(why, whylen, "not a readable archive: %s", rc_str(r));
		f = r == RC_FORMAT  ? TREE_FAIL_FORMAT
		    : r == RC_IO    ? TREE_FAIL_OPEN
		    : r == RC_NOMEM ? TREE_FAIL_OTHER
				    : TREE_FAIL_DAMAGED;
		memset(&ad->a, 0, sizeof ad->a);
		ad->why = strdup(why);
		diag_add(&ad->d, "%s", why);
	} else {
		over_budget(ad, why, whylen);
	}
	for (uint32_t i = 0; i < ad->a.n; i++)
		ad->n_bad += ad->a.e[i].bad != 0;
	ad->reported = calloc(ad->a.n ? ad->a.n : 1, 1);
	ad->nested = calloc(ARCDIR_FIRST + ad->a.n, sizeof *ad->nested);
	if (!ad->reported || !ad->nested) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	ad->heap = ad->a.heap_bytes + ad->a.n * (1 + sizeof *ad->nested);
	if (f != TREE_FAIL_OTHER && ad->t->arc_host->adopt(ad->t, ad) != RC_OK) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	cache_charge(ad->t->cache, (size_t)ad->heap);
	return f;
}

/* Entries named after a texture GUID (0x<GUID>.psg) join the mount's GUID index, with their
 * path in the mount and their slot: a model anywhere in the mount finds its textures there. */
static void feed_guids(struct arcdir *ad)
{
	struct guid_index *ix = ad->t->arc_host->guid_index(ad->t);
	char path[PATH_MAX];
	uint64_t guid;

	for (uint32_t k = ARCDIR_FIRST; ix && k < ARCDIR_FIRST + ad->a.n; k++)
		if (ad->nodes[k].type == AN_ASSET &&
		    guid_index_name(ad->names + ad->nodes[k].name, &guid) &&
		    tree_slot_mountpath(ad->t, arcdir_slot(ad, k), path, sizeof path))
			guid_index_feed(ix, path, arcdir_slot(ad, k));
}

void arcdir_each_arena(struct arcdir *ad, arcdir_arena_fn fn, void *ctx)
{
	char path[PATH_MAX];

	for (uint32_t k = ARCDIR_FIRST; k < ARCDIR_FIRST + ad->a.n && k < ad->n_nodes; k++) {
		struct arcent e = {ad, k - ARCDIR_FIRST};
		struct src s = {arcdir_entry_read, &e, ad->a.e[e.i].size};

		if (ad->nodes[k].type != AN_ASSET ||
		    !fmt_name_is(ad->names + ad->nodes[k].name, FMT_PSG) ||
		    !tree_slot_mountpath(ad->t, arcdir_slot(ad, k), path, sizeof path))
			continue;
		fn(ctx, path, arcdir_slot(ad, k), &s);
	}
}

/* Pass 0 takes the archives that hold archives (anything but a stream file) and the Tex
 * streams (cTex_*.psf/.xsf); pass 1 the other stream files. */
static bool walk_early(const char *name)
{
	return !fmt_name_is(name, FMT_SFIL) || strncasecmp(name, "cTex", 4) == 0;
}

bool arcdir_walk_nested(struct arcdir *ad, int pass, uint32_t *left, arcdir_nested_fn fn, void *ctx)
{
	for (uint32_t k = ARCDIR_FIRST; k < ARCDIR_FIRST + ad->a.n && k < ad->n_nodes; k++) {
		bool early = walk_early(ad->names + ad->nodes[k].name);
		bool mine = early == (pass == 0); /* visited, counted and handed to fn this pass */
		struct arcdir *c;
		enum rc r;

		if (ad->nodes[k].type != AN_ARCHIVE || (pass == 0 && !early))
			continue;
		if (mine && !*left)
			return false;
		*left -= mine;
		c = arcdir_nested(ad, k, &r); /* pass 1, an early one: opened in pass 0 */
		if (!c || arcdir_ensure(c) != RC_OK)
			continue;
		if (mine && fn)
			fn(ctx, c);
		if (!arcdir_walk_nested(c, pass, left, fn, ctx)) /* depth: ARCDIR_DEPTH_MAX */
			return false;
	}
	return true;
}

enum rc arcdir_ensure(struct arcdir *ad)
{
	enum rc r;

	pthread_mutex_lock(&ad->build_mu);
	if (!ad->built) {
		size_t before = (size_t)ad->heap;

		ad->built = true;
		ad->build_r = arcdir_build(ad) && !ad->names_oom ? RC_OK : RC_NOMEM;
		if (ad->build_r == RC_OK)
			ad->build_r = ad->t->arc_host->register_slots(ad->t, ad);
		if (ad->build_r == RC_OK)
			feed_guids(ad);
		ad->heap += (uint64_t)ad->n_nodes * (sizeof *ad->nodes + sizeof *ad->kids) +
			    (uint64_t)ad->a.n * sizeof *ad->next + ad->names_cap;
		cache_charge(ad->t->cache, (size_t)ad->heap - before);
	}
	r = ad->build_r;
	pthread_mutex_unlock(&ad->build_mu);
	return r;
}

enum tree_open_fail arcdir_open_fd(struct tree *t, int fd, int toc_fd, const struct stat *st,
				   const char *name, uint32_t owner_slot, struct arcdir **out,
				   char *why, size_t whylen)
{
	struct arcdir *ad = calloc(1, sizeof *ad);
	struct src toc;
	struct stat tst;
	enum tree_open_fail f;

	*out = NULL;
	if (!ad || !(ad->name = strdup(name))) {
		free(ad);
		if (fd >= 0)
			close(fd);
		if (toc_fd >= 0)
			close(toc_fd);
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	arcdir_init(ad, t);
	ad->fd = fd;
	ad->st = *st;
	ad->owner_slot = owner_slot;
	ad->src = (struct src){arcdir_fd_read, ad, (uint64_t)st->st_size};
	if (toc_fd >= 0 && fstat(toc_fd, &tst) == 0)
		src_init_fd(&toc, &toc_fd, (uint64_t)tst.st_size);
	f = arcdir_parse(ad, toc_fd >= 0 ? &toc : NULL, why, whylen);
	if (toc_fd >= 0)
		close(toc_fd); /* the tables are read: the ATOC is not needed again */
	if (f == TREE_FAIL_OTHER) {
		arcdir_free(ad);
		return f;
	}
	*out = ad;
	return f;
}

/* The first 16 bytes of entry i (false when it has fewer or they cannot be read). */
static bool entry_head(struct arcdir *ad, uint32_t i, uint8_t h[16])
{
	struct arcent e = {ad, i};

	return ad->a.e[i].size >= 16 && arcdir_entry_read(&e, 0, h, 16) == RC_OK;
}

/*
 * The ATOC table of the stream file at node (an entry index; UINT32_MAX: none): the
 * .pst/.xst entry beside it whose stamp (bytes 8..16) is the collection's, its own
 * (arc_toc_pairs) taken first (docs/streams.md: one table serves a district's collections).
 */
static uint32_t find_toc(struct arcdir *ad, uint32_t node)
{
	const char *name = ad->names + ad->nodes[node].name;
	const struct anode *p = &ad->nodes[ad->nodes[node].parent];
	uint8_t h[16], t[16];
	uint32_t best = UINT32_MAX;

	if (!fmt_name_is(name, FMT_SFIL) || !entry_head(ad, node - ARCDIR_FIRST, h) ||
	    fmt_detect(h, sizeof h, FMT_ARCHIVE) != fmt_row(FMT_SFIL))
		return UINT32_MAX;
	for (uint32_t k = 0; k < p->nkids; k++) {
		uint32_t c = ad->kids[p->kid0 + k];
		const char *cn = ad->names + ad->nodes[c].name;

		if (c < ARCDIR_FIRST || c >= ARCDIR_FIRST + ad->a.n ||
		    !fmt_is_companion_name(cn, FMT_ARCHIVE) ||
		    !entry_head(ad, c - ARCDIR_FIRST, t) || !arc_toc_serves(h, t))
			continue;
		if (best == UINT32_MAX || arc_toc_pairs(name, cn))
			best = c - ARCDIR_FIRST;
	}
	return best;
}

static struct arcdir *open_nested(struct arcdir *ad, uint32_t node, enum rc *r)
{
	struct arcdir *c = calloc(1, sizeof *c);
	const struct anode *nd = &ad->nodes[node];
	uint32_t i = node - ARCDIR_FIRST, toc_i;
	struct arcent *toc_ent = NULL;
	struct src toc;
	char why[256];

	if (!c || !(c->name = strdup(ad->names + nd->name))) {
		free(c);
		*r = RC_NOMEM;
		return NULL;
	}
	arcdir_init(c, ad->t);
	c->parent = ad;
	c->parent_node = node;
	c->depth = ad->depth + 1;
	c->st = ad->st;
	c->st.st_size = (off_t)ad->a.e[i].size;
	c->owner_slot = arcdir_slot(ad, node);
	c->self = (struct arcent){ad, i};
	c->src = (struct src){arcdir_entry_read, &c->self, ad->a.e[i].size};
	/* A stream file's table: the .pst/.xst beside it with its stamp (find_toc). */
	toc_i = find_toc(ad, node);
	if (toc_i != UINT32_MAX && (toc_ent = malloc(sizeof *toc_ent))) {
		*toc_ent = (struct arcent){ad, toc_i};
		toc = (struct src){arcdir_entry_read, toc_ent, ad->a.e[toc_i].size};
	}
	if (arcdir_parse(c, toc_ent ? &toc : NULL, why, sizeof why) == TREE_FAIL_OTHER) {
		free(toc_ent);
		arcdir_free(c);
		*r = RC_NOMEM;
		return NULL;
	}
	free(toc_ent);
	return c;
}

struct arcdir *arcdir_nested(struct arcdir *ad, uint32_t node, enum rc *r)
{
	struct arcdir *c;

	if (node >= ad->n_nodes || ad->nodes[node].type != AN_ARCHIVE) {
		*r = RC_NOTDIR;
		return NULL;
	}
	/* Opened under the lock: two first listings of one nested archive make one. */
	pthread_mutex_lock(&ad->nest_mu);
	c = ad->nested[node];
	if (!c) {
		c = open_nested(ad, node, r);
		if (c)
			ad->nested[node] = c;
	}
	pthread_mutex_unlock(&ad->nest_mu);
	return c;
}

void arcdir_free(struct arcdir *ad)
{
	if (!ad)
		return;
	arcdir_ahead_forget(ad);
	arc_free(&ad->a);
	if (ad->fd >= 0)
		close(ad->fd);
	diag_free(&ad->d);
	pthread_mutex_destroy(&ad->mu);
	pthread_mutex_destroy(&ad->nest_mu);
	pthread_mutex_destroy(&ad->build_mu);
	pthread_mutex_destroy(&ad->same_mu);
	pthread_mutex_destroy(&ad->fd_mu);
	free(ad->same);
	free(ad->nodes);
	free(ad->kids);
	free(ad->names);
	free(ad->reported);
	free(ad->nested); /* nested archives are adopted: freed by the folder layer */
	free(ad->next);
	free(ad->name);
	free(ad->why);
	free(ad);
}

/* ---- nodes ---- */

uint32_t arcdir_span(const struct arcdir *ad)
{
	return ad->n_nodes;
}

void arcdir_set_base(struct arcdir *ad, uint32_t base)
{
	ad->base = base;
}

uint32_t arcdir_slot(const struct arcdir *ad, uint32_t node)
{
	return node == 0 ? ad->owner_slot : ad->base + node;
}

enum an_type arcdir_type(const struct arcdir *ad, uint32_t node)
{
	return node < ad->n_nodes ? (enum an_type)ad->nodes[node].type : 0;
}

static size_t status_text(struct arcdir *ad, bool errors, struct buf *b);

/* Entry i's bytes are known to end before its size: a stored entry the table places past the
 * archive's end, or one a read found short. */
static bool arcdir_entry_short(struct arcdir *ad, uint32_t i)
{
	const struct arc_entry *e = &ad->a.e[i];
	bool known;

	if (e->method == ARC_STORED && e->size > 0 &&
	    (e->off >= (uint64_t)ad->st.st_size || e->stored > (uint64_t)ad->st.st_size - e->off ||
	     e->stored < e->size))
		return true;
	pthread_mutex_lock(&ad->mu);
	known = ad->reported && (ad->reported[i] & ARCDIR_SHORT);
	pthread_mutex_unlock(&ad->mu);
	return known;
}

enum rc arcdir_getattr(struct arcdir *ad, uint32_t node, struct tree_stat *out)
{
	const struct anode *nd;
	struct buf b;

	if (node >= ad->n_nodes)
		return RC_NOENT;
	nd = &ad->nodes[node];
	out->nlink = 1;
	out->uid = ad->st.st_uid;
	out->gid = ad->st.st_gid;
	out->atime = ad->st.st_atim;
	out->mtime = ad->st.st_mtim;
	switch (nd->type) {
	case AN_DIR:
	case AN_ASSET:
	case AN_ARCHIVE:
		out->type = TT_DIR;
		out->perm = tree_perm_dir(ad->st.st_mode);
		if (nd->type == AN_DIR) {
			out->size = nd->nkids;
			out->nlink = 2;
		}
		break;
	case AN_FILE:
		out->type = TT_FILE;
		out->perm = tree_perm_file(ad->st.st_mode);
		out->size = ad->a.e[node - ARCDIR_FIRST].size;
		out->short_known = arcdir_entry_short(ad, node - ARCDIR_FIRST);
		break;
	default: /* info.txt, errors.txt: what they say now */
		out->type = TT_FILE;
		out->perm = tree_perm_file(0444);
		buf_init(&b);
		out->size = status_text(ad, nd->type == AN_ERRORS, &b);
		buf_free(&b);
		break;
	}
	return RC_OK;
}

static uint8_t tt_of(uint8_t type)
{
	return type == AN_DIR || type == AN_ASSET || type == AN_ARCHIVE ? TT_DIR : TT_FILE;
}

enum rc arcdir_list(struct arcdir *ad, uint32_t node, struct tlist *out)
{
	const struct anode *nd;

	if (node >= ad->n_nodes)
		return RC_NOENT;
	nd = &ad->nodes[node];
	if (nd->type != AN_DIR)
		return RC_NOTDIR;
	for (uint32_t k = 0; k < nd->nkids; k++) {
		const struct anode *c = &ad->nodes[ad->kids[nd->kid0 + k]];

		tlist_add_ino(out, (tree_ino)arcdir_slot(ad, ad->kids[nd->kid0 + k]) << 32 | 1,
			      tt_of(c->type), ad->names + c->name);
	}
	/* A nested archive's own bytes, under the entry's name. */
	if (node == 0 && ad->parent)
		tlist_add_ino(out, (tree_ino)ad->owner_slot << 32 | tnode_pack(tn(KIND_OWN, 0, 0)),
			      TT_FILE, ad->name);
	return RC_OK;
}

bool arcdir_entry_name(const struct arcdir *ad, uint32_t node, uint32_t *parent_slot,
		       const char **name)
{
	if (node == 0 || node >= ad->n_nodes)
		return false;
	*parent_slot = arcdir_slot(ad, ad->nodes[node].parent);
	*name = ad->names + ad->nodes[node].name;
	return true;
}

bool arcdir_relpath(const struct arcdir *ad, uint32_t node, char *out, size_t n)
{
	uint32_t chain[256];
	size_t depth = 0, at = 0;

	if (node == 0 || node >= ad->n_nodes)
		return false;
	for (uint32_t k = node; k != 0 && k != NO_PARENT; k = ad->nodes[k].parent) {
		if (depth == sizeof chain / sizeof *chain)
			return false;
		chain[depth++] = k;
	}
	while (depth--) {
		const char *s = ad->names + ad->nodes[chain[depth]].name;
		size_t len = strlen(s);

		if (at + len + 2 > n)
			return false;
		memcpy(out + at, s, len);
		at += len;
		out[at++] = depth ? '/' : '\0';
	}
	return true;
}

uint32_t arcdir_sibling(const struct arcdir *ad, uint32_t node, const char *name)
{
	const struct anode *p;

	if (node == 0 || node >= ad->n_nodes)
		return 0;
	p = &ad->nodes[ad->nodes[node].parent];
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < p->nkids; k++) {
			uint32_t c = ad->kids[p->kid0 + k];
			const char *s = ad->names + ad->nodes[c].name;

			if (c < ARCDIR_FIRST || ad->nodes[c].type == AN_DIR)
				continue;
			if (pass ? strcasecmp(s, name) == 0 : strcmp(s, name) == 0)
				return arcdir_slot(ad, c);
		}
	}
	return 0;
}

/* ---- status files ---- */

/* What info.txt calls an archive kind: its format row's description. */
static const char *kind_name(enum arc_kind k)
{
	const struct fmt_row *r = fmt_of_arc_kind(k);

	return r ? r->desc : "archive";
}

static size_t status_text(struct arcdir *ad, bool errors, struct buf *b)
{
	uint64_t count[ARC_METHODS + 1] = {0}, bytes = 0, files = 0, assets = 0, archives = 0;

	if (errors) {
		pthread_mutex_lock(&ad->mu);
		for (size_t i = 0; i < ad->d.n; i++) {
			buf_puts(b, ad->d.msg[i]);
			buf_putc(b, '\n');
		}
		if (ad->d.dropped)
			buf_printf(b, "(%zu more problems not listed)\n", ad->d.dropped);
		pthread_mutex_unlock(&ad->mu);
		return b->len;
	}
	for (uint32_t i = 0; i < ad->a.n; i++) {
		uint8_t m = ad->a.e[i].method;

		count[m < ARC_METHODS ? m : ARC_METHODS]++; /* the last: unknown */
		bytes += ad->a.e[i].size;
	}
	for (uint32_t k = ARCDIR_FIRST; k < ARCDIR_FIRST + ad->a.n && k < ad->n_nodes; k++) {
		files += ad->nodes[k].type == AN_FILE;
		assets += ad->nodes[k].type == AN_ASSET;
		archives += ad->nodes[k].type == AN_ARCHIVE;
	}
	buf_printf(b, "format: %s\nfile: ",
		   ad->why && !ad->over_budget ? "unreadable archive" : kind_name(ad->a.kind));
	buf_tsv_name(b, ad->name, strlen(ad->name));
	buf_printf(b, "\nsize: %llu\n", (unsigned long long)ad->src.size);
	if (ad->why) {
		buf_puts(b, "status: cannot mount: ");
		buf_tsv_name(b, ad->why, strlen(ad->why));
		buf_putc(b, '\n');
		return b->len;
	}
	buf_printf(b, "byte order: %s\nentries: %u\nfolders: %u\n",
		   ad->a.big_endian ? "big-endian" : "little-endian", ad->a.n, ad->n_dirs);
	for (unsigned m = 0; m <= ARC_METHODS; m++)
		if (count[m])
			buf_printf(b, "entries %s: %llu\n", arc_method_str((uint8_t)m),
				   (unsigned long long)count[m]);
	buf_printf(b,
		   "shown as files: %llu\nshown as assets: %llu\nshown as archives: %llu\n"
		   "unpacked bytes (as the table says): %llu\nbroken entries: %zu\n"
		   "renamed paths: %zu\n",
		   (unsigned long long)files, (unsigned long long)assets,
		   (unsigned long long)archives, (unsigned long long)bytes, ad->n_bad, ad->renamed);
	if (ad->depth)
		buf_printf(b, "nested: depth %u (archives deeper than %u are files)\n", ad->depth,
			   ARCDIR_DEPTH_MAX - 1);
	pthread_mutex_lock(&ad->mu);
	buf_printf(b, "problems: %zu%s\n", diag_count(&ad->d),
		   diag_count(&ad->d) ? " (see errors.txt)" : "");
	pthread_mutex_unlock(&ad->mu);
	if (arcdir_changed(ad))
		buf_puts(b, "status: the archive changed since it was mounted; what was read "
			    "keeps its bytes, anything new fails with EIO\n");
	return b->len;
}

static enum rc stat_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	struct arcdir *ad = c->as->priv;

	(void)part;
	(void)first;
	status_text(ad, c->as->slot == ad->base + 2, &e->b);
	emit_item(e);
	return RC_OK;
}

static enum tree_open_fail stat_mount(struct asset *as, char *why, size_t whylen)
{
	(void)as;
	(void)why;
	(void)whylen;
	return TREE_FAIL_NONE;
}

static const struct tree_kind arcstat_kinds[] = {
    {.what = "status", .type = TT_FILE, .render = stat_render, .status = true},
};

static const struct tree_format tree_format_arcstat = {
    .name = "archive status",
    .kinds = arcstat_kinds,
    .n_kinds = 1,
    .mount = stat_mount,
};

/* ---- assets over entries ---- */

static bool ent_changed(void *ctx)
{
	return arcdir_changed(((struct arcent *)ctx)->ad);
}

static void ent_release(void *ctx)
{
	free(ctx);
}

static enum rc open_status(struct arcdir *ad, uint32_t node, struct asset **out)
{
	struct asset_ext ext = {0};
	struct src none = {0};

	char why[64];
	const char *name = ad->names + ad->nodes[node].name;

	if (asset_open_src(ad->t, arcdir_slot(ad, node), name, &none, &ad->st, ASSET_PLAIN, &ext,
			   out, why, sizeof why) != TREE_FAIL_NONE)
		return RC_NOMEM;
	(*out)->fmt = &tree_format_arcstat;
	(*out)->priv = ad;
	return RC_OK;
}

static enum rc own(struct asset **as, const char *name)
{
	enum rc r = asset_set_own(*as, name);

	if (r != RC_OK)
		*as = NULL; /* closed */
	return r;
}

enum rc arcdir_asset_open(struct arcdir *ad, uint32_t node, struct asset **out)
{
	const struct anode *nd;
	struct arcent *e;
	struct asset_ext ext;
	struct stat st;
	struct src s;
	char logical[4096], rel[4096], why[256];
	uint32_t slot = arcdir_slot(ad, node);
	enum tree_open_fail f;
	enum asset_mode mode;

	*out = NULL;
	if (node >= ad->n_nodes)
		return RC_NOENT;
	nd = &ad->nodes[node];
	if (nd->type == AN_INFO || nd->type == AN_ERRORS)
		return open_status(ad, node, out);
	if (nd->type == AN_DIR || node < ARCDIR_FIRST)
		return RC_ISDIR;
	mode = nd->type == AN_ASSET ? ASSET_LENIENT : ASSET_PLAIN;
	if (!arcdir_relpath(ad, node, rel, sizeof rel))
		snprintf(rel, sizeof rel, "%s", ad->names + nd->name);
	if ((size_t)snprintf(logical, sizeof logical, "%s/%s", ad->name, rel) >= sizeof logical)
		snprintf(logical, sizeof logical, "%s", ad->names + nd->name);
	/* Texture mods: the arena in OUTDIR at the entry's path stands for the entry. */
	if (mode == ASSET_LENIENT && ad->t->mods &&
	    mods_open_asset(ad->t, slot, logical, rel, mode, out, &f, why, sizeof why)) {
		if (f != TREE_FAIL_NONE)
			return f == TREE_FAIL_OTHER ? RC_NOMEM : RC_IO;
		return own(out, ad->names + nd->name);
	}
	e = malloc(sizeof *e);
	if (!e)
		return RC_NOMEM;
	*e = (struct arcent){ad, node - ARCDIR_FIRST};
	s = (struct src){arcdir_entry_read, e, ad->a.e[e->i].size};
	st = ad->st;
	st.st_size = (off_t)ad->a.e[e->i].size;
	ext = (struct asset_ext){ent_changed, ent_release, arcdir_entry_view, e};
	f = asset_open_src(ad->t, slot, logical, &s, &st, mode, &ext, out, why, sizeof why);
	if (f != TREE_FAIL_NONE)
		return f == TREE_FAIL_OTHER ? RC_NOMEM : RC_IO;
	return nd->type == AN_FILE ? RC_OK : own(out, ad->names + nd->name);
}

/* ---- the archive as a container (struct container_ops) ---- */

static enum cslot arc_kind(struct tree *t, const struct cref *r)
{
	enum an_type ty = arcdir_type(r->c, r->node);

	(void)t;
	if (ty == AN_DIR || ty == AN_ARCHIVE)
		return CS_DIR;
	return ty ? CS_ASSET : CS_NONE;
}

static enum rc arc_getattr(struct tree *t, const struct cref *r, tree_ino ino,
			   struct tree_stat *out)
{
	(void)t;
	(void)ino;
	return arcdir_getattr(r->c, r->node, out);
}

/* A folder of the archive (its root built on first use), or the root of the archive a node
 * holds (opened on first use). */
static enum rc arc_list(struct tree *t, const struct cref *r, struct tlist *out)
{
	struct arcdir *ad = r->c;
	uint32_t node = r->node;
	enum rc rc = RC_OK;

	(void)t;
	if (arcdir_type(ad, node) == AN_ARCHIVE) {
		ad = arcdir_nested(ad, node, &rc);
		node = 0;
		if (!ad)
			return rc;
	}
	if (node == 0 && (rc = arcdir_ensure(ad)) != RC_OK)
		return rc;
	return arcdir_list(ad, node, out);
}

static void arc_box_free(void *p)
{
	asset_close(p);
}

/* The asset of a file or asset node, pinned in *pin. */
static struct asset *arc_asset_get(struct tree *t, const struct cref *r, struct cache_ent **pin,
				   enum rc *rc)
{
	struct asset *as;

	*pin = NULL;
	if (arcdir_type(r->c, r->node) == AN_DIR) {
		*rc = RC_ISDIR;
		return NULL;
	}
	as = cache_get(t->cache, asset_ckey(r->slot), pin);
	if (as)
		return as;
	*rc = arcdir_asset_open(r->c, r->node, &as);
	if (*rc != RC_OK)
		return NULL;
	as = cache_put(t->cache, asset_ckey(r->slot), as, atomic_load(&as->bytes), arc_box_free,
		       pin);
	if (!as)
		*rc = RC_NOMEM;
	else if (as->ent == NULL)
		as->ent = *pin;
	return as;
}

static void arc_reset(struct tree *t, const struct cref *r)
{
	cache_drop(t->cache, asset_ckey(r->slot));
}

static bool arc_entry_name(struct tree *t, const struct cref *r, uint32_t *parent,
			   const char **name)
{
	(void)t;
	return arcdir_entry_name(r->c, r->node, parent, name);
}

/* An entry's path inside the archive (what unpacking tools write). */
static bool arc_relpath(struct tree *t, const struct cref *r, char *out, size_t n)
{
	(void)t;
	return arcdir_relpath(r->c, r->node, out, n);
}

/* The path of what shows the archive, then the node's path inside. */
static bool arc_mountpath(struct tree *t, const struct cref *r, char *out, size_t n)
{
	uint32_t owner = arcdir_slot(r->c, 0);
	size_t k = 0;

	if (owner != 0) {
		if (!tree_slot_mountpath(t, owner, out, n))
			return false;
		k = strlen(out);
		if (k + 2 > n)
			return false;
		out[k++] = '/';
	}
	return arcdir_relpath(r->c, r->node, out + k, n - k);
}

static uint32_t arc_sibling(struct tree *t, const struct cref *r, const char *name)
{
	(void)t;
	return arcdir_sibling(r->c, r->node, name);
}

/* The files beside a node (entries, assets, archives: not folders, not the status files), in
 * listing order: what a format asks for its companions, as in a folder. */
static size_t arc_siblings(struct tree *t, const struct cref *r, uint32_t **out)
{
	const struct arcdir *ad = r->c;
	const struct anode *p;
	uint32_t *v;
	size_t n = 0;

	(void)t;
	*out = NULL;
	if (r->node == 0 || r->node >= ad->n_nodes)
		return 0;
	p = &ad->nodes[ad->nodes[r->node].parent];
	if (p->nkids == 0 || !(v = xcalloc_n(p->nkids, sizeof *v)))
		return 0;
	for (uint32_t k = 0; k < p->nkids; k++) {
		uint32_t c = ad->kids[p->kid0 + k];

		if (c != r->node && c >= ARCDIR_FIRST && ad->nodes[c].type != AN_DIR)
			v[n++] = arcdir_slot(ad, c);
	}
	*out = v;
	return n;
}

/* Nodes are never links: readlink NULL (EINVAL). */
const struct container_ops arcdir_container = {
    .name = "archive",
    .kind = arc_kind,
    .getattr = arc_getattr,
    .list = arc_list,
    .asset_get = arc_asset_get,
    .reset = arc_reset,
    .entry_name = arc_entry_name,
    .relpath = arc_relpath,
    .mountpath = arc_mountpath,
    .sibling = arc_sibling,
    .siblings = arc_siblings,
};

/* ---- the loose view (loose.c): entries addressed by index, never by node ---- */

const struct arc *arcdir_arc(const struct arcdir *ad)
{
	return &ad->a;
}

const char *arcdir_why(const struct arcdir *ad)
{
	return ad->why;
}

enum rc arcdir_entry_open(struct arcdir *ad, uint32_t i, uint32_t slot, const char *logical,
			  struct asset **out)
{
	struct arcent *e;
	struct asset_ext ext;
	struct stat st;
	struct src s;
	char why[256];

	*out = NULL;
	if (i >= ad->a.n)
		return RC_NOENT;
	e = malloc(sizeof *e);
	if (!e)
		return RC_NOMEM;
	*e = (struct arcent){ad, i};
	s = (struct src){arcdir_entry_read, e, ad->a.e[i].size};
	st = ad->st;
	st.st_size = (off_t)ad->a.e[i].size;
	ext = (struct asset_ext){ent_changed, ent_release, arcdir_entry_view, e};
	switch (asset_open_src(ad->t, slot, logical, &s, &st, ASSET_PLAIN, &ext, out, why,
			       sizeof why)) {
	case TREE_FAIL_NONE:
		return RC_OK;
	case TREE_FAIL_OTHER:
		return RC_NOMEM;
	default:
		return RC_IO;
	}
}
