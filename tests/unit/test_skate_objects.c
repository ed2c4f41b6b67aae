/* Pegasus object decoders and arena text renderers over builder-made and hostile arenas. */
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
#include "psgfs/base/bytes.h"
#include "psgfs/base/diag.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_objects.h"
#include "psgfs/gen/prng.h"
#include "psgfs/formats/skate_objects.h"
#include "tree/psg/view_psg.h"
#include "psgfs/base/source.h"

#include "arena_fixture.h"

/* A built arena kept open for one test. */
/*
 * The small model arena used by most tests:
 * 0 VersionData, 1 RenderMaterialData, 2 InstanceData, 3 BaseResource, 4 VertexBuffer,
 * 5 RenderModelData (placeholder bytes), 6 TableOfContents; subrefs (1,0x14), (2,0x20).
 */
static void build_small(struct fx *f)
{
	struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, 0x12345678u);
	static const uint8_t verts[32] = {1, 2, 3};
	static const uint8_t model[64];
	uint32_t sub_mat, sub_inst, br;
	struct buf out;

	assert_non_null(b);
	assert_int_equal(psgo_version(b, PSGO_NEW, true), 0);
	assert_int_equal(psgb_reserve(b), 1);
	assert_int_equal(psgb_reserve(b), 2);
	br = psgb_add_base_resource(b, 0x10, verts, sizeof verts);
	assert_int_equal(br, 3);
	assert_int_equal(psgo_vertex_buffer(b, PSGO_NEW, br, sizeof verts), 4);
	assert_int_equal(psgb_add(b, RW_T_RENDERMODEL, 0x10, model, sizeof model), 5);
	assert_int_equal(psgb_reserve(b), 6);
	sub_mat = psgb_add_subref(b, 1, psgo_material_offset(0));
	sub_inst = psgb_add_subref(b, 2, psgo_instance_offset(0));
	assert_int_equal(sub_mat, 0x00800000u);
	assert_int_equal(sub_inst, 0x00800001u);

	const struct psgo_channel ch[2] = {
	    {.shader_input = "diffuse",
	     .image_channel = 0xFFFF,
	     .guid = 0x1122334455667788ull,
	     .stream_name = "sky_d",
	     .stream = 0},
	    {.shader_input = "specular",
	     .flags = 3,
	     .image_channel = 0xFFFF,
	     .is_constants = true,
	     .constants = {1.0f, 0.5f, 0.0f, 1.0f}},
	};
	const struct psgo_material mat = {.flags = 0, .ch = ch, .n_ch = 2};
	assert_int_equal(psgo_material(b, 1, &mat, 1), 1);

	struct psgo_instance in = {
	    .matrix = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
	    .bbox = {{-1, -2, -3, 0}, {1, 2, 3, 0}},
	    .guid = 0xAABBCCDD00112233ull,
	    .guid_local = 0x42,
	    .rmodel = 5,
	    .name = "sky",
	    .description = "the sky",
	    .component = "comp",
	    .category = "sky",
	};
	assert_int_equal(psgo_instance(b, 2, RW_T_INSTANCE, &in, 1), 2);

	const struct psgo_toc_entry toc[2] = {
	    {.name = "0x2c7f381800171902.Texture",
	     .pad = 0xFEFFFFFFu,
	     .guid = 0x2C7F381800171902ull,
	     .type = RW_T_TEXTURE_HASH,
	     .object = 4},
	    {.name = NULL,
	     .pad = 0x9B0F1678u,
	     .guid = 0xAABBCCDD00112233ull,
	     .type = 0x00EB0069u,
	     .object = sub_inst},
	};
	assert_int_equal(psgo_toc(b, 6, toc, 2), 6);

	buf_init(&out);
	assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_OK);
	fx_open(f, &out);
	assert_int_equal(f->a.n_dict, 7);
}

static char *render_obj(struct fx *f, uint32_t idx, enum rc want, struct diag *d)
{
	struct buf b;
	size_t n;
	char *s;

	buf_init(&b);
	assert_int_equal(view_object_text(&f->s, &f->a, idx, &b, d), want);
	buf_putc(&b, 0);
	s = (char *)buf_steal(&b, &n);
	assert_non_null(s);
	return s;
}

static void assert_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line)) != NULL) {
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == 0))
			return;
		p++;
	}
	fail_msg("line not found: [%s] in:\n%s", line, text);
}

