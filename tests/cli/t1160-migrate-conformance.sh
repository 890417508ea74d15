#!/bin/sh
# t1160-migrate-conformance.sh: the ONNX backend test models migrate to
# every shipped target.  A deterministic sample (every 23rd case of
# Debian's libonnx-testdata, sorted by name) goes through `opmig migrate`
# for each target: the command never crashes or reports bad input (exit 0
# or 1 only); a written model passes python-onnx's full checker (opset
# <= 17, what onnx 1.12 knows); and a migration is never refused because
# the migrated model computes something else — residual blockers are the
# only accepted reason for exit 1, except for models whose outputs are
# random draws.  Skipped when the test data is not installed.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cd $T"
DATA=/usr/share/libonnx-testdata/data
[ -d "$DATA/node" ] || { echo "notice: $DATA absent, skipped"; exit 0; }

for c in node pytorch-converted pytorch-operator simple; do
	for d in "$DATA/$c"/*/; do
		[ -f "$d/model.onnx" ] && echo "$c/$(basename "$d")"
	done
done | LC_ALL=C sort | awk 'NR % 23 == 1' >cases
[ "$(wc -l <cases)" -ge 40 ] || fail "fewer than 40 sampled cases"

targets="generic-npu tensorrt ascend qnn coreml nnapi openvino rknpu2"
mkdir runs || fail "mkdir"
n=0
while read -r c; do
	for t in $targets; do
		n=$((n + 1))
		k="runs/$n"
		echo "$c $t" >"$k.case"
		timeout 60 "$OPMIG" migrate "$DATA/$c/model.onnx" --target "$t" -o "$k.onnx" \
			--format json --report "$k.json" >/dev/null 2>"$k.err"
		rc=$?
		case $rc in
		0|1) echo "$rc" >"$k.rc" ;;
		*) fail "$c on $t: exit $rc: $(head -c 300 "$k.err")" ;;
		esac
	done
done <cases
# one judge for all the runs
$PY - runs "$n" <<'EOF' || fail "$(tail -1 "$T/why")"
import json, sys, onnx
d, n = sys.argv[1], int(sys.argv[2])
ok = blocked = 0
for i in range(1, n + 1):
    k = "%s/%d" % (d, i)
    case, target = open(k + ".case").read().split()
    rc = int(open(k + ".rc").read())
    r = json.load(open(k + ".json"))
    where = "%s on %s" % (case, target)
    random = "bernoulli" in case or ("dropout" in case and "training" in case)
    v = r["validation"]
    def bad(msg):
        open("why", "w").write("%s: %s\n" % (where, msg))
        sys.exit(1)
    if rc == 0:
        ok += 1
        if not (r["ok"] and r["written"]):
            bad("exit 0 but not ok/written")
        m = onnx.load(k + ".onnx")
        opset = max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] or [0])
        if opset <= 17:
            try:
                onnx.checker.check_model(m, full_check=True)
            except Exception as e:
                bad("checker: %s" % str(e).splitlines()[0])
        if v is not None and not v.get("equivalent", True) and not random:
            bad("written although not equivalent")
    else:
        blocked += 1
        if not r["blockers"] and not r["model_findings"] and v is not None and \
           not v.get("equivalent", True) and not random:
            outs = [o for o in v.get("outputs", []) if not o["ok"]]
            bad("not equivalent after migration: %s" % (outs[0] if outs else v))
print("ok: %d migrations: %d written, %d with residual blockers" % (n, ok, blocked))
EOF
