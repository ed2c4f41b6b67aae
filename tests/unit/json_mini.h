/*
 * A small strict JSON reader for tests: the whole text into a tree of values. Strings are
 * decoded (\uXXXX with surrogate pairs to UTF-8); any syntax error fails the parse. Not for
 * untrusted input of any size (recursive).
 */
#ifndef PSGFS_TEST_JSON_MINI_H
#define PSGFS_TEST_JSON_MINI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	enum jtype t;
	double num;
	bool b;
	char *str; /* J_STR: decoded, NUL-terminated (len may count inner NULs) */
	size_t len;
	struct jv *items; /* J_ARR, J_OBJ values */
	char **keys;	  /* J_OBJ */
	size_t n;
};

struct jp {
	const char *p, *end;
	bool err;
};

static void jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool jp_lit(struct jp *j, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n))
		return false;
	j->p += n;
	return true;
}

static int jp_hex4(struct jp *j)
{
	int v = 0;

	if (j->end - j->p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = *j->p++;

		v = v * 16 + (c >= '0' && c <= '9'   ? c - '0'
			      : c >= 'a' && c <= 'f' ? c - 'a' + 10
			      : c >= 'A' && c <= 'F' ? c - 'A' + 10
						     : -1000);
	}
	return v < 0 ? -1 : v;
}

static void jp_utf8(char *o, size_t *n, unsigned cp)
{
	if (cp < 0x80) {
		o[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		o[(*n)++] = (char)(0xC0 | cp >> 6);
		o[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		o[(*n)++] = (char)(0xE0 | cp >> 12);
		o[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
		o[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else {
		o[(*n)++] = (char)(0xF0 | cp >> 18);
		o[(*n)++] = (char)(0x80 | (cp >> 12 & 0x3F));
		o[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
		o[(*n)++] = (char)(0x80 | (cp & 0x3F));
	}
}

static char *jp_string(struct jp *j, size_t *len)
{
	char *o;
	size_t n = 0;

	if (j->p >= j->end || *j->p != '"') {
		j->err = true;
		return NULL;
	}
	j->p++;
	o = malloc((size_t)(j->end - j->p) + 1);
	while (o && j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p++;

		if (c < 0x20) {
			j->err = true;
			break;
		}
		if (c != '\\') {
			o[n++] = (char)c;
			continue;
		}
		if (j->p >= j->end) {
			j->err = true;
			break;
		}
		c = (unsigned char)*j->p++;
		if (c == 'u') {
			int cp = jp_hex4(j);

			if (cp >= 0xD800 && cp <= 0xDBFF && jp_lit(j, "\\u")) {
				int lo = jp_hex4(j);

				cp = lo >= 0xDC00 && lo <= 0xDFFF
					 ? 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
					 : -1;
			}
			if (cp < 0 || (cp >= 0xD800 && cp <= 0xDFFF)) {
				j->err = true;
				break;
			}
			jp_utf8(o, &n, (unsigned)cp);
			continue;
		}
		const char *esc = strchr("\"\\/bfnrt", c);

		if (!esc || !c) {
			j->err = true;
			break;
		}
		o[n++] = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
	}
	if (!o || j->p >= j->end)
		j->err = true;
	else
		j->p++;
	if (j->err) {
		free(o);
		return NULL;
	}
	o[n] = 0;
	*len = n;
	return o;
}

static void jv_free(struct jv *v);
static bool jp_value(struct jp *j, struct jv *v, int depth);

static bool jp_list(struct jp *j, struct jv *v, bool obj, int depth)
{
	size_t cap = 0;

	j->p++;
	jp_ws(j);
	if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
		j->p++;
		return true;
	}
	for (;;) {
		if (v->n == cap) {
			cap = cap ? cap * 2 : 8;
			v->items = realloc(v->items, cap * sizeof *v->items);
			if (obj)
				v->keys = realloc(v->keys, cap * sizeof *v->keys);
		}
		jp_ws(j);
		if (obj) {
			size_t kl;

			v->keys[v->n] = jp_string(j, &kl);
			jp_ws(j);
			if (!v->keys[v->n] || !jp_lit(j, ":")) {
				free(v->keys[v->n]);
				j->err = true;
				return false;
			}
		}
		if (!jp_value(j, &v->items[v->n], depth + 1)) {
			jv_free(&v->items[v->n]);
			if (obj)
				free(v->keys[v->n]);
			return false;
		}
		v->n++;
		jp_ws(j);
		if (jp_lit(j, ","))
			continue;
		if (jp_lit(j, obj ? "}" : "]"))
			return true;
		j->err = true;
		return false;
	}
}

static bool jp_value(struct jp *j, struct jv *v, int depth)
{
	memset(v, 0, sizeof *v);
	jp_ws(j);
	if (j->p >= j->end || depth > 64)
		return !(j->err = true);
	if (*j->p == '{' || *j->p == '[') {
		v->t = *j->p == '{' ? J_OBJ : J_ARR;
		return jp_list(j, v, v->t == J_OBJ, depth);
	}
	if (*j->p == '"') {
		v->t = J_STR;
		v->str = jp_string(j, &v->len);
		return v->str != NULL;
	}
	if (jp_lit(j, "true") || jp_lit(j, "false")) {
		v->t = J_BOOL;
		v->b = j->p[-1] == 'e' && j->p[-2] == 'u';
		return true;
	}
	if (jp_lit(j, "null"))
		return true;
	{
		/* JSON numbers only: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
		const char *s = j->p;
		char *e;

		if (*s == '-')
			s++;
		if (s >= j->end || !(*s >= '0' && *s <= '9') ||
		    (s[0] == '0' && s + 1 < j->end && s[1] >= '0' && s[1] <= '9'))
			return !(j->err = true);
		v->t = J_NUM;
		v->num = strtod(j->p, &e);
		if (e == j->p || e > j->end || e[-1] == '.')
			return !(j->err = true);
		j->p = e;
		return true;
	}
}

/* Parse n bytes of JSON; false on any error (then *out holds nothing to free). */
static bool json_parse(const char *p, size_t n, struct jv *out)
{
	struct jp j = {p, p + n, false};
	bool ok = jp_value(&j, out, 0);

	jp_ws(&j);
	if (!ok || j.err || j.p != j.end) {
		jv_free(out);
		return false;
	}
	return true;
}

static void jv_free(struct jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jv_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	memset(v, 0, sizeof *v);
}

/* Member `key` of an object, or NULL. */
static const struct jv *jget(const struct jv *o, const char *key)
{
	if (!o || o->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->items[i];
	return NULL;
}

/* Element i of an array, or NULL. */
static const struct jv *jat(const struct jv *a, size_t i)
{
	return a && a->t == J_ARR && i < a->n ? &a->items[i] : NULL;
}

/* A number member, or def. */
static double jnum(const struct jv *o, const char *key, double def)
{
	const struct jv *v = jget(o, key);

	return v && v->t == J_NUM ? v->num : def;
}

#endif
