#!/usr/bin/env bash
# Thirty-second session (2026-11-29): a pack-free L0 level's tile means beside the selection.
# Usage on the device machine: bash benches/results/device_scripts_2026-11-29_s32.sh callN
# Binaries in .device/bin (ff_model_gpu_check builds):
#   ff_s31  main before this session (243f28a's kernels)
#   ff_s32  (renamed ff_s32b after call 3) ff_tile_means_* on an early stream beside ff_select, ff_film_scan_means gathering the
#           L0 tokens from them (pack-free levels only: B > 3 in fp16 on sm_90). Call 1 ran its
#           first version (a block a channel plane, enqueued before the selection); call 2 the
#           second (four planes a block, enqueued after the selection), call 3 the third (a
#           warp's loads whole 128-column rows of a band, two bands in flight).
#   ff_s32c the means blocks in ff_select's launch (ff_select_means_*: the selection's B blocks
#           first, then the means'), no early stream
#   ff_s32m main's kernels with the gpu_check's two new shapes (B=4 256x256, B=4 K=64/160)
#   ff_x32  ff_s32m plus ff_model_wg_upper_bounds_experiment_s32.patch: timing-only stand-ins in
#           the wgmma refine, each compiled in by APEX_NVRTC_DEFINES (outputs wrong, no checks):
#           WG_X_NOWAIT  a t = 16 CTA normalises by its own chunk's statistics (no cluster
#                        exchange, no wait for the tile's other CTAs)
#           WG_X_NOLO    the GEMM without the operand's lo products (half the tensor work)
source benches/results/device_lib.sh

timeline() {  # $1 label, $2 binary, $3 shape: one traced call's launches and the SMs' residency
  APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=300" $B/$2 --bench-only --only "$3" --precision fp16 > /tmp/tl.log 2>&1
  echo "== timeline $1 $3 rc=$?" | tee -a $OUT/sweep.txt
  grep -E '^(profile|B=[0-9]+) ' /tmp/tl.log | tee -a $OUT/sweep.txt
  python3 benches/probes/ff_timeline.py /tmp/tl.log | tee -a $OUT/sweep.txt
}

call1() {  # the self-check of ff_s32, main and it alternating in process, then its B=8 timeline
  check_auto s32 300 $B/ff_s32 'profile,B=3,B=4,B=8,B=16,B=4 256x256,B=4 K=64/160,tiles 32/16,256x256'
  bench_ab 3 'profile,B=8' ff_s31:auto ff_s32:auto | tee -a $OUT/sweep.txt
  timeline s32 ff_s32 B=8
}

call2() {  # the second version: self-check, main and it alternating, timelines of B=8 and B=16
  check_auto s32 300 $B/ff_s32 'profile,B=4,B=8,B=16,B=4 256x256,B=4 K=64/160'
  bench_ab 3 'profile,B=8,B=16' ff_s31:auto ff_s32:auto | tee -a $OUT/sweep.txt
  timeline s32 ff_s32 B=8
}

call3() {  # the third version: self-check, main and it alternating, its B=8 timeline
  check_auto s32 240 $B/ff_s32 'B=8,B=16,B=4 256x256,B=4 K=64/160'
  bench_ab 3 'profile,B=8' ff_s31:auto ff_s32:auto | tee -a $OUT/sweep.txt
  timeline s32 ff_s32 B=8
}

call4() {  # ff_s32c: fp16 self-check, main, ff_s32b and it alternating, its B=8 timeline
  step ff_check_s32c 200 $B/ff_s32c --only 'profile,B=8,B=16,B=4 256x256,B=4 K=64/160' --precision fp16 --refine auto
  echo "s32c ok: $(grep -cE '^ok' $OUT/ff_check_s32c.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_s32c.log)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/ff_check_s32c.log | head -20 | tee -a $OUT/sweep.txt; rm -f $OUT/ff_check_s32c.log
  bench_ab 3 'profile,B=8' ff_s31:auto ff_s32b:auto ff_s32c:auto | tee -a $OUT/sweep.txt
  timeline s32c ff_s32c B=8
}

call5() {  # main's kernels on the two new check shapes (every storage); B=16 of main and ff_s32c
  check_auto s32m 200 $B/ff_s32m 'B=4 256x256,B=4 K=64/160'
  bench_ab 2 'B=16' ff_s32m:auto ff_s32c:auto | tee -a $OUT/sweep.txt
}

call6() {  # upper bounds: what the cluster wait and the lo products cost the frame, in process
  for r in 1 2; do
    for d in none WG_X_NOWAIT WG_X_NOLO "WG_X_NOWAIT WG_X_NOLO"; do
      e=(); [ "$d" = none ] || e=(APEX_NVRTC_DEFINES="$d")
      env "${e[@]}" $B/ff_x32 --bench-only --only 'profile,B=8' --precision fp16 --refine auto > /tmp/v.log 2>&1
      echo "${d// /+} r$r rc=$? $(grep -E '^(profile|B=8) ' /tmp/v.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
    done
  done
}

"$@"
