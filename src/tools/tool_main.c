/*
 * psgfs-tool: the mounted tree without FUSE. List, print, extract or walk every file of a
 * PSG/PSK/PSA exactly as psgfs would show it. Exit codes match psgfs (see usage).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "psgfs/tree.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: psgfs-tool [options] COMMAND FILE [ARG]\n"
	    "\n"
	    "commands:\n"
	    "  ls FILE [PATH]      list a directory of the tree (type, size, inode, name)\n"
	    "  find FILE           every path in the tree with its size, depth-first, sorted\n"
	    "  cat FILE PATH       write one file of the tree to standard output\n"
	    "  extract FILE DIR    write the whole tree under DIR (DIR must not exist)\n"
	    "  walk FILE           render every file; print counts; list files that fail\n"
	    "\n"
	    "options:\n"
	    "  --hierarchy FILE    PSG: bone hierarchy TSV (as -o hierarchy= of psgfs)\n"
	    "  --zup               PSG: Z-up export\n"
	    "  --cache-size BYTES  cache budget (default 64M)\n"
	    "\n"
	    "exit status: 0 ok, 1 some files failed to read (walk, extract) or internal error,\n"
	    "2 usage, 3 cannot open FILE, 4 not a PSG/PSK/PSA file, 5 too damaged to mount\n");
}

static int fail_code(enum tree_open_fail f)
{
	return f == TREE_FAIL_OPEN ? 3 : f == TREE_FAIL_FORMAT ? 4 : f == TREE_FAIL_DAMAGED ? 5 : 1;
}

/* Stream one file; returns 0 or -1 (EIO-like failure of the view). */
static int copy_file(struct tree *t, tree_ino ino, FILE *out, uint64_t *bytes)
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
		off += got;
	}
	if (bytes)
		*bytes = off;
	return 0;
}

struct walk {
	struct tree *t;
	FILE *list;	  /* find: paths go here */
	const char *dest; /* extract: destination root */
	unsigned long files, dirs, failed;
	unsigned long long bytes;
};

static void walk_dir(struct walk *w, tree_ino ino, const char *path)
{
	struct tree_dir *d;

	if (tree_opendir(w->t, ino, &d) != RC_OK) {
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
			fprintf(stderr, "psgfs-tool: %s: input/output error\n", child + 1);
			w->failed++;
			continue;
		}
		if (st.type == TT_LINK) {
			char *target = NULL;

			w->files++;
			if (tree_readlink(w->t, cino, &target) != RC_OK) {
				w->failed++;
			} else {
				if (w->list)
					fprintf(w->list, "%s -> %s\n", child + 1, target);
				if (w->dest) {
					char p[8192];

					snprintf(p, sizeof p, "%s%s", w->dest, child);
					if (symlink(target, p) != 0)
						w->failed++;
				}
			}
			free(target);
			continue;
		}
		if (st.type == TT_DIR) {
			w->dirs++;
			if (w->list)
				fprintf(w->list, "%s/\n", child + 1);
			if (w->dest) {
				char p[8192];

				snprintf(p, sizeof p, "%s%s", w->dest, child);
				if (mkdir(p, 0755) != 0)
					w->failed++;
			}
			walk_dir(w, cino, child);
			continue;
		}
		w->files++;
		if (w->list)
			fprintf(w->list, "%s\t%llu\n", child + 1, (unsigned long long)st.size);
		FILE *out = NULL;
		uint64_t got = 0;

		if (w->dest) {
			char p[8192];

			snprintf(p, sizeof p, "%s%s", w->dest, child);
			out = fopen(p, "wb");
			if (!out) {
				w->failed++;
				continue;
			}
		}
		if (copy_file(w->t, cino, out, &got) != 0 || got != st.size) {
			fprintf(stderr, "psgfs-tool: %s: input/output error\n", child + 1);
			w->failed++;
		}
		w->bytes += got;
		if (out)
			fclose(out);
	}
	tree_closedir(w->t, d);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"hierarchy", required_argument, NULL, 'H'},
	    {"zup", no_argument, NULL, 'z'},
	    {"yup", no_argument, NULL, 'y'},
	    {"cache-size", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct tree_opts o = {0};
	struct tree *t;
	struct tree_stat st;
	enum tree_open_fail f;
	const char *cmd, *file;
	char why[512];
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			o.hierarchy_path = optarg;
			break;
		case 'z':
			break; /* Z-up is the default now */
		case 'y':
			o.yup = true;
			break;
		case 'c':
			o.cache_bytes = strtoull(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind];
	file = argv[optind + 1];
	if (strcmp(cmd, "ls") && strcmp(cmd, "find") && strcmp(cmd, "cat") &&
	    strcmp(cmd, "extract") && strcmp(cmd, "walk")) {
		fprintf(stderr, "psgfs-tool: unknown command '%s'\n", cmd);
		return 2;
	}
	if ((!strcmp(cmd, "cat") || !strcmp(cmd, "extract")) && argc - optind < 3) {
		usage(stderr);
		return 2;
	}
	f = tree_open(file, &o, &t, why, sizeof why);
	if (f != TREE_FAIL_NONE) {
		fprintf(stderr, "psgfs-tool: %s: %s\n", file, why);
		return fail_code(f);
	}
	if (!strcmp(cmd, "ls")) {
		struct tree_dir *d;

		if (tree_resolve(t, argc - optind > 2 ? argv[optind + 2] : "", &st) != RC_OK ||
		    tree_opendir(t, st.ino, &d) != RC_OK) {
			fprintf(stderr, "psgfs-tool: no such directory\n");
			rc = 1;
		} else {
			for (size_t i = 0; i < tree_dir_count(d); i++) {
				struct tree_stat cs;

				if (tree_getattr(t, tree_dir_ino(d, i), &cs) != RC_OK)
					printf("?\t?\t%llu\t%s\n",
					       (unsigned long long)tree_dir_ino(d, i),
					       tree_dir_name(d, i));
				else
					printf("%c\t%llu\t%llu\t%s\n",
					       cs.type == TT_DIR    ? 'd'
					       : cs.type == TT_LINK ? 'l'
								    : 'f',
					       (unsigned long long)cs.size,
					       (unsigned long long)cs.ino, tree_dir_name(d, i));
			}
			tree_closedir(t, d);
		}
	} else if (!strcmp(cmd, "cat")) {
		if (tree_resolve(t, argv[optind + 2], &st) != RC_OK || st.type != TT_FILE) {
			fprintf(stderr, "psgfs-tool: %s: no such file\n", argv[optind + 2]);
			rc = 1;
		} else if (copy_file(t, st.ino, stdout, NULL) != 0) {
			fprintf(stderr, "psgfs-tool: %s: input/output error\n", argv[optind + 2]);
			rc = 1;
		}
	} else {
		struct walk w = {.t = t};

		if (!strcmp(cmd, "find"))
			w.list = stdout;
		if (!strcmp(cmd, "extract")) {
			w.dest = argv[optind + 2];
			if (mkdir(w.dest, 0755) != 0) {
				fprintf(stderr, "psgfs-tool: %s: %s\n", w.dest, strerror(errno));
				tree_close(t);
				return 1;
			}
		}
		walk_dir(&w, TREE_ROOT_INO, "");
		if (!strcmp(cmd, "walk"))
			printf("dirs %lu\nfiles %lu\nbytes %llu\nfailed %lu\n", w.dirs, w.files,
			       w.bytes, w.failed);
		rc = w.failed ? 1 : 0;
	}
	tree_close(t);
	return rc;
}
