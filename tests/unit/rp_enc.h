/*
 * A small greedy RefPack encoder for tests, fuzz seeds and the bench (the generator's real
 * compressor lives in src/gen). It uses every command form: short, medium and long
 * back-references, literal blocks and the end command with 0..3 trailing literals.
 */
#ifndef PSGFS_TEST_RP_ENC_H
#define PSGFS_TEST_RP_ENC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Room the encoder may need for n input bytes. */
static inline size_t rpt_bound(size_t n)
{
	return n + n / 112 + 16;
}

static inline size_t rpt_lits(const uint8_t *src, size_t from, size_t to, uint8_t *o, size_t k)
{
	while (to - from > 3) {
		size_t t = to - from;

		t = (t > 112 ? 112 : t) & ~(size_t)3;
		o[k++] = (uint8_t)(0xE0 + t / 4 - 1);
		memcpy(o + k, src + from, t);
		k += t;
		from += t;
	}
	return k;
}

/* Encode src[0, n) into o (rpt_bound(n) bytes); returns the encoded length. */
static inline size_t rpt_encode(const uint8_t *src, size_t n, uint8_t *o)
{
	enum { HB = 16 };
	int64_t *tab = malloc(sizeof(int64_t) << HB);
	size_t k = 0, i = 0, lit = 0;

	if (!tab)
		return 0;
	for (size_t j = 0; j < ((size_t)1 << HB); j++)
		tab[j] = -1;
	if (n < (1u << 24)) {
		o[k++] = 0x10;
		o[k++] = 0xFB;
	} else {
		o[k++] = 0x90;
		o[k++] = 0xFB;
		o[k++] = (uint8_t)(n >> 24);
	}
	o[k++] = (uint8_t)(n >> 16);
	o[k++] = (uint8_t)(n >> 8);
	o[k++] = (uint8_t)n;
	while (i + 4 <= n) {
		uint32_t v;
		size_t h, len = 0, dist = 0;

		memcpy(&v, src + i, 4);
		h = (v * 2654435761u) >> (32 - HB);
		if (tab[h] >= 0 && i - (size_t)tab[h] <= 131072 &&
		    !memcmp(src + tab[h], src + i, 4)) {
			size_t c = (size_t)tab[h], max = n - i < 1028 ? n - i : 1028;

			dist = i - c;
			while (len < max && src[c + len] == src[i + len])
				len++;
		}
		tab[h] = (int64_t)i;
		if (len < 5 && !(len >= 3 && dist <= 1024) && !(len >= 4 && dist <= 16384)) {
			i++;
			continue;
		}
		k = rpt_lits(src, lit, i - ((i - lit) & 3), o, k);
		size_t run = (i - lit) & 3, d1 = dist - 1;

		if (dist <= 1024 && len <= 10) {
			o[k++] = (uint8_t)((d1 >> 8) << 5 | (len - 3) << 2 | run);
			o[k++] = (uint8_t)d1;
		} else if (dist <= 16384 && len <= 67) {
			o[k++] = (uint8_t)(0x80 | (len - 4));
			o[k++] = (uint8_t)(run << 6 | d1 >> 8);
			o[k++] = (uint8_t)d1;
		} else {
			if (len < 5)
				len = 5; /* only reached with len >= 5 */
			o[k++] = (uint8_t)(0xC0 | (d1 >> 16) << 4 | ((len - 5) >> 8) << 2 | run);
			o[k++] = (uint8_t)(d1 >> 8);
			o[k++] = (uint8_t)d1;
			o[k++] = (uint8_t)(len - 5);
		}
		memcpy(o + k, src + i - run, run);
		k += run;
		i += len;
		lit = i;
	}
	k = rpt_lits(src, lit, n - ((n - lit) & 3), o, k);
	o[k++] = (uint8_t)(0xFC + ((n - lit) & 3));
	memcpy(o + k, src + n - ((n - lit) & 3), (n - lit) & 3);
	k += (n - lit) & 3;
	free(tab);
	return k;
}

#endif
