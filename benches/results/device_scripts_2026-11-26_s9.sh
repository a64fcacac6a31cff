#!/usr/bin/env bash
# The device calls of the ninth session (2026-11-26), run from the repository root on the device
# machine with the release binaries carried in .device/bin (and apex-host with its plugins in
# .device/host/release). Usage on the device:
# `source benches/results/device_scripts_2026-11-26_s9.sh; call1`.
set -u
B=.device/bin
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
row() { printf '%-14s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
HOST="env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host"
# The run's phase totals, then the N cases that took longest with their phases (summary.json).
slowest_phases() {
  python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ta = s.get("time_accounting") or {}
print("totals:", {k: round(v, 2) for k, v in ta.get("phases_s", {}).items()})
print("wall, sampling:", {k: v for k, v in ta.items() if k != "phases_s"})
rows = []
for cid, c in s["benchmarks"].items():
    ph = (c.get("protocol") or {}).get("phases_s") or {}
    rows.append((sum(ph.values()), cid, ph))
rows.sort(key=lambda r: -r[0])
for t, cid, ph in rows[:int(sys.argv[2])]:
    print(f"{t:6.2f}s {cid[:110]}")
    print("        " + " ".join(f"{k}={v:.2f}" for k, v in sorted(ph.items(), key=lambda kv: -kv[1])))
PY
}
# Call 1 (issue 10): the tile_ops quick suite of the tree as found (10e7f20), first with an empty
# kernel cache (every source compiled by NVRTC in the run), then again with the cache it filled;
# the per-case phases of both runs.
call1() {
  export APEX_KERNEL_CACHE=/tmp/apex-kcache-s9
  rm -rf "$APEX_KERNEL_CACHE"
  for r in cold warm; do
    step quick_$r 300 $HOST run --no-build --backends cuda --quick --filter 'tile_ops.*' --output-dir "$OUT/quick_$r"
    tail -4 "$OUT/quick_$r.log"
    slowest_phases "$OUT/quick_$r/summary.json" 20 > "$OUT/phases_$r.txt" 2>&1
    head -30 "$OUT/phases_$r.txt"
  done
  cat "$OUT/table.txt"
}
# Call 2 (issue 10): tile_ops CUDA cases draw their uniform inputs on the device and verify there
# (f64 reference kernels, on-device compare, the reference checked against the CPU's on the last
# batch row). The self-check with its negative controls; then the quick suite of this tree with an
# empty kernel cache, again with the cache warm, and the previous plugin (10e7f20, .device/old)
# with the same warm cache, in one call.
call2() {
  export APEX_KERNEL_CACHE=/tmp/apex-kcache-s9
  rm -rf "$APEX_KERNEL_CACHE"
  step gpu_check 300 $B/tile_ops_gpu_check
  grep -E "^(FAIL|RESULT)|control" "$OUT/gpu_check.log" | head -30
  grep -c "^PASS" "$OUT/gpu_check.log"
  local lib=.device/host/release/libapex_plugin_tile_ops.so
  cp $lib /tmp/new_tile_ops.so
  for r in new_cold new_warm old_warm new_warm2; do
    case $r in old*) cp .device/old/libapex_plugin_tile_ops.so $lib ;; *) cp /tmp/new_tile_ops.so $lib ;; esac
    step quick_$r 300 $HOST run --no-build --backends cuda --quick --filter 'tile_ops.*' --output-dir "/tmp/quick_$r"
    tail -3 "$OUT/quick_$r.log"
    slowest_phases "/tmp/quick_$r/summary.json" 8 > "$OUT/phases_$r.txt" 2>&1
    head -4 "$OUT/phases_$r.txt"
  done
  cp /tmp/quick_new_warm/summary.md "$OUT/quick_new_warm_summary.md"
  cp /tmp/new_tile_ops.so $lib
  cat "$OUT/table.txt"
}
# Call 3 (issue 10 closing checks, issue 13 data): the tile_ops quick suite gated with
# `--compare auto` twice in a row (A/A against baselines/gpu-h100.json); the fixture kernel that
# turns wrong after its first call (`wrong_after_calls: 1`) must end `failed_accuracy`; then
# Nsight Compute on ff_model's L0 refine and apply at B=8 fp16 (full sections, the GPU's clocks).
call3() {
  export APEX_KERNEL_CACHE=/tmp/apex-kcache-s9
  for r in 1 2; do
    step aa_$r 300 $HOST run --no-build --backends cuda --quick --filter 'tile_ops.*' --compare auto --output-dir "/tmp/aa_$r"
    grep -E "compare auto|gate|measuring|cases in" "$OUT/aa_$r.log" | head -6
  done
  mkdir -p /tmp/wrong_cfg
  printf 'kernel: fixtures.cuda_known_duration\nproblem_size: {duration_us: [20, 30], wrong_after_calls: [0, 1]}\n' > /tmp/wrong_cfg/10-wrong.yaml
  step wrong2nd 120 $HOST run --no-build --fixtures --backends cuda --config-dir /tmp/wrong_cfg --filter 'fixtures.cuda_known_duration' --output-dir /tmp/wrong2nd
  python3 -c "
import json; s=json.load(open('/tmp/wrong2nd/summary.json'))
for k,c in sorted(s['benchmarks'].items()): print(k, c['status'], (c.get('reason') or '')[:160])"
  step ff_ncu 200 ncu --clock-control none --kernel-name regex:'ff_refine|ff_apply' --launch-skip 8 --launch-count 4 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats \
    $B/ff_model_gpu_check --only B=8
  grep -E "^  ff_|Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit|Achieved Occupancy|Theoretical Occupancy|Registers Per|Warp Cycles Per Issued|Dynamic Shared|Compute \(SM\) Throughput|Block Limit" "$OUT/ff_ncu.log" | head -80
  cat "$OUT/table.txt"
}
# Call 4 (issue 13): ff_model's apply in runs of four elements (16-byte loads of the pre-norm,
# packed and film tensors) and the refine/apply register caps, B=8: Nsight Compute durations of
# the L0 and L1 refine and apply kernels (fp16, the GPU's clocks), and each variant's B=8 check in
# fp16, bf16 and fp32. v0: the committed tree (scalar apply, 64 registers); v1: runs of four (90
# registers, 2 blocks a SM); v2: v1 with __launch_bounds__(256, 3) on refine and apply; v3: v1 with
# it on apply only.
call4() {
  for v in v0 v1 v2 v3; do
    step ncu_$v 200 ncu --clock-control none --kernel-name regex:'ff_refine|ff_apply' --launch-skip 8 --launch-count 4 \
      --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active \
      $B/ff_model_gpu_check_$v --only B=8
    grep -E "^(ok|FAIL|RESULT)" "$OUT/ncu_$v.log" | tr '\n' ' '; echo
    grep -E "^  ff_|gpu__time_duration|dram__throughput|warps_active" "$OUT/ncu_$v.log" | awk '{print $1, $NF}' | paste -sd' ' | sed "s/^/$v /"
  done
  cat "$OUT/table.txt"
}
# Call 5 (issue 14): the fused cross-entropy forward + gradient's re-read slice (REREAD_SLICE_BYTES)
# at 64 KiB (the tree), 32 and 16 KiB: `nn_ops_gpu_check --bench-only --only 'cross_entropy+grad
# bf16'` (4096 rows x 32k / 131k / 262k, verified once, then DRAM-cold graph replays), twice in
# alternation; then the torch anchor's cross-entropy cases with each call's outputs rotating.
call5() {
  for r in 1 2; do
    for s in 64 32 16; do
      step ce_s${s}_$r 200 $B/nn_ops_gpu_check_s$s --bench-only --only 'cross_entropy+grad bf16'
      grep -E "^bench|^(FAIL|RESULT)" "$OUT/ce_s${s}_$r.log" | grep -v resident | cut -c1-170 | sed "s/^/s$s r$r /"
    done
  done
  step ce_torch 400 python3 benches/anchors/nn_ops_torch.py --only cross_entropy
  grep -E "cross_entropy|copy" "$OUT/ce_torch.log" | head -30
  cat "$OUT/table.txt"
}
# Call 6 (issue 14): the same bench with re-read slices of 128 and 256 KiB against 64 (fewer,
# longer slices: smaller slices were much slower in call 5, 32k at 32 KiB 304 µs against 209).
call6() {
  for r in 1 2; do
    for s in 64 128 256; do
      step ce_s${s}_$r 200 $B/nn_ops_gpu_check_s$s --bench-only --only 'cross_entropy+grad bf16'
      grep "grad=true" "$OUT/ce_s${s}_$r.log" | grep -v resident | awk -v f=s${s}_$r '{print f, $4, $6, $7, $8, $9}'
    done
  done
  cat "$OUT/table.txt"
}
# Call 7 (issue 14): the fused cross-entropy forward + gradient with a row's 2-8 slices as one
# thread-block cluster (DSMEM exchange, cluster barriers) against the tree's global counters
# (`_s64`): the whole nn_ops self-check of the cluster build, then the bf16 and fp32 forward +
# gradient bench of both builds alternating, then the torch anchor's cross-entropy in the same call.
call7() {
  step check 300 $B/nn_ops_gpu_check_cluster
  grep -E "^(FAIL|RESULT)|cross_entropy.*(131072|262144)" "$OUT/check.log" | head -20
  for r in 1 2; do
    for v in s64 cluster; do
      step ce_${v}_$r 200 $B/nn_ops_gpu_check_$v --bench-only --only 'cross_entropy+grad'
      grep "grad=true" "$OUT/ce_${v}_$r.log" | grep -v resident | awk -v f=${v}_$r '{print f, $2, $4, $6, $7, $8, $9}'
    done
  done
  step ce_torch 400 python3 benches/anchors/nn_ops_torch.py --only cross_entropy
  grep -E '"grad": true' "$OUT/ce_torch.log" | grep compile | cut -c1-200
  cat "$OUT/table.txt"
}
# Call 7 hung: the cluster build skipped the target count (it sat in the other branch of an #if),
# so every block waited for it. Call 8: the fixed build; its cross-entropy self-check cases, then
# the forward + gradient bench of both builds alternating, then the torch anchor.
call8() {
  step check 150 $B/nn_ops_gpu_check_cluster --only cross_entropy
  grep -E "^(FAIL|RESULT)" "$OUT/check.log" | head -20
  grep -c "^ok\|^PASS" "$OUT/check.log"
  for r in 1 2; do
    for v in s64 cluster; do
      step ce_${v}_$r 120 $B/nn_ops_gpu_check_$v --bench-only --only 'cross_entropy+grad'
      grep "grad=true" "$OUT/ce_${v}_$r.log" | grep -v resident | awk -v f=${v}_$r '{print f, $2, $4, $6, $7, $8, $9}'
    done
  done
  step ce_torch 200 python3 benches/anchors/nn_ops_torch.py --only cross_entropy
  grep -E '"grad": true' "$OUT/ce_torch.log" | grep compile | cut -c1-200
  cat "$OUT/table.txt"
}
# Call 9 (issue 10, the final tree): the tile_ops self-check with its negative controls, apex-host
# calibrate, and the quick suite with --compare auto twice (the second with the kernel cache the
# first filled).
call9() {
  export APEX_KERNEL_CACHE=/tmp/apex-kcache-s9
  step gpu_check 200 $B/tile_ops_gpu_check
  grep -E "^(FAIL|RESULT)" "$OUT/gpu_check.log" | head; grep -c "^PASS" "$OUT/gpu_check.log"
  step calibrate 200 $HOST calibrate
  grep -E "batch|cold|copy" "$OUT/calibrate.log" | head -20
  for r in 1 2; do
    step quick_$r 300 $HOST run --no-build --backends cuda --quick --filter 'tile_ops.*' --compare auto --output-dir "/tmp/q_$r"
    grep -E "compare auto|gate|measuring|cases in|checks:" "$OUT/quick_$r.log" | head -6
    slowest_phases "/tmp/q_$r/summary.json" 3 > "$OUT/phases_$r.txt" 2>&1; head -2 "$OUT/phases_$r.txt"
  done
  cat "$OUT/table.txt"
}
# Call 10 (issue 13): ff_model's FiLM as two launches over all the frame's tiles (ff_film_scan: the
# scan once per channel; ff_film_mlp: LayerNorm and both linears a block of eight tiles at a time,
# each weight row read once per block) instead of a GEMV per tile. The self-check of every shape
# and precision; then the fp16 CUDA cases through apex-host with this plugin and with the previous
# one (.device/old, 10e7f20's), alternating.
call10() {
  step check 240 $B/ff_model_gpu_check
  grep -E "^(ok|FAIL|RESULT)" "$OUT/check.log" | tr '\n' ' '; echo
  local lib=.device/host/release/libapex_plugin_ff_model.so
  cp $lib /tmp/new_ff.so
  for r in new old new2; do
    case $r in old) cp .device/old/libapex_plugin_ff_model.so $lib ;; *) cp /tmp/new_ff.so $lib ;; esac
    step ff_$r 200 $HOST run --no-build --backends cuda --filter 'ff_model.infer/cuda/fp16/*' --output-dir "/tmp/ff_$r"
    grep -E "batch " "$OUT/ff_$r.log" | awk -v r=$r '{print r, $1, $3, $6}' | cut -c1-220
    grep -E "cases in|measuring" "$OUT/ff_$r.log"
  done
  cp /tmp/new_ff.so $lib
  cat "$OUT/table.txt"
}
# Call 10's FiLM was 3x slower (profile 249 µs against 81): its scan re-read its forward terms
# from global memory one dependent load per step, and each warp of the MLP waited on one weight
# row at a time. Call 11: the forward terms in shared memory, four weight rows in flight per warp;
# Nsight Compute durations of the two FiLM kernels (profile and B=8, fp16), the self-check, and
# the fp16 CUDA cases with this plugin and the previous one.
call11() {
  step ncu 200 ncu --clock-control none --kernel-name regex:ff_film --launch-skip 4 --launch-count 4 \
    --metrics gpu__time_duration.sum $B/ff_model_gpu_check --only profile
  grep -E "^  ff_film|gpu__time" "$OUT/ncu.log" | awk '{print $1, $NF}' | paste -sd' '
  step ncu8 200 ncu --clock-control none --kernel-name regex:ff_film --launch-skip 4 --launch-count 4 \
    --metrics gpu__time_duration.sum $B/ff_model_gpu_check --only B=8
  grep -E "^  ff_film|gpu__time" "$OUT/ncu8.log" | awk '{print $1, $NF}' | paste -sd' '
  local lib=.device/host/release/libapex_plugin_ff_model.so
  cp $lib /tmp/new_ff.so
  for r in new old; do
    case $r in old) cp .device/old/libapex_plugin_ff_model.so $lib ;; *) cp /tmp/new_ff.so $lib ;; esac
    step ff_$r 200 $HOST run --no-build --backends cuda --filter 'ff_model.infer/cuda/fp16/*' --output-dir "/tmp/ff_$r"
    grep -E "batch " "$OUT/ff_$r.log" | awk -v r=$r '{print r, $1, $3, $6}' | sed 's/budget_b1=16.0,budget_b2=8.0,channels=128,//' | cut -c1-200
  done
  cp /tmp/new_ff.so $lib
  step check 240 $B/ff_model_gpu_check
  grep -E "^(ok|FAIL|RESULT)" "$OUT/check.log" | tr '\n' ' '; echo
  cat "$OUT/table.txt"
}
# Call 11's MLP took 70 µs a level whatever B (the scan 6): each warp reduced its 32 sums one
# warp_sum after another. Call 12: the 32 sums reduce in one transposed butterfly (31 shuffles a
# lane); the same measurements as call 11.
call12() { call11; }
