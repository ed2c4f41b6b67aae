/* Shared PSK/PSA namespace pieces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psgfs/names.h"
#include "tree/actorx.h"

enum tree_open_fail actorx_mount(struct tree *t, enum psk_kind want, tree_load_fn decode, char *why,
				 size_t whylen)
{
	struct actorx_mount *m = calloc(1, sizeof *m);
	enum rc r;

	if (!m) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	diag_init(&m->scan_diag);
	r = psk_scan(&t->src, &m->chunks, &m->scan_diag);
	if (r == RC_OK && m->chunks.kind != want)
		r = RC_FORMAT;
	if (r != RC_OK) {
		snprintf(why, whylen, "%s: %s", want == PSK_KIND_MESH ? "PSK" : "PSA",
			 m->scan_diag.n ? m->scan_diag.msg[0] : rc_str(r));
		psk_chunks_free(&m->chunks);
		diag_free(&m->scan_diag);
		free(m);
		if (r == RC_NOMEM)
			return TREE_FAIL_OTHER;
		if (r == RC_IO)
			return TREE_FAIL_OPEN;
		return r == RC_FORMAT ? TREE_FAIL_FORMAT : TREE_FAIL_DAMAGED;
	}
	m->decode = decode;
	m->what = want == PSK_KIND_MESH ? "mesh" : "animation";
	t->priv = m;
	return TREE_FAIL_NONE;
}

struct actorx_decoded *actorx_get(struct tree *t, enum rc *r)
{
	const struct actorx_mount *m = t->priv;

	return tree_memo_perm(t, 0, m->decode, r);
}

enum rc actorx_slurp(struct tree *t, uint8_t **file)
{
	enum rc r = src_dup(&t->src, 0, (size_t)t->src.size, file);

	return r == RC_OK || r == RC_NOMEM ? r : RC_IO;
}

void actorx_unmount(struct tree *t)
{
	struct actorx_mount *m = t->priv;

	if (!m)
		return;
	psk_chunks_free(&m->chunks);
	diag_free(&m->scan_diag);
	free(m);
	t->priv = NULL;
}

bool actorx_has_chunk(const struct tree *t, const char *ids)
{
	const struct actorx_mount *m = t->priv;

	for (size_t i = 0; i < m->chunks.n; i++) {
		const char *id = m->chunks.v[i].id, *p = ids;
		size_t n = strlen(id);

		if (m->chunks.v[i].data_count == 0)
			continue;
		while (*p) {
			size_t k = strcspn(p, "|");

			if (k == n && strncmp(p, id, k) == 0)
				return true;
			p += k + (p[k] == '|');
		}
	}
	return false;
}

enum rc actorx_list_chunks_dir(struct tree *t, struct tnode self, struct tlist *out)
{
	const struct actorx_mount *m = t->priv;

	(void)self;
	for (size_t i = 0; i < m->chunks.n && i < UINT32_MAX; i++) {
		char id[NAME_COMPONENT_MAX + 1];

		name_component(m->chunks.v[i].id, sizeof m->chunks.v[i].id, id);
		tlist_add(out, tn(AX_K_CHUNK, (uint32_t)i, 0), "%02zu.%s.bin", i, id);
	}
	return RC_OK;
}

enum rc actorx_list_skel(struct tree *t, struct tnode self, struct tlist *out)
{
	(void)t;
	(void)self;
	tlist_add(out, tn(AX_K_BONES_TSV, 0, 0), "bones.tsv");
	tlist_add(out, tn(AX_K_NAMES, 0, 0), "names.txt");
	tlist_add(out, tn(AX_K_BONES, 0, 0), "bones");
	return RC_OK;
}

enum rc actorx_chunk_extent(struct tree *t, struct tnode self, uint64_t *off, uint64_t *len)
{
	const struct actorx_mount *m = t->priv;

	if (self.a >= m->chunks.n)
		return RC_NOENT;
	*off = m->chunks.v[self.a].payload_off;
	*len = m->chunks.v[self.a].payload_len;
	return RC_OK;
}

void actorx_print_name(struct buf *out, const uint8_t name[PSK_NAME_LEN])
{
	buf_tsv_name(out, name, PSK_NAME_LEN);
}

void actorx_vec(struct buf *out, const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		buf_putc(out, '\t');
		buf_f32txt(out, v[i]);
	}
}

enum rc actorx_list_bones_dir(struct tree *t, struct tnode self, struct tlist *out)
{
	enum rc r;
	const struct actorx_decoded *x = actorx_get(t, &r);

	(void)self;
	if (!x)
		return r;
	for (size_t i = 0; i < x->n_bones && i < UINT32_MAX; i++) {
		char nm[NAME_COMPONENT_MAX + 1];

		name_component(x->bones[i].name, PSK_NAME_LEN, nm);
		tlist_add(out, tn(AX_K_BONE, (uint32_t)i, 0), "%03zu.%s.txt", i, nm);
	}
	return RC_OK;
}

static void bones_tsv(const struct psk_bone *b, size_t n, struct buf *out)
{
	buf_puts(out, "index\tname\tparent\tpx\tpy\tpz\tqx\tqy\tqz\tqw\n");
	for (size_t i = 0; i < n; i++) {
		buf_printf(out, "%zu\t", i);
		actorx_print_name(out, b[i].name);
		buf_printf(out, "\t%d", b[i].parent);
		actorx_vec(out, b[i].pos, 3);
		actorx_vec(out, b[i].rot, 4);
		buf_putc(out, '\n');
	}
}

static void names_txt(const struct psk_bone *b, size_t n, struct buf *out)
{
	for (size_t i = 0; i < n; i++) {
		actorx_print_name(out, b[i].name);
		buf_putc(out, '\n');
	}
}

static void bone_ref(struct buf *out, const struct psk_bone *b, size_t n, int64_t i)
{
	if (i < 0 || (uint64_t)i >= n) {
		buf_printf(out, "%lld (none)", (long long)i);
		return;
	}
	buf_printf(out, "%lld ", (long long)i);
	actorx_print_name(out, b[i].name);
}

static enum rc bone_txt(const struct psk_bone *b, size_t n, size_t i, const size_t *point_counts,
			struct buf *out)
{
	const struct psk_bone *x;
	size_t kids = 0;

	if (i >= n)
		return RC_NOENT;
	x = &b[i];
	buf_printf(out, "index: %zu\nname: ", i);
	actorx_print_name(out, x->name);
	buf_puts(out, "\nparent: ");
	if (i == 0 && (x->parent == 0 || x->parent == -1))
		buf_printf(out, "%d (root)", x->parent);
	else
		bone_ref(out, b, n, x->parent);
	buf_puts(out, "\nchildren:");
	for (size_t j = 1; j < n; j++) {
		if (j != i && b[j].parent >= 0 && (size_t)b[j].parent == i) {
			buf_puts(out, kids++ ? ", " : " ");
			bone_ref(out, b, n, (int64_t)j);
		}
	}
	buf_printf(out, "\nchild_count: %zu\nnum_children_stored: %d\nflags: 0x%08X\n", kids,
		   x->num_children, x->flags);
	buf_puts(out, "position:");
	for (int k = 0; k < 3; k++) {
		buf_putc(out, ' ');
		buf_f32txt(out, x->pos[k]);
	}
	buf_puts(out, "\nquaternion_xyzw:");
	for (int k = 0; k < 4; k++) {
		buf_putc(out, ' ');
		buf_f32txt(out, x->rot[k]);
	}
	buf_puts(out, i == 0 ? " (root: stored as the rotation itself)\n"
			     : " (child: stored conjugated)\n");
	buf_puts(out, "length: ");
	buf_f32txt(out, x->length);
	buf_puts(out, "\nsize:");
	for (int k = 0; k < 3; k++) {
		buf_putc(out, ' ');
		buf_f32txt(out, x->size[k]);
	}
	buf_putc(out, '\n');
	if (point_counts)
		buf_printf(out, "weighted_points: %zu\n", point_counts[i]);
	return RC_OK;
}

static void errors_txt(const struct diag *d, struct buf *out)
{
	for (size_t i = 0; i < d->n; i++) {
		buf_puts(out, d->msg[i]);
		buf_putc(out, '\n');
	}
	if (d->dropped)
		buf_printf(out, "... %zu more problems not listed\n", d->dropped);
}

void actorx_chunks_info(const struct tree *t, struct buf *out)
{
	const struct actorx_mount *m = t->priv;

	buf_printf(out, "type_flag: %d\nchunks: %zu\n", m->chunks.n ? m->chunks.v[0].type_flag : 0,
		   m->chunks.n);
	for (size_t i = 0; i < m->chunks.n; i++) {
		const struct psk_chunk *c = &m->chunks.v[i];

		buf_printf(out, "chunk %02zu: ", i);
		buf_tsv_name(out, c->id, sizeof c->id);
		buf_printf(out, " type_flag %d record_size %u count %u offset %llu%s\n",
			   c->type_flag, c->data_size, c->data_count, (unsigned long long)c->offset,
			   c->truncated ? " (truncated)" : "");
	}
}

enum rc actorx_render_errors(struct tree *t, struct tnode self, struct buf *out)
{
	const struct actorx_mount *m = t->priv;
	enum rc r;
	const struct actorx_decoded *x = actorx_get(t, &r);

	(void)self;
	if (!x) {
		/* The file could not be decoded at all: say why, after what the scan found. */
		errors_txt(&m->scan_diag, out);
		buf_printf(out, "%s: cannot decode: %s\n", m->what, rc_str(r));
		return RC_OK;
	}
	errors_txt(&x->d, out);
	return RC_OK;
}

enum rc actorx_render_bones_tsv(struct tree *t, struct tnode self, struct buf *out)
{
	enum rc r;
	const struct actorx_decoded *x = actorx_get(t, &r);

	(void)self;
	if (!x)
		return r;
	bones_tsv(x->bones, x->n_bones, out);
	return RC_OK;
}

enum rc actorx_render_names(struct tree *t, struct tnode self, struct buf *out)
{
	enum rc r;
	const struct actorx_decoded *x = actorx_get(t, &r);

	(void)self;
	if (!x)
		return r;
	names_txt(x->bones, x->n_bones, out);
	return RC_OK;
}

enum rc actorx_render_bone(struct tree *t, struct tnode self, struct buf *out)
{
	enum rc r;
	const struct actorx_decoded *x = actorx_get(t, &r);

	if (!x)
		return r;
	return bone_txt(x->bones, x->n_bones, self.a, x->bone_points, out);
}
