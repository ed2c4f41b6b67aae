/*
 * Internals of texture mods (mods.c: files, the slot table; mods_content.c: written bytes;
 * mods_temp.c: temporaries; mods_commit.c: turning a written picture into an arena in OUTDIR
 * and switching the mount to it).
 */
#ifndef PSGFS_TREE_MODS_INT_H
#define PSGFS_TREE_MODS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "psgfs/base/diag.h"
#include "psgfs/tree/mods.h"
#include "tree/core/tree_int.h"

#define MODS_FILE_MAX	(1ull << 30) /* bytes a written picture or temporary may reach */
#define MODS_TEMPS_MAX	256u	     /* temporaries and open writers at once */
#define MODS_LOG_MAX	64u	     /* lines kept per asset */
#define MODS_TMP_SUFFIX ".psgfs-tmp" /* OUTDIR names of our own temporaries */

/* What node n of an asset is to texture mods: its format says (tree_format.texnode); a format
 * without pictures to write has none. */
static inline enum tree_texnode mods_texnode(const struct asset *as, struct tnode n, uint32_t *row)
{
	return as->fmt->texnode ? as->fmt->texnode(as, n, row) : TEX_NOT;
}

struct mod_extent {
	uint64_t off, len;
};

/* Bytes being written: kept in an unnamed file in OUTDIR, over a base (what the picture held
 * when opened) or over nothing (zeros). */
struct mod_content {
	pthread_mutex_t mu; /* writes, reads and commits of this content (lock order:
			       tree/core/tree_int.h, as for every mutex here) */
	int fd;
	uint64_t size;
	uint64_t base_len;	/* [0, base_len): unwritten bytes come from base_ino's file */
	tree_ino base_ino;	/* 0: none */
	struct mod_extent *ext; /* written ranges, sorted, disjoint, not adjacent */
	size_t n_ext, cap_ext;
	bool dirty; /* written or truncated since the last commit */
};

struct mod_temp {
	uint32_t id; /* inode TREE_TEMP_SLOT << 32 | id */
	tree_ino parent;
	char *name;
	struct mod_content c;
	uint32_t opens;
	bool gone; /* unlinked or renamed away: alive while open */
	mode_t perm;
	tree_ino alias; /* renamed over this picture: answers as it */
	uid_t uid;
	gid_t gid;
	struct timespec mtime;
	struct mod_temp *next;
};

struct tree_mods_file {
	struct mods *m;
	tree_ino ino;		/* the picture, or the temporary */
	struct mod_temp *tmp;	/* temporaries */
	struct mod_content own; /* pictures: this writer's copy */
	enum rc last;		/* the last commit's outcome (a later flush repeats it) */
	bool reader;		/* a reader of a picture: it reads the content of `epoch` */
	uint32_t epoch;
};

/* A slot that has a mod in OUTDIR, or whose content changed in this mount. */
struct mod_slot {
	uint32_t slot, epoch;
	bool in_outdir; /* its arena is OUTDIR/rel */
	bool have_st;
	struct stat st; /* that file's identity, as written or first opened */
	char *rel;
	char *log[MODS_LOG_MAX]; /* info.txt lines: what was written */
	unsigned n_log;
	char *err[MODS_LOG_MAX]; /* errors.txt lines: what was refused */
	unsigned n_err;
	struct mod_slot *next;
};

struct mods {
	struct tree *t;
	char *dir; /* OUTDIR, absolute */
	int dirfd;
	pthread_mutex_t mu; /* the tables below */
	struct mod_temp *temps;
	uint32_t next_temp, n_open;
	struct mod_slot *slots;
	struct asset **retired; /* single-file mounts: earlier openings, freed at unmount */
	size_t n_retired;
	pthread_mutex_t commit_mu; /* one commit at a time */
	/* Odd while a commit renames its arena into OUTDIR and moves the slot's identity and
	 * epoch on (m->mu; pub_cv signals the end): an asset opened from OUTDIR across it is
	 * opened again, so the file, its expected identity and its epoch always agree. */
	unsigned pub_seq;
	pthread_cond_t pub_cv;
	struct stat dir_parent; /* OUTDIR's parent folder, which a re-created OUTDIR must share */
	unsigned threads;
	atomic_uint_fast64_t spill_seq;
	/* Make the content complete in its file (unwritten base bytes copied in); RC_IO etc.,
	 * and why says what failed. mods.c's, set by mods_init: the commit calls it without
	 * calling back into mods.c. */
	enum rc (*complete)(struct mods *m, struct mod_content *c, char *why, size_t whylen);
};

/* ---- mods_outdir.c ---- */
struct mod_slot *mods_slot_get(struct mods *m, uint32_t slot, bool create);
void mods_log(struct mods *m, uint32_t slot, bool error, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Open a directory below OUTDIR without following links (create: make missing ones). */
int mods_open_dir(struct mods *m, const char *rel_dir, bool create);
/* OUTDIR is still there: removed while mounted, it is opened again where it was when it has
 * been re-created (false, errno set, when it has not). */
bool mods_dir_ok(struct mods *m);
/* A commit's arena goes into OUTDIR: pub_seq is odd between the two. */
void mods_publish_begin(struct mods *m);
void mods_publish_end(struct mods *m);

/* ---- mods_commit.c ---- */
/* The name of picture node pic in its textures/ ("?" when not found). */
void mods_name_of(struct tree *t, tree_ino pic, char *out, size_t n);
/* Write the complete picture c (a DDS or PNG as `png` says) over picture node pic: RC_OK when
 * the new arena is in OUTDIR and served, RC_INVAL when refused (logged), other codes for
 * failures writing OUTDIR. */
enum rc mods_commit(struct mods *m, tree_ino pic, struct mod_content *c);

/* ---- mods_content.c: written bytes, spilled to unnamed files in OUTDIR ---- */
enum rc mods_content_init(struct mods *m, struct mod_content *c, tree_ino base, uint64_t len);
void mods_content_free(struct mod_content *c);
enum rc mods_content_write(struct mod_content *c, uint64_t off, const void *p, size_t n);
enum rc mods_content_truncate(struct mod_content *c, uint64_t size);
enum rc mods_content_read(struct mods *m, struct mod_content *c, uint64_t off, size_t n, void *dst,
			  size_t *got);
enum rc mods_content_complete(struct mods *m, struct mod_content *c, char *why, size_t whylen);

/* ---- mods_temp.c: editors' temporaries (m->mu held) and their container ---- */
void mods_temp_free(struct mod_temp *tp);
struct mod_temp *mods_temp_by_ino(struct mods *m, tree_ino ino);
struct mod_temp *mods_temp_by_name(struct mods *m, tree_ino parent, const char *name);
tree_ino mods_temp_ino(const struct mod_temp *tp);
void mods_temp_stat(const struct mod_temp *tp, struct tree_stat *out);
void mods_temps_trim(struct mods *m);
bool mods_temps_room(struct mods *m, char *gone, size_t n, tree_ino *gone_dir);
void mods_log_discarded(struct mods *m, const char *name, tree_ino dir);
enum rc mods_temp_getattr(struct tree *t, tree_ino ino, struct tree_stat *out);
/* The temporary is gone from its name; alias: the picture it became. */
void mods_temp_gone(struct mods *m, struct mod_temp *tp, tree_ino alias);
extern const struct container_ops mods_temp_container;

#endif
