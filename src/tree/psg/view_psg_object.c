/*
 * objects/NNNN.TypeName.txt: the table of decoded object views, one row per type (a type has
 * a view exactly when it has a row).
 */
#include <stdlib.h>

#include "psgfs/formats/skate_platform.h"
#include "tree/psg/view_psg.h"

/* Textures are shown by their platform's row. */
static enum rc obj_texture(const struct view_object *o, struct buf *out, struct diag *d)
{
	return view_platform_of(skate_platform_decoders(o->a))
	    ->texture_text(o->s, o->a, o->idx, out, d);
}

static const struct object_view {
	uint32_t first, last; /* type ids */
	bool read;	      /* the function gets the object's bytes */
	enum rc (*text)(const struct view_object *o, struct buf *out, struct diag *problems);
} object_views[] = {
    {RW_T_BASERES_FIRST, RW_T_BASERES_LAST, false, view_obj_base_resource},
    {RW_T_MESHHELPER, RW_T_MESHHELPER, true, view_obj_mesh_helper},
    {RW_T_TEXTURE, RW_T_TEXTURE, false, obj_texture},
    {RW_T_VDES, RW_T_IB, true, view_obj_buffer}, /* VertexDescriptor, VertexBuffer, IndexBuffer */
    {RW_T_RENDERMODEL, RW_T_RENDERMODEL, true, view_obj_model},
    {RW_T_RENDERMATERIAL, RW_T_RENDERMATERIAL, true, view_obj_material},
    {RW_T_VERSION, RW_T_VERSION, true, view_obj_version},
    {RW_T_TOC, RW_T_TOC, true, view_obj_toc},
    {RW_T_INSTANCE, RW_T_INSTANCE, true, view_obj_instance},
    {RW_T_OPTIMESH, RW_T_OPTIMESH, true, view_obj_optimesh},
};

static const struct object_view *object_view(uint32_t type_id)
{
	for (size_t i = 0; i < sizeof object_views / sizeof object_views[0]; i++)
		if (type_id >= object_views[i].first && type_id <= object_views[i].last)
			return &object_views[i];
	return NULL;
}

/* The one footer of every object view: what decoding found, counted, a line each. */
static void put_problems(struct buf *out, const struct diag *d)
{
	if (!diag_count(d))
		return;
	buf_printf(out, "problems (%zu):\n", diag_count(d));
	for (size_t i = 0; i < d->n; i++)
		buf_printf(out, "  %s\n", d->msg[i]);
	if (d->dropped)
		buf_printf(out, "  ... %zu more not listed\n", d->dropped);
}

bool view_object_has_text(uint32_t type_id)
{
	return object_view(type_id) != NULL;
}

enum rc view_object_text(const struct src *s, const struct arena *a, uint32_t idx, struct buf *out,
			 struct diag *d)
{
	const struct object_view *v;
	struct view_object o = {s, a, idx, NULL, 0};
	uint8_t *p = NULL;
	struct diag local;
	enum rc r;

	if (idx >= a->n_dict)
		return RC_BOUNDS;
	v = object_view(arena_row(a, idx)->type_id);
	if (!v)
		return RC_UNSUPPORTED;
	if (v->read) {
		r = arena_read_object(s, a, idx, &p, &o.n);
		if (r != RC_OK)
			return r == RC_NOMEM ? r : RC_BOUNDS;
		o.p = p;
	}
	diag_init(&local);
	r = v->text(&o, out, &local);
	if (r == RC_OK)
		put_problems(out, &local);
	for (size_t i = 0; i < local.n; i++)
		diag_add(d, "%s", local.msg[i]);
	diag_free(&local);
	free(p);
	return r == RC_OK && out->oom ? RC_NOMEM : r;
}

enum rc view_texture_info_line(const struct src *s, const struct arena *a, uint32_t idx,
			       const char *name, struct buf *out)
{
	return view_platform_of(skate_platform_decoders(a))
	    ->texture_info_line(s, a, idx, name, out);
}
