/* k_misc.c: kernels of the misc family: ImageDecoder for the lossless
 * formats we can decode without an image library: binary PNM (P5/P6,
 * maxval 255), uncompressed 24/32-bit BMP, PNG and uncompressed TIFF
 * (k_misc_img.c); JPEG, WebP and JPEG 2000 (lossy: exact pixels need the
 * reference's own decoder) are refused with an error naming the format.
 * Grayscale output from colour uses Pillow's luma (the ONNX reference
 * decodes with Pillow). */
#include <string.h>

#include <stdlib.h>

#include "runtime/kernels/k_misc_int.h"
#include "runtime/rt_int.h"

struct img {
	int64_t h, w;
	int ch;                 /* 1 (gray) or 3 (RGB) */
	const uint8_t *px;      /* PNM: rows top-down */
	int64_t stride;
	int bmp_bpp;            /* BMP: 24 or 32, rows bottom-up when > 0 */
	int bottom_up;
};

static const char *sniff(const uint8_t *p, int64_t n)
{
	if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
		return "JPEG";
	if (n >= 12 && !memcmp(p, "RIFF", 4) && !memcmp(p + 8, "WEBP", 4))
		return "WebP";
	if (n >= 12 && !memcmp(p, "\0\0\0\x0cjP  ", 8))
		return "JPEG 2000";
	if (n >= 4 && !memcmp(p, "\xff\x4f\xff\x51", 4))
		return "JPEG 2000";
	return NULL;
}

/* A decimal number after whitespace and # comments. */
static int pnm_num(const uint8_t *p, int64_t n, int64_t *pos, int64_t *v)
{
	*v = 0;
	for (;;) {
		while (*pos < n && (p[*pos] == ' ' || p[*pos] == '\t' || p[*pos] == '\n' ||
				    p[*pos] == '\r'))
			(*pos)++;
		if (*pos < n && p[*pos] == '#') {
			while (*pos < n && p[*pos] != '\n')
				(*pos)++;
			continue;
		}
		break;
	}
	if (*pos >= n || p[*pos] < '0' || p[*pos] > '9')
		return -1;
	while (*pos < n && p[*pos] >= '0' && p[*pos] <= '9' && *v < 1000000)
		*v = *v * 10 + (p[(*pos)++] - '0');
	return 0;
}

