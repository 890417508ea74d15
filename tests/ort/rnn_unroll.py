"""rnn_unroll.py OPMIG WORKDIR [N]: onnxruntime cross-check of the lstm,
gru and rnn decompositions (tests/cli/t1170-rnn-unroll.sh).

N seeded random LSTM/GRU/RNN models (directions, layouts, activations with
alpha/beta, clip, P, input_forget, linear_before_reset, B, initial states,
sequence_lens, weights as graph inputs, a dynamic batch, opsets 7 to 22)
go through `opmig migrate --passes lstm,gru,rnn` for a target without the
recurrent ops (and one also without the rarer activations, which takes
the primitive variant); the migrated model must hold no recurrent op and,
at opset <= 17, pass onnx.checker's full check, and onnxruntime must give
the original's outputs for it on the same inputs.  onnxruntime does not
run layout 1: the reference is then the same node with layout 0 on
transposed inputs.  Then the backend test data's LSTM/GRU/RNN node cases
are migrated and must give their expected outputs in onnxruntime (but
test_lstm_with_peepholes, whose sequence_lens is a graph input, must be
refused).  All
models run in one onnxruntime process.  Exit 0 ok, 1 failure, 77 when
onnxruntime is absent.
"""
import glob
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(TOP, 'tests', 'fixtures')
RULES = ['--rules', os.path.join(FIX, 'rnn-npu.json'),
         '--rules', os.path.join(FIX, 'rnn-npu-prim.json')]
DATA = '/usr/share/libonnx-testdata/data/node'
ACTS = {  # name: takes alpha, takes beta
    'Relu': (0, 0), 'Tanh': (0, 0), 'Sigmoid': (0, 0), 'Affine': (1, 1),
    'LeakyRelu': (1, 0), 'ThresholdedRelu': (1, 0), 'ScaledTanh': (1, 1),
    'HardSigmoid': (1, 1), 'Elu': (1, 0), 'Softsign': (0, 0), 'Softplus': (0, 0),
}
NATIVE_ONLY = {'LeakyRelu', 'ThresholdedRelu', 'HardSigmoid', 'Elu', 'Softsign', 'Softplus'}
OPSETS = [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21, 22]
GATES = {'RNN': 1, 'GRU': 3, 'LSTM': 4}
PER = {'RNN': 1, 'GRU': 2, 'LSTM': 3}


def gen(rng):
    c = {'op': rng.choice(['LSTM', 'GRU', 'RNN']), 'opset': int(rng.choice(OPSETS)),
         'dir': rng.choice(['forward', 'reverse', 'bidirectional']),
         'seq': int(rng.integers(1, 7)), 'batch': int(rng.integers(1, 4)),
         'in': int(rng.integers(1, 5)), 'hid': int(rng.integers(1, 6))}
    c['layout'] = int(rng.integers(0, 2)) if c['opset'] >= 14 else 0
    c['nd'] = 2 if c['dir'] == 'bidirectional' else 1
    c['dyn'] = rng.random() < 0.25
    c['w_in'], c['r_in'] = rng.random() < 0.2, rng.random() < 0.2
    c['b'] = rng.random() < 0.75
    c['b_in'] = c['b'] and rng.random() < 0.2
    c['h0'] = rng.random() < 0.5
    c['c0'] = c['op'] == 'LSTM' and rng.random() < 0.5
    c['p'] = c['op'] == 'LSTM' and rng.random() < 0.5
    c['clip'] = float(rng.uniform(0.3, 2.0)) if rng.random() < 0.25 else None
    c['lbr'] = int(rng.integers(0, 2)) if c['op'] == 'GRU' else 0
    c['input_forget'] = int(c['op'] == 'LSTM' and rng.random() < 0.25)
    # lengths >= 1: onnxruntime gives a zero Y_h for an empty sequence
    # where opmig's interpreter keeps the initial state
    c['lens'] = None
    if rng.random() < 0.4:
        lens = rng.integers(1, c['seq'] + 1, c['batch'])
        if rng.random() < 0.7:
            lens[0] = max(1, c['seq'] - 1) if c['seq'] > 1 else 1
        c['lens'] = [int(v) for v in lens]
    c['acts'] = None
    if rng.random() < 0.7:
        c['acts'] = [str(rng.choice(list(ACTS))) for _ in range(PER[c['op']] * c['nd'])]
        c['alpha'] = [float(rng.uniform(0.1, 0.9)) for a in c['acts'] if ACTS[a][0]]
        c['beta'] = [float(rng.uniform(0.2, 0.7)) for a in c['acts'] if ACTS[a][1]]
    n_out = 3 if c['op'] == 'LSTM' else 2
    c['outs'] = [i for i in range(n_out) if rng.random() < 0.6] or [0]
    c['prim'] = rng.random() < 0.4
    return c


