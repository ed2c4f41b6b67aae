/* Structured mutants of generated PSK/PSA/PSG files; see mutate.h. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mutate.h"
#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/gen/prng.h"
#include "psgfs/base/source.h"

/* Count-like values every count, size, offset and index gets. */
static const uint32_t hostile_u32[] = {0, 1, 0x80000000u, 0xFFFFFFFFu};
#define N_HOSTILE (sizeof hostile_u32 / sizeof hostile_u32[0])

struct mut {
	const uint8_t *base;
	size_t n;
	uint8_t *w; /* working copy, room for n * 2 + 4096 bytes */
	size_t wn;
	bool be;
	fuzz_mutant_fn cb;
	void *ctx;
	size_t count;
	struct prng rng;
};

static void reset(struct mut *m)
{
	memcpy(m->w, m->base, m->n);
	m->wn = m->n;
}

static void emit(struct mut *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct mut *m, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	m->cb(m->ctx, what, m->w, m->wn);
	m->count++;
	reset(m);
}

static void put32(struct mut *m, size_t off, uint32_t v)
{
	if (off + 4 > m->wn)
		return;
	if (m->be) {
		m->w[off] = (uint8_t)(v >> 24);
		m->w[off + 1] = (uint8_t)(v >> 16);
		m->w[off + 2] = (uint8_t)(v >> 8);
		m->w[off + 3] = (uint8_t)v;
	} else {
		m->w[off] = (uint8_t)v;
		m->w[off + 1] = (uint8_t)(v >> 8);
		m->w[off + 2] = (uint8_t)(v >> 16);
		m->w[off + 3] = (uint8_t)(v >> 24);
	}
}

static uint32_t get32(const struct mut *m, size_t off)
{
	if (off + 4 > m->n)
		return 0;
	return m->be ? ld_u32be(m->base + off) : ld_u32le(m->base + off);
}

static void truncate_at(struct mut *m, size_t at, const char *where)
{
	if (at >= m->n)
		return;
	m->wn = at;
	emit(m, "truncated at %zu (%s)", at, where);
}

static void words(struct mut *m, size_t from, size_t to, const char *where)
{
	for (size_t off = from; off + 4 <= to && off + 4 <= m->n; off += 4)
		for (size_t k = 0; k < N_HOSTILE; k++) {
			put32(m, off, hostile_u32[k]);
			emit(m, "%s +0x%zx = 0x%x", where, off - from, hostile_u32[k]);
		}
}

/* A name field of len bytes at off (clamped to the file). */
static void names(struct mut *m, size_t off, size_t len, size_t run_to, const char *where)
{
	static const struct {
		const char *what, *s;
		size_t n;
	} v[] = {
	    {"slash", "a/b", 4},
	    {"dotdot", "..", 3},
	    {"dot", ".", 2},
	    {"empty", "", 1},
	    {"control bytes", "\x01\x1b[31m\n\t\x7f\r", 10},
	    {"high bytes", "\xff\xfe\x80\xc3", 5},
	};

	if (off >= m->n)
		return;
	if (len > m->n - off)
		len = m->n - off;
	for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
		memset(m->w + off, 0, len);
		memcpy(m->w + off, v[k].s, v[k].n < len ? v[k].n : len);
		emit(m, "%s name: %s", where, v[k].what);
	}
	memset(m->w + off, 'X', len);
	emit(m, "%s name: no NUL", where);
	/* A 300-byte run of name bytes across the following fields (and records). */
	if (run_to > m->n)
		run_to = m->n;
	size_t run = run_to - off < 300 ? run_to - off : 300;
	memset(m->w + off, 'N', run);
	emit(m, "%s name: %zu-byte run", where, run);
}

/* ---- PSK / PSA ---- */

struct chunk {
	size_t off;
	char id[21];
	uint32_t size, count;
	size_t end; /* end of the payload, clamped */
};

