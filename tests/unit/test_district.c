/* The district view's model (src/formats/world/district*.c, docs/worlds.md): a generated
 * district on memory buffers, clean on both consoles, and each lint rule tripped by one broken
 * variant; hostile manifests list what they can. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "district_fixture.h"
#include "formats/world/district.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/arena.h"

/* ---- the files beside the map, from a df_set ---- */

struct mem_io {
	const struct df_set *s;
	const char *fail; /* this name reads as an I/O error */
	unsigned opens;
};

struct mem_h {
	struct src_mem m;
};

static enum rc mem_open(void *ctx, const char *name, struct src *s, void **h)
{
	struct mem_io *io = ctx;
	const struct df_file *f = df_find(io->s, name);
	struct mem_h *mh;

	io->opens++;
	if (io->fail && !strcmp(io->fail, name))
		return RC_IO;
	if (!f)
		return RC_NOENT;
	mh = calloc(1, sizeof *mh);
	assert_non_null(mh);
	src_init_mem(s, &mh->m, f->b.data, f->b.len);
	*h = mh;
	return RC_OK;
}

static void mem_close(void *ctx, void *h)
{
	(void)ctx;
	free(h);
}

/* Load and scan a district; every view rendered into out (info, errors, lint, tables). */
struct views {
	struct buf info, errors, lint, cols, mini;
	enum rc load;
};

static void views_free(struct views *v)
{
	buf_free(&v->info);
	buf_free(&v->errors);
	buf_free(&v->lint);
	buf_free(&v->cols);
	buf_free(&v->mini);
}

static void run(const struct df_set *s, const char *map, const char *fail, struct views *v)
{
	struct mem_io mi = {s, fail, 0};
	struct dist_io io = {&mi, mem_open, mem_close};
	const struct df_file *f = df_find(s, map);
	struct district m;
	struct dist_scan sc;
	struct src_mem sm;
	struct src src;

	memset(v, 0, sizeof *v);
	buf_init(&v->info);
	buf_init(&v->errors);
	buf_init(&v->lint);
	buf_init(&v->cols);
	buf_init(&v->mini);
	assert_non_null(f);
	src_init_mem(&src, &sm, f->b.data, f->b.len);
	v->load = dist_load(&m, map, &src, &io);
	if (v->load == RC_OK) {
		assert_int_equal(dist_scan(&sc, &m, &io), RC_OK);
		dist_info(&m, &sc, NULL, &v->info);
		dist_errors(&m, &sc, &v->errors);
		dist_lint(&sc, NULL, &v->lint);
		buf_puts(&v->cols, dist_collections_header);
		for (uint64_t i = 0; i < dist_collection_rows(&m); i++)
			dist_collection_row(&m, i, &v->cols);
		buf_puts(&v->mini, dist_minimap_header);
		for (uint64_t i = 0; i < dist_minimap_rows(&m); i++)
			dist_minimap_row(&m, i, &v->mini);
		dist_scan_free(&sc);
	}
	dist_free(&m);
	buf_putc(&v->info, '\0');
	buf_putc(&v->errors, '\0');
	buf_putc(&v->lint, '\0');
	buf_putc(&v->cols, '\0');
	buf_putc(&v->mini, '\0');
}

static size_t count_lines(const struct buf *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->len; i++)
		n += b->data[i] == '\n';
	return n;
}

static const char *txt(const struct buf *b)
{
	return (const char *)b->data;
}

static void broken(unsigned what, const char *line)
{
	struct df_set s;
	struct views v;

	assert_int_equal(df_district(&s, "DIST_T", false, what), RC_OK);
	run(&s, "DIST_T_Pres.psm", NULL, &v);
	assert_int_equal(v.load, RC_OK);
	if (!strstr(txt(&v.lint), line))
		fail_msg("lint lacks \"%s\":\n%s", line, txt(&v.lint));
	assert_null(strstr(txt(&v.lint), "\n0 findings"));
	views_free(&v);
	df_free(&s);
}

/* ---- tests ---- */

