#!/usr/bin/env bash
# The device calls of the nineteenth session (2026-11-27), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugins
# in .device/host/release, the A/B plugin builds in .device/ab). Usage on the device:
# `source benches/results/device_scripts_2026-11-27_s19.sh; call1`. `prev` is the committed
# 452f334 (main's kernels at 7db8ee7). Calls 1-6 and 9 ran experiment builds (environment knobs
# and #define variants the landed code does not have), each kept as a patch beside this script.
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
checks() {  # $1: binary; the self-check of every fast shape under auto and of three under every path
  step ff_check 240 $1 --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check_paths 200 $1 --only 'profile,B=8,tiles 32/16' --refine fused,lean,split
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" > "$OUT/checks.txt"; rm -f "$OUT/ff_check.log" "$OUT/ff_check_paths.log"
  echo "ok: $(grep -cE '^ok' "$OUT/checks.txt")"; awk '/^(RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/checks.txt" | head -20
}

bench_ab() {  # $1: rounds, $2: shapes, then the binaries; in-process bench, builds alternating
  local rounds=$1 shapes=$2; shift 2
  for r in $(seq "$rounds"); do for v in "$@"; do
    $B/$v --bench-only --only "$shapes" --refine auto > /tmp/o.log 2>&1
    echo "-- $v r$r rc=$?" >> $OUT/bench.txt
    grep -E '^(profile|B=8|256x256|tiles 32/16) ' /tmp/o.log >> $OUT/bench.txt
  done; done
  python3 - "$OUT/bench.txt" <<'PY'
import collections, re, sys
rows = collections.defaultdict(lambda: collections.defaultdict(list))
v = None
for line in open(sys.argv[1]):
    if line.startswith('-- '): v = line.split()[1]; continue
    m = re.match(r'(profile|B=8|256x256|tiles 32/16)\s.*?\s(\d+\.\d+)\s+\d+\s', line)
    if m: rows[m.group(1)][v].append(m.group(2))
for case, per in rows.items():
    print('%-12s' % case, '  '.join('%s %s' % (k, '/'.join(x)) for k, x in per.items()))
PY
}

# Call 1 (issue 13): the fp16 GEMM operand without its lo part (one product a k step instead of
# two; ldmatrix.x4 loads two n tiles). ff_hionly: the self-check of every fast shape (auto) and of
# three under every path, then in-process bench against prev, three rounds.
call1() {
  checks $B/ff_hionly
  bench_ab 3 'profile,B=8,256x256,tiles 32/16' ff_model_gpu_check_prev ff_hionly
}

# Call 2 (issue 13): ff_packs16 = ff_hionly plus L0's packed tiles in the storage type (ff_pack_s
# copies them exactly; the refines read them through `narrow`): half the bytes of the L0 pack's
# writes and of the L0 refine's tile reads in 16-bit storage. Its self-check as in call 1, then
# the in-process bench of the three builds, three rounds.
call2() {
  checks $B/ff_packs16
  bench_ab 3 'profile,B=8,256x256,tiles 32/16' ff_model_gpu_check_prev ff_hionly ff_packs16
}

# Call 3 (issue 13): how B=8's frames split into runs (run 0 on the host's stream after ff_base,
# the others on side streams from ff_select on). ff_runs: the committed kernels plus an
# APEX_FF_RUNS knob naming the run lengths (experiment only); in-process bench of B=8 (each row
# verified once), two rounds, beside prev.
call3() {
  for r in 1 2; do
    $B/ff_model_gpu_check_prev --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1
    echo "prev r$r $(grep -E '^B=8 ' /tmp/o.log)" | tee -a $OUT/runs.txt
    for split in 4,4 3,5 2,6 1,7 5,3 6,2 2,3,3 1,3,4 1,2,5 2,2,4 3,3,2 2,2,2,2 1,1,3,3; do
      APEX_FF_RUNS=$split $B/ff_runs --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1
      echo "$split r$r $(grep -E '^B=8 ' /tmp/o.log)" | tee -a $OUT/runs.txt
    done
  done
}

# Call 4 (issue 13): what each region of the lean refine costs B=8 (both levels run lean there).
# ff_regions: the committed kernels plus an APEX_FF_DEFINES knob (experiment only) whose
# defines replace a region by a cheap stand-in, timing only (outputs wrong): SKIP_STAGE the
# staging's tile loads (values from FiLM instead), SKIP_DW the depthwise's eight outer taps,
# SKIP_GEMM the GEMM's k loop, SKIP_FINISH refine_value, SKIP_CLUSTER the cluster barriers and
# the peer statistics (each CTA normalises with its own chunk's). In-process bench of B=8, two
# rounds.
call4() {
  for r in 1 2; do
    for d in none SKIP_STAGE SKIP_DW SKIP_GEMM SKIP_FINISH SKIP_CLUSTER 'SKIP_STAGE;SKIP_DW' \
             'SKIP_STAGE;SKIP_DW;SKIP_GEMM;SKIP_FINISH;SKIP_CLUSTER'; do
      dd=$d; [ "$d" = none ] && dd=
      APEX_FF_DEFINES="$dd" $B/ff_regions --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1
      echo "$d r$r $(grep -E '^B=8 ' /tmp/o.log)" | tee -a $OUT/regions.txt
    done
  done
}

