#!/usr/bin/env bash
# The device calls of the eighteenth session (2026-11-27), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugins
# in .device/host/release, the A/B plugin builds in .device/ab). Usage on the device:
# `source benches/results/device_scripts_2026-11-27_s18.sh; call3`. `prev` is the committed
# 452f334. Calls 1 and 2 ran experiment builds (environment knobs and #define variants that the
# landed code does not have); their commands are recorded here as they ran.
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

# Call 1 (issue 13, for the plan): where B=8's time goes. An experiment build (452f334 plus
# ff_model_stage_skip_experiment_s18.patch) whose APEX_FF_SKIP names stages the call leaves out
# (base, pack0/1, film0/1, refine0/1: outputs wrong, timing only), in-process bench of the profile
# and B=8, twice each, beside the committed build.
skip_run() {  # $1: label, $2: APEX_FF_SKIP
  for r in 1 2; do
    env APEX_FF_SKIP="$2" $B/ff_exp --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
    echo "$1 r$r: $(grep -E '^(profile|B=8)' /tmp/o.log | tr '\n' ' ')" | tee -a $OUT/skip.txt
  done
}
call1() {
  $B/ff_model_gpu_check_prev --bench-only --only 'profile,B=8' --refine auto > $OUT/prev.log 2>&1
  skip_run none ""; skip_run base base; skip_run pack pack0,pack1; skip_run film film0,film1
  skip_run film0 film0; skip_run film1 film1; skip_run refine0 refine0; skip_run refine1 refine1
  skip_run refines refine0,refine1; skip_run l1 pack1,film1,refine1
  skip_run sel_base pack0,film0,refine0,pack1,film1,refine1
  skip_run sel_only base,pack0,film0,refine0,pack1,film1,refine1
}

# Call 2 (issue 13): the lean refine's GEMM weight loads, prefetched. Variants of the lean kernel
# built with #defines: v1 prefetch.L1 four k steps ahead plus the depthwise weights and biases at
# the kernel's start, v2 the same two ahead, v3 two fragments in registers, v4 = v1 + v3, v5 the
# coverage read before the cluster wait, v6 all. v6 checked on five shapes under lean and auto;
# B=8 in-process, three rounds.
call2() {
  $B/ff_v6 --only 'profile,B=3,B=8,tiles 32/16,256x256' --refine lean,auto > $OUT/check_v6.log 2>&1
  echo "check v6 rc=$? ok=$(grep -c '^ok' $OUT/check_v6.log) fail=$(grep -c FAIL $OUT/check_v6.log)"
  for r in 1 2 3; do for v in ff_model_gpu_check_prev ff_v1 ff_v2 ff_v3 ff_v4 ff_v5 ff_v6; do
    $B/$v --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1
    echo "$v r$r $(grep -E '^B=8' /tmp/o.log)" | tee -a $OUT/bench.txt; done; done
}

# Call 3 (issue 13): the lean GEMM's fp16 k loop two steps an iteration (no moves rotating the
# prefetched fragment), acc_partial without bounds on whole chunks, chan_merge's first merge
# without its division. The self-check; the in-process bench against the committed build, twice;
# apex-host's ff_model suite, both plugins alternating, two rounds.
call3() {
  local X=$B/ff_model_gpu_check
  checks $X
  for r in 1 2; do for v in prev new; do
    local bin=$X; [ $v = prev ] && bin=${X}_prev
    step bench_${v}_$r 90 $bin --bench-only --only profile,256x256,B=8 --refine auto
    echo "-- ${v}_$r" >> "$OUT/bench.txt"; grep -E "^(profile|256x256|B=|scaling)" "$OUT/bench_${v}_$r.log" | tee -a "$OUT/bench.txt"; rm -f "$OUT/bench_${v}_$r.log"
  done; done
  for r in 1 2; do for v in prev new; do host_ab ${v}_$r ff_$v > /dev/null; done; done
  ab_table | tee "$OUT/ab_table.txt"
  rm -f "$OUT"/host_*.log
  cat "$OUT/table.txt"
}

