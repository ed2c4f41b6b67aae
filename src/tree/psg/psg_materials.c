/*
 * A model's materials and the textures they name in the companion texture arena
 * (docs/skate-objects.md, "Material links to texture arenas"): each tRMaterial of every
 * RenderMaterialData, its channels, and for each texture channel the texture of
 * `<stem>_Textures.<ext>` whose TableOfContents GUID is the channel's GUID. In a folder mount
 * the companion is the sibling file of that name; in a single-file mount, the file beside the
 * source. Nothing here is fatal: what does not resolve is listed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/names.h"
#include "psgfs/formats/registry.h"
#include "tree/mount/guid_index.h"
#include "tree/psg/ns_psg.h"
#include "tree/psg/psg_materials.h"
#include "tree/psg/view_psg.h"

/* ---- the model's materials ---- */

static char *str_dup(const struct skate_str *s)
{
	return s->p ? strndup((const char *)s->p, s->len) : NULL;
}

static void material_free_one(struct psg_material *m)
{
	for (uint32_t c = 0; c < m->n_ch; c++) {
		free(m->ch[c].input);
		free(m->ch[c].stream);
		free(m->ch[c].texture);
		free(m->ch[c].own);
		free(m->ch[c].tex_arena);
		free(m->ch[c].tex_link);
		free(m->ch[c].tex_also);
	}
	free(m->ch);
}

void psg_materials_free(struct psg_materials *ms)
{
	if (!ms)
		return;
	for (uint32_t i = 0; i < ms->n; i++)
		material_free_one(&ms->v[i]);
	free(ms->v);
	free(ms->companion);
	free(ms);
}

/* A texture channel's link name: its input sanitised ("diffuse"); the tree core makes names
 * that collide after sanitising unique. */
static void channel_file(struct psg_channel *ch)
{
	const char *in = ch->input ? ch->input : "channel";

	name_component(in, strlen(in), ch->file);
}

/* The label of a material: its "Name" or "AttribulatorMaterialName" (a string, or the name of
 * the own TOC entry the GUID names), else "material". */
static void material_label(struct psg_material *m)
{
	static const char *const prefer[] = {"Name", "AttribulatorMaterialName"};
	const char *label = NULL;

	for (size_t p = 0; p < 2 && !label; p++)
		for (uint32_t c = 0; c < m->n_ch && !label; c++) {
			const struct psg_channel *ch = &m->ch[c];
			const char *v = ch->stream ? ch->stream : ch->own;

			if (v && *v && ch->input && !strcmp(ch->input, prefer[p]))
				label = v;
		}
	name_component(label ? label : "material", strlen(label ? label : "material"), m->label);
}

static enum rc add_material(struct psg_materials *ms, uint32_t rmd, const struct skate_rmd *d,
			    const struct skate_rmd_material *mt)
{
	struct psg_material *m = &ms->v[ms->n];
	uint32_t n = mt->channels_ok ? mt->num_channels : 0;

	memset(m, 0, sizeof *m);
	m->rmd = rmd;
	m->at = mt->at;
	if (n > d->n_channels - mt->first_channel)
		n = d->n_channels - mt->first_channel;
	m->ch = xcalloc_n(n ? n : 1, sizeof *m->ch);
	if (!m->ch)
		return RC_NOMEM;
	ms->n++;
	for (uint32_t c = 0; c < n; c++) {
		const struct skate_rmd_channel *src = &d->channels[mt->first_channel + c];
		struct psg_channel *ch = &m->ch[m->n_ch++];

		ch->own_entry = -1;
		ch->input = str_dup(&src->shader_input);
		ch->kind = (uint8_t)src->kind;
		ch->has_guid = src->has_guid;
		ch->guid = src->guid;
		ch->stream = src->kind == SKATE_UNION_STREAM ? str_dup(&src->stream_name) : NULL;
		memcpy(ch->constants, src->constants, sizeof ch->constants);
		channel_file(ch);
	}
	material_label(m);
	return RC_OK;
}

static enum rc add_rmd(const struct src *s, const struct arena *a, uint32_t i,
		       struct psg_materials *ms, size_t *cap)
{
	struct skate_rmd d;
	uint8_t *p = NULL;
	size_t len = 0;
	enum rc r = arena_read_object(s, a, i, &p, &len);

