/* Seed inputs made by the project's own generators (deterministic, small). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_stream.h"
#include "psgfs/formats/stream_manifest.h"
#include "psgfs/formats/world_objects.h"
#include "psgfs/formats/texture.h"
#include "psgfs/base/bytes.h"

#include <zlib.h>

#include "../unit/rp_enc.h" /* the tests' RefPack encoder (the generator's is arcgen's) */

#define FZ_PSG (FZ_ARENA | FZ_SKATE | FZ_TREE)

struct seedset {
	struct fuzz_seed *v;
	size_t n, cap;
	int err;
};

/* Take the generator's output (b is freed either way). */
static void add(struct seedset *s, const char *name, unsigned h, enum rc r, struct buf *b)
{
	if (r != RC_OK || b->oom || !b->len) {
		fprintf(stderr, "seed %s: generator failed: %s\n", name, rc_str(r));
		s->err = -1;
		buf_free(b);
		return;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct fuzz_seed *v = realloc(s->v, cap * sizeof *v);

		if (!v) {
			s->err = -1;
			buf_free(b);
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	struct fuzz_seed *f = &s->v[s->n++];

	snprintf(f->name, sizeof f->name, "%s", name);
	f->harnesses = h;
	f->data = buf_steal(b, &f->len);
	buf_free(b);
}

static void psk_seeds(struct seedset *s)
{
	struct gen_psk_opts o;
	struct gen_psa_opts a;
	struct buf b;

	gen_psk_opts_default(&o, 1);
	buf_init(&b);
	add(s, "psk_default", FZ_PSK | FZ_TREE, gen_psk_file(&o, &b), &b);

	gen_psk_opts_default(&o, 11);
	o.bones = 7;
	o.points = 20;
	o.materials = 2;
	o.normals = o.colors = true;
	o.extra_uv_sets = 2;
	o.morphs = 2;
	o.sockets = 2;
	buf_init(&b);
	add(s, "psk_full", FZ_PSK | FZ_TREE, gen_psk_file(&o, &b), &b);

	gen_psk_opts_default(&o, 5);
	o.bones = 8;
	o.points = 12;
	o.morphs = 3;
	o.sockets = 1;
	o.hostile_names = true;
	buf_init(&b);
	add(s, "psk_hostile_names", FZ_PSK | FZ_TREE, gen_psk_file(&o, &b), &b);

	gen_psk_opts_default(&o, 3);
	o.bones = 3;
	o.points = 6;
	o.root_parent_minus1 = true;
	o.max_influences = 2;
	buf_init(&b);
	add(s, "psk_root_minus1", FZ_PSK | FZ_TREE, gen_psk_file(&o, &b), &b);

	gen_psk_opts_default(&o, 4);
	o.bones = 0;
	o.points = 4;
	buf_init(&b);
	add(s, "psk_static", FZ_PSK | FZ_TREE, gen_psk_file(&o, &b), &b);

	gen_psa_opts_default(&a, 1);
	buf_init(&b);
	add(s, "psa_default", FZ_PSA | FZ_TREE, gen_psa_file(&a, &b), &b);

	gen_psa_opts_default(&a, 7);
	a.bones = 4;
	a.sequences = 3;
	a.max_frames = 4;
	a.scale_keys = true;
	buf_init(&b);
	add(s, "psa_scale_keys", FZ_PSA | FZ_TREE, gen_psa_file(&a, &b), &b);

	gen_psa_opts_default(&a, 5);
	a.bones = 5;
	a.sequences = 3;
	a.max_frames = 3;
	a.hostile_names = true;
	buf_init(&b);
	add(s, "psa_hostile_names", FZ_PSA | FZ_TREE, gen_psa_file(&a, &b), &b);

	gen_psa_opts_default(&a, 3);
	a.bones = 3;
	a.match_psk = true;
	a.max_frames = 2;
	buf_init(&b);
	add(s, "psa_match_psk", FZ_PSA | FZ_TREE, gen_psa_file(&a, &b), &b);
}

/* Small textures of every converted format and layout kind. */
static const struct gen_tex_spec small_specs[] = {
    {GCM_TEX_DXT1, 8, 8, 0, false, 0, false, 0},
    {GCM_TEX_DXT3, 8, 4, 1, false, 0, false, 0},
    {GCM_TEX_DXT5 | GCM_TEX_LN, 12, 4, 1, false, 0, false, 0},
    {GCM_TEX_A8R8G8B8, 4, 4, 0, true, 0, false, 0},
    {GCM_TEX_A8R8G8B8 | GCM_TEX_LN, 3, 3, 1, false, 16, false, 0},
    {GCM_TEX_B8 | GCM_TEX_LN, 5, 3, 1, false, 8, false, 0},
    {GCM_TEX_R5G6B5, 4, 8, 2, false, 0, false, 0},
    {GCM_TEX_A1R5G5B5, 4, 4, 1, false, 0, true, 0},
    {GCM_TEX_A4R4G4B4 | GCM_TEX_LN, 6, 2, 1, false, 16, false, 0},
    {GCM_TEX_G8B8, 4, 4, 1, false, 0, false, 0},
    {GCM_TEX_D8R8G8B8 | GCM_TEX_UN, 4, 4, 1, false, 0, false, 0},
};

/* Xbox 360 models (.rx2): the sky twin, skinned twins in every preset with the twin and the
 * re-quantised formats, and the hostile variants. */
static void x360_seeds(struct seedset *s)
{
	struct gen_skinned_opts k = {.seed = 1,
				     .n_bones = 4,
				     .n_meshes = 4,
				     .verts = 12,
				     .islands = 2,
				     .tris = 3,
				     .layout = -1,
				     .platform = GEN_SK_X360};
	static const char *const hostile[] = {
	    "x360_skinned_palette_past", "x360_skinned_index_past", "x360_skinned_stride_small",
	    "x360_skinned_bones_past"};
	struct buf b;

	buf_init(&b);
	add(s, "x360_sky", FZ_PSG, gen_psg_sky_platform(PSGB_XB2, PSGB_ORDER_LOGICAL, 0, &b, NULL),
	    &b);
	buf_init(&b);
	add(s, "x360_skinned", FZ_PSG, gen_psg_skinned(&k, &b, NULL), &b);
	k.platform = GEN_SK_X360_ALT;
	k.seed = 2;
	buf_init(&b);
	add(s, "x360_skinned_alt", FZ_PSG, gen_psg_skinned(&k, &b, NULL), &b);
	k.layout = GEN_SK_SKATER;
	k.n_meshes = 2;
	buf_init(&b);
	add(s, "x360_skinned_skater", FZ_PSG, gen_psg_skinned(&k, &b, NULL), &b);
	k.layout = -1;
	k.n_meshes = 1;
	k.platform = GEN_SK_X360;
	for (int h = 0; h < 4; h++) {
		k.hostile = (enum gen_skinned_hostile)(GEN_SK_PALETTE_PAST_SKELETON + h);
		buf_init(&b);
		add(s, hostile[h], FZ_PSG, gen_psg_skinned(&k, &b, NULL), &b);
	}
}

static void psg_seeds(struct seedset *s)
{
	struct gen_tex_opts t = {.specs = small_specs,
				 .n_specs = sizeof small_specs / sizeof small_specs[0]};
	struct gen_skinned_opts k = {.seed = 1,
				     .n_bones = 4,
				     .n_meshes = 4,
				     .verts = 12,
				     .islands = 2,
				     .tris = 3,
				     .layout = -1};
	static const char *const hostile[] = {"skinned_palette_past", "skinned_index_past",
					      "skinned_stride_small", "skinned_bones_past"};
	struct buf b;

	buf_init(&b);
	add(s, "sky", FZ_PSG, gen_psg_sky(0, &b, NULL), &b);
	buf_init(&b);
	add(s, "sky_shuffled", FZ_PSG, gen_psg_sky(3, &b, NULL), &b);
	buf_init(&b);
	add(s, "textures_small", FZ_PSG, gen_psg_textures(&t, &b, NULL, NULL), &b);
	t.unnamed = true;
	t.shuffle_seed = 9;
	buf_init(&b);
	add(s, "textures_unnamed_shuffled", FZ_PSG, gen_psg_textures(&t, &b, NULL, NULL), &b);
	t = (struct gen_tex_opts){0};
	buf_init(&b);
	add(s, "textures_default", FZ_SKATE | FZ_TREE, gen_psg_textures(&t, &b, NULL, NULL), &b);
	buf_init(&b);
	add(s, "skinned", FZ_PSG, gen_psg_skinned(&k, &b, NULL), &b);
	k.shuffle_seed = 5;
	k.seed = 2;
	buf_init(&b);
	add(s, "skinned_shuffled", FZ_PSG, gen_psg_skinned(&k, &b, NULL), &b);
	k.shuffle_seed = 0;
	k.n_meshes = 1;
	for (int h = 0; h < 4; h++) {
		k.hostile = (enum gen_skinned_hostile)(GEN_SK_PALETTE_PAST_SKELETON + h);
		buf_init(&b);
		add(s, hostile[h], FZ_PSG, gen_psg_skinned(&k, &b, NULL), &b);
	}
	buf_init(&b);
	add(s, "sized_64k", FZ_ARENA | FZ_TREE, gen_psg_sized(64u << 10, 1, &b, NULL), &b);
	x360_seeds(s);
}

static const struct fuzz_seed *find_seed(const struct seedset *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

/* Folder seeds: other seeds (or text) as the files of one folder, in the order of
 * FUZZ_FOLDER_SEP's description (harness.h); "" leaves a file empty. */
static void add_folder(struct seedset *s, const char *name, const char *const parts[], size_t k)
{
	struct buf b;

	buf_init(&b);
	for (size_t i = 0; i < k; i++) {
		const struct fuzz_seed *f = find_seed(s, parts[i]);

		if (i)
			buf_puts(&b, FUZZ_FOLDER_SEP);
		if (f)
			buf_put(&b, f->data, f->len);
		else
			buf_puts(&b, parts[i]); /* not a seed's name: the text itself */
	}
	add(s, name, FZ_FOLDER, RC_OK, &b);
}

static void folder_seeds(struct seedset *s)
{
	static const char *const mix[] = {"sky",	 "textures_small", "psa_default",
					  "psk_default", "skinned",	   "a text file\n"};
	static const char *const pair[] = {"sky_shuffled", "textures_unnamed_shuffled"};
	static const char *const hostile[] = {
	    "skinned_palette_past", "",
	    "psa_hostile_names",    "psk_hostile_names",
	    "skinned_bones_past",   "ANIMHEAD but nothing after it"};

	add_folder(s, "folder_mix", mix, 6);
	add_folder(s, "folder_pair", pair, 2);
	add_folder(s, "folder_hostile", hostile, 6);
}

/* Texture mods: the DDS and PNG files psgfs serves for the textures of a small arena, and
 * that arena itself (a texture written over its own textures). */
static void texmod_seeds(struct seedset *s)
{
	const struct fuzz_seed *found = find_seed(s, "textures_small");
	struct buf arena;
	struct src src;
	struct src_mem m;
	struct arena a;

	if (!found)
		return;
	buf_init(&arena); /* a copy: adding seeds moves the set */
	buf_put(&arena, found->data, found->len);
	src_init_mem(&src, &m, arena.data, arena.len);
	if (arena_open(&src, &a, NULL) == RC_OK) {
		for (uint32_t i = 0, k = 0; i < a.n_dict && k < 4; i++) {
			struct texture_image *img;
			char name[48];
			struct buf b;

			if (arena_row(&a, i)->type_id != RW_T_TEXTURE ||
			    texture_load(&src, &a, i, &img, NULL) != RC_OK)
				continue;
			buf_init(&b);
			snprintf(name, sizeof name, "texmod_dds_%u", k);
			add(s, name, FZ_TEXMOD, texture_dds(img, &b), &b);
			buf_init(&b);
			snprintf(name, sizeof name, "texmod_png_%u", k++);
			add(s, name, FZ_TEXMOD, texture_png(&src, img, &b), &b);
			texture_image_free(img);
		}
		arena_free(&a);
	}
	add(s, "texmod_arena", FZ_TEXMOD, RC_OK, &arena);
}

/* ---- archives (docs/archives.md): EB v3 both record widths, BIGF, bare streams ---- */

static void ar_fill(uint8_t *p, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345;
		p[i] = (x >> 24) < 64 ? (uint8_t)(x >> 16) : (uint8_t)("psgfs archive "[i % 14]);
	}
}

/* Append src[0, n) RefPack-packed (an empty buf marks a failed allocation: add() refuses it). */
static void ar_rp(struct buf *b, const uint8_t *src, size_t n)
{
	size_t at = b->len;

	buf_prealloc(b, at + rpt_bound(n));
	if (b->oom || !b->data || b->cap < at + rpt_bound(n)) {
		b->oom = true;
		return;
	}
	b->len = at + rpt_encode(src, n, b->data + at);
}

/* One chunk packed as `how`: 'r' RefPack (method 2), 'z' zlib (3), else stored (4). */
static void ar_chunk(struct buf *b, char how, const uint8_t *src, size_t n)
{
	uint8_t tmp[8192];
	uLongf zl = sizeof tmp;
	size_t len = n;
	uint32_t m = 4;
	const uint8_t *data = src;

	if (how == 'r' && rpt_bound(n) <= sizeof tmp) {
		len = rpt_encode(src, n, tmp);
		data = tmp;
		m = 2;
	} else if (how == 'z' && compress2(tmp, &zl, src, n, 6) == Z_OK) {
		len = zl;
		data = tmp;
		m = 3;
	} else if (how == 'l') { /* LZX in XMem frames (the generator's uncompressed blocks) */
		struct buf l;

		buf_init(&l);
		gen_lzx_stored(src, n, &l);
		if (!l.oom && l.len <= sizeof tmp) {
			memcpy(tmp, l.data, l.len);
			len = l.len;
			data = tmp;
			m = 3;
		}
		buf_free(&l);
	}
	buf_pad_to(b, 16);
	buf_set_u32be(b, b->len - 8, (uint32_t)len);
	buf_set_u32be(b, b->len - 4, m);
	buf_put(b, data, len);
	buf_zero(b, 8); /* room for the next descriptor before the next 16-byte boundary */
}

/* A chunk stream, alignment 16, 1 KiB chunks. */
static void ar_chunks(struct buf *b, const char *magic, const uint8_t *src, size_t n,
		      const char *hows)
{
	uint32_t cs = 1024, count = (uint32_t)((n + cs - 1) / cs);

	buf_put(b, magic, 8);
	buf_u32be(b, 2);
	buf_u32be(b, (uint32_t)n);
	buf_u32be(b, cs);
	buf_u32be(b, count);
	buf_u32be(b, 16);
	buf_zero(b, 8);
	for (uint32_t i = 0; i < count; i++)
		ar_chunk(b, hows[i % strlen(hows)], src + (size_t)i * cs,
			 n - (size_t)i * cs < cs ? n - (size_t)i * cs : cs);
	b->len -= 8;
}

struct ar_ent {
	uint16_t folder;
	const char *name;
	struct buf body;
	uint32_t size;
	uint8_t comp;
};

static void ar_eb(struct buf *out, bool wide, uint8_t shift, struct ar_ent *e, uint32_t n)
{
	static const char *const folders[] = {"data/content/createacharacter/texture",
					      "data/content/world/models"};
	size_t rec = wide ? 20 : 16, comp = 0x30 + align_up(n * rec, 16);
	size_t names = align_up(comp + n, 16), nrec = 40, frec = 48;
	size_t fold = align_up(names + n * nrec, 16), fend = fold + 2 * frec, at;

	buf_put(out, "EB\0\3", 4);
	buf_u32be(out, n);
	buf_u16be(out, wide ? 1 : 0);
	buf_u8(out, shift);
	buf_u8(out, 0);
	buf_u32be(out, (uint32_t)names);
	buf_u32be(out, (uint32_t)(fend - names));
	buf_u8(out, (uint8_t)nrec);
	buf_u8(out, (uint8_t)frec);
	buf_u16be(out, 2);
	buf_zero(out, 0x30 - out->len);
	at = align_up(fend, (size_t)1 << shift);
	for (uint32_t i = 0; i < n; i++) {
		buf_u32be(out, (uint32_t)(at >> shift));
		buf_u32be(out, (uint32_t)e[i].body.len);
		buf_u32be(out, e[i].size);
		buf_u32be(out, 0x9e3779b9u * (i + 1));
		if (wide)
			buf_u32be(out, 0x7f4a7c15u * (i + 1));
		at = align_up(at + e[i].body.len, (size_t)1 << shift);
	}
	buf_pad_to(out, 16);
	for (uint32_t i = 0; i < n; i++)
		buf_u8(out, e[i].comp);
	buf_pad_to(out, 16);
	for (uint32_t i = 0; i < n; i++) {
		size_t l = strlen(e[i].name);

		buf_u16be(out, e[i].folder);
		buf_put(out, e[i].name, l);
		buf_zero(out, nrec - 2 - l);
	}
	buf_pad_to(out, 16);
	for (int f = 0; f < 2; f++) {
		buf_puts(out, folders[f]);
		buf_zero(out, frec - strlen(folders[f]));
	}
	for (uint32_t i = 0; i < n; i++) {
		buf_pad_to(out, (size_t)1 << shift);
		buf_put(out, e[i].body.data, e[i].body.len);
	}
}

/* SFIL collections with their ATOC table appended (fuzz_archive splits them again): every
 * stream format, both consoles, and the generator's hostile streams. */
static void stream_seeds(struct seedset *s)
{
	for (uint32_t k = 0; k < 8 + GS_H_COUNT - 1; k++) {
		struct gen_stream_opts o = {
		    .seed = 30 + k, .x360 = k & 1, .format = k % 4, .assets = 2, .chunk = 2048};
		enum gen_stream_hostile h = k < 8 ? GS_H_NONE : (enum gen_stream_hostile)(k - 7);
		struct buf b, toc;
		char name[48];
		enum rc r;

		if (h == GS_H_CHUNKS)
			o.format = 3;
		else if (h != GS_H_NONE)
			o.format = 2;
		buf_init(&b);
		buf_init(&toc);
		r = gen_stream(&o, h, &b, &toc, NULL);
		buf_put(&b, toc.data, toc.len);
		buf_free(&toc);
		snprintf(name, sizeof name, "stream_%s_f%u_%s", o.x360 ? "x360" : "ps3", o.format,
			 gen_stream_hostile_name(h));
		add(s, name, FZ_ARCHIVE, r, &b);
	}
}

static void archive_seeds(struct seedset *s)
{
	uint8_t src[5000];
	struct ar_ent e[6];
	struct buf b;

	ar_fill(src, sizeof src, 18);
	for (int wide = 0; wide < 2; wide++) {
		for (int i = 0; i < 6; i++) {
			buf_init(&e[i].body);
			e[i].folder = (uint16_t)(i & 1);
			e[i].size = sizeof src;
		}
		e[0] = (struct ar_ent){0, "0x2c7f3818.psg", e[0].body, 3000, 0};
		buf_put(&e[0].body, src, 3000);
		e[1].name = "DIST_a_Textures.psg";
		e[1].comp = 1;
		ar_rp(&e[1].body, src, sizeof src);
		e[2].name = "chunkref.rx2";
		e[2].comp = 2;
		ar_chunks(&e[2].body, "chunkref", src, sizeof src, "rs");
		e[3].name = "chunkzip.psg";
		e[3].comp = 3;
		ar_chunks(&e[3].body, "chunkzip", src, sizeof src, "zs");
		e[4].name = "chunklzx.psg";
		e[4].comp = 4;
		ar_chunks(&e[4].body, "chunklzx", src, sizeof src, "ls");
		e[5] = (struct ar_ent){1, "empty", e[5].body, 0, 0};
		buf_init(&b);
		ar_eb(&b, wide, wide ? 0 : 4, e, 6);
		add(s, wide ? "archive_eb_wide" : "archive_eb", FZ_ARCHIVE | FZ_PACK, RC_OK, &b);
		for (int i = 0; i < 6; i++)
			buf_free(&e[i].body);
	}
	/* BIGF: one plain entry, one RefPack; directory end 16 + (8 + 12) + (8 + 12) */
	buf_init(&b);
	buf_put(&b, "BIGF", 4);
	buf_u32le(&b, 0);
	buf_u32be(&b, 2);
	buf_u32be(&b, 56);
	buf_u32be(&b, 64);
	buf_u32be(&b, 1000);
	buf_put(&b, "music\\a.snu", 12);
	buf_u32be(&b, 1064);
	buf_u32be(&b, 0); /* set below */
	buf_put(&b, "music/b.snu", 12);
	buf_pad_to(&b, 64);
	buf_put(&b, src, 1000);
	ar_rp(&b, src + 1000, 2000);
	buf_set_u32be(&b, 40, (uint32_t)(b.len - 1064));
	add(s, "archive_bigf", FZ_ARCHIVE | FZ_PACK, RC_OK, &b);
	/* bare streams: RefPack, and a chunk stream */
	buf_init(&b);
	ar_rp(&b, src, sizeof src);
	add(s, "archive_refpack", FZ_ARCHIVE, RC_OK, &b);
	buf_init(&b);
	ar_chunks(&b, "chunkzip", src, sizeof src, "zrs");
	add(s, "archive_chunks", FZ_ARCHIVE, RC_OK, &b);
}

/* District manifests (docs/worlds.md): a Pres map as PACK writes it (Global, tiles), its
 * cells and minimap, and a hostile map (cycle, repeated id, unsafe names, NaN, bad LOD). */
static void manifest_seeds(struct seedset *s)
{
	static const char *const names[] = {"cPres_Global", "cPres_-50_50_high", "cPres_50_50_high",
					    "cPres_50_150_low"};
	const struct sm_header h = {.version = 1, .stamp = 0x5eed1234u};
	struct sm_collection c[4];
	struct sm_cell cell[4];
	struct sm_point pt[4];
	uint64_t g = sm_global_id("Pres", "DIST_Seed");
	struct buf b;

	memset(c, 0, sizeof c);
	memset(cell, 0, sizeof cell);
	for (int i = 0; i < 4; i++) {
		float cx = (float)(i * 100 - 150), cz = 50;

		snprintf(c[i].name, sizeof c[i].name, "%s", names[i]);
		c[i].id = i ? sm_collection_id(names[i]) : g;
		c[i].parent = i ? g : SM_GLOBAL_PARENT;
		c[i].offset = 0x100;
		c[i].size = 0x1000u << i;
		c[i].assets = (uint32_t)i + 1;
		cell[i].id = c[i].id;
		cell[i].lod = (uint8_t)(i == 0 ? SM_LOD_GLOBAL : i == 3 ? SM_LOD_LOW : SM_LOD_HIGH);
		for (int k = 0; k < 4; k++) {
			float lo[4] = {cx - 50, -10, cz - 50, 1}, hi[4] = {cx + 50, 90, cz + 50, 1};

			cell[i].hull_min[k] = lo[k];
			cell[i].hull_max[k] = hi[k];
			cell[i].geom_min[k] = k == 1 || k == 3 ? lo[k] : k == 0 ? cx : cz;
			cell[i].geom_max[k] = hi[k];
		}
		pt[i] = (struct sm_point){c[i].id, cx, cz, 0};
	}
	buf_init(&b);
	add(s, "manifest_cmap", FZ_MANIFEST, sm_cmap_write(SM_X360, &h, c, 4, &b), &b);
	buf_init(&b);
	add(s, "manifest_cspa", FZ_MANIFEST, sm_cspa_write(SM_X360, &h, cell, 4, &b), &b);
	buf_init(&b);
	add(s, "manifest_mmap", FZ_MANIFEST, sm_mmap_write(SM_PS3, &h, pt, 4, &b), &b);
	c[1].parent = c[2].id; /* 1 <-> 2 */
	c[2].parent = c[1].id;
	c[0].parent = c[0].id; /* self */
	c[3].id = c[1].id;
	snprintf(c[3].name, sizeof c[3].name, "../x/..");
	buf_init(&b);
	add(s, "manifest_cmap_hostile", FZ_MANIFEST, sm_cmap_write(SM_PS3, &h, c, 4, &b), &b);
	cell[1].lod = 7;
	cell[2].hull_min[0] = NAN;
	cell[3].geom_min[1] = 1e30f;
	buf_init(&b);
	add(s, "manifest_cspa_hostile", FZ_MANIFEST, sm_cspa_write(SM_PS3, &h, cell, 4, &b), &b);
}

/* District world objects (docs/worlds.md): props, rails, collision (float and 16-bit), and a
 * collision mesh whose KD-tree loops. */
static void world_seeds(struct seedset *s)
{
	static const float rail[4][3] = {{0, 1, 0}, {4, 1, 0}, {4, 2, 3}, {9, 2, 3}};
	struct wo_rail_in rails[2] = {{.guid = 1, .npoints = 4, .points = rail},
				      {.guid = 2, .npoints = 2, .points = rail + 2}};
	struct wo_dmo_header h = {.type_id = WO_T_DMODATA};
	struct wo_dmo dmo[3];
	struct wo_tri_in tri[100];
	struct buf b;

	memset(dmo, 0, sizeof dmo);
	for (int i = 0; i < 3; i++) {
		float pos[3] = {10.0f * i, 0, -5}, rot[4] = {0, 0.3826834f * i, 0, 0.9238795f},
		      sc[3] = {1, 1, 1.0f + i};

		wo_compose(pos, rot, sc, dmo[i].m);
		dmo[i].template_id = 0x5eed0000u + (unsigned)i;
		snprintf(dmo[i].name, sizeof dmo[i].name, "prop%d", i);
	}
	memset(tri, 0, sizeof tri);
	for (int i = 0; i < 100; i++) {
		float x = (float)(i % 10), z = (float)(i / 10);

		tri[i].v[0][0] = x, tri[i].v[0][2] = z;
		tri[i].v[1][0] = x + 1, tri[i].v[1][2] = z;
		tri[i].v[2][0] = x, tri[i].v[2][1] = 0.5f, tri[i].v[2][2] = z + 1;
		tri[i].surface = wo_surface_make((unsigned)i % 7, 2, 1);
	}
	buf_init(&b);
	add(s, "world_dmo", FZ_WORLD, wo_dmo_write(&h, dmo, 3, &b), &b);
	buf_init(&b);
	add(s, "world_spline", FZ_WORLD, wo_spline_write(rails, 2, &b), &b);
	buf_init(&b);
	add(s, "world_cmesh_float", FZ_WORLD, wo_cmesh_write(tri, 100, 0, &b), &b);
	buf_init(&b);
	add(s, "world_cmesh_16bit", FZ_WORLD, wo_cmesh_write(tri, 100, 0.001f, &b), &b);
	buf_init(&b);
	{
		enum rc r = wo_cmesh_write(tri, 100, 0.01f, &b);

		/* the root's right child (a leaf: 2 clusters) made a branch back to the root */
		if (r == RC_OK && b.len > WO_CM_HDR + WO_KD_HDR + 0x20) {
			uint8_t *n = b.data + WO_CM_HDR + WO_KD_HDR;

			memset(n + 16, 0xFF, 4);
			memset(n + 20, 0, 4);
		}
		add(s, "world_cmesh_kdloop", FZ_WORLD, r, &b);
	}
}

int fuzz_seeds_make(struct fuzz_seed **out, size_t *n)
{
	struct seedset s = {0};

	psk_seeds(&s);
	psg_seeds(&s);
	if (!s.err)
		folder_seeds(&s);
	if (!s.err)
		texmod_seeds(&s);
	if (!s.err)
		archive_seeds(&s);
	stream_seeds(&s);
	if (!s.err)
		manifest_seeds(&s);
	if (!s.err)
		world_seeds(&s);
	if (s.err) {
		fuzz_seeds_free(s.v, s.n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	*out = s.v;
	*n = s.n;
	return 0;
}

void fuzz_seeds_free(struct fuzz_seed *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].data);
	free(v);
}
