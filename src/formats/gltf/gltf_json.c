/*
 * The JSON chunk of a GLB, one item per glTF object (see include/psgfs/formats/gltf.h): item k is
 * found from the section table alone, so a window renders from any item. Deterministic by
 * construction: floats in their shortest round-trip form, bounds exactly (%.17g of the float).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "formats/gltf/gltf_int.h"

/* ---- strings ---- */

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0. No overlongs, surrogates or
 * code points past U+10FFFF. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
	unsigned cp;

	if (c < 0xC2 || c > 0xF4 || n < len)
		return 0;
	cp = c & (0x3F >> (len - 1));
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return len;
}

void gltf_json_string(struct buf *b, const struct gltf_name *nm)
{
	const unsigned char *p = nm->p;
	size_t n = 0, out = 0; /* out: UTF-8 bytes the name has so far */

	while (p && n < nm->len && p[n])
		n++;
	buf_putc(b, '"');
	for (size_t i = 0; i < n;) {
		unsigned c = p[i];
		size_t k = c < 0x80 ? 1 : utf8_seq(p + i, n - i);
		size_t cost = k ? k : 3; /* U+FFFD takes 3 bytes */

		if (out + cost > GLTF_NAME_MAX)
			break;
		out += cost;
		if (c == '"' || c == '\\') {
			buf_putc(b, '\\');
			buf_putc(b, (char)c);
		} else if (c < 0x20 || c == 0x7F) {
			buf_printf(b, "\\u%04x", c);
		} else if (k) {
			buf_put(b, p + i, k);
		} else {
			buf_puts(b, "\\ufffd");
		}
		i += k ? k : 1;
	}
	buf_putc(b, '"');
}

/* A name, or "<kind>_<index>" when it is empty (importers rename empty names, and Blender's
 * then cannot find its own shape keys). */
static void name_or(struct buf *b, const struct gltf_name *nm, const char *kind, uint32_t i)
{
	const unsigned char *p = nm->p;

	if (p && nm->len && p[0])
		gltf_json_string(b, nm);
	else
		buf_printf(b, "\"%s_%u\"", kind, i);
}

static void put_name(struct buf *b, const struct gltf_name *nm, const char *kind, uint32_t i)
{
	buf_puts(b, "\"name\":");
	name_or(b, nm, kind, i);
}

static void put_f32(struct buf *b, float f)
{
	buf_f32txt(b, gltf_finite(f));
}

static void put_vec(struct buf *b, const char *key, const float *v, int n)
{
	buf_printf(b, ",\"%s\":[", key);
	for (int k = 0; k < n; k++) {
		if (k)
			buf_putc(b, ',');
		put_f32(b, v[k]);
	}
	buf_putc(b, ']');
}

static void put_u32_list(struct buf *b, const char *key, const uint32_t *v, uint64_t n)
{
	buf_printf(b, "\"%s\":[", key);
	for (uint64_t k = 0; k < n; k++)
		buf_printf(b, k ? ",%u" : "%u", v[k]);
	buf_putc(b, ']');
}

/* ---- nodes ---- */

static void node_item(const struct gltf_plan *p, uint32_t i, struct buf *b)
{
	const struct gltf_model *m = p->m;
	static const struct gltf_name root = {"root", 4};

	buf_putc(b, '{');
	if (i < m->n_nodes) {
		float t[3], r[4], s[3];

		put_name(b, &m->nodes[i].name, "node", i);
		gltf_node_trs(&m->nodes[i], t, r, s);
		if (t[0] != 0 || t[1] != 0 || t[2] != 0)
			put_vec(b, "translation", t, 3);
		if (r[0] != 0 || r[1] != 0 || r[2] != 0 || r[3] != 1)
			put_vec(b, "rotation", r, 4);
		if (s[0] != 1 || s[1] != 1 || s[2] != 1)
			put_vec(b, "scale", s, 3);
		if (m->nodes[i].mesh && m->nodes[i].mesh <= m->n_meshes &&
		    !m->meshes[m->nodes[i].mesh - 1].skinned)
			buf_printf(b, ",\"mesh\":%u", m->nodes[i].mesh - 1);
	} else if (p->synth_root && i == m->n_nodes) {
		put_name(b, &root, "node", i);
	} else {
		uint32_t mi = i - m->n_nodes - p->synth_root;

		put_name(b, &m->meshes[mi].name, "mesh", mi);
		buf_printf(b, ",\"mesh\":%u", mi);
		if (m->meshes[mi].skinned)
			buf_puts(b, ",\"skin\":0");
	}
	if (p->kid_off[i + 1] > p->kid_off[i]) {
		buf_putc(b, ',');
		put_u32_list(b, "children", p->kids + p->kid_off[i],
			     p->kid_off[i + 1] - p->kid_off[i]);
	}
	buf_putc(b, '}');
}

