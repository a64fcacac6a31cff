#!/usr/bin/env bash
# The device calls of the twelfth session (2026-11-26), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugins
# in .device/host/release, the A/B plugin builds in .device/ab). Usage on the device:
# `source benches/results/device_scripts_2026-11-26_s12.sh; call2`.
# Call 1 was benches/probes/pdl_chain.cu alone (nvcc -O3 -arch=sm_90; log
# pdl_chain_h100_2026-11-26_s12_call1.log).
set -u
B=.device/bin
HOST="env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
row() { printf '%-22s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
host_ab() {  # $1: label, $2: plugin build; the fp16 fast profile and B=8 of apex-host's suite
  cp .device/ab/$2.so .device/host/release/libapex_plugin_ff_model.so
  step host_$1 150 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ab_$1
  python3 - /tmp/ab_$1/summary.json $1 <<'PY' | tee -a "$OUT/ab.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    if 'fp16' in k and 'path=fast' in k and 'height=128' in k and 'tile_size_l0=16' in k:
        us = '%.2f us' % (c['p50_ms'] * 1e3) if 'p50_ms' in c else '-'
        print(sys.argv[2], 'batch=8' if 'batch=8' in k else 'batch=1', us, c['status'])
PY
}

# Call 2 (issue 13): the lean refine at four CTAs a SM (64 registers; its stash inside the dead
# modulated rows, 49.5 KiB) and ff_base after ff_select, skipping what the refines write. The
# self-check of every fast shape (auto, and lean where it applies), the in-process bench against
# the previous build twice, apex-host's suite with each plugin build twice, Nsight Compute's
# kernel durations at B=8.
call2() {
  local X=$B/ff_model_gpu_check
  step ff_check 240 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto,lean
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head -70 | tail -12
  for r in 1 2; do
    step bench_prev_$r 60 $B/ff_model_gpu_check_prev --bench-only --refine auto
    step bench_new_$r 60 $X --bench-only --refine auto
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8|scaling)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  host_ab prev_1 prev; host_ab new_1 new
  step ncu_B8 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    $X --bench-only --only B=8 --refine auto
  grep -E "^  ff_|gpu__time_duration" "$OUT/ncu_B8.log" | sed 's/(int, [^)]*)//' | paste - - | awk '{print $1, $(NF)}'
  host_ab prev_2 prev; host_ab new_2 new
  cat "$OUT/table.txt"
}

# Call 3 (issue 13): call 2 again after its two faults were mended: the lean operand's bs was
# still placed from the region's start, not after the moved modulated rows (every lean level
# whose stash outgrows the rows, t = 8 and t = 6, failed); ff_base now reads ff_select's coverage
# map instead of rebuilding it per block from the ids (three barriers a block). Adds Nsight
# Compute's durations at the profile.
call3() {
  call2
  step ncu_B1 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum $B/ff_model_gpu_check --bench-only --only profile --refine auto
  grep -E "^  ff_|gpu__time_duration" "$OUT/ncu_B1.log" | sed 's/(int, [^)]*)//' | paste - - | awk '{print $1, $(NF)}'
}
