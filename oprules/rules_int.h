/* rules_int.h: what the oprules/ files share and nobody else needs: the
 * JSON path buffer size and the release/sort helpers of the typed structs.
 */
#ifndef OPMIG_RULES_INT_H
#define OPMIG_RULES_INT_H

#include "oprules/rules.h"

#define RULES_PATH_MAX 256

void rules_strv_free(char **v, size_t n);

#endif
