/*
 * Archives shaped like the game's (docs/archives.md, "What the game ships"), hostile archives
 * and benchmark archives, on top of gen_big_write.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/hash.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/gen/gen_district.h"
#include "psgfs/gen/gen_stream.h"
#include "psgfs/gen/gen_x360_textures.h"
#include "psgfs/gen/prng.h"

/* ---- entry lists that own their bytes ---- */

struct elist {
	struct gen_big_entry *v;
	uint8_t **owned; /* per entry, freed with the list */
	char **strs;	 /* folder and name strings */
	size_t n, cap, nstr, capstr;
	bool oom;
};

static char *el_str(struct elist *l, const char *s)
{
	char *d = strdup(s);

	if (d && l->nstr == l->capstr) {
		size_t cap = l->capstr ? 2 * l->capstr : 64;
		char **v = realloc(l->strs, cap * sizeof *v);

		if (v) {
			l->strs = v;
			l->capstr = cap;
		} else {
			free(d);
			d = NULL;
		}
	}
	if (!d) {
		l->oom = true;
		return NULL;
	}
	l->strs[l->nstr++] = d;
	return d;
}

/* Add an entry that takes b's bytes (b is left empty). */
static struct gen_big_entry *el_add(struct elist *l, const char *folder, const char *name,
				    struct buf *b, uint8_t method)
{
	struct gen_big_entry *e;
	size_t len = 0;
	uint8_t *data = b ? buf_steal(b, &len) : NULL;

	if (b && (b->oom || (!data && len))) {
		l->oom = true;
		return NULL;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		void *v = realloc(l->v, cap * sizeof *l->v), *o;

		if (v)
			l->v = v;
		o = v ? realloc(l->owned, cap * sizeof *l->owned) : NULL;
		if (!o) {
			free(data);
			l->oom = true;
			return NULL;
		}
		l->owned = o;
		l->cap = cap;
	}
	e = &l->v[l->n];
	memset(e, 0, sizeof *e);
	e->folder = el_str(l, folder);
	e->name = el_str(l, name);
	e->data = data;
	e->len = len;
	e->method = method;
	l->owned[l->n++] = data;
	if (!e->folder || !e->name)
		return NULL;
	return e;
}

static void el_free(struct elist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->owned[i]);
	for (size_t i = 0; i < l->nstr; i++)
		free(l->strs[i]);
	free(l->v);
	free(l->owned);
	free(l->strs);
	memset(l, 0, sizeof *l);
}

static enum rc man_entries(struct gen_big_manifest *m, const char *file, const struct elist *l)
{
	enum rc r = RC_OK;

	for (size_t i = 0; r == RC_OK && i < l->n; i++) {
		const struct gen_big_entry *e = &l->v[i];
		size_t a = strlen(e->folder), b = strlen(e->name);
		char *p = malloc(a + b + 2);

		if (!p)
			return RC_NOMEM;
		snprintf(p, a + b + 2, "%s/%s", e->folder, e->name);
		r = gen_big_manifest_add(m, file, p, e->method, e->len,
					 fnv1a_64(e->data, (size_t)e->len));
		free(p);
	}
	return r;
}

/* ---- asset bytes ---- */

static uint64_t seed_next(struct prng *p)
{
	return prng_next(p) | 1;
}

static enum rc texture_arena(struct prng *p, bool x360, struct buf *b)
{
	struct gen_tex_opts o = {0};
	size_t n;

	if (x360)
		return gen_big_x360_textures(prng_below(p, 1000), b);
	o.specs = gen_tex_default_specs(&n);
	o.n_specs = 2 + prng_below(p, (uint32_t)(n - 2));
	o.shuffle_seed = seed_next(p);
	return gen_psg_textures(&o, b, NULL, NULL);
}

/* A model's _Textures companion: the first six textures of the default set, the ones the
 * generated models' materials name (as gen_folder's companions), so material links resolve
 * across the archive. */
static enum rc companion_arena(struct prng *p, bool x360, struct buf *b)
{
	struct gen_tex_opts o = {0};
	size_t n;

	if (x360)
		return gen_big_x360_textures(prng_below(p, 1000), b);
	o.specs = gen_tex_default_specs(&n);
	(void)prng_below(p, (uint32_t)(n - 2)); /* what texture_arena draws: later assets stay */
	o.n_specs = n < 6 ? n : 6;
	o.shuffle_seed = seed_next(p);
	return gen_psg_textures(&o, b, NULL, NULL);
}

static enum rc model_arena(struct prng *p, bool x360, struct buf *b)
{
	struct gen_skinned_opts o = {.layout = -1};

