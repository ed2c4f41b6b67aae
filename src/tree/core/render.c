/*
 * Streamed rendering. A file is a layout of parts, each a run of items (include/psgfs/base/emit.h);
 * its size is arithmetic for fixed-size items and one counting pass for the others, which also
 * leaves checkpoints. Any byte range is then rendered piece by piece (TREE_PIECE bytes, aligned)
 * from the nearest item start, and pieces live in the shared cache like everything else: memory
 * is bounded by the cache budget plus the pieces being rendered, whatever the file size.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "tree/core/tree_int.h"

/* A checkpoint at the item holding each piece boundary: a piece's window renders at most the
 * one item it starts inside before the bytes it wants. */
#define CP_EVERY   TREE_PIECE
#define TRIM_SHIFT 22 /* malloc_trim after every 4 MiB rendered */

/* ---- layouts ---- */

static struct layout_part *lb_next(struct layout_build *lb)
{
	struct layout_part *p = lb->oom ? NULL : xgrow_n(lb->parts, lb->n, &lb->cap, sizeof *p, 8);

	if (!p) {
		lb->oom = true;
		return NULL;
	}
	lb->parts = p;
	memset(&lb->parts[lb->n], 0, sizeof lb->parts[lb->n]);
	return &lb->parts[lb->n++];
}

void layout_fixed(struct layout_build *lb, uint64_t n_items, uint32_t item_size)
{
	struct layout_part *p = lb_next(lb);

	if (!p)
		return;
	p->n_items = n_items;
	p->item_size = item_size;
	if (!mul_ok(n_items, item_size, &p->size))
		lb->oom = true;
}

void layout_var(struct layout_build *lb, uint64_t n_items)
{
	struct layout_part *p = lb_next(lb);

	if (p)
		p->n_items = n_items;
}

static void layout_free(void *p)
{
	struct layout *l = p;

	for (unsigned i = 0; i < l->n_parts; i++)
		free(l->parts[i].cp);
	free(l->parts);
	free(l);
}

static const struct tree_kind *kind_of(struct asset *as, struct tnode n)
{
	return n.kind < as->fmt->n_kinds ? &as->fmt->kinds[n.kind] : NULL;
}

/* The kind's need, pinned; ctx filled. */
static enum rc ctx_open(struct asset *as, tree_ino ino, struct tnode n, struct tctx *c,
			struct cache_ent **ent)
{
	const struct tree_kind *k = kind_of(as, n);
	enum rc r = RC_OK;

	*ent = NULL;
	c->as = as;
	c->self = n;
	c->ino = ino;
	c->need = NULL;
	if (!k)
		return RC_NOENT;
	if (k->need) {
		c->need = asset_need(as, k->need, n.a, ent, &r);
		if (!c->need)
			return r;
	}
	return RC_OK;
}

/* One counting pass over a variable part: its size and checkpoints. */
static enum rc count_part(const struct tree_kind *k, const struct tctx *c, unsigned part,
			  struct layout_part *p)
{
	struct emit e;
	enum rc r;

	emit_init_count_phase(&e, CP_EVERY, p->off);
	r = k->render(c, part, 0, &e);
	if (r == RC_OK && e.b.oom)
		r = RC_NOMEM;
	if (r == RC_OK) {
		p->size = e.b.len;
		/* Kept as long as the layout: cut to length, so it is charged what it holds. */
		p->cp = xshrink_n(e.cp, e.n_cp, sizeof *e.cp);
		p->n_cp = (uint32_t)e.n_cp;
		e.cp = NULL;
	}
	emit_free(&e);
	return r;
}

struct layout_arg {
	struct asset *as;
	tree_ino ino;
	struct tnode n;
};

static enum rc build_layout(const struct layout_arg *la, struct layout **out, size_t *bytes)
{
	const struct tree_kind *k = kind_of(la->as, la->n);
	struct layout_build lb = {0};
	struct cache_ent *nent;
	struct layout *l;
	struct tctx c;
	enum rc r;