	if (r != RC_OK)
		return RC_OK; /* errors.txt lists unreadable objects already */
	r = skate_rmd_decode(a, i, p, len, &d, NULL);
	if (r != RC_OK) {
		free(p);
		return r == RC_NOMEM ? r : RC_OK;
	}
	for (uint32_t k = 0; k < d.n_materials && r == RC_OK; k++) {
		struct psg_material *v = xgrow_n(ms->v, ms->n, cap, sizeof *v, 8);

		if (!v) {
			r = RC_NOMEM;
			break;
		}
		ms->v = v;
		r = add_material(ms, i, &d, &d.materials[k]);
	}
	skate_rmd_free(&d);
	free(p);
	return r;
}

enum rc psg_materials_load(const struct src *s, const struct arena *a, const char *name,
			   struct psg_materials **out)
{
	struct psg_materials *ms = calloc(1, sizeof *ms);
	size_t cap = 0;
	enum rc r = ms ? RC_OK : RC_NOMEM;

	for (uint32_t i = 0; r == RC_OK && i < a->n_dict; i++)
		if (arena_row(a, i)->type_id == RW_T_RENDERMATERIAL)
			r = add_rmd(s, a, i, ms, &cap);
	if (r == RC_OK && !(ms->companion = fmt_sibling_name(FMT_PSG, name)))
		r = RC_NOMEM;
	if (r != RC_OK) {
		psg_materials_free(ms);
		return r;
	}
	*out = ms;
	return RC_OK;
}

/* ---- resolving GUIDs in the companion ---- */

static int by_guid(const void *pa, const void *pb)
{
	const struct psg_tex_ref *a = pa, *b = pb;

	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order; /* the first entry wins */
}

static const struct psg_tex_ref *find_guid(const struct psg_textures_index *ix, uint64_t guid)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->v[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && ix->v[lo].guid == guid ? &ix->v[lo] : NULL;
}

/* Sorted once, searched per channel: hostile counts on both sides stay n log n. */
enum rc psg_materials_resolve(struct psg_materials *ms, struct psg_textures_index *ix, bool own)
{
	qsort(ix->v, ix->n, sizeof *ix->v, by_guid);
	for (uint32_t i = 0; i < ms->n; i++) {
		for (uint32_t c = 0; c < ms->v[i].n_ch; c++) {
			struct psg_channel *ch = &ms->v[i].ch[c];
			const struct psg_tex_ref *hit;
			char **dst = own ? &ch->own : &ch->texture;

			if (!ch->has_guid || ch->own_entry >= 0 || ch->texture ||
			    !(hit = find_guid(ix, ch->guid)))
				continue;
			*dst = strdup(hit->name ? hit->name : "");
			if (!*dst)
				return RC_NOMEM;
			if (own)
				ch->own_entry = (int64_t)hit->order;
			else
				ch->tex_row = hit->row;
		}
		if (own)
			material_label(&ms->v[i]);
	}
	return RC_OK;
}

void psg_materials_counts(const struct psg_materials *ms, uint32_t *guid_ch, uint32_t *resolved,
			  uint32_t *elsewhere)
{
	*guid_ch = *resolved = *elsewhere = 0;
	for (uint32_t i = 0; i < ms->n; i++)
		for (uint32_t c = 0; c < ms->v[i].n_ch; c++)
			if (ms->v[i].ch[c].has_guid && ms->v[i].ch[c].own_entry < 0) {
				(*guid_ch)++;
				*resolved += ms->v[i].ch[c].texture != NULL;
				*elsewhere += ms->v[i].ch[c].tex_slot != 0;
			}
}

uint32_t psg_materials_count_toc(const struct psg_materials *ms)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ms->n; i++)
		for (uint32_t c = 0; c < ms->v[i].n_ch; c++)
			n += ms->v[i].ch[c].texture && ms->v[i].ch[c].by_toc;
	return n;
}

/* The texture index of a companion arena, from its memoised TOC and texture names. */
enum rc psg_textures_index_of(struct asset *as, struct psg_textures_index *ix)
{
	const struct texnames_memo *names;
	const struct view_toc *toc;
	struct cache_ent *ent;
	enum rc r;

