/*
 * The namespace of a mounted PSA animation set. The mount keeps the index (bones, sequences,
 * where the keys are); keys are read on demand for keys.tsv and each sequence's own .psa.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/cliopt.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/psk_gltf.h"
#include "psgfs/formats/registry.h"
#include "tree/actorx/ns_actorx.h"

enum {
	K_SEQS = AX_K_FIRST_OWN,
	K_SEQ,
	K_SEQ_INFO,
	K_SEQ_KEYS,
	K_SEQ_SCALE,
	K_SEQ_PSA,
	K_SEQ_GLB,
	K_EXPORT,
	K_ALL_GLB,
	K_COUNT
};

enum { N_NONE, N_SEQ_GLB, N_ALL_GLB, N_COUNT };

static const struct psa_index *ix_of(const struct tctx *c)
{
	return &ax_of(c)->psa;
}

/* Scale keys exist for every key of sequence s. */
static bool seq_has_scale(const struct psa_index *a, size_t s)
{
	uint64_t first, n;

	if (!a->scale_keys.n || a->n_bones == 0 || !psa_seq_keys(a, s, &first, &n) || n == 0)
		return false;
	return first + n <= a->scale_keys.n;
}

static enum rc list_root(const struct tctx *c, struct tlist *out)
{
	(void)c;
	tlist_add(out, tn(AX_K_INFO, 0, 0), "info.txt");
	tlist_add(out, tn(AX_K_ERRORS, 0, 0), "errors.txt");
	tlist_add(out, tn(AX_K_CHUNKS, 0, 0), "chunks");
	tlist_add(out, tn(AX_K_SKEL, 0, 0), "skeleton");
	tlist_add(out, tn(K_SEQS, 0, 0), "sequences");
	tlist_add(out, tn(K_EXPORT, 0, 0), "export");
	return RC_OK;
}

static enum rc list_export(const struct tctx *c, struct tlist *out)
{
	char stem[NAME_COMPONENT_MAX + 1];

	name_component(c->as->stem, strlen(c->as->stem), stem);
	tlist_add(out, tn(K_ALL_GLB, 0, 0), "%s.glb", stem);
	return RC_OK;
}

static void seq_component(const struct psa_index *a, size_t s, char *out)
{
	name_component(a->seqs[s].name, PSK_NAME_LEN, out);
}

static enum rc list_seqs(const struct tctx *c, struct tlist *out)
{
	const struct psa_index *a = ix_of(c);

	for (size_t i = 0; i < a->n_seqs && i <= TNODE_A_MAX; i++) {
		char nm[NAME_COMPONENT_MAX + 1];

		seq_component(a, i, nm);
		tlist_add(out, tn(K_SEQ, (uint32_t)i, 0), "%02zu.%s", i, nm);
	}
	return RC_OK;
}

static enum rc list_seq(const struct tctx *c, struct tlist *out)
{
	const struct psa_index *a = ix_of(c);
	char nm[NAME_COMPONENT_MAX + 1];
	uint32_t s = c->self.a;

	if (s >= a->n_seqs)
		return RC_NOENT;
	seq_component(a, s, nm);
	tlist_add(out, tn(K_SEQ_INFO, s, 0), "info.txt");
	tlist_add(out, tn(K_SEQ_KEYS, s, 0), "keys.tsv");
	if (seq_has_scale(a, s))
		tlist_add(out, tn(K_SEQ_SCALE, s, 0), "scale_keys.tsv");
	tlist_add(out, tn(K_SEQ_PSA, s, 0), "%02u.%s.psa", s, nm);
	tlist_add(out, tn(K_SEQ_GLB, s, 0), "%02u.%s.glb", s, nm);
	return RC_OK;
}

/* info.txt: where the bone parents come from. */
static void psa_parents_line(const struct ax_ns *x, struct buf *out)
{
	buf_puts(out, "hierarchy: ");
	if (x->flat)
		buf_printf(out,
			   "every bone hangs from bone 0 (the file stores parent 0 for all %zu "
			   "bones; parents can come from -o hierarchy=FILE or, in a folder mount, "
			   "a PSK beside it whose bone names match)\n",
			   x->n_bones);
	else if (x->parents_from && x->flat_in_file)
		buf_printf(out, "from %s: %zu of %zu bones (the file stores parent 0 for each)\n",
			   x->parents_from, x->parents_set, x->n_bones);
	else if (x->parents_from)
		buf_printf(out, "from %s: %zu of %zu bones, the others as the file stores them\n",
			   x->parents_from, x->parents_set, x->n_bones);
	else
		buf_puts(out, "as the file stores it\n");
}

