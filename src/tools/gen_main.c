/*
 * psgfs-gen: deterministic synthetic inputs for tests, benchmarks and the demo. The same seed
 * gives the same bytes on every machine.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "psgfs/base/cliopt.h"
#include "psgfs/base/hash.h"
#include "psgfs/gen/gen_folder.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/gen/gen_x360_textures.h"
#include "gen_arc.h"

/* One string on purpose: the help text reads here as it prints (81 lines, no logic). */
static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: psgfs-gen KIND [options] OUT\n"
	    "\n"
	    "kinds:\n"
	    "  psk       Unreal skeletal mesh (PSK; PSKX layout with --big)\n"
	    "  psa       Unreal animation set (PSA)\n"
	    "  sky       Skate 3 static model arena shaped like the real night sky (--platform\n"
	    "            x360: its Xbox 360 twin)\n"
	    "  sized     model arena of about --size bytes (many static meshes), for benchmarks\n"
	    "  textures  texture arena with every supported format, mips, a cube map, NPOT sizes\n"
	    "  skinned   Skate 3 skinned multi-mesh model arena (every GCM vertex format;\n"
	    "            --platform x360: its Xbox 360 twin)\n"
	    "  folder    a folder of assets shaped like an unpacked Skate 3 game, with junk\n"
	    "            (OUT is a directory that must not exist)\n"
	    "  hash      print the FNV-1a 64 hash of each FILE argument (as --record writes)\n"
	    "\n"
	    "N is decimal digits with an optional K, M or G suffix (powers of 1024).\n"
	    "\n"
	    "options for every kind:\n"
	    "  --seed N            random seed (default 1)\n"
	    "  --shuffle-dict N    PSG: permute dictionary rows with seed N (references follow)\n"
	    "  --record FILE       PSG: write 'index type_id offset size fnv1a64' rows to FILE\n"
	    "  --baseres-first     sky, skinned: base resources at the first dictionary rows (a\n"
	    "                      reference to row 0 is then stored as 0)\n"
	    "sky:\n"
	    "  --rows N            hostile: the dictionary, moved to the end, claims N rows (12\n"
	    "                      to 178956970): the real ones, then zero rows the file leaves\n"
	    "                      as a hole (a few KiB on disk for any N)\n"
	    "sized:\n"
	    "  --size N            target bytes, 64K to 3G (default 1M)\n"
	    "psk:\n"
	    "  --points N          1 to 11184811 (default 32; wedges are 1.5 x points)\n"
	    "  --bones N           0 to 65536 (default 4; 0: no skeleton)\n"
	    "  --materials N       1 to 256 (default 1)\n"
	    "  --morphs N          0 to 4096 (default 0)\n"
	    "  --sockets N         0 to 4096 (default 0)\n"
	    "  --uv-sets N         extra UV sets, 0 to 8 (default 0)\n"
	    "  --normals --colors --big --hostile-names\n"
	    "psa:\n"
	    "  --bones N           1 to 65536 (default 3)\n"
	    "  --sequences N       1 to 65536 (default 1)\n"
	    "  --frames N          most frames a sequence gets, 1 to 16777216 (default 8);\n"
	    "                      bones x all frames must stay at most 16777216 keys\n"
	    "  --scale-keys --hostile-names\n"
	    "  --overlap           every sequence covers every key, all --frames of them\n"
	    "                      (the amplification worst case: small file, huge views)\n"
	    "  --match-psk         the skeleton psk --seed/--bones would generate\n"
	    "  --flat-parents      parent 0 for every bone (as many exporters write)\n"
	    "skinned:\n"
	    "  --bones N           3 to 4096 (default 12)\n"
	    "  --meshes N          1 to 256 (default 4)\n"
	    "  --verts N           vertices per mesh, 1 to 4194304 (default 60)\n"
	    "  --islands N         islands per mesh, 1 to 64 (default 3)\n"
	    "  --tris N            triangles per island (a mesh has islands x tris),\n"
	    "                      1 to 1048576 (default 20)\n"
	    "  --hostile KIND      palette|index|stride|bones (a broken variant); islands (PS3:\n"
	    "                      every island draws its mesh's whole index buffer)\n"
	    "  --skater            the skater encoding on every mesh: positions S1x4 as s16 / "
	    "16384,\n"
	    "                      weights and indices UB256; skater-shaped: the rig's body\n"
	    "                      (hips, spine, head, arms, legs...) in a rest pose, one root,\n"
	    "                      the meshes along the bones\n"
	    "  --rig-names         bone names from the skater rig (mixed case), parented as the\n"
	    "                      rig says (the truth's parents; without --skater a random\n"
	    "                      subset of the rig)\n"
	    "  --truth FILE        bones, hierarchy, per-mesh counts and position encoding as "
	    "TSV;\n"
	    "                      --skater adds each vertex's position and bone-local position\n"
	    "  --hierarchy-out F   the 'bone<TAB>parent' file for psgfs -o hierarchy=\n"
	    "  --platform P        ps3 (default), x360 (the Xbox 360 twin of the PS3 arena of the\n"
	    "                      same options: equal values in Xbox 360 formats) or x360-alt\n"
	    "                      (also the formats PS3 lacks, re-quantised; the truth follows);\n"
	    "                      x360 arenas refuse --shuffle-dict and --baseres-first\n"
	    "folder:\n"
	    "  --assets N          well-formed asset files besides the junk, 1 to 1000000\n"
	    "                      (default 60; models count with their companions)\n"
	    "  --wide N            of those, N in one folder (cas_db/wide), 0 to 1000000\n"
	    "  --real-shape        assets sized like real Skate 3 character files: skater\n"
	    "                      models (40-131 rig bones, 2-6 meshes of 1,000-5,000\n"
	    "                      vertices) beside companions of 3-8 DXT textures up to\n"
	    "                      1024x1024 that their materials name, and per-texture\n"
	    "                      arenas named 0x<GUID>.psg\n"
	    "  --manifest FILE     write 'path kind shown' rows, one per entry written\n"
	    "textures:\n"
	    "  --platform P        ps3 (default), x360 (an Xbox 360 .rx2 arena of twins) or\n"
	    "                      ps3-twin (the PS3 arena those twins match)\n"
	    "  --real-shape        ps3: 19 DXT1/DXT5 textures up to 1024x1024 with full mip\n"
	    "                      chains and one cube map, shaped like a real 2 MB arena\n"
	    "  --short-cube        ps3: also a DXT5 256x256 cube map whose base resource holds\n"
	    "                      only its first face (as a real tool-made arena does)\n"
	    "  --partial           ps3: also textures whose data holds part of their layout\n"
	    "                      (cube maps of 1 to 5 faces, face 0 with some of its levels,\n"
	    "                      in several formats) and a volume texture (not converted)\n"
	    "  --only K            ps3: only texture K (0-21) of the default set, with its GUID\n"
	    "                      0x2c7f3818001719xx: a per-texture arena, to be named\n"
	    "                      0x<GUID>.psg as the game names them\n"
	    "\n"
	    "");
	gen_arc_usage(out);
	fputs("\nexit status: 0 ok, 1 generation or write failed, 2 usage\n", out);
}

