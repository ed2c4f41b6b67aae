/*
 * A district's names, manifests and lookups (district.h, docs/worlds.md); the collection files
 * and the lint are in district_scan.c, the text views in district_views.c, the Sim stream's
 * objects in district_objects.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formats/world/district_int.h"
#include "psgfs/base/bytes.h"

const char *const dist_kind_names[DIST_KINDS] = {"Pres", "Sim", "Tex"};

#define ATOC_HDR 24u

bool dist_map_name(const char *name, char *dist, enum sm_platform *pf)
{
	static const char suffix[] = "_pres.";
	size_t n = strlen(name), k = sizeof suffix - 1;
	enum sm_file f;

	/* "<dist>_Pres.?sm" with a district name of at least one byte */
	if (n < k + 3 + 1 || n - k - 3 > NAME_COMPONENT_MAX)
		return false;
	if (strncasecmp(name + n - k - 3, suffix, k) != 0)
		return false;
	if (!sm_ext_parse(name + n - 3, pf, &f) || f != SM_CMAP)
		return false;
	memcpy(dist, name, n - k - 3);
	dist[n - k - 3] = '\0';
	return true;
}

bool dist_is_map(const char *name)
{
	char dist[NAME_COMPONENT_MAX + 1];
	enum sm_platform pf;

	return dist_map_name(name, dist, &pf);
}

/* ---- reading ---- */

/* "<dist>_<Kind>.<ext>" of file f. */
void dist_kind_file(const struct district *m, enum dist_kind k, enum sm_file f, char *out, size_t n)
{
	char ext[4];

	sm_ext(m->pf, f, ext);
	snprintf(out, n, "%s_%s.%s", m->dist, dist_kind_names[k], ext);
}

/* Lines of one parse, each prefixed with the file's name. */
static void diag_move(struct diag *to, struct diag *from, const char *file)
{
	for (size_t i = 0; i < from->n; i++)
		diag_add(to, "%s: %s", file, from->msg[i]);
	if (from->dropped)
		diag_add(to, "%s: %zu more problems not listed", file, from->dropped);
	diag_free(from);
}

static int ix_cmp(const void *x, const void *y)
{
	const struct dist_id_ix *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

int dist_id_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* An index of n records by the id each has at id_of(i). */
static struct dist_id_ix *ix_build(const void *v, size_t stride, uint32_t n)
{
	struct dist_id_ix *ix = xcalloc_n(n ? n : 1, sizeof *ix);

	if (!ix)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		ix[i] = (struct dist_id_ix){*(const uint64_t *)((const char *)v + i * stride), i};
	qsort(ix, n, sizeof *ix, ix_cmp);
	return ix;
}

/* The first record with this id, or -1. */
long dist_ix_find(const struct dist_id_ix *ix, uint32_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	if (!ix)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ix[lo].id == id ? (long)ix[lo].i : -1;
}

bool dist_ids_has(const uint64_t *v, uint32_t n, uint64_t id)
{
	return n && bsearch(&id, v, n, sizeof *v, dist_id_cmp) != NULL;
}

/* The ATOC table: its ids (the record size as sfil.c decides it: what fills the file). */
static enum rc atoc_read(const struct src *s, struct dist_atoc *a, struct diag *d)
{
	uint8_t h[ATOC_HDR];
	uint64_t count, n, rec = 64;
	enum rc r = src_read(s, 0, h, sizeof h);

	if (r != RC_OK)
		return s->size < ATOC_HDR ? RC_TRUNCATED : r;
	if (memcmp(h, "ATOC", 4) != 0)
		return RC_FORMAT;
	count = ld_u32be(h + 16);
	if (count && s->size == ATOC_HDR + count * 72)
		rec = 72;
	n = (s->size - ATOC_HDR) / rec;
	if (n < count)
		diag_add(d, "ATOC: claims %llu assets; the file holds %llu",
			 (unsigned long long)count, (unsigned long long)n);
	n = n < count ? n : count;
	a->ids = xcalloc_n(n ? (size_t)n : 1, sizeof *a->ids);
	if (!a->ids)
		return RC_NOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint8_t b[8];

		if ((r = src_read(s, ATOC_HDR + i * rec, b, 8)) != RC_OK)
			return r;
		a->ids[i] = ld_u64be(b);
	}
	a->n = (uint32_t)n;
	qsort(a->ids, a->n, sizeof *a->ids, dist_id_cmp);
	return RC_OK;
}

