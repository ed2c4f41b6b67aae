/* glTF 2.0 binary writer: plan, bounds and the binary parts (see include/psgfs/formats/gltf.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/gltf/gltf_int.h"
#include "psgfs/base/bytes.h"

#define GLB_MAGIC    0x46546C67u /* "glTF" */
#define GLB_JSON     0x4E4F534Au
#define GLB_BIN	     0x004E4942u
#define HEAD_BYTES   20 /* GLB header + JSON chunk header */
#define FIRST_VIEW   4	/* parts before the first buffer view */
#define MAX_UV_SETS  16
#define MAX_JOINT_ID 65535 /* JOINTS_0 is unsigned short */

/* ---- model checks ---- */

static bool nodes_ok(const struct gltf_model *m)
{
	for (uint32_t i = 0; i < m->n_nodes; i++)
		if (m->nodes[i].parent < -1 ||
		    (m->nodes[i].parent >= 0 && (uint32_t)m->nodes[i].parent >= i))
			return false;
	return true;
}

static bool mesh_ok(const struct gltf_model *m, const struct gltf_mesh *me, uint32_t n_joints)
{
	if (me->n_vertices == 0 || me->n_vertices >= UINT32_MAX || me->n_prims == 0 ||
	    me->n_uv > MAX_UV_SETS || (me->skinned && n_joints == 0))
		return false;
	for (uint32_t k = 0; k < me->n_prims; k++) {
		const struct gltf_prim *pr = &me->prims[k];

		if ((pr->lines ? pr->n_indices < 2 || pr->n_indices % 2
			       : pr->n_indices < 3 || pr->n_indices % 3) ||
		    pr->material < -1 ||
		    (pr->material >= 0 && (uint32_t)pr->material >= m->n_materials))
			return false;
	}
	for (uint32_t t = 0; t < me->n_targets; t++)
		if (me->targets[t].n_sparse > me->n_vertices)
			return false;
	return true;
}

/* Channels name existing nodes, each at most once per animation. */
static bool anims_ok(const struct gltf_model *m)
{
	uint8_t *seen = xcalloc_n(m->n_nodes ? m->n_nodes : 1, 1);
	bool ok = seen != NULL;

	for (uint32_t a = 0; ok && a < m->n_anims; a++) {
		const struct gltf_anim *an = &m->anims[a];

		ok = an->n_frames > 0 && an->n_channels > 0 && an->n_channels <= m->n_nodes;
		for (uint32_t k = 0; ok && k < an->n_channels; k++) {
			uint32_t n = an->nodes ? an->nodes[k] : k;

			ok = n < m->n_nodes && !seen[n];
			if (ok)
				seen[n] = 1;
		}
		for (uint32_t k = 0; k < an->n_channels; k++) {
			uint32_t n = an->nodes ? an->nodes[k] : k;

			if (n < m->n_nodes)
				seen[n] = 0;
		}
	}
	free(seen);
	return ok;
}

static enum rc model_ok(const struct gltf_model *m, uint32_t n_joints)
{
	if (!nodes_ok(m) || !anims_ok(m))
		return RC_INVAL;
	for (uint32_t i = 0; i < m->n_meshes; i++)
		if (!mesh_ok(m, &m->meshes[i], n_joints))
			return RC_INVAL;
	for (uint32_t i = 0; i < m->n_materials; i++)
		if (m->materials[i].image < -1 ||
		    (m->materials[i].image >= 0 && (uint32_t)m->materials[i].image >= m->n_images))
			return RC_INVAL;
	for (uint32_t i = 0; i < m->n_images; i++)
		if (!m->images[i].part || !m->images[i].render || !m->images[i].n_parts)
			return RC_INVAL;
	return RC_OK;
}

/* ---- nodes: joints, roots, children, the skeleton root ---- */

static enum rc plan_joints(const struct gltf_model *m, struct gltf_plan *p)
{
	for (uint32_t i = 0; i < m->n_nodes; i++)
		p->n_joints += m->nodes[i].joint;
	p->joints = xcalloc_n(p->n_joints ? p->n_joints : 1, sizeof *p->joints);
	if (!p->joints)
		return RC_NOMEM;
	p->n_joints = 0;
	for (uint32_t i = 0; i < m->n_nodes; i++)
		if (m->nodes[i].joint)
			p->joints[p->n_joints++] = i;
	return RC_OK;
}

/* The joints' common root, or -1 when they span several trees (then a parent is added). */
static enum rc common_root(const struct gltf_model *m, const struct gltf_plan *p, int64_t *root)
{
	uint32_t *top = xcalloc_n(m->n_nodes ? m->n_nodes : 1, sizeof *top);

