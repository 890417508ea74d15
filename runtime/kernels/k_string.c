/* k_string.c: kernels of the string family: StringNormalizer, StringConcat,
 * StringSplit, RegexFullMatch (POSIX extended regex, see below) and
 * TfIdfVectorizer (n-gram counting over int or string tokens).
 * Case mapping is ASCII only: bytes of multi-byte UTF-8 characters pass
 * through unchanged. */
#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"

static char *dup_n(const char *s, size_t n)
{
	char *c = malloc(n + 1);

	if (c) {
		memcpy(c, s, n);
		c[n] = 0;
	}
	return c;
}

static int in_strings(struct rt_kctx *k, size_t i, struct rt_value **t)
{
	int rc = rt_in_tensor(k, i, t);

	if (rc < 0)
		return rc;
	if ((*t)->dtype != IR_DTYPE_STRING)
		return rt_err(k, "input %zu must be a string tensor, is %s", i,
			      ir_dtype_name((*t)->dtype));
	return 0;
}

static const char *str_at(const struct rt_value *t, int64_t i)
{
	const char *s = ((char *const *)t->data)[i];

	return s ? s : "";
}

/* ---- StringNormalizer ------------------------------------------------ */

static int ascii_casecmp(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 1;
	return *a != *b;
}

static int k_string_normalizer(struct rt_kctx *k)
{
	const char *action = rt_attr_str(k, "case_change_action", "NONE");
	int sensitive = (int)rt_attr_int(k, "is_case_sensitive", 0);
	const struct ir_attr *sw = rt_attr(k, "stopwords");
	size_t n_sw = sw && sw->type == IR_ATTR_STRINGS ? sw->n_strings : 0;
	int change = 0;
	struct rt_value *x, *y;
	int64_t c, kept = 0, dims[2];
	int rank, rc;
	char *keep = NULL;

	if ((rc = in_strings(k, 0, &x)) < 0)
		return rc;
	if (!strcmp(action, "LOWER"))
		change = -1;
	else if (!strcmp(action, "UPPER"))
		change = 1;
	else if (strcmp(action, "NONE"))
		return rt_err(k, "unknown case_change_action '%s'", action);
	if (x->rank == 1) {
		c = x->dims[0];
	} else if (x->rank == 2 && x->dims[0] == 1) {
		c = x->dims[1];
	} else {
		char b[64];

		rt_dims_text(x->rank, x->dims, b, sizeof(b));
		return rt_err(k, "input must be [C] or [1, C], is %s", b);
	}
	if (!(keep = calloc((size_t)c + 1, 1)))
		return rt_oom(k);
	for (int64_t i = 0; i < c; i++) {
		const char *s = str_at(x, i);

		keep[i] = 1;
		for (size_t j = 0; j < n_sw && keep[i]; j++) {
			const char *w = (const char *)sw->strings[j];

			if (sensitive ? !strcmp(s, w) : !ascii_casecmp(s, w))
				keep[i] = 0;
		}
		kept += keep[i];
	}
	rank = x->rank;
	dims[0] = 1;
	dims[rank - 1] = kept ? kept : 1;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_STRING, rank, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if (!kept && !(((char **)y->data)[0] = dup_n("", 0))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t i = 0, o = 0; i < c; i++) {
		const char *s = str_at(x, i);
		char *t;

		if (!keep[i])
			continue;
		if (!(t = dup_n(s, strlen(s)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (char *p = t; *p; p++)
			if (change)
				*p = (char)(change > 0 ? toupper((unsigned char)*p) :
					    tolower((unsigned char)*p));
		((char **)y->data)[o++] = t;
	}
	rc = 0;
cleanup:
	free(keep);
	return rc;
}

/* ---- StringConcat ----------------------------------------------------- */

struct concat_ctx {
	struct rt_value *a, *b, *y;
};

static void concat_run(void *p, const int64_t *off, const int64_t *step, int64_t len)
{
	struct concat_ctx *c = p;

	for (int64_t i = 0; i < len; i++) {
		const char *x = str_at(c->a, off[0] + i * step[0]);
		const char *z = str_at(c->b, off[1] + i * step[1]);
		size_t lx = strlen(x), lz = strlen(z);
		char *s = malloc(lx + lz + 1);

		if (!s)
			continue;      /* left NULL: reported after the loop */
		memcpy(s, x, lx);
		memcpy(s + lx, z, lz + 1);
		((char **)c->y->data)[off[2] + i] = s;
	}
}

static int k_string_concat(struct rt_kctx *k)
{
	struct concat_ctx c = { 0 };
	struct rt_value *ts[2];
	int64_t dims[RT_MAX_RANK];
	int rank, rc;

	if ((rc = in_strings(k, 0, &c.a)) < 0 || (rc = in_strings(k, 1, &c.b)) < 0)
		return rc;
	ts[0] = c.a;
	ts[1] = c.b;
	if ((rc = rt_broadcast_shape(k, ts, 2, &rank, dims)) < 0)
		return rc;
	if (!(c.y = rt_out_tensor(k, 0, IR_DTYPE_STRING, rank, dims)))
		return IR_ENOMEM;
	if (c.y->numel)
		rt_bcast_run(k, ts, 2, rank, dims, concat_run, &c);
	for (int64_t i = 0; i < c.y->numel; i++)
		if (!((char **)c.y->data)[i])
			return rt_oom(k);
	return 0;
}

/* ---- StringSplit ------------------------------------------------------ */

/* Python's str.split: with a delimiter, every occurrence splits (empty
 * pieces kept); without, runs of whitespace split and leading/trailing
 * whitespace is dropped.  At most maxsplit splits (< 0: unlimited).
 * Pieces are reported as (start, length) pairs into ps (NULL: count). */
static int64_t split_one(const char *s, const char *delim, int64_t maxsplit,
			 int64_t *ps)
{
	size_t dl = strlen(delim);
	int64_t n = 0;

	if (dl) {
		const char *p = s, *q;

		while ((maxsplit < 0 || n < maxsplit) && (q = strstr(p, delim))) {
			if (ps) {
				ps[2 * n] = p - s;
				ps[2 * n + 1] = q - p;
			}
			n++;
			p = q + dl;
		}
		if (ps) {
			ps[2 * n] = p - s;
			ps[2 * n + 1] = (int64_t)strlen(p);
		}
		return n + 1;
	}
	for (const char *p = s;;) {
		const char *q;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (maxsplit >= 0 && n == maxsplit) {
			if (ps) {
				ps[2 * n] = p - s;
				ps[2 * n + 1] = (int64_t)strlen(p);
			}
			n++;
			break;
		}
		for (q = p; *q && !isspace((unsigned char)*q); q++)
			;
		if (ps) {
			ps[2 * n] = p - s;
			ps[2 * n + 1] = q - p;
		}
		n++;
		p = q;
	}
	return n;
}

static int k_string_split(struct rt_kctx *k)
{
	const char *delim = rt_attr_str(k, "delimiter", "");
	const struct ir_attr *ma = rt_attr(k, "maxsplit");
	int64_t maxsplit = ma && ma->type == IR_ATTR_INT ? ma->i : -1;
	struct rt_value *x, *y, *z;
	int64_t most = 0, dims[RT_MAX_RANK], *ps = NULL;
	int rc;

	if ((rc = in_strings(k, 0, &x)) < 0)
		return rc;
	if (x->rank >= RT_MAX_RANK)
		return rt_err(k, "input rank %d too large", x->rank);
	if (!(z = rt_out_tensor(k, 1, IR_DTYPE_INT64, x->rank, x->dims)))
		return IR_ENOMEM;
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t n = split_one(str_at(x, i), delim, maxsplit, NULL);

		((int64_t *)z->data)[i] = n;
		if (n > most)
			most = n;
	}
	memcpy(dims, x->dims, (size_t)x->rank * sizeof(*dims));
	dims[x->rank] = most;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_STRING, x->rank + 1, dims)))
		return IR_ENOMEM;
	if (!(ps = malloc((size_t)(2 * most + 2) * sizeof(*ps))))
		return rt_oom(k);
	rc = 0;
	for (int64_t i = 0; i < x->numel && !rc; i++) {
		const char *s = str_at(x, i);
		int64_t n = split_one(s, delim, maxsplit, ps);

		for (int64_t j = 0; j < most; j++) {
			char *t = j < n ? dup_n(s + ps[2 * j], (size_t)ps[2 * j + 1]) :
				  dup_n("", 0);

			if (!t) {
				rc = rt_oom(k);
				break;
			}
			((char **)y->data)[i * most + j] = t;
		}
	}
	free(ps);
	return rc;
}

