/* k_misc_img.c: the lossless image formats ImageDecoder reads without an
 * image library: PNG (our own inflate: stored, fixed and dynamic Huffman
 * blocks; 8-bit gray, gray+alpha, RGB, RGBA and 1/2/4/8-bit palette;
 * not interlaced) and baseline uncompressed TIFF (8-bit gray or RGB,
 * contiguous samples, strips).  Both give rows top-down, 1 or 3 bytes a
 * pixel (alpha dropped). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_misc_int.h"

#define FAIL(...) (snprintf(err, errsz, __VA_ARGS__), -1)

/* ---- inflate (RFC 1951) ------------------------------------------------ */

struct bitin {
	const uint8_t *p;
	size_t n, pos;          /* next byte */
	uint32_t buf;
	int cnt;
};

static int bits(struct bitin *b, int need, uint32_t *v)
{
	while (b->cnt < need) {
		if (b->pos >= b->n)
			return -1;
		b->buf |= (uint32_t)b->p[b->pos++] << b->cnt;
		b->cnt += 8;
	}
	*v = b->buf & ((1u << need) - 1);
	b->buf >>= need;
	b->cnt -= need;
	return 0;
}

/* Canonical Huffman code: count[len] codes of each length, symbols in
 * code order. */
struct huff {
	uint16_t count[16];
	uint16_t sym[288];
};

static int huff_build(struct huff *h, const uint8_t *len, int n)
{
	uint16_t off[16];
	int left = 1;

	memset(h->count, 0, sizeof(h->count));
	for (int i = 0; i < n; i++)
		h->count[len[i]]++;
	if (h->count[0] == n)
		return 0;                 /* no codes: only an error if used */
	for (int l = 1; l < 16; l++) {
		left = left * 2 - h->count[l];
		if (left < 0)
			return -1;        /* over-subscribed */
	}
	off[1] = 0;
	for (int l = 1; l < 15; l++)
		off[l + 1] = (uint16_t)(off[l] + h->count[l]);
	for (int i = 0; i < n; i++)
		if (len[i])
			h->sym[off[len[i]]++] = (uint16_t)i;
	return 0;
}

static int huff_decode(struct bitin *b, const struct huff *h)
{
	int code = 0, first = 0, index = 0;

	for (int l = 1; l < 16; l++) {
		uint32_t bit;
		int count = h->count[l];

		if (bits(b, 1, &bit) < 0)
			return -1;
		code |= (int)bit;
		if (code - first < count)
			return h->sym[index + code - first];
		index += count;
		first = (first + count) << 1;
		code <<= 1;
	}
	return -1;
}

static const uint16_t len_base[29] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
	67, 83, 99, 115, 131, 163, 195, 227, 258
};
static const uint8_t len_extra[29] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
	5, 5, 5, 5, 0
};
static const uint16_t dist_base[30] = {
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513,
	769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577
};
static const uint8_t dist_extra[30] = {
	0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10,
	11, 11, 12, 12, 13, 13
};

struct outbuf {
	uint8_t *p;
	size_t n, cap;          /* cap: the exact size expected */
};

static int inflate_codes(struct bitin *b, struct outbuf *o, const struct huff *lit,
			 const struct huff *dist)
{
	for (;;) {
		int s = huff_decode(b, lit);
		uint32_t e;

		if (s < 0)
			return -1;
		if (s < 256) {
			if (o->n >= o->cap)
				return -1;
			o->p[o->n++] = (uint8_t)s;
		} else if (s == 256) {
			return 0;
		} else {
			size_t l, d;
			int ds;

			s -= 257;
			if (s >= 29 || bits(b, len_extra[s], &e) < 0)
				return -1;
			l = len_base[s] + e;
			if ((ds = huff_decode(b, dist)) < 0 || ds >= 30 ||
			    bits(b, dist_extra[ds], &e) < 0)
				return -1;
			d = dist_base[ds] + e;
			if (d > o->n || l > o->cap - o->n)
				return -1;
			for (size_t i = 0; i < l; i++, o->n++)
				o->p[o->n] = o->p[o->n - d];
		}
	}
}

