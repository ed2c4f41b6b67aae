/*
 * Mutants of generated districts (issue 30) through the district parsers, no FUSE: every
 * manifest (CMAP, CSPA, MMAP) and every Sim arena of psgfs-gen district, PS3 and Xbox 360, for
 * every --broken kind, mutated a few hundred ways each (lying counts, offsets and sizes at the
 * header words, NaN and infinite floats, one record's id copied over another's parent, links
 * and KD-tree words aimed back at the start, bytes flipped, truncations), and each mutant
 * parsed as psgfs would: the manifest parser of its magic (then the parent walk and a lookup),
 * or the arena, its bounds (ss_arena_bounds) and each world object it holds (DMOData,
 * SplineData, ClusteredMesh with its triangles and surfaces, CollisionModelData).
 *
 * Nothing may crash or hang (ASan and UBSan in that build), and memory stays bounded as in
 * test_hostile: allocations are counted through -Wl,--wrap; no single request may exceed
 * 4 MiB + 64 x the input's size, nor the live heap grow by more than 16 MiB + 64 x it while
 * one mutant is parsed, and everything is freed after. The figures are printed.
 *
 * Under AddressSanitizer every fourth mutant is checked (tests/README.md, "Keeping the suite
 * fast"); the plain build checks them all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitizer.h"
#include "psgfs/base/bytes.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/stream_manifest.h"
#include "psgfs/formats/stream_set.h"
#include "psgfs/formats/world_objects.h"
#include "psgfs/gen/gen_district.h"

#define WH_MAX_ALLOC(n) ((size_t)4 * 1024 * 1024 + 64 * (size_t)(n))
#define WH_MAX_PEAK(n)	((size_t)16 * 1024 * 1024 + 64 * (size_t)(n))
#define WH_MUTANTS	160 /* per input */
#if PSGFS_ASAN
#define WH_STEP 4
#else
#define WH_STEP 1
#endif

#include "alloc_count.h"

/* ---- the inputs: a district's manifests and Sim arenas ---- */

enum wh_kind { WH_MANIFEST, WH_ARENA, WH_OBJECT };

struct wh_input {
	enum wh_kind kind;
	enum sm_platform pf;
	uint32_t type;		      /* WH_OBJECT: its arena type id */
	uint32_t kd_branch, kd_nodes; /* a ClusteredMesh's branch nodes, for the loop mutants */
	char name[96];
	uint8_t *p;
	size_t n;
};

struct wh_set {
	struct wh_input *v;
	size_t n, cap;
	bool x360;
};

static void wh_add(struct wh_set *s, enum wh_kind k, const char *name, const uint8_t *p, size_t n,
		   uint32_t type)
{
	struct wh_input *in;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = realloc(s->v, s->cap * sizeof *s->v);
		assert_non_null(s->v);
	}
	in = &s->v[s->n++];
	in->kind = k;
	in->pf = s->x360 ? SM_X360 : SM_PS3;
	in->type = type;
	snprintf(in->name, sizeof in->name, "%s", name);
	in->p = malloc(n ? n : 1);
	assert_non_null(in->p);
	memcpy(in->p, p, n);
	in->n = n;
}

/* The world objects of an arena, each an input of its own: mutants of the object itself
 * reach its records, links and KD-tree far more often than mutants of the whole arena. */
static void wh_objects(struct wh_set *s, const char *rel, const uint8_t *p, size_t n)
{
	struct src src;
	struct src_mem m;
	struct arena ar;

	src_init_mem(&src, &m, p, n);
	assert_int_equal(arena_open(&src, &ar, NULL), RC_OK);
	for (uint32_t i = 0; i < ar.n_dict; i++) {
		uint32_t type = arena_row(&ar, i)->type_id;
		uint8_t *obj = NULL;
		size_t len = 0;

		if (type != WO_T_DMODATA && type != WO_T_SPLINEDATA && type != WO_T_CLUSTEREDMESH &&
		    type != WO_T_COLLISIONMODEL)
			continue;
		assert_int_equal(arena_read_object(&src, &ar, i, &obj, &len), RC_OK);
		wh_add(s, WH_OBJECT, rel, obj, len, type);
		if (type == WO_T_CLUSTEREDMESH) {
			struct wo_cmesh c;

			assert_int_equal(wo_cmesh_parse(obj, len, &c, NULL), RC_OK);
			s->v[s->n - 1].kd_branch = c.kd_branch_off;
			s->v[s->n - 1].kd_nodes = c.kd_nodes;
			wo_cmesh_free(&c);
		}
		free(obj);
	}
	arena_free(&ar);
}

