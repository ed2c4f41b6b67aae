/* Shared PSK/PSA namespace pieces (see ns_actorx.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "tree/actorx/ns_actorx.h"

enum tree_open_fail ax_mount(struct asset *as, bool anim, char *why, size_t whylen)
{
	struct ax_ns *x = calloc(1, sizeof *x);
	enum rc r;

	if (!x) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	diag_init(&x->d);
	x->anim = anim;
	r = anim ? psa_index_open(&as->src, &x->psa, &x->d)
		 : psk_index_open(&as->src, &x->psk, &x->d);
	if (r != RC_OK) {
		snprintf(why, whylen, "%s: %s", anim ? "PSA" : "PSK",
			 x->d.n ? x->d.msg[0] : rc_str(r));
		/* RC_CORRUPT leaves the chunk table for callers that show it; this one does not. */
		if (r == RC_CORRUPT && anim)
			psa_index_free(&x->psa);
		else if (r == RC_CORRUPT)
			psk_index_free(&x->psk);
		diag_free(&x->d);
		free(x);
		if (r == RC_NOMEM)
			return TREE_FAIL_OTHER;
		if (r == RC_IO)
			return TREE_FAIL_OPEN;
		return r == RC_FORMAT ? TREE_FAIL_FORMAT : TREE_FAIL_DAMAGED;
	}
	x->chunks = anim ? &x->psa.chunks : &x->psk.chunks;
	x->bones = anim ? x->psa.bones : x->psk.bones;
	x->n_bones = anim ? x->psa.n_bones : x->psk.n_bones;
	as->priv = x;
	return TREE_FAIL_NONE;
}

void ax_unmount(struct asset *as)
{
	struct ax_ns *x = as->priv;

	if (!x)
		return;
	if (x->anim)
		psa_index_free(&x->psa);
	else
		psk_index_free(&x->psk);
	diag_free(&x->d);
	free(x->seq_canon);
	free(x->parents_from);
	free(x);
	as->priv = NULL;
}

void ax_vec(struct buf *out, const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		buf_putc(out, '\t');
		buf_f32txt(out, v[i]);
	}
}

void ax_info_head(const struct tctx *c, const char *format, struct buf *out)
{
	const struct ax_ns *x = ax_of(c);
	const struct psk_chunks *ch = x->chunks;

	buf_printf(out, "format: %s\nfile: ", format);
	buf_tsv_name(out, c->as->stem,
		     strlen(c->as->stem)); /* a name: one line whatever it holds */
	buf_printf(out, "\nsize: %llu\n", (unsigned long long)c->as->src.size);
	if (asset_source_changed(c->as))
		buf_puts(out, "source: changed since mount (views not yet read fail with EIO)\n");
	buf_printf(out, "type_flag: %d\nchunks: %zu\n", ch->n ? ch->v[0].type_flag : 0, ch->n);
	for (size_t i = 0; i < ch->n; i++) {
		const struct psk_chunk *k = &ch->v[i];

		buf_printf(out, "chunk %02zu: ", i);
		buf_tsv_name(out, k->id, sizeof k->id);
		buf_printf(out, " type_flag %d record_size %u count %u offset %llu%s\n",
			   k->type_flag, k->data_size, k->data_count, (unsigned long long)k->offset,
			   k->truncated ? " (truncated)" : "");
	}
}

/* ---- chunks/ ---- */

enum rc ax_list_chunks(const struct tctx *c, struct tlist *out)
{
	const struct psk_chunks *ch = ax_of(c)->chunks;

	for (size_t i = 0; i < ch->n && i <= TNODE_A_MAX; i++) {
		char id[NAME_COMPONENT_MAX + 1];

		name_component(ch->v[i].id, sizeof ch->v[i].id, id);
		tlist_add(out, tn(AX_K_CHUNK, (uint32_t)i, 0), "%02zu.%s.bin", i, id);
	}
	return RC_OK;
}

enum rc ax_chunk_extent(const struct tctx *c, uint64_t *off, uint64_t *len)
{
	const struct psk_chunks *ch = ax_of(c)->chunks;

	if (c->self.a >= ch->n)
		return RC_NOENT;
	*off = ch->v[c->self.a].payload_off;
	*len = ch->v[c->self.a].payload_len;
	return RC_OK;
}

/* ---- skeleton/ ---- */

enum rc ax_list_skel(const struct tctx *c, struct tlist *out)
{
	(void)c;
	tlist_add(out, tn(AX_K_BONES_TSV, 0, 0), "bones.tsv");
	tlist_add(out, tn(AX_K_NAMES, 0, 0), "names.txt");
	tlist_add(out, tn(AX_K_BONES, 0, 0), "bones");
	return RC_OK;
}

enum rc ax_list_bones(const struct tctx *c, struct tlist *out)
{
	const struct ax_ns *x = ax_of(c);

	for (size_t i = 0; i < x->n_bones && i <= TNODE_A_MAX; i++) {
		char nm[NAME_COMPONENT_MAX + 1];

		name_component(x->bones[i].name, PSK_NAME_LEN, nm);
		tlist_add(out, tn(AX_K_BONE, (uint32_t)i, 0), "%03zu.%s.txt", i, nm);
	}
	return RC_OK;
}

