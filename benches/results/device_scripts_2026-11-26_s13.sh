#!/usr/bin/env bash
# The device calls of the thirteenth session (2026-11-26), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugin
# in .device/host/release, the A/B plugin builds in .device/ab). Usage on the device:
# `source benches/results/device_scripts_2026-11-26_s13.sh; call1`.
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
  step host_$label 150 $HOST run --no-build --backends cuda "$@" --output-dir /tmp/$label
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

# Call 1 (issue 14): three changes against the previous build (nn_base).
#  - LayerNorm's ring schedule: each block's work items land in shared memory by TMA bulk
#    copies, several a block in flight (a new schedule beside the others, in one binary);
#  - MSE's partials collected by block 0 from 64-bit slots instead of a last-block counter;
#  - GELU-erf lets the next call in at its start where its grid is more than one wave.
# The self-check of every case (ring included), the in-process DRAM-cold bench of LayerNorm's
# schedules, MSE and GELU against the previous binary twice, apex-host's seed-small shapes
# DRAM-cold and L2-hot with each plugin build.
call1() {
  step nn_check 300 $B/nn_ops_gpu_check
  grep -cE "^PASS" "$OUT/nn_check.log"; grep -E "^FAIL|RESULT|error" "$OUT/nn_check.log" | head -8
  step ln_bench 200 $B/nn_ops_gpu_check --bench-only --only layer_norm
  for r in 1 2; do
    for v in base new; do
      X=$B/nn_ops_gpu_check; [ $v = base ] && X=$B/nn_ops_gpu_check_base
      step mse_${v}_$r 80 $X --bench-only --only mse_loss
      step gelu_${v}_$r 80 $X --bench-only --only gelu
    done
  done
  for f in "$OUT"/mse_*.log "$OUT"/gelu_*.log; do
    echo "-- $(basename $f .log)"; grep -E "^(gelu|mse_loss)" "$f" | awk '{$NF=""; print}'
  done > "$OUT/ab_bench.txt"
  rm -f "$OUT"/mse_*.log "$OUT"/gelu_*.log
  for v in base new; do
    host_ab small_$v nn_$v --l2-hot --filter 'nn_ops.*/cuda/*/*batch=16,dim=512,*seq=256' \
      --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=512'
  done
  grep -E "^layer_norm" "$OUT/ln_bench.log"
  cat "$OUT/ab_bench.txt"
  cat "$OUT/table.txt"
}

# Call 2 (issue 14): cross-entropy's partials collected by work item 0's block from 64-bit slots
# (forward: relaxed; with the gradient: release/acquire, its counters are reset after), on top of
# call 1's MSE and GELU changes (LayerNorm's ring dropped); LayerNorm's wide prefetch (the
# one-slice plan's vectors in both slices, three blocks an SM) as a fifth schedule. The
# self-check of every case, the LayerNorm schedules, cross-entropy against the previous binary
# twice, apex-host's seed-small shapes with each plugin build.
call2() {
  step nn_check 300 $B/nn_ops_gpu_check
  grep -cE "^PASS" "$OUT/nn_check.log"; grep -E "^FAIL|RESULT|error" "$OUT/nn_check.log" | head -8
  step ln_bench 200 $B/nn_ops_gpu_check --bench-only --only layer_norm
  for r in 1 2; do
    for v in base new; do
      X=$B/nn_ops_gpu_check; [ $v = base ] && X=$B/nn_ops_gpu_check_base
      step ce_${v}_$r 120 $X --bench-only --only cross_entropy
    done
  done
  for f in "$OUT"/ce_*.log; do
    echo "-- $(basename $f .log)"; grep -E "^cross_entropy" "$f" | awk '{$NF=""; print}'
  done > "$OUT/ab_bench.txt"
  rm -f "$OUT"/ce_*.log
  for v in base new; do
    host_ab small_$v nn_$v --l2-hot --filter 'nn_ops.*/cuda/*/*batch=16,dim=512,*seq=256' \
      --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=512'
  done
  grep -E "^layer_norm" "$OUT/ln_bench.log" | grep -E "dim=(512|1024|2048) "
  cat "$OUT/ab_bench.txt"
  cat "$OUT/table.txt"
}

