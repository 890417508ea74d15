#!/usr/bin/python3
"""gen_models.py OUTDIR: small models shaped like real exported ones, for
the OpenCV end-to-end test (tests/cli/t1510-opencv.sh), with weights from
a seeded numpy generator (the same bytes every run):

  mobilenet_block.onnx  Conv+BatchNormalization+Clip(0,6), depthwise Conv,
                        1x1 Conv, residual Add, GlobalAveragePool, Flatten,
                        Gemm, Softmax (opset 13, input 1x3x32x32)
  se_resnet_block.onnx  Conv+Relu, squeeze-excite (GlobalAveragePool, 1x1
                        Convs, HardSigmoid, Mul by the per-channel scale),
                        Add, MaxPool (opset 11)
  unet_tiny.onnx        encoder (Conv, MaxPool), decoder (Resize nearest x2,
                        ConvTranspose stride 2), Concat skip, Sigmoid
                        (opset 13)
  yolo_head.onnx        1x1 Conv, Reshape/Transpose to anchors, Sigmoid,
                        Slice, Mul/Add with grid constants, Concat (opset 12)
  transformer_block.onnx  LayerNorm as exporters write it before opset 17
                        (ReduceMean, Sub, Pow, Sqrt, Div), attention with
                        MatMul/Reshape/Transpose/Softmax, Gelu through Erf,
                        residual Adds (opset 13, input 1x8x16)
  lstm_tagger.onnx      LSTM (hidden 12) over [5, 1, 8], Squeeze, MatMul,
                        Add (opset 13)
Needs onnx and numpy (/usr/bin/python3)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Net:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return '%s%d' % (p, self.n)

    def const(self, arr, p='w'):
        nm = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def w(self, *shape, scale=0.3):
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32))

    def op(self, op, ins, n_out=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=outs[0], **attrs))
        return outs[0] if n_out == 1 else outs

    def conv(self, x, cin, cout, k, s=1, group=1, bias=True):
        ins = [x, self.w(cout, cin // group, k, k)]
        if bias:
            ins.append(self.w(cout, scale=0.1))
        return self.op('Conv', ins, kernel_shape=[k, k], strides=[s, s], group=group,
                       pads=[k // 2] * 4)

    def bn(self, x, c):
        return self.op('BatchNormalization', [
            x, self.const(1 + 0.1 * self.rng.standard_normal(c).astype(np.float32)),
            self.w(c, scale=0.1), self.w(c, scale=0.1),
            self.const((1 + 0.2 * self.rng.random(c)).astype(np.float32))], epsilon=1e-5)

    def save(self, path, inputs, outputs, opset):
        g = helper.make_graph(self.nodes, os.path.basename(path)[:-5], inputs, outputs,
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)],
                              producer_name='opmig-tests')
        m.ir_version = 7
        onnx.checker.check_model(m, full_check=True)
        onnx.save(m, path)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def mobilenet_block(path):
    n = Net(1)
    x = 'image'
    y = n.op('Clip', [n.bn(n.conv(x, 3, 8, 3, s=2, bias=False), 8),
                      n.const(np.float32(0)), n.const(np.float32(6))])
    d = n.op('Relu', [n.bn(n.conv(y, 8, 8, 3, group=8, bias=False), 8)])
    p = n.conv(d, 8, 8, 1)
    r = n.op('Add', [p, y])
    e = n.conv(r, 8, 16, 1)
    f = n.op('Flatten', [n.op('GlobalAveragePool', [e])])
    logits = n.op('Gemm', [f, n.w(10, 16), n.w(10, scale=0.1)], transB=1)
    n.nodes.append(helper.make_node('Softmax', [logits], ['probs'], name='probs', axis=1))
    n.save(path, [vi(x, [1, 3, 32, 32])], [vi('probs', [1, 10])], 13)


def se_resnet_block(path):
    n = Net(2)
    x = 'input'
    a = n.op('Relu', [n.conv(x, 4, 8, 3)])
    s = n.op('GlobalAveragePool', [a])
    s = n.op('Relu', [n.conv(s, 8, 4, 1)])
    s = n.op('HardSigmoid', [n.conv(s, 4, 8, 1)], alpha=0.2, beta=0.5)
    b = n.op('Mul', [a, s])
    c = n.op('Add', [b, n.conv(x, 4, 8, 1)])
    n.nodes.append(helper.make_node('MaxPool', [c], ['out'], name='out', kernel_shape=[2, 2],
                                    strides=[2, 2]))
    n.save(path, [vi(x, [1, 4, 16, 16])], [vi('out', [1, 8, 8, 8])], 11)


def unet_tiny(path):
    n = Net(3)
    x = 'image'
    e1 = n.op('Relu', [n.conv(x, 3, 8, 3)])
    e2 = n.op('Relu', [n.conv(n.op('MaxPool', [e1], kernel_shape=[2, 2], strides=[2, 2]),
                               8, 16, 3)])
    up1 = n.op('Resize', [e2, '', n.const(np.array([1, 1, 2, 2], np.float32))], mode='nearest')
    up2 = n.op('ConvTranspose', [e2, n.w(16, 8, 2, 2), n.w(8, scale=0.1)], kernel_shape=[2, 2],
               strides=[2, 2])
    cat = n.op('Concat', [e1, n.conv(up1, 16, 8, 1), up2], axis=1)
    n.nodes.append(helper.make_node('Sigmoid', [n.conv(cat, 24, 1, 3)], ['mask'], name='mask'))
    n.save(path, [vi(x, [1, 3, 16, 16])], [vi('mask', [1, 1, 16, 16])], 13)


def yolo_head(path):
    n = Net(4)
    x = 'features'
    na, nc, h, w = 3, 2, 8, 8
    p = n.conv(x, 8, na * (5 + nc), 1)
    p = n.op('Reshape', [p, n.const(np.array([1, na, 5 + nc, h * w], np.int64))])
    p = n.op('Sigmoid', [n.op('Transpose', [p], perm=[0, 1, 3, 2])])
    xy = n.op('Slice', [p, n.const(np.array([0], np.int64)), n.const(np.array([2], np.int64)),
                        n.const(np.array([3], np.int64))])
    wh = n.op('Slice', [p, n.const(np.array([2], np.int64)), n.const(np.array([4], np.int64)),
                        n.const(np.array([3], np.int64))])
    rest = n.op('Slice', [p, n.const(np.array([4], np.int64)), n.const(np.array([5 + nc], np.int64)),
                          n.const(np.array([3], np.int64))])
    gy, gx = np.meshgrid(np.arange(h), np.arange(w), indexing='ij')
    grid = np.stack([gx, gy], -1).reshape(1, 1, h * w, 2).astype(np.float32)
    xy = n.op('Mul', [n.op('Add', [n.op('Mul', [xy, n.const(np.float32(2))]), n.const(grid - 0.5)]),
                      n.const(np.float32(8))])
    wh = n.op('Mul', [n.op('Mul', [wh, wh]), n.const(np.float32(16))])
    n.nodes.append(helper.make_node('Concat', [xy, wh, rest], ['boxes'], name='boxes', axis=3))
    n.save(path, [vi(x, [1, 8, h, w])], [vi('boxes', [1, na, h * w, 5 + nc])], 12)


def transformer_block(path):
    n = Net(5)
    x = 'hidden'
    d, heads, t = 16, 2, 8

    def layer_norm(v):
        mu = n.op('ReduceMean', [v], axes=[-1])
        c = n.op('Sub', [v, mu])
        var = n.op('ReduceMean', [n.op('Pow', [c, n.const(np.float32(2))])], axes=[-1])
        s = n.op('Sqrt', [n.op('Add', [var, n.const(np.float32(1e-5))])])
        return n.op('Add', [n.op('Mul', [n.op('Div', [c, s]), n.w(d, scale=0.5)]), n.w(d, scale=0.1)])

    def heads_of(v):
        v = n.op('Reshape', [v, n.const(np.array([1, t, heads, d // heads], np.int64))])
        return n.op('Transpose', [v], perm=[0, 2, 1, 3])

    h = layer_norm(x)
    q, k, v = (heads_of(n.op('Add', [n.op('MatMul', [h, n.w(d, d)]), n.w(d, scale=0.1)]))
               for _ in range(3))
    att = n.op('MatMul', [q, n.op('Transpose', [k], perm=[0, 1, 3, 2])])
    att = n.op('Softmax', [n.op('Div', [att, n.const(np.float32(np.sqrt(d // heads)))])], axis=-1)
    o = n.op('Transpose', [n.op('MatMul', [att, v])], perm=[0, 2, 1, 3])
    o = n.op('Reshape', [o, n.const(np.array([1, t, d], np.int64))])
    r1 = n.op('Add', [x, n.op('MatMul', [o, n.w(d, d)])])
    f = n.op('Add', [n.op('MatMul', [layer_norm(r1), n.w(d, 2 * d)]), n.w(2 * d, scale=0.1)])
    g = n.op('Mul', [n.op('Mul', [f, n.op('Add', [n.op('Erf', [n.op('Div', [f, n.const(np.float32(np.sqrt(2)))])]),
                                                    n.const(np.float32(1))])]), n.const(np.float32(0.5))])
    n.nodes.append(helper.make_node('Add', [r1, n.op('MatMul', [g, n.w(2 * d, d)])], ['out'], name='out'))
    n.save(path, [vi(x, [1, t, d])], [vi('out', [1, t, d])], 13)


def lstm_tagger(path):
    n = Net(6)
    x = 'tokens'
    hid = 12
    y = n.op('LSTM', [x, n.w(1, 4 * hid, 8), n.w(1, 4 * hid, hid), n.w(1, 8 * hid, scale=0.1)],
             n_out=1, hidden_size=hid)
    y = n.op('Squeeze', [y, n.const(np.array([1], np.int64))])
    n.nodes.append(helper.make_node('Add', [n.op('MatMul', [y, n.w(hid, 4)]), n.w(4, scale=0.1)],
                                    ['tags'], name='tags'))
    n.save(path, [vi(x, [5, 1, 8])], [vi('tags', [5, 1, 4])], 13)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for f in (mobilenet_block, se_resnet_block, unet_tiny, yolo_head, transformer_block,
              lstm_tagger):
        f(os.path.join(out, f.__name__ + '.onnx'))


if __name__ == '__main__':
    main()
