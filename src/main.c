/*
 * psgfs: mount a Skate 3 PSG arena or an Unreal PSK/PSKX/PSA file read-only.
 * Every option is checked, and the file validated, before anything is mounted; each failure
 * class has its own exit code (see usage() and man/psgfs.1) and prints one line.
 * main runs the phases in order: parse, validate options, open the file, mount, run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fuse/ll.h"
#include "psgfs/base/cliopt.h"
#include "psgfs/tree/tree.h"

enum exit_code {
	EXIT_OK = 0,
	EXIT_INTERNAL = 1, /* out of memory, unexpected library failure */
	EXIT_USAGE = 2,	   /* bad command line or option value */
	EXIT_OPEN = 3,	   /* the file cannot be opened or read */
	EXIT_FORMAT = 4,   /* not a PSG, PSK or PSA file */
	EXIT_DAMAGED = 5,  /* recognised, but too damaged to mount */
	EXIT_MOUNT = 6,	   /* mount failed (mount point missing or not a directory, /dev/fuse) */
	EXIT_CONTINUE = -1 /* not an exit: the phase succeeded */
};

/* Our own options as given (fuse_opt fills them); validate_opts turns them into tree_opts. */
struct opts {
	char *file;
	char *mnt;
	char *cache_size;
	char *hierarchy;
	char *stats;
	char *max_assets;
	int zup;
	int yup;
	int sniff_all;
	char *umask;
	char *mods;
	char *assets;
	char *layout;
	int show_help;
	int show_version;
	int nonopts;
};

/* Everything a run holds, so each phase is a short function and teardown is one place. */
struct daemon {
	struct fuse_args args;
	struct opts o;
	struct tree_opts topts;
	char *hierarchy_text;
	struct tree *tree;
	struct fuse_cmdline_opts cl;
	struct fuse_session *se;
	bool signals, mounted;
	struct stat mnt_st; /* the mount point before mounting */
	dev_t own_dev;	    /* the mount's device once mounted (0: unknown) */
	int report_fd;	    /* daemonised: where INIT's outcome is reported to the parent */
};

#define OPT(t, p)                                                                                  \
	{                                                                                          \
		t, offsetof(struct opts, p), 1                                                     \
	}
