/*
 * The glTF 2.0 binary writer (include/psgfs/formats/gltf.h) and the ActorX exports built on it
 * (include/psgfs/formats/psk_gltf.h): JSON escaping of hostile names, the GLB container (header and
 * chunk lengths, 4-byte alignment, padding), accessor bounds, sanitising of what the data
 * callback gives, exact sizes, byte ranges equal to the whole, and numbers: skinning the bind
 * pose with the exported joints, hierarchy and inverse binds gives back every vertex, PSK
 * vertices, faces and weights and PSA keys come out converted as docs/gltf.md says.
 */
#include <math.h>
#include <stdio.h>

#include "glb_testutil.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/formats/png.h"
#include "psgfs/formats/psk_gltf.h"

/* ---- JSON strings ---- */

static void escape_case(const char *in, size_t n, const char *want, const char *decoded)
{
	struct gltf_name nm = {in, n};
	struct buf b;
	struct jv v;

	buf_init(&b);
	gltf_json_string(&b, &nm);
	buf_putc(&b, 0);
	assert_string_equal((const char *)b.data, want);
	assert_true(json_parse((const char *)b.data, b.len - 1, &v));
	assert_int_equal(v.t, J_STR);
	assert_string_equal(v.str, decoded);
	jv_free(&v);
	buf_free(&b);
}