	if (prng_below(p, 2) == 0)
		return gen_psg_sky_platform(x360 ? PSGB_XB2 : PSGB_PS3, PSGB_ORDER_LOGICAL,
					    x360 ? 0 : seed_next(p), b, NULL);
	o.seed = seed_next(p);
	o.n_bones = 3 + prng_below(p, 20);
	o.n_meshes = 1 + prng_below(p, 3);
	o.verts = 24 + prng_below(p, 60);
	o.tris = 8 + prng_below(p, 16);
	o.islands = 1 + prng_below(p, 2);
	o.platform = x360 ? GEN_SK_X360 : GEN_SK_PS3;
	return gen_psg_skinned(&o, b, NULL);
}

static enum rc psk_file(struct prng *p, bool psa, struct buf *b)
{
	struct gen_psk_opts k;
	struct gen_psa_opts a;

	if (psa) {
		gen_psa_opts_default(&a, seed_next(p));
		a.bones = 1 + prng_below(p, 12);
		a.sequences = 1 + prng_below(p, 3);
		return gen_psa_file(&a, b);
	}
	gen_psk_opts_default(&k, seed_next(p));
	k.bones = 1 + prng_below(p, 20);
	k.points = 8 + prng_below(p, 40);
	return gen_psk_file(&k, b);
}

/* The compression of the k-th entry of a mixed archive. */
static uint8_t mix_method(const struct gen_big_game_opts *o, uint32_t k)
{
	static const uint8_t ps3[] = {GB_REFPACK, GB_STORED, GB_CHUNK_REFPACK, GB_REFPACK,
				      GB_CHUNK_ZLIB};
	static const uint8_t x360[] = {GB_REFPACK, GB_STORED, GB_CHUNK_REFPACK, GB_CHUNK_LZX,
				       GB_CHUNK_ZLIB};

	if (o->only_method >= 0)
		return (uint8_t)o->only_method;
	return o->x360 ? x360[k % 5] : ps3[k % 5];
}

static void tune(const struct gen_big_game_opts *o, struct gen_big_entry *e, uint32_t k)
{
	if (!e)
		return;
	e->rp_header = o->rp_header;
	e->style = o->style;
	e->chunk_size = 16u << 10; /* small arenas still get several chunks */
	e->chunk_align = (k & 1) ? 16 : 128;
	e->stored_len = (k % 3) == 1;
}

#define CAC "data/content/createacharacter"

static enum rc game_entries(const struct gen_big_game_opts *o, struct elist *l)
{
	const char *ext = o->x360 ? "rx2" : "psg";
	uint32_t assets = o->assets ? o->assets : 24, k = 0;
	struct prng p;
	char folder[256], name[256];
	struct buf b;
	enum rc r = RC_OK;

	prng_seed(&p, o->seed);
	for (uint32_t i = 0; r == RC_OK && i < assets; i++, k++) {
		uint32_t kind = i % 6;
		uint64_t g1 = prng_next(&p), g2 = prng_next(&p);

		buf_init(&b);
		if (kind <= 1) { /* CAS textures named by GUID */
			snprintf(folder, sizeof folder, CAC "/texture");
			snprintf(name, sizeof name, "0x%016" PRIx64 "%016" PRIx64 ".%s", g1, g2,
				 ext);
			r = texture_arena(&p, o->x360, &b);
		} else if (kind <= 3) { /* a model and its companion texture arena */
			snprintf(folder, sizeof folder, CAC "/model/cas_db/%s/g%03u",
				 kind == 2 ? "shirt" : "board", i / 12);
			snprintf(name, sizeof name, "m%08x.%s", (unsigned)g1, ext);
			r = model_arena(&p, o->x360, &b);
			if (r == RC_OK) {
				tune(o, el_add(l, folder, name, &b, mix_method(o, k)), k);
				buf_free(&b);
				buf_init(&b);
				k++;
				snprintf(name, sizeof name, "m%08x_Textures.%s", (unsigned)g1, ext);
				r = companion_arena(&p, o->x360, &b);
			}
		} else { /* Unreal meshes and animations (as modders' folders hold them) */
			snprintf(folder, sizeof folder, CAC "/actorx/%s",
				 kind == 4 ? "meshes" : "anims");
			snprintf(name, sizeof name, "a%08x.%s", (unsigned)g1,
				 kind == 4 ? "psk" : "psa");
			r = psk_file(&p, kind == 5, &b);
		}
		if (r == RC_OK)
			tune(o, el_add(l, folder, name, &b, mix_method(o, k)), k);
		buf_free(&b);
	}
	buf_init(&b);
	buf_printf(&b, "<catalog seed=\"%" PRIu64 "\" assets=\"%u\"/>\n", o->seed, assets);
	tune(o,
	     el_add(l, CAC, "catalog.xml", &b,
		    o->only_method >= 0 ? (uint8_t)o->only_method : GB_STORED),
	     k++);
	buf_free(&b);
	buf_init(&b);
	/* An empty entry stored the variant's way too: a RefPack stream or a chunk header
	 * holding no bytes, which readers must take as the empty file the table says. */
	tune(o,
	     el_add(l, CAC, "empty.dat", &b,
		    o->only_method >= 0 ? (uint8_t)o->only_method : GB_STORED),
	     k++);
	buf_free(&b);
	return r != RC_OK ? r : l->oom ? RC_NOMEM : RC_OK;
}

