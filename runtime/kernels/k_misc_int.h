/* k_misc_int.h: the image decoders of k_misc_img.c, for ImageDecoder in
 * k_misc.c.  A raster's px is malloc'd (the caller frees it): h rows
 * top-down of w pixels of ch bytes (1 gray, 3 RGB). */
#ifndef OPMIG_K_MISC_INT_H
#define OPMIG_K_MISC_INT_H

#include <stddef.h>
#include <stdint.h>

struct img_raster {
	int64_t w, h;
	int ch;
	uint8_t *px;
};

/* 0, or -1 with a message in err (px NULL). */
int img_png_decode(const uint8_t *p, size_t n, struct img_raster *out, char *err,
		   size_t errsz);
int img_tiff_decode(const uint8_t *p, size_t n, struct img_raster *out, char *err,
		    size_t errsz);

#endif