def make(c, rng, layout):
    """The model of case c with the given layout, and its feeds."""
    seq, b, nd, h, g = c['seq'], c['batch'], c['nd'], c['hid'], GATES[c['op']]
    bdim = 'N' if c['dyn'] else b
    xs, ss = ([seq, b, c['in']], [nd, b, h]) if not layout else ([b, seq, c['in']], [b, nd, h])
    xsym = [bdim if d == b and i == (1 - layout) else d for i, d in enumerate(xs)]
    ssym = [bdim if i == (1 - layout) else d for i, d in enumerate(ss)]
    vals = {
        'X': rng.uniform(-1, 1, [seq, b, c['in']]),
        'W': rng.uniform(-0.7, 0.7, [nd, g * h, c['in']]),
        'R': rng.uniform(-0.6, 0.6, [nd, g * h, h]),
        'B': rng.uniform(-0.5, 0.5, [nd, 2 * g * h]),
        'H0': rng.uniform(-1, 1, [nd, b, h]),
        'C0': rng.uniform(-1, 1, [nd, b, h]),
        'P': rng.uniform(-0.5, 0.5, [nd, 3 * h]),
    }
    vals = {k: v.astype(np.float32) for k, v in vals.items()}
    if layout:   # the same numbers, batch first
        for k in ('X', 'H0', 'C0'):
            vals[k] = np.ascontiguousarray(vals[k].transpose(1, 0, 2))
    ins, inits, feeds, names = [], [], {}, ['X', 'W', 'R', '', '', '', '', '']
    ins.append(helper.make_tensor_value_info('X', TensorProto.FLOAT, xsym))
    feeds['X'] = vals['X']

    def put(name, as_input, shape):
        if as_input:
            ins.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
            feeds[name] = vals[name]
        else:
            inits.append(numpy_helper.from_array(vals[name], name))

    put('W', c['w_in'], list(vals['W'].shape))
    put('R', c['r_in'], list(vals['R'].shape))
    if c['b']:
        put('B', c['b_in'], list(vals['B'].shape))
        names[3] = 'B'
    if c['lens']:
        inits.append(numpy_helper.from_array(np.array(c['lens'], np.int32), 'L'))
        names[4] = 'L'
    if c['h0']:
        put('H0', True, ssym)
        names[5] = 'H0'
    if c['c0']:
        put('C0', True, ssym)
        names[6] = 'C0'
    if c['p']:
        put('P', c['p'] and rng.random() < 0.3, list(vals['P'].shape))
        names[7] = 'P'
    while not names[-1]:
        names.pop()
    all_outs = ['Y', 'Y_h', 'Y_c'][:3 if c['op'] == 'LSTM' else 2]
    node_outs = all_outs[:max(c['outs']) + 1]
    attrs = {'hidden_size': h, 'direction': c['dir']}
    if c['opset'] >= 14:
        attrs['layout'] = layout
    if c['clip'] is not None:
        attrs['clip'] = c['clip']
    if c['op'] == 'GRU':
        attrs['linear_before_reset'] = c['lbr']
    if c['op'] == 'LSTM':
        attrs['input_forget'] = c['input_forget']
    if c['acts']:
        attrs['activations'] = c['acts']
        if c['alpha']:
            attrs['activation_alpha'] = c['alpha']
        if c['beta']:
            attrs['activation_beta'] = c['beta']
    node = helper.make_node(c['op'], names, node_outs, **attrs)
    ysh = {0: [seq, nd, bdim, h] if not layout else [bdim, seq, nd, h],
           1: [nd, bdim, h] if not layout else [bdim, nd, h]}
    outs = [helper.make_tensor_value_info(all_outs[i], TensorProto.FLOAT, ysh[min(i, 1)])
            for i in c['outs']]
    graph = helper.make_graph([node], 'rnn', ins, outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', c['opset'])],
                          producer_name='rnn_unroll')
    m.ir_version = 7 if c['opset'] <= 15 else 8
    return m, feeds