	r = ctx_open(la->as, la->ino, la->n, &c, &nent);
	if (r != RC_OK)
		return r;
	if (k->layout)
		r = k->layout(&c, &lb);
	else
		layout_var(&lb, 1);
	l = calloc(1, sizeof *l);
	if (r == RC_OK && (lb.oom || !l))
		r = RC_NOMEM;
	if (r == RC_OK) {
		l->parts = xshrink_n(lb.parts, lb.n, sizeof *lb.parts);
		l->n_parts = lb.n;
		lb.parts = NULL;
		*bytes =
		    cache_heap_cost(sizeof *l) + cache_heap_cost(l->n_parts * sizeof *l->parts);
		for (unsigned i = 0; i < l->n_parts && r == RC_OK; i++) {
			struct layout_part *p = &l->parts[i];

			p->off = l->size; /* before the count: its checkpoints follow the pieces */
			if (p->item_size == 0 && p->n_items) {
				r = count_part(k, &c, i, p);
				if (p->n_cp)
					*bytes += cache_heap_cost(p->n_cp * sizeof *p->cp);
			}
			if (r == RC_OK && !add_ok(l->size, p->size, &l->size))
				r = RC_BOUNDS;
		}
	}
	asset_unpin(la->as, nent);
	free(lb.parts);
	if (r != RC_OK) {
		if (l)
			layout_free(l);
		return r;
	}
	*out = l;
	return RC_OK;
}

static enum rc load_layout(struct asset *as, uint64_t arg, void **data, size_t *bytes,
			   void (**dtor)(void *))
{
	const struct layout_arg *la = (const struct layout_arg *)(uintptr_t)arg;
	struct layout *l;
	enum rc r;

	(void)as;
	r = build_layout(la, &l, bytes);
	if (r != RC_OK)
		return r;
	*data = l;
	*dtor = layout_free;
	return RC_OK;
}

/* Layout memo keyed by the inode (not the asset opening): it holds offsets only. Status
 * files get a fresh one each time (*own set: the caller frees it). */
static const struct layout *layout_get(struct asset *as, tree_ino ino, struct tnode n,
				       struct cache_ent **ent, struct layout **own, enum rc *r)
{
	struct layout_arg la = {as, ino, n};
	size_t bytes;

	*own = NULL;
	*ent = NULL;
	if (kind_of(as, n) && kind_of(as, n)->status) {
		*r = build_layout(&la, own, &bytes);
		return *own;
	}
	return asset_memo_key(as, cache_key(ino, KEY_WHAT(KEY_LAYOUT, as->epoch)), load_layout,
			      (uint64_t)(uintptr_t)&la, ent, r);
}

/* A node the format says has another node's bytes is sized and rendered as that node. */
static void canon_node(struct asset *as, tree_ino *ino, struct tnode *n)
{
	struct tnode c;

	if (as->fmt->same_as && as->fmt->same_as(as, *n, &c)) {
		*n = c;
		*ino = (*ino & ~(tree_ino)UINT32_MAX) | tnode_pack(c);
	}
}

enum rc render_size(struct asset *as, tree_ino ino, struct tnode n, uint64_t *size)
{
	struct cache_ent *ent;
	struct layout *own;
	const struct layout *l;
	enum rc r;

	canon_node(as, &ino, &n);
	l = layout_get(as, ino, n, &ent, &own, &r);
	if (!l)
		return r;
	*size = l->size;
	asset_unpin(as, ent);
	if (own)
		layout_free(own);
	return RC_OK;
}

bool render_size_known(struct asset *as, tree_ino ino, struct tnode n, uint64_t *size)
{
	const struct tree_kind *k = kind_of(as, n);
	struct cache_ent *ent;
	const struct layout *l;

	if (!k)
		return false;
	if (k->cheap || k->status)
		return render_size(as, ino, n, size) == RC_OK;
	canon_node(as, &ino, &n);
	l = asset_memo_peek(as, cache_key(ino, KEY_WHAT(KEY_LAYOUT, as->epoch)), &ent);
	if (!l)
		return false;
	*size = l->size;
	asset_unpin(as, ent);
	return true;
}

/* ---- pieces ---- */

struct piece {
	uint8_t *p;
	size_t len;
	bool mapped; /* p came from mmap */
};

