#!/usr/bin/env bash
# Twenty-seventh session (2026-11-28): the throughput refine ff_refine_stream_* (fp16; one CTA a
# SM for a whole level, the weights in shared memory, the next item's rows in flight).
# Usage on the device machine: bash benches/results/device_scripts_2026-11-28_s27.sh callN
# Binaries in .device/bin: ff_s1, ff_s2, ff_s3, three versions of the experiment build (ff_s3 is
# main 3a854e2 with ff_model_stream_refine_experiment_s27.patch); ff_skip, main with
# ff_model_stage_skip_experiment_s27.patch.
source benches/results/device_lib.sh
SHAPES='profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'

call1() {  # correctness of stream (fp16), then in-process: the frame and the refines alone
  step check_stream 240 $B/ff_s1 --only "$SHAPES" --refine stream --precision fp16
  grep -E '^(ok|FAIL)' $OUT/check_stream.log | head -40
  for r in 1 2; do
    step bench_r$r 200 $B/ff_s1 --bench-only --only 'profile,B=3,B=8,B=16' --refine lean,stream
    grep -E '^(profile|B=[0-9]+|scaling)' $OUT/bench_r$r.log
  done
  step stage 200 $B/ff_s1 --bench-only --only 'profile,B=8' --refine lean,stream --stage refines
  grep -E '^(profile|B=[0-9]+|scaling)' $OUT/stage.log
  cat $OUT/table.txt
}
call2() {  # stream v2 (the level's constants, the next item's FiLM and gate prefetched); run lengths
  step check_s2 240 $B/ff_s2 --only "$SHAPES" --refine stream --precision fp16
  grep -E '^(ok|FAIL)' $OUT/check_s2.log | head -40
  for rf in 3 8 4; do
    step bench_rf$rf 200 env FF_RUN_FRAMES=$rf $B/ff_s2 --bench-only --only 'profile,B=8,B=16' --refine lean,stream
    grep -E '^(profile|B=[0-9]+|scaling)' $OUT/bench_rf$rf.log
  done
  step stage_rf3 200 $B/ff_s2 --bench-only --only 'profile,B=8' --refine lean,stream --stage refines
  grep -E '^(profile|B=[0-9]+|scaling)' $OUT/stage_rf3.log
  step stage_rf8 200 env FF_RUN_FRAMES=8 $B/ff_s2 --bench-only --only 'B=8' --refine lean,stream --stage refines
  grep -E '^(profile|B=[0-9]+|scaling)' $OUT/stage_rf8.log
  cat $OUT/table.txt
}
call3() {  # the depthwise's channel-per-lane mapping (s3); Nsight Compute of the stream kernels
  for v in ff_s2 ff_s3; do
    step stage_$v 120 env FF_RUN_FRAMES=8 $B/$v --bench-only --only 'profile,B=8' --refine lean,stream --stage refines
    grep -E '^(profile|B=[0-9]+)' $OUT/stage_$v.log
  done
  for k in t16 t8; do
    step ncu_$k 200 env FF_RUN_FRAMES=8 ncu --kernel-name regex:ff_refine_stream_c128_$k --launch-skip 20 --launch-count 1 \
      --set full -o $OUT/stream_$k $B/ff_s3 --bench-only --only B=8 --refine stream
    ncu --import $OUT/stream_$k.ncu-rep --page details --section SpeedOfLight --section LaunchStats \
      --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis > $OUT/ncu_$k.txt 2>&1
    grep -E "Duration|Grid Size|Cluster|Block Size|Registers|Shared Memory|Achieved Occupancy|Warp Cycles|Stall|Issue Slot|No Eligible|Active Warps|Eligible Warps|Throughput|Waves" $OUT/ncu_$k.txt | head -40
  done
  step ncu_lean 200 env FF_RUN_FRAMES=8 ncu --kernel-name regex:ff_refine_apply_lean_c128_t16 --launch-skip 20 --launch-count 1 \
      --section SpeedOfLight --section LaunchStats $B/ff_s3 --bench-only --only B=8 --refine lean
  grep -E "Duration|Grid Size|Cluster" $OUT/ncu_lean.log | head
  cat $OUT/table.txt
}
call4() {  # stage removal on today's build (ff_model_stage_skip_experiment_s27.patch), in process,
  # two rounds; and the stall reasons of call 3's stream kernel (t = 16: its report, copied into
  # .device/bin from call 3's $OUT)
  for r in 1 2; do
    for sk in none base pack0,pack1 film0,film1 refine0 refine1 refine0,refine1 base,refine0,refine1 \
              base,pack0,pack1,refine0,refine1 base,pack0,pack1,film0,film1,refine0,refine1; do
      APEX_FF_SKIP=$sk $B/ff_skip --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
      echo "r$r skip=$sk rc=$? $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/skip.txt
    done
  done
  ncu --import .device/bin/stream_t16.ncu-rep --page details --section WarpStateStats --section SourceCounters \
    --print-details all > $OUT/ncu_t16_stalls.txt 2>&1
  grep -iE "stall|smsp__pcsamp" $OUT/ncu_t16_stalls.txt | head -60
}
call5() {  # main's build (code unchanged since 3a854e2) on this session's H200: the self-check of
  # every fast shape in every storage under auto, then the acceptance run (export, the PyTorch
  # anchor, apex-host with its rows)
  check_auto main 300 $B/ff_model_gpu_check "$SHAPES"
  acceptance
  cat $OUT/table.txt
}
call6() {  # ff_split: main with the fast path's CUDA split into a file a stage (cuda/fast/, PTX
  # identical to the single file's); every fast shape in every storage under auto, then the
  # in-process bench beside main's build (ff_model_gpu_check, call 5's)
  check_auto split 300 $B/ff_split "$SHAPES"
  for r in 1 2; do for v in ff_model_gpu_check ff_split; do
    $B/$v --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
    echo "$v r$r rc=$? $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/bench.txt
  done; done
  cat $OUT/table.txt
}
call7() {  # ff_ws: the persistent refine warp-specialised (four builder warps modulate and run the
  # depthwise into two operand slots; sixteen consumer warps run the GEMM, statistics and finish;
  # named barriers between them), against the lean copies and ff_s3
  step check_ws 150 $B/ff_ws --only "$SHAPES" --refine stream --precision fp16
  grep -E '^(ok|FAIL)' $OUT/check_ws.log | head -40
  for r in 1 2; do
    step bench_ws_r$r 150 $B/ff_ws --bench-only --only 'profile,B=8,B=16' --refine lean,stream
    grep -E '^(profile|B=[0-9]+|scaling)' $OUT/bench_ws_r$r.log
  done
  for v in ff_s3 ff_ws; do
    step stage_$v 120 $B/$v --bench-only --only 'profile,B=8' --refine lean,stream --stage refines
    grep -E '^(profile|B=[0-9]+)' $OUT/stage_$v.log
    step stage8_$v 120 env FF_RUN_FRAMES=8 $B/$v --bench-only --only 'B=8' --refine lean,stream --stage refines
    grep -E '^(profile|B=[0-9]+)' $OUT/stage8_$v.log
  done
  cat $OUT/table.txt
}
call8() {  # ff_ws2 / ff_ws3: eight builder warps (two a channel in the depthwise) beside the sixteen
  # consumers, 768 threads at 80 registers; the builders' loads four (ws2) or twelve (ws3) in flight
  for v in ff_ws2 ff_ws3; do
    step check_$v 150 $B/$v --only 'profile,B=8,tiles 32/16,256x256' --refine stream --precision fp16
    grep -E '^(ok|FAIL)' $OUT/check_$v.log | head -10
    step stage_$v 120 $B/$v --bench-only --only 'profile,B=8' --refine lean,stream --stage refines
    grep -E '^(profile|B=[0-9]+)' $OUT/stage_$v.log
    step bench_$v 150 $B/$v --bench-only --only 'profile,B=8' --refine lean,stream
    grep -E '^(profile|B=[0-9]+)' $OUT/bench_$v.log
  done
  cat $OUT/table.txt
}
call9() {  # ff_review: the review commit (weights_lo, fast_parts!; cubins identical to main's):
  # the self-check of every fast shape in every storage under auto, and the profile and B=8 beside
  # main's build
  check_auto review 300 $B/ff_review "$SHAPES"
  for v in ff_model_gpu_check ff_review; do
    $B/$v --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
    echo "$v rc=$? $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/bench.txt
  done
}
"$@"
