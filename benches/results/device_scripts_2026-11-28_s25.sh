#!/usr/bin/env bash
# The device calls of the twenty-fifth session (2026-11-28), run from the repository root on the
# device machine with the release binaries carried in .device/bin and .device/ab. Usage on the
# device: `source benches/results/device_scripts_2026-11-28_s25.sh; call1`. Experiment builds are
# kept as patches beside this script.
source "$(dirname "${BASH_SOURCE[0]}")/device_lib.sh"
SHAPES='profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'

# Call 1 (issue 13): staggered runs of frames. ff_tip = main (0ade9b7). ff_stg = main with two
# knobs (ff_model_stagger_runs_experiment_s25.patch): APEX_FF_RUN, the frames a run takes (default
# 3), and APEX_FF_STAGGER, where run i > 0 starts: 0 with run 0 (main), 1 after run i - 1's L0
# FiLM (its L0 refine then overlaps run i's L0 pack and FiLM), 2 after run i - 1's L0 refine, 3
# after its L1 FiLM. Self-check of B=8 under each stagger, the in-process sweep (two rounds, main
# at both ends of each), then apex-host: main, stagger 1, stagger 2.
call1() {
  for s in 1 2 3; do APEX_FF_STAGGER=$s check_auto stg$s 90 $B/ff_stg 'B=4,B=8'; done
  for r in 1 2; do
    bench_row "ff_tip r$r" $B/ff_tip 'B=4,B=8,B=16'
    for n in 2 3 4; do for s in 0 1 2 3; do
      bench_row "ff_stg run$n s$s r$r" $B/ff_stg 'B=4,B=8,B=16' APEX_FF_RUN=$n APEX_FF_STAGGER=$s
    done; done
    bench_row "ff_tip r$r'" $B/ff_tip 'B=4,B=8,B=16'
  done
  host_ab tip ff_tip; APEX_FF_STAGGER=1 host_ab stg1 ff_stg; APEX_FF_STAGGER=2 host_ab stg2 ff_stg
  ab_table | tee $OUT/ab_table.txt
}

