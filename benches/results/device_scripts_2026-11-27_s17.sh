#!/usr/bin/env bash
# The device calls of the seventeenth session (2026-11-27), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugins
# in .device/host/release, the A/B plugin builds in .device/ab). Usage on the device:
# `source benches/results/device_scripts_2026-11-27_s17.sh; call1`. Calls 1-4 ran a build whose APEX_FF_RUNS and
# APEX_FF_FORK_BASE environment variables set the runs and the ff_base fork (knobs the landed code lacks).
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
host_ab() {  # $1: label, $2: plugin build; apex-host's ff_model suite, its fp16 fast profile and B=8
  cp .device/ab/$2.so .device/host/release/libapex_plugin_ff_model.so
  step host_$1 150 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ab_$1
  python3 - /tmp/ab_$1/summary.json $1 <<'PY' | tee -a "$OUT/ab.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    us = '%.2f us' % (c['p50_ms'] * 1e3) if 'p50_ms' in c else '-'
    print(sys.argv[2], k.split('[', 1)[-1][:90], us, c['status'])
PY
}

ab_table() {  # host_ab's rows as a table: a column per build and round, a row per case
  python3 - "$OUT/ab.txt" <<'PY'
import collections, sys
names = ['bf16 profile', 'fp16 eager', 'fp16 profile', 'fp16 tiles32/16', 'fp16 256x256', 'fp16 B=8', 'fp32 profile']
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split(); rows[p[0]].append(p[-3])
labels = list(rows)
print('%-16s' % 'case', *['%8s' % l for l in labels])
for i, n in enumerate(names): print('%-16s' % n, *['%8s' % rows[l][i] for l in labels])
PY
}
bench_runs() {  # $1: label, $2: runs, $3: fork base (0/1), $4: --only shapes; the in-process bench of the new build
  step bench_$1 90 env APEX_FF_RUNS=$2 APEX_FF_FORK_BASE=$3 $B/ff_model_gpu_check --bench-only --only "$4" --refine auto
  echo "-- $1" >> "$OUT/bench.txt"; grep -E "^(profile|256x256|B=|tiles)" "$OUT/bench_$1.log" | tee -a "$OUT/bench.txt"; rm -f "$OUT/bench_$1.log"
}

# Call 1 (issue 13): the fast path forks after ff_select: ff_base on a side stream beside the
# levels, and the batch in runs of frames, each run's two levels on a stream of its own
# (APEX_FF_RUNS, APEX_FF_FORK_BASE: an experiment's knobs). The self-check of every fast shape with
# two runs and the base forked, and of B=3 and B=8 under fused, lean and split with three runs; the
# in-process bench of each configuration against the committed build, twice.
call1() {
  local X=$B/ff_model_gpu_check
  step ff_check 240 env APEX_FF_RUNS=2 APEX_FF_FORK_BASE=1 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check_paths 200 env APEX_FF_RUNS=3 APEX_FF_FORK_BASE=1 $X --only 'B=3,B=8' --refine fused,lean,split
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" > "$OUT/checks.txt"; rm -f "$OUT/ff_check.log" "$OUT/ff_check_paths.log"
  grep -cE "^ok" "$OUT/checks.txt"; awk '/^(RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/checks.txt" | head -20
  for r in 1 2; do
    step bench_prev_$r 90 $B/ff_model_gpu_check_prev --bench-only --only profile,B=3,B=8 --refine auto
    echo "-- prev_$r" >> "$OUT/bench.txt"; grep -E "^(profile|B=)" "$OUT/bench_prev_$r.log" | tee -a "$OUT/bench.txt"; rm -f "$OUT/bench_prev_$r.log"
    bench_runs r1f0_$r 1 0 profile,B=3,B=8
    bench_runs r1f1_$r 1 1 profile,B=3,B=8
    bench_runs r2f0_$r 2 0 B=3,B=8
    bench_runs r2f1_$r 2 1 B=3,B=8
    bench_runs r4f1_$r 4 1 B=8
    bench_runs r8f1_$r 8 1 B=8
  done
  cat "$OUT/table.txt"
}

