/*
 * mkarc: write a small stored EB v3 archive for the archive mount tests, with exactly the entry
 * names given (hostile ones included), which a generator of game-like archives never writes.
 * usage: mkarc [--cut N] [--count N] OUT FOLDER NAME FILE[@CLAIM]...
 *   FOLDER and NAME: raw bytes, \xHH escapes allowed; FILE: the entry's bytes; CLAIM: the
 *   unpacked size the table claims instead of the file's size. --cut N drops the archive's last
 *   N bytes; --count N writes N as the entry count.
 * Layout (docs/archives.md): 0x30-byte header, 16-byte records, one compression byte each at
 * 0x30 + align16(records), name records {u16 folder, name} of 64 bytes, folder records of 128
 * bytes 16-aligned after them, the data 16-aligned, offsets in 16-byte units.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_REC   64
#define FOLDER_REC 128
#define MAX_ENT	   256

struct ent {
	char folder[FOLDER_REC], name[NAME_REC];
	uint8_t *data;
	size_t len;
	uint32_t claim;
};

static size_t al16(size_t x)
{
	return (x + 15) & ~(size_t)15;
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* \xHH escapes decoded; at most cap - 1 bytes. */
static void unescape(const char *s, char *out, size_t cap)
{
	size_t o = 0;

	while (*s && o + 1 < cap) {
		unsigned v;

		if (s[0] == '\\' && s[1] == 'x' && sscanf(s + 2, "%2x", &v) == 1) {
			out[o++] = (char)v;
			s += 4;
		} else {
			out[o++] = *s++;
		}
	}
	out[o] = '\0';
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    !(p = malloc((size_t)n + 1)) || fread(p, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "mkarc: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

int main(int argc, char **argv)
{
	static struct ent e[MAX_ENT];
	const char *folders[MAX_ENT];
	size_t n = 0, nf = 0, cut = 0, at, comp, names, fold, data;
	long count = -1;
	int a = 1;
	uint8_t *p;
	FILE *out;

	for (; a + 1 < argc && !strncmp(argv[a], "--", 2); a += 2) {
		if (!strcmp(argv[a], "--cut"))
			cut = strtoul(argv[a + 1], NULL, 10);
		else if (!strcmp(argv[a], "--count"))
			count = strtol(argv[a + 1], NULL, 10);
	}
	if (argc - a < 1 || (argc - a - 1) % 3 || (argc - a - 1) / 3 > MAX_ENT) {
		fprintf(stderr,
			"usage: mkarc [--cut N] [--count N] OUT FOLDER NAME FILE[@CLAIM]...\n");
		return 2;
	}
	for (int i = a + 1; i < argc; i += 3, n++) {
		char file[4096], *at_sign;

		unescape(argv[i], e[n].folder, sizeof e[n].folder);
		unescape(argv[i + 1], e[n].name, sizeof e[n].name - 2);
		snprintf(file, sizeof file, "%s", argv[i + 2]);
		at_sign = strrchr(file, '@');
		if (at_sign) {
			*at_sign = '\0';
			e[n].claim = (uint32_t)strtoul(at_sign + 1, NULL, 10);
		}
		e[n].data = slurp(file, &e[n].len);
		size_t k = 0;
		while (k < nf && strcmp(folders[k], e[n].folder))
			k++;
		if (k == nf)
			folders[nf++] = e[n].folder;
	}
	comp = 0x30 + al16(n * 16);
	names = al16(comp + n);
	fold = al16(names + n * NAME_REC);
	data = al16(fold + nf * FOLDER_REC);
	at = data;
	for (size_t i = 0; i < n; i++)
		at = al16(at + e[i].len);
	p = calloc(1, at + 1);
	if (!p)
		return 1;
	memcpy(p, "EB\0\3", 4);
	put_be(p + 4, count >= 0 ? (uint64_t)count : n, 4);
	p[10] = 4;
	put_be(p + 12, names, 4);
	put_be(p + 16, n * NAME_REC, 4);
	p[20] = NAME_REC;
	p[21] = FOLDER_REC;
	put_be(p + 22, nf, 2);
	put_be(p + 24, at, 8);
	size_t total = at;
	at = data;
	for (size_t i = 0; i < n; i++) {
		uint8_t *r = p + 0x30 + i * 16, *nr = p + names + i * NAME_REC;
		size_t k = 0;

		while (strcmp(folders[k], e[i].folder))
			k++;
		put_be(r, at >> 4, 4);
		put_be(r + 8, e[i].claim ? e[i].claim : e[i].len, 4);
		put_be(r + 12, (uint32_t)(i * 2654435761u), 4);
		put_be(nr, k, 2);
		memcpy(nr + 2, e[i].name, strlen(e[i].name));
		memcpy(p + at, e[i].data, e[i].len);
		at = al16(at + e[i].len);
	}
	for (size_t k = 0; k < nf; k++)
		memcpy(p + fold + k * FOLDER_REC, folders[k], strlen(folders[k]));
	out = fopen(argv[a], "wb");
	if (!out ||
	    fwrite(p, 1, total > cut ? total - cut : 0, out) != (total > cut ? total - cut : 0) ||
	    fclose(out) != 0) {
		fprintf(stderr, "mkarc: cannot write %s\n", argv[a]);
		free(p);
		return 1;
	}
	free(p);
	for (size_t i = 0; i < n; i++)
		free(e[i].data);
	return 0;
}