const char *dist_rc_why(enum rc r)
{
	switch (r) {
	case RC_FORMAT:
		return "not the expected magic";
	case RC_TRUNCATED:
		return "shorter than its header";
	default:
		return rc_str(r);
	}
}

/* One manifest of kind k: parsed into its slot of ks, or its state set to say why not. */
static enum rc load_file(struct district *m, enum dist_kind k, enum sm_file f, const struct src *s)
{
	struct dist_kind_set *ks = &m->k[k];
	struct diag d;
	uint8_t h[16];
	char file[NAME_COMPONENT_MAX + 16];
	enum rc r;

	dist_kind_file(m, k, f, file, sizeof file);
	diag_init(&d);
	switch (f) {
	case SM_CMAP:
		r = sm_cmap_read(s, m->pf, &ks->cmap, &d);
		if (r == RC_OK)
			r = sm_cmap_depths(&ks->cmap, &ks->cyclic, &d);
		break;
	case SM_CSPA:
		r = sm_cspa_read(s, m->pf, &ks->cspa, &d);
		break;
	case SM_MMAP:
		r = sm_mmap_read(s, m->pf, &ks->mmap, &d);
		break;
	default:
		r = atoc_read(s, &ks->atoc, &d);
		break;
	}
	diag_move(&m->d, &d, file);
	if (r == RC_NOMEM)
		return r;
	ks->st[f] = r == RC_OK ? DS_OK : DS_BAD;
	if (r != RC_OK)
		diag_add(&m->d, "%s: cannot be read: %s", file, dist_rc_why(r));
	else if (src_read(s, 0, h, sizeof h) == RC_OK &&
		 sm_stamp_peek(h, sizeof h, m->pf, &ks->stamp[f]))
		ks->stamped[f] = true;
	return RC_OK;
}

static enum rc load_kind(struct district *m, enum dist_kind k, const struct src *map,
			 const struct dist_io *io)
{
	static const enum sm_file files[] = {SM_CMAP, SM_CSPA, SM_MMAP, SM_ATOC};
	struct dist_kind_set *ks = &m->k[k];
	enum rc r = RC_OK;

	for (size_t i = 0; i < sizeof files / sizeof *files && r == RC_OK; i++) {
		char file[NAME_COMPONENT_MAX + 16];
		struct src s;
		void *h = NULL;
		enum rc o;

		if (files[i] == SM_CMAP && map) {
			r = load_file(m, k, SM_CMAP, map);
			continue;
		}
		dist_kind_file(m, k, files[i], file, sizeof file);
		o = io->open(io->ctx, file, &s, &h);
		if (o == RC_NOENT)
			continue;
		if (o != RC_OK) {
			if (o == RC_NOMEM)
				return o;
			ks->st[files[i]] = DS_BAD;
			diag_add(&m->d, "%s: cannot be read: %s", file, dist_rc_why(o));
			continue;
		}
		r = load_file(m, k, files[i], &s);
		io->close(io->ctx, h);
	}
	if (r != RC_OK)
		return r;
	ks->cmap_ix = ix_build(ks->cmap.v, sizeof *ks->cmap.v, ks->cmap.n);
	ks->cspa_ix = ix_build(ks->cspa.v, sizeof *ks->cspa.v, ks->cspa.n);
	ks->mmap_ix = ix_build(ks->mmap.v, sizeof *ks->mmap.v, ks->mmap.n);
	return ks->cmap_ix && ks->cspa_ix && ks->mmap_ix ? RC_OK : RC_NOMEM;
}

