#!/usr/bin/python3
"""small_runtime.py OPMIG WORKDIR [LIGHT_DIR]: migrate real-world-shaped
models to a small embedded runtime (tests/fixtures/small-runtime.json: 68
ops at opsets 7 to 9, no Constant/Cast/Shape/Identity nodes, static
shapes) and prove each result: every node one the runtime has, the opset
in its range, onnx.checker full_check, and onnxruntime-node computing the
same outputs as on the original (one node process for all).

The models carry what a user found blocking on such a runtime (issue 22):
an LSTM speech encoder, an If on a sample-rate input (bound with
--input-value), a ConvTranspose stride-2 decoder, Resize at opset 11 (to
Upsample), a TopK k=1 head, Max/Min clamps, Pow, Sign and Greater; plus
the shared light models (opset 9 CNNs) when LIGHT_DIR holds them.
Exit 0 when every model migrates and agrees, 1 otherwise (each failure on
its own line); without onnxruntime-node the numbers are not compared (a
notice says so)."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(HERE, '..', 'fixtures', 'small-runtime.json')
rng = np.random.default_rng(22)


def w(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def model(nodes, inputs, outputs, inits, opset):
    g = h.make_graph(nodes, 'g', inputs, outputs,
                     [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)], producer_name='small-rt-test')
    m.ir_version = 7
    return m


def vi(name, dims, t=T.FLOAT):
    return h.make_tensor_value_info(name, t, dims)


def lstm_encoder():
    """[T=6, N=1, F=8] -> LSTM(16) -> last state -> Gemm 16->4 -> Softmax."""
    return model([
        h.make_node('LSTM', ['x', 'W', 'R', 'B'], ['y', 'yh'], hidden_size=16),
        h.make_node('Squeeze', ['yh'], ['s'], axes=[0]),
        h.make_node('Gemm', ['s', 'G', 'gb'], ['z'], transB=1),
        h.make_node('Softmax', ['z'], ['p'], axis=1)],
        [vi('x', [6, 1, 8])], [vi('p', [1, 4])],
        {'W': w(1, 64, 8), 'R': w(1, 64, 16), 'B': w(1, 128, scale=0.1), 'G': w(4, 16),
         'gb': w(4)}, 11), {}


def if_sample_rate():
    """A front end that branches on its sample-rate input (int64 scalar):
    16 kHz scales the features by 0.5, anything else by 2."""
    then_g = h.make_graph([h.make_node('Mul', ['x', 'half'], ['t'])], 'then', [], [vi('t', [1, 10])],
                          [numpy_helper.from_array(np.float32(0.5), 'half')])
    else_g = h.make_graph([h.make_node('Mul', ['x', 'two'], ['e'])], 'else', [], [vi('e', [1, 10])],
                          [numpy_helper.from_array(np.float32(2.0), 'two')])
    return model([
        h.make_node('Equal', ['sr', 'k16'], ['is16']),
        h.make_node('If', ['is16'], ['f'], then_branch=then_g, else_branch=else_g),
        h.make_node('Relu', ['f'], ['y'])],
        [vi('x', [1, 10]), vi('sr', [], T.INT64)], [vi('y', [1, 10])],
        {'k16': np.array(16000, np.int64)}, 11), {'sr': '16000'}


def deconv_decoder():
    """A segmentation decoder: Conv, ConvTranspose stride 2, Sigmoid."""
    return model([
        h.make_node('Conv', ['x', 'C'], ['c'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node('Relu', ['c'], ['r']),
        h.make_node('ConvTranspose', ['r', 'D', 'db'], ['u'], kernel_shape=[4, 4],
                    strides=[2, 2], pads=[1, 1, 1, 1]),
        h.make_node('Sigmoid', ['u'], ['y'])],
        [vi('x', [1, 3, 8, 8])], [vi('y', [1, 2, 16, 16])],
        {'C': w(8, 3, 3, 3), 'D': w(8, 2, 4, 4), 'db': w(2)}, 11), {}


def resize_neck():
    """An FPN-style neck at opset 11: nearest x2 upsampling by scales."""
    return model([
        h.make_node('Resize', ['x', 'roi', 'sc'], ['u'], mode='nearest'),
        h.make_node('Add', ['u', 'skip'], ['y'])],
        [vi('x', [1, 4, 5, 5]), vi('skip', [1, 4, 10, 10])], [vi('y', [1, 4, 10, 10])],
        {'roi': np.zeros(0, np.float32), 'sc': np.array([1, 1, 2, 2], np.float32)}, 11), {}


def top1_head():
    """A classifier's top-1: Gemm, then TopK k=1 (values and indices)."""
    return model([
        h.make_node('Gemm', ['x', 'G'], ['z'], transB=1),
        h.make_node('TopK', ['z', 'k'], ['v', 'i'], axis=1)],
        [vi('x', [2, 12])], [vi('v', [2, 1]), vi('i', [2, 1], T.INT64)],
        {'G': w(10, 12), 'k': np.array([1], np.int64)}, 11), {}


