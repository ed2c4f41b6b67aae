/*
 * RW4 arena builder (docs/rw4-arena.md, "File layout"): header, sections with the 64- or
 * 10-type registry, main objects aligned in logical order, dictionary, subreference records
 * and scratch, then base resources in the graphics region. PS3 arenas have a 0xC0 header and
 * the region 5; an xb2 (Xbox 360) arena differs only in the header (0xAC, five descriptors),
 * puts base resources (type 0x00010031) in region 2 and registers 9 texture types. Row order:
 * logical, seeded shuffle, base resources first or explicit (psgb_set_order, psgb_set_rows).
 */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/hash.h"
#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/prng.h"

#define PB_FILL_CHUNK  (1u << 20)
#define PB_MAX_OBJECTS (1u << 22) /* a dictionary index must stay below the >>22 kind bits */

static const uint32_t pb_reg_model[64] = {
    0x00000000, 0x00010030, 0x00010031, 0x00010032, 0x00010033, 0x00010034, 0x00010010, 0x00EB0000,
    0x00EB0001, 0x00EB0003, 0x00EB0004, 0x00EB0005, 0x00EB0006, 0x00EB000A, 0x00EB000D, 0x00EB0019,
    0x00EB0007, 0x00EB0008, 0x00EB000C, 0x00EB0009, 0x00EB000B, 0x00EB000E, 0x00EB0011, 0x00EB000F,
    0x00EB0010, 0x00EB0012, 0x00EB0022, 0x00EB0013, 0x00EB0014, 0x00EB0015, 0x00EB0016, 0x00EB001A,
    0x00EB001C, 0x00EB001D, 0x00EB001B, 0x00EB001E, 0x00EB001F, 0x00EB0021, 0x00EB0017, 0x00EB0020,
    0x00EB0024, 0x00EB0023, 0x00EB0025, 0x00EB0026, 0x00EB0027, 0x00EB0028, 0x00EB0029, 0x00EB0018,
    0x00EC0010, 0x00010000, 0x00010002, 0x000200EB, 0x000200EA, 0x000200E9, 0x00020081, 0x000200E8,
    0x00080002, 0x00080001, 0x00080006, 0x00080003, 0x00080004, 0x00040006, 0x00040007, 0x0001000F,
};

static const uint32_t pb_reg_texture[10] = {
    0x00000000, 0x00010030, 0x00010031, 0x00010032, 0x00010033,
    0x00010034, 0x00010010, 0x000200E8, 0x00EB0008, 0x00EB000B,
};

/* xb2 texture arenas register no 0x00010034 (their GPU data is 0x00010031). */
static const uint32_t pb_reg_texture_xb2[9] = {
    0x00000000, 0x00010030, 0x00010031, 0x00010032, 0x00010033,
    0x00010010, 0x000200E8, 0x00EB0008, 0x00EB000B,
};

struct pb_obj {
	uint32_t type_id, align;
	uint8_t *data;
	uint64_t len;
	psgb_fill_fn fill;
	void *ctx;
	bool set, base;
	/* layout */
	uint64_t start; /* absolute (main) */
	uint32_t ptr;	/* as stored in the dictionary */
	uint32_t type_index;
};

struct pb_ref {
	uint32_t idx, off;
};

struct pb_sub {
	uint32_t obj, off;
};

struct psg_builder {
	enum psgb_registry reg;
	enum psgb_platform plat;
	uint32_t id, gpu_align;
	struct pb_obj *obj;
	size_t n, cap;
	struct pb_ref *refs;
	size_t n_refs, cap_refs;
	struct pb_sub *sub;
	size_t n_sub, cap_sub;
	enum psgb_order order;
	uint32_t *rows; /* psgb_set_rows, NULL = none */
	size_t n_rows;
	bool bad; /* allocation failure or misuse: finish fails */
};

/* Grow *arr (of elem-sized items, *cap of them) so one more fits. */
static bool pb_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p = xgrow_n(*arr, n, cap, elem, 16);

	if (!p)
		return false;
	*arr = p;
	return true;
}

struct psg_builder *psgb_new(enum psgb_registry reg, uint32_t arena_id)
{
	struct psg_builder *b = calloc(1, sizeof *b);

	if (!b)
		return NULL;
	b->reg = reg;
	b->id = arena_id;
	b->gpu_align = 0x10;
	return b;
}

