#!/usr/bin/env python3
"""gen_registry.py: generate ir/registry_table.c, opmig's operator table,
from the ONNX spec (docs/Changelog.md and docs/Changelog-ml.md of onnx/onnx)
plus a hand-written list of com.microsoft contrib operators.

Usage: python3 tools/gen_registry.py CHANGELOG.md [CHANGELOG-ml.md ...]
       [-o ir/registry_table.c]

Each "### <a name=...>**Op-N**</a>" section gives one entry: domain (from
the "# <domain>" heading above it), name, since_version, deprecated mark,
inputs/outputs with their (optional)/(variadic) markers and arity bounds
("#### Inputs (1 - &#8734;)"), attributes with type, required flag and
default, type constraints, and the first sentence of the description.
The output table is sorted by (domain, name, since_version).
"""
import argparse
import re
import sys

UNBOUNDED = 2147483647  # onnx's "infinite" arity, as python-onnx reports it

ATTR_TYPES = {
    "float": "IR_ATTR_FLOAT", "int": "IR_ATTR_INT", "string": "IR_ATTR_STRING",
    "tensor": "IR_ATTR_TENSOR", "graph": "IR_ATTR_GRAPH",
    "sparse_tensor": "IR_ATTR_SPARSE_TENSOR", "type_proto": "IR_ATTR_TYPE_PROTO",
    "list of floats": "IR_ATTR_FLOATS", "list of ints": "IR_ATTR_INTS",
    "list of strings": "IR_ATTR_STRINGS", "list of tensors": "IR_ATTR_TENSORS",
    "list of graphs": "IR_ATTR_GRAPHS",
    "list of sparse_tensors": "IR_ATTR_SPARSE_TENSORS",
    "list of type_protos": "IR_ATTR_TYPE_PROTOS",
}

