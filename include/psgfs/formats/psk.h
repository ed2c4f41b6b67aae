/*
 * Unreal ActorX PSK/PSKX meshes and PSA animations (../shared/spec/psk-psa.md): chunk scan,
 * full readers and writers. Little-endian throughout. Names are kept as the raw 64 bytes
 * (untrusted, maybe unterminated); use name_len()/buf_tsv_name() to show them.
 */
#ifndef PSGFS_PSK_H
#define PSGFS_PSK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/base/source.h"

#define PSK_CHUNK_HEADER  32
#define PSK_NAME_LEN	  64
#define PSK_MAX_EXTRA_UVS 8

enum psk_kind { PSK_KIND_MESH, PSK_KIND_ANIM };

struct psk_chunk {
	char id[21];	    /* chunk ID up to its first NUL (junk after it ignored) */
	uint8_t raw_id[20]; /* all 20 bytes as stored */
	int32_t type_flag;
	uint32_t data_size;   /* record size as stored */
	uint32_t data_count;  /* record count as stored */
	uint64_t offset;      /* file offset of the header */
	uint64_t payload_off; /* offset + 32 */
	uint64_t payload_len; /* bytes actually present (clamped to the file) */
	bool truncated;	      /* size*count ran past the end of the file (or overflowed) */
};

struct psk_chunks {
	struct psk_chunk *v;
	size_t n;
	enum psk_kind kind; /* from the first chunk: ACTRHEAD or ANIMHEAD */
	uint64_t file_size;
};

/*
 * Read only the chunk headers. RC_FORMAT when the first chunk is not ACTRHEAD/ANIMHEAD;
 * RC_CORRUPT when nothing past the head can be trusted. A truncated last chunk is kept
 * (flagged) and reported to diag. The number of chunks is bounded by size/32.
 */
enum rc psk_scan(const struct src *s, struct psk_chunks *out, struct diag *diag);
void psk_chunks_free(struct psk_chunks *c);

struct psk_point {
	float x, y, z;
};
struct psk_wedge {
	uint32_t point; /* after the u16/u32 rule of docs/psk-psa.md, "Index widths" */
	float u, v;
	uint8_t mat, reserved;
};
struct psk_face {
	uint32_t wedge[3];
	uint8_t mat, aux_mat;
	uint32_t smoothing;
};
struct psk_material {
	uint8_t name[PSK_NAME_LEN];
	int32_t texture_index;
	uint32_t poly_flags;
	int32_t aux_material;
	uint32_t aux_flags;
	int32_t lod_bias, lod_style;
};
/* REFSKELT and BONENAMES records; quaternion exactly as stored (docs/psk-psa.md, "Quaternions"). */
struct psk_bone {
	uint8_t name[PSK_NAME_LEN];
	uint32_t flags;
	int32_t num_children;
	int32_t parent;
	float rot[4]; /* x y z w */
	float pos[3];
	float length;
	float size[3];
};
struct psk_weight {
	float weight;
	int32_t point;
	int32_t bone;
};
struct psk_color {
	uint8_t r, g, b, a;
};
struct psk_uv {
	float u, v;
};
struct psk_morph {
	uint8_t name[PSK_NAME_LEN];
	int32_t vertex_count;
	size_t first_delta; /* index into deltas; count clamped to what exists */
	size_t n_deltas;
};
struct psk_morph_delta {
	float pos[3];
	float tangent_z[3];
	int32_t point;
};
struct psk_socket {
	uint8_t name[PSK_NAME_LEN];
	uint8_t bone[PSK_NAME_LEN];
	float loc[3], rot[3], scale[3];
};

struct psk_mesh {
	int32_t head_type_flag;
	struct psk_point *points;
	size_t n_points;
	struct psk_wedge *wedges;
	size_t n_wedges;
	struct psk_face *faces;
	size_t n_faces;
	bool faces32; /* faces came from FACE3200 */
	struct psk_material *materials;
	size_t n_materials;
	struct psk_bone *bones;
	size_t n_bones;
	struct psk_weight *weights;
	size_t n_weights;
	struct psk_point *normals; /* VTXNORMS, per point */
	size_t n_normals;
	struct psk_color *colors; /* VERTEXCOLOR, per wedge, R G B A */
	size_t n_colors;
	struct psk_uv *extra_uvs[PSK_MAX_EXTRA_UVS]; /* EXTRAUVS%d / EXTRAUV%d, per wedge */
	size_t n_extra_uvs[PSK_MAX_EXTRA_UVS];
	size_t n_extra_uv_sets; /* highest set index present + 1 */
	struct psk_morph *morphs;
	size_t n_morphs;
	struct psk_morph_delta *deltas;
	size_t n_deltas;
	struct psk_socket *sockets;
	size_t n_sockets;
};