static void test_decode_small(void **state)
{
	struct fx f;
	uint8_t *p;
	size_t len;
	struct diag d;

	(void)state;
	build_small(&f);
	diag_init(&d);

	struct skate_version v;
	assert_int_equal(arena_read_object(&f.s, &f.a, 0, &p, &len), RC_OK);
	assert_int_equal(skate_version_decode(&f.a, 0, p, len, &v, &d), RC_OK);
	assert_int_equal(v.version, 25);
	assert_int_equal(v.revision, 13);
	assert_int_equal(v.n_extra, 8);
	free(p);

	struct skate_rmd m;
	assert_int_equal(arena_read_object(&f.s, &f.a, 1, &p, &len), RC_OK);
	assert_int_equal(skate_rmd_decode(&f.a, 1, p, len, &m, &d), RC_OK);
	assert_int_equal(m.n_materials, 1);
	assert_int_equal(m.n_channels, 2);
	assert_true(m.materials[0].channels_ok);
	assert_int_equal(m.materials[0].first_channel, 0);
	assert_int_equal(m.materials[0].num_channels, 2);
	assert_int_equal(m.channels[0].kind, SKATE_UNION_STREAM);
	assert_true(m.channels[0].has_guid); /* the stream form carries its GUID too */
	assert_int_equal(m.channels[0].guid, 0x1122334455667788ull);
	assert_int_equal(m.channels[0].stream_name.len, 5);
	assert_memory_equal(m.channels[0].stream_name.p, "sky_d", 5);
	assert_int_equal(m.channels[0].stream.res, RC_NOENT);
	assert_memory_equal(m.channels[0].shader_input.p, "diffuse", 7);
	assert_int_equal(m.channels[1].kind, SKATE_UNION_CONSTANTS);
	assert_false(m.channels[1].has_guid);
	assert_int_equal(m.channels[1].stream.res, RC_NOENT);
	assert_true(m.channels[1].constants[1] == 0.5f);
	assert_int_equal(m.channels[1].flags, 3);
	assert_int_equal(m.channels[1].pad[0], 0xDEADBEEFu);
	assert_int_equal(m.channels[1].pad[1], 0xDEADC0DEu);
	assert_int_equal(m.n_strings, 3); /* diffuse, sky_d, specular */
	skate_rmd_free(&m);
	free(p);

	struct skate_instance_data in;
	assert_int_equal(arena_read_object(&f.s, &f.a, 2, &p, &len), RC_OK);
	assert_int_equal(skate_instance_decode(&f.a, 2, p, len, &in, &d), RC_OK);
	assert_int_equal(in.n_inst, 1);
	assert_int_equal(in.stride, 0x9C);
	assert_int_equal(in.inst[0].rmodel.res, RC_OK);
	assert_int_equal(in.inst[0].rmodel.obj, 5);
	assert_int_equal(in.inst[0].cmodel.res, RC_NOENT);
	assert_int_equal(in.inst[0].guid, 0xAABBCCDD00112233ull);
	assert_true(in.inst[0].aabb_min[2] == -3.0f);
	assert_memory_equal(in.inst[0].description.p, "the sky", 8);
	assert_ptr_equal(in.inst[0].name.p, in.inst[0].category.p); /* pooled */
	assert_int_equal(in.n_strings, 3);			    /* sky, the sky, comp */
	skate_instance_free(&in);
	free(p);

	struct skate_toc t;
	assert_int_equal(arena_read_object(&f.s, &f.a, 6, &p, &len), RC_OK);
	assert_int_equal(skate_toc_decode(&f.a, 6, p, len, &t, &d), RC_OK);
	assert_int_equal(t.n_entries, 2);
	assert_int_equal(t.entries[0].object.obj, 4);
	assert_false(t.entries[0].object.sub);
	assert_null(t.entries[1].name.p);
	assert_false(t.entries[1].name.bad);
	assert_true(t.entries[1].object.sub);
	assert_int_equal(t.entries[1].object.obj, 2);
	assert_int_equal(t.entries[1].object.off, 0x20);
	assert_int_equal(t.n_map, 2);
	/* m_Type says what the entry names: this one claims a Texture but points at a
	 * VertexBuffer (it still resolves, for the views) */
	assert_true(t.entries[0].object.res == RC_OK && !t.entries[0].object.type_ok);
	assert_true(t.entries[1].object.type_ok);
	skate_toc_free(&t);
	free(p);

	assert_int_equal(diag_count(&d), 1);
	assert_string_equal(d.msg[0], "object 6 (TableOfContents): entry 0 m_pObject -> 4 is "
				      "VertexBuffer, expected Texture");

	struct skate_toc_item *items;
	size_t n;
	assert_int_equal(skate_toc_entries(&f.s, &f.a, &items, &n, &d), RC_OK);
	assert_int_equal(n, 2);
	assert_string_equal(items[0].name, "0x2c7f381800171902.Texture");
	assert_int_equal(items[0].object, 4);
	assert_int_equal(items[0].type, RW_T_TEXTURE_HASH);
	assert_int_equal(items[0].toc, 6);
	assert_null(items[1].name);
	assert_int_equal(items[1].object, 2);
	assert_int_equal(items[1].offset, 0x20);
	skate_toc_items_free(items, n);

	diag_free(&d);
	fx_free(&f);
}

