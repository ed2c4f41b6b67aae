/*
 * ClusteredMesh (RenderWare collision type 0x00080006): the collision triangles of a district's
 * Sim stream (docs/worlds.md, "ClusteredMesh"; public sources: EA's rwcollision_volumes
 * headers in the Skate-File-Format-Documentation, Ethanw05/DumbadsSkate3ModdingTools'
 * ClusteredMesh, cluster and KD-tree serializers, SK8-ENGINE/skate-3-rust-engine
 * docs/SKATE-MAPS.md). Layout, all big-endian but the surface and group ids:
 *   0x00 AABB min, max (f32 x4 each); 0x20 vtable, tag bits, volumes, flags;
 *   0x30 KD-tree offset, cluster pointer table offset; 0x38 granularity, u16 flags,
 *   u8 group id size, u8 surface id size; 0x40 clusters, max clusters, units, max units,
 *   size; 0x54 u16 default group, u16 default surface, u8 default edge; 0x5C cluster tag bits
 *   KD-tree: u32 branch offset, u32 branches, u32 entries, pad, AABB; branch 0x20: parent,
 *   axis, {content, index} x2, f32 extents x2
 *   cluster: u16 units, unit bytes, unit start (x16), normal start, total size; u8 vertices,
 *   normals, compression, pad x3; vertices from +0x10; units at +0x10 + 16 * unit start
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/world_objects.h"

#define CM_MAX_TRIS 84u /* writer: triangles per cluster (3 vertices each, below 255) */

/* ---- units ---- */

struct unit {
	uint8_t type, ntri, hdr; /* hdr: bytes before the vertex indices */
	uint32_t size;
};

/* The unit at u[0 .. left): false when its type is unknown or it runs past left. */
static bool unit_at(const struct wo_cmesh *m, const uint8_t *u, uint32_t left, struct unit *out)
{
	uint8_t f;

	if (left < 1)
		return false;
	f = u[0];
	out->type = f & 0x0F;
	out->hdr = 1;
	out->ntri = out->type == WO_UNIT_QUAD ? 2 : 1;
	if (out->type > WO_UNIT_TRILIST)
		return false;
	if (out->type == WO_UNIT_TRILIST) {
		if (left < 2)
			return false;
		out->ntri = u[1];
		out->hdr = 2;
	}
	/* RW's GetUnitSize: vertex indices, edge angles, group id, surface id */
	out->size = out->hdr + out->ntri + 2u;
	if (f & WO_UNIT_EDGEANGLE)
		out->size += out->ntri + 2u;
	if (f & WO_UNIT_GROUPID)
		out->size += m->group_id_size;
	if (f & WO_UNIT_SURFACEID)
		out->size += m->surface_id_size;
	return out->size <= left;
}

/* Group and surface ids: the low byte first (RW's GetGroupAndSurfaceId). */
static void unit_ids(const struct wo_cmesh *m, const uint8_t *u, const struct unit *k,
		     uint16_t *group, uint16_t *surface)
{
	const uint8_t *q = u + k->hdr + k->ntri + 2;

	if (u[0] & WO_UNIT_EDGEANGLE)
		q += k->ntri + 2;
	*group = m->default_group;
	*surface = m->default_surface;
	if (u[0] & WO_UNIT_GROUPID) {
		*group = m->group_id_size ? q[0] : 0;
		if (m->group_id_size == 2)
			*group |= (uint16_t)(q[1] << 8);
		q += m->group_id_size;
	}
	if (u[0] & WO_UNIT_SURFACEID) {
		*surface = m->surface_id_size ? q[0] : 0;
		if (m->surface_id_size == 2)
			*surface |= (uint16_t)(q[1] << 8);
	}
}

/* ---- vertices ---- */

static uint64_t vertex_bytes(uint8_t mode, uint32_t count)
{
	switch (mode) {
	case 0:
		return 16ull * count;
	case 1:
		return 12ull + 6ull * count;
	case 2:
		return 12ull * count;
	}
	return UINT64_MAX;
}

static int32_t sat_add(int32_t a, uint32_t b)
{
	int64_t s = (int64_t)a + b;

	return s > INT32_MAX ? INT32_MAX : (int32_t)s;
}

/* Vertex i of cluster c in world space; false when it is not there or not finite. The 16-bit
 * offsets are unsigned (SK8's correction): zero-extended, added to the signed base with
 * saturation, converted to float, then times the granularity, as the game's GetVertex does. */
