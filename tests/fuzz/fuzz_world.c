/*
 * District world-object harness (docs/worlds.md, "DMOData", "SplineData", "ClusteredMesh"):
 * the input as each object. Invariants: records read fit in the object and never exceed the
 * claimed counts; every rail chain is a run of distinct segments; the triangles decode in any
 * range, the same ones whole or in pieces, finite, and their per-surface counts add up; what
 * was read writes back to bytes that parse to the same values. Broken invariants abort.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/world_objects.h"

static void fw_fail(const char *what)
{
	fprintf(stderr, "fuzz_world: %s\n", what);
	abort();
}

static void fw_dmo(const uint8_t *p, size_t n)
{
	struct wo_dmos m, m2;
	struct wo_dmo_header h = {0};
	struct diag d;
	struct buf b;

	diag_init(&d);
	if (wo_dmo_parse(p, n, &m, &d) != RC_OK) {
		if (m.n || m.v)
			fw_fail("DMO: a failed parse left records");
		diag_free(&d);
		return;
	}
	if (m.n > m.h.count || (m.n && (m.h.recs_off > n || m.n > (n - m.h.recs_off) / WO_DMO_REC)))
		fw_fail("DMO: more records than the object holds or claims");
	for (uint32_t i = 0; i < m.n; i++) {
		const struct wo_dmo *x = &m.v[i];

		if (!memchr(x->name, 0, sizeof x->name))
			fw_fail("DMO: a name not terminated");
		for (int k = 0; k < 3; k++)
			if (!isfinite(x->pos[k]) || !isfinite(x->scale[k]) || !isfinite(x->rot[k]))
				fw_fail("DMO: a decomposition not finite");
	}
	buf_init(&b);
	if (wo_dmo_write(&h, m.v, m.n, &b) != RC_OK || wo_dmo_parse(b.data, b.len, &m2, NULL) ||
	    m2.n != m.n)
		fw_fail("DMO: round trip fails");
	for (uint32_t i = 0; i < m.n; i++)
		if (memcmp(m2.v[i].m, m.v[i].m, sizeof m.v[i].m) ||
		    m2.v[i].template_id != m.v[i].template_id ||
		    strcmp(m2.v[i].name, m.v[i].name) ||
		    (m2.v[i].flags & ~WO_F_NAME) != (m.v[i].flags & ~WO_F_NAME))
			fw_fail("DMO: round trip differs");
	wo_dmo_free(&m2);
	buf_free(&b);
	wo_dmo_free(&m);
	diag_free(&d);
}

static void fw_spline(const uint8_t *p, size_t n)
{
	struct wo_splines s, s2;
	struct wo_rail_in *in;
	float(*pts)[3];
	uint8_t *seen;
	uint32_t total = 0, at = 0;
	struct diag d;
	struct buf b;

	diag_init(&d);
	if (wo_spline_parse(p, n, &s, &d) != RC_OK) {
		if (s.rails || s.nsegs)
			fw_fail("spline: a failed parse left records");
		diag_free(&d);
		return;
	}
	if (s.nrails > s.h.nsplines || s.nsegs > s.h.nsegments || s.norder > s.nsegs ||
	    (s.nrails && (uint64_t)s.h.splines_off + (uint64_t)s.nrails * WO_SPLINE_REC > n) ||
	    (s.nsegs &&
	     (uint64_t)s.h.segments_off + (uint64_t)(s.nsegs - 1) * s.seg_stride + WO_SEG_FIELDS >
		 n))
		fw_fail("spline: more records than the object holds or claims");
	seen = calloc(s.nsegs + 1, 1);
	in = calloc(s.nrails + 1, sizeof *in);
	pts = calloc(s.norder + s.nrails + 1, sizeof *pts);
	if (!seen || !in || !pts)
		fw_fail("spline: out of memory");
	for (uint32_t i = 0; i < s.nrails; i++) {
		const struct wo_rail *r = &s.rails[i];

		if (r->first != total || r->count > s.norder - total)
			fw_fail("spline: chains not one after another");
		in[i].points = (const float(*)[3])pts + at;
		for (uint32_t k = 0; k < r->count; k++) {
			uint32_t g = s.order[r->first + k];

			if (g >= s.nsegs || seen[g]++)
				fw_fail("spline: a segment twice in the chains");
			memcpy(pts[at++], s.segs[g].start, sizeof pts[0]);
			if (k + 1 == r->count)
				memcpy(pts[at++], s.segs[g].end, sizeof pts[0]);
		}
		in[i].npoints = r->count ? r->count + 1 : 0;
		total += r->count;
	}
	if (total != s.norder)
		fw_fail("spline: chains do not add up");
	/* the chains as polylines write back to the same chains */
	buf_init(&b);
	if (wo_spline_write(in, s.nrails, &b) != RC_OK ||
	    wo_spline_parse(b.data, b.len, &s2, NULL) != RC_OK || s2.nrails != s.nrails ||
	    s2.norder != s.norder || !s2.offsets)
		fw_fail("spline: round trip fails");
	for (uint32_t i = 0; i < s.nrails; i++)
		if (s2.rails[i].count != s.rails[i].count || (s2.rails[i].flags & WO_F_CYCLE))
			fw_fail("spline: round trip differs");
	wo_spline_free(&s2);
	buf_free(&b);
	free(seen);
	free(in);
	free(pts);
	wo_spline_free(&s);
	diag_free(&d);
}

