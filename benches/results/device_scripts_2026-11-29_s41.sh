#!/usr/bin/env bash
# Forty-first session's GPU calls (issue 13, ff_model). Run from the repository root on the device
# machine: `bash benches/results/device_scripts_2026-11-29_s41.sh callN`, output under $OUT.
# Binaries: .device/bin/ff_r40: main before this session (0c8208f launches the same);
# .device/bin/ff_s41, .device/ab/s41.so, .device/host_s41/apex-host: the working tree with the
# split-first L0 refine (a pack-free L0 level refines the tiles ff_select split on the run's
# stream and the others on a filler stream beside it, so that the run's L1 level waits only for
# the tiles it reads); APEX_FF_X_SPLIT_FIRST=0 launches the level as one grid again.
# .device/bin/ff_s41p, .device/ab/s41p.so, .device/host_s41/apex-host (rebuilt): the same plus
# scheduling priorities (LaunchEx::priority; every graph instantiated with USE_NODE_PRIORITY):
# APEX_FF_X_PRIO_SPLIT=P the split part's launch at P, APEX_FF_X_PRIO_L1=P every L1 launch at P.
# .device/bin/ff_s41c: the same plus APEX_FF_X_CE_BASE=1: heavy = dense and detail = 0 by the copy
# engines (cuMemcpyDtoDAsync per run before its L0 refine, cuMemsetD8Async before the L1
# refines) on the background stream, ff_base only gating (alpha).
# .device/bin/ff_s41m: 0c8208f plus two switches (ff_model_wg3_standin_experiment_s41.patch):
# APEX_FF_X_SCAN_CH_L1=N with APEX_NVRTC_DEFINES="SCAN_MAP_CHANNELS_L1=N": L1's map scan N
# channels a block (L0 keeps 4); APEX_FF_X_WG3=1 with APEX_NVRTC_DEFINES="WG3 WG3_SINGLE": L0's
# t = 16 map refine as ff_refine_wg3_map_s_c128_t16, a timing stand-in (outputs wrong) of three
# CTAs a SM (77 registers, fp16 centre rows, a Gram-statistics GEMM stood in by the weights,
# the pointwise GEMM in two 32-pixel halves finished at once).
# .device/bin/ff_s41t: 0c8208f plus APEX_FF_X_L1_AS_T16=1 (ff_model_l1_as_t16_standin_experiment_s41.patch): a
# timing stand-in (outputs wrong) of L1's refine over its split parents' 16x16 areas, the four
# 8x8 children as one t = 16 map refine (f32 source, heavy and detail; clusters of four, two CTAs
# a SM, 16-pixel rows) in place of 32 one-CTA-a-SM t = 8 refines a frame.
source benches/results/device_lib.sh
source <(sed -n '/^vrow()/,/^}/p;/^timeline()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
source <(sed -n '/^host_with()/,/^}/p;/^self_check()/,/^}/p' benches/results/device_scripts_2026-11-29_s36.sh)
source <(sed -n '/^host_p50s()/,/^}/p' benches/results/device_scripts_2026-11-29_s35.sh)
PROFILE_CASES='ff_model.infer/cuda/fp16/batch=*,*,height=128,*path=fast,tile_size_l0=16*'

call1() {  # split-first: its checks (every fp16 shape with several runs, and the one-run ones
  # beside them), in process against main and against itself switched off, two rounds, the frame
  # and the refine blocks alone; one traced B=8 call; apex-host (fp16 profile and B=8), two rounds
  self_check check_s41 "split first" X=1 $B/ff_s41 --only 'profile,B=3,B=8,B=16,256x256,K=64/160,B=4 256x256,B=4 K=64/160,B=4 tiles 32/16,no split,nothing selected' --precision fp16 --refine auto
  grep -E "^FAIL" -A4 $OUT/check_s41.log | head -20 | tee -a $OUT/sweep.txt
  for r in 1 2; do
    vrow ff_r40 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_s41 'profile,B=8,B=16' "split-first r$r" "" X=1
    vrow ff_s41 'profile,B=8,B=16' "s41 off r$r" "" APEX_FF_X_SPLIT_FIRST=0
    vrow ff_r40 'profile,B=8,B=16' "main r$r" "--stage refines" X=1
    vrow ff_s41 'profile,B=8,B=16' "split-first r$r" "--stage refines" X=1
  done
  timeline b8 ff_s41 B=8 X=1; cp /tmp/tl.log $OUT/tl_b8.log
  host_with s41 .device/host_s41
  for r in 1 2; do
    for v in APEX_FF_X_SPLIT_FIRST=0 X=1; do
      step host_x 200 env $v $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hx
      host_p50s /tmp/hx/summary.json "apex-host $v r$r"
    done
  done
}

call2() {  # call 1: split-first alone lost (B=8 +3.6-4 us): its split CTAs waited behind the
  # rest's, and run 0's L1 scan started at 66.5 us. The critical path at a greater priority:
  # checks, then in process two rounds, and the timelines of two
  self_check check_s41p "split first, priorities" APEX_FF_X_PRIO_SPLIT=-1 APEX_FF_X_PRIO_L1=-1 $B/ff_s41p --only 'B=3,B=8,B=16,B=4 K=64/160' --precision fp16 --refine auto
  for r in 1 2; do
    vrow ff_r40 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_s41p 'profile,B=8,B=16' "off r$r" "" APEX_FF_X_SPLIT_FIRST=0
    vrow ff_s41p 'profile,B=8,B=16' "off l1-1 r$r" "" APEX_FF_X_SPLIT_FIRST=0 APEX_FF_X_PRIO_L1=-1
    vrow ff_s41p 'profile,B=8,B=16' "sf r$r" "" X=1
    vrow ff_s41p 'profile,B=8,B=16' "sf split-1 r$r" "" APEX_FF_X_PRIO_SPLIT=-1
    vrow ff_s41p 'profile,B=8,B=16' "sf split-1 l1-1 r$r" "" APEX_FF_X_PRIO_SPLIT=-1 APEX_FF_X_PRIO_L1=-1
    vrow ff_s41p 'profile,B=8,B=16' "sf split-2 l1-1 r$r" "" APEX_FF_X_PRIO_SPLIT=-2 APEX_FF_X_PRIO_L1=-1
  done
  timeline sf_s1_l1 ff_s41p B=8 APEX_FF_X_PRIO_SPLIT=-1 APEX_FF_X_PRIO_L1=-1; cp /tmp/tl.log $OUT/tl_sf_s1_l1.log
  timeline sf_s1 ff_s41p B=8 APEX_FF_X_PRIO_SPLIT=-1; cp /tmp/tl.log $OUT/tl_sf_s1.log
}

call3() {  # call 2: split-first with priorities 105.2-105.6 against main's 103.6-103.7; its
  # timeline ends in run 2's rest refines: the call is bound by the SMs' work, not the critical
  # path. The base pass (64 blocks, ~45 us each, SMs no t = 16 refine CTA shares) off the SMs:
  # checks in every storage, in process two rounds, one timeline. (Found after it ran: the
  # thirty-sixth session's call 1 had measured the same, +14-16 us at B=8.)
  self_check check_s41c "copy-engine base" APEX_FF_X_CE_BASE=1 $B/ff_s41c --only 'profile,B=3,B=8,B=16,K=64/160,B=4 256x256,nothing selected' --refine auto
  grep -E "^FAIL" -A4 $OUT/check_s41c.log | head -20 | tee -a $OUT/sweep.txt
  for r in 1 2; do
    vrow ff_r40 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_s41c 'profile,B=8,B=16' "ce r$r" "" APEX_FF_X_SPLIT_FIRST=0 APEX_FF_X_CE_BASE=1
    vrow ff_s41c 'profile,B=8,B=16' "ce sf r$r" "" APEX_FF_X_CE_BASE=1
    vrow ff_s41c 'profile,B=8,B=16' "ce sf prio r$r" "" APEX_FF_X_CE_BASE=1 APEX_FF_X_PRIO_SPLIT=-1 APEX_FF_X_PRIO_L1=-1
  done
  timeline ce ff_s41c B=8 APEX_FF_X_SPLIT_FIRST=0 APEX_FF_X_CE_BASE=1; cp /tmp/tl.log $OUT/tl_ce.log
}
# call3's first run (its log kept as call 3a): every multi-frame case failed (CUDA_ERROR_INVALID_VALUE): a
# run's copy took problem.map_len() (the whole batch's elements) as a frame's; fixed, run again.

call4() {  # B=8-only SM work: L1's map scan in fewer, fuller blocks (checks, in process two rounds);
  # three refine chains a SM (the WG3 stand-in: frame and refine blocks alone, two rounds; one
  # timeline)
  self_check check_ch8 "L1 scan 8 channels" APEX_FF_X_SCAN_CH_L1=8 APEX_NVRTC_DEFINES=SCAN_MAP_CHANNELS_L1=8 $B/ff_s41m --only 'B=8,B=16,B=4 K=64/160' --precision fp16 --refine auto
  for r in 1 2; do
    vrow ff_r40 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_s41m 'profile,B=8,B=16' "l1 scan ch8 r$r" "" APEX_FF_X_SCAN_CH_L1=8 APEX_NVRTC_DEFINES=SCAN_MAP_CHANNELS_L1=8
    vrow ff_s41m 'profile,B=8,B=16' "l1 scan ch2 r$r" "" APEX_FF_X_SCAN_CH_L1=2 APEX_NVRTC_DEFINES=SCAN_MAP_CHANNELS_L1=2
    vrow ff_s41m 'profile,B=8,B=16' "wg3 r$r" "" APEX_FF_X_WG3=1 "APEX_NVRTC_DEFINES=WG3 WG3_SINGLE"
    vrow ff_r40 'profile,B=8,B=16' "main r$r" "--stage refines" X=1
    vrow ff_s41m 'profile,B=8,B=16' "wg3 r$r" "--stage refines" APEX_FF_X_WG3=1 "APEX_NVRTC_DEFINES=WG3 WG3_SINGLE"
  done
  timeline wg3 ff_s41m B=8 APEX_FF_X_WG3=1 "APEX_NVRTC_DEFINES=FF_TIMELINE FF_TIMELINE_CALL=300 WG3 WG3_SINGLE"; cp /tmp/tl.log $OUT/tl_wg3.log
}

call5() {  # call 4's control: the same build with no switch (its kernels are main's), in process two rounds
  for r in 1 2; do
    vrow ff_r40 'profile,B=8' "main r$r" "" X=1
    vrow ff_s41m 'profile,B=8' "s41m plain r$r" "" X=1
    vrow ff_s41m 'profile,B=8' "l1 scan ch8 r$r" "" APEX_FF_X_SCAN_CH_L1=8 APEX_NVRTC_DEFINES=SCAN_MAP_CHANNELS_L1=8
    vrow ff_s41m 'profile,B=8' "l1 scan ch4 define r$r" "" APEX_NVRTC_DEFINES=SCAN_MAP_CHANNELS_L1=4
  done
}

call6() {  # L1 as its parents' 16x16 areas (the stand-in): in process two rounds, the frame and the
  # refine blocks alone; one timeline
  for r in 1 2; do
    vrow ff_r40 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_s41t 'profile,B=8,B=16' "l1 as t16 r$r" "" APEX_FF_X_L1_AS_T16=1
    vrow ff_r40 'profile,B=8,B=16' "main r$r" "--stage refines" X=1
    vrow ff_s41t 'profile,B=8,B=16' "l1 as t16 r$r" "--stage refines" APEX_FF_X_L1_AS_T16=1
  done
  timeline l1t16 ff_s41t B=8 APEX_FF_X_L1_AS_T16=1; cp /tmp/tl.log $OUT/tl_l1t16.log
}

"$@"
