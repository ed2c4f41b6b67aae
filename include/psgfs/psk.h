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

#include "psgfs/buf.h"
#include "psgfs/diag.h"
#include "psgfs/result.h"
#include "psgfs/source.h"

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
	uint32_t point; /* after the u16/u32 rule of spec §4 */
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
/* REFSKELT and BONENAMES records; quaternion exactly as stored (spec §5 conventions). */
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

/* Writer profile of spec §12: FACE0000 when wedges <= 65536, else FACE3200 (caller names
 * the file .pskx, see psk_needs_pskx). Writes every non-empty optional chunk. */
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

/* Decode a PSA from memory; same error policy as psk_read. FirstRawFrame repair (spec §7.2):
 * when sequence 0 has NumRawFrames > 0 and FirstRawFrame == NumRawFrames, all offsets are
 * recomputed cumulatively. */
enum rc psa_read(const uint8_t *p, size_t size, struct psa_anim *out, struct diag *diag);
void psa_anim_free(struct psa_anim *a);

/* Key of (sequence, frame, bone), frame-major; NULL when out of range or missing. */
const struct psa_key *psa_key_at(const struct psa_anim *a, size_t seq, size_t frame, size_t bone);
const struct psa_scale_key *psa_scale_key_at(const struct psa_anim *a, size_t seq, size_t frame,
					     size_t bone);

/* Whole PSA, strict order ANIMHEAD BONENAMES ANIMINFO ANIMKEYS [SCALEKEYS] (spec §7.4, §12). */
enum rc psa_write(const struct psa_anim *a, struct buf *out);
/* One sequence as a standalone PSA: FirstRawFrame 0, KeyQuotum = frames*bones, SCALEKEYS
 * always written (empty when the sequence has none). */
enum rc psa_write_sequence(const struct psa_anim *a, size_t seq, struct buf *out);

#endif