static void test_map_name(void **state)
{
	char dist[NAME_COMPONENT_MAX + 1];
	enum sm_platform pf;

	(void)state;
	assert_true(dist_map_name("DIST_Foo_Pres.psm", dist, &pf));
	assert_string_equal(dist, "DIST_Foo");
	assert_int_equal(pf, SM_PS3);
	assert_true(dist_map_name("dist_foo_pres.XSM", dist, &pf));
	assert_string_equal(dist, "dist_foo");
	assert_int_equal(pf, SM_X360);
	assert_false(dist_is_map("DIST_Foo_Sim.psm"));
	assert_false(dist_is_map("DIST_Foo_Pres.pss"));
	assert_false(dist_is_map("_Pres.psm"));
	assert_false(dist_is_map("Pres.psm"));
	assert_false(dist_is_map("x.psg"));
}

static void clean(bool x360)
{
	const char *map = x360 ? "DIST_T_Pres.xsm" : "DIST_T_Pres.psm";
	struct df_set s;
	struct views v;

	assert_int_equal(df_district(&s, "DIST_T", x360, DF_NONE), RC_OK);
	run(&s, map, NULL, &v);
	assert_int_equal(v.load, RC_OK);
	assert_string_equal(txt(&v.lint), "0 findings\n");
	assert_string_equal(txt(&v.errors), "");
	assert_non_null(strstr(txt(&v.info), x360 ? "platform: x360\n" : "platform: ps3\n"));
	assert_non_null(strstr(txt(&v.info), "collections: 6\nassets: 15\nmodels: 6\n"));
	assert_non_null(strstr(txt(&v.info), "unresolved: 0\nproblems: 0\nfindings: 0\n"));
	assert_non_null(strstr(txt(&v.info), "Pres_stamp: 0x000000005a5a0001\n"));
	assert_int_equal(count_lines(&v.cols), 1 + 6);
	assert_int_equal(count_lines(&v.mini), 1 + 4);
	/* The Global: no cell (PACK writes none), depth 0; a tile below it with its square. */
	assert_non_null(strstr(txt(&v.cols), "Pres\tcPres_Global\t"));
	assert_non_null(strstr(txt(&v.cols), "\t0xe171e1abfedb69ed\t0\t-\t2\t"));
	assert_non_null(strstr(txt(&v.cols), "Pres\tcPres_50_50_high\t0xfb4c3af3cd410a21\t"));
	assert_non_null(strstr(txt(&v.cols), "\t1\t0\t2\t"));
	assert_non_null(strstr(txt(&v.cols), "\t0\t-10\t0\t100\t40\t100\t"));
	assert_non_null(
	    strstr(txt(&v.mini), "Pres\t0xfb4c3af3cd410a21\tcPres_50_50_high\t50\t50\t-\n"));
	views_free(&v);
	df_free(&s);
}

static void test_clean_ps3(void **state)
{
	(void)state;
	clean(false);
}

static void test_clean_x360(void **state)
{
	(void)state;
	clean(true);
}

static void test_deterministic(void **state)
{
	struct df_set s;
	struct views a, b;

	(void)state;
	assert_int_equal(df_district(&s, "DIST_T", false, DF_NO_FILE | DF_STAMP), RC_OK);
	run(&s, "DIST_T_Pres.psm", NULL, &a);
	run(&s, "DIST_T_Pres.psm", NULL, &b);
	assert_string_equal(txt(&a.lint), txt(&b.lint));
	assert_string_equal(txt(&a.info), txt(&b.info));
	assert_string_equal(txt(&a.cols), txt(&b.cols));
	views_free(&a);
	views_free(&b);
	df_free(&s);
}

static void test_lint_no_file(void **state)
{
	(void)state;
	broken(DF_NO_FILE, "Pres: collection cPres_150_50_high (0x");
	broken(DF_NO_FILE, ") has no file cPres_150_50_high.psf\n");
}

/* Assets of a collection whose file is missing are not also listed as in no collection. */
static void test_lint_no_file_once(void **state)
{
	struct df_set s;
	struct views v;

	(void)state;
	assert_int_equal(df_district(&s, "DIST_T", false, DF_NO_FILE), RC_OK);
	run(&s, "DIST_T_Pres.psm", NULL, &v);
	assert_null(strstr(txt(&v.lint), "is in no collection"));
	assert_non_null(strstr(txt(&v.lint), "\n1 findings\n"));
	views_free(&v);
	df_free(&s);
}

