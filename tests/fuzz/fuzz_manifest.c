/*
 * District manifest harness (docs/worlds.md): the input as a CMAP, a CSPA and an MMAP (its
 * first four bytes replaced by each magic in turn, so every parser sees every input), on both
 * consoles' rows. Invariants: the records read fit in the file and never exceed the claimed
 * count, names stay terminated and their safe copies are safe, the parent walk ends, and what
 * was read writes back to bytes that parse to the same records. Then the district model
 * (district*.c) over the input standing for every file of a stream set: its views render and
 * lint.txt ends with its count. Broken invariants abort.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/world/district.h"
#include "harness.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/stream_manifest.h"

static void fm_fail(const char *what)
{
	fprintf(stderr, "fuzz_manifest: %s\n", what);
	abort();
}

static void fm_counts(const struct sm_header *h, uint32_t n, size_t size, size_t hdr, size_t rec)
{
	if (n > h->count || size < hdr || n > (size - hdr) / rec)
		fm_fail("more records than the file holds or claims");
}

static void fm_cmap(const uint8_t *p, size_t n, enum sm_platform pf)
{
	struct sm_cmap m, m2;
	struct diag d;
	struct buf b;
	uint32_t cyc = 0, cyc2 = 0, flagged = 0;
	bool long_name = false, depths;
	enum rc wr;

	diag_init(&d);
	if (sm_cmap_parse(p, n, pf, &m, &d) != RC_OK) {
		if (m.n || m.v)
			fm_fail("a failed parse left records");
		diag_free(&d);
		return;
	}
	fm_counts(&m.h, m.n, n, SM_CMAP_HDR, SM_CMAP_REC);
	depths = sm_cmap_depths(&m, &cyc, &d) == RC_OK;
	if (depths)
		for (uint32_t i = 0; i < m.n; i++) {
			const struct sm_collection *c = &m.v[i];

			flagged += (c->flags & SM_F_CYCLE) != 0;
			if ((c->depth == SM_DEPTH_CYCLE) != ((c->flags & SM_F_CYCLE) != 0))
				fm_fail("a cycle depth without its flag");
			if (c->depth != SM_DEPTH_CYCLE && c->depth >= m.n)
				fm_fail("a depth deeper than the map");
		}
	if (flagged != cyc)
		fm_fail("cycle count differs from the flags");
	for (uint32_t i = 0; i < m.n; i++) {
		const struct sm_collection *c = &m.v[i];

		if (memchr(c->name, 0, sizeof c->name) == NULL || !c->safe[0] ||
		    strchr(c->safe, '/') || c->safe[0] == '.' ||
		    strlen(c->safe) > NAME_COMPONENT_MAX)
			fm_fail("a name not terminated or not safe");
		if (strlen(c->name) == SM_NAME_LEN && !(c->flags & SM_F_NAME))
			fm_fail("a name without NUL not flagged");
		long_name |= strlen(c->name) == SM_NAME_LEN && (c->flags & SM_F_NAME);
	}
	/* The writer refuses exactly the maps with a 64-byte name (no room for its NUL): any
	 * other refusal, or one of those written, is a bug; the rest must round-trip. */
	buf_init(&b);
	wr = sm_cmap_write(pf, &m.h, m.v, m.n, &b);
	if (wr == RC_INVAL && !long_name)
		fm_fail("CMAP writer refuses a map without a 64-byte name");
	if (wr != RC_INVAL && long_name)
		fm_fail("CMAP writer takes a 64-byte name");
	if (wr != RC_OK && wr != RC_INVAL)
		fm_fail("CMAP writer fails");
	if (wr == RC_OK) {
		if (b.len != SM_CMAP_HDR + (size_t)m.n * SM_CMAP_REC)
			fm_fail("CMAP writer: wrong length");
		if (sm_cmap_parse(b.data, b.len, pf, &m2, NULL) != RC_OK || m2.n != m.n)
			fm_fail("CMAP written does not parse back");
		if (depths && (sm_cmap_depths(&m2, &cyc2, &d) != RC_OK || cyc2 != cyc))
			fm_fail("CMAP written has other cycles");
		for (uint32_t i = 0; i < m.n; i++)
			if (m2.v[i].id != m.v[i].id || m2.v[i].parent != m.v[i].parent ||
			    m2.v[i].size != m.v[i].size || m2.v[i].flags != m.v[i].flags ||
			    strcmp(m2.v[i].name, m.v[i].name))
				fm_fail("CMAP round trip differs");
		sm_cmap_free(&m2);
	}
	buf_free(&b);
	sm_cmap_free(&m);
	diag_free(&d);
}

static void fm_cspa(const uint8_t *p, size_t n, enum sm_platform pf)
{
	struct sm_cspa m, m2;
	struct diag d;
	struct buf b;

	diag_init(&d);
	if (sm_cspa_parse(p, n, pf, &m, &d) == RC_OK) {
		fm_counts(&m.h, m.n, n, SM_CSPA_HDR, SM_CSPA_REC);
		buf_init(&b);
		if (sm_cspa_write(pf, &m.h, m.v, m.n, &b) != RC_OK ||
		    b.len != SM_CSPA_HDR + (size_t)m.n * SM_CSPA_REC ||
		    sm_cspa_parse(b.data, b.len, pf, &m2, NULL) != RC_OK || m2.n != m.n)
			fm_fail("CSPA round trip fails");
		for (uint32_t i = 0; i < m.n; i++)
			if (m2.v[i].id != m.v[i].id || m2.v[i].lod != m.v[i].lod ||
			    m2.v[i].flags != m.v[i].flags ||
			    memcmp(m2.v[i].hull_min, m.v[i].hull_min, 64))
				fm_fail("CSPA round trip differs");
		sm_cspa_free(&m2);
		buf_free(&b);
	}
	sm_cspa_free(&m);
	diag_free(&d);
}