static bool vertex(const struct wo_cmesh *m, const struct wo_cluster *c, uint8_t i, float v[3])
{
	const uint8_t *p = m->data + c->off + WO_CL_HDR;

	if (c->bad || i >= c->vertex_count)
		return false;
	for (int k = 0; k < 3; k++) {
		switch (c->compression) {
		case 0:
			v[k] = f32_from_bits(ld_u32be(p + 16u * i + 4u * k));
			break;
		case 1:
			v[k] = (float)sat_add(c->base[k], ld_u16be(p + 12u + 6u * i + 2u * k)) *
			       m->granularity;
			break;
		default:
			v[k] = (float)(int32_t)ld_u32be(p + 12u * i + 4u * k) * m->granularity;
		}
		if (!isfinite(v[k]))
			return false;
	}
	return true;
}

/* ---- parsing ---- */

static void cm_header(const uint8_t *p, size_t n, struct wo_cmesh *m)
{
	struct br r = br_at(p, n, true, 0);

	for (int k = 0; k < 4; k++)
		m->bmin[k] = br_f32(&r);
	for (int k = 0; k < 4; k++)
		m->bmax[k] = br_f32(&r);
	(void)br_u32(&r); /* vtable */
	m->num_tag_bits = br_u32(&r);
	m->num_volumes = br_u32(&r);
	m->agg_flags = br_u32(&r);
	m->kd_off = br_u32(&r);
	m->clusters_off = br_u32(&r);
	m->granularity = br_f32(&r);
	m->cm_flags = br_u16(&r);
	m->group_id_size = br_u8(&r);
	m->surface_id_size = br_u8(&r);
	m->num_clusters = br_u32(&r);
	m->max_clusters = br_u32(&r);
	m->num_units = br_u32(&r);
	m->max_units = br_u32(&r);
	m->size_of_this = br_u32(&r);
	m->default_group = br_u16(&r);
	m->default_surface = br_u16(&r);
	m->default_edge = br_u8(&r);
	br_skip(&r, 3);
	m->cluster_tag_bits = br_u32(&r);
}

/* The cluster header at off, its vertices and its unit span; false (with a line) when any of
 * them lies outside the object. */
static bool cluster_head(const struct wo_cmesh *m, struct wo_cluster *c, uint32_t i, struct diag *d)
{
	const uint8_t *h = m->data + c->off;
	uint64_t vb, uo;

	c->unit_count = ld_u16be(h);
	c->unit_data_size = ld_u16be(h + 2);
	c->unit_data_start = ld_u16be(h + 4);
	c->normal_start = ld_u16be(h + 6);
	c->total_size = ld_u16be(h + 8);
	c->vertex_count = h[10];
	c->normal_count = h[11];
	c->compression = h[12];
	vb = vertex_bytes(c->compression, c->vertex_count);
	if (vb == UINT64_MAX) {
		diag_add(d, "ClusteredMesh: cluster %u: vertex compression %u (0, 1 or 2 expected)",
			 i, c->compression);
		return false;
	}
	if (!span_ok(m->size, c->off + WO_CL_HDR, vb)) {
		diag_add(d, "ClusteredMesh: cluster %u: its %u vertices run past the end", i,
			 c->vertex_count);
		return false;
	}
	if (c->compression == 1)
		for (int k = 0; k < 3; k++)
			c->base[k] = (int32_t)ld_u32be(h + WO_CL_HDR + 4 * k);
	uo = (uint64_t)c->off + WO_CL_HDR + 16ull * c->unit_data_start;
	if (uo > m->size || (c->unit_count && uo == m->size)) {
		diag_add(d, "ClusteredMesh: cluster %u: its units at 0x%llx lie past the end", i,
			 (unsigned long long)uo);
		return false;
	}
	c->units_off = (uint32_t)uo;
	c->units_len = c->unit_data_size;
	if (c->units_len > m->size - uo) {
		diag_add(d, "ClusteredMesh: cluster %u: its %u unit bytes run past the end", i,
			 c->unit_data_size);
		c->units_len = (uint32_t)(m->size - uo);
	}
	return true;
}

/* Walk a cluster's units to count its triangles. */
static void cluster_walk(struct wo_cmesh *m, struct wo_cluster *c, uint32_t i, struct diag *d)
{
	const uint8_t *u = m->data + c->units_off;
	uint32_t pos = 0;
	struct unit k;

	for (uint32_t j = 0; j < c->unit_count; j++) {
		if (!unit_at(m, u + pos, c->units_len - pos, &k)) {
			if (c->units_len - pos && (u[pos] & 0x0F) > WO_UNIT_TRILIST)
				diag_add(d, "ClusteredMesh: cluster %u: unit %u has type %u", i, j,
					 u[pos] & 0x0F);
			else
				diag_add(d,
					 "ClusteredMesh: cluster %u: unit %u of %u runs past its "
					 "%u unit bytes",
					 i, j, c->unit_count, c->units_len);
			break;
		}
		if (k.type == WO_UNIT_TRILIST)
			m->skipped++;
		else
			c->tri_count += k.ntri;
		pos += k.size;
		c->units_read++;
	}
}