def check_model(path, opset, why):
    if opset <= 17:
        try:
            onnx.checker.check_model(onnx.load(path), full_check=True)
        except Exception as e:   # noqa: BLE001
            why.append('%s: checker: %s' % (path, str(e).splitlines()[0]))


def migrate(opmig, src, dst, target, why, extra=(), refused=False):
    rep = dst + '.json'
    r = subprocess.run([opmig, 'migrate', src, *RULES, '--target', target,
                        '--passes', 'lstm,gru,rnn', '-o', dst, '--format', 'json',
                        '--report', rep, *extra], capture_output=True, text=True)
    if refused:    # exit 1, the recurrent node still blocked
        blockers = json.load(open(rep))['blockers'] if r.returncode == 1 else []
        if [b['op_type'] for b in blockers] != ['LSTM']:
            why.append('%s: migrate exited %d, expected the LSTM refused' % (src, r.returncode))
        return None
    if r.returncode != 0:
        why.append('%s: migrate exited %d: %s %s' % (src, r.returncode, r.stderr.strip()[:300],
                                                     r.stdout.strip()[-300:]))
        return None
    report = json.load(open(rep))
    left = [n.op_type for n in onnx.load(dst).graph.node if n.op_type in GATES]
    if left:
        why.append('%s: %s left after migration' % (dst, left))
    return report


