/*
 * Deterministic synthetic RW4 arenas (PS3) laid out as real ones are (docs/rw4-arena.md,
 * "File layout").
 * Low level: an arena builder (objects, base resources, subreferences, reference fix-ups,
 * optional dictionary shuffle). High level: ready-made arenas (static sky model, skinned
 * models, texture arenas, sized arenas for benchmarks).
 */
#ifndef PSGFS_GEN_PSG_H
#define PSGFS_GEN_PSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/result.h"

/* Which type registry the arena declares (docs/rw4-arena.md, "Type registries"). */
enum psgb_registry { PSGB_REG_MODEL64, PSGB_REG_TEXTURE10 };

struct psg_builder;

struct psg_builder *psgb_new(enum psgb_registry reg, uint32_t arena_id);
void psgb_free(struct psg_builder *b);

/* Target platform. PSGB_XB2: header magic "xb2", 0xAC bytes, five resource descriptors, base
 * resources of type 0x00010031 in descriptor 2 (PHYSICAL), and the texture registry without
 * 0x00010034 (9 types). Set right after psgb_new, before any base resource is added.
 * Default PSGB_PS3. */
enum psgb_platform { PSGB_PS3, PSGB_XB2 };
void psgb_set_platform(struct psg_builder *b, enum psgb_platform plat);

/*
 * Dictionary indices are assigned in the order objects are added or reserved (logical order).
 * psgb_reserve takes an index now and psgb_set fills it later, for forward references.
 * Main-memory objects are laid out in logical order; base resources go to region 5
 * (GRAPHICS_LOCAL, type 0x00010034) in logical order.
 */
uint32_t psgb_reserve(struct psg_builder *b);
void psgb_set(struct psg_builder *b, uint32_t idx, uint32_t type_id, uint32_t align,
	      const void *data, size_t len);
uint32_t psgb_add(struct psg_builder *b, uint32_t type_id, uint32_t align, const void *data,
		  size_t len);
uint32_t psgb_add_base_resource(struct psg_builder *b, uint32_t align, const void *data,
				size_t len);
/* Fill a reserved slot with a base resource (region 5, type 0x00010034). */
void psgb_set_base_resource(struct psg_builder *b, uint32_t idx, uint32_t align, const void *data,
			    size_t len);
/*
 * Base resource whose bytes are produced only while psgb_finish writes them: fill(ctx, off,
 * dst, n) must write bytes [off, off+n) of the resource (called in ascending chunks), so big
 * arenas never hold their GPU data twice. The builder does not own ctx.
 */
typedef void (*psgb_fill_fn)(void *ctx, uint64_t off, uint8_t *dst, size_t n);
uint32_t psgb_add_base_resource_fn(struct psg_builder *b, uint32_t align, uint64_t len,
				   psgb_fill_fn fill, void *ctx);
/* Subreference record (object, offset); returns the stored reference value 0x00800000 | i. */
uint32_t psgb_add_subref(struct psg_builder *b, uint32_t object, uint32_t offset);
/* Declare that the big-endian u32 at `offset` inside object `idx` holds a dictionary index,
 * so a shuffled dictionary can renumber it (values 0 and subreference values are left alone).
 * psgb_finish fails with RC_INVAL if the field is not inside a main-memory object. */
void psgb_ref(struct psg_builder *b, uint32_t idx, uint32_t offset);
/* RD[5].alignment (0x10 meshes, 0x80 textures, 1 when no GPU data). Default: 0x10. */
void psgb_set_gpu_align(struct psg_builder *b, uint32_t align);

/*
 * Dictionary row order (the object bytes stay in logical order in the file). Real writers
 * differ: the model sample has base resources among the objects, texture arenas put them
 * first, and then a reference to row 0 is stored as 0 (docs/rw4-arena.md, "Row 0 as a
 * reference target").
 */
enum psgb_order {
	PSGB_ORDER_LOGICAL,	  /* the order objects were added (default) */
	PSGB_ORDER_BASERES_FIRST, /* every base resource first; each group keeps its order */
};
void psgb_set_order(struct psg_builder *b, enum psgb_order order);
/* Any order: rows[r] = the logical index written at row r. psgb_finish fails with RC_INVAL
 * unless it is a permutation of all objects. Overrides psgb_set_order and the shuffle. */
