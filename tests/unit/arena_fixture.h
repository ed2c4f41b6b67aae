/*
 * The fixture of the Skate unit tests: an arena in memory (its bytes, their source, the opened
 * arena) and, for the tests that want them, the generator's truth and the scene. Include after
 * <cmocka.h>. A test keeps more in it by defining, before the include, FX_EXTRA (member
 * declarations) and FX_EXTRA_FREE(f) (what fx_free must free of them).
 */
#ifndef PSGFS_ARENA_FIXTURE_H
#define PSGFS_ARENA_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/source.h"
#include "psgfs/formats/arena.h"
#include "psgfs/formats/skate_mesh.h"
#include "psgfs/gen/gen_psg_skinned.h"

#define FX_FN __attribute__((unused)) static

struct fx {
	uint8_t *file;
	size_t len;
	struct src_mem m;
	struct src s;
	struct arena a;
	struct gen_skinned_truth t; /* fx_gen */
	struct skate_scene *sc;	    /* fx_scene */
#ifdef FX_EXTRA
	FX_EXTRA
#endif
};

/* Open the f->len bytes at f->file as f->a (again after editing them: arena_free first). */
FX_FN void fx_reopen(struct fx *f)
{
	struct diag d;

	src_init_mem(&f->s, &f->m, f->file, f->len);
	diag_init(&d);
	assert_int_equal(arena_open(&f->s, &f->a, &d), RC_OK);
	diag_free(&d);
}

/* f, all else zero, from the bytes of b (taken over; b must not have run out of memory). */
FX_FN void fx_open(struct fx *f, struct buf *b)
{
	memset(f, 0, sizeof *f);
	assert_false(b->oom);
	f->file = buf_steal(b, &f->len);
	assert_non_null(f->file);
	fx_reopen(f);
}

/* A generated skinned arena, opened, the generator's truth in f->t. */
FX_FN void fx_gen(struct fx *f, const struct gen_skinned_opts *o)
{
	struct gen_skinned_truth t;
	struct buf b;

	memset(&t, 0, sizeof t);
	buf_init(&b);
	assert_int_equal(gen_psg_skinned(o, &b, &t), RC_OK);
	fx_open(f, &b);
	f->t = t;
}

/* f->sc from hierarchy tsv (NULL: none), expecting `problems` lines (printed if they differ). */
FX_FN void fx_scene(struct fx *f, const char *tsv, size_t problems)
{
	struct diag d;

	diag_init(&d);
	assert_int_equal(skate_scene_load(&f->s, &f->a, tsv, &f->sc, &d), RC_OK);
	if (d.n != problems)
		for (size_t i = 0; i < d.n; i++)
			print_message("scene: %s\n", d.msg[i]);
	assert_int_equal(d.n, problems);
	diag_free(&d);
}

FX_FN void fx_free(struct fx *f)
{
#ifdef FX_EXTRA_FREE
	FX_EXTRA_FREE(f);
#endif
	skate_scene_free(f->sc);
	arena_free(&f->a);
	free(f->file);
	gen_skinned_truth_free(&f->t);
	memset(f, 0, sizeof *f);
}

#endif
