/*
 * A district stream kind's files from folders of arenas (stream_set.h, docs/worlds.md "Writing
 * a stream set").
 *   SFIL: "SFIL", version, u64 stamp, u32 header size, u32 count word (1), u32 format (0 raw),
 *     u32 kind word; zero to the header size (0x100 PS3, 0x80 Xbox 360). Per asset, by id: u64
 *     id, u32 size, u32 header size, u32 stride, u32 0, zero to the header size, the arena,
 *     then zero padding: on PS3 `hs - size % hs` bytes (a whole block when the size is already
 *     a multiple: PACK's rule, DUMB steps by the stride), on Xbox 360 to the next 0x80.
 *   ATOC: "ATOC", version, u64 stamp, u32 count, u32 0; per distinct asset (first met walking
 *     the collections in CMAP order) u64 id, u32 0xAB329A6A, u32 size, the resource
 *     descriptors {size, alignment} (six PS3, five Xbox 360; alignment 1 when unused), u32 0,
 *     u32 0.
 *   CMAP, CSPA, MMAP through stream_manifest.c's writers: the Global first, then the other
 *     collections in byte order of their names; CSPA and MMAP have no Global row.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/hash.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/stream_set.h"

#define SS_ATOC_TYPE 0xAB329A6Au
#define SS_T_CMESH   0x00080006u /* ClusteredMesh: collision, its box first as a model's */
#define SS_TILE_HALF 50.0f	 /* tiles are 100 m squares named by their centre */

static const char *const ss_kinds[SS_KINDS] = {"Pres", "Sim", "Tex"};

struct ss_toc {
	uint64_t id;
	uint32_t size;
	struct rw_rd rd[RW_MAX_RD];
	unsigned n_rd;
	bool repeat; /* ss_atoc: an earlier collection has it */
};

struct ss_coll {
	char name[SM_NAME_LEN];
	uint32_t size, assets;
	bool has_box;
	float mn[3], mx[3];
	struct ss_toc *t; /* the collection's assets, by id */
};

const char *ss_kind_name(enum ss_kind k)
{
	return (unsigned)k < SS_KINDS ? ss_kinds[k] : "?";
}

bool ss_collection_kind(const char *name, enum ss_kind *k)
{
	for (int i = 0; i < SS_KINDS; i++) {
		size_t n = strlen(ss_kinds[i]);

		if (name[0] == 'c' && !strncmp(name + 1, ss_kinds[i], n) && name[1 + n] == '_' &&
		    name[2 + n]) {
			*k = (enum ss_kind)i;
			return true;
		}
	}
	return false;
}