/* ---- meshes ---- */

/* Accessor numbers of a mesh's attributes, in the order gltf.c creates them. */
struct mesh_accs {
	uint32_t pos, nrm, uv0, col, jnt, wgt, prim0, tgt0;
};

static struct mesh_accs mesh_accs(const struct gltf_plan *p, uint32_t mi)
{
	const struct gltf_mesh *me = &p->m->meshes[mi];
	struct mesh_accs a;
	uint32_t at = p->mesh_acc[mi];

	a.pos = at++;
	a.nrm = me->normals ? at++ : GLTF_NONE;
	a.uv0 = at;
	at += me->n_uv;
	a.col = me->colors ? at++ : GLTF_NONE;
	a.jnt = me->skinned ? at++ : GLTF_NONE;
	a.wgt = me->skinned ? at++ : GLTF_NONE;
	a.prim0 = at;
	a.tgt0 = at + me->n_prims;
	return a;
}

static void put_attributes(const struct gltf_mesh *me, const struct mesh_accs *a, struct buf *b)
{
	buf_printf(b, "\"attributes\":{\"POSITION\":%u", a->pos);
	if (me->normals)
		buf_printf(b, ",\"NORMAL\":%u", a->nrm);
	for (uint32_t k = 0; k < me->n_uv; k++)
		buf_printf(b, ",\"TEXCOORD_%u\":%u", k, a->uv0 + k);
	if (me->colors)
		buf_printf(b, ",\"COLOR_0\":%u", a->col);
	if (me->skinned)
		buf_printf(b, ",\"JOINTS_0\":%u,\"WEIGHTS_0\":%u", a->jnt, a->wgt);
	buf_putc(b, '}');
}