	if (!top)
		return RC_NOMEM;
	for (uint32_t i = 0; i < m->n_nodes; i++)
		top[i] = m->nodes[i].parent < 0 ? i : top[m->nodes[i].parent];
	*root = p->n_joints ? (int64_t)top[p->joints[0]] : -1;
	for (uint32_t k = 1; k < p->n_joints; k++)
		if (top[p->joints[k]] != (uint32_t)*root)
			*root = -1;
	free(top);
	return RC_OK;
}

/* Parent of written node i (model nodes, the added root, mesh nodes); -1 for scene roots. */
static int64_t out_parent(const struct gltf_model *m, const struct gltf_plan *p, uint32_t i)
{
	if (i < m->n_nodes) {
		if (m->nodes[i].parent >= 0)
			return m->nodes[i].parent;
		return p->synth_root ? (int64_t)m->n_nodes : -1;
	}
	if (i >= m->n_nodes + p->synth_root) {
		const struct gltf_mesh *me = &m->meshes[i - m->n_nodes - p->synth_root];

		if (!me->skinned && me->under && me->under <= m->n_nodes)
			return me->under - 1;
	}
	return -1;
}

static enum rc plan_tree(const struct gltf_model *m, struct gltf_plan *p)
{
	uint32_t n, *fill;
	int64_t root;
	enum rc r = common_root(m, p, &root);

	if (r != RC_OK)
		return r;
	p->synth_root = p->n_joints && root < 0;
	p->skeleton = p->n_joints ? (p->synth_root ? (int64_t)m->n_nodes : root) : -1;
	n = p->n_out_nodes = m->n_nodes + p->synth_root + m->n_meshes;
	p->kid_off = xcalloc_n((size_t)n + 1, sizeof *p->kid_off);
	p->kids = xcalloc_n(n ? n : 1, sizeof *p->kids);
	p->roots = xcalloc_n(n ? n : 1, sizeof *p->roots);
	fill = xcalloc_n(n ? n : 1, sizeof *fill);
	if (!p->kid_off || !p->kids || !p->roots || !fill) {
		free(fill);
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		int64_t par = out_parent(m, p, i);

		if (par >= 0)
			p->kid_off[par + 1]++;
		else
			p->roots[p->n_roots++] = i;
	}
	for (uint32_t i = 0; i < n; i++)
		p->kid_off[i + 1] += p->kid_off[i];
	for (uint32_t i = 0; i < n; i++) {
		int64_t par = out_parent(m, p, i);

		if (par >= 0)
			p->kids[p->kid_off[par] + fill[par]++] = i;
	}
	free(fill);
	return RC_OK;
}

/* ---- buffer views and accessors ---- */

struct vbuild {
	struct gltf_plan *p;
	size_t cap_v, cap_a;
	bool oom;
};

static uint32_t add_view(struct vbuild *vb, struct gltf_view v)
{
	struct gltf_plan *p = vb->p;
	struct gltf_view *nv =
	    vb->oom ? NULL : xgrow_n(p->views, p->n_views, &vb->cap_v, sizeof *nv, 32);

	if (!nv) {
		vb->oom = true;
		return GLTF_NONE;
	}
	p->views = nv;
	p->views[p->n_views] = v;
	return p->n_views++;
}

static void add_acc(struct vbuild *vb, struct gltf_acc a)
{
	struct gltf_plan *p = vb->p;
	struct gltf_acc *na =
	    vb->oom ? NULL : xgrow_n(p->accs, p->n_accs, &vb->cap_a, sizeof *na, 32);

	if (!na) {
		vb->oom = true;
		return;
	}
	p->accs = na;
	p->accs[p->n_accs++] = a;
}

static struct gltf_view data_view(enum gltf_data what, uint32_t mesh, uint32_t set, uint64_t count,
				  uint32_t elem, uint16_t target)
{
	struct gltf_view v = {.kind = VK_DATA,
			      .what = (uint8_t)what,
			      .target = target,
			      .mesh = mesh,
			      .set = set,
			      .count = count,
			      .elem = elem};

	return v;
}

