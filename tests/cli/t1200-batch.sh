#!/bin/sh
# t1200: `opmig batch`.  A zoo (testdata/sample.onnx, the scan probes, the
# IR test models, a model with external data, and the light model zoo of
# ../shared/models when present) as a folder and as a zip, -j 2; the
# summaries are deterministic; a worker that crashes (the test hook
# OPMIG_BATCH_TEST_CRASH) and one that hangs past --timeout (the hook
# OPMIG_BATCH_TEST_HANG) fail alone; a run killed with SIGKILL resumes to
# the same summary; shards 1/3 + 2/3 + 3/3 merged equal the unsharded run;
# zip-slip, symlink and zip-bomb archives are refused; manifests; --zip;
# the progress bar on a terminal (through script(1), when present);
# migrate mode on a few small models; bad input and usage errors.
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cd $TOP"

# ---- the zoo ---------------------------------------------------------------
Z=$T/zoo
mkdir -p "$Z/scan" "$Z/models" "$Z/ext" || fail "mkdir"
cp testdata/sample.onnx "$Z/" && cp testdata/scan/*.onnx "$Z/scan/" &&
	cp testdata/models/*.onnx "$Z/models/" && cp testdata/ext/* "$Z/ext/" || fail "cp zoo"
for f in "$TOP"/../shared/models/onnx-light/*.onnx; do
	[ -f "$f" ] || continue    # the shared zoo is optional
	mkdir -p "$Z/light" && cp "$f" "$Z/light/" || fail "cp $f"
done
# a few backend test models (libonnx-testdata, in DEB_PKGS)
for op in abs relu add sigmoid; do
	f=/usr/share/libonnx-testdata/data/node/test_$op/model.onnx
	[ -f "$f" ] || continue
	mkdir -p "$Z/node" && cp "$f" "$Z/node/$op.onnx" || fail "cp $f"
done
n_models=$(find "$Z" -name '*.onnx' | wc -l)
[ "$n_models" -ge 20 ] || fail "zoo has only $n_models models"
TG=generic-npu,ascend

# ---- folder, -j 2 ------------------------------------------------------------
run 0 "$OPMIG" batch "$Z" --target $TG -o "$T/full" -j 2
grep -q "^$((n_models * 2)) jobs, 0 failed" "$T/out" || fail "summary line: $(cat "$T/out")"
[ "$(grep -c ' on .*: scanned$' "$T/err")" -eq $((n_models * 2)) ] ||
	fail "want a progress line per job: $(head -3 "$T/err")"
for f in summary.json summary.csv summary.md index.html; do
	[ -s "$T/full/$f" ] || fail "no $f"
done
$PY - "$T/full/summary.json" "$n_models" <<'P' || fail "summary.json"
import json, sys
s = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert s["schema"] == "opmig.batch/1" and s["mode"] == "scan", s["schema"]
assert s["models"] == n and s["jobs"] == 2 * n and s["failed"] == 0, (s["models"], s["jobs"])
assert s["targets"] == ["ascend", "generic-npu"], s["targets"]
assert s["failures"] == []
keys = [(r["model"], r["target"]) for r in s["results"]]
assert keys == sorted(keys), "rows not sorted"
for r in s["results"]:
    assert r["status"] == "scanned", r
    assert 0 <= r["native_coverage"] <= r["coverage_after_rewrites"] <= 100, r
    assert r["seconds"] is None and r["max_error"] is None
names = {r["model"] for r in s["results"]}
assert "sample" in names and "scan_model" in names and "ext_model" in names, names
P
for d in sample/ascend scan_rank/generic-npu ext_model/ascend; do
	[ -s "$T/full/$d/scan.json" ] && [ -s "$T/full/$d/result.json" ] || fail "no outputs in $d"
done
grep -q '"schema": "opmig.scan/1"' "$T/full/sample/ascend/scan.json" || fail "scan.json schema"
xmllint --html --noout "$T/full/index.html" 2>"$T/xml" || fail "index.html: $(cat "$T/xml")"
grep -qi '<link\|<script src\|<img' "$T/full/index.html" && fail "index.html is not self-contained"

# ---- on a terminal: one line redrawn in place -------------------------------
if command -v script >/dev/null 2>&1; then
	script -qc "'$OPMIG' batch '$Z/scan' --target ascend -o '$T/tty'" /dev/null >"$T/tty.out" 2>&1 </dev/null ||
		fail "batch under script: $(cat "$T/tty.out")"
	grep -q '\] 7/7, 0 failed, .* jobs/s, ETA' "$T/tty.out" || fail "no progress bar: $(cat -A "$T/tty.out")"
	[ "$(grep -c ' on ' "$T/tty.out")" -eq 0 ] || fail "plain progress lines on a terminal"
fi

# ---- deterministic: again with -j 1 and --quiet -------------------------------
run 0 "$OPMIG" batch "$Z" --target ascend --target generic-npu -o "$T/again" -q
[ -s "$T/err" ] && fail "--quiet printed: $(cat "$T/err")"
[ -s "$T/out" ] && fail "--quiet printed: $(cat "$T/out")"
for f in summary.json summary.csv summary.md index.html; do
	cmp -s "$T/full/$f" "$T/again/$f" || { diff "$T/full/$f" "$T/again/$f" | head; fail "$f differs between runs"; }
done

# ---- as a zip, read without extracting ---------------------------------------
(cd "$Z" && $PY -c '
import sys, zipfile, glob
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(glob.glob("**/*.onnx", recursive=True)):
        if not f.startswith("ext/"):
            z.write(f)
