/* Untrusted names to safe path components. */
#include <string.h>
#include <strings.h>

#include "psgfs/base/names.h"

size_t name_len(const void *raw, size_t maxlen)
{
	const char *p = raw;
	size_t n = 0;

	while (n < maxlen && p[n])
		n++;
	return n;
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

bool name_has_ext(const char *name, const char *const *exts)
{
	const char *dot = strrchr(name, '.');

	if (!dot || dot == name)
		return false;
	for (; *exts; exts++)
		if (strcasecmp(dot, *exts) == 0)
			return true;
	return false;
}