	memset(ix, 0, sizeof *ix);
	if (as->fmt != &tree_format_psg || !pm(as)->has_textures)
		return RC_UNSUPPORTED;
	toc = asset_need(as, N_TOC, 0, &ent, &r); /* permanent: no pin */
	names = toc ? asset_need(as, N_TEXNAMES, 0, &ent, &r) : NULL;
	if (!names)
		return r == RC_NOMEM ? r : RC_UNSUPPORTED;
	ix->v = xcalloc_n(toc->n ? toc->n : 1, sizeof *ix->v);
	if (!ix->v)
		return RC_NOMEM;
	for (size_t k = 0; k < toc->n; k++) {
		const struct skate_ref *o = &toc->e[k].object;

		if (o->res == RC_OK && o->obj < names->n && names->names[o->obj])
			ix->v[ix->n++] =
			    (struct psg_tex_ref){toc->e[k].guid, names->names[o->obj], o->obj, k};
	}
	return RC_OK;
}

/* Resolve through an open companion; BROKEN when it is no texture arena. */
static enum rc link_through(struct asset *comp, struct psg_materials *ms, enum psg_comp_where ok)
{
	struct psg_textures_index ix;
	enum rc r = psg_textures_index_of(comp, &ix);

	if (r == RC_NOMEM)
		return r;
	if (r != RC_OK) {
		ms->where = PSG_COMP_BROKEN;
		return RC_OK;
	}
	ms->where = ok;
	r = psg_materials_resolve(ms, &ix, false);
	free(ix.v);
	return r;
}

/* ---- the companion arena ---- */

/* The entry of dir named `name`, exact or else ignoring case (game folders mix cases). */
static char *find_beside(const struct tree *t, const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *found = NULL;
	struct stat dst;

	if (!d)
		return NULL;
	if (fstat(dirfd(d), &dst) != 0) {
		closedir(d);
		return NULL;
	}
	while ((de = readdir(d))) {
		/* A companion is a file: never a folder, never this mount's own mount point
		 * (opening it would ask this daemon, which is busy asking). */
		if (de->d_type == DT_DIR || tree_is_mount_point(t, dst.st_dev, de->d_ino))
			continue;
		if (strcmp(de->d_name, name) == 0) {
			free(found);
			found = strdup(de->d_name);
			break;
		}
		if (!found && strcasecmp(de->d_name, name) == 0)
			found = strdup(de->d_name);
	}
	closedir(d);
	return found;
}

/* Folder mounts: the sibling entry of that name, as the folder layer holds it, so links point
 * at the very tree the mount shows. */
static void locate_in_folder(struct asset *as, struct psg_mount *m)
{
	uint32_t parent, slot = tree_slot_sibling(as->t, as->slot, m->comp_name);
	const char *name;
	char *dup;

	if (!slot)
		return;
	m->comp_found = true;
	m->comp_slot = slot;
	if (tree_slot_entry_name(as->t, slot, &parent, &name) && (dup = strdup(name))) {
		free(m->comp_name);
		m->comp_name = dup;
	}
}

/* With -o mods, a single-file mount writes a modded arena to OUTDIR/<name>: a companion found
 * there is the one a later mount of its model serves (docs/texture-mods.md). */
static char *mods_dir_of(const struct asset *as)
{
	const char *d = as->t->opts.mods_dir;
	char *dir = NULL;

	if (d && asprintf(&dir, "%s/", d) < 0)
		dir = NULL;
	return dir;
}

/* Single-file mounts: the file beside the source (or its mod), opened once and kept for the
 * mount. */
static void locate_beside(struct asset *as, struct psg_mount *m)
{
	const char *slash = strrchr(as->path, '/');
	char *dir = mods_dir_of(as);
	char *found = dir ? find_beside(as->t, dir, m->comp_name) : NULL;
	char *path = NULL, why[256];

	m->comp_modded = found != NULL;
	if (!found) {
		free(dir);
		dir = slash ? strndup(as->path, (size_t)(slash - as->path) + 1) : strdup("./");
		found = dir ? find_beside(as->t, dir, m->comp_name) : NULL;
	}

	if (found && asprintf(&path, "%s%s", dir, found) >= 0) {
		m->comp_found = true;
		free(m->comp_name);
		m->comp_name = found;
		found = NULL;
		/* Outside every slot: nothing of the mount is keyed by it. */
		if (asset_open(as->t, UINT32_MAX, AT_FDCWD, path, NULL, ASSET_STRICT, &m->comp, why,
			       sizeof why) != TREE_FAIL_NONE)
			m->comp = NULL;
	}
	free(path);
	free(found);
	free(dir);
}

static void companion_locate(struct asset *as)
{
	struct psg_mount *m = pm(as);

	pthread_mutex_lock(&m->comp_mu);
	if (!m->comp_looked && (m->comp_name = fmt_sibling_name(FMT_PSG, as->name))) {
		m->comp_looked = true;
		if (as->t->fold)
			locate_in_folder(as, m);
		else
			locate_beside(as, m);
	}
	pthread_mutex_unlock(&m->comp_mu);
}