static void test_text_small(void **state)
{
	struct fx f;
	char *t;
	char line[512];

	(void)state;
	build_small(&f);

	t = render_obj(&f, 0, RC_OK, NULL);
	snprintf(line, sizeof line,
		 "object: 0000.VersionData\ntype_id: 0x00EB0008\ntype_index: %u\n"
		 "offset: 0x%08llX\nsize: 16\nalign: 0x10\nm_uiVersion: 25\nm_uiRevision: 13\n"
		 "extra_bytes: 8 (00 00 00 00 00 00 00 00)\n",
		 arena_row(&f.a, 0)->type_index, (unsigned long long)arena_row(&f.a, 0)->start);
	assert_string_equal(t, line);
	free(t);

	t = render_obj(&f, 1, RC_OK, NULL);
	assert_has_line(t, "object: 0001.RenderMaterialData");
	assert_has_line(t, "m_uiNumMaterials: 1");
	assert_has_line(t, "material 0 at 0x00000014:");
	assert_has_line(t, "  m_pChannels: 0x00000020 (channels 0..1)");
	assert_has_line(t, "channel 0 at 0x00000020:");
	assert_has_line(t, "  m_ShaderInput: 0x00000060 \"diffuse\"");
	assert_has_line(t, "  union: stream (m_StreamName names a string)");
	assert_has_line(t, "  as m_ShaderConstants: 1.2795344e-28 1.5837566e+13 1.45735e-43 0");
	assert_has_line(t, "  as guid/stream: m_uiGuid 0x3F8000003F000000 m_StreamName 0x00000000 "
			   "m_pStream 0x3F800000");
	assert_has_line(t, "  m_uiGuid: 0x1122334455667788");
	assert_has_line(t, "  m_StreamName: 0x00000068 \"sky_d\"");
	assert_has_line(t, "  m_pStream: 0x00000000 (null)");
	assert_has_line(t, "  m_uiImageChannel: 0xFFFF");
	assert_has_line(t, "  m_uiPad: 0xDEADBEEF 0xDEADC0DE");
	assert_has_line(t, "  union: constants");
	assert_has_line(t, "  m_ShaderConstants: 1 0.5 0 1");
	assert_has_line(t, "string list (3):");
	assert_has_line(t, "  2: 0x0000006E \"specular\"");
	assert_null(strstr(t, "problems"));
	free(t);

	t = render_obj(&f, 2, RC_OK, NULL);
	assert_has_line(t, "object: 0002.InstanceData");
	assert_has_line(t, "m_TypeID: 0x00EB000D");
	assert_has_line(t, "instance 0 at 0x00000020:");
	assert_has_line(t, "  m_TransformMatrix[3]: 0 0 0 1");
	assert_has_line(t, "  m_BBox.min: -1 -2 -3 0");
	assert_has_line(t, "  m_uiGuid: 0xAABBCCDD00112233");
	assert_has_line(t, "  m_uiGuidLocal: 0x0000000000000042");
	assert_has_line(t, "  m_pRModel: 0x00000005 -> 0005.RenderModelData");
	assert_has_line(t, "  m_pCModel: 0x00000000 (null)");
	assert_has_line(t, "  m_Name: 0x000000BC \"sky\"");
	assert_has_line(t, "  m_Description: 0x000000C0 \"the sky\"");
	free(t);

	t = render_obj(&f, 6, RC_OK, NULL);
	assert_has_line(t, "object: 0006.TableOfContents");
	assert_has_line(t, "m_uiItemsCount: 2");
	assert_has_line(t, "  m_Name: 0x00000044 \"0x2c7f381800171902.Texture\"");
	assert_has_line(t, "  m_Type: 0xAC462E4A (Texture)");
	assert_has_line(t, "  m_pObject: 0x00000004 -> 0004.VertexBuffer");
	assert_has_line(t, "  m_Name: 0x00000000 (none)");
	assert_has_line(t, "  m_pObject: 0x00800001 -> 0002.InstanceData+0x20");
	assert_has_line(t, "  padding: 0x9B0F1678");
	free(t);

	t = render_obj(&f, 3, RC_OK, NULL);
	assert_has_line(t, "object: 0003.BaseResource");
	assert_has_line(t, "region: 5 GRAPHICS_LOCAL");
	assert_has_line(t, "region_offset: 0x00000000");
	assert_has_line(t, "  0004.VertexBuffer m_buffer");
	free(t);

	/* Mesh objects have their rows in the same table (view_psg_object.c). */
	t = render_obj(&f, 4, RC_OK, NULL);
	assert_has_line(t, "object: 0004.VertexBuffer");
	assert_has_line(t, "m_buffer: 0x00000003 -> 0003.BaseResource");
	free(t);
	t = render_obj(&f, 5, RC_OK, NULL); /* zero bytes: a model of nothing */
	assert_has_line(t, "object: 0005.RenderModelData");
	assert_has_line(t, "m_iNumMeshes: 0");
	free(t);
	t = render_obj(&f, 7, RC_BOUNDS, NULL);
	free(t);
	fx_free(&f);
}

/* A table view, whole: every item, kept (or only counted, as b is set up). */
static enum rc render_rows(struct rows t, struct buf *b)
{
	struct emit e;
	enum rc r;

	emit_init_window(&e, 0, SIZE_MAX);
	r = view_rows_render(&t, 0, &e);
	buf_put(b, e.b.data, e.b.len);
	emit_free(&e);
	return r;
}

static enum rc render_toc(const struct src *s, const struct arena *a, struct buf *b)
{
	struct view_toc *v;
	struct emit e;
	enum rc r = view_toc_load(s, a, &v);

	if (r != RC_OK)
		return r;
	emit_init_window(&e, 0, SIZE_MAX);
	r = view_toc_render(a, v, 0, &e);
	buf_put(b, e.b.data, e.b.len);
	emit_free(&e);
	view_toc_free(v);
	return r;
}

static char *render(struct fx *f, int which, bool count, size_t *len)
{
	struct buf b;
	enum rc r = RC_OK;
	size_t n;

	if (count)
		buf_init_count(&b);
	else
		buf_init(&b);
	switch (which) {
	case 0:
		r = view_header_txt(&f->a, &b);
		break;
	case 1:
	case 2:
	case 3:
		r = render_rows(view_arena_rows(&f->a, which == 1   ? VA_DICT
						       : which == 2 ? VA_TYPES
								    : VA_SUBREFS),
				&b);
		break;
	case 4:
		r = view_external_arenas_tsv(&f->a, &b);
		break;
	case 5:
		r = render_toc(&f->s, &f->a, &b);
		break;
	case 6:
		r = view_info_summary(&f->a, &b);
		break;
	default: {
		uint32_t idx = (uint32_t)(which - 7);

		r = view_object_text(&f->s, &f->a, idx, &b, NULL);
		if (r == RC_UNSUPPORTED || r == RC_CORRUPT)
			r = RC_OK;
		break;
	}
	}
	assert_int_equal(r, RC_OK);
	*len = b.len;
	if (count) {
		buf_free(&b);
		return NULL;
	}
	buf_putc(&b, 0);
	return (char *)buf_steal(&b, &n);
}

