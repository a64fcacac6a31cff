#!/usr/bin/env bash
# The device call of the sixth session of 2026-11-25 (H100, one call: the session had 8 minutes
# of device time left), run from the repository root on the device machine with the release
# examples carried in .device/bin. Usage on the device:
# `source benches/results/device_scripts_2026-11-25_s6.sh; call1`.
set -u
B=.device/bin
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
row() { printf '%-12s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
# Call 1 (issue 14): LayerNorm's three work schedules (one wave as before; the same with the next
# item prefetched; a block per item), each checked on every self-check shape and precision, then
# timed DRAM-cold on the LLM grid beside torch eager and torch.compile in the same call; then
# (issue 13) the ff_model self-check at B=8 under Nsight Compute: every kernel's duration in the
# second fp16 frame (12 launches a frame).
call1() {
  step nn_ln 110 $B/nn_ops_gpu_check --bench --only layer_norm
  grep -E "^(checks|RESULT|bench copy)|FAIL" "$OUT/nn_ln.log" | head -20
  grep -E "^layer_norm" "$OUT/nn_ln.log" | cut -c1-100
  step torch_ln 140 python3 benches/anchors/nn_ops_torch.py --only layer_norm
  python3 - "$OUT/torch_ln.log" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    if r.get('kernel') != 'nn_ops.layer_norm': continue
    p = r['params']
    print('%-13s %-5s %4s x %-5s %9s %s' % (r['impl'], r['precision'], p.get('seq'), p.get('dim'), r.get('us_per_call'), r.get('cache')))
PY
  step ff_b8 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum $B/ff_model_gpu_check --only B=8
  grep -E "^(ok|FAIL|RESULT)" "$OUT/ff_b8.log"
  grep -E "^  ff_[a-z_]+ \(|gpu__time_duration" "$OUT/ff_b8.log" | sed 's/, Context.*//' | paste - - | awk '{print $1, $2, $NF}'
  cat "$OUT/table.txt"
}
# Call 2 (issue 14): the default LayerNorm schedule by row length (Schedule::for_row) beside the
# three named ones, checked and timed again; the torch anchor; then the same LLM grid through
# apex-host with the anchor's figures side by side (what a user's report shows). apex-host and the
# nn_ops library are carried in .device/host/release.
call2() {
  step nn_ln2 110 $B/nn_ops_gpu_check --bench --only layer_norm
  grep -E "^(checks|RESULT|bench copy)|FAIL" "$OUT/nn_ln2.log" | head -20
  grep -E "^layer_norm" "$OUT/nn_ln2.log" | awk '{print $2, $5, $6, $7, $8, $9, $10}'
  step torch_ln2 140 python3 benches/anchors/nn_ops_torch.py --only layer_norm
  step host_ln 150 env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host run --no-build \
    --backends cuda --filter 'nn_ops.layer_norm/cuda/*/batch=1,*seq=8192' \
    --anchor-results "$OUT/nn_ops_torch.jsonl" --output-dir "$OUT/host_ln"
  tail -3 "$OUT/host_ln.log"
  python3 - "$OUT/host_ln/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print('status', s['status'], s['counts'], 'sampling %.1f %%' % (s.get('time_accounting') or {}).get('sampling_pct', 0))
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('throughput') or {}
    b = (c.get('timing') or {}).get('batch') or {}
    anchors = ' '.join('%s %.2f us (x%.2f)' % (a['impl'], a['us_per_call'], a['ratio']) for a in (c.get('anchors') or []) if a.get('us_per_call'))
    print('%-62s %-6s %8.2f us %-9s %5.1f %% of %4.0f GB/s  %s' % (k[:62], c['status'], (c.get('p50_ms') or 0) * 1e3,
          b.get('cache', '-'), t.get('pct_of_copy_bandwidth') or 0, t.get('line_gbps') or 0, anchors))
PY
  (cd "$OUT/host_ln" && cp summary.json ../host_ln_summary.json && cp summary.md ../host_ln_summary.md) && rm -rf "$OUT/host_ln"
  cat "$OUT/table.txt"
}
