/*
 * DMOData (type 0x00EB001D): the dynamic props of a district's Sim stream (docs/worlds.md,
 * "DMOData"; public sources: the Skate-File-Format-Documentation RWObjectType_DMOData note and
 * SK8-ENGINE/skate-3-rust-engine docs/dynamic-props-and-grime.md). Layout:
 *   header: u32 type id, u32 count, u32 string count, u32 records offset, u32 strings offset
 *   record 0x80: f32[16] row-vector affine matrix, f32[8] bounds, u64 x3 ids, u32 instance,
 *                u32 name offset (object-relative)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/formats/world_objects.h"

#define DMO_HDR_MIN 20u

static bool all_finite(const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

static float dot3(const float *a, const float *b)
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void identity(float pos[3], float rot[4], float scale[3])
{
	for (int i = 0; i < 3; i++) {
		pos[i] = 0.0f;
		rot[i] = 0.0f;
		scale[i] = 1.0f;
	}
	rot[3] = 1.0f;
}

/* Shepperd's method on a rotation matrix r[i][j] (column vectors). */
static void quat_from(const double r[3][3], float q[4])
{
	double t = r[0][0] + r[1][1] + r[2][2], s, x, y, z, w, len;

	if (t > 0) {
		s = sqrt(t + 1.0) * 2;
		w = 0.25 * s;
		x = (r[2][1] - r[1][2]) / s;
		y = (r[0][2] - r[2][0]) / s;
		z = (r[1][0] - r[0][1]) / s;
	} else if (r[0][0] > r[1][1] && r[0][0] > r[2][2]) {
		s = sqrt(1.0 + r[0][0] - r[1][1] - r[2][2]) * 2;
		w = (r[2][1] - r[1][2]) / s;
		x = 0.25 * s;
		y = (r[0][1] + r[1][0]) / s;
		z = (r[0][2] + r[2][0]) / s;
	} else if (r[1][1] > r[2][2]) {
		s = sqrt(1.0 + r[1][1] - r[0][0] - r[2][2]) * 2;
		w = (r[0][2] - r[2][0]) / s;
		x = (r[0][1] + r[1][0]) / s;
		y = 0.25 * s;
		z = (r[1][2] + r[2][1]) / s;
	} else {
		s = sqrt(1.0 + r[2][2] - r[0][0] - r[1][1]) * 2;
		w = (r[1][0] - r[0][1]) / s;
		x = (r[0][2] + r[2][0]) / s;
		y = (r[1][2] + r[2][1]) / s;
		z = 0.25 * s;
	}
	len = sqrt(x * x + y * y + z * z + w * w);
	if (!(len > 0) || !isfinite(len)) {
		x = y = z = 0;
		w = len = 1;
	}
	if (w < 0) /* one of the two equal quaternions, so equal matrices print equal */
		len = -len;
	q[0] = (float)(x / len);
	q[1] = (float)(y / len);
	q[2] = (float)(z / len);
	q[3] = (float)(w / len);
}

uint8_t wo_decompose(const float m[16], float pos[3], float rot[4], float scale[3])
{
	double r[3][3], len[3], det;
	const float *row[3] = {m, m + 4, m + 8};
	uint8_t fl = 0;

	if (!all_finite(m, 16)) {
		identity(pos, rot, scale);
		return WO_F_NONFINITE;
	}
	for (int j = 0; j < 3; j++) {
		len[j] = sqrt((double)dot3(row[j], row[j]));
		if (!(len[j] > 1e-12) || !isfinite(len[j]))
			fl |= WO_F_SINGULAR;
	}
	if (fl) {
		identity(pos, rot, scale);
		return fl;
	}
	det = row[0][0] * ((double)row[1][1] * row[2][2] - (double)row[1][2] * row[2][1]) -
	      row[0][1] * ((double)row[1][0] * row[2][2] - (double)row[1][2] * row[2][0]) +
	      row[0][2] * ((double)row[1][0] * row[2][1] - (double)row[1][1] * row[2][0]);
	if (det < 0) /* a mirror: carried by a negative x scale */
		len[0] = -len[0];
	/* Row-vector rows are the images of the axes: the columns of the column-vector matrix. */
	for (int j = 0; j < 3; j++)
		for (int i = 0; i < 3; i++)
			r[i][j] = row[j][i] / len[j];
	for (int a = 0; a < 3; a++)
		for (int b = a + 1; b < 3; b++)
			if (fabs(r[0][a] * r[0][b] + r[1][a] * r[1][b] + r[2][a] * r[2][b]) > 1e-3)
				fl |= WO_F_SHEAR;
	quat_from(r, rot);
	for (int j = 0; j < 3; j++) {
		scale[j] = (float)len[j];
		pos[j] = m[12 + j];
	}
	return fl;
}