enum {
	O_SEED = 256,
	O_SHUFFLE,
	O_RECORD,
	O_SIZE,
	O_POINTS,
	O_BONES,
	O_MATERIALS,
	O_MORPHS,
	O_SOCKETS,
	O_UVSETS,
	O_NORMALS,
	O_COLORS,
	O_BIG,
	O_HOSTILE,
	O_SEQS,
	O_FRAMES,
	O_SCALE,
	O_MATCH,
	O_FLAT,
	O_MESHES,
	O_VERTS,
	O_ISLANDS,
	O_TRIS,
	O_HOSTILE_SK,
	O_TRUTH,
	O_HIER,
	O_PLATFORM,
	O_ASSETS,
	O_WIDE,
	O_MANIFEST,
	O_SHORT_CUBE,
	O_PARTIAL,
	O_REAL_SHAPE,
	O_OVERLAP,
	O_BASERES_FIRST,
	O_SKATER,
	O_RIG,
	O_ROWS,
	O_ONLY,
};

static const struct option longopts[] = {
    {"seed", required_argument, NULL, O_SEED},
    {"shuffle-dict", required_argument, NULL, O_SHUFFLE},
    {"record", required_argument, NULL, O_RECORD},
    {"size", required_argument, NULL, O_SIZE},
    {"points", required_argument, NULL, O_POINTS},
    {"bones", required_argument, NULL, O_BONES},
    {"materials", required_argument, NULL, O_MATERIALS},
    {"morphs", required_argument, NULL, O_MORPHS},
    {"sockets", required_argument, NULL, O_SOCKETS},
    {"uv-sets", required_argument, NULL, O_UVSETS},
    {"normals", no_argument, NULL, O_NORMALS},
    {"colors", no_argument, NULL, O_COLORS},
    {"big", no_argument, NULL, O_BIG},
    {"hostile-names", no_argument, NULL, O_HOSTILE},
    {"sequences", required_argument, NULL, O_SEQS},
    {"frames", required_argument, NULL, O_FRAMES},
    {"scale-keys", no_argument, NULL, O_SCALE},
    {"match-psk", no_argument, NULL, O_MATCH},
    {"flat-parents", no_argument, NULL, O_FLAT},
    {"meshes", required_argument, NULL, O_MESHES},
    {"verts", required_argument, NULL, O_VERTS},
    {"islands", required_argument, NULL, O_ISLANDS},
    {"tris", required_argument, NULL, O_TRIS},
    {"hostile", required_argument, NULL, O_HOSTILE_SK},
    {"truth", required_argument, NULL, O_TRUTH},
    {"hierarchy-out", required_argument, NULL, O_HIER},
    {"platform", required_argument, NULL, O_PLATFORM},
    {"assets", required_argument, NULL, O_ASSETS},
    {"wide", required_argument, NULL, O_WIDE},
    {"manifest", required_argument, NULL, O_MANIFEST},
    {"short-cube", no_argument, NULL, O_SHORT_CUBE},
    {"partial", no_argument, NULL, O_PARTIAL},
    {"real-shape", no_argument, NULL, O_REAL_SHAPE},
    {"overlap", no_argument, NULL, O_OVERLAP},
    {"baseres-first", no_argument, NULL, O_BASERES_FIRST},
    {"skater", no_argument, NULL, O_SKATER},
    {"rig-names", no_argument, NULL, O_RIG},
    {"rows", required_argument, NULL, O_ROWS},
    {"only", required_argument, NULL, O_ONLY},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/*
 * What each kind accepts, so a bad value is refused here with its range instead of failing
 * later as "invalid argument". These mirror the limits the generators enforce (src/gen);
 * 0, which the generators read as "default", is refused where it is not a real count.
 */
static const struct {
	const char *kind;
	int opt;
	uint64_t min, max;
} ranges[] = {
    {"sized", O_SIZE, 64u << 10, 3ull << 30},
    {"psk", O_POINTS, 1, 11184811}, /* wedges = 1.5 x points stay within 1 << 24 */
    {"psk", O_BONES, 0, 65536},
    {"psk", O_MATERIALS, 1, 256},
    {"psk", O_MORPHS, 0, 4096},
    {"psk", O_SOCKETS, 0, 4096},
    {"psk", O_UVSETS, 0, 8},
    {"psa", O_BONES, 1, 65536},
    {"psa", O_SEQS, 1, 65536},
    {"psa", O_FRAMES, 1, 1u << 24},
    {"skinned", O_BONES, 3, 4096},
    {"skinned", O_MESHES, 1, 256},
    {"skinned", O_VERTS, 1, 1u << 22},
    {"skinned", O_ISLANDS, 1, 64},
    {"skinned", O_TRIS, 1, 1u << 20},
    {"folder", O_ASSETS, 1, GEN_FOLDER_MAX_ASSETS},
    {"folder", O_WIDE, 0, GEN_FOLDER_MAX_ASSETS},
    {"sky", O_ROWS, 12, 178956970}, /* 24-byte rows after the sky's 8 KiB, within 4 GiB */
    {"textures", O_ONLY, 0, 21},    /* the default set's 22 textures */
};

static const char *opt_name(int opt)
{
	for (size_t i = 0; longopts[i].name; i++)
		if (longopts[i].val == opt)
			return longopts[i].name;
	return "?";
}

/* Any N (seeds); one line naming the option and the value on failure, exit 2. */
static uint64_t parse_u64(int opt, const char *s)
{
	char why[160];
	uint64_t v;

	enum rc r = cliopt_size(s, &v, why, sizeof why);

	if (r != RC_OK) {
		fprintf(stderr, "psgfs-gen: bad --%s '%s': %s\n", opt_name(opt), s,
			r == RC_BOUNDS ? why
				       : "not a number (digits with an optional K, M or G suffix)");
		exit(2);
	}
	return v;
}

/* N within the range this kind allows for opt (see ranges). */
static uint64_t parse_in_range(const char *kind, int opt, const char *s)
{
	uint64_t v = parse_u64(opt, s);
	bool other_kind = false;

	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		if (ranges[i].opt != opt)
			continue;
		if (strcmp(ranges[i].kind, kind)) {
			other_kind = true;
			continue;
		}
		if (v >= ranges[i].min && v <= ranges[i].max)
			return v;
		fprintf(stderr, "psgfs-gen: bad --%s '%s': %s allows %" PRIu64 " to %" PRIu64 "\n",
			opt_name(opt), s, kind, ranges[i].min, ranges[i].max);
		exit(2);
	}
	if (other_kind) {
		fprintf(stderr, "psgfs-gen: --%s does not apply to %s\n", opt_name(opt), kind);
		exit(2);
	}
	return v;
}

