#!/usr/bin/env bash
# Thirty-first session (2026-11-28): the B=8 call's timeline, and schedules measured against it.
# Usage on the device machine: bash benches/results/device_scripts_2026-11-28_s31.sh callN
# Binaries in .device/bin (ff_model_gpu_check builds):
#   ff_s31  the landed tree (729d97f): FF_TIMELINE, like WG_TRACE, changes nothing unless compiled
#           in through APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=N"
#   ff_x31  ff_s31 plus the switches of ff_model_schedule_experiments_s31.patch, none of which
#           changes anything unless set:
#     APEX_FF_X_BASE=skip|l0film|l0  ff_base left out / after every run's L0 FiLM / after every
#                                    run's L0 level (default: beside the levels from the selection)
#     APEX_FF_X_PRIO=film:p,refine:p launch priorities (lower is greater; with
#                                    APEX_GRAPH_NODE_PRIO=1 the bench's graph is instantiated
#                                    with node priorities)
#     APEX_FF_X_RUN=n                runs of about n frames
#     APEX_FF_X_PACKFREE=0|1         the pack-free wgmma levels forced off / on (default: > 1 run)
#     APEX_FF_X_MEANS=1              pack-free levels: the token means in a pack's grid without
#                                    the packed copy (ff_means_*), then ff_film_scan
#     APEX_FF_X_FILMTILES=1|2        tile indices a FiLM linear block takes (default 2 where
#                                    runs > 1)
#   ff_h31  ff_x31 with the wgmma refine's tile rows loaded before its FiLM staging (the patch's
#           refine_wg.cu hunk)
#   ff_t8   ff_s31 plus ff_model_t8_last_run_experiment_s31.patch: APEX_FF_X_T8LAST=1 launches the
#           last run's t = 8 wgmma refine with the shared memory of two CTAs a SM
#   ff_l1   ff_s31 plus ff_model_l1_frame_runs_experiment_s31.patch: APEX_FF_X_L1SPLIT=1 runs each
#           run's L1 level as runs of one frame, each on a stream of its own, with its packs
source benches/results/device_lib.sh

timeline_summary() {  # $1: log with FTL lines: each launch's span, then the SMs' residency
  python3 benches/probes/ff_timeline.py "$1"
}

