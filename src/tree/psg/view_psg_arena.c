/*
 * Text views of an open RW4 arena: header.txt, dictionary.tsv, sections/ TSVs, toc.tsv, the
 * PSG lines of info.txt and the decoded objects/NNNN.TypeName.txt files. Tables render row by
 * row (tree/core/views.h); the rest are small whole texts.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_objects.h"
#include "tree/psg/view_psg.h"

/*
 * Buffer objects (VB/IB/Texture) checked for back-references from a base resource, nearest
 * dictionary rows first: referencers sit next to their base resource in every known layout,
 * and the text must stay cheap because its size is computed for every stat.
 */
#define BR_SCAN_MAX 256u
/* Extra VersionData bytes shown in hex. */
#define HEX_SHOW_MAX 64u

void view_obj_label(const struct arena *a, uint32_t i, struct buf *out)
{
	char lb[16];

	if (i >= a->n_dict) {
		buf_printf(out, "%04" PRIu32 ".missing", i);
		return;
	}
	buf_printf(out, "%04" PRIu32 ".%s", i, rw_type_label(arena_row(a, i)->type_id, lb));
}

static void put_ref(struct buf *b, const struct arena *a, const struct skate_ref *r)
{
	buf_printf(b, "0x%08" PRIX32, r->raw);
	if (r->res == RC_OK) {
		buf_puts(b, " -> ");
		view_obj_label(a, r->obj, b);
		if (r->sub || r->off)
			buf_printf(b, "+0x%" PRIX32, r->off);
	} else if (r->res == RC_NOENT) {
		buf_puts(b, " (null)");
	} else {
		buf_printf(b, " (invalid: %s)", rc_str(r->res));
	}
}

/* A string field: 0x000000A0 "text", or (none) / (bad ...). */
static void put_str(struct buf *b, const struct skate_str *s)
{
	buf_printf(b, "0x%08" PRIX32, s->off);
	if (s->p) {
		buf_puts(b, " \"");
		buf_tsv_name(b, s->p, s->len);
		buf_putc(b, '"');
	} else if (s->bad) {
		buf_puts(b, " (bad string offset)");
	} else {
		buf_puts(b, " (none)");
	}
}

static void put_hex_bytes(struct buf *b, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_printf(b, i ? " %02X" : "%02X", p[i]);
}

/* ---- header.txt ---- */

static void put_hexdec(struct buf *b, const char *key, uint64_t v)
{
	buf_printf(b, "%s: 0x%08" PRIX64 " (%" PRIu64 ")\n", key, v, v);
}

/* header.txt, first part: the header's fields as stored. */
static void header_fields_txt(const struct arena_header *h, struct buf *out)
{
	buf_puts(out, "magic: ");
	put_hex_bytes(out, h->magic, sizeof h->magic);
	buf_puts(out, "\nplatform: ");
	buf_tsv_name(out, h->platform, sizeof h->platform);
	buf_printf(out, "\nis_big_endian: %u\n", h->is_big_endian);
	buf_printf(out, "pointer_size_bits: %u\n", h->pointer_bits);
	buf_printf(out, "pointer_alignment: %u\n", h->pointer_align);
	buf_printf(out, "unused: %u\n", h->unused);
	buf_puts(out, "major_version: ");
	buf_tsv_name(out, h->major, 4);
	buf_puts(out, "\nminor_version: ");
	buf_tsv_name(out, h->minor, 4);
	buf_printf(out, "\nbuild_no: %" PRIu32 "\n", h->build_no);
	buf_printf(out, "id: 0x%08" PRIX32 "\n", h->id);
	buf_printf(out, "num_entries: %" PRIu32 "\n", h->num_entries);
	buf_printf(out, "num_used: %" PRIu32 "\n", h->num_used);
	put_hexdec(out, "alignment", h->alignment);
	put_hexdec(out, "virt", h->virt);
	put_hexdec(out, "dict_start", h->dict_start);
	put_hexdec(out, "sections", h->sections);
	put_hexdec(out, "base", h->base);
	put_hexdec(out, "unfix_context", h->unfix_context);
	put_hexdec(out, "fix_context", h->fix_context);
}

