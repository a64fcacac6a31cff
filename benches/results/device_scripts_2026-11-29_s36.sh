#!/usr/bin/env bash
# Thirty-sixth session (2026-11-29): the base pass on the copy engines at B=8.
# Usage on the device machine: bash benches/results/device_scripts_2026-11-29_s36.sh callN
# (the thirty-fifth session's next1 and next2 ran first, from device_scripts_2026-11-29_s35.sh).
# Binaries (built here at 8139e4c unless named; the experiment patches apply to 1c686ab):
#   .device/bin/ff_x36c   ff_model_gpu_check plus ff_model_ce_base_experiment_s36.patch:
#                         APEX_FF_X_CE_BASE=1 forks the background stream at the call's start:
#                         heavy = dense over every pixel (cuMemcpyDtoDAsync), detail = 0
#                         (cuMemsetD32Async), then ff_base for alpha alone; each level's refine
#                         waits for it (an event); =2 the same with the refine after the wait
#                         launched plainly (no programmatic dependency)
#   .device/host_post/apex-host  apex-host plus apex_host_post_rotation_calls_experiment_s36.patch:
#                         APEX_X_POST_CALLS=N plain calls (each then synchronised) after the
#                         rotation, before the batch's first capture
#   .device/ab/s35.so     the ff_model plugin at a82af74 (its source unchanged since)
#   .device/bin/ff_x36s   ff_model_gpu_check plus ff_model_wg_staged_finish_experiment_s36.patch
#   .device/ab/s36s.so    (the plugin, the same patch): APEX_NVRTC_DEFINES=WG_X_STAGED finishes
#                         the wgmma refine through shared memory (outputs packed in place of the
#                         base values, then 16-byte row-segment stores: t = 16 fills a tile row's
#                         32-byte sector in one instruction); WG_X_STAGED_T=16 or 8 stages that
#                         level only; WG_X_STAGED_CS stores evict-first; WG_X_CS (call 4) keeps
#                         the direct finish and makes its heavy and detail stores evict-first
#   .device/bin/ff_s36, .device/ab/s36.so, .device/host_s36/apex-host: the landed build (the
#                         wgmma finish's heavy and detail stores evict-first), call 5
# Log: benches/results/ff_model_ce_base_h200_2026-11-29_s36.txt (every call's rows).
# Calls 1 to 5 ran before self_check, host_with and host_define_ab took their repeated lines (same
# commands; the self-checks then had a 200-s limit, call 5 240).
source benches/results/device_lib.sh
source <(sed -n '/^vrow()/,/^}/p;/^timeline()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
source <(sed -n '/^host_p50s()/,/^}/p' benches/results/device_scripts_2026-11-29_s35.sh)

# apex-host's fp16 fast-path cases on the profile's map (B=1 and B=8), for --filter.
PROFILE_CASES='ff_model.infer/cuda/fp16/batch=*,*,height=128,*path=fast,tile_size_l0=16*'

host_with() {  # $1 plugin build (.device/ab/$1.so), $2 the folder of an apex-host build: both put
  # where $HOST runs them
  mkdir -p .device/host/release
  cp .device/ab/$1.so .device/host/release/libapex_plugin_ff_model.so
  cp $2/apex-host .device/host/release/apex-host
}

host_define_ab() {  # $1 a label, $2 an APEX_NVRTC_DEFINES assignment: apex-host on PROFILE_CASES
  # without it and with it, alternating, two rounds
  for r in 1 2; do
    step host_main_r$r 200 $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hm
    host_p50s /tmp/hm/summary.json "apex-host main r$r"
    step host_$1_r$r 200 env $2 $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hs
    host_p50s /tmp/hs/summary.json "apex-host $1 r$r"
  done
}

self_check() {  # $1 step name, $2 label, then the command (env assignments first): its ok and
  # FAIL counts into the sweep
  local name=$1 label=$2; shift 2
  step $name 240 env "$@"
  echo "$label: ok $(grep -cE '^ok' $OUT/$name.log) FAIL $(grep -cE '^FAIL' $OUT/$name.log)" | tee -a $OUT/sweep.txt
}

call1() {  # the base on the copy engines: self-checks, then two rounds in both orders, then B=8's
  # timeline
  for ce in 1 2; do
    self_check check_ce$ce "ce $ce" APEX_FF_X_CE_BASE=$ce $B/ff_x36c --only 'profile,B=8,B=16,tiles 32/16,256x256,B=3,nothing selected' --precision fp16,fp32 --refine auto
  done
  for r in 1 2; do
    vrow ff_x36c 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x36c 'profile,B=8,B=16' "ce 1 r$r" "" APEX_FF_X_CE_BASE=1
    vrow ff_x36c 'profile,B=8,B=16' "ce 2 r$r" "" APEX_FF_X_CE_BASE=2
    vrow ff_x36c 'profile,B=8,B=16' "main, host order r$r" "--order host" X=1
    vrow ff_x36c 'profile,B=8,B=16' "ce 1, host order r$r" "--order host" APEX_FF_X_CE_BASE=1
  done
  timeline ce1 ff_x36c B=8 APEX_FF_X_CE_BASE=1
}

call2() {  # apex-host with 0, 1 or 4 plain calls after the rotation (the thirty-fifth
  # session's next1: one plain call between the rotation and the capture took the bench in
  # apex-host's order from 46.2 / 108.0 to 42.6 / 104.9), two rounds, with the in-process bench
  host_with s35 .device/host_post
  for r in 1 2; do
    for n in 0 1 4; do
      step host_post${n}_r$r 200 env APEX_X_POST_CALLS=$n $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hp
      host_p50s /tmp/hp/summary.json "apex-host post $n r$r"
    done
    vrow ff_x36c 'profile,B=8' "bench r$r" "" X=1
    vrow ff_x36c 'profile,B=8' "bench, host order r$r" "--order host" X=1
  done
}

call3() {  # the staged finish: self-checks, then the bench (two rounds) and apex-host (two rounds)
  local st='APEX_NVRTC_DEFINES=WG_X_STAGED'
  self_check check_staged staged $st $B/ff_x36s --only 'profile,B=8,B=16,tiles 32/16,256x256,B=3,B=4 256x256' --precision fp16 --refine auto
  for r in 1 2; do
    vrow ff_x36s 'profile,B=8,B=16,256x256' "main r$r" "" X=1
    vrow ff_x36s 'profile,B=8,B=16,256x256' "staged r$r" "" $st
    vrow ff_x36s 'profile,B=8,B=16,256x256' "staged t16 r$r" "" "APEX_NVRTC_DEFINES=WG_X_STAGED WG_X_STAGED_T=16"
    vrow ff_x36s 'profile,B=8,B=16,256x256' "staged t8 r$r" "" "APEX_NVRTC_DEFINES=WG_X_STAGED WG_X_STAGED_T=8"
    vrow ff_x36s 'profile,B=8,B=16,256x256' "staged cs r$r" "" "APEX_NVRTC_DEFINES=WG_X_STAGED WG_X_STAGED_CS"
  done
  host_with s36s .device/host_post
  host_define_ab staged $st
}

call4() {  # the direct finish with evict-first stores (call 3: the staged finish lost, but its
  # evict-first stores took the profile 0.5 us under main): self-check, bench and apex-host
  local cs='APEX_NVRTC_DEFINES=WG_X_CS'
  self_check check_cs cs $cs $B/ff_x36s --only 'profile,B=8,tiles 32/16,256x256' --precision fp16 --refine auto
  for r in 1 2; do
    vrow ff_x36s 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x36s 'profile,B=8,B=16' "cs r$r" "" $cs
  done
  host_with s36s .device/host_post
  host_define_ab cs $cs
}

call5() {  # the landed build: every fast shape's fp16 self-check under auto, then apex-host's
  # ff_model suite (seven cases)
  self_check check_s36 "s36 fp16 auto" X=1 $B/ff_s36 --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,B=4 256x256,B=4 K=64/160,B=4 tiles 32/16,C=16 36x60 tiles 6/3,nothing selected,no split' --precision fp16 --refine auto
  host_with s36 .device/host_s36
  host_ab s36 s36
  cp /tmp/ab_s36/summary.json $OUT/ff_model_suite_s36.json
  cat $OUT/ab.txt
}

next1() {  # prepared here, run as the thirty-seventh session's call 1 (its log:
  # ff_model_l0map_sets_h200_2026-11-29_s37.txt; FF_X_CS_ALL landed): L2 hints beyond call 4's. Binaries from
  # build_next: .device/bin/ff_x37c and .device/ab/x37c.so (HEAD plus
  # ff_model_l2_hints_experiment_s36.patch), switched by APEX_NVRTC_DEFINES:
  #   FF_X_CS_ALL   every other refine's heavy and detail stores evict-first (the lean, fused and
  #                 split refines that bf16 and fp32 run), as call 4 made the wgmma refine's
  #   WG_X_LDCS     the wgmma refine's tile loads evict-first (their last use: the map scan or
  #                 the pack read them before)
  #   FF_X_SCAN_EL  the map scan's tile loads under an L2 evict_last policy (createpolicy), so
  #                 that the refine after it finds them in L2
  # Self-checks, then the bench and apex-host, two rounds each.
  local d=APEX_NVRTC_DEFINES
  self_check check_csall "cs all" $d=FF_X_CS_ALL $B/ff_x37c --only 'profile,tiles 32/16,256x256,B=8' --precision bf16,fp32 --refine auto
  self_check check_csall_paths "cs all, paths" $d=FF_X_CS_ALL $B/ff_x37c --only 'profile,B=8,tiles 32/16' --refine fused,lean,split
  self_check check_loads "ldcs + scan el" "$d=WG_X_LDCS FF_X_SCAN_EL" $B/ff_x37c --only 'profile,B=8,B=16,tiles 32/16,256x256,B=3' --precision fp16 --refine auto
  for r in 1 2; do
    for v in X=1 $d=FF_X_CS_ALL; do
      timeout 120 env $v $B/ff_x37c --bench-only --only 'profile,B=8,256x256,tiles 32/16' --precision bf16,fp32 --refine auto > /tmp/x.log 2>&1
      echo "${v} r$r rc=$? (bf16 rows, then fp32) $(grep -E '^(profile|B=[0-9]+|256x256|tiles) ' /tmp/x.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
    done
    vrow ff_x37c 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x37c 'profile,B=8,B=16' "ldcs r$r" "" $d=WG_X_LDCS
    vrow ff_x37c 'profile,B=8,B=16' "scan el r$r" "" $d=FF_X_SCAN_EL
    vrow ff_x37c 'profile,B=8,B=16' "both r$r" "" "$d=WG_X_LDCS FF_X_SCAN_EL"
  done
  host_with x37c .device/host_s36
  for r in 1 2; do
    host_ab main_r$r x37c
    APEX_NVRTC_DEFINES=FF_X_CS_ALL host_ab cs_r$r x37c
    APEX_NVRTC_DEFINES="WG_X_LDCS FF_X_SCAN_EL" host_ab loads_r$r x37c
  done
  cat $OUT/ab.txt
}

build_next() {  # on the build machine, not the device: next1's binaries from f5d72c1 plus its patch
  # in a worktree of its own (then carry .device/bin/ff_x37c, .device/ab/x37c.so and
  # .device/host_s36/apex-host)
  build_patched f5d72c1 benches/results/ff_model_l2_hints_experiment_s36.patch x37c host_s36
}

"$@"
