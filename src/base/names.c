/* Untrusted names to safe path components. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"

size_t name_len(const void *raw, size_t maxlen)
{
	const char *z = memchr(raw, 0, maxlen);

	return z ? (size_t)(z - (const char *)raw) : maxlen;
}

static int name_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("._+=@#,()-", c) != NULL;
}

void name_component(const void *raw, size_t maxlen, char *out)
{
	const unsigned char *p = raw;
	size_t n = name_len(raw, maxlen), o = 0;

	/* Max ActorX pads names with spaces; they carry no meaning. */
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	for (size_t i = 0; i < n && o < NAME_COMPONENT_MAX; i++)
		out[o++] = name_char_ok(p[i]) && p[i] != 0 ? (char)p[i] : '_';
	out[o] = '\0';
	if (o == 0)
		strcpy(out, "unnamed");
	else if (out[0] == '.')
		out[0] = '_';
}

bool name_is_safe(const void *raw, size_t n)
{
	const unsigned char *p = raw;

	if (n == 0 || p[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!p[i] || !name_char_ok(p[i]))
			return false;
	return true;
}

const char *name_ext(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot && dot != name ? dot : name + strlen(name);
}

bool name_has_ext(const char *name, const char *const *exts)
{
	const char *dot = name_ext(name);

	if (!*dot)
		return false;
	for (; *exts; exts++)
		if (strcasecmp(dot, *exts) == 0)
			return true;
	return false;
}

bool name_pool_put(char **pool, size_t *len, size_t *cap, const void *s, size_t n)
{
	if (n > UINT32_MAX - *len)
		return false;
	if (*len + n > *cap) {
		size_t nc = *cap ? *cap : 256;
		char *p;

		while (nc < *len + n)
			nc *= 2;
		p = realloc(*pool, nc);
		if (!p)
			return false;
		*pool = p;
		*cap = nc;
	}
	if (n)
		memcpy(*pool + *len, s, n);
	*len += n;
	return true;
}

bool name_pool_add(char **pool, size_t *len, size_t *cap, const void *s, size_t n, uint32_t *at)
{
	size_t was = *len;

	if (n >= UINT32_MAX - *len || !name_pool_put(pool, len, cap, s, n))
		return false;
	if (!name_pool_put(pool, len, cap, "", 1)) {
		*len = was;
		return false;
	}
	*at = (uint32_t)was;
	return true;
}

bool name_list_push(struct name_list *l, const char *dir, const char *name)
{
	char **v = xgrow_n(l->v, l->n, &l->cap, sizeof *v, 64);
	char *p = NULL;

	if (!v)
		return false;
	l->v = v;
	if (asprintf(&p, "%s%s%s", dir, *dir ? "/" : "", name) < 0)
		return false;
	l->v[l->n++] = p;
	return true;
}

void name_list_free(struct name_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct name_list){0};
}

int name_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int name_open_dir(int dfd, const char *rel)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *p = rel;

	while (fd >= 0 && *p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		char name[NAME_MAX + 1];
		int next = -1;

		if (len <= NAME_MAX) {
			memcpy(name, p, len);
			name[len] = '\0';
			next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		close(fd);
		fd = next;
		p += len + (slash != NULL);
	}
	return fd;
}
