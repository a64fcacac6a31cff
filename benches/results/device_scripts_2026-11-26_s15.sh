#!/usr/bin/env bash
# The device calls of the fifteenth session (2026-11-26), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugin
# in .device/host/release, the A/B plugin builds in .device/ab). Usage on the device:
# `source benches/results/device_scripts_2026-11-26_s15.sh; call1`.
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

# Call 1 (issue 14): MSE by TMA bulk loads (benches/probes/same_size_bounds.cu, `mse` mode):
# each block streams its balanced contiguous share of both inputs through shared-memory stages,
# against the register kernel with nn_ops' collection and the read lines, in one process, twice.
call1() {
  step nvcc 300 nvcc -O3 -arch=sm_90 -o /tmp/same_size_bounds benches/probes/same_size_bounds.cu
  step probe_mse 300 /tmp/same_size_bounds mse
  grep -E "^(rline|read64|best)|loss" "$OUT/probe_mse.log" | tail -60
}

# Call 2 (issue 14): the same probe with cache hints on the 16-byte loads (ldh<H>: nc, L2
# 256-byte and 128-byte prefetch, L1 no_allocate, an L2 evict_first policy), on the read alone
# and on MSE with block 0 collecting, twice (the bulk variants of call 1 run again after them).
call2() { call1; }