/* Which records hold names: first name at 0 (64 bytes), optionally a second one at 64. */
static int name_fields(const char *id)
{
	if (!strcmp(id, "ANIMINFO") || !strcmp(id, "SKELSOCK"))
		return 2;
	if (!strcmp(id, "MATT0000") || !strcmp(id, "REFSKELT") || !strcmp(id, "BONENAMES") ||
	    !strcmp(id, "MRPHINFO") || !strcmp(id, "REFSKEL0"))
		return 1;
	return 0;
}

static size_t psk_chunks(const struct mut *m, struct chunk *c, size_t max)
{
	size_t n = 0;

	for (size_t off = 0; off + 32 <= m->n && n < max;) {
		struct chunk *k = &c[n++];
		uint64_t len =
		    (uint64_t)ld_u32le(m->base + off + 24) * ld_u32le(m->base + off + 28);

		k->off = off;
		memcpy(k->id, m->base + off, 20);
		k->id[20] = 0;
		k->size = ld_u32le(m->base + off + 24);
		k->count = ld_u32le(m->base + off + 28);
		k->end = len > m->n - off - 32 ? m->n : off + 32 + (size_t)len;
		off = k->end;
	}
	return n;
}

static void psk_bones(struct mut *m, const struct chunk *c)
{
	size_t p0 = c->off + 32;
	uint32_t n = c->count;

	if (c->size != 120 || n == 0 || p0 + 120ull * n > m->n)
		return;
#define PARENT(i) (p0 + 120u * (i) + 72)
	for (uint32_t i = 0; i < n; i++)
		put32(m, PARENT(i), i);
	emit(m, "%s: every bone its own parent", c->id);
	if (n >= 3) {
		put32(m, PARENT(1), 2);
		put32(m, PARENT(2), 1);
		emit(m, "%s: bones 1 and 2 parents of each other", c->id);
		for (uint32_t i = 0; i < n; i++)
			put32(m, PARENT(i), (i + 1) % n);
		emit(m, "%s: all bones in one parent cycle", c->id);
	}
	if (n >= 2) {
		put32(m, PARENT(0), 1);
		put32(m, PARENT(1), 0);
		emit(m, "%s: root in a cycle with bone 1", c->id);
	}
	put32(m, PARENT(n - 1), n);
	emit(m, "%s: last bone's parent past the skeleton", c->id);
	put32(m, PARENT(n - 1), (uint32_t)-2);
	emit(m, "%s: last bone's parent -2", c->id);
	for (uint32_t i = 0; i < n; i++) {
		memset(m->w + p0 + 120u * i, 0, 64);
		memcpy(m->w + p0 + 120u * i, m->base + p0, 64);
	}
	emit(m, "%s: every bone named like bone 0", c->id);
#undef PARENT
}

