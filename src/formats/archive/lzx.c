/*
 * Xbox 360 LZX (XMem framing) through libmspack (docs/archives.md, "LZX"). libmspack exports
 * no raw LZX decoder, but its CAB reader runs one: each XMem frame's payload becomes one CFDATA
 * block of a single LZX folder (window 2^17), in a cabinet built in memory, read and extracted
 * through an mspack_system over memory. Without libmspack, LZX stays RC_UNSUPPORTED.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/archive/lzx.h"
#include "psgfs/base/bytes.h"

#ifdef PSGFS_HAVE_MSPACK
#include <mspack.h>

#define LZX_FRAME  32768u
#define LZX_INMAX  (32768u + 6144u) /* the most a CFDATA block may hold */
#define CAB_HEADER 36u
#define CAB_FOLDER 8u
#define CAB_FILE   16u /* without its name */

/* One open "file": the cabinet (read) or the output (write); libmspack only sees its own
 * opaque struct mspack_file. */
struct memfile {
	const uint8_t *rp;
	uint8_t *wp;
	size_t size, pos;
	bool overflow;
};

struct memsys {
	struct mspack_system sys; /* first: libmspack hands it back as self */
	const uint8_t *cab;
	size_t cab_len;
	uint8_t *out;
	size_t out_cap;
};

static struct memsys *current(struct mspack_system *self)
{
	return (struct memsys *)self;
}

static struct mspack_file *ms_open(struct mspack_system *self, const char *name, int mode)
{
	struct memsys *m = current(self);
	struct memfile *f = calloc(1, sizeof *f);

	if (!f)
		return NULL;
	if (!strcmp(name, "in") && mode == MSPACK_SYS_OPEN_READ) {
		f->rp = m->cab;
		f->size = m->cab_len;
	} else if (!strcmp(name, "out") && mode == MSPACK_SYS_OPEN_WRITE) {
		f->wp = m->out;
		f->size = m->out_cap;
	} else {
		free(f);
		return NULL;
	}
	return (struct mspack_file *)f;
}

static void ms_close(struct mspack_file *file)
{
	struct memfile *f = (struct memfile *)file;

	free(f);
}

static int ms_read(struct mspack_file *file, void *buf, int n)
{
	struct memfile *f = (struct memfile *)file;

	size_t k;

	if (!f->rp || n < 0)
		return -1;
	k = f->size - f->pos < (size_t)n ? f->size - f->pos : (size_t)n;
	memcpy(buf, f->rp + f->pos, k);
	f->pos += k;
	return (int)k;
}

static int ms_write(struct mspack_file *file, void *buf, int n)
{
	struct memfile *f = (struct memfile *)file;

	size_t k;

	if (!f->wp || n < 0)
		return -1;
	k = f->size - f->pos < (size_t)n ? f->size - f->pos : (size_t)n;
	memcpy(f->wp + f->pos, buf, k);
	f->pos += k;
	if (k < (size_t)n) {
		f->overflow = true;
		return -1;
	}
	return n;
}

static int ms_seek(struct mspack_file *file, off_t off, int mode)
{
	struct memfile *f = (struct memfile *)file;

	int64_t base = mode == MSPACK_SYS_SEEK_START ? 0
		       : mode == MSPACK_SYS_SEEK_CUR ? (int64_t)f->pos
						     : (int64_t)f->size;

	if (off < -base || base + off > (int64_t)f->size)
		return -1;
	f->pos = (size_t)(base + off);
	return 0;
}

static off_t ms_tell(struct mspack_file *file)
{
	struct memfile *f = (struct memfile *)file;

	return (off_t)f->pos;
}

static void ms_message(struct mspack_file *f, const char *fmt, ...)
{
	(void)f;
	(void)fmt;
}

static void *ms_alloc(struct mspack_system *self, size_t n)
{
	(void)self;
	return malloc(n);
}

static void ms_free(void *p)
{
	free(p);
}

static void ms_copy(void *src, void *dst, size_t n)
{
	memmove(dst, src, n);
}