static void test_lint_atoc(void **state)
{
	(void)state;
	broken(DF_ATOC_EXTRA, "DIST_T_Pres.pst: asset 0x123456789abcdef0 is in no collection\n");
}

static void test_lint_cspa(void **state)
{
	(void)state;
	broken(DF_NO_CELL, "has no bounds in DIST_T_Pres.pss\n");
}

static void test_lint_stub(void **state)
{
	(void)state;
	broken(DF_NO_STUB, "Tex stream stub missing: DIST_T_Tex.pmm\n");
}

static void test_lint_stamp(void **state)
{
	(void)state;
	broken(DF_STAMP, "stamp: cSim_50_50_high.psf has 0x000000005a5a0003, DIST_T_Sim.psm has "
			 "0x000000005a5a0002\n");
}

static void test_lint_w1c(void **state)
{
	(void)state;
	broken(DF_W1C, "Pres: cPres_150_50_high.psf: the word at +0x1C is 0x57000000 (0x58000000 "
		       "for Pres)\n");
}

static void test_lint_cycle(void **state)
{
	(void)state;
	broken(DF_CYCLE, "DIST_T_Sim.psm: collection 0 (cSim_150_50_high): in or leading into a "
			 "parent cycle\n");
}

static void test_lint_nan(void **state)
{
	struct df_set s;
	struct views v;

	(void)state;
	broken(DF_NAN, "DIST_T_Pres.pss: cell 0 (0x");
	assert_int_equal(df_district(&s, "DIST_T", false, DF_NAN), RC_OK);
	run(&s, "DIST_T_Pres.psm", NULL, &v);
	assert_non_null(strstr(txt(&v.cols), "\tnan\t"));
	assert_non_null(strstr(txt(&v.errors), "DIST_T_Pres.pss: CSPA: record 0: the hull box is "
					       "not finite\n"));
	views_free(&v);
	df_free(&s);
}

/* A CMAP that claims more collections than it holds: the ones it holds are listed. */
static void test_cmap_lies(void **state)
{
	struct df_set s;
	struct views v;

	(void)state;
	assert_int_equal(df_district(&s, "DIST_T", false, DF_CMAP_LIES), RC_OK);
	run(&s, "DIST_T_Pres.psm", NULL, &v);
	assert_int_equal(v.load, RC_OK);
	assert_non_null(strstr(txt(&v.errors), "DIST_T_Pres.psm: CMAP: claims 1000 records; the "
					       "file holds 3\n"));
	assert_int_equal(count_lines(&v.cols), 1 + 6);
	assert_non_null(strstr(txt(&v.lint), "DIST_T_Pres.psm: claims 1000 collections; the file "
					     "holds 3\n"));
	views_free(&v);
	df_free(&s);
}

/* A sibling that cannot be read: said in errors.txt and lint.txt; the rest is listed. */
static void test_sibling_io(void **state)
{
	struct df_set s;
	struct views v;

	(void)state;
	assert_int_equal(df_district(&s, "DIST_T", false, DF_NONE), RC_OK);
	run(&s, "DIST_T_Pres.psm", "DIST_T_Pres.pss", &v);
	assert_int_equal(v.load, RC_OK);
	assert_non_null(strstr(txt(&v.errors), "DIST_T_Pres.pss: cannot be read: "));
	assert_non_null(strstr(txt(&v.lint), "DIST_T_Pres.pss cannot be read\n"));
	assert_int_equal(count_lines(&v.cols), 1 + 6);
	views_free(&v);
	run(&s, "DIST_T_Pres.psm", "cSim_50_50_high.psf", &v);
	assert_non_null(strstr(txt(&v.errors), "cSim_50_50_high.psf: cannot be read: "));
	assert_non_null(strstr(txt(&v.lint), "Sim: cSim_50_50_high.psf cannot be read\n"));
	views_free(&v);
	df_free(&s);
}