enum rc gen_big_game(const struct gen_big_game_opts *o, struct gen_sink *out,
		     struct gen_big_manifest *m)
{
	struct gen_big_opts bo = {.wide = o->wide, .shift = o->shift, .shift_zero = o->shift_zero};
	struct elist l = {0};
	enum rc r = game_entries(o, &l);

	if (r == RC_OK)
		r = gen_big_write(&bo, l.v, (uint32_t)l.n, out, NULL, NULL);
	if (r == RC_OK)
		r = man_entries(m, "", &l);
	el_free(&l);
	return r;
}

enum rc gen_big_game_bigf(const struct gen_big_game_opts *o, bool big4, struct buf *out,
			  struct gen_big_manifest *m)
{
	struct elist l = {0};
	enum rc r = game_entries(o, &l);

	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].method != GB_REFPACK)
			l.v[i].method = GB_STORED;
	if (r == RC_OK)
		r = gen_bigf_write(big4, l.v, (uint32_t)l.n, out);
	if (r == RC_OK)
		r = man_entries(m, "", &l);
	el_free(&l);
	return r;
}

/* ---- hostile archives ---- */

static const char *const hostile_names[GB_H_COUNT] = {
    "overlap", "past-eof", "lying",   "names",	"folder-index",
    "million", "nested",   "backref", "chunks", "truncated",
};

const char *gen_big_hostile_name(enum gen_big_hostile h)
{
	return (unsigned)h < GB_H_COUNT ? hostile_names[h] : "?";
}

static void pattern(struct prng *p, struct buf *b, size_t n)
{
	static const char words[] = "skate board grind kickflip ollie manual rail ledge ";

	for (size_t i = 0; i < n; i++)
		buf_u8(b, (i % 7) == 3
			      ? (uint8_t)prng_below(p, 256)
			      : (uint8_t)words[(i + prng_below(p, 2)) % (sizeof words - 1)]);
}

/* Three entries, offsets in bytes: a 100-byte stored one, a RefPack one, a stored one. */
static enum rc hostile_base(uint64_t seed, uint8_t m1, struct buf *out, struct gen_big_placed pl[3])
{
	struct gen_big_opts bo = {.shift_zero = true};
	struct elist l = {0};
	struct gen_sink s;
	struct prng p;
	struct buf b;
	uint8_t methods[3] = {GB_STORED, m1, GB_STORED};
	size_t sizes[3] = {100, 300, 64};
	enum rc r;

	prng_seed(&p, seed);
	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof name, "%c.bin", 'a' + i);
		buf_init(&b);
		pattern(&p, &b, m1 != GB_REFPACK && i == 1 ? 40000 : sizes[i]);
		struct gen_big_entry *e = el_add(&l, "data/content/hostile", name, &b, methods[i]);
		if (e)
			e->chunk_size = 16384;
		buf_free(&b);
	}
	gen_sink_buf(&s, out);
	r = l.oom ? RC_NOMEM : gen_big_write(&bo, l.v, (uint32_t)l.n, &s, pl, NULL);
	el_free(&l);
	return r;
}

static void set_be32(struct buf *b, uint64_t at, uint32_t v)
{
	buf_set_u32be(b, (size_t)at, v);
}