void psgb_set_rows(struct psg_builder *b, const uint32_t *rows, size_t n);

/* One row of what was written, by final dictionary index. */
struct psg_gen_object {
	uint32_t type_id;
	uint64_t start; /* absolute file offset of the object's bytes */
	uint32_t size;
	uint64_t fnv64; /* FNV-1a 64 of the object's bytes */
};
struct psg_gen_record {
	struct psg_gen_object *obj;
	size_t n;
};
void psg_gen_record_free(struct psg_gen_record *r);

/*
 * Lay out and serialise, appending to out (record offsets are relative to the arena start).
 * Rows follow psgb_set_rows, else shuffle_seed != 0 permutes them (keeping an object nobody
 * references at row 0, so stored nulls stay null) and then psgb_set_order applies. Every
 * declared reference and subreference record is renumbered to the final rows (a reference to
 * row 0 is then stored as 0). rec (optional) receives the final per-row record. The builder
 * is consumed either way. Errors: RC_INVAL for an unfilled reserved slot, a type missing from
 * the registry, a subreference to a missing object, a bad psgb_ref or psgb_set_rows;
 * RC_UNSUPPORTED past 4 GiB; RC_NOMEM. Counting-mode out works (record hashes of lazy base
 * resources are then 0).
 */
enum rc psgb_finish(struct psg_builder *b, uint64_t shuffle_seed, struct buf *out,
		    struct psg_gen_record *rec);

/*
 * The static sky model of the real night sky: 12 objects, 1 bone "skyboxSphere", 1 mesh of 4
 * islands (285 indices each), 230 vertices F32x3 + S1x2 (stride 16), 1140 u16 indices.
 * shuffle_seed as for psgb_finish (0 = the real dictionary order).
 */
enum rc gen_psg_sky(uint64_t shuffle_seed, struct buf *out, struct psg_gen_record *rec);
/* The same in a given row order (PSGB_ORDER_BASERES_FIRST: the two base resources at rows 0
 * and 1, so VertexBuffer.m_buffer is stored as 0). */
enum rc gen_psg_sky_order(enum psgb_order order, uint64_t shuffle_seed, struct buf *out,
			  struct psg_gen_record *rec);
/* The sky on a platform. PSGB_XB2: the Xbox 360 twin (docs/xbox360.md, "Models"): the same
 * objects, vertex bytes (FLOAT3 + SHORT2N) and index bytes in the Xbox 360 object layouts,
 * islands of primitive 4; each buffer follows its base resource, so only the logical order
 * without shuffle is allowed (RC_INVAL otherwise). */
enum rc gen_psg_sky_platform(enum psgb_platform plat, enum psgb_order order, uint64_t shuffle_seed,
			     struct buf *out, struct psg_gen_record *rec);

/*
 * A model arena of roughly target_bytes (64 KiB .. 3 GiB; RC_INVAL outside) made of many
 * static grid meshes (7 objects each, vertex/index data in base resources produced while the
 * arena is written), one RenderModelData, material, instance and TOC. Deterministic in seed.
 * Works in counting mode (out from buf_init_count) to learn the size without memory.
 */
enum rc gen_psg_sized(uint64_t target_bytes, uint64_t seed, struct buf *out,
		      struct psg_gen_record *rec);

/*
 * Hostile variant of an arena in out (from offset 0, as just generated): its dictionary moves
 * to the end of the file and claims `rows` rows (numEntries = numUsed = rows, at least the real
 * ones): the real rows, then zero rows the buffer does not hold. *file_size is the size the
 * file must be given (ftruncate past out->len), so the zero rows are a hole: a few KiB on disk
 * for any count. RC_INVAL when rows is below the arena's own count or the file would pass 4 GiB.
 */
enum rc gen_psg_sparse_rows(struct buf *out, uint32_t rows, uint64_t *file_size);

#endif