static uint32_t parse_count(const char *kind, int opt, const char *s)
{
	return (uint32_t)parse_in_range(kind, opt, s);
}

/* The platforms each kind can generate for; one line on stderr when p is not one of them. */
static bool platform_ok(const char *kind, const char *p)
{
	static const struct {
		const char *kind, *list, *p[3];
	} kinds[] = {
	    {"textures", "ps3, x360 or ps3-twin", {"ps3", "x360", "ps3-twin"}},
	    {"skinned", "ps3, x360 or x360-alt", {"ps3", "x360", "x360-alt"}},
	    {"sky", "ps3 or x360", {"ps3", "x360", NULL}},
	};

	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (strcmp(kinds[i].kind, kind))
			continue;
		for (int k = 0; k < 3; k++)
			if (kinds[i].p[k] && !strcmp(kinds[i].p[k], p))
				return true;
		fprintf(stderr, "psgfs-gen: bad --platform '%s': %s\n", p, kinds[i].list);
		return false;
	}
	fprintf(stderr, "psgfs-gen: --platform does not apply to %s\n", kind);
	return false;
}

static bool known_kind(const char *kind)
{
	static const char *const kinds[] = {"psk",	"psa",	   "sky",   "sized",
					    "textures", "skinned", "folder"};

	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (!strcmp(kind, kinds[i]))
			return true;
	return false;
}

