#!/usr/bin/env bash
# Thirty-eighth session's GPU calls (issue 13, ff_model B=8). Run from the repository root on the
# device machine: `bash benches/results/device_scripts_2026-11-29_s38.sh callN`, output under $OUT.
# Binaries (built here):
#   .device/bin/ff_x38s, .device/ab/x38s.so: 99ddb89 plus ff_model_scan_standin_experiment_s38.patch:
#                         APEX_FF_X_SCAN_STANDIN=L0,L1 runs the plain ff_film_scan on the stale
#                         token buffer in place of a pack-free level's map scan (outputs wrong,
#                         timing only): what the map scans cost B=8 beyond a scan of ready means
#   .device/bin/ff_x38b, .device/ab/x38b.so: 99ddb89 plus ff_model_scan_standin_base_bpb_experiment_s38.patch:
#                         the stand-in above and APEX_FF_X_BASE_BPB=N, ff_base's bands a block (16:
#                         64 blocks at B=8)
#   .device/bin/ff_x38c, .device/ab/x38c.so: 99ddb89 plus ff_model_base_wide_experiment_s38.patch:
#                         x38b's switches and APEX_FF_X_BASE_WIDE=N, ff_base as N 1024-thread
#                         blocks (ff_base_wide, one a SM: its SMs take no refine CTA)
#   .device/bin/ff_x38d, .device/ab/x38d.so: the same patch as revised after call 3 (x38c's wide
#                         blocks ran one band at a time, three quarters of their threads idle at
#                         the profile's width): each 256-thread quarter of a block takes a band
#   .device/bin/ff_x38e, .device/ab/x38e.so: 775874d plus ff_model_no_exchange_standin_experiment_s38.patch:
#                         APEX_NVRTC_DEFINES=WG_X_NO_EXCHANGE, the wgmma refine without its cluster's
#                         GroupNorm exchange (timing only), APEX_FF_X_NO_CLUSTER=1 also without clusters
#   .device/bin/ff_x38f, .device/ab/x38f.so: 93a1d2c plus ff_model_film_tokens_experiment_s38.patch:
#                         APEX_FF_X_FILM_TOKENS=N with APEX_NVRTC_DEFINES=FILM_TOKENS=N, the FiLM
#                         linears' frames a block (4: a run's three in one block)
#   .device/bin/ff_s38ex (build_next, for next1, not run): main plus
#                         ff_model_film_exact_frames_experiment_s38.patch (the _one patch, and
#                         APEX_FF_X_FILM_EXACT=1: a FiLM linear block takes exactly its run's frames)
#   .device/bin/ff_s38hold (build_next, for next1, not run): main plus ff_model_wg_acc_hold_s38.patch
#                         (the wgmma refine's accumulators pinned before its first wgmma)
#   .device/bin/ff_s38one (build_next, for next1, not run): main plus
#                         ff_model_film_one_frame_s38.patch, the FiLM linears' _one entry points
#                         (one frame, one tile a block) for a call of one frame; .device/bin/ff_s37
#                         the thirty-seventh session's landed build (the same kernels as main)
#   .device/bin/ff_x38a, .device/ab/x38a.so: f7a2747 plus ff_model_base_in_tail_experiment_s37.patch
#                         (the thirty-seventh session's next1: the base pass in the call's tail)
source benches/results/device_lib.sh
source <(sed -n '/^vrow()/,/^}/p;/^timeline()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
source <(sed -n '/^host_p50s()/,/^}/p' benches/results/device_scripts_2026-11-29_s35.sh)
source <(sed -n '/^PROFILE_CASES=/p;/^host_with()/,/^}/p;/^self_check()/,/^}/p' \
  benches/results/device_scripts_2026-11-29_s36.sh)

call1() {  # the map scans' stand-in (two rounds), then the base pass in the tail (next1's rows)
  local co=APEX_FF_X_CARVEOUT_BASE=100 v2='APEX_NVRTC_DEFINES=FF_X_BASE_VECS=2 FF_X_BASE_MINB=2'
  for r in 1 2; do
    vrow ff_x38s 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x38s 'profile,B=8,B=16' "standin L0 r$r" "" APEX_FF_X_SCAN_STANDIN=L0
    vrow ff_x38s 'profile,B=8,B=16' "standin L1 r$r" "" APEX_FF_X_SCAN_STANDIN=L1
    vrow ff_x38s 'profile,B=8,B=16' "standin L0L1 r$r" "" APEX_FF_X_SCAN_STANDIN=L0,L1
  done
  timeline standin ff_x38s B=8 APEX_FF_X_SCAN_STANDIN=L0,L1
  for r in 1 2; do
    vrow ff_x38a 'profile,B=8,B=16' "x38a main r$r" "" X=1
    vrow ff_x38a 'profile,B=8,B=16' "tail 64 co r$r" "" APEX_FF_X_BASE_SPLIT=0,,64 $co
    vrow ff_x38a 'profile,B=8,B=16' "tail 64 co v2 r$r" "" APEX_FF_X_BASE_SPLIT=0,,64 $co "$v2"
    vrow ff_x38a 'profile,B=8,B=16' "tail 128 co v2 r$r" "" APEX_FF_X_BASE_SPLIT=0,,128 $co "$v2"
  done
}

call2() {  # the stand-in with ff_base on more blocks (the base in the head, beside FiLM), two rounds
  local s=APEX_FF_X_SCAN_STANDIN=L0,L1
  for r in 1 2; do
    vrow ff_x38b 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x38b 'profile,B=8,B=16' "standin bpb16 r$r" "" $s
    for n in 8 4 2 1; do vrow ff_x38b 'profile,B=8,B=16' "standin bpb$n r$r" "" $s APEX_FF_X_BASE_BPB=$n; done
    for n in 4 2; do vrow ff_x38b 'profile,B=8,B=16' "bpb$n r$r" "" APEX_FF_X_BASE_BPB=$n; done
  done
  timeline standin_bpb2 ff_x38b B=8 $s APEX_FF_X_BASE_BPB=2
}

call3() {  # ff_base on few SMs (1024-thread blocks), with and without the stand-in, two rounds
  local s=APEX_FF_X_SCAN_STANDIN=L0,L1
  for r in 1 2; do
    vrow ff_x38c 'profile,B=8,B=16' "main r$r" "" X=1
    for n in 12 16 24 32 48; do vrow ff_x38c 'profile,B=8,B=16' "wide$n r$r" "" APEX_FF_X_BASE_WIDE=$n; done
    for n in 16 32; do vrow ff_x38c 'profile,B=8,B=16' "standin wide$n r$r" "" $s APEX_FF_X_BASE_WIDE=$n; done
  done
  timeline wide24 ff_x38c B=8 APEX_FF_X_BASE_WIDE=24
}

call4() {  # ff_base_wide with every thread busy, with and without the stand-in, two rounds
  local s=APEX_FF_X_SCAN_STANDIN=L0,L1
  for r in 1 2; do
    vrow ff_x38d 'profile,B=8,B=16' "main r$r" "" X=1
    for n in 8 12 16 24; do vrow ff_x38d 'profile,B=8,B=16' "wide$n r$r" "" APEX_FF_X_BASE_WIDE=$n; done
    for n in 12 16; do vrow ff_x38d 'profile,B=8,B=16' "standin wide$n r$r" "" $s APEX_FF_X_BASE_WIDE=$n; done
  done
  timeline wide16 ff_x38d B=8 APEX_FF_X_BASE_WIDE=16
  self_check check_wide "wide16 checks" APEX_FF_X_BASE_WIDE=16 $B/ff_x38d --only 'profile,B=8,B=16,256x256,tiles 32/16,B=4 256x256' --precision fp16,fp32 --refine auto
}

call5() {  # what the wgmma refine's cluster exchange costs at B=8 (a stand-in), two rounds
  local nox=APEX_NVRTC_DEFINES=WG_X_NO_EXCHANGE
  for r in 1 2; do
    for extra in "" "--stage refines"; do
      vrow ff_x38e 'profile,B=8,B=16' "main r$r" "$extra" X=1
      vrow ff_x38e 'profile,B=8,B=16' "no exchange r$r" "$extra" $nox
      vrow ff_x38e 'profile,B=8,B=16' "no exchange, no cluster r$r" "$extra" $nox APEX_FF_X_NO_CLUSTER=1
    done
  done
  timeline nox_nocluster ff_x38e B=8 'APEX_NVRTC_DEFINES=FF_TIMELINE FF_TIMELINE_CALL=300 WG_X_NO_EXCHANGE' APEX_FF_X_NO_CLUSTER=1
}

call6() {  # the FiLM linears one or two frames a block (a run's chain shorter, more blocks), two rounds
  self_check check_ft1 "film tokens 1 checks" APEX_FF_X_FILM_TOKENS=1 APEX_NVRTC_DEFINES=FILM_TOKENS=1 $B/ff_x38f --only 'profile,B=3,B=8,B=16,B=4 256x256' --precision fp16,fp32 --refine auto
  for r in 1 2; do
    vrow ff_x38f 'profile,B=8,B=16' "main r$r" "" X=1
    for n in 1 2; do vrow ff_x38f 'profile,B=8,B=16' "film tokens $n r$r" "" APEX_FF_X_FILM_TOKENS=$n APEX_NVRTC_DEFINES=FILM_TOKENS=$n; done
  done
}

next1() {  # prepared for the next session, not run (this session's device time was spent): the
  # FiLM linears' _one entry points, the exact-frames experiment on top of them, and the wgmma
  # refine's pinned accumulators. Binaries from build_next (its comment lists them);
  # .device/bin/ff_s37 and .device/ab/s37.so the thirty-seventh session's landed build (the same
  # kernels as main). ~7 min.
  checks $B/ff_s38one auto
  self_check check_hold "acc hold" $B/ff_s38hold --only 'profile,B=8,tiles 32/16,256x256' --precision fp16 --refine auto
  self_check check_exact "exact frames" APEX_FF_X_FILM_EXACT=1 $B/ff_s38ex --only 'profile,B=3,B=4,B=4 256x256,B=8,B=16' --precision fp16,bf16,fp32 --refine auto
  for r in 1 2; do
    vrow ff_s37 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_s38one 'profile,B=8,B=16' "one r$r" "" X=1
    vrow ff_s38ex 'profile,B=8,B=16' "one + exact r$r" "" APEX_FF_X_FILM_EXACT=1
    vrow ff_s38hold 'profile,B=8,B=16' "acc hold r$r" "" X=1
    vrow ff_s38hold 'profile,B=8,B=16' "acc hold refines r$r" "--stage refines" X=1
    vrow ff_s37 'profile,B=8,B=16' "main refines r$r" "--stage refines" X=1
  done
  host_with s37 .device/host_s38
  for r in 1 2; do host_ab main_r$r s37; host_ab one_r$r s38one; done
  ab_table | tee -a $OUT/sweep.txt
}

build_next() {  # on the build machine, not the device: next1's binaries from main's tip plus its
  # patches, each in a worktree of its own (then carry .device/bin/ff_s38one, .device/bin/ff_s38ex,
  # .device/bin/ff_s38hold, .device/bin/ff_s37, .device/ab/s37.so, .device/ab/s38one.so,
  # .device/host_s38/apex-host)
  build_patched HEAD benches/results/ff_model_film_exact_frames_experiment_s38.patch s38ex host_s38
  build_patched HEAD benches/results/ff_model_film_one_frame_s38.patch s38one host_s38
  build_patched HEAD benches/results/ff_model_wg_acc_hold_s38.patch s38hold host_s38
}

"$@"
