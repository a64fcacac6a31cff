#!/usr/bin/env bash
# The device calls of the fourteenth session (2026-11-26), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugin
# in .device/host/release, the A/B plugin builds in .device/ab). Usage on the device:
# `source benches/results/device_scripts_2026-11-26_s14.sh; call1`.
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
# apex-host with plugin build $2 (.device/ab/$2.so), label $1, then the given run arguments;
# prints one line per case: label, kernel, precision, params, DRAM-cold and L2-hot p50.
host_ab() {
  local label=$1 build=$2; shift 2
  cp .device/ab/$build.so .device/host/release/libapex_plugin_nn_ops.so
  step host_$label ${HOST_TO:-150} $HOST run --no-build --backends cuda "$@" --output-dir /tmp/$label
  python3 - /tmp/$label/summary.json $label <<'PY' | tee -a "$OUT/host_ab.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('timing') or {}
    cold = t.get('batch', {}).get('stats', {}).get('p50_ms', 0) * 1e3
    hot = t.get('batch_hot', {}).get('stats', {}).get('p50_ms', 0) * 1e3
    p = k.split('/')
    print(sys.argv[2], p[0], p[2], p[3], 'cold %.2f us' % cold, 'hot %.2f us' % hot, c['status'])
PY
}

# Call 1 (issue 14): the collecting block loads its threads' partial slots up to four at a
# time before it waits on any (`partial_collect_sum`, common.cuh) instead of one polled slot
# after another, in MSE and cross-entropy (base: the thirteenth session's final build). The
# self-check of both ops, the in-process DRAM-cold bench of MSE (twice) and the cross-entropy
# forward against the previous binary, apex-host on MSE's and cross-entropy's large rows and
# the seed's small shapes (DRAM-cold and L2-hot) with each plugin build.
call1() {
  step check_mse 200 $B/nn_ops_gpu_check --only mse_loss
  step check_ce 300 $B/nn_ops_gpu_check --only cross_entropy
  for f in check_mse check_ce; do
    echo "$f: $(grep -cE '^PASS' "$OUT/$f.log") pass, $(grep -cE '^FAIL' "$OUT/$f.log") fail"
  done | tee -a "$OUT/table.txt"
  for r in 1 2; do
    for v in base new; do
      X=$B/nn_ops_gpu_check; [ $v = base ] && X=$B/nn_ops_gpu_check_base
      step mse_${v}_$r 80 $X --bench-only --only mse_loss
    done
  done
  for v in base new; do
    X=$B/nn_ops_gpu_check; [ $v = base ] && X=$B/nn_ops_gpu_check_base
    step ce_${v} 200 $X --bench-only --only "cross_entropy bf16"
  done
  for f in "$OUT"/mse_*.log "$OUT"/ce_*.log; do
    echo "-- $(basename $f .log)"; grep -E "^(cross_entropy|mse_loss)" "$f" | awk '{$NF=""; print}'
  done > "$OUT/ab_bench.txt"
  rm -f "$OUT"/mse_*.log "$OUT"/ce_*.log
  for v in base new; do
    HOST_TO=280 host_ab llm_$v nn_$v --l2-hot --filter 'nn_ops.mse_loss/cuda/*/*seq=8192' \
      --filter 'nn_ops.cross_entropy/cuda/bf16/*rows=4096,vocab=*' \
      --filter 'nn_ops.mse_loss/cuda/*/*batch=16,dim=512,*seq=256' \
      --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=512'
  done
  cat "$OUT/ab_bench.txt"
  cat "$OUT/table.txt"
}

