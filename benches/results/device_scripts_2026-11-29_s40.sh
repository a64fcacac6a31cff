#!/usr/bin/env bash
# Fortieth session's GPU calls (issue 13, ff_model). Run from the repository root on the device
# machine: `bash benches/results/device_scripts_2026-11-29_s40.sh callN`, output under $OUT.
# Binaries: .device/bin/ff_s38one, .device/ab/s38one.so: the landed kernels (e363b44 launches the
# same; see the thirty-ninth session's script); .device/bin/ff_e40, .device/ab/e40.so,
# .device/host_e40/apex-host: e363b44 plus the L0 map refines' early tile rows (the working tree,
# benches/results/ff_model_wg_early_rows_s40.patch; APEX_NVRTC_DEFINES="WG_EARLY_ROWS=false"
# loads them after the wait again); .device/bin/ff_p40: e363b44 plus the two-tile L0 refine
# (benches/results/ff_model_wgp_two_tiles_experiment_s40.patch; APEX_FF_X_WGP=N: runs of N
# frames or more run ff_refine_wgp_map_s_c128_t16); .device/bin/ff_w40: e363b44 plus the
# warp-specialised L0 refine (benches/results/ff_model_ws_refine_experiment_s40.patch;
# APEX_FF_X_WS=N: L0's t = 16 map refine runs ff_refine_ws_map_s_c128_t16, N tiles a cluster);
# .device/bin/ff_r40: the wgmma refine's phases as functions (wg_build, wg_acc_bias,
# wg_finish_chunk), the commit after fc56a9f (NVRTC's PTX the same but for where three
# instructions a kernel sit).
source benches/results/device_lib.sh
source <(sed -n '/^vrow()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
source <(sed -n '/^host_with()/,/^}/p;/^self_check()/,/^}/p' benches/results/device_scripts_2026-11-29_s36.sh)

call1() {  # what a SM's two wgmma refine CTAs share at B=8: Nsight Compute's full set (pipe
  # utilisation, warp states, instruction mix, source-level stall samples) on one launch of each
  # map refine (L0 t = 16 in clusters of four, L1 t = 8 alone), kernel replay, L2 as the call
  # left it; then the thirty-ninth session's prepared WG_TRACE phase clocks
  for k in map_s_c128_t16 map_f_c128_t8; do
    timeout 200 ncu --set full --import-source no --cache-control none --clock-control none \
      --kernel-name ff_refine_wg_$k --launch-skip 40 --launch-count 1 -o /tmp/rep_$k \
      $B/ff_s38one --bench-only --only B=8 --refine auto --precision fp16 > /tmp/ncu_$k.log 2>&1
    echo "== $k rc=$?" | tee -a $OUT/sweep.txt
    ncu --import /tmp/rep_$k.ncu-rep --page details > $OUT/ncu_details_$k.txt 2>&1
    ncu --import /tmp/rep_$k.ncu-rep --page raw --csv > $OUT/ncu_raw_$k.csv 2>&1
    ncu --import /tmp/rep_$k.ncu-rep --page source --csv --print-source sass > $OUT/ncu_sass_$k.csv 2>&1 \
      || echo "source page rc=$?" | tee -a $OUT/sweep.txt
    grep -E "Duration|Issue Slots Busy|Issued Ipc|No Eligible|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Executed Ipc" \
      $OUT/ncu_details_$k.txt | tee -a $OUT/sweep.txt
    tail -3 /tmp/ncu_$k.log >> $OUT/sweep.txt
  done
  source <(sed -n '/^trace_summary()/,/^}/p' benches/results/device_scripts_2026-11-28_s29.sh)
  for s in frame refines; do
    local stage=""; [ $s = refines ] && stage="--stage refines"
    APEX_NVRTC_DEFINES="WG_TRACE WG_TRACE_FROM=30000" timeout 100 $B/ff_s38one --bench-only --only B=8 --refine auto --precision fp16 $stage > /tmp/trace_b8_$s.log 2>&1
    APEX_NVRTC_DEFINES="WG_TRACE WG_TRACE_FROM=3000" timeout 100 $B/ff_s38one --bench-only --only profile --refine auto --precision fp16 $stage > /tmp/trace_b1_$s.log 2>&1
    for b in b8 b1; do echo "== trace $b $s"; trace_summary /tmp/trace_${b}_$s.log; done | tee -a $OUT/sweep.txt
  done
}

call2() {  # the early tile rows: their checks (every shape whose L0 runs the wgmma map refine),
  # in process against main and against the same build without them, two rounds, the frame and
  # the refine blocks alone; then apex-host, main against early, two rounds
  self_check check_early "early rows" X=1 $B/ff_e40 --only 'profile,B=3,B=8,B=16,256x256,K=64/160,B=4 256x256,B=4 K=64/160' --precision fp16 --refine auto
  for r in 1 2; do
    vrow ff_s38one 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_e40 'profile,B=8,B=16' "early r$r" "" X=1
    vrow ff_e40 'profile,B=8,B=16' "early off r$r" "" APEX_NVRTC_DEFINES=WG_EARLY_ROWS=false
    vrow ff_s38one 'profile,B=8,B=16' "main r$r" "--stage refines" X=1
    vrow ff_e40 'profile,B=8,B=16' "early r$r" "--stage refines" X=1
  done
  host_with s38one .device/host_e40
  for r in 1 2; do host_ab main_r$r s38one; host_ab early_r$r e40; done
  ab_table | tee -a $OUT/sweep.txt
}

call3() {  # the two-tile L0 refine (weights in shared memory, the next tile's operand built while
  # the tensor cores run this one's GEMM): its checks with every run on it, then in process
  # against main and against the same build without it, two rounds, the frame and the refine
  # blocks alone
  self_check check_wgp1 "wgp every run" APEX_FF_X_WGP=1 $B/ff_p40 --only 'profile,B=3,B=8,B=16,256x256,K=64/160,B=4 256x256,B=4 K=64/160' --precision fp16 --refine auto
  grep -E "^FAIL" -A4 $OUT/check_wgp1.log | head -20 | tee -a $OUT/sweep.txt
  for r in 1 2; do
    vrow ff_s38one 'profile,B=3,B=8,B=16' "main r$r" "" X=1
    vrow ff_p40 'profile,B=3,B=8,B=16' "p40 off r$r" "" X=1
    vrow ff_p40 'profile,B=3,B=8,B=16' "wgp>=2 r$r" "" APEX_FF_X_WGP=2
    vrow ff_p40 'profile,B=3,B=8,B=16' "wgp>=1 r$r" "" APEX_FF_X_WGP=1
    vrow ff_s38one 'profile,B=3,B=8,B=16' "main r$r" "--stage refines" X=1
    vrow ff_p40 'profile,B=3,B=8,B=16' "wgp>=2 r$r" "--stage refines" APEX_FF_X_WGP=2
  done
}

call4() {  # the warp-specialised persistent L0 refine (one CTA a SM of four warpgroups: two build
  # the next tiles' operands into two stages while two run the GEMM, exchange and finish): its
  # checks, then in process against main, tiles a cluster 2 / 3 / 4 / 7, two rounds
  self_check check_ws3 "ws 3 tiles" APEX_FF_X_WS=3 $B/ff_w40 --only 'B=8,B=16,B=4 256x256,B=4 K=64/160' --precision fp16 --refine auto
  grep -E "^FAIL" -A4 $OUT/check_ws3.log | head -20 | tee -a $OUT/sweep.txt
  for r in 1 2; do
    vrow ff_s38one 'profile,B=8,B=16' "main r$r" "" X=1
    for n in 2 3 4 7; do vrow ff_w40 'profile,B=8,B=16' "ws$n r$r" "" APEX_FF_X_WS=$n; done
    vrow ff_s38one 'profile,B=8,B=16' "main r$r" "--stage refines" X=1
    for n in 3 4; do vrow ff_w40 'profile,B=8,B=16' "ws$n r$r" "--stage refines" APEX_FF_X_WS=$n; done
  done
}

call5() {  # where the warp-specialised refine's time goes: Nsight Compute's full set on one B=8
  # launch of it (four tiles a cluster), as call 1 for the landed refine
  local k=ws_map_s_c128_t16
  APEX_FF_X_WS=4 timeout 200 ncu --set full --import-source no --cache-control none --clock-control none \
    --kernel-name ff_refine_$k --launch-skip 10 --launch-count 1 -o /tmp/rep_$k \
    $B/ff_w40 --bench-only --only B=8 --refine auto --precision fp16 > /tmp/ncu_$k.log 2>&1
  echo "== $k rc=$?" | tee -a $OUT/sweep.txt
  ncu --import /tmp/rep_$k.ncu-rep --page details > $OUT/ncu_details_$k.txt 2>&1
  ncu --import /tmp/rep_$k.ncu-rep --page source --csv --print-source sass > $OUT/ncu_sass_$k.csv 2>&1
  grep -E "Duration|Issue Slots Busy|No Eligible|Achieved Occupancy|Registers Per|Grid Size" \
    $OUT/ncu_details_$k.txt | tee -a $OUT/sweep.txt
}

call6() {  # the wgmma refine with its phases as functions: its checks (every shape that runs a
  # wgmma refine, fp16), then in process against main, two rounds, the frame and the refine
  # blocks alone
  self_check check_r40 "phases as functions" X=1 $B/ff_r40 --only 'profile,B=3,B=8,B=16,256x256,K=64/160,B=4 256x256,B=4 K=64/160,no split' --precision fp16 --refine auto
  grep -E "^FAIL" -A4 $OUT/check_r40.log | head -20 | tee -a $OUT/sweep.txt
  for r in 1 2; do
    vrow ff_s38one 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_r40 'profile,B=8,B=16' "functions r$r" "" X=1
    vrow ff_s38one 'profile,B=8,B=16' "main r$r" "--stage refines" X=1
    vrow ff_r40 'profile,B=8,B=16' "functions r$r" "--stage refines" X=1
  done
}

"$@"
