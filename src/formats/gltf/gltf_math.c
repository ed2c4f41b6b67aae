/* Transforms for the glTF writer: quaternions, TRS matrices, inverse binds, axis turns. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/gltf/gltf_int.h"
#include "psgfs/base/bytes.h"

float gltf_finite(float f)
{
	return isfinite(f) ? f : 0.0f;
}

void gltf_quat_norm(float q[4])
{
	double x = q[0], y = q[1], z = q[2], w = q[3];
	double len = sqrt(x * x + y * y + z * z + w * w);

	if (!isfinite(len) || len < 1e-30) {
		q[0] = q[1] = q[2] = 0.0f;
		q[3] = 1.0f;
		return;
	}
	q[0] = (float)(x / len);
	q[1] = (float)(y / len);
	q[2] = (float)(z / len);
	q[3] = (float)(w / len);
}

void gltf_vec_norm(float v[3])
{
	double x = v[0], y = v[1], z = v[2];
	double len = sqrt(x * x + y * y + z * z);

	if (!isfinite(len) || len < 1e-30) {
		v[0] = v[2] = 0.0f;
		v[1] = 1.0f;
		return;
	}
	v[0] = (float)(x / len);
	v[1] = (float)(y / len);
	v[2] = (float)(z / len);
}

void gltf_quat_mul(const float a[4], const float b[4], float out[4])
{
	double ax = a[0], ay = a[1], az = a[2], aw = a[3];
	double bx = b[0], by = b[1], bz = b[2], bw = b[3];

	out[0] = (float)(aw * bx + ax * bw + ay * bz - az * by);
	out[1] = (float)(aw * by - ax * bz + ay * bw + az * bx);
	out[2] = (float)(aw * bz + ax * by - ay * bx + az * bw);
	out[3] = (float)(aw * bw - ax * bx - ay * by - az * bz);
}

void gltf_zup_vec(float v[3])
{
	float y = v[1];

	v[1] = v[2];
	v[2] = -y;
}

void gltf_zup_root(float t[3], float r[4])
{
	/* -90 degrees about X: (x, y, z, w) = (-sin 45, 0, 0, cos 45). */
	static const float turn[4] = {-0.70710678118654752f, 0.0f, 0.0f, 0.70710678118654752f};
	float q[4];

	gltf_zup_vec(t);
	gltf_quat_mul(turn, r, q);
	memcpy(r, q, sizeof q);
	gltf_quat_norm(r);
}

void gltf_node_trs(const struct gltf_node *n, float t[3], float r[4], float s[3])
{
	for (int k = 0; k < 3; k++) {
		t[k] = gltf_finite(n->t[k]);
		s[k] = isfinite(n->s[k]) ? n->s[k] : 1.0f;
	}
	memcpy(r, n->r, 4 * sizeof *r);
	gltf_quat_norm(r);
}

void gltf_trs_matrix(const float t[3], const float r[4], const float s[3], double m[16])
{
	double x = r[0], y = r[1], z = r[2], w = r[3];
	double rm[9] = {
	    1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),
	    2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
	    2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y),
	}; /* column-major 3x3 */

	for (int c = 0; c < 3; c++) {
		for (int k = 0; k < 3; k++)
			m[c * 4 + k] = rm[c * 3 + k] * s[c];
		m[c * 4 + 3] = 0.0;
	}
	m[12] = t[0];
	m[13] = t[1];
	m[14] = t[2];
	m[15] = 1.0;
}

void gltf_mat_mul(const double a[16], const double b[16], double out[16])
{
	double o[16];

	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 4; r++) {
			double v = 0;

			for (int k = 0; k < 4; k++)
				v += a[k * 4 + r] * b[c * 4 + k];
			o[c * 4 + r] = v;
		}
	memcpy(out, o, sizeof o);
}

bool gltf_mat_inverse(const double m[16], double out[16])
{
	/* Affine: invert the 3x3 by cofactors, then the translation. */
	double a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6],
	       i = m[10];
	double A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
	double det = a * A + b * B + c * C, inv[9];

	memset(out, 0, 16 * sizeof *out);
	if (!isfinite(det) || fabs(det) < 1e-30) {
		out[0] = out[5] = out[10] = out[15] = 1.0;
		return false;
	}
	/* inv is row-major here: inv[r*3+c]. */
	inv[0] = A / det;
	inv[1] = -(b * i - c * h) / det;
	inv[2] = (b * f - c * e) / det;
	inv[3] = B / det;
	inv[4] = (a * i - c * g) / det;
	inv[5] = -(a * f - c * d) / det;
	inv[6] = C / det;
	inv[7] = -(a * h - b * g) / det;
	inv[8] = (a * e - b * d) / det;
	for (int r = 0; r < 3; r++) {
		for (int col = 0; col < 3; col++)
			out[col * 4 + r] = inv[r * 3 + col];
		out[12 + r] =
		    -(inv[r * 3] * m[12] + inv[r * 3 + 1] * m[13] + inv[r * 3 + 2] * m[14]);
	}
	out[15] = 1.0;
	return true;
}

static void local_matrix(const struct gltf_node *n, double m[16])
{
	float t[3], r[4], s[3];

	gltf_node_trs(n, t, r, s);
	gltf_trs_matrix(t, r, s, m);
}

enum rc gltf_bind_ibms(struct gltf_node *nodes, uint32_t n)
{
	/* Parents come first: each world matrix is its parent's times its own local one. */
	double *w = xcalloc_n(n ? n : 1, 16 * sizeof *w);

	if (!w)
		return RC_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		double l[16], inv[16];
		int32_t p = nodes[i].parent;

		local_matrix(&nodes[i], l);
		if (p >= 0 && (uint32_t)p < i)
			gltf_mat_mul(&w[(size_t)p * 16], l, &w[(size_t)i * 16]);
		else
			memcpy(&w[(size_t)i * 16], l, sizeof l);
		if (!nodes[i].joint)
			continue;
		gltf_mat_inverse(&w[(size_t)i * 16], inv);
		for (int k = 0; k < 16; k++)
			nodes[i].ibm[k] = (float)inv[k];
		nodes[i].ibm[3] = nodes[i].ibm[7] = nodes[i].ibm[11] = 0.0f;
		nodes[i].ibm[15] = 1.0f;
	}
	free(w);
	return RC_OK;
}