struct asset *psg_companion_get(struct asset *as, struct cache_ent **pin, enum rc *r)
{
	struct psg_mount *m = pm(as);

	*pin = NULL;
	companion_locate(as);
	if (!m->comp_looked) {
		*r = RC_NOMEM;
		return NULL;
	}
	if (!m->comp_found) {
		*r = RC_NOENT;
		return NULL;
	}
	if (as->t->fold)
		return tree_asset_get(as->t, m->comp_slot, pin, r);
	if (!m->comp)
		*r = RC_FORMAT;
	return m->comp;
}

void psg_companion_put(struct asset *as, struct cache_ent *pin)
{
	tree_asset_put(as->t, pin);
}

const char *psg_companion_name(struct asset *as)
{
	return pm(as)->comp_looked ? pm(as)->comp_name : NULL;
}

void psg_companion_close(struct psg_mount *m)
{
	asset_close(m->comp);
	free(m->comp_name);
	m->comp = NULL;
	m->comp_name = NULL;
}

/* ---- GUIDs the companion lacks: 0x<GUID> arenas, then any texture arena by its TOC ---- */

/* `target` (a path in the mount) as seen from the folder of `model` (another path). */
static char *relative_to(const char *model, const char *target)
{
	const char *m = model, *t = target, *mslash, *tslash;
	struct buf b;
	size_t n;

	/* Skip the folders both paths share. */
	while ((mslash = strchr(m, '/')) && (tslash = strchr(t, '/')) && mslash - m == tslash - t &&
	       memcmp(m, t, (size_t)(mslash - m)) == 0) {
		m = mslash + 1;
		t = tslash + 1;
	}
	buf_init(&b);
	for (; (mslash = strchr(m, '/')); m = mslash + 1)
		buf_puts(&b, "../");
	buf_puts(&b, t);
	buf_putc(&b, 0);
	if (b.oom) {
		buf_free(&b);
		return NULL;
	}
	return (char *)buf_steal(&b, &n);
}

/* Does the arena at `slot` hold the GUID? Then the channel names its texture there. */
static enum rc try_arena(struct asset *as, uint32_t slot, const char *path, const char *model,
			 struct psg_channel *ch)
{
	struct cache_ent *pin;
	enum rc r;
	struct asset *a = tree_asset_get(as->t, slot, &pin, &r);
	struct psg_textures_index ix;
	const struct psg_tex_ref *hit;

	if (!a)
		return r == RC_NOMEM ? r : RC_OK;
	r = psg_textures_index_of(a, &ix);
	if (r == RC_OK) {
		qsort(ix.v, ix.n, sizeof *ix.v, by_guid);
		hit = find_guid(&ix, ch->guid);
		if (hit) {
			ch->texture = strdup(hit->name ? hit->name : "");
			ch->tex_arena = strdup(path);
			ch->tex_link = relative_to(model, path);
			ch->tex_row = hit->row;
			ch->tex_slot = slot;
			if (!ch->texture || !ch->tex_arena || !ch->tex_link)
				r = RC_NOMEM;
		}
		free(ix.v);
	}
	tree_asset_put(as->t, pin);
	return r == RC_NOMEM ? r : RC_OK;
}

#define GUID_HITS 8 /* files holding one GUID tried at most (a PS3 and an Xbox 360 twin...) */

#define ALSO_NAMED 3 /* other arenas holding a GUID that material.txt names */

/* By TableOfContents: the other arenas the index names for the GUID (never the model), the
 * first ALSO_NAMED of them, then "and more" when there are (or may be: n hit the cap). */
static enum rc note_others(struct asset *as, struct psg_channel *ch, const struct guid_hit *h,
			   size_t n)
{
	struct buf b;
	size_t len, named = 0;
	bool more = n == GUID_HITS;

	ch->by_toc = true;
	buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(h[i].path, ch->tex_arena) || (h[i].slot && h[i].slot == as->slot))
			continue;
		if (named == ALSO_NAMED) {
			more = true;
			break;
		}
		if (named++)
			buf_puts(&b, ", ");
		buf_puts(&b, h[i].path);
	}
	if (!named) {
		buf_free(&b);
		return RC_OK;
	}
	if (more)
		buf_puts(&b, " and more");
	buf_putc(&b, 0);
	if (b.oom) {
		buf_free(&b);
		return RC_NOMEM;
	}
	ch->tex_also = (char *)buf_steal(&b, &len);
	return RC_OK;
}