void psgb_free(struct psg_builder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->obj[i].data);
	free(b->obj);
	free(b->refs);
	free(b->sub);
	free(b->rows);
	free(b);
}

uint32_t psgb_reserve(struct psg_builder *b)
{
	if (b->n >= PB_MAX_OBJECTS || !pb_grow((void **)&b->obj, &b->cap, b->n, sizeof *b->obj)) {
		b->bad = true;
		return 0;
	}
	memset(&b->obj[b->n], 0, sizeof b->obj[b->n]);
	return (uint32_t)b->n++;
}

static struct pb_obj *pb_slot(struct psg_builder *b, uint32_t idx)
{
	if (idx >= b->n || b->obj[idx].set) {
		b->bad = true;
		return NULL;
	}
	return &b->obj[idx];
}

static void pb_store(struct psg_builder *b, struct pb_obj *o, uint32_t type_id, uint32_t align,
		     const void *data, size_t len)
{
	o->type_id = type_id;
	o->align = align ? align : 1;
	o->len = len;
	o->set = true;
	o->data = malloc(len ? len : 1);
	if (!o->data || (len && !data)) {
		b->bad = true;
		return;
	}
	if (len)
		memcpy(o->data, data, len);
}

void psgb_set_platform(struct psg_builder *b, enum psgb_platform plat)
{
	b->plat = plat;
}

/* BaseResource type of the graphics region: 0x00010030 + (k - 1) for descriptor k. */
static uint32_t pb_gpu_type(const struct psg_builder *b)
{
	return b->plat == PSGB_XB2 ? 0x00010031u : RW_T_PS3_GPU;
}

void psgb_set(struct psg_builder *b, uint32_t idx, uint32_t type_id, uint32_t align,
	      const void *data, size_t len)
{
	struct pb_obj *o = pb_slot(b, idx);

	if (!o)
		return;
	pb_store(b, o, type_id, align, data, len);
	o->base = rw_is_base_resource(type_id);
}

uint32_t psgb_add(struct psg_builder *b, uint32_t type_id, uint32_t align, const void *data,
		  size_t len)
{
	uint32_t i = psgb_reserve(b);

	if (!b->bad)
		psgb_set(b, i, type_id, align, data, len);
	return i;
}

void psgb_set_base_resource(struct psg_builder *b, uint32_t idx, uint32_t align, const void *data,
			    size_t len)
{
	psgb_set(b, idx, pb_gpu_type(b), align, data, len);
}

uint32_t psgb_add_base_resource(struct psg_builder *b, uint32_t align, const void *data, size_t len)
{
	return psgb_add(b, pb_gpu_type(b), align, data, len);
}

uint32_t psgb_add_base_resource_fn(struct psg_builder *b, uint32_t align, uint64_t len,
				   psgb_fill_fn fill, void *ctx)
{
	uint32_t i = psgb_reserve(b);
	struct pb_obj *o;

	if (b->bad)
		return i;
	o = &b->obj[i];
	o->type_id = pb_gpu_type(b);
	o->align = align ? align : 1;
	o->len = len;
	o->fill = fill;
	o->ctx = ctx;
	o->set = o->base = true;
	if (!fill)
		b->bad = true;
	return i;
}

uint32_t psgb_add_subref(struct psg_builder *b, uint32_t object, uint32_t offset)
{
	if (b->n_sub >= 0x3FFFFF ||
	    !pb_grow((void **)&b->sub, &b->cap_sub, b->n_sub, sizeof *b->sub)) {
		b->bad = true;
		return 0x00800000u;
	}
	b->sub[b->n_sub] = (struct pb_sub){object, offset};
	return 0x00800000u | (uint32_t)b->n_sub++;
}

void psgb_ref(struct psg_builder *b, uint32_t idx, uint32_t offset)
{
	if (!pb_grow((void **)&b->refs, &b->cap_refs, b->n_refs, sizeof *b->refs)) {
		b->bad = true;
		return;
	}
	b->refs[b->n_refs++] = (struct pb_ref){idx, offset};
}

void psgb_set_order(struct psg_builder *b, enum psgb_order order)
{
	b->order = order;
}

void psgb_set_rows(struct psg_builder *b, const uint32_t *rows, size_t n)
{
	free(b->rows);
	b->n_rows = n;
	b->rows = xcalloc_n(n ? n : 1, sizeof *b->rows);
	if (!b->rows) {
		b->bad = true;
		return;
	}
	memcpy(b->rows, rows, n * sizeof *rows);
}

