/* k_einsum.c: kernels of the einsum family: Einsum (explicit or implicit
 * output, ellipsis with broadcasting, repeated labels as diagonals) by
 * taking diagonals, summing out labels no one else needs, and contracting
 * operands pairwise as a transpose plus batched matrix product (BLAS
 * for float32 in float and other floats in double, over the session's
 * threads; exact wrapping int64 loops for integers); and Det (LU with partial pivoting per matrix). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/k_reduce_int.h"

#define EL_LETTERS 52           /* 'A'-'Z' then 'a'-'z': ASCII order */
#define EL_MAX (EL_LETTERS + RT_MAX_RANK)

/* One operand: labels and dims of each axis, data in the working type. */
struct eop {
	int rank;
	int lab[RT_MAX_RANK];
	int64_t dims[RT_MAX_RANK];
	void *data;
	int owned;
};

struct einsum {
	struct rt_kctx *k;
	enum kr_work w;             /* float for float32, int64 for integers,
				     * else double */
	size_t es;
	int64_t size[EL_MAX];       /* per label; -1 unseen */
	int n_out, out[EL_MAX];
	int uses[EL_MAX];           /* operands still holding the label */
};

static int label_code(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return 26 + c - 'a';
	return -1;
}

/* The equation character of a label code ('.' for ellipsis dims). */
static char label_char(int code)
{
	return code < 26 ? (char)('A' + code) : code < EL_LETTERS ? (char)('a' + code - 26) : '.';
}

/* dst (contiguous, rank dims) gets src read with element strides sstr. */
static void strided_copy(void *dst, const void *src, size_t es, int rank,
			 const int64_t *dims, const int64_t *sstr)
{
	int64_t idx[RT_MAX_RANK] = { 0 }, total = rt_numel(rank, dims), run, rs;
	char *d = dst;
	const char *s = src;

	if (total == 0)
		return;
	if (rank == 0) {
		memcpy(dst, src, es);
		return;
	}
	run = dims[rank - 1];
	rs = sstr[rank - 1];
	for (int64_t o = 0; o < total; o += run) {
		int64_t off = 0;

		for (int i = 0; i < rank - 1; i++)
			off += idx[i] * sstr[i];
		if (rs == 1)
			memcpy(d + o * (int64_t)es, s + off * (int64_t)es, (size_t)run * es);
		else if (es == 4)
			for (int64_t j = 0; j < run; j++)
				((uint32_t *)d)[o + j] = ((const uint32_t *)s)[off + j * rs];
		else
			for (int64_t j = 0; j < run; j++)
				((uint64_t *)d)[o + j] = ((const uint64_t *)s)[off + j * rs];
		for (int i = rank - 2; i >= 0; i--) {
			if (++idx[i] < dims[i])
				break;
			idx[i] = 0;
		}
	}
}

static void strides_of(const struct eop *a, int64_t *st)
{
	int64_t s = 1;

	for (int i = a->rank - 1; i >= 0; i--) {
		st[i] = s;
		s *= a->dims[i];
	}
}

static void op_set_data(struct eop *a, void *data)
{
	if (a->owned)
		free(a->data);
	a->data = data;
	a->owned = 1;
}

/* Reorder a's axes to the labels in `order` (a permutation of a's). */
static int op_permute(struct einsum *e, struct eop *a, const int *order)
{
	int64_t st[RT_MAX_RANK], sst[RT_MAX_RANK], nd[RT_MAX_RANK];
	int same = 1;
	void *buf;

	strides_of(a, st);
	for (int i = 0; i < a->rank; i++) {
		int j = 0;

		while (a->lab[j] != order[i])
			j++;
		sst[i] = st[j];
		nd[i] = a->dims[j];
		same &= j == i;
	}
	if (same)
		return 0;
	if (!(buf = malloc((size_t)(rt_numel(a->rank, nd) ? rt_numel(a->rank, nd) : 1) * e->es)))
		return rt_oom(e->k);
	strided_copy(buf, a->data, e->es, a->rank, nd, sst);
	op_set_data(a, buf);
	for (int i = 0; i < a->rank; i++) {
		a->lab[i] = order[i];
		a->dims[i] = nd[i];
	}
	return 0;
}