/* Clusters a table can name: one pointer each, and no more than 16-byte headers fit in the
 * object (more would alias), so the cluster array stays a small multiple of the object. */
static uint64_t cluster_cap(uint64_t n, uint32_t table)
{
	uint64_t cap = table <= n ? (n - table) / 4 : 0;

	return cap < n / WO_CL_HDR ? cap : n / WO_CL_HDR;
}

struct span {
	uint64_t lo, hi;
	uint32_t i;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* Two clusters whose unit bytes overlap would count the same triangles twice (a table of
 * aliases could multiply a small object into billions): of two that overlap, the later in the
 * table is left out (sorted sweep, linearithmic). */
static enum rc overlaps(struct wo_cmesh *m, struct diag *d)
{
	struct span *v = xcalloc_n(m->ncl ? m->ncl : 1, sizeof *v);
	uint32_t k = 0, bad = 0, first = 0, with = 0;
	uint64_t end = 0, end_i = 0;

	if (!v)
		return RC_NOMEM;
	for (uint32_t i = 0; i < m->ncl; i++)
		if (!m->cl[i].bad && m->cl[i].units_len)
			v[k++] =
			    (struct span){m->cl[i].units_off,
					  (uint64_t)m->cl[i].units_off + m->cl[i].units_len, i};
	qsort(v, k, sizeof *v, span_cmp);
	/* accepted spans are disjoint and sorted: each new one can only meet the last; of two
	 * that meet, the later in the table goes */
	for (uint32_t j = 0; j < k; j++) {
		if (j && v[j].lo < end) {
			uint32_t drop = v[j].i > end_i ? v[j].i : (uint32_t)end_i;

			m->cl[drop].bad = true;
			if (!bad++)
				first = drop, with = v[j].i ^ (uint32_t)end_i ^ drop;
			if (drop == v[j].i)
				continue;
		}
		end = v[j].hi;
		end_i = v[j].i;
	}
	if (bad)
		diag_add(
		    d,
		    "ClusteredMesh: %u clusters' units overlap another's (first: cluster %u in "
		    "cluster %u's); left out",
		    bad, first, with);
	free(v);
	return RC_OK;
}

static enum rc clusters(struct wo_cmesh *m, struct diag *d)
{
	uint64_t cap = cluster_cap(m->size, m->clusters_off), units = 0;
	enum rc rc;

