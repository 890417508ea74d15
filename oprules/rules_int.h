/* rules_int.h: what the oprules/ files share and nobody else needs: the
 * JSON path buffer size and the release/sort helpers of the typed structs.
 */
#ifndef OPMIG_RULES_INT_H
#define OPMIG_RULES_INT_H

#include "oprules/rules.h"

#define RULES_PATH_MAX 256

void rules_strv_free(char **v, size_t n);
void rules_target_release(struct rules_target *t);
void rules_ops_sort(struct rules_op *ops, size_t n);

#endif
