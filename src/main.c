/*
 * psgfs: mount a Skate 3 PSG arena or an Unreal PSK/PSKX/PSA file read-only.
 * Options and validation happen before anything is mounted; each failure class has its own
 * exit code (see usage() and man/psgfs.1).
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse/ll.h"
#include "psgfs/tree.h"

enum exit_code {
	EXIT_OK = 0,
	EXIT_INTERNAL = 1, /* out of memory, unexpected library failure */
	EXIT_USAGE = 2,	   /* bad command line or option value */
	EXIT_OPEN = 3,	   /* the file cannot be opened or read */
	EXIT_FORMAT = 4,   /* not a PSG, PSK or PSA file */
	EXIT_DAMAGED = 5,  /* recognised, but too damaged to mount */
	EXIT_MOUNT = 6,	   /* mount failed (mount point missing or not a directory, /dev/fuse) */
};

struct opts {
	char *file;
	char *mnt;
	char *cache_size;
	char *hierarchy;
	char *stats;
	int zup;
	int yup;
	unsigned umask;
	int show_help;
	int show_version;
	int nonopts;
};

#define OPT(t, p)                                                                                  \
	{                                                                                          \
		t, offsetof(struct opts, p), 1                                                     \
	}
static const struct fuse_opt opt_spec[] = {
    OPT("cache_size=%s", cache_size),
    OPT("hierarchy=%s", hierarchy),
    OPT("stats=%s", stats),
    OPT("zup", zup),
    OPT("yup", yup),
    OPT("umask=%o", umask),
    OPT("-h", show_help),
    OPT("--help", show_help),
    OPT("-V", show_version),
    OPT("--version", show_version),
    FUSE_OPT_END,
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: psgfs [options] FILE MOUNTPOINT\n"
	    "\n"
	    "Mount a Skate 3 PS3 arena (.psg) or an Unreal PSK/PSKX mesh or PSA animation\n"
	    "read-only as a directory tree. Unmount with: fusermount3 -u MOUNTPOINT\n"
	    "\n"
	    "options:\n"
	    "  -h, --help             show this help and exit\n"
	    "  -V, --version          show the version and exit\n"
	    "  -f                     stay in the foreground\n"
	    "  -d                     debug output (implies -f)\n"
	    "  -s                     single-threaded\n"
	    "  -o cache_size=SIZE     bytes of decoded data kept in memory (K, M, G suffixes;\n"
	    "                         default 64M, minimum 1M)\n"
	    "  -o hierarchy=FILE      PSG: TSV of 'bone<TAB>parent' names for the skeleton\n"
	    "  -o zup                 PSG: export the .psk Z-up instead of Y-up\n"
	    "  -o stats=FILE          write request/cache counters to FILE on SIGUSR1 and at exit\n"
	    "  -o OPT[,OPT...]        other FUSE mount options (allow_other, ...)\n"
	    "\n"
	    "exit status:\n"
	    "  0 success, 1 internal error, 2 usage error, 3 cannot open or read FILE,\n"
	    "  4 FILE is not a PSG/PSK/PSA file, 5 FILE is too damaged to mount,\n"
	    "  6 mounting failed\n");
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct opts *o = data;

	(void)outargs;
	if (key == FUSE_OPT_KEY_NONOPT) {
		o->nonopts++;
		if (!o->file) {
			o->file = strdup(arg);
			return o->file ? 0 : -1;
		}
		if (o->nonopts > 2) {
			fprintf(stderr, "psgfs: unexpected argument '%s'\n", arg);
			return -1;
		}
		o->mnt = strdup(arg);
		if (!o->mnt)
			return -1;
	}
	return 1; /* keep: the mount point and FUSE's own options */
}

/* "64M" -> bytes; false when malformed or out of range. */
static bool parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;
	unsigned long long mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1ull << 30;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > SIZE_MAX / mul)
		return false;
	*out = (size_t)(v * mul);
	return true;
}

static struct psgfs_ll g_ll;
static const char *g_stats_path;

static void write_stats(void)
{
	FILE *f;

	if (!g_stats_path)
		return;
	f = fopen(g_stats_path, "w");
	if (!f)
		return;
	psgfs_ll_write_stats(&g_ll, f);
	fclose(f);
}

/* SIGUSR1 is blocked in every thread and taken here, so writing stats is not in a handler. */
static void *stats_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;

	for (;;) {
		if (sigwait(set, &sig) == 0 && sig == SIGUSR1)
			write_stats();
	}
	return NULL;
}

