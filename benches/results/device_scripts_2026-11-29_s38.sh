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

"$@"
