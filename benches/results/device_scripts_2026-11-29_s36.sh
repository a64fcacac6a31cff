#!/usr/bin/env bash
# Thirty-sixth session (2026-11-29): the base pass on the copy engines at B=8.
# Usage on the device machine: bash benches/results/device_scripts_2026-11-29_s36.sh callN
# (the thirty-fifth session's next1 and next2 ran first, from device_scripts_2026-11-29_s35.sh).
# Binaries (built here at 8139e4c unless named):
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
# Log: benches/results/ff_model_ce_base_h200_2026-11-29_s36.txt (every call's rows).
source benches/results/device_lib.sh
source <(sed -n '/^vrow()/,/^}/p;/^timeline()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)

call1() {  # the base on the copy engines: self-checks, then two rounds in both orders, then B=8's
  # timeline
  for ce in 1 2; do
    step check_ce$ce 200 env APEX_FF_X_CE_BASE=$ce $B/ff_x36c --only 'profile,B=8,B=16,tiles 32/16,256x256,B=3,nothing selected' --precision fp16,fp32 --refine auto
    echo "ce $ce: ok $(grep -cE '^ok' $OUT/check_ce$ce.log) FAIL $(grep -cE '^FAIL' $OUT/check_ce$ce.log)" | tee -a $OUT/sweep.txt
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
  source <(sed -n '/^host_p50s()/,/^}/p' benches/results/device_scripts_2026-11-29_s35.sh)
  local filter='ff_model.infer/cuda/fp16/batch=*,*,height=128,*path=fast,tile_size_l0=16*'
  mkdir -p .device/host/release
  cp .device/ab/s35.so .device/host/release/libapex_plugin_ff_model.so
  cp .device/host_post/apex-host .device/host/release/apex-host
  for r in 1 2; do
    for n in 0 1 4; do
      step host_post${n}_r$r 200 env APEX_X_POST_CALLS=$n $HOST run --no-build --backends cuda --filter "$filter" --output-dir /tmp/hp
      host_p50s /tmp/hp/summary.json "apex-host post $n r$r"
    done
    vrow ff_x36c 'profile,B=8' "bench r$r" "" X=1
    vrow ff_x36c 'profile,B=8' "bench, host order r$r" "--order host" X=1
  done
}

"$@"