/* header.txt, second part: the resource descriptors and how they cover the file. */
static void header_resources_txt(const struct arena *a, struct buf *out)
{
	const struct arena_header *h = &a->h;
	unsigned n = h->n_rd < RW_MAX_RD ? h->n_rd : RW_MAX_RD;
	uint64_t sum = 0;

	buf_printf(out, "resource_descriptors: %u\n", h->n_rd);
	for (unsigned k = 0; k < n; k++) {
		buf_printf(out,
			   "resource_descriptor[%u] %s: size 0x%08" PRIX32 " (%" PRIu32
			   ") align 0x%" PRIX32 "\n",
			   k, arena_rd_name(h->plat, k), h->rd[k].size, h->rd[k].size,
			   h->rd[k].align);
		sum += h->rd[k].size;
	}
	for (unsigned k = 0; k < n; k++)
		buf_printf(out,
			   "resources_used[%u] %s: size 0x%08" PRIX32 " (%" PRIu32
			   ") align 0x%" PRIX32 "\n",
			   k, arena_rd_name(h->plat, k), h->ru[k].size, h->ru[k].size,
			   h->ru[k].align);
	for (unsigned k = 0; k < n; k++)
		buf_printf(out, "target_resource[%u] %s: 0x%08" PRIX32 "\n", k,
			   arena_rd_name(h->plat, k), h->target_resource[k]);
	buf_printf(out, "arena_group: 0x%08" PRIX32 "\n", h->arena_group);
	put_hexdec(out, "header_size", h->header_size);
	for (unsigned k = 1; k < n; k++)
		buf_printf(out, "region_base[%u] %s: 0x%08" PRIX64 " (%" PRIu64 ")\n", k,
			   arena_rd_name(h->plat, k), h->region_base[k], h->region_base[k]);
	put_hexdec(out, "file_size", a->file_size);
	buf_printf(out, "descriptor_size_sum: 0x%08" PRIX64 " (%" PRIu64 ")", sum, sum);
	if (sum == a->file_size)
		buf_puts(out, " = file size\n");
	else if (sum < a->file_size)
		buf_printf(out, " file is %" PRIu64 " bytes longer\n", a->file_size - sum);
	else
		buf_printf(out, " file is %" PRIu64 " bytes shorter\n", sum - a->file_size);
}

/* header.txt, last part: the section manifest and each section's header. */
static void header_sections_txt(const struct arena *a, struct buf *out)
{
	static const char *const sn[4] = {"types", "external_arenas", "subreferences", "atoms"};
	const struct arena_header *h = &a->h;

	buf_printf(out, "\nsection_manifest at 0x%08" PRIX32 ":\n", h->sections);
	buf_printf(out, "  type_id: 0x%08" PRIX32 "\n", a->manifest_type);
	buf_printf(out, "  num_entries: %" PRIu32 "\n", a->manifest_count);
	buf_printf(out, "  dict: 0x%08" PRIX32 "\n", a->manifest_dict);
	for (int k = 0; k < 4; k++)
		buf_printf(out, "  %s: 0x%08" PRIX32 " (absolute 0x%08" PRIX64 ")\n", sn[k],
			   a->section_off[k], (uint64_t)h->sections + a->section_off[k]);
	buf_printf(out, "  sections_end: 0x%08" PRIX64 "\n", a->sections_end);
	buf_puts(out, "\nsection types:\n");
	buf_printf(out, "  type_id: 0x%08" PRIX32 "\n", a->types_type);
	buf_printf(out, "  num_entries: %" PRIu32 "\n", a->n_types);
	buf_printf(out, "  dict: 0x%08" PRIX32 "\n", a->types_dict);
	buf_puts(out, "\nsection external_arenas:\n");
	buf_printf(out, "  type_id: 0x%08" PRIX32 "\n", a->ext_type);
	buf_printf(out, "  num_entries: %" PRIu32 "\n", a->ext_count);
	buf_printf(out, "  dict: 0x%08" PRIX32 "\n", a->ext_dict);
	buf_puts(out, "\nsection subreferences:\n");
	buf_printf(out, "  type_id: 0x%08" PRIX32 "\n", a->sub_type);
	buf_printf(out, "  num_entries: %" PRIu32 "\n", a->sub_count);
	buf_printf(out, "  dict_after_refix: 0x%08" PRIX32 "\n", a->sub_dict_after_refix);
	buf_printf(out, "  records_after_refix: 0x%08" PRIX32 "\n", a->sub_records_after_refix);
	buf_printf(out, "  dict: 0x%08" PRIX32 "\n", a->sub_dict);
	buf_printf(out, "  records: 0x%08" PRIX32 "\n", a->sub_records);
	buf_printf(out, "  num_used: %" PRIu32 "\n", a->sub_num_used);
	buf_puts(out, "\nsection atoms:\n");
	buf_printf(out, "  type_id: 0x%08" PRIX32 "\n", a->atoms_type);
	buf_printf(out, "  num_entries: %" PRIu32 "\n", a->atoms_count);
	buf_printf(out, "  atom_table: 0x%08" PRIX32 "\n", a->atoms_table);
}

