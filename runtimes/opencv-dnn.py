#!/usr/bin/python3
"""opencv-dnn.py MODEL INPUTS OUTDIR: an opmig runtime adapter
(opmig-probe(1), `opmig migrate --verify-with`) for OpenCV's DNN module
through its Python binding (Debian's python3-opencv): read MODEL with
cv2.dnn.readNetFromONNX, bind INPUTS/input_K.npy to the names in
INPUTS/inputs.txt, run the outputs named in INPUTS/outputs.txt and write
them as OUTDIR/output_K.npy.  A model OpenCV refuses to read or run exits
1 with OpenCV's message on one line."""
import os
import sys


def names(path):
    with open(path) as f:
        return [line.rstrip('\n') for line in f if line.strip()]


def main():
    if len(sys.argv) != 4:
        print('usage: opencv-dnn.py MODEL INPUTS OUTDIR', file=sys.stderr)
        return 2
    model, inputs, outdir = sys.argv[1:]
    import numpy as np
    import cv2
    print('opmig-runtime: opencv-dnn', cv2.__version__, file=sys.stderr, flush=True)
    ins = names(os.path.join(inputs, 'inputs.txt'))
    outs = names(os.path.join(inputs, 'outputs.txt'))
    try:
        net = cv2.dnn.readNetFromONNX(model)
        for k, n in enumerate(ins):
            net.setInput(np.load(os.path.join(inputs, 'input_%d.npy' % k)), n)
        res = net.forward(outs)
    except cv2.error as e:
        print('opencv-dnn: ' + ' '.join(str(e).split()), file=sys.stderr)
        return 1
    os.makedirs(outdir, exist_ok=True)
    for k, r in enumerate(res):
        np.save(os.path.join(outdir, 'output_%d.npy' % k), r)
    return 0


if __name__ == '__main__':
    sys.exit(main())
