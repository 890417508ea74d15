"""big_weights.py: models whose weights are far larger than the memory a
test allows, and the checks of what opmig writes from them.

  big_weights.py make DIR N H     DIR/model.onnx: N MatMul layers of [H, H]
                                  float32 weights in DIR/w.data, a sparse
                                  file (~0 bytes on disk) holding seeded
                                  values at 64 places per weight, zeros
                                  elsewhere; every weight differs
  big_weights.py qdq IN OUT sym|asym
                                  OUT (opmig quantize of IN, int8 QDQ
                                  weights, per channel or per tensor,
                                  symmetric or not) holds
                                  every weight as DequantizeLinear of
                                  int8 codes in its external data, with
                                  the scales and zero points of the
                                  weight's range (per channel: each
                                  column's), and the codes of the seeded
                                  places and of zeros are those values
                                  quantized (round half to even)
  big_weights.py make-bn DIR N C [shared]
                                  DIR/model.onnx: N 1x1 Conv layers of [C, C,
                                  1, 1] float32 weights in DIR/w.data (sparse,
                                  seeded as make's; shared: all read w0),
                                  each followed by a BatchNormalization of
                                  seeded parameters (inline, epsilon 1e-3)
  big_weights.py bn IN OUT        OUT (opmig's fuse-batch-norm of make-bn's
                                  IN) has no BatchNormalization; every Conv
                                  reads a weight in OUT's external data
                                  whose seeded places hold w * s (s = scale
                                  / sqrt(var + eps) of its output channel,
                                  in float64, rounded to float32), zeros
                                  between them, and a bias (0 - mean) * s +
                                  bias, as numpy computes them
  big_weights.py make-i64 DIR N [wide]
                                  DIR/model.onnx: Gather of a float input by
                                  N int64 indices in DIR/c.data (sparse:
                                  seeded int32-range values at 64 places,
                                  zeros elsewhere; wide: the last one 2^33)
  big_weights.py i64 IN OUT       OUT (opmig's narrow-int64 of make-i64's IN)
                                  gathers by int32 indices in its external
                                  data holding IN's values
  big_weights.py usage CMD...     run CMD; print its exit code, page faults,
                                  bytes read by read calls and peak
                                  resident KiB ("rc faults rchar maxrss")
  big_weights.py ort IN OUT...    onnxruntime-node loads IN and every OUT
                                  and computes the same (float16 weights:
                                  within their rounding)
  big_weights.py check IN OUT     OUT (written by opmig from IN) passes
                                  onnx.checker's full check with its
                                  external data, keeps the interface, and
                                  every weight holds IN's values (float16
                                  ones rounded as numpy rounds)
  big_weights.py external IN OUT...
                                  every OUT (written by opmig from IN,
                                  weights maybe quantized) passes
                                  onnx.checker's full check with its
                                  external data and keeps every
                                  initializer of 1 KiB or more in
                                  OUT.data; onnxruntime-node runs IN and
                                  each OUT to outputs of cosine >= 0.99

Run with /usr/bin/python3 (onnx 1.12, numpy) by tests/cli/t0310-big-weights.sh.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, mapping, numpy_helper

PLACES = 64


def places(numel, k):
    """The seeded positions and values of weight k."""
    rng = np.random.default_rng(1000 + k)
    pos = np.unique(np.concatenate([[0, numel - 1], rng.integers(0, numel, PLACES - 2)]))
    return pos, rng.standard_normal(len(pos)).astype(np.float32) * 0.5


def make(folder, n, h):
    os.makedirs(folder, exist_ok=True)
    inits, nodes, off, x = [], [], 0, "x"
    numel = h * h
    for k in range(n):
        t = TensorProto()
        t.name, t.data_type = "w%d" % k, TensorProto.FLOAT
        t.dims.extend([h, h])
        t.data_location = TensorProto.EXTERNAL
        for key, val in (("location", "w.data"), ("offset", str(off)),
                         ("length", str(4 * numel))):
            e = t.external_data.add()
            e.key, e.value = key, val
        inits.append(t)
        off += 4 * numel
        nodes.append(helper.make_node("MatMul", [x, t.name], ["y%d" % k]))
        x = "y%d" % k
    g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, h])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, h])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(folder, "model.onnx"))
    with open(os.path.join(folder, "w.data"), "wb") as f:
        f.truncate(off)
        for k in range(n):
            pos, val = places(numel, k)
            for p, v in zip(pos, val):
                f.seek(4 * numel * k + 4 * int(p))
                f.write(v.tobytes())


BN_EPS = 1e-3


def bn_params(c, k):
    """The seeded scale, bias, mean and var of layer k's BatchNormalization."""
    rng = np.random.default_rng(2000 + k)
    sc, bi, mu = (rng.standard_normal(c).astype(np.float32) for _ in range(3))
    var = (0.5 + np.abs(rng.standard_normal(c))).astype(np.float32)
    return sc, bi, mu, var