static const struct fuse_opt opt_spec[] = {
    OPT("cache_size=%s", cache_size),
    OPT("hierarchy=%s", hierarchy),
    OPT("stats=%s", stats),
    OPT("max_assets=%s", max_assets),
    OPT("zup", zup),
    OPT("yup", yup),
    OPT("sniff_all", sniff_all),
    OPT("umask=%s", umask),
    OPT("mods=%s", mods),
    OPT("assets=%s", assets),
    OPT("layout=%s", layout),
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
	    "usage: psgfs [options] FILE|FOLDER MOUNTPOINT\n"
	    "\n"
	    "Mount a Skate 3 arena (.psg PS3, .rx2 Xbox 360), an Unreal PSK/PSKX mesh or PSA\n"
	    "animation, an EA archive (.big: EB v3, BIGF, BIG4) or Skate 3 stream file\n"
	    "(.psf/.xsf beside its .pst/.xst), or a whole folder of them (archives in it are\n"
	    "directories too), read-only as a directory tree.\n"
	    "Unmount with: fusermount3 -u MOUNTPOINT\n"
	    "\n"
	    "options:\n"
	    "  -h, --help             show this help and exit\n"
	    "  -V, --version          show the version and exit\n"
	    "  -f                     stay in the foreground\n"
	    "  -d                     debug output (implies -f)\n"
	    "  -s                     single-threaded\n"
	    "  -o cache_size=SIZE     bytes of decoded data kept in memory: digits with an\n"
	    "                         optional K, M or G suffix (default 64M, minimum 1M)\n"
	    "  -o hierarchy=FILE      PSG, PSA: TSV of 'bone<TAB>parent' names for the skeleton\n"
	    "                         (a regular file of at most 16M, read before mounting)\n"
	    "  -o yup                 PSG: export the .psk/.pskx in the game's Y-up (default:\n"
	    "                         Z-up, as PSK importers expect; -o zup is accepted)\n"
	    "  -o max_assets=N        FOLDER: asset files and archives kept open at once, 1 to\n"
	    "                         65536 (default 128; each holds a file descriptor)\n"
	    "  -o sniff_all           FOLDER: classify every file by its first bytes (default:\n"
	    "                         a .psg/.rx2/.psk/.pskx/.psa name makes an asset, and a\n"
	    "                         .txt/.png/... name a plain file, without reading it)\n"
	    "  -o umask=MASK          octal bits removed from every permission (otherwise\n"
	    "                         the source file's r bits and the owner's w, as a\n"
	    "                         read-only image of a tree shows them; writes fail)\n"
	    "  -o stats=FILE          write request/cache counters to FILE on SIGUSR1 and at\n"
	    "                         exit (FILE is replaced as a whole; links are not followed)\n"
	    "  -o mods=OUTDIR         texture mods: textures/<name>.dds and .png become\n"
	    "                         writable; a picture written there (DDS of any format and\n"
	    "                         size, or PNG of the texture's size) is checked when\n"
	    "                         closed and the new arena goes to OUTDIR at the asset's\n"
	    "                         path, which the mount then serves; a refused picture\n"
	    "                         fails the close with EINVAL and errors.txt says why.\n"
	    "                         OUTDIR must exist, be writable and not overlap the source\n"
	    "  -o assets=dirs|files   FOLDER/ARCHIVE: show each asset (.psg .rx2 .psk .pskx\n"
	    "                         .psa) as a directory of its tree (dirs, the default) or\n"
	    "                         as a plain file of its own bytes (files: cp -r gives back\n"
	    "                         the loose files an unpacker writes); archives stay\n"
	    "                         directories\n"
	    "  -o layout=loose        FOLDER: the loose view for emulators: every .big below\n"
	    "                         FOLDER shown as the files it holds at the paths the game\n"
	    "                         loads them from (relative to the folder holding data/),\n"
	    "                         merged into the folder, the archive hidden, every file\n"
	    "                         its own bytes; a loose file wins over an archive's entry,\n"
	    "                         and with -o mods=OUTDIR, OUTDIR's files over both\n"
	    "                         (OUTDIR is only read); -o layout=tree: the default\n"
	    "  -o OPT[,OPT...]        other FUSE mount options (allow_other, ...)\n"
	    "\n"
	    "exit status:\n"
	    "  0 success, 1 internal error, 2 usage error, 3 cannot open or read FILE,\n"
	    "  4 FILE is not a PSG/PSK/PSA file or archive, 5 FILE is too damaged to mount,\n"
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

/* ---- stats ---- */

static struct psgfs_ll g_ll;
static const char *g_stats_path;
static pthread_mutex_t g_stats_lock = PTHREAD_MUTEX_INITIALIZER;

static void fill_stats(FILE *f, void *ctx)
{
	psgfs_ll_write_stats(ctx, f);
}

/* From the stats thread and at exit; the lock keeps the two from interleaving. Failures are
 * silent: the daemon has no terminal, and the path was checked before mounting. */
static void write_stats(void)
{
	if (!g_stats_path)
		return;
	pthread_mutex_lock(&g_stats_lock);
	cliopt_replace_file(g_stats_path, fill_stats, &g_ll);
	pthread_mutex_unlock(&g_stats_lock);
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

/* ---- phases: each returns EXIT_CONTINUE or the exit code ---- */

static int parse_args(struct daemon *d)
{
	if (fuse_opt_parse(&d->args, &d->o, opt_spec, opt_proc) != 0)
		return EXIT_USAGE;
	if (d->o.show_help) {
		usage(stdout);
		return EXIT_OK;
	}
	if (d->o.show_version) {
		printf("psgfs %s (libfuse %s)\n", PSGFS_VERSION, fuse_pkgversion());
		return EXIT_OK;
	}
	if (!d->o.file || !d->o.mnt) {
		fprintf(stderr, "psgfs: missing %s (usage: psgfs [options] FILE MOUNTPOINT)\n",
			d->o.file ? "MOUNTPOINT" : "FILE");
		return EXIT_USAGE;
	}
	return EXIT_CONTINUE;
}

static int check_cache_size(struct daemon *d)
{
	char why[160];

	if (!d->o.cache_size)
		return EXIT_CONTINUE;
	if (cliopt_cache_size(d->o.cache_size, &d->topts.cache_bytes, why, sizeof why) != RC_OK) {
		fprintf(stderr, "psgfs: bad cache_size '%s': %s\n", d->o.cache_size, why);
		return EXIT_USAGE;
	}
	return EXIT_CONTINUE;
}

static int check_max_assets(struct daemon *d)
{
	char why[160];

	if (!d->o.max_assets)
		return EXIT_CONTINUE;
	if (cliopt_max_assets(d->o.max_assets, &d->topts.max_assets, why, sizeof why) != RC_OK) {
		fprintf(stderr, "psgfs: bad max_assets '%s': %s\n", d->o.max_assets, why);
		return EXIT_USAGE;
	}
	return EXIT_CONTINUE;
}

/* Read now, before mounting: a FIFO would block, a device or directory is no hierarchy. */
static int check_hierarchy(struct daemon *d)
{
	char why[160];
	enum rc r;

	if (!d->o.hierarchy)
		return EXIT_CONTINUE;
	r = cliopt_read_text(d->o.hierarchy, CLIOPT_HIERARCHY_MAX, &d->hierarchy_text, why,
			     sizeof why);
	if (r != RC_OK) {
		fprintf(stderr, "psgfs: hierarchy file %s: %s\n", d->o.hierarchy, why);
		return r == RC_NOMEM ? EXIT_INTERNAL : EXIT_USAGE;
	}
	d->topts.hierarchy_path = d->o.hierarchy;
	d->topts.hierarchy_text = d->hierarchy_text;
	return EXIT_CONTINUE;
}

/* Whether the folder of path is mnt or below it (both resolved as they are now). */
static bool inside_mount_point(const char *path, const char *mnt)
{
	char *dir = strdup(path), *slash, *rdir, *rmnt;
	bool in = false;
	size_t n;

	if (!dir)
		return false;
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0'; /* "/x" -> "/" */
	rdir = realpath(slash ? dir : ".", NULL);
	rmnt = realpath(mnt, NULL);
	if (rdir && rmnt) {
		n = strlen(rmnt);
		in = strncmp(rdir, rmnt, n) == 0 &&
		     (rdir[n] == '\0' || rdir[n] == '/' || (n == 1 && rmnt[0] == '/'));
	}
	free(dir);
	free(rdir);
	free(rmnt);
	return in;
}

/* The daemon works from "/": a relative path is resolved against the caller's directory now,
 * and must be writable now rather than silently unwritten later. */
static int check_stats(struct daemon *d)
{
	char why[256];

	if (!d->o.stats)
		return EXIT_CONTINUE;
	if (d->o.stats[0] != '/') {
		char *cwd = getcwd(NULL, 0);
		char *abs = NULL;

		if (!cwd || asprintf(&abs, "%s/%s", cwd, d->o.stats) < 0) {
			free(cwd);
			fprintf(stderr, "psgfs: stats file %s: %s\n", d->o.stats, strerror(errno));
			return EXIT_INTERNAL;
		}
		free(cwd);
		free(d->o.stats);
		d->o.stats = abs;
	}
	if (cliopt_replace_check(d->o.stats, why, sizeof why) != RC_OK) {
		fprintf(stderr, "psgfs: stats file %s: %s\n", d->o.stats, why);
		return EXIT_USAGE;
	}
	if (inside_mount_point(d->o.stats, d->o.mnt)) {
		/* Written into the mount, the daemon would ask itself (and at exit nobody
		 * would answer). */
		fprintf(stderr, "psgfs: stats file %s: inside the mount point\n", d->o.stats);
		return EXIT_USAGE;
	}
	g_stats_path = d->o.stats;
	return EXIT_CONTINUE;
}

/* Does dir lie at or below top? By device and inode, so links and bind mounts count. */
static bool below(const char *dir, const char *top)
{
	struct stat t, s;
	char *p = realpath(dir, NULL);
	bool hit = false;

	if (!p || stat(top, &t) != 0) {
		free(p);
		return false;
	}
	for (;;) {
		char *slash;

		if (stat(p, &s) == 0 && s.st_dev == t.st_dev && s.st_ino == t.st_ino)
			hit = true;
		slash = strrchr(p, '/');
		if (hit || !slash || slash == p)
			break;
		*slash = '\0';
	}
	if (!hit && stat("/", &s) == 0 && s.st_dev == t.st_dev && s.st_ino == t.st_ino)
		hit = true;
	free(p);
	return hit;
}

/* OUTDIR: a writable folder that cannot lead onto the source (the source is never written:
 * a single file's own folder, or a mounted folder inside or around OUTDIR, could be) nor into
 * the mount itself. */
static int check_mods(struct daemon *d)
{
	char *out, *src, *srcdir, *slash;
	struct stat st, sst = {0};
	int rc = EXIT_CONTINUE;

	if (!d->o.mods)
		return EXIT_CONTINUE;
	out = realpath(d->o.mods, NULL);
	if (!out || stat(out, &st) != 0 || !S_ISDIR(st.st_mode) || access(out, W_OK | X_OK) != 0) {
		fprintf(stderr, "psgfs: mods folder %s: %s\n", d->o.mods,
			out && S_ISDIR(st.st_mode) ? strerror(errno)
			: out			   ? "not a directory"
						   : strerror(errno));
		free(out);
		return EXIT_USAGE;
	}
	src = realpath(d->o.file, NULL);
	srcdir = src ? strdup(src) : NULL;
	if (srcdir && stat(src, &sst) == 0 && !S_ISDIR(sst.st_mode) &&
	    (slash = strrchr(srcdir, '/')))
		slash == srcdir ? (void)(srcdir[1] = '\0') : (void)(*slash = '\0');
	/* A single file goes to OUTDIR/<name>: only its own folder would be it. A folder's
	 * assets go to OUTDIR/<path>: the two must not hold each other. */
	if (srcdir && (S_ISDIR(sst.st_mode) ? below(out, srcdir) || below(srcdir, out)
					    : below(out, srcdir) && below(srcdir, out))) {
		fprintf(stderr,
			"psgfs: mods folder %s overlaps the source %s: it must lie outside it (the "
			"source is never written)\n",
			out, srcdir);
		rc = EXIT_USAGE;
	} else if (below(out, d->o.mnt)) {
		fprintf(stderr, "psgfs: mods folder %s is inside the mount point %s\n", out,
			d->o.mnt);
		rc = EXIT_USAGE;
	}
	free(src);
	free(srcdir);
	if (rc != EXIT_CONTINUE) {
		free(out);
		return rc;
	}
	free(d->o.mods);
	d->o.mods = out;
	d->topts.mods_dir = out;
	g_ll.mods = true;
	return EXIT_CONTINUE;
}

/* -o layout=loose: a folder (the game's), every file plain, OUTDIR only read (loose.h). */
static int check_layout(struct daemon *d)
{
	struct stat st;

	if (!d->o.layout || strcmp(d->o.layout, "tree") == 0)
		return EXIT_CONTINUE;
	if (strcmp(d->o.layout, "loose") != 0) {
		fprintf(stderr, "psgfs: bad layout '%s': tree or loose\n", d->o.layout);
		return EXIT_USAGE;
	}
	if (d->o.assets && strcmp(d->o.assets, "dirs") == 0) {
		fprintf(stderr, "psgfs: layout=loose shows every file as its own bytes: it cannot "
				"go with assets=dirs\n");
		return EXIT_USAGE;
	}
	/* A missing FILE is exit 3, as for any source: told when it is opened. */
	if (stat(d->o.file, &st) == 0 && !S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"psgfs: %s: layout=loose needs a folder (the game's, holding "
			"data/)\n",
			d->o.file);
		return EXIT_USAGE;
	}
	d->topts.layout_loose = true;
	d->topts.assets_files = true;
	g_ll.mods = false; /* read-only: OUTDIR is layered, never written */
	return EXIT_CONTINUE;
}

static int validate_opts(struct daemon *d)
{
	int rc;

	if ((rc = check_cache_size(d)) != EXIT_CONTINUE ||
	    (rc = check_max_assets(d)) != EXIT_CONTINUE ||
	    (rc = check_hierarchy(d)) != EXIT_CONTINUE || (rc = check_stats(d)) != EXIT_CONTINUE ||
	    (rc = check_mods(d)) != EXIT_CONTINUE)
		return rc;
	d->topts.yup = d->o.yup;
	d->topts.sniff_all = d->o.sniff_all;
	if (d->o.assets && strcmp(d->o.assets, "files") != 0 && strcmp(d->o.assets, "dirs") != 0) {
		fprintf(stderr, "psgfs: bad assets '%s': dirs or files\n", d->o.assets);
		return EXIT_USAGE;
	}
	d->topts.assets_files = d->o.assets && strcmp(d->o.assets, "files") == 0;
	if ((rc = check_layout(d)) != EXIT_CONTINUE)
		return rc;
	if (d->o.umask) {
		char *end;
		unsigned long m = strtoul(d->o.umask, &end, 8);

		if (!d->o.umask[0] || *end || m > 07777 || d->o.umask[0] == '-' ||
		    d->o.umask[0] == '+') {
			fprintf(stderr, "psgfs: bad umask '%s' (want octal, e.g. 022)\n",
				d->o.umask);
			return EXIT_USAGE;
		}
		g_ll.umask = (mode_t)m;
	}
	return EXIT_CONTINUE;
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

/* Validate the container, then the mount point: FILE errors come first. */
static int open_file(struct daemon *d)
{
	char why[512];
	struct stat mst;
	enum tree_open_fail f;
	int serr;

	f = tree_open(d->o.file, &d->topts, &d->tree, why, sizeof why);
	if (f != TREE_FAIL_NONE) {
		fprintf(stderr, "psgfs: %s: %s\n", d->o.file, why);
		return fail_code(f);
	}
	/* libfuse calls a missing mount point a usage error and mounts over a regular file (a
	 * mount whose root then fails every stat): both are mount failures here. */
	serr = stat(d->o.mnt, &mst) != 0 ? errno : S_ISDIR(mst.st_mode) ? 0 : ENOTDIR;
	if (serr) {
		fprintf(stderr, "psgfs: %s: cannot mount on %s: %s\n", d->o.file, d->o.mnt,
			strerror(serr));
		return EXIT_MOUNT;
	}
	d->mnt_st = mst; /* what readdir of its parent will report for it once mounted */
	return EXIT_CONTINUE;
}

/* -o fsname=PATH as libfuse's option parser reads it: a comma would end the value and start
 * another option ("c,allow_other" mounted with allow_other), so commas and backslashes are
 * escaped as libfuse documents (\, and \\). */
static char *fsname_arg(const char *path)
{
	char *s = malloc(2 * strlen(path) + sizeof "-ofsname="), *o;

	if (!s)
		return NULL;
	o = stpcpy(s, "-ofsname=");
	for (; *path; path++) {
		if (*path == ',' || *path == '\\')
			*o++ = '\\';
		*o++ = *path;
	}
	*o = '\0';
	return s;
}

static int new_session(struct daemon *d)
{
	char *fsname;
	bool ok;

	if (fuse_parse_cmdline(&d->args, &d->cl) != 0 || !d->cl.mountpoint)
		return EXIT_USAGE;
	g_ll.tree = d->tree;
	g_ll.timeout = 86400.0 * 365;
	/* Read-only at the kernel level: writes fail with EROFS before reaching us. Our options
	 * come last, so none given before can undo them. With texture mods the kernel passes
	 * writes on, and the daemon answers EROFS to all but pictures. */
	fsname = fsname_arg(d->o.file);
	ok = fsname && fuse_opt_add_arg(&d->args, fsname) == 0 &&
	     (g_ll.mods || fuse_opt_add_arg(&d->args, "-oro") == 0) &&
	     fuse_opt_add_arg(&d->args, "-odefault_permissions") == 0;
	free(fsname);
	if (!ok)
		return EXIT_INTERNAL;
	d->se = fuse_session_new(&d->args, &psgfs_ll_ops, sizeof psgfs_ll_ops, &g_ll);
	if (!d->se) {
		/* libfuse has named the option it rejected; that is a usage error. */
		fprintf(stderr, "psgfs: %s: bad FUSE options (see psgfs --help)\n", d->o.file);
		return EXIT_USAGE;
	}
	return EXIT_CONTINUE;
}

/* ---- mounting: a mount fails with one line and exit 6, also once daemonised ---- */

/* libfuse reports some refusals only when the kernel's INIT arrives, after mounting (an option
 * it parsed but will not honour, e.g. max_read). Until the mount is known to work its error
 * messages are kept, to end the one line psgfs prints, instead of going to stderr. */
static atomic_bool g_mount_ready;
static pthread_mutex_t g_fuse_err_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_fuse_err[256];

static void fuse_log_kept(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char *p;

	if (level > FUSE_LOG_ERR || atomic_load(&g_mount_ready)) {
		vfprintf(stderr, fmt, ap);
		return;
	}
	pthread_mutex_lock(&g_fuse_err_lock);
	vsnprintf(g_fuse_err, sizeof g_fuse_err, fmt, ap);
	for (p = g_fuse_err; *p; p++)
		if (*p == '\n')
			*p = ' ';
	while (p > g_fuse_err && p[-1] == ' ')
		*--p = '\0';
	pthread_mutex_unlock(&g_fuse_err_lock);
}

/* libfuse's last kept message without its "fuse: error: " prefix, or fallback. */
static void fuse_err_text(char *out, size_t n, const char *fallback)
{
	const char *s = g_fuse_err;

	pthread_mutex_lock(&g_fuse_err_lock);
	if (strncmp(s, "fuse: ", 6) == 0)
		s += 6;
	if (strncmp(s, "error: ", 7) == 0)
		s += 7;
	snprintf(out, n, "%s", *s ? s : fallback);
	pthread_mutex_unlock(&g_fuse_err_lock);
}

static int mount_failed(const struct daemon *d, const char *why)
{
	fprintf(stderr, "psgfs: %s: cannot mount on %s: %s\n", d->o.file, d->cl.mountpoint, why);
	return EXIT_MOUNT;
}

/*
 * Readiness comes from the INIT exchange, never from the mount itself: a stat of the mount
 * point would hold it busy while a script that saw its device change unmounts it (EBUSY).
 * The kernel sends INIT first and nothing else until it is answered, and notifications carry
 * unique 0, so the first reply with a unique is INIT's; once it is written with error 0 the
 * connection is initialised and the mount works. libfuse refuses some INITs after our init
 * op has run (an option it parsed but will not honour, e.g. max_read), so the reply, not the
 * op, is what counts. Daemonised, the daemon tells the parent with one NUL byte.
 */
struct wire_out_header { /* struct fuse_out_header of the kernel ABI */
	uint32_t len;
	int32_t error;
	uint64_t unique;
};

static atomic_bool g_init_seen;
static int g_ready_fd = -1; /* daemonised: the pipe to the parent */

static void tell_parent_ready(void)
{
	if (g_ready_fd >= 0 && write(g_ready_fd, "", 1) != 1) {
		/* the parent has gone: nobody to tell */
	}
}

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	(void)userdata;
	return read(fd, buf, len);
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	const struct wire_out_header *out = iov[0].iov_base;
	ssize_t n = writev(fd, iov, count);
	int err = errno;

	(void)userdata;
	if (atomic_load_explicit(&g_init_seen, memory_order_relaxed) ||
	    iov[0].iov_len < sizeof *out || out->unique == 0 || atomic_exchange(&g_init_seen, true))
		return n;
	if (n >= 0 && out->error == 0) {
		atomic_store(&g_mount_ready, true);
		tell_parent_ready();
	}
	errno = err;
	return n;
}

static const struct fuse_custom_io ready_io = {.writev = io_writev, .read = io_read};

#define PARENT_WAIT_MS 10000 /* a daemon wedged before INIT is answered: give up then */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The parent of a daemonised mount: exit 0 once the daemon says the kernel's INIT was
 * answered, else 6 with the reason the daemon sends before it exits (it unmounts first), or
 * when it has said nothing within PARENT_WAIT_MS. */
static void parent_wait(struct daemon *d, int rfd)
{
	struct pollfd pfd = {rfd, POLLIN, 0};
	int64_t end = now_ms() + PARENT_WAIT_MS, left;
	char why[300] = "";
	size_t got = 0;
	ssize_t n;

	while (got < sizeof why - 1 && (left = end - now_ms()) > 0) {
		int pr = poll(&pfd, 1, (int)left);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		n = read(rfd, why + got, sizeof why - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (why[0] == '\0')
			_exit(EXIT_OK);
		got += (size_t)n;
	}
	why[got] = '\0';
	mount_failed(d, got ? why : "the mount did not answer");
	_exit(EXIT_MOUNT);
}

/*
 * fuse_daemonize, except that the parent returns only once the mount works, so that whatever
 * fails to mount exits 6 with one line whether daemonised or not: the daemon (the child) runs
 * the loop in a new session, in "/", with its stdio on /dev/null, and reports a refused INIT
 * through a pipe.
 */
static int daemonize(struct daemon *d)
{
	int p[2], null;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0 || (pid = fork()) < 0)
		return mount_failed(d, strerror(errno));
	if (pid > 0) {
		close(p[1]);
		/* Only the daemon holds the connection and the pipe: if it dies, the read ends. */
		close(fuse_session_fd(d->se));
		parent_wait(d, p[0]);
	}
	close(p[0]);
	d->report_fd = p[1];
	g_ready_fd = p[1];
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (setsid() < 0 || chdir("/") != 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0)
		return EXIT_INTERNAL;
	close(null);
	return EXIT_CONTINUE;
}

/* This mount's device, from the attributes the kernel holds (AT_STATX_DONT_SYNC: no request
 * reaches the daemon, which is not serving yet); 0 when unknown. It runs before INIT can be
 * answered, so before any script's stat of the mount point returns the new device. */
static dev_t own_device(const char *mnt)
{
	struct statx sx;

	if (statx(AT_FDCWD, mnt, AT_STATX_DONT_SYNC, 0, &sx) != 0)
		return 0;
	return makedev(sx.stx_dev_major, sx.stx_dev_minor);
}

static int mount_fs(struct daemon *d, sigset_t *usr1)
{
	char why[300];

	if (fuse_set_signal_handlers(d->se) != 0) {
		fprintf(stderr, "psgfs: cannot install signal handlers\n");
		return EXIT_MOUNT;
	}
	d->signals = true;
	/* Blocked before the mount is visible, so an early SIGUSR1 waits for the stats thread
	 * instead of killing the daemon; every thread inherits the mask. */
	sigemptyset(usr1);
	sigaddset(usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, usr1, NULL);
	fuse_set_log_func(fuse_log_kept);
	if (fuse_session_mount(d->se, d->cl.mountpoint) != 0) {
		fuse_err_text(why, sizeof why, "refused");
		return mount_failed(d, why);
	}
	d->mounted = true;
	if (fuse_session_custom_io(d->se, &ready_io, fuse_session_fd(d->se)) != 0)
		return mount_failed(d, "cannot watch the kernel's INIT");
	d->own_dev = own_device(d->cl.mountpoint);
	if (d->own_dev == d->mnt_st.st_dev)
		d->own_dev = 0; /* not this mount's: the folder under it */
	tree_set_mount(d->tree, &d->mnt_st, d->own_dev);
	if (!d->cl.foreground)
		return daemonize(d);
	return EXIT_CONTINUE;
}

static int run_loop(struct daemon *d)
{
	struct fuse_loop_config *cfg;
	int rc;

	if (d->cl.singlethread) {
		rc = fuse_session_loop(d->se);
	} else {
		cfg = fuse_loop_cfg_create();
		if (!cfg)
			return EXIT_INTERNAL;
		fuse_loop_cfg_set_clone_fd(cfg, (unsigned)d->cl.clone_fd);
		/* UINT_MAX means unset; libfuse 3.14 logs an error for it instead of ignoring it.
		 */
		if (d->cl.max_idle_threads <= 100000)
			fuse_loop_cfg_set_idle_threads(cfg, d->cl.max_idle_threads);
		if (d->cl.max_threads > 0 && d->cl.max_threads <= 100000)
			fuse_loop_cfg_set_max_threads(cfg, d->cl.max_threads);
		rc = fuse_session_loop_mt(d->se, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
	/* The loop returns 0 after an unmount, the signal number after SIGTERM/SIGINT/SIGHUP (both
	 * clean) and -errno on failure; it has already reset fuse_session_exited() by then. */
	write_stats();
	if (rc < 0 && !atomic_load(&g_mount_ready)) {
		/* The kernel's INIT was refused: the mount never worked. */
		char why[300];

		fuse_err_text(why, sizeof why, strerror(-rc));
		if (d->report_fd >= 0 && write(d->report_fd, why, strlen(why)) < 0)
			return EXIT_MOUNT; /* the parent has gone: nobody to tell */
		if (d->report_fd < 0)
			mount_failed(d, why);
		return EXIT_MOUNT;
	}
	return rc >= 0 ? EXIT_OK : EXIT_INTERNAL;
}

static void teardown(struct daemon *d)
{
	if (d->report_fd >= 0)
		close(d->report_fd);
	if (d->mounted)
		fuse_session_unmount(d->se);
	if (d->signals)
		fuse_remove_signal_handlers(d->se);
	if (d->se)
		fuse_session_destroy(d->se);
	tree_close(d->tree);
	free(d->hierarchy_text);
	free(d->cl.mountpoint);
	free(d->o.file);
	free(d->o.mnt);
	free(d->o.cache_size);
	free(d->o.hierarchy);
	free(d->o.stats);
	free(d->o.max_assets);
	free(d->o.assets);
	free(d->o.layout);
	free(d->o.umask);
	free(d->o.mods);
	fuse_opt_free_args(&d->args);
}

int main(int argc, char **argv)
{
	static struct daemon d;
	static sigset_t usr1;
	pthread_t stats_tid;
	int rc;

	/* Before any thread exists: glibc would give each worker its own malloc arena, and pages
	 * freed by cache evictions in one arena are not reused by another, so RSS would drift far
	 * above the cache budget (64M cache, whole-tree cat: 99 MB peak RssAnon -> 86 MB). */
	mallopt(M_ARENA_MAX, 2);
	/* Blocks of 128 KiB and more (archive pieces of up to 4 MiB, decoder buffers) come from
	 * mmap and go back to the system when freed. Left to itself glibc raises this threshold
	 * to the size of each mmap'd block freed, after which evicted pieces stay in the heap:
	 * a chunked 600 MB archive read whole at the 64M default peaked at 98-126 MB RssAnon,
	 * against 69 MB with the threshold fixed (docs/archives.md, "Memory"). */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);

	d.args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	d.report_fd = -1;
	if ((rc = parse_args(&d)) == EXIT_CONTINUE && (rc = validate_opts(&d)) == EXIT_CONTINUE &&
	    (rc = open_file(&d)) == EXIT_CONTINUE && (rc = new_session(&d)) == EXIT_CONTINUE &&
	    (rc = mount_fs(&d, &usr1)) == EXIT_CONTINUE) {
		if (pthread_create(&stats_tid, NULL, stats_thread, &usr1) == 0)
			pthread_detach(stats_tid);
		/* After daemonising: the invalidation thread must live in the daemon. */
		g_ll.se = d.se;
		if (psgfs_ll_start(&g_ll) != 0)
			fprintf(stderr,
				"psgfs: status files will not refresh in the kernel cache\n");
		rc = run_loop(&d);
		psgfs_ll_stop(&g_ll);
	}
	teardown(&d);
	return rc;
}
