/*
 * SplineData (type 0x00EB0004): the grind rails of a district's Sim stream (docs/worlds.md,
 * "SplineData"; public sources: the Skate-File-Format-Documentation RWObjectType_SplineData
 * note, Ethanw05/DumbadsSkate3ModdingTools SplineDataBuilder.cs and the level compiler's
 * Python exporter it ports). Layout:
 *   header 0x10: u32 splines, u32 segments, u32 splines offset, u32 segments offset
 *   spline 0x20: u64 guid, u64 local guid, u32 instance, u32 head, u32 tail, u32 pad
 *   segment 0x84 (0x90 with padding): f32[16] basis, f32[4] inverse, f32[8] bounds,
 *           f32 length, f32 distance, u32 spline, u32 prev, u32 next
 * The links are byte offsets from the object's start (0 = none) in the files the writers make
 * and, they say, in the game's own; the SFFD calls them indices. Both are read.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/world_objects.h"

/* How many records of rec bytes (the last needing only `last`) fit from off in n bytes. */
static uint64_t fit(size_t n, uint64_t off, uint64_t rec, uint64_t last)
{
	if (off > n || n - off < last)
		return 0;
	return (n - off - last) / rec + 1;
}

/* A link as a byte offset to a record of base + k*stride, k < count; 0 is none. */
static bool off_link(uint32_t v, uint32_t base, uint32_t stride, uint32_t count, uint32_t *k)
{
	*k = WO_NONE;
	if (v == 0)
		return true;
	if (v < base || (v - base) % stride || (v - base) / stride >= count)
		return false;
	*k = (v - base) / stride;
	return true;
}

static bool idx_link(uint32_t v, uint32_t count, uint32_t *k)
{
	*k = v < count ? v : WO_NONE;
	return v < count || v == UINT32_MAX;
}

/* Non-zero links that read well as offsets with segment stride st, or as indices. */
static void vote(const struct wo_splines *s, uint32_t st, uint64_t *as_off, uint64_t *as_idx)
{
	uint32_t k;

	*as_off = *as_idx = 0;
	for (uint32_t i = 0; i < s->nrails; i++) {
		const uint32_t v[2] = {s->rails[i].head_raw, s->rails[i].tail_raw};

		for (int j = 0; j < 2; j++) {
			*as_off += v[j] && off_link(v[j], s->h.segments_off, st, s->nsegs, &k);
			*as_idx += v[j] && v[j] < s->nsegs;
		}
	}
	for (uint32_t i = 0; i < s->nsegs; i++) {
		const struct wo_segment *g = &s->segs[i];

		*as_off += g->spline_raw &&
			   off_link(g->spline_raw, s->h.splines_off, WO_SPLINE_REC, s->nrails, &k);
		*as_idx += g->spline_raw && g->spline_raw < s->nrails;
		*as_off +=
		    g->prev_raw && off_link(g->prev_raw, s->h.segments_off, st, s->nsegs, &k);
		*as_idx += g->prev_raw && g->prev_raw < s->nsegs;
		*as_off +=
		    g->next_raw && off_link(g->next_raw, s->h.segments_off, st, s->nsegs, &k);
		*as_idx += g->next_raw && g->next_raw < s->nsegs;
	}
}

static bool link(const struct wo_splines *s, uint32_t v, bool to_spline, uint32_t *k)
{
	uint32_t count = to_spline ? s->nrails : s->nsegs;

	if (!s->offsets)
		return idx_link(v, count, k);
	return off_link(v, to_spline ? s->h.splines_off : s->h.segments_off,
			to_spline ? WO_SPLINE_REC : s->seg_stride, count, k);
}

static void read_rails(const uint8_t *p, size_t n, struct wo_splines *s)
{
	for (uint32_t i = 0; i < s->nrails; i++) {
		struct wo_rail *r = &s->rails[i];
		struct br b = br_at(p, n, true, s->h.splines_off + (size_t)i * WO_SPLINE_REC);

		r->guid = br_u64(&b);
		r->guid_local = br_u64(&b);
		r->instance = br_u32(&b);
		r->head_raw = br_u32(&b);
		r->tail_raw = br_u32(&b);
	}
}

