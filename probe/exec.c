/* exec.c: one runtime command in a worker of batch's pool: the shell run
 * with its output kept in files, and the verdict of its exit status with
 * the line of its output that says why (the last one that is not a
 * traceback frame or a version line), paths of the case made neutral so
 * that notes read the same on every machine. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/probe.h"

#define RUNTIME_TAG "opmig-runtime:"

int probe_exec_shell(const char *cmd, const char *out_file, const char *err_file)
{
	int in = open("/dev/null", O_RDONLY);
	int out = open(out_file, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	int err = open(err_file, O_WRONLY | O_CREAT | O_TRUNC, 0666);

	if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
	    dup2(err, 2) < 0)
		return 127;
	close(in);
	close(out);
	close(err);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	return 127;
}

/* The last 64 KiB of a file, NUL-terminated; NULL when unreadable. */
static char *tail_of(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	size_t got;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0) {
		fclose(f);
		return NULL;
	}
	if (n > 65536) {
		fseek(f, n - 65536, SEEK_SET);
		n = 65536;
	} else {
		fseek(f, 0, SEEK_SET);
	}
	if (!(buf = malloc((size_t)n + 1))) {
		fclose(f);
		return NULL;
	}
	got = fread(buf, 1, (size_t)n, f);
	buf[got] = 0;
	fclose(f);
	return buf;
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Lines that do not say why: blank, a version line, traceback frames. */
static int noise(const char *line, size_t n)
{
	const char *s = skip_space(line);
	size_t k = n - (size_t)(s - line);

	if (!k)
		return 1;
	if (!strncmp(s, RUNTIME_TAG, strlen(RUNTIME_TAG)))
		return 1;
	if (!strncmp(s, "Traceback (most recent call last)", 33))
		return 1;
	if (s != line)    /* indented: a frame or its source line */
		return 1;
	return 0;
}

static void runtime_line(const char *text, char **runtime)
{
	for (const char *p = text; p && *p && !*runtime;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *s = skip_space(p);

		if (!strncmp(s, RUNTIME_TAG, strlen(RUNTIME_TAG))) {
			const char *v = skip_space(s + strlen(RUNTIME_TAG));
			size_t k = n - (size_t)(v - p);

			while (k && (v[k - 1] == ' ' || v[k - 1] == '\r'))
				k--;
			*runtime = strndup(v, k > 200 ? 200 : k);
		}
		p = e ? e + 1 : NULL;
	}
}

/* The last line of text that says something, malloc'd; NULL none. */
static char *last_line(const char *text)
{
	const char *best = NULL;
	size_t best_n = 0;

	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		while (n && (p[n - 1] == '\r' || p[n - 1] == ' '))
			n--;
		if (!noise(p, n)) {
			best = p;
			best_n = n;
		}
		p = e ? e + 1 : NULL;
	}
	return best ? strndup(best, best_n) : NULL;
}

/* Replace every occurrence of what by with in *s (reallocating). */
static void replace_all(char **s, const char *what, const char *with)
{
	size_t wl = strlen(what), nl = strlen(with);
	char *p;

	if (!*s || !wl)
		return;
	while ((p = strstr(*s, what))) {
		size_t pre = (size_t)(p - *s), len = strlen(*s);
		char *n = malloc(len - wl + nl + 1);

		if (!n)
			return;
		memcpy(n, *s, pre);
		memcpy(n + pre, with, nl);
		memcpy(n + pre + nl, p + wl, len - pre - wl + 1);
		free(*s);
		*s = n;
	}
}

int probe_exec_classify(int status, int timed_out, double timeout,
			const char *err_file, const char *out_file,
			const char *model_path, struct probe_exec *e)
{
	char *err = tail_of(err_file), *out = tail_of(out_file), *msg = NULL;
	char buf[700];
	int sig = 0;

	memset(e, 0, sizeof(e[0]));
	runtime_line(err, &e->runtime);
	runtime_line(out, &e->runtime);
	msg = err ? last_line(err) : NULL;
	if (!msg && out)
		msg = last_line(out);
	if (msg && model_path) {
		char dir[4096];
		const char *slash = strrchr(model_path, '/');

		replace_all(&msg, model_path, "MODEL");
		if (slash) {
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - model_path), model_path);
			replace_all(&msg, dir, "CASE");
		}
	}
	if (msg && strlen(msg) > 400)
		msg[400] = 0;
	if (timed_out) {
		e->verdict = PROBE_TIMEOUT;
		snprintf(buf, sizeof(buf), "no answer within the timeout of %g s", timeout);
	} else if (WIFSIGNALED(status)) {
		sig = WTERMSIG(status);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) <= 128 + 64) {
		sig = WEXITSTATUS(status) - 128;   /* a shell reporting its child's signal */
	} else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		e->verdict = PROBE_REJECTED;
		e->status = WEXITSTATUS(status);
		if (msg)
			snprintf(buf, sizeof(buf), "%s", msg);
		else
			snprintf(buf, sizeof(buf), "exited with status %d", e->status);
	} else {
		e->verdict = PROBE_PENDING;
	}
	if (sig) {
		e->verdict = PROBE_CRASHED;
		e->status = sig;
		snprintf(buf, sizeof(buf), "killed by signal %d (%s)%s%s", sig, strsignal(sig),
			 msg ? ": " : "", msg ? msg : "");
	}
	if (e->verdict != PROBE_PENDING)
		e->message = strdup(buf);
	else if (msg)
		e->message = strdup(msg);
	free(msg);
	free(err);
	free(out);
	return 0;
}

void probe_exec_release(struct probe_exec *e)
{
	free(e->message);
	free(e->runtime);
	e->message = e->runtime = NULL;
}