static void psk_chunk(struct mut *m, const struct chunk *c, size_t ci, const struct chunk *all,
		      size_t nc)
{
	char where[64];
	size_t p0 = c->off + 32;
	uint32_t sz = c->size;

	snprintf(where, sizeof where, "chunk %zu %s", ci, c->id);
	truncate_at(m, c->off, "chunk start");
	truncate_at(m, c->off + 20, "inside chunk header");
	truncate_at(m, c->off + 31, "header minus one byte");
	truncate_at(m, p0, "payload start");
	if (sz && c->count > 1)
		truncate_at(m, p0 + sz, "after first record");
	if (sz && c->count > 0)
		truncate_at(m, p0 + sz / 2, "inside first record");
	truncate_at(m, c->end - 1, "payload end minus one byte");

	for (size_t k = 0; k < N_HOSTILE; k++) {
		put32(m, c->off + 24, hostile_u32[k]);
		emit(m, "%s DataSize = 0x%x", where, hostile_u32[k]);
		put32(m, c->off + 28, hostile_u32[k]);
		emit(m, "%s DataCount = 0x%x", where, hostile_u32[k]);
	}
	static const uint32_t ov[][2] = {
	    {0x10000, 0x10000}, {0x80000000u, 2}, {0xFFFFFFFFu, 0xFFFFFFFFu}, {0x40000000u, 8}};
	for (size_t k = 0; k < sizeof ov / sizeof ov[0]; k++) {
		put32(m, c->off + 24, ov[k][0]);
		put32(m, c->off + 28, ov[k][1]);
		emit(m, "%s size x count overflows (0x%x x 0x%x)", where, ov[k][0], ov[k][1]);
	}
	if (sz) {
		put32(m, c->off + 28, (uint32_t)(0x100000000ull / sz + 1));
		emit(m, "%s count x size wraps 32 bits", where);
		put32(m, c->off + 28, c->count + 1);
		emit(m, "%s one record past EOF", where);
		if (sz > 1) {
			put32(m, c->off + 24, sz - 1);
			emit(m, "%s DataSize one short", where);
			put32(m, c->off + 24, sz + 1);
			emit(m, "%s DataSize one long", where);
		}
	}
	put32(m, c->off + 20, 0xFFFFFFFFu);
	emit(m, "%s TypeFlag = -1", where);
	memset(m->w + c->off, 'Z', 20);
	emit(m, "%s ID without NUL", where);
	memcpy(m->w + c->off, "ZZZZ0000\0\0\0\0\0\0\0\0\0\0\0\0", 20);
	emit(m, "%s unknown ID", where);
	if (ci > 0) {
		memcpy(m->w + c->off, all[ci - 1].id, 20);
		emit(m, "%s renamed to the previous chunk's ID", where);
	}
	/* Duplicate, drop, move to the end. */
	memcpy(m->w + m->n, m->base + c->off, c->end - c->off);
	m->wn = m->n + (c->end - c->off);
	emit(m, "%s duplicated at the end", where);
	if (ci > 0) {
		memmove(m->w + c->off, m->base + c->end, m->n - c->end);
		m->wn = m->n - (c->end - c->off);
		emit(m, "%s dropped", where);
		memcpy(m->w + m->wn, m->base + c->off, c->end - c->off);
		m->wn = m->n;
		emit(m, "%s moved to the end", where);
	}
	(void)nc;

	/* Record fields: the first, the last and one random record, names aside. */
	if (!sz || sz > 4096 || !c->count || p0 + (uint64_t)sz * c->count > m->n)
		return;
	int nf = name_fields(c->id);
	uint32_t recs[3] = {0, c->count - 1, (uint32_t)(prng_next(&m->rng) % c->count)};
	for (size_t r = 0; r < 3; r++) {
		char rw[96];
		size_t ro = p0 + (size_t)sz * recs[r];

		if ((r == 1 && recs[1] == recs[0]) ||
		    (r == 2 && (recs[2] == recs[0] || recs[2] == recs[1])))
			continue;
		snprintf(rw, sizeof rw, "%s record %u", where, recs[r]);
		words(m, ro + 64u * (unsigned)nf < ro + sz ? ro + 64u * (unsigned)nf : ro + sz,
		      ro + sz, rw);
		if (nf && r < 2) {
			names(m, ro, 64, c->end, rw);
			if (nf == 2)
				names(m, ro + 64, 64, c->end, rw);
		}
	}
	if (!strcmp(c->id, "REFSKELT") || !strcmp(c->id, "BONENAMES"))
		psk_bones(m, c);
}

static void psk_mutants(struct mut *m)
{
	struct chunk c[64];
	size_t nc = psk_chunks(m, c, 64);

	m->be = false;
	for (size_t i = 0; i < nc; i++)
		psk_chunk(m, &c[i], i, c, nc);
}

/* ---- PSG ---- */

