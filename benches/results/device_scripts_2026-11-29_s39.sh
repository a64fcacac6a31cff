#!/usr/bin/env bash
# Thirty-ninth session's GPU calls (issue 13, ff_model). Run from the repository root on the device
# machine: `bash benches/results/device_scripts_2026-11-29_s39.sh callN`, output under $OUT.
# Binaries (built here by the thirty-eighth session's `build_next` on b833ac5, then
# `ff_model_export` from the same tree):
#   .device/bin/ff_s37, .device/ab/s37.so: the thirty-seventh session's landed build (the same
#                         kernels as b833ac5: its refactor left NVRTC's PTX byte-identical)
#   .device/bin/ff_s38one, .device/ab/s38one.so, .device/bin/ff_model_export_one: b833ac5 plus
#                         ff_model_film_one_frame_s38.patch (the FiLM linears' _one entry points
#                         for a call of one frame); its 63 checks passed in call 1 (s38's next1)
#   .device/bin/ff_s38hold: b833ac5 plus ff_model_wg_acc_hold_s38.patch (4 checks ok, call 1)
#   .device/bin/ff_s38ex: b833ac5 plus ff_model_film_exact_frames_experiment_s38.patch (the _one
#                         patch and APEX_FF_X_FILM_EXACT=1: a FiLM linear block takes exactly its
#                         run's frames; call 4)
#   .device/host_s38/apex-host: apex-host of the same tree
# Call 1 was `bash benches/results/device_scripts_2026-11-29_s38.sh next1`: its checks (63 ok for
# ff_s38one, 4 for ff_s38hold) took 427 s and the call's 600 s ended before its timing rows.
source benches/results/device_lib.sh
source <(sed -n '/^vrow()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
source <(sed -n '/^host_with()/,/^}/p;/^self_check()/,/^}/p' benches/results/device_scripts_2026-11-29_s36.sh)

call2() {  # next1's timing rows (two rounds, in process), apex-host A/B, then the acceptance run
  # on the _one build (export, PyTorch anchor, apex-host in one call)
  for r in 1 2; do
    vrow ff_s37 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_s38one 'profile,B=8,B=16' "one r$r" "" X=1
    vrow ff_s38hold 'profile,B=8,B=16' "acc hold r$r" "" X=1
    vrow ff_s38hold 'profile,B=8,B=16' "acc hold refines r$r" "--stage refines" X=1
    vrow ff_s37 'profile,B=8,B=16' "main refines r$r" "--stage refines" X=1
  done
  host_with s37 .device/host_s38
  for r in 1 2; do host_ab main_r$r s37; host_ab one_r$r s38one; done
  ab_table | tee -a $OUT/sweep.txt
  cp $B/ff_model_export_one $B/ff_model_export
  host_with s38one .device/host_s38
  acceptance | tee -a $OUT/sweep.txt
}

call3() {  # where the refine's stores go at B=8: Nsight Compute's memory counters for one launch of
  # each map refine (L0 t = 16, L1 t = 8) of the landed build, L2 left as the call left it
  # (--cache-control none) and flushed (all), clocks not locked: DRAM bytes read and written
  # against the L2 sectors the kernel writes, to see whether its half-sector stores make L2
  # read DRAM to fill them
  local m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
  m=$m,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
  m=$m,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
  m=$m,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
  m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  m=$m,lts__t_sectors_srcunit_tex_aperture_device_op_write_lookup_hit.sum,launch__grid_size
  for k in map_s_c128_t16 map_f_c128_t8; do
    for cc in none all; do
      timeout 150 ncu --metrics $m --cache-control $cc --clock-control none --kernel-name ff_refine_wg_$k \
        --launch-skip 40 --launch-count 3 --csv $B/ff_s38one --bench-only --only B=8 --refine auto \
        --precision fp16 > /tmp/ncu_${k}_${cc}.log 2>&1
      echo "== $k cache-control $cc rc=$?" | tee -a $OUT/sweep.txt
      grep -E '^"[0-9]' /tmp/ncu_${k}_${cc}.log | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$1); print $1, $(NF-2), $(NF-1), $NF}' \
        | tee -a $OUT/sweep.txt
    done
  done
}

call4() {  # the exact-frames experiment (.device/bin/ff_s38ex: b833ac5 plus
  # ff_model_film_exact_frames_experiment_s38.patch, the _one patch included; APEX_FF_X_FILM_EXACT=1:
  # a FiLM linear block takes exactly its run's two or three frames): its checks, then in process
  # against the landed build (ff_s38one), two rounds
  self_check check_exact "exact frames" APEX_FF_X_FILM_EXACT=1 $B/ff_s38ex --only 'profile,B=3,B=4,B=8,B=16,B=4 256x256' --precision fp16,fp32 --refine auto
  for r in 1 2; do
    vrow ff_s38one 'profile,B=4,B=8,B=16' "main r$r" "" X=1
    vrow ff_s38ex 'profile,B=4,B=8,B=16' "exact r$r" "" APEX_FF_X_FILM_EXACT=1
  done
}

call5() {  # what weights resident in a refine CTA could save (.device/bin/ff_x39f: 12e8535 plus
  # ff_model_same_frags_standin_experiment_s39.patch; APEX_NVRTC_DEFINES=WG_X_SAME_FRAGS: every warp
  # reads row tile 0's fragments, outputs wrong, timing only), in process, two rounds
  for r in 1 2; do
    vrow ff_x39f 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x39f 'profile,B=8,B=16' "same frags r$r" "" APEX_NVRTC_DEFINES=WG_X_SAME_FRAGS
    vrow ff_x39f 'profile,B=8,B=16' "main refines r$r" "--stage refines" X=1
    vrow ff_x39f 'profile,B=8,B=16' "same frags refines r$r" "--stage refines" APEX_NVRTC_DEFINES=WG_X_SAME_FRAGS
  done
}

next1() {  # prepared for the next session, not run (this session's device time was spent): the
  # wgmma refine's phase clocks (WG_TRACE) on the landed build, for both tile sizes, at B=8 and at
  # the profile, the frame and the refine blocks alone: where a t = 8 CTA's ~10 us go (call 3) and
  # how co-resident t = 16 CTAs share their SM. .device/bin/ff_s38one is the landed kernels. ~2 min.
  source <(sed -n '/^trace_summary()/,/^}/p' benches/results/device_scripts_2026-11-28_s29.sh)
  for s in frame refines; do
    local stage=""; [ $s = refines ] && stage="--stage refines"
    APEX_NVRTC_DEFINES="WG_TRACE WG_TRACE_FROM=30000" $B/ff_s38one --bench-only --only B=8 --refine auto --precision fp16 $stage > /tmp/trace_b8_$s.log 2>&1
    APEX_NVRTC_DEFINES="WG_TRACE WG_TRACE_FROM=3000" $B/ff_s38one --bench-only --only profile --refine auto --precision fp16 $stage > /tmp/trace_b1_$s.log 2>&1
    for b in b8 b1; do echo "== trace $b $s"; trace_summary /tmp/trace_${b}_$s.log; done | tee -a $OUT/sweep.txt
  done
}

"$@"