/*
 * Cached pieces live as long as the LRU keeps them and are freed in LRU order, not in the
 * order they were made: from the heap they leave holes that RSS keeps (a64M at 16M cache,
 * reading every file: 15 MB held free). Large ones are mapped instead and go back to the
 * system at once; the short-lived buffers a render uses stay on the fast heap.
 */
#define PIECE_MAP_MIN (64u << 10)

static uint8_t *piece_alloc(size_t len, bool *mapped)
{
	void *p;

	*mapped = false;
	if (len >= PIECE_MAP_MIN) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p != MAP_FAILED) {
			*mapped = true;
			return p;
		}
	}
	return malloc(len ? len : 1);
}

/* What a piece holds: its struct, and its bytes on the heap or in whole pages. */
static size_t piece_cost(const struct piece *pc)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return cache_heap_cost(sizeof *pc) +
	       (pc->mapped ? (pc->len + page - 1) / page * page : cache_heap_cost(pc->len));
}

static void piece_free(void *v)
{
	struct piece *pc = v;

	if (pc->mapped)
		munmap(pc->p, pc->len);
	else
		free(pc->p);
	free(pc);
}

/* The first item of part p to render for byte `at` of the part, and where it starts. */
static void part_seek(const struct layout_part *p, uint64_t at, uint64_t *item, uint64_t *start)
{
	size_t lo = 0, hi = p->n_cp;

	if (p->item_size) {
		*item = at / p->item_size;
		*start = *item * p->item_size;
		return;
	}
	*item = 0;
	*start = 0;
	while (lo < hi) { /* last checkpoint at or before `at` */
		size_t mid = lo + (hi - lo) / 2;

		if (p->cp[mid].off <= at) {
			*item = p->cp[mid].item;
			*start = p->cp[mid].off;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
}

/* Render [at, at+len) of part i into dst. */
static enum rc render_span(const struct tree_kind *k, const struct tctx *c,
			   const struct layout_part *p, unsigned i, uint64_t at, size_t len,
			   uint8_t *dst)
{
	uint64_t item, start;
	struct emit e;
	enum rc r;
	size_t skip;

	part_seek(p, at, &item, &start);
	skip = (size_t)(at - start);
	emit_init_window(&e, item, skip + len);
	r = k->render(c, i, item, &e);
	if (r == RC_OK && e.b.oom)
		r = RC_NOMEM;
	/* A render that disagrees with its own count is a decoder bug or a changed source. */
	if (r == RC_OK && e.b.len < skip + len)
		r = RC_IO;
	if (r == RC_OK)
		memcpy(dst, e.b.data + skip, len);
	emit_free(&e);
	return r;
}

static enum rc render_piece(struct asset *as, tree_ino ino, struct tnode n, const struct layout *l,
			    uint64_t idx, struct piece **out)
{
	const struct tree_kind *k = kind_of(as, n);
	uint64_t lo = idx * TREE_PIECE, hi = lo + TREE_PIECE;
	struct cache_ent *nent;
	struct piece *pc;
	struct tctx c;
	enum rc r;

	if (hi > l->size)
		hi = l->size;
	pc = calloc(1, sizeof *pc);
	if (pc)
		pc->p = piece_alloc((size_t)(hi - lo), &pc->mapped);
	if (!pc || !pc->p) {
		if (pc)
			free(pc);
		return RC_NOMEM;
	}
	pc->len = (size_t)(hi - lo);
	r = ctx_open(as, ino, n, &c, &nent);
	for (unsigned i = 0; i < l->n_parts && r == RC_OK; i++) {
		const struct layout_part *p = &l->parts[i];
		uint64_t a = p->off > lo ? p->off : lo,
			 b = p->off + p->size < hi ? p->off + p->size : hi;

		if (a < b)
			r = render_span(k, &c, p, i, a - p->off, (size_t)(b - a), pc->p + (a - lo));
	}
	asset_unpin(as, nent);
	atomic_fetch_add(&as->t->renders, 1);
	if (r != RC_OK) {
		atomic_fetch_add(&as->t->render_failures, 1);
		piece_free(pc);
		return r;
	}
	*out = pc;
	return RC_OK;
}

static const struct piece *piece_get(struct asset *as, tree_ino ino, struct tnode n,
				     const struct layout *l, uint64_t idx, struct cache_ent **ent,
				     enum rc *r)
{
	struct cache *c = as->t->cache;
	struct cache_key key = cache_key(ino, KEY_WHAT(KEY_PIECE, (uint64_t)as->epoch << 40 | idx));
	bool status = kind_of(as, n)->status;
	struct piece *pc = status ? NULL : cache_get(c, key, ent);
	uint64_t before;

	if (pc)
		return pc;
	if (status) { /* rendered for this read only: a detached entry, freed at unpin */
		*r = render_piece(as, ino, n, l, idx, &pc);
		if (*r != RC_OK)
			return NULL;
		pc = cache_put_detached(c, pc, piece_cost(pc), piece_free, ent);
		if (!pc)
			*r = RC_NOMEM;
		return pc;
	}
	if (asset_source_changed(as)) {
		/* Nothing new is derived from a changed source (see asset_source_changed). */
		*r = RC_IO;
		return NULL;
	}
	*r = render_piece(as, ino, n, l, idx, &pc);
	if (*r != RC_OK)
		return NULL;
	/* Freed pages stay with malloc's arenas until trimmed, which would let RSS grow past
	 * the cache budget as pieces are evicted. */
	before = atomic_fetch_add(&as->t->render_bytes, pc->len);
	if ((before ^ (before + pc->len)) >> TRIM_SHIFT)
		malloc_trim(0);
	pc = cache_put(c, key, pc, piece_cost(pc), piece_free, ent);
	if (!pc)
		*r = RC_NOMEM;
	return pc;
}

/* Copy what does not fit the view's slots into one owned buffer instead. */
static enum rc rdv_flatten(struct tree_rdv *v)
{
	uint8_t *p = malloc(v->total ? v->total : 1);
	size_t at = 0;

	if (!p)
		return RC_NOMEM;
	for (unsigned i = 0; i < v->n; i++) {
		memcpy(p + at, v->base[i], v->len[i]);
		at += v->len[i];
	}
	for (unsigned i = 0; i < v->n_pin; i++)
		cache_unpin(v->t->cache, v->pin[i]);
	v->n_pin = 0;
	v->own = p;
	v->base[0] = p;
	v->len[0] = v->total;
	v->n = 1;
	return RC_OK;
}

enum rc render_read(struct asset *as, tree_ino ino, struct tnode n, uint64_t off, size_t len,
		    struct tree_rdv *v)
{
	struct cache_ent *lent;
	struct layout *own;
	const struct layout *l;
	enum rc r = RC_OK;

	canon_node(as, &ino, &n);
	l = layout_get(as, ino, n, &lent, &own, &r);
	if (!l)
		return r;
	if (off >= l->size)
		len = 0;
	else if (len > l->size - off)
		len = (size_t)(l->size - off);
	while (len && r == RC_OK) {
		uint64_t idx = off / TREE_PIECE;
		size_t in = (size_t)(off - idx * TREE_PIECE), take;
		struct cache_ent *pent;
		const struct piece *pc = piece_get(as, ino, n, l, idx, &pent, &r);

		if (!pc)
			break;
		take = pc->len - in < len ? pc->len - in : len;
		if (v->n == TREE_RDV_MAX && (r = rdv_flatten(v)) != RC_OK) {
			cache_unpin(as->t->cache, pent);
			break;
		}
		if (v->own) { /* already flattened: append by copy */
			uint8_t *p = realloc(v->own, v->total + take);

			if (!p) {
				cache_unpin(as->t->cache, pent);
				r = RC_NOMEM;
				break;
			}
			memcpy(p + v->total, pc->p + in, take);
			v->own = p;
			v->base[0] = p;
			v->len[0] = v->total + take;
			cache_unpin(as->t->cache, pent);
		} else {
			v->base[v->n] = pc->p + in;
			v->len[v->n++] = take;
			v->pin[v->n_pin++] = pent;
		}
		v->total += take;
		off += take;
		len -= take;
	}
	asset_unpin(as, lent);
	if (own)
		layout_free(own);
	return r;
}