void wo_compose(const float pos[3], const float rot[4], const float scale[3], float m[16])
{
	double x = rot[0], y = rot[1], z = rot[2], w = rot[3];
	double l = sqrt(x * x + y * y + z * z + w * w), r[3][3];

	if (!(l > 0) || !isfinite(l)) {
		x = y = z = 0;
		w = l = 1;
	}
	x /= l, y /= l, z /= l, w /= l;
	r[0][0] = 1 - 2 * (y * y + z * z);
	r[0][1] = 2 * (x * y - z * w);
	r[0][2] = 2 * (x * z + y * w);
	r[1][0] = 2 * (x * y + z * w);
	r[1][1] = 1 - 2 * (x * x + z * z);
	r[1][2] = 2 * (y * z - x * w);
	r[2][0] = 2 * (x * z - y * w);
	r[2][1] = 2 * (y * z + x * w);
	r[2][2] = 1 - 2 * (x * x + y * y);
	for (int j = 0; j < 3; j++) {
		for (int i = 0; i < 3; i++)
			m[4 * j + i] = (float)(r[i][j] * scale[j]);
		m[4 * j + 3] = 0.0f;
		m[12 + j] = pos[j];
	}
	m[15] = 1.0f;
}

static void dmo_name(const uint8_t *p, size_t n, struct wo_dmo *r, uint32_t i, struct diag *d)
{
	const uint8_t *s, *z;
	size_t len;

	r->name[0] = '\0';
	if (r->name_off == 0)
		return;
	if (r->name_off >= n || !(z = memchr(s = p + r->name_off, 0, n - r->name_off))) {
		r->flags |= WO_F_NAME;
		diag_add(d, "DMOData: record %u: name offset 0x%x names no string in the %zu bytes",
			 i, r->name_off, n);
		return;
	}
	len = (size_t)(z - s);
	if (len > WO_NAME_MAX)
		len = WO_NAME_MAX;
	memcpy(r->name, s, len);
	r->name[len] = '\0';
}

static void dmo_check(struct wo_dmo *r, uint32_t i, struct diag *d)
{
	const char *nm = r->name[0] ? r->name : "unnamed";

	r->flags |= wo_decompose(r->m, r->pos, r->rot, r->scale);
	if (r->flags & WO_F_NONFINITE)
		diag_add(d, "DMOData: record %u (%s): the matrix is not finite", i, nm);
	else if (r->flags & WO_F_SINGULAR)
		diag_add(d, "DMOData: record %u (%s): the matrix has a zero basis row", i, nm);
	else if (r->flags & WO_F_SHEAR)
		diag_add(d, "DMOData: record %u (%s): the matrix's basis rows are not orthogonal",
			 i, nm);
	if (!all_finite(r->bmin, 4) || !all_finite(r->bmax, 4)) {
		r->flags |= WO_F_BOUNDS;
		diag_add(d, "DMOData: record %u (%s): the bounding box is not finite", i, nm);
	} else if (r->bmin[0] > r->bmax[0] || r->bmin[1] > r->bmax[1] || r->bmin[2] > r->bmax[2]) {
		r->flags |= WO_F_BOUNDS;
		diag_add(d,
			 "DMOData: record %u (%s): the bounding box's minimum exceeds its maximum",
			 i, nm);
	}
}

enum rc wo_dmo_parse(const uint8_t *p, size_t n, struct wo_dmos *out, struct diag *d)
{
	struct br r;
	uint64_t cap = 0;

