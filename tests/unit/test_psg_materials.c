/*
 * A model's materials and their resolution to textures (src/tree/psg/psg_materials.c),
 * over builder-made arenas: labels, own-TOC and companion GUIDs, the first of equal GUIDs,
 * what material.txt says when nothing resolves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/base/source.h"
#include "tree/psg/psg_materials.h"

#define FX_EXTRA	 struct psg_materials *ms;
#define FX_EXTRA_FREE(f) psg_materials_free((f)->ms)
#include "arena_fixture.h"

#define G_SELF	0x5D2A6B1C00170001ull /* the model's own TOC entry 0 */
#define G_DIFF	0x2C7F381800171902ull
#define G_SPEC	0x2C7F381800171903ull
#define G_STRAY 0x0BADC0DE00000001ull

/*
 * 0 VersionData, 1 RenderMaterialData (two materials), 2 TableOfContents naming material 0.
 * Material 0: Name -> own TOC entry 0, diffuse and specular in the stream form real models use
 * (a stream name and a GUID), a constants channel, and a second "diffuse" whose GUID nothing
 * holds. Material 1: a "Name" stream, a stray GUID and two flag-0x2 constants.
 */
static void fx_build(struct fx *f)
{
	struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, 0x12345678u);
	const struct psgo_channel ch[] = {
	    {.shader_input = "Name", .image_channel = 0xFFFF, .guid = G_SELF},
	    {.shader_input = "diffuse",
	     .image_channel = 0xFFFF,
	     .guid = G_DIFF,
	     .stream_name = "sky_night_0x2c70170a00450001"},
	    {.shader_input = "specular",
	     .image_channel = 0xFFFF,
	     .guid = G_SPEC,
	     .stream_name = "moon_gradient_0x00007d3e03e3870a"},
	    {.shader_input = "tint",
	     .image_channel = 0xFFFF,
	     .is_constants = true,
	     .constants = {1.0f, 0.5f, 0.25f, 1.0f}},
	    {.shader_input = "diffuse", .image_channel = 0xFFFF, .guid = G_STRAY},
	    {.shader_input = "Name", .image_channel = 0xFFFF, .stream_name = "deck grip/top"},
	    {.shader_input = "detail", .image_channel = 0xFFFF, .guid = G_STRAY + 1},
	    /* flag 0x2: constants, though (1, 0, 0, 0) reads as a GUID with no stream */
	    {.shader_input = "detailNormalUVScale",
	     .flags = 0x2,
	     .image_channel = 0xFFFF,
	     .is_constants = true,
	     .constants = {1.0f, 0.0f, 0.0f, 0.0f}},
	    {.shader_input = "macroOverlayOpacity",
	     .flags = 0x2,
	     .image_channel = 0xFFFF,
	     .is_constants = true,
	     .constants = {12.0f, 0.3f, 0.0f, 0.0f}},
	};
	const struct psgo_material mat[2] = {{.ch = ch, .n_ch = 5}, {.ch = ch + 5, .n_ch = 4}};
	uint32_t sub;
	struct buf out;

	assert_non_null(b);
	assert_int_equal(psgo_version(b, PSGO_NEW, true), 0);
	assert_int_equal(psgo_material(b, PSGO_NEW, mat, 2), 1);
	sub = psgb_add_subref(b, 1, psgo_material_offset(0));
	const struct psgo_toc_entry toc[1] = {
	    {.name = "grip",
	     .pad = 0xFEFFFFFFu,
	     .guid = G_SELF,
	     .type = 0x00EB0066u,
	     .object = sub},
	};
	assert_int_equal(psgo_toc(b, PSGO_NEW, toc, 1), 2);
	buf_init(&out);
	assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_OK);
	fx_open(f, &out);
	assert_int_equal(psg_materials_load(&f->s, &f->a, "deck.psg", &f->ms), RC_OK);
}

static char *text_of(const struct psg_materials *ms, uint32_t i)
{
	struct buf b;
	size_t n;

	buf_init(&b);
	psg_material_text(ms, i, &b);
	buf_putc(&b, 0);
	assert_false(b.oom);
	return (char *)buf_steal(&b, &n);
}

static void resolve(struct psg_materials *ms, const struct psg_tex_ref *refs, size_t n, bool own)
{
	struct psg_textures_index ix = {calloc(n ? n : 1, sizeof *ix.v), n};

	assert_non_null(ix.v);
	memcpy(ix.v, refs, n * sizeof *refs);
	assert_int_equal(psg_materials_resolve(ms, &ix, own), RC_OK);
	free(ix.v);
}

/* Every material of the RenderMaterialData, its channels and kinds, the companion's name. */
static void test_load(void **state)
{
	struct fx f;

	(void)state;
	fx_build(&f);
	assert_int_equal(f.ms->n, 2);
	assert_string_equal(f.ms->companion, "deck_Textures.psg");
	assert_int_equal(f.ms->v[0].n_ch, 5);
	assert_int_equal(f.ms->v[0].ch[1].kind, SKATE_UNION_STREAM);
	assert_true(f.ms->v[0].ch[1].has_guid);
	assert_int_equal(f.ms->v[0].ch[1].guid, G_DIFF);
	assert_string_equal(f.ms->v[0].ch[1].stream, "sky_night_0x2c70170a00450001");
	assert_int_equal(f.ms->v[0].ch[3].kind, SKATE_UNION_CONSTANTS);
	assert_int_equal(f.ms->v[0].ch[4].kind, SKATE_UNION_GUID);
	assert_int_equal(f.ms->v[1].n_ch, 4);
	assert_int_equal(f.ms->v[1].ch[2].kind, SKATE_UNION_CONSTANTS); /* flag 0x2 */
	assert_false(f.ms->v[1].ch[2].has_guid);
	assert_false(f.ms->v[1].ch[0].has_guid); /* a stream with GUID 0 */
	assert_string_equal(f.ms->v[0].ch[1].file, "diffuse");
	/* material 0 has no string name until its Name GUID resolves; material 1's is a stream */
	assert_string_equal(f.ms->v[0].label, "material");
	assert_string_equal(f.ms->v[1].label, "deck_grip_top");
	assert_int_equal(f.ms->v[1].ch[0].kind, SKATE_UNION_STREAM);
	fx_free(&f);
}