# Call 5 (issue 13): is the lean GEMM's cost its weight fragments' traffic from L2? ff_carve:
# ff_regions plus an APEX_FF_CARVEOUT knob (the lean kernel's preferred shared-memory carveout,
# percent: 100 = 228 KiB, four CTAs a SM and 28 KiB of L1; 86 = 196 KiB, three and 60 KiB;
# 72 = 164 KiB, three and 92 KiB; 58 = 132 KiB, two and 124 KiB) and a SAME_A define (timing
# only: every row tile reads row tile 0's or 1's fragments, 8 KiB that stay in L1). In-process
# bench of B=8, two rounds.
call5() {
  for r in 1 2; do
    for v in none c100 c86 c72 c58 same_a same_a_c72; do
      case $v in
        none) env=() ;; c*) env=(APEX_FF_CARVEOUT=${v#c}) ;;
        same_a) env=(APEX_FF_DEFINES=SAME_A) ;; same_a_c72) env=(APEX_FF_DEFINES=SAME_A APEX_FF_CARVEOUT=72) ;;
      esac
      env "${env[@]}" $B/ff_carve --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1
      echo "$v r$r $(grep -E '^B=8 ' /tmp/o.log)" | tee -a $OUT/carve.txt
    done
  done
}

# Call 6 (issue 13): run lengths at B=4, B=8 and B=16 (ff_runs rebuilt with B=4 and B=16 among
# the check's shapes), to choose a rule. In-process bench, two rounds.
call6() {
  for r in 1 2; do
    for s in 'B=4:4' 'B=4:2,2' 'B=4:3,1' 'B=8:4,4' 'B=8:3,3,2' 'B=8:3,3,1,1' 'B=16:4,4,4,4' \
             'B=16:3,3,3,3,2,2' 'B=16:4,3,3,3,3' 'B=16:6,5,5' 'B=16:3,3,3,3,3,1' 'B=16:2,2,2,2,2,2,2,2'; do
      APEX_FF_RUNS=${s#*:} $B/ff_runs --bench-only --only "${s%%:*}" --refine auto > /tmp/o.log 2>&1
      echo "$s r$r $(grep -E '^B=[0-9]+ ' /tmp/o.log)" | tee -a $OUT/runs.txt
    done
  done
}

# Call 7 (issue 13): the landed rule, runs of about three frames (device/streams.rs::runs; B=8:
# 3+3+2). The self-check of every fast shape (auto) and of three under every path; in-process
# bench against prev, two rounds; apex-host's ff_model suite with each plugin build, alternating,
# two rounds.
call7() {
  checks $B/ff_model_gpu_check
  bench_ab 2 'profile,B=8' ff_model_gpu_check_prev ff_model_gpu_check
  for r in 1 2; do host_ab prev_$r ff_prev; host_ab new_$r ff_new; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 8 (issue 13): every acceptance figure again with the landed build, in one call. The case
# exported with its CUDA fp16 outputs, the PyTorch anchor on it (parity, then eager, torch.compile
# and reduce-overhead timed), then apex-host's ff_model suite with the anchor's rows (the
# landed plugin build, carried as .device/host/release/libapex_plugin_ff_model.so).
call8() {
  step ff_export 180 $B/ff_model_export --out /tmp/ff_export --cuda
  mkdir -p /tmp/anchor; step ff_torch 360 env OUT=/tmp/anchor python3 benches/anchors/ff_model_torch.py /tmp/ff_export
  step ff_run 200 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ff \
    --anchor-results /tmp/anchor/ff_model_torch.jsonl --format apex-x-gpu
  cp /tmp/ff/summary.json "$OUT/ff_summary.json"; cp /tmp/ff/summary.md "$OUT/ff_summary.md"
  cat "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log" /tmp/anchor/ff_model_torch.jsonl > "$OUT/anchor_run.txt" 2>/dev/null
  rm -f "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log"
  grep -iE "parity|max|torch|eager|compile|frames|fail" "$OUT/anchor_run.txt" | head -30
}

# Call 9 (issue 13): the lean refine as persistent clusters (ff_model_persistent_lean_experiment_s19.patch:
# the kernel loops over the level's tiles, APEX_FF_PERSIST=N caps a launch at N clusters; LEAN3
# (APEX_FF_DEFINES) builds it for three CTAs a SM at 80 registers, since the loop spills ~170
# bytes at 64). Self-check under lean with N=16; in-process bench of B=8, two rounds.
call9() {
  APEX_FF_DEFINES=LEAN3 APEX_FF_PERSIST=16 $B/ff_persist --only 'profile,B=3,B=8,tiles 32/16,C=16 36x60 tiles 6/3' --refine lean > $OUT/check_persist.log 2>&1
  echo "check rc=$? ok=$(grep -c '^ok' $OUT/check_persist.log) fail=$(grep -c '^FAIL' $OUT/check_persist.log)"
  for r in 1 2; do
    $B/ff_model_gpu_check_prev --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1
    echo "prev r$r $(grep -E '^B=8 ' /tmp/o.log)" | tee -a $OUT/persist.txt
    for v in d64 d64_p16 l3 l3_p8 l3_p12 l3_p16 l3_p24 l3_p32 l3_p48; do
      defs=; [ "${v#l3}" != "$v" ] && defs=LEAN3
      p=${v##*_p}; [ "$p" = "$v" ] && p=
      if [ -n "$p" ]; then env APEX_FF_DEFINES=$defs APEX_FF_PERSIST=$p $B/ff_persist --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1
      else env APEX_FF_DEFINES=$defs $B/ff_persist --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1; fi
      echo "$v r$r $(grep -E '^B=8 ' /tmp/o.log)" | tee -a $OUT/persist.txt
    done
  done
}