# Call 3 (issue 14): the build to land (MSE partials collected by block 0; cross-entropy's
# forward likewise, its gradient pass back to the last block collecting, now from the same
# slots; GELU-erf's early trigger on more than one wave; LayerNorm unchanged). The self-check of
# every case; the torch anchor on the large grid, then apex-host on the same cases with the
# anchor's rows (DRAM-cold); apex-host's seed-small shapes DRAM-cold and L2-hot.
call3() {
  step nn_check 150 $B/nn_ops_gpu_check
  grep -E "^FAIL|^checks|RESULT" "$OUT/nn_check.log" | head -8
  mkdir -p /tmp/anchor
  step nn_torch 300 env OUT=/tmp/anchor python3 benches/anchors/nn_ops_torch.py
  tail -2 "$OUT/nn_torch.log"
  cp .device/ab/nn_new.so .device/host/release/libapex_plugin_nn_ops.so
  step host_large 200 $HOST run --no-build --backends cuda --filter 'nn_ops.*/cuda/*/*seq=8192' \
    --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=*' --anchor-results /tmp/anchor/nn_ops_torch.jsonl --output-dir /tmp/nn_large
  tail -2 "$OUT/host_large.log"
  cp /tmp/nn_large/summary.md "$OUT/nn_large_summary.md"
  cp /tmp/anchor/nn_ops_torch.jsonl "$OUT/nn_ops_torch.jsonl"
  host_ab small_new nn_new --l2-hot --filter 'nn_ops.*/cuda/*/*batch=16,dim=512,*seq=256' \
    --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=512'
  rm -f "$OUT/host_small_new.log"
  grep -E "torch_compile" "$OUT/nn_large_summary.md" | awk -F'|' '{print $2, $3, $5, $6}' | head -80
  cat "$OUT/table.txt"
}

# Call 4 (issue 14): launch shapes of the flat kernels, DRAM-cold in process, against call 3's
# build (new), alternating twice: v1 = four more vectors a thread (GELU/Swish UNROLL 8, MSE
# UNROLL 8), v2 = GELU/Swish UNROLL 2 and MSE with 8 blocks an SM.
call4() {
  for r in 1 2; do
    for v in new v1 v2; do
      X=$B/nn_ops_gpu_check; [ $v != new ] && X=$B/nn_ops_gpu_check_$v
      for op in swish gelu mse_loss; do step ${op}_${v}_$r 60 $X --bench-only --only $op; done
    done
  done
  for f in "$OUT"/swish_*.log "$OUT"/gelu_*.log "$OUT"/mse_loss_*.log; do
    echo "-- $(basename $f .log)"; grep -E "^(gelu|swish|mse_loss)" "$f" | awk '{$NF=""; print}'
  done > "$OUT/ab_bench.txt"
  rm -f "$OUT"/swish_*.log "$OUT"/gelu_*.log "$OUT"/mse_loss_*.log
  python3 - "$OUT/ab_bench.txt" <<'PY'
import sys, collections
t = collections.defaultdict(list); label = None
for line in open(sys.argv[1]):
    if line.startswith('-- '):
        label = line[3:].strip().rsplit('_', 2)[-2]; continue
    f = line.split()
    key = ' '.join(x for x in f if '=' in x or x in ('bf16', 'fp16', 'fp32') or x[0].isalpha() and '_' in x or x in ('gelu', 'swish'))
    t[(key, label)].append(float(f[-4]))
keys = sorted({k for k, _ in t})
print('%-60s %8s %8s %8s' % ('case (us, best of 2)', 'new', 'v1', 'v2'))
for k in keys:
    print('%-60s %8.2f %8.2f %8.2f' % (k, min(t[(k, 'new')]), min(t[(k, 'v1')]), min(t[(k, 'v2')])))
PY
  cat "$OUT/table.txt"
}

# Call 5 (issue 14): call 3 again with the build to land (call 3's, GELU/Swish at two vectors a
# thread after call 4): self-check, torch anchor and apex-host on the large grid, seed-small shapes.
call5() { call3; }

# Call 5c (issue 14): call 3 again with the build to land (GELU/Swish choosing their vectors a
# thread, `Activation::unroll`, after call 5b).
call5c() { call3; }

# Call 6 (issue 14): the whole CUDA suite of nn_ops through apex-host (both grids), wall time and
# the share spent measuring, with the build to land.
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

# Call 5b (issue 14): call 5's large-grid run showed GELU/Swish at hidden 1024 (8 M elements)
# slower with two vectors a thread than call 2's four (Swish bf16 12.60 against 12.01 us): the
# activations at one, two and four vectors a thread through apex-host, bf16 and fp32 Swish,
# bf16 GELU-erf, hidden 512 to 8192 and the 2 M-element shape, alternating twice.
call5b() {
  local f="--filter nn_ops.swish/cuda/*/*seq=8192 --filter nn_ops.gelu/cuda/bf16/*approximate=none,*seq=8192"
  f="$f --filter nn_ops.swish/cuda/*/*batch=16,dim=512,*seq=256 --filter nn_ops.gelu/cuda/bf16/*batch=16,dim=512,*seq=256"
  for r in 1 2; do for u in 1 2 4; do host_ab u${u}_$r nn_u$u $f > /dev/null; rm -f "$OUT/host_u${u}_$r.log"; done; done
  python3 - "$OUT/host_ab.txt" <<'PY'
import sys, collections
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    t[(f[1], f[2], f[3])].append((f[0].split('_')[0], float(f[5])))
print('%-64s %8s %8s %8s' % ('case (DRAM-cold us, best of 2)', 'u1', 'u2', 'u4'))
for k in sorted(t):
    best = {u: min(v for l, v in t[k] if l == u) for u in ('u1', 'u2', 'u4')}
    print('%-64s %8.2f %8.2f %8.2f' % (' '.join(k), best['u1'], best['u2'], best['u4']))
PY
  cat "$OUT/table.txt"
}

