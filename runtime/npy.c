/* npy.c: NumPy .npy files (format versions 1.0, 2.0, 3.0): the header
 * dict ('descr', 'fortran_order', 'shape'), every numeric dtype in either
 * byte order, bool, fixed-width byte ('S') and unicode ('U') strings, C and
 * Fortran order; object (pickled) and structured arrays are refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/rt_int.h"
#include "runtime/tensor_io.h"

#define NPY_MAX_HEADER (1u << 20)
#define NPY_MAX_FILE ((size_t)1 << 40)

struct npy_descr {
	int dtype;
	int swap;            /* big endian data */
	int str_kind;        /* 'S' or 'U' for strings, else 0 */
	size_t item;         /* bytes per element in the file */
};

/* "'<f4'" -> dtype.  Returns 0 or a negative status with a message. */
static int parse_descr(const char *s, size_t n, struct npy_descr *o,
		       struct ir_diag *d)
{
	char order, kind;
	long size;
	char *end;
	char buf[32];

	if (n < 2 || n >= sizeof(buf))
		return diag_error(d, "npy: unsupported dtype descriptor");
	memcpy(buf, s, n);
	buf[n] = 0;
	order = buf[0];
	kind = buf[1];
	if (order != '<' && order != '>' && order != '|' && order != '=')
		return diag_error(d, "npy: unsupported dtype '%s'", buf);
	if (kind == 'O')
		return diag_error(d, "npy: object arrays (pickled Python objects) are not supported");
	errno = 0;
	size = strtol(buf + 2, &end, 10);
	if (*end || size <= 0 || errno)
		return diag_error(d, "npy: unsupported dtype '%s'", buf);
	o->swap = order == '>' && size > 1 && kind != 'S';
	o->item = (size_t)size;
	o->str_kind = 0;
	o->dtype = 0;
	switch (kind) {
	case 'f':
		o->dtype = size == 2 ? IR_DTYPE_FLOAT16 : size == 4 ? IR_DTYPE_FLOAT :
			   size == 8 ? IR_DTYPE_DOUBLE : 0;
		break;
	case 'i':
		o->dtype = size == 1 ? IR_DTYPE_INT8 : size == 2 ? IR_DTYPE_INT16 :
			   size == 4 ? IR_DTYPE_INT32 : size == 8 ? IR_DTYPE_INT64 : 0;
		break;
	case 'u':
		o->dtype = size == 1 ? IR_DTYPE_UINT8 : size == 2 ? IR_DTYPE_UINT16 :
			   size == 4 ? IR_DTYPE_UINT32 : size == 8 ? IR_DTYPE_UINT64 : 0;
		break;
	case 'b':
		o->dtype = size == 1 ? IR_DTYPE_BOOL : 0;
		break;
	case 'c':
		o->dtype = size == 8 ? IR_DTYPE_COMPLEX64 :
			   size == 16 ? IR_DTYPE_COMPLEX128 : 0;
		if (o->swap)
			o->item = (size_t)size;
		break;
	case 'S':
	case 'U':
		o->dtype = IR_DTYPE_STRING;
		o->str_kind = kind;
		o->item = kind == 'U' ? (size_t)size * 4 : (size_t)size;
		o->swap = order == '>';
		break;
	default:
		break;
	}
	if (!o->dtype)
		return diag_error(d, "npy: unsupported dtype '%s'", buf);
	return 0;
}

/* Value of key in the header dict text; *vlen its length (up to the
 * next top-level ',' or '}'). */
static const char *dict_value(const char *h, const char *key, size_t *vlen)
{
	char pat[32];
	const char *p, *e;
	int depth = 0;

	snprintf(pat, sizeof(pat), "'%s'", key);
	if (!(p = strstr(h, pat)))
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p++ != ':')
		return NULL;
	while (*p == ' ')
		p++;
	for (e = p; *e; e++) {
		if (*e == '(' || *e == '[')
			depth++;
		else if (*e == ')' || *e == ']')
			depth--;
		else if ((*e == ',' || *e == '}') && depth <= 0)
			break;
	}
	*vlen = (size_t)(e - p);
	return p;
}

static int parse_shape(const char *s, size_t n, int *rank, int64_t *dims,
		       struct ir_diag *d)
{
	const char *p = s, *end = s + n;

