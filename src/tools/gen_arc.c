/*
 * psgfs-gen big, game and stream (docs/archives.md, docs/streams.md): EA archives, a game
 * data/ folder and SFIL stream files, deterministic in --seed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen_arc.h"
#include "psgfs/base/cliopt.h"
#include "psgfs/gen/gen_big.h"
#include "psgfs/gen/gen_district.h"
#include "psgfs/gen/gen_stream.h"

void gen_arc_usage(FILE *out)
{
	fputs("archives and streams (docs/archives.md, docs/streams.md):\n"
	      "  big       an EA EB v3 .big archive (OUT is a file)\n"
	      "  game      a game data/ folder: data/content/*.big with district stream files,\n"
	      "            a BIGF music bank, loose files and streams, a district in\n"
	      "            worldDIST_Gen.big (OUT is a directory that must not exist)\n"
	      "  stream    an SFIL stream collection (OUT.psf, or .xsf with --platform x360)\n"
	      "            and its ATOC table\n"
	      "  district  a district's stream set (docs/worlds.md): OUT is the folder\n"
	      "            DIST_<Name> (must not exist) holding the five files of each kind\n"
	      "            Pres/Sim/Tex (.psf .pst .psm .pss .pmm; .xsf ... with --platform\n"
	      "            x360, whose Tex kind is the empty stub), and worlddmo.big (the\n"
	      "            props' templates) beside it\n"
	      "options of big, game, stream and district:\n"
	      "  --seed N            random seed (default 1)\n"
	      "  --platform P        ps3 (default) or x360 (.rx2 arenas, LZX entries, .xsf/.xst)\n"
	      "  --manifest FILE     'file path method size fnv1a64' per entry written\n"
	      "  --refpack-header H  10, 11, 50, 51, 90, 91, D0 or D1 (default: 10, or 90\n"
	      "                      past 16 MiB)\n"
	      "big:\n"
	      "  --variant V         game (default): the createacharacter layout, every\n"
	      "                      compression; stored|refpack|chunkref|chunkzip|chunklzx:\n"
	      "                      the same entries all stored that way; bigf|big4: the older\n"
	      "                      formats; bench: --size bytes in --entries entries plus a\n"
	      "                      --chunked entry; hostile: overlap|past-eof|lying|names|\n"
	      "                      folder-index|million|nested|backref|chunks|truncated\n"
	      "  --wide              20-byte records with a second hash word\n"
	      "  --shift N           offsets stored >> N, 0 to 16 (default 4)\n"
	      "  --chunk-style S     rw4 (deflate 1, RefPack 2, LZX 3, stored 4) or sk8\n"
	      "                      (stored 0, RefPack 2, zlib 3)\n"
	      "  --assets N          asset entries, 1 to 100000 (default 24)\n"
	      "  --size N            bench: bytes of entries, up to 4G (default 1G); --size,\n"
	      "                      --entries and --chunked alone choose --variant bench\n"
	      "  --entries N         bench: entries, 1 to 1000000 (default 20000)\n"
	      "  --chunked N         bench: one chunked RefPack entry of N bytes (default 0)\n"
	      "  --depth N           nested: archive levels, 1 to 64 (default 12)\n"
	      "stream:\n"
	      "  --format N          stream format 0 raw, 1 RefPack, 2 sections (default), 3\n"
	      "                      chunked sections\n"
	      "  --assets N          assets, 1 to 100000 (default 6)\n"
	      "  --toc FILE          the ATOC table (default: OUT with .pst / .xst)\n"
	      "  --hostile H         stride|past-eof|sections|chunks|toc-lies|backref\n"
	      "district:\n"
	      "  --name DIST_N       the district's name (default: OUT's last component when\n"
	      "                      it starts with DIST_)\n"
	      "  --tiles N           100 m High tiles in a square grid, 1 to 10000 (default 4)\n"
	      "  --models N          fused models over cPres_Global and the tiles, 1 to\n"
	      "                      1000000 (default 2 per tile + 1)\n"
	      "  --size N            about N bytes of model arenas (bigger grids; default small)\n"
	      "  --textures N        diffuse textures, 1 to 4096 (default min(models, 8))\n"
	      "  --dmo FILE          where worlddmo.big goes (default: beside OUT; it must\n"
	      "                      not exist)\n"
	      "  --broken KIND       one lint rule tripped: cmap-orphan-id, atoc-missing,\n"
	      "                      sfil-extra, cspa-missing, tex-guid-missing,\n"
	      "                      tex-stub-missing (x360), stamp-mismatch, kind-field,\n"
	      "                      parent-cycle, nan-matrix, lying-counts\n",
	      out);
}

bool gen_arc_kind(const char *kind)
{
	return !strcmp(kind, "big") || !strcmp(kind, "game") || !strcmp(kind, "stream") ||
	       !strcmp(kind, "district");
}

enum {
	A_SEED = 300,
	A_VARIANT,
	A_PLATFORM,
	A_WIDE,
	A_SHIFT,
	A_RPH,
	A_STYLE,
	A_ASSETS,
	A_SIZE,
	A_ENTRIES,
	A_CHUNKED,
	A_DEPTH,
	A_MANIFEST,
	A_FORMAT,
	A_TOC,
	A_HOSTILE,
	A_TILES,
	A_MODELS,
	A_TEXTURES,
	A_BROKEN,
	A_NAME,
	A_DMO,
};

static const struct option arc_opts[] = {
    {"seed", required_argument, NULL, A_SEED},
    {"variant", required_argument, NULL, A_VARIANT},
    {"platform", required_argument, NULL, A_PLATFORM},
    {"wide", no_argument, NULL, A_WIDE},
    {"shift", required_argument, NULL, A_SHIFT},
    {"refpack-header", required_argument, NULL, A_RPH},
    {"chunk-style", required_argument, NULL, A_STYLE},
    {"assets", required_argument, NULL, A_ASSETS},
    {"size", required_argument, NULL, A_SIZE},
    {"entries", required_argument, NULL, A_ENTRIES},
    {"chunked", required_argument, NULL, A_CHUNKED},
    {"depth", required_argument, NULL, A_DEPTH},
    {"manifest", required_argument, NULL, A_MANIFEST},
    {"format", required_argument, NULL, A_FORMAT},
    {"toc", required_argument, NULL, A_TOC},
    {"hostile", required_argument, NULL, A_HOSTILE},
    {"tiles", required_argument, NULL, A_TILES},
    {"models", required_argument, NULL, A_MODELS},
    {"textures", required_argument, NULL, A_TEXTURES},
    {"broken", required_argument, NULL, A_BROKEN},
    {"name", required_argument, NULL, A_NAME},
    {"dmo", required_argument, NULL, A_DMO},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct arc_args {
	const char *kind, *variant, *out, *manifest, *toc, *name, *dmo;
	uint32_t format, tiles, models, textures;
	enum gen_district_broken broken;
	int hostile;
	uint64_t seed, size, chunked;
	uint32_t assets, entries, depth;
	bool x360, wide, shift_set, variant_set;
	uint8_t shift, rph, style;
};

static int bad(const char *opt, const char *v, const char *why)
{
	fprintf(stderr, "psgfs-gen: bad --%s '%s': %s\n", opt, v, why);
	return 2;
}

/* N within [lo, hi] into *v; 0 or 2 (after a message). */
static int num(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char why[160];

	if (cliopt_size(s, v, why, sizeof why) != RC_OK)
		return bad(opt, s, "not a number (digits with an optional K, M or G suffix)");
	if (*v < lo || *v > hi) {
		snprintf(why, sizeof why, "allowed %" PRIu64 " to %" PRIu64, lo, hi);
		return bad(opt, s, why);
	}
	return 0;
}