# Call 2 (issue 14): what any kernel can reach at the two short cases' own sizes
# (benches/probes/same_size_bounds.cu: memcpy, copy kernels over unroll x blocks a SM, TMA bulk
# copies; read kernels over the MSE's two 64 MiB inputs), beside apex-host's LayerNorm 8192 x
# 1024 and MSE 8192 x 4096 (bf16, fp16) in the same call.
call2() {
  step build_probe 120 nvcc -O3 -arch=sm_90 -o /tmp/same_size_bounds benches/probes/same_size_bounds.cu
  step probe 300 /tmp/same_size_bounds
  step host_short 200 $HOST run --no-build --backends cuda \
    --filter 'nn_ops.layer_norm/cuda/*/*dim=1024,*seq=8192' \
    --filter 'nn_ops.mse_loss/cuda/*/*dim=4096,*seq=8192' --output-dir /tmp/short
  python3 - /tmp/short/summary.json <<'PY' | tee "$OUT/host_short.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('timing') or {}
    cold = t.get('batch', {}).get('stats', {}).get('p50_ms', 0) * 1e3
    th = c.get('throughput') or {}
    print(k, 'cold %.2f us' % cold, '%.1f %% of line' % (th.get('pct_of_copy_bandwidth') or 0),
          'line %s GB/s' % th.get('line_gbps'), c['status'])
PY
  cp /tmp/short/summary.json "$OUT/host_short_summary.json" 2>/dev/null
  tail -4 "$OUT/probe.log"
  cat "$OUT/table.txt"
}

# Call 3 (issue 14): the probe again with more TMA copy shapes (stages x chunk) and MSE's grid
# reduction rebuilt on the read kernel: publish only, block 0 collects (nn_ops' scheme), the last
# block collects.
call3() {
  step build_probe 120 nvcc -O3 -arch=sm_90 -o /tmp/same_size_bounds benches/probes/same_size_bounds.cu
  step probe 300 /tmp/same_size_bounds
  grep -E "tma|mse|read2 4/4|best|line" "$OUT/probe.log"
  cat "$OUT/table.txt"
}

# Call 4 (issue 14): the probe with a LayerNorm prototype on the TMA copy's pipeline (bf16 8192 x
# 1024, over stages x chunk) and MSE's reduction broken down (publish only, block 0, last block,
# block 0 without waiting, an extra collector block; twice), beside apex-host's LayerNorm 8192 x
# 1024 and MSE 8192 x 4096 in the same call.
call4() {
  step build_probe 120 nvcc -O3 -arch=sm_90 -o /tmp/same_size_bounds benches/probes/same_size_bounds.cu
  step probe 300 /tmp/same_size_bounds
  step host_short 200 $HOST run --no-build --backends cuda \
    --filter 'nn_ops.layer_norm/cuda/*/*dim=1024,*seq=8192' \
    --filter 'nn_ops.mse_loss/cuda/*/*dim=4096,*seq=8192' --output-dir /tmp/short
  grep -E "^nn_ops|ok$" "$OUT/host_short.log" | head -3
  grep -E "ln|mse|read2 4/4|best|line|FAIL|differ" "$OUT/probe.log"
  cat "$OUT/table.txt"
}