call1() {  # the timeline of one B=8 call and one profile call, in process; untraced timings beside
  for shape in B=8 profile; do
    APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=300" $B/ff_s31 --bench-only --only "$shape" --precision fp16 > /tmp/tl.log 2>&1
    echo "== timeline $shape rc=$?" | tee -a $OUT/sweep.txt
    grep -E '^(profile|B=[0-9]+) ' /tmp/tl.log | tee -a $OUT/sweep.txt
    grep '^FTL ' /tmp/tl.log > $OUT/ftl_${shape//[^A-Za-z0-9]/}.txt
    timeline_summary /tmp/tl.log | tee -a $OUT/sweep.txt
  done
  $B/ff_s31 --bench-only --only 'profile,B=8' --precision fp16 2>&1 | grep -E '^(profile|B=[0-9]+) ' | tee -a $OUT/sweep.txt
}

variant() {  # $1 label, then env assignments; the in-process bench of ff_x31 (B=8, profile)
  local label=$1; shift
  env "$@" $B/ff_x31 --bench-only --only 'profile,B=8' --refine auto > /tmp/v.log 2>&1
  echo "$label rc=$? $(grep -E '^(profile|B=8) ' /tmp/v.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
}
switch_ab() {  # $1 rounds, $2 binary, $3 shapes, $4 label, then the switch's env assignments:
  # the in-process bench without the switch ("main") and with it, alternating
  local rounds=$1 bin=$2 shapes=$3 label=$4; shift 4
  for r in $(seq "$rounds"); do
    for v in main "$label"; do
      local e=(); [ "$v" = main ] || e=("$@")
      env "${e[@]}" $B/$bin --bench-only --only "$shapes" --refine auto > /tmp/v.log 2>&1
      echo "$v r$r rc=$? $(grep -E '^(profile|B=[0-9]+) ' /tmp/v.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
    done
  done
}
xcheck() {  # $1 label, $2 binary, $3 shapes, $4 storage (all: every one), then env assignments:
  # the self-check under auto, counted into $OUT/sweep.txt
  local label=$1 bin=$2 shapes=$3 prec=$4; shift 4
  local p=(); [ "$prec" = all ] || p=(--precision "$prec")
  env "$@" $B/$bin --only "$shapes" --refine auto "${p[@]}" > /tmp/c.log 2>&1
  echo "check $label rc=$? ok $(grep -c '^ok' /tmp/c.log) FAIL $(grep -c '^FAIL' /tmp/c.log)" | tee -a $OUT/sweep.txt
}
timeline() {  # $1 label, then env assignments: the B=8 timeline of ff_x31 under them
  local label=$1; shift
  env "$@" APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=300" $B/ff_x31 --bench-only --only B=8 --refine auto > /tmp/tl.log 2>&1
  echo "== timeline $label rc=$?" | tee -a $OUT/timelines.txt
  grep '^FTL ' /tmp/tl.log > $OUT/ftl_$label.txt
  timeline_summary /tmp/tl.log >> $OUT/timelines.txt
}

timeline_brief() {  # $1: timelines.txt: each timeline's launches, without the residency bins
  grep -vE '^ {2,}[0-9]' "$1" | grep -v '^resident'
}

call2() {  # where ff_base runs, launch priorities, run lengths; checks of the placements
  for r in 1 2; do
    variant main
    variant skip APEX_FF_X_BASE=skip
    variant l0film APEX_FF_X_BASE=l0film
    variant l0 APEX_FF_X_BASE=l0
    variant prio APEX_FF_X_PRIO=film:-3 APEX_GRAPH_NODE_PRIO=1
    variant prio_l0film APEX_FF_X_PRIO=film:-3 APEX_GRAPH_NODE_PRIO=1 APEX_FF_X_BASE=l0film
  done
  variant run2 APEX_FF_X_RUN=2
  variant run4 APEX_FF_X_RUN=4
  variant run2_l0film APEX_FF_X_RUN=2 APEX_FF_X_BASE=l0film
  variant run4_l0film APEX_FF_X_RUN=4 APEX_FF_X_BASE=l0film
  for v in l0film l0; do
    xcheck $v ff_x31 'profile,B=3,B=8' all APEX_FF_X_BASE=$v
  done
  timeline skip APEX_FF_X_BASE=skip
  timeline l0film APEX_FF_X_BASE=l0film
  timeline prio APEX_FF_X_PRIO=film:-3 APEX_GRAPH_NODE_PRIO=1
  timeline_brief $OUT/timelines.txt
}

call3() {  # runs of one frame (eight streams at B=8), with and without packs and priorities
  for r in 1 2; do
    variant main
    variant run1 APEX_FF_X_RUN=1
    variant run1_packs APEX_FF_X_RUN=1 APEX_FF_X_PACKFREE=0
    variant run1_prio APEX_FF_X_RUN=1 APEX_FF_X_PRIO=film:-3 APEX_GRAPH_NODE_PRIO=1
    variant run1_packs_prio APEX_FF_X_RUN=1 APEX_FF_X_PACKFREE=0 APEX_FF_X_PRIO=film:-3 APEX_GRAPH_NODE_PRIO=1
    variant run2_packs APEX_FF_X_RUN=2 APEX_FF_X_PACKFREE=0
  done
  xcheck run1 ff_x31 'B=8' all APEX_FF_X_RUN=1
  timeline run1 APEX_FF_X_RUN=1
  timeline run1_packs APEX_FF_X_RUN=1 APEX_FF_X_PACKFREE=0
  timeline_brief $OUT/timelines.txt
}

call4() {  # the token means in a pack's grid on the pack-free levels; FiLM blocks of one tile
  for r in 1 2; do
    variant main
    variant means APEX_FF_X_MEANS=1
    variant ft1 APEX_FF_X_FILMTILES=1
    variant means_ft1 APEX_FF_X_MEANS=1 APEX_FF_X_FILMTILES=1
    variant means_prio APEX_FF_X_MEANS=1 APEX_FF_X_PRIO=film:-3 APEX_GRAPH_NODE_PRIO=1
  done
  xcheck means ff_x31 'profile,B=3,B=8' all APEX_FF_X_MEANS=1
  timeline means APEX_FF_X_MEANS=1
  timeline means_ft1 APEX_FF_X_MEANS=1 APEX_FF_X_FILMTILES=1
  timeline_brief $OUT/timelines.txt
}

sass_summary() {  # $1: the source page (SASS, CSV): stall samples and executed instructions by opcode, top lines
  python3 - "$1" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
hi = next(i for i, r in enumerate(rows) if 'Source' in r)
h = rows[hi]; body = rows[hi + 1:]
col = lambda name: next((i for i, x in enumerate(h) if x == name), None)
src, samp, ex = col('Source'), col('Warp Stall Sampling (All Samples)'), col('Instructions Executed')
num = lambda v: float(v.replace(',', '') or 0)
ops = collections.defaultdict(lambda: [0.0, 0.0])
lines = []
for r in body:
    if len(r) <= max(src, samp, ex): continue
    op = r[src].split()[0] if r[src].split() else '?'
    if op.startswith('@'): op = r[src].split()[1] if len(r[src].split()) > 1 else op
    op = op.split('.')[0]
    ops[op][0] += num(r[samp]); ops[op][1] += num(r[ex])
    lines.append((num(r[samp]), num(r[ex]), r[src][:90]))
ts = sum(v[0] for v in ops.values()) or 1; te = sum(v[1] for v in ops.values()) or 1
print('by opcode: stall-sample share, executed share (warp instructions %d)' % te)
for op, (s_, e_) in sorted(ops.items(), key=lambda kv: -kv[1][0])[:18]:
    print('  %-10s %5.1f %% %5.1f %%' % (op, 100 * s_ / ts, 100 * e_ / te))
print('top lines by stall samples:')
for s_, e_, t in sorted(lines, reverse=True)[:25]:
    print('  %5.1f %%  exec %7d  %s' % (100 * s_ / ts, e_, t))
PY
}

call5() {  # Nsight Compute's full set on the B=8 map refines (t16 at L0, t8 at L1), one launch each
  for k in map_s_c128_t16 map_f_c128_t8; do
    timeout 240 ncu --set full --import-source no --kernel-name ff_refine_wg_$k --launch-skip 30 --launch-count 1 \
      -o /tmp/r_$k $B/ff_s31 --bench-only --only B=8 --refine auto --precision fp16 > /tmp/ncu_$k.log 2>&1
    echo "== $k rc=$?" | tee -a $OUT/ncu.txt
    ncu -i /tmp/r_$k.ncu-rep --page details > $OUT/details_$k.txt 2>&1
    ncu -i /tmp/r_$k.ncu-rep --page raw --csv > /tmp/raw_$k.csv 2>&1
    ncu -i /tmp/r_$k.ncu-rep --page source --print-source sass --csv > /tmp/sass_$k.csv 2>&1
    grep -E "Duration|Executed Ipc A|Issue Slots Busy|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Block Limit|Theoretical Occ|L2 Hit|Mem Busy|Max Bandwidth|DRAM Throughput" $OUT/details_$k.txt | tee -a $OUT/ncu.txt
    python3 - /tmp/raw_$k.csv <<'PY' | tee -a $OUT/ncu.txt
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
h, units, v = rows[0], rows[1], rows[2]
want = lambda n: ('pipe_' in n and n.endswith('pct_of_peak_sustained_active')) or n.startswith('smsp__pcsamp_warps_issue_stalled_')
out = [(n, v[i]) for i, n in enumerate(h) if want(n)]
stalls = [(n, float(x.replace(',', '') or 0)) for n, x in out if 'pcsamp' in n and not n.endswith('_not_issued')]
tot = sum(x for _, x in stalls) or 1
for n, x in sorted(stalls, key=lambda t: -t[1])[:12]: print('  stall %-60s %5.1f %%' % (n.replace('smsp__pcsamp_warps_issue_stalled_', ''), 100 * x / tot))
for n, x in out:
    if 'pipe_' in n:
        try:
            if float(x.replace(',', '')) >= 3: print('  pipe %-70s %s' % (n, x))
        except ValueError: pass
PY
    sass_summary /tmp/sass_$k.csv | tee -a $OUT/ncu.txt
    gzip -c /tmp/sass_$k.csv > $OUT/sass_$k.csv.gz
  done
}

ab() {  # $1 rounds, $2 shapes, then binaries: in-process p50s, alternating, one row per run
  local rounds=$1 shapes=$2; shift 2
  for r in $(seq $rounds); do for bin in "$@"; do
    env $B/$bin --bench-only --only "$shapes" --refine auto > /tmp/v.log 2>&1
    echo "$bin r$r rc=$? $(grep -E '^(profile|B=[0-9]+|256x256|tiles 32/16) ' /tmp/v.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
    env $B/$bin --bench-only --only "$shapes" --refine auto --stage refines > /tmp/v.log 2>&1
    echo "$bin refines r$r rc=$? $(grep -E '^(profile|B=[0-9]+|256x256|tiles 32/16) ' /tmp/v.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
  done; done
}

call6() {  # the tile rows loaded first (ff_h31) against ff_x31; its self-check
  ab 2 'profile,B=3,B=8,256x256' ff_x31 ff_h31
  APEX_FF_X_FILMTILES=1 $B/ff_h31 --bench-only --only 'profile,B=8' --refine auto 2>&1 | grep -E '^(profile|B=8) ' | sed 's/^/h31+ft1 /' | tee -a $OUT/sweep.txt
  check_auto h31 300 $B/ff_h31 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'
}

call7() {  # the landed tree (ff_s31): its self-check, the timeline of bf16 (lean refines) at B=8
  # and the profile, and the in-process bench
  check_auto s31 300 $B/ff_s31 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'
  for shape in B=8 profile; do
    APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=300" $B/ff_s31 --bench-only --only "$shape" --precision bf16 --refine auto > /tmp/tl.log 2>&1
    echo "== timeline bf16 $shape rc=$?" | tee -a $OUT/timelines.txt
    grep -E '^(profile|B=[0-9]+) ' /tmp/tl.log | tee -a $OUT/timelines.txt
    timeline_summary /tmp/tl.log >> $OUT/timelines.txt
  done
  $B/ff_s31 --bench-only --only 'profile,B=8' --refine auto 2>&1 | grep -E '^(profile|B=[0-9]+) ' | tee -a $OUT/sweep.txt
  timeline_brief $OUT/timelines.txt
}

call8() {  # L1 in runs of one frame (ff_l1, APEX_FF_X_L1SPLIT=1) against the landed path
  switch_ab 2 ff_l1 'profile,B=3,B=8' l1split APEX_FF_X_L1SPLIT=1
  xcheck l1split ff_l1 'profile,B=3,B=4,B=8,B=16' all APEX_FF_X_L1SPLIT=1
  grep -A3 '^FAIL' /tmp/c.log | head -8
  APEX_FF_X_L1SPLIT=1 APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=300" $B/ff_l1 --bench-only --only B=8 --refine auto --precision fp16 > /tmp/tl.log 2>&1
  echo "== timeline l1split rc=$?" >> $OUT/timelines.txt
  timeline_summary /tmp/tl.log >> $OUT/timelines.txt
  timeline_brief $OUT/timelines.txt
}

call9() {  # the last run's t = 8 refine two CTAs a SM (ff_t8, APEX_FF_X_T8LAST=1)
  switch_ab 3 ff_t8 'profile,B=8' t8last APEX_FF_X_T8LAST=1
  xcheck t8last ff_t8 'B=4,B=8' fp16 APEX_FF_X_T8LAST=1
}

"$@"