	if (m->clusters_off > m->size)
		diag_add(d,
			 "ClusteredMesh: the cluster table at 0x%x lies past the end (%zu bytes)",
			 m->clusters_off, m->size);
	if (m->num_clusters > cap)
		diag_add(d, "ClusteredMesh: claims %u clusters; the object holds %llu",
			 m->num_clusters, (unsigned long long)cap);
	m->ncl = m->num_clusters < cap ? m->num_clusters : (uint32_t)cap;
	for (uint32_t i = 0; i < m->ncl; i++) {
		struct wo_cluster *c = &m->cl[i];

		c->off = ld_u32be(m->data + m->clusters_off + 4ull * i);
		if (!span_ok(m->size, c->off, WO_CL_HDR)) {
			diag_add(d, "ClusteredMesh: cluster %u at 0x%x lies past the end", i,
				 c->off);
			c->bad = true;
		} else if (!cluster_head(m, c, i, d)) {
			c->bad = true;
		}
	}
	rc = overlaps(m, d);
	if (rc != RC_OK)
		return rc;
	for (uint32_t i = 0; i < m->ncl; i++) {
		struct wo_cluster *c = &m->cl[i];

		c->tri_first = m->ntris;
		if (c->bad)
			continue;
		cluster_walk(m, c, i, d);
		m->ntris += c->tri_count; /* at most 2 per 4 unit bytes: no overflow */
		units += c->units_read;
	}
	if (m->skipped)
		diag_add(d, "ClusteredMesh: %u trilist units passed over (RenderWare reads none)",
			 m->skipped);
	if (units != m->num_units)
		diag_add(d, "ClusteredMesh: the header claims %u units; the clusters hold %llu",
			 m->num_units, (unsigned long long)units);
	return RC_OK;
}

/* ---- the KD-tree ---- */

struct kd_walk {
	uint32_t bad_child, first_bad_node, first_bad_child;
	uint32_t again, first_again_node, first_again_child;
	uint32_t bad_leaf, first_bad_leaf;
};

static void kd_leaf(struct wo_cmesh *m, uint32_t content, uint32_t index, struct kd_walk *w)
{
	unsigned shift = (m->cm_flags & WO_CMF_20BIT) || m->max_clusters > 0x10000 ? 20 : 16;
	uint32_t cl = index >> shift, off = index & ((1u << shift) - 1);

	m->kd_leaf_entries += content;
	if (content && (cl >= m->ncl || m->cl[cl].bad || off >= m->cl[cl].units_len))
		if (!w->bad_leaf++)
			w->first_bad_leaf = index;
}

static void kd_report(const struct wo_cmesh *m, const struct kd_walk *w, struct diag *d)
{
	if (w->again)
		diag_add(d,
			 "ClusteredMesh: KD-tree: node %u's child %u was reached before (a loop or "
			 "a shared node); %u such links, not followed",
			 w->first_again_node, w->first_again_child, w->again);
	if (w->bad_child)
		diag_add(d,
			 "ClusteredMesh: KD-tree: %u child links name no node (first: node %u -> "
			 "%u, of %u)",
			 w->bad_child, w->first_bad_node, w->first_bad_child, m->kd_nodes);
	if (w->bad_leaf)
		diag_add(d,
			 "ClusteredMesh: KD-tree: %u leaves name no cluster's units (first: "
			 "entry 0x%x)",
			 w->bad_leaf, w->first_bad_leaf);
	if (m->kd_leaf_entries != m->kd_entries && !w->again && !w->bad_child)
		diag_add(d,
			 "ClusteredMesh: KD-tree: its leaves hold %u entries; its header says %u",
			 m->kd_leaf_entries, m->kd_entries);
}

/* Every branch reachable from the root. Iterative, each branch node visited once: a stack of at
 * most kd_nodes entries (stack and seen: one per node); the leaves counted, the bad and repeated
 * children kept for the report. */
static void kd_branches(struct wo_cmesh *m, uint32_t *stack, uint8_t *seen, struct kd_walk *w)
{
	uint32_t top = 0;

	stack[top++] = 0;
	seen[0] = 1;
	while (top) {
		uint32_t i = stack[--top];
		const uint8_t *b = m->data + m->kd_branch_off + (size_t)i * WO_KD_NODE;

		m->kd_reached++;
		for (int k = 0; k < 2; k++) {
			uint32_t content = ld_u32be(b + 8 + 8 * k),
				 index = ld_u32be(b + 12 + 8 * k);

			if (content != WO_KD_BRANCH) {
				kd_leaf(m, content, index, w);
			} else if (index >= m->kd_nodes) {
				if (!w->bad_child++)
					w->first_bad_node = i, w->first_bad_child = index;
			} else if (seen[index]) {
				if (!w->again++)
					w->first_again_node = i, w->first_again_child = index;
				m->kd_cycle = true;
			} else {
				seen[index] = 1;
				stack[top++] = index;
			}
		}
	}
}

static enum rc kd_tree(struct wo_cmesh *m, struct diag *d)
{
	struct kd_walk w = {0};
	uint32_t *stack;
	uint8_t *seen;
	uint64_t cap = 0;
	struct br r;

	if (!span_ok(m->size, m->kd_off, WO_KD_HDR) || m->kd_off == 0) {
		diag_add(d, "ClusteredMesh: the KD-tree at 0x%x lies outside the %zu bytes",
			 m->kd_off, m->size);
		return RC_OK;
	}
	r = br_at(m->data, m->size, true, m->kd_off);
	m->kd_branch_off = br_u32(&r);
	m->kd_nodes = br_u32(&r);
	m->kd_entries = br_u32(&r);
	if (m->kd_branch_off <= m->size)
		cap = (m->size - m->kd_branch_off) / WO_KD_NODE;
	if (m->kd_nodes > cap) {
		diag_add(d, "ClusteredMesh: KD-tree: claims %u branch nodes; the object holds %llu",
			 m->kd_nodes, (unsigned long long)cap);
		m->kd_nodes = (uint32_t)cap;
	}
	if (m->kd_nodes == 0) { /* the root is a leaf of every entry */
		kd_leaf(m, m->kd_entries, 0, &w);
		kd_report(m, &w, d);
		return RC_OK;
	}
	stack = xcalloc_n(m->kd_nodes, sizeof *stack);
	seen = xcalloc_n(m->kd_nodes, 1);
	if (!stack || !seen) {
		free(stack);
		free(seen);
		return RC_NOMEM;
	}
	kd_branches(m, stack, seen, &w);
	free(stack);
	free(seen);
	kd_report(m, &w, d);
	return RC_OK;
}

enum rc wo_cmesh_parse(const uint8_t *p, size_t n, struct wo_cmesh *out, struct diag *d)
{
	struct wo_cmesh *m = out;
	enum rc rc;