# Call 5 (issue 14): two changes against the thirteenth session's build (base):
#  - LayerNorm's `bulk` schedule (layer_norm_bulk.cu: chunks of rows through a ring of shared-
#    memory buffers by TMA bulk copies, a warp a row), the default for rows of 1-4 KiB;
#  - the collecting block polls all of its slots each round (partial_collect_sum) in MSE and
#    cross-entropy.
# The self-check of the three ops (every LayerNorm schedule), the in-process bench of every
# LayerNorm schedule, MSE (twice) and the cross-entropy forward against the base binary, and
# apex-host's LLM rows and seed-small shapes of the three ops with each plugin build.
call5() {
  for op in layer_norm mse_loss cross_entropy; do
    step check_$op 300 $B/nn_ops_gpu_check --only $op
    echo "check $op: $(grep -cE '^PASS' "$OUT/check_$op.log") pass, $(grep -cE '^FAIL' "$OUT/check_$op.log") fail" | tee -a "$OUT/table.txt"
    grep -E "^FAIL" "$OUT/check_$op.log" | head -5 >> "$OUT/table.txt"
  done
  cat "$OUT"/check_*.log > "$OUT/checks.txt"; rm -f "$OUT"/check_*.log
  step ln_bench 200 $B/nn_ops_gpu_check --bench-only --only layer_norm
  for r in 1 2; do
    for v in base new; do
      X=$B/nn_ops_gpu_check; [ $v = base ] && X=$B/nn_ops_gpu_check_base
      step mse_${v}_$r 80 $X --bench-only --only mse_loss
    done
  done
  for v in base new; do
    X=$B/nn_ops_gpu_check; [ $v = base ] && X=$B/nn_ops_gpu_check_base
    step ce_${v} 200 $X --bench-only --only "cross_entropy bf16"
  done
  for f in "$OUT"/mse_*.log "$OUT"/ce_*.log; do
    echo "-- $(basename $f .log)"; grep -E "^(cross_entropy|mse_loss)" "$f" | awk '{$NF=""; print}'
  done > "$OUT/ab_bench.txt"
  rm -f "$OUT"/mse_*.log "$OUT"/ce_*.log
  for v in base new; do
    HOST_TO=280 host_ab llm_$v nn_$v --l2-hot --filter 'nn_ops.layer_norm/cuda/*/*seq=8192' \
      --filter 'nn_ops.mse_loss/cuda/*/*seq=8192' \
      --filter 'nn_ops.cross_entropy/cuda/bf16/*rows=4096,vocab=*' \
      --filter 'nn_ops.layer_norm/cuda/*/*batch=16,dim=512,*seq=256' \
      --filter 'nn_ops.mse_loss/cuda/*/*batch=16,dim=512,*seq=256' \
      --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=512'
  done
  grep -E "^layer_norm" "$OUT/ln_bench.log" | awk '{$NF=""; print}'
  cat "$OUT/ab_bench.txt"
  cat "$OUT/table.txt"
}

# Call 6 was a compute-sanitizer run of call 5's bulk LayerNorm (`--only "dim=8 schedule=bulk"`):
# ptxas dropped the high half of x from the address of the prologue's first bulk copy (an
# unrolled loop's peeled first iteration); call 7 is call 5 again with that loop not unrolled.

# Call 8 (issue 14): the build to land (bulk LayerNorm for 2-4 KiB rows with three chunks a block;
# MSE polling its three slots a thread together; cross-entropy's last block polling four at a
# time, its forward's block 0 one at a time) against the thirteenth session's: the whole
# self-check, then apex-host's LLM rows and seed-small shapes of the three ops with each build.
call8() {
  step nn_check 240 $B/nn_ops_gpu_check
  echo "check: $(grep -cE '^PASS' "$OUT/nn_check.log") pass, $(grep -cE '^FAIL' "$OUT/nn_check.log") fail" | tee -a "$OUT/table.txt"
  grep -E "^FAIL" "$OUT/nn_check.log" | head -5 >> "$OUT/table.txt"
  for v in base new; do
    HOST_TO=200 host_ab ab_$v nn_$v --l2-hot --filter 'nn_ops.layer_norm/cuda/*/*seq=8192' \
      --filter 'nn_ops.mse_loss/cuda/*/*seq=8192' \
      --filter 'nn_ops.cross_entropy/cuda/bf16/*rows=4096,vocab=*' \
      --filter 'nn_ops.layer_norm/cuda/*/*batch=16,dim=512,*seq=256' \
      --filter 'nn_ops.mse_loss/cuda/*/*batch=16,dim=512,*seq=256' \
      --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=512'
  done
  rm -f "$OUT"/host_ab_*.log "$OUT"/host_ab_base.log "$OUT"/host_ab_new.log
  cat "$OUT/table.txt"
}