static void fm_mmap(const uint8_t *p, size_t n, enum sm_platform pf)
{
	struct sm_mmap m, m2;
	struct diag d;
	struct buf b;

	diag_init(&d);
	if (sm_mmap_parse(p, n, pf, &m, &d) == RC_OK) {
		fm_counts(&m.h, m.n, n, SM_MMAP_HDR, SM_MMAP_REC);
		buf_init(&b);
		if (sm_mmap_write(pf, &m.h, m.v, m.n, &b) != RC_OK ||
		    sm_mmap_parse(b.data, b.len, pf, &m2, NULL) != RC_OK || m2.n != m.n)
			fm_fail("MMAP round trip fails");
		for (uint32_t i = 0; i < m.n; i++)
			if (m2.v[i].id != m.v[i].id || m2.v[i].flags != m.v[i].flags ||
			    f32_bits(m2.v[i].x) != f32_bits(m.v[i].x) ||
			    f32_bits(m2.v[i].y) != f32_bits(m.v[i].y))
				fm_fail("MMAP round trip differs");
		sm_mmap_free(&m2);
		buf_free(&b);
	}
	sm_mmap_free(&m);
	diag_free(&d);
}

/* The district's files: every name of a stream set is the input, its first four bytes the
 * magic of that file's extension (names of no such extension do not exist). */
struct fm_file {
	struct src_mem m;
	uint8_t *b;
};

static enum rc fm_open(void *ctx, const char *name, struct src *s, void **h)
{
	const struct src_mem *in = ctx;
	const char *dot = strrchr(name, '.');
	struct fm_file *f;
	enum sm_platform pf;
	enum sm_file k;

	if (!dot || !sm_ext_parse(dot, &pf, &k))
		return RC_NOENT;
	if (!(f = malloc(sizeof *f)) || !(f->b = malloc(in->size ? in->size : 1))) {
		free(f);
		return RC_NOMEM;
	}
	memcpy(f->b, in->p, in->size);
	if (in->size >= 4)
		memcpy(f->b, sm_magic(k), 4);
	src_init_mem(s, &f->m, f->b, in->size);
	*h = f;
	return RC_OK;
}

static void fm_close(void *ctx, void *h)
{
	struct fm_file *f = h;

	(void)ctx;
	free(f->b);
	free(f);
}

static void fm_district(const uint8_t *q, size_t n, const char *map)
{
	struct src_mem in = {q, n};
	struct dist_io io = {&in, fm_open, fm_close};
	struct district m;
	struct dist_scan sc = {0};
	struct src s;
	struct src_mem sm;
	struct buf b;
	char tail[32];

	src_init_mem(&s, &sm, q, n);
	buf_init(&b);
	if (dist_load(&m, map, &s, &io) == RC_OK && dist_scan(&sc, &m, &io) == RC_OK) {
		dist_info(&m, &sc, NULL, &b);
		dist_errors(&m, &sc, &b);
		for (uint64_t i = 0; i < dist_collection_rows(&m); i++)
			dist_collection_row(&m, i, &b);
		for (uint64_t i = 0; i < dist_minimap_rows(&m); i++)
			dist_minimap_row(&m, i, &b);
		b.len = 0;
		dist_lint(&sc, NULL, &b);
		snprintf(tail, sizeof tail, "%zu findings\n", diag_count(&sc.lint));
		if (b.len < strlen(tail) ||
		    memcmp(b.data + b.len - strlen(tail), tail, strlen(tail)))
			fm_fail("lint.txt does not end with its count");
	}
	dist_scan_free(&sc);
	dist_free(&m);
	buf_free(&b);
}

int fuzz_one_manifest(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);
	uint64_t stamp;

	if (!q)
		return 0;
	memcpy(q, p, n);
	for (int pf = 0; pf < SM_PLATFORMS; pf++) {
		/* the input as it is (wrong magics fail cleanly), then as each manifest */
		fm_cmap(p, n, (enum sm_platform)pf);
		for (int k = SM_CMAP; n >= 4 && k <= SM_MMAP; k++) {
			memcpy(q, sm_magic((enum sm_file)k), 4);
			if ((int)sm_detect(q, n) != k)
				fm_fail("detect misses its own magic");
			if (!sm_stamp_peek(q, n, (enum sm_platform)pf, &stamp) && n >= 16)
				fm_fail("no stamp in a manifest header");
			if (k == SM_CMAP)
				fm_cmap(q, n, (enum sm_platform)pf);
			else if (k == SM_CSPA)
				fm_cspa(q, n, (enum sm_platform)pf);
			else
				fm_mmap(q, n, (enum sm_platform)pf);
		}
	}
	/* the district over it (small inputs: every collection file is the input again) */
	if (n >= 4 && n <= 16384) {
		memcpy(q, "CMAP", 4);
		fm_district(q, n, "DIST_F_Pres.psm");
		fm_district(q, n, "DIST_F_Pres.xsm");
	}
	free(q);
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	return fuzz_one_manifest(p, n);
}
#endif