/* The options of the district and of its broken variants. */
static int arc_opt_district(struct arc_args *a, int c, const char *v)
{
	uint64_t x = 0;
	int rc = 0;

	switch (c) {
	case A_TILES:
		rc = num("tiles", v, 1, 10000, &x);
		a->tiles = (uint32_t)x;
		break;
	case A_MODELS:
		rc = num("models", v, 1, 1000000, &x);
		a->models = (uint32_t)x;
		break;
	case A_TEXTURES:
		rc = num("textures", v, 1, 4096, &x);
		a->textures = (uint32_t)x;
		break;
	case A_BROKEN:
		a->broken = gen_district_broken_parse(v);
		if (a->broken == GD_B_COUNT)
			return bad(
			    "broken", v,
			    "cmap-orphan-id, atoc-missing, sfil-extra, cspa-missing, "
			    "tex-guid-missing, tex-stub-missing, stamp-mismatch, kind-field, "
			    "parent-cycle, nan-matrix or lying-counts");
		break;
	case A_NAME:
		a->name = v;
		break;
	case A_DMO:
		a->dmo = v;
		break;
	default:
		return 2;
	}
	return rc;
}

/* The options of how an archive is encoded (platform, hash width, alignment, RefPack). */
static int arc_opt_encoding(struct arc_args *a, int c, const char *v)
{
	uint64_t x = 0;
	int rc = 0;

	switch (c) {
	case A_PLATFORM:
		if (strcmp(v, "ps3") && strcmp(v, "x360"))
			return bad("platform", v, "ps3 or x360");
		a->x360 = !strcmp(v, "x360");
		break;
	case A_WIDE:
		a->wide = true;
		break;
	case A_SHIFT:
		rc = num("shift", v, 0, 16, &x);
		a->shift = (uint8_t)x;
		a->shift_set = true;
		break;
	case A_RPH:
		if (strlen(v) != 2 || (strtoul(v, NULL, 16) & 0x3E) != 0x10 ||
		    !strchr("0123456789abcdefABCDEF", v[0]) ||
		    !strchr("0123456789abcdefABCDEF", v[1]))
			return bad("refpack-header", v, "10, 11, 50, 51, 90, 91, D0 or D1");
		a->rph = (uint8_t)strtoul(v, NULL, 16);
		break;
	case A_STYLE:
		if (strcmp(v, "rw4") && strcmp(v, "sk8"))
			return bad("chunk-style", v, "rw4 or sk8");
		a->style = !strcmp(v, "sk8") ? GB_STYLE_SK8 : GB_STYLE_RW4;
		break;
	default:
		return arc_opt_district(a, c, v);
	}
	return rc;
}