/* A vertex attribute: its view and its accessor. */
static void vertex_attr(struct vbuild *vb, uint32_t mi, const struct gltf_mesh *me,
			enum gltf_data what, uint32_t set, uint32_t elem, uint16_t ctype,
			uint8_t ncomp, bool norm)
{
	struct gltf_view v = data_view(what, mi, set, me->n_vertices, elem, TGT_VERTEX);
	bool pos = what == GLTF_D_POSITION;
	struct gltf_acc a = {.count = me->n_vertices,
			     .ctype = ctype,
			     .ncomp = ncomp,
			     .normalized = norm,
			     .min = pos ? me->min : NULL,
			     .max = pos ? me->max : NULL,
			     .mesh = mi,
			     .pos = pos,
			     .sp_idx = GLTF_NONE,
			     .sp_val = GLTF_NONE};

	if (what == GLTF_D_SKIN)
		v.half = (uint8_t)set, v.set = 0;
	a.view = add_view(vb, v);
	add_acc(vb, a);
}

/* Sparse target accessors (POSITION, then NORMAL): the base is zeros, the views list the
 * vertices the target moves and their deltas. */
static void target_accs(struct vbuild *vb, uint32_t mi, const struct gltf_mesh *me, uint32_t t)
{
	const struct gltf_target *tg = &me->targets[t];
	uint32_t idx = GLTF_NONE, pos = GLTF_NONE, nrm = GLTF_NONE;
	struct gltf_acc a = {.view = GLTF_NONE,
			     .count = me->n_vertices,
			     .ctype = CT_F32,
			     .ncomp = 3,
			     .sp_idx = GLTF_NONE,
			     .sp_val = GLTF_NONE};

	if (tg->n_sparse) {
		idx = add_view(vb, data_view(GLTF_D_TARGET_INDEX, mi, t, tg->n_sparse, 4, 0));
		pos = add_view(vb, data_view(GLTF_D_TARGET_POSITION, mi, t, tg->n_sparse, 12, 0));
		if (me->normals)
			nrm = add_view(vb,
				       data_view(GLTF_D_TARGET_NORMAL, mi, t, tg->n_sparse, 12, 0));
	}
	a.min = tg->min;
	a.max = tg->max;
	a.sp_idx = idx;
	a.sp_val = pos;
	a.sp_count = tg->n_sparse;
	add_acc(vb, a);
	if (me->normals) {
		a.min = a.max = NULL;
		a.sp_val = nrm;
		add_acc(vb, a);
	}
}

static void mesh_views(struct vbuild *vb, uint32_t mi, const struct gltf_mesh *me)
{
	bool wide = me->n_vertices > 65535;

	vertex_attr(vb, mi, me, GLTF_D_POSITION, 0, 12, CT_F32, 3, false);
	if (me->normals)
		vertex_attr(vb, mi, me, GLTF_D_NORMAL, 0, 12, CT_F32, 3, false);
	for (uint32_t k = 0; k < me->n_uv; k++)
		vertex_attr(vb, mi, me, GLTF_D_TEXCOORD, k, 8, CT_F32, 2, false);
	if (me->colors)
		vertex_attr(vb, mi, me, GLTF_D_COLOR, 0, 4, CT_U8, 4, true);
	if (me->skinned) {
		vertex_attr(vb, mi, me, GLTF_D_SKIN, 0, 8, CT_U16, 4, false);
		vertex_attr(vb, mi, me, GLTF_D_SKIN, 1, 16, CT_F32, 4, false);
	}
	for (uint32_t k = 0; k < me->n_prims; k++) {
		uint64_t n = me->prims[k].n_indices;
		struct gltf_acc a = {.count = n,
				     .ctype = wide ? CT_U32 : CT_U16,
				     .ncomp = 1,
				     .sp_idx = GLTF_NONE,
				     .sp_val = GLTF_NONE};

		a.view = add_view(vb, data_view(GLTF_D_INDEX, mi, k, n, wide ? 4 : 2, TGT_INDEX));
		add_acc(vb, a);
	}
	for (uint32_t t = 0; t < me->n_targets; t++)
		target_accs(vb, mi, me, t);
}

static void anim_views(struct vbuild *vb, const struct gltf_anim *an, uint32_t ai)
{
	uint64_t n = (uint64_t)an->n_channels * an->n_frames;

	add_view(vb, data_view(GLTF_D_TIME, 0, ai, an->n_frames, 4, 0));
	add_view(vb, data_view(GLTF_D_TRANSLATION, 0, ai, n, 12, 0));
	add_view(vb, data_view(GLTF_D_ROTATION, 0, ai, n, 16, 0));
	if (an->scale)
		add_view(vb, data_view(GLTF_D_SCALE, 0, ai, n, 12, 0));
}

static enum rc plan_views(const struct gltf_model *m, struct gltf_plan *p)
{
	struct vbuild vb = {p, 0, 0, false};
	uint64_t acc;

