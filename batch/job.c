/* job.c: one job (a model on a target) inside a worker process: the
 * content key (model bytes, external data, options, rules), the resume
 * check, loading (zip entries through an in-memory file), scanning and
 * migrating in process, and the outputs in OUTDIR/<model>/<target>/:
 * scan.json, model.onnx (+ model.onnx.data), report.json, and result.json
 * written last, atomically: the job's completion marker. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "batch/batch_int.h"
#include "ir/ir.h"
#include "oprules/rules.h"
#include "rewriters/migrate.h"
#include "scanner/report.h"
#include "scanner/scan.h"

static const char *const outputs[] = {
	"result.json", "scan.json", "report.json", "model.onnx", "model.onnx.data",
};

/* ---- result.json ------------------------------------------------------ */

int batch_result_write(const char *dir, const struct batch_row *r,
		       uint64_t key, int retry, const char *inputs_json,
		       struct ir_diag *d)
{
	char path[4200], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ok;

	if (!f)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	snprintf(path, sizeof(path), "%s/result.json", dir);
	fprintf(f, "{\n  \"schema\": \"opmig.batch-result/1\",\n  \"key\": \"%016" PRIx64 "\",\n"
		"  \"retry\": %s,\n  \"inputs\": %s,\n", key, retry ? "true" : "false",
		inputs_json ? inputs_json : "[]");
	batch_row_json(f, r, "  ");
	fputs("\n}\n", f);
	ok = !ferror(f);
	ok &= fclose(f) == 0;
	return batch_write_text(path, buf, len, ok, d);
}

int batch_result_read(const char *dir, struct batch_row *r, const uint64_t *key)
{
	char path[4200], want[32];
	FILE *f;
	char *text;
	long n;
	cJSON *root;
	const cJSON *k, *in, *x;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/result.json", dir);
	if (!(f = fopen(path, "rb")))
		return -1;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || n > (16 << 20) ||
	    fseek(f, 0, SEEK_SET) < 0 || !(text = malloc((size_t)n + 1))) {
		fclose(f);
		return -1;
	}
	n = (long)fread(text, 1, (size_t)n, f);
	fclose(f);
	root = cJSON_ParseWithLength(text, (size_t)n);
	free(text);
	if (!root)
		return -1;
	if (key) {
		snprintf(want, sizeof(want), "%016" PRIx64, *key);
		k = cJSON_GetObjectItemCaseSensitive(root, "key");
		if (!cJSON_IsString(k) || strcmp(k->valuestring, want) ||
		    !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(root, "retry")))
			goto cleanup;
		in = cJSON_GetObjectItemCaseSensitive(root, "inputs");
		cJSON_ArrayForEach(x, in) {
			const cJSON *p = cJSON_GetObjectItemCaseSensitive(x, "path");
			const cJSON *h = cJSON_GetObjectItemCaseSensitive(x, "hash");
			uint64_t v;

			if (!cJSON_IsString(p) || !cJSON_IsString(h) || batch_hash_file(p->valuestring, &v) < 0)
				goto cleanup;
			snprintf(want, sizeof(want), "%016" PRIx64, v);
			if (strcmp(want, h->valuestring))
				goto cleanup;
		}
	}
	rc = batch_row_from_json(root, r);
cleanup:
	cJSON_Delete(root);
	return rc;
}

/* ---- the job ---------------------------------------------------------- */