# apex-host over the given filters with plugin build $2 (.device/ab/$2.so), label $1: one line
# per case (label, kernel, precision, params, DRAM-cold p50 us, % of the line) in host_ab.txt.
host_pct() {
  local label=$1 build=$2; shift 2
  cp .device/ab/$build.so .device/host/release/libapex_plugin_nn_ops.so
  step host_$label ${HOST_TO:-150} $HOST run --no-build --backends cuda "$@" --output-dir /tmp/$label
  python3 - /tmp/$label/summary.json $label <<'PY' >> "$OUT/host_ab.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('timing') or {}
    cold = t.get('batch', {}).get('stats', {}).get('p50_ms', 0) * 1e3
    pct = (c.get('throughput') or {}).get('pct_of_copy_bandwidth') or 0
    print(sys.argv[2], k, '%.3f' % cold, '%.1f' % pct, c['status'])
PY
}
# Base/new pairs of host_ab.txt: every case's ratio, the extremes and the named rows.
ab_table() {
  python3 - "$OUT/host_ab.txt" "$@" <<'PY' | tee "$OUT/ab_table.txt"
import sys, collections
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    label, key, us, pct, status = line.split()
    rows[key][label.rsplit('_', 1)[1]] = (float(us), float(pct), status)
ratios = []
for key, v in sorted(rows.items()):
    if 'base' in v and 'new' in v and v['base'][0] > 0 and v['new'][0] > 0:
        ratios.append((v['new'][0] / v['base'][0], key, v))
ratios.sort()
print('cases %d; new/base: min %.3f, median %.3f, max %.3f; faster than 0.99: %d, slower than 1.01: %d' % (
    len(ratios), ratios[0][0], ratios[len(ratios) // 2][0], ratios[-1][0],
    sum(r < 0.99 for r, _, _ in ratios), sum(r > 1.01 for r, _, _ in ratios)))
bad = [k for k, v in rows.items() if any(x[2] != 'ok' for x in v.values())]
print('not ok:', bad or 'none')
for r, key, v in ratios[:6] + ratios[-6:] + [x for x in ratios if any(n in x[1] for n in sys.argv[2:])]:
    print('%-60s base %9.3f us %5.1f %%  new %9.3f us %5.1f %%  %.3f' % (key, v['base'][0], v['base'][1], v['new'][0], v['new'][1], r))
PY
}

# Call 3 (issue 14): MSE with MIN_BLOCKS in its launch bounds (ptxas keeps all eight loads of a
# step in flight: 52 registers instead of 32). MSE's self-check, the in-process bench against the
# previous build (twice), and apex-host over every MSE case with each plugin build.
call3() {
  step check_mse 200 $B/nn_ops_gpu_check --only mse_loss
  echo "check mse_loss: $(grep -cE '^PASS' "$OUT/check_mse.log") pass, $(grep -cE '^FAIL' "$OUT/check_mse.log") fail" | tee -a "$OUT/table.txt"
  for r in 1 2; do
    for v in base new; do
      X=$B/nn_ops_gpu_check; [ $v = base ] && X=$B/nn_ops_gpu_check_base
      step mse_${v}_$r 80 $X --bench-only --only mse_loss
    done
  done
  for f in "$OUT"/mse_*.log; do
    echo "-- $(basename $f .log)"; grep -E "^mse_loss" "$f" | awk '{$NF=""; print}'
  done > "$OUT/ab_bench.txt"
  rm -f "$OUT"/mse_*.log
  for v in base new; do HOST_TO=250 host_pct mse_$v nn_$v --filter 'nn_ops.mse_loss/cuda/*'; done
  ab_table 'seq=8192' 'batch=16,dim=512,reduction=mean,seq=256'
  cat "$OUT/ab_bench.txt"
  cat "$OUT/table.txt"
}

# Call 4 (issue 14): MSE under every launch shape of `mse_loss::tuning::Launch` (now `DEFAULT` and `OTHERS`; vectors a
# step x blocks a SM, with or without MIN_BLOCKS in the launch bounds): the self-check of each,
# then the in-process DRAM-cold bench of each at bf16, fp16 and fp32 over 8192 x {1024, 4096,
# 8192}, the seed's 16 x 256 x 512 and 128 x 256 x 8, twice.
call4() {
  step check_mse 300 $B/nn_ops_gpu_check --only mse_loss
  echo "check mse_loss: $(grep -cE '^PASS' "$OUT/check_mse.log") pass, $(grep -cE '^FAIL' "$OUT/check_mse.log") fail" | tee -a "$OUT/table.txt"
  step sweep_1 200 $B/nn_ops_gpu_check --bench-only --only mse_loss
  step sweep_2 200 $B/nn_ops_gpu_check --bench-only --only mse_loss
  python3 - "$OUT/sweep_1.log" "$OUT/sweep_2.log" <<'PY' | tee "$OUT/sweep_table.txt"
import sys, collections
t = collections.defaultdict(dict)
for run, path in enumerate(sys.argv[1:]):
    for line in open(path):
        f = line.split()
        if not f or f[0] != 'mse_loss' or 'error:' in line:
            continue
        launch = next((x[7:] for x in f if x.startswith('launch=')), 'default')
        shape = ' '.join(x for x in f[2:] if '=' in x and not x.startswith(('launch=', 'reduction=')))
        last = max(i for i, x in enumerate(f) if '=' in x)
        us = float(f[last + 2])
        t[(f[1], shape)].setdefault(launch, []).append(us)
for (prec, shape), v in sorted(t.items()):
    best = min(v, key=lambda k: min(v[k]))
    print('%-5s %-24s best %-8s %s' % (prec, shape, best, '  '.join('%s %s' % (k, '/'.join('%.2f' % x for x in xs)) for k, xs in v.items())))
PY
  grep -c PASS "$OUT/sweep_1.log"; grep -E "FAIL|error" "$OUT/sweep_1.log" | head
  cat "$OUT/table.txt"
}

# Call 5 (issue 14): the landing build (MSE's default launch: four vectors a step, two bounded
# blocks a SM) against the fourteenth session's: MSE's self-check, the PyTorch anchor on MSE's
# large rows, apex-host over every MSE case with each build (the new one with the anchor's
# rows), and the seed's MSE shape L2-hot with each build.
call5() {
  step check_mse 300 $B/nn_ops_gpu_check --only mse_loss
  echo "check mse_loss: $(grep -cE '^PASS' "$OUT/check_mse.log") pass, $(grep -cE '^FAIL' "$OUT/check_mse.log") fail" | tee -a "$OUT/table.txt"
  rm -f "$OUT/check_mse.log"
  mkdir -p /tmp/anchor
  step mse_torch 200 env OUT=/tmp/anchor python3 benches/anchors/nn_ops_torch.py --only mse_loss
  rm -f "$OUT/mse_torch.log"
  HOST_TO=250 host_pct mse_base nn_base --filter 'nn_ops.mse_loss/cuda/*'
  HOST_TO=250 host_pct mse_new nn_new --filter 'nn_ops.mse_loss/cuda/*' --anchor-results /tmp/anchor/nn_ops_torch.jsonl
  cp /tmp/mse_new/summary.md "$OUT/mse_new_summary.md"
  rm -f "$OUT/host_mse_base.log" "$OUT/host_mse_new.log"
  for v in base new; do
    host_pct seedhot_$v nn_$v --l2-hot --filter 'nn_ops.mse_loss/cuda/*/*batch=16,dim=512,*seq=256'
    python3 - /tmp/seedhot_$v/summary.json $v <<'PY' | tee -a "$OUT/seed_hot.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('timing') or {}
    print(sys.argv[2], k, 'cold %.2f us' % (t.get('batch', {}).get('stats', {}).get('p50_ms', 0) * 1e3),
          'hot %.2f us' % (t.get('batch_hot', {}).get('stats', {}).get('p50_ms', 0) * 1e3))
PY
    rm -f "$OUT/host_seedhot_$v.log"
  done
  grep -v seedhot "$OUT/host_ab.txt" > "$OUT/host_ab_all.txt"; mv "$OUT/host_ab_all.txt" "$OUT/host_ab.txt"
  ab_table 'seq=8192' 'batch=16,dim=512,reduction=mean,seq=256'
  grep -E "torch_compile" "$OUT/mse_new_summary.md" | awk -F'|' '{print $2, $3, $5, $6}' | head -40
  cat "$OUT/table.txt"
}

# Call 6 (issue 14): the seed's 2 M-element shapes in process, L2-hot (`--l2-hot`: one buffer
# set) and DRAM-cold: every op at the default, MSE under every launch shape (two more small
# ones), twice.
call6() {
  for r in 1 2; do
    step hot_$r 200 $B/nn_ops_gpu_check --bench-only --l2-hot --only "seq=256 dim=512"
    step hotce_$r 100 $B/nn_ops_gpu_check --bench-only --l2-hot --only "vocab=512"
    step hottiny_$r 100 $B/nn_ops_gpu_check --bench-only --l2-hot --only "seq=256 dim=8"
  done
  step cold_1 200 $B/nn_ops_gpu_check --bench-only --only "seq=256 dim=512"
  for f in hot_1 hot_2 hotce_1 hotce_2 hottiny_1 hottiny_2 cold_1; do
    echo "-- $f"; grep -E "^(layer_norm|gelu|swish|mse_loss|cross_entropy)" "$OUT/$f.log" | awk '{$NF=""; print}'
  done > "$OUT/seed_small.txt"
  rm -f "$OUT"/hot*.log "$OUT"/cold_1.log
  cat "$OUT/seed_small.txt"
  cat "$OUT/table.txt"
}

# Call 7 (issue 14): the whole CUDA suite of nn_ops (both grids) with the landed build (the
# fourteenth session's call 6 / thirteenth's call 6 body).
call7() {
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

# Call 8 (issue 14): the final build. MSE's self-check under all twelve launch shapes, then
# apex-host over every GELU and cross-entropy case (the GPU code unchanged since call 7; their f64
# references now faster: the erfc without divisions, each row's log-sum-exp once): every case
# must still pass, and the verify phase's share is set against call 7's.
call8() {
  step check_mse 300 $B/nn_ops_gpu_check --only mse_loss
  echo "check mse_loss: $(grep -cE '^PASS' "$OUT/check_mse.log") pass, $(grep -cE '^FAIL' "$OUT/check_mse.log") fail" | tee -a "$OUT/table.txt"
  rm -f "$OUT/check_mse.log"
  cp .device/ab/nn_new.so .device/host/release/libapex_plugin_nn_ops.so
  step gelu_ce 450 $HOST run --no-build --backends cuda --filter 'nn_ops.gelu/*' --filter 'nn_ops.cross_entropy/*' --output-dir /tmp/gelu_ce
  tail -3 "$OUT/gelu_ce.log"
  python3 - /tmp/gelu_ce/summary.json <<'PY' | tee "$OUT/gelu_ce_phases.txt"
import json, sys, collections
s = json.load(open(sys.argv[1]))
print('counts', s['counts'])
print('wall_s %.1f' % s['time_accounting']['wall_s'])
agg = collections.defaultdict(collections.Counter)
for k, c in s['benchmarks'].items():
    for p, v in c['protocol']['phases_s'].items():
        agg[k.split('/')[0]][p] += v
for op, c in sorted(agg.items()):
    print(op, ' '.join('%s %.1f' % (p, v) for p, v in sorted(c.items())))
PY
  cat "$OUT/table.txt"
}