static int parse_pnm(struct rt_kctx *k, const uint8_t *p, int64_t n, struct img *im)
{
	int64_t pos = 2, maxv;

	im->ch = p[1] == '5' ? 1 : 3;
	if (pnm_num(p, n, &pos, &im->w) < 0 || pnm_num(p, n, &pos, &im->h) < 0 ||
	    pnm_num(p, n, &pos, &maxv) < 0 || pos >= n)
		return rt_err(k, "malformed PNM header");
	pos++;          /* the single whitespace byte before the raster */
	if (maxv != 255)
		return rt_err(k, "PNM maxval %lld not supported (only 255)", (long long)maxv);
	im->stride = im->w * im->ch;
	if (im->w < 1 || im->h < 1 || n - pos < im->stride * im->h)
		return rt_err(k, "PNM raster truncated or empty");
	im->px = p + pos;
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int parse_bmp(struct rt_kctx *k, const uint8_t *p, int64_t n, struct img *im)
{
	uint32_t off, hsz, comp;
	int32_t w, h;
	int bpp;

	if (n < 54)
		return rt_err(k, "BMP stream truncated");
	off = le32(p + 10);
	hsz = le32(p + 14);
	if (hsz < 40)
		return rt_err(k, "BMP core headers (OS/2) not supported");
	w = (int32_t)le32(p + 18);
	h = (int32_t)le32(p + 22);
	bpp = p[28] | p[29] << 8;
	comp = le32(p + 30);
	if ((bpp != 24 && bpp != 32) || (comp != 0 && !(comp == 3 && bpp == 32)))
		return rt_err(k, "BMP of %d bits per pixel, compression %u not supported (only uncompressed 24/32-bit)",
			      bpp, comp);
	if (w < 1 || h == 0 || h == INT32_MIN)
		return rt_err(k, "BMP of invalid size %dx%d", w, h);
	im->w = w;
	im->bottom_up = h > 0;
	im->h = h > 0 ? h : -(int64_t)h;
	im->ch = 3;
	im->bmp_bpp = bpp;
	im->stride = ((int64_t)w * bpp / 8 + 3) / 4 * 4;
	if (off > (uint64_t)n || (int64_t)(n - off) < im->stride * im->h)
		return rt_err(k, "BMP raster truncated");
	im->px = p + off;
	return 0;
}

static int k_image_decoder(struct rt_kctx *k)
{
	const char *fmt = rt_attr_str(k, "pixel_format", "RGB");
	struct rt_value *x, *y;
	struct img im = { 0 };
	struct img_raster ras = { 0 };
	const uint8_t *p;
	const char *other;
	int64_t dims[3];
	int out_ch, bgr, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->dtype != IR_DTYPE_UINT8 || x->rank != 1)
		return rt_err(k, "encoded_stream must be a 1-D uint8 tensor");
	if (!strcmp(fmt, "RGB") || !strcmp(fmt, "BGR"))
		out_ch = 3;
	else if (!strcmp(fmt, "Grayscale"))
		out_ch = 1;
	else
		return rt_err(k, "unknown pixel_format '%s'", fmt);
	bgr = !strcmp(fmt, "BGR");
	p = x->data;
	if ((other = sniff(p, x->numel)))
		return rt_err(k, "%s images cannot be decoded: no image library (only binary PNM and uncompressed BMP are supported)",
			      other);
	if (x->numel >= 2 && p[0] == 'P' && (p[1] == '5' || p[1] == '6')) {
		rc = parse_pnm(k, p, x->numel, &im);
	} else if (x->numel >= 2 && p[0] == 'B' && p[1] == 'M') {
		rc = parse_bmp(k, p, x->numel, &im);
	} else if ((x->numel >= 8 && !memcmp(p, "\x89PNG\r\n\x1a\n", 8)) ||
		   (x->numel >= 8 && (!memcmp(p, "II*\0", 4) || !memcmp(p, "MM\0*", 4)))) {
		char err[160];
		int png = p[0] == 0x89;

		if ((png ? img_png_decode(p, (size_t)x->numel, &ras, err, sizeof(err)) :
		     img_tiff_decode(p, (size_t)x->numel, &ras, err, sizeof(err))) < 0)
			return rt_err(k, "%s", err);
		im.w = ras.w;
		im.h = ras.h;
		im.ch = ras.ch;
		im.px = ras.px;
		im.stride = ras.w * ras.ch;
		rc = 0;
	} else {
		return rt_err(k, "unrecognised image format (binary PNM, BMP, PNG and TIFF are supported)");
	}
	if (rc < 0)
		return rc;
	dims[0] = im.h;
	dims[1] = im.w;
	dims[2] = out_ch;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_UINT8, 3, dims))) {
		free(ras.px);
		return IR_ENOMEM;
	}
	for (int64_t r = 0; r < im.h; r++) {
		const uint8_t *row = im.px + (im.bottom_up ? im.h - 1 - r : r) * im.stride;

		for (int64_t c = 0; c < im.w; c++) {
			uint8_t rgb[3], *o = (uint8_t *)y->data + (r * im.w + c) * out_ch;

			if (im.bmp_bpp) {
				const uint8_t *q = row + c * (im.bmp_bpp / 8);

				rgb[0] = q[2];
				rgb[1] = q[1];
				rgb[2] = q[0];
			} else if (im.ch == 1) {
				rgb[0] = rgb[1] = rgb[2] = row[c];
			} else {
				memcpy(rgb, row + c * 3, 3);
			}
			if (out_ch == 1) {
				/* ITU-R BT.601 luma .299 R + .587 G + .114 B in
				 * Pillow's 16-bit fixed point, rounded */
				o[0] = im.ch == 1 ? rgb[0] :
				       (uint8_t)((rgb[0] * 19595u + rgb[1] * 38470u + rgb[2] * 7471u +
						  0x8000u) >> 16);
			} else {
				o[0] = rgb[bgr ? 2 : 0];
				o[1] = rgb[1];
				o[2] = rgb[bgr ? 0 : 2];
			}
		}
	}
	free(ras.px);
	return 0;
}

const struct rt_kernel rt_kernels_misc[] = {
	{ "ai.onnx", "ImageDecoder", 20, RT_OPEN, k_image_decoder },
};
const size_t rt_n_kernels_misc = sizeof(rt_kernels_misc) / sizeof(rt_kernels_misc[0]);
