/* PSA reader harness: chunk scan, full decode, key lookups, whole and per-sequence writers. */
#include <stdlib.h>

#include "harness.h"
#include "psgfs/formats/psk.h"

int fuzz_one_psa(const uint8_t *p, size_t n)
{
	struct src s;
	struct src_mem m;
	struct psk_chunks c;
	struct psa_anim a;
	struct diag d;

	diag_init(&d);
	src_init_mem(&s, &m, p, n);
	(void)psk_scan(&s, &c, &d);
	psk_chunks_free(&c); /* kept on RC_CORRUPT too; scan zeroes it first */
	if (psa_read(p, n, &a, &d) == RC_OK) {
		struct buf b;

		buf_init(&b);
		if (psa_write(&a, &b) == RC_OK && !b.oom) {
			struct psa_anim again;

			if (psa_read(b.data, b.len, &again, NULL) == RC_OK)
				psa_anim_free(&again);
		}
		buf_free(&b);
		/* Sequences are bounded by the input; 64 keeps each execution short. */
		for (size_t i = 0; i < a.n_seqs && i < 64; i++) {
			buf_init(&b);
			(void)psa_write_sequence(&a, i, &b);
			buf_free(&b);
			(void)psa_key_at(&a, i, 0, 0);
			(void)psa_scale_key_at(&a, i, 0, 0);
			if (a.seqs[i].num_raw_frames > 0 && a.n_bones > 0) {
				(void)psa_key_at(&a, i, (size_t)a.seqs[i].num_raw_frames - 1,
						 a.n_bones - 1);
				(void)psa_scale_key_at(&a, i, (size_t)a.seqs[i].num_raw_frames - 1,
						       a.n_bones - 1);
			}
		}
		(void)psa_key_at(&a, SIZE_MAX, SIZE_MAX, SIZE_MAX);
		psa_anim_free(&a);
	}
	diag_free(&d);
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	if (fuzz_one_psa(p, n))
		abort();
	return 0;
}
#endif