static int inflate_raw(const uint8_t *p, size_t n, struct outbuf *o)
{
	static const uint8_t order[19] = {
		16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15
	};
	struct bitin b = { p, n, 0, 0, 0 };
	struct huff lit, dist;
	uint32_t last, type;

	do {
		if (bits(&b, 1, &last) < 0 || bits(&b, 2, &type) < 0)
			return -1;
		if (type == 0) {          /* stored */
			size_t len;

			b.buf = 0;
			b.cnt = 0;
			if (b.pos + 4 > b.n)
				return -1;
			len = b.p[b.pos] | (size_t)b.p[b.pos + 1] << 8;
			if ((len ^ 0xffff) != (b.p[b.pos + 2] | (size_t)b.p[b.pos + 3] << 8))
				return -1;
			b.pos += 4;
			if (len > b.n - b.pos || len > o->cap - o->n)
				return -1;
			memcpy(o->p + o->n, b.p + b.pos, len);
			o->n += len;
			b.pos += len;
		} else if (type == 1) {   /* fixed codes */
			uint8_t l[320];
			int i;

			for (i = 0; i < 144; i++)
				l[i] = 8;
			for (; i < 256; i++)
				l[i] = 9;
			for (; i < 280; i++)
				l[i] = 7;
			for (; i < 288; i++)
				l[i] = 8;
			if (huff_build(&lit, l, 288) < 0)
				return -1;
			for (i = 0; i < 30; i++)
				l[i] = 5;
			if (huff_build(&dist, l, 30) < 0 || inflate_codes(&b, o, &lit, &dist) < 0)
				return -1;
		} else if (type == 2) {   /* dynamic codes */
			uint8_t l[320] = { 0 };
			uint32_t hlit, hdist, hclen, v;
			struct huff lens;
			int i = 0;

			if (bits(&b, 5, &hlit) < 0 || bits(&b, 5, &hdist) < 0 ||
			    bits(&b, 4, &hclen) < 0)
				return -1;
			hlit += 257;
			hdist += 1;
			hclen += 4;
			if (hlit > 286 || hdist > 30)
				return -1;
			for (uint32_t j = 0; j < hclen; j++) {
				if (bits(&b, 3, &v) < 0)
					return -1;
				l[order[j]] = (uint8_t)v;
			}
			if (huff_build(&lens, l, 19) < 0)
				return -1;
			memset(l, 0, sizeof(l));
			while (i < (int)(hlit + hdist)) {
				int s = huff_decode(&b, &lens), rep;
				uint8_t val = 0;

				if (s < 0)
					return -1;
				if (s < 16) {
					l[i++] = (uint8_t)s;
					continue;
				}
				if (s == 16) {
					if (!i || bits(&b, 2, &v) < 0)
						return -1;
					val = l[i - 1];
					rep = 3 + (int)v;
				} else if (s == 17) {
					if (bits(&b, 3, &v) < 0)
						return -1;
					rep = 3 + (int)v;
				} else {
					if (bits(&b, 7, &v) < 0)
						return -1;
					rep = 11 + (int)v;
				}
				if (i + rep > (int)(hlit + hdist))
					return -1;
				while (rep--)
					l[i++] = val;
			}
			if (!l[256] || huff_build(&lit, l, (int)hlit) < 0 ||
			    huff_build(&dist, l + hlit, (int)hdist) < 0 ||
			    inflate_codes(&b, o, &lit, &dist) < 0)
				return -1;
		} else {
			return -1;
		}
	} while (!last);
	return 0;
}

/* ---- PNG ------------------------------------------------------------------ */

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