/* Walk the XMem frames: {FF, u16 unpacked, u16 packed} or {u16 packed} (32 KiB unpacked). */
static bool frames(const uint8_t *in, size_t n, size_t *count, size_t *data, uint64_t *total)
{
	size_t at = 0;

	*count = *data = 0;
	*total = 0;
	while (at < n) {
		size_t un = LZX_FRAME, packed, h = 2;

		if (in[at] == 0xFF) {
			if (n - at < 5)
				return false;
			un = ld_u16be(in + at + 1);
			packed = ld_u16be(in + at + 3);
			h = 5;
		} else {
			if (n - at < 2)
				return false;
			packed = ld_u16be(in + at);
		}
		if (packed == 0)
			break; /* padding after the last frame */
		if (packed > n - at - h || packed > LZX_INMAX || un == 0 || un > LZX_FRAME)
			return false;
		*count += 1;
		*data += 8 + packed;
		*total += un;
		at += h + packed;
	}
	return *count > 0 && *count <= 0xFFFF;
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xFFFF);
	put16(p + 2, v >> 16);
}

/* The cabinet: header, one LZX folder, one file "a", one CFDATA block per frame. */
static uint8_t *cabinet(const uint8_t *in, size_t n, size_t count, size_t data, uint64_t total,
			size_t *len)
{
	size_t data_off = CAB_HEADER + CAB_FOLDER + CAB_FILE + 2, at = 0, w;
	uint8_t *c;

	*len = data_off + data;
	c = calloc(1, *len);
	if (!c)
		return NULL;
	memcpy(c, "MSCF", 4);
	put32(c + 8, (uint32_t)*len);
	put32(c + 16, CAB_HEADER + CAB_FOLDER);
	c[24] = 3;
	c[25] = 1;
	put16(c + 26, 1);
	put16(c + 28, 1);
	put32(c + 36, (uint32_t)data_off);
	put16(c + 40, (unsigned)count);
	put16(c + 42, 0x1103); /* LZX, window 2^17 */
	put32(c + 44, (uint32_t)total);
	put16(c + 54, 0x21);
	put16(c + 58, 0x20);
	c[60] = 'a';
	w = data_off;
	while (at < n) {
		size_t un = LZX_FRAME, packed, h = 2;

		if (in[at] == 0xFF) {
			un = ld_u16be(in + at + 1);
			packed = ld_u16be(in + at + 3);
			h = 5;
		} else {
			packed = ld_u16be(in + at);
		}
		if (packed == 0)
			break;
		put16(c + w + 4, (unsigned)packed);
		put16(c + w + 6, (unsigned)un);
		memcpy(c + w + 8, in + at + h, packed);
		w += 8 + packed;
		at += h + packed;
	}
	return c;
}

enum rc lzx_xmem_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *got)
{
	struct memsys m;
	struct mscab_decompressor *cd;
	struct mscabd_cabinet *cab;
	size_t count, data, len;
	uint64_t total;
	uint8_t *c;
	enum rc r = RC_CORRUPT;

	*got = 0;
	if (!frames(in, n, &count, &data, &total) || total > UINT32_MAX)
		return RC_CORRUPT;
	c = cabinet(in, n, count, data, total, &len);
	if (!c)
		return RC_NOMEM;
	memset(&m, 0, sizeof m);
	m.sys = (struct mspack_system){ms_open,	   ms_close, ms_read, ms_write, ms_seek, ms_tell,
				       ms_message, ms_alloc, ms_free, ms_copy,	NULL};
	m.cab = c;
	m.cab_len = len;
	m.out = out;
	m.out_cap = cap < total ? cap : (size_t)total;
	cd = mspack_create_cab_decompressor(&m.sys);
	if (!cd) {
		free(c);
		return RC_NOMEM;
	}
	cab = cd->open(cd, "in");
	if (cab && cab->files) {
		int e = cd->extract(cd, cab->files, "out");

		/* the output may stop at cap on purpose: a piece shorter than the frames */
		if (e == MSPACK_ERR_OK || (e == MSPACK_ERR_WRITE && cap < total)) {
			*got = m.out_cap;
			r = RC_OK;
		}
	}
	if (cab)
		cd->close(cd, cab);
	mspack_destroy_cab_decompressor(cd);
	free(c);
	return r;
}

bool lzx_available(void)
{
	return true;
}

#else

enum rc lzx_xmem_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *got)
{
	(void)in;
	(void)n;
	(void)out;
	(void)cap;
	*got = 0;
	return RC_UNSUPPORTED;
}

bool lzx_available(void)
{
	return false;
}

#endif
