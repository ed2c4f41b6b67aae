/*
 * Test helpers for GLB files: render a plan whole or by byte range the way the tree does,
 * check the container (header, chunk lengths, 4-byte alignment, padding), parse the JSON and
 * read accessors back (dense or sparse).
 */
#ifndef PSGFS_TEST_GLB_TESTUTIL_H
#define PSGFS_TEST_GLB_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json_mini.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/gltf.h"

/* Renders part `part` of a GLB from item `first` (gltf_render with the caller's context). */
typedef enum rc (*glb_render_fn)(void *ctx, unsigned part, uint64_t first, struct emit *e);

/* Bytes of part i (the JSON part's from the plan). */
static uint64_t glb_part_size(const struct gltf_plan *p, unsigned i)
{
	uint64_t n;
	uint32_t sz;

	gltf_part(p, i, &n, &sz);
	return sz ? n * sz : p->json_len;
}

/* Render bytes [off, off+len) of the file as the tree would: each part from the item that
 * holds the first byte wanted (the JSON part from item 0). */
static enum rc glb_range(const struct gltf_plan *p, glb_render_fn fn, void *ctx, uint64_t off,
			 size_t len, uint8_t *out)
{
	uint64_t at = 0, end = off + len;

	for (unsigned i = 0; i < gltf_n_parts(p) && at < end; i++) {
		uint64_t size = glb_part_size(p, i), a = off > at ? off : at,
			 b = end < at + size ? end : at + size, n, first = 0, start = 0;
		uint32_t sz;
		struct emit e;
		enum rc r;

		if (a < b) {
			gltf_part(p, i, &n, &sz);
			if (sz) {
				first = (a - at) / sz;
				start = first * sz;
			}
			emit_init_window(&e, first, (size_t)(b - at - start));
			r = fn(ctx, i, first, &e);
			if (r == RC_OK && e.b.len < b - at - start)
				r = RC_IO;
			if (r == RC_OK)
				memcpy(out + (a - off), e.b.data + (a - at - start),
				       (size_t)(b - a));
			emit_free(&e);
			if (r != RC_OK)
				return r;
		}
		at += size;
	}
	return RC_OK;
}

/* The whole file, part by part, every item of each. */
static uint8_t *glb_whole(const struct gltf_plan *p, glb_render_fn fn, void *ctx, size_t *len,
			  enum rc *rc)
{
	struct buf all;

	buf_init(&all);
	*rc = RC_OK;
	for (unsigned i = 0; i < gltf_n_parts(p) && *rc == RC_OK; i++) {
		struct emit e;

		emit_init_window(&e, 0, SIZE_MAX);
		*rc = fn(ctx, i, 0, &e);
		if (e.b.len)
			buf_put(&all, e.b.data, e.b.len);
		emit_free(&e);
	}
	if (*rc != RC_OK) {
		buf_free(&all);
		return NULL;
	}
	return buf_steal(&all, len);
}

struct glb_doc {
	struct jv j;
	const uint8_t *bin;
	size_t bin_len;
};

/* Check the container and parse the JSON (cmocka assertions). */
static void glb_open(const uint8_t *p, size_t n, struct glb_doc *d)
{
	uint32_t jl, bl;

	memset(d, 0, sizeof *d);
	assert_true(n >= 20);
	assert_int_equal(ld_u32le(p), 0x46546C67);
	assert_int_equal(ld_u32le(p + 4), 2);
	assert_int_equal(ld_u32le(p + 8), n);
	jl = ld_u32le(p + 12);
	assert_int_equal(ld_u32le(p + 16), 0x4E4F534A);
	assert_int_equal(jl % 4, 0);
	assert_true(20 + (uint64_t)jl <= n);
	assert_true(json_parse((const char *)p + 20, jl, &d->j)); /* padding is JSON whitespace */
	if (20 + jl == n)
		return;
	assert_true(20 + (uint64_t)jl + 8 <= n);
	bl = ld_u32le(p + 20 + jl);
	assert_int_equal(ld_u32le(p + 24 + jl), 0x004E4942);
	assert_int_equal(bl % 4, 0);
	assert_int_equal(28 + (uint64_t)jl + bl, n);
	d->bin = p + 28 + jl;
	d->bin_len = bl;
	assert_int_equal(jnum(jat(jget(&d->j, "buffers"), 0), "byteLength", -1), bl);
}

static void glb_close(struct glb_doc *d)
{
	jv_free(&d->j);
}

static unsigned glb_ncomp(const char *type)
{
	return !strcmp(type, "SCALAR") ? 1
	       : !strcmp(type, "VEC2") ? 2
	       : !strcmp(type, "VEC3") ? 3
	       : !strcmp(type, "VEC4") ? 4
				       : 16;
}

static double glb_comp(const uint8_t *p, unsigned ctype)
{
	switch (ctype) {
	case 5121:
		return p[0];
	case 5123:
		return ld_u16le(p);
	case 5125:
		return ld_u32le(p);
	default:
		return f32_from_bits(ld_u32le(p));
	}
}