	*rank = 0;
	if (n < 2 || *p != '(' || end[-1] != ')')
		return diag_error(d, "npy: bad 'shape' in header");
	p++;
	end--;
	while (p < end) {
		char *q;
		long long v;

		while (p < end && (*p == ' ' || *p == ','))
			p++;
		if (p >= end)
			break;
		errno = 0;
		v = strtoll(p, &q, 10);
		if (q == p || errno || v < 0)
			return diag_error(d, "npy: bad 'shape' in header");
		if (*rank >= RT_MAX_RANK)
			return diag_error(d, "npy: rank above %d", RT_MAX_RANK);
		if (*q == 'L')
			q++;
		dims[(*rank)++] = v;
		p = q;
	}
	return 0;
}

static void swap_bytes(uint8_t *p, size_t item, size_t n)
{
	for (size_t i = 0; i < n; i++, p += item)
		for (size_t a = 0, b = item - 1; a < b; a++, b--) {
			uint8_t t = p[a];

			p[a] = p[b];
			p[b] = t;
		}
}

static int strings_in(struct rt_value *v, const uint8_t *src,
		      const struct npy_descr *ds, struct ir_diag *d)
{
	size_t chars = ds->str_kind == 'U' ? ds->item / 4 : ds->item;
	char **out = v->data;

	for (int64_t i = 0; i < v->numel; i++, src += ds->item) {
		char *s = malloc(chars * 4 + 1);
		size_t o = 0;

		if (!(out[i] = s))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		for (size_t c = 0; c < chars; c++) {
			uint32_t cp;

			if (ds->str_kind == 'S') {
				cp = src[c];
				if (!cp)
					break;
				s[o++] = (char)cp;
				continue;
			}
			cp = ds->swap ? (uint32_t)src[4 * c] << 24 | (uint32_t)src[4 * c + 1] << 16 |
				(uint32_t)src[4 * c + 2] << 8 | src[4 * c + 3] :
				(uint32_t)src[4 * c + 3] << 24 | (uint32_t)src[4 * c + 2] << 16 |
				(uint32_t)src[4 * c + 1] << 8 | src[4 * c];
			if (!cp)
				break;
			if (cp < 0x80) {
				s[o++] = (char)cp;
			} else if (cp < 0x800) {
				s[o++] = (char)(0xc0 | cp >> 6);
				s[o++] = (char)(0x80 | (cp & 63));
			} else if (cp < 0x10000) {
				s[o++] = (char)(0xe0 | cp >> 12);
				s[o++] = (char)(0x80 | ((cp >> 6) & 63));
				s[o++] = (char)(0x80 | (cp & 63));
			} else {
				s[o++] = (char)(0xf0 | cp >> 18);
				s[o++] = (char)(0x80 | ((cp >> 12) & 63));
				s[o++] = (char)(0x80 | ((cp >> 6) & 63));
				s[o++] = (char)(0x80 | (cp & 63));
			}
		}
		s[o] = 0;
	}
	return 0;
}

