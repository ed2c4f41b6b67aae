/*
 * psgfs-tool pack-stream (pack_stream.h, docs/worlds.md "Writing a stream set"). DIR is walked
 * by pack's own walk (no link followed, names checked); each collection folder's assets are
 * read with their identity checked before and after, handed to the stream-set writer, and its
 * SFIL written at once to a temporary file in OUTDIR, so only one collection sits in memory.
 * When every file is written and synced, each is read back: its bytes must hash as written,
 * the manifests must parse without a line, each collection must open with its kind's ATOC
 * without a line and hold its assets, and the kind's stamps must agree. Only then are the
 * temporaries renamed into place; a failure unlinks them and leaves OUTDIR as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/hash.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/archive.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/stream_manifest.h"
#include "psgfs/formats/stream_set.h"

#include "pack.h"
#include "pack_stream.h"

struct ps_coll {
	char name[SM_NAME_LEN];
	enum ss_kind kind;
	size_t first, n; /* its assets: tree items [first, first + n) that are assets */
};

struct ps_file {
	char name[SM_NAME_LEN + 8];
	char *tmp; /* its temporary, relative to OUTDIR */
	enum ss_kind kind;
	enum sm_file file;
	uint64_t len, fnv;
	uint32_t assets;
};

struct ps {
	const char *dir, *outdir, *like, *dist;
	const char *corrupt; /* PSGFS_PACK_STREAM_TEST_CORRUPT=NAME: NAME's last byte flipped
				before the read back (tests) */
	const char *hook;    /* PSGFS_PACK_TEST_CHANGE=PATH: PATH changes while read (tests) */
	enum sm_platform pf;
	bool pf_set;
	struct pack_tree t;
	bool *asset; /* per tree item: an asset (not a skipped file) */
	struct ps_coll *c;
	size_t nc;
	struct ps_file *f;
	size_t nf, capf;
	struct ss_fields fields;
	int out_dfd;
	int code;
	char msg[PATH_MAX + 256];
	uint64_t assets;
};

static int ps_fail(struct ps *ps, int code, const char *path, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (ps->code)
		return -1;
	ps->code = code;
	k = snprintf(ps->msg, sizeof ps->msg, "%s: ", path);
	va_start(ap, fmt);
	vsnprintf(ps->msg + k, sizeof ps->msg - (size_t)k, fmt, ap);
	va_end(ap);
	return -1;
}

bool pack_stream_asset_id(const char *name, uint64_t *id, bool *x360)
{
	const char *dot = strrchr(name, '.'), *p = name;
	uint64_t v = 0;
	int digits = 0;

	if (!dot || (strcasecmp(dot, ".psg") && strcasecmp(dot, ".rx2")))
		return false;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < dot; p++, digits++) {
		int h = *p >= '0' && *p <= '9'	 ? *p - '0'
			: *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
			: *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
						 : -1;

		if (h < 0 || digits == 16)
			return false;
		v = v << 4 | (uint64_t)h;
	}
	if (!digits)
		return false;
	*id = v;
	*x360 = !strcasecmp(dot, ".rx2");
	return true;
}

/* ---- DIR: collections and their assets ---- */

/* The tree's own files beside extracted assets (psgfs-tool extract writes them). */
static bool ps_skipped(const char *name)
{
	return !strcmp(name, "info.txt") || !strcmp(name, "errors.txt");
}

static int ps_add_coll(struct ps *ps, const char *name, size_t len, size_t first)
{
	struct ps_coll *c;
	char buf[SM_NAME_LEN];
	enum ss_kind k;

	if (len >= SM_NAME_LEN || (memcpy(buf, name, len), buf[len] = 0, false) ||
	    !ss_collection_kind(buf, &k) || !name_is_safe(buf, len))
		return ps_fail(ps, PACK_EXIT_NAME, len < SM_NAME_LEN ? buf : name,
			       "not a collection folder (cPres_..., cSim_..., cTex_...: a safe "
			       "name under 64 bytes)");
	c = reallocarray(ps->c, ps->nc + 1, sizeof *c);
	if (!c)
		return ps_fail(ps, PACK_EXIT_INTERNAL, name, "out of memory");
	ps->c = c;
	c = &ps->c[ps->nc++];
	memset(c, 0, sizeof *c);
	memcpy(c->name, buf, len + 1);
	c->kind = k;
	c->first = first;
	return 0;
}