int img_png_decode(const uint8_t *p, size_t n, struct img_raster *out, char *err,
		   size_t errsz)
{
	uint32_t w = 0, h = 0;
	int depth = 0, ct = -1, ilace = 0, chans, rc = -1;
	uint8_t pal[768];
	size_t npal = 0, pos = 8, zn = 0, rowb, bpp;
	uint8_t *z = NULL;
	struct outbuf o = { NULL, 0, 0 };

	memset(out, 0, sizeof(*out));
	while (pos + 12 <= n) {
		uint32_t len = be32(p + pos);
		const uint8_t *t = p + pos + 4, *d = p + pos + 8;

		if (len > n - pos - 12) {
			rc = FAIL("PNG chunk runs past the end of the stream");
			goto cleanup;
		}
		if (!memcmp(t, "IHDR", 4) && len >= 13) {
			w = be32(d);
			h = be32(d + 4);
			depth = d[8];
			ct = d[9];
			ilace = d[12];
			if (d[10] || d[11]) {
				rc = FAIL("PNG with unknown compression or filter method");
				goto cleanup;
			}
		} else if (!memcmp(t, "PLTE", 4)) {
			npal = len / 3 > 256 ? 256 : len / 3;
			memcpy(pal, d, npal * 3);
		} else if (!memcmp(t, "IDAT", 4)) {
			uint8_t *q = realloc(z, zn + len + 1);

			if (!q) {
				rc = FAIL("out of memory");
				goto cleanup;
			}
			z = q;
			memcpy(z + zn, d, len);
			zn += len;
		} else if (!memcmp(t, "IEND", 4)) {
			break;
		}
		pos += 12 + (size_t)len;
	}
	if (!w || !h || w > 1u << 24 || h > 1u << 24) {
		rc = FAIL("PNG without a valid IHDR");
		goto cleanup;
	}
	if (ilace) {
		rc = FAIL("interlaced PNG not supported");
		goto cleanup;
	}
	chans = ct == 0 ? 1 : ct == 2 ? 3 : ct == 3 ? 1 : ct == 4 ? 2 : ct == 6 ? 4 : 0;
	if (!chans || (ct == 3 ? depth != 1 && depth != 2 && depth != 4 && depth != 8 : depth != 8)) {
		rc = FAIL("PNG of colour type %d, bit depth %d not supported (8-bit, or palette)",
			  ct, depth);
		goto cleanup;
	}
	if (ct == 3 && !npal) {
		rc = FAIL("palette PNG without PLTE");
		goto cleanup;
	}
	rowb = ((size_t)w * (size_t)chans * (size_t)depth + 7) / 8;
	bpp = (size_t)chans * (size_t)depth / 8;
	if (!bpp)
		bpp = 1;
	o.cap = (rowb + 1) * h;
	if (zn < 2 || (z[0] & 15) != 8 || ((z[0] << 8) | z[1]) % 31 || (z[1] & 32)) {
		rc = FAIL("PNG image data is not a zlib stream");
		goto cleanup;
	}
	if (!(o.p = malloc(o.cap))) {
		rc = FAIL("out of memory");
		goto cleanup;
	}
	if (inflate_raw(z + 2, zn - 2, &o) < 0 || o.n != o.cap) {
		rc = FAIL("corrupt or truncated PNG image data");
		goto cleanup;
	}
	for (uint32_t r = 0; r < h; r++) {
		uint8_t *row = o.p + r * (rowb + 1), f = row[0], *x = row + 1;
		const uint8_t *up = r ? o.p + (r - 1) * (rowb + 1) + 1 : NULL;

		if (f > 4) {
			rc = FAIL("PNG row filter %d unknown", f);
			goto cleanup;
		}
		for (size_t i = 0; i < rowb; i++) {
			int a = i >= bpp ? x[i - bpp] : 0, b = up ? up[i] : 0;
			int c = up && i >= bpp ? up[i - bpp] : 0;

			switch (f) {
			case 1: x[i] = (uint8_t)(x[i] + a); break;
			case 2: x[i] = (uint8_t)(x[i] + b); break;
			case 3: x[i] = (uint8_t)(x[i] + (a + b) / 2); break;
			case 4: x[i] = (uint8_t)(x[i] + paeth(a, b, c)); break;
			default: break;
			}
		}
	}
	out->w = w;
	out->h = h;
	out->ch = ct == 0 || ct == 4 ? 1 : 3;
	if (!(out->px = malloc((size_t)w * h * (size_t)out->ch))) {
		rc = FAIL("out of memory");
		goto cleanup;
	}
	for (uint32_t r = 0; r < h; r++) {
		const uint8_t *x = o.p + r * (rowb + 1) + 1;
		uint8_t *d = out->px + (size_t)r * w * (size_t)out->ch;

		for (uint32_t c = 0; c < w; c++) {
			if (ct == 3) {
				size_t bit = (size_t)c * (size_t)depth;
				unsigned idx = (x[bit / 8] >> (8 - depth - bit % 8)) & ((1u << depth) - 1);

				if (idx >= npal) {
					rc = FAIL("PNG palette index %u beyond %zu entries", idx, npal);
					goto cleanup;
				}
				memcpy(d + c * 3, pal + idx * 3, 3);
			} else if (out->ch == 1) {
				d[c] = x[(size_t)c * (size_t)chans];
			} else {
				memcpy(d + (size_t)c * 3, x + (size_t)c * (size_t)chans, 3);
			}
		}
	}
	rc = 0;
cleanup:
	free(z);
	free(o.p);
	if (rc < 0) {
		free(out->px);
		out->px = NULL;
	}
	return rc;
}

/* ---- TIFF ------------------------------------------------------------------ */

struct tiff {
	const uint8_t *p;
	size_t n;
	int be;
};

static uint32_t t_u16(const struct tiff *t, size_t o)
{
	return t->be ? (uint32_t)t->p[o] << 8 | t->p[o + 1] : t->p[o] | (uint32_t)t->p[o + 1] << 8;
}

