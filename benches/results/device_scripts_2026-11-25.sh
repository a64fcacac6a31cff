#!/usr/bin/env bash
# The device calls of 2026-11-25 (H100), run from the repository root on the device machine with
# the release binaries carried in .device/slim (apex-host, the plugin libraries, the examples).
# Call 4 (issue 12): the tile_ssm GPU self-check on both production block shapes, the PyTorch and
# Triton anchors, and the CUDA suite through apex-host with those anchors beside it, one call.
# Call 5 (issue 17): tile_ops anchors, then tile_ops + tile_ssm through apex-host with every
# export and both anchor files; the seed-000 field check and the seed-style 12-key gate.
# Call 6: call 4's self-check and suite again after tile_ssm_bidirectional_one.
set -u
B=.device/slim/release
export CARGO_TARGET_DIR=.device/slim PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
row() { printf '%-10s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
cases() { # summary.json -> one line per CUDA case: id, status, p50 us, mode/cache, GB/s, % copy, anchors
  python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s.get('time_accounting') or {}
print('status', s['status'], s['counts'], 'wall', round(t.get('wall_s', 0), 1), 'sampling %', round(t.get('sampling_pct', 0), 1))
for k, c in sorted(s['benchmarks'].items()):
    if '/cuda/' not in k and not k.endswith('cuda'):
        pass
    tp = c.get('throughput') or {}
    h = c.get('headline'); m = (c.get('timing') or {}).get(h or '', {})
    anc = ' '.join('%s=%.2fx' % (a.get('impl'), a['ratio']) for a in c.get('anchors', []) if a.get('ratio'))
    p50 = c.get('p50_ms')
    print('%-100s %-15s %9s %s/%s %7s %6s %s' % (k[:100], c['status'], '%.2f' % (p50 * 1e3) if p50 else '-', h, m.get('cache', '-'),
          '%.0f' % tp['gbps'] if tp.get('gbps') else '-', '%.1f' % tp['pct_of_copy_bandwidth'] if tp.get('pct_of_copy_bandwidth') else '-', anc))
PY
}
call4() {
  step ssm_check 300 $B/examples/tile_ssm_gpu_check
  grep -E "^check:|^RESULT|^FAIL" "$OUT/ssm_check.log" | head -20
  step ssm_torch 220 python3 benches/anchors/tile_ssm_torch.py
  step ssm_run 200 $B/apex-host run --no-build --backends cuda --quick --save-samples --filter 'tile_ssm.*' \
    --anchor-results "$OUT/tile_ssm_torch.jsonl" --output-dir "$OUT/ssm"
  cases "$OUT/ssm/summary.json" > "$OUT/ssm_cases.txt"
  grep -E "^status|steps=256,|steps=4096" "$OUT/ssm_cases.txt" | grep -E "^status|batch=1,|batch=8," | cut -c1-220
  (cd "$OUT/ssm" && tar czf ../ssm_report.tgz summary.json summary.md index.html) && rm -rf "$OUT/ssm"
}
call5() {
  step ops_torch 240 python3 benches/anchors/tile_ops_torch.py
  step ops_run 240 $B/apex-host run --no-build --backends cuda --quick --save-samples --filter 'tile_ops.*' \
    --filter 'tile_ssm.*' --anchor-results "$OUT/tile_ops_torch.jsonl" --anchor-results .device/slim/tile_ssm_torch.jsonl \
    --format csv,junit,bmf,github-action-benchmark,apex-x-gpu,apex-x-cpu,quasim,comprehensive --output-dir "$OUT/ops"
  cases "$OUT/ops/summary.json" > "$OUT/ops_cases.txt"; head -1 "$OUT/ops_cases.txt"
  python3 benches/gate/check_apex_x_gpu.py "$OUT/ops/perf_gpu.json" 2>&1 | tail -12; echo "check rc=$?"
  $B/apex-host compare "$OUT/ops/summary.json" host/tests/fixtures/seed/perf_baseline_gpu.json --output-dir "$OUT/seedgate" > "$OUT/seedgate.log" 2>&1
  echo "seed gate rc=$?"; grep -E "pass|fail|missing" "$OUT/seedgate/regressions.md" | head -16
  (cd "$OUT/ops" && tar czf ../ops_report.tgz --exclude=kernels --exclude=samples .) && rm -rf "$OUT/ops"
}
call6() { # after tile_ssm_bidirectional_one: the self-check and the suite again (call 4's anchors)
  step ssm_check 300 $B/examples/tile_ssm_gpu_check
  grep -E "^check:|^RESULT|^FAIL" "$OUT/ssm_check.log" | head -20
  step ssm_run 200 $B/apex-host run --no-build --backends cuda --quick --save-samples --filter 'tile_ssm.*' \
    --anchor-results .device/slim/tile_ssm_torch.jsonl --output-dir "$OUT/ssm"
  (cd "$OUT/ssm" && tar czf ../ssm_report.tgz summary.json summary.md) && rm -rf "$OUT/ssm"
}
call9() { # after the blocked f64 reference: the suite again, for the verify phase
  step ssm_run 200 $B/apex-host run --no-build --backends cuda --quick --filter 'tile_ssm.*' --output-dir "$OUT/ssm"
  python3 -c "import json; s=json.load(open('$OUT/ssm/summary.json')); print(s['status'], s['counts'], s['time_accounting'])"
  (cd "$OUT/ssm" && tar czf ../ssm_report.tgz summary.json summary.md) && rm -rf "$OUT/ssm"
}
"$@"
cat "$OUT/table.txt"