/* The map itself truncated or of another kind: nothing is read past it. */
static void test_map_bad(void **state)
{
	struct df_set s;
	struct views v;
	struct df_file *f;

	(void)state;
	assert_int_equal(df_district(&s, "DIST_T", false, DF_NONE), RC_OK);
	f = (struct df_file *)df_find(&s, "DIST_T_Pres.psm");
	f->b.len = 16;
	run(&s, "DIST_T_Pres.psm", NULL, &v);
	assert_int_equal(v.load, RC_TRUNCATED);
	views_free(&v);
	memcpy(f->b.data, "CSPA", 4);
	f->b.len = 64;
	run(&s, "DIST_T_Pres.psm", NULL, &v);
	assert_int_not_equal(v.load, RC_OK);
	views_free(&v);
	df_free(&s);
}

/* A collection file whose assets lie: the walk stops, said once, never loops. */
static void test_sfil_lies(void **state)
{
	struct df_set s;
	struct views v;
	struct df_file *f;

	(void)state;
	assert_int_equal(df_district(&s, "DIST_T", false, DF_NONE), RC_OK);
	f = (struct df_file *)df_find(&s, "cPres_50_50_high.psf");
	df_put_u32(&f->b, 0x80 + 16, 0); /* the first asset's stride: 0 */
	run(&s, "DIST_T_Pres.psm", NULL, &v);
	assert_non_null(strstr(txt(&v.errors), "cPres_50_50_high.psf: asset 0x"));
	assert_non_null(strstr(txt(&v.errors), ": stride 0 shorter than the asset\n"));
	assert_non_null(strstr(txt(&v.lint), "Pres: cPres_50_50_high.psf holds 1 assets; the CMAP "
					     "says 2\n"));
	views_free(&v);
	df_put_u32(&f->b, 0x10, 0xFFFFFF00u); /* the first asset past the end */
	run(&s, "DIST_T_Pres.psm", NULL, &v);
	assert_non_null(strstr(txt(&v.errors), "is outside the file\n"));
	views_free(&v);
	df_free(&s);
}

/* The Sim arena's objects: rows of props, rails and surfaces; a broken object is lines, not a
 * failure. */
static void test_objects(void **state)
{
	struct dist_objects o;
	struct buf w;
	struct src_mem sm;
	struct src s;
	struct arena a;
	struct diag d;
	const char *t;

	(void)state;
	buf_init(&w);
	assert_int_equal(df_world_arena(false, 0, 50, 50, &w), RC_OK);
	src_init_mem(&s, &sm, w.data, w.len);
	diag_init(&d);
	assert_int_equal(arena_open(&s, &a, &d), RC_OK);
	dist_objects_init(&o);
	for (uint32_t i = 0; i < a.n_dict; i++) {
		const struct arena_dict_entry *de = arena_row(&a, i);
		uint8_t *obj;
		size_t len;

		assert_int_equal(arena_read_object(&s, &a, i, &obj, &len), RC_OK);
		assert_int_equal(dist_objects_add(&o, "c/0x1.psg", i, de->type_id, obj, len),
				 RC_OK);
		free(obj);
	}
	/* a DMOData cut short and a ClusteredMesh of garbage: lines, no rows, no failure */
	assert_int_equal(
	    dist_objects_add(&o, "c/0x2.psg", 7, WO_T_DMODATA, (const uint8_t *)"short", 5), RC_OK);
	assert_int_equal(dist_objects_add(&o, "c/0x2.psg", 8, WO_T_CLUSTEREDMESH, w.data, 0x60),
			 RC_OK);
	assert_int_equal(dist_objects_finish(&o), RC_OK);
	buf_putc(&o.props, 0);
	buf_putc(&o.rails, 0);
	buf_putc(&o.surfaces, 0);
	assert_int_equal(o.n_props, 2);
	assert_int_equal(o.n_rails, 1);
	assert_int_equal(o.n_segments, 2);
	assert_true(o.n_tris >= 4);
	t = (const char *)o.props.data;
	assert_non_null(strstr(t, "c/0x1.psg\t0\t0\tbench_0_0\t0x00000000d0000000\t"));
	assert_non_null(strstr(t, "\tunresolved\t50\t0\t40\t0\t0\t0\t1\t1\t1\t1\t-\n"));
	t = (const char *)o.rails.data;
	assert_non_null(
	    strstr(t, "c/0x1.psg\t1\t0\t0x00000000000000a0\t1\t55\t1\t50\t55\t2\t55\t"));
	t = (const char *)o.surfaces.data;
	assert_non_null(strstr(t, "0x1180\t0\t3\t1\t2\n0x1181\t1\t3\t1\t2\n"));
	assert_true(o.d.n >= 1);
	assert_non_null(strstr(o.d.msg[0], "c/0x2.psg: object 7"));
	assert_int_equal(o.lint.n, 0);
	{ /* a prop whose matrix is NaN: a finding, placed at 0 */
		struct wo_dmo v = {0};
		struct wo_dmo_header h = {.type_id = WO_T_DMODATA};
		struct buf b;

		v.m[0] = v.m[5] = v.m[10] = v.m[15] = 1;
		v.m[12] = NAN;
		buf_init(&b);
		assert_int_equal(wo_dmo_write(&h, &v, 1, &b), RC_OK);
		assert_int_equal(dist_objects_add(&o, "c/0x3.psg", 2, WO_T_DMODATA, b.data, b.len),
				 RC_OK);
		buf_free(&b);
		assert_int_equal(o.lint.n, 1);
		assert_string_equal(o.lint.msg[0], "c/0x3.psg: object 2: prop 0: its matrix is not "
						   "finite (placed at 0)");
	}
	dist_objects_free(&o);
	arena_free(&a);
	diag_free(&d);
	buf_free(&w);
}

