#!/usr/bin/env bash
# The device calls of the fourth session of 2026-11-25 (H100), run from the repository root on the
# device machine with the release binaries carried in .device/slim. Usage on the device:
# `source benches/results/device_scripts_2026-11-25_s4.sh; callN`. The helpers (`step`, `cases`,
# B, CARGO_TARGET_DIR) come from the second session's script, whose own callN are replaced here.
source benches/results/device_scripts_2026-11-25_s2.sh
phases() { # summary.json -> the run's time accounting, per case and in total
  python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s.get('time_accounting') or {}
n = max(1, s['counts']['total'] - s['counts'].get('skipped', 0))
print('cases', n, 'wall %.1f s' % t.get('wall_s', 0), '%.3f s/case' % (t.get('wall_s', 0) / n),
      'sampling %.1f %%' % t.get('sampling_pct', 0))
for k, v in (t.get('phases_s') or {}).items():
    print('  %-14s %8.1f s %8.3f s/case' % (k, v, v / n))
stops = {}
for c in s['benchmarks'].values():
    for part in ((c.get('protocol') or {}).get('stopped_by') or '').split(','):
        if ':' in part:
            m, b = part.split(':', 1)
            stops.setdefault(m, {}).setdefault(b, 0)
            stops[m][b] += 1
print('stopped_by', stops)
PY
}
over_line() { # summary.json -> the DRAM-cold % of line of every case, highest first
  python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
rows = []
for k, c in s['benchmarks'].items():
    t = c.get('throughput') or {}; w = c.get('work') or {}
    if t.get('pct_of_copy_bandwidth'):
        r = w.get('bytes_read', 0); wr = w.get('bytes_written', 0)
        rows.append((t['pct_of_copy_bandwidth'], t.get('line_gbps') or 0, t.get('gbps') or 0, r / max(1, r + wr), c['status'], k[:100]))
rows.sort(reverse=True)
print('cases with a DRAM-cold % of line:', len(rows), 'over 100:', sum(1 for r in rows if r[0] > 100))
for r in rows[:12]: print('%.1f%% of %.0f GB/s (%.0f GB/s, read fraction %.2f) %s %s' % r)
print('statuses', {st: sum(1 for c in s['benchmarks'].values() if c['status'] == st) for st in ('ok', 'failed', 'failed_accuracy', 'skipped')})
PY
}
# Call 1 (issue 10 item 1, issue 14): where a small nn_ops CUDA case's wall time goes with the
# tree as the session found it (one worker process per case): 56 Swish cases of the seed grid.
call1() {
  step nn_swish 300 $B/apex-host run --no-build --backends cuda --filter 'nn_ops.swish/cuda/*/batch=16,*' --output-dir "$OUT/nn_swish"
  phases "$OUT/nn_swish/summary.json" | tee "$OUT/nn_swish_phases.txt"
  cases "$OUT/nn_swish/summary.json" > "$OUT/nn_swish_cases.txt"; head -3 "$OUT/nn_swish_cases.txt" | cut -c1-200
  (cd "$OUT/nn_swish" && tar czf ../nn_swish_report.tgz summary.json summary.md) && rm -rf "$OUT/nn_swish"
}
# Call 2 (issue 10): session workers (consecutive CUDA cases of one plugin share a worker) and the
# kernel copy line: calibrate; the same 56 Swish cases as call 1 (now with the seed grid's 0.05 s
# minimum per mode), once with session workers and once with --worker-per-case; the tile_ops
# quick suite with its phases (the acceptance's sampling share) and a case made wrong on its
# second call (fixtures) still failing.
call2() {
  step calib 120 $B/apex-host calibrate --output "$OUT/calibrate.json"
  grep -E "copy|L2 line|floor|batch|cold" "$OUT/calib.log" | head -30
  step nn_swish_s 300 $B/apex-host run --no-build --backends cuda --filter 'nn_ops.swish/cuda/*/batch=16,*' --output-dir "$OUT/nn_swish_s"
  phases "$OUT/nn_swish_s/summary.json" | tee "$OUT/nn_swish_s_phases.txt"
  step nn_swish_w 300 $B/apex-host run --no-build --backends cuda --worker-per-case --filter 'nn_ops.swish/cuda/*/batch=16,*' --output-dir "$OUT/nn_swish_w"
  phases "$OUT/nn_swish_w/summary.json" | tee "$OUT/nn_swish_w_phases.txt"
  step tile_quick 400 $B/apex-host run --no-build --backends cuda --quick --filter 'tile_ops.*' --output-dir "$OUT/tile_quick"
  phases "$OUT/tile_quick/summary.json" | tee "$OUT/tile_quick_phases.txt"
  cases "$OUT/tile_quick/summary.json" > "$OUT/tile_quick_cases.txt"; awk '{print $2}' "$OUT/tile_quick_cases.txt" | sort | uniq -c
  grep -E "copy" "$OUT/tile_quick_cases.txt" | head -0
  python3 - "$OUT/tile_quick/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
rows = []
for k, c in s['benchmarks'].items():
    t = c.get('throughput') or {}
    rows.append((t.get('pct_of_copy_bandwidth') or 0, t.get('pct_of_l2_line') or 0, k))
rows.sort(reverse=True)
for r in rows[:6]: print('pct copy %.1f  pct l2 %.1f  %s' % r)
PY
  mkdir -p "$OUT/wrong_cfg"
  printf 'kernel: fixtures.cuda_known_duration\nproblem_size: {duration_us: [20, 30], wrong_after_calls: [0, 1]}\n' > "$OUT/wrong_cfg/10-wrong.yaml"
  step wrong2nd 120 $B/apex-host run --no-build --fixtures --backends cuda --config-dir "$OUT/wrong_cfg" --filter 'fixtures.cuda_known_duration' --output-dir "$OUT/wrong2nd"
  cases "$OUT/wrong2nd/summary.json" | cut -c1-250
  python3 -c "
import json; s=json.load(open('$OUT/wrong2nd/summary.json'))
for k,c in sorted(s['benchmarks'].items()): print(k, c['status'], 'worker_case', (c.get('protocol') or {}).get('worker_case', 0), (c.get('reason') or '')[:150])"
  for d in nn_swish_s nn_swish_w tile_quick wrong2nd; do (cd "$OUT/$d" && tar czf ../${d}_report.tgz summary.json summary.md) && rm -rf "$OUT/$d"; done
}
# Call 3 (issues 10 and 14): calibrate with the copy kernel's variants; FusionGate's fixed profile
# (the DRAM-cold figure that read 101.2 % of the cuMemcpy line) against the new line; the whole
# nn_ops CUDA suite (both grids, 1,072 cases) with session workers, stopped by SIGTERM at 540 s
# if it has not finished (the run then reports its finished cases with the time accounting).
call3() {
  step calib3 120 $B/apex-host calibrate --output "$OUT/calibrate3.json"
  grep -E "copy|L2 line|floor" "$OUT/calib3.log"
  step fg 200 $B/apex-host run --no-build --backends cuda --quick --filter 'tile_ops.fusion_gate*' --output-dir "$OUT/fg"
  cases "$OUT/fg/summary.json" | cut -c1-60,110-175
  step nn_full 540 $B/apex-host run --no-build --backends cuda --filter 'nn_ops.*' --output-dir "$OUT/nn_full"
  phases "$OUT/nn_full/summary.json" | tee "$OUT/nn_full_phases.txt"
  cases "$OUT/nn_full/summary.json" > "$OUT/nn_full_cases.txt"; head -2 "$OUT/nn_full_cases.txt"
  awk '{print $2}' "$OUT/nn_full_cases.txt" | sort | uniq -c | head
  for d in fg nn_full; do (cd "$OUT/$d" && tar czf ../${d}_report.tgz summary.json summary.md) && rm -rf "$OUT/$d"; done
}
# Call 4 (issue 10): the read-heavy bandwidth lines (add: 2 reads to 1 write; read-only) in
# calibrate, and every DRAM-cold figure of the tile_ops quick suite and of the read-only nn_ops
# cases that read above the copy line in call 3, against the line of its own mix.
call4() {
  step calib4 120 $B/apex-host calibrate --output "$OUT/calibrate4.json"
  grep -E "copy|line|floor" "$OUT/calib4.log"
  step tile4 300 $B/apex-host run --no-build --backends cuda --quick --filter 'tile_ops.*' \
    --filter 'nn_ops.mse_loss/cuda/fp32/batch=128,dim=512,*' --filter 'nn_ops.mse_loss/cuda/fp32/batch=1,*' \
    --filter 'nn_ops.cross_entropy/cuda/*/grad=*,ignore_ratio=0.1,rows=4096,vocab=*' --output-dir "$OUT/tile4"
  phases "$OUT/tile4/summary.json"
  over_line "$OUT/tile4/summary.json"
  (cd "$OUT/tile4" && tar czf ../tile4_report.tgz summary.json summary.md env.json) && rm -rf "$OUT/tile4"
}
# Call 5 (issue 10): the bandwidth kernels walking chunks of 4 x 256 words per block (each warp on
# contiguous 512 bytes) instead of a grid-wide stride; calibrate, then the cases of call 4 that
# read above their line, and the rest of the tile_ops fixed profile.
call5() {
  step calib5 120 $B/apex-host calibrate --output "$OUT/calibrate5.json"
  grep -E "copy|line|floor" "$OUT/calib5.log"
  step lines5 300 $B/apex-host run --no-build --backends cuda --quick --filter 'tile_ops.*/batch=8,*' \
    --filter 'nn_ops.mse_loss/cuda/fp32/batch=128,dim=512,*' --filter 'nn_ops.mse_loss/cuda/fp32/batch=1,*' \
    --filter 'nn_ops.cross_entropy/cuda/*/grad=*,ignore_ratio=0.1,rows=4096,vocab=*' --output-dir "$OUT/lines5"
  phases "$OUT/lines5/summary.json" | head -1
  over_line "$OUT/lines5/summary.json"
  (cd "$OUT/lines5" && tar czf ../lines5_report.tgz summary.json summary.md env.json) && rm -rf "$OUT/lines5"
}
# Call 6 (issue 10 item 4, with session workers and the mix lines): the tile_ops quick suite gated
# by `--compare auto` twice in a row on the H100 (A/A against baselines/gpu-h100.json, measured
# with a process per case on 2026-11-22).
call6() {
  for n in 1 2; do
    step aa$n 300 $B/apex-host run --no-build --backends cuda --quick --filter 'tile_ops.*' --compare auto --output-dir "$OUT/aa$n"
    grep -iE "baseline|gate|pass|fail|regress" "$OUT/aa$n.log" | tail -6
    (cd "$OUT/aa$n" && tar czf ../aa${n}_report.tgz summary.json summary.md regressions.md 2>/dev/null) ; rm -rf "$OUT/aa$n"
  done
}
# Call 7 (issue 10 item 1): each CUDA case releases its instance and graphs and drains the device
# in its own `teardown` phase; the 56 Swish cases of calls 1-2 in a session worker again (in call
# 2 a session case's setup took 0.053 s against 0.014 s in a fresh process).
call7() {
  step nn_swish_t 300 $B/apex-host run --no-build --backends cuda --filter 'nn_ops.swish/cuda/*/batch=16,*' --output-dir "$OUT/nn_swish_t"
  phases "$OUT/nn_swish_t/summary.json" | tee "$OUT/nn_swish_t_phases.txt"
  (cd "$OUT/nn_swish_t" && tar czf ../nn_swish_t_report.tgz summary.json summary.md) && rm -rf "$OUT/nn_swish_t"
}