static enum rc render_info(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct psa_index *a = ix_of(c);
	struct buf *out = &e->b;
	size_t frames = 0;

	(void)part;
	(void)first;
	for (size_t i = 0; i < a->n_seqs; i++)
		frames += a->seqs[i].num_raw_frames > 0 ? (size_t)a->seqs[i].num_raw_frames : 0;
	ax_info_head(c, "psa", out);
	buf_printf(out,
		   "bones: %zu\nsequences: %zu\nframes: %zu\nkeys: %zu\nscale_keys: %zu\n"
		   "scale_chunk: %s\nfirst_raw_frame_repaired: %s\nproblems: %zu\n",
		   a->n_bones, a->n_seqs, frames, a->keys.n, a->scale_keys.n,
		   a->has_scale_chunk ? "yes" : "no", a->repaired_first_frames ? "yes" : "no",
		   diag_count(&ax_of(c)->d));
	psa_parents_line(ax_of(c), out);
	emit_item(e);
	return RC_OK;
}

static enum rc render_bone(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	(void)part;
	(void)first;
	return ax_bone_txt(c, NULL, e);
}

static enum rc render_seq_info(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	const struct psa_index *a = ix_of(c);
	const struct psa_sequence *q;
	struct buf *out = &e->b;

	(void)part;
	(void)first;
	if (c->self.a >= a->n_seqs)
		return RC_NOENT;
	q = &a->seqs[c->self.a];
	buf_printf(out, "index: %u\nname: ", c->self.a);
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
		   seq_has_scale(a, c->self.a) ? "yes" : "no");
	emit_item(e);
	return RC_OK;
}

/* ---- keys.tsv and scale_keys.tsv: frame-major, every bone of every frame ---- */

struct keys_ctx {
	const struct src *s;
	const struct psa_index *a;
	uint64_t first; /* the sequence's first key in ANIMKEYS */
	bool scale;
};

static enum rc load_keys(const void *ctx, uint64_t first, size_t n, void *out)
{
	const struct keys_ctx *k = ctx;

	if (k->scale)
		return psa_get_scale_keys(k->s, &k->a->scale_keys, k->first + first, n, out);
	return psa_get_keys(k->s, &k->a->keys, k->first + first, n, out);
}

static enum rc print_key(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct keys_ctx *k = ctx;
	uint64_t nb = k->a->n_bones;

	buf_printf(b, "%llu\t%llu\t", (unsigned long long)(i / nb), (unsigned long long)(i % nb));
	buf_tsv_name(b, k->a->bones[i % nb].name, PSK_NAME_LEN);
	if (k->scale) {
		const struct psa_scale_key *x = rec;

		ax_vec(b, x->scale, 3);
		ax_vec(b, &x->time, 1);
	} else {
		const struct psa_key *x = rec;

		ax_vec(b, x->pos, 3);
		ax_vec(b, x->rot, 4);
		ax_vec(b, &x->time, 1);
	}
	buf_putc(b, '\n');
	return RC_OK;
}

static enum rc keys_of(const struct tctx *c, struct keys_ctx *k, struct view_file *f)
{
	const struct psa_index *a = ix_of(c);
	bool scale = c->self.kind == K_SEQ_SCALE;
	uint64_t n;

	if (c->self.a >= a->n_seqs)
		return RC_NOENT;
	if (!a->seqs[c->self.a].keys_ok || (scale && !seq_has_scale(a, c->self.a)) ||
	    !psa_seq_keys(a, c->self.a, &k->first, &n))
		return RC_CORRUPT;
	k->s = &c->as->src;
	k->a = a;
	k->scale = scale;
	/* No bones, no rows: a huge frame count must not spin through empty frames. */
	f->rows = (struct rows){scale ? "frame\tbone\tname\tsx\tsy\tsz\ttime\n"
				      : "frame\tbone\tname\tpx\tpy\tpz\tqx\tqy\tqz\tqw\ttime\n",
				a->n_bones ? n : 0,
				scale ? sizeof(struct psa_scale_key) : sizeof(struct psa_key),
				load_keys,
				print_key,
				k};
	return RC_OK;
}

VIEW_FILE(keys, struct keys_ctx, keys_of)

/* ---- one sequence as its own .psa ---- */

struct seq_psa {
	const struct src *s;
	const struct psa_index *a;
	struct psa_sequence seq;
	struct ax_plan plan;
	uint64_t first;
};

