/* The namespace of a mounted PSA animation set. */
#include <stdlib.h>
#include <string.h>

#include "psgfs/names.h"
#include "tree/actorx.h"

enum { K_SEQS = AX_K_FIRST_OWN, K_SEQ, K_SEQ_INFO, K_SEQ_KEYS, K_SEQ_SCALE, K_SEQ_PSA, K_COUNT };

/* The decoded animation; x first, so the shared skeleton/errors handlers can read it. */
struct psa_full {
	struct actorx_decoded x;
	struct psa_anim a;
};

static void full_free(void *p)
{
	struct psa_full *f = p;

	psa_anim_free(&f->a);
	diag_free(&f->x.d);
	free(f);
}

static enum rc load_full(struct tree *t, uint64_t arg, void **data, size_t *bytes,
			 void (**dtor)(void *))
{
	struct psa_full *f = calloc(1, sizeof *f);
	uint8_t *file;
	enum rc r;

	(void)arg;
	if (!f)
		return RC_NOMEM;
	diag_init(&f->x.d);
	r = actorx_slurp(t, &file);
	if (r == RC_OK) {
		r = psa_read(file, (size_t)t->src.size, &f->a, &f->x.d);
		free(file);
	}
	if (r != RC_OK) {
		full_free(f);
		return r == RC_NOMEM ? r : RC_IO;
	}
	f->x.bones = f->a.bones;
	f->x.n_bones = f->a.n_bones;
	*data = f;
	*bytes = (size_t)t->src.size * 2 + sizeof *f;
	*dtor = full_free;
	return RC_OK;
}

/* The decoded animation, or NULL with *r set (it lives as long as the mount). */
static struct psa_full *full(struct tree *t, enum rc *r)
{
	return (struct psa_full *)actorx_get(t, r);
}

/* Scale keys exist for every key of sequence s. */
static bool seq_has_scale(const struct psa_anim *a, size_t s)
{
	const struct psa_sequence *q = &a->seqs[s];

	if (!a->n_scale_keys || q->num_raw_frames <= 0 || a->n_bones == 0)
		return false;
	return psa_scale_key_at(a, s, (size_t)q->num_raw_frames - 1, a->n_bones - 1) != NULL;
}

static enum rc list_root(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)t;
	(void)self;
	tlist_add(out, tn(AX_K_INFO, 0, 0), "info.txt");
	tlist_add(out, tn(AX_K_ERRORS, 0, 0), "errors.txt");
	tlist_add(out, tn(AX_K_CHUNKS, 0, 0), "chunks");
	tlist_add(out, tn(AX_K_SKEL, 0, 0), "skeleton");
	tlist_add(out, tn(K_SEQS, 0, 0), "sequences");
	return RC_OK;
}

static void seq_component(const struct psa_anim *a, size_t s, char *out)
{
	name_component(a->seqs[s].name, PSK_NAME_LEN, out);
}

static enum rc list_seqs(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)self;
	enum rc fr_;
	struct psa_full *f = full(t, &fr_);

	if (!f)
		return fr_;
	for (size_t i = 0; i < f->a.n_seqs && i < UINT32_MAX; i++) {
		char nm[NAME_COMPONENT_MAX + 1];

		seq_component(&f->a, i, nm);
		tlist_add(out, tn(K_SEQ, (uint32_t)i, 0), "%02zu.%s", i, nm);
	}
	return RC_OK;
}

static enum rc list_seq(struct tree *t, struct tnode self, struct tlist *out)
{
	char nm[NAME_COMPONENT_MAX + 1];

	enum rc fr_;
	struct psa_full *f = full(t, &fr_);