/* Group the walked files by their first component; top-level files are not collections. */
static int ps_collections(struct ps *ps)
{
	ps->asset = calloc(ps->t.n ? ps->t.n : 1, sizeof *ps->asset);
	if (!ps->asset)
		return ps_fail(ps, PACK_EXIT_INTERNAL, ps->dir, "out of memory");
	for (size_t i = 0; i < ps->t.n && !ps->code; i++) {
		const char *p = ps->t.v[i].path, *slash = strchr(p, '/');
		uint64_t id;
		bool x360;

		if (!slash)
			continue; /* the old manifests, notes: not collections */
		if (strchr(slash + 1, '/')) {
			ps_fail(ps, PACK_EXIT_NAME, p, "a folder inside a collection");
			break;
		}
		if (!ps->nc || strlen(ps->c[ps->nc - 1].name) != (size_t)(slash - p) ||
		    strncmp(ps->c[ps->nc - 1].name, p, (size_t)(slash - p)))
			if (ps_add_coll(ps, p, (size_t)(slash - p), i) != 0)
				break;
		if (ps_skipped(slash + 1))
			continue;
		if (!pack_stream_asset_id(slash + 1, &id, &x360)) {
			ps_fail(ps, PACK_EXIT_NAME, p,
				"not an asset name (0x<hex id>.psg or .rx2)");
			break;
		}
		if (!ps->pf_set) {
			ps->pf = x360 ? SM_X360 : SM_PS3;
			ps->pf_set = true;
		}
		if (x360 != (ps->pf == SM_X360)) {
			ps_fail(ps, PACK_STREAM_EXIT_ASSET, p, "a%s asset in a %s stream set",
				x360 ? "n Xbox 360" : " PS3", sm_platforms[ps->pf].name);
			break;
		}
		ps->asset[i] = true;
		ps->c[ps->nc - 1].n = i + 1 - ps->c[ps->nc - 1].first;
	}
	return ps->code ? -1 : 0;
}

/* An arena's resource descriptors add up to its file (arena.c's header rule): one that lies
 * about its size would be packed for the game to read past it or short of it. true when it
 * does not open at all: the writer refuses that with its own line. */
static bool ps_arena_size(const uint8_t *p, size_t n, uint64_t *claimed)
{
	struct src s;
	struct src_mem m;
	struct arena ar;

	*claimed = n;
	src_init_mem(&s, &m, p, n);
	if (arena_open(&s, &ar, NULL) != RC_OK)
		return true;
	*claimed = 0;
	for (unsigned k = 0; k < ar.h.n_rd; k++)
		*claimed += ar.h.rd[k].size;
	arena_free(&ar);
	return *claimed == n;
}