static unsigned glb_csize(unsigned ctype)
{
	return ctype == 5121 ? 1 : ctype == 5123 ? 2 : 4;
}

/* Accessor i as doubles (count x ncomp), sparse values applied; checks it fits its view. */
static double *glb_acc(const struct glb_doc *d, size_t i, size_t *count, unsigned *ncomp)
{
	const struct jv *a = jat(jget(&d->j, "accessors"), i), *sp;
	unsigned ct, nc, cs;
	size_t n;
	double *v;

	assert_non_null(a);
	ct = (unsigned)jnum(a, "componentType", 0);
	nc = glb_ncomp(jget(a, "type")->str);
	cs = glb_csize(ct);
	n = (size_t)jnum(a, "count", 0);
	v = calloc(n * nc + 1, sizeof *v);
	assert_non_null(v);
	if (jget(a, "bufferView")) {
		const struct jv *bv =
		    jat(jget(&d->j, "bufferViews"), (size_t)jnum(a, "bufferView", 0));
		uint64_t off =
		    (uint64_t)jnum(bv, "byteOffset", 0) + (uint64_t)jnum(a, "byteOffset", 0);

		assert_true((uint64_t)jnum(a, "byteOffset", 0) + (uint64_t)n * nc * cs <=
			    (uint64_t)jnum(bv, "byteLength", 0));
		assert_true(off + (uint64_t)n * nc * cs <= d->bin_len);
		for (size_t k = 0; k < n * nc; k++)
			v[k] = glb_comp(d->bin + off + k * cs, ct);
	}
	if ((sp = jget(a, "sparse")) != NULL) {
		size_t sn = (size_t)jnum(sp, "count", 0);
		const struct jv *si = jget(sp, "indices"), *sv = jget(sp, "values");
		uint64_t io = (uint64_t)jnum(
			     jat(jget(&d->j, "bufferViews"), (size_t)jnum(si, "bufferView", 0)),
			     "byteOffset", 0),
			 vo = (uint64_t)jnum(
			     jat(jget(&d->j, "bufferViews"), (size_t)jnum(sv, "bufferView", 0)),
			     "byteOffset", 0);
		unsigned ict = (unsigned)jnum(si, "componentType", 0);

		for (size_t k = 0; k < sn; k++) {
			size_t at = (size_t)glb_comp(d->bin + io + k * glb_csize(ict), ict);

			assert_true(at < n);
			for (unsigned c = 0; c < nc; c++)
				v[at * nc + c] = glb_comp(d->bin + vo + (k * nc + c) * cs, ct);
		}
	}
	*count = n;
	*ncomp = nc;
	return v;
}

/*
 * Every buffer view starts 4-byte aligned and fits the buffer; every accessor with min/max
 * states exactly the bounds of its elements.
 */
static void glb_check_views_and_bounds(const struct glb_doc *d)
{
	const struct jv *views = jget(&d->j, "bufferViews"), *accs = jget(&d->j, "accessors");

	for (size_t i = 0; views && i < views->n; i++) {
		uint64_t off = (uint64_t)jnum(&views->items[i], "byteOffset", 0),
			 len = (uint64_t)jnum(&views->items[i], "byteLength", 0);

		assert_int_equal(off % 4, 0);
		assert_true(len > 0 && off + len <= d->bin_len);
	}
	for (size_t i = 0; accs && i < accs->n; i++) {
		const struct jv *mn = jget(&accs->items[i], "min"),
				*mx = jget(&accs->items[i], "max");
		size_t n;
		unsigned nc;
		double *v;

		if (!mn)
			continue;
		v = glb_acc(d, i, &n, &nc);
		for (unsigned c = 0; c < nc; c++) {
			double lo = INFINITY, hi = -INFINITY;

			for (size_t k = 0; k < n; k++) {
				lo = v[k * nc + c] < lo ? v[k * nc + c] : lo;
				hi = v[k * nc + c] > hi ? v[k * nc + c] : hi;
			}
			assert_true(jat(mn, c)->num == lo);
			assert_true(jat(mx, c)->num == hi);
		}
		free(v);
	}
}

/* Rendered by ranges (several window sizes and starts) equals rendered whole. */
static void glb_check_ranges(const struct gltf_plan *p, glb_render_fn fn, void *ctx,
			     const uint8_t *whole, size_t n)
{
	static const size_t lens[] = {1, 3, 7, 64, 1000, 4096, 70000};
	uint8_t *buf = malloc(70000);

	assert_non_null(buf);
	for (size_t k = 0; k < sizeof lens / sizeof *lens; k++)
		for (uint64_t off = k; off < n; off += lens[k] * 3 + 5 + n / 300) {
			size_t len = n - off < lens[k] ? (size_t)(n - off) : lens[k];

			assert_int_equal(glb_range(p, fn, ctx, off, len, buf), RC_OK);
			assert_memory_equal(buf, whole + off, len);
		}
	free(buf);
}

/* ---- skins ---- */