/* ---- RegexFullMatch ------------------------------------------------- */

/* RE2 pattern -> glibc POSIX extended regex, anchored for a full match
 * (POSIX matching is leftmost-longest, so an anchored match exists iff
 * RE2's full match does).  Translated: \d \D \s \S \w \W (ASCII classes,
 * also inside brackets), \t \n \r \f \v, escaped punctuation, and bracket
 * expressions (RE2's escapes inside brackets become POSIX's positional
 * rules: ']' first, '-' last).  \b and \B pass through (a glibc
 * extension with RE2's meaning).  Refused with an error: lazy quantifiers,
 * (?...) groups (flags, non-capturing, named), \A \z \pN, backreferences
 * and other escapes POSIX lacks. */
struct re_buf {
	char *s;
	size_t n;
};

static void re_put(struct re_buf *b, const char *t)
{
	size_t l = strlen(t);

	memcpy(b->s + b->n, t, l);
	b->n += l;
}

static const char *re_escape_class(char e, int in_br)
{
	switch (e) {
	case 'd': return in_br ? "0-9" : "[0-9]";
	case 's': return in_br ? "[:space:]" : "[[:space:]]";
	case 'w': return in_br ? "[:alnum:]_" : "[[:alnum:]_]";
	case 'D': return in_br ? NULL : "[^0-9]";
	case 'S': return in_br ? NULL : "[^[:space:]]";
	case 'W': return in_br ? NULL : "[^[:alnum:]_]";
	case 't': return "\t";
	case 'n': return "\n";
	case 'r': return "\r";
	case 'f': return "\f";
	case 'v': return "\v";
	default: return NULL;
	}
}

