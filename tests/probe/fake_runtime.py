#!/usr/bin/python3
"""fake_runtime.py MODEL INPUTS OUTDIR: a runtime with known gaps, for the
tests of `opmig probe` (tests/cli/t1500-probe.sh).  It reads the model
with python-onnx, computes its outputs with `$OPMIG run` (the reference
interpreter) and
  - refuses models of opset below 13,
  - refuses Abs ("fake: Abs is not supported"),
  - refuses Softmax with axis 0,
  - returns wrong numbers (output + 1) for float16 Relu,
  - crashes (SIGSEGV) on any input of rank 5,
  - hangs on Neg,
and appends the case folder to $FAKE_LOG when set (to count its runs)."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    model, inputs, outdir = sys.argv[1:4]
    if os.environ.get('FAKE_LOG'):
        with open(os.environ['FAKE_LOG'], 'a') as f:
            f.write(os.path.dirname(model) + '\n')
    print('opmig-runtime: fake 1.0', file=sys.stderr)
    m = onnx.load(model)
    opset = [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')][0]
    if opset < 13:
        print('fake: opset %d is too old' % opset, file=sys.stderr)
        return 1
    node = m.graph.node[0]
    ranks = [len(i.type.tensor_type.shape.dim) for i in m.graph.input]
    ranks += [len(t.dims) for t in m.graph.initializer]
    if 5 in ranks:
        os.kill(os.getpid(), signal.SIGSEGV)
    if node.op_type == 'Neg':
        time.sleep(600)
    if node.op_type == 'Abs':
        print('fake: Abs is not supported', file=sys.stderr)
        return 1
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == 'Softmax' and attrs.get('axis') == 0:
        print('fake: Softmax axis 0 is not supported', file=sys.stderr)
        return 1
    r = subprocess.run([os.environ['OPMIG'], 'run', model, '--data', inputs, '-O', outdir,
                        '--threads', '1'], capture_output=True, text=True)
    if r.returncode:
        print('fake: ' + r.stderr.strip(), file=sys.stderr)
        return 1
    types = [i.type.tensor_type.elem_type for i in m.graph.input]
    types += [t.data_type for t in m.graph.initializer]
    if node.op_type == 'Relu' and 10 in types:
        p = os.path.join(outdir, 'output_0.pb')
        t = onnx.TensorProto()
        with open(p, 'rb') as f:
            t.ParseFromString(f.read())
        a = numpy_helper.to_array(t) + np.float16(1)
        os.remove(p)
        np.save(os.path.join(outdir, 'output_0.npy'), a)
    return 0


if __name__ == '__main__':
    sys.exit(main())