def make_bn(folder, n, c, shared):
    os.makedirs(folder, exist_ok=True)
    inits, nodes, off, x = [], [], 0, "x"
    numel = c * c
    for k in range(n):
        names = ["bn%d_%s" % (k, p) for p in ("scale", "bias", "mean", "var")]
        inits += [numpy_helper.from_array(a, nm) for a, nm in zip(bn_params(c, k), names)]
        nodes.append(helper.make_node("Conv", [x, "w0" if shared else "w%d" % k], ["c%d" % k],
                                      name="conv%d" % k))
        nodes.append(helper.make_node("BatchNormalization", ["c%d" % k] + names, ["y%d" % k],
                                      name="bn%d" % k, epsilon=BN_EPS))
        x = "y%d" % k
        if shared and k:
            continue
        t = TensorProto()
        t.name, t.data_type = "w%d" % k, TensorProto.FLOAT
        t.dims.extend([c, c, 1, 1])
        t.data_location = TensorProto.EXTERNAL
        for key, val in (("location", "w.data"), ("offset", str(off)),
                         ("length", str(4 * numel))):
            e = t.external_data.add()
            e.key, e.value = key, val
        inits.append(t)
        off += 4 * numel
    g = helper.make_graph(nodes, "big_bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 1, 1])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, 1, 1])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(folder, "model.onnx"))
    with open(os.path.join(folder, "w.data"), "wb") as f:
        f.truncate(off)
        for k in range(1 if shared else n):
            pos, val = places(numel, k)
            for p, v in zip(pos, val):
                f.seek(4 * numel * k + 4 * int(p))
                f.write(v.tobytes())


def i64_places(n, wide):
    pos, _ = places(n, 0)
    val = np.random.default_rng(3000).integers(-2 ** 31, 2 ** 31, len(pos), dtype=np.int64)
    if wide:
        val[-1] = 2 ** 33          # pos[-1] is n - 1
    return pos, val


def make_i64(folder, n, wide):
    os.makedirs(folder, exist_ok=True)
    t = TensorProto()
    t.name, t.data_type = "c", TensorProto.INT64
    t.dims.extend([n])
    t.data_location = TensorProto.EXTERNAL
    for key, val in (("location", "c.data"), ("offset", "0"), ("length", str(8 * n))):
        e = t.external_data.add()
        e.key, e.value = key, val
    g = helper.make_graph([helper.make_node("Gather", ["x", "c"], ["y"])], "big_i64",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, 2])], [t])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(folder, "model.onnx"))
    with open(os.path.join(folder, "c.data"), "wb") as f:
        f.truncate(8 * n)
        for p, v in zip(*i64_places(n, wide)):
            f.seek(8 * int(p))
            f.write(v.tobytes())


def read_ext(model_path, t):
    kv = {e.key: e.value for e in t.external_data}
    if t.data_location != TensorProto.EXTERNAL or "location" not in kv:
        return None
    off, length = int(kv.get("offset", 0)), int(kv["length"])
    return open(os.path.join(os.path.dirname(model_path), kv["location"]), "rb"), off, length