	memset(m, 0, sizeof *m);
	if (n < WO_CM_HDR) {
		diag_add(d, "ClusteredMesh: the object is %zu bytes; its header alone is %u", n,
			 WO_CM_HDR);
		return RC_TRUNCATED;
	}
	m->data = malloc(n);
	if (!m->data)
		return RC_NOMEM;
	memcpy(m->data, p, n);
	m->size = n;
	cm_header(p, n, m);
	if (!isfinite(m->granularity) || m->granularity == 0)
		diag_add(d, "ClusteredMesh: the vertex granularity is %g", (double)m->granularity);
	{
		uint64_t cap = cluster_cap(n, m->clusters_off);
		uint64_t want = m->num_clusters < cap ? m->num_clusters : cap;

		m->cl = xcalloc_n(want ? want : 1, sizeof *m->cl);
	}
	if (!m->cl) {
		wo_cmesh_free(m);
		return RC_NOMEM;
	}
	rc = clusters(m, d);
	if (rc == RC_OK)
		rc = kd_tree(m, d);
	if (rc != RC_OK)
		wo_cmesh_free(m);
	return rc;
}

void wo_cmesh_free(struct wo_cmesh *m)
{
	free(m->data);
	free(m->cl);
	memset(m, 0, sizeof *m);
}

size_t wo_cmesh_heap(const struct wo_cmesh *m)
{
	return heap_block(m->data) + heap_block(m->cl);
}

enum rc wo_cmodel_parse(const uint8_t *p, size_t n, struct wo_cmodel *out)
{
	memset(out, 0, sizeof *out);
	if (n < 16)
		return RC_TRUNCATED;
	out->volume = ld_u32be(p);
	out->num_meshes = ld_u32be(p + 4);
	out->meshes_off = ld_u32be(p + 8);
	out->first = ld_u32be(p + 12);
	return RC_OK;
}

/* ---- triangles ---- */

/* The cluster holding triangle t (binary search on tri_first over non-empty clusters). */
static uint32_t cluster_of(const struct wo_cmesh *m, uint32_t t)
{
	uint32_t lo = 0, hi = m->ncl;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->cl[mid].tri_first <= t)
			lo = mid;
		else
			hi = mid;
	}
	while (lo < m->ncl && t >= m->cl[lo].tri_first + m->cl[lo].tri_count)
		lo++;
	return lo;
}

static void emit(const struct wo_cmesh *m, uint32_t ci, const uint8_t idx[3], uint16_t group,
		 uint16_t surface, struct wo_tri *t)
{
	const struct wo_cluster *c = &m->cl[ci];

	memset(t, 0, sizeof *t);
	t->cluster = ci;
	t->group = group;
	t->surface = surface;
	for (int k = 0; k < 3; k++)
		if (!vertex(m, c, idx[k], t->v[k]))
			t->bad = true;
	if (t->bad)
		memset(t->v, 0, sizeof t->v);
}

uint32_t wo_cmesh_tris(const struct wo_cmesh *m, uint32_t first, uint32_t count, struct wo_tri *out)
{
	uint32_t done = 0;

	if (first >= m->ntris)
		return 0;
	if (count > m->ntris - first)
		count = m->ntris - first;
	for (uint32_t ci = cluster_of(m, first); ci < m->ncl && done < count; ci++) {
		const struct wo_cluster *c = &m->cl[ci];
		const uint8_t *u = m->data + c->units_off;
		uint32_t pos = 0, t = c->tri_first;
		struct unit k;

		if (c->bad || !c->tri_count)
			continue;
		for (uint32_t j = 0; j < c->units_read && done < count; j++) {
			uint16_t g, s;

			if (!unit_at(m, u + pos, c->units_len - pos, &k))
				break; /* cannot happen: the parse walked these units */
			if (k.type != WO_UNIT_TRILIST) {
				const uint8_t *v = u + pos + k.hdr;
				const uint8_t tri[2][3] = {{v[0], v[1], v[2]},
							   {v[k.ntri == 2 ? 3 : 0], v[2], v[1]}};

				unit_ids(m, u + pos, &k, &g, &s);
				for (uint32_t q = 0; q < k.ntri && done < count; q++, t++)
					if (t >= first)
						emit(m, ci, tri[q], g, s, &out[done++]);
			}
			pos += k.size;
		}
	}
	return done;
}

/* Triangles per surface id are counted in pages of 256 ids, made as ids come: a mesh uses a
 * few of them, and one table of all 65,536 (256 KiB) is fresh pages for every mesh under ASan. */
