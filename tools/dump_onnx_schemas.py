#!/usr/bin/python3
"""dump_onnx_schemas.py: write the operator schemas python3-onnx knows
(domains "", ai.onnx.ml and ai.onnx.preview.training, since_version <= 17)
as a compact TSV fixture for the registry cross-check in
tests/unit/suite_registry.c, so that test needs no Python at run time.

Usage: /usr/bin/python3 tools/dump_onnx_schemas.py [OUT]
       (default OUT: tests/fixtures/onnx112_schemas.tsv)

One line per schema version, tab separated:
  domain name since_version min_in max_in min_out max_out deprecated attrs
domain is "ai.onnx" for the default domain; attrs is a ';'-separated list
of name:type:required:default, type the AttributeProto type number,
required 0/1, default empty when none; list defaults are ','-separated,
floats printed with repr() (shortest round-trip form).
"""
import sys

import onnx
from onnx import defs, helper

DOMAINS = ("", "ai.onnx.ml", "ai.onnx.preview.training")
MAX_OPSET = 17


def fmt_scalar(v):
    if isinstance(v, (bytes, bytearray)):
        v = v.decode("utf-8")
    if isinstance(v, float):
        return repr(v)
    return str(v)


def fmt_default(a):
    d = a.default_value
    if not d.name and d.type == 0:
        return ""
    v = helper.get_attribute_value(d)
    if isinstance(v, list):
        s = ",".join(fmt_scalar(x) for x in v)
    elif isinstance(v, (int, float, bytes, bytearray, str)):
        s = fmt_scalar(v)
    else:
        s = "<value>"  # tensor or graph default: only presence compared
    for bad in "\t\n;:":
        s = s.replace(bad, " ")
    return s


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else \
        "tests/fixtures/onnx112_schemas.tsv"
    rows = []
    for s in defs.get_all_schemas_with_history():
        if s.domain not in DOMAINS or s.since_version > MAX_OPSET:
            continue
        attrs = []
        for name in sorted(s.attributes):
            a = s.attributes[name]
            attrs.append("%s:%d:%d:%s" % (name, int(a.type.value),
                                          1 if a.required else 0,
                                          fmt_default(a)))
        rows.append((s.domain or "ai.onnx", s.name, s.since_version,
                     s.min_input, s.max_input, s.min_output, s.max_output,
                     1 if s.deprecated else 0, ";".join(attrs)))
    rows.sort()
    with open(out, "w", encoding="utf-8") as f:
        f.write("# onnx %s schemas, since_version <= %d; written by "
                "tools/dump_onnx_schemas.py\n" % (onnx.__version__, MAX_OPSET))
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")
    print("%s: %d schemas" % (out, len(rows)))


if __name__ == "__main__":
    main()