# Call 4 (issue 13): ff_base's place and priority. An experiment build (committed 452f334 plus
# knobs): APEX_FF_BASE_LAST=1 launches ff_base after run 0's levels on the host's stream (beside
# run 1 at B=8) instead of before them; APEX_FF_PRIO=1 gives ff_base the least launch priority and
# every level kernel the greatest (the graph instantiated with USE_NODE_PRIORITY). The self-check
# of three shapes with both knobs; the in-process bench of the profile and B=8, each
# configuration twice.
call4() {
  local X=$B/ff_exp
  step check_knobs 150 env APEX_FF_BASE_LAST=1 APEX_FF_PRIO=1 $X --only 'profile,B=3,B=8' --refine auto
  echo "ok: $(grep -cE '^ok' "$OUT/check_knobs.log")"; grep -E "^FAIL|RESULT" "$OUT/check_knobs.log" | head
  for r in 1 2; do
    for cfg in none BASE_LAST PRIO BASE_LAST,PRIO; do
      local envs=""; for k in ${cfg//,/ }; do [ $k != none ] && envs="$envs APEX_FF_$k=1"; done
      env $envs $X --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
      echo "$cfg r$r: $(grep -E '^(profile|B=8)' /tmp/o.log | awk '{print $1, $4}' | tr '\n' ' ')" | tee -a "$OUT/bench.txt"
    done
  done
  cat "$OUT/table.txt"
}

# Call 5 (issue 13): per-level refine kernels at B=8 in two runs. Call 4's experiment build plus
# APEX_FF_L0 / APEX_FF_L1 = fused | lean, which override Refine::Auto's pick for one level (auto
# runs lean on both at B=8). In-process bench of B=8, each configuration twice, with and without
# APEX_FF_BASE_LAST.
call5() {
  local X=$B/ff_exp
  for r in 1 2; do
    for cfg in "" "APEX_FF_L1=fused" "APEX_FF_L0=fused" "APEX_FF_L0=fused APEX_FF_L1=fused" "APEX_FF_BASE_LAST=1" "APEX_FF_BASE_LAST=1 APEX_FF_L1=fused"; do
      env $cfg $X --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1
      echo "[${cfg:-auto}] r$r: $(grep -E '^B=8' /tmp/o.log)" | tee -a "$OUT/bench.txt"
    done
  done
  step check_l1fused 100 env APEX_FF_L1=fused APEX_FF_BASE_LAST=1 $X --only 'B=8' --refine auto
  echo "ok: $(grep -cE '^ok' "$OUT/check_l1fused.log")"; grep -E "^FAIL|RESULT" "$OUT/check_l1fused.log" | head
}

# Call 6 (issue 13): call 5 again for the configurations whose figure call 5's awk cut off (the
# mixed fused / lean label is one word longer), with the whole line kept.
call6() {
  local X=$B/ff_exp
  for r in 1 2; do
    for cfg in "" "APEX_FF_L1=fused" "APEX_FF_L0=fused" "APEX_FF_BASE_LAST=1 APEX_FF_L1=fused"; do
      env $cfg $X --bench-only --only 'B=8' --refine auto > /tmp/o.log 2>&1
      echo "[${cfg:-auto}] r$r: $(grep -E '^B=8' /tmp/o.log)" | tee -a "$OUT/bench.txt"
    done
  done
}

# Call 7 (issue 13, for the plan): Nsight Compute's full set and SASS source page of the lean
# refines at B=8 in two runs (the committed build): the second call's four lean launches (L0 and
# L1 of each run), with every SASS instruction's executed count and stall samples (CSV).
call7() {
  local X=$B/ff_model_gpu_check_prev
  step ncu_lean 400 ncu --set full --import-source no --kernel-name ff_refine_apply_lean --launch-skip 4 --launch-count 4 \
    -o /tmp/lean $X --bench-only --only B=8 --refine auto
  ncu -i /tmp/lean.ncu-rep --page details > "$OUT/lean_details.txt" 2>&1
  ncu -i /tmp/lean.ncu-rep --page source --print-source sass --csv > /tmp/lean_sass.csv 2>&1
  gzip -c /tmp/lean_sass.csv > "$OUT/lean_sass.csv.gz"
  ncu -i /tmp/lean.ncu-rep --page raw --csv --metrics launch__grid_size,gpu__time_duration.sum,smsp__inst_executed.sum,smsp__pcsamp_sample_count > "$OUT/lean_raw.csv" 2>&1
  grep -E "^  ff_|Duration|Executed Ipc|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  |Achieved Occ" "$OUT/lean_details.txt"
  ls -la "$OUT"; cat "$OUT/table.txt"
}

# Call 8 (issue 13): tile_stats with its shape's reciprocals computed by thread 0 before the
# cluster wait (stat_scale) and rsqrt for 1/sqrt(var + eps), every path (fused, lean, split);
# the fused refines' second cluster arrive without a fence. The self-check; the in-process bench
# against the committed build, twice; apex-host's ff_model suite, both plugins alternating, two
# rounds.
call8() { call3; }

# The summary of call 7's source page in ff_model_ncu_lean_b8_runs_h100_2026-11-27_s18_call7.txt,
# run on the dev machine: `summarise_sass lean_sass.csv.gz 0` (kernel index 0: L0, run 0).
summarise_sass() {
  python3 - "$@" <<'PY'
import csv, gzip, sys, collections, re
rows = list(csv.reader(gzip.open(sys.argv[1], 'rt')))
kernels = []; cur = None
for r in rows:
    if r and r[0] == 'Kernel Name': cur = []; kernels.append(cur); continue
    if r and r[0] == 'Address': hdr = r; continue
    if cur is not None and r and r[0].startswith('0x'): cur.append(r)
stall_cols = [i for i, h in enumerate(hdr) if h.startswith('stall_') and 'Not Issued' not in h]
for ki in [int(x) for x in sys.argv[2].split(',')]:
    k = kernels[ki]
    tot = sum(int(r[4]) for r in k); ins = sum(int(r[5]) for r in k)
    print(f'== kernel {ki}: {len(k)} SASS lines, samples {tot}, warp instructions {ins}')
    # regions split at barrier-ish instructions
    seg_start = 0; segs = []
    for i, r in enumerate(k):
        src = r[1].strip()
        if re.search(r'BAR\.SYNC|UCGABAR_ARV|UCGABAR_WAIT|EXIT', src):
            segs.append((seg_start, i)); seg_start = i + 1
    segs.append((seg_start, len(k) - 1))
    for a, b in segs:
        part = k[a:b + 1]
        s = sum(int(r[4]) for r in part); n = sum(int(r[5]) for r in part)
        if s < tot * 0.01 and n < ins * 0.01: continue
        reasons = collections.Counter()
        for r in part:
            for c in stall_cols: reasons[hdr[c][6:]] += int(r[c] or 0)
        ops = collections.Counter(re.sub(r'^@!?U?P\w+ ', '', r[1].strip()).split(' ')[0].split('.')[0] for r in part for _ in range(0))
        top = ', '.join(f'{k_} {v}' for k_, v in reasons.most_common(4))
        print(f'  [{a:5d}-{b:5d}] ends {k[b][1].strip()[:28]:28s} instr {n/1e6:6.2f}M ({100*n/ins:4.1f}%) samples {s:5d} ({100*s/tot:4.1f}%): {top}')
    reasons = collections.Counter()
    for r in k:
        for c in stall_cols: reasons[hdr[c][6:]] += int(r[c] or 0)
    print('  all:', ', '.join(f'{k_} {100*v/tot:.1f}%' for k_, v in reasons.most_common(8)))
PY
}