static uint32_t t_u32(const struct tiff *t, size_t o)
{
	return t->be ? be32(t->p + o) :
	       t->p[o] | (uint32_t)t->p[o + 1] << 8 | (uint32_t)t->p[o + 2] << 16 |
	       (uint32_t)t->p[o + 3] << 24;
}

/* Value i of an IFD entry at e (SHORT or LONG), 0 on a bad reference. */
static int t_value(const struct tiff *t, size_t e, uint32_t i, uint32_t *v)
{
	uint32_t type = t_u16(t, e + 2), count = t_u32(t, e + 4);
	size_t sz = type == 3 ? 2 : type == 4 ? 4 : 0, at;

	if (!sz || i >= count)
		return -1;
	at = (size_t)count * sz <= 4 ? e + 8 : t_u32(t, e + 8);
	at += (size_t)i * sz;
	if (at + sz > t->n)
		return -1;
	*v = sz == 2 ? t_u16(t, at) : t_u32(t, at);
	return 0;
}

int img_tiff_decode(const uint8_t *p, size_t n, struct img_raster *out, char *err,
		    size_t errsz)
{
	struct tiff t = { p, n, p[0] == 'M' };
	uint32_t w = 0, h = 0, comp = 1, photo = 2, spp = 1, rps = 0xffffffffu, planar = 1;
	size_t ifd, e_bits = 0, e_off = 0, e_cnt = 0, ne, row;
	uint32_t nstrips = 0;

	memset(out, 0, sizeof(*out));
	if (n < 8 || (ifd = t_u32(&t, 4)) + 2 > n)
		return FAIL("TIFF header truncated");
	ne = t_u16(&t, ifd);
	if (ifd + 2 + ne * 12 > n)
		return FAIL("TIFF directory truncated");
	for (size_t i = 0; i < ne; i++) {
		size_t e = ifd + 2 + i * 12;
		uint32_t tag = t_u16(&t, e);

		switch (tag) {
		case 256: t_value(&t, e, 0, &w); break;
		case 257: t_value(&t, e, 0, &h); break;
		case 258: e_bits = e; break;
		case 259: t_value(&t, e, 0, &comp); break;
		case 262: t_value(&t, e, 0, &photo); break;
		case 273: e_off = e; nstrips = t_u32(&t, e + 4); break;
		case 277: t_value(&t, e, 0, &spp); break;
		case 278: t_value(&t, e, 0, &rps); break;
		case 279: e_cnt = e; break;
		case 284: t_value(&t, e, 0, &planar); break;
		default: break;
		}
	}
	if (!w || !h || w > 1u << 24 || h > 1u << 24 || !e_off || !nstrips)
		return FAIL("TIFF without size or strips");
	if (comp != 1)
		return FAIL("compressed TIFF (compression %u) not supported, only uncompressed", comp);
	if ((photo != 1 && photo != 2) || (photo == 1 && spp < 1) || (photo == 2 && spp < 3) ||
	    spp > 4 || (planar != 1 && spp > 1))
		return FAIL("TIFF of photometric %u, %u samples, planar %u not supported",
			    photo, spp, planar);
	for (uint32_t s = 0; s < spp; s++) {
		uint32_t b = 1;

		if (e_bits && t_value(&t, e_bits, s, &b) < 0)
			b = 1;
		if (b != 8)
			return FAIL("TIFF of %u bits per sample not supported (8 only)", b);
	}
	if (rps == 0)
		rps = h;
	row = (size_t)w * spp;
	out->w = w;
	out->h = h;
	out->ch = photo == 1 ? 1 : 3;
	if (!(out->px = malloc((size_t)w * h * (size_t)out->ch)))
		return FAIL("out of memory");
	for (uint32_t r = 0; r < h; r++) {
		uint32_t s = r / (rps ? rps : 1), off, cnt = 0;
		size_t at;

		if (s >= nstrips || t_value(&t, e_off, s, &off) < 0 ||
		    (e_cnt && t_value(&t, e_cnt, s, &cnt) < 0))
			goto bad;
		at = off + (size_t)(r - s * rps) * row;
		if (at + row > n || (e_cnt && (size_t)(r - s * rps + 1) * row > cnt))
			goto bad;
		for (uint32_t c = 0; c < w; c++) {
			const uint8_t *q = p + at + (size_t)c * spp;
			uint8_t *d = out->px + ((size_t)r * w + c) * (size_t)out->ch;

			if (out->ch == 1)
				d[0] = q[0];
			else
				memcpy(d, q, 3);
		}
	}
	return 0;
bad:
	free(out->px);
	out->px = NULL;
	return FAIL("TIFF strip truncated or missing");
}
