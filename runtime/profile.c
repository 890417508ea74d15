/* profile.c: the per-node trace of a session's runs (rt_opts.profile) in
 * the Chrome trace-event format onnxruntime's profiler writes: one
 * complete event ("ph": "X", times in microseconds from the session's
 * first run) per node run, named NODE_kernel_time, category "Node", with
 * the op, the input shapes and dtypes, the provider and the graph depth in
 * args; one "model_run" event (category "Session") per run.  Nodes run on
 * the session's thread (tid 0); a kernel's own threads are inside its
 * event.  Also the per-node totals behind `--stats`' top nodes. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/exec_int.h"

struct rt_prof_event {
	const struct ir_node *node;   /* NULL: a whole run */
	double start, dur;            /* seconds since the first run */
	int depth;
	cJSON *inputs;                /* input dtypes and shapes */
};

struct rt_profile {
	double t0;
	size_t n, cap;
	struct rt_prof_event *ev;
};

double rt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* [{"float": [1, 3, 224, 224]}, ...] as onnxruntime writes it; an absent
 * input or one not a tensor is {} */
void *rt_profile_shapes(struct rt_value *const *ins, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++) {
		const struct rt_value *v = ins[i];
		cJSON *o = cJSON_CreateObject(), *d = NULL;

		if (o && v && v->kind == RT_TENSOR && (d = cJSON_CreateArray())) {
			for (int r = 0; r < v->rank; r++)
				cJSON_AddItemToArray(d, cJSON_CreateNumber((double)v->dims[r]));
			cJSON_AddItemToObject(o, ir_dtype_name(v->dtype), d);
		}
		if (!o) {
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

void rt_profile_begin(struct rt_session *s, double t0)
{
	if (!s->prof && (s->prof = calloc(1, sizeof(*s->prof))))
		s->prof->t0 = t0;
}

static struct rt_prof_event *next_event(struct rt_session *s, double t0)
{
	struct rt_profile *p;

	rt_profile_begin(s, t0);
	if (!(p = s->prof))
		return NULL;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		struct rt_prof_event *ev = realloc(p->ev, cap * sizeof(*ev));

		if (!ev)
			return NULL;   /* the trace misses this event: it says so */
		p->ev = ev;
		p->cap = cap;
	}
	return &p->ev[p->n++];
}

void rt_profile_node(struct rt_session *s, const struct ir_node *n, int depth,
		     void *shapes, double t0, double t1)
{
	struct rt_prof_event *e = next_event(s, t0);

	if (!e) {
		cJSON_Delete(shapes);
		return;
	}
	*e = (struct rt_prof_event){ n, t0 - s->prof->t0, t1 - t0, depth, shapes };
}

void rt_profile_run(struct rt_session *s, double t0, double t1)
{
	struct rt_prof_event *e = next_event(s, t0);

	if (e)
		*e = (struct rt_prof_event){ NULL, t0 - s->prof->t0, t1 - t0, 0, NULL };
}

void rt_profile_free(struct rt_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		cJSON_Delete(p->ev[i].inputs);
	free(p->ev);
	free(p);
}

static cJSON *event_json(const struct rt_prof_event *e)
{
	cJSON *o = cJSON_CreateObject(), *args = cJSON_CreateObject();
	char name[512];

	if (!o || !args) {
		cJSON_Delete(o);
		cJSON_Delete(args);
		return NULL;
	}
	if (e->node) {
		if (e->node->name && *e->node->name)
			snprintf(name, sizeof(name), "%.400s_kernel_time", e->node->name);
		else
			snprintf(name, sizeof(name), "%.64s#%zu_kernel_time",
				 ir_s(e->node->op_type), e->node->index);
	}
	cJSON_AddStringToObject(o, "cat", e->node ? "Node" : "Session");
	cJSON_AddNumberToObject(o, "pid", 0);
	cJSON_AddNumberToObject(o, "tid", 0);
	cJSON_AddNumberToObject(o, "dur", (double)(long long)(e->dur * 1e6 + 0.5));
	cJSON_AddNumberToObject(o, "ts", (double)(long long)(e->start * 1e6 + 0.5));
	cJSON_AddStringToObject(o, "ph", "X");
	cJSON_AddStringToObject(o, "name", e->node ? name : "model_run");
	if (e->node) {
		const char *dom = e->node->domain && *e->node->domain ? e->node->domain : "ai.onnx";

		cJSON_AddStringToObject(args, "op_name", ir_s(e->node->op_type));
		cJSON_AddStringToObject(args, "domain", dom);
		cJSON_AddItemToObject(args, "input_type_shape", e->inputs ?
				      cJSON_Duplicate(e->inputs, 1) : cJSON_CreateArray());
		cJSON_AddStringToObject(args, "provider", "opmig");
		cJSON_AddNumberToObject(args, "graph_depth", e->depth);
	}
	cJSON_AddItemToObject(o, "args", args);
	return o;
}

char *rt_profile_json(struct rt_session *s)
{
	cJSON *a = cJSON_CreateArray();
	char *text;

	if (!a)
		return NULL;
	for (size_t i = 0; s->prof && i < s->prof->n; i++) {
		cJSON *o = event_json(&s->prof->ev[i]);

		if (!o) {
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, o);
	}
	text = cJSON_PrintUnformatted(a);
	cJSON_Delete(a);
	return text;
}