static int fail_code(enum tree_open_fail f)
{
	switch (f) {
	case TREE_FAIL_OPEN:
		return EXIT_OPEN;
	case TREE_FAIL_FORMAT:
		return EXIT_FORMAT;
	case TREE_FAIL_DAMAGED:
		return EXIT_DAMAGED;
	default:
		return EXIT_INTERNAL;
	}
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cl = {0};
	struct fuse_loop_config *loop_cfg = NULL;
	struct fuse_session *se = NULL;
	struct tree_opts topts = {0};
	struct opts o = {0};
	struct tree *tree = NULL;
	struct stat mst;
	int serr;
	static sigset_t usr1;
	pthread_t stats_tid;
	enum tree_open_fail f;
	char why[512];
	char fsname[PATH_MAX + 16];
	int rc = EXIT_USAGE;

	/* Before any thread exists: glibc would give each worker its own malloc arena, and pages
	 * freed by cache evictions in one arena are not reused by another, so RSS would drift far
	 * above the cache budget (64M cache, whole-tree cat: 99 MB peak RssAnon -> 86 MB). */
	mallopt(M_ARENA_MAX, 2);

	if (fuse_opt_parse(&args, &o, opt_spec, opt_proc) != 0)
		goto out;
	if (o.show_help) {
		usage(stdout);
		rc = EXIT_OK;
		goto out;
	}
	if (o.show_version) {
		printf("psgfs %s (libfuse %s)\n", PSGFS_VERSION, fuse_pkgversion());
		rc = EXIT_OK;
		goto out;
	}
	if (!o.file || !o.mnt) {
		fprintf(stderr, "psgfs: missing %s (usage: psgfs [options] FILE MOUNTPOINT)\n",
			o.file ? "MOUNTPOINT" : "FILE");
		goto out;
	}
	if (o.cache_size &&
	    (!parse_size(o.cache_size, &topts.cache_bytes) || topts.cache_bytes < (1u << 20))) {
		fprintf(stderr, "psgfs: bad cache_size '%s' (want e.g. 64M, at least 1M)\n",
			o.cache_size);
		goto out;
	}
	if (o.hierarchy && access(o.hierarchy, R_OK) != 0) {
		fprintf(stderr, "psgfs: %s: cannot read hierarchy file: %s\n", o.hierarchy,
			strerror(errno));
		goto out;
	}
	topts.hierarchy_path = o.hierarchy;
	topts.yup = o.yup;

	/* Validate the container before anything is mounted. */
	f = tree_open(o.file, &topts, &tree, why, sizeof why);
	if (f != TREE_FAIL_NONE) {
		fprintf(stderr, "psgfs: %s: %s\n", o.file, why);
		rc = fail_code(f);
		goto out;
	}

	/* libfuse calls a missing mount point a usage error and mounts over a regular file (a
	 * mount whose root then fails every stat): both are mount failures here. */
	serr = stat(o.mnt, &mst) != 0 ? errno : S_ISDIR(mst.st_mode) ? 0 : ENOTDIR;
	if (serr) {
		fprintf(stderr, "psgfs: %s: cannot mount on %s: %s\n", o.file, o.mnt,
			strerror(serr));
		rc = EXIT_MOUNT;
		goto out;
	}
	if (fuse_parse_cmdline(&args, &cl) != 0 || !cl.mountpoint)
		goto out;

	g_ll.tree = tree;
	g_ll.timeout = 86400.0 * 365;
	g_ll.umask = (mode_t)o.umask;
	/* The daemon works from "/": a relative stats path is resolved here, now. */
	if (o.stats && o.stats[0] != '/') {
		char *cwd = getcwd(NULL, 0);
		char *abs = NULL;

		if (!cwd || asprintf(&abs, "%s/%s", cwd, o.stats) < 0) {
			free(cwd);
			rc = EXIT_INTERNAL;
			goto out;
		}
		free(cwd);
		free(o.stats);
		o.stats = abs;
	}
	g_stats_path = o.stats;

	/* Read-only at the kernel level: writes fail with EROFS before reaching us. */
	snprintf(fsname, sizeof fsname, "-ofsname=%s", o.file);
	if (fuse_opt_add_arg(&args, "-oro") != 0 || fuse_opt_add_arg(&args, fsname) != 0 ||
	    fuse_opt_add_arg(&args, "-odefault_permissions") != 0) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	se = fuse_session_new(&args, &psgfs_ll_ops, sizeof psgfs_ll_ops, &g_ll);
	if (!se) {
		/* libfuse has named the option it rejected; that is a usage error. */
		fprintf(stderr, "psgfs: %s: bad FUSE options (see psgfs --help)\n", o.file);
		goto out;
	}
	rc = EXIT_MOUNT;
	if (fuse_set_signal_handlers(se) != 0) {
		fprintf(stderr, "psgfs: cannot install signal handlers\n");
		goto out_session;
	}
	/* Blocked before the mount is visible, so an early SIGUSR1 waits for the stats thread
	 * instead of killing the daemon; every thread inherits the mask. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (fuse_session_mount(se, cl.mountpoint) != 0) {
		fprintf(stderr, "psgfs: %s: cannot mount on %s\n", o.file, cl.mountpoint);
		goto out_signals;
	}
	if (fuse_daemonize(cl.foreground) != 0) {
		fprintf(stderr, "psgfs: cannot daemonize\n");
		goto out_unmount;
	}
	if (pthread_create(&stats_tid, NULL, stats_thread, &usr1) == 0)
		pthread_detach(stats_tid);

	if (cl.singlethread) {
		rc = fuse_session_loop(se);
	} else {
		loop_cfg = fuse_loop_cfg_create();
		if (!loop_cfg) {
			rc = EXIT_INTERNAL;
			goto out_unmount;
		}
		fuse_loop_cfg_set_clone_fd(loop_cfg, (unsigned)cl.clone_fd);
		/* UINT_MAX means unset; libfuse 3.14 logs an error for it instead of ignoring it.
		 */
		if (cl.max_idle_threads <= 100000)
			fuse_loop_cfg_set_idle_threads(loop_cfg, cl.max_idle_threads);
		if (cl.max_threads > 0 && cl.max_threads <= 100000)
			fuse_loop_cfg_set_max_threads(loop_cfg, cl.max_threads);
		rc = fuse_session_loop_mt(se, loop_cfg);
	}
	/* The loop returns 0 after an unmount, the signal number after SIGTERM/SIGINT/SIGHUP (both
	 * clean) and -errno on failure; it has already reset fuse_session_exited() by then. */
	rc = rc >= 0 ? EXIT_OK : EXIT_INTERNAL;
	write_stats();
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out:
	fuse_loop_cfg_destroy(loop_cfg);
	tree_close(tree);
	free(cl.mountpoint);
	free(o.file);
	free(o.mnt);
	free(o.cache_size);
	free(o.hierarchy);
	free(o.stats);
	fuse_opt_free_args(&args);
	return rc;
}