static uint32_t get_be32(const struct buf *b, uint64_t at)
{
	const uint8_t *p = b->data + at;

	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static enum rc hostile_names_archive(struct buf *out)
{
	static const char *const bad[][2] = {
	    {"data/content", "../../../../etc/passwd"},
	    {"data/content", "/abs/path.bin"},
	    {"data/content", "dir\\sub\\x.bin"},
	    {"data/content", ""},
	    {"data/content", "dup.bin"},
	    {"data/content", "dup.bin"},
	    {"data/content", "ctl\x01\x1b[2J.bin"},
	    {"data/content", "bad\xff\xfeutf8.bin"},
	    {"data/content", "."},
	    {"data/content", ".."},
	    {"data/content", "a/../../b.bin"},
	    {"../../outside", "x.bin"},
	    {"/", "root.bin"},
	    {"", "nofolder.bin"},
	    {"data//content/./x", "dots.bin"},
	};
	struct elist l = {0};
	struct gen_sink s;
	enum rc r;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct buf b;

		buf_init(&b);
		buf_printf(&b, "entry %zu\n", i);
		el_add(&l, bad[i][0], bad[i][1], &b, GB_STORED);
		buf_free(&b);
	}
	gen_sink_buf(&s, out);
	r = l.oom ? RC_NOMEM : gen_big_write(NULL, l.v, (uint32_t)l.n, &s, NULL, NULL);
	el_free(&l);
	return r;
}

/* Archive of depth levels: level 1 holds a text file, level k holds level k - 1. */
static enum rc hostile_nested(uint64_t seed, unsigned depth, struct buf *out)
{
	struct buf cur, next;
	enum rc r = RC_OK;

	buf_init(&cur);
	buf_printf(&cur, "the innermost file (seed %" PRIu64 ")\n", seed);
	for (unsigned k = 1; r == RC_OK && k <= depth; k++) {
		struct elist l = {0};
		struct gen_sink s;
		char name[32];

		snprintf(name, sizeof name, k == 1 ? "leaf.txt" : "level%u.big", k - 1);
		el_add(&l, "data/nested", name, &cur, k % 2 ? GB_STORED : GB_REFPACK);
		buf_init(&next);
		gen_sink_buf(&s, &next);
		r = l.oom ? RC_NOMEM : gen_big_write(NULL, l.v, 1, &s, NULL, NULL);
		el_free(&l);
		buf_free(&cur);
		cur = next;
	}
	buf_put(out, cur.data, cur.len);
	buf_free(&cur);
	return r != RC_OK ? r : out->oom ? RC_NOMEM : RC_OK;
}

/* A RefPack stream whose first command copies from 100 bytes before the start. */
static enum rc hostile_backref(struct buf *out)
{
	struct gen_big_placed pl[3];
	enum rc r = hostile_base(7, GB_REFPACK, out, pl);
	static const uint8_t evil[] = {0x10, 0xFB, 0x00, 0x01, 0x2C, /* 300 bytes */
				       0x1C, 99, /* copy 10 from 100 back, no literals */
				       0xFC};

	if (r != RC_OK)
		return r;
	/* the 300-byte entry's stream is longer than evil: overwrite its start, keep its size */
	memcpy(out->data + pl[1].off, evil, sizeof evil);
	set_be32(out, 0x30 + 16 + 4, sizeof evil);
	return RC_OK;
}

/* Entry 1 (chunkref, 3 chunks) claims 0x7FFFFFFF chunks; entry 0 becomes a chunkref header
 * with chunk size 0; entry 2 a chunkzip whose first chunk claims 4 GiB - 256 packed bytes. */
static enum rc hostile_chunks(uint64_t seed, struct buf *out)
{
	struct gen_big_placed pl[3];
	enum rc r = hostile_base(seed, GB_CHUNK_REFPACK, out, pl);
	static const struct {
		int entry;
		const char *tag;
		uint32_t total, csize, count, packed;
	} patch[] = {{0, "chunkref", 100, 0, 1, 0}, {2, "chunkzip", 64, 65536, 1, 0xFFFFFF00}};

	if (r != RC_OK)
		return r;
	set_be32(out, pl[1].off + 24, 0x7FFFFFFF);
	for (int k = 0; k < 2; k++) {
		uint64_t at = pl[patch[k].entry].off;

		memcpy(out->data + at, patch[k].tag, 8);
		set_be32(out, at + 8, 2);
		set_be32(out, at + 12, patch[k].total);
		set_be32(out, at + 16, patch[k].csize);
		set_be32(out, at + 20, patch[k].count);
		set_be32(out, at + 24, 16);
		set_be32(out, at + 40, patch[k].packed);
		set_be32(out, at + 44, k ? 1 : 2);
		out->data[0x60 + patch[k].entry] = k ? GB_CHUNK_ZLIB : GB_CHUNK_REFPACK;
		set_be32(out, 0x30 + 16 * (uint64_t)patch[k].entry + 4,
			 (uint32_t)pl[patch[k].entry].stored);
	}
	return RC_OK;
}

enum rc gen_big_hostile(enum gen_big_hostile h, uint64_t seed, unsigned depth, struct buf *out)
{
	struct gen_big_placed pl[3];
	enum rc r;
	uint64_t total;

