#!/usr/bin/env bash
# The device calls of the twenty-first session (2026-11-27), run from the repository root on the
# device machine with the release binaries carried in .device/bin. Usage on the device:
# `source benches/results/device_scripts_2026-11-27_s20.sh; call1`. `ff_main` is main's
# ff_model_gpu_check at 22b550f; experiment builds are kept as patches beside this script.
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
checks() {  # $1: binary, $2: refine path of the first run; every fast shape, then three under every path
  step ff_check 240 $1 --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine $2
  step ff_check_paths 200 $1 --only 'profile,B=8,tiles 32/16' --refine fused,lean,split
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" >> "$OUT/checks.txt"; rm -f "$OUT/ff_check.log" "$OUT/ff_check_paths.log"
  echo "$1 ok: $(grep -cE '^ok' "$OUT/checks.txt") FAIL: $(grep -cE '^FAIL' "$OUT/checks.txt")"
  awk '/^FAIL/{f=1} f' "$OUT/checks.txt" | head -20
}
bench_ab() {  # $1: rounds, $2: shapes, then build:refine pairs; in-process bench, builds alternating
  local rounds=$1 shapes=$2; shift 2
  for r in $(seq "$rounds"); do for vr in "$@"; do
    $B/${vr%%:*} --bench-only --only "$shapes" --refine ${vr#*:} > /tmp/o.log 2>&1
    echo "-- $vr r$r rc=$?" >> $OUT/bench.txt
    grep -E '^(profile|B=[0-9]+|256x256|tiles 32/16) ' /tmp/o.log >> $OUT/bench.txt
  done; done
  python3 - "$OUT/bench.txt" <<'PY'
import collections, re, sys
rows = collections.defaultdict(lambda: collections.defaultdict(list))
v = None
for line in open(sys.argv[1]):
    if line.startswith('-- '): v = line.split()[1]; continue
    m = re.match(r'(profile|B=\d+|256x256|tiles 32/16)\s.*?\s(\d+\.\d+)\s+\d+\s', line)
    if m: rows[m.group(1)][v].append(m.group(2))
for case, per in rows.items():
    print('%-12s' % case, '  '.join('%s %s' % (k, '/'.join(x)) for k, x in per.items()))
PY
}

host_ab() {  # $1: label, $2: plugin build; apex-host's ff_model suite
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


stage_ab() {  # $1: rounds, then binaries: the refine blocks alone (--stage refines), profile and B=8
  local rounds=$1; shift
  for r in $(seq "$rounds"); do for v in "$@"; do
    $B/$v --bench-only --only 'profile,B=8' --refine auto --stage refines > /tmp/o.log 2>&1
    echo "$v r$r rc=$? $(grep -E '^(profile|B=8) ' /tmp/o.log | tr -s ' ' | tr '\n' ';')" | tee -a $OUT/stage.txt
  done; done
}

# Call 1 (issue 13): the lean refine compiled for the profile's two level shapes (C = 128, t = 16
# and t = 8; LEAN_ENTRY), so its index math folds to constants (ff_spec). Self-check of every fast
# shape under auto and three under every path, the in-process bench against main, two rounds, and
# the refine blocks alone.
call1() {
  checks $B/ff_spec auto
  bench_ab 2 'profile,B=8,B=16' ff_main:auto ff_spec:auto
  stage_ab 1 ff_main ff_spec
}

# Call 2 (issue 13): (a) the L1 lean refine in CTAs of 16 pixels (a tile's four CTAs one
# cluster), from a second module compiled with CHUNK 16 (ff_c16 with APEX_FF_L1_CHUNK16 set;
# L0 unchanged): at B=8 a run's L1 refine is ~190 CTAs, 1.5 a SM, so each CTA's own latency
# chain is what the level waits for. Self-check under lean, then the in-process bench against
# ff_spec, two rounds. (b) apex-host's ff_model suite with main's and ff_spec's plugin builds
# (call 1's shape-compiled lean refine), alternating, two rounds.
bench_c16() {  # $1: rounds
  for r in $(seq "$1"); do
    for v in spec:auto spec:lean c16:lean; do
      if [ "${v%%:*}" = c16 ]; then env APEX_FF_L1_CHUNK16=1 $B/ff_c16 --bench-only --only 'profile,B=8,B=16' --refine ${v#*:} > /tmp/o.log 2>&1
      else $B/ff_spec --bench-only --only 'profile,B=8,B=16' --refine ${v#*:} > /tmp/o.log 2>&1; fi
      echo "-- $v r$r rc=$?" >> $OUT/bench.txt
      grep -E '^(profile|B=[0-9]+) ' /tmp/o.log >> $OUT/bench.txt
    done
    APEX_FF_L1_CHUNK16=1 $B/ff_c16 --bench-only --only 'profile,B=8' --refine lean --stage refines > /tmp/o.log 2>&1
    echo "c16 refines r$r $(grep -E '^(profile|B=8) ' /tmp/o.log | tr -s ' ' | tr '\n' ';')" | tee -a $OUT/stage.txt
  done
  grep -E '^(--|profile|B=)' $OUT/bench.txt
}
call2() {
  step ff_check_c16 200 env APEX_FF_L1_CHUNK16=1 $B/ff_c16 --only 'profile,B=3,B=8,tiles 32/16,256x256,nothing selected' --refine lean
  echo "c16 ok: $(grep -cE '^ok' $OUT/ff_check_c16.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_c16.log)"
  awk '/^FAIL/{f=1} f' $OUT/ff_check_c16.log | head -20
  bench_c16 2
  for r in 1 2; do host_ab main_$r ff_main; host_ab spec_$r ff_spec; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 3 (issue 13, for the plan): Nsight Compute's full set and SASS source page of the shape
# copies of the lean refine at B=8 (main at 934578d, ff_spec): one call's six lean launches (L0
# and L1 of each of the three runs), every SASS instruction's executed count and stall samples
# (CSV, summarised on the dev machine).
call3() {
  step ncu_lean 400 ncu --set full --import-source no --kernel-name regex:ff_refine_apply_lean_c128 \
    --launch-skip 6 --launch-count 6 -o /tmp/lean $B/ff_spec --bench-only --only B=8 --refine auto
  ncu -i /tmp/lean.ncu-rep --page details > "$OUT/lean_details.txt" 2>&1
  ncu -i /tmp/lean.ncu-rep --page source --print-source sass --csv > /tmp/lean_sass.csv 2>&1
  gzip -c /tmp/lean_sass.csv > "$OUT/lean_sass.csv.gz"
  grep -E "^  ff_|Duration|Executed Ipc|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  |Achieved Occ|Registers Per|Block Limit" "$OUT/lean_details.txt"
  ls -la "$OUT"
}

# Call 4 (issue 13): the lean refine's weight fragments through shared memory (ff_cpa: its fp16
# shape copies issue each warp's eight "a" fragments by cp.async at once and the "b" ones as
# slots free up, into the warp's own stash rows, instead of one 16-byte load from L2 a k step).
# Self-check (every fast shape under auto, three under every path), the in-process bench and the
# refines alone against ff_spec (934578d), two rounds, then apex-host alternating, two rounds.
call4() {
  checks $B/ff_cpa auto
  bench_ab 2 'profile,B=8,B=16' ff_spec:auto ff_cpa:auto ff_cpa:lean
  stage_ab 2 ff_spec ff_cpa
  for r in 1 2; do host_ab spec_$r ff_spec; host_ab cpa_$r ff_cpa; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 5 (issue 13): the lean refine's shape copies with a two-pass GroupNorm partial
# (whole_chunk_partial: the chunk's exact sum, then the squares about its mean, instead of Chan's
# merges per thread and per shuffle step) and GroupNorm's affine folded per channel in the
# finish (ff_tp; call 3's source page put the merges at ~45 % of the GEMM-and-partial region).
# ff_tp_r2 / ff_tp_r4: the same with runs of two / four frames (RUN_FRAMES) instead of three.
# Self-check of ff_tp (every fast shape under auto, three under every path); the in-process bench
# against ff_spec (934578d), two rounds; the refines alone; apex-host alternating, two rounds.
call5() {
  checks $B/ff_tp auto
  bench_ab 2 'profile,B=8,B=16' ff_spec:auto ff_tp:auto ff_tp_r2:auto ff_tp_r4:auto
  stage_ab 1 ff_spec ff_tp
  for r in 1 2; do host_ab spec_$r ff_spec; host_ab tp_$r ff_tp; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 6 (issue 13): the lean shape copies' GEMM with both row tiles in one k loop ("a" and "b"
# fragments loaded together: eight waits on L2 a warp instead of sixteen; both accumulators in
# registers, "a" stashed after the loop; fp16 only): ff_pn without a fragment in flight, ff_pp
# with the next step's two in flight (t = 8 spills 32 bytes at 64 registers), ff_ph in flight
# at t = 16 only. Short self-check of each (profile, B=3, B=8, 256x256), then the in-process
# bench against ff_tp (d5385b2), two rounds, and the refines alone.
call6() {
  for v in pn pp ph; do
    $B/ff_$v --only 'profile,B=3,B=8,256x256' --refine auto > $OUT/check_$v.log 2>&1
    echo "check $v rc=$? ok=$(grep -c '^ok' $OUT/check_$v.log) fail=$(grep -c '^FAIL' $OUT/check_$v.log)" | tee -a $OUT/checks.txt
  done
  bench_ab 2 'profile,B=8,B=16' ff_tp:auto ff_pn:auto ff_pp:auto ff_ph:auto
  stage_ab 1 ff_tp ff_pn ff_pp ff_ph
}

# Call 7 (issue 13): call 6's ff_pn as written to land (ff_pair: the fragments loaded at each k
# step's start inside the loop). Self-check (every fast shape under auto, three under every
# path), the in-process bench against ff_tp (d5385b2), two rounds, the refines alone, then
# apex-host alternating, two rounds.
call7() {
  checks $B/ff_pair auto
  bench_ab 2 'profile,B=8,B=16' ff_tp:auto ff_pair:auto
  stage_ab 1 ff_tp ff_pair
  for r in 1 2; do host_ab tp_$r ff_tp; host_ab pair_$r ff_pair; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 8 (issue 13): main at b11d377 (ff_final: `program::lean_shape` now picks a level's lean
# copy; same mapping as ff_pair's search) against ff_pair (c03049e): a short self-check, then the
# in-process bench of the profile and B=8, alternating.
call8() {
  $B/ff_final --only 'profile,B=8' --refine auto > $OUT/check_final.log 2>&1
  echo "check final rc=$? ok=$(grep -c '^ok' $OUT/check_final.log) fail=$(grep -c '^FAIL' $OUT/check_final.log)" | tee -a $OUT/checks.txt
  bench_ab 1 'profile,B=8' ff_pair:auto ff_final:auto
}

# Call 9 (issue 13): refine_gemm_pair folded into refine_gemm (an UNROLL template argument: the
# lean fp16 shape copies call refine_gemm<1>; same instructions, other registers and order in
# ptxas's output) as ff_dedup, against ff_final (2ce34b9): a short self-check, then the
# in-process bench of the profile and B=8, alternating, two rounds.
call9() {
  $B/ff_dedup --only 'profile,B=3,B=8,256x256' --refine auto > $OUT/check_dedup.log 2>&1
  echo "check dedup rc=$? ok=$(grep -c '^ok' $OUT/check_dedup.log) fail=$(grep -c '^FAIL' $OUT/check_dedup.log)" | tee -a $OUT/checks.txt
  bench_ab 2 'profile,B=8' ff_final:auto ff_dedup:auto
}