static enum rc resolve_elsewhere(struct asset *as, struct guid_index *gix, const char *model,
				 struct psg_channel *ch, bool by_toc)
{
	const char *dot = strrchr(as->name, '.');
	struct guid_hit hits[GUID_HITS];
	size_t n = guid_index_find(gix, ch->guid, dot ? dot + 1 : NULL, hits, GUID_HITS);
	enum rc r = RC_OK;

	for (size_t i = 0; i < n; i++) {
		uint32_t slot = hits[i].slot;

		if (r == RC_OK && !ch->texture && !slot) {
			slot = folder_slot_at(as->t, hits[i].path);
			if (slot)
				guid_index_set_slot(gix, hits[i].path, slot);
		}
		if (r == RC_OK && !ch->texture && slot && slot != as->slot)
			r = try_arena(as, slot, hits[i].path, model, ch);
	}
	if (r == RC_OK && by_toc && ch->texture)
		r = note_others(as, ch, hits, n);
	for (size_t i = 0; i < n; i++)
		free(hits[i].path);
	return r;
}

/* The channels that name the material ("Name", "AttribulatorMaterialName"; see
 * material_label) carry GUIDs that are never a texture's: only the others are looked for
 * outside the companion (a lookup there builds a mount-wide index on first use). */
static bool texture_channel(const struct psg_channel *ch)
{
	return !ch->input || (strcmp(ch->input, "Name") != 0 &&
			      strcmp(ch->input, "AttribulatorMaterialName") != 0);
}

static bool looks_elsewhere(const struct psg_channel *ch)
{
	return ch->has_guid && ch->own_entry < 0 && !ch->texture && texture_channel(ch);
}

/* by_toc false: the 0x<GUID> arenas by name; true: every texture arena by its TOC. Neither
 * index is touched (so neither is built) unless a texture channel is still unresolved. */
static enum rc link_elsewhere(struct asset *as, struct psg_materials *ms, bool by_toc)
{
	struct guid_index *gix = by_toc ? folder_toc_index(as->t) : folder_guid_index(as->t);
	char model[PATH_MAX];
	enum rc r = RC_OK;
	bool any = false;

	for (uint32_t i = 0; i < ms->n && !any; i++)
		for (uint32_t c = 0; c < ms->v[i].n_ch && !any; c++)
			any = looks_elsewhere(&ms->v[i].ch[c]);
	if (!any || !gix || !tree_slot_mountpath(as->t, as->slot, model, sizeof model))
		return RC_OK;
	ms->searched = true;
	for (uint32_t i = 0; i < ms->n && r == RC_OK; i++)
		for (uint32_t c = 0; c < ms->v[i].n_ch && r == RC_OK; c++) {
			struct psg_channel *ch = &ms->v[i].ch[c];

			if (looks_elsewhere(ch))
				r = resolve_elsewhere(as, gix, model, ch, by_toc);
		}
	if (by_toc && guid_index_partial(gix))
		ms->toc_partial = true;
	return r;
}

struct asset *psg_channel_arena_get(struct asset *model, uint32_t tex_slot, struct cache_ent **pin,
				    enum rc *r)
{
	if (!tex_slot)
		return psg_companion_get(model, pin, r);
	return tree_asset_get(model->t, tex_slot, pin, r);
}

void psg_channel_arena_put(struct asset *model, uint32_t tex_slot, struct cache_ent *pin)
{
	if (!tex_slot)
		psg_companion_put(model, pin);
	else
		tree_asset_put(model->t, pin);
}

static enum rc link_companion(struct asset *as, struct psg_materials *ms)
{
	struct cache_ent *pin;
	enum rc r;
	struct asset *comp = psg_companion_get(as, &pin, &r);
	const char *name = psg_companion_name(as);

	ms->where = PSG_COMP_NONE;
	if (name) {
		char *dup = strdup(name);

		if (!dup) {
			psg_companion_put(as, pin);
			return RC_NOMEM;
		}
		free(ms->companion);
		ms->companion = dup;
	}
	if (!comp) {
		if (r == RC_NOMEM)
			return r;
		ms->where = r == RC_NOENT ? PSG_COMP_NONE : PSG_COMP_BROKEN;
		return RC_OK;
	}
	r = link_through(comp, ms,
			 as->t->fold	       ? PSG_COMP_FOLDER
			 : pm(as)->comp_modded ? PSG_COMP_MODS
					       : PSG_COMP_BESIDE);
	psg_companion_put(as, pin);
	return r;
}