/* The template resolver of test_props_models: template 0x10 is "dmo/0x10.psg" (handle 7),
 * any other is missing. */
static uint32_t models_of(void *ctx, uint64_t id, const char **path, const char **why)
{
	(*(int *)ctx)++;
	if (id == 0x10) {
		*path = "dmo/0x10.psg";
		return 7;
	}
	*why = "worlddmo.big has no such template";
	return 0;
}

/* Props whose template resolves show its path and are placed (position, rotation, scale of
 * the record); a missing template is `unresolved`, a lint line and an unresolved reference. */
static void test_props_models(void **state)
{
	struct dist_objects o;
	struct wo_dmo v[3];
	struct wo_dmo_header h = {.type_id = WO_T_DMODATA};
	struct buf b;
	int calls = 0;
	const char *t;

	(void)state;
	memset(v, 0, sizeof v);
	for (int i = 0; i < 3; i++) {
		v[i].m[0] = v[i].m[5] = v[i].m[10] = v[i].m[15] = 2;
		v[i].m[15] = 1;
		v[i].m[12] = 10.0f * (float)(i + 1);
		v[i].m[13] = 1;
		v[i].m[14] = -5;
		v[i].template_id = i == 1 ? 0x11 : 0x10;
	}
	buf_init(&b);
	assert_int_equal(wo_dmo_write(&h, v, 3, &b), RC_OK);
	dist_objects_init(&o);
	o.model_of = models_of;
	o.model_ctx = &calls;
	assert_int_equal(dist_objects_add(&o, "c/0x1.psg", 4, WO_T_DMODATA, b.data, b.len), RC_OK);
	assert_int_equal(dist_objects_finish(&o), RC_OK);
	assert_int_equal(calls, 3);
	t = (const char *)o.props.data;
	assert_non_null(strstr(t, "\t0x0000000000000010\t0x0000000000000000\t0x0000000000000000\t0"
				  "\tdmo/0x10.psg\t10\t1\t-5\t0\t0\t0\t1\t2\t2\t2\t-\n"));
	assert_non_null(strstr(t, "\tunresolved\t20\t1\t-5\t"));
	assert_non_null(strstr(t, "\tdmo/0x10.psg\t30\t1\t-5\t"));
	assert_int_equal(o.n_props, 3);
	assert_int_equal(o.n_resolved, 2);
	assert_int_equal(o.unresolved, 1);
	assert_int_equal(o.lint.n, 1);
	assert_string_equal(o.lint.msg[0], "c/0x1.psg: object 4: prop 1: template "
					   "0x0000000000000011 is unresolved: worlddmo.big has no "
					   "such template");
	assert_int_equal(o.n_placed, 2);
	assert_int_equal(o.placed[0].model, 7);
	assert_int_equal(o.placed[1].template_id, 0x10);
	assert_true(o.placed[1].pos[0] == 30.0f && o.placed[1].scale[2] == 2.0f &&
		    o.placed[1].rot[3] == 1.0f);
	dist_objects_free(&o);
	buf_free(&b);
}

