/* Big-endian encoders for the PS3 model-arena objects (docs/skate-objects.md) and the Xbox 360
 * renderengine objects (docs/xbox360.md, "Models"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/formats/arena.h"
#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_x360.h"
#include "psgfs/gen/gen_psg_objects.h"

static uint32_t po_take(struct psg_builder *b, uint32_t idx)
{
	return idx == PSGO_NEW ? psgb_reserve(b) : idx;
}

/* Hand the encoded bytes to slot idx. An oom buffer makes psgb_set fail the builder. */
static uint32_t po_emit(struct psg_builder *b, uint32_t idx, uint32_t type, uint32_t align,
			struct buf *o)
{
	psgb_set(b, idx, type, align, o->oom ? NULL : o->data, o->len);
	buf_free(o);
	return idx;
}

/* Declare a reference field when its value is a dictionary index (not null, not a subref). */
static void po_ref(struct psg_builder *b, uint32_t idx, size_t off, uint32_t v)
{
	if (v != 0 && (v >> 22) == 0)
		psgb_ref(b, idx, (uint32_t)off);
}

static void po_f32(struct buf *o, float f)
{
	buf_f32be(o, f);
}

static void po_aabb(struct buf *o, const struct psgo_aabb *a)
{
	for (int i = 0; i < 4; i++)
		po_f32(o, a->min[i]);
	for (int i = 0; i < 4; i++)
		po_f32(o, a->max[i]);
}

/* Pooled NUL-terminated strings: equal strings share one offset. */
struct po_pool {
	const char **s;
	uint32_t *off; /* relative to the pool start */
	uint32_t n, size;
	size_t cap;
	bool oom;
};

static uint32_t po_pool_add(struct po_pool *p, const char *s)
{
	if (!s)
		s = "";
	for (uint32_t i = 0; i < p->n; i++)
		if (strcmp(p->s[i], s) == 0)
			return p->off[i];
	if (p->n == p->cap) { /* two arrays, one capacity */
		size_t cap = p->cap, cap_off = p->cap;
		const char **ns = xgrow_n(p->s, p->n, &cap, sizeof *ns, 16);
		uint32_t *no;

		if (!ns) {
			p->oom = true;
			return 0;
		}
		p->s = ns;
		no = xgrow_n(p->off, p->n, &cap_off, sizeof *no, 16);
		if (!no) {
			p->oom = true;
			return 0;
		}
		p->off = no;
		p->cap = cap;
	}
	p->s[p->n] = s;
	p->off[p->n] = p->size;
	p->size += (uint32_t)strlen(s) + 1;
	return p->off[p->n++];
}

static void po_pool_write(struct buf *o, const struct po_pool *p)
{
	for (uint32_t i = 0; i < p->n; i++)
		buf_put(o, p->s[i], strlen(p->s[i]) + 1);
}

static void po_pool_free(struct po_pool *p)
{
	free(p->s);
	free(p->off);
}

uint32_t psgo_version(struct psg_builder *b, uint32_t idx, bool model)
{
	struct buf o;

	idx = po_take(b, idx);
	buf_init(&o);
	buf_u32be(&o, 25);
	buf_u32be(&o, 13);
	if (model)
		buf_zero(&o, 8);
	return po_emit(b, idx, RW_T_VERSION, 0x10, &o);
}

uint32_t psgo_vdes(struct psg_builder *b, uint32_t idx, const struct psgo_vdes_elem *el, unsigned n,
		   uint16_t stride)
{
	static const uint8_t trailer[8] = {0xFF, 0, 0xFF, 0, 0, 0, 0, 0};
	uint32_t flags = 0;
	struct buf o;

	idx = po_take(b, idx);
	if (n > 16)
		n = 16;
	for (unsigned i = 0; i < n; i++)
		if (el[i].type < 32)
			flags |= 1u << el[i].type;
	buf_init(&o);
	buf_u32be(&o, 0);
	buf_u32be(&o, flags);
	buf_u16be(&o, 1);
	buf_u16be(&o, (uint16_t)n);
	buf_u16be(&o, (uint16_t)((1u << n) - 1));
	buf_u16be(&o, 0);
	for (unsigned i = 0; i < n; i++) {
		buf_u8(&o, el[i].vertex_type);
		buf_u8(&o, el[i].num_components);
		buf_u8(&o, 0);
		buf_u8(&o, el[i].offset);
		buf_u16be(&o, stride);
		buf_u8(&o, el[i].type);
		buf_u8(&o, 1); /* PERVERTEX */
	}
	buf_put(&o, trailer, sizeof trailer);
	return po_emit(b, idx, RW_T_VDES, 4, &o);
}