/* A bracket expression starting at p[*i] == '['; on return *i is at its
 * closing ']'. */
static int re_bracket(struct rt_kctx *k, const char *p, size_t *i, struct re_buf *b)
{
	size_t n = strlen(p), j = *i + 1;
	int neg = 0, close = 0, dash = 0;
	struct re_buf body = { NULL, 0 };
	int first = 1;

	if (!(body.s = malloc(n * 12 + 8)))
		return rt_oom(k);
	if (j < n && p[j] == '^') {
		neg = 1;
		j++;
	}
	for (; j < n; j++, first = 0) {
		char c = p[j];

		if (c == ']' && !first)
			break;
		if (c == ']') {
			close = 1;
		} else if (c == '[' && j + 1 < n && p[j + 1] == ':') {
			const char *e = strstr(p + j + 2, ":]");
			size_t l;

			if (!e)
				goto bad;
			l = (size_t)(e + 2 - (p + j));
			memcpy(body.s + body.n, p + j, l);
			body.n += l;
			j += l - 1;
		} else if (c == '\\' && j + 1 < n) {
			char e = p[++j];
			const char *cls = re_escape_class(e, 1);

			if (cls)
				re_put(&body, cls);
			else if (e == ']')
				close = 1;
			else if (e == '-')
				dash = 1;
			else if (!isalnum((unsigned char)e))
				body.s[body.n++] = e;
			else
				goto bad;
		} else if (c == '-' && (first || j + 1 >= n || p[j + 1] == ']')) {
			dash = 1;
		} else {
			body.s[body.n++] = c;
		}
	}
	if (j >= n) {
		free(body.s);
		return rt_err(k, "pattern '%s': unterminated bracket expression", p);
	}
	re_put(b, neg ? "[^" : "[");
	if (close)
		re_put(b, "]");
	memcpy(b->s + b->n, body.s, body.n);
	b->n += body.n;
	if (dash)
		re_put(b, "-");
	re_put(b, "]");
	if (!close && !dash && !body.n) {
		free(body.s);
		return rt_err(k, "pattern '%s': empty bracket expression", p);
	}
	free(body.s);
	*i = j;
	return 0;
bad:
	free(body.s);
	return rt_err(k, "pattern '%s': bracket expression not supported (POSIX regex)", p);
}