/* Every renderer: two runs identical, counting mode gives the same length. */
static void check_deterministic(struct fx *f)
{
	for (int w = 0; w < 7 + (int)f->a.n_dict; w++) {
		size_t l1, l2, lc;
		char *a = render(f, w, false, &l1);
		char *b = render(f, w, false, &l2);

		render(f, w, true, &lc);
		assert_int_equal(l1, l2);
		assert_int_equal(l1, lc);
		if (l1)
			assert_memory_equal(a, b, l1);
		free(a);
		free(b);
	}
}

static void test_tables_small(void **state)
{
	struct fx f;
	size_t n;
	char *t;
	char line[512];

	(void)state;
	build_small(&f);

	t = render(&f, 5, false, &n);
	assert_string_equal(t, "index\tname\tguid\ttype\ttype_name\ttarget\n"
			       "0\t0x2c7f381800171902.Texture\t0x2C7F381800171902\t0xAC462E4A\t"
			       "Texture\t-> 0004.VertexBuffer\n"
			       "1\t\t0xAABBCCDD00112233\t0x00EB0069\tInstanceSubref\t"
			       "-> 0002.InstanceData+0x20\n");
	free(t);

	t = render(&f, 3, false, &n);
	assert_string_equal(t,
			    "index\tobject\tobject_type\toffset\ttarget\n"
			    "0\t1\tRenderMaterialData\t0x00000014\t0001.RenderMaterialData+0x14\n"
			    "1\t2\tInstanceData\t0x00000020\t0002.InstanceData+0x20\n");
	free(t);

	t = render(&f, 1, false, &n);
	assert_true(
	    strncmp(t, "index\ttype_id\ttype_name\ttype_index\toffset\tsize\talign\t", 50) == 0);
	snprintf(line, sizeof line, "3\t0x00010034\tBaseResource\t%u\t0x%08llX\t32\t16\t0x00000000",
		 arena_row(&f.a, 3)->type_index, (unsigned long long)f.a.h.rd[0].size);
	if (!strstr(t, line))
		fail_msg("%s\nnot in\n%s", line, t);
	free(t);

	t = render(&f, 2, false, &n);
	assert_true(strncmp(t, "index\ttype_id\ttype_name\n0\t0x00000000\t", 37) == 0);
	assert_has_line(t, "5\t0x00010034\tBaseResource");
	free(t);

	t = render(&f, 4, false, &n);
	assert_string_equal(t, "index\trecord\tpointer\tmeaning\n"
			       "0\t0x12345678\t0x00000000\tthis arena\n"
			       "1\t0xFFB00000\t0x00000000\tnull arena\n"
			       "2\t0x12345678\t0x00000000\tthis arena\n");
	free(t);

	t = render(&f, 0, false, &n);
	assert_has_line(t, "magic: 89 52 57 34 70 73 33 00 0D 0A 1A 0A");
	assert_has_line(t, "platform: ps3");
	assert_has_line(t, "is_big_endian: 1");
	assert_has_line(t, "major_version: 454");
	assert_has_line(t, "id: 0x12345678");
	assert_has_line(t, "num_used: 7");
	assert_has_line(t, "sections: 0x000000C0 (192)");
	assert_has_line(t,
			"resource_descriptor[5] GRAPHICS_LOCAL: size 0x00000020 (32) align 0x10");
	snprintf(line, sizeof line, "resources_used[0] MAINMEMORY: size 0x%08X (%u) align 0x%X",
		 f.a.h.ru[0].size, f.a.h.ru[0].size, f.a.h.ru[0].align);
	assert_has_line(t, line);
	assert_has_line(t, "target_resource[3] DISPOSABLE_UNINITIALIZED: 0x00000000");
	assert_has_line(t, "arena_group: 0x00000000");
	snprintf(line, sizeof line, "region_base[5] GRAPHICS_LOCAL: 0x%08X (%u)", f.a.h.rd[0].size,
		 f.a.h.rd[0].size);
	assert_has_line(t, line);
	snprintf(line, sizeof line, "descriptor_size_sum: 0x%08zX (%zu) = file size", f.len, f.len);
	assert_has_line(t, line);
	assert_has_line(t, "  types: 0x0000001C (absolute 0x000000DC)");
	assert_has_line(t, "  num_entries: 64");
	assert_has_line(t, "  num_used: 2");
	free(t);

	t = render(&f, 6, false, &n);
	assert_has_line(t, "platform: ps3 (big-endian)");
	assert_has_line(t, "version: 454.000 build 0");
	assert_has_line(t, "objects: 7");
	assert_has_line(t, "  BaseResource: 1");
	assert_has_line(t, "  TableOfContents: 1");
	assert_has_line(t, "subreferences: 2 (0 invalid)");
	assert_has_line(t, "types: 64");
	free(t);

	check_deterministic(&f);
	fx_free(&f);
}

/* ---- hostile objects ---- */

static void put32(uint8_t *p, uint32_t off, uint32_t v)
{
	p[off] = (uint8_t)(v >> 24);
	p[off + 1] = (uint8_t)(v >> 16);
	p[off + 2] = (uint8_t)(v >> 8);
	p[off + 3] = (uint8_t)v;
}

/*
 * 0 VersionData (4 bytes), 1 TOC A, 2 TOC B, 3 TOC (4 bytes), 4 RMD, 5 Instance,
 * 6 RMD (8 bytes), 7 Instance (12 bytes); subrefs (4, 0x14), (5, 0x1000 -> invalid).
 */
