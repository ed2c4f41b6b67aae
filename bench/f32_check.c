/*
 * f32_check: fmt_f32 (src/base/buf.c) against its printf/strtof definition, text for text.
 *   gcc -O2 -Iinclude bench/f32_check.c src/base/buf.c -lm -o /tmp/f32_check
 *   /tmp/f32_check 2000000        random bit patterns, decimals, powers of ten and neighbours
 *   /tmp/f32_check 120 130        every float (both signs) with exponent field 120..130
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdbool.h>
void fmt_f32(char out[32], float f);
static void ref(char out[32], float f)
{
	if (isnan(f)) {
		strcpy(out, signbit(f) ? "-nan" : "nan");
		return;
	}
	if (isinf(f)) {
		strcpy(out, f < 0 ? "-inf" : "inf");
		return;
	}
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(out, 32, "%.*g", prec, (double)f);
		if (strtof(out, NULL) == f && (f != 0 || signbit(strtof(out, NULL)) == signbit(f)))
			return;
	}
}
static long bad;
static void chk(uint32_t b)
{
	float f;
	char a[32], r[32];
	memcpy(&f, &b, 4);
	fmt_f32(a, f);
	ref(r, f);
	if (strcmp(a, r)) {
		if (bad++ < 20)
			printf("%08x: new '%s' ref '%s'\n", b, a, r);
	}
}
int main(int argc, char **argv)
{
	uint64_t st = 12345;
	if (argc > 2) { /* exhaustive over exponent fields argv[1]..argv[2] */
		for (uint32_t ex = atoi(argv[1]); ex <= (uint32_t)atoi(argv[2]); ex++)
			for (uint32_t fr = 0; fr < (1u << 23); fr++)
				chk((ex << 23) | fr), chk((1u << 31) | (ex << 23) | fr);
	} else {
		long n = atol(argv[1]);
		for (long i = 0; i < n; i++) {
			st += 0x9E3779B97F4A7C15ull;
			uint64_t z = st;
			z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
			z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
			z ^= z >> 31;
			chk((uint32_t)z);
			/* also integers and small decimals (ties, powers of ten) */
			float g = (float)((int64_t)(z >> 40) - (1 << 23)) /
				  (float)(1u << ((z >> 8) & 15));
			uint32_t gb;
			memcpy(&gb, &g, 4);
			chk(gb);
			float h = (float)pow(10.0, (double)((int)((z >> 16) % 60) - 30));
			memcpy(&gb, &h, 4);
			chk(gb);
			chk(gb + 1);
			chk(gb - 1);
		}
	}
	printf("bad %ld\n", bad);
	return bad != 0;
}