# com.microsoft contrib operators common in exported transformer models,
# written by hand from onnxruntime's docs/ContribOperators.md (same layout
# as the ONNX changelog, so the same parser reads them).  LayerNormalization
# and SimplifiedLayerNormalization are registered by onnxruntime in the
# default domain at version 1; opmig lists them under com.microsoft so they
# cannot shadow ai.onnx LayerNormalization-17.  onnxruntime's doc prints no
# "(default is ...)" marks; defaults below are the effective ones its
# descriptions state (e.g. "Default value is 0").  Checked against the doc:
# Attention, Gelu, GroupQueryAttention, MatMulNBits, MultiHeadAttention,
# QuickGelu, RotaryEmbedding, SkipLayerNormalization,
# SkipSimplifiedLayerNormalization; written from onnxruntime's schemas
# without that check: BiasGelu, FastGelu, FusedMatMul, LayerNormalization,
# SimplifiedLayerNormalization.  MatMulNBits' bits default (4) is its
# schema's: the doc states none.
CONTRIB_MD = """
# com.microsoft
### <a name="Attention-1"></a>**Attention-1**</a>
  Multi-Head Attention that can be either unidirectional (like GPT-2) or bidirectional (like BERT).
#### Attributes
<dl>
<dt><tt>do_rotary</tt> : int (default is 0)</dt>
<dt><tt>mask_filter_value</tt> : float (default is -10000.0)</dt>
<dt><tt>num_heads</tt> : int (required)</dt>
<dt><tt>past_present_share_buffer</tt> : int</dt>
<dt><tt>qkv_hidden_sizes</tt> : list of ints</dt>
<dt><tt>rotary_embedding_dim</tt> : int</dt>
<dt><tt>scale</tt> : float</dt>
<dt><tt>unidirectional</tt> : int (default is 0)</dt>
</dl>
#### Inputs (2 - 7)
<dl>
<dt><tt>input</tt> : T</dt>
<dt><tt>weights</tt> : T</dt>
<dt><tt>bias</tt> (optional) : T</dt>
<dt><tt>mask_index</tt> (optional) : M</dt>
<dt><tt>past</tt> (optional) : T</dt>
<dt><tt>attention_bias</tt> (optional) : T</dt>
<dt><tt>past_sequence_length</tt> (optional) : M</dt>
</dl>
#### Outputs (1 - 2)
<dl>
<dt><tt>output</tt> : T</dt>
<dt><tt>present</tt> (optional) : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float), tensor(float16), tensor(bfloat16)</dt>
<dt><tt>M</tt> : tensor(int32)</dt>
</dl>
### <a name="BiasGelu-1"></a>**BiasGelu-1**</a>
  Bias Gelu: Y = Gelu(A + B), B a bias vector broadcast along the last axis of A.
#### Inputs
<dl>
<dt><tt>A</tt> : T</dt>
<dt><tt>B</tt> : T</dt>
</dl>
#### Outputs
<dl>
<dt><tt>C</tt> : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float16), tensor(float), tensor(double), tensor(bfloat16)</dt>
</dl>
### <a name="FastGelu-1"></a>**FastGelu-1**</a>
  GELU (Gaussian Error Linear Unit) approximation: Y=0.5*X*(1+tanh(0.797885*X+0.035677*X*X*X)) with an optional input of bias that will be added to X before GELU.
#### Inputs (1 - 2)
<dl>
<dt><tt>X</tt> : T</dt>
<dt><tt>bias</tt> (optional) : T</dt>
</dl>
#### Outputs
<dl>
<dt><tt>Y</tt> : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float), tensor(float16), tensor(bfloat16)</dt>
</dl>
### <a name="FusedMatMul-1"></a>**FusedMatMul-1**</a>
  Matrix product that behaves like numpy.matmul, with optional transposes of A and B and a scalar multiplier alpha.
#### Attributes
<dl>
<dt><tt>alpha</tt> : float (default is 1.0)</dt>
<dt><tt>transA</tt> : int (default is 0)</dt>
<dt><tt>transB</tt> : int (default is 0)</dt>
<dt><tt>transBatchA</tt> : int (default is 0)</dt>
<dt><tt>transBatchB</tt> : int (default is 0)</dt>
</dl>
#### Inputs
<dl>
<dt><tt>A</tt> : T</dt>
<dt><tt>B</tt> : T</dt>
</dl>
#### Outputs
<dl>
<dt><tt>Y</tt> : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float16), tensor(float), tensor(double), tensor(bfloat16)</dt>
</dl>
### <a name="Gelu-1"></a>**Gelu-1**</a>
  Gaussian Error Linear Unit: Y = 0.5 * X * (1 + erf(X / sqrt(2))).
#### Inputs
<dl>
<dt><tt>X</tt> : T</dt>
</dl>
#### Outputs
<dl>
<dt><tt>Y</tt> : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float16), tensor(float), tensor(double), tensor(bfloat16)</dt>
</dl>
### <a name="GroupQueryAttention-1"></a>**GroupQueryAttention-1**</a>
  Group Query Self/Cross Attention with KV Cache Quantization Support.
#### Attributes
<dl>
<dt><tt>causal</tt> : int (default is 1)</dt>
<dt><tt>do_rotary</tt> : int (default is 0)</dt>
<dt><tt>k_quant_type</tt> : string</dt>
<dt><tt>kv_cache_bit_width</tt> : int</dt>
<dt><tt>kv_num_heads</tt> : int (required)</dt>
<dt><tt>local_window_size</tt> : int (default is -1)</dt>
<dt><tt>num_heads</tt> : int (required)</dt>
<dt><tt>qk_norm_epsilon</tt> : float (default is 1e-06)</dt>
<dt><tt>qk_output</tt> : int (default is 0)</dt>
<dt><tt>rotary_interleaved</tt> : int (default is 0)</dt>
<dt><tt>scale</tt> : float</dt>
<dt><tt>sliding_window_cache</tt> : int (default is 0)</dt>
<dt><tt>smooth_softmax</tt> : int</dt>
<dt><tt>softcap</tt> : float (default is 0.0)</dt>
<dt><tt>v_quant_type</tt> : string</dt>
</dl>
#### Inputs (7 - 16)
<dl>
<dt><tt>query</tt> : T</dt>
<dt><tt>key</tt> (optional) : T</dt>
<dt><tt>value</tt> (optional) : T</dt>
<dt><tt>past_key</tt> (optional) : T_CACHE</dt>
<dt><tt>past_value</tt> (optional) : T_CACHE</dt>
<dt><tt>seqlens_k</tt> : M</dt>
<dt><tt>total_sequence_length</tt> : M</dt>
<dt><tt>cos_cache</tt> (optional) : T</dt>
<dt><tt>sin_cache</tt> (optional) : T</dt>
<dt><tt>position_ids</tt> (optional) : tensor(int64)</dt>
<dt><tt>attention_bias</tt> (optional) : T</dt>
<dt><tt>head_sink</tt> (optional) : T</dt>
<dt><tt>k_scale</tt> (optional) : T_KV_SCALE</dt>
<dt><tt>v_scale</tt> (optional) : T_KV_SCALE</dt>
<dt><tt>q_norm_weight</tt> (optional) : T</dt>
<dt><tt>k_norm_weight</tt> (optional) : T</dt>
</dl>
#### Outputs (1 - 4)
<dl>
<dt><tt>output</tt> : T</dt>
<dt><tt>present_key</tt> (optional) : T_CACHE</dt>
<dt><tt>present_value</tt> (optional) : T_CACHE</dt>
<dt><tt>output_qk</tt> (optional) : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float16), tensor(bfloat16), tensor(float)</dt>
<dt><tt>T_CACHE</tt> : tensor(float), tensor(float16), tensor(bfloat16), tensor(uint8), tensor(int8), tensor(float8e4m3fn)</dt>
<dt><tt>T_KV_SCALE</tt> : tensor(float)</dt>
<dt><tt>M</tt> : tensor(int32)</dt>
</dl>
### <a name="LayerNormalization-1"></a>**LayerNormalization-1**</a>
  Layer normalization over the axes from axis to the last (onnxruntime's contrib op, registered in the default domain at version 1).
#### Attributes
<dl>
<dt><tt>axis</tt> : int (default is -1)</dt>
<dt><tt>epsilon</tt> : float (default is 1e-05)</dt>
<dt><tt>stash_type</tt> : int (default is 1)</dt>
</dl>
#### Inputs (2 - 3)
<dl>
<dt><tt>X</tt> : T</dt>
<dt><tt>scale</tt> : V</dt>
<dt><tt>B</tt> (optional) : V</dt>
</dl>
#### Outputs (1 - 3)
<dl>
<dt><tt>Y</tt> : V</dt>
<dt><tt>Mean</tt> (optional) : U</dt>
<dt><tt>InvStdDev</tt> (optional) : U</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float16), tensor(float), tensor(double), tensor(bfloat16)</dt>
<dt><tt>U</tt> : tensor(float), tensor(double), tensor(bfloat16)</dt>
<dt><tt>V</tt> : tensor(float16), tensor(float), tensor(double), tensor(bfloat16)</dt>
</dl>
### <a name="MatMulNBits-1"></a>**MatMulNBits-1**</a>
  MatMulNBits performs a matrix multiplication where the right-hand-side matrix (weights) is quantized to N bits.
#### Attributes
<dl>
<dt><tt>K</tt> : int (required)</dt>
<dt><tt>N</tt> : int (required)</dt>
<dt><tt>accuracy_level</tt> : int (default is 0)</dt>
<dt><tt>bits</tt> : int (default is 4)</dt>
<dt><tt>block_size</tt> : int (required)</dt>
<dt><tt>weight_prepacked</tt> : int (default is 0)</dt>
</dl>
#### Inputs (3 - 6)
<dl>
<dt><tt>A</tt> : T1</dt>
<dt><tt>B</tt> : T2</dt>
<dt><tt>scales</tt> : T1</dt>
<dt><tt>zero_points</tt> (optional) : T3</dt>
<dt><tt>g_idx</tt> (optional) : T4</dt>
<dt><tt>bias</tt> (optional) : T1</dt>
</dl>
#### Outputs
<dl>
<dt><tt>Y</tt> : T1</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T1</tt> : tensor(float), tensor(float16), tensor(bfloat16)</dt>
<dt><tt>T2</tt> : tensor(uint8)</dt>
<dt><tt>T3</tt> : tensor(uint8), tensor(float16), tensor(float), tensor(bfloat16)</dt>
<dt><tt>T4</tt> : tensor(int32)</dt>
</dl>
### <a name="MultiHeadAttention-1"></a>**MultiHeadAttention-1**</a>
  Multi-Head Self/Cross Attention, with Q/K/V projections done outside the operator.
#### Attributes
<dl>
<dt><tt>mask_filter_value</tt> : float (default is -10000.0)</dt>
<dt><tt>num_heads</tt> : int (required)</dt>
<dt><tt>scale</tt> : float</dt>
<dt><tt>unidirectional</tt> : int (default is 0)</dt>
</dl>
#### Inputs (1 - 10)
<dl>
<dt><tt>query</tt> : T</dt>
<dt><tt>key</tt> (optional) : T</dt>
<dt><tt>value</tt> (optional) : T</dt>
<dt><tt>bias</tt> (optional) : T</dt>
<dt><tt>key_padding_mask</tt> (optional) : M</dt>
<dt><tt>attention_bias</tt> (optional) : T</dt>
<dt><tt>past_key</tt> (optional) : T</dt>
<dt><tt>past_value</tt> (optional) : T</dt>
<dt><tt>past_sequence_length</tt> (optional) : M</dt>
<dt><tt>cache_indirection</tt> (optional) : M</dt>
</dl>
#### Outputs (1 - 4)
<dl>
<dt><tt>output</tt> : T</dt>
<dt><tt>present_key</tt> (optional) : T</dt>
<dt><tt>present_value</tt> (optional) : T</dt>
<dt><tt>qk</tt> (optional) : QK</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float), tensor(float16), tensor(bfloat16)</dt>
<dt><tt>M</tt> : tensor(int32)</dt>
<dt><tt>QK</tt> : tensor(float), tensor(float16), tensor(bfloat16)</dt>
</dl>
### <a name="QuickGelu-1"></a>**QuickGelu-1**</a>
  Compute x * Sigmoid(alpha * x).
#### Attributes
<dl>
<dt><tt>alpha</tt> : float (default is 1.702)</dt>
</dl>
#### Inputs
<dl>
<dt><tt>X</tt> : T</dt>
</dl>
#### Outputs
<dl>
<dt><tt>Y</tt> : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float16), tensor(float), tensor(double), tensor(bfloat16)</dt>
</dl>
### <a name="RotaryEmbedding-1"></a>**RotaryEmbedding-1**</a>
  RotaryEmbedding is the implementation of rotary positional embeddings (RoPE).
#### Attributes
<dl>
<dt><tt>interleaved</tt> : int (default is 0)</dt>
<dt><tt>is_packed_batching</tt> : int (default is 0)</dt>
<dt><tt>num_heads</tt> : int (default is 0)</dt>
<dt><tt>rotary_embedding_dim</tt> : int (default is 0)</dt>
<dt><tt>scale</tt> : float (default is 1.0)</dt>
</dl>
#### Inputs
<dl>
<dt><tt>input</tt> : T</dt>
<dt><tt>position_ids</tt> : M</dt>
<dt><tt>cos_cache</tt> : T</dt>
<dt><tt>sin_cache</tt> : T</dt>
</dl>
#### Outputs
<dl>
<dt><tt>output</tt> : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float), tensor(float16), tensor(bfloat16)</dt>
<dt><tt>M</tt> : tensor(int64)</dt>
</dl>
### <a name="SimplifiedLayerNormalization-1"></a>**SimplifiedLayerNormalization-1**</a>
  RMS layer normalization without mean subtraction or bias (onnxruntime's contrib op, registered in the default domain at version 1).
#### Attributes
<dl>
<dt><tt>axis</tt> : int (default is -1)</dt>
<dt><tt>epsilon</tt> : float (default is 1e-05)</dt>
<dt><tt>stash_type</tt> : int (default is 1)</dt>
</dl>
#### Inputs
<dl>
<dt><tt>X</tt> : T</dt>
<dt><tt>scale</tt> : V</dt>
</dl>
#### Outputs (1 - 2)
<dl>
<dt><tt>Y</tt> : V</dt>
<dt><tt>inv_std_var</tt> (optional) : U</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float16), tensor(float), tensor(double), tensor(bfloat16)</dt>
<dt><tt>U</tt> : tensor(float), tensor(double)</dt>
<dt><tt>V</tt> : tensor(float16), tensor(float), tensor(double), tensor(bfloat16)</dt>
</dl>
### <a name="SkipLayerNormalization-1"></a>**SkipLayerNormalization-1**</a>
  Skip and Layer Normalization Fusion.
#### Attributes
<dl>
<dt><tt>epsilon</tt> : float</dt>
</dl>
#### Inputs (3 - 5)
<dl>
<dt><tt>input</tt> : T</dt>
<dt><tt>skip</tt> : T</dt>
<dt><tt>gamma</tt> : T</dt>
<dt><tt>beta</tt> (optional) : T</dt>
<dt><tt>bias</tt> (optional) : T</dt>
</dl>
#### Outputs (1 - 4)
<dl>
<dt><tt>output</tt> : T</dt>
<dt><tt>mean</tt> (optional) : U</dt>
<dt><tt>inv_std_var</tt> (optional) : U</dt>
<dt><tt>input_skip_bias_sum</tt> (optional) : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float), tensor(float16), tensor(bfloat16)</dt>
<dt><tt>U</tt> : tensor(float)</dt>
</dl>
### <a name="SkipSimplifiedLayerNormalization-1"></a>**SkipSimplifiedLayerNormalization-1**</a>
  Skip and Root Mean Square Layer Normalization.
#### Attributes
<dl>
<dt><tt>epsilon</tt> : float</dt>
</dl>
#### Inputs (3 - 4)
<dl>
<dt><tt>input</tt> : T</dt>
<dt><tt>skip</tt> : T</dt>
<dt><tt>gamma</tt> : T</dt>
<dt><tt>bias</tt> (optional) : T</dt>
</dl>
#### Outputs (1 - 4)
<dl>
<dt><tt>output</tt> : T</dt>
<dt><tt>mean</tt> (optional) : U</dt>
<dt><tt>inv_std_var</tt> (optional) : U</dt>
<dt><tt>input_skip_bias_sum</tt> (optional) : T</dt>
</dl>
#### Type Constraints
<dl>
<dt><tt>T</tt> : tensor(float), tensor(float16), tensor(bfloat16)</dt>
<dt><tt>U</tt> : tensor(float)</dt>
</dl>
"""