	if (!f)
		return fr_;
	if (self.a >= f->a.n_seqs) {
		return RC_NOENT;
	}
	seq_component(&f->a, self.a, nm);
	tlist_add(out, tn(K_SEQ_INFO, self.a, 0), "info.txt");
	tlist_add(out, tn(K_SEQ_KEYS, self.a, 0), "keys.tsv");
	if (seq_has_scale(&f->a, self.a))
		tlist_add(out, tn(K_SEQ_SCALE, self.a, 0), "scale_keys.tsv");
	tlist_add(out, tn(K_SEQ_PSA, self.a, 0), "%02u.%s.psa", self.a, nm);
	return RC_OK;
}

static enum rc render_info(struct tree *t, struct tnode self, struct buf *out)
{
	(void)self;
	enum rc fr_;
	struct psa_full *f = full(t, &fr_);

	if (!f)
		return fr_;
	const struct psa_anim *a = &f->a;
	size_t frames = 0;

	for (size_t i = 0; i < a->n_seqs; i++)
		frames += a->seqs[i].num_raw_frames > 0 ? (size_t)a->seqs[i].num_raw_frames : 0;
	buf_printf(out, "format: psa\nfile: %s\nsize: %llu\n", t->stem,
		   (unsigned long long)t->src.size);
	actorx_chunks_info(t, out);
	buf_printf(out,
		   "bones: %zu\nsequences: %zu\nframes: %zu\nkeys: %zu\nscale_keys: %zu\n"
		   "scale_chunk: %s\nfirst_raw_frame_repaired: %s\nproblems: %zu\n",
		   a->n_bones, a->n_seqs, frames, a->n_keys, a->n_scale_keys,
		   a->has_scale_chunk ? "yes" : "no", a->repaired_first_frames ? "yes" : "no",
		   diag_count(&f->x.d));
	return RC_OK;
}

static enum rc render_seq_info(struct tree *t, struct tnode self, struct buf *out)
{
	enum rc fr_;
	struct psa_full *f = full(t, &fr_);

	if (!f)
		return fr_;
	if (self.a >= f->a.n_seqs) {
		return RC_NOENT;
	}
	const struct psa_sequence *q = &f->a.seqs[self.a];

	buf_printf(out, "index: %u\nname: ", self.a);
	buf_tsv_name(out, q->name, PSK_NAME_LEN);
	buf_puts(out, "\ngroup: ");
	buf_tsv_name(out, q->group, PSK_NAME_LEN);
	buf_printf(out,
		   "\ntotal_bones: %d\nroot_include: %d\nkey_compression_style: %d\n"
		   "key_quotum: %d\nkey_reduction: ",
		   q->total_bones, q->root_include, q->key_compression_style, q->key_quotum);
	buf_f32txt(out, q->key_reduction);
	buf_puts(out, "\ntrack_time: ");
	buf_f32txt(out, q->track_time);
	buf_puts(out, "\nanim_rate: ");
	buf_f32txt(out, q->anim_rate);
	buf_printf(out, "\nstart_bone: %d\nfirst_raw_frame: %d\nnum_raw_frames: %d\n",
		   q->start_bone, q->first_raw_frame, q->num_raw_frames);
	if (q->anim_rate > 0)
		buf_printf(out, "duration_seconds: %.6g\n",
			   (double)q->num_raw_frames / (double)q->anim_rate);
	buf_printf(out, "keys_complete: %s\nscale_keys: %s\n", q->keys_ok ? "yes" : "no",
		   seq_has_scale(&f->a, self.a) ? "yes" : "no");
	return RC_OK;
}

/* keys.tsv and scale_keys.tsv: frame-major, every bone of every frame. */
static enum rc render_seq_keys(struct tree *t, struct tnode self, struct buf *out)
{
	enum rc r = RC_OK;

	enum rc fr_;
	struct psa_full *f = full(t, &fr_);

	if (!f)
		return fr_;
	const struct psa_anim *a = &f->a;
	bool scale = self.kind == K_SEQ_SCALE;

