#!/usr/bin/env bash
# The device calls of the twenty-third session (2026-11-27), run from the repository root on the
# device machine with the release binaries carried in .device/bin and .device/ab. Usage on the
# device: `source benches/results/device_scripts_2026-11-27_s23.sh; call1`. Experiment builds are
# kept as patches beside this script. The self-checks and bench rows of calls 1, 2, 4, 5 and 9
# were written out in each call when they ran; they now call device_lib.sh's check_auto and
# bench_row, which print the same lines.
source "$(dirname "${BASH_SOURCE[0]}")/device_lib.sh"
SHAPES='profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'

# Call 1 (issue 13): ff_base in the background. ff_bg (main at 4e08b2b with the base and run
# knobs of ff_model_background_base_experiment_s23.patch; its priority knob and APEX_FF_BASE=/K
# came with ff_bg2, call 2): APEX_FF_BASE=N runs ff_base as at most N
# blocks looping over its bands, on a stream forked after ff_select beside every run of frames and
# joined at the call's end (unset: today's full grid on the host's stream before run 0);
# APEX_FF_RUN=n sets the frames a run. Self-check with N=32, the in-process sweep over N (two
# rounds), run lengths with N=32 and 64, then apex-host: main's build against N=32 and N=64.
call1() {
  APEX_FF_BASE=32 check_auto bg32 200 $B/ff_bg "$SHAPES"
  for r in 1 2; do for n in none 8 16 32 64 132 100000; do
    if [ $n = none ]; then unset APEX_FF_BASE; else export APEX_FF_BASE=$n; fi
    $B/ff_bg --bench-only --only 'profile,B=8,B=16' --refine auto > /tmp/o.log 2>&1
    echo "base=$n r$r rc=$? $(grep -E '^(profile|B=[0-9]+) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
  done; done
  unset APEX_FF_BASE
  for n in 32 64; do for run in 2 4 8; do
    APEX_FF_BASE=$n APEX_FF_RUN=$run $B/ff_bg --bench-only --only 'B=8,B=16' --refine auto > /tmp/o.log 2>&1
    echo "base=$n run=$run rc=$? $(grep -E '^(profile|B=[0-9]+) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
  done; done
  host_ab main ff_xc
  APEX_FF_BASE=32 host_ab bg32 ff_bg
  APEX_FF_BASE=64 host_ab bg64 ff_bg
  ab_table | tee $OUT/ab_table.txt
}

# Call 2 (issue 13): ff_bg2 (ff_bg, plus APEX_FF_BASE=/K: one base block per K bands, and
# APEX_FF_PRIO=class:p,... launch priorities for the packs, FiLM and refine launches, honoured
# where the graph is instantiated with USE_NODE_PRIORITY: APEX_GRAPH_NODE_PRIO=1 in
# ff_model_gpu_check and in this apex-host build). In process: the base rule over five shapes, then
# priorities at the profile and B=8, two rounds; apex-host: main, /16, /16 with priorities.
bench_env() {  # $1: label, $2: shapes, then env assignments
  local label=$1 shapes=$2; shift 2
  bench_row "$label" $B/ff_bg2 "$shapes" "$@"
}
call2() {
  for r in 1 2; do for k in none /8 /16 /32; do
    if [ $k = none ]; then bench_env "base=$k r$r" 'profile,tiles 32/16,256x256,B=8,B=16'
    else bench_env "base=$k r$r" 'profile,tiles 32/16,256x256,B=8,B=16' APEX_FF_BASE=$k; fi
  done; done
  for r in 1 2; do for p in none pack:-5,film:-5 film:-5 refine:-5 pack:-5,film:-5,refine:-2; do
    bench_env "prio=$p r$r" 'profile,B=8' APEX_GRAPH_NODE_PRIO=1 APEX_FF_PRIO=$p
    bench_env "prio=$p base=/16 r$r" 'profile,B=8' APEX_GRAPH_NODE_PRIO=1 APEX_FF_PRIO=$p APEX_FF_BASE=/16
  done; done
  for r in 1 2; do
    host_ab main_$r ff_xc
    APEX_FF_BASE=/16 host_ab b16_$r ff_bg2
    APEX_FF_BASE=/16 APEX_GRAPH_NODE_PRIO=1 APEX_FF_PRIO=pack:-5,film:-5 host_ab b16p_$r ff_bg2
  done
  ab_table | tee $OUT/ab_table.txt
}

# Call 3 is benches/probes/copy_engine_overlap.py (a device-to-device cudaMemcpyAsync and a
# cudaMemsetAsync beside a kernel that holds every SM): `cd benches/probes && python3
# copy_engine_overlap.py 64`.