HEAD_RE = re.compile(r'^### <a name="[^"]*"></a>\*\*(?:[a-z.]+\.)?([A-Za-z0-9_]+)-(\d+)\*\*'
                     r'(\s*\(deprecated\))?')
DOMAIN_RE = re.compile(r'^# (\S+)')
ARITY_RE = re.compile(r'^#### (Inputs|Outputs)(?: \((\d+) - (\d+|&#8734;)\))?\s*$')
DT_RE = re.compile(r'^<dt><tt>([^<]*)</tt>(?: \(([^)]*)\))? : (.*?)</dt>\s*$')


def parse_attr(name, rest):
    m = re.match(r'^(.*?)(?: \((required|default is (.*))\))?$', rest)
    tname, flag, default = m.group(1), m.group(2), m.group(3)
    if tname not in ATTR_TYPES:
        raise ValueError("attribute '%s': unknown type '%s'" % (name, tname))
    if default is not None:
        default = norm_default(default)
    return {"name": name, "type": ATTR_TYPES[tname],
            "required": flag == "required", "default": default}


def norm_default(s):
    """Doc default text to opmig's form: lists ','-joined without quotes."""
    s = s.strip()
    if s.startswith("(") and s.endswith(")"):
        s = s[1:-1]
    if s.startswith("[") and s.endswith("]"):
        items = [x.strip().strip("'\"") for x in s[1:-1].split(",")]
        return ",".join(x for x in items if x != "")
    return s