def close(got, ref):
    if got.shape != ref.shape:
        return 'shape %s, expected %s' % (got.shape, ref.shape)
    err = float(np.max(np.abs(got.astype(np.float64) - ref))) if ref.size else 0.0
    tol = 1e-4 * max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
    return None if err <= tol else 'max abs error %g > %g' % (err, tol)


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    if ortlib.available():
        print('notice: onnxruntime unavailable (%s), skipped' % ortlib.available())
        return 77
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(1170)
    why, jobs, checks = [], [], []
    variants = {'native': 0, 'primitive': 0}
    for k in range(n):
        c = gen(rng)
        seed = int(rng.integers(1 << 30))
        model, feeds = make(c, np.random.default_rng(seed), c['layout'])
        src, dst = os.path.join(work, 'c%d.onnx' % k), os.path.join(work, 'c%d.out.onnx' % k)
        onnx.save(model, src)
        check_model(src, c['opset'], why)
        target = 'rnn-npu-prim' if c['prim'] else 'rnn-npu'
        # validation runs the original at the batch of sequence_lens
        report = migrate(opmig, src, dst, target, why,
                         ('--dim', 'N=%d' % c['batch']) if c['dyn'] else ())
        if report is None:
            continue
        check_model(dst, c['opset'], why)
        used = [r['variant'] for r in report['rewrites'] if r['pass'] in ('lstm', 'gru', 'rnn')]
        # ThresholdedRelu has no op before opset 10: both variants compose it
        native_only = NATIVE_ONLY - ({'ThresholdedRelu'} if c['opset'] < 10 else set())
        want = 'primitive' if c['prim'] and set(c['acts'] or []) & native_only else 'native'
        if used != [want]:
            why.append('%s: variants %s, expected [%s]' % (src, used, want))
        variants[want] += 1
        ref_src = src
        if c['layout']:    # onnxruntime runs layout 0 only: the same node, time first
            ref_model, _ = make(c, np.random.default_rng(seed), 0)
            ref_src = os.path.join(work, 'c%d.ref.onnx' % k)
            onnx.save(ref_model, ref_src)
        ref_feeds = {k2: (np.ascontiguousarray(v.transpose(1, 0, 2))
                          if c['layout'] and k2 in ('X', 'H0', 'C0') else v)
                     for k2, v in feeds.items()}
        jobs.append((ref_src, ref_feeds))
        jobs.append((dst, feeds))
        checks.append((src, c))
    # the backend test data
    cases = sorted(d for d in glob.glob(os.path.join(DATA, '*'))
                   if any(s in os.path.basename(d) for s in ('lstm', 'gru', 'rnn')))
    backend = []
    for d in cases:
        dst = os.path.join(work, os.path.basename(d) + '.out.onnx')
        # its sequence_lens is a graph input: refused (lengths known at run time)
        refused = os.path.basename(d) == 'test_lstm_with_peepholes'
        if migrate(opmig, os.path.join(d, 'model.onnx'), dst, 'rnn-npu', why,
                   refused=refused) is None:
            continue
        m = onnx.load(dst)
        check_model(dst, max(o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')), why)
        inputs = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
        for ds in sorted(glob.glob(os.path.join(d, 'test_data_set_*'))):
            feeds = {}
            for j, name in enumerate(inputs):
                feeds[name] = numpy_helper.to_array(
                    onnx.load_tensor(os.path.join(ds, 'input_%d.pb' % j)))
            outs = [numpy_helper.to_array(onnx.load_tensor(f))
                    for f in sorted(glob.glob(os.path.join(ds, 'output_*.pb')))]
            jobs.append((dst, feeds))
            backend.append((d, outs))
    res = ortlib.run_many(jobs, os.path.join(work, 'ort'))
    agree = 0
    for i, (src, c) in enumerate(checks):
        ref, got = res[2 * i], res[2 * i + 1]
        if isinstance(ref, str) or isinstance(got, str):
            why.append('%s: onnxruntime: %s' % (src, ref if isinstance(ref, str) else got))
            continue
        bad = False
        for j, (g, r) in enumerate(zip(got, ref)):
            if c['layout'] and g.ndim == 4:      # Y: [seq, nd, b, h] -> [b, seq, nd, h]
                r = r.transpose(2, 0, 1, 3)
            elif c['layout'] and g.ndim == 3:    # Y_h, Y_c: [nd, b, h] -> [b, nd, h]
                r = r.transpose(1, 0, 2)
            msg = close(g, r)
            if msg:
                bad = True
                why.append('%s (%s): output %d: %s' % (src, json.dumps(c), j, msg))
        agree += not bad
    ok_backend = 0
    for k, (d, outs) in enumerate(backend):
        got = res[2 * len(checks) + k]
        if isinstance(got, str):
            why.append('%s: onnxruntime: %s' % (d, got))
            continue
        msgs = [close(g, r) for g, r in zip(got, outs) if close(g, r)]
        if msgs or len(got) != len(outs):
            why.append('%s: %s' % (d, msgs or 'output count'))
        else:
            ok_backend += 1
    print('rnn unroll: %d/%d random models agree with onnxruntime (%d native, %d primitive '
          'variant); %d/%d backend node cases give their expected outputs (onnxruntime %s)'
          % (agree, n, variants['native'], variants['primitive'], ok_backend, len(backend),
             ortlib.version()))
    for w in why[:20]:
        print('FAIL:', w)
    return 1 if why or agree != n or ok_backend != len(backend) or len(backend) < 11 else 0


if __name__ == '__main__':
    sys.exit(main())