static int mkdirs(const char *path)
{
	char b[4200];

	snprintf(b, sizeof(b), "%s", path);
	for (char *p = b + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(b, 0777) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(b, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

/* The model's bytes: a file is mapped, a zip entry read into memory. */
struct bytes {
	uint8_t *p;
	size_t n;
	int mapped;
};

static int get_bytes(const struct batch_job *j, struct bytes *b, struct ir_diag *d)
{
	const struct batch_item *it = j->item;
	struct stat st;
	int fd;

	memset(b, 0, sizeof(*b));
	if (it->entry)
		return batch_zip_read(it->path, it->entry, j->lim, &b->p, &b->n, d);
	if ((fd = open(it->path, O_RDONLY | O_CLOEXEC)) < 0)
		return ir_diag_error(d, IR_EINVAL, "cannot open: %s", ir_strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return ir_diag_error(d, IR_EINVAL, "empty or not a regular file");
	}
	b->n = (size_t)st.st_size;
	b->p = mmap(NULL, b->n, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (b->p == MAP_FAILED) {
		b->p = NULL;
		return ir_diag_error(d, IR_EIO, "cannot map: %s", ir_strerror(errno));
	}
	b->mapped = 1;
	return 0;
}

static void bytes_release(struct bytes *b)
{
	if (b->mapped && b->p)
		munmap(b->p, b->n);
	else
		free(b->p);
}

/* Everything the outcome depends on besides the bytes. */
static uint64_t key_of(const struct batch_job *j, const struct bytes *b)
{
	const struct batch_mopts *o = &j->item->o;
	char buf[256];
	uint64_t h = batch_hash(BATCH_HASH_INIT, b->p, b->n);

	snprintf(buf, sizeof(buf), "opmig batch/1|%s%s|%s|%lld|%s|%s|", j->o->mode == BATCH_SCAN ?
		 "scan" : "migrate", j->o->no_validate ? "-no-validate" : "", j->target->id,
		 (long long)o->batch, o->layout ? o->layout : "", o->precision ? o->precision : "");
	h = batch_hash(h, buf, strlen(buf) + 1);
	if (o->verify_with && j->o->mode == BATCH_MIGRATE)
		h = batch_hash(h, o->verify_with, strlen(o->verify_with) + 1);
	for (size_t i = 0; i < o->n_dims; i++)
		h = batch_hash(h, o->dims[i], strlen(o->dims[i]) + 1);
	h = batch_hash(h, j->item->source, strlen(j->item->source) + 1);
	return batch_hash(h, &j->rules_hash, sizeof(j->rules_hash));
}

/* A load path for the bytes: the file itself, or an in-memory file. */
static int load_path(const struct batch_job *j, const struct bytes *b, int *fd,
		     char *path, size_t n, struct ir_diag *d)
{
	size_t off = 0;

	*fd = -1;
	if (!j->item->entry) {
		snprintf(path, n, "%s", j->item->path);
		return 0;
	}
	if ((*fd = memfd_create("opmig-batch", MFD_CLOEXEC)) < 0)
		return ir_diag_error(d, IR_EIO, "memfd_create: %s", ir_strerror(errno));
	while (off < b->n) {
		ssize_t w = write(*fd, b->p + off, b->n - off);

		if (w <= 0)
			return ir_diag_error(d, IR_ENOMEM, "cannot hold the entry in memory: %s",
					     ir_strerror(errno));
		off += (size_t)w;
	}
	snprintf(path, n, "/proc/self/fd/%d", *fd);
	return 0;
}

struct ext_list {
	const char *dir;
	FILE *f;
	size_t n;
	char seen[64][512];
};

static int note_external(struct ir_tensor *t, void *ctx)
{
	struct ext_list *e = ctx;
	char path[4200];
	uint64_t h;

	if (t->storage != IR_STORE_EXTERNAL)
		return 0;
	for (size_t i = 0; i < t->n_external; i++) {
		const char *loc = t->external[i].value;

		if (strcmp(t->external[i].key, "location") || !loc)
			continue;
		for (size_t k = 0; k < e->n && k < 64; k++)
			if (!strcmp(e->seen[k], loc))
				return 0;
		snprintf(path, sizeof(path), "%s/%s", e->dir, loc);
		if (batch_hash_file(path, &h) < 0)
			return 0;
		if (e->n < 64)
			snprintf(e->seen[e->n], sizeof(e->seen[0]), "%s", loc);
		fputs(e->n ? ", {\"path\": " : "[{\"path\": ", e->f);
		batch_json_str(e->f, path);
		fprintf(e->f, ", \"hash\": \"%016" PRIx64 "\"}", h);
		e->n++;
	}
	return 0;
}

static double pct(size_t a, size_t n)
{
	return n ? floor(1000.0 * (double)a / (double)n + 0.5) / 10.0 : 100.0;
}

static int write_stream_file(const char *dir, const char *name, char *buf,
			     size_t len, int ok, struct ir_diag *d)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return batch_write_text(path, buf, len, ok, d);
}

/* Scan the model once for the targets of js[0..n): one scan.json and one
 * row per job (a result with one target is a view into the whole). */
static int do_scan(const struct batch_job *const *js, size_t n, const char *path,
		   struct batch_row *const *rows, char **ext_json, struct ir_diag *d)
{
	const struct batch_item *it = js[0]->item;
	const struct rules_target **targets = calloc(n, sizeof(*targets));
	struct ir_model *m = NULL;
	struct rw_ctx rw;
	struct scan_result res;
	struct scan_options so;
	int have_rw = 0, rc;

	memset(&res, 0, sizeof(res));
	if (!targets)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		targets[i] = js[i]->target;
	if ((rc = ir_model_load(path, NULL, &m, d)) < 0)
		goto cleanup;
	if (!it->entry && ext_json && !*ext_json) {
		struct ext_list e = { .dir = m->dir, .n = 0 };
		size_t len;

		if ((e.f = open_memstream(ext_json, &len))) {
			ir_model_for_each_tensor(m, note_external, &e);
			fputs(e.n ? "]" : "[]", e.f);
			fclose(e.f);
		}
	}
	if ((rc = rw_ctx_init(&rw, m, NULL, d)) < 0)
		goto cleanup;
	have_rw = 1;
	so.can_rewrite = rw_scan_hook;
	so.ctx = &rw;
	so.fp16 = 0;
	if ((rc = scan_model(m, it->source, targets, n, &so, &res, d)) < 0)
		goto cleanup;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct scan_result one = res;
		const struct scan_counts *c = &res.targets[i].counts;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int ok;

		if (!f) {
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			break;
		}
		one.n_targets = 1;
		one.targets = &res.targets[i];
		ok = scan_report_write(&one, scan_format_find("json"), f) == 0;
		ok &= fclose(f) == 0;
		if ((rc = write_stream_file(js[i]->dir, "scan.json", buf, len, ok, d)) < 0)
			break;
		if (!rows[i])
			continue;
		rows[i]->status = BATCH_OK_SCANNED;
		rows[i]->nodes = (long)c->nodes;
		rows[i]->native_pct = pct(c->supported, c->nodes);
		rows[i]->after_pct = pct(c->supported + c->rewritable, c->nodes);
		rows[i]->blockers = (long)c->blocked;
	}
cleanup:
	scan_result_release(&res);
	if (have_rw)
		rw_ctx_release(&rw);
	ir_model_free(m);
	free(targets);
	return rc;
}

/* report.json: the migrate report, opmig.migrate/1 as opmig migrate
 * writes it. */
static int write_report(const struct batch_job *j, const struct mg_report *r,
			int written, struct ir_diag *d)
{
	char *buf = mg_report_json(r, j->item->source, written ? "model.onnx" : NULL, 0,
				   written);

	if (!buf)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	return write_stream_file(j->dir, "report.json", buf, strlen(buf), 1, d);
}

static int do_migrate(const struct batch_job *j, const char *path,
		      struct batch_row *row, struct ir_diag *d)
{
	const struct batch_mopts *io = &j->item->o;
	struct ir_model *m = NULL, *orig = NULL;
	struct mg_report r;
	struct mg_opts o;
	struct rt_dim_set *dims = NULL;
	int rc, written = 0;

	memset(&r, 0, sizeof(r));
	memset(&o, 0, sizeof(o));
	o.target = j->target;
	o.layout = io->layout;
	o.precision = io->precision;
	o.batch = io->batch;
	o.validate = !j->o->no_validate;
	o.samples = 1;
	o.threads = 1;
	if (io->n_dims && !(dims = calloc(io->n_dims, sizeof(*dims)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < io->n_dims; i++)
		if (rt_dim_set_parse(io->dims[i], &dims[i]) < 0) {
			rc = ir_diag_error(d, IR_EINVAL, "bad dim '%s'", io->dims[i]);
			goto cleanup;
		}
	o.dims = dims;
	o.n_dims = io->n_dims;
	if ((rc = ir_model_load(path, NULL, &m, d)) < 0 ||
	    (o.validate && (rc = ir_model_load(path, NULL, &orig, d)) < 0))
		goto cleanup;
	if ((rc = mg_run(m, orig, j->item->source, &o, &r, d)) < 0)
		goto cleanup;
	if (io->verify_with && r.ok) {
		if (!j->o->verify) {
			rc = ir_diag_error(d, IR_EUSAGE, "verify_with: no runtime check in this build");
			goto cleanup;
		}
		if ((rc = j->o->verify(m, io->verify_with, &r, d)) < 0)
			goto cleanup;
	}
	row->status = r.ok ? BATCH_OK_MIGRATED : BATCH_NOT_MIGRATED;
	row->nodes = (long)r.before.nodes;
	row->native_pct = pct(r.before.supported, r.before.nodes);
	row->after_pct = pct(r.after.supported, r.after.nodes);
	row->blockers = (long)r.n_blockers;
	if (r.validated) {
		row->max_error = 0;
		for (size_t i = 0; i < r.val.n_outputs; i++)
			if (isfinite(r.val.outputs[i].m.max_abs) && r.val.outputs[i].m.max_abs > row->max_error)
				row->max_error = r.val.outputs[i].m.max_abs;
	}
	if (!r.ok) {
		free(row->message);
		row->message = batch_strdup(r.why);
	} else {
		struct ir_save_opts so = { NULL, 1024 };
		char out[4200];

		if (ir_model_needs_external(m))
			so.external_data = "model.onnx.data";
		snprintf(out, sizeof(out), "%s/model.onnx", j->dir);
		if ((rc = ir_model_save(m, out, &so, d)) < 0)
			goto cleanup;
		written = 1;
	}
	rc = write_report(j, &r, written, d);
cleanup:
	mg_report_release(&r);
	ir_model_free(m);
	ir_model_free(orig);
	free(dims);
	return rc;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Test hooks (documented in opmig-batch(1), ENVIRONMENT): a worker whose
 * model name contains $OPMIG_BATCH_TEST_CRASH aborts; one whose name
 * contains $OPMIG_BATCH_TEST_HANG sleeps for an hour. */
static void test_hooks(const struct batch_item *it)
{
	const char *c = getenv("OPMIG_BATCH_TEST_CRASH");
	const char *h = getenv("OPMIG_BATCH_TEST_HANG");

	if (c && *c && strstr(it->name, c))
		abort();
	if (h && *h && strstr(it->name, h))
		sleep(3600);
}

static int row_init(struct batch_row *r, const struct batch_job *j)
{
	memset(r, 0, sizeof(*r));
	r->nodes = r->blockers = -1;
	r->native_pct = r->after_pct = r->max_error = r->seconds = -1;
	if (!(r->model = batch_strdup(j->item->name)) || !(r->target = batch_strdup(j->target->id)) ||
	    !(r->source = batch_strdup(j->item->source)) || !(r->message = batch_strdup(""))) {
		batch_row_release(r);
		return -1;
	}
	return 0;
}

static void row_fail(struct batch_row *r, const struct batch_job *j, int rc,
		     const struct ir_diag *d)
{
	/* under --max-memory, a failed map or allocation is the limit */
	r->status = rc == IR_ENOMEM || (j->o->max_memory && strstr(d->msg, "cannot allocate memory")) ?
		BATCH_OUT_OF_MEMORY : BATCH_ERROR;
	free(r->message);
	r->message = batch_strdup(d->msg);
}

int batch_group_run(const struct batch_job *js, size_t n)
{
	const struct batch_job *j0 = &js[0];
	struct batch_row *rows = calloc(n, sizeof(*rows));
	const struct batch_job **todo = calloc(n, sizeof(*todo));
	struct batch_row **trows = calloc(n, sizeof(*trows));
	uint64_t *keys = calloc(n, sizeof(*keys));
	struct bytes b = { 0 };
	struct ir_diag d;
	char path[4200], *ext_json = NULL;
	double t0 = now();
	size_t n_todo = 0, n_rows = 0;
	int fd = -1, rc, out = -1;

	if (!rows || !todo || !trows || !keys)
		goto cleanup;
	ir_diag_init(&d);
	rc = get_bytes(j0, &b, &d);
	for (size_t i = 0; i < n; i++) {
		struct batch_row old;

		if (rc == 0)
			keys[i] = key_of(&js[i], &b);
		if (rc == 0 && js[i].o->resume && batch_result_read(js[i].dir, &old, &keys[i]) == 0) {
			batch_row_release(&old);
			continue;
		}
		if (row_init(&rows[n_todo], &js[i]) < 0 || mkdirs(js[i].dir) < 0)
			goto cleanup;
		n_rows = n_todo + 1;
		keys[n_todo] = keys[i];
		trows[n_todo] = &rows[n_todo];
		todo[n_todo++] = &js[i];
		for (size_t k = 0; k < sizeof(outputs) / sizeof(outputs[0]); k++) {
			char p[4300];

			snprintf(p, sizeof(p), "%s/%s", js[i].dir, outputs[k]);
			unlink(p);
		}
	}
	if (!n_todo) {
		out = 1;
		goto cleanup;
	}
	test_hooks(j0->item);
	if (rc == 0)
		rc = load_path(j0, &b, &fd, path, sizeof(path), &d);
	if (rc < 0) {
		for (size_t i = 0; i < n_todo; i++)
			row_fail(&rows[i], todo[i], rc, &d);
	} else if (j0->o->mode == BATCH_SCAN) {
		if ((rc = do_scan(todo, n_todo, path, trows, &ext_json, &d)) < 0)
			for (size_t i = 0; i < n_todo; i++)
				row_fail(&rows[i], todo[i], rc, &d);
	} else {
		for (size_t i = 0; i < n_todo; i++) {
			struct batch_row *none = NULL;
			double t1 = now();

			ir_diag_init(&d);
			if ((rc = do_migrate(todo[i], path, &rows[i], &d)) == 0)
				rc = do_scan(&todo[i], 1, path, &none, &ext_json, &d);
			if (rc < 0)
				row_fail(&rows[i], todo[i], rc, &d);
			if (j0->o->times)
				rows[i].seconds = now() - t1;
		}
	}
	if (fd >= 0)
		close(fd);
	fd = -1;
	out = 0;
	for (size_t i = 0; i < n_todo; i++) {
		/* scan mode: the worker's time, shared by the model's targets */
		if (j0->o->times && j0->o->mode == BATCH_SCAN)
			rows[i].seconds = (now() - t0) / (double)n_todo;
		ir_diag_init(&d);
		if (!rows[i].message ||
		    batch_result_write(todo[i]->dir, &rows[i], keys[i],
				       rows[i].status == BATCH_OUT_OF_MEMORY || !keys[i],
				       ext_json, &d) < 0)
			out = -1;
	}
cleanup:
	if (fd >= 0)
		close(fd);
	bytes_release(&b);
	free(ext_json);
	for (size_t i = 0; rows && i < n_rows; i++)
		batch_row_release(&rows[i]);
	free(rows);
	free(todo);
	free(trows);
	free(keys);
	return out;
}
