/* PSK reader harness: chunk scan, full decode, write the decoded mesh and read it back. */
#include <stdlib.h>

#include "harness.h"
#include "psgfs/formats/psk.h"

int fuzz_one_psk(const uint8_t *p, size_t n)
{
	struct src s;
	struct src_mem m;
	struct psk_chunks c;
	struct psk_mesh mesh;
	struct diag d;

	diag_init(&d);
	src_init_mem(&s, &m, p, n);
	(void)psk_scan(&s, &c, &d);
	psk_chunks_free(&c); /* kept on RC_CORRUPT too; scan zeroes it first */
	if (psk_read(p, n, &mesh, &d) == RC_OK) {
		struct buf b;

		buf_init(&b);
		(void)psk_needs_pskx(&mesh);
		if (psk_write(&mesh, &b) == RC_OK && !b.oom) {
			struct psk_mesh again;

			if (psk_read(b.data, b.len, &again, NULL) == RC_OK)
				psk_mesh_free(&again);
		}
		buf_free(&b);
		psk_mesh_free(&mesh);
	}
	diag_free(&d);
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	if (fuzz_one_psk(p, n))
		abort();
	return 0;
}
#endif
