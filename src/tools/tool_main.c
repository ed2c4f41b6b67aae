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
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/base/cliopt.h"
#include "psgfs/base/sha256.h"
#include "psgfs/formats/archive.h"
#include "psgfs/tree/tree.h"

#include "pack.h"

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
	    "  extract FILE DIR    write the whole tree under DIR (DIR must not exist)\n"
	    "  walk FILE           render every file; print counts; list files that fail\n"
	    "  pack DIR OUT        write the archive OUT from the folder DIR (EB v3, BIGF, BIG4;\n"
	    "                      options and exit codes: psgfs-tool pack --help)\n"
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
	    "\n"
	    "walk also prints the cache budget and how many entries were evicted.\n"
	    "\n"
	    "exit status: 0 ok, 1 some files failed to read (walk, extract) or internal error,\n"
	    "2 usage, 3 cannot open FILE, 4 not a PSG/PSK/PSA file or archive, 5 too damaged to "
	    "mount\n");
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

struct walk {
	struct tree *t;
	FILE *list;	   /* find: paths go here */
	const char *dest;  /* extract: destination root */
	struct rows *rows; /* manifest: entries go here */
	unsigned long files, dirs, failed;
	unsigned long long bytes;
};

static void walk_link(struct walk *w, tree_ino ino, const char *child)
{
	char *target = NULL;

	w->files++;
	if (tree_readlink(w->t, ino, &target) != RC_OK) {
		w->failed++;
		if (w->rows)
			rows_add(w->rows, "%s\t->\tEIO\n", child + 1);
		return;
	}
	if (w->list)
		fprintf(w->list, "%s -> %s\n", child + 1, target);
	if (w->rows)
		rows_add(w->rows, "%s\t->\t%s\n", child + 1, target);
	if (w->dest) {
		char p[8192];

		snprintf(p, sizeof p, "%s%s", w->dest, child);
		if (symlink(target, p) != 0)
			w->failed++;
	}
	free(target);
}

static void walk_file(struct walk *w, const struct tree_stat *st, const char *child)
{
	struct sha256 sha;
	FILE *out = NULL;
	uint64_t got = 0;
	bool ok;

	w->files++;
	if (w->list)
		fprintf(w->list, "%s\t%llu\n", child + 1, (unsigned long long)st->size);
	if (w->dest) {
		char p[8192];

		snprintf(p, sizeof p, "%s%s", w->dest, child);
		out = fopen(p, "wb");
		if (!out) {
			w->failed++;
			return;
		}
	}
	sha256_init(&sha);
	ok = copy_file(w->t, st->ino, out, w->rows ? &sha : NULL, &got) == 0 && got == st->size;
	if (!ok) {
		if (!w->rows) /* a manifest shows it as a row */
			fprintf(stderr, "psgfs-tool: %s: input/output error\n", child + 1);
		w->failed++;
	}
	if (w->rows) {
		char hex[SHA256_HEX_LEN + 1];

		sha256_hex(&sha, hex);
		rows_add(w->rows, "%s\t%llu\t%s\n", child + 1, (unsigned long long)st->size,
			 ok ? hex : "EIO");
	}
	w->bytes += got;
	if (out)
		fclose(out);
}

static void walk_dir(struct walk *w, tree_ino ino, const char *path)
{
	struct tree_dir *d;

	if (tree_opendir(w->t, ino, &d) != RC_OK) {
		if (w->rows)
			rows_add(w->rows, "%s/\t-\tEIO\n", path + 1);
		else
			fprintf(stderr, "psgfs-tool: %s/: cannot list\n", path);
		w->failed++;
		return;
	}
	for (size_t i = 0; i < tree_dir_count(d); i++) {
		char child[4096];
		struct tree_stat st;
		tree_ino cino = tree_dir_ino(d, i);

		snprintf(child, sizeof child, "%s/%s", path, tree_dir_name(d, i));
		if (tree_getattr(w->t, cino, &st) != RC_OK) {
			if (w->rows)
				rows_add(w->rows, "%s\t?\tEIO\n", child + 1);
			else
				fprintf(stderr, "psgfs-tool: %s: input/output error\n", child + 1);
			w->failed++;
			continue;
		}
		if (st.type == TT_LINK) {
			walk_link(w, cino, child);
		} else if (st.type == TT_DIR) {
			w->dirs++;
			if (w->list)
				fprintf(w->list, "%s/\n", child + 1);
			if (w->rows)
				rows_add(w->rows, "%s/\t-\t-\n", child + 1);
			if (w->dest) {
				char p[8192];

				snprintf(p, sizeof p, "%s%s", w->dest, child);
				if (mkdir(p, 0755) != 0)
					w->failed++;
			}
			walk_dir(w, cino, child);
		} else {
			walk_file(w, &st, child);
		}
	}
	tree_closedir(w->t, d);
}

struct args {
	struct tree_opts o;
	char *hierarchy_text;
	const char *cmd, *file, *arg; /* arg: PATH of ls/cat, DIR of extract, or NULL */
	bool assets_given;	      /* --assets was given */
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

/* find, extract, walk and manifest: one depth-first walk with different outputs. A manifest
 * shows the files that fail to read as rows, so its exit status is 0 even then. */
static int cmd_walk(struct tree *t, const char *cmd, const char *dest)
{
	struct rows rows = {0};
	struct walk w = {.t = t};

	if (!strcmp(cmd, "manifest")) {
		w.rows = &rows;
		walk_dir(&w, TREE_ROOT_INO, "");
		return rows_print(&rows);
	}
	if (!strcmp(cmd, "find"))
		w.list = stdout;
	if (!strcmp(cmd, "extract")) {
		w.dest = dest;
		if (mkdir(w.dest, 0755) != 0) {
			fprintf(stderr, "psgfs-tool: %s: %s\n", w.dest, strerror(errno));
			return 1;
		}
	}
	walk_dir(&w, TREE_ROOT_INO, "");
	if (!strcmp(cmd, "walk")) {
		struct cache_stats cs;
		struct tree_counters tc;

		tree_get_stats(t, &cs, &tc);
		printf("dirs %lu\nfiles %lu\nbytes %llu\nfailed %lu\n", w.dirs, w.files, w.bytes,
		       w.failed);
		printf("cache_budget %llu\ncache_evictions %llu\n", (unsigned long long)cs.budget,
		       (unsigned long long)cs.evictions);
	}
	return w.failed ? 1 : 0;
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
	struct args a = {0};
	struct tree *t;
	enum tree_open_fail f;
	char why[512];
	int rc;

	if (argc > 1 && !strcmp(argv[1], "pack"))
		return pack_main(argc - 1, argv + 1);
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
		rc = cmd_walk(t, a.cmd, a.arg);
	tree_close(t);
	free(a.hierarchy_text);
	return rc;
}
