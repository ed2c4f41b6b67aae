/*
 * Texture mods harness: the input as a picture written over every texture of two small fixed
 * arenas (PS3 and Xbox 360), read as a DDS and as a PNG; and, when it is an arena, a fixed DDS
 * and the texture's own DDS written over each of its textures. Invariant: a write that succeeds
 * gives an arena that opens with no problem above what the input arena had and whose texture
 * describes itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "psgfs/base/buf.h"
#include "psgfs/formats/texmod.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_x360_textures.h"

#define OUT_MAX (16u << 20) /* larger outputs are planned but not written */

static const struct gen_tex_spec ps3_specs[] = {
    {GCM_TEX_DXT1, 16, 16, 0, false, 0, true, 0},
    {GCM_TEX_A8R8G8B8, 8, 8, 2, false, 0, false, 0},
    {GCM_TEX_DXT5, 8, 8, 1, true, 0, false, 0},
    {GCM_TEX_B8 | GCM_TEX_LN, 5, 3, 1, false, 8, false, 0},
};
static const struct gen_x360_spec x360_specs[] = {
    {X360TEX_FMT_DXT1, 16, 16, 0, false},
    {X360TEX_FMT_8_8_8_8, 8, 8, 2, false},
    {X360TEX_FMT_DXN, 8, 8, 1, false},
};

/* A successful write's arena opens, and its texture describes itself. */
static int check_out(const uint8_t *out, size_t n, uint32_t tex, size_t problems_before)
{
	struct src s;
	struct src_mem m;
	struct arena a;
	struct tex_desc d;
	struct diag dg;
	int bad = 0;

	diag_init(&dg);
	src_init_mem(&s, &m, out, n);
	if (arena_open(&s, &a, &dg) != RC_OK) {
		fprintf(stderr, "texmod: the written arena does not open\n");
		diag_free(&dg);
		return -1;
	}
	if (diag_count(&dg) > problems_before) {
		fprintf(stderr, "texmod: the written arena has new problems: %s\n",
			dg.msg[dg.n - 1]);
		bad = -1;
	}
	if (!bad && tex_describe(&s, &a, tex, &d, NULL) != RC_OK) {
		fprintf(stderr, "texmod: texture %u of the written arena does not describe\n", tex);
		bad = -1;
	}
	arena_free(&a);
	diag_free(&dg);
	return bad;
}

static int write_one(const struct src *as, const struct arena *a, uint32_t tex,
		     enum texmod_input in, const uint8_t *pic, size_t n, size_t problems)
{
	struct src ps;
	struct src_mem pm;
	struct texmod_plan p;
	char why[256];
	uint8_t *out;
	int r = 0;

	src_init_mem(&ps, &pm, pic, n);
	if (texmod_plan(as, a, tex, in, &ps, &p, why, sizeof why) != RC_OK)
		return 0;
	if (p.out_size <= OUT_MAX && (out = malloc(p.out_size ? (size_t)p.out_size : 1))) {
		if (texmod_write(as, a, &ps, &p, out, why, sizeof why) == RC_OK)
			r = check_out(out, (size_t)p.out_size, tex, problems);
		free(out);
	}
	texmod_plan_free(&p);
	return r;
}

/* Every texture of arena (arena, an) gets the picture. */
static int into_arena(const uint8_t *arena, size_t an, const uint8_t *pic, size_t pn, bool own)
{
	struct src s;
	struct src_mem m;
	struct arena a;
	struct diag d;
	int r = 0;

	diag_init(&d);
	src_init_mem(&s, &m, arena, an);
	if (arena_open(&s, &a, &d) != RC_OK) {
		diag_free(&d);
		return 0;
	}
	for (uint32_t i = 0; i < a.n_dict && i < 64 && !r; i++) {
		struct texture_image *img;
		struct buf b;

		if (arena_row(&a, i)->type_id != RW_T_TEXTURE)
			continue;
		r = write_one(&s, &a, i, TEXMOD_DDS, pic, pn, diag_count(&d));
		if (!r && !own)
			r = write_one(&s, &a, i, TEXMOD_PNG, pic, pn, diag_count(&d));
		if (r || !own || texture_load(&s, &a, i, &img, NULL) != RC_OK)
			continue;
		buf_init(&b); /* its own DDS back */
		if (texture_dds(img, &b) == RC_OK && !b.oom)
			r = write_one(&s, &a, i, TEXMOD_DDS, b.data, b.len, diag_count(&d));
		buf_free(&b);
		texture_image_free(img);
	}
	arena_free(&a);
	diag_free(&d);
	return r;
}

static struct buf ps3_arena, x360_arena, fixed_dds;

static void make_fixed(void)
{
	static bool done;
	struct texture_image *img;
	struct src s;
	struct src_mem m;
	struct arena a;

	if (done)
		return;
	done = true;
	buf_init(&ps3_arena);
	buf_init(&x360_arena);
	buf_init(&fixed_dds);
	gen_psg_textures(&(struct gen_tex_opts){.specs = ps3_specs, .n_specs = 4}, &ps3_arena, NULL,
			 NULL);
	gen_x360_textures(&(struct gen_x360_opts){.specs = x360_specs, .n_specs = 3}, &x360_arena,
			  NULL, NULL);
	/* a DDS of another shape: texture 0 of the Xbox 360 arena, DXT1 16x16 with 5 levels */
	src_init_mem(&s, &m, ps3_arena.data, ps3_arena.len);
	if (arena_open(&s, &a, NULL) == RC_OK) {
		if (texture_load(&s, &a, 3, &img, NULL) == RC_OK) { /* the A8R8G8B8 8x8 */
			texture_dds(img, &fixed_dds);
			texture_image_free(img);
		}
		arena_free(&a);
	}
}

int fuzz_one_texmod(const uint8_t *p, size_t n)
{
	make_fixed();
	if (n >= 4 && !memcmp(p, "\x89RW4", 4))
		return into_arena(p, n, fixed_dds.data, fixed_dds.len, true);
	if (into_arena(ps3_arena.data, ps3_arena.len, p, n, false))
		return -1;
	return into_arena(x360_arena.data, x360_arena.len, p, n, false);
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	if (fuzz_one_texmod(p, n))
		abort();
	return 0;
}
#endif