# Call 4 (issue 13): the background base as landed (ff_b16: ff_base in at most 64 registers, one
# block per 16 bands, on the background stream), its bands per block swept (ff_bx: ff_b16 with
# APEX_FF_BASE_BANDS), streaming loads and stores in the base (ff_bcs: __ldcs/__stcs), against
# main's build (ff_xc). Self-check of ff_b16 (every fast shape under auto), the in-process bench
# over five shapes (two rounds), then apex-host alternating, two rounds.
call4() {
  check_auto b16 200 $B/ff_b16 "$SHAPES"
  local shapes='profile,tiles 32/16,256x256,B=8,B=16'
  for r in 1 2; do
    for v in ff_xc ff_b16 ff_bcs; do bench_row "$v r$r" $B/$v "$shapes"; done
    for k in 4 8 32; do bench_row "bands=$k r$r" $B/ff_bx "$shapes" APEX_FF_BASE_BANDS=$k; done
  done
  for r in 1 2; do host_ab main_$r ff_xc; host_ab b16_$r ff_b16; host_ab bcs_$r ff_bcs; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 5 (issue 13): the landed build (ff_fin, 66946b6) against main's before it (ff_xc) and ff_bcs
# (call 4's candidate, the same code), and ff_ost: ff_fin with the lean refine's heavy and detail
# runs stored evict-first (ff_model_lean_streaming_stores_experiment_s23.patch). Self-check of
# ff_fin (every fast shape under auto), the in-process bench, apex-host alternating, two rounds.
call5() {
  check_auto fin 200 $B/ff_fin "$SHAPES"
  for r in 1 2; do for v in ff_xc ff_fin ff_ost; do
    bench_row "$v r$r" $B/$v 'profile,tiles 32/16,256x256,B=8,B=16'
  done; done
  for r in 1 2; do host_ab main_$r ff_xc; host_ab fin_$r ff_fin; host_ab ost_$r ff_ost; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 6 (issue 13): where B=8's time goes with the base beside the levels: ff_skip (main at
# eec0c82 with ff_model_stage_skip_experiment_s23.patch: APEX_FF_SKIP leaves named launches out;
# outputs wrong, timing only), in process, the profile and B=8, two rounds (call 4 of the
# twenty-second session's script, again).
call6() {
  for r in 1 2; do
    for s in none base pack0,pack1 film0,film1 refine0 refine1 refine0,refine1 \
             pack0,pack1,film0,film1,refine0,refine1 base,pack0,pack1,film0,film1,refine0,refine1 \
             base,refine0,refine1 base,pack0,pack1,refine0,refine1; do
      APEX_FF_SKIP=$s $B/ff_skip --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
      echo "$s r$r rc=$? $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/skip.txt
    done
  done
}

# Call 7 (issue 13): does a run's launch count set B=8's FiLM time? ff_skip2 (ff_skip with
# APEX_FF_RUN=n frames a run): select + FiLM alone (base, packs and refines left out) and the
# whole frame, B=8 in runs of 1, 2, 3, 4 and 8 frames, in process, two rounds.
call7() {
  for r in 1 2; do for n in 1 2 3 4 8; do
    for s in base,pack0,pack1,refine0,refine1 none; do
      APEX_FF_RUN=$n APEX_FF_SKIP=$s $B/ff_skip2 --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
      echo "run=$n skip=$s r$r rc=$? $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/runs.txt
    done
  done; done
}

# Call 8 (issue 13): which FiLM kernel grows at B=8? Nsight Compute durations (ncu's clocks) of
# ff_film_* at the profile and at B=8 in one run (ff_skip2, APEX_FF_RUN=8), the landed kernels.
call8() {
  for shape in profile B=8; do
    APEX_FF_RUN=8 timeout 200 ncu --kernel-name regex:ff_film --launch-count 12 --metrics gpu__time_duration.sum,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active \
      $B/ff_skip2 --bench-only --only "$shape" --refine auto > $OUT/ncu_film_$shape.txt 2>&1
    echo "== $shape rc=$?"; grep -E "ff_film|duration|grid_size|warps_active" $OUT/ncu_film_$shape.txt | head -60
  done
}

# Call 9 (issue 13): FiLM's linear blocks with fewer frames each: ff_ft1 and ff_ft2 (the landed
# build with FILM_TOKENS 1 and 2 instead of 4; call 8 had ff_film_fc1 and ff_film_out at 9.4-12.3
# us a launch with four frames a block against 5.7-6.4 with one). Self-check of ff_ft1 at B=8,
# in process (two rounds), apex-host one round each.
call9() {
  check_auto ft1 120 $B/ff_ft1 'B=3,B=8'
  for r in 1 2; do for v in ff_fin ff_ft1 ff_ft2; do bench_row "$v r$r" $B/$v 'profile,B=8,B=16'; done; done
  host_ab fin ff_fin; host_ab ft1 ff_ft1; host_ab ft2 ff_ft2
  ab_table | tee $OUT/ab_table.txt
}
