/* Untrusted names from files become safe path components. */
#ifndef PSGFS_NAMES_H
#define PSGFS_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NAME_COMPONENT_MAX 48

/*
 * Copy at most maxlen bytes of raw (stopping at NUL) into out as a safe path component:
 * only [A-Za-z0-9._+=@#,()-] survive, everything else (/, control bytes, spaces, non-ASCII)
 * becomes '_', trailing spaces/NULs are trimmed, a leading '.' becomes '_', the result is at
 * most NAME_COMPONENT_MAX bytes and never empty ("unnamed"). Deterministic. out must hold
 * NAME_COMPONENT_MAX + 1 bytes.
 */
void name_component(const void *raw, size_t maxlen, char *out);

/* Length of a fixed-size name field up to its first NUL. */
size_t name_len(const void *raw, size_t maxlen);

/* True when the n bytes of raw are a safe path component already: not empty, no leading '.',
 * no trailing blank, every byte one name_component keeps (so it is neither "." nor ".."). */
bool name_is_safe(const void *raw, size_t n);

/* Name's last extension with its dot: from its last '.' when that is not its first byte (".psg"
 * and "a." have "" and "."), else the empty string at its end; stem is what comes before. */
const char *name_ext(const char *name);

/* True when name's last extension (from its last '.', which is not its first byte) is one of
 * exts, a NULL-terminated list of lowercase extensions with their dot; any case matches. */
bool name_has_ext(const char *name, const char *const *exts);

/*
 * Name pools: names one after the other in one growing buffer (no block per name), found by
 * offset, so a table of names costs their bytes whatever their number. name_pool_put appends
 * n bytes; name_pool_add appends n bytes and a NUL and says at which offset they start. Both
 * fail (false, the pool unchanged) when out of memory or when the pool would pass
 * UINT32_MAX bytes (offsets are 32-bit).
 */
bool name_pool_put(char **pool, size_t *len, size_t *cap, const void *s, size_t n);
bool name_pool_add(char **pool, size_t *len, size_t *cap, const void *s, size_t n, uint32_t *at);

/* A growing list of relative paths ("dir/name"; "" joins nothing), each its own allocation: the
 * pending folders and found files of a walk by name. */
struct name_list {
	char **v;
	size_t n, cap;
};
/* Append dir "/" name (name alone when dir is ""); false for want of memory. */
bool name_list_push(struct name_list *l, const char *dir, const char *name);
void name_list_free(struct name_list *l);
/* The folder at rel ("" = dfd's own) below dfd, opened one component at a time, links never
 * followed; -1 with errno on failure. */
int name_open_dir(int dfd, const char *rel);
/* qsort comparator of two char * by strcmp: a name list in byte order. */
int name_cmp_str(const void *a, const void *b);

#endif