uint32_t psgo_vertex_buffer(struct psg_builder *b, uint32_t idx, uint32_t base_res, uint32_t size)
{
	struct buf o;

	idx = po_take(b, idx);
	buf_init(&o);
	buf_u32be(&o, base_res);
	buf_u32be(&o, 0);
	buf_u32be(&o, size);
	buf_u32be(&o, 0);
	po_ref(b, idx, 0, base_res);
	return po_emit(b, idx, RW_T_VB, 4, &o);
}

uint32_t psgo_index_buffer(struct psg_builder *b, uint32_t idx, uint32_t base_res,
			   uint32_t num_indices, uint32_t stride)
{
	struct buf o;

	idx = po_take(b, idx);
	buf_init(&o);
	buf_u32be(&o, base_res);
	buf_u32be(&o, 0);
	buf_u32be(&o, num_indices);
	buf_u32be(&o, stride);
	buf_u8(&o, stride == 2 ? 1 : 0);
	buf_zero(&o, 3);
	po_ref(b, idx, 0, base_res);
	return po_emit(b, idx, RW_T_IB, 4, &o);
}

uint32_t psgo_mesh_helper(struct psg_builder *b, uint32_t idx, const uint32_t *ibs, unsigned n_ib,
			  const uint32_t *vbs, unsigned n_vb)
{
	struct buf o;

	idx = po_take(b, idx);
	buf_init(&o);
	buf_u32be(&o, n_ib);
	buf_u32be(&o, n_vb);
	for (unsigned i = 0; i < n_ib; i++) {
		po_ref(b, idx, o.len, ibs[i]);
		buf_u32be(&o, ibs[i]);
	}
	for (unsigned i = 0; i < n_vb; i++) {
		po_ref(b, idx, o.len, vbs[i]);
		buf_u32be(&o, vbs[i]);
	}
	return po_emit(b, idx, RW_T_MESHHELPER, 4, &o);
}

size_t psgo_optimesh_size(uint32_t n_islands, uint32_t n_remap)
{
	return (size_t)align_up(0x60 + 12ull * n_islands + 2ull * n_remap, 4);
}

/* One DrawIndexedParameters record: PS3 {start, count, prim, 3 zero bytes}; Xbox 360
 * {prim, base vertex, start, count}. */
static void po_island(struct buf *o, const struct psgo_island *is, bool x360)
{
	if (x360) {
		buf_u32be(o, is->prim);
		buf_u32be(o, (uint32_t)is->base_vertex);
		buf_u32be(o, is->start_index);
		buf_u32be(o, is->index_count);
		return;
	}
	buf_u32be(o, is->start_index);
	buf_u32be(o, is->index_count);
	buf_u8(o, (uint8_t)is->prim);
	buf_zero(o, 3);
}

uint32_t psgo_optimesh(struct psg_builder *b, uint32_t idx, const struct psgo_optimesh *m)
{
	struct buf o;
	uint32_t draw = 0x60, remap = 0x60 + (m->x360 ? 16 : 12) * m->n_islands;

	idx = po_take(b, idx);
	buf_init(&o);
	po_aabb(&o, &m->bbox);
	buf_u32be(&o, m->num_verts);
	po_ref(b, idx, 0x24, m->material);
	buf_u32be(&o, m->material);
	po_ref(b, idx, 0x28, m->vdes);
	buf_u32be(&o, m->vdes);
	po_ref(b, idx, 0x2C, m->mesh_helper);
	buf_u32be(&o, m->mesh_helper);
	po_ref(b, idx, 0x30, m->ib);
	buf_u32be(&o, m->ib);
	po_ref(b, idx, 0x34, m->vb);
	buf_u32be(&o, m->vb);
	buf_u32be(&o, m->n_islands);
	po_ref(b, idx, 0x3C, m->island_areas);
	buf_u32be(&o, m->island_areas);
	po_ref(b, idx, 0x40, m->island_aabbs);
	buf_u32be(&o, m->island_aabbs);
	buf_u32be(&o, draw);
	buf_u32be(&o, m->n_remap);
	buf_u32be(&o, remap);
	buf_zero(&o, 16); /* blend shapes: count, table, names, pad */
	for (uint32_t i = 0; i < m->n_islands; i++)
		po_island(&o, &m->islands[i], m->x360);
	for (uint32_t i = 0; i < m->n_remap; i++)
		buf_u16be(&o, m->remap[i]);
	buf_pad_to(&o, 4);
	return po_emit(b, idx, RW_T_OPTIMESH, 0x10, &o);
}

