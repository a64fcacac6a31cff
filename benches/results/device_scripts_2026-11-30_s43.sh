#!/usr/bin/env bash
# Forty-third session's GPU call: the CUDA programs of tile_ops, nn_ops, tile_ssm and ff_model
# now start with plugin-api's storage header (apex_plugin_api::cuda::STORAGE_CUH) instead of four
# copies of it. Their PTX is byte-identical to main's before the change (732 programs compiled
# by NVRTC 13.0 here, sm_90 / sm_90a and ff_model's sm_80); this call runs and verifies every CUDA
# case on the GPU and gates it against the committed baseline. Run from the repository root on
# the device machine (two H200s: nvidia-h200-x2, `--devices all`, as .github/workflows/
# perf_gpu.yml runs the suite): `bash benches/results/device_scripts_2026-11-30_s43.sh call1`,
# output under $OUT.
# Binaries: .device/g43/release: apex-host and the plugins' libraries (no fixtures), release
# builds of the working tree.
set -u
H="env CARGO_TARGET_DIR=.device/g43 .device/g43/release/apex-host"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpus.txt"
source <(sed -n '/^suite()/,/^}/p' benches/results/device_scripts_2026-11-30_s42.sh)

call1() {  # every CUDA case of the quick suite, verified, gated by the file --compare auto picks
  suite run1 auto
  grep -E "compare auto|baseline" "$OUT/run1.log" | head -3 | tee -a "$OUT/table.txt"
}

# Call 2 (one H200): tile_ssm's scans with their chunk summary and chunk fold as two helpers
# (e0a4bc0; PTX byte-identical to main's for both production tunings in every storage).
# .device/g43b: apex-host and the plugins' libraries (release/), tile_ssm_gpu_check, release
# builds of e0a4bc0. In that build a filtered run's gate counted every metric of the other
# families as `missing` (exit 2) and the python summary below failed on their null values;
# 3097bb6 gates a filtered run on the cases it selected.
call2() {
  local G="env CARGO_TARGET_DIR=.device/g43b .device/g43b/release/apex-host" t0
  t0=$(date +%s)
  timeout 400 .device/g43b/tile_ssm_gpu_check > "$OUT/ssm_check.log" 2>&1
  echo "tile_ssm_gpu_check rc=$? wall=$(( $(date +%s) - t0 ))s $(grep -c ' ok' "$OUT/ssm_check.log") ok lines, $(tail -1 "$OUT/ssm_check.log")" | tee -a "$OUT/table.txt"
  t0=$(date +%s)
  timeout 300 $G run --no-build --backends cuda --quick --filter 'tile_ssm.*' --output-dir /tmp/ssm \
    --compare auto > "$OUT/ssm_suite.log" 2>&1
  echo "tile_ssm quick suite rc=$? wall=$(( $(date +%s) - t0 ))s" | tee -a "$OUT/table.txt"
  cp /tmp/ssm/compare_summary.json "$OUT/ssm_compare.json"
  python3 - /tmp/ssm/compare_summary.json <<'PY' | tee -a "$OUT/table.txt"
import json, sys
c = json.load(open(sys.argv[1]))
r = [x["current_ms"] / x["baseline_ms"] for x in c["checks"]]
lim = [x["current_ms"] / x["allowed_max_ms"] for x in c["checks"]]
print("  gate:", c["status"], c["counts"], "current/baseline %.3f-%.3f, closest %.3f of its limit" % (min(r), max(r), max(lim)))
PY
}

# Call 3 (two H200s, a fresh machine): the session's last tree (e9b1faa: the gate of a run of
# part of the suite, the debug-build notes, the terminal macros; the kernels as in calls 1-2).
# .device/g43c/release: apex-host and the plugins' libraries, release builds of e9b1faa.
# The whole CUDA quick suite gated by --compare auto, then one family alone against the same
# file: its 7 metrics checked, the other 1,194 counted as unselected, exit 0.
call3() {
  H="env CARGO_TARGET_DIR=.device/g43c .device/g43c/release/apex-host"
  suite run3 auto
  local t0; t0=$(date +%s)
  timeout 200 $H run --no-build --backends cuda --quick --filter 'ff_model.*' --output-dir /tmp/ffsel \
    --compare auto > "$OUT/ff_selection.log" 2>&1
  echo "ff_model alone rc=$? wall=$(( $(date +%s) - t0 ))s" | tee -a "$OUT/table.txt"
  grep -E "^- (gate|checks|selection):" "$OUT/ff_selection.log" | tee -a "$OUT/table.txt"
}

"$@"