' "$T/zoo.zip") || fail "make zoo.zip"
run 0 "$OPMIG" batch "$T/zoo.zip" --target $TG -o "$T/fromzip" -j 2 -q
$PY - "$T/full/summary.json" "$T/fromzip/summary.json" <<'P' || fail "zip and folder runs differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
strip = lambda s: [{k: v for k, v in r.items() if k != "source"} for r in s["results"] if r["model"] != "ext_model"]
assert strip(a) == strip(b), "rows differ"
assert all(":" in r["source"] for r in b["results"])
P

# ---- zip-slip, symlinks and zip bombs are refused ---------------------------
$PY - "$T" <<'P' || fail "make bad archives"
import sys, zipfile
t = sys.argv[1]
model = open("testdata/sample.onnx", "rb").read()
with zipfile.ZipFile(t + "/slip.zip", "w") as z:
    z.writestr("ok.onnx", model)
    z.writestr("../evil.onnx", model)
with zipfile.ZipFile(t + "/abs.zip", "w") as z:
    z.writestr("/tmp/evil.onnx", model)
with zipfile.ZipFile(t + "/link.zip", "w") as z:
    i = zipfile.ZipInfo("link.onnx")
    i.create_system = 3
    i.external_attr = 0o120777 << 16
    z.writestr(i, "/etc/passwd")
