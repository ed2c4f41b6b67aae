/*
 * psgfs-tool: the mounted tree without FUSE. List, print, extract or walk every file of a
 * PSG/PSK/PSA exactly as psgfs would show it. Exit codes match psgfs (see usage).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/cliopt.h"
#include "psgfs/base/sha256.h"
#include "psgfs/formats/archive.h"
#include "psgfs/tree/tree.h"

#include "pack.h"
#include "pack_stream.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: psgfs-tool [options] COMMAND FILE|FOLDER [ARG]\n"
	    "(FILE: an arena, PSK, PSA, EA archive .big or stream file .psf/.xsf)\n"
	    "\n"
	    "commands:\n"
	    "  ls FILE [PATH]      list a directory of the tree (type, size, inode, name)\n"
	    "  find FILE           every path in the tree with its size, depth-first, sorted\n"
	    "  cat FILE PATH       write one file of the tree to standard output\n"
	    "  extract FILE DIR    write the whole tree under DIR (DIR must not exist); zeros\n"
	    "                      are written as holes, and an extract that does not fit in\n"
	    "                      the space left is refused before anything is written\n"
	    "  walk FILE           render every file; print counts; list files that fail\n"
	    "  pack DIR OUT        write the archive OUT from the folder DIR (EB v3, BIGF, BIG4;\n"
	    "                      options and exit codes: psgfs-tool pack --help)\n"
	    "  pack-stream DIR OUTDIR  write a district's stream set from folders of\n"
	    "                      collections (options and exit codes: psgfs-tool\n"
	    "                      pack-stream --help)\n"
	    "  manifest FILE       every entry, sorted: 'path<TAB>size<TAB>sha256' for files\n"
	    "                      (sha256 'EIO' when the file cannot be read), "
	    "'path/<TAB>-<TAB>-'\n"
	    "                      for directories, 'path<TAB>-><TAB>target' for links\n"
	    "\n"
	    "options:\n"
	    "  --hierarchy FILE    PSG: bone hierarchy TSV (as -o hierarchy= of psgfs: a regular\n"
	    "                      file of at most 16M)\n"
	    "  --yup               PSG: export in the game's Y-up (default: Z-up)\n"
	    "  --cache-size SIZE   cache budget as -o cache_size= of psgfs: digits with an\n"
	    "                      optional K, M or G suffix (default 64M, minimum 1M)\n"
	    "  --max-assets N      FOLDER: asset files kept open at once, as -o max_assets=\n"
	    "                      of psgfs (1 to 65536, default 128)\n"
	    "  --sniff-all         FOLDER: classify every file by its first bytes, as -o\n"
	    "                      sniff_all of psgfs (default: by name where it decides)\n"
	    "  --assets dirs|files FOLDER/ARCHIVE: assets as directories (default) or as plain\n"
	    "                      files of their own bytes, as -o assets= of psgfs; extract of\n"
	    "                      an archive defaults to files: it writes the loose files an\n"
	    "                      unpacking tool does, at the archive's paths made safe (plus\n"
	    "                      the archive's info.txt and errors.txt)\n"
	    "  --no-space-check    extract: write even what does not fit in the space left\n"
	    "\n"
	    "walk also prints the cache budget and how many entries were evicted.\n"
	    "\n"
	    "exit status: 0 ok, 1 some files failed to read (walk, extract) or internal error,\n"
	    "2 usage, 3 cannot open FILE, 4 not a PSG/PSK/PSA file or archive, 5 too damaged to "
	    "mount,\n"
	    "7 extract: not enough space left in DIR (the line names the first file that does\n"
	    "not fit)\n");
}

static int fail_code(enum tree_open_fail f)
{
	return f == TREE_FAIL_OPEN ? 3 : f == TREE_FAIL_FORMAT ? 4 : f == TREE_FAIL_DAMAGED ? 5 : 1;
}

/* Stream one file to out and/or sha; returns 0 or -1 (EIO-like failure of the view). */
static int copy_file(struct tree *t, tree_ino ino, FILE *out, struct sha256 *sha, uint64_t *bytes)
{
	static char buf[1 << 16];
	uint64_t off = 0;

	for (;;) {
		size_t got;

		if (tree_read(t, ino, off, sizeof buf, buf, &got) != RC_OK)
			return -1;
		if (got == 0)
			break;
		if (out && fwrite(buf, 1, got, out) != got)
			return -1;
		if (sha)
			sha256_update(sha, buf, got);
		off += got;
	}
	if (bytes)
		*bytes = off;
	return 0;
}