# Call 2 (issue 13, for the next plan): Nsight Compute's full set on the lean refines at B=8
# (the committed build's L0 and L1), with the executed count and stall samples of every SASS
# instruction (the source page as CSV), to see which of the kernel's parts issue its instructions.
call2() {
  local X=$B/ff_model_gpu_check_prev
  step ncu_lean_b8 300 ncu --set full --import-source no --kernel-name ff_refine_apply_lean --launch-skip 2 --launch-count 2 \
    -o /tmp/lean_b8 $X --bench-only --only B=8 --refine auto
  ncu -i /tmp/lean_b8.ncu-rep --page details > "$OUT/lean_b8_details.txt" 2>&1
  ncu -i /tmp/lean_b8.ncu-rep --page source --print-source sass --csv > /tmp/lean_b8_sass.csv 2>&1
  gzip -c /tmp/lean_b8_sass.csv > "$OUT/lean_b8_sass.csv.gz"
  grep -E "^  ff_|Duration|Executed Ipc|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  |Achieved Occ" "$OUT/lean_b8_details.txt"
  ls -la "$OUT"; cat "$OUT/table.txt"
}

# Call 3 (issue 13): the new build: refine_operand's float4 staging keeps one group position a
# thread and steps over channels (no index divisions a load), tile_stats takes two reciprocals
# instead of a division a chunk, and the batch runs in runs of FILM_TOKENS frames (B=8: two),
# ff_base forked where the batch is one run. The self-check of every fast shape under auto and
# of three under fused, lean and split; the in-process bench against the committed build, twice;
# Nsight Compute's durations and instruction counts of every kernel at B=8, both builds.
call3() {
  local X=$B/ff_model_gpu_check
  step ff_check 240 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check_paths 200 $X --only 'profile,B=8,tiles 32/16' --refine fused,lean,split
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" > "$OUT/checks.txt"; rm -f "$OUT/ff_check.log" "$OUT/ff_check_paths.log"
  grep -cE "^ok" "$OUT/checks.txt"; awk '/^(RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/checks.txt" | head -20
  for r in 1 2; do
    for v in prev new; do
      local bin=$X; [ $v = prev ] && bin=${X}_prev
      step bench_${v}_$r 90 $bin --bench-only --only profile,256x256,B=3,B=8 --refine auto
      echo "-- ${v}_$r" >> "$OUT/bench.txt"; grep -E "^(profile|256x256|B=)" "$OUT/bench_${v}_$r.log" | tee -a "$OUT/bench.txt"; rm -f "$OUT/bench_${v}_$r.log"
    done
  done
  for v in prev new; do
    local bin=$X n=22; [ $v = prev ] && bin=${X}_prev n=12  # launches a B=8 call: 12, or 22 in two runs
    step ncu_$v 120 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip $n --launch-count $n \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum $bin --bench-only --only B=8 --refine auto
    echo "-- $v" >> "$OUT/ncu.txt"
    grep -E "^  ff_|gpu__time_duration|inst_executed" "$OUT/ncu_$v.log" | sed 's/(int, [^)]*)//' | paste - - - | awk '{print $1, $(NF-3), $NF}' | tee -a "$OUT/ncu.txt"
    rm -f "$OUT/ncu_$v.log"
  done
  cat "$OUT/table.txt"
}