static int arc_opt(struct arc_args *a, int c, const char *v)
{
	uint64_t x = 0;
	int rc = 0;

	switch (c) {
	case A_SEED:
		rc = num("seed", v, 0, UINT64_MAX, &a->seed);
		break;
	case A_VARIANT:
		a->variant = v;
		a->variant_set = true;
		break;
	case A_ASSETS:
		rc = num("assets", v, 1, 100000, &x);
		a->assets = (uint32_t)x;
		break;
	case A_SIZE:
		rc = num("size", v, 1, 4ull << 30, &a->size);
		break;
	case A_ENTRIES:
		rc = num("entries", v, 1, 1000000, &x);
		a->entries = (uint32_t)x;
		break;
	case A_CHUNKED:
		rc = num("chunked", v, 0, UINT32_MAX, &a->chunked);
		break;
	case A_DEPTH:
		rc = num("depth", v, 1, 64, &x);
		a->depth = (uint32_t)x;
		break;
	case A_MANIFEST:
		a->manifest = v;
		break;
	case A_FORMAT:
		rc = num("format", v, 0, 3, &x);
		a->format = (uint32_t)x;
		break;
	case A_TOC:
		a->toc = v;
		break;
	case A_HOSTILE:
		for (int h = 1; h < GS_H_COUNT; h++)
			if (!strcmp(v, gen_stream_hostile_name((enum gen_stream_hostile)h)))
				a->hostile = h;
		if (!a->hostile)
			return bad("hostile", v,
				   "stride, past-eof, sections, chunks, toc-lies or backref");
		break;
	default:
		return arc_opt_encoding(a, c, v);
	}
	return rc;
}