	if (h == GB_H_NAMES)
		return hostile_names_archive(out);
	if (h == GB_H_NESTED)
		return hostile_nested(seed, depth ? depth : 12, out);
	if (h == GB_H_BACKREF)
		return hostile_backref(out);
	if (h == GB_H_CHUNKS)
		return hostile_chunks(seed, out);
	if ((unsigned)h >= GB_H_COUNT)
		return RC_INVAL;
	if ((r = hostile_base(seed, GB_REFPACK, out, pl)) != RC_OK)
		return r;
	total = out->len;
	switch (h) {
	case GB_H_OVERLAP:
		set_be32(out, 0x30 + 16, (uint32_t)pl[0].off + 10); /* inside entry 0 */
		set_be32(out, 0x30 + 32, 0x10);			    /* inside the header */
		break;
	case GB_H_PAST_EOF:
		set_be32(out, 0x30, (uint32_t)total + 1000);   /* starts past the end */
		set_be32(out, 0x30 + 16 + 4, (uint32_t)total); /* runs past the end */
		set_be32(out, 0x30 + 32 + 8, (uint32_t)total); /* stored as is, past the end */
		break;
	case GB_H_LYING:
		set_be32(out, 0x30 + 4, 100);		  /* stored bytes: 100 */
		set_be32(out, 0x30 + 8, 0xFFFFFFFF);	  /* unpacked: 4 GiB - 1 */
		set_be32(out, 0x30 + 16 + 8, 0xFFFFFFF0); /* RefPack's stream says 300 */
		break;
	case GB_H_FOLDER_INDEX: {
		uint32_t names = get_be32(out, 12), rec = out->data[20];

		out->data[names + rec] = 0xFF; /* entry 1: folder 0xFFFF */
		out->data[names + rec + 1] = 0xFF;
		out->data[names + 2 * rec + 1] = 1; /* entry 2: folder 1 of 1 */
		break;
	}
	case GB_H_MILLION:
		set_be32(out, 4, 1000000);
		break;
	case GB_H_TRUNCATED:
		out->len = get_be32(out, 12) + 5;
		break;
	default:
		break;
	}
	return RC_OK;
}

/* ---- benchmark archives ---- */

struct bench_dict {
	uint64_t seed;
	uint8_t phrases[256][64];
};

struct bench_fill {
	const struct bench_dict *d;
	uint32_t entry;
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* 64-byte blocks: three in four a phrase from a small dictionary, one in four noise, so
 * RefPack gets about 3:1 and the bytes at any offset are known without the rest. */
static void bench_fill(void *ctx, uint64_t off, uint8_t *dst, size_t n)
{
	const struct bench_fill *f = ctx;

	for (size_t i = 0; i < n;) {
		uint64_t at = off + i, blk = at / 64;
		uint64_t h = mix64(f->d->seed ^ ((uint64_t)f->entry << 40) ^ blk);
		size_t in = (size_t)(at % 64), k = 64 - in < n - i ? 64 - in : n - i;

		if ((h & 3) == 0) {
			for (size_t j = 0; j < k; j++)
				dst[i + j] = (uint8_t)(mix64(h + in + j) >> 24);
		} else {
			memcpy(dst + i, f->d->phrases[(h >> 8) & 255] + in, k);
		}
		i += k;
	}
}

static enum rc bench_manifest(struct gen_big_manifest *m, const struct gen_big_entry *e, uint32_t n)
{
	uint8_t *tmp = malloc(1u << 20);
	enum rc r = tmp ? RC_OK : RC_NOMEM;

	for (uint32_t i = 0; m && r == RC_OK && i < n; i++) {
		uint64_t h = FNV64_BASIS;
		char path[128];

		for (uint64_t off = 0; off < e[i].len; off += 1u << 20) {
			size_t k =
			    e[i].len - off < (1u << 20) ? (size_t)(e[i].len - off) : 1u << 20;

			e[i].fill(e[i].ctx, off, tmp, k);
			h = fnv1a_64_update(h, tmp, k);
		}
		snprintf(path, sizeof path, "%s/%s", e[i].folder, e[i].name);
		r = gen_big_manifest_add(m, "", path, e[i].method, e[i].len, h);
	}
	free(tmp);
	return r;
}

enum rc gen_big_bench(const struct gen_big_bench_opts *o, struct gen_sink *out,
		      struct gen_big_manifest *m)
{
	uint32_t n = o->entries ? o->entries : 20000, total_n = n + (o->chunked_bytes ? 1 : 0);
	uint64_t bytes = o->bytes ? o->bytes : 1ull << 30, each = bytes / n;
	struct gen_big_entry *e = calloc(total_n, sizeof *e);
	struct bench_fill *f = calloc(total_n, sizeof *f);
	struct bench_dict *d = malloc(sizeof *d);
	char(*names)[48] = calloc(total_n, sizeof *names);
	char(*folders)[40] = calloc(total_n, sizeof *folders);
	struct prng p;
	enum rc r = RC_OK;