# Call 2 (issue 13): the acceptance run on main (0ade9b7; export, the PyTorch anchor, apex-host
# with its rows); B=8 in bf16 and fp32 through apex-host (the device copy's bench.yaml takes the
# B=8 case in every CUDA storage, with the B=1 cases of those storages in the same run); SM clocks
# and board power while the profile and B=8 run (in process); and, where the machine has Nsight
# Systems, one B=8 call's kernels on a timeline (start, duration and stream of each kernel).
call2() {
  cp .device/ab/ff_tip.so .device/host/release/libapex_plugin_ff_model.so
  acceptance
  python3 - <<'PY'
import re
p = 'plugins/ff_model/bench.yaml'
s = open(p).read()
s = re.sub(r'(batch: 8\n(?:.*\n){4}  precisions: )\[fp16\]', r'\1[fp16, bf16, fp32]', s, count=1)
open(p, 'w').write(s)
PY
  step host_b8_storages 150 $HOST run --no-build --backends cuda --precision bf16,fp32 --filter 'ff_model.*' --output-dir /tmp/b8s
  grep -E "^\[|ms$" "$OUT/host_b8_storages.log" | head -12
  for s in profile B=8; do
    nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 50 > /tmp/smi.txt & p=$!
    bench_row "tip $s" $B/ff_tip "$s"; kill $p
    python3 - /tmp/smi.txt "$s" <<'PY' | tee -a $OUT/sweep.txt
import sys
rows = [tuple(map(float, l.split(','))) for l in open(sys.argv[1]) if l.count(',') == 1]
top = sorted(rows, key=lambda r: r[1])[len(rows) // 2:]
print(sys.argv[2], 'samples', len(rows), 'upper half by power: SM MHz min/median', min(r[0] for r in top), sorted(r[0] for r in top)[len(top) // 2], 'W median/max', sorted(r[1] for r in top)[len(top) // 2], max(r[1] for r in top))
PY
  done
  if command -v nsys > /dev/null; then
    step nsys_b8 200 nsys profile -o /tmp/b8 --force-overwrite true --trace cuda --cuda-graph-trace node $B/ff_tip --bench-only --only B=8 --refine auto
    step nsys_export 120 nsys export --type sqlite --output /tmp/b8.sqlite --force-overwrite true /tmp/b8.nsys-rep
    python3 - /tmp/b8.sqlite <<'PY' > $OUT/timeline_b8.txt 2>&1
import sqlite3, sys, collections
db = sqlite3.connect(sys.argv[1])
names = dict(db.execute('select id, value from StringIds'))
rows = db.execute('select start, end, streamId, demangledName from CUPTI_ACTIVITY_KIND_KERNEL order by start').fetchall()
rows = [(s, e, st, names.get(n, str(n))) for s, e, st, n in rows]
starts = [i for i, r in enumerate(rows) if r[3].startswith('ff_select')]
print('kernels', len(rows), 'calls', len(starts))
# Steady state: the calls of the last half; per kernel name and stream the median duration.
calls = [rows[a:b] for a, b in zip(starts, starts[1:])]
late = calls[len(calls) // 2:]
span = sorted(c[-1][1] - c[0][0] for c in late)
print('call span (first start to last end) median us %.2f' % (span[len(span) // 2] / 1e3))
per = collections.defaultdict(list)
for c in late:
    t0 = c[0][0]
    for i, (s, e, st, n) in enumerate(c):
        per[(st, n.split('(')[0], sum(1 for x in c[:i] if x[2] == st and x[3] == n))].append(((s - t0) / 1e3, (e - s) / 1e3))
print('%-6s %-40s %9s %9s %9s' % ('stream', 'kernel', 'start us', 'dur us', 'end us'))
for (st, n, k), v in sorted(per.items(), key=lambda kv: sorted(kv[1])[len(kv[1]) // 2][0]):
    s = sorted(x[0] for x in v)[len(v) // 2]; d = sorted(x[1] for x in v)[len(v) // 2]
    print('%-6d %-40s %9.2f %9.2f %9.2f' % (st, n[:40], s, d, s + d))
PY
    head -60 $OUT/timeline_b8.txt
  else
    echo "no nsys on this machine" | tee -a $OUT/sweep.txt
  fi
}

# Call 3 (issue 13): are the lean refines bound by their CTAs a SM? ff_pad = main with
# APEX_FF_LEAN_PAD bytes of dynamic shared memory added to each lean CTA
# (ff_model_lean_pad_experiment_s25.patch): 0 leaves four CTAs a SM at both levels, 8192 three,
# 24576 two. The self-check of B=8 at two a SM, then in process under --refine lean (both levels
# lean at every batch), two rounds: whole frames and the refine blocks alone (--stage refines) at
# B=1, B=3 and B=8.
call3() {
  APEX_FF_LEAN_PAD=24576 step ff_check_pad 90 $B/ff_pad --only 'B=8' --refine lean
  echo "pad 24576 B=8 lean ok: $(grep -cE '^ok' $OUT/ff_check_pad.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_pad.log)" | tee -a $OUT/sweep.txt
  for r in 1 2; do for pad in 0 8192 24576; do for stage in frame refines; do
    APEX_FF_LEAN_PAD=$pad $B/ff_pad --bench-only --only 'profile,B=3,B=8' --refine lean --stage $stage > /tmp/o.log 2>&1
    echo "pad $pad $stage r$r rc=$? $(grep -E '^(profile|B=[0-9]+) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    { echo "-- pad $pad $stage r$r"; grep -E '^(profile|B=[0-9]+) ' /tmp/o.log; } >> $OUT/raw.txt
  done; done; done
}

# Call 4: Refine::Auto runs the lean refine on every level that has a shape-compiled lean copy
# (call 3: the profile read 51.7 us in process under --refine lean against 55.9 under auto, which
# ran the fused kernel at B=1). ff_sl = main with that rule. Self-check of ff_sl under auto (every
# fast shape), the in-process A/B against main (two rounds), then apex-host alternating (two
# rounds).
call4() {
  check_auto sl 230 $B/ff_sl "$SHAPES"
  for r in 1 2; do for v in ff_tip ff_sl; do bench_row "$v r$r" $B/$v 'profile,tiles 32/16,256x256,B=3,B=8'; done; done
  for r in 1 2; do host_ab tip$r ff_tip; host_ab sl$r ff_sl; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 5: the landed rule (ff_fin = call 4's ff_sl with fp32 kept on the wave rule: its profile
# read 151.4 us under the lean copies against 131.0). Self-check under auto (every fast shape, all
# three storages), the in-process A/B against main (two rounds), apex-host alternating (two
# rounds), then the acceptance run (export, the PyTorch anchor, apex-host with its rows) on it.
call5() {
  check_auto fin 230 $B/ff_fin "$SHAPES"
  for r in 1 2; do for v in ff_tip ff_fin; do bench_row "$v r$r" $B/$v 'profile,tiles 32/16,256x256,B=3,B=8'; done; done
  for r in 1 2; do host_ab tip$r ff_tip; host_ab fin$r ff_fin; done
  ab_table | tee $OUT/ab_table.txt
  cp .device/ab/ff_fin.so .device/host/release/libapex_plugin_ff_model.so
  acceptance
}

# Call 6 (issue 13, for the plan): what a lean refine CTA's SM is busy with at B=8. Nsight
# Compute's throughput sections (speed of light, compute and memory workload, scheduler, warp
# states, occupancy) for one call's first L0 and L1 lean launches (run 0) of the landed build.
call6() {
  step ncu_pipes 200 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
    --section Occupancy --kernel-name regex:ff_refine_apply_lean_c128 --launch-skip 6 \
    --launch-count 2 -o /tmp/pipes $B/ff_fin --bench-only --only B=8 --refine auto
  ncu -i /tmp/pipes.ncu-rep --page details > "$OUT/pipes_details.txt" 2>&1
  ncu -i /tmp/pipes.ncu-rep --page raw --csv --metrics regex:sm__inst_executed_pipe_.*sum.pct_of_peak_sustained_active,regex:sm__pipe_.*cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active > "$OUT/pipes_raw.csv" 2>&1
  grep -E "^  ff_|Duration|Throughput|Busy|Ipc|Pipe|Occupancy|Warp Cycles|Stall|Bank" "$OUT/pipes_details.txt" | head -80
}