static enum rc seq_records(const void *ctx, const struct ax_chunk *ch, uint64_t first,
			   struct emit *e)
{
	const struct seq_psa *sp = ctx;
	union {
		struct psa_key k[ROWS_BATCH];
		struct psa_scale_key s[ROWS_BATCH];
	} *batch = NULL;
	enum rc r = RC_OK;
	bool more = true;

	if (ch->rec == AX_BONENAMES) {
		for (uint64_t i = first; i < ch->n && more; i++) {
			psk_put_bone(&e->b, &sp->a->bones[i]);
			more = emit_item(e);
		}
		return RC_OK;
	}
	if (ch->rec == AX_ANIMINFO) {
		psa_put_sequence(&e->b, &sp->seq);
		emit_item(e);
		return RC_OK;
	}
	batch = malloc(sizeof *batch);
	if (!batch)
		return RC_NOMEM;
	for (uint64_t at = first; at < ch->n && more && r == RC_OK; at += ROWS_BATCH) {
		size_t n = ch->n - at < ROWS_BATCH ? (size_t)(ch->n - at) : ROWS_BATCH;
		bool scale = ch->rec == AX_SCALEKEYS;

		r = scale
			? psa_get_scale_keys(sp->s, &sp->a->scale_keys, sp->first + at, n, batch->s)
			: psa_get_keys(sp->s, &sp->a->keys, sp->first + at, n, batch->k);
		for (size_t i = 0; i < n && more && r == RC_OK; i++) {
			if (scale)
				psa_put_scale_key(&e->b, &batch->s[i]);
			else
				psa_put_key(&e->b, &batch->k[i]);
			more = emit_item(e);
		}
	}
	free(batch);
	return r;
}

static enum rc seq_psa_of(const struct tctx *c, struct seq_psa *sp, struct view_file *f)
{
	const struct psa_index *a = ix_of(c);

	if (c->self.a >= a->n_seqs)
		return RC_NOENT;
	sp->s = &c->as->src;
	sp->a = a;
	*f = (struct view_file){.plan = &sp->plan, .records = seq_records, .ctx = sp};
	return psa_sequence_export(&a->seqs[c->self.a], a->n_bones, a->keys.n, a->scale_keys.n,
				   a->head_type_flag, &sp->seq, &sp->plan, &sp->first);
}

VIEW_FILE(seq_psa, struct seq_psa, seq_psa_of)

/* ---- glTF: one sequence, or every sequence ---- */

static void glb_free(void *p)
{
	psk_gltf_free(p);
}

static enum rc load_glb(struct asset *as, int64_t seq, void **data, size_t *bytes,
			void (**dtor)(void *))
{
	const struct ax_ns *x = as->priv;
	struct psk_gltf *g;
	enum rc r = psa_gltf_open(&as->src, &x->psa, as->stem, seq, &g);

	if (r != RC_OK)
		return r;
	*data = g;
	*bytes = psk_gltf_bytes(g);
	*dtor = glb_free;
	return RC_OK;
}

/* sequences/NN.name/NN.name.glb: arg is the sequence. */
static enum rc load_seq_glb(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			    void (**dtor)(void *))
{
	const struct ax_ns *x = as->priv;

	if (arg >= x->psa.n_seqs)
		return RC_NOENT;
	return load_glb(as, (int64_t)arg, data, bytes, dtor);
}

/* export/<stem>.glb: every sequence. */
static enum rc load_all_glb(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			    void (**dtor)(void *))
{
	(void)arg;
	return load_glb(as, -1, data, bytes, dtor);
}

static enum rc glb_layout(const struct tctx *c, struct layout_build *lb)
{
	view_glb_layout(psk_gltf_plan(c->need), lb);
	return RC_OK;
}

/* Key blocks converted for rendering live in the tree's cache, keyed by the asset. */
struct block_load {
	psk_gltf_load_fn load;
	const void *arg;
};

static enum rc load_block(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			  void (**dtor)(void *))
{
	const struct block_load *bl = (const struct block_load *)(uintptr_t)arg;

	(void)as;
	return bl->load(bl->arg, data, bytes, dtor);
}

static void *block_get(void *ctx, uint64_t key, psk_gltf_load_fn load, const void *arg, void **pin,
		       enum rc *r)
{
	struct block_load bl = {load, arg};
	struct cache_ent *ent = NULL;
	void *d = asset_memo(ctx, key, load_block, (uint64_t)(uintptr_t)&bl, &ent, r);

	*pin = ent;
	return d;
}

static void block_put(void *ctx, void *pin)
{
	asset_unpin(ctx, pin);
}

static enum rc glb_render(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	struct psk_gltf_cache cache = {block_get, block_put, c->as};

	return psk_gltf_render(c->need, &c->as->src, &cache, part, first, e);
}