/* The sink of gen_district: manifests as they are; each Sim collection's assets, raw (the
 * generator writes format 0), as arenas. */
static enum rc wh_put(void *ctx, const char *rel, const struct buf *b)
{
	struct wh_set *s = ctx;
	const char *dot = strrchr(rel, '.');
	enum sm_platform pf;
	enum sm_file f;

	if (!dot || !sm_ext_parse(dot + 1, &pf, &f))
		return RC_OK;
	if (f == SM_CMAP || f == SM_CSPA || f == SM_MMAP) {
		wh_add(s, WH_MANIFEST, rel, b->data, b->len, 0);
	} else if (f == SM_SFIL && !strncmp(rel, "cSim_", 5) && b->len >= 0x20) {
		uint64_t off = ld_u32be(b->data + 0x10);

		while (off <= b->len && b->len - off >= 0x14) {
			uint64_t len = ld_u32be(b->data + off + 8),
				 hs = ld_u32be(b->data + off + 12),
				 stride = ld_u32be(b->data + off + 16);

			if (hs > b->len - off || len > b->len - off - hs || !stride)
				break;
			wh_add(s, WH_ARENA, rel, b->data + off + hs, len, 0);
			wh_objects(s, rel, b->data + off + hs, len);
			off += stride;
		}
	}
	return RC_OK;
}

/* ---- mutations ---- */

static uint64_t wh_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void wh_put32(uint8_t *p, size_t n, size_t at, uint32_t v, bool le)
{
	for (int i = 0; at + 4 <= n && i < 4; i++)
		p[at + (size_t)(le ? i : 3 - i)] = (uint8_t)(v >> (8 * i));
}

/* Mutant k of in into out (in->n bytes at most); returns its length. */
static size_t wh_mutate(const struct wh_input *in, uint32_t k, uint64_t *rng, uint8_t *out)
{
	static const uint32_t lies[] = {
	    0,		 1,	  0x7FFFFFFFu,		 0xFFFFFFFFu, 0x80000000u,
	    0x10000000u, 0xFFFFu, 0x7FC00000u /* NaN */, 0x7F800000u /* inf */};
	size_t n = in->n, words = n / 4;
	/* arenas are big-endian on both consoles; manifests in their platform's order */
	bool le = in->kind == WH_MANIFEST && !sm_platforms[in->pf].big_endian;
	uint32_t op = k % 8;

	memcpy(out, in->p, n);
	if (!words)
		return n;
	switch (op) {
	case 0: /* a lie at a header word */
		wh_put32(out, n, 4 * (wh_rng(rng) % (words < 32 ? words : 32)),
			 lies[wh_rng(rng) % (sizeof lies / sizeof *lies)], le);
		break;
	case 1: /* a lie anywhere, both byte orders */
		wh_put32(out, n, 4 * (wh_rng(rng) % words),
			 lies[wh_rng(rng) % (sizeof lies / sizeof *lies)], wh_rng(rng) & 1);
		break;
	case 2: /* NaN or infinity over a float */
		wh_put32(out, n, 4 * (wh_rng(rng) % words),
			 (wh_rng(rng) & 1) ? 0x7FC00000u : 0xFF800000u, le);
		break;
	case 3: { /* an 8-byte word copied over another: ids over parents, loops of links */
		size_t a = 8 * (wh_rng(rng) % (n / 8 ? n / 8 : 1)),
		       b = 8 * (wh_rng(rng) % (n / 8 ? n / 8 : 1));

		if (a + 8 <= n && b + 8 <= n)
			memmove(out + b, in->p + a, 8);
		break;
	}
	case 4: /* a word aimed back at an earlier offset or index (links, KD-tree children) */
		wh_put32(out, n, 4 * (wh_rng(rng) % words),
			 (wh_rng(rng) & 1)
			     ? (uint32_t)(wh_rng(rng) % 4)
			     : (uint32_t)(4 * (wh_rng(rng) % (words < 64 ? words : 64))),
			 le);
		break;
	case 5: /* bytes flipped */
		for (int i = 0; i < 4; i++)
			out[wh_rng(rng) % n] ^= (uint8_t)(1u << (wh_rng(rng) % 8));
		break;
	case 6: /* truncated; in a KD-tree, a child made a branch back to a node (a loop) */
		if (in->kd_nodes && (k / 8) % 2 == 0) {
			uint32_t node = (uint32_t)(wh_rng(rng) % in->kd_nodes);
			size_t at = in->kd_branch + (size_t)node * WO_KD_NODE + 8 +
				    8 * (size_t)(wh_rng(rng) & 1);

			wh_put32(out, n, at, WO_KD_BRANCH, false);
			wh_put32(out, n, at + 4, (uint32_t)(wh_rng(rng) % in->kd_nodes), false);
			return n;
		}
		return (size_t)(wh_rng(rng) % n);
	default: { /* a word set to the input's size, or just past it */
		uint32_t v = (uint32_t)n + (uint32_t)(wh_rng(rng) % 3) - 1;

		wh_put32(out, n, 4 * (wh_rng(rng) % words), v, le);
		break;
	}
	}
	return n;
}