	if (self.a >= a->n_seqs || !a->seqs[self.a].keys_ok ||
	    (scale && !seq_has_scale(a, self.a))) {
		r = self.a >= a->n_seqs ? RC_NOENT : RC_CORRUPT; /* a dies with the pin */
		return r;
	}
	buf_puts(out, scale ? "frame\tbone\tname\tsx\tsy\tsz\ttime\n"
			    : "frame\tbone\tname\tpx\tpy\tpz\tqx\tqy\tqz\tqw\ttime\n");
	/* No bones, no rows: a huge frame count must not spin through empty frames. */
	size_t frames = a->n_bones ? (size_t)a->seqs[self.a].num_raw_frames : 0;

	for (size_t fr = 0; fr < frames && r == RC_OK; fr++) {
		for (size_t b = 0; b < a->n_bones; b++) {
			buf_printf(out, "%zu\t%zu\t", fr, b);
			buf_tsv_name(out, a->bones[b].name, PSK_NAME_LEN);
			if (scale) {
				const struct psa_scale_key *k = psa_scale_key_at(a, self.a, fr, b);

				if (!k) {
					r = RC_CORRUPT;
					break;
				}
				actorx_vec(out, k->scale, 3);
				actorx_vec(out, &k->time, 1);
			} else {
				const struct psa_key *k = psa_key_at(a, self.a, fr, b);

				if (!k) {
					r = RC_CORRUPT;
					break;
				}
				actorx_vec(out, k->pos, 3);
				actorx_vec(out, k->rot, 4);
				actorx_vec(out, &k->time, 1);
			}
			buf_putc(out, '\n');
		}
	}
	return r;
}

static enum rc render_seq_psa(struct tree *t, struct tnode self, struct buf *out)
{
	enum rc r;

	enum rc fr_;
	struct psa_full *f = full(t, &fr_);

	if (!f)
		return fr_;
	if (self.a >= f->a.n_seqs)
		r = RC_NOENT;
	else
		r = psa_write_sequence(&f->a, self.a, out);
	return r;
}

static enum tree_open_fail psa_mount(struct tree *t, char *why, size_t whylen)
{
	return actorx_mount(t, PSK_KIND_ANIM, load_full, why, whylen);
}

static const struct tree_kind psa_kinds[K_COUNT] = {
    [AX_K_ROOT] = {"root", true, list_root, NULL, NULL},
    [AX_K_INFO] = {"info", false, NULL, render_info, NULL},
    [AX_K_ERRORS] = {"errors", false, NULL, actorx_render_errors, NULL},
    [AX_K_CHUNKS] = {"chunks", true, actorx_list_chunks_dir, NULL, NULL},
    [AX_K_CHUNK] = {"chunk", false, NULL, NULL, actorx_chunk_extent},
    [AX_K_SKEL] = {"skeleton", true, actorx_list_skel, NULL, NULL},
    [AX_K_BONES_TSV] = {"bones.tsv", false, NULL, actorx_render_bones_tsv, NULL},
    [AX_K_NAMES] = {"names.txt", false, NULL, actorx_render_names, NULL},
    [AX_K_BONES] = {"bones", true, actorx_list_bones_dir, NULL, NULL},
    [AX_K_BONE] = {"bone", false, NULL, actorx_render_bone, NULL},
    [K_SEQS] = {"sequences", true, list_seqs, NULL, NULL},
    [K_SEQ] = {"sequence", true, list_seq, NULL, NULL},
    [K_SEQ_INFO] = {"sequence info", false, NULL, render_seq_info, NULL},
    [K_SEQ_KEYS] = {"keys", false, NULL, render_seq_keys, NULL},
    [K_SEQ_SCALE] = {"scale keys", false, NULL, render_seq_keys, NULL},
    [K_SEQ_PSA] = {"sequence psa", false, NULL, render_seq_psa, NULL},
};

const struct tree_format tree_format_psa = {
    .name = "psa",
    .kinds = psa_kinds,
    .n_kinds = K_COUNT,
    .mount = psa_mount,
    .unmount = actorx_unmount,
};