static int write_manifest(const char *path, const struct gen_big_manifest *m)
{
	static const char *const names[] = {"stored", "refpack", "chunkref", "chunkzip",
					    "chunklzx"};
	FILE *f;

	if (!path)
		return 0;
	if (!(f = fopen(path, "w"))) {
		fprintf(stderr, "psgfs-gen: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(f, "file\tpath\tmethod\tsize\tfnv1a64\n");
	for (size_t i = 0; i < m->n; i++) {
		fprintf(f, "%s\t", m->v[i].file[0] ? m->v[i].file : "-");
		/* raw entry paths may hold tabs or control bytes: escape them */
		for (const unsigned char *c = (const unsigned char *)m->v[i].path; *c; c++)
			if (*c < 0x20 || *c == '\\' || *c >= 0x7F)
				fprintf(f, "\\x%02X", *c);
			else
				fputc(*c, f);
		fprintf(f, "\t%s\t%" PRIu64 "\t%016" PRIx64 "\n",
			m->v[i].method < 5 ? names[m->v[i].method] : "?", m->v[i].size,
			m->v[i].fnv);
	}
	return fclose(f) == 0 ? 0 : 1;
}

static int open_out(const char *path, struct gen_sink *s, int *fd)
{
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (*fd < 0) {
		fprintf(stderr, "psgfs-gen: %s: %s\n", path, strerror(errno));
		return 1;
	}
	gen_sink_fd(s, fd);
	return 0;
}

static int finish(const char *what, enum rc r, int fd, const struct arc_args *a,
		  const struct gen_big_manifest *m)
{
	if (fd >= 0 && close(fd) != 0 && r == RC_OK)
		r = RC_IO;
	if (r != RC_OK) {
		fprintf(stderr, "psgfs-gen: %s: %s\n", what,
			r == RC_IO ? strerror(errno) : rc_str(r));
		return 1;
	}
	return m ? write_manifest(a->manifest, m) : 0;
}

static int hostile_kind(const char *v)
{
	for (int h = 0; h < GB_H_COUNT; h++)
		if (!strcmp(v, gen_big_hostile_name((enum gen_big_hostile)h)))
			return h;
	return -1;
}

/* Hostile and BIGF archives are small: built in memory, then written. */
static int run_small(const struct arc_args *a, int h)
{
	struct gen_big_game_opts go = {.seed = a->seed,
				       .x360 = a->x360,
				       .only_method = -1,
				       .assets = a->assets ? a->assets : 6};
	struct gen_big_manifest m = {0};
	struct gen_sink s;
	struct buf b;
	enum rc r;
	int fd = -1, rc;

	buf_init(&b);
	if (h >= 0) {
		r = gen_big_hostile((enum gen_big_hostile)h, a->seed, a->depth, &b);
	} else {
		r = gen_big_game_bigf(&go, !strcmp(a->variant, "big4"), &b, &m);
	}
	if (r == RC_OK && !open_out(a->out, &s, &fd))
		r = s.write_at(s.ctx, 0, b.data, b.len);
	else if (r == RC_OK)
		r = RC_IO;
	buf_free(&b);
	rc = finish(a->variant, r, fd, a, h >= 0 ? NULL : &m);
	gen_big_manifest_free(&m);
	return rc;
}

static int variant_method(const char *v)
{
	static const char *const names[] = {"stored", "refpack", "chunkref", "chunkzip",
					    "chunklzx"};

	for (int i = 0; i < 5; i++)
		if (!strcmp(v, names[i]))
			return i;
	return -1;
}

static int run_big(const struct arc_args *a)
{
	struct gen_big_game_opts go = {.seed = a->seed,
				       .x360 = a->x360,
				       .wide = a->wide,
				       .shift = a->shift,
				       .shift_zero = a->shift_set && a->shift == 0,
				       .only_method = -1,
				       .rp_header = a->rph,
				       .style = a->style,
				       .assets = a->assets};
	struct gen_big_bench_opts bo = {
	    .seed = a->seed, .bytes = a->size, .chunked_bytes = a->chunked, .entries = a->entries};
	struct gen_big_manifest m = {0};
	struct gen_sink s;
	int h = hostile_kind(a->variant), meth = variant_method(a->variant), fd, rc;
	enum rc r;

	if (h >= 0 || !strcmp(a->variant, "bigf") || !strcmp(a->variant, "big4"))
		return run_small(a, h);
	if (strcmp(a->variant, "game") && strcmp(a->variant, "bench") && meth < 0) {
		fprintf(stderr, "psgfs-gen: unknown --variant '%s'\n", a->variant);
		return 2;
	}
	if (open_out(a->out, &s, &fd))
		return 1;
	go.only_method = meth;
	r = !strcmp(a->variant, "bench") ? gen_big_bench(&bo, &s, &m) : gen_big_game(&go, &s, &m);
	rc = finish(a->variant, r, fd, a, &m);
	gen_big_manifest_free(&m);
	return rc;
}

static int run_game(const struct arc_args *a)
{
	struct gen_big_manifest m = {0};
	enum rc r = gen_game_dir(a->seed, a->x360, a->out, &m);
	int rc;

	if (r == RC_INVAL)
		fprintf(stderr, "psgfs-gen: %s: already exists\n", a->out);
	rc = r == RC_INVAL ? 1 : finish("game", r, -1, a, &m);
	gen_big_manifest_free(&m);
	return rc;
}

/* Write b to path whole; 0 or 1 after a message. */
static int write_file(const char *path, const struct buf *b)
{
	struct gen_sink s;
	int fd;
	enum rc r;

	if (open_out(path, &s, &fd))
		return 1;
	r = b->oom ? RC_NOMEM : s.write_at(s.ctx, 0, b->data, b->len);
	if (close(fd) != 0 && r == RC_OK)
		r = RC_IO;
	if (r != RC_OK) {
		fprintf(stderr, "psgfs-gen: %s: %s\n", path,
			r == RC_IO ? strerror(errno) : rc_str(r));
		return 1;
	}
	return 0;
}

static int run_stream(const struct arc_args *a)
{
	struct gen_stream_opts so = {.seed = a->seed,
				     .x360 = a->x360,
				     .format = a->format,
				     .assets = a->assets,
				     .rp_header = a->rph};
	struct gen_big_manifest m = {0};
	struct buf sf, toc;
	char tocpath[4096];
	size_t n = strlen(a->out);
	enum rc r;
	int rc = 0;

	if (a->toc) {
		snprintf(tocpath, sizeof tocpath, "%s", a->toc);
	} else if (n >= 4 && n < sizeof tocpath && a->out[n - 4] == '.') {
		memcpy(tocpath, a->out, n + 1);
		tocpath[n - 1] = 't'; /* .psf -> .pst, .xsf -> .xst */
	} else {
		fprintf(stderr, "psgfs-gen: stream: name the table with --toc (OUT has no "
				"3-letter extension)\n");
		return 2;
	}
	buf_init(&sf);
	buf_init(&toc);
	r = gen_stream(&so, (enum gen_stream_hostile)a->hostile, &sf, &toc, &m);
	if (r != RC_OK) {
		fprintf(stderr, "psgfs-gen: stream: %s\n", rc_str(r));
		rc = 1;
	}
	if (!rc)
		rc = write_file(a->out, &sf) || write_file(tocpath, &toc) ||
		     write_manifest(a->manifest, &m);
	buf_free(&sf);
	buf_free(&toc);
	gen_big_manifest_free(&m);
	return rc;
}

/* The district sink: each file created in OUT (never over an existing one). */
struct dist_dir {
	int dfd; /* OUT */
	const char *out, *dmo;
};

static enum rc dist_put(void *ctx, const char *rel, const struct buf *b)
{
	struct dist_dir *dd = ctx;
	struct gen_sink s;
	bool dmo = !strcmp(rel, GEN_DISTRICT_DMO_BIG);
	int fd = dmo ? open(dd->dmo, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)
		     : openat(dd->dfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	enum rc r;

	if (fd < 0) {
		fprintf(stderr, "psgfs-gen: %s%s%s: %s\n", dmo ? "" : dd->out, dmo ? "" : "/",
			dmo ? dd->dmo : rel, errno == EEXIST ? "already exists" : strerror(errno));
		return RC_IO;
	}
	gen_sink_fd(&s, &fd);
	r = s.write_at(s.ctx, 0, b->data, b->len);
	if (close(fd) != 0 && r == RC_OK)
		r = RC_IO;
	if (r != RC_OK)
		fprintf(stderr, "psgfs-gen: %s/%s: %s\n", dd->out, rel, strerror(errno));
	return r;
}

static int run_district(const struct arc_args *a)
{
	const char *slash = strrchr(a->out, '/');
	const char *base = slash ? slash + 1 : a->out;
	struct gen_district_opts o = {.seed = a->seed,
				      .x360 = a->x360,
				      .name = a->name ? a->name : base,
				      .tiles = a->tiles,
				      .models = a->models,
				      .size = a->size,
				      .textures = a->textures,
				      .broken = a->broken};
	struct dist_dir dd = {.out = a->out, .dmo = a->dmo};
	char dmo[4096];
	enum rc r;

	if (strncmp(o.name, "DIST_", 5) || !o.name[5]) {
		fprintf(stderr, "psgfs-gen: district: name it DIST_<Name> (--name, or OUT's "
				"last component)\n");
		return 2;
	}
	if (a->broken == GD_B_TEX_STUB && !a->x360) {
		fprintf(stderr, "psgfs-gen: district: tex-stub-missing applies to --platform "
				"x360 (a PS3 district has no stub)\n");
		return 2;
	}
	if (!dd.dmo) { /* beside OUT */
		snprintf(dmo, sizeof dmo, "%.*s%s", (int)(base - a->out), a->out,
			 GEN_DISTRICT_DMO_BIG);
		dd.dmo = dmo;
	}
	if (access(dd.dmo, F_OK) == 0) {
		fprintf(stderr, "psgfs-gen: %s: already exists (--dmo FILE names another)\n",
			dd.dmo);
		return 1;
	}
	if (mkdir(a->out, 0755) != 0) {
		fprintf(stderr, "psgfs-gen: %s: %s\n", a->out,
			errno == EEXIST ? "already exists" : strerror(errno));
		return 1;
	}
	dd.dfd = open(a->out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dd.dfd < 0) {
		fprintf(stderr, "psgfs-gen: %s: %s\n", a->out, strerror(errno));
		return 1;
	}
	r = gen_district(&o, &(struct gen_district_sink){dist_put, &dd});
	close(dd.dfd);
	if (r != RC_OK && r != RC_IO)
		fprintf(stderr, "psgfs-gen: district: %s\n", rc_str(r));
	return r == RC_OK ? 0 : 1;
}

int gen_arc_main(int argc, char **argv)
{
	struct arc_args a = {.kind = argv[1], .variant = "game", .seed = 1, .format = 2};
	int c, rc;

	optind = 2;
	while ((c = getopt_long(argc, argv, "h", arc_opts, NULL)) != -1) {
		if (c == 'h') {
			gen_arc_usage(stdout);
			return 0;
		}
		if ((rc = arc_opt(&a, c, optarg)) != 0)
			return rc;
	}
	if (optind != argc - 1) {
		gen_arc_usage(stderr);
		return 2;
	}
	a.out = argv[optind];
	/* --size, --entries and --chunked describe a benchmark archive: they choose it */
	if ((a.size || a.entries || a.chunked) && strcmp(a.kind, "big") == 0) {
		if (a.variant_set && strcmp(a.variant, "bench")) {
			fprintf(stderr, "psgfs-gen: --size, --entries and --chunked apply to "
					"--variant bench\n");
			return 2;
		}
		a.variant = "bench";
	}
	if (!strcmp(a.kind, "game"))
		return run_game(&a);
	if (!strcmp(a.kind, "stream"))
		return run_stream(&a);
	if (!strcmp(a.kind, "district"))
		return run_district(&a);
	return run_big(&a);
}