/* Where the records of one kind sit in the file: payload offset and whole records present. */
struct psk_span {
	uint64_t off;
	size_t n;
};

/*
 * What a mount keeps of a PSK: the chunk table, where each kind of record is, and the small
 * records decoded (materials, bones, morph infos with their delta ranges). Built from the
 * chunk table plus those small records only; the rest is read on demand. Structural problems
 * (chunk sizes, duplicates, counts that disagree, bone parents) go to diag; problems that need
 * the records themselves come from psk_check_data.
 */
struct psk_index {
	int32_t head_type_flag;
	struct psk_chunks chunks;
	struct psk_span points, wedges, faces, weights, normals, colors, deltas, sockets;
	struct psk_span uvs[PSK_MAX_EXTRA_UVS];
	size_t n_extra_uv_sets;
	bool faces32;
	uint32_t point_mask; /* applied to wedge point indices: 0xFFFF up to 65536 points */
	struct psk_material *materials;
	size_t n_materials;
	struct psk_bone *bones;
	size_t n_bones;
	struct psk_morph *morphs;
	size_t n_morphs;
};
enum rc psk_index_open(const struct src *s, struct psk_index *ix, struct diag *diag);
void psk_index_free(struct psk_index *ix);
/* Records [first, first+n) of a span (RC_BOUNDS past its end); callers batch. */
enum rc psk_get_points(const struct src *s, const struct psk_span *sp, size_t first, size_t n,
		       struct psk_point *out); /* PNTS0000 and VTXNORMS */
/* Records idx[0..n) of a span, ascending (RC_INVAL otherwise): one read from the first to the
 * last, only those named decoded, out[k] for idx[k]. */
enum rc psk_get_points_at(const struct src *s, const struct psk_span *sp, const uint32_t *idx,
			  size_t n, struct psk_point *out);
enum rc psk_get_wedges(const struct src *s, const struct psk_index *ix, size_t first, size_t n,
		       struct psk_wedge *out);
enum rc psk_get_faces(const struct src *s, const struct psk_index *ix, size_t first, size_t n,
		      struct psk_face *out);
enum rc psk_get_weights(const struct src *s, const struct psk_span *sp, size_t first, size_t n,
			struct psk_weight *out);
enum rc psk_get_colors(const struct src *s, const struct psk_span *sp, size_t first, size_t n,
		       struct psk_color *out);
enum rc psk_get_uvs(const struct src *s, const struct psk_span *sp, size_t first, size_t n,
		    struct psk_uv *out);
enum rc psk_get_deltas(const struct src *s, const struct psk_span *sp, size_t first, size_t n,
		       struct psk_morph_delta *out);
enum rc psk_get_sockets(const struct src *s, const struct psk_span *sp, size_t first, size_t n,
			struct psk_socket *out);
/* Every index that points at another record (wedge->point, face->wedge/material,
 * weight->point/bone, delta->point), checked in one pass with bounded memory. */
enum rc psk_check_data(const struct src *s, const struct psk_index *ix, struct diag *diag);

/*
 * Decode a whole PSK/PSKX from memory in any chunk order; record-size mismatches, indices out
 * of range, truncation and unknown chunks are reported to diag (problems, not failures): a
 * chunk whose records cannot be trusted is skipped and the rest still decodes. Fails only when
 * the buffer is not a PSK at all (RC_FORMAT) or memory runs out.
 * Policy: a chunk with records whose DataSize is not the expected record size is skipped
 * whole (no prefix reads; count-0 chunks may have any DataSize); of two chunks filling the
 * same slot the first wins; aliases REFSKEL0, RAWW0000, EXTRAUV%d, VTXW3200 (16-byte records).
 */
enum rc psk_read(const uint8_t *p, size_t size, struct psk_mesh *out, struct diag *diag);
void psk_mesh_free(struct psk_mesh *m);

/* ---- writing ---- */

struct psa_sequence;
struct psa_key;
struct psa_scale_key;

