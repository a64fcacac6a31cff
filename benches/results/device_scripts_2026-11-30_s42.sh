#!/usr/bin/env bash
# Forty-second session's GPU calls: the GPU regression baseline for every family. Run from the
# repository root on the device machine (two H200s: nvidia-h200-x2, `--devices all`, as
# .github/workflows/perf_gpu.yml runs the suite): `bash benches/results/device_scripts_2026-11-30_s42.sh
# callN`, output under $OUT.
# Binaries: .device/gate/release: apex-host and the plugins' libraries (no fixtures), release builds
# of 49db0d4 (main at the session's start).
# Call 1 ran an earlier form of suite() that wrote five files per run into $OUT/run1/; the device
# returns eight files at most, and summary.json.gz was left behind: a 0.5 s call on the still-warm
# machine copied /tmp/run1/summary.json out (gzip -c /tmp/run1/summary.json > $OUT/...). The form
# below is call 2's.
set -u
H="env CARGO_TARGET_DIR=.device/gate .device/gate/release/apex-host"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpus.txt"

# One run of the CUDA quick suite (what perf_gpu.yml runs, every GPU of the machine), gated
# against the baseline file $2: $OUT/$1.log (the console), $OUT/$1_summary.json.gz and
# $OUT/$1_compare.json (the device returns at most eight files, two folders deep).
suite() {
  local name=$1 baseline=$2 t0; t0=$(date +%s)
  timeout -s INT 480 $H run --no-build --backends cuda --quick --devices all \
    --output-dir /tmp/$name --compare "$baseline" > "$OUT/$name.log" 2>&1
  local rc=$?
  cp /tmp/$name/compare_summary.json "$OUT/${name}_compare.json"
  gzip -c /tmp/$name/summary.json > "$OUT/${name}_summary.json.gz"
  echo "$name rc=$rc wall=$(( $(date +%s) - t0 ))s against $baseline" | tee -a "$OUT/table.txt"
  python3 - /tmp/$name/summary.json /tmp/$name/compare_summary.json <<'PY' | tee -a "$OUT/table.txt"
import collections, json, sys
s = json.load(open(sys.argv[1]))
st = collections.Counter()
for cid, b in s["benchmarks"].items():
    st[(cid.split(".")[0], b["status"])] += 1
print("  cases:", dict(sorted(st.items())), s["counts"])
try:
    c = json.load(open(sys.argv[2]))
    n = c["counts"]
    print("  gate:", c["status"], "failed", n["failed"], "of", n["total"], "over_limit", n["over_limit"],
          "unbaselined ok cases", len(c.get("unbaselined_cases", [])))
except (OSError, ValueError) as e:
    print("  gate: none", e)
PY
}

call1() {  # the timer's truth on this machine, then the suite against the committed baseline
  timeout 60 $H calibrate --json --output "$OUT/calibration.json" > "$OUT/calibrate.log" 2>&1
  echo "calibrate rc=$?" | tee -a "$OUT/table.txt"
  suite run1 baselines/gpu-h200.json
}

call2() {  # the suite again on a fresh machine, against the baseline emitted from call 1
  suite run2 baselines/gpu-h200.json
}

"$@"