/* manifest: one line per entry, printed sorted once the walk is done. */
struct rows {
	char **line;
	size_t n, cap;
	bool oom;
};

static void rows_add(struct rows *r, const char *fmt, ...)
{
	va_list ap;
	char *line;

	if (r->oom)
		return;
	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	if (line) {
		char **grown = xgrow_n(r->line, r->n, &r->cap, sizeof *grown, 256);

		if (!grown) {
			free(line);
			line = NULL;
		} else {
			r->line = grown;
		}
	}
	if (!line) {
		r->oom = true;
		return;
	}
	r->line[r->n++] = line;
}

static int rows_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Prints the rows sorted and frees them; 0, or 1 when a row could not be kept. */
static int rows_print(struct rows *r)
{
	qsort(r->line, r->n, sizeof *r->line, rows_cmp);
	for (size_t i = 0; i < r->n; i++) {
		fputs(r->line[i], stdout);
		free(r->line[i]);
	}
	free(r->line);
	if (r->oom)
		fprintf(stderr, "psgfs-tool: out of memory\n");
	return r->oom ? 1 : 0;
}

/* One directory of the walk: its listing, the next entry, where its path ends in w->path. */
struct frame {
	struct tree_dir *d;
	size_t next, path_len;
	bool dest; /* extract: w->dfd is this directory's copy, which is (dev, ino) */
	dev_t dev;
	ino_t ino;
};

/*
 * find, extract, walk and manifest walk the tree depth first with a stack of their own on the
 * heap, never the call stack: how deep a tree goes is the input's choice (issue 30: a 1.5 KB
 * archive of one path 700 folders deep). Extract writes through one descriptor, the directory
 * at hand, entered by name and left by ".." (checked to be the directory it came from), so no
 * path it builds has to fit PATH_MAX.
 */
struct walk {
	struct tree *t;
	FILE *list;	   /* find: paths go here */
	const char *dest;  /* extract: destination root */
	struct rows *rows; /* manifest: entries go here */
	bool measure;	   /* extract's first pass: add up what it will write, write nothing */
	uint64_t need, room, block, inodes, inodes_room;
	bool inodes_known; /* the file system has a fixed count of inodes (f_files != 0) */
	int dfd;
	char *path; /* "/a/b" of the entry at hand */
	size_t path_cap;
	struct frame *st;
	size_t depth, st_cap;
	int stop; /* an exit code that ends the walk early, else 0 */
	unsigned long files, dirs, failed;
	unsigned long long bytes;
};

static bool dest_here(const struct walk *w)
{
	return w->dest && !w->measure && w->depth && w->st[w->depth - 1].dest;
}

/* w->path cut at len, then "/name"; false (and the walk stopped) when out of memory. */
static bool path_set(struct walk *w, size_t len, const char *name)
{
	size_t n = strlen(name), need = len + n + 2;

	if (need > w->path_cap) {
		size_t cap = w->path_cap * 2 > need ? w->path_cap * 2 : need;
		char *p = realloc(w->path, cap);

		if (!p) {
			fprintf(stderr, "psgfs-tool: out of memory\n");
			w->stop = 1;
			return false;
		}
		w->path = p;
		w->path_cap = cap;
	}
	w->path[len] = '/';
	memcpy(w->path + len + 1, name, n + 1);
	return true;
}

