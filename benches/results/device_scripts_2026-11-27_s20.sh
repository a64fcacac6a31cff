#!/usr/bin/env bash
# The device calls of the twentieth session (2026-11-27), run from the repository root on the
# device machine with the release binaries carried in .device/bin. Usage on the device:
# `source benches/results/device_scripts_2026-11-27_s20.sh; call1`. `ff_main` is main's
# ff_model_gpu_check at cb2e899; experiment builds are kept as patches beside this script.
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

# Call 1 (issue 13): refine CTAs of 64 pixels instead of 32 (ff_model_chunk64_experiment_s20.patch:
# CHUNK 64, the lean kernel at two CTAs a SM and up to 128 registers; half the CTAs, half the
# weight-fragment reads, an L1 tile one CTA). ff_c64h: the same on top of the fp16 GEMM operand
# without its lo part (s19's hionly patch). ff_c64's self-check under lean (fp16, bf16, fp32), then the in-process bench
# against main, two rounds (every bench row verified once).
call1() {
  step ff_check_c64 220 $B/ff_c64 --only 'profile,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected' --refine lean
  echo "c64 ok: $(grep -cE '^ok' $OUT/ff_check_c64.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_c64.log)"
  bench_ab 2 'profile,B=8,B=16,256x256' ff_main:auto ff_c64:lean ff_c64:auto ff_c64h:lean
}

# Call 2 (issue 13): cache hints for the bytes no kernel of the frame reads again
# (ff_model_streaming_stores_experiment_s20.patch). ff_csb: ff_base's dense loads and its heavy
# and detail stores evict-first (ld.global.cs / st.global.cs): at B=8 it streams ~75 MB through
# the 50 MB L2, beside the levels' packed tiles, l0map and FiLM vectors, which are read again.
# ff_cs: also the refines' heavy and detail stores (store_run, store_pair). Self-check of ff_cs
# (every fast shape under auto, three under every path), then the in-process bench against
# main, three rounds, with B=4 and B=16 for the batch curve. ff_cs2: ff_cs plus the packs' loads
# evict-first (ff_model_streaming_stores_packs_experiment_s20.patch: each tile's source is read once).
call2() {
  checks $B/ff_cs auto
  bench_ab 3 'profile,B=4,B=8,B=16' ff_main:auto ff_csb:auto ff_cs:auto ff_cs2:auto
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

# Call 3 (issue 13): the packs' evict-first loads as a landing candidate (ff_pk: call 2's ff_cs2
# without the base's and refines' store hints, which changed nothing, plus the packs' scalar
# loads), and three more hints on top of it, in process only: ff_pk_lu the refines' residual
# loads of the packed tile as last use (ld.global.lu), ff_pk_na the staging's loads of the packed
# tile without L1 allocation (ld.global.nc.L1::no_allocate), ff_pk_st the same loads evict-first
# (patches ff_model_*_hint_experiment_s20.patch). ff_pk's self-check (every fast shape under
# auto, three under every path), the in-process bench, two rounds, then apex-host's ff_model
# suite with main's and ff_pk's plugin builds, alternating, two rounds.
call3() {
  checks $B/ff_pk auto
  bench_ab 2 'profile,B=4,B=8' ff_main:auto ff_pk:auto ff_pk_lu:auto ff_pk_na:auto ff_pk_st:auto
  for r in 1 2; do host_ab main_$r ff_main; host_ab pk_$r ff_pk; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 4 (issue 13): where ff_base runs. Today it covers the whole batch on the host's stream
# before run 0's levels (B=8: ~29 µs that run 0 waits for). ff_bp: main (with call 3's packs)
# plus an APEX_FF_BASE knob (experiment only, ff_model_base_per_run_experiment_s20.patch):
# unset = today's placement; `start` = one base pass per run, first on the run's stream;
# `end` = one per run, after the run's L1 refine (the base writes only pixels no refine writes,
# so the order within a run does not matter). Self-checks of both placements (six shapes, fp16,
# bf16, fp32), the in-process bench against ff_pk (the landed build), two rounds, then
# apex-host's ff_model suite, alternating, two rounds.
bench_env() {  # $1: label, $2: binary, $3: APEX_FF_BASE value (may be empty)
  APEX_FF_BASE=$3 $B/$2 --bench-only --only 'profile,B=4,B=8,B=16' --refine auto > /tmp/o.log 2>&1
  echo "-- $1 rc=$?" >> $OUT/bench.txt
  grep -E '^(profile|B=[0-9]+) ' /tmp/o.log >> $OUT/bench.txt
}
call4() {
  for p in start end; do
    APEX_FF_BASE=$p $B/ff_bp --only 'profile,B=3,B=8,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto > $OUT/check_$p.log 2>&1
    echo "check $p rc=$? ok=$(grep -c '^ok' $OUT/check_$p.log) fail=$(grep -c '^FAIL' $OUT/check_$p.log)" | tee -a $OUT/checks.txt
  done
  for r in 1 2; do
    bench_env pk ff_pk ''; bench_env bp_none ff_bp ''; bench_env bp_start ff_bp start; bench_env bp_end ff_bp end
  done
  python3 - "$OUT/bench.txt" <<'PY'
import collections, re, sys
rows = collections.defaultdict(lambda: collections.defaultdict(list))
v = None
for line in open(sys.argv[1]):
    if line.startswith('-- '): v = line.split()[1]; continue
    m = re.match(r'(profile|B=\d+)\s.*?\s(\d+\.\d+)\s+\d+\s', line)
    if m: rows[m.group(1)][v].append(m.group(2))
for case, per in rows.items():
    print('%-8s' % case, '  '.join('%s %s' % (k, '/'.join(x)) for k, x in per.items()))
PY
  for r in 1 2; do
    host_ab pk_$r ff_pk
    APEX_FF_BASE=start host_ab start_$r ff_bp
    APEX_FF_BASE=end host_ab end_$r ff_bp
  done
  ab_table | tee $OUT/ab_table.txt
}

# Call 5 (issue 13): the refine block in PyTorch (benches/probes/ff_refine_block_torch.py: cuDNN's
# depthwise, cuBLAS's pointwise, GroupNorm, the gate; eager and torch.compile, each replayed from
# a CUDA graph over rotating sets) on one frame's tiles and eight frames', fp16: how a
# throughput-built library's block scales from B=1 to B=8.
call5() {
  step refine_block_torch 300 python3 benches/probes/ff_refine_block_torch.py
  cat $OUT/refine_block_torch.log
}

# Call 6 (issue 13): the plugin's refine blocks alone (ff_model_gpu_check's new `--stage
# refines`: after the verified frames, only the two levels' refines of each call, in the same
# graph timing) beside the PyTorch probe of call 5, in one call. ff_stage: main with the stage
# flag. A short self-check of the refactored launch path, the frame and refines-only benches of
# the profile and B=8, then the probe.
call6() {
  step ff_check_stage 150 $B/ff_stage --only 'profile,B=3,C=16 36x60 tiles 6/3,nothing selected' --refine auto
  echo "check ok=$(grep -c '^ok' $OUT/ff_check_stage.log) fail=$(grep -c '^FAIL' $OUT/ff_check_stage.log)"
  step ff_frame 120 $B/ff_stage --bench-only --only 'profile,B=8' --refine auto
  step ff_refines 120 $B/ff_stage --bench-only --only 'profile,B=8' --refine auto --stage refines
  step refine_block_torch 200 python3 benches/probes/ff_refine_block_torch.py
  grep -E "^(profile|B=8|scaling|bench)" $OUT/ff_frame.log $OUT/ff_refines.log
  tail -9 $OUT/refine_block_torch.log
}