uint32_t ss_kind_field(enum ss_kind k)
{
	return k == SS_PRES ? 0x58000000u : k == SS_SIM ? 0x57000000u : 0xFFFFFFFFu;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

enum sm_lod ss_collection_lod(const char *name)
{
	if (ends_with(name, "_Global"))
		return SM_LOD_GLOBAL;
	return ends_with(name, "_low") ? SM_LOD_LOW : SM_LOD_HIGH;
}

/* A decimal number (optional '-', digits, optional fraction) up to the next '_'. */
static bool ss_number(const char **s, float *v)
{
	char *end;
	double d;

	if (!(**s == '-' || (**s >= '0' && **s <= '9')))
		return false;
	d = strtod(*s, &end);
	if (end == *s || *end != '_' || !isfinite(d) || fabs(d) > 1e7)
		return false;
	*v = (float)d;
	*s = end + 1;
	return true;
}

bool ss_tile_centre(const char *name, float *x, float *z)
{
	const char *s = strchr(name, '_');

	return s && ss_number(&(const char *){s + 1}, x) && (s = strchr(s + 1, '_')) != NULL &&
	       ss_number(&(const char *){s + 1}, z);
}

uint32_t ss_header_size(enum sm_platform pf)
{
	return pf == SM_PS3 ? 0x100u : 0x80u;
}

bool ss_file_name(enum sm_platform pf, const char *dist, enum ss_kind k, enum sm_file f,
		  const char *collection, char *out, size_t n)
{
	char ext[4];
	int w;

	sm_ext(pf, f, ext);
	if (f == SM_SFIL)
		w = snprintf(out, n, "%s.%s", collection, ext);
	else
		w = snprintf(out, n, "%s_%s.%s", dist, ss_kind_name(k), ext);
	return w > 0 && (size_t)w < n;
}

void ss_fields_default(struct ss_fields *f)
{
	memset(f, 0, sizeof *f);
	f->sfil_version = f->atoc_version = 3;
	f->cmap_version = f->cspa_version = f->mmap_version = 1;
	f->sfil_count = 1;
}

uint64_t ss_default_stamp(const char *dist, enum ss_kind k)
{
	uint64_t h = fnv1_64(dist, strlen(dist));

	h = fnv1_64_update(h, "_", 1);
	h = fnv1_64_update(h, ss_kind_name(k), strlen(ss_kind_name(k)));
	return h & 0xFFFFFFFFu;
}

enum rc ssw_begin(struct ss_writer *w, enum sm_platform pf, const char *dist, enum ss_kind k,
		  const struct ss_fields *f)
{
	memset(w, 0, sizeof *w);
	if (!dist[0] || strlen(dist) >= SM_NAME_LEN || (unsigned)k >= SS_KINDS ||
	    (unsigned)pf >= SM_PLATFORMS) {
		snprintf(w->why, sizeof w->why, "bad district name, kind or platform");
		return RC_INVAL;
	}
	w->pf = pf;
	w->kind = k;
	snprintf(w->dist, sizeof w->dist, "%s", dist);
	if (f)
		w->f = *f;
	else
		ss_fields_default(&w->f);
	w->stamp = w->f.stamp[k] ? w->f.stamp[k] : ss_default_stamp(dist, k);
	return RC_OK;
}

void ssw_free(struct ss_writer *w)
{
	for (uint32_t i = 0; i < w->n; i++)
		free(w->c[i].t);
	free(w->c);
	w->c = NULL;
	w->n = w->cap = 0;
}

bool ss_arena_bounds(const uint8_t *p, size_t n, float mn[3], float mx[3])
{
	struct src s;
	struct src_mem m;
	struct arena a;
	bool any = false;

	src_init_mem(&s, &m, p, n);
	if (arena_open(&s, &a, NULL) != RC_OK)
		return false;
	for (uint32_t i = 0; i < a.n_dict; i++) {
		const struct arena_dict_entry *e = arena_row(&a, i);
		uint8_t *o = NULL;
		size_t len = 0;
		float b[6];
		bool ok = true;

		if ((e->type_id != RW_T_RENDERMODEL && e->type_id != SS_T_CMESH) || !e->readable ||
		    e->size < 32)
			continue;
		if (arena_read_object(&s, &a, i, &o, &len) != RC_OK || len < 32) {
			free(o);
			continue;
		}
		for (int k = 0; k < 3; k++) { /* tAABB: min xyzw, max xyzw, big-endian */
			b[k] = f32_from_bits(ld_u32be(o + 4 * k));
			b[3 + k] = f32_from_bits(ld_u32be(o + 16 + 4 * k));
			ok = ok && isfinite(b[k]) && isfinite(b[3 + k]) && b[k] <= b[3 + k];
		}
		free(o);
		if (!ok)
			continue;
		for (int k = 0; k < 3; k++) {
			mn[k] = any && mn[k] < b[k] ? mn[k] : b[k];
			mx[k] = any && mx[k] > b[3 + k] ? mx[k] : b[3 + k];
		}
		any = true;
	}
	arena_free(&a);
	return any;
}

static int toc_by_id(const void *a, const void *b)
{
	const struct ss_asset *x = *(const struct ss_asset *const *)a;
	const struct ss_asset *y = *(const struct ss_asset *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The asset's ATOC row and its share of the collection's box. */
static enum rc ss_asset_row(struct ss_writer *w, const struct ss_asset *a, struct ss_toc *t,
			    struct ss_coll *c)
{
	struct src s;
	struct src_mem m;
	struct arena ar;
	float mn[3], mx[3];
	bool want_xb2 = w->pf == SM_X360;

	src_init_mem(&s, &m, a->data, a->len);
	if (arena_open(&s, &ar, NULL) != RC_OK) {
		snprintf(w->why, sizeof w->why, "asset 0x%016llx is not an RW4 arena",
			 (unsigned long long)a->id);
		return RC_FORMAT;
	}
	if ((ar.h.plat == RW_XB2) != want_xb2) {
		snprintf(w->why, sizeof w->why, "asset 0x%016llx is a %s arena, not %s",
			 (unsigned long long)a->id, ar.h.platform, want_xb2 ? "xb2" : "ps3");
		arena_free(&ar);
		return RC_FORMAT;
	}
	t->id = a->id;
	t->size = (uint32_t)a->len;
	t->n_rd = ar.h.n_rd;
	memcpy(t->rd, ar.h.rd, sizeof t->rd);
	arena_free(&ar);
	if (ss_arena_bounds(a->data, a->len, mn, mx)) {
		for (int k = 0; k < 3; k++) {
			c->mn[k] = c->has_box && c->mn[k] < mn[k] ? c->mn[k] : mn[k];
			c->mx[k] = c->has_box && c->mx[k] > mx[k] ? c->mx[k] : mx[k];
		}
		c->has_box = true;
	}
	return RC_OK;
}

static enum rc ss_check_name(struct ss_writer *w, const char *name)
{
	struct ss_coll *v;
	enum ss_kind k;

	if (strlen(name) >= SM_NAME_LEN || !ss_collection_kind(name, &k) || k != w->kind ||
	    !name_is_safe(name, strlen(name))) {
		snprintf(w->why, sizeof w->why,
			 "not a %s collection name (c%s_..., a safe file name under 64 bytes)",
			 ss_kind_name(w->kind), ss_kind_name(w->kind));
		return RC_INVAL;
	}
	for (uint32_t i = 0; i < w->n; i++)
		if (!strcmp(w->c[i].name, name)) {
			snprintf(w->why, sizeof w->why, "collection given twice");
			return RC_INVAL;
		}
	v = xgrow_n(w->c, w->n, &w->cap, sizeof *v, 16);
	if (!v)
		return RC_NOMEM;
	w->c = v;
	return RC_OK;
}

static void ss_sfil_header(const struct ss_writer *w, struct buf *b)
{
	size_t at = b->len;

	buf_put(b, "SFIL", 4);
	buf_u32be(b, w->f.sfil_version);
	buf_u64be(b, w->stamp);
	buf_u32be(b, ss_header_size(w->pf));
	buf_u32be(b, w->f.sfil_count);
	buf_u32be(b, w->f.format);
	buf_u32be(b, ss_kind_field(w->kind));
	buf_zero(b, ss_header_size(w->pf) - (b->len - at));
}

static void ss_sfil_asset(const struct ss_writer *w, const struct ss_asset *a, struct buf *b)
{
	uint32_t hs = ss_header_size(w->pf);
	size_t pad = w->pf == SM_PS3 ? hs - a->len % hs : (hs - a->len % hs) % hs;

	buf_u64be(b, a->id);
	buf_u32be(b, (uint32_t)a->len);
	buf_u32be(b, hs);
	buf_u32be(b, (uint32_t)(hs + a->len + pad));
	buf_zero(b, hs - 20);
	buf_put(b, a->data, a->len);
	buf_zero(b, pad);
}

enum rc ssw_collection(struct ss_writer *w, const char *name, const struct ss_asset *a, uint32_t n,
		       struct buf *sfil)
{
	const struct ss_asset **by = NULL;
	struct ss_coll *c;
	uint64_t total = ss_header_size(w->pf);
	size_t start = sfil->len;
	enum rc r = ss_check_name(w, name);

	if (r != RC_OK)
		return r;
	c = &w->c[w->n];
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%s", name);
	if (n && (!(by = calloc(n, sizeof *by)) || !(c->t = calloc(n, sizeof *c->t)))) {
		free(by);
		free(c->t);
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		by[i] = &a[i];
		total += 2 * (uint64_t)ss_header_size(w->pf) + a[i].len;
	}
	if (n)
		qsort(by, n, sizeof *by, toc_by_id);
	for (uint32_t i = 0; i + 1 < n && r == RC_OK; i++)
		if (by[i]->id == by[i + 1]->id) {
			snprintf(w->why, sizeof w->why, "asset id 0x%016llx twice",
				 (unsigned long long)by[i]->id);
			r = RC_INVAL;
		}
	if (r == RC_OK && total > UINT32_MAX) {
		snprintf(w->why, sizeof w->why, "the collection would pass 4 GiB");
		r = RC_UNSUPPORTED;
	}
	for (uint32_t i = 0; i < n && r == RC_OK; i++)
		r = ss_asset_row(w, by[i], &c->t[i], c);
	if (r == RC_OK) {
		ss_sfil_header(w, sfil);
		for (uint32_t i = 0; i < n; i++)
			ss_sfil_asset(w, by[i], sfil);
		if (sfil->oom)
			r = RC_NOMEM;
	}
	free(by);
	if (r != RC_OK) {
		free(c->t);
		return r;
	}
	c->assets = n;
	c->size = (uint32_t)(sfil->len - start);
	w->n++;
	return RC_OK;
}

/* CMAP order: the Global first, then by name. */
static int coll_order(const void *a, const void *b)
{
	const struct ss_coll *x = a, *y = b;
	bool gx = ss_collection_lod(x->name) == SM_LOD_GLOBAL,
	     gy = ss_collection_lod(y->name) == SM_LOD_GLOBAL;

	if (gx != gy)
		return gx ? -1 : 1;
	return strcmp(x->name, y->name);
}

static uint64_t ss_coll_id(const struct ss_writer *w, const struct ss_coll *c)
{
	if (ss_collection_lod(c->name) == SM_LOD_GLOBAL)
		return sm_global_id(ss_kind_name(w->kind), w->dist);
	return sm_collection_id(c->name);
}

/* The tile's CSPA cell: the hull is the 100 m square around the centre over the geometry's
 * height; the geometry box is the arenas' (PACK's shape when they have none). */
static void ss_cell(const struct ss_writer *w, const struct ss_coll *c, struct sm_cell *e)
{
	float cx = 0, cz = 0, ylo = c->has_box ? c->mn[1] : 0, yhi = c->has_box ? c->mx[1] : 0;
	bool centred = ss_tile_centre(c->name, &cx, &cz);

	memset(e, 0, sizeof *e);
	e->id = ss_coll_id(w, c);
	e->lod = (uint8_t)ss_collection_lod(c->name);
	if (!centred && c->has_box) {
		cx = (c->mn[0] + c->mx[0]) / 2;
		cz = (c->mn[2] + c->mx[2]) / 2;
	}
	e->hull_min[0] = cx - SS_TILE_HALF, e->hull_max[0] = cx + SS_TILE_HALF;
	e->hull_min[1] = ylo, e->hull_max[1] = yhi;
	e->hull_min[2] = cz - SS_TILE_HALF, e->hull_max[2] = cz + SS_TILE_HALF;
	if (c->has_box) {
		for (int k = 0; k < 3; k++) {
			e->geom_min[k] = c->mn[k];
			e->geom_max[k] = c->mx[k];
			/* geometry reaching past the square widens the hull */
			e->hull_min[k] = fminf(e->hull_min[k], c->mn[k]);
			e->hull_max[k] = fmaxf(e->hull_max[k], c->mx[k]);
		}
	} else {
		e->geom_min[0] = cx, e->geom_min[1] = ylo, e->geom_min[2] = cz;
		memcpy(e->geom_max, e->hull_max, sizeof e->geom_max);
	}
	e->hull_min[3] = e->hull_max[3] = e->geom_min[3] = e->geom_max[3] = 1;
}

static int toc_id_cmp(const void *a, const void *b)
{
	const struct ss_toc *x = *(const struct ss_toc *const *)a;
	const struct ss_toc *y = *(const struct ss_toc *const *)b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x < y ? -1 : x > y; /* the same id: the first met wins (rows are in walk order) */
}

static void ss_toc_row(const struct ss_writer *w, const struct ss_toc *t, struct buf *b)
{
	unsigned n_rd = w->pf == SM_X360 ? 5 : 6;

	buf_u64be(b, t->id);
	buf_u32be(b, SS_ATOC_TYPE);
	buf_u32be(b, t->size);
	for (unsigned i = 0; i < n_rd; i++) {
		buf_u32be(b, i < t->n_rd ? t->rd[i].size : 0);
		buf_u32be(b, i < t->n_rd && t->rd[i].align ? t->rd[i].align : 1);
	}
	buf_u32be(b, 0);
	buf_u32be(b, 0);
}

/* The ATOC: each distinct asset once, first met walking the collections in CMAP order. The
 * rows are copied into one array in walk order, so pointer order is walk order. */
static enum rc ss_atoc(const struct ss_writer *w, struct buf *b)
{
	size_t total = 0, k = 0, kept = 0;
	struct ss_toc *all, **by;

	for (uint32_t i = 0; i < w->n; i++)
		total += w->c[i].assets;
	all = calloc(total ? total : 1, sizeof *all);
	by = calloc(total ? total : 1, sizeof *by);
	if (!all || !by) {
		free(all);
		free(by);
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i < w->n; i++)
		for (uint32_t j = 0; j < w->c[i].assets; j++, k++) {
			all[k] = w->c[i].t[j];
			by[k] = &all[k];
		}
	qsort(by, total, sizeof *by, toc_id_cmp);
	for (size_t i = 0; i < total; i++)
		if (i && by[i]->id == by[i - 1]->id)
			by[i]->repeat = true;
		else
			kept++;
	buf_put(b, "ATOC", 4);
	buf_u32be(b, w->f.atoc_version);
	buf_u64be(b, w->stamp);
	buf_u32be(b, (uint32_t)kept);
	buf_u32be(b, 0);
	for (size_t i = 0; i < total; i++)
		if (!all[i].repeat)
			ss_toc_row(w, &all[i], b);
	free(all);
	free(by);
	return b->oom ? RC_NOMEM : RC_OK;
}

enum rc ssw_finish(struct ss_writer *w, struct buf *atoc, struct buf *cmap, struct buf *cspa,
		   struct buf *mmap)
{
	struct sm_header hc = {
	    .version = w->f.cmap_version, .stamp = w->stamp, .format = w->f.format};
	struct sm_header hs = {
	    .version = w->f.cspa_version, .stamp = w->stamp, .format = w->f.cspa_word};
	struct sm_header hm = {
	    .version = w->f.mmap_version, .stamp = w->stamp, .format = w->f.mmap_word};
	struct sm_collection *cv = calloc(w->n ? w->n : 1, sizeof *cv);
	struct sm_cell *sv = calloc(w->n ? w->n : 1, sizeof *sv);
	struct sm_point *pv = calloc(w->n ? w->n : 1, sizeof *pv);
	uint64_t global = sm_global_id(ss_kind_name(w->kind), w->dist);
	uint32_t ns = 0;
	enum rc r = cv && sv && pv ? RC_OK : RC_NOMEM;

	if (r == RC_OK && w->n)
		qsort(w->c, w->n, sizeof *w->c, coll_order);
	for (uint32_t i = 0; i < w->n && r == RC_OK; i++) {
		const struct ss_coll *c = &w->c[i];
		bool is_global = ss_collection_lod(c->name) == SM_LOD_GLOBAL;
		float cx, cz;

		cv[i].id = ss_coll_id(w, c);
		cv[i].parent = is_global ? SM_GLOBAL_PARENT : global;
		cv[i].offset = ss_header_size(w->pf);
		cv[i].size = c->size;
		cv[i].assets = c->assets;
		snprintf(cv[i].name, sizeof cv[i].name, "%s", c->name);
		if (is_global)
			continue;
		ss_cell(w, c, &sv[ns]);
		pv[ns].id = sv[ns].id;
		if (!ss_tile_centre(c->name, &cx, &cz)) {
			cx = (sv[ns].hull_min[0] + sv[ns].hull_max[0]) / 2;
			cz = (sv[ns].hull_min[2] + sv[ns].hull_max[2]) / 2;
		}
		pv[ns].x = cx;
		pv[ns].y = cz;
		ns++;
	}
	if (r == RC_OK && atoc)
		r = ss_atoc(w, atoc);
	if (r == RC_OK && cmap)
		r = sm_cmap_write(w->pf, &hc, cv, w->n, cmap);
	if (r == RC_OK && cspa)
		r = sm_cspa_write(w->pf, &hs, sv, ns, cspa);
	if (r == RC_OK && mmap)
		r = sm_mmap_write(w->pf, &hm, pv, ns, mmap);
	free(cv);
	free(sv);
	free(pv);
	return r;
}