	p->mesh_acc = xcalloc_n((size_t)m->n_meshes + 1, sizeof *p->mesh_acc);
	p->anim_acc = xcalloc_n((size_t)m->n_anims + 1, sizeof *p->anim_acc);
	p->anim_view = xcalloc_n((size_t)m->n_anims + 1, sizeof *p->anim_view);
	p->image_view = xcalloc_n((size_t)m->n_images + 1, sizeof *p->image_view);
	if (!p->mesh_acc || !p->anim_acc || !p->anim_view || !p->image_view)
		return RC_NOMEM;
	for (uint32_t i = 0; i < m->n_meshes; i++) {
		p->mesh_acc[i] = p->n_accs;
		mesh_views(&vb, i, &m->meshes[i]);
	}
	p->mesh_acc[m->n_meshes] = p->n_accs;
	if (p->n_joints) {
		struct gltf_view v = {.kind = VK_IBM, .count = p->n_joints, .elem = 64};
		struct gltf_acc a = {.count = p->n_joints,
				     .ctype = CT_F32,
				     .ncomp = 16,
				     .sp_idx = GLTF_NONE,
				     .sp_val = GLTF_NONE};

		a.view = add_view(&vb, v);
		add_acc(&vb, a);
	}
	for (uint32_t i = 0; i < m->n_images; i++) {
		struct gltf_view v = {.kind = VK_IMAGE, .set = i};

		p->image_view[i] = add_view(&vb, v);
	}
	acc = p->n_accs;
	for (uint32_t a = 0; a < m->n_anims; a++) {
		p->anim_view[a] = p->n_views;
		p->anim_acc[a] = (uint32_t)acc;
		anim_views(&vb, &m->anims[a], a);
		acc += 1 + (uint64_t)m->anims[a].n_channels * anim_paths(&m->anims[a]);
		if (acc > UINT32_MAX)
			return RC_UNSUPPORTED;
	}
	p->anim_acc[m->n_anims] = (uint32_t)acc;
	p->n_acc_total = (uint32_t)acc;
	return vb.oom ? RC_NOMEM : RC_OK;
}

/* Byte offsets of the views (each padded to 4) and their layout parts. */
static enum rc plan_offsets(const struct gltf_model *m, struct gltf_plan *p)
{
	uint64_t off = 0;
	uint32_t part = FIRST_VIEW;

	for (uint32_t i = 0; i < p->n_views; i++) {
		struct gltf_view *v = &p->views[i];

		v->n_data_parts = 1;
		if (v->kind == VK_IMAGE) {
			const struct gltf_image *im = &m->images[v->set];

			v->n_data_parts = im->n_parts;
			v->len = 0;
			for (unsigned k = 0; k < im->n_parts; k++) {
				uint64_t n, bytes;
				uint32_t sz;

				im->part(im->ctx, k, &n, &sz);
				if (!mul_ok(n, sz, &bytes) || !add_ok(v->len, bytes, &v->len))
					return RC_UNSUPPORTED;
			}
		} else if (!mul_ok(v->count, v->elem, &v->len)) {
			return RC_UNSUPPORTED;
		}
		if (v->len == 0 || v->len > UINT32_MAX)
			return v->len ? RC_UNSUPPORTED : RC_INVAL;
		v->off = off;
		v->pad = (uint32_t)(align_up(v->len, 4) - v->len);
		v->part = part;
		part += v->n_data_parts + 1;
		off += v->len + v->pad;
		if (off > UINT32_MAX)
			return RC_UNSUPPORTED;
	}
	p->bin_len = off;
	p->n_parts = part;
	return RC_OK;
}

/* ---- the JSON: sections of items, counted once ---- */

static void plan_sections(const struct gltf_model *m, struct gltf_plan *p)
{
	uint32_t n[SEC_COUNT] = {
	    [SEC_HEAD] = 1,
	    [SEC_NODES] = p->n_out_nodes,
	    [SEC_MESHES] = m->n_meshes,
	    [SEC_SKINS] = p->n_joints ? 1 : 0,
	    [SEC_MATERIALS] = m->n_materials,
	    [SEC_TEXTURES] = m->n_images,
	    [SEC_IMAGES] = m->n_images,
	    [SEC_ANIMS] = m->n_anims,
	    [SEC_ACCS] = p->n_acc_total,
	    [SEC_VIEWS] = p->n_views,
	    [SEC_BUFFERS] = p->bin_len ? 1 : 0,
	    [SEC_TAIL] = 1,
	};

	p->sec_first[0] = 0;
	for (int s = 0; s < SEC_COUNT; s++)
		p->sec_first[s + 1] = p->sec_first[s] + n[s];
	p->n_items = p->sec_first[SEC_COUNT];
}