/* extract: the destination is full (ENOSPC, EDQUOT): nothing more can be written. */
static void no_space(struct walk *w, const char *what)
{
	fprintf(stderr, "psgfs-tool: %s: no space left in %s (%s)\n", w->path + 1, w->dest, what);
	w->stop = 7;
}

static bool is_no_space(int e)
{
	return e == ENOSPC || e == EDQUOT;
}

static void walk_link(struct walk *w, tree_ino ino, const char *name)
{
	char *target = NULL;

	w->files++;
	if (w->measure) {
		w->inodes++;
		return;
	}
	if (tree_readlink(w->t, ino, &target) != RC_OK) {
		w->failed++;
		if (w->rows)
			rows_add(w->rows, "%s\t->\tEIO\n", w->path + 1);
		return;
	}
	if (w->list)
		fprintf(w->list, "%s -> %s\n", w->path + 1, target);
	if (w->rows)
		rows_add(w->rows, "%s\t->\t%s\n", w->path + 1, target);
	if (w->dest && (!dest_here(w) || symlinkat(target, w->dfd, name) != 0)) {
		if (dest_here(w) && is_no_space(errno))
			no_space(w, "link");
		w->failed++;
	}
	free(target);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

#define HOLE_BLOCK 4096u /* all-zero blocks of this size are left as holes */

static size_t block_at(size_t n, size_t at)
{
	return n - at < HOLE_BLOCK ? n - at : HOLE_BLOCK;
}

static int put_all(int fd, const uint8_t *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t put = pwrite(fd, p, len, (off_t)off);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0) {
			if (put == 0)
				errno = EIO;
			return -1;
		}
		p += put;
		off += (uint64_t)put;
		len -= (size_t)put;
	}
	return 0;
}

/* Writes the blocks of buf[0..n) that are not all zeros at off, *end past the last one written;
 * -1 with errno on failure. */
static int write_blocks(int fd, const uint8_t *buf, size_t n, uint64_t off, uint64_t *end_out)
{
	size_t at = 0;

	while (at < n) {
		size_t end;

		while (at < n && all_zero(buf + at, block_at(n, at)))
			at += block_at(n, at);
		for (end = at; end < n && !all_zero(buf + end, block_at(n, end));)
			end += block_at(n, end);
		if (end > at && put_all(fd, buf + at, end - at, off + at) != 0)
			return -1;
		if (end > at)
			*end_out = off + end;
		at = end;
	}
	return 0;
}

/*
 * extract: one file into fd, its zeros as holes (issue 30: 1 TiB sparse files were written
 * as zeros): the source's own holes are skipped unread (tree_data_extent), all-zero blocks of
 * what is read are not written, and the size is set at the end. 0; -1 when the file does not
 * read (*wrote false) or cannot be written (*wrote true, errno set).
 */
static int write_sparse(struct walk *w, const struct tree_stat *st, int fd, bool *wrote)
{
	static uint8_t buf[1 << 16];
	uint64_t off = 0, end = 0; /* end: of the file as written so far (it was created empty) */
	size_t got;

	*wrote = false;
	while (off < st->size) {
		uint64_t ds, de;

		if (tree_data_extent(w->t, st->ino, off, &ds, &de) != RC_OK)
			return -1;
		if (ds >= st->size)
			break;
		if (de > st->size || de <= ds)
			de = st->size;
		for (off = ds; off < de;) {
			size_t n = de - off < sizeof buf ? (size_t)(de - off) : sizeof buf;

			if (tree_read(w->t, st->ino, off, n, buf, &got) != RC_OK || got != n)
				return -1;
			if (write_blocks(fd, buf, n, off, &end) != 0) {
				*wrote = true;
				return -1;
			}
			off += n;
		}
	}
	/* As a copy would find: the file ends where its size says (set only when it ends in a
	 * hole: a truncate per file was a metadata update per file, for nothing) */
	if (tree_read(w->t, st->ino, st->size, 1, buf, &got) != RC_OK || got != 0)
		return -1;
	if (end != st->size && ftruncate(fd, (off_t)st->size) != 0) {
		*wrote = true;
		return -1;
	}
	return 0;
}