static enum rc print_bone_row(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct psk_bone *bn = &((const struct ax_ns *)ctx)->bones[i];

	(void)rec;
	buf_printf(b, "%llu\t", (unsigned long long)i);
	buf_tsv_name(b, bn->name, PSK_NAME_LEN);
	buf_printf(b, "\t%d", bn->parent);
	ax_vec(b, bn->pos, 3);
	ax_vec(b, bn->rot, 4);
	buf_putc(b, '\n');
	return RC_OK;
}

static enum rc print_name_row(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	(void)rec;
	buf_tsv_name(b, ((const struct ax_ns *)ctx)->bones[i].name, PSK_NAME_LEN);
	buf_putc(b, '\n');
	return RC_OK;
}

static struct rows bone_rows(const struct tctx *c, bool names)
{
	const struct ax_ns *x = ax_of(c);
	struct rows t = {names ? NULL : "index\tname\tparent\tpx\tpy\tpz\tqx\tqy\tqz\tqw\n",
			 x->n_bones,
			 0,
			 NULL,
			 names ? print_name_row : print_bone_row,
			 x};

	return t;
}

enum rc ax_bones_tsv_layout(const struct tctx *c, struct layout_build *lb)
{
	struct rows t = bone_rows(c, false);

	view_rows_layout(&t, lb);
	return RC_OK;
}

enum rc ax_bones_tsv(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	struct rows t = bone_rows(c, false);

	(void)part;
	return view_rows_render(&t, first, e);
}

enum rc ax_names_layout(const struct tctx *c, struct layout_build *lb)
{
	struct rows t = bone_rows(c, true);

	view_rows_layout(&t, lb);
	return RC_OK;
}

enum rc ax_names(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	struct rows t = bone_rows(c, true);

	(void)part;
	return view_rows_render(&t, first, e);
}

static void bone_ref(struct buf *out, const struct psk_bone *b, size_t n, int64_t i)
{
	if (i < 0 || (uint64_t)i >= n) {
		buf_printf(out, "%lld (none)", (long long)i);
		return;
	}
	buf_printf(out, "%lld ", (long long)i);
	buf_tsv_name(out, b[i].name, PSK_NAME_LEN);
}

static void floats(struct buf *out, const char *label, const float *v, int n)
{
	buf_puts(out, label);
	for (int k = 0; k < n; k++) {
		buf_putc(out, ' ');
		buf_f32txt(out, v[k]);
	}
}

enum rc ax_bone_txt(const struct tctx *c, const size_t *bone_points, struct emit *e)
{
	const struct ax_ns *x = ax_of(c);
	const struct psk_bone *b = x->bones, *bn;
	struct buf *out = &e->b;
	size_t i = c->self.a, n = x->n_bones, kids = 0;

	if (i >= n)
		return RC_NOENT;
	bn = &b[i];
	buf_printf(out, "index: %zu\nname: ", i);
	buf_tsv_name(out, bn->name, PSK_NAME_LEN);
	buf_puts(out, "\nparent: ");
	if (i == 0 && (bn->parent == 0 || bn->parent == -1))
		buf_printf(out, "%d (root)", bn->parent);
	else
		bone_ref(out, b, n, bn->parent);
	buf_puts(out, "\nchildren:");
	for (size_t j = 1; j < n; j++) {
		if (j != i && b[j].parent >= 0 && (size_t)b[j].parent == i) {
			buf_puts(out, kids++ ? ", " : " ");
			bone_ref(out, b, n, (int64_t)j);
		}
	}
	buf_printf(out, "\nchild_count: %zu\nnum_children_stored: %d\nflags: 0x%08X\n", kids,
		   bn->num_children, bn->flags);
	floats(out, "position:", bn->pos, 3);
	floats(out, "\nquaternion_xyzw:", bn->rot, 4);
	buf_puts(out, i == 0 ? " (root: stored as the rotation itself)\n"
			     : " (child: stored conjugated)\n");
	buf_puts(out, "length: ");
	buf_f32txt(out, bn->length);
	floats(out, "\nsize:", bn->size, 3);
	buf_putc(out, '\n');
	if (bone_points)
		buf_printf(out, "weighted_points: %zu\n", bone_points[i]);
	emit_item(e);
	return RC_OK;
}

/* ---- errors.txt: what the index found; the source's state last ---- */

static enum rc print_diag_row(const void *ctx, uint64_t i, const void *rec, struct buf *b)
{
	const struct diag *d = ctx;

	(void)rec;
	if (i < d->n)
		buf_printf(b, "%s\n", d->msg[i]);
	else
		buf_printf(b, "... %zu more problems not listed\n", d->dropped);
	return RC_OK;
}

static struct rows diag_rows(const struct diag *d)
{
	struct rows t = {NULL, d->n + (d->dropped != 0), 0, NULL, print_diag_row, d};

	return t;
}

/* The lines the index found, then (once the source changed) a line saying so. */
enum rc ax_errors_layout(const struct tctx *c, struct layout_build *lb)
{
	struct rows t = diag_rows(&ax_of(c)->d);

	view_rows_layout(&t, lb);
	if (asset_source_changed(c->as))
		layout_var(lb, 1);
	return RC_OK;
}

enum rc ax_errors(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	struct rows t = diag_rows(&ax_of(c)->d);

	if (part == 1) {
		buf_puts(&e->b, "source: changed since mount; views not yet read fail with EIO\n");
		emit_item(e);
		return RC_OK;
	}
	return view_rows_render(&t, first, e);
}