/* Options each within range can still be too much together (psa: keys = bones x frames). */
static int report_failure(const char *kind, enum rc r)
{
	if (r != RC_INVAL) {
		fprintf(stderr, "psgfs-gen: %s: %s\n", kind, rc_str(r));
		return 1;
	}
	if (!strcmp(kind, "psa"))
		fprintf(stderr, "psgfs-gen: psa: more than 16777216 keys (--bones x the frames of "
				"all --sequences); lower --bones, --sequences or --frames\n");
	else
		fprintf(stderr,
			"psgfs-gen: %s: these options together are out of range (see "
			"psgfs-gen --help)\n",
			kind);
	return 2;
}

/* b's bytes, then zeros up to size (a hole: nothing written) when size is larger. */
static int write_out(const char *path, const struct buf *b, uint64_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(b->data, 1, b->len, f) != b->len ||
	    (size > b->len && (fflush(f) != 0 || ftruncate(fileno(f), (off_t)size) != 0)) ||
	    fclose(f) != 0) {
		fprintf(stderr, "psgfs-gen: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* fopen for writing, with the one-line error every writer here prints. */
static FILE *open_text(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fprintf(stderr, "psgfs-gen: %s: %s\n", path, strerror(errno));
	return f;
}

static int write_record(const char *path, const struct psg_gen_record *rec)
{
	FILE *f;

	if (!path)
		return 0;
	if (!(f = open_text(path)))
		return 1;
	fprintf(f, "index\ttype_id\toffset\tsize\tfnv1a64\n");
	for (size_t i = 0; i < rec->n; i++)
		fprintf(f, "%zu\t0x%08X\t%" PRIu64 "\t%u\t%016" PRIx64 "\n", i, rec->obj[i].type_id,
			rec->obj[i].start, rec->obj[i].size, rec->obj[i].fnv64);
	return fclose(f) == 0 ? 0 : 1;
}

/* The ground truth of a skinned arena, for integration tests: bones, then per mesh a "mesh"
 * row, an "encoding" row (how positions are stored) and, for skater meshes, one "position"
 * row per vertex: mesh, vertex, bone it was placed at, x y z, and x y z seen from that bone. */
static int write_truth(const char *path, const struct gen_skinned_truth *t)
{
	FILE *f;

	if (!path)
		return 0;
	if (!(f = open_text(path)))
		return 1;
	fprintf(f, "kind\tindex\tname\tparent\tvertices\ttriangles\tpalette\n");
	for (uint32_t i = 0; i < t->n_bones; i++)
		fprintf(f, "bone\t%u\t%s\t%d\t-\t-\t-\n", i, t->names[i], t->parent[i]);
	for (uint32_t m = 0; m < t->n_meshes; m++) {
		const struct gen_skinned_mesh_truth *mt = &t->mesh[m];

		fprintf(f, "mesh\t%u\t%s\t-\t%u\t%u\t", m, mt->material, mt->n_verts, mt->n_tri);
		for (uint32_t k = 0; k < mt->n_palette; k++)
			fprintf(f, "%s%u", k ? "," : "", mt->palette[k]);
		fputc('\n', f);
		fprintf(f, "encoding\t%u\tpositions %s\t-\t-\t-\t-\n", m, mt->pos_encoding);
		for (uint32_t v = 0; mt->local && v < mt->n_verts; v++)
			fprintf(f, "position\t%u\t%u\t%u\t%.9g %.9g %.9g\t%.9g %.9g %.9g\t-\n", m,
				v, mt->main_bone[v], (double)mt->pos[v][0], (double)mt->pos[v][1],
				(double)mt->pos[v][2], (double)mt->local[v][0],
				(double)mt->local[v][1], (double)mt->local[v][2]);
	}
	return fclose(f) == 0 ? 0 : 1;
}

static int write_hierarchy(const char *path, const struct gen_skinned_truth *t)
{
	FILE *f;

	if (!path)
		return 0;
	f = fopen(path, "w");
	if (!f || fputs(t->hierarchy_tsv ? t->hierarchy_tsv : "", f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "psgfs-gen: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

static int write_manifest(const char *path, const struct gen_folder_manifest *m)
{
	FILE *f;

	if (!path)
		return 0;
	if (!(f = open_text(path)))
		return 1;
	fprintf(f, "path\tkind\tshown\n");
	for (size_t i = 0; i < m->n; i++)
		fprintf(f, "%s\t%s\t%s\n", m->v[i].path, m->v[i].kind, m->v[i].shown);
	return fclose(f) == 0 ? 0 : 1;
}

/* folder: a directory tree rather than one buffer. */
static int run_folder(const struct gen_folder_opts *o, const char *out, const char *manifest)
{
	struct gen_folder_manifest m;
	enum rc r;
	int rc;

	if (o->wide > (o->assets ? o->assets : 60)) {
		fprintf(stderr, "psgfs-gen: folder: --wide %u is more than --assets\n", o->wide);
		return 2;
	}
	r = gen_folder(o, out, &m);
	if (r != RC_OK) {
		if (r == RC_INVAL)
			fprintf(stderr, "psgfs-gen: %s: already exists\n", out);
		else if (r == RC_IO)
			fprintf(stderr, "psgfs-gen: %s: %s\n", out, strerror(errno));
		else
			fprintf(stderr, "psgfs-gen: folder: %s\n", rc_str(r));
		gen_folder_manifest_free(&m);
		return 1;
	}
	rc = write_manifest(manifest, &m);
	gen_folder_manifest_free(&m);
	return rc;
}

/* FNV-1a 64 of whole files, streamed, so tests can compare with a --record. */
static int hash_files(int n, char **paths)
{
	static uint8_t chunk[1 << 16];
	int rc = 0;

	for (int i = 0; i < n; i++) {
		uint64_t h = FNV64_BASIS;
		FILE *f = fopen(paths[i], "rb");
		size_t got;

		if (!f) {
			fprintf(stderr, "psgfs-gen: %s: %s\n", paths[i], strerror(errno));
			rc = 1;
			continue;
		}
		while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
			h = fnv1a_64_update(h, chunk, got);
		if (ferror(f)) {
			fprintf(stderr, "psgfs-gen: %s: read error\n", paths[i]);
			rc = 1;
		} else {
			printf("%016" PRIx64 "  %s\n", h, paths[i]);
		}
		fclose(f);
	}
	return rc;
}

/* Everything the command line chose. */
struct gen_args {
	const char *kind, *out, *record, *manifest, *truth_path, *hier_path, *platform;
	struct gen_psk_opts pk;
	struct gen_psa_opts pa;
	struct gen_skinned_opts sk;
	struct gen_folder_opts fo;
	bool short_cube, partial, real_shape;
	uint64_t seed, shuffle, size;
	uint32_t rows;
	int64_t only; /* textures: -1, or the one default texture to write */
};

/* Options of the PSK and PSA kinds; false when c is not one of them. */
static bool psk_psa_opt(struct gen_args *a, int c)
{
	switch (c) {
	case O_POINTS:
		a->pk.points = parse_count(a->kind, c, optarg);
		break;
	case O_MATERIALS:
		a->pk.materials = parse_count(a->kind, c, optarg);
		break;
	case O_MORPHS:
		a->pk.morphs = parse_count(a->kind, c, optarg);
		break;
	case O_SOCKETS:
		a->pk.sockets = parse_count(a->kind, c, optarg);
		break;
	case O_UVSETS:
		a->pk.extra_uv_sets = parse_count(a->kind, c, optarg);
		break;
	case O_NORMALS:
		a->pk.normals = true;
		break;
	case O_COLORS:
		a->pk.colors = true;
		break;
	case O_BIG:
		a->pk.big = true;
		break;
	case O_HOSTILE:
		a->pk.hostile_names = a->pa.hostile_names = true;
		break;
	case O_SEQS:
		a->pa.sequences = parse_count(a->kind, c, optarg);
		break;
	case O_FRAMES:
		a->pa.max_frames = parse_count(a->kind, c, optarg);
		break;
	case O_SCALE:
		a->pa.scale_keys = true;
		break;
	case O_MATCH:
		a->pa.match_psk = true;
		break;
	case O_FLAT:
		a->pa.flat_parents = true;
		break;
	case O_OVERLAP:
		a->pa.overlap = true;
		break;
	default:
		return false;
	}
	return true;
}

/* --hostile of the skinned kind; false (after a message) for an unknown name. */
static bool skinned_hostile(struct gen_args *a, const char *name)
{
	static const struct {
		const char *name;
		enum gen_skinned_hostile v;
	} names[] = {{"palette", GEN_SK_PALETTE_PAST_SKELETON},
		     {"index", GEN_SK_INDEX_PAST_VERTS},
		     {"stride", GEN_SK_STRIDE_TOO_SMALL},
		     {"bones", GEN_SK_BONES_PAST_OBJECT},
		     {"islands", GEN_SK_ISLANDS_OVERLAP}};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i].name)) {
			a->sk.hostile = names[i].v;
			return true;
		}
	fprintf(stderr, "psgfs-gen: unknown --hostile '%s'\n", name);
	return false;
}

/* Options of the skinned, textures and folder kinds; false when c is not one of them. */
static bool psg_folder_opt(struct gen_args *a, int c)
{
	switch (c) {
	case O_MESHES:
		a->sk.n_meshes = parse_count(a->kind, c, optarg);
		break;
	case O_VERTS:
		a->sk.verts = parse_count(a->kind, c, optarg);
		break;
	case O_ISLANDS:
		a->sk.islands = parse_count(a->kind, c, optarg);
		break;
	case O_TRIS:
		a->sk.tris = parse_count(a->kind, c, optarg);
		break;
	case O_BASERES_FIRST:
		a->sk.baseres_first = true;
		break;
	case O_SKATER:
		a->sk.layout = GEN_SK_SKATER;
		break;
	case O_RIG:
		a->sk.rig_names = true;
		break;
	case O_ASSETS:
		a->fo.assets = parse_count(a->kind, c, optarg);
		break;
	case O_WIDE:
		a->fo.wide = parse_count(a->kind, c, optarg);
		break;
	case O_SHORT_CUBE:
		a->short_cube = true;
		break;
	case O_PARTIAL:
		a->partial = true;
		break;
	case O_REAL_SHAPE:
		a->real_shape = true;
		break;
	case O_ROWS:
		a->rows = parse_count(a->kind, c, optarg);
		break;
	case O_ONLY:
		a->only = parse_count(a->kind, c, optarg);
		break;
	default:
		return false;
	}
	return true;
}

/* Options every kind shares and those naming files; -1 when c is not one of them, else 0 or
 * an exit status (2: usage). */
static int common_opt(struct gen_args *a, int c)
{
	switch (c) {
	case O_SEED:
		a->seed = parse_u64(c, optarg);
		a->pk.seed = a->pa.seed = a->sk.seed = a->seed;
		return 0;
	case O_SHUFFLE:
		a->shuffle = a->sk.shuffle_seed = parse_u64(c, optarg);
		return 0;
	case O_SIZE:
		a->size = parse_in_range(a->kind, c, optarg);
		return 0;
	case O_BONES:
		a->pk.bones = a->pa.bones = a->sk.n_bones = parse_count(a->kind, c, optarg);
		return 0;
	case O_RECORD:
		a->record = optarg;
		return 0;
	case O_TRUTH:
		a->truth_path = optarg;
		return 0;
	case O_HIER:
		a->hier_path = optarg;
		return 0;
	case O_MANIFEST:
		a->manifest = optarg;
		return 0;
	case O_HOSTILE_SK:
		return skinned_hostile(a, optarg) ? 0 : 2;
	case O_PLATFORM:
		if (!platform_ok(a->kind, optarg))
			return 2;
		a->platform = optarg;
		return 0;
	default:
		return -1;
	}
}

/* argv past the kind into a; -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct gen_args *a)
{
	int c, rc;

	gen_psk_opts_default(&a->pk, 1);
	gen_psa_opts_default(&a->pa, 1);
	a->only = -1;
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (psk_psa_opt(a, c) || psg_folder_opt(a, c))
			continue;
		if ((rc = common_opt(a, c)) >= 0) {
			if (rc)
				return rc;
			continue;
		}
		usage(c == 'h' ? stdout : stderr);
		return c == 'h' ? 0 : 2;
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (a->manifest && strcmp(a->kind, "folder")) {
		fprintf(stderr, "psgfs-gen: --manifest does not apply to %s\n", a->kind);
		return 2;
	}
	if (a->only >= 0 &&
	    (strcmp(a->platform, "ps3") || a->real_shape || a->short_cube || a->partial)) {
		fprintf(stderr, "psgfs-gen: --only takes a ps3 arena of the default set\n");
		return 2;
	}
	a->sk.platform = !strcmp(a->platform, "x360")	    ? GEN_SK_X360
			 : !strcmp(a->platform, "x360-alt") ? GEN_SK_X360_ALT
							    : GEN_SK_PS3;
	a->out = argv[optind];
	a->fo.seed = a->seed;
	a->fo.real_shape = a->real_shape;
	return -1;
}

static enum rc gen_textures(const struct gen_args *a, struct buf *b, struct psg_gen_record *rec)
{
	struct gen_tex_opts to = {
	    .shuffle_seed = a->shuffle, .short_cube = a->short_cube, .partial = a->partial};

	if (a->real_shape)
		to.specs = gen_tex_real_specs(&to.n_specs);
	if (a->only >= 0) {
		/* A per-texture arena as the game names them: one texture, its own GUID. */
		to.specs = gen_tex_default_specs(&to.n_specs) + a->only;
		to.n_specs = 1;
		to.guid_first = (uint32_t)a->only;
	}
	if (!strcmp(a->platform, "x360"))
		return gen_x360_textures(NULL, b, rec, NULL);
	if (!strcmp(a->platform, "ps3-twin"))
		return gen_x360_ps3_twins(NULL, b, rec, NULL);
	return gen_psg_textures(&to, b, rec, NULL);
}