static void build_hostile(struct fx *f)
{
	struct psg_builder *b = psgb_new(PSGB_REG_MODEL64, 1);
	uint8_t toca[0x40] = {0}, tocb[0x60] = {0}, rmd[0x50] = {0}, ins[0xC2] = {0};
	uint8_t small[12] = {0};
	struct buf out;

	/* TOC A: counts of 2^32-1, a name past the object, a dangling object reference. */
	put32(toca, 0, 0xFFFFFFFFu);
	put32(toca, 4, 0x14);
	put32(toca, 12, 0xFFFFFFFFu);
	put32(toca, 16, 0x30);
	put32(toca, 0x14, 0x1000);
	put32(toca, 0x14 + 20, 77);
	/* TOC B: unterminated name, a valid subref, a dangling subref, an unknown kind. */
	put32(tocb, 0, 3);
	put32(tocb, 4, 0x14);
	put32(tocb, 0x14, 0x5C);
	put32(tocb, 0x14 + 20, 0x00800000u);
	put32(tocb, 0x2C + 20, 0x00800063u);
	put32(tocb, 0x44 + 20, 0xC0000001u);
	memcpy(tocb + 0x5C, "abcd", 4);
	/* RMD: channel count 2^32-1, materials outside the channel array, bad strings. */
	put32(rmd, 0, 2);
	put32(rmd, 4, 0xFFFFFFFFu);
	put32(rmd, 8, 0x14);
	put32(rmd, 12, 0x2C);
	put32(rmd, 16, 0xFFFFFF00u);
	put32(rmd, 0x14, 5);
	put32(rmd, 0x14 + 8, 0x2C);
	put32(rmd, 0x20, 1);
	put32(rmd, 0x20 + 8, 0x2D);
	put32(rmd, 0x2C, 0x7FFFFFFFu);
	put32(rmd, 0x2C + 24, 0x4C);
	memcpy(rmd + 0x4C, "zzzz", 4);
	/* Instance: counts of 2^32-1, strings out of range, dangling and mistyped refs. */
	put32(ins, 4, 0xFFFFFFFFu);
	put32(ins, 8, 0xFFFFFFFFu);
	put32(ins, 12, 0x20);
	put32(ins, 16, 0xBC);
	put32(ins, 0x20 + 0x84, 9999);
	put32(ins, 0x20 + 0x88, 1);
	put32(ins, 0x20 + 0x8C, 0xBC);
	put32(ins, 0x20 + 0x90, 0xBF);
	put32(ins, 0x20 + 0x94, 0x10000);
	memcpy(ins + 0xBC, "ab\0cd", 5);
	ins[0xC1] = 'e';

	assert_non_null(b);
	psgb_add(b, RW_T_VERSION, 4, small, 4);
	psgb_add(b, RW_T_TOC, 4, toca, sizeof toca);
	psgb_add(b, RW_T_TOC, 4, tocb, sizeof tocb);
	psgb_add(b, RW_T_TOC, 4, small, 4);
	psgb_add(b, RW_T_RENDERMATERIAL, 4, rmd, sizeof rmd);
	psgb_add(b, RW_T_INSTANCE, 4, ins, sizeof ins);
	psgb_add(b, RW_T_RENDERMATERIAL, 4, small, 8);
	psgb_add(b, RW_T_INSTANCE, 4, small, 12);
	psgb_add_subref(b, 4, 0x14);
	psgb_add_subref(b, 5, 0x1000);
	buf_init(&out);
	assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_OK);
	fx_open(f, &out);
	assert_int_equal(f->a.n_dict, 8);
}

static bool diag_has(const struct diag *d, const char *s)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msg[i], s))
			return true;
	return false;
}

