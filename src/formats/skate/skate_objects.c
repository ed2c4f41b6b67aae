/* Pegasus object decoders (docs/skate-objects.md, "VersionData", "TableOfContents",
 * "RenderMaterialData", "InstanceData"). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_objects.h"

#define TOC_HDR	  20u
#define TOC_ENTRY 24u
#define RMD_HDR	  20u
#define RMD_MAT	  12u
#define RMD_CHAN  32u
#define INST_HDR  20u

static void odiag(struct diag *d, uint32_t idx, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void odiag(struct diag *d, uint32_t idx, const char *type, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	if (!d)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	diag_add(d, "object %u (%s): %s", idx, type, line);
}

struct skate_str skate_str_at(const uint8_t *p, size_t len, uint32_t off)
{
	struct skate_str s = {.off = off};
	const uint8_t *nul;

	if (off == 0)
		return s;
	if (!p || off >= len) {
		s.bad = true;
		return s;
	}
	nul = memchr(p + off, 0, len - off);
	if (!nul) {
		s.bad = true;
		return s;
	}
	s.p = p + off;
	s.len = (size_t)(nul - s.p);
	return s;
}

struct skate_ref skate_ref_get(const struct arena *a, uint32_t raw, uint32_t want)
{
	struct skate_ref r = {.raw = raw, .sub = (raw >> 22) == 2};

	r.res = arena_ref_to(a, raw, want, &r.obj, &r.off);
	r.type_ok = r.res == RC_OK;
	if (r.res == RC_CORRUPT) /* resolves, to an object of another type */
		r.res = RC_OK;
	if (r.res != RC_OK)
		r.obj = r.off = 0;
	return r;
}

/* Report a string field that is present but unusable. */
static void check_str(struct diag *d, uint32_t idx, const char *tn, const char *field,
		      const struct skate_str *s, size_t len)
{
	if (!s->bad)
		return;
	if (s->off >= len)
		odiag(d, idx, tn, "%s offset 0x%X past the object (%zu bytes)", field, s->off, len);
	else
		odiag(d, idx, tn, "%s at 0x%X is not NUL-terminated inside the object", field,
		      s->off);
}

/* Report a reference field that does not resolve, or resolves to a type it may not point at
 * (null is the caller's business). */
static void check_ref(const struct arena *a, struct diag *d, uint32_t idx, const char *tn,
		      const char *field, const struct skate_ref *r, uint32_t want)
{
	char lb[16], wb[16];

	if (r->res == RC_NOENT)
		return;
	if (r->res != RC_OK) {
		odiag(d, idx, tn, "%s 0x%08X does not resolve (%s)", field, r->raw, rc_str(r->res));
		return;
	}
	if (!r->type_ok)
		odiag(d, idx, tn, "%s -> %u is %s, expected %s", field, r->obj,
		      rw_type_label(arena_row(a, r->obj)->type_id, lb), arena_want_name(want, wb));
}

/* ---- VersionData ---- */

enum rc skate_version_decode(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			     struct skate_version *out, struct diag *d)
{
	memset(out, 0, sizeof *out);
	if (!p || len < 8) {
		odiag(d, idx, "VersionData", "%zu bytes, need 8", len);
		return RC_CORRUPT;
	}
	struct br r = br_at(p, len, a->big_endian, 0);

	out->version = br_u32(&r);
	out->revision = br_u32(&r);
	out->extra = p + 8;
	out->n_extra = len - 8;
	return RC_OK;
}

/* ---- TableOfContents ---- */

/* What a TOC entry of m_Type `type` points at: its type, the Texture for the texture hash,
 * the object holding the records of the two subreference types seen in real files, else
 * unknown (docs/skate-objects.md, "TableOfContents"). */
static uint32_t toc_want(uint32_t type)
{
	if (type == RW_T_TEXTURE_HASH)
		return RW_T_TEXTURE;
	if (type == RW_T_SUBREF_RENDERMATERIAL)
		return RW_T_RENDERMATERIAL;
	if (type == RW_T_SUBREF_INSTANCE)
		return RW_T_INSTANCE;
	return rw_type_name(type) && type != RW_T_NULL ? type : ARENA_WANT_UNKNOWN;
}

void skate_toc_free(struct skate_toc *t)
{
	free(t->entries);
	free(t->map);
	memset(t, 0, sizeof *t);
}