/* The bytes a file will take once written with its holes (whole blocks), up to limit. */
static uint64_t file_need(struct walk *w, const struct tree_stat *st, uint64_t limit)
{
	uint64_t off = 0, sum = 0;

	while (off < st->size && sum <= limit) {
		uint64_t ds, de;

		if (tree_data_extent(w->t, st->ino, off, &ds, &de) != RC_OK)
			return st->size; /* it will not read: what it claims */
		if (ds >= st->size)
			break;
		if (de > st->size || de <= ds)
			de = st->size;
		ds -= ds % w->block; /* whole blocks */
		if (de % w->block && de <= UINT64_MAX - w->block)
			de += w->block - de % w->block;
		if (ds < off)
			ds = off;
		sum = de - ds > UINT64_MAX - sum ? UINT64_MAX : sum + (de - ds);
		off = de;
	}
	return sum;
}

/* The measuring pass's refusal: "takes N bytes" / "makes N files and folders". */
static void too_big(struct walk *w, const char *verb, uint64_t n, const char *unit, uint64_t room)
{
	fprintf(stderr,
		"psgfs-tool: %s: no space for it in %s: the extract up to it %s %llu %s, %llu "
		"are free (--no-space-check writes anyway)\n",
		w->path + 1, w->dest, verb, (unsigned long long)n, unit, (unsigned long long)room);
	w->stop = 7;
}

/* After each file or folder the measuring pass adds: does it all still fit? */
static void measure_check(struct walk *w)
{
	if (w->need > w->room)
		too_big(w, "takes", w->need, "bytes", w->room);
	else if (w->inodes_known && w->inodes > w->inodes_room)
		too_big(w, "makes", w->inodes, "files and folders", w->inodes_room);
}

static void measure_file(struct walk *w, const struct tree_stat *st)
{
	uint64_t left = w->room > w->need ? w->room - w->need : 0;
	uint64_t n = file_need(w, st, left);

	w->inodes++;
	w->need = n > UINT64_MAX - w->need ? UINT64_MAX : w->need + n;
	measure_check(w);
}

static void walk_file(struct walk *w, const struct tree_stat *st, const char *name)
{
	struct sha256 sha;
	int fd = -1;
	uint64_t got = 0;
	bool ok, wrote = false;

	w->files++;
	if (w->measure) {
		measure_file(w, st);
		return;
	}
	if (w->list)
		fprintf(w->list, "%s\t%llu\n", w->path + 1, (unsigned long long)st->size);
	if (w->dest) {
		fd = dest_here(w)
			 ? openat(w->dfd, name,
				  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)
			 : -1;
		if (fd < 0) {
			if (dest_here(w) && is_no_space(errno))
				no_space(w, "file");
			w->failed++;
			return;
		}
		ok = write_sparse(w, st, fd, &wrote) == 0;
		got = ok ? st->size : 0;
	} else {
		sha256_init(&sha);
		ok = copy_file(w->t, st->ino, NULL, w->rows ? &sha : NULL, &got) == 0 &&
		     got == st->size;
	}
	if (!ok && wrote && is_no_space(errno)) {
		no_space(w, "file");
	} else if (!ok && wrote) {
		fprintf(stderr, "psgfs-tool: %s: cannot write: %s\n", w->path + 1, strerror(errno));
	} else if (!ok && !w->rows) { /* a manifest shows it as a row */
		fprintf(stderr, "psgfs-tool: %s: input/output error\n", w->path + 1);
	}
	if (!ok)
		w->failed++;
	if (w->rows) {
		char hex[SHA256_HEX_LEN + 1];

		sha256_hex(&sha, hex);
		rows_add(w->rows, "%s\t%llu\t%s\n", w->path + 1, (unsigned long long)st->size,
			 ok ? hex : "EIO");
	}
	w->bytes += got;
	if (fd >= 0 && close(fd) != 0 && ok) {
		fprintf(stderr, "psgfs-tool: %s: cannot write: %s\n", w->path + 1, strerror(errno));
		w->failed++;
	}
}

