/* RW4 arena harness: header, sections, dictionary, every object read, references resolved,
 * the arena-level text files (header.txt, dictionary.tsv, sections/), and the bounded scan of
 * texture GUIDs the mount's TOC index makes. */
#include <stdlib.h>

#include "harness.h"
#include "psgfs/formats/arena.h"
#include "psgfs/base/bytes.h"
#include "psgfs/formats/skate_objects.h"
#include "tree/psg/view_psg.h"

typedef enum rc (*render_fn)(const struct arena *, struct buf *);

int fuzz_one_arena(const uint8_t *p, size_t n)
{
	static const render_fn renders[] = {view_header_txt, view_external_arenas_tsv,
					    view_info_summary};
	struct src s;
	struct src_mem m;
	struct arena a;
	struct diag d;

	diag_init(&d);
	src_init_mem(&s, &m, p, n);
	/* The TOC index's bounded scan (skate_toc_scan.c): a generous and a tight cap. */
	for (int k = 0; k < 2; k++) {
		uint64_t *g;
		size_t ng;

		if (skate_toc_texture_guids(&s, k ? 4096 : 1u << 20, k ? 2 : 4096, &g, &ng) ==
		    RC_OK)
			free(g);
	}
	if (arena_open(&s, &a, &d) != RC_OK) {
		diag_free(&d);
		return 0;
	}
	for (uint32_t i = 0; i < a.n_dict; i++) {
		uint8_t *obj = NULL;
		size_t len = 0;
		uint32_t o, off;

		if (arena_read_object(&s, &a, i, &obj, &len) == RC_OK) {
			/* Every aligned word of the object, resolved as if it were a reference. */
			for (size_t k = 0; k + 4 <= len && k < 256; k += 4)
				(void)arena_resolve_ref(
				    &a, a.big_endian ? ld_u32be(obj + k) : ld_u32le(obj + k), &o,
				    &off);
		}
		free(obj);
		(void)arena_resolve_ref(&a, i, &o, &off);
		(void)arena_resolve_ref(&a, 0x00800000u | i, &o, &off);
		(void)arena_find_type(&a, arena_row(&a, i)->type_id);
	}
	{
		uint32_t o, off;

		(void)arena_resolve_ref(&a, 0xFFFFFFFFu, &o, &off);
		(void)arena_resolve_ref(&a, 0x00800000u | a.n_subrefs, &o, &off);
	}
	for (size_t k = 0; k < sizeof renders / sizeof renders[0]; k++) {
		struct buf b;

		buf_init(&b);
		(void)renders[k](&a, &b);
		buf_free(&b);
	}
	for (int w = VA_DICT; w <= VA_SUBREFS; w++) {
		struct rows t = view_arena_rows(&a, (enum view_arena_table)w);
		struct emit e;

		emit_init_count(&e, 4096);
		(void)view_rows_render(&t, 0, &e);
		emit_free(&e);
	}
	arena_free(&a);
	diag_free(&d);
	return 0;
}

#ifdef PSGFS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	if (fuzz_one_arena(p, n))
		abort();
	return 0;
}
#endif
