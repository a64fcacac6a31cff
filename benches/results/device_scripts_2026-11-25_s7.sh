#!/usr/bin/env bash
# The device calls of the seventh session of 2026-11-25 (H100), run from the repository root on
# the device machine with the release examples carried in .device/bin. Usage on the device:
# `source benches/results/device_scripts_2026-11-25_s7.sh; call1`.
set -u
B=.device/bin
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
row() { printf '%-12s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
# Call 1 (issue 15, and the StandaloneGpu change of session 6): the Poisson self-check, now with
# every method on both launch plans (mg_persistent is new: the whole MG or MG-PCG solve in one
# cooperative launch), and its graph-timed bench; then the four other plugins' GPU self-checks,
# which open the GPU through plugin-api's StandaloneGpu since session 6.
call1() {
  step poisson 200 $B/poisson_gpu_check --bench
  grep -E "^(FAIL|RESULT|checks)|fail" "$OUT/poisson.log" | head -20
  grep -E "^bench" "$OUT/poisson.log" | cut -c7-150
  for p in tile_ops tile_ssm ff_model nn_ops; do
    step $p 150 $B/${p}_gpu_check
    grep -E "^(RESULT|checks)|FAIL" "$OUT/$p.log" | head -5
    tail -2 "$OUT/$p.log"
  done
  cat "$OUT/table.txt"
}
# Call 2 (issue 15): what a grid-wide barrier and a two-double all-reduce cost on this GPU
# (benches/probes/grid_barrier.cu, built here with nvcc), then the Poisson check and bench again
# after the step functions got their __restrict__ parameters back.
call2() {
  step nvcc 120 nvcc -O3 -arch=sm_90 -o "$OUT/grid_barrier" benches/probes/grid_barrier.cu
  step barrier 120 "$OUT/grid_barrier"
  cat "$OUT/barrier.log"; rm -f "$OUT/grid_barrier"
  step poisson2 200 $B/poisson_gpu_check --bench
  grep -E "^(FAIL|RESULT|checks)|fail" "$OUT/poisson2.log" | head -20
  grep -E "^bench" "$OUT/poisson2.log" | grep -v "zch\|/SM" | cut -c7-128
  cat "$OUT/table.txt"
}
# Call 3 (issue 15): cg_resident (CG with the vectors in registers, one block per tile, halo
# exchange through the tile surfaces): the Poisson check (CG on three launch plans) and bench;
# then the 256^3 profiles of the binary built from 875e4dc (before the step functions) and of this
# one, alternating, to tell a code change from this machine's own figures.
call3() {
  step poisson3 240 $B/poisson_gpu_check --bench
  grep -E "^(FAIL|RESULT|checks)|fail" "$OUT/poisson3.log" | head -20
  grep -E "^bench" "$OUT/poisson3.log" | grep -v "zch" | cut -c7-150
  for r in 1 2; do
    step old256_$r 120 $B/poisson_gpu_check_875e4dc --only '256^3'
    step new256_$r 120 $B/poisson_gpu_check --only '256^3'
  done
  for f in old256_1 new256_1 old256_2 new256_2; do
    grep -E "^bench (cg|mg|mgpcg) 256" "$OUT/$f.log" | grep -v "zch\|/SM" | cut -c7-118 | sed "s/^/$f /"
  done
  cat "$OUT/table.txt"
}
# Call 4 (issue 15): cg_resident with every halo load of an iteration in flight at once; the
# buffers allocated in their old order (the level table last); the check and bench; the 256^3
# profiles of 875e4dc and of this tree, alternating; Nsight Compute's warp states of cg_resident.
call4() {
  step poisson4 240 $B/poisson_gpu_check --bench
  grep -E "^(FAIL|RESULT|checks)|fail" "$OUT/poisson4.log" | head -20
  grep -E "^bench" "$OUT/poisson4.log" | grep -v "launches zch" | cut -c7-150
  step old256 120 $B/poisson_gpu_check_875e4dc --only '256^3'
  step new256 120 $B/poisson_gpu_check --only '256^3'
  for f in old256 new256; do
    grep -E "^bench (cg|mg|mgpcg) 256" "$OUT/$f.log" | grep -v "zch\|/SM" | cut -c7-118 | sed "s/^/$f /"
  done
  step ncu 120 ncu --kernel-name cg_resident --launch-count 1 --section WarpStateStats \
    --section SchedulerStats --section LaunchStats $B/poisson_gpu_check --only 'cg 64^3 to 1e-5'
  grep -E "Stall|Warp Cycles|Issued|Eligible|Active Warps|Duration|Registers" "$OUT/ncu.log" | head -40
  cat "$OUT/table.txt"
}
# Call 5 (issue 15): CG's update recomputes A p instead of reading it back (8 words per point
# per iteration instead of 10; cg_direction no longer stores q): the check and bench; the 256^3
# profiles of 875e4dc and of this tree; then the poisson suite through apex-host (carried in
# .device/host/release with the plugin library) as a user's report shows it.
call5() {
  step poisson5 240 $B/poisson_gpu_check --bench
  grep -E "^(FAIL|RESULT|checks)|fail" "$OUT/poisson5.log" | head -20
  grep -E "^bench" "$OUT/poisson5.log" | grep -v "launches zch" | cut -c7-150
  step old256 120 $B/poisson_gpu_check_875e4dc --only '256^3'
  step new256 120 $B/poisson_gpu_check --only '256^3'
  for f in old256 new256; do
    grep -E "^bench (cg|mg|mgpcg) 256" "$OUT/$f.log" | grep -v "zch\|/SM" | cut -c7-118 | sed "s/^/$f /"
  done
  step host 240 env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host run --no-build \
    --backends cuda --filter 'poisson.*' --output-dir "$OUT/host"
  tail -5 "$OUT/host.log"
  python3 - "$OUT/host/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print('status', s['status'], s['counts'], 'sampling %.1f %%' % (s.get('time_accounting') or {}).get('sampling_pct', 0))
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('throughput') or {}
    f = c.get('figures') or {}
    print('%-70s %-6s %10.1f us  it %-4s %5.1f %% of copy  %s' % (k[:70], c['status'], (c.get('p50_ms') or 0) * 1e3,
          f.get('iterations', '-'), t.get('pct_of_copy_bandwidth') or 0, (c.get('reason') or '')[:60]))
PY
  (cd "$OUT/host" && cp summary.json ../host_summary.json && cp summary.md ../host_summary.md) && rm -rf "$OUT/host"
  cat "$OUT/table.txt"
}
# Call 6 (issue 15): where the per-kernel path at 256^3 lost 4-15 % against 875e4dc (its kernels'
# SASS is the same): Nsight Compute's per-kernel durations of the first 500 kernels of the MG
# 256^3 profile (its check solve) in both binaries; then the poisson suite through apex-host on
# this tree (the library of call 5 was the 8-word variant, reverted).
call6() {
  for v in poisson_gpu_check_875e4dc poisson_gpu_check; do
    step ncu_$v 150 ncu --metrics gpu__time_duration.sum --launch-count 500 --print-summary per-kernel \
      $B/$v --only 'mg 256^3 cap 10'
    grep -E "^  [a-z_]+\(|gpu__time_duration" "$OUT/ncu_$v.log" | sed -E 's/\(int.*\) \(/ (/; s/, Context.*//; s/ +/ /g' | paste - - | cut -c1-150
  done
  step host 240 env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host run --no-build \
    --backends cuda --filter 'poisson.*' --output-dir "$OUT/host"
  python3 - "$OUT/host/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print('status', s['status'], s['counts'], 'sampling %.1f %%' % (s.get('time_accounting') or {}).get('sampling_pct', 0))
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('throughput') or {}
    f = (c.get('figures') or {}).get('iterations') or {}
    print('%-100s %-6s %10.1f us it %-4s %5.1f %%' % (k[:100], c['status'], (c.get('p50_ms') or 0) * 1e3,
          f.get('value', '-'), t.get('pct_of_copy_bandwidth') or 0))
PY
  (cd "$OUT/host" && cp summary.json ../host_summary.json && cp summary.md ../host_summary.md) && rm -rf "$OUT/host"
  cat "$OUT/table.txt"
}
# Call 7 (issue 15): rbgs with every load issued before the sum (call 6 found its fine-level
# sweep 28 % slower than 875e4dc's: ptxas had put each add between the loads); the check and
# bench, then 875e4dc's 256^3 profiles beside this tree's.
call7() {
  step poisson7 240 $B/poisson_gpu_check --bench
  grep -E "^(FAIL|RESULT|checks)|fail" "$OUT/poisson7.log" | head -20
  grep -E "^bench" "$OUT/poisson7.log" | grep -v "launches zch" | cut -c7-150
  step old256 120 $B/poisson_gpu_check_875e4dc --only '256^3'
  grep -E "^bench (cg|mg|mgpcg) 256" "$OUT/old256.log" | grep -v "zch\|/SM" | cut -c7-118 | sed "s/^/old256 /"
  cat "$OUT/table.txt"
}
# Call 8 (issue 15): after cg_persistent and cg_resident share their scalar recurrence
# (CgScalars): the Poisson self-check, then the CG profiles at 64^3 and 16^3.
call8() {
  step poisson8 120 $B/poisson_gpu_check
  grep -E "^(FAIL|RESULT|checks)" "$OUT/poisson8.log" | head -10
  step cg8 60 $B/poisson_gpu_check --only 'cg 64^3 to 1e-5'
  step cg16 60 $B/poisson_gpu_check --only 'cg 16^3'
  grep -hE "^bench cg" "$OUT/cg8.log" "$OUT/cg16.log" | grep -v "zch" | cut -c7-150
  cat "$OUT/table.txt"
}
# Call 9 (issue 15): after enqueue.rs dispatches each launch plan from one match (the per-kernel
# sequence in its own function): the Poisson self-check and the 64^3 profiles.
call9() {
  step poisson9 120 $B/poisson_gpu_check
  grep -E "^(FAIL|RESULT|checks)" "$OUT/poisson9.log" | head -10
  step p64 90 $B/poisson_gpu_check --only '64^3 seed cap'
  grep -hE "^bench" "$OUT/p64.log" | grep -v "zch [0-9]" | cut -c7-150
  cat "$OUT/table.txt"
}