enum rc dist_load(struct district *m, const char *map_name, const struct src *map,
		  const struct dist_io *io)
{
	enum rc r = RC_OK;

	memset(m, 0, sizeof *m);
	diag_init(&m->d);
	if (!dist_map_name(map_name, m->dist, &m->pf))
		return RC_FORMAT;
	for (int k = 0; k < DIST_KINDS && r == RC_OK; k++)
		r = load_kind(m, (enum dist_kind)k, k == DIST_PRES ? map : NULL, io);
	if (r == RC_OK && m->k[DIST_PRES].st[SM_CMAP] != DS_OK)
		r = map->size < SM_CMAP_HDR ? RC_TRUNCATED : RC_IO;
	return r;
}

void dist_free(struct district *m)
{
	for (int k = 0; k < DIST_KINDS; k++) {
		struct dist_kind_set *ks = &m->k[k];

		sm_cmap_free(&ks->cmap);
		sm_cspa_free(&ks->cspa);
		sm_mmap_free(&ks->mmap);
		free(ks->atoc.ids);
		free(ks->cmap_ix);
		free(ks->cspa_ix);
		free(ks->mmap_ix);
	}
	diag_free(&m->d);
	memset(m, 0, sizeof *m);
}

size_t dist_heap(const struct district *m)
{
	size_t n = sizeof *m + diag_heap_bytes(&m->d);

	for (int k = 0; k < DIST_KINDS; k++) {
		const struct dist_kind_set *ks = &m->k[k];

		n += sm_cmap_heap(&ks->cmap) + (size_t)ks->cspa.n * sizeof *ks->cspa.v +
		     (size_t)ks->mmap.n * sizeof *ks->mmap.v + (size_t)ks->atoc.n * 8 +
		     ((size_t)ks->cmap.n + ks->cspa.n + ks->mmap.n) * sizeof(struct dist_id_ix);
	}
	return n;
}

/* ---- what the lint and the views share ---- */

const char *dist_flag_words(uint8_t f)
{
	if (f & SM_F_CYCLE)
		return "in or leading into a parent cycle";
	if (f & SM_F_DUP_ID)
		return "its id repeats an earlier record";
	if (f & SM_F_NAME)
		return "its name is not a usable file name";
	if (f & SM_F_NONFIN)
		return "a bound or point is not finite";
	if (f & SM_F_UNORDER)
		return "a box's minimum exceeds its maximum";
	if (f & SM_F_LOD)
		return "its level of detail is not 0, 1 or 2";
	return NULL;
}

bool dist_is_global(const struct sm_collection *c)
{
	return c->parent == SM_GLOBAL_PARENT || strcasestr(c->name, "_global") != NULL;
}

/* ---- lookups ---- */

bool dist_first_of_id(const struct district *m, enum dist_kind k, uint32_t i)
{
	const struct dist_kind_set *ks = &m->k[k];

	return i < ks->cmap.n && ks->cmap.v[i].name[0] &&
	       dist_ix_find(ks->cmap_ix, ks->cmap.n, ks->cmap.v[i].id) == (long)i;
}

bool dist_in_scene(const struct district *m, enum dist_kind k, uint32_t i)
{
	const struct dist_kind_set *ks = &m->k[k];
	const struct sm_collection *c;
	long cell;

	if (i >= ks->cmap.n)
		return false;
	c = &ks->cmap.v[i];
	if (!c->name[0] || dist_ix_find(ks->cmap_ix, ks->cmap.n, c->id) != (long)i)
		return false;
	if (dist_is_global(c))
		return true;
	cell = dist_ix_find(ks->cspa_ix, ks->cspa.n, c->id);
	return cell >= 0 && ks->cspa.v[cell].lod == SM_LOD_HIGH;
}

bool dist_atoc_has(const struct district *m, enum dist_kind k, uint64_t id)
{
	return dist_ids_has(m->k[k].atoc.ids, m->k[k].atoc.n, id);
}