static const struct tree_need psa_needs[N_COUNT] = {
    [N_SEQ_GLB] = {load_seq_glb, -1},
    [N_ALL_GLB] = {load_all_glb, -1},
};

/* ---- overlapping sequences share their keys' layout ---- */

struct seq_range {
	uint64_t first, n;
	uint32_t seq;
};

static int cmp_range(const void *x, const void *y)
{
	const struct seq_range *a = x, *b = y;

	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/*
 * keys.tsv and scale_keys.tsv print a sequence's range of ANIMKEYS with frame numbers from 0
 * and nothing of the sequence itself, so sequences with the same range show the same bytes:
 * each points at the first of them, and sizing the keys of a thousand overlapping sequences is
 * one counting pass (docs/psk-psa.md, "Amplification").
 */
static enum rc seq_canon_build(struct ax_ns *x)
{
	const struct psa_index *a = &x->psa;
	struct seq_range *v = xcalloc_n(a->n_seqs ? a->n_seqs : 1, sizeof *v);
	size_t m = 0;

	x->seq_canon = xcalloc_n(a->n_seqs ? a->n_seqs : 1, sizeof *x->seq_canon);
	if (!v || !x->seq_canon) {
		free(v);
		return RC_NOMEM;
	}
	for (size_t s = 0; s < a->n_seqs && s <= TNODE_A_MAX; s++) {
		x->seq_canon[s] = (uint32_t)s;
		if (a->seqs[s].keys_ok && psa_seq_keys(a, s, &v[m].first, &v[m].n)) {
			v[m].seq = (uint32_t)s;
			m++;
		}
	}
	qsort(v, m, sizeof *v, cmp_range);
	for (size_t i = 1; i < m; i++)
		if (v[i].first == v[i - 1].first && v[i].n == v[i - 1].n)
			x->seq_canon[v[i].seq] = x->seq_canon[v[i - 1].seq];
	free(v);
	return RC_OK;
}

static bool psa_same_as(struct asset *as, struct tnode n, struct tnode *canon)
{
	const struct ax_ns *x = as->priv;

	if ((n.kind != K_SEQ_KEYS && n.kind != K_SEQ_SCALE) || !x->seq_canon ||
	    n.a >= x->psa.n_seqs || x->seq_canon[n.a] == n.a)
		return false;
	*canon = tn(n.kind, x->seq_canon[n.a], n.b);
	return true;
}

/* ---- bone parents (docs/psk-psa.md, "Bone parents") ---- */

/* The PSK of slot `slot`, open, pinned; NULL if it is none. */
static struct asset *psk_at(struct tree *t, uint32_t slot, struct cache_ent **pin)
{
	enum rc r;
	struct asset *a = tree_asset_get(t, slot, pin, &r);

	if (a && a->fmt != &tree_format_psk) {
		tree_asset_put(t, *pin);
		return NULL;
	}
	return a;
}

/* Folder mounts: the PSK beside the PSA whose bone names match most of its bones (at least
 * two; ties: the first listed) gives the matched bones their parents. Only .psk/.pskx names
 * are opened. */
static enum rc parents_from_psk(struct asset *as, struct ax_ns *x)
{
	uint32_t *sib = NULL, best = 0;
	size_t n = folder_siblings(as->t, as->slot, &sib), best_n = 1;
	struct cache_ent *pin;
	struct asset *p;
	const char *name;
	uint32_t parent;

	for (size_t i = 0; i < n; i++) {
		size_t m;

		if (!folder_entry_name(as->t, sib[i], &parent, &name) ||
		    !fmt_name_is(name, FMT_PSK) || !(p = psk_at(as->t, sib[i], &pin)))
			continue;
		m = psk_bones_match(x->psa.bones, x->psa.n_bones,
				    ((const struct ax_ns *)p->priv)->bones,
				    ((const struct ax_ns *)p->priv)->n_bones, false);
		tree_asset_put(as->t, pin);
		if (m > best_n) {
			best_n = m;
			best = sib[i];
		}
	}
	free(sib);
	if (!best || !(p = psk_at(as->t, best, &pin)))
		return RC_OK;
	x->parents_set =
	    psk_bones_match(x->psa.bones, x->psa.n_bones, ((const struct ax_ns *)p->priv)->bones,
			    ((const struct ax_ns *)p->priv)->n_bones, true);
	tree_asset_put(as->t, pin);
	if (folder_entry_name(as->t, best, &parent, &name))
		x->parents_from = strdup(name);
	return x->parents_from ? RC_OK : RC_NOMEM;
}

/* -o hierarchy=FILE: parents by name, as for PSG models. */
static enum rc parents_from_option(struct asset *as, struct ax_ns *x)
{
	const struct tree_opts *o = &as->t->opts;
	char *text = NULL, why[256];

	if (!o->hierarchy_text && !o->hierarchy_path)
		return RC_OK;
	if (!o->hierarchy_text && cliopt_read_text(o->hierarchy_path, CLIOPT_HIERARCHY_MAX, &text,
						   why, sizeof why) != RC_OK) {
		diag_add(&x->d, "hierarchy file: %s", why);
		return RC_OK;
	}
	x->parents_set = psk_bones_apply_tsv(x->psa.bones, x->psa.n_bones,
					     o->hierarchy_text ? o->hierarchy_text : text, &x->d);
	free(text);
	x->parents_from = strdup("-o hierarchy");
	return x->parents_from ? RC_OK : RC_NOMEM;
}

/* A PSA whose every bone hangs from bone 0 takes its parents from -o hierarchy, else in a
 * folder mount from a PSK beside it whose bone names match; -o hierarchy applies whatever the
 * file stores. Still flat: info.txt and errors.txt say so and where parents can come from. */
static enum rc psa_parents(struct asset *as, struct ax_ns *x)
{
	enum rc r;

	x->flat_in_file = psk_bones_flat(x->psa.bones, x->psa.n_bones);
	r = parents_from_option(as, x);
	if (r == RC_OK && !x->parents_from && x->flat_in_file && as->t->fold)
		r = parents_from_psk(as, x);
	x->flat = psk_bones_flat(x->psa.bones, x->psa.n_bones);
	if (x->flat)
		diag_add(&x->d,
			 "skeleton: every one of the %zu bones hangs from bone 0 (the file stores "
			 "parent 0 for each); parents can come from -o hierarchy=FILE or, in a "
			 "folder mount, a PSK beside it whose bone names match",
			 x->psa.n_bones);
	return r;
}

/* The glTF exports' notes (sequences left out) join the mount's problems. */
static enum tree_open_fail psa_mount(struct asset *as, char *why, size_t whylen)
{
	enum tree_open_fail f = ax_mount(as, true, why, whylen);
	struct ax_ns *x = as->priv;

	if (f != TREE_FAIL_NONE)
		return f;
	if (psa_parents(as, x) == RC_NOMEM || seq_canon_build(x) != RC_OK) {
		ax_unmount(as);
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	psa_gltf_notes(&x->psa, &x->d);
	/* The index is held as long as the asset is open: charged to the budget. */
	atomic_fetch_add(&as->bytes, heap_block(x) + heap_block(x->psa.chunks.v) +
					 heap_block(x->psa.bones) + heap_block(x->psa.seqs) +
					 heap_block(x->seq_canon) + heap_block(x->parents_from) +
					 diag_heap_bytes(&x->d));
	return TREE_FAIL_NONE;
}

static const struct tree_kind psa_kinds[K_COUNT] = {
    AX_SHARED_KINDS(list_root, render_info, render_bone, 0),
    [K_SEQS] = {.what = "sequences", .type = TT_DIR, .list = list_seqs},
    [K_SEQ] = {.what = "sequence", .type = TT_DIR, .list = list_seq},
    [K_SEQ_INFO] = {.what = "sequence info", .type = TT_FILE, .render = render_seq_info},
    [K_SEQ_KEYS] = {.what = "keys", .type = TT_FILE, .layout = keys_layout, .render = keys_render},
    [K_SEQ_SCALE] = {.what = "scale keys",
		     .type = TT_FILE,
		     .layout = keys_layout,
		     .render = keys_render},
    [K_SEQ_PSA] = {.what = "sequence psa",
		   .type = TT_FILE,
		   .cheap = true,
		   .layout = seq_psa_layout,
		   .render = seq_psa_render},
    [K_SEQ_GLB] = {.what = "sequence glb",
		   .type = TT_FILE,
		   .need = N_SEQ_GLB,
		   .layout = glb_layout,
		   .render = glb_render},
    [K_EXPORT] = {.what = "export", .type = TT_DIR, .list = list_export},
    [K_ALL_GLB] = {.what = "glb",
		   .type = TT_FILE,
		   .need = N_ALL_GLB,
		   .layout = glb_layout,
		   .render = glb_render},
};

const struct tree_format tree_format_psa = {
    .name = "psa",
    .kinds = psa_kinds,
    .n_kinds = K_COUNT,
    .needs = psa_needs,
    .n_needs = N_COUNT,
    .mount = psa_mount,
    .unmount = ax_unmount,
    .same_as = psa_same_as,
};