#define SURF_PAGES 256

static bool surface_count(uint32_t *page[SURF_PAGES], uint16_t id, uint32_t *k)
{
	uint32_t **p = &page[id >> 8];

	if (!*p && !(*p = xcalloc_n(256, sizeof **p)))
		return false;
	if (!(*p)[id & 0xFF]++)
		(*k)++;
	return true;
}

enum rc wo_cmesh_surfaces(const struct wo_cmesh *m, struct wo_surface_count **v, uint32_t *n)
{
	uint32_t *page[SURF_PAGES] = {0}, batch = m->ntris < 1024 ? m->ntris : 1024, k = 0;
	struct wo_tri *tmp = xcalloc_n(batch ? batch : 1, sizeof *tmp);
	bool ok = tmp != NULL;

	*v = NULL;
	*n = 0;
	for (uint32_t t = 0; ok && t < m->ntris;) {
		uint32_t got = wo_cmesh_tris(m, t, batch, tmp);

		if (!got)
			break;
		for (uint32_t i = 0; ok && i < got; i++)
			ok = surface_count(page, tmp[i].surface, &k);
		t += got;
	}
	free(tmp);
	if (ok)
		*v = xcalloc_n(k ? k : 1, sizeof **v);
	for (uint32_t pg = 0; pg < SURF_PAGES; pg++) {
		for (uint32_t j = 0; *v && page[pg] && j < 256; j++)
			if (page[pg][j]) {
				(*v)[*n].id = (uint16_t)(pg << 8 | j);
				(*v)[(*n)++].tris = page[pg][j];
			}
		free(page[pg]);
	}
	return *v ? RC_OK : RC_NOMEM;
}

/* ---- writing: one simple layout ---- */

struct wcl {
	uint32_t first, n; /* its triangles */
	uint8_t mode;
	int32_t base[3];
	float xmin, xmax; /* decoded x range, for the KD-tree's extents */
	uint32_t off, total, unit_start;
};

static bool quantize(float v, float g, int32_t *q)
{
	double x = nearbyint((double)v / g);

	if (!(x >= INT32_MIN && x <= INT32_MAX))
		return false;
	*q = (int32_t)x;
	return true;
}

/* The float a reader decodes for v in mode with granularity g. */
static float decoded(float v, uint8_t mode, float g)
{
	int32_t q;

	if (mode == 0 || !quantize(v, g, &q))
		return v;
	return (float)q * g;
}

static void pick_mode(const struct wo_tri_in *t, struct wcl *c, float g)
{
	int64_t lo[3] = {INT64_MAX, INT64_MAX, INT64_MAX},
		hi[3] = {INT64_MIN, INT64_MIN, INT64_MIN};
	int32_t q;

	c->mode = 0;
	if (!(g > 0))
		return;
	for (uint32_t i = c->first; i < c->first + c->n; i++)
		for (int v = 0; v < 3; v++)
			for (int k = 0; k < 3; k++) {
				if (!quantize(t[i].v[v][k], g, &q))
					return;
				lo[k] = q < lo[k] ? q : lo[k];
				hi[k] = q > hi[k] ? q : hi[k];
			}
	c->mode = 2;
	if (hi[0] - lo[0] <= 65535 && hi[1] - lo[1] <= 65535 && hi[2] - lo[2] <= 65535) {
		c->mode = 1;
		for (int k = 0; k < 3; k++)
			c->base[k] = (int32_t)lo[k];
	}
}

static void plan(const struct wo_tri_in *t, struct wcl *c, float g, uint64_t *at)
{
	uint64_t vend;

	pick_mode(t, c, g);
	c->xmin = INFINITY;
	c->xmax = -INFINITY;
	for (uint32_t i = c->first; i < c->first + c->n; i++)
		for (int v = 0; v < 3; v++) {
			float x = decoded(t[i].v[v][0], c->mode, g);

			c->xmin = fminf(c->xmin, x);
			c->xmax = fmaxf(c->xmax, x);
		}
	vend = align_up(WO_CL_HDR + vertex_bytes(c->mode, 3 * c->n), 16);
	c->unit_start = (uint32_t)((vend - WO_CL_HDR) / 16);
	c->total = (uint32_t)(vend + align_up(9ull * c->n, 16));
	c->off = (uint32_t)*at;
	*at += c->total;
}

