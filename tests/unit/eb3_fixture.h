/*
 * A stored EB v3 archive built in memory, for the unit tests of archives as directories
 * (test_arcdir.c) and of the loose view (test_loose.c). Header-only: each test includes it once.
 */
#ifndef PSGFS_TEST_EB3_FIXTURE_H
#define PSGFS_TEST_EB3_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "psgfs/base/buf.h"

struct ent {
	const char *folder; /* raw bytes, NUL-terminated */
	const char *name;
	const void *data;
	size_t len;
	uint32_t claim; /* unpacked size the table claims (0: len) */
};

#define NAME_REC   64
#define FOLDER_REC 255

static size_t al16(size_t x)
{
	return (x + 15) & ~(size_t)15;
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/*
 * Header (0x30 bytes, big-endian): "EB", version 3, entry count, flags, alignment shift,
 * reserved, names offset and size, name- and folder-record sizes, folder count, archive size;
 * 16-byte records {offset >> shift, stored size (0: as is), size, hash}; one compression byte
 * per entry at 0x30 + align16(records); name records {u16 folder, name}; folder records
 * 16-aligned after them; the data, 16-aligned.
 */
static void eb3(struct buf *b, const struct ent *e, size_t n)
{
	const char *folders[64];
	size_t nf = 0, comp = 0x30 + al16(n * 16), names = al16(comp + n),
	       fold = al16(names + n * NAME_REC), data, at;
	uint8_t *p;

	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		while (k < nf && strcmp(folders[k], e[i].folder))
			k++;
		if (k == nf)
			folders[nf++] = e[i].folder;
	}
	data = al16(fold + nf * FOLDER_REC);
	at = data;
	for (size_t i = 0; i < n; i++)
		at = al16(at + e[i].len);
	buf_init(b);
	buf_zero(b, at);
	assert_false(b->oom);
	p = b->data;
	memcpy(p, "EB\0\3", 4);
	put_be(p + 4, n, 4);
	p[10] = 4; /* offsets in 16-byte units */
	put_be(p + 12, names, 4);
	put_be(p + 16, n * NAME_REC, 4);
	p[20] = NAME_REC;
	p[21] = FOLDER_REC;
	put_be(p + 22, nf, 2);
	put_be(p + 24, at, 8);
	at = data;
	for (size_t i = 0; i < n; i++) {
		uint8_t *r = p + 0x30 + i * 16, *nr = p + names + i * NAME_REC;
		size_t k = 0;

		while (strcmp(folders[k], e[i].folder))
			k++;
		put_be(r, at >> 4, 4);
		put_be(r + 8, e[i].claim ? e[i].claim : e[i].len, 4);
		put_be(r + 12, i * 2654435761u, 4);
		put_be(nr, k, 2);
		memcpy(nr + 2, e[i].name, strlen(e[i].name));
		memcpy(p + at, e[i].data, e[i].len);
		at = al16(at + e[i].len);
	}
	for (size_t k = 0; k < nf; k++)
		memcpy(p + fold + k * FOLDER_REC, folders[k], strlen(folders[k]));
}

#endif
