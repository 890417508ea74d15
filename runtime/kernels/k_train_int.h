/* k_train_int.h: what the training family's files share. */
#ifndef OPMIG_K_TRAIN_INT_H
#define OPMIG_K_TRAIN_INT_H

#include "runtime/rt_int.h"

/* Gradient: reverse-mode differentiation of the node's graph from xs to y
 * for the elementwise ops listed in k_train_grad.c. */
int rt_k_gradient(struct rt_kctx *k);

#endif