static void put_targets(const struct gltf_mesh *me, const struct mesh_accs *a, struct buf *b)
{
	uint32_t per = me->normals ? 2 : 1;

	buf_puts(b, ",\"targets\":[");
	for (uint32_t t = 0; t < me->n_targets; t++) {
		uint32_t at = a->tgt0 + t * per;

		buf_printf(b, "%s{\"POSITION\":%u", t ? "," : "", at);
		if (me->normals)
			buf_printf(b, ",\"NORMAL\":%u", at + 1);
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
}

static void mesh_item(const struct gltf_plan *p, uint32_t mi, struct buf *b)
{
	const struct gltf_mesh *me = &p->m->meshes[mi];
	struct mesh_accs a = mesh_accs(p, mi);

	buf_putc(b, '{');
	put_name(b, &me->name, "mesh", mi);
	buf_puts(b, ",\"primitives\":[");
	for (uint32_t k = 0; k < me->n_prims; k++) {
		buf_puts(b, k ? ",{" : "{");
		put_attributes(me, &a, b);
		buf_printf(b, ",\"indices\":%u", a.prim0 + k);
		if (me->prims[k].lines)
			buf_puts(b, ",\"mode\":1");
		if (me->prims[k].material >= 0)
			buf_printf(b, ",\"material\":%d", me->prims[k].material);
		if (me->n_targets)
			put_targets(me, &a, b);
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
	if (me->n_targets) {
		/* Where Blender, three.js and others look for morph target names. */
		buf_puts(b, ",\"extras\":{\"targetNames\":[");
		for (uint32_t t = 0; t < me->n_targets; t++) {
			if (t)
				buf_putc(b, ',');
			name_or(b, &me->targets[t].name, "target", t);
		}
		buf_puts(b, "]}");
	}
	buf_putc(b, '}');
}

/* ---- skin, materials, textures, images ---- */

static void skin_item(const struct gltf_plan *p, struct buf *b)
{
	buf_printf(b, "{\"inverseBindMatrices\":%u", p->mesh_acc[p->m->n_meshes]);
	buf_putc(b, ',');
	put_u32_list(b, "joints", p->joints, p->n_joints);
	buf_printf(b, ",\"skeleton\":%lld}", (long long)p->skeleton);
}

static void material_item(const struct gltf_plan *p, uint32_t i, struct buf *b)
{
	const struct gltf_material *mt = &p->m->materials[i];

	buf_putc(b, '{');
	put_name(b, &mt->name, "material", i);
	/* glTF's default is fully metallic, which renders dark without an environment. */
	buf_puts(b, ",\"pbrMetallicRoughness\":{\"metallicFactor\":0");
	if (mt->image >= 0)
		buf_printf(b, ",\"baseColorTexture\":{\"index\":%d}", mt->image);
	buf_puts(b, "}}");
}

static void image_item(const struct gltf_plan *p, uint32_t i, struct buf *b)
{
	const struct gltf_image *im = &p->m->images[i];
	struct gltf_name mime = {im->mime, strlen(im->mime)};

	buf_putc(b, '{');
	put_name(b, &im->name, "image", i);
	buf_printf(b, ",\"bufferView\":%u,\"mimeType\":", p->image_view[i]);
	gltf_json_string(b, &mime);
	buf_putc(b, '}');
}

/* ---- animations: per channel node, translation, rotation[, scale] ---- */

static void anim_item(const struct gltf_plan *p, uint32_t ai, struct buf *b)
{
	static const char *const path[3] = {"translation", "rotation", "scale"};
	const struct gltf_anim *an = &p->m->anims[ai];
	uint32_t np = anim_paths(an), base = p->anim_acc[ai];

	buf_putc(b, '{');
	put_name(b, &an->name, "animation", ai);
	buf_puts(b, ",\"channels\":[");
	for (uint32_t k = 0; k < an->n_channels; k++)
		for (uint32_t q = 0; q < np; q++)
			buf_printf(b, "%s{\"sampler\":%u,\"target\":{\"node\":%u,\"path\":\"%s\"}}",
				   k || q ? "," : "", k * np + q, an->nodes ? an->nodes[k] : k,
				   path[q]);
	buf_puts(b, "],\"samplers\":[");
	for (uint32_t s = 0; s < an->n_channels * np; s++)
		buf_printf(b, "%s{\"input\":%u,\"output\":%u}", s ? "," : "", base, base + 1 + s);
	buf_puts(b, "]}");
}

/* ---- accessors and views ---- */

/* fixed: each number padded with spaces to GLTF_BOUND_WIDTH (gltf_model.bounds_later); a
 * counting pass then reads no value, which may not be found yet. */
static void put_bound(struct buf *b, const char *key, const float *v, bool fixed)
{
	buf_printf(b, ",\"%s\":[", key);
	for (int k = 0; k < 3; k++)
		buf_printf(b, k ? ",%-*.17g" : "%-*.17g", fixed ? GLTF_BOUND_WIDTH : 0,
			   fixed && b->count_only ? 0.0 : (double)gltf_finite(v[k]));
	buf_putc(b, ']');
}

static const char *type_name(unsigned ncomp)
{
	switch (ncomp) {
	case 1:
		return "SCALAR";
	case 2:
		return "VEC2";
	case 3:
		return "VEC3";
	case 4:
		return "VEC4";
	default:
		return "MAT4";
	}
}

static void acc_item(const struct gltf_acc *a, bool fixed, struct buf *b)
{
	buf_putc(b, '{');
	if (a->view != GLTF_NONE)
		buf_printf(b, "\"bufferView\":%u,", a->view);
	buf_printf(b, "\"componentType\":%u,\"count\":%llu,\"type\":\"%s\"", a->ctype,
		   (unsigned long long)a->count, type_name(a->ncomp));
	if (a->normalized)
		buf_puts(b, ",\"normalized\":true");
	if (a->min) {
		put_bound(b, "min", a->min, fixed && a->pos);
		put_bound(b, "max", a->max, fixed && a->pos);
	}
	if (a->sp_count)
		buf_printf(b,
			   ",\"sparse\":{\"count\":%llu,\"indices\":{\"bufferView\":%u,"
			   "\"componentType\":%u},\"values\":{\"bufferView\":%u}}",
			   (unsigned long long)a->sp_count, a->sp_idx, CT_U32, a->sp_val);
	buf_putc(b, '}');
}

/* Implicit accessor i of animation ai: the times, then per channel and path. */
static void anim_acc_item(const struct gltf_plan *p, uint32_t i, struct buf *b)
{
	uint32_t lo = 0, hi = p->m->n_anims;

	while (hi - lo > 1) { /* the animation whose accessors include i */
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->anim_acc[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	const struct gltf_anim *an = &p->m->anims[lo];
	uint32_t j = i - p->anim_acc[lo], np = anim_paths(an), view = p->anim_view[lo];

	if (j == 0) {
		buf_printf(b,
			   "{\"bufferView\":%u,\"componentType\":%u,\"count\":%u,"
			   "\"type\":\"SCALAR\",\"min\":[%.17g],\"max\":[%.17g]}",
			   view, CT_F32, an->n_frames, (double)an->t_min, (double)an->t_max);
		return;
	}
	j--;
	uint32_t k = j / np, q = j % np, elem = q == 1 ? 16 : 12;

	buf_printf(b, "{\"bufferView\":%u,", view + 1 + q);
	if (k)
		buf_printf(b, "\"byteOffset\":%llu,", (unsigned long long)k * an->n_frames * elem);
	buf_printf(b, "\"componentType\":%u,\"count\":%u,\"type\":\"%s\"}", CT_F32, an->n_frames,
		   q == 1 ? "VEC4" : "VEC3");
}

static void view_item(const struct gltf_view *v, struct buf *b)
{
	buf_printf(b, "{\"buffer\":0,\"byteOffset\":%llu,\"byteLength\":%llu",
		   (unsigned long long)v->off, (unsigned long long)v->len);
	if (v->target)
		buf_printf(b, ",\"target\":%u", v->target);
	buf_putc(b, '}');
}

/* ---- items ---- */

static void head_item(const struct gltf_plan *p, struct buf *b)
{
	buf_puts(b, "{\"asset\":{\"generator\":\"psgfs\",\"version\":\"2.0\"}");
	if (p->n_roots) {
		buf_puts(b, ",\"scene\":0,\"scenes\":[{");
		put_u32_list(b, "nodes", p->roots, p->n_roots);
		buf_puts(b, "}]");
	}
}

static void section_item(const struct gltf_plan *p, int sec, uint32_t i, struct buf *b)
{
	switch (sec) {
	case SEC_NODES:
		node_item(p, i, b);
		break;
	case SEC_MESHES:
		mesh_item(p, i, b);
		break;
	case SEC_SKINS:
		skin_item(p, b);
		break;
	case SEC_MATERIALS:
		material_item(p, i, b);
		break;
	case SEC_TEXTURES:
		buf_printf(b, "{\"source\":%u}", i);
		break;
	case SEC_IMAGES:
		image_item(p, i, b);
		break;
	case SEC_ANIMS:
		anim_item(p, i, b);
		break;
	case SEC_ACCS:
		if (i < p->n_accs)
			acc_item(&p->accs[i], p->m->bounds_later != NULL, b);
		else
			anim_acc_item(p, i, b);
		break;
	case SEC_VIEWS:
		view_item(&p->views[i], b);
		break;
	case SEC_BUFFERS:
		buf_printf(b, "{\"byteLength\":%llu}", (unsigned long long)p->bin_len);
		break;
	}
}

void gltf_json_item(const struct gltf_plan *p, uint32_t k, struct buf *b)
{
	static const char *const key[SEC_COUNT] = {
	    [SEC_NODES] = "nodes",	   [SEC_MESHES] = "meshes",	[SEC_SKINS] = "skins",
	    [SEC_MATERIALS] = "materials", [SEC_TEXTURES] = "textures", [SEC_IMAGES] = "images",
	    [SEC_ANIMS] = "animations",	   [SEC_ACCS] = "accessors",	[SEC_VIEWS] = "bufferViews",
	    [SEC_BUFFERS] = "buffers",
	};
	int sec = 0;
	uint32_t i;

	while (sec + 1 < SEC_COUNT && p->sec_first[sec + 1] <= k)
		sec++;
	i = k - p->sec_first[sec];
	if (sec == SEC_HEAD) {
		head_item(p, b);
		return;
	}
	if (sec == SEC_TAIL) {
		buf_putc(b, '}');
		return;
	}
	if (i == 0)
		buf_printf(b, ",\"%s\":[", key[sec]);
	else
		buf_putc(b, ',');
	section_item(p, sec, i, b);
	if (k + 1 == p->sec_first[sec + 1])
		buf_putc(b, ']');
}