static enum rc gen_skinned(const struct gen_args *a, struct buf *b)
{
	struct gen_skinned_truth truth = {0};
	enum rc r = gen_psg_skinned(&a->sk, b, &truth);

	if (r == RC_OK &&
	    (write_truth(a->truth_path, &truth) || write_hierarchy(a->hier_path, &truth)))
		r = RC_IO;
	gen_skinned_truth_free(&truth);
	return r;
}

/* One file of a kind other than folder into b (and rec for arenas). */
static enum rc generate(const struct gen_args *a, struct buf *b, struct psg_gen_record *rec)
{
	const char *k = a->kind;

	if (!strcmp(k, "psk"))
		return gen_psk_file(&a->pk, b);
	if (!strcmp(k, "psa"))
		return gen_psa_file(&a->pa, b);
	if (!strcmp(k, "sky"))
		return gen_psg_sky_platform(a->sk.platform == GEN_SK_PS3 ? PSGB_PS3 : PSGB_XB2,
					    a->sk.baseres_first ? PSGB_ORDER_BASERES_FIRST
								: PSGB_ORDER_LOGICAL,
					    a->shuffle, b, rec);
	if (!strcmp(k, "sized"))
		return gen_psg_sized(a->size, a->seed, b, rec);
	if (!strcmp(k, "textures"))
		return gen_textures(a, b, rec);
	return gen_skinned(a, b); /* known_kind() let nothing else through */
}