/* Sum out the labels of a with drop[label] set. */
static int op_sum_out(struct einsum *e, struct eop *a, const int *drop)
{
	int order[RT_MAX_RANK], nk = 0, rc;
	int64_t outer = 1, red = 1;
	void *buf;

	for (int i = 0; i < a->rank; i++)
		if (!drop[a->lab[i]])
			order[nk++] = a->lab[i];
	if (nk == a->rank)
		return 0;
	for (int i = 0, p = nk; i < a->rank; i++)
		if (drop[a->lab[i]])
			order[p++] = a->lab[i];
	if ((rc = op_permute(e, a, order)) < 0)
		return rc;
	for (int i = 0; i < a->rank; i++)
		*(i < nk ? &outer : &red) *= a->dims[i];
	if (!(buf = malloc((size_t)(outer ? outer : 1) * e->es)))
		return rt_oom(e->k);
	for (int64_t o = 0; o < outer; o++) {
		double s = 0;
		uint64_t u = 0;

		switch (e->w) {
		case KR_F32:
			for (int64_t r = 0; r < red; r++)
				s += ((const float *)a->data)[o * red + r];
			((float *)buf)[o] = (float)s;
			break;
		case KR_I64:
			for (int64_t r = 0; r < red; r++)
				u += (uint64_t)((const int64_t *)a->data)[o * red + r];
			((int64_t *)buf)[o] = (int64_t)u;
			break;
		default:
			for (int64_t r = 0; r < red; r++)
				s += ((const double *)a->data)[o * red + r];
			((double *)buf)[o] = s;
			break;
		}
	}
	op_set_data(a, buf);
	a->rank = nk;
	return 0;
}

/* Parse one term of the equation into labels (ellipsis dims get codes
 * EL_LETTERS + j, right-aligned to n_ell); the term ends at ',', '-' or
 * the end.  rank < 0 for the output term means "any". */
static int parse_term(struct rt_kctx *k, const char **p, int rank, int n_ell_max,
		      int *lab, int *n_lab, int *n_ell)
{
	const char *s = *p;
	int n = 0, letters = 0, ell = -1;

	for (const char *q = s; *q && *q != ',' && *q != '-'; q++)
		letters += label_code(*q) >= 0;
	for (; *s && *s != ',' && *s != '-'; s++) {
		if (*s == ' ')
			continue;
		if (*s == '.') {
			if (ell >= 0 || strncmp(s, "...", 3))
				return rt_err(k, "bad ellipsis in equation");
			ell = rank >= 0 ? rank - letters : n_ell_max;
			if (ell < 0)
				return rt_err(k, "a term has more labels than its input's rank %d", rank);
			for (int j = 0; j < ell; j++) {
				if (n >= RT_MAX_RANK)
					return rt_err(k, "too many labels in a term");
				lab[n++] = EL_LETTERS + n_ell_max - ell + j;
			}
			s += 2;
			continue;
		}
		if (label_code(*s) < 0)
			return rt_err(k, "bad character '%c' in equation", *s);
		if (n >= RT_MAX_RANK)
			return rt_err(k, "too many labels in a term");
		lab[n++] = label_code(*s);
	}
	if (rank >= 0 && n != rank)
		return rt_err(k, "a term has %d labels for an input of rank %d", n, rank);
	*n_lab = n;
	*n_ell = ell < 0 ? 0 : ell;
	*p = s;
	return 0;
}

/* Products [lo, hi) of a batch, one per thread's chunk (a transformer's
 * heads: Einsum ran single-threaded, einsum_enc no faster at two
 * threads, bench/README.md) */