static void test_hostile(void **state)
{
	struct fx f;
	struct diag d;
	char *t;

	(void)state;
	build_hostile(&f);
	diag_init(&d);

	/* Too short to decode: CORRUPT and nothing written. */
	t = render_obj(&f, 0, RC_CORRUPT, &d);
	assert_string_equal(t, "");
	free(t);
	t = render_obj(&f, 3, RC_CORRUPT, &d);
	assert_string_equal(t, "");
	free(t);
	t = render_obj(&f, 6, RC_CORRUPT, &d);
	free(t);
	t = render_obj(&f, 7, RC_CORRUPT, &d);
	free(t);
	assert_true(diag_has(&d, "object 3 (TableOfContents): 4 bytes"));

	diag_free(&d);
	diag_init(&d);
	t = render_obj(&f, 1, RC_OK, &d);
	assert_has_line(t, "m_uiItemsCount: 4294967295");
	assert_has_line(t, "  m_Name: 0x00001000 (bad string offset)");
	assert_has_line(t, "  m_pObject: 0x0000004D (invalid: out of bounds)");
	assert_non_null(strstr(t, "problems ("));
	assert_null(strstr(t, "entry 1 at"));
	free(t);
	assert_true(diag_has(&d, "entries: 4294967295 records"));
	assert_true(diag_has(&d, "entry 0 name offset 0x1000 past the object"));
	assert_true(diag_has(&d, "type map"));

	t = render_obj(&f, 2, RC_OK, &d);
	assert_has_line(t, "  m_Name: 0x0000005C (bad string offset)");
	assert_has_line(t, "  m_pObject: 0x00800000 -> 0004.RenderMaterialData+0x14");
	assert_has_line(t, "  m_pObject: 0x00800063 (invalid: out of bounds)");
	assert_has_line(t, "  m_pObject: 0xC0000001 (invalid: unsupported)");
	free(t);
	assert_true(diag_has(&d, "not NUL-terminated"));

	t = render_obj(&f, 4, RC_OK, &d);
	assert_has_line(t, "m_uiNumChannels: 4294967295");
	assert_has_line(t, "  m_pChannels: 0x0000002C (outside the channel array)");
	assert_has_line(t, "  m_pChannels: 0x0000002D (outside the channel array)");
	assert_has_line(t, "  m_ShaderInput: 0x7FFFFFFF (bad string offset)");
	assert_has_line(t, "  union: constants");
	assert_has_line(t, "string list (0):");
	free(t);
	assert_true(diag_has(&d, "material 0: 5 channels"));
	assert_true(diag_has(&d, "string list offset 0xFFFFFF00 past the object"));

	t = render_obj(&f, 5, RC_OK, &d);
	assert_has_line(t, "m_uiNumInstances: 4294967295");
	assert_has_line(t, "  m_pCModel: 0x0000270F (invalid: out of bounds)");
	assert_has_line(t, "  m_pEmbedded: 0x00000001 -> 0001.TableOfContents");
	assert_has_line(t, "  m_Name: 0x000000BC \"ab\"");
	assert_has_line(t, "  m_Description: 0x000000BF (bad string offset)");
	assert_has_line(t, "  m_Component: 0x00010000 (bad string offset)");
	assert_has_line(t, "  m_Category: 0x00000000 (none)");
	assert_has_line(t, "string list (1):");
	assert_null(strstr(t, "instance 1 at"));
	free(t);
	assert_true(diag_has(&d, "m_pEmbedded -> 1 is TableOfContents, expected EmbeddedData"));
	assert_true(diag_has(&d, "4294967295 instances"));

	/* toc.tsv and the TOC item list survive the broken TOCs. */
	size_t n;
	t = render(&f, 5, false, &n);
	assert_has_line(t, "0\t\t0x0000000000000000\t0x00000000\tNull\tinvalid (0x0000004D)");
	assert_has_line(t, "1\t\t0x0000000000000000\t0x00000000\tNull\t"
			   "-> 0004.RenderMaterialData+0x14");
	assert_has_line(t, "3\t\t0x0000000000000000\t0x00000000\tNull\tinvalid (0xC0000001)");
	free(t);
	struct skate_toc_item *items;
	size_t ni;
	assert_int_equal(skate_toc_entries(&f.s, &f.a, &items, &ni, &d), RC_OK);
	assert_int_equal(ni, 4);
	assert_int_equal(items[0].object, UINT32_MAX);
	assert_null(items[1].name); /* unterminated */
	assert_int_equal(items[1].object, 4);
	assert_int_equal(items[1].offset, 0x14);
	assert_int_equal(items[2].object, UINT32_MAX);
	skate_toc_items_free(items, ni);

	t = render(&f, 3, false, &n);
	assert_has_line(t, "1\t5\tInstanceData\t0x00001000\tinvalid (offset past 194 bytes)");
	free(t);

	check_deterministic(&f);
	diag_free(&d);
	fx_free(&f);
}

/* Decoders follow the arena's endianness flag. */
static void test_little_endian(void **state)
{
	struct arena a;
	struct skate_version v;
	struct skate_toc t;
	uint8_t ver[8] = {25, 0, 0, 0, 13, 0, 0, 0};
	uint8_t toc[0x14 + 24 + 4] = {1, 0, 0, 0, 0x14, 0, 0, 0};

	(void)state;
	memset(&a, 0, sizeof a);
	a.big_endian = false;
	assert_int_equal(skate_version_decode(&a, 0, ver, sizeof ver, &v, NULL), RC_OK);
	assert_int_equal(v.version, 25);
	assert_int_equal(v.revision, 13);
	assert_int_equal(v.n_extra, 0);
	toc[0x14] = 0x2C; /* name at 0x2C: "ab\0" */
	toc[0x14 + 8] = 0x02;
	toc[0x14 + 15] = 0x01;
	toc[0x2C] = 'a';
	toc[0x2D] = 'b';
	assert_int_equal(skate_toc_decode(&a, 0, toc, sizeof toc, &t, NULL), RC_OK);
	assert_int_equal(t.n_entries, 1);
	assert_int_equal(t.entries[0].guid, 0x0100000000000002ull);
	assert_int_equal(t.entries[0].name.len, 2);
	assert_int_equal(t.entries[0].object.res, RC_NOENT);
	skate_toc_free(&t);
}

/* Random byte damage inside the decoded objects never crashes and stays deterministic. */
static void test_mutations(void **state)
{
	struct fx f;
	struct prng r;
	static const uint32_t targets[] = {1, 2, 6};

	(void)state;
	build_small(&f);
	prng_seed(&r, 0x5EED);
	for (int it = 0; it < 1500; it++) {
		uint8_t *copy = malloc(f.len);
		struct src_mem m;
		struct src s;
		struct diag d;

		assert_non_null(copy);
		memcpy(copy, f.file, f.len);
		for (int k = 0; k < 1 + (int)prng_below(&r, 6); k++) {
			uint32_t o = targets[prng_below(&r, 3)];
			uint64_t at =
			    arena_row(&f.a, o)->start + prng_below(&r, arena_row(&f.a, o)->size);
			uint32_t v = (uint32_t)prng_next(&r);

			if (prng_below(&r, 2) &&
			    at + 4 <= arena_row(&f.a, o)->start + arena_row(&f.a, o)->size)
				put32(copy, (uint32_t)at, prng_below(&r, 2) ? v : v & 0xFF);
			else
				copy[at] = (uint8_t)v;
		}
		src_init_mem(&s, &m, copy, f.len);
		diag_init(&d);
		for (uint32_t i = 0; i < f.a.n_dict; i++) {
			struct buf b1, b2;
			enum rc r1, r2;

			buf_init(&b1);
			buf_init_count(&b2);
			r1 = view_object_text(&s, &f.a, i, &b1, &d);
			r2 = view_object_text(&s, &f.a, i, &b2, NULL);
			assert_int_equal(r1, r2);
			assert_int_equal(b1.len, b2.len);
			buf_free(&b1);
			buf_free(&b2);
		}
		{
			struct buf b;
			struct skate_toc_item *items;
			size_t n;

			buf_init(&b);
			assert_int_equal(render_toc(&s, &f.a, &b), RC_OK);
			buf_free(&b);
			assert_int_equal(skate_toc_entries(&s, &f.a, &items, &n, &d), RC_OK);
			skate_toc_items_free(items, n);
		}
		diag_free(&d);
		free(copy);
	}
	fx_free(&f);
}