/* A map of 70,000 records naming one collection file under distinct ids: the scan stops at
 * its bounds, says so once, and lints what it read (no hang, no unbounded walk). */
static void test_many_records(void **state)
{
	struct df_set s;
	struct views v;
	struct df_file *f;
	struct sm_collection *c = xcalloc_n(70000, sizeof *c);
	struct sm_header h = {.version = 1, .stamp = 0x5a5a0001u, .count = 70000};

	(void)state;
	assert_non_null(c);
	assert_int_equal(df_district(&s, "DIST_T", false, DF_NONE), RC_OK);
	for (uint32_t i = 0; i < 70000; i++) {
		c[i].id = 0x1000000u + i;
		c[i].parent = SM_GLOBAL_PARENT;
		snprintf(c[i].name, sizeof c[i].name, "cPres_50_50_high");
	}
	f = (struct df_file *)df_find(&s, "DIST_T_Pres.psm");
	f->b.len = 0;
	assert_int_equal(sm_cmap_write(SM_PS3, &h, c, 70000, &f->b), RC_OK);
	run(&s, "DIST_T_Pres.psm", NULL, &v);
	assert_int_equal(v.load, RC_OK);
	assert_non_null(strstr(txt(&v.errors), "Pres: more collection files or assets than a "
					       "district holds (65536 files, 4194304 assets); the "
					       "rest are not read\n"));
	views_free(&v);
	df_free(&s);
	free(c);
}

/* The scan may outlive the manifests it was made from (an asset frees its permanent decodes
 * in slot order, the manifests first): freeing it reads nothing of them (ASan checks). */
static void test_free_order(void **state)
{
	struct df_set s;
	struct mem_io mi;
	struct dist_io io = {&mi, mem_open, mem_close};
	struct district *m = calloc(1, sizeof *m);
	struct dist_scan sc;
	struct src_mem sm;
	struct src src;
	const struct df_file *f;

	(void)state;
	assert_non_null(m);
	assert_int_equal(df_district(&s, "DIST_T", false, DF_NONE), RC_OK);
	mi = (struct mem_io){&s, NULL, 0};
	f = df_find(&s, "DIST_T_Pres.psm");
	src_init_mem(&src, &sm, f->b.data, f->b.len);
	assert_int_equal(dist_load(m, "DIST_T_Pres.psm", &src, &io), RC_OK);
	assert_int_equal(dist_scan(&sc, m, &io), RC_OK);
	dist_free(m);
	free(m);
	dist_scan_free(&sc);
	df_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_map_name),	 cmocka_unit_test(test_clean_ps3),
	    cmocka_unit_test(test_clean_x360),	 cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_lint_no_file), cmocka_unit_test(test_lint_no_file_once),
	    cmocka_unit_test(test_lint_atoc),	 cmocka_unit_test(test_lint_cspa),
	    cmocka_unit_test(test_lint_stub),	 cmocka_unit_test(test_lint_stamp),
	    cmocka_unit_test(test_lint_w1c),	 cmocka_unit_test(test_lint_cycle),
	    cmocka_unit_test(test_lint_nan),	 cmocka_unit_test(test_cmap_lies),
	    cmocka_unit_test(test_sibling_io),	 cmocka_unit_test(test_map_bad),
	    cmocka_unit_test(test_sfil_lies),	 cmocka_unit_test(test_objects),
	    cmocka_unit_test(test_many_records), cmocka_unit_test(test_free_order),
	    cmocka_unit_test(test_props_models),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
