#!/usr/bin/python3
"""opencv_hand.py [WORKDIR]: the hand checks behind oprules/opencv-dnn.json's
Gemm and Pow entries, where every probed case shared a seed OpenCV refuses
(a scalar Gemm bias, a non-scalar exponent): one-node models of each
version, run through runtimes/opencv-dnn.py and compared with numpy (rtol
1e-3, atol 1e-5).  Prints one line per model: equal, WRONG with the largest
error, or rejected with OpenCV's message.  Needs onnx, numpy and
python3-opencv; not part of `make test`."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTER = os.path.join(os.path.dirname(os.path.dirname(HERE)), 'runtimes', 'opencv-dnn.py')


def check(work, name, op, opset, x, inits, attrs, ref):
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, 'in'), exist_ok=True)
    node = helper.make_node(op, ['x'] + [n for n, _ in inits], ['y'], **attrs)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info('x', TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, ref.shape)],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(d, 'model.onnx'))
    np.save(os.path.join(d, 'in', 'input_0.npy'), x)
    with open(os.path.join(d, 'in', 'inputs.txt'), 'w') as f:
        f.write('x\n')
    with open(os.path.join(d, 'in', 'outputs.txt'), 'w') as f:
        f.write('y\n')
    r = subprocess.run([sys.executable, ADAPTER, os.path.join(d, 'model.onnx'), os.path.join(d, 'in'),
                        os.path.join(d, 'out')], capture_output=True, text=True, timeout=120)
    if r.returncode:
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith('opencv-dnn:')]
        print('%s: rejected: %s' % (name, (lines[-1] if lines else 'exit %d' % r.returncode)[-160:]))
        return
    y = np.load(os.path.join(d, 'out', 'output_0.npy')).reshape(ref.shape)
    err = float(np.max(np.abs(y - ref)))
    print('%s: %s' % (name, 'equal' if np.allclose(y, ref, rtol=1e-3, atol=1e-5)
                      else 'WRONG (max abs error %.3g)' % err))


def main():
    work = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    c = rng.uniform(-1, 1, (4,)).astype(np.float32)
    for v in (7, 9, 11, 13):
        check(work, 'gemm%d_transB_vector_bias' % v, 'Gemm', v, x, [('B', b), ('C', c)],
              {'transB': 1}, x @ b.T + c)
        check(work, 'gemm%d_vector_bias' % v, 'Gemm', v, x, [('B', b.T.copy()), ('C', c)], {},
              x @ b.T + c)
        if v >= 11:
            check(work, 'gemm%d_transB_no_bias' % v, 'Gemm', v, x, [('B', b)], {'transB': 1}, x @ b.T)
    xp = rng.uniform(0.1, 1, (1, 3, 4, 5)).astype(np.float32)
    for v in (7, 12, 13, 15):
        for e in (2.0, 0.5):
            check(work, 'pow%d_scalar_%g' % (v, e), 'Pow', v, xp, [('e', np.array(e, np.float32))], {},
                  xp ** e)
    return 0


if __name__ == '__main__':
    sys.exit(main())
