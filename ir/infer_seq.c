/* infer_seq.c: inference for sequence values: SequenceEmpty,
 * SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt,
 * SequenceLength, ConcatFromSequence and SplitToSequence.  A sequence's
 * vtype (is_seq) carries the element type common to all elements and,
 * while positions are known constants, the elements one by one. */
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

#define MAX_ELEMS 4096

/* The common type of the elements into t's dtype, rank and dims. */
static void join_elems(struct ir_vtype *t)
{
	t->rank = -1;
	if (!t->has_elems || !t->n_elems)
		return;
	t->dtype = t->elems[0].dtype;
	t->rank = t->elems[0].rank;
	memcpy(t->dims, t->elems[0].dims, sizeof(t->dims));
	for (size_t i = 1; i < t->n_elems; i++) {
		const struct ir_vtype *e = &t->elems[i];

		if (e->rank != t->rank) {
			t->rank = -1;
			return;
		}
		for (int k = 0; k < t->rank; k++)
			if (!infer_dim_eq(&t->dims[k], &e->dims[k]))
				t->dims[k] = infer_dim_unknown();
	}
}

/* The element type of a sequence (or a tensor) as a tensor vtype. */
static void elem_type(const struct ir_vtype *s, struct ir_vtype *e)
{
	infer_vt_unknown(e);
	if (!s || s->map_key)  /* a map element has no tensor vtype */
		return;
	e->dtype = s->dtype;
	e->rank = s->rank;
	memcpy(e->dims, s->dims, sizeof(s->dims));
}

/* A constant position of input i in [-n, n) (or [-n, n] when inserting);
 * 0 unknown, 1 known, negative error. */
static int position(struct infer_ctx *c, size_t i, size_t n, int insert,
		    size_t *pos)
{
	int64_t p, hi = (int64_t)n + (insert ? 1 : 0);

	if (!infer_vt_const_int(infer_in(c, i), 0, &p))
		return 0;
	if (p < -(int64_t)n || p >= hi)
		return infer_err(c, "position %lld is out of range for %zu elements",
				 (long long)p, n);
	*pos = (size_t)(p < 0 ? p + (int64_t)n : p);
	return 1;
}

int infer_seq_empty(struct infer_ctx *c)
{
	int64_t dt = IR_DTYPE_FLOAT;
	int rc;

	if ((rc = infer_attr_int(c, "dtype", &dt)) < 0)
		return rc;
	c->out[0].is_seq = 1;
	c->out[0].dtype = (int)dt;
	return infer_vt_set_elems(&c->out[0], NULL, 0);
}

int infer_seq_construct(struct infer_ctx *c)
{
	struct ir_vtype *e = calloc(c->n_in + 1, sizeof(*e));
	int rc;

	if (!e)
		return IR_ENOMEM;
	for (size_t i = 0; i < c->n_in; i++)
		elem_type(infer_in(c, i), &e[i]);
	c->out[0].is_seq = 1;
	rc = infer_vt_set_elems(&c->out[0], e, c->n_in);
	free(e);
	join_elems(&c->out[0]);
	return rc;
}

/* Copy of seq s (not empty when erasing) with element pos removed, or
 * with an element of type ins (NULL: unknown) inserted at pos. */
static int edit(struct infer_ctx *c, const struct ir_vtype *s, size_t pos,
		int insert, const struct ir_vtype *ins)
{
	size_t n = insert ? s->n_elems + 1 : s->n_elems - 1, k = 0;
	struct ir_vtype *e = calloc(n + 1, sizeof(*e));
	int rc;

	if (!e)
		return IR_ENOMEM;
	for (size_t i = 0; i <= s->n_elems; i++) {
		if (i == pos && insert)
			elem_type(ins, &e[k++]);
		if (i < s->n_elems && (insert || i != pos))
			e[k++] = s->elems[i];
	}
	rc = infer_vt_set_elems(&c->out[0], e, n);
	free(e);
	if (c->out[0].n_elems)
		join_elems(&c->out[0]);
	return rc;
}

int infer_seq_insert(struct infer_ctx *c)
{
	const struct ir_vtype *s = infer_in(c, 0), *t = infer_in(c, 1);
	size_t pos = 0;
	int rc;

	c->out[0].is_seq = 1;
	if (s)
		c->out[0].dtype = s->dtype;
	if (t && !c->out[0].dtype)
		c->out[0].dtype = t->dtype;
	if (!s || !s->has_elems || s->n_elems >= MAX_ELEMS)
		return 0;
	if (!infer_has_in(c, 2))
		pos = s->n_elems;
	else if ((rc = position(c, 2, s->n_elems, 1, &pos)) <= 0)
		return rc;
	/* t is NULL for an absent tensor (the verifier lets it pass): an
	 * unknown element is still inserted */
	return edit(c, s, pos, 1, t);
}

int infer_seq_erase(struct infer_ctx *c)
{
	const struct ir_vtype *s = infer_in(c, 0);
	size_t pos = 0;
	int rc;

	c->out[0].is_seq = 1;
	if (!s)
		return 0;
	c->out[0].dtype = s->dtype;
	c->out[0].rank = s->rank;
	memcpy(c->out[0].dims, s->dims, sizeof(s->dims));
	if (!s->has_elems)
		return 0;
	if (!s->n_elems)
		return infer_err(c, "erasing from an empty sequence");
	if (!infer_has_in(c, 1))
		pos = s->n_elems - 1;
	else if ((rc = position(c, 1, s->n_elems, 0, &pos)) <= 0)
		return rc;
	return edit(c, s, pos, 0, NULL);
}