/* Fortran order -> C order (element size es). */
static int to_c_order(struct rt_value *v, size_t es, struct ir_diag *d)
{
	uint8_t *src = v->data, *dst;
	int64_t idx[RT_MAX_RANK] = { 0 };

	if (v->rank < 2 || v->numel < 2)
		return 0;
	if (!(dst = malloc((size_t)v->numel * es)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (int64_t i = 0; i < v->numel; i++) {
		int64_t f = 0, stride = 1;

		for (int k = 0; k < v->rank; k++) {
			f += idx[k] * stride;
			stride *= v->dims[k];
		}
		memcpy(dst + i * (int64_t)es, src + f * (int64_t)es, es);
		for (int k = v->rank - 1; k >= 0; k--) {
			if (++idx[k] < v->dims[k])
				break;
			idx[k] = 0;
		}
	}
	free(v->data);
	v->data = dst;
	return 0;
}

int rt_npy_parse(struct rt_mem *mem, const uint8_t *buf, size_t len,
		 struct rt_value **out, struct ir_diag *d)
{
	size_t hlen, off, vlen, need;
	struct npy_descr ds = { 0 };
	const char *v;
	char *h = NULL;
	int64_t dims[RT_MAX_RANK];
	int rank, fortran, rc;
	struct rt_value *t = NULL;

	*out = NULL;
	if (len < 10 || memcmp(buf, "\x93NUMPY", 6))
		return diag_error(d, "not a NumPy .npy file (bad magic)");
	if (buf[6] == 1) {
		hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
		off = 10;
	} else if (buf[6] == 2 || buf[6] == 3) {
		if (len < 12)
			return diag_error(d, "npy: truncated header");
		hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 |
		       (size_t)buf[11] << 24;
		off = 12;
	} else {
		return diag_error(d, "npy: unsupported format version %d.%d", buf[6], buf[7]);
	}
	if (hlen > NPY_MAX_HEADER || off + hlen > len)
		return diag_error(d, "npy: truncated header");
	if (!(h = malloc(hlen + 1)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	memcpy(h, buf + off, hlen);
	h[hlen] = 0;
	off += hlen;
	if (!(v = dict_value(h, "descr", &vlen))) {
		rc = diag_error(d, "npy: header lacks 'descr'");
		goto cleanup;
	}
	if (*v == '[') {
		rc = diag_error(d, "npy: structured arrays are not supported");
		goto cleanup;
	}
	if (vlen < 2 || (*v != '\'' && *v != '"')) {
		rc = diag_error(d, "npy: bad 'descr' in header");
		goto cleanup;
	}
	if ((rc = parse_descr(v + 1, vlen - 2, &ds, d)) < 0)
		goto cleanup;
	if (!(v = dict_value(h, "fortran_order", &vlen))) {
		rc = diag_error(d, "npy: header lacks 'fortran_order'");
		goto cleanup;
	}
	fortran = vlen >= 4 && !strncmp(v, "True", 4);
	if (!(v = dict_value(h, "shape", &vlen))) {
		rc = diag_error(d, "npy: header lacks 'shape'");
		goto cleanup;
	}
	if ((rc = parse_shape(v, vlen, &rank, dims, d)) < 0)
		goto cleanup;
	if ((rc = rt_tensor_new(mem, ds.dtype, rank, dims, &t, d)) < 0)
		goto cleanup;
	need = (size_t)t->numel * ds.item;
	if (t->numel && need / (size_t)t->numel != ds.item) {
		rc = diag_error(d, "npy: shape too large");
		goto cleanup;
	}
	if (len - off < need) {
		rc = diag_error(d, "npy: truncated: shape needs %zu data bytes, the file has %zu",
				need, len - off);
		goto cleanup;
	}
	if (len - off > need) {
		rc = diag_error(d, "npy: %zu bytes of data for a shape needing %zu (size mismatch)",
				len - off, need);
		goto cleanup;
	}
	if (ds.dtype == IR_DTYPE_STRING) {
		if ((rc = strings_in(t, buf + off, &ds, d)) < 0)
			goto cleanup;
	} else {
		if (need)
			memcpy(t->data, buf + off, need);
		if (ds.swap)
			swap_bytes(t->data, ds.dtype == IR_DTYPE_COMPLEX64 ? 4 :
				   ds.dtype == IR_DTYPE_COMPLEX128 ? 8 : ds.item,
				   (size_t)t->numel * (ds.dtype == IR_DTYPE_COMPLEX64 ||
						       ds.dtype == IR_DTYPE_COMPLEX128 ? 2 : 1));
		if (ds.dtype == IR_DTYPE_BOOL)
			for (int64_t i = 0; i < t->numel; i++)
				((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
	}
	if (fortran && (rc = to_c_order(t, rt_dtype_size(t->dtype), d)) < 0)
		goto cleanup;
	*out = t;
	t = NULL;
	rc = 0;
cleanup:
	free(h);
	rt_value_unref(t);
	return rc;
}

int rt_npy_read(struct rt_mem *mem, const char *path, struct rt_value **out,
		struct ir_diag *d)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf = NULL;
	int rc;

	*out = NULL;
	if (!f)
		return ir_diag_error(d, IR_EINVAL, "cannot open: %s", ir_strerror(errno));
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return diag_error(d, "not a regular file");
	}
	if ((size_t)st.st_size > NPY_MAX_FILE) {
		fclose(f);
		return diag_error(d, "npy: file too large");
	}
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		fclose(f);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		rc = ir_diag_error(d, IR_EIO, "read failed: %s", ir_strerror(errno));
		goto cleanup;
	}
	rc = rt_npy_parse(mem, buf, (size_t)st.st_size, out, d);
cleanup:
	fclose(f);
	free(buf);
	return rc;
}

static const char *npy_descr_of(int dtype)
{
	switch (dtype) {
	case IR_DTYPE_FLOAT: return "<f4";
	case IR_DTYPE_DOUBLE: return "<f8";
	case IR_DTYPE_FLOAT16: return "<f2";
	case IR_DTYPE_INT8: return "|i1";
	case IR_DTYPE_INT16: return "<i2";
	case IR_DTYPE_INT32: return "<i4";
	case IR_DTYPE_INT64: return "<i8";
	case IR_DTYPE_UINT8: return "|u1";
	case IR_DTYPE_UINT16: return "<u2";
	case IR_DTYPE_UINT32: return "<u4";
	case IR_DTYPE_UINT64: return "<u8";
	case IR_DTYPE_BOOL: return "|b1";
	case IR_DTYPE_COMPLEX64: return "<c8";
	case IR_DTYPE_COMPLEX128: return "<c16";
	default: return NULL;
	}
}

/* Decode one UTF-8 sequence; returns bytes used (1 on bad input). */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	if (s[0] < 0x80) { *cp = s[0]; return 1; }
	if ((s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80) {
		*cp = (uint32_t)(s[0] & 31) << 6 | (s[1] & 63);
		return 2;
	}
	if ((s[0] & 0xf0) == 0xe0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80) {
		*cp = (uint32_t)(s[0] & 15) << 12 | (uint32_t)(s[1] & 63) << 6 | (s[2] & 63);
		return 3;
	}
	if ((s[0] & 0xf8) == 0xf0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 &&
	    (s[3] & 0xc0) == 0x80) {
		*cp = (uint32_t)(s[0] & 7) << 18 | (uint32_t)(s[1] & 63) << 12 |
		      (uint32_t)(s[2] & 63) << 6 | (s[3] & 63);
		return 4;
	}
	*cp = s[0];
	return 1;
}

int rt_npy_write(const struct rt_value *v, const char *path, struct ir_diag *d)
{
	char descr[32], shape[RT_MAX_RANK * 24 + 8], head[512];
	const char *ds = npy_descr_of(v->dtype);
	size_t maxc = 1, item, hl, total, o;
	uint8_t *buf;
	int rc;

	if (v->kind != RT_TENSOR)
		return diag_error(d, "only tensors can be written as .npy");
	if (v->dtype == IR_DTYPE_STRING) {
		for (int64_t i = 0; i < v->numel; i++) {
			const unsigned char *s = (const unsigned char *)((char *const *)v->data)[i];
			size_t c = 0;
			uint32_t cp;

			while (s && *s) {
				s += utf8_next(s, &cp);
				c++;
			}
			if (c > maxc)
				maxc = c;
		}
		snprintf(descr, sizeof(descr), "<U%zu", maxc);
		item = 4 * maxc;
	} else if (ds) {
		snprintf(descr, sizeof(descr), "%s", ds);
		item = rt_dtype_size(v->dtype);
	} else {
		return diag_error(d, "%s tensors cannot be written as .npy (numpy has no such dtype); use .pb",
				  ir_dtype_name(v->dtype));
	}
	o = (size_t)snprintf(shape, sizeof(shape), "(");
	for (int i = 0; i < v->rank; i++)
		o += (size_t)snprintf(shape + o, sizeof(shape) - o, "%lld,%s",
				      (long long)v->dims[i], i + 1 < v->rank ? " " : "");
	snprintf(shape + o, sizeof(shape) - o, ")");
	hl = (size_t)snprintf(head, sizeof(head),
			      "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
			      descr, shape);
	while ((10 + hl + 1) % 64)
		head[hl++] = ' ';
	head[hl++] = '\n';
	total = 10 + hl + (size_t)v->numel * item;
	if (!(buf = calloc(1, total)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (uint8_t)(hl & 255);
	buf[9] = (uint8_t)(hl >> 8);
	memcpy(buf + 10, head, hl);
	if (v->dtype == IR_DTYPE_STRING) {
		for (int64_t i = 0; i < v->numel; i++) {
			const unsigned char *s = (const unsigned char *)((char *const *)v->data)[i];
			uint8_t *p = buf + 10 + hl + (size_t)i * item;
			uint32_t cp;

			for (size_t c = 0; s && *s && c < maxc; c++) {
				s += utf8_next(s, &cp);
				p[4 * c] = (uint8_t)cp;
				p[4 * c + 1] = (uint8_t)(cp >> 8);
				p[4 * c + 2] = (uint8_t)(cp >> 16);
				p[4 * c + 3] = (uint8_t)(cp >> 24);
			}
		}
	} else if (v->numel) {
		memcpy(buf + 10 + hl, v->data, (size_t)v->numel * item);
	}
	rc = ir_file_write_atomic(path, buf, total, d);
	free(buf);
	return rc;
}