def check(src, out):
    onnx.checker.check_model(out, full_check=True)
    a = onnx.load(src, load_external_data=False)
    b = onnx.load(out, load_external_data=False)
    names = lambda vis: [(v.name, v.type.tensor_type.elem_type) for v in vis]  # noqa: E731
    if names(a.graph.input) != names(b.graph.input) or names(a.graph.output) != names(b.graph.output):
        sys.exit("interface changed: %s -> %s" % (names(a.graph.input), names(b.graph.input)))
    src_w = {t.name: t for t in a.graph.initializer}
    seen = 0
    for t in b.graph.initializer:
        base = t.name[:-5] if t.name.endswith("_fp16") else t.name
        if base not in src_w:
            continue
        k = int(base[1:])
        numel = int(np.prod(t.dims))
        pos, val = places(numel, k)
        r = read_ext(out, t)
        if r is None:
            sys.exit("%s: weight written inline, want external data" % t.name)
        f, off, length = r
        if t.data_type == TensorProto.FLOAT16:
            es, want, dt = 2, val.astype(np.float16), np.float16
        elif t.data_type == TensorProto.FLOAT:
            es, want, dt = 4, val, np.float32
        else:
            sys.exit("%s: unexpected dtype %d" % (t.name, t.data_type))
        if length != es * numel:
            sys.exit("%s: %d bytes, want %d" % (t.name, length, es * numel))
        with f:
            got = []
            for p in pos:
                f.seek(off + es * int(p))
                got.append(np.frombuffer(f.read(es), dt)[0])
            # a place between two seeded ones holds zero
            mid = int(pos[0] + pos[1]) // 2
            if mid not in set(pos.tolist()):
                f.seek(off + es * mid)
                if np.frombuffer(f.read(es), dt)[0] != 0:
                    sys.exit("%s: element %d is not zero" % (t.name, mid))
        got = np.array(got, dt)
        if not np.array_equal(got, want):
            bad = int(np.argmax(got != want))
            sys.exit("%s: element %d is %r, want %r" % (t.name, int(pos[bad]), got[bad], want[bad]))
        seen += 1
    if seen != len(src_w):
        sys.exit("%d of %d weights found in %s" % (seen, len(src_w), out))
    print("ok: %d weights, interface kept" % seen)


def external(src, outs, workdir):
    for out in outs:
        onnx.checker.check_model(out, full_check=True)
        m = onnx.load(out, load_external_data=False)
        want = os.path.basename(out) + ".data"
        size = os.path.getsize(os.path.join(os.path.dirname(out), want))
        n = 0
        for t in m.graph.initializer:
            nbytes = int(np.prod(t.dims)) * mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type].itemsize
            if nbytes < 1024:
                continue
            r = read_ext(out, t)
            if r is None:
                sys.exit("%s: %s (%d bytes) written inline, want external data" % (out, t.name, nbytes))
            r[0].close()
            kv = {e.key: e.value for e in t.external_data}
            if kv["location"] != want or r[1] + r[2] > size:
                sys.exit("%s: %s is in %s at %d + %d, want %s (%d bytes)" %
                         (out, t.name, kv["location"], r[1], r[2], want, size))
            n += 1
        if n == 0:
            sys.exit("%s: no initializer of 1 KiB or more" % out)
        print("ok: %s: %d initializers in %s" % (out, n, want))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ort"))
    import ortlib
    why = ortlib.available()
    if why:
        print("skip: %s" % why)
        return
    m = onnx.load(src, load_external_data=False)
    h = m.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    feeds = {"x": np.ones((1, h), np.float32)}
    res = ortlib.run_many([(p, feeds) for p in [src] + outs], workdir)
    for p, r in zip([src] + outs, res):
        if isinstance(r, str):
            sys.exit("onnxruntime refused %s: %s" % (p, r))
    ref = res[0][0].astype(np.float64).ravel()
    for p, r in zip(outs, res[1:]):
        got = r[0].astype(np.float64).ravel()
        cos = float(np.dot(ref, got) / (np.linalg.norm(ref) * np.linalg.norm(got) + 1e-30))
        if got.shape != ref.shape or not cos >= 0.99:
            sys.exit("%s computes other values than %s (cosine %g)" % (p, src, cos))
    print("ok: onnxruntime-node %s ran %d models alike" % (ortlib.version(), len(res)))