/* What a chunk of a planned file holds, so a record writer knows what to put. */
enum ax_rec {
	AX_HEAD,
	AX_PNTS,
	AX_VTXW,
	AX_FACE16,
	AX_FACE32,
	AX_MATT,
	AX_SKEL,
	AX_WEIGHTS,
	AX_COLOR,
	AX_NORMS,
	AX_MRPHINFO,
	AX_MRPHDATA,
	AX_SOCKET,
	AX_BONENAMES,
	AX_ANIMINFO,
	AX_ANIMKEYS,
	AX_SCALEKEYS,
	AX_UV0, /* AX_UV0 + set, up to PSK_MAX_EXTRA_UVS */
};

struct ax_chunk {
	char id[21];
	enum ax_rec rec;
	int32_t flag;
	uint32_t size; /* record size */
	uint64_t n;    /* records */
};
#define AX_PLAN_MAX (16 + PSK_MAX_EXTRA_UVS)
/* A file as its chunks, in writing order: headers of 32 bytes, then n records each. */
struct ax_plan {
	struct ax_chunk c[AX_PLAN_MAX];
	unsigned n;
};
void ax_put_header(struct buf *b, const struct ax_chunk *c);

/* Record counts of a PSK to write; 0 leaves an optional chunk out. */
struct psk_counts {
	int32_t head_flag; /* 0: the writer's own (20100422) */
	uint64_t points, wedges, faces, materials, bones, weights, colors, normals, morphs, deltas,
	    sockets;
	uint64_t uvs[PSK_MAX_EXTRA_UVS];
};
void psk_counts_of(const struct psk_mesh *m, struct psk_counts *k);
/* Writer profile (docs/psk-psa.md, "Writer profile"): ACTRHEAD PNTS VTXW FACE MATT REFSKELT
 * RAWWEIGHTS, then the extensions present (VERTEXCOLOR, EXTRAUVSn, VTXNORMS, MRPHINFO+MRPHDATA,
 * SKELSOCK). FACE3200 above 65536 wedges (the file is then a .pskx). RC_INVAL past int32. */
enum rc psk_plan(const struct psk_counts *k, struct ax_plan *p);
/* ANIMHEAD BONENAMES ANIMINFO ANIMKEYS [SCALEKEYS]: SCALEKEYS when scale_chunk, when there
 * are scale keys, or when the head flag is new enough that importers expect it. */
enum rc psa_plan(int32_t head_flag, size_t bones, size_t seqs, uint64_t keys, uint64_t scale_keys,
		 bool scale_chunk, struct ax_plan *p);
/* One sequence as a standalone PSA: its record (FirstRawFrame 0, KeyQuotum = keys), the plan,
 * and the first key in the source's ANIMKEYS. RC_CORRUPT when its keys are not all there. */
enum rc psa_sequence_export(const struct psa_sequence *in, size_t n_bones, uint64_t n_keys_avail,
			    uint64_t n_scale_avail, int32_t head_flag, struct psa_sequence *out,
			    struct ax_plan *p, uint64_t *first);

/* One record each, in its on-disk layout. */
void psk_put_header(struct buf *b, const char *id, int32_t flag, uint32_t size, uint32_t count);
void psk_put_point(struct buf *b, const struct psk_point *p);
void psk_put_wedge(struct buf *b, const struct psk_wedge *w);
void psk_put_face(struct buf *b, const struct psk_face *f, bool wide);
void psk_put_material(struct buf *b, const struct psk_material *mt);
void psk_put_bone(struct buf *b, const struct psk_bone *bone);

/* Bone parents (psk_hierarchy.c; docs/psk-psa.md, "Bone parents"). Flat: two bones or more
 * and every bone after the first has parent 0 (what many PSA exporters write). */
bool psk_bones_flat(const struct psk_bone *b, size_t n);
/* Parents from "bone<TAB>parent" lines by name (ignoring case; a parent "", "-", "-1",
 * "none" or "null" is the root); returns the bones set, problems to d. */
size_t psk_bones_apply_tsv(struct psk_bone *b, size_t n, const char *tsv, struct diag *d);
/* Bones 1.. of b whose names ref has too; with apply, each such bone's parent becomes its
 * nearest ancestor in ref that b has (else bone 0). Returns how many matched. */
size_t psk_bones_match(struct psk_bone *b, size_t n, const struct psk_bone *ref, size_t n_ref,
		       bool apply);
