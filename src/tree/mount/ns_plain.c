/*
 * Two trivial formats of folder mounts: "plain", a file that is not a container, served as
 * its own bytes; and "broken", a container that could not be opened, shown as a directory
 * whose info.txt and errors.txt say why.
 */
#include <stdio.h>
#include <string.h>

#include "tree/core/tree_int.h"

static enum rc plain_extent(const struct tctx *c, uint64_t *off, uint64_t *len)
{
	*off = 0;
	*len = c->as->src.size;
	return RC_OK;
}

static enum tree_open_fail plain_mount(struct asset *as, char *why, size_t whylen)
{
	(void)as;
	(void)why;
	(void)whylen;
	return TREE_FAIL_NONE;
}

static const struct tree_kind plain_kinds[] = {
    {.what = "file", .type = TT_FILE, .cheap = true, .extent = plain_extent},
};

const struct tree_format tree_format_plain = {
    .name = "plain",
    .kinds = plain_kinds,
    .n_kinds = 1,
    .mount = plain_mount,
};

enum { B_ROOT, B_INFO, B_ERRORS, B_COUNT };

static enum rc broken_list(const struct tctx *c, struct tlist *out)
{
	(void)c;
	tlist_add(out, tn(B_INFO, 0, 0), "info.txt");
	tlist_add(out, tn(B_ERRORS, 0, 0), "errors.txt");
	return RC_OK;
}

static enum rc broken_info(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	(void)part;
	(void)first;
	/* The file's name and the reason (which may quote a path) escaped: one line each. */
	buf_puts(&e->b, "format: unreadable\nfile: ");
	buf_tsv_name(&e->b, c->as->name, strlen(c->as->name));
	buf_printf(&e->b,
		   "\nsize: %llu\nstatus: cannot mount: ", (unsigned long long)c->as->st.st_size);
	buf_tsv_name(&e->b, c->as->why, strlen(c->as->why));
	buf_putc(&e->b, '\n');
	emit_item(e);
	return RC_OK;
}

static enum rc broken_errors(const struct tctx *c, unsigned part, uint64_t first, struct emit *e)
{
	(void)part;
	(void)first;
	buf_tsv_name(&e->b, c->as->why, strlen(c->as->why));
	buf_putc(&e->b, '\n');
	emit_item(e);
	return RC_OK;
}

static const struct tree_kind broken_kinds[B_COUNT] = {
    [B_ROOT] = {.what = "root", .type = TT_DIR, .list = broken_list},
    [B_INFO] = {.what = "info", .type = TT_FILE, .render = broken_info},
    [B_ERRORS] = {.what = "errors", .type = TT_FILE, .render = broken_errors},
};

const struct tree_format tree_format_broken = {
    .name = "broken",
    .kinds = broken_kinds,
    .n_kinds = B_COUNT,
    .mount = plain_mount,
};