# Call 9 (issue 14): torch eager and torch.compile on the large grid, then apex-host's large grid
# with those rows as anchors, in one call (the landed build).
call9() {
  mkdir -p /tmp/anchor
  step nn_torch 330 env OUT=/tmp/anchor python3 benches/anchors/nn_ops_torch.py
  tail -2 "$OUT/nn_torch.log"
  cp .device/ab/nn_new.so .device/host/release/libapex_plugin_nn_ops.so
  step host_large 220 $HOST run --no-build --backends cuda --filter 'nn_ops.*/cuda/*/*seq=8192' \
    --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=*' --anchor-results /tmp/anchor/nn_ops_torch.jsonl --output-dir /tmp/nn_large
  tail -2 "$OUT/host_large.log"
  cp /tmp/nn_large/summary.md "$OUT/nn_large_summary.md"
  cp /tmp/anchor/nn_ops_torch.jsonl "$OUT/nn_ops_torch.jsonl"
  grep -E "torch_compile" "$OUT/nn_large_summary.md" | awk -F'|' '{print $2, $3, $5, $6}' | head -80
  cat "$OUT/table.txt"
}

# Call 10 (issue 14): the whole CUDA suite of nn_ops (both grids) with the landed build.
call10() { call6; }

# The thirteenth session's call 6 (the whole suite, its figures extracted), reused by call 10.
call6() {
  cp .device/ab/nn_new.so .device/host/release/libapex_plugin_nn_ops.so
  step nn_full 575 $HOST run --no-build --backends cuda --filter 'nn_ops.*' --output-dir /tmp/nn_full
  tail -4 "$OUT/nn_full.log"
  python3 - /tmp/nn_full/summary.json <<'PY' | tee "$OUT/nn_full_extract.txt"
import json, sys
s = json.load(open(sys.argv[1]))
print('counts', s['counts'])
print('time_accounting', json.dumps(s['time_accounting']))
rows = []
for k, c in s['benchmarks'].items():
    t = c.get('throughput') or {}
    if 'p50_ms' not in c: rows.append((k, '-', '-', '-', c['status'])); continue
    rows.append((k, '%.2f' % (c['p50_ms'] * 1e3), '%.0f' % t.get('gbps', 0), '%.1f' % t.get('pct_of_copy_bandwidth', 0), c['status']))
print('line_gbps', next((c['throughput'].get('line_gbps') for c in s['benchmarks'].values() if c.get('throughput')), None))
for r in sorted(rows):
    if 'rows=' in r[0] and 'vocab=' in r[0] and 'rows=4096' not in r[0]: continue
    if 'seq=8192' in r[0] or 'rows=4096' in r[0] or 'batch=16,' in r[0] and 'seq=256' in r[0] and 'dim=512' in r[0]:
        print(' '.join(r))
PY
  cp /tmp/nn_full/summary.md "$OUT/nn_full_summary.md"
  gzip -c /tmp/nn_full/summary.json > "$OUT/nn_full_summary.json.gz"
  cat "$OUT/table.txt"
}

# Call 11 (issue 14): the landed build after fp32 1024 (4 KiB rows) went back to prefetching:
# LayerNorm's self-check, and apex-host's LayerNorm LLM rows and seed-small shapes.
call11() {
  step check_ln 120 $B/nn_ops_gpu_check --only layer_norm
  echo "check layer_norm: $(grep -cE '^PASS' "$OUT/check_ln.log") pass, $(grep -cE '^FAIL' "$OUT/check_ln.log") fail" | tee -a "$OUT/table.txt"
  cp .device/ab/nn_new.so .device/host/release/libapex_plugin_nn_ops.so
  step host_ln 200 $HOST run --no-build --backends cuda --filter 'nn_ops.layer_norm/cuda/*/*seq=8192' \
    --filter 'nn_ops.layer_norm/cuda/*/*batch=16,dim=512,*seq=256' --output-dir /tmp/ln
  python3 - /tmp/ln/summary.json <<'PY' | tee "$OUT/host_ln.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('throughput') or {}
    print(k, '%.2f us' % (c['p50_ms'] * 1e3), '%.1f %%' % (t.get('pct_of_copy_bandwidth') or 0), c['status'])
PY
  cat "$OUT/table.txt"
}

