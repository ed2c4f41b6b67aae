/*
 * hammer: N threads read random files of a mounted tree at random offsets and lengths for T
 * seconds and compare every byte with a reference copy (psgfs-tool extract of the same file).
 * Page-cache pages are dropped now and then so the reads reach the daemon and its cache.
 * usage: hammer [-a] [-e] [-n READS] MOUNT REFDIR THREADS SECONDS [SEED]
 *   -a  first read every file whole, once, in order (a sweep), then the random phase
 *   -e  EIO is an accepted outcome (the source was damaged on purpose): counted, not an error;
 *       info.txt and errors.txt, which then report the damage, are not compared
 *   -n  the random phase ends after READS reads (all threads together) or at T seconds,
 *       whichever comes first: the same work from a fast build and a slow one
 * Prints "reads N bytes N mismatches N errors N eio N files N"; exit 0 only with no mismatch
 * and no error. A read that succeeds must return exactly the reference bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ref {
	char *rel;
	uint8_t *p;
	size_t len;
};

static struct ref *refs;
static size_t n_refs, cap_refs;
static size_t refdir_len;
static const char *mount_dir;
static double deadline;
static atomic_uint_fast64_t n_reads, n_bytes, n_mismatch, n_errors, n_eio;
static bool eio_ok;
static uint64_t max_reads; /* 0: no cap */
static atomic_uint_fast64_t n_started;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int load_ref(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct ref r;
	int fd;
	size_t got = 0;

	(void)ftw;
	if (type != FTW_F)
		return 0;
	/* With a damaged source the status files say so: they are not the reference's bytes. */
	if (eio_ok &&
	    (!strcmp(path + refdir_len, "/info.txt") || !strcmp(path + refdir_len, "/errors.txt")))
		return 0;
	r.len = (size_t)st->st_size;
	r.p = malloc(r.len ? r.len : 1);
	r.rel = strdup(path + refdir_len + (path[refdir_len] == '/'));
	fd = open(path, O_RDONLY);
	if (!r.p || !r.rel || fd < 0) {
		perror(path);
		return 1;
	}
	while (got < r.len) {
		ssize_t n = read(fd, r.p + got, r.len - got);

		if (n <= 0) {
			perror(path);
			return 1;
		}
		got += (size_t)n;
	}
	close(fd);
	if (n_refs == cap_refs) {
		cap_refs = cap_refs ? cap_refs * 2 : 256;
		refs = realloc(refs, cap_refs * sizeof *refs);
		if (!refs)
			return 1;
	}
	refs[n_refs++] = r;
	return 0;
}

/* Mostly small reads, some page-sized, some large: the shapes cat, dd and mmap produce. */
static size_t pick_len(uint64_t *s)
{
	switch (rnd(s) % 4) {
	case 0:
		return 1 + rnd(s) % 64;
	case 1:
		return 1 + rnd(s) % 4096;
	case 2:
		return 4096;
	default:
		return 1 + rnd(s) % (256 << 10);
	}
}

/* Read [off, off+len) of one file through the mount and compare with the reference. */
static void check_read(const struct ref *r, size_t off, size_t len, bool drop, uint8_t *buf)
{
	size_t want = off < r->len ? (len < r->len - off ? len : r->len - off) : 0;
	char path[4096];
	size_t got = 0;
	int fd;

	snprintf(path, sizeof path, "%s/%s", mount_dir, r->rel);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		if (eio_ok && errno == EIO) {
			atomic_fetch_add(&n_eio, 1);
			return;
		}
		fprintf(stderr, "hammer: open %s: %s\n", r->rel, strerror(errno));
		atomic_fetch_add(&n_errors, 1);
		return;
	}
	if (drop)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	/* pread until EOF or len: a short read is only legal at the end of the file. */
	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			if (eio_ok && e == EIO) {
				atomic_fetch_add(&n_eio, 1);
				return;
			}
			fprintf(stderr, "hammer: read %s at %zu: %s\n", r->rel, off + got,
				strerror(e));
			atomic_fetch_add(&n_errors, 1);
			return;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	atomic_fetch_add(&n_reads, 1);
	atomic_fetch_add(&n_bytes, got);
	if (got != want || (want && memcmp(buf, r->p + off, want) != 0)) {
		fprintf(stderr, "hammer: mismatch %s off %zu len %zu: got %zu want %zu\n", r->rel,
			off, len, got, want);
		atomic_fetch_add(&n_mismatch, 1);
	}
}

static void *worker(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	uint8_t *buf = malloc(256 << 10);

	if (!buf)
		return NULL;
	while (now() < deadline && (!max_reads || atomic_fetch_add(&n_started, 1) < max_reads)) {
		const struct ref *r = &refs[rnd(&seed) % n_refs];
		size_t off = r->len ? rnd(&seed) % (r->len + 1) : 0;

		check_read(r, off, pick_len(&seed), rnd(&seed) % 4 == 0, buf);
	}
	free(buf);
	return NULL;
}

/* Every file whole, in 256K pieces (the extra byte past the end checks EOF). */
static void sweep(void)
{
	uint8_t *buf = malloc(256 << 10);

	if (!buf)
		return;
	for (size_t i = 0; i < n_refs; i++)
		for (size_t off = 0; off <= refs[i].len; off += 256 << 10)
			check_read(&refs[i], off, 256 << 10, false, buf);
	free(buf);
}

int main(int argc, char **argv)
{
	pthread_t tid[64];
	unsigned long threads;
	double secs;
	uint64_t seed = 1;
	bool do_sweep = false;
	int c;

	while ((c = getopt(argc, argv, "aen:")) != -1) {
		if (c == 'a')
			do_sweep = true;
		else if (c == 'e')
			eio_ok = true;
		else if (c == 'n')
			max_reads = strtoull(optarg, NULL, 10);
		else
			return 2;
	}
	argc -= optind - 1;
	argv += optind - 1;
	if (argc < 5 || argc > 6) {
		fprintf(stderr,
			"usage: hammer [-a] [-e] [-n READS] MOUNT REFDIR THREADS SECONDS [SEED]\n");
		return 2;
	}
	mount_dir = argv[1];
	threads = strtoul(argv[3], NULL, 10);
	secs = strtod(argv[4], NULL);
	if (argc == 6)
		seed = strtoull(argv[5], NULL, 0);
	if (threads < 1 || threads > 64 || !(secs >= 0)) {
		fprintf(stderr, "hammer: THREADS 1..64, SECONDS >= 0\n");
		return 2;
	}
	refdir_len = strlen(argv[2]);
	if (nftw(argv[2], load_ref, 32, FTW_PHYS) != 0 || n_refs == 0) {
		fprintf(stderr, "hammer: cannot load the reference tree %s\n", argv[2]);
		return 2;
	}
	if (do_sweep)
		sweep();
	deadline = now() + secs;
	for (unsigned long i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)(seed * 1000 + i)) !=
		    0) {
			fprintf(stderr, "hammer: cannot start thread\n");
			return 2;
		}
	for (unsigned long i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("reads %" PRIuFAST64 " bytes %" PRIuFAST64 " mismatches %" PRIuFAST64
	       " errors %" PRIuFAST64 " eio %" PRIuFAST64 " files %zu\n",
	       atomic_load(&n_reads), atomic_load(&n_bytes), atomic_load(&n_mismatch),
	       atomic_load(&n_errors), atomic_load(&n_eio), n_refs);
	return atomic_load(&n_mismatch) || atomic_load(&n_errors) ? 1 : 0;
}