int main(int argc, char **argv)
{
	struct gen_args a = {.sk = {.layout = -1}, .platform = "ps3", .seed = 1, .size = 1 << 20};
	struct psg_gen_record rec = {0};
	uint64_t size = 0;
	struct buf b;
	enum rc r;
	int rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	a.kind = argv[1];
	if (!strcmp(a.kind, "hash"))
		return hash_files(argc - 2, argv + 2);
	if (gen_arc_kind(a.kind))
		return gen_arc_main(argc, argv);
	if (!known_kind(a.kind)) {
		fprintf(stderr, "psgfs-gen: unknown kind '%s'\n", a.kind);
		return 2;
	}
	if ((rc = parse_args(argc, argv, &a)) >= 0)
		return rc;
	if (!strcmp(a.kind, "folder"))
		return run_folder(&a.fo, a.out, a.manifest);
	buf_init(&b);
	r = generate(&a, &b, &rec);
	if (r == RC_OK && !b.oom && a.rows)
		r = gen_psg_sparse_rows(&b, a.rows, &size);
	if (r != RC_OK || b.oom)
		rc = report_failure(a.kind, b.oom ? RC_NOMEM : r);
	else
		rc = write_out(a.out, &b, size) | write_record(a.record, &rec);
	buf_free(&b);
	psg_gen_record_free(&rec);
	return rc;
}