enum rc psg_materials_link(struct asset *as, struct psg_materials *ms)
{
	enum rc r = link_companion(as, ms);

	if (r == RC_OK && as->t->fold)
		r = link_elsewhere(as, ms, false);
	if (r == RC_OK && as->t->fold)
		r = link_elsewhere(as, ms, true);
	return r;
}

/* ---- material.txt ---- */

static const char *kind_name(uint8_t k)
{
	return k == SKATE_UNION_GUID ? "guid" : k == SKATE_UNION_STREAM ? "stream" : "constants";
}

/* What a GUID names: a texture of the companion, an entry of the model's own TOC, or nothing. */
static void guid_target(const struct psg_materials *ms, const struct psg_channel *ch,
			struct buf *out)
{
	if (ch->own_entry >= 0) {
		buf_printf(out, "toc entry %lld", (long long)ch->own_entry);
		if (*ch->own) {
			buf_putc(out, ' ');
			buf_tsv_name(out, ch->own, strlen(ch->own));
		}
	} else if (ch->texture && ch->tex_slot) {
		buf_printf(out, "texture %s in ", ch->texture);
		buf_tsv_name(out, ch->tex_arena, strlen(ch->tex_arena)); /* a path */
		if (ch->by_toc) {
			buf_puts(out, " (by its TableOfContents");
			if (ch->tex_also) {
				buf_puts(out, "; also in ");
				buf_tsv_name(out, ch->tex_also, strlen(ch->tex_also));
			}
			buf_putc(out, ')');
		}
	} else if (ch->texture) {
		buf_printf(out, "texture %s", ch->texture);
	} else {
		buf_puts(out, ms->where == PSG_COMP_NONE     ? "- (no companion"
			      : ms->where == PSG_COMP_BROKEN ? "- (companion unreadable"
							     : "- (not in the companion");
		if (!ms->searched || !texture_channel(ch))
			buf_puts(out, ")");
		else if (ms->toc_partial)
			buf_puts(out, ", nor in the texture arenas of the mount read before the "
				      "index's read budget ran out)");
		else
			buf_puts(out, ", nor in any texture arena of the mount)");
	}
}

void psg_material_text(const struct psg_materials *ms, uint32_t i, struct buf *out)
{
	const struct psg_material *m = &ms->v[i];

	buf_printf(out, "material: %u\nobject: %04u.RenderMaterialData +0x%X\nname: %s\n", i,
		   m->rmd, m->at, m->label);
	buf_puts(out, "companion: ");
	buf_tsv_name(out, ms->companion, strlen(ms->companion)); /* a file name */
	buf_printf(
	    out, " (%s)\n",
	    ms->where == PSG_COMP_FOLDER   ? "found beside the model; links below"
	    : ms->where == PSG_COMP_BESIDE ? "found beside the source; links need a folder mount"
	    : ms->where == PSG_COMP_MODS
		? "its mod, found in the mods folder; links need a folder mount"
	    : ms->where == PSG_COMP_BROKEN ? "found, but it cannot be opened as a texture arena"
					   : "not found");
	buf_puts(out, "channel\tinput\tkind\tvalue\tguid\tresolves to\n");
	for (uint32_t c = 0; c < m->n_ch; c++) {
		const struct psg_channel *ch = &m->ch[c];

		buf_printf(out, "%u\t", c);
		if (ch->input)
			buf_tsv_name(out, ch->input, strlen(ch->input));
		buf_printf(out, "\t%s\t", kind_name(ch->kind));
		if (ch->kind == SKATE_UNION_CONSTANTS) {
			for (int k = 0; k < 4; k++) {
				if (k)
					buf_putc(out, ' ');
				buf_f32txt(out, ch->constants[k]);
			}
			buf_puts(out, "\t-\t-\n");
			continue;
		}
		if (ch->stream)
			buf_tsv_name(out, ch->stream, strlen(ch->stream));
		else
			buf_putc(out, '-');
		if (ch->has_guid) {
			buf_printf(out, "\t0x%016llX\t", (unsigned long long)ch->guid);
			guid_target(ms, ch, out);
		} else {
			buf_puts(out, "\t-\t-");
		}
		buf_putc(out, '\n');
	}
}