with zipfile.ZipFile(t + "/bomb.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("bomb.onnx", b"\0" * (64 << 20))
with zipfile.ZipFile(t + "/ok.zip", "w") as z:
    z.writestr("ok.onnx", model)
P
for b in slip abs link bomb; do
	run 3 "$OPMIG" batch "$T/$b.zip" -o "$T/out-$b"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$b.zip: want one error line: $(cat "$T/err")"
	grep -q "$b.zip: entry .*refused" "$T/err" || fail "$b.zip: $(cat "$T/err")"
	[ -e "$T/evil.onnx" ] && fail "$b.zip: something was extracted"
done
grep -q "ratio" "$T/err" || fail "bomb: $(cat "$T/err")"
run 3 "$OPMIG" batch "$T/ok.zip" -o "$T/out-ok" --max-entry-size 1K
grep -q "above the limit" "$T/err" || fail "--max-entry-size: $(cat "$T/err")"

# ---- a crashing worker and a hanging one fail alone --------------------------
OPMIG_BATCH_TEST_CRASH=dtype OPMIG_BATCH_TEST_HANG=rank \
	run 1 "$OPMIG" batch "$Z/scan" "$Z/sample.onnx" --target $TG -o "$T/crash" -j 2 --timeout 1
$PY - "$T/crash/summary.json" <<'P' || fail "crash and timeout rows"
import json, sys
s = json.load(open(sys.argv[1]))
st = {(r["model"], r["target"]): (r["status"], r["message"]) for r in s["results"]}
for t in ("ascend", "generic-npu"):
    assert st[("dtype", t)][0] == "crashed" and "signal 6" in st[("dtype", t)][1], st[("dtype", t)]
    assert st[("rank", t)][0] == "timeout" and "--timeout" in st[("rank", t)][1], st[("rank", t)]
    assert st[("sample", t)][0] == "scanned"
assert s["failed"] == 4 and len(s["failures"]) == 4, s["failures"]
P
grep -q "crashed" "$T/crash/summary.md" || fail "summary.md has no failure"
# a worker over --max-memory fails its job (under ASan the worker may die
# instead of failing an allocation: crashed)
run 1 "$OPMIG" batch "$Z/sample.onnx" "$Z/scan/supported.onnx" --target ascend -o "$T/mem" --max-memory 16M -q
$PY - "$T/mem/summary.json" <<'P' || fail "--max-memory rows"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["failed"] == 2 and s["jobs"] == 2, s
for r in s["results"]:
    assert r["status"] in ("out_of_memory", "crashed") and r["message"], r
P
# failed jobs run again on --resume
run 0 "$OPMIG" batch "$Z/scan" "$Z/sample.onnx" --target $TG -o "$T/crash" --resume -q
grep -q '"failed": 0' "$T/crash/summary.json" || fail "resume did not rerun the failed jobs"

# ---- resume after kill -9 ----------------------------------------------------
OPMIG_BATCH_TEST_HANG=scan_supported "$OPMIG" batch "$Z" --target $TG -o "$T/killed" -j 1 \
	>/dev/null 2>&1 &
pid=$!
i=0
until [ -e "$T/killed/scan_rank/generic-npu/result.json" ]; do
	i=$((i + 1)); [ $i -lt 600 ] || { kill -9 $pid; fail "the run never got to scan_rank"; }
	sleep 0.1
done
sleep 0.3
kill -9 $pid
wait $pid 2>/dev/null
[ -e "$T/killed/summary.json" ] && fail "a killed run wrote a summary"
ls "$T/killed/scan_supported/"*/result.json >/dev/null 2>&1 && fail "the interrupted job looks complete"
run 0 "$OPMIG" batch "$Z" --target $TG -o "$T/killed" -j 2 --resume
grep -q "kept by --resume" "$T/err" || fail "resume kept nothing"
grep -q "scan_supported on .*: scanned$" "$T/err" || fail "resume did not run the interrupted job"
for f in summary.json summary.csv summary.md index.html; do
	cmp -s "$T/full/$f" "$T/killed/$f" || fail "$f after resume differs from a clean run"
done
# a changed input is not kept
cp testdata/scan/unsupported.onnx "$Z/sample.onnx"
run 0 "$OPMIG" batch "$Z" --target $TG -o "$T/killed" --resume
grep -q "sample on ascend: scanned$" "$T/err" || fail "a changed model was kept"
cp testdata/sample.onnx "$Z/sample.onnx"

# SIGTERM stops the workers and the run: exit 143, the summaries of the
# earlier run gone, the job it was in not complete
OPMIG_BATCH_TEST_HANG=sample "$OPMIG" batch "$Z/sample.onnx" --target ascend -o "$T/killed" -q \
	>/dev/null 2>"$T/term.err" &
pid=$!
i=0
until [ -d "$T/killed/sample/ascend" ] && [ ! -e "$T/killed/sample/ascend/result.json" ]; do
	i=$((i + 1)); [ $i -lt 600 ] || { kill -9 $pid; fail "the run never started sample"; }
	sleep 0.1
done
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc, want 143: $(cat "$T/term.err")"
grep -q "interrupted by signal 15" "$T/term.err" || fail "SIGTERM: $(cat "$T/term.err")"
[ -e "$T/killed/summary.json" ] && fail "an interrupted run left a summary"

# ---- shards merged equal the unsharded run -----------------------------------
for k in 1 2 3; do
	run 0 "$OPMIG" batch "$Z" --target $TG -o "$T/shard$k" --shard $k/3 -j 2 -q
done
run 0 "$OPMIG" batch merge "$T/shard1" "$T/shard2" "$T/shard3" -o "$T/merged" --zip "$T/merged.zip"
for f in summary.json summary.csv summary.md index.html; do
	cmp -s "$T/full/$f" "$T/merged/$f" || fail "merged $f differs from the unsharded run"
done
$PY -c 'import sys, zipfile; n = zipfile.ZipFile(sys.argv[1]).namelist(); assert "summary.json" in n, n' \
	"$T/merged.zip" || fail "merged.zip"
run 3 "$OPMIG" batch merge "$T/shard1" "$T/shard1" -o "$T/dup"
grep -q "appears twice" "$T/err" || fail "merge of a shard twice: $(cat "$T/err")"
run 3 "$OPMIG" batch merge "$T/nowhere" -o "$T/dup"

# ---- manifests ----------------------------------------------------------------
cat >"$T/m.json" <<J
[{"path": "zoo/sample.onnx", "targets": ["ascend"]},
 {"path": "zoo/scan/supported.onnx", "targets": "generic-npu,ascend", "batch": 1},
 {"path": "ok.zip", "targets": ["qnn"]}]
J
run 0 "$OPMIG" batch "$T/m.json" -o "$T/man" -q
grep -q '"jobs": 4' "$T/man/summary.json" || fail "json manifest: $(cat "$T/man/summary.json")"
grep -q '"target": "qnn"' "$T/man/summary.json" || fail "json manifest: archive targets"
printf 'path,targets,dims\nzoo/sample.onnx,ascend;generic-npu,N=1\n' >"$T/m.csv"
run 0 "$OPMIG" batch --manifest "$T/m.csv" -o "$T/manc" -q
grep -q '"jobs": 2' "$T/manc/summary.json" || fail "csv manifest"
printf 'file,targets\nx.onnx,ascend\n' >"$T/bad.csv"
run 3 "$OPMIG" batch "$T/bad.csv" -o "$T/x"
grep -q "bad.csv:1: unknown column 'file'" "$T/err" || fail "bad csv: $(cat "$T/err")"
echo '[{"path": "zoo/sample.onnx", "layout": "nwhc"}]' >"$T/bad.json"
run 3 "$OPMIG" batch "$T/bad.json" -o "$T/x"
echo '[{"path": "zoo/sample.onnx", "targets": ["nope"]}]' >"$T/badt.json"
run 3 "$OPMIG" batch "$T/badt.json" -o "$T/x"
grep -q "no target 'nope'" "$T/err" || fail "unknown manifest target: $(cat "$T/err")"

# ---- migrate mode --------------------------------------------------------------
run 1 "$OPMIG" batch "$Z/scan/supported.onnx" "$Z/ext" "$Z/sample.onnx" "$TOP/testdata/bad/truncated-90.onnx" \
	--target ascend --mode migrate -o "$T/mig" -j 2 --zip "$T/mig.zip" --times -q
$PY - "$T/mig/summary.json" <<'P' || fail "migrate summary"
import json, sys
s = json.load(open(sys.argv[1]))
st = {r["model"]: r for r in s["results"]}
assert s["mode"] == "migrate"
for m in ("sample", "supported", "model"):
    assert st[m]["status"] == "migrated" and st[m]["max_error"] is not None, st[m]
    assert st[m]["seconds"] is not None
assert st["truncated-90"]["status"] == "error" and st["truncated-90"]["message"], st["truncated-90"]
assert s["failed"] == 1
P
for f in model.onnx report.json scan.json result.json; do
	[ -s "$T/mig/sample/ascend/$f" ] || fail "migrate: no $f"
done
[ -e "$T/mig/model/ascend/model.onnx.data" ] || fail "migrate: no external data"
run 0 "$OPMIG" inspect "$T/mig/model/ascend/model.onnx"
$PY -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["schema"] == "opmig.migrate/1" and r["target"] == "ascend" and "after" in r and "rewrites" in r, r' \
	"$T/mig/sample/ascend/report.json" || fail "report.json is not opmig.migrate/1"
$PY -c 'import sys, zipfile; n = zipfile.ZipFile(sys.argv[1]).namelist(); assert "sample/ascend/model.onnx" in n, n' \
	"$T/mig.zip" || fail "--zip"

# ---- bad input and usage -------------------------------------------------------
# the bad-model corpus: every model fails as an error row, no worker crashes
run 1 "$OPMIG" batch testdata/bad --target ascend -o "$T/badzoo" -j 2 -q
$PY - "$T/badzoo/summary.json" <<'P' || fail "bad corpus"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["jobs"] >= 20 and s["status_counts"]["error"] == s["jobs"], s["status_counts"]
assert all(r["message"] for r in s["results"])
P
run 3 "$OPMIG" batch "$T/missing.onnx" -o "$T/x"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "missing.onnx: cannot open" "$T/err" || fail "missing: $(cat "$T/err")"
printf 'not a zip' >"$T/junk.zip"
run 3 "$OPMIG" batch "$T/junk.zip" -o "$T/x"
grep -q "junk.zip: not a readable zip" "$T/err" || fail "junk zip: $(cat "$T/err")"
mkdir "$T/empty"
run 3 "$OPMIG" batch "$T/empty" -o "$T/x"
run 2 "$OPMIG" batch "$Z" -o "$T/x" --shard 4/3
run 2 "$OPMIG" batch "$Z" -o "$T/x" --shard x
run 2 "$OPMIG" batch "$Z" -o "$T/x" --target nope
run 2 "$OPMIG" batch "$Z"
run 2 "$OPMIG" batch -o "$T/x"
run 2 "$OPMIG" batch "$Z" -o "$T/x" -j 0
run 2 "$OPMIG" batch "$Z" -o "$T/x" --mode fast
run 2 "$OPMIG" batch merge "$T/full"
echo "ok t1200-batch"