# Call 4 (issue 13): call 3's build plus ff_base in blocks of eight planes sharing their coverage
# lookup (its indices were ~200 instructions a warp for one vector a thread) and chan_merge
# without a division where the counts are equal. The self-check as in call 3; compute-sanitizer
# memcheck of B=3 (runs of 2 and 1) and B=8 under auto and split; the in-process bench against
# the committed build, twice, with B=8 also in two runs with ff_base forked and in one run;
# Nsight Compute's durations and instruction counts at B=8.
call4() {
  local X=$B/ff_model_gpu_check
  step ff_check 240 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check_paths 200 $X --only 'profile,B=8,tiles 32/16' --refine fused,lean,split
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" > "$OUT/checks.txt"; rm -f "$OUT/ff_check.log" "$OUT/ff_check_paths.log"
  grep -cE "^ok" "$OUT/checks.txt"; awk '/^(RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/checks.txt" | head -20
  step memcheck 240 compute-sanitizer --tool memcheck --print-limit 10 $X --only 'B=3,B=8' --refine auto,split
  grep -hE "ERROR SUMMARY|RESULT|^FAIL" "$OUT/memcheck.log" | head
  for r in 1 2; do
    for v in prev new; do
      local bin=$X; [ $v = prev ] && bin=${X}_prev
      step bench_${v}_$r 90 $bin --bench-only --only profile,256x256,B=3,B=8 --refine auto
      echo "-- ${v}_$r" >> "$OUT/bench.txt"; grep -E "^(profile|256x256|B=)" "$OUT/bench_${v}_$r.log" | tee -a "$OUT/bench.txt"; rm -f "$OUT/bench_${v}_$r.log"
    done
    bench_runs r2f1_$r 2 1 B=8
    bench_runs r1f1_$r 1 1 B=8
  done
  step ncu_new 120 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 22 --launch-count 22 \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum $X --bench-only --only B=8 --refine auto
  grep -E "^  ff_|gpu__time_duration|inst_executed" "$OUT/ncu_new.log" | sed 's/(int, [^)]*)//' | paste - - - | awk '{print $1, $(NF-3), $NF}' | tee "$OUT/ncu.txt"
  rm -f "$OUT/ncu_new.log"
  cat "$OUT/table.txt"
}

# Call 5 (issue 13): the build to land (call 4's kernels; the runs and the ff_base fork fixed by
# device/streams.rs::concurrency, no environment knobs). plugin-api's GPU test of LaunchEx (ptr_at
# included); the self-check of four shapes; racecheck of the fused and lean refines at the
# profile (refine_operand's staging changed); apex-host's ff_model suite with the committed
# plugin and this one, alternating, three rounds.
call5() {
  local X=$B/ff_model_gpu_check
  step api_launch 60 $B/plugin_api_tests launch::
  grep -E "test |test result" "$OUT/api_launch.log"
  step ff_check 120 $X --only 'profile,tiles 32/16,B=3,B=8' --refine auto
  grep -cE "^ok" "$OUT/ff_check.log"; awk '/^(RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head
  step race 200 compute-sanitizer --tool racecheck --print-limit 10 $X --only profile --refine fused,lean
  grep -hE "RACECHECK SUMMARY|RESULT|hazard|^FAIL" "$OUT/race.log" | head
  for r in 1 2 3; do for v in prev new; do host_ab ${v}_$r ff_$v > /dev/null; done; done
  ab_table | tee "$OUT/ab_table.txt"
  rm -f "$OUT"/host_*.log
  cat "$OUT/table.txt"
}

# Call 6 (issue 13): call 5's api test again (call 5's filter matched nothing: that binary was built
# without plugin-api's `cuda` feature); apex-host's suite with the committed plugin, the build to
# land, and that build with ff_base never forked (nofork), alternating, two rounds: call 5 showed
# the profile 63.8 -> 62.9 us in apex-host against 64.4 -> 59.4 in process.
call6() {
  step api_launch 60 $B/plugin_api_tests launch::
  grep -E "test |test result|skipped" "$OUT/api_launch.log"
  for r in 1 2; do for v in prev new nofork; do host_ab ${v}_$r ff_$v > /dev/null; done; done
  ab_table | tee "$OUT/ab_table.txt"
  rm -f "$OUT"/host_*.log
  cat "$OUT/table.txt"
}

# Call 7 (issue 13): the landed build (ff_base on the host's stream at every batch, as nofork in
# call 6; B=8 in two runs): the self-check of four shapes under auto and the in-process bench
# against the committed build.
call7() {
  local X=$B/ff_model_gpu_check
  step ff_check 150 $X --only 'profile,tiles 32/16,B=3,B=8' --refine auto
  grep -cE "^ok" "$OUT/ff_check.log"; awk '/^(RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head
  for v in prev new; do
    local bin=$X; [ $v = prev ] && bin=${X}_prev
    step bench_$v 90 $bin --bench-only --only profile,256x256,B=8 --refine auto
    echo "-- $v" >> "$OUT/bench.txt"; grep -E "^(profile|256x256|B=|scaling)" "$OUT/bench_$v.log" | tee -a "$OUT/bench.txt"; rm -f "$OUT/bench_$v.log"
  done
  cat "$OUT/table.txt"
}