# Call 7 (issue 14): two more launch shapes against the landed build (new), alternating twice,
# in process (DRAM-cold) and through apex-host (the seed-small shapes, L2-hot):
# w1 = MSE at 2 vectors a thread, GELU-erf letting the next call in at its start on any grid;
# w2 = MSE at 1 vector a thread and 8 blocks an SM.
call7() {
  for r in 1 2; do
    for v in new w1 w2; do
      X=$B/nn_ops_gpu_check; [ $v != new ] && X=$B/nn_ops_gpu_check_$v
      for op in gelu mse_loss; do step ${op}_${v}_$r 60 $X --bench-only --only $op; done
    done
  done
  for f in "$OUT"/gelu_*.log "$OUT"/mse_loss_*.log; do
    echo "-- $(basename $f .log)"; grep -E "^(gelu|mse_loss)" "$f" | awk '{$NF=""; print}'
  done > "$OUT/ab_bench.txt"
  rm -f "$OUT"/gelu_*.log "$OUT"/mse_loss_*.log
  for r in 1 2; do for v in new w1 w2; do
    host_ab ${v}_$r nn_$v --l2-hot --filter 'nn_ops.gelu/cuda/*/*batch=16,dim=512,*seq=256' \
      --filter 'nn_ops.mse_loss/cuda/*/*batch=16,dim=512,*seq=256' > /dev/null
    rm -f "$OUT/host_${v}_$r.log"
  done; done
  sort -k2,4 -k1 "$OUT/host_ab.txt"
  python3 - "$OUT/ab_bench.txt" <<'PY'
import sys, collections
t = collections.defaultdict(list); label = None
for line in open(sys.argv[1]):
    if line.startswith('-- '):
        label = line[3:].strip().rsplit('_', 2)[-2]; continue
    f = line.split()
    key = ' '.join(x for x in f if '=' in x or x in ('bf16', 'fp16', 'fp32') or x[0].isalpha() and '_' in x or x == 'gelu')
    t[(key, label)].append(float(f[-4]))
keys = sorted({k for k, _ in t})
print('%-60s %8s %8s %8s' % ('case (us, best of 2)', 'new', 'w1', 'w2'))
for k in keys:
    print('%-60s %8.2f %8.2f %8.2f' % (k, min(t[(k, 'new')]), min(t[(k, 'w1')]), min(t[(k, 'w2')])))
PY
  cat "$OUT/table.txt"
}

# Call 8 (issue 14): balanced grid-stride grids (x1): a looping kernel's grid is the fewest
# blocks that give every block the same number of work items (LayerNorm's wave: 512 blocks of 4
# items at bf16 8192 x 1024 instead of 528 blocks of 3-4; MSE: 512 of 8 steps instead of 528 of
# 7-8), against the landed build, alternating twice, DRAM-cold in process.
call8() {
  for r in 1 2; do
    for v in new x1; do
      X=$B/nn_ops_gpu_check; [ $v != new ] && X=$B/nn_ops_gpu_check_$v
      for op in layer_norm mse_loss; do step ${op}_${v}_$r 60 $X --bench-only --only $op; done
    done
  done
  for f in "$OUT"/layer_norm_*.log "$OUT"/mse_loss_*.log; do
    echo "-- $(basename $f .log)"; grep -E "^(layer_norm|mse_loss)" "$f" | grep -v "schedule=" | awk '{$NF=""; print}'
  done > "$OUT/ab_bench.txt"
  rm -f "$OUT"/layer_norm_*.log "$OUT"/mse_loss_*.log
  python3 - "$OUT/ab_bench.txt" <<'PY'
import sys, collections
t = collections.defaultdict(list); label = None
for line in open(sys.argv[1]):
    if line.startswith('-- '):
        label = line[3:].strip().rsplit('_', 2)[-2]; continue
    f = line.split()
    key = ' '.join(x for x in f if '=' in x or x in ('bf16', 'fp16', 'fp32') or x[0].isalpha() and '_' in x)
    t[(key, label)].append(float(f[-4] if f[-1] != 'PASS' else f[-5]))
keys = sorted({k for k, _ in t})
print('%-60s %8s %8s' % ('case (us, best of 2)', 'new', 'x1'))
for k in keys:
    print('%-60s %8.2f %8.2f' % (k, min(t[(k, 'new')]), min(t[(k, 'x1')])))
PY
  cat "$OUT/table.txt"
}