void psgb_set_gpu_align(struct psg_builder *b, uint32_t align)
{
	b->gpu_align = align ? align : 1;
}

void psg_gen_record_free(struct psg_gen_record *r)
{
	if (!r)
		return;
	free(r->obj);
	r->obj = NULL;
	r->n = 0;
}

static int pb_type_index(const uint32_t *reg, uint32_t n, uint32_t type_id)
{
	for (uint32_t i = 1; i < n; i++)
		if (reg[i] == type_id)
			return (int)i;
	return -1;
}

/* Fisher-Yates shuffle of perm, then swap a row nobody references into row 0: a stored 0
 * in a reference field must keep reading as null in shuffled arenas. */
static enum rc pb_shuffle(const struct psg_builder *b, uint64_t seed, uint32_t *perm)
{
	uint32_t n = (uint32_t)b->n;
	bool *target = xcalloc_n(n ? n : 1, sizeof *target);
	struct prng r;

	if (!target)
		return RC_NOMEM;
	prng_seed(&r, seed);
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = prng_below(&r, i), t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	for (size_t k = 0; k < b->n_refs; k++) {
		const struct pb_obj *o = &b->obj[b->refs[k].idx];
		uint32_t v;

		if (o->base || !o->data || (uint64_t)b->refs[k].off + 4 > o->len)
			continue;
		v = ld_u32be(o->data + b->refs[k].off);
		if (v != 0 && (v >> 22) == 0 && v < n)
			target[v] = true;
	}
	for (uint32_t r0 = 1; n && target[perm[0]] && r0 < n; r0++)
		if (!target[perm[r0]]) {
			uint32_t t = perm[0];

			perm[0] = perm[r0];
			perm[r0] = t;
		}
	free(target);
	return RC_OK;
}

/* Stable partition of perm: base resources first. */
static enum rc pb_baseres_first(const struct psg_builder *b, uint32_t *perm)
{
	uint32_t n = (uint32_t)b->n, k = 0;
	uint32_t *tmp = xcalloc_n(n ? n : 1, sizeof *tmp);

	if (!tmp)
		return RC_NOMEM;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < n; i++)
			if (b->obj[perm[i]].base == (pass == 0))
				tmp[k++] = perm[i];
	memcpy(perm, tmp, (size_t)n * sizeof *perm);
	free(tmp);
	return RC_OK;
}

/* The explicit row order, checked to be a permutation of every object. */
static enum rc pb_rows(const struct psg_builder *b, uint32_t *perm)
{
	uint32_t n = (uint32_t)b->n;
	bool *seen;

	if (b->n_rows != n)
		return RC_INVAL;
	seen = xcalloc_n(n ? n : 1, sizeof *seen);
	if (!seen)
		return RC_NOMEM;
	for (uint32_t r = 0; r < n; r++) {
		if (b->rows[r] >= n || seen[b->rows[r]]) {
			free(seen);
			return RC_INVAL;
		}
		seen[b->rows[r]] = true;
		perm[r] = b->rows[r];
	}
	free(seen);
	return RC_OK;
}

/* Row order: perm[row] = logical index, inv[logical] = row (psgb_set_rows, else the shuffle
 * and then psgb_set_order). */
static enum rc pb_perm(const struct psg_builder *b, uint64_t seed, uint32_t **perm_out,
		       uint32_t **inv_out)
{
	uint32_t n = (uint32_t)b->n;
	uint32_t *perm = xcalloc_n(n ? n : 1, sizeof *perm);
	uint32_t *inv = xcalloc_n(n ? n : 1, sizeof *inv);
	enum rc r = perm && inv ? RC_OK : RC_NOMEM;

	for (uint32_t i = 0; r == RC_OK && i < n; i++)
		perm[i] = i;
	if (r == RC_OK && b->rows)
		r = pb_rows(b, perm);
	else if (r == RC_OK && seed)
		r = pb_shuffle(b, seed, perm);
	if (r == RC_OK && !b->rows && b->order == PSGB_ORDER_BASERES_FIRST)
		r = pb_baseres_first(b, perm);
	if (r != RC_OK) {
		free(perm);
		free(inv);
		return r;
	}
	for (uint32_t i = 0; i < n; i++)
		inv[perm[i]] = i;
	*perm_out = perm;
	*inv_out = inv;
	return RC_OK;
}

static void pb_u32(struct buf *o, uint32_t v)
{
	buf_u32be(o, v);
}

