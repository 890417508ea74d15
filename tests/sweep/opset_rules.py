#!/usr/bin/python3
"""opset_rules.py OPMIG OUTDIR K...: write OUTDIR/opset-K.json for each K,
a rules file (opmig-rules(5)) of a target "opset-K" that accepts exactly
default-domain opset K and every operator of opmig's registry (all
domains, all versions, any dtype), so that `opmig batch --mode migrate
--target opset-K` converts a model to opset K and nothing else.  The
operator list is read from `OPMIG ops --json`, so it follows the registry.
"""
import json
import os
import subprocess
import sys


def main():
    opmig, out, ks = sys.argv[1], sys.argv[2], [int(k) for k in sys.argv[3:]]
    ops = json.loads(subprocess.check_output([opmig, 'ops', '--json']))['operators']
    names = sorted({(o['domain'], o['name']) for o in ops})
    os.makedirs(out, exist_ok=True)
    for k in ks:
        rules = {
            'schema': 1,
            'id': 'opset-%d' % k,
            'description': 'every registry operator at default-domain opset %d '
                           '(tests/sweep/opsets.sh)' % k,
            'sources': ['opmig ops --json'],
            'opset': [k, k],
            'ops': {(n if d == 'ai.onnx' else d + ':' + n): {} for d, n in names},
        }
        with open(os.path.join(out, 'opset-%d.json' % k), 'w') as f:
            json.dump(rules, f, indent=1, sort_keys=True)
            f.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
