/* Skeleton math for stored row-vector matrices: inverse, rigid decomposition, quaternions. */
#include <math.h>
#include <string.h>

#include "psgfs/formats/skate_mesh.h"

bool skate_mat4_inverse(const float m[16], float out[16])
{
	double a[16], inv[16], det;

	for (int i = 0; i < 16; i++)
		a[i] = m[i];
	inv[0] = a[5] * a[10] * a[15] - a[5] * a[11] * a[14] - a[9] * a[6] * a[15] +
		 a[9] * a[7] * a[14] + a[13] * a[6] * a[11] - a[13] * a[7] * a[10];
	inv[4] = -a[4] * a[10] * a[15] + a[4] * a[11] * a[14] + a[8] * a[6] * a[15] -
		 a[8] * a[7] * a[14] - a[12] * a[6] * a[11] + a[12] * a[7] * a[10];
	inv[8] = a[4] * a[9] * a[15] - a[4] * a[11] * a[13] - a[8] * a[5] * a[15] +
		 a[8] * a[7] * a[13] + a[12] * a[5] * a[11] - a[12] * a[7] * a[9];
	inv[12] = -a[4] * a[9] * a[14] + a[4] * a[10] * a[13] + a[8] * a[5] * a[14] -
		  a[8] * a[6] * a[13] - a[12] * a[5] * a[10] + a[12] * a[6] * a[9];
	inv[1] = -a[1] * a[10] * a[15] + a[1] * a[11] * a[14] + a[9] * a[2] * a[15] -
		 a[9] * a[3] * a[14] - a[13] * a[2] * a[11] + a[13] * a[3] * a[10];
	inv[5] = a[0] * a[10] * a[15] - a[0] * a[11] * a[14] - a[8] * a[2] * a[15] +
		 a[8] * a[3] * a[14] + a[12] * a[2] * a[11] - a[12] * a[3] * a[10];
	inv[9] = -a[0] * a[9] * a[15] + a[0] * a[11] * a[13] + a[8] * a[1] * a[15] -
		 a[8] * a[3] * a[13] - a[12] * a[1] * a[11] + a[12] * a[3] * a[9];
	inv[13] = a[0] * a[9] * a[14] - a[0] * a[10] * a[13] - a[8] * a[1] * a[14] +
		  a[8] * a[2] * a[13] + a[12] * a[1] * a[10] - a[12] * a[2] * a[9];
	inv[2] = a[1] * a[6] * a[15] - a[1] * a[7] * a[14] - a[5] * a[2] * a[15] +
		 a[5] * a[3] * a[14] + a[13] * a[2] * a[7] - a[13] * a[3] * a[6];
	inv[6] = -a[0] * a[6] * a[15] + a[0] * a[7] * a[14] + a[4] * a[2] * a[15] -
		 a[4] * a[3] * a[14] - a[12] * a[2] * a[7] + a[12] * a[3] * a[6];
	inv[10] = a[0] * a[5] * a[15] - a[0] * a[7] * a[13] - a[4] * a[1] * a[15] +
		  a[4] * a[3] * a[13] + a[12] * a[1] * a[7] - a[12] * a[3] * a[5];
	inv[14] = -a[0] * a[5] * a[14] + a[0] * a[6] * a[13] + a[4] * a[1] * a[14] -
		  a[4] * a[2] * a[13] - a[12] * a[1] * a[6] + a[12] * a[2] * a[5];
	inv[3] = -a[1] * a[6] * a[11] + a[1] * a[7] * a[10] + a[5] * a[2] * a[11] -
		 a[5] * a[3] * a[10] - a[9] * a[2] * a[7] + a[9] * a[3] * a[6];
	inv[7] = a[0] * a[6] * a[11] - a[0] * a[7] * a[10] - a[4] * a[2] * a[11] +
		 a[4] * a[3] * a[10] + a[8] * a[2] * a[7] - a[8] * a[3] * a[6];
	inv[11] = -a[0] * a[5] * a[11] + a[0] * a[7] * a[9] + a[4] * a[1] * a[11] -
		  a[4] * a[3] * a[9] - a[8] * a[1] * a[7] + a[8] * a[3] * a[5];
	inv[15] = a[0] * a[5] * a[10] - a[0] * a[6] * a[9] - a[4] * a[1] * a[10] +
		  a[4] * a[2] * a[9] + a[8] * a[1] * a[6] - a[8] * a[2] * a[5];
	det = a[0] * inv[0] + a[1] * inv[4] + a[2] * inv[8] + a[3] * inv[12];
	if (!isfinite(det) || fabs(det) < 1e-30)
		return false;
	for (int i = 0; i < 16; i++) {
		out[i] = (float)(inv[i] / det);
		if (!isfinite(out[i]))
			return false;
	}
	return true;
}