static enum rc plan_json(struct gltf_plan *p)
{
	struct buf b;

	buf_init_count(&b);
	for (uint32_t k = 0; k < p->n_items && !b.oom; k++)
		gltf_json_item(p, k, &b);
	if (b.oom)
		return RC_NOMEM;
	p->json_len = b.len;
	p->json_pad = (uint32_t)(align_up(p->json_len, 4) - p->json_len);
	p->size = HEAD_BYTES + p->json_len + p->json_pad + (p->bin_len ? 8 + p->bin_len : 0);
	return p->size > UINT32_MAX ? RC_UNSUPPORTED : RC_OK;
}

enum rc gltf_plan(const struct gltf_model *m, struct gltf_plan *p)
{
	enum rc r;

	memset(p, 0, sizeof *p);
	p->m = m;
	p->skeleton = -1;
	r = plan_joints(m, p);
	if (r == RC_OK)
		r = model_ok(m, p->n_joints);
	if (r == RC_OK && (uint64_t)m->n_nodes + 1 + m->n_meshes > UINT32_MAX)
		r = RC_UNSUPPORTED;
	if (r == RC_OK)
		r = plan_tree(m, p);
	if (r == RC_OK)
		r = plan_views(m, p);
	if (r == RC_OK)
		r = plan_offsets(m, p);
	if (r == RC_OK) {
		plan_sections(m, p);
		r = plan_json(p);
	}
	if (r != RC_OK) {
		gltf_plan_free(p);
		return r;
	}
	/* Kept as long as the plan: cut to length (grown 32 at a time, which a one-animation
	 * plan mostly leaves unused). */
	p->views = xshrink_n(p->views, p->n_views, sizeof *p->views);
	p->accs = xshrink_n(p->accs, p->n_accs, sizeof *p->accs);
	return RC_OK;
}

size_t gltf_plan_heap(const struct gltf_plan *p)
{
	return heap_block(p->views) + heap_block(p->accs) + heap_block(p->mesh_acc) +
	       heap_block(p->anim_acc) + heap_block(p->anim_view) + heap_block(p->image_view) +
	       heap_block(p->kid_off) + heap_block(p->kids) + heap_block(p->roots) +
	       heap_block(p->joints);
}

void gltf_plan_free(struct gltf_plan *p)
{
	free(p->views);
	free(p->accs);
	free(p->mesh_acc);
	free(p->anim_acc);
	free(p->anim_view);
	free(p->image_view);
	free(p->kid_off);
	free(p->kids);
	free(p->roots);
	free(p->joints);
	memset(p, 0, sizeof *p);
}

uint64_t gltf_size(const struct gltf_plan *p)
{
	return p->size;
}

unsigned gltf_n_parts(const struct gltf_plan *p)
{
	return p->n_parts ? p->n_parts : FIRST_VIEW;
}

/* The view whose parts include `part` (part >= FIRST_VIEW). */
static const struct gltf_view *view_of_part(const struct gltf_plan *p, unsigned part)
{
	uint32_t lo = 0, hi = p->n_views;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->views[mid].part <= part)
			lo = mid;
		else
			hi = mid;
	}
	return p->n_views ? &p->views[lo] : NULL;
}

void gltf_part(const struct gltf_plan *p, unsigned part, uint64_t *n_items, uint32_t *item_size)
{
	const struct gltf_view *v;

	*n_items = 1;
	*item_size = 1;
	switch (part) {
	case 0:
		*item_size = HEAD_BYTES;
		return;
	case 1:
		*n_items = p->n_items;
		*item_size = 0;
		return;
	case 2:
		*n_items = p->json_pad ? 1 : 0;
		*item_size = p->json_pad ? p->json_pad : 1;
		return;
	case 3:
		*n_items = p->bin_len ? 1 : 0;
		*item_size = 8;
		return;
	}
	v = view_of_part(p, part);
	if (!v || part >= v->part + v->n_data_parts + 1) {
		*n_items = 0;
	} else if (part == v->part + v->n_data_parts) {
		*n_items = v->pad ? 1 : 0;
		*item_size = v->pad ? v->pad : 1;
	} else if (v->kind == VK_IMAGE) {
		const struct gltf_image *im = &p->m->images[v->set];

		im->part(im->ctx, part - v->part, n_items, item_size);
	} else {
		*n_items = v->count;
		*item_size = v->elem;
	}
}

/* ---- bounds ---- */