def clamps_pow_sign_greater():
    """Elementwise tails: max(min(x, a), b), x ** 2, sign(x), where(x > 0.1)."""
    return model([
        h.make_node('Min', ['x', 'hi'], ['m']),
        h.make_node('Max', ['m', 'lo'], ['c']),
        h.make_node('Pow', ['c', 'two'], ['p']),
        h.make_node('Sign', ['x'], ['s']),
        h.make_node('Greater', ['x', 'th'], ['g']),
        h.make_node('Where', ['g', 'p', 's'], ['y'])],
        [vi('x', [2, 3, 4])], [vi('y', [2, 3, 4])],
        {'hi': np.float32(0.8), 'lo': np.float32(-0.6), 'two': np.float32(2.0),
         'th': np.float32(0.1)}, 11), {}


CASES = [('lstm_encoder', lstm_encoder), ('if_sample_rate', if_sample_rate),
         ('deconv_decoder', deconv_decoder), ('resize_neck', resize_neck),
         ('top1_head', top1_head), ('clamps_pow_sign_greater', clamps_pow_sign_greater)]


def feeds_for(m, bound):
    inits = {i.name for i in m.graph.initializer}
    out = {}
    for i in m.graph.input:
        if i.name in inits:
            continue
        tt = i.type.tensor_type
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in tt.shape.dim]
        if i.name in bound:
            out[i.name] = np.array(int(bound[i.name]), np.int64).reshape(dims)
        else:
            out[i.name] = rng.uniform(-1, 1, dims).astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[tt.elem_type])
    return out


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    light = sys.argv[3] if len(sys.argv) > 3 else None
    os.makedirs(work, exist_ok=True)
    rules = json.load(open(RULES))
    allowed = set(rules['ops'])
    lo, hi = rules['opset']
    todo = []
    for name, fn in CASES:
        m, bound = fn()
        onnx.checker.check_model(m, full_check=True)
        p = os.path.join(work, name + '.onnx')
        onnx.save(m, p)
        todo.append((name, p, bound))
    if light and os.path.isdir(light):
        for f in sorted(os.listdir(light)):
            if f.endswith('.onnx'):
                todo.append((f[:-5], os.path.join(light, f), {}))
    bad = []
    jobs = []
    for name, p, bound in todo:
        out = os.path.join(work, name + '.small.onnx')
        cmd = [opmig, 'migrate', p, '--rules', RULES, '--target', 'small-rt', '-o', out,
               '--format', 'json']
        for k, v in bound.items():
            cmd += ['--input-value', '%s=%s' % (k, v)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            try:
                why = json.loads(r.stdout).get('why')
            except ValueError:
                why = r.stderr.strip()[:300]
            bad.append('%s: migrate exited %d: %s' % (name, r.returncode, why))
            continue
        mig = onnx.load(out)
        opset = [o.version for o in mig.opset_import if o.domain in ('', 'ai.onnx')][0]
        if not lo <= opset <= hi:
            bad.append('%s: opset %d outside %d..%d' % (name, opset, lo, hi))
        ops = {n.op_type for n in mig.graph.node}
        if ops - allowed:
            bad.append('%s: ops the runtime lacks: %s' % (name, sorted(ops - allowed)))
        try:
            onnx.checker.check_model(mig, full_check=True)
        except Exception as e:
            bad.append('%s: checker: %s' % (name, str(e).splitlines()[0]))
            continue
        orig = onnx.load(p)
        feeds = feeds_for(orig, bound)
        mfeeds = {k: v for k, v in feeds.items() if k not in bound}
        # the migrated model's dims are static (batch 1 where it was open)
        for i in mig.graph.input:
            if i.name in mfeeds:
                dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
                if list(mfeeds[i.name].shape) != dims:
                    feeds[i.name] = mfeeds[i.name] = rng.uniform(-1, 1, dims).astype(np.float32)
        jobs.append((name, p, feeds, out, mfeeds))
    why = ortlib.available()
    if why:
        print('notice: onnxruntime-node unavailable (%s): outputs not compared' % why)
    else:
        runs = []
        for name, p, feeds, out, mfeeds in jobs:
            runs += [(p, feeds), (out, mfeeds)]
        res = ortlib.run_many(runs, os.path.join(work, 'ort'))
        for k, (name, *_rest) in enumerate(jobs):
            a, b = res[2 * k], res[2 * k + 1]
            if isinstance(a, str) or isinstance(b, str):
                bad.append('%s: onnxruntime: %s' % (name, a if isinstance(a, str) else b))
                continue
            for j, (x, y) in enumerate(zip(a, b)):
                x = x.astype(np.float64)
                y = y.astype(np.float64)
                if x.shape != y.shape or not np.allclose(y, x, rtol=1e-3, atol=1e-4):
                    bad.append('%s: output %d differs (max %g)' % (
                        name, j, np.max(np.abs(x - y)) if x.shape == y.shape else -1))
    for b in bad:
        print('FAIL ' + b)
    print('small runtime: %d models, %d migrated and checked, %d failures' % (
        len(todo), len(jobs), len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
