#!/usr/bin/python3
"""roundtrip_judge.py: decide whether two ONNX files hold the same model.

    roundtrip_judge.py A B            exit 0 iff A and B are equal
    roundtrip_judge.py --list FILE    judge every line "A B" of FILE
    roundtrip_judge.py --unloadable FILE
                                      print the paths of FILE (one a line)
                                      that onnx.load cannot load
Both files are read with onnx.load (external data loaded); then the
external-data bookkeeping (data_location, external_data) is removed from
every tensor and the ModelProto messages are compared field by field,
unknown fields included.  The one tolerated difference: when A's nodes are
not in topological order, B may hold the same nodes sorted.  Mismatches are
printed as "mismatch: A B: WHERE: WHAT", one a line; in --list mode a pair
whose A onnx.load cannot read is skipped ("skip: A: REASON").  Exit status:
0 all equal (or skipped), 1 some pair differs, 2 usage error.
Run with /usr/bin/python3 (it has onnx).
"""

import struct
import sys

import onnx
from google.protobuf.descriptor import FieldDescriptor as FD

TENSOR = onnx.TensorProto.DESCRIPTOR.full_name
NODE = onnx.NodeProto.DESCRIPTOR.full_name


def load(path):
    m = onnx.load(path)   # raises on unreadable files and bad external data
    normalise(m)
    return m


def normalise(msg):
    """Drop external-data bookkeeping from every tensor, recursively."""
    if msg.DESCRIPTOR.full_name == TENSOR:
        msg.ClearField("data_location")
        msg.ClearField("external_data")
    for fd, value in msg.ListFields():
        if fd.type != FD.TYPE_MESSAGE:
            continue
        if fd.label == FD.LABEL_REPEATED:
            for v in value:
                normalise(v)
        else:
            normalise(value)


def ser(msg):
    return msg.SerializeToString(deterministic=True)


def label(msg):
    """A short name for a message in a path: 'conv1' (Conv)."""
    name = getattr(msg, "name", "")
    s = " '%s'" % name if name else ""
    if msg.DESCRIPTOR.full_name == NODE:
        s += " (%s)" % msg.op_type
    return s


def same_scalar(fd, a, b):
    if fd.type == FD.TYPE_FLOAT:
        return struct.pack("<f", a) == struct.pack("<f", b)
    if fd.type == FD.TYPE_DOUBLE:
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b


def show(v):
    if isinstance(v, bytes) and len(v) > 32:
        return "%d bytes" % len(v)
    return repr(v)


def show2(a, b):
    """'A vs B', for long byte strings with the first differing offset."""
    if isinstance(a, bytes) and (len(a) > 32 or len(b) > 32):
        k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y),
                 min(len(a), len(b)))
        return "%d vs %d bytes, first difference at byte %d" % (
            len(a), len(b), k)
    return "%s vs %s" % (show(a), show(b))


def unknown_only(msg):
    """The serialized unknown fields of a message (known fields cleared)."""
    c = type(msg)()
    c.CopyFrom(msg)
    for fd in c.DESCRIPTOR.fields:
        c.ClearField(fd.name)
    return ser(c)


def produced_names(node):
    return [o for o in node.output if o]


def used_names(node):
    """Inputs of a node, plus names its subgraphs use (captures)."""
    names = [i for i in node.input if i]
    for a in node.attribute:
        for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            for n in g.node:
                names.extend(used_names(n))
    return names


def topo_sorted(nodes):
    where = {}
    for k, n in enumerate(nodes):
        for o in produced_names(n):
            where[o] = k
    for k, n in enumerate(nodes):
        for i in used_names(n):
            if where.get(i, -1) >= k:
                return False
    return True


def diff_nodes(a, b, path):
    """Nodes compared in order; if A's order is not topological, B may
    hold the same nodes in another (topological) order."""
    first = None
    for k, (x, y) in enumerate(zip(a, b)):
        if (x.name, x.op_type) != (y.name, y.op_type):
            first = "%s[%d]:%s in A,%s in B" % (path, k, label(x), label(y))
            break
        r = diff(x, y, "%s[%d]%s" % (path, k, label(x)))
        if r:
            first = r
            break
    if first is None:
        return None
    if topo_sorted(a) or not topo_sorted(b):
        return first
    key = lambda n: tuple(n.output)
    by_out = {key(y): y for y in b}
    if len(by_out) != len(b):
        return first
    for k, x in enumerate(a):
        y = by_out.get(key(x))
        if y is None:
            return "%s[%d]%s: no node in B writes %s" % (
                path, k, label(x), list(x.output))
        r = diff(x, y, "%s[%d]%s" % (path, k, label(x)))
        if r:
            return r
    return None