def first_sentence(lines):
    text = " ".join(l.strip() for l in lines if l.strip())
    text = re.sub(r'\s+', ' ', text).strip()
    m = re.search(r'[.!?](\s|$)', text)
    if m:
        text = text[:m.start() + 1]
    if len(text) > 200:
        text = text[:197].rstrip() + "..."
    return text


def parse(text, default_domain):
    ops = []
    domain = default_domain
    cur = None
    section = None
    for line in text.splitlines():
        m = DOMAIN_RE.match(line)
        if m:
            d = m.group(1)
            domain = "ai.onnx" if d == "ai.onnx" else d
            cur = None
            continue
        m = HEAD_RE.match(line)
        if m:
            cur = {"domain": domain, "name": m.group(1),
                   "since": int(m.group(2)), "deprecated": bool(m.group(3)),
                   "inputs": [], "outputs": [], "attrs": [], "tcs": [],
                   "doc_lines": [], "arity": {}}
            ops.append(cur)
            section = "doc"
            continue
        if cur is None:
            continue
        if line.startswith("## "):
            cur = None
            continue
        if line.startswith("#### "):
            m = ARITY_RE.match(line)
            if m:
                section = m.group(1).lower()
                if m.group(2) is not None:
                    hi = m.group(3)
                    cur["arity"][section] = (int(m.group(2)), UNBOUNDED
                                             if hi == "&#8734;" else int(hi))
            elif line.startswith("#### Attributes"):
                section = "attrs"
            elif line.startswith("#### Type Constraints"):
                section = "tcs"
            else:
                section = "other"
            continue
        if section == "doc":
            if cur["doc_lines"] and not line.strip():
                section = "doc_done"
            else:
                cur["doc_lines"].append(line)
            continue
        m = DT_RE.match(line)
        if not m:
            continue
        name, marks, rest = m.group(1), m.group(2) or "", m.group(3)
        if section == "attrs":
            cur["attrs"].append(parse_attr(name, rest))
        elif section in ("inputs", "outputs"):
            mk = [x.strip() for x in marks.split(",")]
            cur[section].append({"name": name, "type": rest,
                                 "optional": "optional" in mk,
                                 "variadic": "variadic" in mk})
        elif section == "tcs":
            cur["tcs"].append({"name": name, "types": rest})
    for op in ops:
        for k in ("inputs", "outputs"):
            if k not in op["arity"]:
                n = len(op[k])
                op["arity"][k] = (n, n)
        op["doc"] = first_sentence(op["doc_lines"])
    return ops


