/* fault.h: fail the N-th allocation (malloc, calloc, realloc, strdup,
 * strndup) of the unit runner, for fault-injection tests (fault.c). */
#ifndef OPMIG_TEST_FAULT_H
#define OPMIG_TEST_FAULT_H

/* Arm: the n-th allocation from now returns NULL (0: off, keeping the
 * counts below). */
void fault_fail_at(long n);
/* Did the armed failure happen since fault_fail_at? */
int fault_fired(void);
/* Allocations seen since fault_fail_at(n > 0) while armed. */
long fault_calls(void);

#endif