def qz_params(lo, hi, sym):
    """opmig's int8 scale and zero point of [lo, hi] (symmetric: of
    [-a, a], a the larger magnitude, zero point 0)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if sym:
        s = np.float32(max(-lo, hi) / 127.0)
        return (s, 0) if s >= np.float32(1.1754944e-38) and np.isfinite(s) else (np.float32(1.0), 0)
    s = np.float32((hi - lo) / 255.0)
    if not (s >= np.float32(1.1754944e-38)) or not np.isfinite(s):
        return np.float32(1.0), -128
    z = np.rint(-128.0 - lo / float(s))
    return s, int(min(max(z, -128), 127))


def read_at(f, off, dt, idx):
    es = np.dtype(dt).itemsize
    out = []
    for i in idx:
        f.seek(off + es * int(i))
        out.append(np.frombuffer(f.read(es), dt)[0])
    return np.array(out, dt)


def qdq(src, out, sym):
    onnx.checker.check_model(out, full_check=True)
    a = onnx.load(src, load_external_data=False)
    b = onnx.load(out, load_external_data=False)
    inits = {t.name: t for t in b.graph.initializer}
    dq = {n.input[0]: n for n in b.graph.node if n.op_type == "DequantizeLinear"}
    seen = 0
    for w in a.graph.initializer:
        k, (h0, h1) = int(w.name[1:]), w.dims
        numel = h0 * h1
        pos, val = places(numel, k)
        q, sc, zp = (inits.get(w.name + x) for x in ("_quantized", "_scale", "_zero_point"))
        if q is None or sc is None or zp is None or q.name not in dq:
            sys.exit("%s: no DequantizeLinear of %s_quantized" % (w.name, w.name))
        if q.data_type != TensorProto.INT8 or list(q.dims) != [h0, h1]:
            sys.exit("%s: codes of type %d dims %s" % (w.name, q.data_type, list(q.dims)))
        per_ch = len(sc.dims) == 1
        axis = ([x.i for x in dq[q.name].attribute if x.name == "axis"] or [1])[0]
        if per_ch and (axis != 1 or list(sc.dims) != [h1]):
            sys.exit("%s: per channel along axis %d, %s scales" % (w.name, axis, list(sc.dims)))
        n_ch = h1 if per_ch else 1
        ch = (pos % h1) if per_ch else np.zeros(len(pos), np.int64)
        # the expected scales and zero points of the channels holding values
        # (the others hold zeros only)
        lo, hi = np.zeros(n_ch), np.zeros(n_ch)
        np.minimum.at(lo, ch, val.astype(np.float64))
        np.maximum.at(hi, ch, val.astype(np.float64))
        got = []
        for t, dt in ((sc, np.float32), (zp, np.int8)):
            r = read_ext(out, t)
            if r is None:        # small: inline
                got.append(numpy_helper.to_array(t).astype(dt).ravel()[np.unique(ch)])
                continue
            with r[0] as f:
                got.append(read_at(f, r[1], dt, np.unique(ch)))
        got_s, got_z = got
        for c, s_, z_ in zip(np.unique(ch), got_s, got_z):
            ws, wz = qz_params(lo[c], hi[c], sym)
            if s_ != ws or z_ != wz:
                sys.exit("%s channel %d: scale %r zero point %d, want %r %d" % (w.name, c, s_, z_, ws, wz))
        scale_of = dict(zip(np.unique(ch).tolist(), got_s))
        zp_of = dict(zip(np.unique(ch).tolist(), got_z.astype(np.int64)))
        r = read_ext(out, q)
        if r is None:
            sys.exit("%s: codes written inline, want external data" % w.name)
        f, off, length = r
        if length != numel:
            sys.exit("%s: %d bytes of codes, want %d" % (w.name, length, numel))
        with f:
            codes = read_at(f, off, np.int8, pos).astype(np.int64)
            # a place between two seeded ones holds the zero point
            mid = int(pos[0] + pos[1]) // 2
            zero = read_at(f, off, np.int8, [mid])[0] if mid not in set(pos.tolist()) else None
        want = [int(min(max(np.rint(np.float32(v) / scale_of[c]) + zp_of[c], -128), 127))
                for v, c in zip(val, ch.tolist())]
        if list(codes) != want:
            bad = int(np.argmax(np.array(codes) != np.array(want)))
            sys.exit("%s: code at %d is %d, want %d" % (w.name, int(pos[bad]), codes[bad], want[bad]))
        if zero is not None:
            c = int(mid % h1) if per_ch else 0
            z_ = zp_of.get(c, qz_params(0, 0, sym)[1])
            if zero != z_:
                sys.exit("%s: code at %d is %d, want the zero point %d" % (w.name, mid, zero, z_))
        seen += 1
    if seen != len(a.graph.initializer):
        sys.exit("%d of %d weights found in %s" % (seen, len(a.graph.initializer), out))
    print("ok: %d weights quantized, codes and scales as computed here" % seen)


def bn(src, out):
    onnx.checker.check_model(out, full_check=True)
    a = onnx.load(src, load_external_data=False)
    b = onnx.load(out, load_external_data=False)
    left = [n.name for n in b.graph.node if n.op_type == "BatchNormalization"]
    if left:
        sys.exit("BatchNormalization left: %s" % left)
    inits = {t.name: t for t in b.graph.initializer}
    convs = [n for n in b.graph.node if n.op_type == "Conv"]
    src_w = [n.input[1] for n in a.graph.node if n.op_type == "Conv"]
    if len(convs) != len(src_w):
        sys.exit("%d Convs, want %d" % (len(convs), len(src_w)))
    for k, conv in enumerate(convs):
        if len(conv.input) != 3 or conv.input[1] not in inits or conv.input[2] not in inits:
            sys.exit("%s: inputs %s, want a folded weight and bias" % (conv.name, list(conv.input)))
        w, bias = inits[conv.input[1]], inits[conv.input[2]]
        c = w.dims[0]
        numel = int(np.prod(w.dims))
        sc, bi, mu, var = bn_params(c, k)
        s = sc.astype(np.float64) / np.sqrt(var.astype(np.float64) + np.float64(np.float32(BN_EPS)))
        r = read_ext(out, w)
        if r is None:
            sys.exit("%s: weight written inline, want external data" % w.name)
        f, off, length = r
        if w.data_type != TensorProto.FLOAT or length != 4 * numel:
            sys.exit("%s: type %d, %d bytes, want float and %d" % (w.name, w.data_type, length, 4 * numel))
        pos, val = places(numel, int(src_w[k][1:]))
        # element p of [C, C, 1, 1] is in output channel p // C
        want = (val.astype(np.float64) * s[pos // (numel // c)]).astype(np.float32)
        with f:
            got = read_at(f, off, np.float32, pos)
            mid = int(pos[0] + pos[1]) // 2
            zero = read_at(f, off, np.float32, [mid])[0] if mid not in set(pos.tolist()) else 0
        if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
            bad = int(np.argmax(got.view(np.uint32) != want.view(np.uint32)))
            sys.exit("%s: element %d is %r, want %r" % (w.name, int(pos[bad]), got[bad], want[bad]))
        if zero != 0:
            sys.exit("%s: element %d is %r, want 0" % (w.name, mid, zero))
        r = read_ext(out, bias)
        if r is None:
            got_b = numpy_helper.to_array(bias)
        else:
            with r[0] as f:
                f.seek(r[1])
                got_b = np.frombuffer(f.read(4 * c), np.float32)
        want_b = ((0.0 - mu.astype(np.float64)) * s + bi.astype(np.float64)).astype(np.float32)
        if not np.array_equal(np.asarray(got_b, np.float32).view(np.uint32), want_b.view(np.uint32)):
            sys.exit("%s: the folded bias differs from numpy's" % bias.name)
    print("ok: %d BatchNormalizations folded, weights and biases as numpy computes them" % len(convs))


def i64(src, out):
    onnx.checker.check_model(out, full_check=True)
    a = onnx.load(src, load_external_data=False)
    b = onnx.load(out, load_external_data=False)
    n = a.graph.initializer[0].dims[0]
    inits = {t.name: t for t in b.graph.initializer}
    gather = [x for x in b.graph.node if x.op_type == "Gather"]
    if len(gather) != 1 or gather[0].input[1] not in inits:
        sys.exit("no Gather by an initializer: %s" % [x.op_type for x in b.graph.node])
    c = inits[gather[0].input[1]]
    r = read_ext(out, c)
    if c.data_type != TensorProto.INT32 or list(c.dims) != [n] or r is None:
        sys.exit("%s: type %d dims %s %s, want int32 [%d] in external data" %
                 (c.name, c.data_type, list(c.dims), "external" if r else "inline", n))
    f, off, length = r
    if length != 4 * n:
        sys.exit("%s: %d bytes, want %d" % (c.name, length, 4 * n))
    pos, want = i64_places(n, False)
    with f:
        got = read_at(f, off, np.int32, pos)
        mid = int(pos[0] + pos[1]) // 2
        zero = read_at(f, off, np.int32, [mid])[0] if mid not in set(pos.tolist()) else 0
    if not np.array_equal(got.astype(np.int64), want) or zero != 0:
        sys.exit("%s: the int32 indices differ from the int64 ones" % c.name)
    print("ok: %d int64 indices narrowed to int32 in %s" % (n, os.path.basename(out) + ".data"))


def usage(cmd):
    import resource
    import subprocess
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    # the exited child's I/O counts, read before it is reaped
    os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
    with open("/proc/%d/io" % p.pid) as f:
        io = dict(line.split(": ") for line in f.read().splitlines())
    rc = p.wait()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(rc, ru.ru_minflt + ru.ru_majflt, int(io["rchar"]), ru.ru_maxrss)


def ort(src, outs, workdir):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ort"))
    import ortlib
    why = ortlib.available()
    if why:
        print("skip: %s" % why)
        return
    m = onnx.load(src, load_external_data=False)
    h = m.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    # the weights are sparse: an input of ones reaches the seeded values
    feeds = {"x": np.ones((1, h), np.float32)}
    res = ortlib.run_many([(p, feeds) for p in [src] + outs], workdir)
    for p, r in zip([src] + outs, res):
        if isinstance(r, str):
            sys.exit("onnxruntime refused %s: %s" % (p, r))
    ref = res[0][0]
    for p, r in zip(outs, res[1:]):
        if r[0].shape != ref.shape or not np.allclose(r[0], ref, rtol=2e-3, atol=1e-3 * (1 + np.abs(ref).max())):
            sys.exit("%s computes other values than %s (max diff %g)" % (p, src, np.abs(r[0] - ref).max()))
    print("ok: onnxruntime-node %s ran %d models alike" % (ortlib.version(), len(res)))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "make-bn" and sys.argv[5:] in ([], ["shared"]):
        make_bn(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), len(sys.argv) == 6)
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "make-i64" and sys.argv[4:] in ([], ["wide"]):
        make_i64(sys.argv[2], int(sys.argv[3]), len(sys.argv) == 5)
    elif len(sys.argv) == 4 and sys.argv[1] == "i64":
        i64(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "bn":
        bn(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 2 and sys.argv[1] == "usage":
        usage(sys.argv[2:])
    elif len(sys.argv) > 3 and sys.argv[1] == "ort":
        ort(sys.argv[2], sys.argv[3:], os.path.join(os.path.dirname(os.path.abspath(sys.argv[3])), "ort"))
    elif len(sys.argv) > 3 and sys.argv[1] == "external":
        external(sys.argv[2], sys.argv[3:], os.path.join(os.path.dirname(os.path.abspath(sys.argv[3])), "ort"))
    elif len(sys.argv) == 5 and sys.argv[1] == "qdq" and sys.argv[4] in ("sym", "asym"):
        qdq(sys.argv[2], sys.argv[3], sys.argv[4] == "sym")
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