static int re2_to_posix(struct rt_kctx *k, const char *p, char **out)
{
	size_t n = strlen(p);
	struct re_buf b = { malloc(n * 14 + 8), 0 };
	int rc;

	*out = NULL;
	if (!b.s)
		return rt_oom(k);
	re_put(&b, "^(");
	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (c == '\\' && i + 1 < n) {
			char e = p[++i];
			const char *cls = re_escape_class(e, 0);

			if (cls) {
				re_put(&b, cls);
			} else if (e == 'b' || e == 'B' || !isalnum((unsigned char)e)) {
				b.s[b.n++] = '\\';
				b.s[b.n++] = e;
			} else {
				free(b.s);
				return rt_err(k, "pattern '%s': escape \\%c is not supported (POSIX regex)",
					      p, e);
			}
			continue;
		}
		if (c == '[') {
			if ((rc = re_bracket(k, p, &i, &b)) < 0) {
				free(b.s);
				return rc;
			}
			continue;
		}
		if ((c == '*' || c == '+' || c == '?' || c == '}') && i + 1 < n &&
		    p[i + 1] == '?') {
			free(b.s);
			return rt_err(k, "pattern '%s': lazy quantifiers are not supported (POSIX regex)", p);
		}
		if (c == '(' && i + 1 < n && p[i + 1] == '?') {
			free(b.s);
			return rt_err(k, "pattern '%s': (?...) groups are not supported (POSIX regex)", p);
		}
		b.s[b.n++] = c;
	}
	re_put(&b, ")$");
	b.s[b.n] = 0;
	*out = b.s;
	return 0;
}

static int k_regex_full_match(struct rt_kctx *k)
{
	const char *pat = rt_attr_str(k, "pattern", NULL);
	struct rt_value *x, *y;
	char *posix = NULL, err[160];
	regex_t re;
	int rc;

	if ((rc = in_strings(k, 0, &x)) < 0)
		return rc;
	if (!pat)
		return rt_err(k, "attribute 'pattern' is missing");
	if ((rc = re2_to_posix(k, pat, &posix)) < 0)
		return rc;
	if ((rc = regcomp(&re, posix, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &re, err, sizeof(err));
		free(posix);
		return rt_err(k, "pattern '%s': %s", pat, err);
	}
	free(posix);
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_BOOL, x->rank, x->dims))) {
		regfree(&re);
		return IR_ENOMEM;
	}
	for (int64_t i = 0; i < x->numel; i++)
		((uint8_t *)y->data)[i] = regexec(&re, str_at(x, i), 0, NULL, 0) == 0;
	regfree(&re);
	return 0;
}

/* ---- TfIdfVectorizer --------------------------------------------------- */

struct tfidf {
	int strings;
	const int64_t *pool_i;
	const struct ir_attr *pool_s;
	const int64_t *counts, *indexes;
	size_t n_counts, n_indexes, n_pool;
};

static int tok_eq(const struct tfidf *t, const struct rt_value *x, int64_t xi,
		  size_t pi)
{
	if (t->strings) {
		const char *s = str_at(x, xi);

		return strlen(s) == t->pool_s->string_lens[pi] &&
		       !memcmp(s, t->pool_s->strings[pi], t->pool_s->string_lens[pi]);
	}
	return rt_load_i64(x->dtype, x->data, xi) == t->pool_i[pi];
}

/* Output index of the n-gram of length n whose tokens are x[pos[0..n)],
 * or -1 when it is not in the pool. */
static int64_t tfidf_find(const struct tfidf *t, const struct rt_value *x,
			  const int64_t *pos, int64_t n)
{
	size_t lo, hi, first;

	if ((size_t)n > t->n_counts)
		return -1;
	lo = (size_t)t->counts[n - 1];
	hi = (size_t)n < t->n_counts ? (size_t)t->counts[n] : t->n_pool;
	first = 0;
	for (int64_t g = 1; g < n; g++)   /* n-grams before this group */
		first += (size_t)(t->counts[g] - t->counts[g - 1]) / (size_t)g;
	for (size_t e = lo, j = 0; e + (size_t)n <= hi; e += (size_t)n, j++) {
		int64_t m = 0;

		while (m < n && tok_eq(t, x, pos[m], e + (size_t)m))
			m++;
		if (m == n)
			return first + j < t->n_indexes ? t->indexes[first + j] : -1;
	}
	return -1;
}

