/*
 * Containers: what shows each slot of a mount (tree_int.h, struct container_ops). Ranges of
 * slots are registered as their container makes them (an archive's nodes when it is first
 * listed, the temporaries of texture mods at mount); every other slot belongs to the base
 * container, the mounted folder or the single asset. The core and the format namespaces ask
 * through here, so none of them names a container's functions.
 */
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/bytes.h"
#include "tree/core/tree_int.h"

struct crange {
	uint32_t first, last;
	const struct container_ops *ops;
	void *c;
};

bool container_at(struct tree *t, uint32_t slot, struct cref *out)
{
	size_t lo = 0, hi;

	memset(out, 0, sizeof *out);
	out->slot = slot;
	pthread_mutex_lock(&t->cont_mu);
	hi = t->n_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct crange *g = &t->ranges[mid];

		if (slot < g->first) {
			hi = mid;
		} else if (slot > g->last) {
			lo = mid + 1;
		} else {
			out->ops = g->ops;
			out->c = g->c;
			out->node = slot - g->first;
			break;
		}
	}
	if (!out->ops) {
		out->ops = t->base_ops;
		out->c = t->base_c;
		out->node = slot;
	}
	pthread_mutex_unlock(&t->cont_mu);
	return out->ops != NULL;
}

enum rc container_add(struct tree *t, uint32_t first, uint32_t last,
		      const struct container_ops *ops, void *c)
{
	struct crange *v;
	size_t at;

	if (last < first)
		return RC_INVAL;
	pthread_mutex_lock(&t->cont_mu);
	v = xgrow_n(t->ranges, t->n_ranges, &t->cap_ranges, sizeof *v, 8);
	if (!v) {
		pthread_mutex_unlock(&t->cont_mu);
		return RC_NOMEM;
	}
	t->ranges = v;
	/* Ranges are handed out ascending (archives); the temporaries sit at the top. */
	at = t->n_ranges;
	while (at > 0 && v[at - 1].first > first)
		at--;
	memmove(v + at + 1, v + at, (t->n_ranges - at) * sizeof *v);
	v[at] = (struct crange){first, last, ops, c};
	t->n_ranges++;
	pthread_mutex_unlock(&t->cont_mu);
	return RC_OK;
}

void container_set_base(struct tree *t, const struct container_ops *ops, void *c)
{
	pthread_mutex_lock(&t->cont_mu);
	t->base_ops = ops;
	t->base_c = c;
	pthread_mutex_unlock(&t->cont_mu);
}

void containers_free(struct tree *t)
{
	free(t->ranges);
	t->ranges = NULL;
	t->n_ranges = t->cap_ranges = 0;
}

/* ---- a slot's operations, through its container ---- */

enum cslot tree_slot_kind(struct tree *t, uint32_t slot)
{
	struct cref r;

	return container_at(t, slot, &r) && r.ops->kind ? r.ops->kind(t, &r) : CS_NONE;
}

bool tree_slot_entry_name(struct tree *t, uint32_t slot, uint32_t *parent, const char **name)
{
	struct cref r;

	return container_at(t, slot, &r) && r.ops->entry_name &&
	       r.ops->entry_name(t, &r, parent, name);
}

bool tree_slot_relpath(struct tree *t, uint32_t slot, char *out, size_t n)
{
	struct cref r;

	return container_at(t, slot, &r) && r.ops->relpath && r.ops->relpath(t, &r, out, n);
}

bool tree_slot_mountpath(struct tree *t, uint32_t slot, char *out, size_t n)
{
	struct cref r;

	return container_at(t, slot, &r) && r.ops->mountpath && r.ops->mountpath(t, &r, out, n);
}

uint32_t tree_slot_sibling(struct tree *t, uint32_t slot, const char *name)
{
	struct cref r;

	return container_at(t, slot, &r) && r.ops->sibling ? r.ops->sibling(t, &r, name) : 0;
}

size_t tree_slot_siblings(struct tree *t, uint32_t slot, uint32_t **out)
{
	struct cref r;

	*out = NULL;
	return container_at(t, slot, &r) && r.ops->siblings ? r.ops->siblings(t, &r, out) : 0;
}

enum rc tree_slot_list(struct tree *t, uint32_t slot, struct tlist *out)
{
	struct cref r;

	if (!container_at(t, slot, &r) || !r.ops->kind || r.ops->kind(t, &r) != CS_DIR)
		return RC_NOTDIR;
	return r.ops->list ? r.ops->list(t, &r, out) : RC_NOTDIR;
}

void tree_slot_reset(struct tree *t, uint32_t slot)
{
	struct cref r;

	if (container_at(t, slot, &r) && r.ops->reset)
		r.ops->reset(t, &r);
}

bool tree_ino_is_container(struct tree *t, tree_ino ino)
{
	struct cref r;

	if (!container_at(t, ino_slot(ino), &r))
		return false;
	return r.ops->own_nodes || ((uint32_t)ino == 1 && r.ops->getattr);
}