void skate_quat_from_mat3(const float r[3][3], float q[4])
{
	double tr = (double)r[0][0] + r[1][1] + r[2][2], s, x, y, z, w, n;

	if (tr > 0) {
		s = sqrt(tr + 1.0) * 2;
		w = s / 4;
		x = (r[2][1] - r[1][2]) / s;
		y = (r[0][2] - r[2][0]) / s;
		z = (r[1][0] - r[0][1]) / s;
	} else if (r[0][0] > r[1][1] && r[0][0] > r[2][2]) {
		s = sqrt(1.0 + r[0][0] - r[1][1] - r[2][2]) * 2;
		w = (r[2][1] - r[1][2]) / s;
		x = s / 4;
		y = (r[0][1] + r[1][0]) / s;
		z = (r[0][2] + r[2][0]) / s;
	} else if (r[1][1] > r[2][2]) {
		s = sqrt(1.0 + r[1][1] - r[0][0] - r[2][2]) * 2;
		w = (r[0][2] - r[2][0]) / s;
		x = (r[0][1] + r[1][0]) / s;
		y = s / 4;
		z = (r[1][2] + r[2][1]) / s;
	} else {
		s = sqrt(1.0 + r[2][2] - r[0][0] - r[1][1]) * 2;
		w = (r[1][0] - r[0][1]) / s;
		x = (r[0][2] + r[2][0]) / s;
		y = (r[1][2] + r[2][1]) / s;
		z = s / 4;
	}
	n = sqrt(x * x + y * y + z * z + w * w);
	if (!isfinite(n) || n < 1e-12) {
		q[0] = q[1] = q[2] = 0;
		q[3] = 1;
		return;
	}
	if (w < 0)
		n = -n;
	q[0] = (float)(x / n);
	q[1] = (float)(y / n);
	q[2] = (float)(z / n);
	q[3] = (float)(w / n);
}

static double dot3(const double *a, const double *b)
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static bool normalize3(double *v)
{
	double n = sqrt(dot3(v, v));

	if (!isfinite(n) || n < 1e-12)
		return false;
	v[0] /= n;
	v[1] /= n;
	v[2] /= n;
	return true;
}

bool skate_decompose(const float bind[16], float t[3], float q[4], float tol, float *err)
{
	double row[3][3], e = 0, det;
	float r[3][3];
	bool ok = true;

	for (int i = 0; i < 3; i++) {
		t[i] = bind[12 + i];
		for (int j = 0; j < 3; j++)
			row[i][j] = bind[4 * i + j];
	}
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			double dev = fabs(dot3(row[i], row[j]) - (i == j ? 1.0 : 0.0));

			if (!(dev <= e))
				e = isfinite(dev) ? dev : INFINITY;
		}
	det = row[0][0] * (row[1][1] * row[2][2] - row[1][2] * row[2][1]) -
	      row[0][1] * (row[1][0] * row[2][2] - row[1][2] * row[2][0]) +
	      row[0][2] * (row[1][0] * row[2][1] - row[1][1] * row[2][0]);
	if (!(det > 0))
		e = e > 2 ? e : 2; /* reflection or degenerate: never rigid */
	for (int i = 0; i < 3; i++) {
		double dev = fabs((double)bind[4 * i + 3]);

		if (!(dev <= e))
			e = isfinite(dev) ? dev : INFINITY;
	}
	if (!(fabs((double)bind[15] - 1.0) <= e))
		e = isfinite(bind[15]) ? fabs((double)bind[15] - 1.0) : INFINITY;
	if (!(e <= tol)) {
		ok = false;
		/* Gram-Schmidt the axes so the quaternion is still a rotation. */
		if (!normalize3(row[0])) {
			row[0][0] = 1, row[0][1] = 0, row[0][2] = 0;
		}
		double d = dot3(row[1], row[0]);
		for (int j = 0; j < 3; j++)
			row[1][j] -= d * row[0][j];
		if (!normalize3(row[1])) {
			/* any vector orthogonal to row 0 */
			double a[3] = {0, 0, 0};
			a[fabs(row[0][0]) < 0.9 ? 0 : 1] = 1;
			d = dot3(a, row[0]);
			for (int j = 0; j < 3; j++)
				row[1][j] = a[j] - d * row[0][j];
			normalize3(row[1]);
		}
		row[2][0] = row[0][1] * row[1][2] - row[0][2] * row[1][1];
		row[2][1] = row[0][2] * row[1][0] - row[0][0] * row[1][2];
		row[2][2] = row[0][0] * row[1][1] - row[0][1] * row[1][0];
	}
	/* column-vector rotation: its columns are the stored rows */
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			r[i][j] = (float)row[j][i];
	skate_quat_from_mat3(r, q);
	if (err)
		*err = (float)e;
	return ok;
}

void skate_quat_mul(const float a[4], const float b[4], float out[4])
{
	float x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
	float y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
	float z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
	float w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];

	out[0] = x;
	out[1] = y;
	out[2] = z;
	out[3] = w;
}

void skate_quat_rotate(const float q[4], const float v[3], float out[3])
{
	/* v' = v + 2w (u x v) + 2 u x (u x v) */
	float u[3] = {q[0], q[1], q[2]}, w = q[3];
	float c[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
		      u[0] * v[1] - u[1] * v[0]};
	float cc[3] = {u[1] * c[2] - u[2] * c[1], u[2] * c[0] - u[0] * c[2],
		       u[0] * c[1] - u[1] * c[0]};

	for (int i = 0; i < 3; i++)
		out[i] = v[i] + 2 * w * c[i] + 2 * cc[i];
}