def c_str(s):
    if s is None:
        return "NULL"
    out = []
    for ch in s.encode("utf-8"):
        c = chr(ch)
        if c in '"\\':
            out.append("\\" + c)
        elif 32 <= ch < 127:
            out.append(c)
        else:
            out.append("\\%03o" % ch)
    return '"' + "".join(out) + '"'


def emit(ops, out):
    w = out.write
    w("/* registry_table.c: GENERATED by tools/gen_registry.py from the ONNX\n"
      " * spec (docs/Changelog.md, docs/Changelog-ml.md) and the hand-written\n"
      " * com.microsoft list in the generator.  Do not edit; regenerate.  One\n"
      " * entry per operator version, sorted by (domain, name, since_version). */\n"
      "#include <stddef.h>\n\n#include \"ir/registry.h\"\n\n")
    for i, op in enumerate(ops):
        for kind in ("inputs", "outputs"):
            if op[kind]:
                w("static const struct ir_op_formal f%d_%s[] = {\n" % (i, kind[0]))
                for f in op[kind]:
                    w("\t{ %s, %s, %d, %d },\n" % (c_str(f["name"]), c_str(f["type"]),
                                                  int(f["optional"]), int(f["variadic"])))
                w("};\n")
        if op["attrs"]:
            w("static const struct ir_op_attr a%d[] = {\n" % i)
            for a in op["attrs"]:
                w("\t{ %s, %s, %d, %s },\n" % (c_str(a["name"]), a["type"],
                                              int(a["required"]), c_str(a["default"])))
            w("};\n")
        if op["tcs"]:
            w("static const struct ir_op_constraint c%d[] = {\n" % i)
            for t in op["tcs"]:
                w("\t{ %s, %s },\n" % (c_str(t["name"]), c_str(t["types"])))
            w("};\n")
    w("\nconst struct ir_op_schema ir_registry_table[] = {\n")

    def arr(op, kind, prefix):
        return ("%s, %d" % (prefix, len(op[kind]))) if op[kind] else "NULL, 0"
    for i, op in enumerate(ops):
        (imin, imax), (omin, omax) = op["arity"]["inputs"], op["arity"]["outputs"]
        w("\t{ %s, %s, %d, %d, %d, %d, %d, %d,\n" % (
            c_str(op["domain"]), c_str(op["name"]), op["since"], int(op["deprecated"]),
            imin, imax, omin, omax))
        w("\t  %s, %s, %s, %s,\n" % (
            arr(op, "inputs", "f%d_i" % i), arr(op, "outputs", "f%d_o" % i),
            arr(op, "attrs", "a%d" % i), arr(op, "tcs", "c%d" % i)))
        w("\t  %s },\n" % c_str(op["doc"]))
    w("};\n\nconst size_t ir_registry_table_len =\n"
      "\tsizeof(ir_registry_table) / sizeof(ir_registry_table[0]);\n")