int infer_seq_at(struct infer_ctx *c)
{
	const struct ir_vtype *s = infer_in(c, 0);
	size_t pos;
	int rc;

	if (!s)
		return 0;
	if (s->has_elems && (rc = position(c, 1, s->n_elems, 0, &pos)) != 0) {
		if (rc < 0)
			return rc;
		elem_type(&s->elems[pos], &c->out[0]);
		return 0;
	}
	elem_type(s, &c->out[0]);
	return 0;
}

int infer_seq_length(struct infer_ctx *c)
{
	const struct ir_vtype *s = infer_in(c, 0);
	struct ir_vdim n;

	c->out[0].dtype = IR_DTYPE_INT64;
	c->out[0].rank = 0;
	if (!s || !s->has_elems)
		return 0;
	n = infer_dim_val((int64_t)s->n_elems);
	return infer_vt_set_const(&c->out[0], &n, 1);
}

/* ConcatFromSequence: concatenate along axis, or stack with new_axis. */
int infer_concat_from_seq(struct infer_ctx *c)
{
	const struct ir_vtype *s = infer_in(c, 0);
	struct ir_vtype *o = &c->out[0];
	int64_t axis = 0, new_axis = 0, ax, sum = 0;
	int rc, r;

	if ((rc = infer_attr_int(c, "axis", &axis)) < 0 ||
	    (rc = infer_attr_int(c, "new_axis", &new_axis)) < 0)
		return rc;
	if (!s)
		return 0;
	o->dtype = s->dtype;
	if (s->rank < 0)
		return 0;
	r = s->rank + (new_axis ? 1 : 0);
	if (r > IR_INFER_MAX_RANK)
		return 0;
	if ((rc = infer_norm_axis(c, axis, r, &ax)) < 0)
		return rc;
	o->rank = r;
	for (int i = 0, k = 0; i < r; i++)
		o->dims[i] = new_axis && i == ax ? infer_dim_unknown() : s->dims[k++];
	if (!s->has_elems) {
		o->dims[ax] = infer_dim_unknown();
		return 0;
	}
	if (new_axis) {
		o->dims[ax] = infer_dim_val((int64_t)s->n_elems);
		return 0;
	}
	for (size_t i = 0; i < s->n_elems; i++) {
		const struct ir_vdim *d = &s->elems[i].dims[ax];

		if (d->kind != IR_VDIM_VALUE) {
			o->dims[ax] = infer_dim_unknown();
			return 0;
		}
		if (__builtin_add_overflow(sum, d->value, &sum))
			return infer_err(c, "axis %lld: the elements' dims overflow",
					 (long long)ax);
	}
	o->dims[ax] = infer_dim_val(sum);
	return 0;
}

/* SplitToSequence: pieces of `split` (scalar: equal chunks, the last one
 * smaller; 1-D: the sizes), or of 1 with keepdims deciding the axis. */
int infer_split_to_seq(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *sp = infer_in(c, 1);
	struct ir_vtype *o = &c->out[0], *e = NULL;
	int64_t axis = 0, keepdims = 1, ax, len, sizes[MAX_ELEMS], chunk;
	size_t n = 0;
	int rc;

	if ((rc = infer_attr_int(c, "axis", &axis)) < 0 ||
	    (rc = infer_attr_int(c, "keepdims", &keepdims)) < 0)
		return rc;
	o->is_seq = 1;
	if (!x)
		return 0;
	o->dtype = x->dtype;
	if (x->rank < 0)
		return 0;
	if ((rc = infer_norm_axis(c, axis, x->rank, &ax)) < 0)
		return rc;
	o->rank = x->rank;
	memcpy(o->dims, x->dims, sizeof(x->dims));
	o->dims[ax] = infer_dim_unknown();
	len = x->dims[ax].kind == IR_VDIM_VALUE ? x->dims[ax].value : -1;
	if (!infer_has_in(c, 1)) {
		if (!keepdims) {
			memmove(o->dims + ax, o->dims + ax + 1,
				(size_t)(x->rank - 1 - ax) * sizeof(o->dims[0]));
			o->rank--;
		} else {
			o->dims[ax] = infer_dim_val(1);
		}
		if (len < 0 || len > MAX_ELEMS)
			return 0;
		for (n = 0; n < (size_t)len; n++)
			sizes[n] = 1;
	} else if (sp && sp->rank == 0 && infer_vt_const_int(sp, 0, &chunk)) {
		if (chunk <= 0)
			return infer_err(c, "split size %lld is not positive",
					 (long long)chunk);
		if (len < 0 || len / chunk >= MAX_ELEMS)
			return 0;
		/* count down: adding chunks may overflow near INT64_MAX */
		for (int64_t left = len; left > 0; left -= chunk)
			sizes[n++] = left < chunk ? left : chunk;
	} else if (!sp || !infer_vt_const_ints(sp, sizes, MAX_ELEMS, &n)) {
		return 0;
	}
	if (!(e = calloc(n + 1, sizeof(*e))))
		return IR_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		infer_vt_unknown(&e[i]);
		e[i].dtype = o->dtype;
		e[i].rank = o->rank;
		memcpy(e[i].dims, o->dims, sizeof(o->dims));
		if (infer_has_in(c, 1) || keepdims)
			e[i].dims[ax] = infer_dim_val(sizes[i]);
	}
	rc = infer_vt_set_elems(o, e, n);
	free(e);
	if (n)
		join_elems(o);
	return rc;
}
