/* avals.c: attribute values of probe cases: reading a node's value (or
 * the registry default), setting one, writing them as JSON and as file
 * names, and the values worth trying per attribute: every value of a
 * string enum (from the ONNX operator spec, per version), 0 and 1 for
 * flags, each axis of the data input, boundary integers, all-1 and all-2
 * lists for strides, dilations and kernels, the dtypes of `to`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_int.h"

void probe_aval_release(struct probe_aval *v)
{
	free(v->s);
	free(v->ints);
	memset(v, 0, sizeof(*v));
}

int probe_aval_copy(struct probe_aval *dst, const struct probe_aval *src)
{
	*dst = *src;
	dst->s = NULL;
	dst->ints = NULL;
	if (src->s && !(dst->s = strdup(src->s)))
		return -1;
	if (src->n) {
		if (!(dst->ints = malloc(src->n * sizeof(*dst->ints)))) {
			probe_aval_release(dst);
			return -1;
		}
		memcpy(dst->ints, src->ints, src->n * sizeof(*dst->ints));
	}
	return 0;
}

int probe_aval_equal(const struct probe_aval *a, const struct probe_aval *b)
{
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case IR_ATTR_INT: return a->i == b->i;
	case IR_ATTR_FLOAT: return a->f == b->f;
	case IR_ATTR_STRING: return !strcmp(a->s ? a->s : "", b->s ? b->s : "");
	case IR_ATTR_INTS:
		return a->n == b->n && (!a->n || !memcmp(a->ints, b->ints, a->n * sizeof(*a->ints)));
	default: return 1;
	}
}

static int parse_ints(const char *text, struct probe_aval *out)
{
	size_t k = *text ? 1 : 0;
	const char *p = text;

	for (const char *q = text; *q; q++)
		k += *q == ',';
	out->type = IR_ATTR_INTS;
	out->n = k;
	if (k && !(out->ints = malloc(k * sizeof(*out->ints))))
		return -1;
	for (size_t i = 0; i < k; i++) {
		char *end;

		out->ints[i] = strtoll(p, &end, 10);
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

int probe_aval_of(const struct ir_node *n, const struct ir_op_schema *s,
		  const char *name, struct probe_aval *out)
{
	const struct ir_attr *a = n ? ir_node_attr(n, name) : NULL;
	const struct ir_op_attr *sa = s ? ir_op_schema_attr(s, name) : NULL;

	memset(out, 0, sizeof(*out));
	if (a) {
		switch (a->type) {
		case IR_ATTR_INT: out->type = IR_ATTR_INT; out->i = a->i; return 0;
		case IR_ATTR_FLOAT: out->type = IR_ATTR_FLOAT; out->f = a->f; return 0;
		case IR_ATTR_STRING:
			out->type = IR_ATTR_STRING;
			return (out->s = strdup(a->s ? (const char *)a->s : "")) ? 0 : -1;
		case IR_ATTR_INTS:
			out->type = IR_ATTR_INTS;
			out->n = a->n_ints;
			if (a->n_ints && !(out->ints = malloc(a->n_ints * sizeof(*out->ints))))
				return -1;
			if (a->n_ints)
				memcpy(out->ints, a->ints, a->n_ints * sizeof(*out->ints));
			return 0;
		default:
			return 0;   /* not one probe varies */
		}
	}
	if (!sa || !sa->default_value)
		return 0;
	switch (sa->type) {
	case IR_ATTR_INT:
		out->type = IR_ATTR_INT;
		out->i = strtoll(sa->default_value, NULL, 10);
		return 0;
	case IR_ATTR_FLOAT:
		out->type = IR_ATTR_FLOAT;
		out->f = strtod(sa->default_value, NULL);
		return 0;
	case IR_ATTR_STRING:
		out->type = IR_ATTR_STRING;
		return (out->s = strdup(sa->default_value)) ? 0 : -1;
	case IR_ATTR_INTS:
		return parse_ints(sa->default_value, out);
	default:
		return 0;
	}
}

