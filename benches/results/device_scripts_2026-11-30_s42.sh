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


# Call 3 (issue 13, one H200): the fp16 GEMM operand without its lo part on the wgmma refine.
# .device/bin/ff_s42 and .device/s42/release (apex-host of 49db0d4 with the plugin rebuilt): the
# working tree with APEX_NVRTC_DEFINES=WG_HI_ONLY compiled in (the depthwise output rounded to
# fp16 once, as PyTorch's fp16 convolution takes it: 16 wgmma a warpgroup instead of 32, no lo
# part built), ff_model_hi_only_wg_experiment_s42.patch. Without the define it is main.
# Its first attempt ran nothing (0.3 s: the dispatch line then stood above this function).
call3() {
  B=.device/bin
  source benches/results/device_lib.sh
  source <(sed -n '/^vrow()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
  source <(sed -n '/^self_check()/,/^}/p' benches/results/device_scripts_2026-11-29_s36.sh)
  source <(sed -n '/^host_p50s()/,/^}/p' benches/results/device_scripts_2026-11-29_s35.sh)
  local shapes='profile,tiles 32/16,256x256,B=3,B=8,B=16,K=64/160,B=4 256x256,B=4 K=64/160,B=4 tiles 32/16,no split,nothing selected'
  self_check check_hi "hi only" APEX_NVRTC_DEFINES=WG_HI_ONLY $B/ff_s42 --only "$shapes" --precision fp16 --refine auto
  self_check check_main "main" X=1 $B/ff_s42 --only "$shapes" --precision fp16 --refine auto
  for r in 1 2; do
    vrow ff_s42 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_s42 'profile,B=8,B=16' "hi-only r$r" "" APEX_NVRTC_DEFINES=WG_HI_ONLY
    vrow ff_s42 'profile,B=8,B=16' "main r$r" "--stage refines" X=1
    vrow ff_s42 'profile,B=8,B=16' "hi-only r$r" "--stage refines" APEX_NVRTC_DEFINES=WG_HI_ONLY
  done
  local H="env CARGO_TARGET_DIR=.device/s42 .device/s42/release/apex-host"
  local cases='ff_model.infer/cuda/fp16/batch=*,*,height=128,*path=fast,tile_size_l0=16*'
  for r in 1 2; do
    step host_main_r$r 150 $H run --no-build --backends cuda --filter "$cases" --output-dir /tmp/hm$r
    host_p50s /tmp/hm$r/summary.json "apex-host main r$r"
    step host_hi_r$r 150 env APEX_NVRTC_DEFINES=WG_HI_ONLY $H run --no-build --backends cuda --filter "$cases" --output-dir /tmp/hh$r
    host_p50s /tmp/hh$r/summary.json "apex-host hi-only r$r"
  done
  cat $OUT/check_hi.log $OUT/check_main.log > $OUT/checks.txt; rm -f $OUT/check_hi.log $OUT/check_main.log
  cat $OUT/host_*.log > $OUT/host.txt; rm -f $OUT/host_*.log
}

# Call 4 (two H200s, a third fresh machine): the committed baselines/gpu-h200.json as perf_gpu.yml
# reads it, through `--compare auto` (the GPU's class picks the file). .device/gate2/release:
# apex-host and the plugins of cd3e8f8 (the baselines and the device class as committed).
call4() {
  H="env CARGO_TARGET_DIR=.device/gate2 .device/gate2/release/apex-host"
  suite run3 auto
  grep -E "compare auto|baseline" "$OUT/run3.log" | head -3 | tee -a "$OUT/table.txt"
}

"$@"