	memset(out, 0, sizeof *out);
	if (n < DMO_HDR_MIN) {
		diag_add(d, "DMOData: the object is %zu bytes; its header alone is %u", n,
			 DMO_HDR_MIN);
		return RC_TRUNCATED;
	}
	r = br_at(p, n, true, 0);
	out->h.type_id = br_u32(&r);
	out->h.count = br_u32(&r);
	out->h.nstrings = br_u32(&r);
	out->h.recs_off = br_u32(&r);
	out->h.strings_off = br_u32(&r);
	if (out->h.count && out->h.recs_off > n)
		diag_add(d, "DMOData: the records at 0x%x lie past the end (%zu bytes)",
			 out->h.recs_off, n);
	else if (out->h.recs_off <= n)
		cap = (n - out->h.recs_off) / WO_DMO_REC;
	if (out->h.count > cap && out->h.recs_off <= n)
		diag_add(d, "DMOData: claims %u records; the object holds %llu", out->h.count,
			 (unsigned long long)cap);
	out->n = out->h.count < cap ? out->h.count : (uint32_t)cap;
	out->v = xcalloc_n(out->n ? out->n : 1, sizeof *out->v);
	if (!out->v) {
		out->n = 0;
		return RC_NOMEM;
	}
	for (uint32_t i = 0; i < out->n; i++) {
		struct wo_dmo *x = &out->v[i];

		r = br_at(p, n, true, out->h.recs_off + (size_t)i * WO_DMO_REC);
		for (int k = 0; k < 16; k++)
			x->m[k] = br_f32(&r);
		for (int k = 0; k < 4; k++)
			x->bmin[k] = br_f32(&r);
		for (int k = 0; k < 4; k++)
			x->bmax[k] = br_f32(&r);
		x->guid = br_u64(&r);
		x->guid_local = br_u64(&r);
		x->template_id = br_u64(&r);
		x->instance = br_u32(&r);
		x->name_off = br_u32(&r);
		dmo_name(p, n, x, i, d);
		dmo_check(x, i, d);
	}
	return RC_OK;
}

void wo_dmo_free(struct wo_dmos *m)
{
	free(m->v);
	memset(m, 0, sizeof *m);
}

enum rc wo_dmo_write(const struct wo_dmo_header *h, const struct wo_dmo *v, uint32_t n,
		     struct buf *out)
{
	uint64_t strings = WO_DMO_HDR + (uint64_t)n * WO_DMO_REC, at = strings;
	uint32_t named = 0;

	for (uint32_t i = 0; i < n; i++) {
		size_t len = strnlen(v[i].name, sizeof v[i].name);

		if (len == sizeof v[i].name)
			return RC_INVAL;
		named += len > 0;
	}
	if (strings > UINT32_MAX)
		return RC_INVAL;
	buf_u32be(out, h->type_id);
	buf_u32be(out, n);
	buf_u32be(out, h->nstrings ? h->nstrings : named);
	buf_u32be(out, WO_DMO_HDR);
	buf_u32be(out, (uint32_t)strings);
	buf_zero(out, WO_DMO_HDR - 20);
	for (uint32_t i = 0; i < n; i++) {
		const struct wo_dmo *x = &v[i];
		size_t len = strlen(x->name);

		for (int k = 0; k < 16; k++)
			buf_f32be(out, x->m[k]);
		for (int k = 0; k < 4; k++)
			buf_f32be(out, x->bmin[k]);
		for (int k = 0; k < 4; k++)
			buf_f32be(out, x->bmax[k]);
		buf_u64be(out, x->guid);
		buf_u64be(out, x->guid_local);
		buf_u64be(out, x->template_id);
		buf_u32be(out, x->instance);
		if (at + len + 1 > UINT32_MAX)
			return RC_INVAL;
		buf_u32be(out, len ? (uint32_t)at : 0);
		at += len ? len + 1 : 0;
	}
	for (uint32_t i = 0; i < n; i++)
		if (v[i].name[0])
			buf_put(out, v[i].name, strlen(v[i].name) + 1);
	return out->oom ? RC_NOMEM : RC_OK;
}