/* ---- the parsers ---- */

struct wh_stats {
	unsigned long mutants, ok, refused, lines, objects, cycles, kd_cycles, tris;
	size_t max_req, max_peak;
};

static void wh_manifest(const uint8_t *p, size_t n, enum sm_platform pf, struct wh_stats *st)
{
	struct diag d;
	enum rc r = RC_FORMAT;

	diag_init(&d);
	switch (sm_detect(p, n)) {
	case SM_CMAP: {
		struct sm_cmap m;
		uint32_t cyc = 0;

		r = sm_cmap_parse(p, n, pf, &m, &d);
		if (r == RC_OK) {
			assert_true(m.n <= m.h.count && m.n <= (n - SM_CMAP_HDR) / SM_CMAP_REC);
			sm_cmap_depths(&m, &cyc, &d);
			st->cycles += cyc;
			if (m.n)
				assert_true(sm_cmap_find(&m, m.v[m.n - 1].id) >= 0);
		}
		sm_cmap_free(&m);
		break;
	}
	case SM_CSPA: {
		struct sm_cspa m;

		r = sm_cspa_parse(p, n, pf, &m, &d);
		if (r == RC_OK)
			assert_true(m.n <= m.h.count && m.n <= (n - SM_CSPA_HDR) / SM_CSPA_REC);
		sm_cspa_free(&m);
		break;
	}
	case SM_MMAP: {
		struct sm_mmap m;

		r = sm_mmap_parse(p, n, pf, &m, &d);
		if (r == RC_OK)
			assert_true(m.n <= m.h.count && m.n <= (n - SM_MMAP_HDR) / SM_MMAP_REC);
		sm_mmap_free(&m);
		break;
	}
	default:
		break;
	}
	st->ok += r == RC_OK;
	st->refused += r != RC_OK;
	st->lines += d.n;
	diag_free(&d);
}

static void wh_object(uint32_t type, const uint8_t *p, size_t n, struct wh_stats *st,
		      struct diag *d)
{
	if (type == WO_T_DMODATA) {
		struct wo_dmos v;

		if (wo_dmo_parse(p, n, &v, d) == RC_OK)
			assert_true(v.n <= v.h.count);
		wo_dmo_free(&v);
	} else if (type == WO_T_SPLINEDATA) {
		struct wo_splines v;

		if (wo_spline_parse(p, n, &v, d) == RC_OK)
			assert_true(v.nrails <= v.h.nsplines && v.nsegs <= v.h.nsegments);
		wo_spline_free(&v);
	} else if (type == WO_T_CLUSTEREDMESH) {
		struct wo_cmesh v;

		if (wo_cmesh_parse(p, n, &v, d) == RC_OK) {
			struct wo_surface_count *sc = NULL;
			struct wo_tri t[16];
			uint32_t nsc = 0, got = 0;

			/* a small object claims no more triangles than its bytes can hold */
			assert_true(v.ntris <= n / 2);
			for (uint32_t first = 0; first < v.ntris && first < 4096; first += 16)
				got += wo_cmesh_tris(&v, first, 16, t);
			assert_true(got <= v.ntris);
			if (wo_cmesh_surfaces(&v, &sc, &nsc) == RC_OK)
				free(sc);
			st->tris += v.ntris;
			st->kd_cycles += v.kd_cycle;
		}
		wo_cmesh_free(&v);
	} else if (type == WO_T_COLLISIONMODEL) {
		struct wo_cmodel v;

		(void)wo_cmodel_parse(p, n, &v);
	} else {
		return;
	}
	st->objects++;
}