/* ---- Xbox 360 ---- */

uint32_t psgo_x360_vdes(struct psg_builder *b, uint32_t idx, const struct psgo_x360_elem *el,
			unsigned n, uint8_t stride)
{
	uint32_t flags = 0;
	struct buf o;

	idx = po_take(b, idx);
	if (n > 16)
		n = 16;
	for (unsigned i = 0; i < n; i++)
		if (el[i].type < 32)
			flags |= 1u << el[i].type;
	buf_init(&o);
	buf_u32be(&o, 0); /* m_d3dVertexDeclaration: made at load time */
	buf_u32be(&o, flags);
	buf_u16be(&o, (uint16_t)n);
	buf_u16be(&o, 0); /* m_refCount */
	buf_u16be(&o, 0); /* m_instanceStreams */
	buf_u16be(&o, 0);
	for (unsigned i = 0; i < n; i++) {
		buf_u16be(&o, 0); /* stream */
		buf_u16be(&o, el[i].offset);
		buf_u32be(&o, el[i].format);
		buf_u8(&o, 0); /* method: default */
		buf_u8(&o, el[i].usage);
		buf_u8(&o, el[i].usage_index);
		buf_u8(&o, el[i].type);
		buf_u32be(&o, 1); /* PERVERTEX */
	}
	buf_u8(&o, stride);
	buf_zero(&o, 7);
	return po_emit(b, idx, RW_T_VDES, 4, &o);
}

/* The Direct3D resource header of a buffer: Common, reference count 1, fences, identifier, and
 * the flush range every real Xbox 360 resource seen carries. */
static void po_d3d_resource(struct buf *o, uint32_t common)
{
	buf_u32be(o, common);
	buf_u32be(o, 1);
	buf_zero(o, 12);
	buf_u32be(o, 0xFFFF0000u);
}

uint32_t psgo_x360_vertex_buffer(struct psg_builder *b, uint32_t idx, uint32_t size)
{
	struct buf o;

	idx = po_take(b, idx);
	buf_init(&o);
	po_d3d_resource(&o, 1);		   /* D3DRTYPE_VERTEXBUFFER */
	buf_u32be(&o, 3);		   /* fetch constant type: vertex; address 0 until load */
	buf_u32be(&o, size >> 2 << 2 | 2); /* size in dwords (bits 2-25), byte swap 8in32 */
	buf_u32be(&o, size);
	buf_u32be(&o, 0);
	return po_emit(b, idx, RW_T_VB, 4, &o);
}

uint32_t psgo_x360_index_buffer(struct psg_builder *b, uint32_t idx, uint32_t num_indices,
				uint32_t width)
{
	uint32_t common = 2u | (width == 4 ? 0x80000000u | 2u << 29 : 1u << 29);
	struct buf o;

	idx = po_take(b, idx);
	buf_init(&o);
	po_d3d_resource(&o, common); /* D3DRTYPE_INDEXBUFFER, 32-bit flag, byte swap */
	buf_u32be(&o, 0);	     /* Address: set at load */
	buf_u32be(&o, num_indices * width);
	buf_u32be(&o, num_indices);
	return po_emit(b, idx, RW_T_IB, 4, &o);
}

void psgo_model_layout(const struct psgo_model *m, struct psgo_model_layout *l)
{
	uint32_t names = 0;

	for (uint32_t i = 0; i < m->n_bones; i++)
		names += (uint32_t)strlen(m->names && m->names[i] ? m->names[i] : "") + 1;
	l->ibp = 0x40;
	l->mesh_table = l->ibp + 64u * m->n_bones;
	l->name_table = l->mesh_table + 8u * m->n_meshes;
	l->names = l->name_table + 4u * m->n_bones;
	l->aabbs = (uint32_t)align_up(l->names + names, 16);
	l->areas = l->aabbs + 32u * m->n_islands;
	l->size = l->areas + 16u * m->n_islands;
}

