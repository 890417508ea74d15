/* jbuild.c: the all-or-nothing cJSON builders of jbuild.h, shared by every
 * JSON writer (rules dump, reports, the listing commands). */
#include <cjson/cJSON.h>

#include "oprules/jbuild.h"

void jb_need(const cJSON *added, int *ok)
{
	if (!added)
		*ok = 0;
}

/* cJSON leaves an item it failed to attach with the caller: delete it */
void jb_put(cJSON *arr, cJSON *x, int *ok)
{
	if (!x || !arr || !cJSON_AddItemToArray(arr, x)) {
		cJSON_Delete(x);
		*ok = 0;
	}
}

void jb_put_obj(cJSON *o, const char *name, cJSON *x, int *ok)
{
	if (!x || !o || !cJSON_AddItemToObject(o, name, x)) {
		cJSON_Delete(x);
		*ok = 0;
	}
}

char *jb_print(cJSON *root, int ok)
{
	char *text = ok && root ? cJSON_Print(root) : NULL;

	cJSON_Delete(root);
	return text;
}
