/* jbuild.h: building a cJSON document all or nothing.  cJSON's builders
 * return NULL or false when an allocation fails and go on; these fold
 * every such result into one flag, so a writer builds the whole document,
 * looks at the flag once and writes it whole or not at all (never a
 * report with fields silently missing).  Here because oprules/ is the
 * lowest layer that links cJSON.
 *
 * Ownership: jb_put() and jb_put_obj() take x: it ends in the container,
 * or is deleted when it cannot go there, so fill x before putting it
 * (after a failed put it is gone).  jb_print() takes the root.  A NULL
 * container or item is a failed allocation: *ok is cleared, nothing else
 * happens.  The flag starts at 1 and is only ever cleared.
 */
#ifndef OPMIG_JBUILD_H
#define OPMIG_JBUILD_H

struct cJSON;

/* added: what a builder returned (cJSON_Create*, cJSON_Add*ToObject) */
void jb_need(const struct cJSON *added, int *ok);
/* x into array arr */
void jb_put(struct cJSON *arr, struct cJSON *x, int *ok);
/* x into object o as name */
void jb_put_obj(struct cJSON *o, const char *name, struct cJSON *x, int *ok);
/* The pretty-printed text of root (malloc'ed, the caller frees) if ok,
 * else NULL, as when printing runs out of memory; root is deleted. */
char *jb_print(struct cJSON *root, int ok);

#endif
