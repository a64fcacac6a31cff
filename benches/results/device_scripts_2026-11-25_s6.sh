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
  step nn_ln 150 $B/nn_ops_gpu_check --bench --only layer_norm
  grep -E "^(checks|RESULT|bench copy)|FAIL" "$OUT/nn_ln.log" | head -20
  grep -E "^layer_norm" "$OUT/nn_ln.log" | cut -c1-100
  step torch_ln 150 python3 benches/anchors/nn_ops_torch.py --only layer_norm
  python3 - "$OUT/torch_ln.log" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    if r.get('kernel') != 'nn_ops.layer_norm': continue
    p = r['params']
    print('%-13s %-5s %4s x %-5s %9s %s' % (r['impl'], r['precision'], p.get('seq'), p.get('dim'), r.get('us_per_call'), r.get('cache')))
PY
  step ff_b8 150 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum $B/ff_model_gpu_check --only B=8
  grep -E "^(ok|FAIL|RESULT)" "$OUT/ff_b8.log"
  grep -E "^  ff_[a-z_]+ \(|gpu__time_duration" "$OUT/ff_b8.log" | sed 's/, Context.*//' | paste - - | awk '{print $1, $2, $NF}'
  cat "$OUT/table.txt"
}
