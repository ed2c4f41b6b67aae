/*
 * Asset folders for folder mounts (include/psgfs/gen/gen_folder.h). Everything is written relative
 * to one directory descriptor, so no path is ever resolved through a link this generator made.
 * Bytes come from the other generators: models are the static sky or a small skinned arena,
 * each companion a texture arena of a few textures (the first default ones, so the sky's
 * diffuse, specular and detail GUIDs are TOC GUIDs there), standalone texture arenas the full
 * default set; each file gets its own dictionary shuffle or seed, so no two are identical.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "psgfs/base/bytes.h"
#include "psgfs/gen/gen_folder.h"
#include "psgfs/gen/gen_psg.h"
#include "psgfs/gen/gen_psg_skinned.h"
#include "psgfs/gen/gen_psg_textures.h"
#include "psgfs/gen/gen_psk.h"
#include "psgfs/gen/gen_x360_textures.h"
#include "psgfs/gen/prng.h"

#define CAS_DB		   "data/content/createacharacter/model/cas_db"
#define TEX_DIR		   "data/content/createacharacter/texture"
#define ACTORX		   "mods/actorx"
#define JUNK		   "data/content/junk"
#define PER_GROUP	   40u /* assets per leaf folder outside the wide one */
#define COMPANION_TEXTURES 6u

struct gf {
	int dirfd;
	struct prng r;
	struct gen_folder_manifest *m;
	bool real;	    /* gen_folder_opts.real_shape */
	uint32_t tex_count; /* real: textures of the next companion (its first TOC GUID is
			       0x2c7f381800171900, as gen_psg_textures numbers them) */
	enum rc err;	    /* sticky: the first failure */
	uint32_t serial;
	uint32_t in_group[4]; /* models, textures, psk, psa: assets placed so far */
};

static const char *const categories[] = {"shirt",  "pants",  "shoes", "hat",  "board",
					 "wheels", "trucks", "head",  "hair", "gloves"};
#define N_CATEGORIES (sizeof categories / sizeof categories[0])

/* ---- the manifest ---- */

static void note(struct gf *g, const char *path, const char *kind, const char *shown)
{
	struct gen_folder_manifest *m = g->m;
	struct gen_folder_entry *v;
	char *p;

	if (!m || g->err != RC_OK)
		return;
	v = xgrow_n(m->v, m->n, &m->cap, sizeof *v, 64);
	if (!v) {
		g->err = RC_NOMEM;
		return;
	}
	m->v = v;
	p = strdup(path);
	if (!p) {
		g->err = RC_NOMEM;
		return;
	}
	m->v[m->n++] = (struct gen_folder_entry){p, kind, shown};
	m->assets += !strcmp(shown, "asset");
}

void gen_folder_manifest_free(struct gen_folder_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof *m);
}

/* ---- writing ---- */

static void io_fail(struct gf *g)
{
	if (g->err == RC_OK)
		g->err = RC_IO;
}

/* mkdir -p of rel; each folder made is noted once. */
static void make_dirs(struct gf *g, const char *rel)
{
	char p[4096];
	size_t n = strlen(rel);

	if (n >= sizeof p) {
		io_fail(g);
		return;
	}
	memcpy(p, rel, n + 1);
	for (size_t i = 0; i <= n && g->err == RC_OK; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdirat(g->dirfd, p, 0755) == 0)
			note(g, p, "dir", "dir");
		else if (errno != EEXIST)
			io_fail(g);
		p[i] = i < n ? '/' : '\0';
	}
}

static void put_file(struct gf *g, const char *rel, const void *data, size_t len)
{
	const uint8_t *p = data;
	int fd;

	if (g->err != RC_OK)
		return;
	fd = openat(g->dirfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		io_fail(g);
		return;
	}
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			io_fail(g);
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (close(fd) != 0)
		io_fail(g);
}