/* The generator's sky model, plain and shuffled: every decoded view is clean and consistent. */
static void test_sky(void **state)
{
	static const uint64_t seeds[] = {0, 7, 0xC0FFEE};

	(void)state;
	for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
		struct fx f;
		struct buf out;
		struct diag d;
		struct skate_toc_item *items;
		size_t n;
		uint32_t seen = 0;

		buf_init(&out);
		assert_int_equal(gen_psg_sky(seeds[k], &out, NULL), RC_OK);
		fx_open(&f, &out);
		assert_int_equal(f.a.n_dict, 12);
		diag_init(&d);
		for (uint32_t i = 0; i < f.a.n_dict; i++) {
			struct buf b;
			enum rc r;

			buf_init(&b);
			r = view_object_text(&f.s, &f.a, i, &b, &d);
			if (view_object_has_text(arena_row(&f.a, i)->type_id)) {
				assert_int_equal(r, RC_OK);
				seen++;
				buf_putc(&b, 0);
				assert_null(strstr((char *)b.data, "problems"));
				if (arena_row(&f.a, i)->type_id == RW_T_RENDERMATERIAL)
					assert_non_null(
					    strstr((char *)b.data, "\"AttribulatorMaterialName\""));
				if (arena_row(&f.a, i)->type_id == RW_T_RENDERMATERIAL)
					assert_non_null(
					    strstr((char *)b.data, "union: guid (m_StreamName"));
				if (arena_row(&f.a, i)->type_id == RW_T_INSTANCE)
					assert_non_null(
					    strstr((char *)b.data, ".RenderModelData\n"));
			} else {
				assert_int_equal(r, RC_UNSUPPORTED);
			}
			buf_free(&b);
		}
		assert_int_equal(seen, 12); /* every object of the sky has a view */
		assert_int_equal(skate_toc_entries(&f.s, &f.a, &items, &n, &d), RC_OK);
		assert_true(n >= 1);
		for (size_t i = 0; i < n; i++) {
			assert_true(items[i].object < f.a.n_dict);
			if (items[i].type == 0x00EB0066u)
				assert_int_equal(arena_row(&f.a, items[i].object)->type_id,
						 RW_T_RENDERMATERIAL);
			if (items[i].type == 0x00EB0069u)
				assert_int_equal(arena_row(&f.a, items[i].object)->type_id,
						 RW_T_INSTANCE);
		}
		skate_toc_items_free(items, n);
		assert_int_equal(diag_count(&d), 0);
		check_deterministic(&f);
		diag_free(&d);
		fx_free(&f);
	}
}

/* A texture-shaped arena, shuffled: TOC names lead to the right Texture rows. */
static void test_texture_toc(void **state)
{
	static const uint64_t seeds[] = {0, 3, 99};

	(void)state;
	for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
		struct psg_builder *b = psgb_new(PSGB_REG_TEXTURE10, 0x7E570000u);
		static const uint8_t texels[64];
		struct psgo_toc_entry e[2];
		char names[2][40];
		uint32_t tex[2];
		struct skate_toc_item *items;
		size_t n;
		struct buf out;
		struct fx f;
		char *t;

		assert_non_null(b);
		psgb_set_gpu_align(b, 0x80);
		/* Not texture order: the builder leaves a stored 0 (m_buffer of row 0) alone. */
		psgo_version(b, PSGO_NEW, false);
		for (int i = 0; i < 2; i++) {
			uint8_t obj[40] = {0x86, 1, 2, 0};
			uint32_t br = psgb_add_base_resource(b, 0x80, texels, sizeof texels);

			put32(obj, 0x18, br);
			put32(obj, 0x1C, 2);
			tex[i] = psgb_add(b, RW_T_TEXTURE, 4, obj, sizeof obj);
			psgb_ref(b, tex[i], 0x18);
			snprintf(names[i], sizeof names[i], "0x%016llx.Texture",
				 0x2C7F381800171900ull + (unsigned)i);
			e[i] = (struct psgo_toc_entry){.name = names[i],
						       .pad = 0xFEFFFFFFu,
						       .guid = 0x2C7F381800171900ull + (unsigned)i,
						       .type = RW_T_TEXTURE_HASH,
						       .object = tex[i]};
		}
		psgo_toc(b, PSGO_NEW, e, 2);
		buf_init(&out);
		assert_int_equal(psgb_finish(b, seeds[k], &out, NULL), RC_OK);
		fx_open(&f, &out);
		assert_int_equal(skate_toc_entries(&f.s, &f.a, &items, &n, NULL), RC_OK);
		assert_int_equal(n, 2);
		for (size_t i = 0; i < n; i++) {
			assert_string_equal(items[i].name, names[i]);
			assert_int_equal(items[i].name_len, strlen(names[i]));
			assert_true(items[i].object < f.a.n_dict);
			assert_int_equal(arena_row(&f.a, items[i].object)->type_id, RW_T_TEXTURE);
			assert_int_equal(items[i].guid, 0x2C7F381800171900ull + i);
		}
		/* Each base resource names the Texture that uses it. */
		for (uint32_t i = 0; i < f.a.n_dict; i++) {
			if (!rw_is_base_resource(arena_row(&f.a, i)->type_id))
				continue;
			t = render_obj(&f, i, RC_OK, NULL);
			if (!strstr(t, ".Texture m_buffer\n")) {
				size_t dn;
				char *dt = render(&f, 1, false, &dn);

				fail_msg("seed %llu\n%s\n%s", (unsigned long long)seeds[k], t, dt);
			}
			assert_has_line(t, "region: 5 GRAPHICS_LOCAL");
			free(t);
		}
		skate_toc_items_free(items, n);
		check_deterministic(&f);
		fx_free(&f);
	}
}

