/* k_rnn_dnnl.h: a recurrent node's problem as k_rnn.c hands it to
 * oneDNN's RNN primitives (k_rnn_dnnl.c).  Private to runtime/kernels/. */
#ifndef OPMIG_K_RNN_DNNL_H
#define OPMIG_K_RNN_DNNL_H

#include <stdint.h>

#include "runtime/rt_int.h"

enum { KNN_RNN_GRU = 1, KNN_RNN_LSTM = 2 };

/* ONNX's tensors, float32, time first: x [seq, batch, in]; w [ndir,
 * G * hid, in], r [ndir, G * hid, hid], b [ndir, 2 * G * hid] or NULL
 * (G: 4 LSTM, 3 GRU), inputs 1, 2 and 3 of the node; h0, c0 [ndir,
 * batch, hid] or NULL; y [seq, ndir, batch, hid], yh and yc (LSTM)
 * [ndir, batch, hid] written. */
struct knn_rnn {
	int cell, lbr, reverse;
	int64_t seq, batch, in, hid, ndir;
	const float *x, *w, *r, *b, *h0, *c0;
	float *y, *yh, *yc;
};

/* The cell (default activations, no clip, no input_forget, no
 * peepholes, full-length sequences: the caller checks) on oneDNN: 1
 * done, 0 not taken (the caller runs its own), or an error. */
int knn_rnn_dnnl(struct rt_kctx *k, const struct knn_rnn *g);

#endif