static void put_cluster(const struct wo_tri_in *t, const struct wcl *c, float g, struct buf *out)
{
	size_t start = out->len;

	buf_u16be(out, (uint16_t)c->n);
	buf_u16be(out, (uint16_t)(9 * c->n));
	buf_u16be(out, (uint16_t)c->unit_start);
	buf_u16be(out, (uint16_t)c->unit_start);
	buf_u16be(out, (uint16_t)c->total);
	buf_u8(out, (uint8_t)(3 * c->n));
	buf_u8(out, 0);
	buf_u8(out, c->mode);
	buf_zero(out, 3);
	if (c->mode == 1)
		for (int k = 0; k < 3; k++)
			buf_u32be(out, (uint32_t)c->base[k]);
	for (uint32_t i = c->first; i < c->first + c->n; i++)
		for (int v = 0; v < 3; v++)
			for (int k = 0; k < 3; k++) {
				int32_t q = 0;

				if (c->mode == 0) {
					buf_f32be(out, t[i].v[v][k]);
					if (k == 2)
						buf_zero(out, 4);
					continue;
				}
				quantize(t[i].v[v][k], g, &q);
				if (c->mode == 1)
					buf_u16be(out, (uint16_t)((int64_t)q - c->base[k]));
				else
					buf_u32be(out, (uint32_t)q);
			}
	buf_zero(out, start + WO_CL_HDR + 16u * c->unit_start - out->len);
	for (uint32_t i = 0; i < c->n; i++) {
		uint16_t s = t[c->first + i].surface;
		const uint8_t unit[9] = {WO_UNIT_TRI | WO_UNIT_EDGEANGLE | WO_UNIT_SURFACEID,
					 (uint8_t)(3 * i),
					 (uint8_t)(3 * i + 1),
					 (uint8_t)(3 * i + 2),
					 0x1F,
					 0x1F,
					 0x1F,
					 (uint8_t)s,
					 (uint8_t)(s >> 8)};

		buf_put(out, unit, sizeof unit);
	}
	buf_zero(out, start + c->total - out->len);
}

static unsigned bits_for(uint64_t v) /* 1 + floor(log2(max(1, v))) */
{
	unsigned b = 1;

	while (v > 1) {
		v >>= 1;
		b++;
	}
	return b;
}

/* A balanced tree over the clusters in their order, numbered breadth first, built without
 * recursion: node k covers clusters lo[k] .. hi[k] - 1 and splits them in halves. */
static enum rc put_kd(const struct wcl *c, uint32_t ncl, struct buf *out)
{
	uint32_t nodes = ncl > 1 ? ncl - 1 : 0, next = 1;
	uint32_t *lo = xcalloc_n(nodes ? nodes : 1, sizeof *lo);
	uint32_t *hi = xcalloc_n(nodes ? nodes : 1, sizeof *hi);
	uint32_t *par = xcalloc_n(nodes ? nodes : 1, sizeof *par);

	if (!lo || !hi || !par) {
		free(lo), free(hi), free(par);
		return RC_NOMEM;
	}
	if (nodes)
		hi[0] = ncl;
	for (uint32_t k = 0; k < nodes; k++) {
		uint32_t mid = lo[k] + (hi[k] - lo[k]) / 2;
		const uint32_t r[2][2] = {{lo[k], mid}, {mid, hi[k]}};
		float ext[2] = {INFINITY, -INFINITY}; /* right's minimum, left's maximum */

		buf_u32be(out, par[k]);
		buf_u32be(out, 0); /* axis x */
		for (int s = 0; s < 2; s++) {
			for (uint32_t j = r[s][0]; j < r[s][1]; j++)
				ext[s == 0] =
				    s == 0 ? fmaxf(ext[1], c[j].xmax) : fminf(ext[0], c[j].xmin);
			if (r[s][1] - r[s][0] == 1) {
				buf_u32be(out, c[r[s][0]].n);
				buf_u32be(out, r[s][0] << 16);
			} else {
				lo[next] = r[s][0], hi[next] = r[s][1], par[next] = k;
				buf_u32be(out, WO_KD_BRANCH);
				buf_u32be(out, next++);
			}
		}
		buf_f32be(out, ext[0]);
		buf_f32be(out, ext[1]);
	}
	free(lo), free(hi), free(par);
	return RC_OK;
}

/* Every coordinate finite: the quantised encoding has no NaN or infinity. */
static bool tris_finite(const struct wo_tri_in *t, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		for (int v = 0; v < 3; v++)
			for (int k = 0; k < 3; k++)
				if (!isfinite(t[i].v[v][k]))
					return false;
	return true;
}

/* Cut the triangles into clusters of CM_MAX_TRIS, plan each (its offset from *at on), and
 * take the bounds of the coordinates as they will decode. */
