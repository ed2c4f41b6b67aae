/* Shared PSK/PSA namespace pieces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/bytes.h"
#include "psgfs/names.h"
#include "tree/actorx.h"

enum tree_open_fail actorx_mount(struct tree *t, enum psk_kind want, char *why, size_t whylen)
{
	struct actorx_mount *m = calloc(1, sizeof *m);
	enum psg_result r;

	if (!m) {
		snprintf(why, whylen, "out of memory");
		return TREE_FAIL_OTHER;
	}
	diag_init(&m->scan_diag);
	r = psk_scan(&t->src, &m->chunks, &m->scan_diag);
	if (r == PSG_OK && m->chunks.kind != want)
		r = PSG_ERR_FORMAT;
	if (r != PSG_OK) {
		snprintf(why, whylen, "%s: %s", want == PSK_KIND_MESH ? "PSK" : "PSA",
			 m->scan_diag.n ? m->scan_diag.msg[0] : psg_result_str(r));
		psk_chunks_free(&m->chunks);
		diag_free(&m->scan_diag);
		free(m);
		if (r == PSG_ERR_NOMEM)
			return TREE_FAIL_OTHER;
		if (r == PSG_ERR_IO)
			return TREE_FAIL_OPEN;
		return r == PSG_ERR_FORMAT ? TREE_FAIL_FORMAT : TREE_FAIL_DAMAGED;
	}
	t->priv = m;
	return TREE_FAIL_NONE;
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

void actorx_list_chunks(struct tree *t, struct tlist *out, uint16_t chunk_kind)
{
	const struct actorx_mount *m = t->priv;

	for (size_t i = 0; i < m->chunks.n && i < UINT32_MAX; i++) {
		char id[NAME_COMPONENT_MAX + 1];

		name_component(m->chunks.v[i].id, sizeof m->chunks.v[i].id, id);
		tlist_add(out, tn(chunk_kind, (uint32_t)i, 0), "%02zu.%s.bin", i, id);
	}
}

enum psg_result actorx_chunk_extent(struct tree *t, struct tnode self, uint64_t *off, uint64_t *len)
{
	const struct actorx_mount *m = t->priv;

	if (self.a >= m->chunks.n)
		return PSG_ERR_NOENT;
	*off = m->chunks.v[self.a].payload_off;
	*len = m->chunks.v[self.a].payload_len;
	return PSG_OK;
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

void actorx_list_bones(struct tree *t, const struct psk_bone *b, size_t n, struct tlist *out,
		       uint16_t bone_kind)
{
	(void)t;
	for (size_t i = 0; i < n && i < UINT32_MAX; i++) {
		char nm[NAME_COMPONENT_MAX + 1];

		name_component(b[i].name, PSK_NAME_LEN, nm);
		tlist_add(out, tn(bone_kind, (uint32_t)i, 0), "%03zu.%s.txt", i, nm);
	}
}

void actorx_bones_tsv(const struct psk_bone *b, size_t n, struct buf *out)
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

void actorx_names_txt(const struct psk_bone *b, size_t n, struct buf *out)
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

enum psg_result actorx_bone_txt(const struct psk_bone *b, size_t n, size_t i,
				const size_t *point_counts, struct buf *out)
{
	const struct psk_bone *x;
	size_t kids = 0;

	if (i >= n)
		return PSG_ERR_NOENT;
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
	return PSG_OK;
}

void actorx_errors_txt(const struct diag *d, struct buf *out)
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