enum rc view_header_txt(const struct arena *a, struct buf *out)
{
	header_fields_txt(&a->h, out);
	header_resources_txt(a, out);
	header_sections_txt(a, out);
	return out->oom ? RC_NOMEM : RC_OK;
}

/* ---- dictionary.tsv and sections ---- */

static enum rc print_dict_row(const void *ctx, uint64_t i, const void *rec, struct buf *out)
{
	const struct arena *a = ctx;
	const struct arena_dict_entry *e = arena_row(a, i);
	char lb[16];

	(void)rec;
	buf_printf(out,
		   "%" PRIu64 "\t0x%08" PRIX32 "\t%s\t%" PRIu32 "\t0x%08" PRIX64 "\t%" PRIu32
		   "\t%" PRIu32 "\t0x%08" PRIX32 "\t0x%08" PRIX32 "\t%s\t%s\n",
		   i, e->type_id, rw_type_label(e->type_id, lb), e->type_index, e->start, e->size,
		   e->align, e->ptr, e->reloc, e->base_resource ? "yes" : "no",
		   e->readable ? "yes" : "no");
	return RC_OK;
}

static enum rc print_type_row(const void *ctx, uint64_t i, const void *rec, struct buf *out)
{
	const struct arena *a = ctx;
	char lb[16];

	(void)rec;
	buf_printf(out, "%" PRIu64 "\t0x%08" PRIX32 "\t%s\n", i, a->types[i],
		   rw_type_label(a->types[i], lb));
	return RC_OK;
}

static enum rc print_subref_row(const void *ctx, uint64_t i, const void *rec, struct buf *out)
{
	const struct arena *a = ctx;
	const struct arena_subref *r = &a->subrefs[i];
	char lb[16];

	(void)rec;
	buf_printf(out, "%" PRIu64 "\t%" PRIu32 "\t%s\t0x%08" PRIX32 "\t", i, r->object,
		   r->object < a->n_dict ? rw_type_label(arena_row(a, r->object)->type_id, lb)
					 : "-",
		   r->offset);
	if (r->valid && r->object < a->n_dict) {
		view_obj_label(a, r->object, out);
		buf_printf(out, "+0x%" PRIX32 "\n", r->offset);
	} else if (r->object >= a->n_dict) {
		buf_printf(out, "invalid (object %" PRIu32 " of %" PRIu32 ")\n", r->object,
			   a->n_dict);
	} else {
		buf_printf(out, "invalid (offset past %" PRIu32 " bytes)\n",
			   arena_row(a, r->object)->size);
	}
	return RC_OK;
}

struct rows view_arena_rows(const struct arena *a, enum view_arena_table which)
{
	struct rows t = {NULL, 0, 0, NULL, NULL, a};

	switch (which) {
	case VA_DICT:
		t.header = "index\ttype_id\ttype_name\ttype_index\toffset\tsize\talign\tptr\t"
			   "reloc\tbase_resource\treadable\n";
		t.n = a->n_dict;
		t.print = print_dict_row;
		break;
	case VA_TYPES:
		t.header = "index\ttype_id\ttype_name\n";
		t.n = a->n_types;
		t.print = print_type_row;
		break;
	case VA_SUBREFS:
		t.header = "index\tobject\tobject_type\toffset\ttarget\n";
		t.n = a->n_subrefs;
		t.print = print_subref_row;
		break;
	}
	return t;
}

enum rc view_external_arenas_tsv(const struct arena *a, struct buf *out)
{
	buf_puts(out, "index\trecord\tpointer\tmeaning\n");
	for (int i = 0; i < 3; i++) {
		const char *m = "";

		if (a->ext_records[i] == a->h.id)
			m = "this arena";
		else if (a->ext_records[i] == 0xFFB00000u)
			m = "null arena";
		buf_printf(out, "%d\t0x%08" PRIX32 "\t0x%08" PRIX32 "\t%s\n", i, a->ext_records[i],
			   a->ext_ptrs[i], m);
	}
	return out->oom ? RC_NOMEM : RC_OK;
}

/* ---- toc.tsv ---- */

static const char *toc_type_name(uint32_t type, char lb[16])
{
	if (type == RW_T_TEXTURE_HASH)
		return "Texture";
	return rw_type_label(type, lb);
}

void view_toc_free(struct view_toc *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->e[i].name);
	free(v->e);
	free(v);
}