/* Type ids whose decoders matter, for type confusion. */
static const uint32_t psg_types[] = {
    RW_T_VB,  RW_T_IB,	    RW_T_VDES,	  RW_T_MESHHELPER,     RW_T_OPTIMESH, RW_T_RENDERMODEL,
    RW_T_TOC, RW_T_TEXTURE, RW_T_VERSION, RW_T_RENDERMATERIAL, RW_T_INSTANCE, RW_T_PS3_GPU};

static uint32_t type_index_of(const struct arena *a, uint32_t type)
{
	for (uint32_t i = 0; i < a->n_types; i++)
		if (a->types[i] == type)
			return i;
	return 0;
}

/* Strings in an object: printable runs of >= 3 bytes ending in NUL. */
static void psg_strings(struct mut *m, const struct arena_dict_entry *e, uint32_t i)
{
	size_t start = (size_t)e->start, end = start + e->size, found = 0;

	for (size_t p = start; p < end && found < 6;) {
		size_t q = p;

		while (q < end && m->base[q] >= 0x20 && m->base[q] < 0x7F)
			q++;
		if (q < end && m->base[q] == 0 && q - p >= 3) {
			char where[64];

			snprintf(where, sizeof where, "object %u string at +0x%zx", i, p - start);
			names(m, p, q - p + 1, end, where);
			found++;
			p = q + 1;
			continue;
		}
		p = q + 1;
	}
}

/* Words of object i that hold a plausible dictionary index (a reference). */
static bool ref_like(const struct arena *a, uint32_t v, uint32_t self)
{
	return v > 0 && v < a->n_dict && v != self;
}

static void psg_object(struct mut *m, const struct arena *a, uint32_t i)
{
	const struct arena_dict_entry *e = arena_row(a, i);
	size_t start = (size_t)e->start, span = e->size < 0x100 ? e->size : 0x100;
	char where[64];

	if (!e->readable)
		return;
	snprintf(where, sizeof where, "object %u (0x%08x)", i, e->type_id);
	truncate_at(m, start, "object start");
	truncate_at(m, start + e->size / 2, "object middle");
	truncate_at(m, start + e->size, "object end");
	if (e->base_resource)
		return;
	words(m, start, start + span, where);
	for (size_t off = start; off + 4 <= start + span; off += 4) {
		uint32_t v = get32(m, off),
			 extra[4] = {i, a->n_dict, 0x00800000u, 0x00800000u | a->n_subrefs};

		for (size_t k = 0; k < 4; k++) {
			if (k == 2 && !a->n_subrefs)
				continue;
			put32(m, off, extra[k]);
			emit(m, "%s +0x%zx = 0x%x (%s)", where, off - start, extra[k],
			     k == 0   ? "itself"
			     : k == 1 ? "dangling"
			     : k == 2 ? "subref 0"
				      : "dangling subref");
		}
		/* Two-object cycle: every reference-like word of the target points back. */
		if (ref_like(a, v, i) && arena_row(a, v)->readable &&
		    !arena_row(a, v)->base_resource) {
			const struct arena_dict_entry *t = arena_row(a, v);
			bool any = false;

			for (size_t o2 = (size_t)t->start;
			     o2 + 4 <= t->start + t->size && o2 < t->start + 0x100; o2 += 4)
				if (ref_like(a, get32(m, o2), v)) {
					put32(m, o2, i);
					any = true;
				}
			if (any)
				emit(m, "%s +0x%zx -> %u and back (cycle)", where, off - start, v);
		}
		if ((v >> 22) == 2 && (v & 0x3FFFFF) < a->n_subrefs) {
			size_t rec = a->sub_records + 8u * (v & 0x3FFFFF);

			put32(m, rec, i);
			emit(m, "%s +0x%zx: its subreference points back into it", where,
			     off - start);
		}
	}
	psg_strings(m, e, i);
}