static void minmax_init(float mn[3], float mx[3])
{
	for (int k = 0; k < 3; k++) {
		mn[k] = INFINITY;
		mx[k] = -INFINITY;
	}
}

static void minmax_add(float mn[3], float mx[3], const float v[3])
{
	for (int k = 0; k < 3; k++) {
		mn[k] = v[k] < mn[k] ? v[k] : mn[k];
		mx[k] = v[k] > mx[k] ? v[k] : mx[k];
	}
}

static enum rc bounds_positions(const struct gltf_model *m, void *ctx, uint32_t mi, float (*buf)[3],
				float min[3], float max[3])
{
	const struct gltf_mesh *me = &m->meshes[mi];
	struct gltf_req q = {GLTF_D_POSITION, mi, 0};
	enum rc r = RC_OK;

	minmax_init(min, max);
	for (uint64_t at = 0; at < me->n_vertices && r == RC_OK; at += GLTF_BATCH) {
		size_t n =
		    me->n_vertices - at < GLTF_BATCH ? (size_t)(me->n_vertices - at) : GLTF_BATCH;

		r = m->fill(ctx, &q, at, n, buf);
		for (size_t i = 0; r == RC_OK && i < n; i++) {
			for (int k = 0; k < 3; k++)
				buf[i][k] = gltf_finite(buf[i][k]);
			minmax_add(min, max, buf[i]);
		}
	}
	return r;
}

enum rc gltf_mesh_bounds(const struct gltf_model *m, void *ctx, uint32_t mi, float min[3],
			 float max[3])
{
	float(*buf)[3];
	enum rc r;

	if (mi >= m->n_meshes)
		return RC_INVAL;
	if (!(buf = calloc(GLTF_BATCH, sizeof *buf)))
		return RC_NOMEM;
	r = bounds_positions(m, ctx, mi, buf, min, max);
	free(buf);
	return r;
}

/* Target t: indices increasing and in range; bounds of the deltas and of the zeros. */
static enum rc bounds_target(struct gltf_model *m, void *ctx, uint32_t mi, uint32_t t,
			     float (*buf)[3], uint32_t *idx)
{
	struct gltf_mesh *me = &m->meshes[mi];
	struct gltf_target *tg = &me->targets[t];
	struct gltf_req qi = {GLTF_D_TARGET_INDEX, mi, t}, qv = {GLTF_D_TARGET_POSITION, mi, t};
	static const float zero[3] = {0, 0, 0};
	int64_t last = -1;
	enum rc r = RC_OK;

	minmax_init(tg->min, tg->max);
	if (tg->n_sparse < me->n_vertices)
		minmax_add(tg->min, tg->max, zero);
	for (uint64_t at = 0; at < tg->n_sparse && r == RC_OK; at += GLTF_BATCH) {
		size_t n =
		    tg->n_sparse - at < GLTF_BATCH ? (size_t)(tg->n_sparse - at) : GLTF_BATCH;

		r = m->fill(ctx, &qi, at, n, idx);
		if (r == RC_OK)
			r = m->fill(ctx, &qv, at, n, buf);
		for (size_t i = 0; r == RC_OK && i < n; i++) {
			if ((int64_t)idx[i] <= last || idx[i] >= me->n_vertices)
				return RC_CORRUPT;
			last = idx[i];
			for (int k = 0; k < 3; k++)
				buf[i][k] = gltf_finite(buf[i][k]);
			minmax_add(tg->min, tg->max, buf[i]);
		}
	}
	return r;
}

static enum rc bounds_times(struct gltf_model *m, void *ctx, uint32_t ai, float *buf)
{
	struct gltf_anim *an = &m->anims[ai];
	struct gltf_req q = {GLTF_D_TIME, 0, ai};
	float last = -1.0f;
	enum rc r = RC_OK;

	for (uint64_t at = 0; at < an->n_frames && r == RC_OK; at += GLTF_BATCH) {
		size_t n =
		    an->n_frames - at < GLTF_BATCH ? (size_t)(an->n_frames - at) : GLTF_BATCH;

		r = m->fill(ctx, &q, at, n, buf);
		for (size_t i = 0; r == RC_OK && i < n; i++) {
			if (!isfinite(buf[i]) || buf[i] < 0 || buf[i] <= last)
				return RC_CORRUPT;
			if (at + i == 0)
				an->t_min = buf[i];
			last = an->t_max = buf[i];
		}
	}
	return r;
}

