/* names.c: the names of probe's case kinds and verdicts (as the JSON
 * report and result.json write them), and a case's one-line description. */
#include <stdio.h>
#include <string.h>

#include "probe/probe_int.h"

static const char *const kinds[PROBE_N_KINDS] = {
	"base", "backend", "attr", "rank", "graph_input", "const_input", "opset", "dynamic",
	"backend_const",
};

static const char *const verdicts[PROBE_N_VERDICTS] = {
	"pending", "invalid", "equal", "accepted", "wrong", "rejected", "crashed", "timeout",
};

const char *probe_kind_name(enum probe_kind k)
{
	return (unsigned)k < PROBE_N_KINDS ? kinds[k] : "?";
}

const char *probe_verdict_name(enum probe_verdict v)
{
	return (unsigned)v < PROBE_N_VERDICTS ? verdicts[v] : "?";
}

int probe_verdict_parse(const char *s)
{
	for (int i = 0; i < PROBE_N_VERDICTS; i++)
		if (!strcmp(s, verdicts[i]))
			return i;
	return -1;
}

int probe_verdict_ok(enum probe_verdict v)
{
	return v == PROBE_EQUAL || v == PROBE_ACCEPTED;
}

void probe_case_what(const struct probe_case *c, char *buf, size_t size)
{
	char v[256];

	switch (c->kind) {
	case PROBE_BASE:
		snprintf(buf, size, "%s", c->dtype ? rules_dtype_name(c->dtype) : "as seeded");
		break;
	case PROBE_BACKEND:
		snprintf(buf, size, "backend case %s", c->backend ? c->backend : "?");
		break;
	case PROBE_BACKEND_CONST:
		snprintf(buf, size, "backend case %s, inputs after 0 constant",
			 c->backend ? c->backend : "?");
		break;
	case PROBE_ATTR:
		probe_aval_json(&c->value, v, sizeof(v));
		snprintf(buf, size, "%s=%s", c->attr, v);
		break;
	case PROBE_RANK:
		snprintf(buf, size, "rank %d", c->rank);
		break;
	case PROBE_GRAPH:
		snprintf(buf, size, "input %d a graph input", c->input);
		break;
	case PROBE_CONST:
		snprintf(buf, size, "input %d constant", c->input);
		break;
	case PROBE_OPSET:
		snprintf(buf, size, "opset %d", c->opset);
		break;
	default:
		snprintf(buf, size, "symbolic batch dim");
		break;
	}
}