static void psg_dict(struct mut *m, const struct arena *a, uint32_t i)
{
	size_t row = a->h.dict_start + 24u * i;
	char where[64];

	snprintf(where, sizeof where, "dictionary row %u", i);
	truncate_at(m, row, "dictionary row");
	words(m, row, row + 24, where);
	put32(m, row, (uint32_t)m->n);
	emit(m, "%s ptr at EOF", where);
	put32(m, row, (uint32_t)m->n - 4);
	put32(m, row + 8, 64);
	emit(m, "%s object runs past EOF", where);
	if (a->n_dict > 1) {
		uint32_t j = (i + 1) % a->n_dict;

		put32(m, row, get32(m, a->h.dict_start + 24u * j));
		emit(m, "%s same ptr as row %u (overlap)", where, j);
		put32(m, row + 8, arena_row(a, i)->size + arena_row(a, j)->size + 16);
		emit(m, "%s size spans into the next object (overlap)", where);
	}
	for (size_t k = 0; k < sizeof psg_types / sizeof psg_types[0]; k++) {
		if (psg_types[k] == arena_row(a, i)->type_id)
			continue;
		put32(m, row + 16, type_index_of(a, psg_types[k]));
		put32(m, row + 20, psg_types[k]);
		emit(m, "%s retyped 0x%08x", where, psg_types[k]);
	}
	put32(m, row + 20, 0x12345678u);
	emit(m, "%s type id not in the registry", where);
}

static void psg_texture_bytes(struct mut *m, const struct arena *a, uint32_t i)
{
	size_t start = (size_t)arena_row(a, i)->start;
	static const uint8_t fmts[] = {0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88,
				       0x8B, 0x8F, 0x97, 0x9D, 0x9E, 0x00, 0x89, 0xFF};

	for (size_t b = 0; b < 40 && start + b < m->n; b++)
		for (int k = 0; k < 3; k++) {
			static const uint8_t v[3] = {0, 0xFF, 0x80};

			m->w[start + b] = v[k];
			emit(m, "texture %u byte %zu = 0x%02x", i, b, v[k]);
		}
	for (size_t k = 0; k < sizeof fmts; k++)
		for (int ln = 0; ln < 2; ln++) {
			m->w[start] = (uint8_t)(fmts[k] | (ln ? 0x20 : 0));
			emit(m, "texture %u format 0x%02x", i, m->w[start]);
		}
}