	if (!e || !f || !d || !names || !folders || each > UINT32_MAX / 2) {
		r = !e || !f || !d || !names || !folders ? RC_NOMEM : RC_INVAL;
		goto out;
	}
	prng_seed(&p, o->seed);
	d->seed = o->seed;
	for (int i = 0; i < 256; i++)
		for (int j = 0; j < 64; j++)
			d->phrases[i][j] =
			    (uint8_t) "abcdefghijklmnopqrstuvwxyz0123456789 .,;:\n"[prng_below(&p,
											       42)];
	for (uint32_t i = 0; i < total_n; i++) {
		bool chunked = i == n;

		snprintf(folders[i], sizeof folders[i], "data/content/bench/g%03u",
			 chunked ? 999 : i / 200);
		snprintf(names[i], sizeof names[i], chunked ? "chunked.dat" : "e%06u.dat", i);
		f[i].d = d;
		f[i].entry = i;
		e[i].folder = folders[i];
		e[i].name = names[i];
		e[i].fill = bench_fill;
		e[i].ctx = &f[i];
		e[i].len =
		    chunked ? o->chunked_bytes : each / 2 + prng_below(&p, (uint32_t)each + 1);
		e[i].method = chunked ? GB_CHUNK_REFPACK : (i % 8 == 7) ? GB_STORED : GB_REFPACK;
		e[i].chunk_size = 64u << 10;
		e[i].rp_chain = 4;
	}
	r = gen_big_write(NULL, e, total_n, out, NULL, NULL);
	if (r == RC_OK)
		r = bench_manifest(m, e, total_n);
out:
	free(e);
	free(f);
	free(d);
	free(names);
	free(folders);
	return r;
}

/* ---- a game data/ folder ---- */

struct gdir {
	const char *root;
	struct gen_big_manifest *m;
	enum rc r;
};

static void gd_mkdirs(struct gdir *g, const char *rel)
{
	char p[4096];
	int n = snprintf(p, sizeof p, "%s/%s", g->root, rel);

	if (n < 0 || (size_t)n >= sizeof p) {
		g->r = RC_INVAL;
		return;
	}
	for (char *c = p + strlen(g->root) + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = 0;
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			g->r = RC_IO;
		*c = '/';
	}
}

static int gd_create(struct gdir *g, const char *rel)
{
	char p[4096];
	int fd;

	gd_mkdirs(g, rel);
	snprintf(p, sizeof p, "%s/%s", g->root, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		g->r = RC_IO;
	return fd;
}

/* rel created for a write through s (bound to *fd), unless the run has failed already or oom
 * says its bytes were never made (g->r then says why); false: nothing to write. */
static bool gd_open(struct gdir *g, const char *rel, bool oom, struct gen_sink *s, int *fd)
{
	if (g->r != RC_OK)
		return false;
	if (oom) {
		g->r = RC_NOMEM;
		return false;
	}
	*fd = gd_create(g, rel);
	if (*fd < 0)
		return false;
	gen_sink_fd(s, fd);
	return true;
}

/* ... and closed after the write that returned w: whether both went well. */
static bool gd_close(struct gdir *g, int fd, enum rc w)
{
	g->r = w;
	if (close(fd) != 0 && g->r == RC_OK)
		g->r = RC_IO;
	return g->r == RC_OK;
}

static void gd_file(struct gdir *g, const char *rel, const struct buf *b)
{
	struct gen_sink s;
	int fd;

	if (gd_open(g, rel, b->oom, &s, &fd) &&
	    gd_close(g, fd, s.write_at(s.ctx, 0, b->data, b->len)))
		g->r = gen_big_manifest_add(g->m, rel, "-", GB_STORED, b->len,
					    fnv1a_64(b->data, b->len));
}

/* An archive of l's entries at rel; rows for every entry. */
static void gd_archive(struct gdir *g, const char *rel, const struct gen_big_opts *bo,
		       const struct elist *l)
{
	struct gen_sink s;
	int fd;

	if (gd_open(g, rel, l->oom, &s, &fd) &&
	    gd_close(g, fd, gen_big_write(bo, l->v, (uint32_t)l->n, &s, NULL, NULL)))
		g->r = man_entries(g->m, rel, l);
}

static void gd_world(struct gdir *g, uint64_t seed, bool x360)
{
	static const char *const dists[] = {"DIST_MegaPark", "DIST_Downtown", "DIST_Industrial"};
	const char *ext = x360 ? "rx2" : "psg";
	struct gen_big_opts bo = {.wide = true, .shift = 7};
	struct elist l = {0};
	struct prng p;
	char name[128];

	prng_seed(&p, seed);
	for (unsigned d = 0; d < 3 && g->r == RC_OK; d++) {
		struct buf b;

		buf_init(&b);
		snprintf(name, sizeof name, "%s.%s", dists[d], ext);
		g->r = gen_psg_sky_platform(x360 ? PSGB_XB2 : PSGB_PS3, PSGB_ORDER_LOGICAL, 0, &b,
					    NULL);
		tune(&(struct gen_big_game_opts){.x360 = x360, .only_method = -1},
		     el_add(&l, "data/content/world/models", name, &b, GB_REFPACK), d);
		buf_free(&b);
		buf_init(&b);
		snprintf(name, sizeof name, "%s_Textures.%s", dists[d], ext);
		if (g->r == RC_OK)
			g->r = companion_arena(&p, x360, &b);
		tune(&(struct gen_big_game_opts){.x360 = x360, .only_method = -1},
		     el_add(&l, "data/content/world/models", name, &b,
			    d == 1	     ? GB_CHUNK_REFPACK
			    : x360 && d == 2 ? GB_CHUNK_LZX
					     : GB_REFPACK),
		     d);
		buf_free(&b);
	}
	for (unsigned d = 0; d < 2 && g->r == RC_OK; d++) { /* a district's stream files */
		struct gen_stream_opts so = {.seed = seed + d, .x360 = x360, .format = 2 + d};
		struct buf sf, toc;
		char folder[128];

		buf_init(&sf);
		buf_init(&toc);
		g->r = gen_stream(&so, GS_H_NONE, &sf, &toc, NULL);
		snprintf(folder, sizeof folder, "data/content/world/stream/%s", dists[d]);
		snprintf(name, sizeof name, "cGfx_Global.%s", x360 ? "xsf" : "psf");
		tune(&(struct gen_big_game_opts){.x360 = x360, .only_method = -1},
		     el_add(&l, folder, name, &sf, d ? GB_STORED : GB_CHUNK_REFPACK), d);
		snprintf(name, sizeof name, "%s_Gfx.%s", dists[d], x360 ? "xst" : "pst");
		tune(&(struct gen_big_game_opts){.x360 = x360, .only_method = -1},
		     el_add(&l, folder, name, &toc, GB_REFPACK), d);
		buf_free(&sf);
		buf_free(&toc);
	}
	if (g->r == RC_OK)
		gd_archive(g, "data/content/world.big", &bo, &l);
	el_free(&l);
}

static void gd_music(struct gdir *g, uint64_t seed)
{
	struct elist l = {0};
	struct prng p;
	struct buf b;

	prng_seed(&p, seed);
	for (int i = 0; i < 4; i++) {
		char name[32];

		buf_init(&b);
		pattern(&p, &b, 2000 + 1000 * (size_t)i);
		snprintf(name, sizeof name, "track%02d.snu", i);
		el_add(&l, "data/audio/music", name, &b, i % 2 ? GB_REFPACK : GB_STORED);
		buf_free(&b);
	}
	buf_init(&b);
	if (!l.oom)
		g->r = gen_bigf_write(false, l.v, (uint32_t)l.n, &b);
	if (g->r == RC_OK) {
		struct gen_big_manifest *m = g->m;

		g->m = NULL; /* the rows below describe the entries, not the file */
		gd_file(g, "data/audio/music.big", &b);
		g->m = m;
		for (size_t i = 0; g->r == RC_OK && i < l.n; i++) {
			char path[128];

			snprintf(path, sizeof path, "%s/%s", l.v[i].folder, l.v[i].name);
			g->r = gen_big_manifest_add(m, "data/audio/music.big", path, l.v[i].method,
						    l.v[i].len,
						    fnv1a_64(l.v[i].data, (size_t)l.v[i].len));
		}
	}
	buf_free(&b);
	el_free(&l);
}

/* Loose stream files, as the unpacking tools leave them: every stream format, and rows for
 * each asset (file = the collection). */
static void gd_streams(struct gdir *g, uint64_t seed, bool x360)
{
	for (uint32_t f = 0; f < 4 && g->r == RC_OK; f++) {
		struct gen_stream_opts so = {.seed = seed + f, .x360 = x360, .format = f};
		struct gen_big_manifest rows = {0}, *m = g->m;
		struct buf sf, toc;
		char sfp[128], tocp[128];

		buf_init(&sf);
		buf_init(&toc);
		snprintf(sfp, sizeof sfp, "data/content/world/stream/DIST_Loose/cF%u_Global.%s", f,
			 x360 ? "xsf" : "psf");
		snprintf(tocp, sizeof tocp,
			 "data/content/world/stream/DIST_Loose/DIST_Loose_F%u.%s", f,
			 x360 ? "xst" : "pst");
		g->r = gen_stream(&so, GS_H_NONE, &sf, &toc, m ? &rows : NULL);
		gd_file(g, sfp, &sf);
		gd_file(g, tocp, &toc);
		for (size_t i = 0; g->r == RC_OK && i < rows.n; i++)
			g->r = gen_big_manifest_add(m, sfp, rows.v[i].path, rows.v[i].method,
						    rows.v[i].size, rows.v[i].fnv);
		gen_big_manifest_free(&rows);
		buf_free(&sf);
		buf_free(&toc);
	}
}

/* The district's files as entries of its world archive. */
struct gd_dist {
	struct elist *l;
	const char *folder;
	struct gdir *g; /* worlddmo.big goes to data/content/ */
};

static enum rc gd_dist_put(void *ctx, const char *rel, const struct buf *b)
{
	struct gd_dist *g = ctx;
	size_t n = strlen(rel);
	bool sfil = n > 4 && (!strcmp(rel + n - 4, ".psf") || !strcmp(rel + n - 4, ".xsf"));
	struct buf c;

	if (!strcmp(rel, GEN_DISTRICT_DMO_BIG)) {
		gd_file(g->g, "data/content/worlddmo.big", b);
		return g->g->r;
	}
	buf_init(&c);
	buf_put(&c, b->data, b->len);
	/* collections chunked as the big ones are in the game's archives, manifests stored */
	el_add(g->l, g->folder, rel, &c, sfil && b->len >= 4096 ? GB_CHUNK_REFPACK : GB_STORED);
	buf_free(&c);
	return g->l->oom ? RC_NOMEM : RC_OK;
}

/* A generated district (gen_district.h) in its own world archive, as the game keeps each
 * district in worldDIST_<Name>.big, and its props' templates in data/content/worlddmo.big. */
static void gd_district(struct gdir *g, uint64_t seed, bool x360)
{
	struct gen_big_opts bo = {.wide = true, .shift = 7};
	struct elist l = {0};
	struct gd_dist d = {&l, "data/content/world/stream/DIST_Gen", g};
	const struct gen_district_opts o = {.seed = seed, .x360 = x360, .name = "DIST_Gen"};

	if (g->r != RC_OK)
		return;
	g->r = gen_district(&o, &(struct gen_district_sink){gd_dist_put, &d});
	if (g->r == RC_OK)
		gd_archive(g, "data/content/worldDIST_Gen.big", &bo, &l);
	el_free(&l);
}

enum rc gen_game_dir(uint64_t seed, bool x360, const char *dir, struct gen_big_manifest *m)
{
	struct gen_big_game_opts go = {.seed = seed, .x360 = x360, .only_method = -1};
	struct gdir g = {.root = dir, .m = m};
	struct gen_big_opts bo = {0};
	struct elist l = {0};
	struct buf b;
	struct prng p;

	if (m)
		memset(m, 0, sizeof *m);
	if (mkdir(dir, 0755) != 0)
		return errno == EEXIST ? RC_INVAL : RC_IO;
	g.r = game_entries(&go, &l);
	if (g.r == RC_OK)
		gd_archive(&g, "data/content/createacharacter.big", &bo, &l);
	el_free(&l);
	gd_world(&g, seed + 1, x360);
	gd_music(&g, seed + 2);
	buf_init(&b);
	buf_puts(&b, "Generated by psgfs-gen game: a data/ folder laid out like Skate 3's.\n");
	gd_file(&g, "data/readme.txt", &b);
	buf_free(&b);
	buf_init(&b);
	prng_seed(&p, seed + 3);
	if (g.r == RC_OK)
		g.r = texture_arena(&p, x360, &b);
	gd_file(&g,
		x360 ? "data/content/loose/0x00000000deadbeef.rx2"
		     : "data/content/loose/0x00000000deadbeef.psg",
		&b);
	buf_free(&b);
	gd_streams(&g, seed + 4, x360);
	gd_district(&g, seed + 5, x360);
	return g.r;
}