/* A Texture at row 0: the TOC entry naming it stores 0, which must not read as null. */
static void test_toc_row0(void **state)
{
	struct psg_builder *b = psgb_new(PSGB_REG_TEXTURE10, 0x7E570001u);
	static const uint8_t texels[64];
	uint8_t obj[40] = {0x86, 1, 2, 0};
	struct skate_toc_item *items;
	struct psgo_toc_entry e;
	uint32_t ver, br, tex, toc;
	size_t n;
	struct buf out;
	struct fx f;
	struct diag d;

	(void)state;
	assert_non_null(b);
	psgb_set_gpu_align(b, 0x80);
	ver = psgo_version(b, PSGO_NEW, false);
	br = psgb_add_base_resource(b, 0x80, texels, sizeof texels);
	put32(obj, 0x18, br);
	put32(obj, 0x1C, 2);
	tex = psgb_add(b, RW_T_TEXTURE, 4, obj, sizeof obj);
	psgb_ref(b, tex, 0x18);
	e = (struct psgo_toc_entry){.name = "0x2c7f381800171902.Texture",
				    .pad = 0xFEFFFFFFu,
				    .guid = 0x2C7F381800171902ull,
				    .type = RW_T_TEXTURE_HASH,
				    .object = tex};
	toc = psgo_toc(b, PSGO_NEW, &e, 1);
	{
		const uint32_t rows[4] = {tex, br, toc, ver};

		psgb_set_rows(b, rows, 4);
	}
	buf_init(&out);
	assert_int_equal(psgb_finish(b, 0, &out, NULL), RC_OK);
	fx_open(&f, &out);
	assert_int_equal(arena_row(&f.a, 0)->type_id, RW_T_TEXTURE);
	diag_init(&d);
	assert_int_equal(skate_toc_entries(&f.s, &f.a, &items, &n, &d), RC_OK);
	assert_int_equal(diag_count(&d), 0);
	assert_int_equal(n, 1);
	assert_int_equal(items[0].object, 0);
	assert_int_equal(items[0].offset, 0);
	skate_toc_items_free(items, n);
	diag_free(&d);
	fx_free(&f);
}

/* A source over memory that counts its reads and, when strict, refuses any longer than 4 bytes. */
struct counted {
	struct src_mem m;
	unsigned reads;
	bool strict;
};

static enum rc counted_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	struct counted *c = ctx;

	c->reads++;
	if (c->strict && n > 4)
		return RC_IO;
	if (off > c->m.size || n > c->m.size - off)
		return RC_TRUNCATED;
	memcpy(dst, c->m.p + off, n);
	return RC_OK;
}

static char *base_text(struct counted *c, const struct arena *a, uint32_t i, size_t size)
{
	struct src s = {.read = counted_read, .ctx = c, .size = size};
	struct buf b;
	size_t n;

	buf_init(&b);
	assert_int_equal(view_object_text(&s, a, i, &b, NULL), RC_OK);
	buf_putc(&b, 0);
	return (char *)buf_steal(&b, &n);
}

/*
 * A base resource's text reads the m_buffer fields of its neighbours through windows: a few
 * reads per view, not one per field (up to 256), and the same text as reading each field alone
 * (a source refusing longer reads takes that path).
 */
static void test_base_resource_reads(void **state)
{
	static const uint64_t seeds[] = {1, 0x5EED};

	(void)state;
	for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
		struct fx f;
		struct buf out;
		unsigned views = 0, most = 0, most_strict = 0, named = 0;

		buf_init(&out);
		assert_int_equal(gen_psg_sized(1u << 20, seeds[k], &out, NULL), RC_OK);
		fx_open(&f, &out);
		for (uint32_t i = 0; i < f.a.n_dict; i++) {
			uint32_t t = arena_row(&f.a, i)->type_id;
			struct counted c = {.m = {f.file, f.len}},
				       cs = {.m = {f.file, f.len}, .strict = true};
			char *w, *one;

			if (t < RW_T_BASERES_FIRST || t > RW_T_BASERES_LAST)
				continue;
			w = base_text(&c, &f.a, i, f.len);
			one = base_text(&cs, &f.a, i, f.len);
			assert_string_equal(w, one);
			named += strstr(w, " m_buffer\n") != NULL;
			most = c.reads > most ? c.reads : most;
			most_strict = cs.reads > most_strict ? cs.reads : most_strict;
			views++;
			free(w);
			free(one);
		}
		assert_true(views >= 16);
		assert_true(named >= views / 2); /* the referencers are found */
		assert_true(most_strict > 16);	 /* one read per field scanned... */
		assert_true(most <= 6);		 /* ...against a few windows */
		fx_free(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decode_small),  cmocka_unit_test(test_text_small),
	    cmocka_unit_test(test_tables_small),  cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_little_endian), cmocka_unit_test(test_mutations),
	    cmocka_unit_test(test_sky),		  cmocka_unit_test(test_texture_toc),
	    cmocka_unit_test(test_toc_row0),	  cmocka_unit_test(test_base_resource_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