static void psg_mutants(struct mut *m)
{
	struct src s;
	struct src_mem sm;
	struct arena a;
	bool tex_done = false;

	m->be = m->n > 0x0C && m->base[0x0C] == 1;
	src_init_mem(&s, &sm, m->base, m->n);
	if (arena_open(&s, &a, NULL) != RC_OK)
		return;
	/* Boundaries of the container. */
	static const size_t fixed[] = {1, 4, 8, 12, 16, 0x44, 0x74, 0xBF, 0xC0};
	for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
		truncate_at(m, fixed[k], "header");
	if (a.h.header_size != 0xC0) { /* Xbox 360 (0xAC) and the others */
		truncate_at(m, a.h.header_size - 1, "header");
		truncate_at(m, a.h.header_size, "header");
	}
	for (int k = 0; k < 4; k++)
		truncate_at(m, a.h.sections + a.section_off[k], "section start");
	truncate_at(m, (size_t)a.sections_end, "sections end");
	truncate_at(m, a.h.dict_start, "dictionary start");
	truncate_at(m, a.sub_records, "subreference records");
	truncate_at(m, a.h.rd[0].size, "end of main memory");
	truncate_at(m, m->n - 1, "last byte");

	words(m, 0x18, a.h.header_size, "header");
	put32(m, 0x30, (uint32_t)m->n);
	emit(m, "dictStart at EOF");
	put32(m, 0x30, (uint32_t)m->n - 8);
	emit(m, "dictionary runs past EOF");
	put32(m, 0x30, a.h.sections);
	emit(m, "dictionary on top of the sections");
	put32(m, 0x34, (uint32_t)m->n);
	emit(m, "sections at EOF");
	put32(m, 0x34, a.h.dict_start);
	emit(m, "sections on top of the dictionary");
	put32(m, 0x20, a.h.num_entries + 1);
	put32(m, 0x24, a.h.num_used + 1);
	emit(m, "one dictionary row more than written");
	put32(m, 0x44, (uint32_t)m->n + 1);
	emit(m, "RD[0].size past EOF");
	static const char *const plat[] = {"ps3", "xb2", "rev", "w32", "ps4"};
	for (size_t k = 0; k < 5; k++) {
		if (!memcmp(m->base + 4, plat[k], 4))
			continue;
		memcpy(m->w + 4, plat[k], 4);
		emit(m, "platform %s", plat[k]);
	}
	m->w[0x0C] = 0;
	emit(m, "isBigEndian 0");
	memcpy(m->w + 0x10, "999", 4);
	emit(m, "majorVersion 999");

	/* Sections: every word but the type list past its first two entries. */
	size_t sec = a.h.sections;
	words(m, sec, sec + a.section_off[0] + 0x14, "sections");
	words(m, sec + a.section_off[1], (size_t)a.sections_end, "sections");
	put32(m, sec + a.section_off[2] + 0x14, a.h.dict_start);
	emit(m, "subreference records on top of the dictionary");
	put32(m, sec + a.section_off[2] + 0x14, a.h.sections);
	emit(m, "subreference records on top of the sections");
	for (uint32_t k = 0; k < a.n_subrefs; k++) {
		size_t rec = a.sub_records + 8u * k;
		char where[48];

		snprintf(where, sizeof where, "subreference %u", k);
		words(m, rec, rec + 8, where);
		put32(m, rec + 4,
		      a.subrefs[k].object < a.n_dict ? arena_row(&a, a.subrefs[k].object)->size
						     : 0);
		emit(m, "%s offset at the object's end", where);
		if (a.n_subrefs > 1) {
			put32(m, rec, a.subrefs[(k + 1) % a.n_subrefs].object);
			put32(m, rec + 4, a.subrefs[(k + 1) % a.n_subrefs].offset);
			emit(m, "%s same target as the next record", where);
		}
	}

	for (uint32_t i = 0; i < a.n_dict; i++) {
		psg_dict(m, &a, i);
		psg_object(m, &a, i);
		if (!tex_done && arena_row(&a, i)->type_id == RW_T_TEXTURE &&
		    arena_row(&a, i)->readable && arena_row(&a, i)->size >= 40) {
			psg_texture_bytes(m, &a, i);
			tex_done = true;
		}
	}
	arena_free(&a);
}

/* ---- common ---- */

static void random_mutants(struct mut *m)
{
	for (int k = 0; k < 16; k++)
		truncate_at(m, (size_t)(prng_next(&m->rng) % m->n), "random point");
	for (int k = 0; k < 32; k++) {
		int flips = 1 + (int)(prng_next(&m->rng) % 4);

		for (int f = 0; f < flips; f++)
			m->w[prng_next(&m->rng) % m->n] ^=
			    (uint8_t)(1u << (prng_next(&m->rng) % 8));
		emit(m, "random flips #%d", k);
	}
}

size_t fuzz_mutants(const uint8_t *base, size_t n, uint64_t seed, fuzz_mutant_fn cb, void *ctx)
{
	struct mut m = {.base = base, .n = n, .cb = cb, .ctx = ctx};
	bool psk = n >= 32 && (!memcmp(base, "ACTRHEAD", 9) || !memcmp(base, "ANIMHEAD", 9));
	bool psg = n >= 0xC0 && !memcmp(base, "\x89RW4", 4);

	if (!psk && !psg)
		return 0;
	prng_seed(&m.rng, seed);
	m.w = malloc(n * 2 + 4096);
	if (!m.w)
		return 0;
	reset(&m);
	if (psk)
		psk_mutants(&m);
	else
		psg_mutants(&m);
	random_mutants(&m);
	free(m.w);
	return m.count;
}
