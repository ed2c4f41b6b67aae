/*
 * A district's text views (district.h, docs/worlds.md): collections.tsv, minimap.tsv,
 * info.txt, errors.txt and lint.txt.
 */
#include <inttypes.h>

#include "formats/world/district_int.h"

/* ---- views ---- */

const char dist_collections_header[] =
    "kind\tname\tid\tparent_id\tdepth\tlod\tassets\tbytes\thull_min_x\thull_min_y\thull_min_z\t"
    "hull_max_x\thull_max_y\thull_max_z\tgeom_min_x\tgeom_min_y\tgeom_min_z\tgeom_max_x\t"
    "geom_max_y\tgeom_max_z\tproblem\n";
const char dist_minimap_header[] = "kind\tid\tcollection\tx\ty\tproblem\n";

uint64_t dist_collection_rows(const struct district *m)
{
	uint64_t n = 0;

	for (int k = 0; k < DIST_KINDS; k++)
		n += m->k[k].cmap.n;
	return n;
}

/* Row i of a per-kind concatenation: the kind and the row inside it. */
static int kind_of_row(const struct district *m, uint64_t *i, bool minimap)
{
	for (int k = 0; k < DIST_KINDS; k++) {
		uint32_t n = minimap ? m->k[k].mmap.n : m->k[k].cmap.n;

		if (*i < n)
			return k;
		*i -= n;
	}
	return -1;
}

static void put_box(struct buf *b, const float *lo, const float *hi)
{
	for (int j = 0; j < 3; j++) {
		buf_putc(b, '\t');
		buf_f32txt(b, lo[j]);
	}
	for (int j = 0; j < 3; j++) {
		buf_putc(b, '\t');
		buf_f32txt(b, hi[j]);
	}
}

void dist_collection_row(const struct district *m, uint64_t i, struct buf *b)
{
	int k = kind_of_row(m, &i, false);
	const struct dist_kind_set *ks;
	const struct sm_collection *c;
	const char *w;
	long cell;

	if (k < 0)
		return;
	ks = &m->k[k];
	c = &ks->cmap.v[i];
	cell = dist_ix_find(ks->cspa_ix, ks->cspa.n, c->id);
	buf_printf(b, "%s\t%s\t0x%016" PRIx64 "\t0x%016" PRIx64 "\t", dist_kind_names[k], c->safe,
		   c->id, c->parent);
	if (c->depth == SM_DEPTH_CYCLE)
		buf_puts(b, "cycle");
	else
		buf_printf(b, "%u", c->depth);
	if (cell >= 0)
		buf_printf(b, "\t%u", ks->cspa.v[cell].lod);
	else
		buf_puts(b, "\t-");
	buf_printf(b, "\t%u\t%u", c->assets, c->size);
	if (cell >= 0) {
		put_box(b, ks->cspa.v[cell].hull_min, ks->cspa.v[cell].hull_max);
		put_box(b, ks->cspa.v[cell].geom_min, ks->cspa.v[cell].geom_max);
	} else {
		buf_puts(b, "\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-");
	}
	w = dist_flag_words(c->flags | (cell >= 0 ? ks->cspa.v[cell].flags : 0));
	buf_printf(b, "\t%s\n", w ? w : "-");
}

uint64_t dist_minimap_rows(const struct district *m)
{
	uint64_t n = 0;

	for (int k = 0; k < DIST_KINDS; k++)
		n += m->k[k].mmap.n;
	return n;
}

void dist_minimap_row(const struct district *m, uint64_t i, struct buf *b)
{
	int k = kind_of_row(m, &i, true);
	const struct dist_kind_set *ks;
	const struct sm_point *p;
	const char *w;
	long c;

	if (k < 0)
		return;
	ks = &m->k[k];
	p = &ks->mmap.v[i];
	c = dist_ix_find(ks->cmap_ix, ks->cmap.n, p->id);
	buf_printf(b, "%s\t0x%016" PRIx64 "\t%s\t", dist_kind_names[k], p->id,
		   c >= 0 ? ks->cmap.v[c].safe : "-");
	buf_f32txt(b, p->x);
	buf_putc(b, '\t');
	buf_f32txt(b, p->y);
	w = dist_flag_words(p->flags);
	buf_printf(b, "\t%s\n", w ? w : "-");
}