static void fw_cmesh(const uint8_t *p, size_t n)
{
	struct wo_cmesh m, m2;
	struct wo_surface_count *sc;
	struct wo_tri_in *in;
	struct wo_tri *t, one;
	uint32_t nsc, got;
	uint64_t sum = 0;
	struct diag d;
	struct buf b;

	diag_init(&d);
	if (wo_cmesh_parse(p, n, &m, &d) != RC_OK) {
		if (m.data || m.cl)
			fw_fail("cmesh: a failed parse left data");
		diag_free(&d);
		return;
	}
	if (m.ncl > m.num_clusters || (m.ncl && (uint64_t)m.clusters_off + 4ull * m.ncl > n) ||
	    m.kd_reached > m.kd_nodes || m.ncl > n / WO_CL_HDR)
		fw_fail("cmesh: more clusters or nodes than the object holds or claims");
	/* clusters do not share unit bytes, and a unit of 4 bytes or more holds 2 triangles
	 * at most */
	if (m.ntris > n / 2)
		fw_fail("cmesh: more triangles than the object's bytes can hold");
	t = calloc(m.ntris + 1, sizeof *t);
	in = calloc(m.ntris + 1, sizeof *in);
	if (!t || !in)
		fw_fail("cmesh: out of memory");
	got = wo_cmesh_tris(&m, 0, m.ntris, t);
	if (got != m.ntris)
		fw_fail("cmesh: fewer triangles than counted");
	for (uint32_t i = 0; i < got; i++) {
		for (int v = 0; v < 3; v++)
			for (int k = 0; k < 3; k++)
				if (!isfinite(t[i].v[v][k]))
					fw_fail("cmesh: a vertex not finite");
		if (i % 31 == 0 &&
		    (wo_cmesh_tris(&m, i, 1, &one) != 1 || memcmp(&one.v, &t[i].v, sizeof one.v) ||
		     one.surface != t[i].surface))
			fw_fail("cmesh: a triangle alone differs");
		memcpy(in[i].v, t[i].v, sizeof in[i].v);
		in[i].surface = t[i].surface;
	}
	if (wo_cmesh_surfaces(&m, &sc, &nsc) != RC_OK)
		fw_fail("cmesh: surfaces fail");
	for (uint32_t i = 0; i < nsc; i++) {
		if (i && sc[i].id <= sc[i - 1].id)
			fw_fail("cmesh: surfaces not ascending");
		sum += sc[i].tris;
	}
	if (sum != m.ntris)
		fw_fail("cmesh: surface counts do not add up");
	free(sc);
	/* floats (granularity 0) write back exactly */
	buf_init(&b);
	if (got <= 84u * 0x10000 && (wo_cmesh_write(in, got, 0, &b) != RC_OK ||
				     wo_cmesh_parse(b.data, b.len, &m2, NULL) != RC_OK ||
				     m2.ntris != got || m2.kd_cycle || m2.kd_leaf_entries != got))
		fw_fail("cmesh: round trip fails");
	if (got <= 84u * 0x10000) {
		if (wo_cmesh_tris(&m2, 0, got, t) != got)
			fw_fail("cmesh: round trip loses triangles");
		for (uint32_t i = 0; i < got; i++)
			if (memcmp(t[i].v, in[i].v, sizeof t[i].v) || t[i].surface != in[i].surface)
				fw_fail("cmesh: round trip differs");
		wo_cmesh_free(&m2);
	}
	buf_free(&b);
	free(t);
	free(in);
	wo_cmesh_free(&m);
	diag_free(&d);
}

int fuzz_one_world(const uint8_t *p, size_t n)
{
	struct wo_cmodel cm;

	fw_dmo(p, n);
	fw_spline(p, n);
	fw_cmesh(p, n);
	(void)wo_cmodel_parse(p, n, &cm);
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	return fuzz_one_world(p, n);
}
#endif
