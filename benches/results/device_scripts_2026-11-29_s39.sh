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
#   .device/host_s38/apex-host: apex-host of the same tree
# Call 1 was `bash benches/results/device_scripts_2026-11-29_s38.sh next1`: its checks (63 ok for
# ff_s38one, 4 for ff_s38hold) took 427 s and the call's 600 s ended before its timing rows.
source benches/results/device_lib.sh
source <(sed -n '/^vrow()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
source <(sed -n '/^host_with()/,/^}/p' benches/results/device_scripts_2026-11-29_s36.sh)

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

"$@"