void psk_put_weight(struct buf *b, const struct psk_weight *w);
void psk_put_color(struct buf *b, const struct psk_color *c);
void psk_put_uv(struct buf *b, const struct psk_uv *uv);
void psk_put_morph(struct buf *b, const struct psk_morph *m);
void psk_put_delta(struct buf *b, const struct psk_morph_delta *d);
void psk_put_socket(struct buf *b, const struct psk_socket *s);
void psa_put_sequence(struct buf *b, const struct psa_sequence *s);
void psa_put_key(struct buf *b, const struct psa_key *k);
void psa_put_scale_key(struct buf *b, const struct psa_scale_key *k);

/* Whole file from memory, per psk_plan; the caller names it .pskx when psk_needs_pskx. */
enum rc psk_write(const struct psk_mesh *m, struct buf *out);
bool psk_needs_pskx(const struct psk_mesh *m);

struct psa_sequence {
	uint8_t name[PSK_NAME_LEN];
	uint8_t group[PSK_NAME_LEN];
	int32_t total_bones;
	int32_t root_include;
	int32_t key_compression_style;
	int32_t key_quotum;
	float key_reduction;
	float track_time;
	float anim_rate;
	int32_t start_bone;
	int32_t first_raw_frame; /* after repair, see psa_anim.repaired_first_frames */
	int32_t num_raw_frames;
	bool keys_ok; /* all of this sequence's keys exist */
};
struct psa_key {
	float pos[3];
	float rot[4]; /* x y z w as stored */
	float time;
};
struct psa_scale_key {
	float scale[3];
	float time;
};

struct psa_anim {
	int32_t head_type_flag;
	struct psk_bone *bones;
	size_t n_bones;
	struct psa_sequence *seqs;
	size_t n_seqs;
	struct psa_key *keys;
	size_t n_keys;
	struct psa_scale_key *scale_keys;
	size_t n_scale_keys;
	bool has_scale_chunk;	    /* a SCALEKEYS chunk exists (maybe empty) */
	bool repaired_first_frames; /* CUE4Parse #103 FirstRawFrame repair applied */
};

/* What a mount keeps of a PSA: chunks, bones and sequences decoded (FirstRawFrame repaired,
 * keys_ok set), where the keys are. Same diag lines as psa_read. */
struct psa_index {
	int32_t head_type_flag;
	struct psk_chunks chunks;
	struct psk_bone *bones;
	size_t n_bones;
	struct psa_sequence *seqs;
	size_t n_seqs;
	struct psk_span keys, scale_keys;
	bool has_scale_chunk;
	bool repaired_first_frames;
};
enum rc psa_index_open(const struct src *s, struct psa_index *ix, struct diag *diag);
void psa_index_free(struct psa_index *ix);
/* Sequence seq's keys are [first, first+n) of ANIMKEYS (frame-major); false if negative. */
bool psa_seq_keys(const struct psa_index *ix, size_t seq, uint64_t *first, uint64_t *n);
enum rc psa_get_keys(const struct src *s, const struct psk_span *sp, uint64_t first, size_t n,
		     struct psa_key *out);
enum rc psa_get_scale_keys(const struct src *s, const struct psk_span *sp, uint64_t first, size_t n,
			   struct psa_scale_key *out);

/* Decode a PSA from memory; same error policy as psk_read. FirstRawFrame repair (docs/psk-psa.md,
 * "Sequences (ANIMINFO)"): when sequence 0 has NumRawFrames > 0 and FirstRawFrame == NumRawFrames,
 * all offsets are recomputed cumulatively. */
enum rc psa_read(const uint8_t *p, size_t size, struct psa_anim *out, struct diag *diag);
void psa_anim_free(struct psa_anim *a);

/* Key of (sequence, frame, bone), frame-major; NULL when out of range or missing. */
const struct psa_key *psa_key_at(const struct psa_anim *a, size_t seq, size_t frame, size_t bone);
const struct psa_scale_key *psa_scale_key_at(const struct psa_anim *a, size_t seq, size_t frame,
					     size_t bone);

/* Whole PSA, strict order ANIMHEAD BONENAMES ANIMINFO ANIMKEYS [SCALEKEYS] (docs/psk-psa.md, "PSA
 * chunks", "Writer profile (psgfs)"). */
enum rc psa_write(const struct psa_anim *a, struct buf *out);
/* One sequence as a standalone PSA: FirstRawFrame 0, KeyQuotum = frames*bones, SCALEKEYS
 * always written (empty when the sequence has none). */
enum rc psa_write_sequence(const struct psa_anim *a, size_t seq, struct buf *out);

#endif