/* Column-major T x R x S of a JSON node, in double. */
static void node_local(const struct jv *nd, double m[16])
{
	const struct jv *t = jget(nd, "translation"), *r = jget(nd, "rotation"),
			*s = jget(nd, "scale");
	double x = r ? jat(r, 0)->num : 0, y = r ? jat(r, 1)->num : 0, z = r ? jat(r, 2)->num : 0,
	       w = r ? jat(r, 3)->num : 1;
	double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),	 2 * (x * z - y * w),
		       2 * (x * y - z * w),	1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
		       2 * (x * z + y * w),	2 * (y * z - x * w),	 1 - 2 * (x * x + y * y)};

	for (int c = 0; c < 3; c++) {
		double sc = s ? jat(s, (size_t)c)->num : 1;

		for (int k = 0; k < 3; k++)
			m[c * 4 + k] = R[c * 3 + k] * sc;
		m[c * 4 + 3] = 0;
		m[12 + c] = t ? jat(t, (size_t)c)->num : 0;
	}
	m[15] = 1;
}

static void mat_mul(const double a[16], const double b[16], double o[16])
{
	double t[16];

	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 4; r++) {
			t[c * 4 + r] = 0;
			for (int k = 0; k < 4; k++)
				t[c * 4 + r] += a[k * 4 + r] * b[c * 4 + k];
		}
	memcpy(o, t, sizeof t);
}

/* World matrices of every node, from the JSON's TRS and children lists alone. */
static double *node_worlds(const struct glb_doc *d)
{
	const struct jv *nodes = jget(&d->j, "nodes");
	size_t n = nodes->n;
	long *parent = malloc(n * sizeof *parent);
	double *w = calloc(n * 16, sizeof *w);
	bool *done = calloc(n, 1);
	bool more = true;

	for (size_t i = 0; i < n; i++)
		parent[i] = -1;
	for (size_t i = 0; i < n; i++) {
		const struct jv *ch = jget(&nodes->items[i], "children");

		for (size_t k = 0; ch && k < ch->n; k++) {
			assert_int_equal(parent[(size_t)ch->items[k].num], -1); /* a tree */
			parent[(size_t)ch->items[k].num] = (long)i;
		}
	}
	while (more) { /* any order: a node is done once its parent is */
		more = false;
		for (size_t i = 0; i < n; i++) {
			double l[16];

			if (done[i] || (parent[i] >= 0 && !done[parent[i]])) {
				more |= !done[i];
				continue;
			}
			node_local(&nodes->items[i], l);
			if (parent[i] >= 0)
				mat_mul(&w[parent[i] * 16], l, &w[i * 16]);
			else
				memcpy(&w[i * 16], l, sizeof l);
			done[i] = true;
		}
	}
	free(parent);
	free(done);
	return w;
}

/*
 * The numeric proof that skin and hierarchy agree: every vertex of a mesh skinned in the bind
 * pose (sum of weight x joint world x inverse bind x position) is the vertex itself.
 */
static void check_bind_pose_mesh(const struct glb_doc *d, size_t mesh)
{
	const struct jv *skin = jat(jget(&d->j, "skins"), 0), *joints = jget(skin, "joints");
	const struct jv *attrs =
	    jget(jat(jget(jat(jget(&d->j, "meshes"), mesh), "primitives"), 0), "attributes");
	size_t nv, n2, nj;
	unsigned c;
	double *W = node_worlds(d), worst = 0, scale = 1;
	double *ibm = glb_acc(d, (size_t)jnum(skin, "inverseBindMatrices", -1), &nj, &c);
	double *P = glb_acc(d, (size_t)jnum(attrs, "POSITION", -1), &nv, &c);
	double *J = glb_acc(d, (size_t)jnum(attrs, "JOINTS_0", -1), &n2, &c);
	double *Wt = glb_acc(d, (size_t)jnum(attrs, "WEIGHTS_0", -1), &n2, &c);

	assert_int_equal(nj, joints->n);
	for (size_t v = 0; v < nv * 3; v++)
		scale = fmax(scale, fabs(P[v]));
	for (size_t v = 0; v < nv; v++) {
		double out[3] = {0, 0, 0};

		for (int k = 0; k < 4; k++) {
			size_t j = (size_t)J[v * 4 + k];
			double m[16];

			mat_mul(&W[(size_t)joints->items[j].num * 16], &ibm[j * 16], m);
			for (int r = 0; r < 3; r++)
				out[r] +=
				    Wt[v * 4 + k] * (m[r] * P[v * 3] + m[4 + r] * P[v * 3 + 1] +
						     m[8 + r] * P[v * 3 + 2] + m[12 + r]);
		}
		for (int r = 0; r < 3; r++)
			worst = fmax(worst, fabs(out[r] - P[v * 3 + r]));
	}
	/* Float precision: inverse binds are rounded once, weights sum to 1 within 2^-23. */
	assert_true(worst <= 4e-6 * scale);
	free(W);
	free(ibm);
	free(P);
	free(J);
	free(Wt);
}

/* check_bind_pose_mesh for every mesh of the file. */
static void check_bind_pose(const struct glb_doc *d)
{
	const struct jv *meshes = jget(&d->j, "meshes");

	for (size_t k = 0; meshes && k < meshes->n; k++)
		check_bind_pose_mesh(d, k);
}

#endif