def diff(a, b, path):
    """None if equal, else a text naming the first difference."""
    if ser(a) == ser(b):
        return None
    p = path + "." if path else ""
    for fd in a.DESCRIPTOR.fields:
        name = fd.name
        va, vb = getattr(a, name), getattr(b, name)
        if fd.label == FD.LABEL_REPEATED:
            if len(va) != len(vb):
                return "%s%s: %d vs %d entries" % (p, name, len(va), len(vb))
            if fd.type == FD.TYPE_MESSAGE:
                if fd.message_type.full_name == NODE:
                    r = diff_nodes(va, vb, p + name)
                    if r:
                        return r
                    continue
                for k, (x, y) in enumerate(zip(va, vb)):
                    r = diff(x, y, "%s%s[%d]%s" % (p, name, k, label(x)))
                    if r:
                        return r
            else:
                for k, (x, y) in enumerate(zip(va, vb)):
                    if not same_scalar(fd, x, y):
                        return "%s%s[%d]: %s" % (p, name, k, show2(x, y))
            continue
        ha, hb = a.HasField(name), b.HasField(name)
        if ha != hb:
            return "%s%s: %s in A, %s in B" % (
                p, name, "set" if ha else "absent", "set" if hb else "absent")
        if not ha:
            continue
        if fd.type == FD.TYPE_MESSAGE:
            r = diff(va, vb, p + name)
            if r:
                return r
        elif not same_scalar(fd, va, vb):
            return "%s%s: %s" % (p, name, show2(va, vb))
    if unknown_only(a) != unknown_only(b):
        return "%sunknown fields differ" % p if p else "unknown fields differ"
    return None   # only tolerated differences (node order)


def judge(pa, pb, out):
    """0 equal, 1 differ, 3 A unloadable (skip)."""
    try:
        a = load(pa)
    except Exception as e:  # any reason onnx cannot read it
        out.write("skip: %s: %s\n" % (pa, one_line(e)))
        return 3
    try:
        b = load(pb)
    except Exception as e:
        out.write("mismatch: %s %s: cannot load B: %s\n" % (pa, pb,
                                                            one_line(e)))
        return 1
    r = diff(a, b, "")
    if r:
        out.write("mismatch: %s %s: %s\n" % (pa, pb, r))
        return 1
    return 0


def one_line(e):
    s = " ".join(str(e).split())
    return (s[:200] + "...") if len(s) > 200 else (s or type(e).__name__)


def read_lines(path):
    with open(path) as f:
        return [ln.rstrip("\n") for ln in f if ln.strip()]


def main(argv):
    if len(argv) == 3 and argv[1] == "--list":
        bad = skipped = n = 0
        for ln in read_lines(argv[2]):
            parts = ln.split("\t") if "\t" in ln else ln.split()
            if len(parts) != 2:
                sys.stderr.write("roundtrip_judge: bad line %r\n" % ln)
                return 2
            n += 1
            r = judge(parts[0], parts[1], sys.stdout)
            bad += r == 1
            skipped += r == 3
        sys.stderr.write("roundtrip_judge: %d pairs, %d differ, %d skipped\n"
                         % (n, bad, skipped))
        return 1 if bad else 0
    if len(argv) == 3 and argv[1] == "--unloadable":
        for p in read_lines(argv[2]):
            try:
                onnx.load(p)
            except Exception as e:
                sys.stdout.write(p + "\n")
                sys.stderr.write("skip: %s: %s\n" % (p, one_line(e)))
        return 0
    if len(argv) == 3 and not argv[1].startswith("--"):
        r = judge(argv[1], argv[2], sys.stdout)
        return 1 if r else 0   # a skipped pair is no success here
    sys.stderr.write("usage: roundtrip_judge.py A B | --list FILE | "
                     "--unloadable FILE\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
