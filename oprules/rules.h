/* rules.h: the rules database of target chips (oprules/ JSON files).  Today it
 * only locates the data folder; loading and querying the rules come with
 * the scan command.
 *
 * Ownership: returned strings are written into caller buffers.
 */
#ifndef OPMIG_RULES_H
#define OPMIG_RULES_H

#include <stddef.h>

/* Find the folder holding the target rules: $OPMIG_DATADIR/oprules if set,
 * else <exe>/../share/opmig/oprules (installed), else <exe>/../oprules (the
 * source tree, bin/opmig).  Writes it into buf; 0 if found, -1 if not (buf
 * then holds the installed location that was expected). */
int rules_data_dir(char *buf, size_t size);

#endif