void probe_aval_json(const struct probe_aval *v, char *buf, size_t size)
{
	size_t len = 0;

	switch (v->type) {
	case IR_ATTR_INT: snprintf(buf, size, "%lld", (long long)v->i); return;
	case IR_ATTR_FLOAT: snprintf(buf, size, "%.9g", v->f); return;
	case IR_ATTR_STRING: snprintf(buf, size, "\"%s\"", v->s ? v->s : ""); return;
	case IR_ATTR_INTS:
		len = (size_t)snprintf(buf, size, "[");
		for (size_t i = 0; i < v->n && len + 24 < size; i++)
			len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
						(long long)v->ints[i]);
		if (len + 2 < size)
			snprintf(buf + len, size - len, "]");
		return;
	default:
		snprintf(buf, size, "null");
	}
}

void probe_aval_slug(const struct probe_aval *v, char *buf, size_t size)
{
	size_t len = 0;

	switch (v->type) {
	case IR_ATTR_INT: snprintf(buf, size, "%lld", (long long)v->i); return;
	case IR_ATTR_FLOAT: snprintf(buf, size, "%g", v->f); return;
	case IR_ATTR_STRING: snprintf(buf, size, "%s", *ir_s(v->s) ? v->s : "empty"); return;
	case IR_ATTR_INTS:
		buf[0] = 0;
		if (!v->n)
			snprintf(buf, size, "none");
		for (size_t i = 0; i < v->n && len + 24 < size; i++)
			len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "_" : "",
						(long long)v->ints[i]);
		return;
	default:
		snprintf(buf, size, "absent");
	}
}

int probe_aval_set(struct ir_node *n, const char *name, const struct probe_aval *v)
{
	switch (v->type) {
	case IR_ATTR_INT: return ir_node_set_int(n, name, v->i);
	case IR_ATTR_FLOAT: return ir_node_set_float(n, name, (float)v->f);
	case IR_ATTR_STRING: return ir_node_set_string(n, name, v->s ? v->s : "");
	case IR_ATTR_INTS: return ir_node_set_ints(n, name, v->ints, v->n);
	default:
		ir_node_remove_attr(n, name);
		return 0;
	}
}

/* ---- the values to try ------------------------------------------------ */

/* String enums of the ONNX operator spec: op ("*": any op with the
 * attribute), the versions they hold for, and the values. */
static const struct senum {
	const char *op, *attr;
	int vmin, vmax;
	const char *values;
} senums[] = {
	{ "*", "auto_pad", 1, 99, "NOTSET,SAME_UPPER,SAME_LOWER,VALID" },
	{ "BitShift", "direction", 1, 99, "LEFT,RIGHT" },
	{ "DepthToSpace", "mode", 11, 99, "DCR,CRD" },
	{ "GRU", "direction", 1, 99, "forward,reverse,bidirectional" },
	{ "Gelu", "approximate", 20, 99, "none,tanh" },
	{ "GridSample", "mode", 16, 19, "bilinear,nearest,bicubic" },
	{ "GridSample", "mode", 20, 99, "linear,nearest,cubic" },
	{ "GridSample", "padding_mode", 16, 99, "zeros,border,reflection" },
	{ "LSTM", "direction", 1, 99, "forward,reverse,bidirectional" },
	{ "Pad", "mode", 1, 18, "constant,reflect,edge" },
	{ "Pad", "mode", 19, 99, "constant,reflect,edge,wrap" },
	{ "RNN", "direction", 1, 99, "forward,reverse,bidirectional" },
	{ "Resize", "coordinate_transformation_mode", 11, 13,
	  "half_pixel,pytorch_half_pixel,align_corners,asymmetric,tf_half_pixel_for_nn,tf_crop_and_resize" },
	{ "Resize", "coordinate_transformation_mode", 18, 18,
	  "half_pixel,pytorch_half_pixel,align_corners,asymmetric,tf_crop_and_resize" },
	{ "Resize", "coordinate_transformation_mode", 19, 99,
	  "half_pixel,half_pixel_symmetric,pytorch_half_pixel,align_corners,asymmetric,tf_crop_and_resize" },
	{ "Resize", "keep_aspect_ratio_policy", 18, 99, "stretch,not_larger,not_smaller" },
	{ "Resize", "mode", 10, 10, "nearest,linear" },
	{ "Resize", "mode", 11, 99, "nearest,linear,cubic" },
	{ "Resize", "nearest_mode", 11, 99, "round_prefer_floor,round_prefer_ceil,floor,ceil" },
	{ "RoiAlign", "coordinate_transformation_mode", 16, 99, "half_pixel,output_half_pixel" },
	{ "RoiAlign", "mode", 10, 99, "avg,max" },
	{ "ScatterElements", "reduction", 16, 17, "none,add,mul" },
	{ "ScatterElements", "reduction", 18, 99, "none,add,mul,max,min" },
	{ "ScatterND", "reduction", 16, 17, "none,add,mul" },
	{ "ScatterND", "reduction", 18, 99, "none,add,mul,max,min" },
	{ "Upsample", "mode", 7, 99, "nearest,linear" },
};