/* File i of DIR, whole, if it is still what the walk saw. */
static uint8_t *ps_read(struct ps *ps, size_t i, size_t *len)
{
	const struct pack_item *it = &ps->t.v[i];
	int fd = openat(ps->t.root, it->path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	size_t n = (size_t)it->st.st_size, got = 0;
	static const uint8_t rw4_magic[4] = {0x89, 'R', 'W', '4'};
	uint8_t head[sizeof rw4_magic], *p = NULL;
	uint64_t claimed;
	struct stat st;

	if (fd < 0) {
		ps_fail(ps, errno == ELOOP ? PACK_EXIT_CHANGED : PACK_EXIT_READ, it->path,
			"cannot open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !pack_same_file(&st, &it->st)) {
		ps_fail(ps, PACK_EXIT_CHANGED, it->path, "changed while it was packed");
		goto out;
	}
	/* its magic first: a large file that is no arena costs neither its size in memory nor
	 * the time to read it */
	if (n < sizeof rw4_magic || pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    memcmp(head, rw4_magic, sizeof head)) {
		ps_fail(ps, PACK_STREAM_EXIT_ASSET, it->path, "not an RW4 arena");
		goto out;
	}
	if (!(p = malloc(n))) {
		ps_fail(ps, PACK_EXIT_INTERNAL, it->path, "out of memory");
		goto out;
	}
	while (got < n) {
		ssize_t r = pread(fd, p + got, n - got, (off_t)got);

		if (r <= 0) {
			ps_fail(ps, r ? PACK_EXIT_READ : PACK_EXIT_CHANGED, it->path,
				r ? "cannot read: %s" : "changed while it was packed",
				strerror(errno));
			break;
		}
		got += (size_t)r;
	}
	if (ps->hook && !strcmp(ps->hook, it->path)) { /* tests: it changes under the read */
		int w = openat(ps->t.root, it->path, O_WRONLY | O_APPEND | O_CLOEXEC);

		if (w >= 0) {
			(void)!write(w, "!", 1);
			close(w);
		}
	}
	if (!ps->code && (fstat(fd, &st) != 0 || !pack_same_file(&st, &it->st)))
		ps_fail(ps, PACK_EXIT_CHANGED, it->path, "changed while it was packed");
	if (!ps->code && !ps_arena_size(p, n, &claimed))
		ps_fail(ps, PACK_STREAM_EXIT_ASSET, it->path,
			"an arena whose header sizes add up to %llu bytes, in a file of %zu",
			(unsigned long long)claimed, n);
out:
	close(fd);
	if (ps->code) {
		free(p);
		return NULL;
	}
	*len = n;
	return p;
}

/* ---- OUTDIR: temporaries, read back, rename ---- */

static int ps_emit(struct ps *ps, enum ss_kind k, enum sm_file f, const char *coll,
		   const struct buf *b, uint32_t assets)
{
	struct ps_file *o;
	char path[PATH_MAX];
	char *tmp = NULL;
	size_t done = 0;
	int fd;

	if (b->oom)
		return ps_fail(ps, PACK_EXIT_INTERNAL, ps->outdir, "out of memory");
	if (ps->nf == ps->capf) {
		size_t cap = ps->capf ? 2 * ps->capf : 32;
		struct ps_file *v = reallocarray(ps->f, cap, sizeof *v);

		if (!v)
			return ps_fail(ps, PACK_EXIT_INTERNAL, ps->outdir, "out of memory");
		ps->f = v;
		ps->capf = cap;
	}
	o = &ps->f[ps->nf];
	memset(o, 0, sizeof *o);
	if (!ss_file_name(ps->pf, ps->dist, k, f, coll, o->name, sizeof o->name))
		return ps_fail(ps, PACK_EXIT_NAME, coll ? coll : ps->dist, "name too long");
	snprintf(path, sizeof path, "%s/%s", ps->outdir, o->name);
	fd = pack_temp_file(path, &tmp);
	if (fd < 0) {
		ps_fail(ps, PACK_EXIT_WRITE, path, "cannot create a temporary file beside it: %s",
			strerror(errno));
		free(tmp);
		return -1;
	}
	o->tmp = tmp;
	ps->nf++; /* from here on a failure unlinks it */
	while (done < b->len) {
		ssize_t w = write(fd, b->data + done, b->len - done);

		if (w <= 0) {
			close(fd);
			return ps_fail(ps, PACK_EXIT_WRITE, path, "cannot write: %s",
				       strerror(w ? errno : ENOSPC));
		}
		done += (size_t)w;
	}
	if (fsync(fd) != 0) {
		close(fd);
		return ps_fail(ps, PACK_EXIT_WRITE, path, "cannot write: %s", strerror(errno));
	}
	close(fd);
	o->kind = k;
	o->file = f;
	o->len = b->len;
	o->fnv = fnv1a_64(b->data, b->len);
	o->assets = assets;
	return 0;
}

/* The temporary's bytes, checked against what was written. */
static uint8_t *ps_read_back(struct ps *ps, const struct ps_file *o)
{
	int fd = open(o->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	uint8_t *p = fd >= 0 ? malloc(o->len ? o->len : 1) : NULL;
	size_t got = 0;

	while (p && got < o->len) {
		ssize_t r = pread(fd, p + got, o->len - got, (off_t)got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	if (!p || got != o->len || fnv1a_64(p, got) != o->fnv) {
		free(p);
		ps_fail(ps, PACK_EXIT_VERIFY, o->name, "does not read back as written");
		return NULL;
	}
	return p;
}

static const struct ps_file *ps_find(const struct ps *ps, enum ss_kind k, enum sm_file f)
{
	for (size_t i = 0; i < ps->nf; i++)
		if (ps->f[i].kind == k && ps->f[i].file == f)
			return &ps->f[i];
	return NULL;
}

/* A manifest parses without a line and holds what the writer wrote. */
static void ps_check_manifest(struct ps *ps, const struct ps_file *o, const uint8_t *p,
			      struct diag *d)
{
	enum rc r = RC_FORMAT;

	if (o->file == SM_CMAP) {
		struct sm_cmap m;

		r = sm_cmap_parse(p, o->len, ps->pf, &m, d);
		if (r == RC_OK)
			r = sm_cmap_depths(&m, NULL, d);
		sm_cmap_free(&m);
	} else if (o->file == SM_CSPA) {
		struct sm_cspa m;

		r = sm_cspa_parse(p, o->len, ps->pf, &m, d);
		sm_cspa_free(&m);
	} else if (o->file == SM_MMAP) {
		struct sm_mmap m;

		r = sm_mmap_parse(p, o->len, ps->pf, &m, d);
		sm_mmap_free(&m);
	} else if (o->len >= 24 && !memcmp(p, "ATOC", 4)) { /* its records and nothing else */
		uint64_t rec = ps->pf == SM_X360 ? 64 : 72;

		r = RC_OK;
		if (o->len != 24 + rec * ld_u32be(p + 16))
			diag_add(d, "ATOC: %u records claimed in %llu bytes", ld_u32be(p + 16),
				 (unsigned long long)o->len);
	}
	if (r != RC_OK || d->n)
		ps_fail(ps, PACK_EXIT_VERIFY, o->name, "does not read back clean (%s)",
			d->n ? d->msg[0] : rc_str(r));
}

/* A collection opens with its kind's table, without a line, holding its assets. */
static void ps_check_sfil(struct ps *ps, const struct ps_file *o, const uint8_t *p, struct diag *d)
{
	const struct ps_file *t = ps_find(ps, o->kind, SM_ATOC);
	uint8_t *tp = t ? ps_read_back(ps, t) : NULL;
	struct src s, st;
	struct src_mem m, mt;
	struct arc a;
	enum rc r;

	if (!tp) {
		ps_fail(ps, PACK_EXIT_VERIFY, o->name, "its asset table is missing");
		return;
	}
	src_init_mem(&s, &m, p, o->len);
	src_init_mem(&st, &mt, tp, t->len);
	r = arc_open(&s, &st, &a, d);
	if (r == RC_OK && !d->n && a.n != o->assets)
		diag_add(d, "holds %u assets, %u written", a.n, o->assets);
	if (r == RC_OK)
		arc_free(&a);
	if (r != RC_OK || d->n)
		ps_fail(ps, PACK_EXIT_VERIFY, o->name, "does not read back clean (%s)",
			d->n ? d->msg[0] : rc_str(r));
	free(tp);
}

static void ps_corrupt(const struct ps *ps)
{
	for (size_t i = 0; ps->corrupt && i < ps->nf; i++) {
		int fd;
		uint8_t b;

		if (strcmp(ps->f[i].name, ps->corrupt) || !ps->f[i].len)
			continue;
		fd = open(ps->f[i].tmp, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && pread(fd, &b, 1, (off_t)ps->f[i].len - 1) == 1) {
			b ^= 0xFF;
			(void)!pwrite(fd, &b, 1, (off_t)ps->f[i].len - 1);
		}
		if (fd >= 0)
			close(fd);
	}
}

static void ps_verify(struct ps *ps)
{
	ps_corrupt(ps);
	for (size_t i = 0; i < ps->nf && !ps->code; i++) {
		const struct ps_file *o = &ps->f[i];
		uint8_t *p = ps_read_back(ps, o);
		struct sm_stamp st[2];
		struct diag d;

		if (!p)
			break;
		diag_init(&d);
		if (o->file == SM_SFIL)
			ps_check_sfil(ps, o, p, &d);
		else
			ps_check_manifest(ps, o, p, &d);
		/* every file of the kind carries the kind's stamp: its CMAP's */
		st[0].file = o->name;
		st[1].file = "the kind's CMAP";
		st[1].stamp = ss_default_stamp(ps->dist, o->kind);
		if (ps->fields.stamp[o->kind])
			st[1].stamp = ps->fields.stamp[o->kind];
		if (!ps->code && (!sm_stamp_peek(p, o->len, ps->pf, &st[0].stamp) ||
				  !sm_stamps_agree(st, 2, &d)))
			ps_fail(ps, PACK_EXIT_VERIFY, o->name, "its stamp is not its kind's");
		diag_free(&d);
		free(p);
	}
}

static void ps_rename(struct ps *ps)
{
	/* a folder with a file's name would fail its rename after the files before it were
	 * renamed, leaving OUTDIR half new: it is refused before the first rename */
	for (size_t i = 0; i < ps->nf && !ps->code; i++) {
		struct stat st;

		if (fstatat(ps->out_dfd, ps->f[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			ps_fail(ps, PACK_EXIT_WRITE, ps->f[i].name,
				"a folder is in the way (nothing was renamed)");
	}
	for (size_t i = 0; i < ps->nf && !ps->code; i++) {
		const char *base = strrchr(ps->f[i].tmp, '/');

		if (renameat(ps->out_dfd, base ? base + 1 : ps->f[i].tmp, ps->out_dfd,
			     ps->f[i].name) != 0) {
			ps_fail(ps, PACK_EXIT_WRITE, ps->f[i].name, "cannot rename into place: %s",
				strerror(errno));
			break;
		}
		free(ps->f[i].tmp);
		ps->f[i].tmp = NULL;
	}
	if (!ps->code && fsync(ps->out_dfd) != 0)
		ps_fail(ps, PACK_EXIT_WRITE, ps->outdir,
			"in place, but the folder cannot be synced: %s", strerror(errno));
}

/* ---- packing ---- */

static int ps_collection(struct ps *ps, struct ss_writer *w, const struct ps_coll *c)
{
	struct ss_asset *a = calloc(c->n ? c->n : 1, sizeof *a);
	uint8_t **data = calloc(c->n ? c->n : 1, sizeof *data);
	uint32_t n = 0;
	struct buf sf;
	enum rc r;

	buf_init(&sf);
	if (!a || !data)
		ps_fail(ps, PACK_EXIT_INTERNAL, c->name, "out of memory");
	/* the format's 4 GiB per collection, from the walk's sizes, before anything is read:
	 * assets of 2 GiB each are refused as beyond it, not read until memory runs out */
	for (uint64_t i = c->first, total = 0; !ps->code && i < c->first + c->n; i++)
		if (ps->asset[i] && (total += (uint64_t)ps->t.v[i].st.st_size) > UINT32_MAX)
			ps_fail(ps, PACK_EXIT_LIMIT, c->name,
				"its assets hold more than 4 GiB - 1 (the format's limit)");
	for (size_t i = c->first; !ps->code && i < c->first + c->n; i++) {
		bool x360;
		size_t len = 0;

		if (!ps->asset[i])
			continue;
		pack_stream_asset_id(strchr(ps->t.v[i].path, '/') + 1, &a[n].id, &x360);
		data[n] = ps_read(ps, i, &len);
		a[n].data = data[n];
		a[n].len = len;
		if (data[n])
			n++;
	}
	if (!ps->code) {
		r = ssw_collection(w, c->name, a, n, &sf);
		if (r == RC_OK)
			ps_emit(ps, w->kind, SM_SFIL, c->name, &sf, n);
		else
			ps_fail(ps,
				r == RC_FORMAT || r == RC_INVAL ? PACK_STREAM_EXIT_ASSET
				: r == RC_UNSUPPORTED		? PACK_EXIT_LIMIT
								: PACK_EXIT_INTERNAL,
				c->name, "%s", r == RC_NOMEM ? "out of memory" : w->why);
		ps->assets += n;
	}
	for (uint32_t i = 0; i < n; i++)
		free(data[i]);
	free(data);
	free(a);
	buf_free(&sf);
	return ps->code ? -1 : 0;
}

static void ps_kind(struct ps *ps, enum ss_kind k)
{
	static const enum sm_file files[4] = {SM_ATOC, SM_CMAP, SM_CSPA, SM_MMAP};
	struct ss_writer w;
	struct buf b[4];
	size_t have = 0;

	for (size_t i = 0; i < ps->nc; i++)
		have += ps->c[i].kind == k;
	/* a kind without collections is left out, but Xbox 360 needs the Tex stub */
	if (!have && !(k == SS_TEX && ps->pf == SM_X360))
		return;
	if (ssw_begin(&w, ps->pf, ps->dist, k, &ps->fields) != RC_OK) {
		ps_fail(ps, PACK_EXIT_USAGE, ps->dist, "%s", w.why);
		return;
	}
	for (size_t i = 0; i < ps->nc && !ps->code; i++)
		if (ps->c[i].kind == k)
			ps_collection(ps, &w, &ps->c[i]);
	for (int i = 0; i < 4; i++)
		buf_init(&b[i]);
	if (!ps->code && ssw_finish(&w, &b[0], &b[1], &b[2], &b[3]) != RC_OK)
		ps_fail(ps, PACK_EXIT_INTERNAL, ps->dist, "out of memory");
	for (int i = 0; i < 4 && !ps->code; i++)
		ps_emit(ps, k, files[i], NULL, &b[i], 0);
	for (int i = 0; i < 4; i++)
		buf_free(&b[i]);
	ssw_free(&w);
}

/* ---- --like STUB: stamps and header words of an existing set ---- */

/* The kind a stream file's stem names: "c<Kind>_..." (collections) or "..._<Kind>". */
static bool ps_stem_kind(const char *stem, size_t n, enum sm_file f, enum ss_kind *k)
{
	char s[256];

	if (n >= sizeof s)
		return false;
	memcpy(s, stem, n);
	s[n] = 0;
	if (f == SM_SFIL)
		return ss_collection_kind(s, k);
	for (int i = 0; i < SS_KINDS; i++) {
		size_t kl = strlen(ss_kind_name((enum ss_kind)i));

		if (n > kl + 1 && s[n - kl - 1] == '_' &&
		    !strcmp(s + n - kl, ss_kind_name((enum ss_kind)i))) {
			*k = (enum ss_kind)i;
			return true;
		}
	}
	return false;
}

/* A header word of the stub the written set cannot carry is refused here, naming the stub's
 * file, rather than copied into every file and refused at the read back as the set's fault. */
static bool ps_like_words(struct ps *ps, const char *shown, enum sm_file f, const uint8_t *h)
{
	if (f == SM_ATOC && ld_u32be(h + 4) != 3)
		ps_fail(ps, PACK_STREAM_EXIT_LIKE, shown, "ATOC version %u (psgfs reads 3)",
			ld_u32be(h + 4));
	else if (f == SM_SFIL && ld_u32be(h + 0x14) != 1)
		ps_fail(ps, PACK_STREAM_EXIT_LIKE, shown,
			"SFIL +0x14 is %u (1, a collection per file, is what a packed set "
			"carries)",
			ld_u32be(h + 0x14));
	else if (f == SM_SFIL && ld_u32be(h + 0x18) != 0)
		ps_fail(ps, PACK_STREAM_EXIT_LIKE, shown,
			"stream format %u (pack-stream writes raw assets, format 0)",
			ld_u32be(h + 0x18));
	return !ps->code;
}

/* One file of the stub: its first 0x20 bytes into the fields; true when it counted. */
static bool ps_like_file(struct ps *ps, int dfd, const char *name, const char *shown)
{
	const char *dot = strrchr(name, '.');
	uint8_t h[0x20];
	struct stat st;
	enum sm_platform pf;
	enum sm_file f;
	enum ss_kind k;
	int fd;
	bool ok;

	if (!dot || !sm_ext_parse(dot + 1, &pf, &f) ||
	    !ps_stem_kind(name, (size_t)(dot - name), f, &k))
		return false;
	/* O_NONBLOCK: a FIFO in the stub would otherwise block the open for ever */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	     pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h && !memcmp(h, sm_magic(f), 4);
	if (fd >= 0)
		close(fd);
	if (!ok || !ps_like_words(ps, shown, f, h))
		return false;
	if (f != SM_SFIL || !ps->fields.stamp[k])
		ps->fields.stamp[k] = ld_u64be(h + 8);
	switch (f) {
	case SM_SFIL:
		ps->fields.sfil_version = ld_u32be(h + 4);
		ps->fields.sfil_count = ld_u32be(h + 0x14);
		ps->fields.format = ld_u32be(h + 0x18);
		break;
	case SM_ATOC:
		ps->fields.atoc_version = ld_u32be(h + 4);
		break;
	case SM_CMAP:
		ps->fields.cmap_version = ld_u32be(h + 4);
		break;
	case SM_CSPA:
		ps->fields.cspa_version = ld_u32be(h + 4);
		ps->fields.cspa_word = ld_u32be(h + 0x14);
		break;
	default:
		ps->fields.mmap_version = ld_u32be(h + 4);
		ps->fields.mmap_word = ld_u32be(h + 0x14);
		break;
	}
	return true;
}

static void ps_like(struct ps *ps)
{
	struct stat st;
	unsigned used = 0;

	if (lstat(ps->like, &st) != 0) {
		ps_fail(ps, PACK_STREAM_EXIT_LIKE, ps->like, "cannot read: %s", strerror(errno));
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		int dfd = open(ps->like, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		char **names = NULL;
		size_t n = 0;
		struct dirent *de;

		/* sorted, so the same stub gives the same fields whatever readdir's order */
		while (d && (de = readdir(d))) {
			char **v = reallocarray(names, n + 1, sizeof *v);

			if (!v || !(v[n] = strdup(de->d_name))) {
				names = v ? v : names;
				break;
			}
			names = v;
			n++;
		}
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				if (strcmp(names[j], names[i]) < 0) {
					char *x = names[i];

					names[i] = names[j], names[j] = x;
				}
		for (size_t i = 0; i < n; i++) {
			char shown[PATH_MAX];

			snprintf(shown, sizeof shown, "%s/%s", ps->like, names[i]);
			used += !ps->code && ps_like_file(ps, dfd, names[i], shown);
			free(names[i]);
		}
		free(names);
		if (d)
			closedir(d);
		else if (dfd >= 0)
			close(dfd);
	} else if (S_ISREG(st.st_mode)) {
		const char *slash = strrchr(ps->like, '/');
		char dir[PATH_MAX];
		int dfd;

		snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - ps->like) : 1,
			 slash ? ps->like : ".");
		dfd = open(slash == ps->like ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		used = dfd >= 0 && ps_like_file(ps, dfd, slash ? slash + 1 : ps->like, ps->like);
		if (dfd >= 0)
			close(dfd);
	}
	if (!used && !ps->code)
		ps_fail(ps, PACK_STREAM_EXIT_LIKE, ps->like,
			"holds no stream file (.psm .pss .pmm .pst .psf, .x..) that can be read");
}

/* ---- options and main ---- */

static void ps_usage(FILE *o)
{
	fputs(
	    "usage: psgfs-tool pack-stream [--platform ps3|x360] [--like STUB] [--name DIST_N]\n"
	    "                              DIR OUTDIR\n"
	    "  DIR holds one folder per collection (cPres_Global, cPres_<x>_<y>_high, cSim_...,\n"
	    "  cTex_...), each of arenas named 0x<hex id>.psg (.rx2 for Xbox 360); files at\n"
	    "  DIR's top and info.txt/errors.txt beside the arenas are left out. OUTDIR gets\n"
	    "  the five files of each kind (.psf .pst .psm .pss .pmm; .xsf ... on Xbox 360,\n"
	    "  with the Tex stub), written beside their names and renamed once they read back.\n"
	    "  --platform ps3|x360   the console (default: the assets' extension)\n"
	    "  --like STUB           stamps and header words from an existing set (a folder\n"
	    "                        or one of its files)\n"
	    "  --name DIST_N         the district (default: OUTDIR's, else DIR's last\n"
	    "                        component when it starts with DIST_)\n"
	    "exit status: 0 ok, 1 internal error, 2 usage, 3 cannot read DIR or a file in it,\n"
	    "6 a name that is not a collection or asset (or escapes DIR), 8 a link or special\n"
	    "file in DIR, 9 a file changed while packed, 10 cannot write OUTDIR, 11 the set\n"
	    "does not read back clean, 12 beyond the format (a collection past 4 GiB), 20 an\n"
	    "asset is not an arena of the platform (or its header's sizes are not its file's) or\n"
	    "an id repeats in a collection, 21\n"
	    "--like: STUB holds no stream file that can be read, or a header word the packed\n"
	    "set cannot carry (SFIL +0x14 other than 1, a stream format other than 0, an ATOC\n"
	    "version other than 3)\n",
	    o);
}

/* The last component of path (trailing slashes aside) when it starts with DIST_. */
static const char *ps_dist_of(const char *path, char *out, size_t n)
{
	size_t len = strlen(path);
	const char *end, *start;

	while (len > 1 && path[len - 1] == '/')
		len--;
	end = path + len;
	start = end;
	while (start > path && start[-1] != '/')
		start--;
	if ((size_t)(end - start) >= n || end - start < 6 || strncmp(start, "DIST_", 5))
		return NULL;
	memcpy(out, start, (size_t)(end - start));
	out[end - start] = 0;
	return out;
}

static int ps_parse(struct ps *ps, int argc, char **argv, char *dist, size_t dn)
{
	static const struct option lo[] = {
	    {"platform", required_argument, NULL, 'p'},
	    {"like", required_argument, NULL, 'l'},
	    {"name", required_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (strcmp(optarg, "ps3") && strcmp(optarg, "x360")) {
				fprintf(stderr,
					"psgfs-tool: pack-stream: bad --platform '%s': "
					"ps3 or x360\n",
					optarg);
				return PACK_EXIT_USAGE;
			}
			ps->pf = strcmp(optarg, "ps3") ? SM_X360 : SM_PS3;
			ps->pf_set = true;
			break;
		case 'l':
			ps->like = optarg;
			break;
		case 'n':
			ps->dist = optarg;
			break;
		case 'h':
			ps_usage(stdout);
			return 0;
		default:
			ps_usage(stderr);
			return PACK_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		ps_usage(stderr);
		return PACK_EXIT_USAGE;
	}
	ps->dir = argv[optind];
	ps->outdir = argv[optind + 1];
	if (!ps->dist && !(ps->dist = ps_dist_of(ps->outdir, dist, dn)))
		ps->dist = ps_dist_of(ps->dir, dist, dn);
	if (!ps->dist || strncmp(ps->dist, "DIST_", 5) || !ps->dist[5] || strlen(ps->dist) >= 48 ||
	    !name_is_safe(ps->dist, strlen(ps->dist))) {
		fprintf(stderr, "psgfs-tool: pack-stream: name the district DIST_<Name> (--name, "
				"or OUTDIR's or DIR's last component)\n");
		return PACK_EXIT_USAGE;
	}
	return -1;
}

static void ps_open_out(struct ps *ps)
{
	if (mkdir(ps->outdir, 0755) != 0 && errno != EEXIST) {
		ps_fail(ps, PACK_EXIT_WRITE, ps->outdir, "cannot create: %s", strerror(errno));
		return;
	}
	ps->out_dfd = open(ps->outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ps->out_dfd < 0)
		ps_fail(ps, PACK_EXIT_WRITE, ps->outdir, "cannot open folder: %s", strerror(errno));
}

static void ps_free(struct ps *ps)
{
	for (size_t i = 0; i < ps->nf; i++) {
		if (ps->f[i].tmp)
			unlink(ps->f[i].tmp); /* only a failed pack leaves one */
		free(ps->f[i].tmp);
	}
	free(ps->f);
	free(ps->c);
	free(ps->asset);
	pack_tree_free(&ps->t);
	if (ps->out_dfd >= 0)
		close(ps->out_dfd);
}

int pack_stream_main(int argc, char **argv)
{
	struct ps ps = {.out_dfd = -1, .t = {.root = -1}};
	char dist[SM_NAME_LEN];
	int rc = ps_parse(&ps, argc, argv, dist, sizeof dist);

	if (rc >= 0)
		return rc;
	ps.corrupt = getenv("PSGFS_PACK_STREAM_TEST_CORRUPT");
	ps.hook = getenv("PSGFS_PACK_TEST_CHANGE");
	ss_fields_default(&ps.fields);
	if (pack_walk(ps.dir, &ps.t) != 0) { /* its line names the file already */
		ps.code = ps.t.code;
		snprintf(ps.msg, sizeof ps.msg, "%s", ps.t.msg);
	}
	if (!ps.code)
		ps_collections(&ps);
	if (!ps.code && !ps.nc)
		ps_fail(&ps, PACK_EXIT_READ, ps.dir, "holds no collection folder");
	if (!ps.code && ps.like)
		ps_like(&ps);
	if (!ps.code)
		ps_open_out(&ps);
	for (int k = 0; k < SS_KINDS && !ps.code; k++)
		ps_kind(&ps, (enum ss_kind)k);
	if (!ps.code)
		ps_verify(&ps);
	if (!ps.code)
		ps_rename(&ps);
	rc = ps.code;
	if (rc)
		fprintf(stderr, "psgfs-tool: pack-stream: %s\n", ps.msg);
	else
		printf("%s: %zu files, %zu collections, %llu assets (%s, %s)\n", ps.outdir, ps.nf,
		       ps.nc, (unsigned long long)ps.assets, sm_platforms[ps.pf].name, ps.dist);
	ps_free(&ps);
	return rc;
}