/* psgb_finish consumes the builder whatever the outcome. */
static enum rc pb_consume(struct psg_builder *b, enum rc r)
{
	psgb_free(b);
	return r;
}

/* Where everything goes (docs/rw4-arena.md, "File layout"); offsets are arena-relative. */
struct pb_layout {
	const uint32_t *reg;
	uint32_t n_types, n, n_sub;
	uint32_t n_rd, gpu_k, hdr; /* descriptors, the graphics one, header bytes (0x48 + 20 n) */
	uint32_t t_off, e_off, s_off, a_off; /* section offsets relative to the manifest */
	uint64_t sections_end, dict_start, records, sub_dict, rd0, region, total;
	bool have_br;
};

/* Every slot filled, every type registered, every subreference and declared reference
 * inside what it names: RC_INVAL for the caller's mistakes. */
static enum rc pb_check(struct psg_builder *b, const struct pb_layout *L)
{
	for (uint32_t i = 0; i < L->n; i++) {
		struct pb_obj *o = &b->obj[i];
		int ti;

		if (!o->set || o->len > UINT32_MAX)
			return RC_INVAL;
		ti = pb_type_index(L->reg, L->n_types, o->type_id);
		if (ti < 0)
			return RC_INVAL;
		o->type_index = (uint32_t)ti;
	}
	for (uint32_t i = 0; i < L->n_sub; i++)
		if (b->sub[i].obj >= L->n)
			return RC_INVAL;
	for (size_t k = 0; k < b->n_refs; k++) {
		const struct pb_ref *f = &b->refs[k];

		if (f->idx >= L->n || b->obj[f->idx].base ||
		    (uint64_t)f->off + 4 > b->obj[f->idx].len)
			return RC_INVAL;
	}
	return RC_OK;
}

/* Sections, then main objects in logical order, dictionary, subreference records and
 * scratch, then base resources in region 5. RC_UNSUPPORTED past 4 GiB. */
static enum rc pb_layout(struct psg_builder *b, struct pb_layout *L)
{
	uint64_t pos;

	L->t_off = 0x1C;
	L->e_off = L->t_off + 0x0C + 4 * L->n_types;
	L->s_off = L->e_off + 0x24;
	L->a_off = L->s_off + 0x1C;
	L->sections_end = L->hdr + L->a_off + 0x0C;
	pos = L->sections_end;
	for (uint32_t i = 0; i < L->n; i++) {
		struct pb_obj *o = &b->obj[i];

		if (o->base) {
			L->region = align_up(L->region, o->align);
			if (L->region > UINT32_MAX)
				return RC_UNSUPPORTED;
			o->ptr = (uint32_t)L->region;
			L->region += o->len;
			L->have_br = true;
			continue;
		}
		pos = align_up(pos, o->align);
		o->start = pos;
		o->ptr = (uint32_t)pos;
		pos += o->len;
	}
	L->dict_start = align_up(pos, 4);
	L->records = L->dict_start + 24ull * L->n;
	L->sub_dict = L->records + 8ull * L->n_sub;
	L->rd0 = L->sub_dict + 24ull * L->n_sub;
	L->total = L->rd0 + L->region;
	if (L->total > UINT32_MAX || L->region > UINT32_MAX)
		return RC_UNSUPPORTED;
	for (uint32_t i = 0; i < L->n; i++)
		if (b->obj[i].base)
			b->obj[i].start = L->rd0 + b->obj[i].ptr;
	return RC_OK;
}

/* Declared references in the stored bytes follow their objects to their rows (0 = row 0;
 * stored nulls were never declared). */
static void pb_renumber(struct psg_builder *b, const uint32_t *inv)
{
	for (size_t k = 0; k < b->n_refs; k++) {
		struct pb_obj *o = &b->obj[b->refs[k].idx];
		uint8_t *p = o->data + b->refs[k].off;
		uint32_t v = ld_u32be(p), nv;

		if (v == 0 || (v >> 22) != 0 || v >= b->n)
			continue;
		nv = inv[v];
		p[0] = (uint8_t)(nv >> 24);
		p[1] = (uint8_t)(nv >> 16);
		p[2] = (uint8_t)(nv >> 8);
		p[3] = (uint8_t)nv;
	}
}