static bool toc_push(struct view_toc *v, size_t *cap, const struct skate_toc_entry *e)
{
	struct view_toc_entry *x = xgrow_n(v->e, v->n, cap, sizeof *x, 16);

	if (!x)
		return false;
	v->e = x;
	x = &v->e[v->n];
	memset(x, 0, sizeof *x);
	x->guid = e->guid;
	x->type = e->type;
	x->object = e->object;
	if (e->name.p) {
		x->name = malloc(e->name.len + 1);
		if (!x->name)
			return false;
		memcpy(x->name, e->name.p, e->name.len);
		x->name[e->name.len] = 0;
		x->name_len = e->name.len;
	}
	v->n++;
	return true;
}

enum rc view_toc_load(const struct src *s, const struct arena *a, struct view_toc **out)
{
	struct view_toc *v = calloc(1, sizeof *v);
	size_t cap = 0;
	enum rc r = v ? RC_OK : RC_NOMEM;

	for (uint32_t i = 0; r == RC_OK && i < a->n_dict; i++) {
		struct skate_toc t;
		uint8_t *p = NULL;
		size_t len = 0;

		if (arena_row(a, i)->type_id != RW_T_TOC ||
		    arena_read_object(s, a, i, &p, &len) != RC_OK)
			continue; /* an unreadable TOC is a line in errors.txt already */
		r = skate_toc_decode(a, i, p, len, &t, NULL);
		if (r == RC_OK) {
			for (uint32_t k = 0; k < t.n_entries && r == RC_OK; k++)
				if (!toc_push(v, &cap, &t.entries[k]))
					r = RC_NOMEM;
			skate_toc_free(&t);
		} else if (r != RC_NOMEM) {
			r = RC_OK;
		}
		free(p);
	}
	if (r != RC_OK) {
		if (v)
			view_toc_free(v);
		return r;
	}
	*out = v;
	return RC_OK;
}

struct toc_ctx {
	const struct arena *a;
	const struct view_toc *v;
};

static enum rc print_toc_row(const void *ctx, uint64_t i, const void *rec, struct buf *out)
{
	const struct toc_ctx *c = ctx;
	const struct view_toc_entry *e = &c->v->e[i];
	char lb[16];

	(void)rec;
	buf_printf(out, "%" PRIu64 "\t", i);
	if (e->name)
		buf_tsv_name(out, e->name, e->name_len);
	buf_printf(out, "\t0x%016" PRIX64 "\t0x%08" PRIX32 "\t%s\t", e->guid, e->type,
		   toc_type_name(e->type, lb));
	if (e->object.res == RC_OK) {
		buf_puts(out, "-> ");
		view_obj_label(c->a, e->object.obj, out);
		if (e->object.sub || e->object.off)
			buf_printf(out, "+0x%" PRIX32, e->object.off);
	} else if (e->object.res == RC_NOENT) {
		buf_puts(out, "null");
	} else {
		buf_printf(out, "invalid (0x%08" PRIX32 ")", e->object.raw);
	}
	buf_putc(out, '\n');
	return RC_OK;
}

enum rc view_toc_render(const struct arena *a, const struct view_toc *v, uint64_t first,
			struct emit *e)
{
	struct toc_ctx c = {a, v};
	struct rows t = {
	    "index\tname\tguid\ttype\ttype_name\ttarget\n", v->n, 0, NULL, print_toc_row, &c};

	return view_rows_render(&t, first, e);
}

/* ---- info.txt lines ---- */

struct type_count {
	uint32_t id, n;
};