/* Write a generated buffer (consumed) as rel and note it. */
static void put_buf(struct gf *g, const char *rel, struct buf *b, enum rc r, const char *kind,
		    const char *shown)
{
	if (g->err == RC_OK && (r != RC_OK || b->oom))
		g->err = r != RC_OK ? r : RC_NOMEM;
	put_file(g, rel, b->data, b->len);
	buf_free(b);
	note(g, rel, kind, shown);
}

static void put_text(struct gf *g, const char *rel, const char *text, const char *kind,
		     const char *shown)
{
	put_file(g, rel, text, strlen(text));
	note(g, rel, kind, shown);
}

static void put_link(struct gf *g, const char *rel, const char *target)
{
	if (g->err == RC_OK && symlinkat(target, g->dirfd, rel) != 0)
		io_fail(g);
	note(g, rel, "link", "link");
}

/* A listening-free UNIX socket left on disk: bound through the folder's descriptor, since a
 * socket path is limited to 107 bytes however deep the folder is. */
static void put_socket(struct gf *g, const char *dir, const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int dfd, s;

	if (g->err != RC_OK)
		return;
	dfd = openat(g->dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (dfd < 0 || s < 0 ||
	    snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", dfd, name) >=
		(int)sizeof sa.sun_path ||
	    bind(s, (struct sockaddr *)&sa, sizeof sa) != 0)
		io_fail(g);
	if (s >= 0)
		close(s);
	if (dfd >= 0)
		close(dfd);
}

/* ---- contents ---- */

static uint64_t next_seed(struct gf *g)
{
	return prng_next(&g->r) | 1; /* never 0, which the generators read as "default" */
}

/* A character model as real cas_db files are: the skater encoding, rig bone names, a few
 * meshes of some thousand vertices. */
static enum rc real_model_bytes(struct gf *g, struct buf *b)
{
	struct gen_skinned_opts o = {.layout = GEN_SK_SKATER, .rig_names = true};

	/* Materials naming the companion's textures (put_pair writes it with tex_count). */
	o.tex_guid = 0x2c7f381800171900ull;
	o.tex_count = g->tex_count;

	o.seed = next_seed(g);
	o.n_bones = 40 + prng_below(&g->r, 92);
	o.n_meshes = 2 + prng_below(&g->r, 5);
	o.verts = 1000 + prng_below(&g->r, 4001);
	o.islands = 1 + prng_below(&g->r, 3);
	o.tris = 300 + prng_below(&g->r, 1201);
	o.shuffle_seed = prng_below(&g->r, 2) ? next_seed(g) : 0;
	return gen_psg_skinned(&o, b, NULL);
}

/* Half static sky models (their materials name textures of the companion), half small
 * skinned ones; real-shaped folders: character models. */
static enum rc model_bytes(struct gf *g, struct buf *b)
{
	struct gen_skinned_opts o = {.layout = -1};

	if (g->real)
		return real_model_bytes(g, b);
	if (prng_below(&g->r, 2) == 0)
		return gen_psg_sky(next_seed(g), b, NULL);
	o.seed = next_seed(g);
	o.n_bones = 3 + prng_below(&g->r, 22);
	o.n_meshes = 1 + prng_below(&g->r, 3);
	o.verts = 24 + prng_below(&g->r, 73);
	o.islands = 1 + prng_below(&g->r, 2);
	o.tris = 8 + prng_below(&g->r, 17);
	o.shuffle_seed = prng_below(&g->r, 2) ? next_seed(g) : 0;
	return gen_psg_skinned(&o, b, NULL);
}

static enum rc textures_bytes(struct gf *g, size_t n_specs, struct buf *b)
{
	struct gen_tex_opts o = {0};
	size_t n;

	o.specs = gen_tex_default_specs(&n);
	o.n_specs = n_specs && n_specs < n ? n_specs : n;
	if (g->real) { /* a run of tex_count of the real arena's textures (all of it for 0) */
		o.specs = gen_tex_real_specs(&n);
		o.n_specs = n_specs ? g->tex_count : n;
		o.specs += prng_below(&g->r, (uint32_t)(n - o.n_specs + 1));
	}
	o.shuffle_seed = next_seed(g);
	return gen_psg_textures(&o, b, NULL, NULL);
}

/* A per-texture arena as the game names them: 0x<GUID>.psg, its one TOC entry that GUID. */
static void put_texture_arena(struct gf *g, const char *dir, uint32_t id)
{
	struct gen_tex_opts o = {.n_specs = 1, .guid_first = id};
	char p[4096];
	size_t n;
	struct buf b;

	o.specs = gen_tex_real_specs(&n);
	o.specs += 1 + prng_below(&g->r, (uint32_t)(n - 1)); /* 512x512 and smaller */
	o.shuffle_seed = next_seed(g);
	snprintf(p, sizeof p, "%s/0x%016llx.psg", dir, 0x2c7f381800171900ull + id);
	buf_init(&b);
	put_buf(g, p, &b, gen_psg_textures(&o, &b, NULL, NULL), "textures", "asset");
}

static enum rc psk_bytes(struct gf *g, struct buf *b)
{
	struct gen_psk_opts o;

	gen_psk_opts_default(&o, next_seed(g));
	o.bones = 1 + prng_below(&g->r, 40);
	o.points = 8 + prng_below(&g->r, 57);
	o.materials = 1 + prng_below(&g->r, 3);
	o.normals = prng_below(&g->r, 2);
	return gen_psk_file(&o, b);
}

static enum rc psa_bytes(struct gf *g, struct buf *b)
{
	struct gen_psa_opts o;

	gen_psa_opts_default(&o, next_seed(g));
	o.bones = 1 + prng_below(&g->r, 20);
	o.sequences = 1 + prng_below(&g->r, 4);
	o.max_frames = 1 + prng_below(&g->r, 8);
	return gen_psa_file(&o, b);
}

static enum rc rx2_bytes(struct buf *b)
{
	static const struct gen_x360_spec specs[] = {
	    {X360TEX_FMT_DXT1, 32, 32, 0, false},
	    {X360TEX_FMT_8_8_8_8, 16, 16, 1, false},
	    {X360TEX_FMT_DXT4_5, 64, 64, 0, false},
	};
	struct gen_x360_opts o = {.specs = specs, .n_specs = sizeof specs / sizeof specs[0]};

	return gen_x360_textures(&o, b, NULL, NULL);
}

/* ---- placing assets ---- */

/* A model and its companion texture arena, side by side in dir. */
static void put_pair(struct gf *g, const char *dir, const char *stem)
{
	char p[4096];
	struct buf b;

	if (g->real) /* 3-8 textures, which the model's materials name */
		g->tex_count = 3 + prng_below(&g->r, 6);
	buf_init(&b);
	snprintf(p, sizeof p, "%s/%s.psg", dir, stem);
	put_buf(g, p, &b, model_bytes(g, &b), "model", "asset");
	buf_init(&b);
	snprintf(p, sizeof p, "%s/%s_Textures.psg", dir, stem);
	put_buf(g, p, &b, textures_bytes(g, COMPANION_TEXTURES, &b), "companion", "asset");
}

enum { K_MODEL, K_TEX, K_PSK, K_PSA };

/* The leaf folder the next asset of kind k goes to (made when new); its category. */
static const char *group_dir(struct gf *g, unsigned k, char *out, size_t outlen)
{
	uint32_t at = g->in_group[k]++;
	uint32_t group = at / PER_GROUP;
	const char *cat = categories[group % N_CATEGORIES];
	uint32_t sub = (uint32_t)(group / N_CATEGORIES);

	if (k == K_MODEL)
		snprintf(out, outlen, CAS_DB "/%s/g%03u", cat, sub);
	else if (k == K_TEX)
		snprintf(out, outlen, TEX_DIR "/%s/g%03u", cat, sub);
	else
		snprintf(out, outlen, ACTORX "/%s/g%03u", k == K_PSK ? "meshes" : "anims",
			 (unsigned)group);
	if (at % PER_GROUP == 0)
		make_dirs(g, out);
	return cat;
}

/* One pick: a model pair (2 assets) or a single asset; returns the assets made. */
static uint32_t put_one(struct gf *g, uint32_t left)
{
	unsigned pick = prng_below(&g->r, 8);
	char dir[1024], p[4096];
	uint32_t id = g->serial++;
	struct buf b;

	if (g->real) /* character pairs and per-texture arenas, no Unreal files */
		pick = pick < 6 && left >= 2 ? 0 : 4;
	if (pick < 4 && left < 2)
		pick = 4 + prng_below(&g->r, 3);
	if (pick < 4) {
		const char *cat = group_dir(g, K_MODEL, dir, sizeof dir);
		char stem[64];

		g->in_group[K_MODEL]++; /* the companion */
		snprintf(stem, sizeof stem, "%s_%05u", cat, id);
		put_pair(g, dir, stem);
		return 2;
	}
	if (pick == 4 && g->real) {
		group_dir(g, K_TEX, dir, sizeof dir);
		put_texture_arena(g, dir, id);
		return 1;
	}
	buf_init(&b);
	if (pick == 4) {
		group_dir(g, K_TEX, dir, sizeof dir);
		snprintf(p, sizeof p, "%s/tex_%05u.psg", dir, id);
		put_buf(g, p, &b, textures_bytes(g, 0, &b), "textures", "asset");
	} else if (pick == 5) {
		group_dir(g, K_PSK, dir, sizeof dir);
		snprintf(p, sizeof p, "%s/mesh_%05u.psk", dir, id);
		put_buf(g, p, &b, psk_bytes(g, &b), "psk", "asset");
	} else {
		group_dir(g, K_PSA, dir, sizeof dir);
		snprintf(p, sizeof p, "%s/anim_%05u.psa", dir, id);
		put_buf(g, p, &b, psa_bytes(g, &b), "psa", "asset");
	}
	return 1;
}

/* The one wide folder: model pairs, and a texture arena when wide is odd. */
static void put_wide(struct gf *g, uint32_t wide)
{
	const char *dir = CAS_DB "/wide";
	char stem[64], p[4096];
	struct buf b;

	if (!wide)
		return;
	make_dirs(g, dir);
	for (uint32_t i = 0; i + 1 < wide && g->err == RC_OK; i += 2) {
		snprintf(stem, sizeof stem, "wide_%05u", i / 2);
		put_pair(g, dir, stem);
	}
	if (wide % 2) {
		buf_init(&b);
		snprintf(p, sizeof p, "%s/wide_textures.psg", dir);
		put_buf(g, p, &b, textures_bytes(g, 0, &b), "textures", "asset");
	}
}

/* ---- junk: everything a folder mount must survive ---- */

static void junk_files(struct gf *g)
{
	struct buf b;

	put_text(g, "readme.txt", "Unpacked with the archive tool; see cas_db for models.\n",
		 "plain", "file");
	put_text(g, JUNK "/empty.psg", "", "empty", "file");
	/* Named like assets: the name decides (a broken asset saying why), unless -o sniff_all. */
	put_text(g, JUNK "/notes.psg", "not an arena: a text file named .psg\n", "not-arena",
		 "broken");
	put_text(g, JUNK "/fake.psk", "ACTR but no ACTRHEAD: plain text\n", "not-arena", "broken");
	buf_init(&b);
	if (gen_psg_sky(0, &b, NULL) == RC_OK && b.len > 100)
		b.len = 100; /* the header survives, the rest is gone */
	put_buf(g, JUNK "/truncated.psg", &b, b.len == 100 ? RC_OK : RC_IO, "truncated", "broken");
	buf_init(&b);
	put_buf(g, JUNK "/SHOUTY.PSG", &b, gen_psg_sky(next_seed(g), &b, NULL), "model", "asset");
	buf_init(&b);
	put_buf(g, JUNK "/MESH.PSKX", &b, psk_bytes(g, &b), "psk", "asset");
	buf_init(&b);
	put_buf(g, JUNK "/model_without_extension", &b, model_bytes(g, &b), "disguised", "asset");
	buf_init(&b);
	put_buf(g, JUNK "/textures_x360.rx2", &b, rx2_bytes(&b), "rx2", "asset");
	buf_init(&b);
	put_buf(g, JUNK "/name with spaces.psa", &b, psa_bytes(g, &b), "psa", "asset");
	buf_init(&b);
	put_buf(g,
		JUNK "/\xc3\xbc"
		     "n\xc3\xaf"
		     "code_mesh.psk",
		&b, psk_bytes(g, &b), "psk", "asset");
	buf_init(&b);
	put_buf(g, JUNK "/.hidden.psa", &b, psa_bytes(g, &b), "psa", "asset");
	make_dirs(g, JUNK "/deep/a/b/c/d/e/f/g/h");
	buf_init(&b);
	put_buf(g, JUNK "/deep/a/b/c/d/e/f/g/h/deep.psk", &b, psk_bytes(g, &b), "psk", "asset");
}

static void junk_special(struct gf *g)
{
	struct buf b;

	if (g->err == RC_OK &&
	    linkat(g->dirfd, JUNK "/SHOUTY.PSG", g->dirfd, JUNK "/hardlink.psg", 0) != 0)
		io_fail(g);
	note(g, JUNK "/hardlink.psg", "hardlink", "asset");
	buf_init(&b);
	put_buf(g, JUNK "/locked.psg", &b, gen_psg_sky(next_seed(g), &b, NULL), "unreadable",
		"broken");
	if (g->err == RC_OK && fchmodat(g->dirfd, JUNK "/locked.psg", 0, 0) != 0)
		io_fail(g);
	put_link(g, JUNK "/sibling.psg", "SHOUTY.PSG");
	put_link(g, JUNK "/loop_a", "loop_b");
	put_link(g, JUNK "/loop_b", "loop_a");
	put_link(g, JUNK "/self.psg", "self.psg");
	put_link(g, JUNK "/dangling.psg", "gone.psg");
	put_link(g, JUNK "/up", "../createacharacter");
	put_link(g, JUNK "/outside", "/etc/hostname");
	if (g->err == RC_OK && mkfifoat(g->dirfd, JUNK "/x.psg", 0644) != 0)
		io_fail(g);
	note(g, JUNK "/x.psg", "fifo", "absent");
	put_socket(g, JUNK, "socket.psg");
	note(g, JUNK "/socket.psg", "socket", "absent");
}

/* ---- the whole folder ---- */

static enum rc gf_run(struct gf *g, uint32_t assets, uint32_t wide)
{
	uint32_t made = wide;

	put_wide(g, wide);
	while (made < assets && g->err == RC_OK)
		made += put_one(g, assets - made);
	make_dirs(g, JUNK);
	junk_files(g);
	junk_special(g);
	return g->err;
}

enum rc gen_folder(const struct gen_folder_opts *o, const char *outdir,
		   struct gen_folder_manifest *m)
{
	uint32_t assets = o->assets ? o->assets : 60;
	struct gf g = {.dirfd = -1, .m = m, .real = o->real_shape};
	enum rc r;

	if (m)
		memset(m, 0, sizeof *m);
	if (assets > GEN_FOLDER_MAX_ASSETS || o->wide > assets)
		return RC_INVAL;
	if (mkdir(outdir, 0755) != 0)
		return errno == EEXIST ? RC_INVAL : RC_IO;
	g.dirfd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (g.dirfd < 0)
		return RC_IO;
	prng_seed(&g.r, o->seed ^ 0xF01DE5F01DE5ull);
	r = gf_run(&g, assets, o->wide);
	close(g.dirfd);
	return r;
}