static int k_tfidf(struct rt_kctx *k)
{
	const char *mode = rt_attr_str(k, "mode", "TF");
	int64_t mingram = rt_attr_int(k, "min_gram_length", 1);
	int64_t maxgram = rt_attr_int(k, "max_gram_length", 1);
	int64_t maxskip = rt_attr_int(k, "max_skip_count", 0);
	size_t n_w = 0;
	const float *w = rt_attr_floats(k, "weights", &n_w);
	struct tfidf t = { 0 };
	struct rt_value *x, *y;
	int64_t rows, len, width = 0, dims[2], pos[64];
	int m, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	t.counts = rt_attr_ints(k, "ngram_counts", &t.n_counts);
	t.indexes = rt_attr_ints(k, "ngram_indexes", &t.n_indexes);
	t.pool_i = rt_attr_ints(k, "pool_int64s", &t.n_pool);
	t.pool_s = rt_attr(k, "pool_strings");
	t.strings = x->dtype == IR_DTYPE_STRING;
	if (t.strings) {
		if (!t.pool_s || t.pool_s->type != IR_ATTR_STRINGS)
			return rt_err(k, "string input needs attribute 'pool_strings'");
		t.n_pool = t.pool_s->n_strings;
	} else if (!t.pool_i && t.n_counts) {
		return rt_err(k, "integer input needs attribute 'pool_int64s'");
	}
	if (!strcmp(mode, "TF"))
		m = 0;
	else if (!strcmp(mode, "IDF"))
		m = 1;
	else if (!strcmp(mode, "TFIDF"))
		m = 2;
	else
		return rt_err(k, "unknown mode '%s'", mode);
	if (mingram < 1 || maxgram < mingram || maxgram > 64 || maxskip < 0)
		return rt_err(k, "bad gram lengths [%lld, %lld] or max_skip_count %lld",
			      (long long)mingram, (long long)maxgram, (long long)maxskip);
	for (size_t i = 0; i < t.n_counts; i++)
		if (t.counts[i] < 0 || (size_t)t.counts[i] > t.n_pool ||
		    (i && t.counts[i] < t.counts[i - 1]))
			return rt_err(k, "ngram_counts[%zu] = %lld out of order or past the pool",
				      i, (long long)t.counts[i]);
	for (size_t i = 0; i < t.n_indexes; i++) {
		if (t.indexes[i] < 0)
			return rt_err(k, "negative ngram_indexes[%zu]", i);
		if (t.indexes[i] + 1 > width)
			width = t.indexes[i] + 1;
	}
	if (w && n_w < (size_t)width)
		return rt_err(k, "weights has %zu entries, the output %lld", n_w,
			      (long long)width);
	if (x->rank == 1) {
		rows = 1;
		len = x->dims[0];
	} else if (x->rank == 2) {
		rows = x->dims[0];
		len = x->dims[1];
	} else {
		return rt_err(k, "input must be [C] or [N, C], has rank %d", x->rank);
	}
	dims[0] = rows;
	dims[1] = width;
	if (!(y = x->rank == 1 ? rt_out_tensor(k, 0, IR_DTYPE_FLOAT, 1, &width) :
		  rt_out_tensor(k, 0, IR_DTYPE_FLOAT, 2, dims)))
		return IR_ENOMEM;
	memset(y->data, 0, (size_t)(rows * width) * sizeof(float));
	for (int64_t r = 0; r < rows; r++) {
		float *out = (float *)y->data + r * width;

		for (int64_t n = mingram; n <= maxgram; n++) {
			/* unigrams are counted once whatever the skip */
			int64_t skips = n == 1 ? 0 : maxskip;

			for (int64_t s = 0; s <= skips; s++)
				for (int64_t i = 0; i + (n - 1) * (s + 1) < len; i++) {
					int64_t idx;

					for (int64_t j = 0; j < n; j++)
						pos[j] = r * len + i + j * (s + 1);
					if ((idx = tfidf_find(&t, x, pos, n)) >= 0)
						out[idx] += 1;
				}
		}
		for (int64_t j = 0; j < width; j++) {
			float wt = w ? w[j] : 1.0f;

			if (m == 1)
				out[j] = out[j] > 0 ? wt : 0;
			else if (m == 2)
				out[j] *= wt;
		}
	}
	return 0;
}

const struct rt_kernel rt_kernels_string[] = {
	{ "ai.onnx", "RegexFullMatch", 20, RT_OPEN, k_regex_full_match },
	{ "ai.onnx", "StringConcat", 20, RT_OPEN, k_string_concat },
	{ "ai.onnx", "StringNormalizer", 10, RT_OPEN, k_string_normalizer },
	{ "ai.onnx", "StringSplit", 20, RT_OPEN, k_string_split },
	{ "ai.onnx", "TfIdfVectorizer", 9, RT_OPEN, k_tfidf },
};
const size_t rt_n_kernels_string = sizeof(rt_kernels_string) / sizeof(rt_kernels_string[0]);