/* List attributes probe varies, and the lists it tries: spatial ones
 * get all-1 and all-2 of the data input's spatial rank; pads 0 and 1. */
static int spatial_list(const char *name)
{
	return !strcmp(name, "strides") || !strcmp(name, "dilations") ||
	       !strcmp(name, "kernel_shape") || !strcmp(name, "pads");
}

struct cands {
	struct probe_aval *v;
	size_t n, cap;
	const struct probe_aval *cur;
};

/* Add v (taking its contents) unless it is the current value or there. */
static int push(struct cands *c, struct probe_aval *v)
{
	if (probe_aval_equal(v, c->cur)) {
		probe_aval_release(v);
		return 0;
	}
	for (size_t i = 0; i < c->n; i++)
		if (probe_aval_equal(v, &c->v[i])) {
			probe_aval_release(v);
			return 0;
		}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct probe_aval *p = realloc(c->v, cap * sizeof(*p));

		if (!p) {
			probe_aval_release(v);
			return -1;
		}
		c->v = p;
		c->cap = cap;
	}
	c->v[c->n++] = *v;
	return 0;
}

static int push_int(struct cands *c, int64_t i)
{
	struct probe_aval v = { .type = IR_ATTR_INT, .i = i };

	return push(c, &v);
}

static int push_list(struct cands *c, size_t n, int64_t x)
{
	struct probe_aval v = { .type = IR_ATTR_INTS, .n = n };

	if (!n || !(v.ints = malloc(n * sizeof(*v.ints))))
		return n ? -1 : 0;
	for (size_t i = 0; i < n; i++)
		v.ints[i] = x;
	return push(c, &v);
}

static int push_kernel(struct cands *c, const struct rt_value *w)
{
	struct probe_aval v = { .type = IR_ATTR_INTS, .n = (size_t)w->rank - 2 };

	if (!(v.ints = malloc(v.n * sizeof(*v.ints))))
		return -1;
	for (size_t i = 0; i < v.n; i++)
		v.ints[i] = w->dims[i + 2];
	return push(c, &v);
}

static int push_str(struct cands *c, const char *s, size_t len)
{
	struct probe_aval v = { .type = IR_ATTR_STRING };

	if (!(v.s = strndup(s, len)))
		return -1;
	return push(c, &v);
}

static int in0_rank(const struct probe_spec *sp)
{
	return sp->n_in && sp->in[0] && sp->in[0]->kind == RT_TENSOR ? sp->in[0]->rank : -1;
}