static int cmp_type_count(const void *x, const void *y)
{
	const struct type_count *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

enum rc view_info_summary(const struct arena *a, struct buf *out)
{
	struct type_count *ids = NULL;
	uint32_t bad_sub = 0;

	buf_puts(out, "container: RenderWare 4 arena\nplatform: ");
	buf_tsv_name(out, a->h.platform, sizeof a->h.platform);
	buf_printf(out, " (%s-endian)\nversion: ", a->big_endian ? "big" : "little");
	buf_tsv_name(out, a->h.major, 4);
	buf_putc(out, '.');
	buf_tsv_name(out, a->h.minor, 4);
	buf_printf(out, " build %" PRIu32 "\n", a->h.build_no);
	buf_printf(out, "arena_id: 0x%08" PRIX32 "\n", a->h.id);
	buf_printf(out, "objects: %" PRIu32 "\n", a->n_dict);
	if (a->n_runs) { /* counted by runs: a run of a million zero rows is one entry */
		ids = xcalloc_n(a->n_runs, sizeof *ids);
		if (!ids)
			return RC_NOMEM;
		for (uint32_t k = 0; k < a->n_runs; k++) {
			ids[k].id = a->runs[k].type_id;
			ids[k].n = arena_run_rows(a, k);
		}
		qsort(ids, a->n_runs, sizeof *ids, cmp_type_count);
		for (uint32_t k = 0; k < a->n_runs;) {
			uint32_t j = k, n = 0;
			char lb[16];

			for (; j < a->n_runs && ids[j].id == ids[k].id; j++)
				n += ids[j].n;
			buf_printf(out, "  %s: %" PRIu32 "\n", rw_type_label(ids[k].id, lb), n);
			k = j;
		}
		free(ids);
	}
	for (uint32_t i = 0; i < a->n_subrefs; i++)
		bad_sub += !a->subrefs[i].valid;
	buf_printf(out, "subreferences: %" PRIu32 " (%" PRIu32 " invalid)\n", a->n_subrefs,
		   bad_sub);
	buf_printf(out, "types: %" PRIu32 "\n", a->n_types);
	return out->oom ? RC_NOMEM : RC_OK;
}

/* ---- objects/NNNN.TypeName.txt ---- */

const char *view_elem_class_name(uint32_t c)
{
	return c == 1 ? "PERVERTEX" : c == 2 ? "PERINSTANCE" : c == 0 ? "NA" : "?";
}

/* A reference field by the one rule (arena_ref_to): what it names, or why it names nothing. */
void view_ref_text(struct buf *out, const struct arena *a, const char *field, uint32_t v,
		   uint32_t want)
{
	uint32_t obj = 0, off = 0;
	enum rc r = arena_ref_to(a, v, want, &obj, &off);
	char tb[16], wb[16];

	buf_printf(out, "%s: 0x%08X", field, v);
	if (r == RC_NOENT) {
		buf_puts(out, " (null)\n");
		return;
	}
	if ((r != RC_OK && r != RC_CORRUPT) || obj >= a->n_dict) {
		buf_printf(out, " (does not resolve: %s)\n", rc_str(r));
		return;
	}
	buf_printf(out, " -> %04u.%s", obj, rw_type_label(arena_row(a, obj)->type_id, tb));
	if (v >> 22)
		buf_printf(out, "+0x%X", off);
	if (r == RC_CORRUPT)
		buf_printf(out, " (not a %s)", arena_want_name(want, wb));
	buf_putc(out, '\n');
}

static void put_obj_head(struct buf *b, const struct arena *a, uint32_t idx)
{
	const struct arena_dict_entry *e = arena_row(a, idx);

	buf_puts(b, "object: ");
	view_obj_label(a, idx, b);
	buf_printf(b, "\ntype_id: 0x%08" PRIX32 "\ntype_index: %" PRIu32 "\n", e->type_id,
		   e->type_index);
	buf_printf(b, "offset: 0x%08" PRIX64 "\nsize: %" PRIu32 "\nalign: 0x%" PRIX32 "\n",
		   e->start, e->size, e->align);
}

static void put_vec(struct buf *b, const float *v, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			buf_putc(b, ' ');
		buf_f32txt(b, v[i]);
	}
}

static void text_version(struct buf *b, const struct skate_version *v)
{
	buf_printf(b, "m_uiVersion: %" PRIu32 "\nm_uiRevision: %" PRIu32 "\nextra_bytes: %zu",
		   v->version, v->revision, v->n_extra);
	if (v->n_extra) {
		buf_puts(b, " (");
		put_hex_bytes(b, v->extra, v->n_extra < HEX_SHOW_MAX ? v->n_extra : HEX_SHOW_MAX);
		buf_puts(b, v->n_extra > HEX_SHOW_MAX ? " ...)" : ")");
	}
	buf_putc(b, '\n');
}

static void text_toc(struct buf *b, const struct arena *a, const struct skate_toc *t)
{
	buf_printf(b,
		   "m_uiItemsCount: %" PRIu32 "\nm_pArray: 0x%08" PRIX32 "\nm_pNames: 0x%08" PRIX32
		   "\nm_uiTypeCount: %" PRIu32 "\nm_pTypeMap: 0x%08" PRIX32 "\n",
		   t->items_count, t->p_array, t->p_names, t->type_count, t->p_type_map);
	for (uint32_t i = 0; i < t->n_entries; i++) {
		const struct skate_toc_entry *e = &t->entries[i];
		char lb[16];

		buf_printf(b, "entry %" PRIu32 " at 0x%08" PRIX32 ":\n  m_Name: ", i,
			   (uint32_t)(t->p_array + i * 24u));
		put_str(b, &e->name);
		buf_printf(b,
			   "\n  padding: 0x%08" PRIX32 "\n  m_uiGuid: 0x%016" PRIX64
			   "\n  m_Type: 0x%08" PRIX32 " (%s)\n  m_pObject: ",
			   e->pad, e->guid, e->type, toc_type_name(e->type, lb));
		put_ref(b, a, &e->object);
		buf_putc(b, '\n');
	}
	buf_puts(b, "type map (informational, not used):\n");
	for (uint32_t i = 0; i < t->n_map; i++) {
		char lb[16];

		buf_printf(b, "  %" PRIu32 ": m_Type 0x%08" PRIX32 " (%s) m_uiIndex %" PRIu32 "\n",
			   i, t->map[i].type, toc_type_name(t->map[i].type, lb), t->map[i].index);
	}
}