static const char *state_word(enum dist_state st)
{
	return st == DS_OK ? "read" : st == DS_BAD ? "unreadable" : "missing";
}

void dist_info(const struct district *m, const struct dist_scan *s, const struct dist_objects *o,
	       struct buf *b)
{
	uint64_t cols = 0, assets = 0;

	buf_printf(b, "format: district\ndistrict: %s\nplatform: %s\n", m->dist,
		   sm_platforms[m->pf].name);
	for (int k = 0; k < DIST_KINDS; k++) {
		const struct dist_kind_set *ks = &m->k[k];
		char file[NAME_COMPONENT_MAX + 16];

		buf_printf(b, "%s:", dist_kind_names[k]);
		for (int f = SM_ATOC; f < SM_FILES; f++) {
			dist_kind_file(m, (enum dist_kind)k, (enum sm_file)f, file, sizeof file);
			buf_printf(b, " %s %s,", file, state_word(ks->st[f]));
		}
		b->len--; /* the last comma */
		if (ks->stamped[SM_CMAP])
			buf_printf(b, "\n%s_stamp: 0x%016" PRIx64, dist_kind_names[k],
				   ks->stamp[SM_CMAP]);
		buf_printf(b, "\n%s_collections: %u\n%s_assets: %u\n", dist_kind_names[k],
			   ks->cmap.n, dist_kind_names[k], ks->atoc.n);
		cols += ks->cmap.n;
		assets += ks->atoc.n;
	}
	buf_printf(b, "collections: %" PRIu64 "\nassets: %" PRIu64 "\nmodels: %u\ntextures: %u\n",
		   cols, assets, m->k[DIST_PRES].atoc.n, m->k[DIST_TEX].atoc.n);
	if (o)
		buf_printf(b,
			   "props: %" PRIu64 "\nprops_unresolved: %" PRIu64 "\nrails: %" PRIu64
			   "\nrail_segments: %" PRIu64 "\ncollision_meshes: %" PRIu64
			   "\ncollision_triangles: %" PRIu64 "\n",
			   o->n_props, o->n_props - o->n_resolved, o->n_rails, o->n_segments,
			   o->n_meshes, o->n_tris);
	else
		buf_puts(
		    b, "props: not read (a single-file mount reaches no arena)\nrails: not read\n");
	buf_printf(b, "unresolved: %zu\nproblems: %zu\nfindings: %zu\n",
		   s->unresolved + (o ? o->unresolved : 0),
		   diag_count(&m->d) + diag_count(&s->d) + (o ? diag_count(&o->d) : 0),
		   diag_count(&s->lint) + (o ? diag_count(&o->lint) : 0));
}

static void diag_lines(const struct diag *d, struct buf *b)
{
	for (size_t i = 0; i < d->n; i++) {
		buf_puts(b, d->msg[i]);
		buf_putc(b, '\n');
	}
	if (d->dropped)
		buf_printf(b, "... %zu more not listed\n", d->dropped);
}

void dist_errors(const struct district *m, const struct dist_scan *s, struct buf *b)
{
	diag_lines(&m->d, b);
	diag_lines(&s->d, b);
}

void dist_lint(const struct dist_scan *s, const struct dist_objects *o, struct buf *b)
{
	diag_lines(&s->lint, b);
	if (o)
		diag_lines(&o->lint, b);
	buf_printf(b, "%zu findings\n", diag_count(&s->lint) + (o ? diag_count(&o->lint) : 0));
}