struct bmm_job {
	const struct einsum *e;
	const void *a, *b;
	void *c;
	int64_t M, K, N;
};

static void bmm_range(void *ctx, int64_t lo, int64_t hi)
{
	const struct bmm_job *j = ctx;
	int64_t M = j->M, K = j->K, N = j->N;

	for (int64_t i = lo; i < hi; i++) {
		if (j->e->w == KR_F32)
			rt_gemm_f32(0, 0, M, N, K, 1.0f, (const float *)j->a + i * M * K, K,
				    (const float *)j->b + i * K * N, N, 0.0f,
				    (float *)j->c + i * M * N, N);
		else
			rt_gemm_f64(0, 0, M, N, K, 1.0, (const double *)j->a + i * M * K, K,
				    (const double *)j->b + i * K * N, N, 0.0,
				    (double *)j->c + i * M * N, N);
	}
}

/* Batched product: c[b] = a[b] (M x K) times b[b] (K x N). */
static void bmm(const struct einsum *e, const void *a, const void *b, void *c,
		int64_t B, int64_t M, int64_t K, int64_t N)
{
	if (M == 0 || N == 0)
		return;
	if (K == 0) {
		memset(c, 0, (size_t)(B * M * N) * e->es);
		return;
	}
	if (e->w == KR_I64) {
		/* exact (wrapping) integer products, as numpy's */
		const int64_t *x = a, *y = b;
		int64_t *z = c;

		memset(c, 0, (size_t)(B * M * N) * e->es);
		for (int64_t i = 0; i < B; i++)
			for (int64_t m = 0; m < M; m++)
				for (int64_t q = 0; q < K; q++) {
					uint64_t f = (uint64_t)x[(i * M + m) * K + q];
					const int64_t *yr = y + (i * K + q) * N;
					int64_t *zr = z + (i * M + m) * N;

					for (int64_t n = 0; n < N; n++)
						zr[n] = (int64_t)((uint64_t)zr[n] + f * (uint64_t)yr[n]);
				}
		return;
	}
	if (B == 1) {   /* one product: its rows or columns over the threads */
		if (e->w == KR_F32)
			rt_gemm_f32_par(e->k, 0, 0, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
		else
			rt_gemm_f64_par(e->k, 0, 0, M, N, K, 1.0, a, K, b, N, 0.0, c, N);
		return;
	}
	{
		struct bmm_job j = { e, a, b, c, M, K, N };

		rt_parallel_for(e->k, B, 1 + (int64_t)(1e6 / ((double)M * N * K + 1)), bmm_range,
				&j);
	}
}

/* a = a . b over their shared labels: batch labels (needed later) first,
 * then a's own, then b's own; contracted labels vanish.  Labels only one
 * side holds and no one needs are summed out first. */
static int contract(struct einsum *e, struct eop *a, struct eop *b)
{
	int in_a[EL_MAX] = { 0 }, in_b[EL_MAX] = { 0 }, drop[EL_MAX] = { 0 };
	int oa[RT_MAX_RANK], ob[RT_MAX_RANK], lab[RT_MAX_RANK];
	int nb = 0, nl = 0, nr = 0, nk = 0, rc;
	int64_t Bs = 1, M = 1, K = 1, N = 1, dims[RT_MAX_RANK];
	int batch[RT_MAX_RANK], left[RT_MAX_RANK], right[RT_MAX_RANK], con[RT_MAX_RANK];
	void *c;

	for (int i = 0; i < a->rank; i++)
		in_a[a->lab[i]] = 1;
	for (int i = 0; i < b->rank; i++)
		in_b[b->lab[i]] = 1;
	/* uses[] counts operands not yet merged, b included */
	for (int l = 0; l < EL_MAX; l++) {
		int later = e->uses[l] - in_b[l] > 0;

		for (int o = 0; o < e->n_out; o++)
			later |= e->out[o] == l;
		if (in_a[l] && in_b[l]) {
			if (later) {
				batch[nb++] = l;
				Bs *= e->size[l];
			} else {
				con[nk++] = l;
				K *= e->size[l];
			}
		} else if (in_a[l] || in_b[l]) {
			if (!later) {
				drop[l] = 1;
			} else if (in_a[l]) {
				left[nl++] = l;
				M *= e->size[l];
			} else {
				right[nr++] = l;
				N *= e->size[l];
			}
		}
	}
	if ((rc = op_sum_out(e, a, drop)) < 0 || (rc = op_sum_out(e, b, drop)) < 0)
		return rc;
	memcpy(oa, batch, (size_t)nb * sizeof(int));
	memcpy(oa + nb, left, (size_t)nl * sizeof(int));
	memcpy(oa + nb + nl, con, (size_t)nk * sizeof(int));
	memcpy(ob, batch, (size_t)nb * sizeof(int));
	memcpy(ob + nb, con, (size_t)nk * sizeof(int));
	memcpy(ob + nb + nk, right, (size_t)nr * sizeof(int));
	if ((rc = op_permute(e, a, oa)) < 0 || (rc = op_permute(e, b, ob)) < 0)
		return rc;
	if (nb + nl + nr > RT_MAX_RANK)
		return rt_err(e->k, "intermediate result of rank %d above %d",
			      nb + nl + nr, RT_MAX_RANK);
	if (!(c = malloc((size_t)(Bs * M * N > 0 ? Bs * M * N : 1) * e->es)))
		return rt_oom(e->k);
	bmm(e, a->data, b->data, c, Bs, M, K, N);
	memcpy(lab, batch, (size_t)nb * sizeof(int));
	memcpy(lab + nb, left, (size_t)nl * sizeof(int));
	memcpy(lab + nb + nl, right, (size_t)nr * sizeof(int));
	for (int i = 0; i < nb + nl + nr; i++)
		dims[i] = e->size[lab[i]];
	op_set_data(a, c);
	a->rank = nb + nl + nr;
	memcpy(a->lab, lab, (size_t)a->rank * sizeof(int));
	memcpy(a->dims, dims, (size_t)a->rank * sizeof(*dims));
	return 0;
}

/* Operand i from input t and its term's labels: the diagonal of repeated
 * labels, without size-1 axes that broadcast against a larger size. */
static int op_init(struct einsum *e, struct eop *a, const struct rt_value *t,
		   const int *lab, int n)
{
	int64_t st[RT_MAX_RANK], ust[RT_MAX_RANK] = { 0 }, ud[RT_MAX_RANK], s = 1;
	int ul[RT_MAX_RANK], nu = 0, rc, dup = 0;
	void *buf;

	for (int i = n - 1; i >= 0; i--) {
		st[i] = s;
		s *= t->dims[i];
	}
	if ((rc = kr_load(e->k, t, e->w, &a->data, &a->owned)) < 0)
		return rc;
	for (int i = 0; i < n; i++) {
		int j = 0;

		if (t->dims[i] == 1 && e->size[lab[i]] > 1)
			continue;       /* broadcast: drop the axis */
		while (j < nu && ul[j] != lab[i])
			j++;
		if (j == nu) {
			ul[nu] = lab[i];
			ud[nu++] = t->dims[i];
		} else {
			dup = 1;
		}
		ust[j] += st[i];
	}
	a->rank = nu;
	memcpy(a->lab, ul, (size_t)nu * sizeof(int));
	memcpy(a->dims, ud, (size_t)nu * sizeof(*ud));
	if (!dup)
		return 0;
	if (!(buf = malloc((size_t)(rt_numel(nu, ud) ? rt_numel(nu, ud) : 1) * e->es)))
		return rt_oom(e->k);
	strided_copy(buf, a->data, e->es, nu, ud, ust);
	op_set_data(a, buf);
	return 0;
}

static int k_einsum(struct rt_kctx *k)
{
	const char *eq = rt_attr_str(k, "equation", NULL), *p;
	int lab[RT_MAX_RANK][RT_MAX_RANK], nl[RT_MAX_RANK], n_ell = 0, rc = 0;
	struct eop ops[RT_MAX_RANK];
	struct einsum e = { 0 };
	int drop[EL_MAX] = { 0 }, count[EL_MAX] = { 0 }, dtype;
	size_t n = k->n_in;
	int64_t odims[RT_MAX_RANK];
	struct rt_value *y;

	memset(ops, 0, sizeof(ops));
	if (!eq)
		return rt_err(k, "attribute 'equation' is missing");
	if (n == 0 || n > RT_MAX_RANK)
		return rt_err(k, "%zu inputs (1 to %d supported)", n, RT_MAX_RANK);
	for (size_t i = 0; i < n; i++) {
		struct rt_value *t;

		if ((rc = rt_in_tensor(k, i, &t)) < 0)
			return rc;
		if (t->dtype == IR_DTYPE_STRING || t->dtype != k->in[0]->dtype)
			return rt_err(k, "input %zu: numeric tensor of input 0's type expected", i);
	}
	dtype = k->in[0]->dtype;
	e.k = k;
	e.w = rt_dtype_is_float(dtype) ? kr_work_of(dtype) : KR_I64;
	e.es = kr_work_size(e.w);
	/* input terms; the widest ellipsis first so every term aligns to it */
	for (int pass = 0; pass < 2; pass++) {
		p = eq;
		for (size_t i = 0; i < n; i++) {
			int ell;

			while (*p == ' ')
				p++;
			if (i && *p++ != ',')
				return rt_err(k, "equation '%s' has %zu input terms, %zu inputs",
					      eq, i, n);
			if ((rc = parse_term(k, &p, k->in[i]->rank, n_ell, lab[i], &nl[i], &ell)) < 0)
				return rc;
			if (ell > n_ell)
				n_ell = ell;
		}
	}
	if (*p == ',')
		return rt_err(k, "equation '%s' has more terms than the %zu inputs", eq, n);
	for (int l = 0; l < EL_MAX; l++)
		e.size[l] = -1;
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < nl[i]; j++) {
			int64_t d = k->in[i]->dims[j], *s = &e.size[lab[i][j]];

			if (*s >= 0 && d != *s && d != 1 && *s != 1)
				return rt_err(k, "label '%c' has sizes %lld and %lld",
					      label_char(lab[i][j]),
					      (long long)*s, (long long)d);
			if (*s < 0 || *s == 1)
				*s = d;
			count[lab[i][j]]++;
		}
	if (*p == '-') {
		int ell;

		if (p[1] != '>')
			return rt_err(k, "bad arrow in equation '%s'", eq);
		p += 2;
		if ((rc = parse_term(k, &p, -1, n_ell, e.out, &e.n_out, &ell)) < 0)
			return rc;
		if (n_ell && !ell)      /* as numpy: no implicit sum over '...' */
			return rt_err(k, "output of '%s' lacks '...' for the inputs' %d broadcast dims",
				      eq, n_ell);
		for (int o = 0; o < e.n_out; o++) {
			if (e.size[e.out[o]] < 0)
				return rt_err(k, "output label %d of '%s' is in no input", o, eq);
			for (int q = 0; q < o; q++)
				if (e.out[q] == e.out[o])
					return rt_err(k, "output label %d of '%s' repeated", o, eq);
		}
	} else {
		for (int l = 0; l < n_ell; l++)
			e.out[e.n_out++] = EL_LETTERS + l;
		for (int l = 0; l < EL_LETTERS; l++)
			if (count[l] == 1)
				e.out[e.n_out++] = l;
	}
	if (*p)
		return rt_err(k, "unexpected '%s' in equation", p);
	/* operands, each label counted once per operand holding it */
	for (size_t i = 0; i < n; i++) {
		if ((rc = op_init(&e, &ops[i], k->in[i], lab[i], nl[i])) < 0)
			goto cleanup;
		for (int j = 0; j < ops[i].rank; j++)
			e.uses[ops[i].lab[j]]++;
	}
	for (int i = 0; i < ops[0].rank; i++)
		e.uses[ops[0].lab[i]]--;
	for (size_t i = 1; i < n; i++) {
		int held[RT_MAX_RANK], nh = ops[i].rank;

		memcpy(held, ops[i].lab, (size_t)nh * sizeof(int));
		if ((rc = contract(&e, &ops[0], &ops[i])) < 0)
			goto cleanup;
		for (int j = 0; j < nh; j++)
			e.uses[held[j]]--;
	}
	for (int l = 0; l < EL_MAX; l++)
		drop[l] = 1;
	for (int o = 0; o < e.n_out; o++)
		drop[e.out[o]] = 0;
	if ((rc = op_sum_out(&e, &ops[0], drop)) < 0)
		goto cleanup;
	/* output labels every operand dropped as broadcast size 1 come back */
	for (int o = 0; o < e.n_out; o++)
		odims[o] = e.size[e.out[o]];
	{
		int order[RT_MAX_RANK], no = 0;

		for (int o = 0; o < e.n_out; o++)
			for (int i = 0; i < ops[0].rank; i++)
				if (ops[0].lab[i] == e.out[o])
					order[no++] = e.out[o];
		if ((rc = op_permute(&e, &ops[0], order)) < 0)
			goto cleanup;
	}
	if (!(y = rt_out_tensor(k, 0, dtype, e.n_out, odims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	kr_store(y, e.w, ops[0].data);
cleanup:
	for (size_t i = 0; i < n; i++)
		if (ops[i].owned)
			free(ops[i].data);
	return rc;
}

/* ---- Det ---------------------------------------------------------------- */

static double det_lu(double *a, int64_t m)
{
	double det = 1;

	for (int64_t c = 0; c < m; c++) {
		int64_t piv = c;

		for (int64_t r = c + 1; r < m; r++)
			if (fabs(a[r * m + c]) > fabs(a[piv * m + c]))
				piv = r;
		if (a[piv * m + c] == 0)
			return 0;
		if (piv != c) {
			for (int64_t j = 0; j < m; j++) {
				double t = a[c * m + j];

				a[c * m + j] = a[piv * m + j];
				a[piv * m + j] = t;
			}
			det = -det;
		}
		det *= a[c * m + c];
		for (int64_t r = c + 1; r < m; r++) {
			double f = a[r * m + c] / a[c * m + c];

			for (int64_t j = c; j < m; j++)
				a[r * m + j] -= f * a[c * m + j];
		}
	}
	return det;
}

static int k_det(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t m, mm, batch;
	double *a;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!rt_dtype_is_float(x->dtype) || x->rank < 2 ||
	    x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return rt_err(k, "input 0: float tensor of square matrices [*, M, M] expected");
	m = x->dims[x->rank - 1];
	mm = m * m;
	batch = rt_numel(x->rank - 2, x->dims);
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank - 2, x->dims)))
		return IR_ENOMEM;
	if (!(a = malloc((size_t)(mm ? mm : 1) * sizeof(*a))))
		return rt_oom(k);
	for (int64_t b = 0; b < batch; b++) {
		for (int64_t i = 0; i < mm; i++)
			a[i] = rt_load_f64(x->dtype, x->data, b * mm + i);
		rt_store_f64(x->dtype, y->data, b, det_lu(a, m));
	}
	free(a);
	return 0;
}

const struct rt_kernel rt_kernels_einsum[] = {
	{ "ai.onnx", "Det", 11, RT_OPEN, k_det },
	{ "ai.onnx", "Einsum", 12, RT_OPEN, k_einsum },
};
const size_t rt_n_kernels_einsum = sizeof(rt_kernels_einsum) / sizeof(rt_kernels_einsum[0]);