/* The header (docs/rw4-arena.md, "Header"): 0xC0 bytes on PS3, 0xAC on xb2. */
static void pb_write_header(const struct psg_builder *b, const struct pb_layout *L, struct buf *out)
{
	static const uint8_t magic[12] = {0x89, 'R', 'W',  '4',	 'p',  's',
					  '3',	0,   0x0D, 0x0A, 0x1A, 0x0A};

	buf_put(out, magic, 4);
	buf_put(out, b->plat == PSGB_XB2 ? "xb2" : "ps3", 4);
	buf_put(out, magic + 8, 4);
	buf_u8(out, 1);
	buf_u8(out, 32);
	buf_u8(out, 4);
	buf_u8(out, 0);
	buf_put(out,
		"454\0"
		"000\0",
		8);	    /* majorVersion, minorVersion */
	pb_u32(out, 0);	    /* buildNo */
	pb_u32(out, b->id); /* id */
	pb_u32(out, L->n);  /* numEntries */
	pb_u32(out, L->n);  /* numUsed */
	pb_u32(out, 0x10);  /* alignment */
	pb_u32(out, 0);	    /* virt */
	pb_u32(out, (uint32_t)L->dict_start);
	pb_u32(out, L->hdr); /* sections */
	pb_u32(out, 0);
	pb_u32(out, 0);
	pb_u32(out, 0);
	pb_u32(out, (uint32_t)L->rd0);
	pb_u32(out, 0x10);
	for (uint32_t k = 1; k < L->n_rd; k++) {
		pb_u32(out, k == L->gpu_k && L->have_br ? (uint32_t)L->region : 0);
		pb_u32(out, k == L->gpu_k && L->have_br ? b->gpu_align : 1);
	}
	pb_u32(out, L->hdr); /* RU[0] */
	pb_u32(out, 4);
	for (uint32_t k = 1; k < L->n_rd; k++) {
		pb_u32(out, 0);
		pb_u32(out, 1);
	}
	for (uint32_t k = 0; k <= L->n_rd; k++) /* TargetResource[n_rd], arenaGroup */
		pb_u32(out, 0);
}

/* Manifest, types, external arenas, subreferences and atoms (docs/rw4-arena.md,
 * "Sections"). */
static void pb_write_sections(const struct psg_builder *b, const struct pb_layout *L,
			      struct buf *out)
{
	const uint32_t head[] = {0x00010004, 4,	       0x0C,	   L->t_off,   L->e_off,
				 L->s_off,   L->a_off, 0x00010005, L->n_types, 0x0C};
	const uint32_t tail[] = {0x00010006,
				 3,
				 0x18,
				 b->id,
				 0xFFB00000u,
				 b->id,
				 0,
				 0,
				 0,
				 0x00010007,
				 L->n_sub,
				 0,
				 0,
				 (uint32_t)L->sub_dict,
				 (uint32_t)L->records,
				 L->n_sub,
				 0x00010008,
				 0,
				 0};

	for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
		pb_u32(out, head[i]);
	for (uint32_t i = 0; i < L->n_types; i++)
		pb_u32(out, L->reg[i]);
	for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
		pb_u32(out, tail[i]);
}

/* Main objects in logical order, then the dictionary rows in row order, the subreference
 * records and their scratch. */
static void pb_write_main(const struct psg_builder *b, const struct pb_layout *L,
			  const uint32_t *perm, const uint32_t *inv, size_t base, uint64_t *hash,
			  struct buf *out)
{
	for (uint32_t i = 0; i < L->n; i++) {
		const struct pb_obj *o = &b->obj[i];

		if (o->base)
			continue;
		buf_zero(out, (size_t)(o->start - (out->len - base)));
		buf_put(out, o->data, (size_t)o->len);
		hash[i] = fnv1a_64(o->data, (size_t)o->len);
	}
	buf_zero(out, (size_t)(L->dict_start - (out->len - base)));
	for (uint32_t r = 0; r < L->n; r++) {
		const struct pb_obj *o = &b->obj[perm[r]];

		pb_u32(out, o->ptr);
		pb_u32(out, 0);
		pb_u32(out, (uint32_t)o->len);
		pb_u32(out, o->align);
		pb_u32(out, o->type_index);
		pb_u32(out, o->type_id);
	}
	for (uint32_t i = 0; i < L->n_sub; i++) {
		pb_u32(out, inv[b->sub[i].obj]);
		pb_u32(out, b->sub[i].off);
	}
	buf_zero(out, 24 * (size_t)L->n_sub);
}

