/*
 * glTF exports of ActorX files (docs/gltf.md): a PSK/PSKX mesh with its skeleton, skin, morph
 * targets and sockets, and PSA sequences as animations of their skeleton. Built from a mount's
 * index (include/psgfs/formats/psk.h); records are read from the source in batches while rendering.
 * What an export holds beyond the index is bounded by the file's real records: per point its
 * four strongest influences, per morph its deltas, checkpoints every few thousand faces and
 * morph vertices. Rendering is through include/psgfs/formats/gltf.h's parts.
 */
#ifndef PSGFS_PSK_GLTF_H
#define PSGFS_PSK_GLTF_H

#include <stdint.h>

#include "psgfs/base/diag.h"
#include "psgfs/base/emit.h"
#include "psgfs/formats/gltf.h"
#include "psgfs/formats/psk.h"
#include "psgfs/base/source.h"

struct psk_gltf;

/* The mesh's export. name: the mesh's name (the file's stem). notes (may be NULL): one line per
 * thing the export dropped or repaired (faces with wedges out of range, points without
 * weights, more than four influences, morph deltas out of range...). */
enum rc psk_gltf_open(const struct src *s, const struct psk_index *ix, const char *name,
		      struct psk_gltf **out, struct diag *notes);
/* The skeleton with sequence seq as one animation, or every sequence when seq < 0. Sequences
 * that cannot be exported (missing keys, no frames) are left out; psa_gltf_notes says which. */
enum rc psa_gltf_open(const struct src *s, const struct psa_index *ix, const char *name,
		      int64_t seq, struct psk_gltf **out);
void psa_gltf_notes(const struct psa_index *ix, struct diag *notes);

/*
 * Optional cache for what rendering derives from the source. PSA keys are frame-major and glTF
 * wants them per bone: they are converted in blocks of 64 bones x 256 frames, and a cache that
 * keeps blocks between renders lets every key be read about once. get: the data `load` makes
 * for `key`, cached under key, pinned in *pin until put; NULL (and *r) on failure.
 */
typedef enum rc (*psk_gltf_load_fn)(const void *arg, void **data, size_t *bytes,
				    void (**dtor)(void *));
struct psk_gltf_cache {
	void *(*get)(void *ctx, uint64_t key, psk_gltf_load_fn load, const void *arg, void **pin,
		     enum rc *r);
	void (*put)(void *ctx, void *pin);
	void *ctx;
};
#define PSK_GLTF_KEY_BITS 56 /* cache keys are below 2^56 */

const struct gltf_plan *psk_gltf_plan(const struct psk_gltf *g);
/* Memory the export holds (for cache accounting). */
size_t psk_gltf_bytes(const struct psk_gltf *g);
/* Items of part `part` from `first` on (include/psgfs/formats/gltf.h); cache may be NULL. */
enum rc psk_gltf_render(const struct psk_gltf *g, const struct src *s,
			const struct psk_gltf_cache *cache, unsigned part, uint64_t first,
			struct emit *e);
void psk_gltf_free(struct psk_gltf *g);

#endif