/* The Name GUID names the model's own TOC entry: it labels the material and is no texture. */
static void test_own_toc(void **state)
{
	const struct psg_tex_ref own[] = {{G_SELF, "grip", 0, 0}};
	uint32_t n_tex, n_ok, n_else;
	struct fx f;
	char *t;

	(void)state;
	fx_build(&f);
	resolve(f.ms, own, 1, true);
	assert_string_equal(f.ms->v[0].label, "grip");
	assert_int_equal(f.ms->v[0].ch[0].own_entry, 0);
	psg_materials_counts(f.ms, &n_tex, &n_ok, &n_else);
	assert_int_equal(n_tex, 4); /* diffuse, specular, the stray diffuse, detail */
	assert_int_equal(n_ok, 0);
	t = text_of(f.ms, 0);
	assert_non_null(strstr(t, "0\tName\tguid\t-\t0x5D2A6B1C00170001\ttoc entry 0 grip\n"));
	assert_non_null(strstr(t, "companion: deck_Textures.psg (not found)\n"));
	assert_non_null(strstr(t, "1\tdiffuse\tstream\tsky_night_0x2c70170a00450001\t"
				  "0x2C7F381800171902\t- (no companion)\n"));
	assert_non_null(strstr(t, "3\ttint\tconstants\t1 0.5 0.25 1\t-\t-\n"));
	free(t);
	t = text_of(f.ms, 1);
	assert_non_null(strstr(t, "2\tdetailNormalUVScale\tconstants\t1 0 0 0\t-\t-\n"));
	assert_non_null(strstr(t, "3\tmacroOverlayOpacity\tconstants\t12 0.3 0 0\t-\t-\n"));
	free(t);
	fx_free(&f);
}

/* Companion GUIDs: unsorted index, the first of equal GUIDs wins, strays stay unresolved,
 * and a channel the own TOC already named is left alone. */
static void test_companion(void **state)
{
	const struct psg_tex_ref own[] = {{G_SELF, "", 0, 0}};
	const struct psg_tex_ref comp[] = {
	    {G_SPEC, "spec_b", 70, 7}, {G_DIFF, "diff_a", 20, 2}, {G_SPEC, "spec_a", 30, 3},
	    {G_SELF, "not_me", 90, 9}, {1, "other", 10, 1},
	};
	uint32_t n_tex, n_ok, n_else;
	struct fx f;
	char *t;

	(void)state;
	fx_build(&f);
	resolve(f.ms, own, 1, true);
	f.ms->where = PSG_COMP_FOLDER;
	resolve(f.ms, comp, sizeof comp / sizeof *comp, false);
	assert_string_equal(f.ms->v[0].ch[1].texture, "diff_a");
	assert_string_equal(f.ms->v[0].ch[2].texture, "spec_a");
	assert_int_equal(f.ms->v[0].ch[2].tex_row, 30);
	assert_int_equal(f.ms->v[0].ch[1].tex_row, 20);
	assert_null(f.ms->v[0].ch[0].texture);
	assert_null(f.ms->v[0].ch[4].texture);
	assert_string_equal(f.ms->v[0].label, "material"); /* the own entry has no name */
	psg_materials_counts(f.ms, &n_tex, &n_ok, &n_else);
	assert_int_equal(n_tex, 4);
	assert_int_equal(n_ok, 2);
	t = text_of(f.ms, 0);
	assert_non_null(strstr(t, "0\tName\tguid\t-\t0x5D2A6B1C00170001\ttoc entry 0\n"));
	assert_non_null(strstr(t, "2\tspecular\tstream\tmoon_gradient_0x00007d3e03e3870a\t"
				  "0x2C7F381800171903\ttexture spec_a\n"));
	assert_non_null(
	    strstr(t, "4\tdiffuse\tguid\t-\t0x0BADC0DE00000001\t- (not in the companion)\n"));
	assert_non_null(strstr(t, "channel\tinput\tkind\tvalue\tguid\tresolves to\n"));
	free(t);
	t = text_of(f.ms, 1);
	assert_non_null(strstr(t, "0\tName\tstream\tdeck grip/top\t-\t-\n"));
	free(t);
	fx_free(&f);
}

/* A model without an extension still gets a companion name; a broken one says so. */
static void test_names(void **state)
{
	struct fx f;
	struct psg_materials *ms;
	char *t;

	(void)state;
	fx_build(&f);
	assert_int_equal(psg_materials_load(&f.s, &f.a, "deck", &ms), RC_OK);
	assert_string_equal(ms->companion, "deck_Textures");
	ms->where = PSG_COMP_BROKEN;
	t = text_of(ms, 0);
	assert_non_null(strstr(t, "found, but it cannot be opened as a texture arena"));
	assert_non_null(strstr(t, "- (companion unreadable)"));
	free(t);
	psg_materials_free(ms);
	fx_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_own_toc),
	    cmocka_unit_test(test_companion),
	    cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
