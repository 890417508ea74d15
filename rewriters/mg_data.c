/* mg_data.c: the validation inputs migrate can take from files: --data
 * DIR (a folder of test_data_set_N/ input sets in the ONNX backend layout,
 * or one set of input_N.pb itself), or, without it, the input sets next to
 * the model (ONNX's model zoo ships models that way).  The first set's
 * shapes also size the dims a static-shape target needs (instead of 1), so
 * the migrated model runs on the data it is validated with. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rewriters/migrate.h"
#include "rewriters/rw_int.h"

#define MAX_SETS 64

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void mg_data_release(struct mg_data *md)
{
	for (size_t i = 0; i < md->n_dirs; i++)
		free(md->dirs[i]);
	free(md->dirs);
	free(md->hints);
	memset(md, 0, sizeof(*md));
}

/* The test_data_set_* folders of dir, sorted; 0 when none. */
static int sets_in(const char *dir, struct mg_data *md, struct ir_diag *d)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char path[4200];

	if (!dp)
		return 0;
	while ((e = readdir(dp)) && md->n_dirs < MAX_SETS) {
		if (strncmp(e->d_name, "test_data_set_", 14))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!is_dir(path))
			continue;
		if (!(md->dirs[md->n_dirs] = strdup(path))) {
			closedir(dp);
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
		md->n_dirs++;
	}
	closedir(dp);
	qsort(md->dirs, md->n_dirs, sizeof(*md->dirs), cmp_str);
	return 0;
}

/* The dims of the first set's input_K.pb, per graph input without an
 * initializer (K counts those). */
static int read_hints(const struct ir_model *m, struct mg_data *md, struct ir_diag *d)
{
	const struct ir_graph *g = m->graph;
	size_t k = 0;

	if (!(md->hints = calloc(g->n_inputs + 1, sizeof(*md->hints))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < g->n_inputs; i++) {
		struct rw_dim_hint *h = &md->hints[md->n_hints];
		struct ir_tensor *t = NULL;
		struct ir_diag sub;
		char path[4200];

		if (g->inputs[i].value->init)
			continue;
		snprintf(path, sizeof(path), "%s/input_%zu.pb", md->dirs[0], k++);
		ir_diag_init(&sub);
		if (ir_tensor_read(path, &t, &sub) < 0)
			continue;           /* absent or not a tensor: no hint */
		h->name = ir_s(g->inputs[i].value->name);
		h->rank = t->n_dims <= 16 ? (int)t->n_dims : -1;
		for (int r = 0; r < h->rank; r++)
			h->dims[r] = t->dims[r];
		ir_tensor_free(t);
		md->n_hints++;
	}
	return 0;
}

int mg_data_find(const struct ir_model *m, const char *model_path, const char *data,
		 struct mg_data *md, struct ir_diag *d)
{
	char dir[4200];
	const char *slash;
	int rc;

	memset(md, 0, sizeof(*md));
	if (!(md->dirs = calloc(MAX_SETS + 1, sizeof(*md->dirs))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	if (data) {
		if (!is_dir(data))
			return ir_diag_error(d, IR_EUSAGE, "--data %s: not a folder", data);
		if ((rc = sets_in(data, md, d)) < 0)
			return rc;
		if (!md->n_dirs && !(md->dirs[md->n_dirs++] = strdup(data)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		md->given = 1;
	} else if (model_path) {
		slash = strrchr(model_path, '/');
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - model_path) : 1,
			 slash ? model_path : ".");
		if ((rc = sets_in(dir, md, d)) < 0)
			return rc;
	}
	return md->n_dirs ? read_hints(m, md, d) : 0;
}