enum rc gltf_bounds(struct gltf_model *m, void *ctx)
{
	float(*buf)[3] = calloc(GLTF_BATCH, sizeof *buf);
	uint32_t *idx = calloc(GLTF_BATCH, sizeof *idx);
	enum rc r = buf && idx ? RC_OK : RC_NOMEM;

	for (uint32_t i = 0; r == RC_OK && i < m->n_meshes; i++) {
		if (m->meshes[i].n_vertices)
			r = bounds_positions(m, ctx, i, buf, m->meshes[i].min, m->meshes[i].max);
		for (uint32_t t = 0; r == RC_OK && t < m->meshes[i].n_targets; t++)
			r = bounds_target(m, ctx, i, t, buf, idx);
	}
	for (uint32_t a = 0; r == RC_OK && a < m->n_anims; a++)
		r = bounds_times(m, ctx, a, (float *)buf);
	free(buf);
	free(idx);
	return r;
}

/* ---- the binary parts ---- */

static void put_head(const struct gltf_plan *p, struct buf *b)
{
	buf_u32le(b, GLB_MAGIC);
	buf_u32le(b, 2);
	buf_u32le(b, (uint32_t)p->size);
	buf_u32le(b, (uint32_t)(p->json_len + p->json_pad));
	buf_u32le(b, GLB_JSON);
}

/*
 * Skin influences as glTF wants them: joints in range, positive finite weights, each joint
 * once, sorted by weight, summing to 1. With two weights the larger is 1 minus the smaller,
 * which makes their float sum exactly 1 (the validator allows no error below 3 weights).
 */
static void fix_influence(struct gltf_influence *f, uint32_t n_joints)
{
	uint16_t j[4];
	float w[4];
	int n = 0;
	double sum = 0, rest = 0;

	for (int k = 0; k < 4; k++) {
		float x = f->weight[k];
		int d;

		if (!isfinite(x) || x <= 0 || f->joint[k] >= n_joints)
			continue;
		for (d = 0; d < n && j[d] != f->joint[k]; d++)
			;
		if (d < n) {
			w[d] += x;
			continue;
		}
		j[n] = f->joint[k];
		w[n++] = x;
	}
	for (int a = 1; a < n; a++) /* insertion sort, larger weights first */
		for (int b = a; b > 0 && w[b] > w[b - 1]; b--) {
			float tw = w[b];
			uint16_t tj = j[b];

			w[b] = w[b - 1], j[b] = j[b - 1];
			w[b - 1] = tw, j[b - 1] = tj;
		}
	for (int k = 0; k < n; k++)
		sum += w[k];
	memset(f, 0, sizeof *f);
	if (n == 0 || !isfinite(sum)) {
		f->weight[0] = 1.0f;
		return;
	}
	for (int k = n - 1; k >= 1; k--) {
		f->joint[k] = j[k];
		f->weight[k] = (float)(w[k] / sum);
		rest += f->weight[k];
	}
	f->joint[0] = j[0];
	f->weight[0] = n == 2 ? 1.0f - f->weight[1] : (float)(1.0 - rest);
}

/* Encode element i of a batch of view v. */
static enum rc put_elem(const struct gltf_plan *p, const struct gltf_view *v, const void *batch,
			size_t i, struct buf *b)
{
	const float *f = (const float *)batch;
	float x[4];

	switch ((enum gltf_data)v->what) {
	case GLTF_D_NORMAL:
		memcpy(x, f + 3 * i, 12);
		gltf_vec_norm(x);
		for (int k = 0; k < 3; k++)
			buf_f32le(b, x[k]);
		return RC_OK;
	case GLTF_D_ROTATION:
		memcpy(x, f + 4 * i, 16);
		gltf_quat_norm(x);
		for (int k = 0; k < 4; k++)
			buf_f32le(b, x[k]);
		return RC_OK;
	case GLTF_D_COLOR:
		buf_put(b, (const uint8_t *)batch + 4 * i, 4);
		return RC_OK;
	case GLTF_D_SKIN: {
		struct gltf_influence in = ((const struct gltf_influence *)batch)[i];

		fix_influence(&in, p->n_joints < MAX_JOINT_ID + 1 ? p->n_joints : MAX_JOINT_ID + 1);
		for (int k = 0; k < 4; k++) {
			if (v->half)
				buf_f32le(b, in.weight[k]);
			else
				buf_u16le(b, in.joint[k]);
		}
		return RC_OK;
	}
	case GLTF_D_INDEX:
	case GLTF_D_TARGET_INDEX: {
		uint32_t ix = ((const uint32_t *)batch)[i];

		if (ix >= p->m->meshes[v->mesh].n_vertices)
			return RC_CORRUPT;
		if (v->elem == 2)
			buf_u16le(b, (uint16_t)ix);
		else
			buf_u32le(b, ix);
		return RC_OK;
	}
	default: {
		size_t nc = v->elem / 4;

		for (size_t k = 0; k < nc; k++)
			buf_f32le(b, gltf_finite(f[nc * i + k]));
		return RC_OK;
	}
	}
}