/* How many of `count` records of `rec` bytes at `off` fit in len; reports the shortfall. */
static uint32_t fit_count(struct diag *d, uint32_t idx, const char *tn, const char *what,
			  size_t len, uint32_t off, uint32_t count, uint32_t rec)
{
	uint64_t room;

	if (count == 0)
		return 0;
	if (off > len) {
		odiag(d, idx, tn, "%s offset 0x%X past the object (%zu bytes), %u records dropped",
		      what, off, len, count);
		return 0;
	}
	room = (len - off) / rec;
	if (count > room) {
		odiag(d, idx, tn,
		      "%s: %u records of %u bytes at 0x%X do not fit in %zu bytes, "
		      "decoding %llu",
		      what, count, rec, off, len, (unsigned long long)room);
		return (uint32_t)room;
	}
	return count;
}

enum rc skate_toc_decode(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			 struct skate_toc *out, struct diag *d)
{
	static const char tn[] = "TableOfContents";
	bool be = a->big_endian;
	struct br r;
	uint32_t n;

	memset(out, 0, sizeof *out);
	if (!p || len < TOC_HDR) {
		odiag(d, idx, tn, "%zu bytes, header needs %u", len, TOC_HDR);
		return RC_CORRUPT;
	}
	r = br_at(p, len, be, 0);
	out->items_count = br_u32(&r);
	out->p_array = br_u32(&r);
	out->p_names = br_u32(&r);
	out->type_count = br_u32(&r);
	out->p_type_map = br_u32(&r);

	n = fit_count(d, idx, tn, "entries", len, out->p_array, out->items_count, TOC_ENTRY);
	if (n) {
		out->entries = xcalloc_n(n, sizeof *out->entries);
		if (!out->entries)
			return RC_NOMEM;
	}
	out->n_entries = n;
	r = br_at(p, len, be, out->p_array);
	for (uint32_t i = 0; i < n; i++) {
		struct skate_toc_entry *t = &out->entries[i];
		char field[32];

		t->name = skate_str_at(p, len, br_u32(&r));
		t->pad = br_u32(&r);
		t->guid = br_u64(&r);
		t->type = br_u32(&r);
		t->object = skate_ref_get(a, br_u32(&r), toc_want(t->type));
		snprintf(field, sizeof field, "entry %u name", i);
		check_str(d, idx, tn, field, &t->name, len);
		snprintf(field, sizeof field, "entry %u m_pObject", i);
		check_ref(a, d, idx, tn, field, &t->object, toc_want(t->type));
		if (t->object.res == RC_NOENT)
			odiag(d, idx, tn, "entry %u m_pObject is null", i);
	}

	n = fit_count(d, idx, tn, "type map", len, out->p_type_map, out->type_count, 8);
	if (n) {
		out->map = xcalloc_n(n, sizeof *out->map);
		if (!out->map) {
			skate_toc_free(out);
			return RC_NOMEM;
		}
	}
	out->n_map = n;
	r = br_at(p, len, be, out->p_type_map);
	for (uint32_t i = 0; i < n; i++) {
		out->map[i].type = br_u32(&r);
		out->map[i].index = br_u32(&r);
	}
	return RC_OK;
}