/* Lists ino onto the stack (path: w->path up to path_len); dest: w->dfd is its copy (extract),
 * cfd its descriptor to switch to, or -1. */
static void push_dir(struct walk *w, tree_ino ino, size_t path_len, int cfd)
{
	struct tree_dir *d;
	struct frame *f;
	struct stat cst;

	if (tree_opendir(w->t, ino, &d) != RC_OK) {
		w->path[path_len] = '\0';
		if (w->rows)
			rows_add(w->rows, "%s/\t-\tEIO\n", w->path + (path_len > 0));
		else if (!w->measure)
			fprintf(stderr, "psgfs-tool: %s/: cannot list\n", w->path);
		w->failed++;
		if (cfd >= 0)
			close(cfd);
		return;
	}
	f = xgrow_n(w->st, w->depth, &w->st_cap, sizeof *f, 64);
	if (!f || (cfd >= 0 && fstat(cfd, &cst) != 0)) {
		fprintf(stderr, "psgfs-tool: %s\n", f ? strerror(errno) : "out of memory");
		w->stop = 1;
		tree_closedir(w->t, d);
		if (cfd >= 0)
			close(cfd);
		return;
	}
	w->st = f;
	f = &w->st[w->depth++];
	*f = (struct frame){.d = d, .path_len = path_len, .dest = cfd >= 0};
	if (cfd >= 0) {
		f->dev = cst.st_dev;
		f->ino = cst.st_ino;
		if (w->dfd >= 0)
			close(w->dfd);
		w->dfd = cfd;
	}
}

/* Done with the top directory: back to its parent's copy through "..", which must be the
 * directory the walk came from. */
