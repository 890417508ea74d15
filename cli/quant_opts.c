/* quant_opts.c: the quantization options `opmig quantize` and `opmig
 * migrate --precision int8` share: parsing each into a struct qz_opts, and
 * the criterion's words for the text reports. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "rewriters/quantize.h"

int cli_parse_quant_opt(const struct cli_command *self, int c, const char *arg,
			struct qz_opts *o)
{
	char why[256], *end;
	long long v;
	int k;

	switch (c) {
	case CLI_OPT_CALIBRATE: o->calibrate = arg; break;
	case CLI_OPT_VALDATA: o->validation = arg; break;
	case CLI_OPT_DYNAMIC: o->format = QZ_DYNAMIC; break;
	case CLI_OPT_WEIGHT_ONLY:
		if (strcmp(arg, "int4") && strcmp(arg, "int8"))
			return cli_usage_error(self, "--weight-only is int4 or int8, not '%s'", arg);
		o->format = QZ_WEIGHT_ONLY;
		o->nbits = strcmp(arg, "int4") ? 8 : 4;
		break;
	case CLI_OPT_BLOCK_SIZE:
		if (cli_parse_count(arg, &v) < 0 || v < 16 || v > (1 << 20) || (v & (v - 1)))
			return cli_usage_error(self, "--block-size wants a power of 2 from 16, "
					       "not '%s'", arg);
		o->block_size = v;
		break;
	case CLI_OPT_ACC_LEVEL:
		if (cli_parse_count(arg, &v) < 0 || v > 4)
			return cli_usage_error(self, "--accuracy-level is 0 to 4, not '%s'", arg);
		o->accuracy_level = (int)v;
		break;
	case CLI_OPT_PER_CHANNEL: o->per_tensor = 0; break;
	case CLI_OPT_PER_TENSOR: o->per_tensor = 1; break;
	case CLI_OPT_SYMMETRIC: o->symmetric = 1; break;
	case CLI_OPT_EXCLUDE: o->exclude = arg; break;
	case CLI_OPT_EXCLUDE_OPS: o->exclude_ops = arg; break;
	case CLI_OPT_NO_FALLBACK: o->no_fallback = 1; break;
	case CLI_OPT_METHOD:
		if ((k = qz_method_parse(arg)) < 0)
			return cli_usage_error(self, "--method is minmax, percentile or entropy, "
					       "not '%s'", arg);
		o->method = (enum qz_method)k;
		break;
	case CLI_OPT_PERCENTILE:
		o->percentile = strtod(arg, &end);
		if (end == arg || *end || !(o->percentile > 0 && o->percentile <= 100))
			return cli_usage_error(self, "--percentile wants a number in (0, 100], "
					       "not '%s'", arg);
		break;
	case CLI_OPT_QFORMAT:
		if (strcmp(arg, "qdq") && strcmp(arg, "qoperator"))
			return cli_usage_error(self, "the quantized format is qdq or qoperator, "
					       "not '%s'", arg);
		if (o->format != QZ_DYNAMIC && o->format != QZ_WEIGHT_ONLY)
			o->format = strcmp(arg, "qdq") ? QZ_QOPERATOR : QZ_QDQ;
		break;
	case CLI_OPT_ACTS:
		if ((k = qz_act_dtype_parse(arg)) < 0)
			return cli_usage_error(self, "--activations is uint8, int8, uint16 or int16, "
					       "not '%s'", arg);
		o->act_dtype = k;
		break;
	case CLI_OPT_WEIGHTS:
		if ((k = qz_weight_dtype_parse(arg)) < 0)
			return cli_usage_error(self, "--weights is int8, uint8 or int4, not '%s'", arg);
		o->weight_dtype = k;
		break;
	case CLI_OPT_ACCURACY:
		if (qz_accuracy_parse(arg, &o->metric, &o->threshold, why, sizeof(why)) < 0)
			return cli_usage_error(self, "--accuracy: %s", why);
		o->have_accuracy = 1;
		break;
	case CLI_OPT_SENSITIVITY:
		if (strcmp(arg, "output") && strcmp(arg, "local"))
			return cli_usage_error(self, "--sensitivity is output or local, not '%s'", arg);
		o->sensitivity = strcmp(arg, "local") ? QZ_SENS_OUTPUT : QZ_SENS_LOCAL;
		break;
	case CLI_OPT_MAX_FALLBACK:
		if (cli_parse_count(arg, &v) < 0 || v > 1000000)
			return cli_usage_error(self, "--max-fallback wants a count, not '%s'", arg);
		/* 0: no node may go back, as --no-fallback */
		o->max_fallback = (int)v;
		o->no_fallback |= v == 0;
		break;
	default:
		return cli_usage_error(self, "unknown option");
	}
	return CLI_EXIT_OK;
}
