/* conv1d.c: pass "conv1d": 1-D Conv, MaxPool and AveragePool as their 2-D
 * form for targets without 1-D kernels: x [N, C, L] is unsqueezed to
 * [N, C, 1, L] (a Conv's weight to [M, C/g, 1, K]), the 2-D op runs with
 * kernel_shape, strides and dilations prefixed by 1 and pads [0, b, 0, e]
 * (auto_pad, group, ceil_mode, count_include_pad copied: a height of 1
 * with a kernel, stride and dilation of 1 pads nothing), and the result
 * is squeezed back.  Exact.  MaxPool's Indices output must be unused. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

static int is_conv(const struct ir_node *n)
{
	return !strcmp(ir_s(n->op_type), "Conv");
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	if (!rw_check_float_node(c, n, 1, why, size))
		return 0;
	if (rw_rank(c, n->inputs[0]) != 3) {
		snprintf(why, size, "the input is not known to be 3-D");
		return 0;
	}
	if (is_conv(n) && (n->n_inputs < 2 || !n->inputs[1] || rw_rank(c, n->inputs[1]) != 3)) {
		snprintf(why, size, "the weight is not known to be 3-D");
		return 0;
	}
	return 1;
}

static int copy_attrs(struct ir_node *to, const struct ir_node *from)
{
	for (size_t i = 0; i < from->n_attrs; i++) {
		const struct ir_attr *a = from->attrs[i];
		const char *name = ir_s(a->name);
		int64_t v[4];

		if (a->type == IR_ATTR_INTS && a->n_ints == 1 &&
		    (!strcmp(name, "kernel_shape") || !strcmp(name, "strides") ||
		     !strcmp(name, "dilations"))) {
			v[0] = 1;
			v[1] = a->ints[0];
			if (ir_node_set_ints(to, name, v, 2) < 0)
				return -1;
		} else if (a->type == IR_ATTR_INTS && a->n_ints == 2 && !strcmp(name, "pads")) {
			v[0] = 0;
			v[1] = a->ints[0];
			v[2] = 0;
			v[3] = a->ints[1];
			if (ir_node_set_ints(to, name, v, 4) < 0)
				return -1;
		} else if (ir_node_copy_attr(to, name, a) < 0) {
			return -1;
		}
	}
	return 0;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	static const int64_t two = 2;
	struct ir_value *in[3];
	struct rw_emit e;
	struct ir_node *op;
	size_t k = 1;

	(void)v;
	rw_begin(c, n, &e);
	in[0] = rw_unsqueeze(&e, n->inputs[0], &two, 1);
	if (is_conv(n)) {
		in[1] = rw_unsqueeze(&e, n->inputs[1], &two, 1);
		k = 2;
		if (n->n_inputs > 2 && n->inputs[2])
			in[k++] = n->inputs[2];
	}
	op = rw_node(&e, ir_s(n->op_type), NULL, in, k, NULL);
	if (op && copy_attrs(op, n) < 0)
		e.failed = 1;
	if (op) {
		struct ir_value *y = op->outputs[0], *sq[2] = { y, NULL };
		struct ir_node *s;

		if (c->opset >= 13) {
			sq[1] = rw_ints(&e, &two, 1);
			s = rw_node(&e, "Squeeze", NULL, sq, 2, n->outputs[0]);
		} else {
			s = rw_node(&e, "Squeeze", NULL, sq, 1, n->outputs[0]);
			if (s && ir_node_set_ints(s, "axes", &two, 1) < 0)
				e.failed = 1;
		}
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = { "AveragePool", "Conv", "MaxPool", NULL };
static const char *const conv_ops[] = { "Unsqueeze", "Conv", "Squeeze", NULL };
static const char *const max_ops[] = { "Unsqueeze", "MaxPool", "Squeeze", NULL };
static const char *const avg_ops[] = { "Unsqueeze", "AveragePool", "Squeeze", NULL };
static const struct rw_variant variants[] = {
	{ "conv2d", conv_ops }, { "maxpool2d", max_ops }, { "avgpool2d", avg_ops },
};

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	const char *op = ir_s(n->op_type);

	(void)c;
	return v == (!strcmp(op, "Conv") ? 0 : !strcmp(op, "MaxPool") ? 1 : 2);
}

RW_DECOMPOSITION(conv1d, "conv1d",
		 "1-D Conv, MaxPool and AveragePool as the 2-D op between Unsqueeze and Squeeze",
		 matches, variants, check, vcheck, apply);