uint32_t psgo_model(struct psg_builder *b, uint32_t idx, const struct psgo_model *m)
{
	struct psgo_model_layout l;
	struct buf o;
	uint32_t at;

	idx = po_take(b, idx);
	psgo_model_layout(m, &l);
	buf_init(&o);
	po_aabb(&o, &m->bbox);
	buf_u32be(&o, l.ibp);
	buf_u32be(&o, l.mesh_table);
	buf_u32be(&o, l.name_table);
	buf_u32be(&o, l.names);
	buf_u16be(&o, m->n_total_bones ? m->n_total_bones : m->n_bones);
	buf_u16be(&o, m->n_meshes);
	buf_u16be(&o, m->n_bones);
	buf_u16be(&o, m->n_islands);
	buf_u32be(&o, l.aabbs);
	buf_u32be(&o, l.areas);
	for (uint32_t i = 0; i < m->n_bones; i++)
		for (int k = 0; k < 16; k++)
			po_f32(&o, m->ibp ? m->ibp[i][k] : (k % 5 == 0 ? 1.0f : 0.0f));
	for (uint32_t i = 0; i < m->n_meshes; i++) {
		po_ref(b, idx, o.len, m->meshes[i].mesh);
		buf_u32be(&o, m->meshes[i].mesh);
		po_ref(b, idx, o.len, m->meshes[i].material);
		buf_u32be(&o, m->meshes[i].material);
	}
	at = l.names;
	for (uint32_t i = 0; i < m->n_bones; i++) {
		buf_u32be(&o, at);
		at += (uint32_t)strlen(m->names && m->names[i] ? m->names[i] : "") + 1;
	}
	for (uint32_t i = 0; i < m->n_bones; i++) {
		const char *s = m->names && m->names[i] ? m->names[i] : "";

		buf_put(&o, s, strlen(s) + 1);
	}
	buf_pad_to(&o, 16);
	for (uint32_t i = 0; i < m->n_islands; i++)
		po_aabb(&o, &m->island_aabbs[i]);
	for (uint32_t i = 0; i < m->n_islands; i++)
		for (int k = 0; k < 4; k++)
			po_f32(&o, m->island_areas[i][k]);
	return po_emit(b, idx, RW_T_RENDERMODEL, 0x10, &o);
}