# Call 12 (issue 14): call 11 again after fp32 rows of 4 KiB (8192 x 1024, 89.8 % prefetching in
# call 11) took a block per item (call 7's bench: 24.40 against 24.84 us).
call12() { call11; }

# Call 13 (issue 14): the named bulk schedule now runs wherever the kernel can (the default
# still needs three chunks a block), so the self-check exercises it on short tensors (short
# last chunks, rows of 8 and 512 elements): LayerNorm's self-check, then compute-sanitizer's
# memcheck and racecheck on the bulk cases.
call13() {
  step check_ln 120 $B/nn_ops_gpu_check --only layer_norm
  echo "check layer_norm: $(grep -cE '^PASS' "$OUT/check_ln.log") pass, $(grep -cE '^FAIL' "$OUT/check_ln.log") fail" | tee -a "$OUT/table.txt"
  step memcheck 200 compute-sanitizer --tool memcheck $B/nn_ops_gpu_check --only "schedule=bulk"
  step racecheck 200 compute-sanitizer --tool racecheck $B/nn_ops_gpu_check --only "schedule=bulk"
  for f in memcheck racecheck; do
    echo "$f: $(grep -cE '^PASS' "$OUT/$f.log") pass, $(grep -cE '^FAIL' "$OUT/$f.log") fail; $(grep -E 'ERROR SUMMARY|hazard' "$OUT/$f.log" | tail -2 | tr '\n' ' ')" | tee -a "$OUT/table.txt"
  done
  cat "$OUT/table.txt"
}

# Call 14 (issue 14): the probe with two more collectors for MSE's reduction: block 0's first warp
# alone polling every slot each round (warp reduction), and block 0 sleeping 100 ns between polls.
call14() { call3; }

# Call 15 (issue 14): the bulk LayerNorm for 16-bit rows of 2,048 (weight and bias in shared
# memory: in registers they spilled), the default for 16-bit 4 KiB rows, against call 12's build
# (base): LayerNorm's self-check (a 21 x 2048 case added), memcheck and racecheck of the bulk
# cases, every schedule in process, apex-host's LayerNorm LLM rows with each build, twice.
call15() {
  step check_ln 120 $B/nn_ops_gpu_check --only layer_norm
  echo "check layer_norm: $(grep -cE '^PASS' "$OUT/check_ln.log") pass, $(grep -cE '^FAIL' "$OUT/check_ln.log") fail" | tee -a "$OUT/table.txt"
  step memcheck 200 compute-sanitizer --tool memcheck $B/nn_ops_gpu_check --only "schedule=bulk"
  step racecheck 200 compute-sanitizer --tool racecheck $B/nn_ops_gpu_check --only "schedule=bulk"
  for f in memcheck racecheck; do
    echo "$f: $(grep -cE '^PASS' "$OUT/$f.log") pass, $(grep -cE '^FAIL' "$OUT/$f.log") fail; $(grep -E 'ERROR SUMMARY|hazard' "$OUT/$f.log" | tail -1)" | tee -a "$OUT/table.txt"
  done
  rm -f "$OUT/memcheck.log" "$OUT/racecheck.log"
  step ln_bench 200 $B/nn_ops_gpu_check --bench-only --only layer_norm
  for r in 1 2; do
    for v in base new; do
      host_ab ${v}_$r nn_$v --filter 'nn_ops.layer_norm/cuda/*/*seq=8192' > /dev/null
    done
  done
  rm -f "$OUT"/host_*_1.log "$OUT"/host_*_2.log
  grep -E "^layer_norm (bf16|fp32) batch=1 seq=8192 dim=(1024|2048)" "$OUT/ln_bench.log" | awk '{$NF=""; print}'
  grep -E "dim=(1024|2048)" "$OUT/host_ab.txt"
  cat "$OUT/table.txt"
}