static void text_rmd(struct buf *b, const struct arena *a, const struct skate_rmd *m)
{
	buf_printf(b,
		   "m_uiNumMaterials: %" PRIu32 "\nm_uiNumChannels: %" PRIu32
		   "\nm_pMaterials: 0x%08" PRIX32 "\nm_pChannels: 0x%08" PRIX32
		   "\nm_StringList: 0x%08" PRIX32 "\n",
		   m->num_materials, m->num_channels, m->p_materials, m->p_channels,
		   m->p_string_list);
	for (uint32_t i = 0; i < m->n_materials; i++) {
		const struct skate_rmd_material *t = &m->materials[i];

		buf_printf(b,
			   "material %" PRIu32 " at 0x%08" PRIX32 ":\n  m_uiNumChannels: %" PRIu32
			   "\n  m_uiFlags: 0x%08" PRIX32 "\n  m_pChannels: 0x%08" PRIX32,
			   i, t->at, t->num_channels, t->flags, t->p_channels);
		if (!t->channels_ok)
			buf_puts(b, " (outside the channel array)\n");
		else if (t->num_channels)
			buf_printf(b, " (channels %" PRIu32 "..%" PRIu32 ")\n", t->first_channel,
				   t->first_channel + t->num_channels - 1);
		else
			buf_puts(b, " (no channels)\n");
	}
	for (uint32_t i = 0; i < m->n_channels; i++) {
		const struct skate_rmd_channel *c = &m->channels[i];

		buf_printf(b, "channel %" PRIu32 " at 0x%08" PRIX32 ":\n  m_ShaderInput: ", i,
			   c->at);
		put_str(b, &c->shader_input);
		buf_printf(
		    b,
		    "\n  m_uiFlags: 0x%04X\n  m_uiImageChannel: 0x%04X\n  m_uiPad: 0x%08" PRIX32
		    " 0x%08" PRIX32 "\n",
		    c->flags, c->image_channel, c->pad[0], c->pad[1]);
		if (c->kind == SKATE_UNION_CONSTANTS) {
			buf_puts(b, "  union: constants\n  m_ShaderConstants: ");
			put_vec(b, c->constants, 4);
			buf_printf(b,
				   "\n  as guid/stream: m_uiGuid 0x%016" PRIX64
				   " m_StreamName 0x%08" PRIX32 " m_pStream 0x%08" PRIX32 "\n",
				   c->guid, c->raw[2], c->raw[3]);
			continue;
		}
		buf_printf(b, "  union: %s\n  m_uiGuid: 0x%016" PRIX64 "\n  m_StreamName: ",
			   c->kind == SKATE_UNION_STREAM
			       ? "stream (m_StreamName names a string)"
			       : "guid (m_StreamName and m_pStream are 0)",
			   c->guid);
		put_str(b, &c->stream_name);
		buf_puts(b, "\n  m_pStream: ");
		put_ref(b, a, &c->stream);
		buf_puts(b, "\n  as m_ShaderConstants: ");
		put_vec(b, c->constants, 4);
		buf_putc(b, '\n');
	}
	buf_printf(b, "string list (%" PRIu32 "):\n", m->n_strings);
	for (uint32_t i = 0; i < m->n_strings; i++) {
		buf_printf(b, "  %" PRIu32 ": ", i);
		put_str(b, &m->strings[i]);
		buf_putc(b, '\n');
	}
}