uint32_t psgo_toc(struct psg_builder *b, uint32_t idx, const struct psgo_toc_entry *e, uint32_t n)
{
	struct po_pool pool = {0};
	uint32_t *map_type = xcalloc_n(n ? n : 1, sizeof *map_type);
	uint32_t *map_idx = xcalloc_n(n ? n : 1, sizeof *map_idx);
	uint32_t n_map = 0, names_off = 0x14 + 24 * n, map_off;
	bool any_name = false;
	struct buf o;

	idx = po_take(b, idx);
	buf_init(&o);
	if (!map_type || !map_idx) {
		o.oom = true;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k;

		if (e[i].name)
			any_name = true;
		for (k = 0; k < n_map && map_type[k] != e[i].type; k++)
			;
		if (k == n_map) {
			map_type[n_map] = e[i].type;
			map_idx[n_map++] = i;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		if (e[i].name)
			po_pool_add(&pool, e[i].name);
	map_off = (uint32_t)align_up(names_off + pool.size, 4);
	buf_u32be(&o, n);
	buf_u32be(&o, 0x14);
	buf_u32be(&o, any_name ? names_off : map_off);
	buf_u32be(&o, n_map);
	buf_u32be(&o, map_off);
	for (uint32_t i = 0; i < n; i++) {
		buf_u32be(&o, e[i].name ? names_off + po_pool_add(&pool, e[i].name) : 0);
		buf_u32be(&o, e[i].pad);
		buf_u64be(&o, e[i].guid);
		buf_u32be(&o, e[i].type);
		po_ref(b, idx, o.len, e[i].object);
		buf_u32be(&o, e[i].object);
	}
	po_pool_write(&o, &pool);
	buf_pad_to(&o, 4);
	for (uint32_t k = 0; k < n_map; k++) {
		buf_u32be(&o, map_type[k]);
		buf_u32be(&o, map_idx[k]);
	}
	if (pool.oom)
		o.oom = true;
out:
	free(map_type);
	free(map_idx);
	po_pool_free(&pool);
	return po_emit(b, idx, RW_T_TOC, 0x10, &o);
}

uint32_t psgo_material(struct psg_builder *b, uint32_t idx, const struct psgo_material *m,
		       uint32_t n)
{
	struct po_pool pool = {0};
	uint32_t n_ch = 0, p_ch, p_str, ch_at;
	struct buf o;

	idx = po_take(b, idx);
	for (uint32_t k = 0; k < n; k++)
		n_ch += m[k].n_ch;
	p_ch = 0x14 + 12 * n;
	p_str = p_ch + 32 * n_ch;
	/* Pool in channel order so offsets are known before the channels are written. */
	for (uint32_t k = 0; k < n; k++) {
		for (uint32_t c = 0; c < m[k].n_ch; c++) {
			po_pool_add(&pool, m[k].ch[c].shader_input);
			if (!m[k].ch[c].is_constants && m[k].ch[c].stream_name)
				po_pool_add(&pool, m[k].ch[c].stream_name);
		}
	}
	buf_init(&o);
	buf_u32be(&o, n);
	buf_u32be(&o, n_ch);
	buf_u32be(&o, 0x14);
	buf_u32be(&o, p_ch);
	buf_u32be(&o, p_str);
	ch_at = p_ch;
	for (uint32_t k = 0; k < n; k++) {
		buf_u32be(&o, m[k].n_ch);
		buf_u32be(&o, m[k].flags);
		buf_u32be(&o, ch_at);
		ch_at += 32 * m[k].n_ch;
	}
	for (uint32_t k = 0; k < n; k++) {
		for (uint32_t c = 0; c < m[k].n_ch; c++) {
			const struct psgo_channel *ch = &m[k].ch[c];

			buf_u32be(&o, p_str + po_pool_add(&pool, ch->shader_input));
			buf_u16be(&o, ch->flags);
			buf_u16be(&o, ch->image_channel);
			buf_u32be(&o, 0xDEADBEEFu);
			buf_u32be(&o, 0xDEADC0DEu);
			if (ch->is_constants) {
				for (int i = 0; i < 4; i++)
					po_f32(&o, ch->constants[i]);
				continue;
			}
			buf_u64be(&o, ch->guid);
			buf_u32be(&o, ch->stream_name ? p_str + po_pool_add(&pool, ch->stream_name)
						      : 0);
			po_ref(b, idx, o.len, ch->stream);
			buf_u32be(&o, ch->stream);
		}
	}
	po_pool_write(&o, &pool);
	buf_zero(&o, 16);
	if (pool.oom)
		o.oom = true;
	po_pool_free(&pool);
	return po_emit(b, idx, RW_T_RENDERMATERIAL, 0x10, &o);
}

uint32_t psgo_instance(struct psg_builder *b, uint32_t idx, uint32_t type_id_field,
		       const struct psgo_instance *in, uint32_t n)
{
	struct po_pool pool = {0};
	uint32_t p_str = 0x20 + 0x9C * n;
	struct buf o;

	idx = po_take(b, idx);
	for (uint32_t k = 0; k < n; k++) {
		po_pool_add(&pool, in[k].name);
		po_pool_add(&pool, in[k].description);
		po_pool_add(&pool, in[k].component);
		po_pool_add(&pool, in[k].category);
	}
	buf_init(&o);
	buf_u32be(&o, type_id_field);
	buf_u32be(&o, n);
	buf_u32be(&o, pool.n);
	buf_u32be(&o, 0x20);
	buf_u32be(&o, p_str);
	buf_zero(&o, 0x20 - 0x14);
	for (uint32_t k = 0; k < n; k++) {
		const struct psgo_instance *i = &in[k];

		for (int j = 0; j < 16; j++)
			po_f32(&o, i->matrix[j]);
		po_aabb(&o, &i->bbox);
		buf_u64be(&o, i->guid);
		buf_u64be(&o, i->guid_local);
		buf_put(&o, i->attrib, 16);
		po_ref(b, idx, o.len, i->rmodel);
		buf_u32be(&o, i->rmodel);
		po_ref(b, idx, o.len, i->cmodel);
		buf_u32be(&o, i->cmodel);
		po_ref(b, idx, o.len, i->embedded);
		buf_u32be(&o, i->embedded);
		buf_u32be(&o, p_str + po_pool_add(&pool, i->name));
		buf_u32be(&o, p_str + po_pool_add(&pool, i->description));
		buf_u32be(&o, p_str + po_pool_add(&pool, i->component));
		buf_u32be(&o, p_str + po_pool_add(&pool, i->category));
	}
	po_pool_write(&o, &pool);
	if (pool.oom)
		o.oom = true;
	po_pool_free(&pool);
	return po_emit(b, idx, RW_T_INSTANCE, 0x10, &o);
}

static void po_box_add(struct psgo_aabb *box, const float *p, bool *first)
{
	for (int k = 0; k < 3; k++) {
		if (*first || p[k] < box->min[k])
			box->min[k] = p[k];
		if (*first || p[k] > box->max[k])
			box->max[k] = p[k];
	}
	*first = false;
}

void psgo_bounds(const float (*pos)[3], uint32_t n_verts, struct psgo_aabb *box)
{
	bool first = true;

	memset(box, 0, sizeof *box);
	for (uint32_t i = 0; i < n_verts; i++)
		po_box_add(box, pos[i], &first);
}

void psgo_island_bounds(const float (*pos)[3], uint32_t n_verts, const uint16_t *idx16,
			const uint32_t *idx32, uint32_t start, uint32_t count,
			struct psgo_aabb *box, float area[4])
{
	double ax = 0, ay = 0, az = 0, dx, dy, dz;
	bool first = true;

	memset(box, 0, sizeof *box);
	for (uint32_t t = 0; t + 3 <= count; t += 3) {
		uint32_t v[3];
		const float *p0, *p1, *p2;
		double e1[3], e2[3];
		int k;

		for (k = 0; k < 3; k++) {
			uint64_t at = (uint64_t)start + t + (uint32_t)k;

			v[k] = idx16 ? idx16[at] : idx32[at];
			if (v[k] >= n_verts)
				break;
		}
		if (k < 3)
			continue;
		p0 = pos[v[0]];
		p1 = pos[v[1]];
		p2 = pos[v[2]];
		for (k = 0; k < 3; k++) {
			po_box_add(box, pos[v[k]], &first);
			e1[k] = (double)p1[k] - p0[k];
			e2[k] = (double)p2[k] - p0[k];
		}
		ax += fabs(e1[1] * e2[2] - e1[2] * e2[1]) / 2;
		ay += fabs(e1[2] * e2[0] - e1[0] * e2[2]) / 2;
		az += fabs(e1[0] * e2[1] - e1[1] * e2[0]) / 2;
	}
	dx = (double)box->max[0] - box->min[0];
	dy = (double)box->max[1] - box->min[1];
	dz = (double)box->max[2] - box->min[2];
	box->min[3] = box->max[3] = (float)(sqrt(dx * dx + dy * dy + dz * dz) / 2);
	area[0] = (float)ax;
	area[1] = (float)ay;
	area[2] = (float)az;
	area[3] = 0;
}

/* ---- a one-mesh static model arena ---- */

static void po_put_s1(uint8_t *p, float f)
{
	long v = lrintf(f * 32767.0f);

	v = v > 32767 ? 32767 : v < -32767 ? -32767 : v;
	p[0] = (uint8_t)((uint16_t)v >> 8);
	p[1] = (uint8_t)(uint16_t)v;
}

static void po_put_f32(uint8_t *p, float f)
{
	uint32_t u = f32_bits(f);

	p[0] = (uint8_t)(u >> 24);
	p[1] = (uint8_t)(u >> 16);
	p[2] = (uint8_t)(u >> 8);
	p[3] = (uint8_t)u;
}

void psgo_vertex16(uint8_t *p, const float pos[3], float u, float v)
{
	po_put_f32(p, pos[0]);
	po_put_f32(p + 4, pos[1]);
	po_put_f32(p + 8, pos[2]);
	po_put_s1(p + 12, u);
	po_put_s1(p + 14, v);
}

static void po_static1_model(const struct psgo_static1 *m, const char *const *bone,
			     const struct psgo_mesh_ref *mesh, struct psgo_model *model)
{
	*model = (struct psgo_model){
	    .bbox = m->box,
	    .n_bones = 1,
	    .names = bone,
	    .meshes = mesh,
	    .n_meshes = 1,
	    .island_aabbs = m->island_aabbs,
	    .island_areas = m->island_areas,
	    .n_islands = m->n_islands,
	};
}

void psgo_static1_begin(struct psg_builder *b, const struct psgo_static1 *m,
			struct psgo_static1_rows *r)
{
	const struct psgo_mesh_ref mesh = {0};
	struct psgo_model model;
	struct psgo_model_layout ml;

	if (m->x360) {
		psgb_set_platform(b, PSGB_XB2);
		psgb_set_gpu_align(b, 4);
	}
	for (int i = 0; i < 12; i++)
		r->o[i] = psgb_reserve(b);
	po_static1_model(m, &m->bone, &mesh, &model);
	psgo_model_layout(&model, &ml);
	r->s_mat = psgb_add_subref(b, r->o[1], psgo_material_offset(0));
	r->s_areas = psgb_add_subref(b, r->o[10], ml.areas);
	r->s_aabbs = psgb_add_subref(b, r->o[10], ml.aabbs);
	r->s_inst = psgb_add_subref(b, r->o[2], psgo_instance_offset(0));
	psgo_version(b, r->o[0], true);
}

/* Rows 3-6 and 8: the buffers behind their base resources, and the vertex descriptor. */
static void po_static1_buffers(struct psg_builder *b, const struct psgo_static1 *m,
			       const uint32_t o[12])
{
	static const struct psgo_vdes_elem el[2] = {
	    {PSGO_VT_F, 3, 0, PSGO_ET_XYZ},
	    {PSGO_VT_S1, 2, 12, PSGO_ET_TEX0},
	};
	static const struct psgo_x360_elem xel[2] = {
	    {SX360_FMT_FLOAT3, 0, SX360_ET_XYZ, SX360_USAGE_POSITION, 0},
	    {SX360_FMT_SHORT2N, 12, SX360_ET_TEX0, SX360_USAGE_TEXCOORD, 0},
	};

	if (m->x360) {
		psgb_set_base_resource(b, o[3], 4, m->vb, 16 * (size_t)m->nv);
		psgo_x360_vertex_buffer(b, o[4], 16 * m->nv);
		psgb_set_base_resource(b, o[5], 4, m->ib, 2 * (size_t)m->ni);
		psgo_x360_index_buffer(b, o[6], m->ni, 2);
		psgo_x360_vdes(b, o[8], xel, 2, 16);
	} else {
		psgb_set_base_resource(b, o[3], 0x10, m->vb, 16 * (size_t)m->nv);
		psgo_vertex_buffer(b, o[4], o[3], 16 * m->nv);
		psgb_set_base_resource(b, o[5], 0x10, m->ib, 2 * (size_t)m->ni);
		psgo_index_buffer(b, o[6], o[5], m->ni, 2);
		psgo_vdes(b, o[8], el, 2, 16);
	}
}

void psgo_static1_finish(struct psg_builder *b, const struct psgo_static1 *m,
			 const struct psgo_static1_rows *r)
{
	static const uint16_t remap[1] = {0};
	const uint32_t *o = r->o;
	const struct psgo_optimesh om = {
	    .bbox = m->box,
	    .material = r->s_mat,
	    .vdes = o[8],
	    .mesh_helper = o[9],
	    .ib = o[6],
	    .vb = o[4],
	    .island_areas = r->s_areas,
	    .island_aabbs = r->s_aabbs,
	    .islands = m->islands,
	    .n_islands = m->n_islands,
	    .remap = remap,
	    .n_remap = 1,
	    .x360 = m->x360,
	};
	const struct psgo_mesh_ref mesh = {o[7], 0};
	const struct psgo_toc_entry toc[4] = {
	    {NULL, 0xFEFFFFFFu, m->toc_guid[0], RW_T_SUBREF_RENDERMATERIAL, r->s_mat},
	    {NULL, 0x9B0F1678u, m->toc_guid[1], RW_T_RENDERMODEL, o[10]},
	    {NULL, 0x7C0F1678u, m->toc_guid[2], RW_T_OPTIMESH, o[7]},
	    {NULL, 0xFEFFFFFFu, m->toc_guid[3], RW_T_SUBREF_INSTANCE, r->s_inst},
	};
	struct psgo_model model;

	po_static1_buffers(b, m, o);
	psgo_optimesh(b, o[7], &om);
	psgo_mesh_helper(b, o[9], &o[6], 1, &o[4], 1);
	po_static1_model(m, &m->bone, &mesh, &model);
	psgo_model(b, o[10], &model);
	psgo_toc(b, o[11], toc, 4);
}