static void test_json_escape(void **state)
{
	char sixty_four[64];

	(void)state;
	escape_case("plain name", 10, "\"plain name\"", "plain name");
	escape_case("a\"b\\c/d", 7, "\"a\\\"b\\\\c/d\"", "a\"b\\c/d");
	escape_case("c\x01\x1f\t\n\x7f", 6, "\"c\\u0001\\u001f\\u0009\\u000a\\u007f\"",
		    "c\x01\x1f\t\n\x7f");
	escape_case("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
		    "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
		    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* Invalid UTF-8, one replacement per byte that starts no valid sequence: a lone
	 * continuation, an overlong NUL, a surrogate, past U+10FFFF, a cut sequence, 0xFF. */
	escape_case("\x80", 1, "\"\\ufffd\"", "\xef\xbf\xbd");
	escape_case("\xc0\x80", 2, "\"\\ufffd\\ufffd\"", "\xef\xbf\xbd\xef\xbf\xbd");
	escape_case("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"",
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	escape_case("\xf4\x90\x80\x80x", 5, "\"\\ufffd\\ufffd\\ufffd\\ufffdx\"",
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx");
	escape_case("a\xe2\x82", 3, "\"a\\ufffd\\ufffd\"", "a\xef\xbf\xbd\xef\xbf\xbd");
	escape_case("\xff", 1, "\"\\ufffd\"", "\xef\xbf\xbd");
	escape_case("ab\0cd", 5, "\"ab\"", "ab"); /* fixed fields end at their NUL */
	escape_case("", 0, "\"\"", "");
	/* 64 bytes without a NUL: cut to GLTF_NAME_MAX bytes. */
	memset(sixty_four, 'L', sizeof sixty_four);
	{
		char want[67], dec[65];

		want[0] = '"';
		memset(want + 1, 'L', GLTF_NAME_MAX);
		want[GLTF_NAME_MAX + 1] = '"';
		want[GLTF_NAME_MAX + 2] = 0;
		memset(dec, 'L', GLTF_NAME_MAX);
		dec[GLTF_NAME_MAX] = 0;
		escape_case(sixty_four, 64, want, dec);
		/* Never inside a character: 62 bytes and a 2-byte one stop at 62. */
		memset(sixty_four, 'a', 62);
		memcpy(sixty_four + 62, "\xc3\xa9", 2);
		memset(want + 1, 'a', 62);
		want[63] = '"';
		want[64] = 0;
		memset(dec, 'a', 62);
		dec[62] = 0;
		escape_case(sixty_four, 64, want, dec);
		/* Escapes count as the bytes they stand for: 64 junk bytes give 21 U+FFFD. */
		memset(sixty_four, 0xff, 64);
		{
			struct gltf_name nm = {sixty_four, 64};
			struct buf b;
			struct jv v;

			buf_init(&b);
			gltf_json_string(&b, &nm);
			assert_true(json_parse((const char *)b.data, b.len, &v));
			assert_int_equal(v.len, 63);
			jv_free(&v);
			buf_free(&b);
		}
	}
}

/* ---- a small model from arrays, with data the writer has to repair ---- */

#define NV 6
struct tm {
	float pos[NV][3], nrm[NV][3], uv[NV][2];
	uint8_t col[NV][4];
	struct gltf_influence inf[NV];
	uint32_t idx[2][6];
	uint32_t t_idx[2];
	float t_pos[2][3], t_nrm[2][3];
	float times[3];
	float tr[2 * 3][3], rot[2 * 3][4], scl[2 * 3][3];
	struct gltf_node nodes[4];
	struct gltf_prim prims[2];
	struct gltf_target target;
	struct gltf_mesh mesh;
	struct gltf_material mat;
	struct gltf_anim anim;
	uint32_t anim_nodes[2];
	struct gltf_model m;
};

static enum rc tm_fill(void *ctx, const struct gltf_req *q, uint64_t first, size_t n, void *out)
{
	const struct tm *t = ctx;
	const void *src;
	size_t el;

	switch (q->what) {
	case GLTF_D_POSITION:
		src = t->pos, el = 12;
		break;
	case GLTF_D_NORMAL:
		src = t->nrm, el = 12;
		break;
	case GLTF_D_TEXCOORD:
		src = t->uv, el = 8;
		break;
	case GLTF_D_COLOR:
		src = t->col, el = 4;
		break;
	case GLTF_D_SKIN:
		src = t->inf, el = sizeof(struct gltf_influence);
		break;
	case GLTF_D_INDEX:
		src = t->idx[q->set], el = 4;
		break;
	case GLTF_D_TARGET_INDEX:
		src = t->t_idx, el = 4;
		break;
	case GLTF_D_TARGET_POSITION:
		src = t->t_pos, el = 12;
		break;
	case GLTF_D_TARGET_NORMAL:
		src = t->t_nrm, el = 12;
		break;
	case GLTF_D_TIME:
		src = t->times, el = 4;
		break;
	case GLTF_D_TRANSLATION:
		src = t->tr, el = 12;
		break;
	case GLTF_D_ROTATION:
		src = t->rot, el = 16;
		break;
	default:
		src = t->scl, el = 12;
		break;
	}
	memcpy(out, (const uint8_t *)src + first * el, n * el);
	return RC_OK;
}

/* Render through a plan made from a struct tm. */
struct tm_ctx {
	const struct gltf_plan *p;
	struct tm *t;
};

static enum rc tm_render(void *ctx, unsigned part, uint64_t first, struct emit *e)
{
	const struct tm_ctx *c = ctx;

	return gltf_render(c->p, c->t, part, first, e);
}

static struct gltf_node tm_node(const char *name, int32_t parent, bool joint)
{
	struct gltf_node n = {.name = {name, strlen(name)}, .parent = parent, .joint = joint};

	n.r[3] = 1;
	n.s[0] = n.s[1] = n.s[2] = 1;
	return n;
}

static void tm_init(struct tm *t)
{
	static const struct gltf_influence inf[NV] = {
	    {{0, 0, 1, 5}, {0.5f, 0.25f, 0.25f, 1}}, /* joint 0 twice, joint 5 out of range */
	    {{0, 1, 2, 0}, {0, 0, 0, 0}},	     /* no weight at all */
	    {{1, 2, 0, 0}, {-1, 3, 0, 0}},	     /* a negative weight */
	    {{2, 1, 0, 0}, {NAN, 2, 0, 0}},	     /* NaN */
	    {{0, 1, 2, 0}, {0.1f, 0.2f, 0.3f, 0}},   /* three, not normalised */
	    {{1, 2, 0, 0}, {1.0f / 3, 2.0f / 3, 0, 0}},
	};
	static const uint32_t idx[2][6] = {{0, 1, 2, 2, 3, 4}, {3, 4, 5}};

	memset(t, 0, sizeof *t);
	for (int v = 0; v < NV; v++) {
		for (int k = 0; k < 3; k++) {
			t->pos[v][k] = (float)(v * 3 + k) - 7.5f;
			t->nrm[v][k] = k == v % 3 ? 2.0f : 0.0f;
		}
		t->uv[v][0] = v / 8.0f;
		t->uv[v][1] = 1 - v / 8.0f;
		memset(t->col[v], 40 * v, 4);
	}
	t->pos[2][1] = NAN;	  /* becomes 0 */
	t->pos[4][2] = INFINITY;  /* becomes 0 */
	memset(t->nrm[5], 0, 12); /* becomes +Y */
	memcpy(t->inf, inf, sizeof inf);
	memcpy(t->idx, idx, sizeof idx);
	t->t_idx[0] = 1, t->t_idx[1] = 4;
	t->t_pos[0][0] = -2, t->t_pos[1][1] = 5, t->t_pos[1][2] = NAN;
	t->t_nrm[0][2] = 1;
	t->times[0] = 0, t->times[1] = 0.5f, t->times[2] = 1;
	for (int e = 0; e < 6; e++) {
		t->tr[e][0] = (float)e;
		t->rot[e][3] = e == 4 ? 0 : 2; /* element 4 all zero: identity */
		t->scl[e][0] = t->scl[e][1] = t->scl[e][2] = 1 + e / 4.0f;
	}
	t->nodes[0] = tm_node("root", -1, true);
	t->nodes[0].t[0] = 1, t->nodes[0].t[1] = 2, t->nodes[0].t[2] = 3;
	t->nodes[0].r[3] = 2; /* not unit */
	t->nodes[1] = tm_node("mid\"dle", 0, true);
	t->nodes[1].r[0] = 0.6f, t->nodes[1].r[3] = 0.8f, t->nodes[1].t[1] = 4;
	t->nodes[2] = tm_node("tip\x01", 1, true);
	t->nodes[2].t[2] = NAN;
	t->nodes[3] = tm_node("socket\xff", 2, false);
	gltf_bind_ibms(t->nodes, 4);
	t->prims[0] = (struct gltf_prim){0, 6, false};
	t->prims[1] = (struct gltf_prim){-1, 3, false};
	t->target = (struct gltf_target){.name = {"\0smile", 6}, .n_sparse = 2}; /* empty */
	t->mesh = (struct gltf_mesh){.name = {"mesh", 4},
				     .n_vertices = NV,
				     .normals = true,
				     .colors = true,
				     .skinned = true,
				     .n_uv = 1,
				     .prims = t->prims,
				     .n_prims = 2,
				     .targets = &t->target,
				     .n_targets = 1};
	t->mat = (struct gltf_material){{"mat", 3}, -1};
	t->anim_nodes[0] = 0, t->anim_nodes[1] = 2;
	t->anim = (struct gltf_anim){.name = {"wave", 4},
				     .n_frames = 3,
				     .n_channels = 2,
				     .nodes = t->anim_nodes,
				     .scale = true};
	t->m = (struct gltf_model){.nodes = t->nodes,
				   .n_nodes = 4,
				   .meshes = &t->mesh,
				   .n_meshes = 1,
				   .materials = &t->mat,
				   .n_materials = 1,
				   .anims = &t->anim,
				   .n_anims = 1,
				   .fill = tm_fill};
}

/* JOINTS_0/WEIGHTS_0 as the validator wants them: joints in range, no joint twice with a
 * weight, zero weights on joint 0, sums exactly 1 with up to two weights, else within 1/255. */
static void check_influences(const struct glb_doc *d, const struct jv *attrs, size_t n_joints)
{
	size_t n, n2;
	unsigned c, c2;
	double *j = glb_acc(d, (size_t)jnum(attrs, "JOINTS_0", -1), &n, &c);
	double *w = glb_acc(d, (size_t)jnum(attrs, "WEIGHTS_0", -1), &n2, &c2);

	assert_int_equal(n, n2);
	for (size_t v = 0; v < n; v++) {
		float sum = 0;
		int used = 0;

		for (int k = 0; k < 4; k++) {
			double jk = j[v * 4 + k], wk = w[v * 4 + k];

			assert_true(wk >= 0 && jk < n_joints);
			if (wk == 0) {
				assert_true(jk == 0);
				continue;
			}
			used++;
			sum = sum + (float)wk; /* the validator's order and float rounding */
			for (int m = 0; m < k; m++)
				assert_false(w[v * 4 + m] != 0 && j[v * 4 + m] == jk);
		}
		if (used <= 2)
			assert_true(sum == 1.0f);
		else
			assert_true(fabs(sum - 1.0) <= 0.0039216);
	}
	free(j);
	free(w);
}

/* Vertex v's influences, as (joint, weight) pairs with weight > 0, joint order. */
static int influences_of(const struct glb_doc *d, const struct jv *attrs, size_t v,
			 double out[4][2])
{
	size_t n;
	unsigned c;
	double *j = glb_acc(d, (size_t)jnum(attrs, "JOINTS_0", -1), &n, &c);
	double *w = glb_acc(d, (size_t)jnum(attrs, "WEIGHTS_0", -1), &n, &c);
	int k = 0;

	for (int i = 0; i < 4; i++)
		if (w[v * 4 + i] > 0) {
			int at = k++;

			while (at > 0 && out[at - 1][0] > j[v * 4 + i]) {
				out[at][0] = out[at - 1][0];
				out[at][1] = out[at - 1][1];
				at--;
			}
			out[at][0] = j[v * 4 + i];
			out[at][1] = w[v * 4 + i];
		}
	free(j);
	free(w);
	return k;
}

static void check_unit(const struct glb_doc *d, size_t acc)
{
	size_t n;
	unsigned c;
	double *v = glb_acc(d, acc, &n, &c);

	for (size_t i = 0; i < n; i++) {
		double s = 0;

		for (unsigned k = 0; k < c; k++)
			s += v[i * c + k] * v[i * c + k];
		assert_true(fabs(sqrt(s) - 1) < 1e-6);
	}
	free(v);
}

/* The struct tm's influences after repair: duplicates merged, out-of-range joints, NaN and
 * negative weights dropped, the rest renormalised; nothing left: joint 0. */
static void check_tm_influences(const struct glb_doc *d, const struct jv *attrs)
{
	static const double want[NV][4][2] = {
	    {{0, 0.75}, {1, 0.25}},
	    {{0, 1}},
	    {{2, 1}},
	    {{1, 1}},
	    {{0, 1.0 / 6}, {1, 2.0 / 6}, {2, 3.0 / 6}},
	    {{1, 1.0 / 3}, {2, 2.0 / 3}},
	};
	static const int count[NV] = {2, 1, 1, 1, 3, 2};

	for (size_t k = 0; k < NV; k++) {
		double got[4][2];

		assert_int_equal(influences_of(d, attrs, k, got), count[k]);
		for (int i = 0; i < count[k]; i++) {
			assert_true(got[i][0] == want[k][i][0]);
			assert_true(fabs(got[i][1] - want[k][i][1]) < 1e-6);
		}
	}
}

/* The JSON part item by item, each rendered alone, is the JSON part. */
static void check_json_items(const struct gltf_plan *p, void *ctx, const uint8_t *whole)
{
	struct buf all;

	buf_init(&all);
	for (uint32_t k = 0; k < p->n_items; k++) {
		struct emit e;

		emit_init_window(&e, k, 1);
		assert_int_equal(gltf_render(p, ctx, 1, k, &e), RC_OK);
		if (e.b.len)
			buf_put(&all, e.b.data, e.b.len);
		emit_free(&e);
	}
	assert_int_equal(all.len, p->json_len);
	assert_memory_equal(all.data, whole + 20, all.len);
	buf_free(&all);
}

static void test_model(void **state)
{
	struct tm *t = calloc(1, sizeof *t);
	struct gltf_plan p;
	struct glb_doc d;
	struct tm_ctx c = {&p, t};
	uint8_t *g;
	size_t n, cnt;
	unsigned nc;
	enum rc r;
	double *v;

	(void)state;
	tm_init(t);
	assert_int_equal(gltf_bounds(&t->m, t), RC_OK);
	assert_int_equal(gltf_plan(&t->m, &p), RC_OK);
	g = glb_whole(&p, tm_render, &c, &n, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(n, gltf_size(&p));
	glb_open(g, n, &d);
	glb_check_views_and_bounds(&d);
	glb_check_ranges(&p, tm_render, &c, g, n);
	check_json_items(&p, t, g);
	/* JSON padding is spaces, BIN's views are padded with zeros. */
	for (size_t i = 20 + p.json_len; i < 20 + p.json_len + p.json_pad; i++)
		assert_int_equal(g[i], ' ');

	const struct jv *prim = jat(jget(jat(jget(&d.j, "meshes"), 0), "primitives"), 0);
	const struct jv *attrs = jget(prim, "attributes");

	check_influences(&d, attrs, 3);
	check_tm_influences(&d, attrs);
	check_unit(&d, (size_t)jnum(attrs, "NORMAL", -1));
	v = glb_acc(&d, (size_t)jnum(attrs, "POSITION", -1), &cnt, &nc);
	assert_true(cnt == NV && v[2 * 3 + 1] == 0 && v[4 * 3 + 2] == 0 && v[0] == -7.5);
	free(v);
	/* Indices: u16 for 6 vertices, the second primitive without a material. */
	v = glb_acc(&d, (size_t)jnum(prim, "indices", -1), &cnt, &nc);
	assert_true(cnt == 6 && v[5] == 4);
	free(v);
	assert_null(jget(jat(jget(jat(jget(&d.j, "meshes"), 0), "primitives"), 1), "material"));
	/* Names escaped and valid; the skin's joints and skeleton. */
	assert_string_equal(jget(jat(jget(&d.j, "nodes"), 1), "name")->str, "mid\"dle");
	assert_string_equal(jget(jat(jget(&d.j, "nodes"), 3), "name")->str, "socket\xef\xbf\xbd");
	assert_string_equal(
	    jat(jget(jget(jat(jget(&d.j, "meshes"), 0), "extras"), "targetNames"), 0)->str,
	    "target_0");
	assert_int_equal(jget(jat(jget(&d.j, "skins"), 0), "joints")->n, 3);
	assert_int_equal(jnum(jat(jget(&d.j, "skins"), 0), "skeleton", -1), 0);
	/* The mesh's node sits at the scene root, with the skin. */
	assert_int_equal(jnum(jat(jget(&d.j, "nodes"), 4), "mesh", -1), 0);
	assert_int_equal(jnum(jat(jget(&d.j, "nodes"), 4), "skin", -1), 0);
	/* Animation: rotations unit (the zero one identity), times bounded. */
	const struct jv *an = jat(jget(&d.j, "animations"), 0);

	assert_int_equal(jget(an, "channels")->n, 6);
	for (size_t s = 0; s < jget(an, "samplers")->n; s++)
		if (s % 3 == 1)
			check_unit(&d, (size_t)jnum(jat(jget(an, "samplers"), s), "output", -1));
	glb_close(&d);
	free(g);
	gltf_plan_free(&p);
	free(t);
}

static unsigned late_calls;
static bool late_widest; /* give the longest numbers instead of the true bounds */

static enum rc tm_bounds_later(void *ctx, uint32_t mesh)
{
	struct tm *t = ctx;

	late_calls++;
	if (late_widest) {
		for (int k = 0; k < 3; k++) {
			t->m.meshes[mesh].min[k] = -1.17549435e-38f;
			t->m.meshes[mesh].max[k] = -3.0e38f;
		}
		return RC_OK;
	}
	return gltf_mesh_bounds(&t->m, t, mesh, t->m.meshes[mesh].min, t->m.meshes[mesh].max);
}

/*
 * Bounds found late (a district's scene plans from headers): the layout does not depend on
 * them (each number in GLTF_BOUND_WIDTH characters), planning and counting never ask for
 * them, rendering the JSON does, and the file says the data's true bounds.
 */
static void test_bounds_later(void **state)
{
	struct tm *t = calloc(1, sizeof *t);
	struct gltf_plan p;
	struct glb_doc d;
	struct tm_ctx c = {&p, t};
	struct emit e;
	uint64_t json_len;
	uint8_t *g;
	size_t n;
	enum rc r;

	(void)state;
	tm_init(t);
	assert_int_equal(gltf_bounds(&t->m, t), RC_OK); /* the targets' and times' bounds */
	memset(t->m.meshes[0].min, 0, sizeof t->m.meshes[0].min);
	memset(t->m.meshes[0].max, 0, sizeof t->m.meshes[0].max);
	t->m.bounds_later = tm_bounds_later;
	late_calls = 0;
	assert_int_equal(gltf_plan(&t->m, &p), RC_OK);
	json_len = p.json_len;
	emit_init_count(&e, 64);
	assert_int_equal(gltf_render(&p, t, 1, 0, &e), RC_OK);
	assert_int_equal(e.b.len, json_len);
	emit_free(&e);
	assert_int_equal(late_calls, 0);
	g = glb_whole(&p, tm_render, &c, &n, &r);
	assert_int_equal(r, RC_OK);
	assert_true(late_calls > 0);
	assert_int_equal(n, gltf_size(&p));
	glb_open(g, n, &d);
	glb_check_views_and_bounds(&d);
	glb_check_ranges(&p, tm_render, &c, g, n);
	glb_close(&d);
	free(g);
	/* The widest numbers a bound can be written as fill the same room. */
	late_widest = true;
	emit_init_window(&e, 0, (size_t)json_len + 1);
	assert_int_equal(gltf_render(&p, t, 1, 0, &e), RC_OK);
	assert_int_equal(e.b.len, json_len);
	assert_non_null(memmem(e.b.data, e.b.len, "-3.0000000054977558e+38", 23));
	emit_free(&e);
	late_widest = false;
	gltf_plan_free(&p);
	free(t);
}

/* What the writer cannot repair without changing sizes fails instead of writing nonsense. */
static void test_model_refusals(void **state)
{
	struct tm *t = calloc(1, sizeof *t);
	struct gltf_plan p;
	uint8_t *g;
	size_t n;
	enum rc r;

	struct tm_ctx c = {&p, t};

	(void)state;
	tm_init(t);
	t->idx[0][4] = NV; /* an index past the vertices */
	assert_int_equal(gltf_bounds(&t->m, t), RC_OK);
	assert_int_equal(gltf_plan(&t->m, &p), RC_OK);
	g = glb_whole(&p, tm_render, &c, &n, &r);
	assert_int_equal(r, RC_CORRUPT);
	free(g);
	gltf_plan_free(&p);

	tm_init(t);
	t->t_idx[1] = 1; /* sparse indices not increasing */
	assert_int_equal(gltf_bounds(&t->m, t), RC_CORRUPT);
	tm_init(t);
	t->times[2] = 0.5f; /* times not increasing */
	assert_int_equal(gltf_bounds(&t->m, t), RC_CORRUPT);

	tm_init(t);
	t->nodes[1].parent = 2; /* a parent after its child */
	assert_int_equal(gltf_plan(&t->m, &p), RC_INVAL);
	tm_init(t);
	t->prims[1].n_indices = 4;
	assert_int_equal(gltf_plan(&t->m, &p), RC_INVAL);
	tm_init(t);
	t->prims[0].material = 1;
	assert_int_equal(gltf_plan(&t->m, &p), RC_INVAL);
	tm_init(t);
	t->anim_nodes[1] = 0; /* one node twice in an animation */
	assert_int_equal(gltf_plan(&t->m, &p), RC_INVAL);
	free(t);
}

/* Joints of two trees get a common root node, which becomes the skin's skeleton. */
static void test_common_root(void **state)
{
	struct tm *t = calloc(1, sizeof *t);
	struct gltf_plan p;
	struct glb_doc d;
	uint8_t *g;
	size_t n;
	enum rc r;

	struct tm_ctx c = {&p, t};

	(void)state;
	tm_init(t);
	t->nodes[2].parent = -1;
	assert_int_equal(gltf_bounds(&t->m, t), RC_OK);
	assert_int_equal(gltf_plan(&t->m, &p), RC_OK);
	g = glb_whole(&p, tm_render, &c, &n, &r);
	assert_int_equal(r, RC_OK);
	glb_open(g, n, &d);
	assert_int_equal(jnum(jat(jget(&d.j, "skins"), 0), "skeleton", -1), 4);
	assert_string_equal(jget(jat(jget(&d.j, "nodes"), 4), "name")->str, "root");
	assert_int_equal(jget(jat(jget(&d.j, "nodes"), 4), "children")->n, 2);
	assert_int_equal(jget(jat(jget(&d.j, "scenes"), 0), "nodes")->n, 2); /* root, mesh */
	glb_close(&d);
	free(g);
	gltf_plan_free(&p);
	free(t);
}

/* A mesh placed under a node (a scene of several models) is that node's child; a skinned one
 * stays at the scene root whatever it asks. */
static void test_mesh_under(void **state)
{
	struct tm *t = calloc(1, sizeof *t);
	struct gltf_plan p;
	struct glb_doc d;
	uint8_t *g;
	size_t n;
	enum rc r;

	struct tm_ctx c = {&p, t};

	(void)state;
	for (int skinned = 0; skinned < 2; skinned++) {
		tm_init(t);
		t->mesh.skinned = skinned;
		t->mesh.under = 4; /* node 3, the socket */
		assert_int_equal(gltf_bounds(&t->m, t), RC_OK);
		assert_int_equal(gltf_plan(&t->m, &p), RC_OK);
		g = glb_whole(&p, tm_render, &c, &n, &r);
		assert_int_equal(r, RC_OK);
		glb_open(g, n, &d);
		if (skinned) {
			assert_null(jget(jat(jget(&d.j, "nodes"), 3), "children"));
		} else {
			assert_int_equal(jget(jat(jget(&d.j, "nodes"), 3), "children")->n, 1);
			assert_true(jat(jget(jat(jget(&d.j, "nodes"), 3), "children"), 0)->num ==
				    4);
		}
		glb_close(&d);
		free(g);
		gltf_plan_free(&p);
	}
	free(t);
}

/* A node naming a mesh (instancing: one mesh, many nodes) carries "mesh"; none for a skinned
 * mesh or an index past the meshes; nodes without it carry none. */
static void test_node_mesh(void **state)
{
	struct tm *t = calloc(1, sizeof *t);
	struct gltf_plan p;
	struct glb_doc d;
	uint8_t *g;
	size_t n;
	enum rc r;
	struct tm_ctx c = {&p, t};

	(void)state;
	for (int k = 0; k < 3; k++) {
		const struct jv *nd;

		tm_init(t);
		t->mesh.skinned = k == 2;
		t->nodes[3].mesh = k == 1 ? 99 : 1; /* node 3, the socket */
		t->nodes[2].mesh = 0;
		assert_int_equal(gltf_bounds(&t->m, t), RC_OK);
		assert_int_equal(gltf_plan(&t->m, &p), RC_OK);
		g = glb_whole(&p, tm_render, &c, &n, &r);
		assert_int_equal(r, RC_OK);
		glb_open(g, n, &d);
		nd = jat(jget(&d.j, "nodes"), 3);
		if (k == 0) {
			assert_non_null(jget(nd, "mesh"));
			assert_true(jget(nd, "mesh")->num == 0);
		} else {
			assert_null(jget(nd, "mesh"));
		}
		assert_null(jget(jat(jget(&d.j, "nodes"), 2), "mesh"));
		glb_close(&d);
		free(g);
		gltf_plan_free(&p);
	}
	free(t);
}

/* Line primitives: mode 1, two indices a segment; an odd count is refused. */
static void test_lines(void **state)
{
	struct tm *t = calloc(1, sizeof *t);
	struct gltf_plan p;
	struct glb_doc d;
	uint8_t *g;
	size_t n;
	enum rc r;

	struct tm_ctx c = {&p, t};

	(void)state;
	tm_init(t);
	t->prims[1] = (struct gltf_prim){-1, 2, true}; /* indices 0 1 of the second primitive */
	assert_int_equal(gltf_bounds(&t->m, t), RC_OK);
	assert_int_equal(gltf_plan(&t->m, &p), RC_OK);
	g = glb_whole(&p, tm_render, &c, &n, &r);
	assert_int_equal(r, RC_OK);
	glb_open(g, n, &d);
	assert_int_equal(jnum(jat(jget(jat(jget(&d.j, "meshes"), 0), "primitives"), 1), "mode", -1),
			 1);
	assert_null(jget(jat(jget(jat(jget(&d.j, "meshes"), 0), "primitives"), 0), "mode"));
	glb_close(&d);
	free(g);
	gltf_plan_free(&p);
	tm_init(t);
	t->prims[1] = (struct gltf_prim){-1, 3, true};
	assert_int_equal(gltf_plan(&t->m, &p), RC_INVAL);
	free(t);
}

/* An embedded PNG: its bytes are the streamed PNG's, in an image view with its MIME type. */
static enum rc checker_rows(const void *ctx, uint32_t y0, uint32_t n, uint8_t *px)
{
	(void)ctx;
	for (uint32_t y = 0; y < n; y++)
		for (uint32_t x = 0; x < 5; x++)
			for (int k = 0; k < 3; k++)
				px[(y * 5 + x) * 3 + k] = (uint8_t)(((x + y0 + y) & 1) * 255);
	return RC_OK;
}

static void png_part(const void *ctx, unsigned part, uint64_t *n, uint32_t *sz)
{
	pngs_part(ctx, part, n, sz);
}

static enum rc tex_png_render(const void *ctx, unsigned part, uint64_t first, struct emit *e)
{
	return pngs_render(ctx, part, first, e);
}

static void test_image(void **state)
{
	struct tm *t = calloc(1, sizeof *t);
	struct pngs png;
	struct gltf_image im;
	struct gltf_plan p;
	struct glb_doc d;
	struct emit e;
	struct buf whole_png;
	struct tm_ctx c = {&p, t};
	uint8_t *g;
	size_t n;
	enum rc r;

	(void)state;
	assert_int_equal(pngs_init(&png, 5, 3, false, checker_rows, NULL), RC_OK);
	im = (struct gltf_image){{"checker", 7}, "image/png",	 PNGS_PARTS,
				 png_part,	 tex_png_render, &png};
	tm_init(t);
	t->mat.image = 0;
	t->m.images = &im;
	t->m.n_images = 1;
	assert_int_equal(gltf_bounds(&t->m, t), RC_OK);
	assert_int_equal(gltf_plan(&t->m, &p), RC_OK);
	g = glb_whole(&p, tm_render, &c, &n, &r);
	assert_int_equal(r, RC_OK);
	glb_open(g, n, &d);
	glb_check_views_and_bounds(&d);
	glb_check_ranges(&p, tm_render, &c, g, n);
	buf_init(&whole_png);
	for (unsigned k = 0; k < PNGS_PARTS; k++) {
		emit_init_window(&e, 0, SIZE_MAX);
		assert_int_equal(pngs_render(&png, k, 0, &e), RC_OK);
		buf_put(&whole_png, e.b.data, e.b.len);
		emit_free(&e);
	}
	const struct jv *img = jat(jget(&d.j, "images"), 0);
	const struct jv *bv = jat(jget(&d.j, "bufferViews"), (size_t)jnum(img, "bufferView", -1));

	assert_string_equal(jget(img, "mimeType")->str, "image/png");
	assert_int_equal(jnum(bv, "byteLength", 0), whole_png.len);
	assert_int_equal(pngs_size(&png), whole_png.len);
	assert_memory_equal(d.bin + (size_t)jnum(bv, "byteOffset", 0), whole_png.data,
			    whole_png.len);
	assert_int_equal(jnum(jget(jget(jat(jget(&d.j, "materials"), 0), "pbrMetallicRoughness"),
				   "baseColorTexture"),
			      "index", -1),
			 0);
	assert_int_equal(jnum(jat(jget(&d.j, "textures"), 0), "source", -1), 0);
	buf_free(&whole_png);
	glb_close(&d);
	free(g);
	gltf_plan_free(&p);
	free(t);
}

/* ---- PSK exports ---- */

struct px {
	struct psk_mesh mesh; /* what the generator built, for reference */
	struct buf file;
	struct src s;
	struct src_mem sm;
	struct psk_index ix;
	struct diag notes;
	struct psk_gltf *g;
	uint8_t *glb;
	size_t n;
	struct glb_doc d;
};

static enum rc px_render(void *ctx, unsigned part, uint64_t first, struct emit *e)
{
	struct px *x = ctx;

	return psk_gltf_render(x->g, &x->s, NULL, part, first, e);
}

/* Write the mesh, index it, export it, render the GLB and parse it. */
static void px_export(struct px *x)
{
	struct diag d;
	enum rc r;

	buf_init(&x->file);
	assert_int_equal(psk_write(&x->mesh, &x->file), RC_OK);
	src_init_mem(&x->s, &x->sm, x->file.data, x->file.len);
	diag_init(&d);
	assert_int_equal(psk_index_open(&x->s, &x->ix, &d), RC_OK);
	diag_free(&d);
	diag_init(&x->notes);
	assert_int_equal(psk_gltf_open(&x->s, &x->ix, "mesh", &x->g, &x->notes), RC_OK);
	x->glb = glb_whole(psk_gltf_plan(x->g), px_render, x, &x->n, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(x->n, gltf_size(psk_gltf_plan(x->g)));
	glb_open(x->glb, x->n, &x->d);
	glb_check_views_and_bounds(&x->d);
}

static void px_gen(struct px *x, const struct gen_psk_opts *o)
{
	memset(x, 0, sizeof *x);
	assert_int_equal(gen_psk_mesh(o, &x->mesh), RC_OK);
}

static void px_free(struct px *x)
{
	glb_close(&x->d);
	free(x->glb);
	psk_gltf_free(x->g);
	psk_index_free(&x->ix);
	diag_free(&x->notes);
	buf_free(&x->file);
	psk_mesh_free(&x->mesh);
}

static bool has_note(const struct diag *d, const char *what)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msg[i], what))
			return true;
	return false;
}

/* POSITION is each wedge's point turned Y-up, exactly; UVs are the wedge's. */
static void check_vertices(const struct px *x)
{
	const struct jv *attrs =
	    jget(jat(jget(jat(jget(&x->d.j, "meshes"), 0), "primitives"), 0), "attributes");
	size_t n;
	unsigned c;
	double *P = glb_acc(&x->d, (size_t)jnum(attrs, "POSITION", -1), &n, &c);
	double *T = glb_acc(&x->d, (size_t)jnum(attrs, "TEXCOORD_0", -1), &n, &c);

	assert_int_equal(n, x->mesh.n_wedges);
	for (size_t w = 0; w < n; w++) {
		const struct psk_point *p = &x->mesh.points[x->mesh.wedges[w].point];

		assert_true(P[w * 3] == p->x && P[w * 3 + 1] == p->z && P[w * 3 + 2] == -p->y);
		assert_true(T[w * 2] == x->mesh.wedges[w].u && T[w * 2 + 1] == x->mesh.wedges[w].v);
	}
	free(P);
	free(T);
}

/* One primitive per material, in material order, each its faces in file order with the
 * winding reversed. */
static void check_faces(const struct px *x)
{
	const struct jv *prims = jget(jat(jget(&x->d.j, "meshes"), 0), "primitives");

	for (size_t k = 0; k < prims->n; k++) {
		int mat = (int)jnum(&prims->items[k], "material", -1);
		size_t n, at = 0;
		unsigned c;
		double *I = glb_acc(&x->d, (size_t)jnum(&prims->items[k], "indices", -1), &n, &c);

		for (size_t f = 0; f < x->mesh.n_faces; f++) {
			const struct psk_face *fc = &x->mesh.faces[f];

			if (fc->mat != mat)
				continue;
			assert_true(at + 3 <= n);
			assert_true(I[at] == fc->wedge[0] && I[at + 1] == fc->wedge[2] &&
				    I[at + 2] == fc->wedge[1]);
			at += 3;
		}
		assert_int_equal(at, n);
		free(I);
	}
}

/* Each vertex carries its point's RAWWEIGHTS (the generator writes at most four per point,
 * distinct bones, summing to 1). */
static void check_weights(const struct px *x, const struct jv *attrs)
{
	for (size_t w = 0; w < x->mesh.n_wedges; w++) {
		double got[4][2];
		int n = influences_of(&x->d, attrs, w, got), found = 0;

		for (size_t k = 0; k < x->mesh.n_weights; k++) {
			const struct psk_weight *pw = &x->mesh.weights[k];

			if ((uint32_t)pw->point != x->mesh.wedges[w].point)
				continue;
			for (int i = 0; i < n; i++)
				if (got[i][0] == pw->bone && fabs(got[i][1] - pw->weight) < 1e-6)
					found++;
		}
		assert_int_equal(found, n);
	}
}

static void export_case(const struct gen_psk_opts *o)
{
	struct px x;
	const struct jv *attrs;

	px_gen(&x, o);
	px_export(&x);
	attrs = jget(jat(jget(jat(jget(&x.d.j, "meshes"), 0), "primitives"), 0), "attributes");
	check_bind_pose(&x.d);
	check_vertices(&x);
	check_faces(&x);
	check_influences(&x.d, attrs, x.mesh.n_bones);
	check_weights(&x, attrs);
	if (o->normals)
		check_unit(&x.d, (size_t)jnum(attrs, "NORMAL", -1));
	assert_int_equal(jget(jat(jget(&x.d.j, "skins"), 0), "joints")->n, x.mesh.n_bones);
	assert_int_equal(jget(jat(jget(&x.d.j, "nodes"), 0), "children") != NULL,
			 x.mesh.n_bones > 1 || x.mesh.n_sockets > 0);
	if (x.n < (1u << 20))
		glb_check_ranges(psk_gltf_plan(x.g), px_render, &x, x.glb, x.n);
	px_free(&x);
}

static void test_psk_shapes(void **state)
{
	struct gen_psk_opts o;

	(void)state;
	gen_psk_opts_default(&o, 1);
	o.bones = 1;
	export_case(&o);
	gen_psk_opts_default(&o, 2);
	o.bones = 200;
	o.points = 400;
	o.materials = 5;
	o.normals = true;
	export_case(&o);
	gen_psk_opts_default(&o, 3);
	o.bones = 12;
	o.sockets = 6;
	o.morphs = 5;
	o.colors = true;
	o.extra_uv_sets = 3;
	o.root_parent_minus1 = true;
	export_case(&o);
	gen_psk_opts_default(&o, 4);
	o.bones = 9;
	o.hostile_names = true;
	o.materials = 7;
	export_case(&o);
}

static void psk_scattered(void);

/* More than 65535 vertices: u32 indices; then wedges scattered over their points. */
static void test_psk_wide(void **state)
{
	struct gen_psk_opts o;
	struct px x;

	(void)state;
	gen_psk_opts_default(&o, 5);
	o.bones = 5;
	o.points = 50000;
	px_gen(&x, &o);
	px_export(&x);
	check_bind_pose(&x.d);
	check_faces(&x);
	assert_int_equal(
	    jnum(jat(jget(&x.d.j, "accessors"),
		     (size_t)jnum(jat(jget(jat(jget(&x.d.j, "meshes"), 0), "primitives"), 0),
				  "indices", -1)),
		 "componentType", 0),
	    5125);
	px_free(&x);
	psk_scattered();
}

/* Wedges whose points lie all over a large PSK (and some twice in a batch): each vertex still
 * has its own point (they are gathered sorted, in runs, not read one by one). */
static void psk_scattered(void)
{
	struct gen_psk_opts o;
	struct px x;

	gen_psk_opts_default(&o, 6);
	o.bones = 3;
	o.points = 30000;
	px_gen(&x, &o);
	assert_true(x.mesh.n_wedges > 2048);
	for (size_t w = 0; w < x.mesh.n_wedges; w++)
		x.mesh.wedges[w].point =
		    w % 5 == 4 ? x.mesh.wedges[w - 1].point : (uint32_t)(w * 7919 % o.points);
	px_export(&x);
	check_vertices(&x);
	{ /* the reader under it: records named in ascending order, else RC_INVAL */
		const uint32_t up[] = {5, 9, 9, 4000}, down[] = {9, 5};
		struct psk_point got[4];

		assert_int_equal(psk_get_points_at(&x.s, &x.ix.points, up, 4, got), RC_OK);
		for (int k = 0; k < 4; k++)
			assert_memory_equal(&got[k], &x.mesh.points[up[k]], sizeof got[k]);
		assert_int_equal(psk_get_points_at(&x.s, &x.ix.points, down, 2, got), RC_INVAL);
	}
	px_free(&x);
}

/* Records the export cannot use: dropped or repaired, listed in the notes, and the file is
 * still one the rules accept (bounds, influences, unit normals, bind pose). */
static void test_psk_hostile(void **state)
{
	struct gen_psk_opts o;
	struct px x;
	const struct jv *attrs;

	(void)state;
	gen_psk_opts_default(&o, 6);
	o.bones = 8;
	o.points = 40;
	o.materials = 3;
	o.normals = true;
	o.morphs = 3;
	px_gen(&x, &o);
	x.mesh.wedges[3].point = 9999;	  /* past the points */
	x.mesh.faces[0].wedge[1] = 99999; /* past the wedges: the face goes */
	x.mesh.faces[1].mat = 200;	  /* no such material: default material */
	x.mesh.weights[0].bone = 99;	  /* no such bone */
	x.mesh.weights[1].weight = NAN;
	x.mesh.weights[2].weight = -1;
	x.mesh.weights[3].point = -5;
	x.mesh.points[0].x = NAN;
	x.mesh.points[1].y = INFINITY;
	x.mesh.normals[2] = (struct psk_point){0, 0, 0};
	x.mesh.bones[2].parent = 5; /* after itself */
	x.mesh.bones[3].parent = 3; /* itself */
	memset(x.mesh.bones[1].rot, 0, sizeof x.mesh.bones[1].rot);
	x.mesh.bones[4].pos[1] = NAN;
	x.mesh.deltas[0].point = 999999;
	px_export(&x);
	attrs = jget(jat(jget(jat(jget(&x.d.j, "meshes"), 0), "primitives"), 0), "attributes");
	check_bind_pose(&x.d);
	check_influences(&x.d, attrs, x.mesh.n_bones);
	check_unit(&x.d, (size_t)jnum(attrs, "NORMAL", -1));
	assert_true(has_note(&x.notes, "faces with a wedge out of range left out"));
	assert_true(has_note(&x.notes, "material out of range use the default material"));
	assert_true(has_note(&x.notes, "RAWWEIGHTS records"));
	assert_true(has_note(&x.notes, "bones whose parent is not an earlier bone"));
	assert_true(has_note(&x.notes, "morph deltas"));
	px_free(&x);
}

/* Morphs that would list one point's many wedges over and over are capped, with a note. */
static void test_psk_morph_budget(void **state)
{
	struct gen_psk_opts o;
	struct px x;

	(void)state;
	gen_psk_opts_default(&o, 7);
	o.points = 40;
	o.morphs = 64;
	px_gen(&x, &o);
	for (size_t w = 0; w < x.mesh.n_wedges; w++)
		x.mesh.wedges[w].point = 0;
	for (size_t d = 0; d < x.mesh.n_deltas; d++)
		x.mesh.deltas[d].point = 0;
	px_export(&x);
	assert_true(has_note(&x.notes, "left out: they would move"));
	/* 16 per delta (one per morph once deduplicated) plus the wedges, n_wedges per target */
	assert_int_equal(jget(jget(jat(jget(&x.d.j, "meshes"), 0), "extras"), "targetNames")->n,
			 (16 * 64 + x.mesh.n_wedges) / x.mesh.n_wedges);
	px_free(&x);
}

/* ---- PSA exports ---- */

struct pa {
	struct psa_anim anim;
	struct buf file;
	struct src s;
	struct src_mem sm;
	struct psa_index ix;
	struct psk_gltf *g;
	uint8_t *glb;
	size_t n;
	struct glb_doc d;
};

static enum rc pa_render(void *ctx, unsigned part, uint64_t first, struct emit *e)
{
	struct pa *x = ctx;

	return psk_gltf_render(x->g, &x->s, NULL, part, first, e);
}

/* A cache for key blocks that keeps everything (tests only): entries by key. */
struct tcache {
	uint64_t key[256];
	void *data[256];
	void (*dtor[256])(void *);
	size_t n, loads, hits;
};

static void *tcache_get(void *ctx, uint64_t key, psk_gltf_load_fn load, const void *arg, void **pin,
			enum rc *r)
{
	struct tcache *t = ctx;
	size_t bytes;

	*pin = NULL;
	assert_true(key < (1ull << PSK_GLTF_KEY_BITS));
	for (size_t i = 0; i < t->n; i++)
		if (t->key[i] == key) {
			t->hits++;
			return t->data[i];
		}
	assert_true(t->n < 256);
	*r = load(arg, &t->data[t->n], &bytes, &t->dtor[t->n]);
	if (*r != RC_OK)
		return NULL;
	t->loads++;
	t->key[t->n] = key;
	return t->data[t->n++];
}

static void tcache_put(void *ctx, void *pin)
{
	(void)ctx;
	(void)pin;
}

static void tcache_free(struct tcache *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->dtor[i](t->data[i]);
	memset(t, 0, sizeof *t);
}

struct pa_cached {
	struct pa *x;
	struct psk_gltf_cache cache;
};

static enum rc pa_render_cached(void *ctx, unsigned part, uint64_t first, struct emit *e)
{
	struct pa_cached *pc = ctx;

	return psk_gltf_render(pc->x->g, &pc->x->s, &pc->cache, part, first, e);
}

/* Rendered through a cache of key blocks, by ranges: the same bytes, each block loaded once. */
static void check_cached(struct pa *x)
{
	struct tcache t = {0};
	struct pa_cached pc = {x, {tcache_get, tcache_put, &t}};
	size_t n;
	enum rc r;
	uint8_t *g = glb_whole(psk_gltf_plan(x->g), pa_render_cached, &pc, &n, &r);

	assert_int_equal(r, RC_OK);
	assert_int_equal(n, x->n);
	assert_memory_equal(g, x->glb, n);
	glb_check_ranges(psk_gltf_plan(x->g), pa_render_cached, &pc, x->glb, x->n);
	assert_true(t.loads > 0 && t.hits > 0);
	free(g);
	tcache_free(&t);
}

static void pa_export(struct pa *x, int64_t seq)
{
	enum rc r;

	assert_int_equal(psa_gltf_open(&x->s, &x->ix, "anim", seq, &x->g), RC_OK);
	x->glb = glb_whole(psk_gltf_plan(x->g), pa_render, x, &x->n, &r);
	assert_int_equal(r, RC_OK);
	assert_int_equal(x->n, gltf_size(psk_gltf_plan(x->g)));
	glb_open(x->glb, x->n, &x->d);
	glb_check_views_and_bounds(&x->d);
	glb_check_ranges(psk_gltf_plan(x->g), pa_render, x, x->glb, x->n);
}

static void pa_close(struct pa *x)
{
	glb_close(&x->d);
	free(x->glb);
	psk_gltf_free(x->g);
	x->g = NULL;
	x->glb = NULL;
}

/* A key as docs/gltf.md converts it: bone 0 plain and turned Y-up, the others conjugated. */
static void ref_key(size_t bone, const struct psa_key *k, double t[3], double q[4])
{
	double x = k->rot[0], y = k->rot[1], z = k->rot[2], w = k->rot[3], len;

	if (bone == 0) {
		double s = sqrt(0.5); /* (-s, 0, 0, s) x q */

		t[0] = k->pos[0], t[1] = k->pos[2], t[2] = -k->pos[1];
		q[0] = s * x - s * w;
		q[1] = s * y + s * z;
		q[2] = s * z - s * y;
		q[3] = s * w + s * x;
	} else {
		t[0] = k->pos[0], t[1] = k->pos[1], t[2] = k->pos[2];
		q[0] = -x, q[1] = -y, q[2] = -z, q[3] = w;
	}
	len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	for (int i = 0; i < 4; i++)
		q[i] /= len;
}

static void check_sequence(struct pa *x, size_t ai, size_t seq)
{
	const struct jv *an = jat(jget(&x->d.j, "animations"), ai);
	const struct psa_sequence *sq = &x->anim.seqs[seq];
	size_t nb = x->anim.n_bones, np = x->anim.n_scale_keys ? 3 : 2, n;
	unsigned c;
	double *T = NULL;

	assert_non_null(an);
	assert_int_equal(jget(an, "channels")->n, nb * np);
	T = glb_acc(&x->d, (size_t)jnum(jat(jget(an, "samplers"), 0), "input", -1), &n, &c);
	assert_int_equal(n, (size_t)sq->num_raw_frames);
	for (size_t f = 0; f < n; f++)
		assert_true(T[f] == (float)((double)f / sq->anim_rate));
	free(T);
	for (size_t k = 0; k < nb; k++)
		for (size_t q = 0; q < np; q++) {
			const struct jv *ch = jat(jget(an, "channels"), k * np + q);
			double *V = glb_acc(
			    &x->d,
			    (size_t)jnum(jat(jget(an, "samplers"), (size_t)jnum(ch, "sampler", -1)),
					 "output", -1),
			    &n, &c);

			assert_int_equal(jnum(jget(ch, "target"), "node", -1), k);
			for (size_t f = 0; f < n; f++) {
				const struct psa_key *key = psa_key_at(&x->anim, seq, f, k);
				double t[3], r[4];

				ref_key(k, key, t, r);
				for (unsigned i = 0; i < c; i++) {
					double want =
					    q == 0 ? t[i]
					    : q == 1
						? r[i]
						: psa_scale_key_at(&x->anim, seq, f, k)->scale[i];

					assert_true(fabs(V[f * c + i] - want) <= 1e-6);
				}
			}
			free(V);
		}
}

static void psa_case(const struct gen_psa_opts *o)
{
	struct pa x;
	struct diag d;

	memset(&x, 0, sizeof x);
	assert_int_equal(gen_psa_anim(o, &x.anim), RC_OK);
	buf_init(&x.file);
	assert_int_equal(psa_write(&x.anim, &x.file), RC_OK);
	src_init_mem(&x.s, &x.sm, x.file.data, x.file.len);
	diag_init(&d);
	assert_int_equal(psa_index_open(&x.s, &x.ix, &d), RC_OK);
	diag_free(&d);
	pa_export(&x, -1);
	check_cached(&x);
	assert_int_equal(jget(&x.d.j, "animations")->n, x.anim.n_seqs);
	assert_int_equal(jget(jat(jget(&x.d.j, "skins"), 0), "joints")->n, x.anim.n_bones);
	for (size_t s = 0; s < x.anim.n_seqs; s++)
		check_sequence(&x, s, s);
	pa_close(&x);
	for (size_t s = 0; s < x.anim.n_seqs; s++) {
		pa_export(&x, (int64_t)s);
		assert_int_equal(jget(&x.d.j, "animations")->n, 1);
		check_sequence(&x, 0, s);
		pa_close(&x);
	}
	psa_index_free(&x.ix);
	buf_free(&x.file);
	psa_anim_free(&x.anim);
}

static void test_psa(void **state)
{
	struct gen_psa_opts o;

	(void)state;
	gen_psa_opts_default(&o, 11);
	o.bones = 6;
	o.sequences = 3;
	o.max_frames = 9;
	psa_case(&o);
	gen_psa_opts_default(&o, 12);
	o.bones = 30;
	o.sequences = 2;
	o.max_frames = 70;
	o.scale_keys = true;
	o.hostile_names = true;
	psa_case(&o);
	gen_psa_opts_default(&o, 14);
	o.bones = 70; /* two blocks of bones */
	o.sequences = 2;
	o.max_frames = 600; /* and several of frames */
	o.scale_keys = true;
	psa_case(&o);
}

/* Sequences without their keys are left out of the export, with a note; the rest stays. */
static void test_psa_missing_keys(void **state)
{
	struct gen_psa_opts o;
	struct pa x;
	struct diag d, notes;

	(void)state;
	memset(&x, 0, sizeof x);
	gen_psa_opts_default(&o, 13);
	o.sequences = 3;
	assert_int_equal(gen_psa_anim(&o, &x.anim), RC_OK);
	x.anim.seqs[1].first_raw_frame = 100000; /* keys past ANIMKEYS */
	x.anim.seqs[2].anim_rate = NAN;		 /* 30 fps assumed */
	buf_init(&x.file);
	assert_int_equal(psa_write(&x.anim, &x.file), RC_OK);
	src_init_mem(&x.s, &x.sm, x.file.data, x.file.len);
	diag_init(&d);
	assert_int_equal(psa_index_open(&x.s, &x.ix, &d), RC_OK);
	diag_free(&d);
	diag_init(&notes);
	psa_gltf_notes(&x.ix, &notes);
	assert_true(has_note(&notes, "sequence 1 left out"));
	assert_true(has_note(&notes, "sequence 2: anim rate not usable"));
	diag_free(&notes);
	pa_export(&x, -1);
	assert_int_equal(jget(&x.d.j, "animations")->n, 2);
	pa_close(&x);
	pa_export(&x, 1); /* the skeleton alone */
	assert_null(jget(&x.d.j, "animations"));
	pa_close(&x);
	psa_index_free(&x.ix);
	buf_free(&x.file);
	psa_anim_free(&x.anim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_escape),
	    cmocka_unit_test(test_model),
	    cmocka_unit_test(test_bounds_later),
	    cmocka_unit_test(test_model_refusals),
	    cmocka_unit_test(test_common_root),
	    cmocka_unit_test(test_mesh_under),
	    cmocka_unit_test(test_node_mesh),
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_image),
	    cmocka_unit_test(test_psk_shapes),
	    cmocka_unit_test(test_psk_wide),
	    cmocka_unit_test(test_psk_hostile),
	    cmocka_unit_test(test_psk_morph_budget),
	    cmocka_unit_test(test_psa),
	    cmocka_unit_test(test_psa_missing_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