static void text_instance(struct buf *b, const struct arena *a, const struct skate_instance_data *m)
{
	buf_printf(b,
		   "m_TypeID: 0x%08" PRIX32 "\nm_uiNumInstances: %" PRIu32
		   "\nm_uiNumStrings: %" PRIu32 "\nm_Instances: 0x%08" PRIX32
		   "\nm_StringList: 0x%08" PRIX32 "\ninstance_stride: 0x%" PRIX32 "\n",
		   m->type_id, m->num_instances, m->num_strings, m->p_instances, m->p_string_list,
		   m->stride);
	for (uint32_t i = 0; i < m->n_inst; i++) {
		const struct skate_instance *in = &m->inst[i];

		buf_printf(b, "instance %" PRIu32 " at 0x%08" PRIX32 ":\n", i, in->at);
		for (int r = 0; r < 4; r++) {
			buf_printf(b, "  m_TransformMatrix[%d]: ", r);
			put_vec(b, in->matrix + 4 * r, 4);
			buf_putc(b, '\n');
		}
		buf_puts(b, "  m_BBox.min: ");
		put_vec(b, in->aabb_min, 4);
		buf_puts(b, "\n  m_BBox.max: ");
		put_vec(b, in->aabb_max, 4);
		buf_printf(b,
			   "\n  m_uiGuid: 0x%016" PRIX64 "\n  m_uiGuidLocal: 0x%016" PRIX64
			   "\n  m_AttribKey.m_ClassKey: 0x%016" PRIX64
			   "\n  m_AttribKey.m_InstanceKey: 0x%016" PRIX64 "\n  m_pRModel: ",
			   in->guid, in->guid_local, in->class_key, in->instance_key);
		put_ref(b, a, &in->rmodel);
		buf_puts(b, "\n  m_pCModel: ");
		put_ref(b, a, &in->cmodel);
		buf_puts(b, "\n  m_pEmbedded: ");
		put_ref(b, a, &in->embedded);
		buf_puts(b, "\n  m_Name: ");
		put_str(b, &in->name);
		buf_puts(b, "\n  m_Description: ");
		put_str(b, &in->description);
		buf_puts(b, "\n  m_Component: ");
		put_str(b, &in->component);
		buf_puts(b, "\n  m_Category: ");
		put_str(b, &in->category);
		buf_putc(b, '\n');
	}
	buf_printf(b, "string list (%" PRIu32 "):\n", m->n_strings);
	for (uint32_t i = 0; i < m->n_strings; i++) {
		buf_printf(b, "  %" PRIu32 ": ", i);
		put_str(b, &m->strings[i]);
		buf_putc(b, '\n');
	}
}

/* Offset of the u32 naming a base resource inside objects of this type, or -1. */
static int buffer_field(uint32_t type_id)
{
	if (type_id == RW_T_VB || type_id == RW_T_IB)
		return 0;
	if (type_id == RW_T_TEXTURE)
		return 0x18;
	return -1;
}

/*
 * The m_buffer fields a base resource's scan reads lie in the main block, near each other: read
 * through a window, one per direction of the scan, a view costs a few reads instead of up to
 * BR_SCAN_MAX 4-byte ones (those were 40 % of the daemon's time for `find` over a large arena,
 * whose errors.txt and stats render every object's text). A field the window cannot hold is
 * read alone, so the bytes and the failures are those of a direct read.
 */
#define BR_WIN 4096u
struct br_win {
	const struct src *s;
	bool down; /* the scan moves to lower offsets: keep the window below the field */
	uint64_t off;
	size_t len;
	uint8_t b[BR_WIN];
};

static enum rc br_read(struct br_win *w, uint64_t at, uint8_t v[4])
{
	uint64_t size = w->s->size, start;

	if (at >= w->off && at - w->off < w->len && w->len - (at - w->off) >= 4) {
		memcpy(v, w->b + (at - w->off), 4);
		return RC_OK;
	}
	if (at > size || size - at < 4)
		return src_read(w->s, at, v, 4);
	start = w->down ? (at + 4 > BR_WIN ? at + 4 - BR_WIN : 0) : at;
	w->len = (size_t)(size - start < BR_WIN ? size - start : BR_WIN);
	w->off = start;
	if (src_read(w->s, start, w->b, w->len) != RC_OK) {
		w->len = 0;
		return src_read(w->s, at, v, 4);
	}
	memcpy(v, w->b + (at - start), 4);
	return RC_OK;
}

/* Does object j reference base resource idx through its m_buffer field? */
static bool refs_base_resource(struct br_win *w, const struct arena *a, uint32_t j, uint32_t idx,
			       uint32_t *scanned)
{
	const struct arena_dict_entry *o = arena_row(a, j);
	int f = buffer_field(o->type_id);
	uint8_t v[4];

	if (f < 0 || !o->readable || o->size < (uint32_t)f + 4)
		return false;
	(*scanned)++;
	if (br_read(w, o->start + (uint64_t)f, v) != RC_OK)
		return false;
	return (a->big_endian ? ld_u32be(v) : ld_u32le(v)) == idx;
}

