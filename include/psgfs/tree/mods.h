/*
 * Texture mods (-o mods=OUTDIR; docs/texture-mods.md, "The writable mount"): pictures written
 * into textures/<name>.dds and .png become game-ready arenas in OUTDIR, which the mount then
 * serves. Only those files are writable, plus temporaries editors create in textures/;
 * everything else is RC_READONLY. Written bytes live in the daemon (unnamed files in OUTDIR,
 * never RAM) until the picture is complete: when its last writer closes it (flush), or when a
 * temporary is renamed over it, the picture is checked and the new arena is written to a
 * temporary in OUTDIR, synced and renamed over OUTDIR/<the asset's path in the source>. A
 * picture that cannot be written fails that close or rename with RC_INVAL, and the asset's
 * errors.txt says why; the mount keeps serving what it served.
 *
 * Each open for writing of a picture has a private copy (what it writes, over what the file
 * held when it was opened unless truncated): two writers do not mix, the last to close wins.
 * A temporary is one shared file, like any file. Temporaries are not listed in readdir; they
 * can be looked up, opened, written, read, truncated, renamed and unlinked, and vanish at
 * unmount; one whose rename over a picture is refused is discarded, and at the limit of open
 * files the oldest one nobody has open makes room. A new name with a picture's extension is
 * no temporary: it would be a new texture, and is refused (RC_DENIED). A reader of a picture
 * opened before a commit reads the content it opened, or fails (RC_IO): never a mix.
 */
#ifndef PSGFS_TREE_MODS_H
#define PSGFS_TREE_MODS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "psgfs/base/result.h"
#include "psgfs/tree/tree.h"

struct tree_mods_file;

/* Open node ino for writing (trunc: O_TRUNC). RC_READONLY for anything not writable. */
enum rc tree_mods_open(struct tree *t, tree_ino ino, bool trunc, struct tree_mods_file **out);
/* A reader of node ino: *out a handle when ino is a picture (NULL otherwise: read it as any
 * node), *direct when its reads must bypass the kernel's page cache. */
enum rc tree_mods_open_reader(struct tree *t, tree_ino ino, struct tree_mods_file **out,
			      bool *direct);
bool tree_mods_is_reader(const struct tree_mods_file *f);
/* tree_read_begin for a reader: RC_IO once the picture is not the content it opened. */
enum rc tree_mods_read_view(struct tree_mods_file *f, uint64_t off, size_t len, struct tree_rdv *v);
/* Create a temporary `name` in a textures/ folder and open it (excl: RC_EXISTS when the name
 * exists; otherwise an existing temporary or picture of that name is opened, emptied when
 * trunc); *st receives its attributes. RC_DENIED (errors.txt says why) for a new name with a
 * picture's extension. */
enum rc tree_mods_create(struct tree *t, tree_ino parent, const char *name, bool excl, bool trunc,
			 uid_t uid, gid_t gid, struct tree_stat *st, struct tree_mods_file **out);
enum rc tree_mods_write(struct tree_mods_file *f, uint64_t off, const void *p, size_t n);
/* What the handle holds (its own copy), *got < n only at its end. */
enum rc tree_mods_read(struct tree_mods_file *f, uint64_t off, size_t n, void *dst, size_t *got);
/* The handle's attributes (its size is what was written). */
enum rc tree_mods_fgetattr(struct tree_mods_file *f, struct tree_stat *st);
/* Change the length: through a handle (f), or of a temporary by its inode (f NULL). */
enum rc tree_mods_truncate(struct tree *t, tree_ino ino, struct tree_mods_file *f, uint64_t size,
			   struct tree_stat *st);
/* A close of one descriptor: a picture written since the last flush is committed now. */
enum rc tree_mods_flush(struct tree_mods_file *f);
void tree_mods_release(struct tree_mods_file *f);
/* Rename a temporary: over a picture (commits it), or to another temporary name. flags:
 * RENAME_NOREPLACE / RENAME_EXCHANGE as rename2(2) gives them. */
enum rc tree_mods_rename(struct tree *t, tree_ino parent, const char *name, tree_ino newparent,
			 const char *newname, unsigned flags);
enum rc tree_mods_unlink(struct tree *t, tree_ino parent, const char *name);
/* Change mode, owner or times (`what`: TREE_SET_* bits, only those that change something; the
 * values in want): a temporary keeps them (editors copy them onto theirs); a picture refuses
 * any change (RC_DENIED, errors.txt says why); RC_READONLY elsewhere. *st: the attributes. */
enum {
	TREE_SET_MODE = 1,
	TREE_SET_UID = 2,
	TREE_SET_GID = 4,
	TREE_SET_ATIME = 8,
	TREE_SET_MTIME = 16,
};
enum rc tree_mods_setattr(struct tree *t, tree_ino ino, unsigned what, const struct tree_stat *want,
			  struct tree_stat *st);

#endif
