/* Growable output buffer with a counting mode, plus the text helpers every TSV uses. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psgfs/base/buf.h"
#include "psgfs/base/bytes.h"

void buf_init(struct buf *b)
{
	memset(b, 0, sizeof *b);
}

void buf_init_count(struct buf *b)
{
	memset(b, 0, sizeof *b);
	b->count_only = true;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

uint8_t *buf_steal(struct buf *b, size_t *len)
{
	uint8_t *p = b->oom ? NULL : b->data;

	*len = p ? b->len : 0;
	if (!p)
		free(b->data);
	else if (b->cap - b->len > b->len / 16) {
		/* Up to half of a grown buffer is slack; callers keep it (caches count len). */
		uint8_t *q = realloc(p, b->len ? b->len : 1);

		if (q)
			p = q;
	}
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

void buf_prealloc(struct buf *b, size_t cap)
{
	uint8_t *p;

	if (b->count_only || b->oom || cap <= b->cap)
		return;
	p = realloc(b->data, cap);
	if (!p)
		return; /* only speed is lost: the buffer still grows on demand */
	b->data = p;
	b->cap = cap;
}

/* Make room for n more bytes; false (and oom) when that cannot be done. */
static bool buf_reserve(struct buf *b, size_t n)
{
	size_t want, cap;
	uint8_t *p;

	if (b->oom)
		return false;
	if (n > SIZE_MAX - b->len) {
		b->oom = true;
		return false;
	}
	if (b->count_only) {
		b->len += n;
		return false;
	}
	want = b->len + n;
	if (want <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void buf_put_slow(struct buf *b, const void *p, size_t n)
{
	if (n == 0 || !buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void buf_zero(struct buf *b, size_t n)
{
	if (n == 0 || !buf_reserve(b, n))
		return;
	memset(b->data + b->len, 0, n);
	b->len += n;
}

void buf_puts(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

/* The stdio path: every conversion, at vsnprintf's price. */
static void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	char small[256];
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof small, fmt, ap);
	if (n < 0) {
		b->oom = true;
	} else if ((size_t)n < sizeof small) {
		buf_put(b, small, (size_t)n);
	} else if (b->count_only) {
		buf_reserve(b, (size_t)n);
	} else if (buf_reserve(b, (size_t)n + 1)) {
		vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap2);
		b->len += (size_t)n;
	}
	va_end(ap2);
}

/*
 * The fast path writes the conversions the views use by the thousand (d i u x X c s %%, flags
 * '-' and '0', a width, a string's precision, the length modifiers hh h l ll z j t) the way
 * glibc does, staged in a block on the stack; anything else (floats, other flags, a NULL
 * string, a huge width) makes it give up and the whole call goes through vsnprintf.
 */
struct fstage {
	struct buf *b;
	char *o; /* next free byte of s */
	char s[512];
};

static void fs_flush(struct fstage *f)
{
	buf_put(f->b, f->s, (size_t)(f->o - f->s));
	f->o = f->s;
}

/* Room for n (<= sizeof s) more staged bytes. */
static inline void fs_need(struct fstage *f, size_t n)
{
	if (n > (size_t)(f->s + sizeof f->s - f->o))
		fs_flush(f);
}

static void fs_put(struct fstage *f, const char *p, size_t n)
{
	if (n > sizeof f->s / 2) {
		fs_flush(f);
		buf_put(f->b, p, n);
		return;
	}
	fs_need(f, n);
	memcpy(f->o, p, n);
	f->o += n;
}

static void fs_pad(struct fstage *f, char c, size_t n)
{
	while (n) {
		size_t k = n < sizeof f->s / 2 ? n : sizeof f->s / 2;

		fs_need(f, k);
		memset(f->o, c, k);
		f->o += k;
		n -= k;
	}
}

/* A field of len bytes (after the sign, if neg) padded to width (>= 0) as the flags say. */
static void fs_field(struct fstage *f, bool neg, const char *p, size_t len, int width, bool left,
		     bool zero)
{
	size_t pad = (size_t)width > neg + len ? (size_t)width - neg - len : 0;

	if (!pad) { /* the common case: no padding, and a number always fits the block */
		if (len <= 24) {
			fs_need(f, 25);
			*f->o = '-';
			f->o += neg;
			memcpy(f->o, p, len);
			f->o += len;
		} else {
			fs_put(f, p, len);
		}
		return;
	}
	if (!left && !zero)
		fs_pad(f, ' ', pad);
	fs_put(f, "-", neg);
	if (!left && zero)
		fs_pad(f, '0', pad);
	fs_put(f, p, len);
	if (left)
		fs_pad(f, ' ', pad);
}

/* Decimal digits of v ending at end; returns where they start. */
static inline char *dec_end(char *end, uint64_t v)
{
	static const char d2[] = "00010203040506070809101112131415161718192021222324252627282930"
				 "31323334353637383940414243444546474849505152535455565758596061"
				 "6263646566676869707172737475767778798081828384858687888990919293"
				 "949596979899";
	uint32_t w;

	while (v > UINT32_MAX) {
		end -= 2;
		memcpy(end, d2 + 2 * (v % 100), 2);
		v /= 100;
	}
	for (w = (uint32_t)v; w >= 100; w /= 100) { /* 32-bit divisions from here */
		end -= 2;
		memcpy(end, d2 + 2 * (w % 100), 2);
	}
	if (w >= 10) {
		end -= 2;
		memcpy(end, d2 + 2 * w, 2);
	} else {
		*--end = (char)('0' + w);
	}
	return end;
}

static inline char *hex_end(char *end, uint64_t v, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";

	do {
		*--end = digits[v & 15];
		v >>= 4;
	} while (v);
	return end;
}

/* Width or precision digits (at most 4, so a field stays small), or '*' (*star set); -1 when
 * absent. */
static inline bool fs_number(const char **pp, va_list *ap, int *v, bool *star)
{
	const char *p = *pp;
	int n = 0, k = 0;

	*star = *p == '*';
	if (*star) {
		*v = va_arg(*ap, int);
		*pp = p + 1;
		return true;
	}
	while (*p >= '0' && *p <= '9' && k < 5)
		n = n * 10 + (*p++ - '0'), k++;
	if (k == 5)
		return false;
	*v = k ? n : -1;
	*pp = p;
	return true;
}

static inline uint64_t fs_signed(va_list *ap, char len, bool *neg)
{
	long long v;

	switch (len) {
	case 'H':
		v = (signed char)va_arg(*ap, int);
		break;
	case 'h':
		v = (short)va_arg(*ap, int);
		break;
	case 'l':
		v = va_arg(*ap, long);
		break;
	case 'L':
		v = va_arg(*ap, long long);
		break;
	case 'z':
		v = (long long)(ptrdiff_t)va_arg(*ap, size_t);
		break;
	case 'j':
		v = (long long)va_arg(*ap, intmax_t);
		break;
	case 't':
		v = (long long)va_arg(*ap, ptrdiff_t);
		break;
	default:
		v = va_arg(*ap, int);
	}
	*neg = v < 0;
	return *neg ? 0 - (uint64_t)v : (uint64_t)v;
}

static inline uint64_t fs_unsigned(va_list *ap, char len)
{
	switch (len) {
	case 'H':
		return (unsigned char)va_arg(*ap, unsigned);
	case 'h':
		return (unsigned short)va_arg(*ap, unsigned);
	case 'l':
		return va_arg(*ap, unsigned long);
	case 'L':
		return va_arg(*ap, unsigned long long);
	case 'z':
		return va_arg(*ap, size_t);
	case 'j':
		return (uint64_t)va_arg(*ap, uintmax_t);
	case 't':
		return (size_t)va_arg(*ap, ptrdiff_t);
	default:
		return va_arg(*ap, unsigned);
	}
}

/* A conversion's flags, width, precision (-1: none) and length ('H' is hh, 'L' ll). */
struct fspec {
	bool left, zero;
	int width, prec;
	char len;
};

/* Parse from after the '%' up to the conversion character, where *pp is left; false to give
 * up (a width or precision this writer does not take). */
static bool fs_spec(const char **pp, va_list *ap, struct fspec *sp)
{
	const char *p = *pp;
	bool star;

	*sp = (struct fspec){.prec = -1};
	for (;; p++)
		if (*p == '-')
			sp->left = true;
		else if (*p == '0')
			sp->zero = true;
		else
			break;
	if ((*p >= '1' && *p <= '9') || *p == '*') {
		if (!fs_number(&p, ap, &sp->width, &star))
			return false;
		if (sp->width < 0) { /* a negative '*' width: left-justified */
			if (sp->width == INT_MIN)
				return false;
			sp->left = true;
			sp->width = -sp->width;
		}
		if (sp->width > 4096)
			return false;
	}
	if (*p == '.') {
		p++;
		if (!fs_number(&p, ap, &sp->prec, &star))
			return false;
		if (sp->prec < 0 && !star)
			sp->prec = 0; /* "." alone is precision 0; a negative '*' one is none */
	}
	if (*p == 'h')
		sp->len = *++p == 'h' ? (p++, 'H') : 'h';
	else if (*p == 'l')
		sp->len = *++p == 'l' ? (p++, 'L') : 'l';
	else if (*p == 'z' || *p == 'j' || *p == 't')
		sp->len = *p++;
	*pp = p;
	return true;
}

/* One conversion after its '%' at *pp; false to give up. */
static bool fs_conv(struct fstage *f, const char **pp, va_list *ap)
{
	const char *p = *pp, *at = *pp;
	struct fspec sp;
	bool neg = false;
	char tmp[24], *d, *end = tmp + sizeof tmp;

	if (!fs_spec(&p, ap, &sp))
		return false;
	*pp = p + 1;
	if (*p != 's' && sp.prec >= 0)
		return false; /* an integer's precision: not written here */
	switch (*p) {
	case 'u':
		d = dec_end(end, fs_unsigned(ap, sp.len));
		break;
	case 'x':
	case 'X':
		d = hex_end(end, fs_unsigned(ap, sp.len), *p == 'X');
		break;
	case 'd':
	case 'i':
		d = dec_end(end, fs_signed(ap, sp.len, &neg));
		break;
	case 'c':
		if (sp.len || sp.zero)
			return false;
		d = end - 1;
		*d = (char)(unsigned char)va_arg(*ap, int);
		sp.zero = false;
		break;
	case 's':
		if (sp.len || sp.zero)
			return false;
		d = va_arg(*ap, char *);
		if (!d)
			return false; /* glibc's "(null)" rules: left to it */
		fs_field(f, false, d, sp.prec >= 0 ? strnlen(d, (size_t)sp.prec) : strlen(d),
			 sp.width, sp.left, false);
		return true;
	case '%':
		if (p != at)
			return false; /* "%%" only */
		fs_need(f, 1);
		*f->o++ = '%';
		return true;
	default:
		return false;
	}
	fs_field(f, neg, d, (size_t)(end - d), sp.width, sp.left, sp.zero);
	return true;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	struct fstage f;
	size_t start = b->len;
	const char *p = fmt;
	char *end;
	va_list ap, ap0;

	f.b = b;
	f.o = f.s;
	end = f.s + sizeof f.s;
	va_start(ap, fmt);
	va_copy(ap0, ap);
	for (;;) {
		char c = *p;

		if (c == '%') {
			p++;
			if (fs_conv(&f, &p, &ap))
				continue;
			/* Undo what was written (a counting buffer counted it) and let stdio do
			 * all. */
			if (!b->oom)
				b->len = start;
			buf_vprintf(b, fmt, ap0);
			goto out;
		}
		if (!c)
			break;
		if (f.o == end)
			fs_flush(&f);
		*f.o++ = c;
		p++;
	}
	fs_flush(&f);
out:
	va_end(ap);
	va_end(ap0);
}

void buf_pad_to(struct buf *b, size_t align)
{
	if (align > 1 && b->len % align)
		buf_zero(b, align - b->len % align);
}

void buf_u8(struct buf *b, uint8_t v)
{
	buf_put(b, &v, 1);
}

void buf_u16le(struct buf *b, uint16_t v)
{
	uint8_t p[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	buf_put(b, p, 2);
}

void buf_u16be(struct buf *b, uint16_t v)
{
	uint8_t p[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	buf_put(b, p, 2);
}

void buf_u32be(struct buf *b, uint32_t v)
{
	uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	buf_put(b, p, 4);
}

void buf_u64be(struct buf *b, uint64_t v)
{
	buf_u32be(b, (uint32_t)(v >> 32));
	buf_u32be(b, (uint32_t)v);
}

void buf_f32be(struct buf *b, float v)
{
	buf_u32be(b, f32_bits(v));
}

void buf_set_u32be(struct buf *b, size_t at, uint32_t v)
{
	if (b->count_only || b->oom || at > b->len || b->len - at < 4)
		return;
	b->data[at] = (uint8_t)(v >> 24);
	b->data[at + 1] = (uint8_t)(v >> 16);
	b->data[at + 2] = (uint8_t)(v >> 8);
	b->data[at + 3] = (uint8_t)v;
}

/* The reference: %.Ng for the smallest N in 6..9 whose text reads back to f. */
static void fmt_f32_printf(char out[32], float f)
{
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(out, 32, "%.*g", prec, (double)f);
		if (strtof(out, NULL) == f && (f != 0 || signbit(strtof(out, NULL)) == signbit(f)))
			return;
	}
}

/*
 * The same text as fmt_f32_printf, in exact integer arithmetic: for each N, the correctly
 * rounded N-digit decimal of f (ties to even, as printf) and whether it lies inside f's
 * rounding interval (what strtof's round-to-nearest-even makes of it). Values whose products
 * would not fit 127 bits (|f| beyond about 1e-20 .. 1e25) return false and take the printf path.
 */
__extension__ typedef unsigned __int128 u128;

static int u128_bits(u128 x)
{
	uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;

	return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

static u128 pow10_u128(int n)
{
	static const uint64_t p10[20] = {1ull,
					 10ull,
					 100ull,
					 1000ull,
					 10000ull,
					 100000ull,
					 1000000ull,
					 10000000ull,
					 100000000ull,
					 1000000000ull,
					 10000000000ull,
					 100000000000ull,
					 1000000000000ull,
					 10000000000000ull,
					 100000000000000ull,
					 1000000000000000ull,
					 10000000000000000ull,
					 100000000000000000ull,
					 1000000000000000000ull,
					 10000000000000000000ull};

	return n <= 19 ? p10[n] : (u128)p10[19] * p10[n - 19]; /* n <= 38 */
}

/* a * 10^p10 * 2^p2 (both >= 0) when it fits in 127 bits. */
static bool scale_u128(u128 a, int p10, int p2, u128 *out)
{
	if (p10 > 38 || p2 > 126)
		return false;
	if (p10) {
		u128 t = pow10_u128(p10);

		if (u128_bits(a) + u128_bits(t) > 127)
			return false;
		a *= t;
	}
	if (p2) {
		if (u128_bits(a) + p2 > 127)
			return false;
		a <<= p2;
	}
	*out = a;
	return true;
}

/*
 * floor(a * 2^s / 10^k) in *q, whether that was exact, and the remainder against half a unit
 * (-1 below, 0 exactly half, 1 above); false when it does not fit.
 */
static bool scaled_div(u128 a, int k, int s, uint64_t *q, bool *exact, int *half)
{
	u128 num, den, qq, rem;

	if (!scale_u128(a, k < 0 ? -k : 0, s > 0 ? s : 0, &num) ||
	    !scale_u128(1, k > 0 ? k : 0, s < 0 ? -s : 0, &den))
		return false;
	if (k <= 0) { /* den is a power of two */
		qq = s < 0 ? num >> -s : num;
		rem = s < 0 ? num & (den - 1) : 0;
	} else {
		qq = num / den;
		rem = num % den;
	}
	if (qq >> 62)
		return false;
	*q = (uint64_t)qq;
	*exact = rem == 0;
	*half = 2 * rem < den ? -1 : 2 * rem > den;
	return true;
}

/* printf's %.{prec}g text of q * 10^(x - prec + 1), q having exactly prec digits; its length. */
static size_t fmt_g(char *o, bool neg, uint64_t q, int x, int prec)
{
	char d[24], *o0 = o;
	int n = 0;

	dec_end(d + prec, q); /* q has exactly prec digits */
	n = prec;
	while (n > 1 && d[n - 1] == '0')
		n--;
	if (neg)
		*o++ = '-';
	if (x < -4 || x >= prec) {
		unsigned ax = (unsigned)(x < 0 ? -x : x);

		*o++ = d[0];
		if (n > 1) {
			*o++ = '.';
			memcpy(o, d + 1, (size_t)n - 1);
			o += n - 1;
		}
		*o++ = 'e';
		*o++ = x < 0 ? '-' : '+';
		if (ax >= 100)
			*o++ = (char)('0' + ax / 100);
		*o++ = (char)('0' + ax / 10 % 10);
		*o++ = (char)('0' + ax % 10);
	} else if (x >= 0) {
		for (int i = 0; i <= x; i++)
			*o++ = i < n ? d[i] : '0';
		if (n > x + 1) {
			*o++ = '.';
			memcpy(o, d + x + 1, (size_t)(n - x - 1));
			o += n - x - 1;
		}
	} else {
		*o++ = '0';
		*o++ = '.';
		for (int i = 0; i < -x - 1; i++)
			*o++ = '0';
		memcpy(o, d, (size_t)n);
		o += n;
	}
	*o = '\0';
	return (size_t)(o - o0);
}

/*
 * floor(|f| / 10^k) for the grid of the nine digits and the ends of f's interval: the value
 * v * 2^s / 10^k for v = v4 - dlo, v4, v4 + 2. Below 10^9 (k <= 0) the divisor 10^k is a
 * multiplier and the power of two a shift, so this is three multiplications, no division.
 */
struct grid9 {
	uint64_t q, qlo, qhi; /* floor of each */
	bool ex, exlo, exhi;  /* each exact */
	int half;	      /* q's remainder against half a unit: -1, 0, 1 */
};

static bool grid9_at(uint64_t v4, uint32_t dlo, int k, int s, struct grid9 *g)
{
	u128 u, n, mask;
	int t = s < 0 ? -s : 0, dummy;

	if (k > 0) /* |f| >= 10^9: true divisions (rare) */
		return scaled_div(v4, k, s, &g->q, &g->ex, &g->half) &&
		       scaled_div(v4 - dlo, k, s, &g->qlo, &g->exlo, &dummy) &&
		       scaled_div(v4 + 2, k, s, &g->qhi, &g->exhi, &dummy);
	/* v4 + 2 < 2^27: each product fits when u has at most 100 bits */
	if (-k > 38 || t > 126)
		return false;
	u = pow10_u128(-k);
	if (s > 0) {
		if (u128_bits(u) + s > 100)
			return false;
		u <<= s;
	} else if (u128_bits(u) > 100) {
		return false;
	}
	mask = ((u128)1 << t) - 1;
	n = (u128)v4 * u;
	if ((n >> t) >> 62)
		return false;
	g->q = (uint64_t)(n >> t);
	g->ex = (n & mask) == 0;
	g->half = t == 0			      ? -1
		  : (n & mask) < ((u128)1 << (t - 1)) ? -1
						      : (n & mask) > ((u128)1 << (t - 1));
	n = (u128)(v4 - dlo) * u;
	g->qlo = (uint64_t)(n >> t);
	g->exlo = (n & mask) == 0;
	n = (u128)(v4 + 2) * u;
	g->qhi = (uint64_t)(n >> t);
	g->exhi = (n & mask) == 0;
	return true;
}

/* The %.{prec}g candidate q9 rounds to at d = 10^(9 - prec), if f reads back from it: its
 * length, or 0. */
static inline size_t try_prec(char out[32], bool neg, const struct grid9 *g, bool even, int x,
			      int prec, uint64_t d)
{
	uint64_t qp = g->q / d, r = g->q % d, c;
	bool up;

	/* printf rounds the exact value half to even */
	if (d == 1)
		up = g->half > 0 || (g->half == 0 && (qp & 1));
	else
		up = r > d / 2 || (r == d / 2 && (!g->ex || (qp & 1)));
	qp += up;
	c = qp * d; /* the candidate on the 10^k grid */
	if (!((c > g->qlo || (c == g->qlo && g->exlo && even)) &&
	      (c < g->qhi || (c == g->qhi && (!g->exhi || even)))))
		return 0;
	if (qp * d == 1000000000) { /* 99..9 rounded up into the next decade */
		qp /= 10;
		x++;
	}
	return fmt_g(out, neg, qp, x, prec);
}

/* The text's length, or 0 when f is left to the printf path. */
static size_t fmt_f32_exact(char out[32], float f)
{
	uint32_t bits, frac, bexp, m;
	bool even, asym, neg;
	struct grid9 g;
	int e, s, x;
	uint64_t v4;
	size_t n;

	memcpy(&bits, &f, sizeof bits);
	neg = bits >> 31;
	frac = bits & 0x7FFFFF;
	bexp = (bits >> 23) & 0xFF;
	m = bexp ? frac | 0x800000 : frac;
	e = bexp ? (int)bexp - 150 : -149;
	even = (m & 1) == 0;
	asym = frac == 0 && bexp > 1; /* the float below is nearer: a narrower lower interval */
	/* |f| = v4 * 2^s; its rounding interval is [lo4, hi4] * 2^s, ends included when m is even
	 */
	v4 = (uint64_t)m << 2;
	s = e - 2;
	/* floor(log10 |f|) or one less, from floor(log2 |f|) (78913 / 2^18 ~ log10 2) */
	x = ((31 - __builtin_clz(m)) + e) * 78913;
	x = x >= 0 ? x >> 18 : -((-x + (1 << 18) - 1) >> 18);
	/* Nine digits of |f| on the grid 10^k with k = x - 8, x exactly floor(log10 |f|). */
	/* The interval ends on the same grid: lo9 = qlo (+ a fraction unless exlo), same for hi. */
	for (int tries = 0;; tries++) {
		if (tries > 2 || !grid9_at(v4, asym ? 1 : 2, x - 8, s, &g))
			return 0;
		if (g.q < 100000000)
			x--;
		else if (g.q >= 1000000000)
			x++;
		else
			break;
	}
	if ((n = try_prec(out, neg, &g, even, x, 6, 1000)) ||
	    (n = try_prec(out, neg, &g, even, x, 7, 100)) ||
	    (n = try_prec(out, neg, &g, even, x, 8, 10)))
		return n;
	return try_prec(out, neg, &g, even, x, 9, 1);
}

static size_t fmt_f32_n(char out[32], float f)
{
	size_t n;

	if (isnan(f))
		strcpy(out, signbit(f) ? "-nan" : "nan");
	else if (isinf(f))
		strcpy(out, f < 0 ? "-inf" : "inf");
	else if (f == 0)
		strcpy(out, signbit(f) ? "-0" : "0");
	/* %.9g always round-trips a float32; shorter forms are tried first so output reads well. */
	else if ((n = fmt_f32_exact(out, f)) != 0)
		return n;
	else
		fmt_f32_printf(out, f);
	return strlen(out);
}

void fmt_f32(char out[32], float f)
{
	fmt_f32_n(out, f);
}

void buf_f32txt(struct buf *b, float f)
{
	char s[32];

	buf_put(b, s, fmt_f32_n(s, f));
}

void buf_f32_fields(struct buf *b, const float *v, size_t n)
{
	char row[8 * 33];
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		if (at > sizeof row - 33) { /* a tab and fmt_f32's 32 bytes may not fit */
			buf_put(b, row, at);
			at = 0;
		}
		row[at++] = '\t';
		at += fmt_f32_n(row + at, v[i]);
	}
	buf_put(b, row, at);
}

size_t fmt_u64(char out[20], uint64_t v)
{
	char tmp[20], *d = dec_end(tmp + sizeof tmp, v);
	size_t n = (size_t)(tmp + sizeof tmp - d);

	memcpy(out, d, n);
	return n;
}

void buf_u64txt(struct buf *b, uint64_t v)
{
	char s[20];

	buf_put(b, s, fmt_u64(s, v));
}

void buf_u64_row(struct buf *b, const uint64_t *v, size_t n)
{
	char row[8 * 21];
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		if (at > sizeof row - 21) { /* more fields than one row buffer holds */
			buf_put(b, row, at);
			at = 0;
		}
		at += fmt_u64(row + at, v[i]);
		row[at++] = i + 1 < n ? '\t' : '\n';
	}
	buf_put(b, row, at);
}

void buf_tsv_name(struct buf *b, const void *raw, size_t maxlen)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = raw;

	for (size_t i = 0; i < maxlen && p[i]; i++) {
		uint8_t c = p[i];

		if (c == '\t')
			buf_puts(b, "\\t");
		else if (c == '\n')
			buf_puts(b, "\\n");
		else if (c == '\r')
			buf_puts(b, "\\r");
		else if (c == '\\')
			buf_puts(b, "\\\\");
		else if (c < 0x20 || c == 0x7f) {
			char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};

			buf_put(b, e, 4);
		} else {
			buf_putc(b, (char)c);
		}
	}
}