static void text_base_resource(struct buf *b, const struct src *s, const struct arena *a,
			       uint32_t idx)
{
	const struct arena_dict_entry *e = arena_row(a, idx);
	uint32_t k = e->type_id - 0x0001002Fu, scanned = 0, found = 0;
	uint32_t hits[2 * 8];
	uint32_t n_hits = 0;
	bool more = false;
	struct br_win below = {.s = s, .down = true}, above = {.s = s};

	buf_printf(b, "region: %" PRIu32 " %s\n", k,
		   k < a->h.n_rd ? arena_rd_name(a->h.plat, k) : "(no such descriptor)");
	if (k < a->h.n_rd && k < RW_MAX_RD)
		buf_printf(b, "region_base: 0x%08" PRIX64 "\n", a->h.region_base[k]);
	buf_printf(b,
		   "region_offset: 0x%08" PRIX32 "\nabsolute_offset: 0x%08" PRIX64
		   "\nreadable: %s\nreferenced by:\n",
		   e->ptr, e->start, e->readable ? "yes" : "no");
	/* Nearest rows first; hits are printed in ascending index order. */
	for (uint32_t dist = 1; dist < a->n_dict && scanned < BR_SCAN_MAX; dist++) {
		bool any = false;

		if (dist <= idx) {
			any = true;
			if (refs_base_resource(&below, a, idx - dist, idx, &scanned)) {
				if (n_hits < sizeof hits / sizeof hits[0])
					hits[n_hits++] = idx - dist;
				else
					more = true;
			}
		}
		if (dist < a->n_dict - idx) {
			any = true;
			if (refs_base_resource(&above, a, idx + dist, idx, &scanned)) {
				if (n_hits < sizeof hits / sizeof hits[0])
					hits[n_hits++] = idx + dist;
				else
					more = true;
			}
		}
		if (!any)
			break;
	}
	for (uint32_t i = 1; i < n_hits; i++)
		for (uint32_t j = i; j > 0 && hits[j - 1] > hits[j]; j--) {
			uint32_t t = hits[j];

			hits[j] = hits[j - 1];
			hits[j - 1] = t;
		}
	for (uint32_t i = 0; i < n_hits; i++) {
		buf_puts(b, "  ");
		view_obj_label(a, hits[i], b);
		buf_puts(b, " m_buffer\n");
		found++;
	}
	if (!found)
		buf_puts(b, "  (none found)\n");
	if (more)
		buf_puts(b, "  (more not listed)\n");
	if (scanned >= BR_SCAN_MAX)
		buf_printf(b, "  (searched only the %u nearest buffer objects)\n", BR_SCAN_MAX);
}

enum rc view_obj_version(const struct view_object *o, struct buf *out, struct diag *d)
{
	struct skate_version v;
	enum rc r = skate_version_decode(o->a, o->idx, o->p, o->n, &v, d);

	if (r != RC_OK)
		return r;
	put_obj_head(out, o->a, o->idx);
	text_version(out, &v);
	return RC_OK;
}

enum rc view_obj_toc(const struct view_object *o, struct buf *out, struct diag *d)
{
	struct skate_toc t;
	enum rc r = skate_toc_decode(o->a, o->idx, o->p, o->n, &t, d);

	if (r != RC_OK)
		return r;
	put_obj_head(out, o->a, o->idx);
	text_toc(out, o->a, &t);
	skate_toc_free(&t);
	return RC_OK;
}

enum rc view_obj_material(const struct view_object *o, struct buf *out, struct diag *d)
{
	struct skate_rmd m;
	enum rc r = skate_rmd_decode(o->a, o->idx, o->p, o->n, &m, d);

	if (r != RC_OK)
		return r;
	put_obj_head(out, o->a, o->idx);
	text_rmd(out, o->a, &m);
	skate_rmd_free(&m);
	return RC_OK;
}

enum rc view_obj_instance(const struct view_object *o, struct buf *out, struct diag *d)
{
	struct skate_instance_data in;
	enum rc r = skate_instance_decode(o->a, o->idx, o->p, o->n, &in, d);

	if (r != RC_OK)
		return r;
	put_obj_head(out, o->a, o->idx);
	text_instance(out, o->a, &in);
	skate_instance_free(&in);
	return RC_OK;
}

enum rc view_obj_base_resource(const struct view_object *o, struct buf *out, struct diag *d)
{
	(void)d;
	put_obj_head(out, o->a, o->idx);
	text_base_resource(out, o->s, o->a, o->idx);
	return RC_OK;
}