void skate_toc_items_free(struct skate_toc_item *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

enum rc skate_toc_entries(const struct src *s, const struct arena *a, struct skate_toc_item **out,
			  size_t *n, struct diag *d)
{
	struct skate_toc_item *v = NULL;
	size_t nv = 0, cap = 0;

	*out = NULL;
	*n = 0;
	for (uint32_t i = 0; i < a->n_dict; i++) {
		struct skate_toc t;
		uint8_t *p = NULL;
		size_t len = 0;
		enum rc r;

		if (arena_row(a, i)->type_id != RW_T_TOC)
			continue;
		r = arena_read_object(s, a, i, &p, &len);
		if (r != RC_OK) {
			odiag(d, i, "TableOfContents", "unreadable (%s)", rc_str(r));
			continue;
		}
		r = skate_toc_decode(a, i, p, len, &t, d);
		if (r == RC_NOMEM) {
			free(p);
			skate_toc_items_free(v, nv);
			return r;
		}
		if (r != RC_OK) {
			free(p);
			continue;
		}
		for (uint32_t k = 0; k < t.n_entries; k++) {
			const struct skate_toc_entry *e = &t.entries[k];
			struct skate_toc_item *it;

			it = xgrow_n(v, nv, &cap, sizeof *v, 16);
			if (!it)
				goto nomem;
			v = it;
			it = &v[nv];
			memset(it, 0, sizeof *it);
			nv++;
			it->guid = e->guid;
			it->type = e->type;
			it->toc = i;
			it->object = e->object.res == RC_OK ? e->object.obj : UINT32_MAX;
			it->offset = e->object.res == RC_OK ? e->object.off : 0;
			if (e->name.p) {
				it->name = malloc(e->name.len + 1);
				if (!it->name)
					goto nomem;
				memcpy(it->name, e->name.p, e->name.len);
				it->name[e->name.len] = 0;
				it->name_len = e->name.len;
			}
		}
		skate_toc_free(&t);
		free(p);
		continue;
	nomem:
		skate_toc_free(&t);
		free(p);
		skate_toc_items_free(v, nv);
		return RC_NOMEM;
	}
	*out = v;
	*n = nv;
	return RC_OK;
}

/* ---- string lists ---- */

/*
 * Up to `max` consecutive NUL-terminated strings from off; stops at an empty string (the zero
 * padding after the list) or the object end. An unterminated last string is reported.
 */
static enum rc read_str_list(struct diag *d, uint32_t idx, const char *tn, const uint8_t *p,
			     size_t len, uint32_t off, uint64_t max, bool stop_at_empty,
			     struct skate_str **out, uint32_t *n)
{
	size_t pos = off, cnt = 0, cap = 0;
	struct skate_str *v = NULL, *nvp;

	*out = NULL;
	*n = 0;
	if (off == 0 || max == 0)
		return RC_OK;
	if (off > len) {
		odiag(d, idx, tn, "string list offset 0x%X past the object (%zu bytes)", off, len);
		return RC_OK;
	}
	while (pos < len && cnt < max) {
		struct skate_str s = skate_str_at(p, len, (uint32_t)pos);

		if (s.bad) {
			odiag(d, idx, tn, "string list entry %zu at 0x%zX is not NUL-terminated",
			      cnt, pos);
			break;
		}
		if (s.len == 0 && stop_at_empty)
			break;
		nvp = xgrow_n(v, cnt, &cap, sizeof *v, 8);
		if (!nvp) {
			free(v);
			return RC_NOMEM;
		}
		v = nvp;
		v[cnt++] = s;
		pos += s.len + 1;
	}
	*out = v;
	*n = (uint32_t)cnt;
	return RC_OK;
}

/* ---- RenderMaterialData ---- */

void skate_rmd_free(struct skate_rmd *m)
{
	free(m->materials);
	free(m->channels);
	free(m->strings);
	memset(m, 0, sizeof *m);
}

/* One channel: the shader input, then the 16-byte union read both ways. A stream name must
 * lie in the string list (offsets from str_min on); a GUID fills the first 8 bytes alone. */
static void rmd_channel(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			uint32_t i, uint32_t str_min, struct br *c, struct skate_rmd_channel *ch,
			struct diag *d)
{
	static const char tn[] = "RenderMaterialData";
	struct br u;
	char field[48];

	ch->shader_input = skate_str_at(p, len, br_u32(c));
	ch->flags = br_u16(c);
	ch->image_channel = br_u16(c);
	ch->pad[0] = br_u32(c);
	ch->pad[1] = br_u32(c);
	u = *c;
	ch->guid = br_u64(&u);
	for (int k = 0; k < 4; k++) {
		ch->raw[k] = br_u32(c);
		ch->constants[k] = f32_from_bits(ch->raw[k]);
	}
	snprintf(field, sizeof field, "channel %u m_ShaderInput", i);
	check_str(d, idx, tn, field, &ch->shader_input, len);
	ch->stream_name.off = ch->raw[2];
	ch->stream.raw = ch->raw[3];
	ch->stream.res = RC_NOENT;
	/* Flag 0x2: shader constants (docs/skate-objects.md), whatever the bytes look like. */
	if (ch->flags & SKATE_CHANNEL_CONSTANT) {
		/* constants: neither a name nor a GUID nor a reference */
	} else if (ch->raw[2] >= str_min) {
		struct skate_str sn = skate_str_at(p, len, ch->raw[2]);

		if (sn.p) {
			ch->kind = SKATE_UNION_STREAM;
			ch->stream_name = sn;
		}
	} else if (ch->raw[2] == 0 && ch->raw[3] == 0 && ch->guid != 0) {
		ch->kind = SKATE_UNION_GUID;
	}
	/* Both non-constant forms carry the GUID at +0x10 (the stream form next to its name). */
	ch->has_guid = ch->kind != SKATE_UNION_CONSTANTS && ch->guid != 0;
	if (ch->kind != SKATE_UNION_CONSTANTS) {
		ch->stream = skate_ref_get(a, ch->raw[3], ARENA_WANT_UNKNOWN);
		snprintf(field, sizeof field, "channel %u m_pStream", i);
		check_ref(a, d, idx, tn, field, &ch->stream, ARENA_WANT_UNKNOWN);
	}
}

static enum rc rmd_channels(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			    struct skate_rmd *out, struct diag *d)
{
	uint32_t n = fit_count(d, idx, "RenderMaterialData", "channels", len, out->p_channels,
			       out->num_channels, RMD_CHAN);
	uint32_t str_min;
	struct br c;

	if (n && !(out->channels = xcalloc_n(n, sizeof *out->channels)))
		return RC_NOMEM;
	out->n_channels = n;
	/* Stream names live in the string list; anything before it is not a string. */
	if (out->p_string_list >= RMD_HDR && out->p_string_list < len)
		str_min = out->p_string_list;
	else
		str_min = (uint32_t)(out->p_channels <= len ? out->p_channels + (size_t)n * RMD_CHAN
							    : RMD_HDR);
	c = br_at(p, len, a->big_endian, out->p_channels);
	for (uint32_t i = 0; i < n; i++) {
		out->channels[i].at = out->p_channels + i * RMD_CHAN;
		rmd_channel(a, idx, p, len, i, str_min, &c, &out->channels[i], d);
	}
	return RC_OK;
}

/* Materials, each a run of the channel array (checked to lie inside it). */
static enum rc rmd_materials(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			     struct skate_rmd *out, struct diag *d)
{
	uint32_t n = fit_count(d, idx, "RenderMaterialData", "materials", len, out->p_materials,
			       out->num_materials, RMD_MAT);
	struct br c;

	if (n && !(out->materials = xcalloc_n(n, sizeof *out->materials)))
		return RC_NOMEM;
	out->n_materials = n;
	c = br_at(p, len, a->big_endian, out->p_materials);
	for (uint32_t i = 0; i < n; i++) {
		struct skate_rmd_material *m = &out->materials[i];
		uint64_t rel;

		m->at = out->p_materials + i * RMD_MAT;
		m->num_channels = br_u32(&c);
		m->flags = br_u32(&c);
		m->p_channels = br_u32(&c);
		rel = (uint64_t)m->p_channels - out->p_channels;
		if (m->num_channels == 0) {
			m->channels_ok = true;
		} else if (m->p_channels >= out->p_channels && rel % RMD_CHAN == 0 &&
			   rel / RMD_CHAN <= out->n_channels &&
			   m->num_channels <= out->n_channels - rel / RMD_CHAN) {
			m->first_channel = (uint32_t)(rel / RMD_CHAN);
			m->channels_ok = true;
		} else {
			odiag(d, idx, "RenderMaterialData",
			      "material %u: %u channels at 0x%X are not inside the channel array "
			      "(%u channels at 0x%X)",
			      i, m->num_channels, m->p_channels, out->n_channels, out->p_channels);
		}
	}
	return RC_OK;
}

enum rc skate_rmd_decode(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			 struct skate_rmd *out, struct diag *d)
{
	static const char tn[] = "RenderMaterialData";
	struct br c;
	enum rc r;

	memset(out, 0, sizeof *out);
	if (!p || len < RMD_HDR) {
		odiag(d, idx, tn, "%zu bytes, header needs %u", len, RMD_HDR);
		return RC_CORRUPT;
	}
	c = br_at(p, len, a->big_endian, 0);
	out->num_materials = br_u32(&c);
	out->num_channels = br_u32(&c);
	out->p_materials = br_u32(&c);
	out->p_channels = br_u32(&c);
	out->p_string_list = br_u32(&c);
	r = rmd_channels(a, idx, p, len, out, d);
	if (r == RC_OK)
		r = rmd_materials(a, idx, p, len, out, d);
	if (r == RC_OK)
		r = read_str_list(d, idx, tn, p, len, out->p_string_list, len, true, &out->strings,
				  &out->n_strings);
	if (r != RC_OK)
		skate_rmd_free(out);
	return r;
}

/* ---- InstanceData ---- */

void skate_instance_free(struct skate_instance_data *m)
{
	free(m->inst);
	free(m->strings);
	memset(m, 0, sizeof *m);
}

/* Instance i at `at`: transform, bounds, GUIDs, the three references and four strings. */
static void instance_at(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			uint32_t i, uint32_t at, struct skate_instance *in, struct diag *d)
{
	static const char tn[] = "InstanceData";
	static const char *const sname[4] = {"m_Name", "m_Description", "m_Component",
					     "m_Category"};
	struct skate_str *strs[4] = {&in->name, &in->description, &in->component, &in->category};
	struct br q = br_at(p, len, a->big_endian, at);
	char field[48];

	in->at = at;
	for (int k = 0; k < 16; k++)
		in->matrix[k] = br_f32(&q);
	for (int k = 0; k < 4; k++)
		in->aabb_min[k] = br_f32(&q);
	for (int k = 0; k < 4; k++)
		in->aabb_max[k] = br_f32(&q);
	in->guid = br_u64(&q);
	in->guid_local = br_u64(&q);
	in->class_key = br_u64(&q);
	in->instance_key = br_u64(&q);
	in->rmodel = skate_ref_get(a, br_u32(&q), RW_T_RENDERMODEL);
	in->cmodel = skate_ref_get(a, br_u32(&q), RW_T_COLLISIONMODEL);
	in->embedded = skate_ref_get(a, br_u32(&q), RW_T_EMBEDDED);
	snprintf(field, sizeof field, "instance %u m_pRModel", i);
	check_ref(a, d, idx, tn, field, &in->rmodel, RW_T_RENDERMODEL);
	snprintf(field, sizeof field, "instance %u m_pCModel", i);
	check_ref(a, d, idx, tn, field, &in->cmodel, RW_T_COLLISIONMODEL);
	snprintf(field, sizeof field, "instance %u m_pEmbedded", i);
	check_ref(a, d, idx, tn, field, &in->embedded, RW_T_EMBEDDED);
	for (int k = 0; k < 4; k++) {
		*strs[k] = skate_str_at(p, len, br_u32(&q));
		snprintf(field, sizeof field, "instance %u %s", i, sname[k]);
		check_str(d, idx, tn, field, strs[k], len);
	}
}

/* How many instances the object holds: the stride is 0xA0 when the string list says the
 * records are padded, and the last instance needs only its 0x9C bytes. */
static uint32_t instance_count(struct skate_instance_data *out, size_t len)
{
	out->stride = SKATE_INSTANCE_SIZE;
	if (out->num_instances && out->p_string_list >= out->p_instances &&
	    out->p_string_list - out->p_instances ==
		(uint64_t)SKATE_INSTANCE_PADDED * out->num_instances)
		out->stride = SKATE_INSTANCE_PADDED;
	if (out->num_instances && out->p_instances <= len &&
	    len - out->p_instances >= SKATE_INSTANCE_SIZE) {
		uint64_t room = (len - out->p_instances - SKATE_INSTANCE_SIZE) / out->stride + 1;

		return out->num_instances <= room ? out->num_instances : (uint32_t)room;
	}
	return 0;
}

enum rc skate_instance_decode(const struct arena *a, uint32_t idx, const uint8_t *p, size_t len,
			      struct skate_instance_data *out, struct diag *d)
{
	static const char tn[] = "InstanceData";
	uint32_t n;
	struct br q;
	enum rc r;

	memset(out, 0, sizeof *out);
	if (!p || len < INST_HDR) {
		odiag(d, idx, tn, "%zu bytes, header needs %u", len, INST_HDR);
		return RC_CORRUPT;
	}
	q = br_at(p, len, a->big_endian, 0);
	out->type_id = br_u32(&q);
	out->num_instances = br_u32(&q);
	out->num_strings = br_u32(&q);
	out->p_instances = br_u32(&q);
	out->p_string_list = br_u32(&q);
	n = instance_count(out, len);
	if (n < out->num_instances)
		odiag(d, idx, tn, "%u instances at 0x%X do not fit in %zu bytes, decoding %u",
		      out->num_instances, out->p_instances, len, n);
	if (n && !(out->inst = xcalloc_n(n, sizeof *out->inst)))
		return RC_NOMEM;
	out->n_inst = n;
	for (uint32_t i = 0; i < n; i++)
		instance_at(a, idx, p, len, i, out->p_instances + i * out->stride, &out->inst[i],
			    d);
	r = read_str_list(d, idx, tn, p, len, out->p_string_list, out->num_strings, false,
			  &out->strings, &out->n_strings);
	if (r != RC_OK) {
		skate_instance_free(out);
		return r;
	}
	if (out->n_strings < out->num_strings && out->p_string_list <= len)
		odiag(d, idx, tn, "string list holds %u of %u strings", out->n_strings,
		      out->num_strings);
	return RC_OK;
}
