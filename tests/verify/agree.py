#!/usr/bin/python3
"""agree.py OPMIG DATA WORK [--every N] [--jobs J] [--differ FILE]: opmig's
verdict on a model, `opmig inspect --shapes`: the strict schema check's
warnings on load, or exit 3 (a model verification or type inference
rejects: inference refuses an input type outside its op's constraint,
which the strict check then leaves to it), against python-onnx's
onnx.checker.check_model(full_check=True).

Every model DATA/<case>/model.onnx of the backend node suite is judged by
both, and so are broken variants of every N-th model (a rotating offset
per kind, so each kind meets other ops): an attribute the op's version
lacks added ("attr"), a required attribute dropped ("required"), one
input more than the version takes ("input"), a graph input's element type
changed to one its first reader does not allow ("dtype").  Models of
opset > 17 (python-onnx 1.12 knows up to 17) are judged by opmig alone
and must be valid (the suite is valid by construction).  Verdicts must
agree, except for the (case, kind) pairs listed with a reason in FILE.
Exit 1 on any other disagreement.
"""
import argparse
import concurrent.futures
import copy
import os
import subprocess
import sys

import onnx
import onnx.defs
from onnx import TensorProto

KINDS = ('attr', 'required', 'input', 'dtype')
# element types tried, in order, for the "dtype" variant
TRY = (TensorProto.STRING, TensorProto.BOOL, TensorProto.COMPLEX64, TensorProto.UINT16,
       TensorProto.INT8, TensorProto.DOUBLE, TensorProto.FLOAT)
TNAME = {TensorProto.STRING: 'string', TensorProto.BOOL: 'bool',
         TensorProto.COMPLEX64: 'complex64', TensorProto.UINT16: 'uint16',
         TensorProto.INT8: 'int8', TensorProto.DOUBLE: 'double', TensorProto.FLOAT: 'float'}


def opset(m, domain=''):
    for o in m.opset_import:
        if o.domain == domain or (domain == '' and o.domain == 'ai.onnx'):
            return o.version
    return 0


def schema(m, n):
    dom = n.domain if n.domain != 'ai.onnx' else ''
    try:
        return onnx.defs.get_schema(n.op_type, opset(m, dom), dom)
    except Exception:
        return None


def known_nodes(m):
    return [(i, n, s) for i, n in enumerate(m.graph.node) for s in [schema(m, n)]
            if s is not None and not s.deprecated]


def mutate(m, kind):
    """A broken copy of m, or None when the kind does not apply."""
    m = copy.deepcopy(m)
    nodes = known_nodes(m)
    if kind == 'attr':
        if not nodes:
            return None
        n = nodes[0][1]
        n.attribute.append(onnx.helper.make_attribute('opmig_not_an_attribute', 1))
        return m
    if kind == 'required':
        for _, n, s in nodes:
            req = [a for a, v in s.attributes.items() if v.required]
            for a in n.attribute:
                if a.name in req:
                    n.attribute.remove(a)
                    return m
        return None
    if kind == 'input':
        for _, n, s in nodes:
            if s.max_input >= 2 ** 31 - 1 or not n.input:
                continue
            while len(n.input) < s.max_input:
                n.input.append('')
            n.input.append(n.input[0] or n.input[-1])
            return m
        return None
    if kind == 'dtype':
        inits = {i.name for i in m.graph.initializer}
        for gi in m.graph.input:
            if gi.name in inits or not gi.type.HasField('tensor_type'):
                continue
            for _, n, s in nodes:
                if gi.name not in n.input:
                    continue
                k = list(n.input).index(gi.name)
                formals = list(s.inputs)
                if not formals:
                    continue
                f = formals[min(k, len(formals) - 1)]
                allowed = set(f.types)
                for t in TRY:
                    if 'tensor(%s)' % TNAME[t] not in allowed and \
                            t != gi.type.tensor_type.elem_type:
                        gi.type.tensor_type.elem_type = t
                        return m
                break
        return None
    raise ValueError(kind)


def checker(m):
    """None when onnx.checker's full check accepts m, else its message."""
    try:
        onnx.checker.check_model(m, full_check=True)
        return None
    except Exception as e:
        return str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__


def opmig(binary, path):
    """None when opmig loads path without a fault, else what it said."""
    p = subprocess.run([binary, 'inspect', path, '--shapes'], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode('utf-8', 'replace')
    if p.returncode not in (0, 3):
        return 'CRASH exit %d: %s' % (p.returncode, err[:200])
    faults = [ln for ln in err.splitlines() if ': warning: node ' in ln or
              'faults not shown' in ln]
    if p.returncode == 3:
        return err.strip().splitlines()[0][:200]
    return faults[0][:200] if faults else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('opmig')
    ap.add_argument('data')
    ap.add_argument('work')
    ap.add_argument('--every', type=int, default=3)
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--differ')
    a = ap.parse_args()
    allowed = {}
    if a.differ:
        for line in open(a.differ):
            line = line.split('#')[0].strip()
            if line:
                case, kind, why = line.split(None, 2)
                allowed[(case, kind)] = why
    os.makedirs(a.work, exist_ok=True)
    cases = sorted(c for c in os.listdir(a.data)
                   if os.path.isfile(os.path.join(a.data, c, 'model.onnx')))
    jobs = []          # (case, kind, path, checker verdict or 'unknown')
    for i, case in enumerate(cases):
        path = os.path.join(a.data, case, 'model.onnx')
        m = onnx.load(path)
        old = opset(m) > 17
        jobs.append((case, 'original', path, None if old else checker(m)))
        if old:
            continue
        for k, kind in enumerate(KINDS):
            if (i + k) % a.every:
                continue
            v = mutate(m, kind)
            if v is None:
                continue
            p = os.path.join(a.work, '%s.%s.onnx' % (case, kind))
            onnx.save(v, p)
            jobs.append((case, kind, p, checker(v)))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        mine = list(ex.map(lambda j: opmig(a.opmig, j[2]), jobs))
    stats = {}
    rc = 0
    used = set()
    for (case, kind, _, ref), got in zip(jobs, mine):
        s = stats.setdefault(kind, [0, 0, 0])   # models, invalid by onnx, disagreements
        s[0] += 1
        s[1] += ref is not None
        if got and got.startswith('CRASH'):
            print('FAIL %s %s: %s' % (case, kind, got))
            rc = 1
            continue
        if (ref is None) == (got is None):
            continue
        s[2] += 1
        if (case, kind) in allowed:
            used.add((case, kind))
            continue
        print('FAIL %s %s: onnx.checker %s; opmig %s' % (
            case, kind, 'accepts' if ref is None else 'rejects (%s)' % ref,
            'accepts' if got is None else 'rejects (%s)' % got))
        rc = 1
    for k in ('original',) + KINDS:
        if k in stats:
            s = stats[k]
            print('%-9s %4d models, %4d rejected by onnx.checker, %d disagreements'
                  % (k, s[0], s[1], s[2]))
    for key in sorted(set(allowed) - used):
        print('notice: listed difference %s %s no longer occurs' % key)
    return rc


if __name__ == '__main__':
    sys.exit(main())