# Attributes a later version added, for a deprecated first version that
# takes its signature from the next one (GroupNormalization-18 has no
# stash_type, which 21 introduced).
ADDED_LATER = {("ai.onnx", "GroupNormalization", 21): {"stash_type"}}


def inherit_deprecated(ops):
    """The spec prints no signature for a deprecated version (Upsample-10,
    Scatter-11); onnx keeps the previous version's, so copy it.  A first
    version deprecated later (GroupNormalization-18) takes the next one's,
    less the attributes that version added."""
    for i, op in enumerate(ops):
        if not op["deprecated"] or op["inputs"] or op["outputs"]:
            continue
        key = (op["domain"], op["name"])
        prev = ops[i - 1] if i else None
        nxt = ops[i + 1] if i + 1 < len(ops) else None
        if prev and (prev["domain"], prev["name"]) == key:
            src, drop = prev, set()
        elif nxt and (nxt["domain"], nxt["name"]) == key:
            src = nxt
            drop = ADDED_LATER.get((nxt["domain"], nxt["name"], nxt["since"]), set())
        else:
            continue
        for k in ("inputs", "outputs", "tcs"):
            op[k] = src[k]
        op["attrs"] = [a for a in src["attrs"] if a["name"] not in drop]
        op["arity"] = dict(src["arity"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("changelogs", nargs="+")
    ap.add_argument("-o", "--output", default="ir/registry_table.c")
    args = ap.parse_args()
    ops = []
    for path in args.changelogs:
        with open(path, encoding="utf-8") as f:
            ops += parse(f.read(), "ai.onnx")
    ops += parse(CONTRIB_MD, "com.microsoft")
    ops.sort(key=lambda o: (o["domain"].encode(), o["name"].encode(), o["since"]))
    inherit_deprecated(ops)
    seen = set()
    for o in ops:
        key = (o["domain"], o["name"], o["since"])
        if key in seen:
            sys.exit("gen_registry: duplicate entry %s %s-%d" % key)
        seen.add(key)
    with open(args.output, "w", encoding="utf-8") as out:
        emit(ops, out)
    names = {(o["domain"], o["name"]) for o in ops}
    print("%s: %d entries, %d operators, max since_version %d (ai.onnx)" % (
        args.output, len(ops), len(names),
        max(o["since"] for o in ops if o["domain"] == "ai.onnx")))


if __name__ == "__main__":
    main()
