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