static void pop_dir(struct walk *w)
{
	struct frame *f = &w->st[--w->depth];
	const struct frame *up = NULL;
	struct stat st;
	int ufd;

	tree_closedir(w->t, f->d);
	if (!f->dest || w->dfd < 0)
		return;
	for (size_t k = w->depth; k-- > 0 && !up;)
		if (w->st[k].dest)
			up = &w->st[k];
	ufd = up ? openat(w->dfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	close(w->dfd);
	w->dfd = -1;
	if (!up)
		return;
	if (ufd < 0 || fstat(ufd, &st) != 0 || st.st_dev != up->dev || st.st_ino != up->ino) {
		fprintf(stderr, "psgfs-tool: %s: moved while extracting\n", w->dest);
		if (ufd >= 0)
			close(ufd);
		w->stop = 1;
		return;
	}
	w->dfd = ufd;
}

static void walk_dir_entry(struct walk *w, tree_ino ino, const char *name)
{
	size_t len = strlen(w->path);
	int cfd = -1;

	w->dirs++;
	if (w->measure) {
		w->inodes++;
		w->need = w->block > UINT64_MAX - w->need ? UINT64_MAX : w->need + w->block;
		measure_check(w); /* a tree of folders alone can be too much too */
	}
	if (w->list)
		fprintf(w->list, "%s/\n", w->path + 1);
	if (w->rows)
		rows_add(w->rows, "%s/\t-\t-\n", w->path + 1);
	if (w->dest && !w->measure) {
		if (!dest_here(w) || mkdirat(w->dfd, name, 0755) != 0) {
			if (dest_here(w) && is_no_space(errno))
				no_space(w, "folder");
			w->failed++;
		} else {
			cfd = openat(w->dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0) { /* said once here: what it holds then fails without a word */
				fprintf(stderr, "psgfs-tool: %s: %s\n", w->path + 1,
					strerror(errno));
				w->failed++;
			}
		}
	}
	push_dir(w, ino, len, cfd);
}

static void walk_entry(struct walk *w)
{
	struct frame *f = &w->st[w->depth - 1];
	size_t i = f->next++;
	const char *name = tree_dir_name(f->d, i);
	tree_ino cino = tree_dir_ino(f->d, i);
	struct tree_stat st;

	if (!path_set(w, f->path_len, name))
		return;
	if (tree_getattr(w->t, cino, &st) != RC_OK) {
		if (w->rows)
			rows_add(w->rows, "%s\t?\tEIO\n", w->path + 1);
		else if (!w->measure)
			fprintf(stderr, "psgfs-tool: %s: input/output error\n", w->path + 1);
		w->failed++;
	} else if (st.type == TT_LINK) {
		walk_link(w, cino, name);
	} else if (st.type == TT_DIR) {
		walk_dir_entry(w, cino, name);
	} else {
		walk_file(w, &st, name);
	}
}

/* The whole tree; root_fd: extract's destination (taken over), else -1. */
static void walk_tree(struct walk *w, int root_fd)
{
	w->dfd = -1;
	if (!path_set(w, 0, "")) {
		if (root_fd >= 0)
			close(root_fd);
		return;
	}
	w->path[0] = '\0';
	push_dir(w, TREE_ROOT_INO, 0, root_fd);
	while (w->depth && !w->stop) {
		const struct frame *f = &w->st[w->depth - 1];

		if (f->next == tree_dir_count(f->d))
			pop_dir(w);
		else
			walk_entry(w);
	}
	while (w->depth)
		pop_dir(w);
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = -1;
	free(w->st);
	w->st = NULL;
	w->st_cap = 0;
	free(w->path);
	w->path = NULL;
	w->path_cap = 0;
}

struct args {
	struct tree_opts o;
	char *hierarchy_text;
	const char *cmd, *file, *arg; /* arg: PATH of ls/cat, DIR of extract, or NULL */
	bool assets_given;	      /* --assets was given */
	bool space_check;	      /* extract: refuse what does not fit (not --no-space-check) */
};

static int set_max_assets(struct args *a, const char *s)
{
	char why[160];

	if (cliopt_max_assets(s, &a->o.max_assets, why, sizeof why) != RC_OK) {
		fprintf(stderr, "psgfs-tool: bad --max-assets '%s': %s\n", s, why);
		return 2;
	}
	return 0;
}

static int set_cache_size(struct args *a, const char *s)
{
	char why[160];

	if (cliopt_cache_size(s, &a->o.cache_bytes, why, sizeof why) != RC_OK) {
		fprintf(stderr, "psgfs-tool: bad --cache-size '%s': %s\n", s, why);
		return 2;
	}
	return 0;
}

/* Read and checked here, as psgfs does, so both refuse the same files the same way. */
static int set_hierarchy(struct args *a, const char *path)
{
	char why[160];
	enum rc r;

	free(a->hierarchy_text);
	a->hierarchy_text = NULL;
	r = cliopt_read_text(path, CLIOPT_HIERARCHY_MAX, &a->hierarchy_text, why, sizeof why);
	if (r != RC_OK) {
		fprintf(stderr, "psgfs-tool: hierarchy file %s: %s\n", path, why);
		return r == RC_NOMEM ? 1 : 2;
	}
	a->o.hierarchy_path = path;
	a->o.hierarchy_text = a->hierarchy_text;
	return 0;
}

static bool known_command(const char *cmd)
{
	static const char *const cmds[] = {"ls", "find", "cat", "extract", "walk", "manifest"};

	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(cmd, cmds[i]))
			return true;
	return false;
}