/* Bytes the callback writes per element of view v. */
static size_t host_size(const struct gltf_view *v)
{
	if (v->what == GLTF_D_SKIN)
		return sizeof(struct gltf_influence);
	if (v->what == GLTF_D_INDEX || v->what == GLTF_D_TARGET_INDEX)
		return 4;
	return v->elem;
}

static enum rc render_data(const struct gltf_plan *p, void *ctx, const struct gltf_view *v,
			   uint64_t first, struct emit *e)
{
	struct gltf_req q = {(enum gltf_data)v->what, v->mesh, v->set};
	uint8_t *batch = malloc(GLTF_BATCH * host_size(v));
	enum rc r = RC_OK;
	bool more = true;

	if (!batch)
		return RC_NOMEM;
	for (uint64_t at = first; at < v->count && more && r == RC_OK;) {
		size_t n = v->count - at < GLTF_BATCH ? (size_t)(v->count - at) : GLTF_BATCH;

		/* A window needs only the elements up to its end. */
		if (!e->counting && e->stop_at > e->b.len) {
			size_t want = (e->stop_at - e->b.len) / v->elem + 1;

			n = want < n ? want : n;
		}
		r = p->m->fill(ctx, &q, at, n, batch);
		for (size_t i = 0; i < n && more && r == RC_OK; i++) {
			r = put_elem(p, v, batch, i, &e->b);
			more = emit_item(e);
		}
		at += n;
	}
	free(batch);
	return r;
}

static enum rc render_ibm(const struct gltf_plan *p, uint64_t first, struct emit *e)
{
	for (uint64_t k = first; k < p->n_joints; k++) {
		const float *m = p->m->nodes[p->joints[k]].ibm;

		for (int c = 0; c < 16; c++) {
			float x = gltf_finite(m[c]);

			if (c == 3 || c == 7 || c == 11)
				x = 0.0f;
			buf_f32le(&e->b, c == 15 ? 1.0f : x);
		}
		if (!emit_item(e))
			break;
	}
	return RC_OK;
}

static enum rc render_view(const struct gltf_plan *p, void *ctx, unsigned part, uint64_t first,
			   struct emit *e)
{
	const struct gltf_view *v = view_of_part(p, part);

	if (!v || part >= v->part + v->n_data_parts + 1)
		return RC_INVAL;
	if (part == v->part + v->n_data_parts) {
		buf_zero(&e->b, v->pad);
		emit_item(e);
		return RC_OK;
	}
	if (v->kind == VK_IMAGE) {
		const struct gltf_image *im = &p->m->images[v->set];

		return im->render(im->ctx, part - v->part, first, e);
	}
	if (v->kind == VK_IBM)
		return render_ibm(p, first, e);
	return render_data(p, ctx, v, first, e);
}

/* Item k's bounds, when the model finds them late and k is a POSITION accessor. */
static enum rc json_bounds(const struct gltf_plan *p, void *ctx, uint64_t k)
{
	uint64_t i = k - p->sec_first[SEC_ACCS];

	if (!p->m->bounds_later || k < p->sec_first[SEC_ACCS] || i >= p->n_accs || !p->accs[i].pos)
		return RC_OK;
	return p->m->bounds_later(ctx, p->accs[i].mesh);
}

enum rc gltf_render(const struct gltf_plan *p, void *ctx, unsigned part, uint64_t first,
		    struct emit *e)
{
	switch (part) {
	case 0:
		put_head(p, &e->b);
		break;
	case 1:
		for (uint64_t k = first; k < p->n_items; k++) {
			enum rc r = e->b.count_only ? RC_OK : json_bounds(p, ctx, k);

			if (r != RC_OK)
				return r;
			gltf_json_item(p, (uint32_t)k, &e->b);
			if (!emit_item(e))
				break;
		}
		return RC_OK;
	case 2:
		for (uint32_t i = 0; i < p->json_pad; i++)
			buf_putc(&e->b, ' ');
		break;
	case 3:
		buf_u32le(&e->b, (uint32_t)p->bin_len);
		buf_u32le(&e->b, GLB_BIN);
		break;
	default:
		return render_view(p, ctx, part, first, e);
	}
	emit_item(e);
	return RC_OK;
}