static bool finite_n(const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

static void read_segs(const uint8_t *p, size_t n, struct wo_splines *s, struct diag *d)
{
	for (uint32_t i = 0; i < s->nsegs; i++) {
		struct wo_segment *g = &s->segs[i];
		struct br b = br_at(p, n, true, s->h.segments_off + (size_t)i * s->seg_stride);

		for (int k = 0; k < 16; k++)
			g->basis[k] = br_f32(&b);
		for (int k = 0; k < 4; k++)
			g->inverse[k] = br_f32(&b);
		for (int k = 0; k < 4; k++)
			g->bmin[k] = br_f32(&b);
		for (int k = 0; k < 4; k++)
			g->bmax[k] = br_f32(&b);
		g->length = br_f32(&b);
		g->distance = br_f32(&b);
		g->spline_raw = br_u32(&b);
		g->prev_raw = br_u32(&b);
		g->next_raw = br_u32(&b);
		if (!finite_n(g->basis, 16)) {
			g->flags |= WO_F_NONFINITE;
			diag_add(d, "SplineData: segment %u: the basis is not finite", i);
			continue;
		}
		for (int k = 0; k < 3; k++) {
			g->start[k] = g->basis[12 + k];
			g->end[k] =
			    g->basis[k] + g->basis[4 + k] + g->basis[8 + k] + g->basis[12 + k];
		}
		if (!finite_n(g->end, 3)) { /* finite rows can overflow when summed */
			g->flags |= WO_F_NONFINITE;
			memset(g->start, 0, sizeof g->start);
			memset(g->end, 0, sizeof g->end);
			diag_add(d, "SplineData: segment %u: the end point is not finite", i);
		}
	}
}

static void bad_link(struct diag *d, uint8_t *flags, const char *what, uint32_t i,
		     const char *field, uint32_t v)
{
	*flags |= WO_F_LINK;
	diag_add(d, "SplineData: %s %u: %s 0x%x names nothing", what, i, field, v);
}

static void resolve(struct wo_splines *s, struct diag *d)
{
	for (uint32_t i = 0; i < s->nrails; i++) {
		struct wo_rail *r = &s->rails[i];

		if (!link(s, r->head_raw, false, &r->head))
			bad_link(d, &r->flags, "spline", i, "head", r->head_raw);
		if (!link(s, r->tail_raw, false, &r->tail))
			bad_link(d, &r->flags, "spline", i, "tail", r->tail_raw);
	}
	for (uint32_t i = 0; i < s->nsegs; i++) {
		struct wo_segment *g = &s->segs[i];

		if (!link(s, g->spline_raw, true, &g->spline))
			bad_link(d, &g->flags, "segment", i, "spline", g->spline_raw);
		if (!link(s, g->prev_raw, false, &g->prev))
			bad_link(d, &g->flags, "segment", i, "previous segment", g->prev_raw);
		if (!link(s, g->next_raw, false, &g->next))
			bad_link(d, &g->flags, "segment", i, "next segment", g->next_raw);
	}
}

/* Each rail's chain from its head along next: every segment in at most one chain, so the
 * whole walk is linear in the segments and a loop cannot hold it. */
static void chains(struct wo_splines *s, uint32_t *owner, struct diag *d)
{
	for (uint32_t i = 0; i < s->nrails; i++) {
		struct wo_rail *r = &s->rails[i];
		uint32_t cur = r->head, last = WO_NONE;
		bool other = false;

		r->first = s->norder;
		while (cur != WO_NONE) {
			if (owner[cur] == i + 1) {
				r->flags |= WO_F_CYCLE;
				s->segs[cur].flags |= WO_F_CYCLE;
				diag_add(d,
					 "SplineData: spline %u: the segment chain loops back to "
					 "segment %u after %u segments",
					 i, cur, s->norder - r->first);
				break;
			}
			if (owner[cur]) {
				r->flags |= WO_F_LINK;
				diag_add(d,
					 "SplineData: spline %u: segment %u is already in spline "
					 "%u's chain",
					 i, cur, owner[cur] - 1);
				break;
			}
			if (s->segs[cur].spline != i && !other) {
				other = true;
				s->segs[cur].flags |= WO_F_LINK;
				diag_add(d, "SplineData: spline %u: its segment %u names spline %d",
					 i, cur,
					 s->segs[cur].spline == WO_NONE ? -1
									: (int)s->segs[cur].spline);
			}
			owner[cur] = i + 1;
			s->order[s->norder++] = cur;
			last = cur;
			cur = s->segs[cur].next;
		}
		r->count = s->norder - r->first;
		if (last != WO_NONE && r->tail != WO_NONE && last != r->tail &&
		    !(r->flags & WO_F_CYCLE))
			diag_add(d,
				 "SplineData: spline %u: the chain ends at segment %u, not at its "
				 "tail %u",
				 i, last, r->tail);
	}
	if (s->norder < s->nsegs)
		diag_add(d, "SplineData: %u of %u segments are in no spline's chain",
			 s->nsegs - s->norder, s->nsegs);
}

static void counts(size_t n, struct wo_splines *s, struct diag *d)
{
	uint64_t cr = fit(n, s->h.splines_off, WO_SPLINE_REC, WO_SPLINE_REC);
	uint64_t c90 = fit(n, s->h.segments_off, WO_SEG_REC, WO_SEG_FIELDS);
	uint64_t c84 = fit(n, s->h.segments_off, WO_SEG_FIELDS, WO_SEG_FIELDS);

	if (s->h.nsplines > cr)
		diag_add(d, "SplineData: claims %u splines; the object holds %llu", s->h.nsplines,
			 (unsigned long long)cr);
	s->nrails = s->h.nsplines < cr ? s->h.nsplines : (uint32_t)cr;
	/* 0x90 unless only the packed stride holds the claimed segments */
	s->seg_stride = s->h.nsegments > c90 && c84 > c90 ? WO_SEG_FIELDS : WO_SEG_REC;
	if (s->seg_stride == WO_SEG_REC)
		c84 = c90;
	if (s->h.nsegments > c84)
		diag_add(d, "SplineData: claims %u segments; the object holds %llu", s->h.nsegments,
			 (unsigned long long)c84);
	s->nsegs = s->h.nsegments < c84 ? s->h.nsegments : (uint32_t)c84;
}

enum rc wo_spline_parse(const uint8_t *p, size_t n, struct wo_splines *out, struct diag *d)
{
	struct wo_splines *s = out;
	uint64_t o90, i90, o84, i84;
	uint32_t *owner;
	struct br b;

	memset(s, 0, sizeof *s);
	if (n < WO_SPLINE_HDR) {
		diag_add(d, "SplineData: the object is %zu bytes; its header alone is %u", n,
			 WO_SPLINE_HDR);
		return RC_TRUNCATED;
	}
	b = br_at(p, n, true, 0);
	s->h.nsplines = br_u32(&b);
	s->h.nsegments = br_u32(&b);
	s->h.splines_off = br_u32(&b);
	s->h.segments_off = br_u32(&b);
	counts(n, s, d);
	s->rails = xcalloc_n(s->nrails ? s->nrails : 1, sizeof *s->rails);
	s->segs = xcalloc_n(s->nsegs ? s->nsegs : 1, sizeof *s->segs);
	s->order = xcalloc_n(s->nsegs ? s->nsegs : 1, sizeof *s->order);
	owner = xcalloc_n(s->nsegs ? s->nsegs : 1, sizeof *owner);
	if (!s->rails || !s->segs || !s->order || !owner) {
		free(owner);
		wo_spline_free(s);
		return RC_NOMEM;
	}
	read_rails(p, n, s);
	read_segs(p, n, s, NULL);
	/* Offsets or indices: the form most non-zero links fit, offsets on a tie. An offset
	 * file with the packed stride is only taken when its links say so. */
	vote(s, s->seg_stride, &o90, &i90);
	s->offsets = o90 >= i90;
	if (s->seg_stride == WO_SEG_REC && s->nsegs) {
		uint32_t keep = s->seg_stride;

		s->seg_stride = WO_SEG_FIELDS;
		memset(s->segs, 0, sizeof *s->segs * s->nsegs);
		read_segs(p, n, s, NULL);
		vote(s, WO_SEG_FIELDS, &o84, &i84);
		if (o84 > o90 && o84 >= i84)
			s->offsets = true;
		else
			s->seg_stride = keep;
	}
	memset(s->segs, 0, sizeof *s->segs * s->nsegs);
	read_segs(p, n, s, d);
	resolve(s, d);
	chains(s, owner, d);
	free(owner);
	return RC_OK;
}

void wo_spline_free(struct wo_splines *s)
{
	free(s->rails);
	free(s->segs);
	free(s->order);
	memset(s, 0, sizeof *s);
}

enum rc wo_spline_write(const struct wo_rail_in *v, uint32_t n, struct buf *out)
{
	uint64_t nseg = 0, segs_off = WO_SPLINE_HDR + (uint64_t)n * WO_SPLINE_REC, g = 0;

	for (uint32_t i = 0; i < n; i++)
		nseg += v[i].npoints >= 2 ? v[i].npoints - 1 : 0;
	if (segs_off + nseg * WO_SEG_REC > UINT32_MAX)
		return RC_INVAL;
	buf_u32be(out, n);
	buf_u32be(out, (uint32_t)nseg);
	buf_u32be(out, WO_SPLINE_HDR);
	buf_u32be(out, (uint32_t)segs_off);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = v[i].npoints >= 2 ? v[i].npoints - 1 : 0;

		buf_u64be(out, v[i].guid);
		buf_u64be(out, v[i].guid_local);
		buf_u32be(out, v[i].instance);
		buf_u32be(out, k ? (uint32_t)(segs_off + g * WO_SEG_REC) : 0);
		buf_u32be(out, k ? (uint32_t)(segs_off + (g + k - 1) * WO_SEG_REC) : 0);
		buf_u32be(out, 0);
		g += k;
	}
	g = 0;
	for (uint32_t i = 0; i < n; i++) {
		double dist = 0;

		for (uint32_t j = 0; j + 1 < v[i].npoints; j++, g++) {
			const float *a = v[i].points[j], *e = v[i].points[j + 1];
			double dx = (double)e[0] - a[0], dy = (double)e[1] - a[1];
			double dz = (double)e[2] - a[2], len = sqrt(dx * dx + dy * dy + dz * dz);

			buf_f32be(out, (float)dx);
			buf_f32be(out, (float)dy);
			buf_f32be(out, (float)dz);
			buf_zero(out, 4 + 32);
			for (int k = 0; k < 3; k++)
				buf_f32be(out, a[k]);
			buf_f32be(out, 1.0f);
			buf_f32be(out, len > 0 ? (float)(1.0 / len) : 0.0f);
			buf_zero(out, 12);
			for (int k = 0; k < 3; k++)
				buf_f32be(out, fminf(a[k], e[k]));
			buf_zero(out, 4);
			for (int k = 0; k < 3; k++)
				buf_f32be(out, fmaxf(a[k], e[k]));
			buf_zero(out, 4);
			buf_f32be(out, (float)len);
			buf_f32be(out, (float)dist);
			dist += len;
			buf_u32be(out, WO_SPLINE_HDR + i * WO_SPLINE_REC);
			buf_u32be(out, j ? (uint32_t)(segs_off + (g - 1) * WO_SEG_REC) : 0);
			buf_u32be(out, j + 2 < v[i].npoints
					   ? (uint32_t)(segs_off + (g + 1) * WO_SEG_REC)
					   : 0);
			buf_zero(out, WO_SEG_REC - WO_SEG_FIELDS);
		}
	}
	return out->oom ? RC_NOMEM : RC_OK;
}