/* Returns -1 to go on, or the exit code (help, usage errors). */
static int parse_args(struct args *a, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"hierarchy", required_argument, NULL, 'H'},
	    {"zup", no_argument, NULL, 'z'},
	    {"yup", no_argument, NULL, 'y'},
	    {"cache-size", required_argument, NULL, 'c'},
	    {"max-assets", required_argument, NULL, 'm'},
	    {"sniff-all", no_argument, NULL, 'S'},
	    {"assets", required_argument, NULL, 'a'},
	    {"no-space-check", no_argument, NULL, 'N'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, rc = 0;

	while (rc == 0 && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'H') {
			rc = set_hierarchy(a, optarg);
		} else if (c == 'z') {
			/* Z-up is the default: accepted for old scripts */
		} else if (c == 'y') {
			a->o.yup = true;
		} else if (c == 'c') {
			rc = set_cache_size(a, optarg);
		} else if (c == 'm') {
			rc = set_max_assets(a, optarg);
		} else if (c == 'S') {
			a->o.sniff_all = true;
		} else if (c == 'a') {
			a->o.assets_files = !strcmp(optarg, "files");
			a->assets_given = true;
			if (!a->o.assets_files && strcmp(optarg, "dirs") != 0) {
				fprintf(stderr, "psgfs-tool: bad --assets '%s': dirs or files\n",
					optarg);
				rc = 2;
			}
		} else if (c == 'N') {
			a->space_check = false;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (rc)
		return rc;
	if (argc - optind < 2) {
		usage(stderr);
		return 2;
	}
	a->cmd = argv[optind];
	a->file = argv[optind + 1];
	a->arg = argc - optind > 2 ? argv[optind + 2] : NULL;
	if (!known_command(a->cmd)) {
		fprintf(stderr, "psgfs-tool: unknown command '%s'\n", a->cmd);
		return 2;
	}
	if ((!strcmp(a->cmd, "cat") || !strcmp(a->cmd, "extract")) && !a->arg) {
		usage(stderr);
		return 2;
	}
	return -1;
}

static int cmd_ls(struct tree *t, const char *path)
{
	struct tree_stat st;
	struct tree_dir *d;

	if (tree_resolve(t, path ? path : "", &st) != RC_OK ||
	    tree_opendir(t, st.ino, &d) != RC_OK) {
		fprintf(stderr, "psgfs-tool: no such directory\n");
		return 1;
	}
	for (size_t i = 0; i < tree_dir_count(d); i++) {
		struct tree_stat cs;

		if (tree_getattr(t, tree_dir_ino(d, i), &cs) != RC_OK)
			printf("?\t?\t%llu\t%s\n", (unsigned long long)tree_dir_ino(d, i),
			       tree_dir_name(d, i));
		else
			printf("%c\t%llu\t%llu\t%s\n",
			       cs.type == TT_DIR    ? 'd'
			       : cs.type == TT_LINK ? 'l'
						    : 'f',
			       (unsigned long long)cs.size, (unsigned long long)cs.ino,
			       tree_dir_name(d, i));
	}
	tree_closedir(t, d);
	return 0;
}

static int cmd_cat(struct tree *t, const char *path)
{
	struct tree_stat st;

	if (tree_resolve(t, path, &st) != RC_OK || st.type != TT_FILE) {
		fprintf(stderr, "psgfs-tool: %s: no such file\n", path);
		return 1;
	}
	if (copy_file(t, st.ino, stdout, NULL, NULL) != 0) {
		fprintf(stderr, "psgfs-tool: %s: input/output error\n", path);
		return 1;
	}
	return 0;
}

/* extract's first pass: does what it will write fit in DEST (made, empty)? 0, or 7 with
 * the line naming the file that would not fit. */
static int check_space(struct tree *t, const char *dest)
{
	struct walk m = {.t = t, .dest = dest, .measure = true};
	struct statvfs vfs;

	if (statvfs(dest, &vfs) != 0 || vfs.f_blocks == 0)
		return 0; /* cannot tell (some FUSE file systems say 0): the writes will say */
	m.block = vfs.f_frsize ? vfs.f_frsize : 4096;
	m.room = (uint64_t)vfs.f_bavail * m.block;
	m.inodes_known = vfs.f_files != 0; /* 0 files: no fixed count (btrfs, some FUSE) */
	m.inodes_room = vfs.f_favail;	   /* 0 when the table is full: nothing fits */
	walk_tree(&m, -1);
	return m.stop == 7 ? 7 : 0;
}

/* find, extract, walk and manifest: one depth-first walk with different outputs. A manifest
 * shows the files that fail to read as rows, so its exit status is 0 even then. */
static int cmd_walk(struct tree *t, const struct args *a)
{
	struct rows rows = {0};
	struct walk w = {.t = t};
	int root_fd = -1;

	if (!strcmp(a->cmd, "manifest")) {
		int rc;

		w.rows = &rows;
		walk_tree(&w, -1);
		rc = rows_print(&rows);
		return w.stop ? w.stop : rc;
	}
	if (!strcmp(a->cmd, "find"))
		w.list = stdout;
	if (!strcmp(a->cmd, "extract")) {
		int rc;

		w.dest = a->arg;
		if (mkdir(w.dest, 0755) != 0 ||
		    (root_fd = open(w.dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			fprintf(stderr, "psgfs-tool: %s: %s\n", w.dest, strerror(errno));
			return 1;
		}
		rc = a->space_check ? check_space(t, w.dest) : 0;
		if (rc) {
			close(root_fd);
			rmdir(w.dest);
			return rc;
		}
	}
	walk_tree(&w, root_fd);
	if (!strcmp(a->cmd, "walk")) {
		struct cache_stats cs;
		struct tree_counters tc;

		tree_get_stats(t, &cs, &tc);
		printf("dirs %lu\nfiles %lu\nbytes %llu\nfailed %lu\n", w.dirs, w.files, w.bytes,
		       w.failed);
		printf("cache_budget %llu\ncache_evictions %llu\n", (unsigned long long)cs.budget,
		       (unsigned long long)cs.evictions);
	}
	return w.stop ? w.stop : w.failed ? 1 : 0;
}

static bool is_archive_file(const char *path)
{
	uint8_t head[64];
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t got = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
			  ? pread(fd, head, sizeof head, 0)
			  : -1;

	if (fd >= 0)
		close(fd);
	return got > 0 && arc_detect(head, (size_t)got);
}

int main(int argc, char **argv)
{
	struct args a = {.space_check = true};
	struct tree *t;
	enum tree_open_fail f;
	char why[512];
	int rc;

	if (argc > 1 && !strcmp(argv[1], "pack"))
		return pack_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "pack-stream"))
		return pack_stream_main(argc - 1, argv + 1);
	rc = parse_args(&a, argc, argv);

	if (rc >= 0) {
		free(a.hierarchy_text);
		return rc;
	}
	/* extract of an archive unpacks it as the unpacking tools do: the loose files. */
	if (!strcmp(a.cmd, "extract") && !a.assets_given && is_archive_file(a.file))
		a.o.assets_files = true;
	f = tree_open(a.file, &a.o, &t, why, sizeof why);
	if (f != TREE_FAIL_NONE) {
		fprintf(stderr, "psgfs-tool: %s: %s\n", a.file, why);
		free(a.hierarchy_text);
		return fail_code(f);
	}
	if (!strcmp(a.cmd, "ls"))
		rc = cmd_ls(t, a.arg);
	else if (!strcmp(a.cmd, "cat"))
		rc = cmd_cat(t, a.arg);
	else
		rc = cmd_walk(t, &a);
	tree_close(t);
	free(a.hierarchy_text);
	return rc;
}