/* One base resource produced while it is written, in chunks; returns its hash. */
static uint64_t pb_write_lazy(const struct pb_obj *o, struct buf *out)
{
	uint64_t h = FNV64_BASIS;

	for (uint64_t off = 0; off < o->len; off += PB_FILL_CHUNK) {
		size_t c = (size_t)(o->len - off < PB_FILL_CHUNK ? o->len - off : PB_FILL_CHUNK);
		size_t at = out->len;

		buf_zero(out, c);
		if (out->count_only || out->oom)
			continue;
		o->fill(o->ctx, off, out->data + at, c);
		h = fnv1a_64_update(h, out->data + at, c);
	}
	return out->count_only ? 0 : h;
}

/* The graphics region (5 on ps3, 2 on xb2): the base resources at their aligned offsets. */
static void pb_write_region(const struct psg_builder *b, const struct pb_layout *L, size_t base,
			    uint64_t *hash, struct buf *out)
{
	for (uint32_t i = 0; i < L->n; i++) {
		const struct pb_obj *o = &b->obj[i];

		if (!o->base)
			continue;
		buf_zero(out, (size_t)(o->start - (out->len - base)));
		if (o->fill) {
			hash[i] = pb_write_lazy(o, out);
		} else {
			buf_put(out, o->data, (size_t)o->len);
			hash[i] = fnv1a_64(o->data, (size_t)o->len);
		}
	}
}

static enum rc pb_record(const struct psg_builder *b, const uint32_t *perm, const uint64_t *hash,
			 struct psg_gen_record *rec)
{
	uint32_t n = (uint32_t)b->n;

	rec->obj = xcalloc_n(n ? n : 1, sizeof *rec->obj);
	if (!rec->obj)
		return RC_NOMEM;
	rec->n = n;
	for (uint32_t r = 0; r < n; r++) {
		const struct pb_obj *o = &b->obj[perm[r]];

		rec->obj[r] =
		    (struct psg_gen_object){o->type_id, o->start, (uint32_t)o->len, hash[perm[r]]};
	}
	return RC_OK;
}

/* Write the laid-out arena; one allocation up front, so a 1 GB arena never holds a doubled
 * buffer. */
static enum rc pb_write(const struct psg_builder *b, const struct pb_layout *L,
			const uint32_t *perm, const uint32_t *inv, uint64_t *hash, struct buf *out)
{
	size_t base = out->len;

	if (!out->count_only) {
		buf_zero(out, (size_t)L->total);
		if (out->oom)
			return RC_NOMEM;
		out->len = base;
	}
	pb_write_header(b, L, out);
	pb_write_sections(b, L, out);
	pb_write_main(b, L, perm, inv, base, hash, out);
	pb_write_region(b, L, base, hash, out);
	return out->oom ? RC_NOMEM : RC_OK;
}

enum rc psgb_finish(struct psg_builder *b, uint64_t shuffle_seed, struct buf *out,
		    struct psg_gen_record *rec)
{
	bool xb2 = b->plat == PSGB_XB2, tex = b->reg == PSGB_REG_TEXTURE10;
	struct pb_layout L = {.reg = !tex  ? pb_reg_model
				     : xb2 ? pb_reg_texture_xb2
					   : pb_reg_texture,
			      .n_types = !tex  ? 64
					 : xb2 ? 9
					       : 10,
			      .n = (uint32_t)b->n,
			      .n_sub = (uint32_t)b->n_sub,
			      .n_rd = xb2 ? 5 : 6,
			      .gpu_k = xb2 ? 2 : 5};
	uint32_t *perm = NULL, *inv = NULL;
	uint64_t *hash = NULL;
	enum rc r = b->bad ? RC_NOMEM : pb_check(b, &L);

	L.hdr = 0x48 + 20 * L.n_rd;
	if (rec) {
		rec->obj = NULL;
		rec->n = 0;
	}
	if (r == RC_OK)
		r = pb_layout(b, &L);
	if (r == RC_OK)
		r = pb_perm(b, shuffle_seed, &perm, &inv);
	if (r == RC_OK) {
		hash = xcalloc_n(L.n ? L.n : 1, sizeof *hash);
		r = hash ? RC_OK : RC_NOMEM;
	}
	if (r == RC_OK) {
		pb_renumber(b, inv);
		r = pb_write(b, &L, perm, inv, hash, out);
	}
	if (r == RC_OK && rec)
		r = pb_record(b, perm, hash, rec);
	free(perm);
	free(inv);
	free(hash);
	return pb_consume(b, r);
}