int probe_aval_candidates(const struct ir_op_schema *s, const struct ir_op_attr *a,
			  const struct probe_spec *sp, struct probe_aval **out,
			  size_t *n)
{
	struct probe_aval cur;
	struct cands c = { 0 };
	int r = in0_rank(sp), rc = 0;

	*out = NULL;
	*n = 0;
	if (probe_aval_of(sp->node, s, a->name, &cur) < 0)
		return -1;
	c.cur = &cur;
	switch (a->type) {
	case IR_ATTR_STRING:
		for (size_t i = 0; i < sizeof(senums) / sizeof(senums[0]) && rc == 0; i++) {
			const struct senum *e = &senums[i];

			if ((strcmp(e->op, "*") && strcmp(e->op, s->name)) || strcmp(e->attr, a->name) ||
			    s->since_version < e->vmin || s->since_version > e->vmax)
				continue;
			for (const char *p = e->values; *p && rc == 0;) {
				size_t k = strcspn(p, ",");

				rc = push_str(&c, p, k);
				p += k + (p[k] == ',');
			}
		}
		break;
	case IR_ATTR_INT:
		if (!strcmp(a->name, "training_mode")) {
			/* BatchNormalization's: it changes the outputs' number */
		} else if (!strcmp(a->name, "to") || !strcmp(a->name, "dtype")) {
			rules_dtypes m = probe_type_dtypes(s, probe_formal_type(s, 0, 0));

			for (int t = 1; t < IR_DTYPE_COUNT && rc == 0; t++)
				if ((probe_default_dtypes() & RULES_DTYPE_BIT(t)) &&
				    (!m || (m & RULES_DTYPE_BIT(t))))
					rc = push_int(&c, t);
		} else if (!strcmp(a->name, "axis")) {
			if (r > 0)
				rc = push_int(&c, -1);
			for (int k = 0; k < r && rc == 0; k++)
				rc = push_int(&c, k);
		} else if (!strcmp(a->name, "group")) {
			/* depthwise: one group per input channel (build.c
			 * reshapes the weights) */
			if (r >= 3 && sp->in[0]->dims[1] > 1)
				rc = push_int(&c, sp->in[0]->dims[1]);
		} else if (a->default_value && (!strcmp(a->default_value, "0") ||
						!strcmp(a->default_value, "1"))) {
			rc = push_int(&c, 0);
			if (rc == 0)
				rc = push_int(&c, 1);
		} else if (strcmp(a->name, "seed") && strcmp(a->name, "sample_size") &&
			   strcmp(a->name, "k") && strcmp(a->name, "hidden_size")) {
			static const int64_t ints[] = { 0, 1, 2, -1 };

			for (size_t i = 0; i < 4 && rc == 0; i++)
				rc = push_int(&c, ints[i]);
		}
		break;
	case IR_ATTR_FLOAT:
		if (strcmp(a->name, "seed")) {
			struct probe_aval v = { .type = IR_ATTR_FLOAT, .f = 0.5 };

			if (cur.type == IR_ATTR_FLOAT && cur.f == 0.5)
				v.f = 0.25;
			rc = push(&c, &v);
		}
		break;
	case IR_ATTR_INTS:
		if (spatial_list(a->name)) {
			size_t len = cur.type == IR_ATTR_INTS && cur.n ? cur.n :
				r > 2 ? (size_t)(r - 2) * (!strcmp(a->name, "pads") ? 2 : 1) : 0;

			if (!strcmp(a->name, "pads")) {
				rc = push_list(&c, len, 0);
				if (rc == 0)
					rc = push_list(&c, len, 1);
			} else {
				if (strcmp(a->name, "kernel_shape"))
					rc = push_list(&c, len, 1);
				if (rc == 0)
					rc = push_list(&c, len, 2);
				/* the kernel the weights have, given explicitly */
				if (rc == 0 && !strcmp(a->name, "kernel_shape") && sp->n_in > 1 &&
				    sp->in[1] && sp->in[1]->rank == r && r > 2)
					rc = push_kernel(&c, sp->in[1]);
			}
		} else if (!strcmp(a->name, "axes")) {
			/* the first, second and last axis (Squeeze, Reduce*, ...) */
			static const int64_t axes[] = { 0, 1, -1 };

			for (size_t i = 0; i < 3 && rc == 0; i++) {
				struct probe_aval v = { .type = IR_ATTR_INTS, .n = 1 };

				if (!(v.ints = malloc(sizeof(*v.ints)))) {
					rc = -1;
					break;
				}
				v.ints[0] = axes[i];
				rc = push(&c, &v);
			}
		} else if (!strcmp(a->name, "perm") && cur.type == IR_ATTR_INTS && cur.n > 1) {
			struct probe_aval v = { .type = IR_ATTR_INTS, .n = cur.n };

			if (!(v.ints = malloc(cur.n * sizeof(*v.ints)))) {
				rc = -1;
				break;
			}
			for (size_t i = 0; i < cur.n; i++)
				v.ints[i] = (int64_t)(cur.n - 1 - i);
			rc = push(&c, &v);
		}
		break;
	default:
		break;
	}
	/* an optional attribute the seed sets: also without it */
	if (rc == 0 && !a->required && ir_node_attr(sp->node, a->name) && !a->default_value &&
	    a->type != IR_ATTR_STRING) {
		struct probe_aval v = { .type = IR_ATTR_UNDEFINED };

		rc = push(&c, &v);
	}
	probe_aval_release(&cur);
	if (rc < 0) {
		for (size_t i = 0; i < c.n; i++)
			probe_aval_release(&c.v[i]);
		free(c.v);
		return -1;
	}
	*out = c.v;
	*n = c.n;
	return 0;
}