static void plan_all(const struct wo_tri_in *t, uint32_t n, struct wcl *c, uint32_t ncl,
		     float granularity, uint64_t *at, float bmin[3], float bmax[3])
{
	for (uint32_t i = 0; i < ncl; i++) {
		c[i].first = i * CM_MAX_TRIS;
		c[i].n = n - c[i].first < CM_MAX_TRIS ? n - c[i].first : CM_MAX_TRIS;
		plan(t, &c[i], granularity, at);
		for (uint32_t j = c[i].first; j < c[i].first + c[i].n; j++)
			for (int v = 0; v < 3; v++)
				for (int k = 0; k < 3; k++) {
					float x = decoded(t[j].v[v][k], c[i].mode, granularity);

					bmin[k] = fminf(bmin[k], x);
					bmax[k] = fmaxf(bmax[k], x);
				}
	}
}

/* A box as the header and the KD-tree store it: min xyz, a pad word, max xyz, a pad word. */
static void put_box(struct buf *out, const float bmin[3], const float bmax[3])
{
	for (int k = 0; k < 3; k++)
		buf_f32be(out, bmin[k]);
	buf_zero(out, 4);
	for (int k = 0; k < 3; k++)
		buf_f32be(out, bmax[k]);
	buf_zero(out, 4);
}

/* The collision mesh's header, up to the KD-tree's. */
static void put_header(struct buf *out, const float bmin[3], const float bmax[3], uint32_t ncl,
		       uint32_t n, uint64_t table, float granularity, uint64_t at)
{
	put_box(out, bmin, bmax);
	buf_u32be(out, 0); /* vtable */
	buf_u32be(out, bits_for(ncl) + bits_for(9ull * (n < CM_MAX_TRIS ? n : CM_MAX_TRIS)) + 1);
	buf_u32be(out, n);
	buf_u32be(out, 0);
	buf_u32be(out, WO_CM_HDR);
	buf_u32be(out, (uint32_t)table);
	buf_f32be(out, granularity);
	buf_u16be(out, WO_CMF_ONESIDED);
	buf_u8(out, 0); /* group id size */
	buf_u8(out, 2); /* surface id size */
	buf_u32be(out, ncl);
	buf_u32be(out, ncl);
	buf_u32be(out, n);
	buf_u32be(out, n);
	buf_u32be(out, (uint32_t)at);
	buf_u16be(out, 0);
	buf_u16be(out, 0);
	buf_u8(out, 128); /* default edge angle, as DUMB writes */
	buf_zero(out, 3);
	buf_u32be(out, bits_for(ncl));
}

enum rc wo_cmesh_write(const struct wo_tri_in *t, uint32_t n, float granularity, struct buf *out)
{
	uint32_t ncl = (n + CM_MAX_TRIS - 1) / CM_MAX_TRIS, kd_nodes = ncl > 1 ? ncl - 1 : 0;
	uint64_t kd_size = WO_KD_HDR + (uint64_t)kd_nodes * WO_KD_NODE, at;
	uint64_t table = align_up(WO_CM_HDR + kd_size, 16);
	float bmin[3] = {INFINITY, INFINITY, INFINITY}, bmax[3] = {-INFINITY, -INFINITY, -INFINITY};
	struct wcl *c;
	size_t base = out->len;
	enum rc rc;

	if (!isfinite(granularity) || granularity < 0 || ncl > 0x10000)
		return RC_INVAL;
	if (!tris_finite(t, n))
		return RC_INVAL;
	c = xcalloc_n(ncl ? ncl : 1, sizeof *c);
	if (!c)
		return RC_NOMEM;
	at = align_up(table + 4ull * ncl, 16);
	plan_all(t, n, c, ncl, granularity, &at, bmin, bmax);
	if (at > UINT32_MAX) {
		free(c);
		return RC_INVAL;
	}
	if (!n)
		for (int k = 0; k < 3; k++)
			bmin[k] = bmax[k] = 0;
	put_header(out, bmin, bmax, ncl, n, table, granularity, at);
	/* KD-tree header, then its branches */
	buf_u32be(out, kd_nodes ? WO_CM_HDR + WO_KD_HDR : 0);
	buf_u32be(out, kd_nodes);
	buf_u32be(out, n);
	buf_zero(out, 4);
	put_box(out, bmin, bmax);
	rc = put_kd(c, ncl, out);
	buf_zero(out, base + table - out->len);
	for (uint32_t i = 0; i < ncl; i++)
		buf_u32be(out, c[i].off);
	buf_zero(out, base + align_up(table + 4ull * ncl, 16) - out->len);
	for (uint32_t i = 0; i < ncl; i++)
		put_cluster(t, &c[i], granularity, out);
	free(c);
	if (rc == RC_OK && out->oom)
		rc = RC_NOMEM;
	return rc;
}