static void wh_arena(const uint8_t *p, size_t n, struct wh_stats *st)
{
	struct src s;
	struct src_mem m;
	struct arena ar;
	struct diag d;
	float mn[3], mx[3];
	enum rc r;

	(void)ss_arena_bounds(p, n, mn, mx);
	src_init_mem(&s, &m, p, n);
	diag_init(&d);
	r = arena_open(&s, &ar, &d);
	st->ok += r == RC_OK;
	st->refused += r != RC_OK;
	if (r == RC_OK) {
		for (uint32_t i = 0; i < ar.n_dict && i < 4096; i++) {
			uint8_t *obj = NULL;
			size_t len = 0;

			if (arena_read_object(&s, &ar, i, &obj, &len) == RC_OK)
				wh_object(arena_row(&ar, i)->type_id, obj, len, st, &d);
			free(obj);
		}
		arena_free(&ar);
	}
	st->lines += d.n;
	diag_free(&d);
}

static void wh_run(const struct wh_input *in, uint64_t seed, struct wh_stats *st)
{
	uint8_t *buf = malloc(in->n ? in->n : 1);
	uint64_t rng = seed | 1;

	assert_non_null(buf);
	for (uint32_t k = 0; k < WH_MUTANTS; k++) {
		size_t n = wh_mutate(in, k, &rng, buf), req, grow;
		long long base;

		/* the sample takes every operation (k % 8) in turn, not only those k % 4 picks */
		if ((k / 8 + k) % WH_STEP)
			continue;
		/* a copy of exactly n bytes, so ASan sees any read past the mutant's end */
		uint8_t *p = malloc(n ? n : 1);

		assert_non_null(p);
		memcpy(p, buf, n);
		max_req = 0;
		base = live;
		peak = live;
		if (in->kind == WH_MANIFEST) {
			wh_manifest(p, n, in->pf, st);
		} else if (in->kind == WH_ARENA) {
			wh_arena(p, n, st);
		} else {
			struct diag d;

			diag_init(&d);
			wh_object(in->type, p, n, st, &d);
			st->lines += d.n;
			diag_free(&d);
		}
		req = max_req;
		grow = (size_t)(peak - base);
		if (req > WH_MAX_ALLOC(n) || grow > WH_MAX_PEAK(n) || live != base) {
			printf("# %s mutant %u (%zu bytes): largest request %zu, heap growth %zu, "
			       "%lld bytes not freed\n",
			       in->name, k, n, req, grow, live - base);
			fail();
		}
		if (req > st->max_req)
			st->max_req = req;
		if (grow > st->max_peak)
			st->max_peak = grow;
		st->mutants++;
		free(p);
	}
	free(buf);
}

static void test_district_mutants(void **state)
{
	struct wh_stats st = {0};
	unsigned long inputs = 0, sets = 0;

	(void)state;
	/* the last: one district of 400 models, whose collision meshes hold several clusters
	 * and so a KD-tree of branch nodes to loop */
	for (int x360 = 0; x360 < 3; x360++)
		for (int br = GD_B_NONE; br < (x360 < 2 ? GD_B_COUNT : GD_B_NONE + 1); br++) {
			struct wh_set s = {.x360 = x360 == 1};
			struct gen_district_opts o = {.seed = 11 + (uint64_t)br,
						      .x360 = x360 == 1,
						      .tiles = 4,
						      .models = x360 == 2 ? 400 : 0,
						      .broken = br};

			if (gen_district(&o, &(struct gen_district_sink){wh_put, &s}) != RC_OK) {
				assert_true(br == GD_B_TEX_STUB && !x360); /* Xbox 360 only */
				continue;
			}
			sets++;
			for (size_t i = 0; i < s.n; i++) {
				wh_run(&s.v[i], 0x9E3779B97F4A7C15ull * (i + 1) + (uint64_t)br,
				       &st);
				inputs++;
				free(s.v[i].p);
			}
			free(s.v);
		}
	printf("# %lu districts, %lu inputs, %lu mutants: %lu parsed, %lu refused, %lu diag "
	       "lines, %lu world objects, %lu collections in parent cycles, %lu KD-tree loops, "
	       "%lu triangles; "
	       "largest request %zu bytes, largest heap growth %zu bytes\n",
	       sets, inputs, st.mutants, st.ok, st.refused, st.lines, st.objects, st.cycles,
	       st.kd_cycles, st.tris, st.max_req, st.max_peak);
	assert_true(sets >= 2 * GD_B_COUNT);
	assert_true(st.objects > 0 && st.cycles > 0 && st.kd_cycles > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_district_mutants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
